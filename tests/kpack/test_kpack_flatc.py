#!/usr/bin/python3
"""Kernel packs read and written by implementations no one here wrote.

usage: test_kpack_flatc.py CDNN_CLI SCHEMA_DIR DESCRIPTOR_DIR

Run with Debian's /usr/bin/python3 (python3-flatbuffers) and flatc
(flatbuffers-compiler) on PATH; without them the test is skipped (exit 77).

  1. `cdnn pack build` makes a pack from the test descriptors.
  2. The header is read with struct and checked against docs/FORMATS.md
     section 9: magic, version, header size, flags, the TOC 64-aligned at
     the end of the file, and the digest, SHA-256(header[0:32] + TOC).
  3. The TOC is read with the classes `flatc --python` generates from
     schema/kernel_pack.fbs, and every field is compared with the
     descriptors (parsed here with json) and the object files (hashed here
     with hashlib); code objects are 64-aligned, identical or disjoint, the
     bytes between them zero, each the object file's bytes.
  4. `flatc --json` decodes the TOC; it agrees with the python reading, and
     so does `cdnn pack list --json`.
  5. A pack written here with python3-flatbuffers' Builder (its own layout:
     4-aligned byte vectors, shared vtables, another field order) is
     accepted by `cdnn pack verify` and lists exactly as cdnn's own; the
     same pack re-sealed as format 2.0 is refused as too new.

One line per step, "PASS name" or "FAIL name: why"; exit 1 if any failed.
"""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

try:
    import flatbuffers
except ImportError:
    print("SKIP: python3-flatbuffers is not installed")
    sys.exit(77)
FLATC = shutil.which("flatc")
if not FLATC:
    print("SKIP: flatc (flatbuffers-compiler) is not installed")
    sys.exit(77)

CLI, SCHEMA_DIR, DESCRIPTORS = sys.argv[1:4]
SCHEMA = os.path.join(SCHEMA_DIR, "kernel_pack.fbs")
FILES = ["matmul.json", "softmax.json"]
failures = 0


def check(name, fn):
    global failures
    try:
        fn()
        print("PASS", name)
    except Exception as e:  # one line per failing step, then go on
        failures += 1
        print("FAIL %s: %r" % (name, e))


def run(*args, expect=0):
    p = subprocess.run([CLI] + list(args), capture_output=True, text=True)
    assert p.returncode == expect, "%s exited %d: %s" % (args, p.returncode, p.stderr)
    return p


def descriptors():
    return [json.load(open(os.path.join(DESCRIPTORS, f))) for f in FILES]


def object_bytes(candidate):
    return open(os.path.join(DESCRIPTORS, candidate["object"]), "rb").read()


# ---- the header --------------------------------------------------------------------

def header(b):
    magic, major, minor, size, flags, toc_at, toc_size = struct.unpack_from("<4sHHIIQQ", b)
    return dict(magic=magic, major=major, minor=minor, size=size, flags=flags,
                toc_at=toc_at, toc_size=toc_size, sha256=b[32:64])


def check_header(b):
    h = header(b)
    assert h["magic"] == b"CDKP" and (h["major"], h["minor"]) == (1, 0), h
    assert h["size"] == 64 and h["flags"] == 0, h
    assert h["toc_at"] % 64 == 0 and h["toc_at"] + h["toc_size"] == len(b), h
    toc = b[h["toc_at"]:]
    assert hashlib.sha256(b[:32] + toc).digest() == h["sha256"], "digest"
    assert toc[4:8] == b"CDKT", toc[4:8]


# ---- the TOC through flatc's python classes ----------------------------------------

def text(s):
    return None if s is None else s.decode()


def read_toc(toc):
    from cdnn.fb.KernelPackToc import KernelPackToc
    assert KernelPackToc.KernelPackTocBufferHasIdentifier(toc, 0)
    t = KernelPackToc.GetRootAs(toc, 0)
    kernels = []
    for i in range(t.KernelsLength()):
        k = t.Kernels(i)
        kernels.append(dict(
            id=text(k.Id()), symbol=text(k.Symbol()), target=text(k.Target()),
            offset=k.Offset(), size=k.Size(),
            sha256=bytes(k.Sha256(j) for j in range(k.Sha256Length())).hex(),
            signature=text(k.Signature()),
            metadata={text(k.Metadata(m).Key()): text(k.Metadata(m).Value())
                      for m in range(k.MetadataLength())}))
    engines = []
    for i in range(t.EnginesLength()):
        e = t.Engines(i)
        engines.append(dict(
            name=text(e.Name()), rank=e.Rank(), match=text(e.Match()),
            constraints_json=text(e.ConstraintsJson()),
            handler=dict(name=text(e.HandlerName()), version=e.HandlerVersion()),
            knobs=[dict(name=text(e.Knobs(k).Name()), min=e.Knobs(k).MinValue(),
                        max=e.Knobs(k).MaxValue(), default=e.Knobs(k).DefaultValue(),
                        description=text(e.Knobs(k).Description()))
                   for k in range(e.KnobsLength())],
            candidates=[text(e.Candidates(c)) for c in range(e.CandidatesLength())]))
    return dict(format="%d.%d" % (t.FormatMajor(), t.FormatMinor()), name=text(t.PackName()),
                version=text(t.PackVersion()), target_family=text(t.TargetFamily()),
                kernels=kernels, engines=engines)


def check_against_descriptors(b, toc):
    assert (toc["name"], toc["version"], toc["target_family"], toc["format"]) == \
        ("cdnn-host", "0.2.0", "host", "1.0"), toc
    kernels = {k["id"]: k for k in toc["kernels"]}
    want_ids = []
    for d, e in zip(descriptors(), toc["engines"]):
        assert e["name"] == d["engine"] and e["rank"] == d["rank"] and e["match"] == d["match"]
        assert e["handler"] == d["handler"] and e["candidates"] == [c["kernel"] for c in
                                                                   d["candidates"]]
        assert json.loads(e["constraints_json"]) == d.get("constraints", {})
        assert e["constraints_json"] == json.dumps(d.get("constraints", {}), sort_keys=True,
                                                   separators=(",", ":"))
        assert e["knobs"] == d.get("knobs", []), (e["knobs"], d.get("knobs"))
        for c in d["candidates"]:
            want_ids.append(c["kernel"])
            k, code = kernels[c["kernel"]], object_bytes(c)
            assert (k["target"], k["symbol"], k["signature"]) == \
                (c["target"], c["symbol"], c["signature"])
            assert k["metadata"] == c.get("metadata", {})
            assert list(k["metadata"]) == sorted(k["metadata"]), "metadata sorted by key"
            assert k["sha256"] == hashlib.sha256(code).hexdigest()
            assert b[k["offset"]:k["offset"] + k["size"]] == code
    assert [k["id"] for k in toc["kernels"]] == want_ids


def check_layout(b, toc):
    ranges = sorted({(k["offset"], k["size"]) for k in toc["kernels"]})
    covered = 64
    for offset, size in ranges:
        assert offset % 64 == 0 and offset >= covered, (offset, covered)
        assert b[covered:offset] == bytes(offset - covered), "padding"
        covered = offset + size
    assert b[covered:header(b)["toc_at"]] == bytes(header(b)["toc_at"] - covered)
    assert len(ranges) == 3, "the two softmax kernels share one code object"


# ---- flatc --json and cdnn pack list --json --------------------------------------------

def flatc_json(toc, work):
    path = os.path.join(work, "toc.bin")
    open(path, "wb").write(toc)
    subprocess.run([FLATC, "--json", "--strict-json", "--raw-binary", "--defaults-json",
                    "-o", work, SCHEMA, "--", path], check=True)
    j = json.load(open(os.path.join(work, "toc.json")))
    return dict(format="%d.%d" % (j["format_major"], j["format_minor"]), name=j["pack_name"],
                version=j["pack_version"], target_family=j["target_family"],
                kernels=[dict(id=k["id"], symbol=k["symbol"], target=k["target"],
                              offset=k["offset"], size=k["size"],
                              sha256=bytes(k["sha256"]).hex(), signature=k["signature"],
                              metadata={m["key"]: m["value"] for m in k.get("metadata", [])})
                         for k in j["kernels"]],
                engines=[dict(name=e["name"], rank=e["rank"], match=e["match"],
                              constraints_json=e["constraints_json"],
                              handler=dict(name=e["handler_name"],
                                           version=e["handler_version"]),
                              knobs=[dict(name=k["name"], min=k["min_value"],
                                          max=k["max_value"], default=k["default_value"],
                                          description=k["description"])
                                     for k in e.get("knobs", [])],
                              candidates=e["candidates"])
                         for e in j["engines"]])


def cdnn_list(path):
    j = json.loads(run("pack", "list", "--json", path).stdout)
    assert j.pop("ok") is True
    for e in j["engines"]:
        del e["id"]  # derived from the name, not in the TOC
    for key in ("file", "size", "sha256"):
        del j[key]
    return j


# ---- a pack written by python3-flatbuffers --------------------------------------------

def python_toc(toc):
    """The TOC of toc (a read_toc dict), laid out by python's Builder its own way:
    fields in reverse id order, strings after the vectors, 4-aligned bytes."""
    import cdnn.fb.Engine as E
    import cdnn.fb.Kernel as K
    import cdnn.fb.KernelPackToc as T
    import cdnn.fb.KeyValue as KV
    import cdnn.fb.Knob as N
    b = flatbuffers.Builder(0)

    def strings_vector(items):
        refs = [b.CreateString(s) for s in items]
        b.StartVector(4, len(refs), 4)
        for r in reversed(refs):
            b.PrependUOffsetTRelative(r)
        return b.EndVector()

    def tables_vector(refs):
        b.StartVector(4, len(refs), 4)
        for r in reversed(refs):
            b.PrependUOffsetTRelative(r)
        return b.EndVector()

    kernel_refs = []
    for k in toc["kernels"]:
        kvs = []
        for key, value in k["metadata"].items():
            key_ref, value_ref = b.CreateString(key), b.CreateString(value)
            KV.Start(b)
            KV.AddValue(b, value_ref)
            KV.AddKey(b, key_ref)
            kvs.append(KV.End(b))
        meta = tables_vector(kvs)
        sha = b.CreateByteVector(bytes.fromhex(k["sha256"]))
        refs = [b.CreateString(k[f]) for f in ("signature", "target", "symbol", "id")]
        K.Start(b)
        K.AddMetadata(b, meta)
        K.AddSignature(b, refs[0])
        K.AddSha256(b, sha)
        K.AddSize(b, k["size"])
        K.AddOffset(b, k["offset"])
        K.AddTarget(b, refs[1])
        K.AddSymbol(b, refs[2])
        K.AddId(b, refs[3])
        kernel_refs.append(K.End(b))
    kernels = tables_vector(kernel_refs)
    engine_refs = []
    for e in toc["engines"]:
        knob_refs = []
        for n in e["knobs"]:
            name, description = b.CreateString(n["name"]), b.CreateString(n["description"])
            N.Start(b)
            N.AddDefaultValue(b, n["default"])
            N.AddMaxValue(b, n["max"])
            N.AddMinValue(b, n["min"])
            N.AddDescription(b, description)
            N.AddName(b, name)
            knob_refs.append(N.End(b))
        knobs = tables_vector(knob_refs)
        candidates = strings_vector(e["candidates"])
        refs = [b.CreateString(s) for s in (e["handler"]["name"], e["constraints_json"],
                                            e["match"], e["name"])]
        E.Start(b)
        E.AddCandidates(b, candidates)
        E.AddKnobs(b, knobs)
        E.AddHandlerVersion(b, e["handler"]["version"])
        E.AddHandlerName(b, refs[0])
        E.AddConstraintsJson(b, refs[1])
        E.AddMatch(b, refs[2])
        E.AddRank(b, e["rank"])
        E.AddName(b, refs[3])
        engine_refs.append(E.End(b))
    engines = tables_vector(engine_refs)
    refs = [b.CreateString(toc[f]) for f in ("target_family", "version", "name")]
    T.Start(b)
    T.AddEngines(b, engines)
    T.AddKernels(b, kernels)
    T.AddTargetFamily(b, refs[0])
    T.AddPackVersion(b, refs[1])
    T.AddPackName(b, refs[2])
    T.AddFormatMinor(b, 0)
    T.AddFormatMajor(b, 1)
    b.Finish(T.End(b), file_identifier=b"CDKT")
    return bytes(b.Output())


def seal(body, toc, major=1):
    """cdnn's header and code objects (body = bytes before its TOC), then toc."""
    toc_at = len(body)
    head = struct.pack("<4sHHIIQQ", b"CDKP", major, 0, 64, 0, toc_at, len(toc))
    return head + hashlib.sha256(head + toc).digest() + body[64:] + toc


def main():
    work = tempfile.mkdtemp()
    try:
        subprocess.run([FLATC, "--python", "-o", os.path.join(work, "gen"), SCHEMA], check=True)
        sys.path.insert(0, os.path.join(work, "gen"))
        pack = os.path.join(work, "host.kpack")
        run("pack", "build", *[os.path.join(DESCRIPTORS, f) for f in FILES], "-o", pack,
            "--version", "0.2.0")
        b = open(pack, "rb").read()
        toc_bytes = b[header(b)["toc_at"]:]
        check("header and digest", lambda: check_header(b))
        toc = read_toc(toc_bytes)
        check("TOC against the descriptors and objects",
              lambda: check_against_descriptors(b, toc))
        check("code objects aligned, shared or disjoint, zero between",
              lambda: check_layout(b, toc))

        def agree_flatc():
            assert flatc_json(toc_bytes, work) == toc, "flatc --json differs"
        check("flatc --json reads the same TOC", agree_flatc)

        def agree_cdnn():
            assert cdnn_list(pack) == toc, (cdnn_list(pack), toc)
        check("cdnn pack list --json reads the same", agree_cdnn)

        def python_writer():
            theirs = os.path.join(work, "python.kpack")
            open(theirs, "wb").write(seal(b[:header(b)["toc_at"]], python_toc(toc)))
            assert open(theirs, "rb").read() != b, "python's layout should differ"
            run("pack", "verify", theirs)
            assert cdnn_list(theirs) == toc
            newer = os.path.join(work, "newer.kpack")
            open(newer, "wb").write(seal(b[:header(b)["toc_at"]], python_toc(toc), major=2))
            p = run("pack", "verify", newer, expect=1)
            assert "cannot be read by this cdnn: it is in kernel pack format 2.0" in p.stderr
        check("a pack python3-flatbuffers wrote verifies and lists alike", python_writer)
    finally:
        shutil.rmtree(work)
    sys.exit(1 if failures else 0)


main()
