/*
 * check.c -- host tensors and comparisons of check.h.
 */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *allocate(size_t bytes) {
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "FAIL: out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

int64_t span_of(int64_t batch, int64_t rows, int64_t cols, int64_t batch_stride,
                int64_t row_stride, int64_t col_stride) {
    return 1 + (batch - 1) * batch_stride + (rows - 1) * row_stride + (cols - 1) * col_stride;
}

tensor_t tensor_random(const gpu_t *gpu, rng_t *rng, int32_t type, int64_t span, double lo,
                       double hi) {
    tensor_t t = {.type = type, .span = span};
    const size_t bytes = (size_t)span * elem_size(type);
    t.host = allocate(bytes);
    for (int64_t i = 0; i < span; ++i)
        elem_set(type, t.host, i, rng_uniform(rng, lo, hi));
    t.device = gpu_alloc(gpu, bytes);
    gpu_upload(gpu, t.device, t.host, bytes);
    return t;
}

tensor_t tensor_poisoned(const gpu_t *gpu, int32_t type, int64_t span) {
    tensor_t t = {.type = type, .span = span};
    const size_t bytes = (size_t)span * elem_size(type);
    t.host = allocate(bytes);
    memset(t.host, 0xFF, bytes);
    t.touched = allocate((size_t)span);
    t.device = gpu_alloc(gpu, bytes);
    gpu_upload(gpu, t.device, t.host, bytes);
    return t;
}

void tensor_fetch(const gpu_t *gpu, tensor_t *t) {
    gpu_download(gpu, t->host, t->device, (size_t)t->span * elem_size(t->type));
}

void tensor_free(const gpu_t *gpu, tensor_t *t) {
    gpu_free(gpu, t->device);
    free(t->host);
    free(t->touched);
    memset(t, 0, sizeof *t);
}

double tensor_get(const tensor_t *t, int64_t index) { return elem_get(t->type, t->host, index); }

void check_element(check_t *c, tensor_t *out, int64_t index, double ref, double tol) {
    const double got = tensor_get(out, index);
    if (out->touched)
        out->touched[index] = 1;
    const double diff = fabs(got - ref);
    c->compared++;
    c->diff2 += isfinite(diff) ? diff * diff : 0.0;
    c->ref2 += ref * ref;
    const double ratio = tol > 0 ? diff / tol : (diff > 0 ? INFINITY : 0.0);
    if (!(diff <= tol)) { /* NaN fails too */
        if (c->bad++ == 0)
            snprintf(c->first_bad, sizeof c->first_bad,
                     "element %lld: got %.9g, expected %.9g (tolerance %.3g)", (long long)index,
                     got, ref, tol);
    }
    if (!(ratio <= c->worst_ratio))
        c->worst_ratio = isnan(ratio) ? INFINITY : ratio;
}

void check_untouched(check_t *c, const tensor_t *out) {
    const size_t size = elem_size(out->type);
    for (int64_t i = 0; i < out->span; ++i) {
        if (out->touched[i])
            continue;
        for (size_t b = 0; b < size; ++b)
            if (out->host[(size_t)i * size + b] != 0xFF) {
                if (c->bad++ == 0)
                    snprintf(c->first_bad, sizeof c->first_bad,
                             "element %lld lies outside the output but was written",
                             (long long)i);
                break;
            }
    }
}

double check_relative_l2(const check_t *c) {
    return c->ref2 > 0 ? sqrt(c->diff2 / c->ref2) : sqrt(c->diff2);
}
