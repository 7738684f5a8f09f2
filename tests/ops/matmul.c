/*
 * matmul.c -- batched matmul with batch broadcast, in every float type,
 * with transposed, padded and batch-permuted operands and outputs; f16
 * and bf16 operands with an output of another float type; and the f16
 * example graph, which must run on cpu:blas_matmul.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    {4, {2, 4, 32, 64}, {1, 4, 64, 48}}, /* examples/matmul.json */
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
    if (h_gemm_type(type))
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
    if (h_gemm_type(type))
        h_expect(&c, H_BLAS_MATMUL);
    h_run(&c);
}

/* Operands of one type, the output of another: the GEMM engine widens
 * f16 and bf16 operands to f32 and rounds on store. */
static void mm_mixed_case(const mm_shape_t *s, cdnn_data_type_t in,
                          cdnn_data_type_t out, const mm_layouts_t *l)
{
    int64_t cd[4];
    int32_t r = s->rank;
    h_case_t c;
    mm_out_dims(s, cd);
    h_begin(&c, H_ACCUMULATE, "matmul %s->%s rank %d a %s b %s c %s",
            cdnn_data_type_name(in), cdnn_data_type_name(out), r,
            h_layout_name(l->a), h_layout_name(l->b), h_layout_name(l->c));
    h_input(&c, MM_A, in, r, s->a, l->a, H_UNIFORM);
    h_input(&c, MM_B, in, r, s->b, l->b, H_UNIFORM);
    h_output(&c, MM_C, out, r, cd, l->c);
    h_call(&c, cdnn_graph_matmul(c.graph, "mm", MM_A, MM_B, MM_C),
           "cdnn_graph_matmul");
    if (h_gemm_type(in) && h_gemm_type(out))
        h_expect(&c, H_BLAS_MATMUL);
    h_run(&c);
}

static void mm_mixed_cases(void)
{
    static const cdnn_data_type_t pairs[][2] = {
        {CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_F32},
        {CDNN_DATA_TYPE_BF16, CDNN_DATA_TYPE_F32},
        {CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_F16},
        {CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_BF16},
        {CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_BF16},
    };
    static const size_t shapes[] = {3, 7, MM_SHAPE_COUNT - 1};
    static const size_t layouts[] = {0, 3, 4};
    for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
                mm_mixed_case(&mm_shapes[shapes[s]], pairs[p][0], pairs[p][1],
                              &mm_layout_sets[layouts[l]]);
}

/* f64 compute: the GEMM engine, which accumulates in f32, must refuse an
 * f16 matmul and say why. */
static void mm_f64_compute_refused(void)
{
    const mm_shape_t *s = &mm_shapes[0];
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "matmul f16 with f64 compute");
    h_graph_types(&c, CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_F16,
                  CDNN_DATA_TYPE_F64);
    h_input(&c, MM_A, CDNN_DATA_TYPE_F16, 2, s->a, H_PACKED, H_UNIFORM);
    h_input(&c, MM_B, CDNN_DATA_TYPE_F16, 2, s->b, H_PACKED, H_UNIFORM);
    h_output(&c, MM_C, CDNN_DATA_TYPE_F16, 0, NULL, H_PACKED);
    h_call(&c, cdnn_graph_matmul(c.graph, "mm", MM_A, MM_B, MM_C),
           "cdnn_graph_matmul");
    cdnn_build_options_t *opts = NULL;
    cdnn_status_t st = CDNN_STATUS_INTERNAL_ERROR;
    if (h_prepare(&c) == 0 &&
        cdnn_build_options_create(&opts) == CDNN_STATUS_SUCCESS &&
        cdnn_build_options_pin_engine(opts, h_engine_id(H_BLAS_MATMUL)) ==
            CDNN_STATUS_SUCCESS)
        st = cdnn_graph_build(c.graph, h_handle, opts);
    if (st != CDNN_STATUS_NOT_SUPPORTED ||
        strstr(cdnn_last_error(), "f64 compute") == NULL)
        h_fail(&c, H_BLAS_MATMUL,
               "pinned build: %s: %s; expected NOT_SUPPORTED naming f64 "
               "compute", cdnn_status_string(st), cdnn_last_error());
    cdnn_build_options_destroy(opts);
    h_case_free(&c);
}

/* Rows of a [6, 2] @ [2, 1] matmul whose b is (256, 256): products and
 * sums are exact in f32, so that the stored result shows the rounding. */
enum { SPECIAL_ROWS = 6 };

typedef struct mm_specials {
    cdnn_data_type_t type;
    uint16_t a[SPECIAL_ROWS][2], b[2];
    uint16_t c[SPECIAL_ROWS]; /* expected bits; a NaN: any NaN */
} mm_specials_t;

/* Per type: 1 + half a spacing (a tie: to even, down), 1 + one and a half
 * spacings (a tie: to even, up), inf, NaN, a value whose product with 256
 * overflows the type, and its negative. */
static const mm_specials_t mm_specials[] = {
    {CDNN_DATA_TYPE_F16,
     {{0x3C00, 0x1000}, {0x3C01, 0x1000}, {0x7C00, 0x3C00}, {0x7E00, 0x3C00},
      {0x5CB0, 0x0000}, {0xDCB0, 0x0000}},
     {0x5C00, 0x5C00},
     {0x5C00, 0x5C02, 0x7C00, 0x7E00, 0x7C00, 0xFC00}},
    {CDNN_DATA_TYPE_BF16,
     {{0x3F80, 0x3B80}, {0x3F81, 0x3B80}, {0x7F80, 0x3F80}, {0x7FC0, 0x3F80},
      {0x7E80, 0x0000}, {0xFE80, 0x0000}},
     {0x4380, 0x4380},
     {0x4380, 0x4382, 0x7F80, 0x7FC0, 0x7F80, 0xFF80}},
};

static int bits_are_nan(cdnn_data_type_t type, uint16_t bits)
{
    uint16_t exponent = type == CDNN_DATA_TYPE_F16 ? 0x7C00 : 0x7F80;
    return (bits & exponent) == exponent && (bits & ~exponent & 0x7FFF);
}

/* Build s's matmul pinned to engine, run it and check every row. */
static void mm_specials_on(const mm_specials_t *s, const char *engine)
{
    static const int64_t ad[2] = {SPECIAL_ROWS, 2}, bd[2] = {2, 1};
    static const int64_t cd[2] = {SPECIAL_ROWS, 1};
    static const int64_t uids[3] = {MM_A, MM_B, MM_C};
    uint16_t c[SPECIAL_ROWS];
    void *ptrs[3] = {(void *)s->a, (void *)s->b, c};
    h_case_t hc;
    h_begin(&hc, H_ACCUMULATE, "matmul %s rounding and special values",
            cdnn_data_type_name(s->type));
    h_call(&hc, cdnn_graph_tensor(hc.graph, MM_A, NULL, s->type, 2, ad, NULL),
           "cdnn_graph_tensor");
    h_call(&hc, cdnn_graph_tensor(hc.graph, MM_B, NULL, s->type, 2, bd, NULL),
           "cdnn_graph_tensor");
    h_call(&hc, cdnn_graph_tensor(hc.graph, MM_C, NULL, s->type, 2, cd, NULL),
           "cdnn_graph_tensor");
    h_call(&hc, cdnn_graph_matmul(hc.graph, "mm", MM_A, MM_B, MM_C),
           "cdnn_graph_matmul");
    size_t ws = 0;
    void *workspace = NULL;
    if (hc.setup_failed || h_build_pinned(&hc, h_engine_id(engine)) != 0 ||
        cdnn_graph_workspace_size(hc.graph, &ws) != CDNN_STATUS_SUCCESS) {
        h_case_free(&hc);
        return;
    }
    workspace = ws ? malloc(ws) : NULL;
    h_call(&hc, cdnn_graph_execute(hc.graph, h_handle, 3, uids, ptrs,
                                   workspace), "cdnn_graph_execute");
    for (int r = 0; r < SPECIAL_ROWS && !hc.setup_failed; r++) {
        int nan = bits_are_nan(s->type, s->c[r]);
        if (nan ? !bits_are_nan(s->type, c[r]) : c[r] != s->c[r])
            h_fail(&hc, engine, "row %d: stored 0x%04x, expected 0x%04x%s", r,
                   c[r], s->c[r], nan ? " (any NaN)" : "");
    }
    free(workspace);
    h_case_free(&hc);
}

/* The shipped f16 example builds, with default options, on a GEMM engine
 * rather than falling back to the reference: the host kernels' where the
 * build made its pack (ranked above cpu:blas_matmul, as they measure
 * faster), else cpu:blas_matmul. */
static void mm_example_picks_a_gemm(void)
{
    char path[1024], *text = malloc(1 << 20);
    /* The build's path, unless the run is elsewhere (scripts/gpu-check.sh
     * runs these tests on another machine, from a copy of the tree). */
    const char *dir = getenv("CDNN_TEST_EXAMPLES_DIR");
    snprintf(path, sizeof path, "%s/matmul.json", dir && *dir ? dir : CDNN_EXAMPLES_DIR);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_non_null(text);
    size_t n = fread(text, 1, 1 << 20, f);
    fclose(f);
    cdnn_graph_t *g = NULL;
    const char *engine = NULL;
    assert_int_equal(cdnn_graph_from_json(&g, text, n), CDNN_STATUS_SUCCESS);
    free(text);
    assert_int_equal(cdnn_graph_build(g, h_handle, NULL), CDNN_STATUS_SUCCESS);
    assert_int_equal(cdnn_graph_engine(g, NULL, &engine), CDNN_STATUS_SUCCESS);
    if (strcmp(engine, "kernels:matmul_host") != 0)
        assert_string_equal(engine, H_BLAS_MATMUL);
    cdnn_graph_destroy(g);
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
    mm_mixed_cases();
    mm_f64_compute_refused();
    for (size_t s = 0; s < sizeof mm_specials / sizeof *mm_specials; s++) {
        mm_specials_on(&mm_specials[s], H_REFERENCE);
        mm_specials_on(&mm_specials[s], H_BLAS_MATMUL);
    }
    mm_example_picks_a_gemm();
    h_done();
}
