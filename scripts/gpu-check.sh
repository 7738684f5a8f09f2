#!/bin/sh
# gpu-check.sh -- everything cdnn does on a GPU machine, in one call.
#
# Here (no GPU):   scripts/gpu-check.sh stage
#   builds, then copies the build and the shared libraries the device
#   machine may lack into .gpu-stage/ (ignored by git; carry it).
# There (GPU):     scripts/gpu-check.sh run
#   runs the CUDA handle checks, the unit tests that do not need this
#   checkout's absolute paths, and the demo, then prints a short table.
set -eu
cd "$(dirname "$0")/.."
stage=.gpu-stage

if [ "${1:-}" = stage ]; then
    make build >/dev/null
    rm -rf "$stage"
    mkdir -p "$stage/lib"
    cp -a build/bin build/lib "$stage/"
    for lib in libcmocka.so.0 libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
        path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
        [ -n "$path" ] && cp -L "$path" "$stage/lib/"
    done
    echo "staged $(du -sh "$stage" | cut -f1) in $stage"
    exit 0
fi

[ "${1:-}" = run ] || { echo "usage: $0 stage|run" >&2; exit 2; }
export LD_LIBRARY_PATH="$PWD/$stage/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-/tmp}
results=""
record() { results="$results$(printf '%-34s %s' "$1" "$2")\n"; }
check() {
    name=$1; shift
    if ! "$@" >"$out/$name.log" 2>&1; then record "$name" "FAILED (see $name.log)"
    elif grep -q "SKIPPED \]" "$out/$name.log"; then record "$name" "ok, with skips (see $name.log)"
    else record "$name" ok; fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt" 2>&1 || true
check engines_cuda "$stage/bin/cdnn" engines --device cuda:0
check engines_cuda_missing sh -c "! '$stage/bin/cdnn' engines --device cuda:7"
check demo "$stage/bin/cdnn" demo
check test_api "$stage/bin/test_api"
check test_validation "$stage/bin/test_validation"
[ -x "$stage/bin/test_ops" ] && check test_ops "$stage/bin/test_ops"
# Rule 6: a CPU plan executed or loaded through a CUDA handle is refused.
check plan_bound_to_device env CDNN_TEST_FILTER=test_plan_bound_to_its_device \
    "$stage/bin/test_save_load"

cat "$out"/engines_cuda.log | head -3
cat "$out"/demo.log
echo
echo "gpu: $(cat "$out/gpu.txt")"
printf "%-34s %s\n" check result
printf "$results"
