// matmul_f32.cu -- "cuda-matmul-v1" for f32 operands on the SIMT cores:
// exact f32 fused multiply-adds (no TF32), so the result is what an f32
// CPU loop gives up to summation order.  The textbook shared-memory tiling,
// correct first: a block computes a tile_m x tile_n tile of C in steps of 16
// along k; each thread owns a rows x cols block of it in registers.  Loads
// are element by element with bounds checks, so any strides are correct;
// the tile's rows are read along k and its columns along n, which
// coalesces for a row-major A and B.
#include "matmul_epilogue.cuh"

namespace cdnn {
namespace {

constexpr int kTileK = 16;

template <int TileM, int TileN, int Rows, int Cols>
__device__ __forceinline__ void matmul_f32(const cdnn_cuda_matmul_params_t &p) {
    constexpr int kThreadsN = TileN / Cols, kThreads = (TileM / Rows) * kThreadsN;
    // A is kept transposed ([k][m]) so that a thread's column of A, like its
    // row of B, is contiguous; +4 keeps the float4 reads aligned and spreads
    // the transposing stores over the banks.
    __shared__ __align__(16) float a_tile[kTileK][TileM + 4];
    __shared__ __align__(16) float b_tile[kTileK][TileN + 4];

    const int64_t batch = blockIdx.z;
    const int64_t m0 = int64_t(blockIdx.y) * TileM, n0 = int64_t(blockIdx.x) * TileN;
    const float *a = static_cast<const float *>(p.a) + batch * p.a_batch_stride;
    const float *b = static_cast<const float *>(p.b) + batch * p.b_batch_stride;
    const int thread_m = (threadIdx.x / kThreadsN) * Rows;
    const int thread_n = (threadIdx.x % kThreadsN) * Cols;
    float acc[Rows][Cols] = {};

    for (int64_t k0 = 0; k0 < p.k; k0 += kTileK) {
#pragma unroll
        for (int e = threadIdx.x; e < TileM * kTileK; e += kThreads) {
            const int64_t row = m0 + e / kTileK, k = k0 + e % kTileK;
            a_tile[e % kTileK][e / kTileK] =
                row < p.m && k < p.k ? a[row * p.a_row_stride + k * p.a_col_stride] : 0.0f;
        }
#pragma unroll
        for (int e = threadIdx.x; e < kTileK * TileN; e += kThreads) {
            const int64_t k = k0 + e / TileN, col = n0 + e % TileN;
            b_tile[e / TileN][e % TileN] =
                k < p.k && col < p.n ? b[k * p.b_row_stride + col * p.b_col_stride] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kTileK; ++kk) {
            float a_frag[Rows], b_frag[Cols];
#pragma unroll
            for (int i = 0; i < Rows; i += 4)
                *reinterpret_cast<float4 *>(&a_frag[i]) =
                    *reinterpret_cast<const float4 *>(&a_tile[kk][thread_m + i]);
#pragma unroll
            for (int j = 0; j < Cols; j += 4)
                *reinterpret_cast<float4 *>(&b_frag[j]) =
                    *reinterpret_cast<const float4 *>(&b_tile[kk][thread_n + j]);
#pragma unroll
            for (int i = 0; i < Rows; ++i)
#pragma unroll
                for (int j = 0; j < Cols; ++j)
                    acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < Rows; ++i)
#pragma unroll
        for (int j = 0; j < Cols; ++j)
            finish_element_out_of_line(p, batch, m0 + thread_m + i, n0 + thread_n + j, acc[i][j]);
}

} // namespace
} // namespace cdnn

#define CDNN_MATMUL_F32_ENTRY(tm, tn, rows, cols)                                               \
    extern "C" __global__ void __launch_bounds__((tm) / (rows) * (tn) / (cols))                 \
        cdnn_cuda_matmul_f32_##tm##x##tn(const __grid_constant__ cdnn_cuda_matmul_params_t params) { \
        cdnn::matmul_f32<tm, tn, rows, cols>(params);                                           \
    }

CDNN_CUDA_MATMUL_F32_CONFIGS(CDNN_MATMUL_F32_ENTRY)
