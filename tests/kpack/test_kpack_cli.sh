#!/bin/sh
# test_kpack_cli.sh CDNN DESCRIPTORS -- `cdnn pack build/list/verify` on
# the small descriptors and dummy code objects in DESCRIPTORS
# (tests/kpack/descriptors): usage and exit codes, the same bytes from the
# same inputs, list in text and JSON, verify naming the kernel that fails,
# and each fault of a hostile descriptor refused with its file and JSON path.
set -eu
cdnn=$1
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_exit CODE WORDS COMMAND...: the command exits CODE and its stderr
# holds WORDS.
expect_exit() {
    want=$1 words=$2
    shift 2
    set +e
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    set -e
    [ "$got" -eq "$want" ] || fail "$* exited $got, not $want: $(cat "$tmp/err")"
    grep -qF -- "$words" "$tmp/err" || fail "$*: stderr lacks '$words': $(cat "$tmp/err")"
}

# ---- usage ------------------------------------------------------------------------------
for sub in "" build list verify; do
    out=$("$cdnn" pack $sub --help) || fail "pack $sub --help exited $?"
    echo "$out" | head -n 1 | grep -q "^usage: cdnn pack" || fail "pack $sub --help: $out"
done
"$cdnn" --help | grep -q "^  pack " || fail "the top-level usage does not list pack"
expect_exit 2 "usage: cdnn pack" "$cdnn" pack
expect_exit 2 "unknown subcommand 'frob'" "$cdnn" pack frob
expect_exit 2 "exactly one PACK is required" "$cdnn" pack list
expect_exit 2 "exactly one PACK is required" "$cdnn" pack verify a b
expect_exit 2 "usage: cdnn pack verify" "$cdnn" pack verify --json x
expect_exit 2 "-o PACK is required" "$cdnn" pack build "$src/matmul.json"
expect_exit 2 "at least one DESCRIPTOR is required" "$cdnn" pack build -o "$tmp/x.kpack"
expect_exit 2 "--name 'a b' is not a name" "$cdnn" pack build "$src/matmul.json" \
    -o "$tmp/x.kpack" --name "a b"

# ---- build: the same inputs, the same bytes -----------------------------------------
host="$tmp/host.kpack"
"$cdnn" pack build "$src/matmul.json" "$src/softmax.json" -o "$host" --version 0.2.0 \
    >"$tmp/report" || fail "pack build"
grep -q "^wrote $host: kernel pack cdnn-host 0.2.0 (host), 4 kernels, 2 engines" \
    "$tmp/report" || fail "build report: $(cat "$tmp/report")"
"$cdnn" pack build "$src/matmul.json" "$src/softmax.json" -o "$tmp/again.kpack" \
    --version 0.2.0 >/dev/null
cmp "$host" "$tmp/again.kpack" || fail "two builds of the same inputs differ"
# Descriptors elsewhere, objects found through --objects: the same bytes.
mkdir "$tmp/moved"
cp "$src/matmul.json" "$src/softmax.json" "$tmp/moved/"
"$cdnn" pack build "$tmp/moved/matmul.json" "$tmp/moved/softmax.json" --objects "$src" \
    -o "$tmp/moved.kpack" --version 0.2.0 >/dev/null
cmp "$host" "$tmp/moved.kpack" || fail "--objects made other bytes"
# To standard output: the same bytes, the report on stderr.
"$cdnn" pack build "$src/matmul.json" "$src/softmax.json" -o - --version 0.2.0 \
    >"$tmp/stdout.kpack" 2>"$tmp/err"
cmp "$host" "$tmp/stdout.kpack" || fail "-o - wrote other bytes"
grep -q "^wrote -:" "$tmp/err" || fail "-o -: the report is not on stderr"
"$cdnn" pack build "$src/cuda_matmul.json" -o "$tmp/cuda.kpack" --name test-cuda >/dev/null
"$cdnn" pack list "$tmp/cuda.kpack" | grep -q "^target family   cuda" || fail "cuda pack"

# ---- list ------------------------------------------------------------------------------
"$cdnn" pack list "$host" >"$tmp/list"
for words in "pack            cdnn-host 0.2.0" "target family   host" "kernels         4" \
             "  matmul_f32_8x8_v2" "    metadata    mr = 8" "engines         2" \
             "    handler     host_softmax v2" \
             "    candidates  softmax_rows_v2 softmax_cols_v2" \
             "    knob        kernels.matmul.tile [0, 1], default 0: candidate index"; do
    grep -qF -- "$words" "$tmp/list" || fail "list lacks '$words': $(cat "$tmp/list")"
done
# The JSON against the descriptors and the objects themselves.
"$cdnn" pack list --json "$host" >"$tmp/list.json"
/usr/bin/python3 - "$tmp/list.json" "$src" <<'PY'
import hashlib, json, os, sys
pack = json.load(open(sys.argv[1]))
src = sys.argv[2]
assert pack["ok"] is True and pack["name"] == "cdnn-host" and pack["version"] == "0.2.0"
assert pack["target_family"] == "host" and pack["format"] == "1.0"
kernels = {k["id"]: k for k in pack["kernels"]}
engines = [e for e in pack["engines"]]
def fnv1a(name):
    h = 0xcbf29ce484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return "0x%016x" % h
for i, name in enumerate(["matmul.json", "softmax.json"]):
    d = json.load(open(os.path.join(src, name)))
    e = engines[i]
    assert e["name"] == d["engine"] and e["id"] == fnv1a(d["engine"]), e
    assert e["rank"] == d["rank"] and e["match"] == d["match"]
    assert e["handler"] == d["handler"], e["handler"]
    assert json.loads(e["constraints_json"]) == d.get("constraints", {})
    assert e["knobs"] == [{"name": k["name"], "min": k["min"], "max": k["max"],
                           "default": k["default"], "description": k["description"]}
                          for k in d.get("knobs", [])]
    assert e["candidates"] == [c["kernel"] for c in d["candidates"]]
    for c in d["candidates"]:
        k = kernels[c["kernel"]]
        code = open(os.path.join(src, c["object"]), "rb").read()
        assert k["sha256"] == hashlib.sha256(code).hexdigest() and k["size"] == len(code)
        assert (k["target"], k["symbol"], k["signature"]) == (c["target"], c["symbol"],
                                                              c["signature"])
        assert k["metadata"] == c.get("metadata", {}) and k["offset"] % 64 == 0
assert len(kernels) == 4
assert kernels["softmax_rows_v2"]["offset"] == kernels["softmax_cols_v2"]["offset"]
PY

# ---- verify ---------------------------------------------------------------------------
"$cdnn" pack verify "$host" >"$tmp/verify" || fail "verify of an intact pack"
grep -q "^ok: 4 kernels, 2 engines" "$tmp/verify" || fail "verify: $(cat "$tmp/verify")"
# flip BYTE FILE OFFSET: one byte of a copy changed.
flip() {
    cp "$host" "$2"
    printf '\377' | dd of="$2" bs=1 seek="$1" conv=notrunc 2>/dev/null
}
offset=$("$cdnn" pack list --json "$host" | /usr/bin/python3 -c \
    'import json,sys; print([k for k in json.load(sys.stdin)["kernels"] if k["id"] == "matmul_f32_8x8_v2"][0]["offset"] + 3)')
flip "$offset" "$tmp/code.kpack"
"$cdnn" pack list "$tmp/code.kpack" >/dev/null || fail "list hashes no code object"
expect_exit 1 "the code objects of 1 of its 4 kernels do not match their SHA-256" \
    "$cdnn" pack verify "$tmp/code.kpack"
grep -q "^  FAILED  matmul_f32_8x8_v2: kernel pack '$tmp/code.kpack' is damaged: kernel 'matmul_f32_8x8_v2' (kernels\[1\]): its code object (117 bytes at offset 192) does not match its SHA-256" \
    "$tmp/out" || fail "verify does not name the kernel: $(cat "$tmp/out")"
grep -q "^  ok      matmul_f32_6x16_v3" "$tmp/out" || fail "verify stops at the first kernel"
size=$(wc -c <"$host")
flip $((size - 20)) "$tmp/toc.kpack"
expect_exit 1 "is damaged: the SHA-256 in its header does not match" \
    "$cdnn" pack verify "$tmp/toc.kpack"
expect_exit 1 "is damaged: the SHA-256 in its header does not match" \
    "$cdnn" pack list --json "$tmp/toc.kpack"
[ ! -s "$tmp/out" ] || fail "list printed on stdout for a damaged pack"
expect_exit 1 "cannot be opened: No such file" "$cdnn" pack verify "$tmp/none.kpack"
expect_exit 1 "does not start with \"CDKP\"" "$cdnn" pack verify "$src/matmul.json"

# ---- hostile descriptors: each fault alone, named by file and JSON path -------------
# refused WORDS JSON [more descriptors...]: a descriptor with JSON is refused
# with WORDS, and nothing is written.
refused() {
    words=$1
    printf '%s\n' "$2" >"$tmp/bad.json"
    shift 2
    expect_exit 1 "$words" "$cdnn" pack build "$tmp/bad.json" --objects "$src" \
        -o "$tmp/bad.kpack" "$@"
    [ ! -e "$tmp/bad.kpack" ] || fail "a failed build wrote $tmp/bad.kpack"
}
cand='{"kernel": "k1", "target": "x86-64-v2", "object": "objects/matmul.sm_90a.bin", "symbol": "s", "signature": "sig"}'
head='"engine": "kernels:e", "rank": 1, "match": "m", "handler": {"name": "h", "version": 1}'
ok="{$head, \"candidates\": [$cand]}"
printf '%s\n' "$ok" >"$tmp/ok.json"
"$cdnn" pack build "$tmp/ok.json" --objects "$src" -o "$tmp/ok.kpack" >/dev/null ||
    fail "the base of the hostile descriptors is refused"
refused "bad.json: line 2, column 0: string or '}' expected" "{$head,"
refused "duplicate object key" "{$head, \"rank\": 2, \"candidates\": [$cand]}"
refused "bad.json: \$: must be an object, not an array" "[1]"
refused "bad.json: \$: unknown key \"rnak\"" "{$head, \"rnak\": 1, \"candidates\": [$cand]}"
refused "\$.engine: 'cpu:e' must be kernels:<name>" \
    "{\"engine\": \"cpu:e\", \"rank\": 1, \"candidates\": []}"
refused "\$.engine: must be a name" "{\"engine\": \"kernels:a b\", \"candidates\": []}"
refused "\$.rank: must be an integer, not a string" \
    "{\"engine\": \"kernels:e\", \"rank\": \"1\", \"candidates\": [$cand]}"
refused "\$.rank: 3000000000 is outside [-2147483648, 2147483647]" \
    "{\"engine\": \"kernels:e\", \"rank\": 3000000000, \"candidates\": [$cand]}"
refused "\$.handler: is missing" \
    "{\"engine\": \"kernels:e\", \"rank\": 1, \"match\": \"m\", \"candidates\": [$cand]}"
refused "\$.handler.version: -1 is outside [0, 4294967295]" \
    "{\"engine\": \"kernels:e\", \"rank\": 1, \"match\": \"m\", \"handler\": {\"name\": \"h\", \"version\": -1}, \"candidates\": [$cand]}"
refused "\$.handler: unknown key \"verison\"" \
    "{\"engine\": \"kernels:e\", \"rank\": 1, \"match\": \"m\", \"handler\": {\"name\": \"h\", \"verison\": 1}, \"candidates\": [$cand]}"
refused "\$.constraints: must be an object, not an array" \
    "{$head, \"constraints\": [], \"candidates\": [$cand]}"
knob='"name": "kernels.m.tile", "min": 0, "max": 1, "description": "d"'
refused "\$.knobs[0].name: 'tile' must be kernels.<category>.<name>" \
    "{$head, \"knobs\": [{\"name\": \"tile\", \"min\": 0, \"max\": 1, \"default\": 0, \"description\": \"d\"}], \"candidates\": [$cand]}"
refused "\$.knobs[0].default: 9 is outside [0, 1]" \
    "{$head, \"knobs\": [{$knob, \"default\": 9}], \"candidates\": [$cand]}"
refused "\$.knobs[1]: knob 'kernels.m.tile' is declared twice (also \$.knobs[0])" \
    "{$head, \"knobs\": [{$knob, \"default\": 0}, {$knob, \"default\": 1}], \"candidates\": [$cand]}"
refused "\$.knobs[0].description: is missing" \
    "{$head, \"knobs\": [{\"name\": \"kernels.m.tile\", \"min\": 0, \"max\": 1, \"default\": 0}], \"candidates\": [$cand]}"
refused "\$.candidates: must not be empty" "{$head, \"candidates\": []}"
refused "\$.candidates: is missing" "{$head}"
refused "\$.candidates[0]: unknown key \"objcet\"" \
    "{$head, \"candidates\": [{\"kernel\": \"k\", \"objcet\": \"x\"}]}"
refused "\$.candidates[0].kernel: must be a name" \
    "{$head, \"candidates\": [{\"kernel\": \"k 1\", \"target\": \"x86-64-v2\"}]}"
refused "\$.candidates[0].target: 'x86-64-v5' is not a target cdnn knows" \
    "{$head, \"candidates\": [{\"kernel\": \"k\", \"target\": \"x86-64-v5\"}]}"
refused "\$.candidates[0].symbol: is missing" \
    "{$head, \"candidates\": [{\"kernel\": \"k\", \"target\": \"sm_80\", \"object\": \"o\"}]}"
with_object() { echo "{$head, \"candidates\": [{\"kernel\": \"k\", \"target\": \"compute_80\", \"symbol\": \"s\", \"signature\": \"g\", \"object\": \"$1\"}]}"; }
refused "\$.candidates[0].object: '/etc/passwd' must be a relative path inside its directory" \
    "$(with_object /etc/passwd)"
refused "\$.candidates[0].object: 'objects/../../x' must be a relative path" \
    "$(with_object objects/../../x)"
refused "objects/none.bin': No such file" "$(with_object objects/none.bin)"
: >"$tmp/empty.bin"
refused "\$.candidates[0].object: '$tmp/./empty.bin' is empty" "$(with_object ./empty.bin)" \
    --objects "$tmp"
refused "\$.candidates[0].metadata.mr: must be a string, not an integer" \
    "{$head, \"candidates\": [{\"kernel\": \"k\", \"target\": \"sm_80\", \"symbol\": \"s\", \"signature\": \"g\", \"metadata\": {\"mr\": 6}}]}"
refused "\$.candidates[0].metadata: must be an object of strings, not an array" \
    "{$head, \"candidates\": [{\"kernel\": \"k\", \"target\": \"sm_80\", \"symbol\": \"s\", \"signature\": \"g\", \"metadata\": []}]}"
refused "\$.candidates[0].target: 'sm_90a' is a cuda target, but the pack being built is for host" \
    "$(echo "$ok" | sed 's/kernels:e/kernels:f/')" "$src/cuda_matmul.json"
refused "\$.candidates[0].kernel: kernel id 'k1' is already defined by $tmp/bad.json: \$.candidates[0]" \
    "$(echo "$ok" | sed 's/kernels:e/kernels:g/')" "$tmp/ok.json"
refused "ok.json: \$.engine: engine 'kernels:e' is already defined by $tmp/bad.json" \
    "$(echo "$ok" | sed 's/"k1"/"k2"/')" "$tmp/ok.json"
expect_exit 1 "cannot open '$tmp/none.json'" "$cdnn" pack build "$tmp/none.json" -o "$tmp/n.kpack"
echo "pack CLI: ok"
