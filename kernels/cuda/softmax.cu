// softmax.cu -- "cuda-softmax-v1": softmax and log-softmax over the last
// axis, one read and one write of each element: the row is cached in
// shared memory as f32 (rows.cuh); its maximum is taken as it is loaded,
// then one sweep over the cache turns it into exponentials and sums them.
#include "rows.cuh"
#include "rows_regs.cuh"

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

// The register path (rows_regs.cuh): the row in registers, G threads to
// a row, N pieces of 8 a thread, R rows a block.  Exponentials as exp2f of
// the argument scaled by log2(e) (one multiply-add and ex2.approx, a few f32
// ulps): expf's range reduction was a third of the kernel's instructions
// at 2 bytes an element.
template <int G, int R, int N>
__device__ __forceinline__ void softmax_rows_regs(const cdnn_cuda_softmax_params_t &p) {
    __shared__ float scratch[32];
    RegRow<G, R, N> r;
    const int64_t row = r.start(p.rows, p.cols);
    if (row < 0)
        return; // past the last row: only warp groups (R > 1) have rows to spare
    const void *x = static_cast<const char *>(p.x) + row * p.x_row_stride * element_bytes(p.x_type);
    void *y = static_cast<char *>(p.y) + row * p.y_row_stride * element_bytes(p.y_type);
    r.load(x, p.x_type, p.x_col_stride, -INFINITY); // padding: no maximum, exp() 0

    float partial_max = -INFINITY;
#pragma unroll
    for (int k = 0; k < N; ++k)
#pragma unroll
        for (int e = 0; e < 8; ++e)
            partial_max = fmaxf(partial_max, r.v[k][e]);
    const float row_max = r.max(partial_max, scratch);
    constexpr float kLog2e = 1.4426950408889634f;
    const float shifted_max = row_max * kLog2e;
    float partial_sum = 0.0f;
#pragma unroll
    for (int k = 0; k < N; ++k)
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            const float exp = exp2f(fmaf(r.v[k][e], kLog2e, -shifted_max));
            partial_sum += exp;
            if (!p.log)
                r.v[k][e] = exp;
        }
    const float sum = r.sum(partial_sum, scratch);
    if (p.log) {
        const float shift = row_max + logf(sum);
        r.store(y, p.y_type, p.y_col_stride, [&](int k, int64_t, float (&out)[8]) {
#pragma unroll
            for (int e = 0; e < 8; ++e)
                out[e] = r.v[k][e] - shift;
        });
    } else {
        const float inv_sum = 1.0f / sum;
        r.store(y, p.y_type, p.y_col_stride, [&](int k, int64_t, float (&out)[8]) {
#pragma unroll
            for (int e = 0; e < 8; ++e)
                out[e] = r.v[k][e] * inv_sum;
        });
    }
}

// The packed register path (rows_regs.cuh PackedRow): x's 16-byte pieces
// held as loaded, XT its type; the exponentials are taken again for the
// output rather than held (there are no registers for them).
template <int G, int R, int N, int XT>
__device__ __forceinline__ void softmax_rows_packed(const cdnn_cuda_softmax_params_t &p) {
    using Row = PackedRow<G, R, N, XT>;
    constexpr int kPer = Row::kPer;
    __shared__ float scratch[32];
    Row r;
    const int64_t row = r.start(p.rows, p.cols);
    if (row < 0)
        return;
    const void *x = static_cast<const char *>(p.x) + row * p.x_row_stride * element_bytes(XT);
    void *y = static_cast<char *>(p.y) + row * p.y_row_stride * element_bytes(p.y_type);
    r.load(x, p.x_col_stride, -INFINITY); // padding: no maximum, exp() 0

    float partial_max = -INFINITY;
#pragma unroll
    for (int k = 0; k < N; ++k) {
#pragma unroll
        for (int e = 0; e < kPer; ++e)
            partial_max = fmaxf(partial_max, r.at(k, e, ~0u));
    }
    const float row_max = r.max(partial_max, scratch);
    constexpr float kLog2e = 1.4426950408889634f;
    const float shifted_max = row_max * kLog2e;
    const uint32_t after_max = Row::gate_after(row_max);
    float partial_sum = 0.0f;
#pragma unroll
    for (int k = 0; k < N; ++k) {
#pragma unroll
        for (int e = 0; e < kPer; ++e)
            partial_sum += exp2f(fmaf(r.at(k, e, after_max), kLog2e, -shifted_max));
    }
    const float sum = r.sum(partial_sum, scratch);
    const uint32_t after_sum = Row::gate_after(sum);
    if (p.log) {
        const float shift = row_max + logf(sum);
        r.store(y, p.y_type, p.y_col_stride, [&](int k, int64_t, float (&out)[8]) {
#pragma unroll
            for (int e = 0; e < kPer; ++e)
                out[e] = r.at(k, e, after_sum) - shift;
        });
    } else {
        const float inv_sum = 1.0f / sum;
        r.store(y, p.y_type, p.y_col_stride, [&](int k, int64_t, float (&out)[8]) {
#pragma unroll
            for (int e = 0; e < kPer; ++e)
                out[e] = exp2f(fmaf(r.at(k, e, after_sum), kLog2e, -shifted_max)) * inv_sum;
        });
    }
}

template <int G, int R, int N>
__device__ __forceinline__ void softmax_packed(const cdnn_cuda_softmax_params_t &p) {
    switch (p.x_type) {
    case CDNN_CUDA_BF16: softmax_rows_packed<G, R, N, CDNN_CUDA_BF16>(p); break;
    case CDNN_CUDA_F16: softmax_rows_packed<G, R, N, CDNN_CUDA_F16>(p); break;
    default: softmax_rows_packed<G, R, N, CDNN_CUDA_F32>(p); break;
    }
}

} // namespace
} // namespace cdnn

// The packed register kernels, cdnn_cuda_softmax_packed_NAME (cuda_kernel.h's
// CDNN_CUDA_ROWS_PACKED_CONFIGS).
#define CDNN_SOFTMAX_PACKED(NAME, G, R, N)                                                     \
    extern "C" __global__ void __launch_bounds__(G * R, 1)                                     \
        cdnn_cuda_softmax_packed_##NAME(                                                       \
            const __grid_constant__ cdnn_cuda_softmax_params_t params) {                       \
        cdnn::softmax_packed<G, R, N>(params);                                                 \
    }
CDNN_CUDA_ROWS_PACKED_CONFIGS(CDNN_SOFTMAX_PACKED)
#undef CDNN_SOFTMAX_PACKED

// The register kernels, cdnn_cuda_softmax_regs_NAME (cuda_kernel.h's
// CDNN_CUDA_ROWS_REGS_CONFIGS).
#define CDNN_SOFTMAX_REGS(NAME, G, R, N)                                                        \
    extern "C" __global__ void __launch_bounds__(G * R, 1)                                       \
        cdnn_cuda_softmax_regs_##NAME(const __grid_constant__ cdnn_cuda_softmax_params_t params) { \
        cdnn::softmax_rows_regs<G, R, N>(params);                                               \
    }
CDNN_CUDA_ROWS_REGS_CONFIGS(CDNN_SOFTMAX_REGS)
#undef CDNN_SOFTMAX_REGS

extern "C" __global__ void __launch_bounds__(1024)
    cdnn_cuda_softmax_block(const __grid_constant__ cdnn_cuda_softmax_params_t params) {
    cdnn::softmax_rows<false>(params);
}

extern "C" __global__ void __launch_bounds__(32 * CDNN_CUDA_NORM_WARP_ROWS_PER_BLOCK)
    cdnn_cuda_softmax_warp(const __grid_constant__ cdnn_cuda_softmax_params_t params) {
    cdnn::softmax_rows<true>(params);
}
