/*
 * reference_softmax.c -- softmax, log-softmax, argmax and argmin along one
 * axis for the reference engine.
 *
 * Each row (x along the axis, the other coordinates fixed) is read once,
 * keeping a running maximum m and the sum s of exp(x - m) rescaled as m
 * grows (the one-pass form of "subtract the maximum, then exponentiate"),
 * both in double; a second walk writes y = exp(x - m) / s or x - m - log s.
 * Only what is stored is rounded.
 *
 * A row holding a NaN or +inf, or only -inf, has no defined softmax: its y
 * is NaN throughout (NumPy's max-subtracted formula gives the same).
 */
#include "reference.h"

#include <math.h>

#include <cdnn_sdk/numeric.h>

typedef struct row_stats {
    double max, sum;
    int undefined; /* NaN or +inf seen, or no finite value */
} row_stats_t;

static row_stats_t row_stats(const ref_tensor_t *x, int64_t *idx, int32_t axis)
{
    row_stats_t r = {-INFINITY, 0.0, 0};
    for (int64_t i = 0; i < x->view->dims[axis]; i++) {
        idx[axis] = i;
        double v = ref_load(x, idx);
        if (isnan(v) || v == INFINITY) {
            r.undefined = 1;
        } else if (v == -INFINITY) {
            continue; /* exp(-inf - m) = 0 */
        } else if (v > r.max) {
            r.sum = r.sum * exp(r.max - v) + 1.0;
            r.max = v;
        } else {
            r.sum += exp(v - r.max);
        }
    }
    r.undefined |= r.max == -INFINITY;
    return r;
}

static void softmax_rows(const cdnn_node_view_t *node, const ref_node_tensors_t *t,
                         int log_space)
{
    const ref_tensor_t *x = t->in[0], *y = t->out[0];
    int32_t rank = x->view->rank, axis = node->attr.axis;
    int64_t outer[CDNN_MAX_RANK], idx[CDNN_MAX_RANK] = {0};
    for (int32_t d = 0; d < rank; d++)
        outer[d] = d == axis ? 1 : x->view->dims[d];
    do {
        row_stats_t r = row_stats(x, idx, axis);
        double log_sum = log(r.sum);
        for (int64_t i = 0; i < x->view->dims[axis]; i++) {
            idx[axis] = i;
            double shifted = ref_load(x, idx) - r.max;
            double v = r.undefined ? NAN
                       : log_space ? shifted - log_sum
                                   : exp(shifted) / r.sum;
            ref_store(y, idx, v);
        }
        idx[axis] = 0;
    } while (ref_next_index(idx, outer, rank));
}

void ref_softmax(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    softmax_rows(node, t, 0);
}

void ref_log_softmax(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    softmax_rows(node, t, 1);
}

/* ------------------------------------------------------------------------
 * Argmax and argmin (NumPy's: the first extreme; a NaN is the extreme, so
 * the first NaN's index).  Integers are compared as integers, exactly.
 * ------------------------------------------------------------------------ */

static int64_t arg_extreme_row(const ref_tensor_t *x, int64_t *idx, int32_t axis,
                               int want_max)
{
    int is_int = !cdnn_data_type_is_float(x->view->type);
    int64_t best = 0, best_i = 0;
    double best_f = 0;
    for (int64_t i = 0; i < x->view->dims[axis]; i++) {
        idx[axis] = i;
        if (is_int) {
            int64_t v = ref_load_int(x, idx);
            if (i == 0 || (want_max ? v > best_i : v < best_i)) {
                best_i = v;
                best = i;
            }
        } else {
            double v = ref_load(x, idx);
            if (isnan(v))
                return i;
            if (i == 0 || (want_max ? v > best_f : v < best_f)) {
                best_f = v;
                best = i;
            }
        }
    }
    return best;
}

static void arg_extreme(const cdnn_node_view_t *node, const ref_node_tensors_t *t,
                        int want_max)
{
    const ref_tensor_t *x = t->in[0], *y = t->out[0];
    int32_t rank = x->view->rank, axis = node->attr.axis;
    int64_t idx[CDNN_MAX_RANK] = {0};
    do {
        int64_t at = arg_extreme_row(x, idx, axis, want_max);
        idx[axis] = 0; /* y's coordinate: 0 on the axis */
        ref_store_int(y, idx, at);
    } while (ref_next_index(idx, y->view->dims, rank));
}

void ref_argmax(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    arg_extreme(node, t, 1);
}

void ref_argmin(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    arg_extreme(node, t, 0);
}
