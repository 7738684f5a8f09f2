#!/usr/bin/python3
"""Check cpu:reference's attention backward (sdpa_bwd) against PyTorch's
autograd in float64, and the fast engine cpu:sdpa_bwd (f32) pinned too.

Usage:
    /usr/bin/python3 tests/oracle/test_sdpa_bwd_torch.py build/lib/libcdnn.so

Each case rounds random q, k, v and d_o to the tensors' type (f32, f16 or
bf16), runs the forward in PyTorch float64 on those values, o = softmax(
scale q k^T [+ causal mask]) v (top-left causal, as cdnn's), and takes dq,
dk, dv from o.backward(d_o).  cdnn's graph of one sdpa_bwd node gets the
same q, k, v, d_o and PyTorch's o rounded to the type, and writes the
gradients in f32 (and, for one case per type, in the inputs' type).  One
line per gradient: max error relative to max |oracle|, PASS or FAIL; the
exit status is non-zero if any case fails.  Written beside the forward's
check (test_reference_numpy.py case_sdpa), whose ctypes binding it uses.
"""
import ctypes
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_reference_numpy as oracle  # noqa: E402  (the ctypes binding)

oracle.STATUS_FUNCTIONS["cdnn_graph_sdpa_bwd"] = (
    [oracle.P, ctypes.c_char_p, ctypes.POINTER(oracle.SdpaAttr)]
    + [ctypes.c_int64] * 8)

# Relative to max |oracle|.  The reference computes in double from the
# stored inputs, so an f32 gradient is off by its own rounding; a gradient
# stored in the inputs' type by that type's.
TOLERANCE = {"f32": 1e-6, "f16": 1e-3, "bf16": 8e-3}
# cpu:sdpa_bwd (f32 tensors only) computes in f32 with sgemm: its scores,
# probabilities and products each round, so it gets f32 accumulation's 1e-5.
ENGINE_TOLERANCE = 1e-5


def torch_grads(q, k, v, d_o, scale, causal):
    """o and (dq, dk, dv) by autograd in float64 (top-left causal mask)."""
    q, k, v = (torch.tensor(np.asarray(a, np.float64), requires_grad=True)
               for a in (q, k, v))
    scale = scale or 1 / math.sqrt(q.shape[-1])
    s = scale * q @ k.transpose(-1, -2)
    if causal:
        sq, sk = s.shape[-2:]
        seen = torch.ones(sq, sk, dtype=torch.bool).tril()
        s = s.masked_fill(~seen, -math.inf)
    o = torch.softmax(s, -1) @ v
    o.backward(torch.tensor(np.asarray(d_o, np.float64)))
    return o.detach().numpy(), [t.grad.numpy() for t in (q, k, v)]


def as_float(stored_array, dtype):
    if dtype == "bf16":
        return oracle.bf16_value(stored_array)
    return stored_array.astype(np.float32)


def run_case(api, name, shape, dtype, causal, scale=0.0, grads_in_type=False,
             heads_last=False, engine=b"cpu:reference"):
    b, h, sq, sk, d, dv = shape
    randn = oracle.randn
    if heads_last:  # [B, S, H, D] in memory, seen as [B, H, S, D]
        raw = [randn(b, sq, h, d).transpose(0, 2, 1, 3),
               randn(b, sk, h, d).transpose(0, 2, 1, 3),
               randn(b, sk, h, dv).transpose(0, 2, 1, 3)]
    else:
        raw = [randn(b, h, sq, d), randn(b, h, sk, d), randn(b, h, sk, dv)]
    raw.append(randn(b, h, sq, dv))
    stores = [oracle.stored(a, dtype) for a in raw]
    q, k, v, d_o = (s[2] for s in stores)
    o, want = torch_grads(q, k, v, d_o, scale, causal)
    o_stored, code, _ = oracle.stored(o.astype(np.float32), dtype)
    g = oracle.Graph(api)
    uids = [g.input(s[0], s[1]) for s in stores[:3]]
    uids.append(g.input(o_stored, code))
    uids.append(g.input(stores[3][0], code))
    if grads_in_type:
        outs = [g.output(a.shape, stores[0][0].dtype, type_code=code) for a in raw[:3]]
    else:
        outs = [g.output(a.shape) for a in raw[:3]]
    attr = oracle.SdpaAttr(scale, 1 if causal else 0)
    g.op("sdpa_bwd", ctypes.byref(attr), *uids, *outs)
    g.build(engine)
    g.execute()
    tol = TOLERANCE[dtype] if grads_in_type else TOLERANCE["f32"]
    if engine != b"cpu:reference":
        tol = ENGINE_TOLERANCE
    for what, uid, w in zip(("dq", "dk", "dv"), outs, want):
        got = g.result(uid)
        got = as_float(got, dtype) if grads_in_type else got
        oracle.report(f"{name} {what}", got, w, tol)


SHAPES = [  # B, H, Sq, Sk, D, Dv
    (1, 1, 4, 4, 8, 8),
    (2, 3, 5, 7, 16, 8),
    (1, 2, 9, 6, 64, 64),   # Sq > Sk: causal rows past Sk see every key
    (2, 2, 6, 11, 128, 32),
]


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libcdnn.so")
    api = oracle.Cdnn(sys.argv[1])
    for dtype in ("f32", "f16", "bf16"):
        for shape in SHAPES:
            for causal in (False, True):
                name = (f"sdpa_bwd {dtype} {'x'.join(map(str, shape))}"
                        f"{' causal' if causal else ''}")
                run_case(api, name, shape, dtype, causal)
        run_case(api, f"sdpa_bwd {dtype} grads in {dtype}", SHAPES[1], dtype,
                 True, grads_in_type=True)
    run_case(api, "sdpa_bwd f32 scale 0.3, heads-last", SHAPES[1], "f32",
             True, scale=0.3, heads_last=True)
    run_case(api, "sdpa_bwd f16 scale 2, heads-last", SHAPES[2], "f16",
             False, scale=2.0, heads_last=True)
    # The fast engine, pinned, on every f32 shape and a heads-last layout.
    for shape in SHAPES:
        for causal in (False, True):
            name = (f"cpu:sdpa_bwd f32 {'x'.join(map(str, shape))}"
                    f"{' causal' if causal else ''}")
            run_case(api, name, shape, "f32", causal, engine=b"cpu:sdpa_bwd")
    run_case(api, "cpu:sdpa_bwd f32 scale 0.3, heads-last", SHAPES[1], "f32",
             True, scale=0.3, heads_last=True, engine=b"cpu:sdpa_bwd")
    failures = oracle.FAILURES
    print(f"{len(failures)} failure(s)" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
