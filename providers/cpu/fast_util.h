/*
 * fast_util.h -- helpers the fast CPU engines share: splitting work over
 * threads, and carving the caller's workspace into aligned buffers.
 */
#ifndef CDNN_CPU_FAST_UTIL_H
#define CDNN_CPU_FAST_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Work on items [begin, end) of a parallel loop. */
typedef void (*cpu_range_fn)(void *arg, int64_t begin, int64_t end);

/*
 * Run fn over [0, n) split into at most `threads` contiguous ranges, one
 * per thread; the calling thread runs the first.  Threads are started for
 * this call only and joined before it returns, so the engines keep no
 * thread pool (and no state) in their contexts.  If a thread cannot be
 * started, its range runs on the calling thread.
 */
void cpu_parallel_for(int32_t threads, int64_t n, cpu_range_fn fn, void *arg);

/* Threads worth using for n units when each should get at least grain. */
int32_t cpu_threads_for(int32_t max_threads, int64_t n, int64_t grain);

/* Every buffer carved from a workspace starts on its own cache line. */
#define CPU_WS_ALIGN 64

/*
 * A workspace layout: offsets are decided at build by cpu_ws_reserve and
 * resolved against the caller's pointer at execute by cpu_ws_at.  The
 * caller's pointer need not be aligned: the layout reserves room to align
 * it.
 */
typedef struct cpu_ws_layout {
    size_t end;   /* bytes reserved, from the aligned start */
    size_t bytes; /* what to report as the workspace size */
} cpu_ws_layout_t;

/* Reserve bytes (0 is allowed); returns the buffer's offset. */
size_t cpu_ws_reserve(cpu_ws_layout_t *ws, size_t bytes);

/* The buffer at offset in the caller's workspace. */
void *cpu_ws_at(void *workspace, size_t offset);

#endif
