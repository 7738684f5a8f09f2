/*
 * fast_index.c -- the cpu:index engine: a graph of one argmax, argmin,
 * top-k, gather or gather-elements node, any element type, work split
 * over threads.
 *
 * Argmax and argmin scan blocks of up to ARG_BLOCK neighbouring rows at
 * once (rows that differ only in the last dim off the axis), one axis
 * position at a time, so that a reduction along a leading axis reads x in
 * memory order instead of one cache line per element.  Each type has its
 * own loop; floats are compared as floats (f16 and bf16 widened, exactly)
 * and integers as 64-bit integers, with NumPy's rules: the first extreme
 * wins, and the first NaN is the extreme.  f32 has two faster paths: a
 * contiguous row takes a vectorised max/min pass and then a search for the
 * first position holding it, and lanes contiguous in memory are compared
 * branch-free with 32-bit positions.
 *
 * Top-k maps each element of a row to a 64-bit key whose integer order is
 * the value order (integers as they are; floats by their bits, -0 as +0,
 * NaN above +inf), negated bitwise for "largest", and selects the first k
 * (key, position) pairs in ascending order: by insertion into a sorted
 * list for small k, else by quickselect and a quicksort of the k.  Equal keys
 * are ordered by position, so the order is total and the result is the
 * reference's.  Values are copied from x by position, so they are x's
 * elements bit for bit.
 *
 * Gathers check every index first (EXECUTION_FAILED naming the first out
 * of range, as cpu:reference), then copy: a gather moves, per outer
 * coordinate and index, the run of x after the axis (one memcpy where that
 * run is contiguous in x and y); gather-elements moves element by element.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/numeric.h>

#include "cpu_engine.h"
#include "fast_util.h"

#define ARG_BLOCK 64
/* Top-k keeps a sorted list up to this k; beyond, it selects and sorts. */
#define TOPK_INSERTION_MAX 32
/* cpu_parallel_for starts at most this many (fast_util.c). */
#define INDEX_MAX_THREADS 256

typedef struct index_context {
    cdnn_op_t op;
    cdnn_tensor_view_t x, in2, out1, out2; /* in2: indices; out2: top-k's */
    int has_out2;
    int32_t axis;
    int32_t largest;
    int64_t k;
    int32_t threads;
    int64_t units;        /* what the threads split */
    size_t pair_offset;   /* top-k: threads buffers of row_len pairs */
    cpu_ws_layout_t ws;
} index_context_t;

static int is_index_op(cdnn_op_t op)
{
    return op == CDNN_OP_ARGMAX || op == CDNN_OP_ARGMIN || op == CDNN_OP_TOPK ||
           op == CDNN_OP_GATHER || op == CDNN_OP_GATHER_ELEMENTS;
}

static cdnn_status_t index_applicable(const cdnn_graph_view_t *g)
{
    if (g->node_count != 1 || !is_index_op(g->nodes[0].op))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph is not one argmax, argmin, "
                        "topk, gather or gather_elements node");
    for (int32_t i = 0; i < g->tensor_count; i++) {
        const cdnn_tensor_view_t *t = &g->tensors[i];
        if (t->is_scalar || t->is_virtual)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; this engine reads "
                            "and writes tensors in memory", t->name,
                            t->is_scalar ? "a scalar" : "virtual");
        if (cdnn_data_type_size(t->type) == 0)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' has an unknown type",
                            t->name);
    }
    return CDNN_STATUS_SUCCESS;
}

static void index_destroy(void *context)
{
    free(context);
}

/* A view the context keeps: its name points into the graph, which goes. */
static cdnn_tensor_view_t kept(const cdnn_graph_view_t *g, int32_t at)
{
    cdnn_tensor_view_t t = g->tensors[at];
    t.name = NULL;
    return t;
}

typedef struct key_pair {
    int64_t key, at;
} key_pair_t;

static cdnn_status_t index_create(const cdnn_device_view_t *device,
                                  const cdnn_graph_view_t *g,
                                  const cdnn_knob_value_t *knobs, int32_t knob_count,
                                  void **context)
{
    (void)knobs;
    (void)knob_count;
    cdnn_status_t st = index_applicable(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    index_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    const cdnn_node_view_t *n = &g->nodes[0];
    ctx->op = n->op;
    ctx->x = kept(g, n->inputs[0]);
    if (n->inputs[1] >= 0)
        ctx->in2 = kept(g, n->inputs[1]);
    ctx->out1 = kept(g, n->outputs[0]);
    ctx->has_out2 = n->outputs[1] >= 0;
    if (ctx->has_out2)
        ctx->out2 = kept(g, n->outputs[1]);
    ctx->axis = n->op == CDNN_OP_TOPK ? n->attr.topk.axis : n->attr.axis;
    ctx->largest = n->attr.topk.largest != 0;
    ctx->k = n->attr.topk.k;
    int64_t row_len = ctx->x.dims[ctx->axis], grain;
    if (n->op == CDNN_OP_GATHER_ELEMENTS) { /* rows of y's last dim */
        int64_t len = ctx->out1.dims[ctx->out1.rank - 1];
        ctx->units = cpu_tensor_elements(&ctx->out1) / len;
        grain = 1 + (1 << 16) / len;
    } else if (n->op == CDNN_OP_GATHER) { /* (outer, index): a run of inner */
        int64_t inner = 1;
        for (int32_t d = ctx->axis + 1; d < ctx->x.rank; d++)
            inner *= ctx->x.dims[d];
        ctx->units = cpu_tensor_elements(&ctx->out1) / inner;
        grain = 1 + (1 << 16) / inner;
    } else { /* rows of x along the axis */
        ctx->units = cpu_tensor_elements(&ctx->x) / row_len;
        grain = 1 + (1 << 16) / row_len;
    }
    ctx->threads = cpu_threads_for(device->cpu_threads, ctx->units, grain);
    if (ctx->threads > INDEX_MAX_THREADS)
        ctx->threads = INDEX_MAX_THREADS;
    if (n->op == CDNN_OP_TOPK)
        ctx->pair_offset = cpu_ws_reserve(
            &ctx->ws, (size_t)ctx->threads * (size_t)row_len * sizeof(key_pair_t));
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t index_workspace_size(void *context, size_t *bytes)
{
    const index_context_t *ctx = context;
    *bytes = ctx->ws.bytes;
    return CDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------
 * Shared helpers
 * ------------------------------------------------------------------------ */

/* Element offset of row r of t: r unravelled over every dim but `skip`
 * (-1: none). */
static int64_t unravel_offset(const cdnn_tensor_view_t *t, int32_t skip, int64_t r)
{
    int64_t offset = 0;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        if (d == skip)
            continue;
        offset += (r % t->dims[d]) * t->strides[d];
        r /= t->dims[d];
    }
    return offset;
}

static int64_t load_index(cdnn_data_type_t type, const char *p)
{
    if (type == CDNN_DATA_TYPE_I32) {
        int32_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void store_index(cdnn_data_type_t type, char *p, int64_t v)
{
    if (type == CDNN_DATA_TYPE_I32) {
        int32_t w = (int32_t)v;
        memcpy(p, &w, sizeof w);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

static void copy_elem(char *dst, const char *src, size_t size)
{
    switch (size) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8); break;
    }
}

static void *pointer_of(const cdnn_exec_args_t *args, int64_t uid)
{
    for (int32_t i = 0; i < args->count; i++)
        if (args->uids[i] == uid)
            return args->ptrs[i];
    return NULL;
}

/* ------------------------------------------------------------------------
 * Argmax and argmin
 * ------------------------------------------------------------------------ */

/* count rows of n elements: element i of row b at x[b * s_row + i * s_axis]
 * (in elements).  best[b] receives each row's first extreme. */
#define ARG_FLOAT_BLOCK(NAME, T, LOAD)                                          \
    static void NAME(const void *base, int64_t n, int64_t s_axis, int64_t count, \
                     int64_t s_row, int want_max, int64_t *best)                \
    {                                                                           \
        const T *x = base;                                                      \
        double value[ARG_BLOCK];                                                \
        int nan_seen[ARG_BLOCK];                                                \
        for (int64_t b = 0; b < count; b++) {                                   \
            value[b] = LOAD(x[b * s_row]);                                      \
            nan_seen[b] = value[b] != value[b];                                 \
            best[b] = 0;                                                        \
        }                                                                       \
        for (int64_t i = 1; i < n; i++) {                                       \
            const T *row = x + i * s_axis;                                      \
            for (int64_t b = 0; b < count; b++) {                               \
                double v = LOAD(row[b * s_row]);                                \
                int better = want_max ? v > value[b] : v < value[b];            \
                if (!nan_seen[b] && (better || v != v)) {                       \
                    value[b] = v;                                               \
                    best[b] = i;                                                \
                    nan_seen[b] = v != v;                                       \
                }                                                               \
            }                                                                   \
        }                                                                       \
    }

#define ARG_INT_BLOCK(NAME, T)                                                  \
    static void NAME(const void *base, int64_t n, int64_t s_axis, int64_t count, \
                     int64_t s_row, int want_max, int64_t *best)                \
    {                                                                           \
        const T *x = base;                                                      \
        int64_t value[ARG_BLOCK];                                               \
        for (int64_t b = 0; b < count; b++) {                                   \
            value[b] = (int64_t)x[b * s_row];                                   \
            best[b] = 0;                                                        \
        }                                                                       \
        for (int64_t i = 1; i < n; i++) {                                       \
            const T *row = x + i * s_axis;                                      \
            for (int64_t b = 0; b < count; b++) {                               \
                int64_t v = (int64_t)row[b * s_row];                            \
                if (want_max ? v > value[b] : v < value[b]) {                   \
                    value[b] = v;                                               \
                    best[b] = i;                                                \
                }                                                               \
            }                                                                   \
        }                                                                       \
    }

#define AS_DOUBLE(v) ((double)(v))
#define HALF(v) ((double)cdnn_half_to_float(v))
#define BF16(v) ((double)cdnn_bf16_to_float(v))
ARG_FLOAT_BLOCK(arg_f32, float, AS_DOUBLE)
ARG_FLOAT_BLOCK(arg_f64, double, AS_DOUBLE)
ARG_FLOAT_BLOCK(arg_f16, uint16_t, HALF)
ARG_FLOAT_BLOCK(arg_bf16, uint16_t, BF16)
ARG_INT_BLOCK(arg_i32, int32_t)
ARG_INT_BLOCK(arg_i64, int64_t)
ARG_INT_BLOCK(arg_i8, int8_t)
ARG_INT_BLOCK(arg_u8, uint8_t)

typedef void (*arg_block_fn)(const void *, int64_t, int64_t, int64_t, int64_t, int,
                             int64_t *);

/* A contiguous f32 row's extreme and whether it holds a NaN, in one pass
 * of eight independent compare-and-selects, which the compiler turns into
 * vector max/min (x > m ? x : m is MAXPS's own rule). */
#define ROW_EXTREME_F32(NAME, BETTER)                                           \
    static float NAME(const float *x, int64_t n, int *any_nan)                  \
    {                                                                           \
        float acc[8], nan[8] = {0};                                             \
        for (int j = 0; j < 8; j++)                                             \
            acc[j] = x[0];                                                      \
        int64_t i = 0;                                                          \
        for (; i + 8 <= n; i += 8)                                              \
            for (int j = 0; j < 8; j++) {                                       \
                float v = x[i + j];                                             \
                nan[j] = v != v ? 1.0f : nan[j];                                \
                acc[j] = BETTER(v, acc[j]) ? v : acc[j];                        \
            }                                                                   \
        float m = acc[0];                                                       \
        int seen = 0;                                                           \
        for (int j = 0; j < 8; j++) {                                           \
            m = BETTER(acc[j], m) ? acc[j] : m;                                 \
            seen |= nan[j] != 0;                                                \
        }                                                                       \
        for (; i < n; i++) {                                                    \
            seen |= x[i] != x[i];                                               \
            m = BETTER(x[i], m) ? x[i] : m;                                     \
        }                                                                       \
        *any_nan = seen;                                                        \
        return m;                                                               \
    }
#define GREATER(a, b) ((a) > (b))
#define LESS(a, b) ((a) < (b))
ROW_EXTREME_F32(row_max_f32, GREATER)
ROW_EXTREME_F32(row_min_f32, LESS)

/* The first position of a contiguous f32 row holding its extreme (or its
 * first NaN). */
static int64_t arg_row_f32(const float *x, int64_t n, int want_max)
{
    int any_nan;
    float m = want_max ? row_max_f32(x, n, &any_nan) : row_min_f32(x, n, &any_nan);
    for (int64_t i = 0; i < n; i++)
        if (any_nan ? x[i] != x[i] : x[i] == m)
            return i;
    return 0; /* not reached: m is one of x */
}

/* count f32 rows side by side (s_row 1: neighbours in memory), one axis
 * position at a time, branch-free with 32-bit positions (n < 2^31) so
 * that the lanes vectorise. */
/* One lane's step: a kept NaN stays (cur != cur); the first NaN met is
 * kept; else the better value. */
#define LANE_STEP(BETTER, b)                                                    \
    do {                                                                        \
        float v = row[b], cur = value[b];                                       \
        int take = (cur == cur) & ((v != v) | BETTER(v, cur));                  \
        value[b] = take ? v : cur;                                              \
        at[b] = take ? i : at[b];                                               \
    } while (0)
#define LANES_F32(NAME, BETTER)                                                 \
    static void NAME(const float *x, int64_t n, int64_t s_axis, int64_t count,  \
                     int64_t *best)                                             \
    {                                                                           \
        float value[ARG_BLOCK];                                                 \
        int32_t at[ARG_BLOCK];                                                  \
        for (int64_t b = 0; b < count; b++) {                                   \
            value[b] = x[b];                                                    \
            at[b] = 0;                                                          \
        }                                                                       \
        /* a full block's trip count is a constant, which vectorises */      \
        int64_t lanes = count == ARG_BLOCK ? ARG_BLOCK : count;                 \
        for (int32_t i = 1; i < (int32_t)n; i++) {                              \
            const float *row = x + i * s_axis;                                  \
            if (count == ARG_BLOCK)                                             \
                for (int b = 0; b < ARG_BLOCK; b++)                             \
                    LANE_STEP(BETTER, b);                                       \
            else                                                                \
                for (int64_t b = 0; b < lanes; b++)                             \
                    LANE_STEP(BETTER, b);                                       \
        }                                                                       \
        for (int64_t b = 0; b < count; b++)                                     \
            best[b] = at[b];                                                    \
    }
LANES_F32(lanes_max_f32, GREATER)
LANES_F32(lanes_min_f32, LESS)

static arg_block_fn arg_block_of(cdnn_data_type_t t)
{
    switch (t) {
    case CDNN_DATA_TYPE_F32: return arg_f32;
    case CDNN_DATA_TYPE_F64: return arg_f64;
    case CDNN_DATA_TYPE_F16: return arg_f16;
    case CDNN_DATA_TYPE_BF16: return arg_bf16;
    case CDNN_DATA_TYPE_I32: return arg_i32;
    case CDNN_DATA_TYPE_I64: return arg_i64;
    case CDNN_DATA_TYPE_I8: return arg_i8;
    default: return arg_u8; /* u8 and bool: one byte, 0 .. 255 */
    }
}

typedef struct index_job {
    const index_context_t *ctx;
    const char *x, *in2;
    char *out1, *out2;
    key_pair_t *pairs; /* top-k: a buffer of a row's pairs per thread */
} index_job_t;

/* Rows of x along the axis are grouped by the last dim off the axis (the
 * "lane" dim): units [begin, end) are rows, r = outer * lanes + lane. */
static int32_t lane_dim(const index_context_t *ctx)
{
    int32_t d = ctx->x.rank - 1;
    if (d == ctx->axis)
        d--;
    return d; /* -1: x is the axis alone */
}

static void arg_rows(void *arg, int64_t begin, int64_t end)
{
    const index_job_t *job = arg;
    const index_context_t *ctx = job->ctx;
    const cdnn_tensor_view_t *x = &ctx->x, *y = &ctx->out1;
    int32_t lane = lane_dim(ctx);
    int64_t lanes = lane >= 0 ? x->dims[lane] : 1;
    int64_t xs = lane >= 0 ? x->strides[lane] : 0, ys = lane >= 0 ? y->strides[lane] : 0;
    size_t x_elem = cdnn_data_type_size(x->type), y_elem = cdnn_data_type_size(y->type);
    arg_block_fn block = arg_block_of(x->type);
    int want_max = ctx->op == CDNN_OP_ARGMAX;
    int64_t best[ARG_BLOCK];
    for (int64_t r = begin; r < end;) {
        int64_t in_lane = r % lanes, count = lanes - in_lane;
        if (count > ARG_BLOCK)
            count = ARG_BLOCK;
        if (count > end - r)
            count = end - r;
        /* the block's first row: y's offset has the axis at 0 */
        int64_t x_off = unravel_offset(x, ctx->axis, r);
        int64_t y_off = unravel_offset(y, ctx->axis, r);
        const char *base = job->x + x_off * (int64_t)x_elem;
        int64_t n = x->dims[ctx->axis], s_axis = x->strides[ctx->axis];
        if (x->type == CDNN_DATA_TYPE_F32 && s_axis == 1) { /* rows in memory order */
            for (int64_t b = 0; b < count; b++)
                best[b] = arg_row_f32((const float *)base + b * xs, n, want_max);
        } else if (x->type == CDNN_DATA_TYPE_F32 && xs == 1 && n <= INT32_MAX) {
            (want_max ? lanes_max_f32 : lanes_min_f32)((const float *)base, n, s_axis,
                                                       count, best);
        } else {
            block(base, n, s_axis, count, xs, want_max, best);
        }
        for (int64_t b = 0; b < count; b++)
            store_index(y->type, job->out1 + (y_off + b * ys) * (int64_t)y_elem, best[b]);
        r += count;
    }
}

/* ------------------------------------------------------------------------
 * Top-k
 * ------------------------------------------------------------------------ */

/* The order key of an element: integers as they are; a float's bits made
 * monotone (-0 as +0, NaN above +inf). */
static int64_t key_of(cdnn_data_type_t t, const char *p)
{
    double d;
    switch (t) {
    case CDNN_DATA_TYPE_F32: { float f; memcpy(&f, p, 4); d = f; break; }
    case CDNN_DATA_TYPE_F64: memcpy(&d, p, 8); break;
    case CDNN_DATA_TYPE_F16: { uint16_t h; memcpy(&h, p, 2); d = cdnn_half_to_float(h); break; }
    case CDNN_DATA_TYPE_BF16: { uint16_t h; memcpy(&h, p, 2); d = cdnn_bf16_to_float(h); break; }
    case CDNN_DATA_TYPE_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case CDNN_DATA_TYPE_I64: { int64_t v; memcpy(&v, p, 8); return v; }
    case CDNN_DATA_TYPE_I8: return *(const int8_t *)p;
    default: return *(const uint8_t *)p;
    }
    if (d != d)
        return INT64_MAX;
    if (d == 0)
        d = 0; /* -0 as +0 */
    int64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits >= 0 ? bits : bits ^ INT64_MAX;
}

static int pair_before(const key_pair_t *a, const key_pair_t *b)
{
    return a->key < b->key || (a->key == b->key && a->at < b->at);
}

static void swap_pairs(key_pair_t *a, key_pair_t *b)
{
    key_pair_t t = *a;
    *a = *b;
    *b = t;
}

/* Rearrange p[0 .. n) so that its k first (in pair order) come first. */
static void select_first(key_pair_t *p, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        /* median of three as the pivot, moved to hi */
        int64_t mid = lo + (hi - lo) / 2;
        if (pair_before(&p[mid], &p[lo]))
            swap_pairs(&p[mid], &p[lo]);
        if (pair_before(&p[hi], &p[lo]))
            swap_pairs(&p[hi], &p[lo]);
        if (pair_before(&p[mid], &p[hi]))
            swap_pairs(&p[mid], &p[hi]);
        key_pair_t pivot = p[hi];
        int64_t store = lo;
        for (int64_t i = lo; i < hi; i++)
            if (pair_before(&p[i], &pivot))
                swap_pairs(&p[i], &p[store++]);
        swap_pairs(&p[store], &p[hi]);
        if (store == k - 1 || store == k)
            return;
        if (store < k)
            lo = store + 1;
        else
            hi = store - 1;
    }
}

/* Sort p[0 .. n) in pair order: quicksort (median-of-three pivot,
 * recursing into the smaller side, so the depth stays below log2 n) over
 * insertion sort for short runs; pairs are distinct, so no run of equal
 * keys can degrade it. */
static void sort_pairs(key_pair_t *p, int64_t n)
{
    while (n > 16) {
        int64_t mid = n / 2, hi = n - 1;
        if (pair_before(&p[mid], &p[0]))
            swap_pairs(&p[mid], &p[0]);
        if (pair_before(&p[hi], &p[0]))
            swap_pairs(&p[hi], &p[0]);
        if (pair_before(&p[mid], &p[hi]))
            swap_pairs(&p[mid], &p[hi]);
        key_pair_t pivot = p[hi];
        int64_t store = 0;
        for (int64_t i = 0; i < hi; i++)
            if (pair_before(&p[i], &pivot))
                swap_pairs(&p[i], &p[store++]);
        swap_pairs(&p[store], &p[hi]);
        if (store < n - store - 1) {
            sort_pairs(p, store);
            p += store + 1;
            n -= store + 1;
        } else {
            sort_pairs(p + store + 1, n - store - 1);
            n = store;
        }
    }
    for (int64_t i = 1; i < n; i++) {
        key_pair_t e = p[i];
        int64_t j = i;
        while (j > 0 && pair_before(&e, &p[j - 1])) {
            p[j] = p[j - 1];
            j--;
        }
        p[j] = e;
    }
}

/* The k first pairs of a row, sorted, into p[0 .. k). */
static void topk_select(key_pair_t *p, int64_t n, int64_t k)
{
    if (k <= TOPK_INSERTION_MAX) {
        int64_t kept = 0; /* p[0 .. kept) sorted: the best seen so far */
        for (int64_t i = 0; i < n; i++) {
            key_pair_t e = p[i];
            if (kept == k && !pair_before(&e, &p[k - 1]))
                continue;
            int64_t j = kept < k ? kept++ : k - 1;
            while (j > 0 && pair_before(&e, &p[j - 1])) {
                p[j] = p[j - 1];
                j--;
            }
            p[j] = e;
        }
        return;
    }
    if (k < n)
        select_first(p, n, k);
    sort_pairs(p, k);
}

static void topk_rows(void *arg, int64_t begin, int64_t end)
{
    const index_job_t *job = arg;
    const index_context_t *ctx = job->ctx;
    const cdnn_tensor_view_t *x = &ctx->x, *v = &ctx->out1, *ix = &ctx->out2;
    int64_t n = x->dims[ctx->axis];
    /* cpu_parallel_for's range t of T begins at units * t / T rounded
     * down, so t is begin * T / units rounded up: its buffer. */
    int64_t t = (begin * ctx->threads + ctx->units - 1) / ctx->units;
    key_pair_t *pairs = job->pairs + t * n;
    size_t x_elem = cdnn_data_type_size(x->type), v_elem = x_elem;
    size_t i_elem = ctx->has_out2 ? cdnn_data_type_size(ix->type) : 0;
    int64_t flip = ctx->largest ? -1 : 0; /* ~key = key ^ -1 reverses the order */
    for (int64_t r = begin; r < end; r++) {
        const char *row = job->x + unravel_offset(x, ctx->axis, r) * (int64_t)x_elem;
        int64_t sx = x->strides[ctx->axis] * (int64_t)x_elem;
        for (int64_t i = 0; i < n; i++) {
            pairs[i].key = key_of(x->type, row + i * sx) ^ flip;
            pairs[i].at = i;
        }
        topk_select(pairs, n, ctx->k);
        char *vals = job->out1 + unravel_offset(v, ctx->axis, r) * (int64_t)v_elem;
        int64_t sv = v->strides[ctx->axis] * (int64_t)v_elem;
        for (int64_t j = 0; j < ctx->k; j++)
            copy_elem(vals + j * sv, row + pairs[j].at * sx, v_elem);
        if (!ctx->has_out2)
            continue;
        char *at = job->out2 + unravel_offset(ix, ctx->axis, r) * (int64_t)i_elem;
        int64_t si = ix->strides[ctx->axis] * (int64_t)i_elem;
        for (int64_t j = 0; j < ctx->k; j++)
            store_index(ix->type, at + j * si, pairs[j].at);
    }
}

/* ------------------------------------------------------------------------
 * Gathers
 * ------------------------------------------------------------------------ */

/* Every index in -n .. n-1, else EXECUTION_FAILED naming the first that is
 * not and its coordinate in indices. */
static cdnn_status_t check_indices(const index_context_t *ctx, const char *indices)
{
    const cdnn_tensor_view_t *t = &ctx->in2;
    int64_t n = ctx->x.dims[ctx->axis], count = cpu_tensor_elements(t);
    size_t elem = cdnn_data_type_size(t->type);
    for (int64_t e = 0; e < count; e++) {
        int64_t i = load_index(t->type, indices + unravel_offset(t, -1, e) * (int64_t)elem);
        if (i >= -n && i < n)
            continue;
        char where[200];
        size_t at = 0;
        int64_t rest = e, coord[CDNN_MAX_RANK];
        for (int32_t d = t->rank - 1; d >= 0; d--) {
            coord[d] = rest % t->dims[d];
            rest /= t->dims[d];
        }
        for (int32_t d = 0; d < t->rank && at < sizeof where; d++)
            at += (size_t)snprintf(where + at, sizeof where - at, "%s%lld", d ? ", " : "[",
                                   (long long)coord[d]);
        if (at < sizeof where)
            snprintf(where + at, sizeof where - at, "]");
        return sdk_fail(CDNN_STATUS_EXECUTION_FAILED,
                        "%s: indices%s is %lld, outside -%lld .. %lld (x has %lld "
                        "elements at the axis)", cdnn_op_name(ctx->op), where,
                        (long long)i, (long long)n, (long long)(n - 1), (long long)n);
    }
    return CDNN_STATUS_SUCCESS;
}

/* Whether dims [from, rank) of t are packed: one contiguous run. */
static int run_is_contiguous(const cdnn_tensor_view_t *t, int32_t from)
{
    int64_t expect = 1;
    for (int32_t d = t->rank - 1; d >= from; d--) {
        if (t->dims[d] != 1 && t->strides[d] != expect)
            return 0;
        expect *= t->dims[d];
    }
    return 1;
}

/* Whether t's dims [from, from + count) collapse to one run of stride
 * *stride (each dim's stride the next one's times its size). */
static int dims_collapse(const cdnn_tensor_view_t *t, int32_t from, int32_t count,
                         int64_t *stride)
{
    int32_t last = from + count - 1;
    *stride = t->strides[last];
    int64_t expect = t->strides[last];
    for (int32_t d = last; d >= from; d--) {
        if (t->dims[d] != 1 && t->strides[d] != expect)
            return 0;
        expect *= t->dims[d];
    }
    return 1;
}

/* Units are (outer, j) pairs, u = outer * m + j, m the count of indices;
 * each copies the run of x after the axis (inner elements).  The outer
 * coordinate's offsets are recomputed only when it changes, and the
 * index's by one multiply where indices and y's dims of it are each one
 * run. */
static void gather_units(void *arg, int64_t begin, int64_t end)
{
    const index_job_t *job = arg;
    const index_context_t *ctx = job->ctx;
    const cdnn_tensor_view_t *x = &ctx->x, *ix = &ctx->in2, *y = &ctx->out1;
    int32_t axis = ctx->axis, q = ix->rank;
    int64_t n = x->dims[axis], m = cpu_tensor_elements(ix), inner = 1;
    for (int32_t d = axis + 1; d < x->rank; d++)
        inner *= x->dims[d];
    size_t elem = cdnn_data_type_size(x->type), i_elem = cdnn_data_type_size(ix->type);
    int contiguous = run_is_contiguous(x, axis + 1) && run_is_contiguous(y, axis + q);
    int64_t i_stride = 0, y_stride = 0;
    int linear = dims_collapse(ix, 0, q, &i_stride) && dims_collapse(y, axis, q, &y_stride);
    int64_t outer = begin / m, j = begin % m - 1, x_outer = 0, y_outer = 0;
    for (int64_t u = begin; u < end; u++) {
        if (++j == m || u == begin) { /* x's and y's offsets before the axis */
            if (j == m) {
                outer++;
                j = 0;
            }
            x_outer = y_outer = 0;
            for (int64_t d = axis - 1, rest = outer; d >= 0; d--) {
                x_outer += (rest % x->dims[d]) * x->strides[d];
                y_outer += (rest % x->dims[d]) * y->strides[d];
                rest /= x->dims[d];
            }
        }
        /* the index's coordinate, which is y's in dims axis .. axis + q - 1 */
        int64_t i_off = j * i_stride, y_off = y_outer + j * y_stride;
        if (!linear) {
            i_off = 0;
            y_off = y_outer;
            for (int64_t d = q - 1, rest = j; d >= 0; d--) {
                i_off += (rest % ix->dims[d]) * ix->strides[d];
                y_off += (rest % ix->dims[d]) * y->strides[axis + d];
                rest /= ix->dims[d];
            }
        }
        int64_t i = load_index(ix->type, job->in2 + i_off * (int64_t)i_elem);
        int64_t x_off = x_outer + (i < 0 ? i + n : i) * x->strides[axis];
        const char *src = job->x + x_off * (int64_t)elem;
        char *dst = job->out1 + y_off * (int64_t)elem;
        if (contiguous) {
            if (inner == 1)
                copy_elem(dst, src, elem);
            else
                memcpy(dst, src, (size_t)inner * elem);
            continue;
        }
        for (int64_t e = 0; e < inner; e++) {
            int64_t xe = 0, ye = 0, r = e;
            for (int32_t d = x->rank - 1; d > axis; d--) {
                xe += (r % x->dims[d]) * x->strides[d];
                ye += (r % x->dims[d]) * y->strides[d + q - 1];
                r /= x->dims[d];
            }
            copy_elem(dst + ye * (int64_t)elem, src + xe * (int64_t)elem, elem);
        }
    }
}

/* x's element offsets of count elements of a gather-elements row: from
 * the row's base, index i (read with stride si bytes, i32 or i64) at the
 * axis' stride sa, plus e times sl off the axis (0 when the row runs along
 * the axis).  The index type is decided once per call, not per element. */
static void element_offsets(cdnn_data_type_t type, const char *idx, int64_t si,
                            int64_t count, int64_t n, int64_t sa, int64_t sl,
                            int64_t base, int64_t e0, int64_t *out)
{
    if (type == CDNN_DATA_TYPE_I32) {
        for (int64_t e = 0; e < count; e++) {
            int32_t i;
            memcpy(&i, idx + e * si, sizeof i);
            out[e] = base + (i < 0 ? i + n : i) * sa + (e0 + e) * sl;
        }
        return;
    }
    for (int64_t e = 0; e < count; e++) {
        int64_t i;
        memcpy(&i, idx + e * si, sizeof i);
        out[e] = base + (i < 0 ? i + n : i) * sa + (e0 + e) * sl;
    }
}

/* dst[e * sd] = src[offsets[e]] (elements of size bytes). */
#define COPY_BY_OFFSETS(T)                                                      \
    for (int64_t e = 0; e < count; e++)                                         \
        ((T *)dst)[e * sd] = ((const T *)src)[offsets[e]]
static void copy_by_offsets(size_t size, const char *src, char *dst, int64_t sd,
                            const int64_t *offsets, int64_t count)
{
    switch (size) {
    case 1: COPY_BY_OFFSETS(uint8_t); break;
    case 2: COPY_BY_OFFSETS(uint16_t); break;
    case 4: COPY_BY_OFFSETS(uint32_t); break;
    default: COPY_BY_OFFSETS(uint64_t); break;
    }
}

#define GATHER_CHUNK 256

/* Units are rows of y's last dim; y[j] = x[j with j[axis] = indices[j]],
 * a chunk of a row at a time: its x offsets, then the copies. */
static void gather_elements_rows(void *arg, int64_t begin, int64_t end)
{
    const index_job_t *job = arg;
    const index_context_t *ctx = job->ctx;
    const cdnn_tensor_view_t *x = &ctx->x, *ix = &ctx->in2, *y = &ctx->out1;
    int32_t axis = ctx->axis, last = y->rank - 1;
    int64_t n = x->dims[axis], len = y->dims[last];
    size_t elem = cdnn_data_type_size(x->type), i_elem = cdnn_data_type_size(ix->type);
    int64_t sl = axis != last ? x->strides[last] : 0;
    int64_t offsets[GATHER_CHUNK];
    for (int64_t r = begin; r < end; r++) {
        /* the row's coordinate in every dim but the last */
        int64_t x_off = 0, y_off = 0, i_off = 0, rest = r;
        for (int32_t d = last - 1; d >= 0; d--) {
            int64_t c = rest % y->dims[d];
            rest /= y->dims[d];
            if (d != axis) /* x's coordinate at the axis is the index */
                x_off += c * x->strides[d];
            y_off += c * y->strides[d];
            i_off += c * ix->strides[d];
        }
        for (int64_t e0 = 0; e0 < len; e0 += GATHER_CHUNK) {
            int64_t count = len - e0 < GATHER_CHUNK ? len - e0 : GATHER_CHUNK;
            element_offsets(ix->type,
                            job->in2 + (i_off + e0 * ix->strides[last]) * (int64_t)i_elem,
                            ix->strides[last] * (int64_t)i_elem, count, n,
                            x->strides[axis], sl, x_off, e0, offsets);
            copy_by_offsets(elem, job->x,
                            job->out1 + (y_off + e0 * y->strides[last]) * (int64_t)elem,
                            y->strides[last], offsets, count);
        }
    }
}

/* ------------------------------------------------------------------------
 * Execute
 * ------------------------------------------------------------------------ */

static cdnn_status_t missing(int64_t uid)
{
    return sdk_fail(CDNN_STATUS_BAD_PARAM, "tensor uid %lld has no pointer in the "
                    "variant pack", (long long)uid);
}

static cdnn_status_t index_execute(void *context, const cdnn_exec_args_t *args)
{
    const index_context_t *ctx = context;
    index_job_t job = {ctx, pointer_of(args, ctx->x.uid), NULL,
                       pointer_of(args, ctx->out1.uid), NULL, NULL};
    if (!job.x)
        return missing(ctx->x.uid);
    if (!job.out1)
        return missing(ctx->out1.uid);
    if (ctx->has_out2 && !(job.out2 = pointer_of(args, ctx->out2.uid)))
        return missing(ctx->out2.uid);
    switch (ctx->op) {
    case CDNN_OP_ARGMAX:
    case CDNN_OP_ARGMIN:
        cpu_parallel_for(ctx->threads, ctx->units, arg_rows, &job);
        return CDNN_STATUS_SUCCESS;
    case CDNN_OP_TOPK:
        if (ctx->ws.bytes && !args->workspace)
            return sdk_fail(CDNN_STATUS_BAD_PARAM, "the plan needs %zu bytes of "
                            "workspace but none was given", ctx->ws.bytes);
        job.pairs = cpu_ws_at(args->workspace, ctx->pair_offset);
        cpu_parallel_for(ctx->threads, ctx->units, topk_rows, &job);
        return CDNN_STATUS_SUCCESS;
    default: {
        if (!(job.in2 = pointer_of(args, ctx->in2.uid)))
            return missing(ctx->in2.uid);
        cdnn_status_t st = check_indices(ctx, job.in2);
        if (st != CDNN_STATUS_SUCCESS)
            return st;
        cpu_parallel_for(ctx->threads, ctx->units,
                         ctx->op == CDNN_OP_GATHER ? gather_units : gather_elements_rows,
                         &job);
        return CDNN_STATUS_SUCCESS;
    }
    }
}

const cpu_engine_t cpu_index_engine = {
    .applicable = index_applicable,
    .create = index_create,
    .workspace_size = index_workspace_size,
    .execute = index_execute,
    .destroy = index_destroy,
};
