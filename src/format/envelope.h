/*
 * envelope.h -- what every cdnn artifact's outer layer shares.
 *
 * A plan, a container (and the kernel packs and payloads to come) each
 * store large parts whole inside a small FlatBuffers table that carries a
 * format version and a SHA-256.  Three rules hold for all of them, and
 * live here once:
 *
 *   - digest first: the SHA-256 is checked before any field it covers is
 *     interpreted, the version included (envelope_check_digest);
 *   - one version policy: a major other than this build's is refused as
 *     NOT_SUPPORTED naming both versions; a newer minor loads or not by the
 *     artifact's own rule (envelope_check_version);
 *   - canonical bytes: the envelope must be byte for byte what cdnn writes
 *     around the same parts, so that no byte outside the parts can change
 *     unnoticed (envelope_matches).
 *
 * The canonical bytes are made by an artifact's own layout function with
 * its parts as holes (fb_bytes_hole), so that checking an envelope copies
 * no part and writing one copies each part once.
 */
#ifndef CDNN_FORMAT_ENVELOPE_H
#define CDNN_FORMAT_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/cdnn.h>
#include <cdnn_sdk/flatbuf.h>

/* ---- version policy -------------------------------------------------------- */

typedef struct artifact_format {
    const char *artifact;   /* "plan", "container": the artifact's name */
    uint16_t major, minor;  /* what this build writes */
    int loads_newer_minor;  /* a newer minor only adds what may be ignored */
} artifact_format_t;

/** NOT_SUPPORTED naming both versions unless this build reads major.minor:
 * "the plan is in plan format 2.0, and this cdnn reads plan format 1.x (up
 * to 1.0); use a newer cdnn to load it". */
cdnn_status_t envelope_check_version(const artifact_format_t *f, uint16_t major,
                                     uint16_t minor);

/* ---- digests --------------------------------------------------------------- */

/** CORRUPT_DATA unless the stored digest is 32 bytes equal to computed.
 * what names the artifact ("the plan", "the container"). */
cdnn_status_t envelope_check_digest(const char *what, const uint8_t *stored,
                                    uint32_t stored_size, const uint8_t computed[32]);

/* ---- canonical bytes ------------------------------------------------------- */

#define ENVELOPE_MAX_PARTS 4

/** The canonical bytes of an envelope, with its parts as holes. */
typedef struct envelope {
    fb_builder_t b;
    const uint8_t *data; /* after envelope_finish: data[0, size), holes unread */
    size_t size;
    struct {
        const uint8_t *bytes;
        size_t size;
        fb_ref_t ref;
    } parts[ENVELOPE_MAX_PARTS];
    int part_count;
    int too_many_parts; /* a layout error, reported by envelope_finish */
} envelope_t;

void envelope_init(envelope_t *e);
void envelope_free(envelope_t *e);

/** A part stored whole: a [ubyte] vector laid out as fb_bytes would lay out
 * these bytes, which are placed only by envelope_write. */
fb_ref_t envelope_part(envelope_t *e, const uint8_t *bytes, size_t size);

/** Finish the table built in e->b; ALLOC_FAILED if the builder failed. */
cdnn_status_t envelope_finish(envelope_t *e, fb_ref_t root, const char *identifier);

/** The artifact's bytes (malloc'd): the canonical bytes, parts copied in. */
cdnn_status_t envelope_write(const envelope_t *e, uint8_t **bytes, size_t *size);

/** CORRUPT_DATA ("<what> is damaged: its envelope bytes differ from what
 * cdnn writes around its parts") unless bytes are e's canonical bytes with
 * e's parts at the places e puts them. */
cdnn_status_t envelope_matches(const envelope_t *e, const uint8_t *bytes, size_t size,
                               const char *what);

#endif
