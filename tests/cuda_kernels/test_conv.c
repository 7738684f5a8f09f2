/*
 * test_conv.c -- "cuda-conv-v1" kernels against an f64 reference (the
 * direct convolution sum over the same rounded inputs).
 *
 * Cases: a 1x1 image, 3x3 pad 1 (the fast path: channels a multiple of 8,
 * NHWC, a packed KRSC filter), 3 channels (gathered), stride 2, dilation,
 * unequal pads, strides and dilations per axis, 1x1 convs with a filter
 * tail, a 1-D conv (h = r = 1), x in NCHW memory, x with padded pixel
 * rows, a filter in KCRS memory, y with padded channels (the gaps must
 * stay poison); every output type, a bias (packed and strided), each
 * activation.
 * Tolerance per element: eps(y_type) * |ref| for the final rounding, plus
 * (taps + 4) * 2^-22 * mag for f32 accumulation, where mag = sum |x||w| +
 * |bias| bounds what rounding in the sum can reach (the bound
 * test_matmul.c uses): an indexing error is of the order of the values.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "conv_tma.h"
#include "cuda_kernel.h"
#include "tests.h"

typedef struct conv_case {
    int64_t n, h, w, c, k, r, s;
    int64_t pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    int x_layout, w_layout, y_pitched;
} conv_case_t;

enum { X_NHWC, X_NCHW, X_NHWC_PITCHED };
enum { W_KRSC, W_KCRS };

static const conv_case_t cases[] = {
    {1, 1, 1, 8, 8, 1, 1, 0, 0, 1, 1, 1, 1, X_NHWC, W_KRSC, 0},
    {2, 9, 11, 16, 24, 3, 3, 1, 1, 1, 1, 1, 1, X_NHWC, W_KRSC, 0},
    {1, 14, 14, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, X_NHWC, W_KRSC, 1},
    {3, 7, 9, 3, 17, 3, 3, 1, 1, 2, 2, 1, 1, X_NHWC, W_KRSC, 0},
    {2, 16, 16, 32, 130, 1, 1, 0, 0, 1, 1, 1, 1, X_NHWC_PITCHED, W_KRSC, 0},
    {1, 20, 18, 24, 40, 5, 3, 2, 1, 2, 1, 1, 2, X_NCHW, W_KRSC, 1},
    {2, 12, 12, 40, 72, 3, 3, 0, 0, 1, 1, 2, 2, X_NHWC, W_KCRS, 0},
    {1, 1, 50, 16, 33, 1, 7, 0, 3, 1, 1, 1, 1, X_NHWC, W_KRSC, 0},
    {2, 28, 28, 32, 64, 3, 3, 1, 1, 1, 1, 1, 1, X_NHWC, W_KRSC, 0},
    {1, 10, 10, 12, 20, 3, 3, 1, 1, 1, 1, 1, 1, X_NHWC, W_KRSC, 1},
};
#define CASE_COUNT ((int)(sizeof cases / sizeof cases[0]))

typedef struct conv_kernel {
    char symbol[64];
    int32_t type;
    int tile_m, tile_n, threads;
    unsigned smem;
} conv_kernel_t;

typedef struct conv_run {
    cdnn_cuda_conv_params_t p;
    tensor_t x, w, y, bias;
} conv_run_t;

static int64_t out_size(int64_t in, int64_t pad, int64_t filter, int64_t stride,
                        int64_t dilation) {
    return (in + 2 * pad - dilation * (filter - 1) - 1) / stride + 1;
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

/* Strides {n, h, w, c} of x in the case's memory layout; returns the span. */
static int64_t x_strides(const conv_case_t *c, int64_t s[4]) {
    switch (c->x_layout) {
    case X_NCHW:
        s[3] = c->h * c->w, s[1] = c->w, s[2] = 1, s[0] = c->c * c->h * c->w;
        break;
    case X_NHWC_PITCHED: /* 8 spare elements after each pixel row */
        s[3] = 1, s[2] = c->c, s[1] = c->w * c->c + 8, s[0] = c->h * s[1];
        break;
    default:
        s[3] = 1, s[2] = c->c, s[1] = c->w * c->c, s[0] = c->h * c->w * c->c;
        break;
    }
    return c->n * s[0];
}

/* Strides {k, r, s, c} of the filter; returns the span. */
static int64_t w_strides(const conv_case_t *c, int64_t s[4]) {
    if (c->w_layout == W_KCRS)
        s[1] = c->s, s[2] = 1, s[3] = c->r * c->s, s[0] = c->c * c->r * c->s;
    else
        s[3] = 1, s[2] = c->c, s[1] = c->s * c->c, s[0] = c->r * c->s * c->c;
    return c->k * s[0];
}

/* Case c (the i-th of its table: output type, bias and activation vary
 * with i) for the kernel.  store_layout: y as the TMA-store kernels take it
 * (f16 or bf16, a padded pixel a multiple of 8 elements). */
static void conv_prepare_case(const gpu_t *gpu, rng_t *rng, const conv_kernel_t *kernel,
                              const conv_case_t *c, int i, int store_layout, conv_run_t *r) {
    static const int32_t out_types[] = {CDNN_CUDA_F32, CDNN_CUDA_BF16, CDNN_CUDA_F16};
    cdnn_cuda_conv_params_t *p = &r->p;
    memset(r, 0, sizeof *r);
    *p = (cdnn_cuda_conv_params_t){
        .n = c->n, .h = c->h, .w = c->w, .c = c->c, .k = c->k, .r = c->r, .s = c->s,
        .p = out_size(c->h, c->pad_h, c->r, c->stride_h, c->dil_h),
        .q = out_size(c->w, c->pad_w, c->s, c->stride_w, c->dil_w),
        .pad_h = c->pad_h, .pad_w = c->pad_w, .stride_h = c->stride_h,
        .stride_w = c->stride_w, .dilation_h = c->dil_h, .dilation_w = c->dil_w,
        .x_type = kernel->type, .w_type = kernel->type, .y_type = out_types[i % 3],
        .bias_type = out_types[(i + 1) % 3], .activation = i % 6};
    const int64_t x_span = x_strides(c, p->x_strides), w_span = w_strides(c, p->w_strides);
    if (store_layout)
        p->y_type = i % 2 ? CDNN_CUDA_BF16 : CDNN_CUDA_F16;
    int64_t y_pitch = c->y_pitched ? c->k + 3 : c->k;
    if (store_layout && c->y_pitched)
        y_pitch = (y_pitch + 7) / 8 * 8;
    p->y_strides[3] = 1, p->y_strides[2] = y_pitch, p->y_strides[1] = p->q * y_pitch;
    p->y_strides[0] = p->p * p->y_strides[1];
    r->x = tensor_random(gpu, rng, p->x_type, x_span, -1, 1);
    r->w = tensor_random(gpu, rng, p->w_type, w_span, -1, 1);
    r->y = tensor_poisoned(gpu, p->y_type, c->n * p->y_strides[0]);
    p->x = (const void *)(uintptr_t)r->x.device;
    p->filter = (const void *)(uintptr_t)r->w.device;
    p->y = (void *)(uintptr_t)r->y.device;
    if (i % 3 != 0) {
        p->bias_stride = i % 2 ? 1 : 2;
        r->bias = tensor_random(gpu, rng, p->bias_type, span_of(1, 1, c->k, 0, 0, p->bias_stride),
                                -1, 1);
        p->bias = (const void *)(uintptr_t)r->bias.device;
    }
}

/* The f64 sum of output element (b, i, j, f), and its magnitude. */
static void conv_prepare(const gpu_t *gpu, rng_t *rng, const conv_kernel_t *kernel, int i,
                         conv_run_t *r) {
    conv_prepare_case(gpu, rng, kernel, &cases[i], i, 0, r);
}

static double conv_sum(const conv_run_t *r, int64_t b, int64_t i, int64_t j, int64_t f,
                       double *mag) {
    const cdnn_cuda_conv_params_t *p = &r->p;
    double sum = 0;
    *mag = 0;
    for (int64_t u = 0; u < p->r; ++u)
        for (int64_t v = 0; v < p->s; ++v) {
            const int64_t hi = i * p->stride_h - p->pad_h + u * p->dilation_h;
            const int64_t wi = j * p->stride_w - p->pad_w + v * p->dilation_w;
            if (hi < 0 || hi >= p->h || wi < 0 || wi >= p->w)
                continue;
            for (int64_t ch = 0; ch < p->c; ++ch) {
                const double x = tensor_get(&r->x, b * p->x_strides[0] + hi * p->x_strides[1] +
                                                       wi * p->x_strides[2] + ch * p->x_strides[3]);
                const double w = tensor_get(&r->w, f * p->w_strides[0] + u * p->w_strides[1] +
                                                       v * p->w_strides[2] + ch * p->w_strides[3]);
                sum += x * w;
                *mag += fabs(x * w);
            }
        }
    return sum;
}

static void conv_compare(const conv_run_t *r, tensor_t *y, check_t *check) {
    const cdnn_cuda_conv_params_t *p = &r->p;
    const double taps = (double)(p->r * p->s * p->c);
    for (int64_t b = 0; b < p->n; ++b)
        for (int64_t i = 0; i < p->p; ++i)
            for (int64_t j = 0; j < p->q; ++j)
                for (int64_t f = 0; f < p->k; ++f) {
                    double mag = 0, sum = conv_sum(r, b, i, j, f, &mag);
                    if (p->bias) {
                        const double bias = tensor_get(&r->bias, f * p->bias_stride);
                        sum += bias, mag += fabs(bias);
                    }
                    sum = activation_ref(p->activation, sum);
                    const double tol = elem_epsilon(p->y_type) * fabs(sum) + (taps + 4) * ldexp(mag, -22);
                    check_element(check, y, b * p->y_strides[0] + i * p->y_strides[1] +
                                                j * p->y_strides[2] + f * p->y_strides[3],
                                  sum, tol);
                }
    check_untouched(check, y);
}

static void conv_release(const gpu_t *gpu, conv_run_t *r) {
    tensor_free(gpu, &r->x);
    tensor_free(gpu, &r->w);
    tensor_free(gpu, &r->y);
    if (r->bias.host)
        tensor_free(gpu, &r->bias);
}

static void conv_run_kernel(test_state_t *state, sdk_cu_module module, const conv_kernel_t *kernel) {
    const gpu_t *gpu = state->gpu;
    sdk_cu_function fn = gpu_function(gpu, module, kernel->symbol);
    check_t check = {0};
    for (int i = 0; i < CASE_COUNT; ++i) {
        conv_run_t r;
        conv_prepare(gpu, &state->rng, kernel, i, &r);
        const int64_t rows = r.p.n * r.p.p * r.p.q;
        gpu_launch(gpu, fn, (unsigned)((rows + kernel->tile_m - 1) / kernel->tile_m),
                   (unsigned)((r.p.k + kernel->tile_n - 1) / kernel->tile_n), 1,
                   (unsigned)kernel->threads, kernel->smem, &r.p);
        gpu_sync(gpu);
        tensor_fetch(gpu, &r.y);
        conv_compare(&r, &r.y, &check);
        conv_release(gpu, &r);
    }
    test_report(state, kernel->symbol, CASE_COUNT, &check);
}

void test_conv(test_state_t *state, sdk_cu_module module) {
#define CONV_KERNELS(tm, tn, wm, wn, stages)                                                  \
    for (int d = 0; d < 2; ++d) {                                                             \
        conv_kernel_t k = {.type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16, .tile_m = tm,           \
                           .tile_n = tn, .threads = 32 * (wm) * (wn),                         \
                           .smem = CDNN_CUDA_CONV_SMEM(tm, tn, stages)};                      \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_conv_%s_%dx%d", d ? "bf16" : "f16", tm, \
                 tn);                                                                         \
        conv_run_kernel(state, module, &k);                                                   \
    }
    CDNN_CUDA_CONV_CONFIGS(CONV_KERNELS)
#undef CONV_KERNELS
}

/* ---- the Hopper kernels (conv_wgmma.cu): wgmma fed by im2col TMA ------------------------
 *
 * The layouts they take (conv_tma.h): channels a multiple of 64, x
 * channels-contiguous (NHWC, also with pitched pixel rows), the filter
 * packed KRSC, y's pixels one stride apart (packed or with padded
 * channels).  Cases: 3x3 pad 1 stride 1 and 2, 1x1 stride 1 and 2 (the
 * ResNet projection), odd h and w, filters not a multiple of any tile_n,
 * a 5x3 filter with unequal pads, strides and a dilation, pixel tiles
 * that cross images and run past the last one; every output type, a bias
 * (packed and strided), each activation.  They are persistent: a block
 * per tile on every third case, else 1 to 4 blocks. */
static const conv_case_t tma_cases[] = {
    {2, 9, 11, 64, 72, 3, 3, 1, 1, 1, 1, 1, 1, X_NHWC, W_KRSC, 0},
    {3, 15, 13, 128, 64, 3, 3, 1, 1, 2, 2, 1, 1, X_NHWC, W_KRSC, 0},
    {2, 7, 7, 192, 130, 1, 1, 0, 0, 1, 1, 1, 1, X_NHWC, W_KRSC, 1},
    {2, 14, 14, 64, 256, 1, 1, 0, 0, 2, 2, 1, 1, X_NHWC_PITCHED, W_KRSC, 0},
    {1, 20, 18, 64, 40, 5, 3, 2, 1, 2, 1, 1, 2, X_NHWC, W_KRSC, 1},
    {3, 7, 7, 128, 128, 3, 3, 1, 1, 1, 1, 1, 1, X_NHWC_PITCHED, W_KRSC, 0},
    {1, 1, 1, 64, 8, 1, 1, 0, 0, 1, 1, 1, 1, X_NHWC, W_KRSC, 0},
    {2, 12, 10, 64, 96, 3, 3, 0, 0, 1, 1, 2, 2, X_NHWC, W_KRSC, 0},
};
#define TMA_CASE_COUNT ((int)(sizeof tma_cases / sizeof tma_cases[0]))

enum { EPILOGUE_BUFFERED, EPILOGUE_TMA_STORE };

static void conv_tma_run_kernel(test_state_t *state, sdk_cu_module module,
                                const conv_kernel_t *kernel, int epilogue) {
    const gpu_t *gpu = state->gpu;
    sdk_cu_function fn = gpu_function(gpu, module, kernel->symbol);
    gpu_check(gpu, gpu->cu->func_set_attribute(fn, GPU_FUNC_MAX_DYNAMIC_SHARED, (int)kernel->smem),
              "cuFuncSetAttribute");
    check_t check = {0};
    for (int i = 0; i < TMA_CASE_COUNT; ++i) {
        conv_run_t r;
        conv_prepare_case(gpu, &state->rng, kernel, &tma_cases[i], i,
                          epilogue == EPILOGUE_TMA_STORE, &r);
        cdnn_cuda_conv_tma_store_params_t ts;
        cdnn_cuda_conv_tma_params_t *tp = &ts.tma;
        memset(&ts, 0, sizeof ts);
        tp->conv = r.p;
        const char *why = epilogue == EPILOGUE_TMA_STORE ? cdnn_cuda_conv_store_refusal(&r.p, 1)
                                                         : cdnn_cuda_conv_tma_refusal(&r.p, 1);
        if (epilogue == EPILOGUE_TMA_STORE && r.p.k % 8 != 0) { /* must be refused */
            if (!why) {
                printf("FAIL %s case %d: k %lld taken\n", kernel->symbol, i, (long long)r.p.k);
                check.bad++;
            }
            conv_release(gpu, &r);
            continue;
        }
        if (why) {
            printf("FAIL %s case %d: the test's layout is refused: %s\n", kernel->symbol, i, why);
            check.bad++;
            conv_release(gpu, &r);
            continue;
        }
        gpu_check(gpu, cdnn_cuda_conv_tma_encode(tp, kernel->tile_m, kernel->tile_n,
                                                 gpu->cu->tensor_map_encode_im2col,
                                                 gpu->cu->tensor_map_encode_tiled),
                  "cuTensorMapEncodeIm2col/Tiled");
        if (epilogue == EPILOGUE_TMA_STORE)
            gpu_check(gpu, cdnn_cuda_conv_encode_y_map(&ts.y_map, &r.p, tp->gemm.m,
                                                       tp->gemm.c_row_stride, 1, 0,
                                                       gpu->cu->tensor_map_encode_tiled),
                      "cuTensorMapEncodeTiled (y)");
        const int64_t tiles = ((r.p.k + kernel->tile_n - 1) / kernel->tile_n) *
                              ((r.p.n * r.p.p * r.p.q + kernel->tile_m - 1) / kernel->tile_m);
        const int64_t blocks = i % 3 == 0 || tiles < 1 + i % 4 ? tiles : 1 + i % 4;
        gpu_launch(gpu, fn, (unsigned)blocks, 1, 1, (unsigned)kernel->threads, kernel->smem, &ts);
        gpu_sync(gpu);
        tensor_fetch(gpu, &r.y);
        conv_compare(&r, &r.y, &check);
        conv_release(gpu, &r);
    }
    test_report(state, kernel->symbol, TMA_CASE_COUNT, &check);
}

/* Layouts the TMA kernels cannot take are refused, not run. */
static void conv_tma_refusals(test_state_t *state) {
    cdnn_cuda_conv_params_t p = {.n = 1, .h = 8, .w = 8, .c = 64, .k = 64, .r = 3, .s = 3,
                                 .p = 8, .q = 8, .pad_h = 1, .pad_w = 1, .stride_h = 1,
                                 .stride_w = 1, .dilation_h = 1, .dilation_w = 1,
                                 .x_strides = {4096, 512, 64, 1}, .w_strides = {576, 192, 64, 1},
                                 .y_strides = {4096, 512, 64, 1}, .x_type = CDNN_CUDA_F16,
                                 .w_type = CDNN_CUDA_F16, .y_type = CDNN_CUDA_F16};
    check_t refusals = {0};
    refusals.compared = 5;
    if (cdnn_cuda_conv_tma_refusal(&p, 0))
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "NHWC refused");
    cdnn_cuda_conv_params_t odd = p;
    odd.c = 48, odd.w_strides[2] = 48, odd.w_strides[1] = 144;
    if (!cdnn_cuda_conv_tma_refusal(&odd, 0)) /* 48 channels */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "c 48 taken");
    odd = p, odd.x_strides[3] = 64, odd.x_strides[2] = 1;
    if (!cdnn_cuda_conv_tma_refusal(&odd, 0)) /* x not channels-contiguous */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "NCHW x taken");
    odd = p, odd.y_strides[1] = 520;
    if (!cdnn_cuda_conv_tma_refusal(&odd, 0)) /* y rows pitched */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "pitched y taken");
    odd = p, odd.x = (const void *)(uintptr_t)8;
    if (!cdnn_cuda_conv_tma_refusal(&odd, 1)) /* x at 8 bytes past 16 */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "misaligned x taken");
    test_report(state, "conv_wgmma refusals", 5, &refusals);
}

/* ---- the stem kernels (conv_wgmma.cu): 7x7 stride 2 over 3 channels ----------------------
 *
 * Cases: ResNet's stem padding (3) on small images, an output row of 112
 * pixels (224 wide, as ResNet's), unequal pads, filters not a multiple of
 * 8 (17, 40), y with padded channels (unaligned pairs), x with pitched
 * rows, rows and columns whose windows run past x on either side; every
 * output type, a bias (packed and strided), each activation.  Persistent:
 * a block per output row on odd cases, else 1 to 3 blocks. */
static const conv_case_t stem_cases[] = {
    {2, 30, 32, 3, 64, 7, 7, 3, 3, 2, 2, 1, 1, X_NHWC, W_KRSC, 0},
    {1, 9, 224, 3, 40, 7, 7, 3, 3, 2, 2, 1, 1, X_NHWC, W_KRSC, 1},
    {3, 11, 40, 3, 17, 7, 7, 2, 3, 2, 2, 1, 1, X_NHWC, W_KRSC, 1},
    {2, 13, 64, 3, 64, 7, 7, 3, 3, 2, 2, 1, 1, X_NHWC_PITCHED, W_KRSC, 0},
    {1, 16, 224, 3, 64, 7, 7, 3, 3, 2, 2, 1, 1, X_NHWC, W_KRSC, 0},
    {2, 8, 16, 3, 33, 7, 7, 0, 1, 2, 2, 1, 1, X_NHWC, W_KRSC, 0},
};
#define STEM_CASE_COUNT ((int)(sizeof stem_cases / sizeof stem_cases[0]))

static void conv_stem_run_kernel(test_state_t *state, sdk_cu_module module,
                                 const conv_kernel_t *kernel, int store) {
    const gpu_t *gpu = state->gpu;
    sdk_cu_function fn = gpu_function(gpu, module, kernel->symbol);
    gpu_check(gpu, gpu->cu->func_set_attribute(fn, GPU_FUNC_MAX_DYNAMIC_SHARED, (int)kernel->smem),
              "cuFuncSetAttribute");
    check_t check = {0};
    for (int i = 0; i < STEM_CASE_COUNT; ++i) {
        conv_run_t r;
        conv_prepare_case(gpu, &state->rng, kernel, &stem_cases[i], i, store, &r);
        const char *why = store ? cdnn_cuda_conv_stem_store_refusal(&r.p, 1)
                                : cdnn_cuda_conv_stem_refusal(&r.p, 1);
        if (store && r.p.k % 8 != 0) { /* the TMA stores must refuse it */
            if (!why) {
                printf("FAIL %s case %d: k %lld taken\n", kernel->symbol, i, (long long)r.p.k);
                check.bad++;
            }
            conv_release(gpu, &r);
            continue;
        }
        if (why) {
            printf("FAIL %s case %d: the test's layout is refused: %s\n", kernel->symbol, i, why);
            check.bad++;
            conv_release(gpu, &r);
            continue;
        }
        const int64_t tiles = r.p.n * r.p.p;
        const int64_t blocks = i % 2 || tiles < 1 + i % 3 ? tiles : 1 + i % 3;
        cdnn_cuda_conv_stem_store_params_t sp;
        memset(&sp, 0, sizeof sp);
        sp.conv = r.p;
        if (store)
            gpu_check(gpu, cdnn_cuda_conv_encode_y_map(&sp.y_map, &r.p, r.p.q, r.p.y_strides[2],
                                                       r.p.n * r.p.p, r.p.y_strides[1],
                                                       gpu->cu->tensor_map_encode_tiled),
                      "cuTensorMapEncodeTiled (y)");
        gpu_launch(gpu, fn, (unsigned)blocks, 1, 1, (unsigned)kernel->threads, kernel->smem, &sp);
        gpu_sync(gpu);
        tensor_fetch(gpu, &r.y);
        conv_compare(&r, &r.y, &check);
        conv_release(gpu, &r);
    }
    test_report(state, kernel->symbol, STEM_CASE_COUNT, &check);
}

/* What the stem kernels cannot take is refused, not run. */
static void conv_stem_refusals(test_state_t *state) {
    cdnn_cuda_conv_params_t p = {.n = 1, .h = 224, .w = 224, .c = 3, .k = 64, .r = 7, .s = 7,
                                 .p = 112, .q = 112, .pad_h = 3, .pad_w = 3, .stride_h = 2,
                                 .stride_w = 2, .dilation_h = 1, .dilation_w = 1,
                                 .x_strides = {150528, 672, 3, 1}, .w_strides = {147, 21, 3, 1},
                                 .y_strides = {802816, 7168, 64, 1}, .x_type = CDNN_CUDA_F16,
                                 .w_type = CDNN_CUDA_F16, .y_type = CDNN_CUDA_F16};
    check_t refusals = {0};
    refusals.compared = 5;
    if (cdnn_cuda_conv_stem_refusal(&p, 0))
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "stem refused");
    cdnn_cuda_conv_params_t odd = p;
    odd.c = 4, odd.x_strides[2] = 4, odd.w_strides[2] = 4, odd.w_strides[1] = 28;
    if (!cdnn_cuda_conv_stem_refusal(&odd, 0)) /* 4 channels */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "c 4 taken");
    odd = p, odd.k = 65;
    if (!cdnn_cuda_conv_stem_refusal(&odd, 0)) /* more filters than a tile */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "k 65 taken");
    odd = p, odd.pad_w = 9;
    if (!cdnn_cuda_conv_stem_refusal(&odd, 0)) /* a left overhang past the margin */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "pad 9 taken");
    odd = p, odd.x = (const void *)(uintptr_t)8;
    if (!cdnn_cuda_conv_stem_refusal(&odd, 1)) /* x at 8 bytes past 16 */
        refusals.bad++, snprintf(refusals.first_bad, sizeof refusals.first_bad, "misaligned x taken");
    test_report(state, "conv_stem refusals", 5, &refusals);
}

void test_conv_wgmma(test_state_t *state, sdk_cu_module module) {
    conv_tma_refusals(state);
#define CONV_WGMMA_KERNELS(tm, tn, stages)                                                      \
    for (int d = 0; d < 2; ++d) {                                                               \
        conv_kernel_t k = {.type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16, .tile_m = tm,             \
                           .tile_n = tn, .threads = CDNN_CUDA_MATMUL_WGMMA_THREADS,              \
                           .smem = CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages)};                \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_conv_wgmma_%s_%dx%d", d ? "bf16" : "f16", \
                 tm, tn);                                                                       \
        conv_tma_run_kernel(state, module, &k, EPILOGUE_BUFFERED);                              \
    }
    CDNN_CUDA_CONV_WGMMA_CONFIGS(CONV_WGMMA_KERNELS)
#undef CONV_WGMMA_KERNELS
    /* The TMA-store epilogue (v4): the same cases, y f16 or bf16 (packed,
     * or pixels padded to a multiple of 8), filter tails (96) clipped by TMA;
     * k not a multiple of 8 (130) must be refused. */
#define CONV_WGMMA_STORE_KERNELS(tm, tn, stages)                                                \
    for (int d = 0; d < 2; ++d) {                                                               \
        conv_kernel_t k = {.type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16, .tile_m = tm,             \
                           .tile_n = tn, .threads = CDNN_CUDA_MATMUL_WGMMA_THREADS,              \
                           .smem = CDNN_CUDA_CONV_WGMMA_STORE_SMEM(tm, tn, stages)};            \
        snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_conv_wgmma_store_%s_%dx%d",               \
                 d ? "bf16" : "f16", tm, tn);                                                   \
        conv_tma_run_kernel(state, module, &k, EPILOGUE_TMA_STORE);                             \
    }
    CDNN_CUDA_CONV_WGMMA_STORE_CONFIGS(CONV_WGMMA_STORE_KERNELS)
#undef CONV_WGMMA_STORE_KERNELS
    conv_stem_refusals(state);
    for (int store = 0; store < 2; ++store)
        for (int d = 0; d < 2; ++d) {
            conv_kernel_t k = {.type = d ? CDNN_CUDA_BF16 : CDNN_CUDA_F16,
                               .tile_m = CDNN_CUDA_CONV_STEM_TILE_M,
                               .tile_n = CDNN_CUDA_CONV_STEM_TILE_N,
                               .threads = CDNN_CUDA_CONV_STEM_THREADS,
                               .smem = store ? CDNN_CUDA_CONV_STEM_STORE_SMEM
                                             : CDNN_CUDA_CONV_STEM_SMEM};
            snprintf(k.symbol, sizeof k.symbol, "cdnn_cuda_conv_stem_%s%s", store ? "store_" : "",
                     d ? "bf16" : "f16");
            conv_stem_run_kernel(state, module, &k, store);
        }
}
