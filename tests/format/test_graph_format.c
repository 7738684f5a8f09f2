/*
 * test_graph_format.c -- the graph artifact in its binary and JSON forms.
 *
 * Every example graph survives JSON -> graph -> bytes -> graph -> bytes
 * byte for byte, and JSON -> graph -> JSON text for text, with its content
 * key unchanged, and runs on cpu:reference.  Mix-ups, versions, damaged
 * bytes and hostile JSON each fail with a clear status and message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn/cdnn.h>
#include <cdnn_sdk/flatbuf.h>

#include "format/container_format.h"
#include "format/graph_format.h"
#include "format/graph_json.h"
#include "format/plan_format.h"
#include "graph/graph.h"

#define OK(call)                                                               \
    do {                                                                       \
        cdnn_status_t st_ = (call);                                            \
        if (st_ != CDNN_STATUS_SUCCESS)                                        \
            fail_msg("%s: %s: %s", #call, cdnn_status_string(st_),             \
                     cdnn_last_error());                                       \
    } while (0)

static const char *const examples[] = {
    "conv_fwd",   "conv_bwd_data", "conv_bwd_filter", "matmul",
    "pointwise",  "reduction",     "batchnorm",       "layernorm",
    "rmsnorm",    "sdpa",          "conv_bias_relu",  "matmul_bias_gelu_residual"};
#define N_EXAMPLES (sizeof examples / sizeof *examples)

/* ---- helpers ------------------------------------------------------------ */

static char *read_example(const char *name, size_t *n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.json", EXAMPLES_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    text[size] = '\0';
    *n = (size_t)size;
    return text;
}

static cdnn_graph_t *load_example(const char *name)
{
    size_t n;
    char *text = read_example(name, &n);
    cdnn_graph_t *g = NULL;
    OK(graph_json_decode(text, n, &g));
    free(text);
    return g;
}

static uint8_t *encode(const cdnn_graph_t *g, size_t *n)
{
    uint8_t *bytes = NULL;
    OK(graph_format_encode(g, &bytes, n));
    return bytes;
}

static void expect_same_bytes(const uint8_t *a, size_t na, const uint8_t *b,
                              size_t nb, const char *what)
{
    if (na != nb || memcmp(a, b, na) != 0)
        fail_msg("%s: bytes differ (%zu vs %zu bytes)", what, na, nb);
}

static void expect_message(const char *word1, const char *word2)
{
    const char *msg = cdnn_last_error();
    if (!strstr(msg, word1) || (word2 && !strstr(msg, word2)))
        fail_msg("message \"%s\" lacks \"%s\" or \"%s\"", msg, word1,
                 word2 ? word2 : "");
}

static void key_of(cdnn_graph_t *g, char key[65])
{
    OK(cdnn_graph_content_key(g, key));
}

/* Decoding failed as it should: a status for bad input and a message. */
static void expect_clean_failure(cdnn_status_t st)
{
    if (st != CDNN_STATUS_CORRUPT_DATA && st != CDNN_STATUS_BAD_PARAM &&
        st != CDNN_STATUS_INVALID_GRAPH && st != CDNN_STATUS_NOT_SUPPORTED)
        fail_msg("unexpected status %s: %s", cdnn_status_string(st),
                 cdnn_last_error());
    assert_true(cdnn_last_error()[0] != '\0');
}

/* ---- the examples ------------------------------------------------------- */

static void test_examples_binary_round_trip(void **state)
{
    (void)state;
    for (size_t e = 0; e < N_EXAMPLES; e++) {
        cdnn_graph_t *g1 = load_example(examples[e]);
        OK(cdnn_graph_validate(g1));
        char k1[65], k2[65];
        key_of(g1, k1);
        size_t n1, n2;
        uint8_t *b1 = encode(g1, &n1);
        cdnn_graph_t *g2 = NULL;
        OK(graph_format_decode(b1, n1, &g2));
        OK(cdnn_graph_validate(g2));
        key_of(g2, k2);
        assert_string_equal(k1, k2);
        uint8_t *b2 = encode(g2, &n2);
        expect_same_bytes(b1, n1, b2, n2, examples[e]);
        free(b1);
        free(b2);
        cdnn_graph_destroy(g1);
        cdnn_graph_destroy(g2);
    }
}

/* The examples are in the canonical text: decoding and encoding one gives
 * its text back, and decoding that gives the same bytes. */
static void test_examples_json_round_trip(void **state)
{
    (void)state;
    for (size_t e = 0; e < N_EXAMPLES; e++) {
        size_t n;
        char *text = read_example(examples[e], &n);
        cdnn_graph_t *g1 = NULL, *g2 = NULL;
        OK(graph_json_decode(text, n, &g1));
        char *json = NULL;
        OK(graph_json_encode(g1, &json));
        if (strcmp(json, text) != 0)
            fail_msg("%s.json is not in canonical form; encoding gives:\n%s",
                     examples[e], json);
        OK(graph_json_decode(json, strlen(json), &g2));
        size_t n1, n2;
        uint8_t *b1 = encode(g1, &n1), *b2 = encode(g2, &n2);
        expect_same_bytes(b1, n1, b2, n2, examples[e]);
        char k1[65], k2[65];
        key_of(g1, k1);
        key_of(g2, k2);
        assert_string_equal(k1, k2);
        free(b1);
        free(b2);
        free(json);
        free(text);
        cdnn_graph_destroy(g1);
        cdnn_graph_destroy(g2);
    }
}

static void fill(void *p, cdnn_data_type_t type, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        double v = 0.1 + (double)((i * 37) % 17) / 17.0;
        switch (type) {
        case CDNN_DATA_TYPE_F32: ((float *)p)[i] = (float)v; break;
        case CDNN_DATA_TYPE_F64: ((double *)p)[i] = v; break;
        case CDNN_DATA_TYPE_F16: ((uint16_t *)p)[i] = 0x3800; break; /* 0.5 */
        case CDNN_DATA_TYPE_BF16: ((uint16_t *)p)[i] = 0x3f00; break;
        default: memset((char *)p + i * cdnn_data_type_size(type), 1,
                        cdnn_data_type_size(type));
        }
    }
}

/* Memory for one tensor (NULL when it needs none), filled. */
static void *tensor_memory(cdnn_graph_t *g, const graph_tensor_t *t)
{
    if (t->is_virtual || t->is_scalar)
        return NULL;
    cdnn_data_type_t type;
    int32_t rank = CDNN_MAX_RANK;
    int64_t dims[CDNN_MAX_RANK], strides[CDNN_MAX_RANK];
    OK(cdnn_graph_tensor_shape(g, t->uid, &type, &rank, dims, strides));
    size_t span = 1;
    for (int32_t d = 0; d < rank; d++)
        span += (size_t)((dims[d] - 1) * strides[d]);
    size_t bytes = (span * cdnn_data_type_size(type) + 255) & ~(size_t)255;
    void *p = aligned_alloc(256, bytes);
    assert_non_null(p);
    memset(p, 0, bytes);
    fill(p, type, span);
    return p;
}

static void execute_on_reference(cdnn_handle_t *h, cdnn_graph_t *g,
                                 const char *name)
{
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_pin_engine(opts,
                                     cdnn_engine_id_from_name("cpu:reference")));
    cdnn_status_t st = cdnn_graph_build(g, h, opts);
    cdnn_build_options_destroy(opts);
    if (st != CDNN_STATUS_SUCCESS)
        fail_msg("%s: build: %s", name, cdnn_last_error());
    size_t ws_size = 0;
    OK(cdnn_graph_workspace_size(g, &ws_size));
    void *ws = ws_size ? malloc(ws_size) : NULL;
    int64_t uids[64];
    void *ptrs[64];
    int32_t n = 0;
    for (int32_t i = 0; i < g->tensor_count && n < 64; i++) {
        void *p = tensor_memory(g, &g->tensors[i]);
        if (p) {
            uids[n] = g->tensors[i].uid;
            ptrs[n++] = p;
        }
    }
    st = cdnn_graph_execute(g, h, n, uids, ptrs, ws);
    if (st != CDNN_STATUS_SUCCESS)
        fail_msg("%s: execute: %s", name, cdnn_last_error());
    for (int32_t i = 0; i < n; i++)
        free(ptrs[i]);
    free(ws);
}

/* Loaded examples build and run: what a saved graph holds is enough. */
static void test_examples_execute(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    OK(cdnn_set_provider_path(CPU_PROVIDER_DIR));
    OK(cdnn_handle_create(&h, "cpu"));
    for (size_t e = 0; e < N_EXAMPLES; e++) {
        cdnn_graph_t *g1 = load_example(examples[e]), *g2 = NULL;
        size_t n;
        uint8_t *bytes = encode(g1, &n);
        OK(graph_format_decode(bytes, n, &g2));
        execute_on_reference(h, g2, examples[e]);
        free(bytes);
        cdnn_graph_destroy(g1);
        cdnn_graph_destroy(g2);
    }
    cdnn_handle_destroy(h);
    OK(cdnn_set_provider_path(NULL));
}

/* ---- identifiers and versions ------------------------------------------- */

static uint8_t *example_bytes(const char *name, size_t *n)
{
    cdnn_graph_t *g = load_example(name);
    uint8_t *bytes = encode(g, n);
    cdnn_graph_destroy(g);
    return bytes;
}

static cdnn_status_t decode_status(const uint8_t *bytes, size_t n)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = graph_format_decode(bytes, n, &g);
    assert_true((st == CDNN_STATUS_SUCCESS) == (g != NULL));
    cdnn_graph_destroy(g);
    return st;
}

static void test_identifier_mixups(void **state)
{
    (void)state;
    size_t n;
    uint8_t *bytes = example_bytes("conv_fwd", &n);
    assert_memory_equal(bytes + 4, "CDGR", 4);

    memcpy(bytes + 4, "CDPL", 4);
    assert_int_equal(decode_status(bytes, n), CDNN_STATUS_BAD_PARAM);
    expect_message("a cdnn plan", "a cdnn graph");

    memcpy(bytes + 4, "CDGP", 4);
    assert_int_equal(decode_status(bytes, n), CDNN_STATUS_BAD_PARAM);
    expect_message("container", "a cdnn graph");

    memcpy(bytes + 4, "PK\x03\x04", 4);
    assert_int_equal(decode_status(bytes, n), CDNN_STATUS_CORRUPT_DATA);
    expect_message("not a cdnn artifact", "PK??");

    for (size_t short_n = 0; short_n < 8; short_n++) {
        assert_int_equal(decode_status(bytes, short_n), CDNN_STATUS_CORRUPT_DATA);
        expect_message("too few", NULL);
    }
    cdnn_graph_t *g = NULL;
    assert_int_not_equal(graph_format_decode(NULL, 0, &g), CDNN_STATUS_SUCCESS);
    assert_null(g);
    free(bytes);
}

static const uint8_t zero32[32];

/* Finish a handmade graph and fill in its digest (a malloc'd copy). */
static uint8_t *finish_sealed(fb_builder_t *b, fb_ref_t root, size_t *n)
{
    const uint8_t *data;
    assert_int_equal(fb_finish(b, root, "CDGR", &data, n), 0);
    uint8_t *copy = malloc(*n);
    assert_non_null(copy);
    memcpy(copy, data, *n);
    fb_builder_free(b);
    OK(graph_format_seal(copy, *n));
    return copy;
}

/* A graph table by hand, sealed: version, one tensor of the given data
 * type, and (for "newer minor" buffers) a field this build does not know. */
static uint8_t *handmade(uint16_t major, uint16_t minor, int8_t data_type,
                         int extra_field, size_t *n)
{
    fb_builder_t b;
    fb_builder_init(&b);
    const int64_t dims[2] = {2, 3};
    fb_ref_t name = fb_string(&b, "x");
    fb_ref_t dv = fb_vector_i64(&b, dims, 2);
    fb_table_start(&b, GF_TENSOR_FIELDS + 1);
    fb_add_i64(&b, GF_TENSOR_UID, 5, 0);
    fb_add_ref(&b, GF_TENSOR_NAME, name);
    fb_add_i8(&b, GF_TENSOR_DATA_TYPE, data_type, 0);
    fb_add_ref(&b, GF_TENSOR_DIMS, dv);
    if (extra_field)
        fb_add_i32(&b, GF_TENSOR_FIELDS, 12345, 0);
    fb_ref_t t = fb_table_end(&b);
    fb_ref_t tensors = fb_vector_refs(&b, &t, 1);
    fb_ref_t digest = fb_bytes(&b, zero32, sizeof zero32);
    fb_table_start(&b, GF_GRAPH_SHA256 + 2);
    fb_add_u16(&b, GF_GRAPH_MAJOR, major, 0);
    fb_add_u16(&b, GF_GRAPH_MINOR, minor, 0);
    fb_add_ref(&b, GF_GRAPH_TENSORS, tensors);
    fb_add_ref(&b, GF_GRAPH_SHA256, digest);
    if (extra_field)
        fb_add_i64(&b, GF_GRAPH_SHA256 + 1, 777, 0);
    fb_ref_t root = fb_table_end(&b);
    return finish_sealed(&b, root, n);
}

static void test_versions(void **state)
{
    (void)state;
    size_t n;
    uint8_t *bytes = handmade(2, 0, CDNN_DATA_TYPE_F32, 0, &n);
    assert_int_equal(decode_status(bytes, n), CDNN_STATUS_NOT_SUPPORTED);
    expect_message("graph format 2.0", "(1.x)");
    free(bytes);

    bytes = handmade(0, 0, CDNN_DATA_TYPE_F32, 0, &n);
    assert_int_equal(decode_status(bytes, n), CDNN_STATUS_NOT_SUPPORTED);
    expect_message("graph format 0.0", "(1.x)");
    free(bytes);

    /* A newer minor adds fields: they are ignored. */
    bytes = handmade(1, 7, CDNN_DATA_TYPE_F16, 1, &n);
    cdnn_graph_t *g = NULL;
    OK(graph_format_decode(bytes, n, &g));
    assert_int_equal(g->tensor_count, 1);
    assert_int_equal(g->tensors[0].type, CDNN_DATA_TYPE_F16);
    assert_int_equal(g->tensors[0].rank, 2);
    cdnn_graph_destroy(g);
    free(bytes);

    /* An unknown enum value: a newer minor may have added it ... */
    bytes = handmade(1, 4, 42, 0, &n);
    assert_int_equal(decode_status(bytes, n), CDNN_STATUS_NOT_SUPPORTED);
    expect_message("data_type 42", "1.4");
    free(bytes);
    /* ... in bytes of our own minor it is damage. */
    bytes = handmade(1, 0, 42, 0, &n);
    assert_int_equal(decode_status(bytes, n), CDNN_STATUS_CORRUPT_DATA);
    expect_message("tensors[0] (uid 5, 'x')", "data_type 42 is out of range");
    free(bytes);
}

/* A newer major may lay fields out differently: the version is read, and
 * refused, before anything else is verified. */
static void test_newer_major_with_other_layout(void **state)
{
    (void)state;
    fb_builder_t b;
    fb_builder_init(&b);
    fb_ref_t s = fb_string(&b, "tensors are a string in 9.x");
    fb_ref_t digest = fb_bytes(&b, zero32, sizeof zero32);
    fb_table_start(&b, GF_GRAPH_SHA256 + 1);
    fb_add_u16(&b, GF_GRAPH_MAJOR, 9, 0);
    fb_add_u16(&b, GF_GRAPH_MINOR, 2, 0);
    fb_add_ref(&b, GF_GRAPH_TENSORS, s);
    fb_add_ref(&b, GF_GRAPH_SHA256, digest);
    size_t n;
    uint8_t *bytes = finish_sealed(&b, fb_table_end(&b), &n);
    assert_int_equal(decode_status(bytes, n), CDNN_STATUS_NOT_SUPPORTED);
    expect_message("graph format 9.2 is newer", "(1.x)");
    free(bytes);
}

/* Digest first: no field of a sealed graph, the version included, is read
 * before its SHA-256 has proven the bytes intact. */
static void test_digest_before_version(void **state)
{
    (void)state;
    size_t n;
    uint8_t *bytes = handmade(1, 1, CDNN_DATA_TYPE_F32, 0, &n);
    cdnn_graph_t *g = NULL;
    OK(graph_format_decode(bytes, n, &g));
    cdnn_graph_destroy(g);
    /* the major's low byte: a flip reads as damage, never as "too new" */
    fb_table_t root = fb_root(bytes, n);
    size_t major_at = root.pos + fb_read_u16(bytes + root.vtable + 4);
    bytes[major_at] ^= 0x02;
    assert_int_equal(decode_status(bytes, n), CDNN_STATUS_CORRUPT_DATA);
    expect_message("the graph is damaged", "SHA-256 does not match");
    free(bytes);
}

/* cdnn_blob_inspect reaches its verdict through the loaders' own code: it
 * refused nothing that every loader refuses (graph format 2.0 and 0.0, a
 * container holding a 2.0 graph) before it did. */
static void expect_inspect_as_load(const uint8_t *bytes, size_t n, int container)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t load = cdnn_graph_load(&g, NULL, bytes, n);
    cdnn_graph_destroy(g);
    char load_message[512];
    snprintf(load_message, sizeof load_message, "%s", cdnn_last_error());
    cdnn_blob_info_t *info = NULL;
    cdnn_status_t inspect = cdnn_blob_inspect(bytes, n, &info);
    cdnn_blob_info_destroy(info);
    assert_int_not_equal(load, CDNN_STATUS_SUCCESS);
    assert_int_equal(inspect, load);
    if (!container)
        assert_string_equal(cdnn_last_error(), load_message);
}

static void test_inspect_agrees_with_loaders(void **state)
{
    (void)state;
    static const uint16_t versions[][2] = {{2, 0}, {0, 0}, {1, 0}};
    for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
        size_t n, cn;
        /* 1.0 with an out-of-range type: damage the loader finds only by
         * decoding every tensor, which the old inspect never did */
        int8_t type = versions[v][0] == 1 ? 42 : CDNN_DATA_TYPE_F32;
        uint8_t *graph = handmade(versions[v][0], versions[v][1], type, 0, &n), *c = NULL;
        expect_inspect_as_load(graph, n, 0);
        OK(container_encode(graph, n, NULL, 0, &c, &cn));
        expect_inspect_as_load(c, cn, 1);
        free(c);
        free(graph);
    }
}

/* A 1.1 graph stripped of its digest (the field dropped from the vtable)
 * is damage; a 1.0 graph, saved before graphs had digests, still loads. */
static void test_digest_required_from_1_1(void **state)
{
    (void)state;
    size_t n;
    uint8_t *bytes = handmade(1, 1, CDNN_DATA_TYPE_F32, 0, &n);
    fb_table_t root = fb_root(bytes, n);
    uint16_t vt_size = fb_read_u16(bytes + root.vtable);
    assert_true(vt_size >= 4 + 2 * (GF_GRAPH_SHA256 + 1));
    memset(bytes + root.vtable + 4 + 2 * GF_GRAPH_SHA256, 0, 2);
    assert_int_equal(decode_status(bytes, n), CDNN_STATUS_CORRUPT_DATA);
    expect_message("graph format 1.1", "always carries a SHA-256");
    free(bytes);

    fb_builder_t b;
    fb_builder_init(&b);
    fb_table_start(&b, GF_GRAPH_FIELDS);
    fb_add_u16(&b, GF_GRAPH_MAJOR, 1, 0);
    fb_ref_t root_ref = fb_table_end(&b);
    const uint8_t *data;
    assert_int_equal(fb_finish(&b, root_ref, "CDGR", &data, &n), 0);
    cdnn_graph_t *g = NULL;
    OK(graph_format_decode(data, n, &g));
    cdnn_graph_destroy(g);
    fb_builder_free(&b);
}

/* ---- damaged bytes ------------------------------------------------------ */

/* A decoded graph, however odd, saves and loads again to the same bytes. */
static void expect_stable(cdnn_graph_t *g)
{
    (void)cdnn_graph_validate(g); /* either way, cleanly */
    size_t n1, n2;
    uint8_t *b1 = encode(g, &n1);
    cdnn_graph_t *g2 = NULL;
    OK(graph_format_decode(b1, n1, &g2));
    uint8_t *b2 = encode(g2, &n2);
    expect_same_bytes(b1, n1, b2, n2, "re-saved damaged graph");
    free(b1);
    free(b2);
    cdnn_graph_destroy(g2);
}

static void try_damaged(const uint8_t *bytes, size_t n)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = graph_format_decode(bytes, n, &g);
    if (st != CDNN_STATUS_SUCCESS) {
        assert_null(g);
        expect_clean_failure(st);
        return;
    }
    expect_stable(g);
    cdnn_graph_destroy(g);
}

static void test_truncations(void **state)
{
    (void)state;
    for (size_t e = 0; e < N_EXAMPLES; e++) {
        size_t n;
        uint8_t *bytes = example_bytes(examples[e], &n);
        for (size_t len = 0; len < n; len++) {
            /* A copy of exactly len bytes, so ASan sees any read past it. */
            uint8_t *cut = malloc(len ? len : 1);
            assert_non_null(cut);
            memcpy(cut, bytes, len);
            try_damaged(cut, len);
            free(cut);
        }
        free(bytes);
    }
}

static void test_byte_flips(void **state)
{
    (void)state;
    static const uint8_t masks[] = {0x01, 0x02, 0x04, 0x08, 0x10,
                                    0x20, 0x40, 0x80, 0xff};
    size_t decoded = 0, refused = 0;
    for (size_t e = 0; e < N_EXAMPLES; e++) {
        size_t n;
        uint8_t *bytes = example_bytes(examples[e], &n);
        for (size_t i = 0; i < n; i++) {
            for (size_t m = 0; m < sizeof masks; m++) {
                bytes[i] ^= masks[m];
                cdnn_graph_t *g = NULL;
                cdnn_status_t st = graph_format_decode(bytes, n, &g);
                if (st == CDNN_STATUS_SUCCESS) {
                    /* The digest covers every byte, so a flip that loads
                     * is one that made the digest unreachable (a shrunken
                     * vtable): bytes that now read as a graph saved before
                     * graphs had digests (1.0). */
                    fb_table_t root = fb_root(bytes, n);
                    assert_false(fb_has(&root, GF_GRAPH_SHA256));
                    assert_int_equal(fb_get_u16(&root, GF_GRAPH_MINOR, 0), 0);
                    decoded++;
                    expect_stable(g);
                    cdnn_graph_destroy(g);
                } else {
                    refused++;
                    expect_clean_failure(st);
                }
                bytes[i] ^= masks[m];
            }
        }
        free(bytes);
    }
    print_message("byte flips: %zu decoded, %zu refused\n", decoded, refused);
    assert_true(refused > 0);
}

/* ---- hostile and unusual JSON ------------------------------------------- */

typedef struct json_case {
    const char *text;
    cdnn_status_t status;
    const char *word1, *word2;
} json_case_t;

#define GRAPH_HEAD "{\"format_major\": 1, "
#define ONE_TENSOR "\"tensors\": [{\"uid\": 1, \"dims\": [2, 2]}]"

static const json_case_t json_cases[] = {
    {"{\"format_major\": 1,\n  \"tensors\": [}", CDNN_STATUS_CORRUPT_DATA,
     "line 2", "column"},
    {"", CDNN_STATUS_CORRUPT_DATA, "line 1", NULL},
    {"[]", CDNN_STATUS_CORRUPT_DATA, "top level", NULL},
    {"{\"format_major\": 1, \"format_major\": 1}", CDNN_STATUS_CORRUPT_DATA,
     "duplicate", NULL},
    {"{\"tensors\": []}", CDNN_STATUS_NOT_SUPPORTED, "graph format 0.0", NULL},
    {"{\"format_major\": 2, \"format_minor\": 1}", CDNN_STATUS_NOT_SUPPORTED,
     "graph format 2.1 is newer", "(1.x)"},
    {"{\"format_major\": 70000}", CDNN_STATUS_CORRUPT_DATA, "format_major",
     "out of range"},
    {"{\"format_major\": \"one\"}", CDNN_STATUS_CORRUPT_DATA, "format_major",
     "not an integer"},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"dims\": [2, \"x\"]}]}",
     CDNN_STATUS_CORRUPT_DATA, "tensors[0].dims[1]", "not an integer"},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1.5}]}", CDNN_STATUS_CORRUPT_DATA,
     "tensors[0].uid", "got a real number"},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"dim\": [2]}]}",
     CDNN_STATUS_CORRUPT_DATA, "tensors[0]", "unknown field \"dim\""},
    {GRAPH_HEAD "\"tensors\": {}}", CDNN_STATUS_CORRUPT_DATA, "tensors",
     "expected an array"},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"data_type\": \"F31\"}]}",
     CDNN_STATUS_CORRUPT_DATA, "tensors[0].data_type", "F32, F16"},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"data_type\": 12}]}",
     CDNN_STATUS_CORRUPT_DATA, "data_type 12 is out of range", NULL},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"dims\": [1,1,1,1,1,1,1,1,1]}]}",
     CDNN_STATUS_CORRUPT_DATA, "dims has 9 entries", "at most 8"},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"dims\": [2, 2], \"strides\": [1]}]}",
     CDNN_STATUS_CORRUPT_DATA, "1 strides for 2 dims", NULL},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"dims\": [2199023255553]}]}",
     CDNN_STATUS_CORRUPT_DATA, "dim 0 is 2199023255553", "up to 2^40"},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"dims\": [1048576, 1048576, "
     "1048576]}]}",
     CDNN_STATUS_CORRUPT_DATA, "element count or span exceeds 2^52", NULL},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"dims\": [3, 3], \"strides\": "
     "[1, 4611686018427387904]}]}",
     CDNN_STATUS_CORRUPT_DATA, "element count or span exceeds 2^52", NULL},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"ConvFwd\", \"attr_type\": "
     "\"ConvAttr\", \"attr\": {\"spatial_dims\": 1, \"dilation\": "
     "[9000000000]}}]}",
     CDNN_STATUS_CORRUPT_DATA, "dilation 9000000000 is beyond", NULL},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"ConvFwd\", \"attr_type\": "
     "\"ConvAttr\", \"attr\": {\"spatial_dims\": 1, \"groups\": "
     "-9000000000}}]}",
     CDNN_STATUS_CORRUPT_DATA, "groups -9000000000 is beyond", NULL},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"dims\": []}]}",
     CDNN_STATUS_CORRUPT_DATA, "dims is empty", NULL},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"dims\": [0]}]}",
     CDNN_STATUS_CORRUPT_DATA, "tensors[0] (uid 1)", "dims must be in [1, 2^40]"},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1}, {\"uid\": 1}]}",
     CDNN_STATUS_INVALID_GRAPH, "tensors[1] (uid 1)", "already used"},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"alignment\": 3}]}",
     CDNN_STATUS_CORRUPT_DATA, "tensors[0] (uid 1)", "power of 2"},
    {GRAPH_HEAD "\"io_type\": \"Unset\"}", CDNN_STATUS_CORRUPT_DATA,
     "graph data types", NULL},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"Conv\"}]}",
     CDNN_STATUS_CORRUPT_DATA, "nodes[0].op", "value of enum Op"},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"name\": 7}]}",
     CDNN_STATUS_CORRUPT_DATA, "nodes[0].name", "expected a string"},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"Matmul\", \"attr\": {}}]}",
     CDNN_STATUS_CORRUPT_DATA, "nodes[0].attr", "attr_type is missing"},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"Matmul\", \"attr_type\": "
     "\"PointwiseAttr\", \"attr\": {}}]}",
     CDNN_STATUS_CORRUPT_DATA, "nodes[0] (matmul)",
     "are PointwiseAttr, but matmul takes NONE"},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"ConvFwd\"}]}",
     CDNN_STATUS_CORRUPT_DATA, "are NONE, but conv_fwd takes ConvAttr", NULL},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"name\": \"mm\", \"op\": \"Matmul\", "
     "\"inputs\": [{\"slot\": 0, \"uid\": 1}, {\"slot\": 0, \"uid\": 1}]}]}",
     CDNN_STATUS_CORRUPT_DATA, "nodes[0] 'mm' (matmul)",
     "input slot 0 is listed twice"},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"Matmul\", "
     "\"outputs\": [{\"slot\": 1, \"uid\": 1}]}]}",
     CDNN_STATUS_CORRUPT_DATA, "output slot 1 is out of range", NULL},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"Matmul\", "
     "\"outputs\": [{\"slot\": 300, \"uid\": 1}]}]}",
     CDNN_STATUS_CORRUPT_DATA, "nodes[0].outputs[0].slot", "out of range"},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"Matmul\", "
     "\"outputs\": [{\"uid\": 1}]}]}",
     CDNN_STATUS_CORRUPT_DATA, "nodes[0].outputs[0]", "both slot and uid"},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"ConvFwd\", \"attr_type\": "
     "\"ConvAttr\", \"attr\": {\"spatial_dims\": 4}}]}",
     CDNN_STATUS_CORRUPT_DATA, "spatial_dims is 4", NULL},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"ConvFwd\", \"attr_type\": "
     "\"ConvAttr\", \"attr\": {\"spatial_dims\": 2, \"stride\": [2]}}]}",
     CDNN_STATUS_CORRUPT_DATA, "stride has 1 entries but spatial_dims is 2",
     NULL},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"Pointwise\", \"attr_type\": "
     "\"PointwiseAttr\", \"attr\": {\"mode\": \"Add\", \"elu_alpha\": \"lots\"}}]}",
     CDNN_STATUS_CORRUPT_DATA, "nodes[0].attr.elu_alpha", "not a number"},
    {GRAPH_HEAD ONE_TENSOR ", \"nodes\": [{\"op\": \"Reduction\", \"attr_type\": "
     "\"ReductionAttr\", \"attr\": {\"mode\": 99}}]}",
     CDNN_STATUS_CORRUPT_DATA, "reduction mode 99 is out of range", NULL},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 1, \"is_virtual\": \"yes\"}]}",
     CDNN_STATUS_CORRUPT_DATA, "tensors[0].is_virtual", "not an integer"},
    {GRAPH_HEAD "\"tensors\": [{\"uid\": 99999999999999999999}]}",
     CDNN_STATUS_CORRUPT_DATA, "line 1", NULL},
    {GRAPH_HEAD "\"name\": \"a\\u0000b\"}", CDNN_STATUS_CORRUPT_DATA,
     "line 1", NULL},
};

static void test_json_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof json_cases / sizeof *json_cases; i++) {
        const json_case_t *c = &json_cases[i];
        cdnn_graph_t *g = NULL;
        cdnn_status_t st = graph_json_decode(c->text, strlen(c->text), &g);
        if (st != c->status)
            fail_msg("case %zu (%s): status %s, expected %s: %s", i, c->text,
                     cdnn_status_string(st), cdnn_status_string(c->status),
                     cdnn_last_error());
        assert_null(g);
        expect_message(c->word1, c->word2);
    }
}

/* Deep nesting, huge arrays and long texts end in a message, not a crash. */
static void test_json_hostile_sizes(void **state)
{
    (void)state;
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 1);
    assert_non_null(deep);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    cdnn_graph_t *g = NULL;
    assert_int_equal(graph_json_decode(deep, 2 * depth, &g),
                     CDNN_STATUS_CORRUPT_DATA);
    expect_message("graph JSON, line 1", NULL);
    /* Deep where a string is expected. */
    const char *head = GRAPH_HEAD "\"name\": ";
    memcpy(deep, head, strlen(head));
    assert_int_equal(graph_json_decode(deep, 2 * depth, &g),
                     CDNN_STATUS_CORRUPT_DATA);
    free(deep);

    size_t count = 100000;
    size_t cap = count * 3 + 100, n = 0;
    char *wide = malloc(cap);
    assert_non_null(wide);
    n += (size_t)snprintf(wide, cap, GRAPH_HEAD "\"tensors\": [{\"dims\": [1");
    for (size_t i = 1; i < count; i++) {
        memcpy(wide + n, ",1", 2);
        n += 2;
    }
    n += (size_t)snprintf(wide + n, cap - n, "]}]}");
    assert_int_equal(graph_json_decode(wide, n, &g), CDNN_STATUS_CORRUPT_DATA);
    expect_message("tensors[0].dims", "100000 entries");
    free(wide);

    assert_int_equal(graph_json_decode("{}", GRAPH_JSON_MAX_BYTES + 1, &g),
                     CDNN_STATUS_NOT_SUPPORTED);
    assert_null(g);
}

/* What flatc writes, and what it accepts, beyond strict JSON. */
static void test_json_flatc_forms(void **state)
{
    (void)state;
    const char *text =
        "{\"format_major\": 1, \"tensors\": [\n"
        "  {\"uid\": 1, \"data_type\": 4, \"dims\": [\"2\", 3],\n"
        "   \"is_scalar\": 0, \"is_virtual\": 1, \"scalar_value\": nan},\n"
        "  {\"uid\": 2, \"dims\": [1], \"is_scalar\": true, \"scalar_value\": -inf}],\n"
        " \"nodes\": [{\"attr\": {\"relu_lower_clip\": -inf, \"relu_upper_clip\": "
        "\"6\", \"mode\": 31, \"swish_beta\": \"inf\"}, \"attr_type\": 2,\n"
        "   \"op\": \"Pointwise\", \"name\": \"nan inf \\\"inf\\\"\"}]}";
    cdnn_graph_t *g = NULL;
    OK(graph_json_decode(text, strlen(text), &g));
    assert_int_equal(g->tensors[0].type, CDNN_DATA_TYPE_F64);
    assert_int_equal(g->tensors[0].dims[0], 2);
    assert_true(g->tensors[0].is_virtual);
    assert_true(isinf(g->tensors[1].scalar_value) && g->tensors[1].scalar_value < 0);
    const cdnn_pointwise_attr_t *a = &g->nodes[0].attr.pointwise;
    assert_int_equal(a->mode, CDNN_PW_RELU_FWD);
    assert_true(isinf(a->relu_lower_clip) && a->relu_lower_clip < 0);
    assert_true(a->relu_upper_clip == 6);
    assert_true(isinf(a->swish_beta));
    assert_string_equal(g->nodes[0].name, "nan inf \"inf\"");

    /* Written back, non-finite values are strings, which read back. */
    char *json = NULL;
    OK(graph_json_encode(g, &json));
    assert_non_null(strstr(json, "\"relu_lower_clip\": \"-inf\""));
    cdnn_graph_t *g2 = NULL;
    OK(graph_json_decode(json, strlen(json), &g2));
    size_t n1, n2;
    uint8_t *b1 = encode(g, &n1), *b2 = encode(g2, &n2);
    expect_same_bytes(b1, n1, b2, n2, "flatc forms");
    free(b1);
    free(b2);
    free(json);
    cdnn_graph_destroy(g);
    cdnn_graph_destroy(g2);
}

/* What Python's json (and JavaScript) write for non-finite numbers:
 * Infinity, -Infinity, NaN, bare or quoted; they read as flatc's forms. */
static void test_json_python_nonfinite(void **state)
{
    (void)state;
    const char *text =
        "{\"format_major\": 1, \"tensors\": [\n"
        "  {\"uid\": 1, \"dims\": [2, 3]},\n"
        "  {\"uid\": 2, \"dims\": [1, 1], \"is_scalar\": true, \"scalar_value\": -Infinity},\n"
        "  {\"uid\": 3, \"dims\": [2, 3]}],\n"
        " \"nodes\": [{\"attr\": {\"relu_lower_clip\": -Infinity, \"relu_upper_clip\": "
        "Infinity, \"mode\": \"ReluFwd\", \"swish_beta\": \"NaN\", \"elu_alpha\": \"-Infinity\", "
        "\"softplus_beta\": NaN},\n"
        "   \"attr_type\": \"PointwiseAttr\", \"op\": \"Pointwise\", \"name\": \"Infinity NaN\",\n"
        "   \"inputs\": [{\"slot\": 0, \"uid\": 1}], \"outputs\": [{\"slot\": 0, \"uid\": 3}]}]}";
    cdnn_graph_t *g = NULL;
    OK(graph_json_decode(text, strlen(text), &g));
    assert_true(isinf(g->tensors[1].scalar_value) && g->tensors[1].scalar_value < 0);
    const cdnn_pointwise_attr_t *a = &g->nodes[0].attr.pointwise;
    assert_true(isinf(a->relu_lower_clip) && a->relu_lower_clip < 0);
    assert_true(isinf(a->relu_upper_clip) && a->relu_upper_clip > 0);
    assert_true(isnan(a->swish_beta));
    assert_true(isnan(a->softplus_beta));
    assert_true(isinf(a->elu_alpha) && a->elu_alpha < 0);
    assert_string_equal(g->nodes[0].name, "Infinity NaN");
    cdnn_graph_destroy(g);

    /* The same words inside a name, or misspelt, are not numbers. */
    static const char *const bad[] = {
        "{\"format_major\": 1, \"name\": Infinityx}",
        "{\"format_major\": 1, \"tensors\": [{\"uid\": 1, \"scalar_value\": \"nAn\"}]}",
        "{\"format_major\": 1, \"tensors\": [{\"uid\": 1, \"scalar_value\": Inf}]}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        g = NULL;
        assert_int_equal(graph_json_decode(bad[i], strlen(bad[i]), &g),
                         CDNN_STATUS_CORRUPT_DATA);
        assert_null(g);
    }
}

/* A graph is saved as the lowest format minor that expresses it: 1.1,
 * or 1.2 for a layer-norm without bias; and either loads back. */
static uint16_t saved_minor(cdnn_graph_t *g, cdnn_graph_t **loaded)
{
    size_t n = 0;
    OK(cdnn_graph_save(g, CDNN_SAVE_GRAPH, NULL, 0, &n));
    uint8_t *bytes = malloc(n);
    assert_non_null(bytes);
    OK(cdnn_graph_save(g, CDNN_SAVE_GRAPH, bytes, n, &n));
    cdnn_blob_info_t *info = NULL;
    OK(cdnn_blob_inspect(bytes, n, &info));
    uint16_t minor = info->graph_minor;
    cdnn_blob_info_destroy(info);
    OK(cdnn_graph_load(loaded, NULL, bytes, n));
    free(bytes);
    return minor;
}

static cdnn_graph_t *layernorm_graph(int with_bias)
{
    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_create(&g));
    int64_t x[2] = {4, 8}, p[2] = {1, 8};
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 2, x, NULL));
    OK(cdnn_graph_tensor(g, 2, "scale", CDNN_DATA_TYPE_F32, 2, p, NULL));
    if (with_bias)
        OK(cdnn_graph_tensor(g, 3, "bias", CDNN_DATA_TYPE_F32, 2, p, NULL));
    OK(cdnn_graph_tensor(g, 4, "y", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    OK(cdnn_graph_layernorm(g, "ln", 1e-5, 1, 2, with_bias ? 3 : CDNN_UID_NONE, 4,
                            CDNN_UID_NONE, CDNN_UID_NONE));
    return g;
}

/* g saved, loaded back, and through JSON: the same content key. */
static void expect_round_trips(cdnn_graph_t *g, uint16_t want_minor)
{
    cdnn_graph_t *loaded = NULL, *from_json = NULL;
    OK(cdnn_graph_validate(g));
    assert_int_equal(saved_minor(g, &loaded), want_minor);
    char k1[65], k2[65], *json = NULL;
    OK(cdnn_graph_content_key(g, k1));
    OK(cdnn_graph_content_key(loaded, k2));
    assert_string_equal(k1, k2);
    OK(cdnn_graph_to_json(g, &json));
    OK(cdnn_graph_from_json(&from_json, json, strlen(json)));
    OK(cdnn_graph_content_key(from_json, k2));
    assert_string_equal(k1, k2);
    free(json);
    cdnn_graph_destroy(from_json);
    cdnn_graph_destroy(loaded);
}

static void test_lowest_minor_layernorm_bias(void **state)
{
    (void)state;
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        cdnn_graph_t *g = layernorm_graph(with_bias);
        expect_round_trips(g, with_bias ? 1 : 2);
        cdnn_graph_destroy(g);
    }
}

/* Softmax and log-softmax save as format 1.2 (the default axis -1 left
 * out, another written), load back, and round-trip through JSON, where
 * the op and its attributes are named "Softmax"/"LogSoftmax",
 * "AxisAttr" and "axis". */
static void test_softmax_round_trips(void **state)
{
    (void)state;
    for (int log_space = 0; log_space < 2; log_space++) {
        for (int32_t axis = -1; axis <= 1; axis++) {
            cdnn_graph_t *g = NULL;
            OK(cdnn_graph_create(&g));
            int64_t x[3] = {2, 3, 4};
            OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 3, x, NULL));
            OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
            if (log_space)
                OK(cdnn_graph_log_softmax(g, "lsm", axis, 1, 2));
            else
                OK(cdnn_graph_softmax(g, "sm", axis, 1, 2));
            expect_round_trips(g, 2);
            /* and an argmax of the same axis after it */
            OK(cdnn_graph_tensor(g, 3, "i", CDNN_DATA_TYPE_I64, 0, NULL, NULL));
            OK(cdnn_graph_argmax(g, "am", axis, 2, 3));
            expect_round_trips(g, 2);
            char *json = NULL;
            OK(cdnn_graph_to_json(g, &json));
            assert_non_null(strstr(json, log_space ? "\"LogSoftmax\"" : "\"Softmax\""));
            assert_non_null(strstr(json, "\"AxisAttr\""));
            assert_true((strstr(json, "\"axis\"") != NULL) == (axis != -1));
            free(json);
            cdnn_graph_destroy(g);
        }
    }
}

/* Reshape then transpose (a virtual tensor between them at another rank):
 * format 1.2, binary and JSON round trips, perm in the JSON. */
static void test_movement_round_trips(void **state)
{
    (void)state;
    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_create(&g));
    int64_t x[3] = {2, 3, 4}, mid[2] = {6, 4};
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_I64, 3, x, NULL));
    OK(cdnn_graph_tensor(g, 2, "mid", CDNN_DATA_TYPE_I64, 2, mid, NULL));
    OK(cdnn_graph_tensor_set_virtual(g, 2));
    OK(cdnn_graph_tensor(g, 3, "y", CDNN_DATA_TYPE_I64, 0, NULL, NULL));
    cdnn_transpose_attr_t t = {2, {1, 0}};
    OK(cdnn_graph_reshape(g, "rs", 1, 2));
    OK(cdnn_graph_transpose(g, "tr", &t, 2, 3));
    expect_round_trips(g, 2);
    char *json = NULL;
    OK(cdnn_graph_to_json(g, &json));
    assert_non_null(strstr(json, "\"Reshape\""));
    assert_non_null(strstr(json, "\"TransposeAttr\""));
    assert_non_null(strstr(json, "\"perm\": [1, 0]"));
    free(json);
    cdnn_graph_destroy(g);
}

/* Slice into a virtual tensor, then concat it with an input: format 1.2,
 * round trips; a slice's step is written only when some step is not 1. */
static void test_concat_slice_round_trips(void **state)
{
    (void)state;
    for (int unit = 0; unit < 2; unit++) {
        cdnn_graph_t *g = NULL;
        OK(cdnn_graph_create(&g));
        int64_t x[2] = {6, 8}, win[2] = {3, 4}, other[2] = {3, 2};
        OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 2, x, NULL));
        OK(cdnn_graph_tensor(g, 2, "win", CDNN_DATA_TYPE_F32, 2, win, NULL));
        OK(cdnn_graph_tensor_set_virtual(g, 2));
        OK(cdnn_graph_tensor(g, 3, "other", CDNN_DATA_TYPE_F32, 2, other, NULL));
        OK(cdnn_graph_tensor(g, 4, "y", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
        cdnn_slice_attr_t s = {2, {unit ? 1 : 2, 1}, {0, 3}};
        OK(cdnn_graph_slice(g, "sl", &s, 1, 2));
        int64_t xs[2] = {2, 3};
        OK(cdnn_graph_concat(g, "cat", -1, 2, xs, 4));
        expect_round_trips(g, 2);
        /* and a pad of the result: -inf survives as a value */
        int64_t padded[2] = {5, 9};
        OK(cdnn_graph_tensor_set_virtual(g, 4));
        OK(cdnn_graph_tensor(g, 5, "padded", CDNN_DATA_TYPE_F32, 2, padded, NULL));
        cdnn_pad_attr_t p = {2, {1, 2}, unit ? 0.0 : -INFINITY};
        OK(cdnn_graph_pad(g, "pad", &p, 4, 5));
        expect_round_trips(g, 2);
        char *json = NULL;
        OK(cdnn_graph_to_json(g, &json));
        assert_non_null(strstr(json, "\"Concat\""));
        assert_non_null(strstr(json, "\"start\": [0, 3]"));
        assert_true((strstr(json, "\"step\"") != NULL) == !unit);
        free(json);
        cdnn_graph_destroy(g);
    }
}

/* The training norms (format 1.3): batch-norm training forward, running
 * statistics (momentum 0.1, the default, left out of the bytes and the JSON;
 * 0.25 kept) and backward, layer-norm and RMS-norm backward, round-trip
 * binary and JSON with the same content key. */
static void test_norm_train_round_trips(void **state)
{
    (void)state;
    for (int defaults = 0; defaults < 2; defaults++) {
        cdnn_graph_t *g = NULL;
        OK(cdnn_graph_create(&g));
        int64_t x[4] = {2, 3, 4, 5}, c[4] = {1, 3, 1, 1}, row[4] = {1, 1, 1, 5},
                st[4] = {2, 3, 4, 1};
        OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 4, x, NULL));
        for (int64_t u = 2; u <= 5; u++) /* scale, bias, running mean, var */
            OK(cdnn_graph_tensor(g, u, NULL, CDNN_DATA_TYPE_F32, 4, c, NULL));
        for (int64_t u = 6; u <= 10; u++) /* y, mean (not with defaults), inv,
                                            * next mean, next var */
            if (u != 7 || !defaults)
                OK(cdnn_graph_tensor(g, u, NULL, CDNN_DATA_TYPE_F32, 0, NULL, NULL));
        OK(cdnn_graph_batchnorm_train(g, "bn", 1e-5, 1, 2, 3, 6,
                                      defaults ? CDNN_UID_NONE : 7, 8));
        OK(cdnn_graph_batchnorm_running_stats(g, "bn_run", defaults ? 0.1 : 0.25, 1,
                                              4, 5, 9, 10));
        for (int64_t u = 11; u <= 13; u++) /* dx, dscale (not with defaults), dbias */
            if (u != 12 || !defaults)
                OK(cdnn_graph_tensor(g, u, NULL, CDNN_DATA_TYPE_F32, 0, NULL, NULL));
        OK(cdnn_graph_batchnorm_bwd(g, "bn_bwd", 6, 1, 2, defaults ? 3 : 7, 8, 11,
                                    defaults ? CDNN_UID_NONE : 12, 13));
        /* layer-norm and RMS-norm backward over the last dim */
        OK(cdnn_graph_tensor(g, 14, "g", CDNN_DATA_TYPE_F32, 4, row, NULL));
        OK(cdnn_graph_tensor(g, 15, "m", CDNN_DATA_TYPE_F32, 4, st, NULL));
        OK(cdnn_graph_tensor(g, 16, "r", CDNN_DATA_TYPE_F32, 4, st, NULL));
        for (int64_t u = 17; u <= 20; u++) /* dx, dscale, dbias (not with
                                             * defaults), rms dx */
            if (u != 19 || !defaults)
                OK(cdnn_graph_tensor(g, u, NULL, CDNN_DATA_TYPE_F32, 0, NULL, NULL));
        OK(cdnn_graph_layernorm_bwd(g, "ln_bwd", 11, 1, 14, 15, 16, 17, 18,
                                    defaults ? CDNN_UID_NONE : 19));
        OK(cdnn_graph_rmsnorm_bwd(g, "rms_bwd", 17, 1, 14, 16, 20, CDNN_UID_NONE,
                                  CDNN_UID_NONE));
        expect_round_trips(g, 3);
        char *json = NULL;
        OK(cdnn_graph_to_json(g, &json));
        assert_non_null(strstr(json, "\"BatchnormRunningStats\""));
        assert_non_null(strstr(json, "\"RmsnormBwd\""));
        assert_non_null(strstr(json, "\"MomentumAttr\""));
        assert_true((strstr(json, "\"momentum\": 0.25") != NULL) == !defaults);
        assert_true(strstr(json, "\"momentum\": 0.1") == NULL);
        free(json);
        cdnn_graph_destroy(g);
    }
}

/* An attention forward and its backward (format 1.3: SdpaBwd) round-trip
 * binary and JSON; the forward alone stays 1.1. */
static void test_sdpa_bwd_round_trips(void **state)
{
    (void)state;
    for (int causal = 0; causal < 2; causal++) {
        cdnn_graph_t *g = NULL;
        OK(cdnn_graph_create(&g));
        int64_t q[4] = {2, 3, 5, 8}, k[4] = {2, 3, 7, 8}, v[4] = {2, 3, 7, 4},
                o[4] = {2, 3, 5, 4};
        OK(cdnn_graph_tensor(g, 1, "q", CDNN_DATA_TYPE_F16, 4, q, NULL));
        OK(cdnn_graph_tensor(g, 2, "k", CDNN_DATA_TYPE_F16, 4, k, NULL));
        OK(cdnn_graph_tensor(g, 3, "v", CDNN_DATA_TYPE_F16, 4, v, NULL));
        OK(cdnn_graph_tensor(g, 4, "o", CDNN_DATA_TYPE_F16, 4, o, NULL));
        cdnn_sdpa_attr_t a = {causal ? 0.25 : 0.0, causal};
        OK(cdnn_graph_sdpa_fwd(g, "fwd", &a, 1, 2, 3, 4));
        expect_round_trips(g, 1);
        OK(cdnn_graph_tensor(g, 5, "do", CDNN_DATA_TYPE_F16, 4, o, NULL));
        OK(cdnn_graph_tensor(g, 6, "dq", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
        OK(cdnn_graph_tensor(g, 7, "dk", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
        OK(cdnn_graph_tensor(g, 8, "dv", CDNN_DATA_TYPE_F16, 0, NULL, NULL));
        OK(cdnn_graph_sdpa_bwd(g, "bwd", &a, 1, 2, 3, 4, 5, 6, 7, 8));
        expect_round_trips(g, 3);
        char *json = NULL;
        OK(cdnn_graph_to_json(g, &json));
        assert_non_null(strstr(json, "\"SdpaBwd\""));
        assert_true((strstr(json, "\"causal\"") != NULL) == causal);
        free(json);
        cdnn_graph_destroy(g);
    }
}

/* Gather, gather-elements and top-k (format 1.3) round-trip binary and
 * JSON; a top-k's defaults (axis -1, k 1, largest) are left out, others
 * written; its indices output is optional. */
static cdnn_graph_t *gather_topk_graph(int defaults)
{
    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_create(&g));
    int64_t x[3] = {4, 5, 6}, idx[2] = {2, 3}, ei[3] = {4, 2, 6};
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 3, x, NULL));
    OK(cdnn_graph_tensor(g, 3, "gathered", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    OK(cdnn_graph_tensor_set_virtual(g, 3));
    if (defaults) {
        OK(cdnn_graph_tensor(g, 2, "idx", CDNN_DATA_TYPE_I64, 3, ei, NULL));
        OK(cdnn_graph_gather_elements(g, "ge", -2, 1, 2, 3));
    } else {
        OK(cdnn_graph_tensor(g, 2, "idx", CDNN_DATA_TYPE_I32, 2, idx, NULL));
        OK(cdnn_graph_gather(g, "gather", 1, 1, 2, 3));
    }
    OK(cdnn_graph_tensor(g, 4, "values", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    cdnn_topk_attr_t t = {defaults ? -1 : 2, defaults ? 1 : 0, defaults ? 1 : 3};
    if (!defaults)
        OK(cdnn_graph_tensor(g, 5, "at", CDNN_DATA_TYPE_I64, 0, NULL, NULL));
    OK(cdnn_graph_topk(g, "topk", &t, 3, 4, defaults ? CDNN_UID_NONE : 5));
    return g;
}

static void test_gather_topk_round_trips(void **state)
{
    (void)state;
    for (int defaults = 0; defaults < 2; defaults++) {
        cdnn_graph_t *g = gather_topk_graph(defaults);
        expect_round_trips(g, 3);
        char *json = NULL;
        OK(cdnn_graph_to_json(g, &json));
        assert_non_null(strstr(json, defaults ? "\"GatherElements\"" : "\"Gather\""));
        assert_non_null(strstr(json, "\"TopkAttr\""));
        assert_true((strstr(json, "\"largest\": false") != NULL) == !defaults);
        assert_true((strstr(json, "\"k\": 3") != NULL) == !defaults);
        free(json);
        cdnn_graph_destroy(g);
    }
}

/* Pooling forward and backward and resize (format 1.3) round-trip binary
 * and JSON; default vectors (window 1, padding 0) are left out. */
static cdnn_graph_t *pool_resize_graph(int avg)
{
    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_create(&g));
    int64_t x[5] = {2, 3, 9, 8, 7}, up[5] = {2, 3, 18, 16, 7};
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 5, x, NULL));
    OK(cdnn_graph_tensor(g, 2, "pooled", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    OK(cdnn_graph_tensor(g, 3, "dx", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    OK(cdnn_graph_tensor(g, 5, "up", CDNN_DATA_TYPE_F32, 5, up, NULL));
    cdnn_pooling_attr_t a;
    cdnn_pooling_attr_init(&a, avg ? CDNN_POOLING_AVG : CDNN_POOLING_MAX, 3);
    a.window[0] = 3;
    a.window[1] = 2;
    a.stride[0] = 2;
    a.pre_padding[0] = 1;
    a.post_padding[2] = 0;
    a.ceil_mode = !avg;
    a.count_include_pad = avg;
    if (!avg)
        a.dilation[1] = 2;
    int64_t idx = avg ? CDNN_UID_NONE : 4;
    if (!avg)
        OK(cdnn_graph_tensor(g, 4, "idx", CDNN_DATA_TYPE_I32, 0, NULL, NULL));
    OK(cdnn_graph_pooling_fwd(g, "pool", &a, 1, 2, idx));
    OK(cdnn_graph_pooling_bwd(g, "pool_bwd", &a, 2, 1, idx, 3));
    cdnn_resize_attr_t r = {avg ? CDNN_RESIZE_LINEAR : CDNN_RESIZE_NEAREST,
                            avg ? CDNN_RESIZE_ALIGN_CORNERS : CDNN_RESIZE_HALF_PIXEL,
                            avg ? 0 : CDNN_RESIZE_CEIL};
    OK(cdnn_graph_resize(g, "resize", &r, 1, 5));
    return g;
}

static void test_pool_resize_round_trips(void **state)
{
    (void)state;
    for (int avg = 0; avg < 2; avg++) {
        cdnn_graph_t *g = pool_resize_graph(avg);
        expect_round_trips(g, 3);
        char *json = NULL;
        OK(cdnn_graph_to_json(g, &json));
        assert_non_null(strstr(json, "\"PoolingFwd\""));
        assert_non_null(strstr(json, "\"PoolingBwd\""));
        assert_non_null(strstr(json, "\"PoolingAttr\""));
        assert_non_null(strstr(json, "\"ResizeAttr\""));
        assert_true((strstr(json, "\"mode\": \"Avg\"") != NULL) == avg);
        assert_true((strstr(json, "\"ceil_mode\": true") != NULL) == !avg);
        assert_true((strstr(json, "\"coordinate\": \"AlignCorners\"") != NULL) == avg);
        assert_true((strstr(json, "\"nearest\": \"Ceil\"") != NULL) == !avg);
        assert_true((strstr(json, "\"dilation\"") != NULL) == !avg);
        assert_null(strstr(json, "\"post_padding\"")); /* all 0: left out */
        free(json);
        cdnn_graph_destroy(g);
    }
}

static void test_json_truncations(void **state)
{
    (void)state;
    for (size_t e = 0; e < N_EXAMPLES; e++) {
        size_t n;
        char *text = read_example(examples[e], &n);
        size_t last = n;
        while (last > 0 && text[last - 1] != '}')
            last--;
        for (size_t len = 0; len < last; len++) {
            char *cut = malloc(len ? len : 1);
            assert_non_null(cut);
            memcpy(cut, text, len);
            cdnn_graph_t *g = NULL;
            cdnn_status_t st = graph_json_decode(cut, len, &g);
            free(cut);
            assert_int_equal(st, CDNN_STATUS_CORRUPT_DATA);
            assert_null(g);
        }
        free(text);
    }
}

/* ---- what the bytes hold ------------------------------------------------ */

static cdnn_graph_t *small_graph(const int64_t *strides, const char *name)
{
    cdnn_graph_t *g = NULL;
    const int64_t dims[2] = {4, 8};
    cdnn_pointwise_attr_t relu;
    cdnn_pointwise_attr_init(&relu, CDNN_PW_RELU_FWD);
    OK(cdnn_graph_create(&g));
    OK(cdnn_graph_tensor(g, 10, name, CDNN_DATA_TYPE_UNSET, 2, dims, strides));
    OK(cdnn_graph_tensor(g, 11, NULL, CDNN_DATA_TYPE_UNSET, 0, NULL, NULL));
    OK(cdnn_graph_pointwise(g, name, &relu, 10, CDNN_UID_NONE, CDNN_UID_NONE, 11));
    return g;
}

/* Same declarations, same bytes; packed strides given or not are one
 * thing; names change bytes but not the content key. */
static void test_deterministic(void **state)
{
    (void)state;
    const int64_t packed[2] = {8, 1};
    cdnn_graph_t *a = small_graph(NULL, "x"), *b = small_graph(packed, "x");
    cdnn_graph_t *c = small_graph(NULL, "other");
    size_t na, nb, nc;
    uint8_t *ba = encode(a, &na), *bb = encode(b, &nb), *bc = encode(c, &nc);
    expect_same_bytes(ba, na, bb, nb, "packed strides");
    uint8_t *ba2 = encode(a, &nb);
    expect_same_bytes(ba, na, ba2, nb, "saving twice");
    assert_true(na != nc || memcmp(ba, bc, na) != 0);
    char ka[65], kc[65];
    key_of(a, ka);
    key_of(c, kc);
    assert_string_equal(ka, kc);
    /* Validation (which infers uid 11's shape) leaves the bytes alone. */
    uint8_t *ba3 = encode(a, &nb);
    expect_same_bytes(ba, na, ba3, nb, "after validation");
    free(ba);
    free(bb);
    free(bc);
    free(ba2);
    free(ba3);
    cdnn_graph_destroy(a);
    cdnn_graph_destroy(b);
    cdnn_graph_destroy(c);
}

/* Doubles keep every bit in both forms: -0, infinities, tiny and huge
 * values.  (A NaN scalar never gets this far: the builder refuses it.) */
static void test_doubles_exact(void **state)
{
    (void)state;
    const double values[] = {-0.0, 0.1, 1e-300, 4.9e-324, 1.7976931348623157e308,
                             -INFINITY, 1.0 / 3.0};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        cdnn_graph_t *g = NULL, *g2 = NULL, *g3 = NULL;
        const int64_t one[1] = {1};
        OK(cdnn_graph_create(&g));
        OK(cdnn_graph_tensor(g, 1, "s", CDNN_DATA_TYPE_F32, 1, one, NULL));
        OK(cdnn_graph_tensor_set_scalar(g, 1, values[i]));
        size_t n;
        uint8_t *bytes = encode(g, &n);
        OK(graph_format_decode(bytes, n, &g2));
        char *json = NULL;
        OK(graph_json_encode(g, &json));
        OK(graph_json_decode(json, strlen(json), &g3));
        assert_memory_equal(&g2->tensors[0].scalar_value, &values[i], sizeof(double));
        assert_memory_equal(&g3->tensors[0].scalar_value, &values[i], sizeof(double));
        free(bytes);
        free(json);
        cdnn_graph_destroy(g);
        cdnn_graph_destroy(g2);
        cdnn_graph_destroy(g3);
    }
}

/* ---- limits ----------------------------------------------------------- */

/* The builder holds at most CDNN_MAX_TENSORS tensors and CDNN_MAX_NODES
 * nodes, and says which limit the next one breaks. */
static void test_limit_counts(void **state)
{
    (void)state;
    cdnn_graph_t *g = NULL;
    const int64_t one[1] = {1};
    cdnn_pointwise_attr_t relu;
    cdnn_pointwise_attr_init(&relu, CDNN_PW_RELU_FWD);
    OK(cdnn_graph_create(&g));
    for (int64_t uid = 0; uid < CDNN_MAX_TENSORS; uid++)
        OK(cdnn_graph_tensor(g, uid, "t", CDNN_DATA_TYPE_F32, 1, one, NULL));
    assert_int_equal(cdnn_graph_tensor(g, CDNN_MAX_TENSORS, "t", CDNN_DATA_TYPE_F32,
                                       1, one, NULL),
                     CDNN_STATUS_BAD_PARAM);
    expect_message("CDNN_MAX_TENSORS", NULL);
    for (int i = 0; i < CDNN_MAX_NODES; i++)
        OK(cdnn_graph_pointwise(g, "n", &relu, 0, CDNN_UID_NONE, CDNN_UID_NONE, 1));
    assert_int_equal(cdnn_graph_pointwise(g, "n", &relu, 0, CDNN_UID_NONE,
                                          CDNN_UID_NONE, 1),
                     CDNN_STATUS_BAD_PARAM);
    expect_message("CDNN_MAX_NODES", NULL);
    cdnn_graph_destroy(g);
}

/* Rank, dims and element counts past their maxima are refused by name. */
static void test_limit_shapes(void **state)
{
    (void)state;
    cdnn_graph_t *g = NULL;
    int64_t dims[CDNN_MAX_RANK + 1];
    for (int i = 0; i <= CDNN_MAX_RANK; i++)
        dims[i] = 1;
    OK(cdnn_graph_create(&g));
    OK(cdnn_graph_tensor(g, 1, "r8", CDNN_DATA_TYPE_F32, CDNN_MAX_RANK, dims, NULL));
    assert_int_equal(cdnn_graph_tensor(g, 2, "r9", CDNN_DATA_TYPE_F32,
                                       CDNN_MAX_RANK + 1, dims, NULL),
                     CDNN_STATUS_BAD_PARAM);
    dims[0] = CDNN_MAX_DIM + 1;
    assert_int_equal(cdnn_graph_tensor(g, 3, "big", CDNN_DATA_TYPE_F32, 1, dims, NULL),
                     CDNN_STATUS_BAD_PARAM);
    dims[0] = CDNN_MAX_DIM;
    dims[1] = CDNN_MAX_DIM;
    assert_int_equal(cdnn_graph_tensor(g, 4, "many", CDNN_DATA_TYPE_F32, 2, dims, NULL),
                     CDNN_STATUS_BAD_PARAM);
    expect_message("2^52", NULL);
    cdnn_graph_destroy(g);
}

/* An inferred output whose element count overflows int64 (2^40 * 2^40)
 * is refused as too large, not wrapped around to a small count (found by
 * fuzz_graph; UBSan flagged the multiplication). */
static void test_limit_inferred_output(void **state)
{
    (void)state;
    cdnn_graph_t *g = NULL;
    const int64_t dy[3] = {CDNN_MAX_DIM, 1, 1}, w[3] = {1, CDNN_MAX_DIM, 1};
    cdnn_conv_attr_t conv;
    cdnn_conv_attr_init(&conv, 1);
    OK(cdnn_graph_create(&g));
    OK(cdnn_graph_tensor(g, 1, "dy", CDNN_DATA_TYPE_F32, 3, dy, NULL));
    OK(cdnn_graph_tensor(g, 2, "w", CDNN_DATA_TYPE_F32, 3, w, NULL));
    OK(cdnn_graph_tensor(g, 3, "dx", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    OK(cdnn_graph_conv_bwd_data(g, "bwd", &conv, 1, 2, 3));
    assert_int_equal(cdnn_graph_validate(g), CDNN_STATUS_INVALID_GRAPH);
    expect_message("2^52", NULL);
    cdnn_graph_destroy(g);
}

/* Bytes claiming more than CDNN_MAX_ARTIFACT_BYTES are refused after their
 * identifier and before anything else is read: the buffer here holds a
 * real artifact's bytes only, and ASan would see a read past them. */
static void test_limit_artifact_size(void **state)
{
    (void)state;
    size_t n;
    uint8_t *graph = example_bytes("matmul", &n);
    cdnn_graph_t *g = NULL;
    cdnn_blob_info_t *info = NULL;
    const size_t huge = CDNN_MAX_ARTIFACT_BYTES + 1;
    assert_int_equal(cdnn_graph_load(&g, NULL, graph, huge), CDNN_STATUS_NOT_SUPPORTED);
    expect_message("CDNN_MAX_ARTIFACT_BYTES", NULL);
    assert_null(g);
    assert_int_equal(cdnn_blob_inspect(graph, huge, &info), CDNN_STATUS_NOT_SUPPORTED);
    assert_null(info);
    /* A plan and a container, made here. */
    const uint8_t key[32] = {0};
    plan_record_t r = {.engine_name = "cpu:reference", .provider_name = "cpu",
                       .provider_version = "0", .payload = key, .payload_size = 1,
                       .content_key = key};
    r.engine_id = cdnn_engine_id_from_name(r.engine_name);
    uint8_t *plan = NULL, *container = NULL;
    size_t plan_size, container_size;
    OK(plan_format_encode(&r, &plan, &plan_size));
    OK(container_encode(graph, n, plan, plan_size, &container, &container_size));
    assert_int_equal(cdnn_blob_inspect(plan, huge, &info), CDNN_STATUS_NOT_SUPPORTED);
    assert_int_equal(cdnn_blob_inspect(container, huge, &info),
                     CDNN_STATUS_NOT_SUPPORTED);
    assert_int_equal(cdnn_graph_load(&g, NULL, container, huge),
                     CDNN_STATUS_NOT_SUPPORTED);
    /* At their true sizes they are fine. */
    OK(cdnn_blob_inspect(container, container_size, &info));
    cdnn_blob_info_destroy(info);
    free(plan);
    free(container);
    free(graph);
}

/* JSON cannot hold a name that is not UTF-8; the binary form can. */
static void test_names_not_utf8(void **state)
{
    (void)state;
    cdnn_graph_t *g = small_graph(NULL, "bad\xff");
    char *json = NULL;
    assert_int_equal(graph_json_encode(g, &json), CDNN_STATUS_BAD_PARAM);
    expect_message("UTF-8", NULL);
    assert_null(json);
    size_t n;
    uint8_t *bytes = encode(g, &n);
    cdnn_graph_t *g2 = NULL;
    OK(graph_format_decode(bytes, n, &g2));
    assert_string_equal(g2->tensors[0].name, "bad\xff");
    free(bytes);
    cdnn_graph_destroy(g);
    cdnn_graph_destroy(g2);
}

/* A graph that fails validation says, when its bytes are of a newer graph
 * format minor than this build reads, that a newer cdnn may accept it (so
 * a reader meeting a form added later -- a layer-norm without bias in 1.2,
 * a rank-broadcast pointwise input in 1.3 -- knows where to look); bytes of
 * this build's minor get no such note. */
static void test_newer_minor_validation_hint(void **state)
{
    (void)state;
    static const char *const forms[] = {
        "{\"format_major\": 1, \"format_minor\": %d, \"tensors\": ["
        "{\"uid\": 1, \"data_type\": \"F32\", \"dims\": [2, 7]},"
        "{\"uid\": 2, \"data_type\": \"F32\", \"dims\": [5]},"
        "{\"uid\": 3, \"data_type\": \"F32\", \"dims\": [2, 7]}],"
        "\"nodes\": [{\"op\": \"Pointwise\", \"name\": \"add\", "
        "\"attr_type\": \"PointwiseAttr\", \"attr\": {\"mode\": \"Add\"},"
        "\"inputs\": [{\"slot\": 0, \"uid\": 1}, {\"slot\": 1, \"uid\": 2}],"
        "\"outputs\": [{\"slot\": 0, \"uid\": 3}]}]}"};
    for (int minor = 3; minor <= 9; minor += 6) {
        char json[1024];
        snprintf(json, sizeof json, forms[0], minor);
        cdnn_graph_t *g = NULL;
        assert_int_equal(cdnn_graph_from_json(&g, json, strlen(json)), CDNN_STATUS_SUCCESS);
        assert_int_equal(cdnn_graph_validate(g), CDNN_STATUS_INVALID_GRAPH);
        const char *msg = cdnn_last_error();
        if (!strstr(msg, "its dim 0 (5) is neither 1 nor y's 7"))
            fail_msg("message \"%s\" lacks the mismatch", msg);
        const char *note = strstr(msg, "saved as graph format 1.9, newer than this cdnn "
                                       "reads (1.3)");
        if (minor == 9 ? !note : strstr(msg, "newer than this cdnn") != NULL)
            fail_msg("minor %d: message \"%s\" %s the newer-format note", minor, msg,
                     minor == 9 ? "lacks" : "has");
        cdnn_graph_destroy(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples_binary_round_trip),
        cmocka_unit_test(test_examples_json_round_trip),
        cmocka_unit_test(test_examples_execute),
        cmocka_unit_test(test_identifier_mixups),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_newer_major_with_other_layout),
        cmocka_unit_test(test_digest_before_version),
        cmocka_unit_test(test_inspect_agrees_with_loaders),
        cmocka_unit_test(test_digest_required_from_1_1),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_byte_flips),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_json_hostile_sizes),
        cmocka_unit_test(test_json_flatc_forms),
        cmocka_unit_test(test_json_python_nonfinite),
        cmocka_unit_test(test_lowest_minor_layernorm_bias),
        cmocka_unit_test(test_sdpa_bwd_round_trips),
        cmocka_unit_test(test_norm_train_round_trips),
        cmocka_unit_test(test_gather_topk_round_trips),
        cmocka_unit_test(test_pool_resize_round_trips),
        cmocka_unit_test(test_softmax_round_trips),
        cmocka_unit_test(test_movement_round_trips),
        cmocka_unit_test(test_concat_slice_round_trips),
        cmocka_unit_test(test_json_truncations),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_doubles_exact),
        cmocka_unit_test(test_names_not_utf8),
        cmocka_unit_test(test_limit_counts),
        cmocka_unit_test(test_limit_shapes),
        cmocka_unit_test(test_limit_artifact_size),
        cmocka_unit_test(test_limit_inferred_output),
        cmocka_unit_test(test_newer_minor_validation_hint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
