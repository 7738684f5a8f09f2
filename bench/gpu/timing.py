"""bench/gpu/timing.py -- PyTorch timed as bench/gpu/event_timing.h times cdnn.

CUDA events on the current stream, read two ways, each the median of reps
samples after 3 untimed calls: per call (one call between the events, the
stream drained after it: also holds the host's dispatch and launch) and back
to back (calls enqueued without waiting, at least STREAM_SAMPLE_MS of them a
sample: the device's own time).
"""
import math
import statistics

STREAM_SAMPLE_MS = 1.0
MAX_BATCH = 1000


def time_ms(torch, fn, reps):
    """(back-to-back ms, per-call ms) of fn()."""
    def sample(batch):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / batch

    for _ in range(3):
        fn()
    call = statistics.median(sample(1) for _ in range(reps))
    batch = min(MAX_BATCH, math.ceil(STREAM_SAMPLE_MS / call))
    return statistics.median(sample(batch) for _ in range(reps)), call
