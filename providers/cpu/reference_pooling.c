/*
 * reference_pooling.c -- pooling forward and backward, and resize, for the
 * reference engine.
 *
 * Each output element is computed on its own, as the other reference ops
 * are: a pooled element from its window's taps, a dx element from every
 * window that has a tap on it (so overlapping windows add in double, not
 * in dx's type), a resized element from its neighbours.  Max pooling
 * compares integers exactly and keeps PyTorch's CPU rule: the first
 * maximum in the window's row-major tap order, or the last NaN.
 */
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cdnn_sdk/numeric.h>

#include "pool_geometry.h"

typedef struct pool_shape {
    int sd;           /* spatial dims */
    pool_dim_t d[3];
    int64_t plane[3]; /* x's spatial plane strides, row-major (indices) */
} pool_shape_t;

static pool_shape_t pool_shape_of(const cdnn_node_view_t *node,
                                  const cdnn_tensor_view_t *x,
                                  const cdnn_tensor_view_t *y)
{
    const cdnn_pooling_attr_t *a = &node->attr.pooling;
    pool_shape_t s;
    s.sd = a->spatial_dims;
    int64_t stride = 1;
    for (int i = s.sd - 1; i >= 0; i--) {
        s.d[i] = pool_dim_of(a, i, x, y);
        s.plane[i] = stride;
        stride *= s.d[i].n;
    }
    return s;
}

/* The window of output o (y's coordinate, spatial dims from 2): its taps
 * inside x, walked in row-major order by pool_next_tap. */
typedef struct pool_window {
    int64_t first[3], last[3], j[3];
} pool_window_t;

static int pool_window_start(const pool_shape_t *s, const int64_t *y_idx,
                             pool_window_t *w)
{
    for (int i = 0; i < s->sd; i++) {
        pool_taps(&s->d[i], y_idx[2 + i], &w->first[i], &w->last[i]);
        if (w->first[i] > w->last[i])
            return 0;
        w->j[i] = w->first[i];
    }
    return 1;
}

static int pool_next_tap(const pool_shape_t *s, pool_window_t *w)
{
    for (int i = s->sd - 1; i >= 0; i--) {
        if (++w->j[i] <= w->last[i])
            return 1;
        w->j[i] = w->first[i];
    }
    return 0;
}

/* x's coordinate of the window's current tap (N and C from y_idx), and
 * its flat position in x's spatial plane. */
static int64_t pool_tap_index(const pool_shape_t *s, const int64_t *y_idx,
                              const pool_window_t *w, int64_t *x_idx)
{
    int64_t flat = 0;
    x_idx[0] = y_idx[0];
    x_idx[1] = y_idx[1];
    for (int i = 0; i < s->sd; i++) {
        const pool_dim_t *d = &s->d[i];
        x_idx[2 + i] = y_idx[2 + i] * d->stride - d->pre + w->j[i] * d->dilation;
        flat += x_idx[2 + i] * s->plane[i];
    }
    return flat;
}

/* The window's maximum (as a double, and exactly as an integer) and its
 * flat position: first maximum, last NaN. */
typedef struct pool_max {
    double value;
    int64_t integer, at;
} pool_max_t;

static pool_max_t window_max(const pool_shape_t *s, const ref_tensor_t *x,
                             const int64_t *y_idx)
{
    int is_float = cdnn_data_type_is_float(x->view->type);
    pool_window_t w;
    int64_t x_idx[CDNN_MAX_RANK];
    pool_max_t m = {0, 0, -1};
    pool_window_start(s, y_idx, &w); /* validation: every window reads x */
    do {
        int64_t at = pool_tap_index(s, y_idx, &w, x_idx);
        if (is_float) {
            double v = ref_load(x, x_idx);
            if (m.at < 0 || v > m.value || isnan(v)) {
                m.value = v;
                m.at = at;
            }
        } else {
            int64_t v = ref_load_int(x, x_idx);
            if (m.at < 0 || v > m.integer) {
                m.integer = v;
                m.at = at;
            }
        }
    } while (pool_next_tap(s, &w));
    return m;
}

static double window_avg(const pool_shape_t *s, const ref_tensor_t *x,
                         const int64_t *y_idx, int include_pad)
{
    pool_window_t w;
    int64_t x_idx[CDNN_MAX_RANK];
    double sum = 0, count = 1;
    pool_window_start(s, y_idx, &w);
    do {
        pool_tap_index(s, y_idx, &w, x_idx);
        sum += ref_load(x, x_idx);
    } while (pool_next_tap(s, &w));
    for (int i = 0; i < s->sd; i++)
        count *= (double)pool_count(&s->d[i], y_idx[2 + i], include_pad);
    return sum / count;
}

void ref_pooling_fwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const cdnn_pooling_attr_t *a = &node->attr.pooling;
    const ref_tensor_t *x = t->in[0], *y = t->out[0], *indices = t->out[1];
    pool_shape_t s = pool_shape_of(node, x->view, y->view);
    int is_float = cdnn_data_type_is_float(x->view->type);
    int64_t y_idx[CDNN_MAX_RANK] = {0};
    do {
        if (a->mode == CDNN_POOLING_AVG) {
            ref_store(y, y_idx, window_avg(&s, x, y_idx, a->count_include_pad));
            continue;
        }
        pool_max_t m = window_max(&s, x, y_idx);
        if (is_float)
            ref_store(y, y_idx, m.value);
        else
            ref_store_int(y, y_idx, m.integer);
        if (indices)
            ref_store_int(indices, y_idx, m.at);
    } while (ref_next_index(y_idx, y->view->dims, y->view->rank));
}

/* ---- backward ------------------------------------------------------------ */

/* x's spatial coordinate of a flat position in its plane. */
static void unflatten(const pool_shape_t *s, int64_t flat, int64_t *pos)
{
    for (int i = 0; i < s->sd; i++) {
        pos[i] = flat / s->plane[i];
        flat %= s->plane[i];
    }
}

/* Every index names one of its window's taps inside x (a position
 * elsewhere would take a gradient no window gave it), else
 * EXECUTION_FAILED naming it. */
static cdnn_status_t check_pool_indices(const cdnn_node_view_t *node,
                                        const pool_shape_t *s, const ref_tensor_t *idx)
{
    int64_t at[CDNN_MAX_RANK] = {0}, plane = s->plane[0] * s->d[0].n;
    do {
        int64_t v = ref_load_int(idx, at), pos[3];
        int ok = v >= 0 && v < plane;
        if (ok)
            unflatten(s, v, pos);
        for (int i = 0; ok && i < s->sd; i++) {
            const pool_dim_t *d = &s->d[i];
            int64_t off = pos[i] - (at[2 + i] * d->stride - d->pre);
            ok = off >= 0 && off % d->dilation == 0 && off / d->dilation < d->window;
        }
        if (!ok) {
            char where[200];
            size_t used = 0;
            for (int32_t k = 0; k < idx->view->rank && used < sizeof where; k++)
                used += (size_t)snprintf(where + used, sizeof where - used, "%s%lld",
                                         k ? ", " : "[", (long long)at[k]);
            return sdk_fail(CDNN_STATUS_EXECUTION_FAILED,
                            "node '%s' (%s): indices%s] is %lld, which is not a "
                            "position of its window in x's spatial plane of %lld",
                            node->name, cdnn_op_name(node->op), where, (long long)v,
                            (long long)plane);
        }
    } while (ref_next_index(at, idx->view->dims, idx->view->rank));
    return CDNN_STATUS_SUCCESS;
}

/* The windows with a tap on x's element x_idx, one spatial dim at a time:
 * their output positions os[i][0 .. count[i] - 1] (os_heap, window
 * entries each), walked by a counter. */
typedef struct pool_windows {
    int count[3], at[3];
} pool_windows_t;

static int windows_start(const pool_shape_t *s, const int64_t *x_idx, pool_windows_t *w,
                         int64_t *os_heap[3])
{
    for (int i = 0; i < s->sd; i++) {
        w->count[i] = pool_windows_at(&s->d[i], x_idx[2 + i], os_heap[i]);
        w->at[i] = 0;
        if (!w->count[i])
            return 0;
    }
    return 1;
}

static int windows_next(const pool_shape_t *s, pool_windows_t *w)
{
    for (int i = s->sd - 1; i >= 0; i--) {
        if (++w->at[i] < w->count[i])
            return 1;
        w->at[i] = 0;
    }
    return 0;
}

cdnn_status_t ref_pooling_bwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const cdnn_pooling_attr_t *a = &node->attr.pooling;
    const ref_tensor_t *dy = t->in[0], *x = t->in[1], *idx = t->in[2], *dx = t->out[0];
    pool_shape_t s = pool_shape_of(node, x->view, dy->view);
    if (idx) {
        cdnn_status_t st = check_pool_indices(node, &s, idx);
        if (st != CDNN_STATUS_SUCCESS)
            return st;
    }
    /* A window count per dim is at most the window (2^20): heap lists. */
    int64_t *os[3] = {NULL, NULL, NULL};
    for (int i = 0; i < s.sd; i++)
        if (!(os[i] = malloc((size_t)s.d[i].window * sizeof *os[i]))) {
            for (int k = 0; k < i; k++)
                free(os[k]);
            return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "node '%s': out of memory",
                            node->name);
        }
    pool_windows_t w;
    int64_t x_idx[CDNN_MAX_RANK] = {0}, y_idx[CDNN_MAX_RANK];
    do {
        double sum = 0;
        int64_t flat = 0;
        for (int i = 0; i < s.sd; i++)
            flat += x_idx[2 + i] * s.plane[i];
        if (windows_start(&s, x_idx, &w, os)) {
            y_idx[0] = x_idx[0];
            y_idx[1] = x_idx[1];
            do {
                for (int i = 0; i < s.sd; i++)
                    y_idx[2 + i] = os[i][w.at[i]];
                if (a->mode == CDNN_POOLING_AVG) {
                    double count = 1;
                    for (int i = 0; i < s.sd; i++)
                        count *= (double)pool_count(&s.d[i], y_idx[2 + i],
                                                    a->count_include_pad);
                    sum += ref_load(dy, y_idx) / count;
                } else {
                    int64_t at = idx ? ref_load_int(idx, y_idx)
                                     : window_max(&s, x, y_idx).at;
                    if (at == flat)
                        sum += ref_load(dy, y_idx);
                }
            } while (windows_next(&s, &w));
        }
        ref_store(dx, x_idx, sum);
    } while (ref_next_index(x_idx, dx->view->dims, dx->view->rank));
    for (int i = 0; i < s.sd; i++)
        free(os[i]);
    return CDNN_STATUS_SUCCESS;
}

/* ---- resize ---------------------------------------------------------------- */

void ref_resize(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const cdnn_resize_attr_t *a = &node->attr.resize;
    const ref_tensor_t *x = t->in[0], *y = t->out[0];
    const cdnn_tensor_view_t *xv = x->view;
    int32_t rank = xv->rank;
    int is_float = cdnn_data_type_is_float(xv->type);
    int64_t y_idx[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    do {
        int64_t lo[CDNN_MAX_RANK];
        double w[CDNN_MAX_RANK];
        for (int32_t d = 0; d < rank; d++) {
            resize_coord_t c = resize_source(a->coordinate, y_idx[d], xv->dims[d],
                                             y->view->dims[d]);
            if (a->mode == CDNN_RESIZE_NEAREST) {
                x_idx[d] = resize_nearest_index(c, a->nearest, xv->dims[d]);
            } else {
                resize_linear_at(c, xv->dims[d], &lo[d], &w[d]);
            }
        }
        if (a->mode == CDNN_RESIZE_NEAREST) {
            if (is_float)
                ref_store(y, y_idx, ref_load(x, x_idx));
            else
                ref_store_int(y, y_idx, ref_load_int(x, x_idx));
            continue;
        }
        /* Every corner of the dims with a fractional coordinate: bit d of
         * corner picks the upper neighbour there; weight-0 corners are
         * skipped, so a sample on an element is that element. */
        double sum = 0;
        for (uint32_t corner = 0; corner < (1u << rank); corner++) {
            double weight = 1;
            for (int32_t d = 0; d < rank && weight != 0; d++) {
                int upper = (corner >> d) & 1;
                weight *= upper ? w[d] : 1 - w[d];
                x_idx[d] = lo[d] + upper;
            }
            if (weight != 0)
                sum += weight * ref_load(x, x_idx);
        }
        ref_store(y, y_idx, sum);
    } while (ref_next_index(y_idx, y->view->dims, y->view->rank));
}
