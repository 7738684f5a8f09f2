/*
 * cases.h -- the cmocka tests of the op suite, one per op family.
 */
#ifndef CDNN_TESTS_OPS_CASES_H
#define CDNN_TESTS_OPS_CASES_H

#include <cdnn/cdnn.h>

/** The floating types every family runs over. */
extern const cdnn_data_type_t ops_float_types[];
extern const int ops_float_type_count;

void test_conv_fwd(void **state);
void test_conv_bwd_data(void **state);
void test_conv_bwd_filter(void **state);
void test_matmul(void **state);
void test_pointwise_modes(void **state);
void test_pointwise_attributes(void **state);
void test_pointwise_comparisons(void **state);
void test_pointwise_layouts(void **state);
void test_pointwise_chains(void **state);
void test_reduction(void **state);
void test_batchnorm_inference(void **state);
void test_layernorm(void **state);
void test_rmsnorm(void **state);
void test_norm_train(void **state);
void test_norm_train_plan_round_trip(void **state);
void test_sdpa_fwd(void **state);
void test_sdpa_bwd(void **state);
void test_index_argmax(void **state);
void test_index_topk(void **state);
void test_index_gather(void **state);
void test_index_gather_refusals(void **state);
void test_index_plan_round_trip(void **state);
void test_pooling(void **state);
void test_pooling_bwd_resize(void **state);
void test_softmax(void **state);
void test_data_movement(void **state);
void test_fused_conv_bias_relu(void **state);
void test_fused_matmul_bias_gelu_residual(void **state);
void test_concurrent_execute(void **state);

#endif
