/*
 * reference_sdpa.c -- scaled-dot-product attention forward and backward
 * for the reference engine.
 *
 * For each batch b, head h and query i:
 *     s_j = scale * q[b,h,i,:] . k[b,h,j,:]    for the keys j it may see
 *     p   = softmax(s)                         (max subtracted first)
 *     o[b,h,i,e] = sum_j p_j v[b,h,j,e]
 * Causal masking is top-left: query i sees keys j <= i.  A query that sees
 * no key gets zeros.  Indexing k and v with q's batch and head broadcasts
 * any of their dims of 1.
 */
#include "reference.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct sdpa_shape {
    int64_t keys;      /* Sk */
    int64_t head_dim;  /* D */
    int64_t value_dim; /* Dv */
    double scale;
    int causal;
} sdpa_shape_t;

static sdpa_shape_t sdpa_shape(const cdnn_sdpa_attr_t *a,
                               const ref_node_tensors_t *t)
{
    sdpa_shape_t s;
    s.keys = t->in[1]->view->dims[2];
    s.head_dim = t->in[0]->view->dims[3];
    s.value_dim = t->in[2]->view->dims[3];
    s.scale = a->scale != 0 ? a->scale : 1.0 / sqrt((double)s.head_dim);
    s.causal = a->causal != 0;
    return s;
}

/* Keys 0 .. visible-1 are seen by query i. */
static int64_t visible_keys(const sdpa_shape_t *s, int64_t i)
{
    if (s->causal && i + 1 < s->keys)
        return i + 1;
    return s->keys;
}

/* scale * q[row] . k[b, h, j] */
static double score(const ref_node_tensors_t *t, const sdpa_shape_t *s,
                    const int64_t *row, int64_t j)
{
    int64_t q_idx[4] = {row[0], row[1], row[2], 0};
    int64_t k_idx[4] = {row[0], row[1], j, 0};
    double dot = 0;
    for (int64_t d = 0; d < s->head_dim; d++) {
        q_idx[3] = k_idx[3] = d;
        dot += ref_load(t->in[0], q_idx) * ref_load(t->in[1], k_idx);
    }
    return s->scale * dot;
}

/* Overwrite p[0 .. n-1] (the scores) with their softmax. */
static void softmax(double *p, int64_t n)
{
    double max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < n; j++)
        max = ref_max(max, p[j]);
    for (int64_t j = 0; j < n; j++) {
        p[j] = exp(p[j] - max);
        sum += p[j];
    }
    for (int64_t j = 0; j < n; j++)
        p[j] /= sum;
}

/* o[row, :] for one query row [b, h, i]; p has room for every key. */
static void attend_row(const ref_node_tensors_t *t, const sdpa_shape_t *s,
                       const int64_t *row, double *p)
{
    int64_t seen = visible_keys(s, row[2]);
    for (int64_t j = 0; j < seen; j++)
        p[j] = score(t, s, row, j);
    softmax(p, seen);
    int64_t v_idx[4] = {row[0], row[1], 0, 0};
    int64_t o_idx[4] = {row[0], row[1], row[2], 0};
    for (int64_t e = 0; e < s->value_dim; e++) {
        double sum = 0;
        v_idx[3] = e;
        for (int64_t j = 0; j < seen; j++) {
            v_idx[2] = j;
            sum += p[j] * ref_load(t->in[2], v_idx);
        }
        o_idx[3] = e;
        ref_store(t->out[0], o_idx, sum);
    }
}

cdnn_status_t ref_sdpa_fwd(const cdnn_node_view_t *node,
                           const ref_node_tensors_t *t)
{
    sdpa_shape_t s = sdpa_shape(&node->attr.sdpa, t);
    /* One query's probabilities; allocated per call, as the context is
     * shared between threads. */
    double *p = malloc((size_t)s.keys * sizeof *p);
    if (!p)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED,
                        "node '%s': out of memory for %lld attention scores",
                        node->name, (long long)s.keys);
    const int64_t *o_dims = t->out[0]->view->dims;
    int64_t rows[3] = {o_dims[0], o_dims[1], o_dims[2]};
    int64_t row[3] = {0};
    do {
        attend_row(t, &s, row, p);
    } while (ref_next_index(row, rows, 3));
    free(p);
    return CDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------
 * Backward.  For one batch and head, with p the forward's probabilities
 * (recomputed here from q and k in double, as the forward computes them)
 * and dp = d_o v^T:
 *     ds = p * (dp - rowsum(p * dp))
 *     dq = scale ds k,  dk = scale ds^T q,  dv = p^T d_o
 * Masked keys have p = 0, hence ds = 0.  o is not read: rowsum(p * dp) is
 * rowsum(d_o * o) computed exactly.
 * ------------------------------------------------------------------------ */

/* p (probabilities) and ds of one batch and head, Sq x Sk each. */
static void sdpa_bwd_scores(const ref_node_tensors_t *t, const sdpa_shape_t *s,
                            int64_t b, int64_t h, int64_t queries, double *p,
                            double *ds)
{
    const ref_tensor_t *v = t->in[2], *d_o = t->in[4];
    for (int64_t i = 0; i < queries; i++) {
        int64_t row[3] = {b, h, i};
        double *pi = p + i * s->keys, *dsi = ds + i * s->keys;
        int64_t seen = visible_keys(s, i);
        for (int64_t j = 0; j < s->keys; j++)
            pi[j] = dsi[j] = 0;
        for (int64_t j = 0; j < seen; j++)
            pi[j] = score(t, s, row, j);
        softmax(pi, seen);
        double pdp = 0; /* rowsum(p * dp) */
        for (int64_t j = 0; j < seen; j++) {
            int64_t o_idx[4] = {b, h, i, 0}, v_idx[4] = {b, h, j, 0};
            double dp = 0;
            for (int64_t e = 0; e < s->value_dim; e++) {
                o_idx[3] = v_idx[3] = e;
                dp += ref_load(d_o, o_idx) * ref_load(v, v_idx);
            }
            dsi[j] = dp;
            pdp += pi[j] * dp;
        }
        for (int64_t j = 0; j < seen; j++)
            dsi[j] = pi[j] * (dsi[j] - pdp);
    }
}

/* dq, dk and dv of one batch and head from its p and ds. */
static void sdpa_bwd_gradients(const ref_node_tensors_t *t, const sdpa_shape_t *s,
                               int64_t b, int64_t h, int64_t queries, const double *p,
                               const double *ds)
{
    const ref_tensor_t *q = t->in[0], *k = t->in[1], *d_o = t->in[4];
    for (int64_t i = 0; i < queries; i++)
        for (int64_t d = 0; d < s->head_dim; d++) {
            int64_t idx[4] = {b, h, 0, d};
            double sum = 0;
            for (int64_t j = 0; j < s->keys; j++) {
                idx[2] = j;
                sum += ds[i * s->keys + j] * ref_load(k, idx);
            }
            idx[2] = i;
            ref_store(t->out[0], idx, s->scale * sum);
        }
    for (int64_t j = 0; j < s->keys; j++) {
        for (int64_t d = 0; d < s->head_dim; d++) {
            int64_t idx[4] = {b, h, 0, d};
            double sum = 0;
            for (int64_t i = 0; i < queries; i++) {
                idx[2] = i;
                sum += ds[i * s->keys + j] * ref_load(q, idx);
            }
            idx[2] = j;
            ref_store(t->out[1], idx, s->scale * sum);
        }
        for (int64_t e = 0; e < s->value_dim; e++) {
            int64_t idx[4] = {b, h, 0, e};
            double sum = 0;
            for (int64_t i = 0; i < queries; i++) {
                idx[2] = i;
                sum += p[i * s->keys + j] * ref_load(d_o, idx);
            }
            idx[2] = j;
            ref_store(t->out[2], idx, sum);
        }
    }
}

cdnn_status_t ref_sdpa_bwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t)
{
    sdpa_shape_t s = sdpa_shape(&node->attr.sdpa, t);
    const int64_t *q_dims = t->in[0]->view->dims;
    int64_t queries = q_dims[2];
    /* Validation caps elements at 2^52, but Sq x Sk doubles can be more. */
    size_t cells;
    if (__builtin_mul_overflow((size_t)queries, (size_t)s.keys, &cells) ||
        cells > SIZE_MAX / (2 * sizeof(double)))
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "node '%s': %lld x %lld attention "
                        "scores do not fit in memory", node->name, (long long)queries,
                        (long long)s.keys);
    double *p = malloc(cells * 2 * sizeof *p);
    if (!p)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "node '%s': out of memory for %lld x "
                        "%lld attention scores", node->name, (long long)queries,
                        (long long)s.keys);
    for (int64_t b = 0; b < q_dims[0]; b++)
        for (int64_t h = 0; h < q_dims[1]; h++) {
            sdpa_bwd_scores(t, &s, b, h, queries, p, p + cells);
            sdpa_bwd_gradients(t, &s, b, h, queries, p, p + cells);
        }
    free(p);
    return CDNN_STATUS_SUCCESS;
}
