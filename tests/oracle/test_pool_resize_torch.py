#!/usr/bin/python3
"""Check pooling forward and backward and resize (cpu:reference, or a fast
engine) against PyTorch.

Usage:
    /usr/bin/python3 tests/oracle/test_pool_resize_torch.py build/lib/libcdnn.so [ENGINE [RESIZE_ENGINE]]

ENGINE (default cpu:reference) is the engine the pooling forward and
backward graphs are pinned to, RESIZE_ENGINE (default cpu:reference) the
resize graphs' engine, where they take the graph's type (cpu:pool: f32,
f16 and bf16; cpu:resize: f32); the others run on cpu:reference.  The oracles are PyTorch's
torch.nn.functional max_pool1d/2d/3d (with return_indices), avg_pool1d/2d/
3d (count_include_pad both ways, ceil mode), their gradients by autograd,
and interpolate (nearest, nearest-exact, linear/bilinear/trilinear with and
without align_corners), all in float64 on the values cdnn reads (f16 and
bf16 inputs are rounded first).  ONNX's nearest with round_prefer_floor
and ceil is checked against exact fractions.  Max pooling and nearest
resize are compared bit for bit (they return x's elements; indices as
integers), averages and linear resizes within a tolerance per type.
"""
import ctypes
import os
import sys
from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_reference_numpy as oracle  # noqa: E402  (the ctypes binding)

I32x3, I64x3 = ctypes.c_int32 * 3, ctypes.c_int64 * 3


class PoolingAttr(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int32), ("spatial_dims", ctypes.c_int32),
                ("window", I32x3), ("stride", I32x3), ("dilation", I32x3),
                ("ceil_mode", ctypes.c_int32), ("count_include_pad", ctypes.c_int32),
                ("pre_padding", I64x3), ("post_padding", I64x3)]


class ResizeAttr(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int32), ("coordinate", ctypes.c_int32),
                ("nearest", ctypes.c_int32)]


P, I64 = oracle.P, ctypes.c_int64
oracle.STATUS_FUNCTIONS.update({
    "cdnn_graph_pooling_fwd": [P, ctypes.c_char_p, ctypes.POINTER(PoolingAttr), I64,
                               I64, I64],
    "cdnn_graph_pooling_bwd": [P, ctypes.c_char_p, ctypes.POINTER(PoolingAttr), I64,
                               I64, I64, I64],
    "cdnn_graph_resize": [P, ctypes.c_char_p, ctypes.POINTER(ResizeAttr), I64, I64],
})
MAX, AVG = 0, 1
NEAREST, LINEAR = 0, 1
HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC = 0, 1, 2
PREFER_FLOOR, PREFER_CEIL, FLOOR, CEIL = 0, 1, 2, 3
NONE = oracle.UID_NONE
ENGINE = b"cpu:reference"
RESIZE_ENGINE = b"cpu:reference"
RNG = np.random.default_rng(20261203)
TOL = {"f64": 1e-13, "f32": 1e-6, "f16": 1e-3, "bf16": 8e-3}
EXECUTION_FAILED = 8


def stored(a, dtype):
    """(array cdnn reads, its type code, the float64 values it holds)."""
    if dtype == "f64":
        a = a.astype(np.float64)
        return a, oracle.F64, a
    arr, code, values = oracle.stored(a.astype(np.float32), dtype)
    return arr, code, values.astype(np.float64)


def in_type(values, dtype):
    """float64 values (of the type) as an array of dtype, bit for bit."""
    if dtype == "bf16":
        return oracle.bf16_round(values.astype(np.float32))
    return values.astype({"f64": np.float64, "f32": np.float32,
                          "f16": np.float16}[dtype])


def read(arr, dtype):
    if dtype == "bf16":
        return oracle.bf16_value(arr).astype(np.float64)
    return arr.astype(np.float64)


def layout(a, channels_last):
    """a (logical [N, C, ...]) in channels-last memory when asked."""
    if not channels_last:
        return a
    perm = (0,) + tuple(range(2, a.ndim)) + (1,)
    back = np.argsort(perm)
    return np.ascontiguousarray(a.transpose(perm)).transpose(back)


def pool_attr(mode, sd, k, s, pad, dil=1, ceil=False, include_pad=False, post=None):
    a = PoolingAttr()
    a.mode, a.spatial_dims = mode, sd
    for i in range(sd):
        a.window[i], a.stride[i], a.dilation[i] = k, s, dil
        a.pre_padding[i] = pad
        a.post_padding[i] = pad if post is None else post
    a.ceil_mode, a.count_include_pad = int(ceil), int(include_pad)
    return a


def torch_pool(mode, sd, x, k, s, pad, dil, ceil, include_pad):
    if mode == MAX:
        fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[sd - 1]
        return fn(x, k, s, pad, dil, ceil_mode=ceil, return_indices=True)
    fn = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[sd - 1]
    return fn(x, k, s, pad, ceil_mode=ceil, count_include_pad=include_pad), None


def report_tol(name, got, want, tol):
    oracle.report(name, got, want, tol)


def fwd_engine(dtype):
    """The pooling graphs' engine: ENGINE but for f64 (cpu:pool takes f32,
    f16 and bf16)."""
    return ENGINE if dtype != "f64" else b"cpu:reference"


def pool_case(name, mode, shape, dtype, k, s, pad, dil=1, ceil=False,
              include_pad=False, channels_last=False, coarse=False, with_bwd=True):
    sd = len(shape) - 2
    raw = (RNG.integers(-2, 3, shape).astype(np.float32) if coarse
           else oracle.randn(*shape))
    xs, code, xv = stored(raw, dtype)
    xs = layout(xs, channels_last)
    xt = torch.tensor(xv, requires_grad=True)
    yt, it = torch_pool(mode, sd, xt, k, s, pad, dil, ceil, include_pad)
    attr = pool_attr(mode, sd, k, s, pad, dil, ceil, include_pad)
    label = f"{'max' if mode == MAX else 'avg'} {name} {dtype}"

    g = oracle.Graph(api_)
    xu = g.input(xs, code)
    y_arr = layout(in_type(np.zeros(yt.shape), dtype), channels_last)
    yu = g.output(array=y_arr, type_code=code)
    iu = (g.output(array=layout(np.full(yt.shape, -7, np.int64), channels_last))
          if mode == MAX else NONE)
    g.op("pooling_fwd", ctypes.byref(attr), xu, yu, iu)
    g.build(fwd_engine(dtype))
    g.execute()
    want = yt.detach().numpy()
    if mode == MAX:
        oracle.report_exact(label, g.result(yu), in_type(want, dtype))
        oracle.report_exact(label + " indices", g.result(iu), it.numpy())
    else:
        report_tol(label, read(g.result(yu), dtype), want, TOL[dtype])
    if not with_bwd:
        return
    dy_raw = oracle.randn(*yt.shape)
    dys, _, dyv = stored(dy_raw, dtype)
    yt.backward(torch.tensor(dyv))
    want_dx = xt.grad.numpy()
    sources = [("recomputed", NONE)] + ([("from indices", iu)] if mode == MAX else [])
    for how, idx in sources:
        gb = oracle.Graph(api_)
        dyu = gb.input(layout(dys, channels_last), code)
        xbu = gb.input(xs, code)
        ibu = gb.input(g.result(idx)) if idx != NONE else NONE
        dxu = gb.output(array=layout(in_type(np.zeros(shape), dtype), channels_last),
                        type_code=code)
        gb.op("pooling_bwd", ctypes.byref(attr), dyu, xbu, ibu, dxu)
        gb.build(fwd_engine(dtype))
        gb.execute()
        # dx sums dy's (of the type) in double, rounded once: within the
        # type's rounding of PyTorch's float64 gradient.
        report_tol(f"{label} dx {how}", read(gb.result(dxu), dtype), want_dx,
                   TOL[dtype])


def case_pooling():
    for dtype in ("f32", "f64", "f16", "bf16"):
        pool_case("2d 3x3 s2 p1 (ResNet stem)", MAX, (2, 4, 14, 13), dtype, 3, 2, 1)
        pool_case("2d 3x3 s2 p1 ceil", MAX, (2, 3, 12, 11), dtype, 3, 2, 1, ceil=True)
        pool_case("2d 2x2 s2 channels-last", MAX, (2, 5, 8, 6), dtype, 2, 2, 0,
                  channels_last=True)
        pool_case("2d 3x3 s1 p1 include pad", AVG, (2, 3, 9, 10), dtype, 3, 1, 1,
                  include_pad=True)
        pool_case("2d 3x3 s2 p1 ceil excl pad", AVG, (1, 4, 11, 12), dtype, 3, 2, 1,
                  ceil=True)
    pool_case("2d dilation 2 k3 s2 p1", MAX, (2, 3, 13, 12), "f32", 3, 2, 1, dil=2)
    pool_case("2d ties (first max)", MAX, (2, 3, 10, 10), "f32", 3, 1, 1, coarse=True)
    pool_case("2d ties ceil channels-last", MAX, (1, 4, 9, 9), "f64", 2, 2, 1,
              ceil=True, channels_last=True, coarse=True)
    pool_case("1d k4 s3 p2 ceil", MAX, (3, 2, 17), "f32", 4, 3, 2, ceil=True)
    pool_case("1d k5 s2 p2 include pad ceil", AVG, (3, 2, 16), "f32", 5, 2, 2,
              ceil=True, include_pad=True)
    pool_case("3d 3x3x3 s2 p1", MAX, (1, 3, 7, 8, 9), "f32", 3, 2, 1)
    pool_case("3d 2x2x2 s2 channels-last", MAX, (2, 4, 6, 6, 4), "f16", 2, 2, 0,
              channels_last=True)
    pool_case("3d 3x3x3 s2 p1 ceil include pad", AVG, (1, 2, 7, 6, 9), "f32", 3, 2,
              1, ceil=True, include_pad=True)
    pool_case("3d 3x3x3 s1 p1 excl pad", AVG, (1, 2, 5, 6, 7), "bf16", 3, 1, 1)


def case_pooling_more():
    """NaN (PyTorch: the last NaN of a window wins), integer max pooling
    (exactly, against float64 pooling of small integers), asymmetric
    padding (against PyTorch after F.pad with -inf), a bad index."""
    x = oracle.randn(1, 2, 8, 8)
    x[0, 0, 2, 3] = np.nan
    x[0, 1, 5, 5] = x[0, 1, 5, 6] = np.nan
    want, widx = F.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    g = oracle.Graph(api_)
    xu = g.input(x)
    yu = g.output(want.shape)
    iu = g.output(array=np.zeros(want.shape, np.int32))
    g.op("pooling_fwd", ctypes.byref(pool_attr(MAX, 2, 3, 2, 1)), xu, yu, iu)
    g.build(ENGINE)
    g.execute()
    oracle.report_exact("max NaN windows f32", g.result(yu), want.numpy())
    oracle.report_exact("max NaN windows indices i32", g.result(iu), widx.numpy())

    for np_type in (np.int32, np.uint8, np.int8, np.int64):
        info = np.iinfo(np_type)
        xi = RNG.integers(max(info.min, -1000), min(info.max, 1000) + 1,
                          (2, 3, 9, 7)).astype(np_type)
        want = F.max_pool2d(torch.tensor(xi.astype(np.float64)), 2, 2, 1, ceil_mode=True)
        g = oracle.Graph(api_)
        xu = g.input(xi)
        yu = g.output(array=np.zeros(want.shape, np_type))
        g.op("pooling_fwd", ctypes.byref(pool_attr(MAX, 2, 2, 2, 1, ceil=True)), xu,
             yu, NONE)
        g.build(b"cpu:reference")
        g.execute()
        oracle.report_exact(f"max 2d ceil {np.dtype(np_type).name}", g.result(yu),
                            want.numpy().astype(np_type))
    big = np.array([[[2 ** 53 + 1, 2 ** 53, -(2 ** 62), 2 ** 63 - 1]]], np.int64)
    g = oracle.Graph(api_)
    xu = g.input(big)
    yu = g.output(array=np.zeros((1, 1, 2), np.int64))
    g.op("pooling_fwd", ctypes.byref(pool_attr(MAX, 1, 2, 2, 0)), xu, yu, NONE)
    g.build(b"cpu:reference")
    g.execute()
    oracle.report_exact("max 1d i64 beyond 2^53", g.result(yu),
                        np.array([[[2 ** 53 + 1, 2 ** 63 - 1]]], np.int64))

    # Asymmetric padding: pre 2 / post 0 in H, 0 / 1 in W.
    x = oracle.randn(2, 3, 9, 8)
    attr = pool_attr(MAX, 2, 3, 2, 0)
    attr.pre_padding[0], attr.post_padding[0] = 2, 0
    attr.pre_padding[1], attr.post_padding[1] = 0, 1
    want = F.max_pool2d(F.pad(torch.tensor(x), (0, 1, 2, 0), value=-np.inf), 3, 2)
    g = oracle.Graph(api_)
    xu = g.input(x)
    yu = g.output(want.shape)
    g.op("pooling_fwd", ctypes.byref(attr), xu, yu, NONE)
    g.build(ENGINE)
    g.execute()
    oracle.report_exact("max asymmetric padding", g.result(yu), want.numpy())
    attr.mode = AVG
    attr.count_include_pad = 1
    padded = F.pad(torch.tensor(x.astype(np.float64)), (0, 1, 2, 0))
    want = F.avg_pool2d(padded, 3, 2)
    g = oracle.Graph(api_)
    xu = g.input(x)
    yu = g.output(want.shape)
    g.op("pooling_fwd", ctypes.byref(attr), xu, yu, NONE)
    g.build(ENGINE)
    g.execute()
    report_tol("avg asymmetric padding include pad", g.result(yu), want.numpy(), 1e-6)

    # An index that is not a tap of its window fails the backward.
    x = oracle.randn(1, 1, 4, 4)
    idx = np.array([[[[0, 2], [8, 10]]]], np.int64)
    idx[0, 0, 1, 1] = 0  # window (1, 1) covers 10, 11, 14, 15
    g = oracle.Graph(api_)
    dyu, xu, iu = g.input(oracle.randn(1, 1, 2, 2)), g.input(x), g.input(idx)
    dxu = g.output((1, 1, 4, 4))
    g.op("pooling_bwd", ctypes.byref(pool_attr(MAX, 2, 2, 2, 0)), dyu, xu, iu, dxu)
    g.build(ENGINE)
    try:
        g.execute()
        print(f"{'max bwd bad index refused':40s} executed  FAIL")
        oracle.FAILURES.append("bad index")
    except oracle.CdnnError as e:
        ok = f"({EXECUTION_FAILED})" in str(e) and "is 0, which is not" in str(e) and (
            ENGINE != b"cpu:reference" or "indices[0, 0, 1, 1] is 0" in str(e))
        print(f"{'max bwd bad index refused':40s} {'' if ok else str(e)}  "
              f"{'PASS' if ok else 'FAIL'}")
        if not ok:
            oracle.FAILURES.append("bad index")


# ---- resize -------------------------------------------------------------------

def onnx_nearest(n, m, coord, rounding):
    """Source index of each of m outputs, from exact fractions."""
    out = []
    for j in range(m):
        if n == m:
            c = Fraction(j)
        elif coord == HALF_PIXEL:
            c = Fraction(2 * j + 1, 2) * n / m - Fraction(1, 2)
        elif coord == ALIGN_CORNERS:
            c = Fraction(j * (n - 1), m - 1) if m > 1 else Fraction(0)
        else:
            c = Fraction(j * n, m)
        f = c.numerator // c.denominator
        frac = c - f
        i = {FLOOR: f, CEIL: f + (frac > 0),
             PREFER_FLOOR: f + (frac > Fraction(1, 2)),
             PREFER_CEIL: f + (frac >= Fraction(1, 2))}[rounding]
        out.append(min(max(i, 0), n - 1))
    return out


def run_resize(name, x, code, out_shape, mode, coord, rounding, want, tol=None,
               dtype="f32"):
    attr = ResizeAttr(mode, coord, rounding)
    g = oracle.Graph(api_)
    xu = g.input(x, code)
    y = np.zeros(out_shape, x.dtype)
    yu = g.output(array=y, type_code=code)
    g.op("resize", ctypes.byref(attr), xu, yu)
    g.build(RESIZE_ENGINE if code == oracle.F32 else b"cpu:reference")
    g.execute()
    if tol is None:
        oracle.report_exact(name, g.result(yu), want)
    else:
        report_tol(name, read(g.result(yu), dtype), want, tol)


def case_resize():
    interp_modes = {3: "linear", 4: "bilinear", 5: "trilinear"}
    shapes = [((2, 3, 5, 7), (2, 3, 10, 14)), ((1, 2, 9, 8), (1, 2, 4, 3)),
              ((1, 2, 6, 5), (1, 2, 13, 11)), ((2, 3, 11), (2, 3, 4)),
              ((1, 2, 3, 4, 5), (1, 2, 6, 3, 9))]
    for xs_shape, ys_shape in shapes:
        size = ys_shape[2:]
        tag = f"{list(xs_shape[2:])}->{list(size)}"
        for dtype in ("f32", "f64", "f16", "bf16"):
            xs, code, xv = stored(oracle.randn(*xs_shape), dtype)
            xt = torch.tensor(xv)
            for align in (False, True):
                want = F.interpolate(xt, size=size, mode=interp_modes[len(xs_shape)],
                                     align_corners=align).numpy()
                run_resize(f"linear {tag} align={int(align)} {dtype}", xs, code,
                           ys_shape, LINEAR, ALIGN_CORNERS if align else HALF_PIXEL, 0,
                           want, TOL[dtype], dtype)
            for torch_mode, coord, rounding in (("nearest", ASYMMETRIC, FLOOR),
                                                ("nearest-exact", HALF_PIXEL,
                                                 PREFER_CEIL)):
                want = F.interpolate(xt, size=size, mode=torch_mode).numpy()
                run_resize(f"{torch_mode} {tag} {dtype}", xs, code, ys_shape, NEAREST,
                           coord, rounding, in_type(want, dtype))
        # ONNX's own nearest modes, from exact fractions, on u8.
        xu8 = RNG.integers(0, 256, xs_shape).astype(np.uint8)
        for coord in (HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC):
            for rounding in (PREFER_FLOOR, PREFER_CEIL, FLOOR, CEIL):
                idx = [onnx_nearest(n, m, coord, rounding)
                       for n, m in zip(xs_shape, ys_shape)]
                want = xu8[np.ix_(*idx)]
                run_resize(f"nearest u8 {tag} c{coord} r{rounding}", xu8, oracle.U8,
                           ys_shape, NEAREST, coord, rounding, want)
    # channels-last x and y (strides only)
    x = layout(oracle.randn(2, 4, 6, 5), True)
    want = F.interpolate(torch.tensor(x.astype(np.float64)), size=(9, 10),
                         mode="bilinear", align_corners=False).numpy()
    run_resize("linear channels-last f32", x, oracle.F32, (2, 4, 9, 10), LINEAR,
               HALF_PIXEL, 0, want, 1e-6)


api_ = None


def main():
    global api_, ENGINE, RESIZE_ENGINE
    if len(sys.argv) not in (2, 3, 4):
        sys.exit(f"usage: {sys.argv[0]} path/to/libcdnn.so [ENGINE [RESIZE_ENGINE]]")
    if len(sys.argv) >= 3:
        ENGINE = sys.argv[2].encode()
    if len(sys.argv) == 4:
        RESIZE_ENGINE = sys.argv[3].encode()
    api_ = oracle.Cdnn(sys.argv[1])
    for case in (case_pooling, case_pooling_more, case_resize):
        try:
            case()
        except oracle.CdnnError as e:
            print(f"{case.__name__:40s} error: {e}  FAIL")
            oracle.FAILURES.append(case.__name__)
    failures = oracle.FAILURES
    print(f"{len(failures)} failure(s)" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
