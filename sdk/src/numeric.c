#include <cdnn_sdk/numeric.h>

#include <math.h>
#include <string.h>

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float cdnn_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;

    if (exp == 0x1f) /* inf or NaN: keep the payload */
        return bits_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) { /* zero or subnormal: exact as a float product */
        float v = (float)man * 0x1p-24f;
        return sign ? -v : v;
    }
    return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t cdnn_float_to_half(float f)
{
    uint32_t u = float_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t abs = u & 0x7fffffffu;

    if (abs > 0x7f800000u) /* NaN: quiet, keep the top payload bits */
        return (uint16_t)(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
    if (abs >= 0x477ff000u) /* rounds to or beyond 65520: inf */
        return (uint16_t)(sign | 0x7c00u);
    if (abs < 0x38800000u) { /* below the smallest normal half: subnormal */
        /* Scale so that the half's subnormal unit is 1, then let the
         * FPU round to nearest even. */
        float scaled = bits_float(abs) * 0x1p24f;
        return (uint16_t)(sign | (uint16_t)nearbyintf(scaled));
    }
    /* Normal: rebias the exponent, round the 13 dropped bits to even. */
    uint32_t rebased = abs - (112u << 23);
    uint32_t half = rebased >> 13;
    uint32_t rest = rebased & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
        half++;
    return (uint16_t)(sign | half);
}

float cdnn_bf16_to_float(uint16_t b)
{
    return bits_float((uint32_t)b << 16);
}

uint16_t cdnn_float_to_bf16(float f)
{
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it a NaN */
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

/* A float converted to an integer type: truncated toward zero (C's cast),
 * NaN to 0, and a value beyond the type's range (infinities too) to the
 * nearest of its ends, so that no input is undefined behaviour. */
static double truncate_saturate(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

double cdnn_load_element(cdnn_data_type_t t, const void *p)
{
    switch (t) {
    case CDNN_DATA_TYPE_F32: { float v; memcpy(&v, p, 4); return v; }
    case CDNN_DATA_TYPE_F64: { double v; memcpy(&v, p, 8); return v; }
    case CDNN_DATA_TYPE_F16: { uint16_t v; memcpy(&v, p, 2); return cdnn_half_to_float(v); }
    case CDNN_DATA_TYPE_BF16: { uint16_t v; memcpy(&v, p, 2); return cdnn_bf16_to_float(v); }
    case CDNN_DATA_TYPE_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case CDNN_DATA_TYPE_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case CDNN_DATA_TYPE_I8: return *(const int8_t *)p;
    case CDNN_DATA_TYPE_U8: return *(const uint8_t *)p;
    case CDNN_DATA_TYPE_BOOL: return *(const uint8_t *)p != 0;
    default: return NAN;
    }
}

void cdnn_store_element(cdnn_data_type_t t, void *p, double v)
{
    switch (t) {
    case CDNN_DATA_TYPE_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case CDNN_DATA_TYPE_F64: memcpy(p, &v, 8); break;
    case CDNN_DATA_TYPE_F16: { uint16_t h = cdnn_float_to_half((float)v); memcpy(p, &h, 2); break; }
    case CDNN_DATA_TYPE_BF16: { uint16_t b = cdnn_float_to_bf16((float)v); memcpy(p, &b, 2); break; }
    case CDNN_DATA_TYPE_I32: { int32_t i = (int32_t)truncate_saturate(v, INT32_MIN, INT32_MAX); memcpy(p, &i, 4); break; }
    case CDNN_DATA_TYPE_I64: {
        /* 2^63 is not an int64 (the largest double below it is 2^63 -
         * 1024): what reaches it saturates to INT64_MAX itself. */
        double whole = truncate_saturate(v, -0x1p63, 0x1p63);
        int64_t i = whole >= 0x1p63 ? INT64_MAX : (int64_t)whole;
        memcpy(p, &i, 8);
        break;
    }
    case CDNN_DATA_TYPE_I8: *(int8_t *)p = (int8_t)truncate_saturate(v, -128, 127); break;
    case CDNN_DATA_TYPE_U8: *(uint8_t *)p = (uint8_t)truncate_saturate(v, 0, 255); break;
    case CDNN_DATA_TYPE_BOOL: *(uint8_t *)p = v != 0; break;
    default: break;
    }
}

int64_t cdnn_load_element_int(cdnn_data_type_t t, const void *p)
{
    switch (t) {
    case CDNN_DATA_TYPE_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case CDNN_DATA_TYPE_I64: { int64_t v; memcpy(&v, p, 8); return v; }
    case CDNN_DATA_TYPE_I8: return *(const int8_t *)p;
    case CDNN_DATA_TYPE_U8: return *(const uint8_t *)p;
    case CDNN_DATA_TYPE_BOOL: return *(const uint8_t *)p != 0;
    default: {
        /* A float: as a store to i64 converts it. */
        int64_t i;
        cdnn_store_element(CDNN_DATA_TYPE_I64, &i, cdnn_load_element(t, p));
        return i;
    }
    }
}

void cdnn_store_element_int(cdnn_data_type_t t, void *p, int64_t v)
{
    /* Integer types keep v's low bits: the two's complement wrap that C's
     * conversions do on every machine cdnn runs on, written with unsigned
     * arithmetic so that it is defined behaviour. */
    uint64_t bits = (uint64_t)v;
    switch (t) {
    case CDNN_DATA_TYPE_I32: { uint32_t u = (uint32_t)bits; memcpy(p, &u, 4); break; }
    case CDNN_DATA_TYPE_I64: memcpy(p, &bits, 8); break;
    case CDNN_DATA_TYPE_I8:
    case CDNN_DATA_TYPE_U8: *(uint8_t *)p = (uint8_t)bits; break;
    case CDNN_DATA_TYPE_BOOL: *(uint8_t *)p = v != 0; break;
    case CDNN_DATA_TYPE_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case CDNN_DATA_TYPE_F64: { double d = (double)v; memcpy(p, &d, 8); break; }
    default: cdnn_store_element(t, p, (double)(float)v); break; /* f16, bf16 */
    }
}

int cdnn_data_type_is_float(cdnn_data_type_t t)
{
    return t == CDNN_DATA_TYPE_F32 || t == CDNN_DATA_TYPE_F16 ||
           t == CDNN_DATA_TYPE_BF16 || t == CDNN_DATA_TYPE_F64;
}
