/*
 * softmax.c -- softmax and log-softmax over several shapes and axes (the
 * last, a middle one, the first, a long row), in every float type and in
 * packed, channels-last, transposed and padded layouts; cpu:softmax must
 * claim every case but f64's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

enum { SM_X = 1, SM_Y = 2 };

typedef struct sm_shape {
    int32_t rank;
    int64_t x[4];
    int32_t axis; /* as given to the builder: negative counts from the end */
} sm_shape_t;

static const sm_shape_t sm_shapes[] = {
    {2, {4, 7}, -1},
    {3, {2, 5, 3}, 1},
    {4, {2, 3, 4, 5}, 0},
    {2, {3, 5000}, -1},
    {3, {6, 1, 9}, -2}, /* rows of one element */
};

#define SM_SHAPE_COUNT (sizeof sm_shapes / sizeof sm_shapes[0])

static const h_layout_t sm_layouts[] = {H_PACKED, H_CHANNELS_LAST, H_TRANSPOSED,
                                        H_PADDED};

static void sm_case(const sm_shape_t *s, cdnn_data_type_t type, h_layout_t layout,
                    int log_space, h_values_t *packed)
{
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "%s %s %s x [%lld,%lld,%lld,%lld] rank %d axis %d",
            log_space ? "log_softmax" : "softmax", cdnn_data_type_name(type),
            h_layout_name(layout), (long long)s->x[0], (long long)s->x[1],
            (long long)s->x[2], (long long)s->x[3], (int)s->rank, (int)s->axis);
    if (layout == H_PACKED)
        c.keep = packed;
    else
        c.against = packed;
    h_input(&c, SM_X, type, s->rank, s->x, layout, H_WIDE);
    h_output(&c, SM_Y, type, s->rank, s->x, layout);
    h_call(&c, log_space ? cdnn_graph_log_softmax(c.graph, "lsm", s->axis, SM_X, SM_Y)
                         : cdnn_graph_softmax(c.graph, "sm", s->axis, SM_X, SM_Y),
           "cdnn_graph_softmax");
    if (type != CDNN_DATA_TYPE_F64)
        h_expect(&c, "cpu:softmax");
    h_run(&c);
}

void test_softmax(void **state)
{
    (void)state;
    for (int log_space = 0; log_space < 2; log_space++)
        for (int t = 0; t < ops_float_type_count; t++)
            for (size_t s = 0; s < SM_SHAPE_COUNT; s++) {
                h_values_t packed = {0};
                for (size_t l = 0; l < sizeof sm_layouts / sizeof *sm_layouts; l++)
                    sm_case(&sm_shapes[s], ops_float_types[t], sm_layouts[l], log_space,
                            &packed);
                h_values_free(&packed);
            }
    h_done();
}
