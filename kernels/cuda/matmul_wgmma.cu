// matmul_wgmma.cu -- "cuda-matmul-v1" on Hopper (sm_90a only): wgmma fed by
// the tensor memory accelerator, f16 and bf16 operands, f32 accumulation,
// the fused epilogue.  The launch ABI is cuda_kernel.h's (the params, then
// two tensor maps); matmul_tma.h encodes the maps.  wgmma_gemm.cuh holds
// the machinery (producer, consumers, epilogue; it says how they work);
// this file says what the producer loads: A's tile_m x 64 box of the
// a map and B's tile_n x 64 (k-contiguous) or 64-column boxes
// (n-contiguous) of the b map, per batch.
#include "wgmma_gemm.cuh"

namespace cdnn {
namespace {

template <int TileM, int TileN, int Stages, bool BKContiguous>
__device__ __forceinline__ void produce(const cdnn_cuda_matmul_tma_params_t &params,
                                        const Ring &ring) {
    const cdnn_cuda_matmul_params_t &p = params.matmul;
    tma_prefetch_map(&params.a_map);
    tma_prefetch_map(&params.b_map);
    produce_ring<TileM, TileN, Stages>(
        p, ring, [&](uint32_t a_dst, uint32_t b_dst, uint32_t bar, const Tile &tile, int64_t k) {
            const int32_t za = p.batch > 1 && p.a_batch_stride != 0 ? int32_t(tile.batch) : 0;
            const int32_t zb = p.batch > 1 && p.b_batch_stride != 0 ? int32_t(tile.batch) : 0;
            const int32_t k0 = int32_t(k * kTileK);
            tma_load(a_dst, &params.a_map, bar, k0, int32_t(tile.m0), za);
            if (BKContiguous) {
                tma_load(b_dst, &params.b_map, bar, k0, int32_t(tile.n0), zb);
            } else {
#pragma unroll
                for (int nb = 0; nb < TileN / 64; ++nb) // 64 columns x 64 k per box
                    tma_load(b_dst + nb * 64 * kRowBytes, &params.b_map, bar,
                             int32_t(tile.n0) + 64 * nb, k0, zb);
            }
        });
}

template <int DType, int TileM, int TileN, int Stages>
__device__ __forceinline__ void matmul_wgmma(const cdnn_cuda_matmul_tma_params_t &params) {
    const cdnn_cuda_matmul_params_t &p = params.matmul;
    const bool b_k_contiguous = p.b_row_stride == 1 && p.b_col_stride != 1;
    gemm_kernel<DType, TileM, TileN, Stages>(p, b_k_contiguous, [&](const Ring &ring) {
        if (b_k_contiguous)
            produce<TileM, TileN, Stages, true>(params, ring);
        else
            produce<TileM, TileN, Stages, false>(params, ring);
    });
}

} // namespace
} // namespace cdnn

#define CDNN_MATMUL_WGMMA_ENTRY(dtype, name, tm, tn, stages)                                   \
    extern "C" __global__ void __launch_bounds__(CDNN_CUDA_MATMUL_WGMMA_THREADS, 1)            \
        cdnn_cuda_matmul_wgmma_##name##_##tm##x##tn(                                           \
            const __grid_constant__ cdnn_cuda_matmul_tma_params_t params) {                    \
        cdnn::matmul_wgmma<dtype, tm, tn, stages>(params);                                     \
    }
#define CDNN_MATMUL_WGMMA_ENTRIES(tm, tn, stages)                   \
    CDNN_MATMUL_WGMMA_ENTRY(CDNN_CUDA_F16, f16, tm, tn, stages)     \
    CDNN_MATMUL_WGMMA_ENTRY(CDNN_CUDA_BF16, bf16, tm, tn, stages)

CDNN_CUDA_MATMUL_WGMMA_CONFIGS(CDNN_MATMUL_WGMMA_ENTRIES)
