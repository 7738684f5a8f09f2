/*
 * sha256.h -- the SDK's SHA-256 (sdk/include/cdnn_sdk/sha256.h) in the
 * library's error model: sha256_end turns a failure into ALLOC_FAILED with
 * cdnn's message, so that each of the library's digests checks one status
 * and no caller repeats the message.
 */
#ifndef CDNN_CORE_SHA256_H
#define CDNN_CORE_SHA256_H

#include <cdnn/cdnn.h>
#include <cdnn_sdk/sha256.h>

typedef sdk_sha256_t sha256_t;

/** Start a digest; a failure here or in an update is remembered and
 * reported by sha256_end. */
void sha256_begin(sha256_t *h);
void sha256_update(sha256_t *h, const void *data, size_t size);
/** Finish into out; ALLOC_FAILED, with cdnn's message, if any step failed. */
cdnn_status_t sha256_end(sha256_t *h, uint8_t out[32]);

#endif
