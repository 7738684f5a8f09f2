/*
 * index.c -- argmax, argmin, top-k, gather and gather-elements: cpu:index
 * against cpu:reference over axes, layouts and every type (ties from
 * coarse values; NumPy and PyTorch check the reference itself in
 * tests/oracle/test_gather_topk_numpy.py, which also runs on cpu:index).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

#define H_INDEX "cpu:index"

enum { IX_X = 1, IX_Y = 2, IX_I = 3 };

static const cdnn_data_type_t index_types[] = {
    CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_BF16, CDNN_DATA_TYPE_F64,
    CDNN_DATA_TYPE_I32, CDNN_DATA_TYPE_I64, CDNN_DATA_TYPE_I8,  CDNN_DATA_TYPE_U8};
#define INDEX_TYPE_COUNT (int)(sizeof index_types / sizeof index_types[0])

static const h_layout_t index_layouts[] = {H_PACKED, H_TRANSPOSED, H_PADDED};
#define INDEX_LAYOUT_COUNT (int)(sizeof index_layouts / sizeof index_layouts[0])

typedef struct index_shape {
    int32_t rank;
    int64_t dims[3];
} index_shape_t;

/* 130 and 70 rows span more than one block of 64; 1 is a lone row. */
static const index_shape_t index_shapes[] = {{2, {7, 130}}, {3, {3, 70, 5}}, {1, {9}}};
#define INDEX_SHAPE_COUNT (int)(sizeof index_shapes / sizeof index_shapes[0])

static void arg_case(int want_max, const index_shape_t *s, int32_t axis,
                     cdnn_data_type_t type, h_layout_t layout, cdnn_data_type_t y_type)
{
    int64_t y[3];
    for (int32_t d = 0; d < s->rank; d++)
        y[d] = d == axis ? 1 : s->dims[d];
    h_case_t c;
    h_begin(&c, H_ELEMENTWISE, "%s %s %s rank %d axis %d -> %s",
            want_max ? "argmax" : "argmin",
            cdnn_data_type_name(type), h_layout_name(layout), (int)s->rank, (int)axis,
            cdnn_data_type_name(y_type));
    h_input(&c, IX_X, type, s->rank, s->dims, layout, H_COARSE);
    h_output(&c, IX_Y, y_type, s->rank, y, layout);
    h_call(&c, (want_max ? cdnn_graph_argmax : cdnn_graph_argmin)(
                   c.graph, "arg", axis, IX_X, IX_Y), "cdnn_graph_argmax/argmin");
    h_expect(&c, H_INDEX);
    h_run(&c);
}

static void topk_case(const index_shape_t *s, int32_t axis, int64_t k, int largest,
                      cdnn_data_type_t type, h_layout_t layout)
{
    int64_t y[3];
    for (int32_t d = 0; d < s->rank; d++)
        y[d] = d == axis ? k : s->dims[d];
    h_case_t c;
    h_begin(&c, H_ELEMENTWISE, "topk %s %s rank %d axis %d k %lld %s",
            cdnn_data_type_name(type), h_layout_name(layout), (int)s->rank, (int)axis,
            (long long)k, largest ? "largest" : "smallest");
    h_input(&c, IX_X, type, s->rank, s->dims, layout, H_COARSE);
    h_output(&c, IX_Y, type, s->rank, y, layout);
    h_output(&c, IX_I, largest ? CDNN_DATA_TYPE_I64 : CDNN_DATA_TYPE_I32, 0, NULL,
             H_PACKED);
    cdnn_topk_attr_t a = {axis, largest, k};
    h_call(&c, cdnn_graph_topk(c.graph, "topk", &a, IX_X, IX_Y, IX_I), "cdnn_graph_topk");
    h_expect(&c, H_INDEX);
    h_run(&c);
}

void test_index_argmax(void **state)
{
    (void)state;
    for (int s = 0; s < INDEX_SHAPE_COUNT; s++)
        for (int32_t axis = 0; axis < index_shapes[s].rank; axis++)
            for (int t = 0; t < INDEX_TYPE_COUNT; t++)
                for (int l = 0; l < INDEX_LAYOUT_COUNT; l++) {
                    cdnn_data_type_t y = (t + l) % 2 ? CDNN_DATA_TYPE_I32
                                                     : CDNN_DATA_TYPE_I64;
                    arg_case(1, &index_shapes[s], axis, index_types[t],
                             index_layouts[l], y);
                    arg_case(0, &index_shapes[s], axis, index_types[t],
                             index_layouts[l], y);
                }
    h_done();
}

void test_index_topk(void **state)
{
    (void)state;
    for (int s = 0; s < INDEX_SHAPE_COUNT; s++)
        for (int32_t axis = 0; axis < index_shapes[s].rank; axis++) {
            int64_t n = index_shapes[s].dims[axis];
            /* small k (insertion), large k (selection), every element */
            const int64_t ks[3] = {1, n > 40 ? 40 : n, n};
            for (int t = 0; t < INDEX_TYPE_COUNT; t++)
                for (int l = 0; l < INDEX_LAYOUT_COUNT; l++)
                    for (int k = 0; k < 3; k++)
                        topk_case(&index_shapes[s], axis, ks[k], (t + k) % 2,
                                  index_types[t], index_layouts[l]);
        }
    h_done();
}

static void gather_case(int elements, int32_t axis, cdnn_data_type_t type,
                        h_layout_t layout, cdnn_data_type_t index_type)
{
    static const int64_t x[3] = {5, 6, 7}, idx[2] = {2, 3};
    /* gather-elements: indices of x's rank, the axis longer, the rest no larger */
    int64_t eidx[3] = {4, 6, 3};
    eidx[axis] = 9;
    h_case_t c;
    h_begin(&c, H_ELEMENTWISE, "%s %s %s axis %d indices %s",
            elements ? "gather_elements" : "gather", cdnn_data_type_name(type),
            h_layout_name(layout), (int)axis, cdnn_data_type_name(index_type));
    h_input(&c, IX_X, type, 3, x, layout, H_WIDE);
    /* H_WIDE truncates to -2 .. 2: negative indices too */
    h_input(&c, IX_I, index_type, elements ? 3 : 2, elements ? eidx : idx, layout, H_WIDE);
    h_output(&c, IX_Y, type, 0, NULL, H_PACKED);
    h_call(&c, (elements ? cdnn_graph_gather_elements : cdnn_graph_gather)(
                   c.graph, "gather", axis, IX_X, IX_I, IX_Y), "cdnn_graph_gather");
    h_expect(&c, H_INDEX);
    h_run(&c);
}

void test_index_gather(void **state)
{
    (void)state;
    for (int elements = 0; elements < 2; elements++)
        for (int32_t axis = 0; axis < 3; axis++)
            for (int t = 0; t < INDEX_TYPE_COUNT; t++)
                for (int l = 0; l < INDEX_LAYOUT_COUNT; l++)
                    gather_case(elements, axis, index_types[t], index_layouts[l],
                                (t + l) % 2 ? CDNN_DATA_TYPE_I32 : CDNN_DATA_TYPE_I64);
    h_done();
}

/* An index out of range fails the execute with EXECUTION_FAILED naming it
 * and its position, on every engine, and nothing outside x is read (x is
 * exactly its elements in its own allocation: ASan would see a read past
 * it). */
static void expect_refused(int elements, const char *engine, int64_t bad,
                           const char *words)
{
    static const int64_t x_dims[2] = {3, 4}, gi_dims[2] = {2, 2}, ei_dims[2] = {2, 4};
    float *x = malloc(12 * sizeof *x), *y = malloc(8 * sizeof *y);
    int64_t *idx = malloc(8 * sizeof *idx);
    assert_non_null(x);
    assert_non_null(y);
    assert_non_null(idx);
    for (int i = 0; i < 12; i++)
        x[i] = (float)i;
    for (int i = 0; i < 8; i++)
        idx[i] = i % 3;
    idx[elements ? 6 : 3] = bad; /* [1, 2] or [1, 1] */
    cdnn_graph_t *g = NULL;
    assert_int_equal(cdnn_graph_create(&g), CDNN_STATUS_SUCCESS);
    assert_int_equal(cdnn_graph_tensor(g, IX_X, "x", CDNN_DATA_TYPE_F32, 2, x_dims, NULL), 0);
    assert_int_equal(cdnn_graph_tensor(g, IX_I, "i", CDNN_DATA_TYPE_I64, 2,
                                       elements ? ei_dims : gi_dims, NULL), 0);
    assert_int_equal(cdnn_graph_tensor(g, IX_Y, "y", CDNN_DATA_TYPE_F32, 0, NULL, NULL), 0);
    assert_int_equal((elements ? cdnn_graph_gather_elements : cdnn_graph_gather)(
                         g, "g", 0, IX_X, IX_I, IX_Y), CDNN_STATUS_SUCCESS);
    cdnn_build_options_t *opts = NULL;
    assert_int_equal(cdnn_build_options_create(&opts), CDNN_STATUS_SUCCESS);
    assert_int_equal(cdnn_build_options_pin_engine(opts, h_engine_id(engine)), 0);
    assert_int_equal(cdnn_graph_build(g, h_handle, opts), CDNN_STATUS_SUCCESS);
    const int64_t uids[3] = {IX_X, IX_I, IX_Y};
    void *ptrs[3] = {x, idx, y};
    assert_int_equal(cdnn_graph_execute(g, h_handle, 3, uids, ptrs, NULL),
                     CDNN_STATUS_EXECUTION_FAILED);
    if (!strstr(cdnn_last_error(), words))
        fail_msg("%s: message \"%s\" lacks \"%s\"", engine, cdnn_last_error(), words);
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(g);
    free(x);
    free(y);
    free(idx);
}

void test_index_gather_refusals(void **state)
{
    (void)state;
    static const char *const engines[2] = {H_REFERENCE, H_INDEX};
    for (int e = 0; e < 2; e++) {
        expect_refused(0, engines[e], 3, "indices[1, 1] is 3, outside -3 .. 2");
        expect_refused(0, engines[e], -4, "indices[1, 1] is -4");
        expect_refused(1, engines[e], INT64_MIN, "indices[1, 2] is -9223372036854775808");
        expect_refused(1, engines[e], 1LL << 40, "indices[1, 2] is 1099511627776");
    }
}

/* A plan of a graph format 1.3 node (top-k on cpu:index, gather-elements
 * on cpu:reference) saves, loads and runs as the plan it was saved from,
 * and re-saves to the same bytes. */
static void plan_round_trip(int topk, const char *engine)
{
    static const int64_t x_dims[2] = {4, 6}, k_dims[2] = {4, 3};
    float x[24], a[12], b[12];
    int64_t idx[12], at_a[12], at_b[12];
    for (int i = 0; i < 24; i++)
        x[i] = (float)((i * 7) % 11) - 5.0f;
    for (int i = 0; i < 12; i++)
        idx[i] = (i * 5) % 6 - 3;
    cdnn_graph_t *g = NULL;
    assert_int_equal(cdnn_graph_create(&g), CDNN_STATUS_SUCCESS);
    assert_int_equal(cdnn_graph_tensor(g, IX_X, "x", CDNN_DATA_TYPE_F32, 2, x_dims, NULL), 0);
    assert_int_equal(cdnn_graph_tensor(g, IX_Y, "y", CDNN_DATA_TYPE_F32, 0, NULL, NULL), 0);
    assert_int_equal(cdnn_graph_tensor(g, IX_I, "i", CDNN_DATA_TYPE_I64,
                                       topk ? 0 : 2, topk ? NULL : k_dims, NULL), 0);
    cdnn_topk_attr_t attr = {-1, 1, 3};
    assert_int_equal(topk ? cdnn_graph_topk(g, "topk", &attr, IX_X, IX_Y, IX_I)
                          : cdnn_graph_gather_elements(g, "ge", 1, IX_X, IX_I, IX_Y),
                     CDNN_STATUS_SUCCESS);
    const int64_t uids[3] = {IX_X, IX_Y, IX_I};
    void *first[3] = {x, a, topk ? (void *)at_a : (void *)idx};
    void *second[3] = {x, b, topk ? (void *)at_b : (void *)idx};
    h_plan_round_trip(g, engine, 3, uids, first, second);
    assert_memory_equal(a, b, sizeof a);
    if (topk) {
        assert_memory_equal(at_a, at_b, sizeof at_a);
        assert_int_equal((int)at_a[0], 3); /* row 0 is -5 2 -2 5 1 -3 */
    }
    cdnn_graph_destroy(g);
}

void test_index_plan_round_trip(void **state)
{
    (void)state;
    plan_round_trip(1, H_INDEX);
    plan_round_trip(0, H_INDEX);
    plan_round_trip(1, H_REFERENCE);
    plan_round_trip(0, H_REFERENCE);
}
