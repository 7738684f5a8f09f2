/*
 * build.c -- engine selection: from a validated graph to a plan.
 *
 * Without benchmarking, the applicable engines are tried in build order
 * (pinned or preferred engine first, then by rank) and the first whose
 * context is created wins.  With benchmarking, every variant of every
 * applicable engine that can be timed, and whose context is created within
 * the workspace limit, becomes a candidate; the plan chooses at its first
 * execute (plan.c).  The winner cache may name the winner at once: the
 * candidates are first known by their labels alone, so that a cache hit
 * creates only the winner's context (a context may cost a compilation).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/log.h"
#include "engine/handle.h"
#include "engine/options.h"
#include "engine/plan.h"
#include "engine/plan_check.h"
#include "engine/registry.h"
#include "engine/winner_cache.h"
#include "graph/graph.h"
#include "graph/ops.h"

/* ---- reasons: why each engine was passed over -------------------------- */

typedef struct reasons {
    char text[6144];
    size_t used;
} reasons_t;

/* r NULL: the reason is not wanted (the caller will find it again). */
static void add_reason(reasons_t *r, const char *who, const char *why)
{
    if (r && r->used < sizeof r->text)
        r->used += (size_t)snprintf(r->text + r->used, sizeof r->text - r->used,
                                    "\n  %s: %s", who, why);
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

/* ---- applicable engines, in build order -------------------------------- */

typedef struct engine_list {
    const engine_slot_t **engines;
    int32_t count;
} engine_list_t;

static int goes_before(const engine_slot_t *a, const engine_slot_t *b,
                       const cdnn_build_options_t *opts)
{
    if (opts && opts->has_preferred &&
        (a->id == opts->preferred) != (b->id == opts->preferred))
        return a->id == opts->preferred;
    return a->rank > b->rank;
}

/* Every engine that applies, in build order (stable: ties keep load order). */
static cdnn_status_t applicable_engines(cdnn_graph_t *g, const cdnn_handle_t *h,
                                        const cdnn_build_options_t *opts,
                                        engine_list_t *out, reasons_t *reasons)
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
    uint16_t graph_minor = op_view_minor(&g->view);
    for (int32_t i = 0; i < total; i++) {
        const engine_slot_t *e = registry_engine(i);
        if (opts && opts->has_pinned && e->id != opts->pinned)
            continue;
        const cdnn_provider_t *t = e->provider->table;
        /* Ops and port forms newer than a provider's ABI are not shown to
         * it: it was not written to expect them (provider.h, ABI 1.3, 1.4). */
        if (t->abi_minor < op_abi_minor_for(graph_minor)) {
            char why[320];
            snprintf(why, sizeof why,
                     "its provider was built for provider ABI 1.%u, before the "
                     "graph's ops or ports (graph format 1.%u: what 1.2 added, "
                     "softmax, data movement, argmax, layer-norm without bias, "
                     "needs ABI 1.3; what 1.3 added, ABI 1.4); rebuild it "
                     "against this cdnn",
                     (unsigned)t->abi_minor, (unsigned)graph_minor);
            add_reason(reasons, e->name, why);
            continue;
        }
        if (t->applicable(e->provider->state, e->index, &h->device, &g->view) !=
            CDNN_STATUS_SUCCESS) {
            add_reason(reasons, e->name, registry_provider_error(e->provider));
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

/* ---- candidates ------------------------------------------------------------ */

/* The user's engine knobs, plus the variant's (replacing the user's value
 * of the same knob).  The library's own global.* knobs stay here: a
 * provider that records its knobs in its payload (the CPU one does) would
 * otherwise save different bytes for the same kernel depending on whether
 * benchmarking was on. */
static cdnn_knob_value_t *knobs_with(const cdnn_build_options_t *opts,
                                     const cdnn_knob_value_t *variant, int32_t *count)
{
    int32_t n = opts ? opts->knob_count : 0;
    cdnn_knob_value_t *knobs = calloc((size_t)n + 1, sizeof *knobs);
    if (!knobs)
        return NULL;
    *count = 0;
    for (int32_t i = 0; i < n; i++)
        if (strncmp(opts->knobs[i].name, "global.", 7) != 0 &&
            (!variant || strcmp(opts->knobs[i].name, variant->name) != 0))
            knobs[(*count)++] = opts->knobs[i];
    if (variant)
        knobs[(*count)++] = *variant;
    return knobs;
}

/* Create e's context (for a variant, or its default) if it fits the
 * workspace limit; else say why not (NOT_SUPPORTED). */
static cdnn_status_t create_context(cdnn_graph_t *g, const cdnn_handle_t *h,
                                    const cdnn_build_options_t *opts,
                                    const engine_slot_t *e,
                                    const cdnn_knob_value_t *variant, void **context,
                                    size_t *workspace, reasons_t *reasons)
{
    const cdnn_provider_t *t = e->provider->table;
    int32_t knob_count = 0;
    cdnn_knob_value_t *knobs = knobs_with(opts, variant, &knob_count);
    if (!knobs)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    *context = NULL;
    *workspace = 0;
    cdnn_status_t st = t->context_create(e->provider->state, e->index, &h->device,
                                         &g->view, knobs, knob_count, context);
    free(knobs);
    if (st == CDNN_STATUS_SUCCESS)
        st = t->workspace_size(*context, workspace);
    int64_t limit = options_knob(opts, "global.workspace_limit", -1);
    char why[160];
    if (st != CDNN_STATUS_SUCCESS) {
        add_reason(reasons, e->name, registry_provider_error(e->provider));
    } else if (limit >= 0 && *workspace > (uint64_t)limit) {
        snprintf(why, sizeof why, "needs %zu workspace bytes, over "
                 "global.workspace_limit %lld", *workspace, (long long)limit);
        add_reason(reasons, e->name, why);
    } else {
        return CDNN_STATUS_SUCCESS;
    }
    if (*context)
        t->context_destroy(*context);
    *context = NULL;
    return CDNN_STATUS_NOT_SUPPORTED;
}

/* Without benchmarking: the first engine in build order whose context can
 * be made. */
static cdnn_status_t add_first_creatable(cdnn_graph_t *g, const cdnn_handle_t *h,
                                         const cdnn_build_options_t *opts,
                                         const engine_list_t *list, plan_t *plan,
                                         reasons_t *reasons)
{
    for (int32_t i = 0; i < list->count; i++) {
        void *context = NULL;
        size_t workspace = 0;
        cdnn_status_t st = create_context(g, h, opts, list->engines[i], NULL, &context,
                                          &workspace, reasons);
        if (st == CDNN_STATUS_SUCCESS)
            return plan_add_candidate(plan, list->engines[i], context, workspace, NULL);
        if (st == CDNN_STATUS_ALLOC_FAILED)
            return st;
    }
    return CDNN_STATUS_SUCCESS;
}

/* e's variants as candidates without contexts: its default, then those the
 * provider proposes. */
static cdnn_status_t add_variants(const cdnn_graph_t *g, const cdnn_handle_t *h,
                                  const engine_slot_t *e, plan_t *plan)
{
    cdnn_status_t st = plan_add_candidate(plan, e, NULL, 0, NULL);
    int32_t variants = engine_variant_count(e, &h->device, &g->view);
    for (int32_t v = 0; v < variants && st != CDNN_STATUS_ALLOC_FAILED; v++) {
        cdnn_knob_value_t knob;
        st = engine_variant_knob(e, &h->device, &g->view, v, &knob);
        if (st == CDNN_STATUS_SUCCESS)
            st = plan_add_candidate(plan, e, NULL, 0, &knob);
    }
    return st == CDNN_STATUS_ALLOC_FAILED ? st : CDNN_STATUS_SUCCESS;
}

/* Benchmarking leaves out an engine it cannot time on h's device: say why,
 * in the reasons and in the log (the build may well succeed without it). */
static void leave_out_untimeable(const cdnn_handle_t *h, const engine_slot_t *e,
                                 reasons_t *reasons)
{
    char why[256];
    snprintf(why, sizeof why, "cannot be timed on %s: its provider has neither "
             "time_execute nor synchronize (provider ABI 1.2), and the host clock "
             "alone would time only the enqueue; build without benchmarking to use it",
             h->device_string);
    add_reason(reasons, e->name, why);
    cdnn_log(CDNN_LOG_WARNING, "benchmarking leaves %s out: it %s", e->name, why);
}

/* Every variant of every engine in list that benchmarking can time, known
 * by label only. */
static cdnn_status_t add_timeable_variants(const cdnn_graph_t *g, const cdnn_handle_t *h,
                                           const engine_list_t *list, plan_t *plan,
                                           reasons_t *reasons)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int32_t i = 0; st == CDNN_STATUS_SUCCESS && i < list->count; i++) {
        if (plan_can_time_engine(list->engines[i], &h->device))
            st = add_variants(g, h, list->engines[i], plan);
        else
            leave_out_untimeable(h, list->engines[i], reasons);
    }
    return st;
}

static const cdnn_knob_value_t *variant_of(const candidate_t *c)
{
    return c->variant.name ? &c->variant : NULL;
}

/* Create every candidate's context; a candidate whose context cannot be
 * made within the workspace limit is dropped, with a reason. */
static cdnn_status_t create_contexts(cdnn_graph_t *g, const cdnn_handle_t *h,
                                     const cdnn_build_options_t *opts, plan_t *plan,
                                     reasons_t *reasons)
{
    for (int32_t i = 0; i < plan->candidate_count;) {
        const candidate_t *c = &plan->candidates[i];
        void *context = NULL;
        size_t workspace = 0;
        cdnn_status_t st = create_context(g, h, opts, c->engine, variant_of(c), &context,
                                          &workspace, reasons);
        if (st == CDNN_STATUS_ALLOC_FAILED)
            return st;
        if (st == CDNN_STATUS_SUCCESS)
            plan_give_context(plan, i++, context, workspace);
        else
            plan_remove_candidate(plan, i);
    }
    return CDNN_STATUS_SUCCESS;
}

/* The candidate the winner cache names, made the plan's only one; 0 when
 * the cache names none or its context cannot be made (no reason is kept:
 * making every context finds it again). */
static int keep_cached_winner(cdnn_graph_t *g, const cdnn_handle_t *h,
                              const cdnn_build_options_t *opts, plan_t *plan)
{
    int32_t known = plan->cache_enabled && plan->candidate_count > 1
                        ? winner_cache_lookup(plan)
                        : -1;
    void *context = NULL;
    size_t workspace = 0;
    if (known < 0 || create_context(g, h, opts, plan->candidates[known].engine,
                                    variant_of(&plan->candidates[known]), &context,
                                    &workspace, NULL) != CDNN_STATUS_SUCCESS)
        return 0;
    plan_give_context(plan, known, context, workspace);
    plan_keep_only(plan, known);
    return 1;
}

/* The benchmarking candidates, or only the winner when the cache ranks
 * every one of them.  A record made when some candidate could not be
 * created does not rank it, so the cache is asked again once the
 * candidates that cannot be made are known. */
static cdnn_status_t fill_benchmarking_plan(cdnn_graph_t *g, const cdnn_handle_t *h,
                                            const cdnn_build_options_t *opts,
                                            const engine_list_t *list, plan_t *plan,
                                            reasons_t *reasons)
{
    cdnn_status_t st = add_timeable_variants(g, h, list, plan, reasons);
    if (st != CDNN_STATUS_SUCCESS || keep_cached_winner(g, h, opts, plan))
        return st;
    int32_t labelled = plan->candidate_count;
    st = create_contexts(g, h, opts, plan, reasons);
    if (st == CDNN_STATUS_SUCCESS && plan->candidate_count < labelled &&
        plan->cache_enabled && plan->candidate_count > 1) {
        int32_t known = winner_cache_lookup(plan);
        if (known >= 0)
            plan_keep_only(plan, known);
    }
    return st;
}

static cdnn_status_t fill_plan(cdnn_graph_t *g, const cdnn_handle_t *h,
                               const cdnn_build_options_t *opts, int benchmarking,
                               plan_t *plan)
{
    reasons_t *reasons = calloc(1, sizeof *reasons);
    engine_list_t list = {0};
    if (!reasons)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory building a plan");
    cdnn_status_t st = applicable_engines(g, h, opts, &list, reasons);
    if (st == CDNN_STATUS_SUCCESS)
        st = benchmarking ? fill_benchmarking_plan(g, h, opts, &list, plan, reasons)
                          : add_first_creatable(g, h, opts, &list, plan, reasons);
    if (st == CDNN_STATUS_SUCCESS && plan->candidate_count == 0)
        st = no_engine(g, h, reasons);
    free(list.engines);
    free(reasons);
    return st;
}

/* ---- building ------------------------------------------------------------- */

static int compare_knob_names(const void *a, const void *b)
{
    return strcmp(((const cdnn_knob_value_t *)a)->name,
                  ((const cdnn_knob_value_t *)b)->name);
}

/* The user's engine knobs as "name=value,..." sorted by name ("" for none).
 * They change what a candidate runs (its label names only its variant), so
 * a cached ranking made under other knob values must not be used. */
static char *engine_knob_key(const cdnn_build_options_t *opts)
{
    int32_t n = opts ? opts->knob_count : 0;
    cdnn_knob_value_t *sorted = calloc((size_t)n + 1, sizeof *sorted);
    char *key = calloc((size_t)n + 1, 300);
    if (!sorted || !key) {
        free(sorted);
        free(key);
        return NULL;
    }
    if (n)
        memcpy(sorted, opts->knobs, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_knob_names);
    size_t used = 0;
    for (int32_t i = 0; i < n; i++)
        if (strncmp(sorted[i].name, "global.", 7) != 0)
            used += (size_t)snprintf(key + used, 300, "%s%.255s=%lld", used ? "," : "",
                                     sorted[i].name, (long long)sorted[i].value);
    free(sorted);
    return key;
}

static cdnn_status_t make_plan(cdnn_graph_t *g, const cdnn_handle_t *h,
                               const cdnn_build_options_t *opts, plan_t **out)
{
    int benchmarking = options_benchmarking(opts);
    plan_t *plan = NULL;
    cdnn_status_t st = plan_create(h, &plan);
    if (st == CDNN_STATUS_SUCCESS)
        st = graph_content_digest(g, plan->content_key);
    if (st == CDNN_STATUS_SUCCESS)
        st = plan_tensors_of_graph(&g->view, &plan->tensors, &plan->tensor_count);
    if (st == CDNN_STATUS_SUCCESS && benchmarking) {
        plan->knob_key = engine_knob_key(opts);
        plan->cache_enabled = plan->knob_key && winner_cache_enabled();
        plan->progress = opts ? opts->progress : NULL;
        plan->progress_user = opts ? opts->progress_user : NULL;
    }
    if (st == CDNN_STATUS_SUCCESS)
        st = fill_plan(g, h, opts, benchmarking, plan);
    if (st != CDNN_STATUS_SUCCESS) {
        plan_destroy(plan);
        return st;
    }
    if (!plan_chosen(plan) && plan->candidate_count == 1)
        plan_keep_only(plan, 0);
    *out = plan;
    return CDNN_STATUS_SUCCESS;
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
        st = options_check_engine_knobs(opts);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    graph_set_plan(graph, NULL, NULL);
    plan_t *plan = NULL;
    st = make_plan(graph, handle, opts, &plan);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    graph_set_plan(graph, plan, plan_destroy);
    const candidate_t *c = plan_chosen(plan);
    cdnn_log(CDNN_LOG_INFO, "graph '%s': built on %s: %s",
             graph->name ? graph->name : "(unnamed)", plan->device_string,
             c ? c->label : "a benchmarking plan; it chooses at its first execute");
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
    engine_list_t list = {0};
    st = reasons ? applicable_engines(graph, handle, NULL, &list, reasons)
                 : cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (st == CDNN_STATUS_SUCCESS) {
        *count = list.count;
        for (int32_t i = 0; ids && i < list.count && i < cap; i++)
            ids[i] = list.engines[i]->id;
    }
    free(list.engines);
    free(reasons);
    return st;
}
