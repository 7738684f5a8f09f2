#include "format/container_format.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/sha256.h"
#include "format/blob.h"
#include "format/flatbuf.h"

/* Field ids, in schema/container.fbs declaration order. */
enum { CONTAINER_MAJOR, CONTAINER_MINOR, CONTAINER_GRAPH, CONTAINER_PLAN,
       CONTAINER_GRAPH_SHA256, CONTAINER_FIELDS };

static const fb_field_desc_t container_fields[CONTAINER_FIELDS] = {
    [CONTAINER_MAJOR] = {FB_SCALAR, 2},
    [CONTAINER_MINOR] = {FB_SCALAR, 2},
    [CONTAINER_GRAPH] = {FB_VECTOR, 1, 1},
    [CONTAINER_PLAN] = {FB_VECTOR, 1, 1},
    [CONTAINER_GRAPH_SHA256] = {FB_VECTOR, 1, 1},
};
static const fb_table_desc_t container_desc = {"Container", CONTAINER_FIELDS,
                                               container_fields};

static cdnn_status_t graph_digest(const uint8_t *graph, size_t size, uint8_t out[32])
{
    sha256_t h;
    sha256_begin(&h);
    sha256_update(&h, graph, size);
    return sha256_end(&h, out);
}

cdnn_status_t container_encode(const uint8_t *graph, size_t graph_size,
                               const uint8_t *plan, size_t plan_size,
                               uint8_t **bytes, size_t *size)
{
    uint8_t digest[32];
    cdnn_status_t st = graph_digest(graph, graph_size, digest);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    fb_builder_t b;
    fb_builder_init(&b);
    fb_ref_t digest_ref = fb_bytes(&b, digest, sizeof digest);
    fb_ref_t plan_ref = plan ? fb_bytes(&b, plan, plan_size) : 0;
    fb_ref_t graph_ref = fb_bytes(&b, graph, graph_size);
    fb_table_start(&b, CONTAINER_FIELDS);
    fb_add_u16(&b, CONTAINER_MAJOR, CONTAINER_FORMAT_MAJOR, 0);
    fb_add_u16(&b, CONTAINER_MINOR, CONTAINER_FORMAT_MINOR, 0);
    fb_add_ref(&b, CONTAINER_GRAPH, graph_ref);
    fb_add_ref(&b, CONTAINER_PLAN, plan_ref);
    fb_add_ref(&b, CONTAINER_GRAPH_SHA256, digest_ref);
    if (fb_finish_copy(&b, fb_table_end(&b), CONTAINER_IDENTIFIER, bytes, size) != 0)
        st = cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory encoding a container");
    fb_builder_free(&b);
    return st;
}

/* As for plans, the envelope is canonical: re-encoding the parts must give
 * the bytes back, so a flipped byte outside the parts cannot pass. */
static cdnn_status_t check_canonical(const uint8_t *bytes, size_t size,
                                     const uint8_t *graph, size_t graph_size,
                                     const uint8_t *plan, size_t plan_size)
{
    uint8_t *expect = NULL;
    size_t expect_size = 0;
    cdnn_status_t st = container_encode(graph, graph_size, plan, plan_size, &expect,
                                        &expect_size);
    if (st == CDNN_STATUS_SUCCESS &&
        (expect_size != size || memcmp(expect, bytes, size) != 0))
        st = cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the container is damaged: its "
                       "envelope bytes differ from what cdnn writes around its parts");
    free(expect);
    return st;
}

cdnn_status_t container_decode(const uint8_t *bytes, size_t size,
                               const uint8_t **graph, size_t *graph_size,
                               const uint8_t **plan, size_t *plan_size)
{
    char why[512];
    cdnn_status_t st = blob_expect(bytes, size, BLOB_CONTAINER, "reading a container");
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (fb_verify(bytes, size, CONTAINER_IDENTIFIER, &container_desc, why, sizeof why))
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the container is damaged: %s", why);
    fb_table_t root = fb_root(bytes, size);
    uint16_t major = fb_get_u16(&root, CONTAINER_MAJOR, 0);
    if (major != CONTAINER_FORMAT_MAJOR)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                         "the container is in container format %u.%u, and this "
                         "cdnn reads container format %d.x (up to %d.%d)",
                         major, fb_get_u16(&root, CONTAINER_MINOR, 0),
                         CONTAINER_FORMAT_MAJOR, CONTAINER_FORMAT_MAJOR,
                         CONTAINER_FORMAT_MINOR);
    uint32_t g = 0, p = 0;
    *graph = fb_get_vector(&root, CONTAINER_GRAPH, &g);
    *plan = fb_get_vector(&root, CONTAINER_PLAN, &p);
    *graph_size = g;
    *plan_size = p;
    if (!*graph)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the container holds no graph");
    uint32_t digest_size = 0;
    const uint8_t *stored = fb_get_vector(&root, CONTAINER_GRAPH_SHA256, &digest_size);
    uint8_t digest[32];
    st = graph_digest(*graph, *graph_size, digest);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (!stored || digest_size != 32 || memcmp(stored, digest, 32) != 0)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the container is damaged: the "
                         "SHA-256 of its graph part is %s", stored && digest_size == 32
                         ? "not the one recorded" : "missing");
    /* A newer minor may add fields this build does not write. */
    if (fb_get_u16(&root, CONTAINER_MINOR, 0) > CONTAINER_FORMAT_MINOR)
        return CDNN_STATUS_SUCCESS;
    return check_canonical(bytes, size, *graph, g, *plan, p);
}
