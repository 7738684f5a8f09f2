/*
 * reference_norm.c -- batch-norm inference, layer-norm and RMS-norm
 * forward for the reference engine.
 *
 * Layer-norm and RMS-norm normalise over the dims where scale is not 1.
 * x is walked as rows: a row's outer coordinate is x's with the normalised
 * dims at 0 (it is also where the row's statistics are stored, since those
 * outputs have 1 on the normalised dims), and the window runs over the
 * normalised dims.  Statistics are kept in double for the row's outputs;
 * only what is stored is rounded.
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

static norm_rows_t norm_rows(const cdnn_tensor_view_t *x,
                             const cdnn_tensor_view_t *scale)
{
    norm_rows_t r = {.rank = x->rank, .count = 1};
    for (int32_t d = 0; d < x->rank; d++) {
        int normalised = scale->dims[d] != 1;
        r.outer[d] = normalised ? 1 : x->dims[d];
        r.window[d] = normalised ? x->dims[d] : 1;
        r.count *= r.window[d];
    }
    return r;
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
