/*
 * reference_tensor.c -- strided, broadcasting element access for the
 * reference engine.
 */
#include "reference.h"

#include <cdnn_sdk/numeric.h>

/* Byte offset of idx; a dim of 1 contributes nothing, so inputs broadcast
 * and a stride declared on a dim of 1 never matters. */
static int64_t byte_offset(const ref_tensor_t *t, const int64_t *idx)
{
    const cdnn_tensor_view_t *v = t->view;
    int64_t elements = 0;
    for (int32_t d = 0; d < v->rank; d++)
        if (v->dims[d] != 1)
            elements += idx[d] * v->strides[d];
    return elements * (int64_t)t->elem_size;
}

double ref_load(const ref_tensor_t *t, const int64_t *idx)
{
    if (!t->data)
        return t->scalar;
    return cdnn_load_element(t->view->type, t->data + byte_offset(t, idx));
}

void ref_store(const ref_tensor_t *t, const int64_t *idx, double v)
{
    cdnn_store_element(t->view->type, t->data + byte_offset(t, idx), v);
}

int64_t ref_load_int(const ref_tensor_t *t, const int64_t *idx)
{
    if (!t->data)
        return t->scalar_int;
    return cdnn_load_element_int(t->view->type, t->data + byte_offset(t, idx));
}

void ref_store_int(const ref_tensor_t *t, const int64_t *idx, int64_t v)
{
    cdnn_store_element_int(t->view->type, t->data + byte_offset(t, idx), v);
}

int ref_next_index(int64_t *idx, const int64_t *dims, int32_t rank)
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return 1;
        idx[d] = 0;
    }
    return 0;
}

void ref_join_index(int64_t *sum, const int64_t *a, const int64_t *b,
                    int32_t rank)
{
    for (int32_t d = 0; d < rank; d++)
        sum[d] = a[d] + b[d];
}
