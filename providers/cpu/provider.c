/*
 * provider.c -- the CPU provider's ABI table over its engines.
 */
#include "cpu_engine.h"

#include <stdlib.h>

#define CPU_PROVIDER_VERSION "0.1.0"

/* Rank order decides the build order: fast engines first, the reference
 * engine last, since it runs anything but slowly. */
static const cpu_engine_t *const cpu_engines[] = {
    &cpu_blas_matmul_engine,
    &cpu_blas_conv_engine,
    &cpu_fused_pointwise_engine,
    &cpu_reference_engine,
};
#define CPU_ENGINE_COUNT ((int32_t)(sizeof cpu_engines / sizeof cpu_engines[0]))

/* An execution context: the engine that made it and the engine's own. */
typedef struct cpu_context {
    const cpu_engine_t *engine;
    void *inner;
} cpu_context_t;

static cdnn_status_t cpu_init(const cdnn_provider_host_t *host, void **state)
{
    (void)host;
    *state = NULL;
    return CDNN_STATUS_SUCCESS;
}

static void cpu_fini(void *state)
{
    (void)state;
}

static int32_t cpu_engine_count(void *state)
{
    (void)state;
    return CPU_ENGINE_COUNT;
}

static cdnn_status_t engine_at(int32_t index, const cpu_engine_t **engine)
{
    if (index < 0 || index >= CPU_ENGINE_COUNT)
        return cpu_fail(CDNN_STATUS_BAD_PARAM, "no engine number %d", index);
    *engine = cpu_engines[index];
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t cpu_engine_info(void *state, int32_t index,
                                     cdnn_provider_engine_t *info)
{
    (void)state;
    const cpu_engine_t *e = NULL;
    cdnn_status_t st = engine_at(index, &e);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    info->name = e->name;
    info->rank = e->rank;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_device(const cdnn_device_view_t *device)
{
    if (device->kind != CDNN_DEVICE_CPU)
        return cpu_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "runs on the CPU only, not on %s", device->name);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t cpu_applicable(void *state, int32_t index,
                                    const cdnn_device_view_t *device,
                                    const cdnn_graph_view_t *graph)
{
    (void)state;
    const cpu_engine_t *e = NULL;
    cdnn_status_t st = engine_at(index, &e);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_device(device);
    if (st == CDNN_STATUS_SUCCESS)
        st = e->applicable(graph);
    return st;
}

static cdnn_status_t cpu_context_create(void *state, int32_t index,
                                        const cdnn_device_view_t *device,
                                        const cdnn_graph_view_t *graph,
                                        const cdnn_knob_value_t *knobs,
                                        int32_t knob_count, void **context)
{
    cdnn_status_t st = cpu_applicable(state, index, device, graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    cpu_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return cpu_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    ctx->engine = cpu_engines[index];
    st = ctx->engine->create(device, graph, knobs, knob_count, &ctx->inner);
    if (st != CDNN_STATUS_SUCCESS) {
        free(ctx);
        return st;
    }
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t cpu_workspace_size(void *context, size_t *bytes)
{
    cpu_context_t *ctx = context;
    return ctx->engine->workspace_size(ctx->inner, bytes);
}

static cdnn_status_t cpu_execute(void *context, const cdnn_exec_args_t *args)
{
    cpu_context_t *ctx = context;
    return ctx->engine->execute(ctx->inner, args);
}

static void cpu_context_destroy(void *context)
{
    cpu_context_t *ctx = context;
    if (!ctx)
        return;
    ctx->engine->destroy(ctx->inner);
    free(ctx);
}

static const char *cpu_provider_last_error(void *state)
{
    (void)state;
    return cpu_last_error();
}

static const cdnn_provider_t cpu_provider = {
    .abi_major = CDNN_PROVIDER_ABI_MAJOR,
    .abi_minor = CDNN_PROVIDER_ABI_MINOR,
    .struct_size = sizeof(cdnn_provider_t),
    .name = "cpu",
    .version = CPU_PROVIDER_VERSION,
    .init = cpu_init,
    .fini = cpu_fini,
    .engine_count = cpu_engine_count,
    .engine_info = cpu_engine_info,
    .applicable = cpu_applicable,
    .context_create = cpu_context_create,
    .workspace_size = cpu_workspace_size,
    .execute = cpu_execute,
    .context_destroy = cpu_context_destroy,
    .last_error = cpu_provider_last_error,
};

__attribute__((visibility("default"))) const cdnn_provider_t *
cdnn_provider_entry(void)
{
    return &cpu_provider;
}
