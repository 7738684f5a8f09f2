#!/bin/sh
# test_lies.sh CHECKER MATMUL_JSON -- the descriptor check must refuse a
# descriptor that lies: each lie below is made in a copy of the real
# matmul descriptor, alone, and the checker must fail naming it.
set -u
checker=$1
real=$2
work=$(mktemp -d /tmp/cdnn-desc-lies.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
status=0

# lie NAME PYTHON_EDIT EXPECTED_MESSAGE: edit candidate 0 (c) of the copy.
lie() {
    mkdir -p "$work/$1"
    /usr/bin/python3 - "$real" "$work/$1/matmul.json" "$2" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
c = d["candidates"][0]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
    if out=$("$checker" "$work/$1" 2>&1); then
        echo "FAIL: $1: the checker accepted the lie"; status=1
    elif ! printf '%s\n' "$out" | grep -q -- "$3"; then
        echo "FAIL: $1: refused, but without '$3':"; printf '%s\n' "$out"; status=1
    else
        echo "ok: $1: $(printf '%s\n' "$out" | grep -m1 -- "$3")"
    fi
}

lie smem_small     'c["metadata"]["smem"] = str(int(c["metadata"]["smem"]) - 1024)' "metadata smem = "
lie threads_wrong  'c["metadata"]["threads"] = "96" if c["metadata"]["threads"] != "96" else "64"' "metadata threads = "
lie tile_swapped   'c["metadata"]["tile_m"], c["metadata"]["tile_n"] = c["metadata"]["tile_n"], c["metadata"]["tile_m"]' "metadata tile_m = "
lie dtype_wrong    'c["metadata"]["dtype"] = "bf16" if c["metadata"]["dtype"] != "bf16" else "f16"' "metadata dtype = "
lie smem_missing   'del c["metadata"]["smem"]' "metadata has no 'smem'"
lie no_counterpart 'c["symbol"] = "cdnn_cuda_matmul_f16_96x96"' "has no C counterpart"
lie signature      'c["signature"] = "cuda-norm-v1"' "signature cuda-norm-v1"
lie object_target  'c["object"] = c["object"].replace("sm_90a", "sm_80") if "sm_90a" in c["object"] else c["object"].replace("sm_80", "sm_90a")' "is compiled into"
exit $status
