/*
 * restore.c -- a context from saved payload bytes, through the ordered load
 * checks, and the strict mode's question about them.
 *
 * kernel_payload_decode runs checks 1-8 (header to field validity); this
 * file runs the rest, in order, each refusing alone with its own message:
 *
 *    9. engine present: the payload is for the engine cdnn asks to restore;
 *   10. the device can run the target (never a v4 kernel without AVX-512);
 *   11. the handler (name and version) is one this provider has;
 *   12. the payload's signature is that handler's; and code that a pack
 *       installed here holds, named by one of that pack's entry points, is
 *       described as the pack describes it (target, signature, metadata);
 *   13. the handler accepts the launch values: it derives them again from
 *       the payload's graph (decoded and validated by cdnn) and the kernel's
 *       metadata, and they must be equal;
 *   14. the code object loads and its symbol resolves.
 *
 * Damage and inconsistency are CORRUPT_DATA; a valid payload this machine
 * or provider cannot run (a target it lacks, a handler version it lacks)
 * is NOT_SUPPORTED.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

#include "context.h"
#include "targets.h"

#define INCONSISTENT "the kernel payload is inconsistent: "

/* The calling thread's message, with words of the caller's before it. */
static cdnn_status_t prefixed(cdnn_status_t st, const char *prefix)
{
    char reason[768];
    snprintf(reason, sizeof reason, "%s", sdk_last_error(NULL));
    return sdk_fail(st, "%s%s", prefix, reason);
}

/* 9 */
static cdnn_status_t check_engine(const kernels_state_t *state, int32_t index,
                                  const kernel_payload_t *p)
{
    const kernel_engine_t *e = pack_set_engine(&state->packs, index);
    if (!e)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "no engine number %d", index);
    if (strcmp(p->engine, e->entry->name) != 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "it is for engine %s, and "
                        "the plan is for engine %s", p->engine, e->entry->name);
    return CDNN_STATUS_SUCCESS;
}

/* 10 */
static cdnn_status_t check_target(const kernel_payload_t *p, const cdnn_device_view_t *device)
{
    char prefix[320];
    cdnn_status_t st = target_check_runnable(p->target, device);
    if (st == CDNN_STATUS_SUCCESS)
        return st;
    snprintf(prefix, sizeof prefix, "the plan's kernel %s cannot run here: ", p->kernel_id);
    return prefixed(st, prefix);
}

/* 11 */
static cdnn_status_t find_handler(const kernel_payload_t *p, const dispatch_handler_t **h)
{
    *h = dispatch_handler_find(p->handler, p->handler_version);
    if (*h)
        return CDNN_STATUS_SUCCESS;
    uint32_t latest = dispatch_handler_latest(p->handler);
    if (latest)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the plan's kernel is launched by "
                        "handler %s version %u, and this provider (kernels %s) has it up to "
                        "version %u; install a newer kernels provider, or build the plan "
                        "again", p->handler, p->handler_version, KERNELS_PROVIDER_VERSION,
                        latest);
    return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the plan's kernel is launched by handler "
                    "%s, which this provider (kernels %s) does not have; install a newer "
                    "kernels provider, or build the plan again", p->handler,
                    KERNELS_PROVIDER_VERSION);
}

/* 12 */
static cdnn_status_t check_signature(const kernel_payload_t *p, const dispatch_handler_t *h)
{
    if (strcmp(p->signature, h->signature) != 0 || (int)h->kind != (int)p->kind)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "its kernel's signature is "
                        "%s (%s), and handler %s v%u launches %s (%s) kernels", p->signature,
                        kernel_kind_name(p->kind), h->name, h->version, h->signature,
                        kernel_kind_name(h->kind));
    return CDNN_STATUS_SUCCESS;
}

/* What of the installed entry k the payload p describes otherwise (they
 * share code and symbol), for the message. */
static void describe_difference(const sdk_kpack_kernel_t *k, const kernel_payload_t *p,
                                char *out, size_t size)
{
    if (strcmp(k->target, p->target) != 0) {
        snprintf(out, size, "the pack says target %s, the plan %s", k->target, p->target);
        return;
    }
    if (strcmp(k->signature, p->signature) != 0) {
        snprintf(out, size, "the pack says signature %s, the plan %s", k->signature,
                 p->signature);
        return;
    }
    for (int32_t i = 0; i < k->metadata_count || i < p->metadata_count; i++) {
        const sdk_kpack_kv_t *want = i < k->metadata_count ? &k->metadata[i] : NULL;
        const sdk_kpack_kv_t *got = i < p->metadata_count ? &p->metadata[i] : NULL;
        if (!want) {
            snprintf(out, size, "the plan's metadata adds %s=%s", got->key, got->value);
            return;
        }
        if (!got) {
            snprintf(out, size, "the plan's metadata lacks %s=%s", want->key, want->value);
            return;
        }
        if (strcmp(want->key, got->key) != 0 || strcmp(want->value, got->value) != 0) {
            snprintf(out, size, "the pack's metadata says %s=%s where the plan's says %s=%s",
                     want->key, want->value, got->key, got->value);
            return;
        }
    }
    snprintf(out, size, "the two descriptions differ");
}

/* 12, for installed code.  A cuda handler launches by the metadata (tile,
 * threads, shared memory, which params and epilogue) and the target, and
 * the kernel was compiled for its pack's: the project's wgmma kernels do
 * not check their block or shared memory, so the pack's own code under
 * another description -- a re-sealed edit of its metadata or target, or a
 * symbol swapped for a sibling's in the same cubin -- would run outside
 * what it was built for (a hang on a barrier, shared memory overrun).
 * Code no installed pack holds is the plan's own, trusted in normal mode
 * as its sender is (strict mode refuses it); a symbol no pack entry names
 * is left to check 14, which finds whether the code has it. */
static cdnn_status_t check_installed_code(const kernels_state_t *state,
                                          const kernel_payload_t *p)
{
    const sdk_kpack_kernel_t *k = pack_set_find_entry(&state->packs, p->kernel_sha256,
                                                      p->symbol);
    if (!k || pack_set_find_code(&state->packs, p->kernel_sha256, p->symbol, p->target,
                                 p->signature, p->metadata, p->metadata_count))
        return CDNN_STATUS_SUCCESS;
    char differs[400];
    describe_difference(k, p, differs, sizeof differs);
    return sdk_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "its code object is installed "
                    "here as kernel %s (symbol %s), and %s; build the plan again", k->id,
                    k->symbol, differs);
}

/* 13: the payload's graph, then its launch values derived again. */
static cdnn_status_t compare_values(const kernel_payload_t *p, const int64_t *derived,
                                    int32_t count)
{
    if (count != p->launch_count)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "it has %d launch values, "
                        "and handler %s derives %d from its graph", p->launch_count,
                        p->handler, count);
    for (int32_t i = 0; i < count; i++)
        if (derived[i] != p->launch_values[i])
            return sdk_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "its launch value %d "
                            "is %" PRId64 ", and handler %s derives %" PRId64 " from its "
                            "graph", i, p->launch_values[i], p->handler, derived[i]);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_launch_values(kernel_context_t *ctx, const kernel_payload_t *p,
                                         const dispatch_handler_t *h, int64_t **values,
                                         int32_t *count)
{
    int64_t threads = p->launch_values[LAUNCH_THREADS];
    if (threads < 1 || threads > LAUNCH_MAX_THREADS)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "its launch uses %" PRId64
                        " threads; a build uses 1 to %d", threads, LAUNCH_MAX_THREADS);
    cdnn_status_t st = sdk_payload_graph_decode(ctx->host, p->graph, p->graph_size,
                                                &ctx->restored);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = h->derive(ctx->restored.view, p->metadata, p->metadata_count, (int32_t)threads,
                   values, count);
    if (st == CDNN_STATUS_NOT_SUPPORTED)
        return prefixed(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "its handler cannot launch "
                        "a kernel for its graph: ");
    return st == CDNN_STATUS_SUCCESS ? compare_values(p, *values, *count) : st;
}

/* Checks 9-14 on a decoded payload. */
static cdnn_status_t restore_checked(const kernels_state_t *state, int32_t index,
                                     const cdnn_device_view_t *device,
                                     const kernel_payload_t *p, kernel_context_t *ctx)
{
    const dispatch_handler_t *h = NULL;
    int64_t *values = NULL;
    int32_t count = 0;
    cdnn_status_t st = check_engine(state, index, p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_target(p, device);
    if (st == CDNN_STATUS_SUCCESS)
        st = find_handler(p, &h);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_signature(p, h);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_installed_code(state, p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_launch_values(ctx, p, h, &values, &count);
    if (st != CDNN_STATUS_SUCCESS) {
        free(values);
        return st;
    }
    const code_object_t object = {p->kernel_id, p->target, p->symbol, p->code, p->code_size};
    return kernel_context_launch(ctx, device, h, &object, values, count);
}

cdnn_status_t kernel_context_restore(const kernels_state_t *state, int32_t engine_index,
                                     const cdnn_device_view_t *device, const uint8_t *payload,
                                     size_t size, kernel_context_t **ctx)
{
    kernel_payload_t p;
    cdnn_status_t st = kernel_payload_decode(payload, size, &p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = kernel_context_new(state->host, ctx);
    if (st == CDNN_STATUS_SUCCESS)
        st = restore_checked(state, engine_index, device, &p, *ctx);
    kernel_payload_free(&p);
    if (st != CDNN_STATUS_SUCCESS) {
        kernel_context_free(*ctx);
        *ctx = NULL;
    }
    return st;
}

cdnn_status_t kernel_payload_trusted(const kernels_state_t *state, const uint8_t *payload,
                                     size_t size)
{
    kernel_payload_t p;
    char hex[SDK_SHA256_HEX_SIZE];
    cdnn_status_t st = kernel_payload_decode(payload, size, &p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (!pack_set_find_code(&state->packs, p.kernel_sha256, p.symbol, p.target, p.signature,
                            p.metadata, p.metadata_count)) {
        sdk_sha256_hex(p.kernel_sha256, hex);
        st = sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the plan's kernel %s (%s, SHA-256 %s) is "
                      "in no kernel pack installed here (searched: %s)", p.kernel_id,
                      p.target, hex, state->packs.path);
    }
    kernel_payload_free(&p);
    return st;
}
