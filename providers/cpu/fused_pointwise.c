/*
 * fused_pointwise.c -- the cpu:fused_pointwise engine: a graph made only
 * of pointwise nodes, in one pass over its output elements.
 *
 * Each block of output elements is computed through the whole DAG in an
 * L1-resident float buffer (see pw_program.h): inputs are read once,
 * outputs written once, intermediates never reach memory.  Large outputs
 * are split over device->cpu_threads threads.
 *
 * f16 and bf16 tensors are widened to float on load and rounded to
 * nearest even on store.  The graph's compute type is not checked: it
 * names the precision sums accumulate in, and pointwise work sums
 * nothing, so float (finer than f16 and bf16 by 13 and 16 bits) serves
 * any compute type.
 */
#include <stdlib.h>

#include "cpu_engine.h"
#include "pw_program.h"

typedef struct fused_context {
    cpu_graph_t graph; /* for the uids of the tensors the program names */
    pw_program_t program;
} fused_context_t;

static cdnn_status_t fused_applicable(const cdnn_graph_view_t *graph)
{
    pw_program_t *p = malloc(sizeof *p);
    if (!p)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = pw_compile_graph(p, graph, 0, -1, 1);
    free(p);
    return st;
}

static void fused_destroy(void *context)
{
    fused_context_t *ctx = context;
    if (!ctx)
        return;
    cpu_graph_free(&ctx->graph);
    free(ctx);
}

static cdnn_status_t fused_create(const cdnn_device_view_t *device,
                                  const cdnn_graph_view_t *graph,
                                  const cdnn_knob_value_t *knobs,
                                  int32_t knob_count, void **context)
{
    (void)knobs;
    (void)knob_count;
    fused_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = pw_compile_graph(&ctx->program, graph, 0, -1,
                                        device->cpu_threads);
    if (st == CDNN_STATUS_SUCCESS)
        st = cpu_graph_copy(&ctx->graph, graph);
    if (st != CDNN_STATUS_SUCCESS) {
        fused_destroy(ctx);
        return st;
    }
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t fused_workspace_size(void *context, size_t *bytes)
{
    (void)context;
    *bytes = 0;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t fused_execute(void *context, const cdnn_exec_args_t *args)
{
    const fused_context_t *ctx = context;
    void *ptrs[PW_MAX_GRAPH_TENSORS];
    cdnn_status_t st = cpu_bind_tensors(&ctx->graph.view, args, ptrs);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    pw_binding_t binding = {.tensors = ptrs};
    pw_run(&ctx->program, &binding, ctx->program.total);
    return CDNN_STATUS_SUCCESS;
}

const cpu_engine_t cpu_fused_pointwise_engine = {
    .applicable = fused_applicable,
    .create = fused_create,
    .workspace_size = fused_workspace_size,
    .execute = fused_execute,
    .destroy = fused_destroy,
};
