/*
 * matmul_pattern.h -- a graph that one matmul kernel with a fused epilogue
 * runs: a matmul, then optionally, in this order, a bias add, an
 * activation and a residual add.
 *
 *     c = act(a @ b + bias) + residual
 *
 * The match function (is this graph one for the engine?) and the dispatch
 * handlers (what launch does it need?) read a graph through this one
 * recogniser, so that they can never disagree.
 */
#ifndef CDNN_KERNELS_MATMUL_PATTERN_H
#define CDNN_KERNELS_MATMUL_PATTERN_H

#include <cdnn/provider.h>

/* Activations, numbered as the kernel ABIs number them. */
typedef enum matmul_activation {
    MATMUL_ACT_NONE = 0,
    MATMUL_ACT_RELU = 1,
    MATMUL_ACT_GELU = 2,
    MATMUL_ACT_GELU_TANH = 3,
    MATMUL_ACT_SILU = 4,
    MATMUL_ACT_TANH = 5,
} matmul_activation_t;

/* An operand indexed by the result's dims: strides[d] is its stride along
 * the result's dim d (a's last two are its rows and k, b's k and its
 * columns), 0 where it broadcasts (its dim is 1). */
typedef struct matmul_operand {
    int32_t tensor; /* index in the graph's tensors; -1: absent */
    int64_t strides[CDNN_MAX_RANK];
} matmul_operand_t;

typedef struct matmul_pattern {
    int32_t batch_rank;               /* the result's rank - 2 */
    int64_t batch_dims[CDNN_MAX_RANK];
    int64_t m, n, k;
    matmul_operand_t a, b, c, bias, residual; /* bias, residual: optional */
    matmul_activation_t activation;
} matmul_pattern_t;

/** The constraint name of an activation ("relu", "gelu", ...). */
const char *matmul_activation_name(matmul_activation_t activation);

/** The activation a pointwise node computes, as the epilogue knows it;
 * MATMUL_ACT_NONE for any it does not (a clipped relu, swish with beta other
 * than 1, modes that are no activation). */
matmul_activation_t matmul_activation_of(const cdnn_pointwise_attr_t *a);

/**
 * Recognise g; NOT_SUPPORTED, with the reason, when it is not such a
 * chain: another op, intermediates that are not virtual f32, an operand
 * that does not broadcast to the result, an activation the kernels lack,
 * steps out of order.  An add before the activation is the bias, an add
 * after it the residual (with no activation: the first add is the bias).
 */
cdnn_status_t matmul_pattern_of(const cdnn_graph_view_t *g, matmul_pattern_t *p);

/**
 * The epilogue chain alone, for another op with the matmul's epilogue (the
 * host convolution): g's nodes after the first, whose output p->c.tensor
 * is, must be the chain above.  On success p->bias, p->residual (tensor -1
 * when absent) and p->activation say the steps, and p->c is the chain's
 * result; operands' strides are indexed by the first node's output dims.
 * The caller sets p->c.tensor and p->bias.tensor = p->residual.tensor = -1.
 */
cdnn_status_t matmul_epilogue_chain(const cdnn_graph_view_t *g, matmul_pattern_t *p);

#endif
