// matmul_epilogue.cuh -- the fused epilogue of "cuda-matmul-v1", shared by
// the tensor-core and the f32 kernels so that both compute the same
// function: bias, activation, residual, cast, store.
#ifndef CDNN_KERNELS_CUDA_MATMUL_EPILOGUE_CUH
#define CDNN_KERNELS_CUDA_MATMUL_EPILOGUE_CUH

#include "common.cuh"

namespace cdnn {

// C[batch, row, col] = cast(residual + activate(value + bias)), for an
// element inside C (one outside the matrix is ignored).
__device__ __forceinline__ void finish_element(const cdnn_cuda_matmul_params_t &p, int64_t batch,
                                               int64_t row, int64_t col, float value) {
    if (row >= p.m || col >= p.n)
        return;
    if (p.bias)
        value += load_as_f32(p.bias, col * p.bias_stride, p.bias_type);
    value = activate(value, p.activation);
    if (p.residual)
        value += load_as_f32(p.residual,
                             batch * p.res_batch_stride + row * p.res_row_stride +
                                 col * p.res_col_stride,
                             p.res_type);
    store_from_f32(p.c, batch * p.c_batch_stride + row * p.c_row_stride + col * p.c_col_stride,
                   p.c_type, value);
}

// The same, out of line: for kernels that finish many accumulators from
// registers, where inlining the activations at each would bloat the code.
__device__ __noinline__ void finish_element_out_of_line(const cdnn_cuda_matmul_params_t &p,
                                                        int64_t batch, int64_t row, int64_t col,
                                                        float value) {
    finish_element(p, batch, row, col, value);
}

} // namespace cdnn

#endif
