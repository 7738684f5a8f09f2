#!/usr/bin/python3
"""Tampered but otherwise valid artifacts, built by a writer no one here wrote.

usage: test_tamper.py LIBCDNN_SO SCHEMA_DIR EXAMPLES_DIR

Run with Debian's /usr/bin/python3 (python3-flatbuffers, python3-numpy) and
flatc (flatbuffers-compiler) on PATH.

What it does:
  1. flatc --python generates the schema classes into a temporary directory
     (never committed).
  2. Through ctypes on libcdnn.so an example graph (EXAMPLES_DIR/*.json) is
     built on a CPU handle and saved as PLAN, GRAPH and GRAPH_AND_PLAN.
  3. With the generated classes the plan's body is read back field by field,
     then plans, containers and graphs are rebuilt with python3-flatbuffers'
     Builder, each with one change, and re-sealed:
         body_sha256 = SHA-256(b"CDPL" + major u16 LE + minor u16 LE + body)
     Every load result is checked: status code and the words of the message.
  4. flatc --json decodes cdnn's bytes (plan, its body, the CPU payload, the
     container, the graph); those values and the python classes' values are
     compared with what cdnn_blob_inspect reports.

Canonical envelopes.  cdnn refuses a plan or container whose envelope bytes
differ from what its own builder writes around the same parts ("envelope
bytes differ"), so the rebuilt envelopes must be laid out as cdnn lays them
out.  python3-flatbuffers' Builder writes the same layout as cdnn's builder
(back to front, fields in the order added, scalars equal to their default
left out, trailing absent fields trimmed from the vtable, root offset then
identifier) with ONE difference: cdnn places the elements of every [ubyte]
vector 8-byte aligned (a nested buffer keeps its alignment), whereas
CreateByteVector and the generated Make...VectorFromBytes align the vector
to 4 only.  byte_vector() below therefore calls StartVector(1, n, 8), and
fields are added in cdnn's order (plan_format.c encode_body and
encode_envelope, container_format.c container_encode).  The first cases
check that this rebuild of cdnn's own bytes is byte for byte identical, so
that every later refusal is the tampering's and not the layout's.

One line per case, "PASS name" or "FAIL name: why"; the exit status is 1
if any case failed.
"""
import ctypes
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

# cdnn_status_t
SUCCESS, BAD_PARAM, INVALID_GRAPH, NOT_SUPPORTED, ALLOC_FAILED = 0, 1, 2, 3, 4
SIZE_INSUFFICIENT, NOT_FOUND, BAD_STATE, EXECUTION_FAILED = 5, 6, 7, 8
DEVICE_MISMATCH, CORRUPT_DATA = 9, 10
STATUS_NAMES = {0: "SUCCESS", 1: "BAD_PARAM", 2: "INVALID_GRAPH",
                3: "NOT_SUPPORTED", 4: "ALLOC_FAILED", 5: "SIZE_INSUFFICIENT",
                6: "NOT_FOUND", 7: "BAD_STATE", 8: "EXECUTION_FAILED",
                9: "DEVICE_MISMATCH", 10: "CORRUPT_DATA", 11: "IO_ERROR",
                12: "INTERNAL_ERROR"}

SAVE_GRAPH, SAVE_PLAN, SAVE_GRAPH_AND_PLAN = 1, 2, 3
BLOB_GRAPH, BLOB_PLAN = 1, 2

# What this build writes (schema comments, plan_format.h, payload.h).
PLAN_MAJOR, PLAN_MINOR = 1, 0
CONTAINER_MAJOR, CONTAINER_MINOR = 1, 0
DEVICE_CPU, DEVICE_CUDA = 0, 1

EXAMPLE = "pointwise.json"       # the graph the plans are built from
OTHER_EXAMPLE = "matmul.json"    # a different graph, for mixed containers

FAILURES = []


def report(name, ok, why=""):
    if ok:
        print("PASS", name)
    else:
        print("FAIL %s: %s" % (name, why))
        FAILURES.append(name)
    sys.stdout.flush()


# ---------------------------------------------------------------------------
# libcdnn through ctypes
# ---------------------------------------------------------------------------

P = ctypes.c_void_p
PP = ctypes.POINTER(ctypes.c_void_p)


class TensorIo(ctypes.Structure):
    _fields_ = [("uid", ctypes.c_int64), ("type", ctypes.c_int),
                ("span_bytes", ctypes.c_size_t),
                ("alignment", ctypes.c_int64), ("is_output", ctypes.c_int32)]


class BlobInfo(ctypes.Structure):
    _fields_ = [("contents", ctypes.c_uint32),
                ("container_major", ctypes.c_uint16),
                ("container_minor", ctypes.c_uint16),
                ("graph_major", ctypes.c_uint16),
                ("graph_minor", ctypes.c_uint16),
                ("plan_major", ctypes.c_uint16),
                ("plan_minor", ctypes.c_uint16),
                ("plan_verified", ctypes.c_int32),
                ("engine_id", ctypes.c_uint64),
                ("engine_name", ctypes.c_char_p),
                ("provider_name", ctypes.c_char_p),
                ("provider_version", ctypes.c_char_p),
                ("device", ctypes.c_char_p),
                ("workspace_size", ctypes.c_uint64),
                ("payload_major", ctypes.c_uint16),
                ("payload_minor", ctypes.c_uint16),
                ("payload_size", ctypes.c_size_t),
                ("graph_content_key", ctypes.c_char * 65),
                ("tensor_count", ctypes.c_int32),
                ("tensors", ctypes.POINTER(TensorIo))]


class Cdnn:
    def __init__(self, path):
        lib = self.lib = ctypes.CDLL(path)
        sigs = {
            "cdnn_handle_create": [PP, ctypes.c_char_p],
            "cdnn_graph_from_json": [PP, ctypes.c_char_p, ctypes.c_size_t],
            "cdnn_graph_build": [P, P, P],
            "cdnn_graph_save": [P, ctypes.c_int, P, ctypes.c_size_t,
                                ctypes.POINTER(ctypes.c_size_t)],
            "cdnn_graph_load": [PP, P, ctypes.c_char_p, ctypes.c_size_t],
            "cdnn_plan_load": [PP, P, ctypes.c_char_p, ctypes.c_size_t],
            "cdnn_blob_contents": [ctypes.c_char_p, ctypes.c_size_t,
                                   ctypes.POINTER(ctypes.c_uint32)],
            "cdnn_blob_inspect": [ctypes.c_char_p, ctypes.c_size_t,
                                  ctypes.POINTER(ctypes.POINTER(BlobInfo))],
            "cdnn_graph_content_key": [P, ctypes.c_char * 65],
            "cdnn_graph_engine": [P, ctypes.POINTER(ctypes.c_uint64),
                                  ctypes.POINTER(ctypes.c_char_p)],
        }
        for name, argtypes in sigs.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
        lib.cdnn_last_error.restype = ctypes.c_char_p
        lib.cdnn_last_error.argtypes = []
        lib.cdnn_provider_search_path.restype = ctypes.c_char_p
        lib.cdnn_provider_search_path.argtypes = []
        lib.cdnn_engine_id_from_name.restype = ctypes.c_uint64
        lib.cdnn_engine_id_from_name.argtypes = [ctypes.c_char_p]
        lib.cdnn_graph_destroy.argtypes = [P]
        lib.cdnn_graph_destroy.restype = None
        lib.cdnn_handle_destroy.argtypes = [P]
        lib.cdnn_handle_destroy.restype = None
        lib.cdnn_blob_info_destroy.argtypes = [ctypes.POINTER(BlobInfo)]
        lib.cdnn_blob_info_destroy.restype = None
        self.handle = P()
        self.check(lib.cdnn_handle_create(ctypes.byref(self.handle), b"cpu"),
                   "cdnn_handle_create")

    def error(self):
        return self.lib.cdnn_last_error().decode(errors="replace")

    def check(self, status, what):
        if status != SUCCESS:
            raise RuntimeError("%s failed (%s): %s" % (
                what, STATUS_NAMES.get(status, status), self.error()))

    def graph_from_json(self, text):
        g = P()
        data = text.encode()
        self.check(self.lib.cdnn_graph_from_json(ctypes.byref(g), data,
                                                 len(data)),
                   "cdnn_graph_from_json")
        return g

    def build(self, g):
        self.check(self.lib.cdnn_graph_build(g, self.handle, None),
                   "cdnn_graph_build")

    def save(self, g, form):
        size = ctypes.c_size_t()
        self.check(self.lib.cdnn_graph_save(g, form, None, 0,
                                            ctypes.byref(size)),
                   "cdnn_graph_save (size)")
        buf = ctypes.create_string_buffer(size.value)
        self.check(self.lib.cdnn_graph_save(g, form, buf, size.value,
                                            ctypes.byref(size)),
                   "cdnn_graph_save")
        return buf.raw[:size.value]

    def content_key(self, g):
        key = (ctypes.c_char * 65)()
        self.check(self.lib.cdnn_graph_content_key(g, key),
                   "cdnn_graph_content_key")
        return key.value.decode()

    def plan_load(self, data):
        """(status, message); the graph is destroyed at once."""
        g = P()
        st = self.lib.cdnn_plan_load(ctypes.byref(g), self.handle, data,
                                     len(data))
        msg = self.error() if st != SUCCESS else ""
        if g:
            self.lib.cdnn_graph_destroy(g)
        return st, msg

    def graph_load(self, data, with_handle=True):
        """(status, message, graph or None); the caller destroys the graph."""
        g = P()
        st = self.lib.cdnn_graph_load(ctypes.byref(g),
                                      self.handle if with_handle else None,
                                      data, len(data))
        msg = self.error() if st != SUCCESS else ""
        return st, msg, (g if st == SUCCESS and g else None)

    def blob_contents(self, data):
        flags = ctypes.c_uint32()
        st = self.lib.cdnn_blob_contents(data, len(data), ctypes.byref(flags))
        return st, (self.error() if st != SUCCESS else ""), flags.value

    def inspect(self, data):
        info = ctypes.POINTER(BlobInfo)()
        self.check(self.lib.cdnn_blob_inspect(data, len(data),
                                              ctypes.byref(info)),
                   "cdnn_blob_inspect")
        i = info.contents
        out = {
            "contents": i.contents,
            "container": (i.container_major, i.container_minor),
            "graph": (i.graph_major, i.graph_minor),
            "plan": (i.plan_major, i.plan_minor),
            "plan_verified": i.plan_verified,
            "engine_id": i.engine_id,
            "engine_name": (i.engine_name or b"").decode(),
            "provider_name": (i.provider_name or b"").decode(),
            "provider_version": (i.provider_version or b"").decode(),
            "device": (i.device or b"").decode(),
            "workspace_size": i.workspace_size,
            "payload": (i.payload_major, i.payload_minor),
            "payload_size": i.payload_size,
            "content_key": i.graph_content_key.decode(),
            "tensors": [(i.tensors[k].uid, i.tensors[k].alignment,
                         i.tensors[k].span_bytes, i.tensors[k].type,
                         bool(i.tensors[k].is_output))
                        for k in range(i.tensor_count)],
        }
        self.lib.cdnn_blob_info_destroy(info)
        return out


# ---------------------------------------------------------------------------
# Writing cdnn's artifacts with python3-flatbuffers
# ---------------------------------------------------------------------------

def fnv1a64(name):
    h = 0xcbf29ce484222325
    for byte in name.encode():
        h ^= byte
        h = (h * 0x100000001b3) & 0xffffffffffffffff
    return h


def seal(major, minor, body):
    return hashlib.sha256(b"CDPL" + struct.pack("<HH", major, minor) +
                          body).digest()


class Writer:
    """Builds plans, bodies and containers as cdnn lays them out."""

    def __init__(self, fb, classes):
        self.fb = fb
        self.Plan, self.PlanBody, self.PlanTensor, self.Container = classes

    def byte_vector(self, b, data):
        # cdnn's fb_bytes: the elements 8-byte aligned, the count before
        # them.  (CreateByteVector would align to 4 only.)
        b.StartVector(1, len(data), 8)
        b.head = b.Head() - len(data)
        b.Bytes[b.head:b.head + len(data)] = data
        return b.EndVector()

    def read_body(self, body):
        pb = self.PlanBody.PlanBody.GetRootAs(body, 0)
        tensors = []
        for k in range(pb.TensorsLength()):
            t = pb.Tensors(k)
            tensors.append((t.Uid(), t.Alignment(), t.SpanBytes(),
                            t.DataType(), bool(t.IsOutput())))
        return {
            "engine_id": pb.EngineId(),
            "engine_name": pb.EngineName().decode(),
            "provider_name": pb.ProviderName().decode(),
            "provider_version": pb.ProviderVersion().decode(),
            "device_kind": pb.DeviceKind(),
            "device_arch": pb.DeviceArch(),
            "tensors": tensors,
            "workspace_size": pb.WorkspaceSize(),
            "payload_major": pb.PayloadFormatMajor(),
            "payload_minor": pb.PayloadFormatMinor(),
            "payload": pb.PayloadAsNumpy().tobytes(),
            "content_key": pb.GraphContentKeyAsNumpy().tobytes(),
        }

    def build_body(self, f):
        m, b = self.PlanBody, self.fb.Builder(1024)
        key = self.byte_vector(b, f["content_key"])
        payload = self.byte_vector(b, f["payload"])
        m.PlanBodyStartTensorsVector(b, len(f["tensors"]))
        for t in reversed(f["tensors"]):
            self.PlanTensor.CreatePlanTensor(b, *t)
        tensors = b.EndVector()
        version = b.CreateString(f["provider_version"])
        provider = b.CreateString(f["provider_name"])
        engine = b.CreateString(f["engine_name"])
        m.PlanBodyStart(b)
        m.PlanBodyAddEngineId(b, f["engine_id"])
        m.PlanBodyAddEngineName(b, engine)
        m.PlanBodyAddProviderName(b, provider)
        m.PlanBodyAddProviderVersion(b, version)
        m.PlanBodyAddDeviceKind(b, f["device_kind"])
        m.PlanBodyAddDeviceArch(b, f["device_arch"])
        m.PlanBodyAddTensors(b, tensors)
        m.PlanBodyAddWorkspaceSize(b, f["workspace_size"])
        m.PlanBodyAddPayloadFormatMajor(b, f["payload_major"])
        m.PlanBodyAddPayloadFormatMinor(b, f["payload_minor"])
        m.PlanBodyAddPayload(b, payload)
        m.PlanBodyAddGraphContentKey(b, key)
        b.Finish(m.PlanBodyEnd(b))
        return bytes(b.Output())

    def build_plan(self, body, major=PLAN_MAJOR, minor=PLAN_MINOR,
                   digest=None):
        """A plan around body, sealed for (major, minor) unless digest is
        given."""
        if digest is None:
            digest = seal(major, minor, body)
        m, b = self.Plan, self.fb.Builder(1024)
        d = self.byte_vector(b, digest)
        body_ref = self.byte_vector(b, body)
        m.PlanStart(b)
        m.PlanAddFormatMajor(b, major)
        m.PlanAddFormatMinor(b, minor)
        m.PlanAddBody(b, body_ref)
        m.PlanAddBodySha256(b, d)
        b.Finish(m.PlanEnd(b), file_identifier=b"CDPL")
        return bytes(b.Output())

    def build_container(self, graph, plan=None, major=CONTAINER_MAJOR,
                        minor=CONTAINER_MINOR, extra_field=None,
                        graph_digest=None):
        """Container fields by id (schema/container.fbs): 0 format_major,
        1 format_minor, 2 graph, 3 plan, 4 graph_sha256 = SHA-256(graph
        bytes).  extra_field: a u32 in field 5, which Container 1.0 does
        not have: what a newer minor might add.  Written in cdnn's order
        (container_format.c container_encode): digest, plan, graph
        vectors, then the fields in id order."""
        if graph_digest is None:
            graph_digest = hashlib.sha256(graph).digest()
        m, b = self.Container, self.fb.Builder(1024)
        digest_ref = self.byte_vector(b, graph_digest)
        plan_ref = self.byte_vector(b, plan) if plan is not None else None
        graph_ref = self.byte_vector(b, graph)
        b.StartObject(6 if extra_field is not None else 5)
        m.ContainerAddFormatMajor(b, major)
        m.ContainerAddFormatMinor(b, minor)
        m.ContainerAddGraph(b, graph_ref)
        if plan_ref is not None:
            m.ContainerAddPlan(b, plan_ref)
        b.PrependUOffsetTRelativeSlot(4, digest_ref, 0)
        if extra_field is not None:
            b.PrependUint32Slot(5, extra_field, 0)
        b.Finish(b.EndObject(), file_identifier=b"CDGP")
        return bytes(b.Output())

    def plan_parts(self, plan):
        p = self.Plan.Plan.GetRootAs(plan, 0)
        return (p.FormatMajor(), p.FormatMinor(), p.BodyAsNumpy().tobytes(),
                p.BodySha256AsNumpy().tobytes())


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

def expect(name, got, status, words=()):
    """got is (status, message); words must all appear in the message."""
    st, msg = got[0], got[1]
    if st != status:
        report(name, False, "status %s, expected %s; message: %s" % (
            STATUS_NAMES.get(st, st), STATUS_NAMES.get(status, status), msg))
        return
    missing = [w for w in words if w not in msg]
    report(name, not missing, "message lacks %s: %s" % (missing, msg))


def hexdiff(a, b):
    if len(a) != len(b):
        return "sizes %d and %d" % (len(a), len(b))
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "first difference at byte %d (0x%02x vs 0x%02x)" % (k, x, y)
    return "identical"


def run(cmd, **kw):
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(cmd), res.returncode,
                                                  res.stdout, res.stderr))
    return res.stdout


def flatc_json(tmp, schema, data, name, root_type=None):
    """flatc's reading of bytes.  Scalars equal to their default are left
    out (flatc would print an infinite default as a bare inf, which is not
    JSON); non-finite values that remain are made JSON's."""
    path = os.path.join(tmp, name + ".bin")
    with open(path, "wb") as f:
        f.write(data)
    cmd = ["flatc", "--json", "--strict-json", "--raw-binary", "-o", tmp]
    if root_type:
        cmd += ["--root-type", root_type]
    run(cmd + [schema, "--", path])
    with open(os.path.join(tmp, name + ".json")) as f:
        text = f.read()
    text = re.sub(r"(?<=[:\[,\s])(-?)inf\b", r"\1Infinity", text)
    text = re.sub(r"(?<=[:\[,\s])-?nan\b", "NaN", text)
    return json.loads(text)


def flatc_binary(tmp, schema, obj, name):
    """flatc's bytes for a JSON object."""
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump(obj, f)
    run(["flatc", "--binary", "-o", tmp, schema, path])
    ext = os.path.splitext(schema)[0]
    for cand in (name + ".cdg", name + ".bin"):
        out = os.path.join(tmp, cand)
        if os.path.exists(out):
            with open(out, "rb") as f:
                return f.read()
    raise RuntimeError("flatc wrote no binary for %s (%s)" % (name, ext))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    lib_path, schema_dir, examples_dir = sys.argv[1:4]
    # Missing tools skip the test (ctest: SKIP_RETURN_CODE 77).
    if shutil.which("flatc") is None:
        print("SKIP: flatc not found (apt-get install flatbuffers-compiler)")
        sys.exit(77)
    try:
        import flatbuffers  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print("SKIP: %s (apt-get install python3-flatbuffers python3-numpy; "
              "run with /usr/bin/python3)" % e)
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="cdnn-tamper-")
    try:
        cases(lib_path, schema_dir, examples_dir, tmp)
    except Exception as e:  # a setup step failed: the run fails
        report("setup", False, "%s: %s" % (type(e).__name__, e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(FAILURES))
    sys.exit(1 if FAILURES else 0)


def schema(schema_dir, name):
    return os.path.join(schema_dir, name)


def cases(lib_path, schema_dir, examples_dir, tmp):
    gen = os.path.join(tmp, "gen")
    run(["flatc", "--python", "-o", gen, schema(schema_dir, "container.fbs"),
         schema(schema_dir, "plan.fbs"), schema(schema_dir, "graph.fbs")])
    sys.path.insert(0, gen)
    import flatbuffers
    from cdnn.fb import Container, Plan, PlanBody, PlanTensor
    w = Writer(flatbuffers, (Plan, PlanBody, PlanTensor, Container))

    api = Cdnn(lib_path)
    with open(os.path.join(examples_dir, EXAMPLE)) as f:
        g = api.graph_from_json(f.read())
    with open(os.path.join(examples_dir, OTHER_EXAMPLE)) as f:
        other = api.graph_from_json(f.read())
    api.build(g)
    api.build(other)
    plan = api.save(g, SAVE_PLAN)
    both = api.save(g, SAVE_GRAPH_AND_PLAN)
    graph = api.save(g, SAVE_GRAPH)
    other_plan = api.save(other, SAVE_PLAN)
    key = api.content_key(g)
    eid, ename = ctypes.c_uint64(), ctypes.c_char_p()
    api.check(api.lib.cdnn_graph_engine(g, ctypes.byref(eid),
                                        ctypes.byref(ename)),
              "cdnn_graph_engine")
    print("# %s: engine %s, plan %d bytes, container %d bytes, graph %d bytes"
          % (EXAMPLE, ename.value.decode(), len(plan), len(both), len(graph)))

    # --- the python writer reproduces cdnn's bytes ----------------------
    major, minor, body, digest = w.plan_parts(plan)
    fields = w.read_body(body)
    report("python reads plan format 1.0 and a digest that seals the body",
           (major, minor) == (PLAN_MAJOR, PLAN_MINOR) and
           digest == seal(major, minor, body),
           "format %d.%d, digest %s, sha256 %s" % (
               major, minor, digest.hex(), seal(major, minor, body).hex()))
    rebuilt_body = w.build_body(fields)
    report("python rebuild of the plan body is byte-identical to cdnn's",
           rebuilt_body == body, hexdiff(rebuilt_body, body))
    rebuilt = w.build_plan(rebuilt_body)
    report("python rebuild of the plan envelope is byte-identical to cdnn's",
           rebuilt == plan, hexdiff(rebuilt, plan))
    c = Container.Container.GetRootAs(both, 0)
    c_graph = c.GraphAsNumpy().tobytes()
    c_plan = c.PlanAsNumpy().tobytes()
    report("container parts are the bare graph and plan bytes",
           c_graph == graph and c_plan == plan,
           "graph %s, plan %s" % (hexdiff(c_graph, graph),
                                  hexdiff(c_plan, plan)))
    rebuilt_c = w.build_container(graph, plan)
    report("python rebuild of the container is byte-identical to cdnn's",
           rebuilt_c == both, hexdiff(rebuilt_c, both))
    # The 4-aligned layout python's own helpers write is a valid
    # FlatBuffer, but not cdnn's canonical envelope: refused as damage.
    b4 = flatbuffers.Builder(1024)
    d4 = b4.CreateByteVector(digest)
    bo4 = b4.CreateByteVector(body)
    Plan.PlanStart(b4)
    Plan.PlanAddFormatMajor(b4, major)
    Plan.PlanAddFormatMinor(b4, minor)
    Plan.PlanAddBody(b4, bo4)
    Plan.PlanAddBodySha256(b4, d4)
    b4.Finish(Plan.PlanEnd(b4), file_identifier=b"CDPL")
    plan4 = bytes(b4.Output())
    if plan4 != plan:
        expect("plan with a non-canonical (4-aligned) envelope -> "
               "CORRUPT_DATA", api.plan_load(plan4), CORRUPT_DATA,
               ["envelope"])
    else:
        print("# python's CreateByteVector happened to give cdnn's layout")

    # --- control: an untampered rebuild loads ----------------------------
    expect("untampered python-built plan loads", api.plan_load(rebuilt),
           SUCCESS)

    def tampered(name, change, reseal=True, **plan_kw):
        f = dict(fields)
        change(f)
        new_body = w.build_body(f)
        if reseal:
            return w.build_plan(new_body, **plan_kw)
        return w.build_plan(new_body, digest=digest, **plan_kw)

    # --- versions ----------------------------------------------------------
    expect("plan format 2.0 -> NOT_SUPPORTED naming 2.0 and 1.x",
           api.plan_load(w.build_plan(body, major=2, minor=0)),
           NOT_SUPPORTED, ["2.0", "1.x", "newer cdnn"])
    expect("plan format 1.1 (higher minor) -> NOT_SUPPORTED (rule 5)",
           api.plan_load(w.build_plan(body, major=1, minor=1)),
           NOT_SUPPORTED, ["1.1", "1.0"])
    expect("plan format 0.0 -> NOT_SUPPORTED, rebuild from the graph",
           api.plan_load(w.build_plan(body, major=0, minor=0)),
           NOT_SUPPORTED, ["0.0", "1.x", "rebuild"])

    # --- engines -----------------------------------------------------------
    ghost = "cpu:nonexistent"
    ghost_id = fnv1a64(ghost)
    report("python FNV-1a 64 equals cdnn_engine_id_from_name",
           ghost_id == api.lib.cdnn_engine_id_from_name(ghost.encode()) and
           fnv1a64(fields["engine_name"]) == fields["engine_id"],
           "%016x vs %016x" % (ghost_id, api.lib.cdnn_engine_id_from_name(
               ghost.encode())))

    def ghost_engine(f):
        f["engine_name"], f["engine_id"] = ghost, ghost_id
    st, msg = api.plan_load(tampered("ghost", ghost_engine))
    search = api.lib.cdnn_provider_search_path().decode()
    expect("engine no provider serves -> NOT_FOUND naming name, id, path",
           (st, msg), NOT_FOUND,
           [ghost, "0x%016x" % ghost_id, search] if search else
           [ghost, "0x%016x" % ghost_id, "<empty search path>"])

    def wrong_id(f):
        f["engine_id"] = ghost_id
    expect("engine_id not matching engine_name -> CORRUPT_DATA",
           api.plan_load(tampered("wrong id", wrong_id)), CORRUPT_DATA,
           [fields["engine_name"], "0x%016x" % ghost_id])

    # --- payload versions ----------------------------------------------------
    def payload_major(f):
        f["payload_major"] = 2
    expect("payload format 2.0 -> NOT_SUPPORTED naming both versions",
           api.plan_load(tampered("payload major", payload_major)),
           NOT_SUPPORTED, ["payload format 2.0", "1.x"])

    def payload_minor(f):
        f["payload_minor"] = fields["payload_minor"] + 1
    expect("payload format 1.1 (higher minor) -> NOT_SUPPORTED",
           api.plan_load(tampered("payload minor", payload_minor)),
           NOT_SUPPORTED, ["payload format 1.%d" % (fields["payload_minor"] + 1)])

    # --- devices -------------------------------------------------------------
    def cuda(f):
        f["device_kind"], f["device_arch"] = DEVICE_CUDA, 90
    expect("device kind Cuda on a cpu handle -> DEVICE_MISMATCH",
           api.plan_load(tampered("cuda", cuda)), DEVICE_MISMATCH,
           ["CUDA", "cpu"])

    def bad_kind(f):
        f["device_kind"] = 7
    expect("device kind 7 (no such kind) -> CORRUPT_DATA",
           api.plan_load(tampered("kind 7", bad_kind)), CORRUPT_DATA,
           ["device kind 7"])

    # --- a re-sealed but inconsistent body -----------------------------------
    def workspace(f):
        f["workspace_size"] = fields["workspace_size"] + 4096
    expect("re-sealed workspace size the payload disagrees with -> "
           "CORRUPT_DATA", api.plan_load(tampered("workspace", workspace)),
           CORRUPT_DATA, ["workspace", str(fields["workspace_size"] + 4096)])

    # --- not re-sealed: the digest refuses before anything is read -----------
    unsealed = [("workspace size", workspace), ("engine name", ghost_engine),
                ("payload major", payload_major), ("device kind", cuda),
                ("engine id", wrong_id)]
    for what, change in unsealed:
        expect("changed %s, digest not re-sealed -> CORRUPT_DATA SHA-256"
               % what, api.plan_load(tampered(what, change, reseal=False)),
               CORRUPT_DATA, ["SHA-256"])
    # The version is under the digest too: sealed for 1.0, relabelled 1.0
    # but with a body byte changed inside the payload.
    flipped = bytearray(body)
    flipped[len(flipped) // 2] ^= 0x01
    expect("one body byte flipped, digest not re-sealed -> CORRUPT_DATA "
           "SHA-256", api.plan_load(w.build_plan(bytes(flipped),
                                                 digest=digest)),
           CORRUPT_DATA, ["SHA-256"])

    # --- containers ------------------------------------------------------------
    graph_only = w.build_container(graph)
    st, msg, flags = api.blob_contents(graph_only)
    report("graph-only container: cdnn_blob_contents says GRAPH only",
           st == SUCCESS and flags == BLOB_GRAPH,
           "status %s, flags %d: %s" % (STATUS_NAMES.get(st, st), flags, msg))
    expect("graph-only container: cdnn_plan_load -> BAD_PARAM 'no plan'",
           api.plan_load(graph_only), BAD_PARAM, ["no plan"])
    for with_handle in (False, True):
        st, msg, lg = api.graph_load(graph_only, with_handle)
        loaded_key = api.content_key(lg) if lg else ""
        if lg:
            api.lib.cdnn_graph_destroy(lg)
        report("graph-only container: cdnn_graph_load (%s) works, same "
               "content key" % ("handle" if with_handle else "no handle"),
               st == SUCCESS and loaded_key == key,
               "status %s: %s; key %s vs %s" % (STATUS_NAMES.get(st, st),
                                                msg, loaded_key, key))

    mixed = w.build_container(graph, other_plan)
    st, msg, lg = api.graph_load(mixed)
    if lg:
        api.lib.cdnn_graph_destroy(lg)
    expect("container whose plan is another graph's -> CORRUPT_DATA "
           "'content keys differ'", (st, msg), CORRUPT_DATA,
           ["content keys differ"])
    expect("container whose plan is another graph's, loaded as a plan -> "
           "CORRUPT_DATA 'content keys differ'", api.plan_load(mixed),
           CORRUPT_DATA, ["content keys differ"])

    # The graph part has no digest of its own; the container's covers it.
    g_flip = bytearray(graph)
    for k in range(len(g_flip) - 1, 0, -1):  # a name byte: still a valid graph
        if 0x61 <= g_flip[k] <= 0x7a:
            g_flip[k] ^= 0x20
            break
    expect("container graph part changed, graph SHA-256 not re-sealed -> "
           "CORRUPT_DATA", api.blob_contents(w.build_container(
               bytes(g_flip), plan, graph_digest=hashlib.sha256(graph).digest())),
           CORRUPT_DATA, ["SHA-256"])
    expect("container format 2.0 -> NOT_SUPPORTED naming 2.0 and 1.x",
           api.plan_load(w.build_container(graph, plan, major=2)),
           NOT_SUPPORTED, ["2.0", "1.x"])
    newer = w.build_container(graph, plan, minor=1, extra_field=0xC0FFEE)
    st, msg, lg = api.graph_load(newer)
    ok = st == SUCCESS and lg is not None
    resaved = api.save(lg, SAVE_PLAN) if ok else b""
    if lg:
        api.lib.cdnn_graph_destroy(lg)
    report("container format 1.1 with an unknown field loads, plan intact",
           ok and resaved == plan, "status %s: %s; resaved plan %s" % (
               STATUS_NAMES.get(st, st), msg, hexdiff(resaved, plan)))
    # Rewriting a field of the envelope without re-sealing anything: the
    # canonical check (1.0 envelopes) refuses it.
    same_minor_extra = w.build_container(graph, plan, extra_field=1)
    expect("container format 1.0 with a field 1.0 lacks -> CORRUPT_DATA "
           "(envelope not canonical)", api.blob_contents(same_minor_extra),
           CORRUPT_DATA, ["envelope"])

    # --- graphs written by flatc, newer minor and newer major -------------------
    gjson = flatc_json(tmp, schema(schema_dir, "graph.fbs"), graph, "graph")
    future = os.path.join(tmp, "graph_future.fbs")
    with open(schema(schema_dir, "graph.fbs")) as f:
        text = f.read()
    # A 1.1 schema: one field appended to Graph and to Tensor.
    text = text.replace("  nodes: [Node];\n}",
                        "  nodes: [Node];\n  future_graph_field: uint;\n}")
    text = text.replace("  scalar_value: double = 0;\n}",
                        "  scalar_value: double = 0;\n"
                        "  future_tensor_field: string;\n}")
    with open(future, "w") as f:
        f.write(text)
    g11 = dict(gjson)
    g11["format_minor"] = 1
    g11["future_graph_field"] = 77
    g11["tensors"] = [dict(t, future_tensor_field="x") for t in gjson["tensors"]]
    graph11 = flatc_binary(tmp, future, g11, "graph11")
    st, msg, lg = api.graph_load(graph11, with_handle=False)
    loaded_key = api.content_key(lg) if lg else ""
    if lg:
        api.lib.cdnn_graph_destroy(lg)
    report("graph format 1.1 (flatc, unknown fields) loads with the same "
           "content key", st == SUCCESS and loaded_key == key,
           "status %s: %s" % (STATUS_NAMES.get(st, st), msg))
    # A 1.1 graph that uses what 1.1 added -- a new Op value, a new NodeAttr
    # union member -- cannot be loaded by a 1.0 reader, but it is not
    # damaged: NOT_SUPPORTED, "load them with a newer cdnn" (graph.fbs:
    # a new minor only adds fields or enum values).
    text = text.replace(
        "union NodeAttr { ConvAttr, PointwiseAttr, ReductionAttr, NormAttr, "
        "SdpaAttr }",
        "table FutureAttr { x: int; }\nunion NodeAttr { ConvAttr, "
        "PointwiseAttr, ReductionAttr, NormAttr, SdpaAttr, FutureAttr }")
    text = text.replace("Rmsnorm, SdpaFwd\n}", "Rmsnorm, SdpaFwd, FutureOp\n}")
    with open(future, "w") as f:
        f.write(text)
    for what, change in (("a new Op value", {"op": "FutureOp"}),
                         ("a new NodeAttr member",
                          {"attr_type": "FutureAttr", "attr": {"x": 1}})):
        gnew = json.loads(json.dumps(g11))
        gnew["nodes"][0].update(change)
        st, msg, lg = api.graph_load(
            flatc_binary(tmp, future, gnew, "graph11_new"), with_handle=False)
        if lg:
            api.lib.cdnn_graph_destroy(lg)
        expect("graph format 1.1 using %s -> NOT_SUPPORTED, newer cdnn"
               % what, (st, msg), NOT_SUPPORTED, ["1.1", "newer cdnn"])
    g20 = dict(gjson)
    g20["format_major"] = 2
    st, msg, lg = api.graph_load(
        flatc_binary(tmp, schema(schema_dir, "graph.fbs"), g20, "graph20"),
        with_handle=False)
    if lg:
        api.lib.cdnn_graph_destroy(lg)
    expect("graph format 2.0 (flatc) -> NOT_SUPPORTED naming 2.0 and 1.x",
           (st, msg), NOT_SUPPORTED, ["2.0", "1.x"])

    # --- decoding with clients no one here wrote --------------------------------
    info = api.inspect(plan)
    mine = {"engine_id": fields["engine_id"],
            "engine_name": fields["engine_name"],
            "provider_name": fields["provider_name"],
            "provider_version": fields["provider_version"],
            "device": "cpu" if fields["device_kind"] == DEVICE_CPU else "cuda",
            "workspace_size": fields["workspace_size"],
            "payload": (fields["payload_major"], fields["payload_minor"]),
            "payload_size": len(fields["payload"]),
            "content_key": fields["content_key"].hex(),
            "tensors": fields["tensors"]}
    theirs = {k: info[k] for k in mine}
    report("python classes read what cdnn_blob_inspect reports",
           mine == theirs and info["plan"] == (major, minor) and
           info["plan_verified"] == 1 and info["engine_name"] ==
           ename.value.decode() and info["content_key"] == key,
           "python %s\ncdnn   %s" % (mine, theirs))

    pj = flatc_json(tmp, schema(schema_dir, "plan.fbs"), plan, "plan")
    pbody = pj.get("body")
    if isinstance(pbody, dict):  # flatc printed the nested buffer
        bj = pbody
    else:
        bj = flatc_json(tmp, schema(schema_dir, "plan.fbs"), body, "body",
                        root_type="cdnn.fb.PlanBody")
    flatc_view = {
        "engine_id": bj["engine_id"], "engine_name": bj["engine_name"],
        "provider_name": bj["provider_name"],
        "provider_version": bj["provider_version"],
        "device": bj.get("device_kind", "Cpu").lower(),
        "workspace_size": bj.get("workspace_size", 0),
        "payload": (bj.get("payload_format_major", 0),
                    bj.get("payload_format_minor", 0)),
        "payload_size": len(bj["payload"]),
        "content_key": bytes(bj["graph_content_key"]).hex(),
        "tensors": [(t["uid"], t["alignment"], t["span_bytes"],
                     t["data_type"], t["is_output"]) for t in bj["tensors"]]}
    report("flatc decodes cdnn's plan as cdnn_blob_inspect reports it",
           pj.get("format_major", 0) == PLAN_MAJOR and
           pj.get("format_minor", 0) == PLAN_MINOR and
           bytes(pj["body_sha256"]) == seal(PLAN_MAJOR, PLAN_MINOR, body) and
           flatc_view == theirs,
           "flatc %s\ncdnn  %s" % (flatc_view, theirs))
    payload_json = flatc_json(tmp, schema(schema_dir, "cpu_payload.fbs"),
                              fields["payload"], "payload")
    pg = payload_json.get("graph")
    pg_json = pg if isinstance(pg, dict) else flatc_json(
        tmp, schema(schema_dir, "graph.fbs"), bytes(pg), "payload_graph")
    # The payload holds the validated graph: every declared field as
    # declared, plus the resolved type and the inferred dims of each tensor.
    pt = pg_json.get("tensors", [])
    resolved = len(pt) == len(gjson["tensors"]) and all(
        all(p.get(k) == v for k, v in d.items()) and "data_type" in p and
        "dims" in p for p, d in zip(pt, gjson["tensors"]))
    report("flatc decodes the CPU payload: engine, version 1.0, the graph",
           payload_json["engine"] == fields["engine_name"] and
           payload_json.get("format_major", 0) == 1 and
           payload_json.get("format_minor", 0) == 0 and resolved and
           pg_json.get("nodes") == gjson["nodes"],
           "payload %s" % {k: v for k, v in payload_json.items()
                           if k != "graph"})
    cj = flatc_json(tmp, schema(schema_dir, "container.fbs"), both,
                    "container")
    cg, cp = cj.get("graph"), cj.get("plan")
    if not isinstance(cg, dict):
        cg = flatc_json(tmp, schema(schema_dir, "graph.fbs"), bytes(cg),
                        "container_graph")
    if not isinstance(cp, dict):
        cp = flatc_json(tmp, schema(schema_dir, "plan.fbs"), bytes(cp),
                        "container_plan")
    cinfo = api.inspect(both)
    report("flatc decodes cdnn's container: format 1.0, graph and plan",
           cj.get("format_major", 0) == CONTAINER_MAJOR and
           cj.get("format_minor", 0) == CONTAINER_MINOR and cg == gjson and
           cp == pj and cinfo["contents"] == BLOB_GRAPH | BLOB_PLAN and
           cinfo["container"] == (1, 0) and cinfo["graph"] == (1, 0),
           "container %d.%d, graph equal %s, plan equal %s, inspect %s" % (
               cj.get("format_major", 0), cj.get("format_minor", 0), cg == gjson, cp == pj,
               cinfo["contents"]))
    report("flatc decodes cdnn's graph: format 1.0, name, tensors, nodes",
           gjson.get("format_major", 0) == 1 and
           gjson.get("format_minor", 0) == 0 and
           len(gjson["tensors"]) == 8 and len(gjson["nodes"]) == 4 and
           gjson.get("name") == "pointwise_chain",
           "graph %s" % json.dumps(gjson)[:300])

    api.lib.cdnn_graph_destroy(g)
    api.lib.cdnn_graph_destroy(other)
    api.lib.cdnn_handle_destroy(api.handle)


if __name__ == "__main__":
    main()
