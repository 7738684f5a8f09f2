/*
 * fuzz_winner_cache.c -- the winner cache's reader on hostile file text.
 *
 * The input is the cache file.  An input whose first byte is odd is first
 * "sealed": every line gets the checksum prefix a writer would give it, so
 * that the fuzzer reaches the JSON and ranking logic behind the checksum.
 * The plan asking has three candidates; the oracle: the answer names one
 * of them or none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/sha256.h>

#include "engine/winner_cache.h"
#include "fuzz_common.h"

static candidate_t candidates[3];
static plan_t plan;

static void quiet(cdnn_log_level_t level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static char *labels[3] = {"cpu:blas_conv", "cpu:blas_conv [cpu.threads.count=1]",
                              "cpu:reference"};
    for (int i = 0; i < 3; i++)
        candidates[i].label = labels[i];
    plan.candidates = candidates;
    plan.candidate_count = 3;
    snprintf(plan.device_key, sizeof plan.device_key, "cpu/fuzz/2t");
    plan.knob_key = "";
    cdnn_set_log_callback(quiet, CDNN_LOG_ERROR, NULL); /* warnings are expected */
    return 0;
}

/* Each line prefixed with the first 16 hex digits of its SHA-256. */
static char *seal(const uint8_t *data, size_t size, size_t *out_size)
{
    char *out = malloc(size * 2 + 64 * (size + 1));
    size_t n = 0;
    for (size_t at = 0; out && at < size;) {
        const uint8_t *end = memchr(data + at, '\n', size - at);
        size_t len = end ? (size_t)(end - (data + at)) : size - at;
        uint8_t digest[SDK_SHA256_BYTES];
        char hex[SDK_SHA256_HEX_SIZE];
        if (sdk_sha256(data + at, len, digest) != 0)
            fuzz_die("SHA-256 failed");
        sdk_sha256_hex(digest, hex);
        memcpy(out + n, hex, 16);
        n += 16;
        out[n++] = ' ';
        memcpy(out + n, data + at, len);
        n += len;
        out[n++] = '\n';
        at += len + 1;
    }
    *out_size = n;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t text_size = size - 1;
    char *sealed = (data[0] & 1) ? seal(data + 1, size - 1, &text_size) : NULL;
    const char *text = sealed ? sealed : (const char *)data + 1;
    int32_t chosen = winner_cache_choose(text, text_size, &plan, "fuzz");
    if (chosen < -1 || chosen >= plan.candidate_count)
        fuzz_die("winner_cache_choose answered %d for %d candidates", chosen,
                 plan.candidate_count);
    free(sealed);
    return 0;
}
