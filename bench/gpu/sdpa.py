#!/usr/bin/env python3
"""bench/gpu/sdpa.py -- cdnn's flash-attention kernels next to PyTorch's
scaled_dot_product_attention, in one run.

    python3 bench/gpu/sdpa.py BENCH_GPU_SDPA CODE_OBJECT_DIR [--reps N] [--out FILE]

Runs BENCH_GPU_SDPA (the sdpa_wgmma kernels launched directly, CUDA events,
median of N samples of launches back to back, sampled rows checked against
f64), then times torch.nn.functional.scaled_dot_product_attention on the
same shapes, dtypes and causality the same way (timing.py; random inputs, BHSD),
and prints one table with the ratio cdnn / PyTorch (above 1: cdnn faster).
"""
import argparse
import datetime
import subprocess
import sys

from timing import time_ms


def torch_ms(torch, dtype, b, h, s, d, causal, reps):
    F = torch.nn.functional
    t = torch.bfloat16 if dtype == "bf16" else torch.float16
    q = torch.empty(b, h, s, d, device="cuda", dtype=t).uniform_(-2, 2)
    k = torch.empty_like(q).uniform_(-2, 2)
    v = torch.empty_like(q).uniform_(-1, 1)
    return time_ms(torch, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), reps)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("objects")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out")
    args = ap.parse_args()
    run = subprocess.run([args.bench, args.objects, str(args.reps)], capture_output=True,
                         text=True)
    sys.stderr.write(run.stderr)
    rows = [line.split() for line in run.stdout.splitlines() if line.startswith("cdnn ")]
    if run.returncode != 0:
        print(run.stdout)
        sys.exit(f"{args.bench} exited {run.returncode}")
    import torch
    lines = [f"# sdpa forward, {datetime.date.today()}, {torch.cuda.get_device_name()}, "
             f"torch {torch.__version__}; FLOPs 4BHS^2D (causal half)",
             f"{'dtype':5} {'B':>2} {'H':>3} {'S':>5} {'D':>4} {'causal':>6} "
             f"{'cdnn ms':>8} {'TFLOP/s':>8} {'torch ms':>9} {'TFLOP/s':>8} {'ratio':>6} err/tol"]
    for r in rows:
        dtype, b, h, s, d, causal = r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]), r[6] == "1"
        ms, tflops, err = float(r[8]), float(r[9]), r[10]
        tms = torch_ms(torch, dtype, b, h, s, d, causal, args.reps)
        flops = (2.0 if causal else 4.0) * b * h * s * s * d
        lines.append(f"{dtype:5} {b:2} {h:3} {s:5} {d:4} {int(causal):6} {ms:8.3f} {tflops:8.1f} "
                     f"{tms:9.3f} {flops / (tms * 1e-3) / 1e12:8.1f} {tms / ms:6.2f} {err}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
