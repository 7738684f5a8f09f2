/*
 * reference_movement.c -- reshape, transpose, concat, slice and pad for
 * the reference engine.
 *
 * Data movement converts nothing (x and y have one type), so elements are
 * copied as integers where the type is an integer or bool one (exact for
 * i64 beyond 2^53) and as doubles otherwise (exact for every float type).
 */
#include "reference.h"

#include <cdnn_sdk/numeric.h>

static void copy_element(const ref_tensor_t *x, const int64_t *x_idx,
                         const ref_tensor_t *y, const int64_t *y_idx)
{
    if (cdnn_data_type_is_float(x->view->type))
        ref_store(y, y_idx, ref_load(x, x_idx));
    else
        ref_store_int(y, y_idx, ref_load_int(x, x_idx));
}

/* x and y walked together, each in row-major order of its own dims: the
 * n-th element of one is the n-th of the other. */
void ref_reshape(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    (void)node;
    const ref_tensor_t *x = t->in[0], *y = t->out[0];
    int64_t x_idx[CDNN_MAX_RANK] = {0}, y_idx[CDNN_MAX_RANK] = {0};
    do {
        copy_element(x, x_idx, y, y_idx);
        ref_next_index(x_idx, x->view->dims, x->view->rank);
    } while (ref_next_index(y_idx, y->view->dims, y->view->rank));
}

/* y's coordinate i is x's coordinate perm[i]. */
void ref_transpose(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const cdnn_transpose_attr_t *a = &node->attr.transpose;
    const ref_tensor_t *x = t->in[0], *y = t->out[0];
    int64_t x_idx[CDNN_MAX_RANK] = {0}, y_idx[CDNN_MAX_RANK] = {0};
    do {
        for (int32_t i = 0; i < a->rank; i++)
            x_idx[a->perm[i]] = y_idx[i];
        copy_element(x, x_idx, y, y_idx);
    } while (ref_next_index(y_idx, y->view->dims, y->view->rank));
}

/* y's coordinate on the axis picks the input (the first whose extent it
 * falls in) and, less the extents before, the coordinate in it. */
void ref_concat(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const ref_tensor_t *y = t->out[0];
    int32_t axis = node->attr.axis;
    int64_t y_idx[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    do {
        int p = 0;
        int64_t at = y_idx[axis];
        while (at >= t->in[p]->view->dims[axis]) /* validation: some p holds it */
            at -= t->in[p++]->view->dims[axis];
        for (int32_t d = 0; d < y->view->rank; d++)
            x_idx[d] = d == axis ? at : y_idx[d];
        copy_element(t->in[p], x_idx, y, y_idx);
    } while (ref_next_index(y_idx, y->view->dims, y->view->rank));
}

/* x's coordinate d is start[d] + y's coordinate d times step[d]. */
void ref_slice(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const cdnn_slice_attr_t *a = &node->attr.slice;
    const ref_tensor_t *x = t->in[0], *y = t->out[0];
    int64_t y_idx[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    do {
        for (int32_t d = 0; d < a->rank; d++)
            x_idx[d] = a->start[d] + y_idx[d] * a->step[d];
        copy_element(x, x_idx, y, y_idx);
    } while (ref_next_index(y_idx, y->view->dims, y->view->rank));
}

/* y's coordinate less pre, where it lies in x, reads x; elsewhere value. */
void ref_pad(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const cdnn_pad_attr_t *a = &node->attr.pad;
    const ref_tensor_t *x = t->in[0], *y = t->out[0];
    unsigned char fill[8]; /* value as y's type holds it */
    cdnn_store_element(y->view->type, fill, a->value);
    int64_t fill_int = cdnn_load_element_int(y->view->type, fill);
    double fill_double = cdnn_load_element(y->view->type, fill);
    int64_t y_idx[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    do {
        int inside = 1;
        for (int32_t d = 0; d < a->rank; d++) {
            x_idx[d] = y_idx[d] - a->pre[d];
            inside &= x_idx[d] >= 0 && x_idx[d] < x->view->dims[d];
        }
        if (inside)
            copy_element(x, x_idx, y, y_idx);
        else if (cdnn_data_type_is_float(y->view->type))
            ref_store(y, y_idx, fill_double);
        else
            ref_store_int(y, y_idx, fill_int);
    } while (ref_next_index(y_idx, y->view->dims, y->view->rank));
}
