/*
 * flatbuf.c -- builder, verifier and readers for the FlatBuffers binary
 * format (see flatbuf.h for the contract).
 *
 * Layout reminders (all little-endian):
 *   buffer:  u32 root offset, [4-byte identifier], ...
 *   table:   i32 soffset (vtable = table - soffset), then inline fields
 *   vtable:  u16 vtable bytes, u16 table inline bytes, u16 per field id
 *            (offset from the table start; 0 = absent)
 *   string:  u32 length, bytes, NUL
 *   vector:  u32 count, elements
 * Offsets to strings, vectors and tables are u32 and point forward from
 * where they are stored.
 */
#include <cdnn_sdk/flatbuf.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* uoffsets are unsigned but soffsets are signed 32-bit, and the official
 * implementations cap buffers below 2 GiB; so do we. */
#define FB_MAX_SIZE 0x7fffffffu
/* A vtable is at most 0xffff bytes: 4 bytes of header, 2 per field. */
#define FB_MAX_FIELDS ((0xffff - 4) / 2)
/* Struct alignment we accept (FlatBuffers' force_align stops at 32 too). */
#define FB_MAX_STRUCT_ALIGN 32

/* ---- little-endian access (byte-wise: no alignment or aliasing UB) ---- */

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint16_t fb_read_u16(const uint8_t *p) { return (uint16_t)get_le(p, 2); }
uint32_t fb_read_u32(const uint8_t *p) { return (uint32_t)get_le(p, 4); }
uint64_t fb_read_u64(const uint8_t *p) { return get_le(p, 8); }

int64_t fb_read_i64(const uint8_t *p)
{
    uint64_t u = get_le(p, 8);
    int64_t v;
    memcpy(&v, &u, sizeof v); /* two's complement reinterpretation */
    return v;
}

double fb_read_f64(const uint8_t *p)
{
    uint64_t u = get_le(p, 8);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* The signed soffset of a table, widened so that subtracting it cannot
 * overflow. */
static int64_t read_soffset(const uint8_t *p)
{
    uint32_t u = fb_read_u32(p);
    return u >= 0x80000000u ? (int64_t)u - 0x100000000ll : (int64_t)u;
}

/* ---- building ----------------------------------------------------------- */

void fb_builder_init(fb_builder_t *b)
{
    memset(b, 0, sizeof *b);
    b->max_align = 1;
}

void fb_builder_free(fb_builder_t *b)
{
    free(b->buf);
    free(b->field_pos);
    fb_builder_init(b);
}

static void set_failed(fb_builder_t *b) { b->failed = 1; }

/* May a call proceed?  Object builders (strings, vectors, tables) need
 * to be outside a table, field adders inside one; anything after
 * fb_finish is misuse.  Misuse fails the builder (sticky). */
static int usable(fb_builder_t *b, int in_table)
{
    if (b->failed)
        return 0;
    if (b->finished || b->in_table != in_table) {
        set_failed(b);
        return 0;
    }
    return 1;
}

/* Make room for `need` more bytes in front of the data; the data keeps
 * its distance from the end, so references stay valid. */
static int reserve(fb_builder_t *b, size_t need)
{
    if (need > FB_MAX_SIZE - b->size) {
        set_failed(b);
        return -1;
    }
    size_t want = b->size + need;
    if (want <= b->cap && b->buf) /* a buffer even for 0 bytes: push */
        return 0;                 /* returns NULL only on failure */
    size_t cap = b->cap ? b->cap : 256;
    while (cap < want)
        cap *= 2;
    uint8_t *nb = malloc(cap);
    if (!nb) {
        set_failed(b);
        return -1;
    }
    if (b->size)
        memcpy(nb + cap - b->size, b->buf + b->cap - b->size, b->size);
    free(b->buf);
    b->buf = nb;
    b->cap = cap;
    return 0;
}

/* Claim n bytes at the front; the caller fills every one of them. */
static uint8_t *push(fb_builder_t *b, size_t n)
{
    if (reserve(b, n) != 0)
        return NULL;
    b->size += n;
    return b->buf + b->cap - b->size;
}

static int push_le(fb_builder_t *b, uint64_t v, size_t n)
{
    uint8_t *p = push(b, n);
    if (!p)
        return -1;
    put_le(p, v, n);
    return 0;
}

/* Zero-pad so that, once `extra` more bytes are pushed, the front is
 * aligned to `align` (a power of two).  Offsets from the end become
 * positions in the final buffer because fb_finish pads the whole buffer
 * to max_align. */
static int prep(fb_builder_t *b, size_t align, size_t extra)
{
    if (extra > FB_MAX_SIZE) {
        set_failed(b);
        return -1;
    }
    if (align > b->max_align)
        b->max_align = align;
    size_t pad = (align - ((b->size + extra) & (align - 1))) & (align - 1);
    uint8_t *p = push(b, pad);
    if (!p)
        return -1;
    memset(p, 0, pad);
    return 0;
}

fb_ref_t fb_string(fb_builder_t *b, const char *s)
{
    return s ? fb_string_len(b, s, strlen(s)) : 0;
}

fb_ref_t fb_string_len(fb_builder_t *b, const char *s, size_t len)
{
    if (!usable(b, 0))
        return 0;
    if ((!s && len) || len >= FB_MAX_SIZE) {
        set_failed(b);
        return 0;
    }
    if (prep(b, 4, len + 1) != 0)
        return 0;
    uint8_t *p = push(b, len + 1);
    if (!p)
        return 0;
    if (len)
        memcpy(p, s, len);
    p[len] = 0;
    if (push_le(b, len, 4) != 0)
        return 0;
    return (fb_ref_t)b->size;
}

/* Start a vector: align so that both the u32 count and the elements land
 * aligned, then claim the element bytes.  Returns where to write them. */
static uint8_t *vector_begin(fb_builder_t *b, size_t elem, size_t align,
                             size_t n)
{
    if (!usable(b, 0))
        return NULL;
    if (n > FB_MAX_SIZE || (elem && n > FB_MAX_SIZE / elem)) {
        set_failed(b);
        return NULL;
    }
    if (prep(b, align < 4 ? 4 : align, elem * n) != 0)
        return NULL;
    return push(b, elem * n);
}

static fb_ref_t vector_end(fb_builder_t *b, size_t n)
{
    if (push_le(b, n, 4) != 0)
        return 0;
    return (fb_ref_t)b->size;
}

/* Byte vectors are aligned to 8 so that a nested buffer stored in one is
 * as aligned in memory as the buffer it was copied from. */
fb_ref_t fb_bytes(fb_builder_t *b, const void *data, size_t n)
{
    if (!data && n && !b->failed) {
        set_failed(b);
        return 0;
    }
    uint8_t *p = vector_begin(b, 1, 8, n);
    if (!p)
        return 0;
    if (n)
        memcpy(p, data, n);
    return vector_end(b, n);
}

fb_ref_t fb_bytes_hole(fb_builder_t *b, size_t n)
{
    return vector_begin(b, 1, 8, n) ? vector_end(b, n) : 0;
}

size_t fb_vector_data_at(size_t finished_size, fb_ref_t vector)
{
    return finished_size - vector + 4;
}

fb_ref_t fb_vector_i64(fb_builder_t *b, const int64_t *v, size_t n)
{
    if (!v && n && !b->failed) {
        set_failed(b);
        return 0;
    }
    uint8_t *p = vector_begin(b, 8, 8, n);
    if (!p)
        return 0;
    for (size_t i = 0; i < n; i++)
        put_le(p + 8 * i, (uint64_t)v[i], 8);
    return vector_end(b, n);
}

fb_ref_t fb_vector_refs(fb_builder_t *b, const fb_ref_t *refs, size_t n)
{
    size_t before = b->size;
    if (!refs && n && !b->failed) {
        set_failed(b);
        return 0;
    }
    uint8_t *p = vector_begin(b, 4, 4, n);
    if (!p)
        return 0;
    for (size_t i = 0; i < n; i++) {
        /* Only objects that existed before this vector can be referred to;
         * element i sits (size - 4 i) from the end. */
        if (refs[i] == 0 || refs[i] > before) {
            memset(p, 0, 4 * n);
            set_failed(b);
            return 0;
        }
        put_le(p + 4 * i, (uint64_t)(b->size - 4 * i - refs[i]), 4);
    }
    return vector_end(b, n);
}

static int is_pow2(size_t v) { return v && !(v & (v - 1)); }

fb_ref_t fb_vector_structs(fb_builder_t *b, const void *elems, size_t elem,
                           size_t align, size_t n)
{
    if (!b->failed && (!is_pow2(align) || align > FB_MAX_STRUCT_ALIGN ||
                       elem == 0 || elem % align || (!elems && n))) {
        set_failed(b);
        return 0;
    }
    uint8_t *p = vector_begin(b, elem, align, n);
    if (!p)
        return 0;
    if (n)
        memcpy(p, elems, elem * n);
    return vector_end(b, n);
}

void fb_table_start(fb_builder_t *b, int field_count)
{
    if (!usable(b, 0))
        return;
    if (field_count < 0 || field_count > FB_MAX_FIELDS) {
        set_failed(b);
        return;
    }
    if (field_count > b->field_cap) {
        uint32_t *fp = realloc(b->field_pos, (size_t)field_count * sizeof *fp);
        if (!fp) {
            set_failed(b);
            return;
        }
        b->field_pos = fp;
        b->field_cap = field_count;
    }
    if (field_count)
        memset(b->field_pos, 0, (size_t)field_count * sizeof *b->field_pos);
    b->field_count = field_count;
    b->table_start = b->size;
    b->in_table = 1;
}

/* Common checks for every field adder: inside a table, id in range, not
 * added twice (a duplicate would silently orphan the first value). */
static int field_ok(fb_builder_t *b, int field)
{
    if (!usable(b, 1))
        return 0;
    if (field < 0 || field >= b->field_count || b->field_pos[field]) {
        set_failed(b);
        return 0;
    }
    return 1;
}

static void add_scalar(fb_builder_t *b, int field, uint64_t v, size_t n)
{
    if (!field_ok(b, field))
        return;
    if (prep(b, n, 0) != 0 || push_le(b, v, n) != 0)
        return;
    b->field_pos[field] = (uint32_t)b->size;
}

/* Checks usage even when the value is the default, so that misuse is
 * caught whatever the values. */
static void add_or_skip(fb_builder_t *b, int field, uint64_t v, size_t n,
                        int is_default)
{
    if (is_default) {
        (void)field_ok(b, field);
        return;
    }
    add_scalar(b, field, v, n);
}

void fb_add_bool(fb_builder_t *b, int field, int v, int dflt)
{
    add_or_skip(b, field, v != 0, 1, (v != 0) == (dflt != 0));
}

void fb_add_i8(fb_builder_t *b, int field, int8_t v, int8_t dflt)
{
    add_or_skip(b, field, (uint8_t)v, 1, v == dflt);
}

void fb_add_u8(fb_builder_t *b, int field, uint8_t v, uint8_t dflt)
{
    add_or_skip(b, field, v, 1, v == dflt);
}

void fb_add_u16(fb_builder_t *b, int field, uint16_t v, uint16_t dflt)
{
    add_or_skip(b, field, v, 2, v == dflt);
}

void fb_add_i32(fb_builder_t *b, int field, int32_t v, int32_t dflt)
{
    add_or_skip(b, field, (uint32_t)v, 4, v == dflt);
}

void fb_add_i64(fb_builder_t *b, int field, int64_t v, int64_t dflt)
{
    add_or_skip(b, field, (uint64_t)v, 8, v == dflt);
}

void fb_add_u64(fb_builder_t *b, int field, uint64_t v, uint64_t dflt)
{
    add_or_skip(b, field, v, 8, v == dflt);
}

/* Compared bit for bit, not with ==: -0.0 must survive a default of 0.0,
 * and a NaN equal to a NaN default is omitted deterministically. */
void fb_add_f64(fb_builder_t *b, int field, double v, double dflt)
{
    uint64_t bv, bd;
    memcpy(&bv, &v, sizeof bv);
    memcpy(&bd, &dflt, sizeof bd);
    add_or_skip(b, field, bv, 8, bv == bd);
}

void fb_add_ref(fb_builder_t *b, int field, fb_ref_t ref)
{
    if (!field_ok(b, field) || ref == 0)
        return;
    /* The target must have been finished before this table started. */
    if (ref > b->table_start) {
        set_failed(b);
        return;
    }
    if (prep(b, 4, 0) != 0 || push_le(b, b->size + 4 - ref, 4) != 0)
        return;
    b->field_pos[field] = (uint32_t)b->size;
}

/* Write the vtable in front of the finished table: trailing absent fields
 * are trimmed, as the official builders do. */
static size_t write_vtable(fb_builder_t *b, size_t obj, size_t tsize)
{
    int used = b->field_count;
    while (used > 0 && !b->field_pos[used - 1])
        used--;
    size_t vt_size = 4 + 2 * (size_t)used;
    uint8_t *p = push(b, vt_size);
    if (!p)
        return 0;
    put_le(p, vt_size, 2);
    put_le(p + 2, tsize, 2);
    for (int i = 0; i < used; i++) {
        size_t voff = b->field_pos[i] ? obj - b->field_pos[i] : 0;
        put_le(p + 4 + 2 * (size_t)i, voff, 2);
    }
    return b->size;
}

fb_ref_t fb_table_end(fb_builder_t *b)
{
    if (!usable(b, 1))
        return 0;
    /* The soffset slot; filled once the vtable's place is known. */
    if (prep(b, 4, 0) != 0 || push_le(b, 0, 4) != 0)
        return 0;
    size_t obj = b->size;
    size_t tsize = obj - b->table_start;
    if (tsize > 0xffff) {
        set_failed(b);
        return 0;
    }
    size_t vt = write_vtable(b, obj, tsize);
    if (!vt)
        return 0;
    /* vtable position - table position, both counted from the end. */
    put_le(b->buf + b->cap - obj, vt - obj, 4);
    b->in_table = 0;
    return (fb_ref_t)obj;
}

/* Copy a 4-byte identifier, NUL-padding one that is shorter. */
static void identifier_bytes(const char *id, uint8_t out[4])
{
    size_t i = 0;
    for (; i < 4 && id[i]; i++)
        out[i] = (uint8_t)id[i];
    for (; i < 4; i++)
        out[i] = 0;
}

int fb_finish(fb_builder_t *b, fb_ref_t root, const char *identifier,
              const uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    if (!usable(b, 0))
        return -1;
    if (root == 0 || root > b->size) {
        set_failed(b);
        return -1;
    }
    if (b->max_align < 4)
        b->max_align = 4;
    if (prep(b, b->max_align, identifier ? 8 : 4) != 0)
        return -1;
    if (identifier) {
        uint8_t *p = push(b, 4);
        if (!p)
            return -1;
        identifier_bytes(identifier, p);
    }
    if (push_le(b, b->size + 4 - root, 4) != 0)
        return -1;
    b->finished = 1;
    *data = b->buf + b->cap - b->size;
    *size = b->size;
    return 0;
}

int fb_finish_copy(fb_builder_t *b, fb_ref_t root, const char *identifier,
                   uint8_t **bytes, size_t *size)
{
    const uint8_t *data;
    size_t n;
    *bytes = NULL;
    if (fb_finish(b, root, identifier, &data, &n) != 0 || !(*bytes = malloc(n)))
        return -1;
    memcpy(*bytes, data, n);
    *size = n;
    return 0;
}

/* ---- verifying ---------------------------------------------------------- */

/* The path ("Graph.tensors[3].name") is kept as a stack of frames and
 * only formatted when a check fails: formatting it for every item visited
 * dominated the verifier's time. */
typedef enum pkind {
    P_NAME,   /* "%s"   the root table's name */
    P_FIELD,  /* ".%s", or ".#%d" when the field has no name */
    P_INDEX,  /* "[%u]" */
    P_PAREN,  /* "(%s)" a union's or nested buffer's table */
} pkind_t;

typedef struct pframe {
    const char *name;
    uint32_t index;
    pkind_t kind;
} pframe_t;

/* At most: the root name, then per table level (FB_MAX_DEPTH of them) a
 * field and an index or parenthesis; plus a field and index below the
 * deepest table. */
#define PATH_FRAMES (2 * FB_MAX_DEPTH + 4)
/* The formatted path is cut to this many bytes (NUL included). */
#define PATH_CAP 384

typedef struct vctx {
    const uint8_t *buf; /* the buffer being walked (maybe a nested one) */
    size_t size;
    size_t base;        /* its offset in the buffer given to fb_verify */
    int depth;          /* tables on the current path */
    size_t objects;     /* tables (and strings in vectors) visited */
    char *why;
    size_t why_cap;
    size_t nframes;     /* frames on the path; those past PATH_FRAMES are
                         * counted but not kept (cannot happen: see above) */
    pframe_t frames[PATH_FRAMES];
} vctx_t;

/* A table whose header has been checked. */
typedef struct vtab {
    uint64_t pos, vt;
    uint32_t vt_size, tsize;
} vtab_t;

/* Append one frame to path[0, *len) as snprintf would have when the
 * path was built eagerly: a frame that does not fit is cut, and the
 * path then stays full. */
static void path_append(char *path, size_t *len, const pframe_t *f)
{
    size_t old = *len;
    size_t room = PATH_CAP - old;
    int n;
    switch (f->kind) {
    case P_NAME:
        n = snprintf(path + old, room, "%s", f->name);
        break;
    case P_FIELD:
        n = f->name ? snprintf(path + old, room, ".%s", f->name)
                    : snprintf(path + old, room, ".#%d", (int)f->index);
        break;
    case P_INDEX:
        n = snprintf(path + old, room, "[%u]", (unsigned)f->index);
        break;
    default:
        n = snprintf(path + old, room, "(%s)", f->name);
        break;
    }
    if (n > 0)
        *len = (size_t)n < room ? old + (size_t)n : PATH_CAP - 1;
}

static void path_format(const vctx_t *c, char path[PATH_CAP])
{
    size_t len = 0;
    size_t kept = c->nframes < PATH_FRAMES ? c->nframes : PATH_FRAMES;
    path[0] = '\0';
    for (size_t i = 0; i < kept; i++)
        path_append(path, &len, &c->frames[i]);
}

__attribute__((format(printf, 3, 4)))
static int vfail(vctx_t *c, uint64_t at, const char *fmt, ...)
{
    if (!c->why || !c->why_cap)
        return -1;
    char path[PATH_CAP];
    path_format(c, path);
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->base)
        snprintf(c->why, c->why_cap,
                 "%s: %s (offset %llu in the nested buffer at %zu, size %zu)",
                 path, msg, (unsigned long long)at, c->base, c->size);
    else
        snprintf(c->why, c->why_cap, "%s: %s (offset %llu, size %zu)",
                 path, msg, (unsigned long long)at, c->size);
    return -1;
}

/* Push a frame; returns the depth to restore with path_pop.  Returns the
 * frame to fill, or NULL in the (unreachable) case of a full stack. */
static pframe_t *path_push(vctx_t *c, pkind_t kind, const char *name,
                           uint32_t index, size_t *old)
{
    *old = c->nframes;
    pframe_t *f = c->nframes < PATH_FRAMES ? &c->frames[c->nframes] : NULL;
    c->nframes++;
    if (f) {
        f->kind = kind;
        f->name = name;
        f->index = index;
    }
    return f;
}

static void path_pop(vctx_t *c, size_t old) { c->nframes = old; }

static int in_range(const vctx_t *c, uint64_t pos, uint64_t n)
{
    return pos <= c->size && n <= c->size - pos;
}

/* Follow the uoffset stored at `at` (already known to be in range). */
static int follow(vctx_t *c, uint64_t at, uint64_t *target)
{
    uint32_t u = fb_read_u32(c->buf + at);
    if (u == 0)
        return vfail(c, at, "offset is 0 (points at itself)");
    *target = at + u;
    if (*target >= c->size)
        return vfail(c, at, "offset %u points past the end of the buffer", u);
    return 0;
}

static int vtable_check(vctx_t *c, vtab_t *t)
{
    int64_t vt = (int64_t)t->pos - read_soffset(c->buf + t->pos);
    if (vt < 0 || !in_range(c, (uint64_t)vt, 4))
        return vfail(c, t->pos, "vtable offset points outside the buffer "
                     "(vtable at %lld)", (long long)vt);
    if (vt % 2)
        return vfail(c, t->pos, "vtable at %lld is not 2-byte aligned",
                     (long long)vt);
    t->vt = (uint64_t)vt;
    t->vt_size = fb_read_u16(c->buf + t->vt);
    t->tsize = fb_read_u16(c->buf + t->vt + 2);
    if (t->vt_size < 4 || t->vt_size % 2)
        return vfail(c, t->vt, "vtable size %u is odd or below 4", t->vt_size);
    if (!in_range(c, t->vt, t->vt_size))
        return vfail(c, t->vt, "vtable of %u bytes runs past the end of the "
                     "buffer", t->vt_size);
    if (t->tsize < 4)
        return vfail(c, t->pos, "table size %u is below 4", t->tsize);
    if (!in_range(c, t->pos, t->tsize))
        return vfail(c, t->pos, "table of %u bytes runs past the end of the "
                     "buffer", t->tsize);
    return 0;
}

static int table_header(vctx_t *c, uint64_t pos, vtab_t *t)
{
    t->pos = pos;
    if (pos % 4)
        return vfail(c, pos, "table is not 4-byte aligned");
    if (!in_range(c, pos, 4))
        return vfail(c, pos, "table runs past the end of the buffer");
    return vtable_check(c, t);
}

static uint32_t vfield(const vctx_t *c, const vtab_t *t, int id)
{
    uint64_t slot = 4 + 2 * (uint64_t)id;
    return slot + 2 <= t->vt_size ? fb_read_u16(c->buf + t->vt + slot) : 0;
}

static int verify_table(vctx_t *c, uint64_t pos, const fb_table_desc_t *d);
static int verify_root(vctx_t *c, const fb_table_desc_t *d);

static int verify_string(vctx_t *c, uint64_t pos)
{
    if (pos % 4)
        return vfail(c, pos, "string is not 4-byte aligned");
    if (!in_range(c, pos, 4))
        return vfail(c, pos, "string runs past the end of the buffer");
    uint32_t len = fb_read_u32(c->buf + pos);
    if (!in_range(c, pos + 4, (uint64_t)len + 1))
        return vfail(c, pos, "string of %u bytes runs past the end of the "
                     "buffer", len);
    if (c->buf[pos + 4 + len] != 0)
        return vfail(c, pos, "string is not NUL-terminated");
    return 0;
}

/* A vector's count and element bytes are in range and aligned; the
 * 64-bit product cannot overflow (2^32 * 255). */
static int verify_vector(vctx_t *c, uint64_t pos, unsigned elem,
                         unsigned align, uint32_t *count)
{
    if (pos % 4)
        return vfail(c, pos, "vector is not 4-byte aligned");
    if (!in_range(c, pos, 4))
        return vfail(c, pos, "vector runs past the end of the buffer");
    uint32_t n = fb_read_u32(c->buf + pos);
    if (!in_range(c, pos + 4, (uint64_t)n * elem))
        return vfail(c, pos, "vector of %u elements of %u bytes runs past "
                     "the end of the buffer", n, elem);
    if (n && align > 1 && (pos + 4) % align)
        return vfail(c, pos, "vector elements are not %u-byte aligned", align);
    *count = n;
    return 0;
}

/* Tables and strings reached through vectors are counted so that shared
 * offsets (a DAG) cannot multiply the work without bound. */
static int count_object(vctx_t *c, uint64_t pos)
{
    if (++c->objects > FB_MAX_TABLES)
        return vfail(c, pos, "more than %d tables and strings visited "
                     "(repeated or shared offsets?)", FB_MAX_TABLES);
    return 0;
}

static int verify_offset_vector(vctx_t *c, uint64_t pos,
                                const fb_table_desc_t *d)
{
    uint32_t n = 0;
    if (verify_vector(c, pos, 4, 4, &n) != 0)
        return -1;
    size_t old;
    pframe_t *f = path_push(c, P_INDEX, NULL, 0, &old);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t at = pos + 4 + 4 * (uint64_t)i, target = 0;
        if (f)
            f->index = i;
        int rc = follow(c, at, &target);
        if (rc == 0 && d)
            rc = verify_table(c, target, d);
        else if (rc == 0)
            rc = count_object(c, target) ? -1 : verify_string(c, target);
        if (rc != 0)
            return -1;
    }
    path_pop(c, old);
    return 0;
}

static int verify_nested(vctx_t *c, uint64_t pos, const fb_table_desc_t *d)
{
    uint32_t n = 0;
    if (verify_vector(c, pos, 1, 1, &n) != 0)
        return -1;
    if (!d)
        return 0;
    const uint8_t *saved_buf = c->buf;
    size_t saved_size = c->size, saved_base = c->base, old;
    c->buf += pos + 4;
    c->size = n;
    c->base += pos + 4;
    path_push(c, P_PAREN, d->name ? d->name : "nested", 0, &old);
    int rc = verify_root(c, d);
    /* Restore where we are, keeping the count (on failure the message has
     * already been written). */
    path_pop(c, old);
    c->buf = saved_buf;
    c->size = saved_size;
    c->base = saved_base;
    return rc;
}

static unsigned field_bytes(const fb_field_desc_t *f)
{
    switch (f->kind) {
    case FB_SCALAR: return f->size;
    case FB_UNION_TYPE: return 1;
    default: return 4;
    }
}

/* The union's type: by convention (flatc's) the field just before it. */
static int union_type(vctx_t *c, const vtab_t *t, int id,
                      const fb_table_desc_t *d, unsigned *type)
{
    if (id == 0 || d->fields[id - 1].kind != FB_UNION_TYPE)
        return vfail(c, t->pos, "schema descriptor: a union's type field "
                     "must be the field before it");
    uint32_t voff = vfield(c, t, id - 1);
    *type = voff ? c->buf[t->pos + voff] : 0;
    return 0;
}

static int verify_union(vctx_t *c, const vtab_t *t, int id,
                        const fb_table_desc_t *d, uint64_t at)
{
    const fb_field_desc_t *f = &d->fields[id];
    unsigned type = 0;
    uint64_t target = 0;
    if (union_type(c, t, id, d, &type) != 0)
        return -1;
    if (type == 0)
        return vfail(c, at, "union value present but its type is NONE");
    if (type > f->union_type_count || !f->union_types)
        return vfail(c, at, "unknown union type %u (known: 1..%u)", type,
                     f->union_type_count);
    const fb_table_desc_t *ud = f->union_types[type - 1];
    if (follow(c, at, &target) != 0)
        return -1;
    size_t old;
    path_push(c, P_PAREN, ud && ud->name ? ud->name : "?", 0, &old);
    if (verify_table(c, target, ud) != 0)
        return -1;
    path_pop(c, old);
    return 0;
}

/* What the field's offset points at, by kind. */
static int verify_field_value(vctx_t *c, const vtab_t *t, int id,
                              const fb_table_desc_t *d, uint64_t at)
{
    const fb_field_desc_t *f = &d->fields[id];
    uint64_t target = 0;
    uint32_t n = 0;
    switch (f->kind) {
    case FB_SCALAR:
    case FB_UNION_TYPE:
        return 0;
    case FB_UNION:
        return verify_union(c, t, id, d, at);
    default:
        break;
    }
    if (follow(c, at, &target) != 0)
        return -1;
    switch (f->kind) {
    case FB_STRING: return verify_string(c, target);
    case FB_TABLE: return verify_table(c, target, f->table);
    case FB_VECTOR:
        return verify_vector(c, target, f->size,
                             f->align ? f->align : f->size, &n);
    case FB_VECTOR_STRING: return verify_offset_vector(c, target, NULL);
    case FB_VECTOR_TABLE:
        if (!f->table)
            return vfail(c, at, "schema descriptor: no table for vector");
        return verify_offset_vector(c, target, f->table);
    case FB_NESTED: return verify_nested(c, target, f->table);
    default: return vfail(c, at, "schema descriptor: unknown kind %d",
                          (int)f->kind);
    }
}

/* A present field's inline bytes lie inside the table, after the
 * soffset, aligned to their size. */
static int verify_field(vctx_t *c, const vtab_t *t, int id,
                        const fb_table_desc_t *d)
{
    unsigned n = field_bytes(&d->fields[id]);
    uint32_t voff = vfield(c, t, id);
    if (!voff || d->fields[id].kind == FB_SKIP)
        return 0;
    if (n != 1 && n != 2 && n != 4 && n != 8)
        return vfail(c, t->pos, "schema descriptor: scalar of %u bytes", n);
    uint64_t at = t->pos + voff;
    if (voff < 4 || voff + n > t->tsize)
        return vfail(c, at, "field at table offset %u (%u bytes) lies outside "
                     "the table's %u bytes", voff, n, t->tsize);
    if (at % n)
        return vfail(c, at, "field of %u bytes is not aligned", n);
    return verify_field_value(c, t, id, d, at);
}

static int verify_table(vctx_t *c, uint64_t pos, const fb_table_desc_t *d)
{
    vtab_t t = {0, 0, 0, 0};
    if (!d)
        return vfail(c, pos, "schema descriptor: no table description");
    if (c->depth >= FB_MAX_DEPTH)
        return vfail(c, pos, "tables nested deeper than %d", FB_MAX_DEPTH);
    if (count_object(c, pos) != 0 || table_header(c, pos, &t) != 0)
        return -1;
    c->depth++;
    size_t old;
    pframe_t *pf = path_push(c, P_FIELD, NULL, 0, &old);
    for (int i = 0; i < d->field_count; i++) {
        if (pf) {
            pf->name = d->fields[i].name;
            pf->index = (uint32_t)i;
        }
        if (verify_field(c, &t, i, d) != 0)
            return -1;
    }
    path_pop(c, old);
    c->depth--;
    return 0;
}

static int verify_root(vctx_t *c, const fb_table_desc_t *d)
{
    uint64_t root = 0;
    if (c->size < 4)
        return vfail(c, 0, "buffer is too short for a root offset");
    if (follow(c, 0, &root) != 0)
        return -1;
    return verify_table(c, root, d);
}

/* Printable form of 4 identifier bytes for messages. */
static void show_identifier(const uint8_t *p, char out[5])
{
    for (int i = 0; i < 4; i++)
        out[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
    out[4] = '\0';
}

static int check_identifier(vctx_t *c, const char *identifier)
{
    uint8_t want[4];
    char got[5], exp[5];
    if (c->size < 8)
        return vfail(c, 0, "buffer is too short for a file identifier");
    identifier_bytes(identifier, want);
    if (memcmp(c->buf + 4, want, 4) == 0)
        return 0;
    show_identifier(c->buf + 4, got);
    show_identifier(want, exp);
    return vfail(c, 4, "file identifier is \"%s\", expected \"%s\"", got, exp);
}

int fb_verify(const uint8_t *buf, size_t size, const char *identifier,
              const fb_table_desc_t *root, char *why, size_t why_cap)
{
    vctx_t c;
    memset(&c, 0, sizeof c);
    c.buf = buf;
    c.size = size;
    c.why = why;
    c.why_cap = why_cap;
    if (why && why_cap)
        why[0] = '\0';
    size_t old;
    path_push(&c, P_NAME, root && root->name ? root->name : "buffer", 0, &old);
    if (!root)
        return vfail(&c, 0, "no schema descriptor");
    if (!buf)
        return vfail(&c, 0, "no buffer");
    if (size > FB_MAX_SIZE)
        return vfail(&c, 0, "buffer is larger than 2 GiB");
    if (identifier && check_identifier(&c, identifier) != 0)
        return -1;
    return verify_root(&c, root);
}

/* ---- reading ------------------------------------------------------------
 * The buffer has been verified, but each accessor still keeps to the
 * buffer's bounds, so a caller's schema mix-up yields a default rather
 * than a stray read. */

static fb_table_t table_at(const uint8_t *buf, size_t size, uint64_t pos)
{
    fb_table_t t;
    memset(&t, 0, sizeof t);
    if (!buf || pos + 4 > size)
        return t;
    int64_t vt = (int64_t)pos - read_soffset(buf + pos);
    if (vt < 0 || (uint64_t)vt + 4 > size)
        return t;
    uint16_t vs = fb_read_u16(buf + vt);
    if (vs < 4 || (uint64_t)vt + vs > size)
        return t;
    t.buf = buf;
    t.size = size;
    t.pos = (uint32_t)pos;
    t.vtable = (uint32_t)vt;
    t.vt_size = vs;
    return t;
}

fb_table_t fb_root(const uint8_t *buf, size_t size)
{
    if (!buf || size < 4 || size > FB_MAX_SIZE) {
        fb_table_t none;
        memset(&none, 0, sizeof none);
        return none;
    }
    return table_at(buf, size, fb_read_u32(buf));
}

/* Where field's n inline bytes are, or 0 when absent (a vtable shorter
 * than the id, from an older writer, means absent too). */
static uint64_t field_at(const fb_table_t *t, int field, size_t n)
{
    if (!t || !t->buf || field < 0)
        return 0;
    uint64_t slot = 4 + 2 * (uint64_t)field;
    if (slot + 2 > t->vt_size)
        return 0;
    uint16_t voff = fb_read_u16(t->buf + t->vtable + slot);
    if (!voff || (uint64_t)t->pos + voff + n > t->size)
        return 0;
    return (uint64_t)t->pos + voff;
}

/* The target of the uoffset at `at` with at least 4 bytes there, or 0. */
static uint64_t follow_at(const fb_table_t *t, uint64_t at)
{
    if (!at || at + 4 > t->size)
        return 0;
    uint32_t u = fb_read_u32(t->buf + at);
    if (!u || at + u + 4 > t->size)
        return 0;
    return at + u;
}

int fb_has(const fb_table_t *t, int field)
{
    return field_at(t, field, 1) != 0;
}

static uint64_t get_scalar(const fb_table_t *t, int field, size_t n,
                           uint64_t dflt)
{
    uint64_t at = field_at(t, field, n);
    return at ? get_le(t->buf + at, n) : dflt;
}

int fb_get_bool(const fb_table_t *t, int field, int dflt)
{
    return get_scalar(t, field, 1, dflt != 0) != 0;
}

int8_t fb_get_i8(const fb_table_t *t, int field, int8_t dflt)
{
    uint8_t u = (uint8_t)get_scalar(t, field, 1, (uint8_t)dflt);
    int8_t v;
    memcpy(&v, &u, 1);
    return v;
}

uint8_t fb_get_u8(const fb_table_t *t, int field, uint8_t dflt)
{
    return (uint8_t)get_scalar(t, field, 1, dflt);
}

uint16_t fb_get_u16(const fb_table_t *t, int field, uint16_t dflt)
{
    return (uint16_t)get_scalar(t, field, 2, dflt);
}

int32_t fb_get_i32(const fb_table_t *t, int field, int32_t dflt)
{
    uint32_t u = (uint32_t)get_scalar(t, field, 4, (uint32_t)dflt);
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

int64_t fb_get_i64(const fb_table_t *t, int field, int64_t dflt)
{
    uint64_t u = get_scalar(t, field, 8, (uint64_t)dflt);
    int64_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

uint64_t fb_get_u64(const fb_table_t *t, int field, uint64_t dflt)
{
    return get_scalar(t, field, 8, dflt);
}

double fb_get_f64(const fb_table_t *t, int field, double dflt)
{
    uint64_t at = field_at(t, field, 8);
    return at ? fb_read_f64(t->buf + at) : dflt;
}

const char *fb_get_string(const fb_table_t *t, int field, uint32_t *len)
{
    uint64_t s = t ? follow_at(t, field_at(t, field, 4)) : 0;
    uint32_t n = s ? fb_read_u32(t->buf + s) : 0;
    if (len)
        *len = 0;
    if (!s || s + 4 + (uint64_t)n + 1 > t->size || t->buf[s + 4 + n])
        return NULL;
    if (len)
        *len = n;
    return (const char *)t->buf + s + 4;
}

const uint8_t *fb_get_vector(const fb_table_t *t, int field, uint32_t *count)
{
    uint64_t v = t ? follow_at(t, field_at(t, field, 4)) : 0;
    uint32_t n = v ? fb_read_u32(t->buf + v) : 0;
    if (count)
        *count = 0;
    /* Every element has at least one byte. */
    if (!v || n > t->size - v - 4)
        return NULL;
    if (count)
        *count = n;
    return t->buf + v + 4;
}

/* Where element i of a vector of offsets points, or 0. */
static uint64_t vector_elem(const fb_table_t *t, int field, uint32_t i)
{
    uint32_t n;
    const uint8_t *p = fb_get_vector(t, field, &n);
    if (!p || i >= n)
        return 0;
    return follow_at(t, (uint64_t)(p - t->buf) + 4 * (uint64_t)i);
}

fb_table_t fb_vector_table(const fb_table_t *t, int field, uint32_t i)
{
    uint64_t e = vector_elem(t, field, i);
    return table_at(e ? t->buf : NULL, e ? t->size : 0, e);
}

const char *fb_vector_string(const fb_table_t *t, int field, uint32_t i,
                             uint32_t *len)
{
    uint64_t s = vector_elem(t, field, i);
    uint32_t n = s ? fb_read_u32(t->buf + s) : 0;
    if (len)
        *len = 0;
    if (!s || s + 4 + (uint64_t)n + 1 > t->size || t->buf[s + 4 + n])
        return NULL;
    if (len)
        *len = n;
    return (const char *)t->buf + s + 4;
}

fb_table_t fb_get_table(const fb_table_t *t, int field)
{
    uint64_t p = t ? follow_at(t, field_at(t, field, 4)) : 0;
    return table_at(p ? t->buf : NULL, p ? t->size : 0, p);
}
