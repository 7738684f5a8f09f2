#!/bin/sh
# test_cli_inspect_kernels.sh CDNN HOST_PACK EXAMPLES_DIR -- `cdnn inspect`
# shows the kernel a kernels:* plan carries: its id, target, symbol,
# signature, handler, and its code object's size and SHA-256, as text and
# as JSON.  The oracle is independent of inspect: the pack's own listing
# (`cdnn pack list --json`), python's hashlib over the pack's bytes at the
# kernel's offset, and the code object's bytes found whole inside the plan.
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
cdnn=$1
pack=$2
examples=$3
python=/usr/bin/python3
[ -f "$pack" ] || { echo "SKIP: no host pack at $pack"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CDNN_KERNEL_PATH=$(dirname "$pack")
CDNN_DISABLE_CACHE=1
export CDNN_KERNEL_PATH CDNN_DISABLE_CACHE

graph=$examples/matmul_bias_gelu_residual.json
"$cdnn" build "$graph" --engine kernels:matmul_host --form plan -o "$tmp/k.cdp" >/dev/null ||
    fail "build on kernels:matmul_host"
"$cdnn" build "$graph" --engine kernels:matmul_host --form graph+plan -o "$tmp/k.cdgp" \
    >/dev/null || fail "build a container on kernels:matmul_host"
"$cdnn" build "$graph" --engine cpu:reference --form plan -o "$tmp/cpu.cdp" >/dev/null ||
    fail "build on cpu:reference"
"$cdnn" pack list "$pack" --json >"$tmp/pack.json" || fail "pack list"

echo "== --json: the kernel's fields, against the pack and the plan's bytes"
for artifact in k.cdp k.cdgp; do
    "$cdnn" inspect "$tmp/$artifact" --json >"$tmp/$artifact.json" ||
        fail "inspect $artifact --json"
    $python - "$tmp/$artifact.json" "$tmp/pack.json" "$pack" "$tmp/$artifact" <<'PY' ||
import hashlib, json, sys
info = json.load(open(sys.argv[1]))
listing = json.load(open(sys.argv[2]))
pack = open(sys.argv[3], "rb").read()
plan = open(sys.argv[4], "rb").read()
kernels = info["plan"]["kernels"]
assert len(kernels) == 1, "one kernel expected: %r" % kernels
k = kernels[0]
entry = [e for e in listing["kernels"] if e["id"] == k["id"]]
assert entry, "kernel %s is not in the pack" % k["id"]
e = entry[0]
for field in ("target", "symbol", "signature", "sha256"):
    assert k[field] == e[field], "%s: inspect %r, pack %r" % (field, k[field], e[field])
assert k["bytes"] == e["size"], "bytes: inspect %d, pack %d" % (k["bytes"], e["size"])
code = pack[e["offset"]:e["offset"] + e["size"]]
assert hashlib.sha256(code).hexdigest() == k["sha256"], "the SHA-256 is not the code's"
assert code in plan, "the plan does not hold the code object inspect describes"
assert k["handler"] == "host_matmul" and k["handler_version"] >= 1, k
assert k["pack"] == listing["name"], (k["pack"], listing["name"])
print("ok: %s: %s %s %s, %d B, sha256 %s..." % (sys.argv[4].split("/")[-1], k["id"],
      k["target"], k["symbol"], k["bytes"], k["sha256"][:16]))
PY
    fail "inspect $artifact --json disagrees with the pack"
done

echo "== text: the same fields"
"$cdnn" inspect "$tmp/k.cdp" >"$tmp/k.txt" || fail "inspect (text)"
id=$($python -c 'import json,sys; print(json.load(open(sys.argv[1]))["plan"]["kernels"][0]["id"])' "$tmp/k.cdp.json")
sha=$($python -c 'import json,sys; print(json.load(open(sys.argv[1]))["plan"]["kernels"][0]["sha256"])' "$tmp/k.cdp.json")
grep -q "^kernels  *1$" "$tmp/k.txt" || fail "no 'kernels 1' line"
grep -q "^  kernel  *$id$" "$tmp/k.txt" || fail "no kernel id line"
grep -q "^  sha256  *$sha$" "$tmp/k.txt" || fail "no sha256 line"
for field in target symbol signature handler "code object"; do
    grep -q "^  $field  " "$tmp/k.txt" || fail "no '$field' line"
done

echo "== a plan of another provider lists no kernel"
"$cdnn" inspect "$tmp/cpu.cdp" --json >"$tmp/cpu.json" || fail "inspect cpu plan"
$python -c 'import json,sys; assert json.load(open(sys.argv[1]))["plan"]["kernels"] == []' \
    "$tmp/cpu.json" || fail "a cpu plan lists kernels"
if "$cdnn" inspect "$tmp/cpu.cdp" | grep -q "^kernels"; then fail "cpu plan: kernels shown"; fi
echo "== a kernel payload whose code is not its SHA-256 (re-sealed) fails the inspection"
# Forged with tests/security/forge.py's codec: the plan's digest is right,
# the payload's own checks (the provider's, in the SDK) are not met.
security=$(cd "$examples/../tests/security" && pwd)
if $python -c 'import flatbuffers' 2>/dev/null; then
    $python - "$security" "$tmp/k.cdp" "$tmp/forged.cdp" <<'PY' || fail "forging"
import sys
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[1])
import forge
parts = forge.PlanParts(open(sys.argv[2], "rb").read(), "k.cdp")
body, payload, graph = parts.parts()
code = payload["code"]
payload["code"] = code[:100] + bytes([code[100] ^ 1]) + code[101:]
open(sys.argv[3], "wb").write(parts.build(body, payload, graph))
PY
    if "$cdnn" inspect "$tmp/forged.cdp" --json >"$tmp/forged.json" 2>"$tmp/forged.err"; then
        fail "inspect accepted a kernel payload whose code is not its SHA-256"
    fi
    grep -q '"status": "CORRUPT_DATA"' "$tmp/forged.json" || fail "status is not CORRUPT_DATA"
    grep -q "SHA-256 of its code object is not its kernel_sha256" "$tmp/forged.err" ||
        fail "the message does not say what is wrong: $(cat "$tmp/forged.err")"
else
    echo "skipped: no python3-flatbuffers"
fi
echo "PASS"
