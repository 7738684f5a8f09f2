/*
 * kp_graphs.h -- the pointwise, norm, reduction and softmax graphs the
 * kernels provider's tests run on every target: what each engine must get
 * right.
 */
#ifndef CDNN_TESTS_KP_GRAPHS_H
#define CDNN_TESTS_KP_GRAPHS_H

#include <cdnn/cdnn.h>

/* A graph a round trip runs, made afresh for each engine it is built on;
 * spec is the maker's own (NULL for these). */
typedef cdnn_graph_t *(*kp_make_graph_t)(const void *spec);

typedef struct kp_graph_case {
    const char *label;
    kp_make_graph_t make;
} kp_graph_case_t;

/* Broadcast rows and scalars, f16 in and f32 out, a bf16 FMA, a
 * column-major input, a shared subtree. */
extern const kp_graph_case_t kp_pointwise_cases[];
extern const int kp_pointwise_case_count;

/* Layer-norm with statistics, over two dims in bf16, RMS-norm in f16, a
 * column-major x. */
extern const kp_graph_case_t kp_norm_cases[];
extern const int kp_norm_case_count;

/* A sum over the last dim, a max over a middle one, an f16 average over
 * two dims into f32, a bf16 norm2 over the first, an f32 sum over a first
 * dim of 2000, an f16 average over the first of three dims into f32. */
extern const kp_graph_case_t kp_reduction_cases[];
extern const int kp_reduction_case_count;
/* The last of kp_reduction_cases, which reduce a leading axis. */
extern const int kp_reduction_leading_axis_cases;

/* Softmax and log-softmax: short rows and rows of 5000 (longer than the
 * host's buffered kernel keeps), f32/f16/bf16, over the last, a middle and
 * the first axis, a column-major x, padded rows, rows of one element. */
extern const kp_graph_case_t kp_softmax_cases[];
extern const int kp_softmax_case_count;

#endif
