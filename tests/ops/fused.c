/*
 * fused.c -- the multi-node graphs users build most: conv -> bias -> relu
 * and matmul -> bias -> gelu -> residual add, intermediates virtual.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

enum { F_X = 1, F_W = 2, F_BIAS = 3, F_RES = 4, F_Y = 5, F_T1 = 6, F_T2 = 7,
       F_T3 = 8 };

static void f_pointwise(h_case_t *c, cdnn_pointwise_mode_t mode, int64_t a,
                        int64_t b, int64_t y)
{
    cdnn_pointwise_attr_t attr;
    cdnn_pointwise_attr_init(&attr, mode);
    h_call(c, cdnn_graph_pointwise(c->graph, cdnn_pointwise_mode_name(mode),
                                   &attr, a, b, CDNN_UID_NONE, y),
           "cdnn_graph_pointwise");
}

/* ---- conv -> bias -> relu ---- */

typedef struct cbr_shape {
    int64_t x[4], w[4];
    int64_t pad, stride;
} cbr_shape_t;

static const cbr_shape_t cbr_shapes[] = {
    {{2, 3, 8, 7}, {4, 3, 3, 3}, 1, 1},
    {{1, 8, 11, 11}, {16, 8, 3, 3}, 1, 2},
    {{2, 16, 5, 5}, {8, 16, 1, 1}, 0, 1},
    {{2, 16, 20, 20}, {32, 16, 3, 3}, 1, 1},
};

static void cbr_case(const cbr_shape_t *s, cdnn_data_type_t type,
                     h_layout_t layout, int typed_intermediates)
{
    const int64_t bias[4] = {1, s->w[0], 1, 1};
    int64_t y[4] = {s->x[0], s->w[0], 0, 0};
    cdnn_conv_attr_t a;
    cdnn_conv_attr_init(&a, 2);
    for (int d = 0; d < 2; d++) {
        a.pre_padding[d] = a.post_padding[d] = s->pad;
        a.stride[d] = s->stride;
        y[2 + d] = h_conv_out(s->x[2 + d], s->w[2 + d], s->pad, s->pad,
                              s->stride, 1);
    }
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "conv->bias->relu %s %s x[%lld,%lld,%lld,%lld]"
            " w[%lld,%lld,%lld,%lld] pad %lld stride %lld intermediates %s",
            cdnn_data_type_name(type), h_layout_name(layout),
            (long long)s->x[0], (long long)s->x[1], (long long)s->x[2],
            (long long)s->x[3], (long long)s->w[0], (long long)s->w[1],
            (long long)s->w[2], (long long)s->w[3], (long long)s->pad,
            (long long)s->stride, typed_intermediates ? "io type" : "f32");
    if (typed_intermediates)
        h_graph_types(&c, type, type, CDNN_DATA_TYPE_F32);
    h_input(&c, F_X, type, 4, s->x, layout, H_UNIFORM);
    h_input(&c, F_W, type, 4, s->w, layout, H_UNIFORM);
    h_input(&c, F_BIAS, type, 4, bias, H_PACKED, H_UNIFORM);
    h_virtual(&c, F_T1, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_virtual(&c, F_T2, CDNN_DATA_TYPE_UNSET, 4, y);
    h_output(&c, F_Y, type, 4, y, layout);
    h_call(&c, cdnn_graph_conv_fwd(c.graph, "conv", &a, F_X, F_W, F_T1),
           "cdnn_graph_conv_fwd");
    f_pointwise(&c, CDNN_PW_ADD, F_T1, F_BIAS, F_T2);
    f_pointwise(&c, CDNN_PW_RELU_FWD, F_T2, CDNN_UID_NONE, F_Y);
    if (h_gemm_type(type))
        h_expect(&c, H_BLAS_CONV);
    h_run(&c);
}

/* y = relu(conv(x) + r) * 0.5 with a full-shape residual r; or, with
 * keep_conv, the conv output is a second, non-virtual output. */
static void conv_residual_case(cdnn_data_type_t type, h_layout_t layout,
                               int keep_conv)
{
    static const int64_t x[4] = {2, 4, 6, 6}, w[4] = {5, 4, 3, 3};
    static const int64_t y[4] = {2, 5, 4, 4};
    cdnn_conv_attr_t a;
    cdnn_conv_attr_init(&a, 2);
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "conv->add residual->relu->mul 0.5 %s %s%s",
            cdnn_data_type_name(type), h_layout_name(layout),
            keep_conv ? " conv output kept" : "");
    h_input(&c, F_X, type, 4, x, layout, H_UNIFORM);
    h_input(&c, F_W, type, 4, w, layout, H_UNIFORM);
    h_input(&c, F_RES, type, 4, y, H_PACKED, H_UNIFORM);
    h_scalar(&c, F_BIAS, type, 4, 0.5);
    if (keep_conv)
        h_output(&c, F_T1, type, 4, y, H_PADDED);
    else
        h_virtual(&c, F_T1, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_virtual(&c, F_T2, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_virtual(&c, F_T3, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_output(&c, F_Y, type, 4, y, layout);
    h_call(&c, cdnn_graph_conv_fwd(c.graph, "conv", &a, F_X, F_W, F_T1),
           "cdnn_graph_conv_fwd");
    f_pointwise(&c, CDNN_PW_ADD, F_T1, F_RES, F_T2);
    f_pointwise(&c, CDNN_PW_RELU_FWD, F_T2, CDNN_UID_NONE, F_T3);
    f_pointwise(&c, CDNN_PW_MUL, F_T3, F_BIAS, F_Y);
    if (h_gemm_type(type) && !keep_conv)
        h_expect(&c, H_BLAS_CONV);
    h_run(&c);
}

void test_fused_conv_bias_relu(void **state)
{
    (void)state;
    static const h_layout_t layouts[] = {H_PACKED, H_CHANNELS_LAST, H_PADDED};
    for (size_t s = 0; s < sizeof cbr_shapes / sizeof *cbr_shapes; s++)
        for (int t = 0; t < ops_float_type_count; t++)
            for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
                for (int typed = 0; typed < 2; typed++)
                    cbr_case(&cbr_shapes[s], ops_float_types[t], layouts[l],
                             typed);
    for (int t = 0; t < ops_float_type_count; t++) {
        for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++) {
            conv_residual_case(ops_float_types[t], layouts[l], 0);
            conv_residual_case(ops_float_types[t], layouts[l], 1);
        }
    }
    h_done();
}

/* ---- matmul -> bias -> gelu -> residual add ---- */

typedef struct mbgr_shape {
    int32_t rank;
    int64_t a[3], b[3]; /* b's batch may be 1: shared weights */
} mbgr_shape_t;

static const mbgr_shape_t mbgr_shapes[] = {
    {2, {9, 12}, {12, 7}},
    {3, {2, 17, 24}, {1, 24, 33}},
    {3, {3, 8, 5}, {3, 5, 16}},
};

static void mbgr_case(const mbgr_shape_t *s, cdnn_data_type_t type,
                      h_layout_t a_layout, h_layout_t b_layout)
{
    int32_t r = s->rank;
    int64_t y[3], bias[3];
    for (int32_t d = 0; d < r; d++)
        bias[d] = 1;
    y[0] = s->a[0];
    y[r - 2] = s->a[r - 2];
    y[r - 1] = bias[r - 1] = s->b[r - 1];
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "matmul->bias->gelu->residual %s rank %d a %s "
            "b %s", cdnn_data_type_name(type), r, h_layout_name(a_layout),
            h_layout_name(b_layout));
    h_input(&c, F_X, type, r, s->a, a_layout, H_UNIFORM);
    h_input(&c, F_W, type, r, s->b, b_layout, H_UNIFORM);
    h_input(&c, F_BIAS, type, r, bias, H_PACKED, H_UNIFORM);
    h_input(&c, F_RES, type, r, y, a_layout, H_UNIFORM);
    h_virtual(&c, F_T1, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_virtual(&c, F_T2, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_virtual(&c, F_T3, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_output(&c, F_Y, type, r, y, a_layout);
    h_call(&c, cdnn_graph_matmul(c.graph, "mm", F_X, F_W, F_T1),
           "cdnn_graph_matmul");
    f_pointwise(&c, CDNN_PW_ADD, F_T1, F_BIAS, F_T2);
    f_pointwise(&c, CDNN_PW_GELU_FWD, F_T2, CDNN_UID_NONE, F_T3);
    f_pointwise(&c, CDNN_PW_ADD, F_T3, F_RES, F_Y);
    if (h_gemm_type(type))
        h_expect(&c, H_BLAS_MATMUL);
    h_run(&c);
}

/* y = sigmoid(a @ b * s) with a per-row scale s [..., M, 1]. */
static void mm_row_scale_case(cdnn_data_type_t type, h_layout_t layout)
{
    static const int64_t a[3] = {2, 11, 6}, b[3] = {2, 6, 9};
    static const int64_t s[3] = {2, 11, 1}, y[3] = {2, 11, 9};
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "matmul->mul row scale->sigmoid %s %s",
            cdnn_data_type_name(type), h_layout_name(layout));
    h_input(&c, F_X, type, 3, a, layout, H_UNIFORM);
    h_input(&c, F_W, type, 3, b, layout, H_UNIFORM);
    h_input(&c, F_BIAS, type, 3, s, H_PACKED, H_WIDE);
    h_virtual(&c, F_T1, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_virtual(&c, F_T2, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_output(&c, F_Y, type, 3, y, layout);
    h_call(&c, cdnn_graph_matmul(c.graph, "mm", F_X, F_W, F_T1),
           "cdnn_graph_matmul");
    f_pointwise(&c, CDNN_PW_MUL, F_T1, F_BIAS, F_T2);
    f_pointwise(&c, CDNN_PW_SIGMOID_FWD, F_T2, CDNN_UID_NONE, F_Y);
    if (h_gemm_type(type))
        h_expect(&c, H_BLAS_MATMUL);
    h_run(&c);
}

void test_fused_matmul_bias_gelu_residual(void **state)
{
    (void)state;
    static const h_layout_t layouts[][2] = {{H_PACKED, H_PACKED},
                                            {H_PACKED, H_TRANSPOSED},
                                            {H_TRANSPOSED, H_PADDED},
                                            {H_PADDED, H_PADDED}};
    for (size_t s = 0; s < sizeof mbgr_shapes / sizeof *mbgr_shapes; s++)
        for (int t = 0; t < ops_float_type_count; t++)
            for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
                mbgr_case(&mbgr_shapes[s], ops_float_types[t], layouts[l][0],
                          layouts[l][1]);
    for (int t = 0; t < ops_float_type_count; t++)
        for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
            mm_row_scale_case(ops_float_types[t], layouts[l][1]);
    h_done();
}
