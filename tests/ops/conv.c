/*
 * conv.c -- convolution forward, backward-data and backward-filter.
 *
 * Every shape runs in every float type and in three layouts: packed
 * (NCHW), channels-last (NHWC) and padded strides; the reference output of
 * each non-packed layout must also equal the packed one.  Some shapes also
 * run with f16 or bf16 operands and an output of another float type.
 */
#include <stdio.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

enum { CONV_X = 1, CONV_W = 2, CONV_Y = 3 };

typedef enum conv_dir { CONV_FWD, CONV_BWD_DATA, CONV_BWD_FILTER } conv_dir_t;

typedef struct conv_shape {
    int32_t spatial;
    int64_t n, c, k, groups;
    int64_t in[3], filter[3], pre[3], post[3], stride[3], dilation[3];
} conv_shape_t;

static const conv_shape_t conv_shapes[] = {
    {2, 2, 3, 4, 1, {7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
    {2, 1, 4, 6, 1, {9, 8}, {3, 2}, {1, 0}, {2, 1}, {2, 2}, {1, 2}},
    {2, 2, 4, 6, 2, {5, 5}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}},
    {2, 1, 4, 4, 4, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 2}, {1, 1}},
    {2, 2, 8, 16, 1, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
    {2, 1, 2, 3, 1, {4, 4}, {2, 2}, {2, 0}, {0, 3}, {1, 1}, {2, 1}},
    {1, 2, 3, 2, 1, {10}, {3}, {1}, {1}, {2}, {1}},
    {3, 1, 2, 3, 1, {4, 5, 5}, {2, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 2},
     {1, 1, 1}},
};

#define CONV_SHAPE_COUNT (sizeof conv_shapes / sizeof conv_shapes[0])

static const h_layout_t conv_layouts[] = {H_PACKED, H_CHANNELS_LAST,
                                          H_PADDED};

static const char *const conv_dir_names[] = {"conv_fwd", "conv_bwd_data",
                                             "conv_bwd_filter"};

static void conv_dims(const conv_shape_t *s, int64_t *x, int64_t *w,
                      int64_t *y)
{
    x[0] = y[0] = s->n;
    x[1] = s->c;
    w[0] = y[1] = s->k;
    w[1] = s->c / s->groups;
    for (int32_t d = 0; d < s->spatial; d++) {
        x[2 + d] = s->in[d];
        w[2 + d] = s->filter[d];
        y[2 + d] = h_conv_out(s->in[d], s->filter[d], s->pre[d], s->post[d],
                              s->stride[d], s->dilation[d]);
    }
}

static void conv_attr(const conv_shape_t *s, cdnn_conv_attr_t *a)
{
    cdnn_conv_attr_init(a, s->spatial);
    for (int32_t d = 0; d < s->spatial; d++) {
        a->pre_padding[d] = s->pre[d];
        a->post_padding[d] = s->post[d];
        a->stride[d] = s->stride[d];
        a->dilation[d] = s->dilation[d];
    }
    a->groups = s->groups;
}

static void conv_describe(const conv_shape_t *s, char *out, size_t cap)
{
    int64_t x[5], w[5], y[5];
    conv_dims(s, x, w, y);
    snprintf(out, cap,
             "%dd n%lld c%lld k%lld g%lld in[%lld,%lld,%lld] "
             "f[%lld,%lld,%lld] pad[%lld,%lld,%lld/%lld,%lld,%lld] "
             "stride[%lld,%lld,%lld] dil[%lld,%lld,%lld]",
             s->spatial, (long long)s->n, (long long)s->c, (long long)s->k,
             (long long)s->groups, (long long)s->in[0], (long long)s->in[1],
             (long long)s->in[2], (long long)s->filter[0],
             (long long)s->filter[1], (long long)s->filter[2],
             (long long)s->pre[0], (long long)s->pre[1], (long long)s->pre[2],
             (long long)s->post[0], (long long)s->post[1],
             (long long)s->post[2], (long long)s->stride[0],
             (long long)s->stride[1], (long long)s->stride[2],
             (long long)s->dilation[0], (long long)s->dilation[1],
             (long long)s->dilation[2]);
}

/* Declare the tensors and the node of one direction: its two inputs of
 * type in, its output of type out. */
static void conv_declare(h_case_t *c, conv_dir_t dir, const conv_shape_t *s,
                         cdnn_data_type_t in, cdnn_data_type_t out,
                         h_layout_t layout)
{
    int64_t x[5], w[5], y[5];
    int32_t r = s->spatial + 2;
    cdnn_conv_attr_t a;
    conv_dims(s, x, w, y);
    conv_attr(s, &a);
    if (dir == CONV_FWD) {
        h_input(c, CONV_X, in, r, x, layout, H_UNIFORM);
        h_input(c, CONV_W, in, r, w, layout, H_UNIFORM);
        h_output(c, CONV_Y, out, layout == H_PACKED ? 0 : r, y, layout);
        h_call(c, cdnn_graph_conv_fwd(c->graph, "conv", &a, CONV_X, CONV_W,
                                      CONV_Y), "cdnn_graph_conv_fwd");
    } else if (dir == CONV_BWD_DATA) {
        h_input(c, CONV_Y, in, r, y, layout, H_UNIFORM);
        h_input(c, CONV_W, in, r, w, layout, H_UNIFORM);
        h_output(c, CONV_X, out, r, x, layout);
        h_call(c, cdnn_graph_conv_bwd_data(c->graph, "dgrad", &a, CONV_Y,
                                           CONV_W, CONV_X),
               "cdnn_graph_conv_bwd_data");
    } else {
        h_input(c, CONV_X, in, r, x, layout, H_UNIFORM);
        h_input(c, CONV_Y, in, r, y, layout, H_UNIFORM);
        h_output(c, CONV_W, out, r, w, layout);
        h_call(c, cdnn_graph_conv_bwd_filter(c->graph, "wgrad", &a, CONV_X,
                                             CONV_Y, CONV_W),
               "cdnn_graph_conv_bwd_filter");
    }
}

static void conv_case(conv_dir_t dir, const conv_shape_t *s,
                      cdnn_data_type_t type, h_layout_t layout,
                      h_values_t *packed)
{
    char desc[256];
    h_case_t c;
    conv_describe(s, desc, sizeof desc);
    h_begin(&c, H_ACCUMULATE, "%s %s %s %s", conv_dir_names[dir],
            cdnn_data_type_name(type), h_layout_name(layout), desc);
    if (layout == H_PACKED)
        c.keep = packed;
    else
        c.against = packed;
    conv_declare(&c, dir, s, type, type, layout);
    if (h_gemm_type(type))
        h_expect(&c, H_BLAS_CONV);
    h_run(&c);
}

static void conv_mixed_case(conv_dir_t dir, const conv_shape_t *s,
                            cdnn_data_type_t in, cdnn_data_type_t out,
                            h_layout_t layout)
{
    char desc[256];
    h_case_t c;
    conv_describe(s, desc, sizeof desc);
    h_begin(&c, H_ACCUMULATE, "%s %s->%s %s %s", conv_dir_names[dir],
            cdnn_data_type_name(in), cdnn_data_type_name(out),
            h_layout_name(layout), desc);
    conv_declare(&c, dir, s, in, out, layout);
    if (h_gemm_type(in) && h_gemm_type(out))
        h_expect(&c, H_BLAS_CONV);
    h_run(&c);
}

/* Half operands with an f32 output, f32 operands with a half output. */
static void conv_mixed_family(conv_dir_t dir)
{
    static const cdnn_data_type_t pairs[][2] = {
        {CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_F32},
        {CDNN_DATA_TYPE_BF16, CDNN_DATA_TYPE_F32},
        {CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_F16},
        {CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_BF16},
    };
    static const size_t shapes[] = {1, 4};
    for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (size_t l = 0; l < sizeof conv_layouts / sizeof *conv_layouts;
                 l++)
                conv_mixed_case(dir, &conv_shapes[shapes[s]], pairs[p][0],
                                pairs[p][1], conv_layouts[l]);
}

static void conv_family(conv_dir_t dir)
{
    for (size_t s = 0; s < CONV_SHAPE_COUNT; s++) {
        for (int t = 0; t < ops_float_type_count; t++) {
            h_values_t packed = {0};
            for (size_t l = 0; l < sizeof conv_layouts / sizeof *conv_layouts;
                 l++)
                conv_case(dir, &conv_shapes[s], ops_float_types[t],
                          conv_layouts[l], &packed);
            h_values_free(&packed);
        }
    }
    conv_mixed_family(dir);
    h_done();
}

void test_conv_fwd(void **state)
{
    (void)state;
    conv_family(CONV_FWD);
}

void test_conv_bwd_data(void **state)
{
    (void)state;
    conv_family(CONV_BWD_DATA);
}

void test_conv_bwd_filter(void **state)
{
    (void)state;
    conv_family(CONV_BWD_FILTER);
}
