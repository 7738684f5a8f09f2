#!/usr/bin/python3
"""Check cpu:reference's gather, gather-elements, top-k and argmax/argmin
(or a fast engine's: cpu:index) against NumPy and PyTorch.

Usage:
    /usr/bin/python3 tests/oracle/test_gather_topk_numpy.py build/lib/libcdnn.so [ENGINE]

ENGINE (default cpu:reference) is the engine every graph is pinned to, so
that the same oracle checks a fast engine.  Gathers are compared exactly
with np.take (ONNX Gather; negative indices count from the end) and
torch.gather (GatherElements); out-of-range indices must fail the execute
with EXECUTION_FAILED naming the index and its position.  Top-k values are
compared exactly with torch.topk; its indices with a stable sort (NaN
largest, equal values by position), which torch.topk matches where values
are distinct.  One line per case, PASS or FAIL; the exit status is
non-zero if any case fails.
"""
import ctypes
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_reference_numpy as oracle  # noqa: E402  (the ctypes binding)


class TopkAttr(ctypes.Structure):
    _fields_ = [("axis", ctypes.c_int32), ("largest", ctypes.c_int32),
                ("k", ctypes.c_int64)]


P, I64 = oracle.P, ctypes.c_int64
oracle.STATUS_FUNCTIONS.update({
    "cdnn_graph_gather": [P, ctypes.c_char_p, ctypes.c_int32, I64, I64, I64],
    "cdnn_graph_gather_elements": [P, ctypes.c_char_p, ctypes.c_int32, I64,
                                   I64, I64],
    "cdnn_graph_topk": [P, ctypes.c_char_p, ctypes.POINTER(TopkAttr), I64, I64,
                        I64],
})
EXECUTION_FAILED = 8
ENGINE = b"cpu:reference"
RNG = np.random.default_rng(20261203)
report_exact = oracle.report_exact


def fail(name, why):
    print(f"{name:40s} {why}  FAIL")
    oracle.FAILURES.append(name)


def run_gather(api, name, op, x, idx, axis, want):
    g = oracle.Graph(api)
    xu, iu = g.input(x), g.input(idx)
    yu = g.output(array=np.zeros(want.shape, x.dtype))
    g.op(op, axis, xu, iu, yu)
    g.build(ENGINE)
    g.execute()
    report_exact(name, g.result(yu), want)


def expect_refused(api, name, op, x, idx, axis, y_shape, words):
    """The execute fails with EXECUTION_FAILED and a message with words."""
    g = oracle.Graph(api)
    xu, iu = g.input(x), g.input(idx)
    yu = g.output(array=np.zeros(y_shape, x.dtype))
    g.op(op, axis, xu, iu, yu)
    g.build(ENGINE)
    try:
        g.execute()
    except oracle.CdnnError as e:
        text = str(e)
        ok = f"({EXECUTION_FAILED})" in text and all(w in text for w in words)
        print(f"{name:40s} refused{'' if ok else ': ' + text}  "
              f"{'PASS' if ok else 'FAIL'}")
        if not ok:
            oracle.FAILURES.append(name)
        return
    fail(name, "executed")


def case_gather():
    x3 = oracle.randn(4, 5, 6)
    big = np.array([2 ** 53, 2 ** 53 + 1, -(2 ** 62), 7, 2 ** 63 - 1], np.int64)
    cases = [
        ("f32 axis 0, 1-D i64", x3, np.array([3, 0, 3, -1], np.int64), 0),
        ("f32 axis 1, 2-D i32 negative", x3,
         np.array([[0, -5], [4, -1], [2, 2]], np.int32), 1),
        ("f32 axis -1, 3-D i64", x3, RNG.integers(-6, 6, (2, 3, 2)), -1),
        ("transposed x, axis 1", oracle.randn(6, 5).T, np.array([5, 1, -2]), 1),
        ("f16 axis 0", oracle.randn(7, 3, dtype=np.float16),
         np.array([[6], [0]], np.int64), 0),
        ("i64 beyond 2^53", big, np.array([1, 0, -4, 4, 1]), 0),
        ("u8 axis 1", RNG.integers(0, 256, (3, 9)).astype(np.uint8),
         RNG.integers(-9, 9, (4,)), 1),
        ("bool axis 0", RNG.integers(0, 2, (5, 2)).astype(np.bool_),
         np.array([4, -5, 0], np.int32), 0),
        ("rank 8 y", oracle.randn(2, 3, 2, 2), RNG.integers(0, 3, (2, 1, 2, 1, 2)),
         1),
    ]
    for name, x, idx, axis in cases:
        run_gather(api_, f"gather {name}", "gather", x, idx, axis,
                   np.take(x, idx, axis))
    expect_refused(api_, "gather index 5 of 5 refused", "gather", x3,
                   np.array([[1, 2], [0, 6]]), 1, (4, 2, 2, 6),
                   ["indices[1, 1] is 6", "-5 .. 4"])
    expect_refused(api_, "gather index -7 of 6 refused", "gather", x3,
                   np.array([-6, -7], np.int32), -1, (4, 5, 2),
                   ["indices[1] is -7", "-6 .. 5"])


def case_gather_elements():
    x = oracle.randn(4, 5, 6)
    for axis, shape in ((0, (3, 5, 2)), (1, (4, 7, 6)), (-1, (2, 3, 9))):
        n = x.shape[axis]
        idx = RNG.integers(-n, n, shape)
        for idx_type in (np.int64, np.int32):
            want = torch.gather(torch.from_numpy(x), axis,
                                torch.from_numpy(np.where(idx < 0, idx + n, idx)))
            run_gather(api_, f"gather_elements axis {axis} {np.dtype(idx_type).name}",
                       "gather_elements", x, idx.astype(idx_type), axis,
                       want.numpy())
    big = np.array([[2 ** 53 + 1, 3], [-1, 2 ** 62]], np.int64)
    run_gather(api_, "gather_elements i64 exact", "gather_elements", big,
               np.array([[1, 0], [0, -1]]), 1, np.array([[3, 2 ** 53 + 1],
                                                         [-1, 2 ** 62]]))
    expect_refused(api_, "gather_elements index refused", "gather_elements", x,
                   np.full((1, 1, 1), 4), 0, (1, 1, 1),
                   ["indices[0, 0, 0] is 4", "-4 .. 3"])


def stable_topk(x, k, axis, largest):
    """Indices and values of the k first under cdnn's order: NaN largest,
    equal values by position (a stable sort of a total order)."""
    x = np.moveaxis(x, axis, -1)
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    filled = np.where(nan, 0, x)
    pos = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    if largest:
        keys = (pos, -filled if x.dtype.kind == "f" else ~filled, ~nan)
    else:
        keys = (pos, filled, nan)
    order = np.lexsort(keys, axis=-1)[..., :k]
    values = np.take_along_axis(x, order, -1)
    return np.moveaxis(order, -1, axis), np.moveaxis(values, -1, axis)


def run_topk(name, x, k, axis, largest, index_type=np.int64, with_indices=True):
    want_i, want_v = stable_topk(x, k, axis, largest)
    g = oracle.Graph(api_)
    xu = g.input(x)
    vu = g.output(array=np.zeros(want_v.shape, x.dtype))
    iu = g.output(array=np.full(want_i.shape, -7, index_type)) if with_indices \
        else oracle.UID_NONE
    attr = TopkAttr(axis, 1 if largest else 0, k)
    g.op("topk", ctypes.byref(attr), xu, vu, iu)
    g.build(ENGINE)
    g.execute()
    report_exact(f"topk {name} values", g.result(vu), want_v)
    wide = x.astype(np.float32) if x.dtype == np.float16 else x  # no f16 topk
    tv, ti = torch.topk(torch.from_numpy(np.ascontiguousarray(wide)), k, axis,
                        largest, True)
    report_exact(f"topk {name} values = torch", g.result(vu),
                 tv.numpy().astype(x.dtype))
    if with_indices:
        report_exact(f"topk {name} indices", g.result(iu), want_i)
        distinct = x.dtype.kind == "f" and np.unique(x).size == x.size
        if distinct:
            report_exact(f"topk {name} indices = torch", g.result(iu), ti.numpy())


def case_topk():
    wide = oracle.randn(6, 50)
    coarse = RNG.integers(-2, 3, (4, 7, 5)).astype(np.float32)  # many ties
    nan_rows = oracle.randn(3, 9)
    nan_rows[0, [2, 6]] = np.nan
    nan_rows[1, :] = np.nan
    nan_rows[2, 8] = np.nan
    big = np.array([[2 ** 53 + 1, 2 ** 53, 2 ** 53 + 1, -(2 ** 62), 5]], np.int64)
    for largest in (True, False):
        kind = "largest" if largest else "smallest"
        run_topk(f"{kind} f32 k 5 of 50", wide, 5, 1, largest)
        run_topk(f"{kind} f32 k 50 of 50 axis -1", wide, 50, -1, largest)
        run_topk(f"{kind} f32 axis 0 i32", wide, 3, 0, largest, np.int32)
        run_topk(f"{kind} ties axis 1", coarse, 4, 1, largest)
        run_topk(f"{kind} ties axis 2 no indices", coarse, 2, 2, largest,
                 with_indices=False)
        run_topk(f"{kind} NaN rows", nan_rows, 4, 1, largest)
        run_topk(f"{kind} transposed x", oracle.randn(8, 6).T, 3, 1, largest)
        run_topk(f"{kind} f16", oracle.randn(5, 11, dtype=np.float16), 6, 1,
                 largest)
        run_topk(f"{kind} f64", oracle.randn(3, 4, dtype=np.float64), 2, 0,
                 largest)
        run_topk(f"{kind} i64 beyond 2^53", big, 3, 1, largest)
        run_topk(f"{kind} u8", RNG.integers(0, 256, (4, 30)).astype(np.uint8),
                 7, 1, largest)


def case_argmax():
    """np.argmax / np.argmin (first extreme, first NaN) over every axis,
    blocks of rows wider and narrower than 64, strided x, every type."""
    coarse = RNG.integers(-2, 3, (3, 70, 5)).astype(np.float32)  # many ties
    nan_rows = oracle.randn(4, 130)
    nan_rows[0, 4] = np.nan
    nan_rows[2, [1, 100]] = np.nan
    nan_rows[3, 129] = np.nan
    big = np.array([[2 ** 53, 2 ** 53 + 1, 2 ** 53 + 1, -5],
                    [7, -(2 ** 62), 7, -(2 ** 62)]], np.int64)
    cases = [("ties axis 0", coarse, 0), ("ties axis 1", coarse, 1),
             ("ties axis 2", coarse, 2), ("NaN rows", nan_rows, 1),
             ("NaN columns", nan_rows, 0),
             ("transposed x", oracle.randn(70, 9).T, 0),
             ("i64 beyond 2^53", big, 1), ("f16", oracle.randn(3, 9, dtype=np.float16), 0),
             ("bf16-free f64", oracle.randn(5, 3, dtype=np.float64), 1),
             ("u8", RNG.integers(0, 256, (6, 80)).astype(np.uint8), 0),
             ("i8", RNG.integers(-128, 128, (6, 80)).astype(np.int8), 1),
             ("bool", RNG.integers(0, 2, (5, 7)).astype(np.bool_), 1),
             ("i32", RNG.integers(-9, 9, (2, 3, 4)).astype(np.int32), 1)]
    for kind, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
        for name, x, axis in cases:
            for out in (np.int64, np.int32):
                want = np.expand_dims(fn(x, axis), axis)
                g = oracle.Graph(api_)
                xu = g.input(x)
                yu = g.output(array=np.full(want.shape, -7, out))
                g.op(kind, axis, xu, yu)
                g.build(ENGINE)
                g.execute()
                report_exact(f"{kind} {name} -> {np.dtype(out).name}",
                             g.result(yu), want)


api_ = None


def main():
    global api_, ENGINE
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: {sys.argv[0]} path/to/libcdnn.so [ENGINE]")
    if len(sys.argv) == 3:
        ENGINE = sys.argv[2].encode()
    api_ = oracle.Cdnn(sys.argv[1])
    for case in (case_gather, case_gather_elements, case_topk, case_argmax):
        try:
            case()
        except oracle.CdnnError as e:
            fail(case.__name__, f"error: {e}")
    failures = oracle.FAILURES
    print(f"{len(failures)} failure(s)" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
