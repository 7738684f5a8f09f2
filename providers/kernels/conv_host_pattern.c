#include "conv_host_pattern.h"

#include <string.h>

#include <cdnn_sdk/error.h>

static int storable(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_F32 || type == CDNN_DATA_TYPE_F16 ||
           type == CDNN_DATA_TYPE_BF16;
}

/* A dim of 1 is read at index 0 only: its stride is 0 for the kernel. */
static int64_t stride_of(const cdnn_tensor_view_t *t, int32_t d)
{
    return t->dims[d] == 1 ? 0 : t->strides[d];
}

/* [N|K, C, H, W] strides as the kernel's {n|k, h, w, c}. */
static void channels_last(const cdnn_tensor_view_t *t, int64_t out[4])
{
    out[0] = stride_of(t, 0);
    out[1] = stride_of(t, 2);
    out[2] = stride_of(t, 3);
    out[3] = stride_of(t, 1);
}

void conv_host_output_strides(const int64_t *nkhw, int64_t out[4])
{
    out[0] = nkhw[0];
    out[1] = nkhw[2];
    out[2] = nkhw[3];
    out[3] = nkhw[1];
}

static cdnn_status_t check_input(const cdnn_tensor_view_t *t)
{
    if (!storable(t->type))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; the host conv kernels "
                        "take f32, f16 and bf16", t->name, cdnn_data_type_name(t->type));
    if (t->is_virtual || t->is_scalar)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; the host conv kernels "
                        "read the convolution's inputs from memory", t->name,
                        t->is_virtual ? "virtual" : "a scalar");
    return CDNN_STATUS_SUCCESS;
}

/* NHWC: the channels (dim 1) innermost and packed; the other strides may
 * be anything (padded rows, a batch stride of its own). */
static cdnn_status_t check_channels_last(const cdnn_tensor_view_t *t, int64_t channel_stride)
{
    if (t->dims[1] != 1 && channel_stride != 1)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' has channel stride %lld; the "
                        "host conv kernels take channels-last (NHWC) tensors, channel "
                        "stride 1", t->name, (long long)channel_stride);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_attr(const cdnn_node_view_t *node)
{
    const cdnn_conv_attr_t *a = &node->attr.conv;
    if (a->spatial_dims != 2)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' is a %d-D convolution; "
                        "the host conv kernels take 2-D ones", node->name,
                        (int)a->spatial_dims);
    if (a->groups != 1)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' has %lld groups; the host "
                        "conv kernels take one", node->name, (long long)a->groups);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t conv_of(const cdnn_graph_view_t *g, conv_host_pattern_t *p)
{
    if (g->node_count < 1 || g->nodes[0].op != CDNN_OP_CONV_FWD)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph does not start with a "
                        "forward convolution");
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; the "
                        "host conv kernels accumulate in f32");
    const cdnn_node_view_t *node = &g->nodes[0];
    cdnn_status_t st = check_attr(node);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const cdnn_tensor_view_t *x = &g->tensors[node->inputs[0]];
    const cdnn_tensor_view_t *w = &g->tensors[node->inputs[1]];
    const cdnn_tensor_view_t *y = &g->tensors[node->outputs[0]];
    st = check_input(x);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_input(w);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const cdnn_conv_attr_t *a = &node->attr.conv;
    p->x = node->inputs[0];
    p->filter = node->inputs[1];
    p->n = x->dims[0];
    p->c = x->dims[1];
    p->h = x->dims[2];
    p->w = x->dims[3];
    p->k = w->dims[0];
    p->r = w->dims[2];
    p->s = w->dims[3];
    p->out_h = y->dims[2];
    p->out_w = y->dims[3];
    p->pad_h = a->pre_padding[0];
    p->pad_w = a->pre_padding[1];
    p->stride_h = a->stride[0];
    p->stride_w = a->stride[1];
    p->dilation_h = a->dilation[0];
    p->dilation_w = a->dilation[1];
    channels_last(x, p->x_strides);
    channels_last(w, p->filter_strides);
    return check_channels_last(x, p->x_strides[3]);
}

cdnn_status_t conv_host_pattern_of(const cdnn_graph_view_t *g, conv_host_pattern_t *p)
{
    memset(p, 0, sizeof *p);
    p->epilogue.bias.tensor = -1;
    p->epilogue.residual.tensor = -1;
    cdnn_status_t st = conv_of(g, p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    p->epilogue.c.tensor = g->nodes[0].outputs[0];
    st = matmul_epilogue_chain(g, &p->epilogue);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    return check_channels_last(&g->tensors[p->epilogue.c.tensor], p->epilogue.c.strides[1]);
}
