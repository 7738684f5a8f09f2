// common.cuh -- device helpers shared by cdnn's CUDA kernels: element
// loads and stores by run-time type, the activations, warp reductions.
//
// Everything computes in f32: f16 and bf16 are storage types here.  The
// math stays within a few f32 ulps (of max(1, |x|)) of an f64 reference:
// CUDA's accurate functions (tanhf, expf; no --use_fast_math), except where
// a form of our own reaches that accuracy in fewer instructions (the
// logistic and the two gelus below), which a fused epilogue pays for with
// its tensor cores idle.
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

// 1 / (1 + 2^t) from ex2.approx (2 ulps) and rcp.approx (1 ulp): within
// ~3 ulps wherever the result is a normal f32; 0 where 2^t overflows.
// About 4 instructions, against ~25 for expf and an IEEE division.
__device__ __forceinline__ float logistic_exp2(float t) {
    return __fdividef(1.0f, 1.0f + exp2f(t));
}

constexpr float kLog2E = 1.44269504088896341f;

__device__ __forceinline__ float sigmoid(float x) { return logistic_exp2(-kLog2E * x); }

// x Phi(x) = max(x, 0) - |x| Phi(-|x|), with log2 Phi(-u) = -1 + u q(u) for
// u = min(|x|, 16), q of degree 5 (weighted minimax: fit_gelu_erf.py; q(16)
// sends 2^... to exactly 0, so the result is exactly x or +0 past 16).  No
// branch and no select: 7 FFMA, 1 MUFU.EX2, 2 FMNMX, against erff's ~20
// with its selects.  Within 1.3e-7 max(1, |x|) of the f64 value over every
// f32 (an exhaustive run on an H100; erff's form: 1.1e-7), no 1 + erf
// cancellation below 0; inf -> inf, -inf -> +0, NaN -> NaN (max.NaN: sm_80
// and later, every target here).
__device__ __forceinline__ float gelu_erf(float x) {
    const float u = fminf(fabsf(x), 16.0f);
    float p = 0x1.af1046p-16f;
    p = fmaf(p, u, -0x1.73524p-11f);
    p = fmaf(p, u, 0x1.02983p-7f);
    p = fmaf(p, u, -0x1.b3471ep-5f);
    p = fmaf(p, u, -0x1.d5fc5p-2f);
    p = fmaf(p, u, -0x1.26b0fp+0f);
    p = fmaf(p, u, -1.0f);
    float tail, relu; // Phi(-|x|); max(x, 0) keeping a NaN
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(tail) : "f"(p));
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(relu) : "f"(x), "f"(0.0f));
    return fmaf(-u, tail, relu);
}

// 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2 / pi) (x + 0.044715 x^3):
// within ~2 ulps of max(1, |x|) of the f64 value (tanhf's form: ~1 ulp, at
// 2.5x the instructions).
__device__ __forceinline__ float gelu_tanh(float x) {
    constexpr float k = -2.0f * 0.79788456080286536f * kLog2E; // -2 sqrt(2 / pi) log2(e)
    return x * logistic_exp2(x * fmaf(x * x, k * 0.044715f, k));
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
