/*
 * fast_softmax.c -- the cpu:softmax engine: a graph of one softmax or
 * log-softmax node over f32, f16 or bf16, rows split over threads.
 *
 * Each row (x along the axis) is widened once into a float buffer of the
 * workspace (one buffer per thread), so that a strided row is read once
 * and the loops below run over contiguous floats: the maximum, exp(x - max)
 * kept in place with its sum accumulated in double (the row's length does
 * not cost accuracy), then y = e * (1 / sum), or x - max - log(sum), each
 * rounded once on store.  Rows that cpu:reference calls undefined (a NaN
 * or +inf, or only -inf) give NaN here too.
 */
#include <math.h>
#include <stdlib.h>

#include <cdnn_sdk/numeric.h>

#include "cpu_engine.h"
#include "fast_util.h"

/* cpu_parallel_for starts at most this many (fast_util.c). */
#define SOFTMAX_MAX_THREADS 256

typedef struct softmax_context {
    cdnn_tensor_view_t x, y;
    int64_t x_uid, y_uid;
    int32_t axis, log_space, threads;
    int64_t rows, row_len;
    size_t buffer_offset; /* threads buffers of row_len floats */
    cpu_ws_layout_t ws;
} softmax_context_t;

static int storable(cdnn_data_type_t t)
{
    return t == CDNN_DATA_TYPE_F32 || t == CDNN_DATA_TYPE_F16 || t == CDNN_DATA_TYPE_BF16;
}

static cdnn_status_t softmax_applicable(const cdnn_graph_view_t *g)
{
    if (g->node_count != 1 || (g->nodes[0].op != CDNN_OP_SOFTMAX &&
                               g->nodes[0].op != CDNN_OP_LOG_SOFTMAX))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the graph is not one softmax or log-softmax node");
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; this "
                        "engine computes in f32 (its sums in f64)");
    const cdnn_tensor_view_t *x = &g->tensors[g->nodes[0].inputs[0]];
    const cdnn_tensor_view_t *y = &g->tensors[g->nodes[0].outputs[0]];
    if (!storable(x->type) || !storable(y->type) || x->is_scalar)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s and '%s' %s; this engine "
                        "takes f32, f16 and bf16 tensors in memory", x->name,
                        cdnn_data_type_name(x->type), y->name, cdnn_data_type_name(y->type));
    return CDNN_STATUS_SUCCESS;
}

static void softmax_destroy(void *context)
{
    free(context);
}

static cdnn_status_t softmax_create(const cdnn_device_view_t *device,
                                    const cdnn_graph_view_t *g,
                                    const cdnn_knob_value_t *knobs, int32_t knob_count,
                                    void **context)
{
    (void)knobs;
    (void)knob_count;
    cdnn_status_t st = softmax_applicable(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    softmax_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    const cdnn_node_view_t *n = &g->nodes[0];
    ctx->x = g->tensors[n->inputs[0]];
    ctx->y = g->tensors[n->outputs[0]];
    ctx->x.name = ctx->y.name = NULL; /* not kept: the view's strings go away */
    ctx->x_uid = ctx->x.uid;
    ctx->y_uid = ctx->y.uid;
    ctx->axis = n->attr.axis; /* 0 .. rank - 1 in a validated view */
    ctx->log_space = n->op == CDNN_OP_LOG_SOFTMAX;
    ctx->row_len = ctx->x.dims[ctx->axis];
    ctx->rows = cpu_tensor_elements(&ctx->x) / ctx->row_len;
    /* a thread takes at least ~16K elements' worth of rows */
    ctx->threads = cpu_threads_for(device->cpu_threads, ctx->rows,
                                   1 + (1 << 14) / ctx->row_len);
    if (ctx->threads > SOFTMAX_MAX_THREADS) /* as cpu_parallel_for caps them */
        ctx->threads = SOFTMAX_MAX_THREADS;
    ctx->buffer_offset = cpu_ws_reserve(
        &ctx->ws, (size_t)ctx->threads * (size_t)ctx->row_len * sizeof(float));
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t softmax_workspace_size(void *context, size_t *bytes)
{
    const softmax_context_t *ctx = context;
    *bytes = ctx->ws.bytes;
    return CDNN_STATUS_SUCCESS;
}

/* Element offset of row r: r unravelled over the dims but the axis. */
static int64_t row_offset(const cdnn_tensor_view_t *t, int32_t axis, int64_t r)
{
    int64_t offset = 0;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        if (d == axis)
            continue;
        offset += (r % t->dims[d]) * t->strides[d];
        r /= t->dims[d];
    }
    return offset;
}

static void load_row(const cdnn_tensor_view_t *t, const char *base, int64_t s,
                     int64_t n, float *row)
{
    switch (t->type) {
    case CDNN_DATA_TYPE_F32:
        for (int64_t i = 0; i < n; i++)
            row[i] = ((const float *)base)[i * s];
        break;
    case CDNN_DATA_TYPE_F16:
        for (int64_t i = 0; i < n; i++)
            row[i] = cdnn_half_to_float(((const uint16_t *)base)[i * s]);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            row[i] = cdnn_bf16_to_float(((const uint16_t *)base)[i * s]);
        break;
    }
}

static void store_row(const cdnn_tensor_view_t *t, char *base, int64_t s, int64_t n,
                      const float *row)
{
    switch (t->type) {
    case CDNN_DATA_TYPE_F32:
        for (int64_t i = 0; i < n; i++)
            ((float *)base)[i * s] = row[i];
        break;
    case CDNN_DATA_TYPE_F16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)base)[i * s] = cdnn_float_to_half(row[i]);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)base)[i * s] = cdnn_float_to_bf16(row[i]);
        break;
    }
}

/* The row, in place: softmax or log-softmax of it. */
static void softmax_row(float *row, int64_t n, int log_space)
{
    float max = -INFINITY;
    int undefined = 0;
    for (int64_t i = 0; i < n; i++) {
        undefined |= isnan(row[i]) || row[i] == INFINITY;
        max = row[i] > max ? row[i] : max;
    }
    if (undefined || max == -INFINITY) {
        for (int64_t i = 0; i < n; i++)
            row[i] = NAN;
        return;
    }
    double sum = 0;
    if (log_space) {
        for (int64_t i = 0; i < n; i++)
            sum += expf(row[i] - max);
        float shift = max + (float)log(sum);
        for (int64_t i = 0; i < n; i++)
            row[i] -= shift;
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        row[i] = expf(row[i] - max);
        sum += row[i];
    }
    float scale = (float)(1.0 / sum);
    for (int64_t i = 0; i < n; i++)
        row[i] *= scale;
}

typedef struct softmax_job {
    const softmax_context_t *ctx;
    const char *x;
    char *y;
    float *buffers;
} softmax_job_t;

static void softmax_rows(void *arg, int64_t begin, int64_t end)
{
    const softmax_job_t *job = arg;
    const softmax_context_t *ctx = job->ctx;
    /* cpu_parallel_for's range t of T (T <= rows) begins at rows * t / T
     * rounded down, so t is begin * T / rows rounded up: its buffer. */
    int64_t t = (begin * ctx->threads + ctx->rows - 1) / ctx->rows;
    float *row = job->buffers + t * ctx->row_len;
    size_t xs = cdnn_data_type_size(ctx->x.type), ys = cdnn_data_type_size(ctx->y.type);
    for (int64_t r = begin; r < end; r++) {
        const char *x = job->x + row_offset(&ctx->x, ctx->axis, r) * (int64_t)xs;
        char *y = job->y + row_offset(&ctx->y, ctx->axis, r) * (int64_t)ys;
        load_row(&ctx->x, x, ctx->x.strides[ctx->axis], ctx->row_len, row);
        softmax_row(row, ctx->row_len, ctx->log_space);
        store_row(&ctx->y, y, ctx->y.strides[ctx->axis], ctx->row_len, row);
    }
}

static void *pointer_of(const cdnn_exec_args_t *args, int64_t uid)
{
    for (int32_t i = 0; i < args->count; i++)
        if (args->uids[i] == uid)
            return args->ptrs[i];
    return NULL;
}

static cdnn_status_t softmax_execute(void *context, const cdnn_exec_args_t *args)
{
    const softmax_context_t *ctx = context;
    softmax_job_t job = {ctx, pointer_of(args, ctx->x_uid), pointer_of(args, ctx->y_uid),
                         NULL};
    if (!job.x || !job.y)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "tensor uid %lld has no pointer in the "
                        "variant pack", (long long)(job.x ? ctx->y_uid : ctx->x_uid));
    if (ctx->ws.bytes && !args->workspace)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "the plan needs %zu bytes of workspace "
                        "but none was given", ctx->ws.bytes);
    job.buffers = cpu_ws_at(args->workspace, ctx->buffer_offset);
    cpu_parallel_for(ctx->threads, ctx->rows, softmax_rows, &job);
    return CDNN_STATUS_SUCCESS;
}

const cpu_engine_t cpu_softmax_engine = {
    .applicable = softmax_applicable,
    .create = softmax_create,
    .workspace_size = softmax_workspace_size,
    .execute = softmax_execute,
    .destroy = softmax_destroy,
};
