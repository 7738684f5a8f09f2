/*
 * event_timing.h -- the clock of the GPU benches (bench_gpu_plans,
 * bench_gpu_matmul, bench_gpu_sdpa): CUDA events on the default stream,
 * read two ways, each the median of `reps` samples after 3 untimed runs.
 *
 *   per call      one run between the events and the stream drained after
 *                 it.  The sample also holds the host's dispatch and launch
 *                 (the device idles from the start event until the work
 *                 arrives): what a caller that waits on every result sees.
 *   back to back  runs enqueued without waiting, at least
 *                 BENCH_STREAM_SAMPLE_MS of them a sample, divided by their
 *                 number: each launch hides behind the work before it.  The
 *                 device's own time, what a framework's stream sees, and how
 *                 cdnn's benchmarking times its candidates.
 *
 * The two differ by a few microseconds, which is 5-15% of a 40-90 us
 * memory-bound kernel and noise for a 1 ms GEMM.  bench/gpu/timing.py
 * times PyTorch the same two ways.  Header-only, like bench_common.h.
 */
#ifndef CDNN_BENCH_EVENT_TIMING_H
#define CDNN_BENCH_EVENT_TIMING_H

#include <math.h>

#include <cdnn_sdk/cuda.h>

#include "../bench_common.h"

enum { BENCH_WARMUP = 3, BENCH_MAX_BATCH = 1000 };
static const double BENCH_STREAM_SAMPLE_MS = 1.0;

typedef struct bench_timing {
    double call_ms, stream_ms;
} bench_timing_t;

/* One run of the work being timed, enqueued on the default stream. */
typedef void (*bench_run_fn)(void *ctx);

static inline void bench_events_check(sdk_cu_result result, const char *what)
{
    if (result) {
        fprintf(stderr, "%s: %s failed (CUDA error %d)\n", program_invocation_short_name,
                what, (int)result);
        exit(1);
    }
}

/* Milliseconds a run over `batch` runs enqueued back to back between two
 * events. */
static inline double bench_events_sample(const sdk_cuda_t *cu, const sdk_cu_event events[2],
                                         bench_run_fn run, void *ctx, int batch)
{
    float elapsed = 0;
    bench_events_check(cu->event_record(events[0], NULL), "cuEventRecord");
    for (int i = 0; i < batch; i++)
        run(ctx);
    bench_events_check(cu->event_record(events[1], NULL), "cuEventRecord");
    bench_events_check(cu->event_synchronize(events[1]), "cuEventSynchronize");
    bench_events_check(cu->event_elapsed_time(&elapsed, events[0], events[1]),
                       "cuEventElapsedTime");
    return elapsed / batch;
}

/* Both clocks of run (see the top of this file). */
static inline bench_timing_t bench_time_events(const sdk_cuda_t *cu, bench_run_fn run, void *ctx,
                                               int reps)
{
    sdk_cu_event events[2];
    bench_events_check(cu->event_create(&events[0], 0), "cuEventCreate");
    bench_events_check(cu->event_create(&events[1], 0), "cuEventCreate");
    for (int i = 0; i < BENCH_WARMUP; i++)
        run(ctx);
    double *ms = xcalloc((size_t)reps, sizeof *ms);
    for (int i = 0; i < reps; i++)
        ms[i] = bench_events_sample(cu, events, run, ctx, 1);
    bench_timing_t timing = {.call_ms = median(ms, reps)};
    double batch = ceil(BENCH_STREAM_SAMPLE_MS / timing.call_ms);
    for (int i = 0; i < reps; i++)
        ms[i] = bench_events_sample(cu, events, run, ctx,
                                    batch < BENCH_MAX_BATCH ? (int)batch : BENCH_MAX_BATCH);
    timing.stream_ms = median(ms, reps);
    free(ms);
    cu->event_destroy(events[0]);
    cu->event_destroy(events[1]);
    return timing;
}

#endif
