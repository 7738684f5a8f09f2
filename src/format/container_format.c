/*
 * container_format.c -- the graph-and-plan container (schema/container.fbs).
 *
 * A container stores its graph's and its plan's bytes whole.  From format
 * 1.1 on it carries a SHA-256 over its version and both parts, checked
 * before any field is interpreted (the version included), so a flipped
 * byte anywhere reads as damage.  Containers of format 1.0 carry only the
 * graph part's digest; they load when they are exactly what cdnn 1.0 wrote
 * (the canonical envelope), which leaves no byte outside the parts free.
 */
#include "format/container_format.h"

#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/flatbuf.h>

#include "core/error.h"
#include "core/sha256.h"
#include "format/blob.h"
#include "format/envelope.h"

/* Field ids, in schema/container.fbs declaration order. */
enum { CONTAINER_MAJOR, CONTAINER_MINOR, CONTAINER_GRAPH, CONTAINER_PLAN,
       CONTAINER_GRAPH_SHA256, CONTAINER_SHA256, CONTAINER_FIELDS };

static const fb_field_desc_t container_fields[CONTAINER_FIELDS] = {
    [CONTAINER_MAJOR] = {FB_SCALAR, 2},
    [CONTAINER_MINOR] = {FB_SCALAR, 2},
    [CONTAINER_GRAPH] = {FB_VECTOR, 1, 1},
    [CONTAINER_PLAN] = {FB_VECTOR, 1, 1},
    [CONTAINER_GRAPH_SHA256] = {FB_VECTOR, 1, 1},
    [CONTAINER_SHA256] = {FB_VECTOR, 1, 1},
};
static const fb_table_desc_t container_desc = {"Container", CONTAINER_FIELDS,
                                               container_fields};

static const artifact_format_t container_format = {
    "container", CONTAINER_FORMAT_MAJOR, CONTAINER_FORMAT_MINOR, 1};

/* The parts of a container, as stored. */
typedef struct parts {
    uint16_t major, minor;
    const uint8_t *graph, *plan; /* plan NULL: a graph alone */
    size_t graph_size, plan_size;
} parts_t;

static cdnn_status_t graph_digest(const uint8_t *graph, size_t size, uint8_t out[32])
{
    sha256_t h;
    sha256_begin(&h);
    sha256_update(&h, graph, size);
    return sha256_end(&h, out);
}

static void update_le(sha256_t *h, uint64_t v, int bytes)
{
    uint8_t b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    sha256_update(h, b, (size_t)bytes);
}

/* SHA-256("CDGP" || major LE16 || minor LE16 || graph length LE64 || graph
 * || plan length LE64 || plan): every byte a reader acts on. */
static cdnn_status_t container_digest(const parts_t *p, uint8_t out[32])
{
    sha256_t h;
    sha256_begin(&h);
    sha256_update(&h, CONTAINER_IDENTIFIER, 4);
    update_le(&h, p->major, 2);
    update_le(&h, p->minor, 2);
    update_le(&h, p->graph_size, 8);
    sha256_update(&h, p->graph, p->graph_size);
    update_le(&h, p->plan ? p->plan_size : 0, 8);
    if (p->plan)
        sha256_update(&h, p->plan, p->plan_size);
    return sha256_end(&h, out);
}

/* The container cdnn writes around the parts in format p->minor: 1 (this
 * build's), or 0 (what cdnn 1.0 wrote, for checking such containers). */
static cdnn_status_t lay_out(envelope_t *e, const parts_t *p)
{
    uint8_t graph_sha[32], sha[32];
    cdnn_status_t st = graph_digest(p->graph, p->graph_size, graph_sha);
    if (st == CDNN_STATUS_SUCCESS && p->minor >= 1)
        st = container_digest(p, sha);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    fb_builder_t *b = &e->b;
    fb_ref_t sha_ref = p->minor >= 1 ? fb_bytes(b, sha, sizeof sha) : 0;
    fb_ref_t graph_sha_ref = fb_bytes(b, graph_sha, sizeof graph_sha);
    fb_ref_t plan_ref = p->plan ? envelope_part(e, p->plan, p->plan_size) : 0;
    fb_ref_t graph_ref = envelope_part(e, p->graph, p->graph_size);
    fb_table_start(b, CONTAINER_FIELDS);
    fb_add_u16(b, CONTAINER_MAJOR, p->major, 0);
    fb_add_u16(b, CONTAINER_MINOR, p->minor, 0);
    fb_add_ref(b, CONTAINER_GRAPH, graph_ref);
    fb_add_ref(b, CONTAINER_PLAN, plan_ref);
    fb_add_ref(b, CONTAINER_GRAPH_SHA256, graph_sha_ref);
    fb_add_ref(b, CONTAINER_SHA256, sha_ref);
    return envelope_finish(e, fb_table_end(b), CONTAINER_IDENTIFIER);
}

cdnn_status_t container_encode(const uint8_t *graph, size_t graph_size,
                               const uint8_t *plan, size_t plan_size,
                               uint8_t **bytes, size_t *size)
{
    parts_t p = {CONTAINER_FORMAT_MAJOR, CONTAINER_FORMAT_MINOR, graph, plan,
                 graph_size, plan_size};
    envelope_t e;
    envelope_init(&e);
    cdnn_status_t st = lay_out(&e, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = envelope_write(&e, bytes, size);
    envelope_free(&e);
    return st;
}

/* The envelope must be exactly what cdnn writes around these parts, so no
 * byte outside them can change unnoticed. */
static cdnn_status_t check_canonical(const uint8_t *bytes, size_t size, const parts_t *p,
                                     const char *what)
{
    envelope_t e;
    envelope_init(&e);
    cdnn_status_t st = lay_out(&e, p);
    if (st == CDNN_STATUS_SUCCESS)
        st = envelope_matches(&e, bytes, size, what);
    envelope_free(&e);
    return st;
}

static cdnn_status_t check_structure(const uint8_t *bytes, size_t size, parts_t *p)
{
    char why[512];
    cdnn_status_t st = blob_expect(bytes, size, BLOB_CONTAINER, "reading a container");
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (fb_verify(bytes, size, CONTAINER_IDENTIFIER, &container_desc, why, sizeof why))
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the container is damaged: %s", why);
    fb_table_t root = fb_root(bytes, size);
    uint32_t g = 0, n = 0;
    p->major = fb_get_u16(&root, CONTAINER_MAJOR, 0);
    p->minor = fb_get_u16(&root, CONTAINER_MINOR, 0);
    p->graph = fb_get_vector(&root, CONTAINER_GRAPH, &g);
    p->plan = fb_get_vector(&root, CONTAINER_PLAN, &n);
    p->graph_size = g;
    p->plan_size = n;
    if (!p->graph)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the container is damaged: it "
                         "holds no graph");
    return CDNN_STATUS_SUCCESS;
}

/* Digest first.  Without a container digest the bytes must be a canonical
 * 1.0 container, the only kind written without one. */
static cdnn_status_t check_digest(const uint8_t *bytes, size_t size, const parts_t *p)
{
    fb_table_t root = fb_root(bytes, size);
    uint32_t n = 0;
    const uint8_t *stored = fb_get_vector(&root, CONTAINER_SHA256, &n);
    if (!stored) {
        parts_t v1_0 = *p;
        v1_0.major = 1;
        v1_0.minor = 0;
        return check_canonical(bytes, size, &v1_0, "the container, which carries no "
                               "SHA-256 and so must be a container format 1.0 exactly "
                               "as cdnn writes it,");
    }
    uint8_t digest[32];
    cdnn_status_t st = container_digest(p, digest);
    return st ? st : envelope_check_digest("the container", stored, n, digest);
}

static cdnn_status_t check_graph_digest(const uint8_t *bytes, size_t size,
                                        const parts_t *p)
{
    fb_table_t root = fb_root(bytes, size);
    uint32_t n = 0;
    const uint8_t *stored = fb_get_vector(&root, CONTAINER_GRAPH_SHA256, &n);
    uint8_t digest[32];
    cdnn_status_t st = graph_digest(p->graph, p->graph_size, digest);
    if (st == CDNN_STATUS_SUCCESS && (!stored || n != 32 || memcmp(stored, digest, 32)))
        st = cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the container is damaged: the "
                       "SHA-256 of its graph part is %s", stored && n == 32
                       ? "not the one recorded" : "missing");
    return st;
}

cdnn_status_t container_decode(const uint8_t *bytes, size_t size,
                               const uint8_t **graph, size_t *graph_size,
                               const uint8_t **plan, size_t *plan_size)
{
    parts_t p = {0};
    cdnn_status_t st = check_structure(bytes, size, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_digest(bytes, size, &p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = envelope_check_version(&container_format, p.major, p.minor);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_graph_digest(bytes, size, &p);
    /* A newer minor may add fields this build does not lay out. */
    if (st == CDNN_STATUS_SUCCESS && p.minor <= CONTAINER_FORMAT_MINOR)
        st = check_canonical(bytes, size, &p, "the container");
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    *graph = p.graph;
    *graph_size = p.graph_size;
    *plan = p.plan;
    *plan_size = p.plan_size;
    return CDNN_STATUS_SUCCESS;
}
