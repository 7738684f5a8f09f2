/*
 * test_rows.c -- the row kernels, "cuda-norm-v1" (layer-norm, RMS-norm) and
 * "cuda-softmax-v1" (softmax, log-softmax), against f64 references.
 *
 * Shapes from one element to rows longer than a block's sweep (5000),
 * each with rows packed and 16-byte aligned (the vector path), pitched by
 * an odd count (scalar path), or read and written with a column stride of
 * 2; every combination of input and output type over the cases; scale
 * and shift present or absent, contiguous or strided.  The warp kernels run where a row fits
 * their 8-rows-per-block shared memory (cols <= 1024), the register kernels
 * (rows_regs.cuh) where it fits their registers, whole (2048, 4096, 8192,
 * 16384 fill some exactly) or in part; the staged kernels (rows_staged.cu,
 * sm_90a) where their stages fit 227 KiB of shared memory, on odd cases
 * with a grid of 2 blocks, so that each row group goes round its stages,
 * the norm's parameters in shared memory as f32 or in their own types.
 * Tolerance: eps(y_type) * |ref| + 2^-18 * (1 + |ref|): f32 statistics
 * over at most a few thousand O(1) values, and expf/logf.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cuda_kernel.h"
#include "tests.h"

typedef struct rows_shape {
    int64_t rows, cols;
} rows_shape_t;

static const rows_shape_t shapes[] = {{1, 1},    {3, 7},     {5, 1000},   {33, 257},
                                      {64, 512},  {2, 5000},  {17, 1024},  {4, 4096},
                                      {9, 2048},  {3, 8192},  {2, 16384}, {300, 64}};
#define SHAPE_COUNT ((int)(sizeof shapes / sizeof shapes[0]))

typedef struct rows_layout {
    int64_t x_row, x_col, y_row, y_col;
} rows_layout_t;

/* Case i's layout: packed, pitched by an odd count, or column stride 2. */
static rows_layout_t layout_of(int i, int64_t cols) {
    switch (i % 3) {
    case 1: return (rows_layout_t){cols + 3, 1, cols + 5, 1};
    case 2: return (rows_layout_t){2 * cols + 1, 2, 2 * cols, 2};
    default: return (rows_layout_t){cols, 1, cols, 1};
    }
}

/* A row kernel: the shared-memory ones (block, warp: 8 rows per block of
 * 256, one warp each) or a register one (pieces > 0: group threads a row,
 * rows_per_block rows a block, rows of at most group * pieces * 8). */
typedef struct rows_kernel {
    const char *name; /* symbol: cdnn_cuda_<op>_<name> */
    int warp;
    int group, rows_per_block, pieces;
    int packed; /* pieces of 16 bytes of x rather than 8 elements */
    int stages; /* a staged kernel (rows_staged.cu): S stages a row group */
} rows_kernel_t;

#define REGS_KERNEL(name, g, r, n) {"regs_" #name, 0, g, r, n, 0, 0},
#define PACKED_KERNEL(name, g, r, n) {"packed_" #name, 0, g, r, n, 1, 0},
#define STAGED_KERNEL(name, g, r, s) {"staged_" #name, 0, g, r, 0, 0, s},
static const rows_kernel_t row_kernels[] = {
    {"block", 0, 0, 0, 0, 0, 0},
    {"warp", 1, 0, 0, 0, 0, 0},
#ifdef CDNN_CUDA_ROWS_REGS_CONFIGS
    CDNN_CUDA_ROWS_REGS_CONFIGS(REGS_KERNEL)
#endif
#ifdef CDNN_CUDA_ROWS_PACKED_CONFIGS
    CDNN_CUDA_ROWS_PACKED_CONFIGS(PACKED_KERNEL)
#endif
};
#define ROW_KERNEL_COUNT ((int)(sizeof row_kernels / sizeof row_kernels[0]))

/* rows_staged.cu: both ops, sm_90a alone. */
static const rows_kernel_t staged_kernels[] = {
#ifdef CDNN_CUDA_ROWS_STAGED_CONFIGS
    CDNN_CUDA_ROWS_STAGED_CONFIGS(STAGED_KERNEL)
#endif
    {NULL, 0, 0, 0, 0, 0, 0}};

/* A staged kernel's dynamic shared memory for rows of cols elements. */
static int64_t staged_smem(const rows_kernel_t *k, int64_t cols, int32_t x_type) {
    return CDNN_CUDA_ROWS_STAGED_SMEM((int64_t)k->rows_per_block, (int64_t)k->stages, cols,
                                      (int64_t)(x_type == CDNN_CUDA_F32 ? 4 : 2));
}

/* Whether kernel k takes rows of `cols` elements of x_type. */
static int rows_fit(const rows_kernel_t *k, int64_t cols, int32_t x_type) {
    if (k->stages) /* room for an f32 scale and shift too */
        return staged_smem(k, cols, x_type) +
                   2 * CDNN_CUDA_ROWS_STAGED_PARAM(cols, x_type == CDNN_CUDA_F32 ? 4 : 2, 4) <=
               227 * 1024;
    if (k->packed)
        return cols * (x_type == CDNN_CUDA_F32 ? 4 : 2) <= (int64_t)k->group * k->pieces * 16;
    if (k->pieces)
        return cols <= (int64_t)k->group * k->pieces * 8;
    return !k->warp || cols <= 1024;
}

/* Case i: a staged kernel's grid is a block per rows_per_block rows for
 * even i, at most 2 blocks for odd i (each row group then loops over many
 * rows, its stages refilled and their barriers' phases turned). */
static void rows_launch(const gpu_t *gpu, sdk_cu_function fn, const rows_kernel_t *k,
                        int64_t rows, int64_t cols, int32_t x_type, int64_t extra_smem, int i,
                        void *params) {
    const int warp = k->warp;
    if (k->stages) {
        int64_t grid = (rows + k->rows_per_block - 1) / k->rows_per_block;
        if (i % 2 && grid > 2)
            grid = 2;
        gpu_launch(gpu, fn, (unsigned)grid, 1, 1, (unsigned)(k->group * k->rows_per_block),
                   (unsigned)(staged_smem(k, cols, x_type) + extra_smem), params);
    } else if (k->pieces)
        gpu_launch(gpu, fn, (unsigned)((rows + k->rows_per_block - 1) / k->rows_per_block), 1,
                   1, (unsigned)(k->group * k->rows_per_block), 0, params);
    else if (warp)
        gpu_launch(gpu, fn, (unsigned)((rows + 7) / 8), 1, 1, 256,
                   (unsigned)(CDNN_CUDA_NORM_WARP_ROWS_PER_BLOCK * cols * 4), params);
    else
        gpu_launch(gpu, fn, (unsigned)rows, 1, 1, 256, (unsigned)(cols * 4), params);
    gpu_sync(gpu);
}

static double row_tolerance(int32_t type, double ref) {
    return elem_epsilon(type) * fabs(ref) + ldexp(1 + fabs(ref), -18);
}

/* ---- norm ---- */

static void norm_reference(const cdnn_cuda_norm_params_t *p, const tensor_t *x,
                           const tensor_t *scale, const tensor_t *shift, tensor_t *y,
                           check_t *check) {
    for (int64_t r = 0; r < p->rows; ++r) {
        double mean = 0, second = 0;
        for (int64_t j = 0; j < p->cols; ++j)
            mean += tensor_get(x, r * p->x_row_stride + j * p->x_col_stride);
        mean /= (double)p->cols;
        for (int64_t j = 0; j < p->cols; ++j) {
            const double v = tensor_get(x, r * p->x_row_stride + j * p->x_col_stride);
            const double d = p->kind == CDNN_CUDA_NORM_RMS ? v : v - mean;
            second += d * d;
        }
        const double inv_std = 1 / sqrt(second / (double)p->cols + p->epsilon);
        for (int64_t j = 0; j < p->cols; ++j) {
            const double v = tensor_get(x, r * p->x_row_stride + j * p->x_col_stride);
            double ref = (p->kind == CDNN_CUDA_NORM_RMS ? v : v - mean) * inv_std;
            if (p->scale)
                ref *= tensor_get(scale, j * p->scale_stride);
            if (p->shift)
                ref += tensor_get(shift, j * p->shift_stride);
            check_element(check, y, r * p->y_row_stride + j * p->y_col_stride, ref,
                          row_tolerance(p->y_type, ref));
        }
    }
    check_untouched(check, y);
}

static void norm_case(test_state_t *state, sdk_cu_function fn, const rows_kernel_t *k, int i,
                      int kind, check_t *check) {
    const gpu_t *gpu = state->gpu;
    const rows_shape_t *s = &shapes[i];
    const rows_layout_t l = layout_of(i + kind, s->cols);
    cdnn_cuda_norm_params_t p = {
        .rows = s->rows, .cols = s->cols, .x_row_stride = l.x_row, .x_col_stride = l.x_col,
        .y_row_stride = l.y_row, .y_col_stride = l.y_col, .scale_stride = 1,
        .shift_stride = i % 3 == 1 ? 1 : 2, /* contiguous: read in pieces with y's */
        .epsilon = 1e-5f, .kind = kind, .x_type = 1 + i % 3, .y_type = 1 + (i + kind + 1) % 3,
        .scale_type = 1 + (i + 2) % 3, .shift_type = CDNN_CUDA_F32};
    /* Rows offset from zero (mean 0.5), so layer-norm's centring matters. */
    tensor_t x = tensor_random(gpu, &state->rng, p.x_type,
                               span_of(1, s->rows, s->cols, 0, l.x_row, l.x_col), -0.5, 1.5);
    tensor_t y = tensor_poisoned(gpu, p.y_type, span_of(1, s->rows, s->cols, 0, l.y_row, l.y_col));
    tensor_t scale = {0}, shift = {0};
    if (i % 2 == 0) {
        scale = tensor_random(gpu, &state->rng, p.scale_type, s->cols, 0.5, 1.5);
        p.scale = (const void *)(uintptr_t)scale.device;
    }
    if (i % 4 < 2 && kind == CDNN_CUDA_NORM_LAYER) {
        shift = tensor_random(gpu, &state->rng, p.shift_type, 2 * s->cols, -1, 1);
        p.shift = (const void *)(uintptr_t)shift.device;
    }
    p.x = (const void *)(uintptr_t)x.device;
    p.y = (void *)(uintptr_t)y.device;
    /* A staged norm kernel keeps the scale and shift in shared memory too:
     * as f32 where the launch gives it room for that (cases 0-3, 8-11 of
     * layer-norm, 4-7 of RMS-norm), else in their own types. */
    const int64_t x_bytes = (int64_t)elem_size(p.x_type);
    const int f32 = (i / 4 + kind) % 2 == 0;
    int64_t params = 0;
    if (p.scale)
        params += CDNN_CUDA_ROWS_STAGED_PARAM(s->cols, x_bytes,
                                              f32 ? 4 : (int64_t)elem_size(p.scale_type));
    if (p.shift)
        params += CDNN_CUDA_ROWS_STAGED_PARAM(s->cols, x_bytes,
                                              f32 ? 4 : (int64_t)elem_size(p.shift_type));
    rows_launch(gpu, fn, k, s->rows, s->cols, p.x_type, params, i + kind, &p);
    tensor_fetch(gpu, &y);
    norm_reference(&p, &x, &scale, &shift, &y, check);
    tensor_free(gpu, &x);
    tensor_free(gpu, &y);
    if (scale.host)
        tensor_free(gpu, &scale);
    if (shift.host)
        tensor_free(gpu, &shift);
}

static void norm_kernels(test_state_t *state, sdk_cu_module module,
                         const rows_kernel_t *kernels, int count) {
    for (int k = 0; k < count; ++k) {
        char symbol[64];
        snprintf(symbol, sizeof symbol, "cdnn_cuda_norm_%s", kernels[k].name);
        sdk_cu_function fn = gpu_function(state->gpu, module, symbol);
        check_t check = {0};
        int cases = 0;
        for (int i = 0; i < SHAPE_COUNT; ++i)
            for (int kind = CDNN_CUDA_NORM_LAYER; kind <= CDNN_CUDA_NORM_RMS; ++kind) {
                if (!rows_fit(&kernels[k], shapes[i].cols, 1 + i % 3))
                    continue;
                norm_case(state, fn, &kernels[k], i, kind, &check);
                ++cases;
            }
        test_report(state, symbol, cases, &check);
    }
}

void test_norm(test_state_t *state, sdk_cu_module module) {
    norm_kernels(state, module, row_kernels, ROW_KERNEL_COUNT);
}

/* ---- softmax ---- */

static void softmax_reference(const cdnn_cuda_softmax_params_t *p, const tensor_t *x,
                              tensor_t *y, check_t *check) {
    for (int64_t r = 0; r < p->rows; ++r) {
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j < p->cols; ++j)
            max = fmax(max, tensor_get(x, r * p->x_row_stride + j * p->x_col_stride));
        for (int64_t j = 0; j < p->cols; ++j)
            sum += exp(tensor_get(x, r * p->x_row_stride + j * p->x_col_stride) - max);
        for (int64_t j = 0; j < p->cols; ++j) {
            const double v = tensor_get(x, r * p->x_row_stride + j * p->x_col_stride) - max;
            const double ref = p->log ? v - log(sum) : exp(v) / sum;
            check_element(check, y, r * p->y_row_stride + j * p->y_col_stride, ref,
                          row_tolerance(p->y_type, ref));
        }
    }
    check_untouched(check, y);
}

static void softmax_case(test_state_t *state, sdk_cu_function fn, const rows_kernel_t *k,
                         int i, int log, check_t *check) {
    const gpu_t *gpu = state->gpu;
    const rows_shape_t *s = &shapes[i];
    const rows_layout_t l = layout_of(i + log, s->cols);
    cdnn_cuda_softmax_params_t p = {
        .rows = s->rows, .cols = s->cols, .x_row_stride = l.x_row, .x_col_stride = l.x_col,
        .y_row_stride = l.y_row, .y_col_stride = l.y_col, .x_type = 1 + i % 3,
        .y_type = 1 + (i + log + 1) % 3, .log = log};
    tensor_t x = tensor_random(gpu, &state->rng, p.x_type,
                               span_of(1, s->rows, s->cols, 0, l.x_row, l.x_col), -8, 8);
    tensor_t y = tensor_poisoned(gpu, p.y_type, span_of(1, s->rows, s->cols, 0, l.y_row, l.y_col));
    p.x = (const void *)(uintptr_t)x.device;
    p.y = (void *)(uintptr_t)y.device;
    rows_launch(gpu, fn, k, s->rows, s->cols, p.x_type, 0, i + log, &p);
    tensor_fetch(gpu, &y);
    softmax_reference(&p, &x, &y, check);
    tensor_free(gpu, &x);
    tensor_free(gpu, &y);
}

static void softmax_kernels(test_state_t *state, sdk_cu_module module,
                            const rows_kernel_t *kernels, int count) {
    for (int k = 0; k < count; ++k) {
        char symbol[64];
        snprintf(symbol, sizeof symbol, "cdnn_cuda_softmax_%s", kernels[k].name);
        sdk_cu_function fn = gpu_function(state->gpu, module, symbol);
        check_t check = {0};
        int cases = 0;
        for (int i = 0; i < SHAPE_COUNT; ++i)
            for (int log = 0; log <= 1; ++log) {
                if (!rows_fit(&kernels[k], shapes[i].cols, 1 + i % 3))
                    continue;
                softmax_case(state, fn, &kernels[k], i, log, &check);
                ++cases;
            }
        test_report(state, symbol, cases, &check);
    }
}

void test_softmax(test_state_t *state, sdk_cu_module module) {
    softmax_kernels(state, module, row_kernels, ROW_KERNEL_COUNT);
}

/* rows_staged.cu: the staged norm and softmax kernels on the same cases. */
void test_rows_staged(test_state_t *state, sdk_cu_module module) {
    const int count = (int)(sizeof staged_kernels / sizeof staged_kernels[0]) - 1;
    norm_kernels(state, module, staged_kernels, count);
    softmax_kernels(state, module, staged_kernels, count);
}
