/*
 * fuzz_kpack -- the kernel pack reader (<cdnn_sdk/kpack.h>) on hostile
 * bytes.  The first byte chooses how the rest is used: even, as it is; odd,
 * re-sealed first (the header's SHA-256 recomputed over the header and the
 * TOC range it names), so that mutations get past the digest to the TOC
 * and every check behind it.  A pack that opens is walked whole: every
 * kernel (fields, metadata, lookups by id and by digest, its code, hashed),
 * every engine and candidate.
 *
 * Oracle: a pack that opens, and whose code objects all match their
 * SHA-256, is written again by the SDK's writer from what was read; that
 * must succeed (the writer refusing what the reader accepted is a finding)
 * and open to the same content.  The seed corpus (corpus/kpack) holds packs
 * `cdnn pack build` made from tests/kpack/descriptors, in both forms.
 */
#include <cdnn_sdk/kpack.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The header's digest made right for whatever header and TOC range the
 * bytes hold (a range outside them is left for the reader to refuse). */
static void reseal(uint8_t *b, size_t n)
{
    if (n < SDK_KPACK_HEADER_BYTES)
        return;
    uint64_t at = 0, len = 0; /* header bytes 16..23 and 24..31, little-endian */
    for (int i = 7; i >= 0; i--) {
        at = at << 8 | b[16 + i];
        len = len << 8 | b[24 + i];
    }
    if (at > n || len > n - at)
        return;
    sdk_sha256_t h;
    sdk_sha256_begin(&h);
    sdk_sha256_update(&h, b, 32);             /* header bytes 0..31 */
    sdk_sha256_update(&h, b + at, (size_t)len);
    sdk_sha256_end(&h, b + 32);               /* into header bytes 32..63 */
}

/* Every accessor on every kernel; 1 when all code objects match. */
static int walk_kernels(const sdk_kpack_t *pack)
{
    int intact = 1;
    for (int32_t i = 0; i < sdk_kpack_kernel_count(pack); i++) {
        const sdk_kpack_kernel_t *k = sdk_kpack_kernel(pack, i);
        if (sdk_kpack_find(pack, k->id) != k)
            fuzz_die("kernel '%s' is not found by its id", k->id);
        if (!sdk_kpack_find_sha256(pack, k->sha256))
            fuzz_die("kernel '%s' is not found by its digest", k->id);
        for (int32_t m = 0; m < k->metadata_count; m++)
            if (!sdk_kpack_metadata(k, k->metadata[m].key))
                fuzz_die("kernel '%s': metadata key '%s' not found", k->id,
                         k->metadata[m].key);
        const uint8_t *code = NULL;
        size_t size = 0;
        cdnn_status_t st = sdk_kpack_code(pack, k, &code, &size, NULL, 0);
        if (st == CDNN_STATUS_SUCCESS && (size != k->size || size == 0))
            fuzz_die("kernel '%s': code of %zu bytes, %llu recorded", k->id, size,
                     (unsigned long long)k->size);
        if (st != CDNN_STATUS_SUCCESS && st != CDNN_STATUS_CORRUPT_DATA)
            fuzz_die("kernel '%s': sdk_kpack_code returned %d", k->id, (int)st);
        intact &= st == CDNN_STATUS_SUCCESS;
    }
    return intact;
}

static void walk_engines(const sdk_kpack_t *pack)
{
    for (int32_t i = 0; i < sdk_kpack_engine_count(pack); i++) {
        const sdk_kpack_engine_t *e = sdk_kpack_engine(pack, i);
        if (sdk_kpack_find_engine(pack, e->name) != e || e->candidate_count < 1)
            fuzz_die("engine '%s' is not found by its name, or has no candidates", e->name);
        for (int32_t c = 0; c < e->candidate_count; c++)
            if (sdk_kpack_find(pack, e->candidates[c]->id) != e->candidates[c])
                fuzz_die("engine '%s': candidate %d is not a kernel of the pack", e->name, c);
        for (int32_t k = 0; k < e->knob_count; k++)
            if (e->knobs[k].min_value > e->knobs[k].default_value ||
                e->knobs[k].default_value > e->knobs[k].max_value)
                fuzz_die("engine '%s': knob '%s' out of its range", e->name, e->knobs[k].name);
    }
}

/* ---- the oracle: write what was read, open it, compare ------------------------ */

static void same_string(const char *a, const char *b, const char *what)
{
    if (strcmp(a, b) != 0)
        fuzz_die("rewritten pack: %s '%s' became '%s'", what, a, b);
}

static void same_kernel(const sdk_kpack_kernel_t *a, const sdk_kpack_kernel_t *b)
{
    same_string(a->id, b->id, "kernel id");
    same_string(a->symbol, b->symbol, "symbol");
    same_string(a->target, b->target, "target");
    same_string(a->signature, b->signature, "signature");
    if (a->size != b->size || memcmp(a->sha256, b->sha256, SDK_SHA256_BYTES) != 0 ||
        a->metadata_count != b->metadata_count)
        fuzz_die("rewritten pack: kernel '%s' changed size, digest or metadata", a->id);
    for (int32_t m = 0; m < a->metadata_count; m++) {
        same_string(a->metadata[m].key, b->metadata[m].key, "metadata key");
        same_string(a->metadata[m].value, b->metadata[m].value, "metadata value");
    }
}

static void same_engine(const sdk_kpack_engine_t *a, const sdk_kpack_engine_t *b)
{
    same_string(a->name, b->name, "engine");
    same_string(a->match, b->match, "match");
    same_string(a->constraints_json, b->constraints_json, "constraints");
    same_string(a->handler_name, b->handler_name, "handler");
    if (a->rank != b->rank || a->handler_version != b->handler_version ||
        a->knob_count != b->knob_count || a->candidate_count != b->candidate_count)
        fuzz_die("rewritten pack: engine '%s' changed", a->name);
    for (int32_t k = 0; k < a->knob_count; k++) {
        same_string(a->knobs[k].name, b->knobs[k].name, "knob");
        same_string(a->knobs[k].description, b->knobs[k].description, "description");
        if (a->knobs[k].min_value != b->knobs[k].min_value ||
            a->knobs[k].max_value != b->knobs[k].max_value ||
            a->knobs[k].default_value != b->knobs[k].default_value)
            fuzz_die("rewritten pack: knob '%s' changed", a->knobs[k].name);
    }
    for (int32_t c = 0; c < a->candidate_count; c++)
        same_string(a->candidates[c]->id, b->candidates[c]->id, "candidate");
}

static void same_pack(const sdk_kpack_t *a, const sdk_kpack_t *b)
{
    const sdk_kpack_info_t *x = sdk_kpack_info(a), *y = sdk_kpack_info(b);
    same_string(x->name, y->name, "pack name");
    same_string(x->version, y->version, "pack version");
    same_string(x->target_family, y->target_family, "target family");
    if (sdk_kpack_kernel_count(a) != sdk_kpack_kernel_count(b) ||
        sdk_kpack_engine_count(a) != sdk_kpack_engine_count(b))
        fuzz_die("rewritten pack: other counts");
    for (int32_t i = 0; i < sdk_kpack_kernel_count(a); i++)
        same_kernel(sdk_kpack_kernel(a, i), sdk_kpack_kernel(b, i));
    for (int32_t i = 0; i < sdk_kpack_engine_count(a); i++)
        same_engine(sdk_kpack_engine(a, i), sdk_kpack_engine(b, i));
}

/* The spec of an opened pack whose code objects all matched, in arrays
 * with room for it (ids: SDK_KPACK_MAX_ENTRIES per engine). */
static sdk_kpack_spec_t spec_of(const sdk_kpack_t *pack, sdk_kpack_spec_kernel_t *kernels,
                                sdk_kpack_spec_engine_t *engines, const char **ids)
{
    int32_t nk = sdk_kpack_kernel_count(pack), ne = sdk_kpack_engine_count(pack);
    for (int32_t i = 0; i < nk; i++) {
        const sdk_kpack_kernel_t *k = sdk_kpack_kernel(pack, i);
        const uint8_t *code = NULL;
        size_t size = 0;
        sdk_kpack_code(pack, k, &code, &size, NULL, 0);
        kernels[i] = (sdk_kpack_spec_kernel_t){k->id, k->symbol, k->target, k->signature,
                                               code, size, k->metadata_count, k->metadata};
    }
    for (int32_t i = 0; i < ne; i++) {
        const sdk_kpack_engine_t *e = sdk_kpack_engine(pack, i);
        const char **mine = ids + (size_t)i * SDK_KPACK_MAX_ENTRIES;
        for (int32_t c = 0; c < e->candidate_count; c++)
            mine[c] = e->candidates[c]->id;
        engines[i] = (sdk_kpack_spec_engine_t){e->name, e->rank, e->match,
                                               e->constraints_json, e->handler_name,
                                               e->handler_version, e->knob_count, e->knobs,
                                               e->candidate_count, mine};
    }
    const sdk_kpack_info_t *info = sdk_kpack_info(pack);
    return (sdk_kpack_spec_t){info->name, info->version, info->target_family, nk, kernels,
                              ne, engines};
}

/* The oracle: what was read, written again, opens to the same content. */
static void rewrite(const sdk_kpack_t *pack)
{
    size_t nk = (size_t)sdk_kpack_kernel_count(pack), ne = (size_t)sdk_kpack_engine_count(pack);
    sdk_kpack_spec_kernel_t *kernels = calloc(nk + 1, sizeof *kernels);
    sdk_kpack_spec_engine_t *engines = calloc(ne + 1, sizeof *engines);
    const char **ids = calloc(ne * SDK_KPACK_MAX_ENTRIES + 1, sizeof *ids);
    if (!kernels || !engines || !ids)
        fuzz_die("out of memory in the harness");
    sdk_kpack_spec_t spec = spec_of(pack, kernels, engines, ids);
    uint8_t *bytes = NULL;
    size_t n = 0;
    char why[1024];
    sdk_kpack_t *again = NULL;
    cdnn_status_t st = sdk_kpack_write(&spec, &bytes, &n, why, sizeof why);
    if (st == CDNN_STATUS_SUCCESS)
        st = sdk_kpack_open_bytes(bytes, n, "rewritten", &again, why, sizeof why);
    if (st != CDNN_STATUS_SUCCESS && st != CDNN_STATUS_ALLOC_FAILED)
        fuzz_die("a pack the reader accepted does not write and open again: %s", why);
    if (again)
        same_pack(pack, again);
    sdk_kpack_close(again);
    free(bytes);
    free(ids);
    free(engines);
    free(kernels);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t *bytes = malloc(size);
    if (!bytes)
        return 0;
    memcpy(bytes, data + 1, size - 1);
    if (data[0] & 1)
        reseal(bytes, size - 1);
    sdk_kpack_t *pack = (sdk_kpack_t *)&pack;
    char why[1024];
    cdnn_status_t st = sdk_kpack_open_bytes(bytes, size - 1, "fuzz", &pack, why, sizeof why);
    if (st != CDNN_STATUS_SUCCESS) {
        fuzz_expect_null(pack, "sdk_kpack_open_bytes");
        if (!strstr(why, "kernel pack 'fuzz'") && st != CDNN_STATUS_ALLOC_FAILED)
            fuzz_die("a refusal that does not name the pack: %s", why);
    } else {
        walk_engines(pack);
        if (walk_kernels(pack))
            rewrite(pack);
        sdk_kpack_close(pack);
    }
    free(bytes);
    return 0;
}
