/*
 * container_format.h -- the graph-and-plan container (schema/container.fbs):
 * a graph's bytes and, optionally, its plan's bytes, each stored whole.
 */
#ifndef CDNN_FORMAT_CONTAINER_FORMAT_H
#define CDNN_FORMAT_CONTAINER_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/cdnn.h>

#define CONTAINER_FORMAT_MAJOR 1
#define CONTAINER_FORMAT_MINOR 1

/** Encode a container (plan may be NULL); *bytes is malloc'd. */
cdnn_status_t container_encode(const uint8_t *graph, size_t graph_size,
                               const uint8_t *plan, size_t plan_size,
                               uint8_t **bytes, size_t *size);

/**
 * Verify a container and find its parts, which point into bytes; *plan is
 * NULL when it holds none.  The parts themselves are checked by their own
 * decoders when loaded.
 */
cdnn_status_t container_decode(const uint8_t *bytes, size_t size,
                               const uint8_t **graph, size_t *graph_size,
                               const uint8_t **plan, size_t *plan_size);

#endif
