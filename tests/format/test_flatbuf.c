/*
 * test_flatbuf.c -- the FlatBuffers-format runtime: round trips of every
 * field kind, defaults, determinism, alignment, builder misuse, and the
 * verifier against truncated, flipped and hostile bytes.  Interop with
 * flatc and python3-flatbuffers is tests/format/crosscheck.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cdnn_sdk/flatbuf.h>

#include "test_schema.h"

/* ---- helpers ------------------------------------------------------------ */

/* A finished buffer copied out of its builder, into an allocation of
 * exactly its size (so ASan sees any overread). */
typedef struct owned {
    uint8_t *data;
    size_t size;
} owned_t;

static owned_t take(fb_builder_t *b, fb_ref_t root, const char *id)
{
    const uint8_t *data;
    owned_t o = {NULL, 0};
    assert_int_equal(fb_finish(b, root, id, &data, &o.size), 0);
    o.data = malloc(o.size);
    assert_non_null(o.data);
    memcpy(o.data, data, o.size);
    fb_builder_free(b);
    return o;
}

static owned_t canonical(void)
{
    fb_builder_t b;
    const uint8_t *data;
    owned_t o;
    fb_builder_init(&b);
    assert_int_equal(build_canonical(&b, &data, &o.size), 0);
    o.data = malloc(o.size);
    assert_non_null(o.data);
    memcpy(o.data, data, o.size);
    fb_builder_free(&b);
    return o;
}

static int verify_root_desc(const owned_t *o, char *why, size_t cap)
{
    return fb_verify(o->data, o->size, TEST_IDENTIFIER, &root_desc, why, cap);
}

/* Where field `id` of the table at t lives in the buffer (test-only
 * knowledge of the layout, used to damage precise bytes). */
static size_t field_offset(const fb_table_t *t, int id)
{
    uint16_t voff = fb_read_u16(t->buf + t->vtable + 4 + 2 * id);
    assert_true(voff != 0);
    return t->pos + voff;
}

static size_t target_of(const owned_t *o, size_t at)
{
    return at + fb_read_u32(o->data + at);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Verification fails and the message contains `needle`. */
static void expect_refused(const owned_t *o, const char *needle)
{
    char why[512];
    assert_int_equal(verify_root_desc(o, why, sizeof why), -1);
    if (!strstr(why, needle))
        fail_msg("message \"%s\" lacks \"%s\"", why, needle);
}

/* ---- round trips -------------------------------------------------------- */

static void check_scalars(const fb_table_t *r)
{
    assert_true(fb_get_bool(r, ROOT_B, 0));
    assert_int_equal(fb_get_i8(r, ROOT_I8, ROOT_I8_DEFAULT), -128);
    assert_int_equal(fb_get_u8(r, ROOT_U8, 0), 255);
    assert_int_equal(fb_get_u16(r, ROOT_U16, ROOT_U16_DEFAULT), 65535);
    assert_true(fb_get_i32(r, ROOT_I32, 0) == INT32_MIN);
    assert_true(fb_get_i64(r, ROOT_I64, 0) == INT64_MIN);
    assert_true(fb_get_u64(r, ROOT_U64, 0) == UINT64_MAX);
    assert_true(fb_get_f64(r, ROOT_F64, ROOT_F64_DEFAULT) == -0.25);
}

static void check_vectors(const fb_table_t *r)
{
    uint32_t n, len;
    const uint8_t *p = fb_get_vector(r, ROOT_LONGS, &n);
    assert_int_equal(n, 3);
    assert_true(fb_read_i64(p) == 1 && fb_read_i64(p + 8) == -2 &&
                fb_read_i64(p + 16) == 3);
    p = fb_get_vector(r, ROOT_PAIRS, &n);
    assert_int_equal(n, 2);
    assert_int_equal(p[0], 1);
    assert_true(fb_read_i64(p + 8) == -5);
    assert_int_equal(p[16], 2);
    assert_true(fb_read_i64(p + 24) == 6);
    fb_table_t leaf = fb_vector_table(r, ROOT_LEAVES, 1);
    assert_string_equal(fb_get_string(&leaf, LEAF_NAME, &len), "b");
    assert_int_equal(fb_get_i32(&leaf, LEAF_WEIGHT, LEAF_WEIGHT_DEFAULT), 0);
    leaf = fb_vector_table(r, ROOT_LEAVES, 0);
    assert_false(fb_has(&leaf, LEAF_WEIGHT)); /* 7 is the default */
    assert_int_equal(fb_get_i32(&leaf, LEAF_WEIGHT, LEAF_WEIGHT_DEFAULT), 7);
    assert_null(fb_vector_table(r, ROOT_LEAVES, 2).buf);
    assert_string_equal(fb_vector_string(r, ROOT_NAMES, 2, &len), "yz");
    assert_int_equal(len, 2);
    assert_string_equal(fb_vector_string(r, ROOT_NAMES, 1, &len), "");
    assert_null(fb_vector_string(r, ROOT_NAMES, 3, &len));
}

static void check_tables(const fb_table_t *r)
{
    uint32_t len, n;
    fb_table_t child = fb_get_table(r, ROOT_CHILD);
    assert_non_null(child.buf);
    assert_null(fb_get_string(&child, LEAF_NAME, &len));
    assert_int_equal(fb_get_i32(&child, LEAF_WEIGHT, 7), 9);
    assert_int_equal(fb_get_u8(r, ROOT_CHOICE_TYPE, 0), CHOICE_OTHER);
    fb_table_t other = fb_get_table(r, ROOT_CHOICE);
    assert_true(fb_get_f64(&other, OTHER_X, 0) == 2.5);
    assert_true(fb_get_bool(&other, OTHER_FLAG, 0));
    const uint8_t *nested = fb_get_vector(r, ROOT_NESTED, &n);
    assert_int_equal(fb_verify(nested, n, NULL, &leaf_desc, NULL, 0), 0);
    fb_table_t inner = fb_root(nested, n);
    assert_string_equal(fb_get_string(&inner, LEAF_NAME, &len), "inner");
    assert_int_equal(fb_get_i32(&inner, LEAF_WEIGHT, 7), 3);
}

static void test_round_trip(void **state)
{
    (void)state;
    char why[256] = "unset";
    uint32_t len;
    owned_t o = canonical();
    assert_int_equal(verify_root_desc(&o, why, sizeof why), 0);
    assert_string_equal(why, "");
    fb_table_t r = fb_root(o.data, o.size);
    check_scalars(&r);
    assert_string_equal(fb_get_string(&r, ROOT_NAME, &len), "root");
    assert_int_equal(len, 4);
    check_vectors(&r);
    check_tables(&r);
    free(o.data);
}

/* A union holding the other member type, and an absent union. */
static void test_union_members(void **state)
{
    (void)state;
    fb_builder_t b;
    fb_builder_init(&b);
    fb_ref_t leaf = build_leaf(&b, "u", 1);
    fb_table_start(&b, ROOT_FIELDS);
    fb_add_u8(&b, ROOT_CHOICE_TYPE, CHOICE_LEAF, CHOICE_NONE);
    fb_add_ref(&b, ROOT_CHOICE, leaf);
    owned_t o = take(&b, fb_table_end(&b), TEST_IDENTIFIER);
    assert_int_equal(verify_root_desc(&o, NULL, 0), 0);
    fb_table_t r = fb_root(o.data, o.size);
    fb_table_t t = fb_get_table(&r, ROOT_CHOICE);
    assert_string_equal(fb_get_string(&t, LEAF_NAME, NULL), "u");
    free(o.data);

    fb_builder_init(&b);
    fb_table_start(&b, ROOT_FIELDS);
    o = take(&b, fb_table_end(&b), TEST_IDENTIFIER);
    assert_int_equal(verify_root_desc(&o, NULL, 0), 0);
    r = fb_root(o.data, o.size);
    assert_int_equal(fb_get_u8(&r, ROOT_CHOICE_TYPE, 0), CHOICE_NONE);
    assert_null(fb_get_table(&r, ROOT_CHOICE).buf);
    free(o.data);
}

/* ---- defaults, determinism, alignment ----------------------------------- */

static void test_defaults_omitted(void **state)
{
    (void)state;
    fb_builder_t b;
    fb_builder_init(&b);
    fb_table_start(&b, ROOT_FIELDS);
    fb_add_bool(&b, ROOT_B, 0, 0);
    fb_add_i8(&b, ROOT_I8, -1, ROOT_I8_DEFAULT);
    fb_add_u16(&b, ROOT_U16, 3, ROOT_U16_DEFAULT);
    fb_add_i64(&b, ROOT_I64, 0, 0);
    fb_add_f64(&b, ROOT_F64, 1.5, ROOT_F64_DEFAULT);
    fb_add_ref(&b, ROOT_NAME, 0);
    owned_t o = take(&b, fb_table_end(&b), NULL);
    /* root offset, 4-byte vtable (trailing fields trimmed), soffset */
    assert_int_equal(o.size, 12);
    assert_int_equal(fb_verify(o.data, o.size, NULL, &root_desc, NULL, 0), 0);
    fb_table_t r = fb_root(o.data, o.size);
    for (int f = 0; f < ROOT_FIELDS; f++)
        assert_false(fb_has(&r, f));
    assert_int_equal(fb_get_i8(&r, ROOT_I8, ROOT_I8_DEFAULT), -1);
    assert_int_equal(fb_get_u16(&r, ROOT_U16, ROOT_U16_DEFAULT), 3);
    assert_true(fb_get_f64(&r, ROOT_F64, ROOT_F64_DEFAULT) == 1.5);
    assert_null(fb_get_string(&r, ROOT_NAME, NULL));
    assert_null(fb_get_vector(&r, ROOT_LONGS, NULL));
    free(o.data);
}

/* -0.0 is not the default 0.0: defaults compare bit for bit. */
static void test_negative_zero_kept(void **state)
{
    (void)state;
    fb_builder_t b;
    fb_builder_init(&b);
    fb_table_start(&b, OTHER_FIELDS);
    fb_add_f64(&b, OTHER_X, -0.0, 0.0);
    owned_t o = take(&b, fb_table_end(&b), NULL);
    fb_table_t r = fb_root(o.data, o.size);
    assert_true(fb_has(&r, OTHER_X));
    double x = fb_get_f64(&r, OTHER_X, 1);
    assert_true(x == 0 && dbits(x) != 0);
    free(o.data);
}

static void test_deterministic(void **state)
{
    (void)state;
    owned_t a = canonical(), b = canonical();
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.data, b.data, a.size);
    free(a.data);
    free(b.data);
}

static void test_alignment(void **state)
{
    (void)state;
    uint32_t n;
    owned_t o = canonical();
    fb_table_t r = fb_root(o.data, o.size);
    const uint8_t *base = o.data;
    assert_int_equal(o.size % 8, 0);
    assert_int_equal(field_offset(&r, ROOT_I64) % 8, 0);
    assert_int_equal(field_offset(&r, ROOT_F64) % 8, 0);
    assert_int_equal(field_offset(&r, ROOT_U16) % 2, 0);
    assert_int_equal(field_offset(&r, ROOT_I32) % 4, 0);
    assert_int_equal((fb_get_vector(&r, ROOT_LONGS, &n) - base) % 8, 0);
    assert_int_equal((fb_get_vector(&r, ROOT_PAIRS, &n) - base) % 8, 0);
    assert_int_equal((fb_get_vector(&r, ROOT_NESTED, &n) - base) % 8, 0);
    assert_int_equal(r.pos % 4, 0);
    assert_memory_equal(o.data + 4, "CDTS", 4);
    free(o.data);
}

/* ---- builder misuse ----------------------------------------------------- */

/* Run `misuse` on a fresh builder: it must fail, stay failed, and make
 * fb_finish refuse. */
static void expect_builder_failed(void (*misuse)(fb_builder_t *))
{
    fb_builder_t b;
    const uint8_t *data = (const uint8_t *)"x";
    size_t size = 1;
    fb_builder_init(&b);
    misuse(&b);
    assert_true(b.failed);
    assert_int_equal(fb_string(&b, "after"), 0); /* sticky */
    fb_table_start(&b, 1);
    assert_int_equal(fb_table_end(&b), 0);
    assert_int_equal(fb_finish(&b, 1, NULL, &data, &size), -1);
    assert_null(data);
    assert_int_equal(size, 0);
    fb_builder_free(&b);
}

static void nested_table(fb_builder_t *b)
{
    fb_table_start(b, 2);
    fb_table_start(b, 2);
}

static void field_outside_table(fb_builder_t *b) { fb_add_i32(b, 0, 5, 0); }

static void default_outside_table(fb_builder_t *b) { fb_add_i32(b, 0, 0, 0); }

static void field_id_too_big(fb_builder_t *b)
{
    fb_table_start(b, 2);
    fb_add_u8(b, 2, 1, 0);
}

static void field_id_negative(fb_builder_t *b)
{
    fb_table_start(b, 2);
    fb_add_u8(b, -1, 1, 0);
}

static void field_twice(fb_builder_t *b)
{
    fb_table_start(b, 2);
    fb_add_u8(b, 1, 1, 0);
    fb_add_u8(b, 1, 2, 0);
}

static void string_inside_table(fb_builder_t *b)
{
    fb_table_start(b, 2);
    (void)fb_string(b, "no");
}

static void ref_from_inside_table(fb_builder_t *b)
{
    fb_table_start(b, 2);
    fb_add_u8(b, 0, 1, 0);
    fb_add_ref(b, 1, (fb_ref_t)b->size);
}

static void end_without_start(fb_builder_t *b) { (void)fb_table_end(b); }

static void finish_inside_table(fb_builder_t *b)
{
    const uint8_t *data;
    size_t size;
    fb_ref_t s = fb_string(b, "x");
    fb_table_start(b, 1);
    (void)fb_finish(b, s, NULL, &data, &size);
}

static void finish_twice(fb_builder_t *b)
{
    const uint8_t *data;
    size_t size;
    fb_table_start(b, 1);
    fb_ref_t t = fb_table_end(b);
    assert_int_equal(fb_finish(b, t, NULL, &data, &size), 0);
    (void)fb_finish(b, t, NULL, &data, &size);
}

static void too_large(fb_builder_t *b)
{
    static const uint8_t byte;
    /* Refused from the size alone, before a byte is read. */
    (void)fb_bytes(b, &byte, (size_t)1 << 31);
}

static void bad_struct_alignment(fb_builder_t *b)
{
    static const uint8_t s[12];
    (void)fb_vector_structs(b, s, 12, 8, 1);
}

static void vector_of_null_ref(fb_builder_t *b)
{
    fb_ref_t refs[2] = {fb_string(b, "a"), 0};
    (void)fb_vector_refs(b, refs, 2);
}

static void test_builder_misuse(void **state)
{
    (void)state;
    expect_builder_failed(nested_table);
    expect_builder_failed(field_outside_table);
    expect_builder_failed(default_outside_table);
    expect_builder_failed(field_id_too_big);
    expect_builder_failed(field_id_negative);
    expect_builder_failed(field_twice);
    expect_builder_failed(string_inside_table);
    expect_builder_failed(ref_from_inside_table);
    expect_builder_failed(end_without_start);
    expect_builder_failed(finish_inside_table);
    expect_builder_failed(finish_twice);
    expect_builder_failed(too_large);
    expect_builder_failed(bad_struct_alignment);
    expect_builder_failed(vector_of_null_ref);
}

/* fb_string(NULL) means "no string": the field stays absent. */
static void test_null_string_is_absent(void **state)
{
    (void)state;
    fb_builder_t b;
    fb_builder_init(&b);
    assert_int_equal(fb_string(&b, NULL), 0);
    fb_ref_t leaf = build_leaf(&b, NULL, 1);
    owned_t o = take(&b, leaf, NULL);
    fb_table_t t = fb_root(o.data, o.size);
    assert_false(fb_has(&t, LEAF_NAME));
    free(o.data);
}

/* ---- readers ------------------------------------------------------------ */

/* A vtable shorter than the schema (an older writer) reads as absent,
 * and so does an id past any schema. */
static void test_old_writer(void **state)
{
    (void)state;
    fb_builder_t b;
    fb_builder_init(&b);
    fb_ref_t name = fb_string(&b, "old");
    fb_table_start(&b, 1); /* the writer knew only `name` */
    fb_add_ref(&b, LEAF_NAME, name);
    owned_t o = take(&b, fb_table_end(&b), NULL);
    assert_int_equal(fb_verify(o.data, o.size, NULL, &leaf_desc, NULL, 0), 0);
    fb_table_t t = fb_root(o.data, o.size);
    assert_int_equal(t.vt_size, 6);
    assert_false(fb_has(&t, LEAF_WEIGHT));
    assert_int_equal(fb_get_i32(&t, LEAF_WEIGHT, 7), 7);
    assert_int_equal(fb_get_i64(&t, 40, -3), -3);
    assert_int_equal(fb_get_i64(&t, -1, -3), -3);
    free(o.data);
}

/* A vtable after its table (negative soffset) is legal FlatBuffers. */
static void test_vtable_after_table(void **state)
{
    (void)state;
    static const uint8_t bytes[20] = {
        4, 0, 0, 0,             /* root at 4 */
        0xf8, 0xff, 0xff, 0xff, /* soffset -8: vtable at 12 */
        42, 0, 0, 0,            /* weight */
        8, 0, 8, 0, 0, 0, 4, 0, /* vtable: 8 bytes, table 8, name, weight */
    };
    owned_t o = {malloc(sizeof bytes), sizeof bytes};
    memcpy(o.data, bytes, sizeof bytes);
    assert_int_equal(fb_verify(o.data, o.size, NULL, &leaf_desc, NULL, 0), 0);
    fb_table_t t = fb_root(o.data, o.size);
    assert_int_equal(fb_get_i32(&t, LEAF_WEIGHT, 7), 42);
    free(o.data);
}

/* ---- damaged and hostile bytes ------------------------------------------ */

/* Verify a mutated copy; accepted buffers must read without straying. */
static int try_mutant(const uint8_t *src, size_t size, uint64_t *sink)
{
    char why[512] = "";
    uint8_t *copy = malloc(size ? size : 1);
    assert_non_null(copy);
    memcpy(copy, src, size);
    int ok = fb_verify(copy, size, TEST_IDENTIFIER, &root_desc, why,
                       sizeof why) == 0;
    if (ok)
        *sink += walk_root(copy, size);
    else if (!why[0])
        fail_msg("refused without a message (size %zu)", size);
    free(copy);
    return ok;
}

static void test_every_truncation(void **state)
{
    (void)state;
    uint64_t sink = 0;
    owned_t o = canonical();
    /* The last object is the string "x": length, 'x', NUL, 2 bytes of
     * padding.  Losing only padding is harmless; anything more is not. */
    for (size_t n = 0; n < o.size; n++)
        if (try_mutant(o.data, n, &sink))
            assert_true(n > o.size - 3);
    free(o.data);
}

static void test_every_byte_flip(void **state)
{
    (void)state;
    uint64_t sink = 0;
    size_t accepted = 0;
    owned_t o = canonical();
    for (size_t i = 0; i < o.size; i++) {
        for (unsigned x = 1; x < 256; x++) {
            o.data[i] ^= (uint8_t)x;
            accepted += (size_t)try_mutant(o.data, o.size, &sink);
            o.data[i] ^= (uint8_t)x;
        }
    }
    /* Plenty of changes are harmless (scalars, string bytes, padding). */
    assert_true(accepted > 0 && accepted < o.size * 255);
    print_message("byte flips: %zu of %zu accepted (checksum %llx)\n",
                  accepted, o.size * 255, (unsigned long long)sink);
    free(o.data);
}

static void test_hostile_vtable(void **state)
{
    (void)state;
    owned_t o = canonical();
    fb_table_t r = fb_root(o.data, o.size);
    put_u32(o.data + r.pos, 0x7fffffffu); /* vtable far before the start */
    expect_refused(&o, "vtable offset points outside the buffer");
    put_u32(o.data + r.pos, (uint32_t)-4096); /* far past the end */
    expect_refused(&o, "vtable offset points outside the buffer");
    put_u32(o.data + r.pos, r.pos - r.vtable + 1);
    expect_refused(&o, "not 2-byte aligned");
    put_u32(o.data + r.pos, r.pos - r.vtable);
    o.data[r.vtable] = 3; /* vtable size odd */
    expect_refused(&o, "vtable size 3");
    free(o.data);
}

static void test_hostile_vector_length(void **state)
{
    (void)state;
    uint32_t n;
    owned_t o = canonical();
    fb_table_t r = fb_root(o.data, o.size);
    size_t count_at = (size_t)(fb_get_vector(&r, ROOT_LONGS, &n) - o.data) - 4;
    put_u32(o.data + count_at, 0xffffffffu);
    expect_refused(&o, "Root.longs: vector of 4294967295 elements of 8 bytes "
                       "runs past the end of the buffer");
    put_u32(o.data + count_at, 0x20000000u); /* 8 * n wraps in 32 bits */
    expect_refused(&o, "runs past the end of the buffer");
    free(o.data);
}

static void test_message_path(void **state)
{
    (void)state;
    char why[512], want[160];
    owned_t o = canonical();
    fb_table_t r = fb_root(o.data, o.size);
    fb_table_t leaf = fb_vector_table(&r, ROOT_LEAVES, 1);
    size_t s = target_of(&o, field_offset(&leaf, LEAF_NAME));
    put_u32(o.data + s, 1000);
    assert_int_equal(verify_root_desc(&o, why, sizeof why), -1);
    snprintf(want, sizeof want, "Root.leaves[1].name: string of 1000 bytes "
             "runs past the end of the buffer (offset %zu, size %zu)", s,
             o.size);
    assert_string_equal(why, want);
    put_u32(o.data + s, 1);
    o.data[s + 5] = 'X'; /* over "b"'s NUL */
    expect_refused(&o, "Root.leaves[1].name: string is not NUL-terminated");
    free(o.data);
}

static void test_hostile_offsets(void **state)
{
    (void)state;
    owned_t o = canonical();
    fb_table_t r = fb_root(o.data, o.size);
    size_t at = field_offset(&r, ROOT_NAME);
    put_u32(o.data + at, 0);
    expect_refused(&o, "Root.name: offset is 0");
    put_u32(o.data + at, 0xfffffff0u);
    expect_refused(&o, "Root.name: offset 4294967280 points past the end");
    put_u32(o.data + at, 2); /* misaligned target */
    expect_refused(&o, "Root.name: string is not 4-byte aligned");
    free(o.data);
    o = canonical();
    put_u32(o.data, 2);
    expect_refused(&o, "Root: table is not 4-byte aligned");
    put_u32(o.data, (uint32_t)o.size);
    expect_refused(&o, "points past the end");
    free(o.data);
}

static void test_hostile_union(void **state)
{
    (void)state;
    owned_t o = canonical();
    fb_table_t r = fb_root(o.data, o.size);
    size_t type_at = field_offset(&r, ROOT_CHOICE_TYPE);
    o.data[type_at] = 3;
    expect_refused(&o, "Root.choice: unknown union type 3 (known: 1..2)");
    o.data[type_at] = CHOICE_NONE;
    expect_refused(&o, "Root.choice: union value present but its type is NONE");
    free(o.data);
}

static void test_hostile_nested(void **state)
{
    (void)state;
    uint32_t n;
    char why[512];
    owned_t o = canonical();
    fb_table_t r = fb_root(o.data, o.size);
    uint8_t *nested = (uint8_t *)fb_get_vector(&r, ROOT_NESTED, &n);
    put_u32(nested, n); /* nested root points past the nested end */
    assert_int_equal(verify_root_desc(&o, why, sizeof why), -1);
    assert_non_null(strstr(why, "Root.nested(Leaf): offset"));
    assert_non_null(strstr(why, "in the nested buffer at"));
    free(o.data);
}

static void test_bad_identifier_and_sizes(void **state)
{
    (void)state;
    char why[512];
    owned_t o = canonical();
    assert_int_equal(fb_verify(o.data, o.size, "CDGR", &root_desc, why,
                               sizeof why), -1);
    assert_non_null(strstr(why, "file identifier is \"CDTS\", expected "
                                "\"CDGR\""));
    /* Refused from the size alone: no byte past o.size is read. */
    assert_int_equal(fb_verify(o.data, (size_t)1 << 31, NULL, &root_desc, why,
                               sizeof why), -1);
    assert_non_null(strstr(why, "larger than 2 GiB"));
    assert_int_equal(fb_verify(NULL, 0, NULL, &root_desc, why, sizeof why), -1);
    assert_int_equal(fb_verify(o.data, 3, NULL, &root_desc, why, sizeof why),
                     -1);
    /* A tiny message buffer truncates, never overflows. */
    assert_int_equal(fb_verify(o.data, 3, NULL, &root_desc, why, 5), -1);
    assert_int_equal(strlen(why), 4);
    free(o.data);
}

/* table Node { kids: [Node]; next: Node; } */
static const fb_table_desc_t node_desc;
static const fb_field_desc_t node_fields[2] = {
    {FB_VECTOR_TABLE, .table = &node_desc, .name = "kids"},
    {FB_TABLE, .table = &node_desc, .name = "next"},
};
static const fb_table_desc_t node_desc = {"Node", 2, node_fields};

/* Each level refers twice to the level below: 2^levels paths through a
 * buffer of a few hundred bytes.  The table count must stop it. */
static void test_shared_offsets_dag(void **state)
{
    (void)state;
    char why[512];
    fb_builder_t b;
    fb_builder_init(&b);
    fb_table_start(&b, 2);
    fb_ref_t node = fb_table_end(&b);
    for (int level = 0; level < FB_MAX_DEPTH - 2; level++) {
        fb_ref_t kids[2] = {node, node};
        fb_ref_t v = fb_vector_refs(&b, kids, 2);
        fb_table_start(&b, 2);
        fb_add_ref(&b, 0, v);
        node = fb_table_end(&b);
    }
    owned_t o = take(&b, node, NULL);
    assert_true(o.size < 2048);
    assert_int_equal(fb_verify(o.data, o.size, NULL, &node_desc, why,
                               sizeof why), -1);
    assert_non_null(strstr(why, "more than 1000000 tables"));
    free(o.data);
}

static owned_t chain(int tables)
{
    fb_builder_t b;
    fb_builder_init(&b);
    fb_ref_t node = 0;
    for (int i = 0; i < tables; i++) {
        fb_table_start(&b, 2);
        fb_add_ref(&b, 1, node);
        node = fb_table_end(&b);
    }
    return take(&b, node, NULL);
}

static void test_depth_limit(void **state)
{
    (void)state;
    char why[512];
    owned_t o = chain(FB_MAX_DEPTH);
    assert_int_equal(fb_verify(o.data, o.size, NULL, &node_desc, why,
                               sizeof why), 0);
    free(o.data);
    o = chain(FB_MAX_DEPTH + 1);
    assert_int_equal(fb_verify(o.data, o.size, NULL, &node_desc, why,
                               sizeof why), -1);
    assert_non_null(strstr(why, "tables nested deeper than 32"));
    assert_non_null(strstr(why, "Node.next.next.next"));
    free(o.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_union_members),
        cmocka_unit_test(test_defaults_omitted),
        cmocka_unit_test(test_negative_zero_kept),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_builder_misuse),
        cmocka_unit_test(test_null_string_is_absent),
        cmocka_unit_test(test_old_writer),
        cmocka_unit_test(test_vtable_after_table),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_every_byte_flip),
        cmocka_unit_test(test_hostile_vtable),
        cmocka_unit_test(test_hostile_vector_length),
        cmocka_unit_test(test_message_path),
        cmocka_unit_test(test_hostile_offsets),
        cmocka_unit_test(test_hostile_union),
        cmocka_unit_test(test_hostile_nested),
        cmocka_unit_test(test_bad_identifier_and_sizes),
        cmocka_unit_test(test_shared_offsets_dag),
        cmocka_unit_test(test_depth_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
