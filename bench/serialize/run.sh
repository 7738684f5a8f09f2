#!/bin/sh
# Run the save/load benchmarks (docs/BENCHMARKS.md, "Save and load
# (issue 3)"): per example graph build vs load, big pointwise chains, and
# the plan/container layers alone on 1 KiB .. 256 MiB payloads.
#
# Usage: bench/serialize/run.sh [BUILD_DIR]   (default ./build)
# The envelope program is not built by default; this builds it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
cmake --build "$build" --target bench_serialize bench_serialize_envelope >/dev/null
echo "date: $(date -u)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== per example graph (times in microseconds, medians)"
"$build/bin/bench_serialize" examples "$root/examples"
echo "== pointwise chains (times in milliseconds, medians)"
"$build/bin/bench_serialize" chains
echo "== plan and container layers on raw payloads (MB/s = 1e6 bytes/s)"
"$build/bin/bench_serialize_envelope"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
