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

// The packed register path (rows_regs.cuh PackedRow): x's 16-byte pieces
// held as loaded, XT its type.
template <int G, int R, int N, int XT>
__device__ __forceinline__ void norm_rows_packed(const cdnn_cuda_norm_params_t &p) {
    using Row = PackedRow<G, R, N, XT>;
    constexpr int kPer = Row::kPer;
    __shared__ float scratch[32];
    Row r;
    const int64_t row = r.start(p.rows, p.cols);
    if (row < 0)
        return; // past the last row: only warp groups (R > 1) have rows to spare
    const void *x = static_cast<const char *>(p.x) + row * p.x_row_stride * element_bytes(XT);
    void *y = static_cast<char *>(p.y) + row * p.y_row_stride * element_bytes(p.y_type);
    r.load(x, p.x_col_stride, 0.0f);

    const bool rms = p.kind == CDNN_CUDA_NORM_RMS;
    const float inv_cols = 1.0f / static_cast<float>(p.cols);
    float mean = 0.0f, second;
    if (rms) {
        float squares = 0.0f; // padding is 0: adds nothing
#pragma unroll
        for (int k = 0; k < N; ++k) {
#pragma unroll
            for (int e = 0; e < kPer; ++e) {
                const float v = r.at(k, e, ~0u);
                squares = fmaf(v, v, squares);
            }
        }
        second = r.sum(squares, scratch) * inv_cols;
    } else {
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k < N; ++k) {
#pragma unroll
            for (int e = 0; e < kPer; ++e)
                sum += r.at(k, e, ~0u);
        }
        mean = r.sum(sum, scratch) * inv_cols;
        const uint32_t after_mean = Row::gate_after(mean);
        float squares = 0.0f;
#pragma unroll
        for (int k = 0; k < N; ++k) {
#pragma unroll
            for (int e = 0; e < kPer; ++e) {
                const float d = r.valid(k, e) ? r.at(k, e, after_mean) - mean : 0.0f;
                squares = fmaf(d, d, squares);
            }
        }
        second = r.sum(squares, scratch) * inv_cols;
    }
    const float inv_std = rsqrtf(second + p.epsilon);
    const uint32_t after_std = Row::gate_after(inv_std);
    const bool pieces = param_vectorised(p.scale, p.scale_stride) &&
                        param_vectorised(p.shift, p.shift_stride);
    r.store(y, p.y_type, p.y_col_stride, [&](int k, int64_t c, float (&out)[8]) {
        float scale[8], shift[8];
        if (pieces && c + kPer <= p.cols) {
            load_params(p.scale, p.scale_type, c, kPer, 1.0f, scale);
            load_params(p.shift, p.shift_type, c, kPer, 0.0f, shift);
        } else {
#pragma unroll
            for (int e = 0; e < kPer; ++e) {
                const bool in = c + e < p.cols;
                scale[e] = p.scale && in ? load_as_f32(p.scale, (c + e) * p.scale_stride,
                                                       p.scale_type) : 1.0f;
                shift[e] = p.shift && in ? load_as_f32(p.shift, (c + e) * p.shift_stride,
                                                       p.shift_type) : 0.0f;
            }
        }
#pragma unroll
        for (int e = 0; e < kPer; ++e)
            out[e] = fmaf((r.at(k, e, after_std) - mean) * inv_std, scale[e], shift[e]);
    });
}

template <int G, int R, int N>
__device__ __forceinline__ void norm_packed(const cdnn_cuda_norm_params_t &p) {
    switch (p.x_type) {
    case CDNN_CUDA_BF16: norm_rows_packed<G, R, N, CDNN_CUDA_BF16>(p); break;
    case CDNN_CUDA_F16: norm_rows_packed<G, R, N, CDNN_CUDA_F16>(p); break;
    default: norm_rows_packed<G, R, N, CDNN_CUDA_F32>(p); break;
    }
}

} // namespace
} // namespace cdnn

// The packed register kernels, cdnn_cuda_norm_packed_NAME (cuda_kernel.h's
// CDNN_CUDA_ROWS_PACKED_CONFIGS).
#define CDNN_NORM_PACKED(NAME, G, R, N)                                                        \
    extern "C" __global__ void __launch_bounds__(G * R, 1)                                     \
        cdnn_cuda_norm_packed_##NAME(const __grid_constant__ cdnn_cuda_norm_params_t params) { \
        cdnn::norm_packed<G, R, N>(params);                                                    \
    }
CDNN_CUDA_ROWS_PACKED_CONFIGS(CDNN_NORM_PACKED)
#undef CDNN_NORM_PACKED

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
