/*
 * reduction.c -- every reduction mode over several sets of reduced dims,
 * in every float type and in packed, channels-last and padded layouts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

enum { RED_X = 1, RED_Y = 2 };

typedef struct red_shape {
    int32_t rank;
    int64_t x[4], y[4]; /* y rank 0: inferred (every dim reduced) */
    int y_inferred;
} red_shape_t;

static const red_shape_t red_shapes[] = {
    {4, {2, 3, 4, 5}, {1, 3, 1, 1}, 0},
    {4, {2, 3, 4, 5}, {2, 1, 1, 1}, 0},
    {4, {2, 3, 4, 5}, {2, 3, 4, 1}, 0},
    {4, {2, 3, 4, 5}, {2, 1, 4, 1}, 0},
    {4, {2, 3, 4, 5}, {1, 1, 1, 1}, 1},
    {2, {3, 4099}, {3, 1}, 0},
    {2, {3, 4099}, {1, 4099}, 0},
};

#define RED_SHAPE_COUNT (sizeof red_shapes / sizeof red_shapes[0])

static const h_layout_t red_layouts[] = {H_PACKED, H_CHANNELS_LAST,
                                         H_PADDED};

/* Products of many values near one still overflow; signs do not. */
static h_dist_t red_dist(cdnn_reduction_mode_t mode, const red_shape_t *s)
{
    int64_t reduced = 1;
    for (int32_t d = 0; d < s->rank; d++)
        reduced *= s->y_inferred ? s->x[d] : s->x[d] / s->y[d];
    if (mode != CDNN_REDUCE_MUL)
        return H_UNIFORM;
    return reduced > 200 ? H_SIGN : H_NEAR_ONE;
}

static void red_case(cdnn_reduction_mode_t mode, const red_shape_t *s,
                     cdnn_data_type_t type, h_layout_t layout,
                     h_values_t *packed)
{
    h_case_t c;
    h_begin(&c, H_ACCUMULATE,
            "reduction %s %s x %s [%lld,%lld,%lld,%lld] -> %s[%lld,%lld,"
            "%lld,%lld]",
            cdnn_reduction_mode_name(mode), cdnn_data_type_name(type),
            h_layout_name(layout), (long long)s->x[0], (long long)s->x[1],
            (long long)s->x[2], (long long)s->x[3],
            s->y_inferred ? "inferred " : "", (long long)s->y[0],
            (long long)s->y[1], (long long)s->y[2], (long long)s->y[3]);
    if (layout == H_PACKED)
        c.keep = packed;
    else
        c.against = packed;
    h_input(&c, RED_X, type, s->rank, s->x, layout, red_dist(mode, s));
    h_output(&c, RED_Y, type, s->y_inferred ? 0 : s->rank, s->y, layout);
    h_call(&c, cdnn_graph_reduction(c.graph, "reduce", mode, RED_X, RED_Y),
           "cdnn_graph_reduction");
    h_run(&c);
}

void test_reduction(void **state)
{
    (void)state;
    for (int m = 0; m < CDNN_REDUCE_MODE_COUNT; m++) {
        for (int t = 0; t < ops_float_type_count; t++) {
            for (size_t s = 0; s < RED_SHAPE_COUNT; s++) {
                h_values_t packed = {0};
                for (size_t l = 0; l < sizeof red_layouts / sizeof *red_layouts;
                     l++)
                    red_case((cdnn_reduction_mode_t)m, &red_shapes[s],
                             ops_float_types[t], red_layouts[l], &packed);
                h_values_free(&packed);
            }
        }
    }
    h_done();
}
