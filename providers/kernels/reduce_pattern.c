#include "reduce_pattern.h"

#include <string.h>

#include <cdnn_sdk/error.h>

static cdnn_status_t check_graph(const cdnn_graph_view_t *g)
{
    if (g->node_count != 1 || g->nodes[0].op != CDNN_OP_REDUCTION)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the reduction kernels run a graph of "
                        "one reduction node");
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; the "
                        "reduction kernels sum in f32");
    return row_kernel_types(g, "the reduction kernels");
}

cdnn_status_t reduce_pattern_of(const cdnn_graph_view_t *g, reduce_pattern_t *p)
{
    memset(p, 0, sizeof *p);
    cdnn_status_t st = check_graph(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    p->mode = g->nodes[0].attr.reduction;
    p->x = g->nodes[0].inputs[0];
    p->y = g->nodes[0].outputs[0];
    const cdnn_tensor_view_t *x = &g->tensors[p->x], *y = &g->tensors[p->y];
    uint8_t reduced[CDNN_MAX_RANK] = {0};
    for (int32_t d = 0; d < x->rank; d++)
        reduced[d] = y->dims[d] == 1 && x->dims[d] != 1;
    st = row_layout_of(x, reduced, &p->rows);
    if (st == CDNN_STATUS_SUCCESS)
        st = row_strides(&p->rows, x, p->x_strides);
    return st == CDNN_STATUS_SUCCESS ? row_strides(&p->rows, y, p->y_strides) : st;
}
