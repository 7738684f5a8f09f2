/*
 * reference_pointwise.c -- the value of every pointwise mode, in double,
 * exactly as cdnn.h documents it.
 *
 * Conventions where cdnn.h leaves a choice:
 *   - max and min propagate NaN (NumPy's maximum / minimum), rather than
 *     C's fmax / fmin, which drop it;
 *   - logic treats any nonzero value (NaN included) as true;
 *   - results are computed in double and rounded only when stored, so an
 *     integer division rounds half away from zero instead of truncating;
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
    return a * activation_derivative(attr, b); /* (dy, x) */
}
