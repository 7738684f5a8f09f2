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

static void sdpa_reference(const sdpa_run_t *r, check_t *check, tensor_t *o) {
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
                                  elem_epsilon(p->o_type) * fabs(ref) + ldexp(1.0, -16));
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
    sdpa_reference(&r, check, &r.o);
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
