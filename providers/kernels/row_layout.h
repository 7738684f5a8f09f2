/*
 * row_layout.h -- a tensor as rows: the row kernels (norms, reductions,
 * softmax) index x as (o0, .., o[outer_rank-1], j), j running over one
 * column axis.  A graph's normalised or reduced dims become that axis when
 * they fold into one stride: they are consecutive dims (dims of 1 between
 * them aside) laid out one inside the other.  The other dims of more than
 * one element are the outer dims, in order.
 */
#ifndef CDNN_KERNELS_ROW_LAYOUT_H
#define CDNN_KERNELS_ROW_LAYOUT_H

#include <cdnn/provider.h>

typedef struct row_layout {
    int32_t outer_rank;
    int32_t outer_axes[CDNN_MAX_RANK]; /* x's dim of each outer dim */
    int64_t outer_dims[CDNN_MAX_RANK];
    int64_t cols;
    int32_t first, last; /* x's column dims: [first, last]; -1, -1 if none */
} row_layout_t;

/**
 * The rows of x whose column dims are those where across[d] is nonzero
 * (and x has more than one element); NOT_SUPPORTED and why when they are
 * not consecutive.
 */
cdnn_status_t row_layout_of(const cdnn_tensor_view_t *x, const uint8_t *across,
                            row_layout_t *r);

/**
 * t's strides in r: its outer_rank outer strides, then its column stride
 * (0 where t has 1 element: a broadcast, or a per-row statistic).  t has
 * x's rank and, on each dim, x's size or 1.  NOT_SUPPORTED when t's column
 * dims do not fold into one stride.
 */
cdnn_status_t row_strides(const row_layout_t *r, const cdnn_tensor_view_t *t,
                          int64_t *strides);

/** SUCCESS when every tensor of g is f32, f16 or bf16, the types the row
 * kernels take; else NOT_SUPPORTED naming it (kernels: "the softmax
 * kernels", for the message). */
cdnn_status_t row_kernel_types(const cdnn_graph_view_t *g, const char *kernels);

/** The number of rows: the product of r's outer dims. */
int64_t row_count(const row_layout_t *r);

/**
 * The outer strides of a tensor in r (row_strides' first outer_rank) as one
 * row stride, rows numbered in order (for kernels that take rows x cols);
 * NOT_SUPPORTED naming the tensor (name) when they do not fold into one.
 */
cdnn_status_t row_fold_outer(const row_layout_t *r, const int64_t *strides, const char *name,
                             int64_t *stride);

#endif
