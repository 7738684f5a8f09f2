#!/usr/bin/python3
"""Time cpu:index (providers/cpu/fast_index.c) against cpu:reference.

Usage:
    /usr/bin/python3 bench/cpu/bench_index.py build/lib/libcdnn.so

Each case is one graph built through the public API (the ctypes binding of
tests/oracle/test_reference_numpy.py), pinned to each engine, executed
once to warm up, then timed over several executes (perf_counter around
cdnn_graph_execute); the median is printed with the speedup, and the two
engines' outputs are compared (they must be equal: both are exact).
"""
import ctypes
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, "tests", "oracle"))
import test_gather_topk_numpy as gt  # noqa: E402  (bindings for the ops)
import test_reference_numpy as oracle  # noqa: E402

RNG = np.random.default_rng(7)


def timed(api, make, engine, runs):
    g, out = make(api)
    g.build(engine)
    g.execute()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        g.execute()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), [g.result(u).copy() for u in out]


def case(api, name, make, runs=5):
    ref_t, ref_out = timed(api, make, b"cpu:reference", 1 if runs > 1 else runs)
    fast_t, fast_out = timed(api, make, b"cpu:index", runs)
    same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(ref_out, fast_out))
    print(f"{name:44s} reference {ref_t * 1e3:9.1f} ms   cpu:index "
          f"{fast_t * 1e3:8.2f} ms   x{ref_t / fast_t:7.1f}   "
          f"{'equal' if same else 'DIFFERENT'}", flush=True)


def arg(kind, shape, axis):
    x = RNG.standard_normal(shape).astype(np.float32)

    def make(api):
        g = oracle.Graph(api)
        want = list(shape)
        want[axis] = 1
        xu, yu = g.input(x), g.output(array=np.zeros(want, np.int64))
        g.op(kind, axis, xu, yu)
        return g, [yu]
    return make


def topk(shape, k, largest=True):
    x = RNG.standard_normal(shape).astype(np.float32)

    def make(api):
        g = oracle.Graph(api)
        want = list(shape)
        want[-1] = k
        xu = g.input(x)
        vu = g.output(array=np.zeros(want, np.float32))
        iu = g.output(array=np.zeros(want, np.int64))
        attr = gt.TopkAttr(-1, int(largest), k)
        g.op("topk", ctypes.byref(attr), xu, vu, iu)
        return g, [vu, iu]
    return make


def gather(x_shape, idx_shape, axis, elements=False):
    x = RNG.standard_normal(x_shape).astype(np.float32)
    n = x_shape[axis]
    idx = RNG.integers(-n, n, idx_shape).astype(np.int64)

    def make(api):
        g = oracle.Graph(api)
        if elements:
            y_shape = idx_shape
        else:
            y_shape = x_shape[:axis] + idx_shape + x_shape[axis + 1:]
        xu, iu = g.input(x), g.input(idx)
        yu = g.output(array=np.zeros(y_shape, np.float32))
        g.op("gather_elements" if elements else "gather", axis, xu, iu, yu)
        return g, [yu]
    return make


def main():
    api = oracle.Cdnn(sys.argv[1])
    case(api, "argmax f32 2048x4096 axis -1", arg("argmax", (2048, 4096), 1))
    case(api, "argmax f32 2048x4096 axis 0", arg("argmax", (2048, 4096), 0))
    case(api, "argmin f32 64x512x64 axis 1", arg("argmin", (64, 512, 64), 1))
    case(api, "topk f32 1024x4096 k 8", topk((1024, 4096), 8))
    case(api, "topk f32 1024x4096 k 512 smallest", topk((1024, 4096), 512, False))
    case(api, "gather f32 32000x1024 rows, 8192 idx", gather((32000, 1024), (8, 1024), 0))
    case(api, "gather f32 512x4096 axis 1, 1024 idx", gather((512, 4096), (1024,), 1))
    case(api, "gather_elements f32 2048x2048 axis 1",
         gather((2048, 2048), (2048, 256), 1, elements=True))


if __name__ == "__main__":
    main()
