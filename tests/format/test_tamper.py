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
  3. With the generated classes (plans, containers) and python3-flatbuffers'
     table reader (graphs) the bytes are read back field by field, then
     plans, containers and graphs are rebuilt with python3-flatbuffers'
     Builder, each with one change, and re-sealed with the digests of the
     formats (docs/FORMATS.md):
       plan (format 1.0), field 3:
         body_sha256 = SHA-256(b"CDPL" + major u16 LE + minor u16 LE + body)
       graph (format 1.1), field 8 sha256:
         SHA-256 of the whole buffer with those 32 bytes zeroed
       container (format 1.1), field 5 sha256:
         SHA-256(b"CDGP" + major u16 LE + minor u16 LE + len(graph) u64 LE
                 + graph + len(plan) u64 LE + plan)
       and field 4 graph_sha256 = SHA-256(graph)
     Every load result is checked: status code and the words of the message.
     Digest first: a byte flipped anywhere (the version included) in a
     sealed artifact is damage, never "too new"; a newer version is judged
     only in bytes whose digest holds.  Format 1.0 graphs (no digest) and
     canonical format 1.0 containers still load.
  4. flatc --json decodes cdnn's bytes (plan, its body, the CPU payload, the
     container, the graph); those values and the python classes' values are
     compared with what cdnn_blob_inspect reports.

Canonical envelopes.  cdnn refuses a plan or container whose envelope bytes
differ from what its own builder writes around the same parts ("envelope
bytes differ"), so the rebuilt envelopes must be laid out as cdnn lays them
out.  python3-flatbuffers' Builder writes the same layout as cdnn's builder
(back to front, fields in the order added, trailing absent fields trimmed
from the vtable, root offset then identifier) with TWO differences: cdnn
places the elements of every [ubyte] vector 8-byte aligned (a nested buffer
keeps its alignment), whereas CreateByteVector and the generated
Make...VectorFromBytes align the vector to 4 only; and python's Builder
shares one vtable between tables whose vtables are equal, cdnn's never
does.  byte_vector() below therefore calls StartVector(1, n, 8), builders
are made by builder(), which turns the sharing off, and objects and fields
are added in cdnn's order (plan_format.c encode_body and encode_envelope,
container_format.c encode, graph_format.c encode_graph: the graph's digest
vector first, then name, tensors, nodes).  Scalars are written where the
bytes read had them (cdnn leaves out those equal to their default).  The
first cases check that this rebuild of cdnn's own bytes is byte for byte
identical (plan, container 1.1, graph 1.1, and the format 1.0 container of
tests/fixtures/v1.0), so that every later refusal is the tampering's and
not the layout's.

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

# What this build writes (schema comments, plan_format.h,
# container_format.h, graph_format.h, payload.h).
PLAN_MAJOR, PLAN_MINOR = 1, 0
CONTAINER_MAJOR, CONTAINER_MINOR = 1, 1
GRAPH_MAJOR, GRAPH_MINOR = 1, 1
# The first graph minor this cdnn does not know (it knows up to 1.3, and
# writes 1.1 unless a graph uses what 1.2 or 1.3 added): a "future" graph.
GRAPH_NEXT_MINOR = 4
DEVICE_CPU, DEVICE_CUDA = 0, 1

EXAMPLE = "pointwise.json"       # the graph the plans are built from
OTHER_EXAMPLE = "matmul.json"    # a different graph, for mixed containers
# A container cdnn 1.0 wrote (commit 7b7392f), for the 1.0 layout.
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        os.pardir, "fixtures", "v1.0")
FIXTURE_1_0 = "pointwise.cpu-fused_pointwise.cdgp"
AUTO = object()                  # "compute the digest" (build_* arguments)

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


def container_seal(major, minor, graph, plan=None):
    """Container field 5 (format 1.1): every byte a reader acts on."""
    plan = plan or b""
    return hashlib.sha256(b"CDGP" + struct.pack("<HHQ", major, minor,
                                                len(graph)) + graph +
                          struct.pack("<Q", len(plan)) + plan).digest()


class NoSharing(dict):
    """Builder.vtables that finds no vtable to share: cdnn writes every
    table's vtable in front of it."""

    def get(self, key, default=None):
        return None


# ---------------------------------------------------------------------------
# Graphs: read and written field by field, as schema/graph.fbs says
# ---------------------------------------------------------------------------

# Fields by id: (name, kind).  Kinds: scalars (struct format letters), "str",
# "[i64]", "[u8]", "[Port]", "[Table]" (a vector of that table), "union".
GRAPH_TABLES = {
    "Graph": [("format_major", "H"), ("format_minor", "H"), ("name", "str"),
              ("io_type", "b"), ("intermediate_type", "b"),
              ("compute_type", "b"), ("tensors", "[Tensor]"),
              ("nodes", "[Node]"), ("sha256", "[u8]")],
    "Tensor": [("uid", "q"), ("name", "str"), ("data_type", "b"),
               ("dims", "[i64]"), ("strides", "[i64]"), ("is_virtual", "?"),
               ("alignment", "q"), ("is_scalar", "?"),
               ("scalar_value", "d")],
    "Node": [("name", "str"), ("op", "b"), ("inputs", "[Port]"),
             ("outputs", "[Port]"), ("attr_type", "B"), ("attr", "union")],
    "ConvAttr": [("spatial_dims", "i"), ("pre_padding", "[i64]"),
                 ("post_padding", "[i64]"), ("stride", "[i64]"),
                 ("dilation", "[i64]"), ("groups", "q")],
    "PointwiseAttr": [("mode", "b"), ("relu_lower_clip", "d"),
                      ("relu_upper_clip", "d"),
                      ("relu_lower_clip_slope", "d"), ("elu_alpha", "d"),
                      ("softplus_beta", "d"), ("swish_beta", "d")],
    "ReductionAttr": [("mode", "b")],
    "NormAttr": [("epsilon", "d")],
    "SdpaAttr": [("scale", "d"), ("causal", "?")],
}
NODE_ATTRS = [None, "ConvAttr", "PointwiseAttr", "ReductionAttr", "NormAttr",
              "SdpaAttr"]
# graph_format.c encode_graph makes the digest first, so that it lies at
# the end of the buffer; every other object is made in field order.
MADE_FIRST = {"Graph": ["sha256"]}
GRAPH_SHA256_FIELD = 8


def _flags(kind):
    from flatbuffers import number_types as N
    return {"H": N.Uint16Flags, "b": N.Int8Flags, "B": N.Uint8Flags,
            "q": N.Int64Flags, "i": N.Int32Flags, "?": N.BoolFlags,
            "d": N.Float64Flags}[kind]


def read_table(t, name):
    """A table as a dict of the fields present (python3-flatbuffers'
    reader); absent fields are not keys."""
    from flatbuffers.table import Table
    out = {}
    for fid, (field, kind) in enumerate(GRAPH_TABLES[name]):
        o = t.Offset(4 + 2 * fid)
        if not o:
            continue
        if kind == "str":
            out[field] = bytes(t.String(o + t.Pos))
        elif kind.startswith("["):
            n, at = t.VectorLen(o), t.Vector(o)
            if kind == "[i64]":
                out[field] = [struct.unpack_from("<q", t.Bytes, at + 8 * k)[0]
                              for k in range(n)]
            elif kind == "[u8]":
                out[field] = bytes(t.Bytes[at:at + n])
            elif kind == "[Port]":
                out[field] = [struct.unpack_from("<B7xq", t.Bytes, at + 16 * k)
                              for k in range(n)]
            else:
                out[field] = [read_table(Table(t.Bytes, t.Indirect(at + 4 * k)),
                                         kind[1:-1]) for k in range(n)]
        elif kind == "union":
            member = NODE_ATTRS[out.get("attr_type", 0)]
            sub = Table(bytearray(), 0)
            t.Union(sub, o)
            out[field] = read_table(sub, member)
        else:
            out[field] = t.Get(_flags(kind), o + t.Pos)
    return out


def read_graph(data):
    from flatbuffers.table import Table
    root = struct.unpack_from("<I", data, 0)[0]
    return read_table(Table(bytearray(data), root), "Graph")


def write_table(w, b, name, d):
    fields = GRAPH_TABLES[name]
    kinds = dict(fields)
    refs = {}
    order = MADE_FIRST.get(name, []) + [f for f, _ in fields
                                        if f not in MADE_FIRST.get(name, [])]
    for field in order:
        kind = kinds[field]
        if field not in d:
            continue
        v = d[field]
        if kind == "str":
            refs[field] = b.CreateString(v)
        elif kind == "[u8]":
            refs[field] = w.byte_vector(b, v)
        elif kind == "[i64]":
            b.StartVector(8, len(v), 8)
            for x in reversed(v):
                b.PrependInt64(x)
            refs[field] = b.EndVector()
        elif kind == "[Port]":
            b.StartVector(16, len(v), 8)
            for slot, uid in reversed(v):
                b.Prep(8, 16)
                b.PrependInt64(uid)
                b.Pad(7)
                b.PrependUint8(slot)
            refs[field] = b.EndVector()
        elif kind.startswith("["):
            elems = [write_table(w, b, kind[1:-1], e) for e in v]
            b.StartVector(4, len(elems), 4)
            for e in reversed(elems):
                b.PrependUOffsetTRelative(e)
            refs[field] = b.EndVector()
        elif kind == "union":
            refs[field] = write_table(w, b, NODE_ATTRS[d["attr_type"]], v)
    extra = d.get("_extra", [])  # (id, struct letter, value): a newer minor's
    b.StartObject(max([len(fields)] + [fid + 1 for fid, _, _ in extra]))
    for fid, (field, kind) in enumerate(fields):
        if field in refs:
            b.PrependUOffsetTRelative(refs[field])
            b.Slot(fid)
        elif field in d:
            b.Prepend(_flags(kind), d[field])
            b.Slot(fid)
    for fid, kind, value in extra:
        b.Prepend(_flags(kind), value)
        b.Slot(fid)
    return b.EndObject()


def graph_digest_at(data):
    """Where the 32 digest bytes of graph bytes are, or None."""
    from flatbuffers.table import Table
    root = struct.unpack_from("<I", data, 0)[0]
    t = Table(bytearray(data), root)
    o = t.Offset(4 + 2 * GRAPH_SHA256_FIELD)
    if not o or t.VectorLen(o) != 32:
        return None
    return t.Vector(o)


def graph_seal(data):
    """The digest of graph bytes: SHA-256 of the buffer, digest zeroed."""
    at = graph_digest_at(data)
    return hashlib.sha256(data[:at] + bytes(32) + data[at + 32:]).digest()


def sealed_graph(data):
    """Graph bytes with the digest filled in (a writer of format 1.1)."""
    at = graph_digest_at(data)
    return data[:at] + graph_seal(data) + data[at + 32:]


class Writer:
    """Builds plans, bodies, containers and graphs as cdnn lays them out."""

    def __init__(self, fb, classes):
        self.fb = fb
        self.Plan, self.PlanBody, self.PlanTensor, self.Container = classes

    def builder(self):
        b = self.fb.Builder(1024)
        b.vtables = NoSharing()
        return b

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
        m, b = self.PlanBody, self.builder()
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
        m, b = self.Plan, self.builder()
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
                        graph_digest=None, digest=AUTO):
        """Container fields by id (schema/container.fbs): 0 format_major,
        1 format_minor, 2 graph, 3 plan, 4 graph_sha256 = SHA-256(graph
        bytes), 5 sha256 = container_seal(...).  digest: AUTO seals for
        (major, minor), None leaves field 5 out (format 1.0), bytes are
        written as given.  extra_field: a u32 in field 6, which Container
        1.1 does not have: what a newer minor might add.  Written in cdnn's
        order (container_format.c encode): sha256, graph_sha256, plan,
        graph vectors, then the fields in id order."""
        if graph_digest is None:
            graph_digest = hashlib.sha256(graph).digest()
        if digest is AUTO:
            digest = container_seal(major, minor, graph, plan)
        m, b = self.Container, self.builder()
        sha_ref = self.byte_vector(b, digest) if digest is not None else None
        graph_sha_ref = self.byte_vector(b, graph_digest)
        plan_ref = self.byte_vector(b, plan) if plan is not None else None
        graph_ref = self.byte_vector(b, graph)
        b.StartObject(7 if extra_field is not None else 6)
        m.ContainerAddFormatMajor(b, major)
        m.ContainerAddFormatMinor(b, minor)
        m.ContainerAddGraph(b, graph_ref)
        if plan_ref is not None:
            m.ContainerAddPlan(b, plan_ref)
        m.ContainerAddGraphSha256(b, graph_sha_ref)
        if sha_ref is not None:
            m.ContainerAddSha256(b, sha_ref)
        if extra_field is not None:
            b.PrependUint32Slot(6, extra_field, 0)
        b.Finish(b.EndObject(), file_identifier=b"CDGP")
        return bytes(b.Output())

    def build_graph(self, g, digest=AUTO):
        """Graph bytes from read_graph's dict; digest: AUTO seals them
        (when g has a sha256 field), None leaves what g holds."""
        b = self.builder()
        b.Finish(write_table(self, b, "Graph", g), file_identifier=b"CDGR")
        out = bytes(b.Output())
        if digest is AUTO and "sha256" in g:
            out = sealed_graph(out)
        return out

    def plan_parts(self, plan):
        p = self.Plan.Plan.GetRootAs(plan, 0)
        return (p.FormatMajor(), p.FormatMinor(), p.BodyAsNumpy().tobytes(),
                p.BodySha256AsNumpy().tobytes())

    def container_parts(self, data):
        c = self.Container.Container.GetRootAs(data, 0)
        return {"major": c.FormatMajor(), "minor": c.FormatMinor(),
                "graph": c.GraphAsNumpy().tobytes(),
                "plan": None if c.PlanIsNone() else c.PlanAsNumpy().tobytes(),
                "graph_sha256": c.GraphSha256AsNumpy().tobytes(),
                "sha256": None if c.Sha256IsNone()
                else c.Sha256AsNumpy().tobytes()}


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
        import traceback
        traceback.print_exc()
        report("setup", False, "%s: %s" % (type(e).__name__, e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(FAILURES))
    sys.exit(1 if FAILURES else 0)


def schema(schema_dir, name):
    return os.path.join(schema_dir, name)


def root_field(data, fid):
    """Where root-table field fid's inline bytes are, or None if absent."""
    tab = struct.unpack_from("<I", data, 0)[0]
    vt = tab - struct.unpack_from("<i", data, tab)[0]
    vt_size = struct.unpack_from("<H", data, vt)[0]
    if 4 + 2 * fid >= vt_size:
        return None
    off = struct.unpack_from("<H", data, vt + 4 + 2 * fid)[0]
    return tab + off if off else None


def flipped(data, at, mask=0x02):
    b = bytearray(data)
    b[at] ^= mask
    return bytes(b)


def key_of(api, data):
    """The content key of the graph in bytes (graph or container), or ''."""
    st, _, lg = api.graph_load(data, with_handle=False)
    if not lg:
        return ""
    k = api.content_key(lg)
    api.lib.cdnn_graph_destroy(lg)
    return k


class Ctx:
    """What every group of cases shares."""


def cases(lib_path, schema_dir, examples_dir, tmp):
    gen = os.path.join(tmp, "gen")
    run(["flatc", "--python", "-o", gen, schema(schema_dir, "container.fbs"),
         schema(schema_dir, "plan.fbs"), schema(schema_dir, "graph.fbs")])
    sys.path.insert(0, gen)
    import flatbuffers
    from cdnn.fb import Container, Plan, PlanBody, PlanTensor
    c = Ctx()
    c.fb, c.Plan, c.tmp, c.schema_dir = flatbuffers, Plan, tmp, schema_dir
    c.w = Writer(flatbuffers, (Plan, PlanBody, PlanTensor, Container))

    api = c.api = Cdnn(lib_path)
    with open(os.path.join(examples_dir, EXAMPLE)) as f:
        g = api.graph_from_json(f.read())
    with open(os.path.join(examples_dir, OTHER_EXAMPLE)) as f:
        other = api.graph_from_json(f.read())
    api.build(g)
    api.build(other)
    c.plan = api.save(g, SAVE_PLAN)
    c.both = api.save(g, SAVE_GRAPH_AND_PLAN)
    c.graph = api.save(g, SAVE_GRAPH)
    c.other_plan = api.save(other, SAVE_PLAN)
    c.key = api.content_key(g)
    eid, ename = ctypes.c_uint64(), ctypes.c_char_p()
    api.check(api.lib.cdnn_graph_engine(g, ctypes.byref(eid),
                                        ctypes.byref(ename)),
              "cdnn_graph_engine")
    c.engine = ename.value.decode()
    print("# %s: engine %s, plan %d bytes, container %d bytes, graph %d bytes"
          % (EXAMPLE, c.engine, len(c.plan), len(c.both), len(c.graph)))

    self_checks(c)
    plan_cases(c)
    container_cases(c)
    graph_cases(c)
    flatc_graph_cases(c)
    decoding_cases(c)

    api.lib.cdnn_graph_destroy(g)
    api.lib.cdnn_graph_destroy(other)
    api.lib.cdnn_handle_destroy(api.handle)


def self_checks(c):
    """The python writer reproduces cdnn's bytes: plan, container 1.1,
    graph 1.1, and the 1.0 container of a fixture cdnn 1.0 wrote."""
    api, w, plan, both, graph = c.api, c.w, c.plan, c.both, c.graph
    major, minor, body, digest = w.plan_parts(plan)
    c.body, c.digest = body, digest
    c.fields = fields = w.read_body(body)
    report("python reads plan format 1.0 and a digest that seals the body",
           (major, minor) == (PLAN_MAJOR, PLAN_MINOR) and
           digest == seal(major, minor, body),
           "format %d.%d, digest %s, sha256 %s" % (
               major, minor, digest.hex(), seal(major, minor, body).hex()))
    rebuilt_body = w.build_body(fields)
    report("python rebuild of the plan body is byte-identical to cdnn's",
           rebuilt_body == body, hexdiff(rebuilt_body, body))
    c.rebuilt = rebuilt = w.build_plan(rebuilt_body)
    report("python rebuild of the plan envelope is byte-identical to cdnn's",
           rebuilt == plan, hexdiff(rebuilt, plan))

    parts = w.container_parts(both)
    report("container parts are the bare graph and plan bytes",
           parts["graph"] == graph and parts["plan"] == plan,
           "graph %s, plan %s" % (hexdiff(parts["graph"], graph),
                                  hexdiff(parts["plan"], plan)))
    report("python reads container format 1.1, its SHA-256 over version and "
           "parts, and the graph part's SHA-256",
           (parts["major"], parts["minor"]) == (CONTAINER_MAJOR,
                                                CONTAINER_MINOR) and
           parts["sha256"] == container_seal(1, 1, graph, plan) and
           parts["graph_sha256"] == hashlib.sha256(graph).digest(),
           "format %d.%d, sha256 %s" % (parts["major"], parts["minor"],
                                        (parts["sha256"] or b"").hex()))
    rebuilt_c = w.build_container(graph, plan)
    report("python rebuild of the container 1.1 is byte-identical to cdnn's",
           rebuilt_c == both, hexdiff(rebuilt_c, both))

    c.gdict = gd = read_graph(graph)
    report("python reads graph format 1.1 and a SHA-256 of the buffer with "
           "its own 32 bytes zeroed",
           (gd.get("format_major"), gd.get("format_minor")) ==
           (GRAPH_MAJOR, GRAPH_MINOR) and gd.get("sha256") == graph_seal(graph),
           "format %s.%s, sha256 %s, computed %s" % (
               gd.get("format_major"), gd.get("format_minor"),
               gd.get("sha256", b"").hex(), graph_seal(graph).hex()))
    report("the graph's digest lies at the end of the buffer (made first)",
           graph_digest_at(graph) == len(graph) - 32,
           "at %s of %d" % (graph_digest_at(graph), len(graph)))
    rebuilt_g = w.build_graph(dict(gd, sha256=bytes(32)))
    report("python rebuild of the graph 1.1 (re-sealed) is byte-identical "
           "to cdnn's", rebuilt_g == graph, hexdiff(rebuilt_g, graph))
    shared = c.fb.Builder(1024)  # python's own layout: vtables shared
    shared.Finish(write_table(w, shared, "Graph", dict(gd, sha256=bytes(32))),
                  file_identifier=b"CDGR")
    shared = sealed_graph(bytes(shared.Output()))
    report("python's Builder shares vtables that cdnn writes apart",
           shared != graph and len(shared) < len(graph),
           "%d vs %d bytes" % (len(shared), len(graph)))
    # Graphs have no canonical layout: any valid sealed bytes load.
    st, msg, lg = api.graph_load(shared, with_handle=False)
    k = api.content_key(lg) if lg else ""
    if lg:
        api.lib.cdnn_graph_destroy(lg)
    report("graph 1.1 laid out with shared vtables, sealed, loads with the "
           "same content key", st == SUCCESS and k == c.key,
           "status %s: %s" % (STATUS_NAMES.get(st, st), msg))

    # Format 1.0, as cdnn 1.0 wrote it: no container digest, minor 0.
    with open(os.path.join(FIXTURES, FIXTURE_1_0), "rb") as f:
        c.old = old = f.read()
    op = c.old_parts = w.container_parts(old)
    report("the 1.0 fixture: container format 1.0, no container SHA-256, "
           "a graph of format 1.0 without a digest",
           (op["major"], op["minor"]) == (1, 0) and op["sha256"] is None and
           op["plan"] is not None and
           read_graph(op["graph"]).get("format_minor", 0) == 0 and
           "sha256" not in read_graph(op["graph"]),
           "container %d.%d" % (op["major"], op["minor"]))
    rebuilt_old = w.build_container(op["graph"], op["plan"], minor=0,
                                    digest=None)
    report("python rebuild of cdnn 1.0's container is byte-identical to it",
           rebuilt_old == old, hexdiff(rebuilt_old, old))
    og = read_graph(op["graph"])
    rebuilt_og = w.build_graph(og)
    report("python rebuild of cdnn 1.0's graph is byte-identical to it",
           rebuilt_og == op["graph"], hexdiff(rebuilt_og, op["graph"]))

    # The 4-aligned layout python's own helpers write is a valid
    # FlatBuffer, but not cdnn's canonical envelope: refused as damage.
    b4 = c.fb.Builder(1024)
    d4 = b4.CreateByteVector(digest)
    bo4 = b4.CreateByteVector(body)
    c.Plan.PlanStart(b4)
    c.Plan.PlanAddFormatMajor(b4, major)
    c.Plan.PlanAddFormatMinor(b4, minor)
    c.Plan.PlanAddBody(b4, bo4)
    c.Plan.PlanAddBodySha256(b4, d4)
    b4.Finish(c.Plan.PlanEnd(b4), file_identifier=b"CDPL")
    plan4 = bytes(b4.Output())
    if plan4 != plan:
        expect("plan with a non-canonical (4-aligned) envelope -> "
               "CORRUPT_DATA", api.plan_load(plan4), CORRUPT_DATA,
               ["envelope"])
    else:
        print("# python's CreateByteVector happened to give cdnn's layout")

    # --- controls: untampered rebuilds load ------------------------------
    expect("untampered python-built plan loads", api.plan_load(rebuilt),
           SUCCESS)
    expect("untampered python-built container 1.1 loads as a plan",
           api.plan_load(rebuilt_c), SUCCESS)
    expect("python-built container 1.0 (cdnn 1.0's bytes) loads as a plan",
           api.plan_load(rebuilt_old), SUCCESS)


def plan_cases(c):
    api, w, body, digest, fields = c.api, c.w, c.body, c.digest, c.fields

    def tampered(name, change, reseal=True, **plan_kw):
        f = dict(fields)
        change(f)
        new_body = w.build_body(f)
        if reseal:
            return w.build_plan(new_body, **plan_kw)
        return w.build_plan(new_body, digest=digest, **plan_kw)

    # --- versions: judged only once the digest holds ------------------------
    expect("plan format 2.0 -> NOT_SUPPORTED naming 2.0 and 1.x",
           api.plan_load(w.build_plan(body, major=2, minor=0)),
           NOT_SUPPORTED, ["2.0", "1.x", "newer cdnn"])
    expect("plan format 1.1 (higher minor) -> NOT_SUPPORTED (rule 5)",
           api.plan_load(w.build_plan(body, major=1, minor=1)),
           NOT_SUPPORTED, ["1.1", "1.0"])
    expect("plan format 0.0 -> NOT_SUPPORTED, rebuild from the graph",
           api.plan_load(w.build_plan(body, major=0, minor=0)),
           NOT_SUPPORTED, ["0.0", "1.x", "rebuild"])
    at = root_field(c.plan, 0)
    for mask in (0x02, 0x01, 0x80):
        bad = flipped(c.plan, at, mask)
        expect("plan version byte flipped (major 1 -> %d), not re-sealed -> "
               "CORRUPT_DATA damaged, not 'newer'" % (1 ^ mask),
               api.plan_load(bad), CORRUPT_DATA,
               ["the plan is damaged", "SHA-256"])
    expect("plan relabelled 2.0 under its 1.0 digest -> CORRUPT_DATA SHA-256",
           api.plan_load(w.build_plan(body, major=2, minor=0, digest=digest)),
           CORRUPT_DATA, ["damaged", "SHA-256"])
    expect("plan relabelled 1.3 under its 1.0 digest -> CORRUPT_DATA SHA-256",
           api.plan_load(w.build_plan(body, major=1, minor=3, digest=digest)),
           CORRUPT_DATA, ["damaged", "SHA-256"])

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
    flip = bytearray(body)
    flip[len(flip) // 2] ^= 0x01
    expect("one body byte flipped, digest not re-sealed -> CORRUPT_DATA "
           "SHA-256", api.plan_load(w.build_plan(bytes(flip),
                                                 digest=digest)),
           CORRUPT_DATA, ["SHA-256"])


def renamed(gd, new_name=b"renamed"):
    """The graph dict with its first tensor renamed (a name is not in the
    content key, so the plan still belongs to it)."""
    g = dict(gd)
    g["tensors"] = [dict(t) for t in gd["tensors"]]
    g["tensors"][0]["name"] = new_name
    return g


def container_cases(c):
    api, w, graph, plan, both = c.api, c.w, c.graph, c.plan, c.both

    # --- graph-only and mixed containers ------------------------------------
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
               st == SUCCESS and loaded_key == c.key,
               "status %s: %s; key %s vs %s" % (STATUS_NAMES.get(st, st),
                                                msg, loaded_key, c.key))
    expect("graph-only container, its SHA-256 sealed as if it held a plan "
           "-> CORRUPT_DATA SHA-256", api.blob_contents(w.build_container(
               graph, digest=container_seal(1, 1, graph, plan))),
           CORRUPT_DATA, ["damaged", "SHA-256"])

    mixed = w.build_container(graph, c.other_plan)
    st, msg, lg = api.graph_load(mixed)
    if lg:
        api.lib.cdnn_graph_destroy(lg)
    expect("container whose plan is another graph's (sealed) -> "
           "CORRUPT_DATA 'content keys differ'", (st, msg), CORRUPT_DATA,
           ["content keys differ"])
    expect("container whose plan is another graph's, loaded as a plan -> "
           "CORRUPT_DATA 'content keys differ'", api.plan_load(mixed),
           CORRUPT_DATA, ["content keys differ"])

    # --- versions of 1.1 containers: digest first ---------------------------
    for fid, what in ((0, "major"), (1, "minor")):
        at = root_field(both, fid)
        for mask in (0x02, 0x80):
            expect("container 1.1, %s byte flipped (-> %d), not re-sealed -> "
                   "CORRUPT_DATA damaged" % (what, 1 ^ mask),
                   api.blob_contents(flipped(both, at, mask)), CORRUPT_DATA,
                   ["the container is damaged", "SHA-256 does not match"])
    expect("container relabelled 2.0 under its 1.1 digest -> CORRUPT_DATA",
           api.blob_contents(w.build_container(
               graph, plan, major=2, digest=container_seal(1, 1, graph, plan))),
           CORRUPT_DATA, ["damaged", "SHA-256"])
    expect("container format 2.0, sealed -> NOT_SUPPORTED naming 2.0 and 1.x",
           api.plan_load(w.build_container(graph, plan, major=2, minor=0)),
           NOT_SUPPORTED, ["2.0", "1.x"])
    expect("container claiming 2.0 without a SHA-256 -> CORRUPT_DATA (no "
           "digest: it must be a canonical 1.0 container)",
           api.plan_load(w.build_container(graph, plan, major=2, minor=0,
                                           digest=None)),
           CORRUPT_DATA, ["no SHA-256", "1.0"])
    expect("container claiming 1.1 without a SHA-256 -> CORRUPT_DATA",
           api.plan_load(w.build_container(graph, plan, digest=None)),
           CORRUPT_DATA, ["no SHA-256", "1.0"])
    expect("container SHA-256 of 31 bytes -> CORRUPT_DATA",
           api.plan_load(w.build_container(graph, plan, digest=bytes(
               container_seal(1, 1, graph, plan)[:31]))),
           CORRUPT_DATA, ["damaged", "SHA-256"])

    newer = w.build_container(graph, plan, minor=2, extra_field=0xC0FFEE)
    st, msg, lg = api.graph_load(newer)
    ok = st == SUCCESS and lg is not None
    resaved = api.save(lg, SAVE_PLAN) if ok else b""
    again = api.save(lg, SAVE_GRAPH_AND_PLAN) if ok else b""
    if lg:
        api.lib.cdnn_graph_destroy(lg)
    report("container format 1.2 with an unknown field 6 (sealed) loads, plan "
           "intact, and re-saves as cdnn's container 1.1",
           ok and resaved == plan and again == both,
           "status %s: %s; resaved plan %s; container %s" % (
               STATUS_NAMES.get(st, st), msg, hexdiff(resaved, plan),
               hexdiff(again, both)))
    expect("container format 1.2 with an unknown field, not re-sealed for "
           "1.2 -> CORRUPT_DATA", api.blob_contents(w.build_container(
               graph, plan, minor=2, extra_field=0xC0FFEE,
               digest=container_seal(1, 1, graph, plan))),
           CORRUPT_DATA, ["damaged", "SHA-256"])
    expect("container format 1.1 with a field 1.1 lacks (sealed) -> "
           "CORRUPT_DATA (envelope not canonical)",
           api.blob_contents(w.build_container(graph, plan, extra_field=1)),
           CORRUPT_DATA, ["envelope"])

    # --- the graph part: three digests cover it -----------------------------
    g2 = w.build_graph(renamed(c.gdict))
    report("the renamed graph is sealed anew (python) and differs",
           g2 != graph and read_graph(g2)["sha256"] == graph_seal(g2), "")
    full = w.build_container(g2, plan)
    st, msg, lg = api.graph_load(full)
    name = b""
    if lg:
        name = read_graph(api.save(lg, SAVE_GRAPH))["tensors"][0].get("name")
        api.lib.cdnn_graph_destroy(lg)
    report("container with its graph part edited and every digest re-sealed "
           "(graph, graph_sha256, container) loads the edit",
           st == SUCCESS and name == b"renamed",
           "status %s: %s; name %r" % (STATUS_NAMES.get(st, st), msg, name))
    expect("graph part edited, container SHA-256 not re-sealed -> "
           "CORRUPT_DATA", api.graph_load(w.build_container(
               g2, plan, digest=container_seal(1, 1, graph, plan))),
           CORRUPT_DATA, ["the container is damaged", "SHA-256 does not match"])
    expect("graph part edited, graph_sha256 not re-sealed -> CORRUPT_DATA",
           api.graph_load(w.build_container(
               g2, plan, graph_digest=hashlib.sha256(graph).digest())),
           CORRUPT_DATA, ["the container is damaged", "graph part"])
    # the edit under the unedited graph's digest
    g2_stale = w.build_graph(dict(renamed(c.gdict), sha256=c.gdict["sha256"]),
                             digest=None)
    expect("graph part edited, the graph's own SHA-256 not re-sealed (the "
           "container's are) -> CORRUPT_DATA the graph is damaged",
           api.graph_load(w.build_container(g2_stale, plan)),
           CORRUPT_DATA, ["the graph is damaged", "SHA-256 does not match"])

    # --- format 1.0 containers: only cdnn 1.0's exact bytes ------------------
    old, op = c.old, c.old_parts
    st, msg, lg = api.graph_load(old)
    resaved = api.save(lg, SAVE_PLAN) if lg else b""
    if lg:
        api.lib.cdnn_graph_destroy(lg)
    report("container 1.0 cdnn 1.0 wrote loads, plan part re-saved as is",
           st == SUCCESS and resaved == op["plan"],
           "status %s: %s" % (STATUS_NAMES.get(st, st), msg))
    expect("container 1.0 with a field 1.0 lacks -> CORRUPT_DATA (not "
           "canonical 1.0)", api.blob_contents(w.build_container(
               op["graph"], op["plan"], minor=0, digest=None, extra_field=1)),
           CORRUPT_DATA, ["no SHA-256", "1.0"])
    g_flip = bytearray(op["graph"])
    for k in range(len(g_flip) - 1, 0, -1):  # a name byte: still a valid graph
        if 0x61 <= g_flip[k] <= 0x7a:
            g_flip[k] ^= 0x20
            break
    expect("container 1.0, graph part changed, graph SHA-256 not re-sealed "
           "-> CORRUPT_DATA", api.blob_contents(w.build_container(
               bytes(g_flip), op["plan"], minor=0, digest=None,
               graph_digest=op["graph_sha256"])),
           CORRUPT_DATA, ["SHA-256"])
    # Issue 8: a 1.0 container whose minor read 1568 after a change to its
    # envelope skipped the canonical check (a "newer minor" may add fields)
    # and loaded.  Without a container digest nothing may be newer than 1.0.
    for extra in (None, 0xBAD):
        expect("container 1.0 relabelled minor 1568%s, no SHA-256 -> refused "
               "(CORRUPT_DATA)" % (" with a field 1.0 lacks" if extra else ""),
               api.plan_load(w.build_container(
                   op["graph"], op["plan"], minor=1568, digest=None,
                   extra_field=extra)),
               CORRUPT_DATA, ["no SHA-256", "1.0"])
    tab = struct.unpack_from("<I", old, 0)[0]
    vt = tab - struct.unpack_from("<i", old, tab)[0]
    tsize = struct.unpack_from("<H", old, vt + 2)[0]
    done = 0
    for off in range(4, tsize - 1, 2):  # the minor slot pointed into the table
        value = struct.unpack_from("<H", old, tab + off)[0]
        if value <= 1 or done:
            continue
        bad = bytearray(old)
        struct.pack_into("<H", bad, vt + 4 + 2 * 1, off)
        if root_field(bytes(bad), 1) is None:
            continue
        done = 1
        expect("container 1.0, one vtable byte changed so that its minor "
               "reads %d -> refused (CORRUPT_DATA)" % value,
               api.plan_load(bytes(bad)), CORRUPT_DATA,
               ["no SHA-256", "1.0"])
    report("found a one-byte change that gives the 1.0 fixture a newer "
           "minor", done, "none in its table")


def graph_cases(c):
    """Bare graphs: the digest covers every byte, the version included."""
    api, w, graph, gd = c.api, c.w, c.graph, c.gdict

    def load(data):
        st, msg, lg = api.graph_load(data, with_handle=False)
        k = api.content_key(lg) if lg else ""
        if lg:
            api.lib.cdnn_graph_destroy(lg)
        return st, msg, k

    g2 = w.build_graph(renamed(gd))
    st, msg, lg = api.graph_load(g2, with_handle=False)
    name = b""
    if lg:
        name = read_graph(api.save(lg, SAVE_GRAPH))["tensors"][0].get("name")
        api.lib.cdnn_graph_destroy(lg)
    report("graph edited (a tensor renamed) and re-sealed in python loads "
           "the edit", st == SUCCESS and name == b"renamed",
           "status %s: %s; name %r" % (STATUS_NAMES.get(st, st), msg, name))
    stale = w.build_graph(dict(renamed(gd), sha256=gd["sha256"]), digest=None)
    expect("graph edited, its SHA-256 not re-sealed -> CORRUPT_DATA damaged",
           load(stale), CORRUPT_DATA,
           ["the graph is damaged", "SHA-256 does not match"])
    at = root_field(graph, 0)
    for mask in (0x02, 0x01, 0x80):
        expect("graph 1.1, major byte flipped (-> %d) -> CORRUPT_DATA "
               "damaged, not 'newer'" % (1 ^ mask),
               load(flipped(graph, at, mask)), CORRUPT_DATA,
               ["the graph is damaged", "SHA-256 does not match"])
    at = root_field(graph, 1)
    expect("graph 1.1, minor byte flipped (-> 3) -> CORRUPT_DATA damaged",
           load(flipped(graph, at, 0x02)), CORRUPT_DATA,
           ["the graph is damaged", "SHA-256 does not match"])
    expect("graph 1.1 relabelled 2.0 under its 1.1 digest -> CORRUPT_DATA",
           load(w.build_graph(dict(gd, format_major=2), digest=None)),
           CORRUPT_DATA, ["the graph is damaged", "SHA-256 does not match"])
    expect("graph format 2.0, sealed -> NOT_SUPPORTED naming 2.0 and 1.x",
           load(w.build_graph(dict(gd, format_major=2, format_minor=0))),
           NOT_SUPPORTED, ["2.0", "1.x", "newer cdnn"])
    no_digest = {k: v for k, v in gd.items() if k != "sha256"}
    expect("graph 1.1 without its SHA-256 -> CORRUPT_DATA (1.1 always "
           "carries one)", load(w.build_graph(no_digest)), CORRUPT_DATA,
           ["the graph is damaged", "1.1", "always carries a SHA-256"])
    expect("graph claiming 2.0 without a SHA-256 -> CORRUPT_DATA (only 1.0 "
           "is digest-less)",
           load(w.build_graph(dict(no_digest, format_major=2, format_minor=0))),
           CORRUPT_DATA, ["the graph is damaged", "SHA-256"])
    expect("graph SHA-256 of 31 bytes -> CORRUPT_DATA",
           load(w.build_graph(dict(gd, sha256=bytes(31)), digest=None)),
           CORRUPT_DATA,
           ["the graph is damaged", "31 bytes"])
    v10 = {k: v for k, v in no_digest.items() if k != "format_minor"}
    report("graph format 1.0 (python, no digest) loads with the same content "
           "key", load(w.build_graph(v10))[::2] == (SUCCESS, c.key),
           "%s" % (load(w.build_graph(v10))[:2],))


def flatc_graph_cases(c):
    """Graphs written by flatc from a newer schema, sealed in python."""
    api, tmp, schema_dir = c.api, c.tmp, c.schema_dir
    gschema = schema(schema_dir, "graph.fbs")

    def load(data):
        st, msg, lg = api.graph_load(data, with_handle=False)
        k = api.content_key(lg) if lg else ""
        if lg:
            api.lib.cdnn_graph_destroy(lg)
        return st, msg, k

    c.gjson = gjson = flatc_json(tmp, gschema, c.graph, "graph")
    report("flatc reads cdnn's graph digest",
           bytes(gjson.get("sha256", [])) == graph_seal(c.graph), "")
    future = os.path.join(tmp, "graph_future.fbs")
    with open(gschema) as f:
        text = f.read()
    # A 1.3 schema: a field appended to Graph (after the digest, field 8)
    # and to Tensor.
    new_text = text.replace("  sha256: [ubyte];\n}",
                            "  sha256: [ubyte];\n  future_graph_field: uint;\n}")
    new_text = new_text.replace("  scalar_value: double = 0;\n}",
                                "  scalar_value: double = 0;\n"
                                "  future_tensor_field: string;\n}")
    report("the 1.3 schema appends fields to Graph and Tensor",
           new_text.count("future_") == 2, "graph.fbs changed shape")
    with open(future, "w") as f:
        f.write(new_text)
    g13 = dict(gjson)
    g13["format_minor"] = GRAPH_NEXT_MINOR
    g13["future_graph_field"] = 77
    g13["sha256"] = [0] * 32  # the writer's place for the digest
    g13["tensors"] = [dict(t, future_tensor_field="x") for t in gjson["tensors"]]
    zeroed = flatc_binary(tmp, future, g13, "graph13")
    expect("graph format 1.3 (flatc), digest left zero -> CORRUPT_DATA",
           load(zeroed), CORRUPT_DATA,
           ["the graph is damaged", "SHA-256 does not match"])
    st, msg, k = load(sealed_graph(zeroed))
    report("graph format 1.3 (flatc, unknown fields, sealed in python) loads "
           "with the same content key", st == SUCCESS and k == c.key,
           "status %s: %s" % (STATUS_NAMES.get(st, st), msg))
    bare = dict(g13)
    del bare["sha256"]
    expect("graph format 1.3 (flatc) without a SHA-256 -> CORRUPT_DATA",
           load(flatc_binary(tmp, future, bare, "graph13_bare")), CORRUPT_DATA,
           ["the graph is damaged", "1.%d" % GRAPH_NEXT_MINOR,
            "always carries a SHA-256"])
    # A 1.3 graph that uses what 1.3 added -- a new Op value, a new NodeAttr
    # union member -- cannot be loaded by a 1.2 reader, but it is not
    # damaged: NOT_SUPPORTED, "load them with a newer cdnn" (graph.fbs:
    # a new minor only adds fields or enum values).
    # After the last member and the last Op, whichever they are: adding an
    # op to cdnn is a row of its op table, not an edit here.
    newer = re.sub(r"union NodeAttr \{([^}]*?) \}",
                   r"table FutureAttr { x: int; }\nunion NodeAttr {\1, FutureAttr }",
                   new_text, count=1)
    newer = re.sub(r"(enum Op : byte \{[^}]*?)\n\}", r"\1, FutureOp\n}", newer,
                   count=1)
    report("the 1.3 schema adds an Op value and a NodeAttr member",
           newer.count("Future") == 3, "graph.fbs changed shape")
    with open(future, "w") as f:
        f.write(newer)
    for what, change in (("a new Op value", {"op": "FutureOp"}),
                         ("a new NodeAttr member",
                          {"attr_type": "FutureAttr", "attr": {"x": 1}})):
        gnew = json.loads(json.dumps(g13))
        gnew["nodes"][0].update(change)
        expect("graph format 1.3 using %s (sealed) -> NOT_SUPPORTED, newer "
               "cdnn" % what,
               load(sealed_graph(flatc_binary(tmp, future, gnew, "graph13_new"))),
               NOT_SUPPORTED, ["1.%d" % GRAPH_NEXT_MINOR, "newer cdnn"])
    g20 = dict(gjson)
    g20["format_major"], g20["format_minor"] = 2, 0
    g20["sha256"] = [0] * 32
    expect("graph format 2.0 (flatc, sealed) -> NOT_SUPPORTED naming 2.0 and "
           "1.x", load(sealed_graph(flatc_binary(tmp, gschema, g20, "graph20"))),
           NOT_SUPPORTED, ["2.0", "1.x"])
    del g20["sha256"]
    expect("graph format 2.0 (flatc) without a SHA-256 -> CORRUPT_DATA (a "
           "digest-less graph claiming more than 1.0 is damaged)",
           load(flatc_binary(tmp, gschema, g20, "graph20_bare")), CORRUPT_DATA,
           ["the graph is damaged", "SHA-256"])
    g10 = {k: v for k, v in gjson.items() if k not in ("sha256", "format_minor")}
    st, msg, k = load(flatc_binary(tmp, gschema, g10, "graph10"))
    report("graph format 1.0 (flatc, no digest) loads with the same content "
           "key", st == SUCCESS and k == c.key,
           "status %s: %s" % (STATUS_NAMES.get(st, st), msg))
    g11 = {k: v for k, v in gjson.items() if k != "sha256"}
    expect("graph format 1.1 (flatc) without a SHA-256 -> CORRUPT_DATA",
           load(flatc_binary(tmp, gschema, g11, "graph11_bare")), CORRUPT_DATA,
           ["the graph is damaged", "always carries a SHA-256"])


def decoding_cases(c):
    """cdnn's bytes read by clients no one here wrote."""
    api, tmp, schema_dir, fields = c.api, c.tmp, c.schema_dir, c.fields
    plan, body, both, gjson = c.plan, c.body, c.both, c.gjson
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
           mine == theirs and info["plan"] == (PLAN_MAJOR, PLAN_MINOR) and
           info["plan_verified"] == 1 and info["engine_name"] == c.engine and
           info["content_key"] == c.key,
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
    # The payload's graph comes from the same encoder: 1.1, sealed.  Its
    # bytes: CpuPayload field 4 (schema/cpu_payload.fbs), read with
    # python3-flatbuffers' table reader.
    from flatbuffers.table import Table
    pay = bytearray(fields["payload"])
    pt_ = Table(pay, struct.unpack_from("<I", pay, 0)[0])
    o = pt_.Offset(4 + 2 * 4)
    pgb = bytes(pay[pt_.Vector(o):pt_.Vector(o) + pt_.VectorLen(o)]) if o else b""
    pgd = read_graph(pgb) if pgb else {}
    report("the CPU payload's graph is format 1.1 with a SHA-256 that "
           "python recomputes",
           (pgd.get("format_major"), pgd.get("format_minor")) == (1, 1) and
           graph_digest_at(pgb) is not None and
           pgd.get("sha256") == graph_seal(pgb) and
           bytes(pg_json.get("sha256", [])) == pgd.get("sha256"),
           "payload graph %d bytes, format %s.%s" % (
               len(pgb), pgd.get("format_major"), pgd.get("format_minor")))
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
    report("flatc decodes cdnn's container: format 1.1, its SHA-256, graph "
           "and plan",
           cj.get("format_major", 0) == CONTAINER_MAJOR and
           cj.get("format_minor", 0) == CONTAINER_MINOR and
           bytes(cj.get("sha256", [])) == container_seal(1, 1, c.graph, plan)
           and cg == gjson and cp == pj and
           cinfo["contents"] == BLOB_GRAPH | BLOB_PLAN and
           cinfo["container"] == (CONTAINER_MAJOR, CONTAINER_MINOR) and
           cinfo["graph"] == (GRAPH_MAJOR, GRAPH_MINOR),
           "container %d.%d, graph equal %s, plan equal %s, inspect %s" % (
               cj.get("format_major", 0), cj.get("format_minor", 0),
               cg == gjson, cp == pj, cinfo))
    report("flatc decodes cdnn's graph: format 1.1, name, tensors, nodes, "
           "its SHA-256",
           gjson.get("format_major", 0) == GRAPH_MAJOR and
           gjson.get("format_minor", 0) == GRAPH_MINOR and
           len(gjson["tensors"]) == 8 and len(gjson["nodes"]) == 4 and
           gjson.get("name") == "pointwise_chain" and
           len(gjson.get("sha256", [])) == 32,
           "graph %s" % json.dumps(gjson)[:300])


if __name__ == "__main__":
    main()
