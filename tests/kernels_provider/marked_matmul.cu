// marked_matmul.cu -- a "cuda-matmul-v1" kernel whose every output is the
// product plus MARK (added before the epilogue), so that a test can tell
// from the output alone which build of it ran: a plan saved against a pack
// holding the MARK=1 build must keep running that build after the pack is
// replaced by the MARK=2 one (docs/CONTRACT.md rule 2), on the GPU as on
// the host (marked_matmul.c).
//
// Naive: one thread per element of C, a 16 x 16 tile per block of 256
// threads (metadata tile_m=16, tile_n=16, threads=256, smem=0).  What it
// proves is which code ran, not speed.
#include "matmul_epilogue.cuh"

#ifndef MARK
#error "build with -DMARK=<value added to every product>"
#endif

extern "C" __global__ void __launch_bounds__(256)
    cdnn_cuda_marked_matmul(const __grid_constant__ cdnn_cuda_matmul_params_t p) {
    const int64_t batch = blockIdx.z;
    const int64_t row = int64_t(blockIdx.y) * 16 + threadIdx.x / 16;
    const int64_t col = int64_t(blockIdx.x) * 16 + threadIdx.x % 16;
    if (row >= p.m || col >= p.n)
        return;
    float acc = 0.0f;
    for (int64_t k = 0; k < p.k; ++k)
        acc += cdnn::load_as_f32(p.a, batch * p.a_batch_stride + row * p.a_row_stride +
                                          k * p.a_col_stride, p.a_type) *
               cdnn::load_as_f32(p.b, batch * p.b_batch_stride + k * p.b_row_stride +
                                          col * p.b_col_stride, p.b_type);
    cdnn::finish_element(p, batch, row, col, acc + float(MARK));
}
