#include "format/blob.h"

#include <string.h>

#include "core/error.h"

blob_kind_t blob_kind(const uint8_t *bytes, size_t size)
{
    if (!bytes || size < 8)
        return BLOB_UNKNOWN;
    if (memcmp(bytes + 4, GRAPH_IDENTIFIER, 4) == 0)
        return BLOB_GRAPH;
    if (memcmp(bytes + 4, PLAN_IDENTIFIER, 4) == 0)
        return BLOB_PLAN;
    if (memcmp(bytes + 4, CONTAINER_IDENTIFIER, 4) == 0)
        return BLOB_CONTAINER;
    return BLOB_UNKNOWN;
}

const char *blob_kind_phrase(blob_kind_t kind)
{
    switch (kind) {
    case BLOB_GRAPH: return "a cdnn graph";
    case BLOB_PLAN: return "a cdnn plan";
    case BLOB_CONTAINER: return "a cdnn graph-and-plan container";
    default: return "not a cdnn artifact";
    }
}

/* Graph JSON is an object: '{' after optional white space and a UTF-8 byte
 * order mark.  No binary artifact starts so (they start with a FlatBuffers
 * root offset, then their identifier), and JSON is what people most often
 * hand a binary loader by mistake. */
static int looks_like_json(const uint8_t *p, size_t n)
{
    size_t i = n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
        i++;
    return i < n && p[i] == '{';
}

cdnn_status_t blob_expect(const uint8_t *bytes, size_t size, blob_kind_t want,
                          const char *loader)
{
    blob_kind_t got = blob_kind(bytes, size);
    /* Every loader starts here, so the size cap is checked before anything
     * past the identifier is read. */
    if (got == want && size > CDNN_MAX_ARTIFACT_BYTES)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED, "%s: the bytes are %s of %zu "
                         "bytes; cdnn loads artifacts of up to %zu bytes "
                         "(CDNN_MAX_ARTIFACT_BYTES)", loader, blob_kind_phrase(got),
                         size, CDNN_MAX_ARTIFACT_BYTES);
    if (got == want)
        return CDNN_STATUS_SUCCESS;
    if (got != BLOB_UNKNOWN)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "%s: the bytes are %s, but %s "
                         "was expected", loader, blob_kind_phrase(got),
                         blob_kind_phrase(want));
    if (bytes && looks_like_json(bytes, size))
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "%s: the bytes look like graph "
                         "JSON, not a binary cdnn artifact; read them with "
                         "cdnn_graph_from_json", loader);
    if (!bytes || size < 8)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "%s: %zu bytes are too few for "
                         "any cdnn artifact (at least 8)", loader, size);
    char shown[5] = {0};
    for (int i = 0; i < 4; i++)
        shown[i] = bytes[4 + i] >= 0x20 && bytes[4 + i] < 0x7f ? (char)bytes[4 + i] : '?';
    return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "%s: the bytes are not a cdnn "
                     "artifact (file identifier \"%s\"; expected \"%s\", \"%s\" "
                     "or \"%s\")", loader, shown, GRAPH_IDENTIFIER,
                     PLAN_IDENTIFIER, CONTAINER_IDENTIFIER);
}
