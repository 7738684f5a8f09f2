#!/bin/sh
# Run bench_cpu (cdnn) and peers.py (NumPy, PyTorch) in one go and print
# one table: median times and the ratio cdnn time / peer time (below 1:
# cdnn is faster).  Both programs time the same shapes the same way.
#
# Usage: bench/cpu/run.sh [BUILD_DIR] [CASE_SUBSTRING]
#   BUILD_DIR defaults to ./build; it must hold bin/bench_cpu.
# The numbers mean something only on an otherwise idle machine; the load
# average is printed before and after so that a busy run shows.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
only=${2:-}
bench="$build/bin/bench_cpu"
if [ ! -x "$bench" ]; then
    echo "run.sh: $bench not found; build first (cmake --build $build)" >&2
    exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bench" "$only" >"$tmp/cdnn.tsv"
/usr/bin/python3 "$here/peers.py" "$only" >"$tmp/peers.tsv"
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo

/usr/bin/python3 - "$tmp/cdnn.tsv" "$tmp/peers.tsv" <<'EOF'
import sys

cdnn, peers = {}, {}
order = []
for line in open(sys.argv[1]):
    name, ms, gflops, engine = line.rstrip("\n").split("\t")
    cdnn[name] = (float(ms), float(gflops), engine)
    order.append(name)
for line in open(sys.argv[2]):
    name, peer, ms = line.rstrip("\n").split("\t")
    peers[(name, peer)] = None if ms == "n/a" else float(ms)


def cell(name, peer):
    ms = peers.get((name, peer))
    if ms is None:
        return "n/a", "n/a"
    return "%.3f" % ms, "%.2f" % (cdnn[name][0] / ms)


print("| case | cdnn engine | cdnn ms | cdnn GFLOP/s | NumPy ms "
      "| cdnn/NumPy | PyTorch ms | cdnn/PyTorch |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for name in order:
    ms, gflops, engine = cdnn[name]
    np_ms, np_ratio = cell(name, "numpy")
    pt_ms, pt_ratio = cell(name, "torch")
    print("| %s | %s | %.3f | %.1f | %s | %s | %s | %s |" % (
        name, engine, ms, gflops, np_ms, np_ratio, pt_ms, pt_ratio))
EOF
