/*
 * fast_pool.c -- cpu:pool, a fast CPU engine for one pooling node, forward
 * or backward, on f32, f16 or bf16 tensors (max with or without indices,
 * average); f16 and bf16 are widened into f32 workspace buffers of the
 * same strides, run as f32 and narrowed back (rounded once).
 *
 * Each spatial dim's window bounds (first and last tap inside x, and the
 * average's count) are tabulated per output position at build, so the
 * execute is plain loops over the taps.  Two loop orders: channels-last x
 * and y (C the innermost, unit-stride dim of both) walk each output
 * position once with the channel loop innermost, which the compiler
 * vectorises; any other layout walks each (n, c) plane: by rows where
 * x's last spatial dim is contiguous and no indices are asked for (each
 * output row reduces its window's rows of x into one, then slides along
 * it), else tap by tap through the strides.  Work is split over (n, c) planes or (n, output position)
 * rows with cpu_parallel_for.  Max keeps cpu:reference's rule (first
 * maximum in row-major tap order, last NaN); an average sums in double
 * over a plane's window and in float across channels (channels-last).
 *
 * The backward splits the (n, c) planes over threads (channels-last x, dy
 * and dx: (n, block of 64 channels), channels innermost); each zeroes its
 * part of dx and adds every dy element in float to its window's maximum
 * (recomputed by the forward's rule, or read from indices, each checked to
 * be a tap of its window: EXECUTION_FAILED otherwise, as cpu:reference)
 * or, for averages, its share to every counted tap inside x.
 */
#include <math.h>
#include <stdlib.h>

#include <cdnn_sdk/numeric.h>

#include "cpu_engine.h"
#include "fast_util.h"
#include "pool_geometry.h"

#define POOL_MAX_THREADS 256

typedef struct pool_table {
    int64_t *first, *last, *count; /* per output position */
} pool_table_t;

/* The forward's tensors x, y and indices; a backward's x, dy (as y: it has
 * the forward's y shape), indices (an input) and dx. */
typedef struct pool_context {
    cdnn_tensor_view_t x, y, idx, dx;
    int64_t x_uid, y_uid, idx_uid, dx_uid; /* idx_uid: CDNN_UID_NONE when absent */
    int backward;
    int narrow;    /* f16 or bf16 tensors: widened into f32 workspace buffers */
    size_t ws_x, ws_y, ws_dx; /* their offsets (x, y or dy, dx; same strides) */
    cpu_ws_layout_t ws;
    int backward_cl; /* a backward on channels-last x, dy, dx (and indices) */
    cdnn_pooling_attr_t attr;
    int sd, channels_last;
    int32_t threads;
    pool_dim_t d[3];
    pool_table_t t[3];
    int64_t plane[3]; /* x's spatial plane, row-major: the indices' strides */
    int64_t out_points;
} pool_context_t;

static cdnn_status_t pool_applicable(const cdnn_graph_view_t *g)
{
    if (g->node_count != 1 || (g->nodes[0].op != CDNN_OP_POOLING_FWD &&
                               g->nodes[0].op != CDNN_OP_POOLING_BWD))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph is not one pooling node");
    const cdnn_tensor_view_t *x = &g->tensors[g->nodes[0].inputs[0]]; /* x or dy */
    if ((x->type != CDNN_DATA_TYPE_F32 && x->type != CDNN_DATA_TYPE_F16 &&
         x->type != CDNN_DATA_TYPE_BF16) || x->is_scalar)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; this engine takes f32, "
                        "f16 and bf16 tensors in memory", x->name,
                        cdnn_data_type_name(x->type));
    return CDNN_STATUS_SUCCESS;
}

/* Elements a strided view spans (its buffer's length, gaps included). */
static int64_t span_of(const cdnn_tensor_view_t *t)
{
    int64_t span = 1;
    for (int32_t d = 0; d < t->rank; d++)
        span += (t->dims[d] - 1) * t->strides[d];
    return span;
}

/* Every logical element of t between its f16/bf16 memory and an f32
 * buffer with the same strides (gaps neither read nor written), a row at
 * a time along the dim of the smallest stride (memory order: W for NCHW,
 * C for NHWC), rows split over threads. */
typedef struct convert_job {
    const cdnn_tensor_view_t *t;
    uint16_t *narrow;
    float *wide;
    int widen;
    int32_t inner;
} convert_job_t;

static void convert_rows(void *arg, int64_t begin, int64_t end)
{
    const convert_job_t *job = arg;
    const cdnn_tensor_view_t *t = job->t;
    int32_t inner = job->inner;
    int64_t n = t->dims[inner], s = t->strides[inner];
    int half = t->type == CDNN_DATA_TYPE_F16;
    for (int64_t row = begin; row < end; row++) {
        int64_t at = 0, rest = row;
        for (int32_t d = t->rank - 1; d >= 0; d--) {
            if (d == inner)
                continue;
            at += (rest % t->dims[d]) * t->strides[d];
            rest /= t->dims[d];
        }
        uint16_t *h = job->narrow + at;
        float *w = job->wide + at;
        if (job->widen && half)
            for (int64_t k = 0; k < n; k++)
                w[k * s] = cdnn_half_to_float(h[k * s]);
        else if (job->widen)
            for (int64_t k = 0; k < n; k++)
                w[k * s] = cdnn_bf16_to_float(h[k * s]);
        else if (half)
            for (int64_t k = 0; k < n; k++)
                h[k * s] = cdnn_float_to_half(w[k * s]);
        else
            for (int64_t k = 0; k < n; k++)
                h[k * s] = cdnn_float_to_bf16(w[k * s]);
    }
}

static void convert_view(const pool_context_t *ctx, const cdnn_tensor_view_t *t,
                         void *narrow, float *wide, int widen)
{
    int32_t inner = t->rank - 1;
    for (int32_t d = 0; d < t->rank; d++)
        if (t->dims[d] > 1 && t->strides[d] < t->strides[inner])
            inner = d;
    convert_job_t job = {t, narrow, wide, widen, inner};
    int64_t rows = cpu_tensor_elements(t) / t->dims[inner];
    cpu_parallel_for(cpu_threads_for(ctx->threads, rows, 64), rows, convert_rows, &job);
}

static void pool_destroy(void *context)
{
    pool_context_t *ctx = context;
    if (!ctx)
        return;
    for (int i = 0; i < 3; i++) {
        free(ctx->t[i].first);
        free(ctx->t[i].last);
        free(ctx->t[i].count);
    }
    free(ctx);
}

static int make_table(pool_context_t *ctx, int i)
{
    const pool_dim_t *d = &ctx->d[i];
    pool_table_t *t = &ctx->t[i];
    size_t n = (size_t)d->out;
    t->first = malloc(n * sizeof *t->first);
    t->last = malloc(n * sizeof *t->last);
    t->count = malloc(n * sizeof *t->count);
    if (!t->first || !t->last || !t->count)
        return 0;
    for (int64_t o = 0; o < d->out; o++) {
        pool_taps(d, o, &t->first[o], &t->last[o]);
        t->count[o] = pool_count(d, o, ctx->attr.count_include_pad);
    }
    return 1;
}

/* A channels-last backward's unit: one n and a block of this many
 * channels (blocks of one n touch disjoint parts of dx). */
#define POOL_BWD_BLOCK 64

static int64_t bwd_blocks(const pool_context_t *ctx)
{
    return (ctx->x.dims[1] + POOL_BWD_BLOCK - 1) / POOL_BWD_BLOCK;
}

static cdnn_status_t pool_create(const cdnn_device_view_t *device,
                                 const cdnn_graph_view_t *g,
                                 const cdnn_knob_value_t *knobs, int32_t knob_count,
                                 void **context)
{
    cdnn_status_t st = pool_applicable(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    pool_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    const cdnn_node_view_t *n = &g->nodes[0];
    ctx->backward = n->op == CDNN_OP_POOLING_BWD;
    ctx->x = g->tensors[n->inputs[ctx->backward ? 1 : 0]];
    ctx->y = g->tensors[ctx->backward ? n->inputs[0] : n->outputs[0]];
    ctx->idx_uid = ctx->dx_uid = CDNN_UID_NONE;
    int32_t idx = ctx->backward ? n->inputs[2] : n->outputs[1];
    if (idx >= 0) {
        ctx->idx = g->tensors[idx];
        ctx->idx_uid = ctx->idx.uid;
    }
    if (ctx->backward) {
        ctx->dx = g->tensors[n->outputs[0]];
        ctx->dx_uid = ctx->dx.uid;
    }
    /* the view's strings go away */
    ctx->x.name = ctx->y.name = ctx->idx.name = ctx->dx.name = NULL;
    ctx->x_uid = ctx->x.uid;
    ctx->y_uid = ctx->y.uid;
    ctx->attr = n->attr.pooling;
    ctx->sd = ctx->attr.spatial_dims;
    int64_t stride = 1;
    ctx->out_points = 1;
    for (int i = ctx->sd - 1; i >= 0; i--) {
        ctx->d[i] = pool_dim_of(&ctx->attr, i, &ctx->x, &ctx->y);
        ctx->plane[i] = stride;
        stride *= ctx->d[i].n;
        ctx->out_points *= ctx->d[i].out;
        if (!make_table(ctx, i)) {
            pool_destroy(ctx);
            return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
        }
    }
    ctx->channels_last = !ctx->backward && ctx->x.strides[1] == 1 &&
                         ctx->y.strides[1] == 1 &&
                         ctx->x.dims[1] > 1 &&
                         (ctx->idx_uid == CDNN_UID_NONE || ctx->idx.strides[1] == 1);
    ctx->backward_cl = ctx->backward && ctx->x.strides[1] == 1 && ctx->y.strides[1] == 1 &&
                       ctx->dx.strides[1] == 1 && ctx->x.dims[1] > 1 &&
                       (ctx->idx_uid == CDNN_UID_NONE || ctx->idx.strides[1] == 1);
    int64_t units = ctx->channels_last ? ctx->x.dims[0] * ctx->out_points
                    : ctx->backward_cl ? ctx->x.dims[0] * bwd_blocks(ctx)
                                       : ctx->x.dims[0] * ctx->x.dims[1];
    int64_t work = ctx->channels_last ? ctx->x.dims[1]
                   : ctx->backward_cl ? ctx->out_points * POOL_BWD_BLOCK
                                      : ctx->out_points;
    int32_t threads = (int32_t)cpu_knob(knobs, knob_count, "threads", device->cpu_threads);
    ctx->threads = cpu_threads_for(threads, units, 1 + (1 << 14) / (work > 0 ? work : 1));
    if (ctx->threads > POOL_MAX_THREADS)
        ctx->threads = POOL_MAX_THREADS;
    ctx->narrow = ctx->x.type != CDNN_DATA_TYPE_F32;
    if (ctx->narrow) {
        ctx->ws_x = cpu_ws_reserve(&ctx->ws, (size_t)span_of(&ctx->x) * sizeof(float));
        ctx->ws_y = cpu_ws_reserve(&ctx->ws, (size_t)span_of(&ctx->y) * sizeof(float));
        if (ctx->backward)
            ctx->ws_dx = cpu_ws_reserve(&ctx->ws,
                                        (size_t)span_of(&ctx->dx) * sizeof(float));
    }
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t pool_workspace_size(void *context, size_t *bytes)
{
    const pool_context_t *ctx = context;
    *bytes = ctx->ws.bytes;
    return CDNN_STATUS_SUCCESS;
}

typedef struct pool_job {
    const pool_context_t *ctx;
    const float *x;
    float *y; /* a backward's dy */
    void *idx;
    float *dx;
    int bad; /* a backward's index outside its window: set once */
    int64_t bad_value, bad_at[3], bad_n, bad_c;
} pool_job_t;

/* Output position p (row-major over the spatial out dims) as coordinates. */
static void out_coords(const pool_context_t *ctx, int64_t p, int64_t *o)
{
    for (int i = ctx->sd - 1; i >= 0; i--) {
        o[i] = p % ctx->d[i].out;
        p /= ctx->d[i].out;
    }
}

static void store_index(const pool_context_t *ctx, void *idx, int64_t at, int64_t v)
{
    if (ctx->idx.type == CDNN_DATA_TYPE_I32)
        ((int32_t *)idx)[at] = (int32_t)v;
    else
        ((int64_t *)idx)[at] = v;
}

/* The window of output o: each dim's first and last tap inside x (as x
 * coordinates; validation saw that every window has one), and the
 * average's divisor. */
static void window_of(const pool_context_t *ctx, const int64_t *o, int64_t *lo,
                      int64_t *hi, double *count)
{
    *count = 1;
    for (int i = 0; i < 3; i++) {
        lo[i] = 0;
        hi[i] = 0;
    }
    for (int i = 0; i < ctx->sd; i++) {
        const pool_dim_t *d = &ctx->d[i];
        int64_t start = o[i] * d->stride - d->pre;
        lo[i] = start + ctx->t[i].first[o[i]] * d->dilation;
        hi[i] = start + ctx->t[i].last[o[i]] * d->dilation;
        *count *= (double)ctx->t[i].count[o[i]];
    }
}

/* The first tap's x coordinate and the tap count of output o in dim i
 * (dims past the spatial ones: one tap at 0). */
static void dim_window(const pool_context_t *ctx, int i, int64_t o, int64_t *lo,
                       int64_t *taps)
{
    if (i >= ctx->sd) {
        *lo = 0;
        *taps = 1;
        return;
    }
    const pool_dim_t *d = &ctx->d[i];
    *lo = o * d->stride - d->pre + ctx->t[i].first[o] * d->dilation;
    *taps = ctx->t[i].last[o] - ctx->t[i].first[o] + 1;
}

/* One plane's outputs, x and y at its (n, c) origin, walked in nested
 * loops over the (up to 3) spatial dims; unused dims have one position. */
static void pool_plane(const pool_job_t *job, const float *xp, float *yp, void *ip,
                       int64_t ibase)
{
    const pool_context_t *ctx = job->ctx;
    int64_t out[3] = {1, 1, 1}, xs[3] = {0, 0, 0}, ys[3] = {0, 0, 0}, is[3] = {0, 0, 0},
            dil[3] = {1, 1, 1}, plane[3] = {0, 0, 0};
    for (int i = 0; i < ctx->sd; i++) {
        out[i] = ctx->d[i].out;
        xs[i] = ctx->x.strides[2 + i];
        ys[i] = ctx->y.strides[2 + i];
        is[i] = ip ? ctx->idx.strides[2 + i] : 0;
        dil[i] = ctx->d[i].dilation;
        plane[i] = ctx->plane[i];
    }
    int is_max = ctx->attr.mode == CDNN_POOLING_MAX;
    for (int64_t o0 = 0; o0 < out[0]; o0++) {
        int64_t lo0, n0;
        dim_window(ctx, 0, o0, &lo0, &n0);
        for (int64_t o1 = 0; o1 < out[1]; o1++) {
            int64_t lo1, n1;
            dim_window(ctx, 1, o1, &lo1, &n1);
            for (int64_t o2 = 0; o2 < out[2]; o2++) {
                int64_t lo2, n2;
                dim_window(ctx, 2, o2, &lo2, &n2);
                const float *w = xp + lo0 * xs[0] + lo1 * xs[1] + lo2 * xs[2];
                int64_t s0 = dil[0] * xs[0], s1 = dil[1] * xs[1], s2 = dil[2] * xs[2];
                int64_t yoff = o0 * ys[0] + o1 * ys[1] + o2 * ys[2];
                if (!is_max) {
                    double sum = 0;
                    for (int64_t a = 0; a < n0; a++)
                        for (int64_t b = 0; b < n1; b++)
                            for (int64_t e = 0; e < n2; e++)
                                sum += w[a * s0 + b * s1 + e * s2];
                    double count = (double)ctx->t[0].count[o0] *
                                   (ctx->sd > 1 ? (double)ctx->t[1].count[o1] : 1) *
                                   (ctx->sd > 2 ? (double)ctx->t[2].count[o2] : 1);
                    yp[yoff] = (float)(sum / count);
                    continue;
                }
                float best = w[0];
                int64_t ba = 0, bb = 0, be = 0;
                for (int64_t a = 0; a < n0; a++)
                    for (int64_t b = 0; b < n1; b++)
                        for (int64_t e = 0; e < n2; e++) {
                            float v = w[a * s0 + b * s1 + e * s2];
                            if (v > best || v != v) { /* first max, last NaN */
                                best = v;
                                ba = a;
                                bb = b;
                                be = e;
                            }
                        }
                yp[yoff] = best;
                if (ip)
                    store_index(ctx, ip, ibase + o0 * is[0] + o1 * is[1] + o2 * is[2],
                                (lo0 + ba * dil[0]) * plane[0] +
                                    (lo1 + bb * dil[1]) * plane[1] +
                                    (lo2 + be * dil[2]) * plane[2]);
            }
        }
    }
}

/* A plane whose last spatial dim is contiguous in x, without indices: its
 * windows are boxes, so each output row first reduces the window's rows of
 * x into one row (unit stride, vectorised), then slides the window along
 * it.  Max with NaN winning is the same whatever order it combines in;
 * averages sum in float.  Rows up to POOL_ROW_MAX elements (else 0: the
 * caller walks the plane tap by tap). */
#define POOL_ROW_MAX 4096

static float combine(int is_max, float acc, float v)
{
    return is_max ? (v > acc || v != v ? v : acc) : acc + v;
}

static void reduce_rows(const pool_job_t *job, const float *xp, const int64_t *lo,
                        const int64_t *taps, float *row)
{
    const pool_context_t *ctx = job->ctx;
    int last = ctx->sd - 1, is_max = ctx->attr.mode == CDNN_POOLING_MAX;
    int64_t n = ctx->d[last].n, s0 = 0, s1 = 0;
    if (last > 0)
        s0 = ctx->d[0].dilation * ctx->x.strides[2];
    if (last > 1)
        s1 = ctx->d[1].dilation * ctx->x.strides[3];
    const float *base = xp + (last > 0 ? lo[0] * ctx->x.strides[2] : 0) +
                        (last > 1 ? lo[1] * ctx->x.strides[3] : 0);
    for (int64_t w = 0; w < n; w++)
        row[w] = base[w];
    for (int64_t a = 0; a < taps[0]; a++)
        for (int64_t b = a == 0; b < taps[1]; b++) {
            const float *r = base + a * s0 + b * s1;
            if (is_max)
                for (int64_t w = 0; w < n; w++) {
                    float v = r[w];
                    row[w] = v > row[w] || v != v ? v : row[w];
                }
            else
                for (int64_t w = 0; w < n; w++)
                    row[w] += r[w];
        }
}

static int pool_plane_rows(const pool_job_t *job, const float *xp, float *yp)
{
    const pool_context_t *ctx = job->ctx;
    int last = ctx->sd - 1, is_max = ctx->attr.mode == CDNN_POOLING_MAX;
    const pool_dim_t *dl = &ctx->d[last];
    if (job->idx || ctx->x.strides[2 + last] != 1 || dl->n > POOL_ROW_MAX)
        return 0;
    float row[POOL_ROW_MAX];
    int64_t out0 = last > 0 ? ctx->d[0].out : 1, out1 = last > 1 ? ctx->d[1].out : 1;
    int64_t ys0 = last > 0 ? ctx->y.strides[2] : 0, ys1 = last > 1 ? ctx->y.strides[3] : 0;
    int64_t ysl = ctx->y.strides[2 + last];
    for (int64_t o0 = 0; o0 < out0; o0++)
        for (int64_t o1 = 0; o1 < out1; o1++) {
            int64_t lo[2] = {0, 0}, taps[2] = {1, 1};
            double count = 1;
            if (last > 0) {
                dim_window(ctx, 0, o0, &lo[0], &taps[0]);
                count *= (double)ctx->t[0].count[o0];
            }
            if (last > 1) {
                dim_window(ctx, 1, o1, &lo[1], &taps[1]);
                count *= (double)ctx->t[1].count[o1];
            }
            const float *r = xp;
            if (last > 0) {
                reduce_rows(job, xp, lo, taps, row);
                r = row;
            }
            float *y = yp + o0 * ys0 + o1 * ys1;
            for (int64_t o = 0; o < dl->out; o++) {
                int64_t l, n;
                dim_window(ctx, last, o, &l, &n);
                float acc = r[l];
                for (int64_t e = 1; e < n; e++)
                    acc = combine(is_max, acc, r[l + e * dl->dilation]);
                y[o * ysl] = is_max ? acc
                                    : (float)(acc / (count * (double)ctx->t[last].count[o]));
            }
        }
    return 1;
}

/* One (n, c) plane per unit: any strides. */
static void pool_planes(void *arg, int64_t begin, int64_t end)
{
    const pool_job_t *job = arg;
    const pool_context_t *ctx = job->ctx;
    const int64_t *xs = ctx->x.strides, *ys = ctx->y.strides;
    for (int64_t u = begin; u < end; u++) {
        int64_t nn = u / ctx->x.dims[1], c = u % ctx->x.dims[1];
        int64_t ibase = job->idx ? nn * ctx->idx.strides[0] + c * ctx->idx.strides[1] : 0;
        const float *xp = job->x + nn * xs[0] + c * xs[1];
        float *yp = job->y + nn * ys[0] + c * ys[1];
        if (!pool_plane_rows(job, xp, yp))
            pool_plane(job, xp, yp, job->idx, ibase);
    }
}

/* Channels-last: one (n, output position) per unit, channels innermost,
 * in blocks of POOL_BLOCK channels held in registers and on the stack. */
#define POOL_BLOCK 256

static void pool_block_cl(const pool_job_t *job, int64_t nn, const int64_t *lo,
                          const int64_t *hi, int64_t c0, int64_t cn, float *acc,
                          int64_t *at)
{
    const pool_context_t *ctx = job->ctx;
    const int64_t *xs = ctx->x.strides;
    int is_max = ctx->attr.mode == CDNN_POOLING_MAX;
    int64_t dil[3] = {1, 1, 1};
    for (int i = 0; i < ctx->sd; i++)
        dil[i] = ctx->d[i].dilation;
    int first = 1;
    for (int64_t a = lo[0]; a <= hi[0]; a += dil[0])
        for (int64_t b = lo[1]; b <= hi[1]; b += dil[1])
            for (int64_t e = lo[2]; e <= hi[2]; e += dil[2]) {
                const float *xp = job->x + nn * xs[0] + c0 + a * xs[2] +
                                  (ctx->sd > 1 ? b * xs[3] : 0) +
                                  (ctx->sd > 2 ? e * xs[4] : 0);
                int64_t pos = a * ctx->plane[0] + (ctx->sd > 1 ? b * ctx->plane[1] : 0) +
                              (ctx->sd > 2 ? e * ctx->plane[2] : 0);
                if (first) {
                    for (int64_t c = 0; c < cn; c++)
                        acc[c] = xp[c];
                    for (int64_t c = 0; at && c < cn; c++)
                        at[c] = pos;
                    first = 0;
                } else if (!is_max) {
                    for (int64_t c = 0; c < cn; c++)
                        acc[c] += xp[c];
                } else if (at) {
                    for (int64_t c = 0; c < cn; c++)
                        if (xp[c] > acc[c] || xp[c] != xp[c]) {
                            acc[c] = xp[c];
                            at[c] = pos;
                        }
                } else {
                    for (int64_t c = 0; c < cn; c++) {
                        float v = xp[c];
                        acc[c] = v > acc[c] || v != v ? v : acc[c];
                    }
                }
            }
}

static void pool_rows_cl(void *arg, int64_t begin, int64_t end)
{
    const pool_job_t *job = arg;
    const pool_context_t *ctx = job->ctx;
    const int64_t *ys = ctx->y.strides, channels = ctx->x.dims[1];
    int is_max = ctx->attr.mode == CDNN_POOLING_MAX;
    float acc[POOL_BLOCK];
    int64_t at[POOL_BLOCK];
    for (int64_t u = begin; u < end; u++) {
        int64_t nn = u / ctx->out_points, o[3] = {0, 0, 0}, lo[3], hi[3];
        double count;
        out_coords(ctx, u % ctx->out_points, o);
        window_of(ctx, o, lo, hi, &count);
        int64_t yoff = nn * ys[0], ioff = job->idx ? nn * ctx->idx.strides[0] : 0;
        for (int i = 0; i < ctx->sd; i++) {
            yoff += o[i] * ys[2 + i];
            if (job->idx)
                ioff += o[i] * ctx->idx.strides[2 + i];
        }
        for (int64_t c0 = 0; c0 < channels; c0 += POOL_BLOCK) {
            int64_t cn = channels - c0 < POOL_BLOCK ? channels - c0 : POOL_BLOCK;
            pool_block_cl(job, nn, lo, hi, c0, cn, acc, job->idx ? at : NULL);
            for (int64_t c = 0; c < cn; c++)
                job->y[yoff + c0 + c] = is_max ? acc[c] : (float)(acc[c] / count);
            for (int64_t c = 0; job->idx && c < cn; c++)
                store_index(ctx, job->idx, ioff + c0 + c, at[c]);
        }
    }
}

/* ---- backward ---- */

static int64_t load_index(const pool_context_t *ctx, const void *idx, int64_t at)
{
    return ctx->idx.type == CDNN_DATA_TYPE_I32 ? ((const int32_t *)idx)[at]
                                               : ((const int64_t *)idx)[at];
}

/* The offset (strides gs) in dx's plane of index v, or -1 where v is not a
 * tap of output o's window inside x. */
static int64_t index_offset(const pool_context_t *ctx, const int64_t *o, int64_t v,
                            const int64_t *gs)
{
    if (v < 0 || v >= ctx->plane[0] * ctx->d[0].n)
        return -1;
    int64_t offset = 0;
    for (int i = 0; i < ctx->sd; i++) {
        const pool_dim_t *d = &ctx->d[i];
        int64_t pos = v / ctx->plane[i], off = pos - (o[i] * d->stride - d->pre);
        v %= ctx->plane[i];
        if (off < 0 || off % d->dilation || off / d->dilation >= d->window)
            return -1;
        offset += pos * gs[i];
    }
    return offset;
}

static void report_bad_index(pool_job_t *job, int64_t nn, int64_t c, const int64_t *o,
                             int64_t v)
{
    if (__atomic_exchange_n(&job->bad, 1, __ATOMIC_ACQ_REL))
        return; /* another thread's is reported */
    job->bad_value = v;
    job->bad_n = nn;
    job->bad_c = c;
    for (int i = 0; i < 3; i++)
        job->bad_at[i] = o[i];
}

/* The tap (a, b, e) of the window at w (strides s) holding its maximum. */
static void window_argmax(const float *w, const int64_t *taps, const int64_t *s,
                          int64_t *best_tap)
{
    float best = w[0];
    best_tap[0] = best_tap[1] = best_tap[2] = 0;
    for (int64_t a = 0; a < taps[0]; a++)
        for (int64_t b = 0; b < taps[1]; b++)
            for (int64_t e = 0; e < taps[2]; e++) {
                float v = w[a * s[0] + b * s[1] + e * s[2]];
                if (v > best || v != v) { /* first max, last NaN */
                    best = v;
                    best_tap[0] = a;
                    best_tap[1] = b;
                    best_tap[2] = e;
                }
            }
}

/* A plane's geometry for the backward: sizes, strides and dilations of
 * its (up to 3) spatial dims, unused ones of size 1. */
typedef struct bwd_plane {
    int64_t out[3], n[3], xs[3], gs[3], ys[3], is[3], dil[3];
} bwd_plane_t;

static bwd_plane_t bwd_plane_of(const pool_job_t *job)
{
    const pool_context_t *ctx = job->ctx;
    bwd_plane_t p = {{1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0},
                     {1, 1, 1}};
    for (int i = 0; i < ctx->sd; i++) {
        p.out[i] = ctx->d[i].out;
        p.n[i] = ctx->d[i].n;
        p.xs[i] = ctx->x.strides[2 + i];
        p.gs[i] = ctx->dx.strides[2 + i];
        p.ys[i] = ctx->y.strides[2 + i];
        p.is[i] = job->idx ? ctx->idx.strides[2 + i] : 0;
        p.dil[i] = ctx->d[i].dilation;
    }
    return p;
}

static void pool_plane_bwd(pool_job_t *job, int64_t nn, int64_t c)
{
    const pool_context_t *ctx = job->ctx;
    bwd_plane_t p = bwd_plane_of(job);
    const float *xp = job->x + nn * ctx->x.strides[0] + c * ctx->x.strides[1];
    const float *dy = job->y + nn * ctx->y.strides[0] + c * ctx->y.strides[1];
    float *dx = job->dx + nn * ctx->dx.strides[0] + c * ctx->dx.strides[1];
    int64_t ibase = job->idx ? nn * ctx->idx.strides[0] + c * ctx->idx.strides[1] : 0;
    for (int64_t a = 0; a < p.n[0]; a++)
        for (int64_t b = 0; b < p.n[1]; b++)
            for (int64_t e = 0; e < p.n[2]; e++)
                dx[a * p.gs[0] + b * p.gs[1] + e * p.gs[2]] = 0;
    int is_max = ctx->attr.mode == CDNN_POOLING_MAX;
    int64_t s[3] = {p.dil[0] * p.xs[0], p.dil[1] * p.xs[1], p.dil[2] * p.xs[2]};
    int64_t sg[3] = {p.dil[0] * p.gs[0], p.dil[1] * p.gs[1], p.dil[2] * p.gs[2]};
    int64_t o[3];
    for (o[0] = 0; o[0] < p.out[0]; o[0]++)
        for (o[1] = 0; o[1] < p.out[1]; o[1]++)
            for (o[2] = 0; o[2] < p.out[2]; o[2]++) {
                int64_t lo[3], taps[3];
                for (int i = 0; i < 3; i++)
                    dim_window(ctx, i, o[i], &lo[i], &taps[i]);
                float g = dy[o[0] * p.ys[0] + o[1] * p.ys[1] + o[2] * p.ys[2]];
                float *w = dx + lo[0] * p.gs[0] + lo[1] * p.gs[1] + lo[2] * p.gs[2];
                if (!is_max) {
                    double count = 1;
                    for (int i = 0; i < ctx->sd; i++)
                        count *= (double)ctx->t[i].count[o[i]];
                    float share = (float)(g / count);
                    for (int64_t a = 0; a < taps[0]; a++)
                        for (int64_t b = 0; b < taps[1]; b++)
                            for (int64_t e = 0; e < taps[2]; e++)
                                w[a * sg[0] + b * sg[1] + e * sg[2]] += share;
                } else if (job->idx) {
                    int64_t v = load_index(ctx, job->idx, ibase + o[0] * p.is[0] +
                                                              o[1] * p.is[1] + o[2] * p.is[2]);
                    int64_t off = index_offset(ctx, o, v, p.gs);
                    if (off < 0) {
                        report_bad_index(job, nn, c, o, v);
                        return;
                    }
                    dx[off] += g;
                } else {
                    int64_t t[3];
                    window_argmax(xp + lo[0] * p.xs[0] + lo[1] * p.xs[1] + lo[2] * p.xs[2],
                                  taps, s, t);
                    w[t[0] * sg[0] + t[1] * sg[1] + t[2] * sg[2]] += g;
                }
            }
}

/* Channels-last: one n and channels c0 .. c0 + cn - 1, the channel loop
 * innermost (unit stride in x, dy and dx). */
static void pool_block_bwd_cl(pool_job_t *job, int64_t nn, int64_t c0, int64_t cn)
{
    const pool_context_t *ctx = job->ctx;
    bwd_plane_t p = bwd_plane_of(job);
    const float *xb = job->x + nn * ctx->x.strides[0] + c0;
    const float *dyb = job->y + nn * ctx->y.strides[0] + c0;
    float *dxb = job->dx + nn * ctx->dx.strides[0] + c0;
    int64_t ibase = job->idx ? nn * ctx->idx.strides[0] + c0 : 0;
    for (int64_t a = 0; a < p.n[0]; a++)
        for (int64_t b = 0; b < p.n[1]; b++)
            for (int64_t e = 0; e < p.n[2]; e++) {
                float *r = dxb + a * p.gs[0] + b * p.gs[1] + e * p.gs[2];
                for (int64_t c = 0; c < cn; c++)
                    r[c] = 0;
            }
    int is_max = ctx->attr.mode == CDNN_POOLING_MAX;
    float best[POOL_BWD_BLOCK], share[POOL_BWD_BLOCK];
    int64_t at[POOL_BWD_BLOCK], o[3];
    for (o[0] = 0; o[0] < p.out[0]; o[0]++)
        for (o[1] = 0; o[1] < p.out[1]; o[1]++)
            for (o[2] = 0; o[2] < p.out[2]; o[2]++) {
                int64_t lo[3], taps[3];
                for (int i = 0; i < 3; i++)
                    dim_window(ctx, i, o[i], &lo[i], &taps[i]);
                const float *g = dyb + o[0] * p.ys[0] + o[1] * p.ys[1] + o[2] * p.ys[2];
                if (!is_max) {
                    double count = 1;
                    for (int i = 0; i < ctx->sd; i++)
                        count *= (double)ctx->t[i].count[o[i]];
                    for (int64_t c = 0; c < cn; c++)
                        share[c] = (float)(g[c] / count);
                } else if (job->idx) {
                    int64_t ib = ibase + o[0] * p.is[0] + o[1] * p.is[1] + o[2] * p.is[2];
                    for (int64_t c = 0; c < cn; c++) {
                        int64_t v = load_index(ctx, job->idx, ib + c);
                        int64_t off = index_offset(ctx, o, v, p.gs);
                        if (off < 0) {
                            report_bad_index(job, nn, c0 + c, o, v);
                            return;
                        }
                        dxb[off + c] += g[c];
                    }
                    continue;
                }
                int first = 1;
                for (int64_t a = 0; a < taps[0]; a++)
                    for (int64_t b = 0; b < taps[1]; b++)
                        for (int64_t e = 0; e < taps[2]; e++) {
                            int64_t pa = lo[0] + a * p.dil[0], pb = lo[1] + b * p.dil[1],
                                    pe = lo[2] + e * p.dil[2];
                            int64_t dxo = pa * p.gs[0] + pb * p.gs[1] + pe * p.gs[2];
                            if (!is_max) {
                                float *r = dxb + dxo;
                                for (int64_t c = 0; c < cn; c++)
                                    r[c] += share[c];
                                continue;
                            }
                            const float *r = xb + pa * p.xs[0] + pb * p.xs[1] + pe * p.xs[2];
                            for (int64_t c = 0; c < cn; c++)
                                if (first || r[c] > best[c] || r[c] != r[c]) {
                                    best[c] = r[c]; /* first max, last NaN */
                                    at[c] = dxo;
                                }
                            first = 0;
                        }
                for (int64_t c = 0; is_max && c < cn; c++)
                    dxb[at[c] + c] += g[c];
            }
}

static void pool_blocks_bwd_cl(void *arg, int64_t begin, int64_t end)
{
    pool_job_t *job = arg;
    int64_t blocks = bwd_blocks(job->ctx), channels = job->ctx->x.dims[1];
    for (int64_t u = begin; u < end; u++) {
        int64_t c0 = (u % blocks) * POOL_BWD_BLOCK;
        int64_t cn = channels - c0 < POOL_BWD_BLOCK ? channels - c0 : POOL_BWD_BLOCK;
        pool_block_bwd_cl(job, u / blocks, c0, cn);
    }
}

static void pool_planes_bwd(void *arg, int64_t begin, int64_t end)
{
    pool_job_t *job = arg;
    int64_t channels = job->ctx->x.dims[1];
    for (int64_t u = begin; u < end; u++)
        pool_plane_bwd(job, u / channels, u % channels);
}

static void *pointer_of(const cdnn_exec_args_t *args, int64_t uid)
{
    for (int32_t i = 0; i < args->count; i++)
        if (args->uids[i] == uid)
            return args->ptrs[i];
    return NULL;
}

/* The f32 work on f32 buffers (the caller's, or widened copies). */
static cdnn_status_t pool_run(const pool_context_t *ctx, pool_job_t job)
{
    if (ctx->backward) {
        if (ctx->backward_cl)
            cpu_parallel_for(ctx->threads, ctx->x.dims[0] * bwd_blocks(ctx),
                             pool_blocks_bwd_cl, &job);
        else
            cpu_parallel_for(ctx->threads, ctx->x.dims[0] * ctx->x.dims[1],
                             pool_planes_bwd, &job);
        if (job.bad)
            return sdk_fail(CDNN_STATUS_EXECUTION_FAILED,
                            "pooling backward: indices[%lld, %lld] at spatial output "
                            "(%lld, %lld, %lld) is %lld, which is not a position of its "
                            "window in x's spatial plane", (long long)job.bad_n,
                            (long long)job.bad_c, (long long)job.bad_at[0],
                            (long long)job.bad_at[1], (long long)job.bad_at[2],
                            (long long)job.bad_value);
        return CDNN_STATUS_SUCCESS;
    }
    if (ctx->channels_last)
        cpu_parallel_for(ctx->threads, ctx->x.dims[0] * ctx->out_points, pool_rows_cl,
                         &job);
    else
        cpu_parallel_for(ctx->threads, ctx->x.dims[0] * ctx->x.dims[1], pool_planes,
                         &job);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t pool_execute(void *context, const cdnn_exec_args_t *args)
{
    const pool_context_t *ctx = context;
    pool_job_t job = {ctx, pointer_of(args, ctx->x_uid), pointer_of(args, ctx->y_uid),
                      ctx->idx_uid == CDNN_UID_NONE ? NULL : pointer_of(args, ctx->idx_uid),
                      ctx->backward ? pointer_of(args, ctx->dx_uid) : NULL, 0, 0, {0}, 0, 0};
    if (!job.x || !job.y || (ctx->idx_uid != CDNN_UID_NONE && !job.idx) ||
        (ctx->backward && !job.dx))
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "a pooling tensor has no pointer in the "
                        "variant pack");
    if (!ctx->narrow)
        return pool_run(ctx, job);
    if (!args->workspace)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "the plan needs %zu bytes of workspace "
                        "but none was given", ctx->ws.bytes);
    /* f16/bf16: widen the inputs, run in f32, narrow the float output (f16
     * and bf16 hold every value the f32 work makes of theirs but the
     * averages' and gradients' sums, rounded once here). */
    void *x = (void *)job.x, *y = job.y, *dx = job.dx;
    float *xf = cpu_ws_at(args->workspace, ctx->ws_x);
    float *yf = cpu_ws_at(args->workspace, ctx->ws_y);
    float *dxf = ctx->backward ? cpu_ws_at(args->workspace, ctx->ws_dx) : NULL;
    convert_view(ctx, &ctx->x, x, xf, 1);
    if (ctx->backward)
        convert_view(ctx, &ctx->y, y, yf, 1); /* dy */
    job.x = xf;
    job.y = yf;
    job.dx = dxf;
    cdnn_status_t st = pool_run(ctx, job);
    if (st == CDNN_STATUS_SUCCESS)
        convert_view(ctx, ctx->backward ? &ctx->dx : &ctx->y, ctx->backward ? dx : y,
                     ctx->backward ? dxf : yf, 0);
    return st;
}

const cpu_engine_t cpu_pool_engine = {
    .applicable = pool_applicable,
    .create = pool_create,
    .workspace_size = pool_workspace_size,
    .execute = pool_execute,
    .destroy = pool_destroy,
};
