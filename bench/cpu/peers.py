"""Times the shapes of bench_cpu.c in NumPy (OpenBLAS) and PyTorch (CPU).

Same method as bench_cpu: WARMUP untimed runs, then single runs timed until
MIN_SECONDS have passed (at least MIN_RUNS, at most MAX_RUNS); the median
is reported, and the fastest single run.  Output, one line per (case,
peer), tab-separated:
    case  peer  median_ms  best_ms
A peer that has no such operation (NumPy has no convolution) prints "n/a".
Convolutions run in PyTorch twice: on NCHW tensors ("torch", its default)
and on channels-last ones ("torch_nhwc", torch.channels_last, the layout
of kernels:conv_host); matmuls have no second layout ("torch_nhwc" n/a).
PyTorch is given as many threads as the machine has CPUs, like OpenBLAS,
because it may otherwise default to fewer.

Usage: /usr/bin/python3 peers.py [substring]
"""
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

WARMUP = 2
MIN_RUNS = 5
MAX_RUNS = 200
MIN_SECONDS = 1.0

# Keep the names in step with bench_cpu.c.
MATMUL_CASES = [
    # name, batch_a, batch_b, m, n, k, epilogue (+ bias, gelu), type
    ("matmul 256x256x256", 1, 1, 256, 256, 256, False, "f32"),
    ("matmul 1024x1024x1024", 1, 1, 1024, 1024, 1024, False, "f32"),
    ("matmul 2048x2048x2048", 1, 1, 2048, 2048, 2048, False, "f32"),
    ("matmul batched 64x[256x64]@[64x256]", 64, 64, 256, 256, 64, False,
     "f32"),
    ("matmul [8x512x1024]@[1024x1024]", 8, 1, 512, 1024, 1024, False, "f32"),
    ("matmul+bias+gelu 1024x1024x1024", 1, 1, 1024, 1024, 1024, True, "f32"),
    ("matmul f16 512x512x512", 1, 1, 512, 512, 512, False, "f16"),
    ("matmul bf16 512x512x512", 1, 1, 512, 512, 512, False, "bf16"),
]

# NumPy has f16 (its matmul then is a plain loop, not BLAS) but no bf16.
NUMPY_TYPES = {"f32": np.float32, "f16": np.float16, "bf16": None}
TORCH_TYPES = {"f32": torch.float32, "f16": torch.float16,
               "bf16": torch.bfloat16}

CONV_CASES = [
    # name, n, c, h, w, k, r, s, pad, stride, epilogue (+ bias, relu)
    ("conv 3x3 N8 C64 56x56 K64", 8, 64, 56, 56, 64, 3, 3, 1, 1, False),
    ("conv 3x3 N8 C256 14x14 K256", 8, 256, 14, 14, 256, 3, 3, 1, 1, False),
    ("conv 1x1 N8 C256 56x56 K64", 8, 256, 56, 56, 64, 1, 1, 0, 1, False),
    ("conv 3x3 s2 N8 C128 28x28 K256", 8, 128, 28, 28, 256, 3, 3, 1, 2,
     False),
    ("conv+bias+relu 3x3 N8 C64 56x56 K64", 8, 64, 56, 56, 64, 3, 3, 1, 1,
     True),
]


def time_ms(fn):
    """(median, fastest) time of fn in milliseconds."""
    for _ in range(WARMUP):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < MAX_RUNS and (
            len(times) < MIN_RUNS or time.perf_counter() - start < MIN_SECONDS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3, min(times) * 1e3


def values(shape):
    """Small values, as bench_cpu fills its tensors."""
    n = int(np.prod(shape))
    v = ((np.arange(n, dtype=np.int64) * 7919) % 1000) / 1000.0 - 0.5
    return v.astype(np.float32).reshape(shape)


def emit(name, peer, times):
    """times: (median_ms, best_ms), or None."""
    text = "n/a\tn/a" if times is None else "%.4f\t%.4f" % times
    print("%s\t%s\t%s" % (name, peer, text), flush=True)


def numpy_gelu(x):
    # NumPy has no erf; the tanh form is what a NumPy user would write.
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def torch_time_ms(fn):
    """time_ms, or None where this PyTorch lacks the operation for the
    type (older CPU builds have no f16 matmul)."""
    try:
        return time_ms(fn)
    except RuntimeError:
        return None


def bench_typed_matmul(name, a, b, dtype):
    np_type = NUMPY_TYPES[dtype]
    if np_type is None:
        emit(name, "numpy", None)
    else:
        na, nb = a.astype(np_type), b.astype(np_type)
        emit(name, "numpy", time_ms(lambda: np.matmul(na, nb)))
    ta, tb = (torch.from_numpy(x).to(TORCH_TYPES[dtype]) for x in (a, b))
    emit(name, "torch", torch_time_ms(lambda: torch.matmul(ta, tb)))


def bench_matmul(case):
    name, ba, bb, m, n, k, epilogue, dtype = case
    a, b = values((ba, m, k)), values((bb, k, n))
    if dtype != "f32":
        bench_typed_matmul(name, a, b, dtype)
        return
    bias = values((1, 1, n))
    ta, tb, tbias = (torch.from_numpy(x) for x in (a, b, bias))
    if epilogue:
        emit(name, "numpy", time_ms(lambda: numpy_gelu(a @ b + bias)))
        emit(name, "torch",
             time_ms(lambda: F.gelu(torch.matmul(ta, tb) + tbias)))
    else:
        emit(name, "numpy", time_ms(lambda: np.matmul(a, b)))
        emit(name, "torch", time_ms(lambda: torch.matmul(ta, tb)))


def bench_conv(case):
    name, n, c, h, w, k, r, s, pad, stride, epilogue = case
    x = torch.from_numpy(values((n, c, h, w)))
    wt = torch.from_numpy(values((k, c, r, s)))
    bias = torch.from_numpy(values((k,)))
    emit(name, "numpy", None)
    for peer, form in (("torch", torch.contiguous_format),
                       ("torch_nhwc", torch.channels_last)):
        xf = x.contiguous(memory_format=form)
        wf = wt.contiguous(memory_format=form)
        if epilogue:
            run = lambda: F.relu(F.conv2d(xf, wf, bias, stride=stride,
                                          padding=pad))
        else:
            run = lambda: F.conv2d(xf, wf, stride=stride, padding=pad)
        with torch.no_grad():
            emit(name, peer, time_ms(run))


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    torch.set_num_threads(os.cpu_count() or 1)
    for case in MATMUL_CASES:
        if only in case[0]:
            bench_matmul(case)
    for case in CONV_CASES:
        if only in case[0]:
            bench_conv(case)


if __name__ == "__main__":
    main()
