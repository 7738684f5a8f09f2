// softmax.cu -- "cuda-softmax-v1": softmax and log-softmax over the last
// axis, one read and one write of each element: the row is cached in
// shared memory as f32 (rows.cuh); its maximum is taken as it is loaded,
// then one sweep over the cache turns it into exponentials and sums them.
#include "rows.cuh"

namespace cdnn {
namespace {

template <bool Warp>
__device__ __forceinline__ void softmax_rows(const cdnn_cuda_softmax_params_t &p) {
    extern __shared__ float shared_rows[];
    __shared__ float scratch[32];
    const RowGroup<Warp> g{scratch};
    float *cache;
    const int64_t row = group_row<Warp>(p.rows, p.cols, shared_rows, cache);
    if (row < 0)
        return;
    const void *x = static_cast<const char *>(p.x) + row * p.x_row_stride * element_bytes(p.x_type);
    void *y = static_cast<char *>(p.y) + row * p.y_row_stride * element_bytes(p.y_type);

    float partial_max = -INFINITY;
    load_row(g, x, p.x_type, p.cols, p.x_col_stride, cache,
             [&](float v) { partial_max = fmaxf(partial_max, v); });
    const float row_max = g.max(partial_max);
    float partial_sum = 0.0f;
    for (int64_t j = g.rank(); j < p.cols; j += g.size()) {
        const float e = expf(cache[j] - row_max);
        partial_sum += e;
        if (!p.log)
            cache[j] = e; // each thread rewrites only the columns it reads
    }
    const float sum = g.sum(partial_sum);
    g.sync(); // the rewrites above before store_row reads other threads' columns
    if (p.log) {
        const float shift = row_max + logf(sum);
        store_row(g, y, p.y_type, p.cols, p.y_col_stride, cache,
                  [&](int64_t, float v) { return v - shift; });
    } else {
        const float inv_sum = 1.0f / sum;
        store_row(g, y, p.y_type, p.cols, p.y_col_stride, cache,
                  [&](int64_t, float v) { return v * inv_sum; });
    }
}

} // namespace
} // namespace cdnn

extern "C" __global__ void __launch_bounds__(1024)
    cdnn_cuda_softmax_block(const __grid_constant__ cdnn_cuda_softmax_params_t params) {
    cdnn::softmax_rows<false>(params);
}

extern "C" __global__ void __launch_bounds__(32 * CDNN_CUDA_NORM_WARP_ROWS_PER_BLOCK)
    cdnn_cuda_softmax_warp(const __grid_constant__ cdnn_cuda_softmax_params_t params) {
    cdnn::softmax_rows<true>(params);
}
