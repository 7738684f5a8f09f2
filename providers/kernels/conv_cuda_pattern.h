/*
 * conv_cuda_pattern.h -- a graph that one "cuda-conv-v1" kernel runs: a
 * forward convolution, 1-D or 2-D, one group, x and y channels-last
 * (NHWC: the channel stride 1), then optionally a bias add and then
 * optionally an activation:
 *
 *     y = act(conv(x, w) + bias)
 *
 * The match function and the handler read a graph through this one
 * recogniser, so that they can never disagree.
 */
#ifndef CDNN_KERNELS_CONV_CUDA_PATTERN_H
#define CDNN_KERNELS_CONV_CUDA_PATTERN_H

#include <cdnn/provider.h>

/* A conv as the kernel's ABI sees it: 2-D (a 1-D conv has h = r = p = 1),
 * every tensor's strides in channels-last order. */
typedef struct conv_cuda_pattern {
    int32_t x, w, y, bias; /* tensor indices; bias -1 when absent */
    int64_t n, h, width, c, k, r, s, p, q;
    int64_t pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
    int64_t x_strides[4]; /* n, h, w, c */
    int64_t w_strides[4]; /* k, r, s, c */
    int64_t y_strides[4]; /* n, p, q, k */
    int64_t bias_stride;
    int32_t activation; /* matmul_activation_t: the same numbers as CDNN_CUDA_ACT_* */
} conv_cuda_pattern_t;

/**
 * Recognise g; NOT_SUPPORTED, with the reason, when it is not such a
 * chain: another op, 3-D, groups, f64 compute, x or y not channels-last,
 * a bias that is not one value per filter, an activation the kernels
 * lack, intermediates that are not virtual f32, steps out of order.
 */
cdnn_status_t conv_cuda_pattern_of(const cdnn_graph_view_t *g, conv_cuda_pattern_t *p);

#endif
