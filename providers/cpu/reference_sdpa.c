/*
 * reference_sdpa.c -- scaled-dot-product attention forward for the
 * reference engine.
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
