// rows.cuh -- what the row kernels (norm, softmax) share: a row is handled
// by a group of threads, a whole block or one warp, which caches it in
// shared memory as f32, so that each element is read from memory once and
// written once, with 16-byte accesses where the row is contiguous and
// aligned.
#ifndef CDNN_KERNELS_CUDA_ROWS_CUH
#define CDNN_KERNELS_CUDA_ROWS_CUH

#include "common.cuh"

namespace cdnn {

// The threads that share one row: a block (Warp false) or a warp.
template <bool Warp>
struct RowGroup {
    float *scratch; // 32 floats of shared memory for the block's reductions

    __device__ __forceinline__ int rank() const { return Warp ? (threadIdx.x & 31) : threadIdx.x; }
    __device__ __forceinline__ int size() const { return Warp ? 32 : blockDim.x; }
    __device__ __forceinline__ float sum(float v) const {
        return Warp ? warp_sum(v) : block_reduce<false>(v, scratch);
    }
    __device__ __forceinline__ float max(float v) const {
        return Warp ? warp_max(v) : block_reduce<true>(v, scratch);
    }
    // Orders the group's shared-memory writes before its reads.
    __device__ __forceinline__ void sync() const {
        if (Warp)
            __syncwarp();
        else
            __syncthreads();
    }
};

// Whether a row at `row` with this column stride moves in 16-byte pieces.
__device__ __forceinline__ bool row_vectorised(const void *row, int64_t col_stride) {
    return col_stride == 1 && aligned16(row);
}

// Cache the row's `cols` elements (f32) in `cache`; calls see(value) on
// each as it is loaded (for statistics that need no second sweep).
template <bool Warp, typename See>
__device__ __forceinline__ void load_row(const RowGroup<Warp> &g, const void *x, int32_t type,
                                         int64_t cols, int64_t col_stride, float *cache, See see) {
    int64_t done = 0;
    if (row_vectorised(x, col_stride)) {
        const int per16 = 16 / element_bytes(type);
        const int64_t pieces = cols / per16;
        const uint4 *vec = static_cast<const uint4 *>(x);
        for (int64_t v = g.rank(); v < pieces; v += g.size()) {
            float values[8];
            unpack16(__ldg(vec + v), type, values);
#pragma unroll
            for (int e = 0; e < 8; ++e) // constant indices keep values[] in registers
                if (e < per16) {
                    cache[v * per16 + e] = values[e];
                    see(values[e]);
                }
        }
        done = pieces * per16;
    }
    for (int64_t j = done + g.rank(); j < cols; j += g.size()) {
        const float value = load_as_f32(x, j * col_stride, type);
        cache[j] = value;
        see(value);
    }
    g.sync();
}

// Write the row: y[j] = make(j, cache[j]) for every column.
template <bool Warp, typename Make>
__device__ __forceinline__ void store_row(const RowGroup<Warp> &g, void *y, int32_t type,
                                          int64_t cols, int64_t col_stride, const float *cache,
                                          Make make) {
    int64_t done = 0;
    if (row_vectorised(y, col_stride)) {
        const int per16 = 16 / element_bytes(type);
        const int64_t pieces = cols / per16;
        uint4 *vec = static_cast<uint4 *>(y);
        for (int64_t v = g.rank(); v < pieces; v += g.size()) {
            float values[8];
#pragma unroll
            for (int e = 0; e < 8; ++e)
                values[e] = e < per16 ? make(v * per16 + e, cache[v * per16 + e]) : 0.0f;
            vec[v] = pack16(values, type);
        }
        done = pieces * per16;
    }
    for (int64_t j = done + g.rank(); j < cols; j += g.size())
        store_from_f32(y, j * col_stride, type, make(j, cache[j]));
}

// The row this thread's group handles (rows_per_block groups per block for
// warps), or -1 past the last row; `cache` points to its shared row.
template <bool Warp>
__device__ __forceinline__ int64_t group_row(int64_t rows, int64_t cols, float *shared,
                                             float *&cache) {
    const int64_t group = Warp ? threadIdx.x >> 5 : 0;
    const int64_t per_block = Warp ? CDNN_CUDA_NORM_WARP_ROWS_PER_BLOCK : 1;
    const int64_t row = int64_t(blockIdx.x) * per_block + group;
    cache = shared + group * cols;
    return row < rows ? row : -1;
}

// ---- per-column parameters (norm's scale and shift) ----

// A 16-bit element's bits as f32.
__device__ __forceinline__ float half_bits_to_f32(uint32_t bits, int32_t type) {
    const unsigned short h = static_cast<unsigned short>(bits & 0xffffu);
    return type == CDNN_CUDA_F16 ? __half2float(__ushort_as_half(h))
                                 : __bfloat162float(__ushort_as_bfloat16(h));
}

// Whether a per-column parameter (scale or shift) is read in pieces: absent,
// or contiguous and 16-byte aligned.
__device__ __forceinline__ bool param_vectorised(const void *base, int64_t stride) {
    return !base || (stride == 1 && aligned16(base));
}

// count (4 or 8) consecutive values of a per-column parameter that
// param_vectorised accepts, from column `first` (a multiple of count, so
// that each piece stays aligned), as f32; `absent` where there is none.
// Elementwise loads of the parameters, two per output element for
// layer-norm, were as many load instructions as the rest of the kernel's.
__device__ __forceinline__ void load_params(const void *base, int32_t type, int64_t first,
                                            int count, float absent, float (&out)[8]) {
    if (!base) {
#pragma unroll
        for (int e = 0; e < 8; ++e)
            out[e] = absent;
        return;
    }
    const char *at = static_cast<const char *>(base) + first * element_bytes(type);
    uint32_t words[8];
    if (type == CDNN_CUDA_F32 || count == 8) {
        const uint4 lo = __ldg(reinterpret_cast<const uint4 *>(at));
        const uint4 hi = type == CDNN_CUDA_F32 && count == 8
                             ? __ldg(reinterpret_cast<const uint4 *>(at) + 1) : lo;
        words[0] = lo.x, words[1] = lo.y, words[2] = lo.z, words[3] = lo.w;
        words[4] = hi.x, words[5] = hi.y, words[6] = hi.z, words[7] = hi.w;
    } else {
        const uint2 v = __ldg(reinterpret_cast<const uint2 *>(at));
        words[0] = v.x, words[1] = v.y;
    }
#pragma unroll
    for (int e = 0; e < 8; ++e)
        out[e] = type == CDNN_CUDA_F32 ? __uint_as_float(words[e])
                                       : half_bits_to_f32(words[e / 2] >> (16 * (e % 2)), type);
}

} // namespace cdnn

#endif
