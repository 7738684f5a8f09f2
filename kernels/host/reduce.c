/*
 * reduce.c -- "host-reduce-v1": one value per row (sum, product, min, max,
 * max |x|, mean, sum |x|, sqrt of the sum of squares).
 *
 * Each row is read once, in chunks, into ACCUMULATORS independent vector
 * accumulators: they hide the latency of the adds and split a long sum
 * into many short ones, which is also what keeps its rounding error small.
 */
#include "rows.h"
#include "vmath.h"

#define ACCUMULATORS 4

typedef struct rd_job {
    const cdnn_host_reduce_args_t *args;
    hk_rows_t rows;
    int64_t tasks;
} rd_job_t;

static int32_t check_args(const cdnn_host_reduce_args_t *a, hk_rows_t *r,
                          int query)
{
    int32_t status = hk_rows_init(r, a->outer_rank, a->outer_dims, a->cols);
    if (status != CDNN_HOST_OK || a->mode < 0 ||
        a->mode >= CDNN_HOST_REDUCE_MODE_COUNT)
        return CDNN_HOST_BAD_ARGS;
    if (!hk_type_ok(a->x.type) || !hk_type_ok(a->y.type))
        return CDNN_HOST_BAD_TYPE;
    if (!query && r->rows > 0 &&
        (!a->y.data || (a->cols > 0 && !a->x.data)))
        return CDNN_HOST_BAD_ARGS;
    return CDNN_HOST_OK;
}

/* The value that leaves an accumulator as it is. */
static float identity(int32_t mode)
{
    switch (mode) {
    case CDNN_HOST_REDUCE_MUL: return 1.0f;
    case CDNN_HOST_REDUCE_MIN: return __builtin_inff();
    case CDNN_HOST_REDUCE_MAX: return -__builtin_inff();
    default: return 0.0f;
    }
}

/* acc (+)= x, the mode's way; NaN is skipped by min and max. */
HK_INLINE vf accumulate(int32_t mode, vf acc, vf x)
{
    switch (mode) {
    case CDNN_HOST_REDUCE_MUL: return vmul(acc, x);
    case CDNN_HOST_REDUCE_MIN: return vmin_num(acc, x);
    case CDNN_HOST_REDUCE_MAX: return vmax_num(acc, x);
    case CDNN_HOST_REDUCE_AMAX: return vmax_num(acc, vabs(x));
    case CDNN_HOST_REDUCE_NORM1: return vadd(acc, vabs(x));
    case CDNN_HOST_REDUCE_NORM2: return vfma(x, x, acc);
    default: return vadd(acc, x);
    }
}

static void accumulate_chunk(int32_t mode, const float *x, int64_t n,
                             vf *acc)
{
    int64_t i = 0;
    for (; i + ACCUMULATORS * HK_VL <= n; i += ACCUMULATORS * HK_VL)
        for (int k = 0; k < ACCUMULATORS; k++)
            acc[k] = accumulate(mode, acc[k], vload(x + i + k * HK_VL));
    for (; i + HK_VL <= n; i += HK_VL)
        acc[0] = accumulate(mode, acc[0], vload(x + i));
    if (i < n)
        acc[1] = accumulate(mode, acc[1],
                            hk_load_tail(x + i, n - i, identity(mode)));
}

/* How two partial results of a mode combine: partial sums of |x| or x^2
 * add, partial maxima of |x| take the max. */
static int32_t combining_mode(int32_t mode)
{
    switch (mode) {
    case CDNN_HOST_REDUCE_AMAX: return CDNN_HOST_REDUCE_MAX;
    case CDNN_HOST_REDUCE_AVG:
    case CDNN_HOST_REDUCE_NORM1:
    case CDNN_HOST_REDUCE_NORM2: return CDNN_HOST_REDUCE_ADD;
    default: return mode;
    }
}

/* A chunk's accumulators folded into one partial result. */
static float fold(int32_t mode, vf *acc)
{
    int32_t combine = combining_mode(mode);
    for (int k = 1; k < ACCUMULATORS; k++)
        acc[0] = accumulate(combine, acc[0], acc[k]);
    switch (combine) {
    case CDNN_HOST_REDUCE_MUL: return vhmul(acc[0]);
    case CDNN_HOST_REDUCE_MIN: return vhmin(acc[0]);
    case CDNN_HOST_REDUCE_MAX: return vhmax(acc[0]);
    default: return vhsum(acc[0]);
    }
}

/* Partial results combined in double: a long row's sum loses nothing
 * between chunks.  (Min and max never see NaN here: chunks skip it.) */
static double combine(int32_t mode, double total, float part)
{
    switch (combining_mode(mode)) {
    case CDNN_HOST_REDUCE_MUL: return total * part;
    case CDNN_HOST_REDUCE_MIN: return part < total ? part : total;
    case CDNN_HOST_REDUCE_MAX: return part > total ? part : total;
    default: return total + part;
    }
}

static float finish(int32_t mode, double total, int64_t cols)
{
    if (mode == CDNN_HOST_REDUCE_AVG)
        return (float)(total / (double)cols);
    if (mode == CDNN_HOST_REDUCE_NORM2)
        return hk_scalar(vsqrt, (float)total);
    return (float)total;
}

static void reduce_row(const cdnn_host_reduce_args_t *a, const hk_rows_t *r,
                       int64_t row)
{
    float buf[HK_CHUNK];
    double total = identity(a->mode);
    int64_t xo = hk_row_offset(r, &a->x, row);
    int64_t xs = hk_col_stride(r, &a->x);
    for (int64_t j = 0; j < r->cols; j += HK_CHUNK) {
        int64_t n = hk_min(HK_CHUNK, r->cols - j);
        vf acc[ACCUMULATORS];
        for (int k = 0; k < ACCUMULATORS; k++)
            acc[k] = vset1(identity(a->mode));
        accumulate_chunk(a->mode, hk_row_chunk(&a->x, xo, xs, j, n, buf), n,
                         acc);
        total = combine(a->mode, total, fold(a->mode, acc));
    }
    hk_store1(a->y.type, a->y.data, hk_row_offset(r, &a->y, row),
              finish(a->mode, total, r->cols));
}

static void run_task(void *arg, int64_t task)
{
    const rd_job_t *job = arg;
    int64_t first, last;
    hk_task_rows(task, job->tasks, job->rows.rows, &first, &last);
    for (int64_t row = first; row < last; row++)
        reduce_row(job->args, &job->rows, row);
}

HK_EXPORT int32_t HK_ENTRY(const cdnn_host_reduce_args_t *args,
                           size_t *workspace_bytes)
{
    rd_job_t job = {.args = args};
    int32_t status = check_args(args, &job.rows, workspace_bytes != NULL);
    if (status != CDNN_HOST_OK)
        return status;
    if (workspace_bytes) {
        *workspace_bytes = 0;
        return CDNN_HOST_OK;
    }
    job.tasks = hk_row_tasks(&job.rows, &args->parallel);
    hk_run_tasks(&args->parallel, job.tasks, run_task, &job);
    return CDNN_HOST_OK;
}
