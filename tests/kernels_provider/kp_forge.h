/*
 * kp_forge.h -- forging kernel plans as an attacker would: read a plan's
 * kernel payload with the test's own reader (schema/kernel_payload.fbs,
 * not the provider's code), edit it, write it with the SDK's FlatBuffers
 * builder, and re-seal the plan around it (a correct plan digest and a
 * canonical envelope), so that only the provider's own checks stand
 * between the forgery and running it.
 */
#ifndef CDNN_TESTS_KP_FORGE_H
#define CDNN_TESTS_KP_FORGE_H

#include "kp_util.h"

#define KP_MAX_VALUES 512
#define KP_MAX_METADATA 16

/* A kernel payload's fields, as owned copies; a NULL string is absent. */
typedef struct kp_payload {
    uint16_t kind; /* the header's: 1 host, 2 cuda */
    char *kind_name, *engine, *kernel_id, *handler, *target, *symbol, *signature;
    char *provider_version, *pack_name, *pack_version;
    uint64_t engine_id;
    int32_t handler_version;
    int64_t launch_values[KP_MAX_VALUES];
    int32_t launch_count;
    uint8_t kernel_sha256[32];
    kp_bytes_t code, graph;
    int32_t metadata_count;
    char *keys[KP_MAX_METADATA], *values[KP_MAX_METADATA];
} kp_payload_t;

/** The payload of a plan (bytes of a bare plan), read and copied. */
kp_payload_t kp_payload_of_plan(kp_bytes_t plan);
void kp_payload_free(kp_payload_t *p);

/** Replace a string field (value NULL: absent). */
void kp_payload_set(char **field, const char *value);

/** The payload's bytes: header (format 1.0, the payload's kind, sizes and
 * the body's SHA-256, all correct) and body. */
kp_bytes_t kp_payload_bytes(const kp_payload_t *p);

/** Recompute the header's body SHA-256 after editing the body. */
void kp_payload_reseal(kp_bytes_t payload);

/** The plan with its payload replaced, re-sealed. */
kp_bytes_t kp_plan_with_payload(kp_bytes_t plan, kp_bytes_t payload);

#endif
