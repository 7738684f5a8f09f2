/*
 * test_matmul.c -- "cuda-matmul-v1" kernels against an f64 reference.
 *
 * Each kernel runs a fixed list of cases: shapes with tails in every
 * dimension (1, 7, 17, 33, 65, 127, 129, ...), batches (one with B shared
 * across the batch, batch stride 0), A row-major, transposed or pitched
 * (aligned and not), B n-contiguous, k-contiguous, pitched or gathered
 * with a column stride of 2, C packed or pitched (the gaps must stay
 * poison), every output type, bias, activation and residual.
 *
 * Tolerance per element: eps(c_type) * |ref| for the final rounding, plus
 * (k + 4) * 2^-22 * mag for f32 accumulation, where mag = sum |a||b| +
 * |bias| + |residual| bounds what rounding in the sum can reach: a
 * generous bound for f32 sums, far below what a wrong index or a missed
 * tile produces (an error of the order of the values themselves).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cuda_kernel.h"
#include "matmul_tma.h"
#include "tests.h"

typedef struct mm_case {
    int64_t batch, m, n, k;
} mm_shape_t;

static const mm_shape_t shapes[] = {
    {1, 1, 1, 1},      {1, 17, 33, 7},    {1, 64, 64, 64},   {1, 127, 129, 65},
    {2, 100, 72, 40},  {3, 37, 45, 61},   {1, 256, 128, 512}, {1, 300, 200, 100},
    {1, 8, 520, 24},   {2, 130, 260, 33}, {1, 129, 257, 96},  {2, 64, 136, 72},
    /* decode-like: few rows, k long enough for every split of the small-m
     * kernels to take several steps (and an uneven last one) */
    {1, 16, 72, 1000}, {2, 5, 130, 700},  {1, 33, 64, 4104},
    /* the streaming small-m kernels' fast path (case 16: a row-major, b
     * n-contiguous, 8-aligned pitches; 13 rows, k's last group cut short,
     * a tile past n's end) over many groups a piece of k */
    {1, 16, 256, 1024}, {2, 13, 1032, 4104},
};
#define SHAPE_COUNT ((int)(sizeof shapes / sizeof shapes[0]))

/* Operand layouts, chosen per case. */
enum { A_ROW_MAJOR, A_TRANSPOSED, A_PITCH_ODD, A_PITCH_ALIGNED, A_LAYOUTS };
enum { B_N_CONTIGUOUS, B_K_CONTIGUOUS, B_K_PITCHED, B_GATHERED, B_LAYOUTS };

typedef struct mm_kernel {
    char symbol[64];
    int32_t ab_type;
    int tile_m, tile_n, threads;
    unsigned smem;
    int splits; /* blocks a tile (a cluster, each a split of k); 0 or 1: one */
    int cluster; /* wgmma: blocks a cluster (vertically adjacent tiles); 0 or 1: none */
    int store;   /* wgmma: C stored by TMA (the _store kernels, their own layouts) */
} mm_kernel_t;

static int64_t round_up8(int64_t v) { return (v + 7) / 8 * 8; }

static void a_strides(int layout, const mm_shape_t *s, int64_t st[3]) {
    int64_t pitch = s->k; /* elements per row (per column when transposed) */
    switch (layout) {
    case A_TRANSPOSED: pitch = s->m, st[1] = 1, st[2] = s->m; break;
    case A_PITCH_ODD: pitch = s->k + 3, st[1] = pitch, st[2] = 1; break;
    case A_PITCH_ALIGNED: pitch = round_up8(s->k) + 8, st[1] = pitch, st[2] = 1; break;
    default: st[1] = s->k, st[2] = 1; break;
    }
    st[0] = (layout == A_TRANSPOSED ? s->k : s->m) * pitch;
}

static void b_strides(int layout, const mm_shape_t *s, int64_t st[3]) {
    switch (layout) {
    case B_K_CONTIGUOUS: st[1] = 1, st[2] = s->k; break;
    case B_K_PITCHED: st[1] = 1, st[2] = round_up8(s->k) + 16; break;
    case B_GATHERED: st[1] = 2 * s->n + 1, st[2] = 2; break;
    default: st[1] = s->n, st[2] = 1; break;
    }
    /* Past the largest of the layouts' spans, and a multiple of 8 so that
     * every batch's base stays 16-byte aligned. */
    st[0] = round_up8(s->k * (2 * s->n + 1) + s->n * (round_up8(s->k) + 16));
}

static double activation_ref(int act, double x) {
    switch (act) {
    case CDNN_CUDA_ACT_RELU: return x > 0 ? x : 0;
    case CDNN_CUDA_ACT_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case CDNN_CUDA_ACT_GELU_TANH:
        return 0.5 * x * (1 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case CDNN_CUDA_ACT_SILU: return x / (1 + exp(-x));
    case CDNN_CUDA_ACT_TANH: return tanh(x);
    default: return x;
    }
}

typedef struct mm_run {
    cdnn_cuda_matmul_params_t p;
    tensor_t a, b, c, bias, res;
} mm_run_t;

/* The case's tensors and parameters: case index i picks the layouts. */
static void mm_prepare(const gpu_t *gpu, rng_t *rng, const mm_kernel_t *kernel, int i,
                       mm_run_t *r) {
    const mm_shape_t *s = &shapes[i];
    static const int32_t out_types[] = {CDNN_CUDA_F32, CDNN_CUDA_BF16, CDNN_CUDA_F16};
    cdnn_cuda_matmul_params_t *p = &r->p;
    memset(r, 0, sizeof *r);
    int64_t as[3], bs[3];
    a_strides(i % A_LAYOUTS, s, as);
    b_strides((i / 2 + i) % B_LAYOUTS, s, bs);
    if (i % 5 == 4)
        bs[0] = 0; /* one B for the whole batch */
    const int64_t c_pitch = i % 3 == 1 ? s->n + 5 : s->n;
    *p = (cdnn_cuda_matmul_params_t){
        .batch = s->batch, .m = s->m, .n = s->n, .k = s->k,
        .a_batch_stride = as[0], .a_row_stride = as[1], .a_col_stride = as[2],
        .b_batch_stride = bs[0], .b_row_stride = bs[1], .b_col_stride = bs[2],
        .c_batch_stride = s->m * c_pitch, .c_row_stride = c_pitch, .c_col_stride = 1,
        .a_type = kernel->ab_type, .b_type = kernel->ab_type, .c_type = out_types[i % 3],
        .activation = i % 6, .bias_type = out_types[(i + 1) % 3], .res_type = out_types[(i + 2) % 3],
    };
    r->a = tensor_random(gpu, rng, p->a_type, span_of(s->batch, s->m, s->k, as[0], as[1], as[2]), -1, 1);
    r->b = tensor_random(gpu, rng, p->b_type, span_of(s->batch, s->k, s->n, bs[0], bs[1], bs[2]), -1, 1);
    r->c = tensor_poisoned(gpu, p->c_type, span_of(s->batch, s->m, s->n, p->c_batch_stride, c_pitch, 1));
    p->a = (const void *)(uintptr_t)r->a.device;
    p->b = (const void *)(uintptr_t)r->b.device;
    p->c = (void *)(uintptr_t)r->c.device;
    if (i % 3 != 0) {
        p->bias_stride = i % 2 ? 1 : 3;
        r->bias = tensor_random(gpu, rng, p->bias_type, span_of(1, 1, s->n, 0, 0, p->bias_stride), -1, 1);
        p->bias = (const void *)(uintptr_t)r->bias.device;
    }
    if (i % 2 == 1) {
        p->res_batch_stride = s->m * s->n, p->res_row_stride = 1, p->res_col_stride = s->m;
        r->res = tensor_random(gpu, rng, p->res_type,
                               span_of(s->batch, s->m, s->n, p->res_batch_stride, 1, s->m), -1, 1);
        p->residual = (const void *)(uintptr_t)r->res.device;
    }
}

/* Compare C with the f64 reference, element by element. */
static void mm_compare(const mm_run_t *r, tensor_t *c, check_t *check) {
    const cdnn_cuda_matmul_params_t *p = &r->p;
    for (int64_t b = 0; b < p->batch; ++b)
        for (int64_t i = 0; i < p->m; ++i)
            for (int64_t j = 0; j < p->n; ++j) {
                double sum = 0, mag = 0;
                for (int64_t k = 0; k < p->k; ++k) {
                    const double x = tensor_get(&r->a, b * p->a_batch_stride + i * p->a_row_stride + k * p->a_col_stride);
                    const double y = tensor_get(&r->b, b * p->b_batch_stride + k * p->b_row_stride + j * p->b_col_stride);
                    sum += x * y;
                    mag += fabs(x * y);
                }
                if (p->bias) {
                    const double bias = tensor_get(&r->bias, j * p->bias_stride);
                    sum += bias, mag += fabs(bias);
                }
                sum = activation_ref(p->activation, sum);
                if (p->residual) {
                    const double res = tensor_get(&r->res, b * p->res_batch_stride + i * p->res_row_stride + j * p->res_col_stride);
                    sum += res, mag += fabs(res);
                }
                const double tol = elem_epsilon(p->c_type) * fabs(sum) + (double)(p->k + 4) * ldexp(mag, -22);
                check_element(check, c, b * p->c_batch_stride + i * p->c_row_stride + j * p->c_col_stride, sum, tol);
            }
    check_untouched(check, c);
}

static void mm_release(const gpu_t *gpu, mm_run_t *r) {
    tensor_free(gpu, &r->a);
    tensor_free(gpu, &r->b);
    tensor_free(gpu, &r->c);
    if (r->bias.host)
        tensor_free(gpu, &r->bias);
    if (r->res.host)
        tensor_free(gpu, &r->res);
}

static void mm_run_kernel(test_state_t *state, sdk_cu_module module, const mm_kernel_t *kernel) {
    const gpu_t *gpu = state->gpu;
    sdk_cu_function fn = gpu_function(gpu, module, kernel->symbol);
    check_t check = {0};
    for (int i = 0; i < SHAPE_COUNT; ++i) {
        mm_run_t r;
        mm_prepare(gpu, &state->rng, kernel, i, &r);
        const unsigned splits = kernel->splits > 1 ? (unsigned)kernel->splits : 1;
        gpu_launch(gpu, fn, splits * (unsigned)((r.p.n + kernel->tile_n - 1) / kernel->tile_n),
                   (unsigned)((r.p.m + kernel->tile_m - 1) / kernel->tile_m), (unsigned)r.p.batch,
                   (unsigned)kernel->threads, kernel->smem, &r.p);
        gpu_sync(gpu);
        tensor_fetch(gpu, &r.c);
        mm_compare(&r, &r.c, &check);
        mm_release(gpu, &r);
    }
    test_report(state, kernel->symbol, SHAPE_COUNT, &check);
}

void test_matmul_tc(test_state_t *state, sdk_cu_module module) {
#define TC_KERNELS(tm, tn, wm, wn, stages)                                                   \
    for (int d = 0; d < 2; ++d) {                                                            \
        mm_kernel_t k = {.ab_type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16, .tile_m = tm,         \
                         .tile_n = tn, .threads = 32 * (wm) * (wn),                          \
                         .smem = CDNN_CUDA_MATMUL_TC_SMEM(tm, tn, stages)};                  \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_matmul_%s_%dx%d", d ? "bf16" : "f16", \
                 tm, tn);                                                                    \
        mm_run_kernel(state, module, &k);                                                    \
    }
    CDNN_CUDA_MATMUL_TC_CONFIGS(TC_KERNELS)
#undef TC_KERNELS
}

static void tma_run_kernel(test_state_t *state, sdk_cu_module module, const mm_kernel_t *kernel);

/* matmul_small_m.cu: the tensor-core k loop split over a cluster. */
void test_matmul_small_m(test_state_t *state, sdk_cu_module module) {
#define SMALL_M_KERNELS(tm, tn, wm, wn, stages, split_k)                                      \
    for (int d = 0; d < 2; ++d) {                                                             \
        mm_kernel_t k = {.ab_type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16, .tile_m = tm,          \
                         .tile_n = tn, .threads = 32 * (wm) * (wn),                           \
                         .smem = CDNN_CUDA_MATMUL_TC_SMEM(tm, tn, stages), .splits = split_k}; \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_matmul_small_m_%s_%dx%d",              \
                 d ? "bf16" : "f16", tm, tn);                                                 \
        mm_run_kernel(state, module, &k);                                                     \
    }
    CDNN_CUDA_MATMUL_SMALL_M_CONFIGS(SMALL_M_KERNELS)
#undef SMALL_M_KERNELS
    /* The strip ones: 16 rows and 64 columns a block, all of k. */
#define SMALL_M_STRIP_KERNELS(name, warps, stages)                                            \
    for (int d = 0; d < 2; ++d) {                                                             \
        mm_kernel_t k = {.ab_type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16, .tile_m = 16,          \
                         .tile_n = 64, .threads = 32 * (warps),                               \
                         .smem = CDNN_CUDA_MATMUL_SMALL_M_STRIP_SMEM(warps)};                 \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_matmul_small_m_strip_%s_" #name,       \
                 d ? "bf16" : "f16");                                                         \
        mm_run_kernel(state, module, &k);                                                     \
    }
    CDNN_CUDA_MATMUL_SMALL_M_STRIP_CONFIGS(SMALL_M_STRIP_KERNELS)
#undef SMALL_M_STRIP_KERNELS
    /* The TMA ones: the wgmma kernels' ABI and cases (tma_run_kernel), a
     * tile 16 x 64. */
#define SMALL_M_TMA_KERNELS(name, stages)                                                     \
    for (int d = 0; d < 2; ++d) {                                                             \
        mm_kernel_t k = {.ab_type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16, .tile_m = 16,          \
                         .tile_n = 64, .threads = CDNN_CUDA_MATMUL_SMALL_M_TMA_THREADS,       \
                         .smem = CDNN_CUDA_MATMUL_SMALL_M_TMA_SMEM(stages)};                  \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_matmul_small_m_tma_%s_" #name,         \
                 d ? "bf16" : "f16");                                                         \
        tma_run_kernel(state, module, &k);                                                    \
    }
    CDNN_CUDA_MATMUL_SMALL_M_TMA_CONFIGS(SMALL_M_TMA_KERNELS)
#undef SMALL_M_TMA_KERNELS
}

void test_matmul_f32(test_state_t *state, sdk_cu_module module) {
#define F32_KERNELS(tm, tn, rows, cols)                                                    \
    {                                                                                      \
        mm_kernel_t k = {.ab_type = CDNN_CUDA_F32, .tile_m = tm, .tile_n = tn,             \
                         .threads = ((tm) / (rows)) * ((tn) / (cols)), .smem = 0};         \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_matmul_f32_%dx%d", tm, tn);         \
        mm_run_kernel(state, module, &k);                                                  \
    }
    CDNN_CUDA_MATMUL_F32_CONFIGS(F32_KERNELS)
#undef F32_KERNELS
}

/* ---- the Hopper kernels (matmul_wgmma.cu): TMA-fed wgmma ----------------------------------
 *
 * They are persistent: the grid's blocks take tiles in turn; the cases
 * run with a block per tile and with 1 to 4 blocks.
 * The layouts TMA takes (matmul_tma.h): A k-contiguous, B k- or
 * n-contiguous, row pitches and batch strides multiples of 8 elements.
 * The shapes have tails in every dimension against the tiles (64 in k, up
 * to 256 in m and n) and k deeper than the ring of stages (the last two
 * deeper than the small-m TMA kernels' rings too); C is packed,
 * pitched by an odd amount (no pair stores) or by a multiple of 8; every
 * output type, activation, bias and residual as above.  The TMA-store
 * kernels take a 16-bit C with n and its pitch multiples of 8 and a
 * row-major 16-bit residual (packed or pitched by 2, on cases i % 3 != 1):
 * their cases are those, the others must be refused. */
static const mm_shape_t tma_shapes[] = {
    {1, 1, 1, 1},       {1, 17, 33, 7},     {1, 64, 64, 64},     {1, 127, 129, 65},
    {2, 100, 72, 40},   {3, 37, 45, 61},    {1, 300, 200, 1000}, {1, 129, 257, 96},
    {2, 130, 260, 33},  {1, 257, 385, 200}, {1, 512, 256, 512},  {2, 64, 136, 72},
    /* decode-like: few rows, k deeper than the small-m TMA kernels' rings */
    {1, 16, 200, 4133}, {2, 9, 130, 2100},
};
#define TMA_SHAPE_COUNT ((int)(sizeof tma_shapes / sizeof tma_shapes[0]))

static void tma_prepare(const gpu_t *gpu, rng_t *rng, const mm_kernel_t *kernel, int i,
                        mm_run_t *r) {
    const mm_shape_t *s = &tma_shapes[i];
    static const int32_t out_types[] = {CDNN_CUDA_F32, CDNN_CUDA_BF16, CDNN_CUDA_F16};
    cdnn_cuda_matmul_params_t *p = &r->p;
    memset(r, 0, sizeof *r);
    const int64_t a_pitch = i % 2 ? round_up8(s->k) + 8 : round_up8(s->k);
    const int b_k_contiguous = i % 3 == 2 || i % 4 == 1;
    const int64_t b_pitch = b_k_contiguous ? round_up8(s->k) : round_up8(s->n) + (i % 2) * 16;
    const int64_t b_span = (b_k_contiguous ? s->n : s->k) * b_pitch;
    const int64_t c_pitch = kernel->store ? (i % 3 ? round_up8(s->n) + 8 : s->n)
                            : i % 3 == 1  ? s->n + 5
                            : i % 3 == 2  ? round_up8(s->n) + 8
                                          : s->n;
    *p = (cdnn_cuda_matmul_params_t){
        .batch = s->batch, .m = s->m, .n = s->n, .k = s->k,
        .a_batch_stride = s->m * a_pitch, .a_row_stride = a_pitch, .a_col_stride = 1,
        .b_batch_stride = i % 5 == 4 ? 0 : b_span,
        .b_row_stride = b_k_contiguous ? 1 : b_pitch, .b_col_stride = b_k_contiguous ? b_pitch : 1,
        .c_batch_stride = s->m * c_pitch, .c_row_stride = c_pitch, .c_col_stride = 1,
        .a_type = kernel->ab_type, .b_type = kernel->ab_type,
        .c_type = kernel->store ? out_types[1 + (i % 4 == 2)] : out_types[i % 3],
        .activation = i % 6, .bias_type = out_types[(i + 1) % 3], .res_type = out_types[(i + 2) % 3],
    };
    r->a = tensor_random(gpu, rng, p->a_type, span_of(s->batch, s->m, s->k, p->a_batch_stride, a_pitch, 1), -1, 1);
    r->b = tensor_random(gpu, rng, p->b_type,
                         span_of(s->batch, s->k, s->n, p->b_batch_stride, p->b_row_stride, p->b_col_stride), -1, 1);
    r->c = tensor_poisoned(gpu, p->c_type, span_of(s->batch, s->m, s->n, p->c_batch_stride, c_pitch, 1));
    p->a = (const void *)(uintptr_t)r->a.device;
    p->b = (const void *)(uintptr_t)r->b.device;
    p->c = (void *)(uintptr_t)r->c.device;
    if (i % 3 != 0) {
        p->bias_stride = i % 2 ? 1 : 3;
        r->bias = tensor_random(gpu, rng, p->bias_type, span_of(1, 1, s->n, 0, 0, p->bias_stride), -1, 1);
        p->bias = (const void *)(uintptr_t)r->bias.device;
    }
    if (kernel->store && i % 3 != 1) {
        p->res_type = i % 4 == 3 ? CDNN_CUDA_F16 : CDNN_CUDA_BF16;
        p->res_row_stride = s->n + (i % 2) * 2, p->res_col_stride = 1;
        p->res_batch_stride = s->m * p->res_row_stride;
        r->res = tensor_random(gpu, rng, p->res_type,
                               span_of(s->batch, s->m, s->n, p->res_batch_stride,
                                       p->res_row_stride, 1), -1, 1);
        p->residual = (const void *)(uintptr_t)r->res.device;
    }
    if (i % 2 == 1 && !kernel->store) {
        /* row-major residual on odd cases of 4, transposed on the others */
        const int transposed = i % 4 == 3;
        p->res_batch_stride = s->m * s->n;
        p->res_row_stride = transposed ? 1 : s->n, p->res_col_stride = transposed ? s->m : 1;
        r->res = tensor_random(gpu, rng, p->res_type,
                               span_of(s->batch, s->m, s->n, p->res_batch_stride,
                                       p->res_row_stride, p->res_col_stride), -1, 1);
        p->residual = (const void *)(uintptr_t)r->res.device;
    }
}

static void tma_run_kernel(test_state_t *state, sdk_cu_module module, const mm_kernel_t *kernel) {
    const gpu_t *gpu = state->gpu;
    sdk_cu_function fn = gpu_function(gpu, module, kernel->symbol);
    gpu_check(gpu, gpu->cu->func_set_attribute(fn, GPU_FUNC_MAX_DYNAMIC_SHARED, (int)kernel->smem),
              "cuFuncSetAttribute");
    check_t check = {0};
    for (int i = 0; i < TMA_SHAPE_COUNT; ++i) {
        mm_run_t r;
        tma_prepare(gpu, &state->rng, kernel, i, &r);
        cdnn_cuda_matmul_tma_store_params_t t; /* the other kernels take t.tma alone */
        memset(&t, 0, sizeof t);
        t.tma.matmul = r.p;
        const char *why = kernel->store ? cdnn_cuda_matmul_tma_store_refusal(&r.p, 1)
                                        : cdnn_cuda_matmul_tma_refusal(&r.p, 1);
        if (why && kernel->store && r.p.n % 8 != 0) { /* refused, as it must be */
            mm_release(gpu, &r);
            continue;
        }
        if (why) {
            printf("FAIL %s case %d: the test's layout is refused: %s\n", kernel->symbol, i, why);
            check.bad++;
            mm_release(gpu, &r);
            continue;
        }
        gpu_check(gpu,
                  kernel->store ? cdnn_cuda_matmul_tma_store_encode(&t, kernel->tile_m, kernel->tile_n,
                                                                    gpu->cu->tensor_map_encode_tiled)
                                : cdnn_cuda_matmul_tma_encode(&t.tma, kernel->tile_m, kernel->tile_n,
                                                              gpu->cu->tensor_map_encode_tiled),
                  "cuTensorMapEncodeTiled");
        /* Persistent: a block per tile on every third case, else 1 to 4
         * blocks, each then taking many tiles around its ring.  Cluster
         * kernels count in clusters, each over Cluster tiles' rows. */
        const int cluster = kernel->cluster > 1 ? kernel->cluster : 1;
        const int64_t tiles = ((r.p.n + kernel->tile_n - 1) / kernel->tile_n) *
                              ((r.p.m + cluster * kernel->tile_m - 1) / (cluster * kernel->tile_m)) *
                              r.p.batch;
        const int64_t blocks = cluster * (i % 3 == 0 || tiles < 1 + i % 4 ? tiles : 1 + i % 4);
        gpu_launch(gpu, fn, (unsigned)blocks, 1, 1, (unsigned)kernel->threads, kernel->smem, &t);
        gpu_sync(gpu);
        tensor_fetch(gpu, &r.c);
        mm_compare(&r, &r.c, &check);
        mm_release(gpu, &r);
    }
    test_report(state, kernel->symbol, TMA_SHAPE_COUNT, &check);
}

void test_matmul_wgmma(test_state_t *state, sdk_cu_module module) {
    /* Layouts TMA cannot take are refused, not run. */
    cdnn_cuda_matmul_params_t odd = {.batch = 1, .m = 4, .n = 4, .k = 12, .a_row_stride = 12,
                                     .a_col_stride = 1, .b_row_stride = 8, .b_col_stride = 1,
                                     .a_type = CDNN_CUDA_BF16, .b_type = CDNN_CUDA_BF16};
    check_t refusals = {0};
    refusals.compared = 10;
    if (!cdnn_cuda_matmul_tma_refusal(&odd, 0)) /* a's pitch of 24 bytes */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "pitch 12 taken");
    odd.a_row_stride = 16, odd.a_col_stride = 2;
    if (!cdnn_cuda_matmul_tma_refusal(&odd, 0)) /* a not k-contiguous */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "a stride 2 taken");
    odd.a_col_stride = 1, odd.a = (const void *)(uintptr_t)8;
    if (!cdnn_cuda_matmul_tma_refusal(&odd, 1)) /* a at 8 bytes past 16 */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "misaligned a taken");
    /* ... and layouts the TMA-store kernels cannot take (odd is now fine for
     * the others, with a 16-bit C): n not a multiple of 8, a residual not
     * 16-bit, not row-major, with an odd pitch or at an odd address. */
    odd.a = NULL, odd.c_type = CDNN_CUDA_BF16, odd.c_row_stride = 8, odd.c_col_stride = 1;
    if (!cdnn_cuda_matmul_tma_store_refusal(&odd, 1)) /* n 4: the engine would write 8 */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "n 4 stored");
    odd.n = 8, odd.residual = (const void *)(uintptr_t)16, odd.res_type = CDNN_CUDA_F32;
    odd.res_row_stride = 8, odd.res_col_stride = 1;
    if (!cdnn_cuda_matmul_tma_store_refusal(&odd, 1))
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "f32 residual stored");
    odd.res_type = CDNN_CUDA_BF16, odd.res_row_stride = 1, odd.res_col_stride = 8;
    if (!cdnn_cuda_matmul_tma_store_refusal(&odd, 1))
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "column-major residual stored");
    odd.res_row_stride = 9, odd.res_col_stride = 1;
    if (!cdnn_cuda_matmul_tma_store_refusal(&odd, 1))
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "residual pitch 9 stored");
    odd.res_row_stride = 8, odd.residual = (const void *)(uintptr_t)18;
    if (!cdnn_cuda_matmul_tma_store_refusal(&odd, 1))
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "residual at 18 stored");
    odd.residual = (const void *)(uintptr_t)16;
    if (cdnn_cuda_matmul_tma_store_refusal(&odd, 1)) /* the control: taken */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "bf16 residual refused");
    odd.residual = NULL;
    if (cdnn_cuda_matmul_tma_store_refusal(&odd, 1)) /* the control: taken */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "n 8 refused");
    test_report(state, "matmul_wgmma refusals", 10, &refusals);
#define WGMMA_KERNELS(tm, tn, stages)                                                         \
    for (int d = 0; d < 2; ++d) {                                                             \
        mm_kernel_t k = {.ab_type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16, .tile_m = tm,          \
                         .tile_n = tn, .threads = CDNN_CUDA_MATMUL_WGMMA_THREADS,              \
                         .smem = CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages)};                \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_matmul_wgmma_%s_%dx%d",                \
                 d ? "bf16" : "f16", tm, tn);                                                 \
        tma_run_kernel(state, module, &k);                                                    \
    }
    CDNN_CUDA_MATMUL_WGMMA_CONFIGS(WGMMA_KERNELS)
#undef WGMMA_KERNELS
#define WGMMA_C2_KERNELS(tm, tn, stages)                                                      \
    for (int d = 0; d < 2; ++d) {                                                             \
        mm_kernel_t k = {.ab_type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16, .tile_m = tm,          \
                         .tile_n = tn, .threads = CDNN_CUDA_MATMUL_WGMMA_THREADS,              \
                         .smem = CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages), .cluster = 2};  \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_matmul_wgmma_c2_%s_%dx%d",             \
                 d ? "bf16" : "f16", tm, tn);                                                 \
        tma_run_kernel(state, module, &k);                                                    \
    }
#ifdef CDNN_CUDA_MATMUL_WGMMA_C2_CONFIGS
    CDNN_CUDA_MATMUL_WGMMA_C2_CONFIGS(WGMMA_C2_KERNELS)
#endif
#undef WGMMA_C2_KERNELS
#define WGMMA_STORE_KERNELS(tm, tn, stages, slots)                                            \
    for (int d = 0; d < 2; ++d) {                                                             \
        mm_kernel_t k = {.ab_type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16, .tile_m = tm,          \
                         .tile_n = tn, .threads = CDNN_CUDA_MATMUL_WGMMA_THREADS,              \
                         .smem = CDNN_CUDA_MATMUL_WGMMA_STORE_SMEM(tm, tn, stages, slots),     \
                         .store = 1};                                                         \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_matmul_wgmma_store_%s_%dx%d",          \
                 d ? "bf16" : "f16", tm, tn);                                                 \
        tma_run_kernel(state, module, &k);                                                    \
    }
    CDNN_CUDA_MATMUL_WGMMA_STORE_CONFIGS(WGMMA_STORE_KERNELS)
#undef WGMMA_STORE_KERNELS
}
