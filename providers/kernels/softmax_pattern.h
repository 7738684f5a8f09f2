/*
 * softmax_pattern.h -- a graph that one softmax kernel runs: one softmax
 * or log-softmax node, its axis the rows' column axis (row_layout.h), so
 * any axis of any strides on the host; the CUDA handler also needs each
 * tensor's rows to fold into one stride.  The match function and the
 * handlers read a graph through this one recogniser.
 */
#ifndef CDNN_KERNELS_SOFTMAX_PATTERN_H
#define CDNN_KERNELS_SOFTMAX_PATTERN_H

#include <cdnn/provider.h>

#include "row_layout.h"

typedef struct softmax_pattern {
    int log;                              /* log-softmax; else softmax */
    int32_t x, y;                         /* tensor indices */
    row_layout_t rows;                    /* x's, over the node's axis */
    int64_t x_strides[CDNN_MAX_RANK + 1]; /* outer.., col */
    int64_t y_strides[CDNN_MAX_RANK + 1];
} softmax_pattern_t;

/** Recognise g; NOT_SUPPORTED, with the reason, for another graph (more
 * nodes, another op, f64 compute, a type other than f32, f16 and bf16). */
cdnn_status_t softmax_pattern_of(const cdnn_graph_view_t *g, softmax_pattern_t *p);

#endif
