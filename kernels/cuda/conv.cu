// conv.cu -- "cuda-conv-v1": 2-D convolution forward as an implicit GEMM
// on the tensor cores (f16 and bf16 operands, f32 accumulation with
// mma.sync.m16n8k16), bias and activation fused.
//
// The GEMM's rows are output pixels (n, i, j), its columns the filters,
// its reduction the taps (u, v, channel) in that order.  A block computes
// a tile_m x tile_n tile of y; the reduction runs in steps of 32 through a
// ring of `stages` shared-memory buffers filled by cp.async while the
// tensor cores work on an older one -- the structure of matmul_tc.cu,
// with the A tile gathered from x on the fly (im2col never exists):
//
//  - each thread owns the same tile rows for the whole loop, so it
//    decodes their pixels (image, window origin) once, before the loop;
//  - a chunk of 8 consecutive taps is 8 channels of one (u, v) when c is
//    a multiple of 8, and so one 16-byte cp.async from a channels-last x,
//    or zeros where the window hangs over the padding;
//  - anything else (other channel counts, layouts, the tail of the
//    reduction) is gathered element by element, out of line, still right.
//
// The filter, packed k x r x s x c, is the GEMM's B stored k-contiguous,
// read as it lies.  The epilogue stages the f32 tile in shared memory with
// each row's output offset, then writes consecutive filters from
// consecutive threads (coalesced in NHWC).
#include "mma_sync.cuh"

namespace cdnn {
namespace {

using tc::copy16_async;
using tc::zero16;

constexpr int kTileK = CDNN_CUDA_CONV_TILE_K;
constexpr int kPitch = kTileK + 8; // halves per staged row; 8 of padding keep ldmatrix conflict-free
constexpr int kChunksPerRow = kTileK / 8;

// The launch's GEMM sizes (32-bit: the handler bounds them by 2^30) and
// which fast paths the layouts allow.
struct ConvShape {
    int rows, depth, filters; // n * p * q, r * s * c, k
    int pq, q, c, s;
    bool x_fast, w_fast;
};

__device__ __forceinline__ ConvShape shape_of(const cdnn_cuda_conv_params_t &p) {
    ConvShape sh;
    sh.pq = int(p.p * p.q);
    sh.rows = int(p.n) * sh.pq;
    sh.depth = int(p.r * p.s * p.c);
    sh.filters = int(p.k);
    sh.q = int(p.q);
    sh.c = int(p.c);
    sh.s = int(p.s);
    sh.x_fast = p.c % 8 == 0 && p.x_strides[3] == 1 && p.x_strides[0] % 8 == 0 &&
                p.x_strides[1] % 8 == 0 && p.x_strides[2] % 8 == 0 && aligned16(p.x);
    sh.w_fast = p.w_strides[3] == 1 && p.w_strides[2] == p.c && p.w_strides[1] == p.s * p.c &&
                p.w_strides[0] % 8 == 0 && aligned16(p.filter);
    return sh;
}

// Where one output pixel's window starts in x.
struct Pixel {
    int64_t image;  // offset of its image
    int64_t h0, w0; // input coordinates of tap (0, 0)
    bool valid;     // a pixel of y (not past the last row of the GEMM)
};

__device__ __forceinline__ Pixel pixel_of(const cdnn_cuda_conv_params_t &p, const ConvShape &sh,
                                          int row) {
    Pixel px;
    px.valid = row < sh.rows;
    const int m = px.valid ? row : 0;
    const int img = m / sh.pq, rem = m - img * sh.pq;
    const int i = rem / sh.q, j = rem - i * sh.q;
    px.image = int64_t(img) * p.x_strides[0];
    px.h0 = int64_t(i) * p.stride_h - p.pad_h;
    px.w0 = int64_t(j) * p.stride_w - p.pad_w;
    return px;
}

// Tap index kk as (u, v, channel).
struct Tap {
    int u, v, ch;
};

__device__ __forceinline__ Tap tap_of(const ConvShape &sh, int kk) {
    Tap t;
    const int uv = kk / sh.c;
    t.ch = kk - uv * sh.c;
    t.u = uv / sh.s;
    t.v = uv - t.u * sh.s;
    return t;
}

// Element kk of the pixel's im2col row as raw bits (0 in the padding).
__device__ __forceinline__ uint32_t x_element(const cdnn_cuda_conv_params_t &p,
                                              const ConvShape &sh, const Pixel &px, int kk) {
    if (kk >= sh.depth)
        return 0;
    const Tap t = tap_of(sh, kk);
    const int64_t hi = px.h0 + t.u * p.dilation_h, wi = px.w0 + t.v * p.dilation_w;
    if (hi < 0 || hi >= p.h || wi < 0 || wi >= p.w)
        return 0;
    return static_cast<const uint16_t *>(p.x)[px.image + hi * p.x_strides[1] +
                                              wi * p.x_strides[2] + t.ch * p.x_strides[3]];
}

// The slow paths, out of line so that the fast path's registers do not pay
// for them: 8 elements gathered into one 16-byte chunk of shared memory.
__device__ __noinline__ void gather_x_chunk(uint16_t *dst, const cdnn_cuda_conv_params_t &p,
                                            const ConvShape &sh, Pixel px, int kk) {
    uint32_t words[4] = {0, 0, 0, 0};
    for (int e = 0; e < 8; ++e)
        words[e >> 1] |= x_element(p, sh, px, kk + e) << (16 * (e & 1));
    *reinterpret_cast<uint4 *>(dst) = make_uint4(words[0], words[1], words[2], words[3]);
}

__device__ __noinline__ void gather_w_chunk(uint16_t *dst, const cdnn_cuda_conv_params_t &p,
                                            const ConvShape &sh, int filter, int kk) {
    uint32_t words[4] = {0, 0, 0, 0};
    const uint16_t *w = static_cast<const uint16_t *>(p.filter) + filter * p.w_strides[0];
    for (int e = 0; e < 8 && kk + e < sh.depth; ++e) {
        const Tap t = tap_of(sh, kk + e);
        const uint32_t bits =
            w[t.u * p.w_strides[1] + t.v * p.w_strides[2] + t.ch * p.w_strides[3]];
        words[e >> 1] |= bits << (16 * (e & 1));
    }
    *reinterpret_cast<uint4 *>(dst) = make_uint4(words[0], words[1], words[2], words[3]);
}

// Chunk (pixel, taps kk..kk + 7) of the A tile.
__device__ __forceinline__ void stage_x_chunk(uint16_t *dst, const cdnn_cuda_conv_params_t &p,
                                              const ConvShape &sh, const Pixel &px, int kk) {
    if (!px.valid || kk >= sh.depth) {
        zero16(dst);
    } else if (sh.x_fast) { // 8 channels of one tap: c % 8 == 0
        const Tap t = tap_of(sh, kk);
        const int64_t hi = px.h0 + t.u * p.dilation_h, wi = px.w0 + t.v * p.dilation_w;
        if (hi < 0 || hi >= p.h || wi < 0 || wi >= p.w)
            zero16(dst);
        else
            copy16_async(dst, static_cast<const uint16_t *>(p.x) + px.image +
                                  hi * p.x_strides[1] + wi * p.x_strides[2] + t.ch);
    } else {
        gather_x_chunk(dst, p, sh, px, kk);
    }
}

// Chunk (filter, taps kk..kk + 7) of the B tile.
__device__ __forceinline__ void stage_w_chunk(uint16_t *dst, const cdnn_cuda_conv_params_t &p,
                                              const ConvShape &sh, int filter, int kk) {
    if (filter >= sh.filters || kk >= sh.depth)
        zero16(dst);
    else if (sh.w_fast && kk + 8 <= sh.depth)
        copy16_async(dst, static_cast<const uint16_t *>(p.filter) + filter * p.w_strides[0] + kk);
    else
        gather_w_chunk(dst, p, sh, filter, kk);
}

template <int DType, int TileM, int TileN, int WarpsM, int WarpsN, int Stages>
__device__ __forceinline__ void conv_tc(const cdnn_cuda_conv_params_t &p) {
    constexpr int kThreads = 32 * WarpsM * WarpsN;
    constexpr int kWarpM = TileM / WarpsM, kWarpN = TileN / WarpsN;
    constexpr int kFragsM = kWarpM / 16, kFragsN = kWarpN / 8;
    static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "warp tiles are whole ldmatrix.x4 loads");
    constexpr int kAChunks = TileM * kChunksPerRow / kThreads; // per thread
    constexpr int kBChunks = TileN * kChunksPerRow / kThreads;
    static_assert(kAChunks * kThreads == TileM * kChunksPerRow &&
                      kBChunks * kThreads == TileN * kChunksPerRow,
                  "every thread stages the same number of chunks");
    constexpr int kStageHalves = (TileM + TileN) * kPitch;
    constexpr int kOutPitch = TileN + 4;

    extern __shared__ uint4 dynamic_shared[];
    uint16_t *shared = reinterpret_cast<uint16_t *>(dynamic_shared);
    const ConvShape sh = shape_of(p);
    const int m0 = int(blockIdx.x) * TileM, n0 = int(blockIdx.y) * TileN;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int chunk_col = (tid % kChunksPerRow) * 8; // the same for all of a thread's chunks

    // This thread's rows of the A tile, decoded once.
    Pixel pixels[kAChunks];
#pragma unroll
    for (int i = 0; i < kAChunks; ++i)
        pixels[i] = pixel_of(p, sh, m0 + (tid + i * kThreads) / kChunksPerRow);

    auto stage_k_step = [&](int stage, int k0) {
        uint16_t *a_tile = shared + stage * kStageHalves;
        uint16_t *b_tile = a_tile + TileM * kPitch;
#pragma unroll
        for (int i = 0; i < kAChunks; ++i) {
            const int row = (tid + i * kThreads) / kChunksPerRow;
            stage_x_chunk(a_tile + row * kPitch + chunk_col, p, sh, pixels[i], k0 + chunk_col);
        }
#pragma unroll
        for (int i = 0; i < kBChunks; ++i) {
            const int row = (tid + i * kThreads) / kChunksPerRow;
            stage_w_chunk(b_tile + row * kPitch + chunk_col, p, sh, n0 + row, k0 + chunk_col);
        }
    };

    const int warp_m0 = (warp / WarpsN) * kWarpM, warp_n0 = (warp % WarpsN) * kWarpN;
    float acc[kFragsM][kFragsN][4] = {};
    const int k_steps = (sh.depth + kTileK - 1) / kTileK;
#pragma unroll
    for (int s = 0; s < Stages - 1; ++s) {
        if (s < k_steps)
            stage_k_step(s, s * kTileK);
        tc::commit_copies();
    }
    for (int step = 0; step < k_steps; ++step) {
        tc::wait_copies<Stages - 2>();
        __syncthreads(); // this step's tile is in; the oldest buffer is free
        const int ahead = step + Stages - 1;
        if (ahead < k_steps)
            stage_k_step(ahead % Stages, ahead * kTileK);
        tc::commit_copies(); // an empty group keeps the count of pending groups exact

        const uint16_t *a_tile = shared + (step % Stages) * kStageHalves;
        const uint16_t *b_tile = a_tile + TileM * kPitch;
#pragma unroll
        for (int kk = 0; kk < kTileK; kk += 16) {
            uint32_t a_frag[kFragsM][4], b_frag[kFragsN][2];
#pragma unroll
            for (int i = 0; i < kFragsM; ++i)
                tc::load_matrix_x4(a_frag[i], a_tile + (warp_m0 + i * 16 + (lane & 15)) * kPitch +
                                                  kk + (lane >> 4) * 8);
#pragma unroll
            for (int j = 0; j < kFragsN; j += 2) {
                // Matrices of the x4 load: (n block j, k low), (j, k high),
                // (j + 1, k low), (j + 1, k high).
                const int q = lane >> 3, r = lane & 7;
                uint32_t regs[4];
                tc::load_matrix_x4(regs, b_tile + (warp_n0 + j * 8 + (q >> 1) * 8 + r) * kPitch +
                                             kk + (q & 1) * 8);
                b_frag[j][0] = regs[0];
                b_frag[j][1] = regs[1];
                b_frag[j + 1][0] = regs[2];
                b_frag[j + 1][1] = regs[3];
            }
#pragma unroll
            for (int i = 0; i < kFragsM; ++i)
#pragma unroll
                for (int j = 0; j < kFragsN; ++j)
                    tc::mma_16x8x16<DType>(acc[i][j], a_frag[i], b_frag[j][0], b_frag[j][1]);
        }
    }
    tc::wait_copies<0>(); // no copy may outlive the block, even an empty group
    __syncthreads();       // every warp is done with the ring the epilogue reuses

    // The f32 tile (m16n8 accumulators: c0, c1 at (lane / 4, 2 * (lane % 4)
    // + {0, 1}), c2, c3 eight rows below), then each row's offset in y.
    float *tile_out = reinterpret_cast<float *>(dynamic_shared);
    int64_t *row_offset = reinterpret_cast<int64_t *>(tile_out + TileM * kOutPitch);
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
    for (int row = tid; row < TileM; row += kThreads) {
        const int m = m0 + row;
        int64_t offset = -1;
        if (m < sh.rows) {
            const int img = m / sh.pq, rem = m - img * sh.pq;
            const int i = rem / sh.q, j = rem - i * sh.q;
            offset = img * p.y_strides[0] + i * p.y_strides[1] + j * p.y_strides[2];
        }
        row_offset[row] = offset;
    }
    __syncthreads();
#pragma unroll 1
    for (int e = tid; e < TileM * TileN; e += kThreads) {
        const int row = e / TileN, col = e % TileN, filter = n0 + col;
        const int64_t offset = row_offset[row];
        if (offset < 0 || filter >= sh.filters)
            continue;
        float value = tile_out[row * kOutPitch + col];
        if (p.bias)
            value += load_as_f32(p.bias, filter * p.bias_stride, p.bias_type);
        store_from_f32(p.y, offset + filter * p.y_strides[3], p.y_type,
                       activate(value, p.activation));
    }
}

} // namespace
} // namespace cdnn

#define CDNN_CONV_TC_ENTRY(dtype, name, tm, tn, wm, wn, stages)                                  \
    extern "C" __global__ void __launch_bounds__(32 * (wm) * (wn))                               \
        cdnn_cuda_conv_##name##_##tm##x##tn(const __grid_constant__ cdnn_cuda_conv_params_t params) { \
        cdnn::conv_tc<dtype, tm, tn, wm, wn, stages>(params);                                    \
    }
#define CDNN_CONV_TC_ENTRIES(tm, tn, wm, wn, stages)                 \
    CDNN_CONV_TC_ENTRY(CDNN_CUDA_F16, f16, tm, tn, wm, wn, stages) \
    CDNN_CONV_TC_ENTRY(CDNN_CUDA_BF16, bf16, tm, tn, wm, wn, stages)

CDNN_CUDA_CONV_CONFIGS(CDNN_CONV_TC_ENTRIES)
