/*
 * reduce_pattern.h -- a graph that one row-reduction kernel runs: one
 * reduction node whose reduced dims (those where y has 1 and x more) fold
 * into the rows' column axis (row_layout.h).  The match function and the
 * handler read a graph through this one recogniser.
 */
#ifndef CDNN_KERNELS_REDUCE_PATTERN_H
#define CDNN_KERNELS_REDUCE_PATTERN_H

#include <cdnn/provider.h>

#include "row_layout.h"

typedef struct reduce_pattern {
    cdnn_reduction_mode_t mode;
    int32_t x, y;         /* tensor indices */
    row_layout_t rows;    /* x's */
    int64_t x_strides[CDNN_MAX_RANK + 1]; /* outer.., col */
    int64_t y_strides[CDNN_MAX_RANK + 1]; /* outer.. (its col stride is 0) */
} reduce_pattern_t;

/** Recognise g; NOT_SUPPORTED, with the reason, for another graph (more
 * nodes, f64 compute, a type other than f32, f16 and bf16, reduced dims
 * that do not fold). */
cdnn_status_t reduce_pattern_of(const cdnn_graph_view_t *g, reduce_pattern_t *p);

#endif
