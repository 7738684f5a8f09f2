#include "matmul_pattern.h"

#include <math.h>
#include <string.h>

#include <cdnn_sdk/error.h>

const char *matmul_activation_name(matmul_activation_t activation)
{
    static const char *const names[] = {"none", "relu", "gelu", "gelu_tanh", "silu", "tanh"};
    return (unsigned)activation < sizeof names / sizeof *names ? names[activation] : "invalid";
}

static int storable(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_F32 || type == CDNN_DATA_TYPE_F16 ||
           type == CDNN_DATA_TYPE_BF16;
}

/* t as an operand indexed by the result's dims (ranks are equal: the graph
 * is validated).  A dim of 1 is read at index 0 only, so its stride is 0
 * whether it broadcasts or not. */
static cdnn_status_t operand_of(const cdnn_graph_view_t *g, int32_t index,
                                matmul_operand_t *op)
{
    const cdnn_tensor_view_t *t = &g->tensors[index];
    if (!storable(t->type))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; the matmul kernels "
                        "take f32, f16 and bf16", t->name, cdnn_data_type_name(t->type));
    op->tensor = index;
    for (int32_t d = 0; d < t->rank; d++)
        op->strides[d] = t->dims[d] == 1 ? 0 : t->strides[d];
    return CDNN_STATUS_SUCCESS;
}

static int same_dims(const cdnn_tensor_view_t *a, const cdnn_tensor_view_t *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    return 1;
}

/* ---- the epilogue chain --------------------------------------------------------- */

/* Where the chain is: each step may follow only the ones before it. */
enum { AFTER_MATMUL, AFTER_BIAS, AFTER_ACTIVATION, AFTER_RESIDUAL };

matmul_activation_t matmul_activation_of(const cdnn_pointwise_attr_t *a)
{
    switch (a->mode) {
    case CDNN_PW_RELU_FWD:
        return a->relu_lower_clip == 0 && isinf(a->relu_upper_clip) &&
                       a->relu_upper_clip > 0 && a->relu_lower_clip_slope == 0
                   ? MATMUL_ACT_RELU
                   : MATMUL_ACT_NONE;
    case CDNN_PW_GELU_FWD:
        return MATMUL_ACT_GELU;
    case CDNN_PW_GELU_TANH_FWD:
        return MATMUL_ACT_GELU_TANH;
    case CDNN_PW_SWISH_FWD:
        return a->swish_beta == 1 ? MATMUL_ACT_SILU : MATMUL_ACT_NONE;
    case CDNN_PW_TANH_FWD:
        return MATMUL_ACT_TANH;
    default:
        return MATMUL_ACT_NONE;
    }
}

/* The add's operand that is not the chain's value: the bias before the
 * activation, the residual after it. */
static cdnn_status_t add_step(const cdnn_graph_view_t *g, int32_t other, int *stage,
                              matmul_pattern_t *p)
{
    const cdnn_tensor_view_t *t = &g->tensors[other];
    if (t->is_virtual || t->is_scalar)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is added to the fused op's result "
                        "but is %s; the kernels add tensors in memory", t->name,
                        t->is_virtual ? "virtual" : "a scalar");
    if (*stage == AFTER_MATMUL) {
        *stage = AFTER_BIAS;
        return operand_of(g, other, &p->bias);
    }
    if (*stage == AFTER_RESIDUAL)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is a third add; the kernels add "
                        "a bias before the activation and a residual after it", t->name);
    *stage = AFTER_RESIDUAL;
    return operand_of(g, other, &p->residual);
}

static cdnn_status_t activation_step(const cdnn_node_view_t *node, int *stage,
                                     matmul_pattern_t *p)
{
    matmul_activation_t act = matmul_activation_of(&node->attr.pointwise);
    if (act == MATMUL_ACT_NONE)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' (%s) is not an activation "
                        "the kernels fuse (relu, gelu, gelu_tanh, silu with beta 1, tanh)",
                        node->name, cdnn_pointwise_mode_name(node->attr.pointwise.mode));
    if (*stage >= AFTER_ACTIVATION)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' is an activation after the "
                        "activation or the residual add; the kernels apply one, before "
                        "the residual", node->name);
    *stage = AFTER_ACTIVATION;
    p->activation = act;
    return CDNN_STATUS_SUCCESS;
}

/* Node i of the chain, whose input `value` is the chain so far. */
static cdnn_status_t chain_step(const cdnn_graph_view_t *g, int32_t i, int32_t value,
                                int *stage, matmul_pattern_t *p)
{
    const cdnn_node_view_t *node = &g->nodes[i];
    const cdnn_tensor_view_t *v = &g->tensors[value];
    if (node->op != CDNN_OP_POINTWISE || (node->inputs[0] != value && node->inputs[1] != value))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' does not continue the "
                        "fused op's chain of pointwise nodes", node->name);
    if (!v->is_virtual || v->type != CDNN_DATA_TYPE_F32)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' between fused nodes must be a "
                        "virtual f32 tensor (the epilogue computes in f32)", v->name);
    if (!same_dims(&g->tensors[node->outputs[0]], &g->tensors[p->c.tensor]))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' broadcasts the fused op's "
                        "result to another shape", node->name);
    if (node->attr.pointwise.mode == CDNN_PW_ADD)
        return add_step(g, node->inputs[node->inputs[0] == value ? 1 : 0], stage, p);
    if (node->inputs[1] >= 0)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' (%s) is neither an add nor "
                        "an activation", node->name,
                        cdnn_pointwise_mode_name(node->attr.pointwise.mode));
    return activation_step(node, stage, p);
}

/* ---- the whole graph ------------------------------------------------------------- */

static cdnn_status_t matmul_of(const cdnn_graph_view_t *g, matmul_pattern_t *p)
{
    if (g->node_count < 1 || g->nodes[0].op != CDNN_OP_MATMUL)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph does not start with a "
                        "matmul");
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; the "
                        "matmul kernels accumulate in f32");
    const cdnn_node_view_t *mm = &g->nodes[0];
    const cdnn_tensor_view_t *c = &g->tensors[mm->outputs[0]];
    p->c.tensor = mm->outputs[0];
    p->batch_rank = c->rank - 2;
    memcpy(p->batch_dims, c->dims, (size_t)p->batch_rank * sizeof *c->dims);
    p->m = c->dims[c->rank - 2];
    p->n = c->dims[c->rank - 1];
    p->k = g->tensors[mm->inputs[0]].dims[c->rank - 1];
    cdnn_status_t st = operand_of(g, mm->inputs[0], &p->a);
    if (st == CDNN_STATUS_SUCCESS)
        st = operand_of(g, mm->inputs[1], &p->b);
    return st;
}

cdnn_status_t matmul_pattern_of(const cdnn_graph_view_t *g, matmul_pattern_t *p)
{
    memset(p, 0, sizeof *p);
    p->bias.tensor = -1;
    p->residual.tensor = -1;
    cdnn_status_t st = matmul_of(g, p);
    return st == CDNN_STATUS_SUCCESS ? matmul_epilogue_chain(g, p) : st;
}

cdnn_status_t matmul_epilogue_chain(const cdnn_graph_view_t *g, matmul_pattern_t *p)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    int32_t value = p->c.tensor;
    int stage = AFTER_MATMUL;
    for (int32_t i = 1; st == CDNN_STATUS_SUCCESS && i < g->node_count; i++) {
        st = chain_step(g, i, value, &stage, p);
        value = g->nodes[i].outputs[0];
    }
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (g->tensors[value].is_virtual)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the chain's result '%s' is virtual",
                        g->tensors[value].name);
    return operand_of(g, value, &p->c);
}
