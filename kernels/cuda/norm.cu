// norm.cu -- "cuda-norm-v1": layer-norm and RMS-norm over the last axis.
// One read and one write of each element: the row is cached in shared
// memory as f32 between the statistics and the output (rows.cuh).  The
// layer-norm variance is the mean of squared deviations from the mean,
// taken over the cached row, which keeps it accurate when the mean is
// large against the spread (E[x^2] - E[x]^2 is not).
#include "rows.cuh"

namespace cdnn {
namespace {

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
    const float inv_std = rsqrtf(second + p.epsilon);
    store_row(g, y, p.y_type, p.cols, p.y_col_stride, cache, [&](int64_t j, float v) {
        float out = (v - mean) * inv_std;
        if (p.scale)
            out *= load_as_f32(p.scale, j * p.scale_stride, p.scale_type);
        if (p.shift)
            out += load_as_f32(p.shift, j * p.shift_stride, p.shift_type);
        return out;
    });
}

} // namespace
} // namespace cdnn

extern "C" __global__ void __launch_bounds__(1024)
    cdnn_cuda_norm_block(const __grid_constant__ cdnn_cuda_norm_params_t params) {
    cdnn::norm_rows<false>(params);
}

extern "C" __global__ void __launch_bounds__(32 * CDNN_CUDA_NORM_WARP_ROWS_PER_BLOCK)
    cdnn_cuda_norm_warp(const __grid_constant__ cdnn_cuda_norm_params_t params) {
    cdnn::norm_rows<true>(params);
}
