/*
 * identity_copy.h -- what the copying test providers share (counting,
 * planted, async): their engines run a graph of one f32 IDENTITY pointwise node over
 * packed tensors of one shape on the CPU, by copying x to y.
 */
#ifndef CDNN_TEST_IDENTITY_COPY_H
#define CDNN_TEST_IDENTITY_COPY_H

#include <cdnn/provider.h>

/* What a copy needs from the graph. */
typedef struct identity_copy {
    int64_t x_uid, y_uid;
    uint64_t elements;
} identity_copy_t;

/* The tensor's element count if it is packed, else 0. */
static inline uint64_t identity_packed_elements(const cdnn_tensor_view_t *t)
{
    uint64_t n = 1, stride = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        if (t->dims[d] > 1 && t->strides[d] != (int64_t)stride)
            return 0;
        stride *= (uint64_t)t->dims[d];
        n *= (uint64_t)t->dims[d];
    }
    return n;
}

/* NULL if a copying engine can run g on device; else why not. */
static inline const char *identity_copy_refusal(const cdnn_device_view_t *device,
                                                const cdnn_graph_view_t *g)
{
    const cdnn_node_view_t *n = g->node_count == 1 ? &g->nodes[0] : NULL;
    if (device->kind != CDNN_DEVICE_CPU || !n || n->op != CDNN_OP_POINTWISE ||
        n->attr.pointwise.mode != CDNN_PW_IDENTITY)
        return "runs one identity pointwise node on the CPU only";
    const cdnn_tensor_view_t *x = &g->tensors[n->inputs[0]], *y = &g->tensors[n->outputs[0]];
    uint64_t count = identity_packed_elements(x);
    if (x->type != CDNN_DATA_TYPE_F32 || y->type != CDNN_DATA_TYPE_F32 || !count ||
        count != identity_packed_elements(y))
        return "needs packed f32 tensors of one shape";
    return NULL;
}

/* The copy an applicable graph asks for. */
static inline identity_copy_t identity_copy_of(const cdnn_graph_view_t *g)
{
    const cdnn_node_view_t *n = &g->nodes[0];
    identity_copy_t copy = {g->tensors[n->inputs[0]].uid, g->tensors[n->outputs[0]].uid,
                            identity_packed_elements(&g->tensors[n->inputs[0]])};
    return copy;
}

/* The variant pack's pointer for uid, or NULL. */
static inline void *identity_pointer_of(const cdnn_exec_args_t *args, int64_t uid)
{
    for (int32_t i = 0; i < args->count; i++)
        if (args->uids[i] == uid)
            return args->ptrs[i];
    return NULL;
}

#endif
