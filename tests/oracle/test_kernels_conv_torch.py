#!/usr/bin/python3
"""Check kernels:conv_host (the host convolution kernels) against PyTorch.

Usage:
    /usr/bin/python3 tests/oracle/test_kernels_conv_torch.py build/lib/libcdnn.so

The library finds the kernels provider and the build's kernel pack where it
looks by default (<libdir>/cdnn/providers, <libdir>/cdnn/kernels).  Each
case builds a convolution with its fused epilogue through the public C API
(test_reference_numpy's ctypes binding), pins it to kernels:conv_host, runs
it on channels-last arrays and compares with torch.nn.functional.conv2d and
PyTorch's activations computed in float64 on the same (rounded) inputs: an
implementation no one here wrote, in higher precision.  One line per case:
name, max error relative to max |oracle|, PASS or FAIL; the exit status is
non-zero if any case fails.
"""
import ctypes
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_reference_numpy as oracle  # noqa: E402  (the ctypes binding)

ENGINE = b"kernels:conv_host"
ACTIVATIONS = {
    None: lambda t: t,
    "relu_fwd": F.relu,
    "gelu_fwd": F.gelu,
    "gelu_tanh_fwd": lambda t: F.gelu(t, approximate="tanh"),
    "swish_fwd": F.silu,
    "tanh_fwd": torch.tanh,
}
# Relative to max |oracle|: f32 sums in another order; f16 and bf16 round
# the output (and the oracle reads the same rounded inputs).
TOLERANCE = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}


def nhwc_view(shape_nchw, dtype_np):
    """An NCHW-indexed view of a channels-last array (NaN-filled)."""
    n, c, h, w = shape_nchw
    base = np.empty((n, h, w, c), dtype_np)
    base.view(np.uint8)[...] = 0xFF
    return base.transpose(0, 3, 1, 2)


def run_case(api, name, dtype, n, c, h, w, k, r, s, pad=0, stride=1,
             dilation=1, bias=False, act=None):
    rng = oracle.RNG
    x_nhwc = rng.standard_normal((n, h, w, c)).astype(np.float32)
    w_krsc = rng.standard_normal((k, r, s, c)).astype(np.float32)
    b = rng.standard_normal((1, k, 1, 1)).astype(np.float32)
    xs, code, xv = oracle.stored(x_nhwc, dtype)
    ws, _, wv = oracle.stored(w_krsc, dtype)
    bs, _, bv = oracle.stored(b, dtype)
    out_h = (h + 2 * pad - dilation * (r - 1) - 1) // stride + 1
    out_w = (w + 2 * pad - dilation * (s - 1) - 1) // stride + 1
    y = nhwc_view((n, k, out_h, out_w), xs.dtype)

    g = oracle.Graph(api)
    xu = g.input(xs.transpose(0, 3, 1, 2), code)
    wu = g.input(ws.transpose(0, 3, 1, 2), code)
    steps = [step for step in (bias and "bias", act) if step]
    value = yu = g.output(array=y, type_code=code) if not steps else None
    if steps:
        value = g.virtual((n, k, out_h, out_w))
    attr = api.conv_attr(2, pad, pad, stride, dilation)
    g.op("conv_fwd", ctypes.byref(attr), xu, wu, value)
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        out = (g.output(array=y, type_code=code) if last
               else g.virtual((n, k, out_h, out_w)))
        if step == "bias":
            add = api.pointwise_attr("add")
            g.op("pointwise", ctypes.byref(add), value, g.input(bs, code),
                 oracle.UID_NONE, out)
        else:
            mode = api.pointwise_attr(step)
            g.op("pointwise", ctypes.byref(mode), value, oracle.UID_NONE,
                 oracle.UID_NONE, out)
        value = yu = out
    g.build(ENGINE)
    g.execute()

    tx = torch.from_numpy(xv.astype(np.float64)).permute(0, 3, 1, 2)
    tw = torch.from_numpy(wv.astype(np.float64)).permute(0, 3, 1, 2)
    tb = torch.from_numpy(bv.reshape(k).astype(np.float64)) if bias else None
    want = ACTIVATIONS[act](F.conv2d(tx, tw, tb, stride=stride, padding=pad,
                                     dilation=dilation)).numpy()
    got = g.result(yu)
    got = oracle.bf16_value(got) if dtype == "bf16" else got.astype(np.float32)
    oracle.report(name, got, want, TOLERANCE[dtype])


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libcdnn.so")
    api = oracle.Cdnn(sys.argv[1])
    cases = [
        ("conv_host f32 3x3 pad1", "f32", 2, 16, 12, 12, 24, 3, 3,
         dict(pad=1)),
        ("conv_host f32 3x3 s2 bias gelu", "f32", 2, 7, 13, 11, 9, 3, 3,
         dict(pad=1, stride=2, bias=True, act="gelu_fwd")),
        ("conv_host f32 7x7 s2 bias relu", "f32", 1, 3, 20, 20, 16, 7, 7,
         dict(pad=3, stride=2, bias=True, act="relu_fwd")),
        ("conv_host f32 1x1 silu", "f32", 2, 33, 5, 6, 10, 1, 1,
         dict(act="swish_fwd")),
        ("conv_host f32 3x3 dil2 tanh", "f32", 1, 5, 10, 9, 6, 3, 3,
         dict(pad=2, dilation=2, act="tanh_fwd")),
        ("conv_host f16 3x3 bias relu", "f16", 2, 12, 9, 9, 20, 3, 3,
         dict(pad=1, bias=True, act="relu_fwd")),
        ("conv_host bf16 3x3 bias gelu_tanh", "bf16", 1, 9, 8, 8, 12, 3, 3,
         dict(pad=1, bias=True, act="gelu_tanh_fwd")),
    ]
    for name, dtype, n, c, h, w, k, r, s, extra in cases:
        try:
            run_case(api, name, dtype, n, c, h, w, k, r, s, **extra)
        except oracle.CdnnError as e:
            print(f"{name:40s} error: {e}  FAIL")
            oracle.FAILURES.append(name)
    failures = oracle.FAILURES
    print(f"{len(failures)} failure(s)" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
