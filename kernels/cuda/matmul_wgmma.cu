// matmul_wgmma.cu -- "cuda-matmul-v1" on Hopper (sm_90a only): wgmma fed by
// the tensor memory accelerator, f16 and bf16 operands, f32 accumulation,
// the fused epilogue.  The launch ABI is cuda_kernel.h's (the params, then
// two tensor maps); matmul_tma.h encodes the maps.  wgmma_gemm.cuh holds
// the machinery (producer, consumers, epilogue; it says how they work);
// this file says what the producer loads: A's tile_m x 64 box of the
// a map and B's 64-row (k-contiguous) or 64-column (n-contiguous) boxes
// of the b map, per batch.  The "_c2" kernels run in clusters of two
// blocks that take vertically adjacent tiles and share B's tile: each
// block loads half of its boxes and multicasts them to both.  The
// "_store" kernels store C by TMA from shared memory (c_map, a third map).
#include "wgmma_gemm.cuh"

namespace cdnn {
namespace {

// B's tile comes in boxes of 64 rows of n (k-contiguous) or 64 columns
// (n-contiguous), each 64 k deep; with Cluster 2 the block of rank r loads
// the boxes nb with nb % 2 == r and multicasts them to both blocks.
template <int TileM, int TileN, int Stages, bool BKContiguous, int Cluster>
__device__ __forceinline__ void produce(const cdnn_cuda_matmul_tma_params_t &params,
                                        const Ring &ring) {
    const cdnn_cuda_matmul_params_t &p = params.matmul;
    const int rank = int(blockIdx.x % Cluster);
    tma_prefetch_map(&params.a_map);
    tma_prefetch_map(&params.b_map);
    produce_ring<TileM, TileN, Stages, Cluster>(
        p, ring, [&](uint32_t a_dst, uint32_t b_dst, uint32_t bar, const Tile &tile, int64_t k) {
            const int32_t za = p.batch > 1 && p.a_batch_stride != 0 ? int32_t(tile.batch) : 0;
            const int32_t zb = p.batch > 1 && p.b_batch_stride != 0 ? int32_t(tile.batch) : 0;
            const int32_t k0 = int32_t(k * kTileK);
            tma_load(a_dst, &params.a_map, bar, k0, int32_t(tile.m0), za);
#pragma unroll
            for (int nb = 0; nb < TileN / 64; ++nb) {
                if (nb % Cluster != rank)
                    continue;
                const uint32_t dst = b_dst + nb * 64 * kRowBytes;
                const int32_t n0 = int32_t(tile.n0) + 64 * nb;
                const int32_t c0 = BKContiguous ? k0 : n0, c1 = BKContiguous ? n0 : k0;
                if (Cluster == 1)
                    tma_load(dst, &params.b_map, bar, c0, c1, zb);
                else
                    tma_load_multicast(dst, &params.b_map, bar, c0, c1, zb,
                                       uint16_t((1u << Cluster) - 1));
            }
        });
}

template <int DType, int TileM, int TileN, int Stages, int Cluster>
__device__ __forceinline__ void matmul_wgmma(const cdnn_cuda_matmul_tma_params_t &params) {
    const cdnn_cuda_matmul_params_t &p = params.matmul;
    const bool b_k_contiguous = p.b_row_stride == 1 && p.b_col_stride != 1;
    gemm_kernel<DType, TileM, TileN, Stages, Cluster>(p, b_k_contiguous, [&](const Ring &ring) {
        if (b_k_contiguous)
            produce<TileM, TileN, Stages, true, Cluster>(params, ring);
        else
            produce<TileM, TileN, Stages, false, Cluster>(params, ring);
    });
}

// The TMA-store kernels: the same producer; each consumer's box buffers
// (Slots of them) past the barriers, 1024-aligned for the swizzle.
template <int DType, int TileM, int TileN, int Stages, int Slots>
__device__ __forceinline__ void
matmul_wgmma_store(const cdnn_cuda_matmul_tma_store_params_t &params) {
    using L = Layout<TileM, TileN, Stages>;
    static_assert(CDNN_CUDA_MATMUL_WGMMA_STORE_SMEM(TileM, TileN, Stages, Slots) >=
                      1024 + L::kRingBytes + 1024 + kConsumers * Slots * kBoxBytes &&
                      Stages * 16 <= 1024,
                  "cuda_kernel.h's smem covers the ring, the barriers, the box buffers");
    const cdnn_cuda_matmul_params_t &p = params.tma.matmul;
    const bool b_k_contiguous = p.b_row_stride == 1 && p.b_col_stride != 1;
    gemm_roles<TileM, TileN, Stages, 1>(
        [&](const Ring &ring) {
            tma_prefetch_map(&params.c_map);
            if (b_k_contiguous)
                produce<TileM, TileN, Stages, true, 1>(params.tma, ring);
            else
                produce<TileM, TileN, Stages, false, 1>(params.tma, ring);
        },
        [&](const Ring &ring, int consumer, uint32_t epilogue) {
            const uint32_t buffers = ((epilogue + 1023) & ~1023u) + consumer * Slots * kBoxBytes;
            if (b_k_contiguous)
                consume_store<DType, TileM, TileN, Stages, Slots, true>(p, &params.c_map, ring,
                                                                        consumer, buffers);
            else
                consume_store<DType, TileM, TileN, Stages, Slots, false>(p, &params.c_map, ring,
                                                                         consumer, buffers);
        });
}

} // namespace
} // namespace cdnn

#define CDNN_MATMUL_WGMMA_ENTRY(dtype, name, tm, tn, stages)                                   \
    extern "C" __global__ void __launch_bounds__(CDNN_CUDA_MATMUL_WGMMA_THREADS, 1)            \
        cdnn_cuda_matmul_wgmma_##name##_##tm##x##tn(                                           \
            const __grid_constant__ cdnn_cuda_matmul_tma_params_t params) {                    \
        cdnn::matmul_wgmma<dtype, tm, tn, stages, 1>(params);                                  \
    }
#define CDNN_MATMUL_WGMMA_ENTRIES(tm, tn, stages)                   \
    CDNN_MATMUL_WGMMA_ENTRY(CDNN_CUDA_F16, f16, tm, tn, stages)     \
    CDNN_MATMUL_WGMMA_ENTRY(CDNN_CUDA_BF16, bf16, tm, tn, stages)

CDNN_CUDA_MATMUL_WGMMA_CONFIGS(CDNN_MATMUL_WGMMA_ENTRIES)

// The 2-block cluster kernels: "..._c2_<dtype>_<tm>x<tn>".
#define CDNN_MATMUL_WGMMA_C2_ENTRY(dtype, name, tm, tn, stages)                                \
    extern "C" __global__ void __cluster_dims__(2, 1, 1)                                       \
        __launch_bounds__(CDNN_CUDA_MATMUL_WGMMA_THREADS, 1)                                   \
            cdnn_cuda_matmul_wgmma_c2_##name##_##tm##x##tn(                                    \
                const __grid_constant__ cdnn_cuda_matmul_tma_params_t params) {                \
        cdnn::matmul_wgmma<dtype, tm, tn, stages, 2>(params);                                  \
    }
#define CDNN_MATMUL_WGMMA_C2_ENTRIES(tm, tn, stages)                   \
    CDNN_MATMUL_WGMMA_C2_ENTRY(CDNN_CUDA_F16, f16, tm, tn, stages)     \
    CDNN_MATMUL_WGMMA_C2_ENTRY(CDNN_CUDA_BF16, bf16, tm, tn, stages)

CDNN_CUDA_MATMUL_WGMMA_C2_CONFIGS(CDNN_MATMUL_WGMMA_C2_ENTRIES)

// The TMA-store kernels: "..._store_<dtype>_<tm>x<tn>".
#define CDNN_MATMUL_WGMMA_STORE_ENTRY(dtype, name, tm, tn, stages, slots)                      \
    extern "C" __global__ void __launch_bounds__(CDNN_CUDA_MATMUL_WGMMA_THREADS, 1)            \
        cdnn_cuda_matmul_wgmma_store_##name##_##tm##x##tn(                                     \
            const __grid_constant__ cdnn_cuda_matmul_tma_store_params_t params) {              \
        cdnn::matmul_wgmma_store<dtype, tm, tn, stages, slots>(params);                        \
    }
#define CDNN_MATMUL_WGMMA_STORE_ENTRIES(tm, tn, stages, slots)                   \
    CDNN_MATMUL_WGMMA_STORE_ENTRY(CDNN_CUDA_F16, f16, tm, tn, stages, slots)     \
    CDNN_MATMUL_WGMMA_STORE_ENTRY(CDNN_CUDA_BF16, bf16, tm, tn, stages, slots)

CDNN_CUDA_MATMUL_WGMMA_STORE_CONFIGS(CDNN_MATMUL_WGMMA_STORE_ENTRIES)
