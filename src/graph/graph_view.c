/*
 * graph_view.c -- a graph declared from a validated view.
 *
 * Providers hold views, not graphs; when a provider's payload must carry
 * the graph (engine/host.c), the view is declared back into a graph with
 * every type and shape explicit, so that it encodes in the one graph
 * format and validates to the same view when loaded.
 */
#include "graph/graph.h"

#include "core/error.h"

static cdnn_status_t declare_tensor(cdnn_graph_t *g, const cdnn_tensor_view_t *t)
{
    cdnn_status_t st = cdnn_graph_tensor(g, t->uid, t->name, t->type, t->rank, t->dims,
                                         t->strides);
    if (!st && t->is_virtual)
        st = cdnn_graph_tensor_set_virtual(g, t->uid);
    if (!st && t->alignment)
        st = cdnn_graph_tensor_set_alignment(g, t->uid, t->alignment);
    if (!st && t->is_scalar)
        st = cdnn_graph_tensor_set_scalar(g, t->uid, t->scalar_value);
    return st;
}

static cdnn_status_t declare_node(cdnn_graph_t *g, const cdnn_graph_view_t *v,
                                  const cdnn_node_view_t *n)
{
    int64_t in[CDNN_NODE_MAX_INPUTS], out[CDNN_NODE_MAX_OUTPUTS];
    for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
        in[p] = n->inputs[p] >= 0 ? v->tensors[n->inputs[p]].uid : CDNN_UID_NONE;
    for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++)
        out[p] = n->outputs[p] >= 0 ? v->tensors[n->outputs[p]].uid : CDNN_UID_NONE;
    return graph_add_node(g, n->op, n->name, in, out, &n->attr);
}

cdnn_status_t graph_from_view(const cdnn_graph_view_t *v, cdnn_graph_t **out)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = cdnn_graph_create(&g);
    if (!st)
        st = cdnn_graph_set_data_types(g, CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_F32,
                                       v->compute_type);
    for (int32_t i = 0; !st && i < v->tensor_count; i++)
        st = declare_tensor(g, &v->tensors[i]);
    for (int32_t i = 0; !st && i < v->node_count; i++)
        st = declare_node(g, v, &v->nodes[i]);
    if (st) {
        cdnn_graph_destroy(g);
        return st;
    }
    *out = g;
    return CDNN_STATUS_SUCCESS;
}
