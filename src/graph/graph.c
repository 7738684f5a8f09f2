/*
 * graph.c -- building a graph: tensors and operations.
 *
 * The builder records what the caller declares and checks only what can be
 * checked locally (arguments, attributes, uid uniqueness, size limits).
 * Everything that depends on the graph as a whole is validate.c's.
 */
#include "graph/graph.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "graph/ops.h"

/* A plan-only graph holds a loaded plan and nothing to edit: an edit would
 * drop the plan and leave an empty graph. */
static cdnn_status_t check_editable(const cdnn_graph_t *g)
{
    if (g->plan_only)
        return cdnn_fail(CDNN_STATUS_BAD_STATE,
                         "the graph was loaded from a bare plan and cannot be "
                         "edited; load the graph (or a container) to edit it");
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_graph_create(cdnn_graph_t **graph)
{
    CDNN_CHECK_ARG(graph);
    *graph = NULL;
    cdnn_graph_t *g = calloc(1, sizeof *g);
    if (!g)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory creating a graph");
    g->io_type = CDNN_DATA_TYPE_F32;
    g->intermediate_type = CDNN_DATA_TYPE_F32;
    g->compute_type = CDNN_DATA_TYPE_F32;
    *graph = g;
    return CDNN_STATUS_SUCCESS;
}

void graph_set_plan(cdnn_graph_t *g, struct plan *plan, void (*destroy)(struct plan *))
{
    if (g->plan)
        g->plan_destroy(g->plan);
    g->plan = plan;
    g->plan_destroy = destroy;
}

void graph_invalidate(cdnn_graph_t *g)
{
    graph_set_plan(g, NULL, NULL);
    free(g->tensor_views);
    free(g->node_views);
    g->tensor_views = NULL;
    g->node_views = NULL;
    memset(&g->view, 0, sizeof g->view);
    g->validated = 0;
}

void cdnn_graph_destroy(cdnn_graph_t *graph)
{
    if (!graph)
        return;
    graph_invalidate(graph);
    for (int32_t i = 0; i < graph->tensor_count; i++)
        free(graph->tensors[i].name);
    for (int32_t i = 0; i < graph->node_count; i++)
        free(graph->nodes[i].name);
    free(graph->tensors);
    free(graph->uid_slots);
    free(graph->nodes);
    free(graph->name);
    free(graph);
}

cdnn_status_t cdnn_graph_set_name(cdnn_graph_t *graph, const char *name)
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(name);
    char *copy = strdup(name);
    if (!copy)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    free(graph->name);
    graph->name = copy;
    return CDNN_STATUS_SUCCESS;
}

static int valid_type(cdnn_data_type_t t)
{
    return (unsigned)t < CDNN_DATA_TYPE_COUNT;
}

cdnn_status_t cdnn_graph_set_data_types(cdnn_graph_t *graph,
                                        cdnn_data_type_t io,
                                        cdnn_data_type_t intermediate,
                                        cdnn_data_type_t compute)
{
    CDNN_CHECK_ARG(graph);
    if (!valid_type(io) || !valid_type(intermediate) || !valid_type(compute) ||
        io == CDNN_DATA_TYPE_UNSET || intermediate == CDNN_DATA_TYPE_UNSET ||
        compute == CDNN_DATA_TYPE_UNSET)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "graph data types must be set types (got io %d, "
                         "intermediate %d, compute %d)",
                         (int)io, (int)intermediate, (int)compute);
    cdnn_status_t st = check_editable(graph);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    graph_invalidate(graph);
    graph->io_type = io;
    graph->intermediate_type = intermediate;
    graph->compute_type = compute;
    return CDNN_STATUS_SUCCESS;
}

/* A 64-bit mix (splitmix64's finaliser), so that sequential uids spread. */
static uint32_t uid_hash(int64_t uid)
{
    uint64_t x = (uint64_t)uid;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return (uint32_t)(x ^ (x >> 31));
}

/* The slot that holds uid, or the empty slot where it would go. */
static uint32_t uid_slot(const cdnn_graph_t *g, int64_t uid)
{
    uint32_t mask = g->uid_slot_count - 1, s = uid_hash(uid) & mask;
    while (g->uid_slots[s].index_plus_1 && g->uid_slots[s].uid != uid)
        s = (s + 1) & mask;
    return s;
}

static void uid_index_add(cdnn_graph_t *g, int32_t i)
{
    int64_t uid = g->tensors[i].uid;
    g->uid_slots[uid_slot(g, uid)] = (struct uid_slot){uid, i + 1};
}

int32_t graph_find_tensor(const cdnn_graph_t *g, int64_t uid)
{
    return g->uid_slot_count ? g->uid_slots[uid_slot(g, uid)].index_plus_1 - 1 : -1;
}

/* Make room in the uid index for one more tensor (rehashing them all when
 * it would be more than half full). */
static int uid_index_reserve(cdnn_graph_t *g)
{
    if (2 * ((uint32_t)g->tensor_count + 1) <= g->uid_slot_count)
        return 0;
    uint32_t count = g->uid_slot_count ? 2 * g->uid_slot_count : 16;
    struct uid_slot *slots = calloc(count, sizeof *slots);
    if (!slots)
        return -1;
    free(g->uid_slots);
    g->uid_slots = slots;
    g->uid_slot_count = count;
    for (int32_t i = 0; i < g->tensor_count; i++)
        uid_index_add(g, i);
    return 0;
}

/* Grow *items (of count/cap) by one slot of size bytes; NULL on failure. */
static void *grow(void **items, int32_t *count, int32_t *cap, size_t size)
{
    if (*count == *cap) {
        int32_t new_cap = *cap ? *cap * 2 : 8;
        void *p = realloc(*items, (size_t)new_cap * size);
        if (!p)
            return NULL;
        *items = p;
        *cap = new_cap;
    }
    void *slot = (char *)*items + (size_t)*count * size;
    memset(slot, 0, size);
    (*count)++;
    return slot;
}

static cdnn_status_t check_tensor_args(const cdnn_graph_t *g, int64_t uid,
                                       const char *name, cdnn_data_type_t type,
                                       int32_t rank, const int64_t *dims,
                                       const int64_t *strides)
{
    const char *shown = name ? name : "(unnamed)";
    if (uid == CDNN_UID_NONE)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "tensor '%s': uid INT64_MIN is reserved for \"no tensor\"",
                         shown);
    int32_t existing = graph_find_tensor(g, uid);
    if (existing >= 0)
        return cdnn_fail(CDNN_STATUS_INVALID_GRAPH,
                         "tensor '%s' (uid %lld): uid %lld is already used by "
                         "tensor '%s'; uids must be unique in a graph",
                         shown, (long long)uid, (long long)uid,
                         g->tensors[existing].name);
    if (!valid_type(type))
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "tensor '%s' (uid %lld): data type %d is not a cdnn_data_type_t",
                         shown, (long long)uid, (int)type);
    if (rank == 0 && dims == NULL && strides == NULL)
        return CDNN_STATUS_SUCCESS; /* shape to be inferred */
    if (rank < 1 || rank > CDNN_MAX_RANK || !dims)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "tensor '%s' (uid %lld): rank %d with %s dims; give "
                         "1 <= rank <= %d and dims, or rank 0 and no dims to infer",
                         shown, (long long)uid, rank, dims ? "given" : "no",
                         CDNN_MAX_RANK);
    int64_t elements = 1, span = 0;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 1 || dims[d] > CDNN_MAX_DIM)
            return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                             "tensor '%s' (uid %lld): dim %d is %lld; dims must be in "
                             "[1, 2^40]", shown, (long long)uid, d, (long long)dims[d]);
        if (strides && (strides[d] < 0 || strides[d] > CDNN_MAX_DIM))
            return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                             "tensor '%s' (uid %lld): stride %d is %lld; strides must be "
                             "in [0, 2^40]", shown, (long long)uid, d, (long long)strides[d]);
        /* elements <= 2^52 and a dim <= 2^40 can still overflow int64 in
         * their product (2^92); an overflow is past the limit anyway. */
        if (__builtin_mul_overflow(elements, dims[d], &elements))
            elements = CDNN_MAX_ELEMENTS + 1;
        if (strides && strides[d] && dims[d] - 1 > (CDNN_MAX_ELEMENTS - span) / strides[d])
            span = CDNN_MAX_ELEMENTS + 1;
        else if (strides)
            span += (dims[d] - 1) * strides[d];
        if (elements > CDNN_MAX_ELEMENTS || span > CDNN_MAX_ELEMENTS)
            return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                             "tensor '%s' (uid %lld) has more than 2^52 elements or "
                             "spans more than 2^52 of them", shown, (long long)uid);
    }
    return CDNN_STATUS_SUCCESS;
}

static void packed_strides(int32_t rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
}

static char *default_name(const char *prefix, long long number)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%s%lld", prefix, number);
    return strdup(buf);
}

cdnn_status_t cdnn_graph_tensor(cdnn_graph_t *graph, int64_t uid,
                                const char *name, cdnn_data_type_t type,
                                int32_t rank, const int64_t *dims,
                                const int64_t *strides)
{
    CDNN_CHECK_ARG(graph);
    cdnn_status_t st = check_editable(graph);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_tensor_args(graph, uid, name, type, rank, dims, strides);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (graph->tensor_count >= CDNN_MAX_TENSORS)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "tensor %lld would be the graph's %d-th; a graph holds "
                         "at most CDNN_MAX_TENSORS (%d) tensors",
                         (long long)uid, graph->tensor_count + 1, CDNN_MAX_TENSORS);
    char *owned = name ? strdup(name) : default_name("t", (long long)uid);
    graph_tensor_t *t = owned && uid_index_reserve(graph) == 0
                            ? grow((void **)&graph->tensors, &graph->tensor_count,
                                   &graph->tensor_cap, sizeof *t)
                            : NULL;
    if (!t) {
        free(owned);
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory adding tensor %lld",
                         (long long)uid);
    }
    graph_invalidate(graph);
    t->uid = uid;
    uid_index_add(graph, graph->tensor_count - 1);
    t->name = owned;
    t->type = type;
    t->rank = dims ? rank : 0;
    for (int32_t d = 0; d < t->rank; d++)
        t->dims[d] = dims[d];
    if (t->rank && strides)
        memcpy(t->strides, strides, (size_t)rank * sizeof *strides);
    else if (t->rank)
        packed_strides(t->rank, t->dims, t->strides);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t find_declared(cdnn_graph_t *g, int64_t uid,
                                   graph_tensor_t **t)
{
    int32_t i = graph_find_tensor(g, uid);
    if (i < 0)
        return cdnn_fail(CDNN_STATUS_NOT_FOUND, "no tensor has uid %lld",
                         (long long)uid);
    graph_invalidate(g);
    *t = &g->tensors[i];
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_graph_tensor_set_virtual(cdnn_graph_t *graph, int64_t uid)
{
    CDNN_CHECK_ARG(graph);
    graph_tensor_t *t = NULL;
    cdnn_status_t st = find_declared(graph, uid, &t);
    if (st == CDNN_STATUS_SUCCESS)
        t->is_virtual = 1;
    return st;
}

cdnn_status_t cdnn_graph_tensor_set_alignment(cdnn_graph_t *graph, int64_t uid,
                                              int64_t bytes)
{
    CDNN_CHECK_ARG(graph);
    if (bytes < 1 || (bytes & (bytes - 1)) != 0)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "alignment %lld of tensor uid %lld is not a power of 2",
                         (long long)bytes, (long long)uid);
    graph_tensor_t *t = NULL;
    cdnn_status_t st = find_declared(graph, uid, &t);
    if (st == CDNN_STATUS_SUCCESS)
        t->alignment = bytes;
    return st;
}

cdnn_status_t cdnn_graph_tensor_set_scalar(cdnn_graph_t *graph, int64_t uid,
                                           double value)
{
    CDNN_CHECK_ARG(graph);
    graph_tensor_t *t = NULL;
    cdnn_status_t st = find_declared(graph, uid, &t);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    /* A NaN scalar poisons every element it touches: it is an upstream
     * bug (a 0/0 turned constant), best refused where it enters.
     * Infinities are values (bounds for max and min). */
    if (isnan(value))
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "tensor '%s' (uid %lld): the pass-by-value scalar's value is "
                         "NaN; give a number (infinities are allowed)",
                         t->name, (long long)uid);
    for (int32_t d = 0; d < t->rank; d++)
        if (t->dims[d] != 1)
            return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                             "tensor '%s' (uid %lld): a pass-by-value scalar "
                             "needs every dim 1, but dim %d is %lld",
                             t->name, (long long)uid, d, (long long)t->dims[d]);
    if (t->rank == 0) {
        t->rank = 1;
        t->dims[0] = 1;
        t->strides[0] = 1;
    }
    t->is_scalar = 1;
    t->scalar_value = value;
    return CDNN_STATUS_SUCCESS;
}

/* ---- operations ------------------------------------------------------- */

/* Attribute checks need only the attributes, so the builder makes them and
 * refuses a bad node with BAD_PARAM before it joins the graph; loaders go
 * through here too, so a loaded graph never holds one either. */

static cdnn_status_t attr_fail(const cdnn_graph_t *g, cdnn_op_t op, const char *name,
                               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* "node '<name>' (<op>): <what>", with the name add_node would give. */
static cdnn_status_t attr_fail(const cdnn_graph_t *g, cdnn_op_t op, const char *name,
                               const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (name)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "node '%s' (%s): %s", name,
                         cdnn_op_name(op), what);
    return cdnn_fail(CDNN_STATUS_BAD_PARAM, "node 'node%d' (%s): %s", g->node_count,
                     cdnn_op_name(op), what);
}

/* One per-spatial-dim attribute: every used entry in [lowest, 2^20]. */
static cdnn_status_t check_spatial(const cdnn_graph_t *g, cdnn_op_t op, const char *name,
                                   const char *attr, const int64_t *v, int32_t n,
                                   int64_t lowest)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] < lowest || v[i] > CDNN_MAX_CONV_ATTR)
            return attr_fail(g, op, name, "%s[%d] is %lld; it must be in [%lld, 2^20] "
                             "(bad attribute)", attr, i, (long long)v[i],
                             (long long)lowest);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_conv_attr(const cdnn_graph_t *g, cdnn_op_t op, const char *name,
                                     const cdnn_conv_attr_t *a)
{
    if (a->spatial_dims < 1 || a->spatial_dims > 3)
        return attr_fail(g, op, name, "spatial_dims is %d; it must be 1, 2 or 3 "
                         "(bad attribute)", a->spatial_dims);
    int32_t n = a->spatial_dims;
    cdnn_status_t st = check_spatial(g, op, name, "pre_padding", a->pre_padding, n, 0);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_spatial(g, op, name, "post_padding", a->post_padding, n, 0);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_spatial(g, op, name, "stride", a->stride, n, 1);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_spatial(g, op, name, "dilation", a->dilation, n, 1);
    if (st == CDNN_STATUS_SUCCESS && (a->groups < 1 || a->groups > CDNN_MAX_CONV_ATTR))
        st = attr_fail(g, op, name, "groups is %lld; it must be in [1, 2^20] "
                       "(bad attribute)", (long long)a->groups);
    return st;
}

/* What the op's attributes can be checked for without the rest of the
 * graph; the rest (values that depend on shapes, finite epsilons and
 * clips) is validation's. */
/* A rank within 1..8 and each of its dims named once. */
static cdnn_status_t check_transpose_attr(const cdnn_graph_t *g, cdnn_op_t op,
                                          const char *name,
                                          const cdnn_transpose_attr_t *a)
{
    if (a->rank < 1 || a->rank > CDNN_MAX_RANK)
        return attr_fail(g, op, name, "rank %d is not 1 to %d (bad attribute)",
                         (int)a->rank, CDNN_MAX_RANK);
    int seen[CDNN_MAX_RANK] = {0};
    for (int32_t i = 0; i < a->rank; i++) {
        int32_t p = a->perm[i];
        if (p < 0 || p >= a->rank || seen[p]++)
            return attr_fail(g, op, name, "perm[%d] is %d; perm must hold each of 0 "
                             "to %d once (bad attribute)", (int)i, (int)p,
                             (int)a->rank - 1);
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_slice_attr(const cdnn_graph_t *g, cdnn_op_t op,
                                      const char *name, const cdnn_slice_attr_t *a)
{
    if (a->rank < 1 || a->rank > CDNN_MAX_RANK)
        return attr_fail(g, op, name, "rank %d is not 1 to %d (bad attribute)",
                         (int)a->rank, CDNN_MAX_RANK);
    for (int32_t i = 0; i < a->rank; i++) {
        if (a->start[i] < 0 || a->start[i] > CDNN_MAX_DIM)
            return attr_fail(g, op, name, "start[%d] is %lld; starts are 0 to 2^40 "
                             "(bad attribute)", (int)i, (long long)a->start[i]);
        if (a->step[i] < 1)
            return attr_fail(g, op, name, "step[%d] is %d; steps are 1 or more "
                             "(bad attribute)", (int)i, (int)a->step[i]);
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_pad_attr(const cdnn_graph_t *g, cdnn_op_t op,
                                    const char *name, const cdnn_pad_attr_t *a)
{
    if (a->rank < 1 || a->rank > CDNN_MAX_RANK)
        return attr_fail(g, op, name, "rank %d is not 1 to %d (bad attribute)",
                         (int)a->rank, CDNN_MAX_RANK);
    for (int32_t i = 0; i < a->rank; i++)
        if (a->pre[i] < 0 || a->pre[i] > CDNN_MAX_DIM)
            return attr_fail(g, op, name, "pre[%d] is %lld; padding is 0 to 2^40 "
                             "(bad attribute)", (int)i, (long long)a->pre[i]);
    if (isnan(a->value))
        return attr_fail(g, op, name, "value is NaN, which no type but a float holds "
                         "and no comparison finds (bad attribute)");
    return CDNN_STATUS_SUCCESS;
}

/* One pooling attribute array: every used entry in [lowest, 2^20]. */
static cdnn_status_t check_pool_ints(const cdnn_graph_t *g, cdnn_op_t op,
                                     const char *name, const char *attr,
                                     const int32_t *v, int32_t n)
{
    int64_t wide[3];
    for (int32_t i = 0; i < n; i++)
        wide[i] = v[i];
    return check_spatial(g, op, name, attr, wide, n, 1);
}

static cdnn_status_t check_pooling_attr(const cdnn_graph_t *g, cdnn_op_t op,
                                        const char *name, const cdnn_pooling_attr_t *a)
{
    if ((unsigned)a->mode >= CDNN_POOLING_MODE_COUNT)
        return attr_fail(g, op, name, "mode %d is not a pooling mode (0 max, 1 "
                         "average) (bad attribute)", (int)a->mode);
    if (a->spatial_dims < 1 || a->spatial_dims > 3)
        return attr_fail(g, op, name, "spatial_dims is %d; it must be 1, 2 or 3 "
                         "(bad attribute)", (int)a->spatial_dims);
    int32_t n = a->spatial_dims;
    cdnn_status_t st = check_pool_ints(g, op, name, "window", a->window, n);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_pool_ints(g, op, name, "stride", a->stride, n);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_pool_ints(g, op, name, "dilation", a->dilation, n);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_spatial(g, op, name, "pre_padding", a->pre_padding, n, 0);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_spatial(g, op, name, "post_padding", a->post_padding, n, 0);
    return st;
}

static cdnn_status_t check_resize_attr(const cdnn_graph_t *g, cdnn_op_t op,
                                       const char *name, const cdnn_resize_attr_t *a)
{
    if ((unsigned)a->mode >= CDNN_RESIZE_MODE_COUNT)
        return attr_fail(g, op, name, "mode %d is not a resize mode (0 nearest, 1 "
                         "linear) (bad attribute)", (int)a->mode);
    if ((unsigned)a->coordinate >= CDNN_RESIZE_COORDINATE_COUNT)
        return attr_fail(g, op, name, "coordinate %d is not a coordinate mode (0 "
                         "half-pixel, 1 align-corners, 2 asymmetric) (bad attribute)",
                         (int)a->coordinate);
    if ((unsigned)a->nearest >= CDNN_RESIZE_NEAREST_COUNT)
        return attr_fail(g, op, name, "nearest %d is not a rounding mode (0 round "
                         "prefer floor, 1 round prefer ceil, 2 floor, 3 ceil) (bad "
                         "attribute)", (int)a->nearest);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_attr(const cdnn_graph_t *g, cdnn_op_t op, const char *name,
                                const cdnn_node_attr_t *a)
{
    switch (op_desc(op)->attr) {
    case OP_ATTR_CONV: return check_conv_attr(g, op, name, &a->conv);
    case OP_ATTR_POINTWISE:
        if ((unsigned)a->pointwise.mode >= CDNN_PW_MODE_COUNT)
            return attr_fail(g, op, name, "mode %d is not a pointwise mode (0 to %d) "
                             "(bad attribute)", (int)a->pointwise.mode,
                             CDNN_PW_MODE_COUNT - 1);
        return CDNN_STATUS_SUCCESS;
    case OP_ATTR_REDUCTION:
        if ((unsigned)a->reduction >= CDNN_REDUCE_MODE_COUNT)
            return attr_fail(g, op, name, "mode %d is not a reduction mode (0 to %d) "
                             "(bad attribute)", (int)a->reduction,
                             CDNN_REDUCE_MODE_COUNT - 1);
        return CDNN_STATUS_SUCCESS;
    case OP_ATTR_TRANSPOSE: return check_transpose_attr(g, op, name, &a->transpose);
    case OP_ATTR_SLICE: return check_slice_attr(g, op, name, &a->slice);
    case OP_ATTR_PAD: return check_pad_attr(g, op, name, &a->pad);
    case OP_ATTR_POOLING: return check_pooling_attr(g, op, name, &a->pooling);
    case OP_ATTR_RESIZE: return check_resize_attr(g, op, name, &a->resize);
    case OP_ATTR_MOMENTUM:
        if (!(a->momentum >= 0 && a->momentum <= 1)) /* NaN too */
            return attr_fail(g, op, name, "momentum %g is not a weight from 0 to 1 "
                             "(bad attribute)", a->momentum);
        return CDNN_STATUS_SUCCESS;
    case OP_ATTR_TOPK:
        if (a->topk.axis < -CDNN_MAX_RANK || a->topk.axis >= CDNN_MAX_RANK)
            return attr_fail(g, op, name, "axis %d is beyond any tensor's dims "
                             "(-%d to %d) (bad attribute)", (int)a->topk.axis,
                             CDNN_MAX_RANK, CDNN_MAX_RANK - 1);
        if (a->topk.k < 1 || a->topk.k > CDNN_MAX_DIM)
            return attr_fail(g, op, name, "k is %lld; top-k takes 1 to 2^40 elements "
                             "per row, at most the dim at the axis (bad attribute)",
                             (long long)a->topk.k);
        return CDNN_STATUS_SUCCESS;
    case OP_ATTR_AXIS:
        /* No tensor has more dims than this; the rank decides the rest. */
        if (a->axis < -CDNN_MAX_RANK || a->axis >= CDNN_MAX_RANK)
            return attr_fail(g, op, name, "axis %d is beyond any tensor's dims "
                             "(-%d to %d) (bad attribute)", (int)a->axis,
                             CDNN_MAX_RANK, CDNN_MAX_RANK - 1);
        return CDNN_STATUS_SUCCESS;
    default: return CDNN_STATUS_SUCCESS;
    }
}

static cdnn_status_t add_node(cdnn_graph_t *g, cdnn_op_t op, const char *name,
                              const int64_t *inputs, int n_in,
                              const int64_t *outputs, int n_out,
                              const cdnn_node_attr_t *attr)
{
    CDNN_CHECK_ARG(g);
    cdnn_status_t st = check_editable(g);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_attr(g, op, name, attr);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (g->node_count >= CDNN_MAX_NODES)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "node '%s' would be the graph's %d-th; a graph holds at "
                         "most CDNN_MAX_NODES (%d) nodes", name ? name : "(unnamed)",
                         g->node_count + 1, CDNN_MAX_NODES);
    char *owned = name ? strdup(name) : default_name("node", g->node_count);
    graph_node_t *n = owned ? grow((void **)&g->nodes, &g->node_count,
                                   &g->node_cap, sizeof *n)
                            : NULL;
    if (!n) {
        free(owned);
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory adding a node");
    }
    graph_invalidate(g);
    n->op = op;
    n->name = owned;
    n->attr = *attr;
    for (int i = 0; i < CDNN_NODE_MAX_INPUTS; i++)
        n->inputs[i] = i < n_in ? inputs[i] : CDNN_UID_NONE;
    for (int i = 0; i < CDNN_NODE_MAX_OUTPUTS; i++)
        n->outputs[i] = i < n_out ? outputs[i] : CDNN_UID_NONE;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t add_conv(cdnn_graph_t *g, cdnn_op_t op, const char *name,
                              const cdnn_conv_attr_t *attr, int64_t in0,
                              int64_t in1, int64_t out0)
{
    CDNN_CHECK_ARG(attr);
    int64_t in[2] = {in0, in1};
    cdnn_node_attr_t a = {.conv = *attr};
    return add_node(g, op, name, in, 2, &out0, 1, &a);
}

cdnn_status_t cdnn_graph_conv_fwd(cdnn_graph_t *graph, const char *name,
                                  const cdnn_conv_attr_t *attr, int64_t x,
                                  int64_t w, int64_t y)
{
    return add_conv(graph, CDNN_OP_CONV_FWD, name, attr, x, w, y);
}

cdnn_status_t cdnn_graph_conv_bwd_data(cdnn_graph_t *graph, const char *name,
                                       const cdnn_conv_attr_t *attr, int64_t dy,
                                       int64_t w, int64_t dx)
{
    return add_conv(graph, CDNN_OP_CONV_BWD_DATA, name, attr, dy, w, dx);
}

cdnn_status_t cdnn_graph_conv_bwd_filter(cdnn_graph_t *graph, const char *name,
                                         const cdnn_conv_attr_t *attr,
                                         int64_t x, int64_t dy, int64_t dw)
{
    return add_conv(graph, CDNN_OP_CONV_BWD_FILTER, name, attr, x, dy, dw);
}

cdnn_status_t cdnn_graph_matmul(cdnn_graph_t *graph, const char *name,
                                int64_t a, int64_t b, int64_t c)
{
    int64_t in[2] = {a, b};
    const cdnn_node_attr_t none = {0};
    return add_node(graph, CDNN_OP_MATMUL, name, in, 2, &c, 1, &none);
}

cdnn_status_t cdnn_graph_pointwise(cdnn_graph_t *graph, const char *name,
                                   const cdnn_pointwise_attr_t *attr, int64_t a,
                                   int64_t b, int64_t c, int64_t y)
{
    CDNN_CHECK_ARG(attr);
    int64_t in[3] = {a, b, c};
    cdnn_node_attr_t pw = {.pointwise = *attr};
    return add_node(graph, CDNN_OP_POINTWISE, name, in, 3, &y, 1, &pw);
}

cdnn_status_t cdnn_graph_reduction(cdnn_graph_t *graph, const char *name,
                                   cdnn_reduction_mode_t mode, int64_t x,
                                   int64_t y)
{
    cdnn_node_attr_t a = {.reduction = mode};
    return add_node(graph, CDNN_OP_REDUCTION, name, &x, 1, &y, 1, &a);
}

cdnn_status_t cdnn_graph_batchnorm_inference(cdnn_graph_t *graph,
                                             const char *name, double epsilon,
                                             int64_t x, int64_t scale,
                                             int64_t bias, int64_t mean,
                                             int64_t variance, int64_t y)
{
    int64_t in[5] = {x, scale, bias, mean, variance};
    cdnn_node_attr_t a = {.epsilon = epsilon};
    return add_node(graph, CDNN_OP_BATCHNORM_INFERENCE, name, in, 5, &y, 1, &a);
}

cdnn_status_t cdnn_graph_layernorm(cdnn_graph_t *graph, const char *name,
                                   double epsilon, int64_t x, int64_t scale,
                                   int64_t bias, int64_t y, int64_t mean,
                                   int64_t inv_variance)
{
    int64_t in[3] = {x, scale, bias};
    int64_t out[3] = {y, mean, inv_variance};
    cdnn_node_attr_t a = {.epsilon = epsilon};
    return add_node(graph, CDNN_OP_LAYERNORM, name, in, 3, out, 3, &a);
}

cdnn_status_t cdnn_graph_rmsnorm(cdnn_graph_t *graph, const char *name,
                                 double epsilon, int64_t x, int64_t scale,
                                 int64_t bias, int64_t y, int64_t inv_rms)
{
    int64_t in[3] = {x, scale, bias};
    int64_t out[2] = {y, inv_rms};
    cdnn_node_attr_t a = {.epsilon = epsilon};
    return add_node(graph, CDNN_OP_RMSNORM, name, in, 3, out, 2, &a);
}

cdnn_status_t cdnn_graph_batchnorm_train(cdnn_graph_t *graph, const char *name,
                                         double epsilon, int64_t x, int64_t scale,
                                         int64_t bias, int64_t y, int64_t mean,
                                         int64_t inv_variance)
{
    int64_t in[3] = {x, scale, bias};
    int64_t out[3] = {y, mean, inv_variance};
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a); /* unused bytes are 0, for the key */
    a.epsilon = epsilon;
    return add_node(graph, CDNN_OP_BATCHNORM_TRAIN, name, in, 3, out, 3, &a);
}

cdnn_status_t cdnn_graph_batchnorm_running_stats(cdnn_graph_t *graph, const char *name,
                                                 double momentum, int64_t x,
                                                 int64_t running_mean,
                                                 int64_t running_var,
                                                 int64_t next_running_mean,
                                                 int64_t next_running_var)
{
    int64_t in[3] = {x, running_mean, running_var};
    int64_t out[2] = {next_running_mean, next_running_var};
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a);
    a.momentum = momentum;
    return add_node(graph, CDNN_OP_BATCHNORM_RUNNING_STATS, name, in, 3, out, 2, &a);
}

/* The three backward passes take no attributes: the forward's statistics
 * are inputs. */
static cdnn_status_t add_norm_bwd(cdnn_graph_t *graph, cdnn_op_t op, const char *name,
                                  const int64_t *in, int n_in, int64_t dx,
                                  int64_t dscale, int64_t dbias)
{
    int64_t out[3] = {dx, dscale, dbias};
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a);
    return add_node(graph, op, name, in, n_in, out, 3, &a);
}

cdnn_status_t cdnn_graph_batchnorm_bwd(cdnn_graph_t *graph, const char *name,
                                       int64_t dy, int64_t x, int64_t scale,
                                       int64_t mean, int64_t inv_variance,
                                       int64_t dx, int64_t dscale, int64_t dbias)
{
    const int64_t in[5] = {dy, x, scale, mean, inv_variance};
    return add_norm_bwd(graph, CDNN_OP_BATCHNORM_BWD, name, in, 5, dx, dscale, dbias);
}

cdnn_status_t cdnn_graph_layernorm_bwd(cdnn_graph_t *graph, const char *name,
                                       int64_t dy, int64_t x, int64_t scale,
                                       int64_t mean, int64_t inv_variance,
                                       int64_t dx, int64_t dscale, int64_t dbias)
{
    const int64_t in[5] = {dy, x, scale, mean, inv_variance};
    return add_norm_bwd(graph, CDNN_OP_LAYERNORM_BWD, name, in, 5, dx, dscale, dbias);
}

cdnn_status_t cdnn_graph_rmsnorm_bwd(cdnn_graph_t *graph, const char *name,
                                     int64_t dy, int64_t x, int64_t scale,
                                     int64_t inv_rms, int64_t dx, int64_t dscale,
                                     int64_t dbias)
{
    const int64_t in[4] = {dy, x, scale, inv_rms};
    return add_norm_bwd(graph, CDNN_OP_RMSNORM_BWD, name, in, 4, dx, dscale, dbias);
}

cdnn_status_t cdnn_graph_sdpa_fwd(cdnn_graph_t *graph, const char *name,
                                  const cdnn_sdpa_attr_t *attr, int64_t q,
                                  int64_t k, int64_t v, int64_t o)
{
    CDNN_CHECK_ARG(attr);
    int64_t in[3] = {q, k, v};
    cdnn_node_attr_t a = {.sdpa = *attr};
    return add_node(graph, CDNN_OP_SDPA_FWD, name, in, 3, &o, 1, &a);
}

/* A node of one input, one output and an axis. */
static cdnn_status_t add_axis_node(cdnn_graph_t *g, cdnn_op_t op, const char *name,
                                 int32_t axis, int64_t x, int64_t y)
{
    cdnn_node_attr_t a = {.axis = axis};
    return add_node(g, op, name, &x, 1, &y, 1, &a);
}

cdnn_status_t cdnn_graph_softmax(cdnn_graph_t *graph, const char *name,
                                 int32_t axis, int64_t x, int64_t y)
{
    return add_axis_node(graph, CDNN_OP_SOFTMAX, name, axis, x, y);
}

cdnn_status_t cdnn_graph_log_softmax(cdnn_graph_t *graph, const char *name,
                                     int32_t axis, int64_t x, int64_t y)
{
    return add_axis_node(graph, CDNN_OP_LOG_SOFTMAX, name, axis, x, y);
}

cdnn_status_t cdnn_graph_reshape(cdnn_graph_t *graph, const char *name, int64_t x,
                                 int64_t y)
{
    const cdnn_node_attr_t none = {0};
    return add_node(graph, CDNN_OP_RESHAPE, name, &x, 1, &y, 1, &none);
}

cdnn_status_t cdnn_graph_transpose(cdnn_graph_t *graph, const char *name,
                                   const cdnn_transpose_attr_t *attr, int64_t x,
                                   int64_t y)
{
    CDNN_CHECK_ARG(attr);
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a); /* unused perm entries are 0, for the key */
    a.transpose = *attr;
    for (int32_t i = attr->rank > 0 ? attr->rank : 0; i < CDNN_MAX_RANK; i++)
        a.transpose.perm[i] = 0;
    return add_node(graph, CDNN_OP_TRANSPOSE, name, &x, 1, &y, 1, &a);
}

cdnn_status_t cdnn_graph_concat(cdnn_graph_t *graph, const char *name, int32_t axis,
                                int32_t n, const int64_t *xs, int64_t y)
{
    CDNN_CHECK_ARG(xs);
    if (n < 2 || n > CDNN_NODE_MAX_INPUTS)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "node '%s' (concat): %d inputs; a concat joins 2 to %d "
                         "(chain concats for more)",
                         name ? name : "(unnamed)", (int)n, CDNN_NODE_MAX_INPUTS);
    cdnn_node_attr_t a = {.axis = axis};
    return add_node(graph, CDNN_OP_CONCAT, name, xs, n, &y, 1, &a);
}

cdnn_status_t cdnn_graph_slice(cdnn_graph_t *graph, const char *name,
                               const cdnn_slice_attr_t *attr, int64_t x, int64_t y)
{
    CDNN_CHECK_ARG(attr);
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a); /* unused entries are 0, for the key */
    a.slice.rank = attr->rank;
    for (int32_t i = 0; i < attr->rank && i < CDNN_MAX_RANK; i++) {
        a.slice.start[i] = attr->start[i];
        a.slice.step[i] = attr->step[i];
    }
    return add_node(graph, CDNN_OP_SLICE, name, &x, 1, &y, 1, &a);
}

cdnn_status_t cdnn_graph_argmax(cdnn_graph_t *graph, const char *name, int32_t axis,
                                int64_t x, int64_t y)
{
    return add_axis_node(graph, CDNN_OP_ARGMAX, name, axis, x, y);
}

cdnn_status_t cdnn_graph_argmin(cdnn_graph_t *graph, const char *name, int32_t axis,
                                int64_t x, int64_t y)
{
    return add_axis_node(graph, CDNN_OP_ARGMIN, name, axis, x, y);
}

cdnn_status_t cdnn_graph_pad(cdnn_graph_t *graph, const char *name,
                             const cdnn_pad_attr_t *attr, int64_t x, int64_t y)
{
    CDNN_CHECK_ARG(attr);
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a); /* unused entries are 0, for the key */
    a.pad.rank = attr->rank;
    a.pad.value = attr->value;
    for (int32_t i = 0; i < attr->rank && i < CDNN_MAX_RANK; i++)
        a.pad.pre[i] = attr->pre[i];
    return add_node(graph, CDNN_OP_PAD, name, &x, 1, &y, 1, &a);
}

cdnn_status_t cdnn_graph_sdpa_bwd(cdnn_graph_t *graph, const char *name,
                                  const cdnn_sdpa_attr_t *attr, int64_t q, int64_t k,
                                  int64_t v, int64_t o, int64_t d_o, int64_t dq,
                                  int64_t dk, int64_t dv)
{
    CDNN_CHECK_ARG(attr);
    const int64_t in[5] = {q, k, v, o, d_o}, out[3] = {dq, dk, dv};
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a); /* padding is 0, for the key */
    a.sdpa = *attr;
    return add_node(graph, CDNN_OP_SDPA_BWD, name, in, 5, out, 3, &a);
}

cdnn_status_t cdnn_graph_gather(cdnn_graph_t *graph, const char *name, int32_t axis,
                                int64_t x, int64_t indices, int64_t y)
{
    const int64_t in[2] = {x, indices};
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a); /* unused bytes are 0, for the key */
    a.axis = axis;
    return add_node(graph, CDNN_OP_GATHER, name, in, 2, &y, 1, &a);
}

cdnn_status_t cdnn_graph_gather_elements(cdnn_graph_t *graph, const char *name,
                                         int32_t axis, int64_t x, int64_t indices,
                                         int64_t y)
{
    const int64_t in[2] = {x, indices};
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a);
    a.axis = axis;
    return add_node(graph, CDNN_OP_GATHER_ELEMENTS, name, in, 2, &y, 1, &a);
}

cdnn_status_t cdnn_graph_topk(cdnn_graph_t *graph, const char *name,
                              const cdnn_topk_attr_t *attr, int64_t x, int64_t values,
                              int64_t indices)
{
    CDNN_CHECK_ARG(attr);
    const int64_t out[2] = {values, indices};
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a);
    a.topk.axis = attr->axis;
    a.topk.k = attr->k;
    a.topk.largest = attr->largest != 0;
    return add_node(graph, CDNN_OP_TOPK, name, &x, 1, out, 2, &a);
}

void cdnn_pooling_attr_init(cdnn_pooling_attr_t *a, cdnn_pooling_mode_t mode,
                            int32_t spatial_dims)
{
    if (!a)
        return;
    memset(a, 0, sizeof *a);
    a->mode = mode;
    a->spatial_dims = spatial_dims;
    for (int i = 0; i < 3; i++)
        a->window[i] = a->stride[i] = a->dilation[i] = 1;
}

/* The used dims only, into a zeroed union (unused bytes 0, for the key). */
static void copy_pooling_attr(cdnn_node_attr_t *a, const cdnn_pooling_attr_t *p)
{
    memset(a, 0, sizeof *a);
    a->pooling.mode = p->mode;
    a->pooling.spatial_dims = p->spatial_dims;
    a->pooling.ceil_mode = p->ceil_mode != 0;
    a->pooling.count_include_pad = p->count_include_pad != 0;
    for (int32_t i = 0; i < p->spatial_dims && i < 3; i++) {
        a->pooling.window[i] = p->window[i];
        a->pooling.stride[i] = p->stride[i];
        a->pooling.dilation[i] = p->dilation[i];
        a->pooling.pre_padding[i] = p->pre_padding[i];
        a->pooling.post_padding[i] = p->post_padding[i];
    }
}

cdnn_status_t cdnn_graph_pooling_fwd(cdnn_graph_t *graph, const char *name,
                                     const cdnn_pooling_attr_t *attr, int64_t x,
                                     int64_t y, int64_t indices)
{
    CDNN_CHECK_ARG(attr);
    const int64_t out[2] = {y, indices};
    cdnn_node_attr_t a;
    copy_pooling_attr(&a, attr);
    return add_node(graph, CDNN_OP_POOLING_FWD, name, &x, 1, out, 2, &a);
}

cdnn_status_t cdnn_graph_pooling_bwd(cdnn_graph_t *graph, const char *name,
                                     const cdnn_pooling_attr_t *attr, int64_t dy,
                                     int64_t x, int64_t indices, int64_t dx)
{
    CDNN_CHECK_ARG(attr);
    const int64_t in[3] = {dy, x, indices};
    cdnn_node_attr_t a;
    copy_pooling_attr(&a, attr);
    return add_node(graph, CDNN_OP_POOLING_BWD, name, in, 3, &dx, 1, &a);
}

cdnn_status_t cdnn_graph_resize(cdnn_graph_t *graph, const char *name,
                                const cdnn_resize_attr_t *attr, int64_t x, int64_t y)
{
    CDNN_CHECK_ARG(attr);
    cdnn_node_attr_t a;
    memset(&a, 0, sizeof a);
    a.resize.mode = attr->mode;
    a.resize.coordinate = attr->coordinate;
    a.resize.nearest = attr->nearest;
    return add_node(graph, CDNN_OP_RESIZE, name, &x, 1, &y, 1, &a);
}

cdnn_status_t graph_add_node(cdnn_graph_t *g, cdnn_op_t op, const char *name,
                             const int64_t inputs[CDNN_NODE_MAX_INPUTS],
                             const int64_t outputs[CDNN_NODE_MAX_OUTPUTS],
                             const cdnn_node_attr_t *attr)
{
    if ((unsigned)op >= CDNN_OP_COUNT)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "op %d is not a cdnn_op_t", (int)op);
    return add_node(g, op, name, inputs, CDNN_NODE_MAX_INPUTS, outputs,
                    CDNN_NODE_MAX_OUTPUTS, attr);
}
