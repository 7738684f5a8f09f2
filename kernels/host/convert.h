/*
 * convert.h -- elements of f32, f16 and bf16 tensors to and from f32, one
 * at a time or a strided run at a time.  The kernels compute in f32; these
 * are their only way in and out of tensor memory, so the rules live here:
 * widening is exact, narrowing rounds to nearest even, NaN stays NaN.
 *
 * No libc: the scalar f16 conversions are bit manipulation plus f32
 * arithmetic that rounds the way the format needs (the float-scaling
 * method of the FP16 library by M. Dukhan), so that the v2 objects, which
 * have no F16C, convert exactly as the hardware does.
 */
#ifndef CDNN_HOST_CONVERT_H
#define CDNN_HOST_CONVERT_H

#include <stdint.h>

#include "host_kernel.h"
#include "vec.h"

HK_INLINE uint32_t hk_bits(float f)
{
    union { float f; uint32_t u; } v = {.f = f};
    return v.u;
}

HK_INLINE float hk_float(uint32_t u)
{
    union { uint32_t u; float f; } v = {.u = u};
    return v.f;
}

HK_INLINE float hk_f16_to_f32(uint16_t h)
{
    uint32_t w = (uint32_t)h << 16;
    uint32_t sign = w & 0x80000000u;
    uint32_t two_w = w + w;
    /* normal (and inf/NaN): move the exponent, then rescale by 2^-112 */
    float normal = hk_float((two_w >> 4) + (0xe0u << 23)) * 0x1p-112f;
    /* subnormal: the mantissa as the low bits of 0.5's, minus 0.5 */
    float subnormal = hk_float((two_w >> 17) | (126u << 23)) - 0.5f;
    uint32_t magnitude = two_w < (1u << 27) ? hk_bits(subnormal)
                                            : hk_bits(normal);
    return hk_float(sign | magnitude);
}

HK_INLINE uint16_t hk_f32_to_f16(float f)
{
    uint32_t w = hk_bits(f);
    uint32_t shl1_w = w + w;
    uint32_t sign = w & 0x80000000u;
    /* scaling up then down rounds away the bits f16 cannot hold, and
     * overflows to inf where f16 would */
    float base = (hk_float(w & 0x7fffffffu) * 0x1p+112f) * 0x1p-110f;
    uint32_t bias = shl1_w & 0xff000000u;
    if (bias < 0x71000000u)
        bias = 0x71000000u;
    base = hk_float((bias >> 1) + 0x07800000u) + base;
    uint32_t bits = hk_bits(base);
    uint32_t nonsign = ((bits >> 13) & 0x7c00u) + (bits & 0x0fffu);
    return (uint16_t)((sign >> 16) |
                      (shl1_w > 0xff000000u ? 0x7e00u : nonsign));
}

HK_INLINE float hk_bf16_to_f32(uint16_t h) { return hk_float((uint32_t)h << 16); }

HK_INLINE uint16_t hk_f32_to_bf16(float f)
{
    uint32_t w = hk_bits(f);
    if ((w & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((w >> 16) | 0x40u);
    return (uint16_t)((w + 0x7fffu + ((w >> 16) & 1u)) >> 16);
}

#ifdef HK_NO_F16C_VECTOR
/* x86-64-v2 has no F16C: a vector of halves, one lane at a time */
HK_INLINE vf vload_f16(const uint16_t *p)
{
    float lanes[HK_VL];
    for (int i = 0; i < HK_VL; i++)
        lanes[i] = hk_f16_to_f32(p[i]);
    return vload(lanes);
}
HK_INLINE void vstore_f16(uint16_t *p, vf x)
{
    float lanes[HK_VL];
    vstore(lanes, x);
    for (int i = 0; i < HK_VL; i++)
        p[i] = hk_f32_to_f16(lanes[i]);
}
#endif

/* Element `index` (in elements, already times the stride) of a tensor. */
HK_INLINE float hk_load1(int32_t type, const void *base, int64_t index)
{
    if (type == CDNN_HOST_F32)
        return ((const float *)base)[index];
    uint16_t h = ((const uint16_t *)base)[index];
    return type == CDNN_HOST_F16 ? hk_f16_to_f32(h) : hk_bf16_to_f32(h);
}

HK_INLINE void hk_store1(int32_t type, void *base, int64_t index, float v)
{
    if (type == CDNN_HOST_F32)
        ((float *)base)[index] = v;
    else if (type == CDNN_HOST_F16)
        ((uint16_t *)base)[index] = hk_f32_to_f16(v);
    else
        ((uint16_t *)base)[index] = hk_f32_to_bf16(v);
}

/* One vector of a packed run of `type`, widened. */
HK_INLINE vf hk_vload_typed(int32_t type, const void *p)
{
    if (type == CDNN_HOST_F32)
        return vload((const float *)p);
    return type == CDNN_HOST_F16 ? vload_f16((const uint16_t *)p)
                                 : vload_bf16((const uint16_t *)p);
}

HK_INLINE void hk_vstore_typed(int32_t type, void *p, vf x)
{
    if (type == CDNN_HOST_F32)
        vstore((float *)p, x);
    else if (type == CDNN_HOST_F16)
        vstore_f16((uint16_t *)p, x);
    else
        vstore_bf16((uint16_t *)p, x);
}

HK_INLINE int64_t hk_type_size(int32_t type)
{
    return type == CDNN_HOST_F32 ? 4 : 2;
}

HK_INLINE const void *hk_at(const void *base, int32_t type, int64_t index)
{
    return (const char *)base + index * hk_type_size(type);
}

HK_INLINE void *hk_at_mut(void *base, int32_t type, int64_t index)
{
    return (char *)base + index * hk_type_size(type);
}

/* n elements at base, stride apart, into dst (f32, packed). */
static inline void hk_load_run(int32_t type, const void *base, int64_t stride,
                               int64_t n, float *dst)
{
    int64_t i = 0;
    if (stride == 1)
        for (; i + HK_VL <= n; i += HK_VL)
            vstore(dst + i, hk_vload_typed(type, hk_at(base, type, i)));
    if (stride == 0 && n > 0) {
        vf v = vset1(hk_load1(type, base, 0));
        for (; i + HK_VL <= n; i += HK_VL)
            vstore(dst + i, v);
    }
    for (; i < n; i++)
        dst[i] = hk_load1(type, base, i * stride);
}

/* n f32 values from src into the tensor at base, stride apart. */
static inline void hk_store_run(int32_t type, void *base, int64_t stride,
                                int64_t n, const float *src)
{
    int64_t i = 0;
    if (stride == 1)
        for (; i + HK_VL <= n; i += HK_VL)
            hk_vstore_typed(type, hk_at_mut(base, type, i), vload(src + i));
    for (; i < n; i++)
        hk_store1(type, base, i * stride, src[i]);
}

HK_INLINE int hk_type_ok(int32_t type)
{
    return type == CDNN_HOST_F32 || type == CDNN_HOST_F16 ||
           type == CDNN_HOST_BF16;
}

#endif /* CDNN_HOST_CONVERT_H */
