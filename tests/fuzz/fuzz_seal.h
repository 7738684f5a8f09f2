/*
 * fuzz_seal.h -- wrap fuzzed bytes in a valid plan envelope.
 *
 * A plan's body is covered by a SHA-256 and its envelope must be canonical,
 * so random changes to saved plans stop at the digest check and never reach
 * the body or payload decoders.  These helpers write what cdnn writes
 * (schema/plan.fbs; the field order of src/format/plan_format.c, so that
 * the envelope passes the canonical check) around a fuzzed body, or around
 * a fuzzed CPU payload in an otherwise plain body, and compute the digest
 * with OpenSSL, an implementation independent of cdnn's.
 */
#ifndef CDNN_FUZZ_SEAL_H
#define CDNN_FUZZ_SEAL_H

#include <openssl/evp.h>

#include <cdnn_sdk/flatbuf.h>

#include "fuzz_common.h"

#define SEAL_MAJOR 1
#define SEAL_MINOR 0

/* SHA-256("CDPL" || major LE16 || minor LE16 || body). */
static inline void seal_digest(const uint8_t *body, size_t n, uint8_t out[32])
{
    const uint8_t head[8] = {'C', 'D', 'P', 'L', SEAL_MAJOR, 0, SEAL_MINOR, 0};
    unsigned len = 32;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) ||
        !EVP_DigestUpdate(ctx, head, sizeof head) ||
        !EVP_DigestUpdate(ctx, body, n) || !EVP_DigestFinal_ex(ctx, out, &len))
        fuzz_die("SHA-256 failed in the harness");
    EVP_MD_CTX_free(ctx);
}

/* Copy a finished buffer out of its builder (malloc'd). */
static inline uint8_t *seal_take(fb_builder_t *b, fb_ref_t root, const char *id,
                                 size_t *n)
{
    const uint8_t *data;
    uint8_t *out = NULL;
    if (fb_finish(b, root, id, &data, n) != 0 || !(out = malloc(*n ? *n : 1)))
        fuzz_die("the harness could not build a buffer");
    memcpy(out, data, *n);
    fb_builder_free(b);
    return out;
}

/* Plan bytes around `body` (any bytes), digest correct. */
static inline uint8_t *seal_plan(const uint8_t *body, size_t body_size, size_t *n)
{
    uint8_t digest[32];
    fb_builder_t b;
    seal_digest(body, body_size, digest);
    fb_builder_init(&b);
    fb_ref_t digest_ref = fb_bytes(&b, digest, sizeof digest);
    fb_ref_t body_ref = fb_bytes(&b, body, body_size);
    fb_table_start(&b, 4);
    fb_add_u16(&b, 0, SEAL_MAJOR, 0);
    fb_add_u16(&b, 1, SEAL_MINOR, 0);
    fb_add_ref(&b, 2, body_ref);
    fb_add_ref(&b, 3, digest_ref);
    return seal_take(&b, fb_table_end(&b), "CDPL", n);
}

/* A CPU plan body (no tensors, no workspace, content key zero) that
 * carries `payload` for engine `engine`. */
static inline uint8_t *seal_cpu_body(const char *engine, const uint8_t *payload,
                                     size_t payload_size, size_t *n)
{
    static const uint8_t key[32];
    fb_builder_t b;
    fb_builder_init(&b);
    fb_ref_t key_ref = fb_bytes(&b, key, sizeof key);
    fb_ref_t payload_ref = fb_bytes(&b, payload, payload_size);
    fb_ref_t tensors = fb_vector_structs(&b, key, 32, 8, 0);
    fb_ref_t version = fb_string(&b, "fuzz");
    fb_ref_t provider = fb_string(&b, "cpu");
    fb_ref_t engine_ref = fb_string(&b, engine);
    fb_table_start(&b, 12);
    fb_add_u64(&b, 0, cdnn_engine_id_from_name(engine), 0);
    fb_add_ref(&b, 1, engine_ref);
    fb_add_ref(&b, 2, provider);
    fb_add_ref(&b, 3, version);
    fb_add_ref(&b, 6, tensors);
    fb_add_u16(&b, 8, 1, 0); /* CPU payload format 1.0 */
    fb_add_ref(&b, 10, payload_ref);
    fb_add_ref(&b, 11, key_ref);
    return seal_take(&b, fb_table_end(&b), NULL, n);
}

#endif
