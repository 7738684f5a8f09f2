/*
 * build.c -- making a context from a graph: the engine's candidate kernel
 * for it, the code object from its pack, the launch, and the payload that
 * a save writes.
 *
 * A candidate applies when the device runs its target, no candidate of the
 * same configuration (symbol and metadata) runs a better target here (a
 * v4 build beats the v3 build of one tile on an AVX-512 machine), and the
 * handler derives a launch for it.  The candidate knob picks one: 0 the
 * first that applies, i candidate i exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>
#include <cdnn_sdk/sha256.h>

#include "context.h"
#include "targets.h"

/* ---- candidates ------------------------------------------------------------------------ */

static int launch_threads(const cdnn_device_view_t *device)
{
    if (device->kind != CDNN_DEVICE_CPU || device->cpu_threads < 1)
        return 1;
    return device->cpu_threads < LAUNCH_MAX_THREADS ? device->cpu_threads
                                                    : LAUNCH_MAX_THREADS;
}

static int same_configuration(const sdk_kpack_kernel_t *a, const sdk_kpack_kernel_t *b)
{
    if (strcmp(a->symbol, b->symbol) != 0 || a->metadata_count != b->metadata_count)
        return 0;
    for (int32_t i = 0; i < a->metadata_count; i++)
        if (strcmp(a->metadata[i].key, b->metadata[i].key) != 0 ||
            strcmp(a->metadata[i].value, b->metadata[i].value) != 0)
            return 0;
    return 1;
}

/* Candidate i's target, if the device runs it and no build of the same
 * configuration is better here; else NOT_SUPPORTED and why. */
static cdnn_status_t check_best_target(const sdk_kpack_engine_t *entry, int32_t i,
                                       const cdnn_device_view_t *device)
{
    const sdk_kpack_kernel_t *k = entry->candidates[i];
    cdnn_status_t st = target_check_runnable(k->target, device);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int mine = target_preference(k->target, device);
    for (int32_t j = 0; j < entry->candidate_count; j++)
        if (same_configuration(k, entry->candidates[j]) &&
            target_preference(entry->candidates[j]->target, device) > mine)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "candidate %s (%s) has a better "
                            "build for this device: %s (%s)", k->id, k->target,
                            entry->candidates[j]->id, entry->candidates[j]->target);
    return CDNN_STATUS_SUCCESS;
}

/* SUCCESS if candidate i applies to g here; its launch values into
 * *values (malloc'd) when values is not NULL. */
static cdnn_status_t candidate_applies(const kernel_engine_t *engine, int32_t i,
                                       const cdnn_device_view_t *device,
                                       const cdnn_graph_view_t *g, int64_t **values,
                                       int32_t *count)
{
    const sdk_kpack_kernel_t *k = engine->entry->candidates[i];
    int64_t *derived = NULL;
    int32_t n = 0;
    cdnn_status_t st = check_best_target(engine->entry, i, device);
    if (st == CDNN_STATUS_SUCCESS)
        st = engine->handler->derive(g, k->metadata, k->metadata_count,
                                     launch_threads(device), &derived, &n);
    if (st == CDNN_STATUS_SUCCESS && values) {
        *values = derived;
        *count = n;
    } else
        free(derived);
    return st;
}

/* The position of the index-th candidate that applies, or -1. */
static int32_t applying_candidate(const kernel_engine_t *engine,
                                  const cdnn_device_view_t *device,
                                  const cdnn_graph_view_t *g, int32_t index)
{
    for (int32_t i = 0; i < engine->entry->candidate_count; i++)
        if (candidate_applies(engine, i, device, g, NULL, NULL) == CDNN_STATUS_SUCCESS &&
            index-- == 0)
            return i;
    return -1;
}

static int64_t candidate_knob(const kernel_engine_t *engine, const cdnn_knob_value_t *knobs,
                              int32_t count)
{
    for (int32_t i = 0; i < count; i++)
        if (strcmp(knobs[i].name, engine->candidate_knob) == 0)
            return knobs[i].value;
    return 0;
}

/* The candidate the knobs choose, and its launch values. */
static cdnn_status_t choose_candidate(const kernel_engine_t *engine,
                                      const cdnn_device_view_t *device,
                                      const cdnn_graph_view_t *g,
                                      const cdnn_knob_value_t *knobs, int32_t knob_count,
                                      int32_t *chosen, int64_t **values, int32_t *count)
{
    int64_t knob = candidate_knob(engine, knobs, knob_count);
    *chosen = knob > 0 ? (int32_t)knob - 1 : applying_candidate(engine, device, g, 0);
    if (*chosen < 0 || *chosen >= engine->entry->candidate_count)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "no candidate kernel of %s applies",
                        engine->entry->name);
    cdnn_status_t st = candidate_applies(engine, *chosen, device, g, values, count);
    if (st != CDNN_STATUS_SUCCESS && knob > 0) {
        char reason[512];
        snprintf(reason, sizeof reason, "%s", sdk_last_error(NULL));
        return sdk_fail(st, "%s=%lld chose candidate %s, which does not apply: %s",
                        engine->candidate_knob, (long long)knob,
                        engine->entry->candidates[*chosen]->id, reason);
    }
    return st;
}

/* ---- the engine's calls ----------------------------------------------------------------- */

static cdnn_status_t check_device_kind(const kernel_engine_t *engine,
                                       const cdnn_device_view_t *device)
{
    int on_host = engine->handler->kind == KERNEL_KIND_HOST;
    if (on_host != (device->kind == CDNN_DEVICE_CPU))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "its kernels run on %s, not on %s",
                        on_host ? "the CPU" : "CUDA devices", device->name);
    return CDNN_STATUS_SUCCESS;
}

/* SUCCESS if a candidate applies; else why the first one does not. */
static cdnn_status_t some_candidate_applies(const kernel_engine_t *engine,
                                            const cdnn_device_view_t *device,
                                            const cdnn_graph_view_t *g)
{
    char first[512] = "";
    for (int32_t i = 0; i < engine->entry->candidate_count; i++) {
        if (candidate_applies(engine, i, device, g, NULL, NULL) == CDNN_STATUS_SUCCESS)
            return CDNN_STATUS_SUCCESS;
        if (!first[0])
            snprintf(first, sizeof first, "%s", sdk_last_error(NULL));
    }
    return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "no candidate kernel runs this graph here; "
                    "the first says: %s", first);
}

cdnn_status_t kernel_engine_applicable(const kernel_engine_t *engine,
                                       const cdnn_device_view_t *device,
                                       const cdnn_graph_view_t *g)
{
    cdnn_status_t st = check_device_kind(engine, device);
    if (st == CDNN_STATUS_SUCCESS)
        st = engine->match->applies(&engine->constraints, g);
    return st == CDNN_STATUS_SUCCESS ? some_candidate_applies(engine, device, g) : st;
}

int32_t kernel_engine_variant_count(const kernel_engine_t *engine,
                                    const cdnn_device_view_t *device,
                                    const cdnn_graph_view_t *g)
{
    int32_t applying = 0;
    for (int32_t i = 0; i < engine->entry->candidate_count; i++)
        if (candidate_applies(engine, i, device, g, NULL, NULL) == CDNN_STATUS_SUCCESS)
            applying++;
    return applying > 1 ? applying - 1 : 0;
}

cdnn_status_t kernel_engine_variant_knob(const kernel_engine_t *engine,
                                         const cdnn_device_view_t *device,
                                         const cdnn_graph_view_t *g, int32_t index,
                                         cdnn_knob_value_t *knob)
{
    /* Variant 0 is the second candidate that applies: the first is the
     * default, which benchmarking times anyway. */
    int32_t position = index >= 0 ? applying_candidate(engine, device, g, index + 1) : -1;
    if (position < 0)
        return sdk_fail(CDNN_STATUS_NOT_FOUND, "no variant number %d", index);
    *knob = (cdnn_knob_value_t){engine->candidate_knob, position + 1};
    return CDNN_STATUS_SUCCESS;
}

/* ---- the context -------------------------------------------------------------------------- */

static cdnn_status_t make_payload(kernel_context_t *ctx, const kernel_engine_t *engine,
                                  const cdnn_graph_view_t *g, const uint8_t *code,
                                  size_t code_size)
{
    sdk_payload_graph_t graph;
    const sdk_kpack_kernel_t *k = ctx->kernel;
    const sdk_kpack_info_t *pack = sdk_kpack_info(ctx->pack);
    cdnn_status_t st = sdk_payload_graph_encode(ctx->host, g, &graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    kernel_payload_t p = {
        .kind = engine->handler->kind,
        .engine_id = cdnn_engine_id_from_name(engine->entry->name),
        .engine = engine->entry->name,
        .kernel_id = k->id,
        .handler = engine->handler->name,
        .handler_version = engine->handler->version,
        .launch_values = ctx->launch.values,
        .launch_count = ctx->launch.value_count,
        .target = k->target,
        .symbol = k->symbol,
        .kernel_sha256 = k->sha256,
        .signature = k->signature,
        .code = code,
        .code_size = code_size,
        .provider_version = KERNELS_PROVIDER_VERSION,
        .graph = graph.bytes,
        .graph_size = graph.size,
        .metadata = k->metadata,
        .metadata_count = k->metadata_count,
        .pack_name = pack->name,
        .pack_version = pack->version,
    };
    st = kernel_payload_encode(&p, &ctx->payload, &ctx->payload_size);
    sdk_payload_graph_release(&graph);
    return st;
}

/* The chosen kernel's code, loaded and launched, and the payload. */
static cdnn_status_t prepare(kernel_context_t *ctx, const kernel_engine_t *engine,
                             const cdnn_device_view_t *device, const cdnn_graph_view_t *g,
                             int64_t *values, int32_t count)
{
    char why[512];
    const uint8_t *code = NULL;
    size_t code_size = 0;
    cdnn_status_t st = sdk_kpack_code(ctx->pack, ctx->kernel, &code, &code_size, why,
                                      sizeof why);
    if (st != CDNN_STATUS_SUCCESS) {
        free(values);
        return sdk_fail(st, "%s", why);
    }
    const code_object_t object = {ctx->kernel->id, ctx->kernel->target, ctx->kernel->symbol,
                                  code, code_size};
    st = kernel_context_launch(ctx, device, engine->handler, &object, values, count);
    if (st == CDNN_STATUS_SUCCESS)
        st = make_payload(ctx, engine, g, code, code_size);
    return st;
}

cdnn_status_t kernel_context_build(const kernels_state_t *state, const kernel_engine_t *engine,
                                   const cdnn_device_view_t *device,
                                   const cdnn_graph_view_t *g, const cdnn_knob_value_t *knobs,
                                   int32_t knob_count, kernel_context_t **ctx)
{
    int32_t chosen = -1, count = 0;
    int64_t *values = NULL;
    cdnn_status_t st = kernel_engine_applicable(engine, device, g);
    if (st == CDNN_STATUS_SUCCESS)
        st = choose_candidate(engine, device, g, knobs, knob_count, &chosen, &values, &count);
    if (st == CDNN_STATUS_SUCCESS)
        st = kernel_context_new(state->host, ctx);
    if (st != CDNN_STATUS_SUCCESS) {
        free(values);
        return st;
    }
    (*ctx)->pack = engine->pack;
    (*ctx)->kernel = engine->entry->candidates[chosen];
    st = prepare(*ctx, engine, device, g, values, count);
    if (st != CDNN_STATUS_SUCCESS) {
        kernel_context_free(*ctx);
        *ctx = NULL;
    }
    return st;
}
