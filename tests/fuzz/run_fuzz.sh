#!/bin/sh
# run_fuzz.sh -- run every fuzz target for SECONDS on a copy of its seed
# corpus (so that the inputs a run finds do not litter the repository),
# and fail if any target finds a crash, leak, sanitizer report or oracle
# violation.  `make fuzz SECONDS=N` calls it.
#
#   tests/fuzz/run_fuzz.sh BUILD_DIR SECONDS [TARGET...]
#
# Findings (crash-*, leak-*, timeout-*, oom-*) and each target's log are
# kept in $FUZZ_ARTIFACTS (default: a fresh directory under /tmp), which is
# printed at the end.  FUZZ_JOBS=N runs N targets at once (default 1).
set -eu

build=${1:?usage: run_fuzz.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: run_fuzz.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
targets=${*:-graph graph_json container plan cpu_payload plan_exec flatbuf winner_cache kpack kpack_descriptor kernel_payload}
artifacts=${FUZZ_ARTIFACTS:-$(mktemp -d /tmp/cdnn-fuzz.XXXXXX)}
jobs=${FUZZ_JOBS:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$artifacts"

# One engine thread per process: the fuzzers share the machine, and
# OpenBLAS's thread pool adds nothing to what is being tested.
export OPENBLAS_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
    t=$1
    bin="$build/bin/fuzz_$t"
    [ -x "$bin" ] || { echo "fuzz_$t: not built ($bin)"; return 1; }
    cp -r "$here/corpus/$t" "$work/$t"
    mkdir -p "$artifacts/$t"
    # -max_len: above the largest seed (a few KiB), well below what makes
    # a run slow; -timeout: one input may take at most 10 s.
    if "$bin" "$work/$t" -max_total_time="$seconds" -rss_limit_mb=2048 \
            -max_len=65536 -timeout=10 -print_final_stats=1 \
            -artifact_prefix="$artifacts/$t/" >"$artifacts/$t.log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$artifacts/$t.log")
        cov=$(grep -o 'cov: [0-9]*' "$artifacts/$t.log" | tail -1)
        echo "fuzz_$t: ok, $runs runs, $cov"
    else
        echo "fuzz_$t: FAILED; see $artifacts/$t.log"
        tail -40 "$artifacts/$t.log"
        return 1
    fi
}

status=0
running=0
pids=""
for t in $targets; do
    run_one "$t" &
    pids="$pids $!"
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        for p in $pids; do wait "$p" || status=1; done
        pids=""
        running=0
    fi
done
for p in $pids; do wait "$p" || status=1; done
echo "fuzz logs and findings: $artifacts"
exit $status
