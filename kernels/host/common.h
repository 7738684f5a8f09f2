/*
 * common.h -- what every host kernel source shares: the export of its one
 * entry, running tasks through the caller's parallel_for, multi-indices
 * and workspace carving.
 *
 * Each object is built from one source file with -DHK_ENTRY=<symbol>;
 * everything else in it is static (and -fvisibility=hidden besides).
 */
#ifndef CDNN_HOST_COMMON_H
#define CDNN_HOST_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "host_kernel.h"
#include "vec.h"

#ifndef HK_ENTRY
#error "build each host kernel with -DHK_ENTRY=<its entry symbol>"
#endif

#define HK_EXPORT __attribute__((visibility("default")))

/* The workspace and packed buffers are aligned to a cache line. */
#define HK_ALIGN 64

HK_INLINE int64_t hk_min(int64_t a, int64_t b) { return a < b ? a : b; }
HK_INLINE int64_t hk_max(int64_t a, int64_t b) { return a > b ? a : b; }
HK_INLINE int64_t hk_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
HK_INLINE int64_t hk_round_up(int64_t a, int64_t b) { return hk_ceil_div(a, b) * b; }

HK_INLINE void *hk_align_up(void *p)
{
    uintptr_t u = (uintptr_t)p;
    return (void *)((u + HK_ALIGN - 1) & ~(uintptr_t)(HK_ALIGN - 1));
}

/* Tasks worth asking parallel_for for: threads, or 1 without one. */
HK_INLINE int64_t hk_thread_budget(const cdnn_host_parallel_t *par)
{
    return par->parallel_for && par->threads > 1 ? par->threads : 1;
}

/* body(arg, i) for i < tasks: on the caller's threads when there is more
 * than one task, here otherwise. */
static inline void hk_run_tasks(const cdnn_host_parallel_t *par, int64_t tasks,
                                void (*body)(void *arg, int64_t i), void *arg)
{
    if (tasks > 1 && par->parallel_for) {
        par->parallel_for(par->ctx, tasks, body, arg);
        return;
    }
    for (int64_t i = 0; i < tasks; i++)
        body(arg, i);
}

/* Product of dims (0 when one is 0); -1 when one is negative. */
static inline int64_t hk_count(int32_t rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0)
            return -1;
        n *= dims[d];
    }
    return n;
}

/* The element offset of flat index `flat` over dims (row-major order of
 * the indices) in a tensor with `strides`. */
static inline int64_t hk_offset_of(int64_t flat, int32_t rank,
                                   const int64_t *dims, const int64_t *strides)
{
    int64_t offset = 0;
    for (int32_t d = rank - 1; d >= 0; d--) {
        offset += (flat % dims[d]) * strides[d];
        flat /= dims[d];
    }
    return offset;
}

#endif /* CDNN_HOST_COMMON_H */
