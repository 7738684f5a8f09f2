/*
 * graph.h -- the graph as the library holds it.
 *
 * Declarations (what the caller said) are kept apart from the validated
 * view (what providers see: resolved types, inferred shapes, nodes in
 * topological order), so that validating again after an edit starts from
 * what the caller said, not from an earlier inference.
 */
#ifndef CDNN_GRAPH_GRAPH_H
#define CDNN_GRAPH_GRAPH_H

#include <cdnn/provider.h>

typedef struct graph_tensor {
    int64_t uid;
    char *name;
    cdnn_data_type_t type;          /* as declared; may be UNSET */
    int32_t rank;                   /* 0: shape to be inferred */
    int64_t dims[CDNN_MAX_RANK];
    int64_t strides[CDNN_MAX_RANK]; /* valid when rank > 0 */
    int64_t alignment;
    int is_virtual;
    int is_scalar;
    double scalar_value;
} graph_tensor_t;

typedef struct graph_node {
    cdnn_op_t op;
    char *name;
    int64_t inputs[CDNN_NODE_MAX_INPUTS];   /* uids or CDNN_UID_NONE */
    int64_t outputs[CDNN_NODE_MAX_OUTPUTS]; /* uids or CDNN_UID_NONE */
    cdnn_node_attr_t attr;
} graph_node_t;

struct plan; /* engine/plan.h */

struct cdnn_graph {
    char *name;
    cdnn_data_type_t io_type, intermediate_type, compute_type;

    graph_tensor_t *tensors;
    int32_t tensor_count, tensor_cap;
    graph_node_t *nodes;
    int32_t node_count, node_cap;

    /* Derived by validation; valid while `validated` is set. */
    int validated;
    cdnn_tensor_view_t *tensor_views; /* by declaration index */
    cdnn_node_view_t *node_views;     /* topological order */
    cdnn_graph_view_t view;

    struct plan *plan; /* owned; NULL until built */
};

/** Index of the tensor with uid, or -1. */
int32_t graph_find_tensor(const cdnn_graph_t *g, int64_t uid);

/** Drop derived state after an edit (validation, plan). */
void graph_invalidate(cdnn_graph_t *g);

/** Port names of an op, for messages ("x", "w", "dy", ...). */
const char *graph_input_name(cdnn_op_t op, int port);
const char *graph_output_name(cdnn_op_t op, int port);

#endif
