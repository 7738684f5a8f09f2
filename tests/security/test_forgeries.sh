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
# shellcheck source=tests/security/forgeries_lib.sh
. "$(dirname "$0")/forgeries_lib.sh"
forgeries_init forgeries ${4:+"$4" base forged}

# engine  example graph
while read -r engine graph; do
  [ -n "$engine" ] || continue
  build_forms "$(echo "$engine" | sed 's/^cpu://')__$graph" "$src/examples/$graph.json" \
    "$engine" plan graph+plan
done <<'LIST'
cpu:blas_conv conv_fwd
cpu:blas_conv conv_bias_relu
cpu:blas_matmul matmul_bias_gelu_residual
cpu:fused_pointwise pointwise
cpu:reference sdpa
cpu:reference conv_bias_relu
cpu:reference matmul_bias_gelu_residual
LIST

host_pack kernels:matmul_host matmul norm
while read -r engine graph; do
  build_forms "$(echo "$engine" | sed 's/^kernels://')__$graph" "$src/examples/$graph.json" \
    "$engine" plan graph+plan
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

forge forged

status=0
echo "== normal mode"
env -u CDNN_TRUSTED_CODE "$runner" "$work/forged" || status=1
echo "== strict mode"
CDNN_TRUSTED_CODE=pack "$runner" "$work/forged" || status=1

forgeries_finish $status "every forgery, both modes"
