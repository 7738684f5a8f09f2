#include "fast_util.h"

#include <pthread.h>

/* Enough for any machine cdnn runs on; more threads than this are not
 * worth starting for one call. */
#define CPU_MAX_THREADS 256

typedef struct range_task {
    cpu_range_fn fn;
    void *arg;
    int64_t begin, end;
} range_task_t;

static void *run_range(void *p)
{
    range_task_t *t = p;
    t->fn(t->arg, t->begin, t->end);
    return NULL;
}

void cpu_parallel_for(int32_t threads, int64_t n, cpu_range_fn fn, void *arg)
{
    if (threads > CPU_MAX_THREADS)
        threads = CPU_MAX_THREADS;
    if (threads > n)
        threads = (int32_t)n;
    if (threads <= 1) {
        if (n > 0)
            fn(arg, 0, n);
        return;
    }
    range_task_t tasks[CPU_MAX_THREADS];
    pthread_t ids[CPU_MAX_THREADS];
    int started[CPU_MAX_THREADS];
    for (int32_t t = 0; t < threads; t++) {
        tasks[t] = (range_task_t){fn, arg, n * t / threads,
                                  n * (t + 1) / threads};
        started[t] = t > 0 && pthread_create(&ids[t], NULL, run_range,
                                             &tasks[t]) == 0;
    }
    for (int32_t t = 0; t < threads; t++)
        if (!started[t])
            run_range(&tasks[t]);
    for (int32_t t = 1; t < threads; t++)
        if (started[t])
            pthread_join(ids[t], NULL);
}

int32_t cpu_threads_for(int32_t max_threads, int64_t n, int64_t grain)
{
    int64_t useful = n / (grain > 0 ? grain : 1);
    if (useful < 1)
        useful = 1;
    return max_threads < useful ? (max_threads > 0 ? max_threads : 1)
                                : (int32_t)useful;
}

size_t cpu_ws_reserve(cpu_ws_layout_t *ws, size_t bytes)
{
    size_t offset = ws->end;
    ws->end += (bytes + CPU_WS_ALIGN - 1) / CPU_WS_ALIGN * CPU_WS_ALIGN;
    ws->bytes = ws->end ? ws->end + CPU_WS_ALIGN : 0;
    return offset;
}

void *cpu_ws_at(void *workspace, size_t offset)
{
    uintptr_t p = (uintptr_t)workspace;
    p = (p + CPU_WS_ALIGN - 1) / CPU_WS_ALIGN * CPU_WS_ALIGN;
    return (char *)p + offset;
}
