/*
 * reference_pointwise.c -- the value of every pointwise mode, in double,
 * exactly as cdnn.h documents it.
 *
 * Conventions where cdnn.h leaves a choice:
 *   - max and min propagate NaN (NumPy's maximum / minimum), rather than
 *     C's fmax / fmin, which drop it;
 *   - logic treats any nonzero value (NaN included) as true;
 *   - a node with a floating-point input computes in double and rounds
 *     only when it stores (f64 is computed in f64, exactly); a node whose
 *     inputs are all integers or bools computes its arithmetic, logic and
 *     select exactly in 64-bit two's complement (ref_pointwise_int) and
 *     wraps to its output type when it stores, its other modes in double;
 *   - an activation's derivative at a kink takes the value of its lower
 *     side's limit: relu'(lower) is the slope below lower, relu'(upper)
 *     is 0.
 */
#include "reference.h"

#include <math.h>

#define SQRT_2_OVER_PI 0.79788456080286535588
#define INV_SQRT_2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794
#define GELU_TANH_CUBIC 0.044715

double ref_max(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}

double ref_min(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
}

static double binary_value(cdnn_pointwise_mode_t mode, double a, double b)
{
    switch (mode) {
    case CDNN_PW_ADD: return a + b;
    case CDNN_PW_SUB: return a - b;
    case CDNN_PW_MUL: return a * b;
    case CDNN_PW_DIV: return a / b;
    case CDNN_PW_MAX: return ref_max(a, b);
    case CDNN_PW_MIN: return ref_min(a, b);
    default: return pow(a, b);
    }
}

static double unary_value(cdnn_pointwise_mode_t mode, double a)
{
    switch (mode) {
    case CDNN_PW_IDENTITY: return a;
    case CDNN_PW_NEG: return -a;
    case CDNN_PW_ABS: return fabs(a);
    case CDNN_PW_EXP: return exp(a);
    case CDNN_PW_LOG: return log(a);
    case CDNN_PW_SQRT: return sqrt(a);
    case CDNN_PW_RSQRT: return 1.0 / sqrt(a);
    case CDNN_PW_RECIPROCAL: return 1.0 / a;
    case CDNN_PW_SIN: return sin(a);
    case CDNN_PW_COS: return cos(a);
    case CDNN_PW_ERF: return erf(a);
    case CDNN_PW_FLOOR: return floor(a);
    default: return ceil(a);
    }
}

/* Comparisons and logic; the value is 1 or 0. */
static int logic_value(cdnn_pointwise_mode_t mode, double a, double b)
{
    switch (mode) {
    case CDNN_PW_CMP_EQ: return a == b;
    case CDNN_PW_CMP_NE: return a != b;
    case CDNN_PW_CMP_GT: return a > b;
    case CDNN_PW_CMP_GE: return a >= b;
    case CDNN_PW_CMP_LT: return a < b;
    case CDNN_PW_CMP_LE: return a <= b;
    case CDNN_PW_LOGICAL_AND: return a != 0 && b != 0;
    case CDNN_PW_LOGICAL_OR: return a != 0 || b != 0;
    default: return a == 0; /* logical not */
    }
}

/* 1 / (1 + e^-z), without overflowing e^-z for large negative z. */
static double sigmoid(double z)
{
    if (z >= 0)
        return 1.0 / (1.0 + exp(-z));
    double e = exp(z);
    return e / (1.0 + e);
}

/* log(1 + e^z), without overflowing e^z for large z. */
static double log1p_exp(double z)
{
    return fmax(z, 0.0) + log1p(exp(-fabs(z)));
}

static double gelu_tanh_inner(double x)
{
    return SQRT_2_OVER_PI * (x + GELU_TANH_CUBIC * x * x * x);
}

static double relu_fwd(const cdnn_pointwise_attr_t *p, double a)
{
    if (a < p->relu_lower_clip)
        return p->relu_lower_clip + p->relu_lower_clip_slope *
                                        (a - p->relu_lower_clip);
    return a > p->relu_upper_clip ? p->relu_upper_clip : a;
}

static double activation_fwd(const cdnn_pointwise_attr_t *p, double a)
{
    switch (p->mode) {
    case CDNN_PW_RELU_FWD: return relu_fwd(p, a);
    case CDNN_PW_GELU_FWD: return a * 0.5 * (1.0 + erf(a * INV_SQRT_2));
    case CDNN_PW_GELU_TANH_FWD:
        return 0.5 * a * (1.0 + tanh(gelu_tanh_inner(a)));
    case CDNN_PW_SIGMOID_FWD: return sigmoid(a);
    case CDNN_PW_SWISH_FWD: return a * sigmoid(p->swish_beta * a);
    case CDNN_PW_TANH_FWD: return tanh(a);
    case CDNN_PW_ELU_FWD: return a > 0 ? a : p->elu_alpha * expm1(a);
    default: return log1p_exp(p->softplus_beta * a) / p->softplus_beta;
    }
}

static double relu_derivative(const cdnn_pointwise_attr_t *p, double x)
{
    if (x <= p->relu_lower_clip)
        return p->relu_lower_clip_slope;
    return x < p->relu_upper_clip ? 1.0 : 0.0;
}

/* d/dx of x * Phi(x) = Phi(x) + x * phi(x). */
static double gelu_derivative(double x)
{
    double cdf = 0.5 * (1.0 + erf(x * INV_SQRT_2));
    double pdf = INV_SQRT_2PI * exp(-0.5 * x * x);
    return cdf + x * pdf;
}

/* d/dx of 0.5 x (1 + tanh(u(x))) with u = sqrt(2/pi) (x + 0.044715 x^3). */
static double gelu_tanh_derivative(double x)
{
    double t = tanh(gelu_tanh_inner(x));
    double du = SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_TANH_CUBIC * x * x);
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
}

/* d/dx of x * s(beta x) = s + beta x s (1 - s). */
static double swish_derivative(double beta, double x)
{
    double s = sigmoid(beta * x);
    return s + beta * x * s * (1.0 - s);
}

/* f'(x) of the forward function of a backward mode. */
static double activation_derivative(const cdnn_pointwise_attr_t *p, double x)
{
    switch (p->mode) {
    case CDNN_PW_RELU_BWD: return relu_derivative(p, x);
    case CDNN_PW_GELU_BWD: return gelu_derivative(x);
    case CDNN_PW_GELU_TANH_BWD: return gelu_tanh_derivative(x);
    case CDNN_PW_SIGMOID_BWD: return sigmoid(x) * (1.0 - sigmoid(x));
    case CDNN_PW_SWISH_BWD: return swish_derivative(p->swish_beta, x);
    case CDNN_PW_TANH_BWD: return 1.0 - tanh(x) * tanh(x);
    case CDNN_PW_ELU_BWD: return x > 0 ? 1.0 : p->elu_alpha * exp(x);
    default: return sigmoid(p->softplus_beta * x); /* softplus */
    }
}

/* Python's % on floats (np.remainder, torch.remainder): fmod moved into
 * b's sign; a zero result takes b's sign. */
static double remainder_value(double a, double b)
{
    double r = fmod(a, b);
    if (r != 0 && (r < 0) != (b < 0))
        return r + b;
    return r != 0 ? r : copysign(0.0, b);
}

/* The modes format 1.3 added (cdnn.h). */
static double newer_value(cdnn_pointwise_mode_t mode, double a, double b)
{
    switch (mode) {
    case CDNN_PW_ROUND: return nearbyint(a); /* the default mode: halves to even */
    case CDNN_PW_FMOD: return fmod(a, b);
    case CDNN_PW_REMAINDER: return remainder_value(a, b);
    case CDNN_PW_ASIN: return asin(a);
    case CDNN_PW_ACOS: return acos(a);
    case CDNN_PW_ATAN: return atan(a);
    case CDNN_PW_SINH: return sinh(a);
    case CDNN_PW_COSH: return cosh(a);
    case CDNN_PW_TAN: return tan(a);
    case CDNN_PW_ASINH: return asinh(a);
    case CDNN_PW_ACOSH: return acosh(a);
    case CDNN_PW_ATANH: return atanh(a);
    default: return atan2(a, b);
    }
}

/* The modes are grouped in cdnn.h by kind, in the order tested here. */
double ref_pointwise_value(const cdnn_pointwise_attr_t *attr, double a,
                           double b, double c)
{
    cdnn_pointwise_mode_t mode = attr->mode;
    if (mode <= CDNN_PW_POW)
        return binary_value(mode, a, b);
    if (mode <= CDNN_PW_CEIL)
        return unary_value(mode, a);
    if (mode <= CDNN_PW_LOGICAL_NOT)
        return logic_value(mode, a, b);
    if (mode == CDNN_PW_SELECT)
        return a != 0 ? b : c;
    if (mode == CDNN_PW_FMA)
        return a * b + c;
    if (mode <= CDNN_PW_SOFTPLUS_FWD)
        return activation_fwd(attr, a);
    if (mode >= CDNN_PW_ROUND)
        return newer_value(mode, a, b);
    return a * activation_derivative(attr, b); /* (dy, x) */
}

/* ------------------------------------------------------------------------
 * Integers
 * ------------------------------------------------------------------------ */

int ref_pointwise_is_exact_int(cdnn_pointwise_mode_t mode)
{
    switch (mode) {
    case CDNN_PW_EXP: case CDNN_PW_LOG: case CDNN_PW_SQRT: case CDNN_PW_RSQRT:
    case CDNN_PW_SIN: case CDNN_PW_COS: case CDNN_PW_ERF:
        return 0;
    case CDNN_PW_ROUND: case CDNN_PW_FMOD: case CDNN_PW_REMAINDER:
        return 1;
    default:
        return mode <= CDNN_PW_FMA; /* activations compute in double */
    }
}

/* Wrapping arithmetic: unsigned arithmetic is defined to wrap, and the
 * conversion back keeps the bits (two's complement). */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* Truncating division, as C's; x / 0 is 0 (NumPy's integer result) and
 * INT64_MIN / -1 wraps to INT64_MIN instead of trapping. */
static int64_t int_div(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return wrap_sub(0, a);
    return a / b;
}

/* a^b by squaring, wrapping.  A negative exponent gives the truncated
 * value of 1 / a^-b: 1 for a = 1, +-1 for a = -1, 0 otherwise (0 too for
 * a = 0, as a division by zero). */
static int64_t int_pow(int64_t a, int64_t b)
{
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    int64_t result = 1;
    while (b) {
        if (b & 1)
            result = wrap_mul(result, a);
        a = wrap_mul(a, a);
        b >>= 1;
    }
    return result;
}

static int64_t int_binary(cdnn_pointwise_mode_t mode, int64_t a, int64_t b)
{
    switch (mode) {
    case CDNN_PW_ADD: return wrap_add(a, b);
    case CDNN_PW_SUB: return wrap_sub(a, b);
    case CDNN_PW_MUL: return wrap_mul(a, b);
    case CDNN_PW_DIV: return int_div(a, b);
    case CDNN_PW_MAX: return a > b ? a : b;
    case CDNN_PW_MIN: return a < b ? a : b;
    default: return int_pow(a, b);
    }
}

static int64_t int_unary(cdnn_pointwise_mode_t mode, int64_t a)
{
    switch (mode) {
    case CDNN_PW_NEG: return wrap_sub(0, a);
    case CDNN_PW_ABS: return a < 0 ? wrap_sub(0, a) : a;
    case CDNN_PW_RECIPROCAL: return int_div(1, a);
    default: return a; /* identity, floor, ceil */
    }
}

static int64_t int_logic(cdnn_pointwise_mode_t mode, int64_t a, int64_t b)
{
    switch (mode) {
    case CDNN_PW_CMP_EQ: return a == b;
    case CDNN_PW_CMP_NE: return a != b;
    case CDNN_PW_CMP_GT: return a > b;
    case CDNN_PW_CMP_GE: return a >= b;
    case CDNN_PW_CMP_LT: return a < b;
    case CDNN_PW_CMP_LE: return a <= b;
    case CDNN_PW_LOGICAL_AND: return a != 0 && b != 0;
    case CDNN_PW_LOGICAL_OR: return a != 0 || b != 0;
    default: return a == 0; /* logical not */
    }
}

/* C's % (sign of a), and Python's (sign of b); x % 0 is 0 (NumPy's
 * integer result) and INT64_MIN % -1 is 0 instead of trapping. */
static int64_t int_fmod(int64_t a, int64_t b)
{
    return b == 0 || b == -1 ? 0 : a % b;
}

static int64_t int_remainder(int64_t a, int64_t b)
{
    int64_t r = int_fmod(a, b);
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

int64_t ref_pointwise_int(cdnn_pointwise_mode_t mode, int64_t a, int64_t b,
                          int64_t c)
{
    if (mode == CDNN_PW_ROUND)
        return a;
    if (mode == CDNN_PW_FMOD)
        return int_fmod(a, b);
    if (mode == CDNN_PW_REMAINDER)
        return int_remainder(a, b);
    if (mode <= CDNN_PW_POW)
        return int_binary(mode, a, b);
    if (mode <= CDNN_PW_CEIL)
        return int_unary(mode, a);
    if (mode <= CDNN_PW_LOGICAL_NOT)
        return int_logic(mode, a, b);
    if (mode == CDNN_PW_SELECT)
        return a != 0 ? b : c;
    return wrap_add(wrap_mul(a, b), c); /* fma */
}
