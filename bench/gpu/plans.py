#!/usr/bin/env python3
"""bench/gpu/plans.py -- cdnn plans on cuda:0 next to PyTorch, in one process.

    python3 bench/gpu/plans.py BENCH_GPU_PLANS [--lib LIBCDNN] [--reps N] [--out FILE]

Runs BENCH_GPU_PLANS: each case's plan built with benchmarking through the
public API, timed there (the "built" column), its output checked on samples
against f64 (err), every candidate pinned and timed (the choice table), and
the chosen plan saved.  Then, in this process, each saved plan is loaded
(cdnn_plan.py: no selection, no build) on PyTorch's stream and tensors,
its output compared with PyTorch's f32 computation on the same inputs (rel:
the independent oracle), and it is timed in turn with its PyTorch peers on
the same tensors -- cdnn, peer 1, peer 2, ..., cdnn, ... -- so that the
chip's clock, which drifts between runs and falls under sustained
tensor-core load, weighs on both sides alike.  Every side cycles through
the same sets of tensors, which together span at least twice the L2 cache,
so that no call finds its inputs in L2.  Also the device's copy
bandwidth (a 1 GiB device-to-device copy, bytes read plus written).

Three clocks, each the median of N samples, for cdnn and its peers alike:
"back to back" (the table's ms; each sample >= 1 ms of executions enqueued
without waiting, so the host's dispatch and launch of one hide behind the
one before: the device's own time, as a framework's stream runs them,
while the device is the slower side), "per call" (call ms; the stream
drained after each execution, so the device also idles while the host
dispatches and launches: a few us, which is 5-15% of a 40-90 us kernel)
and "graph" (the back-to-back batch captured in a CUDA graph and replayed:
no host work at all, which shows the kernels of layers so small that a
side's dispatch is slower than its kernel).  Rates, % of copy and speed-ups
are back to back, "graph x" the speed-up on graph times; the per-call
columns show what a caller that waits on every result gets.

For a GEMM the peer is torch.matmul (cuBLAS); for matmul -> bias -> gelu
PyTorch's unfused sequence (matmul, add, gelu: three kernels) and cuBLASLt's
own fused epilogue (torch._addmm_activation(..., use_gelu=True), whose gelu
is the tanh form: so also cdnn's gelu_tanh beside it), and with a residual
added the same two plus PyTorch's add; for conv -> bias -> relu (f16,
channels-last) the unfused sequence, cuDNN's fused convolution
(torch.cudnn_convolution_relu) and the bare convolution. Needs python3 with
torch and a GPU (the GPU machine has both).
"""
import argparse
import datetime
import itertools
import os
import subprocess
import sys
import tempfile

import cdnn_plan
from timing import batch_for, time_graph_replays, time_interleaved, time_ms

DEVICE = "cuda"


def copy_bandwidth(torch, reps):
    """GB/s of a device-to-device copy, bytes read plus bytes written."""
    n = 1 << 29  # 1 GiB of bf16
    src = torch.empty(n, device=DEVICE, dtype=torch.bfloat16).uniform_(-1, 1)
    dst = torch.empty_like(src)
    ms, _ = time_ms(torch, lambda: dst.copy_(src), reps)
    return 2 * 2 * n / (ms * 1e-3) / 1e9


class Workload:
    """One cdnn row's tensors in the plan's layout (by uid: bench_gpu_plans.c
    names them), its PyTorch peers on the same tensors, and the output
    computed in f32 by PyTorch: an oracle nobody here wrote."""

    def __init__(self, tensors, peers, reference):
        self.tensors, self.peers, self.reference = tensors, peers, reference


def workload(torch, op, shape):
    F = torch.nn.functional
    f16 = op.endswith("_f16") or op in ("conv_bias_relu", "convolution")
    dtype = torch.float16 if f16 else torch.bfloat16
    rand = lambda *s: torch.empty(*s, device=DEVICE, dtype=dtype).uniform_(-1, 1)
    if op in ("layernorm", "rmsnorm", "softmax", "add_relu", "reduce_sum", "reduce_sum_dim0"):
        rows, cols = shape
        x = rand(rows, cols)
        if op == "layernorm":
            w, b = rand(cols) * 0.25 + 1, rand(cols)
            return Workload({1: x, 2: w, 3: b, 9: torch.empty_like(x)},
                            [("torch layer_norm", lambda: F.layer_norm(x, (cols,), w, b, 1e-5))],
                            lambda: F.layer_norm(x.float(), (cols,), w.float(), b.float(), 1e-5))
        if op == "rmsnorm":
            w = rand(cols) * 0.25 + 1
            return Workload({1: x, 2: w, 9: torch.empty_like(x)},
                            [("torch rms_norm", lambda: F.rms_norm(x, (cols,), w, 1e-5))],
                            lambda: F.rms_norm(x.float(), (cols,), w.float(), 1e-5))
        if op == "softmax":
            return Workload({1: x, 9: torch.empty_like(x)},
                            [("torch softmax", lambda: torch.softmax(x, -1))],
                            lambda: torch.softmax(x.float(), -1))
        if op == "add_relu":
            b, out = rand(rows, cols), torch.empty_like(x)
            return Workload({1: x, 2: b, 9: torch.empty_like(x)},
                            [("torch add+relu (2 kernels)",
                              lambda: torch.relu(torch.add(x, b, out=out)))],
                            lambda: torch.relu(x.float() + b.float()))
        dim = -1 if op == "reduce_sum" else 0
        return Workload({1: x, 9: torch.empty(*((rows, 1) if dim else (1, cols)), device=DEVICE,
                                               dtype=dtype)},
                        [("torch sum", lambda: torch.sum(x, dim, keepdim=True))],
                        lambda: torch.sum(x.float(), dim, keepdim=True))
    if op in ("conv_bias_relu", "convolution"):
        n, c, h, w, k = shape[:5]
        r, st = shape[5:7]
        pad = r // 2
        cl = torch.channels_last
        x = rand(n, c, h, w).to(memory_format=cl)
        wt = rand(k, c, r, r).to(memory_format=cl)
        out = (h + 2 * pad - r) // st + 1
        y = torch.empty(n, k, out, out, device=DEVICE, dtype=dtype).to(memory_format=cl)
        conv = lambda: F.conv2d(x, wt, stride=st, padding=pad)
        if op == "convolution":
            return Workload({1: x, 2: wt, 9: y}, [("cuDNN conv (torch conv2d)", conv)],
                            lambda: F.conv2d(x.float(), wt.float(), stride=st, padding=pad))
        b = rand(k)
        return Workload({1: x, 2: wt, 3: b, 9: y},
                        [("torch conv2d+add+relu", lambda: F.relu(conv() + b.view(1, -1, 1, 1))),
                         ("cuDNN fused conv+bias+relu", lambda: torch.cudnn_convolution_relu(
                             x, wt, b, (st, st), (pad, pad), (1, 1), 1)),
                         ("torch conv2d alone", conv)],
                        lambda: F.relu(F.conv2d(x.float(), wt.float(), b.float(), stride=st,
                                                padding=pad)))
    if op in ("sdpa", "sdpa_causal"):
        q, kk, v = (rand(*shape) for _ in range(3))
        causal = op == "sdpa_causal"
        return Workload({1: q, 2: kk, 3: v, 9: torch.empty_like(q)},
                        [("torch sdpa", lambda: F.scaled_dot_product_attention(
                            q, kk, v, is_causal=causal))],
                        lambda: F.scaled_dot_product_attention(q.float(), kk.float(), v.float(),
                                                               is_causal=causal))
    m, n, k = shape
    a, b = rand(m, k), rand(k, n)
    y = torch.empty(m, n, device=DEVICE, dtype=dtype)
    if op == "matmul_bias_gelu_residual":
        bias, res = rand(n), rand(m, n)
        return Workload({1: a, 2: b, 3: bias, 4: res, 9: y},
                        [("torch matmul+add+gelu+add", lambda: F.gelu(a @ b + bias) + res),
                         ("cuBLASLt bias+gelu(tanh) + add",
                          lambda: torch._addmm_activation(bias, a, b, use_gelu=True) + res)],
                        lambda: F.gelu(a.float() @ b.float() + bias.float()) + res.float())
    if op.startswith("matmul_bias_gelu"):
        bias = rand(n)
        form = "tanh" if op.endswith("_tanh") else "none"
        return Workload({1: a, 2: b, 3: bias, 9: y},
                        [(f"torch matmul+add+gelu{'(tanh)' if form == 'tanh' else ''}",
                          lambda: F.gelu(a @ b + bias, approximate=form)),
                         ("cuBLASLt bias+gelu(tanh) epilogue",
                          lambda: torch._addmm_activation(bias, a, b, use_gelu=True))],
                        lambda: F.gelu(a.float() @ b.float() + bias.float(), approximate=form))
    return Workload({1: a, 2: b, 9: y}, [("torch matmul (cuBLAS)", lambda: a @ b)],
                    lambda: a.float() @ b.float())


def relative_error(got, ref):
    """||got - ref|| / ||ref|| in f64 (NaN when got has a NaN)."""
    got, ref = got.double(), ref.double().reshape(got.shape)
    return float((got - ref).norm() / ref.norm())


# Each timed function cycles through sets of tensors that together span at
# least this many times the L2 cache, so that no call finds its inputs left
# in L2 by the call before (a ResNet layer's 7x7 activations fit in it many
# times over).  Cycling costs the same host work on every side.
L2_SPAN = 2
MAX_SETS = 64


def rotation_sets(torch, row):
    """Workloads for row: enough independent sets to cycle through (each
    set built as workload() builds one)."""
    first = workload(torch, row["op"], row["shape"])
    set_bytes = sum(t.numel() * t.element_size() for t in first.tensors.values())
    l2 = torch.cuda.get_device_properties(0).L2_cache_size if DEVICE == "cuda" else 0
    count = max(1, min(MAX_SETS, -(-L2_SPAN * l2 // set_bytes)))
    return [first] + [workload(torch, row["op"], row["shape"]) for _ in range(count - 1)]


def cycling(fns):
    """One function that calls fns in turn, a different one each call."""
    turn = itertools.cycle(fns)
    return lambda: next(turn)()


def measure(torch, handle, row, reps):
    """The saved plan loaded on handle, checked against PyTorch in f32, and
    timed in turn with its peers, each cycling through the same rotation
    sets: [(name, ms, call ms, graph ms or None)], cdnn's first; the plan's
    relative error; the number of sets."""
    plan = cdnn_plan.LoadedPlan(handle, row["saved"])
    works = rotation_sets(torch, row)
    workspace = torch.empty(max(plan.workspace_bytes, 1), device=DEVICE, dtype=torch.uint8)
    runs = [plan.bind(w.tensors, workspace.data_ptr()) for w in works]
    y = works[0].tensors[9]
    y.fill_(float("nan"))
    runs[0]()
    torch.cuda.synchronize()
    err = relative_error(y, works[0].reference())
    sides = [cycling(runs)] + [cycling([w.peers[i][1] for w in works])
                               for i in range(len(works[0].peers))]
    times = time_interleaved(torch, sides, reps)
    # The graphs replay the same calls as the back-to-back samples, cycling
    # through the sets alike, captured after them (a capture does not run).
    graphs = time_graph_replays(torch, sides, [batch_for(call) for _, call in times], reps,
                                handle.set_stream)
    plan.close()
    names = ["cdnn"] + [name for name, _ in works[0].peers]
    return [(name, ms, call, graph) for name, (ms, call), graph in zip(names, times, graphs)], \
        err, len(works)


def run_cdnn(binary, reps, save_dir):
    env = dict(os.environ, BENCH_GPU_PLANS_SAVE=save_dir)
    out = subprocess.run([binary, str(reps)], capture_output=True, text=True, env=env)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        raise SystemExit(f"{binary} failed with status {out.returncode}")
    rows = []
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 9 and f[0] == "plan":
            rows.append({"op": f[1], "shape": tuple(int(d) for d in f[2].split("x")),
                         "engine": f[3], "ms": float(f[4]), "call_ms": float(f[5]),
                         "rate": float(f[6]), "unit": f[7], "err": float(f[8])})
        elif len(f) == 4 and f[0] == "saved" and rows and rows[-1]["op"] == f[1]:
            rows[-1]["saved"] = f[3]
        elif len(f) == 7 and f[0] == "choice" and rows and rows[-1]["op"] == f[1]:
            rows[-1]["choice"] = {"chosen": f[2], "chosen_ms": float(f[3]),
                                  "fastest": f[4], "fastest_ms": float(f[5]),
                                  "candidates": int(f[6])}
    return rows


# Benchmarking's pick counts as the fastest when the harness times it within
# this fraction of the harness's fastest candidate (run-to-run spread).
CHOICE_SLACK = 0.03


def choice_lines(rows):
    """Each benchmarking choice next to the candidate this harness timed
    fastest (every candidate pinned, same tensors, same clock)."""
    lines = ["", "# benchmarking's choice vs the harness's fastest candidate "
             f"(each pinned and timed here; 'yes' within {100 * CHOICE_SLACK:.0f}%)",
             f"{'op':16} {'shape':>16} {'n':>3} {'chosen':28} {'ms':>8} "
             f"{'harness fastest':28} {'ms':>8} {'fastest?':>8}"]
    for r in rows:
        c = r.get("choice")
        if not c:
            continue
        shape = "x".join(str(d) for d in r["shape"])
        verdict = "yes" if c["chosen_ms"] <= c["fastest_ms"] * (1 + CHOICE_SLACK) else \
            f"no {c['chosen_ms'] / c['fastest_ms']:.2f}x"
        lines.append(f"{r['op']:16} {shape:>16} {c['candidates']:3} {c['chosen']:28} "
                     f"{c['chosen_ms']:8.3f} {c['fastest']:28} {c['fastest_ms']:8.3f} "
                     f"{verdict:>8}")
    return lines


# A plan's output against PyTorch's f32 computation of it: 16-bit outputs
# round to ~2e-3 in relative L2 (METHOD: bf16 operands land in 1e-3..1e-2).
REL_TOLERANCE = 1e-2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--lib", help="libcdnn.so (default: the binary's ../lib)")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--out")
    args = parser.parse_args()

    import torch
    torch.backends.cuda.matmul.allow_tf32 = False  # the f32 references stay f32
    torch.backends.cudnn.allow_tf32 = False
    torch.cuda.init()  # the primary context, which a cuda:0 handle shares
    lib = cdnn_plan.open_library(args.lib or os.path.join(
        os.path.dirname(os.path.abspath(args.binary)), "..", "lib", "libcdnn.so"))
    handle = cdnn_plan.Handle(lib, torch.cuda.current_stream().cuda_stream)
    with tempfile.TemporaryDirectory(prefix="cdnn-plans-") as save_dir:
        rows = run_cdnn(args.binary, args.reps, save_dir)
        copy = copy_bandwidth(torch, args.reps)
        lines = header(torch, args.reps, copy)
        for r in rows:
            row = row_lines(torch, handle, r, copy, args.reps)
            print("\n".join(row), file=sys.stderr, flush=True)  # progress, if cut short
            lines += row
    handle.close()
    lines += choice_lines(rows)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    bad = [r for r in rows if not (r["err"] <= 1 and r["rel"] <= REL_TOLERANCE)]
    if bad:
        raise SystemExit(f"{len(bad)} cdnn output(s) beyond tolerance")


def header(torch, reps, copy):
    return [f"# cdnn plans vs PyTorch (torch {torch.__version__}), "
            f"{torch.cuda.get_device_name(0)}, {datetime.date.today().isoformat()}",
            "# bf16 (conv and *_f16 f16).  Each plan built with benchmarking by bench_gpu_plans "
            "(built = its time there), saved, loaded here in PyTorch's process and run on its "
            "stream",
            f"# ms: CUDA events, medians of {reps} samples taken in turn with the peers' "
            "(cdnn, peer 1, peer 2, ..., cdnn, ...); back to back (executions enqueued "
            "without waiting); call = the stream drained after each; graph = the back-to-back "
            "batch captured in a CUDA graph and replayed (no host work per call); every side "
            f"cycles through the row's sets of tensors (sets), which span >= {L2_SPAN}x the L2 "
            "cache",
            f"# GB/s = compulsory bytes (inputs read once, outputs written once) / ms; "
            f"measured copy (back to back): {copy:.0f} GB/s",
            "# speed-up = peer ms / cdnn ms (graph x: the same of graph times); "
            "err = worst |y - f64 ref| / tol on samples (<= 1 passes); "
            f"rel = ||y - torch f32|| / ||torch f32|| (<= {REL_TOLERANCE:g} passes)",
            f"{'op':16} {'shape':>16} {'cdnn engine/candidate':28} {'built':>8} {'ms':>8} "
            f"{'call':>8} {'graph':>8} {'rate':>14} {'of copy':>7} {'err':>6} {'rel':>8} "
            f"{'sets':>4}  {'peer':28} {'peer ms':>8} {'call':>8} {'graph':>8} {'speed-up':>8} "
            f"{'graph x':>8}"]


def graph_cell(ms):
    return f"{ms:8.3f}" if ms is not None else f"{'-':>8}"


def row_lines(torch, handle, r, copy, reps):
    """The row's table lines; sets r["rel"]."""
    timings, r["rel"], sets = measure(torch, handle, r, reps)
    (_, ms, call, graph), peer_times = timings[0], timings[1:]
    rate = r["rate"] * r["ms"] / ms
    shape = "x".join(str(d) for d in r["shape"])
    of_copy = f"{100 * rate / copy:6.0f}%" if r["unit"] == "GB/s" else "      -"
    head = (f"{r['op']:16} {shape:>16} {r['engine']:28} {r['ms']:8.3f} {ms:8.3f} {call:8.3f} "
            f"{graph_cell(graph)} {rate:8.1f} {r['unit']:8} {of_copy} {r['err']:6.3f} "
            f"{r['rel']:8.1e} {sets:4}")
    lines = []
    for name, peer_ms, peer_call, peer_graph in peer_times:
        graph_ratio = f"{peer_graph / graph:8.2f}" if graph and peer_graph else f"{'-':>8}"
        lines.append(f"{head}  {name:28} {peer_ms:8.3f} {peer_call:8.3f} "
                     f"{graph_cell(peer_graph)} {peer_ms / ms:8.2f} {graph_ratio}")
        head = " " * len(head)
    torch.cuda.empty_cache()
    return lines or [head]


if __name__ == "__main__":
    main()
