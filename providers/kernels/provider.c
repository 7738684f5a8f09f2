/*
 * provider.c -- the kernels provider's ABI table.
 *
 * Its engines are data: the engine entries of the kernel packs installed
 * here (packs.h), each run by a named match function and a named,
 * versioned dispatch handler of this provider.  A plan it builds carries
 * the exact code object that ran (payload.h), so that the plan runs that
 * code wherever it is loaded, whatever packs are installed there.
 */
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

#include "context.h"

static const kernels_state_t *state_of(void *state)
{
    return state;
}

static cdnn_status_t engine_of(void *state, int32_t index, const kernel_engine_t **engine)
{
    *engine = pack_set_engine(&state_of(state)->packs, index);
    return *engine ? CDNN_STATUS_SUCCESS
                   : sdk_fail(CDNN_STATUS_BAD_PARAM, "no engine number %d", index);
}

static cdnn_status_t kernels_init(const cdnn_provider_host_t *host, void **state)
{
    *state = NULL;
    if (!host || host->struct_size < sizeof *host || !host->graph_encode || !host->log)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the cdnn loading this provider offers no graph encoding");
    kernels_state_t *s = calloc(1, sizeof *s);
    if (!s)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    s->host = host;
    cdnn_status_t st = pack_set_open(host, &s->packs);
    if (st != CDNN_STATUS_SUCCESS) {
        free(s);
        return st;
    }
    *state = s;
    return CDNN_STATUS_SUCCESS;
}

static void kernels_fini(void *state)
{
    kernels_state_t *s = state;
    if (!s)
        return;
    pack_set_close(&s->packs);
    free(s);
}

static int32_t kernels_engine_count(void *state)
{
    return sdk_engine_count(&state_of(state)->packs.table);
}

static cdnn_status_t kernels_engine_info(void *state, int32_t index,
                                         cdnn_provider_engine_t *info)
{
    return sdk_engine_info(&state_of(state)->packs.table, index, info);
}

static int32_t kernels_knob_count(void *state, int32_t index)
{
    return sdk_knob_count(&state_of(state)->packs.table, index);
}

static cdnn_status_t kernels_knob_info(void *state, int32_t index, int32_t knob,
                                       cdnn_knob_info_t *info)
{
    return sdk_knob_info(&state_of(state)->packs.table, index, knob, info);
}

static cdnn_status_t kernels_applicable(void *state, int32_t index,
                                        const cdnn_device_view_t *device,
                                        const cdnn_graph_view_t *graph)
{
    const kernel_engine_t *e = NULL;
    cdnn_status_t st = engine_of(state, index, &e);
    return st == CDNN_STATUS_SUCCESS ? kernel_engine_applicable(e, device, graph) : st;
}

static cdnn_status_t kernels_context_create(void *state, int32_t index,
                                            const cdnn_device_view_t *device,
                                            const cdnn_graph_view_t *graph,
                                            const cdnn_knob_value_t *knobs,
                                            int32_t knob_count, void **context)
{
    const kernel_engine_t *e = NULL;
    cdnn_status_t st = engine_of(state, index, &e);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    return kernel_context_build(state_of(state), e, device, graph, knobs, knob_count,
                                (kernel_context_t **)context);
}

static cdnn_status_t kernels_workspace_size(void *context, size_t *bytes)
{
    const kernel_context_t *ctx = context;
    *bytes = ctx->launch.workspace_size;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t kernels_execute(void *context, const cdnn_exec_args_t *args)
{
    const kernel_context_t *ctx = context;
    return ctx->launch.handler->run(&ctx->launch, args);
}

static void kernels_context_destroy(void *context)
{
    kernel_context_free(context);
}

/* Rule 4: the code a built plan embeds must still be what its pack's file
 * holds; else the save fails, writing nothing. */
static cdnn_status_t check_code_on_disk(const kernel_context_t *ctx)
{
    char why[512];
    cdnn_status_t st = sdk_kpack_still_on_disk(ctx->pack, ctx->kernel, why, sizeof why);
    if (st == CDNN_STATUS_BAD_STATE)
        return sdk_fail(st, "the plan's code is no longer what its kernel pack holds, so "
                        "it is not saved: %s; build the plan again", why);
    /* The file could not be read (gone, unreadable, or no memory to hash
     * it): nothing is known to have changed, but nothing is checked. */
    if (st != CDNN_STATUS_SUCCESS)
        return sdk_fail(st, "the plan's code cannot be checked against its kernel pack, "
                        "so it is not saved: %s", why);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t kernels_context_save(void *context, void *buf, size_t cap,
                                          size_t *size)
{
    const kernel_context_t *ctx = context;
    if (ctx->restored.view)
        return sdk_fail(CDNN_STATUS_BAD_STATE, "this plan was loaded from saved bytes; "
                        "cdnn saves it from those bytes and does not call the provider");
    cdnn_status_t st = check_code_on_disk(ctx);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    *size = ctx->payload_size;
    if (!buf)
        return CDNN_STATUS_SUCCESS;
    if (cap < ctx->payload_size)
        return sdk_fail(CDNN_STATUS_SIZE_INSUFFICIENT, "the payload needs %zu bytes, "
                        "%zu given", ctx->payload_size, cap);
    memcpy(buf, ctx->payload, ctx->payload_size);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t kernels_context_restore(void *state, int32_t index,
                                             const cdnn_device_view_t *device,
                                             const cdnn_graph_view_t *graph,
                                             const void *payload, size_t size,
                                             void **context)
{
    (void)graph; /* the payload carries the graph the plan was built from */
    return kernel_context_restore(state_of(state), index, device, payload, size,
                                  (kernel_context_t **)context);
}

static cdnn_status_t kernels_context_graph(void *context, const cdnn_graph_view_t **graph)
{
    const kernel_context_t *ctx = context;
    *graph = ctx->restored.view;
    return *graph ? CDNN_STATUS_SUCCESS
                  : sdk_fail(CDNN_STATUS_BAD_STATE, "the context was built, not restored; "
                             "cdnn holds its graph");
}

static int32_t kernels_variant_count(void *state, int32_t index,
                                     const cdnn_device_view_t *device,
                                     const cdnn_graph_view_t *graph)
{
    const kernel_engine_t *e = NULL;
    if (engine_of(state, index, &e) != CDNN_STATUS_SUCCESS)
        return 0;
    return kernel_engine_variant_count(e, device, graph);
}

static cdnn_status_t kernels_variant_knob(void *state, int32_t index,
                                          const cdnn_device_view_t *device,
                                          const cdnn_graph_view_t *graph, int32_t variant,
                                          cdnn_knob_value_t *knob)
{
    const kernel_engine_t *e = NULL;
    cdnn_status_t st = engine_of(state, index, &e);
    return st == CDNN_STATUS_SUCCESS
               ? kernel_engine_variant_knob(e, device, graph, variant, knob)
               : st;
}

static cdnn_status_t kernels_code_trusted(void *state, int32_t index, const void *payload,
                                          size_t size)
{
    (void)index; /* any installed kernel vouches for the same code */
    return kernel_payload_trusted(state_of(state), payload, size);
}

static cdnn_status_t kernels_synchronize(void *context, void *stream)
{
    return kernel_context_synchronize(context, stream);
}

static cdnn_status_t kernels_time_execute(void *context, const cdnn_exec_args_t *args,
                                          int32_t runs, double *seconds)
{
    return kernel_context_time(context, args, runs, seconds);
}

static const cdnn_provider_t kernels_provider = {
    .abi_major = CDNN_PROVIDER_ABI_MAJOR,
    .abi_minor = CDNN_PROVIDER_ABI_MINOR,
    .struct_size = sizeof(cdnn_provider_t),
    .name = "kernels",
    .version = KERNELS_PROVIDER_VERSION,
    .init = kernels_init,
    .fini = kernels_fini,
    .engine_count = kernels_engine_count,
    .engine_info = kernels_engine_info,
    .applicable = kernels_applicable,
    .context_create = kernels_context_create,
    .workspace_size = kernels_workspace_size,
    .execute = kernels_execute,
    .context_destroy = kernels_context_destroy,
    .last_error = sdk_last_error,
    .context_save = kernels_context_save,
    .context_restore = kernels_context_restore,
    .knob_count = kernels_knob_count,
    .knob_info = kernels_knob_info,
    .variant_count = kernels_variant_count,
    .variant_knob = kernels_variant_knob,
    .code_trusted = kernels_code_trusted,
    .context_graph = kernels_context_graph,
    .synchronize = kernels_synchronize,
    .time_execute = kernels_time_execute,
};

__attribute__((visibility("default"))) const cdnn_provider_t *cdnn_provider_entry(void)
{
    return &kernels_provider;
}
