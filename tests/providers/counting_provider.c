/*
 * counting_provider.c -- a provider that counts its calls, so tests can
 * prove what cdnn does not call (a loaded plan re-saves without its
 * provider: docs/CONTRACT.md rule 1).
 *
 * It serves one engine, "test:counting", for graphs of a single f32
 * IDENTITY pointwise node over packed tensors: it copies x to y.  Its
 * payload: "CNT1", then the element count and the uids of x and y as u64
 * LE (28 bytes), then the graph (<cdnn_sdk/payload_graph.h>), which restore checks the
 * fixed fields against.  Tests read the counters through
 * test_counting_calls().
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn/provider.h>

#include <cdnn_sdk/error.h>
#include <cdnn_sdk/payload_graph.h>
#include "identity_copy.h"

#ifndef COUNTING_VERSION
#define COUNTING_VERSION "1.0.0"
#endif

static atomic_int creates, saves, restores, executes;
static _Thread_local const char *message = "";

__attribute__((visibility("default"))) void test_counting_calls(int *c, int *s, int *r,
                                                                int *e)
{
    *c = atomic_load(&creates);
    *s = atomic_load(&saves);
    *r = atomic_load(&restores);
    *e = atomic_load(&executes);
}

typedef struct counting_context {
    uint64_t elements;
    int64_t x_uid, y_uid;
    sdk_payload_graph_t graph;
} counting_context_t;

static cdnn_status_t init(const cdnn_provider_host_t *host, void **state)
{
    *state = (void *)host;
    return CDNN_STATUS_SUCCESS;
}

static void fini(void *state)
{
    (void)state;
}

static int32_t engine_count(void *state)
{
    (void)state;
    return 1;
}

static cdnn_status_t engine_info(void *state, int32_t engine, cdnn_provider_engine_t *info)
{
    (void)state;
    (void)engine;
    info->name = "test:counting";
    info->rank = 100;
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
    if (!why)
        return CDNN_STATUS_SUCCESS;
    message = why;
    return CDNN_STATUS_NOT_SUPPORTED;
}

/* The fixed fields, from an applicable graph. */
static void describe(const cdnn_graph_view_t *g, counting_context_t *ctx)
{
    identity_copy_t copy = identity_copy_of(g);
    ctx->x_uid = copy.x_uid;
    ctx->y_uid = copy.y_uid;
    ctx->elements = copy.elements;
}

static cdnn_status_t context_create(void *state, int32_t engine, const cdnn_device_view_t *device,
                                    const cdnn_graph_view_t *g, const cdnn_knob_value_t *knobs,
                                    int32_t knob_count, void **context)
{
    (void)knobs;
    (void)knob_count;
    cdnn_status_t st = applicable(state, engine, device, g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    counting_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return CDNN_STATUS_ALLOC_FAILED;
    describe(g, ctx);
    if ((st = sdk_payload_graph_encode(state, g, &ctx->graph)) != CDNN_STATUS_SUCCESS) {
        free(ctx);
        return st;
    }
    atomic_fetch_add(&creates, 1);
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t workspace_size(void *context, size_t *bytes)
{
    (void)context;
    *bytes = 0;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t execute(void *context, const cdnn_exec_args_t *args)
{
    const counting_context_t *ctx = context;
    const void *x = identity_pointer_of(args, ctx->x_uid);
    void *y = identity_pointer_of(args, ctx->y_uid);
    if (!x || !y) {
        message = "test:counting lacks a pointer";
        return CDNN_STATUS_BAD_PARAM;
    }
    memcpy(y, x, ctx->elements * sizeof(float));
    atomic_fetch_add(&executes, 1);
    return CDNN_STATUS_SUCCESS;
}

static void context_destroy(void *context)
{
    counting_context_t *ctx = context;
    sdk_payload_graph_release(&ctx->graph);
    free(ctx);
}

static cdnn_status_t context_graph(void *context, const cdnn_graph_view_t **graph)
{
    const counting_context_t *ctx = context;
    *graph = ctx->graph.view;
    return *graph ? CDNN_STATUS_SUCCESS : CDNN_STATUS_BAD_STATE;
}

static const char *last_error(void *state)
{
    (void)state;
    return message;
}

/* Payload: "CNT1", u64 LE elements, u64 LE x uid, u64 LE y uid, graph. */
#define PAYLOAD_HEAD 28

/* Rule 4's stand-in: a provider must refuse to save when the code it would
 * embed no longer matches what it built with (for a kernel provider, a
 * changed kernel pack).  COUNTING_PACK_CHANGED=1 makes this one refuse. */
static cdnn_status_t context_save(void *context, void *buf, size_t cap, size_t *size)
{
    const counting_context_t *ctx = context;
    const char *changed = getenv("COUNTING_PACK_CHANGED");
    if (changed && changed[0] == '1') {
        message = "the code this plan was built with changed on disk since the "
                  "build (test:counting); rebuild the plan";
        return CDNN_STATUS_CORRUPT_DATA;
    }
    *size = PAYLOAD_HEAD + ctx->graph.size;
    if (!buf)
        return CDNN_STATUS_SUCCESS;
    if (cap < *size)
        return CDNN_STATUS_SIZE_INSUFFICIENT;
    uint8_t *p = buf;
    const uint64_t fields[3] = {ctx->elements, (uint64_t)ctx->x_uid, (uint64_t)ctx->y_uid};
    memcpy(p, "CNT1", 4);
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < 8; i++)
            p[4 + 8 * f + i] = (uint8_t)(fields[f] >> (8 * i));
    memcpy(p + PAYLOAD_HEAD, ctx->graph.bytes, ctx->graph.size);
    atomic_fetch_add(&saves, 1);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t context_restore(void *state, int32_t engine, const cdnn_device_view_t *device,
                                     const cdnn_graph_view_t *graph, const void *payload,
                                     size_t size, void **context)
{
    (void)graph;
    const uint8_t *p = payload;
    if (size <= PAYLOAD_HEAD || memcmp(p, "CNT1", 4) != 0) {
        message = "test:counting payload is not CNT1";
        return CDNN_STATUS_CORRUPT_DATA;
    }
    uint64_t fields[3] = {0, 0, 0};
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < 8; i++)
            fields[f] |= (uint64_t)p[4 + 8 * f + i] << (8 * i);
    counting_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return CDNN_STATUS_ALLOC_FAILED;
    cdnn_status_t st = sdk_payload_graph_decode(state, p + PAYLOAD_HEAD, size - PAYLOAD_HEAD,
                                         &ctx->graph);
    if (st != CDNN_STATUS_SUCCESS)
        message = sdk_last_error(NULL);
    else
        st = applicable(state, engine, device, ctx->graph.view);
    if (st == CDNN_STATUS_SUCCESS) {
        describe(ctx->graph.view, ctx);
        if (ctx->elements != fields[0] || ctx->x_uid != (int64_t)fields[1] ||
            ctx->y_uid != (int64_t)fields[2]) {
            message = "test:counting payload is inconsistent: its fields are not "
                      "its graph's";
            st = CDNN_STATUS_CORRUPT_DATA;
        }
    }
    if (st != CDNN_STATUS_SUCCESS) {
        context_destroy(ctx);
        return st;
    }
    atomic_fetch_add(&restores, 1);
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static const cdnn_provider_t counting_provider = {
    .abi_major = CDNN_PROVIDER_ABI_MAJOR,
    .abi_minor = CDNN_PROVIDER_ABI_MINOR,
    .struct_size = sizeof(cdnn_provider_t),
    .name = "counting",
    .version = COUNTING_VERSION,
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
    .context_graph = context_graph,
};

__attribute__((visibility("default"))) const cdnn_provider_t *cdnn_provider_entry(void)
{
    return &counting_provider;
}
