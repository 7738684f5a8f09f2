/*
 * norm.c -- "host-norm-v1": layer-norm and RMS-norm forward over each row,
 * with optional scale and bias, and the row's mean and 1/std as optional
 * outputs.
 *
 * Built per variant, -DHK_NORM_ONEPASS=0 or 1, for layer-norm's variance:
 *   twopass: the mean, then the mean of (x - mean)^2: no cancellation.
 *   onepass: sums of d = x - x[0] and of d^2 in one read, var = E[d^2] -
 *            E[d]^2; shifting by a sample of the row keeps the
 *            cancellation small when the row's spread is not tiny next to
 *            its offset from x[0].  One read of x fewer.
 * RMS-norm needs one statistic, the mean of x^2, in both.
 */
#include "rows.h"
#include "vmath.h"

#ifndef HK_NORM_ONEPASS
#error "build norm.c with -DHK_NORM_ONEPASS=0 or 1"
#endif

typedef struct nm_job {
    const cdnn_host_norm_args_t *args;
    hk_rows_t rows;
    int64_t tasks;
} nm_job_t;

/* The statistics of one row. */
typedef struct nm_stats {
    float mean;    /* 0 for RMS-norm */
    float inv_std;
} nm_stats_t;

static int32_t check_types(const cdnn_host_norm_args_t *a)
{
    const cdnn_host_tensor_t *optional[] = {&a->scale, &a->bias, &a->mean,
                                            &a->inv_std};
    if (!hk_type_ok(a->x.type) || !hk_type_ok(a->y.type))
        return CDNN_HOST_BAD_TYPE;
    for (int i = 0; i < 4; i++)
        if (optional[i]->data && !hk_type_ok(optional[i]->type))
            return CDNN_HOST_BAD_TYPE;
    return CDNN_HOST_OK;
}

static int32_t check_args(const cdnn_host_norm_args_t *a, hk_rows_t *r,
                          int query)
{
    int32_t status = hk_rows_init(r, a->outer_rank, a->outer_dims, a->cols);
    if (status != CDNN_HOST_OK || a->cols < 1 ||
        (a->kind != CDNN_HOST_NORM_LAYER && a->kind != CDNN_HOST_NORM_RMS) ||
        !(a->epsilon >= 0.0f))
        return CDNN_HOST_BAD_ARGS;
    if (a->kind == CDNN_HOST_NORM_RMS && a->mean.data)
        return CDNN_HOST_BAD_ARGS; /* RMS-norm has no mean to give */
    status = check_types(a);
    if (status != CDNN_HOST_OK)
        return status;
    if (!query && r->rows > 0 && (!a->x.data || !a->y.data))
        return CDNN_HOST_BAD_ARGS;
    return CDNN_HOST_OK;
}

/* ------------------------------------------------------------------------
 * Statistics
 * ------------------------------------------------------------------------ */

/* Sums over a chunk of d = x - shift and d^2, lanes kept apart; the
 * tail is padded with shift, whose d is 0. */
static void chunk_moments(const float *x, int64_t n, float shift, vf *sum,
                          vf *squares)
{
    vf vshift = vset1(shift);
    int64_t i = 0;
    for (; i < n; i += HK_VL) {
        vf v = i + HK_VL <= n ? vload(x + i) : hk_load_tail(x + i, n - i, shift);
        vf d = vsub(v, vshift);
        *sum = vadd(*sum, d);
        *squares = vfma(d, d, *squares);
    }
}

/* Sums of (x - shift) and (x - shift)^2 over the row. */
static void row_moments(const cdnn_host_norm_args_t *a, const hk_rows_t *r,
                        int64_t xo, float shift, float *sum, float *squares)
{
    float buf[HK_CHUNK];
    int64_t xs = hk_col_stride(r, &a->x);
    double s_total = 0.0, q_total = 0.0; /* chunks' sums: long rows stay exact */
    for (int64_t j = 0; j < r->cols; j += HK_CHUNK) {
        int64_t n = hk_min(HK_CHUNK, r->cols - j);
        vf s = vzero(), q = vzero();
        chunk_moments(hk_row_chunk(&a->x, xo, xs, j, n, buf), n, shift, &s,
                      &q);
        s_total += vhsum(s);
        q_total += vhsum(q);
    }
    *sum = (float)s_total;
    *squares = (float)q_total;
}

static nm_stats_t row_stats(const cdnn_host_norm_args_t *a,
                            const hk_rows_t *r, int64_t xo)
{
    float n = (float)r->cols, sum, squares;
    nm_stats_t st = {0.0f, 0.0f};
    float var;
    if (a->kind == CDNN_HOST_NORM_RMS) {
        row_moments(a, r, xo, 0.0f, &sum, &squares);
        var = squares / n;
    } else if (HK_NORM_ONEPASS) {
        float shift = hk_load1(a->x.type, a->x.data, xo);
        row_moments(a, r, xo, shift, &sum, &squares);
        float mean_d = sum / n;
        st.mean = shift + mean_d;
        var = squares / n - mean_d * mean_d;
        var = var > 0.0f ? var : 0.0f; /* rounding can take it below 0 */
    } else {
        row_moments(a, r, xo, 0.0f, &sum, &squares);
        st.mean = sum / n;
        row_moments(a, r, xo, st.mean, &sum, &squares);
        var = squares / n;
    }
    st.inv_std = 1.0f / hk_scalar(vsqrt, var + a->epsilon);
    return st;
}

/* ------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------ */

/* A chunk of scale or bias: its own values, or `value` everywhere when the
 * tensor is absent. */
static const float *optional_chunk(const cdnn_host_tensor_t *t,
                                   const hk_rows_t *r, int64_t offset,
                                   int64_t j, int64_t n, float value,
                                   float *buf)
{
    if (t->data)
        return hk_row_chunk(t, offset, hk_col_stride(r, t), j, n, buf);
    for (int64_t i = 0; i < n; i++)
        buf[i] = value;
    return buf;
}

/* y = (x - mean) * inv_std * scale + bias over a chunk of n. */
static void chunk_normalise(const float *x, const float *scale,
                            const float *bias, float *y, int64_t n,
                            nm_stats_t st)
{
    vf mean = vset1(st.mean), inv = vset1(st.inv_std);
    int64_t i = 0;
    for (; i + HK_VL <= n; i += HK_VL)
        vstore(y + i, vfma(vmul(vsub(vload(x + i), mean), inv),
                           vload(scale + i), vload(bias + i)));
    for (; i < n; i++)
        y[i] = (x[i] - st.mean) * st.inv_std * scale[i] + bias[i];
}

static void write_row(const cdnn_host_norm_args_t *a, const hk_rows_t *r,
                      int64_t row, int64_t xo, nm_stats_t st)
{
    /* 4 chunk buffers, 16 KiB: within the ABI's stack budget */
    float xb[HK_CHUNK], sb[HK_CHUNK], bb[HK_CHUNK], yb[HK_CHUNK];
    int64_t yo = hk_row_offset(r, &a->y, row);
    int64_t so = hk_row_offset(r, &a->scale, row);
    int64_t bo = hk_row_offset(r, &a->bias, row);
    int64_t xs = hk_col_stride(r, &a->x), ys = hk_col_stride(r, &a->y);
    for (int64_t j = 0; j < r->cols; j += HK_CHUNK) {
        int64_t n = hk_min(HK_CHUNK, r->cols - j);
        const float *x = hk_row_chunk(&a->x, xo, xs, j, n, xb);
        const float *s = optional_chunk(&a->scale, r, so, j, n, 1.0f, sb);
        const float *b = optional_chunk(&a->bias, r, bo, j, n, 0.0f, bb);
        float *y = hk_row_out(&a->y, yo, ys, j, yb);
        chunk_normalise(x, s, b, y, n, st);
        hk_row_store(&a->y, yo, ys, j, n, y);
    }
}

static void normalise_row(const cdnn_host_norm_args_t *a, const hk_rows_t *r,
                          int64_t row)
{
    int64_t xo = hk_row_offset(r, &a->x, row);
    nm_stats_t st = row_stats(a, r, xo);
    write_row(a, r, row, xo, st);
    if (a->mean.data)
        hk_store1(a->mean.type, a->mean.data, hk_row_offset(r, &a->mean, row),
                  st.mean);
    if (a->inv_std.data)
        hk_store1(a->inv_std.type, a->inv_std.data,
                  hk_row_offset(r, &a->inv_std, row), st.inv_std);
}

static void run_task(void *arg, int64_t task)
{
    const nm_job_t *job = arg;
    int64_t first, last;
    hk_task_rows(task, job->tasks, job->rows.rows, &first, &last);
    for (int64_t row = first; row < last; row++)
        normalise_row(job->args, &job->rows, row);
}

HK_EXPORT int32_t HK_ENTRY(const cdnn_host_norm_args_t *args,
                           size_t *workspace_bytes)
{
    nm_job_t job = {.args = args};
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
