/*
 * vmath.h -- exp, log, tanh, sigmoid and the activations built on them, on
 * vectors, without libm (the code objects must load anywhere).
 *
 * The polynomials are Cephes' single-precision ones (S. Moshier), the erfc
 * approximation Numerical Recipes' erfcc (fractional error < 1.2e-7 for
 * every x >= 0).  Measured errors are in tests/host_kernels; each function
 * says what it is built to give.
 */
#ifndef CDNN_HOST_VMATH_H
#define CDNN_HOST_VMATH_H

#include "vec.h"

/* 2^n for integer-valued n in [-126, 127], built in the exponent field. */
HK_INLINE vf vpow2i(vi n)
{
    return vfloat(vi_sll(vi_add(n, vi_set1(127)), 23));
}

/*
 * exp(hi + lo), ~1 ulp, for |lo| up to a few units and hi + lo <= 88.72,
 * not NaN (vexp handles the rest): the argument is reduced as
 * hi - n ln2 (ln2 in two parts, exact for the n that occur) before lo is
 * added, so a hi of large magnitude costs no rounding of hi + lo.
 * exp(r), |r| <= ln2/2, by a degree-6 polynomial; 2^n applied in two
 * halves, so that n = 128 (just below overflow) does not overflow 2^n.
 * Below ln(FLT_MIN) = -87.34, where the result would be subnormal: 0 (as
 * oneDNN's exp).  Subnormal arithmetic costs x86 ~100 cycles an
 * operation; a softmax or gelu over a wide range would meet it
 * constantly, for values no f32 sum can see.
 */
#define HK_EXP_MIN (-87.3365447505531f)
#define HK_EXP_MAX 88.7228394f

HK_INLINE vf vexp_finite(vf hi, vf lo)
{
    vf x = vadd(hi, lo);
    vf clamped = vmin(vmax(x, vset1(HK_EXP_MIN)), vset1(HK_EXP_MAX));
    vf n = vround(vmul(clamped, vset1(1.44269504088896341f)));
    /* a hi beyond the range is selected away below; clamping it keeps r
     * (and the polynomial) finite meanwhile */
    vf r = vfnma(n, vset1(0.693359375f),
                 vmin(vmax(hi, vset1(-110.0f)), vset1(90.0f)));
    r = vfnma(n, vset1(-2.12194440e-4f), vadd(r, lo));
    vf p = vset1(1.9875691500e-4f);
    p = vfma(p, r, vset1(1.3981999507e-3f));
    p = vfma(p, r, vset1(8.3334519073e-3f));
    p = vfma(p, r, vset1(4.1665795894e-2f));
    p = vfma(p, r, vset1(1.6666665459e-1f));
    p = vfma(p, r, vset1(5.0000001201e-1f));
    p = vfma(p, vmul(r, r), vadd(r, vset1(1.0f)));
    vi ni = vcvt_round(n);
    vi half = vi_sra(ni, 1);
    vf y = vmul(vmul(p, vpow2i(half)), vpow2i(vi_sub(ni, half)));
    return vselect(vlt(x, vset1(HK_EXP_MIN)), vzero(), y);
}

/* exp(x) for any x: above 88.72 inf, NaN stays NaN. */
HK_INLINE vf vexp(vf x)
{
    vf y = vexp_finite(x, vzero());
    y = vselect(vlt(vset1(HK_EXP_MAX), x), vset1(__builtin_inff()), y);
    return vselect(visnan(x), x, y);
}

/* z^2 = hi + lo exactly, hi = fl(z^2): by FMA where the level has it,
 * else by Dekker's splitting of z into halves of 12 bits. */
HK_INLINE void vsquare_exact(vf z, vf *hi, vf *lo)
{
    *hi = vmul(z, z);
#if HK_HAS_FMA
    *lo = vfma(z, z, vneg(*hi));
#else
    vf c = vmul(z, vset1(4097.0f));
    vf zh = vsub(c, vsub(c, z)), zl = vsub(z, zh);
    *lo = vadd(vadd(vsub(vmul(zh, zh), *hi), vmul(vadd(zh, zh), zl)),
               vmul(zl, zl));
#endif
}

/*
 * log(x), ~1 ulp.  x = m 2^e with m in [sqrt(1/2), sqrt(2)); log(m) by
 * Cephes' degree-8 polynomial in m - 1; e ln2 added in two parts.
 * Subnormals are scaled by 2^23 first.  log(0) = -inf, log(x < 0) = NaN,
 * log(inf) = inf, NaN stays NaN.
 */
HK_INLINE vf vlog(vf x)
{
    vm tiny = vlt(x, vset1(1.17549435e-38f));
    vf scaled = vselect(tiny, vmul(x, vset1(8388608.0f)), x);
    vi bits = vbits(scaled);
    vf e = vcvt_int(vi_sub(vi_srl(bits, 23), vi_set1(126)));
    e = vsub(e, vselect(tiny, vset1(23.0f), vzero()));
    /* mantissa in [0.5, 1) */
    vf m = vfloat(vi_or(vi_and(bits, vi_set1(0x007fffff)),
                        vi_set1(0x3f000000)));
    vm small = vlt(m, vset1(0.707106781186547524f));
    e = vsub(e, vselect(small, vset1(1.0f), vzero()));
    m = vsub(vadd(m, vselect(small, m, vzero())), vset1(1.0f));
    vf z = vmul(m, m);
    vf p = vset1(7.0376836292e-2f);
    p = vfma(p, m, vset1(-1.1514610310e-1f));
    p = vfma(p, m, vset1(1.1676998740e-1f));
    p = vfma(p, m, vset1(-1.2420140846e-1f));
    p = vfma(p, m, vset1(1.4249322787e-1f));
    p = vfma(p, m, vset1(-1.6668057665e-1f));
    p = vfma(p, m, vset1(2.0000714765e-1f));
    p = vfma(p, m, vset1(-2.4999993993e-1f));
    p = vfma(p, m, vset1(3.3333331174e-1f));
    vf y = vmul(vmul(p, m), z);
    y = vfma(e, vset1(-2.12194440e-4f), y);
    y = vfnma(vset1(0.5f), z, y);
    y = vfma(e, vset1(0.693359375f), vadd(m, y));
    y = vselect(veq(x, vset1(__builtin_inff())), x, y);
    y = vselect(veq(x, vzero()), vset1(-__builtin_inff()), y);
    y = vselect(vlt(x, vzero()), vset1(__builtin_nanf("")), y);
    return vselect(visnan(x), x, y);
}

/* 1 / (1 + exp(-x)), accurate on both sides: with e = exp(-|x|) (never
 * overflows) it is e / (1 + e) below 0 and 1 - e / (1 + e) above, which
 * is exactly 1 where e vanishes, whatever the reciprocal's last bit. */
HK_INLINE vf vsigmoid(vf x)
{
    vf e = vexp(vneg(vabs(x)));
    vf low = vmul(e, vrecip(vadd(vset1(1.0f), e))); /* 1 + e in [1, 2] */
    return vselect(vlt(x, vzero()), low, vsub(vset1(1.0f), low));
}

HK_INLINE vf vsilu(vf x) { return vmul(x, vsigmoid(x)); }

/*
 * tanh(x): Cephes' odd polynomial for |x| < 0.625 (no cancellation near 0),
 * 1 - 2 / (exp(2|x|) + 1) above, with the sign put back.  |x| is capped at
 * 10, where tanh rounds to 1 in f32, so exp never overflows.
 */
HK_INLINE vf vtanh(vf x)
{
    vf ax = vmin(vabs(x), vset1(10.0f));
    vf z = vmul(x, x);
    vf p = vset1(-5.70498872745e-3f);
    p = vfma(p, z, vset1(2.06390887954e-2f));
    p = vfma(p, z, vset1(-5.37397155531e-2f));
    p = vfma(p, z, vset1(1.33314422036e-1f));
    p = vfma(p, z, vset1(-3.33332819422e-1f));
    vf small = vfma(vmul(p, z), x, x);
    vf e = vexp(vadd(ax, ax));
    vf large = vfnma(vset1(2.0f), vrecip(vadd(e, vset1(1.0f))), vset1(1.0f));
    vf sign = vfloat(vi_and(vbits(x), vi_set1((int32_t)0x80000000u)));
    large = vfloat(vi_or(vbits(large), vbits(sign)));
    vf y = vselect(vlt(ax, vset1(0.625f)), small, large);
    return vselect(visnan(x), x, y);
}

/*
 * erfc(a / sqrt 2) for a >= 0, by Numerical Recipes' erfcc with z = a/sqrt 2:
 *     t = 1 / (1 + z/2),  erfc(z) = t exp(-z^2 + P(t))
 * z^2 reaches 200 before erfc underflows, so its errors matter at
 * relative 1e-6: it is taken as a^2 / 2 from a itself (rounding z first
 * would cost 2 ulp of z^2), exactly (hi + lo), and exp reduces -hi before
 * adding P(t) - lo.
 */
HK_INLINE vf verfc_over_sqrt2(vf a)
{
    a = vmin(a, vset1(28.0f)); /* erfc(28 / sqrt 2) is 0 in f32 */
    vf z = vmul(a, vset1(0.707106781186547524f));
    vf t = vrecip(vfma(z, vset1(0.5f), vset1(1.0f))); /* in (0.08, 1] */
    vf p = vset1(0.17087277f);
    p = vfma(p, t, vset1(-0.82215223f));
    p = vfma(p, t, vset1(1.48851587f));
    p = vfma(p, t, vset1(-1.13520398f));
    p = vfma(p, t, vset1(0.27886807f));
    p = vfma(p, t, vset1(-0.18628806f));
    p = vfma(p, t, vset1(0.09678418f));
    p = vfma(p, t, vset1(0.37409196f));
    p = vfma(p, t, vset1(1.00002368f));
    p = vfma(p, t, vset1(-1.26551223f));
    vf hi, lo; /* a^2 */
    vsquare_exact(a, &hi, &lo);
    vf half = vset1(0.5f);
    /* the exponent is <= 0 and finite (a is capped): no inf or NaN case */
    return vmul(t, vexp_finite(vneg(vmul(hi, half)), vfnma(lo, half, p)));
}

/* gelu(x) = x Phi(x) with Phi(x) = erfc(-x / sqrt 2) / 2, taken from erfc
 * of |x| on both sides so that neither tail cancels. */
HK_INLINE vf vgelu(vf x)
{
    vf half_erfc = vmul(vset1(0.5f), verfc_over_sqrt2(vabs(x)));
    vf phi = vselect(vlt(x, vzero()), half_erfc,
                     vsub(vset1(1.0f), half_erfc));
    return vmul(x, phi);
}

/* The tanh form, 0.5 x (1 + tanh(u)) = x sigmoid(2u) with
 * u = sqrt(2/pi) (x + 0.044715 x^3): the sigmoid has no cancellation for
 * negative x, where 1 + tanh(u) would. */
HK_INLINE vf vgelu_tanh(vf x)
{
    vf x3 = vmul(vmul(x, x), x);
    vf u = vmul(vset1(0.797884560802865356f),
                vfma(x3, vset1(0.044715f), x));
    return vmul(x, vsigmoid(vadd(u, u)));
}

/* relu with NaN kept: max's second operand is returned for NaN */
HK_INLINE vf vrelu(vf x) { return vmax(vzero(), x); }

#endif /* CDNN_HOST_VMATH_H */
