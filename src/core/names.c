/*
 * names.c -- names, sizes and defaults of the API's enumerations.  Ops are
 * named by the op table (graph/ops.c), with everything else about them.
 */
#include <math.h>
#include <string.h>

#include <cdnn/provider.h>

#define STR_(x) #x
#define STR(x) STR_(x)

const char *cdnn_version(void)
{
    return STR(CDNN_VERSION_MAJOR) "." STR(CDNN_VERSION_MINOR) "." STR(
        CDNN_VERSION_PATCH);
}

static const struct {
    const char *name;
    size_t size;
} data_types[CDNN_DATA_TYPE_COUNT] = {
    [CDNN_DATA_TYPE_UNSET] = {"unset", 0}, [CDNN_DATA_TYPE_F32] = {"f32", 4},
    [CDNN_DATA_TYPE_F16] = {"f16", 2},     [CDNN_DATA_TYPE_BF16] = {"bf16", 2},
    [CDNN_DATA_TYPE_F64] = {"f64", 8},     [CDNN_DATA_TYPE_I32] = {"i32", 4},
    [CDNN_DATA_TYPE_I64] = {"i64", 8},     [CDNN_DATA_TYPE_I8] = {"i8", 1},
    [CDNN_DATA_TYPE_U8] = {"u8", 1},       [CDNN_DATA_TYPE_BOOL] = {"bool", 1},
};

const char *cdnn_data_type_name(cdnn_data_type_t type)
{
    if ((unsigned)type >= CDNN_DATA_TYPE_COUNT)
        return "invalid";
    return data_types[type].name;
}

size_t cdnn_data_type_size(cdnn_data_type_t type)
{
    if ((unsigned)type >= CDNN_DATA_TYPE_COUNT)
        return 0;
    return data_types[type].size;
}

static const struct {
    const char *name;
    int32_t arity;
} pointwise_modes[CDNN_PW_MODE_COUNT] = {
    [CDNN_PW_ADD] = {"add", 2},
    [CDNN_PW_SUB] = {"sub", 2},
    [CDNN_PW_MUL] = {"mul", 2},
    [CDNN_PW_DIV] = {"div", 2},
    [CDNN_PW_MAX] = {"max", 2},
    [CDNN_PW_MIN] = {"min", 2},
    [CDNN_PW_POW] = {"pow", 2},
    [CDNN_PW_IDENTITY] = {"identity", 1},
    [CDNN_PW_NEG] = {"neg", 1},
    [CDNN_PW_ABS] = {"abs", 1},
    [CDNN_PW_EXP] = {"exp", 1},
    [CDNN_PW_LOG] = {"log", 1},
    [CDNN_PW_SQRT] = {"sqrt", 1},
    [CDNN_PW_RSQRT] = {"rsqrt", 1},
    [CDNN_PW_RECIPROCAL] = {"reciprocal", 1},
    [CDNN_PW_SIN] = {"sin", 1},
    [CDNN_PW_COS] = {"cos", 1},
    [CDNN_PW_ERF] = {"erf", 1},
    [CDNN_PW_FLOOR] = {"floor", 1},
    [CDNN_PW_CEIL] = {"ceil", 1},
    [CDNN_PW_CMP_EQ] = {"cmp_eq", 2},
    [CDNN_PW_CMP_NE] = {"cmp_ne", 2},
    [CDNN_PW_CMP_GT] = {"cmp_gt", 2},
    [CDNN_PW_CMP_GE] = {"cmp_ge", 2},
    [CDNN_PW_CMP_LT] = {"cmp_lt", 2},
    [CDNN_PW_CMP_LE] = {"cmp_le", 2},
    [CDNN_PW_LOGICAL_AND] = {"logical_and", 2},
    [CDNN_PW_LOGICAL_OR] = {"logical_or", 2},
    [CDNN_PW_LOGICAL_NOT] = {"logical_not", 1},
    [CDNN_PW_SELECT] = {"select", 3},
    [CDNN_PW_FMA] = {"fma", 3},
    [CDNN_PW_RELU_FWD] = {"relu_fwd", 1},
    [CDNN_PW_GELU_FWD] = {"gelu_fwd", 1},
    [CDNN_PW_GELU_TANH_FWD] = {"gelu_tanh_fwd", 1},
    [CDNN_PW_SIGMOID_FWD] = {"sigmoid_fwd", 1},
    [CDNN_PW_SWISH_FWD] = {"swish_fwd", 1},
    [CDNN_PW_TANH_FWD] = {"tanh_fwd", 1},
    [CDNN_PW_ELU_FWD] = {"elu_fwd", 1},
    [CDNN_PW_SOFTPLUS_FWD] = {"softplus_fwd", 1},
    [CDNN_PW_RELU_BWD] = {"relu_bwd", 2},
    [CDNN_PW_GELU_BWD] = {"gelu_bwd", 2},
    [CDNN_PW_GELU_TANH_BWD] = {"gelu_tanh_bwd", 2},
    [CDNN_PW_SIGMOID_BWD] = {"sigmoid_bwd", 2},
    [CDNN_PW_SWISH_BWD] = {"swish_bwd", 2},
    [CDNN_PW_TANH_BWD] = {"tanh_bwd", 2},
    [CDNN_PW_ELU_BWD] = {"elu_bwd", 2},
    [CDNN_PW_SOFTPLUS_BWD] = {"softplus_bwd", 2},
    [CDNN_PW_ROUND] = {"round", 1},
    [CDNN_PW_FMOD] = {"fmod", 2},
    [CDNN_PW_REMAINDER] = {"remainder", 2},
    [CDNN_PW_ASIN] = {"asin", 1},
    [CDNN_PW_ACOS] = {"acos", 1},
    [CDNN_PW_ATAN] = {"atan", 1},
    [CDNN_PW_SINH] = {"sinh", 1},
    [CDNN_PW_COSH] = {"cosh", 1},
    [CDNN_PW_TAN] = {"tan", 1},
    [CDNN_PW_ASINH] = {"asinh", 1},
    [CDNN_PW_ACOSH] = {"acosh", 1},
    [CDNN_PW_ATANH] = {"atanh", 1},
    [CDNN_PW_ATAN2] = {"atan2", 2},
};

const char *cdnn_pointwise_mode_name(cdnn_pointwise_mode_t mode)
{
    if ((unsigned)mode >= CDNN_PW_MODE_COUNT)
        return "invalid";
    return pointwise_modes[mode].name;
}

int32_t cdnn_pointwise_arity(cdnn_pointwise_mode_t mode)
{
    if ((unsigned)mode >= CDNN_PW_MODE_COUNT)
        return 0;
    return pointwise_modes[mode].arity;
}

static const char *const reduction_modes[CDNN_REDUCE_MODE_COUNT] = {
    [CDNN_REDUCE_ADD] = "add",   [CDNN_REDUCE_MUL] = "mul",
    [CDNN_REDUCE_MIN] = "min",   [CDNN_REDUCE_MAX] = "max",
    [CDNN_REDUCE_AMAX] = "amax", [CDNN_REDUCE_AVG] = "avg",
    [CDNN_REDUCE_NORM1] = "norm1", [CDNN_REDUCE_NORM2] = "norm2",
};

const char *cdnn_reduction_mode_name(cdnn_reduction_mode_t mode)
{
    if ((unsigned)mode >= CDNN_REDUCE_MODE_COUNT)
        return "invalid";
    return reduction_modes[mode];
}

void cdnn_conv_attr_init(cdnn_conv_attr_t *a, int32_t spatial_dims)
{
    memset(a, 0, sizeof *a);
    a->spatial_dims = spatial_dims;
    for (int i = 0; i < 3; i++) {
        a->stride[i] = 1;
        a->dilation[i] = 1;
    }
    a->groups = 1;
}

void cdnn_pointwise_attr_init(cdnn_pointwise_attr_t *a,
                              cdnn_pointwise_mode_t mode)
{
    memset(a, 0, sizeof *a);
    a->mode = mode;
    a->relu_upper_clip = INFINITY;
    a->elu_alpha = 1;
    a->softplus_beta = 1;
    a->swish_beta = 1;
}

uint64_t cdnn_engine_id_from_name(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 offset basis */
    for (const unsigned char *p = (const unsigned char *)(name ? name : ""); *p;
         p++) {
        h ^= *p;
        h *= 0x100000001b3ull; /* FNV 64 prime */
    }
    return h;
}
