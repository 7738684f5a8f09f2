/*
 * reference_conv.c -- convolution forward, backward-data and
 * backward-filter for the reference engine.
 *
 * All three share one relation between an output position o, a filter tap
 * r and an input position i, per spatial dim:
 *
 *     i = o * stride - pre_padding + r * dilation
 *
 * with channels split into groups: output channel k belongs to group
 * k / (K / groups) and sees input channels g * (C / groups) + c for c in
 * [0, C / groups).  Every function computes each of its output elements
 * as one sum over the positions the relation links to it.  Positions that
 * fall in the padding contribute zero.  Post-padding needs no code: it only
 * makes the output larger, and the output's dims are given.
 */
#include "reference.h"

/* Sizes of one convolution; spatial arrays hold spatial_dims entries. */
typedef struct conv_shape {
    int32_t spatial_dims;
    int64_t batch;
    int64_t in_per_group;  /* C / groups */
    int64_t out_per_group; /* K / groups */
    int64_t in[3];         /* x (or dx) spatial dims */
    int64_t out[3];        /* y (or dy) spatial dims */
    int64_t taps[3];       /* filter spatial dims */
} conv_shape_t;

static conv_shape_t conv_shape(const cdnn_conv_attr_t *a,
                               const cdnn_tensor_view_t *x,
                               const cdnn_tensor_view_t *w,
                               const cdnn_tensor_view_t *y)
{
    conv_shape_t s = {.spatial_dims = a->spatial_dims, .batch = x->dims[0]};
    s.in_per_group = x->dims[1] / a->groups;
    s.out_per_group = w->dims[0] / a->groups;
    for (int32_t d = 0; d < a->spatial_dims; d++) {
        s.in[d] = x->dims[2 + d];
        s.out[d] = y->dims[2 + d];
        s.taps[d] = w->dims[2 + d];
    }
    return s;
}

/* The input position that output position o reads through tap r; 0 when
 * it lies in the padding. */
static int input_position(const cdnn_conv_attr_t *a, const conv_shape_t *s,
                          const int64_t *o, const int64_t *r, int64_t *i)
{
    for (int32_t d = 0; d < s->spatial_dims; d++) {
        i[d] = o[d] * a->stride[d] - a->pre_padding[d] + r[d] * a->dilation[d];
        if (i[d] < 0 || i[d] >= s->in[d])
            return 0;
    }
    return 1;
}

/* The output position whose tap r reads input position i; 0 when there is
 * none (i falls between strides, or o is outside the output). */
static int output_position(const cdnn_conv_attr_t *a, const conv_shape_t *s,
                           const int64_t *i, const int64_t *r, int64_t *o)
{
    for (int32_t d = 0; d < s->spatial_dims; d++) {
        int64_t scaled = i[d] + a->pre_padding[d] - r[d] * a->dilation[d];
        if (scaled < 0 || scaled % a->stride[d] != 0)
            return 0;
        o[d] = scaled / a->stride[d];
        if (o[d] >= s->out[d])
            return 0;
    }
    return 1;
}

/* Full coordinates [first, second, spatial...] of an NC... tensor. */
static void coords(int64_t *idx, int64_t first, int64_t second,
                   const int64_t *spatial, int32_t spatial_dims)
{
    idx[0] = first;
    idx[1] = second;
    for (int32_t d = 0; d < spatial_dims; d++)
        idx[2 + d] = spatial[d];
}

/* y[n, k, o] = sum over c, r of x[n, g*Cg + c, i(o, r)] * w[k, c, r]. */
static double fwd_element(const cdnn_conv_attr_t *a, const conv_shape_t *s,
                          const ref_node_tensors_t *t, const int64_t *y_idx)
{
    const ref_tensor_t *x = t->in[0], *w = t->in[1];
    int64_t n = y_idx[0], k = y_idx[1];
    int64_t first_c = k / s->out_per_group * s->in_per_group;
    int64_t x_idx[CDNN_MAX_RANK], w_idx[CDNN_MAX_RANK];
    int64_t r[3] = {0}, i[3];
    double sum = 0;
    do {
        if (!input_position(a, s, y_idx + 2, r, i))
            continue;
        for (int64_t c = 0; c < s->in_per_group; c++) {
            coords(x_idx, n, first_c + c, i, s->spatial_dims);
            coords(w_idx, k, c, r, s->spatial_dims);
            sum += ref_load(x, x_idx) * ref_load(w, w_idx);
        }
    } while (ref_next_index(r, s->taps, s->spatial_dims));
    return sum;
}

void ref_conv_fwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    const ref_tensor_t *y = t->out[0];
    conv_shape_t s = conv_shape(&node->attr.conv, t->in[0]->view,
                                t->in[1]->view, y->view);
    int64_t idx[CDNN_MAX_RANK] = {0};
    do {
        ref_store(y, idx, fwd_element(&node->attr.conv, &s, t, idx));
    } while (ref_next_index(idx, y->view->dims, y->view->rank));
}

/* dx[n, c, i] = sum over k of c's group and taps r with an output position
 * o(i, r) of dy[n, k, o] * w[k, c mod Cg, r]. */
static double bwd_data_element(const cdnn_conv_attr_t *a,
                               const conv_shape_t *s,
                               const ref_node_tensors_t *t,
                               const int64_t *dx_idx)
{
    const ref_tensor_t *dy = t->in[0], *w = t->in[1];
    int64_t n = dx_idx[0];
    int64_t group = dx_idx[1] / s->in_per_group;
    int64_t c_in_group = dx_idx[1] % s->in_per_group;
    int64_t dy_idx[CDNN_MAX_RANK], w_idx[CDNN_MAX_RANK];
    int64_t r[3] = {0}, o[3];
    double sum = 0;
    do {
        if (!output_position(a, s, dx_idx + 2, r, o))
            continue;
        for (int64_t j = 0; j < s->out_per_group; j++) {
            int64_t k = group * s->out_per_group + j;
            coords(dy_idx, n, k, o, s->spatial_dims);
            coords(w_idx, k, c_in_group, r, s->spatial_dims);
            sum += ref_load(dy, dy_idx) * ref_load(w, w_idx);
        }
    } while (ref_next_index(r, s->taps, s->spatial_dims));
    return sum;
}

void ref_conv_bwd_data(const cdnn_node_view_t *node,
                       const ref_node_tensors_t *t)
{
    const ref_tensor_t *dx = t->out[0];
    conv_shape_t s = conv_shape(&node->attr.conv, dx->view, t->in[1]->view,
                                t->in[0]->view);
    int64_t idx[CDNN_MAX_RANK] = {0};
    do {
        ref_store(dx, idx, bwd_data_element(&node->attr.conv, &s, t, idx));
    } while (ref_next_index(idx, dx->view->dims, dx->view->rank));
}

/* dw[k, c, r] = sum over n, o of x[n, g*Cg + c, i(o, r)] * dy[n, k, o]. */
static double bwd_filter_element(const cdnn_conv_attr_t *a,
                                 const conv_shape_t *s,
                                 const ref_node_tensors_t *t,
                                 const int64_t *dw_idx)
{
    const ref_tensor_t *x = t->in[0], *dy = t->in[1];
    int64_t k = dw_idx[0];
    int64_t c = k / s->out_per_group * s->in_per_group + dw_idx[1];
    int64_t x_idx[CDNN_MAX_RANK], dy_idx[CDNN_MAX_RANK];
    int64_t o[3] = {0}, i[3];
    double sum = 0;
    do {
        if (!input_position(a, s, o, dw_idx + 2, i))
            continue;
        for (int64_t n = 0; n < s->batch; n++) {
            coords(x_idx, n, c, i, s->spatial_dims);
            coords(dy_idx, n, k, o, s->spatial_dims);
            sum += ref_load(x, x_idx) * ref_load(dy, dy_idx);
        }
    } while (ref_next_index(o, s->out, s->spatial_dims));
    return sum;
}

void ref_conv_bwd_filter(const cdnn_node_view_t *node,
                         const ref_node_tensors_t *t)
{
    const ref_tensor_t *dw = t->out[0];
    conv_shape_t s = conv_shape(&node->attr.conv, t->in[0]->view, dw->view,
                                t->in[1]->view);
    int64_t idx[CDNN_MAX_RANK] = {0};
    do {
        ref_store(dw, idx, bwd_filter_element(&node->attr.conv, &s, t, idx));
    } while (ref_next_index(idx, dw->view->dims, dw->view->rank));
}
