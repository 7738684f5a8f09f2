"""bench/gpu/timing.py -- PyTorch timed as bench/gpu/event_timing.h times cdnn.

CUDA events on the current stream, read two ways, each the median of reps
samples after 3 untimed calls: per call (one call between the events, the
stream drained after it: also holds the host's dispatch and launch) and back
to back (calls enqueued without waiting, at least STREAM_SAMPLE_MS of them a
sample: the device's own time).

A third clock, graph replay (time_graph_replays), captures each function's
back-to-back batch in a CUDA graph once and replays it: no host work per
call at all, so that where the host's dispatch is slower than the device
(layers of a few tens of us: cuDNN's per-call dispatch has been seen to
vary 0.015-0.027 ms between runs) the device's own time still shows.

time_interleaved takes its samples of several functions in turn (f0, f1,
..., f0, f1, ...): the chip's clock drifts between runs and falls under
sustained tensor-core load, by as much as the few percent a comparison turns
on, and taken in turn the drift falls on every function alike.
"""
import math
import statistics
import sys

STREAM_SAMPLE_MS = 1.0
MAX_BATCH = 1000


def time_interleaved(torch, fns, reps):
    """[(back-to-back ms, per-call ms)] of each of fns, sampled in turn."""
    def sample(fn, batch):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / batch

    def in_turn(batches):
        samples = [[] for _ in fns]
        for _ in range(reps):
            for fn, batch, mine in zip(fns, batches, samples):
                mine.append(sample(fn, batch))
        return [statistics.median(mine) for mine in samples]

    for fn in fns:
        for _ in range(3):
            fn()
    calls = in_turn([1] * len(fns))
    streams = in_turn([batch_for(c) for c in calls])
    return list(zip(streams, calls))


def batch_for(call_ms):
    """How many calls of call_ms each make one back-to-back sample."""
    return min(MAX_BATCH, math.ceil(STREAM_SAMPLE_MS / call_ms))


def time_ms(torch, fn, reps):
    """(back-to-back ms, per-call ms) of fn()."""
    return time_interleaved(torch, [fn], reps)[0]


def time_graph_replays(torch, fns, batches, reps, on_stream):
    """Per-call ms of each of fns, from a CUDA graph of batches[i] calls of
    fns[i] captured once and replayed, the replays sampled in turn.
    on_stream(stream) is called with the capture stream before each capture
    and with the current stream after it (for callers that, like a cdnn
    handle, hold a stream of their own).  None for a function whose capture
    fails (its error, on stderr)."""
    graphs = []
    current = torch.cuda.current_stream()
    for fn, batch in zip(fns, batches):
        graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
        try:
            with torch.cuda.graph(graph, stream=stream):
                on_stream(stream.cuda_stream)
                for _ in range(batch):
                    fn()
            graphs.append(graph)
        except RuntimeError as e:  # torch's capture errors, cdnn's CdnnError
            print(f"graph capture failed: {e}", file=sys.stderr)
            graphs.append(None)
        finally:
            on_stream(current.cuda_stream)
    torch.cuda.synchronize()
    live = [(g, b) for g, b in zip(graphs, batches) if g is not None]
    replays = time_interleaved(torch, [g.replay for g, _ in live], reps) if live else []
    per_call = iter(ms / b for (ms, _), (_, b) in zip(replays, live))
    return [next(per_call) if g is not None else None for g in graphs]
