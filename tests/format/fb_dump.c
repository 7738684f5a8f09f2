/*
 * fb_dump -- the C side of tests/format/crosscheck.py.
 *
 *   fb_dump build FILE   write the canonical test.fbs buffer (the content
 *                        of test_data.json) made by our builder
 *   fb_dump dump FILE    verify FILE as a test.fbs Root and print it as
 *                        JSON, every scalar with its default filled in
 *                        (the shape of flatc --strict-json --defaults-json)
 *   fb_dump fuzz FILE    every truncation and every single-byte change of
 *                        FILE (a valid buffer) must verify and then read,
 *                        or be refused with a message; run it under
 *                        ASan+UBSan
 *
 * Exit status: 0 success, 1 refused by the verifier (message on stderr),
 * 2 usage or I/O error.
 */
#include <cdnn_sdk/flatbuf.h>

#include "test_schema.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static void print_string(const char *s, uint32_t n)
{
    putchar('"');
    for (uint32_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static void print_double(double v)
{
    printf("%.17g", v);
}

static void print_leaf(const fb_table_t *t)
{
    uint32_t n;
    const char *s = fb_get_string(t, LEAF_NAME, &n);
    printf("{");
    if (s) {
        printf("\"name\": ");
        print_string(s, n);
        printf(", ");
    }
    printf("\"weight\": %" PRId32 "}",
           fb_get_i32(t, LEAF_WEIGHT, LEAF_WEIGHT_DEFAULT));
}

static void print_other(const fb_table_t *t)
{
    printf("{\"x\": ");
    print_double(fb_get_f64(t, OTHER_X, 0));
    printf(", \"flag\": %s}", fb_get_bool(t, OTHER_FLAG, 0) ? "true" : "false");
}

static void print_scalars(const fb_table_t *r)
{
    printf("\"b\": %s, ", fb_get_bool(r, ROOT_B, 0) ? "true" : "false");
    printf("\"i8v\": %d, ", fb_get_i8(r, ROOT_I8, ROOT_I8_DEFAULT));
    printf("\"u8v\": %u, ", fb_get_u8(r, ROOT_U8, 0));
    printf("\"u16v\": %u, ", fb_get_u16(r, ROOT_U16, ROOT_U16_DEFAULT));
    printf("\"i32v\": %" PRId32 ", ", fb_get_i32(r, ROOT_I32, 0));
    printf("\"i64v\": %" PRId64 ", ", fb_get_i64(r, ROOT_I64, 0));
    printf("\"u64v\": %" PRIu64 ", ", fb_get_u64(r, ROOT_U64, 0));
    printf("\"f64v\": ");
    print_double(fb_get_f64(r, ROOT_F64, ROOT_F64_DEFAULT));
}

static void print_vectors(const fb_table_t *r)
{
    uint32_t n;
    const uint8_t *p = fb_get_vector(r, ROOT_LONGS, &n);
    if (p) {
        printf(", \"longs\": [");
        for (uint32_t i = 0; i < n; i++)
            printf("%s%" PRId64, i ? ", " : "", fb_read_i64(p + 8 * i));
        printf("]");
    }
    p = fb_get_vector(r, ROOT_PAIRS, &n);
    if (p) {
        printf(", \"pairs\": [");
        for (uint32_t i = 0; i < n; i++)
            printf("%s{\"tag\": %u, \"value\": %" PRId64 "}", i ? ", " : "",
                   p[PAIR_BYTES * i], fb_read_i64(p + PAIR_BYTES * i + 8));
        printf("]");
    }
    if (fb_get_vector(r, ROOT_LEAVES, &n)) {
        printf(", \"leaves\": [");
        for (uint32_t i = 0; i < n; i++) {
            fb_table_t leaf = fb_vector_table(r, ROOT_LEAVES, i);
            printf("%s", i ? ", " : "");
            print_leaf(&leaf);
        }
        printf("]");
    }
    if (fb_get_vector(r, ROOT_NAMES, &n)) {
        printf(", \"names\": [");
        for (uint32_t i = 0; i < n; i++) {
            uint32_t len;
            const char *s = fb_vector_string(r, ROOT_NAMES, i, &len);
            printf("%s", i ? ", " : "");
            print_string(s ? s : "", len);
        }
        printf("]");
    }
}

static void print_union(const fb_table_t *r)
{
    static const char *const names[] = {"NONE", "Leaf", "Other"};
    uint8_t type = fb_get_u8(r, ROOT_CHOICE_TYPE, CHOICE_NONE);
    printf(", \"choice_type\": \"%s\"", type < 3 ? names[type] : "?");
    fb_table_t v = fb_get_table(r, ROOT_CHOICE);
    if (!v.buf)
        return;
    printf(", \"choice\": ");
    if (type == CHOICE_LEAF)
        print_leaf(&v);
    else
        print_other(&v);
}

/* The nested buffer was verified with the outer one (FB_NESTED). */
static void print_nested(const fb_table_t *r)
{
    uint32_t n;
    const uint8_t *p = fb_get_vector(r, ROOT_NESTED, &n);
    if (!p)
        return;
    fb_table_t leaf = fb_root(p, n);
    printf(", \"nested\": ");
    print_leaf(&leaf);
}

static void print_root(const fb_table_t *r)
{
    uint32_t n;
    const char *s = fb_get_string(r, ROOT_NAME, &n);
    printf("{");
    print_scalars(r);
    if (s) {
        printf(", \"name\": ");
        print_string(s, n);
    }
    print_vectors(r);
    fb_table_t child = fb_get_table(r, ROOT_CHILD);
    if (child.buf) {
        printf(", \"child\": ");
        print_leaf(&child);
    }
    print_union(r);
    print_nested(r);
    printf("}\n");
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *nb = realloc(buf, cap *= 2);
        if (!nb)
            free(buf);
        buf = nb;
    }
    fclose(f);
    *size = n;
    return buf;
}

static int dump(const char *path)
{
    size_t size;
    char why[512];
    uint8_t *buf = read_file(path, &size);
    if (!buf) {
        fprintf(stderr, "fb_dump: cannot read %s\n", path);
        return 2;
    }
    if (fb_verify(buf, size, TEST_IDENTIFIER, &root_desc, why, sizeof why)) {
        fprintf(stderr, "fb_dump: %s: %s\n", path, why);
        free(buf);
        return 1;
    }
    fb_table_t root = fb_root(buf, size);
    print_root(&root);
    free(buf);
    return 0;
}

static int build(const char *path)
{
    fb_builder_t b;
    const uint8_t *data;
    size_t size;
    int rc = 2;
    fb_builder_init(&b);
    if (build_canonical(&b, &data, &size) != 0) {
        fprintf(stderr, "fb_dump: the builder failed\n");
    } else {
        FILE *f = fopen(path, "wb");
        int ok = f && fwrite(data, 1, size, f) == size;
        if (f && fclose(f) != 0)
            ok = 0;
        rc = ok ? 0 : 2;
        if (!ok)
            fprintf(stderr, "fb_dump: cannot write %s\n", path);
    }
    fb_builder_free(&b);
    return rc;
}

/* One mutated buffer, in an allocation of exactly its size so that the
 * sanitizers see any read past it.  Returns 1 if accepted, 0 if refused,
 * -1 if refused without a message. */
static int try_bytes(const uint8_t *src, size_t size, uint64_t *sink)
{
    char why[512];
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return -1;
    memcpy(copy, src, size);
    int ok = fb_verify(copy, size, TEST_IDENTIFIER, &root_desc, why,
                       sizeof why) == 0;
    if (ok)
        *sink += walk_root(copy, size);
    free(copy);
    return ok ? 1 : why[0] ? 0 : -1;
}

static int fuzz(const char *path)
{
    size_t size, counts[2] = {0, 0};
    uint64_t sink = 0;
    uint8_t *buf = read_file(path, &size);
    int rc = buf ? 0 : 2;
    for (size_t n = 0; buf && n < size && rc == 0; n++) {
        int r = try_bytes(buf, n, &sink);
        rc = r < 0 ? 1 : 0;
        counts[r > 0]++;
    }
    for (size_t i = 0; buf && i < size && rc == 0; i++) {
        for (unsigned x = 1; x < 256 && rc == 0; x++) {
            buf[i] ^= (uint8_t)x;
            int r = try_bytes(buf, size, &sink);
            buf[i] ^= (uint8_t)x;
            rc = r < 0 ? 1 : 0;
            counts[r > 0]++;
        }
    }
    free(buf);
    if (rc)
        fprintf(stderr, "fb_dump: %s\n", rc == 2 ? "cannot read the file"
                                                  : "refused without a message");
    else
        printf("%zu mutations accepted, %zu refused (checksum %llx)\n",
               counts[1], counts[0], (unsigned long long)sink);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "build") == 0)
        return build(argv[2]);
    if (argc == 3 && strcmp(argv[1], "dump") == 0)
        return dump(argv[2]);
    if (argc == 3 && strcmp(argv[1], "fuzz") == 0)
        return fuzz(argv[2]);
    fprintf(stderr, "usage: fb_dump build|dump|fuzz FILE\n");
    return 2;
}
