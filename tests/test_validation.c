/*
 * test_validation.c -- every kind of invalid graph fails validation with a
 * message naming the node or tensor at fault; valid graphs get their output
 * shapes inferred; the content key sees what runs and nothing else.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <cdnn/cdnn.h>

#define OK(call) assert_int_equal((call), CDNN_STATUS_SUCCESS)
#define NONE CDNN_UID_NONE

static cdnn_graph_t *new_graph(void)
{
    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_create(&g));
    return g;
}

static void tensor(cdnn_graph_t *g, int64_t uid, const char *name, int32_t rank,
                   const int64_t *dims)
{
    OK(cdnn_graph_tensor(g, uid, name, CDNN_DATA_TYPE_F32, rank, dims, NULL));
}

static void pointwise(cdnn_graph_t *g, const char *name, cdnn_pointwise_mode_t mode,
                      int64_t a, int64_t b, int64_t y)
{
    cdnn_pointwise_attr_t attr;
    cdnn_pointwise_attr_init(&attr, mode);
    OK(cdnn_graph_pointwise(g, name, &attr, a, b, NONE, y));
}

/* Validation fails with INVALID_GRAPH and a message holding every word. */
static void expect_invalid(cdnn_graph_t *g, const char *word1, const char *word2)
{
    assert_int_equal(cdnn_graph_validate(g), CDNN_STATUS_INVALID_GRAPH);
    const char *msg = cdnn_last_error();
    if (!strstr(msg, word1) || (word2 && !strstr(msg, word2)))
        fail_msg("message \"%s\" lacks \"%s\" or \"%s\"", msg, word1,
                 word2 ? word2 : "");
    cdnn_graph_destroy(g);
}

static const int64_t d44[] = {4, 4};

/* NumPy's rank broadcasting: a lower-rank input aligns to y's last dims;
 * a dim that does not broadcast is named with y's, an input of higher rank
 * than y and a tensor used at two ranks are refused. */
static void test_pointwise_rank_broadcast(void **state)
{
    (void)state;
    static const int64_t y4[] = {2, 3, 4, 7}, b51[] = {5, 1}, b7[] = {7},
                         y347[] = {3, 4, 7}, b47[] = {4, 7};
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 4, y4);
    tensor(g, 2, "b", 2, b51);
    tensor(g, 3, "y", 4, y4);
    pointwise(g, "add", CDNN_PW_ADD, 1, 2, 3);
    expect_invalid(g, "node 'add' (pointwise): input 'b' (tensor 'b'",
                   "its dim 0 (5) is neither 1 nor y's 4 (y's dim 2");

    g = new_graph();
    tensor(g, 1, "x", 2, b47);
    tensor(g, 2, "b", 4, y4);
    tensor(g, 3, "y", 3, y347);
    pointwise(g, "add", CDNN_PW_ADD, 1, 2, 3);
    expect_invalid(g, "input 'b' (tensor 'b'", "has rank 4, more than y's 3");

    /* rank 1 and rank 2 inputs on rank 4 and 3 outputs validate; y's shape
     * is inferred at the largest input rank; b keeps its declared rank */
    g = new_graph();
    tensor(g, 1, "x", 4, y4);
    tensor(g, 2, "b", 1, b7);
    tensor(g, 3, "y", 0, NULL);
    pointwise(g, "add", CDNN_PW_ADD, 1, 2, 3);
    OK(cdnn_graph_validate(g));
    int32_t rank = 0;
    int64_t dims[8];
    OK(cdnn_graph_tensor_shape(g, 3, NULL, &rank, dims, NULL));
    assert_int_equal(rank, 4);
    assert_int_equal(dims[3], 7);
    OK(cdnn_graph_tensor_shape(g, 2, NULL, &rank, dims, NULL));
    assert_int_equal(rank, 1);
    cdnn_graph_destroy(g);

    /* b broadcast to rank 4 by one node and to rank 2 by another */
    g = new_graph();
    tensor(g, 1, "x", 4, y4);
    tensor(g, 2, "b", 1, b7);
    tensor(g, 3, "y", 4, y4);
    tensor(g, 4, "x2", 2, b47);
    tensor(g, 5, "y2", 2, b47);
    pointwise(g, "add4", CDNN_PW_ADD, 1, 2, 3);
    pointwise(g, "add2", CDNN_PW_ADD, 4, 2, 5);
    expect_invalid(g, "tensor 'b' (uid 2, rank 1) is broadcast to rank",
                   "declare it at rank");
}

static void test_duplicate_uid(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "first", 2, d44);
    assert_int_equal(cdnn_graph_tensor(g, 1, "second", CDNN_DATA_TYPE_F32, 2, d44, NULL),
                     CDNN_STATUS_INVALID_GRAPH);
    assert_non_null(strstr(cdnn_last_error(), "tensor 'second' (uid 1)"));
    assert_non_null(strstr(cdnn_last_error(), "already used by tensor 'first'"));
    cdnn_graph_destroy(g);
}

static void test_cycle(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 2, d44);
    tensor(g, 2, "a", 2, d44);
    tensor(g, 3, "b", 2, d44);
    pointwise(g, "first_add", CDNN_PW_ADD, 1, 3, 2);  /* a = x + b */
    pointwise(g, "second_add", CDNN_PW_ADD, 1, 2, 3); /* b = x + a */
    expect_invalid(g, "node 'first_add'", "cycle");
}

static void test_disconnected_node(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 2, d44);
    tensor(g, 2, "y", 2, d44);
    tensor(g, 3, "p", 2, d44);
    tensor(g, 4, "q", 2, d44);
    pointwise(g, "main", CDNN_PW_EXP, 1, NONE, 2);
    pointwise(g, "island", CDNN_PW_EXP, 3, NONE, 4);
    expect_invalid(g, "node 'island'", "disconnected");
}

static void test_disconnected_tensor(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 2, d44);
    tensor(g, 2, "y", 2, d44);
    tensor(g, 3, "stray", 2, d44);
    pointwise(g, "exp", CDNN_PW_EXP, 1, NONE, 2);
    expect_invalid(g, "tensor 'stray' (uid 3)", "used by no node");
}

static void test_shape_mismatch(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    const int64_t a[] = {4, 8}, b[] = {7, 5};
    tensor(g, 1, "a", 2, a);
    tensor(g, 2, "b", 2, b);
    tensor(g, 3, "c", 0, NULL);
    OK(cdnn_graph_matmul(g, "mm", 1, 2, 3));
    expect_invalid(g, "node 'mm' (matmul): input 'b' (tensor 'b'", "shape mismatch");
}

static void test_declared_output_shape_mismatch(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    const int64_t x[] = {1, 3, 8, 8}, w[] = {4, 3, 3, 3}, y[] = {1, 4, 8, 8};
    cdnn_conv_attr_t conv;
    cdnn_conv_attr_init(&conv, 2); /* no padding: y must be 6x6 */
    tensor(g, 1, "x", 4, x);
    tensor(g, 2, "w", 4, w);
    tensor(g, 3, "y", 4, y);
    OK(cdnn_graph_conv_fwd(g, "conv", &conv, 1, 2, 3));
    expect_invalid(g, "output 'y' (tensor 'y'", "[1, 4, 6, 6]");
}

static void test_type_mismatch(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    const int64_t x[] = {1, 3, 8, 8}, w[] = {4, 3, 3, 3};
    cdnn_conv_attr_t conv;
    cdnn_conv_attr_init(&conv, 2);
    tensor(g, 1, "x", 4, x);
    OK(cdnn_graph_tensor(g, 2, "w", CDNN_DATA_TYPE_F16, 4, w, NULL));
    tensor(g, 3, "y", 0, NULL);
    OK(cdnn_graph_conv_fwd(g, "conv", &conv, 1, 2, 3));
    expect_invalid(g, "input 'w' (tensor 'w'", "type mismatch");
}

static void test_integer_type_rejected(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    OK(cdnn_graph_tensor(g, 1, "a", CDNN_DATA_TYPE_I32, 2, d44, NULL));
    OK(cdnn_graph_tensor(g, 2, "b", CDNN_DATA_TYPE_I32, 2, d44, NULL));
    tensor(g, 3, "c", 0, NULL);
    OK(cdnn_graph_matmul(g, "mm", 1, 2, 3));
    expect_invalid(g, "tensor 'a'", "floating-point type");
}

/* A builder call failed with BAD_PARAM and a message holding both words. */
static void expect_refused(cdnn_status_t st, const char *word1, const char *word2)
{
    assert_int_equal(st, CDNN_STATUS_BAD_PARAM);
    const char *msg = cdnn_last_error();
    if (!strstr(msg, word1) || !strstr(msg, word2))
        fail_msg("message \"%s\" lacks \"%s\" or \"%s\"", msg, word1, word2);
}

/* One bad convolution attribute at a time: the builder refuses it, naming
 * the node, the attribute and its value. */
static void test_bad_conv_attributes(void **state)
{
    (void)state;
    static const struct {
        const char *field;
        int64_t value;
        const char *words;
    } cases[] = {
        {"pre_padding", -1, "pre_padding[1] is -1"},
        {"post_padding", -3, "post_padding[1] is -3"},
        {"stride", 0, "stride[1] is 0"},
        {"dilation", -2, "dilation[1] is -2"},
        {"stride", CDNN_MAX_CONV_ATTR + 1, "stride[1] is 1048577"},
        {"groups", 0, "groups is 0"},
        {"groups", CDNN_MAX_CONV_ATTR + 1, "groups is 1048577"},
        {"spatial_dims", 0, "spatial_dims is 0"},
        {"spatial_dims", 4, "spatial_dims is 4"},
    };
    const int64_t x[] = {1, 3, 8, 8}, w[] = {4, 3, 3, 3};
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 4, x);
    tensor(g, 2, "w", 4, w);
    tensor(g, 3, "y", 0, NULL);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cdnn_conv_attr_t conv;
        cdnn_conv_attr_init(&conv, 2);
        int64_t *spatial = strcmp(cases[i].field, "pre_padding") == 0    ? conv.pre_padding
                           : strcmp(cases[i].field, "post_padding") == 0 ? conv.post_padding
                           : strcmp(cases[i].field, "stride") == 0       ? conv.stride
                           : strcmp(cases[i].field, "dilation") == 0     ? conv.dilation
                                                                         : NULL;
        if (spatial)
            spatial[1] = cases[i].value;
        else if (strcmp(cases[i].field, "groups") == 0)
            conv.groups = cases[i].value;
        else
            conv.spatial_dims = (int32_t)cases[i].value;
        expect_refused(cdnn_graph_conv_fwd(g, "conv", &conv, 1, 2, 3),
                       "node 'conv' (conv_fwd)", cases[i].words);
        expect_refused(cdnn_graph_conv_bwd_data(g, NULL, &conv, 3, 2, 1),
                       "node 'node0' (conv_bwd_data)", cases[i].words);
        expect_refused(cdnn_graph_conv_bwd_filter(g, "dw", &conv, 1, 3, 2),
                       "node 'dw' (conv_bwd_filter)", cases[i].words);
    }
    expect_invalid(g, "no operations", NULL); /* nothing refused was added */

    /* Only the spatial dims in use are checked: a 1-d conv ignores [1]. */
    cdnn_conv_attr_t conv;
    cdnn_conv_attr_init(&conv, 1);
    conv.stride[1] = 0;
    const int64_t x1[] = {1, 3, 8}, w1[] = {4, 3, 3};
    g = new_graph();
    tensor(g, 1, "x", 3, x1);
    tensor(g, 2, "w", 3, w1);
    tensor(g, 3, "y", 0, NULL);
    OK(cdnn_graph_conv_fwd(g, "conv1d", &conv, 1, 2, 3));
    OK(cdnn_graph_validate(g));
    cdnn_graph_destroy(g);
}

/* Modes outside their enums are refused by the builder, not left for
 * validation (or a provider) to trip over. */
static void test_bad_modes(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 2, d44);
    tensor(g, 2, "y", 0, NULL);
    cdnn_pointwise_attr_t pw;
    cdnn_pointwise_attr_init(&pw, CDNN_PW_MODE_COUNT);
    expect_refused(cdnn_graph_pointwise(g, "pw", &pw, 1, NONE, NONE, 2),
                   "node 'pw' (pointwise)", "mode 60 is not a pointwise mode");
    cdnn_pointwise_attr_init(&pw, (cdnn_pointwise_mode_t)-1);
    expect_refused(cdnn_graph_pointwise(g, "pw", &pw, 1, NONE, NONE, 2),
                   "node 'pw' (pointwise)", "mode -1");
    expect_refused(cdnn_graph_reduction(g, "sum", CDNN_REDUCE_MODE_COUNT, 1, 2),
                   "node 'sum' (reduction)", "mode 8 is not a reduction mode");
    expect_refused(cdnn_graph_reduction(g, "sum", (cdnn_reduction_mode_t)-5, 1, 2),
                   "node 'sum' (reduction)", "mode -5");
    expect_invalid(g, "no operations", NULL); /* nothing refused was added */
}

/* A pass-by-value scalar must be a number; infinities are numbers. */
static void test_nan_scalar_refused(void **state)
{
    (void)state;
    const int64_t one[] = {1, 1};
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "s", 2, one);
    expect_refused(cdnn_graph_tensor_set_scalar(g, 1, NAN), "tensor 's' (uid 1)",
                   "value is NaN");
    expect_refused(cdnn_graph_tensor_set_scalar(g, 1, -NAN), "tensor 's' (uid 1)",
                   "value is NaN");
    OK(cdnn_graph_tensor_set_scalar(g, 1, -INFINITY));
    cdnn_graph_destroy(g);
}

static void test_bad_groups(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    const int64_t x[] = {1, 6, 8, 8}, w[] = {4, 3, 3, 3};
    cdnn_conv_attr_t conv;
    cdnn_conv_attr_init(&conv, 2);
    conv.groups = 4; /* does not divide 6 channels */
    tensor(g, 1, "x", 4, x);
    tensor(g, 2, "w", 4, w);
    tensor(g, 3, "y", 0, NULL);
    OK(cdnn_graph_conv_fwd(g, "grouped", &conv, 1, 2, 3));
    expect_invalid(g, "node 'grouped'", "groups 4");
}

static void test_missing_tensor(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 2, d44);
    tensor(g, 2, "y", 2, d44);
    pointwise(g, "add", CDNN_PW_ADD, 1, 42, 2);
    expect_invalid(g, "node 'add' (pointwise): 'b' refers to uid 42", "missing tensor");
}

static void test_missing_required_port(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 2, d44);
    tensor(g, 2, "y", 2, d44);
    pointwise(g, "add", CDNN_PW_ADD, 1, NONE, 2);
    expect_invalid(g, "node 'add'", "'b' is required");
}

static void test_two_writers(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 2, d44);
    tensor(g, 2, "y", 2, d44);
    pointwise(g, "exp", CDNN_PW_EXP, 1, NONE, 2);
    pointwise(g, "log", CDNN_PW_LOG, 1, NONE, 2);
    expect_invalid(g, "tensor 'y' (uid 2) is written by both", "'log'");
}

static void test_virtual_output(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 2, d44);
    tensor(g, 2, "y", 2, d44);
    OK(cdnn_graph_tensor_set_virtual(g, 2));
    pointwise(g, "exp", CDNN_PW_EXP, 1, NONE, 2);
    expect_invalid(g, "tensor 'y' (uid 2)", "graph outputs must not be virtual");
}

static void test_input_without_shape(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 0, NULL);
    tensor(g, 2, "y", 0, NULL);
    pointwise(g, "exp", CDNN_PW_EXP, 1, NONE, 2);
    expect_invalid(g, "tensor 'x' (uid 1)", "has no shape");
}

static void test_overlapping_output(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    const int64_t strides[] = {1, 1};
    tensor(g, 1, "x", 2, d44);
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_F32, 2, d44, strides));
    pointwise(g, "exp", CDNN_PW_EXP, 1, NONE, 2);
    expect_invalid(g, "tensor 'y' (uid 2)", "overlap");
}

static void test_size_limits(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    const int64_t huge_dim[] = {CDNN_MAX_DIM + 1};
    const int64_t too_many[] = {1 << 20, 1 << 20, 1 << 13};
    const int64_t dims[] = {8192, 4}, wild[] = {CDNN_MAX_DIM, 1};
    assert_int_equal(cdnn_graph_tensor(g, 1, "a", CDNN_DATA_TYPE_F32, 1, huge_dim, NULL),
                     CDNN_STATUS_BAD_PARAM);
    assert_non_null(strstr(cdnn_last_error(), "[1, 2^40]"));
    assert_int_equal(cdnn_graph_tensor(g, 2, "b", CDNN_DATA_TYPE_F32, 3, too_many, NULL),
                     CDNN_STATUS_BAD_PARAM);
    assert_non_null(strstr(cdnn_last_error(), "2^52"));
    assert_int_equal(cdnn_graph_tensor(g, 3, "c", CDNN_DATA_TYPE_F32, 2, dims, wild),
                     CDNN_STATUS_BAD_PARAM);
    assert_non_null(strstr(cdnn_last_error(), "spans more than 2^52"));
    cdnn_graph_destroy(g);
}

static void test_empty_graph(void **state)
{
    (void)state;
    expect_invalid(new_graph(), "no operations", NULL);
}

static void expect_shape(cdnn_graph_t *g, int64_t uid, int32_t rank, const int64_t *dims);

/* Softmax and log-softmax: the builder refuses an axis beyond any rank,
 * validation one beyond x's, integer types and a wrong output shape; a
 * valid node infers y as x, and axis -1 and rank - 1 are the same work. */
static cdnn_graph_t *softmax_graph(cdnn_data_type_t type, int32_t axis, int log_space,
                                   int32_t y_rank, const int64_t *y_dims)
{
    cdnn_graph_t *g = new_graph();
    static const int64_t x[] = {3, 5};
    OK(cdnn_graph_tensor(g, 1, "x", type, 2, x, NULL));
    OK(cdnn_graph_tensor(g, 2, "y", type, y_rank, y_dims, NULL));
    if (log_space)
        OK(cdnn_graph_log_softmax(g, "lsm", axis, 1, 2));
    else
        OK(cdnn_graph_softmax(g, "sm", axis, 1, 2));
    return g;
}

static void test_softmax_validation(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 2, d44);
    tensor(g, 2, "y", 2, d44);
    expect_refused(cdnn_graph_softmax(g, "sm", 8, 1, 2), "node 'sm'", "axis 8");
    expect_refused(cdnn_graph_log_softmax(g, "lsm", -9, 1, 2), "node 'lsm'", "axis -9");
    expect_invalid(g, "no operations", NULL); /* nothing refused was added */

    expect_invalid(softmax_graph(CDNN_DATA_TYPE_F32, 2, 0, 0, NULL),
                   "node 'sm' (softmax): input 'x'", "no dim at the axis");
    expect_invalid(softmax_graph(CDNN_DATA_TYPE_F32, -3, 1, 0, NULL),
                   "node 'lsm' (log_softmax): input 'x'", "negative axis");
    expect_invalid(softmax_graph(CDNN_DATA_TYPE_I32, -1, 0, 0, NULL), "tensor 'x'",
                   "floating-point type");
    static const int64_t wrong[] = {3, 1};
    expect_invalid(softmax_graph(CDNN_DATA_TYPE_F32, 1, 0, 2, wrong), "output 'y'",
                   "[3, 5]");

    static const int64_t x[] = {3, 5};
    char k_last[65], k_one[65], k_zero[65], k_log[65];
    g = softmax_graph(CDNN_DATA_TYPE_F32, -1, 0, 0, NULL);
    OK(cdnn_graph_validate(g));
    expect_shape(g, 2, 2, x);
    OK(cdnn_graph_content_key(g, k_last));
    cdnn_graph_destroy(g);
    g = softmax_graph(CDNN_DATA_TYPE_F32, 1, 0, 0, NULL);
    OK(cdnn_graph_content_key(g, k_one));
    cdnn_graph_destroy(g);
    g = softmax_graph(CDNN_DATA_TYPE_F32, 0, 0, 0, NULL);
    OK(cdnn_graph_content_key(g, k_zero));
    cdnn_graph_destroy(g);
    g = softmax_graph(CDNN_DATA_TYPE_F32, 1, 1, 0, NULL);
    OK(cdnn_graph_content_key(g, k_log));
    cdnn_graph_destroy(g);
    assert_string_equal(k_last, k_one);
    assert_string_not_equal(k_last, k_zero);
    assert_string_not_equal(k_last, k_log);
}

/* Reshape and transpose: a permutation checked by the builder, y's
 * declared shape and element count, one type on both sides; transpose
 * infers y. */
static void test_data_movement_validation(void **state)
{
    (void)state;
    static const int64_t x[] = {2, 3, 4}, six_four[] = {6, 4}, five[] = {5, 5};
    cdnn_transpose_attr_t t = {3, {2, 0, 1}};
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 3, x);
    tensor(g, 2, "y", 0, NULL);
    cdnn_transpose_attr_t twice = {3, {0, 0, 1}}, deep = {9, {0}}, far = {2, {0, 2}};
    expect_refused(cdnn_graph_transpose(g, "tr", &twice, 1, 2), "node 'tr'", "perm[1] is 0");
    expect_refused(cdnn_graph_transpose(g, "tr", &deep, 1, 2), "node 'tr'", "rank 9");
    expect_refused(cdnn_graph_transpose(g, "tr", &far, 1, 2), "node 'tr'", "perm[1] is 2");
    OK(cdnn_graph_transpose(g, "tr", &t, 1, 2));
    OK(cdnn_graph_validate(g));
    static const int64_t want[] = {4, 2, 3};
    expect_shape(g, 2, 3, want);
    cdnn_graph_destroy(g);

    g = new_graph();
    tensor(g, 1, "x", 2, six_four);
    tensor(g, 2, "y", 0, NULL);
    OK(cdnn_graph_transpose(g, "tr", &t, 1, 2));
    expect_invalid(g, "node 'tr' (transpose): input 'x'", "perm has 3 entries");

    g = new_graph();
    tensor(g, 1, "x", 3, x);
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_F16, 0, NULL, NULL));
    OK(cdnn_graph_transpose(g, "tr", &t, 1, 2));
    expect_invalid(g, "output 'y'", "type mismatch");

    g = new_graph();
    tensor(g, 1, "x", 3, x);
    tensor(g, 2, "y", 0, NULL);
    OK(cdnn_graph_reshape(g, "rs", 1, 2));
    expect_invalid(g, "node 'rs' (reshape): output 'y'", "must be declared");

    g = new_graph();
    tensor(g, 1, "x", 3, x);
    tensor(g, 2, "y", 2, five);
    OK(cdnn_graph_reshape(g, "rs", 1, 2));
    expect_invalid(g, "has 25 elements but x has 24", "shape mismatch");

    g = new_graph();
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_I64, 3, x, NULL));
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_I32, 2, six_four, NULL));
    OK(cdnn_graph_reshape(g, "rs", 1, 2));
    expect_invalid(g, "x's (i64)", "type mismatch");

    g = new_graph();
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_U8, 3, x, NULL));
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_U8, 2, six_four, NULL));
    OK(cdnn_graph_reshape(g, "rs", 1, 2));
    OK(cdnn_graph_validate(g)); /* any type */
    cdnn_graph_destroy(g);
}

/* Concat: 2 to 5 inputs, consecutive, one type and rank, equal but on the
 * axis (y inferred as their sum there); slice: start >= 0, step >= 1, y
 * declared and inside x. */
static void test_concat_slice_validation(void **state)
{
    (void)state;
    static const int64_t a[] = {2, 3}, b[] = {2, 5}, c[] = {4, 3}, cat[] = {2, 8};
    int64_t xs[6] = {1, 2, 3, 4, 5, 6};
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "a", 2, a);
    tensor(g, 2, "b", 2, b);
    tensor(g, 9, "y", 0, NULL);
    expect_refused(cdnn_graph_concat(g, "cat", 1, 1, xs, 9), "node 'cat'", "1 inputs");
    expect_refused(cdnn_graph_concat(g, "cat", 1, 6, xs, 9), "node 'cat'", "6 inputs");
    expect_refused(cdnn_graph_concat(g, "cat", 8, 2, xs, 9), "node 'cat'", "axis 8");
    OK(cdnn_graph_concat(g, "cat", -1, 2, xs, 9));
    OK(cdnn_graph_validate(g));
    expect_shape(g, 9, 2, cat);
    cdnn_graph_destroy(g);

    g = new_graph();
    tensor(g, 1, "a", 2, a);
    tensor(g, 2, "c", 2, c);
    tensor(g, 9, "y", 0, NULL);
    OK(cdnn_graph_concat(g, "cat", 1, 2, xs, 9));
    expect_invalid(g, "node 'cat' (concat): input 'x1' (tensor 'c'", "other than the axis");

    g = new_graph();
    tensor(g, 1, "a", 2, a);
    OK(cdnn_graph_tensor(g, 2, "b", CDNN_DATA_TYPE_F16, 2, b, NULL));
    tensor(g, 9, "y", 0, NULL);
    OK(cdnn_graph_concat(g, "cat", 1, 2, xs, 9));
    expect_invalid(g, "input 'x1' (tensor 'b'", "type mismatch");

    g = new_graph();
    tensor(g, 1, "a", 2, a);
    tensor(g, 2, "b", 2, b);
    tensor(g, 3, "a2", 2, a);
    tensor(g, 9, "y", 0, NULL);
    int64_t gap[4] = {1, 2, NONE, 3};
    OK(cdnn_graph_concat(g, "cat", 1, 4, gap, 9));
    expect_invalid(g, "input 'x3' (tensor 'a2'", "consecutive");

    static const int64_t x[] = {5, 8}, win[] = {2, 3}, big[] = {3, 3};
    cdnn_slice_attr_t s = {2, {2, 3}, {1, 0}}; /* rows 1, 3; columns 0, 3, 6 */
    cdnn_slice_attr_t neg = {2, {1, 1}, {-1, 0}}, still = {2, {1, 0}, {0, 0}};
    g = new_graph();
    tensor(g, 1, "x", 2, x);
    tensor(g, 2, "y", 2, win);
    expect_refused(cdnn_graph_slice(g, "sl", &neg, 1, 2), "node 'sl'", "start[0] is -1");
    expect_refused(cdnn_graph_slice(g, "sl", &still, 1, 2), "node 'sl'", "step[1] is 0");
    OK(cdnn_graph_slice(g, "sl", &s, 1, 2));
    OK(cdnn_graph_validate(g));
    cdnn_graph_destroy(g);

    g = new_graph();
    tensor(g, 1, "x", 2, x);
    tensor(g, 2, "y", 2, big); /* rows 1, 3, 5: past x's 5 */
    OK(cdnn_graph_slice(g, "sl", &s, 1, 2));
    expect_invalid(g, "node 'sl' (slice): output 'y'", "reaches index 5 of x's dim 0");

    g = new_graph();
    tensor(g, 1, "x", 2, x);
    tensor(g, 2, "y", 0, NULL);
    OK(cdnn_graph_slice(g, "sl", &s, 1, 2));
    expect_invalid(g, "output 'y'", "must be declared");

    /* pad: pre >= 0, value not NaN, y at least x + pre */
    static const int64_t padded[] = {6, 10}, short_y[] = {6, 9};
    cdnn_pad_attr_t p = {2, {1, 2}, -1.5}, bad_pre = {2, {0, -1}, 0},
                    nan_value = {2, {0, 0}, NAN};
    g = new_graph();
    tensor(g, 1, "x", 2, x);
    tensor(g, 2, "y", 2, padded);
    expect_refused(cdnn_graph_pad(g, "pad", &bad_pre, 1, 2), "node 'pad'", "pre[1] is -1");
    expect_refused(cdnn_graph_pad(g, "pad", &nan_value, 1, 2), "node 'pad'", "NaN");
    OK(cdnn_graph_pad(g, "pad", &p, 1, 2));
    OK(cdnn_graph_validate(g));
    cdnn_graph_destroy(g);

    g = new_graph();
    tensor(g, 1, "x", 2, x);
    tensor(g, 2, "y", 2, short_y);
    OK(cdnn_graph_pad(g, "pad", &p, 1, 2));
    expect_invalid(g, "node 'pad' (pad): output 'y'", "is 9 in dim 1, less than x's 8 plus pre 2");
}

/* Argmax and argmin: y an index type, inferred with 1 at the axis. */
static void test_argmax_validation(void **state)
{
    (void)state;
    static const int64_t x[] = {3, 5, 2}, want[] = {3, 1, 2};
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 3, x);
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_I64, 0, NULL, NULL));
    OK(cdnn_graph_argmax(g, "am", -2, 1, 2));
    OK(cdnn_graph_validate(g));
    expect_shape(g, 2, 3, want);
    cdnn_graph_destroy(g);

    g = new_graph();
    tensor(g, 1, "x", 3, x);
    tensor(g, 2, "y", 0, NULL); /* f32 */
    OK(cdnn_graph_argmin(g, "an", 1, 1, 2));
    expect_invalid(g, "node 'an' (argmin): output 'y'", "index type");

    g = new_graph();
    tensor(g, 1, "x", 3, x);
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_I32, 0, NULL, NULL));
    OK(cdnn_graph_argmax(g, "am", 3, 1, 2));
    expect_invalid(g, "node 'am' (argmax): input 'x'", "no dim at the axis");
}

/* An attention backward graph: q [2,3,5,8], k [2,3,7,8], v [2,3,7,4],
 * o and do [2,3,5,4] unless `bad_port` (0..4) gets `bad_dims`. */
static cdnn_graph_t *sdpa_bwd_graph(int bad_port, const int64_t *bad_dims, double scale)
{
    static const int64_t dims[5][4] = {{2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 4},
                                       {2, 3, 5, 4}, {2, 3, 5, 4}};
    static const char *const names[5] = {"q", "k", "v", "o", "do"};
    cdnn_graph_t *g = new_graph();
    for (int p = 0; p < 5; p++)
        tensor(g, p + 1, names[p], 4, p == bad_port ? bad_dims : dims[p]);
    tensor(g, 6, "dq", 0, NULL);
    tensor(g, 7, "dk", 0, NULL);
    tensor(g, 8, "dv", 0, NULL);
    cdnn_sdpa_attr_t a = {scale, 1};
    OK(cdnn_graph_sdpa_bwd(g, "bwd", &a, 1, 2, 3, 4, 5, 6, 7, 8));
    return g;
}

/* Attention backward: gradients inferred with their inputs' shapes; each
 * mismatched input and a bad scale named. */
static void test_sdpa_bwd_validation(void **state)
{
    (void)state;
    static const int64_t want_dk[] = {2, 3, 7, 8}, want_dv[] = {2, 3, 7, 4};
    cdnn_graph_t *g = sdpa_bwd_graph(-1, NULL, 0);
    OK(cdnn_graph_validate(g));
    expect_shape(g, 7, 4, want_dk);
    expect_shape(g, 8, 4, want_dv);
    cdnn_graph_destroy(g);

    static const int64_t short_k[] = {2, 3, 7, 6}, long_o[] = {2, 3, 6, 4},
                         wide_do[] = {2, 3, 5, 5}, few_heads_v[] = {2, 1, 7, 4};
    expect_invalid(sdpa_bwd_graph(1, short_k, 0), "input 'k'", "head size");
    expect_invalid(sdpa_bwd_graph(2, few_heads_v, 0), "input 'v'", "heads");
    expect_invalid(sdpa_bwd_graph(3, long_o, 0), "input 'o'", "forward's output");
    expect_invalid(sdpa_bwd_graph(4, wide_do, 0), "input 'do'", "o's");
    static const int64_t rank3[] = {3, 5, 8};
    g = new_graph();
    tensor(g, 1, "q", 3, rank3);
    for (int p = 1; p < 5; p++)
        tensor(g, p + 1, "t", 3, rank3);
    cdnn_sdpa_attr_t a = {0, 0};
    OK(cdnn_graph_sdpa_bwd(g, "bwd", &a, 1, 2, 3, 4, 5, 6, 7, 8));
    tensor(g, 6, "dq", 0, NULL);
    tensor(g, 7, "dk", 0, NULL);
    tensor(g, 8, "dv", 0, NULL);
    expect_invalid(g, "node 'bwd' (sdpa_bwd): input 'q'", "rank 4");
    expect_invalid(sdpa_bwd_graph(-1, NULL, -1.0), "node 'bwd' (sdpa_bwd)", "scale");
    /* a declared gradient of the wrong shape */
    g = new_graph();
    static const int64_t q[] = {1, 1, 2, 4};
    for (int p = 0; p < 5; p++)
        tensor(g, p + 1, "t", 4, q);
    static const int64_t wrong[] = {1, 1, 2, 3};
    tensor(g, 6, "dq", 4, wrong);
    tensor(g, 7, "dk", 0, NULL);
    tensor(g, 8, "dv", 0, NULL);
    OK(cdnn_graph_sdpa_bwd(g, "bwd", &a, 1, 2, 3, 4, 5, 6, 7, 8));
    expect_invalid(g, "output 'dq'", "shape mismatch");
}

/* Gather: y inferred as x's dims around indices' dims; index types, the
 * axis and a too-high rank named. */
static void test_gather_validation(void **state)
{
    (void)state;
    static const int64_t x[] = {4, 5, 6}, idx[] = {2, 3}, want[] = {4, 2, 3, 6};
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 3, x);
    OK(cdnn_graph_tensor(g, 2, "idx", CDNN_DATA_TYPE_I32, 2, idx, NULL));
    tensor(g, 3, "y", 0, NULL);
    OK(cdnn_graph_gather(g, "g", -2, 1, 2, 3));
    OK(cdnn_graph_validate(g));
    expect_shape(g, 3, 4, want);
    cdnn_graph_destroy(g);

    g = new_graph();
    tensor(g, 1, "x", 3, x);
    tensor(g, 2, "idx", 2, idx); /* f32 */
    tensor(g, 3, "y", 0, NULL);
    OK(cdnn_graph_gather(g, "g", 0, 1, 2, 3));
    expect_invalid(g, "node 'g' (gather): input 'indices'", "index type");

    g = new_graph();
    tensor(g, 1, "x", 3, x);
    OK(cdnn_graph_tensor(g, 2, "idx", CDNN_DATA_TYPE_I64, 2, idx, NULL));
    OK(cdnn_graph_tensor(g, 3, "y", CDNN_DATA_TYPE_F16, 0, NULL, NULL));
    OK(cdnn_graph_gather(g, "g", 0, 1, 2, 3));
    expect_invalid(g, "output 'y'", "type other than x's");

    g = new_graph();
    tensor(g, 1, "x", 3, x);
    OK(cdnn_graph_tensor(g, 2, "idx", CDNN_DATA_TYPE_I64, 2, idx, NULL));
    tensor(g, 3, "y", 0, NULL);
    OK(cdnn_graph_gather(g, "g", -4, 1, 2, 3));
    expect_invalid(g, "input 'x'", "negative axis");

    static const int64_t x6[] = {2, 2, 2, 2, 2, 2}, i4[] = {1, 1, 1, 2};
    g = new_graph();
    tensor(g, 1, "x", 6, x6);
    OK(cdnn_graph_tensor(g, 2, "idx", CDNN_DATA_TYPE_I64, 4, i4, NULL));
    tensor(g, 3, "y", 0, NULL);
    OK(cdnn_graph_gather(g, "g", 0, 1, 2, 3));
    expect_invalid(g, "input 'indices'", "y rank 9");

    /* gather-elements: indices of x's rank, no larger off the axis */
    static const int64_t small[] = {3, 9, 6}, wide[] = {4, 2, 7};
    g = new_graph();
    tensor(g, 1, "x", 3, x);
    OK(cdnn_graph_tensor(g, 2, "idx", CDNN_DATA_TYPE_I64, 3, small, NULL));
    tensor(g, 3, "y", 0, NULL);
    OK(cdnn_graph_gather_elements(g, "ge", 1, 1, 2, 3));
    OK(cdnn_graph_validate(g));
    expect_shape(g, 3, 3, small);
    cdnn_graph_destroy(g);
    g = new_graph();
    tensor(g, 1, "x", 3, x);
    OK(cdnn_graph_tensor(g, 2, "idx", CDNN_DATA_TYPE_I64, 3, wide, NULL));
    tensor(g, 3, "y", 0, NULL);
    OK(cdnn_graph_gather_elements(g, "ge", 1, 1, 2, 3));
    expect_invalid(g, "node 'ge' (gather_elements): input 'indices'", "in dim 2");
    g = new_graph();
    tensor(g, 1, "x", 3, x);
    OK(cdnn_graph_tensor(g, 2, "idx", CDNN_DATA_TYPE_I64, 2, idx, NULL));
    tensor(g, 3, "y", 0, NULL);
    OK(cdnn_graph_gather_elements(g, "ge", 1, 1, 2, 3));
    expect_invalid(g, "input 'indices'", "rank 3");
}

/* Top-k: k refused below 1 by the builder, above the dim by validation;
 * values and indices inferred, their types named. */
/* The training norms: valid nodes infer their outputs; the builder refuses
 * a momentum outside 0..1; validation names the tensor and why. */
static cdnn_graph_t *bn_train_graph(const int64_t *x, const int64_t *scale)
{
    cdnn_graph_t *g = new_graph();
    static const int64_t c3[] = {1, 3, 1, 1};
    tensor(g, 1, "x", 4, x);
    tensor(g, 2, "scale", 4, scale);
    tensor(g, 3, "bias", 4, c3);
    for (int64_t u = 4; u <= 6; u++)
        tensor(g, u, u == 4 ? "y" : "stat", 0, NULL);
    OK(cdnn_graph_batchnorm_train(g, "bn", 1e-5, 1, 2, 3, 4, 5, 6));
    return g;
}

static void test_norm_train_validation(void **state)
{
    (void)state;
    static const int64_t x[] = {2, 3, 4, 5}, c3[] = {1, 3, 1, 1}, c4[] = {1, 4, 1, 1};
    cdnn_graph_t *g = bn_train_graph(x, c3);
    tensor(g, 7, "rm", 4, c3);
    tensor(g, 8, "rv", 4, c3);
    tensor(g, 9, "next_rm", 0, NULL);
    tensor(g, 10, "next_rv", 0, NULL);
    OK(cdnn_graph_batchnorm_running_stats(g, "run", 0.1, 1, 7, 8, 9, 10));
    OK(cdnn_graph_validate(g));
    expect_shape(g, 4, 4, x);
    expect_shape(g, 5, 4, c3);
    expect_shape(g, 10, 4, c3);
    expect_refused(cdnn_graph_batchnorm_running_stats(g, "run2", 1.5, 1, 7, 8, 9, 10),
                   "node 'run2'", "momentum 1.5");
    expect_refused(cdnn_graph_batchnorm_running_stats(g, "run3", NAN, 1, 7, 8, 9, 10),
                   "node 'run3'", "momentum");
    cdnn_graph_destroy(g);

    expect_invalid(bn_train_graph(x, c4), "node 'bn' (batchnorm_train): input 'scale'",
                   "one value per channel");

    static const int64_t one_per_channel[] = {1, 3, 1, 1};
    g = new_graph();
    tensor(g, 1, "x", 4, one_per_channel);
    tensor(g, 2, "rm", 4, c3);
    tensor(g, 3, "rv", 4, c3);
    tensor(g, 4, "a", 0, NULL);
    tensor(g, 5, "b", 0, NULL);
    OK(cdnn_graph_batchnorm_running_stats(g, "run", 0.1, 1, 2, 3, 4, 5));
    expect_invalid(g, "input 'x'", "needs at least 2");

    /* batch-norm backward: dy of other dims, then of another type */
    static const int64_t x_short[] = {2, 3, 4, 4};
    for (int typed = 0; typed < 2; typed++) {
        g = new_graph();
        if (typed)
            OK(cdnn_graph_tensor(g, 1, "dy", CDNN_DATA_TYPE_F16, 4, x, NULL));
        else
            tensor(g, 1, "dy", 4, x_short);
        tensor(g, 2, "x", 4, x);
        for (int64_t u = 3; u <= 5; u++)
            tensor(g, u, "stat", 4, c3);
        tensor(g, 6, "dx", 0, NULL);
        OK(cdnn_graph_batchnorm_bwd(g, "bn_bwd", 1, 2, 3, 4, 5, 6, NONE, NONE));
        if (typed)
            expect_invalid(g, "node 'bn_bwd' (batchnorm_bwd)", "type");
        else
            expect_invalid(g, "input 'dy'", "the dims of x");
    }

    /* layer-norm backward over the last dim: mean must be [2, 3, 4, 1] */
    static const int64_t row[] = {1, 1, 1, 5}, stats[] = {2, 3, 4, 1},
                         bad_stats[] = {2, 3, 1, 1}, bad_scale[] = {1, 1, 1, 4};
    g = new_graph();
    tensor(g, 1, "dy", 4, x);
    tensor(g, 2, "x", 4, x);
    tensor(g, 3, "scale", 4, row);
    tensor(g, 4, "mean", 4, bad_stats);
    tensor(g, 5, "inv", 4, stats);
    tensor(g, 6, "dx", 0, NULL);
    tensor(g, 7, "dscale", 0, NULL);
    OK(cdnn_graph_layernorm_bwd(g, "ln_bwd", 1, 2, 3, 4, 5, 6, 7, NONE));
    expect_invalid(g, "input 'mean'", "1 on the normalised dims");

    g = new_graph();
    tensor(g, 1, "dy", 4, x);
    tensor(g, 2, "x", 4, x);
    tensor(g, 3, "scale", 4, bad_scale);
    tensor(g, 4, "inv_rms", 4, stats);
    tensor(g, 5, "dx", 0, NULL);
    OK(cdnn_graph_rmsnorm_bwd(g, "rms_bwd", 1, 2, 3, 4, 5, NONE, NONE));
    expect_invalid(g, "node 'rms_bwd' (rmsnorm_bwd): input 'scale'", "x's size");

    g = new_graph(); /* valid: dscale and dbias inferred as scale */
    tensor(g, 1, "dy", 4, x);
    tensor(g, 2, "x", 4, x);
    tensor(g, 3, "scale", 4, row);
    tensor(g, 4, "inv_rms", 4, stats);
    for (int64_t u = 5; u <= 7; u++)
        tensor(g, u, "grad", 0, NULL);
    OK(cdnn_graph_rmsnorm_bwd(g, "rms_bwd", 1, 2, 3, 4, 5, 6, 7));
    OK(cdnn_graph_validate(g));
    expect_shape(g, 5, 4, x);
    expect_shape(g, 7, 4, row);
    cdnn_graph_destroy(g);
}

static void test_topk_validation(void **state)
{
    (void)state;
    static const int64_t x[] = {3, 8}, want[] = {3, 5};
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 2, x);
    cdnn_topk_attr_t a = {-1, 1, 5};
    tensor(g, 2, "v", 0, NULL);
    OK(cdnn_graph_tensor(g, 3, "i", CDNN_DATA_TYPE_I32, 0, NULL, NULL));
    OK(cdnn_graph_topk(g, "tk", &a, 1, 2, 3));
    OK(cdnn_graph_validate(g));
    expect_shape(g, 2, 2, want);
    expect_shape(g, 3, 2, want);
    cdnn_graph_destroy(g);

    g = new_graph();
    cdnn_topk_attr_t zero = {0, 1, 0};
    assert_int_equal(cdnn_graph_topk(g, "tk", &zero, 1, 2, 3), CDNN_STATUS_BAD_PARAM);
    if (!strstr(cdnn_last_error(), "k is 0"))
        fail_msg("message \"%s\" lacks \"k is 0\"", cdnn_last_error());
    cdnn_graph_destroy(g);

    g = new_graph();
    tensor(g, 1, "x", 2, x);
    tensor(g, 2, "v", 0, NULL);
    cdnn_topk_attr_t big = {1, 0, 9};
    OK(cdnn_graph_topk(g, "tk", &big, 1, 2, NONE));
    expect_invalid(g, "node 'tk' (topk): input 'x'", "fewer than k = 9");

    g = new_graph();
    tensor(g, 1, "x", 2, x);
    tensor(g, 2, "v", 0, NULL);
    tensor(g, 3, "i", 0, NULL); /* f32 */
    OK(cdnn_graph_topk(g, "tk", &a, 1, 2, 3));
    expect_invalid(g, "output 'indices'", "index type");

    g = new_graph();
    tensor(g, 1, "x", 2, x);
    OK(cdnn_graph_tensor(g, 2, "v", CDNN_DATA_TYPE_F64, 0, NULL, NULL));
    OK(cdnn_graph_topk(g, "tk", &a, 1, 2, NONE));
    expect_invalid(g, "output 'values'", "type other than x's");

    /* i32 positions for a row longer than 2^31 - 1 (declared, never run) */
    static const int64_t long_row[] = {1, (int64_t)INT32_MAX + 2};
    g = new_graph();
    tensor(g, 1, "x", 2, long_row);
    tensor(g, 2, "v", 0, NULL);
    OK(cdnn_graph_tensor(g, 3, "i", CDNN_DATA_TYPE_I32, 0, NULL, NULL));
    OK(cdnn_graph_topk(g, "tk", &a, 1, 2, 3));
    expect_invalid(g, "output 'indices'", "use i64");
}

/* One pooling node over x [1, 2, n] (or x as given) with y inferred. */
static cdnn_graph_t *pool_graph(const cdnn_pooling_attr_t *a, int32_t rank,
                                const int64_t *x, cdnn_data_type_t type, int64_t indices)
{
    cdnn_graph_t *g = new_graph();
    OK(cdnn_graph_tensor(g, 1, "x", type, rank, x, NULL));
    OK(cdnn_graph_tensor(g, 2, "y", type, 0, NULL, NULL));
    if (indices != NONE)
        OK(cdnn_graph_tensor(g, indices, "idx", CDNN_DATA_TYPE_I64, 0, NULL, NULL));
    OK(cdnn_graph_pooling_fwd(g, "pool", a, 1, 2, indices));
    return g;
}

/* Pooling: PyTorch's output sizes (ceil mode's last window inside x or
 * its left padding), the builder's refusals and validation's, each
 * named. */
static void test_pooling_validation(void **state)
{
    (void)state;
    cdnn_pooling_attr_t a;
    cdnn_pooling_attr_init(&a, CDNN_POOLING_MAX, 2);
    a.window[0] = a.window[1] = 2;
    a.stride[0] = a.stride[1] = 2;
    static const int64_t x55[] = {1, 2, 5, 5}, y22[] = {1, 2, 2, 2},
                         y33[] = {1, 2, 3, 3};
    cdnn_graph_t *g = pool_graph(&a, 4, x55, CDNN_DATA_TYPE_F32, NONE);
    OK(cdnn_graph_validate(g));
    expect_shape(g, 2, 4, y22);
    cdnn_graph_destroy(g);
    a.ceil_mode = 1;
    g = pool_graph(&a, 4, x55, CDNN_DATA_TYPE_F32, 3);
    OK(cdnn_graph_validate(g));
    expect_shape(g, 2, 4, y33);
    expect_shape(g, 3, 4, y33);
    cdnn_graph_destroy(g);
    /* n 5, padding 1 each side: ceil would give 4, but the 4th window
     * would start at 6 = n + pre, in the right padding: 3, as PyTorch. */
    a.pre_padding[0] = a.pre_padding[1] = 1;
    a.post_padding[0] = a.post_padding[1] = 1;
    g = pool_graph(&a, 4, x55, CDNN_DATA_TYPE_F32, NONE);
    OK(cdnn_graph_validate(g));
    expect_shape(g, 2, 4, y33);
    cdnn_graph_destroy(g);

    /* builder */
    cdnn_pooling_attr_t bad = a;
    bad.window[1] = 0;
    g = new_graph();
    assert_int_equal(cdnn_graph_pooling_fwd(g, "pool", &bad, 1, 2, NONE),
                     CDNN_STATUS_BAD_PARAM);
    if (!strstr(cdnn_last_error(), "window[1] is 0"))
        fail_msg("message \"%s\" lacks \"window[1] is 0\"", cdnn_last_error());
    bad = a;
    bad.mode = 5;
    assert_int_equal(cdnn_graph_pooling_fwd(g, "pool", &bad, 1, 2, NONE),
                     CDNN_STATUS_BAD_PARAM);
    if (!strstr(cdnn_last_error(), "mode 5 is not a pooling mode"))
        fail_msg("message \"%s\"", cdnn_last_error());
    bad = a;
    bad.spatial_dims = 4;
    assert_int_equal(cdnn_graph_pooling_bwd(g, "pool", &bad, 1, 2, NONE, 3),
                     CDNN_STATUS_BAD_PARAM);
    if (!strstr(cdnn_last_error(), "spatial_dims is 4"))
        fail_msg("message \"%s\"", cdnn_last_error());
    cdnn_graph_destroy(g);

    /* a window in the right padding only; a window larger than x */
    bad = a;
    bad.ceil_mode = 0;
    bad.stride[0] = 1;
    bad.post_padding[0] = 3;
    g = pool_graph(&bad, 4, x55, CDNN_DATA_TYPE_F32, NONE);
    expect_invalid(g, "node 'pool' (pooling_fwd): spatial dim 0: output 6's window",
                   "padding only");
    bad = a;
    bad.window[1] = 9;
    g = pool_graph(&bad, 4, x55, CDNN_DATA_TYPE_F32, NONE);
    expect_invalid(g, "spatial dim 1: the dilated window (9)", "padded input (7)");
    /* dilation steps over x from the left padding */
    bad = a;
    bad.window[0] = 2;
    bad.stride[0] = 1;
    bad.pre_padding[0] = 3;
    bad.dilation[0] = 9;
    bad.post_padding[0] = 6; /* taps -3 and 6 of x's 0 .. 2 */
    static const int64_t x3[] = {1, 2, 3, 5};
    g = pool_graph(&bad, 4, x3, CDNN_DATA_TYPE_F32, NONE);
    expect_invalid(g, "output 0's window", "padding only");

    /* average: floats, dilation 1, no indices */
    cdnn_pooling_attr_t avg = a;
    avg.mode = CDNN_POOLING_AVG;
    g = pool_graph(&avg, 4, x55, CDNN_DATA_TYPE_I32, NONE);
    expect_invalid(g, "input 'x'", "floating-point type for average");
    avg.dilation[0] = 2;
    g = pool_graph(&avg, 4, x55, CDNN_DATA_TYPE_F32, NONE);
    expect_invalid(g, "dilation[0] is 2", "average pooling takes dilation 1");
    avg.dilation[0] = 1;
    g = pool_graph(&avg, 4, x55, CDNN_DATA_TYPE_F32, 3);
    expect_invalid(g, "output 'indices'", "only max pooling has indices");
    /* max: integers fine, indices of an index type, x of the right rank */
    g = pool_graph(&a, 4, x55, CDNN_DATA_TYPE_I8, 3);
    OK(cdnn_graph_validate(g));
    cdnn_graph_destroy(g);
    g = new_graph();
    tensor(g, 1, "x", 4, x55);
    tensor(g, 2, "y", 0, NULL);
    tensor(g, 3, "idx", 0, NULL);
    OK(cdnn_graph_pooling_fwd(g, "pool", &a, 1, 2, 3));
    expect_invalid(g, "output 'indices'", "index type");
    g = pool_graph(&a, 3, x55, CDNN_DATA_TYPE_F32, NONE);
    expect_invalid(g, "input 'x'", "rank 4");
    g = new_graph();
    tensor(g, 1, "x", 4, x55);
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_F16, 0, NULL, NULL));
    OK(cdnn_graph_pooling_fwd(g, "pool", &a, 1, 2, NONE));
    expect_invalid(g, "output 'y'", "type other than x's");
    g = new_graph(); /* declared y of the floor-mode size, ceil mode asked */
    tensor(g, 1, "x", 4, x55);
    tensor(g, 2, "y", 4, y22);
    OK(cdnn_graph_pooling_fwd(g, "pool", &a, 1, 2, NONE));
    expect_invalid(g, "output 'y'", "[1, 2, 3, 3]");

    /* backward: dy of the forward's y shape, dx inferred as x */
    g = new_graph();
    tensor(g, 1, "dy", 4, y33);
    tensor(g, 2, "x", 4, x55);
    tensor(g, 3, "dx", 0, NULL);
    OK(cdnn_graph_pooling_bwd(g, "pool_bwd", &a, 1, 2, NONE, 3));
    OK(cdnn_graph_validate(g));
    expect_shape(g, 3, 4, x55);
    cdnn_graph_destroy(g);
    g = new_graph();
    tensor(g, 1, "dy", 4, y22);
    tensor(g, 2, "x", 4, x55);
    tensor(g, 3, "dx", 0, NULL);
    OK(cdnn_graph_pooling_bwd(g, "pool_bwd", &a, 1, 2, NONE, 3));
    expect_invalid(g, "node 'pool_bwd' (pooling_bwd): input 'dy'",
                   "forward's output shape, [1, 2, 3, 3]");
    g = new_graph();
    tensor(g, 1, "dy", 4, y33);
    tensor(g, 2, "x", 4, x55);
    OK(cdnn_graph_tensor(g, 4, "idx", CDNN_DATA_TYPE_I32, 4, y22, NULL));
    tensor(g, 3, "dx", 0, NULL);
    OK(cdnn_graph_pooling_bwd(g, "pool_bwd", &a, 1, 2, 4, 3));
    expect_invalid(g, "input 'indices'", "forward's output shape");
}

/* Resize: y declared, x's rank and type; linear on floats only; the
 * builder names unknown modes. */
static void test_resize_validation(void **state)
{
    (void)state;
    static const int64_t x[] = {1, 3, 4, 4}, y[] = {1, 3, 8, 6}, y3[] = {3, 8, 6};
    cdnn_resize_attr_t a = {CDNN_RESIZE_LINEAR, CDNN_RESIZE_HALF_PIXEL, 0};
    cdnn_graph_t *g = new_graph();
    tensor(g, 1, "x", 4, x);
    tensor(g, 2, "y", 4, y);
    OK(cdnn_graph_resize(g, "rs", &a, 1, 2));
    OK(cdnn_graph_validate(g));
    cdnn_graph_destroy(g);
    g = new_graph();
    tensor(g, 1, "x", 4, x);
    tensor(g, 2, "y", 0, NULL);
    OK(cdnn_graph_resize(g, "rs", &a, 1, 2));
    expect_invalid(g, "node 'rs' (resize): output 'y'", "must be declared");
    g = new_graph();
    tensor(g, 1, "x", 4, x);
    tensor(g, 2, "y", 3, y3);
    OK(cdnn_graph_resize(g, "rs", &a, 1, 2));
    expect_invalid(g, "output 'y'", "x's rank");
    g = new_graph();
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_U8, 4, x, NULL));
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_U8, 4, y, NULL));
    OK(cdnn_graph_resize(g, "rs", &a, 1, 2));
    expect_invalid(g, "input 'x'", "floating-point type for linear");
    a.mode = CDNN_RESIZE_NEAREST; /* nearest moves u8 as it is */
    g = new_graph();
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_U8, 4, x, NULL));
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_U8, 4, y, NULL));
    OK(cdnn_graph_resize(g, "rs", &a, 1, 2));
    OK(cdnn_graph_validate(g));
    cdnn_graph_destroy(g);
    g = new_graph();
    a.coordinate = 3;
    assert_int_equal(cdnn_graph_resize(g, "rs", &a, 1, 2), CDNN_STATUS_BAD_PARAM);
    if (!strstr(cdnn_last_error(), "coordinate 3 is not a coordinate mode"))
        fail_msg("message \"%s\"", cdnn_last_error());
    a.coordinate = 0;
    a.nearest = 4;
    assert_int_equal(cdnn_graph_resize(g, "rs", &a, 1, 2), CDNN_STATUS_BAD_PARAM);
    if (!strstr(cdnn_last_error(), "nearest 4 is not a rounding mode"))
        fail_msg("message \"%s\"", cdnn_last_error());
    cdnn_graph_destroy(g);
}

static void expect_shape(cdnn_graph_t *g, int64_t uid, int32_t rank, const int64_t *dims)
{
    int32_t got_rank = 0;
    int64_t got[CDNN_MAX_RANK];
    OK(cdnn_graph_tensor_shape(g, uid, NULL, &got_rank, got, NULL));
    assert_int_equal(got_rank, rank);
    for (int32_t d = 0; d < rank; d++)
        assert_int_equal(got[d], dims[d]);
}

static void test_inference_conv_chain(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    const int64_t x[] = {2, 4, 9, 11}, w[] = {6, 2, 3, 3}, bias[] = {1, 6, 1, 1};
    cdnn_conv_attr_t conv;
    cdnn_conv_attr_init(&conv, 2);
    conv.groups = 2;
    conv.stride[0] = 2;
    conv.dilation[1] = 2;
    conv.pre_padding[0] = conv.post_padding[0] = 1;
    tensor(g, 1, "x", 4, x);
    tensor(g, 2, "w", 4, w);
    tensor(g, 3, "bias", 4, bias);
    tensor(g, 4, "conv", 0, NULL);
    tensor(g, 5, "y", 0, NULL);
    OK(cdnn_graph_tensor_set_virtual(g, 4));
    OK(cdnn_graph_conv_fwd(g, "conv", &conv, 1, 2, 4));
    pointwise(g, "bias", CDNN_PW_ADD, 4, 3, 5);
    OK(cdnn_graph_validate(g));
    /* H: (9 + 2 - 3) / 2 + 1 = 5; W: 11 - 2 * 2 = 7 */
    const int64_t y[] = {2, 6, 5, 7};
    expect_shape(g, 5, 4, y);
    cdnn_graph_destroy(g);
}

static void test_inference_matmul_broadcast(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    const int64_t a[] = {3, 1, 5, 7}, b[] = {1, 4, 7, 2};
    tensor(g, 1, "a", 4, a);
    tensor(g, 2, "b", 4, b);
    tensor(g, 3, "c", 0, NULL);
    OK(cdnn_graph_matmul(g, "mm", 1, 2, 3));
    OK(cdnn_graph_validate(g));
    const int64_t c[] = {3, 4, 5, 2};
    expect_shape(g, 3, 4, c);
    cdnn_graph_destroy(g);
}

static void test_inference_bwd_filter(void **state)
{
    (void)state;
    cdnn_graph_t *g = new_graph();
    const int64_t x[] = {2, 3, 10}, dy[] = {2, 5, 4};
    cdnn_conv_attr_t conv;
    cdnn_conv_attr_init(&conv, 1);
    conv.stride[0] = 2;
    tensor(g, 1, "x", 3, x);
    tensor(g, 2, "dy", 3, dy);
    tensor(g, 3, "dw", 0, NULL);
    OK(cdnn_graph_conv_bwd_filter(g, "wgrad", &conv, 1, 2, 3));
    OK(cdnn_graph_validate(g));
    const int64_t dw[] = {5, 3, 4}; /* (10 - 3 * 2 - 1) + 1 */
    expect_shape(g, 3, 3, dw);
    cdnn_graph_destroy(g);
}

/* The same computation declared twice with other names, uids and
 * declaration order; then once with other strides. */
static cdnn_graph_t *keyed_graph(int64_t base, const char *prefix, int reorder,
                                 const int64_t *x_strides)
{
    cdnn_graph_t *g = new_graph();
    char x[16], y[16];
    snprintf(x, sizeof x, "%s_x", prefix);
    snprintf(y, sizeof y, "%s_y", prefix);
    OK(cdnn_graph_set_name(g, prefix));
    const int64_t dims[] = {4, 4};
    if (reorder)
        tensor(g, base + 1, y, 2, dims);
    OK(cdnn_graph_tensor(g, base, x, CDNN_DATA_TYPE_F32, 2, dims, x_strides));
    if (!reorder)
        tensor(g, base + 1, y, 2, dims);
    pointwise(g, prefix, CDNN_PW_SIGMOID_FWD, base, NONE, base + 1);
    return g;
}

static void test_content_key(void **state)
{
    (void)state;
    const int64_t transposed[] = {1, 4};
    cdnn_graph_t *a = keyed_graph(1, "first", 0, NULL);
    cdnn_graph_t *b = keyed_graph(100, "second", 1, NULL);
    cdnn_graph_t *c = keyed_graph(1, "first", 0, transposed);
    char ka[65], kb[65], kc[65];
    OK(cdnn_graph_content_key(a, ka));
    OK(cdnn_graph_content_key(b, kb));
    OK(cdnn_graph_content_key(c, kc));
    assert_int_equal(strlen(ka), 64);
    assert_string_equal(ka, kb);
    assert_string_not_equal(ka, kc);
    cdnn_graph_destroy(a);
    cdnn_graph_destroy(b);
    cdnn_graph_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duplicate_uid),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_disconnected_node),
        cmocka_unit_test(test_disconnected_tensor),
        cmocka_unit_test(test_shape_mismatch),
        cmocka_unit_test(test_declared_output_shape_mismatch),
        cmocka_unit_test(test_type_mismatch),
        cmocka_unit_test(test_integer_type_rejected),
        cmocka_unit_test(test_bad_conv_attributes),
        cmocka_unit_test(test_bad_modes),
        cmocka_unit_test(test_pointwise_rank_broadcast),
        cmocka_unit_test(test_nan_scalar_refused),
        cmocka_unit_test(test_bad_groups),
        cmocka_unit_test(test_missing_tensor),
        cmocka_unit_test(test_missing_required_port),
        cmocka_unit_test(test_two_writers),
        cmocka_unit_test(test_virtual_output),
        cmocka_unit_test(test_input_without_shape),
        cmocka_unit_test(test_overlapping_output),
        cmocka_unit_test(test_empty_graph),
        cmocka_unit_test(test_size_limits),
        cmocka_unit_test(test_inference_conv_chain),
        cmocka_unit_test(test_inference_matmul_broadcast),
        cmocka_unit_test(test_inference_bwd_filter),
        cmocka_unit_test(test_content_key),
        cmocka_unit_test(test_softmax_validation),
        cmocka_unit_test(test_data_movement_validation),
        cmocka_unit_test(test_concat_slice_validation),
        cmocka_unit_test(test_argmax_validation),
        cmocka_unit_test(test_sdpa_bwd_validation),
        cmocka_unit_test(test_gather_validation),
        cmocka_unit_test(test_norm_train_validation),
        cmocka_unit_test(test_topk_validation),
        cmocka_unit_test(test_pooling_validation),
        cmocka_unit_test(test_resize_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
