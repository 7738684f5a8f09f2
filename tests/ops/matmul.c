/*
 * matmul.c -- batched matmul with batch broadcast, in every float type,
 * with transposed, padded and batch-permuted operands and outputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

enum { MM_A = 1, MM_B = 2, MM_C = 3 };

typedef struct mm_shape {
    int32_t rank;
    int64_t a[4], b[4];
} mm_shape_t;

static const mm_shape_t mm_shapes[] = {
    {2, {7, 5}, {5, 9}},
    {2, {1, 16}, {16, 8}},
    {2, {13, 1}, {1, 6}},
    {2, {33, 17}, {17, 65}},
    {2, {129, 257}, {257, 100}},
    {3, {3, 6, 4}, {3, 4, 5}},
    {3, {1, 4, 6}, {2, 6, 3}},
    {3, {2, 20, 31}, {2, 31, 24}},
    {4, {2, 1, 5, 3}, {1, 3, 3, 4}},
};

#define MM_SHAPE_COUNT (sizeof mm_shapes / sizeof mm_shapes[0])

typedef struct mm_layouts {
    h_layout_t a, b, c;
} mm_layouts_t;

static const mm_layouts_t mm_layout_sets[] = {
    {H_PACKED, H_PACKED, H_PACKED},
    {H_TRANSPOSED, H_PACKED, H_PACKED},
    {H_PACKED, H_TRANSPOSED, H_PACKED},
    {H_TRANSPOSED, H_TRANSPOSED, H_TRANSPOSED},
    {H_PADDED, H_PADDED, H_PADDED},
    {H_OUTER_SWAP, H_PADDED, H_OUTER_SWAP},
};

#define MM_LAYOUT_COUNT (sizeof mm_layout_sets / sizeof mm_layout_sets[0])

static void mm_out_dims(const mm_shape_t *s, int64_t *c)
{
    int32_t r = s->rank;
    for (int32_t d = 0; d < r - 2; d++)
        c[d] = s->a[d] > s->b[d] ? s->a[d] : s->b[d];
    c[r - 2] = s->a[r - 2];
    c[r - 1] = s->b[r - 1];
}

static void mm_case(const mm_shape_t *s, cdnn_data_type_t type,
                    const mm_layouts_t *l, h_values_t *packed)
{
    int64_t cd[4];
    int32_t r = s->rank;
    int packed_out = l->c == H_PACKED;
    h_case_t c;
    mm_out_dims(s, cd);
    h_begin(&c, H_ACCUMULATE, "matmul %s rank %d a %s b %s c %s",
            cdnn_data_type_name(type), r, h_layout_name(l->a),
            h_layout_name(l->b), h_layout_name(l->c));
    if (l->a == H_PACKED && l->b == H_PACKED && packed_out)
        c.keep = packed;
    else
        c.against = packed;
    h_input(&c, MM_A, type, r, s->a, l->a, H_UNIFORM);
    h_input(&c, MM_B, type, r, s->b, l->b, H_UNIFORM);
    h_output(&c, MM_C, type, packed_out ? 0 : r, cd, l->c);
    h_call(&c, cdnn_graph_matmul(c.graph, "mm", MM_A, MM_B, MM_C),
           "cdnn_graph_matmul");
    if (type == CDNN_DATA_TYPE_F32)
        h_expect(&c, H_BLAS_MATMUL);
    h_run(&c);
}

/* b's batch repeated through a batch stride of 0. */
static void mm_stride0_case(cdnn_data_type_t type)
{
    static const int64_t a[3] = {3, 5, 7}, b[3] = {3, 7, 4};
    static const int64_t bs[3] = {0, 4, 1};
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "matmul %s b batch stride 0",
            cdnn_data_type_name(type));
    h_input(&c, MM_A, type, 3, a, H_PACKED, H_UNIFORM);
    h_input_strided(&c, MM_B, type, 3, b, bs, H_UNIFORM);
    h_output(&c, MM_C, type, 0, NULL, H_PACKED);
    h_call(&c, cdnn_graph_matmul(c.graph, "mm", MM_A, MM_B, MM_C),
           "cdnn_graph_matmul");
    if (type == CDNN_DATA_TYPE_F32)
        h_expect(&c, H_BLAS_MATMUL);
    h_run(&c);
}

void test_matmul(void **state)
{
    (void)state;
    for (int t = 0; t < ops_float_type_count; t++) {
        for (size_t s = 0; s < MM_SHAPE_COUNT; s++) {
            h_values_t packed = {0};
            for (size_t l = 0; l < MM_LAYOUT_COUNT; l++)
                mm_case(&mm_shapes[s], ops_float_types[t], &mm_layout_sets[l],
                        &packed);
            h_values_free(&packed);
        }
        mm_stride0_case(ops_float_types[t]);
    }
    h_done();
}
