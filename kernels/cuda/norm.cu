// norm.cu -- "cuda-norm-v1": layer-norm and RMS-norm over the last axis.
// One read and one write of each element: the row is cached in shared
// memory as f32 between the statistics and the output (rows.cuh).  The
// layer-norm variance is the mean of squared deviations from the mean,
// taken over the cached row, which keeps it accurate when the mean is
// large against the spread (E[x^2] - E[x]^2 is not).
#include "rows.cuh"
#include "rows_regs.cuh"

namespace cdnn {
namespace {

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

// Write the normalised row, y = (cached - mean) * inv_std * scale + shift:
// in 16-byte pieces with the parameters read a piece at a time where y's
// row and the parameters allow it, else through store_row.
template <bool Warp>
__device__ __forceinline__ void store_normalised(const RowGroup<Warp> &g,
                                                 const cdnn_cuda_norm_params_t &p, void *y,
                                                 const float *cache, float mean, float inv_std) {
    if (!row_vectorised(y, p.y_col_stride) || !param_vectorised(p.scale, p.scale_stride) ||
        !param_vectorised(p.shift, p.shift_stride)) {
        store_row(g, y, p.y_type, p.cols, p.y_col_stride, cache, [&](int64_t j, float v) {
            float out = (v - mean) * inv_std;
            if (p.scale)
                out *= load_as_f32(p.scale, j * p.scale_stride, p.scale_type);
            if (p.shift)
                out += load_as_f32(p.shift, j * p.shift_stride, p.shift_type);
            return out;
        });
        return;
    }
    const int per16 = 16 / element_bytes(p.y_type);
    const int64_t pieces = p.cols / per16;
    uint4 *vec = static_cast<uint4 *>(y);
    for (int64_t v = g.rank(); v < pieces; v += g.size()) {
        float param[8], values[8]; // param: the scale, then the shift
        load_params(p.scale, p.scale_type, v * per16, per16, 1.0f, param);
#pragma unroll
        for (int e = 0; e < 8; ++e)
            values[e] = e < per16 ? (cache[v * per16 + e] - mean) * inv_std * param[e] : 0.0f;
        load_params(p.shift, p.shift_type, v * per16, per16, 0.0f, param);
#pragma unroll
        for (int e = 0; e < 8; ++e)
            values[e] += param[e];
        vec[v] = pack16(values, p.y_type);
    }
    for (int64_t j = pieces * per16 + g.rank(); j < p.cols; j += g.size()) {
        float out = (cache[j] - mean) * inv_std;
        if (p.scale)
            out *= load_as_f32(p.scale, j, p.scale_type);
        if (p.shift)
            out += load_as_f32(p.shift, j, p.shift_type);
        store_from_f32(y, j, p.y_type, out);
    }
}

template <bool Warp>
__device__ __forceinline__ void norm_rows(const cdnn_cuda_norm_params_t &p) {
    extern __shared__ float shared_rows[];
    __shared__ float scratch[32];
    const RowGroup<Warp> g{scratch};
    float *cache;
    const int64_t row = group_row<Warp>(p.rows, p.cols, shared_rows, cache);
    if (row < 0)
        return; // a whole warp (only the warp kernel has groups to spare)
    const void *x = static_cast<const char *>(p.x) + row * p.x_row_stride * element_bytes(p.x_type);
    void *y = static_cast<char *>(p.y) + row * p.y_row_stride * element_bytes(p.y_type);

    const bool rms = p.kind == CDNN_CUDA_NORM_RMS;
    float partial = 0.0f; // the sum (layer) or the sum of squares (rms)
    load_row(g, x, p.x_type, p.cols, p.x_col_stride, cache,
             [&](float v) { partial += rms ? v * v : v; });
    const float inv_cols = 1.0f / static_cast<float>(p.cols);
    const float first = g.sum(partial) * inv_cols;
    float mean = 0.0f, second = first; // rms: mean(x^2)
    if (!rms) {
        mean = first;
        float squares = 0.0f;
        for (int64_t j = g.rank(); j < p.cols; j += g.size()) {
            const float d = cache[j] - mean;
            squares += d * d;
        }
        second = g.sum(squares) * inv_cols;
    }
    store_normalised(g, p, y, cache, mean, rsqrtf(second + p.epsilon));
}

// The register path (rows_regs.cuh): the row in registers, G threads to
// a row, N pieces of 8 a thread, R rows a block.
template <int G, int R, int N>
__device__ __forceinline__ void norm_rows_regs(const cdnn_cuda_norm_params_t &p) {
    __shared__ float scratch[32];
    RegRow<G, R, N> r;
    const int64_t row = r.start(p.rows, p.cols);
    if (row < 0)
        return; // past the last row: only warp groups (R > 1) have rows to spare
    const void *x = static_cast<const char *>(p.x) + row * p.x_row_stride * element_bytes(p.x_type);
    void *y = static_cast<char *>(p.y) + row * p.y_row_stride * element_bytes(p.y_type);
    r.load(x, p.x_type, p.x_col_stride, 0.0f);

    const bool rms = p.kind == CDNN_CUDA_NORM_RMS;
    const float inv_cols = 1.0f / static_cast<float>(p.cols);
    float mean = 0.0f, second;
    if (rms) {
        float squares = 0.0f; // padding is 0: adds nothing
#pragma unroll
        for (int k = 0; k < N; ++k)
#pragma unroll
            for (int e = 0; e < 8; ++e)
                squares = fmaf(r.v[k][e], r.v[k][e], squares);
        second = r.sum(squares, scratch) * inv_cols;
    } else {
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k < N; ++k)
#pragma unroll
            for (int e = 0; e < 8; ++e)
                sum += r.v[k][e];
        mean = r.sum(sum, scratch) * inv_cols;
        float squares = 0.0f; // deviations from the mean, over the registers
#pragma unroll
        for (int k = 0; k < N; ++k)
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const float d = r.valid(k, e) ? r.v[k][e] - mean : 0.0f;
                squares = fmaf(d, d, squares);
            }
        second = r.sum(squares, scratch) * inv_cols;
    }
    const float inv_std = rsqrtf(second + p.epsilon);
    const bool pieces = param_vectorised(p.scale, p.scale_stride) &&
                        param_vectorised(p.shift, p.shift_stride);
    r.store(y, p.y_type, p.y_col_stride, [&](int k, int64_t c, float (&out)[8]) {
        float scale[8], shift[8];
        if (pieces && c + 8 <= p.cols) {
            load_params(p.scale, p.scale_type, c, 8, 1.0f, scale);
            load_params(p.shift, p.shift_type, c, 8, 0.0f, shift);
        } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const bool in = c + e < p.cols;
                scale[e] = p.scale && in ? load_as_f32(p.scale, (c + e) * p.scale_stride,
                                                       p.scale_type) : 1.0f;
                shift[e] = p.shift && in ? load_as_f32(p.shift, (c + e) * p.shift_stride,
                                                       p.shift_type) : 0.0f;
            }
        }
#pragma unroll
        for (int e = 0; e < 8; ++e)
            out[e] = fmaf((r.v[k][e] - mean) * inv_std, scale[e], shift[e]);
    });
}

} // namespace
} // namespace cdnn

// The register kernels, cdnn_cuda_norm_regs_NAME (cuda_kernel.h's
// CDNN_CUDA_ROWS_REGS_CONFIGS).
#define CDNN_NORM_REGS(NAME, G, R, N)                                                           \
    extern "C" __global__ void __launch_bounds__(G * R, 1)                                       \
        cdnn_cuda_norm_regs_##NAME(const __grid_constant__ cdnn_cuda_norm_params_t params) {    \
        cdnn::norm_rows_regs<G, R, N>(params);                                                  \
    }
CDNN_CUDA_ROWS_REGS_CONFIGS(CDNN_NORM_REGS)
#undef CDNN_NORM_REGS

extern "C" __global__ void __launch_bounds__(1024)
    cdnn_cuda_norm_block(const __grid_constant__ cdnn_cuda_norm_params_t params) {
    cdnn::norm_rows<false>(params);
}

extern "C" __global__ void __launch_bounds__(32 * CDNN_CUDA_NORM_WARP_ROWS_PER_BLOCK)
    cdnn_cuda_norm_warp(const __grid_constant__ cdnn_cuda_norm_params_t params) {
    cdnn::norm_rows<true>(params);
}
