/*
 * reference_ops.c -- matmul, pointwise and reduction nodes for the
 * reference engine.
 */
#include "reference.h"

#include <math.h>

#include <cdnn_sdk/numeric.h>

/* c[..., m, n] = sum over k of a[..., m, k] * b[..., k, n].  Indexing a and
 * b with c's batch coordinates broadcasts their batch dims of 1. */
static double matmul_element(const ref_tensor_t *a, const ref_tensor_t *b,
                             const int64_t *c_idx, int32_t rank)
{
    int64_t a_idx[CDNN_MAX_RANK], b_idx[CDNN_MAX_RANK];
    for (int32_t d = 0; d < rank; d++)
        a_idx[d] = b_idx[d] = c_idx[d];
    double sum = 0;
    for (int64_t k = 0; k < a->view->dims[rank - 1]; k++) {
        a_idx[rank - 1] = k;
        b_idx[rank - 2] = k;
        sum += ref_load(a, a_idx) * ref_load(b, b_idx);
    }
    return sum;
}

void ref_matmul(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    (void)node;
    const ref_tensor_t *a = t->in[0], *b = t->in[1], *c = t->out[0];
    int64_t idx[CDNN_MAX_RANK] = {0};
    do {
        ref_store(c, idx, matmul_element(a, b, idx, c->view->rank));
    } while (ref_next_index(idx, c->view->dims, c->view->rank));
}

/* An absent input (beyond the mode's arity) reads as 0. */
static double load_input(const ref_tensor_t *t, const int64_t *idx)
{
    return t ? ref_load(t, idx) : 0.0;
}

/* A node computes on integers when each of its inputs is an integer or
 * bool tensor. */
static int all_inputs_integer(const ref_node_tensors_t *t)
{
    for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
        if (t->in[p] && cdnn_data_type_is_float(t->in[p]->view->type))
            return 0;
    return 1;
}

static int64_t load_input_int(const ref_tensor_t *t, const int64_t *idx)
{
    return t ? ref_load_int(t, idx) : 0;
}

static void pointwise_int(cdnn_pointwise_mode_t mode, const ref_node_tensors_t *t)
{
    const ref_tensor_t *y = t->out[0];
    int64_t idx[CDNN_MAX_RANK] = {0};
    do {
        int64_t a = load_input_int(t->in[0], idx);
        int64_t b = load_input_int(t->in[1], idx);
        int64_t c = load_input_int(t->in[2], idx);
        ref_store_int(y, idx, ref_pointwise_int(mode, a, b, c));
    } while (ref_next_index(idx, y->view->dims, y->view->rank));
}

void ref_pointwise(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const ref_tensor_t *y = t->out[0];
    if (all_inputs_integer(t) && ref_pointwise_is_exact_int(node->attr.pointwise.mode)) {
        pointwise_int(node->attr.pointwise.mode, t);
        return;
    }
    int64_t idx[CDNN_MAX_RANK] = {0};
    do {
        double a = load_input(t->in[0], idx);
        double b = load_input(t->in[1], idx);
        double c = load_input(t->in[2], idx);
        ref_store(y, idx, ref_pointwise_value(&node->attr.pointwise, a, b, c));
    } while (ref_next_index(idx, y->view->dims, y->view->rank));
}

static double reduce_start(cdnn_reduction_mode_t mode)
{
    switch (mode) {
    case CDNN_REDUCE_MUL: return 1.0;
    case CDNN_REDUCE_MIN: return INFINITY;
    case CDNN_REDUCE_MAX: return -INFINITY;
    default: return 0.0; /* sums, and amax since |x| >= 0 */
    }
}

static double reduce_step(cdnn_reduction_mode_t mode, double acc, double v)
{
    switch (mode) {
    case CDNN_REDUCE_MUL: return acc * v;
    case CDNN_REDUCE_MIN: return ref_min(acc, v);
    case CDNN_REDUCE_MAX: return ref_max(acc, v);
    case CDNN_REDUCE_AMAX: return ref_max(acc, fabs(v));
    case CDNN_REDUCE_NORM1: return acc + fabs(v);
    case CDNN_REDUCE_NORM2: return acc + v * v;
    default: return acc + v; /* add, avg */
    }
}

static double reduce_finish(cdnn_reduction_mode_t mode, double acc,
                            int64_t count)
{
    if (mode == CDNN_REDUCE_AVG)
        return acc / (double)count;
    if (mode == CDNN_REDUCE_NORM2)
        return sqrt(acc);
    return acc;
}

/* Reduce x over the window of dims where y has 1, at y's coordinate. */
static double reduce_element(cdnn_reduction_mode_t mode, const ref_tensor_t *x,
                             const int64_t *window, const int64_t *y_idx)
{
    int32_t rank = x->view->rank;
    int64_t w[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    int64_t count = 0;
    double acc = reduce_start(mode);
    do {
        ref_join_index(x_idx, y_idx, w, rank);
        acc = reduce_step(mode, acc, ref_load(x, x_idx));
        count++;
    } while (ref_next_index(w, window, rank));
    return reduce_finish(mode, acc, count);
}

/* Integers (cdnn.h, "Numeric semantics"): add, mul, min, max, amax and
 * norm1 exactly in 64-bit two's complement, wrapping; |x| is exact (|-128|
 * is 128), so only |INT64_MIN| wraps.  avg and norm2 compute in double. */
static int reduction_is_exact_int(cdnn_reduction_mode_t mode)
{
    return mode != CDNN_REDUCE_AVG && mode != CDNN_REDUCE_NORM2;
}

static int64_t int_abs(int64_t v)
{
    return v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
}

static int64_t reduce_step_int(cdnn_reduction_mode_t mode, int64_t acc, int64_t v)
{
    switch (mode) {
    case CDNN_REDUCE_MUL: return (int64_t)((uint64_t)acc * (uint64_t)v);
    case CDNN_REDUCE_MIN: return v < acc ? v : acc;
    case CDNN_REDUCE_MAX: return v > acc ? v : acc;
    case CDNN_REDUCE_AMAX: return int_abs(v) > acc ? int_abs(v) : acc;
    case CDNN_REDUCE_NORM1: return (int64_t)((uint64_t)acc + (uint64_t)int_abs(v));
    default: return (int64_t)((uint64_t)acc + (uint64_t)v); /* add */
    }
}

static int64_t reduce_start_int(cdnn_reduction_mode_t mode)
{
    switch (mode) {
    case CDNN_REDUCE_MUL: return 1;
    case CDNN_REDUCE_MIN: return INT64_MAX;
    case CDNN_REDUCE_MAX: return INT64_MIN;
    default: return 0;
    }
}

static int64_t reduce_element_int(cdnn_reduction_mode_t mode, const ref_tensor_t *x,
                                  const int64_t *window, const int64_t *y_idx)
{
    int32_t rank = x->view->rank;
    int64_t w[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    int64_t acc = reduce_start_int(mode);
    do {
        ref_join_index(x_idx, y_idx, w, rank);
        acc = reduce_step_int(mode, acc, ref_load_int(x, x_idx));
    } while (ref_next_index(w, window, rank));
    return acc;
}

void ref_reduction(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const ref_tensor_t *x = t->in[0], *y = t->out[0];
    int exact_int = !cdnn_data_type_is_float(x->view->type) &&
                    reduction_is_exact_int(node->attr.reduction);
    int32_t rank = y->view->rank;
    int64_t window[CDNN_MAX_RANK];
    for (int32_t d = 0; d < rank; d++)
        window[d] = y->view->dims[d] == 1 ? x->view->dims[d] : 1;
    int64_t idx[CDNN_MAX_RANK] = {0};
    do {
        if (exact_int)
            ref_store_int(y, idx, reduce_element_int(node->attr.reduction, x, window, idx));
        else
            ref_store(y, idx, reduce_element(node->attr.reduction, x, window, idx));
    } while (ref_next_index(idx, y->view->dims, rank));
}
