/*
 * conv_tma.h -- the host half of the Hopper convolution kernels' ABI
 * (cdnn_cuda_conv_tma_params_t in cuda_kernel.h): which convolutions they
 * take, the GEMM a convolution amounts to, and the two tensor maps each
 * launch passes.  Plain C, header only, shared by the kernels provider's
 * cuda_conv handler and the tests.  The driver's encoders are passed in,
 * so that this header needs neither the toolkit's cuda.h nor the SDK.
 *
 * The A tile of k step (u, v, chunk) holds tile_m consecutive output
 * pixels x 64 channels of x at tap (u, v): TMA's im2col mode walks the
 * pixels from the tile's first one, whose window origin (j * stride_w -
 * pad_w, i * stride_h - pad_h, image) the kernel gives as coordinates,
 * stepping by the conv strides (the map's traversal strides) across a
 * bounding box of exactly q x p window origins per image (the corners),
 * and reads each at origin + (v * dilation_w, u * dilation_h) (the
 * instruction's offsets); what falls outside x is zero, which is the
 * padding.
 */
#ifndef CDNN_KERNELS_CUDA_CONV_TMA_H
#define CDNN_KERNELS_CUDA_CONV_TMA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cuda_kernel.h"
#include "matmul_tma.h"

/* cuTensorMapEncodeIm2col, with its enums as int and CUtensorMap as void. */
typedef int (*cdnn_cuda_encode_im2col_fn)(void *map, int data_type, uint32_t rank,
                                          void *address, const uint64_t *dims,
                                          const uint64_t *strides, const int *lower_corner,
                                          const int *upper_corner, uint32_t channels_per_pixel,
                                          uint32_t pixels_per_column,
                                          const uint32_t *element_strides, int interleave,
                                          int swizzle, int l2_promotion, int oob_fill);

/* The im2col map's bounding box, per spatial dim (w, then h): the first
 * window origin is -pad (the lower corner); the upper corner, counted from
 * the dim's last element, stops the walk after `out` origins. */
static inline void cdnn_cuda_conv_tma_corners(const cdnn_cuda_conv_params_t *p, int lower[2],
                                              int upper[2])
{
    const int64_t in[2] = {p->w, p->h}, out[2] = {p->q, p->p};
    const int64_t pad[2] = {p->pad_w, p->pad_h}, stride[2] = {p->stride_w, p->stride_h};
    for (int d = 0; d < 2; d++) {
        int64_t last_origin = -pad[d] + (out[d] - 1) * stride[d];
        lower[d] = (int)-pad[d];
        upper[d] = (int)(last_origin - (in[d] - 1));
    }
}

/* The distance in y between consecutive output pixels (the GEMM's row
 * stride), from the innermost spatial dim of y that has more than one. */
static inline int64_t cdnn_cuda_conv_tma_pixel_stride(const cdnn_cuda_conv_params_t *p)
{
    return p->q > 1 ? p->y_strides[2] : p->p > 1 ? p->y_strides[1] : p->y_strides[0];
}

/**
 * NULL if the Hopper conv kernels can run p, else why not (a static
 * string).  With check_pointers 0 only the layout is judged, as a handler
 * can before it has pointers; with 1 the addresses too.
 */
static inline const char *cdnn_cuda_conv_tma_refusal(const cdnn_cuda_conv_params_t *p,
                                                      int check_pointers)
{
    const int64_t *xs = p->x_strides, *ws = p->w_strides, *ys = p->y_strides;
    int lower[2], upper[2];
    if (p->x_type != p->w_type || (p->x_type != CDNN_CUDA_F16 && p->x_type != CDNN_CUDA_BF16))
        return "the TMA conv kernels convolve f16 or bf16, the same for x and w";
    if (p->c % CDNN_CUDA_CONV_WGMMA_CHANNELS != 0)
        return "the TMA conv kernels need channels in multiples of 64";
    if (xs[3] != 1 || (p->w > 1 && !cdnn_cuda_tma_stride_ok(xs[2])) ||
        (p->h > 1 && !cdnn_cuda_tma_stride_ok(xs[1])) ||
        (p->n > 1 && !cdnn_cuda_tma_stride_ok(xs[0])))
        return "the TMA conv kernels need x channels-contiguous with pixel, row and image "
               "strides multiples of 16 bytes";
    if (ws[3] != 1 || ws[2] != p->c || ws[1] != p->s * p->c ||
        (p->k > 1 && !cdnn_cuda_tma_stride_ok(ws[0])))
        return "the TMA conv kernels need the filter packed k x r x s x c with a k stride "
               "a multiple of 16 bytes";
    if ((p->q > 1 && p->p > 1 && ys[1] != p->q * ys[2]) ||
        (p->n > 1 && p->p * p->q > 1 && ys[0] != p->p * p->q * cdnn_cuda_conv_tma_pixel_stride(p)))
        return "the TMA conv kernels need y's pixels one stride apart (n, p, q packed)";
    if (p->stride_h > 8 || p->stride_w > 8)
        return "the TMA conv kernels take strides up to 8";
    cdnn_cuda_conv_tma_corners(p, lower, upper);
    for (int d = 0; d < 2; d++)
        if (lower[d] < -128 || upper[d] < -128 || upper[d] > 127)
            return "the TMA conv kernels' im2col box takes pads and filter extents up to 128";
    if ((p->r - 1) * p->dilation_h > 127 || (p->s - 1) * p->dilation_w > 127)
        return "the TMA conv kernels' im2col offsets take filter extents up to 128";
    if (check_pointers && (((uintptr_t)p->x | (uintptr_t)p->filter) & 15) != 0)
        return "the TMA conv kernels need x and the filter at 16-byte aligned addresses";
    return NULL;
}

/**
 * NULL if the stem kernels (cuda_kernel.h, CDNN_CUDA_CONV_STEM_*; metadata
 * stem=1) can run p, else why not (a static string).  With check_pointers
 * 0 only the layout is judged; with 1 the addresses too.
 */
static inline const char *cdnn_cuda_conv_stem_refusal(const cdnn_cuda_conv_params_t *p,
                                                       int check_pointers)
{
    const int64_t *xs = p->x_strides, *ws = p->w_strides, *ys = p->y_strides;
    const int64_t margin = CDNN_CUDA_CONV_STEM_MARGIN, row = p->w * p->c;
    if (p->x_type != p->w_type || (p->x_type != CDNN_CUDA_F16 && p->x_type != CDNN_CUDA_BF16))
        return "the stem conv kernels convolve f16 or bf16, the same for x and w";
    if (p->r != CDNN_CUDA_CONV_STEM_R || p->s != CDNN_CUDA_CONV_STEM_S ||
        p->c != CDNN_CUDA_CONV_STEM_C || p->stride_h != CDNN_CUDA_CONV_STEM_STRIDE ||
        p->stride_w != CDNN_CUDA_CONV_STEM_STRIDE || p->dilation_h != 1 || p->dilation_w != 1)
        return "the stem conv kernels take only their filter size, channels and stride "
               "(cuda_kernel.h, CDNN_CUDA_CONV_STEM_*), undilated";
    if (p->q > CDNN_CUDA_CONV_STEM_TILE_M || p->k > CDNN_CUDA_CONV_STEM_TILE_N)
        return "the stem conv kernels take output rows of at most 128 pixels and at most 64 "
               "filters";
    if (row % 8 != 0 || row > CDNN_CUDA_CONV_STEM_ROW_MAX)
        return "the stem conv kernels need w * c a multiple of 8 and at most 1024";
    if (xs[3] != 1 || xs[2] != p->c || xs[1] % 8 != 0 || xs[0] % 8 != 0 || xs[1] < row)
        return "the stem conv kernels need x channels-contiguous with packed pixels and row "
               "and image strides multiples of 8 elements";
    if (ws[3] != 1 || ws[2] != p->c || ws[1] != p->s * p->c)
        return "the stem conv kernels need each filter packed r x s x c";
    if (p->pad_w * p->c > margin ||
        ((p->q - 1) * p->stride_w - p->pad_w + p->s - p->w) * p->c > margin)
        return "the stem conv kernels take a left and right overhang of at most 24 elements";
    if (ys[3] != 1)
        return "the stem conv kernels need y's channels contiguous";
    if (check_pointers && (((uintptr_t)p->x) & 15) != 0)
        return "the stem conv kernels need x at a 16-byte aligned address";
    return NULL;
}

/* What the TMA-store epilogue (metadata epilogue=tma_store) needs of y
 * beyond its kernels' own: f16 or bf16, channels contiguous, k and the
 * pixel stride multiples of 8 elements, a 16-byte aligned base.  k: the
 * copy engine clips a store's innermost dimension only to 16 bytes (seen
 * on the H200: k 130 and 17 wrote channels up to 135 and 23), which past k
 * would write the padding of a pitched y or the next pixel of a packed one. */
static inline const char *cdnn_cuda_conv_y_store_refusal(const cdnn_cuda_conv_params_t *p,
                                                         int64_t pixel_stride,
                                                         int check_pointers)
{
    if (p->y_type != CDNN_CUDA_F16 && p->y_type != CDNN_CUDA_BF16)
        return "the TMA-store conv kernels write y of f16 or bf16";
    if (p->k % 8 != 0)
        return "the TMA-store conv kernels need k a multiple of 8 (the copy engine stores "
               "16-byte pieces of a pixel)";
    if (p->y_strides[3] != 1 || (p->n * p->p * p->q > 1 && !cdnn_cuda_tma_stride_ok(pixel_stride)))
        return "the TMA-store conv kernels need y's channels contiguous and its pixel stride "
               "a multiple of 8 elements";
    if (check_pointers && ((uintptr_t)p->y & 15) != 0)
        return "the TMA-store conv kernels need y at a 16-byte aligned address";
    return NULL;
}

/** NULL if the implicit-GEMM TMA-store kernels can run p, else why not. */
static inline const char *cdnn_cuda_conv_store_refusal(const cdnn_cuda_conv_params_t *p,
                                                       int check_pointers)
{
    const char *why = cdnn_cuda_conv_tma_refusal(p, check_pointers);
    return why ? why
               : cdnn_cuda_conv_y_store_refusal(p, cdnn_cuda_conv_tma_pixel_stride(p),
                                                check_pointers);
}

/** NULL if the stem's TMA-store kernels can run p, else why not: y's
 * output rows are a map dimension, so its images must be packed rows. */
static inline const char *cdnn_cuda_conv_stem_store_refusal(const cdnn_cuda_conv_params_t *p,
                                                            int check_pointers)
{
    const int64_t *ys = p->y_strides;
    const char *why = cdnn_cuda_conv_stem_refusal(p, check_pointers);
    if (!why)
        why = cdnn_cuda_conv_y_store_refusal(p, p->q > 1 ? ys[2] : 8, check_pointers);
    if (!why && ((p->n * p->p > 1 && !cdnn_cuda_tma_stride_ok(ys[1])) ||
                 (p->n > 1 && p->p > 1 && ys[0] != p->p * ys[1]) ||
                 (p->n > 1 && p->p == 1 && !cdnn_cuda_tma_stride_ok(ys[0]))))
        return "the stem's TMA-store kernels need y's rows a multiple of 8 elements apart and "
               "its images packed rows";
    return why;
}

/* y as the TMA-store kernels' map: box 64 x 64 x 1, 128-byte swizzle;
 * dims {k, rows, planes} with the given element strides. */
static inline int cdnn_cuda_conv_encode_y_map(cdnn_cuda_tensor_map_t *map,
                                              const cdnn_cuda_conv_params_t *p, int64_t rows,
                                              int64_t row_stride, int64_t planes,
                                              int64_t plane_stride,
                                              cdnn_cuda_encode_tiled_fn tiled)
{
    uint64_t dims[3] = {(uint64_t)p->k, (uint64_t)rows, (uint64_t)planes};
    /* Strides of dims of extent 1 are never used, but must be valid. */
    int64_t row = rows > 1 ? row_stride : (p->k + 7) / 8 * 8;
    int64_t plane = planes > 1 ? plane_stride : row * rows;
    uint64_t strides[2] = {(uint64_t)row * 2, (uint64_t)plane * 2};
    uint32_t box[3] = {64, 64, 1}, element_strides[3] = {1, 1, 1};
    int data_type = p->y_type == CDNN_CUDA_BF16 ? CDNN_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                : CDNN_CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    return tiled(map, data_type, 3, p->y, dims, strides, box, element_strides, 0,
                 CDNN_CU_TENSOR_MAP_SWIZZLE_128B, CDNN_CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 0);
}

/* The GEMM the conv amounts to, for the kernels' consumers and epilogue:
 * rows the output pixels in (image, i, j) order, columns the filters. */
static inline void cdnn_cuda_conv_tma_gemm(const cdnn_cuda_conv_params_t *p,
                                           cdnn_cuda_matmul_params_t *g)
{
    memset(g, 0, sizeof *g);
    g->batch = 1;
    g->m = p->n * p->p * p->q;
    g->n = p->k;
    g->k = p->r * p->s * p->c;
    g->a = p->x, g->a_type = p->x_type;
    g->b = p->filter, g->b_type = p->w_type;
    g->b_row_stride = 1, g->b_col_stride = p->w_strides[0]; /* k-contiguous */
    g->c = p->y, g->c_type = p->y_type;
    g->c_row_stride = cdnn_cuda_conv_tma_pixel_stride(p), g->c_col_stride = p->y_strides[3];
    g->c_batch_stride = g->m * g->c_row_stride;
    g->bias = p->bias, g->bias_stride = p->bias_stride, g->bias_type = p->bias_type;
    g->res_type = p->y_type;
    g->activation = p->activation;
}

/**
 * Fill t->gemm and t's two maps from t->conv for a kernel of tile_m x
 * tile_n.  t->conv must pass cdnn_cuda_conv_tma_refusal(.., 1).  Returns
 * the driver's result (0 on success).
 */
static inline int cdnn_cuda_conv_tma_encode(cdnn_cuda_conv_tma_params_t *t, int tile_m,
                                            int tile_n, cdnn_cuda_encode_im2col_fn im2col,
                                            cdnn_cuda_encode_tiled_fn tiled)
{
    const cdnn_cuda_conv_params_t *p = &t->conv;
    const int64_t *xs = p->x_strides;
    int lower[2], upper[2];
    cdnn_cuda_conv_tma_gemm(p, &t->gemm);
    cdnn_cuda_conv_tma_corners(p, lower, upper);
    /* Strides of dims of extent 1 are never used, but must be valid. */
    int64_t pixel = p->w > 1 ? xs[2] : p->c;
    int64_t row = p->h > 1 ? xs[1] : pixel * p->w;
    int64_t image = p->n > 1 ? xs[0] : row * p->h;
    uint64_t dims[4] = {(uint64_t)p->c, (uint64_t)p->w, (uint64_t)p->h, (uint64_t)p->n};
    uint64_t strides[3] = {(uint64_t)pixel * 2, (uint64_t)row * 2, (uint64_t)image * 2};
    uint32_t element_strides[4] = {1, (uint32_t)p->stride_w, (uint32_t)p->stride_h, 1};
    int data_type = p->x_type == CDNN_CUDA_BF16 ? CDNN_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                : CDNN_CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    int r = im2col(&t->x_map, data_type, 4, (void *)(uintptr_t)p->x, dims, strides, lower,
                   upper, CDNN_CUDA_CONV_WGMMA_CHANNELS, (uint32_t)tile_m, element_strides, 0,
                   CDNN_CU_TENSOR_MAP_SWIZZLE_128B, CDNN_CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 0);
    if (r == 0)
        r = cdnn_cuda_tma_encode_operand(tiled, &t->w_map, p->w_type, p->filter, t->gemm.k, p->k,
                                         p->w_strides[0], 1, 0, (uint32_t)tile_n);
    return r;
}

#endif
