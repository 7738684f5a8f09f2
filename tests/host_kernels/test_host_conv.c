/*
 * test_host_conv.c -- every NHWC convolution object this CPU runs, against
 * a naive f64 convolution with the same epilogue: padding (before, and
 * after through out_h/out_w), strides, dilations, 1x1 and non-square
 * filters, one channel, a depth beyond one KC step, padded (non-packed)
 * x, w and y, f32/f16/bf16, every activation, bias per channel, a
 * residual (also y itself), one thread and several, and the refusals.
 *
 * Tolerance of one element, as for the matmul (u = 2^-24):
 *     1.2 * 2 (K + 1) u sum |x w|  +  act_rel |act|  +  (eps(y) + u) |y|
 * with K = r s c the depth of the sum.
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

#define MAX_OBJECTS 16
#define F32 CDNN_HOST_F32
#define F16 CDNN_HOST_F16
#define BF16 CDNN_HOST_BF16

typedef struct conv_case {
    const char *name;
    int64_t n, h, w, c, k, r, s;
    int64_t pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    int64_t extra_h, extra_w; /* padding after, beyond what fits */
    int32_t tx, tw, ty;
    int32_t activation;
    int bias, residual;       /* residual: 1 its own, 2 y itself */
    int padded;               /* spare elements in x, w and y's lines */
    int threads;
} conv_case_t;

static const conv_case_t cases[] = {
    {"3x3 pad 1, bias, relu", 2, 7, 9, 5, 11, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0,
     F32, F32, F32, 1, 1, 0, 0, 1},
    {"3x3 stride 2, mixed types, gelu, residual", 1, 9, 8, 16, 20, 3, 3, 0,
     0, 2, 2, 1, 1, 0, 0, F16, BF16, F32, 2, 1, 1, 0, 3},
    {"3x2 dilation 2, padding after, 3 threads", 2, 6, 7, 3, 9, 3, 2, 2, 1,
     1, 1, 2, 2, 1, 2, F32, F32, BF16, 4, 0, 0, 0, 3},
    {"1x1, padded tensors, silu", 1, 5, 5, 32, 24, 1, 1, 0, 0, 1, 1, 1, 1,
     0, 0, F32, F32, F16, 4, 1, 0, 1, 1},
    {"one channel, one output channel, tanh", 3, 4, 4, 1, 1, 2, 2, 0, 0, 1,
     1, 1, 1, 0, 0, BF16, F32, F32, 5, 1, 0, 0, 1},
    {"depth 576 (several KC steps), y += conv", 1, 12, 12, 64, 40, 3, 3, 1,
     1, 1, 1, 1, 1, 0, 0, F32, F32, F32, 3, 1, 2, 0, 2},
};

typedef struct conv_buffers {
    hk_buffer_t x, w, y, bias, res;
    int64_t out_h, out_w;
} conv_buffers_t;

/* NHWC (or KRSC) strides with `spare` elements after each line of
 * channels. */
static void nhwc_strides(const int64_t *dims, int64_t spare, int64_t *strides)
{
    strides[3] = 1;
    strides[2] = dims[3] + spare;
    strides[1] = strides[2] * dims[2];
    strides[0] = strides[1] * dims[1];
}

static int64_t out_size(int64_t in, int64_t pad, int64_t taps, int64_t dil,
                        int64_t stride, int64_t extra)
{
    return (in + pad - dil * (taps - 1) - 1 + extra) / stride + 1;
}

static void make_buffers(const conv_case_t *t, conv_buffers_t *b,
                         uint64_t *rng)
{
    memset(b, 0, sizeof *b);
    b->out_h = out_size(t->h, t->pad_h, t->r, t->dil_h, t->stride_h, t->extra_h);
    b->out_w = out_size(t->w, t->pad_w, t->s, t->dil_w, t->stride_w, t->extra_w);
    int64_t spare = t->padded ? 3 : 0, strides[4];
    int64_t xd[4] = {t->n, t->h, t->w, t->c}, wd[4] = {t->k, t->r, t->s, t->c};
    int64_t yd[4] = {t->n, b->out_h, b->out_w, t->k};
    nhwc_strides(xd, spare, strides);
    hk_buffer_init(&b->x, t->tx, 4, xd, strides);
    hk_buffer_fill(&b->x, rng, -1.0, 1.0);
    nhwc_strides(wd, spare, strides);
    hk_buffer_init(&b->w, t->tw, 4, wd, strides);
    hk_buffer_fill(&b->w, rng, -1.0, 1.0);
    nhwc_strides(yd, spare, strides);
    hk_buffer_init(&b->y, t->ty, 4, yd, strides);
    hk_buffer_fill(&b->y, rng, -1.0, 1.0); /* added when y is the residual */
    if (t->residual == 1) {
        hk_buffer_init(&b->res, F32, 4, yd, strides);
        hk_buffer_fill(&b->res, rng, -1.0, 1.0);
    }
    if (t->bias) {
        int64_t bs[4] = {0, 0, 0, 1};
        hk_buffer_init(&b->bias, BF16, 4, yd, bs);
        hk_buffer_fill(&b->bias, rng, -1.0, 1.0);
    }
}

static void free_buffers(conv_buffers_t *b)
{
    hk_buffer_free(&b->x);
    hk_buffer_free(&b->w);
    hk_buffer_free(&b->y);
    hk_buffer_free(&b->res);
    hk_buffer_free(&b->bias);
}

static double activate(int32_t act, double x)
{
    switch (act) {
    case CDNN_HOST_ACT_RELU: return x > 0 ? x : 0;
    case CDNN_HOST_ACT_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case CDNN_HOST_ACT_GELU_TANH:
        return 0.5 * x *
               (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case CDNN_HOST_ACT_SILU: return x / (1.0 + exp(-x));
    case CDNN_HOST_ACT_TANH: return tanh(x);
    default: return x;
    }
}

/* The sum at output (image, oh, ow, k) and its sum of |terms|. */
static double conv_sum(const conv_case_t *t, const conv_buffers_t *b,
                       const int64_t *o, double *mag)
{
    double sum = 0;
    *mag = 0;
    for (int64_t r = 0; r < t->r; r++)
        for (int64_t s = 0; s < t->s; s++) {
            int64_t ih = o[1] * t->stride_h - t->pad_h + r * t->dil_h;
            int64_t iw = o[2] * t->stride_w - t->pad_w + s * t->dil_w;
            if (ih < 0 || ih >= t->h || iw < 0 || iw >= t->w)
                continue;
            for (int64_t ci = 0; ci < t->c; ci++) {
                int64_t xi[4] = {o[0], ih, iw, ci}, wi[4] = {o[3], r, s, ci};
                double v = hk_get(&b->x, xi) * hk_get(&b->w, wi);
                sum += v;
                *mag += fabs(v);
            }
        }
    return sum;
}

static void check_output(const conv_case_t *t, const conv_buffers_t *b,
                         const double *res_old, const char *label)
{
    hk_check_t check;
    hk_check_begin(&check);
    int64_t e = 0, depth = t->r * t->s * t->c;
    for (int64_t img = 0; img < t->n; img++)
        for (int64_t oh = 0; oh < b->out_h; oh++)
            for (int64_t ow = 0; ow < b->out_w; ow++)
                for (int64_t k = 0; k < t->k; k++, e++) {
                    int64_t o[4] = {img, oh, ow, k};
                    double mag, sum = conv_sum(t, b, o, &mag);
                    if (t->bias) {
                        double bias = hk_get(&b->bias, o);
                        sum += bias;
                        mag += fabs(bias);
                    }
                    double act = activate(t->activation, sum);
                    double want = act + (res_old ? res_old[e] : 0.0);
                    double tol = 1.2 * 2.0 * (double)(depth + 1) * 0x1p-24 * mag +
                                 (t->activation > 1 ? 2e-6 : 0.0) * fabs(act) +
                                 (hk_type_eps(t->ty) + 0x1p-24) * fabs(want) +
                                 hk_type_tiny(t->ty);
                    hk_check_value(&check, hk_get(&b->y, o), want, tol, "y", e);
                }
    hk_check_end(&check, label);
}

/* The residual's values before the run, in output order. */
static double *save_residual(const conv_case_t *t, const conv_buffers_t *b)
{
    if (!t->residual)
        return NULL;
    const hk_buffer_t *r = t->residual == 1 ? &b->res : &b->y;
    int64_t count = t->n * b->out_h * b->out_w * t->k, e = 0;
    double *old = malloc((size_t)count * sizeof *old + 8);
    for (int64_t img = 0; img < t->n; img++)
        for (int64_t oh = 0; oh < b->out_h; oh++)
            for (int64_t ow = 0; ow < b->out_w; ow++)
                for (int64_t k = 0; k < t->k; k++) {
                    int64_t o[4] = {img, oh, ow, k};
                    old[e++] = hk_get(r, o);
                }
    return old;
}

static void fill_args(const conv_case_t *t, const conv_buffers_t *b,
                      cdnn_host_conv_args_t *a)
{
    memset(a, 0, sizeof *a);
    a->n = t->n;
    a->h = t->h;
    a->w = t->w;
    a->c = t->c;
    a->k = t->k;
    a->r = t->r;
    a->s = t->s;
    a->out_h = b->out_h;
    a->out_w = b->out_w;
    a->pad_h = t->pad_h;
    a->pad_w = t->pad_w;
    a->stride_h = t->stride_h;
    a->stride_w = t->stride_w;
    a->dilation_h = t->dil_h;
    a->dilation_w = t->dil_w;
    a->activation = t->activation;
    a->x = b->x.t;
    a->filter = b->w.t;
    a->y = b->y.t;
    if (t->bias)
        a->bias = b->bias.t;
    if (t->residual)
        a->residual = t->residual == 1 ? b->res.t : b->y.t;
    a->parallel.threads = t->threads;
    a->parallel.parallel_for = t->threads > 1 ? hk_parallel_for : NULL;
}

static void run_case(const hk_object_t *o, const conv_case_t *t, uint64_t seed)
{
    char label[200];
    snprintf(label, sizeof label, "%.63s.%.15s %.100s", o->name, o->level,
             t->name);
    uint64_t rng = hk_rng_seed(seed);
    conv_buffers_t b;
    make_buffers(t, &b, &rng);
    cdnn_host_conv_args_t a;
    fill_args(t, &b, &a);
    cdnn_host_conv_fn entry = (cdnn_host_conv_fn)o->entry;
    size_t need;
    assert_int_equal(entry(&a, &need), CDNN_HOST_OK);
    a.workspace = need ? malloc(need) : NULL;
    a.workspace_size = need;
    double *res_old = save_residual(t, &b);
    int32_t status = entry(&a, NULL);
    if (status != CDNN_HOST_OK)
        fail_msg("%s: status %d", label, status);
    check_output(t, &b, res_old, label);
    free(res_old);
    free(a.workspace);
    free_buffers(&b);
}

static void test_conv_cases(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("conv_nhwc_", objects, MAX_OBJECTS,
                                         &skipped);
    for (int o = 0; o < count; o++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            run_case(&objects[o], &cases[c], (uint64_t)(o * 100 + c));
    hk_unload_objects(objects, count);
}

static void test_conv_refusals(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("conv_nhwc_", objects, MAX_OBJECTS,
                                         &skipped);
    for (int o = 0; o < count; o++) {
        cdnn_host_conv_fn entry = (cdnn_host_conv_fn)objects[o].entry;
        uint64_t rng = hk_rng_seed(9);
        conv_buffers_t b;
        make_buffers(&cases[0], &b, &rng);
        cdnn_host_conv_args_t a, bad;
        fill_args(&cases[0], &b, &a);
        size_t need;
        assert_int_equal(entry(&a, &need), CDNN_HOST_OK);
        unsigned char *before = malloc(b.y.bytes);
        memcpy(before, b.y.block, b.y.bytes);
        a.workspace = malloc(need);
        a.workspace_size = need - 1;
        assert_int_equal(entry(&a, NULL), CDNN_HOST_WORKSPACE_TOO_SMALL);
        a.workspace_size = need;
        bad = a;
        bad.stride_h = 0;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        bad = a;
        bad.dilation_w = 0;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        bad = a;
        bad.pad_h = -1;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        bad = a;
        bad.filter.type = 4;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_TYPE);
        bad = a;
        bad.x.data = NULL;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        assert_memory_equal(before, b.y.block, b.y.bytes);
        free(before);
        free(a.workspace);
        free_buffers(&b);
    }
    hk_unload_objects(objects, count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_cases),
        cmocka_unit_test(test_conv_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
