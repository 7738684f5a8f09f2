/*
 * softmax.c -- "host-softmax-v1": per row, softmax or log-softmax of
 * scale * x, with the row's maximum subtracted first (so exp never
 * overflows).
 *
 * Built per variant, -DHK_SOFTMAX_BUFFERED=0 or 1:
 *   recompute: max, then sum of exp, then exp again for the output; reads
 *              x three times in chunks, any row length, no buffer.
 *   buffered:  rows of up to BUFFER_FLOATS are widened once into a stack
 *              buffer, exp taken once and kept; longer rows as recompute.
 */
#include "rows.h"
#include "vmath.h"

#ifndef HK_SOFTMAX_BUFFERED
#error "build softmax.c with -DHK_SOFTMAX_BUFFERED=0 or 1"
#endif

/* 16 KiB: the stack budget the ABI promises, less a chunk's worth. */
#define BUFFER_FLOATS 4096

typedef struct sm_job {
    const cdnn_host_softmax_args_t *args;
    hk_rows_t rows;
    int64_t tasks;
} sm_job_t;

static int32_t check_args(const cdnn_host_softmax_args_t *a, hk_rows_t *r,
                          int query)
{
    int32_t status = hk_rows_init(r, a->outer_rank, a->outer_dims, a->cols);
    if (status != CDNN_HOST_OK || a->cols < 1 || (a->log != 0 && a->log != 1))
        return CDNN_HOST_BAD_ARGS;
    if (!hk_type_ok(a->x.type) || !hk_type_ok(a->y.type))
        return CDNN_HOST_BAD_TYPE;
    if (!query && r->rows > 0 && (!a->x.data || !a->y.data))
        return CDNN_HOST_BAD_ARGS;
    return CDNN_HOST_OK;
}

/* ------------------------------------------------------------------------
 * Recompute: three passes over x
 * ------------------------------------------------------------------------ */

static float chunk_max(const float *x, int64_t n, vf scale, vf m)
{
    int64_t i = 0;
    for (; i + HK_VL <= n; i += HK_VL)
        m = vmax(m, vmul(scale, vload(x + i)));
    if (i < n)
        m = vmax(m, vmul(scale, hk_load_tail(x + i, n - i, -__builtin_inff())));
    return vhmax(m);
}

/* sum of exp(scale x - max) over a chunk (at most HK_CHUNK: callers add
 * the chunks' sums in double, so that long rows lose nothing) */
static float chunk_exp_sum(const float *x, int64_t n, vf scale, vf max)
{
    vf sum = vzero();
    int64_t i = 0;
    for (; i + HK_VL <= n; i += HK_VL)
        sum = vadd(sum, vexp(vfma(scale, vload(x + i), vneg(max))));
    if (i < n) { /* padding -inf: exp gives 0 */
        vf tail = hk_load_tail(x + i, n - i, -__builtin_inff());
        sum = vadd(sum, vexp(vfma(scale, tail, vneg(max))));
    }
    return vhsum(sum);
}

/* y = exp(scale x - max) * inv_sum, or scale x - max - log_sum for log */
static void chunk_output(const float *x, float *y, int64_t n, vf scale,
                         vf max, vf inv_sum, vf log_sum, int log)
{
    int64_t i = 0;
    for (; i < n; i += HK_VL) {
        vf v = i + HK_VL <= n ? vload(x + i) : hk_load_tail(x + i, n - i, 0.0f);
        vf shifted = vfma(scale, v, vneg(max));
        vf out = log ? vsub(shifted, log_sum) : vmul(vexp(shifted), inv_sum);
        if (i + HK_VL <= n)
            vstore(y + i, out);
        else
            hk_store_tail(y + i, n - i, out);
    }
}

static void row_recompute(const cdnn_host_softmax_args_t *a,
                          const hk_rows_t *r, int64_t row)
{
    float in[HK_CHUNK], out[HK_CHUNK];
    int64_t xo = hk_row_offset(r, &a->x, row), yo = hk_row_offset(r, &a->y, row);
    int64_t xs = hk_col_stride(r, &a->x), ys = hk_col_stride(r, &a->y);
    vf scale = vset1(a->scale);
    float max = -__builtin_inff();
    for (int64_t j = 0; j < r->cols; j += HK_CHUNK) {
        int64_t n = hk_min(HK_CHUNK, r->cols - j);
        max = chunk_max(hk_row_chunk(&a->x, xo, xs, j, n, in), n, scale,
                        vset1(max));
    }
    double sum = 0.0;
    for (int64_t j = 0; j < r->cols; j += HK_CHUNK) {
        int64_t n = hk_min(HK_CHUNK, r->cols - j);
        sum += chunk_exp_sum(hk_row_chunk(&a->x, xo, xs, j, n, in), n, scale,
                             vset1(max));
    }
    float total = (float)sum;
    vf inv_sum = vset1(1.0f / total), log_sum = vset1(hk_scalar(vlog, total));
    for (int64_t j = 0; j < r->cols; j += HK_CHUNK) {
        int64_t n = hk_min(HK_CHUNK, r->cols - j);
        const float *x = hk_row_chunk(&a->x, xo, xs, j, n, in);
        float *y = hk_row_out(&a->y, yo, ys, j, out);
        chunk_output(x, y, n, scale, vset1(max), inv_sum, log_sum, a->log);
        hk_row_store(&a->y, yo, ys, j, n, y);
    }
}

/* ------------------------------------------------------------------------
 * Buffered: one read of x, exp once
 * ------------------------------------------------------------------------ */

/* exp(scale v - max) over n values in place; their sum */
static float chunk_exp_in_place(float *v, int64_t n, vf scale, vf max)
{
    vf sum = vzero();
    for (int64_t i = 0; i < n; i += HK_VL) { /* the tail's pad exp's to 0 */
        int full = i + HK_VL <= n;
        vf x = full ? vload(v + i) : hk_load_tail(v + i, n - i, -__builtin_inff());
        vf e = vexp(vfma(scale, x, vneg(max)));
        sum = vadd(sum, e);
        if (full)
            vstore(v + i, e);
        else
            hk_store_tail(v + i, n - i, e);
    }
    return vhsum(sum);
}

static void row_buffered(const cdnn_host_softmax_args_t *a,
                         const hk_rows_t *r, int64_t row)
{
    float buf[BUFFER_FLOATS];
    int64_t n = r->cols;
    int64_t xo = hk_row_offset(r, &a->x, row), yo = hk_row_offset(r, &a->y, row);
    hk_load_run(a->x.type, hk_at(a->x.data, a->x.type, xo),
                hk_col_stride(r, &a->x), n, buf);
    vf scale = vset1(a->scale);
    vf max = vset1(chunk_max(buf, n, scale, vset1(-__builtin_inff())));
    double sum = 0.0;
    for (int64_t j = 0; j < n; j += HK_CHUNK) {
        int64_t len = hk_min(HK_CHUNK, n - j);
        sum += a->log ? chunk_exp_sum(buf + j, len, scale, max)
                      : chunk_exp_in_place(buf + j, len, scale, max);
    }
    if (a->log) {
        float log_sum = hk_scalar(vlog, (float)sum);
        chunk_output(buf, buf, n, scale, max, vzero(), vset1(log_sum), 1);
    } else {
        float inv = (float)(1.0 / sum);
        int64_t i = 0;
        for (; i + HK_VL <= n; i += HK_VL)
            vstore(buf + i, vmul(vload(buf + i), vset1(inv)));
        for (; i < n; i++)
            buf[i] *= inv;
    }
    hk_store_run(a->y.type, hk_at_mut(a->y.data, a->y.type, yo),
                 hk_col_stride(r, &a->y), n, buf);
}

/* ------------------------------------------------------------------------
 * Driver
 * ------------------------------------------------------------------------ */

static void run_task(void *arg, int64_t task)
{
    const sm_job_t *job = arg;
    int64_t first, last;
    hk_task_rows(task, job->tasks, job->rows.rows, &first, &last);
    for (int64_t row = first; row < last; row++) {
        if (HK_SOFTMAX_BUFFERED && job->rows.cols <= BUFFER_FLOATS)
            row_buffered(job->args, &job->rows, row);
        else
            row_recompute(job->args, &job->rows, row);
    }
}

HK_EXPORT int32_t HK_ENTRY(const cdnn_host_softmax_args_t *args,
                           size_t *workspace_bytes)
{
    sm_job_t job = {.args = args};
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
