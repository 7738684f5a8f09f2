/*
 * test_host_rows.c -- the row kernels (softmax, reduce, norm) of every
 * object this CPU runs, against f64 references: rows of 1, odd lengths,
 * rows longer than a chunk and than softmax's buffer, outer ranks 0-2,
 * packed, padded and transposed (the reduced dim not innermost) layouts,
 * f32/f16/bf16 in and out, in place, several threads.
 *
 * Tolerances (u = 2^-24, eps(t) half an ulp of the output type):
 *   softmax      (eps(y) + 2e-6) |y|; log-softmax adds 1e-6 (|sx - max| + |log sum| + 1)
 *   reduce sums  eps(y) |y| + (cols + 2) u sum|x|; product (cols + 2) 2u |y|;
 *                min/max exact up to eps(y)
 *   norm         eps(y) |y| + 1e-5 (|x - mean| inv_std |scale| + |bias|)
 *                + 1e-6 |mean inv_std scale| (the statistics' error, shared by the row)
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hk_util.h"

#define MAX_OBJECTS 8
#define F32 CDNN_HOST_F32
#define F16 CDNN_HOST_F16
#define BF16 CDNN_HOST_BF16

/* A row problem: outer dims, cols, and how x and y lie in memory. */
typedef struct row_case {
    int32_t outer_rank;
    int64_t outer[2];
    int64_t cols;
    int32_t tx, ty;
    int layout;   /* 0 packed, 1 padded lines, 2 transposed (cols outermost) */
    int in_place; /* y is x */
    int threads;
} row_case_t;

static const row_case_t shapes[] = {
    {0, {1, 1}, 1, F32, F32, 0, 0, 1},
    {1, {3, 1}, 5, F16, F32, 1, 0, 1},
    {2, {2, 3}, 17, BF16, BF16, 2, 0, 3},
    {1, {4, 1}, 1000, F32, F16, 0, 0, 2},
    {1, {2, 1}, 5000, F32, F32, 1, 0, 2},
    {1, {3, 1}, 4096, F16, F16, 0, 1, 1},
    {2, {40, 20}, 9, F32, F32, 2, 0, 4},
    {1, {1, 1}, 2049, BF16, F32, 0, 0, 1},
};

#define SHAPE_COUNT (sizeof shapes / sizeof shapes[0])

/* x's strides {outer.., col} for the case's layout; dims likewise. */
static void x_layout(const row_case_t *c, int32_t *rank, int64_t *dims,
                     int64_t *strides)
{
    int32_t r = c->outer_rank;
    *rank = r + 1;
    for (int32_t d = 0; d < r; d++)
        dims[d] = c->outer[d];
    dims[r] = c->cols;
    int64_t rows = 1;
    for (int32_t d = 0; d < r; d++)
        rows *= c->outer[d];
    if (c->layout == 2) { /* column-major: the reduced dim outermost */
        strides[r] = rows;
        int64_t s = 1;
        for (int32_t d = r - 1; d >= 0; d--) {
            strides[d] = s;
            s *= c->outer[d];
        }
        return;
    }
    int64_t line = c->cols + (c->layout == 1 ? 3 : 0);
    strides[r] = 1;
    int64_t s = line;
    for (int32_t d = r - 1; d >= 0; d--) {
        strides[d] = s;
        s *= c->outer[d];
    }
}

static int64_t row_count(const row_case_t *c)
{
    int64_t rows = 1;
    for (int32_t d = 0; d < c->outer_rank; d++)
        rows *= c->outer[d];
    return rows;
}

/* Index of element (row, j) in a rank outer_rank + 1 buffer. */
static void row_index(const row_case_t *c, int64_t row, int64_t j,
                      int64_t *idx)
{
    for (int32_t d = c->outer_rank - 1; d >= 0; d--) {
        idx[d] = row % c->outer[d];
        row /= c->outer[d];
    }
    idx[c->outer_rank] = j;
}

static void make_x(const row_case_t *c, hk_buffer_t *x, uint64_t *rng,
                   double lo, double hi)
{
    int32_t rank;
    int64_t dims[CDNN_HOST_MAX_RANK], strides[CDNN_HOST_MAX_RANK];
    x_layout(c, &rank, dims, strides);
    hk_buffer_init(x, c->tx, rank, dims, strides);
    hk_buffer_fill(x, rng, lo, hi);
}

/* x's values, row by row, before the kernel ran (in place overwrites). */
static double *save_rows(const row_case_t *c, const hk_buffer_t *x)
{
    int64_t rows = row_count(c), idx[CDNN_HOST_MAX_RANK];
    double *v = malloc((size_t)(rows * c->cols) * sizeof *v + 8);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < c->cols; j++) {
            row_index(c, r, j, idx);
            v[r * c->cols + j] = hk_get(x, idx);
        }
    return v;
}

static void set_parallel(cdnn_host_parallel_t *p, int threads)
{
    p->threads = threads;
    p->parallel_for = threads > 1 ? hk_parallel_for : NULL;
}

static void label_of(char *label, size_t cap, const hk_object_t *o,
                     const row_case_t *c, const char *what)
{
    snprintf(label, cap, "%s.%s %s rows %lld cols %lld x %s y %s layout %d%s",
             o->name, o->level, what, (long long)row_count(c),
             (long long)c->cols, hk_type_name(c->tx), hk_type_name(c->ty),
             c->layout, c->in_place ? " in place" : "");
}

/* ------------------------------------------------------------------------
 * Softmax
 * ------------------------------------------------------------------------ */

static void softmax_reference(const double *x, int64_t n, double scale,
                              int log_mode, double *y, double *log_sum)
{
    double max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; j++)
        max = fmax(max, scale * x[j]);
    for (int64_t j = 0; j < n; j++)
        sum += exp(scale * x[j] - max);
    *log_sum = log(sum);
    for (int64_t j = 0; j < n; j++)
        y[j] = log_mode ? scale * x[j] - max - *log_sum
                        : exp(scale * x[j] - max) / sum;
}

static void check_softmax(const row_case_t *c, const hk_buffer_t *y,
                          const double *xv, double scale, int log_mode,
                          const char *label)
{
    int64_t idx[CDNN_HOST_MAX_RANK];
    double *want = malloc((size_t)c->cols * sizeof *want);
    hk_check_t check;
    hk_check_begin(&check);
    for (int64_t r = 0; r < row_count(c); r++) {
        double log_sum;
        const double *x = xv + r * c->cols;
        softmax_reference(x, c->cols, scale, log_mode, want, &log_sum);
        for (int64_t j = 0; j < c->cols; j++) {
            row_index(c, r, j, idx);
            double tol = (hk_type_eps(c->ty) + 2e-6) * fabs(want[j]) +
                         hk_type_tiny(c->ty);
            if (log_mode)
                tol += 1e-6 * (fabs(want[j] + log_sum) + fabs(log_sum) + 1);
            hk_check_value(&check, hk_get(y, idx), want[j], tol, "y",
                           r * c->cols + j);
        }
    }
    free(want);
    hk_check_end(&check, label);
}

static void run_softmax(const hk_object_t *o, const row_case_t *c,
                        int log_mode, uint64_t seed)
{
    uint64_t rng = hk_rng_seed(seed);
    hk_buffer_t x, y;
    make_x(c, &x, &rng, -4.0, 4.0);
    double *xv = save_rows(c, &x);
    if (c->in_place) {
        y = x;
    } else {
        int32_t rank;
        int64_t dims[CDNN_HOST_MAX_RANK], strides[CDNN_HOST_MAX_RANK];
        x_layout(c, &rank, dims, strides);
        hk_buffer_init(&y, c->ty, rank, dims, strides);
    }
    cdnn_host_softmax_args_t a;
    memset(&a, 0, sizeof a);
    a.outer_rank = c->outer_rank;
    memcpy(a.outer_dims, c->outer, sizeof c->outer);
    a.cols = c->cols;
    a.log = log_mode;
    a.scale = log_mode ? 0.75f : 1.0f;
    a.x = x.t;
    a.y = y.t;
    set_parallel(&a.parallel, c->threads);
    cdnn_host_softmax_fn entry = (cdnn_host_softmax_fn)o->entry;
    size_t need = 1;
    assert_int_equal(entry(&a, &need), CDNN_HOST_OK);
    assert_int_equal(need, 0);
    char label[200];
    label_of(label, sizeof label, o, c, log_mode ? "log-softmax" : "softmax");
    if (entry(&a, NULL) != CDNN_HOST_OK)
        fail_msg("%s: refused", label);
    check_softmax(c, &y, xv, a.scale, log_mode, label);
    free(xv);
    hk_buffer_free(&x);
    if (!c->in_place)
        hk_buffer_free(&y);
}

static void test_softmax(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("softmax_", objects, MAX_OBJECTS,
                                         &skipped);
    for (int o = 0; o < count; o++)
        for (size_t s = 0; s < SHAPE_COUNT; s++)
            for (int log_mode = 0; log_mode < 2; log_mode++)
                run_softmax(&objects[o], &shapes[s], log_mode,
                            (uint64_t)(o * 100 + s * 2 + log_mode));
    hk_unload_objects(objects, count);
}

/* ------------------------------------------------------------------------
 * Reductions
 * ------------------------------------------------------------------------ */

static double reduce_reference(int32_t mode, const double *x, int64_t n,
                               double *abs_sum)
{
    double acc = mode == CDNN_HOST_REDUCE_MUL ? 1.0
                 : mode == CDNN_HOST_REDUCE_MIN ? INFINITY
                 : mode == CDNN_HOST_REDUCE_MAX ? -INFINITY : 0.0;
    *abs_sum = 0;
    for (int64_t j = 0; j < n; j++) {
        double v = x[j];
        *abs_sum += mode == CDNN_HOST_REDUCE_NORM2 ? v * v : fabs(v);
        switch (mode) {
        case CDNN_HOST_REDUCE_MUL: acc *= v; break;
        case CDNN_HOST_REDUCE_MIN: acc = fmin(acc, v); break;
        case CDNN_HOST_REDUCE_MAX: acc = fmax(acc, v); break;
        case CDNN_HOST_REDUCE_AMAX: acc = fmax(acc, fabs(v)); break;
        case CDNN_HOST_REDUCE_NORM1: acc += fabs(v); break;
        case CDNN_HOST_REDUCE_NORM2: acc += v * v; break;
        default: acc += v; break;
        }
    }
    if (mode == CDNN_HOST_REDUCE_AVG)
        return acc / (double)n;
    return mode == CDNN_HOST_REDUCE_NORM2 ? sqrt(acc) : acc;
}

static double reduce_tol(int32_t mode, const row_case_t *c, double want,
                         double abs_sum)
{
    double u = 0x1p-24, n = (double)c->cols;
    double tol = hk_type_eps(c->ty) * fabs(want) + hk_type_tiny(c->ty);
    switch (mode) {
    case CDNN_HOST_REDUCE_MUL: return tol + (n + 2) * 2 * u * fabs(want);
    case CDNN_HOST_REDUCE_MIN:
    case CDNN_HOST_REDUCE_MAX:
    case CDNN_HOST_REDUCE_AMAX: return tol;
    case CDNN_HOST_REDUCE_AVG: return tol + (n + 2) * u * abs_sum / n;
    case CDNN_HOST_REDUCE_NORM2: /* d sqrt(s) = ds / (2 sqrt s) */
        return tol + (n + 2) * u * abs_sum / (2 * fmax(want, 1e-30)) + u * want;
    default: return tol + (n + 2) * u * abs_sum;
    }
}

static void run_reduce(const hk_object_t *o, const row_case_t *c,
                       int32_t mode, uint64_t seed)
{
    uint64_t rng = hk_rng_seed(seed);
    hk_buffer_t x, y;
    /* products of many values near 1 stay finite */
    if (mode == CDNN_HOST_REDUCE_MUL)
        make_x(c, &x, &rng, 0.995, 1.005);
    else
        make_x(c, &x, &rng, -2.0, 2.0);
    double *xv = save_rows(c, &x);
    int64_t ydims[CDNN_HOST_MAX_RANK], ystrides[CDNN_HOST_MAX_RANK];
    for (int32_t d = 0; d < c->outer_rank; d++)
        ydims[d] = c->outer[d];
    hk_packed_strides(c->outer_rank, ydims, ystrides);
    hk_buffer_init(&y, c->ty, c->outer_rank, ydims, ystrides);
    cdnn_host_reduce_args_t a;
    memset(&a, 0, sizeof a);
    a.outer_rank = c->outer_rank;
    memcpy(a.outer_dims, c->outer, sizeof c->outer);
    a.cols = c->cols;
    a.mode = mode;
    a.x = x.t;
    a.y = y.t;
    set_parallel(&a.parallel, c->threads);
    char label[200], what[32];
    snprintf(what, sizeof what, "reduce mode %d", mode);
    label_of(label, sizeof label, o, c, what);
    cdnn_host_reduce_fn entry = (cdnn_host_reduce_fn)o->entry;
    if (entry(&a, NULL) != CDNN_HOST_OK)
        fail_msg("%s: refused", label);
    hk_check_t check;
    hk_check_begin(&check);
    int64_t idx[CDNN_HOST_MAX_RANK];
    for (int64_t r = 0; r < row_count(c); r++) {
        double abs_sum;
        double want = reduce_reference(mode, xv + r * c->cols, c->cols,
                                       &abs_sum);
        row_index(c, r, 0, idx);
        hk_check_value(&check, hk_get(&y, idx), want,
                       reduce_tol(mode, c, want, abs_sum), "y", r);
    }
    hk_check_end(&check, label);
    free(xv);
    hk_buffer_free(&x);
    hk_buffer_free(&y);
}

static void test_reduce(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("reduce", objects, MAX_OBJECTS,
                                         &skipped);
    for (int o = 0; o < count; o++)
        for (size_t s = 0; s < SHAPE_COUNT; s++) {
            row_case_t c = shapes[s];
            c.in_place = 0;
            for (int32_t mode = 0; mode < CDNN_HOST_REDUCE_MODE_COUNT; mode++)
                run_reduce(&objects[o], &c, mode,
                           (uint64_t)(o * 1000 + s * 10 + (size_t)mode));
        }
    hk_unload_objects(objects, count);
}

/* An empty row gives the mode's identity. */
static void test_reduce_empty_rows(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("reduce", objects, MAX_OBJECTS,
                                         &skipped);
    const float want[CDNN_HOST_REDUCE_MODE_COUNT] = {
        0.0f, 1.0f, INFINITY, -INFINITY, 0.0f, NAN, 0.0f, 0.0f};
    for (int o = 0; o < count; o++)
        for (int32_t mode = 0; mode < CDNN_HOST_REDUCE_MODE_COUNT; mode++) {
            float y[2] = {7.0f, 7.0f};
            cdnn_host_reduce_args_t a;
            memset(&a, 0, sizeof a);
            a.outer_rank = 1;
            a.outer_dims[0] = 2;
            a.mode = mode;
            a.x.type = F32;
            a.y = (cdnn_host_tensor_t){.data = y, .type = F32, .strides = {1}};
            cdnn_host_reduce_fn entry = (cdnn_host_reduce_fn)objects[o].entry;
            assert_int_equal(entry(&a, NULL), CDNN_HOST_OK);
            for (int i = 0; i < 2; i++)
                if (isnan(want[mode]) ? !isnan(y[i]) : y[i] != want[mode])
                    fail_msg("mode %d of an empty row: %g", mode, (double)y[i]);
        }
    hk_unload_objects(objects, count);
}

/* ------------------------------------------------------------------------
 * Norms
 * ------------------------------------------------------------------------ */

typedef struct norm_row_ref {
    double mean, inv_std;
} norm_row_ref_t;

static norm_row_ref_t norm_reference(int32_t kind, const double *x, int64_t n,
                                     double eps)
{
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; j++)
        mean += x[j];
    mean /= (double)n;
    for (int64_t j = 0; j < n; j++) {
        double d = kind == CDNN_HOST_NORM_RMS ? x[j] : x[j] - mean;
        var += d * d;
    }
    var /= (double)n;
    norm_row_ref_t r = {kind == CDNN_HOST_NORM_RMS ? 0.0 : mean,
                        1.0 / sqrt(var + eps)};
    return r;
}

typedef struct norm_buffers {
    hk_buffer_t x, y, scale, bias, mean, inv_std;
} norm_buffers_t;

/* scale and bias over cols (outer strides 0); mean and inv_std per row. */
static void make_norm_buffers(const row_case_t *c, int with_affine,
                              int32_t kind, norm_buffers_t *b, uint64_t *rng)
{
    memset(b, 0, sizeof *b);
    make_x(c, &b->x, rng, 0.5, 3.0); /* an offset, for onepass to cancel */
    int32_t rank;
    int64_t dims[CDNN_HOST_MAX_RANK], strides[CDNN_HOST_MAX_RANK] = {0};
    x_layout(c, &rank, dims, strides);
    if (c->in_place)
        b->y = b->x;
    else
        hk_buffer_init(&b->y, c->ty, rank, dims, strides);
    if (with_affine) {
        int64_t vstrides[CDNN_HOST_MAX_RANK] = {0};
        vstrides[c->outer_rank] = 1;
        hk_buffer_init(&b->scale, BF16, rank, dims, vstrides);
        hk_buffer_fill(&b->scale, rng, 0.5, 1.5);
        hk_buffer_init(&b->bias, F32, rank, dims, vstrides);
        hk_buffer_fill(&b->bias, rng, -1.0, 1.0);
        hk_packed_strides(c->outer_rank, dims, strides);
        if (kind == CDNN_HOST_NORM_LAYER)
            hk_buffer_init(&b->mean, F32, c->outer_rank, dims, strides);
        hk_buffer_init(&b->inv_std, F16, c->outer_rank, dims, strides);
    }
}

static void free_norm_buffers(const row_case_t *c, norm_buffers_t *b)
{
    hk_buffer_free(&b->x);
    if (!c->in_place)
        hk_buffer_free(&b->y);
    hk_buffer_free(&b->scale);
    hk_buffer_free(&b->bias);
    hk_buffer_free(&b->mean);
    hk_buffer_free(&b->inv_std);
}

static void check_norm_row(const row_case_t *c, const norm_buffers_t *b,
                           const double *x, int64_t r, norm_row_ref_t ref,
                           hk_check_t *check)
{
    int64_t idx[CDNN_HOST_MAX_RANK];
    for (int64_t j = 0; j < c->cols; j++) {
        row_index(c, r, j, idx);
        double s = b->scale.block ? hk_get(&b->scale, idx) : 1.0;
        double bias = b->bias.block ? hk_get(&b->bias, idx) : 0.0;
        double centred = (x[j] - ref.mean) * ref.inv_std * s;
        double want = centred + bias;
        /* the statistics' errors move every element of the row alike */
        double tol = hk_type_eps(c->ty) * fabs(want) +
                     1e-5 * (fabs(centred) + fabs(bias)) +
                     1e-6 * fabs(ref.mean * ref.inv_std * s) +
                     hk_type_tiny(c->ty);
        hk_check_value(check, hk_get(&b->y, idx), want, tol, "y",
                       r * c->cols + j);
    }
    if (b->inv_std.block)
        hk_check_value(check, hk_get(&b->inv_std, idx), ref.inv_std,
                       (hk_type_eps(F16) + 1e-5) * ref.inv_std, "inv_std", r);
    if (b->mean.block)
        hk_check_value(check, hk_get(&b->mean, idx), ref.mean,
                       1e-6 * (fabs(ref.mean) + 3.0), "mean", r);
}

static void run_norm(const hk_object_t *o, const row_case_t *c, int32_t kind,
                     int with_affine, uint64_t seed)
{
    uint64_t rng = hk_rng_seed(seed);
    norm_buffers_t b;
    make_norm_buffers(c, with_affine, kind, &b, &rng);
    double *xv = save_rows(c, &b.x);
    cdnn_host_norm_args_t a;
    memset(&a, 0, sizeof a);
    a.outer_rank = c->outer_rank;
    memcpy(a.outer_dims, c->outer, sizeof c->outer);
    a.cols = c->cols;
    a.kind = kind;
    a.epsilon = 1e-5f;
    a.x = b.x.t;
    a.y = b.y.t;
    if (with_affine) {
        a.scale = b.scale.t;
        a.bias = b.bias.t;
        a.mean = b.mean.t;
        a.inv_std = b.inv_std.t;
    }
    set_parallel(&a.parallel, c->threads);
    char label[200];
    label_of(label, sizeof label, o, c,
             kind == CDNN_HOST_NORM_RMS ? "rms-norm" : "layer-norm");
    cdnn_host_norm_fn entry = (cdnn_host_norm_fn)o->entry;
    if (entry(&a, NULL) != CDNN_HOST_OK)
        fail_msg("%s: refused", label);
    hk_check_t check;
    hk_check_begin(&check);
    for (int64_t r = 0; r < row_count(c); r++)
        check_norm_row(c, &b, xv + r * c->cols, r,
                       norm_reference(kind, xv + r * c->cols, c->cols,
                                      (double)a.epsilon),
                       &check);
    hk_check_end(&check, label);
    free(xv);
    free_norm_buffers(c, &b);
}

static void test_norm(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("norm_", objects, MAX_OBJECTS,
                                         &skipped);
    for (int o = 0; o < count; o++)
        for (size_t s = 0; s < SHAPE_COUNT; s++)
            for (int32_t kind = 0; kind < 2; kind++)
                for (int affine = 0; affine < 2; affine++)
                    run_norm(&objects[o], &shapes[s], kind, affine,
                             (uint64_t)(o * 1000 + s * 10 + (size_t)kind * 2 +
                                        (size_t)affine));
    hk_unload_objects(objects, count);
}

/* ------------------------------------------------------------------------
 * Refusals
 * ------------------------------------------------------------------------ */

static void test_row_refusals(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("norm_", objects, MAX_OBJECTS,
                                         &skipped);
    float x[4] = {1, 2, 3, 4};
    for (int o = 0; o < count; o++) {
        float y[4] = {0};
        cdnn_host_norm_fn entry = (cdnn_host_norm_fn)objects[o].entry;
        cdnn_host_norm_args_t a;
        memset(&a, 0, sizeof a);
        a.cols = 4;
        a.x = (cdnn_host_tensor_t){.data = x, .type = F32, .strides = {1}};
        a.y = (cdnn_host_tensor_t){.data = y, .type = F32, .strides = {1}};
        cdnn_host_norm_args_t bad = a;
        bad.cols = 0;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        bad = a;
        bad.kind = 2;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        bad = a;
        bad.epsilon = -1.0f;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        bad = a;
        bad.kind = CDNN_HOST_NORM_RMS;
        bad.mean = a.y; /* RMS-norm has no mean */
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        bad = a;
        bad.y.type = 5;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_TYPE);
        assert_true(y[0] == 0.0f);
        assert_int_equal(entry(&a, NULL), CDNN_HOST_OK);
        assert_true(y[0] < 0.0f && y[3] > 0.0f);
    }
    hk_unload_objects(objects, count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_reduce_empty_rows),
        cmocka_unit_test(test_norm),
        cmocka_unit_test(test_row_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
