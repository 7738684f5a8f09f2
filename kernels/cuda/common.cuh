// common.cuh -- device helpers shared by cdnn's CUDA kernels: element
// loads and stores by run-time type, the activations, warp reductions.
//
// Everything computes in f32: f16 and bf16 are storage types here.  The
// math functions are CUDA's accurate ones (erff, tanhf, expf; no
// --use_fast_math), so that these correctness-first kernels stay within a
// few f32 ulps of an f64 reference.
#ifndef CDNN_KERNELS_CUDA_COMMON_CUH
#define CDNN_KERNELS_CUDA_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "cuda_kernel.h"

namespace cdnn {

// The element of run-time type `type` at `base[index]`, as f32.
__device__ __forceinline__ float load_as_f32(const void *base, int64_t index, int32_t type) {
    switch (type) {
    case CDNN_CUDA_F16:
        return __half2float(static_cast<const __half *>(base)[index]);
    case CDNN_CUDA_BF16:
        return __bfloat162float(static_cast<const __nv_bfloat16 *>(base)[index]);
    default:
        return static_cast<const float *>(base)[index];
    }
}

// Store v, rounded to nearest even, as run-time type `type` at base[index].
__device__ __forceinline__ void store_from_f32(void *base, int64_t index, int32_t type, float v) {
    switch (type) {
    case CDNN_CUDA_F16:
        static_cast<__half *>(base)[index] = __float2half_rn(v);
        break;
    case CDNN_CUDA_BF16:
        static_cast<__nv_bfloat16 *>(base)[index] = __float2bfloat16_rn(v);
        break;
    default:
        static_cast<float *>(base)[index] = v;
        break;
    }
}

__device__ __forceinline__ int element_bytes(int32_t type) {
    return type == CDNN_CUDA_F32 ? 4 : 2;
}

__device__ __forceinline__ bool aligned16(const void *p) {
    return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
}

// 16 bytes holding 16 / element_bytes(type) elements, unpacked to f32.
// Returns how many elements it wrote to out (4 or 8).
__device__ __forceinline__ int unpack16(uint4 raw, int32_t type, float *out) {
    if (type == CDNN_CUDA_F32) {
        out[0] = __uint_as_float(raw.x);
        out[1] = __uint_as_float(raw.y);
        out[2] = __uint_as_float(raw.z);
        out[3] = __uint_as_float(raw.w);
        return 4;
    }
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const unsigned short lo = static_cast<unsigned short>(words[i] & 0xffffu);
        const unsigned short hi = static_cast<unsigned short>(words[i] >> 16);
        if (type == CDNN_CUDA_F16) {
            out[2 * i] = __half2float(__ushort_as_half(lo));
            out[2 * i + 1] = __half2float(__ushort_as_half(hi));
        } else {
            out[2 * i] = __bfloat162float(__ushort_as_bfloat16(lo));
            out[2 * i + 1] = __bfloat162float(__ushort_as_bfloat16(hi));
        }
    }
    return 8;
}

// The inverse of unpack16: 16 / element_bytes(type) values packed into 16 bytes.
__device__ __forceinline__ uint4 pack16(const float *v, int32_t type) {
    if (type == CDNN_CUDA_F32)
        return make_uint4(__float_as_uint(v[0]), __float_as_uint(v[1]), __float_as_uint(v[2]),
                          __float_as_uint(v[3]));
    uint32_t words[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        unsigned short lo, hi;
        if (type == CDNN_CUDA_F16) {
            lo = __half_as_ushort(__float2half_rn(v[2 * i]));
            hi = __half_as_ushort(__float2half_rn(v[2 * i + 1]));
        } else {
            lo = __bfloat16_as_ushort(__float2bfloat16_rn(v[2 * i]));
            hi = __bfloat16_as_ushort(__float2bfloat16_rn(v[2 * i + 1]));
        }
        words[i] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
    }
    return make_uint4(words[0], words[1], words[2], words[3]);
}

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ __forceinline__ float gelu_erf(float x) {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

__device__ __forceinline__ float gelu_tanh(float x) {
    const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanhf(inner));
}

// CDNN_CUDA_ACT_*: the activation of a fused epilogue.
__device__ __forceinline__ float activate(float x, int32_t activation) {
    switch (activation) {
    case CDNN_CUDA_ACT_RELU:
        return fmaxf(x, 0.0f);
    case CDNN_CUDA_ACT_GELU:
        return gelu_erf(x);
    case CDNN_CUDA_ACT_GELU_TANH:
        return gelu_tanh(x);
    case CDNN_CUDA_ACT_SILU:
        return x * sigmoid(x);
    case CDNN_CUDA_ACT_TANH:
        return tanhf(x);
    default:
        return x;
    }
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

// The sum (or max) of v over the block; every thread gets it.  `scratch`
// holds 32 floats of shared memory; the call is a block-wide barrier.
template <bool IsMax>
__device__ __forceinline__ float block_reduce(float v, float *scratch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = (blockDim.x + 31) >> 5;
    v = IsMax ? warp_max(v) : warp_sum(v);
    __syncthreads(); // scratch may still be read by a previous reduction
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    float total = lane < warps ? scratch[lane] : (IsMax ? -INFINITY : 0.0f);
    return IsMax ? warp_max(total) : warp_sum(total);
}

} // namespace cdnn

#endif
