/*
 * bench_common.h -- what every benchmark program shares: a monotonic clock,
 * a median, dying loudly on a failed cdnn call or allocation.  Header-only:
 * each benchmark is one program of one source file.
 */
#ifndef CDNN_BENCH_COMMON_H
#define CDNN_BENCH_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cdnn/cdnn.h>

static inline double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void die(const char *what, cdnn_status_t st)
{
    fprintf(stderr, "%s: %s: %s: %s\n", program_invocation_short_name, what,
            cdnn_status_string(st), cdnn_last_error());
    exit(1);
}

#define CHECK(call)                                                           \
    do {                                                                      \
        cdnn_status_t st_ = (call);                                           \
        if (st_ != CDNN_STATUS_SUCCESS)                                       \
            die(#call, st_);                                                  \
    } while (0)

static inline void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "%s: out of memory (%zu x %zu bytes)\n",
                program_invocation_short_name, n, size);
        exit(1);
    }
    return p;
}

static inline int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/** The median of t[0..n) (sorts t). */
static inline double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, compare_doubles);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

#endif
