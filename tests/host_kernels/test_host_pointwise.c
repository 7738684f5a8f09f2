/*
 * test_host_pointwise.c -- every pointwise code object this CPU runs:
 *   - each unary op over a dense sweep of its domain against libm in f64,
 *     with the relative error the ABI states (printed, per object), and
 *     the special values (inf, NaN, 0, negative);
 *   - programs with broadcasting (zero strides), transposed and padded
 *     layouts, rank 0, rows longer than a block, eight inputs, a full
 *     stack, f32/f16/bf16 in and out, in place, several threads, against
 *     the same program run in f64;
 *   - malformed programs and bad arguments refused before anything is
 *     written.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hk_util.h"

#define MAX_OBJECTS 8

static hk_object_t objects[MAX_OBJECTS];
static int object_count;

static int setup(void **state)
{
    (void)state;
    int skipped;
    object_count = hk_load_objects("pointwise_", objects, MAX_OBJECTS,
                                   &skipped);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    hk_unload_objects(objects, object_count);
    return 0;
}

/* ------------------------------------------------------------------------
 * The reference: the program in f64
 * ------------------------------------------------------------------------ */

static double ref_unary(int32_t op, double x)
{
    switch (op) {
    case CDNN_HOST_PW_NEG: return -x;
    case CDNN_HOST_PW_ABS: return fabs(x);
    case CDNN_HOST_PW_EXP: return exp(x);
    case CDNN_HOST_PW_LOG: return log(x);
    case CDNN_HOST_PW_SQRT: return sqrt(x);
    case CDNN_HOST_PW_RSQRT: return 1.0 / sqrt(x);
    case CDNN_HOST_PW_RECIPROCAL: return 1.0 / x;
    case CDNN_HOST_PW_RELU: return isnan(x) ? x : (x > 0 ? x : 0);
    case CDNN_HOST_PW_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case CDNN_HOST_PW_GELU_TANH: {
        double u = sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
        return x / (1.0 + exp(-2.0 * u)); /* = 0.5 x (1 + tanh u) */
    }
    case CDNN_HOST_PW_SILU: return x / (1.0 + exp(-x));
    case CDNN_HOST_PW_SIGMOID: return 1.0 / (1.0 + exp(-x));
    default: return tanh(x);
    }
}

static double ref_binary(int32_t op, double x, double y)
{
    switch (op) {
    case CDNN_HOST_PW_ADD: return x + y;
    case CDNN_HOST_PW_SUB: return x - y;
    case CDNN_HOST_PW_MUL: return x * y;
    case CDNN_HOST_PW_DIV: return x / y;
    case CDNN_HOST_PW_MAX: return fmax(x, y);
    default: return fmin(x, y);
    }
}

/* The program at one element; *magnitude gets the largest |value| seen
 * on the stack (the scale of the f32 roundings along the way). */
static double ref_program(const cdnn_host_pointwise_args_t *a,
                          const double *inputs, double *magnitude)
{
    double stack[CDNN_HOST_PW_MAX_STACK];
    int top = -1;
    *magnitude = 0;
    for (int32_t i = 0; i < a->instr_count; i++) {
        const cdnn_host_pw_instr_t *in = &a->program[i];
        if (in->op == CDNN_HOST_PW_PUSH_INPUT)
            stack[++top] = inputs[in->input];
        else if (in->op == CDNN_HOST_PW_PUSH_CONST)
            stack[++top] = in->constant;
        else if (in->op >= CDNN_HOST_PW_ADD) {
            top--;
            stack[top] = ref_binary(in->op, stack[top], stack[top + 1]);
        } else {
            stack[top] = ref_unary(in->op, stack[top]);
        }
        if (fabs(stack[top]) > *magnitude)
            *magnitude = fabs(stack[top]);
    }
    return stack[0];
}

/* ------------------------------------------------------------------------
 * Running a program
 * ------------------------------------------------------------------------ */

static int32_t run(const hk_object_t *o, cdnn_host_pointwise_args_t *a)
{
    cdnn_host_pointwise_fn entry = (cdnn_host_pointwise_fn)o->entry;
    size_t need;
    int32_t status = entry(a, &need);
    if (status != CDNN_HOST_OK)
        return status;
    a->workspace = need ? malloc(need) : NULL;
    a->workspace_size = need;
    status = entry(a, NULL);
    free(a->workspace);
    a->workspace = NULL;
    return status;
}

static void set_program(cdnn_host_pointwise_args_t *a, const int32_t *ops,
                        int count)
{
    /* ops: PUSH_INPUT and PUSH_CONST take the next entry as their operand
     * (an input index, or a constant in hundredths) */
    a->instr_count = 0;
    for (int i = 0; i < count; i++) {
        cdnn_host_pw_instr_t *in = &a->program[a->instr_count++];
        memset(in, 0, sizeof *in);
        in->op = ops[i];
        if (ops[i] == CDNN_HOST_PW_PUSH_INPUT)
            in->input = ops[++i];
        else if (ops[i] == CDNN_HOST_PW_PUSH_CONST)
            in->constant = (float)ops[++i] / 100.0f;
    }
}

/* ------------------------------------------------------------------------
 * Unary ops over their domains
 * ------------------------------------------------------------------------ */

typedef struct sweep {
    int32_t op;
    const char *name;
    double lo, hi;    /* the domain swept (log-spaced when lo > 0) */
    double rel;       /* the ABI's relative error */
} sweep_t;

static const sweep_t sweeps[] = {
    {CDNN_HOST_PW_EXP, "exp", -87.33, 88.7, 2e-7},
    {CDNN_HOST_PW_LOG, "log", 1e-44, 3e38, 2e-7},
    {CDNN_HOST_PW_SIGMOID, "sigmoid", -80.0, 80.0, 5e-7},
    {CDNN_HOST_PW_SILU, "silu", -80.0, 80.0, 5e-7},
    {CDNN_HOST_PW_TANH, "tanh", -12.0, 12.0, 5e-7},
    {CDNN_HOST_PW_GELU, "gelu", -12.0, 12.0, 1e-6},
    {CDNN_HOST_PW_GELU_TANH, "gelu_tanh", -12.0, 12.0, 1e-6},
    {CDNN_HOST_PW_SQRT, "sqrt", 1e-30, 1e30, 1.2e-7},
    {CDNN_HOST_PW_RSQRT, "rsqrt", 1e-30, 1e30, 1.2e-7},
    {CDNN_HOST_PW_RECIPROCAL, "reciprocal", -1e30, 1e30, 1.2e-7},
    {CDNN_HOST_PW_RELU, "relu", -10.0, 10.0, 0.0},
    {CDNN_HOST_PW_ABS, "abs", -10.0, 10.0, 0.0},
    {CDNN_HOST_PW_NEG, "neg", -10.0, 10.0, 0.0},
};

#define SWEEP_POINTS 200003 /* odd: the last block has a tail */

static void fill_sweep(const sweep_t *s, float *x)
{
    for (int64_t i = 0; i < SWEEP_POINTS; i++) {
        double t = (double)i / (SWEEP_POINTS - 1);
        x[i] = s->lo > 0 ? (float)exp(log(s->lo) + t * (log(s->hi) - log(s->lo)))
                         : (float)(s->lo + t * (s->hi - s->lo));
    }
}

static void unary_args(cdnn_host_pointwise_args_t *a, int32_t op, float *x,
                       float *y, int64_t n)
{
    memset(a, 0, sizeof *a);
    a->rank = 1;
    a->dims[0] = n;
    a->input_count = 1;
    a->inputs[0] = (cdnn_host_tensor_t){.data = x, .type = CDNN_HOST_F32,
                                        .strides = {1}};
    a->output = (cdnn_host_tensor_t){.data = y, .type = CDNN_HOST_F32,
                                     .strides = {1}};
    int32_t program[] = {CDNN_HOST_PW_PUSH_INPUT, 0, op};
    set_program(a, program, 3);
}

/* gelu_tanh(x) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): in the
 * negative tail the result is ~x exp(2u), whose relative error is the
 * absolute error of 2u, i.e. a few f32 roundings of |2u| (u and its
 * constants are f32).  The ABI states this; the test allows 4 of them. */
static double gelu_tanh_conditioning(double x)
{
    double two_u = 2.0 * sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    return x < 0 ? 4.0 * 0x1p-24 * fabs(two_u) : 0.0;
}

/* Near f32's smallest normal, results are compared absolutely: a few
 * subnormal steps, and what exp's flush of subnormals to 0 loses (below
 * FLT_MIN), both times |x| for the activations that multiply by x. */
static double subnormal_tol(double x)
{
    return (4.0 * 0x1p-149 + 0x1p-126) * (fabs(x) > 1.0 ? fabs(x) : 1.0);
}

static void sweep_one(const hk_object_t *o, const sweep_t *s, float *x,
                      float *y)
{
    fill_sweep(s, x);
    cdnn_host_pointwise_args_t a;
    unary_args(&a, s->op, x, y, SWEEP_POINTS);
    assert_int_equal(run(o, &a), CDNN_HOST_OK);
    hk_check_t check;
    hk_check_begin(&check);
    for (int64_t i = 0; i < SWEEP_POINTS; i++) {
        double want = ref_unary(s->op, x[i]);
        /* the result's own rounding to f32 (2^-24) plus the approximation */
        double tol = (s->rel + 0x1p-24) * fabs(want) + subnormal_tol(x[i]);
        if (s->op == CDNN_HOST_PW_GELU_TANH) /* see gelu_tanh_conditioning */
            tol += gelu_tanh_conditioning(x[i]) * fabs(want);
        hk_check_value(&check, y[i], want, tol, s->name, i);
    }
    char label[96];
    snprintf(label, sizeof label, "%s.%s %s", o->name, o->level, s->name);
    printf("  %-28s %-10s max relative error %.3g\n", label, s->name,
           check.max_rel);
    hk_check_end(&check, label);
}

static void test_unary_accuracy(void **state)
{
    (void)state;
    float *x = malloc(SWEEP_POINTS * sizeof *x);
    float *y = malloc(SWEEP_POINTS * sizeof *y);
    for (int o = 0; o < object_count; o++)
        for (size_t s = 0; s < sizeof sweeps / sizeof sweeps[0]; s++)
            sweep_one(&objects[o], &sweeps[s], x, y);
    free(x);
    free(y);
}

static void expect_special(const hk_object_t *o, int32_t op, float x,
                           float want)
{
    float y = 12345.0f;
    cdnn_host_pointwise_args_t a;
    unary_args(&a, op, &x, &y, 1);
    assert_int_equal(run(o, &a), CDNN_HOST_OK);
    if (isnan(want) ? !isnan(y) : y != want)
        fail_msg("%s.%s op %d of %g: got %g, want %g", o->name, o->level, op,
                 (double)x, (double)y, (double)want);
}

static void test_special_values(void **state)
{
    (void)state;
    const float inf = INFINITY, nan = NAN;
    for (int i = 0; i < object_count; i++) {
        const hk_object_t *o = &objects[i];
        expect_special(o, CDNN_HOST_PW_EXP, -inf, 0.0f);
        expect_special(o, CDNN_HOST_PW_EXP, inf, inf);
        expect_special(o, CDNN_HOST_PW_EXP, 89.0f, inf);
        expect_special(o, CDNN_HOST_PW_EXP, -200.0f, 0.0f);
        expect_special(o, CDNN_HOST_PW_EXP, -87.5f, 0.0f); /* subnormal: 0 */
        expect_special(o, CDNN_HOST_PW_SIGMOID, -90.0f, 0.0f);
        expect_special(o, CDNN_HOST_PW_EXP, nan, nan);
        expect_special(o, CDNN_HOST_PW_EXP, 0.0f, 1.0f);
        expect_special(o, CDNN_HOST_PW_LOG, 0.0f, -inf);
        expect_special(o, CDNN_HOST_PW_LOG, -1.0f, nan);
        expect_special(o, CDNN_HOST_PW_LOG, inf, inf);
        expect_special(o, CDNN_HOST_PW_LOG, 1.0f, 0.0f);
        expect_special(o, CDNN_HOST_PW_LOG, nan, nan);
        expect_special(o, CDNN_HOST_PW_TANH, inf, 1.0f);
        expect_special(o, CDNN_HOST_PW_TANH, -inf, -1.0f);
        expect_special(o, CDNN_HOST_PW_TANH, nan, nan);
        expect_special(o, CDNN_HOST_PW_SIGMOID, inf, 1.0f);
        expect_special(o, CDNN_HOST_PW_SIGMOID, -inf, 0.0f);
        expect_special(o, CDNN_HOST_PW_GELU, inf, inf);
        expect_special(o, CDNN_HOST_PW_GELU, 0.0f, 0.0f);
        expect_special(o, CDNN_HOST_PW_RELU, nan, nan);
        expect_special(o, CDNN_HOST_PW_RELU, -0.5f, 0.0f);
        expect_special(o, CDNN_HOST_PW_SQRT, -1.0f, nan);
    }
}

/* ------------------------------------------------------------------------
 * Programs over broadcast tensors
 * ------------------------------------------------------------------------ */

typedef struct pw_case {
    const char *name;
    int32_t rank;
    int64_t dims[CDNN_HOST_MAX_RANK];
    int32_t input_count;
    /* per input: which dims it has (1) or broadcasts (0), and its type */
    int has[CDNN_HOST_PW_MAX_INPUTS][CDNN_HOST_MAX_RANK];
    int32_t types[CDNN_HOST_PW_MAX_INPUTS];
    int32_t out_type;
    int transpose_out; /* the output's last two dims swapped in memory */
    int in_place;      /* the output is input 0 */
    int threads;
    int32_t program[2 * CDNN_HOST_PW_MAX_PROGRAM];
    int program_len;
} pw_case_t;

/* Strides of input i: packed over the dims it has, 0 over the others,
 * with one spare element per innermost line so nothing is contiguous by
 * accident. */
static void input_strides(const pw_case_t *c, int i, int64_t *strides)
{
    int64_t step = 1;
    for (int32_t d = c->rank - 1; d >= 0; d--) {
        strides[d] = c->has[i][d] ? step : 0;
        if (c->has[i][d])
            step *= c->dims[d] + (d == c->rank - 1 && i % 2);
    }
}

static void output_strides(const pw_case_t *c, int64_t *strides)
{
    hk_packed_strides(c->rank, c->dims, strides);
    if (c->transpose_out && c->rank >= 2) {
        int32_t r = c->rank;
        strides[r - 1] = c->dims[r - 2];
        strides[r - 2] = 1;
    }
}

static double magnitude_tol(int32_t out_type, double want, double magnitude)
{
    return hk_type_eps(out_type) * fabs(want) + 4e-6 * (fabs(want) + magnitude) +
           hk_type_tiny(out_type);
}

static void check_program(const pw_case_t *c, const cdnn_host_pointwise_args_t *a,
                          const hk_buffer_t *in, const double *saved0,
                          const hk_buffer_t *out, const char *label)
{
    int64_t count = 1, idx[CDNN_HOST_MAX_RANK];
    for (int32_t d = 0; d < c->rank; d++)
        count *= c->dims[d];
    hk_check_t check;
    hk_check_begin(&check);
    for (int64_t e = 0; e < count; e++) {
        int64_t rest = e;
        for (int32_t d = c->rank - 1; d >= 0; d--) {
            idx[d] = rest % c->dims[d];
            rest /= c->dims[d];
        }
        double values[CDNN_HOST_PW_MAX_INPUTS], magnitude;
        for (int i = 0; i < c->input_count; i++)
            values[i] = i == 0 && saved0 ? saved0[e] : hk_get(&in[i], idx);
        double want = ref_program(a, values, &magnitude);
        hk_check_value(&check, hk_get(out, idx), want,
                       magnitude_tol(c->out_type, want, magnitude), "y", e);
    }
    hk_check_end(&check, label);
}

static void run_program_case(const hk_object_t *o, const pw_case_t *c,
                             uint64_t seed)
{
    uint64_t rng = hk_rng_seed(seed);
    hk_buffer_t in[CDNN_HOST_PW_MAX_INPUTS], out;
    int64_t strides[CDNN_HOST_MAX_RANK] = {0};
    cdnn_host_pointwise_args_t a;
    memset(&a, 0, sizeof a);
    a.rank = c->rank;
    memcpy(a.dims, c->dims, sizeof a.dims);
    a.input_count = c->input_count;
    for (int i = 0; i < c->input_count; i++) {
        input_strides(c, i, strides);
        hk_buffer_init(&in[i], c->types[i], c->rank, c->dims, strides);
        hk_buffer_fill(&in[i], &rng, 0.1, 2.0);
        a.inputs[i] = in[i].t;
    }
    double *saved0 = NULL;
    if (c->in_place) {
        out = in[0];
        int64_t count = 1, idx[CDNN_HOST_MAX_RANK];
        for (int32_t d = 0; d < c->rank; d++)
            count *= c->dims[d];
        saved0 = malloc((size_t)count * sizeof *saved0 + 8);
        for (int64_t e = 0; e < count; e++) {
            int64_t rest = e;
            for (int32_t d = c->rank - 1; d >= 0; d--) {
                idx[d] = rest % c->dims[d];
                rest /= c->dims[d];
            }
            saved0[e] = hk_get(&in[0], idx);
        }
    } else {
        output_strides(c, strides);
        hk_buffer_init(&out, c->out_type, c->rank, c->dims, strides);
    }
    a.output = out.t;
    a.parallel.threads = c->threads;
    a.parallel.parallel_for = c->threads > 1 ? hk_parallel_for : NULL;
    set_program(&a, c->program, c->program_len);
    char label[160];
    snprintf(label, sizeof label, "%s.%s %s", o->name, o->level, c->name);
    int32_t status = run(o, &a);
    if (status != CDNN_HOST_OK)
        fail_msg("%s: status %d", label, status);
    check_program(c, &a, in, saved0, &out, label);
    free(saved0);
    for (int i = 0; i < c->input_count; i++)
        hk_buffer_free(&in[i]);
    if (!c->in_place)
        hk_buffer_free(&out);
}

enum { IN = CDNN_HOST_PW_PUSH_INPUT, K = CDNN_HOST_PW_PUSH_CONST };
#define F32 CDNN_HOST_F32
#define F16 CDNN_HOST_F16
#define BF16 CDNN_HOST_BF16

static const pw_case_t cases[] = {
    {"gelu(a + bias) * 2, bias over dim 1, f16 out", 3, {3, 5, 7}, 2,
     {{1, 1, 1}, {0, 1, 0}}, {F32, F32}, F16, 0, 0, 1,
     {IN, 0, IN, 1, CDNN_HOST_PW_ADD, CDNN_HOST_PW_GELU, K, 200,
      CDNN_HOST_PW_MUL}, 9},
    {"a * b + c, mixed types, transposed out", 2, {37, 29}, 3,
     {{1, 1}, {1, 1}, {1, 0}}, {BF16, F16, F32}, BF16, 1, 0, 3,
     {IN, 0, IN, 1, CDNN_HOST_PW_MUL, IN, 2, CDNN_HOST_PW_ADD}, 8},
    {"rank 0", 0, {0}, 2, {{0}, {0}}, {F32, F16}, F32, 0, 0, 1,
     {IN, 0, IN, 1, CDNN_HOST_PW_DIV}, 5},
    {"long rows (blocks and a tail), silu, 4 threads", 2, {7, 5001}, 1,
     {{1, 1}}, {F32}, F32, 0, 0, 4,
     {IN, 0, CDNN_HOST_PW_SILU}, 3},
    {"in place: a = log(a) - sqrt(a)", 2, {4, 300}, 1, {{1, 1}}, {F16}, F16,
     0, 1, 2,
     {IN, 0, CDNN_HOST_PW_LOG, IN, 0, CDNN_HOST_PW_SQRT, CDNN_HOST_PW_SUB},
     7},
    {"eight inputs, a full stack", 1, {33}, 8,
     {{1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}},
     {F32, F16, BF16, F32, F16, BF16, F32, F32}, F32, 0, 0, 1,
     {IN, 0, IN, 1, IN, 2, IN, 3, IN, 4, IN, 5, IN, 6, IN, 7,
      CDNN_HOST_PW_MAX, CDNN_HOST_PW_MIN, CDNN_HOST_PW_ADD, CDNN_HOST_PW_MUL,
      CDNN_HOST_PW_SUB, CDNN_HOST_PW_DIV, CDNN_HOST_PW_ADD}, 23},
    {"outer broadcast, exp tanh sigmoid rsqrt chain", 4, {2, 3, 4, 9}, 2,
     {{1, 0, 1, 1}, {0, 1, 0, 1}}, {F32, BF16}, F32, 0, 0, 2,
     {IN, 0, CDNN_HOST_PW_EXP, IN, 1, CDNN_HOST_PW_TANH, CDNN_HOST_PW_MUL,
      CDNN_HOST_PW_SIGMOID, CDNN_HOST_PW_RSQRT, CDNN_HOST_PW_RECIPROCAL,
      CDNN_HOST_PW_NEG, CDNN_HOST_PW_ABS, CDNN_HOST_PW_GELU_TANH,
      CDNN_HOST_PW_RELU}, 14},
    {"dims of 1 and merged dims", 5, {1, 4, 1, 6, 5}, 2,
     {{1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}}, {F32, F32}, F32, 0, 0, 1,
     {IN, 0, IN, 1, CDNN_HOST_PW_SUB}, 5},
};

static void test_programs(void **state)
{
    (void)state;
    for (int o = 0; o < object_count; o++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            run_program_case(&objects[o], &cases[c], (uint64_t)(o * 100 + c));
}

/* ------------------------------------------------------------------------
 * Refusals
 * ------------------------------------------------------------------------ */

static void expect_refused(const hk_object_t *o, cdnn_host_pointwise_args_t *a,
                           int32_t status, const char *why)
{
    cdnn_host_pointwise_fn entry = (cdnn_host_pointwise_fn)o->entry;
    size_t need;
    int32_t got = entry(a, &need);
    if (got != status)
        fail_msg("%s.%s: %s: status %d, want %d", o->name, o->level, why, got,
                 status);
}

static void test_refusals(void **state)
{
    (void)state;
    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    for (int i = 0; i < object_count; i++) {
        const hk_object_t *o = &objects[i];
        cdnn_host_pointwise_args_t a;
        unary_args(&a, CDNN_HOST_PW_EXP, x, y, 4);
        int32_t underflow[] = {IN, 0, CDNN_HOST_PW_ADD};
        set_program(&a, underflow, 3);
        expect_refused(o, &a, CDNN_HOST_BAD_PROGRAM, "pops an empty stack");
        int32_t two_left[] = {IN, 0, IN, 0};
        set_program(&a, two_left, 4);
        expect_refused(o, &a, CDNN_HOST_BAD_PROGRAM, "ends with two values");
        int32_t deep[18];
        for (int k = 0; k < 9; k++) {
            deep[2 * k] = IN;
            deep[2 * k + 1] = 0;
        }
        set_program(&a, deep, 18);
        expect_refused(o, &a, CDNN_HOST_BAD_PROGRAM, "nine values deep");
        int32_t bad_input[] = {IN, 1};
        set_program(&a, bad_input, 2);
        expect_refused(o, &a, CDNN_HOST_BAD_PROGRAM, "input 1 of 1");
        int32_t bad_op[] = {IN, 0, CDNN_HOST_PW_OP_COUNT};
        set_program(&a, bad_op, 3);
        expect_refused(o, &a, CDNN_HOST_BAD_PROGRAM, "an unknown op");
        a.instr_count = 0;
        expect_refused(o, &a, CDNN_HOST_BAD_PROGRAM, "no instruction");
        unary_args(&a, CDNN_HOST_PW_EXP, x, y, 4);
        a.output.type = 4;
        expect_refused(o, &a, CDNN_HOST_BAD_TYPE, "an f64 output");
        unary_args(&a, CDNN_HOST_PW_EXP, x, y, 4);
        a.rank = CDNN_HOST_MAX_RANK + 1;
        expect_refused(o, &a, CDNN_HOST_BAD_ARGS, "rank 9");
        /* a run with too small a workspace writes nothing */
        unary_args(&a, CDNN_HOST_PW_EXP, x, y, 4);
        cdnn_host_pointwise_fn entry = (cdnn_host_pointwise_fn)o->entry;
        size_t need;
        assert_int_equal(entry(&a, &need), CDNN_HOST_OK);
        a.workspace = malloc(need);
        a.workspace_size = need - 1;
        assert_int_equal(entry(&a, NULL), CDNN_HOST_WORKSPACE_TOO_SMALL);
        assert_true(y[0] == 0.0f && y[3] == 0.0f);
        free(a.workspace);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary_accuracy),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_programs),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
