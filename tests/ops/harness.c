/*
 * harness.c -- declaring, running and comparing op test cases.
 */
#include "harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#define H_SEED 0x5eedc0de2024abcdULL
#define H_POISON 0xFF
#define H_ALIGN 64
#define H_MAX_ENGINES 16

cdnn_handle_t *h_handle;
static int h_failures;
static int h_misaligned;
static long h_case_count;
static uint64_t h_run_ids[H_MAX_ENGINES];
static long h_run_counts[H_MAX_ENGINES];
/* Per engine (as in h_run_ids) and output type: outputs compared, and the
 * largest error seen against the reference, as a fraction of
 * max(|ref|, 1) and of the tolerance. */
static long h_outputs_compared[H_MAX_ENGINES][CDNN_DATA_TYPE_COUNT];
static double h_worst_error[H_MAX_ENGINES][CDNN_DATA_TYPE_COUNT];
static double h_worst_share[H_MAX_ENGINES][CDNN_DATA_TYPE_COUNT];

/* ------------------------------------------------------------------ */
/* setup, failures, summary                                           */

int h_setup(void **state)
{
    (void)state;
    cdnn_status_t st = cdnn_handle_create(&h_handle, "cpu");
    if (st != CDNN_STATUS_SUCCESS) {
        print_error("cannot create a \"cpu\" handle: %s: %s\n",
                    cdnn_status_string(st), cdnn_last_error());
        return -1;
    }
    return 0;
}

static void summary(void);

int h_teardown(void **state)
{
    (void)state;
    summary();
    cdnn_handle_destroy(h_handle);
    h_handle = NULL;
    return 0;
}

static void print_dims(const char *label, int32_t rank, const int64_t *v)
{
    print_error("%s[", label);
    for (int32_t d = 0; d < rank; d++)
        print_error(d ? ",%lld" : "%lld", (long long)v[d]);
    print_error("]");
}

static const char *role_name(h_role_t role)
{
    static const char *const names[] = {"in", "out", "virtual", "scalar"};
    return names[role];
}

static void print_tensors(const h_case_t *c)
{
    for (int i = 0; i < c->count; i++) {
        const h_tensor_t *t = &c->t[i];
        print_error("    uid %lld %s %s ", (long long)t->uid, role_name(t->role),
                    cdnn_data_type_name(t->type));
        print_dims("dims", t->rank, t->dims);
        print_dims(" strides", t->rank, t->strides);
        print_error("\n");
    }
}

void h_fail(const h_case_t *c, const char *engine, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    h_failures++;
    print_error("FAIL [%s] engine %s: %s\n", c->name, engine ? engine : "-",
                msg);
    print_tensors(c);
}

void h_done(void)
{
    int n = h_failures;
    h_failures = 0;
    if (n != 0)
        fail_msg("%d check(s) failed; each is printed above", n);
}

int h_misaligned_on(void **state)
{
    (void)state;
    h_misaligned = 1;
    return 0;
}

int h_misaligned_off(void **state)
{
    (void)state;
    h_misaligned = 0;
    return 0;
}

/* The slot of engine id in the tables above, or -1 when they are full. */
static int engine_slot(uint64_t id)
{
    for (int i = 0; i < H_MAX_ENGINES; i++) {
        if (h_run_counts[i] == 0)
            h_run_ids[i] = id;
        if (h_run_ids[i] == id)
            return i;
    }
    return -1;
}

/* Count a comparison of engine id with the reference. */
static void count_run(uint64_t id)
{
    int i = engine_slot(id);
    if (i >= 0)
        h_run_counts[i]++;
}

static void note_error(uint64_t id, cdnn_data_type_t type, double error,
                       double share)
{
    int i = engine_slot(id);
    if (i < 0 || (unsigned)type >= CDNN_DATA_TYPE_COUNT)
        return;
    h_outputs_compared[i][type]++;
    h_worst_error[i][type] = fmax(h_worst_error[i][type], error);
    h_worst_share[i][type] = fmax(h_worst_share[i][type], share);
}

static void summary_errors(int i)
{
    for (int t = 0; t < CDNN_DATA_TYPE_COUNT; t++)
        if (h_outputs_compared[i][t])
            print_message("ops:   %ld %s outputs: largest error %.3g of "
                          "max(|ref|, 1), %.2f of the tolerance\n",
                          h_outputs_compared[i][t],
                          cdnn_data_type_name((cdnn_data_type_t)t),
                          h_worst_error[i][t], h_worst_share[i][t]);
}

static void summary(void)
{
    print_message("ops: %ld cases\n", h_case_count);
    for (int i = 0; i < H_MAX_ENGINES && h_run_counts[i]; i++) {
        print_message("ops: %s compared with %s in %ld cases\n",
                      h_engine_name(h_run_ids[i]), H_REFERENCE,
                      h_run_counts[i]);
        summary_errors(i);
    }
}

/* ------------------------------------------------------------------ */
/* engines                                                            */

uint64_t h_engine_id(const char *name)
{
    return cdnn_engine_id_from_name(name);
}

const char *h_engine_name(uint64_t id)
{
    int32_t n = 0;
    if (cdnn_handle_engine_count(h_handle, &n) != CDNN_STATUS_SUCCESS)
        return "?";
    for (int32_t i = 0; i < n; i++) {
        cdnn_engine_info_t info;
        if (cdnn_handle_engine_info(h_handle, i, &info) ==
                CDNN_STATUS_SUCCESS &&
            info.id == id)
            return info.name;
    }
    return "?";
}

/* ------------------------------------------------------------------ */
/* elements                                                           */

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f;
    int m = h & 0x3ff;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(m | 0x400, e - 25);
    return (h & 0x8000) ? -v : v;
}

static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return sign | 0x7e00;
    if (ax >= 0x477ff000u) /* 65520 and up round to infinity */
        return sign | 0x7c00;
    if (ax < 0x38800000u) { /* below 2^-14: subnormal or zero */
        float a = fabsf(f) * 16777216.0f; /* exact: a power of two */
        return sign | (uint16_t)lrintf(a);
    }
    uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u); /* round to nearest even */
    return sign | (uint16_t)((r - 0x38000000u) >> 13);
}

static double bf16_to_double(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#define H_LOAD(ctype, p)                                                      \
    do {                                                                      \
        ctype v_;                                                             \
        memcpy(&v_, (p), sizeof v_);                                          \
        return (double)v_;                                                    \
    } while (0)

/* Bool loads its raw byte, so that a poisoned one is neither 0 nor 1. */
static double h_load(cdnn_data_type_t t, const void *p)
{
    uint16_t u16;
    switch (t) {
    case CDNN_DATA_TYPE_F32: H_LOAD(float, p);
    case CDNN_DATA_TYPE_F64: H_LOAD(double, p);
    case CDNN_DATA_TYPE_I32: H_LOAD(int32_t, p);
    case CDNN_DATA_TYPE_I64: H_LOAD(int64_t, p);
    case CDNN_DATA_TYPE_I8: H_LOAD(int8_t, p);
    case CDNN_DATA_TYPE_U8:
    case CDNN_DATA_TYPE_BOOL: H_LOAD(uint8_t, p);
    case CDNN_DATA_TYPE_F16:
        memcpy(&u16, p, sizeof u16);
        return half_to_double(u16);
    case CDNN_DATA_TYPE_BF16:
        memcpy(&u16, p, sizeof u16);
        return bf16_to_double(u16);
    default:
        return NAN;
    }
}

#define H_STORE(ctype, p, v)                                                  \
    do {                                                                      \
        ctype v_ = (ctype)(v);                                                \
        memcpy((p), &v_, sizeof v_);                                          \
        return;                                                               \
    } while (0)

static void h_store(cdnn_data_type_t t, void *p, double v)
{
    uint16_t u16;
    switch (t) {
    case CDNN_DATA_TYPE_F32: H_STORE(float, p, v);
    case CDNN_DATA_TYPE_F64: H_STORE(double, p, v);
    case CDNN_DATA_TYPE_I32: H_STORE(int32_t, p, llround(v));
    case CDNN_DATA_TYPE_I64: H_STORE(int64_t, p, llround(v));
    case CDNN_DATA_TYPE_I8: H_STORE(int8_t, p, llround(v));
    case CDNN_DATA_TYPE_U8: H_STORE(uint8_t, p, llround(fabs(v)));
    case CDNN_DATA_TYPE_BOOL: H_STORE(uint8_t, p, v != 0.0);
    case CDNN_DATA_TYPE_F16:
        u16 = float_to_half((float)v);
        memcpy(p, &u16, sizeof u16);
        return;
    case CDNN_DATA_TYPE_BF16:
        u16 = float_to_bf16((float)v);
        memcpy(p, &u16, sizeof u16);
        return;
    default:
        return;
    }
}

static int is_float(cdnn_data_type_t t)
{
    return t == CDNN_DATA_TYPE_F32 || t == CDNN_DATA_TYPE_F16 ||
           t == CDNN_DATA_TYPE_BF16 || t == CDNN_DATA_TYPE_F64;
}

/* ------------------------------------------------------------------ */
/* shapes, layouts, random values                                     */

static int next_index(int32_t rank, const int64_t *dims, int64_t *idx)
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return 1;
        idx[d] = 0;
    }
    return 0;
}

static int64_t offset_of(const h_tensor_t *t, const int64_t *idx)
{
    int64_t off = 0;
    for (int32_t d = 0; d < t->rank; d++)
        off += idx[d] * t->strides[d];
    return off;
}

static int64_t element_count(const h_tensor_t *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++)
        n *= t->dims[d];
    return n;
}

static size_t span_bytes(const h_tensor_t *t)
{
    int64_t span = 1;
    for (int32_t d = 0; d < t->rank; d++)
        span += (t->dims[d] - 1) * t->strides[d];
    return (size_t)span * cdnn_data_type_size(t->type);
}

static void layout_order(int32_t rank, h_layout_t layout, int *order)
{
    for (int32_t d = 0; d < rank; d++)
        order[d] = d;
    if (layout == H_CHANNELS_LAST && rank >= 3) {
        for (int32_t d = 1; d < rank - 1; d++)
            order[d] = d + 1;
        order[rank - 1] = 1;
    } else if (layout == H_TRANSPOSED && rank >= 2) {
        order[rank - 2] = rank - 1;
        order[rank - 1] = rank - 2;
    } else if (layout == H_OUTER_SWAP && rank >= 2) {
        order[0] = 1;
        order[1] = 0;
    } else if (layout == H_SWAP12 && rank >= 3) {
        order[1] = 2;
        order[2] = 1;
    }
}

void h_strides(int32_t rank, const int64_t *dims, h_layout_t layout,
               int64_t *strides)
{
    int order[CDNN_MAX_RANK];
    int64_t gap = layout == H_PADDED ? 3 : 0;
    int64_t s = 1;
    layout_order(rank, layout, order);
    for (int32_t k = rank - 1; k >= 0; k--) {
        strides[order[k]] = s;
        s = s * dims[order[k]] + gap;
    }
}

const char *h_layout_name(h_layout_t layout)
{
    static const char *const names[] = {"packed", "channels_last",
                                        "transposed", "padded", "outer_swap",
                                        "swap12"};
    return layout < H_LAYOUT_COUNT ? names[layout] : "?";
}

int64_t h_conv_out(int64_t in, int64_t filter, int64_t pre, int64_t post,
                   int64_t stride, int64_t dilation)
{
    return (in + pre + post - dilation * (filter - 1) - 1) / stride + 1;
}

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static double draw(h_dist_t dist, int64_t uid, int64_t index)
{
    uint64_t r = splitmix(H_SEED ^ splitmix((uint64_t)uid) ^
                          ((uint64_t)index * 0xd1b54a32d192ed03ULL));
    double u = (double)(r >> 11) * 0x1p-53;
    switch (dist) {
    case H_WIDE: return 6.0 * u - 3.0;
    case H_POSITIVE: return 0.25 + 1.75 * u;
    case H_NEAR_ONE: return 0.8 + 0.45 * u;
    case H_COARSE: return floor(u * 5.0) * 0.5 - 1.0;
    case H_MASK: return u < 0.5 ? 0.0 : 1.0;
    case H_SIGN: return u < 0.5 ? -1.0 : 1.0;
    case H_ABOVE_ONE: return 1.0 + 2.0 * u;
    case H_INNER: return 1.8 * u - 0.9;
    default: return 2.0 * u - 1.0;
    }
}

unsigned char *h_buffer_new(const h_case_t *c, int i, unsigned char **raw)
{
    const h_tensor_t *t = &c->t[i];
    size_t shift = c->misalign ? cdnn_data_type_size(t->type) : 0;
    size_t size = (t->bytes + shift + H_ALIGN - 1) / H_ALIGN * H_ALIGN;
    *raw = aligned_alloc(H_ALIGN, size);
    if (*raw == NULL)
        return NULL;
    memset(*raw, H_POISON, size);
    return *raw + shift;
}

static void fill(h_tensor_t *t)
{
    int64_t idx[CDNN_MAX_RANK] = {0};
    size_t es = cdnn_data_type_size(t->type);
    int64_t i = 0;
    do {
        h_store(t->type, t->buf + (size_t)offset_of(t, idx) * es,
                draw(t->dist, t->uid, i++));
    } while (next_index(t->rank, t->dims, idx));
}

/** The logical elements of buf, row-major, as doubles. */
static double *logical(const h_tensor_t *t, const unsigned char *buf)
{
    int64_t idx[CDNN_MAX_RANK] = {0};
    size_t es = cdnn_data_type_size(t->type);
    double *v = malloc((size_t)element_count(t) * sizeof *v);
    int64_t i = 0;
    if (v == NULL)
        return NULL;
    do {
        v[i++] = h_load(t->type, buf + (size_t)offset_of(t, idx) * es);
    } while (next_index(t->rank, t->dims, idx));
    return v;
}

/* ------------------------------------------------------------------ */
/* declaring                                                          */

void h_begin(h_case_t *c, h_kind_t kind, const char *fmt, ...)
{
    va_list ap;
    memset(c, 0, sizeof *c);
    va_start(ap, fmt);
    vsnprintf(c->name, sizeof c->name, fmt, ap);
    va_end(ap);
    c->kind = kind;
    c->misalign = h_misaligned;
    h_call(c, cdnn_graph_create(&c->graph), "cdnn_graph_create");
}

void h_call(h_case_t *c, cdnn_status_t st, const char *what)
{
    if (st == CDNN_STATUS_SUCCESS || c->setup_failed)
        return;
    h_fail(c, NULL, "%s: %s: %s", what, cdnn_status_string(st),
           cdnn_last_error());
    c->setup_failed = 1;
}

void h_graph_types(h_case_t *c, cdnn_data_type_t io, cdnn_data_type_t inter,
                   cdnn_data_type_t compute)
{
    if (!c->setup_failed)
        h_call(c, cdnn_graph_set_data_types(c->graph, io, inter, compute),
               "cdnn_graph_set_data_types");
}

static h_tensor_t *declare(h_case_t *c, int64_t uid, h_role_t role,
                           cdnn_data_type_t type, int32_t rank,
                           const int64_t *dims, const int64_t *strides)
{
    if (c->setup_failed)
        return NULL;
    if (c->count == H_MAX_TENSORS) {
        h_fail(c, NULL, "more than %d tensors in one case", H_MAX_TENSORS);
        c->setup_failed = 1;
        return NULL;
    }
    h_tensor_t *t = &c->t[c->count++];
    t->uid = uid;
    t->role = role;
    t->type = type;
    t->rank = rank;
    for (int32_t d = 0; d < rank; d++) {
        t->dims[d] = dims[d];
        t->strides[d] = strides ? strides[d] : 0;
    }
    h_call(c,
           cdnn_graph_tensor(c->graph, uid, NULL, type, rank,
                             rank ? dims : NULL, rank ? strides : NULL),
           "cdnn_graph_tensor");
    return t;
}

static void declare_laid_out(h_case_t *c, int64_t uid, h_role_t role,
                             cdnn_data_type_t type, int32_t rank,
                             const int64_t *dims, h_layout_t layout,
                             h_dist_t dist)
{
    int64_t strides[CDNN_MAX_RANK];
    int packed = layout == H_PACKED || rank == 0;
    if (!packed)
        h_strides(rank, dims, layout, strides);
    h_tensor_t *t = declare(c, uid, role, type, rank, dims,
                            packed ? NULL : strides);
    if (t != NULL)
        t->dist = dist;
}

void h_input(h_case_t *c, int64_t uid, cdnn_data_type_t type, int32_t rank,
             const int64_t *dims, h_layout_t layout, h_dist_t dist)
{
    declare_laid_out(c, uid, H_ROLE_INPUT, type, rank, dims, layout, dist);
}

void h_input_strided(h_case_t *c, int64_t uid, cdnn_data_type_t type,
                     int32_t rank, const int64_t *dims,
                     const int64_t *strides, h_dist_t dist)
{
    h_tensor_t *t = declare(c, uid, H_ROLE_INPUT, type, rank, dims, strides);
    if (t != NULL)
        t->dist = dist;
}

void h_output(h_case_t *c, int64_t uid, cdnn_data_type_t type, int32_t rank,
              const int64_t *dims, h_layout_t layout)
{
    declare_laid_out(c, uid, H_ROLE_OUTPUT, type, rank, dims, layout,
                     H_UNIFORM);
}

void h_virtual(h_case_t *c, int64_t uid, cdnn_data_type_t type, int32_t rank,
               const int64_t *dims)
{
    if (declare(c, uid, H_ROLE_VIRTUAL, type, rank, dims, NULL) != NULL)
        h_call(c, cdnn_graph_tensor_set_virtual(c->graph, uid),
               "cdnn_graph_tensor_set_virtual");
}

void h_scalar(h_case_t *c, int64_t uid, cdnn_data_type_t type, int32_t rank,
              double value)
{
    static const int64_t ones[CDNN_MAX_RANK] = {1, 1, 1, 1, 1, 1, 1, 1};
    if (declare(c, uid, H_ROLE_SCALAR, type, rank, ones, NULL) != NULL)
        h_call(c, cdnn_graph_tensor_set_scalar(c->graph, uid, value),
               "cdnn_graph_tensor_set_scalar");
}

void h_expect(h_case_t *c, const char *engine)
{
    if (c->expect_count < H_MAX_EXPECT)
        c->expect[c->expect_count++] = engine;
}

int h_gemm_type(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_F32 || type == CDNN_DATA_TYPE_F16 ||
           type == CDNN_DATA_TYPE_BF16;
}

/* ------------------------------------------------------------------ */
/* preparing, building, executing                                     */

static int has_buffer(const h_tensor_t *t)
{
    return t->role == H_ROLE_INPUT || t->role == H_ROLE_OUTPUT;
}

static int learn_shape(h_case_t *c, h_tensor_t *t)
{
    int32_t rank = CDNN_MAX_RANK;
    cdnn_status_t st = cdnn_graph_tensor_shape(c->graph, t->uid, &t->type,
                                               &rank, t->dims, t->strides);
    if (st != CDNN_STATUS_SUCCESS) {
        h_fail(c, NULL, "cdnn_graph_tensor_shape(%lld): %s: %s",
               (long long)t->uid, cdnn_status_string(st), cdnn_last_error());
        return -1;
    }
    t->rank = rank;
    t->bytes = span_bytes(t);
    return 0;
}

int h_prepare(h_case_t *c)
{
    if (c->setup_failed)
        return -1;
    cdnn_status_t st = cdnn_graph_validate(c->graph);
    if (st != CDNN_STATUS_SUCCESS) {
        h_fail(c, NULL, "cdnn_graph_validate: %s: %s", cdnn_status_string(st),
               cdnn_last_error());
        return -1;
    }
    for (int i = 0; i < c->count; i++) {
        h_tensor_t *t = &c->t[i];
        if (learn_shape(c, t) != 0)
            return -1;
        if (t->role != H_ROLE_INPUT)
            continue;
        t->buf = h_buffer_new(c, i, &t->raw);
        if (t->buf == NULL) {
            h_fail(c, NULL, "out of memory");
            return -1;
        }
        fill(t);
    }
    return 0;
}

int h_build_pinned(h_case_t *c, uint64_t id)
{
    cdnn_build_options_t *opts = NULL;
    cdnn_status_t st = cdnn_build_options_create(&opts);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_build_options_pin_engine(opts, id);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_build(c->graph, h_handle, opts);
    cdnn_build_options_destroy(opts);
    if (st != CDNN_STATUS_SUCCESS) {
        h_fail(c, h_engine_name(id), "build pinned to it: %s: %s",
               cdnn_status_string(st), cdnn_last_error());
        return -1;
    }
    uint64_t got = 0;
    const char *name = NULL;
    st = cdnn_graph_engine(c->graph, &got, &name);
    if (st != CDNN_STATUS_SUCCESS || got != id) {
        h_fail(c, h_engine_name(id), "the plan reports engine %s (%s)",
               st == CDNN_STATUS_SUCCESS ? name : "-",
               cdnn_status_string(st));
        return -1;
    }
    return 0;
}

cdnn_status_t h_execute(const h_case_t *c, unsigned char *const *outs,
                        const char *engine)
{
    int64_t uids[H_MAX_TENSORS];
    void *ptrs[H_MAX_TENSORS];
    int32_t n = 0;
    size_t ws = 0;
    for (int i = 0; i < c->count; i++) {
        if (!has_buffer(&c->t[i]))
            continue;
        uids[n] = c->t[i].uid;
        ptrs[n++] = c->t[i].role == H_ROLE_INPUT ? c->t[i].buf : outs[i];
    }
    cdnn_status_t st = cdnn_graph_workspace_size(c->graph, &ws);
    void *workspace = ws ? malloc(ws) : NULL;
    if (st == CDNN_STATUS_SUCCESS && ws && workspace == NULL)
        st = CDNN_STATUS_ALLOC_FAILED;
    if (workspace != NULL)
        memset(workspace, H_POISON, ws);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_execute(c->graph, h_handle, n, uids, ptrs, workspace);
    free(workspace);
    if (st != CDNN_STATUS_SUCCESS && engine != NULL)
        h_fail(c, engine, "execute: %s: %s", cdnn_status_string(st),
               cdnn_last_error());
    return st;
}

void h_case_free(h_case_t *c)
{
    for (int i = 0; i < c->count; i++) {
        free(c->t[i].raw);
        c->t[i].raw = c->t[i].buf = NULL;
    }
    cdnn_graph_destroy(c->graph);
    c->graph = NULL;
}

void h_values_free(h_values_t *v)
{
    for (int i = 0; i < v->count; i++)
        free(v->v[i]);
    v->count = 0;
}

/* ------------------------------------------------------------------ */
/* checking outputs                                                   */

/*
 * Allowed error as a fraction of max(|ref|, 1).  f16 and bf16 tolerances
 * come from their spacing, 2^-10 and 2^-7 of a value's magnitude: the
 * engine and the reference each round a result computed in f32 or f64
 * (both far finer) to the type once, so they may land one spacing apart
 * when the exact value lies near a rounding boundary.  An accumulation
 * may take a second spacing: its f32 sum's own error grows with the
 * reduction length but stays below 2% of an f16 spacing for the lengths
 * here (K * 2^-24 with K <= 1152), and the reference rounds typed
 * intermediates that the fused engines keep in float.
 */
static double tolerance(cdnn_data_type_t type, h_kind_t kind)
{
    double roundings = kind == H_ELEMENTWISE ? 1.0 : 2.0;
    switch (type) {
    case CDNN_DATA_TYPE_F32: return kind == H_ELEMENTWISE ? 1e-5 : 1e-4;
    case CDNN_DATA_TYPE_F64: return kind == H_ELEMENTWISE ? 1e-12 : 1e-10;
    case CDNN_DATA_TYPE_F16: return roundings * 0x1p-10;
    case CDNN_DATA_TYPE_BF16: return roundings * 0x1p-7;
    default: return 0.0;
    }
}

static void format_index(const h_tensor_t *t, int64_t linear, char *out,
                         size_t cap)
{
    int64_t idx[CDNN_MAX_RANK];
    size_t len = 0;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        idx[d] = linear % t->dims[d];
        linear /= t->dims[d];
    }
    out[0] = '\0';
    for (int32_t d = 0; d < t->rank && len < cap; d++)
        len += (size_t)snprintf(out + len, cap - len, d ? ",%lld" : "%lld",
                                (long long)idx[d]);
}

/* Compare got with ref over every element of t; what says what got is.
 * Returns the largest error as a fraction of max(|ref|, 1) (infinite
 * when an element is NaN where it should not be). */
static double compare_values(const h_case_t *c, const h_tensor_t *t,
                             const double *ref, const double *got,
                             const char *engine, const char *what)
{
    int64_t n = element_count(t), bad = 0, first = -1;
    double maxref = 0.0, worst = 0.0, largest = 0.0;
    for (int64_t i = 0; i < n; i++)
        maxref = fmax(maxref, fabs(ref[i]));
    double tol = tolerance(t->type, c->kind) * fmax(maxref, 1.0);
    for (int64_t i = 0; i < n; i++) {
        double err = fabs(got[i] - ref[i]);
        largest = isnan(err) ? INFINITY : fmax(largest, err);
        if (err <= tol)
            continue;
        if (first < 0)
            first = i;
        bad++;
        worst = isnan(err) ? err : fmax(worst, err);
    }
    if (bad == 0)
        return largest / fmax(maxref, 1.0);
    char at[96];
    format_index(t, first, at, sizeof at);
    h_fail(c, engine,
           "%s of uid %lld: %lld of %lld elements off by more than %.3g "
           "(max|ref| %.3g); first at [%s]: expected %.9g, got %.9g; "
           "worst error %.3g",
           what, (long long)t->uid, (long long)bad, (long long)n, tol, maxref,
           at, ref[first], got[first], worst);
    return largest / fmax(maxref, 1.0);
}

/* Every byte of buf outside t's elements must still be the poison. */
static void check_gaps(const h_case_t *c, const h_tensor_t *t,
                       const unsigned char *buf, const char *engine)
{
    unsigned char *mark = calloc(t->bytes, 1);
    int64_t idx[CDNN_MAX_RANK] = {0};
    size_t es = cdnn_data_type_size(t->type);
    if (mark == NULL)
        return;
    do {
        memset(mark + (size_t)offset_of(t, idx) * es, 1, es);
    } while (next_index(t->rank, t->dims, idx));
    for (size_t b = 0; b < t->bytes; b++) {
        if (!mark[b] && buf[b] != H_POISON) {
            h_fail(c, engine,
                   "uid %lld: wrote byte %zu, which is between elements",
                   (long long)t->uid, b);
            break;
        }
    }
    free(mark);
}

/* The reference's output must be fully written with sane values. */
static void check_reference_values(const h_case_t *c, const h_tensor_t *t,
                                   const double *v)
{
    int64_t n = element_count(t);
    for (int64_t i = 0; i < n; i++) {
        int sane = is_float(t->type) ? isfinite(v[i])
                   : t->type == CDNN_DATA_TYPE_BOOL ? (v[i] == 0 || v[i] == 1)
                                                    : 1;
        if (sane)
            continue;
        char at[96];
        format_index(t, i, at, sizeof at);
        h_fail(c, H_REFERENCE,
               "uid %lld [%s] is %g: unwritten or out of the type's range",
               (long long)t->uid, at, v[i]);
        return;
    }
}

static const double *find_value(const h_values_t *vals, int64_t uid)
{
    for (int i = 0; i < vals->count; i++)
        if (vals->uid[i] == uid)
            return vals->v[i];
    return NULL;
}

static void keep_or_compare(h_case_t *c, const h_tensor_t *t, double *v)
{
    if (c->against != NULL) {
        const double *other = find_value(c->against, t->uid);
        if (other != NULL)
            compare_values(c, t, other, v, H_REFERENCE,
                           "reference output in this layout vs packed");
    }
    if (c->keep != NULL && c->keep->count < H_MAX_TENSORS) {
        int k = c->keep->count++;
        c->keep->uid[k] = t->uid;
        c->keep->v[k] = v;
        return;
    }
    free(v);
}

/* ------------------------------------------------------------------ */
/* running                                                            */

static int contains(const uint64_t *ids, int32_t n, uint64_t id)
{
    for (int32_t i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

static int check_claims(const h_case_t *c, const uint64_t *ids, int32_t n)
{
    int ok = contains(ids, n, h_engine_id(H_REFERENCE));
    if (!ok)
        h_fail(c, H_REFERENCE, "does not apply (%d engines apply)", n);
    for (int e = 0; e < c->expect_count; e++) {
        if (contains(ids, n, h_engine_id(c->expect[e])))
            continue;
        h_fail(c, c->expect[e], "expected to apply, but does not");
    }
    return ok ? 0 : -1;
}

static void check_default_build(h_case_t *c, uint64_t first)
{
    cdnn_status_t st = cdnn_graph_build(c->graph, h_handle, NULL);
    uint64_t got = 0;
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_engine(c->graph, &got, NULL);
    if (st != CDNN_STATUS_SUCCESS)
        h_fail(c, NULL, "build without options: %s: %s",
               cdnn_status_string(st), cdnn_last_error());
    else if (got != first)
        h_fail(c, h_engine_name(got),
               "build without options chose it, not the first applicable "
               "engine %s", h_engine_name(first));
}

static int run_reference(h_case_t *c)
{
    if (h_build_pinned(c, h_engine_id(H_REFERENCE)) != 0)
        return -1;
    unsigned char *outs[H_MAX_TENSORS] = {0};
    for (int i = 0; i < c->count; i++) {
        if (c->t[i].role == H_ROLE_OUTPUT)
            outs[i] = c->t[i].buf = h_buffer_new(c, i, &c->t[i].raw);
    }
    if (h_execute(c, outs, H_REFERENCE) != CDNN_STATUS_SUCCESS)
        return -1;
    for (int i = 0; i < c->count; i++) {
        h_tensor_t *t = &c->t[i];
        if (t->role != H_ROLE_OUTPUT)
            continue;
        check_gaps(c, t, t->buf, H_REFERENCE);
        double *v = logical(t, t->buf);
        check_reference_values(c, t, v);
        keep_or_compare(c, t, v);
    }
    return 0;
}

static void compare_output(const h_case_t *c, const h_tensor_t *t,
                           const unsigned char *got, uint64_t id)
{
    const char *engine = h_engine_name(id);
    double *ref = logical(t, t->buf);
    double *val = logical(t, got);
    if (ref != NULL && val != NULL) {
        double error = compare_values(c, t, ref, val, engine, "output");
        double tol = tolerance(t->type, c->kind);
        note_error(id, t->type, error, tol > 0 ? error / tol : 0.0);
        check_gaps(c, t, got, engine);
    }
    free(ref);
    free(val);
}

static void run_engine(h_case_t *c, uint64_t id)
{
    const char *engine = h_engine_name(id);
    unsigned char *raw[H_MAX_TENSORS] = {0};
    unsigned char *outs[H_MAX_TENSORS] = {0};
    count_run(id);
    if (h_build_pinned(c, id) != 0)
        return;
    for (int i = 0; i < c->count; i++)
        if (c->t[i].role == H_ROLE_OUTPUT)
            outs[i] = h_buffer_new(c, i, &raw[i]);
    if (h_execute(c, outs, engine) == CDNN_STATUS_SUCCESS) {
        for (int i = 0; i < c->count; i++)
            if (c->t[i].role == H_ROLE_OUTPUT)
                compare_output(c, &c->t[i], outs[i], id);
    }
    for (int i = 0; i < c->count; i++)
        free(raw[i]);
}

static void run_engines(h_case_t *c)
{
    uint64_t ids[H_MAX_ENGINES];
    int32_t n = 0;
    cdnn_status_t st = cdnn_graph_applicable_engines(c->graph, h_handle, ids,
                                                     H_MAX_ENGINES, &n);
    if (st != CDNN_STATUS_SUCCESS) {
        h_fail(c, NULL, "cdnn_graph_applicable_engines: %s: %s",
               cdnn_status_string(st), cdnn_last_error());
        return;
    }
    if (n > H_MAX_ENGINES)
        n = H_MAX_ENGINES;
    if (check_claims(c, ids, n) != 0)
        return;
    check_default_build(c, ids[0]);
    if (run_reference(c) != 0)
        return;
    for (int32_t i = 0; i < n; i++)
        if (ids[i] != h_engine_id(H_REFERENCE))
            run_engine(c, ids[i]);
}

void h_run(h_case_t *c)
{
    h_case_count++;
    if (h_prepare(c) == 0)
        run_engines(c);
    h_case_free(c);
}

void h_plan_round_trip(cdnn_graph_t *g, const char *engine, int32_t count,
                       const int64_t *uids, void *const *first, void *const *second)
{
    cdnn_build_options_t *opts = NULL;
    assert_int_equal(cdnn_build_options_create(&opts), CDNN_STATUS_SUCCESS);
    assert_int_equal(cdnn_build_options_pin_engine(opts, h_engine_id(engine)), 0);
    assert_int_equal(cdnn_graph_build(g, h_handle, opts), CDNN_STATUS_SUCCESS);
    cdnn_build_options_destroy(opts);
    size_t n = 0;
    assert_int_equal(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &n), CDNN_STATUS_SUCCESS);
    unsigned char *bytes = malloc(n), *again = malloc(n);
    assert_non_null(bytes);
    assert_non_null(again);
    assert_int_equal(cdnn_graph_save(g, CDNN_SAVE_PLAN, bytes, n, &n), CDNN_STATUS_SUCCESS);
    cdnn_graph_t *plan = NULL;
    assert_int_equal(cdnn_plan_load(&plan, h_handle, bytes, n), CDNN_STATUS_SUCCESS);
    size_t ws_size = 0, ws_loaded = 0;
    assert_int_equal(cdnn_graph_workspace_size(g, &ws_size), CDNN_STATUS_SUCCESS);
    assert_int_equal(cdnn_graph_workspace_size(plan, &ws_loaded), CDNN_STATUS_SUCCESS);
    assert_int_equal(ws_size, ws_loaded);
    void *ws = malloc(ws_size ? ws_size : 1);
    assert_non_null(ws);
    assert_int_equal(cdnn_graph_execute(g, h_handle, count, uids, first, ws), 0);
    assert_int_equal(cdnn_graph_execute(plan, h_handle, count, uids, second, ws), 0);
    free(ws);
    size_t m = 0;
    assert_int_equal(cdnn_graph_save(plan, CDNN_SAVE_PLAN, again, n, &m), CDNN_STATUS_SUCCESS);
    assert_int_equal(m, n);
    assert_memory_equal(bytes, again, n);
    cdnn_graph_destroy(plan);
    free(bytes);
    free(again);
}
