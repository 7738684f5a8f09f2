/*
 * kpayload.h -- the kernels provider's plan payload, "CDKL" (docs/FORMATS.md
 * section 10, schema/kernel_payload.fbs): a fixed 64-byte header, then a
 * FlatBuffers body holding the code object that ran at build, how its
 * dispatch handler launches it, and the graph it runs.
 *
 * The provider writes it and restores plans from it; `cdnn inspect` reads it
 * to show the kernel a plan carries.  Both use this one decoder, which runs
 * the first eight ordered load checks (header size, marker, readable
 * version, known kind, sizes and reserved bytes, the body's SHA-256, the
 * body's identifier and structure, field validity), each refusing alone
 * with its own message through sdk_fail.  Damage is CORRUPT_DATA ("the
 * kernel payload is damaged: ..." / "... is inconsistent: ..."); a payload
 * in a newer format is NOT_SUPPORTED.  What only the provider can judge
 * (the target's family and whether this machine runs it, the handler, the
 * launch values against the graph, loading the code) is the provider's.
 */
#ifndef CDNN_SDK_KPAYLOAD_H
#define CDNN_SDK_KPAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>
#include <cdnn_sdk/kpack.h>

#define SDK_KPAYLOAD_MARKER "CDKL"
#define SDK_KPAYLOAD_MAJOR 1
#define SDK_KPAYLOAD_MINOR 0
#define SDK_KPAYLOAD_HEADER_SIZE 64

/* Limits on what a payload may claim, far above what a handler makes. */
#define SDK_KPAYLOAD_MAX_LAUNCH_VALUES 4096
#define SDK_KPAYLOAD_MAX_METADATA 256

typedef enum sdk_kpayload_kind {
    SDK_KPAYLOAD_HOST = 1,
    SDK_KPAYLOAD_CUDA = 2,
} sdk_kpayload_kind_t;

/** "host", "cuda", or NULL for another value. */
const char *sdk_kpayload_kind_name(int kind);

/* A payload's fields.  Decoded, the strings and byte ranges point into the
 * payload's bytes, and the two arrays into what the decoder allocated
 * (sdk_kpayload_free). */
typedef struct sdk_kpayload {
    sdk_kpayload_kind_t kind;
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
} sdk_kpayload_t;

/** The payload's bytes, header and body, malloc'd into *bytes. */
cdnn_status_t sdk_kpayload_encode(const sdk_kpayload_t *p, uint8_t **bytes, size_t *size);

/** Checks 1-8 on hostile bytes, then the fields into *p; on failure *p
 * holds nothing to free.  *p's pointers point into bytes. */
cdnn_status_t sdk_kpayload_decode(const uint8_t *bytes, size_t size, sdk_kpayload_t *p);

/** Frees what sdk_kpayload_decode allocated (safe on a zeroed *p). */
void sdk_kpayload_free(sdk_kpayload_t *p);

#endif
