/*
 * conv_host_pattern.h -- a graph that one host convolution kernel
 * ("host-conv-nhwc-v1", kernels/host/host_kernel.h) runs: a 2-D forward
 * convolution over channels-last tensors, then optionally the matmul's
 * epilogue (a bias add, an activation, a residual add, in that order).
 *
 *     y = act(conv(x, w) + bias) + residual
 *
 * The match function and the dispatch handler read a graph through this
 * one recogniser, so that they can never disagree.
 */
#ifndef CDNN_KERNELS_CONV_HOST_PATTERN_H
#define CDNN_KERNELS_CONV_HOST_PATTERN_H

#include <cdnn/provider.h>

#include "matmul_pattern.h"

typedef struct conv_host_pattern {
    /* the kernel's sizes (cdnn_host_conv_args_t) */
    int64_t n, h, w, c, k, r, s, out_h, out_w;
    int64_t pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
    int32_t x, filter;        /* indexes in the graph's tensors */
    int64_t x_strides[4];      /* the kernel's order: {n, h, w, c} */
    int64_t filter_strides[4]; /* {k, r, s, c} */
    /* The epilogue: y (epilogue.c), bias, residual and the activation,
     * strides indexed by the convolution's output dims [N, K, OH, OW]. */
    matmul_pattern_t epilogue;
} conv_host_pattern_t;

/**
 * Recognise g; NOT_SUPPORTED, with the reason, when the kernels cannot run
 * it: another op first, a convolution that is not 2-D, grouped
 * convolutions, x or y whose channels are not innermost (stride 1: NHWC,
 * rows of pixels may be padded), types other than f32, f16 and bf16, f64
 * compute, or an epilogue the matmul's chain refuses (matmul_pattern.h).
 * Dilation, stride and padding are the kernel's own arguments.
 */
cdnn_status_t conv_host_pattern_of(const cdnn_graph_view_t *g, conv_host_pattern_t *p);

/** The kernel's {n, out_h, out_w, k} strides of an epilogue operand whose
 * strides are indexed by the output dims [N, K, OH, OW]. */
void conv_host_output_strides(const int64_t *nkhw, int64_t out[4]);

#endif
