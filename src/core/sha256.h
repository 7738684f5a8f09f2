/*
 * sha256.h -- SHA-256 through OpenSSL's libcrypto, behind three calls so
 * that callers never touch EVP state or forget an error check.
 */
#ifndef CDNN_CORE_SHA256_H
#define CDNN_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/cdnn.h>

typedef struct sha256 {
    void *md; /* EVP_MD_CTX */
    int ok;
} sha256_t;

/** Start a digest; failures are remembered and reported by sha256_end. */
void sha256_begin(sha256_t *h);
void sha256_update(sha256_t *h, const void *data, size_t size);
/** Finish into out; INTERNAL_ERROR or ALLOC_FAILED if any step failed. */
cdnn_status_t sha256_end(sha256_t *h, uint8_t out[32]);

#endif
