/*
 * kpayload.c -- the kernels provider's plan payload (docs/FORMATS.md
 * section 10, schema/kernel_payload.fbs): encoding it, and the first eight
 * ordered load checks on hostile payload bytes.  In the SDK so that the
 * provider that writes and restores it and `cdnn inspect`, which shows the
 * kernel a plan carries, read it with one decoder.
 *
 * The plan's own digest already covers these bytes, but a plan can be
 * edited and re-sealed, so nothing here trusts them: each check refuses on
 * its own, in order, with a message of its own, and no field is read
 * before the checks that make reading it safe.
 */
#include <cdnn_sdk/kpayload.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>
#include <cdnn_sdk/flatbuf.h>
#include <cdnn_sdk/sha256.h>


#define DAMAGED "the kernel payload is damaged: "
#define INCONSISTENT "the kernel payload is inconsistent: "

/* Header offsets (schema/kernel_payload.fbs). */
enum {
    H_MARKER = 0,
    H_MAJOR = 4,
    H_MINOR = 6,
    H_HEADER_SIZE = 8,
    H_KIND = 12,
    H_RESERVED16 = 14,
    H_BODY_SIZE = 16,
    H_RESERVED64 = 24,
    H_BODY_SHA256 = 32,
};

/* Field ids, in schema/kernel_payload.fbs declaration order. */
enum { KV_KEY, KV_VALUE, KV_FIELDS };
enum {
    F_MAJOR, F_MINOR, F_KIND, F_ENGINE_ID, F_ENGINE, F_KERNEL_ID, F_HANDLER,
    F_HANDLER_VERSION, F_LAUNCH_VALUES, F_TARGET, F_SYMBOL, F_KERNEL_SHA256,
    F_SIGNATURE, F_CODE_OBJECT, F_PROVIDER_VERSION, F_GRAPH, F_METADATA,
    F_PACK_NAME, F_PACK_VERSION, F_FIELDS
};

static const fb_field_desc_t key_value_fields[KV_FIELDS] = {
    [KV_KEY] = {FB_STRING, .name = "key"},
    [KV_VALUE] = {FB_STRING, .name = "value"},
};
static const fb_table_desc_t key_value_desc = {"KernelKeyValue", KV_FIELDS,
                                               key_value_fields};

static const fb_field_desc_t payload_fields[F_FIELDS] = {
    [F_MAJOR] = {FB_SCALAR, 2, .name = "format_major"},
    [F_MINOR] = {FB_SCALAR, 2, .name = "format_minor"},
    [F_KIND] = {FB_STRING, .name = "kind"},
    [F_ENGINE_ID] = {FB_SCALAR, 8, .name = "engine_id"},
    [F_ENGINE] = {FB_STRING, .name = "engine"},
    [F_KERNEL_ID] = {FB_STRING, .name = "kernel_id"},
    [F_HANDLER] = {FB_STRING, .name = "handler"},
    [F_HANDLER_VERSION] = {FB_SCALAR, 4, .name = "handler_version"},
    [F_LAUNCH_VALUES] = {FB_VECTOR, 8, 8, .name = "launch_values"},
    [F_TARGET] = {FB_STRING, .name = "target"},
    [F_SYMBOL] = {FB_STRING, .name = "symbol"},
    [F_KERNEL_SHA256] = {FB_VECTOR, 1, 1, .name = "kernel_sha256"},
    [F_SIGNATURE] = {FB_STRING, .name = "signature"},
    [F_CODE_OBJECT] = {FB_VECTOR, 1, 1, .name = "code_object"},
    [F_PROVIDER_VERSION] = {FB_STRING, .name = "provider_version"},
    /* checked by the host's graph loader, at restore */
    [F_GRAPH] = {FB_VECTOR, 1, 1, .name = "graph"},
    [F_METADATA] = {FB_VECTOR_TABLE, 0, 0, &key_value_desc, .name = "kernel_metadata"},
    [F_PACK_NAME] = {FB_STRING, .name = "pack_name"},
    [F_PACK_VERSION] = {FB_STRING, .name = "pack_version"},
};
static const fb_table_desc_t payload_desc = {"KernelPayload", F_FIELDS, payload_fields};

const char *sdk_kpayload_kind_name(int kind)
{
    return kind == SDK_KPAYLOAD_HOST ? "host" : kind == SDK_KPAYLOAD_CUDA ? "cuda" : NULL;
}

/* ---- little-endian header fields -------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* ---- encoding ---------------------------------------------------------------- */

/* The metadata vector; 0 when out of memory (the caller fails then). */
static fb_ref_t encode_metadata(fb_builder_t *b, const sdk_kpayload_t *p)
{
    fb_ref_t *refs = calloc((size_t)p->metadata_count + 1, sizeof *refs);
    if (!refs)
        return 0;
    for (int32_t i = 0; i < p->metadata_count; i++) {
        fb_ref_t key = fb_string(b, p->metadata[i].key);
        fb_ref_t value = fb_string(b, p->metadata[i].value);
        fb_table_start(b, KV_FIELDS);
        fb_add_ref(b, KV_KEY, key);
        fb_add_ref(b, KV_VALUE, value);
        refs[i] = fb_table_end(b);
    }
    fb_ref_t vector = fb_vector_refs(b, refs, (size_t)p->metadata_count);
    free(refs);
    return vector;
}

/* Every string, vector and sub-table of the root, made before it. */
typedef struct body_refs {
    fb_ref_t metadata, graph, code, sha256, launch, kind, engine, kernel_id, handler,
        target, symbol, signature, provider_version, pack_name, pack_version;
} body_refs_t;

static body_refs_t encode_children(fb_builder_t *b, const sdk_kpayload_t *p)
{
    body_refs_t r;
    r.metadata = encode_metadata(b, p);
    r.graph = fb_bytes(b, p->graph, p->graph_size);
    r.code = fb_bytes(b, p->code, p->code_size);
    r.sha256 = fb_bytes(b, p->kernel_sha256, SDK_SHA256_BYTES);
    r.launch = fb_vector_i64(b, p->launch_values, (size_t)p->launch_count);
    r.kind = fb_string(b, sdk_kpayload_kind_name(p->kind));
    r.engine = fb_string(b, p->engine);
    r.kernel_id = fb_string(b, p->kernel_id);
    r.handler = fb_string(b, p->handler);
    r.target = fb_string(b, p->target);
    r.symbol = fb_string(b, p->symbol);
    r.signature = fb_string(b, p->signature);
    r.provider_version = fb_string(b, p->provider_version);
    r.pack_name = fb_string(b, p->pack_name);
    r.pack_version = fb_string(b, p->pack_version);
    return r;
}

static fb_ref_t encode_root(fb_builder_t *b, const sdk_kpayload_t *p, const body_refs_t *r)
{
    fb_table_start(b, F_FIELDS);
    fb_add_u16(b, F_MAJOR, SDK_KPAYLOAD_MAJOR, 0);
    fb_add_u16(b, F_MINOR, SDK_KPAYLOAD_MINOR, 0);
    fb_add_ref(b, F_KIND, r->kind);
    fb_add_u64(b, F_ENGINE_ID, p->engine_id, 0);
    fb_add_ref(b, F_ENGINE, r->engine);
    fb_add_ref(b, F_KERNEL_ID, r->kernel_id);
    fb_add_ref(b, F_HANDLER, r->handler);
    fb_add_i32(b, F_HANDLER_VERSION, (int32_t)p->handler_version, 0);
    fb_add_ref(b, F_LAUNCH_VALUES, r->launch);
    fb_add_ref(b, F_TARGET, r->target);
    fb_add_ref(b, F_SYMBOL, r->symbol);
    fb_add_ref(b, F_KERNEL_SHA256, r->sha256);
    fb_add_ref(b, F_SIGNATURE, r->signature);
    fb_add_ref(b, F_CODE_OBJECT, r->code);
    fb_add_ref(b, F_PROVIDER_VERSION, r->provider_version);
    fb_add_ref(b, F_GRAPH, r->graph);
    fb_add_ref(b, F_METADATA, r->metadata);
    fb_add_ref(b, F_PACK_NAME, r->pack_name);
    fb_add_ref(b, F_PACK_VERSION, r->pack_version);
    return fb_table_end(b);
}

static void write_header(uint8_t *h, sdk_kpayload_kind_t kind, size_t body_size,
                         const uint8_t digest[SDK_SHA256_BYTES])
{
    memset(h, 0, SDK_KPAYLOAD_HEADER_SIZE);
    memcpy(h + H_MARKER, SDK_KPAYLOAD_MARKER, 4);
    put_le(h + H_MAJOR, SDK_KPAYLOAD_MAJOR, 2);
    put_le(h + H_MINOR, SDK_KPAYLOAD_MINOR, 2);
    put_le(h + H_HEADER_SIZE, SDK_KPAYLOAD_HEADER_SIZE, 4);
    put_le(h + H_KIND, (uint64_t)kind, 2);
    put_le(h + H_BODY_SIZE, body_size, 8);
    memcpy(h + H_BODY_SHA256, digest, SDK_SHA256_BYTES);
}

/* Header and body into one malloc'd buffer. */
static cdnn_status_t seal(sdk_kpayload_kind_t kind, const uint8_t *body, size_t body_size,
                          uint8_t **bytes, size_t *size)
{
    uint8_t digest[SDK_SHA256_BYTES];
    if (sdk_sha256(body, body_size, digest) != 0)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory hashing a plan payload");
    *bytes = malloc(SDK_KPAYLOAD_HEADER_SIZE + body_size);
    if (!*bytes)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory saving a plan");
    write_header(*bytes, kind, body_size, digest);
    memcpy(*bytes + SDK_KPAYLOAD_HEADER_SIZE, body, body_size);
    *size = SDK_KPAYLOAD_HEADER_SIZE + body_size;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t sdk_kpayload_encode(const sdk_kpayload_t *p, uint8_t **bytes,
                                    size_t *size)
{
    fb_builder_t b;
    const uint8_t *body = NULL;
    size_t body_size = 0;
    fb_builder_init(&b);
    body_refs_t refs = encode_children(&b, p);
    fb_ref_t root = encode_root(&b, p, &refs);
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (!refs.metadata || fb_finish(&b, root, SDK_KPAYLOAD_MARKER, &body, &body_size) != 0)
        st = sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory saving a plan payload");
    else
        st = seal(p->kind, body, body_size, bytes, size);
    fb_builder_free(&b);
    return st;
}

/* ---- checks 1-7: the header and the body's bytes ------------------------------- */

static cdnn_status_t check_header_size(size_t size)
{
    if (size < SDK_KPAYLOAD_HEADER_SIZE)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "it is %zu bytes, shorter "
                        "than its %d-byte header", size, SDK_KPAYLOAD_HEADER_SIZE);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_marker(const uint8_t *h)
{
    if (memcmp(h + H_MARKER, SDK_KPAYLOAD_MARKER, 4) != 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "its marker is %02x %02x %02x "
                        "%02x, not \"" SDK_KPAYLOAD_MARKER "\"", h[0], h[1], h[2], h[3]);
    return CDNN_STATUS_SUCCESS;
}

/* A major of 0 was never written: damage.  A newer major or minor is a
 * payload this provider cannot run as saved: not supported here. */
static cdnn_status_t check_version(const uint8_t *h)
{
    unsigned major = (unsigned)get_le(h + H_MAJOR, 2), minor = (unsigned)get_le(h + H_MINOR, 2);
    if (major == 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "it claims format 0.%u, which "
                        "no writer makes", minor);
    if (major != SDK_KPAYLOAD_MAJOR || minor > SDK_KPAYLOAD_MINOR)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the kernel payload is in format "
                        "%u.%u, and this provider reads %d.0 up to %d.%d; install a newer "
                        "kernels provider, or build the plan again from its graph",
                        major, minor, SDK_KPAYLOAD_MAJOR, SDK_KPAYLOAD_MAJOR,
                        SDK_KPAYLOAD_MINOR);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_kind(const uint8_t *h)
{
    unsigned kind = (unsigned)get_le(h + H_KIND, 2);
    if (!sdk_kpayload_kind_name((int)kind))
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "its kind is %u, neither %d "
                        "(host) nor %d (cuda)", kind, SDK_KPAYLOAD_HOST, SDK_KPAYLOAD_CUDA);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_sizes(const uint8_t *h, size_t size)
{
    uint64_t header_size = get_le(h + H_HEADER_SIZE, 4);
    uint64_t body_size = get_le(h + H_BODY_SIZE, 8);
    if (header_size != SDK_KPAYLOAD_HEADER_SIZE ||
        body_size != size - SDK_KPAYLOAD_HEADER_SIZE)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "its header says %" PRIu64
                        " header bytes and %" PRIu64 " body bytes, but the payload's "
                        "%zu bytes are %d and %zu", header_size, body_size, size,
                        SDK_KPAYLOAD_HEADER_SIZE, size - SDK_KPAYLOAD_HEADER_SIZE);
    if (get_le(h + H_RESERVED16, 2) != 0 || get_le(h + H_RESERVED64, 8) != 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "its reserved header bytes "
                        "are not zero");
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_body_digest(const uint8_t *h, const uint8_t *body, size_t n)
{
    uint8_t digest[SDK_SHA256_BYTES];
    if (sdk_sha256(body, n, digest) != 0)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory hashing a plan payload");
    if (memcmp(digest, h + H_BODY_SHA256, SDK_SHA256_BYTES) != 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "the SHA-256 of its body is "
                        "not the one its header records");
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_body_structure(const uint8_t *body, size_t n)
{
    char why[256];
    if (n < 8 || memcmp(body + 4, SDK_KPAYLOAD_MARKER, 4) != 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "its body's identifier is "
                        "not \"" SDK_KPAYLOAD_MARKER "\"");
    if (fb_verify(body, n, SDK_KPAYLOAD_MARKER, &payload_desc, why, sizeof why) != 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "its body does not verify: %s",
                        why);
    return CDNN_STATUS_SUCCESS;
}

/* ---- check 8: field validity ------------------------------------------------------ */

/* A string field of table t: required ones must be present and not
 * empty, and none may hide a NUL byte (a name that prints as another). */
static cdnn_status_t string_field(const fb_table_t *t, const fb_table_desc_t *desc,
                                  int field, int required, const char **out)
{
    uint32_t len = 0;
    *out = fb_get_string(t, field, &len);
    const char *problem = !*out ? (required ? "missing" : NULL)
                          : strlen(*out) != len ? "cut by a NUL byte"
                          : len == 0 && required ? "empty" : NULL;
    if (problem)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "its %s.%s is %s", desc->name,
                        desc->fields[field].name, problem);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t required_string(const fb_table_t *root, int field, const char **out)
{
    return string_field(root, &payload_desc, field, 1, out);
}

static cdnn_status_t decode_strings(const fb_table_t *root, sdk_kpayload_t *p)
{
    const struct {
        int field;
        const char **out;
        int required;
    } strings[] = {
        {F_ENGINE, &p->engine, 1},        {F_KERNEL_ID, &p->kernel_id, 1},
        {F_HANDLER, &p->handler, 1},      {F_TARGET, &p->target, 1},
        {F_SYMBOL, &p->symbol, 1},        {F_SIGNATURE, &p->signature, 1},
        {F_PROVIDER_VERSION, &p->provider_version, 0},
        {F_PACK_NAME, &p->pack_name, 0},  {F_PACK_VERSION, &p->pack_version, 0},
    };
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (size_t i = 0; st == CDNN_STATUS_SUCCESS && i < sizeof strings / sizeof *strings; i++)
        st = string_field(root, &payload_desc, strings[i].field, strings[i].required,
                          strings[i].out);
    return st;
}

/* The body repeats the header's version and kind; both must agree. */
static cdnn_status_t check_body_agrees_with_header(const fb_table_t *root, const uint8_t *h)
{
    const char *kind = NULL;
    cdnn_status_t st = required_string(root, F_KIND, &kind);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const char *header_kind = sdk_kpayload_kind_name((int)get_le(h + H_KIND, 2));
    if (fb_get_u16(root, F_MAJOR, 0) != get_le(h + H_MAJOR, 2) ||
        fb_get_u16(root, F_MINOR, 0) != get_le(h + H_MINOR, 2))
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "its body says format "
                        "%u.%u and its header %u.%u", fb_get_u16(root, F_MAJOR, 0),
                        fb_get_u16(root, F_MINOR, 0), (unsigned)get_le(h + H_MAJOR, 2),
                        (unsigned)get_le(h + H_MINOR, 2));
    if (strcmp(kind, header_kind) != 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "its body says kind "
                        "\"%s\" and its header %s", kind, header_kind);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t decode_launch_values(const fb_table_t *root, sdk_kpayload_t *p)
{
    uint32_t n = 0;
    const uint8_t *v = fb_get_vector(root, F_LAUNCH_VALUES, &n);
    if (!v || n == 0 || n > SDK_KPAYLOAD_MAX_LAUNCH_VALUES)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "it has %u launch values; a "
                        "handler makes 1 to %d", n, SDK_KPAYLOAD_MAX_LAUNCH_VALUES);
    p->decoded_values = malloc(n * sizeof *p->decoded_values);
    if (!p->decoded_values)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory loading a plan");
    for (uint32_t i = 0; i < n; i++)
        p->decoded_values[i] = fb_read_i64(v + 8 * (size_t)i);
    p->launch_values = p->decoded_values;
    p->launch_count = (int32_t)n;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t decode_metadata(const fb_table_t *root, sdk_kpayload_t *p)
{
    uint32_t n = 0;
    fb_get_vector(root, F_METADATA, &n);
    if (n > SDK_KPAYLOAD_MAX_METADATA)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "it has %u kernel metadata "
                        "entries, more than %d", n, SDK_KPAYLOAD_MAX_METADATA);
    sdk_kpack_kv_t *m = p->decoded_metadata = calloc((size_t)n + 1, sizeof *m);
    if (!m)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory loading a plan");
    for (uint32_t i = 0; i < n; i++) {
        fb_table_t kv = fb_vector_table(root, F_METADATA, i);
        cdnn_status_t st = string_field(&kv, &key_value_desc, KV_KEY, 1, &m[i].key);
        if (st == CDNN_STATUS_SUCCESS)
            st = string_field(&kv, &key_value_desc, KV_VALUE, 0, &m[i].value);
        if (st != CDNN_STATUS_SUCCESS)
            return st;
        if (!m[i].value)
            m[i].value = "";
    }
    p->metadata = m;
    p->metadata_count = (int32_t)n;
    return CDNN_STATUS_SUCCESS;
}

/* The code object, its recorded SHA-256 (which must be the code's), and
 * the graph. */
static cdnn_status_t decode_code(const fb_table_t *root, sdk_kpayload_t *p)
{
    uint32_t sha_size = 0, code_size = 0, graph_size = 0;
    uint8_t digest[SDK_SHA256_BYTES];
    p->kernel_sha256 = fb_get_vector(root, F_KERNEL_SHA256, &sha_size);
    p->code = fb_get_vector(root, F_CODE_OBJECT, &code_size);
    p->graph = fb_get_vector(root, F_GRAPH, &graph_size);
    p->code_size = code_size;
    p->graph_size = graph_size;
    if (!p->kernel_sha256 || sha_size != SDK_SHA256_BYTES)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "its kernel_sha256 is %u "
                        "bytes, not %d", sha_size, SDK_SHA256_BYTES);
    if (!p->code || code_size == 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "it has no code object");
    if (!p->graph || graph_size == 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "it has no graph");
    if (sdk_sha256(p->code, p->code_size, digest) != 0)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory hashing a code object");
    if (memcmp(digest, p->kernel_sha256, SDK_SHA256_BYTES) != 0)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "the SHA-256 of its code "
                        "object is not its kernel_sha256");
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t decode_identity(const fb_table_t *root, sdk_kpayload_t *p)
{
    int32_t version = fb_get_i32(root, F_HANDLER_VERSION, 0);
    p->engine_id = fb_get_u64(root, F_ENGINE_ID, 0);
    if (p->engine_id != cdnn_engine_id_from_name(p->engine))
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "its engine_id 0x%016"
                        PRIx64 " is not the id of its engine %s", p->engine_id, p->engine);
    if (version < 1)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, DAMAGED "its handler_version is %d; "
                        "versions start at 1", version);
    p->handler_version = (uint32_t)version;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t decode_fields(const fb_table_t *root, const uint8_t *h,
                                   sdk_kpayload_t *p)
{
    p->kind = (sdk_kpayload_kind_t)get_le(h + H_KIND, 2);
    cdnn_status_t st = check_body_agrees_with_header(root, h);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_strings(root, p);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_identity(root, p);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_launch_values(root, p);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_metadata(root, p);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_code(root, p);
    return st;
}

/* Checks 6-8, on a payload whose header passed checks 1-5. */
static cdnn_status_t check_body(const uint8_t *bytes, size_t size, sdk_kpayload_t *p)
{
    const uint8_t *body = bytes + SDK_KPAYLOAD_HEADER_SIZE;
    size_t body_size = size - SDK_KPAYLOAD_HEADER_SIZE;
    cdnn_status_t st = check_body_digest(bytes, body, body_size);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_body_structure(body, body_size);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    fb_table_t root = fb_root(body, body_size);
    return decode_fields(&root, bytes, p);
}

cdnn_status_t sdk_kpayload_decode(const uint8_t *bytes, size_t size, sdk_kpayload_t *p)
{
    memset(p, 0, sizeof *p);
    cdnn_status_t st = check_header_size(size);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_marker(bytes);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_version(bytes);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_kind(bytes);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_sizes(bytes, size);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_body(bytes, size, p);
    if (st != CDNN_STATUS_SUCCESS)
        sdk_kpayload_free(p);
    return st;
}

void sdk_kpayload_free(sdk_kpayload_t *p)
{
    free(p->decoded_values);
    free(p->decoded_metadata);
    p->decoded_values = NULL;
    p->decoded_metadata = NULL;
    p->launch_values = NULL;
    p->metadata = NULL;
    p->launch_count = 0;
    p->metadata_count = 0;
}
