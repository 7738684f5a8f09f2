/*
 * blob.h -- telling cdnn's artifacts apart by their file identifier.
 */
#ifndef CDNN_FORMAT_BLOB_H
#define CDNN_FORMAT_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/cdnn.h>

#define GRAPH_IDENTIFIER "CDGR"
#define PLAN_IDENTIFIER "CDPL"
#define CONTAINER_IDENTIFIER "CDGP"

typedef enum blob_kind {
    BLOB_UNKNOWN = 0,
    BLOB_GRAPH,
    BLOB_PLAN,
    BLOB_CONTAINER,
} blob_kind_t;

/** The kind named by bytes 4..7, or BLOB_UNKNOWN (also when too short). */
blob_kind_t blob_kind(const uint8_t *bytes, size_t size);

/** "a cdnn graph", "a cdnn plan", ... for messages. */
const char *blob_kind_phrase(blob_kind_t kind);

/**
 * Check that bytes are of kind `want`; otherwise fail naming both kinds
 * (BAD_PARAM for another cdnn artifact, CORRUPT_DATA for anything else).
 * `loader` names the call for the message.
 */
cdnn_status_t blob_expect(const uint8_t *bytes, size_t size, blob_kind_t want,
                          const char *loader);

#endif
