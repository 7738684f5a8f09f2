/*
 * pw_compile.c -- turn the pointwise nodes of a graph into a pw_program.
 */
#include <string.h>

#include <cdnn_sdk/numeric.h>

#include "cpu_engine.h"
#include "pw_program.h"

typedef struct pw_compiler {
    pw_program_t *p;
    const cdnn_graph_view_t *g;
    int32_t entry_tensor;
    int32_t value_of[PW_MAX_GRAPH_TENSORS]; /* -1 until known */
} pw_compiler_t;

static int same_dims(const cdnn_tensor_view_t *a, const cdnn_tensor_view_t *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    return 1;
}

/* The index space: the dims every non-virtual output shares. */
static cdnn_status_t find_space(const cdnn_graph_view_t *g, int32_t first,
                                const cdnn_tensor_view_t **space)
{
    *space = NULL;
    for (int32_t i = first; i < g->node_count; i++) {
        const cdnn_tensor_view_t *y = &g->tensors[g->nodes[i].outputs[0]];
        if (y->is_virtual)
            continue;
        if (*space && !same_dims(*space, y))
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                            "outputs '%s' and '%s' differ in shape; one pass "
                            "can write only outputs of one shape",
                            (*space)->name, y->name);
        if (!*space)
            *space = y;
    }
    if (!*space)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the pointwise nodes write no non-virtual tensor");
    return CDNN_STATUS_SUCCESS;
}

/* A tensor's strides in the index space: 0 where it broadcasts. */
static cdnn_status_t space_strides(const pw_program_t *p,
                                   const cdnn_tensor_view_t *t,
                                   int64_t *strides)
{
    if (t->rank != p->rank)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "tensor '%s' has rank %d, the pointwise output %d",
                        t->name, t->rank, p->rank);
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] != 1 && t->dims[d] != p->dims[d])
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                            "tensor '%s' dim %d is %lld; it must be 1 or "
                            "%lld to broadcast to the output",
                            t->name, d, (long long)t->dims[d],
                            (long long)p->dims[d]);
        strides[d] = t->dims[d] == 1 ? 0 : t->strides[d];
    }
    return CDNN_STATUS_SUCCESS;
}

/* A pass-by-value scalar, rounded to its type as a store would. */
static float scalar_of(const cdnn_tensor_view_t *t)
{
    unsigned char bytes[8];
    cdnn_store_element(t->type, bytes, t->scalar_value);
    return (float)cdnn_load_element(t->type, bytes);
}

static cdnn_status_t add_tensor_input(pw_compiler_t *c, int32_t index)
{
    const cdnn_tensor_view_t *t = &c->g->tensors[index];
    int32_t *value = &c->value_of[index];
    if (index == c->entry_tensor)
        return pw_add_entry(c->p, value);
    if (t->is_scalar)
        return pw_add_const(c->p, scalar_of(t), value);
    if (t->is_virtual)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "virtual tensor '%s' is not computed by the "
                        "pointwise nodes",
                        t->name);
    if (!pw_type_loadable(t->type))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "input '%s' is %s; pointwise work reads f32, f16, "
                        "bf16, bool, i8 and u8",
                        t->name, cdnn_data_type_name(t->type));
    int64_t strides[CDNN_MAX_RANK];
    cdnn_status_t st = space_strides(c->p, t, strides);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    return pw_add_input(c->p, index, t->type, strides, value);
}

/* Virtual results stay in float, except bool, which is rounded to 0/1;
 * integer intermediates would need wrapping that is not done here, and an
 * f64 one must be computed in f64 (cdnn.h, "Numeric semantics"). */
static cdnn_status_t check_result(const cdnn_node_view_t *node,
                                  const cdnn_tensor_view_t *y)
{
    int ok = y->is_virtual ? (cdnn_data_type_is_float(y->type) &&
                              y->type != CDNN_DATA_TYPE_F64) ||
                                 y->type == CDNN_DATA_TYPE_BOOL
                           : pw_type_storable(y->type);
    if (!ok)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "node '%s' writes %s tensor '%s' as %s; pointwise "
                        "work writes f32, f16, bf16 and bool (in float: "
                        "f64 is left to engines that compute in f64)",
                        node->name, y->is_virtual ? "virtual" : "output",
                        y->name, cdnn_data_type_name(y->type));
    return CDNN_STATUS_SUCCESS;
}

/* A node whose inputs are all integers or bools divides, takes a modulus
 * and raises to a power in exact integer arithmetic (truncating: u8 12 / 23 is 0; cdnn.h,
 * "Numeric semantics"), which this float program does not do.  Its other
 * modes agree: the integers it loads (i8, u8, bool) are exact in float,
 * and so are their sums, products and comparisons. */
static cdnn_status_t check_float_agrees(const pw_compiler_t *c,
                                        const cdnn_node_view_t *node,
                                        int32_t arity)
{
    cdnn_pointwise_mode_t mode = node->attr.pointwise.mode;
    if (mode != CDNN_PW_DIV && mode != CDNN_PW_POW && mode != CDNN_PW_RECIPROCAL &&
        mode != CDNN_PW_FMOD && mode != CDNN_PW_REMAINDER) /* x % 0 is 0 */
        return CDNN_STATUS_SUCCESS;
    for (int32_t k = 0; k < arity; k++)
        if (node->inputs[k] == c->entry_tensor ||
            cdnn_data_type_is_float(c->g->tensors[node->inputs[k]].type))
            return CDNN_STATUS_SUCCESS;
    return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                    "node '%s' computes %s on integers, exactly in integer "
                    "arithmetic; this engine computes in float",
                    node->name, cdnn_pointwise_mode_name(mode));
}

static cdnn_status_t add_node(pw_compiler_t *c, const cdnn_node_view_t *node)
{
    if (node->op != CDNN_OP_POINTWISE)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "node '%s' is %s, not pointwise", node->name,
                        cdnn_op_name(node->op));
    int32_t arity = cdnn_pointwise_arity(node->attr.pointwise.mode);
    cdnn_status_t agrees = check_float_agrees(c, node, arity);
    if (agrees != CDNN_STATUS_SUCCESS)
        return agrees;
    int32_t in[3] = {-1, -1, -1};
    for (int32_t k = 0; k < arity; k++) {
        int32_t t = node->inputs[k];
        cdnn_status_t st = CDNN_STATUS_SUCCESS;
        if (c->value_of[t] < 0)
            st = add_tensor_input(c, t);
        if (st != CDNN_STATUS_SUCCESS)
            return st;
        in[k] = c->value_of[t];
    }
    const cdnn_tensor_view_t *y = &c->g->tensors[node->outputs[0]];
    int64_t strides[CDNN_MAX_RANK];
    cdnn_status_t st = check_result(node, y);
    if (st == CDNN_STATUS_SUCCESS)
        st = space_strides(c->p, y, strides);
    if (st == CDNN_STATUS_SUCCESS)
        st = pw_add_op(c->p, &node->attr.pointwise, in,
                       y->is_virtual && y->type == CDNN_DATA_TYPE_BOOL,
                       &c->value_of[node->outputs[0]]);
    if (st == CDNN_STATUS_SUCCESS && !y->is_virtual)
        st = pw_add_output(c->p, c->value_of[node->outputs[0]],
                           node->outputs[0], y->type, strides);
    return st;
}

cdnn_status_t pw_compile_graph(pw_program_t *p, const cdnn_graph_view_t *g,
                               int32_t first_node, int32_t entry_tensor,
                               int32_t threads)
{
    if (g->tensor_count > PW_MAX_GRAPH_TENSORS)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the graph has %d tensors; the fast engines take at "
                        "most %d",
                        g->tensor_count, PW_MAX_GRAPH_TENSORS);
    const cdnn_tensor_view_t *space;
    cdnn_status_t st = find_space(g, first_node, &space);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (entry_tensor >= 0 && !same_dims(&g->tensors[entry_tensor], space))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "output '%s' does not have the shape of '%s'; the "
                        "pointwise epilogue cannot broadcast it",
                        space->name, g->tensors[entry_tensor].name);
    pw_compiler_t c = {.p = p, .g = g, .entry_tensor = entry_tensor};
    memset(c.value_of, -1, sizeof c.value_of);
    pw_init(p, space->rank, space->dims, threads);
    for (int32_t i = first_node;
         i < g->node_count && st == CDNN_STATUS_SUCCESS; i++)
        st = add_node(&c, &g->nodes[i]);
    return st != CDNN_STATUS_SUCCESS ? st : pw_finish(p);
}

/* The dims of t from the largest stride to the smallest (a stable sort,
 * so that equal strides keep row-major order). */
static void dims_by_stride(const cdnn_tensor_view_t *t, int32_t *order)
{
    for (int32_t d = 0; d < t->rank; d++) {
        int32_t at = d;
        for (; at > 0 && t->strides[order[at - 1]] < t->strides[d]; at--)
            order[at] = order[at - 1];
        order[at] = d;
    }
}

/* The copy's index space runs in the order of the destination's memory,
 * so that a copy into a transposed layout writes (and, from a source of
 * that layout, reads) consecutive elements. */
cdnn_status_t pw_compile_copy(pw_program_t *p, const cdnn_tensor_view_t *from,
                              int32_t tensor, const cdnn_tensor_view_t *to,
                              int32_t threads)
{
    int32_t order[CDNN_MAX_RANK];
    int64_t dims[CDNN_MAX_RANK], read[CDNN_MAX_RANK], write[CDNN_MAX_RANK];
    dims_by_stride(to, order);
    for (int32_t k = 0; k < to->rank; k++) {
        int32_t d = order[k];
        dims[k] = to->dims[d];
        read[k] = to->dims[d] == 1 ? 0 : from->strides[d];
        write[k] = to->strides[d];
    }
    int32_t value;
    pw_init(p, to->rank, dims, threads);
    cdnn_status_t st = pw_add_input(p, tensor, from->type, read, &value);
    if (st == CDNN_STATUS_SUCCESS)
        st = pw_add_output(p, value, PW_BUFFER, to->type, write);
    return st != CDNN_STATUS_SUCCESS ? st : pw_finish(p);
}

cdnn_status_t pw_compile_pack(pw_program_t *p, const cdnn_tensor_view_t *t,
                              int32_t tensor, int32_t threads)
{
    cdnn_tensor_view_t packed = *t;
    int64_t step = 1;
    packed.type = CDNN_DATA_TYPE_F32;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        packed.strides[d] = step;
        step *= t->dims[d];
    }
    return pw_compile_copy(p, t, tensor, &packed, threads);
}
