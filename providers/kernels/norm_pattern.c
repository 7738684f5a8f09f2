#include "norm_pattern.h"

#include <string.h>

#include <cdnn_sdk/error.h>

static cdnn_status_t check_node(const cdnn_graph_view_t *g)
{
    cdnn_op_t op = g->nodes[0].op;
    if (g->node_count != 1 || (op != CDNN_OP_LAYERNORM && op != CDNN_OP_RMSNORM))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the norm kernels run a graph of one "
                        "layer-norm or RMS-norm node");
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; the "
                        "norm kernels compute in f32");
    return CDNN_STATUS_SUCCESS;
}

/* The node's tensors by role; a virtual output is one nobody wants. */
static cdnn_status_t find_roles(const cdnn_graph_view_t *g, norm_pattern_t *p)
{
    const cdnn_node_view_t *n = &g->nodes[0];
    const int32_t roles[NORM_ROLES] = {n->inputs[0], n->outputs[0], n->inputs[1],
                                       n->inputs[2], p->layer ? n->outputs[1] : -1,
                                       n->outputs[p->layer ? 2 : 1]};
    for (int i = 0; i < NORM_ROLES; i++) {
        const cdnn_tensor_view_t *t = roles[i] >= 0 ? &g->tensors[roles[i]] : NULL;
        p->tensors[i] = t && !t->is_virtual ? roles[i] : -1;
        if (t && t->type != CDNN_DATA_TYPE_F32 && t->type != CDNN_DATA_TYPE_F16 &&
            t->type != CDNN_DATA_TYPE_BF16)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; the norm kernels take "
                            "f32, f16 and bf16", t->name, cdnn_data_type_name(t->type));
    }
    if (p->tensors[NORM_Y] < 0)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the norm's result is virtual");
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t fold_rows(const cdnn_graph_view_t *g, norm_pattern_t *p)
{
    const cdnn_tensor_view_t *x = &g->tensors[p->tensors[NORM_X]];
    const cdnn_tensor_view_t *scale = &g->tensors[p->tensors[NORM_SCALE]];
    uint8_t normalised[CDNN_MAX_RANK] = {0};
    for (int32_t d = 0; d < x->rank; d++)
        normalised[d] = scale->dims[d] != 1;
    cdnn_status_t st = row_layout_of(x, normalised, &p->rows);
    for (int i = 0; st == CDNN_STATUS_SUCCESS && i < NORM_ROLES; i++)
        if (p->tensors[i] >= 0)
            st = row_strides(&p->rows, &g->tensors[p->tensors[i]], p->strides[i]);
    return st;
}

cdnn_status_t norm_pattern_of(const cdnn_graph_view_t *g, norm_pattern_t *p)
{
    memset(p, 0, sizeof *p);
    cdnn_status_t st = check_node(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    p->layer = g->nodes[0].op == CDNN_OP_LAYERNORM;
    p->epsilon = g->nodes[0].attr.epsilon;
    st = find_roles(g, p);
    return st == CDNN_STATUS_SUCCESS ? fold_rows(g, p) : st;
}
