/*
 * kpack_write.c -- a kernel pack from a spec (kpack.h): code objects laid
 * out (identical ones once), the TOC through the SDK's FlatBuffers
 * builder, the header and its digest, and then the reader's own checks on
 * the result, so that no pack leaves here that the reader refuses.
 */
#include "kpack_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *spec_name(const sdk_kpack_spec_t *spec)
{
    return spec && spec->name ? spec->name : "(unnamed)";
}

/* ---- the spec's shape ---------------------------------------------------------- */

/* What the builder itself needs (counts, arrays, pointers); everything
 * else about the content is the reader's to judge. */
static const char *shape_error(const sdk_kpack_spec_t *spec)
{
    if (spec->kernel_count < 0 || spec->kernel_count > SDK_KPACK_MAX_KERNELS ||
        (spec->kernel_count && !spec->kernels))
        return "its kernel count or kernel array is invalid";
    if (spec->engine_count < 0 || spec->engine_count > SDK_KPACK_MAX_ENGINES ||
        (spec->engine_count && !spec->engines))
        return "its engine count or engine array is invalid";
    for (int32_t i = 0; i < spec->kernel_count; i++) {
        const sdk_kpack_spec_kernel_t *k = &spec->kernels[i];
        if ((!k->code && k->code_size) || k->code_size > SDK_KPACK_MAX_BYTES)
            return "a kernel's code object is missing or too large";
        if (k->metadata_count < 0 || k->metadata_count > SDK_KPACK_MAX_ENTRIES ||
            (k->metadata_count && !k->metadata))
            return "a kernel's metadata count or array is invalid";
    }
    for (int32_t i = 0; i < spec->engine_count; i++) {
        const sdk_kpack_spec_engine_t *e = &spec->engines[i];
        if (e->knob_count < 0 || e->knob_count > SDK_KPACK_MAX_ENTRIES ||
            (e->knob_count && !e->knobs))
            return "an engine's knob count or array is invalid";
        if (e->candidate_count < 0 || e->candidate_count > SDK_KPACK_MAX_ENTRIES ||
            (e->candidate_count && !e->candidates))
            return "an engine's candidate count or array is invalid";
        for (int32_t c = 0; c < e->candidate_count; c++)
            if (!e->candidates[c])
                return "an engine's candidate is NULL";
    }
    return NULL;
}

/* ---- layout ---------------------------------------------------------------------- */

typedef struct layout {
    uint8_t (*sha256)[SDK_SHA256_BYTES]; /* per kernel, of its code object */
    uint64_t *offset;                    /* per kernel */
    uint64_t toc_offset;
} layout_t;

/* A code object as the layout compares them: identical ones are stored
 * once. */
typedef struct code_key {
    uint64_t size;
    const uint8_t *sha256;
    int32_t index;
} code_key_t;

static uint64_t align_up(uint64_t v)
{
    return (v + SDK_KPACK_ALIGN - 1) / SDK_KPACK_ALIGN * SDK_KPACK_ALIGN;
}

static int compare_code(const code_key_t *a, const code_key_t *b)
{
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    return memcmp(a->sha256, b->sha256, SDK_SHA256_BYTES);
}

/* Identical code objects together, the lowest index of each group first. */
static int compare_keys(const void *pa, const void *pb)
{
    const code_key_t *a = pa, *b = pb;
    int c = compare_code(a, b);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* first[i]: the lowest index whose code object is kernel i's (same size and
 * SHA-256); i itself when none before it is. */
static void find_shared(const sdk_kpack_spec_t *spec, const layout_t *l, code_key_t *keys,
                        int32_t *first)
{
    int32_t n = spec->kernel_count;
    for (int32_t i = 0; i < n; i++)
        keys[i] = (code_key_t){spec->kernels[i].code_size, l->sha256[i], i};
    qsort(keys, (size_t)n, sizeof *keys, compare_keys);
    for (int32_t i = 0; i < n; i++)
        first[keys[i].index] = i > 0 && compare_code(&keys[i - 1], &keys[i]) == 0
                                   ? first[keys[i - 1].index]
                                   : keys[i].index;
}

/* Each kernel's offset: code objects in order of first use, each at the
 * next multiple of 64; a kernel whose code is an earlier kernel's shares
 * its offset.  NOT_SUPPORTED when the pack would be too large. */
static cdnn_status_t place_code(const sdk_kpack_spec_t *spec, layout_t *l,
                                const int32_t *first)
{
    uint64_t end = SDK_KPACK_HEADER_BYTES;
    for (int32_t i = 0; i < spec->kernel_count; i++) {
        if (first[i] != i) {
            l->offset[i] = l->offset[first[i]];
            continue;
        }
        l->offset[i] = align_up(end);
        end = l->offset[i] + spec->kernels[i].code_size;
        if (end > SDK_KPACK_MAX_BYTES)
            return CDNN_STATUS_NOT_SUPPORTED;
    }
    l->toc_offset = align_up(end);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t hash_and_place(const sdk_kpack_spec_t *spec, layout_t *l)
{
    size_t n = (size_t)spec->kernel_count ? (size_t)spec->kernel_count : 1;
    code_key_t *keys = calloc(n, sizeof *keys);
    int32_t *first = calloc(n, sizeof *first);
    l->sha256 = calloc(n, sizeof *l->sha256);
    l->offset = calloc(n, sizeof *l->offset);
    cdnn_status_t st = keys && first && l->sha256 && l->offset ? CDNN_STATUS_SUCCESS
                                                               : CDNN_STATUS_ALLOC_FAILED;
    for (int32_t i = 0; !st && i < spec->kernel_count; i++)
        if (sdk_sha256(spec->kernels[i].code, spec->kernels[i].code_size, l->sha256[i]) != 0)
            st = CDNN_STATUS_ALLOC_FAILED;
    if (!st) {
        find_shared(spec, l, keys, first);
        st = place_code(spec, l, first);
    }
    free(keys);
    free(first);
    return st;
}

/* ---- the TOC (children before the tables that hold them, as FlatBuffers
 * builders go; docs/FORMATS.md section 9 gives the order) ------------------ */

static fb_ref_t build_metadata(fb_builder_t *b, const sdk_kpack_spec_kernel_t *k)
{
    fb_ref_t refs[SDK_KPACK_MAX_ENTRIES];
    for (int32_t i = 0; i < k->metadata_count; i++) {
        fb_ref_t key = fb_string(b, k->metadata[i].key);
        fb_ref_t value = fb_string(b, k->metadata[i].value);
        fb_table_start(b, KV_FIELDS);
        fb_add_ref(b, KV_KEY, key);
        fb_add_ref(b, KV_VALUE, value);
        refs[i] = fb_table_end(b);
    }
    return k->metadata_count ? fb_vector_refs(b, refs, (size_t)k->metadata_count) : 0;
}

static fb_ref_t build_kernel(fb_builder_t *b, const sdk_kpack_spec_kernel_t *k,
                             uint64_t offset, const uint8_t sha256[SDK_SHA256_BYTES])
{
    fb_ref_t metadata = build_metadata(b, k);
    fb_ref_t id = fb_string(b, k->id);
    fb_ref_t symbol = fb_string(b, k->symbol);
    fb_ref_t target = fb_string(b, k->target);
    fb_ref_t signature = fb_string(b, k->signature);
    fb_ref_t digest = fb_bytes(b, sha256, SDK_SHA256_BYTES);
    fb_table_start(b, KERNEL_FIELDS);
    fb_add_ref(b, KERNEL_ID, id);
    fb_add_ref(b, KERNEL_SYMBOL, symbol);
    fb_add_ref(b, KERNEL_TARGET, target);
    fb_add_u64(b, KERNEL_OFFSET, offset, 0);
    fb_add_u64(b, KERNEL_SIZE, k->code_size, 0);
    fb_add_ref(b, KERNEL_SHA256, digest);
    fb_add_ref(b, KERNEL_SIGNATURE, signature);
    fb_add_ref(b, KERNEL_METADATA, metadata);
    return fb_table_end(b);
}

static fb_ref_t build_knobs(fb_builder_t *b, const sdk_kpack_spec_engine_t *e)
{
    fb_ref_t refs[SDK_KPACK_MAX_ENTRIES];
    for (int32_t i = 0; i < e->knob_count; i++) {
        const cdnn_knob_info_t *k = &e->knobs[i];
        fb_ref_t name = fb_string(b, k->name);
        fb_ref_t description = fb_string(b, k->description);
        fb_table_start(b, KNOB_FIELDS);
        fb_add_ref(b, KNOB_NAME, name);
        fb_add_ref(b, KNOB_DESCRIPTION, description);
        fb_add_i64(b, KNOB_MIN, k->min_value, 0);
        fb_add_i64(b, KNOB_MAX, k->max_value, 0);
        fb_add_i64(b, KNOB_DEFAULT, k->default_value, 0);
        refs[i] = fb_table_end(b);
    }
    return e->knob_count ? fb_vector_refs(b, refs, (size_t)e->knob_count) : 0;
}

static fb_ref_t build_candidates(fb_builder_t *b, const sdk_kpack_spec_engine_t *e)
{
    fb_ref_t refs[SDK_KPACK_MAX_ENTRIES];
    for (int32_t i = 0; i < e->candidate_count; i++)
        refs[i] = fb_string(b, e->candidates[i]);
    return e->candidate_count ? fb_vector_refs(b, refs, (size_t)e->candidate_count) : 0;
}

static fb_ref_t build_engine(fb_builder_t *b, const sdk_kpack_spec_engine_t *e)
{
    fb_ref_t knobs = build_knobs(b, e);
    fb_ref_t candidates = build_candidates(b, e);
    fb_ref_t name = fb_string(b, e->name);
    fb_ref_t match = fb_string(b, e->match);
    fb_ref_t constraints = fb_string(b, e->constraints_json);
    fb_ref_t handler = fb_string(b, e->handler_name);
    fb_table_start(b, ENGINE_FIELDS);
    fb_add_ref(b, ENGINE_NAME, name);
    fb_add_i32(b, ENGINE_RANK, e->rank, 0);
    fb_add_ref(b, ENGINE_MATCH, match);
    fb_add_ref(b, ENGINE_CONSTRAINTS, constraints);
    fb_add_ref(b, ENGINE_HANDLER_NAME, handler);
    /* A uint in the schema; the builder's int32 writes the same 4 bytes. */
    fb_add_i32(b, ENGINE_HANDLER_VERSION, (int32_t)e->handler_version, 0);
    fb_add_ref(b, ENGINE_KNOBS, knobs);
    fb_add_ref(b, ENGINE_CANDIDATES, candidates);
    return fb_table_end(b);
}

/* The kernels' vector, then the engines', into refs (room for either). */
static void build_lists(fb_builder_t *b, const sdk_kpack_spec_t *spec, const layout_t *l,
                        fb_ref_t *refs, fb_ref_t *kernels, fb_ref_t *engines)
{
    for (int32_t i = 0; i < spec->kernel_count; i++)
        refs[i] = build_kernel(b, &spec->kernels[i], l->offset[i], l->sha256[i]);
    *kernels = fb_vector_refs(b, refs, (size_t)spec->kernel_count);
    for (int32_t i = 0; i < spec->engine_count; i++)
        refs[i] = build_engine(b, &spec->engines[i]);
    *engines = fb_vector_refs(b, refs, (size_t)spec->engine_count);
}

/* The TOC's bytes, in b (valid until it is freed); -1 when out of memory. */
static int build_toc(fb_builder_t *b, const sdk_kpack_spec_t *spec, const layout_t *l,
                     const uint8_t **toc, size_t *toc_size)
{
    int32_t most = spec->kernel_count > spec->engine_count ? spec->kernel_count
                                                           : spec->engine_count;
    fb_ref_t *refs = calloc(most ? (size_t)most : 1, sizeof *refs);
    if (!refs)
        return -1;
    fb_ref_t kernels = 0, engines = 0;
    build_lists(b, spec, l, refs, &kernels, &engines);
    free(refs);
    fb_ref_t name = fb_string(b, spec->name);
    fb_ref_t version = fb_string(b, spec->version);
    fb_ref_t family = fb_string(b, spec->target_family);
    fb_table_start(b, TOC_FIELDS);
    fb_add_u16(b, TOC_FORMAT_MAJOR, SDK_KPACK_FORMAT_MAJOR, 0);
    fb_add_u16(b, TOC_FORMAT_MINOR, SDK_KPACK_FORMAT_MINOR, 0);
    fb_add_ref(b, TOC_PACK_NAME, name);
    fb_add_ref(b, TOC_PACK_VERSION, version);
    fb_add_ref(b, TOC_TARGET_FAMILY, family);
    fb_add_ref(b, TOC_KERNELS, kernels);
    fb_add_ref(b, TOC_ENGINES, engines);
    return fb_finish(b, fb_table_end(b), SDK_KPACK_TOC_IDENTIFIER, toc, toc_size);
}

/* ---- the file ------------------------------------------------------------------ */

static void store_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Header, code objects and TOC in one zeroed buffer, then the digest. */
static cdnn_status_t assemble(const sdk_kpack_spec_t *spec, const layout_t *l,
                              const uint8_t *toc, size_t toc_size, uint8_t **bytes,
                              size_t *size)
{
    uint64_t total = l->toc_offset + toc_size;
    if (total > SDK_KPACK_MAX_BYTES)
        return CDNN_STATUS_NOT_SUPPORTED;
    uint8_t *out = calloc((size_t)total, 1);
    if (!out)
        return CDNN_STATUS_ALLOC_FAILED;
    memcpy(out + HDR_MAGIC, SDK_KPACK_MAGIC, 4);
    store_le(out + HDR_MAJOR, SDK_KPACK_FORMAT_MAJOR, 2);
    store_le(out + HDR_MINOR, SDK_KPACK_FORMAT_MINOR, 2);
    store_le(out + HDR_SIZE, SDK_KPACK_HEADER_BYTES, 4);
    store_le(out + HDR_TOC_OFFSET, l->toc_offset, 8);
    store_le(out + HDR_TOC_SIZE, toc_size, 8);
    /* Shared code objects are copied once per kernel, to the same place. */
    for (int32_t i = 0; i < spec->kernel_count; i++)
        if (spec->kernels[i].code_size)
            memcpy(out + l->offset[i], spec->kernels[i].code, spec->kernels[i].code_size);
    memcpy(out + l->toc_offset, toc, toc_size);
    if (kpack_header_digest(out, out + l->toc_offset, toc_size, out + HDR_SHA256) != 0) {
        free(out);
        return CDNN_STATUS_ALLOC_FAILED;
    }
    *bytes = out;
    *size = (size_t)total;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t build_file(const sdk_kpack_spec_t *spec, const layout_t *l,
                                uint8_t **bytes, size_t *size)
{
    fb_builder_t b;
    fb_builder_init(&b);
    const uint8_t *toc = NULL;
    size_t toc_size = 0;
    cdnn_status_t st = build_toc(&b, spec, l, &toc, &toc_size) != 0
                           ? CDNN_STATUS_ALLOC_FAILED
                           : assemble(spec, l, toc, toc_size, bytes, size);
    fb_builder_free(&b);
    return st;
}

/* The reader's checks on what was written: the spec's content (names,
 * duplicates, candidates, knob ranges) is judged there, once. */
static cdnn_status_t self_check(const sdk_kpack_spec_t *spec, const uint8_t *bytes,
                                size_t size, char *why, size_t why_cap)
{
    sdk_kpack_t *pack = calloc(1, sizeof *pack);
    if (!pack)
        return CDNN_STATUS_ALLOC_FAILED;
    pack->bytes = bytes; /* borrowed: not owned, so not freed with it */
    pack->size = size;
    char reason[1024];
    cdnn_status_t st = kpack_parse(pack, reason, sizeof reason);
    kpack_free(pack);
    if (st == CDNN_STATUS_ALLOC_FAILED || st == CDNN_STATUS_SUCCESS)
        return st;
    return kpack_fail(CDNN_STATUS_BAD_PARAM, why, why_cap,
                      "cannot write kernel pack '%s': %s", spec_name(spec), reason);
}

cdnn_status_t sdk_kpack_write(const sdk_kpack_spec_t *spec, uint8_t **bytes, size_t *size,
                              char *why, size_t why_cap)
{
    if (!spec || !bytes || !size)
        return kpack_fail(CDNN_STATUS_BAD_PARAM, why, why_cap,
                          "sdk_kpack_write: no spec or no output pointers");
    *bytes = NULL;
    *size = 0;
    const char *shape = shape_error(spec);
    if (shape)
        return kpack_fail(CDNN_STATUS_BAD_PARAM, why, why_cap,
                          "cannot write kernel pack '%s': %s", spec_name(spec), shape);
    layout_t l = {0};
    uint8_t *out = NULL;
    size_t n = 0;
    cdnn_status_t st = hash_and_place(spec, &l);
    if (!st)
        st = build_file(spec, &l, &out, &n);
    free(l.sha256);
    free(l.offset);
    if (st == CDNN_STATUS_NOT_SUPPORTED)
        return kpack_fail(st, why, why_cap, "cannot write kernel pack '%s': it would be "
                          "larger than the %llu bytes a pack may be", spec_name(spec),
                          (unsigned long long)SDK_KPACK_MAX_BYTES);
    if (!st)
        st = self_check(spec, out, n, why, why_cap);
    if (st == CDNN_STATUS_ALLOC_FAILED)
        kpack_fail(st, why, why_cap, "cannot write kernel pack '%s': out of memory",
                   spec_name(spec));
    if (st) {
        free(out);
        return st;
    }
    *bytes = out;
    *size = n;
    return st;
}
