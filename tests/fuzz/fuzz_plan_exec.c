/*
 * fuzz_plan_exec -- load re-sealed plans on a CPU handle and EXECUTE what
 * loads, with buffers of exactly the sizes the plan declares.
 *
 * A plan's SHA-256 is no signature: anyone can edit a plan and seal it
 * again.  What such a plan's tensor table declares is what a caller
 * allocates, so the table and the graph the payload runs must agree, or
 * execute writes past the caller's buffers (issue 8).  The first input
 * byte chooses how the rest becomes a plan:
 *
 *   0  the rest is a PlanBody, sealed in a valid envelope (fuzz_seal.h);
 *   1  the rest is a CPU payload, placed in a body a cooperating forger
 *      derives from the payload's graph: tensor table, workspace size and
 *      content key as cdnn would record them, so that fuzzed payloads get
 *      past the plan's consistency checks and reach execution;
 *   2  as 1, with one field of the derived body changed: byte 1 picks the
 *      field, byte 2 the tensor (or content-key byte), bytes 3..10 are
 *      XORed into it (little-endian); the payload follows.
 *
 * Whatever loads is executed with exact-size buffers (ASan sees one byte
 * too far) and must re-save to exactly the bytes it was loaded from.
 * The derivation uses only public calls and this file's own reading of
 * the graph bytes (FORMATS.md sections 2 and 5), never cdnn's internals.
 * At exit the target prints how many inputs of each mode loaded and ran.
 */
#include "fuzz_seal.h"

enum { MODE_BODY, MODE_PAYLOAD, MODE_PERTURBED, MODE_COUNT };

/* Mode 2's header after the mode byte: field, index, 8-byte mask. */
#define PERTURB_HEADER 10
enum { PERTURB_UID, PERTURB_ALIGNMENT, PERTURB_SPAN, PERTURB_TYPE, PERTURB_OUTPUT,
       PERTURB_WORKSPACE, PERTURB_KEY, PERTURB_FIELDS };

/* Execute only what is cheap: at most this many tensors and bytes
 * (tensors and workspace), and a bound on the work.  A convolution,
 * matmul or attention does at most (elements of its largest operand) x
 * (elements of the next largest) multiply-adds, so the product of the two
 * largest tensors' element counts bounds a node's work. */
#define EXEC_MAX_TENSORS 64
#define EXEC_MAX_BYTES ((size_t)4 << 20)
#define EXEC_MAX_WORK ((uint64_t)1 << 16)
#define EXEC_MAX_ALIGNMENT 4096

/* A PlanTensor (schema/plan.fbs): 32 bytes, aligned 8. */
#define PLAN_TENSOR_BYTES 32

typedef struct derived_tensor {
    int64_t uid, alignment;
    uint64_t span_bytes;
    uint8_t type, is_output;
} derived_tensor_t;

/* The body a forger writes around a payload. */
typedef struct forged_body {
    char engine[64];
    uint16_t payload_major, payload_minor;
    derived_tensor_t *tensors;
    uint32_t tensor_count;
    uint64_t workspace_size;
    uint8_t content_key[32];
} forged_body_t;

static cdnn_handle_t *handle;

static struct {
    unsigned long inputs, loaded, executed, too_large, execute_failed;
} stats[MODE_COUNT];

static const char *const mode_names[MODE_COUNT] = {"body", "payload", "perturbed"};

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void print_stats(void)
{
    for (int m = 0; m < MODE_COUNT; m++)
        fprintf(stderr,
                "fuzz_plan_exec: mode %s: %lu inputs, %lu loaded, %lu refused; "
                "%lu executed, %lu too large to execute, %lu failed at execute\n",
                mode_names[m], stats[m].inputs, stats[m].loaded,
                stats[m].inputs - stats[m].loaded, stats[m].executed,
                stats[m].too_large, stats[m].execute_failed);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* The forger's builds must not read or write the user's winner cache. */
    setenv("CDNN_DISABLE_CACHE", "1", 1);
    if (cdnn_handle_create(&handle, "cpu") != CDNN_STATUS_SUCCESS)
        fuzz_die("no CPU handle");
    atexit(print_stats);
    return 0;
}

/* ---- reading the payload and its graph (schema/cpu_payload.fbs, graph.fbs) */

enum { PAYLOAD_MAJOR, PAYLOAD_MINOR, PAYLOAD_ENGINE, PAYLOAD_KNOBS, PAYLOAD_GRAPH,
       PAYLOAD_FIELDS };
enum { KNOB_NAME, KNOB_VALUE, KNOB_FIELDS };
enum { GRAPH_TENSORS = 6, GRAPH_NODES = 7, GRAPH_SHA256 = 8, GRAPH_FIELDS = 9 };
enum { TENSOR_UID, TENSOR_NAME, TENSOR_TYPE, TENSOR_DIMS, TENSOR_STRIDES,
       TENSOR_VIRTUAL, TENSOR_ALIGNMENT, TENSOR_SCALAR, TENSOR_FIELDS };
enum { NODE_NAME, NODE_OP, NODE_INPUTS, NODE_OUTPUTS, NODE_FIELDS };
#define PORT_BYTES 16 /* struct Port { slot: ubyte; uid: long; } */
#define PORT_UID 8

static const fb_field_desc_t knob_fields[KNOB_FIELDS] = {
    [KNOB_NAME] = {FB_STRING},
    [KNOB_VALUE] = {FB_SCALAR, 8},
};
static const fb_table_desc_t knob_desc = {"CpuKnob", KNOB_FIELDS, knob_fields};
static const fb_field_desc_t payload_fields[PAYLOAD_FIELDS] = {
    [PAYLOAD_MAJOR] = {FB_SCALAR, 2},
    [PAYLOAD_MINOR] = {FB_SCALAR, 2},
    [PAYLOAD_ENGINE] = {FB_STRING},
    [PAYLOAD_KNOBS] = {FB_VECTOR_TABLE, 0, 0, &knob_desc},
    [PAYLOAD_GRAPH] = {FB_VECTOR, 1, 1},
};
static const fb_table_desc_t payload_desc = {"CpuPayload", PAYLOAD_FIELDS,
                                             payload_fields};

/* Only the fields the forger reads; the rest (attributes) is ignored. */
static const fb_field_desc_t tensor_fields[TENSOR_FIELDS] = {
    [TENSOR_UID] = {FB_SCALAR, 8},
    [TENSOR_NAME] = {FB_STRING},
    [TENSOR_TYPE] = {FB_SCALAR, 1},
    [TENSOR_DIMS] = {FB_VECTOR, 8, 8},
    [TENSOR_STRIDES] = {FB_VECTOR, 8, 8},
    [TENSOR_VIRTUAL] = {FB_SCALAR, 1},
    [TENSOR_ALIGNMENT] = {FB_SCALAR, 8},
    [TENSOR_SCALAR] = {FB_SCALAR, 1},
};
static const fb_table_desc_t tensor_desc = {"Tensor", TENSOR_FIELDS, tensor_fields};
static const fb_field_desc_t node_fields[NODE_FIELDS] = {
    [NODE_NAME] = {FB_STRING},
    [NODE_OP] = {FB_SCALAR, 1},
    [NODE_INPUTS] = {FB_VECTOR, PORT_BYTES, 8},
    [NODE_OUTPUTS] = {FB_VECTOR, PORT_BYTES, 8},
};
static const fb_table_desc_t node_desc = {"Node", NODE_FIELDS, node_fields};
static const fb_field_desc_t graph_fields[GRAPH_FIELDS] = {
    {FB_SCALAR, 2}, {FB_SCALAR, 2}, {FB_STRING}, {FB_SCALAR, 1}, {FB_SCALAR, 1},
    {FB_SCALAR, 1},
    [GRAPH_TENSORS] = {FB_VECTOR_TABLE, 0, 0, &tensor_desc},
    [GRAPH_NODES] = {FB_VECTOR_TABLE, 0, 0, &node_desc},
    [GRAPH_SHA256] = {FB_VECTOR, 1, 1},
};
static const fb_table_desc_t graph_desc = {"Graph", GRAPH_FIELDS, graph_fields};

/* Does some node of the graph write tensor uid? */
static int is_written(const fb_table_t *graph, int64_t uid)
{
    uint32_t nodes = 0;
    fb_get_vector(graph, GRAPH_NODES, &nodes);
    for (uint32_t n = 0; n < nodes; n++) {
        fb_table_t node = fb_vector_table(graph, GRAPH_NODES, n);
        uint32_t ports = 0;
        const uint8_t *port = fb_get_vector(&node, NODE_OUTPUTS, &ports);
        for (uint32_t p = 0; p < ports; p++)
            if (fb_read_i64(port + p * PORT_BYTES + PORT_UID) == uid)
                return 1;
    }
    return 0;
}

/* One table entry from the validated graph's view of the tensor. */
static int derive_tensor(const cdnn_graph_t *g, const fb_table_t *graph,
                         const fb_table_t *t, derived_tensor_t *out)
{
    int64_t dims[CDNN_MAX_RANK], strides[CDNN_MAX_RANK];
    cdnn_data_type_t type;
    int32_t rank = 0;
    int64_t uid = fb_get_i64(t, TENSOR_UID, 0);
    if (cdnn_graph_tensor_shape(g, uid, &type, &rank, dims, strides) != CDNN_STATUS_SUCCESS)
        return -1;
    uint64_t last = 0;
    for (int32_t d = 0; d < rank; d++)
        last += (uint64_t)(dims[d] - 1) * (uint64_t)strides[d];
    *out = (derived_tensor_t){uid, fb_get_i64(t, TENSOR_ALIGNMENT, 0),
                              (last + 1) * cdnn_data_type_size(type), (uint8_t)type,
                              (uint8_t)is_written(graph, uid)};
    return 0;
}

/* The tensor table (non-virtual, non-scalar tensors in declaration order)
 * of verified graph bytes that loaded as g. */
static int derive_table(const cdnn_graph_t *g, const uint8_t *bytes, size_t size,
                        forged_body_t *f)
{
    fb_table_t graph = fb_root(bytes, size);
    uint32_t count = 0;
    fb_get_vector(&graph, GRAPH_TENSORS, &count);
    if (!(f->tensors = calloc((size_t)count + 1, sizeof *f->tensors)))
        fuzz_die("out of memory in the harness");
    for (uint32_t i = 0; i < count; i++) {
        fb_table_t t = fb_vector_table(&graph, GRAPH_TENSORS, i);
        if (fb_get_bool(&t, TENSOR_VIRTUAL, 0) || fb_get_bool(&t, TENSOR_SCALAR, 0))
            continue;
        if (derive_tensor(g, &graph, &t, &f->tensors[f->tensor_count]) != 0)
            return -1;
        f->tensor_count++;
    }
    return 0;
}

static void key_from_hex(const char hex[65], uint8_t key[32])
{
    for (int i = 0; i < 32; i++) {
        unsigned byte = 0;
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
            fuzz_die("content key %s is not hex", hex);
        key[i] = (uint8_t)byte;
    }
}

/* The workspace a build on the payload's engine with its knobs needs
 * (a build is what made the payload); 0 when the graph does not build,
 * e.g. with a knob the build refuses. */
static uint64_t derive_workspace(cdnn_graph_t *g, const fb_table_t *payload,
                                 const char *engine)
{
    cdnn_build_options_t *opts = NULL;
    size_t bytes = 0;
    uint32_t knobs = 0;
    if (cdnn_build_options_create(&opts) != CDNN_STATUS_SUCCESS)
        fuzz_die("no build options");
    cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(engine));
    fb_get_vector(payload, PAYLOAD_KNOBS, &knobs);
    for (uint32_t i = 0; i < knobs; i++) {
        fb_table_t knob = fb_vector_table(payload, PAYLOAD_KNOBS, i);
        const char *name = fb_get_string(&knob, KNOB_NAME, NULL);
        if (name)
            cdnn_build_options_set_knob(opts, name, fb_get_i64(&knob, KNOB_VALUE, 0));
    }
    if (cdnn_graph_build(g, handle, opts) != CDNN_STATUS_SUCCESS ||
        cdnn_graph_workspace_size(g, &bytes) != CDNN_STATUS_SUCCESS)
        bytes = 0;
    cdnn_build_options_destroy(opts);
    return bytes;
}

/*
 * Graph format 1.1 carries a SHA-256 of the whole graph buffer, computed
 * with its own 32 bytes zeroed (FORMATS.md section 2): write the one that
 * matches the (fuzzed) graph inside the payload, so that it reaches the
 * graph loader's other checks.  graph_desc verifies a subset of what the
 * loader verifies, so no graph the loader would read goes unsealed.  What
 * reads the payload afterwards verifies it again: hostile offsets may
 * share the 32 bytes written with other fields.
 */
static void reseal_graph(uint8_t *payload, size_t size)
{
    uint32_t graph_size = 0, n = 0;
    if (fb_verify(payload, size, "CDCP", &payload_desc, NULL, 0) != 0)
        return;
    fb_table_t root = fb_root(payload, size);
    const uint8_t *graph = fb_get_vector(&root, PAYLOAD_GRAPH, &graph_size);
    if (!graph || fb_verify(graph, graph_size, NULL, &graph_desc, NULL, 0) != 0)
        return;
    fb_table_t graph_root = fb_root(graph, graph_size);
    const uint8_t *digest = fb_get_vector(&graph_root, GRAPH_SHA256, &n);
    if (!digest || n != 32)
        return;
    uint8_t *at = payload + (digest - payload);
    memset(at, 0, 32);
    if (!EVP_Digest(graph, graph_size, at, NULL, EVP_sha256(), NULL))
        fuzz_die("SHA-256 failed in the harness");
}

/* Everything the body records about the graph the payload runs: what a
 * cooperating forger writes.  What cannot be derived (a payload or graph
 * that does not read) is left empty, so that the payload still reaches
 * the provider's decoder. */
static void derive_body(const uint8_t *payload, size_t size, forged_body_t *f)
{
    *f = (forged_body_t){.engine = "cpu:reference", .payload_major = 1};
    if (fb_verify(payload, size, "CDCP", &payload_desc, NULL, 0) != 0)
        return;
    fb_table_t root = fb_root(payload, size);
    uint32_t len = 0, graph_size = 0;
    const char *engine = fb_get_string(&root, PAYLOAD_ENGINE, &len);
    if (engine && len < sizeof f->engine && strlen(engine) == len)
        memcpy(f->engine, engine, len + 1);
    f->payload_major = fb_get_u16(&root, PAYLOAD_MAJOR, 0);
    f->payload_minor = fb_get_u16(&root, PAYLOAD_MINOR, 0);
    const uint8_t *graph_bytes = fb_get_vector(&root, PAYLOAD_GRAPH, &graph_size);
    if (!graph_bytes ||
        fb_verify(graph_bytes, graph_size, NULL, &graph_desc, NULL, 0) != 0)
        return;
    cdnn_graph_t *g = NULL;
    char key[65];
    if (cdnn_graph_load(&g, NULL, graph_bytes, graph_size) != CDNN_STATUS_SUCCESS ||
        cdnn_graph_validate(g) != CDNN_STATUS_SUCCESS ||
        cdnn_graph_content_key(g, key) != CDNN_STATUS_SUCCESS ||
        derive_table(g, graph_bytes, graph_size, f) != 0) {
        f->tensor_count = 0;
        cdnn_graph_destroy(g);
        return;
    }
    key_from_hex(key, f->content_key);
    f->workspace_size = derive_workspace(g, &root, f->engine);
    cdnn_graph_destroy(g);
}

/* Mode 2: XOR the mask into one field of the derived body. */
static void perturb(forged_body_t *f, const uint8_t header[PERTURB_HEADER])
{
    uint64_t mask = 0;
    for (int i = 0; i < 8; i++)
        mask |= (uint64_t)header[2 + i] << (8 * i);
    int field = header[0] % PERTURB_FIELDS;
    if (field == PERTURB_WORKSPACE) {
        f->workspace_size ^= mask;
        return;
    }
    if (field == PERTURB_KEY) {
        f->content_key[header[1] % 32] ^= (uint8_t)mask;
        return;
    }
    if (f->tensor_count == 0)
        return;
    derived_tensor_t *t = &f->tensors[header[1] % f->tensor_count];
    switch (field) {
    case PERTURB_UID: t->uid ^= (int64_t)mask; break;
    case PERTURB_ALIGNMENT: t->alignment ^= (int64_t)mask; break;
    case PERTURB_SPAN: t->span_bytes ^= mask; break;
    case PERTURB_TYPE: t->type ^= (uint8_t)mask; break;
    default: t->is_output ^= (uint8_t)mask; break;
    }
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The body (schema/plan.fbs PlanBody), children first as cdnn writes it. */
static uint8_t *encode_body(const forged_body_t *f, const uint8_t *payload,
                            size_t payload_size, size_t *n)
{
    uint8_t *packed = calloc((size_t)f->tensor_count + 1, PLAN_TENSOR_BYTES);
    if (!packed)
        fuzz_die("out of memory in the harness");
    for (uint32_t i = 0; i < f->tensor_count; i++) {
        uint8_t *p = packed + (size_t)i * PLAN_TENSOR_BYTES;
        put_le64(p, (uint64_t)f->tensors[i].uid);
        put_le64(p + 8, (uint64_t)f->tensors[i].alignment);
        put_le64(p + 16, f->tensors[i].span_bytes);
        p[24] = f->tensors[i].type;
        p[25] = f->tensors[i].is_output;
    }
    fb_builder_t b;
    fb_builder_init(&b);
    fb_ref_t key = fb_bytes(&b, f->content_key, sizeof f->content_key);
    fb_ref_t payload_ref = fb_bytes(&b, payload, payload_size);
    fb_ref_t tensors = fb_vector_structs(&b, packed, PLAN_TENSOR_BYTES, 8, f->tensor_count);
    fb_ref_t version = fb_string(&b, "fuzz");
    fb_ref_t provider = fb_string(&b, "cpu");
    fb_ref_t engine = fb_string(&b, f->engine);
    fb_table_start(&b, 12);
    fb_add_u64(&b, 0, cdnn_engine_id_from_name(f->engine), 0);
    fb_add_ref(&b, 1, engine);
    fb_add_ref(&b, 2, provider);
    fb_add_ref(&b, 3, version);
    fb_add_ref(&b, 6, tensors);
    fb_add_u64(&b, 7, f->workspace_size, 0);
    fb_add_u16(&b, 8, f->payload_major, 0);
    fb_add_u16(&b, 9, f->payload_minor, 0);
    fb_add_ref(&b, 10, payload_ref);
    fb_add_ref(&b, 11, key);
    free(packed);
    return seal_take(&b, fb_table_end(&b), NULL, n);
}

/* ---- executing what loads ------------------------------------------------ */

/* Is the plan cheap enough to run thousands of times a second? */
static int cheap(const cdnn_tensor_io_t *io, int32_t count, size_t workspace)
{
    size_t total = workspace;
    uint64_t largest = 0, second = 0;
    if (count > EXEC_MAX_TENSORS || workspace > EXEC_MAX_BYTES)
        return 0;
    for (int32_t i = 0; i < count; i++) {
        size_t elem = cdnn_data_type_size(io[i].type);
        uint64_t elements = elem ? io[i].span_bytes / elem : io[i].span_bytes;
        if (io[i].span_bytes > EXEC_MAX_BYTES - total ||
            io[i].alignment > EXEC_MAX_ALIGNMENT)
            return 0;
        total += io[i].span_bytes;
        if (elements > largest) {
            second = largest;
            largest = elements;
        } else if (elements > second) {
            second = elements;
        }
    }
    return largest * second <= EXEC_MAX_WORK;
}

/* A buffer of exactly n bytes, aligned as the plan requires, filled with
 * the same bytes every time (a valid value for every type). */
static void *tensor_buffer(const cdnn_tensor_io_t *t)
{
    void *p = NULL;
    size_t align = t->alignment > (int64_t)sizeof(void *) ? (size_t)t->alignment
                                                         : sizeof(void *);
    if (posix_memalign(&p, align, t->span_bytes) != 0)
        fuzz_die("out of memory in the harness (%zu bytes)", t->span_bytes);
    memset(p, t->type == CDNN_DATA_TYPE_BOOL ? 0x01 : 0x3e, t->span_bytes);
    return p;
}

static void execute(const cdnn_graph_t *g, int mode)
{
    int32_t count = 0;
    size_t workspace_size = 0;
    if (cdnn_graph_io_tensors(g, NULL, 0, &count) != CDNN_STATUS_SUCCESS ||
        cdnn_graph_workspace_size(g, &workspace_size) != CDNN_STATUS_SUCCESS)
        fuzz_die("a loaded plan does not say what it executes on");
    cdnn_tensor_io_t *io = calloc((size_t)count + 1, sizeof *io);
    int64_t *uids = calloc((size_t)count + 1, sizeof *uids);
    void **ptrs = calloc((size_t)count + 1, sizeof *ptrs);
    if (!io || !uids || !ptrs)
        fuzz_die("out of memory in the harness");
    if (cdnn_graph_io_tensors(g, io, count, &count) != CDNN_STATUS_SUCCESS)
        fuzz_die("a loaded plan's io tensors cannot be listed");
    if (cheap(io, count, workspace_size)) {
        void *workspace = workspace_size ? malloc(workspace_size) : NULL;
        if (workspace_size && !workspace)
            fuzz_die("out of memory in the harness");
        if (workspace)
            memset(workspace, 0x5a, workspace_size);
        for (int32_t i = 0; i < count; i++) {
            uids[i] = io[i].uid;
            ptrs[i] = tensor_buffer(&io[i]);
        }
        stats[mode].executed++;
        if (cdnn_graph_execute(g, handle, count, uids, ptrs, workspace) !=
            CDNN_STATUS_SUCCESS)
            stats[mode].execute_failed++;
        for (int32_t i = 0; i < count; i++)
            free(ptrs[i]);
        free(workspace);
    } else {
        stats[mode].too_large++;
    }
    free(ptrs);
    free(uids);
    free(io);
}

/* Load, execute, and check that the plan re-saves to the bytes it came
 * from (rule 1), after it has run. */
static void load_and_run(const uint8_t *plan, size_t plan_size, int mode)
{
    cdnn_graph_t *g = NULL;
    stats[mode].inputs++;
    if (cdnn_plan_load(&g, handle, plan, plan_size) != CDNN_STATUS_SUCCESS) {
        fuzz_expect_null(g, "cdnn_plan_load");
        return;
    }
    stats[mode].loaded++;
    execute(g, mode);
    cdnn_status_t st;
    size_t n = 0;
    uint8_t *saved = fuzz_save(g, CDNN_SAVE_PLAN, &n, &st);
    if (!saved)
        fuzz_die("a loaded plan does not save (status %d)", (int)st);
    fuzz_same(plan, plan_size, saved, n, "a loaded plan's saved bytes");
    free(saved);
    cdnn_graph_destroy(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int mode = data[0] % MODE_COUNT;
    size_t skip = 1 + (mode == MODE_PERTURBED ? PERTURB_HEADER : 0);
    if (size < skip)
        return 0;
    const uint8_t *body = data + skip;
    size_t body_size = size - skip, plan_size = 0;
    uint8_t *forged = NULL;
    if (mode != MODE_BODY) {
        /* The payload at the start of its own (aligned) buffer, as the
         * verifier checks alignment from a buffer's start. */
        size_t payload_size = size - skip;
        uint8_t *payload = malloc(payload_size + 1);
        forged_body_t f;
        if (!payload)
            fuzz_die("out of memory in the harness");
        memcpy(payload, data + skip, payload_size);
        reseal_graph(payload, payload_size);
        derive_body(payload, payload_size, &f);
        if (mode == MODE_PERTURBED)
            perturb(&f, data + 1);
        body = forged = encode_body(&f, payload, payload_size, &body_size);
        free(f.tensors);
        free(payload);
    }
    uint8_t *plan = seal_plan(body, body_size, &plan_size);
    load_and_run(plan, plan_size, mode);
    free(plan);
    free(forged);
    return 0;
}
