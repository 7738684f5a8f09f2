// matmul_small_m.cu -- "cuda-matmul-v1" for few rows of C (decode steps,
// m <= 64): memory-bound on b, so the work is spread over k as well as n.
//
// A cluster of `splits` blocks computes one tile_m x tile_n tile of C,
// block r of the cluster over the r-th split of k (matmul_tc.cuh's k loop
// and cp.async ring, deep enough to keep ~100 KB of b in flight per
// multiprocessor); the partial sums meet in distributed shared memory,
// where each block of the cluster adds up and finishes (epilogue) a share
// of the tile's elements.  No workspace, one launch.  Grid: (ceil(n /
// tile_n) * splits, ceil(m / tile_m), batch), the cluster (splits, 1, 1)
// fixed at compile time.  Hopper (sm_90a): clusters.
#include <cooperative_groups.h>

#include "matmul_tc.cuh"

namespace cdnn {
namespace {

template <int DType, int TileM, int TileN, int WarpsM, int WarpsN, int Stages, int Splits>
__device__ __forceinline__ void matmul_small_m(const cdnn_cuda_matmul_params_t &p) {
    namespace cg = cooperative_groups;
    constexpr int kPitch = TileN + CDNN_CUDA_MATMUL_TC_OUT_PAD;
    extern __shared__ uint4 dynamic_shared[];
    uint16_t *shared = reinterpret_cast<uint16_t *>(dynamic_shared);
    float *partial = reinterpret_cast<float *>(dynamic_shared); // after the k loop

    cg::cluster_group cluster = cg::this_cluster();
    const int split = static_cast<int>(cluster.block_rank());
    const int64_t batch = blockIdx.z;
    const int64_t m0 = int64_t(blockIdx.y) * TileM, n0 = int64_t(blockIdx.x / Splits) * TileN;
    // Whole k steps a split, so that every split but the last ends on a step.
    const int64_t steps = (p.k + kTileK - 1) / kTileK, per_split = (steps + Splits - 1) / Splits;
    const int64_t k_begin = min(p.k, split * per_split * kTileK);
    const int64_t k_end = min(p.k, (split + 1) * per_split * kTileK);
    if (p.b_row_stride == 1 && p.b_col_stride != 1)
        matmul_tc_mainloop<DType, TileM, TileN, WarpsM, WarpsN, Stages, true>(
            p, batch, m0, n0, k_begin, k_end, shared, partial);
    else
        matmul_tc_mainloop<DType, TileM, TileN, WarpsM, WarpsN, Stages, false>(
            p, batch, m0, n0, k_begin, k_end, shared, partial);
    cluster.sync(); // every block's partial tile is in its shared memory

    const float *partials[Splits];
#pragma unroll
    for (int r = 0; r < Splits; ++r)
        partials[r] = cluster.map_shared_rank(partial, r);
    // Block r finishes elements r * threads + t, (r + splits) * threads + t,
    // ...: consecutive threads take consecutive columns, so stores coalesce.
#pragma unroll 1
    for (int e = split * blockDim.x + threadIdx.x; e < TileM * TileN; e += Splits * blockDim.x) {
        const int row = e / TileN, col = e % TileN;
        float sum = 0;
#pragma unroll
        for (int r = 0; r < Splits; ++r)
            sum += partials[r][row * kPitch + col];
        finish_element(p, batch, m0 + row, n0 + col, sum);
    }
    cluster.sync(); // no block leaves while another still reads its partial tile
}

} // namespace
} // namespace cdnn

#define CDNN_MATMUL_SMALL_M_ENTRY(dtype, name, tm, tn, wm, wn, stages, splits)                \
    extern "C" __global__ void __cluster_dims__(splits, 1, 1)                                 \
        __launch_bounds__(32 * (wm) * (wn)) cdnn_cuda_matmul_small_m_##name##_##tm##x##tn(    \
            const __grid_constant__ cdnn_cuda_matmul_params_t params) {                       \
        cdnn::matmul_small_m<dtype, tm, tn, wm, wn, stages, splits>(params);                  \
    }
#define CDNN_MATMUL_SMALL_M_ENTRIES(tm, tn, wm, wn, stages, splits)                  \
    CDNN_MATMUL_SMALL_M_ENTRY(CDNN_CUDA_F16, f16, tm, tn, wm, wn, stages, splits)   \
    CDNN_MATMUL_SMALL_M_ENTRY(CDNN_CUDA_BF16, bf16, tm, tn, wm, wn, stages, splits)

CDNN_CUDA_MATMUL_SMALL_M_CONFIGS(CDNN_MATMUL_SMALL_M_ENTRIES)
