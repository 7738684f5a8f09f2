"""bench/gpu/timing.py -- PyTorch timed as bench/gpu/event_timing.h times cdnn.

CUDA events on the current stream, read two ways, each the median of reps
samples after 3 untimed calls: per call (one call between the events, the
stream drained after it: also holds the host's dispatch and launch) and back
to back (calls enqueued without waiting, at least STREAM_SAMPLE_MS of them a
sample: the device's own time).

time_interleaved takes its samples of several functions in turn (f0, f1,
..., f0, f1, ...): the chip's clock drifts between runs and falls under
sustained tensor-core load, by as much as the few percent a comparison turns
on, and taken in turn the drift falls on every function alike.
"""
import math
import statistics

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
    streams = in_turn([min(MAX_BATCH, math.ceil(STREAM_SAMPLE_MS / c)) for c in calls])
    return list(zip(streams, calls))


def time_ms(torch, fn, reps):
    """(back-to-back ms, per-call ms) of fn()."""
    return time_interleaved(torch, [fn], reps)[0]
