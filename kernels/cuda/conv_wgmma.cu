// conv_wgmma.cu -- "cuda-conv-v1" on Hopper (sm_90a only): the forward
// convolution as an implicit GEMM on the Hopper matmul's machinery
// (wgmma_gemm.cuh: producer warpgroup, mbarrier ring, two wgmma consumer
// warpgroups, persistent tiles, the fused epilogue), f16 and bf16 operands,
// f32 accumulation, bias and activation fused.
//
// The GEMM's rows are the output pixels (image, i, j), its columns the
// filters, its k the taps (u, v, channel) in that order, 64 channels of
// one tap per k step (c is a multiple of 64), so that the KRSC filter is
// the GEMM's k-contiguous B as it lies, loaded by a tiled map.  The A tile
// of a step -- tile_m consecutive output pixels, 64 channels of tap (u, v)
// -- is one TMA copy in im2col mode (conv_tma.h says how the map walks the
// pixels): the coordinates are the window origin of the tile's first
// pixel and the channel chunk, the offsets the tap; the zero fill is the
// padding, and the map's traversal strides are the conv's.  Im2col never
// exists in memory, and no thread computes an address per element.
#include "wgmma_gemm.cuh"

namespace cdnn {
namespace {

// The im2col box of `map` for the pixel walk starting at window origin
// (w, h) of image n, channels c0.., tap offsets (off_w, off_h), into dst;
// completes its bytes on bar.
__device__ __forceinline__ void tma_load_im2col(uint32_t dst, const cdnn_cuda_tensor_map_t *map,
                                                uint32_t bar, int32_t c0, int32_t w, int32_t h,
                                                int32_t n, uint16_t off_w, uint16_t off_h) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(w), "r"(h), "r"(n),
                 "h"(off_w), "h"(off_h)
                 : "memory");
}

// The producer thread: per tile, the window origin of its first pixel
// (decoded once); per k step, the tap and channel chunk, then the two
// copies.  Sizes fit 32 bits (the handler bounds them by 2^30).
template <int TileM, int TileN, int Stages>
__device__ __forceinline__ void produce_conv(const cdnn_cuda_conv_tma_params_t &params,
                                             const Ring &ring) {
    const cdnn_cuda_conv_params_t &cv = params.conv;
    tma_prefetch_map(&params.x_map);
    tma_prefetch_map(&params.w_map);
    const int chunks = int(cv.c) / CDNN_CUDA_CONV_WGMMA_CHANNELS, s = int(cv.s);
    const int q = int(cv.q), pq = int(cv.p * cv.q);
    int32_t origin_w = 0, origin_h = 0, image = 0;
    produce_ring<TileM, TileN, Stages>(
        params.gemm, ring,
        [&](uint32_t a_dst, uint32_t b_dst, uint32_t bar, const Tile &tile, int64_t k) {
            if (k == 0) {
                const int m = int(tile.m0);
                image = m / pq;
                const int rem = m - image * pq, i = rem / q, j = rem - i * q;
                origin_h = int32_t(i * cv.stride_h - cv.pad_h);
                origin_w = int32_t(j * cv.stride_w - cv.pad_w);
            }
            const int step = int(k), tap = step / chunks, u = tap / s, v = tap - u * s;
            const int c0 = (step - tap * chunks) * CDNN_CUDA_CONV_WGMMA_CHANNELS;
            tma_load_im2col(a_dst, &params.x_map, bar, c0, origin_w, origin_h, image,
                            uint16_t(v * cv.dilation_w), uint16_t(u * cv.dilation_h));
            tma_load(b_dst, &params.w_map, bar, step * kTileK, int32_t(tile.n0), 0);
        });
}

template <int DType, int TileM, int TileN, int Stages>
__device__ __forceinline__ void conv_wgmma(const cdnn_cuda_conv_tma_params_t &params) {
    static_assert(CDNN_CUDA_CONV_WGMMA_CHANNELS == kTileK, "a k step is one tap's chunk");
    gemm_kernel<DType, TileM, TileN, Stages>(params.gemm, true, [&](const Ring &ring) {
        produce_conv<TileM, TileN, Stages>(params, ring);
    });
}

} // namespace
} // namespace cdnn

#define CDNN_CONV_WGMMA_ENTRY(dtype, name, tm, tn, stages)                                     \
    extern "C" __global__ void __launch_bounds__(CDNN_CUDA_MATMUL_WGMMA_THREADS, 1)            \
        cdnn_cuda_conv_wgmma_##name##_##tm##x##tn(                                             \
            const __grid_constant__ cdnn_cuda_conv_tma_params_t params) {                      \
        cdnn::conv_wgmma<dtype, tm, tn, stages>(params);                                       \
    }
#define CDNN_CONV_WGMMA_ENTRIES(tm, tn, stages)                   \
    CDNN_CONV_WGMMA_ENTRY(CDNN_CUDA_F16, f16, tm, tn, stages)     \
    CDNN_CONV_WGMMA_ENTRY(CDNN_CUDA_BF16, bf16, tm, tn, stages)

CDNN_CUDA_CONV_WGMMA_CONFIGS(CDNN_CONV_WGMMA_ENTRIES)
