/*
 * payload.h -- the CPU provider's plan payload (schema/cpu_payload.fbs).
 */
#ifndef CDNN_CPU_PAYLOAD_H
#define CDNN_CPU_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>

#define CPU_PAYLOAD_MAJOR 1
#define CPU_PAYLOAD_MINOR 0

typedef struct cpu_payload {
    const char *engine;
    cdnn_knob_value_t *knobs; /* owned array; names point into the bytes */
    int32_t knob_count;
    const uint8_t *graph;     /* graph bytes, inside the payload */
    size_t graph_size;
} cpu_payload_t;

/** Encode a payload (malloc'd). */
cdnn_status_t cpu_payload_encode(const char *engine, const cdnn_knob_value_t *knobs,
                                 int32_t knob_count, const uint8_t *graph,
                                 size_t graph_size, uint8_t **bytes, size_t *size);

/** Verify and decode payload bytes, which are hostile until checked. */
cdnn_status_t cpu_payload_decode(const uint8_t *bytes, size_t size, cpu_payload_t *p);

void cpu_payload_free(cpu_payload_t *p);

#endif
