/*
 * test_sdpa.c -- "cuda-sdpa-v1" against an f64 reference (the full score
 * matrix, an exact softmax, then P V).
 *
 * Cases: a single query and key; odd lengths that leave partial query
 * blocks and key tiles; causal top-left (PyTorch's is_causal) and
 * bottom-right (causal_offset = kv_len - q_len); grouped-query attention
 * (8 query heads on 2 key/value heads); value_dim != head_dim; head dims
 * 8 to 256; BHSD-packed and BSHD (sequence-major) layouts; f32, f16 and
 * bf16 in every role.
 * Tolerance: eps(o_type) * |ref| + 2^-16: f32 dot products of <= 256 O(1)
 * terms, expf, and averages of values in [-1, 1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuda_kernel.h"
#include "sdpa_tma.h"
#include "tests.h"

typedef struct sdpa_case {
    int64_t batch, heads, kv_heads, q_len, kv_len, head_dim, value_dim;
    int causal, bottom_right, seq_major;
} sdpa_case_t;

static const sdpa_case_t cases[] = {
    {1, 1, 1, 1, 1, 8, 8, 0, 0, 0},        {2, 3, 3, 17, 33, 64, 64, 0, 0, 1},
    {1, 2, 2, 100, 100, 128, 128, 1, 0, 0}, {1, 8, 2, 37, 70, 80, 40, 1, 1, 1},
    {2, 2, 1, 9, 300, 32, 96, 0, 0, 0},     {1, 1, 1, 65, 65, 256, 256, 1, 0, 1},
    {1, 4, 4, 1, 129, 128, 128, 1, 1, 0},
};
#define CASE_COUNT ((int)(sizeof cases / sizeof cases[0]))

/* Strides {batch, head, seq, feature} for a (heads x len x dim) tensor,
 * BHSD-packed or sequence-major (BSHD); returns the span. */
static int64_t sdpa_strides(const sdpa_case_t *c, int64_t heads, int64_t len, int64_t dim,
                            int64_t strides[4]) {
    strides[3] = 1;
    if (c->seq_major)
        strides[1] = dim, strides[2] = heads * dim;
    else
        strides[2] = dim, strides[1] = len * dim;
    strides[0] = heads * len * dim;
    return c->batch * heads * len * dim;
}

typedef struct sdpa_run {
    cdnn_cuda_sdpa_params_t p;
    tensor_t q, k, v, o;
} sdpa_run_t;

static int64_t at(const int64_t s[4], int64_t b, int64_t h, int64_t i, int64_t d) {
    return b * s[0] + h * s[1] + i * s[2] + d * s[3];
}

/* input_tol: the error the kernel may add per unit of |v| (its rounding of
 * the probabilities to the inputs' type; 0 where it keeps them in f32). */
static void sdpa_reference(const sdpa_run_t *r, check_t *check, tensor_t *o, double input_tol) {
    const cdnn_cuda_sdpa_params_t *p = &r->p;
    double *weights = malloc((size_t)p->kv_len * sizeof *weights);
    if (!weights)
        exit(1);
    for (int64_t b = 0; b < p->batch; ++b)
        for (int64_t h = 0; h < p->heads; ++h) {
            const int64_t g = h / (p->heads / p->kv_heads);
            for (int64_t i = 0; i < p->q_len; ++i) {
                double max = -INFINITY, sum = 0;
                for (int64_t j = 0; j < p->kv_len; ++j) {
                    double dot = 0;
                    for (int64_t d = 0; d < p->head_dim; ++d)
                        dot += tensor_get(&r->q, at(p->q_strides, b, h, i, d)) *
                               tensor_get(&r->k, at(p->k_strides, b, g, j, d));
                    const int visible = !p->causal || j <= i + p->causal_offset;
                    weights[j] = visible ? dot * p->scale : -INFINITY;
                    max = fmax(max, weights[j]);
                }
                for (int64_t j = 0; j < p->kv_len; ++j)
                    sum += (weights[j] = exp(weights[j] - max));
                for (int64_t d = 0; d < p->value_dim; ++d) {
                    double ref = 0;
                    for (int64_t j = 0; j < p->kv_len; ++j)
                        ref += weights[j] * tensor_get(&r->v, at(p->v_strides, b, g, j, d));
                    ref /= sum;
                    check_element(check, o, at(p->o_strides, b, h, i, d), ref,
                                  elem_epsilon(p->o_type) * fabs(ref) + input_tol +
                                      ldexp(1.0, -16));
                }
            }
        }
    free(weights);
    check_untouched(check, o);
}

static void sdpa_case(test_state_t *state, sdk_cu_function fn, int n, check_t *check) {
    const gpu_t *gpu = state->gpu;
    const sdpa_case_t *c = &cases[n];
    sdpa_run_t r;
    memset(&r, 0, sizeof r);
    cdnn_cuda_sdpa_params_t *p = &r.p;
    *p = (cdnn_cuda_sdpa_params_t){
        .batch = c->batch, .heads = c->heads, .kv_heads = c->kv_heads, .q_len = c->q_len,
        .kv_len = c->kv_len, .head_dim = c->head_dim, .value_dim = c->value_dim,
        .causal = c->causal, .causal_offset = c->bottom_right ? c->kv_len - c->q_len : 0,
        .scale = (float)(1.0 / sqrt((double)c->head_dim)),
        .q_type = 1 + n % 3, .k_type = 1 + (n + 1) % 3, .v_type = 1 + (n + 2) % 3,
        .o_type = 1 + (n + 1) % 3};
    const int64_t q_span = sdpa_strides(c, c->heads, c->q_len, c->head_dim, p->q_strides);
    const int64_t k_span = sdpa_strides(c, c->kv_heads, c->kv_len, c->head_dim, p->k_strides);
    const int64_t v_span = sdpa_strides(c, c->kv_heads, c->kv_len, c->value_dim, p->v_strides);
    const int64_t o_span = sdpa_strides(c, c->heads, c->q_len, c->value_dim, p->o_strides);
    /* Queries up to +-2 make the softmax far from uniform. */
    r.q = tensor_random(gpu, &state->rng, p->q_type, q_span, -2, 2);
    r.k = tensor_random(gpu, &state->rng, p->k_type, k_span, -2, 2);
    r.v = tensor_random(gpu, &state->rng, p->v_type, v_span, -1, 1);
    r.o = tensor_poisoned(gpu, p->o_type, o_span);
    p->q = (const void *)(uintptr_t)r.q.device;
    p->k = (const void *)(uintptr_t)r.k.device;
    p->v = (const void *)(uintptr_t)r.v.device;
    p->o = (void *)(uintptr_t)r.o.device;
    gpu_launch(gpu, fn, (unsigned)((c->q_len + CDNN_CUDA_SDPA_ROWS_PER_BLOCK - 1) / CDNN_CUDA_SDPA_ROWS_PER_BLOCK),
               (unsigned)c->heads, (unsigned)c->batch, 32 * CDNN_CUDA_SDPA_ROWS_PER_BLOCK,
               (unsigned)CDNN_CUDA_SDPA_SMEM(c->head_dim, c->value_dim), p);
    gpu_sync(gpu);
    tensor_fetch(gpu, &r.o);
    sdpa_reference(&r, check, &r.o, 0.0);
    tensor_free(gpu, &r.q);
    tensor_free(gpu, &r.k);
    tensor_free(gpu, &r.v);
    tensor_free(gpu, &r.o);
}

void test_sdpa(test_state_t *state, sdk_cu_module module) {
    sdk_cu_function fn = gpu_function(state->gpu, module, "cdnn_cuda_sdpa");
    check_t check = {0};
    for (int n = 0; n < CASE_COUNT; ++n)
        sdpa_case(state, fn, n, &check);
    test_report(state, "cdnn_cuda_sdpa", CASE_COUNT, &check);
}

/* ---- the Hopper flash-attention kernels (sdpa_wgmma.cu): TMA-fed wgmma ---------------------
 *
 * Every case runs on each kernel at the kernel's dtype and head dim (q, k
 * and v of that type; o of that type, f32 or the other 16-bit type).
 * Lengths that leave partial query blocks and key tiles, one query and one
 * key, more queries than keys, enough tiles to wrap the ring several
 * times, keys long enough to split the heads into L2 groups; causal
 * top-left and bottom-right; grouped-query heads; BHSD and BSHD layouts.
 * Tolerance: the kernel rounds the probabilities to the inputs' type before
 * P V, an error of at most eps(type) * max|v| = eps(type) per output,
 * twice that allowed; then the usual eps(o_type) * |ref| + 2^-16. */
typedef struct flash_case {
    int64_t batch, heads, kv_heads, q_len, kv_len;
    int causal, bottom_right, seq_major, o_kind; /* o: 0 the kernel's type, 1 f32, 2 the other */
} flash_case_t;

static const flash_case_t flash_cases[] = {
    {1, 2, 2, 1, 1, 0, 0, 0, 0},       {2, 3, 3, 200, 333, 0, 0, 1, 0},
    {1, 2, 2, 300, 300, 1, 0, 0, 1},   {1, 4, 2, 129, 257, 1, 1, 1, 0},
    {2, 2, 2, 257, 100, 1, 0, 0, 2},   {1, 1, 1, 130, 130, 1, 0, 1, 0},
    {1, 2, 2, 640, 640, 1, 0, 0, 0},   {1, 1, 1, 700, 1000, 0, 0, 1, 0},
    /* keys long enough that the kernel groups the heads for L2 (at D 128
     * two a group, the last group short) */
    {1, 5, 5, 1, 17000, 0, 0, 0, 0},   {1, 5, 5, 3, 17000, 1, 1, 1, 0},
};
#define FLASH_CASE_COUNT ((int)(sizeof flash_cases / sizeof flash_cases[0]))

static void flash_case(test_state_t *state, sdk_cu_function fn, int32_t dtype, int64_t d,
                       int n, check_t *check) {
    const gpu_t *gpu = state->gpu;
    const flash_case_t *f = &flash_cases[n];
    const sdpa_case_t c = {f->batch, f->heads, f->kv_heads, f->q_len, f->kv_len, d, d,
                           f->causal, f->bottom_right, f->seq_major};
    const int32_t other = dtype == CDNN_CUDA_BF16 ? CDNN_CUDA_F16 : CDNN_CUDA_BF16;
    sdpa_run_t r;
    memset(&r, 0, sizeof r);
    cdnn_cuda_sdpa_params_t *p = &r.p;
    *p = (cdnn_cuda_sdpa_params_t){
        .batch = c.batch, .heads = c.heads, .kv_heads = c.kv_heads, .q_len = c.q_len,
        .kv_len = c.kv_len, .head_dim = d, .value_dim = d, .causal = c.causal,
        .causal_offset = c.bottom_right ? c.kv_len - c.q_len : 0,
        .scale = (float)(1.0 / sqrt((double)d)), .q_type = dtype, .k_type = dtype,
        .v_type = dtype,
        .o_type = f->o_kind == 0 ? dtype : f->o_kind == 1 ? CDNN_CUDA_F32 : other};
    const int64_t q_span = sdpa_strides(&c, c.heads, c.q_len, d, p->q_strides);
    const int64_t k_span = sdpa_strides(&c, c.kv_heads, c.kv_len, d, p->k_strides);
    const int64_t v_span = sdpa_strides(&c, c.kv_heads, c.kv_len, d, p->v_strides);
    const int64_t o_span = sdpa_strides(&c, c.heads, c.q_len, d, p->o_strides);
    r.q = tensor_random(gpu, &state->rng, dtype, q_span, -2, 2);
    r.k = tensor_random(gpu, &state->rng, dtype, k_span, -2, 2);
    r.v = tensor_random(gpu, &state->rng, dtype, v_span, -1, 1);
    r.o = tensor_poisoned(gpu, p->o_type, o_span);
    p->q = (const void *)(uintptr_t)r.q.device;
    p->k = (const void *)(uintptr_t)r.k.device;
    p->v = (const void *)(uintptr_t)r.v.device;
    p->o = (void *)(uintptr_t)r.o.device;
    cdnn_cuda_sdpa_tma_params_t t;
    memset(&t, 0, sizeof t);
    t.sdpa = *p;
    const char *why = cdnn_cuda_sdpa_tma_refusal(&t.sdpa, dtype, d, 1);
    if (why) {
        check->bad++;
        snprintf(check->first_bad, sizeof check->first_bad, "case %d refused: %s", n, why);
    } else {
        gpu_check(gpu, cdnn_cuda_sdpa_tma_encode(&t, gpu->cu->tensor_map_encode_tiled),
                  "cuTensorMapEncodeTiled");
        gpu_launch(gpu, fn, (unsigned)cdnn_cuda_sdpa_wgmma_blocks(p), 1, 1,
                   CDNN_CUDA_SDPA_WGMMA_THREADS, (unsigned)CDNN_CUDA_SDPA_WGMMA_SMEM(d), &t);
        gpu_sync(gpu);
        tensor_fetch(gpu, &r.o);
        sdpa_reference(&r, check, &r.o, 2.0 * elem_epsilon(dtype));
    }
    tensor_free(gpu, &r.q);
    tensor_free(gpu, &r.k);
    tensor_free(gpu, &r.v);
    tensor_free(gpu, &r.o);
}

/* Layouts TMA cannot take are refused, not run. */
static void flash_refusals(test_state_t *state) {
    check_t check = {0};
    check.compared = 4;
    cdnn_cuda_sdpa_params_t p = {.batch = 1, .heads = 2, .kv_heads = 2, .q_len = 5, .kv_len = 7,
                                 .head_dim = 64, .value_dim = 64,
                                 .q_strides = {640, 320, 64, 1}, .k_strides = {896, 448, 64, 1},
                                 .v_strides = {896, 448, 64, 1}, .q_type = CDNN_CUDA_BF16,
                                 .k_type = CDNN_CUDA_BF16, .v_type = CDNN_CUDA_BF16};
    if (cdnn_cuda_sdpa_tma_refusal(&p, CDNN_CUDA_BF16, 64, 0))
        check.bad++, snprintf(check.first_bad, sizeof check.first_bad, "packed BHSD refused");
    p.k_strides[2] = 68; /* a row pitch of 136 bytes */
    if (!cdnn_cuda_sdpa_tma_refusal(&p, CDNN_CUDA_BF16, 64, 0))
        check.bad++, snprintf(check.first_bad, sizeof check.first_bad, "pitch 68 taken");
    p.k_strides[2] = 64, p.v_strides[3] = 2;
    if (!cdnn_cuda_sdpa_tma_refusal(&p, CDNN_CUDA_BF16, 64, 0))
        check.bad++, snprintf(check.first_bad, sizeof check.first_bad, "v stride 2 taken");
    p.v_strides[3] = 1, p.q = (const void *)(uintptr_t)8;
    if (!cdnn_cuda_sdpa_tma_refusal(&p, CDNN_CUDA_BF16, 64, 1))
        check.bad++, snprintf(check.first_bad, sizeof check.first_bad, "misaligned q taken");
    test_report(state, "sdpa_wgmma refusals", 4, &check);
}

void test_sdpa_wgmma(test_state_t *state, sdk_cu_module module) {
    flash_refusals(state);
    for (int k = 0; k < 4; ++k) {
        const int32_t dtype = k < 2 ? CDNN_CUDA_BF16 : CDNN_CUDA_F16;
        const int64_t d = k % 2 ? 128 : 64;
        char symbol[64];
        snprintf(symbol, sizeof symbol, "cdnn_cuda_sdpa_wgmma_%s_d%d",
                 dtype == CDNN_CUDA_BF16 ? "bf16" : "f16", (int)d);
        sdk_cu_function fn = gpu_function(state->gpu, module, symbol);
        gpu_check(state->gpu,
                  state->gpu->cu->func_set_attribute(fn, GPU_FUNC_MAX_DYNAMIC_SHARED,
                                                     (int)CDNN_CUDA_SDPA_WGMMA_SMEM(d)),
                  "cuFuncSetAttribute");
        check_t check = {0};
        for (int n = 0; n < FLASH_CASE_COUNT; ++n)
            flash_case(state, fn, dtype, d, n, &check);
        test_report(state, symbol, FLASH_CASE_COUNT, &check);
    }
}
