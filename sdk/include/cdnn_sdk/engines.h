/*
 * engines.h -- a provider's engines as one table, and the ABI calls that
 * only read it.
 *
 * engine_count, engine_info, knob_count and knob_info say nothing a table
 * of engines does not hold, so a provider declares the table once,
 *
 *     static const cdnn_knob_info_t tile_knob = {"acme.tile", "...", 1, 8, 4};
 *     static const sdk_engine_t engines[] = {
 *         {"acme:gemm", 10, 1, 0, 1, &tile_knob, &gemm_impl},
 *     };
 *     static const sdk_engine_table_t table = SDK_ENGINE_TABLE(engines);
 *
 * and its table's four calls forward to the functions below.  Failures
 * leave their message through sdk_fail (error.h).
 *
 * A saved plan's payload is hostile (docs/PROVIDER_ABI.md, "Saved plans"):
 * the knobs it carries must be ones a build could have passed to the
 * engine, which sdk_check_payload_knobs checks against the declarations.
 */
#ifndef CDNN_SDK_ENGINES_H
#define CDNN_SDK_ENGINES_H

#include <cdnn/provider.h>

typedef struct sdk_engine {
    const char *name; /* "<provider>:<engine>", stable forever */
    int32_t rank;     /* build order among applicable engines: higher first */
    /* The payload format its context_save writes (see engine_info). */
    uint16_t payload_major;
    uint16_t payload_minor;
    /* The knobs it reads, each with its range. */
    int32_t knob_count;
    const cdnn_knob_info_t *knobs;
    /* The provider's own description of what runs the engine (its
     * functions, say); the SDK never reads it. */
    const void *impl;
} sdk_engine_t;

typedef struct sdk_engine_table {
    int32_t count;
    const sdk_engine_t *engines;
} sdk_engine_table_t;

/** A table over a static array of sdk_engine_t. */
#define SDK_ENGINE_TABLE(array) {(int32_t)(sizeof(array) / sizeof((array)[0])), (array)}

int32_t sdk_engine_count(const sdk_engine_table_t *table);

/** Engine number index; BAD_PARAM past the table. */
cdnn_status_t sdk_engine_at(const sdk_engine_table_t *table, int32_t index,
                            const sdk_engine_t **engine);

/** What the ABI's engine_info reports: name, rank, payload version. */
cdnn_status_t sdk_engine_info(const sdk_engine_table_t *table, int32_t index,
                              cdnn_provider_engine_t *info);

/** The number of knobs engine number index declares (0 past the table). */
int32_t sdk_knob_count(const sdk_engine_table_t *table, int32_t index);

/** Knob number knob of engine number index; NOT_FOUND past its knobs. */
cdnn_status_t sdk_knob_info(const sdk_engine_table_t *table, int32_t index,
                            int32_t knob, cdnn_knob_info_t *info);

/**
 * The knobs a restored payload carries, checked as a build would have
 * given them to engine: each declared by the engine, within its
 * [min_value, max_value], given once, and none global (global.* knobs
 * steer the build and never reach a payload).  CORRUPT_DATA, with a
 * message saying "the payload is inconsistent" and which knob, otherwise.
 */
cdnn_status_t sdk_check_payload_knobs(const sdk_engine_t *engine,
                                      const cdnn_knob_value_t *knobs, int32_t count);

#endif
