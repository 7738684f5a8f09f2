#!/bin/bash
# ab_plans.sh STAGE_A STAGE_B ROWS [OUT_DIR]
#
# On the GPU machine: the same plans.py rows (BENCH_GPU_PLANS_ONLY syntax,
# e.g. convolution:64x1024x14x14x256x1x1,conv_bias_relu:64x256x14x14x256x3x1)
# with two stages of scripts/gpu-check.sh (each a directory, or its
# .tar.xz, unpacked where the directory is missing): A then B, each in its
# own plans.py run against the same PyTorch peers, so that a change's
# effect reads as B's rows against A's on one card, one date.  Prints both
# tables' rows and every candidate the harness pinned and timed (stderr's
# "harness" lines), and keeps the full logs in OUT_DIR (default
# ./ab-plans).
set -u
if [ $# -lt 3 ]; then
    echo "usage: $0 STAGE_A STAGE_B ROWS [OUT_DIR]" >&2
    exit 2
fi
out=${4:-ab-plans}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
status=0
for side in A B; do
    stage=$1
    [ $side = B ] && stage=$2
    if [ ! -d "$stage" ]; then
        if [ ! -f "$stage.tar.xz" ]; then
            echo "$0: no stage $stage (nor $stage.tar.xz)" >&2
            exit 2
        fi
        # the archive holds the stage under the name it was made with
        mkdir -p "$stage.unpacked"
        xz -dc "$stage.tar.xz" | tar -C "$stage.unpacked" -xf - || exit 1
        stage=$(find "$stage.unpacked" -mindepth 1 -maxdepth 1 -type d | head -1)
    fi
    LD_LIBRARY_PATH="$stage/lib" BENCH_GPU_PLANS_ONLY=$3 python3 "$here/plans.py" \
        "$stage/bin/bench_gpu_plans" --out "$out/plans_$side.txt" > "$out/plans_$side.log" 2>&1
    rc=$?
    [ $rc -ne 0 ] && status=$rc
    echo "== $side ($stage): plans.py rc=$rc"
    grep -vE "^#|^$" "$out/plans_$side.txt" 2>/dev/null
    grep -E "^#   harness" "$out/plans_$side.log" | sed 's/^#   harness */  /'
done
exit $status
