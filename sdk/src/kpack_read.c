/*
 * kpack_read.c -- the kernel pack reader's checks, in the order kpack.h
 * lists them: the header, its digest, the TOC, then every kernel and
 * engine against the rest of the pack.
 *
 * Nothing is used before it is checked: the header's TOC range is bounded
 * before the digest reads the TOC, the version is read only once the
 * digest holds, TOC fields only after fb_verify, and a string only after
 * it is known to be sane (so that messages may quote it).
 */
#include "kpack_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the TOC's schema (schema/kernel_pack.fbs) ------------------------------ */

static const fb_field_desc_t kv_fields[KV_FIELDS] = {
    [KV_KEY] = {FB_STRING, .name = "key"},
    [KV_VALUE] = {FB_STRING, .name = "value"},
};
static const fb_table_desc_t kv_desc = {"KeyValue", KV_FIELDS, kv_fields};

static const fb_field_desc_t kernel_fields[KERNEL_FIELDS] = {
    [KERNEL_ID] = {FB_STRING, .name = "id"},
    [KERNEL_SYMBOL] = {FB_STRING, .name = "symbol"},
    [KERNEL_TARGET] = {FB_STRING, .name = "target"},
    [KERNEL_OFFSET] = {FB_SCALAR, 8, .name = "offset"},
    [KERNEL_SIZE] = {FB_SCALAR, 8, .name = "size"},
    [KERNEL_SHA256] = {FB_VECTOR, 1, 1, .name = "sha256"},
    [KERNEL_SIGNATURE] = {FB_STRING, .name = "signature"},
    [KERNEL_METADATA] = {FB_VECTOR_TABLE, .table = &kv_desc, .name = "metadata"},
};
static const fb_table_desc_t kernel_desc = {"Kernel", KERNEL_FIELDS, kernel_fields};

static const fb_field_desc_t knob_fields[KNOB_FIELDS] = {
    [KNOB_NAME] = {FB_STRING, .name = "name"},
    [KNOB_DESCRIPTION] = {FB_STRING, .name = "description"},
    [KNOB_MIN] = {FB_SCALAR, 8, .name = "min_value"},
    [KNOB_MAX] = {FB_SCALAR, 8, .name = "max_value"},
    [KNOB_DEFAULT] = {FB_SCALAR, 8, .name = "default_value"},
};
static const fb_table_desc_t knob_desc = {"Knob", KNOB_FIELDS, knob_fields};

static const fb_field_desc_t engine_fields[ENGINE_FIELDS] = {
    [ENGINE_NAME] = {FB_STRING, .name = "name"},
    [ENGINE_RANK] = {FB_SCALAR, 4, .name = "rank"},
    [ENGINE_MATCH] = {FB_STRING, .name = "match"},
    [ENGINE_CONSTRAINTS] = {FB_STRING, .name = "constraints_json"},
    [ENGINE_HANDLER_NAME] = {FB_STRING, .name = "handler_name"},
    [ENGINE_HANDLER_VERSION] = {FB_SCALAR, 4, .name = "handler_version"},
    [ENGINE_KNOBS] = {FB_VECTOR_TABLE, .table = &knob_desc, .name = "knobs"},
    [ENGINE_CANDIDATES] = {FB_VECTOR_STRING, .name = "candidates"},
};
static const fb_table_desc_t engine_desc = {"Engine", ENGINE_FIELDS, engine_fields};

static const fb_field_desc_t toc_fields[TOC_FIELDS] = {
    [TOC_FORMAT_MAJOR] = {FB_SCALAR, 2, .name = "format_major"},
    [TOC_FORMAT_MINOR] = {FB_SCALAR, 2, .name = "format_minor"},
    [TOC_PACK_NAME] = {FB_STRING, .name = "pack_name"},
    [TOC_PACK_VERSION] = {FB_STRING, .name = "pack_version"},
    [TOC_TARGET_FAMILY] = {FB_STRING, .name = "target_family"},
    [TOC_KERNELS] = {FB_VECTOR_TABLE, .table = &kernel_desc, .name = "kernels"},
    [TOC_ENGINES] = {FB_VECTOR_TABLE, .table = &engine_desc, .name = "engines"},
};
static const fb_table_desc_t toc_desc = {"KernelPackToc", TOC_FIELDS, toc_fields};

/* ---- refusing ------------------------------------------------------------------ */

typedef struct parse {
    sdk_kpack_t *pack;
    char *reason;
    size_t cap;
    fb_table_t toc;
} parse_t;

/* Labels name what is at fault: "kernel 'x' (kernels[2])"; ids are at most
 * SDK_KPACK_MAX_NAME bytes. */
#define LABEL_CAP (SDK_KPACK_MAX_NAME + 64)

/* Most refusals are damage; the reason goes where the parse was told. */
#define DAMAGED(p, ...) \
    kpack_fail(CDNN_STATUS_CORRUPT_DATA, (p)->reason, (p)->cap, __VA_ARGS__)

/* ---- strings -------------------------------------------------------------- */

/* A name: 1..255 bytes of printable ASCII, no space.  (So no NUL inside a
 * string whose length says otherwise, and nothing a terminal or a log
 * would misread.) */
static int is_name(const char *s, uint32_t len)
{
    if (len < 1 || len > SDK_KPACK_MAX_NAME)
        return 0;
    for (uint32_t i = 0; i < len; i++)
        if (s[i] < 0x21 || s[i] > 0x7e)
            return 0;
    return 1;
}

/* Text: printable ASCII with spaces, at most SDK_KPACK_MAX_TEXT bytes. */
static int is_text(const char *s, uint32_t len)
{
    if (len > SDK_KPACK_MAX_TEXT)
        return 0;
    for (uint32_t i = 0; i < len; i++)
        if (s[i] < 0x20 || s[i] > 0x7e)
            return 0;
    return 1;
}

int sdk_kpack_is_name(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n <= SDK_KPACK_MAX_NAME && is_name(s, (uint32_t)n);
}

int sdk_kpack_is_text(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return s && n <= SDK_KPACK_MAX_TEXT && is_text(s, (uint32_t)n);
}

static cdnn_status_t checked_string(parse_t *p, const char *s, uint32_t len, int name,
                                    const char *label, const char *what)
{
    if (!s)
        return DAMAGED(p, "%s: its %s is missing", label, what);
    if (name && !is_name(s, len))
        return DAMAGED(p, "%s: its %s is not a name (1 to %d printable ASCII "
                       "characters, no spaces)", label, what, SDK_KPACK_MAX_NAME);
    if (!name && !is_text(s, len))
        return DAMAGED(p, "%s: its %s is not text (at most %d printable ASCII "
                       "characters)", label, what, SDK_KPACK_MAX_TEXT);
    return CDNN_STATUS_SUCCESS;
}

/* A string field of t that must be present and a name (or text). */
static cdnn_status_t get_string(parse_t *p, const fb_table_t *t, int field, int name,
                                const char *label, const char *what, const char **out)
{
    uint32_t len = 0;
    *out = fb_get_string(t, field, &len);
    return checked_string(p, *out, len, name, label, what);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first name that occurs twice among names[0, n), sorting them; or
 * NULL. */
static const char *duplicate(const char **names, size_t n)
{
    qsort(names, n, sizeof *names, compare_strings);
    for (size_t i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            return names[i];
    return NULL;
}

/* ---- the header ---------------------------------------------------------- */

/* Steps 1-3 of kpack.h: what locates the digest's input, then the digest. */
static cdnn_status_t check_seal(parse_t *p)
{
    const uint8_t *b = p->pack->bytes;
    size_t n = p->pack->size;
    if (n < SDK_KPACK_HEADER_BYTES)
        return DAMAGED(p, "it is %zu bytes long, shorter than a kernel pack's "
                       "%d-byte header (truncated?)", n, SDK_KPACK_HEADER_BYTES);
    if (memcmp(b + HDR_MAGIC, SDK_KPACK_MAGIC, 4) != 0)
        return DAMAGED(p, "it does not start with \"%s\", so it is not a kernel "
                       "pack", SDK_KPACK_MAGIC);
    uint64_t offset = fb_read_u64(b + HDR_TOC_OFFSET), size = fb_read_u64(b + HDR_TOC_SIZE);
    if (offset < SDK_KPACK_HEADER_BYTES || offset > n || size == 0 || size > n - offset)
        return DAMAGED(p, "its header places the table of contents (%llu bytes at "
                       "offset %llu) outside the file's %zu bytes after the header "
                       "(truncated?)", (unsigned long long)size,
                       (unsigned long long)offset, n);
    uint8_t digest[SDK_SHA256_BYTES];
    if (kpack_header_digest(b, b + offset, (size_t)size, digest) != 0)
        return kpack_fail(CDNN_STATUS_ALLOC_FAILED, p->reason, p->cap,
                          "out of memory computing a SHA-256");
    if (memcmp(digest, b + HDR_SHA256, SDK_SHA256_BYTES) != 0)
        return DAMAGED(p, "the SHA-256 in its header does not match its header and "
                       "table of contents (the bytes were altered or truncated)");
    p->pack->info.toc_offset = offset;
    p->pack->info.toc_size = size;
    memcpy(p->pack->info.sha256, b + HDR_SHA256, SDK_SHA256_BYTES);
    return CDNN_STATUS_SUCCESS;
}

/* Steps 4-5: the header's fields, now proven intact. */
static cdnn_status_t check_header_fields(parse_t *p)
{
    const uint8_t *b = p->pack->bytes;
    sdk_kpack_info_t *info = &p->pack->info;
    info->format_major = fb_read_u16(b + HDR_MAJOR);
    info->format_minor = fb_read_u16(b + HDR_MINOR);
    info->file_size = p->pack->size;
    if (info->format_major != SDK_KPACK_FORMAT_MAJOR)
        return kpack_fail(CDNN_STATUS_NOT_SUPPORTED, p->reason, p->cap,
                      "it is in kernel pack format %u.%u, and this cdnn reads kernel "
                      "pack format %d.x; use a cdnn that reads it, or a pack made "
                      "for this one", info->format_major, info->format_minor,
                      SDK_KPACK_FORMAT_MAJOR);
    uint32_t header_size = fb_read_u32(b + HDR_SIZE), flags = fb_read_u32(b + HDR_FLAGS);
    if (header_size != SDK_KPACK_HEADER_BYTES)
        return DAMAGED(p, "its header says it is %u bytes; format %d's is %d",
                       header_size, SDK_KPACK_FORMAT_MAJOR, SDK_KPACK_HEADER_BYTES);
    if (flags != 0)
        return kpack_fail(CDNN_STATUS_NOT_SUPPORTED, p->reason, p->cap,
                      "its header sets flags 0x%08x, and this cdnn knows none; use a "
                      "newer cdnn", flags);
    if (info->toc_offset % SDK_KPACK_ALIGN)
        return DAMAGED(p, "its table of contents starts at offset %llu, which is not "
                       "a multiple of %d", (unsigned long long)info->toc_offset,
                       SDK_KPACK_ALIGN);
    if (info->toc_offset + info->toc_size != p->pack->size)
        return DAMAGED(p, "%llu bytes follow its table of contents, where the file "
                       "should end", (unsigned long long)(p->pack->size - info->toc_offset -
                                                          info->toc_size));
    return CDNN_STATUS_SUCCESS;
}

/* ---- the TOC -------------------------------------------------------------- */

/* Steps 6-7. */
static cdnn_status_t check_toc(parse_t *p)
{
    sdk_kpack_info_t *info = &p->pack->info;
    const uint8_t *toc = p->pack->bytes + info->toc_offset;
    char why[512];
    if (fb_verify(toc, (size_t)info->toc_size, SDK_KPACK_TOC_IDENTIFIER, &toc_desc, why,
                  sizeof why) != 0)
        return DAMAGED(p, "its table of contents is malformed: %s", why);
    p->toc = fb_root(toc, (size_t)info->toc_size);
    uint16_t major = fb_get_u16(&p->toc, TOC_FORMAT_MAJOR, 0);
    uint16_t minor = fb_get_u16(&p->toc, TOC_FORMAT_MINOR, 0);
    if (major != info->format_major || minor != info->format_minor)
        return DAMAGED(p, "its table of contents says format %u.%u and its header "
                       "%u.%u", major, minor, info->format_major, info->format_minor);
    cdnn_status_t st = get_string(p, &p->toc, TOC_PACK_NAME, 1, "the pack", "name",
                                  &info->name);
    if (!st)
        st = get_string(p, &p->toc, TOC_PACK_VERSION, 1, "the pack", "version",
                        &info->version);
    if (!st)
        st = get_string(p, &p->toc, TOC_TARGET_FAMILY, 1, "the pack", "target family",
                        &info->target_family);
    return st;
}

static cdnn_status_t check_counts(parse_t *p, uint32_t kernels, uint32_t engines)
{
    if (kernels > SDK_KPACK_MAX_KERNELS)
        return DAMAGED(p, "it lists %u kernels; a pack holds at most %d", kernels,
                       SDK_KPACK_MAX_KERNELS);
    if (engines > SDK_KPACK_MAX_ENGINES)
        return DAMAGED(p, "it lists %u engines; a pack holds at most %d", engines,
                       SDK_KPACK_MAX_ENGINES);
    p->pack->kernel_count = (int32_t)kernels;
    p->pack->engine_count = (int32_t)engines;
    return CDNN_STATUS_SUCCESS;
}

/* ---- allocation ---------------------------------------------------------- */

/* calloc for n elements, n = 0 included (never NULL on success). */
static void *alloc_array(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

/* The sum, over the tables of vector field `list` of the TOC, of the length
 * of their vector field `field`.  Bounded by the TOC's size: every element
 * is at least a 4-byte offset. */
static size_t sum_lengths(const fb_table_t *toc, int list, int32_t count, int field)
{
    size_t total = 0;
    for (int32_t i = 0; i < count; i++) {
        fb_table_t t = fb_vector_table(toc, list, (uint32_t)i);
        uint32_t n = 0;
        fb_get_vector(&t, field, &n);
        total += n;
    }
    return total;
}

static cdnn_status_t allocate(parse_t *p)
{
    sdk_kpack_t *k = p->pack;
    size_t kernels = (size_t)k->kernel_count, engines = (size_t)k->engine_count;
    k->kernels = alloc_array(kernels, sizeof *k->kernels);
    k->by_id = alloc_array(kernels, sizeof *k->by_id);
    k->code_checked = alloc_array(kernels, sizeof *k->code_checked);
    k->engines = alloc_array(engines, sizeof *k->engines);
    k->by_name = alloc_array(engines, sizeof *k->by_name);
    k->metadata = alloc_array(sum_lengths(&p->toc, TOC_KERNELS, k->kernel_count,
                                          KERNEL_METADATA), sizeof *k->metadata);
    k->knobs = alloc_array(sum_lengths(&p->toc, TOC_ENGINES, k->engine_count, ENGINE_KNOBS),
                           sizeof *k->knobs);
    k->candidates = alloc_array(sum_lengths(&p->toc, TOC_ENGINES, k->engine_count,
                                            ENGINE_CANDIDATES), sizeof *k->candidates);
    if (!k->kernels || !k->by_id || !k->code_checked || !k->engines || !k->by_name ||
        !k->metadata || !k->knobs || !k->candidates)
        return kpack_fail(CDNN_STATUS_ALLOC_FAILED, p->reason, p->cap,
                          "out of memory reading its table of contents");
    return CDNN_STATUS_SUCCESS;
}

/* ---- kernels ------------------------------------------------------------------ */

static cdnn_status_t check_count(parse_t *p, uint32_t n, uint32_t max, const char *label,
                                 const char *what)
{
    if (n > max)
        return DAMAGED(p, "%s: it has %u %s; at most %u are allowed", label, n, what, max);
    return CDNN_STATUS_SUCCESS;
}

/* The kernel's metadata, into kv (room for all of them), keys unique. */
static cdnn_status_t parse_metadata(parse_t *p, const fb_table_t *t, const char *label,
                                    sdk_kpack_kernel_t *k, sdk_kpack_kv_t *kv)
{
    uint32_t n = 0;
    fb_get_vector(t, KERNEL_METADATA, &n);
    cdnn_status_t st = check_count(p, n, SDK_KPACK_MAX_ENTRIES, label, "metadata entries");
    const char *keys[SDK_KPACK_MAX_ENTRIES];
    for (uint32_t i = 0; !st && i < n; i++) {
        fb_table_t e = fb_vector_table(t, KERNEL_METADATA, i);
        char what[32];
        snprintf(what, sizeof what, "metadata[%u] key", i);
        st = get_string(p, &e, KV_KEY, 1, label, what, &kv[i].key);
        snprintf(what, sizeof what, "metadata[%u] value", i);
        if (!st)
            st = get_string(p, &e, KV_VALUE, 0, label, what, &kv[i].value);
        keys[i] = kv[i].key;
    }
    const char *again = st ? NULL : duplicate(keys, n);
    if (again)
        return DAMAGED(p, "%s: its metadata key '%s' occurs twice", label, again);
    k->metadata_count = (int32_t)n;
    k->metadata = kv;
    return st;
}

static cdnn_status_t parse_code_range(parse_t *p, const fb_table_t *t, const char *label,
                                      sdk_kpack_kernel_t *k)
{
    uint32_t n = 0;
    const uint8_t *sha = fb_get_vector(t, KERNEL_SHA256, &n);
    if (!sha || n != SDK_SHA256_BYTES)
        return DAMAGED(p, "%s: its sha256 is %u bytes, not %d", label, sha ? n : 0,
                       SDK_SHA256_BYTES);
    memcpy(k->sha256, sha, SDK_SHA256_BYTES);
    k->offset = fb_get_u64(t, KERNEL_OFFSET, 0);
    k->size = fb_get_u64(t, KERNEL_SIZE, 0);
    uint64_t toc = p->pack->info.toc_offset;
    if (k->size == 0)
        return DAMAGED(p, "%s: its code object is empty", label);
    if (k->offset % SDK_KPACK_ALIGN)
        return DAMAGED(p, "%s: its code object's offset %llu is not a multiple of %d",
                       label, (unsigned long long)k->offset, SDK_KPACK_ALIGN);
    if (k->offset < SDK_KPACK_HEADER_BYTES || k->offset > toc || k->size > toc - k->offset)
        return DAMAGED(p, "%s: its code object (%llu bytes at offset %llu) does not lie "
                       "between the header and the table of contents (at %llu)", label,
                       (unsigned long long)k->size, (unsigned long long)k->offset,
                       (unsigned long long)toc);
    return CDNN_STATUS_SUCCESS;
}

/* Step 8, kernel number i. */
static cdnn_status_t parse_kernel(parse_t *p, int32_t i, sdk_kpack_kv_t *kv)
{
    sdk_kpack_kernel_t *k = &p->pack->kernels[i];
    fb_table_t t = fb_vector_table(&p->toc, TOC_KERNELS, (uint32_t)i);
    char label[LABEL_CAP];
    snprintf(label, sizeof label, "kernels[%d]", i);
    k->index = i;
    cdnn_status_t st = get_string(p, &t, KERNEL_ID, 1, label, "id", &k->id);
    if (st)
        return st;
    snprintf(label, sizeof label, "kernel '%s' (kernels[%d])", k->id, i);
    st = get_string(p, &t, KERNEL_SYMBOL, 1, label, "symbol", &k->symbol);
    if (!st)
        st = get_string(p, &t, KERNEL_TARGET, 1, label, "target", &k->target);
    if (!st)
        st = get_string(p, &t, KERNEL_SIGNATURE, 1, label, "signature", &k->signature);
    if (!st)
        st = parse_metadata(p, &t, label, k, kv);
    return st ? st : parse_code_range(p, &t, label, k);
}

static int compare_ids(const void *a, const void *b)
{
    return strcmp((*(const sdk_kpack_kernel_t *const *)a)->id,
                  (*(const sdk_kpack_kernel_t *const *)b)->id);
}

/* Steps 8-9: every kernel, then their ids unique (sorted for lookups). */
static cdnn_status_t parse_kernels(parse_t *p)
{
    sdk_kpack_t *pack = p->pack;
    sdk_kpack_kv_t *kv = pack->metadata;
    for (int32_t i = 0; i < pack->kernel_count; i++) {
        cdnn_status_t st = parse_kernel(p, i, kv);
        if (st)
            return st;
        kv += pack->kernels[i].metadata_count;
        pack->by_id[i] = &pack->kernels[i];
    }
    qsort(pack->by_id, (size_t)pack->kernel_count, sizeof *pack->by_id, compare_ids);
    for (int32_t i = 1; i < pack->kernel_count; i++)
        if (strcmp(pack->by_id[i - 1]->id, pack->by_id[i]->id) == 0)
            return DAMAGED(p, "kernel '%s' (kernels[%d]): kernels[%d] has the same id",
                           pack->by_id[i]->id, pack->by_id[i - 1]->index,
                           pack->by_id[i]->index);
    return CDNN_STATUS_SUCCESS;
}

/* ---- code object ranges --------------------------------------------------- */

static int compare_ranges(const void *a, const void *b)
{
    const sdk_kpack_kernel_t *x = *(const sdk_kpack_kernel_t *const *)a;
    const sdk_kpack_kernel_t *y = *(const sdk_kpack_kernel_t *const *)b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return x->index - y->index;
}

/* Bytes [from, to) of the file are all zero, or the first that is not. */
static cdnn_status_t check_zero(parse_t *p, uint64_t from, uint64_t to)
{
    for (uint64_t at = from; at < to; at++)
        if (p->pack->bytes[at])
            return DAMAGED(p, "byte %llu, outside every code object, is 0x%02x; padding "
                           "is always zero", (unsigned long long)at, p->pack->bytes[at]);
    return CDNN_STATUS_SUCCESS;
}

/* Two kernels whose code objects start at the same place must share all of
 * it; one that starts inside another's overlaps it. */
static cdnn_status_t check_pair(parse_t *p, const sdk_kpack_kernel_t *a,
                                const sdk_kpack_kernel_t *b)
{
    int same = a->offset == b->offset && a->size == b->size;
    if (same && memcmp(a->sha256, b->sha256, SDK_SHA256_BYTES) != 0)
        return DAMAGED(p, "kernels '%s' (kernels[%d]) and '%s' (kernels[%d]) share "
                       "one code object but record different SHA-256s", a->id,
                       a->index, b->id, b->index);
    if (!same && b->offset < a->offset + a->size)
        return DAMAGED(p, "the code objects of kernels '%s' (kernels[%d], bytes "
                       "[%llu, %llu)) and '%s' (kernels[%d], bytes [%llu, %llu)) "
                       "overlap", a->id, a->index, (unsigned long long)a->offset,
                       (unsigned long long)(a->offset + a->size), b->id, b->index,
                       (unsigned long long)b->offset,
                       (unsigned long long)(b->offset + b->size));
    return CDNN_STATUS_SUCCESS;
}

/* Step 10: code objects identical or disjoint, zero bytes between them.
 * (by_id is borrowed as scratch and sorted back by the caller.) */
static cdnn_status_t check_ranges(parse_t *p, const sdk_kpack_kernel_t **sorted)
{
    sdk_kpack_t *pack = p->pack;
    size_t n = (size_t)pack->kernel_count;
    for (size_t i = 0; i < n; i++)
        sorted[i] = &pack->kernels[i];
    qsort(sorted, n, sizeof *sorted, compare_ranges);
    uint64_t covered = SDK_KPACK_HEADER_BYTES; /* bytes before this are accounted for */
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (size_t i = 0; !st && i < n; i++) {
        if (i > 0)
            st = check_pair(p, sorted[i - 1], sorted[i]);
        if (!st && sorted[i]->offset >= covered)
            st = check_zero(p, covered, sorted[i]->offset);
        if (sorted[i]->offset + sorted[i]->size > covered)
            covered = sorted[i]->offset + sorted[i]->size;
    }
    return st ? st : check_zero(p, covered, pack->info.toc_offset);
}

/* ---- engines ------------------------------------------------------------------ */

/* bsearch keys: a name against a kernel's id or an engine's name. */
static int compare_id_key(const void *key, const void *kernel)
{
    return strcmp(key, (*(const sdk_kpack_kernel_t *const *)kernel)->id);
}

static int compare_name_key(const void *key, const void *engine)
{
    return strcmp(key, (*(const sdk_kpack_engine_t *const *)engine)->name);
}

static const sdk_kpack_kernel_t *lookup_kernel(const sdk_kpack_t *pack, const char *id)
{
    const sdk_kpack_kernel_t *const *found =
        bsearch(id, pack->by_id, (size_t)pack->kernel_count, sizeof *pack->by_id,
                compare_id_key);
    return found ? *found : NULL;
}

static cdnn_status_t parse_knob(parse_t *p, const fb_table_t *t, const char *label,
                                uint32_t i, cdnn_knob_info_t *knob)
{
    char what[48];
    snprintf(what, sizeof what, "knobs[%u] name", i);
    cdnn_status_t st = get_string(p, t, KNOB_NAME, 1, label, what, &knob->name);
    snprintf(what, sizeof what, "knobs[%u] description", i);
    if (!st)
        st = get_string(p, t, KNOB_DESCRIPTION, 0, label, what, &knob->description);
    if (st)
        return st;
    knob->min_value = fb_get_i64(t, KNOB_MIN, 0);
    knob->max_value = fb_get_i64(t, KNOB_MAX, 0);
    knob->default_value = fb_get_i64(t, KNOB_DEFAULT, 0);
    if (knob->min_value > knob->default_value || knob->default_value > knob->max_value)
        return DAMAGED(p, "%s: knob '%s' has default %lld outside its range [%lld, %lld]",
                       label, knob->name, (long long)knob->default_value,
                       (long long)knob->min_value, (long long)knob->max_value);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t parse_knobs(parse_t *p, const fb_table_t *t, const char *label,
                                 sdk_kpack_engine_t *e, cdnn_knob_info_t *knobs)
{
    uint32_t n = 0;
    fb_get_vector(t, ENGINE_KNOBS, &n);
    cdnn_status_t st = check_count(p, n, SDK_KPACK_MAX_ENTRIES, label, "knobs");
    const char *names[SDK_KPACK_MAX_ENTRIES];
    for (uint32_t i = 0; !st && i < n; i++) {
        fb_table_t k = fb_vector_table(t, ENGINE_KNOBS, i);
        st = parse_knob(p, &k, label, i, &knobs[i]);
        names[i] = knobs[i].name;
    }
    const char *again = st ? NULL : duplicate(names, n);
    if (again)
        return DAMAGED(p, "%s: its knob '%s' is declared twice", label, again);
    e->knob_count = (int32_t)n;
    e->knobs = knobs;
    return st;
}

static cdnn_status_t parse_candidates(parse_t *p, const fb_table_t *t, const char *label,
                                      sdk_kpack_engine_t *e,
                                      const sdk_kpack_kernel_t **candidates)
{
    uint32_t n = 0;
    fb_get_vector(t, ENGINE_CANDIDATES, &n);
    if (n == 0)
        return DAMAGED(p, "%s: it has no candidate kernels", label);
    cdnn_status_t st = check_count(p, n, SDK_KPACK_MAX_ENTRIES, label, "candidates");
    const char *ids[SDK_KPACK_MAX_ENTRIES];
    for (uint32_t i = 0; !st && i < n; i++) {
        uint32_t len = 0;
        char what[32];
        snprintf(what, sizeof what, "candidates[%u]", i);
        ids[i] = fb_vector_string(t, ENGINE_CANDIDATES, i, &len);
        st = checked_string(p, ids[i], len, 1, label, what);
        candidates[i] = st ? NULL : lookup_kernel(p->pack, ids[i]);
        if (!st && !candidates[i])
            st = DAMAGED(p, "%s: its candidate '%s' (candidates[%u]) is not a kernel "
                         "of this pack", label, ids[i], i);
    }
    const char *again = st ? NULL : duplicate(ids, n);
    if (again)
        return DAMAGED(p, "%s: its candidate '%s' is listed twice", label, again);
    e->candidate_count = (int32_t)n;
    e->candidates = candidates;
    return st;
}

/* Step 11, engine number i; knobs and candidates have room for its own. */
static cdnn_status_t parse_engine(parse_t *p, int32_t i, cdnn_knob_info_t *knobs,
                                  const sdk_kpack_kernel_t **candidates)
{
    sdk_kpack_engine_t *e = &p->pack->engines[i];
    fb_table_t t = fb_vector_table(&p->toc, TOC_ENGINES, (uint32_t)i);
    char label[LABEL_CAP];
    snprintf(label, sizeof label, "engines[%d]", i);
    e->index = i;
    cdnn_status_t st = get_string(p, &t, ENGINE_NAME, 1, label, "name", &e->name);
    if (st)
        return st;
    snprintf(label, sizeof label, "engine '%s' (engines[%d])", e->name, i);
    e->rank = fb_get_i32(&t, ENGINE_RANK, 0);
    /* handler_version is a uint in the schema; the builder and reader
     * speak int32, whose bytes are the same. */
    e->handler_version = (uint32_t)fb_get_i32(&t, ENGINE_HANDLER_VERSION, 0);
    st = get_string(p, &t, ENGINE_MATCH, 1, label, "match function", &e->match);
    if (!st)
        st = get_string(p, &t, ENGINE_CONSTRAINTS, 0, label, "constraints",
                        &e->constraints_json);
    if (!st)
        st = get_string(p, &t, ENGINE_HANDLER_NAME, 1, label, "handler name",
                        &e->handler_name);
    if (!st)
        st = parse_knobs(p, &t, label, e, knobs);
    return st ? st : parse_candidates(p, &t, label, e, candidates);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp((*(const sdk_kpack_engine_t *const *)a)->name,
                  (*(const sdk_kpack_engine_t *const *)b)->name);
}

static cdnn_status_t parse_engines(parse_t *p)
{
    sdk_kpack_t *pack = p->pack;
    cdnn_knob_info_t *knobs = pack->knobs;
    const sdk_kpack_kernel_t **candidates = pack->candidates;
    for (int32_t i = 0; i < pack->engine_count; i++) {
        cdnn_status_t st = parse_engine(p, i, knobs, candidates);
        if (st)
            return st;
        knobs += pack->engines[i].knob_count;
        candidates += pack->engines[i].candidate_count;
        pack->by_name[i] = &pack->engines[i];
    }
    qsort(pack->by_name, (size_t)pack->engine_count, sizeof *pack->by_name, compare_names);
    for (int32_t i = 1; i < pack->engine_count; i++)
        if (strcmp(pack->by_name[i - 1]->name, pack->by_name[i]->name) == 0)
            return DAMAGED(p, "engine '%s' (engines[%d]): engines[%d] has the same name",
                           pack->by_name[i]->name, pack->by_name[i - 1]->index,
                           pack->by_name[i]->index);
    return CDNN_STATUS_SUCCESS;
}

/* ---- the whole -------------------------------------------------------------- */

static cdnn_status_t parse_kernels_and_ranges(parse_t *p)
{
    cdnn_status_t st = parse_kernels(p);
    if (st)
        return st;
    /* The range check sorts its own order into by_id; sort it back by id. */
    st = check_ranges(p, p->pack->by_id);
    qsort(p->pack->by_id, (size_t)p->pack->kernel_count, sizeof *p->pack->by_id,
          compare_ids);
    return st;
}

cdnn_status_t kpack_parse(sdk_kpack_t *pack, char *reason, size_t reason_cap)
{
    parse_t p = {.pack = pack, .reason = reason, .cap = reason_cap};
    cdnn_status_t st = check_seal(&p);
    if (!st)
        st = check_header_fields(&p);
    if (!st)
        st = check_toc(&p);
    uint32_t kernels = 0, engines = 0;
    if (!st) {
        fb_get_vector(&p.toc, TOC_KERNELS, &kernels);
        fb_get_vector(&p.toc, TOC_ENGINES, &engines);
        st = check_counts(&p, kernels, engines);
    }
    if (!st)
        st = allocate(&p);
    if (!st)
        st = parse_kernels_and_ranges(&p);
    return st ? st : parse_engines(&p);
}

const sdk_kpack_kernel_t *sdk_kpack_find(const sdk_kpack_t *pack, const char *id)
{
    return pack && id ? lookup_kernel(pack, id) : NULL;
}

const sdk_kpack_engine_t *sdk_kpack_find_engine(const sdk_kpack_t *pack, const char *name)
{
    if (!pack || !name)
        return NULL;
    const sdk_kpack_engine_t *const *found =
        bsearch(name, pack->by_name, (size_t)pack->engine_count, sizeof *pack->by_name,
                compare_name_key);
    return found ? *found : NULL;
}
