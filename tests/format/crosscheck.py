#!/usr/bin/python3
"""Cross-check flatbuf.c against implementations no one here wrote.

usage: crosscheck.py FB_DUMP [FLATC]

  1. our builder's buffer (fb_dump build) decoded by flatc --json
  2. flatc's buffer (flatc -b test_data.json) verified and read by our
     reader (fb_dump dump)
  3. our buffer read by python3-flatbuffers through code flatc --python
     generates (into a temporary directory; never committed)
  4. a buffer made by python3-flatbuffers' builder verified and read by
     our reader
  5. every truncation and single-byte change of each of those buffers is
     either refused with a message or verifies and reads (fb_dump fuzz;
     build fb_dump with ASan+UBSan to make that mean something)
Each must give the content of test_data.json.  Exits non-zero on the first
difference.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "test.fbs")
DATA = os.path.join(HERE, "test_data.json")


def run(*cmd):
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("FAIL: %s\n%s%s" % (" ".join(cmd), res.stdout, res.stderr))
    return res.stdout


def same(what, got, want):
    if got != want:
        sys.exit("FAIL: %s\n got:  %s\n want: %s" % (what, json.dumps(got),
                                                     json.dumps(want)))
    print("ok:", what)


def flatc_json(flatc, tmp, binary):
    """flatc's reading of a buffer, every scalar with its default."""
    run(flatc, "--json", "--raw-binary", "--strict-json", "--defaults-json",
        "-o", tmp, SCHEMA, "--", binary)
    base = os.path.splitext(os.path.basename(binary))[0]
    with open(os.path.join(tmp, base + ".json")) as f:
        return json.load(f)


def leaf_dict(leaf):
    d = {"weight": leaf.Weight()}
    if leaf.Name() is not None:
        d["name"] = leaf.Name().decode()
    return d


def python_read(tmp, binary):
    """Read a Root with python3-flatbuffers and flatc-generated code."""
    sys.path.insert(0, os.path.join(tmp, "py"))
    from cdnn.test.Root import Root
    from cdnn.test.Other import Other
    from cdnn.test.Leaf import Leaf
    with open(binary, "rb") as f:
        buf = bytearray(f.read())
    if not Root.RootBufferHasIdentifier(buf, 0):
        sys.exit("FAIL: python: identifier CDTS missing")
    r = Root.GetRootAs(buf, 0)
    d = {"b": r.B(), "i8v": r.I8v(), "u8v": r.U8v(), "u16v": r.U16v(),
         "i32v": r.I32v(), "i64v": r.I64v(), "u64v": r.U64v(),
         "f64v": r.F64v(), "name": r.Name().decode(),
         "longs": [r.Longs(i) for i in range(r.LongsLength())],
         "pairs": [{"tag": r.Pairs(i).Tag(), "value": r.Pairs(i).Value()}
                   for i in range(r.PairsLength())],
         "leaves": [leaf_dict(r.Leaves(i)) for i in range(r.LeavesLength())],
         "child": leaf_dict(r.Child()),
         "names": [r.Names(i).decode() for i in range(r.NamesLength())]}
    d["choice_type"] = ["NONE", "Leaf", "Other"][r.ChoiceType()]
    other = Other()
    t = r.Choice()
    other.Init(t.Bytes, t.Pos)
    d["choice"] = {"x": other.X(), "flag": other.Flag()}
    nested = bytes(r.Nested(i) for i in range(r.NestedLength()))
    d["nested"] = leaf_dict(Leaf.GetRootAs(bytearray(nested), 0))
    return d


def python_leaf(builder, name, weight):
    from cdnn.test import Leaf
    n = builder.CreateString(name) if name is not None else None
    Leaf.Start(builder)
    if n is not None:
        Leaf.AddName(builder, n)
    Leaf.AddWeight(builder, weight)
    return Leaf.End(builder)


def python_children(b, want):
    """Every object the root refers to, built before the root table."""
    import flatbuffers
    from cdnn.test import Root, Other, Pair
    inner = flatbuffers.Builder(64)
    inner.Finish(python_leaf(inner, want["nested"]["name"],
                             want["nested"]["weight"]))
    refs = {"nested": b.CreateByteVector(bytes(inner.Output()))}
    names = [b.CreateString(s) for s in want["names"]]
    b.StartVector(4, len(names), 4)
    for n in reversed(names):
        b.PrependUOffsetTRelative(n)
    refs["names"] = b.EndVector()
    Other.Start(b)
    Other.AddX(b, want["choice"]["x"])
    Other.AddFlag(b, want["choice"]["flag"])
    refs["choice"] = Other.End(b)
    refs["child"] = python_leaf(b, None, want["child"]["weight"])
    leaves = [python_leaf(b, x["name"], x["weight"]) for x in want["leaves"]]
    Root.StartLeavesVector(b, len(leaves))
    for x in reversed(leaves):
        b.PrependUOffsetTRelative(x)
    refs["leaves"] = b.EndVector()
    Root.StartPairsVector(b, len(want["pairs"]))
    for p in reversed(want["pairs"]):
        Pair.CreatePair(b, p["tag"], p["value"])
    refs["pairs"] = b.EndVector()
    Root.StartLongsVector(b, len(want["longs"]))
    for v in reversed(want["longs"]):
        b.PrependInt64(v)
    refs["longs"] = b.EndVector()
    refs["name"] = b.CreateString(want["name"])
    return refs


def python_build(tmp, want, out):
    sys.path.insert(0, os.path.join(tmp, "py"))
    import flatbuffers
    from cdnn.test import Root
    b = flatbuffers.Builder(1024)
    refs = python_children(b, want)
    Root.Start(b)
    for key, add in (("b", Root.AddB), ("i8v", Root.AddI8v),
                     ("u8v", Root.AddU8v), ("u16v", Root.AddU16v),
                     ("i32v", Root.AddI32v), ("i64v", Root.AddI64v),
                     ("u64v", Root.AddU64v), ("f64v", Root.AddF64v)):
        add(b, want[key])
    Root.AddChoiceType(b, 2)
    for key in refs:
        getattr(Root, "Add" + key.capitalize())(b, refs[key])
    b.Finish(Root.End(b), file_identifier=b"CDTS")
    with open(out, "wb") as f:
        f.write(b.Output())


def main():
    fb_dump = sys.argv[1]
    flatc = sys.argv[2] if len(sys.argv) > 2 else "/usr/bin/flatc"
    with open(DATA) as f:
        want = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        ours = os.path.join(tmp, "ours.bin")
        run(fb_dump, "build", ours)
        same("flatc reads our buffer", flatc_json(flatc, tmp, ours), want)
        same("our reader reads our buffer",
             json.loads(run(fb_dump, "dump", ours)), want)
        run(flatc, "-b", "-o", tmp, SCHEMA, DATA)
        theirs = os.path.join(tmp, "test_data.bin")
        same("our reader reads flatc's buffer",
             json.loads(run(fb_dump, "dump", theirs)), want)
        run(flatc, "--python", "-o", os.path.join(tmp, "py"), SCHEMA)
        same("python3-flatbuffers reads our buffer", python_read(tmp, ours),
             want)
        pyb = os.path.join(tmp, "python.bin")
        python_build(tmp, want, pyb)
        same("our reader reads python3-flatbuffers' buffer",
             json.loads(run(fb_dump, "dump", pyb)), want)
        same("python3-flatbuffers reads its own buffer",
             python_read(tmp, pyb), want)
        for name, path in (("our", ours), ("flatc's", theirs),
                           ("python's", pyb)):
            print("ok: every truncation and byte change of %s buffer: %s"
                  % (name, run(fb_dump, "fuzz", path).strip()))


if __name__ == "__main__":
    main()
