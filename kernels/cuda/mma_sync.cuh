// mma_sync.cuh -- the Ampere-style tensor-core building blocks (cp.async,
// ldmatrix, mma.sync m16n8k16 with f32 accumulators) as inline PTX, for
// kernels that stage tiles through shared memory (conv.cu).  They run on
// sm_80 and newer, sm_90 included (where wgmma is faster: issue 11).
#ifndef CDNN_KERNELS_CUDA_MMA_SYNC_CUH
#define CDNN_KERNELS_CUDA_MMA_SYNC_CUH

#include "common.cuh"

namespace cdnn {
namespace tc {

__device__ __forceinline__ uint32_t shared_address(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared memory, asynchronously, bypassing L1.
__device__ __forceinline__ void copy16_async(void *dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(dst)),
                 "l"(src));
}

__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }

// Wait until at most `Pending` groups of copies are still in flight.
template <int Pending>
__device__ __forceinline__ void wait_copies() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

__device__ __forceinline__ void zero16(void *dst) {
    *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
}

__device__ __forceinline__ void load_matrix_x4(uint32_t (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p)));
}

// d += a (16x16, row) * b (16x8, col), f32 accumulators; DType is
// CDNN_CUDA_F16 or CDNN_CUDA_BF16.
template <int DType>
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                            uint32_t b1) {
    if (DType == CDNN_CUDA_F16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

} // namespace tc
} // namespace cdnn

#endif
