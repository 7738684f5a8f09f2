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

} // namespace cdnn

#endif
