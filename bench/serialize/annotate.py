#!/usr/bin/python3
"""Annotate a cdnn artifact byte by byte (for docs/FORMATS.md).

usage:
  annotate.py FILE                     annotate a saved graph, plan or container
  annotate.py --make LIBCDNN GRAPH_JSON OUT
                                       build GRAPH_JSON on a CPU handle, save
                                       its plan to OUT, then annotate OUT

The walker follows the schemas (schema/*.fbs; written out below) from the
root offset through every table, vtable, string, vector, struct and nested
buffer (a plan's body, the CPU payload inside it, the graph inside that),
records which bytes each thing occupies, and prints every byte of the file
exactly once, in file order: what it is, where offsets lead, and padding
(which cdnn always writes as zeros; a non-zero padding byte is flagged).
Fields a newer minor adds are not in the tables below: their bytes show
as "padding" and are flagged as non-zero.  The walker is independent of
cdnn's C code; `flatc --annotate schema/plan.fbs -- FILE` gives the same
reading of the outer buffer (flatc does not descend into nested buffers).

Output lines:  +OFFSET  [buffer +REL]  HEX BYTES  what
"""
import ctypes
import struct
import sys

# ---------------------------------------------------------------------------
# The schemas, as the walker needs them.  Field kinds:
#   u8 i8 u16 i32 u64 i64 f64 bool  scalars (enum names in ENUMS by field)
#   str                             string
#   vec:T                           vector of scalars T
#   bytes                           [ubyte] shown as data
#   nested:TABLE                    [ubyte] holding a buffer rooted at TABLE
#   structs:S                       vector of structs S
#   tables:TABLE                    vector of tables
#   utype:UNION / union:UNION       a union's type byte and value
# ---------------------------------------------------------------------------

TABLES = {
    "Plan": [("format_major", "u16"), ("format_minor", "u16"),
             ("body", "nested:PlanBody"), ("body_sha256", "bytes")],
    "PlanBody": [("engine_id", "u64"), ("engine_name", "str"),
                 ("provider_name", "str"), ("provider_version", "str"),
                 ("device_kind", "i8"), ("device_arch", "i32"),
                 ("tensors", "structs:PlanTensor"), ("workspace_size", "u64"),
                 ("payload_format_major", "u16"),
                 ("payload_format_minor", "u16"),
                 ("payload", "nested:CpuPayload"),
                 ("graph_content_key", "bytes")],
    "Container": [("format_major", "u16"), ("format_minor", "u16"),
                  ("graph", "nested:Graph"), ("plan", "nested:Plan"),
                  ("graph_sha256", "bytes"), ("sha256", "bytes")],
    "CpuPayload": [("format_major", "u16"), ("format_minor", "u16"),
                   ("engine", "str"), ("knobs", "tables:CpuKnob"),
                   ("graph", "nested:Graph")],
    "CpuKnob": [("name", "str"), ("value", "i64")],
    "Graph": [("format_major", "u16"), ("format_minor", "u16"),
              ("name", "str"), ("io_type", "i8"),
              ("intermediate_type", "i8"), ("compute_type", "i8"),
              ("tensors", "tables:Tensor"), ("nodes", "tables:Node"),
              ("sha256", "bytes")],
    "Tensor": [("uid", "i64"), ("name", "str"), ("data_type", "i8"),
               ("dims", "vec:i64"), ("strides", "vec:i64"),
               ("is_virtual", "bool"), ("alignment", "i64"),
               ("is_scalar", "bool"), ("scalar_value", "f64")],
    "Node": [("name", "str"), ("op", "i8"), ("inputs", "structs:Port"),
             ("outputs", "structs:Port"), ("attr_type", "utype:NodeAttr"),
             ("attr", "union:NodeAttr")],
    "ConvAttr": [("spatial_dims", "i32"), ("pre_padding", "vec:i64"),
                 ("post_padding", "vec:i64"), ("stride", "vec:i64"),
                 ("dilation", "vec:i64"), ("groups", "i64")],
    "PointwiseAttr": [("mode", "i8"), ("relu_lower_clip", "f64"),
                      ("relu_upper_clip", "f64"),
                      ("relu_lower_clip_slope", "f64"), ("elu_alpha", "f64"),
                      ("softplus_beta", "f64"), ("swish_beta", "f64")],
    "ReductionAttr": [("mode", "i8")],
    "NormAttr": [("epsilon", "f64")],
    "SdpaAttr": [("scale", "f64"), ("causal", "bool")],
}
IDENTIFIERS = {b"CDPL": "Plan", b"CDGR": "Graph", b"CDGP": "Container",
               b"CDCP": "CpuPayload"}
STRUCTS = {  # name: (size, align, [(field, type, offset)])
    "PlanTensor": (32, 8, [("uid", "i64", 0), ("alignment", "i64", 8),
                           ("span_bytes", "u64", 16), ("data_type", "i8", 24),
                           ("is_output", "bool", 25)]),
    "Port": (16, 8, [("slot", "u8", 0), ("uid", "i64", 8)]),
}
UNIONS = {"NodeAttr": ["NONE", "ConvAttr", "PointwiseAttr", "ReductionAttr",
                       "NormAttr", "SdpaAttr"]}
_DT = "Unset F32 F16 BF16 F64 I32 I64 I8 U8 Bool".split()
ENUMS = {
    "device_kind": ["Cpu", "Cuda"],
    "data_type": _DT, "io_type": _DT, "intermediate_type": _DT,
    "compute_type": _DT,
    "op": ("ConvFwd ConvBwdData ConvBwdFilter Matmul Pointwise Reduction "
           "BatchnormInference Layernorm Rmsnorm SdpaFwd").split(),
    "mode@PointwiseAttr": """Add Sub Mul Div Max Min Pow Identity Neg Abs Exp
        Log Sqrt Rsqrt Reciprocal Sin Cos Erf Floor Ceil CmpEq CmpNe CmpGt
        CmpGe CmpLt CmpLe LogicalAnd LogicalOr LogicalNot Select Fma ReluFwd
        GeluFwd GeluTanhFwd SigmoidFwd SwishFwd TanhFwd EluFwd SoftplusFwd
        ReluBwd GeluBwd GeluTanhBwd SigmoidBwd SwishBwd TanhBwd EluBwd
        SoftplusBwd Round Fmod Remainder Asin Acos Atan Sinh Cosh Tan Asinh
        Acosh Atanh Atan2""".split(),
    "mode@ReductionAttr": "Add Mul Min Max Amax Avg Norm1 Norm2".split(),
}
SCALAR = {"u8": ("<B", 1), "i8": ("<b", 1), "bool": ("<B", 1),
          "u16": ("<H", 2), "i32": ("<i", 4), "u32": ("<I", 4),
          "u64": ("<Q", 8), "i64": ("<q", 8), "f64": ("<d", 8)}


class Annotator:
    def __init__(self, data):
        self.data = data
        self.regions = []  # (start, length, buffer label, base, text)

    def add(self, start, length, buf, text):
        self.regions.append((start, length, buf, text))

    def u32(self, at):
        return struct.unpack_from("<I", self.data, at)[0]

    def scalar(self, kind, at):
        fmt, _ = SCALAR[kind]
        v = struct.unpack_from(fmt, self.data, at)[0]
        return bool(v) if kind == "bool" else v

    def show(self, kind, v, name, table):
        names = ENUMS.get("%s@%s" % (name, table)) or ENUMS.get(name)
        if names and 0 <= v < len(names):
            return "%d (%s)" % (v, names[v])
        if kind in ("u64", "i64") and name in ("engine_id",):
            return "0x%016x" % v
        return repr(v)

    # --- buffers ---------------------------------------------------------

    def buffer(self, base, size, root, buf):
        ident = bytes(self.data[base + 4:base + 8])
        has_ident = ident in IDENTIFIERS
        rootpos = base + self.u32(base)
        self.add(base, 4, buf, "root uoffset %d -> %s table at +0x%04x" % (
            self.u32(base), root, rootpos))
        if has_ident:
            self.add(base + 4, 4, buf, "file identifier \"%s\"" %
                     ident.decode())
        self.table(rootpos, root, buf, base)

    def table(self, pos, name, buf, base):
        fields = TABLES[name]
        soff = struct.unpack_from("<i", self.data, pos)[0]
        vt = pos - soff
        vt_size, t_size = struct.unpack_from("<HH", self.data, vt)
        self.add(pos, 4, buf, "%s table: soffset %d -> vtable at +0x%04x" % (
            name, soff, vt))
        self.add(vt, 4, buf, "%s vtable: %d bytes, table %d bytes" % (
            name, vt_size, t_size))
        nslots = (vt_size - 4) // 2
        for i in range(nslots):
            voff = struct.unpack_from("<H", self.data, vt + 4 + 2 * i)[0]
            fname = fields[i][0] if i < len(fields) else "field %d (unknown)" % i
            self.add(vt + 4 + 2 * i, 2, buf, "  vt[%d] %s: %s" % (
                i, fname, "at table+%d" % voff if voff else "absent (default)"))
        union_type = {}
        for i, (fname, kind) in enumerate(fields):
            if i >= nslots:
                break
            voff = struct.unpack_from("<H", self.data, vt + 4 + 2 * i)[0]
            if not voff:
                continue
            at = pos + voff
            label = "%s.%s" % (name, fname)
            if kind in SCALAR:
                v = self.scalar(kind, at)
                self.add(at, SCALAR[kind][1], buf, "%s = %s" % (
                    label, self.show(kind, v, fname, name)))
                continue
            if kind.startswith("utype:"):
                v = self.data[at]
                union_type[fname[:-len("_type")]] = v
                members = UNIONS[kind[6:]]
                self.add(at, 1, buf, "%s = %d (%s)" % (
                    label, v, members[v] if v < len(members) else "?"))
                continue
            target = at + self.u32(at)
            self.add(at, 4, buf, "%s: uoffset %d -> +0x%04x" % (
                label, self.u32(at), target))
            if kind == "str":
                self.string(target, label, buf)
            elif kind == "bytes":
                self.vector_bytes(target, label, buf)
            elif kind.startswith("nested:"):
                n = self.u32(target)
                self.add(target, 4, buf, "%s: [ubyte] of %d bytes, a nested "
                         "%s buffer (8-aligned)" % (label, n, kind[7:]))
                self.buffer(target + 4, n, kind[7:], (fname, target + 4))
            elif kind.startswith("vec:"):
                self.vector_scalars(target, kind[4:], label, buf)
            elif kind.startswith("structs:"):
                self.vector_structs(target, kind[8:], label, buf)
            elif kind.startswith("tables:"):
                n = self.u32(target)
                self.add(target, 4, buf, "%s: %d table offsets follow" % (
                    label, n))
                for k in range(n):
                    e = target + 4 + 4 * k
                    self.add(e, 4, buf, "  %s[%d]: uoffset %d -> +0x%04x" % (
                        label, k, self.u32(e), e + self.u32(e)))
                    self.table(e + self.u32(e), kind[7:], buf, base)
            elif kind.startswith("union:"):
                member = UNIONS[kind[6:]][union_type.get(fname, 0)]
                self.table(target, member, buf, base)

    def string(self, at, label, buf):
        n = self.u32(at)
        s = bytes(self.data[at + 4:at + 4 + n])
        self.add(at, 4, buf, "%s: string length %d" % (label, n))
        self.add(at + 4, n + 1, buf, "  \"%s\" + NUL" % s.decode(
            errors="replace"))

    def vector_bytes(self, at, label, buf):
        n = self.u32(at)
        self.add(at, 4, buf, "%s: [ubyte] of %d bytes" % (label, n))
        if n:
            self.add(at + 4, n, buf, "  %s data" % label)

    def vector_scalars(self, at, kind, label, buf):
        n = self.u32(at)
        w = SCALAR[kind][1]
        vals = [self.scalar(kind, at + 4 + w * k) for k in range(n)]
        self.add(at, 4, buf, "%s: vector of %d %s" % (label, n, kind))
        if n:
            self.add(at + 4, n * w, buf, "  %s = %s" % (label, vals))

    def vector_structs(self, at, sname, label, buf):
        size, _, fields = STRUCTS[sname]
        n = self.u32(at)
        self.add(at, 4, buf, "%s: vector of %d %s structs (%d bytes each)" % (
            label, n, sname, size))
        for k in range(n):
            e = at + 4 + size * k
            used = 0
            for fname, kind, off in fields:
                v = self.scalar(kind, e + off)
                self.add(e + off, SCALAR[kind][1], buf, "  %s[%d].%s = %s" % (
                    label, k, fname, self.show(kind, v, fname, sname)))
                used = max(used, off + SCALAR[kind][1])
            # struct padding is covered by the gap printer

    # --- printing ----------------------------------------------------------

    def lines(self):
        out = []
        covered = 0
        regions = sorted(self.regions, key=lambda r: (r[0], -r[1]))
        bad = []
        for start, length, buf, text in regions:
            if start < covered:
                # e.g. a nested buffer's data region that contains its own
                # annotated parts; skip the overlap
                continue
            if start > covered:
                out.append(self.fmt(covered, start - covered, None,
                                    "padding"))
                if any(self.data[covered:start]):
                    bad.append(covered)
            out.append(self.fmt(start, length, buf, text))
            covered = start + length
        if covered < len(self.data):
            out.append(self.fmt(covered, len(self.data) - covered, None,
                                "padding (end)"))
        if bad:
            out.append("!! non-zero padding at %s" % bad)
        return out

    def fmt(self, start, length, buf, text):
        chunk = self.data[start:start + length]
        first = " ".join("%02x" % b for b in chunk[:8])
        if length > 8:
            first += " .."
        where = ""
        if buf and buf[1]:
            where = "%s+%04x" % (buf[0], start - buf[1])
        return "+%04x %-16s %-26s %s" % (start, where, first, text) + (
            "" if length <= 8 else "  [%d bytes]" % length)


def annotate(data):
    kind = IDENTIFIERS.get(bytes(data[4:8]))
    if not kind:
        sys.exit("not a cdnn artifact (identifier %r)" % bytes(data[4:8]))
    a = Annotator(data)
    a.buffer(0, len(data), kind, (kind, 0))
    return "\n".join(a.lines())


def make_plan(lib_path, graph_json, out):
    lib = ctypes.CDLL(lib_path)
    P = ctypes.c_void_p
    lib.cdnn_last_error.restype = ctypes.c_char_p
    h, g = P(), P()
    size = ctypes.c_size_t()
    text = open(graph_json, "rb").read()

    def ok(st, what):
        if st:
            sys.exit("%s: %s" % (what, lib.cdnn_last_error().decode()))
    ok(lib.cdnn_handle_create(ctypes.byref(h), b"cpu"), "handle")
    ok(lib.cdnn_graph_from_json(ctypes.byref(g), text,
                                ctypes.c_size_t(len(text))), "from_json")
    ok(lib.cdnn_graph_build(g, h, None), "build")
    ok(lib.cdnn_graph_save(g, 2, None, ctypes.c_size_t(0),
                           ctypes.byref(size)), "save")
    buf = ctypes.create_string_buffer(size.value)
    ok(lib.cdnn_graph_save(g, 2, buf, size, ctypes.byref(size)), "save")
    with open(out, "wb") as f:
        f.write(buf.raw[:size.value])


def main():
    args = sys.argv[1:]
    if len(args) == 4 and args[0] == "--make":
        make_plan(args[1], args[2], args[3])
        path = args[3]
    elif len(args) == 1:
        path = args[0]
    else:
        sys.exit(__doc__)
    with open(path, "rb") as f:
        print(annotate(f.read()))


if __name__ == "__main__":
    main()
