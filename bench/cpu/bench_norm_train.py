#!/usr/bin/python3
"""Time cpu:norm_train (providers/cpu/fast_norm.c) against cpu:reference and
PyTorch's CPU kernels (float32, same thread count as torch's default).

Usage:
    /usr/bin/python3 bench/cpu/bench_norm_train.py build/lib/libcdnn.so [torch_threads]

cpu:norm_train splits its groups over the device's threads (the
cpu.threads.count knob, default all); torch uses torch_threads (default its
own, printed), so give it the machine's core count for a like-for-like run.

Each case is one graph built through the public API (the ctypes binding of
tests/oracle/test_reference_numpy.py), pinned to each engine, executed once
to warm up, then timed over several executes (perf_counter around
cdnn_graph_execute, median).  PyTorch times the same work: batch_norm
(training, with its running statistics), and the backward as
torch.autograd.grad of the forward (which includes the forward's own
cost, so PyTorch's backward numbers are an upper bound).  The engines'
outputs are compared (max relative difference).
"""
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, "tests", "oracle"))
import test_norm_train_torch as nt  # noqa: E402  (bindings for the ops)
import test_reference_numpy as oracle  # noqa: E402

RNG = np.random.default_rng(11)


def median_time(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def timed(make, engine, runs):
    g, outs = make()
    g.build(engine)
    t = median_time(g.execute, runs)
    return t, [np.array(g.result(u), np.float64) for u in outs]


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def bn_train(shape, nhwc):
    c = shape[1]
    p = [1, c] + [1] * (len(shape) - 2)
    x = rand(*shape) if not nhwc else rand(shape[0], *shape[2:], c).transpose(0, 3, 1, 2)
    w, b, rm, rv = rand(*p), rand(*p), rand(*p), np.abs(rand(*p)) + 0.5

    def make():
        g = oracle.Graph(nt.g_api)
        xu, wu, bu, rmu, rvu = (g.input(a) for a in (x, w, b, rm, rv))
        yu = g.output(array=np.empty_like(x))
        outs = [g.output(p) for _ in range(4)]
        g.op("batchnorm_train", 1e-5, xu, wu, bu, yu, outs[0], outs[1])
        g.op("batchnorm_running_stats", 0.1, xu, rmu, rvu, outs[2], outs[3])
        return g, [yu] + outs

    tx = torch.from_numpy(np.ascontiguousarray(x) if not nhwc else x)
    if nhwc:
        tx = tx.contiguous(memory_format=torch.channels_last)
    tw, tb = torch.from_numpy(w.reshape(c)), torch.from_numpy(b.reshape(c))
    trm, trv = torch.from_numpy(rm.reshape(c).copy()), torch.from_numpy(rv.reshape(c).copy())

    def torch_fn():
        F.batch_norm(tx, trm, trv, tw, tb, training=True, momentum=0.1, eps=1e-5)
    return make, torch_fn


def bwd(kind, shape, nhwc=False):
    """kind: bn, ln (last dim), rms (last dim)."""
    if kind == "bn":
        c = shape[1]
        p = [1, c] + [1] * (len(shape) - 2)
        stat = p
    else:
        p = [1] * (len(shape) - 1) + [shape[-1]]
        stat = list(shape[:-1]) + [1]
    if nhwc:
        x = rand(shape[0], *shape[2:], shape[1]).transpose(0, 3, 1, 2)
        dy = rand(shape[0], *shape[2:], shape[1]).transpose(0, 3, 1, 2)
    else:
        x, dy = rand(*shape), rand(*shape)
    w, mean, inv = rand(*p) + 1, rand(*stat), np.abs(rand(*stat)) + 0.5

    def make():
        g = oracle.Graph(nt.g_api)
        dyu, xu, wu = g.input(dy), g.input(x), g.input(w)
        stats = [g.input(inv)] if kind == "rms" else [g.input(mean), g.input(inv)]
        dxu = g.output(array=np.empty_like(x))
        dsu = g.output(p)
        dbu = g.output(p)
        g.op({"bn": "batchnorm_bwd", "ln": "layernorm_bwd", "rms": "rmsnorm_bwd"}[kind],
             dyu, xu, wu, *stats, dxu, dsu, dbu)
        return g, [dxu, dsu, dbu]

    tx = torch.from_numpy(np.ascontiguousarray(x)).requires_grad_()
    if nhwc:
        tx = torch.from_numpy(x).contiguous(
            memory_format=torch.channels_last).requires_grad_()
    tdy = torch.from_numpy(np.ascontiguousarray(dy))
    tw = torch.from_numpy(w).requires_grad_()
    tb = torch.zeros_like(tw).requires_grad_()

    def torch_fn():
        if kind == "bn":
            c = shape[1]
            y = F.batch_norm(tx, None, None, tw.reshape(c), tb.reshape(c), training=True)
        elif kind == "ln":
            y = F.layer_norm(tx, shape[-1:], tw.reshape(shape[-1]),
                             tb.reshape(shape[-1]))
        else:
            y = tx * torch.rsqrt((tx * tx).mean(-1, keepdim=True) + 1e-5) * tw + tb
        torch.autograd.grad(y, (tx, tw, tb), tdy)
    return make, torch_fn


def case(name, pair, runs=5):
    make, torch_fn = pair
    ref_t, ref_out = timed(make, b"cpu:reference", 1)
    fast_t, fast_out = timed(make, b"cpu:norm_train", runs)
    torch_t = median_time(torch_fn, runs)
    diff = max(np.abs(a - b).max() / max(np.abs(a).max(), 1e-30)
               for a, b in zip(ref_out, fast_out))
    print(f"{name:36s} reference {ref_t * 1e3:8.1f} ms  cpu:norm_train "
          f"{fast_t * 1e3:7.2f} ms (x{ref_t / fast_t:5.1f})  torch {torch_t * 1e3:7.2f} ms"
          f"  torch/ours {torch_t / fast_t:5.2f}  max rel diff {diff:.1e}", flush=True)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: {sys.argv[0]} path/to/libcdnn.so [torch_threads]")
    if len(sys.argv) == 3:
        torch.set_num_threads(int(sys.argv[2]))
    nt.g_api = oracle.Cdnn(sys.argv[1])
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    case("bn_train+running 16x64x56x56 NCHW", bn_train((16, 64, 56, 56), False))
    case("bn_train+running 16x64x56x56 NHWC", bn_train((16, 64, 56, 56), True))
    case("bn_bwd 16x64x56x56 NCHW", bwd("bn", (16, 64, 56, 56)))
    case("bn_bwd 16x64x56x56 NHWC", bwd("bn", (16, 64, 56, 56), nhwc=True))
    case("ln_bwd 8192x1024", bwd("ln", (8192, 1024)))
    case("rms_bwd 8192x1024", bwd("rms", (8192, 1024)))


if __name__ == "__main__":
    main()
