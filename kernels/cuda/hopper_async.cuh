// hopper_async.cuh -- the Hopper (sm_90a) primitives that the wgmma kernels
// share: shared-memory addresses, mbarriers, bulk tensor copies (TMA, also
// multicast to a cluster), cluster barriers, and wgmma's fences and
// shared-memory descriptors.  One copy, so that the GEMM
// (wgmma_gemm.cuh: matmul_wgmma.cu, conv_wgmma.cu) and flash attention
// (sdpa_wgmma.cu) cannot drift apart in how they wait on a barrier.
#ifndef CDNN_KERNELS_CUDA_HOPPER_ASYNC_CUH
#define CDNN_KERNELS_CUDA_HOPPER_ASYNC_CUH
#include <stdint.h>

#include "cuda_kernel.h"

namespace cdnn {
namespace {

__device__ __forceinline__ uint32_t smem_address(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarriers ----------------------------------------------------------------------------

__device__ __forceinline__ void barrier_init(uint32_t bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

// Arrive and announce `bytes` of TMA traffic that will complete this phase.
__device__ __forceinline__ void barrier_expect_bytes(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void barrier_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Wait until the phase of parity `parity` has completed.
__device__ __forceinline__ void barrier_wait(uint32_t bar, uint32_t parity) {
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "wait_again:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait_again;\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

// ---- TMA ----------------------------------------------------------------------------------

// The box of a 3-d `map` at (c0, c1, c2) into shared memory at dst;
// completes its bytes on bar.
__device__ __forceinline__ void tma_load(uint32_t dst, const cdnn_cuda_tensor_map_t *map,
                                         uint32_t bar, int32_t c0, int32_t c1, int32_t c2) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

// The box of a 4-d `map` at (c0, c1, c2, c3), likewise.
__device__ __forceinline__ void tma_load(uint32_t dst, const cdnn_cuda_tensor_map_t *map,
                                         uint32_t bar, int32_t c0, int32_t c1, int32_t c2,
                                         int32_t c3) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2),
                 "r"(c3)
                 : "memory");
}

__device__ __forceinline__ void tma_prefetch_map(const cdnn_cuda_tensor_map_t *map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// The box of shared memory at src to a 3-d `map` at (c0, c1, c2): a bulk
// store, which the copy engine clips to the tensor's bounds.  Completes in
// the thread's bulk group once committed.
__device__ __forceinline__ void tma_store_3d(const cdnn_cuda_tensor_map_t *map, uint32_t src,
                                             int32_t c0, int32_t c1, int32_t c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                 ::"l"(reinterpret_cast<uint64_t>(map)), "r"(src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() {
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// All but the `Pending` most recently committed store groups have read
// their shared memory (not yet landed), so it may be rewritten.
template <int Pending>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
}
// The committed stores are done.
__device__ __forceinline__ void bulk_wait_all() {
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
// Orders this thread's shared-memory writes before the async proxy's (the
// copy engine's, wgmma's) reads of them.
__device__ __forceinline__ void fence_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---- clusters ----------------------------------------------------------------------------

// As tma_load, but the box lands at the same offset dst in the shared
// memory of every block of the cluster named in `mask` (bit r: rank r),
// completing its bytes on each one's mbarrier at offset bar.  One read of
// L2 feeds them all.
__device__ __forceinline__ void tma_load_multicast(uint32_t dst, const cdnn_cuda_tensor_map_t *map,
                                                   uint32_t bar, int32_t c0, int32_t c1,
                                                   int32_t c2, uint16_t mask) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2),
                 "h"(mask)
                 : "memory");
}

// Arrive on the mbarrier at offset bar of the cluster's block `rank`
// (this block's own, or its partner's), with the default (cta-scope)
// release: a cluster-scope release made each consumer warp wait at every
// k step (v5's first run: the cluster kernels ran at 0.65x).
__device__ __forceinline__ void barrier_arrive_cluster(uint32_t bar, uint32_t rank) {
    asm volatile("{\n"
                 ".reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
                 "}\n" ::"r"(bar),
                 "r"(rank)
                 : "memory");
}

// Every thread of every block of the cluster (not .aligned: the producer
// warp's lanes arrive apart).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\n"
                 "barrier.cluster.wait.acquire;\n" ::
                     : "memory");
}

// ---- wgmma --------------------------------------------------------------------------------

// A shared-memory matrix descriptor with the 128-byte swizzle: start
// address, leading and stride byte offsets (all in 16-byte units).
__device__ __forceinline__ uint64_t smem_descriptor(uint32_t address, uint32_t leading,
                                                   uint32_t stride) {
    return uint64_t((address & 0x3FFFF) >> 4) | (uint64_t(leading >> 4) << 16) |
           (uint64_t(stride >> 4) << 32) | (uint64_t(1) << 62);
}

__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// Keeps the compiler from reading (or moving) an accumulator across the
// wgmma wait before it: the register is "written" here, after the wait.
template <int N>
__device__ __forceinline__ void fence_registers(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fence_registers(uint32_t (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+r"(d[i])::"memory");
}

} // namespace
} // namespace cdnn

#endif
