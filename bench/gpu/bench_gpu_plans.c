/*
 * bench_gpu_plans.c -- cdnn plans on cuda:0 as a user runs them: built
 * through the public API with benchmarking (so the plan runs the candidate
 * that device timing chose), tensors from cdnn_memory_alloc, executions
 * timed between CUDA events on the handle's stream.  Each output is checked
 * on sampled rows or elements against an f64 computation here.
 *
 *   bench_gpu_plans [REPS]
 *
 * One line per case, for bench/gpu/plans.py to put next to PyTorch:
 *   plan OP SHAPE ENGINE MS CALL_MS RATE UNIT ERR
 * and, with BENCH_GPU_PLANS_SAVE=DIR, the chosen plan saved (PLAN form) for
 * plans.py to load in its own process and time interleaved with PyTorch:
 *   saved OP SHAPE PATH
 * The tensors' uids are the same in every case: 1 the first input (x, a,
 * q), 2 the second (the filter, b, k, the norm's scale), 3 the third (the
 * bias, v, layer-norm's shift), 4 the residual, 9 the output; layouts as in
 * the graphs below (row-major, conv channels-last).
 * MS is an execution's time back to back (executions enqueued without
 * waiting), CALL_MS with the stream drained after each (event_timing.h);
 * RATE is GB/s of compulsory traffic (each input read once, each output
 * written once) or TFLOP/s, at MS; ERR is the worst |got - ref| / tolerance
 * over the samples (<= 1 passes).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn/cdnn.h>
#include <cdnn_sdk/cuda.h>
#include <cdnn_sdk/numeric.h>

#include "bench_common.h"
#include "event_timing.h"

enum { MAX_IO = 8, SAMPLES = 64 };

typedef enum op {
    OP_LAYERNORM, OP_RMSNORM, OP_SOFTMAX, OP_ADD_RELU, OP_REDUCE_SUM, OP_REDUCE_SUM_DIM0,
    OP_GEMM, OP_MATMUL_BIAS_GELU, OP_MATMUL_BIAS_GELU_TANH, OP_MATMUL_BIAS_GELU_RESIDUAL,
    OP_MATMUL_SMALL_M, OP_CONV, OP_CONV_BIAS_RELU, OP_SDPA, OP_SDPA_CAUSAL
} op_t;

/* dims: norms, softmax, add_relu, sums {rows, cols}; matmuls {m, n, k}; conv
 * {n, c, h, w, k} with an r x r filter (3 where 0), padding r / 2 and
 * `stride` (1 where 0); attention {batch, heads, seq, head dim}. */
typedef struct bench_case {
    op_t op;
    const char *name;
    cdnn_data_type_t type;
    int64_t dims[5];
    int64_t filter, stride;
} bench_case_t;

#define BF16 CDNN_DATA_TYPE_BF16
#define F16 CDNN_DATA_TYPE_F16
/* X(n, c, h, w, k, filter, stride): the 7x7 stride-2 stem, the 3x3 of each
 * stage, the 1x1 reductions and one expansion, the stride-2 3x3 and 1x1
 * projection of a stage's first block. */
#define RESNET50_CONVS(X)                                                                      \
    X(64, 3, 224, 224, 64, 7, 2) X(64, 64, 56, 56, 64, 0, 0) X(64, 128, 28, 28, 128, 0, 0)     \
    X(64, 256, 14, 14, 256, 0, 0) X(64, 512, 7, 7, 512, 0, 0) X(64, 64, 56, 56, 256, 1, 0)     \
    X(64, 256, 56, 56, 64, 1, 0) X(64, 512, 28, 28, 128, 1, 0) X(64, 1024, 14, 14, 256, 1, 0) \
    X(64, 2048, 7, 7, 512, 1, 0) X(64, 128, 56, 56, 128, 3, 2) X(64, 256, 56, 56, 512, 1, 2)
#define FUSED_CONV(n, c, h, w, k, r, s) {OP_CONV_BIAS_RELU, "conv_bias_relu", F16, {n, c, h, w, k}, r, s},
#define BARE_CONV(n, c, h, w, k, r, s) {OP_CONV, "convolution", F16, {n, c, h, w, k}, r, s},
static const bench_case_t cases[] = {
    {OP_LAYERNORM, "layernorm", BF16, {16384, 4096}},
    {OP_LAYERNORM, "layernorm", BF16, {32768, 8192}},
    {OP_RMSNORM, "rmsnorm", BF16, {16384, 4096}},
    {OP_RMSNORM, "rmsnorm", BF16, {32768, 8192}},
    {OP_SOFTMAX, "softmax", BF16, {16384, 4096}},
    {OP_SOFTMAX, "softmax", BF16, {32768, 8192}},
    {OP_ADD_RELU, "add_relu", BF16, {16384, 4096}},
    {OP_ADD_RELU, "add_relu", BF16, {32768, 8192}},
    /* Sums of each row (the last axis), and of each column (the first). */
    {OP_REDUCE_SUM, "reduce_sum", BF16, {16384, 4096}},
    {OP_REDUCE_SUM, "reduce_sum", BF16, {32768, 8192}},
    {OP_REDUCE_SUM_DIM0, "reduce_sum_dim0", BF16, {16384, 4096}},
    /* Issue 11's GEMM shapes, y = a b with no epilogue. */
    {OP_GEMM, "gemm", BF16, {4096, 4096, 4096}},
    {OP_GEMM, "gemm", BF16, {8192, 8192, 8192}},
    {OP_GEMM, "gemm", BF16, {4096, 14336, 4096}},
    {OP_GEMM, "gemm_f16", F16, {4096, 4096, 4096}},
    {OP_GEMM, "gemm_f16", F16, {8192, 8192, 8192}},
    {OP_GEMM, "gemm_f16", F16, {4096, 14336, 4096}},
    /* One kernel each: gelu (erf), the tanh form cuBLASLt's epilogue
     * computes, and erf gelu with a residual added after it. */
    {OP_MATMUL_BIAS_GELU, "matmul_bias_gelu", BF16, {8192, 8192, 8192}},
    {OP_MATMUL_BIAS_GELU_TANH, "matmul_bias_gelu_tanh", BF16, {8192, 8192, 8192}},
    {OP_MATMUL_BIAS_GELU_RESIDUAL, "matmul_bias_gelu_residual", BF16, {8192, 8192, 8192}},
    /* A decode step: memory-bound on b, timed in GB/s against the copy. */
    {OP_MATMUL_SMALL_M, "matmul_small_m", BF16, {16, 8192, 8192}},
    {OP_MATMUL_SMALL_M, "matmul_small_m_f16", F16, {16, 8192, 8192}},
    /* ResNet-50's convolutions at N 64 (issue 11), with bias and relu fused
     * and bare. */
    RESNET50_CONVS(FUSED_CONV)
    RESNET50_CONVS(BARE_CONV)
    {OP_SDPA, "sdpa", BF16, {8, 16, 4096, 128}},
    {OP_SDPA_CAUSAL, "sdpa_causal", BF16, {8, 16, 4096, 128}},
};

static const double EPSILON = 1e-5;

/* ---- graphs (16-bit in and out, f32 inside); uid 9 is the output ------- */

static void tensor(cdnn_graph_t *g, cdnn_data_type_t type, int64_t uid, int rank,
                   const int64_t *dims, const int64_t *strides)
{
    CHECK(cdnn_graph_tensor(g, uid, NULL, type, rank, dims, strides));
}

static void virtual_f32(cdnn_graph_t *g, int64_t uid)
{
    CHECK(cdnn_graph_tensor(g, uid, NULL, CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    CHECK(cdnn_graph_tensor_set_virtual(g, uid));
}

/* NCHW dims with channels-last (NHWC) strides. */
static void channels_last(const int64_t d[4], int64_t s[4])
{
    s[1] = 1;
    s[3] = d[1];
    s[2] = d[3] * d[1];
    s[0] = d[2] * s[2];
}

static void make_rows(cdnn_graph_t *g, const bench_case_t *c)
{
    const cdnn_data_type_t t = c->type;
    const int64_t x[] = {c->dims[0], c->dims[1]}, row[] = {1, c->dims[1]},
                  col[] = {c->dims[0], 1};
    cdnn_pointwise_attr_t add, relu;
    tensor(g, t, 1, 2, x, NULL);
    tensor(g, t, 9, 2, c->op == OP_REDUCE_SUM ? col : c->op == OP_REDUCE_SUM_DIM0 ? row : x,
           NULL);
    switch (c->op) {
    case OP_REDUCE_SUM:
    case OP_REDUCE_SUM_DIM0:
        CHECK(cdnn_graph_reduction(g, "sum", CDNN_REDUCE_ADD, 1, 9));
        break;
    case OP_LAYERNORM:
        tensor(g, t, 2, 2, row, NULL);
        tensor(g, t, 3, 2, row, NULL);
        CHECK(cdnn_graph_layernorm(g, "ln", EPSILON, 1, 2, 3, 9, CDNN_UID_NONE,
                                   CDNN_UID_NONE));
        break;
    case OP_RMSNORM:
        tensor(g, t, 2, 2, row, NULL);
        CHECK(cdnn_graph_rmsnorm(g, "rms", EPSILON, 1, 2, CDNN_UID_NONE, 9, CDNN_UID_NONE));
        break;
    case OP_SOFTMAX:
        CHECK(cdnn_graph_softmax(g, "softmax", -1, 1, 9));
        break;
    default: /* OP_ADD_RELU */
        cdnn_pointwise_attr_init(&add, CDNN_PW_ADD);
        cdnn_pointwise_attr_init(&relu, CDNN_PW_RELU_FWD);
        tensor(g, t, 2, 2, x, NULL);
        virtual_f32(g, 3);
        CHECK(cdnn_graph_pointwise(g, "add", &add, 1, 2, CDNN_UID_NONE, 3));
        CHECK(cdnn_graph_pointwise(g, "relu", &relu, 3, CDNN_UID_NONE, CDNN_UID_NONE, 9));
    }
}

static int has_epilogue(op_t op)
{
    return op == OP_MATMUL_BIAS_GELU || op == OP_MATMUL_BIAS_GELU_TANH ||
           op == OP_MATMUL_BIAS_GELU_RESIDUAL;
}

static int is_matmul(op_t op)
{
    return op == OP_GEMM || op == OP_MATMUL_SMALL_M || has_epilogue(op);
}

/* y = a b, or y = gelu(a b + bias) (+ residual) with the f32 intermediates
 * virtual: one kernel where the matmul kernels fuse it. */
static void make_matmul(cdnn_graph_t *g, const bench_case_t *c)
{
    const int64_t m = c->dims[0], n = c->dims[1], k = c->dims[2];
    const int64_t a[] = {1, m, k}, b[] = {1, k, n}, bias[] = {1, 1, n}, y[] = {1, m, n};
    const int residual = c->op == OP_MATMUL_BIAS_GELU_RESIDUAL;
    cdnn_pointwise_attr_t add, gelu;
    cdnn_pointwise_attr_init(&add, CDNN_PW_ADD);
    cdnn_pointwise_attr_init(&gelu, c->op == OP_MATMUL_BIAS_GELU_TANH ? CDNN_PW_GELU_TANH_FWD
                                                                      : CDNN_PW_GELU_FWD);
    tensor(g, c->type, 1, 3, a, NULL);
    tensor(g, c->type, 2, 3, b, NULL);
    tensor(g, c->type, 9, 3, y, NULL);
    if (!has_epilogue(c->op)) {
        CHECK(cdnn_graph_matmul(g, "mm", 1, 2, 9));
        return;
    }
    tensor(g, c->type, 3, 3, bias, NULL);
    virtual_f32(g, 5);
    virtual_f32(g, 6);
    CHECK(cdnn_graph_matmul(g, "mm", 1, 2, 5));
    CHECK(cdnn_graph_pointwise(g, "bias", &add, 5, 3, CDNN_UID_NONE, 6));
    if (!residual) {
        CHECK(cdnn_graph_pointwise(g, "gelu", &gelu, 6, CDNN_UID_NONE, CDNN_UID_NONE, 9));
        return;
    }
    tensor(g, c->type, 4, 3, y, NULL);
    virtual_f32(g, 7);
    CHECK(cdnn_graph_pointwise(g, "gelu", &gelu, 6, CDNN_UID_NONE, CDNN_UID_NONE, 7));
    CHECK(cdnn_graph_pointwise(g, "residual", &add, 7, 4, CDNN_UID_NONE, 9));
}

/* The conv case's filter size, stride and output height and width. */
static int64_t conv_filter(const bench_case_t *c) { return c->filter ? c->filter : 3; }
static int64_t conv_stride(const bench_case_t *c) { return c->stride ? c->stride : 1; }
static int64_t conv_out(const bench_case_t *c, int64_t in)
{
    return (in + 2 * (conv_filter(c) / 2) - conv_filter(c)) / conv_stride(c) + 1;
}

/* y = conv(x, w), with "+ bias, relu" fused into the same graph for
 * OP_CONV_BIAS_RELU. */
static void make_conv(cdnn_graph_t *g, const bench_case_t *c)
{
    const int64_t *d = c->dims, r = conv_filter(c);
    const int64_t x[] = {d[0], d[1], d[2], d[3]}, w[] = {d[4], d[1], r, r},
                  b[] = {1, d[4], 1, 1}, y[] = {d[0], d[4], conv_out(c, d[2]), conv_out(c, d[3])};
    int64_t xs[4], ws[4], bs[4], ys[4];
    channels_last(x, xs);
    channels_last(w, ws);
    channels_last(b, bs);
    channels_last(y, ys);
    cdnn_conv_attr_t conv;
    cdnn_conv_attr_init(&conv, 2);
    conv.pre_padding[0] = conv.pre_padding[1] = r / 2;
    conv.post_padding[0] = conv.post_padding[1] = r / 2;
    conv.stride[0] = conv.stride[1] = conv_stride(c);
    tensor(g, c->type, 1, 4, x, xs);
    tensor(g, c->type, 2, 4, w, ws);
    tensor(g, c->type, 9, 4, y, ys);
    if (c->op == OP_CONV) {
        CHECK(cdnn_graph_conv_fwd(g, "conv", &conv, 1, 2, 9));
        return;
    }
    cdnn_pointwise_attr_t add, relu;
    cdnn_pointwise_attr_init(&add, CDNN_PW_ADD);
    cdnn_pointwise_attr_init(&relu, CDNN_PW_RELU_FWD);
    tensor(g, c->type, 3, 4, b, bs);
    virtual_f32(g, 4);
    virtual_f32(g, 5);
    CHECK(cdnn_graph_conv_fwd(g, "conv", &conv, 1, 2, 4));
    CHECK(cdnn_graph_pointwise(g, "bias", &add, 4, 3, CDNN_UID_NONE, 5));
    CHECK(cdnn_graph_pointwise(g, "relu", &relu, 5, CDNN_UID_NONE, CDNN_UID_NONE, 9));
}

static void make_sdpa(cdnn_graph_t *g, const bench_case_t *c)
{
    const cdnn_sdpa_attr_t attr = {.scale = 0, .causal = c->op == OP_SDPA_CAUSAL};
    for (int64_t uid = 1; uid <= 3; uid++)
        tensor(g, c->type, uid, 4, c->dims, NULL);
    tensor(g, c->type, 9, 4, c->dims, NULL);
    CHECK(cdnn_graph_sdpa_fwd(g, "sdpa", &attr, 1, 2, 3, 9));
}

static cdnn_graph_t *make_graph(const bench_case_t *c)
{
    cdnn_graph_t *g = NULL;
    CHECK(cdnn_graph_create(&g));
    if (is_matmul(c->op))
        make_matmul(g, c);
    else if (c->op == OP_CONV || c->op == OP_CONV_BIAS_RELU)
        make_conv(g, c);
    else if (c->op == OP_SDPA || c->op == OP_SDPA_CAUSAL)
        make_sdpa(g, c);
    else
        make_rows(g, c);
    CHECK(cdnn_graph_validate(g));
    return g;
}

/* ---- tensors ----------------------------------------------------------- */

typedef struct io {
    cdnn_data_type_t type; /* bf16 or f16 */
    int32_t count;
    cdnn_tensor_io_t info[MAX_IO];
    int64_t uids[MAX_IO];
    void *device[MAX_IO];
    uint16_t *host[MAX_IO];
} io_t;

static uint16_t *host_of(io_t *t, int64_t uid)
{
    for (int32_t i = 0; i < t->count; i++)
        if (t->uids[i] == uid)
            return t->host[i];
    fprintf(stderr, "bench_gpu_plans: the plan has no tensor %lld\n", (long long)uid);
    exit(1);
}

static uint16_t to_16(cdnn_data_type_t type, float v)
{
    return type == CDNN_DATA_TYPE_F16 ? cdnn_float_to_half(v) : cdnn_float_to_bf16(v);
}

/* Inputs uniform in [-1, 1) (norm scales in [0.75, 1.25), so that outputs
 * stay tame). */
static void fill(cdnn_data_type_t type, uint16_t *p, size_t n, uint32_t seed, int near_one)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        float u = (float)(seed >> 8) * 0x1p-23f - 1.0f;
        p[i] = to_16(type, near_one ? 1.0f + 0.25f * u : u);
    }
}

static void alloc_io(cdnn_handle_t *h, const cdnn_graph_t *g, const bench_case_t *c, io_t *t)
{
    memset(t, 0, sizeof *t);
    t->type = c->type;
    CHECK(cdnn_graph_io_tensors(g, t->info, MAX_IO, &t->count));
    for (int32_t i = 0; i < t->count; i++) {
        size_t bytes = t->info[i].span_bytes;
        t->uids[i] = t->info[i].uid;
        t->host[i] = xcalloc(bytes / 2, 2);
        CHECK(cdnn_memory_alloc(h, bytes, &t->device[i]));
        if (t->info[i].is_output)
            continue;
        int scale = (c->op == OP_LAYERNORM || c->op == OP_RMSNORM) && t->uids[i] == 2;
        fill(c->type, t->host[i], bytes / 2, 77u * (uint32_t)t->uids[i] + 1u, scale);
        CHECK(cdnn_memory_upload(h, t->device[i], t->host[i], bytes));
    }
}

static void free_io(cdnn_handle_t *h, io_t *t)
{
    for (int32_t i = 0; i < t->count; i++) {
        cdnn_memory_free(h, t->device[i]);
        free(t->host[i]);
    }
}

/* ---- references (f64) on samples --------------------------------------- */

static double at(const io_t *t, const uint16_t *p, size_t i)
{
    return t->type == CDNN_DATA_TYPE_F16 ? cdnn_half_to_float(p[i]) : cdnn_bf16_to_float(p[i]);
}

/* Two units in the last place of the larger of the value and 1: bf16
 * keeps 8 significant bits, f16 11 (the tolerance is bf16's for both). */
static double tolerance(double ref)
{
    return 0x1p-7 * fmax(fabs(ref), 1.0);
}

static size_t sample(int s, size_t n)
{
    return (size_t)((uint64_t)s * 2654435761u % (uint64_t)n);
}

static double check_rows(const bench_case_t *c, io_t *t)
{
    const int layer = c->op == OP_LAYERNORM, rms = c->op == OP_RMSNORM;
    const uint16_t *x = host_of(t, 1), *y = host_of(t, 9);
    const uint16_t *scale = layer || rms ? host_of(t, 2) : NULL,
                   *bias = layer ? host_of(t, 3) : NULL;
    const size_t n = (size_t)c->dims[1];
    double worst = 0;
    for (int s = 0; s < SAMPLES; s++) {
        const size_t r = sample(s, (size_t)c->dims[0]);
        double mean = 0, sq = 0, max = -INFINITY, sum = 0;
        for (size_t j = 0; j < n; j++) {
            mean += at(t, x, r * n + j) / (double)n;
            max = fmax(max, at(t, x, r * n + j));
        }
        for (size_t j = 0; j < n; j++) {
            double d = at(t, x, r * n + j) - (layer ? mean : 0);
            sq += d * d / (double)n;
            sum += exp(at(t, x, r * n + j) - max);
        }
        double inv = 1 / sqrt(sq + EPSILON);
        for (size_t j = 0; j < n; j++) {
            double v = at(t, x, r * n + j), ref;
            if (c->op == OP_SOFTMAX)
                ref = exp(v - max) / sum;
            else
                ref = (v - (layer ? mean : 0)) * inv * at(t, scale, j) +
                      (layer ? at(t, bias, j) : 0);
            worst = fmax(worst, fabs(at(t, y, r * n + j) - ref) / tolerance(ref));
        }
    }
    return worst;
}

static double check_add_relu(const bench_case_t *c, io_t *t)
{
    const uint16_t *a = host_of(t, 1), *b = host_of(t, 2), *y = host_of(t, 9);
    double worst = 0;
    for (int s = 0; s < 4096; s++) {
        size_t i = sample(s, (size_t)(c->dims[0] * c->dims[1]));
        double ref = fmax(at(t, a, i) + at(t, b, i), 0);
        worst = fmax(worst, fabs(at(t, y, i) - ref) / tolerance(ref));
    }
    return worst;
}

/* Sampled sums of rows (OP_REDUCE_SUM) or columns (the first axis). */
static double check_sum(const bench_case_t *c, io_t *t)
{
    const uint16_t *x = host_of(t, 1), *y = host_of(t, 9);
    const size_t rows = (size_t)c->dims[0], cols = (size_t)c->dims[1];
    const int by_row = c->op == OP_REDUCE_SUM;
    double worst = 0;
    for (int s = 0; s < SAMPLES; s++) {
        const size_t i = sample(s, by_row ? rows : cols);
        double ref = 0;
        for (size_t j = 0; j < (by_row ? cols : rows); j++)
            ref += at(t, x, by_row ? i * cols + j : j * cols + i);
        worst = fmax(worst, fabs(at(t, y, i) - ref) / tolerance(ref));
    }
    return worst;
}

/* gelu(x) = x Phi(x), or its tanh form (sqrt(2 / pi) = 0.79788...). */
static double gelu(double x, int tanh_form)
{
    if (tanh_form)
        return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}

static double check_matmul(const bench_case_t *c, io_t *t)
{
    const int epilogue = has_epilogue(c->op), tanh_form = c->op == OP_MATMUL_BIAS_GELU_TANH;
    const uint16_t *a = host_of(t, 1), *b = host_of(t, 2), *y = host_of(t, 9);
    const uint16_t *bias = epilogue ? host_of(t, 3) : NULL;
    const uint16_t *residual = c->op == OP_MATMUL_BIAS_GELU_RESIDUAL ? host_of(t, 4) : NULL;
    size_t m = (size_t)c->dims[0], n = (size_t)c->dims[1], k = (size_t)c->dims[2];
    double worst = 0;
    for (int s = 0; s < 256; s++) {
        size_t i = sample(s, m), j = (size_t)((uint64_t)s * 40503u % n);
        double acc = epilogue ? at(t, bias, j) : 0;
        for (size_t p = 0; p < k; p++)
            acc += at(t, a, i * k + p) * at(t, b, p * n + j);
        double ref = epilogue ? gelu(acc, tanh_form) : acc;
        if (residual)
            ref += at(t, residual, i * n + j);
        worst = fmax(worst, fabs(at(t, y, i * n + j) - ref) / tolerance(ref));
    }
    return worst;
}

/* NHWC x, KRSC filter (channels-last), NHWC y; r x r, padding r / 2. */
static double check_conv(const bench_case_t *c, io_t *t)
{
    const int fused = c->op == OP_CONV_BIAS_RELU;
    const uint16_t *x = host_of(t, 1), *w = host_of(t, 2), *bias = fused ? host_of(t, 3) : NULL,
                   *y = host_of(t, 9);
    const int64_t N = c->dims[0], C = c->dims[1], H = c->dims[2], W = c->dims[3],
                  K = c->dims[4], R = conv_filter(c), S = conv_stride(c);
    const int64_t P = conv_out(c, H), Q = conv_out(c, W);
    double worst = 0;
    for (int s = 0; s < 256; s++) {
        size_t o = sample(s, (size_t)(N * P * Q * K));
        int64_t k = (int64_t)o % K, pixel = (int64_t)o / K;
        int64_t ow = pixel % Q, oh = pixel / Q % P, n = pixel / Q / P;
        double acc = fused ? at(t, bias, (size_t)k) : 0;
        for (int64_t r = 0; r < R; r++)
            for (int64_t q = 0; q < R; q++) {
                int64_t ih = oh * S + r - R / 2, iw = ow * S + q - R / 2;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                    continue;
                for (int64_t ch = 0; ch < C; ch++)
                    acc += at(t, x, (size_t)(((n * H + ih) * W + iw) * C + ch)) *
                           at(t, w, (size_t)(((k * R + r) * R + q) * C + ch));
            }
        double ref = fused ? fmax(acc, 0) : acc;
        worst = fmax(worst, fabs(at(t, y, o) - ref) / tolerance(ref));
    }
    return worst;
}

/* o[b,h,i] = softmax_j(q_i . k_j / sqrt(D)) v_j over j (j <= i if causal). */
static double check_sdpa(const bench_case_t *c, io_t *t)
{
    const uint16_t *q = host_of(t, 1), *k = host_of(t, 2), *v = host_of(t, 3),
                   *o = host_of(t, 9);
    const size_t S = (size_t)c->dims[2], D = (size_t)c->dims[3];
    const size_t heads = (size_t)(c->dims[0] * c->dims[1]);
    double *p = xcalloc(S, sizeof *p), worst = 0;
    for (int s = 0; s < 16; s++) {
        size_t head = sample(s, heads), i = (size_t)((uint64_t)s * 40503u % S);
        size_t base = head * S * D, keys = c->op == OP_SDPA_CAUSAL ? i + 1 : S;
        double max = -INFINITY, sum = 0;
        for (size_t j = 0; j < keys; j++) {
            double dot = 0;
            for (size_t d = 0; d < D; d++)
                dot += at(t, q, base + i * D + d) * at(t, k, base + j * D + d);
            p[j] = dot / sqrt((double)D);
            max = fmax(max, p[j]);
        }
        for (size_t j = 0; j < keys; j++)
            sum += p[j] = exp(p[j] - max);
        for (size_t d = 0; d < D; d++) {
            double ref = 0;
            for (size_t j = 0; j < keys; j++)
                ref += p[j] / sum * at(t, v, base + j * D + d);
            worst = fmax(worst, fabs(at(t, o, base + i * D + d) - ref) / tolerance(ref));
        }
    }
    free(p);
    return worst;
}

static double check(const bench_case_t *c, io_t *t)
{
    switch (c->op) {
    case OP_ADD_RELU: return check_add_relu(c, t);
    case OP_REDUCE_SUM:
    case OP_REDUCE_SUM_DIM0: return check_sum(c, t);
    case OP_GEMM:
    case OP_MATMUL_BIAS_GELU:
    case OP_MATMUL_BIAS_GELU_TANH:
    case OP_MATMUL_BIAS_GELU_RESIDUAL:
    case OP_MATMUL_SMALL_M: return check_matmul(c, t);
    case OP_CONV:
    case OP_CONV_BIAS_RELU: return check_conv(c, t);
    case OP_SDPA:
    case OP_SDPA_CAUSAL: return check_sdpa(c, t);
    default: return check_rows(c, t);
    }
}

/* Floating-point work of the compute-bound cases (0 for the others). */
static double flops(const bench_case_t *c)
{
    const int64_t *d = c->dims;
    switch (c->op) {
    case OP_GEMM:
    case OP_MATMUL_BIAS_GELU:
    case OP_MATMUL_BIAS_GELU_TANH:
    case OP_MATMUL_BIAS_GELU_RESIDUAL: return 2.0 * (double)d[0] * (double)d[1] * (double)d[2];
    case OP_CONV:
    case OP_CONV_BIAS_RELU:
        return 2.0 * (double)(d[0] * conv_out(c, d[2]) * conv_out(c, d[3])) * (double)d[4] *
               (double)(d[1] * conv_filter(c) * conv_filter(c));
    case OP_SDPA: return 4.0 * (double)(d[0] * d[1]) * (double)(d[2] * d[2]) * (double)d[3];
    case OP_SDPA_CAUSAL:
        return 2.0 * (double)(d[0] * d[1]) * (double)(d[2] * d[2]) * (double)d[3];
    default: return 0;
    }
}

/* ---- timing ------------------------------------------------------------ */

/* The driver, with device 0's primary context -- the one a cuda:0 handle
 * runs in -- current on this thread, so that events are made in it. */
static const sdk_cuda_t *driver(void)
{
    static const sdk_cuda_t *cu;
    if (cu)
        return cu;
    const char *why = NULL;
    sdk_cu_device device;
    sdk_cu_context context;
    cu = sdk_cuda(&why);
    if (!cu || cu->device_get(&device, 0) || cu->primary_ctx_retain(&context, device) ||
        cu->ctx_set_current(context)) {
        fprintf(stderr, "bench_gpu_plans: no CUDA context for device 0: %s\n",
                why ? why : "the driver refused");
        exit(1);
    }
    return cu;
}

static void execute(const cdnn_graph_t *g, cdnn_handle_t *h, io_t *t, void *ws)
{
    CHECK(cdnn_graph_execute(g, h, t->count, t->uids, t->device, ws));
}

typedef struct plan_run {
    const cdnn_graph_t *graph;
    cdnn_handle_t *handle;
    io_t *io;
    void *workspace;
} plan_run_t;

static void run_plan(void *ctx)
{
    const plan_run_t *r = ctx;
    execute(r->graph, r->handle, r->io, r->workspace);
}

/* Both clocks of event_timing.h over the plan's executions. */
static bench_timing_t time_plan(const cdnn_graph_t *g, cdnn_handle_t *h, io_t *t, void *ws,
                                int reps)
{
    plan_run_t run = {g, h, t, ws};
    return bench_time_events(driver(), run_plan, &run, reps);
}

/* A candidate's name in one word: "engine" for its defaults, "engine#N"
 * for knob value N ("kernels:norm_cuda#3"). */
static void candidate_word(const char *name, char *out, size_t cap)
{
    const char *space = strchr(name, ' '), *value = strrchr(name, '=');
    int engine_length = space ? (int)(space - name) : (int)strlen(name);
    if (value)
        snprintf(out, cap, "%.*s#%d", engine_length, name, atoi(value + 1));
    else
        snprintf(out, cap, "%.*s", engine_length, name);
}

/* The candidate benchmarking chose, in one word. */
static void chosen_candidate(const cdnn_graph_t *g, char *out, size_t cap)
{
    cdnn_candidate_result_t r[64];
    int32_t count = 0, chosen = -1;
    CHECK(cdnn_graph_candidates(g, r, 64, &count, &chosen));
    if (chosen < 0 || chosen >= 64) {
        snprintf(out, cap, "?");
        return;
    }
    /* Every candidate's benchmarking time, on stderr (plans.py passes it
     * through): the chosen one must be the fastest. */
    for (int32_t i = 0; i < count && i < 64; i++)
        fprintf(stderr, "#   candidate %-44s %10.2f us%s\n", r[i].name, r[i].median_us,
                i == chosen ? "  <- chosen" : "");
    candidate_word(r[chosen].name, out, cap);
}

/* The case's dims as printed ("16384x4096"; a conv's end in x r x stride). */
static void case_shape(const bench_case_t *c, char *shape, size_t cap)
{
    int n = snprintf(shape, cap, "%lld", (long long)c->dims[0]);
    for (int i = 1; i < 5 && c->dims[i] && n > 0 && (size_t)n < cap; i++)
        n += snprintf(shape + n, cap - (size_t)n, "x%lld", (long long)c->dims[i]);
    if ((c->op == OP_CONV || c->op == OP_CONV_BIAS_RELU) && n > 0 && (size_t)n < cap)
        snprintf(shape + n, cap - (size_t)n, "x%lldx%lld", (long long)conv_filter(c),
                 (long long)conv_stride(c));
}

static void print_row(const bench_case_t *c, const cdnn_graph_t *g, const io_t *t,
                      bench_timing_t time, double err)
{
    char engine[128], shape[96];
    chosen_candidate(g, engine, sizeof engine);
    case_shape(c, shape, sizeof shape);
    double bytes = 0;
    for (int32_t i = 0; i < t->count; i++)
        bytes += (double)t->info[i].span_bytes;
    double ms = time.stream_ms;
    if (flops(c) > 0)
        printf("plan %s %s %s %.4f %.4f %.1f TFLOP/s %.3f\n", c->name, shape, engine, ms,
               time.call_ms, flops(c) / ms * 1e-9, err);
    else
        printf("plan %s %s %s %.4f %.4f %.1f GB/s %.3f\n", c->name, shape, engine, ms,
               time.call_ms, bytes / ms * 1e-6, err);
    fflush(stdout);
}

/* With BENCH_GPU_PLANS_SAVE=DIR, the chosen plan's bytes to DIR/NN-OP.cdpl
 * (NN the case's index) and a "saved" line naming it. */
static void save_plan(cdnn_graph_t *g, const bench_case_t *c, size_t index)
{
    const char *dir = getenv("BENCH_GPU_PLANS_SAVE");
    if (!dir)
        return;
    size_t size = 0;
    CHECK(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &size));
    void *bytes = xcalloc(size, 1);
    CHECK(cdnn_graph_save(g, CDNN_SAVE_PLAN, bytes, size, &size));
    char path[4096], shape[96];
    snprintf(path, sizeof path, "%s/%02zu-%s.cdpl", dir, index, c->name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "bench_gpu_plans: cannot write %s\n", path);
        exit(1);
    }
    free(bytes);
    case_shape(c, shape, sizeof shape);
    printf("saved %s %s %s\n", c->name, shape, path);
    fflush(stdout);
}

/* A plan of c pinned to one candidate of a benchmarking plan's list
 * ("engine" or "engine [knob=value]"); NULL where it does not build. */
static cdnn_graph_t *build_candidate(cdnn_handle_t *h, const bench_case_t *c,
                                     const cdnn_candidate_result_t *r)
{
    cdnn_graph_t *g = make_graph(c);
    cdnn_build_options_t *opts = NULL;
    CHECK(cdnn_build_options_create(&opts));
    CHECK(cdnn_build_options_pin_engine(opts, r->engine_id));
    const char *open = strchr(r->name, '['), *equals = strrchr(r->name, '=');
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (open && equals && equals > open) {
        char knob[128];
        snprintf(knob, sizeof knob, "%.*s", (int)(equals - open - 1), open + 1);
        st = cdnn_build_options_set_knob(opts, knob, atoll(equals + 1));
    }
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_build(g, h, opts);
    cdnn_build_options_destroy(opts);
    if (st != CDNN_STATUS_SUCCESS) {
        fprintf(stderr, "#   %s does not build alone: %s\n", r->name, cdnn_last_error());
        cdnn_graph_destroy(g);
        return NULL;
    }
    return g;
}

/* Benchmarking's choice against this harness's own clock: every candidate
 * the benchmarking plan timed is built pinned and timed here on the same
 * tensors, back to back as benchmarking times them; one line "choice OP CHOSEN MS FASTEST MS" for plans.py. */
static void check_choice(cdnn_handle_t *h, const bench_case_t *c, const cdnn_graph_t *plan,
                         io_t *t, int reps)
{
    cdnn_candidate_result_t r[64];
    int32_t count = 0, chosen = -1, fastest = -1;
    CHECK(cdnn_graph_candidates(plan, r, 64, &count, &chosen));
    if (chosen < 0 || count < 2)
        return;
    double ms[64], chosen_ms = 0;
    for (int32_t i = 0; i < count && i < 64; i++) {
        cdnn_graph_t *g = build_candidate(h, c, &r[i]);
        if (!g)
            continue;
        size_t ws_bytes = 0;
        void *ws = NULL;
        CHECK(cdnn_graph_workspace_size(g, &ws_bytes));
        if (ws_bytes)
            CHECK(cdnn_memory_alloc(h, ws_bytes, &ws));
        ms[i] = time_plan(g, h, t, ws, reps).stream_ms;
        fprintf(stderr, "#   harness    %-44s %10.2f us\n", r[i].name, ms[i] * 1e3);
        if (fastest < 0 || ms[i] < ms[fastest])
            fastest = i;
        if (i == chosen)
            chosen_ms = ms[i];
        cdnn_memory_free(h, ws);
        cdnn_graph_destroy(g);
    }
    if (fastest < 0 || chosen_ms <= 0)
        return;
    char chosen_word[128], fastest_word[128];
    candidate_word(r[chosen].name, chosen_word, sizeof chosen_word);
    candidate_word(r[fastest].name, fastest_word, sizeof fastest_word);
    printf("choice %s %s %.4f %s %.4f %d\n", c->name, chosen_word, chosen_ms, fastest_word,
           ms[fastest], count);
}

static void run_case(cdnn_handle_t *h, const bench_case_t *c, size_t index, int reps)
{
    cdnn_graph_t *g = make_graph(c);
    cdnn_build_options_t *opts = NULL;
    CHECK(cdnn_build_options_create(&opts));
    CHECK(cdnn_build_options_set_knob(opts, "global.benchmarking", 1));
    cdnn_status_t st = cdnn_graph_build(g, h, opts);
    cdnn_build_options_destroy(opts);
    if (st == CDNN_STATUS_NOT_SUPPORTED) { /* an op no engine here takes yet */
        printf("# %s: no engine on %s: %s\n", c->name, cdnn_handle_device(h),
               cdnn_last_error());
        cdnn_graph_destroy(g);
        return;
    }
    CHECK(st);
    io_t t;
    alloc_io(h, g, c, &t);
    /* Until it has chosen, a benchmarking plan needs the workspace of its
     * hungriest candidate; that covers the winner's after. */
    size_t ws_bytes = 0;
    void *ws = NULL;
    CHECK(cdnn_graph_workspace_size(g, &ws_bytes));
    if (ws_bytes)
        CHECK(cdnn_memory_alloc(h, ws_bytes, &ws));
    execute(g, h, &t, ws); /* benchmarking chooses here */
    CHECK(cdnn_handle_synchronize(h));
    bench_timing_t time = time_plan(g, h, &t, ws, reps);
    for (int32_t i = 0; i < t.count; i++)
        if (t.info[i].is_output)
            CHECK(cdnn_memory_download(h, t.host[i], t.device[i], t.info[i].span_bytes));
    print_row(c, g, &t, time, check(c, &t));
    save_plan(g, c, index);
    check_choice(h, c, g, &t, reps < 10 ? reps : 10);
    cdnn_memory_free(h, ws);
    free_io(h, &t);
    cdnn_graph_destroy(g);
}

/* BENCH_GPU_PLANS_ONLY=WORD,WORD...: the cases a word names, either OP
 * (every case of that op) or OP:SHAPE (one case), as the "plan" lines print
 * them: "gemm,conv_bias_relu:64x256x56x56x512x1x2". */
static int selected(const char *only, const bench_case_t *c)
{
    char shape[96];
    case_shape(c, shape, sizeof shape);
    const size_t name_length = strlen(c->name), shape_length = strlen(shape);
    for (const char *word = only;; word++) {
        const size_t length = strcspn(word, ",");
        if (length == name_length && !strncmp(word, c->name, length))
            return 1;
        if (length == name_length + 1 + shape_length && !strncmp(word, c->name, name_length) &&
            word[name_length] == ':' && !strncmp(word + name_length + 1, shape, shape_length))
            return 1;
        word += length;
        if (!*word)
            return 0;
    }
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    if (reps < 1 || reps > 10000) {
        fprintf(stderr, "usage: bench_gpu_plans [REPS (1-10000)]\n");
        return 2;
    }
    /* Each case is timed afresh: a recorded winner would skip the timing
     * that picks the candidate this bench reports. */
    setenv("CDNN_DISABLE_CACHE", "1", 1);
    cdnn_handle_t *h = NULL;
    CHECK(cdnn_handle_create(&h, "cuda:0"));
    printf("# %s\n", cdnn_handle_device_description(h));
    const char *only = getenv("BENCH_GPU_PLANS_ONLY");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!only || selected(only, &cases[i])) {
            fprintf(stderr, "# %s %lldx%lld\n", cases[i].name, (long long)cases[i].dims[0],
                    (long long)cases[i].dims[1]);
            run_case(h, &cases[i], i, reps);
        }
    cdnn_handle_destroy(h);
    return 0;
}
