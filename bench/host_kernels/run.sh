#!/bin/sh
# Run bench_host_kernels (the host matmul objects and OpenBLAS) and
# peers_torch.py (PyTorch CPU) one after the other and print one table:
# median ms, GFLOP/s, and time relative to OpenBLAS and to PyTorch (below
# 1: the host kernel is faster).
#
# Usage: bench/host_kernels/run.sh [BUILD_DIR] [THREADS] [CASE_SUBSTRING]
#   BUILD_DIR defaults to ./build (it must hold bin/bench_host_kernels);
#   THREADS to every CPU.  Without PyTorch (python3-torch) its column says
#   n/a.  The load average is printed before and after: numbers from a busy
#   machine move by tens of percent.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
threads=${2:-$(nproc)}
only=${3:-}
bench="$build/bin/bench_host_kernels"
if [ ! -x "$bench" ]; then
    echo "run.sh: $bench not found; build first (cmake --build $build)" >&2
    exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "threads: $threads; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bench" "$threads" "$only" >"$tmp/host.tsv"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    /usr/bin/python3 "$here/peers_torch.py" "$threads" "$only" >"$tmp/torch.tsv"
else
    echo "run.sh: no PyTorch for /usr/bin/python3 (python3-torch): its column is n/a" >&2
    : >"$tmp/torch.tsv"
fi
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo

/usr/bin/python3 - "$tmp/host.tsv" "$tmp/torch.tsv" <<'PY'
import sys

rows, base = [], {}
for path in sys.argv[1:]:
    for line in open(path):
        case, impl, ms, gflops = line.rstrip("\n").split("\t")
        rows.append((case, impl, float(ms), float(gflops)))
        if impl in ("openblas", "pytorch"):
            base[(case, impl)] = float(ms)


def ratio(case, impl, ms):
    peer = base.get((case, impl))
    return "n/a" if peer is None else "%.2f" % (ms / peer)


print("| case | implementation | ms | GFLOP/s | / OpenBLAS | / PyTorch |")
print("|---|---|---:|---:|---:|---:|")
for case in dict.fromkeys(r[0] for r in rows):
    for c, impl, ms, gflops in rows:
        if c == case:
            print("| %s | %s | %.3f | %.1f | %s | %s |" % (
                case, impl, ms, gflops, ratio(case, "openblas", ms),
                ratio(case, "pytorch", ms)))
PY
