#!/bin/sh
# Run bench_cpu (cdnn) and peers.py (NumPy, PyTorch) in one go and print
# one table: median times and the ratio cdnn time / peer time (below 1:
# cdnn is faster).  Both programs time the same shapes the same way.
# bench_cpu times each case on cdnn's own choice of engine and pinned to
# the kernel provider's host engine (kernels:matmul_host, kernels:conv_host
# on NHWC tensors): one row each.  PyTorch's convolutions run on NCHW and
# on channels-last tensors (two columns).
#
# Usage: bench/cpu/run.sh [BUILD_DIR] [CASE_SUBSTRING]
#   BUILD_DIR defaults to ./build; it must hold bin/bench_cpu.
#   REPEAT=N in the environment runs both programs N times, alternately,
#   and keeps each row's best median: on a shared machine the quietest of
#   N runs is the one closest to what the code can do.
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
echo "best median of $repeat run(s) per row"
echo

/usr/bin/python3 - "$tmp/cdnn.tsv" "$tmp/peers.tsv" <<'PY'
import sys

cdnn, peers = {}, {}
order = []
for line in open(sys.argv[1]):
    name, ms, gflops, engine = line.rstrip("\n").split("\t")
    key = (name, engine)
    if key not in cdnn:
        order.append(key)
    if key not in cdnn or float(ms) < cdnn[key][0]:
        cdnn[key] = (float(ms), float(gflops))
for line in open(sys.argv[2]):
    name, peer, ms = line.rstrip("\n").split("\t")
    value = None if ms == "n/a" else float(ms)
    old = peers.get((name, peer))
    if old is None or (value is not None and value < old):
        peers[(name, peer)] = value


def cell(key, peer):
    ms = peers.get((key[0], peer))
    if ms is None:
        return "n/a", "n/a"
    return "%.3f" % ms, "%.2f" % (cdnn[key][0] / ms)


print("| case | cdnn engine | cdnn ms | cdnn GFLOP/s | NumPy ms | cdnn/NumPy "
      "| PyTorch ms | cdnn/PyTorch | PyTorch NHWC ms | cdnn/PyTorch NHWC |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for key in order:
    ms, gflops = cdnn[key]
    cells = [c for peer in ("numpy", "torch", "torch_nhwc") for c in cell(key, peer)]
    print("| %s | %s | %.3f | %.1f | %s |" % (key[0], key[1], ms, gflops,
                                            " | ".join(cells)))
PY
