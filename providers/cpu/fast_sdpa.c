/*
 * fast_sdpa.c -- the cpu:sdpa_bwd engine: a graph of one sdpa_bwd node
 * over f32 tensors in memory (any strides), (batch, head) pairs split over
 * threads, the five products of each pair done by cblas_sgemm.
 *
 * Per batch b and head h, on contiguous copies of q [Sq,D], k [Sk,D],
 * v [Sk,Dv] and d_o [Sq,Dv] (packing makes any layout one code path):
 *     p  = softmax(scale q k^T)   rows in f32, sums in double; causal
 *                                 masking top-left as cpu:reference: query
 *                                 i sees keys j <= i, the rest get p = 0
 *     dv = p^T d_o,   dp = d_o v^T
 *     ds = p * (dp - rowsum(p * dp))   (rowsum in double)
 *     dq = scale ds k,   dk = scale ds^T q
 * Like cpu:reference, o is not read: rowsum(p * dp) equals rowsum(d_o * o)
 * for the forward's exact o, and does not depend on how o was rounded.
 * The gradients are written into contiguous buffers, then scattered.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_engine.h"
#include "fast_util.h"

/* cpu_parallel_for starts at most this many (fast_util.c). */
#define SDPA_MAX_THREADS 256

enum { IN_Q, IN_K, IN_V, IN_O, IN_DO, OUT_DQ, OUT_DK, OUT_DV, SDPA_TENSORS };

typedef struct sdpa_context {
    cdnn_tensor_view_t t[SDPA_TENSORS]; /* names cleared: not kept */
    int64_t batch, heads, queries, keys, head_dim, value_dim;
    float scale;
    int causal;
    int32_t threads;
    size_t floats_per_thread; /* one thread's buffers, laid out in order */
    size_t buffer_offset;
    cpu_ws_layout_t ws;
} sdpa_context_t;

/* The node's tensors in port order, IN_Q .. OUT_DV. */
static void port_tensors(const cdnn_graph_view_t *g, const cdnn_tensor_view_t **t)
{
    const cdnn_node_view_t *n = &g->nodes[0];
    for (int i = 0; i < OUT_DQ; i++)
        t[i] = &g->tensors[n->inputs[i]];
    for (int i = 0; i < SDPA_TENSORS - OUT_DQ; i++)
        t[OUT_DQ + i] = &g->tensors[n->outputs[i]];
}

static cdnn_status_t sdpa_applicable(const cdnn_graph_view_t *g)
{
    if (g->node_count != 1 || g->nodes[0].op != CDNN_OP_SDPA_BWD)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph is not one sdpa_bwd node");
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; this "
                        "engine computes in f32 (its row sums in f64)");
    const cdnn_tensor_view_t *ports[SDPA_TENSORS];
    port_tensors(g, ports);
    for (int i = 0; i < SDPA_TENSORS; i++) {
        const cdnn_tensor_view_t *t = ports[i];
        if (t->type != CDNN_DATA_TYPE_F32 || t->is_scalar)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; this engine takes "
                            "only f32 tensors in memory", t->name,
                            cdnn_data_type_name(t->type));
    }
    return CDNN_STATUS_SUCCESS;
}

static void sdpa_destroy(void *context)
{
    free(context);
}

/* a * b * ... into *out, or 0 on overflow of size_t. */
static int mul_sizes(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* Floats one thread needs: p and ds (Sq x Sk each), the packed inputs
 * q, k, v, d_o and the packed gradients dq, dk, dv; 0 on overflow. */
static int thread_floats(const sdpa_context_t *c, size_t *out)
{
    size_t qk, qd, kd, kv, qv, sum;
    if (!mul_sizes((size_t)c->queries, (size_t)c->keys, &qk) ||
        !mul_sizes((size_t)c->queries, (size_t)c->head_dim, &qd) ||
        !mul_sizes((size_t)c->keys, (size_t)c->head_dim, &kd) ||
        !mul_sizes((size_t)c->keys, (size_t)c->value_dim, &kv) ||
        !mul_sizes((size_t)c->queries, (size_t)c->value_dim, &qv))
        return 0;
    /* each term below SIZE_MAX / 16 keeps the sum (and its bytes) in range */
    size_t cap = SIZE_MAX / 16 / sizeof(float);
    if (qk > cap || qd > cap || kd > cap || kv > cap || qv > cap)
        return 0;
    sum = 2 * qk + 2 * qd + 2 * kd + 2 * kv + qv;
    /* whole cache lines, so threads' buffers do not share one */
    *out = (sum + 15) / 16 * 16;
    return 1;
}

static cdnn_status_t sdpa_create(const cdnn_device_view_t *device,
                                 const cdnn_graph_view_t *g,
                                 const cdnn_knob_value_t *knobs, int32_t knob_count,
                                 void **context)
{
    (void)knobs; /* the threads knob is applied to device->cpu_threads */
    (void)knob_count;
    cdnn_status_t st = sdpa_applicable(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    sdpa_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    const cdnn_node_view_t *n = &g->nodes[0];
    const cdnn_tensor_view_t *ports[SDPA_TENSORS];
    port_tensors(g, ports);
    for (int i = 0; i < SDPA_TENSORS; i++) {
        ctx->t[i] = *ports[i];
        ctx->t[i].name = NULL; /* the view's strings go away */
    }
    const int64_t *q = ctx->t[IN_Q].dims;
    ctx->batch = q[0];
    ctx->heads = q[1];
    ctx->queries = q[2];
    ctx->head_dim = q[3];
    ctx->keys = ctx->t[IN_K].dims[2];
    ctx->value_dim = ctx->t[IN_V].dims[3];
    double scale = n->attr.sdpa.scale;
    ctx->scale = (float)(scale != 0 ? scale : 1.0 / sqrt((double)ctx->head_dim));
    ctx->causal = n->attr.sdpa.causal != 0;
    size_t floats, bytes;
    if (!thread_floats(ctx, &floats) || !mul_sizes(floats, sizeof(float), &bytes)) {
        long long queries = ctx->queries, keys = ctx->keys;
        free(ctx);
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "%lld x %lld attention scores do "
                        "not fit in a workspace", queries, keys);
    }
    ctx->floats_per_thread = floats;
    int64_t pairs = ctx->batch * ctx->heads;
    ctx->threads = cpu_threads_for(device->cpu_threads, pairs, 1);
    if (ctx->threads > SDPA_MAX_THREADS)
        ctx->threads = SDPA_MAX_THREADS;
    size_t all;
    if (!mul_sizes(bytes, (size_t)ctx->threads, &all) || all > SIZE_MAX / 2) {
        int threads = ctx->threads;
        free(ctx);
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the workspace for %d threads "
                        "overflows", threads);
    }
    ctx->buffer_offset = cpu_ws_reserve(&ctx->ws, all);
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t sdpa_workspace_size(void *context, size_t *bytes)
{
    const sdpa_context_t *ctx = context;
    *bytes = ctx->ws.bytes;
    return CDNN_STATUS_SUCCESS;
}

/* The [rows, cols] matrix of tensor t at batch b, head h, to or from a
 * contiguous buffer. */
static void pack(const cdnn_tensor_view_t *t, const float *base, int64_t b, int64_t h,
                 float *dst)
{
    const int64_t *s = t->strides;
    const float *m = base + b * s[0] + h * s[1];
    int64_t rows = t->dims[2], cols = t->dims[3];
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            dst[i * cols + j] = m[i * s[2] + j * s[3]];
}

static void unpack(const cdnn_tensor_view_t *t, float *base, int64_t b, int64_t h,
                   const float *src)
{
    const int64_t *s = t->strides;
    float *m = base + b * s[0] + h * s[1];
    int64_t rows = t->dims[2], cols = t->dims[3];
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            m[i * s[2] + j * s[3]] = src[i * cols + j];
}

/* A leading dimension BLAS accepts for a matrix of cols columns. */
static blasint ld(int64_t cols)
{
    return (blasint)(cols > 0 ? cols : 1);
}

/* Row i of the scores (seen keys first) to probabilities in place; the
 * masked tail to 0. */
static void softmax_row(float *row, int64_t seen, int64_t keys)
{
    float max = -INFINITY;
    for (int64_t j = 0; j < seen; j++)
        max = row[j] > max ? row[j] : max;
    double sum = 0;
    for (int64_t j = 0; j < seen; j++) {
        row[j] = expf(row[j] - max);
        sum += row[j];
    }
    float inv = (float)(1.0 / sum);
    for (int64_t j = 0; j < seen; j++)
        row[j] *= inv;
    for (int64_t j = seen; j < keys; j++)
        row[j] = 0.0f;
}

/* dp in ds to ds = p * (dp - rowsum(p * dp)), row by row. */
static void score_gradients(const float *p, float *ds, int64_t queries, int64_t keys)
{
    for (int64_t i = 0; i < queries; i++) {
        const float *pi = p + i * keys;
        float *di = ds + i * keys;
        double pdp = 0;
        for (int64_t j = 0; j < keys; j++)
            pdp += (double)pi[j] * di[j];
        float shift = (float)pdp;
        for (int64_t j = 0; j < keys; j++)
            di[j] = pi[j] * (di[j] - shift);
    }
}

typedef struct sdpa_job {
    const sdpa_context_t *ctx;
    const float *in[5];
    float *out[3];
    float *buffers;
} sdpa_job_t;

/* One (batch, head) pair, with buf one thread's buffers. */
static void sdpa_pair(const sdpa_job_t *job, int64_t b, int64_t h, float *buf)
{
    const sdpa_context_t *c = job->ctx;
    int64_t sq = c->queries, sk = c->keys, d = c->head_dim, dv = c->value_dim;
    float *p = buf, *ds = p + sq * sk, *q = ds + sq * sk, *k = q + sq * d,
          *v = k + sk * d, *d_o = v + sk * dv, *dq = d_o + sq * dv, *dk = dq + sq * d,
          *dvb = dk + sk * d;
    pack(&c->t[IN_Q], job->in[IN_Q], b, h, q);
    pack(&c->t[IN_K], job->in[IN_K], b, h, k);
    pack(&c->t[IN_V], job->in[IN_V], b, h, v);
    pack(&c->t[IN_DO], job->in[IN_DO], b, h, d_o);
    /* BLAS may skip a product with an empty inner dim: start from zeros */
    memset(dq, 0, (size_t)(sq * d + sk * d + sk * dv) * sizeof(float));
    if (sq > 0 && sk > 0) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)sq, (blasint)sk,
                    (blasint)d, c->scale, q, ld(d), k, ld(d), 0.0f, p, ld(sk));
        for (int64_t i = 0; i < sq; i++)
            softmax_row(p + i * sk, c->causal && i + 1 < sk ? i + 1 : sk, sk);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)sq, (blasint)sk,
                    (blasint)dv, 1.0f, d_o, ld(dv), v, ld(dv), 0.0f, ds, ld(sk));
        score_gradients(p, ds, sq, sk);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)sk, (blasint)dv,
                    (blasint)sq, 1.0f, p, ld(sk), d_o, ld(dv), 0.0f, dvb, ld(dv));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)sq, (blasint)d,
                    (blasint)sk, c->scale, ds, ld(sk), k, ld(d), 0.0f, dq, ld(d));
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)sk, (blasint)d,
                    (blasint)sq, c->scale, ds, ld(sk), q, ld(d), 0.0f, dk, ld(d));
    }
    unpack(&c->t[OUT_DQ], job->out[0], b, h, dq);
    unpack(&c->t[OUT_DK], job->out[1], b, h, dk);
    unpack(&c->t[OUT_DV], job->out[2], b, h, dvb);
}

static void sdpa_pairs(void *arg, int64_t begin, int64_t end)
{
    const sdpa_job_t *job = arg;
    const sdpa_context_t *c = job->ctx;
    int64_t pairs = c->batch * c->heads;
    /* cpu_parallel_for's range t of T begins at pairs * t / T rounded
     * down, so t is begin * T / pairs rounded up: its buffers. */
    int64_t t = (begin * c->threads + pairs - 1) / pairs;
    float *buf = job->buffers + (size_t)t * c->floats_per_thread;
    for (int64_t r = begin; r < end; r++)
        sdpa_pair(job, r / c->heads, r % c->heads, buf);
}

static void *pointer_of(const cdnn_exec_args_t *args, int64_t uid)
{
    for (int32_t i = 0; i < args->count; i++)
        if (args->uids[i] == uid)
            return args->ptrs[i];
    return NULL;
}

static cdnn_status_t sdpa_execute(void *context, const cdnn_exec_args_t *args)
{
    const sdpa_context_t *ctx = context;
    sdpa_job_t job = {.ctx = ctx};
    for (int i = 0; i < SDPA_TENSORS; i++) {
        void *ptr = pointer_of(args, ctx->t[i].uid);
        if (!ptr)
            return sdk_fail(CDNN_STATUS_BAD_PARAM, "tensor uid %lld has no pointer in "
                            "the variant pack", (long long)ctx->t[i].uid);
        if (i < OUT_DQ)
            job.in[i] = ptr;
        else
            job.out[i - OUT_DQ] = ptr;
    }
    if (ctx->ws.bytes && !args->workspace)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "the plan needs %zu bytes of workspace "
                        "but none was given", ctx->ws.bytes);
    job.buffers = ctx->ws.bytes ? cpu_ws_at(args->workspace, ctx->buffer_offset) : NULL;
    int64_t pairs = ctx->batch * ctx->heads;
    if (pairs > 0)
        cpu_parallel_for(ctx->threads, pairs, sdpa_pairs, &job);
    return CDNN_STATUS_SUCCESS;
}

const cpu_engine_t cpu_sdpa_bwd_engine = {
    .applicable = sdpa_applicable,
    .create = sdpa_create,
    .workspace_size = sdpa_workspace_size,
    .execute = sdpa_execute,
    .destroy = sdpa_destroy,
};
