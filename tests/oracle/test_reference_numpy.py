#!/usr/bin/python3
"""Check the cpu:reference engine against NumPy, computed in float64.

Usage:
    /usr/bin/python3 tests/oracle/test_reference_numpy.py build/lib/libcdnn.so

The oracles below are written from the math, independently of the C
engine: convolution works on an explicitly padded input, one filter tap at
a time, by strided slicing; the rest is NumPy's own arithmetic.  Every case
builds a graph through the public C API, pins the build to cpu:reference,
runs it on NumPy arrays and prints one line: name, max error relative to
max |reference|, PASS or FAIL.  The exit status is non-zero if any case
fails.  Outputs start as NaN (or a non-boolean byte), so an element the
engine never writes fails too.
"""
import ctypes
import itertools
import math
import sys
import threading

import numpy as np

# cdnn_data_type_t
F32, F16, BF16, F64, I32, I64, I8, U8, BOOL = range(1, 10)
TYPE_OF_DTYPE = {np.dtype(np.float32): F32, np.dtype(np.float16): F16,
                 np.dtype(np.float64): F64, np.dtype(np.int32): I32,
                 np.dtype(np.int64): I64, np.dtype(np.int8): I8,
                 np.dtype(np.uint8): U8, np.dtype(np.bool_): BOOL}

# cdnn_pointwise_mode_t, in declaration order.
PW_MODES = """add sub mul div max min pow identity neg abs exp log sqrt rsqrt
    reciprocal sin cos erf floor ceil cmp_eq cmp_ne cmp_gt cmp_ge cmp_lt cmp_le
    logical_and logical_or logical_not select fma relu_fwd gelu_fwd
    gelu_tanh_fwd sigmoid_fwd swish_fwd tanh_fwd elu_fwd softplus_fwd relu_bwd
    gelu_bwd gelu_tanh_bwd sigmoid_bwd swish_bwd tanh_bwd elu_bwd
    softplus_bwd round fmod remainder asin acos atan sinh cosh tan asinh acosh
    atanh atan2""".split()
PW = {name: i for i, name in enumerate(PW_MODES)}

# cdnn_reduction_mode_t, in declaration order.
REDUCTIONS = "add mul min max amax avg norm1 norm2".split()

UID_NONE = -(2 ** 63)
RNG = np.random.default_rng(20240611)


class ConvAttr(ctypes.Structure):
    _fields_ = [("spatial_dims", ctypes.c_int32),
                ("pre_padding", ctypes.c_int64 * 3),
                ("post_padding", ctypes.c_int64 * 3),
                ("stride", ctypes.c_int64 * 3),
                ("dilation", ctypes.c_int64 * 3),
                ("groups", ctypes.c_int64)]


class PointwiseAttr(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int),
                ("relu_lower_clip", ctypes.c_double),
                ("relu_upper_clip", ctypes.c_double),
                ("relu_lower_clip_slope", ctypes.c_double),
                ("elu_alpha", ctypes.c_double),
                ("softplus_beta", ctypes.c_double),
                ("swish_beta", ctypes.c_double)]


class SdpaAttr(ctypes.Structure):
    _fields_ = [("scale", ctypes.c_double), ("causal", ctypes.c_int32)]


class TransposeAttr(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int32), ("perm", ctypes.c_int32 * 8)]


class PadAttr(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int32), ("pre", ctypes.c_int64 * 8),
                ("value", ctypes.c_double)]


class SliceAttr(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int32), ("step", ctypes.c_int32 * 8),
                ("start", ctypes.c_int64 * 8)]


# ---------------------------------------------------------------------------
# The C API through ctypes
# ---------------------------------------------------------------------------

P = ctypes.c_void_p
I64P = ctypes.POINTER(ctypes.c_int64)
STATUS_FUNCTIONS = {
    "cdnn_handle_create": [ctypes.POINTER(P), ctypes.c_char_p],
    "cdnn_graph_create": [ctypes.POINTER(P)],
    "cdnn_graph_tensor": [P, ctypes.c_int64, ctypes.c_char_p, ctypes.c_int,
                          ctypes.c_int32, I64P, I64P],
    "cdnn_graph_tensor_set_virtual": [P, ctypes.c_int64],
    "cdnn_graph_tensor_set_scalar": [P, ctypes.c_int64, ctypes.c_double],
    "cdnn_graph_conv_fwd": [P, ctypes.c_char_p, ctypes.POINTER(ConvAttr)]
    + [ctypes.c_int64] * 3,
    "cdnn_graph_conv_bwd_data": [P, ctypes.c_char_p, ctypes.POINTER(ConvAttr)]
    + [ctypes.c_int64] * 3,
    "cdnn_graph_conv_bwd_filter": [P, ctypes.c_char_p,
                                   ctypes.POINTER(ConvAttr)]
    + [ctypes.c_int64] * 3,
    "cdnn_graph_matmul": [P, ctypes.c_char_p] + [ctypes.c_int64] * 3,
    "cdnn_graph_pointwise": [P, ctypes.c_char_p,
                             ctypes.POINTER(PointwiseAttr)]
    + [ctypes.c_int64] * 4,
    "cdnn_graph_reduction": [P, ctypes.c_char_p, ctypes.c_int]
    + [ctypes.c_int64] * 2,
    "cdnn_graph_batchnorm_inference": [P, ctypes.c_char_p, ctypes.c_double]
    + [ctypes.c_int64] * 6,
    "cdnn_graph_layernorm": [P, ctypes.c_char_p, ctypes.c_double]
    + [ctypes.c_int64] * 6,
    "cdnn_graph_rmsnorm": [P, ctypes.c_char_p, ctypes.c_double]
    + [ctypes.c_int64] * 5,
    "cdnn_graph_sdpa_fwd": [P, ctypes.c_char_p, ctypes.POINTER(SdpaAttr)]
    + [ctypes.c_int64] * 4,
    "cdnn_graph_softmax": [P, ctypes.c_char_p, ctypes.c_int32]
    + [ctypes.c_int64] * 2,
    "cdnn_graph_log_softmax": [P, ctypes.c_char_p, ctypes.c_int32]
    + [ctypes.c_int64] * 2,
    "cdnn_graph_reshape": [P, ctypes.c_char_p] + [ctypes.c_int64] * 2,
    "cdnn_graph_pad": [P, ctypes.c_char_p, ctypes.POINTER(PadAttr)]
    + [ctypes.c_int64] * 2,
    "cdnn_graph_argmax": [P, ctypes.c_char_p, ctypes.c_int32]
    + [ctypes.c_int64] * 2,
    "cdnn_graph_argmin": [P, ctypes.c_char_p, ctypes.c_int32]
    + [ctypes.c_int64] * 2,
    "cdnn_graph_concat": [P, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32,
                          I64P, ctypes.c_int64],
    "cdnn_graph_slice": [P, ctypes.c_char_p, ctypes.POINTER(SliceAttr)]
    + [ctypes.c_int64] * 2,
    "cdnn_graph_transpose": [P, ctypes.c_char_p, ctypes.POINTER(TransposeAttr)]
    + [ctypes.c_int64] * 2,
    "cdnn_build_options_create": [ctypes.POINTER(P)],
    "cdnn_build_options_pin_engine": [P, ctypes.c_uint64],
    "cdnn_graph_build": [P, P, P],
    "cdnn_graph_workspace_size": [P, ctypes.POINTER(ctypes.c_size_t)],
    "cdnn_graph_execute": [P, P, ctypes.c_int32, I64P,
                           ctypes.POINTER(P), P],
    "cdnn_graph_from_json": [ctypes.POINTER(P), ctypes.c_char_p,
                             ctypes.c_size_t],
}


class CdnnError(RuntimeError):
    pass


class Cdnn:
    """The library, one CPU handle, and status checking."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        for name, argtypes in STATUS_FUNCTIONS.items():
            fn = getattr(self.lib, name)
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
        self.lib.cdnn_last_error.restype = ctypes.c_char_p
        self.lib.cdnn_engine_id_from_name.argtypes = [ctypes.c_char_p]
        self.lib.cdnn_engine_id_from_name.restype = ctypes.c_uint64
        self.lib.cdnn_conv_attr_init.argtypes = [ctypes.POINTER(ConvAttr),
                                                 ctypes.c_int32]
        self.lib.cdnn_pointwise_attr_init.argtypes = [
            ctypes.POINTER(PointwiseAttr), ctypes.c_int]
        for name in ("cdnn_graph_destroy", "cdnn_handle_destroy",
                     "cdnn_build_options_destroy"):
            getattr(self.lib, name).argtypes = [P]
        self.handle = P()
        self.call("cdnn_handle_create", ctypes.byref(self.handle), b"cpu")

    def call(self, name, *args):
        status = getattr(self.lib, name)(*args)
        if status != 0:
            message = self.lib.cdnn_last_error().decode()
            raise CdnnError(f"{name} failed ({status}): {message}")

    def conv_attr(self, spatial_dims, pre=0, post=0, stride=1, dilation=1,
                  groups=1):
        a = ConvAttr()
        self.lib.cdnn_conv_attr_init(ctypes.byref(a), spatial_dims)
        for d in range(spatial_dims):
            a.pre_padding[d], a.post_padding[d] = pre, post
            a.stride[d], a.dilation[d] = stride, dilation
        a.groups = groups
        return a

    def pointwise_attr(self, mode, **fields):
        a = PointwiseAttr()
        self.lib.cdnn_pointwise_attr_init(ctypes.byref(a), PW[mode])
        for key, value in fields.items():
            setattr(a, key, value)
        return a


def int64s(values):
    return (ctypes.c_int64 * len(values))(*values)


class Graph:
    """One cdnn graph and the NumPy arrays bound to its tensors by uid."""

    def __init__(self, api):
        self.api = api
        self.ptr = P()
        self.arrays = {}
        self.next_uid = 1
        api.call("cdnn_graph_create", ctypes.byref(self.ptr))

    def __del__(self):
        self.api.lib.cdnn_graph_destroy(self.ptr)

    def _declare(self, shape, type_code, strides=None):
        uid = self.next_uid
        self.next_uid += 1
        stride_arg = int64s(strides) if strides is not None else None
        self.api.call("cdnn_graph_tensor", self.ptr, uid, None, type_code,
                      len(shape), int64s(shape), stride_arg)
        return uid

    def _bind(self, array, type_code):
        """Declare a tensor over array's memory, strides and all."""
        strides = [s // array.itemsize for s in array.strides]
        type_code = type_code or TYPE_OF_DTYPE[array.dtype]
        uid = self._declare(array.shape, type_code, strides)
        self.arrays[uid] = array
        return uid

    def input(self, array, type_code=None):
        return self._bind(array, type_code)

    def output(self, shape=None, dtype=np.float32, array=None,
               type_code=None):
        """An output over array, or over a new packed array of NaN."""
        if array is None:
            array = np.empty(shape, dtype)
            array.view(np.uint8)[...] = 0xFF  # NaN for floats, 255 for bool
        return self._bind(array, type_code)

    def virtual(self, shape, type_code=F32):
        uid = self._declare(shape, type_code)
        self.api.call("cdnn_graph_tensor_set_virtual", self.ptr, uid)
        return uid

    def scalar(self, value, rank, type_code=F32):
        uid = self._declare([1] * rank, type_code)
        self.api.call("cdnn_graph_tensor_set_scalar", self.ptr, uid, value)
        return uid

    def op(self, name, *args):
        self.api.call("cdnn_graph_" + name, self.ptr, None, *args)

    def build(self, engine=b"cpu:reference"):
        """Build pinned to engine; remember the workspace it needs."""
        opts = P()
        self.api.call("cdnn_build_options_create", ctypes.byref(opts))
        try:
            engine_id = self.api.lib.cdnn_engine_id_from_name(engine)
            self.api.call("cdnn_build_options_pin_engine", opts, engine_id)
            self.api.call("cdnn_graph_build", self.ptr, self.api.handle, opts)
        finally:
            self.api.lib.cdnn_build_options_destroy(opts)
        size = ctypes.c_size_t()
        self.api.call("cdnn_graph_workspace_size", self.ptr,
                      ctypes.byref(size))
        self.workspace_size = size.value

    def execute(self, arrays=None):
        """Execute on arrays (uid -> array), by default the bound ones."""
        arrays = arrays or self.arrays
        workspace = np.zeros(max(self.workspace_size, 1), np.uint8)
        uids = list(arrays)
        ptrs = (P * len(uids))(*[arrays[u].ctypes.data for u in uids])
        self.api.call("cdnn_graph_execute", self.ptr, self.api.handle,
                      len(uids), int64s(uids), ptrs, workspace.ctypes.data)

    def run(self):
        self.build()
        self.execute()

    def result(self, uid):
        return self.arrays[uid]


# ---------------------------------------------------------------------------
# NumPy oracles (float64)
# ---------------------------------------------------------------------------

def f64(a):
    return np.asarray(a, dtype=np.float64)


def conv_out_size(n, k, pre, post, stride, dilation):
    return (n + pre + post - dilation * (k - 1) - 1) // stride + 1


def tap_window(tap, stride, dilation, out):
    """The slices of the padded input that filter tap `tap` reads."""
    return tuple(slice(r * dilation, r * dilation + stride * (o - 1) + 1,
                       stride) for r, o in zip(tap, out))


def pad_spatial(x, pre, post):
    return np.pad(x, [(0, 0), (0, 0)] + [(pre, post)] * (x.ndim - 2))


def conv_fwd_np(x, w, pre, post, stride, dilation, groups):
    x, w = f64(x), f64(w)
    xp = pad_spatial(x, pre, post)
    out = [conv_out_size(n, k, pre, post, stride, dilation)
           for n, k in zip(x.shape[2:], w.shape[2:])]
    kg, cg = w.shape[0] // groups, w.shape[1]
    y = np.zeros([x.shape[0], w.shape[0]] + out)
    for tap in itertools.product(*[range(k) for k in w.shape[2:]]):
        xs = xp[(slice(None), slice(None)) + tap_window(tap, stride,
                                                        dilation, out)]
        for g in range(groups):
            y[:, g * kg:(g + 1) * kg] += np.einsum(
                "nc...,kc->nk...", xs[:, g * cg:(g + 1) * cg],
                w[(slice(g * kg, (g + 1) * kg), slice(None)) + tap])
    return y


def conv_bwd_data_np(dy, w, in_shape, pre, post, stride, dilation, groups):
    """Scatter dy back through every tap into a padded dx, then crop."""
    dy, w = f64(dy), f64(w)
    kg, cg = w.shape[0] // groups, w.shape[1]
    dxp = np.zeros([dy.shape[0], cg * groups]
                   + [n + pre + post for n in in_shape])
    for tap in itertools.product(*[range(k) for k in w.shape[2:]]):
        window = (slice(None), slice(None)) + tap_window(
            tap, stride, dilation, dy.shape[2:])
        for g in range(groups):
            dxp[window][:, g * cg:(g + 1) * cg] += np.einsum(
                "nk...,kc->nc...", dy[:, g * kg:(g + 1) * kg],
                w[(slice(g * kg, (g + 1) * kg), slice(None)) + tap])
    crop = tuple(slice(pre, pre + n) for n in in_shape)
    return dxp[(slice(None), slice(None)) + crop]


def conv_bwd_filter_np(x, dy, w_shape, pre, post, stride, dilation, groups):
    x, dy = f64(x), f64(dy)
    xp = pad_spatial(x, pre, post)
    n, kg, cg = x.shape[0], w_shape[0] // groups, w_shape[1]
    dw = np.zeros(w_shape)
    for tap in itertools.product(*[range(k) for k in w_shape[2:]]):
        xs = xp[(slice(None), slice(None)) + tap_window(
            tap, stride, dilation, dy.shape[2:])]
        for g in range(groups):
            x_group = xs[:, g * cg:(g + 1) * cg].reshape(n, cg, -1)
            dy_group = dy[:, g * kg:(g + 1) * kg].reshape(n, kg, -1)
            dw[(slice(g * kg, (g + 1) * kg), slice(None)) + tap] = np.einsum(
                "ncs,nks->kc", x_group, dy_group)
    return dw


erf_np = np.vectorize(math.erf)


def gelu_np(x):
    return x * 0.5 * (1 + erf_np(x / math.sqrt(2)))


def gelu_tanh_np(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi)
                                  * (x + 0.044715 * x ** 3)))


def sigmoid_np(x):
    return 1 / (1 + np.exp(-x))


def reduce_np(mode, x, axes):
    fns = {"add": lambda: x.sum(axes, keepdims=True),
           "mul": lambda: x.prod(axes, keepdims=True),
           "min": lambda: x.min(axes, keepdims=True),
           "max": lambda: x.max(axes, keepdims=True),
           "amax": lambda: np.abs(x).max(axes, keepdims=True),
           "avg": lambda: x.mean(axes, keepdims=True),
           "norm1": lambda: np.abs(x).sum(axes, keepdims=True),
           "norm2": lambda: np.sqrt((x * x).sum(axes, keepdims=True))}
    return fns[mode]()


def sdpa_np(q, k, v, scale, causal):
    q, k, v = f64(q), f64(k), f64(v)
    scale = scale or 1 / math.sqrt(q.shape[-1])
    s = scale * q @ np.swapaxes(k, -1, -2)
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None],
                     s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------

FAILURES = []


def report(name, got, want, tol=1e-5):
    """Print max |got - want| / max |want|; a NaN or a wrong shape fails."""
    got, want = f64(got), f64(want)
    if got.shape != want.shape:
        err = math.inf
    else:
        scale = max(np.abs(want).max(), 1e-30)
        diff = np.abs(got - want).max() / scale
        err = math.inf if np.isnan(diff) else diff
    ok = err <= tol
    print(f"{name:40s} max err {err:10.3e}  {'PASS' if ok else 'FAIL'}")
    if not ok:
        FAILURES.append(name)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------
# Cases: one function each
# ---------------------------------------------------------------------------

def conv_geometry(pre=0, post=0, stride=1, dilation=1, groups=1):
    return pre, post, stride, dilation, groups


def run_conv_fwd(api, name, x, w, spatial_dims, y_array=None, tol=1e-5,
                 **geometry):
    pre, post, stride, dil, groups = conv_geometry(**geometry)
    want = conv_fwd_np(x, w, pre, post, stride, dil, groups)
    g = Graph(api)
    xu, wu = g.input(x), g.input(w)
    yu = g.output(want.shape, x.dtype, array=y_array)
    attr = api.conv_attr(spatial_dims, pre, post, stride, dil, groups)
    g.op("conv_fwd", ctypes.byref(attr), xu, wu, yu)
    g.run()
    report(name, g.result(yu), want, tol)


def case_conv_fwd(api):
    run_conv_fwd(api, "conv_fwd 2d pad1 stride2 dil2 g2",
                 randn(2, 4, 9, 8), randn(6, 2, 3, 3), 2,
                 pre=1, post=2, stride=2, dilation=2, groups=2)
    run_conv_fwd(api, "conv_fwd 1d pad2 stride2",
                 randn(2, 3, 11), randn(4, 3, 3), 1, pre=2, post=1, stride=2)
    run_conv_fwd(api, "conv_fwd 3d pad1 dil2 g2",
                 randn(1, 4, 5, 6, 5), randn(4, 2, 2, 3, 2), 3,
                 pre=1, post=1, dilation=2, groups=2)


def case_conv_fwd_nhwc(api):
    """x and y in NHWC memory, described to cdnn by strides."""
    x_nhwc = randn(2, 7, 6, 3)
    y_nhwc = np.full((2, 7, 6, 5), np.nan, np.float32)
    run_conv_fwd(api, "conv_fwd 2d NHWC strides",
                 x_nhwc.transpose(0, 3, 1, 2), randn(5, 3, 3, 3), 2,
                 y_array=y_nhwc.transpose(0, 3, 1, 2), pre=1, post=1)


def case_conv_fwd_f16(api):
    run_conv_fwd(api, "conv_fwd 2d f16",
                 randn(1, 4, 6, 6, dtype=np.float16),
                 randn(3, 4, 3, 3, dtype=np.float16), 2, tol=2e-3, pre=1,
                 post=1)


def run_conv_bwd_data(api, name, dy_shape, w, x_spatial, spatial_dims,
                      **geometry):
    pre, post, stride, dil, groups = conv_geometry(**geometry)
    dy = randn(*dy_shape)
    want = conv_bwd_data_np(dy, w, x_spatial, pre, post, stride, dil, groups)
    g = Graph(api)
    dyu, wu = g.input(dy), g.input(w)
    dxu = g.output(want.shape)
    attr = api.conv_attr(spatial_dims, pre, post, stride, dil, groups)
    g.op("conv_bwd_data", ctypes.byref(attr), dyu, wu, dxu)
    g.run()
    report(name, g.result(dxu), want)


def case_conv_bwd_data(api):
    # x 9x8, w 3x3, pre 1 post 2, stride 2, dilation 2: y 4x4
    run_conv_bwd_data(api, "conv_bwd_data 2d pad stride2 dil2 g2",
                      (2, 6, 4, 4), randn(6, 2, 3, 3), [9, 8], 2,
                      pre=1, post=2, stride=2, dilation=2, groups=2)
    # x 11, w 3, pre 2 post 1, stride 2: y 6
    run_conv_bwd_data(api, "conv_bwd_data 1d pad stride2",
                      (2, 4, 6), randn(4, 3, 3), [11], 1,
                      pre=2, post=1, stride=2)
    # x 5x6x5, w 2x3x2, pad 1, dilation 2: y 5x4x5
    run_conv_bwd_data(api, "conv_bwd_data 3d pad dil2 g2",
                      (1, 4, 5, 4, 5), randn(4, 2, 2, 3, 2), [5, 6, 5], 3,
                      pre=1, post=1, dilation=2, groups=2)


def run_conv_bwd_filter(api, name, x, dy_shape, w_shape, spatial_dims,
                        **geometry):
    pre, post, stride, dil, groups = conv_geometry(**geometry)
    dy = randn(*dy_shape)
    want = conv_bwd_filter_np(x, dy, w_shape, pre, post, stride, dil, groups)
    g = Graph(api)
    xu, dyu = g.input(x), g.input(dy)
    dwu = g.output(w_shape)
    attr = api.conv_attr(spatial_dims, pre, post, stride, dil, groups)
    g.op("conv_bwd_filter", ctypes.byref(attr), xu, dyu, dwu)
    g.run()
    report(name, g.result(dwu), want)


def case_conv_bwd_filter(api):
    run_conv_bwd_filter(api, "conv_bwd_filter 2d pad stride2 dil2 g2",
                        randn(2, 4, 9, 8), (2, 6, 4, 4), (6, 2, 3, 3), 2,
                        pre=1, post=2, stride=2, dilation=2, groups=2)
    run_conv_bwd_filter(api, "conv_bwd_filter 1d pad stride2",
                        randn(2, 3, 11), (2, 4, 6), (4, 3, 3), 1,
                        pre=2, post=1, stride=2)
    run_conv_bwd_filter(api, "conv_bwd_filter 3d pad dil2 g2",
                        randn(1, 4, 5, 6, 5), (1, 4, 5, 4, 5),
                        (4, 2, 2, 3, 2), 3, pre=1, post=1, dilation=2,
                        groups=2)


def run_matmul(api, name, a, b, tol=1e-5):
    want = f64(a) @ f64(b)
    g = Graph(api)
    au, bu = g.input(a), g.input(b)
    cu = g.output(want.shape, a.dtype)
    g.op("matmul", au, bu, cu)
    g.run()
    report(name, g.result(cu), want, tol)


def case_matmul(api):
    run_matmul(api, "matmul batched", randn(3, 5, 7), randn(3, 7, 4))
    run_matmul(api, "matmul batch broadcast",
               randn(2, 1, 5, 6), randn(1, 3, 6, 4))
    run_matmul(api, "matmul transposed b (strides)",
               randn(2, 5, 6), randn(2, 4, 6).transpose(0, 2, 1))
    run_matmul(api, "matmul f16", randn(2, 8, 16, dtype=np.float16),
               randn(2, 16, 5, dtype=np.float16), tol=2e-3)


def run_pointwise(api, name, mode, inputs, want, out_dtype=np.float32,
                  tol=1e-5, **fields):
    g = Graph(api)
    uids = [g.input(a) for a in inputs] + [UID_NONE] * (3 - len(inputs))
    yu = g.output(want.shape, out_dtype)
    attr = api.pointwise_attr(mode, **fields)
    g.op("pointwise", ctypes.byref(attr), *uids, yu)
    g.run()
    got = g.result(yu)
    report(name, got.view(np.uint8) if got.dtype == np.bool_ else got,
           want, tol)


def case_pointwise(api):
    a, b = randn(2, 3, 4, 5), randn(1, 3, 1, 5)
    run_pointwise(api, "pointwise add broadcast", "add", [a, b],
                  f64(a) + f64(b))
    row = np.broadcast_to(randn(1, 5), (4, 5))  # stride 0 on dim 0
    x = randn(4, 5)
    run_pointwise(api, "pointwise mul zero-stride input", "mul", [x, row],
                  f64(x) * f64(row))
    x = randn(3, 17) * 3
    run_pointwise(api, "pointwise gelu", "gelu_fwd", [x], gelu_np(f64(x)))
    run_pointwise(api, "pointwise gelu_tanh", "gelu_tanh_fwd", [x],
                  gelu_tanh_np(f64(x)))
    run_pointwise(api, "pointwise sigmoid", "sigmoid_fwd", [x],
                  sigmoid_np(f64(x)))
    run_pointwise(api, "pointwise relu clip 1.5 slope 0.1", "relu_fwd", [x],
                  np.where(f64(x) < 0, 0.1 * f64(x), np.minimum(f64(x), 1.5)),
                  relu_upper_clip=1.5, relu_lower_clip_slope=0.1)
    dy = randn(3, 17)
    run_pointwise(api, "pointwise relu_bwd", "relu_bwd", [dy, x],
                  f64(dy) * (f64(x) > 0))
    cond = RNG.random((3, 17)) < 0.5
    b, c = randn(3, 17), randn(1, 17)
    run_pointwise(api, "pointwise select (bool cond)", "select",
                  [cond, b, c], np.where(cond, f64(b), f64(c)))
    run_pointwise(api, "pointwise cmp_gt -> bool", "cmp_gt", [x, c],
                  (f64(x) > f64(c)).astype(np.float64), out_dtype=np.bool_)


def case_pointwise_scalar(api):
    """A pass-by-value scalar: no pointer, rounded to its type (f32)."""
    x = randn(4, 6)
    value = 0.1
    g = Graph(api)
    xu, su = g.input(x), g.scalar(value, 2)
    yu = g.output(x.shape)
    attr = api.pointwise_attr("mul")
    g.op("pointwise", ctypes.byref(attr), xu, su, UID_NONE, yu)
    g.run()
    report("pointwise mul by scalar", g.result(yu),
           f64(x) * f64(np.float32(value)))


def bf16_round(x):
    """Round float32 to the nearest bfloat16 (ties to even) as uint16."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = bits + 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16).astype(np.uint16)


def bf16_value(h):
    return (h.astype(np.uint32) << 16).view(np.float32)


def stored(a, dtype):
    """a (float32) as cdnn reads it in dtype ("f32", "f16" or "bf16"): the
    array, its type code, and the float32 values it holds."""
    if dtype == "bf16":
        bits = bf16_round(a)
        return bits, BF16, bf16_value(bits)
    if dtype == "f16":
        h = a.astype(np.float16)
        return h, F16, h.astype(np.float32)
    a = a.astype(np.float32)
    return a, F32, a


def case_pointwise_bf16(api):
    a, b = bf16_round(randn(5, 8)), bf16_round(randn(5, 8))
    g = Graph(api)
    au, bu = g.input(a, BF16), g.input(b, BF16)
    y = np.full((5, 8), 0xFFFF, np.uint16)  # a bf16 NaN
    yu = g.output(array=y, type_code=BF16)
    attr = api.pointwise_attr("add")
    g.op("pointwise", ctypes.byref(attr), au, bu, UID_NONE, yu)
    g.run()
    report("pointwise add bf16", bf16_value(y),
           f64(bf16_value(a)) + f64(bf16_value(b)), tol=8e-3)


def report_exact(name, got, want):
    """Every element equal: as Python integers (exact for i64), or for
    floating-point arrays bit for bit."""
    if np.issubdtype(got.dtype, np.floating):
        ok = (got.shape == want.shape and got.dtype == want.dtype and
              got.tobytes() == np.ascontiguousarray(want).tobytes())
    else:
        ok = got.shape == want.shape and all(
            int(g) == int(w) for g, w in zip(got.ravel(), want.ravel()))
    print(f"{name:40s} {'exact' if ok else 'differs'}  "
          f"{'PASS' if ok else 'FAIL'}")
    if not ok:
        bad = [(int(g), int(w)) for g, w in zip(got.ravel(), want.ravel())
               if int(g) != int(w)]
        print(f"    first differences (got, want): {bad[:5]}")
        FAILURES.append(name)


def wrap_to(values, dtype):
    """Python integers wrapped to dtype's bits (two's complement), as NumPy
    keeps them when an integer type overflows."""
    info = np.iinfo(dtype)
    span = info.max - info.min + 1
    return np.array([(int(v) - info.min) % span + info.min for v in values],
                    dtype).reshape(np.shape(values))


def trunc_div(a, b):
    """C's integer division, x / 0 = 0, on Python integers."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def random_ints(dtype, shape):
    """Random values over the whole range, with the edges mixed in."""
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    edges = np.array([info.min, info.max, 0, 1, -1 if info.min < 0 else 2],
                     dtype)
    x.ravel()[:len(edges)] = edges
    return x


def run_int_pointwise(api, mode, a, b, out_dtype):
    g = Graph(api)
    au, bu = g.input(a), g.input(b) if b is not None else UID_NONE
    yu = g.output(a.shape, out_dtype)
    attr = api.pointwise_attr(mode)
    g.op("pointwise", ctypes.byref(attr), au, bu, UID_NONE, yu)
    g.run()
    return g.result(yu)


def case_integer_semantics(api):
    """Integer arithmetic in the inputs' type: NumPy's own wrapping add,
    subtract, multiply and negate; division against C's truncation on
    Python integers (NumPy's // floors); exact for i64 beyond 2^53."""
    for dtype in (np.uint8, np.int8, np.int32, np.int64):
        a, b = random_ints(dtype, (6, 7)), random_ints(dtype, (6, 7))
        b.ravel()[5:8] = [0, 0, 1]  # x / 0 and x / 1
        name = np.dtype(dtype).name
        with np.errstate(over="ignore"):
            for mode, want in (("add", a + b), ("sub", a - b),
                               ("mul", a * b), ("max", np.maximum(a, b))):
                report_exact(f"int {mode} {name}",
                             run_int_pointwise(api, mode, a, b, dtype), want)
            if dtype != np.uint8:
                report_exact(f"int neg {name}",
                             run_int_pointwise(api, "neg", a, None, dtype), -a)
        quotients = [trunc_div(int(x), int(y))
                     for x, y in zip(a.ravel(), b.ravel())]
        report_exact(f"int div {name} (truncating)",
                     run_int_pointwise(api, "div", a, b, dtype),
                     wrap_to(quotients, dtype).reshape(a.shape))
        report_exact(f"int cmp_lt {name}",
                     run_int_pointwise(api, "cmp_lt", a, b, np.bool_)
                     .view(np.uint8), (a < b).astype(np.uint8))
    # Integer reductions: NumPy's sum, prod, min and max (which accumulate
    # integers in int64), wrapped into y's type by astype.
    for dtype in (np.uint8, np.int8, np.int32, np.int64):
        x = random_ints(dtype, (4, 5, 6))
        name = np.dtype(dtype).name
        with np.errstate(over="ignore"):
            for mode, fn in (("add", np.sum), ("mul", np.prod),
                             ("min", np.min), ("max", np.max)):
                want = fn(x.astype(np.int64), axis=(0, 2), keepdims=True)
                g = Graph(api)
                xu = g.input(x)
                yu = g.output(array=np.zeros(want.shape, dtype))
                g.op("reduction", REDUCTIONS.index(mode), xu, yu)
                g.run()
                report_exact(f"int reduction {mode} {name} over dims 0,2",
                             g.result(yu), want.astype(dtype))
    x = np.array([2 ** 53 + 1, -(2 ** 53) - 1, 2 ** 62 + 3], np.int64)
    report_exact("int add i64 2^53+1 + 0",
                 run_int_pointwise(api, "add", x, np.zeros(3, np.int64),
                                   np.int64), x)
    # Narrowing casts keep the low bits (NumPy's astype between integers).
    w = random_ints(np.int32, (5, 9))
    for dtype in (np.uint8, np.int8):
        report_exact(f"cast i32 -> {np.dtype(dtype).name} (wraps)",
                     run_int_pointwise(api, "identity", w, None, dtype),
                     w.astype(dtype))
    # Float -> integer truncates toward zero (np.trunc), NaN -> 0, beyond
    # the range saturates.
    f = (RNG.standard_normal(40) * 3e9).astype(np.float32)
    f[:6] = [2.7, -2.7, np.nan, np.inf, -np.inf, 0.99]
    info = np.iinfo(np.int32)
    want = np.clip(np.nan_to_num(np.trunc(f.astype(np.float64)), nan=0.0,
                                 posinf=info.max, neginf=info.min),
                   info.min, info.max).astype(np.int32)
    report_exact("cast f32 -> i32 (truncates)",
                 run_int_pointwise(api, "identity", f, None, np.int32), want)


def case_json_from_python(api):
    """Graph JSON written by Python's json module, whose non-finite numbers
    are bare Infinity, -Infinity and NaN, loads and runs: relu clipped to
    [-inf, 1.5]."""
    import json
    graph = {"format_major": 1,
             "tensors": [{"uid": 1, "data_type": "F64", "dims": [5]},
                         {"uid": 2, "data_type": "F64", "dims": [5]}],
             "nodes": [{"op": "Pointwise", "attr_type": "PointwiseAttr",
                        "attr": {"mode": "ReluFwd",
                                 "relu_lower_clip": float("-inf"),
                                 "relu_upper_clip": 1.5},
                        "inputs": [{"slot": 0, "uid": 1}],
                        "outputs": [{"slot": 0, "uid": 2}]}]}
    text = json.dumps(graph).encode()
    assert b"-Infinity" in text
    g = Graph(api)
    api.lib.cdnn_graph_destroy(g.ptr)
    g.ptr = P()
    api.call("cdnn_graph_from_json", ctypes.byref(g.ptr), text, len(text))
    x = np.array([-1e300, -2.0, 0.5, 1.5, 7.0])
    y = np.full(5, np.nan)
    g.arrays = {1: x, 2: y}
    g.run()
    report("graph JSON from python (-Infinity)", y, np.minimum(x, 1.5), 0)


def case_reductions(api):
    x = RNG.uniform(-1.5, 1.5, (3, 4, 5, 6)).astype(np.float32)
    for mode_index, mode in enumerate(REDUCTIONS):
        want = reduce_np(mode, f64(x), (1, 3))
        g = Graph(api)
        xu = g.input(x)
        yu = g.output(want.shape)
        g.op("reduction", mode_index, xu, yu)
        g.run()
        report(f"reduction {mode} over dims 1,3", g.result(yu), want)


def case_batchnorm(api):
    x = randn(2, 3, 4, 5)
    scale, bias, mean = randn(1, 3, 1, 1), randn(1, 3, 1, 1), randn(1, 3, 1, 1)
    var = RNG.uniform(0.5, 2.0, (1, 3, 1, 1)).astype(np.float32)
    eps = 1e-3
    want = ((f64(x) - mean) / np.sqrt(f64(var) + eps)) * scale + bias
    g = Graph(api)
    uids = [g.input(t) for t in (x, scale, bias, mean, var)]
    yu = g.output(x.shape)
    g.op("batchnorm_inference", eps, *uids, yu)
    g.run()
    report("batchnorm inference", g.result(yu), want)


def run_layernorm(api, name, x, param_shape, axes, with_bias=True):
    scale, bias, eps = randn(*param_shape), randn(*param_shape), 1e-5
    xd = f64(x)
    mean = xd.mean(axes, keepdims=True)
    var = ((xd - mean) ** 2).mean(axes, keepdims=True)
    inv = 1 / np.sqrt(var + eps)
    want = (xd - mean) * inv * scale + (bias if with_bias else 0)
    g = Graph(api)
    xu, su = g.input(x), g.input(scale)
    bu = g.input(bias) if with_bias else UID_NONE
    yu, mu, iu = (g.output(x.shape), g.output(mean.shape),
                  g.output(mean.shape))
    g.op("layernorm", eps, xu, su, bu, yu, mu, iu)
    g.run()
    report(name + " y", g.result(yu), want)
    report(name + " mean", g.result(mu), mean)
    report(name + " inv_variance", g.result(iu), inv)


def case_layernorm(api):
    run_layernorm(api, "layernorm last dim", randn(2, 3, 16) * 2 + 1,
                  (1, 1, 16), (2,))
    run_layernorm(api, "layernorm dims 1,2", randn(2, 3, 8), (1, 3, 8),
                  (1, 2))
    run_layernorm(api, "layernorm without bias", randn(3, 2, 12) * 3 - 1,
                  (1, 1, 12), (2,), with_bias=False)


def case_rmsnorm(api):
    x = randn(4, 3, 16)
    scale, bias, eps = randn(1, 1, 16), randn(1, 1, 16), 1e-5
    inv = 1 / np.sqrt((f64(x) ** 2).mean(2, keepdims=True) + eps)
    want = f64(x) * inv * scale + bias
    g = Graph(api)
    xu, su, bu = g.input(x), g.input(scale), g.input(bias)
    yu, iu = g.output(x.shape), g.output(inv.shape)
    g.op("rmsnorm", eps, xu, su, bu, yu, iu)
    g.run()
    report("rmsnorm y (with bias)", g.result(yu), want)
    report("rmsnorm inv_rms", g.result(iu), inv)


def run_sdpa(api, name, q, k, v, scale, causal):
    want = sdpa_np(q, k, v, scale, causal)
    g = Graph(api)
    qu, ku, vu = g.input(q), g.input(k), g.input(v)
    ou = g.output(want.shape)
    attr = SdpaAttr(scale, 1 if causal else 0)
    g.op("sdpa_fwd", ctypes.byref(attr), qu, ku, vu, ou)
    g.run()
    report(name, g.result(ou), want)


def case_sdpa(api):
    q, k, v = randn(2, 3, 5, 8), randn(2, 3, 7, 8), randn(2, 3, 7, 6)
    run_sdpa(api, "sdpa default scale", q, k, v, 0.0, False)
    run_sdpa(api, "sdpa causal scale 0.3", q, k, v, 0.3, True)


def softmax_np(x, axis, log_space):
    """From the definition, in float64: exp(x - max) / sum, or its log."""
    x = f64(x)
    shifted = x - x.max(axis, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis, keepdims=True))
    return shifted - log_sum if log_space else np.exp(shifted - log_sum)


def run_softmax(api, name, x, axis, log_space, out_dtype=None, tol=1e-6):
    want = softmax_np(x, axis, log_space)
    g = Graph(api)
    xu = g.input(x)
    yu = g.output(x.shape, out_dtype or x.dtype)
    g.op("log_softmax" if log_space else "softmax", axis, xu, yu)
    g.run()
    report(name, g.result(yu), want, tol)


def case_softmax(api):
    """Softmax and log-softmax over several shapes, axes (negative ones and
    a middle one), a transposed input, f64, f16 and rows with -inf (a
    masked entry) against NumPy in float64."""
    for log_space in (False, True):
        kind = "log_softmax" if log_space else "softmax"
        run_softmax(api, f"{kind} last axis", randn(4, 7) * 4, -1, log_space)
        run_softmax(api, f"{kind} axis 1 of 3", randn(2, 9, 3) * 3, 1,
                    log_space)
        run_softmax(api, f"{kind} axis 0 long rows", randn(300, 2) * 10, 0,
                    log_space)
        run_softmax(api, f"{kind} transposed x (strides)",
                    randn(6, 5).T * 2, -1, log_space)
        run_softmax(api, f"{kind} f64", randn(3, 33, dtype=np.float64) * 30,
                    -1, log_space, tol=1e-14)
        run_softmax(api, f"{kind} f16", randn(2, 3, 16, dtype=np.float16),
                    2, log_space, tol=2e-3)
        masked = randn(5, 6)
        masked[:, ::2] = -np.inf
        masked[0, 1] = -np.inf  # and one row with a single finite entry
        want = softmax_np(masked, -1, log_space)
        g = Graph(api)
        xu, yu = g.input(masked), g.output(masked.shape)
        g.op(kind, -1, xu, yu)
        g.run()
        got = g.result(yu)
        finite = np.isfinite(want)
        same = (np.array_equal(np.isneginf(got), np.isneginf(want)) and
                np.allclose(got[finite], want[finite], rtol=1e-6, atol=0))
        print(f"{kind + ' rows with -inf':40s} {'same' if same else 'differs'}"
              f"  {'PASS' if same else 'FAIL'}")
        if not same:
            FAILURES.append(kind + " rows with -inf")


def run_movement(api, name, x, want, op, *args, y_array=None):
    """x through one reshape or transpose; want is NumPy's result, compared
    exactly (elements are moved, never computed)."""
    g = Graph(api)
    xu = g.input(x)
    if y_array is None:
        y_array = np.zeros(want.shape, x.dtype)
    yu = g.output(array=y_array)
    g.op(op, *args, xu, yu)
    g.run()
    report_exact(name, g.result(yu).view(np.uint8) if x.dtype == np.bool_
                 else g.result(yu), want.view(np.uint8)
                 if x.dtype == np.bool_ else want)


def case_reshape_transpose(api):
    """NumPy's reshape (of the logical tensor, so a transposed view of x
    reshapes in its logical order) and transpose, over types (i64 beyond
    2^53 exact), ranks and strided inputs and outputs."""
    x = randn(2, 3, 4)
    run_movement(api, "reshape [2,3,4] -> [6,4]", x, x.reshape(6, 4),
                 "reshape")
    run_movement(api, "reshape [2,3,4] -> [24]", x, x.reshape(24), "reshape")
    xt = randn(5, 6).T  # strided x: its logical order is not memory order
    run_movement(api, "reshape transposed [6,5] -> [3,10]", xt,
                 xt.reshape(3, 10), "reshape")
    out = np.zeros((10, 3), np.float32).T  # strided y
    run_movement(api, "reshape into a strided y", xt, xt.reshape(3, 10),
                 "reshape", y_array=out)
    big = np.arange(2 ** 53, 2 ** 53 + 12, dtype=np.int64).reshape(3, 4)
    run_movement(api, "reshape i64 beyond 2^53", big, big.reshape(2, 6),
                 "reshape")
    flags = RNG.random((4, 6)) < 0.5
    run_movement(api, "reshape bool", flags, flags.reshape(2, 3, 4),
                 "reshape")
    for perm in ((1, 0), (2, 0, 1), (0, 2, 1), (3, 1, 0, 2)):
        x = randn(*[2, 3, 4, 5][:len(perm)])
        attr = TransposeAttr(len(perm), (ctypes.c_int32 * 8)(*perm))
        run_movement(api, f"transpose {perm}", x,
                     np.ascontiguousarray(np.transpose(x, perm)),
                     "transpose", ctypes.byref(attr))
    x = randn(3, 4, dtype=np.float16)[:, ::2]  # strided f16
    attr = TransposeAttr(2, (ctypes.c_int32 * 8)(1, 0))
    run_movement(api, "transpose strided f16", x, np.ascontiguousarray(x.T),
                 "transpose", ctypes.byref(attr))
    attr = TransposeAttr(2, (ctypes.c_int32 * 8)(1, 0))
    run_movement(api, "transpose i64 beyond 2^53", big,
                 np.ascontiguousarray(big.T), "transpose", ctypes.byref(attr))


def run_concat(api, name, xs, axis):
    want = np.concatenate(xs, axis)
    g = Graph(api)
    uids = [g.input(x) for x in xs]
    yu = g.output(array=np.zeros(want.shape, xs[0].dtype))
    g.op("concat", axis, len(uids), int64s(uids), yu)
    g.run()
    report_exact(name, g.result(yu), want)


def run_slice(api, name, x, start, step, shape):
    window = tuple(slice(s, s + (n - 1) * k + 1, k)
                   for s, k, n in zip(start, step, shape))
    want = np.ascontiguousarray(x[window])
    attr = SliceAttr(len(start), (ctypes.c_int32 * 8)(*step),
                     (ctypes.c_int64 * 8)(*start))
    run_movement(api, name, x, want, "slice", ctypes.byref(attr))


def run_pad(api, name, x, pre, post, value, out_dtype=None):
    want = np.pad(x, list(zip(pre, post)), constant_values=value)
    attr = PadAttr(len(pre), (ctypes.c_int64 * 8)(*pre), value)
    run_movement(api, name, x, want, "pad", ctypes.byref(attr))


def case_pad(api):
    """NumPy's constant np.pad, exactly: floats, a strided x, integers
    (the value as the type holds it), i64 beyond 2^53."""
    run_pad(api, "pad f32 [4,5] pre 1,2 post 3,0 by -1.5", randn(4, 5),
            (1, 2), (3, 0), -1.5)
    run_pad(api, "pad transposed x", randn(6, 3).T, (0, 1), (2, 2), 0.0)
    run_pad(api, "pad f16 rank 3", randn(2, 3, 4, dtype=np.float16),
            (1, 0, 2), (0, 1, 1), 7.0)
    run_pad(api, "pad u8 by 200", np.arange(12, dtype=np.uint8).reshape(3, 4),
            (2, 1), (1, 2), 200.0)
    run_pad(api, "pad i64 beyond 2^53",
            np.arange(2 ** 53, 2 ** 53 + 6, dtype=np.int64).reshape(2, 3),
            (1, 1), (1, 1), -3.0)


def case_concat_slice(api):
    """NumPy's concatenate and basic slicing x[start:...:step], exactly,
    over axes, input counts, types and strided inputs."""
    a, b, c = randn(2, 3, 4), randn(2, 5, 4), randn(2, 1, 4)
    run_concat(api, "concat 3 inputs, axis 1", [a, b, c], 1)
    run_concat(api, "concat axis -1, strided input",
               [randn(3, 4), randn(5, 3).T[:, ::1], randn(3, 2)], -1)
    run_concat(api, "concat axis 0, 5 inputs, i64",
               [np.arange(2 ** 53, 2 ** 53 + 6, dtype=np.int64).reshape(2, 3)
                + k for k in range(5)], 0)
    run_concat(api, "concat u8", [np.arange(6, dtype=np.uint8).reshape(3, 2),
                                  np.arange(9, dtype=np.uint8).reshape(3, 3)],
               1)
    x = randn(6, 9, 5)
    run_slice(api, "slice start 1,2,0 step 2,3,1", x, (1, 2, 0), (2, 3, 1),
              (3, 3, 5))
    run_slice(api, "slice a single element", x, (5, 8, 4), (1, 1, 1),
              (1, 1, 1))
    run_slice(api, "slice of a transposed x", randn(7, 4).T, (1, 2), (2, 1),
              (2, 5))
    run_slice(api, "slice i64 beyond 2^53",
              np.arange(2 ** 53, 2 ** 53 + 20, dtype=np.int64).reshape(4, 5),
              (0, 1), (3, 2), (2, 2))


def case_argmax(api):
    """NumPy's argmax and argmin (first index on ties, first NaN wins) over
    axes, a strided x, ties, NaN and integers beyond 2^53, into i64 and
    i32."""
    coarse = RNG.integers(-2, 3, (4, 6, 5)).astype(np.float32)  # many ties
    nan_rows = randn(3, 7)
    nan_rows[0, 4] = np.nan
    nan_rows[2, [1, 5]] = np.nan
    big = np.array([[2 ** 53, 2 ** 53 + 1, 2 ** 53 + 1, -5],
                    [7, -(2 ** 62), 7, -(2 ** 62)]], np.int64)
    cases = [("ties, axis 1", coarse, 1), ("ties, axis -1", coarse, -1),
             ("ties, axis 0", coarse, 0), ("NaN rows", nan_rows, -1),
             ("transposed x", randn(5, 8).T, 0),
             ("i64 beyond 2^53", big, 1), ("f16", randn(3, 9, dtype=np.float16), 1)]
    for kind, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
        for name, x, axis in cases:
            for out in (np.int64, np.int32):
                want = np.expand_dims(fn(x, axis), axis)
                g = Graph(api)
                xu = g.input(x)
                yu = g.output(array=np.full(want.shape, -7, out))
                g.op(kind, axis, xu, yu)
                g.run()
                report_exact(f"{kind} {name} -> {np.dtype(out).name}",
                             g.result(yu), want)


def case_fused_virtual(api):
    """matmul -> bias add -> gelu, intermediates virtual (workspace)."""
    a, b, bias = randn(4, 6, 8), randn(4, 8, 5), randn(1, 1, 5)
    want = gelu_np(f64(a) @ f64(b) + f64(bias))
    g = Graph(api)
    au, bu, biasu = g.input(a), g.input(b), g.input(bias)
    mm, biased = g.virtual([4, 6, 5]), g.virtual([4, 6, 5])
    yu = g.output(want.shape)
    g.op("matmul", au, bu, mm)
    add = api.pointwise_attr("add")
    g.op("pointwise", ctypes.byref(add), mm, biasu, UID_NONE, biased)
    gelu = api.pointwise_attr("gelu_fwd")
    g.op("pointwise", ctypes.byref(gelu), biased, UID_NONE, UID_NONE, yu)
    g.run()
    report("matmul+bias+gelu (virtual)", g.result(yu), want)


def case_concurrent_execute(api):
    """One plan (conv -> virtual -> relu) run from 4 threads at once, each
    on its own buffers and workspace."""
    w, geometry = randn(6, 2, 3, 3), (1, 2, 2, 2, 2)
    x_shape, y_shape = (2, 4, 9, 8), (2, 6, 4, 4)
    g = Graph(api)
    xu, wu = g.input(np.zeros(x_shape, np.float32)), g.input(w)
    conv_out, yu = g.virtual(y_shape), g.output(y_shape)
    attr = api.conv_attr(2, *geometry)
    g.op("conv_fwd", ctypes.byref(attr), xu, wu, conv_out)
    relu = api.pointwise_attr("relu_fwd")
    g.op("pointwise", ctypes.byref(relu), conv_out, UID_NONE, UID_NONE, yu)
    g.build()
    xs = [randn(*x_shape) for _ in range(4)]
    ys = [np.full(y_shape, np.nan, np.float32) for _ in range(4)]

    def worker(i):
        for _ in range(3):
            g.execute({xu: xs[i], wu: w, yu: ys[i]})

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        want = np.maximum(conv_fwd_np(xs[i], w, *geometry), 0)
        report(f"concurrent execute, thread {i}", ys[i], want)


CASES = [case_conv_fwd, case_conv_fwd_nhwc, case_conv_fwd_f16,
         case_conv_bwd_data, case_conv_bwd_filter, case_matmul,
         case_pointwise, case_pointwise_scalar, case_pointwise_bf16,
         case_integer_semantics, case_json_from_python,
         case_reductions, case_batchnorm, case_layernorm, case_rmsnorm,
         case_sdpa, case_softmax, case_reshape_transpose, case_concat_slice,
         case_argmax, case_pad,
         case_fused_virtual,
         case_concurrent_execute]


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libcdnn.so")
    api = Cdnn(sys.argv[1])
    for case in CASES:
        try:
            case(api)
        except CdnnError as e:
            print(f"{case.__name__:40s} error: {e}  FAIL")
            FAILURES.append(case.__name__)
    print(f"{len(FAILURES)} failure(s)" if FAILURES else "all passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
