/*
 * ops.c -- the op table (see ops.h), and the public calls that read it.
 */
#include "graph/ops.h"

#include <string.h>

#include "core/error.h"

_Static_assert(CDNN_NODE_MAX_INPUTS >= CDNN_NODE_MAX_OUTPUTS,
               "op_ports_t names outputs in an array of CDNN_NODE_MAX_INPUTS");

static int32_t pointwise_arity(const cdnn_node_attr_t *attr)
{
    return cdnn_pointwise_arity(attr->pointwise.mode);
}

/* Indexed by cdnn_op_t.  Ports are {required, count, {names}}.  Conv,
 * matmul and attention read their operands as one type; pointwise ops also
 * compute on integers and booleans. */
static const op_desc_t op_table[CDNN_OP_COUNT] = {
    [CDNN_OP_CONV_FWD] = {
        .name = "conv_fwd", .schema_name = "ConvFwd",
        .inputs = {2, 2, {"x", "w"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_CONV, .float_only = 1, .same_typed_inputs = 2,
        .shape_rule = shape_rule_conv_fwd},
    [CDNN_OP_CONV_BWD_DATA] = {
        .name = "conv_bwd_data", .schema_name = "ConvBwdData",
        .inputs = {2, 2, {"dy", "w"}}, .outputs = {1, 1, {"dx"}},
        .attr = OP_ATTR_CONV, .float_only = 1, .same_typed_inputs = 2,
        .shape_rule = shape_rule_conv_bwd_data},
    [CDNN_OP_CONV_BWD_FILTER] = {
        .name = "conv_bwd_filter", .schema_name = "ConvBwdFilter",
        .inputs = {2, 2, {"x", "dy"}}, .outputs = {1, 1, {"dw"}},
        .attr = OP_ATTR_CONV, .float_only = 1, .same_typed_inputs = 2,
        .shape_rule = shape_rule_conv_bwd_filter},
    [CDNN_OP_MATMUL] = {
        .name = "matmul", .schema_name = "Matmul",
        .inputs = {2, 2, {"a", "b"}}, .outputs = {1, 1, {"c"}},
        .attr = OP_ATTR_NONE, .float_only = 1, .same_typed_inputs = 2,
        .shape_rule = shape_rule_matmul},
    [CDNN_OP_POINTWISE] = {
        .name = "pointwise", .schema_name = "Pointwise",
        .inputs = {1, 3, {"a", "b", "c"}}, .outputs = {1, 1, {"y"}},
        .input_arity = pointwise_arity,
        .attr = OP_ATTR_POINTWISE, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_pointwise},
    [CDNN_OP_REDUCTION] = {
        .name = "reduction", .schema_name = "Reduction",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 1, {"y"}},
        /* Any type: integers exactly (cdnn.h, "Numeric semantics"). */
        .attr = OP_ATTR_REDUCTION, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_reduction},
    [CDNN_OP_BATCHNORM_INFERENCE] = {
        .name = "batchnorm_inference", .schema_name = "BatchnormInference",
        .inputs = {5, 5, {"x", "scale", "bias", "mean", "variance"}},
        .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_NORM, .float_only = 1, .same_typed_inputs = 0,
        .shape_rule = shape_rule_batchnorm},
    [CDNN_OP_LAYERNORM] = {
        .name = "layernorm", .schema_name = "Layernorm",
        .inputs = {2, 3, {"x", "scale", "bias"}},
        .required_before = 3, .relaxed_minor = 2, /* bias optional from 1.2 */
        .outputs = {1, 3, {"y", "mean", "inv_variance"}},
        .attr = OP_ATTR_NORM, .float_only = 1, .same_typed_inputs = 0,
        .shape_rule = shape_rule_norm},
    [CDNN_OP_RMSNORM] = {
        .name = "rmsnorm", .schema_name = "Rmsnorm",
        .inputs = {2, 3, {"x", "scale", "bias"}}, .outputs = {1, 2, {"y", "inv_rms"}},
        .attr = OP_ATTR_NORM, .float_only = 1, .same_typed_inputs = 0,
        .shape_rule = shape_rule_norm},
    [CDNN_OP_SDPA_FWD] = {
        .name = "sdpa_fwd", .schema_name = "SdpaFwd",
        .inputs = {3, 3, {"q", "k", "v"}}, .outputs = {1, 1, {"o"}},
        .attr = OP_ATTR_SDPA, .float_only = 1, .same_typed_inputs = 3,
        .shape_rule = shape_rule_sdpa},
    [CDNN_OP_SOFTMAX] = {
        .name = "softmax", .schema_name = "Softmax",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_AXIS, .float_only = 1, .same_typed_inputs = 0,
        .shape_rule = shape_rule_softmax, .since_minor = 2},
    [CDNN_OP_LOG_SOFTMAX] = {
        .name = "log_softmax", .schema_name = "LogSoftmax",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_AXIS, .float_only = 1, .same_typed_inputs = 0,
        .shape_rule = shape_rule_softmax, .since_minor = 2},
    /* Data movement: any type, y's the same as x's (the shape rules). */
    [CDNN_OP_RESHAPE] = {
        .name = "reshape", .schema_name = "Reshape",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_NONE, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_reshape, .since_minor = 2},
    [CDNN_OP_TRANSPOSE] = {
        .name = "transpose", .schema_name = "Transpose",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_TRANSPOSE, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_transpose, .since_minor = 2},
    [CDNN_OP_CONCAT] = {
        .name = "concat", .schema_name = "Concat",
        .inputs = {2, 5, {"x0", "x1", "x2", "x3", "x4"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_AXIS, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_concat, .since_minor = 2},
    [CDNN_OP_SLICE] = {
        .name = "slice", .schema_name = "Slice",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_SLICE, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_slice, .since_minor = 2},
    /* Indices: y is i32 or i64 (the shape rule), x any type. */
    [CDNN_OP_ARGMAX] = {
        .name = "argmax", .schema_name = "ArgMax",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_AXIS, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_arg_extreme, .since_minor = 2},
    [CDNN_OP_ARGMIN] = {
        .name = "argmin", .schema_name = "ArgMin",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_AXIS, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_arg_extreme, .since_minor = 2},
    [CDNN_OP_PAD] = {
        .name = "pad", .schema_name = "Pad",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_PAD, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_pad, .since_minor = 2},
    /* Format 1.3. */
    [CDNN_OP_SDPA_BWD] = {
        .name = "sdpa_bwd", .schema_name = "SdpaBwd",
        .inputs = {5, 5, {"q", "k", "v", "o", "do"}}, .outputs = {3, 3, {"dq", "dk", "dv"}},
        .attr = OP_ATTR_SDPA, .float_only = 1, .same_typed_inputs = 5,
        .shape_rule = shape_rule_sdpa_bwd, .since_minor = 3},
    /* Indexing: x any type, indices i32 or i64 (the shape rules). */
    [CDNN_OP_GATHER] = {
        .name = "gather", .schema_name = "Gather",
        .inputs = {2, 2, {"x", "indices"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_AXIS, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_gather, .since_minor = 3},
    [CDNN_OP_GATHER_ELEMENTS] = {
        .name = "gather_elements", .schema_name = "GatherElements",
        .inputs = {2, 2, {"x", "indices"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_AXIS, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_gather_elements, .since_minor = 3},
    [CDNN_OP_TOPK] = {
        .name = "topk", .schema_name = "TopK",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 2, {"values", "indices"}},
        .attr = OP_ATTR_TOPK, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_topk, .since_minor = 3},
    /* Pooling and resize: types checked by the shape rules (max pooling
     * and nearest resize take integers; indices are i32/i64). */
    [CDNN_OP_POOLING_FWD] = {
        .name = "pooling_fwd", .schema_name = "PoolingFwd",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 2, {"y", "indices"}},
        .attr = OP_ATTR_POOLING, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_pooling_fwd, .since_minor = 3},
    [CDNN_OP_POOLING_BWD] = {
        .name = "pooling_bwd", .schema_name = "PoolingBwd",
        .inputs = {2, 3, {"dy", "x", "indices"}}, .outputs = {1, 1, {"dx"}},
        .attr = OP_ATTR_POOLING, .float_only = 0, .same_typed_inputs = 2,
        .shape_rule = shape_rule_pooling_bwd, .since_minor = 3},
    [CDNN_OP_RESIZE] = {
        .name = "resize", .schema_name = "Resize",
        .inputs = {1, 1, {"x"}}, .outputs = {1, 1, {"y"}},
        .attr = OP_ATTR_RESIZE, .float_only = 0, .same_typed_inputs = 0,
        .shape_rule = shape_rule_resize, .since_minor = 3},
    /* Training norms.  Batch-norm's statistics are per channel (dim 1) over
     * the other dims; layer-norm's and RMS-norm's over the dims where scale
     * is not 1, as the forwards.  A node has at most 3 outputs, so the
     * running statistics are their own node (cuDNN's batchnorm node has
     * both). */
    [CDNN_OP_BATCHNORM_TRAIN] = {
        .name = "batchnorm_train", .schema_name = "BatchnormTrain",
        .inputs = {3, 3, {"x", "scale", "bias"}},
        .outputs = {1, 3, {"y", "mean", "inv_variance"}},
        .attr = OP_ATTR_NORM, .float_only = 1, .same_typed_inputs = 0,
        .shape_rule = shape_rule_batchnorm_train, .since_minor = 3},
    [CDNN_OP_BATCHNORM_RUNNING_STATS] = {
        .name = "batchnorm_running_stats", .schema_name = "BatchnormRunningStats",
        .inputs = {3, 3, {"x", "running_mean", "running_var"}},
        .outputs = {2, 2, {"next_running_mean", "next_running_var"}},
        .attr = OP_ATTR_MOMENTUM, .float_only = 1, .same_typed_inputs = 0,
        .shape_rule = shape_rule_batchnorm_running, .since_minor = 3},
    [CDNN_OP_BATCHNORM_BWD] = {
        .name = "batchnorm_bwd", .schema_name = "BatchnormBwd",
        .inputs = {5, 5, {"dy", "x", "scale", "mean", "inv_variance"}},
        .outputs = {1, 3, {"dx", "dscale", "dbias"}},
        .attr = OP_ATTR_NONE, .float_only = 1, .same_typed_inputs = 2,
        .shape_rule = shape_rule_batchnorm_bwd, .since_minor = 3},
    [CDNN_OP_LAYERNORM_BWD] = {
        .name = "layernorm_bwd", .schema_name = "LayernormBwd",
        .inputs = {5, 5, {"dy", "x", "scale", "mean", "inv_variance"}},
        .outputs = {1, 3, {"dx", "dscale", "dbias"}},
        .attr = OP_ATTR_NONE, .float_only = 1, .same_typed_inputs = 2,
        .shape_rule = shape_rule_norm_bwd, .since_minor = 3},
    [CDNN_OP_RMSNORM_BWD] = {
        .name = "rmsnorm_bwd", .schema_name = "RmsnormBwd",
        .inputs = {4, 4, {"dy", "x", "scale", "inv_rms"}},
        .outputs = {1, 3, {"dx", "dscale", "dbias"}},
        .attr = OP_ATTR_NONE, .float_only = 1, .same_typed_inputs = 2,
        .shape_rule = shape_rule_norm_bwd, .since_minor = 3},
};

/* The attribute union is part of the provider ABI (cdnn_node_view_t): a
 * new member must not grow it. */
_Static_assert(sizeof(cdnn_slice_attr_t) <= sizeof(cdnn_conv_attr_t) &&
                   sizeof(cdnn_transpose_attr_t) <= sizeof(cdnn_conv_attr_t) &&
                   sizeof(cdnn_pad_attr_t) <= sizeof(cdnn_conv_attr_t) &&
                   sizeof(cdnn_topk_attr_t) <= sizeof(cdnn_conv_attr_t) &&
                   sizeof(cdnn_pooling_attr_t) <= sizeof(cdnn_conv_attr_t) &&
                   sizeof(cdnn_resize_attr_t) <= sizeof(cdnn_conv_attr_t),
               "cdnn_node_attr_t would grow");

_Static_assert(OP_TABLE_ABI_MINOR <= CDNN_PROVIDER_ABI_MINOR,
               "the provider ABI knows every op of the table");

const op_desc_t *op_desc(cdnn_op_t op)
{
    return (unsigned)op < CDNN_OP_COUNT ? &op_table[op] : NULL;
}

uint16_t op_abi_minor_for(uint16_t format_minor)
{
    return format_minor >= 3 ? 4 : format_minor == 2 ? 3 : 0;
}

uint16_t op_node_minor(cdnn_op_t op, const int present[CDNN_NODE_MAX_INPUTS])
{
    const op_desc_t *d = op_desc(op);
    if (!d)
        return 0;
    uint16_t minor = d->since_minor;
    for (int p = 0; p < d->required_before && p < CDNN_NODE_MAX_INPUTS; p++)
        if (!present[p] && d->relaxed_minor > minor)
            minor = d->relaxed_minor;
    return minor;
}

uint16_t op_pointwise_minor(cdnn_pointwise_mode_t mode, uint16_t minor)
{
    return mode >= CDNN_PW_ROUND && minor < 3 ? 3 : minor;
}

uint16_t op_view_minor(const cdnn_graph_view_t *view)
{
    uint16_t minor = 0;
    for (int32_t i = 0; i < view->node_count; i++) {
        int present[CDNN_NODE_MAX_INPUTS];
        for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
            present[p] = view->nodes[i].inputs[p] >= 0;
        uint16_t m = op_node_minor(view->nodes[i].op, present);
        if (view->nodes[i].op == CDNN_OP_POINTWISE)
            m = op_pointwise_minor(view->nodes[i].attr.pointwise.mode, m);
        if (m > minor)
            minor = m;
    }
    return minor;
}

static const char *port_name(const op_ports_t *ports, int port)
{
    return port >= 0 && port < ports->count ? ports->names[port] : "?";
}

const char *op_input_name(cdnn_op_t op, int port)
{
    const op_desc_t *d = op_desc(op);
    return d ? port_name(&d->inputs, port) : "?";
}

const char *op_output_name(cdnn_op_t op, int port)
{
    const op_desc_t *d = op_desc(op);
    return d ? port_name(&d->outputs, port) : "?";
}

const char *op_attr_schema_name(int kind)
{
    static const char *const names[OP_ATTR_KIND_COUNT] = {
        [OP_ATTR_NONE] = "NONE",           [OP_ATTR_CONV] = "ConvAttr",
        [OP_ATTR_POINTWISE] = "PointwiseAttr", [OP_ATTR_REDUCTION] = "ReductionAttr",
        [OP_ATTR_NORM] = "NormAttr",       [OP_ATTR_SDPA] = "SdpaAttr",
        [OP_ATTR_AXIS] = "AxisAttr", [OP_ATTR_TRANSPOSE] = "TransposeAttr",
        [OP_ATTR_SLICE] = "SliceAttr", [OP_ATTR_PAD] = "PadAttr",
        [OP_ATTR_TOPK] = "TopkAttr", [OP_ATTR_POOLING] = "PoolingAttr",
        [OP_ATTR_RESIZE] = "ResizeAttr", [OP_ATTR_MOMENTUM] = "MomentumAttr"};
    return kind >= 0 && kind < OP_ATTR_KIND_COUNT ? names[kind] : "unknown";
}

const char *cdnn_op_name(cdnn_op_t op)
{
    const op_desc_t *d = op_desc(op);
    return d ? d->name : "invalid";
}

cdnn_status_t cdnn_op_port_info(cdnn_op_t op, cdnn_op_port_info_t *info)
{
    CDNN_CHECK_ARG(info);
    const op_desc_t *d = op_desc(op);
    if (!d)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "op %d is not a cdnn_op_t (0 to %d)",
                         (int)op, CDNN_OP_COUNT - 1);
    memset(info, 0, sizeof *info);
    info->input_count = d->inputs.count;
    info->required_inputs = d->inputs.required;
    memcpy(info->input_names, d->inputs.names, sizeof info->input_names);
    info->output_count = d->outputs.count;
    info->required_outputs = d->outputs.required;
    memcpy(info->output_names, d->outputs.names, sizeof info->output_names);
    info->inputs_by_mode = d->input_arity != NULL;
    return CDNN_STATUS_SUCCESS;
}
