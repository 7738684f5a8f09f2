/*
 * test_numeric.c -- the numeric semantics cdnn.h promises ("Numeric
 * semantics"), one edge case per test, each checked exactly on
 * cpu:reference (and on cpu:fused_pointwise where that engine takes the
 * graph): integer arithmetic wraps in the node's types (u8 200 + 100 = 44),
 * division truncates toward zero and x / 0 is 0, float -> integer
 * conversion truncates and saturates (NaN -> 0), i64 beyond 2^53 is exact,
 * and f64 is computed in f64.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <cdnn/cdnn.h>
#include <cdnn_sdk/numeric.h>

#include "test_filter.h"

#define OK(call) assert_int_equal((call), CDNN_STATUS_SUCCESS)
#define NONE CDNN_UID_NONE
#define MAX_N 8

/* One pointwise node, y = mode(a, b, c), over n elements given as doubles
 * (integers beyond 2^53 go through the *_int arrays instead). */
typedef struct pw_case {
    cdnn_pointwise_mode_t mode;
    cdnn_data_type_t in_type[3], out_type;
    int64_t n;
    const double *in[3];        /* as double, converted by the input's type */
    const int64_t *in_int[3];   /* or as int64, exactly */
} pw_case_t;

static uint64_t engine(const char *name)
{
    return cdnn_engine_id_from_name(name);
}

/* Build the case pinned to engine_name and run it; the output's elements
 * land in out (as bytes of out_type).  Returns the build's status. */
static cdnn_status_t run_case(const pw_case_t *c, const char *engine_name,
                              unsigned char out[MAX_N * 8])
{
    int arity = cdnn_pointwise_arity(c->mode);
    unsigned char in[3][MAX_N * 8];
    cdnn_graph_t *g;
    OK(cdnn_graph_create(&g));
    int64_t dims[1] = {c->n}, uids[4] = {NONE, NONE, NONE, 10};
    void *ptrs[4];
    for (int p = 0; p < arity; p++) {
        size_t size = cdnn_data_type_size(c->in_type[p]);
        for (int64_t i = 0; i < c->n; i++) {
            if (c->in_int[p])
                cdnn_store_element_int(c->in_type[p], in[p] + i * size, c->in_int[p][i]);
            else
                cdnn_store_element(c->in_type[p], in[p] + i * size, c->in[p][i]);
        }
        uids[p] = p + 1;
        ptrs[p] = in[p];
        OK(cdnn_graph_tensor(g, uids[p], NULL, c->in_type[p], 1, dims, NULL));
    }
    OK(cdnn_graph_tensor(g, 10, NULL, c->out_type, 1, dims, NULL));
    memset(out, 0xA5, MAX_N * 8);
    ptrs[arity] = out;
    int64_t io[4] = {uids[0], uids[1], uids[2], 10};
    io[arity] = 10;
    cdnn_pointwise_attr_t attr;
    cdnn_pointwise_attr_init(&attr, c->mode);
    OK(cdnn_graph_pointwise(g, "pw", &attr, uids[0], uids[1], uids[2], 10));
    cdnn_handle_t *h;
    OK(cdnn_handle_create(&h, "cpu"));
    cdnn_build_options_t *o;
    OK(cdnn_build_options_create(&o));
    OK(cdnn_build_options_pin_engine(o, engine(engine_name)));
    cdnn_status_t st = cdnn_graph_build(g, h, o);
    if (st == CDNN_STATUS_SUCCESS)
        OK(cdnn_graph_execute(g, h, arity + 1, io, ptrs, NULL));
    cdnn_build_options_destroy(o);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    return st;
}

/* Run on the reference (and the fused engine when it takes the graph) and
 * compare every element with want, exactly, as integers. */
static void expect_int(const pw_case_t *c, const int64_t *want)
{
    static const char *const engines[] = {"cpu:reference", "cpu:fused_pointwise"};
    for (int e = 0; e < 2; e++) {
        unsigned char out[MAX_N * 8];
        cdnn_status_t st = run_case(c, engines[e], out);
        if (e > 0 && st == CDNN_STATUS_NOT_SUPPORTED)
            continue;
        OK(st);
        size_t size = cdnn_data_type_size(c->out_type);
        for (int64_t i = 0; i < c->n; i++) {
            int64_t got = cdnn_load_element_int(c->out_type, out + i * size);
            if (got != want[i])
                fail_msg("%s %s, element %lld: got %lld, want %lld", engines[e],
                         cdnn_pointwise_mode_name(c->mode), (long long)i,
                         (long long)got, (long long)want[i]);
        }
    }
}

/* The same for a floating-point output, bit for bit as a double. */
static void expect_double(const pw_case_t *c, const double *want)
{
    unsigned char out[MAX_N * 8];
    OK(run_case(c, "cpu:reference", out));
    size_t size = cdnn_data_type_size(c->out_type);
    for (int64_t i = 0; i < c->n; i++) {
        double got = cdnn_load_element(c->out_type, out + i * size);
        if (memcmp(&got, &want[i], sizeof got) != 0)
            fail_msg("%s element %lld: got %.17g, want %.17g",
                     cdnn_pointwise_mode_name(c->mode), (long long)i, got, want[i]);
    }
}

#define T(x) CDNN_DATA_TYPE_##x
#define BINARY(m, ta, tb, ty, count, a, b) \
    {.mode = m, .in_type = {T(ta), T(tb)}, .out_type = T(ty), .n = count, .in = {a, b}}
#define UNARY(m, ta, ty, count, a) \
    {.mode = m, .in_type = {T(ta)}, .out_type = T(ty), .n = count, .in = {a}}

static void test_u8_add_wraps(void **state)
{
    (void)state;
    static const double a[] = {200, 255, 0, 255}, b[] = {100, 1, 0, 255};
    pw_case_t c = BINARY(CDNN_PW_ADD, U8, U8, U8, 4, a, b);
    expect_int(&c, (int64_t[]){44, 0, 0, 254});
    /* The exact sum reaches a wider output unwrapped. */
    pw_case_t wide = BINARY(CDNN_PW_ADD, U8, U8, I32, 4, a, b);
    expect_int(&wide, (int64_t[]){300, 256, 0, 510});
    pw_case_t as_float = BINARY(CDNN_PW_ADD, U8, U8, F32, 4, a, b);
    expect_int(&as_float, (int64_t[]){300, 256, 0, 510});
}

static void test_u8_sub_and_mul_wrap(void **state)
{
    (void)state;
    static const double a[] = {0, 16, 255}, b[] = {1, 16, 255};
    pw_case_t sub = BINARY(CDNN_PW_SUB, U8, U8, U8, 3, a, b);
    expect_int(&sub, (int64_t[]){255, 0, 0});
    pw_case_t mul = BINARY(CDNN_PW_MUL, U8, U8, U8, 3, a, b);
    expect_int(&mul, (int64_t[]){0, 0, 1}); /* 256 -> 0, 65025 -> 1 */
}

static void test_division_truncates(void **state)
{
    (void)state;
    static const double u8a[] = {12, 23, 255, 0}, u8b[] = {23, 12, 2, 7};
    pw_case_t u8 = BINARY(CDNN_PW_DIV, U8, U8, U8, 4, u8a, u8b);
    expect_int(&u8, (int64_t[]){0, 1, 127, 0});
    /* Into a float output the quotient is still the integer one. */
    pw_case_t u8f = BINARY(CDNN_PW_DIV, U8, U8, F32, 4, u8a, u8b);
    expect_int(&u8f, (int64_t[]){0, 1, 127, 0});
    static const double a[] = {-7, 7, -7, 7, -1, 1}, b[] = {2, -2, -2, 2, 2, -2};
    pw_case_t i32 = BINARY(CDNN_PW_DIV, I32, I32, I32, 6, a, b);
    expect_int(&i32, (int64_t[]){-3, -3, 3, 3, 0, 0});
    pw_case_t i8 = BINARY(CDNN_PW_DIV, I8, I8, I8, 6, a, b);
    expect_int(&i8, (int64_t[]){-3, -3, 3, 3, 0, 0});
}

static void test_division_by_zero_is_zero(void **state)
{
    (void)state;
    static const double a[] = {5, -5, 0, 2147483647, -2147483648.0}, b[] = {0, 0, 0, 0, 0};
    pw_case_t i32 = BINARY(CDNN_PW_DIV, I32, I32, I32, 5, a, b);
    expect_int(&i32, (int64_t[]){0, 0, 0, 0, 0});
    static const double u[] = {5, 0, 255};
    pw_case_t u8 = BINARY(CDNN_PW_DIV, U8, U8, U8, 3, u, b);
    expect_int(&u8, (int64_t[]){0, 0, 0});
    static const double r[] = {0, 1, -1, 2, -3};
    pw_case_t rec = UNARY(CDNN_PW_RECIPROCAL, I32, I32, 5, r);
    expect_int(&rec, (int64_t[]){0, 1, -1, 0, 0});
    /* A float division by zero is IEEE's. */
    static const double fa[] = {1, -1, 0}, fb[] = {0, 0, 0};
    pw_case_t f = BINARY(CDNN_PW_DIV, F32, F32, F64, 3, fa, fb);
    unsigned char out[MAX_N * 8];
    OK(run_case(&f, "cpu:reference", out));
    double y[3];
    memcpy(y, out, sizeof y);
    assert_true(isinf(y[0]) && y[0] > 0);
    assert_true(isinf(y[1]) && y[1] < 0);
    assert_true(isnan(y[2]));
}

static void test_int32_min_max_wrap(void **state)
{
    (void)state;
    static const double a[] = {2147483647, -2147483648.0, -2147483648.0, -1},
                        b[] = {1, -1, -1, -1};
    pw_case_t add = BINARY(CDNN_PW_ADD, I32, I32, I32, 4, a, b);
    expect_int(&add, (int64_t[]){INT32_MIN, INT32_MAX, INT32_MAX, -2});
    pw_case_t div = BINARY(CDNN_PW_DIV, I32, I32, I32, 4, a, b);
    expect_int(&div, (int64_t[]){INT32_MAX, INT32_MIN, INT32_MIN, 1});
    pw_case_t mul = BINARY(CDNN_PW_MUL, I32, I32, I32, 4, a, b);
    expect_int(&mul, (int64_t[]){INT32_MAX, INT32_MIN, INT32_MIN, 1});
    static const double m[] = {-2147483648.0, -1, 2147483647};
    pw_case_t neg = UNARY(CDNN_PW_NEG, I32, I32, 3, m);
    expect_int(&neg, (int64_t[]){INT32_MIN, 1, -INT32_MAX});
    pw_case_t abs = UNARY(CDNN_PW_ABS, I32, I32, 3, m);
    expect_int(&abs, (int64_t[]){INT32_MIN, 1, INT32_MAX});
    static const double i8[] = {-128, 127, -1};
    pw_case_t neg8 = UNARY(CDNN_PW_NEG, I8, I8, 3, i8);
    expect_int(&neg8, (int64_t[]){-128, -127, 1});
}

static void test_int64_beyond_2_53(void **state)
{
    (void)state;
    static const int64_t a[] = {((int64_t)1 << 53) + 1, INT64_MAX, INT64_MIN, INT64_MIN, -1};
    static const int64_t b[] = {0, 1, -1, 1, 0};
    pw_case_t add = {.mode = CDNN_PW_ADD, .in_type = {T(I64), T(I64)},
                     .out_type = T(I64), .n = 5, .in_int = {a, b}};
    expect_int(&add, (int64_t[]){((int64_t)1 << 53) + 1, INT64_MIN, INT64_MAX,
                                 INT64_MIN + 1, -1});
    pw_case_t div = add;
    div.mode = CDNN_PW_DIV;
    expect_int(&div, (int64_t[]){0, INT64_MAX, INT64_MIN, INT64_MIN, 0});
    static const int64_t c[] = {(int64_t)1 << 53, INT64_MAX - 1, INT64_MIN, 0, -1};
    pw_case_t eq = {.mode = CDNN_PW_CMP_EQ, .in_type = {T(I64), T(I64)},
                    .out_type = T(BOOL), .n = 5, .in_int = {a, c}};
    expect_int(&eq, (int64_t[]){0, 0, 1, 0, 1});
    pw_case_t gt = eq;
    gt.mode = CDNN_PW_CMP_GT;
    expect_int(&gt, (int64_t[]){1, 1, 0, 0, 0});
    /* i64 -> f64 rounds to nearest even: 2^53 + 1 -> 2^53. */
    pw_case_t cast = {.mode = CDNN_PW_IDENTITY, .in_type = {T(I64)},
                      .out_type = T(F64), .n = 1, .in_int = {a}};
    expect_double(&cast, (double[]){0x1p53});
}

static void test_float_to_int_truncates(void **state)
{
    (void)state;
    static const double a[] = {2.7, -2.7, 0.5, -0.5, 2147483647.5, -1e10, NAN, INFINITY};
    pw_case_t i32 = UNARY(CDNN_PW_IDENTITY, F64, I32, 8, a);
    expect_int(&i32, (int64_t[]){2, -2, 0, 0, INT32_MAX, INT32_MIN, 0, INT32_MAX});
    pw_case_t f32 = UNARY(CDNN_PW_IDENTITY, F32, I32, 8, a);
    /* 2147483647.5 is 2^31 in f32: beyond the range, saturated. */
    expect_int(&f32, (int64_t[]){2, -2, 0, 0, INT32_MAX, INT32_MIN, 0, INT32_MAX});
    static const double b[] = {300.5, -1.5, 255.9, -0.9, NAN, -INFINITY};
    pw_case_t u8 = UNARY(CDNN_PW_IDENTITY, F32, U8, 6, b);
    expect_int(&u8, (int64_t[]){255, 0, 255, 0, 0, 0});
    static const double c[] = {0x1p63, -0x1p63, 0x1p62, -INFINITY, 9007199254740992.0};
    pw_case_t i64 = UNARY(CDNN_PW_IDENTITY, F64, I64, 5, c);
    expect_int(&i64, (int64_t[]){INT64_MAX, INT64_MIN, (int64_t)1 << 62, INT64_MIN,
                                 (int64_t)1 << 53});
    /* The arithmetic happens in float, then the conversion: 1.5 + 1.4. */
    static const double x[] = {1.5, -1.5}, y[] = {1.4, -1.4};
    pw_case_t add = BINARY(CDNN_PW_ADD, F32, F32, I32, 2, x, y);
    expect_int(&add, (int64_t[]){2, -2});
}

static void test_int_to_int_wraps(void **state)
{
    (void)state;
    static const double a[] = {300, -1, 256, -129, 127};
    pw_case_t u8 = UNARY(CDNN_PW_IDENTITY, I32, U8, 5, a);
    expect_int(&u8, (int64_t[]){44, 255, 0, 127, 127});
    pw_case_t i8 = UNARY(CDNN_PW_IDENTITY, I32, I8, 5, a);
    expect_int(&i8, (int64_t[]){44, -1, 0, 127, 127});
    pw_case_t b = UNARY(CDNN_PW_IDENTITY, I32, BOOL, 5, a);
    expect_int(&b, (int64_t[]){1, 1, 1, 1, 1});
    static const int64_t big[] = {((int64_t)1 << 32) + 5, -((int64_t)1 << 32) - 1};
    pw_case_t narrow = {.mode = CDNN_PW_IDENTITY, .in_type = {T(I64)},
                        .out_type = T(I32), .n = 2, .in_int = {big}};
    expect_int(&narrow, (int64_t[]){5, -1});
}

static void test_int_pow_and_fma(void **state)
{
    (void)state;
    static const double a[] = {3, 2, 2, -1, 0, 1, -2}, b[] = {4, 31, -1, -3, -1, -5, 3};
    pw_case_t pow32 = BINARY(CDNN_PW_POW, I32, I32, I32, 7, a, b);
    expect_int(&pow32, (int64_t[]){81, INT32_MIN, 0, -1, 0, 1, -8});
    static const double x[] = {16, 200}, y[] = {16, 2}, z[] = {1, 100};
    pw_case_t fma = {.mode = CDNN_PW_FMA, .in_type = {T(U8), T(U8), T(U8)},
                     .out_type = T(U8), .n = 2, .in = {x, y, z}};
    expect_int(&fma, (int64_t[]){1, 244}); /* 257 -> 1, 500 -> 244 */
}

static void test_int_select_and_max(void **state)
{
    (void)state;
    static const int64_t cond[] = {1, 0}, a[] = {((int64_t)1 << 53) + 1, 0},
                         b[] = {0, -((int64_t)1 << 53) - 1};
    pw_case_t sel = {.mode = CDNN_PW_SELECT, .in_type = {T(BOOL), T(I64), T(I64)},
                     .out_type = T(I64), .n = 2, .in_int = {cond, a, b}};
    expect_int(&sel, (int64_t[]){((int64_t)1 << 53) + 1, -((int64_t)1 << 53) - 1});
    static const int64_t p[] = {((int64_t)1 << 53) + 1, INT64_MIN},
                         q[] = {(int64_t)1 << 53, INT64_MAX};
    pw_case_t max = {.mode = CDNN_PW_MAX, .in_type = {T(I64), T(I64)},
                     .out_type = T(I64), .n = 2, .in_int = {p, q}};
    expect_int(&max, (int64_t[]){((int64_t)1 << 53) + 1, INT64_MAX});
}

/* An integer node's transcendental modes compute in double, then convert
 * as a float does: truncated. */
static void test_int_sqrt_truncates(void **state)
{
    (void)state;
    static const double a[] = {10, 99, 0};
    pw_case_t c = UNARY(CDNN_PW_SQRT, I32, I32, 3, a);
    expect_int(&c, (int64_t[]){3, 9, 0});
}

/* An i32 scalar of 2.7 holds 2, as memory would. */
static void test_int_scalar_truncates(void **state)
{
    (void)state;
    cdnn_graph_t *g;
    OK(cdnn_graph_create(&g));
    int64_t dims[1] = {2}, one[1] = {1};
    OK(cdnn_graph_tensor(g, 1, NULL, CDNN_DATA_TYPE_I32, 1, dims, NULL));
    OK(cdnn_graph_tensor(g, 2, NULL, CDNN_DATA_TYPE_I32, 1, one, NULL));
    OK(cdnn_graph_tensor_set_scalar(g, 2, 2.7));
    OK(cdnn_graph_tensor(g, 3, NULL, CDNN_DATA_TYPE_I32, 1, dims, NULL));
    cdnn_pointwise_attr_t attr;
    cdnn_pointwise_attr_init(&attr, CDNN_PW_MUL);
    OK(cdnn_graph_pointwise(g, "mul", &attr, 1, 2, NONE, 3));
    cdnn_handle_t *h;
    OK(cdnn_handle_create(&h, "cpu"));
    cdnn_build_options_t *o;
    OK(cdnn_build_options_create(&o));
    OK(cdnn_build_options_pin_engine(o, engine("cpu:reference")));
    OK(cdnn_graph_build(g, h, o));
    int32_t x[2] = {-7, 1 << 30}, y[2] = {0, 0};
    int64_t uids[2] = {1, 3};
    void *ptrs[2] = {x, y};
    OK(cdnn_graph_execute(g, h, 2, uids, ptrs, NULL));
    assert_int_equal(y[0], -14);
    assert_int_equal(y[1], INT32_MIN); /* 2^31 wraps */
    cdnn_build_options_destroy(o);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* f64 is computed in f64: 1 + 2^-52 and 2^53 + 1 - 1 survive, which they
 * would not in f32 (or in f64 computed through f32). */
static void test_f64_exact(void **state)
{
    (void)state;
    static const double a[] = {1.0, 0x1p53, 0.1, 1e300}, b[] = {0x1p-52, 2.0, 0.2, 1e300};
    pw_case_t add = BINARY(CDNN_PW_ADD, F64, F64, F64, 4, a, b);
    expect_double(&add, (double[]){1.0 + 0x1p-52, 0x1p53 + 2.0, 0.1 + 0.2, 2e300});
    pw_case_t mul = BINARY(CDNN_PW_MUL, F64, F64, F64, 4, a, b);
    expect_double(&mul, (double[]){0x1p-52, 0x1p54, 0.1 * 0.2, INFINITY});
    pw_case_t div = BINARY(CDNN_PW_DIV, F64, F64, F64, 4, a, b);
    expect_double(&div, (double[]){0x1p52, 0x1p52, 0.1 / 0.2, 1.0});
}

/* The fused engine computes in float: it declines integer division and
 * power, and takes (and agrees on) integer sums. */
static void test_fused_declines_integer_division(void **state)
{
    (void)state;
    static const double a[] = {12, 200}, b[] = {23, 100};
    pw_case_t div = BINARY(CDNN_PW_DIV, U8, U8, F32, 2, a, b);
    unsigned char out[MAX_N * 8];
    assert_int_equal(run_case(&div, "cpu:fused_pointwise", out), CDNN_STATUS_NOT_SUPPORTED);
    if (!strstr(cdnn_last_error(), "integer"))
        fail_msg("message \"%s\" lacks \"integer\"", cdnn_last_error());
    pw_case_t add = BINARY(CDNN_PW_ADD, U8, U8, F32, 2, a, b);
    OK(run_case(&add, "cpu:fused_pointwise", out));
    float y[2];
    memcpy(y, out, sizeof y);
    assert_true(y[0] == 35.0f && y[1] == 300.0f);
}

/* A reduction of x (n int64 values, stored as x_type) over its one dim
 * into one element of y_type, on cpu:reference; the result as int64. */
static int64_t reduce_int(cdnn_reduction_mode_t mode, cdnn_data_type_t x_type,
                          cdnn_data_type_t y_type, const int64_t *x, int64_t n)
{
    unsigned char in[MAX_N * 8], out[8];
    size_t size = cdnn_data_type_size(x_type);
    for (int64_t i = 0; i < n; i++)
        cdnn_store_element_int(x_type, in + i * size, x[i]);
    cdnn_graph_t *g;
    OK(cdnn_graph_create(&g));
    int64_t dims[1] = {n}, one[1] = {1};
    OK(cdnn_graph_tensor(g, 1, NULL, x_type, 1, dims, NULL));
    OK(cdnn_graph_tensor(g, 2, NULL, y_type, 1, one, NULL));
    OK(cdnn_graph_reduction(g, "r", mode, 1, 2));
    cdnn_handle_t *h;
    OK(cdnn_handle_create(&h, "cpu"));
    cdnn_build_options_t *o;
    OK(cdnn_build_options_create(&o));
    OK(cdnn_build_options_pin_engine(o, engine("cpu:reference")));
    OK(cdnn_graph_build(g, h, o));
    int64_t uids[2] = {1, 2};
    void *ptrs[2] = {in, out};
    OK(cdnn_graph_execute(g, h, 2, uids, ptrs, NULL));
    cdnn_build_options_destroy(o);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    return cdnn_load_element_int(y_type, out);
}

static void test_int_reductions(void **state)
{
    (void)state;
    static const int64_t u8[] = {200, 100, 255};
    assert_int_equal(reduce_int(CDNN_REDUCE_ADD, T(U8), T(U8), u8, 3), 43); /* 555 */
    assert_int_equal(reduce_int(CDNN_REDUCE_ADD, T(U8), T(I32), u8, 3), 555);
    assert_int_equal(reduce_int(CDNN_REDUCE_MUL, T(U8), T(I64), u8, 3), 5100000);
    assert_int_equal(reduce_int(CDNN_REDUCE_MUL, T(U8), T(U8), u8, 3), 5100000 % 256);
    static const int64_t big[] = {((int64_t)1 << 53) + 1, 0, 2};
    assert_true(reduce_int(CDNN_REDUCE_ADD, T(I64), T(I64), big, 3) == ((int64_t)1 << 53) + 3);
    static const int64_t ends[] = {INT64_MIN, INT64_MAX, -1};
    assert_true(reduce_int(CDNN_REDUCE_MIN, T(I64), T(I64), ends, 3) == INT64_MIN);
    assert_true(reduce_int(CDNN_REDUCE_MAX, T(I64), T(I64), ends, 3) == INT64_MAX);
    assert_true(reduce_int(CDNN_REDUCE_ADD, T(I64), T(I64), ends, 3) == -2); /* wraps */
    static const int64_t i8[] = {-128, 5, -1};
    assert_int_equal(reduce_int(CDNN_REDUCE_AMAX, T(I8), T(I32), i8, 3), 128);
    assert_int_equal(reduce_int(CDNN_REDUCE_AMAX, T(I8), T(I8), i8, 3), -128); /* wraps */
    assert_int_equal(reduce_int(CDNN_REDUCE_NORM1, T(I8), T(I32), i8, 3), 134);
    assert_int_equal(reduce_int(CDNN_REDUCE_MIN, T(I8), T(I8), i8, 3), -128);
    /* avg and norm2 in double, then converted: truncated into integers */
    static const int64_t avg[] = {1, 2, -7};
    assert_int_equal(reduce_int(CDNN_REDUCE_AVG, T(I32), T(I32), avg, 2), 1);   /* 1.5 */
    assert_int_equal(reduce_int(CDNN_REDUCE_AVG, T(I32), T(I32), avg + 1, 2), -2); /* -2.5 */
    static const int64_t norm[] = {3, 4};
    assert_int_equal(reduce_int(CDNN_REDUCE_NORM2, T(I32), T(I32), norm, 2), 5);
    static const int64_t bools[] = {1, 0, 1, 1};
    assert_int_equal(reduce_int(CDNN_REDUCE_ADD, T(BOOL), T(I32), bools, 4), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u8_add_wraps),
        cmocka_unit_test(test_u8_sub_and_mul_wrap),
        cmocka_unit_test(test_division_truncates),
        cmocka_unit_test(test_division_by_zero_is_zero),
        cmocka_unit_test(test_int32_min_max_wrap),
        cmocka_unit_test(test_int64_beyond_2_53),
        cmocka_unit_test(test_float_to_int_truncates),
        cmocka_unit_test(test_int_to_int_wraps),
        cmocka_unit_test(test_int_pow_and_fma),
        cmocka_unit_test(test_int_select_and_max),
        cmocka_unit_test(test_int_sqrt_truncates),
        cmocka_unit_test(test_int_scalar_truncates),
        cmocka_unit_test(test_f64_exact),
        cmocka_unit_test(test_fused_declines_integer_division),
        cmocka_unit_test(test_int_reductions),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
