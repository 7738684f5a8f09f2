/*
 * norm_pattern.h -- a graph that one row-norm kernel runs: one layer-norm
 * or RMS-norm node whose normalised dims (those where scale is not 1) fold
 * into the rows' column axis (row_layout.h).  The match function and the
 * handlers read a graph through this one recogniser.
 */
#ifndef CDNN_KERNELS_NORM_PATTERN_H
#define CDNN_KERNELS_NORM_PATTERN_H

#include <cdnn/provider.h>

#include "row_layout.h"

/* The node's tensors by role. */
enum { NORM_X, NORM_Y, NORM_SCALE, NORM_BIAS, NORM_MEAN, NORM_INV_STD, NORM_ROLES };

typedef struct norm_pattern {
    int layer;                     /* layer-norm; else RMS-norm */
    double epsilon;
    row_layout_t rows;             /* x's */
    int32_t tensors[NORM_ROLES];   /* tensor indices; -1: absent or virtual */
    /* Each tensor's outer strides, then its column stride (row_strides). */
    int64_t strides[NORM_ROLES][CDNN_MAX_RANK + 1];
} norm_pattern_t;

/** Recognise g; NOT_SUPPORTED, with the reason, when it is no such norm
 * (another op, more nodes, f64 compute, a type other than f32, f16 and
 * bf16, normalised dims that do not fold). */
cdnn_status_t norm_pattern_of(const cdnn_graph_view_t *g, norm_pattern_t *p);

#endif
