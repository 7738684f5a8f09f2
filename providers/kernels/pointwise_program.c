#include "pointwise_program.h"

#include <math.h>
#include <string.h>

#include <cdnn_sdk/error.h>

/* The compiler's state: the program so far and its stack depth. */
typedef struct compiler {
    const cdnn_graph_view_t *g;
    pw_program_t *p;
    int32_t depth;
} compiler_t;

static cdnn_status_t emit(compiler_t *c, pw_op_t op, int32_t input, float constant)
{
    static const int8_t effect[PW_OP_COUNT] = {
        [PW_PUSH_INPUT] = 1, [PW_PUSH_CONST] = 1, [PW_ADD] = -1, [PW_SUB] = -1,
        [PW_MUL] = -1,       [PW_DIV] = -1,       [PW_MAX] = -1, [PW_MIN] = -1};
    if (c->p->length == PW_MAX_PROGRAM)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph's expression needs more "
                        "than %d instructions", PW_MAX_PROGRAM);
    c->depth += effect[op];
    if (c->depth > PW_MAX_STACK)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph's expression needs a stack "
                        "deeper than %d", PW_MAX_STACK);
    c->p->program[c->p->length++] = (pw_instr_t){op, input, constant};
    return CDNN_STATUS_SUCCESS;
}

/* The node that writes tensor t, or -1 (a graph input). */
static int32_t writer_of(const cdnn_graph_view_t *g, int32_t t)
{
    for (int32_t n = 0; n < g->node_count; n++)
        if (g->nodes[n].outputs[0] == t)
            return n;
    return -1;
}

static cdnn_status_t push_input(compiler_t *c, int32_t t)
{
    const cdnn_tensor_view_t *v = &c->g->tensors[t];
    pw_program_t *p = c->p;
    if (v->is_scalar)
        return emit(c, PW_PUSH_CONST, 0, (float)v->scalar_value);
    for (int32_t i = 0; i < p->input_count; i++)
        if (p->inputs[i] == t)
            return emit(c, PW_PUSH_INPUT, i, 0);
    if (p->input_count == PW_MAX_INPUTS)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph reads more than %d tensors",
                        PW_MAX_INPUTS);
    p->inputs[p->input_count++] = t;
    return emit(c, PW_PUSH_INPUT, p->input_count - 1, 0);
}

/* ---- one node ----------------------------------------------------------------------- */

static int default_relu(const cdnn_pointwise_attr_t *a)
{
    return a->relu_lower_clip == 0 && isinf(a->relu_upper_clip) && a->relu_upper_clip > 0 &&
           a->relu_lower_clip_slope == 0;
}

/* The ops of a mode whose inputs are on the stack, or PW_OP_COUNT when the
 * kernels have none. */
static pw_op_t op_of(const cdnn_pointwise_attr_t *a)
{
    switch (a->mode) {
    case CDNN_PW_ADD: return PW_ADD;
    case CDNN_PW_SUB: return PW_SUB;
    case CDNN_PW_MUL: return PW_MUL;
    case CDNN_PW_DIV: return PW_DIV;
    case CDNN_PW_MAX: return PW_MAX;
    case CDNN_PW_MIN: return PW_MIN;
    case CDNN_PW_NEG: return PW_NEG;
    case CDNN_PW_ABS: return PW_ABS;
    case CDNN_PW_EXP: return PW_EXP;
    case CDNN_PW_LOG: return PW_LOG;
    case CDNN_PW_SQRT: return PW_SQRT;
    case CDNN_PW_RSQRT: return PW_RSQRT;
    case CDNN_PW_RECIPROCAL: return PW_RECIPROCAL;
    case CDNN_PW_RELU_FWD: return default_relu(a) ? PW_RELU : PW_OP_COUNT;
    case CDNN_PW_GELU_FWD: return PW_GELU;
    case CDNN_PW_GELU_TANH_FWD: return PW_GELU_TANH;
    case CDNN_PW_SIGMOID_FWD: return PW_SIGMOID;
    case CDNN_PW_SWISH_FWD: return a->swish_beta == 1 ? PW_SILU : PW_OP_COUNT;
    case CDNN_PW_TANH_FWD: return PW_TANH;
    default: return PW_OP_COUNT;
    }
}

static cdnn_status_t compile_tensor(compiler_t *c, int32_t t);

static cdnn_status_t compile_node(compiler_t *c, const cdnn_node_view_t *n)
{
    const cdnn_pointwise_attr_t *a = &n->attr.pointwise;
    int fma = a->mode == CDNN_PW_FMA;
    pw_op_t op = fma ? PW_MUL : op_of(a);
    if (n->op != CDNN_OP_POINTWISE)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' is a %s, not a pointwise "
                        "node", n->name, cdnn_op_name(n->op));
    if (op == PW_OP_COUNT && a->mode != CDNN_PW_IDENTITY)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "node '%s' is %s, which the pointwise "
                        "kernels lack", n->name, cdnn_pointwise_mode_name(a->mode));
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    /* FMA's a * b first, then + c: its third input after the multiply. */
    for (int i = 0; st == CDNN_STATUS_SUCCESS && i < (fma ? 2 : 3) && n->inputs[i] >= 0; i++)
        st = compile_tensor(c, n->inputs[i]);
    if (st == CDNN_STATUS_SUCCESS && op != PW_OP_COUNT)
        st = emit(c, op, 0, 0);
    if (st == CDNN_STATUS_SUCCESS && fma)
        st = compile_tensor(c, n->inputs[2]);
    if (st == CDNN_STATUS_SUCCESS && fma)
        st = emit(c, PW_ADD, 0, 0);
    return st;
}

/* Tensor t's value on the stack: pushed, or computed by its writer. */
static cdnn_status_t compile_tensor(compiler_t *c, int32_t t)
{
    const cdnn_tensor_view_t *v = &c->g->tensors[t];
    int32_t n = writer_of(c->g, t);
    if (n < 0)
        return push_input(c, t);
    if (t != c->p->output && (!v->is_virtual || v->type != CDNN_DATA_TYPE_F32))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' between fused nodes must be a "
                        "virtual f32 tensor (the kernels compute in f32)", v->name);
    return compile_node(c, &c->g->nodes[n]);
}

/* ---- the graph ----------------------------------------------------------------------- */

/* The one tensor in memory that a node writes. */
static cdnn_status_t find_result(const cdnn_graph_view_t *g, int32_t *result)
{
    *result = -1;
    for (int32_t n = 0; n < g->node_count; n++) {
        int32_t t = g->nodes[n].outputs[0];
        if (g->tensors[t].is_virtual)
            continue;
        if (*result >= 0)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph writes '%s' and '%s'; "
                            "the pointwise kernels write one tensor",
                            g->tensors[*result].name, g->tensors[t].name);
        *result = t;
    }
    if (*result < 0)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph writes no tensor in memory");
    return CDNN_STATUS_SUCCESS;
}

static int storable(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_F32 || type == CDNN_DATA_TYPE_F16 ||
           type == CDNN_DATA_TYPE_BF16;
}

/* Every tensor in memory is of a type the kernels load and store. */
static cdnn_status_t check_types(const cdnn_graph_view_t *g, const pw_program_t *p)
{
    for (int32_t i = 0; i <= p->input_count; i++) {
        const cdnn_tensor_view_t *t = &g->tensors[i < p->input_count ? p->inputs[i]
                                                                     : p->output];
        if (!storable(t->type))
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; the pointwise kernels "
                            "take f32, f16 and bf16", t->name, cdnn_data_type_name(t->type));
    }
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t pw_program_compile(const cdnn_graph_view_t *g, pw_program_t *p)
{
    compiler_t c = {g, p, 0};
    memset(p, 0, sizeof *p);
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for f64 compute; the "
                        "pointwise kernels compute in f32");
    /* Every node is at least one instruction (an identity aside), and the
     * recursion below is as deep as the longest chain of nodes. */
    if (g->node_count > PW_MAX_PROGRAM)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph has %d nodes; the pointwise "
                        "kernels run programs of at most %d instructions", g->node_count,
                        PW_MAX_PROGRAM);
    cdnn_status_t st = find_result(g, &p->output);
    if (st == CDNN_STATUS_SUCCESS)
        st = compile_tensor(&c, p->output);
    if (st == CDNN_STATUS_SUCCESS && p->length < 1)
        st = sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph computes nothing");
    if (st == CDNN_STATUS_SUCCESS)
        st = check_types(g, p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const cdnn_tensor_view_t *out = &g->tensors[p->output];
    p->rank = out->rank;
    memcpy(p->dims, out->dims, sizeof p->dims);
    return CDNN_STATUS_SUCCESS;
}

void pw_broadcast_strides(const cdnn_tensor_view_t *t, int64_t *strides)
{
    for (int32_t d = 0; d < CDNN_MAX_RANK; d++)
        strides[d] = d < t->rank && t->dims[d] != 1 ? t->strides[d] : 0;
}
