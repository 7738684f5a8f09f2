#include "softmax_pattern.h"

#include <string.h>

#include <cdnn_sdk/error.h>

static cdnn_status_t check_graph(const cdnn_graph_view_t *g)
{
    cdnn_op_t op = g->nodes[0].op;
    if (g->node_count != 1 || (op != CDNN_OP_SOFTMAX && op != CDNN_OP_LOG_SOFTMAX))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the softmax kernels run a graph of one "
                        "softmax or log-softmax node");
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; the "
                        "softmax kernels compute in f32");
    return row_kernel_types(g, "the softmax kernels");
}

cdnn_status_t softmax_pattern_of(const cdnn_graph_view_t *g, softmax_pattern_t *p)
{
    memset(p, 0, sizeof *p);
    cdnn_status_t st = check_graph(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const cdnn_node_view_t *n = &g->nodes[0];
    p->log = n->op == CDNN_OP_LOG_SOFTMAX;
    p->x = n->inputs[0];
    p->y = n->outputs[0];
    const cdnn_tensor_view_t *x = &g->tensors[p->x];
    uint8_t across[CDNN_MAX_RANK] = {0};
    if (n->attr.axis < 0 || n->attr.axis >= x->rank)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the softmax's axis %d is not a dim of "
                        "'%s'", n->attr.axis, x->name);
    across[n->attr.axis] = 1;
    st = row_layout_of(x, across, &p->rows);
    if (st == CDNN_STATUS_SUCCESS)
        st = row_strides(&p->rows, x, p->x_strides);
    return st == CDNN_STATUS_SUCCESS ? row_strides(&p->rows, &g->tensors[p->y], p->y_strides)
                                     : st;
}
