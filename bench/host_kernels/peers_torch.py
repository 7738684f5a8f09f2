"""PyTorch CPU on the shapes of bench_host_kernels.c, the same method:
WARMUP untimed runs, then single runs timed until MIN_SECONDS have passed
(at least MIN_RUNS, at most MAX_RUNS); the median.  f32, packed.
matmul+bias+gelu is torch.addmm then F.gelu (erf form, its default);
convolutions are F.conv2d on NCHW tensors (as bench/cpu), + bias and
F.relu for conv+bias+relu.

Output, one line per case, tab-separated, as bench_host_kernels:
    case  pytorch  median_ms  gflops
Usage: /usr/bin/python3 peers_torch.py THREADS [substring]
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

WARMUP = 2
MIN_RUNS = 5
MAX_RUNS = 200
MIN_SECONDS = 1.0

# Keep the names in step with bench_host_kernels.c.
CASES = [
    ("matmul 512x512x512", 512, False),
    ("matmul 1024x1024x1024", 1024, False),
    ("matmul+bias+gelu 1024x1024x1024", 1024, True),
]

CONV_CASES = [
    # name, n, hw, c, k, + bias and relu
    ("conv 3x3 N8 C64 56x56 K64", 8, 56, 64, 64, False),
    ("conv 3x3 N8 C256 14x14 K256", 8, 14, 256, 256, False),
    ("conv+bias+relu 3x3 N8 C64 56x56 K64", 8, 56, 64, 64, True),
]


def median_ms(fn):
    for _ in range(WARMUP):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < MAX_RUNS and (
            len(times) < MIN_RUNS or time.perf_counter() - start < MIN_SECONDS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main():
    torch.set_num_threads(int(sys.argv[1]))
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    for name, size, gelu in CASES:
        if only not in name:
            continue
        a = torch.rand(size, size) * 2 - 1
        b = torch.rand(size, size) * 2 - 1
        bias = torch.rand(size) * 2 - 1
        if gelu:
            ms = median_ms(lambda: F.gelu(torch.addmm(bias, a, b)))
        else:
            ms = median_ms(lambda: torch.matmul(a, b))
        gflops = 2.0 * size ** 3 / ms * 1e-6
        print("%s\tpytorch\t%.3f\t%.1f" % (name, ms, gflops), flush=True)
    for name, n, hw, c, k, relu in CONV_CASES:
        if only not in name:
            continue
        x = torch.rand(n, c, hw, hw) * 2 - 1
        w = torch.rand(k, c, 3, 3) * 2 - 1
        bias = torch.rand(k) * 2 - 1
        if relu:
            ms = median_ms(lambda: F.relu(F.conv2d(x, w, bias, padding=1)))
        else:
            ms = median_ms(lambda: F.conv2d(x, w, padding=1))
        gflops = 2.0 * n * hw * hw * k * 9 * c / ms * 1e-6
        print("%s\tpytorch\t%.3f\t%.1f" % (name, ms, gflops), flush=True)


if __name__ == "__main__":
    main()
