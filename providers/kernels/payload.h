/*
 * payload.h -- the kernels provider's plan payload (schema/kernel_payload.fbs):
 * a fixed 64-byte header, then a FlatBuffers body holding the code object
 * that ran at build, how its handler launches it, and the graph it runs.
 *
 * Decoding runs the first eight of the ordered load checks (header,
 * marker, readable version, known kind, sizes, body SHA-256, verifier and
 * identifier, field validity), each refusing alone with its own message;
 * restore.c runs the rest.  Damage is CORRUPT_DATA; a payload this
 * provider cannot read (a newer format) is NOT_SUPPORTED.
 */
#ifndef CDNN_KERNELS_PAYLOAD_H
#define CDNN_KERNELS_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>
#include <cdnn_sdk/kpack.h>

#define KERNEL_PAYLOAD_MARKER "CDKL"
#define KERNEL_PAYLOAD_MAJOR 1
#define KERNEL_PAYLOAD_MINOR 0
#define KERNEL_PAYLOAD_HEADER_SIZE 64

/* Limits on what a payload may claim, far above what a handler makes. */
#define KERNEL_PAYLOAD_MAX_LAUNCH_VALUES 4096
#define KERNEL_PAYLOAD_MAX_METADATA 256

typedef enum kernel_kind {
    KERNEL_KIND_HOST = 1,
    KERNEL_KIND_CUDA = 2,
} kernel_kind_t;

/** "host", "cuda", or NULL for another value. */
const char *kernel_kind_name(int kind);

/* A payload's fields.  Decoded, the strings and byte ranges point into the
 * payload's bytes, and the two arrays into what the decoder allocated
 * (kernel_payload_free). */
typedef struct kernel_payload {
    kernel_kind_t kind;
    uint64_t engine_id;
    const char *engine;
    const char *kernel_id;
    const char *handler;
    uint32_t handler_version;
    const int64_t *launch_values;
    int32_t launch_count;
    const char *target;
    const char *symbol;
    const uint8_t *kernel_sha256; /* 32 bytes */
    const char *signature;
    const uint8_t *code;
    size_t code_size;
    const char *provider_version; /* diagnostic */
    const uint8_t *graph;         /* graph format bytes (host graph_encode) */
    size_t graph_size;
    const sdk_kpack_kv_t *metadata; /* the kernel's pack metadata, in pack order */
    int32_t metadata_count;
    const char *pack_name;    /* diagnostic */
    const char *pack_version; /* diagnostic */
    int64_t *decoded_values;
    sdk_kpack_kv_t *decoded_metadata;
} kernel_payload_t;

/** The payload's bytes, header and body, malloc'd into *bytes. */
cdnn_status_t kernel_payload_encode(const kernel_payload_t *p, uint8_t **bytes,
                                    size_t *size);

/** Checks 1-8 on hostile bytes, then the fields; on failure *p holds
 * nothing to free. */
cdnn_status_t kernel_payload_decode(const uint8_t *bytes, size_t size,
                                    kernel_payload_t *p);

void kernel_payload_free(kernel_payload_t *p);

#endif
