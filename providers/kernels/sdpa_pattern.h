/*
 * sdpa_pattern.h -- a graph that one "cuda-sdpa-v1" kernel runs: one
 * scaled dot-product attention node, q [B, H, Sq, D], k [B, H, Sk, D],
 * v [B, H, Sk, Dv] and o [B, H, Sq, Dv] in memory, any strides.  The match
 * function and the handler read a graph through this one recogniser.
 */
#ifndef CDNN_KERNELS_SDPA_PATTERN_H
#define CDNN_KERNELS_SDPA_PATTERN_H

#include <cdnn/provider.h>

/* The largest head size (D and Dv) the kernels take. */
#define SDPA_MAX_HEAD_DIM 256

enum { SDPA_Q, SDPA_K, SDPA_V, SDPA_O, SDPA_ROLES };

typedef struct sdpa_pattern {
    int32_t tensors[SDPA_ROLES]; /* tensor indices */
    int64_t batch, heads, q_len, kv_len, head_dim, value_dim;
    double scale; /* resolved: the attribute's, or 1 / sqrt(D) for 0 */
    int causal;   /* top-left: query i sees keys j <= i */
} sdpa_pattern_t;

/** Recognise g; NOT_SUPPORTED, with the reason, when it is no such node
 * (another op, more nodes, f64 compute, a type other than f32, f16 and
 * bf16, a virtual operand, head sizes over SDPA_MAX_HEAD_DIM). */
cdnn_status_t sdpa_pattern_of(const cdnn_graph_view_t *g, sdpa_pattern_t *p);

#endif
