/*
 * build.c -- build options, engine selection, plans and execution.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/log.h"
#include "engine/handle.h"
#include "engine/plan.h"
#include "engine/registry.h"
#include "graph/graph.h"

/* ---- options ------------------------------------------------------------ */

struct cdnn_build_options {
    int has_pinned, has_preferred;
    uint64_t pinned, preferred;
    cdnn_knob_value_t *knobs; /* names owned */
    int32_t knob_count;
};

cdnn_status_t cdnn_build_options_create(cdnn_build_options_t **opts)
{
    CDNN_CHECK_ARG(opts);
    *opts = calloc(1, sizeof **opts);
    if (!*opts)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    return CDNN_STATUS_SUCCESS;
}

void cdnn_build_options_destroy(cdnn_build_options_t *opts)
{
    if (!opts)
        return;
    for (int32_t i = 0; i < opts->knob_count; i++)
        free((char *)opts->knobs[i].name);
    free(opts->knobs);
    free(opts);
}

cdnn_status_t cdnn_build_options_pin_engine(cdnn_build_options_t *opts,
                                            uint64_t engine_id)
{
    CDNN_CHECK_ARG(opts);
    opts->has_pinned = 1;
    opts->pinned = engine_id;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_build_options_prefer_engine(cdnn_build_options_t *opts,
                                               uint64_t engine_id)
{
    CDNN_CHECK_ARG(opts);
    opts->has_preferred = 1;
    opts->preferred = engine_id;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_knob(const char *name, int64_t value)
{
    if (strcmp(name, "global.workspace_limit") == 0)
        return value >= 0 ? CDNN_STATUS_SUCCESS
                          : cdnn_fail(CDNN_STATUS_BAD_PARAM,
                                      "knob global.workspace_limit is %lld; it "
                                      "must be >= 0 bytes", (long long)value);
    if (strcmp(name, "global.benchmarking") == 0)
        return value == 0 || value == 1
                   ? CDNN_STATUS_SUCCESS
                   : cdnn_fail(CDNN_STATUS_BAD_PARAM,
                               "knob global.benchmarking is %lld; it must be 0 or 1",
                               (long long)value);
    if (strncmp(name, "global.", 7) == 0)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "unknown knob %s; the global knobs "
                         "are global.benchmarking and global.workspace_limit", name);
    const char *dot = strchr(name, '.');
    if (!dot || dot == name || !strchr(dot + 1, '.'))
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "knob \"%s\" is not named "
                         "global.<name> or <provider>.<category>.<name>", name);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_build_options_set_knob(cdnn_build_options_t *opts,
                                          const char *name, int64_t value)
{
    CDNN_CHECK_ARG(opts);
    CDNN_CHECK_ARG(name);
    cdnn_status_t st = check_knob(name, value);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    for (int32_t i = 0; i < opts->knob_count; i++)
        if (strcmp(opts->knobs[i].name, name) == 0) {
            opts->knobs[i].value = value;
            return CDNN_STATUS_SUCCESS;
        }
    cdnn_knob_value_t *grown =
        realloc(opts->knobs, (size_t)(opts->knob_count + 1) * sizeof *grown);
    char *copy = strdup(name);
    if (!grown || !copy) {
        free(copy);
        if (grown)
            opts->knobs = grown;
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    opts->knobs = grown;
    opts->knobs[opts->knob_count++] = (cdnn_knob_value_t){copy, value};
    return CDNN_STATUS_SUCCESS;
}

static int64_t knob_value(const cdnn_build_options_t *opts, const char *name,
                          int64_t fallback)
{
    for (int32_t i = 0; opts && i < opts->knob_count; i++)
        if (strcmp(opts->knobs[i].name, name) == 0)
            return opts->knobs[i].value;
    return fallback;
}

/* ---- reasons: why each engine was passed over -------------------------- */

typedef struct reasons {
    char text[6144];
    size_t used;
} reasons_t;

static void add_reason(reasons_t *r, const engine_slot_t *e, const char *why)
{
    if (r->used < sizeof r->text)
        r->used += (size_t)snprintf(r->text + r->used, sizeof r->text - r->used,
                                    "\n  %s: %s", e->name, why);
}

/* ---- candidates ----------------------------------------------------------- */

typedef struct candidates {
    const engine_slot_t **engines;
    int32_t count;
} candidates_t;

static int goes_before(const engine_slot_t *a, const engine_slot_t *b,
                       const cdnn_build_options_t *opts)
{
    if (opts && opts->has_preferred && (a->id == opts->preferred) != (b->id == opts->preferred))
        return a->id == opts->preferred;
    return a->rank > b->rank;
}

/* Every engine that applies, in build order (stable: ties keep load order). */
static cdnn_status_t collect_candidates(cdnn_graph_t *g, const cdnn_handle_t *h,
                                        const cdnn_build_options_t *opts,
                                        candidates_t *out, reasons_t *reasons)
{
    int32_t total = registry_engine_count();
    out->count = 0;
    out->engines = calloc((size_t)total + 1, sizeof *out->engines);
    if (!out->engines)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (opts && opts->has_pinned && !registry_find(opts->pinned))
        return cdnn_fail(CDNN_STATUS_NOT_FOUND,
                         "the pinned engine id 0x%016" PRIx64 " is not served by "
                         "any loaded provider; providers were looked for in: %s",
                         opts->pinned, cdnn_provider_search_path());
    for (int32_t i = 0; i < total; i++) {
        const engine_slot_t *e = registry_engine(i);
        if (opts && opts->has_pinned && e->id != opts->pinned)
            continue;
        const cdnn_provider_t *t = e->provider->table;
        if (t->applicable(e->provider->state, e->index, &h->device, &g->view) !=
            CDNN_STATUS_SUCCESS) {
            add_reason(reasons, e, registry_provider_error(e->provider));
            continue;
        }
        int32_t at = out->count++;
        while (at > 0 && goes_before(e, out->engines[at - 1], opts)) {
            out->engines[at] = out->engines[at - 1];
            at--;
        }
        out->engines[at] = e;
    }
    return CDNN_STATUS_SUCCESS;
}

/* ---- plans ------------------------------------------------------------------ */

void plan_destroy(plan_t *plan)
{
    if (!plan)
        return;
    if (plan->context)
        plan->engine->provider->table->context_destroy(plan->context);
    free(plan);
    registry_release();
}

static cdnn_status_t try_engine(cdnn_graph_t *g, const cdnn_handle_t *h,
                                const cdnn_build_options_t *opts,
                                const engine_slot_t *e, plan_t *plan,
                                reasons_t *reasons)
{
    const cdnn_provider_t *t = e->provider->table;
    size_t workspace = 0;
    void *context = NULL;
    cdnn_knob_value_t *knobs = opts ? opts->knobs : NULL;
    int32_t knob_count = opts ? opts->knob_count : 0;
    if (t->context_create(e->provider->state, e->index, &h->device, &g->view, knobs,
                          knob_count, &context) != CDNN_STATUS_SUCCESS ||
        t->workspace_size(context, &workspace) != CDNN_STATUS_SUCCESS) {
        add_reason(reasons, e, registry_provider_error(e->provider));
        if (context)
            t->context_destroy(context);
        return CDNN_STATUS_NOT_SUPPORTED;
    }
    int64_t limit = knob_value(opts, "global.workspace_limit", -1);
    if (limit >= 0 && workspace > (uint64_t)limit) {
        char why[160];
        snprintf(why, sizeof why, "needs %zu workspace bytes, over "
                 "global.workspace_limit %lld", workspace, (long long)limit);
        add_reason(reasons, e, why);
        t->context_destroy(context);
        return CDNN_STATUS_NOT_SUPPORTED;
    }
    plan->engine = e;
    plan->context = context;
    plan->workspace = workspace;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t no_engine(const cdnn_graph_t *g, const cdnn_handle_t *h,
                               const reasons_t *reasons)
{
    return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                     "no engine can run graph '%s' on %s%s%s%s",
                     g->name ? g->name : "(unnamed)", h->device_string,
                     reasons->used ? ":" : " (no provider serves any engine; "
                                          "providers were looked for in ",
                     reasons->used ? reasons->text : cdnn_provider_search_path(),
                     reasons->used ? "" : ")");
}

static cdnn_status_t check_build_knobs(const cdnn_build_options_t *opts)
{
    const char *forced = getenv("CDNN_FORCE_BENCHMARKING");
    int64_t benchmarking = forced && *forced ? atoi(forced)
                                             : knob_value(opts, "global.benchmarking", 0);
    if (benchmarking)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                         "benchmarking plans (global.benchmarking=1 or "
                         "CDNN_FORCE_BENCHMARKING=1) are not available in this "
                         "build yet; build with benchmarking off");
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_graph_build(cdnn_graph_t *graph, cdnn_handle_t *handle,
                               const cdnn_build_options_t *opts)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(handle);
    cdnn_status_t st = cdnn_graph_validate(graph);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_build_knobs(opts);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    plan_destroy(graph->plan);
    graph->plan = NULL;

    plan_t *plan = calloc(1, sizeof *plan);
    reasons_t *reasons = calloc(1, sizeof *reasons);
    candidates_t cands = {0};
    if (!plan || !reasons || registry_acquire() != CDNN_STATUS_SUCCESS) {
        free(plan);
        free(reasons);
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory building a plan");
    }
    st = collect_candidates(graph, handle, opts, &cands, reasons);
    int32_t i = 0;
    for (st = st ? st : CDNN_STATUS_NOT_SUPPORTED; st && i < cands.count; i++)
        st = try_engine(graph, handle, opts, cands.engines[i], plan, reasons);
    if (st == CDNN_STATUS_NOT_SUPPORTED)
        no_engine(graph, handle, reasons);
    free(cands.engines);
    free(reasons);
    if (st != CDNN_STATUS_SUCCESS) {
        plan_destroy(plan);
        return st;
    }
    plan->device_kind = handle->device.kind;
    plan->device_ordinal = handle->device.ordinal;
    snprintf(plan->device_string, sizeof plan->device_string, "%s",
             handle->device_string);
    graph->plan = plan;
    cdnn_log(CDNN_LOG_INFO, "graph '%s': built with engine %s on %s",
             graph->name ? graph->name : "(unnamed)", plan->engine->name,
             plan->device_string);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_graph_applicable_engines(cdnn_graph_t *graph,
                                            cdnn_handle_t *handle, uint64_t *ids,
                                            int32_t cap, int32_t *count)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(handle);
    CDNN_CHECK_ARG(count);
    cdnn_status_t st = cdnn_graph_validate(graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    reasons_t *reasons = calloc(1, sizeof *reasons);
    candidates_t cands = {0};
    st = reasons ? collect_candidates(graph, handle, NULL, &cands, reasons)
                 : cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (st == CDNN_STATUS_SUCCESS) {
        *count = cands.count;
        for (int32_t i = 0; ids && i < cands.count && i < cap; i++)
            ids[i] = cands.engines[i]->id;
    }
    free(cands.engines);
    free(reasons);
    return st;
}

cdnn_status_t cdnn_graph_engine(const cdnn_graph_t *graph, uint64_t *engine_id,
                                const char **engine_name)
{
    CDNN_CHECK_ARG(graph);
    if (!graph->plan)
        return cdnn_fail(CDNN_STATUS_BAD_STATE, "the graph has no plan; build it first");
    if (engine_id)
        *engine_id = graph->plan->engine->id;
    if (engine_name)
        *engine_name = graph->plan->engine->name;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_graph_workspace_size(const cdnn_graph_t *graph, size_t *bytes)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(bytes);
    if (!graph->plan)
        return cdnn_fail(CDNN_STATUS_BAD_STATE, "the graph has no plan; build it first");
    *bytes = graph->plan->workspace;
    return CDNN_STATUS_SUCCESS;
}

/* ---- execution -------------------------------------------------------------- */

static cdnn_status_t check_variant_pack(const cdnn_graph_t *g, int32_t n,
                                        const int64_t *uids, void *const *ptrs)
{
    for (int32_t i = 0; i < n; i++) {
        int32_t ti = graph_find_tensor(g, uids[i]);
        if (ti < 0)
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "variant pack entry %d: uid %lld "
                             "names no tensor of the graph", i, (long long)uids[i]);
        const cdnn_tensor_view_t *t = &g->tensor_views[ti];
        if (t->is_virtual || t->is_scalar)
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "variant pack entry %d: tensor "
                             "'%s' (uid %lld) is %s and takes no pointer", i, t->name,
                             (long long)t->uid, t->is_virtual ? "virtual" : "a scalar");
        if (!ptrs[i])
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "variant pack entry %d: tensor "
                             "'%s' (uid %lld) has a NULL pointer", i, t->name,
                             (long long)t->uid);
        if (t->alignment > 0 && (uintptr_t)ptrs[i] % (uint64_t)t->alignment)
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "tensor '%s' (uid %lld) must be "
                             "aligned to %lld bytes; its pointer is %p", t->name,
                             (long long)t->uid, (long long)t->alignment, ptrs[i]);
    }
    for (int32_t ti = 0; ti < g->tensor_count; ti++) {
        const cdnn_tensor_view_t *t = &g->tensor_views[ti];
        int32_t i = 0;
        while (i < n && uids[i] != t->uid)
            i++;
        if (i == n && !t->is_virtual && !t->is_scalar)
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "tensor '%s' (uid %lld) has no "
                             "pointer in the variant pack", t->name, (long long)t->uid);
    }
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_graph_execute(const cdnn_graph_t *graph, cdnn_handle_t *handle,
                                 int32_t n, const int64_t *uids, void *const *ptrs,
                                 void *workspace)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(handle);
    if (n < 0 || (n > 0 && (!uids || !ptrs)))
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "the variant pack has %d entries "
                         "and %s arrays", n, uids && ptrs ? "its" : "NULL");
    const plan_t *plan = graph->plan;
    if (!plan)
        return cdnn_fail(CDNN_STATUS_BAD_STATE, "the graph has no plan; build it first");
    if (plan->device_kind != handle->device.kind ||
        plan->device_ordinal != handle->device.ordinal)
        return cdnn_fail(CDNN_STATUS_DEVICE_MISMATCH,
                         "the plan was built for %s but the handle is on %s; "
                         "build or load the plan again on a handle for %s",
                         plan->device_string, handle->device_string,
                         handle->device_string);
    if (plan->workspace && !workspace)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "the plan needs %zu workspace bytes "
                         "but workspace is NULL", plan->workspace);
    cdnn_status_t st = check_variant_pack(graph, n, uids, ptrs);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    cdnn_exec_args_t args = {sizeof args, n, uids, ptrs, workspace, handle->stream};
    const engine_slot_t *e = plan->engine;
    st = e->provider->table->execute(plan->context, &args);
    if (st != CDNN_STATUS_SUCCESS)
        return cdnn_fail(st, "engine %s (provider %s %s) failed: %s", e->name,
                         e->provider->table->name, e->provider->table->version,
                         registry_provider_error(e->provider));
    return CDNN_STATUS_SUCCESS;
}
