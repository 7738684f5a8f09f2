#include "kp_graphs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define OK(call)                                                                      \
    do {                                                                              \
        cdnn_status_t st_ = (call);                                                   \
        if (st_ != CDNN_STATUS_SUCCESS)                                               \
            fail_msg("%s: %s: %s", #call, cdnn_status_string(st_), cdnn_last_error());  \
    } while (0)

/* ---- pointwise graphs ----------------------------------------------------------------- */

static void declare(cdnn_graph_t *g, int64_t uid, cdnn_data_type_t type, int32_t rank,
                    const int64_t *dims, const int64_t *strides)
{
    OK(cdnn_graph_tensor(g, uid, NULL, type, rank, dims, strides));
}

/* A virtual f32 intermediate, shape inferred. */
static int64_t intermediate(cdnn_graph_t *g, int64_t uid)
{
    OK(cdnn_graph_tensor(g, uid, NULL, CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    OK(cdnn_graph_tensor_set_virtual(g, uid));
    return uid;
}

static void node(cdnn_graph_t *g, cdnn_pointwise_mode_t mode, int64_t a, int64_t b,
                 int64_t c, int64_t y)
{
    cdnn_pointwise_attr_t attr;
    cdnn_pointwise_attr_init(&attr, mode);
    OK(cdnn_graph_pointwise(g, NULL, &attr, a, b, c, y));
}

static cdnn_graph_t *new_graph(void)
{
    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_create(&g));
    return g;
}

/* gelu(a + b) * 2, b a broadcast row, 2 a pass-by-value scalar. */
static cdnn_graph_t *gelu_of_sum_times_two(const void *spec)
{
    (void)spec;
    const int64_t x[] = {4, 33}, row[] = {1, 33}, one[] = {1, 1};
    cdnn_graph_t *g = new_graph();
    declare(g, 1, CDNN_DATA_TYPE_F32, 2, x, NULL);
    declare(g, 2, CDNN_DATA_TYPE_F32, 2, row, NULL);
    declare(g, 3, CDNN_DATA_TYPE_F32, 2, one, NULL);
    OK(cdnn_graph_tensor_set_scalar(g, 3, 2.0));
    declare(g, 4, CDNN_DATA_TYPE_F32, 2, x, NULL);
    node(g, CDNN_PW_ADD, 1, 2, CDNN_UID_NONE, intermediate(g, 10));
    node(g, CDNN_PW_GELU_FWD, 10, CDNN_UID_NONE, CDNN_UID_NONE, intermediate(g, 11));
    node(g, CDNN_PW_MUL, 11, 3, CDNN_UID_NONE, 4);
    return g;
}

/* exp(-x), f16 in, f32 out. */
static cdnn_graph_t *exp_of_negative_f16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {3, 5, 7};
    cdnn_graph_t *g = new_graph();
    declare(g, 1, CDNN_DATA_TYPE_F16, 3, x, NULL);
    declare(g, 2, CDNN_DATA_TYPE_F32, 3, x, NULL);
    node(g, CDNN_PW_NEG, 1, CDNN_UID_NONE, CDNN_UID_NONE, intermediate(g, 10));
    node(g, CDNN_PW_EXP, 10, CDNN_UID_NONE, CDNN_UID_NONE, 2);
    return g;
}

/* a * b + c in bf16, c a row broadcast over the batch and rows. */
static cdnn_graph_t *fma_bf16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {2, 8, 8}, row[] = {1, 1, 8};
    cdnn_graph_t *g = new_graph();
    declare(g, 1, CDNN_DATA_TYPE_BF16, 3, x, NULL);
    declare(g, 2, CDNN_DATA_TYPE_BF16, 3, x, NULL);
    declare(g, 3, CDNN_DATA_TYPE_BF16, 3, row, NULL);
    declare(g, 4, CDNN_DATA_TYPE_BF16, 3, x, NULL);
    node(g, CDNN_PW_FMA, 1, 2, 3, 4);
    return g;
}

/* silu of a column-major input. */
static cdnn_graph_t *silu_transposed(const void *spec)
{
    (void)spec;
    const int64_t x[] = {16, 9}, column_major[] = {1, 16};
    cdnn_graph_t *g = new_graph();
    declare(g, 1, CDNN_DATA_TYPE_F32, 2, x, column_major);
    declare(g, 2, CDNN_DATA_TYPE_F32, 2, x, NULL);
    node(g, CDNN_PW_SWISH_FWD, 1, CDNN_UID_NONE, CDNN_UID_NONE, 2);
    return g;
}

/* tanh(x) - max(y, z): one input read twice by the tree, three inputs. */
static cdnn_graph_t *tanh_minus_max(const void *spec)
{
    (void)spec;
    const int64_t x[] = {5, 6, 7};
    cdnn_graph_t *g = new_graph();
    for (int64_t uid = 1; uid <= 4; uid++)
        declare(g, uid, CDNN_DATA_TYPE_F32, 3, x, NULL);
    node(g, CDNN_PW_TANH_FWD, 1, CDNN_UID_NONE, CDNN_UID_NONE, intermediate(g, 10));
    node(g, CDNN_PW_MAX, 2, 3, CDNN_UID_NONE, intermediate(g, 11));
    node(g, CDNN_PW_SUB, 10, 11, CDNN_UID_NONE, 4);
    return g;
}

const kp_graph_case_t kp_pointwise_cases[] = {
    {"gelu(a + b) * 2", gelu_of_sum_times_two},
    {"exp(-x) f16 to f32", exp_of_negative_f16},
    {"a * b + c bf16", fma_bf16},
    {"silu column-major", silu_transposed},
    {"tanh(x) - max(y, z)", tanh_minus_max},
};

/* ---- norm graphs ---------------------------------------------------------------------- */

/* Layer-norm over the last dim, with every output: mean and inv_variance. */
static cdnn_graph_t *layernorm_every_output(const void *spec)
{
    (void)spec;
    const int64_t x[] = {4, 6, 32}, row[] = {1, 1, 32}, stats[] = {4, 6, 1};
    cdnn_graph_t *g = new_graph();
    declare(g, 1, CDNN_DATA_TYPE_F32, 3, x, NULL);
    declare(g, 2, CDNN_DATA_TYPE_F32, 3, row, NULL);
    declare(g, 3, CDNN_DATA_TYPE_F32, 3, row, NULL);
    declare(g, 4, CDNN_DATA_TYPE_F32, 3, x, NULL);
    declare(g, 5, CDNN_DATA_TYPE_F32, 3, stats, NULL);
    declare(g, 6, CDNN_DATA_TYPE_F32, 3, stats, NULL);
    OK(cdnn_graph_layernorm(g, "ln", 1e-5, 1, 2, 3, 4, 5, 6));
    return g;
}

/* Layer-norm over the last two dims, bf16, no statistics. */
static cdnn_graph_t *layernorm_two_dims_bf16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {2, 5, 8}, window[] = {1, 5, 8};
    cdnn_graph_t *g = new_graph();
    declare(g, 1, CDNN_DATA_TYPE_BF16, 3, x, NULL);
    declare(g, 2, CDNN_DATA_TYPE_BF16, 3, window, NULL);
    declare(g, 3, CDNN_DATA_TYPE_BF16, 3, window, NULL);
    declare(g, 4, CDNN_DATA_TYPE_BF16, 3, x, NULL);
    OK(cdnn_graph_layernorm(g, "ln", 1e-5, 1, 2, 3, 4, CDNN_UID_NONE, CDNN_UID_NONE));
    return g;
}

/* RMS-norm of f16 rows, without bias, with inv_rms. */
static cdnn_graph_t *rmsnorm_f16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {3, 64}, row[] = {1, 64}, stats[] = {3, 1};
    cdnn_graph_t *g = new_graph();
    declare(g, 1, CDNN_DATA_TYPE_F16, 2, x, NULL);
    declare(g, 2, CDNN_DATA_TYPE_F16, 2, row, NULL);
    declare(g, 3, CDNN_DATA_TYPE_F16, 2, x, NULL);
    declare(g, 4, CDNN_DATA_TYPE_F32, 2, stats, NULL);
    OK(cdnn_graph_rmsnorm(g, "rms", 1e-6, 1, 2, CDNN_UID_NONE, 3, 4));
    return g;
}

/* Layer-norm of a column-major x over its strided last dim. */
static cdnn_graph_t *layernorm_strided(const void *spec)
{
    (void)spec;
    const int64_t x[] = {8, 16}, column_major[] = {1, 8}, row[] = {1, 16};
    cdnn_graph_t *g = new_graph();
    declare(g, 1, CDNN_DATA_TYPE_F32, 2, x, column_major);
    declare(g, 2, CDNN_DATA_TYPE_F32, 2, row, NULL);
    declare(g, 3, CDNN_DATA_TYPE_F32, 2, row, NULL);
    declare(g, 4, CDNN_DATA_TYPE_F32, 2, x, NULL);
    OK(cdnn_graph_layernorm(g, "ln", 1e-5, 1, 2, 3, 4, CDNN_UID_NONE, CDNN_UID_NONE));
    return g;
}

const kp_graph_case_t kp_norm_cases[] = {
    {"layer-norm with statistics", layernorm_every_output},
    {"layer-norm over two dims bf16", layernorm_two_dims_bf16},
    {"rms-norm f16", rmsnorm_f16},
    {"layer-norm column-major", layernorm_strided},
};

/* ---- reductions ------------------------------------------------------------------------- */

static cdnn_graph_t *reduction(cdnn_reduction_mode_t mode, cdnn_data_type_t x_type,
                               cdnn_data_type_t y_type, int32_t rank, const int64_t *x,
                               const int64_t *y)
{
    cdnn_graph_t *g = new_graph();
    declare(g, 1, x_type, rank, x, NULL);
    declare(g, 2, y_type, rank, y, NULL);
    OK(cdnn_graph_reduction(g, "reduce", mode, 1, 2));
    return g;
}

static cdnn_graph_t *sum_last(const void *spec)
{
    (void)spec;
    const int64_t x[] = {4, 6, 33}, y[] = {4, 6, 1};
    return reduction(CDNN_REDUCE_ADD, CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_F32, 3, x, y);
}

static cdnn_graph_t *max_middle(const void *spec)
{
    (void)spec;
    const int64_t x[] = {3, 17, 5}, y[] = {3, 1, 5};
    return reduction(CDNN_REDUCE_MAX, CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_F32, 3, x, y);
}

static cdnn_graph_t *average_two_dims_f16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {2, 8, 16}, y[] = {2, 1, 1};
    return reduction(CDNN_REDUCE_AVG, CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_F32, 3, x, y);
}

static cdnn_graph_t *norm2_first_bf16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {9, 7}, y[] = {1, 7};
    return reduction(CDNN_REDUCE_NORM2, CDNN_DATA_TYPE_BF16, CDNN_DATA_TYPE_BF16, 2, x, y);
}

/* Over a first dim long enough that the CUDA column kernels split it over
 * blocks (partial results in their workspace). */
static cdnn_graph_t *sum_long_first(const void *spec)
{
    (void)spec;
    const int64_t x[] = {2000, 70}, y[] = {1, 70};
    return reduction(CDNN_REDUCE_ADD, CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_F32, 2, x, y);
}

/* Over the first of three dims: the other two fold into one run of outputs. */
static cdnn_graph_t *average_first_of_three_f16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {64, 5, 40}, y[] = {1, 5, 40};
    return reduction(CDNN_REDUCE_AVG, CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_F32, 3, x, y);
}

/* The leading-axis cases last (kp_reduction_leading_axis_cases of them). */
const kp_graph_case_t kp_reduction_cases[] = {
    {"sum over the last dim", sum_last},
    {"max over a middle dim", max_middle},
    {"f16 average over two dims", average_two_dims_f16},
    {"bf16 norm2 over the first dim", norm2_first_bf16},
    {"f32 sum over a long first dim", sum_long_first},
    {"f16 average over the first of three dims", average_first_of_three_f16},
};
const int kp_reduction_leading_axis_cases = 3;

/* ---- softmax ------------------------------------------------------------------------------ */

static cdnn_graph_t *softmax(int log, int32_t axis, cdnn_data_type_t type, int32_t rank,
                             const int64_t *dims, const int64_t *x_strides)
{
    cdnn_graph_t *g = new_graph();
    declare(g, 1, type, rank, dims, x_strides);
    declare(g, 2, type, rank, dims, NULL);
    OK(log ? cdnn_graph_log_softmax(g, "log_softmax", axis, 1, 2)
           : cdnn_graph_softmax(g, "softmax", axis, 1, 2));
    return g;
}

static cdnn_graph_t *softmax_short_rows(const void *spec)
{
    (void)spec;
    const int64_t x[] = {4, 6, 33};
    return softmax(0, -1, CDNN_DATA_TYPE_F32, 3, x, NULL);
}

/* Rows longer than the buffered kernel keeps (4096): it recomputes. */
static cdnn_graph_t *log_softmax_long_rows(const void *spec)
{
    (void)spec;
    const int64_t x[] = {3, 5000};
    return softmax(1, 1, CDNN_DATA_TYPE_F32, 2, x, NULL);
}

/* Over a middle axis: rows strided, the others not one stride. */
static cdnn_graph_t *softmax_middle_axis_f16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {2, 7, 130};
    return softmax(0, 1, CDNN_DATA_TYPE_F16, 3, x, NULL);
}

/* A column-major x over its strided last dim into a packed y. */
static cdnn_graph_t *log_softmax_transposed_bf16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {16, 64}, column_major[] = {1, 16};
    return softmax(1, -1, CDNN_DATA_TYPE_BF16, 2, x, column_major);
}

/* Rows of 40 padded to 48 in x. */
static cdnn_graph_t *softmax_padded_rows(const void *spec)
{
    (void)spec;
    const int64_t x[] = {5, 40}, padded[] = {48, 1};
    return softmax(0, -1, CDNN_DATA_TYPE_F32, 2, x, padded);
}

static cdnn_graph_t *log_softmax_f16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {8, 1024};
    return softmax(1, -1, CDNN_DATA_TYPE_F16, 2, x, NULL);
}

/* Over the first axis: columns of a row-major x. */
static cdnn_graph_t *softmax_first_axis_bf16(const void *spec)
{
    (void)spec;
    const int64_t x[] = {9, 7};
    return softmax(0, 0, CDNN_DATA_TYPE_BF16, 2, x, NULL);
}

/* Rows of one element: every y is 1 (log: 0). */
static cdnn_graph_t *log_softmax_rows_of_one(const void *spec)
{
    (void)spec;
    const int64_t x[] = {6, 1};
    return softmax(1, -1, CDNN_DATA_TYPE_F32, 2, x, NULL);
}

const kp_graph_case_t kp_softmax_cases[] = {
    {"softmax f32 4x6x33", softmax_short_rows},
    {"log-softmax f32 rows of 5000", log_softmax_long_rows},
    {"softmax f16 over the middle axis", softmax_middle_axis_f16},
    {"log-softmax bf16 column-major", log_softmax_transposed_bf16},
    {"softmax f32 padded rows", softmax_padded_rows},
    {"log-softmax f16 rows of 1024", log_softmax_f16},
    {"softmax bf16 over the first axis", softmax_first_axis_bf16},
    {"log-softmax rows of one", log_softmax_rows_of_one},
};

const int kp_softmax_case_count = sizeof kp_softmax_cases / sizeof *kp_softmax_cases;
const int kp_reduction_case_count = sizeof kp_reduction_cases / sizeof *kp_reduction_cases;
const int kp_pointwise_case_count = sizeof kp_pointwise_cases / sizeof *kp_pointwise_cases;
const int kp_norm_case_count = sizeof kp_norm_cases / sizeof *kp_norm_cases;
