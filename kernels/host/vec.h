/*
 * vec.h -- one vector vocabulary over the three ISA levels the host
 * kernels are built for, so that each kernel is written once:
 *   x86-64-v4: __m512 (16 floats), 32 registers, mask registers
 *   x86-64-v3: __m256 (8 floats), FMA, F16C
 *   x86-64-v2: __m128 (4 floats), SSE4.2, no FMA (fma = mul + add)
 * The level is the compiler's -march; nothing here tests the CPU.
 *
 * vf is a float vector, vi an int32 vector, vm a lane mask (a compare's
 * result).  Every function is static inline: the objects export nothing
 * but their entries.
 */
#ifndef CDNN_HOST_VEC_H
#define CDNN_HOST_VEC_H

#include <immintrin.h>
#include <stdint.h>

#define HK_INLINE static inline __attribute__((always_inline))

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
#define HK_VL 16
#define HK_REGISTERS 32
#define HK_HAS_FMA 1
typedef __m512 vf;
typedef __m512i vi;
typedef __mmask16 vm;
HK_INLINE vf vzero(void) { return _mm512_setzero_ps(); }
HK_INLINE vf vset1(float x) { return _mm512_set1_ps(x); }
HK_INLINE vf vload(const float *p) { return _mm512_loadu_ps(p); }
HK_INLINE void vstore(float *p, vf x) { _mm512_storeu_ps(p, x); }
HK_INLINE vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
HK_INLINE vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
HK_INLINE vf vmul(vf a, vf b) { return _mm512_mul_ps(a, b); }
HK_INLINE vf vdiv(vf a, vf b) { return _mm512_div_ps(a, b); }
HK_INLINE vf vfma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
HK_INLINE vf vfnma(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }
/* max/min with SSE semantics: the second operand when either is NaN */
HK_INLINE vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
HK_INLINE vf vmin(vf a, vf b) { return _mm512_min_ps(a, b); }
HK_INLINE vf vsqrt(vf a) { return _mm512_sqrt_ps(a); }
/* 1/a to 2^-14: the seed of vrecip below */
HK_INLINE vf vrcp_seed(vf a) { return _mm512_rcp14_ps(a); }
HK_INLINE vf vround(vf a)
{
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT |
                                       _MM_FROUND_NO_EXC);
}
HK_INLINE vm vlt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
HK_INLINE vm vle(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
HK_INLINE vm veq(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
HK_INLINE vm visnan(vf a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
/* m ? a : b, lane by lane */
HK_INLINE vf vselect(vm m, vf a, vf b) { return _mm512_mask_blend_ps(m, b, a); }
HK_INLINE vi vcvt_round(vf a) { return _mm512_cvtps_epi32(a); }
HK_INLINE vf vcvt_int(vi a) { return _mm512_cvtepi32_ps(a); }
HK_INLINE vi vi_set1(int32_t x) { return _mm512_set1_epi32(x); }
HK_INLINE vi vi_add(vi a, vi b) { return _mm512_add_epi32(a, b); }
HK_INLINE vi vi_sub(vi a, vi b) { return _mm512_sub_epi32(a, b); }
HK_INLINE vi vi_and(vi a, vi b) { return _mm512_and_si512(a, b); }
HK_INLINE vi vi_or(vi a, vi b) { return _mm512_or_si512(a, b); }
HK_INLINE vi vi_sra(vi a, int n) { return _mm512_srai_epi32(a, (unsigned)n); }
HK_INLINE vi vi_srl(vi a, int n) { return _mm512_srli_epi32(a, (unsigned)n); }
HK_INLINE vi vi_sll(vi a, int n) { return _mm512_slli_epi32(a, (unsigned)n); }
HK_INLINE vi vbits(vf a) { return _mm512_castps_si512(a); }
HK_INLINE vf vfloat(vi a) { return _mm512_castsi512_ps(a); }
HK_INLINE float vhsum(vf a) { return _mm512_reduce_add_ps(a); }
HK_INLINE float vhmax(vf a) { return _mm512_reduce_max_ps(a); }
HK_INLINE float vhmin(vf a) { return _mm512_reduce_min_ps(a); }
HK_INLINE float vhmul(vf a) { return _mm512_reduce_mul_ps(a); }
/* HK_VL halves widened to floats, and floats rounded to halves (RNE) */
HK_INLINE vf vload_f16(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
HK_INLINE void vstore_f16(uint16_t *p, vf x)
{
    _mm256_storeu_si256((__m256i *)p,
                        _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT |
                                               _MM_FROUND_NO_EXC));
}
HK_INLINE vi vload_u16(const uint16_t *p)
{
    return _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
}
HK_INLINE void vstore_u16(uint16_t *p, vi x)
{
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(x));
}

#elif defined(__AVX2__) && defined(__FMA__)
#define HK_VL 8
#define HK_REGISTERS 16
#define HK_HAS_FMA 1
typedef __m256 vf;
typedef __m256i vi;
typedef __m256 vm;
HK_INLINE vf vzero(void) { return _mm256_setzero_ps(); }
HK_INLINE vf vset1(float x) { return _mm256_set1_ps(x); }
HK_INLINE vf vload(const float *p) { return _mm256_loadu_ps(p); }
HK_INLINE void vstore(float *p, vf x) { _mm256_storeu_ps(p, x); }
HK_INLINE vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
HK_INLINE vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
HK_INLINE vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
HK_INLINE vf vdiv(vf a, vf b) { return _mm256_div_ps(a, b); }
HK_INLINE vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
HK_INLINE vf vfnma(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
HK_INLINE vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
HK_INLINE vf vmin(vf a, vf b) { return _mm256_min_ps(a, b); }
HK_INLINE vf vsqrt(vf a) { return _mm256_sqrt_ps(a); }
HK_INLINE vf vrcp_seed(vf a) { return _mm256_rcp_ps(a); } /* to 1.5 * 2^-12 */
HK_INLINE vf vround(vf a)
{
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
HK_INLINE vm vlt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
HK_INLINE vm vle(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
HK_INLINE vm veq(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
HK_INLINE vm visnan(vf a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
HK_INLINE vf vselect(vm m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }
HK_INLINE vi vcvt_round(vf a) { return _mm256_cvtps_epi32(a); }
HK_INLINE vf vcvt_int(vi a) { return _mm256_cvtepi32_ps(a); }
HK_INLINE vi vi_set1(int32_t x) { return _mm256_set1_epi32(x); }
HK_INLINE vi vi_add(vi a, vi b) { return _mm256_add_epi32(a, b); }
HK_INLINE vi vi_sub(vi a, vi b) { return _mm256_sub_epi32(a, b); }
HK_INLINE vi vi_and(vi a, vi b) { return _mm256_and_si256(a, b); }
HK_INLINE vi vi_or(vi a, vi b) { return _mm256_or_si256(a, b); }
HK_INLINE vi vi_sra(vi a, int n) { return _mm256_srai_epi32(a, n); }
HK_INLINE vi vi_srl(vi a, int n) { return _mm256_srli_epi32(a, n); }
HK_INLINE vi vi_sll(vi a, int n) { return _mm256_slli_epi32(a, n); }
HK_INLINE vi vbits(vf a) { return _mm256_castps_si256(a); }
HK_INLINE vf vfloat(vi a) { return _mm256_castsi256_ps(a); }
HK_INLINE __m128 vhalf_fold(vf a)
{
    return _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
}
HK_INLINE float vhsum(vf a)
{
    __m128 s = vhalf_fold(a);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
HK_INLINE float vhmax(vf a)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a),
                          _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
HK_INLINE float vhmin(vf a)
{
    __m128 s = _mm_min_ps(_mm256_castps256_ps128(a),
                          _mm256_extractf128_ps(a, 1));
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    s = _mm_min_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
HK_INLINE float vhmul(vf a)
{
    __m128 s = _mm_mul_ps(_mm256_castps256_ps128(a),
                          _mm256_extractf128_ps(a, 1));
    s = _mm_mul_ps(s, _mm_movehl_ps(s, s));
    s = _mm_mul_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
HK_INLINE vf vload_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
HK_INLINE void vstore_f16(uint16_t *p, vf x)
{
    _mm_storeu_si128((__m128i *)p,
                     _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT |
                                            _MM_FROUND_NO_EXC));
}
HK_INLINE vi vload_u16(const uint16_t *p)
{
    return _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
}
HK_INLINE void vstore_u16(uint16_t *p, vi x)
{
    /* the low halves of the eight lanes, in order (packus would saturate
     * and interleave the 128-bit halves) */
    const __m256i pick = _mm256_setr_epi8(
        0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,
        0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
    __m256i packed = _mm256_shuffle_epi8(x, pick);
    packed = _mm256_permute4x64_epi64(packed, 0x08);
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(packed));
}

#elif defined(__SSE4_2__)
#define HK_VL 4
#define HK_REGISTERS 16
#define HK_HAS_FMA 0
#define HK_NO_F16C_VECTOR 1
typedef __m128 vf;
typedef __m128i vi;
typedef __m128 vm;
HK_INLINE vf vzero(void) { return _mm_setzero_ps(); }
HK_INLINE vf vset1(float x) { return _mm_set1_ps(x); }
HK_INLINE vf vload(const float *p) { return _mm_loadu_ps(p); }
HK_INLINE void vstore(float *p, vf x) { _mm_storeu_ps(p, x); }
HK_INLINE vf vadd(vf a, vf b) { return _mm_add_ps(a, b); }
HK_INLINE vf vsub(vf a, vf b) { return _mm_sub_ps(a, b); }
HK_INLINE vf vmul(vf a, vf b) { return _mm_mul_ps(a, b); }
HK_INLINE vf vdiv(vf a, vf b) { return _mm_div_ps(a, b); }
/* no FMA on this level: two roundings */
HK_INLINE vf vfma(vf a, vf b, vf c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
HK_INLINE vf vfnma(vf a, vf b, vf c) { return _mm_sub_ps(c, _mm_mul_ps(a, b)); }
HK_INLINE vf vmax(vf a, vf b) { return _mm_max_ps(a, b); }
HK_INLINE vf vmin(vf a, vf b) { return _mm_min_ps(a, b); }
HK_INLINE vf vsqrt(vf a) { return _mm_sqrt_ps(a); }
HK_INLINE vf vrcp_seed(vf a) { return _mm_rcp_ps(a); } /* to 1.5 * 2^-12 */
HK_INLINE vf vround(vf a)
{
    return _mm_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
HK_INLINE vm vlt(vf a, vf b) { return _mm_cmplt_ps(a, b); }
HK_INLINE vm vle(vf a, vf b) { return _mm_cmple_ps(a, b); }
HK_INLINE vm veq(vf a, vf b) { return _mm_cmpeq_ps(a, b); }
HK_INLINE vm visnan(vf a) { return _mm_cmpunord_ps(a, a); }
HK_INLINE vf vselect(vm m, vf a, vf b) { return _mm_blendv_ps(b, a, m); }
HK_INLINE vi vcvt_round(vf a) { return _mm_cvtps_epi32(a); }
HK_INLINE vf vcvt_int(vi a) { return _mm_cvtepi32_ps(a); }
HK_INLINE vi vi_set1(int32_t x) { return _mm_set1_epi32(x); }
HK_INLINE vi vi_add(vi a, vi b) { return _mm_add_epi32(a, b); }
HK_INLINE vi vi_sub(vi a, vi b) { return _mm_sub_epi32(a, b); }
HK_INLINE vi vi_and(vi a, vi b) { return _mm_and_si128(a, b); }
HK_INLINE vi vi_or(vi a, vi b) { return _mm_or_si128(a, b); }
HK_INLINE vi vi_sra(vi a, int n) { return _mm_srai_epi32(a, n); }
HK_INLINE vi vi_srl(vi a, int n) { return _mm_srli_epi32(a, n); }
HK_INLINE vi vi_sll(vi a, int n) { return _mm_slli_epi32(a, n); }
HK_INLINE vi vbits(vf a) { return _mm_castps_si128(a); }
HK_INLINE vf vfloat(vi a) { return _mm_castsi128_ps(a); }
HK_INLINE float vhsum(vf s)
{
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
HK_INLINE float vhmax(vf s)
{
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
HK_INLINE float vhmin(vf s)
{
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    s = _mm_min_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
HK_INLINE float vhmul(vf s)
{
    s = _mm_mul_ps(s, _mm_movehl_ps(s, s));
    s = _mm_mul_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
HK_INLINE vi vload_u16(const uint16_t *p)
{
    return _mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i *)p));
}
HK_INLINE void vstore_u16(uint16_t *p, vi x)
{
    const __m128i pick = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1,
                                       -1, -1, -1, -1, -1);
    _mm_storel_epi64((__m128i *)p, _mm_shuffle_epi8(x, pick));
}

#else
#error "host kernels need -march=x86-64-v2, x86-64-v3 or x86-64-v4"
#endif

HK_INLINE vf vabs(vf a)
{
    return vfloat(vi_and(vbits(a), vi_set1(0x7fffffff)));
}

HK_INLINE vf vneg(vf a) { return vsub(vzero(), a); }

/* 1/a for normal, finite a: the seed and one Newton step, to ~2^-23
 * relative -- where a division's 10-20 cycles of throughput matter more
 * than its last bit. */
HK_INLINE vf vrecip(vf a)
{
    vf r = vrcp_seed(a);
    return vfma(vfnma(a, r, vset1(1.0f)), r, r);
}

/* max and min that return the other operand when one is NaN (fmaxf) */
HK_INLINE vf vmax_num(vf a, vf b) { return vselect(visnan(b), a, vmax(a, b)); }
HK_INLINE vf vmin_num(vf a, vf b) { return vselect(visnan(b), a, vmin(a, b)); }

/* bf16 is the high half of an f32: widening is a shift */
HK_INLINE vf vload_bf16(const uint16_t *p)
{
    return vfloat(vi_sll(vload_u16(p), 16));
}

/* f32 to bf16, rounding to nearest even; NaN stays a (quiet) NaN */
HK_INLINE void vstore_bf16(uint16_t *p, vf x)
{
    vi bits = vbits(x);
    vi odd = vi_and(vi_srl(bits, 16), vi_set1(1));
    vi rounded = vi_srl(vi_add(bits, vi_add(vi_set1(0x7fff), odd)), 16);
    vi quiet_nan = vi_or(vi_srl(bits, 16), vi_set1(0x40));
    vi half = vbits(vselect(visnan(x), vfloat(quiet_nan), vfloat(rounded)));
    vstore_u16(p, half);
}

#endif /* CDNN_HOST_VEC_H */
