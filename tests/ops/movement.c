/*
 * movement.c -- transpose, slice, concat, pad and reshape in float and integer
 * types and in several layouts; cpu:copy must claim every case but
 * reshapes between layouts that are not both packed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

enum { MV_X = 1, MV_X1 = 2, MV_X2 = 3, MV_Y = 9 };

static const cdnn_data_type_t mv_types[] = {
    CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_F64, CDNN_DATA_TYPE_I32,
    CDNN_DATA_TYPE_I64, CDNN_DATA_TYPE_U8};
#define MV_TYPE_COUNT (sizeof mv_types / sizeof mv_types[0])

static const h_layout_t mv_layouts[] = {H_PACKED, H_CHANNELS_LAST, H_TRANSPOSED,
                                        H_PADDED};
#define MV_LAYOUT_COUNT (sizeof mv_layouts / sizeof mv_layouts[0])

/* Integer inputs: small whole numbers, exact in every type. */
static h_dist_t mv_dist(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_U8 ? H_MASK
           : (type == CDNN_DATA_TYPE_I32 || type == CDNN_DATA_TYPE_I64) ? H_SIGN
                                                                         : H_WIDE;
}

static void mv_begin(h_case_t *c, const char *what, cdnn_data_type_t type,
                     h_layout_t layout, h_values_t *packed)
{
    h_begin(c, H_ELEMENTWISE, "%s %s %s", what, cdnn_data_type_name(type),
            h_layout_name(layout));
    if (layout == H_PACKED)
        c->keep = packed;
    else
        c->against = packed;
}

static void transpose_case(cdnn_data_type_t type, h_layout_t layout, h_values_t *packed)
{
    static const int64_t x[] = {2, 3, 4, 5};
    cdnn_transpose_attr_t t = {4, {3, 1, 0, 2}};
    h_case_t c;
    mv_begin(&c, "transpose [2,3,4,5] perm 3,1,0,2", type, layout, packed);
    h_input(&c, MV_X, type, 4, x, layout, mv_dist(type));
    h_output(&c, MV_Y, type, 0, NULL, layout);
    h_call(&c, cdnn_graph_transpose(c.graph, "tr", &t, MV_X, MV_Y), "cdnn_graph_transpose");
    h_expect(&c, "cpu:copy");
    h_run(&c);
}

/* Dims past cpu:copy's 32-by-32 tiles, with remainders, and a run of
 * rows that ends inside a tile (rows of [3, 40, 37] split over dim 1). */
static void transpose_tiled_case(cdnn_data_type_t type, h_layout_t layout,
                                 h_values_t *packed)
{
    static const int64_t x[] = {3, 70, 45};
    cdnn_transpose_attr_t t = {3, {0, 2, 1}};
    h_case_t c;
    mv_begin(&c, "transpose [3,70,45] perm 0,2,1", type, layout, packed);
    h_input(&c, MV_X, type, 3, x, layout, mv_dist(type));
    h_output(&c, MV_Y, type, 0, NULL, layout);
    h_call(&c, cdnn_graph_transpose(c.graph, "tr", &t, MV_X, MV_Y), "cdnn_graph_transpose");
    h_expect(&c, "cpu:copy");
    h_run(&c);
}

static void slice_case(cdnn_data_type_t type, h_layout_t layout, h_values_t *packed)
{
    static const int64_t x[] = {5, 7, 9}, y[] = {2, 3, 4};
    cdnn_slice_attr_t s = {3, {3, 2, 2}, {1, 2, 0}};
    h_case_t c;
    mv_begin(&c, "slice [5,7,9] start 1,2,0 step 3,2,2", type, layout, packed);
    h_input(&c, MV_X, type, 3, x, layout, mv_dist(type));
    h_output(&c, MV_Y, type, 3, y, layout);
    h_call(&c, cdnn_graph_slice(c.graph, "sl", &s, MV_X, MV_Y), "cdnn_graph_slice");
    h_expect(&c, "cpu:copy");
    h_run(&c);
}

static void concat_case(cdnn_data_type_t type, h_layout_t layout, h_values_t *packed)
{
    static const int64_t a[] = {2, 3, 4}, b[] = {2, 1, 4}, d[] = {2, 5, 4};
    int64_t xs[3] = {MV_X, MV_X1, MV_X2};
    h_case_t c;
    mv_begin(&c, "concat [2,3|1|5,4] axis 1", type, layout, packed);
    h_input(&c, MV_X, type, 3, a, layout, mv_dist(type));
    h_input(&c, MV_X1, type, 3, b, layout, mv_dist(type));
    h_input(&c, MV_X2, type, 3, d, layout, mv_dist(type));
    h_output(&c, MV_Y, type, 0, NULL, layout);
    h_call(&c, cdnn_graph_concat(c.graph, "cat", -2, 3, xs, MV_Y), "cdnn_graph_concat");
    h_expect(&c, "cpu:copy");
    h_run(&c);
}

static void pad_case(cdnn_data_type_t type, h_layout_t layout, h_values_t *packed)
{
    static const int64_t x[] = {3, 4, 5}, y[] = {4, 7, 6};
    cdnn_pad_attr_t p = {3, {1, 2, 0}, 3.0};
    h_case_t c;
    mv_begin(&c, "pad [3,4,5] pre 1,2,0 -> [4,7,6] by 3", type, layout, packed);
    h_input(&c, MV_X, type, 3, x, layout, mv_dist(type));
    h_output(&c, MV_Y, type, 3, y, layout);
    h_call(&c, cdnn_graph_pad(c.graph, "pad", &p, MV_X, MV_Y), "cdnn_graph_pad");
    h_expect(&c, "cpu:copy");
    h_run(&c);
}

static void reshape_case(cdnn_data_type_t type, h_layout_t layout, h_values_t *packed)
{
    static const int64_t x[] = {4, 6, 5}, y[] = {2, 12, 5};
    h_case_t c;
    mv_begin(&c, "reshape [4,6,5] -> [2,12,5]", type, layout, packed);
    h_input(&c, MV_X, type, 3, x, layout, mv_dist(type));
    h_output(&c, MV_Y, type, 3, y, layout);
    h_call(&c, cdnn_graph_reshape(c.graph, "rs", MV_X, MV_Y), "cdnn_graph_reshape");
    if (layout == H_PACKED)
        h_expect(&c, "cpu:copy");
    h_run(&c);
}

void test_data_movement(void **state)
{
    (void)state;
    void (*const cases[])(cdnn_data_type_t, h_layout_t, h_values_t *) = {
        transpose_case, transpose_tiled_case, slice_case, concat_case, pad_case,
        reshape_case};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (size_t t = 0; t < MV_TYPE_COUNT; t++) {
            h_values_t packed = {0};
            for (size_t l = 0; l < MV_LAYOUT_COUNT; l++)
                cases[k](mv_types[t], mv_layouts[l], &packed);
            h_values_free(&packed);
        }
    h_done();
}
