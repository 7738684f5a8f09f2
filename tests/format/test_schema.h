/*
 * test_schema.h -- tests/format/test.fbs as flatbuf.c descriptors, and the
 * canonical buffer (the content of tests/format/test_data.json) built with
 * our builder.  Shared by test_flatbuf.c and fb_dump.c.
 */
#ifndef CDNN_TESTS_FORMAT_TEST_SCHEMA_H
#define CDNN_TESTS_FORMAT_TEST_SCHEMA_H

#include <cdnn_sdk/flatbuf.h>

#include <string.h>

#define TEST_IDENTIFIER "CDTS"

enum { LEAF_NAME, LEAF_WEIGHT, LEAF_FIELDS };
enum { OTHER_X, OTHER_FLAG, OTHER_FIELDS };
enum {
    ROOT_B, ROOT_I8, ROOT_U8, ROOT_U16, ROOT_I32, ROOT_I64, ROOT_U64,
    ROOT_F64, ROOT_NAME, ROOT_LONGS, ROOT_PAIRS, ROOT_LEAVES, ROOT_CHILD,
    ROOT_CHOICE_TYPE, ROOT_CHOICE, ROOT_NESTED, ROOT_NAMES, ROOT_FIELDS
};
enum { CHOICE_NONE, CHOICE_LEAF, CHOICE_OTHER };

/* Schema defaults (test.fbs). */
#define LEAF_WEIGHT_DEFAULT 7
#define ROOT_I8_DEFAULT (-1)
#define ROOT_U16_DEFAULT 3
#define ROOT_F64_DEFAULT 1.5

/* struct Pair { tag: ubyte; value: long; }: 7 bytes of padding. */
#define PAIR_BYTES 16

static const fb_field_desc_t leaf_fields[LEAF_FIELDS] = {
    [LEAF_NAME] = {FB_STRING, .name = "name"},
    [LEAF_WEIGHT] = {FB_SCALAR, 4, .name = "weight"},
};
static const fb_table_desc_t leaf_desc = {"Leaf", LEAF_FIELDS, leaf_fields};

static const fb_field_desc_t other_fields[OTHER_FIELDS] = {
    [OTHER_X] = {FB_SCALAR, 8, .name = "x"},
    [OTHER_FLAG] = {FB_SCALAR, 1, .name = "flag"},
};
static const fb_table_desc_t other_desc = {"Other", OTHER_FIELDS,
                                           other_fields};

static const fb_table_desc_t *const choice_types[] = {&leaf_desc,
                                                      &other_desc};

static const fb_field_desc_t root_fields[ROOT_FIELDS] = {
    [ROOT_B] = {FB_SCALAR, 1, .name = "b"},
    [ROOT_I8] = {FB_SCALAR, 1, .name = "i8v"},
    [ROOT_U8] = {FB_SCALAR, 1, .name = "u8v"},
    [ROOT_U16] = {FB_SCALAR, 2, .name = "u16v"},
    [ROOT_I32] = {FB_SCALAR, 4, .name = "i32v"},
    [ROOT_I64] = {FB_SCALAR, 8, .name = "i64v"},
    [ROOT_U64] = {FB_SCALAR, 8, .name = "u64v"},
    [ROOT_F64] = {FB_SCALAR, 8, .name = "f64v"},
    [ROOT_NAME] = {FB_STRING, .name = "name"},
    [ROOT_LONGS] = {FB_VECTOR, 8, 8, .name = "longs"},
    [ROOT_PAIRS] = {FB_VECTOR, PAIR_BYTES, 8, .name = "pairs"},
    [ROOT_LEAVES] = {FB_VECTOR_TABLE, .table = &leaf_desc, .name = "leaves"},
    [ROOT_CHILD] = {FB_TABLE, .table = &leaf_desc, .name = "child"},
    [ROOT_CHOICE_TYPE] = {FB_UNION_TYPE, 1, .name = "choice_type"},
    [ROOT_CHOICE] = {FB_UNION, .union_types = choice_types,
                     .union_type_count = 2, .name = "choice"},
    [ROOT_NESTED] = {FB_NESTED, 1, 1, .table = &leaf_desc, .name = "nested"},
    [ROOT_NAMES] = {FB_VECTOR_STRING, .name = "names"},
};
static const fb_table_desc_t root_desc = {"Root", ROOT_FIELDS, root_fields};

static inline fb_ref_t build_leaf(fb_builder_t *b, const char *name,
                                  int32_t weight)
{
    fb_ref_t n = fb_string(b, name);
    fb_table_start(b, LEAF_FIELDS);
    fb_add_ref(b, LEAF_NAME, n);
    fb_add_i32(b, LEAF_WEIGHT, weight, LEAF_WEIGHT_DEFAULT);
    return fb_table_end(b);
}

static inline void pack_pair(uint8_t *p, uint8_t tag, int64_t value)
{
    uint64_t u = (uint64_t)value;
    memset(p, 0, PAIR_BYTES);
    p[0] = tag;
    for (int i = 0; i < 8; i++)
        p[8 + i] = (uint8_t)(u >> (8 * i));
}

/* The nested Leaf {name: "inner", weight: 3} as a buffer of its own. */
static inline int build_inner(fb_builder_t *nb, const uint8_t **data,
                              size_t *size)
{
    fb_builder_init(nb);
    return fb_finish(nb, build_leaf(nb, "inner", 3), NULL, data, size);
}

/* Objects first (back to front), then the root table. */
static inline void build_root_children(fb_builder_t *b, fb_ref_t *refs)
{
    static const int64_t longs[] = {1, -2, 3};
    uint8_t pairs[2 * PAIR_BYTES];
    fb_builder_t nb;
    const uint8_t *inner;
    size_t inner_size;
    pack_pair(pairs, 1, -5);
    pack_pair(pairs + PAIR_BYTES, 2, 6);
    fb_ref_t names[3] = {fb_string(b, "x"), fb_string(b, ""),
                         fb_string(b, "yz")};
    refs[ROOT_NAMES] = fb_vector_refs(b, names, 3);
    refs[ROOT_NESTED] = build_inner(&nb, &inner, &inner_size) == 0
                            ? fb_bytes(b, inner, inner_size) : 0;
    fb_builder_free(&nb);
    fb_table_start(b, OTHER_FIELDS);
    fb_add_f64(b, OTHER_X, 2.5, 0);
    fb_add_bool(b, OTHER_FLAG, 1, 0);
    refs[ROOT_CHOICE] = fb_table_end(b);
    refs[ROOT_CHILD] = build_leaf(b, NULL, 9);
    fb_ref_t leaves[2] = {build_leaf(b, "a", 7), build_leaf(b, "b", 0)};
    refs[ROOT_LEAVES] = fb_vector_refs(b, leaves, 2);
    refs[ROOT_PAIRS] = fb_vector_structs(b, pairs, PAIR_BYTES, 8, 2);
    refs[ROOT_LONGS] = fb_vector_i64(b, longs, 3);
    refs[ROOT_NAME] = fb_string(b, "root");
}

/* The content of tests/format/test_data.json. */
static inline int build_canonical(fb_builder_t *b, const uint8_t **data,
                                  size_t *size)
{
    fb_ref_t refs[ROOT_FIELDS] = {0};
    build_root_children(b, refs);
    fb_table_start(b, ROOT_FIELDS);
    fb_add_bool(b, ROOT_B, 1, 0);
    fb_add_i8(b, ROOT_I8, -128, ROOT_I8_DEFAULT);
    fb_add_u8(b, ROOT_U8, 255, 0);
    fb_add_u16(b, ROOT_U16, 65535, ROOT_U16_DEFAULT);
    fb_add_i32(b, ROOT_I32, INT32_MIN, 0);
    fb_add_i64(b, ROOT_I64, INT64_MIN, 0);
    fb_add_u64(b, ROOT_U64, UINT64_MAX, 0);
    fb_add_f64(b, ROOT_F64, -0.25, ROOT_F64_DEFAULT);
    for (int f = ROOT_NAME; f < ROOT_FIELDS; f++)
        if (f != ROOT_CHOICE_TYPE)
            fb_add_ref(b, f, refs[f]);
    fb_add_u8(b, ROOT_CHOICE_TYPE, CHOICE_OTHER, CHOICE_NONE);
    return fb_finish(b, fb_table_end(b), TEST_IDENTIFIER, data, size);
}

/* Read every field of a verified Root through every accessor; the sum
 * keeps the reads from being optimised away.  Used on mutated buffers that
 * passed fb_verify: the readers must not stray whatever they hold. */
/* A double's bits: converting an arbitrary double to an integer is UB. */
static inline uint64_t dbits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static inline uint64_t walk_leaf(const fb_table_t *t)
{
    uint32_t n = 0;
    const char *s = fb_get_string(t, LEAF_NAME, &n);
    return (s ? (uint64_t)n + (unsigned char)s[n] : 0) +
           (uint64_t)fb_get_i32(t, LEAF_WEIGHT, LEAF_WEIGHT_DEFAULT);
}

static inline uint64_t walk_vectors(const fb_table_t *r)
{
    uint64_t sum = 0;
    uint32_t n = 0, len;
    const uint8_t *p = fb_get_vector(r, ROOT_LONGS, &n);
    for (uint32_t i = 0; p && i < n; i++)
        sum += (uint64_t)fb_read_i64(p + 8 * (size_t)i);
    p = fb_get_vector(r, ROOT_PAIRS, &n);
    for (uint32_t i = 0; p && i < n; i++)
        sum += p[PAIR_BYTES * (size_t)i] +
               fb_read_u64(p + PAIR_BYTES * (size_t)i + 8);
    fb_get_vector(r, ROOT_LEAVES, &n);
    for (uint32_t i = 0; i < n; i++) {
        fb_table_t leaf = fb_vector_table(r, ROOT_LEAVES, i);
        sum += walk_leaf(&leaf);
    }
    fb_get_vector(r, ROOT_NAMES, &n);
    for (uint32_t i = 0; i < n; i++) {
        const char *s = fb_vector_string(r, ROOT_NAMES, i, &len);
        sum += s ? (uint64_t)len + (unsigned char)s[len] : 1;
    }
    return sum;
}

static inline uint64_t walk_root(const uint8_t *buf, size_t size)
{
    fb_table_t r = fb_root(buf, size), t;
    uint32_t n = 0;
    uint64_t sum = (uint64_t)fb_get_bool(r.buf ? &r : NULL, ROOT_B, 0);
    sum += (uint64_t)fb_get_i8(&r, ROOT_I8, ROOT_I8_DEFAULT) +
           fb_get_u8(&r, ROOT_U8, 0) +
           fb_get_u16(&r, ROOT_U16, ROOT_U16_DEFAULT) +
           (uint64_t)fb_get_i32(&r, ROOT_I32, 0) +
           (uint64_t)fb_get_i64(&r, ROOT_I64, 0) + fb_get_u64(&r, ROOT_U64, 0) +
           dbits(fb_get_f64(&r, ROOT_F64, ROOT_F64_DEFAULT)) +
           (uint64_t)fb_has(&r, ROOT_NAME);
    if (fb_get_string(&r, ROOT_NAME, &n))
        sum += n;
    sum += walk_vectors(&r);
    t = fb_get_table(&r, ROOT_CHILD);
    sum += walk_leaf(&t);
    t = fb_get_table(&r, ROOT_CHOICE);
    if (fb_get_u8(&r, ROOT_CHOICE_TYPE, 0) == CHOICE_LEAF)
        sum += walk_leaf(&t);
    else if (t.buf)
        sum += dbits(fb_get_f64(&t, OTHER_X, 0)) +
               (uint64_t)fb_get_bool(&t, OTHER_FLAG, 0);
    const uint8_t *p = fb_get_vector(&r, ROOT_NESTED, &n);
    if (p) {
        t = fb_root(p, n);
        sum += walk_leaf(&t);
    }
    return sum;
}

#endif
