/*
 * check.h -- host tensors for the CUDA kernel tests: strided buffers with
 * random contents (gaps included) or poisoned ones (every byte 0xFF, a NaN
 * in f32, f16 and bf16 alike), mirrored on the device; and the comparison
 * of a kernel's output with an f64 reference under a stated tolerance.
 */
#ifndef CDNN_TESTS_CUDA_KERNELS_CHECK_H
#define CDNN_TESTS_CUDA_KERNELS_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu.h"

typedef struct tensor {
    int32_t type;
    int64_t span;  /* elements allocated, gaps included */
    uint8_t *host; /* span elements */
    uint8_t *touched; /* per element: the reference wrote it (outputs) */
    sdk_cu_deviceptr device;
} tensor_t;

/* The elements spanned by a (batch, rows, cols) view with these
 * non-negative strides. */
int64_t span_of(int64_t batch, int64_t rows, int64_t cols, int64_t batch_stride,
                int64_t row_stride, int64_t col_stride);

/* Random values in [lo, hi), rounded to the type, on host and device. */
tensor_t tensor_random(const gpu_t *gpu, rng_t *rng, int32_t type, int64_t span, double lo,
                       double hi);
/* Every byte 0xFF, on host and device; the reference marks what it expects
 * written in `touched`. */
tensor_t tensor_poisoned(const gpu_t *gpu, int32_t type, int64_t span);
void tensor_fetch(const gpu_t *gpu, tensor_t *t);
void tensor_free(const gpu_t *gpu, tensor_t *t);
double tensor_get(const tensor_t *t, int64_t index);

/* One comparison: accumulates the worst error against its tolerance and
 * the relative L2 error ||out - ref|| / ||ref||. */
typedef struct check {
    int64_t compared, bad;
    double worst_ratio; /* max |out - ref| / tol */
    double diff2, ref2;
    char first_bad[200];
} check_t;

/* Compare element `index` of out (as the kernel wrote it) with ref. */
void check_element(check_t *c, tensor_t *out, int64_t index, double ref, double tol);
/* Every element of out the reference did not mark must still be poison. */
void check_untouched(check_t *c, const tensor_t *out);
double check_relative_l2(const check_t *c);

#endif
