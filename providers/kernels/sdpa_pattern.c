#include "sdpa_pattern.h"

#include <math.h>
#include <string.h>

#include <cdnn_sdk/error.h>

static cdnn_status_t check_node(const cdnn_graph_view_t *g)
{
    if (g->node_count != 1 || g->nodes[0].op != CDNN_OP_SDPA_FWD)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the attention kernels run a graph of "
                        "one sdpa_fwd node");
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; the "
                        "attention kernels compute in f32");
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_tensor(const cdnn_tensor_view_t *t)
{
    if (t->type != CDNN_DATA_TYPE_F32 && t->type != CDNN_DATA_TYPE_F16 &&
        t->type != CDNN_DATA_TYPE_BF16)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; the attention kernels take "
                        "f32, f16 and bf16", t->name, cdnn_data_type_name(t->type));
    if (t->is_virtual || t->is_scalar)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; the attention kernels read "
                        "and write tensors in memory", t->name,
                        t->is_virtual ? "virtual" : "a scalar");
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t sdpa_pattern_of(const cdnn_graph_view_t *g, sdpa_pattern_t *p)
{
    memset(p, 0, sizeof *p);
    cdnn_status_t st = check_node(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const cdnn_node_view_t *node = &g->nodes[0];
    const int32_t roles[SDPA_ROLES] = {node->inputs[0], node->inputs[1], node->inputs[2],
                                       node->outputs[0]};
    for (int i = 0; i < SDPA_ROLES && st == CDNN_STATUS_SUCCESS; i++) {
        p->tensors[i] = roles[i];
        st = check_tensor(&g->tensors[roles[i]]);
    }
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const int64_t *q = g->tensors[roles[SDPA_Q]].dims, *v = g->tensors[roles[SDPA_V]].dims;
    p->batch = q[0], p->heads = q[1], p->q_len = q[2], p->head_dim = q[3];
    p->kv_len = g->tensors[roles[SDPA_K]].dims[2];
    p->value_dim = v[3];
    if (p->head_dim > SDPA_MAX_HEAD_DIM || p->value_dim > SDPA_MAX_HEAD_DIM)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "head sizes %lld and %lld; the attention "
                        "kernels take at most %d", (long long)p->head_dim,
                        (long long)p->value_dim, SDPA_MAX_HEAD_DIM);
    p->scale = node->attr.sdpa.scale != 0 ? node->attr.sdpa.scale
                                          : 1.0 / sqrt((double)p->head_dim);
    p->causal = node->attr.sdpa.causal != 0;
    return CDNN_STATUS_SUCCESS;
}
