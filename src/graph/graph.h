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

struct plan; /* engine/plan.h: owned here, never looked into */

struct cdnn_graph {
    char *name;
    cdnn_data_type_t io_type, intermediate_type, compute_type;

    graph_tensor_t *tensors;
    int32_t tensor_count, tensor_cap;
    /* uid -> tensor: open addressing, at most half full, so that loading
     * n tensors is O(n).  A slot keeps the uid beside the tensor's index + 1
     * (0: empty), so that probing stays in the table. */
    struct uid_slot {
        int64_t uid;
        int32_t index_plus_1;
    } *uid_slots;
    uint32_t uid_slot_count; /* a power of two, or 0 */
    graph_node_t *nodes;
    int32_t node_count, node_cap;

    /* Derived by validation; valid while `validated` is set. */
    int validated;
    cdnn_tensor_view_t *tensor_views; /* by declaration index */
    cdnn_node_view_t *node_views;     /* topological order */
    cdnn_graph_view_t view;
    /* A pointwise input has a lower rank than its y, inferred ranks
     * included (NumPy's rank broadcasting): validation shows it at y's
     * rank.  The saved format minor goes by declared ranks only. */
    int rank_broadcast;
    /* Loaded from bytes of a graph format minor newer than this build's
     * (else 0): a failed validation says so, since the graph may use what
     * a newer cdnn added (a form this build's rules refuse). */
    uint16_t newer_format_minor;

    struct plan *plan; /* owned; NULL until built or loaded */
    void (*plan_destroy)(struct plan *); /* the engine layer's teardown */
    /* Loaded from a bare plan: no tensors or nodes, only the plan. */
    int plan_only;
};

/**
 * Add a node of any op with its ports (uids, CDNN_UID_NONE when absent) and
 * attributes: what every cdnn_graph_<op> call does, for loaders that read
 * ops as data.
 */
cdnn_status_t graph_add_node(cdnn_graph_t *g, cdnn_op_t op, const char *name,
                             const int64_t inputs[CDNN_NODE_MAX_INPUTS],
                             const int64_t outputs[CDNN_NODE_MAX_OUTPUTS],
                             const cdnn_node_attr_t *attr);

/** The content key as 32 raw bytes (validates the graph first). */
cdnn_status_t graph_content_digest(cdnn_graph_t *g, uint8_t digest[32]);

/** The content key of a validated view (a graph's, or the one a provider
 * reports for a restored plan), as 32 raw bytes. */
cdnn_status_t content_key_of_view(const cdnn_graph_view_t *view, uint8_t digest[32]);

/** A graph declaring exactly what a validated view holds. */
cdnn_status_t graph_from_view(const cdnn_graph_view_t *view, cdnn_graph_t **out);

/** Index of the tensor with uid, or -1. */
int32_t graph_find_tensor(const cdnn_graph_t *g, int64_t uid);

/** Give the graph a plan, destroying any it had.  The engine layer passes
 * its own teardown, so that the graph layer frees plans without knowing
 * what they are.  NULL drops the plan. */
void graph_set_plan(cdnn_graph_t *g, struct plan *plan, void (*destroy)(struct plan *));

/** Drop derived state after an edit (validation, plan). */
void graph_invalidate(cdnn_graph_t *g);

#endif
