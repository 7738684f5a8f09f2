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

cdnn_status_t plan_create(const engine_slot_t *e, void *context,
                          const cdnn_handle_t *h, plan_t **out)
{
    plan_t *plan = calloc(1, sizeof *plan);
    cdnn_status_t st = plan ? registry_acquire()
                            : cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (st != CDNN_STATUS_SUCCESS) {
        free(plan);
        e->provider->table->context_destroy(context);
        return st;
    }
    plan->engine = e;
    plan->context = context;
    plan->device_kind = h->device.kind;
    plan->device_ordinal = h->device.ordinal;
    plan->device_arch = h->device.arch;
    snprintf(plan->device_string, sizeof plan->device_string, "%s", h->device_string);
    pthread_mutex_init(&plan->save_lock, NULL);
    *out = plan;
    return CDNN_STATUS_SUCCESS;
}

void plan_destroy(plan_t *plan)
{
    if (!plan)
        return;
    plan->engine->provider->table->context_destroy(plan->context);
    pthread_mutex_destroy(&plan->save_lock);
    free(plan->tensors);
    free(plan->saved);
    free(plan);
    registry_release();
}

/* Bytes a tensor's strides span: (largest offset + 1) elements. */
static uint64_t span_bytes(const cdnn_tensor_view_t *t)
{
    uint64_t last = 0;
    for (int32_t d = 0; d < t->rank; d++)
        last += (uint64_t)(t->dims[d] - 1) * (uint64_t)t->strides[d];
    return (last + 1) * cdnn_data_type_size(t->type);
}

static int is_written(const cdnn_graph_view_t *g, int32_t ti)
{
    for (int32_t n = 0; n < g->node_count; n++)
        for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++)
            if (g->nodes[n].outputs[p] == ti)
                return 1;
    return 0;
}

/* The tensors a built plan takes pointers for: not virtual, not scalar. */
static cdnn_status_t list_plan_tensors(const cdnn_graph_view_t *g, plan_t *plan)
{
    plan->tensors = calloc((size_t)g->tensor_count + 1, sizeof *plan->tensors);
    if (!plan->tensors)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    for (int32_t i = 0; i < g->tensor_count; i++) {
        const cdnn_tensor_view_t *t = &g->tensors[i];
        if (!t->is_virtual && !t->is_scalar)
            plan->tensors[plan->tensor_count++] = (plan_tensor_t){
                t->uid, t->alignment, span_bytes(t), t->type, is_written(g, i)};
    }
    return CDNN_STATUS_SUCCESS;
}

/* Create e's context and check its workspace against the limit. */
static cdnn_status_t try_engine(cdnn_graph_t *g, const cdnn_handle_t *h,
                                const cdnn_build_options_t *opts,
                                const engine_slot_t *e, void **context,
                                size_t *workspace, reasons_t *reasons)
{
    const cdnn_provider_t *t = e->provider->table;
    cdnn_knob_value_t *knobs = opts ? opts->knobs : NULL;
    int32_t knob_count = opts ? opts->knob_count : 0;
    *context = NULL;
    if (t->context_create(e->provider->state, e->index, &h->device, &g->view, knobs,
                          knob_count, context) != CDNN_STATUS_SUCCESS ||
        t->workspace_size(*context, workspace) != CDNN_STATUS_SUCCESS) {
        add_reason(reasons, e, registry_provider_error(e->provider));
        if (*context)
            t->context_destroy(*context);
        return CDNN_STATUS_NOT_SUPPORTED;
    }
    int64_t limit = knob_value(opts, "global.workspace_limit", -1);
    if (limit >= 0 && *workspace > (uint64_t)limit) {
        char why[160];
        snprintf(why, sizeof why, "needs %zu workspace bytes, over "
                 "global.workspace_limit %lld", *workspace, (long long)limit);
        add_reason(reasons, e, why);
        t->context_destroy(*context);
        return CDNN_STATUS_NOT_SUPPORTED;
    }
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

/* The first candidate whose context is created, as a plan. */
static cdnn_status_t select_engine(cdnn_graph_t *g, const cdnn_handle_t *h,
                                   const cdnn_build_options_t *opts, plan_t **out)
{
    reasons_t *reasons = calloc(1, sizeof *reasons);
    candidates_t cands = {0};
    if (!reasons)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory building a plan");
    cdnn_status_t st = collect_candidates(g, h, opts, &cands, reasons);
    if (st == CDNN_STATUS_SUCCESS) {
        st = CDNN_STATUS_NOT_SUPPORTED;
        void *context = NULL;
        size_t workspace = 0;
        const engine_slot_t *winner = NULL;
        for (int32_t i = 0; st == CDNN_STATUS_NOT_SUPPORTED && i < cands.count; i++) {
            winner = cands.engines[i];
            st = try_engine(g, h, opts, winner, &context, &workspace, reasons);
        }
        if (st == CDNN_STATUS_NOT_SUPPORTED)
            no_engine(g, h, reasons);
        else if (st == CDNN_STATUS_SUCCESS &&
                 (st = plan_create(winner, context, h, out)) == CDNN_STATUS_SUCCESS)
            (*out)->workspace = workspace;
    }
    free(cands.engines);
    free(reasons);
    return st;
}

cdnn_status_t cdnn_graph_build(cdnn_graph_t *graph, cdnn_handle_t *handle,
                               const cdnn_build_options_t *opts)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(handle);
    if (graph->plan_only)
        return cdnn_fail(CDNN_STATUS_BAD_STATE,
                         "the graph was loaded from a bare plan and has no graph "
                         "to build from; load the graph (or a container) to rebuild");
    cdnn_status_t st = cdnn_graph_validate(graph);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_build_knobs(opts);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    plan_destroy(graph->plan);
    graph->plan = NULL;
    plan_t *plan = NULL;
    st = select_engine(graph, handle, opts, &plan);
    if (st == CDNN_STATUS_SUCCESS)
        st = list_plan_tensors(&graph->view, plan);
    if (st == CDNN_STATUS_SUCCESS)
        st = graph_content_digest(graph, plan->content_key);
    if (st != CDNN_STATUS_SUCCESS) {
        plan_destroy(plan);
        return st;
    }
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

/* "tensor 'x' (uid 1)", or "tensor uid 1" where the graph is not at hand. */
static const char *tensor_label(const cdnn_graph_t *g, int64_t uid, char *buf,
                                size_t cap)
{
    int32_t ti = g->validated ? graph_find_tensor(g, uid) : -1;
    if (ti >= 0)
        snprintf(buf, cap, "tensor '%s' (uid %lld)", g->tensors[ti].name, (long long)uid);
    else
        snprintf(buf, cap, "tensor uid %lld", (long long)uid);
    return buf;
}

/* Why uid takes no pointer: virtual, scalar, or unknown. */
static const char *not_in_plan(const cdnn_graph_t *g, int64_t uid)
{
    int32_t ti = g->validated ? graph_find_tensor(g, uid) : -1;
    if (ti < 0)
        return "names no tensor the plan reads or writes";
    return g->tensor_views[ti].is_virtual ? "is virtual and takes no pointer"
                                          : "is a pass-by-value scalar and takes no pointer";
}

static cdnn_status_t check_variant_pack(const cdnn_graph_t *g, const plan_t *plan,
                                        int32_t n, const int64_t *uids,
                                        void *const *ptrs)
{
    char label[160];
    for (int32_t i = 0; i < n; i++) {
        const plan_tensor_t *t = NULL;
        for (uint32_t k = 0; !t && k < plan->tensor_count; k++)
            if (plan->tensors[k].uid == uids[i])
                t = &plan->tensors[k];
        tensor_label(g, uids[i], label, sizeof label);
        if (!t)
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "variant pack entry %d: %s %s",
                             i, label, not_in_plan(g, uids[i]));
        if (!ptrs[i])
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "variant pack entry %d: %s has a "
                             "NULL pointer", i, label);
        if (t->alignment > 0 && (uintptr_t)ptrs[i] % (uint64_t)t->alignment)
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "%s must be aligned to %lld bytes; "
                             "its pointer is %p", label, (long long)t->alignment, ptrs[i]);
    }
    for (uint32_t k = 0; k < plan->tensor_count; k++) {
        int32_t i = 0;
        while (i < n && uids[i] != plan->tensors[k].uid)
            i++;
        if (i == n)
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "%s has no pointer in the variant "
                             "pack", tensor_label(g, plan->tensors[k].uid, label,
                                                  sizeof label));
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
    cdnn_status_t st = check_variant_pack(graph, plan, n, uids, ptrs);
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

cdnn_status_t cdnn_graph_io_tensors(const cdnn_graph_t *graph, cdnn_tensor_io_t *tensors,
                                    int32_t cap, int32_t *count)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(count);
    if (!graph->plan)
        return cdnn_fail(CDNN_STATUS_BAD_STATE, "the graph has no plan; build it first");
    const plan_t *plan = graph->plan;
    *count = (int32_t)plan->tensor_count;
    for (uint32_t i = 0; tensors && i < plan->tensor_count && (int32_t)i < cap; i++)
        tensors[i] = (cdnn_tensor_io_t){plan->tensors[i].uid, plan->tensors[i].type,
                                        (size_t)plan->tensors[i].span_bytes,
                                        plan->tensors[i].alignment,
                                        plan->tensors[i].is_output};
    return CDNN_STATUS_SUCCESS;
}
