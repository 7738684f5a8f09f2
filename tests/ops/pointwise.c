/*
 * pointwise.c -- every pointwise mode (unary, binary, ternary, activation
 * forwards and backwards, comparisons, logic, select), non-default
 * activation attributes, broadcasting, strides, scalars, and chains of
 * pointwise nodes joined by virtual tensors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

enum { PW_A = 1, PW_B = 2, PW_C = 3, PW_Y = 4, PW_T1 = 5, PW_T2 = 6,
       PW_Y2 = 7 };

static const int64_t pw_dims[4] = {2, 3, 4, 5};

/* Inputs each mode is defined (and not too flat or steep) on. */
static h_dist_t pw_dist(cdnn_pointwise_mode_t mode, int input)
{
    switch (mode) {
    case CDNN_PW_LOG:
    case CDNN_PW_SQRT:
    case CDNN_PW_RSQRT:
    case CDNN_PW_RECIPROCAL:
        return H_POSITIVE;
    case CDNN_PW_POW:
        return input == 0 ? H_POSITIVE : H_UNIFORM;
    case CDNN_PW_DIV:
        return input == 0 ? H_UNIFORM : H_POSITIVE;
    case CDNN_PW_SELECT:
        return input == 0 ? H_MASK : H_UNIFORM;
    case CDNN_PW_FMOD:
    case CDNN_PW_REMAINDER:
        return input == 0 ? H_WIDE : H_POSITIVE;
    case CDNN_PW_ACOSH:
        return H_ABOVE_ONE;
    case CDNN_PW_ATANH:
    case CDNN_PW_ASIN:
    case CDNN_PW_ACOS:
        return H_INNER;
    default:
        break;
    }
    if (mode >= CDNN_PW_ROUND)
        return H_WIDE;
    if (mode >= CDNN_PW_CMP_EQ && mode <= CDNN_PW_LOGICAL_NOT)
        return H_COARSE;
    if (mode >= CDNN_PW_RELU_BWD)
        return input == 0 ? H_UNIFORM : H_WIDE;
    return H_WIDE;
}

/* What cpu:fused_pointwise reads and writes; bool only as an output. */
static int pw_fused_type(cdnn_data_type_t t, int output)
{
    return t == CDNN_DATA_TYPE_F32 || t == CDNN_DATA_TYPE_F16 ||
           t == CDNN_DATA_TYPE_BF16 || (output && t == CDNN_DATA_TYPE_BOOL);
}

static void pw_expect_fused(h_case_t *c, cdnn_data_type_t in,
                            cdnn_data_type_t out)
{
    if (pw_fused_type(in, 0) && pw_fused_type(out, 1))
        h_expect(c, H_FUSED_POINTWISE);
}

/* One node y = mode(inputs) over dims in types (in, out); layouts per
 * operand; fused_pointwise is expected for its types. */
typedef struct pw_spec {
    const cdnn_pointwise_attr_t *attr;
    cdnn_data_type_t in, out;
    int32_t rank;
    const int64_t *dims;
    h_layout_t in_layout, out_layout;
} pw_spec_t;

static void pw_declare(h_case_t *c, const pw_spec_t *p)
{
    static const int64_t uids[3] = {PW_A, PW_B, PW_C};
    int32_t arity = cdnn_pointwise_arity(p->attr->mode);
    for (int32_t i = 0; i < arity; i++) {
        cdnn_data_type_t t = p->in;
        if (p->attr->mode == CDNN_PW_SELECT && i == 0)
            t = CDNN_DATA_TYPE_BOOL;
        h_input(c, uids[i], t, p->rank, p->dims, p->in_layout,
                pw_dist(p->attr->mode, i));
    }
    h_output(c, PW_Y, p->out, p->rank, p->dims, p->out_layout);
    h_call(c, cdnn_graph_pointwise(c->graph, "pw", p->attr, PW_A,
                                   arity > 1 ? PW_B : CDNN_UID_NONE,
                                   arity > 2 ? PW_C : CDNN_UID_NONE, PW_Y),
           "cdnn_graph_pointwise");
}

static void pw_case(const pw_spec_t *p, const char *note)
{
    h_case_t c;
    h_begin(&c, H_ELEMENTWISE, "pointwise %s %s->%s in %s out %s%s",
            cdnn_pointwise_mode_name(p->attr->mode),
            cdnn_data_type_name(p->in), cdnn_data_type_name(p->out),
            h_layout_name(p->in_layout), h_layout_name(p->out_layout), note);
    pw_declare(&c, p);
    pw_expect_fused(&c, p->in, p->out);
    h_run(&c);
}

void test_pointwise_modes(void **state)
{
    (void)state;
    for (int m = 0; m < CDNN_PW_MODE_COUNT; m++) {
        cdnn_pointwise_attr_t a;
        cdnn_pointwise_attr_init(&a, (cdnn_pointwise_mode_t)m);
        for (int t = 0; t < ops_float_type_count; t++) {
            cdnn_data_type_t type = ops_float_types[t];
            pw_spec_t p = {&a, type, type, 4, pw_dims, H_PACKED, H_PACKED};
            pw_case(&p, "");
        }
    }
    h_done();
}

/* Non-default activation attributes, forward and backward. */
static void pw_attribute_cases(cdnn_pointwise_mode_t fwd,
                               cdnn_pointwise_mode_t bwd,
                               const cdnn_pointwise_attr_t *base)
{
    static const int64_t dims[2] = {7, 33};
    for (int t = 0; t < ops_float_type_count; t++) {
        cdnn_data_type_t type = ops_float_types[t];
        cdnn_pointwise_attr_t a = *base;
        a.mode = fwd;
        pw_spec_t p = {&a, type, type, 2, dims, H_PACKED, H_PACKED};
        pw_case(&p, " non-default attributes");
        a.mode = bwd;
        pw_case(&p, " non-default attributes");
    }
}

void test_pointwise_attributes(void **state)
{
    (void)state;
    cdnn_pointwise_attr_t a;
    cdnn_pointwise_attr_init(&a, CDNN_PW_RELU_FWD);
    a.relu_lower_clip_slope = 0.1; /* leaky */
    pw_attribute_cases(CDNN_PW_RELU_FWD, CDNN_PW_RELU_BWD, &a);
    a.relu_lower_clip = -0.5; /* clipped on both sides, with a slope */
    a.relu_upper_clip = 1.25;
    a.relu_lower_clip_slope = 0.2;
    pw_attribute_cases(CDNN_PW_RELU_FWD, CDNN_PW_RELU_BWD, &a);
    cdnn_pointwise_attr_init(&a, CDNN_PW_ELU_FWD);
    a.elu_alpha = 0.5;
    pw_attribute_cases(CDNN_PW_ELU_FWD, CDNN_PW_ELU_BWD, &a);
    cdnn_pointwise_attr_init(&a, CDNN_PW_SOFTPLUS_FWD);
    a.softplus_beta = 2.0;
    pw_attribute_cases(CDNN_PW_SOFTPLUS_FWD, CDNN_PW_SOFTPLUS_BWD, &a);
    cdnn_pointwise_attr_init(&a, CDNN_PW_SWISH_FWD);
    a.swish_beta = 1.5;
    pw_attribute_cases(CDNN_PW_SWISH_FWD, CDNN_PW_SWISH_BWD, &a);
    h_done();
}

/* Comparisons and logic into bool; select on a bool condition is in the
 * modes test. */
void test_pointwise_comparisons(void **state)
{
    (void)state;
    for (int m = CDNN_PW_CMP_EQ; m <= CDNN_PW_LOGICAL_NOT; m++) {
        cdnn_pointwise_attr_t a;
        cdnn_pointwise_attr_init(&a, (cdnn_pointwise_mode_t)m);
        for (int t = 0; t < ops_float_type_count; t++) {
            pw_spec_t p = {&a, ops_float_types[t], CDNN_DATA_TYPE_BOOL, 4,
                           pw_dims, H_PACKED, H_PADDED};
            pw_case(&p, "");
        }
    }
    h_done();
}

/* Modes worth running in every layout: one of each arity and kind. */
static const cdnn_pointwise_mode_t pw_layout_modes[] = {
    CDNN_PW_ADD,     CDNN_PW_SUB,      CDNN_PW_MAX,       CDNN_PW_FMA,
    CDNN_PW_SELECT,  CDNN_PW_RELU_FWD, CDNN_PW_GELU_BWD,  CDNN_PW_EXP,
    CDNN_PW_CMP_GT,
};

static const h_layout_t pw_layouts[][2] = {
    {H_CHANNELS_LAST, H_CHANNELS_LAST}, {H_TRANSPOSED, H_PACKED},
    {H_PADDED, H_PADDED},               {H_PACKED, H_OUTER_SWAP},
    {H_SWAP12, H_PADDED},
};

void test_pointwise_layouts(void **state)
{
    (void)state;
    static const int64_t big[2] = {64, 1027};
    static const int64_t one[1] = {37};
    for (size_t m = 0; m < sizeof pw_layout_modes / sizeof *pw_layout_modes;
         m++) {
        cdnn_pointwise_attr_t a;
        cdnn_pointwise_attr_init(&a, pw_layout_modes[m]);
        for (int t = 0; t < ops_float_type_count; t++) {
            cdnn_data_type_t type = ops_float_types[t];
            for (size_t l = 0; l < sizeof pw_layouts / sizeof *pw_layouts;
                 l++) {
                pw_spec_t p = {&a, type, type, 4, pw_dims, pw_layouts[l][0],
                               pw_layouts[l][1]};
                pw_case(&p, "");
            }
            pw_spec_t p_big = {&a, type, type, 2, big, H_PACKED, H_PACKED};
            pw_case(&p_big, " large");
            pw_spec_t p_one = {&a, type, type, 1, one, H_PACKED, H_PADDED};
            pw_case(&p_one, " rank 1");
        }
    }
    h_done();
}

/* ---- broadcasting and scalars ---- */

static void pw_broadcast_case(cdnn_data_type_t type, h_layout_t out_layout)
{
    static const int64_t bias[4] = {1, 3, 1, 1};
    static const int64_t row[4] = {1, 1, 1, 5};
    static const int64_t rep[4] = {2, 3, 4, 5}, rep_strides[4] = {0, 1, 0, 0};
    cdnn_pointwise_attr_t fma;
    cdnn_pointwise_attr_init(&fma, CDNN_PW_FMA);
    h_case_t c;
    h_begin(&c, H_ELEMENTWISE, "pointwise fma %s broadcast [1,C,1,1] * "
            "[1,1,1,W] + stride-0 [N,C,H,W], out %s", cdnn_data_type_name(type),
            h_layout_name(out_layout));
    h_input(&c, PW_A, type, 4, bias, H_PACKED, H_UNIFORM);
    h_input(&c, PW_B, type, 4, row, H_PADDED, H_UNIFORM);
    h_input_strided(&c, PW_C, type, 4, rep, rep_strides, H_UNIFORM);
    h_output(&c, PW_Y, type, 4, pw_dims, out_layout);
    h_call(&c, cdnn_graph_pointwise(c.graph, "fma", &fma, PW_A, PW_B, PW_C,
                                    PW_Y), "cdnn_graph_pointwise");
    pw_expect_fused(&c, type, type);
    h_run(&c);
}

static void pw_scalar_case(cdnn_data_type_t type)
{
    cdnn_pointwise_attr_t mul;
    cdnn_pointwise_attr_init(&mul, CDNN_PW_MUL);
    h_case_t c;
    h_begin(&c, H_ELEMENTWISE, "pointwise mul %s by pass-by-value 0.375",
            cdnn_data_type_name(type));
    h_input(&c, PW_A, type, 4, pw_dims, H_CHANNELS_LAST, H_WIDE);
    h_scalar(&c, PW_B, type, 4, 0.375);
    h_output(&c, PW_Y, type, 0, NULL, H_PACKED);
    h_call(&c, cdnn_graph_pointwise(c.graph, "mul", &mul, PW_A, PW_B,
                                    CDNN_UID_NONE, PW_Y),
           "cdnn_graph_pointwise");
    pw_expect_fused(&c, type, type);
    h_run(&c);
}

/* ---- chains ---- */

static void pw_node(h_case_t *c, cdnn_pointwise_mode_t mode, int64_t a,
                    int64_t b, int64_t cc, int64_t y)
{
    cdnn_pointwise_attr_t attr;
    cdnn_pointwise_attr_init(&attr, mode);
    h_call(c, cdnn_graph_pointwise(c->graph, cdnn_pointwise_mode_name(mode),
                                   &attr, a, b, cc, y),
           "cdnn_graph_pointwise");
}

/* y = relu(a * b + c), intermediates virtual of the graph's type. */
static void pw_chain_mul_add_relu(cdnn_data_type_t type, h_layout_t layout,
                                  cdnn_data_type_t inter)
{
    h_case_t c;
    h_begin(&c, H_ELEMENTWISE, "chain relu(a*b+c) %s %s intermediate %s",
            cdnn_data_type_name(type), h_layout_name(layout),
            cdnn_data_type_name(inter));
    h_graph_types(&c, type, inter, CDNN_DATA_TYPE_F32);
    h_input(&c, PW_A, type, 4, pw_dims, layout, H_WIDE);
    h_input(&c, PW_B, type, 4, pw_dims, layout, H_WIDE);
    h_input(&c, PW_C, type, 4, pw_dims, layout, H_WIDE);
    h_virtual(&c, PW_T1, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_virtual(&c, PW_T2, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_output(&c, PW_Y, type, 4, pw_dims, layout);
    pw_node(&c, CDNN_PW_MUL, PW_A, PW_B, CDNN_UID_NONE, PW_T1);
    pw_node(&c, CDNN_PW_ADD, PW_T1, PW_C, CDNN_UID_NONE, PW_T2);
    pw_node(&c, CDNN_PW_RELU_FWD, PW_T2, CDNN_UID_NONE, CDNN_UID_NONE, PW_Y);
    pw_expect_fused(&c, type, type);
    h_run(&c);
}

/* y = select(a > b, a, b) through a virtual bool, plus a second output
 * y2 = exp(y) * c that reads a non-virtual intermediate. */
static void pw_chain_select_two_outputs(cdnn_data_type_t type)
{
    static const int64_t bias[4] = {1, 3, 1, 1};
    h_case_t c;
    h_begin(&c, H_ELEMENTWISE, "chain select(a>b,a,b), exp(.)*c %s",
            cdnn_data_type_name(type));
    h_input(&c, PW_A, type, 4, pw_dims, H_PACKED, H_UNIFORM);
    h_input(&c, PW_B, type, 4, pw_dims, H_TRANSPOSED, H_UNIFORM);
    h_input(&c, PW_C, type, 4, bias, H_PACKED, H_UNIFORM);
    h_virtual(&c, PW_T1, CDNN_DATA_TYPE_BOOL, 4, pw_dims);
    h_virtual(&c, PW_T2, CDNN_DATA_TYPE_UNSET, 4, pw_dims);
    h_output(&c, PW_Y, type, 4, pw_dims, H_PADDED);
    h_output(&c, PW_Y2, type, 0, NULL, H_PACKED);
    pw_node(&c, CDNN_PW_CMP_GT, PW_A, PW_B, CDNN_UID_NONE, PW_T1);
    pw_node(&c, CDNN_PW_SELECT, PW_T1, PW_A, PW_B, PW_Y);
    pw_node(&c, CDNN_PW_EXP, PW_Y, CDNN_UID_NONE, CDNN_UID_NONE, PW_T2);
    pw_node(&c, CDNN_PW_MUL, PW_T2, PW_C, CDNN_UID_NONE, PW_Y2);
    pw_expect_fused(&c, type, type);
    h_run(&c);
}

/* y = gelu_tanh(a) * sigmoid(b) - tanh(a): one input feeds two nodes. */
static void pw_chain_shared_input(cdnn_data_type_t type)
{
    h_case_t c;
    h_begin(&c, H_ELEMENTWISE, "chain gelu_tanh(a)*sigmoid(b)-tanh(a) %s",
            cdnn_data_type_name(type));
    h_input(&c, PW_A, type, 4, pw_dims, H_CHANNELS_LAST, H_WIDE);
    h_input(&c, PW_B, type, 4, pw_dims, H_PACKED, H_WIDE);
    h_virtual(&c, PW_T1, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_virtual(&c, PW_T2, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_virtual(&c, PW_C, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_virtual(&c, PW_Y2, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_output(&c, PW_Y, type, 0, NULL, H_PACKED);
    pw_node(&c, CDNN_PW_GELU_TANH_FWD, PW_A, CDNN_UID_NONE, CDNN_UID_NONE,
            PW_T1);
    pw_node(&c, CDNN_PW_SIGMOID_FWD, PW_B, CDNN_UID_NONE, CDNN_UID_NONE,
            PW_T2);
    pw_node(&c, CDNN_PW_MUL, PW_T1, PW_T2, CDNN_UID_NONE, PW_C);
    pw_node(&c, CDNN_PW_TANH_FWD, PW_A, CDNN_UID_NONE, CDNN_UID_NONE, PW_Y2);
    pw_node(&c, CDNN_PW_SUB, PW_C, PW_Y2, CDNN_UID_NONE, PW_Y);
    pw_expect_fused(&c, type, type);
    h_run(&c);
}

void test_pointwise_chains(void **state)
{
    (void)state;
    for (int t = 0; t < ops_float_type_count; t++) {
        cdnn_data_type_t type = ops_float_types[t];
        pw_broadcast_case(type, H_PACKED);
        pw_broadcast_case(type, H_CHANNELS_LAST);
        pw_scalar_case(type);
        pw_chain_mul_add_relu(type, H_PACKED, CDNN_DATA_TYPE_F32);
        pw_chain_mul_add_relu(type, H_CHANNELS_LAST, type);
        pw_chain_mul_add_relu(type, H_PADDED, CDNN_DATA_TYPE_F32);
        pw_chain_select_two_outputs(type);
        pw_chain_shared_input(type);
    }
    h_done();
}
