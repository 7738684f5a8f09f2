/*
 * reference_gather.c -- gather, gather-elements and top-k for the
 * reference engine.
 *
 * Gathers check every index before they read x: an index outside -n .. n-1
 * (n: x's dim at the axis) fails the execute with EXECUTION_FAILED naming
 * it and its position in indices, so no element outside x is ever read.
 * Elements are copied as integers where the type is an integer or bool
 * one (exact for i64 beyond 2^53) and as doubles otherwise (exact for every
 * float type).
 *
 * Top-k sorts each row's (value, position) pairs with qsort under a total
 * order -- NaN above every number, equal values by position -- so equal
 * keys never reach qsort's unspecified order.
 */
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cdnn_sdk/numeric.h>

static void copy_element(const ref_tensor_t *x, const int64_t *x_idx,
                         const ref_tensor_t *y, const int64_t *y_idx)
{
    if (cdnn_data_type_is_float(x->view->type))
        ref_store(y, y_idx, ref_load(x, x_idx));
    else
        ref_store_int(y, y_idx, ref_load_int(x, x_idx));
}

/* "[2, 0, 1]" for a coordinate, into buf. */
static void format_index(char *buf, size_t size, const int64_t *idx, int32_t rank)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int32_t d = 0; d < rank && at < size; d++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", d ? ", " : "[",
                               (long long)idx[d]);
    if (at < size)
        snprintf(buf + at, size - at, "]");
}

/* Every index in -n .. n-1, else EXECUTION_FAILED naming the first that
 * is not. */
static cdnn_status_t check_indices(const cdnn_node_view_t *node, const ref_tensor_t *idx,
                                   int64_t n)
{
    int64_t at[CDNN_MAX_RANK] = {0};
    do {
        int64_t i = ref_load_int(idx, at);
        if (i < -n || i >= n) {
            char where[200];
            format_index(where, sizeof where, at, idx->view->rank);
            return sdk_fail(CDNN_STATUS_EXECUTION_FAILED,
                            "node '%s' (%s): indices%s is %lld, outside -%lld .. %lld "
                            "(x has %lld elements at the axis)",
                            node->name, cdnn_op_name(node->op), where, (long long)i,
                            (long long)n, (long long)(n - 1), (long long)n);
        }
    } while (ref_next_index(at, idx->view->dims, idx->view->rank));
    return CDNN_STATUS_SUCCESS;
}

/* y[a, i, b] = x[a, indices[i], b]: y's coordinate split into x's before
 * the axis, indices' and x's after it. */
cdnn_status_t ref_gather(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const ref_tensor_t *x = t->in[0], *idx = t->in[1], *y = t->out[0];
    int32_t axis = node->attr.axis, q = idx->view->rank;
    int64_t n = x->view->dims[axis];
    cdnn_status_t st = check_indices(node, idx, n);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t y_idx[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    do {
        for (int32_t d = 0; d < axis; d++)
            x_idx[d] = y_idx[d];
        int64_t i = ref_load_int(idx, y_idx + axis);
        x_idx[axis] = i < 0 ? i + n : i;
        for (int32_t d = axis + 1; d < x->view->rank; d++)
            x_idx[d] = y_idx[d + q - 1];
        copy_element(x, x_idx, y, y_idx);
    } while (ref_next_index(y_idx, y->view->dims, y->view->rank));
    return CDNN_STATUS_SUCCESS;
}

/* y[j] = x[j with j[axis] = indices[j]]. */
cdnn_status_t ref_gather_elements(const cdnn_node_view_t *node,
                                  const ref_node_tensors_t *t)
{
    const ref_tensor_t *x = t->in[0], *idx = t->in[1], *y = t->out[0];
    int32_t axis = node->attr.axis;
    int64_t n = x->view->dims[axis];
    cdnn_status_t st = check_indices(node, idx, n);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t y_idx[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    do {
        for (int32_t d = 0; d < y->view->rank; d++)
            x_idx[d] = y_idx[d];
        int64_t i = ref_load_int(idx, y_idx);
        x_idx[axis] = i < 0 ? i + n : i;
        copy_element(x, x_idx, y, y_idx);
    } while (ref_next_index(y_idx, y->view->dims, y->view->rank));
    return CDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------
 * Top-k
 * ------------------------------------------------------------------------ */

typedef struct ranked {
    double value;    /* float types */
    int64_t integer; /* integer and bool types */
    int64_t at;      /* position in the row */
} ranked_t;

/* Negative when a ranks above b in a "largest first" order: NaN first,
 * then larger values; equal values (and NaNs) by position. */
static int compare_float_largest(const void *pa, const void *pb)
{
    const ranked_t *a = pa, *b = pb;
    int a_nan = isnan(a->value), b_nan = isnan(b->value);
    if (a_nan != b_nan)
        return a_nan ? -1 : 1;
    if (!a_nan && a->value != b->value)
        return a->value > b->value ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

/* Smallest first: NaN last (it is the largest), equal values by position. */
static int compare_float_smallest(const void *pa, const void *pb)
{
    const ranked_t *a = pa, *b = pb;
    int a_nan = isnan(a->value), b_nan = isnan(b->value);
    if (a_nan != b_nan)
        return a_nan ? 1 : -1;
    if (!a_nan && a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

static int compare_int_largest(const void *pa, const void *pb)
{
    const ranked_t *a = pa, *b = pb;
    if (a->integer != b->integer)
        return a->integer > b->integer ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

static int compare_int_smallest(const void *pa, const void *pb)
{
    const ranked_t *a = pa, *b = pb;
    if (a->integer != b->integer)
        return a->integer < b->integer ? -1 : 1;
    return (a->at > b->at) - (a->at < b->at);
}

/* One row (x along the axis at coordinate idx) sorted into row[], then its
 * first k written to values and indices at the same coordinate. */
static void topk_row(const cdnn_topk_attr_t *a, const ref_node_tensors_t *t,
                     int64_t *idx, ranked_t *row)
{
    const ref_tensor_t *x = t->in[0], *values = t->out[0], *indices = t->out[1];
    int is_float = cdnn_data_type_is_float(x->view->type);
    int64_t n = x->view->dims[a->axis];
    for (int64_t i = 0; i < n; i++) {
        idx[a->axis] = i;
        row[i].at = i;
        if (is_float)
            row[i].value = ref_load(x, idx);
        else
            row[i].integer = ref_load_int(x, idx);
    }
    int (*order)(const void *, const void *) =
        is_float ? (a->largest ? compare_float_largest : compare_float_smallest)
                 : (a->largest ? compare_int_largest : compare_int_smallest);
    qsort(row, (size_t)n, sizeof *row, order);
    for (int64_t j = 0; j < a->k; j++) {
        idx[a->axis] = j;
        if (is_float)
            ref_store(values, idx, row[j].value);
        else
            ref_store_int(values, idx, row[j].integer);
        if (indices)
            ref_store_int(indices, idx, row[j].at);
    }
}

cdnn_status_t ref_topk(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const cdnn_topk_attr_t *a = &node->attr.topk;
    const cdnn_tensor_view_t *x = t->in[0]->view;
    int64_t n = x->dims[a->axis];
    ranked_t *row = malloc((size_t)n * sizeof *row);
    if (!row)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "node '%s': out of memory for a row "
                        "of %lld elements", node->name, (long long)n);
    /* Rows: every coordinate of values with 0 at the axis. */
    int64_t rows[CDNN_MAX_RANK], idx[CDNN_MAX_RANK] = {0};
    for (int32_t d = 0; d < x->rank; d++)
        rows[d] = d == a->axis ? 1 : x->dims[d];
    do {
        topk_row(a, t, idx, row);
        idx[a->axis] = 0;
    } while (ref_next_index(idx, rows, x->rank));
    free(row);
    return CDNN_STATUS_SUCCESS;
}
