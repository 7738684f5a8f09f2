/*
 * test_ops.c -- the op suite: every op family, every fast CPU engine
 * against "cpu:reference", over shapes, strides and data types.  The cases
 * live in tests/ops/; see tests/ops/harness.h for what each one checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_filter.h"

#include "ops/cases.h"
#include "ops/harness.h"

const cdnn_data_type_t ops_float_types[] = {
    CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_BF16,
    CDNN_DATA_TYPE_F64};
const int ops_float_type_count =
    (int)(sizeof ops_float_types / sizeof ops_float_types[0]);

/* The same test with every pointer one element past a 64-byte boundary. */
#define OPS_MISALIGNED(f)                                                     \
    { "misaligned_" #f, f, h_misaligned_on, h_misaligned_off, NULL }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_fwd),
        cmocka_unit_test(test_conv_bwd_data),
        cmocka_unit_test(test_conv_bwd_filter),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_pointwise_modes),
        cmocka_unit_test(test_pointwise_attributes),
        cmocka_unit_test(test_pointwise_comparisons),
        cmocka_unit_test(test_pointwise_layouts),
        cmocka_unit_test(test_pointwise_chains),
        cmocka_unit_test(test_reduction),
        cmocka_unit_test(test_batchnorm_inference),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_rmsnorm),
        cmocka_unit_test(test_norm_train),
        cmocka_unit_test(test_norm_train_plan_round_trip),
        cmocka_unit_test(test_sdpa_fwd),
        cmocka_unit_test(test_sdpa_bwd),
        cmocka_unit_test(test_index_argmax),
        cmocka_unit_test(test_index_topk),
        cmocka_unit_test(test_index_gather),
        cmocka_unit_test(test_index_gather_refusals),
        cmocka_unit_test(test_index_plan_round_trip),
        OPS_MISALIGNED(test_index_argmax),
        OPS_MISALIGNED(test_index_gather),
        cmocka_unit_test(test_pooling),
        cmocka_unit_test(test_pooling_bwd_resize),
        OPS_MISALIGNED(test_pooling),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_data_movement),
        cmocka_unit_test(test_fused_conv_bias_relu),
        cmocka_unit_test(test_fused_matmul_bias_gelu_residual),
        OPS_MISALIGNED(test_matmul),
        OPS_MISALIGNED(test_conv_fwd),
        OPS_MISALIGNED(test_pointwise_chains),
        OPS_MISALIGNED(test_softmax),
        OPS_MISALIGNED(test_data_movement),
        OPS_MISALIGNED(test_fused_conv_bias_relu),
        OPS_MISALIGNED(test_fused_matmul_bias_gelu_residual),
        cmocka_unit_test(test_concurrent_execute),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("ops", tests, h_setup, h_teardown);
}
