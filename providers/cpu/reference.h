/*
 * reference.h -- private to the cpu:reference engine.
 *
 * The reference engine is the oracle every other engine is tested against,
 * so it is written for obviousness, not speed: every element is read and
 * written through its tensor's strides with cdnn_load_element /
 * cdnn_store_element, and every sum is accumulated in double.  Each op
 * computes each output element on its own (a "gather"), so no op needs a
 * scratch accumulator the size of its output.
 */
#ifndef CDNN_CPU_REFERENCE_H
#define CDNN_CPU_REFERENCE_H

#include "cpu_engine.h"

/* A tensor bound for one execution: its view and where its elements are. */
typedef struct ref_tensor {
    const cdnn_tensor_view_t *view;
    char *data;       /* NULL for pass-by-value scalars */
    size_t elem_size; /* bytes of one element of view->type */
    double scalar;    /* a scalar's value, rounded to view->type */
    int64_t scalar_int; /* the same, as an integer (integer types exactly) */
} ref_tensor_t;

/*
 * The element at idx (one coordinate per dim of the tensor).  A dim of 1
 * ignores its coordinate, which is how every op broadcasts: callers index
 * an input with the output's coordinates.
 */
double ref_load(const ref_tensor_t *t, const int64_t *idx);

/* Store v at idx, rounded to the tensor's type (an integer type truncates
 * toward zero and saturates: cdnn_store_element). */
void ref_store(const ref_tensor_t *t, const int64_t *idx, double v);

/* The element at idx as an integer, exactly for integer and bool types,
 * and v stored at idx wrapped to an integer type (cdnn_store_element_int):
 * integer work goes through these so that an i64 beyond 2^53 keeps its
 * last bits. */
int64_t ref_load_int(const ref_tensor_t *t, const int64_t *idx);
void ref_store_int(const ref_tensor_t *t, const int64_t *idx, int64_t v);

/*
 * Step idx to the next coordinate of dims in row-major order.  Returns 0
 * when it wraps back to all zeros, so that
 *     do { ... } while (ref_next_index(idx, dims, rank));
 * visits every coordinate once (starting from all zeros).
 */
int ref_next_index(int64_t *idx, const int64_t *dims, int32_t rank);

/*
 * sum = a + b, coordinate by coordinate.  Ops that reduce over some dims
 * split a coordinate of x into an outer part (0 on the reduced dims) and a
 * part within the reduced window (0 elsewhere); this joins them.
 */
void ref_join_index(int64_t *sum, const int64_t *a, const int64_t *b,
                    int32_t rank);

/* max and min that propagate NaN, as NumPy's maximum and minimum do. */
double ref_max(double a, double b);
double ref_min(double a, double b);

/* The node's tensors: inputs and outputs by port, NULL where absent. */
typedef struct ref_node_tensors {
    const ref_tensor_t *in[CDNN_NODE_MAX_INPUTS];
    const ref_tensor_t *out[CDNN_NODE_MAX_OUTPUTS];
} ref_node_tensors_t;

/* One function per op; each runs a whole node. */
void ref_conv_fwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_conv_bwd_data(const cdnn_node_view_t *node,
                       const ref_node_tensors_t *t);
void ref_conv_bwd_filter(const cdnn_node_view_t *node,
                         const ref_node_tensors_t *t);
void ref_matmul(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_pointwise(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_reduction(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_batchnorm_inference(const cdnn_node_view_t *node,
                             const ref_node_tensors_t *t);
void ref_layernorm(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_batchnorm_train(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_batchnorm_running_stats(const cdnn_node_view_t *node,
                                 const ref_node_tensors_t *t);
void ref_batchnorm_bwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_layernorm_bwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_rmsnorm_bwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_rmsnorm(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
cdnn_status_t ref_sdpa_fwd(const cdnn_node_view_t *node,
                           const ref_node_tensors_t *t);
cdnn_status_t ref_sdpa_bwd(const cdnn_node_view_t *node,
                           const ref_node_tensors_t *t);
cdnn_status_t ref_gather(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
cdnn_status_t ref_gather_elements(const cdnn_node_view_t *node,
                                  const ref_node_tensors_t *t);
cdnn_status_t ref_topk(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_pooling_fwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
cdnn_status_t ref_pooling_bwd(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_resize(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_softmax(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_log_softmax(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_reshape(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_transpose(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_concat(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_slice(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_pad(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_argmax(const cdnn_node_view_t *node, const ref_node_tensors_t *t);
void ref_argmin(const cdnn_node_view_t *node, const ref_node_tensors_t *t);

/* y = f(a, b, c) for one element of a pointwise node. */
double ref_pointwise_value(const cdnn_pointwise_attr_t *attr, double a,
                           double b, double c);

/* Whether a mode has an exact integer form (arithmetic, comparisons,
 * logic, select), which a node whose inputs are all integers or bools
 * computes with ref_pointwise_int; other modes (exp, gelu, ...) compute
 * in double even then (cdnn.h, "Numeric semantics"). */
int ref_pointwise_is_exact_int(cdnn_pointwise_mode_t mode);

/* y = f(a, b, c) in 64-bit two's complement: overflow wraps, division
 * truncates toward zero, and x / 0 is 0. */
int64_t ref_pointwise_int(cdnn_pointwise_mode_t mode, int64_t a, int64_t b,
                          int64_t c);

#endif
