/*
 * reference.c -- the cpu:reference engine: runs any valid graph, node by
 * node, in graph order.
 *
 * Virtual tensors live in the workspace, each in its own data type, so an
 * intermediate is rounded exactly as a fused engine that stores it would
 * round it.  The context holds only what build time decides (a copy of the
 * graph and the workspace layout) and is never written after creation, so
 * execute may run on one context from many threads at once.
 */
#include "reference.h"

#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/numeric.h>

/* Each virtual tensor starts on its own cache line. */
#define REF_WORKSPACE_ALIGN 64

typedef struct ref_context {
    cpu_graph_t graph;
    size_t *workspace_offsets; /* per tensor; meaningful for virtual ones */
    size_t workspace_bytes;
} ref_context_t;

/* ------------------------------------------------------------------------
 * Applicability and workspace layout
 * ------------------------------------------------------------------------ */

static cdnn_status_t ref_applicable(const cdnn_graph_view_t *graph)
{
    if (graph->node_count < 1)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph has no node");
    for (int32_t i = 0; i < graph->node_count; i++)
        if ((unsigned)graph->nodes[i].op >= CDNN_OP_COUNT)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                            "node '%s' has an unknown op (%d)",
                            graph->nodes[i].name, (int)graph->nodes[i].op);
    for (int32_t i = 0; i < graph->tensor_count; i++)
        if (cdnn_data_type_size(graph->tensors[i].type) == 0)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                            "tensor '%s' has an unknown data type (%d)",
                            graph->tensors[i].name,
                            (int)graph->tensors[i].type);
    return CDNN_STATUS_SUCCESS;
}

/* Bytes a tensor spans through its strides: room for its largest offset. */
static size_t tensor_span_bytes(const cdnn_tensor_view_t *t)
{
    int64_t last = 0;
    for (int32_t d = 0; d < t->rank; d++)
        last += (t->dims[d] - 1) * t->strides[d];
    return (size_t)(last + 1) * cdnn_data_type_size(t->type);
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* Give every virtual tensor its own slice of the workspace. */
static void lay_out_workspace(ref_context_t *ctx)
{
    const cdnn_graph_view_t *g = &ctx->graph.view;
    size_t next = 0;
    for (int32_t i = 0; i < g->tensor_count; i++) {
        if (!g->tensors[i].is_virtual)
            continue;
        ctx->workspace_offsets[i] = next;
        next += round_up(tensor_span_bytes(&g->tensors[i]),
                         REF_WORKSPACE_ALIGN);
    }
    ctx->workspace_bytes = next;
}

/* ------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------ */

static void ref_destroy(void *context)
{
    ref_context_t *ctx = context;
    if (!ctx)
        return;
    cpu_graph_free(&ctx->graph);
    free(ctx->workspace_offsets);
    free(ctx);
}

static cdnn_status_t ref_create(const cdnn_device_view_t *device,
                                const cdnn_graph_view_t *graph,
                                const cdnn_knob_value_t *knobs,
                                int32_t knob_count, void **context)
{
    (void)device; /* single-threaded: cpu_threads is only an upper bound */
    (void)knobs;  /* the reference engine has no knobs */
    (void)knob_count;
    ref_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = cpu_graph_copy(&ctx->graph, graph);
    if (st != CDNN_STATUS_SUCCESS) {
        free(ctx);
        return st;
    }
    ctx->workspace_offsets =
        calloc((size_t)graph->tensor_count + 1, sizeof *ctx->workspace_offsets);
    if (!ctx->workspace_offsets) {
        ref_destroy(ctx);
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    lay_out_workspace(ctx);
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t ref_workspace_size(void *context, size_t *bytes)
{
    const ref_context_t *ctx = context;
    *bytes = ctx->workspace_bytes;
    return CDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------
 * Execution
 * ------------------------------------------------------------------------ */

/* A scalar's value is read as its type holds it: an f16 scalar of 0.1 reads
 * as the f16 nearest 0.1, an i32 scalar of 2.7 as 2, just as if it had been
 * stored in memory. */
static void bind_tensor(const ref_context_t *ctx, int32_t i, void *ptr,
                        void *workspace, ref_tensor_t *t)
{
    const cdnn_tensor_view_t *v = &ctx->graph.view.tensors[i];
    t->view = v;
    t->elem_size = cdnn_data_type_size(v->type);
    if (v->is_scalar) {
        unsigned char element[8];
        cdnn_store_element(v->type, element, v->scalar_value);
        t->scalar = cdnn_load_element(v->type, element);
        t->scalar_int = cdnn_load_element_int(v->type, element);
    }
    else if (v->is_virtual)
        t->data = (char *)workspace + ctx->workspace_offsets[i];
    else
        t->data = ptr;
}

static ref_node_tensors_t node_tensors(const cdnn_node_view_t *node,
                                       const ref_tensor_t *tensors)
{
    ref_node_tensors_t t;
    for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
        t.in[p] = node->inputs[p] >= 0 ? &tensors[node->inputs[p]] : NULL;
    for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++)
        t.out[p] = node->outputs[p] >= 0 ? &tensors[node->outputs[p]] : NULL;
    return t;
}

static cdnn_status_t run_node(const cdnn_node_view_t *node,
                              const ref_tensor_t *tensors)
{
    ref_node_tensors_t t = node_tensors(node, tensors);
    switch (node->op) {
    case CDNN_OP_CONV_FWD: ref_conv_fwd(node, &t); break;
    case CDNN_OP_CONV_BWD_DATA: ref_conv_bwd_data(node, &t); break;
    case CDNN_OP_CONV_BWD_FILTER: ref_conv_bwd_filter(node, &t); break;
    case CDNN_OP_MATMUL: ref_matmul(node, &t); break;
    case CDNN_OP_POINTWISE: ref_pointwise(node, &t); break;
    case CDNN_OP_REDUCTION: ref_reduction(node, &t); break;
    case CDNN_OP_BATCHNORM_INFERENCE: ref_batchnorm_inference(node, &t); break;
    case CDNN_OP_LAYERNORM: ref_layernorm(node, &t); break;
    case CDNN_OP_RMSNORM: ref_rmsnorm(node, &t); break;
    case CDNN_OP_BATCHNORM_TRAIN: ref_batchnorm_train(node, &t); break;
    case CDNN_OP_BATCHNORM_RUNNING_STATS: ref_batchnorm_running_stats(node, &t); break;
    case CDNN_OP_BATCHNORM_BWD: ref_batchnorm_bwd(node, &t); break;
    case CDNN_OP_LAYERNORM_BWD: ref_layernorm_bwd(node, &t); break;
    case CDNN_OP_RMSNORM_BWD: ref_rmsnorm_bwd(node, &t); break;
    case CDNN_OP_SDPA_FWD: return ref_sdpa_fwd(node, &t);
    case CDNN_OP_SDPA_BWD: return ref_sdpa_bwd(node, &t);
    case CDNN_OP_GATHER: return ref_gather(node, &t);
    case CDNN_OP_GATHER_ELEMENTS: return ref_gather_elements(node, &t);
    case CDNN_OP_TOPK: return ref_topk(node, &t);
    case CDNN_OP_POOLING_FWD: ref_pooling_fwd(node, &t); break;
    case CDNN_OP_POOLING_BWD: return ref_pooling_bwd(node, &t);
    case CDNN_OP_RESIZE: ref_resize(node, &t); break;
    case CDNN_OP_SOFTMAX: ref_softmax(node, &t); break;
    case CDNN_OP_LOG_SOFTMAX: ref_log_softmax(node, &t); break;
    case CDNN_OP_RESHAPE: ref_reshape(node, &t); break;
    case CDNN_OP_TRANSPOSE: ref_transpose(node, &t); break;
    case CDNN_OP_CONCAT: ref_concat(node, &t); break;
    case CDNN_OP_SLICE: ref_slice(node, &t); break;
    case CDNN_OP_PAD: ref_pad(node, &t); break;
    case CDNN_OP_ARGMAX: ref_argmax(node, &t); break;
    case CDNN_OP_ARGMIN: ref_argmin(node, &t); break;
    default:
        return sdk_fail(CDNN_STATUS_INTERNAL_ERROR,
                        "node '%s' has an unknown op (%d)", node->name,
                        (int)node->op);
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t run_graph(const ref_context_t *ctx,
                               const cdnn_exec_args_t *args, void **ptrs,
                               ref_tensor_t *tensors)
{
    const cdnn_graph_view_t *g = &ctx->graph.view;
    cdnn_status_t st = cpu_bind_tensors(g, args, ptrs);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    for (int32_t i = 0; i < g->tensor_count; i++)
        bind_tensor(ctx, i, ptrs[i], args->workspace, &tensors[i]);
    for (int32_t i = 0; i < g->node_count && st == CDNN_STATUS_SUCCESS; i++)
        st = run_node(&g->nodes[i], tensors);
    return st;
}

static cdnn_status_t ref_execute(void *context, const cdnn_exec_args_t *args)
{
    const ref_context_t *ctx = context;
    if (ctx->workspace_bytes > 0 && !args->workspace)
        return sdk_fail(CDNN_STATUS_BAD_PARAM,
                        "the plan needs %zu bytes of workspace but none was "
                        "given",
                        ctx->workspace_bytes);
    /* Per-call bindings live on this call's heap: the context is shared. */
    size_t n = (size_t)ctx->graph.view.tensor_count + 1;
    void **ptrs = calloc(n, sizeof *ptrs);
    ref_tensor_t *tensors = calloc(n, sizeof *tensors);
    cdnn_status_t st;
    if (ptrs && tensors)
        st = run_graph(ctx, args, ptrs, tensors);
    else
        st = sdk_fail(CDNN_STATUS_ALLOC_FAILED,
                      "out of memory binding %zu tensors", n - 1);
    free(ptrs);
    free(tensors);
    return st;
}

const cpu_engine_t cpu_reference_engine = {
    .applicable = ref_applicable,
    .create = ref_create,
    .workspace_size = ref_workspace_size,
    .execute = ref_execute,
    .destroy = ref_destroy,
};
