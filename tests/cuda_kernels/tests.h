/*
 * tests.h -- the parts of test_cuda_kernels: one function per kernel
 * source, each running every entry point of a loaded code object.
 */
#ifndef CDNN_TESTS_CUDA_KERNELS_TESTS_H
#define CDNN_TESTS_CUDA_KERNELS_TESTS_H

#include "check.h"
#include "gpu.h"

typedef struct test_state {
    const gpu_t *gpu;
    rng_t rng;
    const char *object; /* the code object's file name, for the report */
    int passed, failed;
} test_state_t;

/* One line per kernel: cases, worst error over tolerance, relative L2
 * error; a failure names its first bad element. */
void test_report(test_state_t *state, const char *kernel, int cases, const check_t *check);

void test_matmul_tc(test_state_t *state, sdk_cu_module module);
void test_matmul_f32(test_state_t *state, sdk_cu_module module);
void test_matmul_wgmma(test_state_t *state, sdk_cu_module module);
void test_matmul_small_m(test_state_t *state, sdk_cu_module module);
void test_pointwise(test_state_t *state, sdk_cu_module module);
void test_norm(test_state_t *state, sdk_cu_module module);
void test_softmax(test_state_t *state, sdk_cu_module module);
void test_reduce(test_state_t *state, sdk_cu_module module);
void test_rows_staged(test_state_t *state, sdk_cu_module module);
void test_sdpa(test_state_t *state, sdk_cu_module module);
void test_sdpa_wgmma(test_state_t *state, sdk_cu_module module);
void test_conv(test_state_t *state, sdk_cu_module module);
void test_conv_wgmma(test_state_t *state, sdk_cu_module module);

#endif
