/*
 * test_kpack.c -- kernel packs (<cdnn_sdk/kpack.h>): a pack written and
 * read back field by field; the writer's bytes deterministic; every check
 * of the reader met alone, with its status and message, on packs damaged
 * byte by byte or forged and re-sealed (forge.h); code objects hashed
 * before they are handed out; rule 4's re-read of the file on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "forge.h"

/* ---- the pack every test starts from ------------------------------------------ */

static uint8_t code_a[100], code_b[200];

static const sdk_kpack_kv_t meta_6x16[] = {{"mr", "6"}, {"nr", "16"}, {"note", "f32, packed B"}};
static const sdk_kpack_kv_t meta_8x8[] = {{"mr", "8"}};
static const cdnn_knob_info_t tile_knob[] = {
    {"kernels.matmul.tile", "candidate index: 0 = the first that applies", 0, 2, 1}};
static const char *const matmul_candidates[] = {"matmul_6x16", "matmul_8x8", "matmul_6x16_b"};
static const char *const small_candidates[] = {"matmul_8x8"};

/* Two kernels share code_a (one object, two entry points). */
static const sdk_kpack_spec_kernel_t spec_kernels[] = {
    {"matmul_6x16", "cdnn_matmul_6x16", "x86-64-v3", "host-matmul-v1", code_a, sizeof code_a,
     3, meta_6x16},
    {"matmul_8x8", "cdnn_matmul_8x8", "x86-64-v2", "host-matmul-v1", code_b, sizeof code_b, 1,
     meta_8x8},
    {"matmul_6x16_b", "cdnn_matmul_6x16_b", "x86-64-v3", "host-matmul-v1", code_a,
     sizeof code_a, 0, NULL},
};
static const sdk_kpack_spec_engine_t spec_engines[] = {
    {"kernels:matmul_host", 40, "matmul_epilogue", "{\"dtypes\":[\"f32\"]}", "host_matmul", 1,
     1, tile_knob, 3, matmul_candidates},
    {"kernels:matmul_small", -5, "matmul_plain", "{}", "host_matmul", 4000000000u, 0, NULL, 1,
     small_candidates},
};
static const sdk_kpack_spec_t spec = {"cdnn-test-host", "0.2.0", "host", 3, spec_kernels, 2,
                                      spec_engines};

/* Where the writer puts them: code_a at 64, code_b at the next multiple of
 * 64 after it, the TOC after that. */
enum { OFFSET_A = 64, OFFSET_B = 192, TOC_OFFSET = 448 };

static uint8_t *written;
static size_t written_size;

static int setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof code_a; i++)
        code_a[i] = (uint8_t)(7 * i + 1);
    for (size_t i = 0; i < sizeof code_b; i++)
        code_b[i] = (uint8_t)(13 * i + 5) | 1;
    char why[512];
    return sdk_kpack_write(&spec, &written, &written_size, why, sizeof why) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(written);
    return 0;
}

static uint8_t *copy_of_written(void)
{
    uint8_t *copy = malloc(written_size);
    memcpy(copy, written, written_size);
    return copy;
}

static sdk_kpack_t *open_ok(const uint8_t *bytes, size_t n)
{
    sdk_kpack_t *pack = NULL;
    char why[1024] = "";
    cdnn_status_t st = sdk_kpack_open_bytes(bytes, n, "test.kpack", &pack, why, sizeof why);
    if (st != CDNN_STATUS_SUCCESS)
        print_message("unexpected refusal: %s\n", why);
    assert_int_equal(st, CDNN_STATUS_SUCCESS);
    return pack;
}

static void expect_refused(const uint8_t *bytes, size_t n, cdnn_status_t status,
                           const char *words)
{
    sdk_kpack_t *pack = (sdk_kpack_t *)&pack;
    char why[1024] = "";
    cdnn_status_t st = sdk_kpack_open_bytes(bytes, n, "test.kpack", &pack, why, sizeof why);
    if (st != status || !strstr(why, words))
        print_message("status %d, message: %s\n(wanted %d and \"%s\")\n", st, why, status,
                      words);
    assert_int_equal(st, status);
    assert_null(pack);
    assert_non_null(strstr(why, words));
    assert_non_null(strstr(why, "kernel pack 'test.kpack' "));
}

/* ---- round trip --------------------------------------------------------------------- */

static void expect_kernel(const sdk_kpack_t *pack, int32_t i, uint64_t offset)
{
    const sdk_kpack_spec_kernel_t *want = &spec_kernels[i];
    const sdk_kpack_kernel_t *k = sdk_kpack_kernel(pack, i);
    assert_non_null(k);
    assert_int_equal(k->index, i);
    assert_string_equal(k->id, want->id);
    assert_string_equal(k->symbol, want->symbol);
    assert_string_equal(k->target, want->target);
    assert_string_equal(k->signature, want->signature);
    assert_int_equal(k->offset, offset);
    assert_int_equal(k->size, want->code_size);
    uint8_t sha[SDK_SHA256_BYTES];
    sdk_sha256(want->code, want->code_size, sha);
    assert_memory_equal(k->sha256, sha, SDK_SHA256_BYTES);
    assert_int_equal(k->metadata_count, want->metadata_count);
    for (int32_t m = 0; m < want->metadata_count; m++) {
        assert_string_equal(k->metadata[m].key, want->metadata[m].key);
        assert_string_equal(k->metadata[m].value, want->metadata[m].value);
        assert_string_equal(sdk_kpack_metadata(k, want->metadata[m].key),
                            want->metadata[m].value);
    }
    assert_ptr_equal(sdk_kpack_find(pack, want->id), k);
    const uint8_t *code = NULL;
    size_t size = 0;
    assert_int_equal(sdk_kpack_code(pack, k, &code, &size, NULL, 0), CDNN_STATUS_SUCCESS);
    assert_int_equal(size, want->code_size);
    assert_memory_equal(code, want->code, size);
}

static void expect_engine(const sdk_kpack_t *pack, int32_t i)
{
    const sdk_kpack_spec_engine_t *want = &spec_engines[i];
    const sdk_kpack_engine_t *e = sdk_kpack_engine(pack, i);
    assert_non_null(e);
    assert_int_equal(e->index, i);
    assert_string_equal(e->name, want->name);
    assert_int_equal(e->rank, want->rank);
    assert_string_equal(e->match, want->match);
    assert_string_equal(e->constraints_json, want->constraints_json);
    assert_string_equal(e->handler_name, want->handler_name);
    assert_int_equal(e->handler_version, want->handler_version);
    assert_int_equal(e->knob_count, want->knob_count);
    for (int32_t k = 0; k < want->knob_count; k++) {
        assert_string_equal(e->knobs[k].name, want->knobs[k].name);
        assert_string_equal(e->knobs[k].description, want->knobs[k].description);
        assert_int_equal(e->knobs[k].min_value, want->knobs[k].min_value);
        assert_int_equal(e->knobs[k].max_value, want->knobs[k].max_value);
        assert_int_equal(e->knobs[k].default_value, want->knobs[k].default_value);
    }
    assert_int_equal(e->candidate_count, want->candidate_count);
    for (int32_t c = 0; c < want->candidate_count; c++)
        assert_ptr_equal(e->candidates[c], sdk_kpack_find(pack, want->candidates[c]));
    assert_ptr_equal(sdk_kpack_find_engine(pack, want->name), e);
}

static void expect_layout(const uint8_t *b)
{
    assert_memory_equal(b, "CDKP", 4);
    assert_int_equal(forge_load(b + FORGE_MAJOR, 2), 1);
    assert_int_equal(forge_load(b + FORGE_MINOR, 2), 0);
    assert_int_equal(forge_load(b + FORGE_HEADER_SIZE, 4), 64);
    assert_int_equal(forge_load(b + FORGE_FLAGS, 4), 0);
    assert_int_equal(forge_load(b + FORGE_TOC_OFFSET, 8), TOC_OFFSET);
    assert_int_equal(forge_load(b + FORGE_TOC_SIZE, 8), written_size - TOC_OFFSET);
    for (size_t i = OFFSET_A + sizeof code_a; i < OFFSET_B; i++)
        assert_int_equal(b[i], 0);
    for (size_t i = OFFSET_B + sizeof code_b; i < TOC_OFFSET; i++)
        assert_int_equal(b[i], 0);
    assert_memory_equal(b + TOC_OFFSET + 4, "CDKT", 4);
}

static void test_round_trip(void **state)
{
    (void)state;
    expect_layout(written);
    sdk_kpack_t *pack = open_ok(written, written_size);
    const sdk_kpack_info_t *info = sdk_kpack_info(pack);
    assert_string_equal(info->path, "test.kpack");
    assert_string_equal(info->name, "cdnn-test-host");
    assert_string_equal(info->version, "0.2.0");
    assert_string_equal(info->target_family, "host");
    assert_int_equal(info->format_major, 1);
    assert_int_equal(info->format_minor, 0);
    assert_int_equal(info->file_size, written_size);
    assert_int_equal(info->toc_offset, TOC_OFFSET);
    assert_int_equal(info->toc_size, written_size - TOC_OFFSET);
    assert_memory_equal(info->sha256, written + FORGE_SHA256, SDK_SHA256_BYTES);
    assert_int_equal(sdk_kpack_kernel_count(pack), 3);
    expect_kernel(pack, 0, OFFSET_A);
    expect_kernel(pack, 1, OFFSET_B);
    expect_kernel(pack, 2, OFFSET_A);
    assert_null(sdk_kpack_kernel(pack, 3));
    assert_null(sdk_kpack_kernel(pack, -1));
    assert_null(sdk_kpack_find(pack, "matmul"));
    assert_null(sdk_kpack_metadata(sdk_kpack_kernel(pack, 0), "kr"));
    assert_int_equal(sdk_kpack_engine_count(pack), 2);
    expect_engine(pack, 0);
    expect_engine(pack, 1);
    assert_null(sdk_kpack_engine(pack, 2));
    assert_null(sdk_kpack_find_engine(pack, "kernels:matmul"));
    sdk_kpack_close(pack);
}

/* Strict mode's question: is this code in the pack?  Asked by digest. */
static void test_find_sha256(void **state)
{
    (void)state;
    sdk_kpack_t *pack = open_ok(written, written_size);
    uint8_t sha[SDK_SHA256_BYTES];
    sdk_sha256(code_b, sizeof code_b, sha);
    assert_ptr_equal(sdk_kpack_find_sha256(pack, sha), sdk_kpack_find(pack, "matmul_8x8"));
    sha[0] ^= 1;
    assert_null(sdk_kpack_find_sha256(pack, sha));
    sdk_kpack_close(pack);
}

/* Same spec, same bytes: from the same arrays and from copies of them. */
static void test_deterministic(void **state)
{
    (void)state;
    uint8_t *again = NULL, code_copy[sizeof code_a];
    size_t n = 0;
    memcpy(code_copy, code_a, sizeof code_a);
    sdk_kpack_spec_kernel_t kernels[3];
    memcpy(kernels, spec_kernels, sizeof kernels);
    kernels[2].code = code_copy; /* equal bytes elsewhere in memory: still shared */
    sdk_kpack_spec_t copy = spec;
    copy.kernels = kernels;
    for (int round = 0; round < 2; round++) {
        assert_int_equal(sdk_kpack_write(round ? &copy : &spec, &again, &n, NULL, 0),
                         CDNN_STATUS_SUCCESS);
        assert_int_equal(n, written_size);
        assert_memory_equal(again, written, n);
        free(again);
    }
}

/* The forger lays a TOC out as the writer does, so a forged pack differs
 * from a written one only by what a case changes. */
typedef struct forgery {
    forged_toc_t toc;
    forged_kernel_t kernels[3];
    sdk_kpack_spec_engine_t engines[2];
    cdnn_knob_info_t knobs[2];
    const char *candidates[4];
    sdk_kpack_kv_t metadata[3];
    uint8_t sha[3][SDK_SHA256_BYTES];
} forgery_t;

static void forgery_init(forgery_t *f)
{
    memset(f, 0, sizeof *f);
    memcpy(f->metadata, meta_6x16, sizeof f->metadata);
    memcpy(f->knobs, tile_knob, sizeof tile_knob);
    memcpy(f->candidates, matmul_candidates, sizeof matmul_candidates);
    memcpy(f->engines, spec_engines, sizeof f->engines);
    f->engines[0].knobs = f->knobs;
    f->engines[0].candidates = f->candidates;
    const uint64_t offsets[3] = {OFFSET_A, OFFSET_B, OFFSET_A};
    for (int i = 0; i < 3; i++) {
        const sdk_kpack_spec_kernel_t *k = &spec_kernels[i];
        sdk_sha256(k->code, k->code_size, f->sha[i]);
        f->kernels[i] = (forged_kernel_t){k->id, k->symbol, k->target, k->signature,
                                          offsets[i], k->code_size, f->sha[i], 32,
                                          k->metadata_count, k->metadata};
    }
    f->kernels[0].metadata = f->metadata;
    f->toc = (forged_toc_t){1, 0, "CDKT", spec.name, spec.version, spec.target_family,
                            3, f->kernels, 2, f->engines};
}

static uint8_t *forge(const forgery_t *f, size_t *n)
{
    return forge_pack(written, TOC_OFFSET, &f->toc, n);
}

static void test_forger_writes_the_writers_bytes(void **state)
{
    (void)state;
    forgery_t f;
    forgery_init(&f);
    size_t n = 0;
    uint8_t *b = forge(&f, &n);
    assert_int_equal(n, written_size);
    assert_memory_equal(b, written, n);
    free(b);
}

/* ---- every check alone: damaged bytes ------------------------------------------------ */

typedef struct byte_case {
    const char *name;
    void (*damage)(uint8_t **b, size_t *n);
    cdnn_status_t status;
    const char *words;
} byte_case_t;

static void truncate_to_header(uint8_t **b, size_t *n) { (void)b; *n = 63; }
static void truncate_by_one(uint8_t **b, size_t *n) { (void)b; *n -= 1; }
static void bad_magic(uint8_t **b, size_t *n) { (void)n; (*b)[0] = 'X'; }
static void toc_in_header(uint8_t **b, size_t *n)
{
    (void)n;
    forge_store(*b + FORGE_TOC_OFFSET, 32, 8);
    forge_reseal(*b);
}
static void toc_size_zero(uint8_t **b, size_t *n)
{
    (void)n;
    forge_store(*b + FORGE_TOC_SIZE, 0, 8);
}
static void toc_size_huge(uint8_t **b, size_t *n)
{
    (void)n;
    forge_store(*b + FORGE_TOC_SIZE, UINT64_MAX - 10, 8);
}
static void flip_toc_byte(uint8_t **b, size_t *n) { (*b)[*n - 40] ^= 0x20; }
static void flip_major(uint8_t **b, size_t *n) { (void)n; (*b)[FORGE_MAJOR] = 2; }
static void flip_digest(uint8_t **b, size_t *n) { (void)n; (*b)[FORGE_SHA256 + 5] ^= 1; }
static void newer_major(uint8_t **b, size_t *n)
{
    (void)n;
    forge_store(*b + FORGE_MAJOR, 2, 2);
    forge_reseal(*b);
}
static void header_size_128(uint8_t **b, size_t *n)
{
    (void)n;
    forge_store(*b + FORGE_HEADER_SIZE, 128, 4);
    forge_reseal(*b);
}
static void flags_set(uint8_t **b, size_t *n)
{
    (void)n;
    forge_store(*b + FORGE_FLAGS, 1, 4);
    forge_reseal(*b);
}
/* The TOC moved 8 bytes on (8 zero bytes before it), re-sealed. */
static void toc_misaligned(uint8_t **b, size_t *n)
{
    uint8_t *moved = calloc(*n + 8, 1);
    memcpy(moved, *b, TOC_OFFSET);
    memcpy(moved + TOC_OFFSET + 8, *b + TOC_OFFSET, *n - TOC_OFFSET);
    forge_store(moved + FORGE_TOC_OFFSET, TOC_OFFSET + 8, 8);
    forge_reseal(moved);
    free(*b);
    *b = moved;
    *n += 8;
}
static void bytes_after_toc(uint8_t **b, size_t *n)
{
    *b = realloc(*b, *n + 64);
    memset(*b + *n, 0, 64);
    *n += 64;
}
static void padding_not_zero(uint8_t **b, size_t *n)
{
    (void)n;
    (*b)[OFFSET_B + sizeof code_b + 3] = 0xee;
}
static void toc_root_broken(uint8_t **b, size_t *n)
{
    (void)n;
    forge_store(*b + TOC_OFFSET, 0xfff0, 4);
    forge_reseal(*b);
}

static const byte_case_t byte_cases[] = {
    {"shorter than the header", truncate_to_header, CDNN_STATUS_CORRUPT_DATA,
     "is damaged: it is 63 bytes long, shorter than a kernel pack's 64-byte header"},
    {"truncated", truncate_by_one, CDNN_STATUS_CORRUPT_DATA,
     "outside the file's"},
    {"magic", bad_magic, CDNN_STATUS_CORRUPT_DATA, "does not start with \"CDKP\""},
    {"TOC inside the header", toc_in_header, CDNN_STATUS_CORRUPT_DATA,
     "its header places the table of contents (" },
    {"TOC of 0 bytes", toc_size_zero, CDNN_STATUS_CORRUPT_DATA, "outside the file's"},
    {"TOC size overflowing", toc_size_huge, CDNN_STATUS_CORRUPT_DATA, "outside the file's"},
    {"flipped TOC byte", flip_toc_byte, CDNN_STATUS_CORRUPT_DATA,
     "is damaged: the SHA-256 in its header does not match"},
    {"flipped major (digest first: damage, not too new)", flip_major,
     CDNN_STATUS_CORRUPT_DATA, "the SHA-256 in its header does not match"},
    {"flipped digest", flip_digest, CDNN_STATUS_CORRUPT_DATA,
     "the SHA-256 in its header does not match"},
    {"newer major, re-sealed", newer_major, CDNN_STATUS_NOT_SUPPORTED,
     "cannot be read by this cdnn: it is in kernel pack format 2.0, and this cdnn reads "
     "kernel pack format 1.x"},
    {"header size", header_size_128, CDNN_STATUS_CORRUPT_DATA,
     "its header says it is 128 bytes; format 1's is 64"},
    {"flags", flags_set, CDNN_STATUS_NOT_SUPPORTED, "sets flags 0x00000001"},
    {"TOC offset not a multiple of 64", toc_misaligned, CDNN_STATUS_CORRUPT_DATA,
     "starts at offset 456, which is not a multiple of 64"},
    {"bytes after the TOC", bytes_after_toc, CDNN_STATUS_CORRUPT_DATA,
     "64 bytes follow its table of contents"},
    {"padding not zero", padding_not_zero, CDNN_STATUS_CORRUPT_DATA,
     "byte 395, outside every code object, is 0xee; padding is always zero"},
    {"TOC root offset", toc_root_broken, CDNN_STATUS_CORRUPT_DATA,
     "its table of contents is malformed: KernelPackToc"},
};

static void test_byte_case(void **state)
{
    const byte_case_t *c = *state;
    print_message("case: %s\n", c->name);
    uint8_t *b = copy_of_written();
    size_t n = written_size;
    c->damage(&b, &n);
    expect_refused(b, n, c->status, c->words);
    free(b);
}

/* A newer minor only adds: read, re-sealed in header and TOC alike. */
static void test_newer_minor_is_read(void **state)
{
    (void)state;
    forgery_t f;
    forgery_init(&f);
    f.toc.minor = 7;
    size_t n = 0;
    uint8_t *b = forge(&f, &n);
    sdk_kpack_t *pack = open_ok(b, n);
    assert_int_equal(sdk_kpack_info(pack)->format_minor, 7);
    sdk_kpack_close(pack);
    free(b);
}

/* ---- every check alone: forged, re-sealed TOCs --------------------------------------- */

typedef struct forged_case {
    const char *name;
    void (*forge)(forgery_t *f);
    const char *words;
} forged_case_t;

/* The TOC says 1.1; test_forged_case puts the header back to 1.0. */
static void toc_minor_differs(forgery_t *f) { f->toc.minor = 1; }
static void toc_identifier(forgery_t *f) { f->toc.identifier = "CDKX"; }
static void no_pack_name(forgery_t *f) { f->toc.name = NULL; }
static void pack_name_space(forgery_t *f) { f->toc.name = "cdnn host"; }
static void no_family(forgery_t *f) { f->toc.family = NULL; }
static void no_id(forgery_t *f) { f->kernels[1].id = NULL; }
static void id_control(forgery_t *f) { f->kernels[1].id = "matmul\n8x8"; }
static void no_symbol(forgery_t *f) { f->kernels[1].symbol = NULL; }
static void long_target(forgery_t *f)
{
    static char target[300];
    memset(target, 'x', sizeof target - 1);
    f->kernels[1].target = target;
}
static void no_signature(forgery_t *f) { f->kernels[1].signature = NULL; }
static void metadata_twice(forgery_t *f) { f->metadata[2].key = "mr"; }
static void metadata_tab(forgery_t *f) { f->metadata[2].value = "f32,\tpacked"; }
static void metadata_no_key(forgery_t *f) { f->metadata[1].key = NULL; }
static void sha_31(forgery_t *f) { f->kernels[1].sha256_len = 31; }
static void sha_absent(forgery_t *f)
{
    f->kernels[1].sha256 = NULL;
    f->kernels[1].sha256_len = 0;
}
static void code_empty(forgery_t *f) { f->kernels[1].size = 0; }
static void code_misaligned(forgery_t *f) { f->kernels[1].offset = OFFSET_B + 8; }
static void code_in_header(forgery_t *f)
{
    f->kernels[1].offset = 0;
    f->kernels[1].size = 64;
}
static void code_into_toc(forgery_t *f) { f->kernels[1].size = TOC_OFFSET - OFFSET_B + 1; }
static void code_size_overflows(forgery_t *f) { f->kernels[1].size = UINT64_MAX - 63; }
static void ids_twice(forgery_t *f) { f->kernels[2].id = "matmul_6x16"; }
static void codes_overlap(forgery_t *f)
{
    f->kernels[1].offset = OFFSET_A + 64; /* inside code_a's 100 bytes */
    f->kernels[1].size = 64;
}
static void shared_code_other_sha(forgery_t *f) { f->sha[2][0] ^= 1; }
static void shared_start_other_size(forgery_t *f) { f->kernels[2].size = 64; }
static void no_engine_name(forgery_t *f) { f->engines[1].name = NULL; }
static void engines_twice(forgery_t *f) { f->engines[1].name = f->engines[0].name; }
static void no_match(forgery_t *f) { f->engines[0].match = NULL; }
static void no_constraints(forgery_t *f) { f->engines[0].constraints_json = NULL; }
static void constraints_newline(forgery_t *f) { f->engines[0].constraints_json = "{\n}"; }
static void no_handler(forgery_t *f) { f->engines[0].handler_name = NULL; }
static void knob_default_outside(forgery_t *f) { f->knobs[0].default_value = 3; }
static void knob_min_above_max(forgery_t *f) { f->knobs[0].min_value = 5; }
static void knob_twice(forgery_t *f)
{
    f->knobs[1] = f->knobs[0];
    f->engines[0].knob_count = 2;
}
static void knob_unnamed(forgery_t *f) { f->knobs[0].name = NULL; }
static void no_candidates(forgery_t *f) { f->engines[1].candidate_count = 0; }
static void unknown_candidate(forgery_t *f) { f->candidates[1] = "matmul_4x4"; }
static void candidate_twice(forgery_t *f) { f->candidates[2] = "matmul_6x16"; }

static const forged_case_t forged_cases[] = {
    {"TOC and header versions differ", toc_minor_differs,
     "its table of contents says format 1.1 and its header 1.0"},
    {"TOC identifier", toc_identifier,
     "table of contents is malformed: KernelPackToc: file identifier is \"CDKX\""},
    {"pack name missing", no_pack_name, "the pack: its name is missing"},
    {"pack name with a space", pack_name_space, "the pack: its name is not a name"},
    {"target family missing", no_family, "the pack: its target family is missing"},
    {"kernel id missing", no_id, "kernels[1]: its id is missing"},
    {"kernel id with a newline", id_control, "kernels[1]: its id is not a name"},
    {"symbol missing", no_symbol, "kernel 'matmul_8x8' (kernels[1]): its symbol is missing"},
    {"target of 299 bytes", long_target,
     "kernel 'matmul_8x8' (kernels[1]): its target is not a name (1 to 255"},
    {"signature missing", no_signature, "(kernels[1]): its signature is missing"},
    {"metadata key twice", metadata_twice,
     "kernel 'matmul_6x16' (kernels[0]): its metadata key 'mr' occurs twice"},
    {"metadata value with a tab", metadata_tab,
     "(kernels[0]): its metadata[2] value is not text"},
    {"metadata key missing", metadata_no_key, "(kernels[0]): its metadata[1] key is missing"},
    {"sha256 of 31 bytes", sha_31, "(kernels[1]): its sha256 is 31 bytes, not 32"},
    {"sha256 missing", sha_absent, "(kernels[1]): its sha256 is 0 bytes, not 32"},
    {"code object empty", code_empty, "(kernels[1]): its code object is empty"},
    {"code offset misaligned", code_misaligned,
     "(kernels[1]): its code object's offset 200 is not a multiple of 64"},
    {"code in the header", code_in_header,
     "its code object (64 bytes at offset 0) does not lie between the header and the "
     "table of contents (at 448)"},
    {"code into the TOC", code_into_toc, "(257 bytes at offset 192) does not lie between"},
    {"code size overflowing", code_size_overflows, "does not lie between"},
    {"duplicate kernel ids", ids_twice,
     "kernel 'matmul_6x16' (kernels[0]): kernels[2] has the same id"},
    {"overlapping code objects", codes_overlap,
     "the code objects of kernels 'matmul_6x16_b' (kernels[2], bytes [64, 164)) and "
     "'matmul_8x8' (kernels[1], bytes [128, 192)) overlap"},
    {"shared code, other SHA-256", shared_code_other_sha,
     "kernels 'matmul_6x16' (kernels[0]) and 'matmul_6x16_b' (kernels[2]) share one code "
     "object but record different SHA-256s"},
    {"same start, other size", shared_start_other_size, "overlap"},
    {"engine name missing", no_engine_name, "engines[1]: its name is missing"},
    {"duplicate engine names", engines_twice,
     "engine 'kernels:matmul_host' (engines[0]): engines[1] has the same name"},
    {"match missing", no_match,
     "engine 'kernels:matmul_host' (engines[0]): its match function is missing"},
    {"constraints missing", no_constraints, "(engines[0]): its constraints is missing"},
    {"constraints with a newline", constraints_newline,
     "(engines[0]): its constraints is not text"},
    {"handler missing", no_handler, "(engines[0]): its handler name is missing"},
    {"knob default outside its range", knob_default_outside,
     "knob 'kernels.matmul.tile' has default 3 outside its range [0, 2]"},
    {"knob min above max", knob_min_above_max, "outside its range [5, 2]"},
    {"knob declared twice", knob_twice, "its knob 'kernels.matmul.tile' is declared twice"},
    {"knob without a name", knob_unnamed, "(engines[0]): its knobs[0] name is missing"},
    {"no candidates", no_candidates,
     "engine 'kernels:matmul_small' (engines[1]): it has no candidate kernels"},
    {"unknown candidate", unknown_candidate,
     "its candidate 'matmul_4x4' (candidates[1]) is not a kernel of this pack"},
    {"candidate twice", candidate_twice, "its candidate 'matmul_6x16' is listed twice"},
};

static void test_forged_case(void **state)
{
    const forged_case_t *c = *state;
    print_message("case: %s\n", c->name);
    forgery_t f;
    forgery_init(&f);
    c->forge(&f);
    size_t n = 0;
    uint8_t *b = forge(&f, &n);
    if (c->forge == toc_minor_differs) { /* the header keeps saying 1.0 */
        forge_store(b + FORGE_MINOR, 0, 2);
        forge_reseal(b);
    }
    expect_refused(b, n, CDNN_STATUS_CORRUPT_DATA, c->words);
    free(b);
}

/* Counts past the limits are refused before anything is allocated for
 * them (the tables themselves may be empty). */
static void test_too_many_kernels(void **state)
{
    (void)state;
    forgery_t f;
    forgery_init(&f);
    forged_kernel_t *many = calloc(SDK_KPACK_MAX_KERNELS + 1, sizeof *many);
    f.toc.kernels = many;
    f.toc.kernel_count = SDK_KPACK_MAX_KERNELS + 1;
    f.toc.engine_count = 0;
    size_t n = 0;
    uint8_t *b = forge(&f, &n);
    expect_refused(b, n, CDNN_STATUS_CORRUPT_DATA, "it lists 65537 kernels; a pack holds "
                   "at most 65536");
    free(b);
    free(many);
}

static void test_too_many_engines(void **state)
{
    (void)state;
    forgery_t f;
    forgery_init(&f);
    sdk_kpack_spec_engine_t *many = calloc(SDK_KPACK_MAX_ENGINES + 1, sizeof *many);
    f.toc.engines = many;
    f.toc.engine_count = SDK_KPACK_MAX_ENGINES + 1;
    size_t n = 0;
    uint8_t *b = forge(&f, &n);
    expect_refused(b, n, CDNN_STATUS_CORRUPT_DATA, "it lists 4097 engines");
    free(b);
    free(many);
}

/* ---- code objects: their SHA-256 before their bytes --------------------------------- */

static void test_code_checked_before_use(void **state)
{
    (void)state;
    uint8_t *b = copy_of_written();
    b[OFFSET_B + 17] ^= 0x40; /* the TOC is intact: the pack opens */
    sdk_kpack_t *pack = open_ok(b, written_size);
    const uint8_t *code = (const uint8_t *)&code;
    size_t size = 1;
    char why[512];
    const sdk_kpack_kernel_t *bad = sdk_kpack_find(pack, "matmul_8x8");
    for (int again = 0; again < 2; again++) { /* refused every time, not only the first */
        assert_int_equal(sdk_kpack_code(pack, bad, &code, &size, why, sizeof why),
                         CDNN_STATUS_CORRUPT_DATA);
        assert_string_equal(why, "kernel pack 'test.kpack' is damaged: kernel 'matmul_8x8' "
                            "(kernels[1]): its code object (200 bytes at offset 192) does "
                            "not match its SHA-256");
        assert_ptr_equal(code, (const uint8_t *)&code);
    }
    assert_int_equal(sdk_kpack_code(pack, sdk_kpack_find(pack, "matmul_6x16"), &code, &size,
                                    why, sizeof why),
                     CDNN_STATUS_SUCCESS);
    sdk_kpack_close(pack);
    free(b);
}

/* A kernel of another pack, or none, is a caller's mistake. */
static void test_code_of_another_pack(void **state)
{
    (void)state;
    sdk_kpack_t *one = open_ok(written, written_size), *two = open_ok(written, written_size);
    const uint8_t *code = NULL;
    size_t size = 0;
    char why[256];
    assert_int_equal(sdk_kpack_code(one, sdk_kpack_kernel(two, 0), &code, &size, why,
                                    sizeof why),
                     CDNN_STATUS_BAD_PARAM);
    assert_int_equal(sdk_kpack_code(one, NULL, &code, &size, why, sizeof why),
                     CDNN_STATUS_BAD_PARAM);
    assert_int_equal(sdk_kpack_still_on_disk(one, sdk_kpack_kernel(one, 0), why, sizeof why),
                     CDNN_STATUS_BAD_PARAM);
    assert_non_null(strstr(why, "opened from bytes"));
    sdk_kpack_close(one);
    sdk_kpack_close(two);
}

/* Many threads ask for the same code at once. */
static void *code_from_thread(void *arg)
{
    const sdk_kpack_t *pack = arg;
    for (int i = 0; i < 200; i++) {
        const uint8_t *code = NULL;
        size_t size = 0;
        if (sdk_kpack_code(pack, sdk_kpack_kernel(pack, i % 3), &code, &size, NULL, 0) != 0)
            return (void *)1;
    }
    return NULL;
}

static void test_code_from_threads(void **state)
{
    (void)state;
    sdk_kpack_t *pack = open_ok(written, written_size);
    pthread_t threads[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, code_from_thread, pack), 0);
    for (int i = 0; i < 8; i++) {
        void *result = NULL;
        assert_int_equal(pthread_join(threads[i], &result), 0);
        assert_null(result);
    }
    sdk_kpack_close(pack);
}

/* ---- files: opening, rule 4 ---------------------------------------------------------- */

static char dir[64];

static void write_file(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static char *path_in_dir(const char *name)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cdnn-kpack-test.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    return system(command) == 0 ? 0 : -1;
}

static void expect_open_fails(const char *path, cdnn_status_t status, const char *words)
{
    sdk_kpack_t *pack = (sdk_kpack_t *)&pack;
    char why[512];
    assert_int_equal(sdk_kpack_open(path, &pack, why, sizeof why), status);
    assert_null(pack);
    if (!strstr(why, words))
        print_message("message: %s\n", why);
    assert_non_null(strstr(why, words));
}

static void test_open_file(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s", path_in_dir("a.kpack"));
    write_file(path, written, written_size);
    sdk_kpack_t *pack = NULL;
    char why[512];
    assert_int_equal(sdk_kpack_open(path, &pack, why, sizeof why), CDNN_STATUS_SUCCESS);
    assert_string_equal(sdk_kpack_info(pack)->path, path);
    assert_int_equal(sdk_kpack_kernel_count(pack), 3);
    sdk_kpack_close(pack);
    expect_open_fails(path_in_dir("missing.kpack"), CDNN_STATUS_NOT_FOUND,
                      "missing.kpack' cannot be opened: No such file or directory");
    expect_open_fails(dir, CDNN_STATUS_IO_ERROR, "is not a regular file");
    /* A sparse file past the cap is refused by its size, without reading it. */
    int fd = open(path_in_dir("huge.kpack"), O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)SDK_KPACK_MAX_BYTES + 1), 0);
    close(fd);
    expect_open_fails(path_in_dir("huge.kpack"), CDNN_STATUS_NOT_SUPPORTED,
                      "is 2147483649 bytes, larger than the 2147483648 a pack may be");
    write_file(path, written, 20);
    expect_open_fails(path, CDNN_STATUS_CORRUPT_DATA, "a.kpack' is damaged: it is 20 bytes");
}

static void expect_on_disk(const sdk_kpack_t *pack, const char *id, cdnn_status_t status,
                           const char *words)
{
    char why[512] = "";
    assert_int_equal(sdk_kpack_still_on_disk(pack, sdk_kpack_find(pack, id), why, sizeof why),
                     status);
    if (words && !strstr(why, words))
        print_message("message: %s\n", why);
    if (words)
        assert_non_null(strstr(why, words));
}

/* Rule 4: the file the pack was opened from is read again at save. */
static void test_still_on_disk(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s", path_in_dir("b.kpack"));
    write_file(path, written, written_size);
    sdk_kpack_t *pack = NULL;
    assert_int_equal(sdk_kpack_open(path, &pack, NULL, 0), CDNN_STATUS_SUCCESS);
    expect_on_disk(pack, "matmul_8x8", CDNN_STATUS_SUCCESS, NULL);
    uint8_t *b = copy_of_written();
    b[OFFSET_B + 1] ^= 1; /* kernel matmul_8x8's bytes change; the TOC does not */
    write_file(path, b, written_size);
    expect_on_disk(pack, "matmul_6x16", CDNN_STATUS_SUCCESS, NULL);
    expect_on_disk(pack, "matmul_8x8", CDNN_STATUS_BAD_STATE,
                   "b.kpack' changed on disk since it was opened, so kernel 'matmul_8x8' "
                   "cannot be checked against it: the kernel's code object there no longer "
                   "matches its SHA-256");
    b[OFFSET_B + 1] ^= 1;
    b[FORGE_SHA256] ^= 1; /* another TOC: the header's digest differs */
    write_file(path, b, written_size);
    expect_on_disk(pack, "matmul_6x16", CDNN_STATUS_BAD_STATE,
                   "its header (and so its table of contents) is not the one read");
    write_file(path, written, OFFSET_B + 10);
    expect_on_disk(pack, "matmul_8x8", CDNN_STATUS_BAD_STATE,
                   "the file now ends inside the kernel's code object");
    assert_int_equal(unlink(path), 0);
    expect_on_disk(pack, "matmul_8x8", CDNN_STATUS_NOT_FOUND,
                   "cannot be opened again to check kernel 'matmul_8x8' against it: No such "
                   "file");
    /* The pack's own copy is untouched by all of this. */
    const uint8_t *code = NULL;
    size_t size = 0;
    assert_int_equal(sdk_kpack_code(pack, sdk_kpack_find(pack, "matmul_8x8"), &code, &size,
                                    NULL, 0),
                     CDNN_STATUS_SUCCESS);
    assert_memory_equal(code, code_b, sizeof code_b);
    sdk_kpack_close(pack);
    free(b);
}

/* A relative path is re-read from where it was opened, whatever the
 * process's directory is now. */
static void test_still_on_disk_after_chdir(void **state)
{
    (void)state;
    char cwd[256];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    write_file("c.kpack", written, written_size);
    sdk_kpack_t *pack = NULL;
    assert_int_equal(sdk_kpack_open("c.kpack", &pack, NULL, 0), CDNN_STATUS_SUCCESS);
    assert_int_equal(chdir("/"), 0);
    expect_on_disk(pack, "matmul_6x16", CDNN_STATUS_SUCCESS, NULL);
    assert_int_equal(chdir(cwd), 0);
    sdk_kpack_close(pack);
}

/* ---- the writer's own refusals -------------------------------------------------------- */

static void expect_write_refused(const sdk_kpack_spec_t *s, const char *words)
{
    uint8_t *b = (uint8_t *)&b;
    size_t n = 1;
    char why[512] = "";
    assert_int_equal(sdk_kpack_write(s, &b, &n, why, sizeof why), CDNN_STATUS_BAD_PARAM);
    assert_null(b);
    assert_int_equal(n, 0);
    if (!strstr(why, words))
        print_message("message: %s\n", why);
    assert_non_null(strstr(why, words));
}

static void test_writer_refuses_what_the_reader_would(void **state)
{
    (void)state;
    sdk_kpack_spec_kernel_t kernels[3];
    sdk_kpack_spec_engine_t engines[2];
    memcpy(kernels, spec_kernels, sizeof kernels);
    memcpy(engines, spec_engines, sizeof engines);
    sdk_kpack_spec_t s = spec;
    s.kernels = kernels;
    s.engines = engines;
    kernels[1].id = "matmul_6x16";
    expect_write_refused(&s, "cannot write kernel pack 'cdnn-test-host': kernel "
                         "'matmul_6x16' (kernels[0]): kernels[1] has the same id");
    kernels[1].id = spec_kernels[1].id;
    const char *unknown[] = {"matmul_1x1"};
    engines[1].candidates = unknown;
    expect_write_refused(&s, "its candidate 'matmul_1x1' (candidates[0]) is not a kernel");
    const char *null_candidate[] = {NULL};
    engines[1].candidates = null_candidate;
    expect_write_refused(&s, "an engine's candidate is NULL");
    engines[1].candidates = small_candidates;
    kernels[0].code_size = 0;
    expect_write_refused(&s, "(kernels[0]): its code object is empty");
    kernels[0].code_size = sizeof code_a;
    s.kernel_count = -1;
    expect_write_refused(&s, "its kernel count or kernel array is invalid");
    s.kernel_count = 3;
    s.target_family = NULL;
    expect_write_refused(&s, "the pack: its target family is missing");
}

/* An empty pack (no kernels, no engines) is a pack. */
static void test_empty_pack(void **state)
{
    (void)state;
    sdk_kpack_spec_t s = {"empty", "1", "cuda", 0, NULL, 0, NULL};
    uint8_t *b = NULL;
    size_t n = 0;
    assert_int_equal(sdk_kpack_write(&s, &b, &n, NULL, 0), CDNN_STATUS_SUCCESS);
    assert_int_equal(forge_load(b + FORGE_TOC_OFFSET, 8), 64);
    sdk_kpack_t *pack = open_ok(b, n);
    assert_int_equal(sdk_kpack_kernel_count(pack), 0);
    assert_int_equal(sdk_kpack_engine_count(pack), 0);
    assert_null(sdk_kpack_find(pack, "x"));
    sdk_kpack_close(pack);
    free(b);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

int main(void)
{
    struct CMUnitTest tests[N(byte_cases) + N(forged_cases) + 32];
    size_t n = 0;
    const struct CMUnitTest fixed[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_find_sha256),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_forger_writes_the_writers_bytes),
        cmocka_unit_test(test_newer_minor_is_read),
        cmocka_unit_test(test_too_many_kernels),
        cmocka_unit_test(test_too_many_engines),
        cmocka_unit_test(test_code_checked_before_use),
        cmocka_unit_test(test_code_of_another_pack),
        cmocka_unit_test(test_code_from_threads),
        cmocka_unit_test_setup_teardown(test_open_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_still_on_disk, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_still_on_disk_after_chdir, make_dir, remove_dir),
        cmocka_unit_test(test_writer_refuses_what_the_reader_would),
        cmocka_unit_test(test_empty_pack),
    };
    for (size_t i = 0; i < N(fixed); i++)
        tests[n++] = fixed[i];
    for (size_t i = 0; i < N(byte_cases); i++)
        tests[n++] = (struct CMUnitTest){byte_cases[i].name, test_byte_case, NULL, NULL,
                                         (void *)&byte_cases[i]};
    for (size_t i = 0; i < N(forged_cases); i++)
        tests[n++] = (struct CMUnitTest){forged_cases[i].name, test_forged_case, NULL, NULL,
                                         (void *)&forged_cases[i]};
    return _cmocka_run_group_tests("kpack", tests, n, setup, teardown);
}
