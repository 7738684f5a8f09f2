// matmul_tc.cuh -- the k loop of the "cuda-matmul-v1" tensor-core kernels
// (mma.sync m16n8k16, f32 accumulators): operand staging through a
// cp.async ring and the warps' fragments, shared by matmul_tc.cu (a block
// per tile) and matmul_small_m.cu (a cluster of blocks per tile, each a
// split of k).
//
// Layouts: A is staged k-contiguous ([tile_m][32 + 8] halves); B is staged
// the way it lies in memory, k-contiguous ([tile_n][32 + 8], ldmatrix) or
// n-contiguous ([32][tile_n + 8], ldmatrix.trans), so neither common
// weight layout is transposed on the way in.  A layout the 16-byte copies
// cannot serve (a stride that is not 1, an odd pitch, a misaligned base)
// is gathered element by element into the same staging, so every stride
// is correct, only slower.
#ifndef CDNN_KERNELS_CUDA_MATMUL_TC_CUH
#define CDNN_KERNELS_CUDA_MATMUL_TC_CUH

#include "matmul_epilogue.cuh"

namespace cdnn {
namespace {

constexpr int kTileK = CDNN_CUDA_MATMUL_TC_TILE_K;
constexpr int kPitchK = kTileK + 8; // halves per staged row of a k-contiguous tile

__device__ __forceinline__ uint32_t shared_address(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared memory, asynchronously (bypassing L1:
// each tile is read once per block).
__device__ __forceinline__ void copy16_async(uint32_t dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }

// Wait until at most `Pending` groups of copies are still in flight.
template <int Pending>
__device__ __forceinline__ void wait_copies() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

__device__ __forceinline__ void load_matrix_x4(uint32_t (&r)[4], uint32_t address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ __forceinline__ void load_matrix_x4_transposed(uint32_t (&r)[4], uint32_t address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// d += a (16x16, row) * b (16x8, col), f32 accumulators.
template <int DType>
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                            uint32_t b1) {
    if (DType == CDNN_CUDA_F16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One operand as the loader sees it: a matrix of outer x inner 16-bit
// elements, staged as rows (outer) of contiguous inner elements.
struct Operand {
    const uint16_t *base; // this batch's matrix
    int64_t outer_stride, inner_stride;
    int64_t outer_size, inner_size;
    bool vectorised; // 16-byte copies are possible
};

__device__ __forceinline__ Operand make_operand(const void *base, int64_t outer_stride,
                                                int64_t inner_stride, int64_t outer_size,
                                                int64_t inner_size) {
    Operand op;
    op.base = static_cast<const uint16_t *>(base);
    op.outer_stride = outer_stride;
    op.inner_stride = inner_stride;
    op.outer_size = outer_size;
    op.inner_size = inner_size;
    op.vectorised = inner_stride == 1 && outer_stride % 8 == 0 && aligned16(base);
    return op;
}

// The slow path of stage_tile: 8 elements at (outer, inner..inner + 7) of
// any layout, zeros outside the matrix, stored to shared memory as one
// 16-byte chunk.  Out of line, so that the fast path's registers and code
// do not pay for it.
__device__ __noinline__ void gather_chunk(uint16_t *dst, Operand op, int64_t outer, int64_t inner) {
    uint32_t words[4] = {0, 0, 0, 0};
    if (outer < op.outer_size) {
        const uint16_t *row = op.base + outer * op.outer_stride;
        for (int e = 0; e < 8 && inner + e < op.inner_size; ++e)
            words[e >> 1] |= uint32_t(row[(inner + e) * op.inner_stride]) << (16 * (e & 1));
    }
    *reinterpret_cast<uint4 *>(dst) = make_uint4(words[0], words[1], words[2], words[3]);
}

// One chunk of a tile that is not wholly inside the matrix (or not in a
// layout cp.async can copy): zeros past the edge, a 16-byte copy where the
// chunk is inside and copyable, else a gather.  A chunk across the edge is
// gathered rather than copied with a partial cp.async (src-size < 16):
// compute-sanitizer counts such a copy as a 16-byte read past the end of
// the allocation.
__device__ __forceinline__ void stage_edge_chunk(uint16_t *dst, const Operand &op, int64_t outer,
                                                 int64_t inner) {
    const int64_t left = outer < op.outer_size ? op.inner_size - inner : 0; // elements inside
    if (left <= 0)
        *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
    else if (op.vectorised && left >= 8)
        copy16_async(shared_address(dst), op.base + outer * op.outer_stride + inner);
    else
        gather_chunk(dst, op, outer, inner);
}

// Stage the Rows x Cols tile at (outer0, inner0) of op into shared memory
// (row pitch Pitch halves), zeros outside the matrix.  Each thread moves
// chunks of 8 halves; a tile wholly inside a copyable operand (every tile
// but the last row and column of blocks, for aligned row-major data) takes
// the plain path of one cp.async per chunk.
template <int Rows, int Cols, int Pitch, int Threads>
__device__ __forceinline__ void stage_tile(uint16_t *tile, const Operand &op, int64_t outer0,
                                           int64_t inner0) {
    constexpr int kChunksPerRow = Cols / 8;
    constexpr int kChunks = Rows * kChunksPerRow;
    // Every thread moves the same number of chunks, or (a small tile) at
    // most one.
    static_assert(kChunks % Threads == 0 || kChunks < Threads, "uneven chunks per thread");
    const bool whole = op.vectorised && outer0 + Rows <= op.outer_size &&
                       inner0 + Cols <= op.inner_size;
#pragma unroll
    for (int i = 0; i < (kChunks + Threads - 1) / Threads; ++i) {
        const int chunk = static_cast<int>(threadIdx.x) + i * Threads;
        if (kChunks < Threads && chunk >= kChunks)
            break;
        const int row = chunk / kChunksPerRow, col = (chunk % kChunksPerRow) * 8;
        const int64_t outer = outer0 + row, inner = inner0 + col;
        uint16_t *dst = tile + row * Pitch + col;
        if (whole)
            copy16_async(shared_address(dst), op.base + outer * op.outer_stride + inner);
        else
            stage_edge_chunk(dst, op, outer, inner);
    }
}

// The k loop of one tile_m x tile_n tile of C at (m0, n0) over k in
// [k_begin, k_end), k_begin a multiple of 32 (a split of k, or all of it);
// leaves the f32 sums in tile_out (tile_m rows of tile_n + OUT_PAD).
template <int DType, int TileM, int TileN, int WarpsM, int WarpsN, int Stages, bool BKContiguous>
__device__ __forceinline__ void matmul_tc_mainloop(const cdnn_cuda_matmul_params_t &p, int64_t batch,
                                                   int64_t m0, int64_t n0, int64_t k_begin,
                                                   int64_t k_end, uint16_t *shared,
                                                   float *tile_out) {
    constexpr int kThreads = 32 * WarpsM * WarpsN;
    constexpr int kWarpM = TileM / WarpsM, kWarpN = TileN / WarpsN;
    constexpr int kFragsM = kWarpM / 16, kFragsN = kWarpN / 8;
    static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "warp tiles are whole ldmatrix.x4 loads");
    constexpr int kPitchN = TileN + 8;
    constexpr int kStageHalves = TileM * kPitchK + CDNN_CUDA_MATMUL_TC_B_HALVES(TileN);
    constexpr int kOutPitch = TileN + CDNN_CUDA_MATMUL_TC_OUT_PAD;

    const auto *a_base = static_cast<const uint16_t *>(p.a) + batch * p.a_batch_stride;
    const auto *b_base = static_cast<const uint16_t *>(p.b) + batch * p.b_batch_stride;
    const Operand a = make_operand(a_base, p.a_row_stride, p.a_col_stride, p.m, p.k);
    const Operand b = BKContiguous ? make_operand(b_base, p.b_col_stride, p.b_row_stride, p.n, p.k)
                                   : make_operand(b_base, p.b_row_stride, p.b_col_stride, p.k, p.n);

    auto stage_k_step = [&](int stage, int64_t k0) {
        uint16_t *a_tile = shared + stage * kStageHalves;
        uint16_t *b_tile = a_tile + TileM * kPitchK;
        stage_tile<TileM, kTileK, kPitchK, kThreads>(a_tile, a, m0, k0);
        if (BKContiguous)
            stage_tile<TileN, kTileK, kPitchK, kThreads>(b_tile, b, n0, k0);
        else
            stage_tile<kTileK, TileN, kPitchN, kThreads>(b_tile, b, k0, n0);
    };

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warp_m0 = (warp / WarpsN) * kWarpM, warp_n0 = (warp % WarpsN) * kWarpN;
    float acc[kFragsM][kFragsN][4] = {};

    const int64_t k_steps = (k_end - k_begin + kTileK - 1) / kTileK; // k_end >= k_begin
#pragma unroll
    for (int s = 0; s < Stages - 1; ++s) {
        if (s < k_steps)
            stage_k_step(s, k_begin + int64_t(s) * kTileK);
        commit_copies();
    }
    for (int64_t step = 0; step < k_steps; ++step) {
        wait_copies<Stages - 2>();
        __syncthreads(); // this step's tile is in; the oldest buffer is free
        const int64_t ahead = step + Stages - 1;
        if (ahead < k_steps)
            stage_k_step(int(ahead % Stages), k_begin + ahead * kTileK);
        commit_copies(); // an empty group keeps the count of pending groups exact

        const uint16_t *a_tile = shared + int(step % Stages) * kStageHalves;
        const uint16_t *b_tile = a_tile + TileM * kPitchK;
#pragma unroll
        for (int kk = 0; kk < kTileK; kk += 16) {
            uint32_t a_frag[kFragsM][4], b_frag[kFragsN][2];
#pragma unroll
            for (int i = 0; i < kFragsM; ++i)
                load_matrix_x4(a_frag[i], shared_address(a_tile +
                                                         (warp_m0 + i * 16 + (lane & 15)) * kPitchK +
                                                         kk + (lane >> 4) * 8));
#pragma unroll
            for (int j = 0; j < kFragsN; j += 2) {
                // Matrices 0..3 of the x4 load: (n block j, k low), (j, k high),
                // (j + 1, k low), (j + 1, k high): b0 and b1 of two n blocks.
                const int q = lane >> 3, r = lane & 7;
                uint32_t regs[4];
                if (BKContiguous)
                    load_matrix_x4(regs, shared_address(b_tile +
                                                        (warp_n0 + j * 8 + (q >> 1) * 8 + r) * kPitchK +
                                                        kk + (q & 1) * 8));
                else
                    load_matrix_x4_transposed(
                        regs, shared_address(b_tile + (kk + (q & 1) * 8 + r) * kPitchN + warp_n0 +
                                             j * 8 + (q >> 1) * 8));
                b_frag[j][0] = regs[0];
                b_frag[j][1] = regs[1];
                b_frag[j + 1][0] = regs[2];
                b_frag[j + 1][1] = regs[3];
            }
#pragma unroll
            for (int i = 0; i < kFragsM; ++i)
#pragma unroll
                for (int j = 0; j < kFragsN; ++j)
                    mma_16x8x16<DType>(acc[i][j], a_frag[i], b_frag[j][0], b_frag[j][1]);
        }
    }
    wait_copies<0>(); // no copy may outlive the block, even an empty group
    __syncthreads();  // every warp is done with the staging buffers tile_out reuses

    // Accumulator layout of m16n8: c0, c1 at (lane / 4, 2 * (lane % 4) + {0, 1}),
    // c2, c3 eight rows below.
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) {
            const int row = warp_m0 + i * 16 + (lane >> 2);
            const int col = warp_n0 + j * 8 + (lane & 3) * 2;
            *reinterpret_cast<float2 *>(tile_out + row * kOutPitch + col) =
                make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2 *>(tile_out + (row + 8) * kOutPitch + col) =
                make_float2(acc[i][j][2], acc[i][j][3]);
        }
}

} // namespace
} // namespace cdnn

#endif
