#!/usr/bin/python3
"""Check the training passes of the norms against PyTorch in float64:
batch-norm training forward (batchnorm_train) and its running statistics
(batchnorm_running_stats) against torch.nn.functional.batch_norm(
training=True), and the backward passes (batchnorm_bwd, layernorm_bwd,
rmsnorm_bwd) against autograd of batch_norm, layer_norm and the RMS-norm
formula x * rsqrt(mean(x^2) + eps) * w (+ b) (this torch has no rms_norm).

Usage:
    /usr/bin/python3 tests/oracle/test_norm_train_torch.py build/lib/libcdnn.so [engine]

engine (default cpu:reference) is the engine every graph is pinned to, so
that a fast engine is checked by the same oracle.  Each case rounds random
inputs to the tensors' type (f32, f16, bf16 or f64), runs PyTorch in float64
on those values, and compares cdnn's outputs (statistics and parameter
gradients in f32, or f64 for f64 cases; y and dx in f32 or in x's type).
The saved statistics a backward takes are PyTorch's, rounded to f32.  One
line per output: max error relative to max |oracle|, PASS or FAIL; the exit
status is non-zero if any fails.
"""
import ctypes
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_reference_numpy as oracle  # noqa: E402  (the ctypes binding)

I64 = ctypes.c_int64
oracle.STATUS_FUNCTIONS.update({
    "cdnn_graph_batchnorm_train": [oracle.P, ctypes.c_char_p, ctypes.c_double]
    + [I64] * 6,
    "cdnn_graph_batchnorm_running_stats": [oracle.P, ctypes.c_char_p,
                                           ctypes.c_double] + [I64] * 5,
    "cdnn_graph_batchnorm_bwd": [oracle.P, ctypes.c_char_p] + [I64] * 8,
    "cdnn_graph_layernorm_bwd": [oracle.P, ctypes.c_char_p] + [I64] * 8,
    "cdnn_graph_rmsnorm_bwd": [oracle.P, ctypes.c_char_p] + [I64] * 7,
})
NONE = oracle.UID_NONE
F64_CODE = 4  # CDNN_DATA_TYPE_F64

# Relative to max |oracle|.  The reference computes in double from the
# stored inputs, so an f32 output is off by its own rounding and the saved
# statistics' (f32); an output in x's type by that type's.
TOLERANCE = {"f64": 1e-12, "f32": 2e-6, "f16": 1e-3, "bf16": 8e-3}
ENGINE = b"cpu:reference"


def store(a, dtype):
    """(array cdnn reads, type code, float64 values it holds)."""
    if dtype == "f64":
        a = np.asarray(a, np.float64)
        return a, F64_CODE, a
    arr, code, values = oracle.stored(np.asarray(a, np.float32), dtype)
    return arr, code, np.asarray(values, np.float64)


def layout(shape, order):
    """Random values of logical `shape` laid out in memory in `order` (a
    permutation of its dims, outermost first), as a strided view."""
    mem_shape = [shape[d] for d in order]
    mem = oracle.randn(*mem_shape)
    return mem.transpose(np.argsort(order))


def stat_dtype(dtype):
    return "f64" if dtype == "f64" else "f32"


def out_f(g, shape, dtype):
    """An output in f32 (f64 for f64 cases)."""
    if dtype == "f64":
        return g.output(shape, np.float64, type_code=F64_CODE)
    return g.output(shape)


def out_typed(g, shape, dtype):
    """An output in x's type (NaN until written)."""
    arr, code, _ = store(np.zeros(shape, np.float32), dtype)
    arr = np.array(arr)
    arr.view(np.uint8)[...] = 0xFF
    return g.output(array=arr, type_code=code)


def as_values(arr, dtype):
    if dtype == "bf16":
        return oracle.bf16_value(arr)
    return np.asarray(arr, np.float64)


def run(g):
    g.build(ENGINE)
    g.execute()


def t64(a, grad=False):
    return torch.tensor(np.asarray(a, np.float64), requires_grad=grad)


# ---- batch-norm training forward and running statistics ----------------

def case_bn_train(name, shape, order, dtype, y_in_type=False, eps=1e-5,
                  momentum=0.1):
    c = shape[1]
    param = [1, c] + [1] * (len(shape) - 2)
    sd = stat_dtype(dtype)
    x_s = store(layout(shape, order), dtype)
    w_s = store(oracle.randn(*param) + 1, sd)
    b_s = store(oracle.randn(*param), sd)
    rm_s = store(oracle.randn(*param), sd)
    rv_s = store(np.abs(oracle.randn(*param)) + 0.5, sd)

    x = t64(x_s[2])
    rm, rv = t64(rm_s[2]).reshape(c).clone(), t64(rv_s[2]).reshape(c).clone()
    y = F.batch_norm(x, rm, rv, t64(w_s[2]).reshape(c), t64(b_s[2]).reshape(c),
                     training=True, momentum=momentum, eps=eps)
    dims = [d for d in range(len(shape)) if d != 1]
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, unbiased=False, keepdim=True)
    inv = 1 / torch.sqrt(var + eps)

    g = oracle.Graph(g_api)
    xu = g.input(x_s[0], x_s[1])
    wu, bu = g.input(w_s[0], w_s[1]), g.input(b_s[0], b_s[1])
    rmu, rvu = g.input(rm_s[0], rm_s[1]), g.input(rv_s[0], rv_s[1])
    yu = out_typed(g, shape, dtype) if y_in_type else out_f(g, shape, dtype)
    mu, iu = out_f(g, param, sd), out_f(g, param, sd)
    nmu, nvu = out_f(g, param, sd), out_f(g, param, sd)
    g.op("batchnorm_train", eps, xu, wu, bu, yu, mu, iu)
    g.op("batchnorm_running_stats", momentum, xu, rmu, rvu, nmu, nvu)
    run(g)
    tol_y = TOLERANCE[dtype] if y_in_type else TOLERANCE[sd]
    y_got = as_values(g.result(yu), dtype) if y_in_type else g.result(yu)
    oracle.report(f"{name} y", y_got, y.detach().numpy(), tol_y)
    tol = TOLERANCE[sd]
    oracle.report(f"{name} mean", g.result(mu), mean.numpy(), tol)
    oracle.report(f"{name} inv_variance", g.result(iu), inv.numpy(), tol)
    oracle.report(f"{name} running_mean", g.result(nmu),
                  rm.reshape(param).numpy(), tol)
    oracle.report(f"{name} running_var (unbiased)", g.result(nvu),
                  rv.reshape(param).numpy(), tol)


# ---- backward passes ----------------------------------------------------

def bwd_graph(op, dtype, shape, x_s, dy_s, inputs, param_shape, dx_in_type,
              with_dbias=True):
    """Run one backward node; returns (graph, dx uid, dscale uid, dbias uid)."""
    sd = stat_dtype(dtype)
    g = oracle.Graph(g_api)
    dyu = g.input(dy_s[0], dy_s[1])
    xu = g.input(x_s[0], x_s[1])
    rest = [g.input(s[0], s[1]) for s in inputs]
    dxu = out_typed(g, shape, dtype) if dx_in_type else out_f(g, shape, dtype)
    dsu = out_f(g, param_shape, sd)
    dbu = out_f(g, param_shape, sd) if with_dbias else NONE
    g.op(op, dyu, xu, *rest, dxu, dsu, dbu)
    run(g)
    return g, dxu, dsu, dbu


def report_bwd(name, g, uids, want, dtype, dx_in_type):
    sd = stat_dtype(dtype)
    dxu, dsu, dbu = uids
    dx_got = as_values(g.result(dxu), dtype) if dx_in_type else g.result(dxu)
    oracle.report(f"{name} dx", dx_got, want[0],
                  TOLERANCE[dtype] if dx_in_type else TOLERANCE[sd])
    oracle.report(f"{name} dscale", g.result(dsu), want[1], TOLERANCE[sd])
    if dbu != NONE:
        oracle.report(f"{name} dbias", g.result(dbu), want[2], TOLERANCE[sd])


def case_bn_bwd(name, shape, order, dtype, dx_in_type=False, eps=1e-5):
    c = shape[1]
    param = [1, c] + [1] * (len(shape) - 2)
    sd = stat_dtype(dtype)
    x_s, dy_s = store(layout(shape, order), dtype), store(layout(shape, order), dtype)
    w_s = store(oracle.randn(*param) + 1, sd)
    x, w = t64(x_s[2], True), t64(w_s[2].reshape(c), True)
    b = t64(oracle.randn(c), True)
    y = F.batch_norm(x, None, None, w, b, training=True, eps=eps)
    y.backward(t64(dy_s[2]))
    dims = [d for d in range(len(shape)) if d != 1]
    xd = x.detach()
    mean = xd.mean(dim=dims, keepdim=True)
    inv = 1 / torch.sqrt(xd.var(dim=dims, unbiased=False, keepdim=True) + eps)
    stats = [store(mean.numpy(), sd), store(inv.numpy(), sd)]
    g, *uids = bwd_graph("batchnorm_bwd", dtype, shape, x_s, dy_s, [w_s] + stats,
                         param, dx_in_type)
    want = [x.grad.numpy(), w.grad.numpy().reshape(param), b.grad.numpy().reshape(param)]
    report_bwd(name, g, uids, want, dtype, dx_in_type)


def case_ln_bwd(name, shape, order, norm_dims, dtype, rms=False, dx_in_type=False,
                with_dbias=True, eps=1e-5):
    """norm_dims trailing dims normalised (torch's normalized_shape)."""
    lead = len(shape) - norm_dims
    param = [1] * lead + list(shape[lead:])
    stats_shape = list(shape[:lead]) + [1] * norm_dims
    sd = stat_dtype(dtype)
    x_s, dy_s = store(layout(shape, order), dtype), store(layout(shape, order), dtype)
    w_s = store(oracle.randn(*param) + 1, sd)
    x, w = t64(x_s[2], True), t64(w_s[2], True)
    b = t64(oracle.randn(*param), True)
    axes = list(range(lead, len(shape)))
    xd = x.detach()
    if rms:
        inv = torch.rsqrt((xd * xd).mean(dim=axes, keepdim=True) + eps)
        y = x * torch.rsqrt((x * x).mean(dim=axes, keepdim=True) + eps) * w + b
        stats = [store(inv.numpy(), sd)]
        op = "rmsnorm_bwd"
    else:
        y = F.layer_norm(x, shape[lead:], w.reshape(shape[lead:]),
                         b.reshape(shape[lead:]), eps)
        mean = xd.mean(dim=axes, keepdim=True)
        inv = 1 / torch.sqrt(xd.var(dim=axes, unbiased=False, keepdim=True) + eps)
        stats = [store(mean.numpy(), sd), store(inv.numpy(), sd)]
        op = "layernorm_bwd"
    assert list(stats[0][0].shape) == stats_shape
    y.backward(t64(dy_s[2]))
    g, *uids = bwd_graph(op, dtype, shape, x_s, dy_s, [w_s] + stats, param,
                         dx_in_type, with_dbias)
    want = [x.grad.numpy(), w.grad.numpy(), b.grad.numpy()]
    report_bwd(name, g, uids, want, dtype, dx_in_type)


NCHW, NHWC = (0, 1, 2, 3), (0, 2, 3, 1)


def main():
    global g_api, ENGINE
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: {sys.argv[0]} path/to/libcdnn.so [engine]")
    g_api = oracle.Cdnn(sys.argv[1])
    if len(sys.argv) == 3:
        ENGINE = sys.argv[2].encode()
    # A fast engine computes in f32: f64 graphs are the reference's.
    dtypes = ["f32", "f16", "bf16"] + (["f64"] if ENGINE == b"cpu:reference" else [])
    for dtype in dtypes:
        case_bn_train(f"bn_train {dtype} 4x3x5x6 NCHW", (4, 3, 5, 6), NCHW, dtype)
        case_bn_train(f"bn_train {dtype} 2x8x3x7 NHWC", (2, 8, 3, 7), NHWC, dtype,
                      momentum=0.3)
        case_bn_bwd(f"bn_bwd {dtype} 4x3x5x6 NCHW", (4, 3, 5, 6), NCHW, dtype)
        case_bn_bwd(f"bn_bwd {dtype} 2x8x3x7 NHWC", (2, 8, 3, 7), NHWC, dtype)
        case_ln_bwd(f"ln_bwd {dtype} 6x32", (6, 32), (0, 1), 1, dtype)
        case_ln_bwd(f"ln_bwd {dtype} 2x5x3x8 over 2, transposed", (2, 5, 3, 8),
                    (3, 1, 0, 2), 2, dtype)
        case_ln_bwd(f"rms_bwd {dtype} 6x32", (6, 32), (0, 1), 1, dtype, rms=True)
        case_ln_bwd(f"rms_bwd {dtype} 3x4x24 transposed", (3, 4, 24), (2, 0, 1), 1,
                    dtype, rms=True, with_dbias=False)
    for dtype in ("f16", "bf16"):
        case_bn_train(f"bn_train {dtype} y in {dtype}", (3, 4, 2, 5), NHWC, dtype,
                      y_in_type=True)
        case_bn_bwd(f"bn_bwd {dtype} dx in {dtype}", (3, 4, 2, 5), NCHW, dtype,
                    dx_in_type=True)
        case_ln_bwd(f"ln_bwd {dtype} dx in {dtype}", (4, 48), (0, 1), 1, dtype,
                    dx_in_type=True)
        case_ln_bwd(f"rms_bwd {dtype} dx in {dtype}", (4, 48), (1, 0), 1, dtype,
                    rms=True, dx_in_type=True)
    case_bn_train("bn_train f32 2-D 16x5 momentum 1", (16, 5), (0, 1), "f32",
                  momentum=1.0)
    case_bn_train("bn_train f32 3-D 2x3x9 eps 0.1", (2, 3, 9), (2, 0, 1), "f32",
                  eps=0.1)
    case_bn_bwd("bn_bwd f32 3-D 2x3x9", (2, 3, 9), (2, 0, 1), "f32")
    case_ln_bwd("ln_bwd f32 one row of 1000", (1, 1000), (0, 1), 1, "f32")
    failures = oracle.FAILURES
    print(f"{len(failures)} failure(s)" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
