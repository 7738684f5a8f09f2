/*
 * fast_norm.c -- the cpu:norm_train engine: the training passes of the
 * norms (batch-norm training forward, running statistics and backward,
 * layer-norm and RMS-norm backward) over f32, f16 and bf16 tensors in
 * memory, any strides, groups split over threads.
 *
 * Every one of these ops reduces x over a set of dims, the window: N and
 * the spatial dims for batch-norm (a group per channel), the normalised
 * dims for layer-norm and RMS-norm (a group per row).  A group's x (and dy)
 * is gathered once into a float buffer of the workspace (one per thread),
 * so that the passes below run over contiguous floats in cache whatever
 * the strides: the sums in double (two passes for the variance, as
 * cpu:reference), then one pass that writes y or dx, each element rounded
 * once on store.  Layer-norm's and RMS-norm's dscale and dbias sum over
 * the groups instead: each thread accumulates its groups into its own
 * double rows, added up after the threads join.
 *
 * Batch-norm with channels innermost (NHWC) is walked the other way round
 * (channels_last_node): gathering one channel there would read every cache
 * line of x once per channel, so each thread takes a range of positions
 * with all their channels, and the per-channel sums are per-thread rows.
 *
 * A graph of several of these nodes runs them in order (the view is
 * topological), so that batchnorm_train with batchnorm_running_stats, or a
 * forward statistics output feeding a backward, is one plan; every tensor
 * must be in memory (no virtual or scalar tensors).  A running-statistics
 * node of the same x as a training forward is done inside the forward's
 * walk (fuse_running_stats), so that x is read once for both.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/numeric.h>

#include "cpu_engine.h"
#include "fast_util.h"

/* cpu_parallel_for starts at most this many (fast_util.c). */
#define NORM_MAX_THREADS 256

/* The dims of a reduction: group dims and window dims of x, in order. */
typedef struct nt_split {
    int32_t ng, nw;
    int32_t gdim[CDNN_MAX_RANK], wdim[CDNN_MAX_RANK];
    int64_t groups, count; /* number of groups; elements in one group */
} nt_split_t;

/* One tensor as the walk sees it: strides 0 on its dims of 1 (broadcast). */
typedef struct nt_tensor {
    int32_t index; /* into the graph's tensors; -1 absent */
    cdnn_data_type_t type;
    int64_t stride[CDNN_MAX_RANK];
} nt_tensor_t;

/* The channels-last walk's per-channel rows: 5 of parameters, 2 of sums. */
enum { CL_CHAN_ROWS = 7 };

typedef struct nt_node {
    cdnn_op_t op;
    double epsilon, momentum;
    nt_split_t split;
    int64_t x_dims[CDNN_MAX_RANK];
    nt_tensor_t in[CDNN_NODE_MAX_INPUTS], out[CDNN_NODE_MAX_OUTPUTS];
    int32_t threads;
    /* Batch-norm with channels innermost (NHWC): walked by positions (every
     * dim but 1) instead, cl_threads over them. */
    int channels_last;
    int32_t rank, cl_threads;
    int64_t channels, positions;
    /* A batchnorm_running_stats node of the same x is done by the
     * batchnorm_train node's walk (its statistics are the same): running
     * points at it there, and it is skipped. */
    const struct nt_node *running;
    int skip;
} nt_node_t;

typedef struct nt_context {
    cpu_graph_t graph;
    nt_node_t *nodes;
    int32_t node_count;
    size_t buffers;  /* per thread: two group buffers of floats */
    size_t partials; /* per thread: two rows of doubles (layer/RMS params) */
    size_t scale_row;
    size_t cl_partials, cl_rows, cl_chan; /* the channels-last walk's */
    cpu_ws_layout_t ws;
} nt_context_t;

static int storable(cdnn_data_type_t t)
{
    return t == CDNN_DATA_TYPE_F32 || t == CDNN_DATA_TYPE_F16 || t == CDNN_DATA_TYPE_BF16;
}

static int is_norm_train_op(cdnn_op_t op)
{
    return op == CDNN_OP_BATCHNORM_TRAIN || op == CDNN_OP_BATCHNORM_RUNNING_STATS ||
           op == CDNN_OP_BATCHNORM_BWD || op == CDNN_OP_LAYERNORM_BWD ||
           op == CDNN_OP_RMSNORM_BWD;
}

static cdnn_status_t nt_applicable(const cdnn_graph_view_t *g)
{
    if (g->node_count < 1)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph has no node");
    for (int32_t i = 0; i < g->node_count; i++)
        if (!is_norm_train_op(g->nodes[i].op))
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' is not a training "
                            "pass of a norm", g->nodes[i].name);
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; this "
                        "engine computes in f32 (its sums in f64)");
    for (int32_t i = 0; i < g->tensor_count; i++) {
        const cdnn_tensor_view_t *t = &g->tensors[i];
        if (!storable(t->type) || t->is_virtual || t->is_scalar)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "tensor '%s' is %s%s; this engine "
                            "takes f32, f16 and bf16 tensors in memory", t->name,
                            cdnn_data_type_name(t->type),
                            t->is_virtual ? ", virtual" : t->is_scalar ? ", a scalar" : "");
    }
    return CDNN_STATUS_SUCCESS;
}

/* Groups and window of x: the window is where `reduced` is set. */
static nt_split_t split_of(const cdnn_tensor_view_t *x, const int *reduced)
{
    nt_split_t s = {.groups = 1, .count = 1};
    for (int32_t d = 0; d < x->rank; d++) {
        if (reduced[d]) {
            s.wdim[s.nw++] = d;
            s.count *= x->dims[d];
        } else {
            s.gdim[s.ng++] = d;
            s.groups *= x->dims[d];
        }
    }
    return s;
}

static nt_tensor_t nt_tensor(const cdnn_graph_view_t *g, int32_t index)
{
    nt_tensor_t t = {.index = index};
    if (index < 0)
        return t;
    const cdnn_tensor_view_t *v = &g->tensors[index];
    t.type = v->type;
    for (int32_t d = 0; d < v->rank; d++)
        t.stride[d] = v->dims[d] == 1 ? 0 : v->strides[d];
    return t;
}

/* The node's split: batch-norm's window is every dim but 1, the others'
 * the dims where scale is not 1. */
static void plan_node(const cdnn_graph_view_t *g, const cdnn_node_view_t *n,
                      int32_t max_threads, nt_node_t *p)
{
    memset(p, 0, sizeof *p);
    p->op = n->op;
    p->epsilon = n->attr.epsilon;
    p->momentum = n->attr.momentum;
    for (int q = 0; q < CDNN_NODE_MAX_INPUTS; q++)
        p->in[q] = nt_tensor(g, n->inputs[q]);
    for (int q = 0; q < CDNN_NODE_MAX_OUTPUTS; q++)
        p->out[q] = nt_tensor(g, n->outputs[q]);
    int batch = n->op == CDNN_OP_BATCHNORM_TRAIN ||
                n->op == CDNN_OP_BATCHNORM_RUNNING_STATS || n->op == CDNN_OP_BATCHNORM_BWD;
    int x_port = n->op == CDNN_OP_BATCHNORM_TRAIN ||
                 n->op == CDNN_OP_BATCHNORM_RUNNING_STATS ? 0 : 1;
    const cdnn_tensor_view_t *x = &g->tensors[n->inputs[x_port]];
    int reduced[CDNN_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        reduced[d] = batch ? d != 1 : g->tensors[n->inputs[2]].dims[d] != 1;
    p->split = split_of(x, reduced);
    memcpy(p->x_dims, x->dims, sizeof p->x_dims);
    p->rank = x->rank;
    /* Channels innermost: the per-channel gather would read every cache
     * line of x once per channel, so walk positions with all channels at
     * once instead. */
    p->channels_last = batch && x->dims[1] > 1 && x->rank > 2;
    for (int32_t d = 0; d < x->rank && p->channels_last; d++)
        if (d != 1 && x->dims[d] > 1 && llabs(x->strides[d]) < llabs(x->strides[1]))
            p->channels_last = 0;
    if (p->channels_last) {
        p->channels = x->dims[1];
        p->positions = p->split.count;
        p->cl_threads = cpu_threads_for(max_threads, p->positions,
                                        1 + (1 << 14) / p->channels);
        if (p->cl_threads > NORM_MAX_THREADS)
            p->cl_threads = NORM_MAX_THREADS;
    }
    /* a thread takes at least ~16K elements' worth of groups */
    p->threads = cpu_threads_for(max_threads, p->split.groups,
                                 1 + (1 << 14) / p->split.count);
    if (p->threads > NORM_MAX_THREADS)
        p->threads = NORM_MAX_THREADS;
}

static int row_params(cdnn_op_t op)
{
    return op == CDNN_OP_LAYERNORM_BWD || op == CDNN_OP_RMSNORM_BWD;
}

/* Whether a node of the graph writes tensor index. */
static int written_by_a_node(const nt_context_t *ctx, int32_t index)
{
    for (int32_t i = 0; i < ctx->node_count; i++)
        for (int q = 0; q < CDNN_NODE_MAX_OUTPUTS; q++)
            if (ctx->nodes[i].out[q].index == index)
                return 1;
    return 0;
}

/* Pair each running-statistics node with a training forward of the same x
 * (the pair a training step builds), so that x is read once.  The pair's
 * running statistics are then written at the forward's place in the node
 * order, which is only safe when the forward comes first and the old
 * running statistics are graph inputs (no node of the graph writes them). */
static void fuse_running_stats(nt_context_t *ctx)
{
    for (int32_t r = 0; r < ctx->node_count; r++) {
        nt_node_t *run = &ctx->nodes[r];
        if (run->op != CDNN_OP_BATCHNORM_RUNNING_STATS ||
            written_by_a_node(ctx, run->in[1].index) ||
            written_by_a_node(ctx, run->in[2].index))
            continue;
        for (int32_t t = 0; t < r; t++) {
            nt_node_t *train = &ctx->nodes[t];
            if (train->op == CDNN_OP_BATCHNORM_TRAIN && !train->running &&
                train->in[0].index == run->in[0].index) {
                train->running = run;
                run->skip = 1;
                break;
            }
        }
    }
}

static void nt_destroy(void *context)
{
    nt_context_t *ctx = context;
    if (!ctx)
        return;
    cpu_graph_free(&ctx->graph);
    free(ctx->nodes);
    free(ctx);
}

static cdnn_status_t nt_create(const cdnn_device_view_t *device,
                               const cdnn_graph_view_t *g,
                               const cdnn_knob_value_t *knobs, int32_t knob_count,
                               void **context)
{
    (void)knobs;
    (void)knob_count;
    cdnn_status_t st = nt_applicable(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    nt_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    ctx->nodes = calloc((size_t)g->node_count, sizeof *ctx->nodes);
    if (!ctx->nodes || (st = cpu_graph_copy(&ctx->graph, g)) != CDNN_STATUS_SUCCESS) {
        nt_destroy(ctx);
        return st ? st : sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    ctx->node_count = g->node_count;
    size_t buffers = 0, partials = 0, row = 0, cl_part = 0, cl_rows = 0, cl_chan = 0;
    for (int32_t i = 0; i < g->node_count; i++) {
        nt_node_t *p = &ctx->nodes[i];
        plan_node(g, &g->nodes[i], device->cpu_threads, p);
        size_t count = (size_t)p->split.count, threads = (size_t)p->threads;
        size_t b = threads * 2 * count * sizeof(float);
        buffers = b > buffers ? b : buffers;
        if (row_params(p->op)) {
            size_t q = threads * 2 * count * sizeof(double);
            partials = q > partials ? q : partials;
            row = count * sizeof(float) > row ? count * sizeof(float) : row;
        }
        if (p->channels_last) {
            size_t c = (size_t)p->channels, t = (size_t)p->cl_threads;
            cl_part = t * 2 * c * sizeof(double) > cl_part ? t * 2 * c * sizeof(double)
                                                           : cl_part;
            cl_rows = t * 2 * c * sizeof(float) > cl_rows ? t * 2 * c * sizeof(float)
                                                          : cl_rows;
            cl_chan = CL_CHAN_ROWS * c * sizeof(double) > cl_chan
                          ? CL_CHAN_ROWS * c * sizeof(double)
                          : cl_chan;
        }
    }
    fuse_running_stats(ctx);
    ctx->cl_partials = cpu_ws_reserve(&ctx->ws, cl_part);
    ctx->cl_rows = cpu_ws_reserve(&ctx->ws, cl_rows);
    ctx->cl_chan = cpu_ws_reserve(&ctx->ws, cl_chan);
    ctx->buffers = cpu_ws_reserve(&ctx->ws, buffers);
    ctx->partials = cpu_ws_reserve(&ctx->ws, partials);
    ctx->scale_row = cpu_ws_reserve(&ctx->ws, row);
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t nt_workspace_size(void *context, size_t *bytes)
{
    const nt_context_t *ctx = context;
    *bytes = ctx->ws.bytes;
    return CDNN_STATUS_SUCCESS;
}

/* ---- gathering and scattering a group ---- */

static float load_one(cdnn_data_type_t type, const char *base, int64_t i)
{
    switch (type) {
    case CDNN_DATA_TYPE_F32: return ((const float *)base)[i];
    case CDNN_DATA_TYPE_F16: return cdnn_half_to_float(((const uint16_t *)base)[i]);
    default: return cdnn_bf16_to_float(((const uint16_t *)base)[i]);
    }
}

static void store_one(cdnn_data_type_t type, char *base, int64_t i, float v)
{
    switch (type) {
    case CDNN_DATA_TYPE_F32: ((float *)base)[i] = v; break;
    case CDNN_DATA_TYPE_F16: ((uint16_t *)base)[i] = cdnn_float_to_half(v); break;
    default: ((uint16_t *)base)[i] = cdnn_float_to_bf16(v); break;
    }
}

static void load_run(cdnn_data_type_t type, const char *base, int64_t s, int64_t n,
                     float *out)
{
    switch (type) {
    case CDNN_DATA_TYPE_F32:
        if (s == 1)
            memcpy(out, base, (size_t)n * sizeof(float));
        else
            for (int64_t i = 0; i < n; i++)
                out[i] = ((const float *)base)[i * s];
        break;
    case CDNN_DATA_TYPE_F16:
        for (int64_t i = 0; i < n; i++)
            out[i] = cdnn_half_to_float(((const uint16_t *)base)[i * s]);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            out[i] = cdnn_bf16_to_float(((const uint16_t *)base)[i * s]);
        break;
    }
}

static void store_run(cdnn_data_type_t type, char *base, int64_t s, int64_t n,
                      const float *in)
{
    switch (type) {
    case CDNN_DATA_TYPE_F32:
        for (int64_t i = 0; i < n; i++)
            ((float *)base)[i * s] = in[i];
        break;
    case CDNN_DATA_TYPE_F16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)base)[i * s] = cdnn_float_to_half(in[i]);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)base)[i * s] = cdnn_float_to_bf16(in[i]);
        break;
    }
}

/* Element offset of group g in t (g unravelled over the group dims). */
static int64_t group_offset(const nt_node_t *p, const nt_tensor_t *t, int64_t g)
{
    int64_t offset = 0;
    for (int32_t k = p->split.ng - 1; k >= 0; k--) {
        int32_t d = p->split.gdim[k];
        offset += (g % p->x_dims[d]) * t->stride[d];
        g /= p->x_dims[d];
    }
    return offset;
}

/* Visit the window's runs (its last dim) in row-major order: fn gets the
 * run's element offset in t and its position in the group. */
typedef struct nt_run_walk {
    const nt_node_t *p;
    const nt_tensor_t *t;
    int64_t idx[CDNN_MAX_RANK];
    int64_t offset, position, run, step;
} nt_run_walk_t;

static void walk_begin(nt_run_walk_t *w, const nt_node_t *p, const nt_tensor_t *t,
                       int64_t base)
{
    memset(w, 0, sizeof *w);
    w->p = p;
    w->t = t;
    w->offset = base;
    int32_t last = p->split.nw ? p->split.wdim[p->split.nw - 1] : -1;
    w->run = last >= 0 ? p->x_dims[last] : 1;
    w->step = last >= 0 ? t->stride[last] : 0;
}

/* Advance past the current run; 0 at the end of the window. */
static int walk_next(nt_run_walk_t *w)
{
    const nt_split_t *s = &w->p->split;
    w->position += w->run;
    for (int32_t k = s->nw - 2; k >= 0; k--) {
        int32_t d = s->wdim[k];
        w->offset += w->t->stride[d];
        if (++w->idx[k] < w->p->x_dims[d])
            return 1;
        w->offset -= w->idx[k] * w->t->stride[d];
        w->idx[k] = 0;
    }
    return 0;
}

static void gather(const nt_node_t *p, const nt_tensor_t *t, const char *data,
                   int64_t base, float *out)
{
    size_t es = cdnn_data_type_size(t->type);
    nt_run_walk_t w;
    walk_begin(&w, p, t, base);
    do
        load_run(t->type, data + w.offset * (int64_t)es, w.step, w.run, out + w.position);
    while (walk_next(&w));
}

static void scatter(const nt_node_t *p, const nt_tensor_t *t, char *data, int64_t base,
                    const float *in)
{
    size_t es = cdnn_data_type_size(t->type);
    nt_run_walk_t w;
    walk_begin(&w, p, t, base);
    do
        store_run(t->type, data + w.offset * (int64_t)es, w.step, w.run, in + w.position);
    while (walk_next(&w));
}

/* ---- the ops, one group at a time ---- */

typedef struct nt_job {
    const nt_context_t *ctx;
    const nt_node_t *p;
    void **ptrs; /* by tensor index */
    float *buffers;
    double *partials;
    const float *scale_row;
} nt_job_t;

static const char *in_ptr(const nt_job_t *j, int port)
{
    return j->p->in[port].index >= 0 ? j->ptrs[j->p->in[port].index] : NULL;
}

static char *out_ptr(const nt_job_t *j, int port)
{
    return j->p->out[port].index >= 0 ? j->ptrs[j->p->out[port].index] : NULL;
}

/* A per-group value of a statistics or parameter tensor. */
static float group_value(const nt_job_t *j, int port, int64_t g)
{
    const nt_tensor_t *t = &j->p->in[port];
    return load_one(t->type, in_ptr(j, port), group_offset(j->p, t, g));
}

static void put_group_value(const nt_job_t *j, int port, int64_t g, double v)
{
    const nt_tensor_t *t = &j->p->out[port];
    if (t->index >= 0)
        store_one(t->type, out_ptr(j, port), group_offset(j->p, t, g), (float)v);
}

/* The loops over a group's buffers.  Each runs in blocks of NT_BLOCK
 * elements with restrict pointers, which GCC's -O2 vectoriser packs (a
 * plain loop over n it leaves scalar), then a scalar tail.  Sums keep one
 * double accumulator per lane of a block, added in a fixed order: the
 * result depends on n only, not on threads or timing. */
#define NT_BLOCK 8

/* sum(a) and, if b, sum(a * b). */
static void sum_and_dot(const float *restrict a, const float *restrict b, int64_t n,
                        double *sum_a, double *dot)
{
    double s[NT_BLOCK] = {0}, t[NT_BLOCK] = {0};
    int64_t i = 0;
    for (; i + NT_BLOCK <= n; i += NT_BLOCK)
        for (int k = 0; k < NT_BLOCK; k++) {
            s[k] += a[i + k];
            t[k] += b ? (double)a[i + k] * b[i + k] : 0.0;
        }
    double sa = 0, st = 0;
    for (int k = 0; k < NT_BLOCK; k++) {
        sa += s[k];
        st += t[k];
    }
    for (; i < n; i++) {
        sa += a[i];
        st += b ? (double)a[i] * b[i] : 0.0;
    }
    *sum_a = sa;
    if (dot)
        *dot = st;
}

/* sum((x - m)^2). */
static double sum_sq_about(const float *restrict x, int64_t n, double m)
{
    double q[NT_BLOCK] = {0};
    int64_t i = 0;
    for (; i + NT_BLOCK <= n; i += NT_BLOCK)
        for (int k = 0; k < NT_BLOCK; k++) {
            double d = x[i + k] - m;
            q[k] += d * d;
        }
    double sq = 0;
    for (int k = 0; k < NT_BLOCK; k++)
        sq += q[k];
    for (; i < n; i++) {
        double d = x[i] - m;
        sq += d * d;
    }
    return sq;
}

/* x = (x - m) * a + b, in double (a mean far from 0 costs no bits). */
static void affine_in_place(float *restrict x, int64_t n, double m, double a, double b)
{
    int64_t i = 0;
    for (; i + NT_BLOCK <= n; i += NT_BLOCK)
        for (int k = 0; k < NT_BLOCK; k++)
            x[i + k] = (float)((x[i + k] - m) * a + b);
    for (; i < n; i++)
        x[i] = (float)((x[i] - m) * a + b);
}

/* dy = k * (dy - mean_dy - xhat * mean_dyx): the backward's last pass. */
static void bwd_combine(float *restrict dy, const float *restrict xhat, int64_t n,
                        float k, float mean_dy, float mean_dyx)
{
    int64_t i = 0;
    for (; i + NT_BLOCK <= n; i += NT_BLOCK)
        for (int j = 0; j < NT_BLOCK; j++)
            dy[i + j] = k * (dy[i + j] - mean_dy - xhat[i + j] * mean_dyx);
    for (; i < n; i++)
        dy[i] = k * (dy[i] - mean_dy - xhat[i] * mean_dyx);
}

/* Layer/RMS-norm backward's first pass over a row: x becomes xhat, dy
 * becomes g = dy * scale, and the row adds dy * xhat and dy to the
 * thread's parameter partials. */
static void row_first_pass(float *restrict x, float *restrict dy, const float *restrict s,
                           double *restrict dscale, double *restrict dbias, int64_t n,
                           double mean, double inv)
{
    int64_t i = 0;
    for (; i + NT_BLOCK <= n; i += NT_BLOCK)
        for (int k = 0; k < NT_BLOCK; k++) {
            float xhat = (float)((x[i + k] - mean) * inv), d = dy[i + k];
            dscale[i + k] += (double)d * xhat;
            dbias[i + k] += d;
            x[i + k] = xhat;
            dy[i + k] = d * s[i + k];
        }
    for (; i < n; i++) {
        float xhat = (float)((x[i] - mean) * inv), d = dy[i];
        dscale[i] += (double)d * xhat;
        dbias[i] += d;
        x[i] = xhat;
        dy[i] = d * s[i];
    }
}

/* Mean, then the biased variance about it (two passes, as cpu:reference). */
static void mean_var(const float *x, int64_t n, double *mean, double *var)
{
    double sum;
    sum_and_dot(x, NULL, n, &sum, NULL);
    double m = sum / (double)n;
    *mean = m;
    *var = sum_sq_about(x, n, m) / (double)n;
}

/* The running statistics of channel g from its batch mean and (biased)
 * variance over n values, PyTorch's update. */
static void running_update(const nt_job_t *j, const nt_node_t *run, int64_t g,
                           double mean, double var)
{
    nt_job_t rj = *j;
    rj.p = run;
    double m = run->momentum, n = (double)run->split.count;
    put_group_value(&rj, 0, g, (1 - m) * group_value(&rj, 1, g) + m * mean);
    put_group_value(&rj, 1, g, (1 - m) * group_value(&rj, 2, g) + m * var * n / (n - 1));
}

static void bn_train_group(const nt_job_t *j, int64_t g, float *x)
{
    const nt_node_t *p = j->p;
    int64_t n = p->split.count;
    gather(p, &p->in[0], in_ptr(j, 0), group_offset(p, &p->in[0], g), x);
    double mean, var;
    mean_var(x, n, &mean, &var);
    double inv = 1.0 / sqrt(var + p->epsilon);
    affine_in_place(x, n, mean, group_value(j, 1, g) * inv, group_value(j, 2, g));
    scatter(p, &p->out[0], out_ptr(j, 0), group_offset(p, &p->out[0], g), x);
    put_group_value(j, 1, g, mean);
    put_group_value(j, 2, g, inv);
    if (p->running)
        running_update(j, p->running, g, mean, var);
}

static void bn_running_group(const nt_job_t *j, int64_t g, float *x)
{
    const nt_node_t *p = j->p;
    int64_t n = p->split.count;
    gather(p, &p->in[0], in_ptr(j, 0), group_offset(p, &p->in[0], g), x);
    double mean, var;
    mean_var(x, n, &mean, &var);
    running_update(j, p, g, mean, var);
}

/* Batch-norm backward: scale is one value per group, so mean(g) and
 * mean(g * xhat) are scale times mean(dy) and mean(dy * xhat). */
static void bn_bwd_group(const nt_job_t *j, int64_t g, float *x, float *dy)
{
    const nt_node_t *p = j->p;
    int64_t n = p->split.count;
    gather(p, &p->in[0], in_ptr(j, 0), group_offset(p, &p->in[0], g), dy);
    gather(p, &p->in[1], in_ptr(j, 1), group_offset(p, &p->in[1], g), x);
    double scale = group_value(j, 2, g), mean = group_value(j, 3, g),
           inv = group_value(j, 4, g);
    affine_in_place(x, n, mean, inv, 0.0); /* xhat from here on */
    double sum_dy, sum_dyx;
    sum_and_dot(dy, x, n, &sum_dy, &sum_dyx);
    bwd_combine(dy, x, n, (float)(scale * inv), (float)(sum_dy / (double)n),
                (float)(sum_dyx / (double)n));
    scatter(p, &p->out[0], out_ptr(j, 0), group_offset(p, &p->out[0], g), dy);
    put_group_value(j, 1, g, sum_dyx);
    put_group_value(j, 2, g, sum_dy);
}

/* Layer-norm (has_mean) and RMS-norm backward of one row; dscale and dbias
 * accumulate into the thread's partial rows. */
static void row_bwd_group(const nt_job_t *j, int64_t g, float *x, float *dy,
                          double *dscale, double *dbias)
{
    const nt_node_t *p = j->p;
    int64_t n = p->split.count;
    int has_mean = p->op == CDNN_OP_LAYERNORM_BWD;
    gather(p, &p->in[0], in_ptr(j, 0), group_offset(p, &p->in[0], g), dy);
    gather(p, &p->in[1], in_ptr(j, 1), group_offset(p, &p->in[1], g), x);
    double mean = has_mean ? group_value(j, 3, g) : 0.0;
    double inv = group_value(j, has_mean ? 4 : 3, g);
    const float *s = j->scale_row;
    row_first_pass(x, dy, s, dscale, dbias, n, mean, inv);
    double sum_g, sum_gx;
    sum_and_dot(dy, x, n, &sum_g, &sum_gx);
    float mg = has_mean ? (float)(sum_g / (double)n) : 0.0f;
    bwd_combine(dy, x, n, (float)inv, mg, (float)(sum_gx / (double)n));
    scatter(p, &p->out[0], out_ptr(j, 0), group_offset(p, &p->out[0], g), dy);
}

static void nt_groups(void *arg, int64_t begin, int64_t end)
{
    const nt_job_t *j = arg;
    const nt_node_t *p = j->p;
    int64_t n = p->split.count, groups = p->split.groups;
    /* cpu_parallel_for's range t of T (T <= groups) begins at groups * t / T
     * rounded down, so t is begin * T / groups rounded up: its buffers. */
    int64_t t = (begin * p->threads + groups - 1) / groups;
    float *x = j->buffers + t * 2 * n, *dy = x + n;
    double *dscale = j->partials ? j->partials + t * 2 * n : NULL;
    for (int64_t g = begin; g < end; g++) {
        switch (p->op) {
        case CDNN_OP_BATCHNORM_TRAIN: bn_train_group(j, g, x); break;
        case CDNN_OP_BATCHNORM_RUNNING_STATS: bn_running_group(j, g, x); break;
        case CDNN_OP_BATCHNORM_BWD: bn_bwd_group(j, g, x, dy); break;
        default: row_bwd_group(j, g, x, dy, dscale, dscale + n); break;
        }
    }
}

/* dscale and dbias of a row backward: the threads' partial rows added up,
 * stored with the output's strides over the window. */
static void store_row_params(const nt_job_t *j)
{
    const nt_node_t *p = j->p;
    int64_t n = p->split.count;
    float *row = j->buffers; /* the threads are done with their buffers */
    for (int port = 1; port <= 2; port++) {
        if (p->out[port].index < 0)
            continue;
        for (int64_t i = 0; i < n; i++) {
            double sum = 0;
            for (int32_t t = 0; t < p->threads; t++)
                sum += j->partials[(int64_t)t * 2 * n + (port - 1) * n + i];
            row[i] = (float)sum;
        }
        scatter(p, &p->out[port], out_ptr(j, port), 0, row);
    }
}

/* ---- batch-norm with channels innermost ----
 *
 * x is seen as positions (every dim but 1, row-major) of C channels; each
 * thread takes a range of positions and loads one position's channels at a
 * time (a contiguous run for NHWC).  Per-channel sums go to per-thread
 * double rows, added in thread order after the join (so a plan's result
 * does not depend on timing); then one more pass writes y or dx. */

enum cl_phase { CL_SUM, CL_SQ, CL_Y, CL_BWD_SUM, CL_BWD_DX };

typedef struct cl_job {
    const nt_job_t *j;
    enum cl_phase phase;
    double *partials;   /* per thread: 2 rows of C */
    float *rows;        /* per thread: 2 rows of C */
    const double *chan; /* the channel rows (channels_last_node) */
} cl_job_t;

static int64_t position_offset(const nt_node_t *p, const nt_tensor_t *t, int64_t pos)
{
    int64_t offset = 0;
    for (int32_t d = p->rank - 1; d >= 0; d--) {
        if (d == 1)
            continue;
        offset += (pos % p->x_dims[d]) * t->stride[d];
        pos /= p->x_dims[d];
    }
    return offset;
}

static void cl_load(const cl_job_t *cj, int port, int64_t pos, float *row)
{
    const nt_node_t *p = cj->j->p;
    const nt_tensor_t *t = &p->in[port];
    size_t es = cdnn_data_type_size(t->type);
    load_run(t->type, in_ptr(cj->j, port) + position_offset(p, t, pos) * (int64_t)es,
             t->stride[1], p->channels, row);
}

static void cl_store(const cl_job_t *cj, int64_t pos, const float *row)
{
    const nt_node_t *p = cj->j->p;
    const nt_tensor_t *t = &p->out[0];
    size_t es = cdnn_data_type_size(t->type);
    store_run(t->type, out_ptr(cj->j, 0) + position_offset(p, t, pos) * (int64_t)es,
              t->stride[1], p->channels, row);
}

static void cl_positions(void *arg, int64_t begin, int64_t end)
{
    const cl_job_t *cj = arg;
    const nt_node_t *p = cj->j->p;
    int64_t c = p->channels, n = p->positions;
    int64_t t = (begin * p->cl_threads + n - 1) / n; /* as nt_groups */
    double *s0 = cj->partials + t * 2 * c, *s1 = s0 + c;
    float *x = cj->rows + t * 2 * c, *dy = x + c;
    const double *c0 = cj->chan, *c1 = c0 + c, *c2 = c1 + c, *c3 = c2 + c, *c4 = c3 + c;
    int bwd = cj->phase == CL_BWD_SUM || cj->phase == CL_BWD_DX;
    for (int64_t pos = begin; pos < end; pos++) {
        if (bwd)
            cl_load(cj, 0, pos, dy);
        cl_load(cj, bwd ? 1 : 0, pos, x);
        switch (cj->phase) {
        case CL_SUM:
            for (int64_t i = 0; i < c; i++)
                s0[i] += x[i];
            break;
        case CL_SQ:
            for (int64_t i = 0; i < c; i++) {
                double d = x[i] - c0[i];
                s0[i] += d * d;
            }
            break;
        case CL_Y: /* c0 mean, c1 scale * inv, c2 bias */
            for (int64_t i = 0; i < c; i++)
                x[i] = (float)((x[i] - c0[i]) * c1[i] + c2[i]);
            cl_store(cj, pos, x);
            break;
        case CL_BWD_SUM: /* c0 mean, c1 inv */
            for (int64_t i = 0; i < c; i++) {
                double xhat = (x[i] - c0[i]) * c1[i];
                s0[i] += dy[i];
                s1[i] += dy[i] * xhat;
            }
            break;
        case CL_BWD_DX: /* c0 mean, c1 inv, c2 mean(dy), c3 mean(dy xhat),
                         * c4 scale * inv */
            for (int64_t i = 0; i < c; i++) {
                double xhat = (x[i] - c0[i]) * c1[i];
                dy[i] = (float)(c4[i] * (dy[i] - c2[i] - xhat * c3[i]));
            }
            cl_store(cj, pos, dy);
            break;
        }
    }
}

/* One phase over every position; the per-thread sums added up into out
 * (2 rows of C; NULL: a phase that writes). */
static void cl_phase(cl_job_t *cj, enum cl_phase phase, double *out)
{
    const nt_node_t *p = cj->j->p;
    int64_t c = p->channels;
    cj->phase = phase;
    if (out)
        memset(cj->partials, 0, (size_t)p->cl_threads * 2 * (size_t)c * sizeof(double));
    cpu_parallel_for(p->cl_threads, p->positions, cl_positions, cj);
    if (!out)
        return;
    for (int64_t i = 0; i < 2 * c; i++) {
        double sum = 0;
        for (int32_t t = 0; t < p->cl_threads; t++)
            sum += cj->partials[(int64_t)t * 2 * c + i];
        out[i] = sum;
    }
}

/* The node, by positions: channel rows c0..c4 (by phase: mean, inv or
 * scale * inv, bias or mean(dy), mean(dy xhat), scale * inv) and two rows of
 * sums live in the workspace (CL_CHAN_ROWS rows of C doubles). */
static void channels_last_node(const nt_job_t *j, void *workspace)
{
    const nt_node_t *p = j->p;
    int64_t c = p->channels;
    double n = (double)p->positions;
    double *c0 = cpu_ws_at(workspace, j->ctx->cl_chan), *c1 = c0 + c, *c2 = c1 + c,
           *c3 = c2 + c, *c4 = c3 + c, *sums = c4 + c;
    cl_job_t cj = {j, CL_SUM, cpu_ws_at(workspace, j->ctx->cl_partials),
                   cpu_ws_at(workspace, j->ctx->cl_rows), c0};
    if (p->op == CDNN_OP_BATCHNORM_BWD) {
        for (int64_t i = 0; i < c; i++) {
            c0[i] = group_value(j, 3, i);
            c1[i] = group_value(j, 4, i);
        }
        cl_phase(&cj, CL_BWD_SUM, sums);
        for (int64_t i = 0; i < c; i++) {
            c2[i] = sums[i] / n;
            c3[i] = sums[c + i] / n;
            c4[i] = group_value(j, 2, i) * c1[i];
            put_group_value(j, 1, i, sums[c + i]);
            put_group_value(j, 2, i, sums[i]);
        }
        cl_phase(&cj, CL_BWD_DX, NULL);
        return;
    }
    cl_phase(&cj, CL_SUM, sums);
    for (int64_t i = 0; i < c; i++)
        c0[i] = sums[i] / n;
    cl_phase(&cj, CL_SQ, sums);
    for (int64_t i = 0; i < c; i++) {
        double var = sums[i] / n;
        if (p->op == CDNN_OP_BATCHNORM_RUNNING_STATS) {
            running_update(j, p, i, c0[i], var);
            continue;
        }
        if (p->running)
            running_update(j, p->running, i, c0[i], var);
        double inv = 1.0 / sqrt(var + p->epsilon);
        c1[i] = group_value(j, 1, i) * inv;
        c2[i] = group_value(j, 2, i);
        put_group_value(j, 1, i, c0[i]);
        put_group_value(j, 2, i, inv);
    }
    if (p->op == CDNN_OP_BATCHNORM_TRAIN)
        cl_phase(&cj, CL_Y, NULL);
}

static cdnn_status_t nt_execute(void *context, const cdnn_exec_args_t *args)
{
    const nt_context_t *ctx = context;
    if (ctx->ws.bytes && !args->workspace)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "the plan needs %zu bytes of workspace "
                        "but none was given", ctx->ws.bytes);
    void **ptrs = calloc((size_t)ctx->graph.view.tensor_count + 1, sizeof *ptrs);
    if (!ptrs)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = cpu_bind_tensors(&ctx->graph.view, args, ptrs);
    if (st != CDNN_STATUS_SUCCESS) {
        free(ptrs);
        return st;
    }
    for (int32_t i = 0; i < ctx->node_count; i++) {
        const nt_node_t *p = &ctx->nodes[i];
        if (p->skip)
            continue;
        nt_job_t j = {ctx, p, ptrs, cpu_ws_at(args->workspace, ctx->buffers), NULL, NULL};
        if (row_params(p->op)) {
            float *scale = cpu_ws_at(args->workspace, ctx->scale_row);
            gather(p, &p->in[2], in_ptr(&j, 2), 0, scale);
            j.scale_row = scale;
            j.partials = cpu_ws_at(args->workspace, ctx->partials);
            memset(j.partials, 0,
                   (size_t)p->threads * 2 * (size_t)p->split.count * sizeof(double));
        }
        if (p->channels_last) {
            channels_last_node(&j, args->workspace);
            continue;
        }
        cpu_parallel_for(p->threads, p->split.groups, nt_groups, &j);
        if (row_params(p->op))
            store_row_params(&j);
    }
    free(ptrs);
    return CDNN_STATUS_SUCCESS;
}

const cpu_engine_t cpu_norm_train_engine = {
    .applicable = nt_applicable,
    .create = nt_create,
    .workspace_size = nt_workspace_size,
    .execute = nt_execute,
    .destroy = nt_destroy,
};
