#!/bin/sh
# test_default_packs.sh CDNN PACK EXAMPLES -- the kernel pack the build makes
# (kernels/packs.cmake) is found where the provider looks with no
# environment, verifies, and each of its engines builds, saves, runs and
# resaves an example graph: what a user of a plain `make build` gets.
set -eu
cdnn=$1
pack=$2
examples=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The default search path, <libdir>/cdnn/kernels, and nothing else.
unset CDNN_KERNEL_PATH
export CDNN_DISABLE_CACHE=1

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

"$cdnn" pack verify "$pack" || fail "cdnn pack verify $pack"

"$cdnn" engines >"$tmp/engines"
for engine in matmul_host pointwise_host norm_host reduce_host conv_host softmax_host; do
    grep -q " kernels:$engine " "$tmp/engines" ||
        fail "cdnn engines lists no kernels:$engine: $(cat "$tmp/engines")"
done

# ENGINE GRAPH: built pinned to ENGINE, checked against cpu:reference, and
# resaved to the same bytes.
round_trip() {
    engine=kernels:$1
    n=$tmp/$(basename "$2" .json)
    echo "== $engine on $2"
    "$cdnn" build "$2" -o "$n.cdgp" --engine "$engine" >"$tmp/out" 2>&1 ||
        fail "build $2 --engine $engine: $(cat "$tmp/out")"
    grep -q "engine $engine" "$tmp/out" || fail "$2 not built on $engine: $(cat "$tmp/out")"
    "$cdnn" run "$n.cdgp" --check >"$tmp/out" 2>&1 ||
        fail "run $n.cdgp --check: $(cat "$tmp/out")"
    grep -q "every output matches" "$tmp/out" || fail "run --check: $(cat "$tmp/out")"
    "$cdnn" resave "$n.cdgp" -o "$n.re.cdgp" >"$tmp/out" 2>&1 ||
        fail "resave $n.cdgp: $(cat "$tmp/out")"
    cmp "$n.cdgp" "$n.re.cdgp" || fail "$n.cdgp resaves to other bytes"
}
# Three examples made fit for the host kernels: pointwise.json's clipped
# leaky relu (which they lack) a tanh, reduction.json's first reduction
# alone (they run one reduction node), and conv_bias_relu.json's tensors
# channels-last (NHWC, the filter KRSC), the layout of the conv kernels.
/usr/bin/python3 - "$examples" "$tmp" <<'PY'
import json, sys
examples, tmp = sys.argv[1:]
g = json.load(open(examples + "/pointwise.json"))
node = next(n for n in g["nodes"] if n["name"] == "relu6")
node["name"], node["attr"] = "tanh", {"mode": "TanhFwd"}
json.dump(g, open(tmp + "/pointwise_tanh.json", "w"))
g = json.load(open(examples + "/reduction.json"))
g["nodes"] = g["nodes"][:1]
used = {io["uid"] for io in g["nodes"][0]["inputs"] + g["nodes"][0]["outputs"]}
g["tensors"] = [t for t in g["tensors"] if t["uid"] in used]
json.dump(g, open(tmp + "/reduction_one.json", "w"))
g = json.load(open(examples + "/conv_bias_relu.json"))
for t in g["tensors"]:
    if len(t.get("dims", [])) == 4 and t["name"] != "bias":
        n, c, h, w = t["dims"]
        t["strides"] = [c * h * w, 1, w * c, c]
json.dump(g, open(tmp + "/conv_bias_relu_nhwc.json", "w"))
PY

round_trip matmul_host "$examples/matmul_bias_gelu_residual.json"
round_trip pointwise_host "$tmp/pointwise_tanh.json"
round_trip norm_host "$examples/layernorm.json"
round_trip norm_host "$examples/rmsnorm.json"
round_trip reduce_host "$tmp/reduction_one.json"
round_trip conv_host "$tmp/conv_bias_relu_nhwc.json"
round_trip softmax_host "$examples/softmax.json"
echo "default packs: kernels:* found with no CDNN_KERNEL_PATH, and each round-trips"
