/*
 * pointwise_math.h -- every pointwise mode of cdnn.h in float, applied to
 * a block of elements at a time.
 *
 * The fast engines evaluate pointwise work block by block (a few hundred
 * elements that stay in L1) rather than element by element, so that the
 * mode is dispatched once per block and each mode's loop can vectorise.
 * The conventions follow the reference engine's: max and min propagate
 * NaN, logic treats any nonzero value as true, and an activation's
 * derivative at a kink takes its lower side's limit.  Unlike the reference
 * engine, everything is computed in float, so integer division and power
 * (exact in the reference) are left to it (pw_compile.c).
 */
#ifndef CDNN_CPU_POINTWISE_MATH_H
#define CDNN_CPU_POINTWISE_MATH_H

#include <stdint.h>

#include <cdnn/cdnn.h>

/* A pointwise mode with its attributes narrowed to float once, at build. */
typedef struct pw_fn {
    cdnn_pointwise_mode_t mode;
    float lower, upper, slope; /* relu clip and lower slope */
    float elu_alpha;
    float softplus_beta;
    float swish_beta;
} pw_fn_t;

void pw_fn_init(pw_fn_t *fn, const cdnn_pointwise_attr_t *attr);

/* Elements per block; a block of each live value fits in L1. */
#define PW_BLOCK 256

/*
 * y[i] = fn(a[i], b[i], c[i]) for 0 <= i < n <= PW_BLOCK.  b and c are
 * read only by modes of arity 2 and 3.  y must not overlap an input (the
 * loops are written for the vectoriser); inputs may overlap each other.
 */
void pw_apply_block(const pw_fn_t *fn, int64_t n, const float *restrict a,
                    const float *restrict b, const float *restrict c,
                    float *restrict y);

#endif
