#!/usr/bin/python3
"""Check kernels:softmax_host (the host softmax kernels) against NumPy.

Usage:
    /usr/bin/python3 tests/oracle/test_kernels_softmax_numpy.py build/lib/libcdnn.so

The library finds the kernels provider and the build's kernel pack where it
looks by default.  Each case builds a softmax or log-softmax through the
public C API (test_reference_numpy's ctypes binding), pins it to
kernels:softmax_host, runs it and compares with NumPy's softmax from the
definition in float64 on the same (rounded) inputs.  One line per case:
name, max error relative to max |oracle|, PASS or FAIL; the exit status is
non-zero if any case fails.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_reference_numpy as oracle  # noqa: E402  (the ctypes binding)

ENGINE = b"kernels:softmax_host"
# Relative to max |oracle|: the kernels compute in f32 and round the output
# once to its type.
TOLERANCE = {"f32": 1e-5, "f16": 2e-3, "bf16": 1.6e-2}


def run_case(api, name, x, axis, log_space, dtype="f32"):
    xs, code, xv = oracle.stored(x, dtype)
    g = oracle.Graph(api)
    xu = g.input(xs, code)
    yu = g.output(xs.shape, xs.dtype, type_code=code)
    g.op("log_softmax" if log_space else "softmax", axis, xu, yu)
    g.build(ENGINE)
    g.execute()
    got = g.result(yu)
    got = oracle.bf16_value(got) if dtype == "bf16" else got.astype(np.float32)
    with np.errstate(invalid="ignore"):  # a row of -inf only: NaN
        want = oracle.softmax_np(xv, axis, log_space)
    finite = np.isfinite(want)
    if not (np.array_equal(np.isneginf(got), np.isneginf(want)) and
            np.array_equal(np.isnan(got), np.isnan(want))):
        print(f"{name:40s} -inf or NaN elsewhere than the oracle's  FAIL")
        oracle.FAILURES.append(name)
        return
    oracle.report(name, np.where(finite, got, 0), np.where(finite, want, 0),
                  TOLERANCE[dtype])


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libcdnn.so")
    api = oracle.Cdnn(sys.argv[1])
    randn = oracle.randn
    masked = randn(5, 40) * 3
    masked[:, ::3] = -np.inf
    masked[1, :38] = -np.inf  # a row with one finite entry (38)
    masked[2, :] = -np.inf  # and one of -inf only: NaN, as cpu:reference
    for log_space in (False, True):
        kind = "log_softmax" if log_space else "softmax"
        cases = [
            (f"{kind} f32 last axis", randn(4, 7) * 4, -1, "f32"),
            (f"{kind} f32 axis 1 of 3", randn(2, 9, 3) * 3, 1, "f32"),
            (f"{kind} f32 axis 0", randn(300, 2) * 10, 0, "f32"),
            (f"{kind} f32 transposed x", randn(6, 50).T * 2, -1, "f32"),
            (f"{kind} f32 rows of 6000", randn(3, 6000) * 5, -1, "f32"),
            (f"{kind} f32 rows with -inf", masked, -1, "f32"),
            (f"{kind} f16 rows of 700", randn(4, 700) * 3, -1, "f16"),
            (f"{kind} bf16 axis 1 of 3", randn(3, 64, 5) * 3, 1, "bf16"),
        ]
        for name, x, axis, dtype in cases:
            try:
                run_case(api, name, x, axis, log_space, dtype)
            except oracle.CdnnError as e:
                print(f"{name:40s} error: {e}  FAIL")
                oracle.FAILURES.append(name)
    failures = oracle.FAILURES
    print(f"{len(failures)} failure(s)" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
