/*
 * provider.c -- the CPU provider's ABI table over its engines.
 */
#include "cpu_engine.h"

#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/engines.h>
#include <cdnn_sdk/error.h>
#include <cdnn_sdk/payload_graph.h>

#include "payload.h"

#define CPU_PROVIDER_VERSION "0.1.0"

/* The one knob: how many threads an engine's own loops use (OpenBLAS
 * keeps its own thread count). */
#define THREADS_KNOB "cpu.threads.count"

static const cdnn_knob_info_t threads_knob = {
    THREADS_KNOB,
    "threads an engine's own loops use (not OpenBLAS's); 0: all the device's",
    0, 1024, 0};

/* Rank order decides the build order: fast engines first, the reference
 * engine last, since it runs anything but slowly.  The engines that split
 * their work over threads read the threads knob. */
static const sdk_engine_t cpu_engines[] = {
    {"cpu:blas_matmul", 30, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 1, &threads_knob,
     &cpu_blas_matmul_engine},
    {"cpu:blas_conv", 20, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 1, &threads_knob,
     &cpu_blas_conv_engine},
    {"cpu:fused_pointwise", 10, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 1, &threads_knob,
     &cpu_fused_pointwise_engine},
    {"cpu:softmax", 10, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 1, &threads_knob,
     &cpu_softmax_engine},
    {"cpu:copy", 10, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 1, &threads_knob,
     &cpu_copy_engine},
    {"cpu:index", 10, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 1, &threads_knob,
     &cpu_index_engine},
    {"cpu:pool", 10, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 1, &threads_knob,
     &cpu_pool_engine},
    {"cpu:resize", 10, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 1, &threads_knob,
     &cpu_resize_engine},
    {"cpu:norm_train", 10, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 1, &threads_knob,
     &cpu_norm_train_engine},
    {"cpu:sdpa_bwd", 10, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 1, &threads_knob,
     &cpu_sdpa_bwd_engine},
    {"cpu:reference", 0, CPU_PAYLOAD_MAJOR, CPU_PAYLOAD_MINOR, 0, NULL,
     &cpu_reference_engine},
};
static const sdk_engine_table_t cpu_table = SDK_ENGINE_TABLE(cpu_engines);

/* What runs an engine of the table. */
static const cpu_engine_t *impl_of(const sdk_engine_t *engine)
{
    return engine->impl;
}

/* An execution context: the engine that made it, the engine's own, and
 * the payload that rebuilds it (engine, knobs, graph), made at creation so
 * that saving never fails for want of the graph.  A restored context also
 * keeps the graph its payload carries (decoded by the host), which cdnn
 * checks the plan's tensor table against. */
typedef struct cpu_context {
    const sdk_engine_t *engine;
    const cdnn_provider_host_t *host;
    void *inner;
    uint8_t *payload;
    size_t payload_size;
    sdk_payload_graph_t restored; /* .view NULL unless restored */
} cpu_context_t;

/* The provider's state is the host's table: its services (graph bytes for
 * payloads, logging) are all the state the provider has. */
static cdnn_status_t cpu_init(const cdnn_provider_host_t *host, void **state)
{
    *state = NULL;
    if (!host || host->struct_size < sizeof *host || !host->graph_encode)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the cdnn loading this provider offers no graph encoding");
    *state = (void *)host;
    return CDNN_STATUS_SUCCESS;
}

static void cpu_fini(void *state)
{
    (void)state;
}

static int32_t cpu_engine_count(void *state)
{
    (void)state;
    return sdk_engine_count(&cpu_table);
}

static cdnn_status_t cpu_engine_info(void *state, int32_t index,
                                     cdnn_provider_engine_t *info)
{
    (void)state;
    return sdk_engine_info(&cpu_table, index, info);
}

static int32_t cpu_knob_count(void *state, int32_t index)
{
    (void)state;
    return sdk_knob_count(&cpu_table, index);
}

static cdnn_status_t cpu_knob_info(void *state, int32_t index, int32_t knob,
                                   cdnn_knob_info_t *info)
{
    (void)state;
    return sdk_knob_info(&cpu_table, index, knob, info);
}

/* Benchmarking also times a threaded engine on one thread: small problems
 * often run faster without the split. */
static int32_t cpu_variant_count(void *state, int32_t index,
                                 const cdnn_device_view_t *device,
                                 const cdnn_graph_view_t *graph)
{
    (void)graph;
    return device->cpu_threads > 1 ? cpu_knob_count(state, index) : 0;
}

static cdnn_status_t cpu_variant_knob(void *state, int32_t index,
                                      const cdnn_device_view_t *device,
                                      const cdnn_graph_view_t *graph, int32_t variant,
                                      cdnn_knob_value_t *knob)
{
    if (variant != 0 || cpu_variant_count(state, index, device, graph) == 0)
        return sdk_fail(CDNN_STATUS_NOT_FOUND, "no variant number %d", variant);
    *knob = (cdnn_knob_value_t){THREADS_KNOB, 1};
    return CDNN_STATUS_SUCCESS;
}

/* The device an engine sees: the knob may lower its thread count. */
static cdnn_device_view_t with_threads(const cdnn_device_view_t *device,
                                       const cdnn_knob_value_t *knobs, int32_t count)
{
    cdnn_device_view_t d = *device;
    int64_t threads = cpu_knob(knobs, count, THREADS_KNOB, 0);
    if (threads > 0 && threads < d.cpu_threads)
        d.cpu_threads = (int32_t)threads;
    return d;
}

static cdnn_status_t check_device(const cdnn_device_view_t *device)
{
    if (device->kind != CDNN_DEVICE_CPU)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "runs on the CPU only, not on %s", device->name);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t cpu_applicable(void *state, int32_t index,
                                    const cdnn_device_view_t *device,
                                    const cdnn_graph_view_t *graph)
{
    (void)state;
    const sdk_engine_t *e = NULL;
    cdnn_status_t st = sdk_engine_at(&cpu_table, index, &e);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_device(device);
    if (st == CDNN_STATUS_SUCCESS)
        st = impl_of(e)->applicable(graph);
    return st;
}

static void context_free(cpu_context_t *ctx)
{
    if (!ctx)
        return;
    if (ctx->inner)
        impl_of(ctx->engine)->destroy(ctx->inner);
    sdk_payload_graph_release(&ctx->restored);
    free(ctx->payload);
    free(ctx);
}

static cdnn_status_t make_payload(cpu_context_t *ctx, const cdnn_graph_view_t *graph,
                                  const cdnn_knob_value_t *knobs, int32_t knob_count)
{
    sdk_payload_graph_t encoded;
    cdnn_status_t st = sdk_payload_graph_encode(ctx->host, graph, &encoded);
    if (st == CDNN_STATUS_SUCCESS)
        st = cpu_payload_encode(ctx->engine->name, knobs, knob_count, encoded.bytes,
                                encoded.size, &ctx->payload, &ctx->payload_size);
    sdk_payload_graph_release(&encoded);
    return st;
}

/* A context for engine index; restored: made from a saved payload (which
 * cdnn keeps and saves itself), else its payload is made from the graph. */
static cdnn_status_t context_new(void *state, int32_t index,
                                 const cdnn_device_view_t *device,
                                 const cdnn_graph_view_t *graph,
                                 const cdnn_knob_value_t *knobs, int32_t knob_count,
                                 int restored, void **context)
{
    cdnn_status_t st = cpu_applicable(state, index, device, graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    cpu_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    ctx->engine = &cpu_engines[index];
    ctx->host = state;
    cdnn_device_view_t threads = with_threads(device, knobs, knob_count);
    st = impl_of(ctx->engine)->create(&threads, graph, knobs, knob_count, &ctx->inner);
    if (st == CDNN_STATUS_SUCCESS && !restored)
        st = make_payload(ctx, graph, knobs, knob_count);
    if (st != CDNN_STATUS_SUCCESS) {
        context_free(ctx);
        return st;
    }
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t cpu_context_create(void *state, int32_t index,
                                        const cdnn_device_view_t *device,
                                        const cdnn_graph_view_t *graph,
                                        const cdnn_knob_value_t *knobs,
                                        int32_t knob_count, void **context)
{
    return context_new(state, index, device, graph, knobs, knob_count, 0, context);
}

static cdnn_status_t cpu_context_save(void *context, void *buf, size_t cap,
                                      size_t *size)
{
    const cpu_context_t *ctx = context;
    if (ctx->restored.view)
        return sdk_fail(CDNN_STATUS_BAD_STATE, "this plan was loaded from saved bytes; "
                        "cdnn saves it from those bytes and does not call the provider");
    *size = ctx->payload_size;
    if (!buf)
        return CDNN_STATUS_SUCCESS;
    if (cap < ctx->payload_size)
        return sdk_fail(CDNN_STATUS_SIZE_INSUFFICIENT, "the payload needs %zu bytes, "
                        "%zu given", ctx->payload_size, cap);
    memcpy(buf, ctx->payload, ctx->payload_size);
    return CDNN_STATUS_SUCCESS;
}

/* Build a context from a decoded payload's graph, as a build would, and
 * keep the decoded graph, which cdnn checks the plan's record against.
 * The payload's knobs must be ones a build could have passed. */
static cdnn_status_t restore_from(void *state, int32_t index,
                                  const cdnn_device_view_t *device,
                                  const cpu_payload_t *p, void **context)
{
    sdk_payload_graph_t graph;
    cdnn_status_t st = sdk_check_payload_knobs(&cpu_engines[index], p->knobs,
                                               p->knob_count);
    if (st == CDNN_STATUS_SUCCESS)
        st = sdk_payload_graph_decode(state, p->graph, p->graph_size, &graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = context_new(state, index, device, graph.view, p->knobs, p->knob_count, 1,
                     context);
    if (st != CDNN_STATUS_SUCCESS) {
        sdk_payload_graph_release(&graph);
        return st;
    }
    ((cpu_context_t *)*context)->restored = graph;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t cpu_context_restore(void *state, int32_t index,
                                         const cdnn_device_view_t *device,
                                         const cdnn_graph_view_t *graph,
                                         const void *payload, size_t size,
                                         void **context)
{
    (void)graph; /* the payload carries the graph the plan was built from */
    const sdk_engine_t *e = NULL;
    cpu_payload_t p;
    cdnn_status_t st = sdk_engine_at(&cpu_table, index, &e);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = cpu_payload_decode(payload, size, &p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (strcmp(p.engine, e->name) != 0)
        st = sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the payload is for engine %s, not %s",
                      p.engine, e->name);
    else
        st = restore_from(state, index, device, &p, context);
    cpu_payload_free(&p);
    return st;
}

static cdnn_status_t cpu_workspace_size(void *context, size_t *bytes)
{
    cpu_context_t *ctx = context;
    return impl_of(ctx->engine)->workspace_size(ctx->inner, bytes);
}

static cdnn_status_t cpu_execute(void *context, const cdnn_exec_args_t *args)
{
    cpu_context_t *ctx = context;
    return impl_of(ctx->engine)->execute(ctx->inner, args);
}

static void cpu_context_destroy(void *context)
{
    context_free(context);
}

static cdnn_status_t cpu_context_graph(void *context, const cdnn_graph_view_t **graph)
{
    const cpu_context_t *ctx = context;
    *graph = ctx->restored.view;
    if (!*graph)
        return sdk_fail(CDNN_STATUS_BAD_STATE, "the context was built, not restored; "
                        "cdnn holds its graph");
    return CDNN_STATUS_SUCCESS;
}

/* CPU payloads carry no code object: what runs is this provider's own
 * engines, chosen by name, so there is nothing a kernel pack must vouch
 * for.  The payload is still checked to be one of ours. */
static cdnn_status_t cpu_code_trusted(void *state, int32_t index, const void *payload,
                                      size_t size)
{
    (void)state;
    (void)index;
    cpu_payload_t p;
    cdnn_status_t st = cpu_payload_decode(payload, size, &p);
    if (st == CDNN_STATUS_SUCCESS)
        cpu_payload_free(&p);
    return st;
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
    .last_error = sdk_last_error,
    .context_save = cpu_context_save,
    .context_restore = cpu_context_restore,
    .knob_count = cpu_knob_count,
    .knob_info = cpu_knob_info,
    .variant_count = cpu_variant_count,
    .variant_knob = cpu_variant_knob,
    .code_trusted = cpu_code_trusted,
    .context_graph = cpu_context_graph,
};

__attribute__((visibility("default"))) const cdnn_provider_t *
cdnn_provider_entry(void)
{
    return &cpu_provider;
}
