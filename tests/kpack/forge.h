/*
 * forge.h -- kernel packs as a forger makes them: any TOC (fields missing,
 * wrong lengths, overlapping ranges, duplicate ids), laid out by the test
 * itself through the SDK's FlatBuffers builder, and any header, re-sealed
 * with a correct digest, so that each of the reader's checks after the
 * digest can be met alone.  The SDK's writer refuses to make such packs.
 */
#ifndef CDNN_TESTS_KPACK_FORGE_H
#define CDNN_TESTS_KPACK_FORGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/flatbuf.h>
#include <cdnn_sdk/kpack.h>
#include <cdnn_sdk/sha256.h>

typedef struct forged_kernel {
    const char *id, *symbol, *target, *signature; /* NULL: absent */
    uint64_t offset, size;
    const uint8_t *sha256;
    uint32_t sha256_len; /* 0 with sha256 NULL: absent */
    int32_t metadata_count;
    const sdk_kpack_kv_t *metadata;
} forged_kernel_t;

typedef struct forged_toc {
    uint16_t major, minor;
    const char *identifier;
    const char *name, *version, *family;
    int32_t kernel_count;
    const forged_kernel_t *kernels;
    int32_t engine_count;
    const sdk_kpack_spec_engine_t *engines; /* written as the SDK writes them */
} forged_toc_t;

/* Header fields as offsets (docs/FORMATS.md section 9). */
enum { FORGE_MAJOR = 4, FORGE_MINOR = 6, FORGE_HEADER_SIZE = 8, FORGE_FLAGS = 12,
       FORGE_TOC_OFFSET = 16, FORGE_TOC_SIZE = 24, FORGE_SHA256 = 32 };

static inline void forge_store(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t forge_load(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Recompute the header's digest: SHA-256(header[0, 32) || TOC), the TOC
 * where the header says it is. */
static inline void forge_reseal(uint8_t *pack)
{
    uint64_t at = forge_load(pack + FORGE_TOC_OFFSET, 8);
    uint64_t n = forge_load(pack + FORGE_TOC_SIZE, 8);
    sdk_sha256_t h;
    sdk_sha256_begin(&h);
    sdk_sha256_update(&h, pack, 32);
    sdk_sha256_update(&h, pack + at, (size_t)n);
    sdk_sha256_end(&h, pack + FORGE_SHA256);
}

static inline fb_ref_t forge_kv(fb_builder_t *b, const sdk_kpack_kv_t *kv, int32_t n)
{
    fb_ref_t refs[64];
    for (int32_t i = 0; i < n; i++) {
        fb_ref_t key = fb_string(b, kv[i].key), value = fb_string(b, kv[i].value);
        fb_table_start(b, 2);
        fb_add_ref(b, 0, key);
        fb_add_ref(b, 1, value);
        refs[i] = fb_table_end(b);
    }
    return n ? fb_vector_refs(b, refs, (size_t)n) : 0;
}

static inline fb_ref_t forge_kernel(fb_builder_t *b, const forged_kernel_t *k)
{
    fb_ref_t metadata = forge_kv(b, k->metadata, k->metadata_count);
    fb_ref_t id = fb_string(b, k->id), symbol = fb_string(b, k->symbol);
    fb_ref_t target = fb_string(b, k->target), signature = fb_string(b, k->signature);
    fb_ref_t sha = k->sha256 ? fb_bytes(b, k->sha256, k->sha256_len) : 0;
    fb_table_start(b, 8);
    fb_add_ref(b, 0, id);
    fb_add_ref(b, 1, symbol);
    fb_add_ref(b, 2, target);
    fb_add_u64(b, 3, k->offset, 0);
    fb_add_u64(b, 4, k->size, 0);
    fb_add_ref(b, 5, sha);
    fb_add_ref(b, 6, signature);
    fb_add_ref(b, 7, metadata);
    return fb_table_end(b);
}

static inline fb_ref_t forge_engine(fb_builder_t *b, const sdk_kpack_spec_engine_t *e)
{
    fb_ref_t knobs[64], candidates[64];
    for (int32_t i = 0; i < e->knob_count; i++) {
        fb_ref_t name = fb_string(b, e->knobs[i].name);
        fb_ref_t description = fb_string(b, e->knobs[i].description);
        fb_table_start(b, 5);
        fb_add_ref(b, 0, name);
        fb_add_ref(b, 1, description);
        fb_add_i64(b, 2, e->knobs[i].min_value, 0);
        fb_add_i64(b, 3, e->knobs[i].max_value, 0);
        fb_add_i64(b, 4, e->knobs[i].default_value, 0);
        knobs[i] = fb_table_end(b);
    }
    fb_ref_t knob_vec = e->knob_count ? fb_vector_refs(b, knobs, (size_t)e->knob_count) : 0;
    for (int32_t i = 0; i < e->candidate_count; i++)
        candidates[i] = fb_string(b, e->candidates[i]);
    fb_ref_t cand_vec =
        e->candidate_count ? fb_vector_refs(b, candidates, (size_t)e->candidate_count) : 0;
    fb_ref_t name = fb_string(b, e->name), match = fb_string(b, e->match);
    fb_ref_t constraints = fb_string(b, e->constraints_json);
    fb_ref_t handler = fb_string(b, e->handler_name);
    fb_table_start(b, 8);
    fb_add_ref(b, 0, name);
    fb_add_i32(b, 1, e->rank, 0);
    fb_add_ref(b, 2, match);
    fb_add_ref(b, 3, constraints);
    fb_add_ref(b, 4, handler);
    fb_add_i32(b, 5, (int32_t)e->handler_version, 0);
    fb_add_ref(b, 6, knob_vec);
    fb_add_ref(b, 7, cand_vec);
    return fb_table_end(b);
}

/* The TOC's bytes (malloc'd). */
static inline uint8_t *forge_toc(const forged_toc_t *t, size_t *size)
{
    fb_builder_t b;
    fb_builder_init(&b);
    int32_t most = t->kernel_count > t->engine_count ? t->kernel_count : t->engine_count;
    fb_ref_t *refs = calloc((size_t)most + 1, sizeof *refs);
    for (int32_t i = 0; i < t->kernel_count; i++)
        refs[i] = forge_kernel(&b, &t->kernels[i]);
    fb_ref_t kernels = t->kernel_count ? fb_vector_refs(&b, refs, (size_t)t->kernel_count) : 0;
    for (int32_t i = 0; i < t->engine_count; i++)
        refs[i] = forge_engine(&b, &t->engines[i]);
    fb_ref_t engines = t->engine_count ? fb_vector_refs(&b, refs, (size_t)t->engine_count) : 0;
    free(refs);
    fb_ref_t name = fb_string(&b, t->name), version = fb_string(&b, t->version);
    fb_ref_t family = fb_string(&b, t->family);
    fb_table_start(&b, 7);
    fb_add_u16(&b, 0, t->major, 0);
    fb_add_u16(&b, 1, t->minor, 0);
    fb_add_ref(&b, 2, name);
    fb_add_ref(&b, 3, version);
    fb_add_ref(&b, 4, family);
    fb_add_ref(&b, 5, kernels);
    fb_add_ref(&b, 6, engines);
    uint8_t *bytes = NULL;
    if (fb_finish_copy(&b, fb_table_end(&b), t->identifier ? t->identifier : "CDKT", &bytes,
                       size) != 0)
        abort();
    fb_builder_free(&b);
    return bytes;
}

/* A pack: body's bytes [0, toc_offset) (header and code objects of a real
 * pack), then the forged TOC, the header's TOC fields set and re-sealed.
 * *size: the file's size. */
static inline uint8_t *forge_pack(const uint8_t *body, uint64_t toc_offset,
                                  const forged_toc_t *t, size_t *size)
{
    size_t toc_size = 0;
    uint8_t *toc = forge_toc(t, &toc_size);
    uint8_t *pack = malloc((size_t)toc_offset + toc_size);
    memcpy(pack, body, (size_t)toc_offset);
    memcpy(pack + toc_offset, toc, toc_size);
    free(toc);
    forge_store(pack + FORGE_MAJOR, t->major, 2);
    forge_store(pack + FORGE_MINOR, t->minor, 2);
    forge_store(pack + FORGE_TOC_OFFSET, toc_offset, 8);
    forge_store(pack + FORGE_TOC_SIZE, toc_size, 8);
    forge_reseal(pack);
    *size = (size_t)toc_offset + toc_size;
    return pack;
}

#endif
