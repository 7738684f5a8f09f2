// rows_regs.cuh -- the row kernels' register path (norm, softmax): a row
// is split among a group of G threads (a warp, or a whole block when G >
// 32), each holding N pieces of 8 consecutive elements in registers as
// f32.  Piece k of the thread of rank t covers columns (k * G + t) * 8 ..
// + 7, so each of the group's N sweeps reads G consecutive 16-byte pieces
// (coalesced), and all N loads of a thread are in flight before the first
// use.  The row is read from memory once and written once, as with the
// shared-memory cache of rows.cuh, but with no shared-memory round trip:
// statistics are warp shuffles (one shared-memory step across the warps
// of a block-wide group).  A row fits when cols <= G * N * 8; the handler
// sees to that (metadata "pieces").
#ifndef CDNN_KERNELS_CUDA_ROWS_REGS_CUH
#define CDNN_KERNELS_CUDA_ROWS_REGS_CUH

#include "common.cuh"

namespace cdnn {

// The group of G threads holding one row, N pieces a thread, R groups (rows)
// a block.  Block-wide groups (G > 32) take one row per block (R == 1),
// so that the block's barriers are the group's.
template <int G, int R, int N>
struct RegRow {
    static_assert(G % 32 == 0 && (G == 32 || R == 1), "a warp per row, or a block per row");
    static constexpr int kCapacity = G * N * 8;

    float v[N][8];
    int rank;     // this thread's rank in its group
    int64_t cols; // the row's length
    bool full;    // every piece of this thread lies inside the row

    __device__ __forceinline__ int64_t column(int k) const {
        return (int64_t(k) * G + rank) * 8;
    }
    __device__ __forceinline__ bool valid(int k, int e) const {
        return full || column(k) + e < cols;
    }
    __device__ __forceinline__ float sum(float x, float *scratch) const {
        return G == 32 ? warp_sum(x) : block_reduce<false>(x, scratch);
    }
    __device__ __forceinline__ float max(float x, float *scratch) const {
        return G == 32 ? warp_max(x) : block_reduce<true>(x, scratch);
    }

    // The row this thread's group handles, or -1 past the last row (or when
    // the launch does not match the kernel: a block of other than G * R
    // threads, a row longer than kCapacity; the handler rules both out).
    __device__ __forceinline__ int64_t start(int64_t rows, int64_t row_cols) {
        cols = row_cols;
        rank = threadIdx.x % G;
        full = column(N - 1) + 8 <= cols;
        const int64_t row = int64_t(blockIdx.x) * R + threadIdx.x / G;
        if (blockDim.x != G * R || cols > kCapacity || row >= rows)
            return -1;
        return row;
    }

    // Load the row; elements past its end become `pad`.
    __device__ __forceinline__ void load(const void *x, int32_t type, int64_t col_stride,
                                         float pad) {
        if (full && col_stride == 1 && aligned16(x)) {
            load_full(x, type);
            return;
        }
        const bool vec = col_stride == 1 && aligned16(x);
#pragma unroll
        for (int k = 0; k < N; ++k) {
            const int64_t c = column(k);
            if (vec && c + 8 <= cols) {
                load_piece(x, type, c, v[k]);
                continue;
            }
#pragma unroll
            for (int e = 0; e < 8; ++e)
                v[k][e] = c + e < cols ? load_as_f32(x, (c + e) * col_stride, type) : pad;
        }
    }

    // Write y[j] = make(j, piece k, element e) for the row's columns j.
    template <typename Make>
    __device__ __forceinline__ void store(void *y, int32_t type, int64_t col_stride,
                                          Make make) const {
        const bool vec = col_stride == 1 && aligned16(y);
#pragma unroll
        for (int k = 0; k < N; ++k) {
            const int64_t c = column(k);
            if (vec && (full || c + 8 <= cols)) {
                float out[8];
                make(k, c, out);
                store_piece(y, type, c, out);
            } else if (c < cols) {
                float out[8];
                make(k, c, out);
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    if (c + e < cols)
                        store_from_f32(y, (c + e) * col_stride, type, out[e]);
            }
        }
    }

  private:
    // All N pieces whole and 16-byte aligned: every load issued before the
    // first conversion, so that N (2N for f32) loads are in flight at once.
    __device__ __forceinline__ void load_full(const void *x, int32_t type) {
        const uint4 *vec = static_cast<const uint4 *>(x);
        if (type == CDNN_CUDA_F32) {
            uint4 raw[N][2];
#pragma unroll
            for (int k = 0; k < N; ++k) {
                raw[k][0] = __ldg(vec + column(k) / 4);
                raw[k][1] = __ldg(vec + column(k) / 4 + 1);
            }
#pragma unroll
            for (int k = 0; k < N; ++k)
                unpack_f32x8(raw[k][0], raw[k][1], v[k]);
            return;
        }
        uint4 raw[N];
#pragma unroll
        for (int k = 0; k < N; ++k)
            raw[k] = __ldg(vec + column(k) / 8);
#pragma unroll
        for (int k = 0; k < N; ++k)
            unpack16(raw[k], type, v[k]);
    }

    static __device__ __forceinline__ void unpack_f32x8(uint4 lo, uint4 hi, float (&out)[8]) {
        out[0] = __uint_as_float(lo.x), out[1] = __uint_as_float(lo.y);
        out[2] = __uint_as_float(lo.z), out[3] = __uint_as_float(lo.w);
        out[4] = __uint_as_float(hi.x), out[5] = __uint_as_float(hi.y);
        out[6] = __uint_as_float(hi.z), out[7] = __uint_as_float(hi.w);
    }

    // 8 elements from column c (a multiple of 8) of an aligned row.
    static __device__ __forceinline__ void load_piece(const void *x, int32_t type, int64_t c,
                                                      float (&out)[8]) {
        const uint4 *vec = static_cast<const uint4 *>(x);
        if (type == CDNN_CUDA_F32)
            unpack_f32x8(__ldg(vec + c / 4), __ldg(vec + c / 4 + 1), out);
        else
            unpack16(__ldg(vec + c / 8), type, out);
    }

    static __device__ __forceinline__ void store_piece(void *y, int32_t type, int64_t c,
                                                       const float (&out)[8]) {
        uint4 *vec = static_cast<uint4 *>(y);
        if (type == CDNN_CUDA_F32) {
            vec[c / 4] = pack16(out, type);
            vec[c / 4 + 1] = pack16(out + 4, type);
        } else {
            vec[c / 8] = pack16(out, type);
        }
    }
};

// The packed variant: each piece is 16 bytes of x as loaded (8 f16/bf16 or
// 4 f32 elements, XT the x type at compile time), held as 4 registers
// instead of 8 f32, and converted again on each sweep (one instruction an
// element for 16-bit types).  Half the registers of RegRow per element of a
// 16-bit row, so twice the rows in flight per SM, or a warp per row with 16
// pieces a lane at 4096 columns (no block barriers).  A row fits when its
// bytes are at most G * N * 16.
template <int G, int R, int N, int XT>
struct PackedRow {
    static_assert(G % 32 == 0 && (G == 32 || R == 1), "a warp per row, or a block per row");
    static constexpr int kPer = XT == CDNN_CUDA_F32 ? 4 : 8; // elements a piece
    static constexpr int kCapacity = G * N * kPer;

    uint4 raw[N];
    int rank;
    int64_t cols;
    bool full;

    __device__ __forceinline__ int64_t column(int k) const {
        return (int64_t(k) * G + rank) * kPer;
    }
    __device__ __forceinline__ bool valid(int k, int e) const {
        return full || column(k) + e < cols;
    }
    __device__ __forceinline__ float sum(float x, float *scratch) const {
        return G == 32 ? warp_sum(x) : block_reduce<false>(x, scratch);
    }
    __device__ __forceinline__ float max(float x, float *scratch) const {
        return G == 32 ? warp_max(x) : block_reduce<true>(x, scratch);
    }

    // Element e (< kPer) of piece k, as f32, its word ANDed with `gate`
    // (all ones, from gate_after).  ptxas sees the same conversion in each
    // sweep and keeps the converted f32 values of the first sweep alive for
    // the later ones -- twice the registers of the packed row, the very
    // registers this layout is meant to save (240 instead of ~100 at 16
    // pieces); a gate computed from the previous sweep's reduction makes
    // each sweep's conversions new values that exist only after it.
    __device__ __forceinline__ float at(int k, int e, uint32_t gate) const {
        const uint32_t word = gate & (e / (kPer / 4) == 0 ? raw[k].x
                                      : e / (kPer / 4) == 1 ? raw[k].y
                                      : e / (kPer / 4) == 2 ? raw[k].z : raw[k].w);
        if (XT == CDNN_CUDA_F32)
            return __uint_as_float(word);
        if (XT == CDNN_CUDA_BF16)
            return __uint_as_float(e % 2 ? word & 0xffff0000u : word << 16);
        const unsigned short h = static_cast<unsigned short>(e % 2 ? word >> 16 : word & 0xffffu);
        return __half2float(__ushort_as_half(h));
    }

    // All ones, but not before v is known (v a reduction's result; a NaN
    // gives 0, whose elements then meet the NaN in every output anyway).
    // Passed through a shuffle, which ptxas cannot see through: a plain
    // select it turned into one after the conversions, and hoisted them.
    static __device__ __forceinline__ uint32_t gate_after(float v) {
        return __shfl_sync(0xffffffffu, v == v ? 0xffffffffu : 0u, 0);
    }

    // As RegRow::start.
    __device__ __forceinline__ int64_t start(int64_t rows, int64_t row_cols) {
        cols = row_cols;
        rank = threadIdx.x % G;
        full = column(N - 1) + kPer <= cols;
        const int64_t row = int64_t(blockIdx.x) * R + threadIdx.x / G;
        if (blockDim.x != G * R || cols > kCapacity || row >= rows)
            return -1;
        return row;
    }

    // Load the row; elements past its end become `pad` (stored as XT).
    __device__ __forceinline__ void load(const void *x, int64_t col_stride, float pad) {
        const uint4 *vec = static_cast<const uint4 *>(x);
        if (full && col_stride == 1 && aligned16(x)) {
#pragma unroll
            for (int k = 0; k < N; ++k)
                raw[k] = __ldg(vec + column(k) / kPer);
            return;
        }
        const bool aligned = col_stride == 1 && aligned16(x);
#pragma unroll
        for (int k = 0; k < N; ++k) {
            const int64_t c = column(k);
            if (aligned && c + kPer <= cols) {
                raw[k] = __ldg(vec + c / kPer);
                continue;
            }
            raw[k] = load_piece_slow(x, col_stride, c, cols, pad);
        }
    }

    // Write y[j] = make(piece k, its first column c, out[kPer]) for the row.
    template <typename Make>
    __device__ __forceinline__ void store(void *y, int32_t type, int64_t col_stride,
                                          Make make) const {
        const bool aligned = col_stride == 1 && aligned16(y);
#pragma unroll
        for (int k = 0; k < N; ++k) {
            const int64_t c = column(k);
            if (!full && c >= cols)
                continue;
            float out[8] = {};
            make(k, c, out);
            if (aligned && (full || c + kPer <= cols)) {
                store_piece(y, type, c, out);
                continue;
            }
#pragma unroll
            for (int e = 0; e < kPer; ++e)
                if (c + e < cols)
                    store_from_f32(y, (c + e) * col_stride, type, out[e]);
        }
    }

  private:
    // One piece element by element (strided, unaligned or the row's end;
    // `pad` past it).  Not inlined: unrolled into the caller, the loads of
    // every piece were hoisted together, holding hundreds of registers that
    // the fast path then could not use.
    static __device__ __noinline__ uint4 load_piece_slow(const void *x, int64_t col_stride,
                                                         int64_t c, int64_t cols, float pad) {
        float v[8] = {};
#pragma unroll
        for (int e = 0; e < kPer; ++e)
            v[e] = c + e < cols ? load_as_f32(x, (c + e) * col_stride, XT) : pad;
        return pack16(v, XT);
    }

    // kPer values at column c (a multiple of kPer) of an aligned row of
    // type `type`: 8, 16 or 32 bytes.
    static __device__ __forceinline__ void store_piece(void *y, int32_t type, int64_t c,
                                                       const float (&out)[8]) {
        if (type == CDNN_CUDA_F32) {
            uint4 *vec = static_cast<uint4 *>(y) + c / 4;
            vec[0] = pack16(out, type);
            if (kPer == 8)
                vec[1] = pack16(out + 4, type);
            return;
        }
        if (kPer == 8) {
            static_cast<uint4 *>(y)[c / 8] = pack16(out, type);
        } else {
            const uint4 four = pack16(out, type); // the first 4 of 8 lanes
            static_cast<uint2 *>(y)[c / 4] = make_uint2(four.x, four.y);
        }
    }
};

} // namespace cdnn

#endif
