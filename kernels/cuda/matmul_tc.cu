// matmul_tc.cu -- "cuda-matmul-v1" on the tensor cores: f16 and bf16
// operands, f32 accumulation (mma.sync.m16n8k16), the fused epilogue.
//
// The classic Ampere structure, correct first: a block computes a tile_m x
// tile_n tile of C; the k loop (matmul_tc.cuh) runs in steps of 32 through
// a ring of `stages` shared-memory buffers filled by cp.async (16-byte
// copies; the chunks across the matrix edges gathered, those past them
// zeroed) while the tensor cores work on an older buffer; warps read their
// fragments with ldmatrix.  On Hopper this reaches a fraction of what
// wgmma + TMA do (matmul_wgmma.cu); the SASS shows HMMA.
#include "matmul_tc.cuh"

namespace cdnn {
namespace {

// Consecutive blocks walk down groups of 8 tile rows before moving right,
// so that the blocks resident at once share A rows and B columns in L2.
__device__ __forceinline__ void tile_coordinates(int &tile_row, int &tile_col) {
    const int columns = gridDim.x, rows = gridDim.y, group = 8;
    const int id = blockIdx.y * columns + blockIdx.x;
    const int per_group = group * columns;
    const int first_row = (id / per_group) * group;
    const int group_rows = min(rows - first_row, group);
    tile_row = first_row + (id % per_group) % group_rows;
    tile_col = (id % per_group) / group_rows;
}

template <int DType, int TileM, int TileN, int WarpsM, int WarpsN, int Stages>
__device__ __forceinline__ void matmul_tc(const cdnn_cuda_matmul_params_t &p) {
    extern __shared__ uint4 dynamic_shared[];
    uint16_t *shared = reinterpret_cast<uint16_t *>(dynamic_shared);
    float *tile_out = reinterpret_cast<float *>(dynamic_shared); // after the k loop

    int tile_row, tile_col;
    tile_coordinates(tile_row, tile_col);
    const int64_t batch = blockIdx.z;
    const int64_t m0 = int64_t(tile_row) * TileM, n0 = int64_t(tile_col) * TileN;
    // B staged as it lies: k-contiguous when its k stride is 1 (and its n
    // stride is not), else n-contiguous (or gathered).
    if (p.b_row_stride == 1 && p.b_col_stride != 1)
        matmul_tc_mainloop<DType, TileM, TileN, WarpsM, WarpsN, Stages, true>(
            p, batch, m0, n0, 0, p.k, shared, tile_out);
    else
        matmul_tc_mainloop<DType, TileM, TileN, WarpsM, WarpsN, Stages, false>(
            p, batch, m0, n0, 0, p.k, shared, tile_out);
    __syncthreads();
    // The epilogue, once per kernel rather than once per accumulator
    // register: consecutive threads take consecutive columns of the tile,
    // so the stores of a row-major C coalesce.
#pragma unroll 1
    for (int e = threadIdx.x; e < TileM * TileN; e += blockDim.x)
        finish_element(p, batch, m0 + e / TileN, n0 + e % TileN,
                       tile_out[(e / TileN) * (TileN + CDNN_CUDA_MATMUL_TC_OUT_PAD) + e % TileN]);
}

} // namespace
} // namespace cdnn

#define CDNN_MATMUL_TC_ENTRY(dtype, name, tm, tn, wm, wn, stages)                           \
    extern "C" __global__ void __launch_bounds__(32 * (wm) * (wn))                          \
        cdnn_cuda_matmul_##name##_##tm##x##tn(const __grid_constant__ cdnn_cuda_matmul_params_t params) {     \
        cdnn::matmul_tc<dtype, tm, tn, wm, wn, stages>(params);                             \
    }
#define CDNN_MATMUL_TC_ENTRIES(tm, tn, wm, wn, stages)                  \
    CDNN_MATMUL_TC_ENTRY(CDNN_CUDA_F16, f16, tm, tn, wm, wn, stages)  \
    CDNN_MATMUL_TC_ENTRY(CDNN_CUDA_BF16, bf16, tm, tn, wm, wn, stages)

CDNN_CUDA_MATMUL_TC_CONFIGS(CDNN_MATMUL_TC_ENTRIES)
