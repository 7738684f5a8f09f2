/*
 * reference_norm.c -- batch-norm inference and training (forward, running
 * statistics, backward), layer-norm and RMS-norm forward and backward for
 * the reference engine.
 *
 * Layer-norm and RMS-norm normalise over the dims where scale is not 1.
 * x is walked as rows: a row's outer coordinate is x's with the normalised
 * dims at 0 (it is also where the row's statistics are stored, since those
 * outputs have 1 on the normalised dims), and the window runs over the
 * normalised dims.  Statistics are kept in double for the row's outputs;
 * only what is stored is rounded.
 *
 * Batch-norm training is the same walk with the roles of the dims swapped:
 * its rows are the channels (dim 1), its window N and the spatial dims.
 */
#include "reference.h"

#include <math.h>

void ref_batchnorm_inference(const cdnn_node_view_t *node,
                             const ref_node_tensors_t *t)
{
    const ref_tensor_t *x = t->in[0], *scale = t->in[1], *bias = t->in[2];
    const ref_tensor_t *mean = t->in[3], *var = t->in[4], *y = t->out[0];
    int64_t idx[CDNN_MAX_RANK] = {0};
    do {
        double inv_std = 1.0 / sqrt(ref_load(var, idx) + node->attr.epsilon);
        double centred = ref_load(x, idx) - ref_load(mean, idx);
        double scaled = centred * inv_std * ref_load(scale, idx);
        ref_store(y, idx, scaled + ref_load(bias, idx));
    } while (ref_next_index(idx, y->view->dims, y->view->rank));
}

/* The rows of x and the window of its normalised dims. */
typedef struct norm_rows {
    int32_t rank;
    int64_t outer[CDNN_MAX_RANK];  /* x's dims, 1 on normalised dims */
    int64_t window[CDNN_MAX_RANK]; /* 1 except on normalised dims */
    int64_t count;                 /* elements in one row */
} norm_rows_t;

/* Rows of x whose window is the dims with reduced[d] set. */
static norm_rows_t rows_over(const cdnn_tensor_view_t *x, const int *reduced)
{
    norm_rows_t r = {.rank = x->rank, .count = 1};
    for (int32_t d = 0; d < x->rank; d++) {
        r.outer[d] = reduced[d] ? 1 : x->dims[d];
        r.window[d] = reduced[d] ? x->dims[d] : 1;
        r.count *= r.window[d];
    }
    return r;
}

/* Layer-norm and RMS-norm: the window is where scale is not 1. */
static norm_rows_t norm_rows(const cdnn_tensor_view_t *x,
                             const cdnn_tensor_view_t *scale)
{
    int reduced[CDNN_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        reduced[d] = scale->dims[d] != 1;
    return rows_over(x, reduced);
}

/* Batch-norm: one row per channel (dim 1), the window every other dim. */
static norm_rows_t channel_rows(const cdnn_tensor_view_t *x)
{
    int reduced[CDNN_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        reduced[d] = d != 1;
    return rows_over(x, reduced);
}

typedef enum row_moment { MEAN_OF_VALUES, MEAN_OF_SQUARES } row_moment_t;

/* Mean over the row at outer of (x - shift), or of its square. */
static double row_mean(const ref_tensor_t *x, const norm_rows_t *r,
                       const int64_t *outer, double shift,
                       row_moment_t moment)
{
    int64_t w[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    double sum = 0;
    do {
        ref_join_index(x_idx, outer, w, r->rank);
        double v = ref_load(x, x_idx) - shift;
        sum += moment == MEAN_OF_SQUARES ? v * v : v;
    } while (ref_next_index(w, r->window, r->rank));
    return sum / (double)r->count;
}

/* y = (x - shift) * inv * scale + bias over the row at outer; bias may be
 * absent. */
static void normalise_row(const ref_node_tensors_t *t, const norm_rows_t *r,
                          const int64_t *outer, double shift, double inv)
{
    const ref_tensor_t *x = t->in[0], *scale = t->in[1], *bias = t->in[2];
    int64_t w[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    do {
        ref_join_index(x_idx, outer, w, r->rank);
        double v = (ref_load(x, x_idx) - shift) * inv * ref_load(scale, x_idx);
        if (bias)
            v += ref_load(bias, x_idx);
        ref_store(t->out[0], x_idx, v);
    } while (ref_next_index(w, r->window, r->rank));
}

static void store_if_present(const ref_tensor_t *t, const int64_t *idx,
                             double v)
{
    if (t)
        ref_store(t, idx, v);
}

/* Mean, then the biased variance about it (two passes, for accuracy). */
void ref_layernorm(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    norm_rows_t r = norm_rows(t->in[0]->view, t->in[1]->view);
    int64_t outer[CDNN_MAX_RANK] = {0};
    do {
        double mean = row_mean(t->in[0], &r, outer, 0.0, MEAN_OF_VALUES);
        double var = row_mean(t->in[0], &r, outer, mean, MEAN_OF_SQUARES);
        double inv_std = 1.0 / sqrt(var + node->attr.epsilon);
        normalise_row(t, &r, outer, mean, inv_std);
        store_if_present(t->out[1], outer, mean);
        store_if_present(t->out[2], outer, inv_std);
    } while (ref_next_index(outer, r.outer, r.rank));
}

void ref_rmsnorm(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    norm_rows_t r = norm_rows(t->in[0]->view, t->in[1]->view);
    int64_t outer[CDNN_MAX_RANK] = {0};
    do {
        double mean_square =
            row_mean(t->in[0], &r, outer, 0.0, MEAN_OF_SQUARES);
        double inv_rms = 1.0 / sqrt(mean_square + node->attr.epsilon);
        normalise_row(t, &r, outer, 0.0, inv_rms);
        store_if_present(t->out[1], outer, inv_rms);
    } while (ref_next_index(outer, r.outer, r.rank));
}

/* ---- training ---------------------------------------------------------- */

/* Per channel: mean and biased variance over N and the spatial dims (two
 * passes), y normalised with them, and the optional saved statistics. */
void ref_batchnorm_train(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    norm_rows_t r = channel_rows(t->in[0]->view);
    int64_t outer[CDNN_MAX_RANK] = {0};
    do {
        double mean = row_mean(t->in[0], &r, outer, 0.0, MEAN_OF_VALUES);
        double var = row_mean(t->in[0], &r, outer, mean, MEAN_OF_SQUARES);
        double inv_std = 1.0 / sqrt(var + node->attr.epsilon);
        normalise_row(t, &r, outer, mean, inv_std);
        store_if_present(t->out[1], outer, mean);
        store_if_present(t->out[2], outer, inv_std);
    } while (ref_next_index(outer, r.outer, r.rank));
}

/* PyTorch's update: the running variance takes the unbiased batch variance
 * (n / (n - 1) times the biased one that normalises). */
void ref_batchnorm_running_stats(const cdnn_node_view_t *node,
                                 const ref_node_tensors_t *t)
{
    norm_rows_t r = channel_rows(t->in[0]->view);
    double m = node->attr.momentum, n = (double)r.count;
    int64_t outer[CDNN_MAX_RANK] = {0};
    do {
        double mean = row_mean(t->in[0], &r, outer, 0.0, MEAN_OF_VALUES);
        double var = row_mean(t->in[0], &r, outer, mean, MEAN_OF_SQUARES);
        double unbiased = var * n / (n - 1.0);
        ref_store(t->out[0], outer, (1.0 - m) * ref_load(t->in[1], outer) + m * mean);
        ref_store(t->out[1], outer, (1.0 - m) * ref_load(t->in[2], outer) + m * unbiased);
    } while (ref_next_index(outer, r.outer, r.rank));
}

/* The backward passes' inputs: dy, x, scale and the saved statistics
 * (mean absent for RMS-norm, whose xhat is x * inv_rms). */
typedef struct norm_bwd {
    const ref_tensor_t *dy, *x, *scale, *mean, *inv;
} norm_bwd_t;

static norm_bwd_t norm_bwd_inputs(const ref_node_tensors_t *t, int has_mean)
{
    norm_bwd_t b = {t->in[0], t->in[1], t->in[2], NULL, NULL};
    b.mean = has_mean ? t->in[3] : NULL;
    b.inv = has_mean ? t->in[4] : t->in[3];
    return b;
}

/* xhat at x_idx, from the statistics stored for its row (they broadcast
 * over the window, so x's coordinate finds them). */
static double xhat_at(const norm_bwd_t *b, const int64_t *x_idx)
{
    double shift = b->mean ? ref_load(b->mean, x_idx) : 0.0;
    return (ref_load(b->x, x_idx) - shift) * ref_load(b->inv, x_idx);
}

/* dx over one row: inv * (g - mean(g) - xhat * mean(g * xhat)), g =
 * dy * scale; RMS-norm has no mean(g) term (nothing was subtracted). */
static void dx_row(const norm_bwd_t *b, const ref_tensor_t *dx, const norm_rows_t *r,
                   const int64_t *outer)
{
    int64_t w[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
    double sum_g = 0, sum_gx = 0;
    do {
        ref_join_index(x_idx, outer, w, r->rank);
        double g = ref_load(b->dy, x_idx) * ref_load(b->scale, x_idx);
        sum_g += g;
        sum_gx += g * xhat_at(b, x_idx);
    } while (ref_next_index(w, r->window, r->rank));
    double mean_g = b->mean ? sum_g / (double)r->count : 0.0;
    double mean_gx = sum_gx / (double)r->count;
    double inv = ref_load(b->inv, outer);
    do {
        ref_join_index(x_idx, outer, w, r->rank);
        double g = ref_load(b->dy, x_idx) * ref_load(b->scale, x_idx);
        ref_store(dx, x_idx, inv * (g - mean_g - xhat_at(b, x_idx) * mean_gx));
    } while (ref_next_index(w, r->window, r->rank));
}

/* dscale = sum(dy * xhat) and dbias = sum(dy), each element of scale's
 * shape summed over the dims where scale is 1 (each present output). */
static void dparams(const norm_bwd_t *b, const ref_tensor_t *dscale,
                    const ref_tensor_t *dbias)
{
    const cdnn_tensor_view_t *x = b->x->view, *s = b->scale->view;
    int reduced[CDNN_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        reduced[d] = s->dims[d] == 1;
    norm_rows_t r = rows_over(x, reduced); /* rows: scale's elements */
    int64_t outer[CDNN_MAX_RANK] = {0};
    do {
        int64_t w[CDNN_MAX_RANK] = {0}, x_idx[CDNN_MAX_RANK];
        double sum_dy = 0, sum_dyx = 0;
        do {
            ref_join_index(x_idx, outer, w, r.rank);
            double dy = ref_load(b->dy, x_idx);
            sum_dy += dy;
            if (dscale)
                sum_dyx += dy * xhat_at(b, x_idx);
        } while (ref_next_index(w, r.window, r.rank));
        store_if_present(dscale, outer, sum_dyx);
        store_if_present(dbias, outer, sum_dy);
    } while (ref_next_index(outer, r.outer, r.rank));
}

static void norm_bwd(const ref_node_tensors_t *t, norm_rows_t rows, int has_mean)
{
    norm_bwd_t b = norm_bwd_inputs(t, has_mean);
    int64_t outer[CDNN_MAX_RANK] = {0};
    do
        dx_row(&b, t->out[0], &rows, outer);
    while (ref_next_index(outer, rows.outer, rows.rank));
    if (t->out[1] || t->out[2])
        dparams(&b, t->out[1], t->out[2]);
}

void ref_batchnorm_bwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    (void)node;
    norm_bwd(t, channel_rows(t->in[1]->view), 1);
}

void ref_layernorm_bwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    (void)node;
    norm_bwd(t, norm_rows(t->in[1]->view, t->in[2]->view), 1);
}

void ref_rmsnorm_bwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    (void)node;
    norm_bwd(t, norm_rows(t->in[1]->view, t->in[2]->view), 0);
}
