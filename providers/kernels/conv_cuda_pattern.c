#include "conv_cuda_pattern.h"

#include <string.h>

#include <cdnn_sdk/error.h>

#include "matmul_pattern.h"

static int storable(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_F32 || type == CDNN_DATA_TYPE_F16 ||
           type == CDNN_DATA_TYPE_BF16;
}

static cdnn_status_t check_storable(const cdnn_tensor_view_t *t)
{
    return storable(t->type)
               ? CDNN_STATUS_SUCCESS
               : sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; the conv kernels take "
                          "f32, f16 and bf16", t->name, cdnn_data_type_name(t->type));
}

/* Channels-last: the channel dim (1) has stride 1, or only one element. */
static cdnn_status_t check_channels_last(const cdnn_tensor_view_t *t)
{
    return t->dims[1] == 1 || t->strides[1] == 1
               ? CDNN_STATUS_SUCCESS
               : sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is not channels-last (NHWC: "
                          "channel stride 1); the CUDA conv kernels read x and write y so",
                          t->name);
}

/* A view's [N, C, (H,) W] dims and strides as channels-last 2-D values:
 * {N, H, W, C}; a 1-D view has H = 1. */
static void nhwc(const cdnn_tensor_view_t *t, int64_t dims[4], int64_t strides[4])
{
    int two_d = t->rank == 4;
    dims[0] = t->dims[0], strides[0] = t->strides[0];
    dims[1] = two_d ? t->dims[2] : 1, strides[1] = two_d ? t->strides[2] : 0;
    dims[2] = t->dims[t->rank - 1], strides[2] = t->strides[t->rank - 1];
    dims[3] = t->dims[1], strides[3] = t->strides[1];
}

static cdnn_status_t conv_of(const cdnn_graph_view_t *g, conv_cuda_pattern_t *p)
{
    if (g->node_count < 1 || g->nodes[0].op != CDNN_OP_CONV_FWD)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph does not start with a forward "
                        "convolution");
    const cdnn_node_view_t *node = &g->nodes[0];
    const cdnn_conv_attr_t *a = &node->attr.conv;
    if (a->spatial_dims > 2 || a->groups != 1)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' is a %d-D conv of %lld groups; "
                        "the CUDA conv kernels run 1-D and 2-D convs of one group",
                        node->name, a->spatial_dims, (long long)a->groups);
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; the "
                        "conv kernels accumulate in f32");
    const cdnn_tensor_view_t *x = &g->tensors[node->inputs[0]];
    const cdnn_tensor_view_t *w = &g->tensors[node->inputs[1]];
    const cdnn_tensor_view_t *y = &g->tensors[node->outputs[0]];
    cdnn_status_t st = check_storable(x);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_channels_last(x);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t xd[4], wd[4], yd[4];
    nhwc(x, xd, p->x_strides);
    nhwc(w, wd, p->w_strides);
    nhwc(y, yd, p->y_strides);
    p->x = node->inputs[0], p->w = node->inputs[1], p->y = node->outputs[0];
    p->n = xd[0], p->h = xd[1], p->width = xd[2], p->c = xd[3];
    p->k = wd[0], p->r = wd[1], p->s = wd[2];
    p->p = yd[1], p->q = yd[2];
    int two_d = a->spatial_dims == 2, last = a->spatial_dims - 1;
    p->pad_h = two_d ? a->pre_padding[0] : 0;
    p->stride_h = two_d ? a->stride[0] : 1;
    p->dilation_h = two_d ? a->dilation[0] : 1;
    p->pad_w = a->pre_padding[last];
    p->stride_w = a->stride[last];
    p->dilation_w = a->dilation[last];
    return CDNN_STATUS_SUCCESS;
}

/* ---- the epilogue chain ----------------------------------------------------------- */

enum { AFTER_CONV, AFTER_BIAS, AFTER_ACTIVATION };

/* The bias: in memory, one value per filter, broadcast over the rest. */
static cdnn_status_t bias_step(const cdnn_graph_view_t *g, int32_t other, int *stage,
                               conv_cuda_pattern_t *p)
{
    const cdnn_tensor_view_t *t = &g->tensors[other];
    int per_filter = !t->is_virtual && !t->is_scalar && t->rank >= 2 &&
                     (t->dims[1] == p->k || t->dims[1] == 1);
    for (int32_t d = 0; d < t->rank; d++)
        per_filter &= d == 1 || t->dims[d] == 1;
    if (*stage != AFTER_CONV || !per_filter)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is added to the conv's result but "
                        "is not a bias before the activation (a tensor in memory of one "
                        "value per filter); the conv kernels add only that", t->name);
    *stage = AFTER_BIAS;
    p->bias = other;
    p->bias_stride = t->dims[1] == 1 ? 0 : t->strides[1];
    return check_storable(t);
}

static cdnn_status_t chain_step(const cdnn_graph_view_t *g, int32_t i, int32_t value,
                                int *stage, conv_cuda_pattern_t *p)
{
    const cdnn_node_view_t *node = &g->nodes[i];
    const cdnn_tensor_view_t *v = &g->tensors[value];
    if (node->op != CDNN_OP_POINTWISE || (node->inputs[0] != value && node->inputs[1] != value))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' does not continue the conv's "
                        "chain of pointwise nodes", node->name);
    if (!v->is_virtual || v->type != CDNN_DATA_TYPE_F32)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' between fused nodes must be a "
                        "virtual f32 tensor (the epilogue computes in f32)", v->name);
    const cdnn_tensor_view_t *out = &g->tensors[node->outputs[0]], *y = &g->tensors[p->y];
    if (out->rank != y->rank || memcmp(out->dims, y->dims, (size_t)y->rank * sizeof *y->dims))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' broadcasts the conv's result "
                        "to another shape", node->name);
    if (node->attr.pointwise.mode == CDNN_PW_ADD)
        return bias_step(g, node->inputs[node->inputs[0] == value ? 1 : 0], stage, p);
    matmul_activation_t act = node->inputs[1] < 0 ? matmul_activation_of(&node->attr.pointwise)
                                                  : MATMUL_ACT_NONE;
    if (act == MATMUL_ACT_NONE || *stage == AFTER_ACTIVATION)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' (%s) is neither the bias add "
                        "nor one activation the conv kernels fuse (relu, gelu, gelu_tanh, "
                        "silu with beta 1, tanh)", node->name,
                        cdnn_pointwise_mode_name(node->attr.pointwise.mode));
    *stage = AFTER_ACTIVATION;
    p->activation = (int32_t)act;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t conv_cuda_pattern_of(const cdnn_graph_view_t *g, conv_cuda_pattern_t *p)
{
    memset(p, 0, sizeof *p);
    p->bias = -1;
    cdnn_status_t st = conv_of(g, p);
    int32_t value = p->y;
    int stage = AFTER_CONV;
    for (int32_t i = 1; st == CDNN_STATUS_SUCCESS && i < g->node_count; i++) {
        st = chain_step(g, i, value, &stage, p);
        value = g->nodes[i].outputs[0];
    }
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const cdnn_tensor_view_t *y = &g->tensors[value];
    if (y->is_virtual)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the chain's result '%s' is virtual",
                        y->name);
    int64_t dims[4];
    p->y = value;
    nhwc(y, dims, p->y_strides);
    st = check_storable(y);
    return st == CDNN_STATUS_SUCCESS ? check_channels_last(y) : st;
}
