// wgmma_gemm.cuh -- the Hopper GEMM machinery of matmul_wgmma.cu, shared
// with the implicit-GEMM convolution (conv_wgmma.cu): mbarriers, TMA
// copies, wgmma through shared-memory descriptors, the persistent tile
// order, the mbarrier ring, the consumer warpgroups' k loop and the fused
// epilogue (bias, activation, residual, cast) from their registers.  What
// differs between the two kernels is only what the producer thread loads
// at each k step: a kernel passes that as a functor to gemm_kernel (see
// produce_ring).  sm_90a only.
//
// A block computes a tile_m x tile_n tile of C with three warpgroups:
//   warpgroup 0, the producer: one thread issues, per k step of 64, the TMA
//     copies of A's tile_m x 64 and B's 64 x tile_n tiles into a ring of
//     `stages` shared-memory buffers (128-byte swizzle, the layout wgmma
//     reads without bank conflicts); each buffer's "full" mbarrier counts
//     the bytes in, its "empty" mbarrier counts the consumers out;
//   warpgroups 1 and 2, the consumers: each owns tile_m / 2 rows and runs
//     wgmma m64nNk16 over every k step as its buffer fills, keeping one
//     step's wgmma in flight while it releases the buffer of the step
//     before; at the end it applies the epilogue from its registers --
//     through per-warp buffers and its own stores (gemm_kernel), or into
//     shared-memory boxes that one thread stores by TMA (consume_store, for
//     16-bit row-major C; a 16-bit residual read from global memory).
// The producer gives its registers to the consumers (setmaxnreg): a
// consumer holds up to 128 f32 accumulators.
// With Cluster 2 (matmul_wgmma.cu's "_c2" kernels) two blocks of a
// cluster take vertically adjacent tiles, so they need the same B tile:
// each producer loads half of it and multicasts it to both blocks, and
// each consumer warp releases a stage to both producers.
// Tails in m, n and k are TMA's zero fill (a zero row or column adds
// nothing); the epilogue stores only inside C.
#ifndef CDNN_KERNELS_CUDA_WGMMA_GEMM_CUH
#define CDNN_KERNELS_CUDA_WGMMA_GEMM_CUH
#include "hopper_async.cuh"
#include "matmul_epilogue.cuh"
#include "wgmma_ops.cuh"

namespace cdnn {
namespace {

constexpr int kTileK = CDNN_CUDA_MATMUL_WGMMA_TILE_K;
constexpr int kRowBytes = kTileK * 2; // one swizzled row of a tile: 128 bytes
constexpr int kConsumers = 2;         // consumer warpgroups

template <int DType, int TileN, int TransB>
__device__ __forceinline__ void wgmma_tile(float (&d)[TileN / 2], uint64_t a, uint64_t b) {
    if (DType == CDNN_CUDA_BF16) {
        if (TileN == 64) wgmma_m64n64k16_bf16<TransB>(reinterpret_cast<float (&)[32]>(d), a, b);
        if (TileN == 256) wgmma_m64n256k16_bf16<TransB>(reinterpret_cast<float (&)[128]>(d), a, b);
        if (TileN == 192) wgmma_m64n192k16_bf16<TransB>(reinterpret_cast<float (&)[96]>(d), a, b);
        if (TileN == 128) wgmma_m64n128k16_bf16<TransB>(reinterpret_cast<float (&)[64]>(d), a, b);
    } else {
        if (TileN == 64) wgmma_m64n64k16_f16<TransB>(reinterpret_cast<float (&)[32]>(d), a, b);
        if (TileN == 256) wgmma_m64n256k16_f16<TransB>(reinterpret_cast<float (&)[128]>(d), a, b);
        if (TileN == 192) wgmma_m64n192k16_f16<TransB>(reinterpret_cast<float (&)[96]>(d), a, b);
        if (TileN == 128) wgmma_m64n128k16_f16<TransB>(reinterpret_cast<float (&)[64]>(d), a, b);
    }
}

// ---- the epilogue -----------------------------------------------------------------------

// Two values rounded to bf16 (else f16) in one word, lo in the low half:
// a pair of adjacent columns of C as it lies in memory.
__device__ __forceinline__ uint32_t pack_pair(float lo, float hi, bool bf16) {
    if (bf16) {
        const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<const uint32_t *>(&v);
    }
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const uint32_t *>(&v);
}

// The 128 threads of consumer warpgroup `consumer` (named barriers 2, 3).
__device__ __forceinline__ void consumer_sync(int consumer) {
    asm volatile("bar.sync %0, 128;\n" ::"r"(2 + consumer) : "memory");
}

// Each consumer warp finishes its accumulators through a buffer of its own
// (16 rows x 32 columns of f32; rows padded by 4 floats, which keeps the
// 16-byte reads aligned and spreads the fragment's rows over the banks),
// 32 columns at a time, so that the producer may refill the ring for the
// next tile meanwhile.
constexpr int kChunkCols = 32;
constexpr int kChunkPitch = kChunkCols + 4;
constexpr int kWarpBufferFloats = 16 * kChunkPitch;

// Elements (row, col..col + 7) of C from buf (already finished, in f32):
// one 16-byte store (two for f32) where they lie inside C, packed and
// aligned; else element by element.
__device__ __forceinline__ void store_eight(const cdnn_cuda_matmul_params_t &p, int64_t batch,
                                            int64_t row, int64_t col, const float *buf) {
    if (row >= p.m || col >= p.n)
        return;
    float v[8];
    *reinterpret_cast<float4 *>(v) = *reinterpret_cast<const float4 *>(buf);
    *reinterpret_cast<float4 *>(v + 4) = *reinterpret_cast<const float4 *>(buf + 4);
    const int64_t at = batch * p.c_batch_stride + row * p.c_row_stride + col * p.c_col_stride;
    const bool vector = p.c_col_stride == 1 && col + 8 <= p.n &&
                        aligned16(static_cast<const uint8_t *>(p.c) + at * element_bytes(p.c_type));
    if (vector && p.c_type == CDNN_CUDA_F32) {
        float *c = static_cast<float *>(p.c) + at;
        reinterpret_cast<float4 *>(c)[0] = make_float4(v[0], v[1], v[2], v[3]);
        reinterpret_cast<float4 *>(c)[1] = make_float4(v[4], v[5], v[6], v[7]);
    } else if (vector) {
        *reinterpret_cast<uint4 *>(static_cast<uint16_t *>(p.c) + at) = pack16(v, p.c_type);
    } else {
#pragma unroll
        for (int e = 0; e < 8; ++e)
            if (col + e < p.n)
                store_from_f32(p.c, at + e * p.c_col_stride, p.c_type, v[e]);
    }
}

// The chunk's bias, activation and residual, in place in buf: lane l
// takes column l of the 16 rows (so that residual loads coalesce), four
// rows at a time; the activation is fixed at compile time.  For the
// tiles whose consumers hold 128 accumulators a thread: there the
// register-direct way (stage_chunk with an activation) has too few
// registers left for its activations in flight (measured: bias+gelu
// 128x256 at 8192^3 600 TFLOP/s that way, ~677 this way).
template <int Act>
__device__ __forceinline__ void finish_rows(const cdnn_cuda_matmul_params_t &p, int64_t batch,
                                            int64_t row0, int64_t col, float bias, float *buf) {
    const int lane = threadIdx.x % 32;
    const bool residual = p.residual && col < p.n;
#pragma unroll 4
    for (int rr = 0; rr < 16; ++rr) {
        const int64_t row = row0 + rr;
        float x = activate(buf[rr * kChunkPitch + lane] + bias, Act);
        if (residual && row < p.m)
            x += load_as_f32(p.residual,
                             batch * p.res_batch_stride + row * p.res_row_stride +
                                 col * p.res_col_stride,
                             p.res_type);
        buf[rr * kChunkPitch + lane] = x;
    }
}

// The chunk's residual, added in place in buf: lane l takes column l of
// the 16 rows (so that the residual's loads coalesce), four rows at a
// time for independent loads in flight.
__device__ __forceinline__ void add_residual_rows(const cdnn_cuda_matmul_params_t &p,
                                                  int64_t batch, int64_t row0, int64_t col,
                                                  float *buf) {
    if (col >= p.n)
        return;
    const int lane = threadIdx.x % 32;
#pragma unroll 4
    for (int rr = 0; rr < 16; ++rr) {
        const int64_t row = row0 + rr;
        if (row < p.m)
            buf[rr * kChunkPitch + lane] += load_as_f32(
                p.residual,
                batch * p.res_batch_stride + row * p.res_row_stride + col * p.res_col_stride,
                p.res_type);
    }
}

// One warp's 16 x 32 chunk of accumulators into buf, with the bias and the
// activation (fixed at compile time) applied on the way, in registers: the
// 32 elements a lane holds are independent, so their activations overlap.
// The accumulator layout of wgmma m64nN (f32): lane l of warp w of the
// warpgroup holds, for each 8-column block j, (16 w + l / 4,
// 8 j + 2 (l % 4) + {0, 1}) in d[4j], d[4j + 1] and the same 8 rows below
// in d[4j + 2], d[4j + 3].  `bias` is the bias of column `lane` of the
// chunk; a lane's own columns' come from their lanes by shuffles.
template <int TileN, int Chunk, int Act, bool Bias>
__device__ __forceinline__ void stage_chunk(const float (&acc)[TileN / 2], float bias,
                                            float *buf) {
    const int lane = threadIdx.x % 32;
    const int r = lane / 4, c = 2 * (lane % 4);
#pragma unroll
    for (int jj = 0; jj < kChunkCols / 8; ++jj) {
        const int j = Chunk * (kChunkCols / 8) + jj;
        float x[4] = {acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]};
        if (Bias) {
            const float b0 = __shfl_sync(0xffffffffu, bias, 8 * jj + c);
            const float b1 = __shfl_sync(0xffffffffu, bias, 8 * jj + c + 1);
            x[0] += b0, x[1] += b1, x[2] += b0, x[3] += b1;
        }
        *reinterpret_cast<float2 *>(buf + r * kChunkPitch + 8 * jj + c) =
            make_float2(activate(x[0], Act), activate(x[1], Act));
        *reinterpret_cast<float2 *>(buf + (r + 8) * kChunkPitch + 8 * jj + c) =
            make_float2(activate(x[2], Act), activate(x[3], Act));
    }
}

// One warp's 16 x 32 chunk, finished through buf the lane-column way:
// registers to buf, then bias, activation and residual in place.
template <int TileN, int Chunk>
__device__ __forceinline__ void finish_chunk_by_columns(const cdnn_cuda_matmul_params_t &p,
                                                        int64_t batch, int64_t row0,
                                                        int64_t col0,
                                                        const float (&acc)[TileN / 2],
                                                        float bias, float *buf) {
    const int lane = threadIdx.x % 32;
    stage_chunk<TileN, Chunk, CDNN_CUDA_ACT_NONE, false>(acc, 0.0f, buf);
    __syncwarp();
    if (p.bias || p.residual || p.activation != CDNN_CUDA_ACT_NONE) {
        const int64_t col = col0 + lane;
        switch (p.activation) {
        case CDNN_CUDA_ACT_RELU:
            finish_rows<CDNN_CUDA_ACT_RELU>(p, batch, row0, col, bias, buf);
            break;
        case CDNN_CUDA_ACT_GELU:
            finish_rows<CDNN_CUDA_ACT_GELU>(p, batch, row0, col, bias, buf);
            break;
        case CDNN_CUDA_ACT_GELU_TANH:
            finish_rows<CDNN_CUDA_ACT_GELU_TANH>(p, batch, row0, col, bias, buf);
            break;
        case CDNN_CUDA_ACT_SILU:
            finish_rows<CDNN_CUDA_ACT_SILU>(p, batch, row0, col, bias, buf);
            break;
        case CDNN_CUDA_ACT_TANH:
            finish_rows<CDNN_CUDA_ACT_TANH>(p, batch, row0, col, bias, buf);
            break;
        default:
            finish_rows<CDNN_CUDA_ACT_NONE>(p, batch, row0, col, bias, buf);
            break;
        }
        __syncwarp();
    }
}

// One warp's 16 x 32 chunk into buf with bias and activation applied in
// registers, then the residual in place (only when there is one).
template <int TileN, int Chunk>
__device__ __forceinline__ void finish_chunk_in_registers(const cdnn_cuda_matmul_params_t &p,
                                                          int64_t batch, int64_t row0,
                                                          int64_t col0,
                                                          const float (&acc)[TileN / 2],
                                                          float bias, float *buf) {
    const int lane = threadIdx.x % 32;
    switch (p.activation) {
    case CDNN_CUDA_ACT_RELU:
        stage_chunk<TileN, Chunk, CDNN_CUDA_ACT_RELU, true>(acc, bias, buf);
        break;
    case CDNN_CUDA_ACT_GELU:
        stage_chunk<TileN, Chunk, CDNN_CUDA_ACT_GELU, true>(acc, bias, buf);
        break;
    case CDNN_CUDA_ACT_GELU_TANH:
        stage_chunk<TileN, Chunk, CDNN_CUDA_ACT_GELU_TANH, true>(acc, bias, buf);
        break;
    case CDNN_CUDA_ACT_SILU:
        stage_chunk<TileN, Chunk, CDNN_CUDA_ACT_SILU, true>(acc, bias, buf);
        break;
    case CDNN_CUDA_ACT_TANH:
        stage_chunk<TileN, Chunk, CDNN_CUDA_ACT_TANH, true>(acc, bias, buf);
        break;
    default:
        if (p.bias)
            stage_chunk<TileN, Chunk, CDNN_CUDA_ACT_NONE, true>(acc, bias, buf);
        else
            stage_chunk<TileN, Chunk, CDNN_CUDA_ACT_NONE, false>(acc, bias, buf);
        break;
    }
    __syncwarp();
    if (p.residual) {
        add_residual_rows(p, batch, row0, col0 + lane, buf);
        __syncwarp();
    }
}

// One warp's 16 x 32 chunk: registers to buf with bias and activation
// (the bias of this lane's column was loaded before the k loop) and the
// residual -- in registers on the way where the consumer holds at most
// 96 accumulators a thread (Accumulators), else the lane-column way --
// then the stores.
template <int TileN, int Chunk, int Accumulators>
__device__ __forceinline__ void finish_chunk(const cdnn_cuda_matmul_params_t &p, int64_t batch,
                                             int64_t row0, int64_t col0,
                                             const float (&acc)[TileN / 2], float bias,
                                             float *buf) {
    const int lane = threadIdx.x % 32;
    if (Accumulators > 96) {
        finish_chunk_by_columns<TileN, Chunk>(p, batch, row0, col0, acc, bias, buf);
    } else {
        finish_chunk_in_registers<TileN, Chunk>(p, batch, row0, col0, acc, bias, buf);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) { // 64 pieces of 8: 4 a row, 16 rows
        const int piece = lane + 32 * i, pr = piece / 4, pc = 8 * (piece % 4);
        store_eight(p, batch, row0 + pr, col0 + pc, buf + pr * kChunkPitch + pc);
    }
    __syncwarp(); // buf is read before the next chunk overwrites it
}

template <int TileN, int Chunk, int Accumulators>
struct ChunkLoop {
    __device__ __forceinline__ static void run(const cdnn_cuda_matmul_params_t &p, int64_t batch,
                                               int64_t row0, int64_t col0,
                                               const float (&acc)[TileN / 2],
                                               const float (&bias)[TileN / kChunkCols],
                                               float *buf) {
        ChunkLoop<TileN, Chunk - 1, Accumulators>::run(p, batch, row0, col0, acc, bias, buf);
        finish_chunk<TileN, Chunk - 1, Accumulators>(
            p, batch, row0, col0 + (Chunk - 1) * kChunkCols, acc, bias[Chunk - 1], buf);
    }
};
template <int TileN, int Accumulators>
struct ChunkLoop<TileN, 0, Accumulators> {
    __device__ __forceinline__ static void run(const cdnn_cuda_matmul_params_t &, int64_t,
                                               int64_t, int64_t, const float (&)[TileN / 2],
                                               const float (&)[TileN / kChunkCols], float *) {}
};

// ---- the kernel -------------------------------------------------------------------------

// Tiles are numbered batch by batch; inside a batch, consecutive tiles walk
// down groups of 8 tile rows before moving right, so that the blocks at
// work at once share A rows and B columns in L2.
struct Tile {
    int64_t batch, m0, n0;
};

template <int TileM, int TileN>
__device__ __forceinline__ Tile tile_at(const cdnn_cuda_matmul_params_t &p, int64_t t) {
    const int64_t rows = (p.m + TileM - 1) / TileM, columns = (p.n + TileN - 1) / TileN;
    const int64_t per_batch = rows * columns, group = 8;
    const int64_t id = t % per_batch, per_group = group * columns;
    const int64_t first_row = (id / per_group) * group;
    const int64_t group_rows = min(rows - first_row, group);
    Tile tile;
    tile.batch = t / per_batch;
    tile.m0 = (first_row + (id % per_group) % group_rows) * TileM;
    tile.n0 = ((id % per_group) / group_rows) * TileN;
    return tile;
}

template <int TileM, int TileN>
__device__ __forceinline__ int64_t tile_count(const cdnn_cuda_matmul_params_t &p) {
    return ((p.m + TileM - 1) / TileM) * ((p.n + TileN - 1) / TileN) * p.batch;
}

// With clusters of Cluster blocks (1 or 2), the tile order above runs over
// tiles Cluster times as tall; cluster c (blocks Cluster c ..) takes those
// c, c + G / Cluster, ... and its block of rank r the r-th tile_m rows of
// each (rows past m are TMA's zero fill and are not stored), so that the
// blocks of a cluster share B's tile and load it once (multicast).  The
// grid must be a multiple of Cluster.
template <int TileM, int TileN, int Cluster>
__device__ __forceinline__ Tile block_tile(const cdnn_cuda_matmul_params_t &p, int64_t t) {
    Tile tile = tile_at<TileM * Cluster, TileN>(p, t);
    tile.m0 += int64_t(blockIdx.x % Cluster) * TileM;
    return tile;
}

template <int TileM, int TileN, int Stages>
struct Layout {
    static constexpr int kABytes = TileM * kRowBytes;
    static constexpr int kBBytes = TileN * kRowBytes;
    static constexpr int kStageBytes = kABytes + kBBytes;
    static constexpr int kRingBytes = Stages * kStageBytes;
    static constexpr int kBufferBytes = kConsumers * 4 * kWarpBufferFloats * 4;
    static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "swizzle atoms stay aligned");
    static_assert(kBufferBytes == CDNN_CUDA_MATMUL_WGMMA_EPILOGUE_BYTES, "cuda_kernel.h agrees");
    static_assert(CDNN_CUDA_MATMUL_WGMMA_SMEM(TileM, TileN, Stages) >=
                      kRingBytes + 1024 + kBufferBytes + Stages * 16,
                  "the smem formula covers the ring, its alignment, the buffers, the barriers");
};

// The ring's position: step `step` (counted over all of a block's tiles)
// uses stage step % Stages, in its (step / Stages)-th round.
struct Ring {
    uint32_t base, full, empty;
};

// The producer: one thread keeps the ring full, tile after tile.  At each
// k step, once the stage is free and its bytes announced, it calls
// load(a_dst, b_dst, bar, tile, k), which issues the TMA copies of the
// step's A tile (tile_m rows of 64 k) to a_dst and B tile to b_dst, all
// completing on bar; together they must bring Layout::kStageBytes.
// With Cluster 2, load must bring this block's A tile and its share of B's
// (multicast to both blocks): each block's stage still receives
// kStageBytes, and the stage's empty barrier counts both blocks' consumers.
template <int TileM, int TileN, int Stages, int Cluster = 1, class Load>
__device__ __forceinline__ void produce_ring(const cdnn_cuda_matmul_params_t &p, const Ring &ring,
                                             Load &&load) {
    using L = Layout<TileM, TileN, Stages>;
    const int64_t k_steps = (p.k + kTileK - 1) / kTileK,
                  tiles = tile_count<TileM * Cluster, TileN>(p);
    int64_t step = 0;
    for (int64_t t = blockIdx.x / Cluster; t < tiles; t += gridDim.x / Cluster) {
        const Tile tile = block_tile<TileM, TileN, Cluster>(p, t);
        for (int64_t k = 0; k < k_steps; ++k, ++step) {
            const int s = int(step % Stages);
            const uint32_t parity = uint32_t(step / Stages) & 1;
            barrier_wait(ring.empty + 8 * s, parity ^ 1); // a fresh barrier passes parity 1
            barrier_expect_bytes(ring.full + 8 * s, L::kStageBytes);
            const uint32_t a_dst = ring.base + s * L::kStageBytes;
            load(a_dst, a_dst + L::kABytes, ring.full + 8 * s, tile, k);
        }
    }
}

// A consumer warp's release of a ring stage: lane 0 arrives on this
// block's empty barrier; with clusters, lane r on that of the block of
// rank r.
template <int Cluster>
__device__ __forceinline__ void release_stage(uint32_t empty, int lane) {
    if (Cluster == 1) {
        if (lane == 0)
            barrier_arrive(empty);
    } else if (lane < Cluster) {
        barrier_arrive_cluster(empty, uint32_t(lane));
    }
}

// The bias of this lane's column of each 32-column chunk of the tile's
// columns from n0 on (0 past n or without a bias): loaded before the
// tile's k loop, so that its latency hides under the wgmma.
template <int TileN>
__device__ __forceinline__ void load_lane_bias(const cdnn_cuda_matmul_params_t &p, int64_t n0,
                                               int lane, float (&bias)[TileN / kChunkCols]) {
#pragma unroll
    for (int c = 0; c < TileN / kChunkCols; ++c) {
        const int64_t col = n0 + c * kChunkCols + lane;
        bias[c] =
            p.bias && col < p.n ? load_as_f32(p.bias, col * p.bias_stride, p.bias_type) : 0.0f;
    }
}

// A consumer warpgroup's k loop over one tile: its accumulators (rows
// [row0, row0 + 64 * SubTiles) of the tile) zeroed, then per k step the
// stage awaited, its wgmma issued, and the stage of the step before
// released once its wgmma are done (one step in flight).  `step` counts
// the ring's steps across tiles.  The GEMM's consumer and the convolution's
// (conv_wgmma.cu) share it; they differ in their epilogues.
template <int DType, int TileM, int TileN, int Stages, bool BKContiguous, int Cluster>
__device__ __forceinline__ void tile_k_loop(const Ring &ring, int row0, int lane, int64_t k_steps,
                                            int64_t &step,
                                            float (&acc)[TileM / kConsumers / 64][TileN / 2]) {
    using L = Layout<TileM, TileN, Stages>;
    constexpr int kSubTiles = TileM / kConsumers / 64;
#pragma unroll
    for (int st = 0; st < kSubTiles; ++st)
#pragma unroll
        for (int i = 0; i < TileN / 2; ++i)
            acc[st][i] = 0.0f;
    int previous = -1;
    for (int64_t k = 0; k < k_steps; ++k, ++step) {
        const int s = int(step % Stages);
        barrier_wait(ring.full + 8 * s, uint32_t(step / Stages) & 1);
        const uint32_t a_tile = ring.base + s * L::kStageBytes, b_tile = a_tile + L::kABytes;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kTileK / 16; ++kk) {
            // K-major B: 8-row groups 1024 bytes apart, k advances 32
            // bytes inside the swizzled row.  n-contiguous B: 8-k-row
            // groups 1024 bytes apart (stride), 64-column blocks 64 rows
            // apart (leading).
            const uint64_t b = BKContiguous
                                   ? smem_descriptor(b_tile + kk * 32, 16, 1024)
                                   : smem_descriptor(b_tile + kk * 16 * kRowBytes,
                                                     64 * kRowBytes, 1024);
#pragma unroll
            for (int st = 0; st < kSubTiles; ++st) {
                const uint64_t a = smem_descriptor(
                    a_tile + (row0 + 64 * st) * kRowBytes + kk * 32, 16, 1024);
                wgmma_tile<DType, TileN, BKContiguous ? 0 : 1>(acc[st], a, b);
            }
        }
        wgmma_commit();
        wgmma_wait<1>(); // the step before this one is done with its buffer
        if (previous >= 0)
            release_stage<Cluster>(ring.empty + 8 * previous, lane);
        previous = s;
    }
    wgmma_wait<0>();
    if (previous >= 0)
        release_stage<Cluster>(ring.empty + 8 * previous, lane);
}

// A consumer warpgroup: rows [row0, row0 + 64 * SubTiles) of each tile.
// With Cluster 2, a stage is released to both blocks' producers (either
// may multicast into it).
template <int DType, int TileM, int TileN, int Stages, bool BKContiguous, int Cluster>
__device__ __forceinline__ void consume(const cdnn_cuda_matmul_params_t &p, const Ring &ring,
                                        int consumer, float *buffers) {
    constexpr int kSubTiles = TileM / kConsumers / 64;
    const int64_t k_steps = (p.k + kTileK - 1) / kTileK,
                  tiles = tile_count<TileM * Cluster, TileN>(p);
    const int row0 = consumer * 64 * kSubTiles;
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    float *buf = buffers + (consumer * 4 + warp) * kWarpBufferFloats;
    float acc[kSubTiles][TileN / 2];
    int64_t step = 0;
    for (int64_t t = blockIdx.x / Cluster; t < tiles; t += gridDim.x / Cluster) {
        const Tile tile = block_tile<TileM, TileN, Cluster>(p, t);
        float bias[TileN / kChunkCols];
        load_lane_bias<TileN>(p, tile.n0, lane, bias);
        tile_k_loop<DType, TileM, TileN, Stages, BKContiguous, Cluster>(ring, row0, lane, k_steps,
                                                                        step, acc);
#pragma unroll
        for (int st = 0; st < kSubTiles; ++st) {
            fence_registers(acc[st]);
            ChunkLoop<TileN, TileN / kChunkCols, kSubTiles * TileN / 2>::run(
                p, tile.batch, tile.m0 + row0 + 64 * st + 16 * warp, tile.n0, acc[st], bias, buf);
        }
    }
}

// ---- the TMA-store epilogue ----------------------------------------------------------
//
// The buffered epilogue above keeps a consumer warpgroup on its tile's
// stores (16-byte stores from registers, a chunk at a time through the
// warp's buffer) before it starts the next tile's k loop.  Here each
// consumer packs its finished 64 x 64 boxes (bias and activation applied in
// registers) into shared memory and one thread hands each box to the copy
// engine (a tiled map of C with box 64 x 64, which clips what lies past
// C), so the consumer is back at the k loop while its stores drain.  A
// consumer has `Slots` box buffers of 8 KiB, used in turn; a buffer is
// rewritten once the engine has read the store that used it
// (wait_group.read), so up to Slots stores are in flight.
constexpr int kBoxBytes = 64 * 64 * 2;

// The residual at this lane's elements of the 64 x 64 box of C at (m0,
// n0), in stage_box's order: for each 8-column block jj, the pair of
// columns of row 16 w + l / 4 (res[2 jj]) and of the row 8 below (res[2 jj
// + 1]), two 16-bit values a word (0 past C).  Contiguous pairs of a row
// read as one word (cdnn_cuda_matmul_tma_store_refusal: an even pitch, a
// 4-byte aligned base); a warp's 8 loads of a row, over jj, cover its 128
// bytes.  Issued before the box's barrier, so that their latency hides
// behind it and the activations.
__device__ __forceinline__ void load_box_residual(const cdnn_cuda_matmul_params_t &p,
                                                  int64_t batch, int64_t m0, int64_t n0,
                                                  uint32_t (&res)[16]) {
    const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
    const int64_t row = m0 + 16 * warp + lane / 4, col = n0 + 2 * (lane % 4);
    const uint16_t *base = static_cast<const uint16_t *>(p.residual) + batch * p.res_batch_stride;
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
#pragma unroll
        for (int below = 0; below < 2; ++below) {
            const int64_t r = row + 8 * below, c = col + 8 * jj;
            res[2 * jj + below] =
                r < p.m && c < p.n
                    ? __ldg(reinterpret_cast<const unsigned int *>(base + r * p.res_row_stride + c))
                    : 0u;
        }
    }
}

// The two 16-bit values of a residual word, as f32 (lo: the lower column).
__device__ __forceinline__ float2 unpack_pair(uint32_t word, bool bf16) {
    if (bf16)
        return make_float2(__uint_as_float(word << 16), __uint_as_float(word & 0xffff0000u));
    return make_float2(__half2float(__ushort_as_half(static_cast<unsigned short>(word))),
                       __half2float(__ushort_as_half(static_cast<unsigned short>(word >> 16))));
}

// This lane's accumulators of 64-column box `box` of a 64 x TileN block,
// plus the bias (`bias` as load_lane_bias loads it; a lane's own columns'
// come from their lanes by shuffles), through the activation and plus the
// residual (where `residual`: load_box_residual's words in `res`, of type
// res_bf16 ? bf16 : f16), packed to 16 bits into the box at buf: row r of
// 128 bytes with its 16-byte chunk c at c ^ (r % 8) -- the map's 128-byte
// swizzle, and conflict-free (a warp's 8 lane quads write 8 different
// chunks of 8 rows).
template <int TileN, int Act, bool Bias>
__device__ __forceinline__ void stage_box(const float (&acc)[TileN / 2],
                                          const float (&bias)[TileN / kChunkCols], int box,
                                          bool bf16, bool residual, const uint32_t (&res)[16],
                                          bool res_bf16, uint32_t buf) {
    const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
    const int row = 16 * warp + lane / 4, c = 2 * (lane % 4); // and row + 8: the same phase
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
        const int j = 8 * box + jj; // the 8-column block of the tile
        float x[4] = {acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]};
        if (Bias) {
            const float b0 = __shfl_sync(0xffffffffu, bias[j / 4], 8 * (j % 4) + c);
            const float b1 = __shfl_sync(0xffffffffu, bias[j / 4], 8 * (j % 4) + c + 1);
            x[0] += b0, x[1] += b1, x[2] += b0, x[3] += b1;
        }
#pragma unroll
        for (int e = 0; e < 4; ++e)
            x[e] = activate(x[e], Act);
        if (residual) {
            const float2 r_top = unpack_pair(res[2 * jj], res_bf16);
            const float2 r_bottom = unpack_pair(res[2 * jj + 1], res_bf16);
            x[0] += r_top.x, x[1] += r_top.y, x[2] += r_bottom.x, x[3] += r_bottom.y;
        }
        const uint32_t top = pack_pair(x[0], x[1], bf16);
        const uint32_t bottom = pack_pair(x[2], x[3], bf16);
        const uint32_t at = buf + row * 128 + ((jj ^ (row % 8)) * 16) + 4 * (lane % 4);
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(at), "r"(top) : "memory");
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(at + 8 * 128), "r"(bottom) : "memory");
    }
}

// A consumer warpgroup's part of a finished tile (its SubTiles 64-row
// blocks from row0 of the tile) to C, box by box through its buffers at
// `buffers`; `boxes` counts the boxes it has stored (across tiles), which
// picks the buffer.  Boxes wholly past C are skipped.
template <int TileN, int SubTiles, int Slots, int Act, bool Bias>
__device__ __forceinline__ void store_tile(const cdnn_cuda_matmul_params_t &p,
                                           const cdnn_cuda_tensor_map_t *c_map, const Tile &tile,
                                           int consumer, int row0,
                                           const float (&acc)[SubTiles][TileN / 2],
                                           const float (&bias)[TileN / kChunkCols],
                                           uint32_t buffers, uint32_t &boxes) {
    const bool leader = threadIdx.x % 128 == 0, bf16 = p.c_type == CDNN_CUDA_BF16;
    const bool res_bf16 = p.res_type == CDNN_CUDA_BF16;
#pragma unroll
    for (int st = 0; st < SubTiles; ++st) {
        const int64_t m0 = tile.m0 + row0 + 64 * st;
#pragma unroll
        for (int box = 0; box < TileN / 64; ++box) {
            const int64_t n0 = tile.n0 + 64 * box;
            if (m0 >= p.m || n0 >= p.n)
                continue;
            const uint32_t buf = buffers + (boxes % Slots) * kBoxBytes;
            ++boxes;
            uint32_t res[16];
            if (p.residual)
                load_box_residual(p, tile.batch, m0, n0, res);
            if (leader)
                bulk_wait_read<Slots - 1>(); // the store that last used buf has read it
            consumer_sync(consumer);
            stage_box<TileN, Act, Bias>(acc[st], bias, box, bf16, p.residual != nullptr, res,
                                        res_bf16, buf);
            fence_async_shared(); // the copy engine reads what these threads wrote
            consumer_sync(consumer);
            if (leader) {
                tma_store_3d(c_map, buf, int32_t(n0), int32_t(m0), int32_t(tile.batch));
                bulk_commit();
            }
        }
    }
}

// A consumer warpgroup of the TMA-store kernels: tile_k_loop, then
// store_tile with the activation fixed at compile time (the residual, a
// uniform branch, at run time).  No clusters.
template <int DType, int TileM, int TileN, int Stages, int Slots, bool BKContiguous>
__device__ __forceinline__ void consume_store(const cdnn_cuda_matmul_params_t &p,
                                              const cdnn_cuda_tensor_map_t *c_map,
                                              const Ring &ring, int consumer, uint32_t buffers) {
    constexpr int kSubTiles = TileM / kConsumers / 64;
    const int64_t k_steps = (p.k + kTileK - 1) / kTileK, tiles = tile_count<TileM, TileN>(p);
    const int row0 = consumer * 64 * kSubTiles, lane = threadIdx.x % 32;
    float acc[kSubTiles][TileN / 2];
    int64_t step = 0;
    uint32_t boxes = 0;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const Tile tile = tile_at<TileM, TileN>(p, t);
        float bias[TileN / kChunkCols];
        load_lane_bias<TileN>(p, tile.n0, lane, bias);
        tile_k_loop<DType, TileM, TileN, Stages, BKContiguous, 1>(ring, row0, lane, k_steps, step,
                                                                 acc);
#pragma unroll
        for (int st = 0; st < kSubTiles; ++st)
            fence_registers(acc[st]);
#define CDNN_STORE_TILE(act, has_bias)                                                         \
    store_tile<TileN, kSubTiles, Slots, act, has_bias>(p, c_map, tile, consumer, row0, acc, bias, \
                                                       buffers, boxes)
        switch (p.activation) {
        case CDNN_CUDA_ACT_RELU: CDNN_STORE_TILE(CDNN_CUDA_ACT_RELU, true); break;
        case CDNN_CUDA_ACT_GELU: CDNN_STORE_TILE(CDNN_CUDA_ACT_GELU, true); break;
        case CDNN_CUDA_ACT_GELU_TANH: CDNN_STORE_TILE(CDNN_CUDA_ACT_GELU_TANH, true); break;
        case CDNN_CUDA_ACT_SILU: CDNN_STORE_TILE(CDNN_CUDA_ACT_SILU, true); break;
        case CDNN_CUDA_ACT_TANH: CDNN_STORE_TILE(CDNN_CUDA_ACT_TANH, true); break;
        default:
            if (p.bias)
                CDNN_STORE_TILE(CDNN_CUDA_ACT_NONE, true);
            else
                CDNN_STORE_TILE(CDNN_CUDA_ACT_NONE, false);
            break;
        }
#undef CDNN_STORE_TILE
    }
    if (threadIdx.x % 128 == 0)
        bulk_wait_all(); // the buffers must outlive the stores that read them
}

// ---- the kernel body ---------------------------------------------------------------------

// The kernel's body: the ring and its barriers, then the three roles.
// produce(ring) runs on thread 0 alone (produce_ring, with the kernel's
// loads); consume(ring, consumer, epilogue) on each consumer warpgroup,
// where `epilogue` is the shared-memory address past the barriers (free
// for the epilogue's buffers).
// With Cluster 2 the kernel must be compiled with __cluster_dims__(2, 1, 1):
// the blocks' barriers are initialised before either block's copies can
// reach them, and neither block exits while its partner may still signal
// it.
template <int TileM, int TileN, int Stages, int Cluster, class Produce, class Consume>
__device__ __forceinline__ void gemm_roles(Produce &&produce, Consume &&consume) {
    using L = Layout<TileM, TileN, Stages>;
    extern __shared__ uint8_t dynamic_shared[];
    Ring ring;
    ring.base = (smem_address(dynamic_shared) + 1023) & ~1023u;
    ring.full = ring.base + L::kRingBytes;
    ring.empty = ring.full + 8 * Stages;

    if (threadIdx.x == 0) {
        for (int s = 0; s < Stages; ++s) {
            barrier_init(ring.full + 8 * s, 1);
            // one arrival a consumer warp (of each block of the cluster)
            barrier_init(ring.empty + 8 * s, kConsumers * 4 * Cluster);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    if (Cluster > 1)
        cluster_sync();
    else
        __syncthreads();

    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (threadIdx.x == 0)
            produce(ring);
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        consume(ring, warpgroup - 1, ring.empty + 8 * Stages);
    }
    if (Cluster > 1)
        cluster_sync();
}

// gemm_roles with the buffered epilogue (consume): its warp buffers right
// past the barriers.  b_k_contiguous picks how the consumers read B's
// tiles.
template <int DType, int TileM, int TileN, int Stages, int Cluster = 1, class Produce>
__device__ __forceinline__ void gemm_kernel(const cdnn_cuda_matmul_params_t &p,
                                            bool b_k_contiguous, Produce &&produce) {
    gemm_roles<TileM, TileN, Stages, Cluster>(
        produce, [&](const Ring &ring, int consumer, uint32_t epilogue) {
            extern __shared__ uint8_t dynamic_shared[];
            float *buffers = reinterpret_cast<float *>(
                dynamic_shared + (epilogue - smem_address(dynamic_shared)));
            if (b_k_contiguous)
                consume<DType, TileM, TileN, Stages, true, Cluster>(p, ring, consumer, buffers);
            else
                consume<DType, TileM, TileN, Stages, false, Cluster>(p, ring, consumer, buffers);
        });
}

} // namespace
} // namespace cdnn

#endif
