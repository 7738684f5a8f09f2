/*
 * copy_provider.c -- an example cdnn provider, built on the provider SDK.
 *
 * It serves one engine, "example:copy", for graphs of a single IDENTITY
 * pointwise node whose input and output are packed tensors of one data
 * type and element count: it copies x to y.  What it shows is what every
 * provider does, with the SDK doing the parts providers share:
 *
 *   - its engines are one table (sdk_engine_t), and engine_count,
 *     engine_info, knob_count and knob_info forward to the SDK;
 *   - a failure is `return sdk_fail(status, "...")`, and the table's
 *     last_error is sdk_last_error;
 *   - a plan's payload is a FlatBuffers table (<cdnn_sdk/flatbuf.h>) with
 *     the copy's fixed fields and the graph (the host's graph_encode).  A
 *     payload being restored is hostile: it is verified, its graph decoded
 *     and validated by the host, its fixed fields checked against that
 *     graph, and context_graph reports the graph to cdnn, which checks the
 *     plan's tensor table and content key against it.
 *
 * Its payload, as a schema (identifier "EXCP"):
 *
 *     table CopyPayload { major: ushort; minor: ushort; x_uid: long;
 *                         y_uid: long; bytes: ulong; graph: [ubyte]; }
 *
 * Building it against an installed cdnn: examples/provider/README.md.
 */
#include <stdlib.h>
#include <string.h>

#include <cdnn/provider.h>
#include <cdnn_sdk/engines.h>
#include <cdnn_sdk/error.h>
#include <cdnn_sdk/flatbuf.h>
#include <cdnn_sdk/payload_graph.h>

#define PAYLOAD_IDENTIFIER "EXCP"
#define PAYLOAD_MAJOR 1
#define PAYLOAD_MINOR 0

/* Ranked below the CPU provider's engines, so that installing the example
 * takes no graph from them unless a build asks for example:copy. */
static const sdk_engine_t engines[] = {
    {"example:copy", 5, PAYLOAD_MAJOR, PAYLOAD_MINOR, 0, NULL, NULL},
};
static const sdk_engine_table_t table = SDK_ENGINE_TABLE(engines);

/* ---- the copy ---------------------------------------------------------------- */

/* What a copy needs from its graph: the payload's fixed fields. */
typedef struct copy {
    int64_t x_uid, y_uid;
    uint64_t bytes;
} copy_t;

/* The tensor's element count if its strides are packed row-major, else 0. */
static uint64_t packed_elements(const cdnn_tensor_view_t *t)
{
    uint64_t n = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        if (t->dims[d] > 1 && t->strides[d] != (int64_t)n)
            return 0;
        n *= (uint64_t)t->dims[d];
    }
    return n;
}

/* SUCCESS if the engine runs g on device; else NOT_SUPPORTED and why. */
static cdnn_status_t check_graph(const cdnn_device_view_t *device, const cdnn_graph_view_t *g)
{
    const cdnn_node_view_t *n = g->node_count == 1 ? &g->nodes[0] : NULL;
    if (device->kind != CDNN_DEVICE_CPU)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "runs on the CPU only, not on %s",
                        device->name);
    if (!n || n->op != CDNN_OP_POINTWISE || n->attr.pointwise.mode != CDNN_PW_IDENTITY)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "runs one identity pointwise node only");
    const cdnn_tensor_view_t *x = &g->tensors[n->inputs[0]], *y = &g->tensors[n->outputs[0]];
    uint64_t elements = packed_elements(x);
    if (x->type != y->type || !elements || elements != packed_elements(y))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "needs packed tensors of one type "
                        "and one element count");
    return CDNN_STATUS_SUCCESS;
}

static int same_copy(const copy_t *a, const copy_t *b)
{
    return a->x_uid == b->x_uid && a->y_uid == b->y_uid && a->bytes == b->bytes;
}

/* The copy a graph that passed check_graph asks for. */
static copy_t copy_of(const cdnn_graph_view_t *g)
{
    const cdnn_tensor_view_t *x = &g->tensors[g->nodes[0].inputs[0]];
    const cdnn_tensor_view_t *y = &g->tensors[g->nodes[0].outputs[0]];
    return (copy_t){x->uid, y->uid, packed_elements(x) * cdnn_data_type_size(x->type)};
}

/* ---- the payload --------------------------------------------------------------- */

enum { P_MAJOR, P_MINOR, P_X_UID, P_Y_UID, P_BYTES, P_GRAPH, P_FIELDS };

static const fb_field_desc_t payload_fields[P_FIELDS] = {
    [P_MAJOR] = {FB_SCALAR, 2},  [P_MINOR] = {FB_SCALAR, 2},
    [P_X_UID] = {FB_SCALAR, 8},  [P_Y_UID] = {FB_SCALAR, 8},
    [P_BYTES] = {FB_SCALAR, 8},  [P_GRAPH] = {FB_VECTOR, 1, 1},
};
static const fb_table_desc_t payload_desc = {"CopyPayload", P_FIELDS, payload_fields};

/* The payload of a copy and its encoded graph, malloc'd into *bytes. */
static cdnn_status_t payload_encode(const copy_t *copy, const uint8_t *graph,
                                    size_t graph_size, uint8_t **bytes, size_t *size)
{
    fb_builder_t b;
    fb_builder_init(&b);
    fb_ref_t graph_ref = fb_bytes(&b, graph, graph_size);
    fb_table_start(&b, P_FIELDS);
    fb_add_u16(&b, P_MAJOR, PAYLOAD_MAJOR, 0);
    fb_add_u16(&b, P_MINOR, PAYLOAD_MINOR, 0);
    fb_add_i64(&b, P_X_UID, copy->x_uid, 0);
    fb_add_i64(&b, P_Y_UID, copy->y_uid, 0);
    fb_add_u64(&b, P_BYTES, copy->bytes, 0);
    fb_add_ref(&b, P_GRAPH, graph_ref);
    int failed = fb_finish_copy(&b, fb_table_end(&b), PAYLOAD_IDENTIFIER, bytes, size);
    fb_builder_free(&b);
    return failed ? sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory saving a plan")
                  : CDNN_STATUS_SUCCESS;
}

/* Verify hostile payload bytes; *copy and *graph (inside the bytes) are
 * what they claim, not yet checked against each other. */
static cdnn_status_t payload_decode(const uint8_t *bytes, size_t size, copy_t *copy,
                                    const uint8_t **graph, size_t *graph_size)
{
    char why[256];
    if (fb_verify(bytes, size, PAYLOAD_IDENTIFIER, &payload_desc, why, sizeof why) != 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the payload is damaged: %s", why);
    fb_table_t root = fb_root(bytes, size);
    uint16_t major = fb_get_u16(&root, P_MAJOR, 0);
    if (major != PAYLOAD_MAJOR)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "payload format %u.x; this provider "
                        "reads %d.x", major, PAYLOAD_MAJOR);
    uint32_t n = 0;
    *graph = fb_get_vector(&root, P_GRAPH, &n);
    *graph_size = n;
    if (!*graph)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the payload is damaged: it has no graph");
    *copy = (copy_t){fb_get_i64(&root, P_X_UID, 0), fb_get_i64(&root, P_Y_UID, 0),
                     fb_get_u64(&root, P_BYTES, 0)};
    return CDNN_STATUS_SUCCESS;
}

/* ---- contexts ------------------------------------------------------------------ */

/* A built context keeps the payload that rebuilds it, made at creation so
 * that saving cannot fail and gives the same bytes every time; a restored
 * one keeps the graph its payload carries (decoded by the host). */
typedef struct copy_context {
    const cdnn_provider_host_t *host;
    copy_t copy;
    uint8_t *payload;
    size_t payload_size;
    sdk_payload_graph_t restored; /* .view NULL unless restored */
} copy_context_t;

static void context_destroy(void *context)
{
    copy_context_t *ctx = context;
    sdk_payload_graph_release(&ctx->restored);
    free(ctx->payload);
    free(ctx);
}

static cdnn_status_t context_new(const cdnn_provider_host_t *host, copy_context_t **context)
{
    *context = calloc(1, sizeof **context);
    if (!*context)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    (*context)->host = host;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t make_payload(copy_context_t *ctx, const cdnn_graph_view_t *g)
{
    sdk_payload_graph_t encoded;
    cdnn_status_t st = sdk_payload_graph_encode(ctx->host, g, &encoded);
    if (st == CDNN_STATUS_SUCCESS)
        st = payload_encode(&ctx->copy, encoded.bytes, encoded.size, &ctx->payload,
                            &ctx->payload_size);
    sdk_payload_graph_release(&encoded);
    return st;
}

/* The payload's graph, decoded and validated by the host, and its fixed
 * fields, which must be what that graph asks for. */
static cdnn_status_t restore_graph(copy_context_t *ctx, const cdnn_device_view_t *device,
                                   const uint8_t *graph, size_t graph_size,
                                   const copy_t *claimed)
{
    cdnn_status_t st = sdk_payload_graph_decode(ctx->host, graph, graph_size,
                                                &ctx->restored);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = check_graph(device, ctx->restored.view);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    ctx->copy = copy_of(ctx->restored.view);
    if (!same_copy(&ctx->copy, claimed))
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the payload is inconsistent: its uids "
                        "and byte count are not those of the graph it carries");
    return CDNN_STATUS_SUCCESS;
}

/* ---- the ABI table --------------------------------------------------------------- */

static cdnn_status_t init(const cdnn_provider_host_t *host, void **state)
{
    if (!host || host->struct_size < sizeof *host || !host->graph_encode)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the cdnn loading this provider offers no graph encoding");
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
    return sdk_engine_count(&table);
}

static cdnn_status_t engine_info(void *state, int32_t engine, cdnn_provider_engine_t *info)
{
    (void)state;
    return sdk_engine_info(&table, engine, info);
}

static int32_t knob_count(void *state, int32_t engine)
{
    (void)state;
    return sdk_knob_count(&table, engine);
}

static cdnn_status_t knob_info(void *state, int32_t engine, int32_t knob,
                               cdnn_knob_info_t *info)
{
    (void)state;
    return sdk_knob_info(&table, engine, knob, info);
}

static cdnn_status_t applicable(void *state, int32_t engine, const cdnn_device_view_t *device,
                                const cdnn_graph_view_t *graph)
{
    (void)state;
    const sdk_engine_t *e = NULL;
    cdnn_status_t st = sdk_engine_at(&table, engine, &e);
    return st != CDNN_STATUS_SUCCESS ? st : check_graph(device, graph);
}

static cdnn_status_t context_create(void *state, int32_t engine,
                                    const cdnn_device_view_t *device,
                                    const cdnn_graph_view_t *graph,
                                    const cdnn_knob_value_t *knobs, int32_t knob_count,
                                    void **context)
{
    (void)knobs; /* the engine declares none, so cdnn passes none */
    (void)knob_count;
    copy_context_t *ctx = NULL;
    cdnn_status_t st = applicable(state, engine, device, graph);
    if (st == CDNN_STATUS_SUCCESS)
        st = context_new(state, &ctx);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    ctx->copy = copy_of(graph);
    st = make_payload(ctx, graph);
    if (st != CDNN_STATUS_SUCCESS) {
        context_destroy(ctx);
        return st;
    }
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t workspace_size(void *context, size_t *bytes)
{
    (void)context;
    *bytes = 0;
    return CDNN_STATUS_SUCCESS;
}

/* The variant pack's pointer for uid, or NULL. */
static void *pointer_of(const cdnn_exec_args_t *args, int64_t uid)
{
    for (int32_t i = 0; i < args->count; i++)
        if (args->uids[i] == uid)
            return args->ptrs[i];
    return NULL;
}

static cdnn_status_t execute(void *context, const cdnn_exec_args_t *args)
{
    const copy_context_t *ctx = context;
    const void *x = pointer_of(args, ctx->copy.x_uid);
    void *y = pointer_of(args, ctx->copy.y_uid);
    if (!x || !y)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "the variant pack lacks tensor uid %lld",
                        (long long)(x ? ctx->copy.y_uid : ctx->copy.x_uid));
    memcpy(y, x, ctx->copy.bytes);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t context_save(void *context, void *buf, size_t cap, size_t *size)
{
    const copy_context_t *ctx = context;
    if (!ctx->payload)
        return sdk_fail(CDNN_STATUS_BAD_STATE, "this plan was loaded from saved bytes; "
                        "cdnn saves it from those bytes and does not call the provider");
    *size = ctx->payload_size;
    if (!buf)
        return CDNN_STATUS_SUCCESS;
    if (cap < ctx->payload_size)
        return sdk_fail(CDNN_STATUS_SIZE_INSUFFICIENT, "the payload needs %zu bytes, "
                        "%zu given", ctx->payload_size, cap);
    memcpy(buf, ctx->payload, ctx->payload_size);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t context_restore(void *state, int32_t engine,
                                     const cdnn_device_view_t *device,
                                     const cdnn_graph_view_t *graph, const void *payload,
                                     size_t size, void **context)
{
    (void)graph; /* the payload carries the graph the plan was built from */
    const sdk_engine_t *e = NULL;
    copy_t claimed;
    const uint8_t *graph_bytes = NULL;
    size_t graph_size = 0;
    copy_context_t *ctx = NULL;
    cdnn_status_t st = sdk_engine_at(&table, engine, &e);
    if (st == CDNN_STATUS_SUCCESS)
        st = payload_decode(payload, size, &claimed, &graph_bytes, &graph_size);
    if (st == CDNN_STATUS_SUCCESS)
        st = context_new(state, &ctx);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = restore_graph(ctx, device, graph_bytes, graph_size, &claimed);
    if (st != CDNN_STATUS_SUCCESS) {
        context_destroy(ctx);
        return st;
    }
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t context_graph(void *context, const cdnn_graph_view_t **graph)
{
    const copy_context_t *ctx = context;
    *graph = ctx->restored.view;
    return *graph ? CDNN_STATUS_SUCCESS
                  : sdk_fail(CDNN_STATUS_BAD_STATE, "the context was built, not restored; "
                             "cdnn holds its graph");
}

static const cdnn_provider_t provider = {
    .abi_major = CDNN_PROVIDER_ABI_MAJOR,
    .abi_minor = CDNN_PROVIDER_ABI_MINOR,
    .struct_size = sizeof(cdnn_provider_t),
    .name = "example",
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
    .last_error = sdk_last_error,
    .context_save = context_save,
    .context_restore = context_restore,
    .knob_count = knob_count,
    .knob_info = knob_info,
    .context_graph = context_graph,
};

/* The one symbol a provider exports; everything else, the SDK included,
 * stays hidden (build with -fvisibility=hidden). */
__attribute__((visibility("default"))) const cdnn_provider_t *cdnn_provider_entry(void)
{
    return &provider;
}
