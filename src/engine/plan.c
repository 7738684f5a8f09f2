/*
 * plan.c -- plans: candidates, the benchmarking choice, and execution.
 */
#include "engine/plan.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/log.h"
#include "engine/handle.h"
#include "engine/winner_cache.h"
#include "graph/graph.h"

/* How candidates are timed: one warm-up run each, then rounds in which
 * every candidate takes one timed sample in turn, until each has met both
 * minima or the sample cap; the median is robust to the odd preempted run.
 * Rounds, not one candidate's samples after another's: a device's clock
 * drifts as it heats (an H200 running 8192^3 GEMMs slows by ~7% within a
 * second), and timed one after another the first candidates would be
 * measured on a cooler, faster chip.  A run shorter than a sample's minimum
 * is timed in batches of runs, so that the clock's cost and the launch gap
 * before the first run stay small beside what is measured; the batch is
 * sized by the second warm-up run, the first being slower.  By a device's
 * clock a sample lasts at least 1 ms: what the first run after another
 * candidate's pays (its code and data back into the caches) must be small
 * beside it, and the device's clock counts no time the host thread lost.
 * By the host clock, 50 us: a batch's mean would take in any preemption,
 * where the median of short samples leaves it out. */
#define BENCH_WARMUP_RUNS 2
#define BENCH_MIN_SAMPLES 5
#define BENCH_MAX_SAMPLES 100
#define BENCH_MIN_SECONDS 0.02
#define BENCH_MIN_SAMPLE_SECONDS_DEVICE 1e-3
#define BENCH_MIN_SAMPLE_SECONDS_HOST 50e-6
#define BENCH_MAX_BATCH 100

cdnn_status_t plan_create(const cdnn_handle_t *h, plan_t **out)
{
    plan_t *plan = calloc(1, sizeof *plan);
    cdnn_status_t st = plan ? registry_acquire()
                            : cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (st != CDNN_STATUS_SUCCESS) {
        free(plan);
        return st;
    }
    plan->device_kind = h->device.kind;
    plan->device_ordinal = h->device.ordinal;
    plan->device_arch = h->device.arch;
    snprintf(plan->device_string, sizeof plan->device_string, "%s", h->device_string);
    snprintf(plan->device_key, sizeof plan->device_key, "%s", h->device_key);
    atomic_init(&plan->chosen, NULL);
    pthread_mutex_init(&plan->choose_lock, NULL);
    pthread_mutex_init(&plan->save_lock, NULL);
    *out = plan;
    return CDNN_STATUS_SUCCESS;
}

static void candidate_free(candidate_t *c)
{
    if (c->context)
        c->engine->provider->table->context_destroy(c->context);
    free((char *)c->variant.name);
    free(c->label);
    memset(c, 0, sizeof *c);
}

static char *make_label(const engine_slot_t *e, const cdnn_knob_value_t *variant)
{
    char buf[512];
    if (variant)
        snprintf(buf, sizeof buf, "%s [%s=%lld]", e->name, variant->name,
                 (long long)variant->value);
    else
        snprintf(buf, sizeof buf, "%s", e->name);
    return strdup(buf);
}

cdnn_status_t plan_add_candidate(plan_t *plan, const engine_slot_t *e, void *context,
                                 size_t workspace, const cdnn_knob_value_t *variant)
{
    candidate_t *grown = realloc(plan->candidates,
                                 (size_t)(plan->candidate_count + 1) * sizeof *grown);
    if (grown)
        plan->candidates = grown;
    candidate_t c = {e, context, workspace, {NULL, 0}, make_label(e, variant), -1, 0,
                     TIMING_CLOCK_HOST};
    if (variant) {
        c.variant.name = strdup(variant->name);
        c.variant.value = variant->value;
    }
    if (!grown || !c.label || (variant && !c.variant.name)) {
        candidate_free(&c);
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory building a plan");
    }
    plan->candidates[plan->candidate_count++] = c;
    if (workspace > plan->workspace)
        plan->workspace = workspace;
    return CDNN_STATUS_SUCCESS;
}

void plan_give_context(plan_t *plan, int32_t i, void *context, size_t workspace)
{
    plan->candidates[i].context = context;
    plan->candidates[i].workspace = workspace;
    if (workspace > plan->workspace)
        plan->workspace = workspace;
}

void plan_remove_candidate(plan_t *plan, int32_t i)
{
    candidate_free(&plan->candidates[i]);
    plan->candidate_count--;
    memmove(&plan->candidates[i], &plan->candidates[i + 1],
            (size_t)(plan->candidate_count - i) * sizeof *plan->candidates);
    plan->workspace = 0;
    for (int32_t k = 0; k < plan->candidate_count; k++)
        if (plan->candidates[k].workspace > plan->workspace)
            plan->workspace = plan->candidates[k].workspace;
}

void plan_keep_only(plan_t *plan, int32_t keep)
{
    candidate_t kept = plan->candidates[keep];
    for (int32_t i = 0; i < plan->candidate_count; i++)
        if (i != keep)
            candidate_free(&plan->candidates[i]);
    plan->candidates[0] = kept;
    plan->candidate_count = 1;
    plan->workspace = kept.workspace;
    atomic_store_explicit(&plan->chosen, &plan->candidates[0], memory_order_release);
}

void plan_destroy(plan_t *plan)
{
    if (!plan)
        return;
    for (int32_t i = 0; i < plan->candidate_count; i++)
        candidate_free(&plan->candidates[i]);
    free(plan->candidates);
    pthread_mutex_destroy(&plan->choose_lock);
    pthread_mutex_destroy(&plan->save_lock);
    free(plan->tensors);
    free(plan->knob_key);
    free(plan->saved);
    free(plan);
    registry_release();
}

candidate_t *plan_chosen(const plan_t *plan)
{
    return atomic_load_explicit(&((plan_t *)plan)->chosen, memory_order_acquire);
}

int plan_can_time_engine(const engine_slot_t *e, const cdnn_device_view_t *device)
{
    const cdnn_provider_t *t = e->provider->table;
    return device->kind == CDNN_DEVICE_CPU || PROVIDER_HAS(t, time_execute) ||
           PROVIDER_HAS(t, synchronize);
}

/* ---- running and timing ---------------------------------------------------- */

static cdnn_status_t engine_failed(const candidate_t *c, cdnn_status_t st)
{
    const engine_slot_t *e = c->engine;
    return cdnn_fail(st, "engine %s (provider %s %s) failed: %s", c->label,
                     e->provider->table->name, e->provider->table->version,
                     registry_provider_error(e->provider));
}

static cdnn_status_t run_candidate(const candidate_t *c, const cdnn_exec_args_t *args)
{
    cdnn_status_t st = c->engine->provider->table->execute(c->context, args);
    return st == CDNN_STATUS_SUCCESS ? st : engine_failed(c, st);
}

/* Wait for c's executes on stream, if its engine may return before its
 * work is done (provider ABI 1.2 synchronize); other engines are done. */
static cdnn_status_t wait_for_candidate(const candidate_t *c, void *stream)
{
    const cdnn_provider_t *t = c->engine->provider->table;
    cdnn_status_t st = PROVIDER_HAS(t, synchronize) ? t->synchronize(c->context, stream)
                                                    : CDNN_STATUS_SUCCESS;
    return st == CDNN_STATUS_SUCCESS ? st : engine_failed(c, st);
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* `runs` executes of c timed by the engine's own clock (time_execute). */
static cdnn_status_t time_on_device(const candidate_t *c, const cdnn_exec_args_t *args,
                                    int32_t runs, double *seconds)
{
    const cdnn_provider_t *t = c->engine->provider->table;
    cdnn_status_t st = t->time_execute(c->context, args, runs, seconds);
    if (st != CDNN_STATUS_SUCCESS)
        return engine_failed(c, st);
    if (!isfinite(*seconds) || *seconds < 0)
        return cdnn_fail(CDNN_STATUS_EXECUTION_FAILED, "engine %s (provider %s %s) "
                         "reported %g seconds for %d runs from time_execute; a time "
                         "is finite and not negative", c->label, t->name, t->version,
                         *seconds, runs);
    return CDNN_STATUS_SUCCESS;
}

/* `runs` executes of c: by the engine's clock if it has one, else by the
 * host clock around the executes and the wait for them, never around the
 * enqueue alone. */
static cdnn_status_t time_runs(const candidate_t *c, const cdnn_exec_args_t *args,
                               int32_t runs, double *seconds)
{
    if (PROVIDER_HAS(c->engine->provider->table, time_execute))
        return time_on_device(c, args, runs, seconds);
    double start = seconds_now();
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int32_t i = 0; st == CDNN_STATUS_SUCCESS && i < runs; i++)
        st = run_candidate(c, args);
    if (st == CDNN_STATUS_SUCCESS)
        st = wait_for_candidate(c, args->stream);
    *seconds = seconds_now() - start;
    return st;
}

/* Runs per sample of c, whose runs take seconds_per_run each. */
static int32_t batch_for(const candidate_t *c, double seconds_per_run)
{
    double min_seconds = PROVIDER_HAS(c->engine->provider->table, time_execute)
                             ? BENCH_MIN_SAMPLE_SECONDS_DEVICE
                             : BENCH_MIN_SAMPLE_SECONDS_HOST;
    if (seconds_per_run >= min_seconds)
        return 1;
    double runs = ceil(min_seconds / fmax(seconds_per_run, 1e-9));
    return runs < BENCH_MAX_BATCH ? (int32_t)runs : BENCH_MAX_BATCH;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n > 0 values (sorted in place). */
static double median_of(double *values, int n)
{
    qsort(values, (size_t)n, sizeof values[0], compare_doubles);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* One candidate's samples while benchmark() goes round the candidates. */
typedef struct {
    double per_run[BENCH_MAX_SAMPLES];
    double total;
    int samples;
    int32_t batch;
    int failed;
} timing_t;

static int wants_sample(const timing_t *t)
{
    return !t->failed && t->samples < BENCH_MAX_SAMPLES &&
           (t->samples < BENCH_MIN_SAMPLES || t->total < BENCH_MIN_SECONDS);
}

/* Marks t failed, saying why while the error is c's. */
static void pass_over(const candidate_t *c, timing_t *t)
{
    t->failed = 1;
    cdnn_log(CDNN_LOG_WARNING, "benchmarking: candidate %s failed and is passed over: %s",
             c->label, cdnn_last_error());
}

static void warm_up(const candidate_t *c, const cdnn_exec_args_t *args, timing_t *t)
{
    double seconds = 0;
    for (int i = 0; i < BENCH_WARMUP_RUNS; i++) {
        if (time_runs(c, args, 1, &seconds) != CDNN_STATUS_SUCCESS) {
            pass_over(c, t);
            return;
        }
    }
    t->batch = batch_for(c, seconds);
}

static void take_sample(const candidate_t *c, const cdnn_exec_args_t *args, timing_t *t)
{
    double seconds = 0;
    if (time_runs(c, args, t->batch, &seconds) != CDNN_STATUS_SUCCESS) {
        pass_over(c, t);
        return;
    }
    t->per_run[t->samples++] = seconds / t->batch;
    t->total += seconds;
}

/* c's median time per run from its samples (left < 0 if it failed). */
static void record_timing(candidate_t *c, timing_t *t)
{
    if (t->failed)
        return;
    c->median_us = 1e6 * median_of(t->per_run, t->samples);
    c->runs = t->samples * t->batch;
    c->clock = PROVIDER_HAS(c->engine->provider->table, time_execute) ? TIMING_CLOCK_DEVICE
                                                                     : TIMING_CLOCK_HOST;
}

/* Times every candidate in rounds (see BENCH_*); the number timed. */
static int32_t time_candidates(plan_t *plan, const cdnn_exec_args_t *args, timing_t *timings)
{
    int32_t n = plan->candidate_count, timed = 0;
    for (int32_t i = 0; i < n; i++)
        warm_up(&plan->candidates[i], args, &timings[i]);
    for (int more = 1; more;) {
        more = 0;
        for (int32_t i = 0; i < n; i++) {
            if (!wants_sample(&timings[i]))
                continue;
            take_sample(&plan->candidates[i], args, &timings[i]);
            more = 1;
        }
    }
    for (int32_t i = 0; i < n; i++) {
        candidate_t *c = &plan->candidates[i];
        record_timing(c, &timings[i]);
        timed += !timings[i].failed;
        if (plan->progress)
            plan->progress(i, n, c->label, c->median_us, plan->progress_user);
    }
    return timed;
}

static int compare_candidates(const void *a, const void *b)
{
    const candidate_t *x = a, *y = b;
    /* untimed (failed) candidates go last */
    double tx = x->median_us < 0 ? INFINITY : x->median_us;
    double ty = y->median_us < 0 ? INFINITY : y->median_us;
    return (tx > ty) - (tx < ty);
}

/* Time every candidate, rank them, keep the contexts (the ranking is
 * reported and may be saved), and return the winner. */
static cdnn_status_t benchmark(plan_t *plan, const cdnn_exec_args_t *args)
{
    timing_t *timings = calloc((size_t)plan->candidate_count, sizeof *timings);
    if (!timings)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "benchmarking: out of memory for the "
                         "samples of %d candidates", plan->candidate_count);
    int32_t timed = time_candidates(plan, args, timings);
    free(timings);
    if (timed == 0)
        return cdnn_fail(CDNN_STATUS_EXECUTION_FAILED, "benchmarking: every one of "
                         "the %d candidates failed; the log names each failure",
                         plan->candidate_count);
    qsort(plan->candidates, (size_t)plan->candidate_count, sizeof *plan->candidates,
          compare_candidates);
    if (plan->cache_enabled)
        winner_cache_record(plan);
    const candidate_t *winner = &plan->candidates[0];
    cdnn_log(CDNN_LOG_INFO, "benchmarking chose %s (%.1f us median of %d runs, by the "
             "%s clock)", winner->label, winner->median_us, winner->runs,
             winner->clock == TIMING_CLOCK_DEVICE ? "device's" : "host's");
    return CDNN_STATUS_SUCCESS;
}

/* The candidate to run: the chosen one, choosing it first if need be.  The
 * choice runs under the lock, once; the winner's result is left in the
 * caller's outputs by running it last. */
static cdnn_status_t choose(plan_t *plan, const cdnn_exec_args_t *args, int *ran)
{
    *ran = 0;
    if (plan_chosen(plan))
        return CDNN_STATUS_SUCCESS;
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    pthread_mutex_lock(&plan->choose_lock);
    if (!plan_chosen(plan)) {
        st = benchmark(plan, args);
        if (st == CDNN_STATUS_SUCCESS)
            st = run_candidate(&plan->candidates[0], args);
        if (st == CDNN_STATUS_SUCCESS) {
            atomic_store_explicit(&plan->chosen, &plan->candidates[0],
                                  memory_order_release);
            *ran = 1;
        }
    }
    pthread_mutex_unlock(&plan->choose_lock);
    return st;
}

/* ---- the public calls ------------------------------------------------------- */

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

static cdnn_status_t need_plan(const cdnn_graph_t *g)
{
    if (!g->plan)
        return cdnn_fail(CDNN_STATUS_BAD_STATE, "the graph has no plan; build it first");
    return CDNN_STATUS_SUCCESS;
}

/* Every candidate's until the choice (the first execute runs them all),
 * then the winner's. */
static size_t workspace_needed(const plan_t *plan)
{
    const candidate_t *winner = plan_chosen(plan);
    return winner ? winner->workspace : plan->workspace;
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
    cdnn_status_t st = need_plan(graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    plan_t *plan = graph->plan;
    if (plan->device_kind != handle->device.kind ||
        plan->device_ordinal != handle->device.ordinal)
        return cdnn_fail(CDNN_STATUS_DEVICE_MISMATCH,
                         "the plan was built for %s but the handle is on %s; "
                         "build or load the plan again on a handle for %s",
                         plan->device_string, handle->device_string,
                         handle->device_string);
    size_t needed = workspace_needed(plan);
    if (needed && !workspace)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "the plan needs %zu workspace bytes "
                         "but workspace is NULL", needed);
    st = check_variant_pack(graph, plan, n, uids, ptrs);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    cdnn_exec_args_t args = {sizeof args, n, uids, ptrs, workspace, handle->stream};
    int ran = 0;
    st = choose(plan, &args, &ran);
    if (st == CDNN_STATUS_SUCCESS && !ran)
        st = run_candidate(plan_chosen(plan), &args);
    /* A caller on the CPU has no stream to wait on: the outputs must be
     * written when this returns.  On a GPU the caller's stream orders them. */
    if (st == CDNN_STATUS_SUCCESS && plan->device_kind == CDNN_DEVICE_CPU)
        st = wait_for_candidate(plan_chosen(plan), NULL);
    return st;
}

cdnn_status_t cdnn_graph_engine(const cdnn_graph_t *graph, uint64_t *engine_id,
                                const char **engine_name)
{
    CDNN_CHECK_ARG(graph);
    cdnn_status_t st = need_plan(graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const candidate_t *c = plan_chosen(graph->plan);
    if (!c)
        return cdnn_fail(CDNN_STATUS_BAD_STATE, "the plan has not chosen a kernel yet; "
                         "execute it once, or build it with benchmarking off");
    if (engine_id)
        *engine_id = c->engine->id;
    if (engine_name)
        *engine_name = c->engine->name;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_graph_workspace_size(const cdnn_graph_t *graph, size_t *bytes)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(bytes);
    cdnn_status_t st = need_plan(graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    *bytes = workspace_needed(graph->plan);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_graph_candidates(const cdnn_graph_t *graph,
                                    cdnn_candidate_result_t *results, int32_t cap,
                                    int32_t *count, int32_t *chosen)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(count);
    cdnn_status_t st = need_plan(graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    plan_t *plan = graph->plan;
    /* Until the choice is published another thread may be timing and
     * sorting the candidates; the lock waits for it (after, they are
     * never changed again). */
    int locked = !plan_chosen(plan);
    if (locked)
        pthread_mutex_lock(&plan->choose_lock);
    const candidate_t *winner = plan_chosen(plan);
    *count = plan->candidate_count;
    if (chosen)
        *chosen = winner ? (int32_t)(winner - plan->candidates) : -1;
    for (int32_t i = 0; results && i < plan->candidate_count && i < cap; i++) {
        const candidate_t *c = &plan->candidates[i];
        results[i] = (cdnn_candidate_result_t){c->label, c->engine->id, c->median_us,
                                               c->runs};
    }
    if (locked)
        pthread_mutex_unlock(&plan->choose_lock);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_graph_io_tensors(const cdnn_graph_t *graph, cdnn_tensor_io_t *tensors,
                                    int32_t cap, int32_t *count)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(count);
    cdnn_status_t st = need_plan(graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const plan_t *plan = graph->plan;
    *count = (int32_t)plan->tensor_count;
    for (uint32_t i = 0; tensors && i < plan->tensor_count && (int32_t)i < cap; i++)
        tensors[i] = (cdnn_tensor_io_t){plan->tensors[i].uid, plan->tensors[i].type,
                                        (size_t)plan->tensors[i].span_bytes,
                                        plan->tensors[i].alignment,
                                        plan->tensors[i].is_output};
    return CDNN_STATUS_SUCCESS;
}
