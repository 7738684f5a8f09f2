#!/bin/sh
# Run the benchmarking-vs-loading benchmark (docs/BENCHMARKS.md,
# "Benchmarking vs loading (issue 4)"): per example graph, a benchmarking
# build + first execute against loading the saved plan + first execute.
# The winner cache lives in a temporary directory the program makes and
# removes; the benchmarking column runs with the cache off.
#
# Usage: bench/benchmarking/run.sh [BUILD_DIR]   (default ./build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
cmake --build "$build" --target bench_benchmarking >/dev/null
echo "date: $(date -u)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== per example graph (microseconds, medians)"
"$build/bin/bench_benchmarking" "$root/examples"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
