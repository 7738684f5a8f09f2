#!/bin/sh
# Issue 8: plans and containers edited and re-sealed by someone who is not
# cdnn must be refused when their parts disagree, and whatever loads must
# stay inside the buffers the plan declares.
#
# usage: test_forgeries.sh CDNN_CLI RUN_FORGERIES SOURCE_DIR [WORK_DIR]
#
#   1. base artifacts: the example graphs built with the CLI on the CPU, one
#      engine each, saved as a plan (.cdp) and a graph+plan container (.cdgp),
#      the same on the kernels provider's host engines (kernels:matmul_host,
#      kernels:norm_host), whose payload carries a code object, and the
#      format 1.0 fixtures of tests/fixtures/v1.0 when present;
#   2. tests/security/forge.py forges from them (its self-check first proves
#      that it rebuilds every base artifact byte for byte);
#   3. run_forgeries loads and runs every forgery, in normal mode and in
#      strict mode (CDNN_TRUSTED_CODE=pack).
#
# WORK_DIR (default: a new directory under /tmp) keeps the artifacts; a
# temporary one is removed when everything passed and kept otherwise.
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 CDNN_CLI RUN_FORGERIES SOURCE_DIR [WORK_DIR]" >&2
  exit 2
fi
cli=$1
runner=$2
src=$3
python=/usr/bin/python3

if ! $python -c 'import flatbuffers' 2>/dev/null; then
  echo "SKIP: $python cannot import flatbuffers (apt-get install python3-flatbuffers)"
  exit 77
fi
if [ $# -ge 4 ]; then
  work=$4
  temporary=0
  rm -rf "$work/base" "$work/forged"
else
  work=$(mktemp -d /tmp/cdnn-forgeries.XXXXXX) || exit 1
  temporary=1
fi
mkdir -p "$work/base" || exit 1

# Building must neither read nor write the user's winner cache.
CDNN_DISABLE_CACHE=1
export CDNN_DISABLE_CACHE
unset CDNN_FORCE_BENCHMARKING

fail() {
  echo "FAIL: $*"
  echo "artifacts kept in $work"
  exit 1
}

# engine  example graph
while read -r engine graph; do
  [ -n "$engine" ] || continue
  name=$(echo "$engine" | sed 's/^cpu://')__$graph
  for form in plan graph+plan; do
    ext=cdp
    [ $form = plan ] || ext=cdgp
    "$cli" build "$src/examples/$graph.json" --engine "$engine" --form $form \
      -o "$work/base/$name.$ext" >/dev/null ||
      fail "cdnn build $graph.json --engine $engine --form $form"
  done
done <<'LIST'
cpu:blas_conv conv_fwd
cpu:blas_conv conv_bias_relu
cpu:blas_matmul matmul_bias_gelu_residual
cpu:fused_pointwise pointwise
cpu:reference sdpa
cpu:reference conv_bias_relu
cpu:reference matmul_bias_gelu_residual
LIST

# Plans that carry code: the kernels provider's host engines.  A sanitizer
# build makes no kernel pack of its own (kernels/packs.cmake), so one is
# made here from the build's host objects, which the sanitized process that
# loads them provides the runtime for.
if ! "$cli" engines | grep -q "kernels:matmul_host"; then
  objects=$(cd "$(dirname "$cli")/.." && pwd)/kernels/host
  mkdir -p "$work/kernels"
  "$cli" pack build "$src/kernels/descriptors/host/matmul.json" \
    "$src/kernels/descriptors/host/norm.json" --objects "$objects" \
    -o "$work/kernels/host.kpack" >/dev/null ||
    fail "no kernels:matmul_host engine, and no pack could be made from $objects"
  CDNN_KERNEL_PATH=$work/kernels
  export CDNN_KERNEL_PATH
fi
while read -r engine graph; do
  name=$(echo "$engine" | sed 's/^kernels://')__$graph
  for form in plan graph+plan; do
    ext=cdp
    [ $form = plan ] || ext=cdgp
    "$cli" build "$src/examples/$graph.json" --engine "$engine" --form $form \
      -o "$work/base/$name.$ext" >/dev/null ||
      fail "cdnn build $graph.json --engine $engine --form $form"
  done
done <<'LIST'
kernels:matmul_host matmul_bias_gelu_residual
kernels:norm_host layernorm
kernels:norm_host rmsnorm
LIST

# Artifacts an older cdnn wrote (format 1.0: containers without their own
# SHA-256, graphs without a digest) still load, so a forger may write that
# format too: forge from them as well.
if [ -d "$src/tests/fixtures/v1.0" ]; then
  for f in "$src/tests/fixtures/v1.0"/*.cdp "$src/tests/fixtures/v1.0"/*.cdgp; do
    [ -f "$f" ] && cp "$f" "$work/base/v1.0__$(basename "$f")"
  done
fi

"$cli" engines --json --knobs >"$work/engines.json" || fail "cdnn engines --json --knobs"
$python "$src/tests/security/forge.py" "$work/base" "$work/forged" "$work/engines.json" ||
  fail "forge.py"

status=0
echo "== normal mode"
env -u CDNN_TRUSTED_CODE "$runner" "$work/forged" || status=1
echo "== strict mode"
CDNN_TRUSTED_CODE=pack "$runner" "$work/forged" || status=1

if [ $status -ne 0 ]; then
  fail "forgeries were not handled as expected (the FAIL lines above)"
fi
[ $temporary -eq 1 ] && rm -rf "$work"
echo "PASS: every forgery, both modes"
exit 0
