/*
 * fuzz_kernel_payload -- the kernels provider's payload decoder (the first
 * eight ordered load checks, providers/kernels/payload.c) on hostile
 * bytes.  An input whose byte 24 (reserved, so damage anyway) is not 0xff
 * is re-sealed first -- its header's body size and SHA-256 made right --
 * so that mutations reach the body's verifier and field checks.  Oracle: a
 * payload that decodes re-encodes to bytes that decode to the same fields.
 * The seeds (tests/kernels_provider/corpus/kernel_payload) are payloads of
 * host matmul plans with a small code object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/sha256.h>

#include "payload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
    fprintf(stderr, "fuzz_kernel_payload: %s\n", what);
    abort();
}

static void reseal(uint8_t *p, size_t size)
{
    uint64_t body = size - KERNEL_PAYLOAD_HEADER_SIZE;
    for (int i = 0; i < 8; i++)
        p[16 + i] = (uint8_t)(body >> (8 * i));
    if (sdk_sha256(p + KERNEL_PAYLOAD_HEADER_SIZE, body, p + 32) != 0)
        die("SHA-256 failed");
}

static int same_string(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_fields(const kernel_payload_t *a, const kernel_payload_t *b)
{
    int same = a->kind == b->kind && a->engine_id == b->engine_id &&
               a->handler_version == b->handler_version &&
               a->launch_count == b->launch_count && a->code_size == b->code_size &&
               a->graph_size == b->graph_size && a->metadata_count == b->metadata_count &&
               same_string(a->engine, b->engine) && same_string(a->kernel_id, b->kernel_id) &&
               same_string(a->handler, b->handler) && same_string(a->target, b->target) &&
               same_string(a->symbol, b->symbol) && same_string(a->signature, b->signature);
    same = same && !memcmp(a->launch_values, b->launch_values,
                           (size_t)a->launch_count * sizeof *a->launch_values) &&
           !memcmp(a->code, b->code, a->code_size) && !memcmp(a->graph, b->graph, a->graph_size);
    for (int32_t i = 0; same && i < a->metadata_count; i++)
        same = same_string(a->metadata[i].key, b->metadata[i].key) &&
               same_string(a->metadata[i].value, b->metadata[i].value);
    return same;
}

/* A payload that decoded: encoded again, it must decode to itself. */
static void check_round_trip(const kernel_payload_t *p)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    kernel_payload_t again;
    if (kernel_payload_encode(p, &bytes, &size) != CDNN_STATUS_SUCCESS)
        return; /* out of memory */
    if (kernel_payload_decode(bytes, size, &again) != CDNN_STATUS_SUCCESS)
        die("a decoded payload, encoded again, does not decode");
    if (!same_fields(p, &again))
        die("a decoded payload, encoded again, decodes to other fields");
    kernel_payload_free(&again);
    free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kernel_payload_t p;
    uint8_t *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    if (size >= KERNEL_PAYLOAD_HEADER_SIZE && copy[24] != 0xff)
        reseal(copy, size);
    if (kernel_payload_decode(copy, size, &p) == CDNN_STATUS_SUCCESS) {
        check_round_trip(&p);
        kernel_payload_free(&p);
    }
    free(copy);
    return 0;
}
