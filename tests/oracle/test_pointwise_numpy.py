#!/usr/bin/python3
"""Pointwise rank broadcasting and the pointwise modes of graph format 1.3
(round, fmod, remainder, the inverse trigonometric and hyperbolic modes,
atan2) against NumPy, on cpu:reference and on the fast CPU engines.

Usage:
    /usr/bin/python3 tests/oracle/test_pointwise_numpy.py build/lib/libcdnn.so

Rank broadcasting: inputs of lower rank than y (rank 1 and 2 biases, a
one-element tensor, a pass-by-value scalar, strided and integer inputs, a
lower-rank intermediate) are compared with NumPy's broadcasting on
cpu:reference, cpu:fused_pointwise and the engine a plain build picks for a
matmul + bias epilogue; the graph saves as format 1.3, reloads from its
binary and its JSON form and computes the same bytes.  Refusals (a dim that
does not broadcast, a tensor used at two ranks) are checked by message.

Modes: floats against NumPy's float64 result rounded to the output type
(within a few ulp: 2 on cpu:reference, which computes in double, 4 on
cpu:fused_pointwise, which computes in float), integers exactly (i8, u8,
i32, i64; x fmod 0 = x remainder 0 = 0), at the edges: negative operands,
zero divisors, -0.0, NaN, +-inf, and halves for round.  One line per check,
PASS or FAIL; the exit status is non-zero if any check fails.
"""
import ctypes
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_reference_numpy as oracle  # noqa: E402  (the ctypes binding)

P, I64 = oracle.P, ctypes.c_int64
Graph, UID_NONE, f64 = oracle.Graph, oracle.UID_NONE, oracle.f64
FAILURES = oracle.FAILURES

# cdnn_pointwise_mode_t: the modes format 1.3 appended, in order.
NEW_MODES = """round fmod remainder asin acos atan sinh cosh tan asinh acosh
    atanh atan2""".split()
for i, name in enumerate(NEW_MODES):  # after softplus_bwd, in order
    assert oracle.PW.setdefault(name, oracle.PW["softplus_bwd"] + 1 + i) == \
        oracle.PW["softplus_bwd"] + 1 + i

oracle.STATUS_FUNCTIONS.update({
    "cdnn_graph_save": [P, ctypes.c_int, P, ctypes.c_size_t,
                        ctypes.POINTER(ctypes.c_size_t)],
    "cdnn_graph_load": [ctypes.POINTER(P), P, P, ctypes.c_size_t],
    "cdnn_graph_to_json": [P, ctypes.POINTER(ctypes.c_char_p)],
    "cdnn_graph_from_json": [ctypes.POINTER(P), ctypes.c_char_p,
                             ctypes.c_size_t],
    "cdnn_graph_validate": [P],
    "cdnn_plan_load": [ctypes.POINTER(P), P, P, ctypes.c_size_t],
    "cdnn_graph_tensor_shape": [P, I64, ctypes.POINTER(ctypes.c_int),
                                ctypes.POINTER(ctypes.c_int32),
                                ctypes.POINTER(I64), ctypes.POINTER(I64)],
})
SAVE_GRAPH, SAVE_PLAN = 1, 2

REFERENCE, FUSED = b"cpu:reference", b"cpu:fused_pointwise"


def check(name, ok, detail=""):
    print(f"{name:56s} {'PASS' if ok else 'FAIL'}  {detail}")
    if not ok:
        FAILURES.append(name)


# ---------------------------------------------------------------------------
# Rank broadcasting
# ---------------------------------------------------------------------------

def pointwise_graph(api, mode, inputs, y_shape, out_dtype=np.float32):
    """A graph y = mode(inputs...); an input is an array or ('scalar', v,
    rank)."""
    g = Graph(api)
    uids = []
    for a in inputs:
        if isinstance(a, tuple):
            uids.append(g.scalar(a[1], a[2]))
        else:
            uids.append(g.input(a))
    uids += [UID_NONE] * (3 - len(uids))
    yu = g.output(y_shape, out_dtype)
    attr = api.pointwise_attr(mode)
    g.op("pointwise", ctypes.byref(attr), *uids, yu)
    return g, yu


HOST_KERNELS = b"kernels:pointwise_host"


def broadcast_case(api, name, mode, inputs, want, engines, out_dtype=np.float32,
                   tol=1e-6):
    for engine in engines:
        g, yu = pointwise_graph(api, mode, inputs, want.shape, out_dtype)
        try:
            if engine == HOST_KERNELS:
                try:
                    g.build(engine)
                except oracle.CdnnError as e:
                    # not loaded (no kernels provider or pack in this build)
                    # or a mode its kernels lack: noted; any other refusal
                    # (a rank-broadcast input, say) fails
                    msg = str(e)
                    known = "not served" in msg or "pointwise kernels lack" in msg
                    if not known:
                        check(f"{name} [{engine.decode()}]", False, msg)
                    else:
                        print(f"{'':56s} note: {engine.decode()}: {msg[-90:]}")
                    continue
            else:
                g.build(engine)
            g.execute()
        except oracle.CdnnError as e:
            check(f"{name} [{engine.decode()}]", False, str(e))
            continue
        got = g.result(yu)
        oracle.report(f"{name} [{engine.decode()}]", got, want, tol)


def case_rank_broadcast(api):
    both = (REFERENCE, FUSED, HOST_KERNELS)
    x = oracle.randn(2, 3, 4, 5)
    for shape in [(5,), (4, 1), (4, 5), (1,), (3, 1, 5)]:
        b = oracle.randn(*shape)
        broadcast_case(api, f"add [2,3,4,5] + {list(shape)}", "add", [x, b],
                       f64(x) + f64(b), both)
    # b first: the lower-rank input in slot 0.
    b = oracle.randn(5)
    broadcast_case(api, "sub [5] - [2,3,4,5]", "sub", [b, x], f64(b) - f64(x), both)
    # A strided rank-1 input (every other element of a row).
    row = oracle.randn(10)[::2]
    broadcast_case(api, "mul [2,3,4,5] * strided [5]", "mul", [x, row],
                   f64(x) * f64(row), both)
    # A pass-by-value scalar of rank 1 on a rank-4 y.
    broadcast_case(api, "mul [2,3,4,5] * scalar rank 1", "mul",
                   [x, ("scalar", 0.25, 1)], f64(x) * 0.25, both)
    # f16 out, f64 in and out.
    broadcast_case(api, "add f16 out", "add", [x, b],
                   f64((f64(x) + f64(b)).astype(np.float16)), both,
                   out_dtype=np.float16, tol=1e-3)
    xd, bd = f64(oracle.randn(3, 4, 6)), f64(oracle.randn(4, 1))
    broadcast_case(api, "div f64 [3,4,6] / [4,1]", "div", [xd, bd], xd / bd,
                   (REFERENCE,), out_dtype=np.float64, tol=1e-15)
    # Integers: exact, wrapping u8.
    xi = oracle.random_ints(np.uint8, (3, 4, 5))
    bi = oracle.random_ints(np.uint8, (5,))
    g, yu = pointwise_graph(api, "add", [xi, bi], (3, 4, 5), np.uint8)
    g.run()
    oracle.report_exact("add u8 [3,4,5] + [5] (wraps)", g.result(yu),
                        (xi + bi).astype(np.uint8))
    # Select with a rank-2 bool condition and a rank-1 fallback.
    cond = oracle.RNG.random((4, 5)) < 0.5
    c = oracle.randn(5)
    broadcast_case(api, "select cond [4,5], [2,3,4,5], [5]", "select",
                   [cond, x, c], np.where(cond, f64(x), f64(c)), both)
    # y declared without a shape: the largest input rank.
    g = Graph(api)
    xu, bu = g.input(x), g.input(b)
    yu = g.next_uid
    g.next_uid += 1
    api.call("cdnn_graph_tensor", g.ptr, yu, None, oracle.F32, 0, None, None)
    attr = api.pointwise_attr("add")
    g.op("pointwise", ctypes.byref(attr), xu, bu, UID_NONE, yu)
    api.call("cdnn_graph_validate", g.ptr)
    rank, dims = ctypes.c_int32(), (I64 * 8)()
    api.call("cdnn_graph_tensor_shape", g.ptr, yu, None, ctypes.byref(rank), dims,
             None)
    check("inferred y of [2,3,4,5] + [5] is [2,3,4,5]",
          list(dims[:rank.value]) == [2, 3, 4, 5], str(list(dims[:rank.value])))
    api.call("cdnn_graph_tensor_shape", g.ptr, bu, None, ctypes.byref(rank), dims,
             None)
    check("b keeps its declared rank 1 in tensor_shape", rank.value == 1,
          f"rank {rank.value}")


def case_lower_rank_intermediate(api):
    """t = b1 + b2 at rank 1 (virtual), then y = x * t at rank 4: the
    writer of t is shown at rank 4 too."""
    x, b1, b2 = oracle.randn(2, 3, 4, 5), oracle.randn(5), oracle.randn(1)
    for engine in (REFERENCE, FUSED):
        g = Graph(api)
        xu, b1u, b2u = g.input(x), g.input(b1), g.input(b2)
        tu = g.virtual([5])
        yu = g.output(x.shape)
        add, mul = api.pointwise_attr("add"), api.pointwise_attr("mul")
        g.op("pointwise", ctypes.byref(add), b1u, b2u, UID_NONE, tu)
        g.op("pointwise", ctypes.byref(mul), xu, tu, UID_NONE, yu)
        g.build(engine)
        g.execute()
        oracle.report(f"x * (b1 + b2), t rank 1 virtual [{engine.decode()}]",
                      g.result(yu), f64(x) * (f64(b1) + f64(b2)), 1e-6)


def build_if_served(api, g, engine):
    """Build pinned to engine; False (and a note) when no provider here
    serves it (the kernels provider needs its packs)."""
    try:
        g.build(engine)
        return True
    except oracle.CdnnError as e:
        if "not served" not in str(e):
            raise
        print(f"{'':56s} note: {engine.decode()} not loaded here, skipped")
        return False


EPILOGUE_ENGINES = (None, REFERENCE, b"cpu:blas_matmul", b"kernels:matmul_host")


def case_matmul_bias_epilogue(api):
    """matmul + rank-1 bias + relu, built with the library's own choice,
    pinned to each engine with a matmul epilogue (cpu:blas_matmul, the
    kernels provider's host matmul) and on cpu:reference: against NumPy."""
    a, w, bias = oracle.randn(6, 8, 16), oracle.randn(16, 24), oracle.randn(24)
    w3 = w.reshape(1, 16, 24)
    want = np.maximum(f64(a) @ f64(w3) + f64(bias), 0)
    for engine in EPILOGUE_ENGINES:
        g = Graph(api)
        au, wu, bu = g.input(a), g.input(w3), g.input(bias)
        cu, su = g.virtual([6, 8, 24]), g.virtual([6, 8, 24])
        yu = g.output(want.shape)
        g.op("matmul", au, wu, cu)
        add, relu = api.pointwise_attr("add"), api.pointwise_attr("relu_fwd")
        g.op("pointwise", ctypes.byref(add), cu, bu, UID_NONE, su)
        g.op("pointwise", ctypes.byref(relu), su, UID_NONE, UID_NONE, yu)
        if engine:
            if not build_if_served(api, g, engine):
                continue
        else:
            api.call("cdnn_graph_build", g.ptr, api.handle, None)
            size = ctypes.c_size_t()
            api.call("cdnn_graph_workspace_size", g.ptr, ctypes.byref(size))
            g.workspace_size = size.value
        g.execute()
        oracle.report(f"matmul + bias [24] + relu [{(engine or b'default').decode()}]",
                      g.result(yu), want, 1e-5)


def case_matmul_new_mode_epilogue(api):
    """matmul, then atan2 with a rank-1 b and round, as cpu:blas_matmul's
    epilogue (the fast pointwise program) and on cpu:reference."""
    a, w, b = oracle.randn(8, 16), oracle.randn(16, 12), oracle.randn(12)
    want = np.round(4 * np.arctan2(f64(a) @ f64(w), f64(b)))
    for engine in (REFERENCE, b"cpu:blas_matmul"):
        g = Graph(api)
        au, wu, bu = g.input(a), g.input(w), g.input(b)
        cu, tu, su = g.virtual([8, 12]), g.virtual([8, 12]), g.virtual([8, 12])
        yu = g.output(want.shape)
        g.op("matmul", au, wu, cu)
        at2, mul = api.pointwise_attr("atan2"), api.pointwise_attr("mul")
        rnd = api.pointwise_attr("round")
        g.op("pointwise", ctypes.byref(at2), cu, bu, UID_NONE, tu)
        g.op("pointwise", ctypes.byref(mul), tu, g.scalar(4.0, 1), UID_NONE, su)
        g.op("pointwise", ctypes.byref(rnd), su, UID_NONE, UID_NONE, yu)
        g.build(engine)
        g.execute()
        # round's steps are 1 wide: an f32 atan2 a half-ulp off a .5 may
        # round the other way, so at most an element or two differ by 1
        got = f64(g.result(yu))
        off = np.abs(got - want)
        check(f"matmul -> atan2(c, b [12]) * 4 -> round [{engine.decode()}]",
              off.max() <= 1 and (off > 0).sum() <= 2,
              f"{int((off > 0).sum())} of {off.size} differ, max {off.max():g}")


def case_conv_bias_epilogue(api):
    """conv (NCHW) + a [C, 1, 1] bias (rank 3 on rank 4) + relu, on the conv
    engines with an epilogue and cpu:reference, against NumPy."""
    # channels-last memory (NHWC) with NCHW dims: what the host kernels take
    x = oracle.randn(2, 6, 6, 4).transpose(0, 3, 1, 2)
    w = oracle.randn(8, 3, 3, 4).transpose(0, 3, 1, 2)
    bias = oracle.randn(8, 1, 1)
    conv = oracle.conv_fwd_np(f64(x), f64(w), 1, 1, 1, 1, 1)
    want = np.maximum(conv + f64(bias), 0)
    for engine in (None, REFERENCE, b"cpu:blas_conv", b"kernels:conv_host"):
        g = Graph(api)
        xu, wu, bu = g.input(x), g.input(w), g.input(bias)
        cu, su = g.virtual(list(want.shape)), g.virtual(list(want.shape))
        y = np.full((2, 6, 6, 8), np.nan, np.float32).transpose(0, 3, 1, 2)
        yu = g.output(array=y)
        attr = api.conv_attr(2, pre=1, post=1)
        g.op("conv_fwd", ctypes.byref(attr), xu, wu, cu)
        add, relu = api.pointwise_attr("add"), api.pointwise_attr("relu_fwd")
        g.op("pointwise", ctypes.byref(add), cu, bu, UID_NONE, su)
        g.op("pointwise", ctypes.byref(relu), su, UID_NONE, UID_NONE, yu)
        if engine:
            if not build_if_served(api, g, engine):
                continue
        else:
            api.call("cdnn_graph_build", g.ptr, api.handle, None)
            size = ctypes.c_size_t()
            api.call("cdnn_graph_workspace_size", g.ptr, ctypes.byref(size))
            g.workspace_size = size.value
        g.execute()
        oracle.report(f"conv + bias [8,1,1] + relu [{(engine or b'default').decode()}]",
                      g.result(yu), want, 1e-5)


def case_plan_round_trip(api):
    """A built plan of a rank-broadcast graph (its payload holds the view
    engines saw) saves, loads and runs to the same bytes."""
    x, b = oracle.randn(2, 3, 4, 5), oracle.randn(4, 1)
    for engine in (REFERENCE, FUSED):
        g, yu = pointwise_graph(api, "mul", [x, b], x.shape)
        g.build(engine)
        g.execute()
        first = g.result(yu).copy()
        size = ctypes.c_size_t()
        api.call("cdnn_graph_save", g.ptr, SAVE_PLAN, None, 0, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        api.call("cdnn_graph_save", g.ptr, SAVE_PLAN, buf, size, ctypes.byref(size))
        plan = Graph(api)
        api.lib.cdnn_graph_destroy(plan.ptr)
        plan.ptr = P()
        api.call("cdnn_plan_load", ctypes.byref(plan.ptr), api.handle, buf, size)
        y = np.full_like(first, np.nan)
        plan.workspace_size = g.workspace_size
        plan.execute({u: a for u, a in g.arrays.items() if u != yu} | {yu: y})
        check(f"plan of [2,3,4,5] * [4,1] loads and runs [{engine.decode()}]",
              y.tobytes() == first.tobytes())


def expect_refusal(api, name, build, words):
    g = build()
    try:
        api.call("cdnn_graph_validate", g.ptr)
        check(name, False, "validated")
    except oracle.CdnnError as e:
        msg = str(e)
        check(name, all(w in msg for w in words), msg)


def case_refusals(api):
    x = oracle.randn(2, 3, 4, 7)

    def mismatch():
        g, _ = pointwise_graph(api, "add", [x, oracle.randn(5, 1)], x.shape)
        return g
    expect_refusal(api, "b [5,1] on [2,3,4,7] refused, dim named", mismatch,
                   ["dim 0 (5)", "neither 1 nor y's 4", "y's dim 2"])

    def too_high():
        g, _ = pointwise_graph(api, "add", [oracle.randn(4, 7), x],
                               (3, 4, 7))
        return g
    expect_refusal(api, "input of higher rank than y refused", too_high,
                   ["rank 4, more than y's 3"])

    def two_ranks():
        g = Graph(api)
        xu, bu = g.input(x), g.input(oracle.randn(7))
        x2u = g.input(oracle.randn(4, 7))
        y1, y2 = g.output(x.shape), g.output((4, 7))
        add = api.pointwise_attr("add")
        g.op("pointwise", ctypes.byref(add), xu, bu, UID_NONE, y1)
        g.op("pointwise", ctypes.byref(add), x2u, bu, UID_NONE, y2)
        return g
    expect_refusal(api, "a tensor broadcast to ranks 4 and 2 refused", two_ranks,
                   ["broadcast to rank", "declare it at rank"])


def save_bytes(api, g):
    size = ctypes.c_size_t()
    api.call("cdnn_graph_save", g.ptr, SAVE_GRAPH, None, 0, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    api.call("cdnn_graph_save", g.ptr, SAVE_GRAPH, buf, size, ctypes.byref(size))
    return buf.raw[:size.value]


def to_json(api, g):
    text = ctypes.c_char_p()
    api.call("cdnn_graph_to_json", g.ptr, ctypes.byref(text))
    return json.loads(text.value.decode())  # freed with the process


def reload_and_run(api, how, data, arrays, yu):
    g = Graph(api)
    api.lib.cdnn_graph_destroy(g.ptr)
    g.ptr = P()
    if how == "binary":
        api.call("cdnn_graph_load", ctypes.byref(g.ptr), None, data, len(data))
    else:
        api.call("cdnn_graph_from_json", ctypes.byref(g.ptr), data, len(data))
    out = {u: a.copy() for u, a in arrays.items()}
    out[yu][...] = np.nan
    g.arrays = out
    g.build(REFERENCE)
    g.execute()
    return g, out[yu]


def round_trip(api, name, g, yu, old_minor_expected=False):
    g.build(REFERENCE)
    g.execute()
    first = g.result(yu).copy()
    doc = to_json(api, g)
    want_minor = 1 if old_minor_expected else 3
    check(f"{name}: saves as format 1.{want_minor}",
          doc.get("format_major") == 1 and doc.get("format_minor", 0) >= want_minor
          and (not old_minor_expected or doc.get("format_minor", 0) < 3),
          f"1.{doc.get('format_minor')}")
    binary = save_bytes(api, g)
    g2, got = reload_and_run(api, "binary", binary, g.arrays, yu)
    check(f"{name}: binary round trip, same bytes", got.tobytes() == first.tobytes())
    check(f"{name}: re-save identical", save_bytes(api, g2) == binary)
    text = json.dumps(doc).encode()
    g3, got = reload_and_run(api, "json", text, g.arrays, yu)
    check(f"{name}: JSON round trip, same bytes", got.tobytes() == first.tobytes())
    check(f"{name}: JSON -> binary identical", save_bytes(api, g3) == binary)
    ranks = [len(t.get("dims", [])) for t in doc["tensors"]]
    return ranks


def case_round_trips(api):
    x, b = oracle.randn(2, 3, 4, 5), oracle.randn(5)
    g, yu = pointwise_graph(api, "add", [x, b], x.shape)
    ranks = round_trip(api, "add [2,3,4,5] + [5]", g, yu)
    check("saved graph keeps b's declared rank 1", sorted(ranks) == [1, 4, 4],
          str(ranks))
    g, yu = pointwise_graph(api, "add", [x, oracle.randn(1, 1, 1, 5)], x.shape)
    round_trip(api, "equal ranks (no broadcasting)", g, yu, old_minor_expected=True)
    a = oracle.randn(4, 6) * 5
    g, yu = pointwise_graph(api, "remainder", [a, oracle.randn(6)], a.shape)
    round_trip(api, "remainder (a 1.3 mode) with a rank-1 b", g, yu)
    g, yu = pointwise_graph(api, "atan", [a], a.shape)
    round_trip(api, "atan (a 1.3 mode)", g, yu)


# ---------------------------------------------------------------------------
# The modes of format 1.3
# ---------------------------------------------------------------------------

def py_remainder(a, b):
    return np.remainder(a, b)


NP_FLOAT = {
    "round": np.round, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tan": np.tan, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh,
    "fmod": np.fmod, "remainder": np.remainder, "atan2": np.arctan2,
}

EDGES = [0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.49999997, 1.0,
         -1.0, 0.999, -0.999, 7.0, -7.0, 1e30, -1e30, np.inf, -np.inf, np.nan,
         1e-30, 2.0, 3.0, 0.25, -0.75, 100.5, 8388609.0]


def float_operands(arity, dtype):
    """Edges (crossed with each other for binary modes) and random values."""
    e = np.array(EDGES, np.float64)
    if arity == 1:
        a = np.concatenate([e, oracle.RNG.standard_normal(200) * 3,
                            oracle.RNG.uniform(-1, 1, 100)])
        return [a.astype(dtype)]
    a, b = np.meshgrid(e, e)
    ra = oracle.RNG.standard_normal(300) * 10
    rb = oracle.RNG.standard_normal(300) * 3
    return [np.concatenate([a.ravel(), ra]).astype(dtype),
            np.concatenate([b.ravel(), rb]).astype(dtype)]


def ulp_distance(got, want):
    """ulps between got and want (same dtype); NaN matches NaN only, an
    infinity its own sign only, and a zero's sign counts (-0 != +0)."""
    got, want = np.asarray(got), np.asarray(want)
    both_nan = np.isnan(got) & np.isnan(want)
    one_nan = np.isnan(got) != np.isnan(want)
    itype = {4: np.int32, 8: np.int64, 2: np.int16}[got.dtype.itemsize]
    # a monotone integer line (sign-magnitude -> two's complement), in
    # Python integers so that nothing overflows
    mask = (1 << (8 * got.dtype.itemsize - 1)) - 1

    def line(bits):
        return [b if b >= 0 else -(b & mask) - 1 for b in map(int, bits)]
    gi, wi = line(got.view(itype)), line(want.view(itype))
    d = np.array([abs(g - w) for g, w in zip(gi, wi)], np.float64)
    d[both_nan] = 0
    d[one_nan] = np.inf
    return d


def case_modes_float(api):
    # cpu:reference computes in double and rounds once: within 1 ulp of
    # NumPy's float64 result rounded to f32; in f64 both it (glibc) and
    # NumPy are within about an ulp of the exact value, so 2 ulp apart.
    for engine, max_ulp in ((REFERENCE, 1), (FUSED, 4)):
        for dtype in (np.float32, np.float64):
            if dtype == np.float64:
                max_ulp = 2
            if engine == FUSED and dtype == np.float64:
                continue  # the fast engine computes in float: f64 is left out
            for mode in NEW_MODES:
                arity = 2 if mode in ("fmod", "remainder", "atan2") else 1
                ops = float_operands(arity, dtype)
                with np.errstate(all="ignore"):
                    want = NP_FLOAT[mode](*[f64(o) for o in ops]).astype(dtype)
                g, yu = pointwise_graph(api, mode, ops, ops[0].shape, dtype)
                try:
                    g.build(engine)
                    g.execute()
                except oracle.CdnnError as e:
                    check(f"{mode} {np.dtype(dtype).name} [{engine.decode()}]",
                          False, str(e))
                    continue
                got = g.result(yu)
                d = ulp_distance(got, want)
                # exact modes: bit for bit (sign of zero included)
                bound = 0 if mode in ("round", "fmod", "remainder") else max_ulp
                worst = int(np.argmax(d))
                check(f"{mode} {np.dtype(dtype).name} [{engine.decode()}]",
                      d.max() <= bound,
                      f"max {d.max():g} ulp (bound {bound}) at "
                      f"{[float(o[worst]) for o in ops]}: got {got[worst]!r} "
                      f"want {want[worst]!r}")


def round_half_cases(api):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 4.5, -0.0, 0.49999997,
                  1e20, -3.5], np.float32)
    for engine in (REFERENCE, FUSED):
        g, yu = pointwise_graph(api, "round", [x], x.shape)
        g.build(engine)
        g.execute()
        got = g.result(yu)
        want = np.array([0, 2, 2, -0.0, -2, -2, 4, 4, -0.0, 0, 1e20, -4],
                        np.float32)
        check(f"round halves to even [{engine.decode()}]",
              got.tobytes() == want.tobytes(), str(got.tolist()))


def c_fmod(a, b):
    if b == 0:
        return 0
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def py_mod(a, b):
    return 0 if b == 0 else a % b  # Python's % floors: the sign of b


def case_modes_int(api):
    for dtype in (np.int8, np.uint8, np.int32, np.int64):
        info = np.iinfo(dtype)
        a = oracle.random_ints(dtype, (200,))
        b = oracle.random_ints(dtype, (200,))
        # edges: zero divisor, -1 divisor on the minimum, small operands of
        # every sign, and a divisor larger than the dividend
        edges_a = [info.min, info.max, 7, -7 if info.min < 0 else 7, 0, 5, 1, info.min]
        edges_b = [-1 if info.min < 0 else 1, 0, 2, 2, 3, 0,
                   -3 if info.min < 0 else 3, 1]
        a[:8], b[:8] = edges_a, edges_b
        if info.min < 0:
            a[8:12], b[8:12] = [-7, 7, -7, 6], [-2, -2, 2, -4]
        name = np.dtype(dtype).name
        for mode, fn in (("fmod", c_fmod), ("remainder", py_mod)):
            g, yu = pointwise_graph(api, mode, [a, b], a.shape, dtype)
            g.run()
            want = np.array([fn(int(x), int(y)) for x, y in zip(a, b)], dtype)
            oracle.report_exact(f"{mode} {name} exact (x % 0 = 0)", g.result(yu),
                                want)
            # NumPy agrees where it is defined (no zero divisor)
            nz = b != 0
            with np.errstate(all="ignore"):
                np_want = (np.fmod if mode == "fmod" else np.remainder)(a[nz], b[nz])
            oracle.report_exact(f"{mode} {name} vs NumPy (b != 0)",
                                g.result(yu)[nz], np_want)
        g, yu = pointwise_graph(api, "round", [a], a.shape, dtype)
        g.run()
        oracle.report_exact(f"round {name} is the identity", g.result(yu), a)
        # an integer input computes the trigonometric modes in double
        small = np.array([0, 1, -1, 2, 3], np.int32) if info.min < 0 else \
            np.array([0, 1, 2, 3], np.uint8)
        g, yu = pointwise_graph(api, "atan", [small], small.shape, np.float64)
        g.run()
        oracle.report(f"atan of {name} in double", g.result(yu),
                      np.arctan(f64(small)), 1e-15)


def case_fused_declines_int_mod(api):
    a = np.array([7, -7], np.int8)
    b = np.array([0, 2], np.int8)
    g, _ = pointwise_graph(api, "fmod", [a, b], a.shape, np.float32)
    try:
        g.build(FUSED)
        check("cpu:fused_pointwise declines integer fmod", False, "built")
    except oracle.CdnnError as e:
        check("cpu:fused_pointwise declines integer fmod",
              "integer" in str(e), str(e)[:200])


CASES = [case_rank_broadcast, case_lower_rank_intermediate,
         case_matmul_bias_epilogue, case_matmul_new_mode_epilogue,
         case_conv_bias_epilogue,
         case_plan_round_trip, case_refusals, case_round_trips,
         case_modes_float, round_half_cases, case_modes_int,
         case_fused_declines_int_mod]


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libcdnn.so")
    api = oracle.Cdnn(sys.argv[1])
    for case in CASES:
        try:
            case(api)
        except oracle.CdnnError as e:
            print(f"{case.__name__:56s} error: {e}  FAIL")
            FAILURES.append(case.__name__)
    print(f"{len(FAILURES)} failure(s)" if FAILURES else "all passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
