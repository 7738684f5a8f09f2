#include "format/envelope.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

cdnn_status_t envelope_check_version(const artifact_format_t *f, uint16_t major,
                                     uint16_t minor)
{
    if (major == f->major && (minor <= f->minor || f->loads_newer_minor))
        return CDNN_STATUS_SUCCESS;
    return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                     "the %s is in %s format %u.%u, and this cdnn reads %s format "
                     "%u.x (up to %u.%u); %s", f->artifact, f->artifact, major, minor,
                     f->artifact, f->major, f->major, f->minor,
                     major < f->major ? "rebuild it from its graph"
                                      : "use a newer cdnn to load it");
}

cdnn_status_t envelope_check_digest(const char *what, const uint8_t *stored,
                                    uint32_t stored_size, const uint8_t computed[32])
{
    if (!stored || stored_size != 32)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "%s is damaged: its SHA-256 is "
                         "%s", what, stored ? "not 32 bytes" : "missing");
    if (memcmp(stored, computed, 32) != 0)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "%s is damaged: its SHA-256 does "
                         "not match its contents (the bytes were altered or truncated "
                         "after saving)", what);
    return CDNN_STATUS_SUCCESS;
}

void envelope_init(envelope_t *e)
{
    memset(e, 0, sizeof *e);
    fb_builder_init(&e->b);
}

void envelope_free(envelope_t *e)
{
    fb_builder_free(&e->b);
}

fb_ref_t envelope_part(envelope_t *e, const uint8_t *bytes, size_t size)
{
    if (e->part_count == ENVELOPE_MAX_PARTS) {
        e->too_many_parts = 1;
        return 0;
    }
    fb_ref_t ref = fb_bytes_hole(&e->b, size);
    e->parts[e->part_count].bytes = bytes;
    e->parts[e->part_count].size = size;
    e->parts[e->part_count].ref = ref;
    e->part_count++;
    return ref;
}

cdnn_status_t envelope_finish(envelope_t *e, fb_ref_t root, const char *identifier)
{
    if (e->too_many_parts)
        return cdnn_fail(CDNN_STATUS_INTERNAL_ERROR, "an envelope layout has more "
                         "than %d parts", ENVELOPE_MAX_PARTS);
    if (fb_finish(&e->b, root, identifier, &e->data, &e->size) != 0)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory laying out an "
                         "artifact's envelope");
    return CDNN_STATUS_SUCCESS;
}

/* Where part i's bytes go in the finished envelope. */
static size_t part_at(const envelope_t *e, int i)
{
    return fb_vector_data_at(e->size, e->parts[i].ref);
}

/* The parts lie in the order they were made, last made first in the
 * buffer (the builder writes back to front); the bytes between them are
 * the envelope's own. */
cdnn_status_t envelope_write(const envelope_t *e, uint8_t **bytes, size_t *size)
{
    uint8_t *out = malloc(e->size ? e->size : 1);
    if (!out)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory writing an artifact");
    size_t done = 0;
    for (int i = e->part_count - 1; i >= 0; i--) {
        size_t at = part_at(e, i);
        memcpy(out + done, e->data + done, at - done);
        memcpy(out + at, e->parts[i].bytes, e->parts[i].size);
        done = at + e->parts[i].size;
    }
    memcpy(out + done, e->data + done, e->size - done);
    *bytes = out;
    *size = e->size;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t envelope_matches(const envelope_t *e, const uint8_t *bytes, size_t size,
                               const char *what)
{
    int same = size == e->size;
    size_t done = 0;
    for (int i = e->part_count - 1; same && i >= 0; i--) {
        size_t at = part_at(e, i);
        same = e->parts[i].bytes == bytes + at &&
               memcmp(bytes + done, e->data + done, at - done) == 0;
        done = at + e->parts[i].size;
    }
    if (same)
        same = memcmp(bytes + done, e->data + done, size - done) == 0;
    if (!same)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "%s is damaged: its envelope bytes "
                         "differ from what cdnn writes around its parts", what);
    return CDNN_STATUS_SUCCESS;
}
