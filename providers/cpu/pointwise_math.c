#include "pointwise_math.h"

#include <math.h>

#define SQRT_2_OVER_PI 0.7978845608f
#define INV_SQRT_2 0.7071067812f
#define INV_SQRT_2PI 0.3989422804f
#define GELU_TANH_CUBIC 0.044715f

/* One loop per mode: the expression sees a[i], b[i], c[i] and fn.  A
 * full block gets a loop of constant length, which the compiler vectorises
 * even at -O2 (its cheapest cost model refuses loops that need a scalar
 * tail); the rest of a row takes the general loop. */
#define PW_LOOP(expr)                                                         \
    do {                                                                      \
        if (n == PW_BLOCK) {                                                  \
            for (int64_t i = 0; i < PW_BLOCK; i++)                            \
                y[i] = (expr);                                                \
        } else {                                                              \
            for (int64_t i = 0; i < n; i++)                                   \
                y[i] = (expr);                                                \
        }                                                                     \
    } while (0)

void pw_fn_init(pw_fn_t *fn, const cdnn_pointwise_attr_t *attr)
{
    fn->mode = attr->mode;
    fn->lower = (float)attr->relu_lower_clip;
    fn->upper = (float)attr->relu_upper_clip;
    fn->slope = (float)attr->relu_lower_clip_slope;
    fn->elu_alpha = (float)attr->elu_alpha;
    fn->softplus_beta = (float)attr->softplus_beta;
    fn->swish_beta = (float)attr->swish_beta;
}

/* max and min that propagate NaN, as the reference engine's do. */
static inline float nan_max(float a, float b)
{
    return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}

static inline float nan_min(float a, float b)
{
    return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
}

/* 1 / (1 + e^-z) without overflowing e^-z for large negative z. */
static inline float sigmoid(float z)
{
    if (z >= 0)
        return 1.0f / (1.0f + expf(-z));
    float e = expf(z);
    return e / (1.0f + e);
}

/* log(1 + e^z) without overflowing e^z for large z. */
static inline float log1p_exp(float z)
{
    return fmaxf(z, 0.0f) + log1pf(expf(-fabsf(z)));
}

static inline float gelu_tanh_inner(float x)
{
    return SQRT_2_OVER_PI * (x + GELU_TANH_CUBIC * x * x * x);
}

static inline float relu_fwd(const pw_fn_t *fn, float a)
{
    if (a < fn->lower)
        return fn->lower + fn->slope * (a - fn->lower);
    return a > fn->upper ? fn->upper : a;
}

static inline float relu_derivative(const pw_fn_t *fn, float x)
{
    if (x <= fn->lower)
        return fn->slope;
    return x < fn->upper ? 1.0f : 0.0f;
}

static inline float gelu_derivative(float x)
{
    float cdf = 0.5f * (1.0f + erff(x * INV_SQRT_2));
    return cdf + x * INV_SQRT_2PI * expf(-0.5f * x * x);
}

static inline float gelu_tanh_derivative(float x)
{
    float t = tanhf(gelu_tanh_inner(x));
    float du = SQRT_2_OVER_PI * (1.0f + 3.0f * GELU_TANH_CUBIC * x * x);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
}

static inline float swish_derivative(float beta, float x)
{
    float s = sigmoid(beta * x);
    return s + beta * x * s * (1.0f - s);
}

static void binary_block(const pw_fn_t *fn, int64_t n, const float *restrict a,
                         const float *restrict b, float *restrict y)
{
    switch (fn->mode) {
    case CDNN_PW_ADD: PW_LOOP(a[i] + b[i]); break;
    case CDNN_PW_SUB: PW_LOOP(a[i] - b[i]); break;
    case CDNN_PW_MUL: PW_LOOP(a[i] * b[i]); break;
    case CDNN_PW_DIV: PW_LOOP(a[i] / b[i]); break;
    case CDNN_PW_MAX: PW_LOOP(nan_max(a[i], b[i])); break;
    case CDNN_PW_MIN: PW_LOOP(nan_min(a[i], b[i])); break;
    default: PW_LOOP(powf(a[i], b[i])); break;
    }
}

static void unary_block(const pw_fn_t *fn, int64_t n,
                        const float *restrict a, float *restrict y)
{
    switch (fn->mode) {
    case CDNN_PW_IDENTITY: PW_LOOP(a[i]); break;
    case CDNN_PW_NEG: PW_LOOP(-a[i]); break;
    case CDNN_PW_ABS: PW_LOOP(fabsf(a[i])); break;
    case CDNN_PW_EXP: PW_LOOP(expf(a[i])); break;
    case CDNN_PW_LOG: PW_LOOP(logf(a[i])); break;
    case CDNN_PW_SQRT: PW_LOOP(sqrtf(a[i])); break;
    case CDNN_PW_RSQRT: PW_LOOP(1.0f / sqrtf(a[i])); break;
    case CDNN_PW_RECIPROCAL: PW_LOOP(1.0f / a[i]); break;
    case CDNN_PW_SIN: PW_LOOP(sinf(a[i])); break;
    case CDNN_PW_COS: PW_LOOP(cosf(a[i])); break;
    case CDNN_PW_ERF: PW_LOOP(erff(a[i])); break;
    case CDNN_PW_FLOOR: PW_LOOP(floorf(a[i])); break;
    default: PW_LOOP(ceilf(a[i])); break;
    }
}

/* Comparisons and logic; each value is 1 or 0. */
static void logic_block(const pw_fn_t *fn, int64_t n, const float *restrict a,
                        const float *restrict b, float *restrict y)
{
    switch (fn->mode) {
    case CDNN_PW_CMP_EQ: PW_LOOP(a[i] == b[i] ? 1.0f : 0.0f); break;
    case CDNN_PW_CMP_NE: PW_LOOP(a[i] != b[i] ? 1.0f : 0.0f); break;
    case CDNN_PW_CMP_GT: PW_LOOP(a[i] > b[i] ? 1.0f : 0.0f); break;
    case CDNN_PW_CMP_GE: PW_LOOP(a[i] >= b[i] ? 1.0f : 0.0f); break;
    case CDNN_PW_CMP_LT: PW_LOOP(a[i] < b[i] ? 1.0f : 0.0f); break;
    case CDNN_PW_CMP_LE: PW_LOOP(a[i] <= b[i] ? 1.0f : 0.0f); break;
    case CDNN_PW_LOGICAL_AND:
        PW_LOOP(a[i] != 0 && b[i] != 0 ? 1.0f : 0.0f);
        break;
    case CDNN_PW_LOGICAL_OR:
        PW_LOOP(a[i] != 0 || b[i] != 0 ? 1.0f : 0.0f);
        break;
    default: PW_LOOP(a[i] == 0 ? 1.0f : 0.0f); break; /* logical not */
    }
}

static void activation_fwd_block(const pw_fn_t *fn, int64_t n,
                                 const float *restrict a, float *restrict y)
{
    switch (fn->mode) {
    case CDNN_PW_RELU_FWD: PW_LOOP(relu_fwd(fn, a[i])); break;
    case CDNN_PW_GELU_FWD:
        PW_LOOP(a[i] * 0.5f * (1.0f + erff(a[i] * INV_SQRT_2)));
        break;
    case CDNN_PW_GELU_TANH_FWD:
        PW_LOOP(0.5f * a[i] * (1.0f + tanhf(gelu_tanh_inner(a[i]))));
        break;
    case CDNN_PW_SIGMOID_FWD: PW_LOOP(sigmoid(a[i])); break;
    case CDNN_PW_SWISH_FWD:
        PW_LOOP(a[i] * sigmoid(fn->swish_beta * a[i]));
        break;
    case CDNN_PW_TANH_FWD: PW_LOOP(tanhf(a[i])); break;
    case CDNN_PW_ELU_FWD:
        PW_LOOP(a[i] > 0 ? a[i] : fn->elu_alpha * expm1f(a[i]));
        break;
    default:
        PW_LOOP(log1p_exp(fn->softplus_beta * a[i]) / fn->softplus_beta);
        break;
    }
}

/* y = dy * f'(x) with dy in a and the forward input x in b. */
static void activation_bwd_block(const pw_fn_t *fn, int64_t n,
                                 const float *restrict a,
                                 const float *restrict b, float *restrict y)
{
    switch (fn->mode) {
    case CDNN_PW_RELU_BWD: PW_LOOP(a[i] * relu_derivative(fn, b[i])); break;
    case CDNN_PW_GELU_BWD: PW_LOOP(a[i] * gelu_derivative(b[i])); break;
    case CDNN_PW_GELU_TANH_BWD:
        PW_LOOP(a[i] * gelu_tanh_derivative(b[i]));
        break;
    case CDNN_PW_SIGMOID_BWD:
        PW_LOOP(a[i] * sigmoid(b[i]) * (1.0f - sigmoid(b[i])));
        break;
    case CDNN_PW_SWISH_BWD:
        PW_LOOP(a[i] * swish_derivative(fn->swish_beta, b[i]));
        break;
    case CDNN_PW_TANH_BWD:
        PW_LOOP(a[i] * (1.0f - tanhf(b[i]) * tanhf(b[i])));
        break;
    case CDNN_PW_ELU_BWD:
        PW_LOOP(b[i] > 0 ? a[i] : a[i] * fn->elu_alpha * expf(b[i]));
        break;
    default: PW_LOOP(a[i] * sigmoid(fn->softplus_beta * b[i])); break;
    }
}

/* Python's % (np.remainder): fmod moved into b's sign; a zero result
 * takes b's sign, as the reference engine's. */
static inline float remainder_value(float a, float b)
{
    float r = fmodf(a, b);
    if (r != 0 && (r < 0) != (b < 0))
        return r + b;
    return r != 0 ? r : copysignf(0.0f, b);
}

/* Round half to even without a call (nearbyintf is one on baseline
 * x86-64, which lacks SSE4.1's roundps): below 2^23, |x| + 2^23 lies where
 * a float's ulp is 1, so the add rounds |x| to an integer, halves to even;
 * from 2^23 on (and for inf, NaN) x is already one.  The sign goes back on
 * after, so -0.4 gives -0, as np.round. */
static inline float round_half_even(float x)
{
    float m = fabsf(x);
    return m < 0x1p23f ? copysignf((m + 0x1p23f) - 0x1p23f, x) : x;
}

/* The modes format 1.3 added (cdnn.h). */
static void newer_block(const pw_fn_t *fn, int64_t n, const float *restrict a,
                        const float *restrict b, float *restrict y)
{
    switch (fn->mode) {
    case CDNN_PW_ROUND: PW_LOOP(round_half_even(a[i])); break;
    case CDNN_PW_FMOD: PW_LOOP(fmodf(a[i], b[i])); break;
    case CDNN_PW_REMAINDER: PW_LOOP(remainder_value(a[i], b[i])); break;
    case CDNN_PW_ASIN: PW_LOOP(asinf(a[i])); break;
    case CDNN_PW_ACOS: PW_LOOP(acosf(a[i])); break;
    case CDNN_PW_ATAN: PW_LOOP(atanf(a[i])); break;
    case CDNN_PW_SINH: PW_LOOP(sinhf(a[i])); break;
    case CDNN_PW_COSH: PW_LOOP(coshf(a[i])); break;
    case CDNN_PW_TAN: PW_LOOP(tanf(a[i])); break;
    case CDNN_PW_ASINH: PW_LOOP(asinhf(a[i])); break;
    case CDNN_PW_ACOSH: PW_LOOP(acoshf(a[i])); break;
    case CDNN_PW_ATANH: PW_LOOP(atanhf(a[i])); break;
    default: PW_LOOP(atan2f(a[i], b[i])); break;
    }
}

/* The modes are grouped in cdnn.h by kind, in the order tested here. */
void pw_apply_block(const pw_fn_t *fn, int64_t n, const float *restrict a,
                    const float *restrict b, const float *restrict c,
                    float *restrict y)
{
    cdnn_pointwise_mode_t mode = fn->mode;
    if (mode <= CDNN_PW_POW)
        binary_block(fn, n, a, b, y);
    else if (mode <= CDNN_PW_CEIL)
        unary_block(fn, n, a, y);
    else if (mode <= CDNN_PW_LOGICAL_NOT)
        logic_block(fn, n, a, b, y);
    else if (mode == CDNN_PW_SELECT)
        PW_LOOP(a[i] != 0 ? b[i] : c[i]);
    else if (mode == CDNN_PW_FMA)
        PW_LOOP(a[i] * b[i] + c[i]);
    else if (mode <= CDNN_PW_SOFTPLUS_FWD)
        activation_fwd_block(fn, n, a, y);
    else if (mode >= CDNN_PW_ROUND)
        newer_block(fn, n, a, b, y);
    else
        activation_bwd_block(fn, n, a, b, y);
}
