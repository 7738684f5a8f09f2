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
//     before; at the end it applies the epilogue from its registers.
// The producer gives its registers to the consumers (setmaxnreg): a
// consumer holds up to 128 f32 accumulators.
// Tails in m, n and k are TMA's zero fill (a zero row or column adds
// nothing); the epilogue stores only inside C.
#ifndef CDNN_KERNELS_CUDA_WGMMA_GEMM_CUH
#define CDNN_KERNELS_CUDA_WGMMA_GEMM_CUH
#include "matmul_epilogue.cuh"
#include "wgmma_ops.cuh"

namespace cdnn {
namespace {

constexpr int kTileK = CDNN_CUDA_MATMUL_WGMMA_TILE_K;
constexpr int kRowBytes = kTileK * 2; // one swizzled row of a tile: 128 bytes
constexpr int kConsumers = 2;         // consumer warpgroups

__device__ __forceinline__ uint32_t smem_address(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarriers --------------------------------------------------------------------------

__device__ __forceinline__ void barrier_init(uint32_t bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

// Arrive and announce `bytes` of TMA traffic that will complete this phase.
__device__ __forceinline__ void barrier_expect_bytes(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void barrier_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Wait until the phase of parity `parity` has completed.
__device__ __forceinline__ void barrier_wait(uint32_t bar, uint32_t parity) {
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "wait_again:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait_again;\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

// ---- TMA --------------------------------------------------------------------------------

// The box of `map` at (c0, c1, c2) into shared memory at dst; completes
// its bytes on bar.
__device__ __forceinline__ void tma_load(uint32_t dst, const cdnn_cuda_tensor_map_t *map,
                                         uint32_t bar, int32_t c0, int32_t c1, int32_t c2) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

__device__ __forceinline__ void tma_prefetch_map(const cdnn_cuda_tensor_map_t *map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// ---- wgmma ------------------------------------------------------------------------------

// A shared-memory matrix descriptor with the 128-byte swizzle: start
// address, leading and stride byte offsets (all in 16-byte units).
__device__ __forceinline__ uint64_t smem_descriptor(uint32_t address, uint32_t leading,
                                                   uint32_t stride) {
    return uint64_t((address & 0x3FFFF) >> 4) | (uint64_t(leading >> 4) << 16) |
           (uint64_t(stride >> 4) << 32) | (uint64_t(1) << 62);
}

__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// Keeps the compiler from reading (or moving) an accumulator across the
// wgmma wait before it: the register is "written" here, after the wait.
template <int N>
__device__ __forceinline__ void fence_registers(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

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

// The chunk's bias, activation and residual, in place in buf: lane l takes
// column l of the 16 rows (so that residual loads coalesce), four rows at
// a time for independent work in flight; the activation is fixed at
// compile time, so that no switch runs per element.
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

// One warp's 16 x 32 chunk: registers to buf, the epilogue's bias (this
// lane's column's, loaded before the k loop), activation and residual in
// place (only when there are any), then the stores.  The accumulator layout of wgmma m64nN (f32): lane l of warp w
// of the warpgroup holds, for each 8-column block j, (16 w + l / 4,
// 8 j + 2 (l % 4) + {0, 1}) in d[4j], d[4j + 1] and the same 8 rows below
// in d[4j + 2], d[4j + 3].
template <int TileN, int Chunk>
__device__ __forceinline__ void finish_chunk(const cdnn_cuda_matmul_params_t &p, int64_t batch,
                                             int64_t row0, int64_t col0,
                                             const float (&acc)[TileN / 2], float bias,
                                             float *buf) {
    const int lane = threadIdx.x % 32;
    const int r = lane / 4, c = 2 * (lane % 4);
#pragma unroll
    for (int jj = 0; jj < kChunkCols / 8; ++jj) {
        const int j = Chunk * (kChunkCols / 8) + jj;
        *reinterpret_cast<float2 *>(buf + r * kChunkPitch + 8 * jj + c) =
            make_float2(acc[4 * j], acc[4 * j + 1]);
        *reinterpret_cast<float2 *>(buf + (r + 8) * kChunkPitch + 8 * jj + c) =
            make_float2(acc[4 * j + 2], acc[4 * j + 3]);
    }
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
#pragma unroll
    for (int i = 0; i < 2; ++i) { // 64 pieces of 8: 4 a row, 16 rows
        const int piece = lane + 32 * i, pr = piece / 4, pc = 8 * (piece % 4);
        store_eight(p, batch, row0 + pr, col0 + pc, buf + pr * kChunkPitch + pc);
    }
    __syncwarp(); // buf is read before the next chunk overwrites it
}

template <int TileN, int Chunk>
struct ChunkLoop {
    __device__ __forceinline__ static void run(const cdnn_cuda_matmul_params_t &p, int64_t batch,
                                               int64_t row0, int64_t col0,
                                               const float (&acc)[TileN / 2],
                                               const float (&bias)[TileN / kChunkCols],
                                               float *buf) {
        ChunkLoop<TileN, Chunk - 1>::run(p, batch, row0, col0, acc, bias, buf);
        finish_chunk<TileN, Chunk - 1>(p, batch, row0, col0 + (Chunk - 1) * kChunkCols, acc,
                                       bias[Chunk - 1], buf);
    }
};
template <int TileN>
struct ChunkLoop<TileN, 0> {
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
template <int TileM, int TileN, int Stages, class Load>
__device__ __forceinline__ void produce_ring(const cdnn_cuda_matmul_params_t &p, const Ring &ring,
                                             Load &&load) {
    using L = Layout<TileM, TileN, Stages>;
    const int64_t k_steps = (p.k + kTileK - 1) / kTileK, tiles = tile_count<TileM, TileN>(p);
    int64_t step = 0;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const Tile tile = tile_at<TileM, TileN>(p, t);
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

// A consumer warpgroup: rows [row0, row0 + 64 * SubTiles) of each tile.
template <int DType, int TileM, int TileN, int Stages, bool BKContiguous>
__device__ __forceinline__ void consume(const cdnn_cuda_matmul_params_t &p, const Ring &ring,
                                        int consumer, float *buffers) {
    using L = Layout<TileM, TileN, Stages>;
    constexpr int kSubTiles = TileM / kConsumers / 64;
    const int64_t k_steps = (p.k + kTileK - 1) / kTileK, tiles = tile_count<TileM, TileN>(p);
    const int row0 = consumer * 64 * kSubTiles;
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    float *buf = buffers + (consumer * 4 + warp) * kWarpBufferFloats;
    float acc[kSubTiles][TileN / 2];
    int64_t step = 0;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const Tile tile = tile_at<TileM, TileN>(p, t);
        // The bias of this lane's column of each 32-column chunk, loaded now
        // so that its latency hides under the k loop.
        float bias[TileN / kChunkCols];
#pragma unroll
        for (int c = 0; c < TileN / kChunkCols; ++c) {
            const int64_t col = tile.n0 + c * kChunkCols + lane;
            bias[c] = p.bias && col < p.n ? load_as_f32(p.bias, col * p.bias_stride, p.bias_type)
                                          : 0.0f;
        }
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
            if (previous >= 0 && lane == 0)
                barrier_arrive(ring.empty + 8 * previous);
            previous = s;
        }
        wgmma_wait<0>();
        if (previous >= 0 && lane == 0)
            barrier_arrive(ring.empty + 8 * previous);
#pragma unroll
        for (int st = 0; st < kSubTiles; ++st) {
            fence_registers(acc[st]);
            ChunkLoop<TileN, TileN / kChunkCols>::run(
                p, tile.batch, tile.m0 + row0 + 64 * st + 16 * warp, tile.n0, acc[st], bias, buf);
        }
    }
}

// The kernel's body: the ring and its barriers, then the three roles.
// produce(ring) runs on thread 0 alone (produce_ring, with the kernel's
// loads); b_k_contiguous picks how the consumers read B's tiles.
template <int DType, int TileM, int TileN, int Stages, class Produce>
__device__ __forceinline__ void gemm_kernel(const cdnn_cuda_matmul_params_t &p,
                                            bool b_k_contiguous, Produce &&produce) {
    using L = Layout<TileM, TileN, Stages>;
    extern __shared__ uint8_t dynamic_shared[];
    const uint32_t base = smem_address(dynamic_shared);
    Ring ring;
    ring.base = (base + 1023) & ~1023u;
    ring.full = ring.base + L::kRingBytes;
    ring.empty = ring.full + 8 * Stages;
    float *buffers =
        reinterpret_cast<float *>(dynamic_shared + (ring.empty + 8 * Stages - base));

    if (threadIdx.x == 0) {
        for (int s = 0; s < Stages; ++s) {
            barrier_init(ring.full + 8 * s, 1);
            barrier_init(ring.empty + 8 * s, kConsumers * 4); // one arrival a consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (threadIdx.x == 0)
            produce(ring);
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        if (b_k_contiguous)
            consume<DType, TileM, TileN, Stages, true>(p, ring, warpgroup - 1, buffers);
        else
            consume<DType, TileM, TileN, Stages, false>(p, ring, warpgroup - 1, buffers);
    }
}

} // namespace
} // namespace cdnn

#endif
