/*
 * payload.h -- the kernels provider's plan payload (schema/kernel_payload.fbs):
 * a fixed 64-byte header, then a FlatBuffers body holding the code object
 * that ran at build, how its handler launches it, and the graph it runs.
 *
 * The format and its decoder are the SDK's (<cdnn_sdk/kpayload.h>), shared
 * with `cdnn inspect`; these are the provider's names for them.  Decoding
 * runs the first eight of the ordered load checks (header, marker,
 * readable version, known kind, sizes, body SHA-256, verifier and
 * identifier, field validity -- the last including the provider's own
 * check that the target is of the payload's kind), each refusing alone
 * with its own message; restore.c runs the rest.  Damage is CORRUPT_DATA;
 * a payload this provider cannot read (a newer format) is NOT_SUPPORTED.
 */
#ifndef CDNN_KERNELS_PAYLOAD_H
#define CDNN_KERNELS_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>
#include <cdnn_sdk/kpack.h>
#include <cdnn_sdk/kpayload.h>

#define KERNEL_PAYLOAD_MARKER SDK_KPAYLOAD_MARKER
#define KERNEL_PAYLOAD_MAJOR SDK_KPAYLOAD_MAJOR
#define KERNEL_PAYLOAD_MINOR SDK_KPAYLOAD_MINOR
#define KERNEL_PAYLOAD_HEADER_SIZE SDK_KPAYLOAD_HEADER_SIZE
#define KERNEL_PAYLOAD_MAX_LAUNCH_VALUES SDK_KPAYLOAD_MAX_LAUNCH_VALUES
#define KERNEL_PAYLOAD_MAX_METADATA SDK_KPAYLOAD_MAX_METADATA

typedef sdk_kpayload_kind_t kernel_kind_t;
#define KERNEL_KIND_HOST SDK_KPAYLOAD_HOST
#define KERNEL_KIND_CUDA SDK_KPAYLOAD_CUDA

typedef sdk_kpayload_t kernel_payload_t;

/** "host", "cuda", or NULL for another value. */
const char *kernel_kind_name(int kind);

/** The payload's bytes, header and body, malloc'd into *bytes. */
cdnn_status_t kernel_payload_encode(const kernel_payload_t *p, uint8_t **bytes,
                                    size_t *size);

/** Checks 1-8 on hostile bytes, then the fields; on failure *p holds
 * nothing to free. */
cdnn_status_t kernel_payload_decode(const uint8_t *bytes, size_t size,
                                    kernel_payload_t *p);

void kernel_payload_free(kernel_payload_t *p);

#endif
