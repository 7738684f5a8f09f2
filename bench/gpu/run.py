#!/usr/bin/env python3
"""bench/gpu/run.py -- cdnn's matmul kernels next to cuBLAS, in one run.

    python3 bench/gpu/run.py BENCH_BINARY CODE_OBJECT_DIR [--reps N] [--out FILE]

Runs BENCH_BINARY (bench_gpu_matmul: cdnn's tensor-core kernels, device
events, median) and then times torch.matmul (cuBLAS) on the same shapes and
dtypes the same way (timing.py: random inputs in [-1, 1), CUDA events, the
median of N samples of launches back to back, as event_timing.h).  Prints one table: per dtype and
shape, every cdnn tile configuration, cuBLAS, and cdnn's best over cuBLAS.
Needs python3 with torch and a GPU (the GPU machine has both).
"""
import argparse
import datetime
import subprocess
import sys

from timing import time_ms

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096)]
EPILOGUE_SHAPES = [(8192, 8192, 8192)]


def time_cublas(torch, dtype, m, n, k, reps):
    a = torch.rand(m, k, device="cuda", dtype=dtype) * 2 - 1
    b = torch.rand(k, n, device="cuda", dtype=dtype) * 2 - 1
    c = torch.empty(m, n, device="cuda", dtype=dtype)
    return time_ms(torch, lambda: torch.matmul(a, b, out=c), reps)[0]


def time_bias_gelu(torch, dtype, m, n, k, reps):
    """matmul + bias + gelu: PyTorch's unfused sequence (cuBLAS, then the
    bias add and the erf gelu as elementwise kernels), and cuBLASLt's own
    fused epilogue through torch._addmm_activation (its gelu is the tanh
    approximation)."""
    a = torch.rand(m, k, device="cuda", dtype=dtype) * 2 - 1
    b = torch.rand(k, n, device="cuda", dtype=dtype) * 2 - 1
    bias = torch.rand(n, device="cuda", dtype=dtype) * 2 - 1
    unfused, _ = time_ms(
        torch, lambda: torch.nn.functional.gelu(torch.matmul(a, b) + bias), reps)
    fused, _ = time_ms(
        torch, lambda: torch._addmm_activation(bias, a, b, use_gelu=True), reps)
    return unfused, fused


def run_cdnn(binary, objects, reps):
    out = subprocess.run([binary, objects, str(reps)], capture_output=True, text=True)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        raise SystemExit(f"{binary} failed with status {out.returncode}")
    rows = []
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 9 and f[0] == "cdnn":
            rows.append({"dtype": f[1], "shape": (int(f[2]), int(f[3]), int(f[4])),
                         "kernel": f[5], "ms": float(f[6]), "tflops": float(f[7]),
                         "err": float(f[8])})
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("objects")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--out")
    args = parser.parse_args()

    import torch
    cdnn_rows = run_cdnn(args.binary, args.objects, args.reps)
    sys.stdout.write("".join(f"{r['dtype']} {r['shape']} {r['kernel']} {r['tflops']}\n"
                             for r in cdnn_rows))  # raw, in case torch fails below
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16}
    lines = [f"# cdnn matmul kernels vs cuBLAS (torch {torch.__version__}), "
             f"{torch.cuda.get_device_name(0)}, {datetime.date.today().isoformat()}",
             "# median of %d launches, CUDA events; TFLOP/s = 2mnk / time; "
             "err = worst |C - ref| / tol over 256 sampled elements (<= 1 passes)" % args.reps,
             f"{'dtype':5} {'m x n x k':>18} {'kernel':24} {'ms':>8} {'TFLOP/s':>8} "
             f"{'vs cuBLAS':>9} {'err':>6}"]
    for name, dtype in dtypes.items():
        for m, n, k in SHAPES:
            ms = time_cublas(torch, dtype, m, n, k, args.reps)
            cublas = 2.0 * m * n * k / (ms * 1e-3) / 1e12
            shape = f"{m}x{n}x{k}"
            mine = [r for r in cdnn_rows if r["dtype"] == name and r["shape"] == (m, n, k)]
            for r in mine:
                lines.append(f"{name:5} {shape:>18} {r['kernel']:24} {r['ms']:8.3f} "
                             f"{r['tflops']:8.1f} {r['tflops'] / cublas:9.2f} {r['err']:6.3f}")
            lines.append(f"{name:5} {shape:>18} {'cuBLAS':24} {ms:8.3f} {cublas:8.1f} "
                         f"{1.0:9.2f} {'':>6}")
            if mine:
                best = max(mine, key=lambda r: r["tflops"])
                lines.append(f"{name:5} {shape:>18} {'best cdnn':24} {best['ms']:8.3f} "
                             f"{best['tflops']:8.1f} {best['tflops'] / cublas:9.2f} "
                             f"{best['kernel']}")
    for m, n, k in EPILOGUE_SHAPES:
        name = "bf16+bias+gelu"
        mine = [r for r in cdnn_rows if r["dtype"] == name and r["shape"] == (m, n, k)]
        if not mine:
            continue
        unfused, fused = time_bias_gelu(torch, torch.bfloat16, m, n, k, args.reps)
        flop = 2.0 * m * n * k
        shape = f"{m}x{n}x{k}"
        lines.append(f"# {name}: vs = against PyTorch's unfused sequence; "
                     f"vs Lt = against torch._addmm_activation (cuBLASLt epilogue)")
        for r in mine:
            lines.append(f"{name:5} {shape:>18} {r['kernel']:24} {r['ms']:8.3f} "
                         f"{r['tflops']:8.1f} {unfused / r['ms']:9.2f} {r['err']:6.3f} "
                         f"vs Lt {fused / r['ms']:.2f}")
        lines.append(f"{name:5} {shape:>18} {'torch unfused':24} {unfused:8.3f} "
                     f"{flop / (unfused * 1e-3) / 1e12:8.1f} {1.0:9.2f}")
        lines.append(f"{name:5} {shape:>18} {'addmm_act':24} {fused:8.3f} "
                     f"{flop / (fused * 1e-3) / 1e12:8.1f} {unfused / fused:9.2f}")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    bad = [r for r in cdnn_rows if not r["err"] <= 1.0]
    if bad:
        raise SystemExit(f"{len(bad)} cdnn results outside tolerance")


if __name__ == "__main__":
    main()
