/*
 * sha256.h -- SHA-256 over OpenSSL's libcrypto (EVP), behind calls that
 * keep EVP state and its error checks out of every caller.
 *
 * Failures are sticky: once a step fails, later updates do nothing and
 * sdk_sha256_end reports it, so a caller checks once, at the end.  Calls
 * return 0 or -1 and write no message: the library turns -1 into its own
 * error (src/core/sha256.c), a provider into its own (sdk_fail).  SHA-256
 * is built into libcrypto's default provider, so -1 means libcrypto could
 * not allocate.
 */
#ifndef CDNN_SDK_SHA256_H
#define CDNN_SDK_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SDK_SHA256_BYTES 32
/** Hex digits of a digest plus the terminating NUL. */
#define SDK_SHA256_HEX_SIZE (2 * SDK_SHA256_BYTES + 1)

typedef struct sdk_sha256 {
    void *md;   /* EVP_MD_CTX */
    int failed;
} sdk_sha256_t;

/** Start a digest. */
int sdk_sha256_begin(sdk_sha256_t *h);
int sdk_sha256_update(sdk_sha256_t *h, const void *data, size_t size);
/** Finish into out and release the state, whatever happened before: 0,
 * or -1 if any step since sdk_sha256_begin failed. */
int sdk_sha256_end(sdk_sha256_t *h, uint8_t out[SDK_SHA256_BYTES]);

/** The digest of one buffer. */
int sdk_sha256(const void *data, size_t size, uint8_t out[SDK_SHA256_BYTES]);

/** A digest as lowercase hex: 64 digits and a NUL, the way cdnn prints
 * every digest (content keys, cache keys, inspect). */
void sdk_sha256_hex(const uint8_t digest[SDK_SHA256_BYTES],
                    char hex[SDK_SHA256_HEX_SIZE]);

#endif
