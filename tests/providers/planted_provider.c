/*
 * planted_provider.c -- a provider whose engines cost what the test says,
 * so that benchmarking's choice is known in advance (tests/test_benchmark.c).
 *
 * Every engine copies x to y for a graph of one f32 IDENTITY pointwise node
 * over packed tensors (identity_copy.h), then sleeps its planted cost.  Sleeping rather than spinning keeps the costs apart even when the
 * machine is busy: a sleeping candidate is not slowed by a loaded core.
 *
 *   planted:slow    8000 us, needs a 4096-byte workspace (the plan's
 *                   reported workspace must cover it)
 *   planted:medium  1000 us; offers one variant of planted.cost.scale:
 *                   250 (% of its cost: slower), or 1 (10 us, faster
 *                   than planted:fast) while $PLANTED_VARIANT_WINS=1
 *
 * The costs are far apart (ratios of 2.5 and more, gaps of a millisecond
 * and more) so that the ranking holds on a loaded machine, where a sleep
 * may overshoot by a few hundred microseconds.
 *   planted:fast     200 us
 *   planted:extra    500 us, served only when $PLANTED_EXTRA=1 at init (the
 *                   registry re-initialises providers once every handle and
 *                   plan is gone), so a test can grow the candidate set
 *
 * $PLANTED_COST_PERCENT (read at context creation, default 100) scales every
 * cost, so that tests that benchmark many graphs stay quick.
 * $PLANTED_CREATE_US (default 0) makes every context_create sleep that long,
 * as a provider that compiles its kernels at creation would: what a build
 * that creates every candidate's context pays.  A context is
 * refused if cdnn hands it one of its own global.* knobs: those are the
 * library's, and a provider recording its knobs in its payload would save
 * different bytes for one kernel with benchmarking on and off.
 *
 * Executes and context creations are counted per candidate, under the
 * label cdnn gives it ("planted:medium" or "planted:medium
 * [planted.cost.scale=250]"); tests read them with test_planted_executes()
 * and test_planted_creates().  Payload (context_save): "PLT1",
 * then u32 LE scale and u64 LE elements, x uid, y uid (32 bytes), then the
 * graph (<cdnn_sdk/payload_graph.h>), which restore checks the fixed fields
 * against.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cdnn/provider.h>

#include <cdnn_sdk/error.h>
#include <cdnn_sdk/payload_graph.h>
#include "identity_copy.h"

#define SCALE_KNOB "planted.cost.scale"

typedef struct planted_engine {
    const char *name;
    int64_t cost_us; /* at scale 100 */
    size_t workspace;
} planted_engine_t;

static const planted_engine_t planted_engines[] = {
    {"planted:slow", 8000, 4096},
    {"planted:medium", 1000, 0},
    {"planted:fast", 200, 0},
    {"planted:extra", 500, 0}, /* last: served only with $PLANTED_EXTRA=1 */
};
#define ALL_ENGINES ((int32_t)(sizeof planted_engines / sizeof planted_engines[0]))
#define MEDIUM 1

static int32_t served_engines = ALL_ENGINES - 1;
static _Thread_local const char *message = "";

static int env_is_one(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

/* ---- execute counters, one per candidate label --------------------------- */

#define MAX_COUNTERS 64

typedef struct counter {
    char label[96];
    atomic_int executes;
    atomic_int creates;
} counter_t;

static counter_t counters[MAX_COUNTERS];
static atomic_int counter_count;
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;

/* The counter for a label, made on first use; NULL when the table is full.
 * Entries are never removed, so a pointer stays good while the provider is
 * loaded. */
static counter_t *counter_for(const char *label)
{
    pthread_mutex_lock(&counter_lock);
    int n = atomic_load(&counter_count);
    counter_t *c = NULL;
    for (int i = 0; !c && i < n; i++)
        if (strcmp(counters[i].label, label) == 0)
            c = &counters[i];
    if (!c && n < MAX_COUNTERS) {
        c = &counters[n];
        snprintf(c->label, sizeof c->label, "%s", label);
        atomic_store(&counter_count, n + 1);
    }
    pthread_mutex_unlock(&counter_lock);
    return c;
}

static const counter_t *counter_named(const char *label)
{
    int n = atomic_load(&counter_count);
    for (int i = 0; i < n; i++)
        if (strcmp(counters[i].label, label) == 0)
            return &counters[i];
    return NULL;
}

/* Executes of the candidate cdnn labels `label` since the provider loaded. */
__attribute__((visibility("default"))) int test_planted_executes(const char *label)
{
    const counter_t *c = counter_named(label);
    return c ? atomic_load(&c->executes) : 0;
}

/* Contexts created (not restored) for that candidate since the provider
 * loaded. */
__attribute__((visibility("default"))) int test_planted_creates(const char *label)
{
    const counter_t *c = counter_named(label);
    return c ? atomic_load(&c->creates) : 0;
}

/* ---- the engines ----------------------------------------------------------- */

typedef struct planted_context {
    int32_t engine;
    uint32_t scale;       /* percent of the engine's cost */
    int scale_given;      /* the knob was set: the label carries it */
    int64_t cost_ns;
    uint64_t elements;
    int64_t x_uid, y_uid;
    counter_t *counter;
    sdk_payload_graph_t graph;
} planted_context_t;

static cdnn_status_t init(const cdnn_provider_host_t *host, void **state)
{
    *state = (void *)host;
    served_engines = env_is_one("PLANTED_EXTRA") ? ALL_ENGINES : ALL_ENGINES - 1;
    return CDNN_STATUS_SUCCESS;
}

static void fini(void *state)
{
    (void)state;
}

static int32_t engine_count(void *state)
{
    (void)state;
    return served_engines;
}

static cdnn_status_t engine_info(void *state, int32_t engine, cdnn_provider_engine_t *info)
{
    (void)state;
    if (engine < 0 || engine >= served_engines) {
        message = "planted: no such engine";
        return CDNN_STATUS_BAD_PARAM;
    }
    info->name = planted_engines[engine].name;
    info->rank = 100 - engine; /* build order: slowest first, so order decides nothing */
    info->payload_major = 1;
    info->payload_minor = 0;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t applicable(void *state, int32_t engine, const cdnn_device_view_t *device,
                                const cdnn_graph_view_t *g)
{
    (void)state;
    (void)engine;
    const char *why = identity_copy_refusal(device, g);
    if (why) {
        message = why;
        return CDNN_STATUS_NOT_SUPPORTED;
    }
    return CDNN_STATUS_SUCCESS;
}

static int64_t cost_percent(void)
{
    const char *v = getenv("PLANTED_COST_PERCENT");
    long p = v ? strtol(v, NULL, 10) : 100;
    return p > 0 ? p : 100;
}

static int64_t create_cost_ns(void)
{
    const char *v = getenv("PLANTED_CREATE_US");
    long us = v ? strtol(v, NULL, 10) : 0;
    return us > 0 ? (int64_t)us * 1000 : 0;
}

static void sleep_ns(int64_t ns)
{
    struct timespec t = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&t, &t) != 0)
        continue; /* interrupted: sleep the rest */
}

/* Fill in what follows from engine and scale: the cost and the counter
 * under cdnn's label for this candidate. */
static cdnn_status_t finish_context(planted_context_t *ctx)
{
    const planted_engine_t *e = &planted_engines[ctx->engine];
    char label[96];
    if (ctx->scale_given)
        snprintf(label, sizeof label, "%s [%s=%u]", e->name, SCALE_KNOB, ctx->scale);
    else
        snprintf(label, sizeof label, "%s", e->name);
    ctx->cost_ns = e->cost_us * 1000 * (int64_t)ctx->scale / 100 * cost_percent() / 100;
    ctx->counter = counter_for(label);
    if (!ctx->counter) {
        message = "planted: too many distinct candidates for the counter table";
        return CDNN_STATUS_INTERNAL_ERROR;
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t context_create(void *state, int32_t engine, const cdnn_device_view_t *device,
                                    const cdnn_graph_view_t *g, const cdnn_knob_value_t *knobs,
                                    int32_t knob_count, void **context)
{
    cdnn_status_t st = applicable(state, engine, device, g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    planted_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return CDNN_STATUS_ALLOC_FAILED;
    ctx->engine = engine;
    ctx->scale = 100;
    for (int32_t i = 0; i < knob_count; i++)
        if (strncmp(knobs[i].name, "global.", 7) == 0) {
            /* the library's own knobs are not a provider's to see (or to
             * record in a payload) */
            message = "planted: was handed a global.* knob";
            free(ctx);
            return CDNN_STATUS_INTERNAL_ERROR;
        } else if (strcmp(knobs[i].name, SCALE_KNOB) == 0) {
            ctx->scale = (uint32_t)knobs[i].value;
            ctx->scale_given = 1;
        }
    identity_copy_t copy = identity_copy_of(g);
    ctx->x_uid = copy.x_uid;
    ctx->y_uid = copy.y_uid;
    ctx->elements = copy.elements;
    if ((st = finish_context(ctx)) != CDNN_STATUS_SUCCESS ||
        (st = sdk_payload_graph_encode(state, g, &ctx->graph)) != CDNN_STATUS_SUCCESS) {
        free(ctx);
        return st;
    }
    sleep_ns(create_cost_ns());
    atomic_fetch_add(&ctx->counter->creates, 1);
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t workspace_size(void *context, size_t *bytes)
{
    const planted_context_t *ctx = context;
    *bytes = planted_engines[ctx->engine].workspace;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t execute(void *context, const cdnn_exec_args_t *args)
{
    const planted_context_t *ctx = context;
    const void *x = identity_pointer_of(args, ctx->x_uid);
    void *y = identity_pointer_of(args, ctx->y_uid);
    if (!x || !y || (planted_engines[ctx->engine].workspace && !args->workspace)) {
        message = "planted: a pointer or the workspace is missing";
        return CDNN_STATUS_BAD_PARAM;
    }
    memcpy(y, x, ctx->elements * sizeof(float));
    sleep_ns(ctx->cost_ns);
    atomic_fetch_add(&ctx->counter->executes, 1);
    return CDNN_STATUS_SUCCESS;
}

static void context_destroy(void *context)
{
    planted_context_t *ctx = context;
    sdk_payload_graph_release(&ctx->graph);
    free(ctx);
}

static cdnn_status_t context_graph(void *context, const cdnn_graph_view_t **graph)
{
    const planted_context_t *ctx = context;
    *graph = ctx->graph.view;
    return *graph ? CDNN_STATUS_SUCCESS : CDNN_STATUS_BAD_STATE;
}

static const char *last_error(void *state)
{
    (void)state;
    return message;
}

/* ---- knobs and variants ------------------------------------------------ */

static const cdnn_knob_info_t scale_knob = {
    SCALE_KNOB, "percent of the engine's planted cost (tests only)", 1, 1000, 100};

static int32_t knob_count(void *state, int32_t engine)
{
    (void)state;
    (void)engine;
    return 1;
}

static cdnn_status_t knob_info(void *state, int32_t engine, int32_t index,
                               cdnn_knob_info_t *info)
{
    (void)state;
    (void)engine;
    if (index != 0) {
        message = "planted: no such knob";
        return CDNN_STATUS_NOT_FOUND;
    }
    *info = scale_knob;
    return CDNN_STATUS_SUCCESS;
}

static int32_t variant_count(void *state, int32_t engine, const cdnn_device_view_t *device,
                             const cdnn_graph_view_t *graph)
{
    (void)state;
    (void)device;
    (void)graph;
    return engine == MEDIUM ? 1 : 0;
}

static cdnn_status_t variant_knob(void *state, int32_t engine, const cdnn_device_view_t *device,
                                  const cdnn_graph_view_t *graph, int32_t index,
                                  cdnn_knob_value_t *knob)
{
    (void)state;
    (void)device;
    (void)graph;
    if (engine != MEDIUM || index != 0) {
        message = "planted: no such variant";
        return CDNN_STATUS_NOT_FOUND;
    }
    *knob = (cdnn_knob_value_t){SCALE_KNOB, env_is_one("PLANTED_VARIANT_WINS") ? 1 : 250};
    return CDNN_STATUS_SUCCESS;
}

/* ---- saving ------------------------------------------------------------ */

#define PAYLOAD_HEAD 32

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static cdnn_status_t context_save(void *context, void *buf, size_t cap, size_t *size)
{
    const planted_context_t *ctx = context;
    *size = PAYLOAD_HEAD + ctx->graph.size;
    if (!buf)
        return CDNN_STATUS_SUCCESS;
    if (cap < *size)
        return CDNN_STATUS_SIZE_INSUFFICIENT;
    uint8_t *p = buf;
    memcpy(p, "PLT1", 4);
    /* the top bit of the scale says whether the knob was given */
    put_le(p + 4, ctx->scale | (ctx->scale_given ? 0x80000000u : 0), 4);
    put_le(p + 8, ctx->elements, 8);
    put_le(p + 16, (uint64_t)ctx->x_uid, 8);
    put_le(p + 24, (uint64_t)ctx->y_uid, 8);
    memcpy(p + PAYLOAD_HEAD, ctx->graph.bytes, ctx->graph.size);
    return CDNN_STATUS_SUCCESS;
}

/* A restored context's fixed fields must be its graph's. */
static cdnn_status_t check_against_graph(void *state, const cdnn_device_view_t *device,
                                         const planted_context_t *ctx)
{
    const cdnn_graph_view_t *g = ctx->graph.view;
    cdnn_status_t st = applicable(state, ctx->engine, device, g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    identity_copy_t copy = identity_copy_of(g);
    if (ctx->x_uid != copy.x_uid || ctx->y_uid != copy.y_uid ||
        ctx->elements != copy.elements) {
        message = "planted: the payload is inconsistent: its fields are not its graph's";
        return CDNN_STATUS_CORRUPT_DATA;
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t context_restore(void *state, int32_t engine, const cdnn_device_view_t *device,
                                     const cdnn_graph_view_t *graph, const void *payload,
                                     size_t size, void **context)
{
    (void)graph;
    const uint8_t *p = payload;
    uint32_t scale = size > PAYLOAD_HEAD ? (uint32_t)get_le(p + 4, 4) : 0;
    if (size <= PAYLOAD_HEAD || memcmp(p, "PLT1", 4) != 0 || engine < 0 ||
        engine >= served_engines || (scale & 0x7fffffffu) < scale_knob.min_value ||
        (scale & 0x7fffffffu) > scale_knob.max_value) {
        message = "planted: the payload is not PLT1";
        return CDNN_STATUS_CORRUPT_DATA;
    }
    planted_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return CDNN_STATUS_ALLOC_FAILED;
    *ctx = (planted_context_t){engine, scale & 0x7fffffffu, (scale >> 31) != 0, 0,
                               get_le(p + 8, 8), (int64_t)get_le(p + 16, 8),
                               (int64_t)get_le(p + 24, 8), NULL, {0}};
    cdnn_status_t st = finish_context(ctx);
    if (st == CDNN_STATUS_SUCCESS &&
        (st = sdk_payload_graph_decode(state, p + PAYLOAD_HEAD, size - PAYLOAD_HEAD,
                                &ctx->graph)) != CDNN_STATUS_SUCCESS)
        message = sdk_last_error(NULL);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_against_graph(state, device, ctx);
    if (st != CDNN_STATUS_SUCCESS) {
        context_destroy(ctx);
        return st;
    }
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static const cdnn_provider_t planted_provider = {
    .abi_major = CDNN_PROVIDER_ABI_MAJOR,
    .abi_minor = CDNN_PROVIDER_ABI_MINOR,
    .struct_size = sizeof(cdnn_provider_t),
    .name = "planted",
    .version = "1.0.0",
    .init = init,
    .fini = fini,
    .engine_count = engine_count,
    .engine_info = engine_info,
    .applicable = applicable,
    .context_create = context_create,
    .workspace_size = workspace_size,
    .execute = execute,
    .context_destroy = context_destroy,
    .last_error = last_error,
    .context_save = context_save,
    .context_restore = context_restore,
    .knob_count = knob_count,
    .knob_info = knob_info,
    .variant_count = variant_count,
    .variant_knob = variant_knob,
    .context_graph = context_graph,
};

__attribute__((visibility("default"))) const cdnn_provider_t *cdnn_provider_entry(void)
{
    return &planted_provider;
}
