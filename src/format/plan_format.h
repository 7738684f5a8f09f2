/*
 * plan_format.h -- the plan artifact (schema/plan.fbs): an envelope with
 * the format version and a SHA-256 over a nested body that holds every
 * field.
 */
#ifndef CDNN_FORMAT_PLAN_FORMAT_H
#define CDNN_FORMAT_PLAN_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>

#define PLAN_FORMAT_MAJOR 1
#define PLAN_FORMAT_MINOR 0

typedef struct plan_tensor {
    int64_t uid;
    int64_t alignment;
    uint64_t span_bytes;
    cdnn_data_type_t type;
    int is_output;
} plan_tensor_t;

/* What a plan records.  Decoded strings and payload point into the bytes
 * they were decoded from; tensors is owned (see plan_record_free). */
typedef struct plan_record {
    uint16_t format_major, format_minor;
    uint64_t engine_id;
    const char *engine_name;
    const char *provider_name;
    const char *provider_version;
    int32_t device_kind; /* cdnn_device_kind_t */
    int32_t device_arch;
    plan_tensor_t *tensors;
    uint32_t tensor_count;
    uint64_t workspace_size;
    uint16_t payload_major, payload_minor;
    const uint8_t *payload; /* NULL: write_payload writes it, in place */
    size_t payload_size;
    cdnn_status_t (*write_payload)(void *writer, uint8_t *dst, size_t size);
    void *writer;
    const uint8_t *content_key; /* 32 bytes */
} plan_record_t;

/** Encode r as plan bytes (malloc'd). */
cdnn_status_t plan_format_encode(const plan_record_t *r, uint8_t **bytes,
                                 size_t *size);

/**
 * Decode plan bytes: identifier, structure, digest, version, canonical
 * envelope, body, in that order, each refusing on its own with its own
 * message.
 */
cdnn_status_t plan_format_decode(const uint8_t *bytes, size_t size,
                                 plan_record_t *r);

void plan_record_free(plan_record_t *r);

#endif
