/*
 * fast_resize.c -- cpu:resize, a fast CPU engine for one resize node on
 * f32 tensors (nearest and linear, any rank, any strides).
 *
 * Where each output position of each dim samples x is tabulated at build
 * with pool_geometry.h's exact arithmetic, as cpu:reference computes it:
 * for nearest the source index, for linear the lower neighbour and the
 * upper one's weight.  The execute walks y's rows (every dim but the
 * last; split over threads in contiguous ranges): per row the outer dims'
 * neighbours once, then per element the one source (nearest) or the 2^r
 * neighbours of the r dims whose weight is not 0 (linear), summed in
 * double in the reference's order, so the results are bit-identical.
 */
#include <stdlib.h>

#include "cpu_engine.h"
#include "fast_util.h"
#include "pool_geometry.h"

#define RESIZE_MAX_THREADS 256

typedef struct resize_context {
    cdnn_tensor_view_t x, y;
    int64_t x_uid, y_uid;
    int32_t rank, linear, threads;
    int64_t elements;
    int64_t *lo[CDNN_MAX_RANK]; /* per dim and output position: source index */
    double *w[CDNN_MAX_RANK];   /* linear: the upper neighbour's weight */
} resize_context_t;

static cdnn_status_t resize_applicable(const cdnn_graph_view_t *g)
{
    if (g->node_count != 1 || g->nodes[0].op != CDNN_OP_RESIZE)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph is not one resize node");
    const cdnn_tensor_view_t *x = &g->tensors[g->nodes[0].inputs[0]];
    if (x->type != CDNN_DATA_TYPE_F32 || x->is_scalar)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; this engine takes f32 "
                        "tensors in memory", x->name, cdnn_data_type_name(x->type));
    return CDNN_STATUS_SUCCESS;
}

static void resize_destroy(void *context)
{
    resize_context_t *ctx = context;
    if (!ctx)
        return;
    for (int d = 0; d < CDNN_MAX_RANK; d++) {
        free(ctx->lo[d]);
        free(ctx->w[d]);
    }
    free(ctx);
}

/* Dim d's table: for each of y's positions, where it samples x. */
static int make_tables(resize_context_t *ctx, const cdnn_resize_attr_t *a, int d)
{
    int64_t n = ctx->x.dims[d], m = ctx->y.dims[d];
    ctx->lo[d] = malloc((size_t)m * sizeof *ctx->lo[d]);
    ctx->w[d] = malloc((size_t)m * sizeof *ctx->w[d]);
    if (!ctx->lo[d] || !ctx->w[d])
        return 0;
    for (int64_t j = 0; j < m; j++) {
        resize_coord_t c = resize_source(a->coordinate, j, n, m);
        ctx->w[d][j] = 0;
        if (ctx->linear)
            resize_linear_at(c, n, &ctx->lo[d][j], &ctx->w[d][j]);
        else
            ctx->lo[d][j] = resize_nearest_index(c, a->nearest, n);
    }
    return 1;
}

static cdnn_status_t resize_create(const cdnn_device_view_t *device,
                                   const cdnn_graph_view_t *g,
                                   const cdnn_knob_value_t *knobs, int32_t knob_count,
                                   void **context)
{
    cdnn_status_t st = resize_applicable(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    resize_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    const cdnn_node_view_t *n = &g->nodes[0];
    ctx->x = g->tensors[n->inputs[0]];
    ctx->y = g->tensors[n->outputs[0]];
    ctx->x.name = ctx->y.name = NULL; /* the view's strings go away */
    ctx->x_uid = ctx->x.uid;
    ctx->y_uid = ctx->y.uid;
    ctx->rank = ctx->x.rank;
    ctx->linear = n->attr.resize.mode == CDNN_RESIZE_LINEAR;
    ctx->elements = cpu_tensor_elements(&ctx->y);
    for (int d = 0; d < ctx->rank; d++)
        if (!make_tables(ctx, &n->attr.resize, d)) {
            resize_destroy(ctx);
            return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
        }
    int32_t threads = (int32_t)cpu_knob(knobs, knob_count, "threads", device->cpu_threads);
    int64_t row = ctx->y.dims[ctx->rank - 1];
    ctx->threads = cpu_threads_for(threads, ctx->elements / row, 1 + (1 << 14) / row);
    if (ctx->threads > RESIZE_MAX_THREADS)
        ctx->threads = RESIZE_MAX_THREADS;
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t resize_workspace_size(void *context, size_t *bytes)
{
    (void)context;
    *bytes = 0;
    return CDNN_STATUS_SUCCESS;
}

typedef struct resize_job {
    const resize_context_t *ctx;
    const float *x;
    float *y;
} resize_job_t;

/* One row of y (its coordinates j in every dim but the last): the outer
 * dims' neighbours are gathered once -- for linear, the corners of the
 * dims with a nonzero weight, bit k of a corner picking the upper
 * neighbour of the k-th such dim, with the product of their weights in dim
 * order -- and then the last dim is walked.  The sum runs over the corners
 * in cpu:reference's order (the last dim is the highest bit), skipping
 * weight-0 corners as it does, so the results are bit-identical. */
static void resize_row(const resize_job_t *job, const int64_t *j)
{
    const resize_context_t *ctx = job->ctx;
    int last = ctx->rank - 1;
    int64_t base = 0, corner_at[1 << (CDNN_MAX_RANK - 1)], step[CDNN_MAX_RANK];
    double corner_w[1 << (CDNN_MAX_RANK - 1)], w[CDNN_MAX_RANK];
    int r = 0;
    for (int d = 0; d < last; d++) {
        base += ctx->lo[d][j[d]] * ctx->x.strides[d];
        if (ctx->linear && ctx->w[d][j[d]] != 0) {
            w[r] = ctx->w[d][j[d]];
            step[r++] = ctx->x.strides[d];
        }
    }
    int64_t yrow = 0;
    for (int d = 0; d < last; d++)
        yrow += j[d] * ctx->y.strides[d];
    const int64_t *lo = ctx->lo[last], xs = ctx->x.strides[last], ys = ctx->y.strides[last];
    const float *x = job->x;
    float *y = job->y + yrow;
    if (!ctx->linear) {
        for (int64_t k = 0; k < ctx->y.dims[last]; k++)
            y[k * ys] = x[base + lo[k] * xs];
        return;
    }
    int corners = 1 << r;
    for (int c = 0; c < corners; c++) {
        double weight = 1;
        int64_t at = base;
        for (int k = 0; k < r; k++) {
            int upper = (c >> k) & 1;
            weight *= upper ? w[k] : 1 - w[k];
            at += upper ? step[k] : 0;
        }
        corner_w[c] = weight;
        corner_at[c] = at;
    }
    const double *wl = ctx->w[last];
    for (int64_t k = 0; k < ctx->y.dims[last]; k++) {
        double sum = 0, lower = 1 - wl[k], upper = wl[k];
        int64_t at = lo[k] * xs;
        for (int c = 0; c < corners; c++) {
            double weight = corner_w[c] * lower;
            if (weight != 0)
                sum += weight * x[corner_at[c] + at];
        }
        for (int c = 0; upper != 0 && c < corners; c++) {
            double weight = corner_w[c] * upper;
            if (weight != 0)
                sum += weight * x[corner_at[c] + at + xs];
        }
        y[k * ys] = (float)sum;
    }
}

/* Rows [begin, end) of y: every dim but the last, row-major. */
static void resize_rows(void *arg, int64_t begin, int64_t end)
{
    const resize_job_t *job = arg;
    const resize_context_t *ctx = job->ctx;
    int last = ctx->rank - 1;
    int64_t j[CDNN_MAX_RANK] = {0}, flat = begin;
    for (int d = last - 1; d >= 0; d--) {
        j[d] = flat % ctx->y.dims[d];
        flat /= ctx->y.dims[d];
    }
    for (int64_t row = begin; row < end; row++) {
        resize_row(job, j);
        for (int d = last - 1; d >= 0 && ++j[d] == ctx->y.dims[d]; d--)
            j[d] = 0;
    }
}

static void *pointer_of(const cdnn_exec_args_t *args, int64_t uid)
{
    for (int32_t i = 0; i < args->count; i++)
        if (args->uids[i] == uid)
            return args->ptrs[i];
    return NULL;
}

static cdnn_status_t resize_execute(void *context, const cdnn_exec_args_t *args)
{
    const resize_context_t *ctx = context;
    resize_job_t job = {ctx, pointer_of(args, ctx->x_uid), pointer_of(args, ctx->y_uid)};
    if (!job.x || !job.y)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "tensor uid %lld has no pointer in the "
                        "variant pack", (long long)(job.x ? ctx->y_uid : ctx->x_uid));
    cpu_parallel_for(ctx->threads, ctx->elements / ctx->y.dims[ctx->rank - 1], resize_rows,
                     &job);
    return CDNN_STATUS_SUCCESS;
}

const cpu_engine_t cpu_resize_engine = {
    .applicable = resize_applicable,
    .create = resize_create,
    .workspace_size = resize_workspace_size,
    .execute = resize_execute,
    .destroy = resize_destroy,
};
