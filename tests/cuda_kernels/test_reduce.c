/*
 * test_reduce.c -- the reduction kernels, "cuda-reduce-v1", against f64
 * references.
 *
 * The row kernels: every mode on rows from none to longer than a block's
 * sweep (5000), in four layouts -- rows packed and 16-byte aligned (the
 * vector path), pitched by an odd count (scalar path), a column stride of
 * 2, and rows adjacent in memory (row stride 1: a leading axis reduced) --
 * with every input and output type over the cases and y strided by 1 or
 * 3.  Half the cases launch a grid of 2 blocks, so that each block goes
 * round the rows a grid further.
 *
 * The column kernels: every mode on outputs from 2 (fewer than a warp
 * owns) to 4096 (16 column groups; tails of a thread's outputs), reduced
 * axes empty, 1 long and up to 4096, in one split (y written by the
 * reducing pass) or several (partial results, poisoned first, then the
 * combining pass), splits unequal (the last shorter) and more splits than
 * a block has warps; x's rows adjacent with reduced indices a multiple of
 * 16 bytes apart (the 16-byte path), an odd pitch or exactly the outputs
 * apart, or rows 2 apart (one element a load); every type pair, y strided
 * by 1 or 3.
 *
 * Tolerance: eps(y_type) * |ref| for the output's rounding, plus, for the
 * sums, 2^-20 times the sum of the magnitudes added (f32 accumulation over
 * at most 5000 terms); for the product, 5000 * 2^-22 |ref|; minimum and
 * maximum are exact in f32.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cuda_kernel.h"
#include "tests.h"

typedef struct reduce_shape {
    int64_t rows, cols;
} reduce_shape_t;

static const reduce_shape_t shapes[] = {{1, 1},   {3, 7},    {5, 1000}, {33, 257}, {64, 512},
                                        {2, 5000}, {4, 4096}, {300, 64}, {70, 9},   {3, 0}};
#define SHAPE_COUNT ((int)(sizeof shapes / sizeof shapes[0]))

typedef struct reduce_layout {
    int64_t x_row, x_col, y_row;
} reduce_layout_t;

/* Case i's layout of an r x c x (four kinds, see the top) and its y. */
static reduce_layout_t layout_of(int i, int64_t r, int64_t c) {
    const int64_t y_row = i % 2 ? 3 : 1;
    switch (i % 4) {
    case 1: return (reduce_layout_t){c + 3, 1, y_row};
    case 2: return (reduce_layout_t){2 * c + 1, 2, y_row};
    case 3: return (reduce_layout_t){1, r + 1, y_row};
    default: return (reduce_layout_t){c, 1, y_row};
    }
}

/* What a kernel's launch is: G threads a row, R rows a block. */
typedef struct reduce_kernel {
    const char *name; /* symbol: cdnn_cuda_reduce_<name> */
    int group, rows_per_block;
} reduce_kernel_t;

#define ROWS_KERNEL(name, g, r) {"rows_" #name, g, r},
static const reduce_kernel_t kernels[] = {CDNN_CUDA_REDUCE_ROWS_CONFIGS(ROWS_KERNEL)};
#undef ROWS_KERNEL

/* The reference of one row in f64, and the magnitude its f32 accumulation
 * error scales with. */
static double reference(int mode, const tensor_t *x, int64_t at, int64_t stride, int64_t cols,
                        double *magnitude) {
    double acc = mode == CDNN_CUDA_REDUCE_MUL ? 1 : mode == CDNN_CUDA_REDUCE_MIN ? INFINITY
                 : mode == CDNN_CUDA_REDUCE_MAX ? -INFINITY : 0;
    *magnitude = 0;
    for (int64_t j = 0; j < cols; ++j) {
        const double v = tensor_get(x, at + j * stride);
        switch (mode) {
        case CDNN_CUDA_REDUCE_MUL: acc *= v; break;
        case CDNN_CUDA_REDUCE_MIN: acc = fmin(acc, v); break;
        case CDNN_CUDA_REDUCE_MAX: acc = fmax(acc, v); break;
        case CDNN_CUDA_REDUCE_AMAX: acc = fmax(acc, fabs(v)); break;
        case CDNN_CUDA_REDUCE_NORM2: acc += v * v; *magnitude += v * v; break;
        case CDNN_CUDA_REDUCE_NORM1: acc += fabs(v); *magnitude += fabs(v); break;
        default: acc += v; *magnitude += fabs(v); break;
        }
    }
    if (mode == CDNN_CUDA_REDUCE_AVG) {
        acc /= (double)cols;
        *magnitude /= (double)cols;
    }
    if (mode == CDNN_CUDA_REDUCE_NORM2) {
        acc = sqrt(acc);
        *magnitude = acc; /* sqrt halves the sum's relative error */
    }
    return acc;
}

static double tolerance(int mode, int32_t y_type, double ref, double magnitude) {
    const double rounding = elem_epsilon(y_type) * fabs(ref);
    switch (mode) {
    case CDNN_CUDA_REDUCE_MIN:
    case CDNN_CUDA_REDUCE_MAX:
    case CDNN_CUDA_REDUCE_AMAX: return rounding;
    case CDNN_CUDA_REDUCE_MUL: return rounding + 5000 * ldexp(fabs(ref), -22);
    default: return rounding + ldexp(magnitude, -20) + ldexp(1, -40);
    }
}

/* Random x spanning rows x cols in layout l (a product's values near 1). */
static tensor_t random_x(test_state_t *state, int32_t type, int mode, int64_t rows, int64_t cols,
                         reduce_layout_t l) {
    /* Products of values this near 1 stay near 1 over 5000 terms (a 1e-6
     * would be an f16 subnormal, a few ulps coarser than eps |ref|). */
    const int product = mode == CDNN_CUDA_REDUCE_MUL;
    return tensor_random(state->gpu, &state->rng, type,
                         cols ? span_of(1, rows, cols, 0, l.x_row, l.x_col) : 1,
                         product ? 0.99 : -2, product ? 1.01 : 2);
}

/* y (fetched) against the f64 reference of every row of x; y untouched
 * elsewhere. */
static void check_rows(check_t *check, int mode, const tensor_t *x, tensor_t *y, int64_t rows,
                       int64_t cols, reduce_layout_t l) {
    for (int64_t r = 0; r < rows; ++r) {
        double magnitude = 0;
        const double ref = reference(mode, x, r * l.x_row, l.x_col, cols, &magnitude);
        check_element(check, y, r * l.y_row, ref, tolerance(mode, y->type, ref, magnitude));
    }
    check_untouched(check, y);
}

static void reduce_case(test_state_t *state, sdk_cu_function fn, const reduce_kernel_t *k, int i,
                        int mode, check_t *check) {
    const gpu_t *gpu = state->gpu;
    const reduce_shape_t *s = &shapes[i];
    const reduce_layout_t l = layout_of(i + mode, s->rows, s->cols);
    cdnn_cuda_reduce_params_t p = {
        .rows = s->rows, .cols = s->cols, .x_row_stride = l.x_row, .x_col_stride = l.x_col,
        .y_row_stride = l.y_row, .x_type = 1 + (i + mode) % 3, .y_type = 1 + (i + 2 * mode) % 3,
        .mode = mode};
    tensor_t x = random_x(state, p.x_type, mode, s->rows, s->cols, l);
    tensor_t y = tensor_poisoned(gpu, p.y_type, span_of(1, s->rows, 1, 0, l.y_row, 1));
    p.x = (const void *)(uintptr_t)x.device;
    p.y = (void *)(uintptr_t)y.device;
    int64_t grid = (s->rows + k->rows_per_block - 1) / k->rows_per_block;
    if (i % 2 && grid > 2)
        grid = 2;
    gpu_launch(gpu, fn, (unsigned)(grid ? grid : 1), 1, 1,
               (unsigned)(k->group * k->rows_per_block), 0, &p);
    tensor_fetch(gpu, &y);
    check_rows(check, mode, &x, &y, s->rows, s->cols, l);
    tensor_free(gpu, &x);
    tensor_free(gpu, &y);
}

/* ---- the column kernels --------------------------------------------------------------------- */

typedef struct columns_shape {
    int64_t rows, cols; /* outputs, the reduced axis */
    int32_t splits;
} columns_shape_t;

static const columns_shape_t column_shapes[] = {
    {2, 1, 1},      {300, 1, 1},   {300, 0, 1},  {257, 33, 1},   {513, 100, 3},
    {1000, 517, 5}, {64, 2000, 20}, {8, 4096, 40}, {4096, 16, 2}, {130, 700, 9}};
#define COLUMN_SHAPE_COUNT ((int)(sizeof column_shapes / sizeof column_shapes[0]))

/* Case i's layout of r outputs (see the top): rows adjacent, reduced
 * indices r rounded up to 8 apart, r + 1, r; or rows 2 apart. */
static reduce_layout_t column_layout_of(int i, int64_t r) {
    const int64_t y_row = i % 3 == 1 ? 3 : 1;
    switch (i % 4) {
    case 1: return (reduce_layout_t){1, r + 1, y_row};
    case 2: return (reduce_layout_t){1, r, y_row};
    case 3: return (reduce_layout_t){2, 2 * r + 1, y_row};
    default: return (reduce_layout_t){1, (r + 7) / 8 * 8, y_row};
    }
}

/* What a column kernel's launch is: W warps a block. */
typedef struct columns_kernel {
    const char *name; /* symbol: cdnn_cuda_reduce_<name> */
    int warps;
} columns_kernel_t;

#define COLUMNS_KERNEL(name, w, loads, b) {"columns_" #name, w},
static const columns_kernel_t column_kernels[] = {
    CDNN_CUDA_REDUCE_COLUMNS_CONFIGS(COLUMNS_KERNEL)};
#undef COLUMNS_KERNEL

/* The reducing pass and, over several splits, the combining one, as
 * cuda_kernel.h gives their grids. */
static void columns_case(test_state_t *state, sdk_cu_function fn, const columns_kernel_t *k,
                         int i, int mode, check_t *check) {
    const gpu_t *gpu = state->gpu;
    const columns_shape_t *s = &column_shapes[i];
    const reduce_layout_t l = column_layout_of(i + mode, s->rows);
    cdnn_cuda_reduce_columns_params_t c = {
        .reduce = {.rows = s->rows, .cols = s->cols, .x_row_stride = l.x_row,
                   .x_col_stride = l.x_col, .y_row_stride = l.y_row,
                   .x_type = 1 + (i + mode) % 3, .y_type = 1 + (i + 2 * mode) % 3,
                   .mode = mode},
        .split_cols = (s->cols + s->splits - 1) / s->splits,
        .splits = s->splits};
    tensor_t x = random_x(state, c.reduce.x_type, mode, s->rows, s->cols, l);
    tensor_t y = tensor_poisoned(gpu, c.reduce.y_type, span_of(1, s->rows, 1, 0, l.y_row, 1));
    tensor_t partials = tensor_poisoned(gpu, CDNN_CUDA_F32, s->splits * s->rows);
    c.reduce.x = (const void *)(uintptr_t)x.device;
    c.reduce.y = (void *)(uintptr_t)y.device;
    c.partials = s->splits > 1 ? (float *)(uintptr_t)partials.device : NULL;
    const int64_t width = CDNN_CUDA_REDUCE_COLUMNS_WIDTH(c.reduce.x_type);
    const unsigned threads = (unsigned)(32 * k->warps);
    gpu_launch(gpu, fn, (unsigned)((s->rows + width - 1) / width), (unsigned)s->splits, 1,
               threads, 0, &c);
    if (s->splits > 1) {
        c.combine = 1;
        gpu_launch(gpu, fn, (unsigned)((s->rows + 31) / 32), 1, 1, threads, 0, &c);
    }
    tensor_fetch(gpu, &y);
    check_rows(check, mode, &x, &y, s->rows, s->cols, l);
    tensor_free(gpu, &x);
    tensor_free(gpu, &y);
    tensor_free(gpu, &partials);
}

/* Empty rows give the identity, which is not finite for min, max and
 * (0 / 0) mean: those are left to the finite modes' cases. */
static int finite_on_empty(int mode) {
    return mode == CDNN_CUDA_REDUCE_ADD || mode == CDNN_CUDA_REDUCE_MUL ||
           mode == CDNN_CUDA_REDUCE_NORM1 || mode == CDNN_CUDA_REDUCE_NORM2 ||
           mode == CDNN_CUDA_REDUCE_AMAX;
}

static void test_row_kernels(test_state_t *state, sdk_cu_module module) {
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; ++k) {
        char symbol[64];
        snprintf(symbol, sizeof symbol, "cdnn_cuda_reduce_%s", kernels[k].name);
        sdk_cu_function fn = gpu_function(state->gpu, module, symbol);
        check_t check = {0};
        int cases = 0;
        for (int i = 0; i < SHAPE_COUNT; ++i)
            for (int mode = 0; mode < CDNN_CUDA_REDUCE_MODE_COUNT; ++mode) {
                if (shapes[i].cols == 0 && !finite_on_empty(mode))
                    continue;
                reduce_case(state, fn, &kernels[k], i, mode, &check);
                ++cases;
            }
        test_report(state, symbol, cases, &check);
    }
}

static void test_column_kernels(test_state_t *state, sdk_cu_module module) {
    for (size_t k = 0; k < sizeof column_kernels / sizeof column_kernels[0]; ++k) {
        char symbol[64];
        snprintf(symbol, sizeof symbol, "cdnn_cuda_reduce_%s", column_kernels[k].name);
        sdk_cu_function fn = gpu_function(state->gpu, module, symbol);
        check_t check = {0};
        int cases = 0;
        for (int i = 0; i < COLUMN_SHAPE_COUNT; ++i)
            for (int mode = 0; mode < CDNN_CUDA_REDUCE_MODE_COUNT; ++mode) {
                if (column_shapes[i].cols == 0 && !finite_on_empty(mode))
                    continue;
                columns_case(state, fn, &column_kernels[k], i, mode, &check);
                ++cases;
            }
        test_report(state, symbol, cases, &check);
    }
}

void test_reduce(test_state_t *state, sdk_cu_module module) {
    test_row_kernels(state, module);
    test_column_kernels(state, module);
}
