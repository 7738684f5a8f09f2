/*
 * graph_json.c -- the JSON form of a graph, through its binary form.
 *
 * Both directions go through graph.fbs bytes, driven by one description of
 * the schema (names, kinds, enums) below:
 *
 *   encode: graph -> graph_format_encode -> walk the bytes -> JSON text
 *   decode: JSON text -> jansson -> FlatBuffers builder -> graph_format_decode
 *
 * so what is left out, what is checked and how a graph is rebuilt are
 * decided in one place (graph_format.c) for both forms.
 */
#include "format/graph_json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/flatbuf.h>
#include <jansson.h>

#include "core/error.h"
#include "format/blob.h"
#include "format/graph_format.h"
#include "graph/ops.h"

#define SOURCE "graph JSON"

/* ---- the schema, as the JSON form needs it ------------------------------- */

typedef enum jkind {
    J_BOOL, J_ENUM, J_U8, J_U16, J_I32, J_I64, J_F64, /* scalars */
    J_STRING, J_VEC_I64, J_PORTS, J_TABLES, J_UNION_TYPE, J_UNION
} jkind_t;

typedef struct jenum {
    const char *name;
    int count;
    const char *(*name_of)(int value); /* 0 <= value < count */
} jenum_t;

typedef struct jtable jtable_t;

typedef struct jfield {
    const char *name;
    jkind_t kind;
    const jenum_t *enm;              /* J_ENUM, J_UNION_TYPE */
    const jtable_t *table;           /* J_TABLES */
    const jtable_t *const *members;  /* J_UNION: by type - 1 */
    double dflt;                     /* scalars: the schema default */
} jfield_t;

struct jtable {
    const char *name;
    int count;
    const jfield_t *fields; /* by field id */
};

static const char *data_type_name_of(int value)
{
    static const char *const names[] = {
        "Unset", "F32", "F16", "BF16", "F64", "I32", "I64", "I8", "U8", "Bool"};
    return names[value];
}
static const jenum_t data_type_enum = {"DataType", 10, data_type_name_of};

/* Ops and attribute kinds are named by the op table. */
static const char *op_name_of(int value)
{
    return op_desc((cdnn_op_t)value)->schema_name;
}
static const jenum_t op_enum = {"Op", CDNN_OP_COUNT, op_name_of};

static const char *pw_name_of(int value)
{
    static const char *const names[] = {
        "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow",
        "Identity", "Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Reciprocal",
        "Sin", "Cos", "Erf", "Floor", "Ceil",
        "CmpEq", "CmpNe", "CmpGt", "CmpGe", "CmpLt", "CmpLe", "LogicalAnd",
        "LogicalOr", "LogicalNot", "Select", "Fma",
        "ReluFwd", "GeluFwd", "GeluTanhFwd", "SigmoidFwd", "SwishFwd", "TanhFwd",
        "EluFwd", "SoftplusFwd",
        "ReluBwd", "GeluBwd", "GeluTanhBwd", "SigmoidBwd", "SwishBwd", "TanhBwd",
        "EluBwd", "SoftplusBwd",
        "Round", "Fmod", "Remainder", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tan",
        "Asinh", "Acosh", "Atanh", "Atan2"};
    _Static_assert(sizeof names / sizeof *names == CDNN_PW_MODE_COUNT,
                   "a schema name for every pointwise mode");
    return names[value];
}
static const jenum_t pw_enum = {"PointwiseMode", CDNN_PW_MODE_COUNT, pw_name_of};

static const char *reduce_name_of(int value)
{
    static const char *const names[] = {"Add", "Mul", "Min", "Max",
                                        "Amax", "Avg", "Norm1", "Norm2"};
    return names[value];
}
static const jenum_t reduce_enum = {"ReductionMode", 8, reduce_name_of};

static const char *pool_mode_name_of(int value)
{
    static const char *const names[] = {"Max", "Avg"};
    return names[value];
}
static const jenum_t pool_mode_enum = {"PoolingMode", CDNN_POOLING_MODE_COUNT,
                                       pool_mode_name_of};

static const char *resize_mode_name_of(int value)
{
    static const char *const names[] = {"Nearest", "Linear"};
    return names[value];
}
static const jenum_t resize_mode_enum = {"ResizeMode", CDNN_RESIZE_MODE_COUNT,
                                         resize_mode_name_of};

static const char *resize_coord_name_of(int value)
{
    static const char *const names[] = {"HalfPixel", "AlignCorners", "Asymmetric"};
    return names[value];
}
static const jenum_t resize_coord_enum = {"ResizeCoordinate",
                                          CDNN_RESIZE_COORDINATE_COUNT,
                                          resize_coord_name_of};

static const char *resize_nearest_name_of(int value)
{
    static const char *const names[] = {"RoundPreferFloor", "RoundPreferCeil", "Floor",
                                        "Ceil"};
    return names[value];
}
static const jenum_t resize_nearest_enum = {"ResizeNearest", CDNN_RESIZE_NEAREST_COUNT,
                                            resize_nearest_name_of};

static const jenum_t attr_enum = {"NodeAttr", OP_ATTR_KIND_COUNT, op_attr_schema_name};

#define F(name, kind) {name, kind, NULL, NULL, NULL, 0}
#define FD(name, kind, dflt) {name, kind, NULL, NULL, NULL, dflt}
#define FE(name, enm, dflt) {name, J_ENUM, enm, NULL, NULL, dflt}

static const jfield_t conv_fields[GF_CONV_FIELDS] = {
    F("spatial_dims", J_I32), F("pre_padding", J_VEC_I64),
    F("post_padding", J_VEC_I64), F("stride", J_VEC_I64),
    F("dilation", J_VEC_I64), FD("groups", J_I64, 1)};
static const jtable_t conv_table = {"ConvAttr", GF_CONV_FIELDS, conv_fields};

static const jfield_t pw_fields[GF_PW_FIELDS] = {
    FE("mode", &pw_enum, 0),
    F("relu_lower_clip", J_F64),
    FD("relu_upper_clip", J_F64, INFINITY),
    F("relu_lower_clip_slope", J_F64),
    FD("elu_alpha", J_F64, 1),
    FD("softplus_beta", J_F64, 1),
    FD("swish_beta", J_F64, 1)};
static const jtable_t pw_table = {"PointwiseAttr", GF_PW_FIELDS, pw_fields};

static const jfield_t reduce_fields[1] = {FE("mode", &reduce_enum, 0)};
static const jtable_t reduce_table = {"ReductionAttr", 1, reduce_fields};

static const jfield_t norm_fields[1] = {F("epsilon", J_F64)};
static const jtable_t norm_table = {"NormAttr", 1, norm_fields};

static const jfield_t sdpa_fields[GF_SDPA_FIELDS] = {F("scale", J_F64),
                                                     F("causal", J_BOOL)};
static const jtable_t sdpa_table = {"SdpaAttr", GF_SDPA_FIELDS, sdpa_fields};

static const jfield_t axis_fields[GF_AXIS_FIELDS] = {FD("axis", J_I32, -1)};
static const jtable_t axis_table = {"AxisAttr", GF_AXIS_FIELDS,
                                       axis_fields};

static const jfield_t transpose_fields[GF_TRANSPOSE_FIELDS] = {F("perm", J_VEC_I64)};
static const jtable_t transpose_table = {"TransposeAttr", GF_TRANSPOSE_FIELDS,
                                         transpose_fields};

static const jfield_t slice_fields[GF_SLICE_FIELDS] = {F("start", J_VEC_I64),
                                                      F("step", J_VEC_I64)};
static const jtable_t slice_table = {"SliceAttr", GF_SLICE_FIELDS, slice_fields};

static const jfield_t pad_fields[GF_PAD_FIELDS] = {F("pre", J_VEC_I64),
                                                  F("value", J_F64)};
static const jtable_t pad_table = {"PadAttr", GF_PAD_FIELDS, pad_fields};

static const jfield_t topk_fields[GF_TOPK_FIELDS] = {
    FD("axis", J_I32, -1), FD("k", J_I64, 1), FD("largest", J_BOOL, 1)};
static const jtable_t topk_table = {"TopkAttr", GF_TOPK_FIELDS, topk_fields};

static const jfield_t pool_fields[GF_POOL_FIELDS] = {
    FE("mode", &pool_mode_enum, 0), F("spatial_dims", J_I32), F("window", J_VEC_I64),
    F("stride", J_VEC_I64),         F("pre_padding", J_VEC_I64),
    F("post_padding", J_VEC_I64),   F("dilation", J_VEC_I64),
    F("ceil_mode", J_BOOL),         F("count_include_pad", J_BOOL)};
static const jtable_t pool_table = {"PoolingAttr", GF_POOL_FIELDS, pool_fields};

static const jfield_t resize_fields[GF_RESIZE_FIELDS] = {
    FE("mode", &resize_mode_enum, 0), FE("coordinate", &resize_coord_enum, 0),
    FE("nearest", &resize_nearest_enum, 0)};
static const jtable_t resize_table = {"ResizeAttr", GF_RESIZE_FIELDS, resize_fields};

static const jfield_t momentum_fields[GF_MOMENTUM_FIELDS] = {
    FD("momentum", J_F64, 0.1)};
static const jtable_t momentum_table = {"MomentumAttr", GF_MOMENTUM_FIELDS,
                                        momentum_fields};

/* By NodeAttr type - 1 (type 0 is none). */
static const jtable_t *const attr_tables[OP_ATTR_KIND_COUNT - 1] = {
    &conv_table, &pw_table, &reduce_table, &norm_table, &sdpa_table,
    &axis_table, &transpose_table, &slice_table, &pad_table, &topk_table,
    &pool_table, &resize_table, &momentum_table};

static const jfield_t tensor_fields[GF_TENSOR_FIELDS] = {
    F("uid", J_I64),          F("name", J_STRING),
    FE("data_type", &data_type_enum, 0),
    F("dims", J_VEC_I64),     F("strides", J_VEC_I64),
    F("is_virtual", J_BOOL),  F("alignment", J_I64),
    F("is_scalar", J_BOOL),   F("scalar_value", J_F64)};
static const jtable_t tensor_table = {"Tensor", GF_TENSOR_FIELDS,
                                      tensor_fields};

static const jfield_t node_fields[GF_NODE_FIELDS] = {
    F("name", J_STRING), FE("op", &op_enum, 0), F("inputs", J_PORTS),
    F("outputs", J_PORTS), {"attr_type", J_UNION_TYPE, &attr_enum, NULL, NULL, 0},
    {"attr", J_UNION, NULL, NULL, attr_tables, 0}};
static const jtable_t node_table = {"Node", GF_NODE_FIELDS, node_fields};

static const jfield_t graph_fields[GF_GRAPH_FIELDS] = {
    F("format_major", J_U16), F("format_minor", J_U16), F("name", J_STRING),
    FE("io_type", &data_type_enum, CDNN_DATA_TYPE_F32),
    FE("intermediate_type", &data_type_enum, CDNN_DATA_TYPE_F32),
    FE("compute_type", &data_type_enum, CDNN_DATA_TYPE_F32),
    {"tensors", J_TABLES, NULL, &tensor_table, NULL, 0},
    {"nodes", J_TABLES, NULL, &node_table, NULL, 0}};
static const jtable_t graph_table = {"Graph", GF_GRAPH_FIELDS, graph_fields};

#undef F
#undef FD
#undef FE

/* Most fields in one table (Tensor has 9). */
#define J_MAX_FIELDS 16
_Static_assert(GF_TENSOR_FIELDS <= J_MAX_FIELDS && GF_GRAPH_FIELDS <= J_MAX_FIELDS,
               "J_MAX_FIELDS too small");

static int is_scalar_kind(jkind_t k)
{
    return k <= J_F64 || k == J_UNION_TYPE;
}

/* ---- writing: a growing text buffer -------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int failed;      /* out of memory */
    int bad_utf8;    /* a string JSON cannot hold */
} sbuf_t;

static void sb_put(sbuf_t *s, const char *str, size_t n)
{
    if (s->failed)
        return;
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 1024;
        while (cap < s->len + n + 1)
            cap *= 2;
        char *p = realloc(s->p, cap);
        if (!p) {
            s->failed = 1;
            return;
        }
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->len, str, n);
    s->len += n;
    s->p[s->len] = '\0';
}

static void sb_puts(sbuf_t *s, const char *str)
{
    sb_put(s, str, strlen(str));
}

static void sb_printf(sbuf_t *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sb_printf(sbuf_t *s, const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        sb_put(s, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void sb_indent(sbuf_t *s, int level)
{
    for (int i = 0; i < level; i++)
        sb_put(s, "  ", 2);
}

/* Length of the UTF-8 sequence at p (at most n bytes), or 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    size_t len = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2
                 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || len > n || (len == 2 && p[0] < 0xc2))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    /* overlong 3- and 4-byte forms, surrogates, above U+10FFFF */
    if ((len == 3 && p[0] == 0xe0 && p[1] < 0xa0) ||
        (len == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
        (len == 4 && p[0] == 0xf0 && p[1] < 0x90) ||
        (len == 4 && (p[0] > 0xf4 || (p[0] == 0xf4 && p[1] >= 0x90))))
        return 0;
    return len;
}

static void emit_string(sbuf_t *s, const char *str)
{
    const unsigned char *p = (const unsigned char *)str;
    size_t n = strlen(str);
    sb_put(s, "\"", 1);
    for (size_t i = 0; i < n;) {
        size_t len = utf8_len(p + i, n - i);
        if (len == 0) {
            s->bad_utf8 = 1;
            return;
        }
        if (p[i] == '"' || p[i] == '\\')
            sb_printf(s, "\\%c", p[i]);
        else if (p[i] < 0x20)
            sb_printf(s, "\\u%04x", p[i]);
        else
            sb_put(s, (const char *)p + i, len);
        i += len;
    }
    sb_put(s, "\"", 1);
}

/* The shortest text that reads back as exactly v; non-finite values as
 * strings, since JSON has no literal for them. */
static void emit_double(sbuf_t *s, double v)
{
    if (isnan(v)) {
        sb_puts(s, "\"nan\"");
        return;
    }
    if (isinf(v)) {
        sb_puts(s, v > 0 ? "\"inf\"" : "\"-inf\"");
        return;
    }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    /* A locale may have written a decimal comma. */
    for (char *c = buf; *c; c++)
        if (*c == ',')
            *c = '.';
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0"); /* stays a double when read back */
    sb_puts(s, buf);
}

/* ---- writing: bytes to JSON ----------------------------------------------- */

static void emit_table(sbuf_t *s, const fb_table_t *t, const jtable_t *jt,
                       int level);

static void emit_enum(sbuf_t *s, const jenum_t *e, int v)
{
    if (v >= 0 && v < e->count)
        sb_printf(s, "\"%s\"", e->name_of(v));
    else
        sb_printf(s, "%d", v);
}

static void emit_i64s(sbuf_t *s, const fb_table_t *t, int id)
{
    uint32_t n = 0;
    const uint8_t *p = fb_get_vector(t, id, &n);
    sb_put(s, "[", 1);
    for (uint32_t i = 0; i < n; i++)
        sb_printf(s, "%s%lld", i ? ", " : "", (long long)fb_read_i64(p + 8 * i));
    sb_put(s, "]", 1);
}

static void emit_ports(sbuf_t *s, const fb_table_t *t, int id, int level)
{
    uint32_t n = 0;
    const uint8_t *p = fb_get_vector(t, id, &n);
    sb_put(s, "[", 1);
    for (uint32_t i = 0; i < n; i++, p += GF_PORT_SIZE) {
        sb_puts(s, i ? ",\n" : "\n");
        sb_indent(s, level + 1);
        sb_printf(s, "{\"slot\": %u, \"uid\": %lld}", p[0],
                  (long long)fb_read_i64(p + 8));
    }
    sb_puts(s, "\n");
    sb_indent(s, level);
    sb_put(s, "]", 1);
}

static void emit_tables(sbuf_t *s, const fb_table_t *t, int id,
                        const jtable_t *jt, int level)
{
    uint32_t n = 0;
    fb_get_vector(t, id, &n);
    sb_put(s, "[", 1);
    for (uint32_t i = 0; i < n; i++) {
        fb_table_t e = fb_vector_table(t, id, i);
        sb_puts(s, i ? ",\n" : "\n");
        sb_indent(s, level + 1);
        emit_table(s, &e, jt, level + 1);
    }
    sb_puts(s, "\n");
    sb_indent(s, level);
    sb_put(s, "]", 1);
}

static void emit_field(sbuf_t *s, const fb_table_t *t, const jfield_t *f,
                       int id, int level)
{
    switch (f->kind) {
    case J_BOOL: sb_puts(s, fb_get_bool(t, id, 0) ? "true" : "false"); break;
    case J_ENUM: emit_enum(s, f->enm, fb_get_i8(t, id, 0)); break;
    case J_UNION_TYPE: emit_enum(s, f->enm, fb_get_u8(t, id, 0)); break;
    case J_U8: sb_printf(s, "%u", fb_get_u8(t, id, 0)); break;
    case J_U16: sb_printf(s, "%u", fb_get_u16(t, id, 0)); break;
    case J_I32: sb_printf(s, "%d", (int)fb_get_i32(t, id, 0)); break;
    case J_I64: sb_printf(s, "%lld", (long long)fb_get_i64(t, id, 0)); break;
    case J_F64: emit_double(s, fb_get_f64(t, id, 0)); break;
    case J_STRING: emit_string(s, fb_get_string(t, id, NULL)); break;
    case J_VEC_I64: emit_i64s(s, t, id); break;
    case J_PORTS: emit_ports(s, t, id, level); break;
    case J_TABLES: emit_tables(s, t, id, f->table, level); break;
    case J_UNION: {
        int type = fb_get_u8(t, id - 1, 0);
        fb_table_t u = fb_get_table(t, id);
        if (type >= 1 && type < OP_ATTR_KIND_COUNT)
            emit_table(s, &u, f->members[type - 1], level);
        else
            sb_puts(s, "{}");
        break;
    }
    }
}

/* Present fields only, in schema order: as flatc prints a buffer. */
static void emit_table(sbuf_t *s, const fb_table_t *t, const jtable_t *jt,
                       int level)
{
    int any = 0;
    sb_put(s, "{", 1);
    for (int id = 0; id < jt->count; id++) {
        const jfield_t *f = &jt->fields[id];
        if (!fb_has(t, id) || (f->kind == J_STRING && !fb_get_string(t, id, NULL)))
            continue;
        sb_puts(s, any ? ",\n" : "\n");
        sb_indent(s, level + 1);
        sb_printf(s, "\"%s\": ", f->name);
        emit_field(s, t, f, id, level + 1);
        any = 1;
    }
    if (any) {
        sb_puts(s, "\n");
        sb_indent(s, level);
    }
    sb_put(s, "}", 1);
}

cdnn_status_t graph_json_encode(const cdnn_graph_t *g, char **json)
{
    CDNN_CHECK_ARG(g);
    CDNN_CHECK_ARG(json);
    *json = NULL;
    uint8_t *bytes;
    size_t size;
    cdnn_status_t st = graph_format_encode(g, &bytes, &size);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    sbuf_t s = {NULL, 0, 0, 0, 0};
    fb_table_t root = fb_root(bytes, size);
    emit_table(&s, &root, &graph_table, 0);
    sb_puts(&s, "\n");
    free(bytes);
    if (s.failed || s.bad_utf8) {
        free(s.p);
        return s.failed ? cdnn_fail(CDNN_STATUS_ALLOC_FAILED,
                                    "out of memory writing a graph as JSON")
                        : cdnn_fail(CDNN_STATUS_BAD_PARAM,
                                    "writing a graph as JSON: a name is not "
                                    "valid UTF-8, which JSON cannot hold; "
                                    "rename it or save the graph in binary");
    }
    *json = s.p;
    return CDNN_STATUS_SUCCESS;
}

/* ---- reading: text to jansson --------------------------------------------- */

/* Where a bare non-finite literal starts at text[i], its length; else 0.
 * flatc writes inf, -inf and nan; Python's json, JavaScript and most other
 * writers Infinity, -Infinity and NaN.  Outside strings nothing valid in
 * JSON spells these. */
static size_t nonfinite_at(const char *text, size_t n, size_t i)
{
    static const char *const words[] = {
        "inf", "nan", "-inf", "-nan", "+inf", "+nan",
        "Infinity", "-Infinity", "+Infinity", "NaN", "-NaN", "+NaN"};
    if (i > 0 && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_'))
        return 0;
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        size_t len = strlen(words[w]);
        if (i + len <= n && memcmp(text + i, words[w], len) == 0 &&
            (i + len == n || !(isalnum((unsigned char)text[i + len]) ||
                               text[i + len] == '_')))
            return len;
    }
    return 0;
}

/* A copy of text with bare inf/nan quoted, or NULL (none, or no memory:
 * *oom says which).  Column numbers in jansson's messages then count the
 * added quotes; lines are unchanged. */
static char *quote_nonfinite(const char *text, size_t n, size_t *out_n,
                             int *oom)
{
    char *out = NULL;
    size_t o = 0;
    int in_string = 0;
    *oom = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = in_string ? 0 : nonfinite_at(text, n, i);
        if (len && !out) {
            out = malloc(2 * n + 2); /* each word of >= 3 chars gains 2 */
            if (!out) {
                *oom = 1;
                return NULL;
            }
            memcpy(out, text, i);
            o = i;
        }
        if (len) {
            out[o++] = '"';
            memcpy(out + o, text + i, len);
            o += len;
            out[o++] = '"';
            i += len - 1;
            continue;
        }
        if (text[i] == '"')
            in_string = !in_string;
        else if (in_string && text[i] == '\\' && i + 1 < n) {
            if (out)
                out[o++] = text[i];
            i++;
        }
        if (out)
            out[o++] = text[i];
    }
    *out_n = o;
    return out;
}

static cdnn_status_t parse_text(const char *text, size_t n, json_t **root)
{
    size_t qn = 0;
    int oom;
    char *quoted = quote_nonfinite(text, n, &qn, &oom);
    if (oom)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory reading "
                         "graph JSON");
    json_error_t err;
    *root = json_loadb(quoted ? quoted : text, quoted ? qn : n,
                       JSON_REJECT_DUPLICATES, &err);
    free(quoted);
    /* jansson reports running out of memory as a parse error: with its
     * code, or (when it fails before it has a position) with no text. */
    if (!*root && (json_error_code(&err) == json_error_out_of_memory ||
                   err.text[0] == '\0'))
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory reading "
                         "graph JSON");
    if (!*root)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         SOURCE ", line %d, column %d: %s", err.line,
                         err.column, err.text);
    if (!json_is_object(*root)) {
        json_decref(*root);
        *root = NULL;
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         SOURCE ": the top level must be an object (a Graph)");
    }
    return CDNN_STATUS_SUCCESS;
}

/* ---- reading: jansson to bytes -------------------------------------------- */

typedef struct jctx {
    fb_builder_t *b;
    char path[256];
    size_t len;
    cdnn_status_t st; /* the first failure */
} jctx_t;

static size_t jpush(jctx_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static size_t jpush(jctx_t *c, const char *fmt, ...)
{
    size_t old = c->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->path + c->len, sizeof c->path - c->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        c->len += (size_t)n < sizeof c->path - c->len ? (size_t)n
                                                       : sizeof c->path - c->len - 1;
    return old;
}

static void jpop(jctx_t *c, size_t old)
{
    c->len = old;
    c->path[old] = '\0';
}

static void jfail(jctx_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Fail once, naming the JSON path ("nodes[2].attr.stride[1]"). */
static void jfail(jctx_t *c, const char *fmt, ...)
{
    if (c->st != CDNN_STATUS_SUCCESS)
        return;
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *path = c->path[0] == '.' ? c->path + 1 : c->path;
    c->st = cdnn_fail(CDNN_STATUS_CORRUPT_DATA, SOURCE ", %s: %s",
                      path[0] ? path : "(top level)", msg);
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* An integer in [lo, hi]: a JSON integer or a string holding one (flatc
 * takes both). */
static int64_t j_int(jctx_t *c, const json_t *v, int64_t lo, int64_t hi)
{
    long long x = 0;
    if (json_is_integer(v)) {
        x = json_integer_value(v);
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        errno = 0;
        x = strtoll(s, &end, 0);
        if (end == s || *end || errno) {
            jfail(c, "\"%.40s\" is not an integer", s);
            return 0;
        }
    } else {
        jfail(c, "expected an integer, got %s", json_kind(v));
        return 0;
    }
    if (x < lo || x > hi)
        jfail(c, "%lld is out of range (%lld..%lld)", x, (long long)lo,
              (long long)hi);
    return x;
}

static int j_bool(jctx_t *c, const json_t *v)
{
    if (json_is_boolean(v))
        return json_is_true(v);
    if (json_is_integer(v) || json_is_string(v))
        return j_int(c, v, 0, 1) != 0;
    jfail(c, "expected true or false, got %s", json_kind(v));
    return 0;
}

/* A NaN's spelling: nan or NaN, signed or not (strtod takes any case;
 * the reader takes the spellings writers use, no others). */
static int is_nan_word(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    return strcmp(s, "nan") == 0 || strcmp(s, "NaN") == 0;
}

/* A double: a number, or a string holding one, inf, -inf, nan, Infinity,
 * -Infinity or NaN. */
static double j_double(jctx_t *c, const json_t *v)
{
    if (json_is_number(v))
        return json_number_value(v);
    if (!json_is_string(v)) {
        jfail(c, "expected a number, got %s", json_kind(v));
        return 0;
    }
    const char *s = json_string_value(v);
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end || (isnan(x) && !is_nan_word(s))) {
        jfail(c, "\"%.40s\" is not a number (numbers, \"inf\", \"-inf\", "
              "\"nan\", \"Infinity\", \"-Infinity\" and \"NaN\" are)", s);
        return 0;
    }
    return x;
}

/* An enum: its name, or its value as an integer (unknown values pass, for
 * graph_format.c to judge against the format minor). */
static int j_enum(jctx_t *c, const json_t *v, const jenum_t *e, int lo, int hi)
{
    if (!json_is_string(v))
        return (int)j_int(c, v, lo, hi);
    const char *s = json_string_value(v);
    for (int i = 0; i < e->count; i++)
        if (strcmp(s, e->name_of(i)) == 0)
            return i;
    char known[1024] = "";
    size_t k = 0;
    for (int i = 0; i < e->count && k < sizeof known; i++)
        k += (size_t)snprintf(known + k, sizeof known - k, "%s%s",
                              i ? ", " : "", e->name_of(i));
    jfail(c, "\"%.40s\" is not a value of enum %s (one of: %s)", s, e->name,
          known);
    return 0;
}

static void j_scalar(jctx_t *c, const json_t *v, const jfield_t *f, int id)
{
    fb_builder_t *b = c->b;
    switch (f->kind) {
    case J_BOOL: fb_add_bool(b, id, j_bool(c, v), (int)f->dflt); break;
    case J_ENUM:
        fb_add_i8(b, id, (int8_t)j_enum(c, v, f->enm, INT8_MIN, INT8_MAX),
                  (int8_t)f->dflt);
        break;
    case J_UNION_TYPE:
        fb_add_u8(b, id, (uint8_t)j_enum(c, v, f->enm, 0, UINT8_MAX), 0);
        break;
    case J_U8: fb_add_u8(b, id, (uint8_t)j_int(c, v, 0, UINT8_MAX), 0); break;
    case J_U16: fb_add_u16(b, id, (uint16_t)j_int(c, v, 0, UINT16_MAX), 0); break;
    case J_I32:
        fb_add_i32(b, id, (int32_t)j_int(c, v, INT32_MIN, INT32_MAX),
                   (int32_t)f->dflt);
        break;
    case J_I64:
        fb_add_i64(b, id, j_int(c, v, INT64_MIN, INT64_MAX), (int64_t)f->dflt);
        break;
    case J_F64: fb_add_f64(b, id, j_double(c, v), f->dflt); break;
    default: break;
    }
}

static int j_array(jctx_t *c, const json_t *v, size_t *n)
{
    if (!json_is_array(v)) {
        jfail(c, "expected an array, got %s", json_kind(v));
        return 0;
    }
    *n = json_array_size(v);
    if (*n > GRAPH_FORMAT_MAX_ITEMS) {
        jfail(c, "%zu entries; at most %d are allowed", *n,
              GRAPH_FORMAT_MAX_ITEMS);
        return 0;
    }
    return 1;
}

static fb_ref_t j_i64s(jctx_t *c, const json_t *v)
{
    size_t n;
    if (!j_array(c, v, &n))
        return 0;
    int64_t *vals = malloc((n ? n : 1) * sizeof *vals);
    if (!vals) {
        c->st = cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
        return 0;
    }
    for (size_t i = 0; i < n && c->st == CDNN_STATUS_SUCCESS; i++) {
        size_t old = jpush(c, "[%zu]", i);
        vals[i] = j_int(c, json_array_get(v, i), INT64_MIN, INT64_MAX);
        jpop(c, old);
    }
    fb_ref_t r = c->st ? 0 : fb_vector_i64(c->b, vals, n);
    free(vals);
    return r;
}

/* A Port struct: both fields, nothing else. */
static void j_port(jctx_t *c, const json_t *v, uint8_t *out)
{
    const char *key;
    json_t *val;
    if (!json_is_object(v)) {
        jfail(c, "expected a Port object {\"slot\": ..., \"uid\": ...}, got %s",
              json_kind(v));
        return;
    }
    json_object_foreach((json_t *)v, key, val)
        if (strcmp(key, "slot") && strcmp(key, "uid"))
            jfail(c, "unknown field \"%.40s\" (a Port has slot and uid)", key);
    const json_t *slot = json_object_get(v, "slot");
    const json_t *uid = json_object_get(v, "uid");
    if (!slot || !uid) {
        jfail(c, "a Port needs both slot and uid");
        return;
    }
    size_t old = jpush(c, ".slot");
    out[0] = (uint8_t)j_int(c, slot, 0, UINT8_MAX);
    jpop(c, old);
    old = jpush(c, ".uid");
    uint64_t u = (uint64_t)j_int(c, uid, INT64_MIN, INT64_MAX);
    jpop(c, old);
    for (int i = 0; i < 8; i++)
        out[8 + i] = (uint8_t)(u >> (8 * i));
}

static fb_ref_t j_ports(jctx_t *c, const json_t *v)
{
    size_t n;
    if (!j_array(c, v, &n))
        return 0;
    uint8_t *elems = calloc(n ? n : 1, GF_PORT_SIZE);
    if (!elems) {
        c->st = cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
        return 0;
    }
    for (size_t i = 0; i < n && c->st == CDNN_STATUS_SUCCESS; i++) {
        size_t old = jpush(c, "[%zu]", i);
        j_port(c, json_array_get(v, i), elems + i * GF_PORT_SIZE);
        jpop(c, old);
    }
    fb_ref_t r = c->st ? 0
                       : fb_vector_structs(c->b, elems, GF_PORT_SIZE,
                                           GF_PORT_ALIGN, n);
    free(elems);
    return r;
}

static fb_ref_t j_table(jctx_t *c, const json_t *obj, const jtable_t *jt);

static fb_ref_t j_tables(jctx_t *c, const json_t *v, const jtable_t *jt)
{
    size_t n;
    if (!j_array(c, v, &n))
        return 0;
    fb_ref_t *refs = malloc((n ? n : 1) * sizeof *refs);
    if (!refs) {
        c->st = cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
        return 0;
    }
    for (size_t i = 0; i < n && c->st == CDNN_STATUS_SUCCESS; i++) {
        size_t old = jpush(c, "[%zu]", i);
        refs[i] = j_table(c, json_array_get(v, i), jt);
        jpop(c, old);
    }
    fb_ref_t r = c->st ? 0 : fb_vector_refs(c->b, refs, n);
    free(refs);
    return r;
}

/* A union's value: its table is the one named by the type field before
 * it (id - 1), which may come before or after it in the object. */
static fb_ref_t j_union(jctx_t *c, const json_t *obj, const json_t *v,
                        const jtable_t *jt, int id)
{
    const jfield_t *tf = &jt->fields[id - 1];
    const json_t *tv = json_object_get(obj, tf->name);
    int type = 0;
    if (tv && !json_is_null(tv)) {
        size_t old = jpush(c, ".%s", tf->name);
        type = j_enum(c, tv, tf->enm, 0, UINT8_MAX);
        jpop(c, old);
    }
    if (c->st != CDNN_STATUS_SUCCESS)
        return 0;
    if (type == 0 || type >= tf->enm->count) {
        jfail(c, "%s is %s; it must name the %s these are", tf->name,
              type == 0 ? "missing or NONE" : "not a known member",
              tf->enm->name);
        return 0;
    }
    return j_table(c, v, jt->fields[id].members[type - 1]);
}

static fb_ref_t j_ref(jctx_t *c, const json_t *obj, const json_t *v,
                      const jtable_t *jt, int id)
{
    const jfield_t *f = &jt->fields[id];
    switch (f->kind) {
    case J_STRING:
        if (!json_is_string(v)) {
            jfail(c, "expected a string, got %s", json_kind(v));
            return 0;
        }
        return fb_string_len(c->b, json_string_value(v), json_string_length(v));
    case J_VEC_I64: return j_i64s(c, v);
    case J_PORTS: return j_ports(c, v);
    case J_TABLES: return j_tables(c, v, f->table);
    case J_UNION: return j_union(c, obj, v, jt, id);
    default: return 0;
    }
}

static int j_known_keys(jctx_t *c, const json_t *obj, const jtable_t *jt)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        /* The binary form's digest, which flatc prints when it converts a
         * binary graph: the JSON form carries none, so it is ignored (the
         * bytes this JSON becomes are sealed anew when saved). */
        int found = jt == &graph_table && strcmp(key, "sha256") == 0;
        for (int id = 0; id < jt->count && !found; id++)
            found = strcmp(key, jt->fields[id].name) == 0;
        if (!found) {
            jfail(c, "unknown field \"%.40s\" in a %s", key, jt->name);
            return 0;
        }
    }
    return 1;
}

/* Children first (strings, vectors, sub-tables), then the table: the
 * builder writes back to front.  Fields go in schema order, whatever the
 * order of the keys. */
static fb_ref_t j_table(jctx_t *c, const json_t *obj, const jtable_t *jt)
{
    fb_ref_t refs[J_MAX_FIELDS] = {0};
    if (!json_is_object(obj)) {
        jfail(c, "expected a %s object, got %s", jt->name, json_kind(obj));
        return 0;
    }
    if (!j_known_keys(c, obj, jt))
        return 0;
    for (int id = 0; id < jt->count && c->st == CDNN_STATUS_SUCCESS; id++) {
        const json_t *v = json_object_get(obj, jt->fields[id].name);
        if (!v || json_is_null(v) || is_scalar_kind(jt->fields[id].kind))
            continue;
        size_t old = jpush(c, ".%s", jt->fields[id].name);
        refs[id] = j_ref(c, obj, v, jt, id);
        jpop(c, old);
    }
    if (c->st != CDNN_STATUS_SUCCESS)
        return 0;
    fb_table_start(c->b, jt->count);
    for (int id = 0; id < jt->count; id++) {
        const json_t *v = json_object_get(obj, jt->fields[id].name);
        if (!is_scalar_kind(jt->fields[id].kind)) {
            fb_add_ref(c->b, id, refs[id]);
            continue;
        }
        if (!v || json_is_null(v))
            continue;
        size_t old = jpush(c, ".%s", jt->fields[id].name);
        j_scalar(c, v, &jt->fields[id], id);
        jpop(c, old);
    }
    return fb_table_end(c->b);
}

static cdnn_status_t to_bytes(const json_t *root, uint8_t **bytes,
                              size_t *size)
{
    fb_builder_t b;
    fb_builder_init(&b);
    jctx_t c = {&b, "", 0, CDNN_STATUS_SUCCESS};
    fb_ref_t ref = j_table(&c, root, &graph_table);
    *bytes = NULL;
    if (c.st == CDNN_STATUS_SUCCESS &&
        fb_finish_copy(&b, ref, GRAPH_IDENTIFIER, bytes, size) != 0)
        c.st = cdnn_fail(CDNN_STATUS_ALLOC_FAILED,
                         "out of memory reading graph JSON");
    fb_builder_free(&b);
    return c.st;
}

/* Bytes that cannot be JSON text, said as what they are: jansson would
 * only say "'[' or '{' expected".  A binary cdnn artifact (its identifier
 * at bytes 4..7) is the likeliest mix-up, so its loader is named. */
static cdnn_status_t check_text(const char *text, size_t n)
{
    const uint8_t *p = (const uint8_t *)text;
    blob_kind_t kind = blob_kind(p, n);
    if (kind != BLOB_UNKNOWN)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         SOURCE ": the bytes are %s in binary form (file "
                         "identifier \"%.4s\"), not JSON text; load them with %s",
                         blob_kind_phrase(kind), text + 4,
                         kind == BLOB_PLAN ? "cdnn_plan_load" : "cdnn_graph_load");
    /* JSON text holds no control characters but white space, not even
     * inside strings (they are escaped there). */
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
            return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                             SOURCE ": the input is not JSON text (byte %zu is "
                             "0x%02x, a control character); give the graph's JSON "
                             "form, as cdnn_graph_to_json writes it", i, p[i]);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t graph_json_decode(const char *text, size_t n, cdnn_graph_t **out)
{
    CDNN_CHECK_ARG(out);
    *out = NULL;
    CDNN_CHECK_ARG(text);
    if (n > GRAPH_JSON_MAX_BYTES)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                         SOURCE ": %zu bytes of text; at most %zu are read",
                         n, GRAPH_JSON_MAX_BYTES);
    /* Some editors start UTF-8 text with a byte order mark; RFC 8259 lets
     * a reader ignore it, jansson does not, so it is skipped here. */
    if (n >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
        text += 3;
        n -= 3;
    }
    json_t *root = NULL;
    cdnn_status_t st = check_text(text, n);
    if (st == CDNN_STATUS_SUCCESS)
        st = parse_text(text, n, &root);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    uint8_t *bytes = NULL;
    size_t size = 0;
    st = to_bytes(root, &bytes, &size);
    json_decref(root);
    if (st == CDNN_STATUS_SUCCESS)
        st = graph_format_decode_from(bytes, size, SOURCE, out);
    free(bytes);
    return st;
}
