#!/bin/sh
# gpu-check.sh -- everything cdnn does on a GPU machine, in one call.
#
# Here (no GPU):   scripts/gpu-check.sh stage
#   builds (in $BUILD, default build/), then copies the build, the CUDA
#   code objects and the shared library the device machine lacks (cmocka) into
#   $STAGE (default .gpu-stage/; ignored by git) and packs it into one archive,
#   $STAGE.tar.xz: carry that (the code objects and the pack that holds them
#   again come to ~115 MB, past the 64 MiB a device call carries; xz makes
#   them ~8 MB).
# There (GPU):     scripts/gpu-check.sh run
#   runs the CUDA handle checks, the unit tests that do not need this
#   checkout's absolute paths, the demo, the CUDA kernel tests (also under
#   compute-sanitizer memcheck where it is installed) and the GPU matmul
#   bench against cuBLAS, then prints the bench's table and a short table
#   of results last.
set -eu
cd "$(dirname "$0")/.."
stage=${STAGE:-.gpu-stage}
build=${BUILD:-build}

if [ "${1:-}" = stage ]; then
    make build BUILD="$build" >/dev/null
    rm -rf "$stage"
    mkdir -p "$stage/lib" "$stage/kernels"
    cp -a "$build/bin" "$build/lib" "$stage/"
    # The cubins and PTX (absent where nvcc was): tests/cuda_kernels, bench/gpu.
    [ -d "$build/kernels/cuda" ] &&
        find "$build/kernels/cuda" -maxdepth 1 \( -name '*.cubin' -o -name '*.ptx' \) \
            -exec cp {} "$stage/kernels/" \;
    # The device machine has OpenBLAS, libcrypto and jansson but no cmocka;
    # the stage travels in a carry of at most 64 MiB, so only cmocka goes.
    for lib in libcmocka.so.0; do
        path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
        [ -n "$path" ] && cp -L "$path" "$stage/lib/"
    done
    tar -cf - "$stage" | xz -T2 -6 > "$stage.tar.xz.tmp"
    mv "$stage.tar.xz.tmp" "$stage.tar.xz"
    echo "staged $(du -sh "$stage" | cut -f1) in $stage, $(du -sh "$stage.tar.xz" | cut -f1) in $stage.tar.xz"
    exit 0
fi

[ "${1:-}" = run ] || { echo "usage: $0 stage|run" >&2; exit 2; }
# The stage travels as its archive; unpack it where only that came.
if [ ! -d "$stage" ] && [ -f "$stage.tar.xz" ]; then
    xz -dc "$stage.tar.xz" | tar -xf -
fi
export LD_LIBRARY_PATH="$PWD/$stage/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-/tmp}
results=""
record() { results="$results$(printf '%-34s %s' "$1" "$2")\n"; }
# Each check's wall seconds go beside its result: the device time is rationed.
# SKIP_CHECKS="a b": those checks are recorded as skipped, not run.
check() {
    name=$1; shift
    case " ${SKIP_CHECKS:-} " in
    *" $name "*) record "$name" "skipped (SKIP_CHECKS)"; return 0 ;;
    esac
    started=$(date +%s)
    if ! "$@" >"$out/$name.log" 2>&1; then result="FAILED (see $name.log)"
    elif grep -q "SKIPPED \]" "$out/$name.log"; then result="ok, with skips (see $name.log)"
    else result=ok; fi
    record "$name" "$result ($(( $(date +%s) - started )) s)"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt" 2>&1 || true
check engines_cuda "$stage/bin/cdnn" engines --device cuda:0
check engines_cuda_missing sh -c "! '$stage/bin/cdnn' engines --device cuda:7"
check demo "$stage/bin/cdnn" demo
check test_api "$stage/bin/test_api"
check test_memory "$stage/bin/test_memory"
check example_hello sh -c "'$stage/bin/example_hello' cuda:0 | grep -F 'on cuda:0: y = [[4, 1], [0, 0]]'"
check test_validation "$stage/bin/test_validation"
[ -x "$stage/bin/test_ops" ] && check test_ops env CDNN_TEST_EXAMPLES_DIR="$PWD/examples" \
    "$stage/bin/test_ops"
# Rule 6: a CPU plan executed or loaded through a CUDA handle is refused.
check plan_bound_to_device env CDNN_TEST_FILTER=test_plan_bound_to_its_device \
    "$stage/bin/test_save_load"

# The CUDA kernels against f64 references: every code object this GPU runs,
# then the cubins again under compute-sanitizer's memcheck where installed.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [ -x "$stage/bin/test_cuda_kernels" ]; then
    check cuda_kernels "$stage/bin/test_cuda_kernels" "$stage/kernels"
    # MEMCHECK_SOURCES="a b": memcheck those kernel sources alone (the
    # device time is rationed; the whole set takes minutes under memcheck).
    if [ -z "$sanitizer" ]; then
        record cuda_kernels_memcheck "not run: no compute-sanitizer on this machine"
    elif [ -n "${MEMCHECK_SOURCES:-}" ]; then
        for source in $MEMCHECK_SOURCES; do
            check "memcheck_$source" env CDNN_CUDA_TEST_SOURCE="$source" timeout 300 \
                "$sanitizer" --tool memcheck --error-exitcode 1 \
                "$stage/bin/test_cuda_kernels" "$stage/kernels" cubin
        done
    else
        check cuda_kernels_memcheck timeout 300 "$sanitizer" --tool memcheck --error-exitcode 1 \
            "$stage/bin/test_cuda_kernels" "$stage/kernels" cubin
    fi
    tail -1 "$out/cuda_kernels.log" | sed 's/^/cuda_kernels: /'
else
    record cuda_kernels "not run: not built (no nvcc where it was staged)"
fi
# The kernels provider on cuda:0: packs of the CUDA code objects made by its
# test, round-tripped through cdnn (and under memcheck); then the pack the
# build made (lib/cdnn/kernels/cuda.kpack, staged with lib/), found by default.
if [ -x "$stage/bin/test_kernels_cuda" ]; then
    check kernels_cuda "$stage/bin/test_kernels_cuda" "$stage/kernels"
    if [ -n "$sanitizer" ] && [ -z "${MEMCHECK_SOURCES:-}" ]; then
        check kernels_cuda_memcheck timeout 300 "$sanitizer" --tool memcheck \
            --error-exitcode 1 "$stage/bin/test_kernels_cuda" "$stage/kernels"
    fi
fi
if [ -f "$stage/lib/cdnn/kernels/cuda.kpack" ]; then
    check kernels_cuda_pack sh -c "'$stage/bin/cdnn' pack verify '$stage/lib/cdnn/kernels/cuda.kpack' &&
        '$stage/bin/cdnn' engines --device cuda:0 > '$out/engines_cuda_pack.txt' &&
        for e in matmul conv sdpa softmax; do grep \" kernels:\${e}_cuda \" '$out/engines_cuda_pack.txt' || exit 1; done"
fi
# The kernels provider's cuda plans forged (every metadata key, symbol,
# target, launch value and code edit, re-sealed): each refused with its
# status or run to the unforged plan's outputs.
if [ -x "$stage/bin/cuda_forgeries" ]; then
    check forgeries_cuda tests/security/test_forgeries_cuda.sh "$stage/bin/cuda_forgeries" \
        "$stage/kernels"
fi
# The matmul kernels next to cuBLAS (PyTorch), device events, median.
if [ -x "$stage/bin/bench_gpu_matmul" ]; then
    check bench_gpu_matmul python3 bench/gpu/run.py "$stage/bin/bench_gpu_matmul" \
        "$stage/kernels" --out "$out/bench_gpu_matmul.txt"
fi
# The flash-attention kernels next to PyTorch's SDPA, device events, median.
if [ -x "$stage/bin/bench_gpu_sdpa" ]; then
    check bench_gpu_sdpa python3 bench/gpu/sdpa.py "$stage/bin/bench_gpu_sdpa" \
        "$stage/kernels" --out "$out/bench_gpu_sdpa.txt"
fi
# cdnn plans (GEMM, matmul+bias+gelu, convolutions, norms, softmax,
# reductions, attention) built with benchmarking through the public API,
# then loaded in PyTorch's process and timed in turn with their PyTorch
# peers, and the device's copy bandwidth.
if [ -x "$stage/bin/bench_gpu_plans" ]; then
    check bench_gpu_plans python3 bench/gpu/plans.py "$stage/bin/bench_gpu_plans" \
        --out "$out/bench_gpu_plans.txt"
fi

cat "$out"/engines_cuda.log | head -3
cat "$out"/demo.log
echo
[ -f "$out/bench_gpu_matmul.txt" ] && cat "$out/bench_gpu_matmul.txt" && echo
[ -f "$out/bench_gpu_sdpa.txt" ] && cat "$out/bench_gpu_sdpa.txt" && echo
[ -f "$out/bench_gpu_plans.txt" ] && cat "$out/bench_gpu_plans.txt" && echo
echo "gpu: $(cat "$out/gpu.txt")"
printf "%-34s %s\n" check result
printf "$results"
