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

// ---- the register epilogue (the stem's, for y the TMA stores refuse) ----------------------
//
// Each lane finishes its own accumulator pairs in registers -- bias, the
// activation fixed at compile time, packing -- and stores each pair as one
// word (4 bytes for 16-bit y, 8 for f32) where the row is aligned for it,
// else element by element.  The implicit-GEMM kernels had a set of these
// too (v2), dropped after they lost to the buffered and TMA-store ones in
// every row measured (bench/gpu/notes/conv.md); the stem keeps it for the
// y its TMA stores cannot write (f32, k not a multiple of 8, unaligned
// pixels): there it is still 9x the mma.sync kernels.

// Columns col, col + 1 of a row at y (row already offset), f32 pair or
// 16-bit pair; col + 1 == n stores col alone; `words` says the pair may be
// one 4-byte (8-byte for f32) store.
__device__ __forceinline__ void store_pair(void *row, int64_t col, int64_t n, int32_t type,
                                           bool words, float v0, float v1) {
    if (col + 1 < n && words) {
        if (type == CDNN_CUDA_F32)
            *reinterpret_cast<float2 *>(static_cast<float *>(row) + col) = make_float2(v0, v1);
        else
            *reinterpret_cast<uint32_t *>(static_cast<uint16_t *>(row) + col) =
                pack_pair(v0, v1, type == CDNN_CUDA_BF16);
    } else {
        store_from_f32(row, col, type, v0);
        if (col + 1 < n)
            store_from_f32(row, col + 1, type, v1);
    }
}

// One warp's 16 rows of a 64 x TileN accumulator block: lane l holds, for
// each 8-column block j, (l / 4, 8 j + 2 (l % 4) + {0, 1}) in acc[4j],
// acc[4j + 1] and the same 8 rows below in acc[4j + 2], acc[4j + 3].
// row_a / row_b: where this lane's two rows start in y (NULL: outside);
// rows 8 pixels apart share their alignment to a pair.
template <int TileN, int Act>
__device__ __forceinline__ void finish_pairs(const float (&acc)[TileN / 2], void *row_a,
                                             void *row_b, int64_t col0, int64_t n,
                                             int32_t type, const void *bias,
                                             int64_t bias_stride, int32_t bias_type) {
    const int lane = threadIdx.x % 32;
    const uintptr_t pair_bytes = type == CDNN_CUDA_F32 ? 8 : 4;
    const bool words = (reinterpret_cast<uintptr_t>(row_a ? row_a : row_b) % pair_bytes) == 0;
#pragma unroll
    for (int j = 0; j < TileN / 8; ++j) {
        const int64_t col = col0 + 8 * j + 2 * (lane % 4);
        if (col >= n)
            continue;
        float b0 = 0.0f, b1 = 0.0f;
        if (bias) {
            b0 = load_as_f32(bias, col * bias_stride, bias_type);
            if (col + 1 < n)
                b1 = load_as_f32(bias, (col + 1) * bias_stride, bias_type);
        }
        if (row_a)
            store_pair(row_a, col, n, type, words, activate(acc[4 * j] + b0, Act),
                       activate(acc[4 * j + 1] + b1, Act));
        if (row_b)
            store_pair(row_b, col, n, type, words, activate(acc[4 * j + 2] + b0, Act),
                       activate(acc[4 * j + 3] + b1, Act));
    }
}

template <int TileN>
__device__ __forceinline__ void finish_pairs_any(int32_t activation, const float (&acc)[TileN / 2],
                                                 void *row_a, void *row_b, int64_t col0, int64_t n,
                                                 int32_t type, const void *bias,
                                                 int64_t bias_stride, int32_t bias_type) {
#define CDNN_FINISH_PAIRS(act)                                                                 \
    finish_pairs<TileN, act>(acc, row_a, row_b, col0, n, type, bias, bias_stride, bias_type)
    switch (activation) {
    case CDNN_CUDA_ACT_RELU: CDNN_FINISH_PAIRS(CDNN_CUDA_ACT_RELU); break;
    case CDNN_CUDA_ACT_GELU: CDNN_FINISH_PAIRS(CDNN_CUDA_ACT_GELU); break;
    case CDNN_CUDA_ACT_GELU_TANH: CDNN_FINISH_PAIRS(CDNN_CUDA_ACT_GELU_TANH); break;
    case CDNN_CUDA_ACT_SILU: CDNN_FINISH_PAIRS(CDNN_CUDA_ACT_SILU); break;
    case CDNN_CUDA_ACT_TANH: CDNN_FINISH_PAIRS(CDNN_CUDA_ACT_TANH); break;
    default: CDNN_FINISH_PAIRS(CDNN_CUDA_ACT_NONE); break;
    }
#undef CDNN_FINISH_PAIRS
}

// ---- the TMA-store epilogue (v4) --------------------------------------------------------
//
// Register stores leave y draining at ~0.6 TB/s (v2: each consumer thread
// with about one store in flight).  Here each consumer warpgroup finishes
// its 64 x TileN block in registers, writes it into a shared-memory buffer
// of its own (the 128-byte swizzle: conflict-free, 8 rows of a lane quad in
// 8 chunks) and one thread hands the buffer to the copy engine, 64 x 64
// boxes of a tiled map of y, which clips what lies past y.  The buffer is
// rewritten only once the engine has read it (wait_group.read), so the
// stores drain while the next tile's wgmma run.

// This lane's bias of column col0 + 32 c + lane for each 32-column chunk c
// of a tile (0 past n), loaded before the tile's k loop so that the loads'
// latency hides under it: in finish_to_buffer they were serialized behind
// its shared-memory stores, two a column pair.
template <int TileN>
__device__ __forceinline__ void load_lane_bias(float (&bias)[TileN / 32], const void *base,
                                               int64_t stride, int32_t type, int64_t col0,
                                               int64_t n) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int c = 0; c < TileN / 32; ++c) {
        const int64_t col = col0 + 32 * c + lane;
        bias[c] = base && col < n ? load_as_f32(base, col * stride, type) : 0.0f;
    }
}

// This lane's accumulator pairs of a 64 x TileN block, finished (the bias
// of load_lane_bias, handed to the lanes that hold each column by
// shuffles; the activation), into buf: 64-column boxes 8 KiB apart, each
// 64 rows of 128 bytes, 16-byte chunk c of row r at chunk c ^ (r % 8).
template <int TileN, int Act>
__device__ __forceinline__ void finish_to_buffer(const float (&acc)[TileN / 2], uint32_t buf,
                                                 bool bf16, const float (&bias)[TileN / 32]) {
    const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
    const int row = 16 * warp + lane / 4; // and row + 8: the same swizzle phase
#pragma unroll
    for (int j = 0; j < TileN / 8; ++j) {
        const int from = 8 * (j % 4) + 2 * (lane % 4); // column 8 j + 2 (lane % 4) of the chunk
        const float b0 = __shfl_sync(0xffffffffu, bias[j / 4], from);
        const float b1 = __shfl_sync(0xffffffffu, bias[j / 4], from + 1);
        const uint32_t a = pack_pair(activate(acc[4 * j] + b0, Act),
                                     activate(acc[4 * j + 1] + b1, Act), bf16);
        const uint32_t b = pack_pair(activate(acc[4 * j + 2] + b0, Act),
                                     activate(acc[4 * j + 3] + b1, Act), bf16);
        const uint32_t at = buf + (j / 8) * 8192 + row * 128 +
                            (((j % 8) ^ (row % 8)) * 16) + 4 * (lane % 4);
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(at), "r"(a) : "memory");
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(at + 8 * 128), "r"(b) : "memory");
    }
}

template <int TileN>
__device__ __forceinline__ void finish_to_buffer_any(int32_t activation,
                                                     const float (&acc)[TileN / 2], uint32_t buf,
                                                     bool bf16, const float (&bias)[TileN / 32]) {
#define CDNN_FINISH_BUFFER(act) finish_to_buffer<TileN, act>(acc, buf, bf16, bias)
    switch (activation) {
    case CDNN_CUDA_ACT_RELU: CDNN_FINISH_BUFFER(CDNN_CUDA_ACT_RELU); break;
    case CDNN_CUDA_ACT_GELU: CDNN_FINISH_BUFFER(CDNN_CUDA_ACT_GELU); break;
    case CDNN_CUDA_ACT_GELU_TANH: CDNN_FINISH_BUFFER(CDNN_CUDA_ACT_GELU_TANH); break;
    case CDNN_CUDA_ACT_SILU: CDNN_FINISH_BUFFER(CDNN_CUDA_ACT_SILU); break;
    case CDNN_CUDA_ACT_TANH: CDNN_FINISH_BUFFER(CDNN_CUDA_ACT_TANH); break;
    default: CDNN_FINISH_BUFFER(CDNN_CUDA_ACT_NONE); break;
    }
#undef CDNN_FINISH_BUFFER
}

// A consumer warpgroup's block through its buffer to y: wait until the
// engine has read the buffer's last contents, fill it, then one thread
// stores its TileN / 64 boxes at (col0, c1, c2) on and commits them.
template <int TileN>
__device__ __forceinline__ void store_block(const float (&acc)[TileN / 2], int consumer,
                                            uint32_t buf, const cdnn_cuda_tensor_map_t *y_map,
                                            int64_t col0, int32_t c1, int32_t c2, int64_t n,
                                            int32_t type, int32_t activation,
                                            const float (&bias)[TileN / 32]) {
    const bool leader = threadIdx.x % 128 == 0;
    if (leader)
        bulk_wait_read<0>();
    consumer_sync(consumer);
    finish_to_buffer_any<TileN>(activation, acc, buf, type == CDNN_CUDA_BF16, bias);
    fence_async_shared(); // the copy engine reads what these threads wrote
    consumer_sync(consumer);
    if (leader) {
#pragma unroll
        for (int box = 0; box < TileN / 64; ++box)
            if (col0 + 64 * box < n)
                tma_store_3d(y_map, buf + box * 8192, int32_t(col0 + 64 * box), c1, c2);
        bulk_commit();
    }
}

// A consumer warpgroup of the TMA-store kernels: tile_k_loop (the k loop),
// finished by store_block.
template <int DType, int TileM, int TileN, int Stages>
__device__ __forceinline__ void consume_store(const cdnn_cuda_conv_tma_store_params_t &params,
                                              const Ring &ring, int consumer, uint32_t buf) {
    const cdnn_cuda_matmul_params_t &p = params.tma.gemm;
    constexpr int kSubTiles = TileM / kConsumers / 64;
    const int64_t k_steps = (p.k + kTileK - 1) / kTileK, tiles = tile_count<TileM, TileN>(p);
    const int row0 = consumer * 64 * kSubTiles;
    const int lane = threadIdx.x % 32;
    float acc[kSubTiles][TileN / 2];
    int64_t step = 0;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const Tile tile = tile_at<TileM, TileN>(p, t);
        float bias[TileN / 32];
        load_lane_bias<TileN>(bias, p.bias, p.bias_stride, p.bias_type, tile.n0, p.n);
        tile_k_loop<DType, TileM, TileN, Stages, true, 1>(ring, row0, lane, k_steps, step, acc);
#pragma unroll
        for (int st = 0; st < kSubTiles; ++st) {
            fence_registers(acc[st]);
            store_block<TileN>(acc[st], consumer, buf, &params.y_map, tile.n0,
                               int32_t(tile.m0 + row0 + 64 * st), 0, p.n, p.c_type, p.activation,
                               bias);
        }
    }
    if (threadIdx.x % 128 == 0)
        bulk_wait_all();
}

// gemm_kernel with consume_store: the ring, then the two buffers.
template <int DType, int TileM, int TileN, int Stages>
__device__ __forceinline__ void conv_wgmma_store(const cdnn_cuda_conv_tma_store_params_t &params) {
    using L = Layout<TileM, TileN, Stages>;
    static_assert(CDNN_CUDA_CONV_WGMMA_STORE_SMEM(TileM, TileN, Stages) >=
                      1024 + L::kRingBytes + 2 * 64 * TileN * 2 + Stages * 16,
                  "cuda_kernel.h's smem covers the ring, the buffers, the barriers");
    extern __shared__ uint8_t dynamic_shared[];
    const uint32_t base = smem_address(dynamic_shared);
    Ring ring;
    ring.base = (base + 1023) & ~1023u;
    const uint32_t buffers = ring.base + L::kRingBytes; // 1024-aligned: kRingBytes is
    ring.full = buffers + 2 * 64 * TileN * 2;
    ring.empty = ring.full + 8 * Stages;
    if (threadIdx.x == 0) {
        for (int s = 0; s < Stages; ++s) {
            barrier_init(ring.full + 8 * s, 1);
            barrier_init(ring.empty + 8 * s, kConsumers * 4);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (threadIdx.x == 0) {
            tma_prefetch_map(&params.y_map);
            produce_conv<TileM, TileN, Stages>(params.tma, ring);
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int consumer = warpgroup - 1;
        consume_store<DType, TileM, TileN, Stages>(params, ring, consumer,
                                                   buffers + consumer * 64 * TileN * 2);
    }
}

// ---- the stem: few input channels -----------------------------------------------------
//
// The im2col map cannot walk x of 3 channels (a pixel is 6 bytes; TMA's
// strides are multiples of 16), so the stem's producer warpgroup builds
// the A tile itself.  A tile is one output row (n, i): its r input rows
// i * stride - pad_h + u, each w * c contiguous elements, come into shared
// memory by 16-byte loads (the next tile's loads in flight while this
// one's are repacked), between zero margins that are the left and right
// padding; thread j then gathers pixel j's r * s * c taps -- row u,
// elements (j * stride - pad_w) * c + v * c + ch, contiguous per row -- into
// 16-byte pieces of A's row j (the 128-byte swizzle that TMA would have
// written), the depth past r * s * c left zero.  The filter is B, resident.
namespace stem {
constexpr int kR = CDNN_CUDA_CONV_STEM_R, kS = CDNN_CUDA_CONV_STEM_S,
              kC = CDNN_CUDA_CONV_STEM_C, kStride = CDNN_CUDA_CONV_STEM_STRIDE;
constexpr int kTaps = kR * kS * kC, kRowTaps = kS * kC;
constexpr int kDepth = CDNN_CUDA_CONV_STEM_DEPTH, kSubTiles = kDepth / 64;
constexpr int kPieces = (kTaps + 7) / 8; // 16-byte pieces of an A row that carry taps
constexpr int kTileM = CDNN_CUDA_CONV_STEM_TILE_M, kTileN = CDNN_CUDA_CONV_STEM_TILE_N;
constexpr int kStages = CDNN_CUDA_CONV_STEM_STAGES;
constexpr int kMargin = CDNN_CUDA_CONV_STEM_MARGIN;
constexpr int kABytes = kTileM * kDepth * 2, kBBytes = kTileN * kDepth * 2;
constexpr int kRawBytes = kR * (CDNN_CUDA_CONV_STEM_ROW_MAX + 2 * kMargin) * 2;
constexpr int kLoads = (kR * CDNN_CUDA_CONV_STEM_ROW_MAX / 8 + 127) / 128; // per producer thread
static_assert(kMargin % 8 == 0, "staged rows stay 16-byte aligned");
static_assert(CDNN_CUDA_CONV_STEM_SMEM >=
                  1024 + kStages * kABytes + kBBytes + kRawBytes + kStages * 16,
              "cuda_kernel.h's smem covers the ring, the filter, the rows, the barriers");

// Offset of 16-byte piece `piece` of row `row` in a (rows x 64-k)
// sub-tile layout of 128-byte rows, 128-byte swizzled.
__device__ __forceinline__ uint32_t swizzled(int row, int piece) {
    return uint32_t(row * 128 + (((piece % 8) ^ (row % 8)) * 16));
}

// Piece `piece` (8 taps) of a tile whose rows hold kDepth taps: sub-tile
// piece / 8 of `rows` rows.
__device__ __forceinline__ uint32_t piece_offset(int rows, int row, int piece) {
    return uint32_t((piece / 8) * rows * 128) + swizzled(row, piece);
}

__device__ __forceinline__ void named_sync_producers() {
    asm volatile("bar.sync 1, 128;\n" ::: "memory");
}

// Zero the A ring and the staged rows (margins and all-pad rows stay so),
// and load the filter into B: filter f's taps in KRSC order, zero-padded.
__device__ __forceinline__ void stem_setup(const cdnn_cuda_conv_params_t &p, uint8_t *a_ring,
                                           uint8_t *b, uint8_t *raw) {
    const uint4 zero = make_uint4(0, 0, 0, 0);
    for (int i = threadIdx.x; i < kStages * kABytes / 16; i += blockDim.x)
        reinterpret_cast<uint4 *>(a_ring)[i] = zero;
    for (int i = threadIdx.x; i < kRawBytes / 16; i += blockDim.x)
        reinterpret_cast<uint4 *>(raw)[i] = zero;
    const uint16_t *w = static_cast<const uint16_t *>(p.filter);
    for (int i = threadIdx.x; i < kTileN * kDepth / 8; i += blockDim.x) {
        const int f = i / (kDepth / 8), piece = i % (kDepth / 8);
        uint32_t word[4];
#pragma unroll
        for (int e = 0; e < 8; e += 2) {
            const int tap = piece * 8 + e;
            const uint32_t lo = f < p.k && tap < kTaps ? w[f * p.w_strides[0] + tap] : 0;
            const uint32_t hi = f < p.k && tap + 1 < kTaps ? w[f * p.w_strides[0] + tap + 1] : 0;
            word[e / 2] = lo | (hi << 16);
        }
        *reinterpret_cast<uint4 *>(b + piece_offset(kTileN, f, piece)) =
            make_uint4(word[0], word[1], word[2], word[3]);
    }
    fence_async_shared(); // B and the zeros are read by wgmma (the async proxy)
}

// The producer warpgroup (128 threads): per tile, stage the rows, repack.
__device__ __forceinline__ void stem_produce(const cdnn_cuda_conv_params_t &p, uint32_t a_ring,
                                             uint8_t *a_ring_ptr, uint8_t *raw, uint32_t full,
                                             uint32_t empty) {
    const int tid = threadIdx.x; // 0..127
    const int row_pieces = int(p.w * p.c) / 8, pitch = 2 * kMargin + int(p.w * p.c);
    const int tiles = int(p.n * p.p), rows_out = int(p.p);
    const uint4 *x = static_cast<const uint4 *>(p.x);
    // This thread's 16-byte pieces of the staged rows: row u, piece off.
    int load_u[kLoads], load_off[kLoads];
#pragma unroll
    for (int it = 0; it < kLoads; ++it) {
        const int v = tid + 128 * it;
        load_u[it] = v / row_pieces;
        load_off[it] = v - load_u[it] * row_pieces;
    }
    uint4 held[kLoads];
    auto load_rows = [&](int t) {
        const int n = t / rows_out, i = t - n * rows_out;
#pragma unroll
        for (int it = 0; it < kLoads; ++it) {
            const int u = load_u[it], hi = i * int(p.stride_h) - int(p.pad_h) + u;
            held[it] = make_uint4(0, 0, 0, 0);
            if (u < kR && hi >= 0 && hi < int(p.h))
                held[it] = __ldg(x + (n * p.x_strides[0] + hi * p.x_strides[1]) / 8 + load_off[it]);
        }
    };
    const int j = tid; // this thread's pixel of the output row
    const int first = (j * kStride - int(p.pad_w)) * kC + kMargin;
    const uint16_t *raw16 = reinterpret_cast<const uint16_t *>(raw);
    int t = blockIdx.x;
    if (t < tiles)
        load_rows(t);
    for (int step = 0; t < tiles; t += gridDim.x, ++step) {
        named_sync_producers(); // the last repack is done with the staged rows
#pragma unroll
        for (int it = 0; it < kLoads; ++it)
            if (load_u[it] < kR)
                *reinterpret_cast<uint4 *>(raw + 2 * (load_u[it] * pitch + kMargin) +
                                           16 * load_off[it]) = held[it];
        named_sync_producers();
        if (t + int(gridDim.x) < tiles)
            load_rows(t + gridDim.x); // in flight during the repack
        const int s = step % kStages;
        barrier_wait(empty + 8 * s, (uint32_t(step / kStages) & 1) ^ 1);
        if (j < int(p.q)) {
            uint8_t *a = a_ring_ptr + s * kABytes;
#pragma unroll
            for (int piece = 0; piece < kPieces; ++piece) {
                uint32_t word[4];
#pragma unroll
                for (int e = 0; e < 8; e += 2) {
                    const int tap0 = piece * 8 + e, tap1 = tap0 + 1;
                    const uint32_t lo =
                        tap0 < kTaps ? raw16[(tap0 / kRowTaps) * pitch + first + tap0 % kRowTaps] : 0;
                    const uint32_t hi =
                        tap1 < kTaps ? raw16[(tap1 / kRowTaps) * pitch + first + tap1 % kRowTaps] : 0;
                    word[e / 2] = lo | (hi << 16);
                }
                *reinterpret_cast<uint4 *>(a + piece_offset(kTileM, j, piece)) =
                    make_uint4(word[0], word[1], word[2], word[3]);
            }
        }
        fence_async_shared();
        barrier_arrive(full + 8 * s);
    }
    (void)a_ring;
}

// A consumer warpgroup: pixels [64 consumer, 64 consumer + 64) of each row.
// y_map NULL: the register epilogue; else through buf by TMA (v4), the map's
// dims {k, q, n * p}.
template <int DType>
__device__ __forceinline__ void stem_consume(const cdnn_cuda_conv_params_t &p, uint32_t a_ring,
                                             uint32_t b, uint32_t full, uint32_t empty,
                                             int consumer, const cdnn_cuda_tensor_map_t *y_map,
                                             uint32_t buf) {
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const int tiles = int(p.n * p.p), rows_out = int(p.p);
    const int64_t ebytes = p.y_type == CDNN_CUDA_F32 ? 4 : 2;
    float acc[kTileN / 2], bias[kTileN / 32];
    if (y_map) // the whole filter set: one load for the launch
        load_lane_bias<kTileN>(bias, p.bias, p.bias_stride, p.bias_type, 0, p.k);
    int step = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x, ++step) {
        const int s = step % kStages;
#pragma unroll
        for (int i = 0; i < kTileN / 2; ++i)
            acc[i] = 0.0f;
        barrier_wait(full + 8 * s, uint32_t(step / kStages) & 1);
        const uint32_t a_tile = a_ring + s * kABytes + consumer * 64 * 128;
        wgmma_fence();
#pragma unroll
        for (int sub = 0; sub < kSubTiles; ++sub)
#pragma unroll
            for (int kk = 0; kk < 4; ++kk)
                wgmma_tile<DType, kTileN, 0>(
                    acc, smem_descriptor(a_tile + sub * kTileM * 128 + kk * 32, 16, 1024),
                    smem_descriptor(b + sub * kTileN * 128 + kk * 32, 16, 1024));
        wgmma_commit();
        wgmma_wait<0>();
        fence_registers(acc);
        if (lane == 0)
            barrier_arrive(empty + 8 * s);
        if (y_map) {
            store_block<kTileN>(acc, consumer, buf, y_map, 0, consumer * 64, t, p.k, p.y_type,
                                p.activation, bias);
            continue;
        }
        const int n = t / rows_out, i = t - n * rows_out;
        const int64_t j = consumer * 64 + 16 * warp + lane / 4;
        uint8_t *row = static_cast<uint8_t *>(p.y) +
                       (n * p.y_strides[0] + i * p.y_strides[1] + j * p.y_strides[2]) * ebytes;
        finish_pairs_any<kTileN>(p.activation, acc, j < p.q ? row : nullptr,
                                 j + 8 < p.q ? row + 8 * p.y_strides[2] * ebytes : nullptr, 0,
                                 p.k, p.y_type, p.bias, p.bias_stride, p.bias_type);
    }
    if (y_map && threadIdx.x % 128 == 0)
        bulk_wait_all();
}

// y_map NULL: the stem with the register epilogue; else with TMA stores, two
// 64 x 64 buffers after the filter.
template <int DType>
__device__ __forceinline__ void conv_stem(const cdnn_cuda_conv_params_t &p,
                                          const cdnn_cuda_tensor_map_t *y_map) {
    extern __shared__ uint8_t dynamic_shared[];
    uint8_t *a_ring = dynamic_shared + ((1024 - smem_address(dynamic_shared) % 1024) % 1024);
    uint8_t *b = a_ring + kStages * kABytes, *buffers = b + kBBytes;
    uint8_t *raw = buffers + (y_map ? 2 * 64 * kTileN * 2 : 0);
    const uint32_t full = smem_address(raw + kRawBytes), empty = full + 8 * kStages;
    stem_setup(p, a_ring, b, raw);
    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            barrier_init(full + 8 * s, 128);               // every producer thread
            barrier_init(empty + 8 * s, kConsumers * 4);   // one arrival a consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0)
        stem_produce(p, smem_address(a_ring), a_ring, raw, full, empty);
    else
        stem_consume<DType>(p, smem_address(a_ring), smem_address(b), full, empty,
                            warpgroup - 1, y_map,
                            smem_address(buffers) + (warpgroup - 1) * 64 * kTileN * 2);
}
} // namespace stem

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

extern "C" __global__ void __launch_bounds__(CDNN_CUDA_CONV_STEM_THREADS, 1)
    cdnn_cuda_conv_stem_f16(const __grid_constant__ cdnn_cuda_conv_params_t params) {
    cdnn::stem::conv_stem<CDNN_CUDA_F16>(params, nullptr);
}

extern "C" __global__ void __launch_bounds__(CDNN_CUDA_CONV_STEM_THREADS, 1)
    cdnn_cuda_conv_stem_bf16(const __grid_constant__ cdnn_cuda_conv_params_t params) {
    cdnn::stem::conv_stem<CDNN_CUDA_BF16>(params, nullptr);
}

#define CDNN_CONV_WGMMA_STORE_ENTRY(dtype, name, tm, tn, stages)                               \
    extern "C" __global__ void __launch_bounds__(CDNN_CUDA_MATMUL_WGMMA_THREADS, 1)            \
        cdnn_cuda_conv_wgmma_store_##name##_##tm##x##tn(                                       \
            const __grid_constant__ cdnn_cuda_conv_tma_store_params_t params) {                \
        cdnn::conv_wgmma_store<dtype, tm, tn, stages>(params);                                 \
    }
#define CDNN_CONV_WGMMA_STORE_ENTRIES(tm, tn, stages)                   \
    CDNN_CONV_WGMMA_STORE_ENTRY(CDNN_CUDA_F16, f16, tm, tn, stages)     \
    CDNN_CONV_WGMMA_STORE_ENTRY(CDNN_CUDA_BF16, bf16, tm, tn, stages)

CDNN_CUDA_CONV_WGMMA_STORE_CONFIGS(CDNN_CONV_WGMMA_STORE_ENTRIES)

extern "C" __global__ void __launch_bounds__(CDNN_CUDA_CONV_STEM_THREADS, 1)
    cdnn_cuda_conv_stem_store_f16(const __grid_constant__ cdnn_cuda_conv_stem_store_params_t params) {
    cdnn::stem::conv_stem<CDNN_CUDA_F16>(params.conv, &params.y_map);
}

extern "C" __global__ void __launch_bounds__(CDNN_CUDA_CONV_STEM_THREADS, 1)
    cdnn_cuda_conv_stem_store_bf16(const __grid_constant__ cdnn_cuda_conv_stem_store_params_t params) {
    cdnn::stem::conv_stem<CDNN_CUDA_BF16>(params.conv, &params.y_map);
}
