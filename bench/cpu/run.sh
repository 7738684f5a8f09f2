#!/bin/sh
# Run bench_cpu (cdnn) and peers.py (NumPy, PyTorch) in one go and print
# one table: times and the ratio cdnn time / peer time (below 1: cdnn is
# faster).  Both programs time the same shapes the same way.
# bench_cpu times each case on cdnn's own choice of engine and pinned to
# the kernel provider's host engine (kernels:matmul_host, kernels:conv_host
# on NHWC tensors): one row each.  PyTorch's convolutions run on NCHW and
# on channels-last tensors (two columns).
#
# Usage: bench/cpu/run.sh [BUILD_DIR] [CASE_SUBSTRING]
#   BUILD_DIR defaults to ./build; it must hold bin/bench_cpu.
#   REPEAT=N in the environment runs both programs N times, alternately,
#   and keeps each row's best median and fastest single run: on a shared
#   machine the quietest moments are the closest to what the code can do.
#   Ratios are given on the fastest runs (best-of-N) and on the medians.
# The numbers mean something only on an otherwise idle machine; the load
# average is printed before and after so that a busy run shows.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
only=${2:-}
repeat=${REPEAT:-1}
bench="$build/bin/bench_cpu"
if [ ! -x "$bench" ]; then
    echo "run.sh: $bench not found; build first (cmake --build $build)" >&2
    exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
while [ "$i" -lt "$repeat" ]; do
    "$bench" "$only" >>"$tmp/cdnn.tsv"
    /usr/bin/python3 "$here/peers.py" "$only" >>"$tmp/peers.tsv"
    i=$((i + 1))
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$repeat run(s) of each program"
echo

/usr/bin/python3 - "$tmp/cdnn.tsv" "$tmp/peers.tsv" <<'PY'
import sys

# (case, engine) -> [best median, fastest run, GFLOP/s at the best median]
cdnn, peers, order = {}, {}, []
for line in open(sys.argv[1]):
    name, ms, gflops, engine, best = line.rstrip("\n").split("\t")
    key, ms, best = (name, engine), float(ms), float(best)
    if key not in cdnn:
        order.append(key)
        cdnn[key] = [ms, best, float(gflops)]
    row = cdnn[key]
    if ms < row[0]:
        row[0], row[2] = ms, float(gflops)
    row[1] = min(row[1], best)
# (case, peer) -> [best median, fastest run], or None (no such operation)
for line in open(sys.argv[2]):
    name, peer, ms, best = line.rstrip("\n").split("\t")
    if ms == "n/a":
        peers.setdefault((name, peer), None)
        continue
    row = peers.get((name, peer))
    if row is None:
        peers[(name, peer)] = [float(ms), float(best)]
    else:
        row[0], row[1] = min(row[0], float(ms)), min(row[1], float(best))


def cells(key, peer):
    """Peer's fastest run and best median, and the ratios cdnn / peer."""
    row = peers.get((key[0], peer))
    if row is None:
        return ["n/a", "n/a"]
    mine = cdnn[key]
    return ["%.3f (%.3f)" % (row[1], row[0]),
            "%.2f (%.2f)" % (mine[1] / row[1], mine[0] / row[0])]


print("Times in ms: fastest run (best median).  Ratios cdnn / peer on the "
      "fastest runs (on the best medians).\n")
print("| case | cdnn engine | cdnn ms | cdnn GFLOP/s | NumPy ms | cdnn/NumPy "
      "| PyTorch ms | cdnn/PyTorch | PyTorch NHWC ms | cdnn/PyTorch NHWC |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for key in order:
    median, best, gflops = cdnn[key]
    row = ["%.3f (%.3f)" % (best, median), "%.1f" % (gflops * median / best)]
    for peer in ("numpy", "torch", "torch_nhwc"):
        row += cells(key, peer)
    print("| %s | %s | %s |" % (key[0], key[1], " | ".join(row)))
PY
