/*
 * pool.c -- pooling forward (max with and without indices, average with
 * and without the padding counted) over 1-D, 2-D and 3-D windows with
 * strides, padding (symmetric and not), dilation and ceil mode, in every
 * float type and in packed, channels-last and padded layouts; coarse
 * inputs make ties, so the first-maximum rule of the indices is compared
 * too (cpu:pool widens f16 and bf16 to f32).  The backward (max
 * recomputing its argmax on coarse x, so with ties; average both ways)
 * over the same geometries.  cpu:pool must claim every f32, f16 and bf16
 * case.  Resize (linear both coordinate modes, PyTorch's and ONNX's
 * nearest) over ranks 3 to 5, up, down and mixed, N and C too: cpu:resize
 * must claim every f32 case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

enum { PL_X = 1, PL_Y = 2, PL_IDX = 3, PL_DY = 4, PL_DX = 5 };

typedef struct pl_shape {
    const char *what;
    int32_t sd;
    int64_t x[5];
    int32_t window, stride, dilation, pre, post, ceil;
} pl_shape_t;

static const pl_shape_t pl_shapes[] = {
    {"ResNet stem 3x3 s2 p1", 2, {2, 8, 17, 16}, 3, 2, 1, 1, 1, 0},
    {"2x2 s2 ceil", 2, {1, 5, 9, 7}, 2, 2, 1, 0, 0, 1},
    {"3x3 s1 p1 dilation 2", 2, {2, 3, 11, 10}, 3, 1, 2, 2, 2, 0},
    {"3x3 s2 pre 2 post 0 ceil", 2, {1, 4, 10, 9}, 3, 2, 1, 2, 0, 1},
    {"1-D k4 s3 p1", 1, {2, 3, 19}, 4, 3, 1, 1, 1, 0},
    {"3-D 3 s2 p1 ceil", 3, {1, 3, 7, 6, 5}, 3, 2, 1, 1, 1, 1},
};

#define PL_SHAPE_COUNT (sizeof pl_shapes / sizeof pl_shapes[0])

static cdnn_pooling_attr_t pl_attr(const pl_shape_t *s, cdnn_pooling_mode_t mode,
                                   int include_pad)
{
    cdnn_pooling_attr_t a;
    cdnn_pooling_attr_init(&a, mode, s->sd);
    for (int i = 0; i < s->sd; i++) {
        a.window[i] = s->window;
        a.stride[i] = s->stride;
        a.dilation[i] = mode == CDNN_POOLING_MAX ? s->dilation : 1;
        a.pre_padding[i] = s->pre;
        a.post_padding[i] = s->post;
    }
    a.ceil_mode = s->ceil;
    a.count_include_pad = include_pad;
    return a;
}

/* The forward's y dims for x (what validation infers), so that y, its
 * indices and dy can be declared in a layout. */
static void pl_out_dims(const pl_shape_t *s, const cdnn_pooling_attr_t *a, int64_t *y)
{
    y[0] = s->x[0];
    y[1] = s->x[1];
    for (int i = 0; i < s->sd; i++) {
        int64_t extent = (int64_t)a->dilation[i] * (a->window[i] - 1) + 1;
        int64_t span = s->x[2 + i] + a->pre_padding[i] + a->post_padding[i] - extent;
        int64_t out = (a->ceil_mode ? (span + a->stride[i] - 1) / a->stride[i]
                                    : span / a->stride[i]) + 1;
        if (a->ceil_mode && (out - 1) * a->stride[i] >= s->x[2 + i] + a->pre_padding[i])
            out--;
        y[2 + i] = out;
    }
}

/* variant 0: max; 1: max with i64 indices; 2: max with i32 indices on
 * coarse data (ties); 3: average without the padding; 4: average with. */
static void pl_case(const pl_shape_t *s, cdnn_data_type_t type, h_layout_t layout,
                    int variant, h_values_t *packed)
{
    int is_max = variant < 3;
    h_case_t c;
    h_begin(&c, is_max ? H_ELEMENTWISE : H_ACCUMULATE, "pooling %s variant %d %s %s",
            s->what, variant, cdnn_data_type_name(type), h_layout_name(layout));
    if (layout == H_PACKED)
        c.keep = packed;
    else
        c.against = packed;
    cdnn_pooling_attr_t a = pl_attr(s, is_max ? CDNN_POOLING_MAX : CDNN_POOLING_AVG,
                                    variant == 4);
    int64_t y[5];
    pl_out_dims(s, &a, y);
    h_input(&c, PL_X, type, s->sd + 2, s->x, layout, variant == 2 ? H_COARSE : H_WIDE);
    h_output(&c, PL_Y, type, s->sd + 2, y, layout);
    int64_t idx = CDNN_UID_NONE;
    if (variant == 1 || variant == 2) {
        idx = PL_IDX;
        h_output(&c, PL_IDX, variant == 1 ? CDNN_DATA_TYPE_I64 : CDNN_DATA_TYPE_I32,
                 s->sd + 2, y, layout);
    }
    h_call(&c, cdnn_graph_pooling_fwd(c.graph, "pool", &a, PL_X, PL_Y, idx),
           "cdnn_graph_pooling_fwd");
    if (type != CDNN_DATA_TYPE_F64)
        h_expect(&c, "cpu:pool");
    h_run(&c);
}

void test_pooling(void **state)
{
    (void)state;
    static const h_layout_t layouts[] = {H_PACKED, H_CHANNELS_LAST, H_PADDED};
    for (size_t s = 0; s < PL_SHAPE_COUNT; s++)
        for (int t = 0; t < ops_float_type_count; t++)
            for (int variant = 0; variant < 5; variant++) {
                h_values_t packed = {0};
                for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
                    pl_case(&pl_shapes[s], ops_float_types[t], layouts[l], variant,
                            &packed);
                h_values_free(&packed);
            }
    h_done();
}

/* variant 0: max (the argmax recomputed from x; coarse x makes ties);
 * 1: average without the padding counted; 2: with. */
static void pl_bwd_case(const pl_shape_t *s, cdnn_data_type_t type, h_layout_t layout,
                        int variant, h_values_t *packed)
{
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "pooling_bwd %s variant %d %s %s", s->what, variant,
            cdnn_data_type_name(type), h_layout_name(layout));
    if (layout == H_PACKED)
        c.keep = packed;
    else
        c.against = packed;
    cdnn_pooling_attr_t a = pl_attr(s, variant ? CDNN_POOLING_AVG : CDNN_POOLING_MAX,
                                    variant == 2);
    int64_t y[5];
    pl_out_dims(s, &a, y);
    h_input(&c, PL_DY, type, s->sd + 2, y, layout, H_WIDE);
    h_input(&c, PL_X, type, s->sd + 2, s->x, layout, variant ? H_WIDE : H_COARSE);
    h_output(&c, PL_DX, type, s->sd + 2, s->x, layout);
    h_call(&c, cdnn_graph_pooling_bwd(c.graph, "pool_bwd", &a, PL_DY, PL_X, CDNN_UID_NONE,
                                      PL_DX),
           "cdnn_graph_pooling_bwd");
    if (type != CDNN_DATA_TYPE_F64)
        h_expect(&c, "cpu:pool");
    h_run(&c);
}

typedef struct rs_shape {
    int32_t rank;
    int64_t x[5], y[5];
} rs_shape_t;

static const rs_shape_t rs_shapes[] = {
    {4, {2, 3, 5, 7}, {2, 3, 11, 4}},
    {4, {1, 4, 8, 8}, {1, 4, 16, 16}},
    {3, {2, 3, 13}, {2, 3, 5}},
    {5, {1, 2, 3, 4, 5}, {1, 2, 6, 3, 9}},
    {4, {3, 2, 4, 4}, {2, 5, 4, 7}}, /* N and C resampled too */
};

#define RS_SHAPE_COUNT (sizeof rs_shapes / sizeof rs_shapes[0])

/* mode 0: linear, half-pixel; 1: linear, align-corners; 2: nearest,
 * asymmetric, floor (PyTorch's nearest); 3: nearest, half-pixel, round
 * prefer floor (ONNX's default). */
static void rs_case(const rs_shape_t *s, cdnn_data_type_t type, h_layout_t layout,
                    int mode, h_values_t *packed)
{
    static const cdnn_resize_attr_t attrs[4] = {
        {CDNN_RESIZE_LINEAR, CDNN_RESIZE_HALF_PIXEL, 0},
        {CDNN_RESIZE_LINEAR, CDNN_RESIZE_ALIGN_CORNERS, 0},
        {CDNN_RESIZE_NEAREST, CDNN_RESIZE_ASYMMETRIC, CDNN_RESIZE_FLOOR},
        {CDNN_RESIZE_NEAREST, CDNN_RESIZE_HALF_PIXEL, CDNN_RESIZE_ROUND_PREFER_FLOOR}};
    h_case_t c;
    h_begin(&c, mode < 2 ? H_ACCUMULATE : H_ELEMENTWISE, "resize mode %d rank %d %s %s",
            mode, (int)s->rank, cdnn_data_type_name(type), h_layout_name(layout));
    if (layout == H_PACKED)
        c.keep = packed;
    else
        c.against = packed;
    h_input(&c, PL_X, type, s->rank, s->x, layout, H_WIDE);
    h_output(&c, PL_Y, type, s->rank, s->y, layout);
    h_call(&c, cdnn_graph_resize(c.graph, "resize", &attrs[mode], PL_X, PL_Y),
           "cdnn_graph_resize");
    if (type == CDNN_DATA_TYPE_F32)
        h_expect(&c, "cpu:resize");
    h_run(&c);
}

/* Backward (cpu:pool on f32) and resize (cpu:resize on f32) against
 * cpu:reference, and the same logical results in every layout. */
void test_pooling_bwd_resize(void **state)
{
    (void)state;
    static const h_layout_t layouts[] = {H_PACKED, H_CHANNELS_LAST, H_PADDED};
    for (size_t s = 0; s < PL_SHAPE_COUNT; s++)
        for (int t = 0; t < ops_float_type_count; t++)
            for (int variant = 0; variant < 3; variant++) {
                h_values_t packed = {0};
                for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
                    pl_bwd_case(&pl_shapes[s], ops_float_types[t], layouts[l], variant,
                                &packed);
                h_values_free(&packed);
            }
    for (size_t s = 0; s < RS_SHAPE_COUNT; s++)
        for (int t = 0; t < ops_float_type_count; t++)
            for (int mode = 0; mode < 4; mode++) {
                h_values_t packed = {0};
                for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
                    rs_case(&rs_shapes[s], ops_float_types[t], layouts[l], mode, &packed);
                h_values_free(&packed);
            }
    h_done();
}
