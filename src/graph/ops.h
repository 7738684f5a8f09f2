/*
 * ops.h -- the op table: what cdnn knows of each op, in one row per op.
 *
 * Everything that differs from op to op is read from here: validation (the
 * ports, the type rules and the shape rule), the graph format (port slots
 * and the attribute union member), graph JSON (the schema's op names), the
 * content key (which attribute fields it hashes, by attribute kind),
 * cdnn_op_name and cdnn_op_port_info.  Adding an op is its value in
 * cdnn_op_t, in graph.fbs's Op enum and in docs/FORMATS.md's list of ops,
 * a row in ops.c, its shape rule (validate.c) and its reference
 * implementation (providers/cpu); tests/format/test_op_table.c holds the
 * enum and the list to the table.
 */
#ifndef CDNN_GRAPH_OPS_H
#define CDNN_GRAPH_OPS_H

#include <cdnn/provider.h>

/* The attributes an op takes: the member of cdnn_node_attr_t it reads, and
 * the fields the graph format stores and the content key hashes.  The
 * values are graph.fbs's NodeAttr union types (0: none), so that the
 * format writes them as they are. */
typedef enum op_attr_kind {
    OP_ATTR_NONE = 0,
    OP_ATTR_CONV,      /* cdnn_conv_attr_t conv */
    OP_ATTR_POINTWISE, /* cdnn_pointwise_attr_t pointwise */
    OP_ATTR_REDUCTION, /* cdnn_reduction_mode_t reduction */
    OP_ATTR_NORM,      /* double epsilon */
    OP_ATTR_SDPA,      /* cdnn_sdpa_attr_t sdpa */
    OP_ATTR_AXIS,      /* int32_t axis (graph format 1.2) */
    OP_ATTR_TRANSPOSE, /* cdnn_transpose_attr_t transpose (graph format 1.2) */
    OP_ATTR_SLICE,     /* cdnn_slice_attr_t slice (graph format 1.2) */
    OP_ATTR_PAD,       /* cdnn_pad_attr_t pad (graph format 1.2) */
    OP_ATTR_TOPK,      /* cdnn_topk_attr_t topk (graph format 1.3) */
    OP_ATTR_POOLING,   /* cdnn_pooling_attr_t pooling (graph format 1.3) */
    OP_ATTR_RESIZE,    /* cdnn_resize_attr_t resize (graph format 1.3) */
    OP_ATTR_MOMENTUM,  /* double momentum (graph format 1.3) */
    OP_ATTR_KIND_COUNT
} op_attr_kind_t;

/* Ports on one side of an op.  Slot i is named names[i]; slots from
 * `required` to `count` are optional, so optional ports always come last
 * (the graph format and cdnn_op_port_info say so with one number). */
typedef struct op_ports {
    int32_t required;
    int32_t count;
    const char *names[CDNN_NODE_MAX_INPUTS];
} op_ports_t;

struct node_check; /* validate.c: one node under validation */

/* Checks a node's shapes and the attribute values that depend on them, and
 * infers its omitted output shapes (validate.c). */
typedef cdnn_status_t (*op_shape_rule_fn)(const struct node_check *c);

typedef struct op_desc {
    const char *name;        /* cdnn_op_name: "conv_fwd" */
    const char *schema_name; /* graph.fbs's Op enum, the JSON form: "ConvFwd" */
    op_ports_t inputs, outputs;
    /* When the attributes decide how many inputs a node takes (the
     * pointwise mode's arity), exactly that many; NULL: inputs as above. */
    int32_t (*input_arity)(const cdnn_node_attr_t *attr);
    op_attr_kind_t attr;
    int float_only;        /* every port holds a floating-point type */
    int same_typed_inputs; /* this many leading inputs share one type */
    op_shape_rule_fn shape_rule;
    /* Format history.  The graph format minor that introduced the op (0:
     * format 1.0); and, for an op whose inputs became optional later, the
     * inputs a graph of a minor below `relaxed_minor` must connect
     * (`required_before`; 0: inputs.required throughout).  A graph is
     * saved as the lowest minor that holds each of its nodes
     * (op_node_minor), so that one using nothing newer keeps its bytes. */
    uint16_t since_minor;
    int32_t required_before;
    uint16_t relaxed_minor;
} op_desc_t;

/* The first graph format minor, and the first provider ABI minor, that
 * know every op and port form of the op table (op_node_minor gives what a
 * node needs). */
#define OP_TABLE_FORMAT_MINOR 3
/* A provider stamped below this ABI minor is not shown graphs that need
 * the newest graph format minor (ops and port forms it was not written
 * for); op_abi_minor_for says which ABI minor each format minor needs. */
#define OP_TABLE_ABI_MINOR 4

/** The provider ABI minor that a graph needing format minor
 * `format_minor` asks of a provider: 0 up to format 1.1, 3 for 1.2, 4 for
 * 1.3 (each format minor's ops came with an ABI minor). */
uint16_t op_abi_minor_for(uint16_t format_minor);

/** The lowest graph format minor that expresses a node of op with these
 * inputs connected (present[i] nonzero), at least 0.  0 for an unknown op. */
uint16_t op_node_minor(cdnn_op_t op, const int present[CDNN_NODE_MAX_INPUTS]);

/** A pointwise node's minor: `minor` (its op_node_minor), or 3 where its
 * mode came with graph format 1.3 (round, mod, the inverse trigonometric
 * and hyperbolic modes). */
uint16_t op_pointwise_minor(cdnn_pointwise_mode_t mode, uint16_t minor);

/** The largest op_node_minor (op_pointwise_minor for pointwise nodes) of a
 * validated view's nodes. */
uint16_t op_view_minor(const cdnn_graph_view_t *view);

/** The row of op, or NULL for a value that is not a cdnn_op_t. */
const op_desc_t *op_desc(cdnn_op_t op);

/** Port names for messages ("x", "w", "dy", ...); "?" past the op's ports. */
const char *op_input_name(cdnn_op_t op, int port);
const char *op_output_name(cdnn_op_t op, int port);

/** graph.fbs's name of an attribute kind ("ConvAttr"; "NONE" for none), or
 * "unknown" for a value that is not one. */
const char *op_attr_schema_name(int kind);

/* The shape rules the rows name (validate.c). */
cdnn_status_t shape_rule_conv_fwd(const struct node_check *c);
cdnn_status_t shape_rule_conv_bwd_data(const struct node_check *c);
cdnn_status_t shape_rule_conv_bwd_filter(const struct node_check *c);
cdnn_status_t shape_rule_matmul(const struct node_check *c);
cdnn_status_t shape_rule_pointwise(const struct node_check *c);
cdnn_status_t shape_rule_reduction(const struct node_check *c);
cdnn_status_t shape_rule_batchnorm(const struct node_check *c);
cdnn_status_t shape_rule_norm(const struct node_check *c);
cdnn_status_t shape_rule_sdpa(const struct node_check *c);
cdnn_status_t shape_rule_softmax(const struct node_check *c);
cdnn_status_t shape_rule_reshape(const struct node_check *c);
cdnn_status_t shape_rule_transpose(const struct node_check *c);
cdnn_status_t shape_rule_concat(const struct node_check *c);
cdnn_status_t shape_rule_slice(const struct node_check *c);
cdnn_status_t shape_rule_arg_extreme(const struct node_check *c);
cdnn_status_t shape_rule_pad(const struct node_check *c);
cdnn_status_t shape_rule_sdpa_bwd(const struct node_check *c);
cdnn_status_t shape_rule_gather(const struct node_check *c);
cdnn_status_t shape_rule_gather_elements(const struct node_check *c);
cdnn_status_t shape_rule_topk(const struct node_check *c);
cdnn_status_t shape_rule_pooling_fwd(const struct node_check *c);
cdnn_status_t shape_rule_pooling_bwd(const struct node_check *c);
cdnn_status_t shape_rule_resize(const struct node_check *c);
cdnn_status_t shape_rule_batchnorm_train(const struct node_check *c);
cdnn_status_t shape_rule_batchnorm_running(const struct node_check *c);
cdnn_status_t shape_rule_batchnorm_bwd(const struct node_check *c);
cdnn_status_t shape_rule_norm_bwd(const struct node_check *c);

#endif
