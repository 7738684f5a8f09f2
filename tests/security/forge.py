#!/usr/bin/python3
"""Forge cdnn plans and containers that are re-sealed correctly (issue 8).

usage: forge.py BASE_DIR OUT_DIR ENGINES_JSON [--workspace MAP.json]

  BASE_DIR      plans (*.cdp) and graph+plan containers (*.cdgp) saved by
                cdnn (CPU engines: the payload is a CDCP buffer)
  OUT_DIR       receives one file per forgery and manifest.json
  ENGINES_JSON  the output of `cdnn engines --json --knobs`: which knobs each
                engine declares and their ranges, so that "out of range" and
                "valid" knob values are chosen from the engine's own limits
  MAP.json      a second round: {forged plan file: workspace bytes}; only
                those forgeries are written again, each with that workspace
                recorded (FILE.ws.cdp, category + ".workspace_reforged"), as
                a forger would after a refusal that said "its payload needs
                N": so that a self-consistent forgery refused only for its
                workspace is loaded and run after all

Run with Debian's /usr/bin/python3 (python3-flatbuffers).  Nothing here
loads libcdnn: the forgeries are written by python3-flatbuffers' Builder
and read back with its Table class, so the test does not trust cdnn's own
encoder to write the bytes it then refuses, and the script runs unchanged
beside a sanitized build.

A digest proves bytes intact, not honest.  Every forgery here is sealed as
cdnn seals (docs/FORMATS.md sections 2-5, and the 1.1 formats of the issue 8
notes), with a canonical envelope, so that a loader can only refuse it for
what the edit changed:

  plan       body_sha256 = SHA-256("CDPL" || major u16 || minor u16 || body)
  container  1.0: graph_sha256 = SHA-256(graph part)
             1.1: the same, plus sha256 = SHA-256("CDGP" || major u16 ||
                  minor u16 || len(graph) u64 || graph || len(plan) u64 || plan)
  graph      1.1: field 8 sha256 = SHA-256(the whole graph buffer with those
                  32 bytes zeroed); 1.0 graphs have none.  The graph inside a
                  CPU payload and a container's graph part are both graphs.

Each version is re-sealed as it is found, so the script works on artifacts
written before and after the 1.1 formats.

Self-check (fails the run loudly, exit 1): before forging anything from a
base artifact, every layer is decoded and re-encoded WITHOUT edits and must
give cdnn's bytes back exactly (plan envelope, plan body, CPU payload, the
graph in the payload, container envelope, the container's graph part), the
digests must verify, and the tensor table and content key this script
derives from the payload's graph must equal what cdnn recorded.  Otherwise
a refusal later could be the layout's or the seal's, not the edit's.

The manifest (OUT_DIR/manifest.json) lists every forgery: file, kind (plan
or container), base, engine, category, expect ("CORRUPT_DATA", "LOADS" or
"LOADS_OR_REFUSED"), message (a substring the refusal must contain, or ""),
and what the edit did.  tests/security/run_forgeries.c loads each one and
checks it; LOADS and LOADS_OR_REFUSED plans are executed with buffers of
exactly the sizes the loaded plan declares, under ASan in `make test-asan`.
"""
import copy
import hashlib
import json
import math
import os
import struct
import sys

try:
    import flatbuffers
    from flatbuffers import encode, packer
    from flatbuffers import number_types as N
    from flatbuffers.table import Table
except ImportError as e:
    print("SKIP: %s (apt-get install python3-flatbuffers; run with "
          "/usr/bin/python3)" % e)
    sys.exit(77)

# What a refusal for a part disagreeing with another part must say (issue 8
# notes: "every consistency refusal is CORRUPT_DATA with the word
# 'inconsistent'").
INCONSISTENT = "inconsistent"
# A container whose graph is not the graph its plan records (save.c,
# check_against_graph).  This check runs before the plan's payload is
# restored, so it is what refuses any container whose plan records another
# content key than its graph part's.
CONTAINER_MISMATCH = "content keys differ"

# graph.fbs DataType values and element sizes (src/core/names.c).
F32, F16 = 1, 2
TYPE_SIZE = {1: 4, 2: 2, 3: 2, 4: 8, 5: 4, 6: 8, 7: 1, 8: 1, 9: 1}
# Op and NodeAttr union values (graph.fbs).
ATTR_CONV, ATTR_POINTWISE, ATTR_REDUCTION, ATTR_NORM, ATTR_SDPA = 1, 2, 3, 4, 5
# Format 1.2 and 1.3 attribute kinds (graph.fbs NodeAttr; src/graph/ops.h).
(ATTR_AXIS, ATTR_TRANSPOSE, ATTR_SLICE, ATTR_PAD, ATTR_TOPK, ATTR_POOLING,
 ATTR_RESIZE, ATTR_MOMENTUM) = range(6, 14)
OP_ATTR = {0: ATTR_CONV, 1: ATTR_CONV, 2: ATTR_CONV, 3: 0, 4: ATTR_POINTWISE,
           5: ATTR_REDUCTION, 6: ATTR_NORM, 7: ATTR_NORM, 8: ATTR_NORM,
           9: ATTR_SDPA,
           # 1.2: Softmax, LogSoftmax, Reshape, Transpose, Concat, Slice,
           # ArgMax, ArgMin, Pad
           10: ATTR_AXIS, 11: ATTR_AXIS, 12: 0, 13: ATTR_TRANSPOSE, 14: ATTR_AXIS,
           15: ATTR_SLICE, 16: ATTR_AXIS, 17: ATTR_AXIS, 18: ATTR_PAD,
           # 1.3: SdpaBwd, Gather, GatherElements, TopK, PoolingFwd, PoolingBwd,
           # Resize, BatchnormTrain, BatchnormRunningStats, BatchnormBwd,
           # LayernormBwd, RmsnormBwd
           19: ATTR_SDPA, 20: ATTR_AXIS, 21: ATTR_AXIS, 22: ATTR_TOPK,
           23: ATTR_POOLING, 24: ATTR_POOLING, 25: ATTR_RESIZE, 26: ATTR_NORM,
           27: ATTR_MOMENTUM, 28: 0, 29: 0, 30: 0}
OP_NAMES = ("ConvFwd ConvBwdData ConvBwdFilter Matmul Pointwise Reduction "
            "BatchnormInference Layernorm Rmsnorm SdpaFwd Softmax LogSoftmax Reshape "
            "Transpose Concat Slice ArgMax ArgMin Pad SdpaBwd Gather GatherElements "
            "TopK PoolingFwd PoolingBwd Resize BatchnormTrain BatchnormRunningStats "
            "BatchnormBwd LayernormBwd RmsnormBwd").split()
# PoolingAttr's per-dim vectors and their defaults (an absent vector is its
# default in every dim), in the content key's order.
POOL_VECTORS = (("window", 1), ("stride", 1), ("dilation", 1), ("pre_padding", 0),
                ("post_padding", 0))
MAX_INPUTS, MAX_OUTPUTS = 5, 3  # CDNN_NODE_MAX_INPUTS / _OUTPUTS
CONTENT_KEY_TAG = b"cdnn content key v1\0"  # sizeof includes the NUL


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def bits_f64(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


class ForgeError(Exception):
    pass


class SelfCheckError(Exception):
    pass


def hexdiff(a, b):
    if len(a) != len(b):
        return "sizes %d and %d" % (len(a), len(b))
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "first difference at byte %d (0x%02x vs 0x%02x)" % (k, x, y)
    return "identical"


def same(what, rebuilt, original):
    """The self-check: a rebuild without edits must be cdnn's bytes."""
    if rebuilt != original:
        raise SelfCheckError("rebuilding %s without edits does not give cdnn's "
                             "bytes: %s" % (what, hexdiff(rebuilt, original)))


# ---------------------------------------------------------------------------
# Reading: python3-flatbuffers' Table, fields by schema id
# ---------------------------------------------------------------------------

class Obj:
    """A table in a FlatBuffers buffer, read by field id (the vtable slot of
    field i is at 4 + 2 i).  Reading by id rather than through generated
    classes keeps the script independent of which schema minor is checked
    out: a field this script does not know is simply not read."""

    def __init__(self, buf, pos):
        self.buf = buf
        self.t = Table(buf, pos)

    @classmethod
    def root(cls, buf, ident=None):
        if len(buf) < 8 or (ident is not None and buf[4:8] != ident):
            raise ForgeError("expected identifier %r, found %r" % (ident, buf[4:8]))
        return cls(buf, encode.Get(packer.uoffset, buf, 0))

    def _o(self, fid):
        return self.t.Offset(4 + 2 * fid)

    def has(self, fid):
        return self._o(fid) != 0

    def scalar(self, fid, flags, default):
        o = self._o(fid)
        return self.t.Get(flags, self.t.Pos + o) if o else default

    def u8(self, fid, d=0): return self.scalar(fid, N.Uint8Flags, d)
    def i8(self, fid, d=0): return self.scalar(fid, N.Int8Flags, d)
    def u16(self, fid, d=0): return self.scalar(fid, N.Uint16Flags, d)
    def i32(self, fid, d=0): return self.scalar(fid, N.Int32Flags, d)
    def i64(self, fid, d=0): return self.scalar(fid, N.Int64Flags, d)
    def u64(self, fid, d=0): return self.scalar(fid, N.Uint64Flags, d)
    def flag(self, fid, d=False): return bool(self.scalar(fid, N.BoolFlags, d))

    def f64bits(self, fid, default):
        o = self._o(fid)
        if not o:
            return f64_bits(default)
        return struct.unpack_from("<Q", self.buf, self.t.Pos + o)[0]

    def string(self, fid):
        o = self._o(fid)
        return self.t.String(self.t.Pos + o).decode() if o else None

    def _vector(self, fid):
        o = self._o(fid)
        return (self.t.Vector(o), self.t.VectorLen(o)) if o else (None, 0)

    def raw(self, fid, elem):
        """A vector's element bytes, or None when absent."""
        pos, n = self._vector(fid)
        return None if pos is None else bytes(self.buf[pos:pos + n * elem])

    def i64s(self, fid):
        pos, n = self._vector(fid)
        return None if pos is None else list(struct.unpack_from("<%dq" % n, self.buf, pos))

    def tables(self, fid):
        pos, n = self._vector(fid)
        if pos is None:
            return None
        return [Obj(self.buf, self.t.Indirect(pos + 4 * i)) for i in range(n)]

    def table(self, fid):
        o = self._o(fid)
        return Obj(self.buf, self.t.Indirect(self.t.Pos + o)) if o else None


# ---------------------------------------------------------------------------
# Writing: python3-flatbuffers' Builder, laid out as cdnn's builder lays out
# (sdk/src/flatbuf.c).  The Builder already writes back to front, omits
# scalars equal to their default, trims trailing absent fields from the
# vtable and pads as cdnn does; the differences are handled here:
#   - [ubyte] vectors: cdnn aligns their elements to 8 (a nested buffer keeps
#     its alignment), CreateByteVector to 4: byte_vector() asks for 8;
#   - vtables: the Builder shares identical vtables, cdnn writes one per
#     table: end_table() forgets earlier vtables before each table ends;
#   - doubles: the Builder omits a value == its default, cdnn compares bits
#     (-0.0 survives a 0.0 default): add_f64() compares bits.
# ---------------------------------------------------------------------------

def builder():
    return flatbuffers.Builder(1024)


def byte_vector(b, data):
    b.StartVector(1, len(data), 8)
    b.head -= len(data)
    b.Bytes[b.head:b.head + len(data)] = data
    return b.EndVector()


def struct_vector(b, data, elem, align, n):
    b.StartVector(elem, n, align)
    b.head -= len(data)
    b.Bytes[b.head:b.head + len(data)] = data
    return b.EndVector()


def i64_vector(b, values):
    b.StartVector(8, len(values), 8)
    for v in reversed(values):
        b.PrependInt64(v)
    return b.EndVector()


def ref_vector(b, refs):
    b.StartVector(4, len(refs), 4)
    for r in reversed(refs):
        b.PrependUOffsetTRelative(r)
    return b.EndVector()


def string(b, s):
    return b.CreateString(s) if s is not None else 0


def add(b, slot, prepend, value, default):
    if value != default:
        prepend(value)
        b.Slot(slot)


def add_f64(b, slot, bits, default):
    if bits != f64_bits(default):
        b.PrependFloat64(bits_f64(bits))
        b.Slot(slot)


def add_ref(b, slot, ref):
    if ref:
        b.PrependUOffsetTRelativeSlot(slot, ref, 0)


def end_table(b):
    b.vtables = {}  # cdnn never shares a vtable
    return b.EndObject()


def finish(b, root, ident=None):
    b.Finish(root, file_identifier=ident)
    return bytes(b.Output())


# ---------------------------------------------------------------------------
# Graph (CDGR; graph.fbs; src/format/graph_format.c)
# ---------------------------------------------------------------------------

GRAPH_SHA256_FIELD = 8  # graph format 1.1


def graph_digest_ok(buf, at):
    """at: offset of the 32 digest bytes.  The digest is of the whole buffer
    with those 32 bytes zeroed."""
    zeroed = buf[:at] + bytes(32) + buf[at + 32:]
    return hashlib.sha256(zeroed).digest() == buf[at:at + 32]


def read_ports(o, fid):
    raw = o.raw(fid, 16)
    if raw is None:
        return []
    return [(raw[i], struct.unpack_from("<q", raw, i + 8)[0])
            for i in range(0, len(raw), 16)]


def read_attr(kind, a):
    if kind == ATTR_CONV:
        return {"spatial_dims": a.i32(0, 0), "pre_padding": a.i64s(1),
                "post_padding": a.i64s(2), "stride": a.i64s(3),
                "dilation": a.i64s(4), "groups": a.i64(5, 1)}
    if kind == ATTR_POINTWISE:
        return {"mode": a.i8(0, 0), "f64": [a.f64bits(i + 1, d) for i, d in
                                            enumerate(PW_DEFAULTS)]}
    if kind == ATTR_REDUCTION:
        return {"mode": a.i8(0, 0)}
    if kind == ATTR_NORM:
        return {"epsilon": a.f64bits(0, 0.0)}
    if kind == ATTR_SDPA:
        return {"scale": a.f64bits(0, 0.0), "causal": a.flag(1)}
    if kind == ATTR_AXIS:
        return {"axis": a.i32(0, -1)}
    if kind == ATTR_TRANSPOSE:
        return {"perm": a.i64s(0)}
    if kind == ATTR_SLICE:
        return {"start": a.i64s(0), "step": a.i64s(1)}
    if kind == ATTR_PAD:
        return {"pre": a.i64s(0), "value": a.f64bits(1, 0.0)}
    if kind == ATTR_TOPK:
        return {"axis": a.i32(0, -1), "k": a.i64(1, 1), "largest": a.flag(2, True)}
    if kind == ATTR_POOLING:
        return {"mode": a.i8(0, 0), "spatial_dims": a.i32(1, 0), "window": a.i64s(2),
                "stride": a.i64s(3), "pre_padding": a.i64s(4),
                "post_padding": a.i64s(5), "dilation": a.i64s(6),
                "ceil_mode": a.flag(7), "count_include_pad": a.flag(8)}
    if kind == ATTR_RESIZE:
        return {"mode": a.i8(0, 0), "coordinate": a.i8(1, 0), "nearest": a.i8(2, 0)}
    if kind == ATTR_MOMENTUM:
        return {"momentum": a.f64bits(0, 0.1)}
    raise ForgeError("unknown attribute union type %d" % kind)


# relu_lower_clip, relu_upper_clip, relu_lower_clip_slope, elu_alpha,
# softplus_beta, swish_beta
PW_DEFAULTS = (0.0, math.inf, 0.0, 1.0, 1.0, 1.0)
CONV_VECTORS = (("pre_padding", 0), ("post_padding", 0), ("stride", 1),
                ("dilation", 1))


def read_graph(buf):
    g = Obj.root(buf, b"CDGR")
    graph = {"major": g.u16(0), "minor": g.u16(1), "name": g.string(2),
             "io_type": g.i8(3, F32), "intermediate_type": g.i8(4, F32),
             "compute_type": g.i8(5, F32), "tensors": [], "nodes": [],
             "sha256": None}
    for t in g.tables(6) or []:
        graph["tensors"].append({
            "uid": t.i64(0), "name": t.string(1), "data_type": t.i8(2, 0),
            "dims": t.i64s(3), "strides": t.i64s(4), "is_virtual": t.flag(5),
            "alignment": t.i64(6), "is_scalar": t.flag(7),
            "scalar_value": t.f64bits(8, 0.0)})
    for n in g.tables(7) or []:
        kind = n.u8(4, 0)
        graph["nodes"].append({
            "name": n.string(0), "op": n.i8(1, 0), "inputs": read_ports(n, 2),
            "outputs": read_ports(n, 3), "attr_type": kind,
            "attr": read_attr(kind, n.table(5)) if n.has(5) else None})
    if g.has(GRAPH_SHA256_FIELD):
        pos, count = g._vector(GRAPH_SHA256_FIELD)
        if count != 32:
            raise ForgeError("graph digest of %d bytes" % count)
        if not graph_digest_ok(buf, pos):
            raise SelfCheckError("a graph's own SHA-256 (format %d.%d) does not "
                                 "verify as the zeroed-digest hash of its buffer"
                                 % (graph["major"], graph["minor"]))
        graph["sha256"] = bytes(buf[pos:pos + 32])
    elif graph["minor"] >= 1:
        raise ForgeError("graph format %d.%d without its sha256 field"
                         % (graph["major"], graph["minor"]))
    return graph


def packed_strides(dims):
    strides, s = [0] * len(dims), 1
    for d in range(len(dims) - 1, -1, -1):
        strides[d] = s
        s *= dims[d]
    return strides


def encode_tensor(b, t):
    name = string(b, t["name"])
    dims = i64_vector(b, t["dims"]) if t["dims"] else 0
    # cdnn leaves packed strides out (an absent vector means packed).
    strides = (i64_vector(b, t["strides"]) if t["dims"] and t["strides"] is not None
               and t["strides"] != packed_strides(t["dims"]) else 0)
    b.StartObject(9)
    add(b, 0, b.PrependInt64, t["uid"], 0)
    add_ref(b, 1, name)
    add(b, 2, b.PrependInt8, t["data_type"], 0)
    add_ref(b, 3, dims)
    add_ref(b, 4, strides)
    add(b, 5, b.PrependBool, t["is_virtual"], False)
    add(b, 6, b.PrependInt64, t["alignment"], 0)
    add(b, 7, b.PrependBool, t["is_scalar"], False)
    if t["is_scalar"]:
        add_f64(b, 8, t["scalar_value"], 0.0)
    return end_table(b)


def encode_ports(b, ports):
    if not ports:
        return 0
    data = b"".join(struct.pack("<B7xq", slot, uid) for slot, uid in ports)
    return struct_vector(b, data, 16, 8, len(ports))


def encode_attr(b, kind, a):
    if kind == ATTR_CONV:
        vecs = [i64_vector(b, a[k]) if a[k] is not None and any(v != d for v in a[k])
                else 0 for k, d in CONV_VECTORS]
        b.StartObject(6)
        add(b, 0, b.PrependInt32, a["spatial_dims"], 0)
        for i, ref in enumerate(vecs):
            add_ref(b, 1 + i, ref)
        add(b, 5, b.PrependInt64, a["groups"], 1)
    elif kind == ATTR_POINTWISE:
        b.StartObject(7)
        add(b, 0, b.PrependInt8, a["mode"], 0)
        for i, (bits, d) in enumerate(zip(a["f64"], PW_DEFAULTS)):
            add_f64(b, 1 + i, bits, d)
    elif kind == ATTR_REDUCTION:
        b.StartObject(1)
        add(b, 0, b.PrependInt8, a["mode"], 0)
    elif kind == ATTR_NORM:
        b.StartObject(1)
        add_f64(b, 0, a["epsilon"], 0.0)
    elif kind == ATTR_SDPA:
        b.StartObject(2)
        add_f64(b, 0, a["scale"], 0.0)
        add(b, 1, b.PrependBool, a["causal"], False)
    elif kind == ATTR_AXIS:
        b.StartObject(1)
        add(b, 0, b.PrependInt32, a["axis"], -1)
    elif kind in (ATTR_TRANSPOSE, ATTR_SLICE, ATTR_PAD):
        return encode_rank_attr(b, kind, a)
    elif kind == ATTR_TOPK:
        # cdnn's order (encode_attr): k, axis, largest
        b.StartObject(3)
        add(b, 1, b.PrependInt64, a["k"], 1)
        add(b, 0, b.PrependInt32, a["axis"], -1)
        add(b, 2, b.PrependBool, a["largest"], True)
    elif kind == ATTR_POOLING:
        return encode_pooling(b, a)
    elif kind == ATTR_RESIZE:
        b.StartObject(3)
        for i, k in enumerate(("mode", "coordinate", "nearest")):
            add(b, i, b.PrependInt8, a[k], 0)
    elif kind == ATTR_MOMENTUM:
        b.StartObject(1)
        add_f64(b, 0, a["momentum"], 0.1)
    else:
        raise ForgeError("unknown attribute union type %d" % kind)
    return end_table(b)


def encode_rank_attr(b, kind, a):
    """Transpose, slice and pad: their vectors first, then the table."""
    if kind == ATTR_TRANSPOSE:
        perm = i64_vector(b, a["perm"]) if a["perm"] else 0
        b.StartObject(1)
        add_ref(b, 0, perm)
    elif kind == ATTR_SLICE:
        start = i64_vector(b, a["start"]) if a["start"] else 0
        step = i64_vector(b, a["step"]) if a["step"] else 0
        b.StartObject(2)
        add_ref(b, 0, start)
        add_ref(b, 1, step)
    else:
        pre = i64_vector(b, a["pre"]) if a["pre"] else 0
        b.StartObject(2)
        add_ref(b, 0, pre)
        add_f64(b, 1, a["value"], 0.0)
    return end_table(b)


def encode_pooling(b, a):
    """cdnn's order (encode_pooling): the vectors window, stride,
    pre_padding, post_padding, dilation (each only where given), then
    spatial_dims, the vectors, mode, ceil_mode, count_include_pad."""
    order = (("window", 2), ("stride", 3), ("pre_padding", 4), ("post_padding", 5),
             ("dilation", 6))
    refs = [(slot, i64_vector(b, a[k]) if a[k] is not None else 0) for k, slot in order]
    b.StartObject(9)
    add(b, 1, b.PrependInt32, a["spatial_dims"], 0)
    for slot, ref in refs:
        add_ref(b, slot, ref)
    add(b, 0, b.PrependInt8, a["mode"], 0)
    add(b, 7, b.PrependBool, a["ceil_mode"], False)
    add(b, 8, b.PrependBool, a["count_include_pad"], False)
    return end_table(b)


def encode_node(b, n):
    name = string(b, n["name"])
    inputs = encode_ports(b, n["inputs"])
    outputs = encode_ports(b, n["outputs"])
    attr = encode_attr(b, n["attr_type"], n["attr"]) if n["attr"] is not None else 0
    b.StartObject(6)
    add_ref(b, 0, name)
    add(b, 1, b.PrependInt8, n["op"], 0)
    add_ref(b, 2, inputs)
    add_ref(b, 3, outputs)
    if attr:
        add(b, 4, b.PrependUint8, n["attr_type"], 0)
    add_ref(b, 5, attr)
    return end_table(b)


def encode_graph(graph):
    """cdnn's order (encode_graph): [1.1: the digest vector, first, so that it
    sits at the end of the buffer], name, each tensor, the tensor vector, each
    node, the node vector, the table with fields in id order."""
    b = builder()
    digest = byte_vector(b, bytes(32)) if graph["sha256"] is not None else 0
    name = string(b, graph["name"])
    trefs = [encode_tensor(b, t) for t in graph["tensors"]]
    tensors = ref_vector(b, trefs) if trefs else 0
    nrefs = [encode_node(b, n) for n in graph["nodes"]]
    nodes = ref_vector(b, nrefs) if nrefs else 0
    b.StartObject(9)
    add(b, 0, b.PrependUint16, graph["major"], 0)
    add(b, 1, b.PrependUint16, graph["minor"], 0)
    add_ref(b, 2, name)
    add(b, 3, b.PrependInt8, graph["io_type"], F32)
    add(b, 4, b.PrependInt8, graph["intermediate_type"], F32)
    add(b, 5, b.PrependInt8, graph["compute_type"], F32)
    add_ref(b, 6, tensors)
    add_ref(b, 7, nodes)
    add_ref(b, GRAPH_SHA256_FIELD, digest)
    out = bytearray(finish(b, end_table(b), b"CDGR"))
    if digest:
        # The vector's count is `digest` bytes from the end; its 32 bytes
        # follow.  Hash the buffer with them zeroed (as they are), then patch.
        at = len(out) - digest + 4
        out[at:at + 32] = hashlib.sha256(bytes(out)).digest()
    return bytes(out)


# ---- the graph as cdnn's validated view sees it ---------------------------

def view_type(graph, t):
    if t["data_type"]:
        return t["data_type"]
    return graph["intermediate_type"] if t["is_virtual"] else graph["io_type"]


def view_strides(t):
    return t["strides"] if t["strides"] is not None else packed_strides(t["dims"] or [])


def span_bytes(graph, t):
    last = sum((d - 1) * s for d, s in zip(t["dims"] or [], view_strides(t)))
    return (last + 1) * TYPE_SIZE[view_type(graph, t)]


def tensor_table(graph):
    """What a plan's tensor table must say of the graph it runs
    (src/engine/plan_check.c): the non-virtual, non-scalar tensors in
    declaration order, (uid, alignment, span_bytes, type, is_output)."""
    written = {uid for n in graph["nodes"] for _, uid in n["outputs"]}
    return [(t["uid"], t["alignment"], span_bytes(graph, t), view_type(graph, t),
             1 if t["uid"] in written else 0)
            for t in graph["tensors"] if not t["is_virtual"] and not t["is_scalar"]]


def content_key(graph):
    """cdnn_graph_content_key of a validated graph (src/graph/content_key.c):
    SHA-256 over the tag, the compute type, then each node (in the view's
    order, which for the graph a payload carries is the stored order) with
    its attributes and its ports, each tensor hashed at its first use under
    a number counted in order of first use."""
    h = hashlib.sha256()

    def i64(v):
        h.update(struct.pack("<q", v))

    def f64(bits):
        v = bits_f64(bits)
        if v == 0:
            v = 0.0
        elif math.isnan(v):
            v = float("nan")  # the quiet NaN 0x7ff8000000000000, as C's NAN
        h.update(struct.pack("<d", v))

    index = {t["uid"]: i for i, t in enumerate(graph["tensors"])}
    canonical = {}

    def port(uid):
        if uid is None:
            i64(-1)
            return
        ti = index[uid]
        if ti in canonical:
            i64(canonical[ti])
            return
        canonical[ti] = len(canonical)
        i64(canonical[ti])
        t = graph["tensors"][ti]
        i64(view_type(graph, t))
        dims, strides = t["dims"] or [], view_strides(t)
        i64(len(dims))
        for d, s in zip(dims, strides):
            i64(d)
            i64(s)
        i64(t["alignment"])
        i64(int(t["is_virtual"]))
        i64(int(t["is_scalar"]))
        f64(t["scalar_value"] if t["is_scalar"] else 0)

    h.update(CONTENT_KEY_TAG)
    i64(graph["compute_type"])
    i64(len(graph["nodes"]))
    for n in graph["nodes"]:
        i64(n["op"])
        a, kind = n["attr"], OP_ATTR.get(n["op"], 0)
        if kind == ATTR_CONV:
            i64(a["spatial_dims"])
            for i in range(a["spatial_dims"]):
                for k, d in CONV_VECTORS:
                    i64(a[k][i] if a[k] is not None else d)
            i64(a["groups"])
        elif kind == ATTR_POINTWISE:
            i64(a["mode"])
            for bits in a["f64"]:
                f64(bits)
        elif kind == ATTR_REDUCTION:
            i64(a["mode"])
        elif kind == ATTR_NORM:
            f64(a["epsilon"])
        elif kind == ATTR_SDPA:
            f64(a["scale"])
            i64(1 if a["causal"] else 0)
        elif kind in (ATTR_AXIS, ATTR_TOPK):
            # counted from the front in the validated view
            axis = a["axis"]
            if axis < 0:
                axis += len(tensor_by_uid(graph, dict(n["inputs"])[0])["dims"] or [])
            i64(axis)
            if kind == ATTR_TOPK:
                i64(a["k"])
                i64(1 if a["largest"] else 0)
        elif kind == ATTR_TRANSPOSE:
            perm = a["perm"] or []
            i64(len(perm))
            for v in perm:
                i64(v)
        elif kind == ATTR_SLICE:
            start = a["start"] or []
            i64(len(start))
            for i, v in enumerate(start):
                i64(v)
                # (a forged step vector may be shorter than the starts)
                i64(a["step"][i] if a["step"] and i < len(a["step"]) else 1)
        elif kind == ATTR_PAD:
            pre = a["pre"] or []
            i64(len(pre))
            for v in pre:
                i64(v)
            f64(a["value"])
        elif kind == ATTR_POOLING:
            i64(a["mode"])
            i64(a["spatial_dims"])
            for i in range(a["spatial_dims"]):
                for k, d in POOL_VECTORS:
                    # (a forged spatial_dims may outrun the vectors)
                    i64(a[k][i] if a[k] is not None and i < len(a[k]) else d)
            i64(1 if a["ceil_mode"] else 0)
            i64(1 if a["count_include_pad"] else 0)
        elif kind == ATTR_RESIZE:
            i64(a["mode"])
            i64(a["coordinate"])
            i64(a["nearest"])
        elif kind == ATTR_MOMENTUM:
            f64(a["momentum"])
        ins, outs = dict(n["inputs"]), dict(n["outputs"])
        for s in range(MAX_INPUTS):
            port(ins.get(s))
        for s in range(MAX_OUTPUTS):
            port(outs.get(s))
    return h.digest()


# ---- graph edits --------------------------------------------------------------

def tensor_by_uid(graph, uid):
    for t in graph["tensors"]:
        if t["uid"] == uid:
            return t
    raise ForgeError("no tensor uid %d in the graph" % uid)


def batch_carriers(graph):
    """The tensors that carry the batch: the first node's first input, every
    output of a node that reads a carrier, and every input of such a node
    with the same dims as a carrier it reads (the b of an elementwise op,
    SDPA's k and v).  Weights, biases and broadcast operands are not
    carriers.  For the example graphs, doubling dim 0 of every carrier is a
    valid graph computing on twice the batch."""
    shapes = {t["uid"]: t["dims"] for t in graph["tensors"]}
    first = graph["nodes"][0]["inputs"][0][1]
    carriers, changed = {first}, True
    while changed:
        changed = False
        for n in graph["nodes"]:
            read = [u for _, u in n["inputs"] if u in carriers]
            if not read:
                continue
            like = {tuple(shapes[u] or ()) for u in read}
            new = {u for _, u in n["outputs"]} | {
                u for _, u in n["inputs"] if tuple(shapes[u] or ()) in like}
            if not new <= carriers:
                carriers |= new
                changed = True
    return carriers


def double_batch(graph, carriers):
    """dim 0 doubled for every carrier with dims (a declared graph leaves
    inferred dims absent); explicit strides keep their values, so an outer
    stride still steps over the inner dims."""
    for t in graph["tensors"]:
        if t["uid"] in carriers and t["dims"] and not t["is_scalar"]:
            t["dims"] = [2 * t["dims"][0]] + t["dims"][1:]


def double_outer_stride(graph, uid):
    """Double the stride of the outermost dim longer than 1 (a dim of 1
    spans nothing, whatever its stride): a valid strided tensor whose
    elements span about twice the bytes."""
    t = tensor_by_uid(graph, uid)
    if not t["dims"]:
        raise ForgeError("tensor uid %d has no dims to stride" % uid)
    strides = list(view_strides(t))
    d = next((i for i, n in enumerate(t["dims"]) if n > 1), None)
    if d is None:
        raise ForgeError("tensor uid %d has no dim longer than 1" % uid)
    strides[d] *= 2
    t["strides"] = strides


# ---------------------------------------------------------------------------
# CPU payload (CDCP; cpu_payload.fbs; providers/cpu/payload.c)
# ---------------------------------------------------------------------------

def read_payload(buf):
    p = Obj.root(buf, b"CDCP")
    return {"major": p.u16(0), "minor": p.u16(1), "engine": p.string(2),
            "knobs": [(k.string(0), k.i64(1)) for k in p.tables(3) or []],
            "graph": p.raw(4, 1)}


def encode_payload(p):
    """cdnn's order: each knob (name, table), the knob vector (present even
    when empty), the graph bytes, the engine name, the table."""
    b = builder()
    refs = []
    for name, value in p["knobs"]:
        nref = string(b, name)
        b.StartObject(2)
        add_ref(b, 0, nref)
        add(b, 1, b.PrependInt64, value, 0)
        refs.append(end_table(b))
    knobs = ref_vector(b, refs)
    graph = byte_vector(b, p["graph"])
    engine = string(b, p["engine"])
    b.StartObject(5)
    add(b, 0, b.PrependUint16, p["major"], 0)
    add(b, 1, b.PrependUint16, p["minor"], 0)
    add_ref(b, 2, engine)
    add_ref(b, 3, knobs)
    add_ref(b, 4, graph)
    return finish(b, end_table(b), b"CDCP")


# ---------------------------------------------------------------------------
# Kernel payload (CDKL; kernel_payload.fbs; docs/FORMATS.md section 10;
# sdk/src/kpayload.c): a 64-byte header, then a FlatBuffers body
# ---------------------------------------------------------------------------

KPAYLOAD_HEADER = struct.Struct("<4sHHIHHQQ32s")  # marker .. body SHA-256
KPAYLOAD_KINDS = {"host": 1, "cuda": 2}


def read_kpayload(buf):
    if len(buf) < 64:
        raise ForgeError("a kernel payload shorter than its header")
    (marker, major, minor, hsize, kind, res16, body_size, res64,
     digest) = KPAYLOAD_HEADER.unpack_from(buf, 0)
    body = buf[64:]
    if (marker != b"CDKL" or hsize != 64 or body_size != len(body) or res16 or res64):
        raise SelfCheckError("a kernel payload header that is not cdnn's: %r"
                             % (KPAYLOAD_HEADER.unpack_from(buf, 0),))
    if hashlib.sha256(body).digest() != digest:
        raise SelfCheckError("the kernel payload's body SHA-256 does not verify")
    o = Obj.root(body, b"CDKL")
    return {"header": {"marker": marker, "major": major, "minor": minor, "size": hsize,
                       "kind": kind, "reserved16": res16, "reserved64": res64,
                       "body_size_delta": 0, "digest_flip": False},
            "major": o.u16(0), "minor": o.u16(1), "kind": o.string(2),
            "engine_id": o.u64(3), "engine": o.string(4), "kernel_id": o.string(5),
            "handler": o.string(6), "handler_version": o.i32(7),
            "launch_values": o.i64s(8), "target": o.string(9), "symbol": o.string(10),
            "sha256": o.raw(11, 1), "signature": o.string(12), "code": o.raw(13, 1),
            "provider_version": o.string(14), "graph": o.raw(15, 1),
            "metadata": [(kv.string(0), kv.string(1)) for kv in o.tables(16) or []],
            "metadata_present": o.has(16),
            "pack_name": o.string(17), "pack_version": o.string(18)}


def encode_kpayload(p):
    """cdnn's order (sdk_kpayload_encode): the metadata (each entry's key and
    value strings, then its table; the vector), the graph, code and SHA-256
    byte vectors, the launch values, the ten strings, then the root's fields
    in id order; sealed by a header whose fields p["header"] may forge."""
    b = builder()
    refs = []
    for key, value in p["metadata"]:
        k, v = string(b, key), string(b, value)
        b.StartObject(2)
        add_ref(b, 0, k)
        add_ref(b, 1, v)
        refs.append(end_table(b))
    metadata = ref_vector(b, refs) if (refs or p["metadata_present"]) else 0
    graph = byte_vector(b, p["graph"])
    code = byte_vector(b, p["code"])
    sha = byte_vector(b, p["sha256"])
    launch = i64_vector(b, p["launch_values"])
    strs = {f: string(b, p[f]) for f in (
        "kind", "engine", "kernel_id", "handler", "target", "symbol", "signature",
        "provider_version", "pack_name", "pack_version")}
    b.StartObject(19)
    add(b, 0, b.PrependUint16, p["major"], 0)
    add(b, 1, b.PrependUint16, p["minor"], 0)
    add_ref(b, 2, strs["kind"])
    add(b, 3, b.PrependUint64, p["engine_id"], 0)
    add_ref(b, 4, strs["engine"])
    add_ref(b, 5, strs["kernel_id"])
    add_ref(b, 6, strs["handler"])
    add(b, 7, b.PrependInt32, p["handler_version"], 0)
    add_ref(b, 8, launch)
    add_ref(b, 9, strs["target"])
    add_ref(b, 10, strs["symbol"])
    add_ref(b, 11, sha)
    add_ref(b, 12, strs["signature"])
    add_ref(b, 13, code)
    add_ref(b, 14, strs["provider_version"])
    add_ref(b, 15, graph)
    add_ref(b, 16, metadata)
    add_ref(b, 17, strs["pack_name"])
    add_ref(b, 18, strs["pack_version"])
    body = finish(b, end_table(b), b"CDKL")
    h = p["header"]
    digest = bytearray(hashlib.sha256(body).digest())
    if h["digest_flip"]:
        digest[0] ^= 1
    header = KPAYLOAD_HEADER.pack(h["marker"], h["major"], h["minor"], h["size"], h["kind"],
                                  h["reserved16"], len(body) + h["body_size_delta"],
                                  h["reserved64"], bytes(digest))
    return header + body


def fnv1a64(name):
    """An engine's id (docs/FORMATS.md section 3)."""
    h = 0xcbf29ce484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h


# ---------------------------------------------------------------------------
# Plan (CDPL; plan.fbs; src/format/plan_format.c)
# ---------------------------------------------------------------------------

PLAN_TENSOR = struct.Struct("<qqQbB6x")  # uid, alignment, span, type, is_output


def read_body(buf):
    o = Obj.root(buf)
    raw = o.raw(6, PLAN_TENSOR.size) or b""
    return {"engine_id": o.u64(0), "engine_name": o.string(1),
            "provider_name": o.string(2), "provider_version": o.string(3),
            "device_kind": o.i8(4), "device_arch": o.i32(5),
            "tensors": [PLAN_TENSOR.unpack_from(raw, i)
                        for i in range(0, len(raw), PLAN_TENSOR.size)],
            "workspace_size": o.u64(7), "payload_major": o.u16(8),
            "payload_minor": o.u16(9), "payload": o.raw(10, 1),
            "content_key": o.raw(11, 1)}


def encode_body(f):
    """cdnn's order (encode_body): content key, payload, tensors, provider
    version, provider name, engine name, then the fields in id order; no
    identifier."""
    b = builder()
    key = byte_vector(b, f["content_key"])
    payload = byte_vector(b, f["payload"])
    data = b"".join(PLAN_TENSOR.pack(*t) for t in f["tensors"])
    tensors = struct_vector(b, data, PLAN_TENSOR.size, 8, len(f["tensors"]))
    version = string(b, f["provider_version"])
    provider = string(b, f["provider_name"])
    engine = string(b, f["engine_name"])
    b.StartObject(12)
    add(b, 0, b.PrependUint64, f["engine_id"], 0)
    add_ref(b, 1, engine)
    add_ref(b, 2, provider)
    add_ref(b, 3, version)
    add(b, 4, b.PrependInt8, f["device_kind"], 0)
    add(b, 5, b.PrependInt32, f["device_arch"], 0)
    add_ref(b, 6, tensors)
    add(b, 7, b.PrependUint64, f["workspace_size"], 0)
    add(b, 8, b.PrependUint16, f["payload_major"], 0)
    add(b, 9, b.PrependUint16, f["payload_minor"], 0)
    add_ref(b, 10, payload)
    add_ref(b, 11, key)
    return finish(b, end_table(b))


def seal_plan(major, minor, body):
    return hashlib.sha256(b"CDPL" + struct.pack("<HH", major, minor) + body).digest()


def read_plan(buf):
    p = Obj.root(buf, b"CDPL")
    return {"major": p.u16(0), "minor": p.u16(1), "body": p.raw(2, 1),
            "digest": p.raw(3, 1)}


def encode_plan(major, minor, body):
    """The envelope, sealed: digest vector, body vector, then major, minor,
    body, digest; identifier CDPL."""
    b = builder()
    digest = byte_vector(b, seal_plan(major, minor, body))
    body_ref = byte_vector(b, body)
    b.StartObject(4)
    add(b, 0, b.PrependUint16, major, 0)
    add(b, 1, b.PrependUint16, minor, 0)
    add_ref(b, 2, body_ref)
    add_ref(b, 3, digest)
    return finish(b, end_table(b), b"CDPL")


# ---------------------------------------------------------------------------
# Container (CDGP; container.fbs; src/format/container_format.c)
# ---------------------------------------------------------------------------

def seal_container(major, minor, graph, plan):
    plan = plan or b""
    return hashlib.sha256(b"CDGP" + struct.pack("<HH", major, minor) +
                          struct.pack("<Q", len(graph)) + graph +
                          struct.pack("<Q", len(plan)) + plan).digest()


def read_container(buf):
    c = Obj.root(buf, b"CDGP")
    return {"major": c.u16(0), "minor": c.u16(1), "graph": c.raw(2, 1),
            "plan": c.raw(3, 1), "graph_sha256": c.raw(4, 1),
            "sha256": c.raw(5, 1)}


def encode_container(c, graph, plan):
    """1.0: graph digest, plan, graph vectors, then fields 0-4.  1.1 (it has
    the whole-container sha256, field 5): that digest's vector first, then
    as 1.0, then fields 0-5.  Both end with identifier CDGP."""
    b = builder()
    whole = (byte_vector(b, seal_container(c["major"], c["minor"], graph, plan))
             if c["sha256"] is not None else 0)
    gdigest = byte_vector(b, hashlib.sha256(graph).digest())
    plan_ref = byte_vector(b, plan) if plan is not None else 0
    graph_ref = byte_vector(b, graph)
    b.StartObject(6)
    add(b, 0, b.PrependUint16, c["major"], 0)
    add(b, 1, b.PrependUint16, c["minor"], 0)
    add_ref(b, 2, graph_ref)
    add_ref(b, 3, plan_ref)
    add_ref(b, 4, gdigest)
    add_ref(b, 5, whole)
    return finish(b, end_table(b), b"CDGP")


# ---------------------------------------------------------------------------
# A decoded plan, every layer checked by a rebuild without edits
# ---------------------------------------------------------------------------

class PlanParts:
    def __init__(self, buf, what):
        self.what = what
        env = read_plan(buf)
        if env["body"] is None or env["digest"] is None:
            raise ForgeError("%s: plan without body or digest" % what)
        if env["digest"] != seal_plan(env["major"], env["minor"], env["body"]):
            raise SelfCheckError("%s: the plan's body_sha256 is not SHA-256(CDPL "
                                 "|| version || body)" % what)
        self.major, self.minor = env["major"], env["minor"]
        same("%s: the plan envelope" % what,
             encode_plan(self.major, self.minor, env["body"]), buf)
        self.body = read_body(env["body"])
        same("%s: the plan body" % what, encode_body(self.body), env["body"])
        engine = self.body["engine_name"]
        if engine.startswith("cpu:"):
            self.read, self.encode = read_payload, encode_payload
        elif engine.startswith("kernels:"):
            self.read, self.encode = read_kpayload, encode_kpayload
        else:
            raise ForgeError("%s: engine %s: only CPU and kernel payloads are forged "
                             "here" % (what, engine))
        self.kernel = engine.startswith("kernels:")
        self.payload = self.read(self.body["payload"])
        same("%s: the %s payload" % (what, "kernel" if self.kernel else "CPU"),
             self.encode(self.payload), self.body["payload"])
        self.graph = read_graph(self.payload["graph"])
        same("%s: the graph in the payload (format %d.%d)" % (
            what, self.graph["major"], self.graph["minor"]),
            encode_graph(self.graph), self.payload["graph"])
        table = tensor_table(self.graph)
        if table != [t[:5] for t in self.body["tensors"]]:
            raise SelfCheckError("%s: the tensor table derived from the payload's "
                                 "graph %s is not the recorded one %s"
                                 % (what, table, self.body["tensors"]))
        if content_key(self.graph) != self.body["content_key"]:
            raise SelfCheckError("%s: the content key computed from the payload's "
                                 "graph is not the recorded one" % what)

    def parts(self):
        """Deep copies to edit: (body, payload, graph)."""
        return (copy.deepcopy(self.body), copy.deepcopy(self.payload),
                copy.deepcopy(self.graph))

    def build(self, body, payload, graph):
        """Re-encode from the innermost part out, re-sealing every layer."""
        payload = dict(payload, graph=encode_graph(graph))
        body = dict(body, payload=self.encode(payload))
        return encode_plan(self.major, self.minor, encode_body(body))


# ---------------------------------------------------------------------------
# The forgeries
# ---------------------------------------------------------------------------

def rederive(body, graph):
    """Make the record agree with the (edited) graph: a self-consistent plan
    for a different computation."""
    body["tensors"] = tensor_table(graph)
    body["content_key"] = content_key(graph)


def first(rows, pred, what):
    for r in rows:
        if pred(r):
            return r
    raise ForgeError("no %s in the tensor table" % what)


def plan_edits(parts, knobs):
    """(category, edit(body, payload, graph), expect, message, description)
    for one base plan.  knobs: {name: (min, max)} the engine declares."""
    table = parts.body["tensors"]
    inp = first(table, lambda t: not t[4], "input")
    out = first(table, lambda t: t[4], "output")
    uids = [t[0] for t in table]
    new_uid = max(uids) + 1000
    carriers = batch_carriers(parts.graph)

    def set_row(row_uid, **kw):
        """Change fields of the table entry for row_uid."""
        def edit(body, payload, graph):
            rows = []
            for t in body["tensors"]:
                t = list(t)
                if t[0] == row_uid:
                    for k, v in kw.items():
                        t[("uid", "alignment", "span", "type", "is_output").index(k)] = v
                rows.append(tuple(t))
            body["tensors"] = rows
        return edit

    def knob_list(*extra):
        def edit(body, payload, graph):
            payload["knobs"] = payload["knobs"] + list(extra)
        return edit

    def knob_set(name, value):
        def edit(body, payload, graph):
            payload["knobs"] = [k for k in payload["knobs"] if k[0] != name] + [
                (name, value)]
        return edit

    def then(*fns):
        def edit(body, payload, graph):
            for fn in fns:
                fn(body, payload, graph)
        return edit

    def drop_last(body, payload, graph):
        body["tensors"] = body["tensors"][:-1]

    def add_row(body, payload, graph):
        body["tensors"] = body["tensors"] + [(new_uid + 1, 0, 64, F32, 0)]

    def zero_key(body, payload, graph):
        body["content_key"] = bytes(32)

    def workspace(fn):
        def edit(body, payload, graph):
            body["workspace_size"] = fn(body["workspace_size"])
        return edit

    def batch(body, payload, graph):
        double_batch(graph, carriers)

    def stride(uid):
        def edit(body, payload, graph):
            double_outer_stride(graph, uid)
        return edit

    def rename(body, payload, graph):
        graph["tensors"][0]["name"] = "forged_name"

    def consistent(body, payload, graph):
        rederive(body, graph)

    bad = "CORRUPT_DATA"
    edits = [
        ("control.unchanged", lambda *a: None, "LOADS", "",
         "every layer re-encoded and re-sealed, nothing changed"),
        ("control.tensor_renamed", rename, "LOADS", "",
         "a tensor of the payload's graph renamed (names are in no key or "
         "table): the payload, body and seal change, the plan stays valid"),
        ("table.span_halved.input",
         set_row(inp[0], span=inp[2] // 2), bad, INCONSISTENT,
         "tensor table: input uid %d span %d -> %d" % (inp[0], inp[2], inp[2] // 2)),
        ("table.span_halved.output",
         set_row(out[0], span=out[2] // 2), bad, INCONSISTENT,
         "tensor table: output uid %d span %d -> %d" % (out[0], out[2], out[2] // 2)),
        ("table.span_2p62", set_row(out[0], span=1 << 62), bad, INCONSISTENT,
         "tensor table: output uid %d span -> 2^62" % out[0]),
        ("table.uid_changed", set_row(inp[0], uid=new_uid), bad, INCONSISTENT,
         "tensor table: uid %d -> %d" % (inp[0], new_uid)),
        ("table.uid_dropped", drop_last, bad, INCONSISTENT,
         "tensor table: last entry (uid %d) dropped" % table[-1][0]),
        ("table.uid_added", add_row, bad, INCONSISTENT,
         "tensor table: entry uid %d (64 bytes, f32, input) added" % (new_uid + 1)),
        ("table.is_output_flipped", set_row(inp[0], is_output=1), bad, INCONSISTENT,
         "tensor table: input uid %d marked as output" % inp[0]),
        ("table.dtype_changed",
         set_row(inp[0], type=F16 if inp[3] != F16 else F32), bad, INCONSISTENT,
         "tensor table: uid %d type %d -> %d" % (inp[0], inp[3],
                                                 F16 if inp[3] != F16 else F32)),
        ("body.content_key_zeroed", zero_key, bad, INCONSISTENT,
         "plan body: graph_content_key -> 32 zero bytes"),
        ("body.workspace_larger", workspace(lambda w: w + 64), bad, "workspace",
         "plan body: workspace_size + 64"),
        ("body.workspace_2p62", workspace(lambda w: 1 << 62), bad, "workspace",
         "plan body: workspace_size -> 2^62"),
        ("payload.stride_doubled.input", stride(inp[0]), bad, INCONSISTENT,
         "payload graph: outer stride of input uid %d doubled, record kept" % inp[0]),
        ("payload.stride_doubled.output", stride(out[0]), bad, INCONSISTENT,
         "payload graph: outer stride of output uid %d doubled, record kept" % out[0]),
        ("payload.dims_changed", batch, bad, INCONSISTENT,
         "payload graph: batch (dim 0 of uids %s) doubled, record kept"
         % sorted(carriers)),
        ("payload.knob_unknown", knob_list(("cpu.no_such_knob", 1)), bad,
         INCONSISTENT, "payload knobs: + cpu.no_such_knob=1 (no engine declares it)"),
        ("payload.knob_global", knob_list(("global.benchmarking", 1)), bad,
         INCONSISTENT, "payload knobs: + global.benchmarking=1 (a build knob)"),
        ("consistent.batch_doubled", then(batch, consistent), "LOADS_OR_REFUSED", "",
         "payload graph batch doubled, tensor table and content key re-derived "
         "to match: a different, self-consistent computation"),
    ]
    # Every tensor of the record in turn: engines size their workspace from
    # some tensors' strides and not others', and a consistent forgery that
    # records the old workspace is refused for that, so each tensor gives
    # the engine another chance to load (and run) a strided variant.
    for t in table:
        edits.append((
            "consistent.stride_doubled@uid%d" % t[0], then(stride(t[0]), consistent),
            "LOADS_OR_REFUSED", "",
            "payload graph: outer stride of uid %d doubled, tensor table and content "
            "key re-derived to match" % t[0]))
    def payload_minor(body, payload, graph):
        payload["minor"] += 1

    def device(kind, arch):
        def edit(body, payload, graph):
            body["device_kind"], body["device_arch"] = kind, arch
        return edit

    def graph_minor(minor):
        def edit(body, payload, graph):
            graph["minor"] = minor
        return edit
    edits.append(("body.device_cuda", device(1, 90), "DEVICE_MISMATCH", "CUDA",
                  "plan body: device kind CUDA, arch 90 (the payload is the same)"))
    if any(n["op"] >= FIRST_FORGED_OP for n in parts.graph["nodes"]):
        # the graph format minor inside the payload: a newer one loads
        # ignoring what this reader does not know, an older one than the
        # ops need is only a label; either way the graph is validated and
        # held to the record
        edits += [
            ("payload.graph_minor_newer", graph_minor(99), "LOADS_OR_REFUSED", "",
             "payload graph: format minor 99"),
            ("payload.graph_minor_one", graph_minor(1), "LOADS_OR_REFUSED", "",
             "payload graph: format minor 1 (older than its ops)"),
        ]

    def body_payload_minor(body, payload, graph):
        body["payload_minor"] += 1
    edits.append(("body.payload_minor_newer", body_payload_minor, "NOT_SUPPORTED",
                  "payload format", "plan body: payload_minor + 1 (newer than the "
                  "provider reads)"))
    if not parts.kernel:
        edits.append(("payload.format_minor_newer", payload_minor, "NOT_SUPPORTED",
                      "newer than this provider reads", "CPU payload: format_minor + 1, "
                      "the body's record of it kept (a newer payload's fields would be "
                      "ignored)"))
    if parts.body["workspace_size"]:
        edits.append(("body.workspace_smaller", workspace(lambda w: w - 1), bad,
                      "workspace", "plan body: workspace_size - 1 (the engine would "
                      "use a byte past the caller's workspace)"))
    if knobs:
        # One declared knob is enough to forge with: the first by name.
        name = sorted(knobs)[0]
        lo, hi = knobs[name]
        high = 5000 if 5000 > hi else hi + 1
        low = -1 if -1 < lo else lo - 1
        ok1, ok2 = max(lo, min(hi, 1)), max(lo, min(hi, 2))
        edits += [
            ("payload.knob_out_of_range.high", knob_list((name, high)), bad,
             INCONSISTENT, "payload knobs: + %s=%d (declared [%d, %d])"
             % (name, high, lo, hi)),
            ("payload.knob_out_of_range.low", knob_list((name, low)), bad,
             INCONSISTENT, "payload knobs: + %s=%d (declared [%d, %d])"
             % (name, low, lo, hi)),
            ("payload.knob_duplicate", knob_list((name, ok1), (name, ok2)), bad,
             INCONSISTENT, "payload knobs: + %s=%d and %s=%d" % (name, ok1, name, ok2)),
            # (replacing the knob where the build already set it, as a
            # benchmarking build does with the variant it chose)
            ("control.knob_valid", knob_set(name, ok1), "LOADS", "",
             "payload knobs: + %s=%d, inside [%d, %d]" % (name, ok1, lo, hi)),
        ]
    if parts.body["engine_name"] in NEW_ENGINES:
        # their workspace may depend on the thread count (per-thread
        # buffers): another thread count may be refused for the recorded
        # workspace (test_forgeries_ops.sh forges it again with the
        # workspace the refusal names)
        edits = [(c, f, "LOADS_OR_REFUSED", m, d) if c == "control.knob_valid"
                 else (c, f, x, m, d) for c, f, x, m, d in edits]
    if any(n["op"] >= FIRST_FORGED_OP for n in parts.graph["nodes"]):
        # batch_carriers does not know which operands of the 1.3 ops carry
        # the batch (gather's indices, a pooling backward's dy, a norm
        # backward's statistics), so a batch-doubled graph may be refused by
        # validation before the record is compared: any refusal will do.
        # So may the engine, for a layout it does not take (cpu:copy's
        # reshape between strided layouts).
        edits = [(c, f, "REFUSED", "", d) if c == "payload.dims_changed" or
                 c.startswith("payload.stride_doubled") and parts.body[
                     "engine_name"].startswith("cpu:")
                 else (c, f, x, m, d) for c, f, x, m, d in edits]
    return edits


# ---- the 1.3 ops (cpu:index, cpu:pool, cpu:resize, cpu:norm_train,
# cpu:sdpa_bwd): every attribute and shape an engine indexes with -----------
#
# The CPU payload carries the engine's name, its knobs and the graph: the
# graph's node attributes and tensor shapes, strides and types are what
# decide how far an engine indexes.  Each edit below changes them and
# then, as a cooperating forger would, re-derives the tensor table and the
# content key from the edited graph, so that nothing but the edit itself
# can refuse the plan: what must refuse it is the graph's own validation
# (INVALID_GRAPH naming the node, the port and why), the graph loader's
# range checks (CORRUPT_DATA) or the engine (NOT_SUPPORTED), before the
# plan exists.  An edit that still describes a valid computation is
# LOADS_OR_REFUSED, and if it loads it is run with exact-size buffers.

# Op numbers (graph.fbs Op) of the ops forged here.
OP_SDPA_BWD, OP_GATHER, OP_GATHER_ELEMENTS, OP_TOPK = 19, 20, 21, 22
OP_POOLING_FWD, OP_POOLING_BWD, OP_RESIZE = 23, 24, 25
OP_BN_TRAIN, OP_BN_RUNNING, OP_BN_BWD, OP_LN_BWD, OP_RMS_BWD = 26, 27, 28, 29, 30
OP_ARGMAX, OP_ARGMIN = 16, 17
OP_SOFTMAX, OP_LOG_SOFTMAX, OP_RESHAPE, OP_TRANSPOSE, OP_CONCAT, OP_SLICE = range(10, 16)
OP_PAD = 18
# Graphs with an op from here on (the 1.2 and 1.3 ops) get the forgeries
# below; the older ops' graphs are test_forgeries.sh's.
FIRST_FORGED_OP = OP_SOFTMAX
I32, I64, I8, F64 = 5, 6, 7, 4
INVALID = "INVALID_GRAPH"
# The engines the 1.3 ops brought, and one that takes none of their graphs.
NEW_ENGINES = ("cpu:index", "cpu:pool", "cpu:resize", "cpu:norm_train", "cpu:sdpa_bwd",
               "cpu:softmax", "cpu:copy")


def reshape(t, dims):
    """New dims, packed strides (the old ones may not fit the new dims)."""
    t["dims"] = list(dims)
    t["strides"] = None


def port_uid(n, slot, outputs=False):
    return dict(n["outputs"] if outputs else n["inputs"]).get(slot)


def op_edits(parts):
    """(category, edit, expect, message, description) for every 1.3 node of
    the payload's graph; each edit re-derives the table and the key."""
    out = []
    graph = parts.graph
    for ni, node in enumerate(graph["nodes"]):
        op = node["op"]
        for name, fn, expect, msg, desc in node_edits(graph, ni, node):
            if len(graph["nodes"]) > 1 and expect == INVALID:
                # a tensor edited for this node may be refused at another
                # node that shares it first
                expect, msg = "REFUSED", ""
            def edit(body, payload, g, fn=fn, ni=ni):
                fn(g, g["nodes"][ni])
                rederive(body, g)
            out.append(("op.%s.%s" % (OP_NAMES[op], name), edit, expect, msg,
                        "node %d (%s): %s; tensor table and content key re-derived"
                        % (ni, OP_NAMES[op], desc)))
    # Ports that alias, and tensors that stop being memory the caller
    # gives: the engine would write where it reads, or look for a buffer
    # the tensor table does not list.
    node = graph["nodes"][0]
    name = OP_NAMES[node["op"]]

    def port_edit(fn):
        def edit(body, payload, g):
            fn(g, g["nodes"][0])
            rederive(body, g)
        return edit

    def alias_out_in(g, n):
        n["outputs"] = [(s, port_uid(n, 0) if s == 0 else u) for s, u in n["outputs"]]

    def alias_outs(g, n):
        n["outputs"] = [(s, port_uid(n, 0, True) if s == 1 else u) for s, u in n["outputs"]]

    def flag(slot, key, outputs):
        return lambda g, n: tensor_by_uid(g, port_uid(n, slot, outputs)).update({key: True})
    out += [
        ("op.%s.output_is_input" % name, port_edit(alias_out_in), "REFUSED", "",
         "output 0 -> the uid of input 0 (written in place)"),
        ("op.%s.output_virtual" % name, port_edit(flag(0, "is_virtual", True)),
         "REFUSED", "", "output 0 virtual (no buffer in the table)"),
        ("op.%s.input_virtual" % name, port_edit(flag(0, "is_virtual", False)),
         "REFUSED", "", "input 0 virtual (no node makes it)"),
        ("op.%s.input_scalar" % name, port_edit(flag(0, "is_scalar", False)),
         "REFUSED", "", "input 0 a scalar (a value, no buffer)"),
    ]
    if len(node["outputs"]) > 1:
        out.append(("op.%s.outputs_alias" % name, port_edit(alias_outs), "REFUSED", "",
                    "output 1 -> the uid of output 0"))
    # Inputs broadcast along a dim (stride 0, which only a tensor no node
    # writes may have): the input then spans fewer bytes than its dims
    # suggest, and an engine that walks it as if packed reads past it.
    written = {u for n in graph["nodes"] for _, u in n["outputs"]}
    for t in graph["tensors"]:
        if t["uid"] in written or t["is_virtual"] or t["is_scalar"] or not t["dims"]:
            continue
        for where, d in (("outer", next((i for i, n in enumerate(t["dims"]) if n > 1),
                                        None)),
                         ("last", len(t["dims"]) - 1 if t["dims"][-1] > 1 else None)):
            if d is None:
                continue

            def edit(body, payload, g, uid=t["uid"], d=d):
                u = tensor_by_uid(g, uid)
                u["strides"] = list(view_strides(u))
                u["strides"][d] = 0
                rederive(body, g)
            out.append(("consistent.broadcast_%s@uid%d" % (where, t["uid"]), edit,
                        "LOADS_OR_REFUSED", "", "input uid %d: stride 0 in dim %d (the "
                        "%s dim longer than 1), table and key re-derived"
                        % (t["uid"], d, where)))
    return out


def node_edits(graph, ni, node):
    op = node["op"]
    dims = {t["uid"]: t["dims"] for t in graph["tensors"]}

    def T(g, uid):
        return tensor_by_uid(g, uid)

    def attr(**kw):
        return lambda g, n: n["attr"].update(kw)

    def set_type(slot, dtype, outputs=False):
        return lambda g, n: T(g, port_uid(n, slot, outputs)).update(data_type=dtype)

    def set_dims(slot, fn, outputs=False):
        return lambda g, n: reshape(T(g, port_uid(n, slot, outputs)),
                                    fn(list(T(g, port_uid(n, slot, outputs))["dims"])))

    def then(*fns):
        def edit(g, n):
            for f in fns:
                f(g, n)
        return edit

    def bump(d, by=1):
        return lambda v: v[:d] + [v[d] + by] + v[d + 1:]

    e = []
    x = dims[port_uid(node, 0)]
    rank = len(x)
    if op in (OP_TOPK, OP_GATHER, OP_GATHER_ELEMENTS, OP_ARGMAX, OP_ARGMIN, OP_SOFTMAX,
              OP_LOG_SOFTMAX, OP_CONCAT):
        a = node["attr"]["axis"]
        ax = a + rank if a < 0 else a
        e += [
            ("axis_past_rank", attr(axis=rank), INVALID, "has no dim at the axis",
             "axis -> %d (x has rank %d)" % (rank, rank)),
            ("axis_before_front", attr(axis=-rank - 1), INVALID,
             "fewer dims than the negative axis", "axis -> %d" % (-rank - 1)),
            ("axis_max", attr(axis=127), "CORRUPT_DATA", "axis 127",
             "axis -> 127 (past any rank)"),
            ("axis_min", attr(axis=-(1 << 31)), "CORRUPT_DATA", "axis",
             "axis -> INT32_MIN"),
        ]
        other = 0 if ax != 0 else rank - 1
        if x[other] != x[ax]:
            # gather-elements' y is the indices' shape, softmax's x's,
            # whatever the axis
            e.append(("axis_other_outputs_kept", attr(axis=other),
                      *(("LOADS_OR_REFUSED", "") if op in (OP_GATHER_ELEMENTS, OP_SOFTMAX,
                                                          OP_LOG_SOFTMAX)
                        else (INVALID, "shape mismatch")),
                      "axis %d -> %d, the outputs' dims kept" % (ax, other)))
    if op == OP_TOPK:
        k = node["attr"]["k"]
        n_ax = x[ax]
        e += [
            ("k_past_axis", attr(k=n_ax + 1), INVALID, "fewer than k",
             "k -> %d (the axis has %d), outputs kept" % (n_ax + 1, n_ax)),
            ("k_past_axis_outputs_too", then(attr(k=n_ax + 1),
                                             set_dims(0, lambda v: v[:ax] + [n_ax + 1] + v[ax + 1:], True),
                                             set_dims(1, lambda v: v[:ax] + [n_ax + 1] + v[ax + 1:], True)),
             INVALID, "fewer than k",
             "k -> %d and values and indices given %d at the axis: top-k would write "
             "k sorted elements from an axis of %d" % (n_ax + 1, n_ax + 1, n_ax)),
            ("k_zero", attr(k=0), "CORRUPT_DATA", "k is 0", "k -> 0"),
            ("k_negative", attr(k=-5), "CORRUPT_DATA", "k is -5", "k -> -5"),
            ("k_huge", attr(k=1 << 62), "CORRUPT_DATA", "k is", "k -> 2^62"),
            ("k_smaller_outputs_kept", attr(k=k - 1 if k > 1 else 2), INVALID,
             "shape mismatch", "k -> another value, the outputs' dims kept"),
            ("values_wider", set_dims(0, bump(ax), True), INVALID, "shape mismatch",
             "values: one more element at the axis than k"),
            ("indices_float", set_type(1, F32, True), INVALID, "index type",
             "indices -> f32"),
            ("indices_i8", set_type(1, I8, True), INVALID, "index type",
             "indices -> i8"),
            ("values_f64", set_type(0, F64, True), INVALID, "type other than x",
             "values -> f64 (x is not)"),
            ("consistent.indices_i64", set_type(1, I64 if
                                                 T(graph, port_uid(node, 1, True))["data_type"] != I64 else I32, True),
             "LOADS_OR_REFUSED", "", "indices i32 <-> i64"),
            ("consistent.k_smaller", then(attr(k=max(1, k - 1)),
                                          set_dims(0, lambda v: v[:ax] + [max(1, k - 1)] + v[ax + 1:], True),
                                          set_dims(1, lambda v: v[:ax] + [max(1, k - 1)] + v[ax + 1:], True)),
             "LOADS_OR_REFUSED", "", "k -> k - 1, outputs to match"),
            ("consistent.k_whole_axis", then(attr(k=n_ax),
                                             set_dims(0, lambda v: v[:ax] + [n_ax] + v[ax + 1:], True),
                                             set_dims(1, lambda v: v[:ax] + [n_ax] + v[ax + 1:], True)),
             "LOADS_OR_REFUSED", "", "k -> the whole axis (%d), outputs to match" % n_ax),
            ("consistent.largest_flipped", attr(largest=not node["attr"]["largest"]),
             "LOADS_OR_REFUSED", "", "largest flipped"),
        ]
    if op in (OP_GATHER, OP_GATHER_ELEMENTS):
        e += [
            ("indices_float", set_type(1, F32), INVALID, "index type", "indices -> f32"),
            ("indices_u8", set_type(1, 8), INVALID, "index type", "indices -> u8"),
            ("y_f64", set_type(0, F64, True), INVALID, "type other than x",
             "y -> f64 (x is not)"),
            ("y_wider", set_dims(0, bump(0), True), INVALID, "shape mismatch",
             "y: dim 0 one larger"),
            ("indices_longer_y_kept", set_dims(1, bump(len(dims[port_uid(node, 1)]) - 1)),
             INVALID, "", "indices: last dim one longer, y kept"),
            ("consistent.indices_i32_i64", set_type(1, I32 if
                                                     T(graph, port_uid(node, 1))["data_type"] != I32 else I64),
             "LOADS_OR_REFUSED", "", "indices i32 <-> i64"),
        ]
    if op == OP_GATHER_ELEMENTS:
        off = [d for d in range(rank) if d != ax][0]
        e += [
            ("indices_past_x_off_axis",
             then(set_dims(1, lambda v: v[:off] + [x[off] + 1] + v[off + 1:]),
                  set_dims(0, lambda v: v[:off] + [x[off] + 1] + v[off + 1:], True)),
             INVALID, "more than x's", "indices and y: dim %d -> %d, past x's %d (off "
             "the axis an index addresses x's own coordinate)" % (off, x[off] + 1, x[off])),
            ("indices_rank_lower", then(set_dims(1, lambda v: v[1:]),
                                        set_dims(0, lambda v: v[1:], True)),
             INVALID, "rank", "indices and y: one dim fewer than x"),
        ]
    def axis_past_int32(g, n):
        # 2^31 + 1 elements at the axis, broadcast (stride 0) so that x still
        # spans a few bytes: an i32 index cannot say where the extreme is
        t = T(g, port_uid(n, 0))
        t["strides"] = [0 if d == ax else 1 for d in range(rank)]
        t["dims"] = [(1 << 31) + 1 if d == ax else 1 for d in range(rank)]
        for slot in (0, 1):
            o = port_uid(n, slot, True)
            if o is not None and op == OP_TOPK:
                reshape(T(g, o), [k if d == ax else 1 for d in range(rank)])
            elif o is not None:
                reshape(T(g, o), [1] * rank)
    if op in (OP_ARGMAX, OP_ARGMIN, OP_TOPK):
        iout = port_uid(node, 1 if op == OP_TOPK else 0, True)
        if iout is not None and T(graph, iout)["data_type"] == I32:
            e.append(("i32_axis_past_int32", axis_past_int32, INVALID, "i32",
                      "x: 2^31 + 1 elements at the axis (stride 0), the output "
                      "indices i32: positions past INT32_MAX would wrap"))
    if op in (OP_ARGMAX, OP_ARGMIN):
        e += [
            ("y_float", set_type(0, F32, True), INVALID, "index type", "y -> f32"),
            ("y_wider", set_dims(0, bump(ax), True), INVALID, "shape mismatch",
             "y: 2 at the axis instead of 1"),
        ]
    if op in (OP_TRANSPOSE, OP_SLICE, OP_PAD, OP_CONCAT, OP_RESHAPE):
        e += movement_edits(graph, node, attr, set_type, set_dims, then, bump)
    if op in (OP_POOLING_FWD, OP_POOLING_BWD):
        e += pooling_edits(graph, node, attr, set_type, set_dims, then, bump)
    if op == OP_RESIZE:
        y = dims[port_uid(node, 0, True)]
        e += [
            ("mode_unknown", attr(mode=2), "CORRUPT_DATA", "resize mode", "mode -> 2"),
            ("coordinate_unknown", attr(coordinate=3), "CORRUPT_DATA", "coordinate",
             "coordinate -> 3"),
            ("nearest_unknown", attr(nearest=4), "CORRUPT_DATA", "nearest",
             "nearest -> 4"),
            ("mode_negative", attr(mode=-1), "CORRUPT_DATA", "resize mode", "mode -> -1"),
            ("y_rank_lower", set_dims(0, lambda v: v[1:], True), INVALID, "x's rank",
             "y: one dim fewer than x"),
            ("y_f16", set_type(0, F16, True), INVALID, "type other than x",
             "y -> f16 (x f32)"),
            ("x_i32_linear", then(attr(mode=1), set_type(0, I32), set_type(0, I32, True)),
             INVALID, "floating-point", "x and y -> i32, mode -> linear"),
            ("consistent.y_larger", set_dims(0, lambda v: [d * 3 + 1 for d in v], True),
             "LOADS_OR_REFUSED", "", "y: every dim 3d + 1"),
            ("consistent.y_ones", set_dims(0, lambda v: [1] * len(v), True),
             "LOADS_OR_REFUSED", "", "y: every dim 1 (align-corners divides by m - 1)"),
            ("consistent.x_ones", set_dims(0, lambda v: [1] * len(v)),
             "LOADS_OR_REFUSED", "", "x: every dim 1"),
            ("consistent.y_huge_last", set_dims(0, lambda v: v[:-1] + [1 << 20], True),
             "LOADS_OR_REFUSED", "", "y: last dim 2^20"),
        ]
        for m in (0, 1):
            for c in (0, 1, 2):
                for r in ((0, 1, 2, 3) if m == 0 else (0,)):
                    if (m, c, r) != (node["attr"]["mode"], node["attr"]["coordinate"],
                                     node["attr"]["nearest"]):
                        e.append(("consistent.mode%d_coord%d_nearest%d" % (m, c, r),
                                  attr(mode=m, coordinate=c, nearest=r),
                                  "LOADS_OR_REFUSED", "", "mode %d, coordinate %d, "
                                  "nearest %d" % (m, c, r)))
    if op in (OP_BN_TRAIN, OP_BN_RUNNING, OP_BN_BWD, OP_LN_BWD, OP_RMS_BWD):
        e += norm_edits(graph, node, attr, set_type, set_dims, then, bump)
    if op == OP_SDPA_BWD:
        e += [
            ("scale_negative", attr(scale=f64_bits(-1.0)), INVALID, "scale",
             "scale -> -1"),
            ("scale_nan", attr(scale=f64_bits(math.nan)), INVALID, "scale", "scale -> NaN"),
            ("scale_inf", attr(scale=f64_bits(math.inf)), INVALID, "scale", "scale -> inf"),
            ("dq_longer", set_dims(0, bump(2), True), INVALID, "shape mismatch",
             "dq: one more query row"),
            ("dk_longer", set_dims(1, bump(2), True), INVALID, "shape mismatch",
             "dk: one more key row"),
            ("k_longer_than_v", set_dims(1, bump(2)), INVALID, "shape mismatch",
             "k: one more key row than v"),
            ("o_wider", set_dims(3, bump(3)), INVALID, "shape mismatch",
             "o: a wider head"),
            ("do_shorter", set_dims(4, lambda v: v[:2] + [v[2] - 1] + v[3:]), INVALID,
             "shape mismatch", "do: one query row fewer"),
            ("q_rank3", set_dims(0, lambda v: v[1:]), INVALID, "rank 4",
             "q: rank 3"),
            ("dv_f16", set_type(2, F16, True), "LOADS_OR_REFUSED", "",
             "dv -> f16 (validation lets outputs have their own float type; "
             "cpu:sdpa_bwd takes f32 only)"),
            ("consistent.causal_flipped", attr(causal=not node["attr"]["causal"]),
             "LOADS_OR_REFUSED", "", "causal flipped"),
            ("consistent.scale_zero", attr(scale=f64_bits(0.0)), "LOADS_OR_REFUSED", "",
             "scale -> 0 (the default 1/sqrt(d))"),
            ("consistent.kv_longer", then(*[set_dims(s, bump(2)) for s in (1, 2)],
                                          *[set_dims(s, bump(2), True) for s in (1, 2)]),
             "LOADS_OR_REFUSED", "", "k, v, dk, dv: one more key row"),
        ]
    return e


def pooling_edits(graph, node, attr, set_type, set_dims, then, bump):
    a = node["attr"]
    sd = a["spatial_dims"]
    bwd = node["op"] == OP_POOLING_BWD
    vec = {k: list(a[k]) if a[k] is not None else [d] * sd for k, d in POOL_VECTORS}

    def setv(key, i, v):
        new = list(vec[key])
        new[i] = v
        return attr(**{key: new})

    # The forward's y: output 0 of the forward, input 0 (dy) of the backward.
    def y_dims(fn):
        return set_dims(0, fn, not bwd)
    last = 2 + sd - 1
    n_last = tensor_x(graph, node)[last]

    def same_out(**change):
        """Whether the last spatial dim's output count survives the change
        (then the edit is another valid pooling, else y no longer fits)."""
        v = {k: vec[k][-1] for k in vec}
        before = pool_out_size(v, a["ceil_mode"], n_last)
        v.update(change)
        return pool_out_size(v, a["ceil_mode"], n_last) == before

    def y_kept(**change):
        return ("LOADS_OR_REFUSED", "") if same_out(**change) else (INVALID, "shape")
    e = [
        ("window_larger_y_kept", setv("window", sd - 1, vec["window"][-1] + 2),
         *y_kept(window=vec["window"][-1] + 2), "window[%d] + 2, y kept" % (sd - 1)),
        ("stride_one_y_kept", setv("stride", sd - 1, 1), *y_kept(stride=1),
         "stride[%d] -> 1: more outputs than y holds" % (sd - 1)),
        ("window_zero", setv("window", 0, 0), "CORRUPT_DATA", "window[0] is 0",
         "window[0] -> 0"),
        ("stride_zero", setv("stride", 0, 0), "CORRUPT_DATA", "stride[0] is 0",
         "stride[0] -> 0"),
        ("dilation_zero", setv("dilation", 0, 0), "CORRUPT_DATA", "dilation[0] is 0",
         "dilation[0] -> 0"),
        ("padding_negative", setv("pre_padding", 0, -1), "CORRUPT_DATA",
         "pre_padding[0] is -1", "pre_padding[0] -> -1"),
        ("window_2p20", setv("window", 0, (1 << 20) + 1), "CORRUPT_DATA", "window",
         "window[0] -> 2^20 + 1"),
        ("stride_2p32", setv("stride", 0, (1 << 32) + 2), "CORRUPT_DATA", "stride",
         "stride[0] -> 2^32 + 2 (2 if cut to int32)"),
        ("window_2p32", setv("window", 0, (1 << 32) + 3), "CORRUPT_DATA", "window",
         "window[0] -> 2^32 + 3 (3 if cut to int32)"),
        ("padding_only_windows", then(setv("pre_padding", sd - 1, vec["window"][-1] + 4),
                                      setv("post_padding", sd - 1, vec["window"][-1] + 4),
                                      y_dims(lambda v: v)),
         INVALID, "", "pre and post padding[%d] -> window + 4, y kept" % (sd - 1)),
        ("spatial_dims_3", attr(spatial_dims=3), "CORRUPT_DATA", "spatial_dims",
         "spatial_dims -> 3, vectors of %d" % sd),
        ("spatial_dims_4", attr(spatial_dims=4), "CORRUPT_DATA", "spatial_dims",
         "spatial_dims -> 4"),
        ("spatial_dims_0", attr(spatial_dims=0), "CORRUPT_DATA", "spatial_dims",
         "spatial_dims -> 0"),
        ("mode_unknown", attr(mode=2), "CORRUPT_DATA", "pooling mode", "mode -> 2"),
        ("y_wider", y_dims(bump(last)), INVALID, "shape",
         "the forward's y (%s): one more output in the last spatial dim"
         % ("dy" if bwd else "y")),
        ("y_taller", y_dims(bump(2, 3)), INVALID, "shape",
         "the forward's y: three more outputs in the first spatial dim"),
        ("x_smaller", set_dims(1 if bwd else 0, lambda v: v[:last] + [max(1, v[last] - 3)]),
         INVALID, "", "x: 3 fewer in the last spatial dim, y kept"),
        ("x_rank3", set_dims(1 if bwd else 0, lambda v: v[:2] + v[3:]), INVALID, "rank",
         "x: a spatial dim dropped"),
        ("ceil_mode_flipped", attr(ceil_mode=not a["ceil_mode"]), "LOADS_OR_REFUSED", "",
         "ceil_mode flipped, y kept (valid only where both modes agree)"),
        ("consistent.window_stride_1", then(attr(window=[1] * sd, stride=[1] * sd,
                                                 pre_padding=None, post_padding=None,
                                                 dilation=None),
                                            y_dims(lambda v: v[:2] + list(
                                                tensor_x(graph, node)[2:]))),
         "LOADS_OR_REFUSED", "", "window and stride 1, no padding, y = x's size"),
    ]
    if a["mode"] == 0:
        e += [
            ("dilated", then(setv("dilation", sd - 1, 2)), INVALID, "",
             "dilation[%d] -> 2, y kept" % (sd - 1)),
            ("to_average", attr(mode=1), "LOADS_OR_REFUSED", "",
             "mode max -> average (indices then refused)"),
        ]
        idx = port_uid(node, 2) if bwd else port_uid(node, 1, True)
        if idx is not None and bwd and tensor_by_uid(graph, idx)["data_type"] == I32:
            side = 46341  # side^2 > INT32_MAX

            def plane_past_int32(g, n):
                xd = list(tensor_x(g, n))
                big = xd[:2] + [side] * sd
                outs = [pool_out_size({k: vec[k][i] for k in vec}, a["ceil_mode"], side)
                        for i in range(sd)]
                for slot, dims_ in ((1, big), (0, xd[:2] + outs), (2, xd[:2] + outs)):
                    t = tensor_by_uid(g, port_uid(n, slot))
                    t["dims"], t["strides"] = dims_, [0] * len(dims_)
                reshape(tensor_by_uid(g, port_uid(n, 0, True)), big)
            e.append(("i32_plane_past_int32", plane_past_int32, INVALID, "i32",
                      "x (and dx) %d x %d spatially, dy and the i32 indices to match "
                      "(inputs broadcast): a plane position past INT32_MAX" % (side, side)))
        if idx is not None:
            setidx = (set_type(2, F32) if bwd else set_type(1, F32, True))
            e += [
                ("indices_float", setidx, INVALID, "index type", "indices -> f32"),
                ("indices_wider", set_dims(2, bump(last)) if bwd else
                 set_dims(1, bump(last), True), INVALID, "shape",
                 "indices: one more in the last spatial dim"),
                ("to_average_with_indices", attr(mode=1), INVALID,
                 "only max pooling has indices", "mode -> average, indices kept"),
            ]
    else:
        e += [
            ("average_dilated", setv("dilation", 0, 2), INVALID, "dilation",
             "dilation[0] -> 2 on average pooling"),
            ("average_i32", then(set_type(0, I32), set_type(0, I32, True)), INVALID,
             "floating-point", "x and y -> i32 on average pooling"),
            ("consistent.include_pad_flipped",
             attr(count_include_pad=not a["count_include_pad"]), "LOADS_OR_REFUSED", "",
             "count_include_pad flipped"),
        ]
    return e


def movement_edits(graph, node, attr, set_type, set_dims, then, bump):
    """cpu:copy's ops: what decides where an element is read or written."""
    op = node["op"]
    a = node["attr"]
    x = tensor_by_uid(graph, port_uid(node, 0))["dims"]
    y = tensor_by_uid(graph, port_uid(node, 0, True))["dims"]
    rank = len(x)
    e = [("y_other_type", set_type(0, I32, True), INVALID, "type", "y -> i32 (x f32)")]
    if op == OP_TRANSPOSE:
        perm = a["perm"]
        swapped = perm[1:] + perm[:1]
        e += [
            ("perm_repeated", attr(perm=[perm[0]] * rank), "CORRUPT_DATA", "perm",
             "perm -> one dim %d times" % rank),
            ("perm_past_rank", attr(perm=perm[:-1] + [rank]), "CORRUPT_DATA", "perm",
             "perm's last -> %d (x has rank %d)" % (rank, rank)),
            ("perm_2p32", attr(perm=perm[:-1] + [(1 << 32) + perm[-1]]), "CORRUPT_DATA",
             "perm", "perm's last + 2^32 (the same if cut to int32)"),
            ("perm_shorter", attr(perm=perm[:-1]), "REFUSED", "perm",
             "perm: one entry fewer than x's rank"),
            ("perm_other_y_kept", attr(perm=swapped), INVALID, "shape mismatch",
             "perm -> %s, y kept" % swapped),
            ("consistent.perm_other", then(attr(perm=swapped),
                                           set_dims(0, lambda v: [x[p] for p in swapped],
                                                    True)),
             "LOADS_OR_REFUSED", "", "perm -> %s, y to match" % swapped),
        ]
    if op == OP_SLICE:
        start, step = a["start"], a["step"] or [1] * rank
        e += [
            ("start_past_y_kept", attr(start=[x[0]] + start[1:]), INVALID, "reaches index",
             "start[0] -> %d (x's dim), y kept" % x[0]),
            ("start_negative", attr(start=[-1] + start[1:]), "CORRUPT_DATA", "start[0]",
             "start[0] -> -1"),
            ("start_2p41", attr(start=[1 << 41] + start[1:]), "CORRUPT_DATA", "start[0]",
             "start[0] -> 2^41"),
            ("step_larger_y_kept", attr(step=[step[0] + 5] + step[1:]), INVALID,
             "reaches index", "step[0] + 5, y kept"),
            ("step_zero", attr(step=[0] + step[1:]), "CORRUPT_DATA", "step[0]",
             "step[0] -> 0"),
            ("step_2p31", attr(step=[1 << 31] + step[1:]), "CORRUPT_DATA", "step[0]",
             "step[0] -> 2^31 (past int32)"),
            ("step_2p32_plus_1", attr(step=[(1 << 32) + 1] + step[1:]), "CORRUPT_DATA",
             "step[0]", "step[0] -> 2^32 + 1 (1 if cut to int32)"),
            ("steps_fewer", attr(step=step[:-1]), "CORRUPT_DATA", "steps",
             "one step fewer than starts"),
            ("y_longer", set_dims(0, bump(0), True), INVALID, "reaches index",
             "y: dim 0 one longer (its window past x)"),
            ("starts_fewer", attr(start=start[:-1], step=step[:-1]), INVALID, "starts",
             "one start and step fewer than x's rank"),
            ("consistent.whole", then(attr(start=[0] * rank, step=[1] * rank),
                                      set_dims(0, lambda v: list(x), True)),
             "LOADS_OR_REFUSED", "", "start 0, step 1, y = x"),
        ]
    if op == OP_PAD:
        pre = a["pre"]
        e += [
            ("pre_past_y_kept", attr(pre=[pre[0] + y[0]] + pre[1:]), INVALID, "less than",
             "pre[0] + y's dim 0, y kept (x written past y)"),
            ("pre_negative", attr(pre=[-1] + pre[1:]), "CORRUPT_DATA", "pre[0]",
             "pre[0] -> -1"),
            ("pre_2p41", attr(pre=[1 << 41] + pre[1:]), "CORRUPT_DATA", "pre[0]",
             "pre[0] -> 2^41"),
            ("pre_fewer", attr(pre=pre[:-1]), INVALID, "entries", "one pre fewer"),
            ("y_smaller", set_dims(0, lambda v: [v[0] - 1 - pre[0]] + v[1:], True), INVALID,
             "less than", "y: dim 0 short of x's plus pre"),
            ("value_nan", attr(value=f64_bits(math.nan)), "CORRUPT_DATA", "NaN",
             "value -> NaN"),
            ("consistent.y_larger", set_dims(0, lambda v: [d + 3 for d in v], True),
             "LOADS_OR_REFUSED", "", "y: every dim 3 longer"),
        ]
    if op == OP_CONCAT:
        e += [
            ("x1_off_axis", set_dims(1, bump(0)), INVALID, "other than the axis",
             "x1: dim 0 one longer"),
            ("x1_rank_lower", set_dims(1, lambda v: v[1:]), INVALID, "rank",
             "x1: one dim fewer"),
            ("x1_other_type", set_type(1, F16), INVALID, "type", "x1 -> f16"),
            ("y_shorter", set_dims(0, lambda v: v[:1] + [v[1] - 1] + v[2:], True), INVALID,
             "shape mismatch", "y: one fewer at the axis"),
            ("input_gap", lambda g, n: n.update(inputs=[p for p in n["inputs"]
                                                        if p[0] != 1]),
             "REFUSED", "", "x1 left out, x2 kept (inputs not consecutive)"),
        ]
    if op == OP_RESHAPE:
        e += [
            ("y_more_elements", set_dims(0, bump(0), True), INVALID, "elements",
             "y: one more row than x holds"),
            ("y_fewer_elements", set_dims(0, lambda v: [v[0] - 1] + v[1:], True), INVALID,
             "elements", "y: one row fewer"),
            ("consistent.y_flat", set_dims(0, lambda v: [math.prod(x)], True),
             "LOADS_OR_REFUSED", "", "y flat"),
        ]
    return e


def pool_out_size(v, ceil_mode, n):
    """validate.c's pool_out_size for one spatial dim (v: that dim's window,
    stride, dilation, pre_padding, post_padding)."""
    extent = v["dilation"] * (v["window"] - 1) + 1
    span = n + v["pre_padding"] + v["post_padding"] - extent
    if span < 0:
        return 0
    s = v["stride"]
    out = ((span + s - 1) // s if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + v["pre_padding"]:
        out -= 1
    return out


def tensor_x(graph, node):
    """A pooling node's x dims."""
    slot = 1 if node["op"] == OP_POOLING_BWD else 0
    return tensor_by_uid(graph, port_uid(node, slot))["dims"]


def norm_edits(graph, node, attr, set_type, set_dims, then, bump):
    op = node["op"]
    x_slot = 0 if op in (OP_BN_TRAIN, OP_BN_RUNNING) else 1
    x = tensor_by_uid(graph, port_uid(node, x_slot))["dims"]
    e = [
        # running statistics are per channel: a wider x is another valid
        # graph there
        ("x_wider_rest_kept", set_dims(x_slot, bump(len(x) - 1)),
         *(("LOADS_OR_REFUSED", "") if op == OP_BN_RUNNING else (INVALID, "")),
         "x: last dim one longer, every other tensor kept"),
        ("x_rank1", set_dims(x_slot, lambda v: [v[0]]), INVALID, "", "x: rank 1"),
        ("param_wider", set_dims(x_slot + 1, lambda v: [d + 1 if d > 1 else d for d in v]),
         INVALID, "", "input %d: every dim above 1 one longer" % (x_slot + 1)),
        ("output0_wider", set_dims(0, bump(len(x) - 1), True), INVALID, "shape mismatch",
         "output 0: last dim one longer"),
        ("x_f64", set_type(x_slot, F64), "LOADS_OR_REFUSED", "",
         "x -> f64 (cpu:norm_train takes f32, f16, bf16)"),
        ("x_i32", set_type(x_slot, I32), INVALID, "floating-point", "x -> i32"),
    ]
    if len(node["outputs"]) > 1:
        e.append(("output1_wider", set_dims(1, lambda v: [d + 1 for d in v], True),
                  INVALID, "shape mismatch", "output 1: every dim one longer"))
    if op == OP_BN_RUNNING:
        e += [
            ("momentum_above_1", attr(momentum=f64_bits(1.5)), "CORRUPT_DATA", "momentum",
             "momentum -> 1.5"),
            ("momentum_nan", attr(momentum=f64_bits(math.nan)), "CORRUPT_DATA",
             "momentum", "momentum -> NaN"),
            ("one_value_per_channel", set_dims(0, lambda v: [1, v[1]] + [1] * (len(v) - 2)),
             INVALID, "at least 2", "x: 1 value per channel (unbiased variance)"),
        ]
    if op == OP_BN_TRAIN:
        e += [
            ("epsilon_negative", attr(epsilon=f64_bits(-1.0)), INVALID, "epsilon",
             "epsilon -> -1"),
            ("epsilon_nan", attr(epsilon=f64_bits(math.nan)), INVALID, "epsilon",
             "epsilon -> NaN"),
        ]
    if op in (OP_LN_BWD, OP_RMS_BWD):
        e += [
            ("stats_wider", set_dims(3, lambda v: [d + 1 for d in v]), INVALID,
             "shape mismatch", "the statistics: every dim one longer"),
            ("scale_rank_lower", set_dims(2, lambda v: v[1:]), INVALID, "rank",
             "scale: one dim fewer than x"),
            ("consistent.normalise_more", then(
                set_dims(2, lambda v: [1] * (len(v) - 2) + list(x[-2:])),
                *[set_dims(s, lambda v: list(x[:-2]) + [1, 1])
                  for s in range(3, len(node["inputs"]))],
                *[set_dims(s, lambda v: [1] * (len(v) - 2) + list(x[-2:]), True)
                  for s in range(1, len(node["outputs"]))]),
             "LOADS_OR_REFUSED", "", "normalised over the last two dims (scale, "
             "statistics and parameter gradients to match)"),
        ]
    return e


def engine_edits(parts):
    """The engine a CPU plan names, in the body (name and id) and in the
    payload: each must be the other, and the engine must take the graph."""
    engine = parts.body["engine_name"]
    resize = any(n["op"] == OP_RESIZE for n in parts.graph["nodes"])
    other = "cpu:pool" if resize else "cpu:resize"

    def body_engine(name):
        def edit(body, payload, graph):
            body["engine_name"], body["engine_id"] = name, fnv1a64(name)
        return edit

    def payload_engine(name):
        def edit(body, payload, graph):
            payload["engine"] = name
        return edit

    def both(name):
        def edit(body, payload, graph):
            body_engine(name)(body, payload, graph)
            payload_engine(name)(body, payload, graph)
        return edit

    return [
        ("engine.body_other", body_engine(other), "CORRUPT_DATA", "is for engine",
         "body engine name and id -> %s, payload kept" % other),
        ("engine.payload_other", payload_engine(other), "CORRUPT_DATA", "is for engine",
         "payload engine -> %s, body kept" % other),
        ("engine.both_other", both(other), "NOT_SUPPORTED", "",
         "body and payload engine -> %s, which does not take this graph" % other),
        ("engine.both_reference", both("cpu:reference"), "LOADS_OR_REFUSED", "",
         "body and payload engine -> cpu:reference (it takes any graph; its "
         "workspace may differ from the recorded one)"),
        ("engine.payload_unknown", payload_engine("cpu:no_such"), "CORRUPT_DATA",
         "is for engine", "payload engine -> cpu:no_such"),
        ("engine.id_only", lambda b, p, g: b.update(engine_id=fnv1a64(other)),
         "CORRUPT_DATA", "", "body engine id -> %s's, name kept" % other),
    ]


# What strict mode (CDNN_TRUSTED_CODE=pack) must answer instead, where it
# differs: a kernel plan whose code object, target, symbol, signature or
# metadata is not what an installed pack holds runs only in normal mode,
# where a plan's code is trusted as its sender is (docs/SECURITY.md).
NOT_IN_PACK = "in no kernel pack installed here"
# What normal mode says of an installed kernel's code under another
# description (providers/kernels/restore.c, check_installed_code).
INSTALLED_OTHERWISE = "is installed here as kernel"
STRICT = {}


def kernel_edits(parts):
    """Edits of a kernels:* plan's payload (CDKL), each re-sealed (the body's
    SHA-256 in the payload header, the plan's digest), each in a part that
    must agree with another: the code object and its SHA-256, target,
    symbol, signature, sizes, handler, engine, launch values, metadata and
    the header's fields.  Every one must be refused before any code runs,
    with its own status and words."""
    p0 = parts.payload
    bad, unsupported = "CORRUPT_DATA", "NOT_SUPPORTED"
    damaged = "the kernel payload is damaged"
    n = len(p0["launch_values"])

    def setp(**kw):
        def edit(body, payload, graph):
            payload.update(kw)
        return edit

    def header(**kw):
        def edit(body, payload, graph):
            payload["header"] = dict(payload["header"], **kw)
        return edit

    def code(fn, reseal):
        def edit(body, payload, graph):
            payload["code"] = fn(payload["code"])
            if reseal:
                payload["sha256"] = hashlib.sha256(payload["code"]).digest()
        return edit

    def flip_middle(c):
        return c[:len(c) // 2] + bytes([c[len(c) // 2] ^ 0x01]) + c[len(c) // 2 + 1:]

    def launch(i, fn):
        def edit(body, payload, graph):
            v = list(payload["launch_values"])
            v[i] = fn(v[i])
            payload["launch_values"] = v
        return edit

    def metadata(fn):
        def edit(body, payload, graph):
            payload["metadata"] = fn(list(payload["metadata"]))
        return edit

    def bump_first_number(kvs):
        for i, (k, v) in enumerate(kvs):
            if v.isdigit():
                kvs[i] = (k, str(int(v) * 2 + 1))
                return kvs
        # (a kernel without numeric metadata, kernels:reduce_host: one
        # entry added instead)
        return kvs + [("forged_tile", "3")]

    other_engine = ("kernels:norm_host" if p0["engine"] != "kernels:norm_host"
                    else "kernels:matmul_host")
    other_signature = ("host-norm-v1" if p0["signature"] != "host-norm-v1"
                       else "host-matmul-v1")
    other_handler = "host_norm" if p0["handler"] != "host_norm" else "host_matmul"
    other_kind = "cuda" if p0["kind"] == "host" else "host"
    lowered = "x86-64-v2" if p0["target"] != "x86-64-v2" else "x86-64"
    edits = [
        # the code object against its SHA-256
        ("kernel.code_byte_flipped", code(flip_middle, False), bad, INCONSISTENT,
         "code_object: byte %d flipped, kernel_sha256 kept" % (len(p0["code"]) // 2)),
        ("kernel.sha256_flipped",
         setp(sha256=bytes([p0["sha256"][0] ^ 1]) + p0["sha256"][1:]), bad, INCONSISTENT,
         "kernel_sha256: first byte flipped, code kept"),
        ("kernel.sha256_short", setp(sha256=p0["sha256"][:31]), bad, damaged,
         "kernel_sha256: 31 bytes"),
        ("kernel.code_empty", code(lambda c: b"", True), bad, damaged,
         "code_object: empty, its SHA-256 recomputed"),
        ("kernel.code_padded_resealed", code(lambda c: c + bytes(64), True), "LOADS", "",
         "code_object: 64 zero bytes appended, kernel_sha256 recomputed (the same "
         "machine code, bytes no pack holds)"),
        ("kernel.code_truncated_resealed", code(cut_last_segment, True), bad,
         "does not load", "code_object: cut inside its last loadable segment, "
         "kernel_sha256 recomputed (the loader would map pages past the end of the "
         "file)"),
        # target, symbol, signature
        ("kernel.target_other_family", setp(target="sm_90a" if p0["kind"] == "host"
                                             else "x86-64-v3"), bad, INCONSISTENT,
         "target -> a target of the other family"),
        ("kernel.target_unknown", setp(target="x86-64-v9"), unsupported, "x86-64-v9",
         "target -> x86-64-v9 (no provider knows it)"),
        ("kernel.target_empty", setp(target=""), bad, damaged, "target -> \"\""),
        ("kernel.target_nul", setp(target=p0["target"] + "\0v9"), bad, damaged,
         "target: a NUL byte and more after it"),
        ("kernel.symbol_missing", setp(symbol="cdnn_no_such_symbol"), bad,
         "cdnn_no_such_symbol", "symbol -> one the code object does not define"),
        ("kernel.signature_other", setp(signature=other_signature), bad, INCONSISTENT,
         "signature -> %s" % other_signature),
        # handler and engine
        ("kernel.handler_unknown", setp(handler="host_no_such"), unsupported,
         "host_no_such", "handler -> host_no_such"),
        ("kernel.handler_newer", setp(handler_version=p0["handler_version"] + 98),
         unsupported, "version", "handler_version -> %d" % (p0["handler_version"] + 98)),
        ("kernel.handler_version_zero", setp(handler_version=0), bad, damaged,
         "handler_version -> 0"),
        ("kernel.handler_other", setp(handler=other_handler), bad, INCONSISTENT,
         "handler -> %s (another signature)" % other_handler),
        ("kernel.engine_other", setp(engine=other_engine, engine_id=fnv1a64(other_engine)),
         bad, INCONSISTENT, "engine -> %s, engine_id its FNV-1a" % other_engine),
        ("kernel.engine_id_wrong", setp(engine_id=p0["engine_id"] ^ 1), bad, INCONSISTENT,
         "engine_id: low bit flipped"),
        # launch values: count and each value
        ("kernel.launch_appended", setp(launch_values=p0["launch_values"] + [0]), bad,
         INCONSISTENT, "launch_values: a 0 appended"),
        ("kernel.launch_dropped", setp(launch_values=p0["launch_values"][:-1]), bad,
         INCONSISTENT, "launch_values: the last dropped"),
        ("kernel.launch_empty", setp(launch_values=[]), bad, damaged,
         "launch_values: none"),
        ("kernel.launch_threads_huge", launch(0, lambda v: 1 << 20), bad, INCONSISTENT,
         "launch value 0 (host threads) -> 2^20"),
        ("kernel.launch_threads_zero", launch(0, lambda v: 0), bad, INCONSISTENT,
         "launch value 0 (host threads) -> 0"),
        # metadata: the base's code is an installed pack's, which describes
        # it otherwise (a cuda handler launches by it: tiles, threads, smem)
        ("kernel.metadata_tile_changed", metadata(bump_first_number), bad,
         INSTALLED_OTHERWISE, "kernel_metadata: the first numeric value v -> 2v + 1"),
        ("kernel.metadata_dropped", metadata(lambda kvs: []), bad, INSTALLED_OTHERWISE,
         "kernel_metadata: every entry removed"),
        # a level this machine runs: refused as installed otherwise, but for
        # a build whose objects of both levels are the same bytes (the pack
        # then holds the code at that level too, and it loads)
        ("kernel.target_lowered", setp(target=lowered), "LOADS_OR_REFUSED", "",
         "target %s -> %s (a level this machine runs; the code is unchanged)"
         % (p0["target"], lowered)),
        # the header and the body's copy of it
        ("kernel.header_marker", header(marker=b"CDKX"), bad, damaged, "marker -> CDKX"),
        ("kernel.header_major_newer", header(major=2), unsupported, "format 2.0",
         "header major -> 2"),
        ("kernel.header_major_zero", header(major=0), bad, damaged, "header major -> 0"),
        ("kernel.header_minor_newer", then_kp(header(minor=1), setp(minor=1)), unsupported,
         "format 1.1", "header and body minor -> 1"),
        ("kernel.header_size", header(size=65), bad, damaged, "header size -> 65"),
        ("kernel.header_kind_other", header(kind=KPAYLOAD_KINDS[other_kind]), bad,
         INCONSISTENT, "header kind -> %s, the body's kept" % other_kind),
        ("kernel.header_kind_unknown", header(kind=7), bad, damaged, "header kind -> 7"),
        ("kernel.kind_both_other", then_kp(header(kind=KPAYLOAD_KINDS[other_kind]),
                                           setp(kind=other_kind)), bad, INCONSISTENT,
         "header and body kind -> %s, the target kept" % other_kind),
        ("kernel.header_reserved", header(reserved64=1), bad, damaged,
         "reserved header bytes -> 1"),
        ("kernel.header_body_size", header(body_size_delta=8), bad, damaged,
         "header body size + 8"),
        ("kernel.header_body_sha256", header(digest_flip=True), bad, damaged,
         "the body's SHA-256 in the header: a bit flipped"),
        ("kernel.body_version", setp(minor=p0["minor"] + 1), bad, INCONSISTENT,
         "body minor -> %d, the header's kept" % (p0["minor"] + 1)),
    ]
    if not p0["metadata"]:
        # nothing to drop (kernels:reduce_host has no metadata): that edit
        # would be the unchanged plan
        edits = [e for e in edits if e[0] != "kernel.metadata_dropped"]
    # Each launch value but the host threads (which restore takes as given,
    # within [1, 1024]) is derived again from the graph: any change is
    # refused.  One forgery per value: a tile, a stride or a size that would
    # index out of bounds if it were believed.
    for i in range(1, n):
        v = p0["launch_values"][i]
        edits.append(("kernel.launch_value@%d" % i, launch(i, lambda x: x + 1 if x < 1 << 40
                                                           else x - 1), bad, INCONSISTENT,
                      "launch value %d: %d -> %d" % (i, v, v + 1)))
    edits.append(("kernel.launch_threads_other", launch(0, lambda v: 1 if v != 1 else 2),
                  "LOADS_OR_REFUSED", "", "launch value 0 (host threads): another count "
                  "within [1, 1024]"))
    # Strict mode asks the provider, before the restore's checks, whether an
    # installed pack holds this code with this symbol, target, signature and
    # metadata: what loads in normal mode, and an intact payload whose
    # symbol or signature was changed, is refused as not vouched for.
    STRICT.update({cat: ("NOT_SUPPORTED", NOT_IN_PACK) for cat in (
        "kernel.code_padded_resealed", "kernel.code_truncated_resealed",
        "kernel.metadata_tile_changed",
        "kernel.metadata_dropped", "kernel.target_lowered", "kernel.symbol_missing",
        "kernel.signature_other")})
    return edits


def cut_last_segment(elf):
    """An x86-64 ELF object cut 64 bytes before the end of the file bytes of
    its last PT_LOAD segment (wherever the build put debug sections after
    it), so that the cut is in what the loader maps."""
    phoff, = struct.unpack_from("<Q", elf, 32)
    phentsize, phnum = struct.unpack_from("<HH", elf, 54)
    end = 0
    for i in range(phnum):
        p_type, = struct.unpack_from("<I", elf, phoff + i * phentsize)
        p_offset, = struct.unpack_from("<Q", elf, phoff + i * phentsize + 8)
        p_filesz, = struct.unpack_from("<Q", elf, phoff + i * phentsize + 32)
        if p_type == 1 and p_filesz:  # PT_LOAD
            end = max(end, p_offset + p_filesz)
    if end <= 64 + phoff + phnum * phentsize:
        raise ForgeError("a host code object without a loadable segment to cut")
    return elf[:end - 64]


def then_kp(*fns):
    def edit(body, payload, graph):
        for fn in fns:
            fn(body, payload, graph)
    return edit


def forge_plan(parts, knobs):
    """[(category, bytes, expect, message, description, key_changed)]"""
    out = []
    if parts.kernel:
        # A kernel payload holds no knobs (they chose the kernel at build).
        edits = [e for e in plan_edits(parts, {}) if not e[0].startswith("payload.knob")]
        edits += kernel_edits(parts)
        if any(n["op"] >= FIRST_FORGED_OP for n in parts.graph["nodes"]):
            # the graph in a kernel payload decides its launch values: the
            # same attribute forgeries (a consistent one is refused for its
            # launch values, or is another valid plan)
            edits += op_edits(parts)
    else:
        edits = plan_edits(parts, knobs)
        if parts.body["engine_name"] in NEW_ENGINES or any(
                n["op"] >= FIRST_FORGED_OP for n in parts.graph["nodes"]):
            edits += engine_edits(parts) + op_edits(parts)
    for cat, edit, expect, msg, desc in edits:
        body, payload, graph = parts.parts()
        edit(body, payload, graph)
        out.append((cat, parts.build(body, payload, graph), expect, msg, desc,
                    body["content_key"] != parts.body["content_key"]))
    return out


class ContainerParts:
    def __init__(self, buf, what):
        c = read_container(buf)
        self.c = c
        if c["graph"] is None or c["plan"] is None:
            raise ForgeError("%s: a container without a plan" % what)
        if c["graph_sha256"] != hashlib.sha256(c["graph"]).digest():
            raise SelfCheckError("%s: the container's graph_sha256 does not verify"
                                 % what)
        if c["sha256"] is not None and c["sha256"] != seal_container(
                c["major"], c["minor"], c["graph"], c["plan"]):
            raise SelfCheckError("%s: the container's sha256 (format %d.%d) does "
                                 "not verify" % (what, c["major"], c["minor"]))
        if c["minor"] >= 1 and c["sha256"] is None:
            raise ForgeError("%s: container format %d.%d without its sha256"
                             % (what, c["major"], c["minor"]))
        same("%s: the container envelope (format %d.%d)" % (
            what, c["major"], c["minor"]), encode_container(c, c["graph"], c["plan"]),
            buf)
        self.graph = read_graph(c["graph"])
        same("%s: the container's graph part (format %d.%d)" % (
            what, self.graph["major"], self.graph["minor"]),
            encode_graph(self.graph), c["graph"])
        self.plan = PlanParts(c["plan"], what + " (plan part)")

    def build(self, graph, plan):
        return encode_container(self.c, encode_graph(graph), plan)


def forge_container(parts, knobs):
    out = []
    plan = parts.plan
    # The plan part's forgeries, in an intact container around the
    # unchanged graph part.  A plan that now records another content key
    # than the graph part's is refused by the container check, before its
    # payload is restored.
    for cat, pbytes, expect, msg, desc, key_changed in forge_plan(plan, knobs):
        if cat.startswith("consistent.stride_doubled"):
            continue  # refused alike by the container check: one is enough
        if key_changed:
            expect, msg = "CORRUPT_DATA", CONTAINER_MISMATCH
            desc += "; the container's graph part is unchanged"
        out.append(("plan_part." + cat, parts.build(parts.graph, pbytes), expect,
                    msg, desc))
    inp = first(plan.body["tensors"], lambda t: not t[4], "input")
    carriers = batch_carriers(plan.graph)

    g = copy.deepcopy(parts.graph)
    g["tensors"][0]["name"] = "forged_name"
    out.append(("graph_part.control_renamed", parts.build(g, parts.c["plan"]), "LOADS",
                "", "the container's graph part: a tensor renamed (same content key)"))
    g = copy.deepcopy(parts.graph)
    double_batch(g, carriers)
    # (batch_carriers does not know the 1.3 ops' operands: any refusal)
    new_ops = any(n["op"] >= FIRST_FORGED_OP for n in parts.graph["nodes"])
    out.append(("graph_part.dims_changed", parts.build(g, parts.c["plan"]),
                *(("REFUSED", "") if new_ops else ("CORRUPT_DATA", CONTAINER_MISMATCH)),
                "the container's graph part: batch doubled; the plan is unchanged"))
    g = copy.deepcopy(parts.graph)
    double_outer_stride(g, inp[0])
    out.append(("graph_part.stride_doubled", parts.build(g, parts.c["plan"]),
                "CORRUPT_DATA", CONTAINER_MISMATCH,
                "the container's graph part: outer stride of uid %d doubled; the "
                "plan is unchanged" % inp[0]))
    # Both parts edited alike: a self-consistent container for another
    # computation.
    g = copy.deepcopy(parts.graph)
    double_batch(g, carriers)
    body, payload, pg = plan.parts()
    double_batch(pg, carriers)
    rederive(body, pg)
    out.append(("consistent.batch_doubled", parts.build(g, plan.build(body, payload, pg)),
                "LOADS_OR_REFUSED", "",
                "batch doubled in the graph part and in the plan's payload graph, "
                "the plan's table and key re-derived"))
    return out


def engine_knobs(engines_json):
    """{engine name: {knob: (min, max)}} from `cdnn engines --json --knobs`."""
    with open(engines_json) as f:
        data = json.load(f)
    return {e["name"]: {k["name"]: (k["min"], k["max"]) for k in e.get("knobs", [])}
            for e in data["engines"]}


def with_workspace(data, workspace):
    """A forged plan (data) with its recorded workspace set: what a forger
    does when the loader's refusal says how many bytes the payload needs."""
    env = read_plan(data)
    body = read_body(env["body"])
    body["workspace_size"] = workspace
    return encode_plan(env["major"], env["minor"], encode_body(body))


def main():
    args = sys.argv[1:]
    workspaces = None
    if len(args) == 5 and args[3] == "--workspace":
        # second round: {forgery file: workspace bytes the loader asked for}
        with open(args[4]) as f:
            workspaces = json.load(f)
        args = args[:3]
    if len(args) != 3:
        sys.exit(__doc__)
    base_dir, out_dir, engines_json = args
    knobs = engine_knobs(engines_json)
    os.makedirs(out_dir, exist_ok=True)
    manifest = []
    bases = sorted(f for f in os.listdir(base_dir) if f.endswith((".cdp", ".cdgp")))
    if not bases:
        sys.exit("forge.py: no *.cdp or *.cdgp in %s" % base_dir)
    try:
        for name in bases:
            with open(os.path.join(base_dir, name), "rb") as f:
                buf = f.read()
            stem, ext = os.path.splitext(name)
            if ext == ".cdp":
                parts = PlanParts(buf, name)
                engine = parts.body["engine_name"]
                forged = [f[:5] for f in forge_plan(parts, knobs.get(engine, {}))]
                kind, versions = "plan", "plan %d.%d, payload graph %d.%d" % (
                    parts.major, parts.minor, parts.graph["major"], parts.graph["minor"])
            else:
                if read_container(buf)["plan"] is None:
                    print("# %s: a graph-only container, nothing to forge a plan "
                          "from; skipped" % name)
                    continue
                parts = ContainerParts(buf, name)
                engine = parts.plan.body["engine_name"]
                forged = forge_container(parts, knobs.get(engine, {}))
                kind, versions = "container", "container %d.%d, graph %d.%d" % (
                    parts.c["major"], parts.c["minor"], parts.graph["major"],
                    parts.graph["minor"])
            print("# %s: %s, %s; self-check passed (every layer rebuilt "
                  "byte-identical); %d forgeries" % (name, engine, versions,
                                                     len(forged)))
            for cat, data, expect, msg, desc in forged:
                # "category@variant": one category, several files (the
                # variant names the tensor edited).
                category, _, variant = cat.partition("@")
                fname = "%s.%s%s" % (stem, cat.replace("@", "."), ext)
                if workspaces is not None:
                    if fname not in workspaces or kind != "plan":
                        continue
                    data = with_workspace(data, workspaces[fname])
                    desc += "; workspace -> %d bytes, what the refusal of the " \
                            "first forgery said the payload needs" % workspaces[fname]
                    category += ".workspace_reforged"
                    fname = fname[:-len(ext)] + ".ws" + ext
                with open(os.path.join(out_dir, fname), "wb") as f:
                    f.write(data)
                entry = {"file": fname, "kind": kind, "base": name,
                         "engine": engine, "category": category,
                         "variant": variant, "expect": expect,
                         "message": msg, "edit": desc}
                strict = STRICT.get(category.replace("plan_part.", "", 1))
                if strict and msg != CONTAINER_MISMATCH:
                    entry["expect_strict"], entry["message_strict"] = strict
                manifest.append(entry)
    except SelfCheckError as e:
        print("SELF-CHECK FAILED: %s" % e)
        print("forge.py no longer writes cdnn's layout or seal; every forgery "
              "would be refused for that rather than for its edit, so none "
              "is written.  Update forge.py to the format cdnn now writes.")
        sys.exit(1)
    except ForgeError as e:
        print("FORGE FAILED: %s" % e)
        sys.exit(1)
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"forgeries": manifest}, f, indent=1)
    print("# %d forgeries written to %s" % (len(manifest), out_dir))


if __name__ == "__main__":
    main()
