/*
 * save.c -- saving and loading graphs, plans and containers (docs/CONTRACT.md).
 *
 * A plan's bytes are made once and kept: the first save of a built plan
 * encodes the provider's payload in the plan envelope; a loaded plan keeps
 * the bytes it came from.  Every later save returns those bytes, so a
 * loaded plan re-saves byte for byte without calling its provider.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "core/error.h"
#include "engine/handle.h"
#include "engine/plan.h"
#include "engine/plan_check.h"
#include "engine/registry.h"
#include "format/blob.h"
#include "format/container_format.h"
#include "format/graph_format.h"
#include "format/graph_json.h"
#include "format/plan_format.h"
#include "graph/graph.h"

/* ---- saving ---------------------------------------------------------------- */

/* A provider that ran out of memory says so (ALLOC_FAILED, as every other
 * failed allocation of a save); any other refusal is the engine's. */
static cdnn_status_t provider_save_failed(const engine_slot_t *e, cdnn_status_t st)
{
    return cdnn_fail(st == CDNN_STATUS_ALLOC_FAILED ? st : CDNN_STATUS_EXECUTION_FAILED,
                     "engine %s could not save its plan: %s", e->name,
                     registry_provider_error(e->provider));
}

static cdnn_status_t payload_size(const candidate_t *c, size_t *size)
{
    const engine_slot_t *e = c->engine;
    const cdnn_provider_t *t = e->provider->table;
    if (!t->context_save)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED, "engine %s (provider %s %s) cannot "
                         "save plans", e->name, t->name, t->version);
    *size = 0;
    cdnn_status_t st = t->context_save(c->context, NULL, 0, size);
    return st == CDNN_STATUS_SUCCESS ? st : provider_save_failed(e, st);
}

/* The provider writes its payload straight into the plan being encoded. */
static cdnn_status_t write_payload(void *writer, uint8_t *dst, size_t size)
{
    const candidate_t *c = writer;
    size_t written = size;
    cdnn_status_t st = c->engine->provider->table->context_save(c->context, dst, size,
                                                                &written);
    if (st != CDNN_STATUS_SUCCESS)
        return provider_save_failed(c->engine, st);
    if (written != size)
        return cdnn_fail(CDNN_STATUS_INTERNAL_ERROR, "engine %s said its payload "
                         "takes %zu bytes, then wrote %zu", c->engine->name, size,
                         written);
    return CDNN_STATUS_SUCCESS;
}

/* Rule 3: a benchmarking plan saves only once it has chosen. */
#define NOT_CHOSEN_MESSAGE                                                     \
    "the plan has not chosen a kernel yet; execute it once, or build it with " \
    "benchmarking off, then save"

static cdnn_status_t encode_plan(const plan_t *plan, uint8_t **bytes, size_t *size)
{
    const candidate_t *c = plan_chosen(plan);
    if (!c)
        return cdnn_fail(CDNN_STATUS_BAD_STATE, NOT_CHOSEN_MESSAGE);
    size_t size_of_payload = 0;
    cdnn_status_t st = payload_size(c, &size_of_payload);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const engine_slot_t *e = c->engine;
    plan_record_t r = {
        .engine_id = e->id,
        .engine_name = e->name,
        .provider_name = e->provider->table->name,
        .provider_version = e->provider->table->version,
        .device_kind = plan->device_kind,
        .device_arch = plan->device_arch,
        .tensors = plan->tensors,
        .tensor_count = plan->tensor_count,
        .workspace_size = c->workspace,
        .payload_major = e->payload_major,
        .payload_minor = e->payload_minor,
        .payload_size = size_of_payload,
        .write_payload = write_payload,
        .writer = (void *)c,
        .content_key = plan->content_key,
    };
    return plan_format_encode(&r, bytes, size);
}

/* The plan's bytes: made by the first save, under the lock, then kept.
 * They are read under the lock too: a save that fails (rule 3) may run
 * while another thread's first save is writing them. */
static cdnn_status_t plan_bytes(plan_t *plan, const uint8_t **bytes, size_t *size)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    pthread_mutex_lock(&plan->save_lock);
    if (!plan->saved)
        st = encode_plan(plan, &plan->saved, &plan->saved_size);
    *bytes = plan->saved;
    *size = plan->saved_size;
    pthread_mutex_unlock(&plan->save_lock);
    return st;
}

static cdnn_status_t need_graph(const cdnn_graph_t *g)
{
    if (g->plan_only)
        return cdnn_fail(CDNN_STATUS_BAD_STATE, "the graph was loaded from a bare plan "
                         "and has no graph to save; save it in PLAN form");
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t need_plan(const cdnn_graph_t *g)
{
    if (!g->plan)
        return cdnn_fail(CDNN_STATUS_BAD_STATE, "the graph has no plan to save; build "
                         "it (or load a plan) first, or save it in GRAPH form");
    return CDNN_STATUS_SUCCESS;
}

/* The bytes of a form; *owned is set when the caller must free them. */
static cdnn_status_t form_bytes(cdnn_graph_t *g, cdnn_save_form_t form,
                                const uint8_t **bytes, size_t *size, uint8_t **owned)
{
    *owned = NULL;
    uint8_t *graph_bytes = NULL;
    size_t graph_size = 0;
    const uint8_t *plan = NULL;
    size_t plan_size = 0;
    cdnn_status_t st;
    switch (form) {
    case CDNN_SAVE_GRAPH:
        if ((st = need_graph(g)) || (st = graph_format_encode(g, owned, size)))
            return st;
        *bytes = *owned;
        return CDNN_STATUS_SUCCESS;
    case CDNN_SAVE_PLAN:
        if ((st = need_plan(g)))
            return st;
        return plan_bytes(g->plan, bytes, size);
    case CDNN_SAVE_GRAPH_AND_PLAN:
        if ((st = need_graph(g)) || (st = need_plan(g)) ||
            (st = plan_bytes(g->plan, &plan, &plan_size)) ||
            (st = graph_format_encode(g, &graph_bytes, &graph_size)))
            return st;
        st = container_encode(graph_bytes, graph_size, plan, plan_size, owned, size);
        free(graph_bytes);
        *bytes = *owned;
        return st;
    }
    return cdnn_fail(CDNN_STATUS_BAD_PARAM, "save form %d is not GRAPH, PLAN or "
                     "GRAPH_AND_PLAN", (int)form);
}

cdnn_status_t cdnn_graph_save(cdnn_graph_t *graph, cdnn_save_form_t form, void *buf,
                              size_t cap, size_t *size)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(size);
    const uint8_t *bytes = NULL;
    uint8_t *owned = NULL;
    size_t n = 0;
    cdnn_status_t st = form_bytes(graph, form, &bytes, &n, &owned);
    if (st == CDNN_STATUS_SUCCESS) {
        *size = n;
        if (buf && cap < n)
            st = cdnn_fail(CDNN_STATUS_SIZE_INSUFFICIENT, "the buffer holds %zu bytes "
                           "and the saved form needs %zu; nothing was written", cap, n);
        else if (buf)
            memcpy(buf, bytes, n);
    }
    free(owned);
    return st;
}

/* ---- loading plans ------------------------------------------------------------ */

static cdnn_status_t find_engine(const plan_record_t *r, const engine_slot_t **e)
{
    *e = registry_find(r->engine_id);
    if (!*e)
        return cdnn_fail(CDNN_STATUS_NOT_FOUND,
                         "the plan needs engine %s (id 0x%016" PRIx64 ", saved by "
                         "provider %s %s), which no loaded provider serves; providers "
                         "were looked for in: %s",
                         r->engine_name, r->engine_id, r->provider_name,
                         r->provider_version, cdnn_provider_search_path());
    if ((*e)->payload_major != r->payload_major || r->payload_minor > (*e)->payload_minor)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                         "the plan's payload is in %s's payload format %u.%u, and the "
                         "loaded provider (%s %s) reads %u.x up to %u.%u",
                         r->engine_name, r->payload_major, r->payload_minor,
                         (*e)->provider->table->name, (*e)->provider->table->version,
                         (*e)->payload_major, (*e)->payload_major, (*e)->payload_minor);
    if (!(*e)->provider->table->context_restore)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED, "engine %s (provider %s %s) cannot "
                         "load plans", r->engine_name, (*e)->provider->table->name,
                         (*e)->provider->table->version);
    return CDNN_STATUS_SUCCESS;
}

/* Rule 10: in strict mode the provider must vouch that the payload's code
 * is in an installed kernel pack. */
static cdnn_status_t check_trusted(const plan_record_t *r, const engine_slot_t *e)
{
    const char *mode = env_get(CDNN_ENV_TRUSTED_CODE);
    if (!mode || !*mode)
        return CDNN_STATUS_SUCCESS;
    if (strcmp(mode, "pack") != 0)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "CDNN_TRUSTED_CODE=%s is not a mode "
                         "this cdnn knows; the strict mode is \"pack\"", mode);
    const cdnn_provider_t *t = e->provider->table;
    if (!PROVIDER_HAS(t, code_trusted))
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED, "strict mode (CDNN_TRUSTED_CODE=pack): "
                         "provider %s %s cannot vouch for the code in plans of engine "
                         "%s, so the plan is refused", t->name, t->version, e->name);
    cdnn_status_t st = t->code_trusted(e->provider->state, e->index, r->payload,
                                       r->payload_size);
    if (st == CDNN_STATUS_SUCCESS)
        return st;
    /* A payload too damaged to say what code it holds stays damage, and a
     * failed allocation stays one: only an intact payload whose code no
     * pack vouches for is "not supported" here. */
    if (st != CDNN_STATUS_CORRUPT_DATA && st != CDNN_STATUS_ALLOC_FAILED)
        st = CDNN_STATUS_NOT_SUPPORTED;
    return cdnn_fail(st, "strict mode (CDNN_TRUSTED_CODE=pack): engine %s refuses the "
                     "plan's code: %s", e->name, registry_provider_error(e->provider));
}

static cdnn_status_t check_device(const plan_record_t *r, const cdnn_handle_t *h)
{
    if ((cdnn_device_kind_t)r->device_kind == h->device.kind)
        return CDNN_STATUS_SUCCESS;
    return cdnn_fail(CDNN_STATUS_DEVICE_MISMATCH,
                     "the plan was built for a %s device but the handle is on %s; "
                     "load it through a handle on a %s device",
                     r->device_kind == CDNN_DEVICE_CUDA ? "CUDA" : "CPU",
                     h->device_string, r->device_kind == CDNN_DEVICE_CUDA ? "CUDA" : "CPU");
}

/* A container's plan must have been built from the container's graph. */
static cdnn_status_t check_against_graph(const plan_record_t *r, cdnn_graph_t *g)
{
    uint8_t key[32];
    cdnn_status_t st = g ? graph_content_digest(g, key) : CDNN_STATUS_SUCCESS;
    if (st == CDNN_STATUS_SUCCESS && g && memcmp(key, r->content_key, sizeof key) != 0)
        st = cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the container's graph is not the "
                       "graph its plan was built from (their content keys differ)");
    return st;
}

/* Every part of the plan against every other: the record's tensor table,
 * content key and workspace must be what the restored context needs, so
 * that the caller's buffers, sized from the record, bound what runs. */
static cdnn_status_t check_restored(const engine_slot_t *e, const plan_record_t *r,
                                    void *context)
{
    const cdnn_provider_t *t = e->provider->table;
    const cdnn_graph_view_t *view = NULL;
    size_t workspace = 0;
    if (!PROVIDER_HAS(t, context_graph))
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED, "provider %s %s (ABI %u.%u) cannot "
                         "describe the graph a loaded plan runs (context_graph, ABI "
                         "1.2), so the plan's tensor table cannot be checked and the "
                         "plan is refused; install a provider built for ABI 1.2 or later",
                         t->name, t->version, t->abi_major, t->abi_minor);
    if (t->context_graph(context, &view) != CDNN_STATUS_SUCCESS || !view)
        return cdnn_fail(CDNN_STATUS_INTERNAL_ERROR, "engine %s restored a plan but "
                         "cannot say which graph it runs: %s", e->name,
                         registry_provider_error(e->provider));
    cdnn_status_t st = plan_check_against_graph(r, view);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (t->workspace_size(context, &workspace) != CDNN_STATUS_SUCCESS ||
        workspace != r->workspace_size)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the plan is inconsistent: it "
                         "records %" PRIu64 " workspace bytes but its payload needs %zu",
                         r->workspace_size, workspace);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t restore_context(const engine_slot_t *e, const plan_record_t *r,
                                     const cdnn_handle_t *h, const cdnn_graph_t *g,
                                     void **context)
{
    const cdnn_provider_t *t = e->provider->table;
    *context = NULL;
    /* The provider's status stands: damage, a payload it cannot read, and
     * running out of memory are different failures. */
    cdnn_status_t st = t->context_restore(e->provider->state, e->index, &h->device,
                                          g ? &g->view : NULL, r->payload,
                                          r->payload_size, context);
    if (st != CDNN_STATUS_SUCCESS)
        return cdnn_fail(st, "engine %s could not load the plan's payload: %s", e->name,
                         registry_provider_error(e->provider));
    if ((st = check_restored(e, r, *context)) != CDNN_STATUS_SUCCESS) {
        t->context_destroy(*context);
        *context = NULL;
    }
    return st;
}

/* A plain plan around a restored context (taken over), keeping the bytes
 * it came from and what its record says of its tensors and graph. */
static cdnn_status_t wrap_restored(const engine_slot_t *e, void *context,
                                   plan_record_t *r, const uint8_t *bytes, size_t size,
                                   const cdnn_handle_t *h, plan_t **out)
{
    plan_t *plan = NULL;
    cdnn_status_t st = plan_create(h, &plan);
    if (st != CDNN_STATUS_SUCCESS) {
        e->provider->table->context_destroy(context);
        return st;
    }
    st = plan_add_candidate(plan, e, context, r->workspace_size, NULL);
    if (st == CDNN_STATUS_SUCCESS && !(plan->saved = malloc(size)))
        st = cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory loading a plan");
    if (st != CDNN_STATUS_SUCCESS) {
        plan_destroy(plan);
        return st;
    }
    plan_keep_only(plan, 0);
    memcpy(plan->saved, bytes, size);
    plan->saved_size = size;
    plan->tensors = r->tensors;
    plan->tensor_count = r->tensor_count;
    r->tensors = NULL;
    memcpy(plan->content_key, r->content_key, sizeof plan->content_key);
    *out = plan;
    return CDNN_STATUS_SUCCESS;
}

/* Make a plan from plan bytes on h; g is the container's graph, or NULL. */
static cdnn_status_t load_plan(const uint8_t *bytes, size_t size, const cdnn_handle_t *h,
                               cdnn_graph_t *g, plan_t **out)
{
    plan_record_t r;
    const engine_slot_t *e = NULL;
    void *context = NULL;
    cdnn_status_t st = plan_format_decode(bytes, size, &r);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (!(st = find_engine(&r, &e)) && !(st = check_trusted(&r, e)) &&
        !(st = check_device(&r, h)) &&
        !(st = check_against_graph(&r, g)) &&
        !(st = restore_context(e, &r, h, g, &context)))
        st = wrap_restored(e, context, &r, bytes, size, h, out);
    plan_record_free(&r);
    return st;
}

/* Load plan bytes on h and give the plan to g. */
static cdnn_status_t load_plan_into(cdnn_graph_t *g, const uint8_t *bytes, size_t size,
                                    const cdnn_handle_t *h, cdnn_graph_t *container_graph)
{
    plan_t *plan = NULL;
    cdnn_status_t st = load_plan(bytes, size, h, container_graph, &plan);
    if (st == CDNN_STATUS_SUCCESS)
        graph_set_plan(g, plan, plan_destroy);
    return st;
}

/* The plan part of bytes that are a plan or a container; for a container
 * also its graph (validated), so that the plan is checked against it. */
static cdnn_status_t plan_part(const uint8_t *bytes, size_t size, const uint8_t **plan,
                               size_t *plan_size, cdnn_graph_t **graph)
{
    *graph = NULL;
    if (blob_kind(bytes, size) != BLOB_CONTAINER) {
        *plan = bytes;
        *plan_size = size;
        return blob_expect(bytes, size, BLOB_PLAN, "loading a plan");
    }
    const uint8_t *graph_bytes;
    size_t graph_size;
    cdnn_status_t st = container_decode(bytes, size, &graph_bytes, &graph_size, plan,
                                        plan_size);
    if (st == CDNN_STATUS_SUCCESS && !*plan)
        st = cdnn_fail(CDNN_STATUS_BAD_PARAM, "loading a plan: the container holds "
                       "a graph but no plan; build the graph, or load it with "
                       "cdnn_graph_load");
    if (st == CDNN_STATUS_SUCCESS)
        st = graph_format_decode(graph_bytes, graph_size, graph);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_validate(*graph);
    return st;
}

cdnn_status_t cdnn_plan_load(cdnn_graph_t **graph, cdnn_handle_t *handle,
                             const void *bytes, size_t size)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(handle);
    CDNN_CHECK_ARG(bytes);
    *graph = NULL;
    const uint8_t *plan = NULL;
    size_t plan_size = 0;
    cdnn_graph_t *g = NULL, *container_graph = NULL;
    cdnn_status_t st = plan_part(bytes, size, &plan, &plan_size, &container_graph);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_create(&g);
    if (st == CDNN_STATUS_SUCCESS)
        st = load_plan_into(g, plan, plan_size, handle, container_graph);
    cdnn_graph_destroy(container_graph);
    if (st != CDNN_STATUS_SUCCESS) {
        cdnn_graph_destroy(g);
        return st;
    }
    g->plan_only = 1;
    *graph = g;
    return CDNN_STATUS_SUCCESS;
}

/* ---- loading graphs -------------------------------------------------------------- */

/* A container's plan is checked even when only its graph is loaded: a
 * damaged container is refused whole. */
static cdnn_status_t check_plan_intact(const uint8_t *plan, size_t size)
{
    plan_record_t r;
    cdnn_status_t st = plan_format_decode(plan, size, &r);
    plan_record_free(&r);
    return st;
}

cdnn_status_t cdnn_graph_load(cdnn_graph_t **graph, cdnn_handle_t *handle,
                              const void *bytes, size_t size)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(bytes);
    *graph = NULL;
    const uint8_t *graph_bytes = bytes, *plan = NULL;
    size_t graph_size = size, plan_size = 0;
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (blob_kind(bytes, size) == BLOB_CONTAINER)
        st = container_decode(bytes, size, &graph_bytes, &graph_size, &plan, &plan_size);
    else if (blob_kind(bytes, size) == BLOB_PLAN)
        st = cdnn_fail(CDNN_STATUS_BAD_PARAM, "loading a graph: the bytes are a cdnn "
                       "plan, not a graph; load them with cdnn_plan_load");
    if (st == CDNN_STATUS_SUCCESS)
        st = graph_format_decode(graph_bytes, graph_size, &g);
    if (st == CDNN_STATUS_SUCCESS && !handle && plan)
        st = check_plan_intact(plan, plan_size);
    if (st == CDNN_STATUS_SUCCESS && handle && plan) {
        st = cdnn_graph_validate(g);
        if (st == CDNN_STATUS_SUCCESS)
            st = load_plan_into(g, plan, plan_size, handle, g);
    }
    if (st != CDNN_STATUS_SUCCESS) {
        cdnn_graph_destroy(g);
        return st;
    }
    *graph = g;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_blob_contents(const void *bytes, size_t size, uint32_t *flags)
{
    CDNN_CHECK_ARG(bytes);
    CDNN_CHECK_ARG(flags);
    *flags = 0;
    switch (blob_kind(bytes, size)) {
    case BLOB_GRAPH:
        *flags = CDNN_BLOB_GRAPH;
        return CDNN_STATUS_SUCCESS;
    case BLOB_PLAN:
        *flags = CDNN_BLOB_PLAN;
        return CDNN_STATUS_SUCCESS;
    case BLOB_CONTAINER: {
        const uint8_t *graph, *plan;
        size_t graph_size, plan_size;
        cdnn_status_t st =
            container_decode(bytes, size, &graph, &graph_size, &plan, &plan_size);
        if (st == CDNN_STATUS_SUCCESS)
            *flags = CDNN_BLOB_GRAPH | (plan ? CDNN_BLOB_PLAN : 0);
        return st;
    }
    default:
        return blob_expect(bytes, size, BLOB_GRAPH, "reading a blob");
    }
}

/* ---- JSON ------------------------------------------------------------------------ */

cdnn_status_t cdnn_graph_to_json(const cdnn_graph_t *graph, char **json)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(json);
    cdnn_status_t st = need_graph(graph);
    return st ? st : graph_json_encode(graph, json);
}

cdnn_status_t cdnn_graph_from_json(cdnn_graph_t **graph, const char *json, size_t size)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(json);
    return graph_json_decode(json, size, graph);
}
