/*
 * flatbuf.h -- a small FlatBuffers-format runtime: builder, verifier,
 * readers.
 *
 * Debian does not package flatcc, so cdnn carries its own.  It implements
 * the FlatBuffers binary format (little-endian; a root uoffset, an optional
 * 4-byte file identifier; tables reached through a signed offset to their
 * vtable; strings, vectors and sub-tables through forward uoffsets) well
 * enough for cdnn's schemas, and its output is decoded by Debian's flatc and
 * python3-flatbuffers (tests/format).  It is part of the provider SDK so
 * that a provider's payload can be a FlatBuffers table verified the way
 * cdnn verifies its own artifacts (the CPU provider's is).
 *
 * Building.  Like the official builders it writes back to front: children
 * first, then the table that refers to them; references (fb_ref_t) are
 * offsets from the end of the buffer.  Output is a pure function of the
 * calls made: no timestamps, no pointer values, padding always zero,
 * vtables never shared.  Errors (allocation, misuse) are sticky: every call
 * after one is a no-op and fb_finish reports it.
 *
 * Reading.  Nothing is read from untrusted bytes before fb_verify has
 * walked them against a schema descriptor (fb_table_desc_t): every offset,
 * length, alignment, vtable and nesting depth is checked.  After that the
 * accessors may be used without further checks; they return defaults for
 * absent fields.  A buffer made by another writer (flatc, another language)
 * verifies and reads the same way.
 */
#ifndef CDNN_SDK_FLATBUF_H
#define CDNN_SDK_FLATBUF_H

#include <stddef.h>
#include <stdint.h>

/* ---- building ----------------------------------------------------------- */

typedef uint32_t fb_ref_t; /* 0 means "nothing" */

typedef struct fb_builder {
    uint8_t *buf;     /* data lives in buf[cap - size, cap) */
    size_t cap, size;
    size_t max_align;
    int failed;       /* sticky: out of memory, misuse, or too large */
    int finished;     /* fb_finish succeeded; further calls are misuse */
    /* the table being built */
    uint32_t *field_pos; /* per field: offset from end of its value, or 0 */
    int field_count, field_cap;
    size_t table_start;
    int in_table;
} fb_builder_t;

void fb_builder_init(fb_builder_t *b);
void fb_builder_free(fb_builder_t *b);

/** s NULL gives 0 ("nothing"), so that fb_add_ref leaves the field absent. */
fb_ref_t fb_string(fb_builder_t *b, const char *s);
fb_ref_t fb_string_len(fb_builder_t *b, const char *s, size_t len);
/** A vector of bytes ([ubyte]); also how nested buffers are stored, so
 * the bytes are placed 8-byte aligned (a nested buffer keeps its
 * alignment). */
fb_ref_t fb_bytes(fb_builder_t *b, const void *data, size_t n);
/** A [ubyte] vector of n bytes, laid out as fb_bytes would, whose elements
 * are left unwritten: for large parts (a plan's body, a container's parts)
 * that the caller places itself, after fb_finish, at
 * fb_vector_data_at(size, ref) -- so that encoding copies them once, and
 * checking an envelope copies them not at all.  Never read a hole. */
fb_ref_t fb_bytes_hole(fb_builder_t *b, size_t n);
/** Where a vector's elements lie in a finished buffer of finished_size. */
size_t fb_vector_data_at(size_t finished_size, fb_ref_t vector);
fb_ref_t fb_vector_i64(fb_builder_t *b, const int64_t *v, size_t n);
/** A vector of tables or strings. */
fb_ref_t fb_vector_refs(fb_builder_t *b, const fb_ref_t *refs, size_t n);
/** A vector of structs, each already laid out little-endian, elem bytes
 * long and aligned to align. */
fb_ref_t fb_vector_structs(fb_builder_t *b, const void *elems, size_t elem,
                           size_t align, size_t n);

/* Strings and vectors must be made before fb_table_start (as with every
 * FlatBuffers builder: tables cannot interleave); misuse -- nesting tables,
 * a field outside a table or out of range or added twice, a ref that is
 * not an earlier object, anything after fb_finish -- fails the builder. */

/** Start a table with field ids 0 .. field_count - 1. */
void fb_table_start(fb_builder_t *b, int field_count);
/* Scalars equal to their schema default are not written (as flatc does). */
void fb_add_bool(fb_builder_t *b, int field, int v, int dflt);
void fb_add_i8(fb_builder_t *b, int field, int8_t v, int8_t dflt);
void fb_add_u8(fb_builder_t *b, int field, uint8_t v, uint8_t dflt);
void fb_add_u16(fb_builder_t *b, int field, uint16_t v, uint16_t dflt);
void fb_add_i32(fb_builder_t *b, int field, int32_t v, int32_t dflt);
void fb_add_i64(fb_builder_t *b, int field, int64_t v, int64_t dflt);
void fb_add_u64(fb_builder_t *b, int field, uint64_t v, uint64_t dflt);
void fb_add_f64(fb_builder_t *b, int field, double v, double dflt);
/** A string, vector or table field; ref 0 leaves the field absent. */
void fb_add_ref(fb_builder_t *b, int field, fb_ref_t ref);
fb_ref_t fb_table_end(fb_builder_t *b);

/**
 * Finish with root table `root` and a 4-byte identifier (NULL: none).
 * On success *data points into the builder (valid until fb_builder_free)
 * and returns 0; returns -1 if any earlier call failed.
 */
int fb_finish(fb_builder_t *b, fb_ref_t root, const char *identifier,
              const uint8_t **data, size_t *size);

/**
 * fb_finish, then hand the bytes over: *bytes is a malloc'd copy (free it)
 * that outlives the builder.  Returns -1, setting *bytes NULL, if any
 * earlier call failed or the copy cannot be allocated.
 */
int fb_finish_copy(fb_builder_t *b, fb_ref_t root, const char *identifier,
                   uint8_t **bytes, size_t *size);

/* ---- schema descriptors (for the verifier) ------------------------------ */

typedef enum fb_kind {
    FB_SCALAR,        /* size 1, 2, 4 or 8 */
    FB_STRING,
    FB_TABLE,         /* table: desc */
    FB_VECTOR,        /* of scalars or structs: size, align */
    FB_VECTOR_STRING,
    FB_VECTOR_TABLE,  /* table: desc */
    FB_UNION_TYPE,    /* the u8 type field of a union */
    FB_UNION,         /* union value; union_types[type - 1]; its type field
                       * is the field just before it (as flatc numbers them) */
    FB_NESTED,        /* [ubyte] holding a buffer that must verify as desc */
    FB_SKIP,          /* not examined: for a descriptor that checks only
                       * some fields first (e.g. an artifact's version and
                       * digest); never read a skipped field through it */
} fb_kind_t;

typedef struct fb_table_desc fb_table_desc_t;

typedef struct fb_field_desc {
    fb_kind_t kind;
    uint8_t size;  /* scalar or element bytes */
    uint8_t align; /* element alignment for FB_VECTOR of structs */
    const fb_table_desc_t *table;          /* FB_TABLE, FB_VECTOR_TABLE, FB_NESTED */
    const fb_table_desc_t *const *union_types; /* FB_UNION: by type - 1 */
    uint8_t union_type_count;
    const char *name; /* for messages; NULL: "#id" */
} fb_field_desc_t;

struct fb_table_desc {
    const char *name; /* for messages */
    int field_count;
    const fb_field_desc_t *fields; /* by field id */
};

/* ---- verifying and reading ---------------------------------------------- */

typedef struct fb_table {
    const uint8_t *buf;
    size_t size;
    uint32_t pos;      /* the table's offset in buf */
    uint32_t vtable;   /* its vtable's offset */
    uint16_t vt_size;  /* vtable bytes */
} fb_table_t;

/** Limits the verifier enforces (hostile input may nest or repeat).
 * FB_MAX_TABLES counts every table visited, and every string reached
 * through a vector, however many times shared offsets lead to it. */
#define FB_MAX_DEPTH 32
#define FB_MAX_TABLES 1000000

/**
 * Verify buf[0, size) as a buffer whose root is a `root` table.  identifier
 * (NULL: not checked) must match bytes 4..7.  Returns 0 on success, or -1
 * with a message in why (what and where, e.g. "Graph.tensors[3].name: string
 * of 1000 bytes runs past the end of the buffer (offset 1234, size 1200)";
 * inside an FB_NESTED buffer the path reads "Container.graph(Graph)...").
 * why may be NULL; a short why_cap truncates the message.
 *
 * Beyond bounds and alignment it refuses what no FlatBuffers writer makes:
 * a uoffset of 0, a union value whose type is NONE, a union type above
 * union_type_count.  Fields past the descriptor's field_count (a newer
 * writer) are ignored.  Nested buffers are checked from their own start
 * (alignment included), without an identifier check.
 */
int fb_verify(const uint8_t *buf, size_t size, const char *identifier,
              const fb_table_desc_t *root, char *why, size_t why_cap);

/** The root table of a verified buffer. */
fb_table_t fb_root(const uint8_t *buf, size_t size);

/** True when the field is present. */
int fb_has(const fb_table_t *t, int field);

int fb_get_bool(const fb_table_t *t, int field, int dflt);
int8_t fb_get_i8(const fb_table_t *t, int field, int8_t dflt);
uint8_t fb_get_u8(const fb_table_t *t, int field, uint8_t dflt);
uint16_t fb_get_u16(const fb_table_t *t, int field, uint16_t dflt);
int32_t fb_get_i32(const fb_table_t *t, int field, int32_t dflt);
int64_t fb_get_i64(const fb_table_t *t, int field, int64_t dflt);
uint64_t fb_get_u64(const fb_table_t *t, int field, uint64_t dflt);
double fb_get_f64(const fb_table_t *t, int field, double dflt);

/** A string field: pointer to its bytes (NUL-terminated) and length, or
 * NULL when absent. */
const char *fb_get_string(const fb_table_t *t, int field, uint32_t *len);

/** A vector field: pointer to its first element and count; NULL when absent. */
const uint8_t *fb_get_vector(const fb_table_t *t, int field, uint32_t *count);

/** Element i of a vector of tables. */
fb_table_t fb_vector_table(const fb_table_t *t, int field, uint32_t i);
/** Element i of a vector of strings. */
const char *fb_vector_string(const fb_table_t *t, int field, uint32_t i,
                             uint32_t *len);
/** A sub-table field (or a union's value); .buf is NULL when absent. */
fb_table_t fb_get_table(const fb_table_t *t, int field);

/** Little-endian loads from verified bytes. */
uint16_t fb_read_u16(const uint8_t *p);
uint32_t fb_read_u32(const uint8_t *p);
uint64_t fb_read_u64(const uint8_t *p);
int64_t fb_read_i64(const uint8_t *p);
double fb_read_f64(const uint8_t *p);

#endif
