/*
 * validate.c -- checking a graph and deriving the view providers see.
 *
 * Validation runs in stages, each of which can trust the ones before it:
 * ports resolve to declared tensors; each tensor has at most one writer;
 * every tensor is used and virtual ones are both written and read; the
 * nodes have a topological order (no cycle) and form one connected graph;
 * then, node by node in that order, types, shapes and the attributes the
 * builder left (values such as epsilons and clips) are checked and omitted
 * output shapes inferred.  The builder refused out-of-range modes and
 * convolution attributes when each node was added.  Every message names the
 * node or tensor at fault.
 *
 * What differs from op to op (ports, type rules, which shape rule) is the
 * op table's (ops.c); the shape rules themselves are here, one per row.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "graph/graph.h"
#include "graph/ops.h"

/* Scratch state of one validation. */
typedef struct validation {
    cdnn_graph_t *g;
    cdnn_tensor_view_t *tv; /* by declaration index */
    int32_t *producer;      /* node index writing each tensor, or -1 */
    int32_t *readers;       /* number of node ports reading each tensor */
    int32_t *order;         /* node indices, topological */
    int32_t (*in)[CDNN_NODE_MAX_INPUTS];   /* resolved ports per node */
    int32_t (*out)[CDNN_NODE_MAX_OUTPUTS];
} validation_t;

/* ---- ports ------------------------------------------------------------ */

static cdnn_status_t node_fail(const graph_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static cdnn_status_t node_fail(const graph_node_t *n, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cdnn_fail(CDNN_STATUS_INVALID_GRAPH, "node '%s' (%s): %s", n->name,
                     cdnn_op_name(n->op), what);
}

static cdnn_status_t resolve_port(validation_t *v, const graph_node_t *n,
                                  int64_t uid, int required, const char *port,
                                  int32_t *index)
{
    *index = -1;
    if (uid == CDNN_UID_NONE) {
        if (required)
            return node_fail(n, "'%s' is required but no tensor was given", port);
        return CDNN_STATUS_SUCCESS;
    }
    *index = graph_find_tensor(v->g, uid);
    if (*index < 0)
        return node_fail(n, "'%s' refers to uid %lld, but no tensor has that uid "
                            "(missing tensor)",
                         port, (long long)uid);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t resolve_node_ports(validation_t *v, int32_t ni)
{
    const graph_node_t *n = &v->g->nodes[ni];
    const op_desc_t *op = op_desc(n->op);
    if (!op)
        return node_fail(n, "unknown op %d", (int)n->op);
    int32_t in_required = op->inputs.required, in_count = op->inputs.count;
    /* The builder refused unknown modes, so an arity is within the slots. */
    if (op->input_arity)
        in_required = in_count = op->input_arity(&n->attr);
    for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++) {
        if (p >= in_count && n->inputs[p] != CDNN_UID_NONE)
            return node_fail(n, "input %d (uid %lld) is one more than the op takes",
                             p, (long long)n->inputs[p]);
        cdnn_status_t st = resolve_port(v, n, n->inputs[p], p < in_required,
                                        op_input_name(n->op, p), &v->in[ni][p]);
        if (st != CDNN_STATUS_SUCCESS)
            return st;
    }
    for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++) {
        cdnn_status_t st = resolve_port(v, n, n->outputs[p], p < op->outputs.required,
                                        op_output_name(n->op, p), &v->out[ni][p]);
        if (st != CDNN_STATUS_SUCCESS)
            return st;
    }
    return CDNN_STATUS_SUCCESS;
}

/* ---- structure: writers, use, order, connectivity ---------------------- */

static cdnn_status_t count_uses(validation_t *v)
{
    cdnn_graph_t *g = v->g;
    for (int32_t ni = 0; ni < g->node_count; ni++) {
        for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
            if (v->in[ni][p] >= 0)
                v->readers[v->in[ni][p]]++;
        for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++) {
            int32_t ti = v->out[ni][p];
            if (ti < 0)
                continue;
            if (v->producer[ti] >= 0)
                return cdnn_fail(CDNN_STATUS_INVALID_GRAPH,
                                 "tensor '%s' (uid %lld) is written by both node "
                                 "'%s' and node '%s'; a tensor has one writer",
                                 g->tensors[ti].name, (long long)g->tensors[ti].uid,
                                 g->nodes[v->producer[ti]].name, g->nodes[ni].name);
            v->producer[ti] = ni;
        }
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_tensor_use(const validation_t *v, int32_t ti)
{
    const graph_tensor_t *t = &v->g->tensors[ti];
    const char *why = NULL;
    if (v->producer[ti] < 0 && v->readers[ti] == 0)
        why = "is used by no node (a disconnected tensor)";
    else if (t->is_virtual && v->producer[ti] < 0)
        why = "is virtual but no node writes it; graph inputs must not be virtual";
    else if (t->is_virtual && v->readers[ti] == 0)
        why = "is virtual but no node reads it; graph outputs must not be virtual";
    else if (t->is_scalar && v->producer[ti] >= 0)
        why = "is a pass-by-value scalar but a node writes it";
    else if (t->rank == 0 && v->producer[ti] < 0)
        why = "has no shape; only outputs of a node may omit their shape";
    if (!why)
        return CDNN_STATUS_SUCCESS;
    return cdnn_fail(CDNN_STATUS_INVALID_GRAPH, "tensor '%s' (uid %lld) %s",
                     t->name, (long long)t->uid, why);
}

/* The nodes ready to place, smallest declaration index first: a binary
 * min-heap, so that ordering n nodes is O(n log n). */
typedef struct ready_heap {
    int32_t *items;
    int32_t count;
} ready_heap_t;

static void heap_push(ready_heap_t *h, int32_t ni)
{
    int32_t i = h->count++;
    while (i > 0 && h->items[(i - 1) / 2] > ni) {
        h->items[i] = h->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->items[i] = ni;
}

static int32_t heap_pop(ready_heap_t *h)
{
    int32_t top = h->items[0], last = h->items[--h->count], i = 0;
    for (;;) {
        int32_t child = 2 * i + 1;
        if (child >= h->count)
            break;
        if (child + 1 < h->count && h->items[child + 1] < h->items[child])
            child++;
        if (h->items[child] >= last)
            break;
        h->items[i] = h->items[child];
        i = child;
    }
    if (h->count)
        h->items[i] = last;
    return top;
}

/* For each tensor, the nodes reading it, one entry per reading port:
 * node_of[first[ti] .. first[ti + 1]). */
typedef struct reader_lists {
    int32_t *first;
    int32_t *node_of;
} reader_lists_t;

static int make_reader_lists(const validation_t *v, reader_lists_t *r)
{
    const cdnn_graph_t *g = v->g;
    r->first = calloc((size_t)g->tensor_count + 1, sizeof *r->first);
    int32_t total = 0;
    for (int32_t ti = 0; r->first && ti < g->tensor_count; ti++) {
        r->first[ti] = total;
        total += v->readers[ti];
    }
    r->node_of = malloc(((size_t)total + 1) * sizeof *r->node_of);
    int32_t *fill = calloc((size_t)g->tensor_count + 1, sizeof *fill);
    if (!r->first || !r->node_of || !fill) {
        free(fill);
        return -1;
    }
    r->first[g->tensor_count] = total;
    for (int32_t ni = 0; ni < g->node_count; ni++)
        for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++) {
            int32_t ti = v->in[ni][p];
            if (ti >= 0)
                r->node_of[r->first[ti] + fill[ti]++] = ni;
        }
    free(fill);
    return 0;
}

static cdnn_status_t cycle_failure(const cdnn_graph_t *g, const int32_t *pending)
{
    int32_t ni = 0;
    while (pending[ni] == 0)
        ni++;
    return node_fail(&g->nodes[ni], "is part of a cycle: it reads, directly or not, "
                     "a tensor that it writes");
}

/* Kahn's algorithm; ties go to the node declared first, so that the order
 * (and the content key built on it) does not depend on uid values. */
static cdnn_status_t topological_order(validation_t *v)
{
    cdnn_graph_t *g = v->g;
    int32_t *pending = calloc((size_t)g->node_count + 1, sizeof *pending);
    ready_heap_t ready = {malloc(((size_t)g->node_count + 1) * sizeof(int32_t)), 0};
    reader_lists_t readers = {NULL, NULL};
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (!pending || !ready.items || make_reader_lists(v, &readers) != 0) {
        st = cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory ordering nodes");
        goto out;
    }
    for (int32_t ni = 0; ni < g->node_count; ni++)
        for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
            if (v->in[ni][p] >= 0 && v->producer[v->in[ni][p]] >= 0)
                pending[ni]++;
    for (int32_t ni = 0; ni < g->node_count; ni++)
        if (pending[ni] == 0)
            heap_push(&ready, ni);
    int32_t placed = 0;
    while (ready.count) {
        int32_t next = heap_pop(&ready);
        v->order[placed++] = next;
        for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++) {
            int32_t ti = v->out[next][p];
            for (int32_t r = ti >= 0 ? readers.first[ti] : 0;
                 ti >= 0 && r < readers.first[ti + 1]; r++)
                if (--pending[readers.node_of[r]] == 0)
                    heap_push(&ready, readers.node_of[r]);
        }
    }
    if (placed < g->node_count)
        st = cycle_failure(g, pending);
out:
    free(pending);
    free(ready.items);
    free(readers.first);
    free(readers.node_of);
    return st;
}

static int32_t find_root(int32_t *parent, int32_t i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

/* Nodes are connected when they share a tensor; one component is required. */
static cdnn_status_t check_connected(validation_t *v)
{
    cdnn_graph_t *g = v->g;
    int32_t *parent = malloc((size_t)g->node_count * sizeof *parent);
    int32_t *owner = malloc((size_t)g->tensor_count * sizeof *owner);
    if (!parent || !owner) {
        free(parent);
        free(owner);
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    for (int32_t i = 0; i < g->node_count; i++)
        parent[i] = i;
    for (int32_t i = 0; i < g->tensor_count; i++)
        owner[i] = -1;
    for (int32_t ni = 0; ni < g->node_count; ni++) {
        int32_t ports[CDNN_NODE_MAX_INPUTS + CDNN_NODE_MAX_OUTPUTS];
        memcpy(ports, v->in[ni], sizeof v->in[ni]);
        memcpy(ports + CDNN_NODE_MAX_INPUTS, v->out[ni], sizeof v->out[ni]);
        for (int p = 0; p < CDNN_NODE_MAX_INPUTS + CDNN_NODE_MAX_OUTPUTS; p++) {
            int32_t ti = ports[p];
            if (ti < 0)
                continue;
            if (owner[ti] < 0)
                owner[ti] = ni;
            else
                parent[find_root(parent, ni)] = find_root(parent, owner[ti]);
        }
    }
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    int32_t first = find_root(parent, 0);
    for (int32_t ni = 1; ni < g->node_count; ni++)
        if (find_root(parent, ni) != first) {
            st = node_fail(&g->nodes[ni],
                           "is disconnected: it shares no tensor, directly or "
                           "through other nodes, with node '%s'",
                           g->nodes[0].name);
            break;
        }
    free(parent);
    free(owner);
    return st;
}

/* ---- tensors ---------------------------------------------------------- */

static void packed_strides(int32_t rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
}

static void fill_tensor_view(validation_t *v, int32_t ti)
{
    const graph_tensor_t *t = &v->g->tensors[ti];
    cdnn_tensor_view_t *tv = &v->tv[ti];
    memset(tv, 0, sizeof *tv);
    tv->uid = t->uid;
    tv->name = t->name;
    tv->type = t->type != CDNN_DATA_TYPE_UNSET ? t->type
               : t->is_virtual               ? v->g->intermediate_type
                                             : v->g->io_type;
    tv->rank = t->rank;
    memcpy(tv->dims, t->dims, sizeof tv->dims);
    memcpy(tv->strides, t->strides, sizeof tv->strides);
    tv->alignment = t->alignment;
    tv->is_virtual = t->is_virtual;
    tv->is_scalar = t->is_scalar;
    tv->scalar_value = t->scalar_value;
    if (t->is_virtual && t->rank) /* intermediates are laid out by the engine */
        packed_strides(t->rank, t->dims, tv->strides);
}

static void format_dims(char *buf, size_t cap, int32_t rank, const int64_t *dims)
{
    size_t used = (size_t)snprintf(buf, cap, "[");
    for (int32_t d = 0; d < rank && used < cap; d++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%lld", d ? ", " : "",
                                 (long long)dims[d]);
    if (used < cap)
        snprintf(buf + used, cap - used, "]");
}

/* Everything below is per node, in topological order. */
typedef struct node_check {
    validation_t *v;
    const graph_node_t *n;
    const int32_t *in, *out;
} node_check_t;

static cdnn_tensor_view_t *in_view(const node_check_t *c, int port)
{
    return c->in[port] >= 0 ? &c->v->tv[c->in[port]] : NULL;
}

static cdnn_tensor_view_t *out_view(const node_check_t *c, int port)
{
    return c->out[port] >= 0 ? &c->v->tv[c->out[port]] : NULL;
}

static cdnn_status_t port_fail(const node_check_t *c, int is_input, int port,
                               const char *what)
{
    const cdnn_tensor_view_t *t = is_input ? in_view(c, port) : out_view(c, port);
    char dims[160];
    format_dims(dims, sizeof dims, t->rank, t->dims);
    return node_fail(c->n, "%s '%s' (tensor '%s', uid %lld, %s %s) %s",
                     is_input ? "input" : "output",
                     is_input ? op_input_name(c->n->op, port)
                              : op_output_name(c->n->op, port),
                     t->name, (long long)t->uid, cdnn_data_type_name(t->type),
                     dims, what);
}

/* Infer an omitted output shape, or check a declared one (shape mismatch). */
static cdnn_status_t expect_output(const node_check_t *c, int port, int32_t rank,
                                   const int64_t *dims)
{
    cdnn_tensor_view_t *t = out_view(c, port);
    if (!t)
        return CDNN_STATUS_SUCCESS;
    int64_t elements = 1;
    for (int32_t d = 0; d < rank; d++) {
        /* A count within 2^52 times a dim within 2^40 can still overflow
         * int64; an overflow is past the limit too. */
        if (dims[d] > CDNN_MAX_DIM ||
            __builtin_mul_overflow(elements, dims[d], &elements) ||
            elements > CDNN_MAX_ELEMENTS)
            return port_fail(c, 0, port, "would have more than 2^52 elements or a dim "
                                         "over 2^40 (too large)");
    }
    if (t->rank == 0) {
        t->rank = rank;
        memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
        packed_strides(rank, dims, t->strides);
        return CDNN_STATUS_SUCCESS;
    }
    int same = t->rank == rank;
    for (int32_t d = 0; same && d < rank; d++)
        same = t->dims[d] == dims[d];
    if (same)
        return CDNN_STATUS_SUCCESS;
    char want[160], msg[256];
    format_dims(want, sizeof want, rank, dims);
    snprintf(msg, sizeof msg, "does not have the shape the op makes, %s (shape mismatch)",
             want);
    return port_fail(c, 0, port, msg);
}

static cdnn_status_t expect_rank(const node_check_t *c, int port, int32_t rank)
{
    const cdnn_tensor_view_t *t = in_view(c, port);
    if (!t || t->rank == rank)
        return CDNN_STATUS_SUCCESS;
    char msg[96];
    snprintf(msg, sizeof msg, "must have rank %d (shape mismatch)", rank);
    return port_fail(c, 1, port, msg);
}

static cdnn_status_t expect_float(const node_check_t *c)
{
    for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++) {
        const cdnn_tensor_view_t *t = in_view(c, p);
        if (t && !(t->type == CDNN_DATA_TYPE_F32 || t->type == CDNN_DATA_TYPE_F16 ||
                   t->type == CDNN_DATA_TYPE_BF16 || t->type == CDNN_DATA_TYPE_F64))
            return port_fail(c, 1, p, "must have a floating-point type (type mismatch)");
    }
    for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++) {
        const cdnn_tensor_view_t *t = out_view(c, p);
        if (t && !(t->type == CDNN_DATA_TYPE_F32 || t->type == CDNN_DATA_TYPE_F16 ||
                   t->type == CDNN_DATA_TYPE_BF16 || t->type == CDNN_DATA_TYPE_F64))
            return port_fail(c, 0, p, "must have a floating-point type (type mismatch)");
    }
    return CDNN_STATUS_SUCCESS;
}

/* Conv, matmul and attention read their operands as one type. */
static cdnn_status_t expect_same_input_types(const node_check_t *c, int count)
{
    for (int p = 1; p < count; p++)
        if (in_view(c, p)->type != in_view(c, 0)->type) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "has a type other than input '%s' (%s); the inputs must "
                     "have one type (type mismatch)",
                     op_input_name(c->n->op, 0),
                     cdnn_data_type_name(in_view(c, 0)->type));
            return port_fail(c, 1, p, msg);
        }
    return CDNN_STATUS_SUCCESS;
}

/* ---- convolution ------------------------------------------------------ */

/* The builder kept padding, stride, dilation and groups within
 * [0 or 1, 2^20], so these sizes cannot overflow or divide by zero. */
static int64_t conv_out_size(const cdnn_conv_attr_t *a, int i, int64_t in, int64_t f)
{
    int64_t span = in + a->pre_padding[i] + a->post_padding[i] - a->dilation[i] * (f - 1) - 1;
    return span < 0 ? 0 : span / a->stride[i] + 1;
}

static cdnn_status_t check_groups(const node_check_t *c, int64_t channels,
                                  int64_t filters, int64_t filter_channels)
{
    int64_t g = c->n->attr.conv.groups;
    if (channels % g || filters % g)
        return node_fail(c->n, "groups %lld must divide both the %lld input channels "
                               "and the %lld filters (bad attribute)",
                         (long long)g, (long long)channels, (long long)filters);
    if (filter_channels * g != channels)
        return node_fail(c->n, "the filter has %lld channels per group but the "
                               "data has %lld channels in %lld groups (shape mismatch)",
                         (long long)filter_channels, (long long)channels, (long long)g);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t shape_rule_conv_fwd(const node_check_t *c)
{
    const cdnn_conv_attr_t *a = &c->n->attr.conv;
    int32_t rank = a->spatial_dims + 2;
    cdnn_status_t st;
    if ((st = expect_rank(c, 0, rank)) || (st = expect_rank(c, 1, rank)))
        return st;
    const int64_t *x = in_view(c, 0)->dims, *w = in_view(c, 1)->dims;
    if ((st = check_groups(c, x[1], w[0], w[1])))
        return st;
    int64_t y[CDNN_MAX_RANK] = {x[0], w[0]};
    for (int i = 0; i < a->spatial_dims; i++) {
        y[2 + i] = conv_out_size(a, i, x[2 + i], w[2 + i]);
        if (y[2 + i] < 1)
            return node_fail(c->n, "spatial dim %d: the dilated filter (%lld) is larger "
                                   "than the padded input (%lld) (shape mismatch)",
                             i, (long long)(a->dilation[i] * (w[2 + i] - 1) + 1),
                             (long long)(x[2 + i] + a->pre_padding[i] + a->post_padding[i]));
    }
    return expect_output(c, 0, rank, y);
}

cdnn_status_t shape_rule_conv_bwd_data(const node_check_t *c)
{
    const cdnn_conv_attr_t *a = &c->n->attr.conv;
    int32_t rank = a->spatial_dims + 2;
    cdnn_status_t st;
    if ((st = expect_rank(c, 0, rank)) || (st = expect_rank(c, 1, rank)))
        return st;
    const int64_t *dy = in_view(c, 0)->dims, *w = in_view(c, 1)->dims;
    if (dy[1] != w[0])
        return port_fail(c, 1, 1, "has a filter count other than dy's channels (shape mismatch)");
    int64_t dx[CDNN_MAX_RANK] = {dy[0], w[1] * a->groups};
    const cdnn_tensor_view_t *declared = out_view(c, 0);
    for (int i = 0; i < a->spatial_dims; i++) {
        int64_t least = (dy[2 + i] - 1) * a->stride[i] - a->pre_padding[i] -
                        a->post_padding[i] + a->dilation[i] * (w[2 + i] - 1) + 1;
        /* A strided conv maps several input sizes to one output size; a
         * declared dx picks one of them. */
        int64_t given = declared->rank == rank ? declared->dims[2 + i] : least;
        dx[2 + i] = conv_out_size(a, i, given, w[2 + i]) == dy[2 + i] ? given : least;
        if (dx[2 + i] < 1)
            return node_fail(c->n, "spatial dim %d: no input size gives dy's %lld "
                                   "(shape mismatch)",
                             i, (long long)dy[2 + i]);
    }
    if ((st = check_groups(c, dx[1], w[0], w[1])))
        return st;
    return expect_output(c, 0, rank, dx);
}

cdnn_status_t shape_rule_conv_bwd_filter(const node_check_t *c)
{
    const cdnn_conv_attr_t *a = &c->n->attr.conv;
    int32_t rank = a->spatial_dims + 2;
    cdnn_status_t st;
    if ((st = expect_rank(c, 0, rank)) || (st = expect_rank(c, 1, rank)))
        return st;
    const int64_t *x = in_view(c, 0)->dims, *dy = in_view(c, 1)->dims;
    if (x[0] != dy[0])
        return port_fail(c, 1, 1, "has a batch other than x's (shape mismatch)");
    int64_t g = a->groups;
    if (x[1] % g)
        return node_fail(c->n, "groups %lld must divide the %lld input channels (bad attribute)",
                         (long long)g, (long long)x[1]);
    int64_t dw[CDNN_MAX_RANK] = {dy[1], x[1] / g};
    const cdnn_tensor_view_t *declared = out_view(c, 0);
    for (int i = 0; i < a->spatial_dims; i++) {
        int64_t span = x[2 + i] + a->pre_padding[i] + a->post_padding[i] -
                       (dy[2 + i] - 1) * a->stride[i] - 1;
        int64_t f = span < 0 ? 0 : span / a->dilation[i] + 1;
        if (declared->rank == rank)
            f = declared->dims[2 + i];
        if (f < 1 || conv_out_size(a, i, x[2 + i], f) != dy[2 + i])
            return node_fail(c->n, "spatial dim %d: no filter size maps x's %lld to "
                                   "dy's %lld (shape mismatch)",
                             i, (long long)x[2 + i], (long long)dy[2 + i]);
        dw[2 + i] = f;
    }
    if ((st = check_groups(c, x[1], dy[1], dw[1])))
        return st;
    return expect_output(c, 0, rank, dw);
}

/* ---- matmul, pointwise, reduction -------------------------------------- */

cdnn_status_t shape_rule_matmul(const node_check_t *c)
{
    const cdnn_tensor_view_t *a = in_view(c, 0), *b = in_view(c, 1);
    if (a->rank < 2)
        return port_fail(c, 1, 0, "must have rank >= 2 (shape mismatch)");
    cdnn_status_t st = expect_rank(c, 1, a->rank);
    if (st)
        return st;
    int32_t r = a->rank;
    if (a->dims[r - 1] != b->dims[r - 2])
        return port_fail(c, 1, 1, "has K (dim -2) other than a's K (dim -1) (shape mismatch)");
    int64_t out[CDNN_MAX_RANK];
    for (int32_t d = 0; d < r - 2; d++) {
        if (a->dims[d] != b->dims[d] && a->dims[d] != 1 && b->dims[d] != 1)
            return port_fail(c, 1, 1, "has a batch dim that neither equals a's nor is 1 "
                                      "(shape mismatch)");
        out[d] = a->dims[d] > b->dims[d] ? a->dims[d] : b->dims[d];
    }
    out[r - 2] = a->dims[r - 2];
    out[r - 1] = b->dims[r - 1];
    return expect_output(c, 0, r, out);
}

static cdnn_status_t check_pointwise_attr(const node_check_t *c)
{
    const cdnn_pointwise_attr_t *a = &c->n->attr.pointwise;
    if (!(a->relu_lower_clip <= a->relu_upper_clip) || isnan(a->relu_lower_clip_slope))
        return node_fail(c->n, "relu clips [%g, %g] slope %g are not a range (bad attribute)",
                         a->relu_lower_clip, a->relu_upper_clip, a->relu_lower_clip_slope);
    if (!isfinite(a->elu_alpha) || !isfinite(a->softplus_beta) ||
        !isfinite(a->swish_beta) || a->softplus_beta == 0)
        return node_fail(c->n, "elu_alpha %g, softplus_beta %g and swish_beta %g must be "
                               "finite, softplus_beta nonzero (bad attribute)",
                         a->elu_alpha, a->softplus_beta, a->swish_beta);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t shape_rule_pointwise(const node_check_t *c)
{
    cdnn_status_t st = check_pointwise_attr(c);
    if (st)
        return st;
    int32_t arity = cdnn_pointwise_arity(c->n->attr.pointwise.mode);
    const cdnn_tensor_view_t *y = out_view(c, 0);
    /* NumPy's broadcasting: inputs align to the right, so an input of lower
     * rank has implicit leading 1s; an omitted y takes the largest rank. */
    int32_t rank = y->rank;
    for (int p = 0; !y->rank && p < arity; p++)
        if (in_view(c, p)->rank > rank)
            rank = in_view(c, p)->rank;
    int64_t out[CDNN_MAX_RANK];
    for (int32_t d = 0; d < rank; d++)
        out[d] = y->rank ? y->dims[d] : 1;
    for (int p = 0; p < arity; p++) {
        const cdnn_tensor_view_t *t = in_view(c, p);
        char msg[200];
        if (t->rank > rank) {
            snprintf(msg, sizeof msg, "has rank %d, more than y's %d; an input has y's "
                     "rank or less (shape mismatch)", (int)t->rank, (int)rank);
            return port_fail(c, 1, p, msg);
        }
        int32_t lead = rank - t->rank; /* implicit leading 1s */
        if (lead)
            c->v->g->rank_broadcast = 1;
        for (int32_t d = 0; d < t->rank; d++) {
            int64_t *o = &out[lead + d];
            if (y->rank == 0 && *o == 1)
                *o = t->dims[d];
            if (t->dims[d] != *o && t->dims[d] != 1) {
                snprintf(msg, sizeof msg, "does not broadcast to the output: its dim %d "
                         "(%lld) is neither 1 nor y's %lld (y's dim %d; inputs align to "
                         "the right, as in NumPy) (shape mismatch)", (int)d,
                         (long long)t->dims[d], (long long)*o, (int)(lead + d));
                return port_fail(c, 1, p, msg);
            }
        }
    }
    return expect_output(c, 0, rank, out);
}

cdnn_status_t shape_rule_reduction(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0), *y = out_view(c, 0);
    int64_t out[CDNN_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
        out[d] = y->rank == x->rank ? y->dims[d] : 1;
        if (out[d] != x->dims[d] && out[d] != 1)
            return port_fail(c, 0, 0, "must have, in each dim, x's size or 1 "
                                      "(shape mismatch)");
    }
    return expect_output(c, 0, x->rank, out);
}

/* ---- normalisation and attention -------------------------------------- */

static cdnn_status_t check_epsilon(const node_check_t *c)
{
    double eps = c->n->attr.epsilon;
    if (!isfinite(eps) || eps < 0)
        return node_fail(c->n, "epsilon %g must be finite and >= 0 (bad attribute)", eps);
    return CDNN_STATUS_SUCCESS;
}

/* Each input port in [first, last] must have exactly dims `want`. */
static cdnn_status_t expect_dims(const node_check_t *c, int port, int32_t rank,
                                 const int64_t *want, const char *what)
{
    const cdnn_tensor_view_t *t = in_view(c, port);
    if (!t)
        return CDNN_STATUS_SUCCESS;
    int same = t->rank == rank;
    for (int32_t d = 0; same && d < rank; d++)
        same = t->dims[d] == want[d];
    if (same)
        return CDNN_STATUS_SUCCESS;
    char dims[160], msg[256];
    format_dims(dims, sizeof dims, rank, want);
    snprintf(msg, sizeof msg, "must have dims %s, %s (shape mismatch)", dims, what);
    return port_fail(c, 1, port, msg);
}

cdnn_status_t shape_rule_batchnorm(const node_check_t *c)
{
    cdnn_status_t st = check_epsilon(c);
    if (st)
        return st;
    const cdnn_tensor_view_t *x = in_view(c, 0);
    if (x->rank < 2)
        return port_fail(c, 1, 0, "must have rank >= 2, [N, C, ...] (shape mismatch)");
    int64_t param[CDNN_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        param[d] = d == 1 ? x->dims[1] : 1;
    for (int p = 1; p < 5; p++)
        if ((st = expect_dims(c, p, x->rank, param, "one value per channel")))
            return st;
    return expect_output(c, 0, x->rank, x->dims);
}

/* Layer-norm and RMS-norm: scale picks the normalised dims. */
cdnn_status_t shape_rule_norm(const node_check_t *c)
{
    cdnn_status_t st = check_epsilon(c);
    if (st)
        return st;
    const cdnn_tensor_view_t *x = in_view(c, 0), *scale = in_view(c, 1);
    if ((st = expect_rank(c, 1, x->rank)))
        return st;
    int64_t stats[CDNN_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
        if (scale->dims[d] != x->dims[d] && scale->dims[d] != 1)
            return port_fail(c, 1, 1, "must have, in each dim, x's size (normalised) "
                                      "or 1 (shape mismatch)");
        stats[d] = scale->dims[d] == 1 ? x->dims[d] : 1;
    }
    if ((st = expect_dims(c, 2, x->rank, scale->dims, "the dims of scale")))
        return st;
    if ((st = expect_output(c, 0, x->rank, x->dims)))
        return st;
    for (int p = 1; p < CDNN_NODE_MAX_OUTPUTS; p++)
        if ((st = expect_output(c, p, x->rank, stats)))
            return st;
    return CDNN_STATUS_SUCCESS;
}

/* ---- training passes of the norms ---- */

/* Batch-norm's x at port `port`: rank >= 2; per_channel gets [1, C, 1...]. */
static cdnn_status_t batchnorm_x(const node_check_t *c, int port, int64_t *per_channel)
{
    const cdnn_tensor_view_t *x = in_view(c, port);
    if (x->rank < 2)
        return port_fail(c, 1, port, "must have rank >= 2, [N, C, ...] (shape mismatch)");
    for (int32_t d = 0; d < x->rank; d++)
        per_channel[d] = d == 1 ? x->dims[1] : 1;
    return CDNN_STATUS_SUCCESS;
}

/* Outputs from `first` on, each [1, C, 1...] (absent ones skipped). */
static cdnn_status_t per_channel_outputs(const node_check_t *c, int first, int32_t rank,
                                         const int64_t *per_channel)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int p = first; p < CDNN_NODE_MAX_OUTPUTS && !st; p++)
        st = expect_output(c, p, rank, per_channel);
    return st;
}

cdnn_status_t shape_rule_batchnorm_train(const node_check_t *c)
{
    int64_t param[CDNN_MAX_RANK];
    cdnn_status_t st = check_epsilon(c);
    if (st || (st = batchnorm_x(c, 0, param)))
        return st;
    const cdnn_tensor_view_t *x = in_view(c, 0);
    for (int p = 1; p < 3; p++)
        if ((st = expect_dims(c, p, x->rank, param, "one value per channel")))
            return st;
    if ((st = expect_output(c, 0, x->rank, x->dims)))
        return st;
    return per_channel_outputs(c, 1, x->rank, param);
}

cdnn_status_t shape_rule_batchnorm_running(const node_check_t *c)
{
    double m = c->n->attr.momentum;
    if (!(m >= 0 && m <= 1))
        return node_fail(c->n, "momentum %g is not a weight from 0 to 1 (bad attribute)", m);
    int64_t param[CDNN_MAX_RANK];
    cdnn_status_t st = batchnorm_x(c, 0, param);
    if (st)
        return st;
    const cdnn_tensor_view_t *x = in_view(c, 0);
    int64_t per_channel = 1;
    for (int32_t d = 0; d < x->rank; d++)
        per_channel *= d == 1 ? 1 : x->dims[d];
    if (per_channel < 2)
        return port_fail(c, 1, 0, "has 1 value per channel; the unbiased variance of "
                                  "the running statistics needs at least 2 (N times "
                                  "the spatial dims) (shape mismatch)");
    for (int p = 1; p < 3; p++)
        if ((st = expect_dims(c, p, x->rank, param, "one value per channel")))
            return st;
    return per_channel_outputs(c, 0, x->rank, param);
}

cdnn_status_t shape_rule_batchnorm_bwd(const node_check_t *c)
{
    int64_t param[CDNN_MAX_RANK];
    cdnn_status_t st = batchnorm_x(c, 1, param);
    if (st)
        return st;
    const cdnn_tensor_view_t *x = in_view(c, 1);
    if ((st = expect_dims(c, 0, x->rank, x->dims, "the dims of x")))
        return st;
    for (int p = 2; p < 5; p++)
        if ((st = expect_dims(c, p, x->rank, param, "one value per channel")))
            return st;
    if ((st = expect_output(c, 0, x->rank, x->dims)))
        return st;
    return per_channel_outputs(c, 1, x->rank, param);
}

/* Layer-norm and RMS-norm backward: dy, x, scale, then the statistics
 * (mean and inv_variance, or inv_rms), which have x's dims reduced over the
 * normalised dims (where scale is not 1). */
cdnn_status_t shape_rule_norm_bwd(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 1), *scale = in_view(c, 2);
    cdnn_status_t st = expect_rank(c, 2, x->rank);
    if (st || (st = expect_dims(c, 0, x->rank, x->dims, "the dims of x")))
        return st;
    int64_t stats[CDNN_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
        if (scale->dims[d] != x->dims[d] && scale->dims[d] != 1)
            return port_fail(c, 1, 2, "must have, in each dim, x's size (normalised) "
                                      "or 1 (shape mismatch)");
        stats[d] = scale->dims[d] == 1 ? x->dims[d] : 1;
    }
    int ports = op_desc(c->n->op)->inputs.count;
    for (int p = 3; p < ports; p++)
        if ((st = expect_dims(c, p, x->rank, stats,
                              "x's dims with 1 on the normalised dims")))
            return st;
    if ((st = expect_output(c, 0, x->rank, x->dims)))
        return st;
    int64_t sdims[CDNN_MAX_RANK];
    memcpy(sdims, scale->dims, sizeof(int64_t) * (size_t)x->rank);
    return per_channel_outputs(c, 1, x->rank, sdims);
}

cdnn_status_t shape_rule_sdpa(const node_check_t *c)
{
    const cdnn_sdpa_attr_t *a = &c->n->attr.sdpa;
    if (!isfinite(a->scale) || a->scale < 0)
        return node_fail(c->n, "scale %g must be finite and >= 0 (bad attribute)", a->scale);
    cdnn_status_t st;
    for (int p = 0; p < 3; p++)
        if ((st = expect_rank(c, p, 4)))
            return st;
    const int64_t *q = in_view(c, 0)->dims, *k = in_view(c, 1)->dims,
                  *v = in_view(c, 2)->dims;
    int64_t kdims[4] = {q[0], q[1], k[2], q[3]};
    int64_t vdims[4] = {q[0], q[1], k[2], v[3]};
    if ((st = expect_dims(c, 1, 4, kdims, "q's batch, heads and head size")) ||
        (st = expect_dims(c, 2, 4, vdims, "q's batch and heads, k's sequence")))
        return st;
    int64_t o[4] = {q[0], q[1], q[2], v[3]};
    return expect_output(c, 0, 4, o);
}

/* The forward's shapes (q, k, v; o and do as the forward's o); the
 * gradients have the shapes of what they are gradients of. */
cdnn_status_t shape_rule_sdpa_bwd(const node_check_t *c)
{
    const cdnn_sdpa_attr_t *a = &c->n->attr.sdpa;
    if (!isfinite(a->scale) || a->scale < 0)
        return node_fail(c->n, "scale %g must be finite and >= 0 (bad attribute)", a->scale);
    cdnn_status_t st;
    for (int p = 0; p < 5; p++)
        if ((st = expect_rank(c, p, 4)))
            return st;
    const int64_t *q = in_view(c, 0)->dims, *k = in_view(c, 1)->dims,
                  *v = in_view(c, 2)->dims;
    int64_t kdims[4] = {q[0], q[1], k[2], q[3]};
    int64_t vdims[4] = {q[0], q[1], k[2], v[3]};
    int64_t odims[4] = {q[0], q[1], q[2], v[3]};
    if ((st = expect_dims(c, 1, 4, kdims, "q's batch, heads and head size")) ||
        (st = expect_dims(c, 2, 4, vdims, "q's batch and heads, k's sequence")) ||
        (st = expect_dims(c, 3, 4, odims, "the forward's output, [B, H, Sq, Dv]")) ||
        (st = expect_dims(c, 4, 4, odims, "o's, of which it is the gradient")))
        return st;
    for (int p = 0; p < 3; p++)
        if ((st = expect_output(c, p, 4, in_view(c, p)->dims)))
            return st;
    return CDNN_STATUS_SUCCESS;
}

/* ---- indexing: gather, gather-elements, top-k --------------------------- */

static int is_index_type(cdnn_data_type_t t)
{
    return t == CDNN_DATA_TYPE_I32 || t == CDNN_DATA_TYPE_I64;
}

/* The axis of x (input 0) counted from the front, or a failure naming x. */
static cdnn_status_t axis_of_x(const node_check_t *c, int32_t axis, int32_t *out)
{
    const cdnn_tensor_view_t *x = in_view(c, 0);
    if (axis < -x->rank || axis >= x->rank)
        return port_fail(c, 1, 0, axis < 0 ? "has fewer dims than the negative axis "
                                             "counts back (bad attribute)"
                                           : "has no dim at the axis (bad attribute)");
    *out = axis < 0 ? axis + x->rank : axis;
    return CDNN_STATUS_SUCCESS;
}

/* Gather and gather-elements: i32/i64 indices, y of x's type. */
static cdnn_status_t check_gather_types(const node_check_t *c)
{
    if (!is_index_type(in_view(c, 1)->type))
        return port_fail(c, 1, 1, "must have an index type, i32 or i64 (type mismatch)");
    if (out_view(c, 0)->type != in_view(c, 0)->type)
        return port_fail(c, 0, 0, "has a type other than x's; a gather moves elements "
                                  "and converts none (type mismatch)");
    return CDNN_STATUS_SUCCESS;
}

/* y: x's dims before the axis, indices' dims, x's dims after it. */
cdnn_status_t shape_rule_gather(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0), *idx = in_view(c, 1);
    int32_t axis;
    cdnn_status_t st = axis_of_x(c, c->n->attr.axis, &axis);
    if (st || (st = check_gather_types(c)))
        return st;
    int32_t rank = x->rank + idx->rank - 1;
    if (rank > CDNN_MAX_RANK) {
        char msg[160];
        snprintf(msg, sizeof msg, "has rank %d, which with x's %d would give y rank %d, "
                 "more than %d (shape mismatch)", (int)idx->rank, (int)x->rank,
                 (int)rank, CDNN_MAX_RANK);
        return port_fail(c, 1, 1, msg);
    }
    int64_t dims[CDNN_MAX_RANK];
    int32_t n = 0;
    for (int32_t d = 0; d < axis; d++)
        dims[n++] = x->dims[d];
    for (int32_t d = 0; d < idx->rank; d++)
        dims[n++] = idx->dims[d];
    for (int32_t d = axis + 1; d < x->rank; d++)
        dims[n++] = x->dims[d];
    return expect_output(c, 0, rank, dims);
}

/* y: indices' dims, which off the axis are no larger than x's. */
cdnn_status_t shape_rule_gather_elements(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0), *idx = in_view(c, 1);
    int32_t axis;
    cdnn_status_t st = axis_of_x(c, c->n->attr.axis, &axis);
    if (st || (st = check_gather_types(c)) || (st = expect_rank(c, 1, x->rank)))
        return st;
    for (int32_t d = 0; d < x->rank; d++)
        if (d != axis && idx->dims[d] > x->dims[d]) {
            char msg[160];
            snprintf(msg, sizeof msg, "is %lld in dim %d, more than x's %lld; off the "
                     "axis indices address x's own coordinates (shape mismatch)",
                     (long long)idx->dims[d], (int)d, (long long)x->dims[d]);
            return port_fail(c, 1, 1, msg);
        }
    return expect_output(c, 0, idx->rank, idx->dims);
}

/* values (x's type) and indices (i32/i64): x's dims with k at the axis. */
cdnn_status_t shape_rule_topk(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0);
    const cdnn_topk_attr_t *a = &c->n->attr.topk;
    int32_t axis;
    cdnn_status_t st = axis_of_x(c, a->axis, &axis);
    if (st)
        return st;
    if (a->k > x->dims[axis]) {
        char msg[160];
        snprintf(msg, sizeof msg, "has %lld elements at the axis, fewer than k = %lld "
                 "(bad attribute)", (long long)x->dims[axis], (long long)a->k);
        return port_fail(c, 1, 0, msg);
    }
    if (out_view(c, 0)->type != x->type)
        return port_fail(c, 0, 0, "has a type other than x's; top-k values are x's "
                                  "elements (type mismatch)");
    const cdnn_tensor_view_t *idx = out_view(c, 1);
    if (idx && !is_index_type(idx->type))
        return port_fail(c, 0, 1, "must have an index type, i32 or i64 (type mismatch)");
    if (idx && idx->type == CDNN_DATA_TYPE_I32 && x->dims[axis] > INT32_MAX)
        return port_fail(c, 0, 1, "is i32, which cannot hold every position along x's "
                                  "axis; use i64 (type mismatch)");
    int64_t dims[CDNN_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        dims[d] = d == axis ? a->k : x->dims[d];
    if ((st = expect_output(c, 0, x->rank, dims)))
        return st;
    return expect_output(c, 1, x->rank, dims);
}

/* ---- pooling and resize -------------------------------------------------- */

static int is_float_type(cdnn_data_type_t t)
{
    return t == CDNN_DATA_TYPE_F32 || t == CDNN_DATA_TYPE_F16 ||
           t == CDNN_DATA_TYPE_BF16 || t == CDNN_DATA_TYPE_F64;
}

/* PyTorch's pooling_output_shape_pad_lr: floor or ceil of the span over the
 * stride, plus one; in ceil mode one less where the last window would
 * start in the right padding.  The builder kept window, stride, dilation
 * and padding within 2^20, so nothing overflows.  Below 1: no window fits. */
static int64_t pool_out_size(const cdnn_pooling_attr_t *a, int i, int64_t in)
{
    int64_t extent = (int64_t)a->dilation[i] * (a->window[i] - 1) + 1;
    int64_t span = in + a->pre_padding[i] + a->post_padding[i] - extent;
    if (span < 0)
        return 0;
    int64_t s = a->stride[i];
    int64_t out = (a->ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (a->ceil_mode && (out - 1) * s >= in + a->pre_padding[i])
        out--;
    return out;
}

/* The first output position of spatial dim i whose window reads padding
 * only, or -1.  A window starting at 0 .. in - 1 reads its first tap;
 * one starting in the left padding may step over x with its dilation;
 * one starting at in or later reads nothing. */
static int64_t pool_empty_window(const cdnn_pooling_attr_t *a, int i, int64_t in,
                                 int64_t out)
{
    int64_t s = a->stride[i], d = a->dilation[i], pre = a->pre_padding[i];
    for (int64_t o = 0; o < out && o * s < pre; o++) {
        int64_t start = o * s - pre, first = (-start + d - 1) / d; /* first tap >= 0 */
        if (first >= a->window[i] || start + first * d >= in)
            return o;
    }
    int64_t past = (in + pre + s - 1) / s; /* the first to start at in or later */
    return past < out ? past : -1;
}

/* x's rank, the mode's type rules, and the forward's output dims. */
static cdnn_status_t pooling_out_dims(const node_check_t *c, int64_t *dims)
{
    const cdnn_pooling_attr_t *a = &c->n->attr.pooling;
    int x_port = c->n->op == CDNN_OP_POOLING_BWD ? 1 : 0;
    const cdnn_tensor_view_t *x = in_view(c, x_port);
    cdnn_status_t st = expect_rank(c, x_port, a->spatial_dims + 2);
    if (st)
        return st;
    if (a->mode == CDNN_POOLING_AVG) {
        if (!is_float_type(x->type))
            return port_fail(c, 1, x_port, "must have a floating-point type for "
                                           "average pooling (type mismatch)");
        for (int i = 0; i < a->spatial_dims; i++)
            if (a->dilation[i] != 1)
                return node_fail(c->n, "dilation[%d] is %d; average pooling takes "
                                       "dilation 1 (bad attribute)", i,
                                 (int)a->dilation[i]);
    }
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int i = 0; i < a->spatial_dims; i++) {
        int64_t n = x->dims[2 + i];
        dims[2 + i] = pool_out_size(a, i, n);
        if (dims[2 + i] < 1)
            return node_fail(c->n, "spatial dim %d: the dilated window (%lld) is larger "
                                   "than the padded input (%lld) (shape mismatch)",
                             i, (long long)((int64_t)a->dilation[i] * (a->window[i] - 1) + 1),
                             (long long)(n + a->pre_padding[i] + a->post_padding[i]));
        int64_t empty = pool_empty_window(a, i, n, dims[2 + i]);
        if (empty >= 0)
            return node_fail(c->n, "spatial dim %d: output %lld's window reads padding "
                                   "only (x %lld, pre_padding %lld, post_padding %lld, "
                                   "window %d, stride %d, dilation %d); every window "
                                   "must read x (bad attribute)",
                             i, (long long)empty, (long long)n,
                             (long long)a->pre_padding[i], (long long)a->post_padding[i],
                             (int)a->window[i], (int)a->stride[i], (int)a->dilation[i]);
    }
    return CDNN_STATUS_SUCCESS;
}

/* Indices (max pooling only): i32 or i64, able to hold every position of
 * x's spatial plane. */
static cdnn_status_t check_pool_indices(const node_check_t *c, int is_input, int port,
                                        const cdnn_tensor_view_t *x)
{
    const cdnn_tensor_view_t *idx = is_input ? in_view(c, port) : out_view(c, port);
    if (!idx)
        return CDNN_STATUS_SUCCESS;
    if (c->n->attr.pooling.mode != CDNN_POOLING_MAX)
        return port_fail(c, is_input, port, "is given to average pooling; only max "
                                            "pooling has indices (bad attribute)");
    if (!is_index_type(idx->type))
        return port_fail(c, is_input, port, "must have an index type, i32 or i64 "
                                            "(type mismatch)");
    int64_t plane = 1;
    for (int32_t d = 2; d < x->rank; d++)
        plane *= x->dims[d];
    if (idx->type == CDNN_DATA_TYPE_I32 && plane > INT32_MAX)
        return port_fail(c, is_input, port, "is i32, which cannot hold every position "
                                            "of x's spatial plane; use i64 (type "
                                            "mismatch)");
    return CDNN_STATUS_SUCCESS;
}

/* y (and indices): x's N and C, the pooled spatial sizes. */
cdnn_status_t shape_rule_pooling_fwd(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0);
    int64_t dims[CDNN_MAX_RANK];
    cdnn_status_t st = pooling_out_dims(c, dims);
    if (st || (st = check_pool_indices(c, 0, 1, x)))
        return st;
    if (out_view(c, 0)->type != x->type)
        return port_fail(c, 0, 0, "has a type other than x's; pooling converts none "
                                  "(type mismatch)");
    if ((st = expect_output(c, 0, x->rank, dims)))
        return st;
    return expect_output(c, 1, x->rank, dims);
}

/* dy has the forward's y shape, indices too; dx is x's shape and type. */
cdnn_status_t shape_rule_pooling_bwd(const node_check_t *c)
{
    const cdnn_tensor_view_t *dy = in_view(c, 0), *x = in_view(c, 1),
                             *idx = in_view(c, 2);
    int64_t dims[CDNN_MAX_RANK];
    if (!is_float_type(dy->type))
        return port_fail(c, 1, 0, "must have a floating-point type (type mismatch)");
    cdnn_status_t st = pooling_out_dims(c, dims);
    if (st || (st = check_pool_indices(c, 1, 2, x)))
        return st;
    const cdnn_tensor_view_t *with_y_shape[2] = {dy, idx};
    for (int p = 0; p < 2; p++) {
        const cdnn_tensor_view_t *t = with_y_shape[p];
        int same = t == NULL || t->rank == x->rank;
        for (int32_t d = 0; same && t && d < x->rank; d++)
            same = t->dims[d] == dims[d];
        if (!same) {
            char want[160], msg[256];
            format_dims(want, sizeof want, x->rank, dims);
            snprintf(msg, sizeof msg, "must have the forward's output shape, %s (shape "
                     "mismatch)", want);
            return port_fail(c, 1, p == 0 ? 0 : 2, msg);
        }
    }
    if (out_view(c, 0)->type != x->type)
        return port_fail(c, 0, 0, "has a type other than x's (type mismatch)");
    return expect_output(c, 0, x->rank, x->dims);
}

/* y declared, x's rank and type; linear needs a float type. */
cdnn_status_t shape_rule_resize(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0), *y = out_view(c, 0);
    if (y->rank == 0)
        return port_fail(c, 0, 0, "has no shape; a resize's y must be declared with "
                                  "the shape it makes, which gives the scales (shape "
                                  "mismatch)");
    if (y->rank != x->rank)
        return port_fail(c, 0, 0, "must have x's rank (shape mismatch)");
    if (y->type != x->type)
        return port_fail(c, 0, 0, "has a type other than x's; resize converts none "
                                  "(type mismatch)");
    if (c->n->attr.resize.mode == CDNN_RESIZE_LINEAR && !is_float_type(x->type))
        return port_fail(c, 1, 0, "must have a floating-point type for linear resize "
                                  "(type mismatch)");
    return CDNN_STATUS_SUCCESS;
}

/* ---- softmax ------------------------------------------------------------ */

cdnn_status_t shape_rule_softmax(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0);
    int32_t axis = c->n->attr.axis;
    if (axis < -x->rank || axis >= x->rank)
        return port_fail(c, 1, 0, axis < 0 ? "has fewer dims than the negative axis "
                                             "counts back (bad attribute)"
                                           : "has no dim at the axis (bad attribute)");
    return expect_output(c, 0, x->rank, x->dims);
}

/* Argmax and argmin: an index per row, in y's i32 or i64. */
cdnn_status_t shape_rule_arg_extreme(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0), *y = out_view(c, 0);
    int32_t axis = c->n->attr.axis;
    if (axis < -x->rank || axis >= x->rank)
        return port_fail(c, 1, 0, axis < 0 ? "has fewer dims than the negative axis "
                                             "counts back (bad attribute)"
                                           : "has no dim at the axis (bad attribute)");
    if (y->type != CDNN_DATA_TYPE_I32 && y->type != CDNN_DATA_TYPE_I64)
        return port_fail(c, 0, 0, "must have an index type, i32 or i64 (type mismatch)");
    if (axis < 0)
        axis += x->rank;
    /* As top-k's indices: a position past INT32_MAX would wrap in i32 (an
     * input broadcast along the axis spans a few bytes at any length). */
    if (y->type == CDNN_DATA_TYPE_I32 && x->dims[axis] > INT32_MAX)
        return port_fail(c, 0, 0, "is i32, which cannot hold every position along x's "
                                  "axis; use i64 (type mismatch)");
    int64_t dims[CDNN_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        dims[d] = d == axis ? 1 : x->dims[d];
    return expect_output(c, 0, x->rank, dims);
}

/* ---- data movement ------------------------------------------------------ */

/* y declared, each dim at least x's plus pre (the rest is padding after). */
cdnn_status_t shape_rule_pad(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0), *y = out_view(c, 0);
    const cdnn_pad_attr_t *a = &c->n->attr.pad;
    if (y->type != x->type)
        return port_fail(c, 0, 0, "has a type other than x's; pad moves elements and "
                                  "converts none (type mismatch)");
    if (a->rank != x->rank) {
        char msg[128];
        snprintf(msg, sizeof msg, "has rank %d but the pad has %d entries (bad "
                 "attribute)", (int)x->rank, (int)a->rank);
        return port_fail(c, 1, 0, msg);
    }
    if (y->rank == 0)
        return port_fail(c, 0, 0, "has no shape; a pad's y must be declared with the "
                                  "shape it makes (shape mismatch)");
    if (y->rank != x->rank)
        return port_fail(c, 0, 0, "must have x's rank (shape mismatch)");
    for (int32_t d = 0; d < x->rank; d++)
        if (y->dims[d] < x->dims[d] + a->pre[d]) {
            char msg[160];
            snprintf(msg, sizeof msg, "is %lld in dim %d, less than x's %lld plus pre "
                     "%lld (shape mismatch)", (long long)y->dims[d], (int)d,
                     (long long)x->dims[d], (long long)a->pre[d]);
            return port_fail(c, 0, 0, msg);
        }
    return CDNN_STATUS_SUCCESS;
}

/* Moving data converts nothing: y has x's type. */
static cdnn_status_t expect_type_of_x(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0), *y = out_view(c, 0);
    if (y->type == x->type)
        return CDNN_STATUS_SUCCESS;
    char msg[160];
    snprintf(msg, sizeof msg, "has a type other than x's (%s); %s moves elements "
             "and converts none (type mismatch)",
             cdnn_data_type_name(x->type), cdnn_op_name(c->n->op));
    return port_fail(c, 0, 0, msg);
}

cdnn_status_t shape_rule_reshape(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0), *y = out_view(c, 0);
    cdnn_status_t st = expect_type_of_x(c);
    if (st)
        return st;
    if (y->rank == 0)
        return port_fail(c, 0, 0, "has no shape; a reshape's y must be declared with "
                                  "the shape it makes (shape mismatch)");
    int64_t nx = 1, ny = 1; /* both within 2^52: declared shapes are */
    for (int32_t d = 0; d < x->rank; d++)
        nx *= x->dims[d];
    for (int32_t d = 0; d < y->rank; d++)
        ny *= y->dims[d];
    if (nx == ny)
        return CDNN_STATUS_SUCCESS;
    char msg[160];
    snprintf(msg, sizeof msg, "has %lld elements but x has %lld; a reshape keeps "
             "every element (shape mismatch)", (long long)ny, (long long)nx);
    return port_fail(c, 0, 0, msg);
}

cdnn_status_t shape_rule_transpose(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0);
    const cdnn_transpose_attr_t *a = &c->n->attr.transpose;
    cdnn_status_t st = expect_type_of_x(c);
    if (st)
        return st;
    if (a->rank != x->rank) {
        char msg[128];
        snprintf(msg, sizeof msg, "has rank %d but perm has %d entries (bad attribute)",
                 (int)x->rank, (int)a->rank);
        return port_fail(c, 1, 0, msg);
    }
    int64_t dims[CDNN_MAX_RANK];
    for (int32_t i = 0; i < a->rank; i++)
        dims[i] = x->dims[a->perm[i]];
    return expect_output(c, 0, x->rank, dims);
}

/* The inputs are consecutive (x0, x1, ... with none skipped), of x0's type
 * and rank, and of x0's dims but on the axis, where y sums them. */
cdnn_status_t shape_rule_concat(const node_check_t *c)
{
    const cdnn_tensor_view_t *x0 = in_view(c, 0);
    int32_t axis = c->n->attr.axis;
    if (axis < -x0->rank || axis >= x0->rank)
        return port_fail(c, 1, 0, axis < 0 ? "has fewer dims than the negative axis "
                                             "counts back (bad attribute)"
                                           : "has no dim at the axis (bad attribute)");
    if (axis < 0)
        axis += x0->rank;
    int64_t dims[CDNN_MAX_RANK];
    memcpy(dims, x0->dims, sizeof dims);
    int ended = 0;
    for (int p = 1; p < CDNN_NODE_MAX_INPUTS; p++) {
        const cdnn_tensor_view_t *x = in_view(c, p);
        if (!x) {
            ended = 1;
            continue;
        }
        if (ended)
            return port_fail(c, 1, p, "follows an input left out; a concat's inputs "
                                      "are consecutive from x0");
        cdnn_status_t st = expect_rank(c, p, x0->rank);
        if (st)
            return st;
        if (x->type != x0->type)
            return port_fail(c, 1, p, "has a type other than x0's; a concat converts "
                                      "nothing (type mismatch)");
        for (int32_t d = 0; d < x0->rank; d++)
            if (d != axis && x->dims[d] != x0->dims[d])
                return port_fail(c, 1, p, "differs from x0 in a dim other than the "
                                          "axis (shape mismatch)");
        dims[axis] += x->dims[axis];
    }
    cdnn_status_t st = expect_type_of_x(c);
    return st ? st : expect_output(c, 0, x0->rank, dims);
}

/* y declared; its window, start + (dim - 1) * step, inside x. */
cdnn_status_t shape_rule_slice(const node_check_t *c)
{
    const cdnn_tensor_view_t *x = in_view(c, 0), *y = out_view(c, 0);
    const cdnn_slice_attr_t *a = &c->n->attr.slice;
    cdnn_status_t st = expect_type_of_x(c);
    if (st)
        return st;
    if (a->rank != x->rank) {
        char msg[128];
        snprintf(msg, sizeof msg, "has rank %d but the slice has %d starts (bad "
                 "attribute)", (int)x->rank, (int)a->rank);
        return port_fail(c, 1, 0, msg);
    }
    if (y->rank == 0)
        return port_fail(c, 0, 0, "has no shape; a slice's y must be declared with "
                                  "the window it takes (shape mismatch)");
    if (y->rank != x->rank)
        return port_fail(c, 0, 0, "must have x's rank (shape mismatch)");
    for (int32_t d = 0; d < x->rank; d++) {
        /* start <= 2^40, dims <= 2^40, step < 2^31: no overflow */
        int64_t last = a->start[d] + (y->dims[d] - 1) * (int64_t)a->step[d];
        if (last >= x->dims[d]) {
            char msg[200];
            snprintf(msg, sizeof msg, "reaches index %lld of x's dim %d, which has "
                     "%lld (start %lld, step %d) (shape mismatch)", (long long)last,
                     (int)d, (long long)x->dims[d], (long long)a->start[d],
                     (int)a->step[d]);
            return port_fail(c, 0, 0, msg);
        }
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_node(validation_t *v, int32_t ni)
{
    node_check_t c = {v, &v->g->nodes[ni], v->in[ni], v->out[ni]};
    const op_desc_t *op = op_desc(c.n->op);
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (op->float_only)
        st = expect_float(&c);
    if (!st && op->same_typed_inputs)
        st = expect_same_input_types(&c, op->same_typed_inputs);
    if (!st)
        st = op->shape_rule(&c);
    return st;
}

/* A written tensor must not have two elements at one address. */
static cdnn_status_t check_written_layout(validation_t *v, int32_t ti)
{
    const cdnn_tensor_view_t *t = &v->tv[ti];
    if (v->producer[ti] < 0 || t->is_virtual)
        return CDNN_STATUS_SUCCESS;
    int32_t order[CDNN_MAX_RANK];
    int32_t n = 0;
    for (int32_t d = 0; d < t->rank; d++)
        if (t->dims[d] > 1)
            order[n++] = d;
    for (int32_t i = 1; i < n; i++) /* insertion sort by stride */
        for (int32_t j = i; j > 0 && t->strides[order[j]] < t->strides[order[j - 1]]; j--) {
            int32_t tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    int64_t span = 1;
    for (int32_t i = 0; i < n; i++) {
        if (t->strides[order[i]] < span)
            return cdnn_fail(CDNN_STATUS_INVALID_GRAPH,
                             "tensor '%s' (uid %lld) is written by node '%s' but its "
                             "strides make elements overlap (dim %d has stride %lld)",
                             t->name, (long long)t->uid, v->g->nodes[v->producer[ti]].name,
                             order[i], (long long)t->strides[order[i]]);
        span = t->strides[order[i]] * t->dims[order[i]];
    }
    return CDNN_STATUS_SUCCESS;
}

/* ---- the whole ---------------------------------------------------------- */

static cdnn_status_t check_structure(validation_t *v)
{
    cdnn_graph_t *g = v->g;
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int32_t ni = 0; !st && ni < g->node_count; ni++)
        st = resolve_node_ports(v, ni);
    if (!st)
        st = count_uses(v);
    for (int32_t ti = 0; !st && ti < g->tensor_count; ti++)
        st = check_tensor_use(v, ti);
    if (!st)
        st = topological_order(v);
    if (!st)
        st = check_connected(v);
    return st;
}

static cdnn_status_t check_nodes(validation_t *v)
{
    cdnn_graph_t *g = v->g;
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int32_t ti = 0; ti < g->tensor_count; ti++)
        fill_tensor_view(v, ti);
    for (int32_t i = 0; !st && i < g->node_count; i++)
        st = check_node(v, v->order[i]);
    for (int32_t ti = 0; !st && ti < g->tensor_count; ti++)
        st = check_written_layout(v, ti);
    return st;
}

/* ---- rank broadcasting as engines see it ------------------------------- */

/* A pointwise input of lower rank than its node's y is shown to providers
 * at y's rank, with leading dims of 1, so that no engine has to align ranks
 * itself (and the payload graph of a plan is one older providers read).  A
 * tensor has one view, so every use must agree on its rank: a tensor read
 * broadcast to rank R is shown at R, the pointwise node writing it then
 * writes rank R (its inputs follow, found walking the order backwards), and
 * any other use at another rank is refused. */
static cdnn_status_t rank_conflict(const validation_t *v, int32_t ti, int32_t want,
                                   int32_t by, int32_t other, int32_t other_rank)
{
    const cdnn_graph_t *g = v->g;
    const graph_tensor_t *t = &g->tensors[ti];
    return cdnn_fail(CDNN_STATUS_INVALID_GRAPH,
                     "tensor '%s' (uid %lld, rank %d) is broadcast to rank %d by node "
                     "'%s' but used at rank %d by node '%s'; a tensor is used at one "
                     "rank: declare it at rank %d (leading dims of 1), or give each "
                     "use its own tensor",
                     t->name, (long long)t->uid, (int)v->tv[ti].rank, (int)want,
                     g->nodes[by].name, (int)other_rank, g->nodes[other].name, (int)want);
}

static void pad_rank(cdnn_tensor_view_t *t, int32_t rank)
{
    int32_t lead = rank - t->rank;
    int64_t outer = t->rank ? t->strides[0] * t->dims[0] : 1;
    memmove(t->dims + lead, t->dims, (size_t)t->rank * sizeof *t->dims);
    memmove(t->strides + lead, t->strides, (size_t)t->rank * sizeof *t->strides);
    for (int32_t d = 0; d < lead; d++) {
        t->dims[d] = 1;
        t->strides[d] = outer > 0 ? outer : 1; /* packed, as a virtual one */
    }
    t->rank = rank;
}

static cdnn_status_t present_equal_ranks(validation_t *v)
{
    cdnn_graph_t *g = v->g;
    if (!g->rank_broadcast)
        return CDNN_STATUS_SUCCESS;
    size_t nt = (size_t)g->tensor_count;
    int32_t *need = calloc(nt, sizeof *need);        /* rank shown; 0: its own */
    int32_t *need_by = calloc(nt, sizeof *need_by);  /* node asking it */
    int32_t *own_by = malloc(nt * sizeof *own_by);   /* node using its own rank */
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (!need || !need_by || !own_by)
        st = cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory validating the graph");
    for (size_t i = 0; !st && i < nt; i++)
        own_by[i] = -1;
    for (int32_t i = g->node_count - 1; !st && i >= 0; i--) {
        int32_t ni = v->order[i];
        int pointwise = g->nodes[ni].op == CDNN_OP_POINTWISE;
        int32_t rank = 0;
        for (int p = 0; !st && p < CDNN_NODE_MAX_OUTPUTS; p++) {
            int32_t ti = v->out[ni][p];
            if (ti < 0)
                continue;
            if (need[ti] && !pointwise)
                st = rank_conflict(v, ti, need[ti], need_by[ti], ni, v->tv[ti].rank);
            rank = need[ti] ? need[ti] : v->tv[ti].rank;
        }
        for (int p = 0; !st && p < CDNN_NODE_MAX_INPUTS; p++) {
            int32_t ti = v->in[ni][p];
            if (ti < 0)
                continue;
            int32_t want = pointwise && v->tv[ti].rank < rank ? rank : 0;
            if (want && own_by[ti] >= 0)
                st = rank_conflict(v, ti, want, ni, own_by[ti], v->tv[ti].rank);
            else if (want && need[ti] && need[ti] != want)
                st = rank_conflict(v, ti, want, ni, need_by[ti], need[ti]);
            else if (!want && need[ti])
                st = rank_conflict(v, ti, need[ti], need_by[ti], ni, v->tv[ti].rank);
            else if (want) {
                need[ti] = want;
                need_by[ti] = ni;
            } else
                own_by[ti] = ni;
        }
    }
    for (size_t i = 0; !st && i < nt; i++)
        if (need[i])
            pad_rank(&v->tv[i], need[i]);
    free(need);
    free(need_by);
    free(own_by);
    return st;
}

/* Hand the derived arrays to the graph: node views in topological order. */
static cdnn_status_t publish_view(validation_t *v)
{
    cdnn_graph_t *g = v->g;
    cdnn_node_view_t *nv = calloc((size_t)g->node_count, sizeof *nv);
    if (!nv)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    for (int32_t i = 0; i < g->node_count; i++) {
        int32_t ni = v->order[i];
        nv[i].op = g->nodes[ni].op;
        nv[i].name = g->nodes[ni].name;
        memcpy(nv[i].inputs, v->in[ni], sizeof nv[i].inputs);
        memcpy(nv[i].outputs, v->out[ni], sizeof nv[i].outputs);
        nv[i].attr = g->nodes[ni].attr;
        /* Providers see an axis counted from the front. */
        if (op_desc(nv[i].op)->attr == OP_ATTR_AXIS && nv[i].attr.axis < 0)
            nv[i].attr.axis += v->tv[v->in[ni][0]].rank;
        if (op_desc(nv[i].op)->attr == OP_ATTR_TOPK && nv[i].attr.topk.axis < 0)
            nv[i].attr.topk.axis += v->tv[v->in[ni][0]].rank;
    }
    g->tensor_views = v->tv;
    v->tv = NULL;
    g->node_views = nv;
    g->view.struct_size = sizeof g->view;
    g->view.tensor_count = g->tensor_count;
    g->view.tensors = g->tensor_views;
    g->view.node_count = g->node_count;
    g->view.nodes = nv;
    g->view.compute_type = g->compute_type;
    g->validated = 1;
    return CDNN_STATUS_SUCCESS;
}

/* A graph loaded from a newer format minor may be valid to a newer cdnn
 * (a port made optional, NumPy's rank broadcasting): say so after the
 * message, so that the reader knows where to look. */
static cdnn_status_t newer_format_hint(const cdnn_graph_t *graph, cdnn_status_t st)
{
    if (!graph->newer_format_minor)
        return st;
    char what[1024];
    snprintf(what, sizeof what, "%s", cdnn_last_error());
    return cdnn_fail(st, "%s; note: the graph was saved as graph format 1.%u, newer "
                     "than this cdnn reads (1.%d), and may use what a newer cdnn "
                     "allows; validate it with a newer cdnn", what,
                     (unsigned)graph->newer_format_minor, (int)OP_TABLE_FORMAT_MINOR);
}

cdnn_status_t cdnn_graph_validate(cdnn_graph_t *graph)
{
    CDNN_CHECK_ARG(graph);
    if (graph->validated)
        return CDNN_STATUS_SUCCESS;
    graph_invalidate(graph);
    if (graph->node_count == 0)
        return cdnn_fail(CDNN_STATUS_INVALID_GRAPH,
                         "the graph has no operations; add at least one node");
    size_t nt = (size_t)graph->tensor_count, nn = (size_t)graph->node_count;
    validation_t v = {graph};
    v.tv = calloc(nt, sizeof *v.tv);
    v.producer = malloc(nt * sizeof *v.producer);
    v.readers = calloc(nt, sizeof *v.readers);
    v.order = calloc(nn, sizeof *v.order);
    v.in = calloc(nn, sizeof *v.in);
    v.out = calloc(nn, sizeof *v.out);
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    graph->rank_broadcast = 0;
    if ((nt && (!v.tv || !v.producer || !v.readers)) || !v.order || !v.in || !v.out)
        st = cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory validating the graph");
    for (size_t i = 0; !st && i < nt; i++)
        v.producer[i] = -1;
    if (!st)
        st = check_structure(&v);
    if (!st)
        st = check_nodes(&v);
    if (!st)
        st = present_equal_ranks(&v);
    if (!st)
        st = publish_view(&v);
    free(v.tv);
    free(v.producer);
    free(v.readers);
    free(v.order);
    free(v.in);
    free(v.out);
    return st == CDNN_STATUS_INVALID_GRAPH ? newer_format_hint(graph, st) : st;
}

cdnn_status_t cdnn_graph_tensor_shape(const cdnn_graph_t *graph, int64_t uid,
                                      cdnn_data_type_t *type, int32_t *rank,
                                      int64_t *dims, int64_t *strides)
{
    CDNN_CHECK_ARG(graph);
    if (!graph->validated)
        return cdnn_fail(CDNN_STATUS_BAD_STATE,
                         "the graph is not validated; call cdnn_graph_validate first");
    int32_t i = graph_find_tensor(graph, uid);
    if (i < 0)
        return cdnn_fail(CDNN_STATUS_NOT_FOUND, "no tensor has uid %lld", (long long)uid);
    const cdnn_tensor_view_t *t = &graph->tensor_views[i];
    /* A rank-broadcast input keeps the rank it was declared with here; the
     * view's extra leading dims are 1s. */
    int32_t declared = graph->tensors[i].rank;
    int32_t lead = declared && declared < t->rank ? t->rank - declared : 0;
    if (type)
        *type = t->type;
    if (rank)
        *rank = t->rank - lead;
    for (int32_t d = 0; d < t->rank - lead; d++) {
        if (dims)
            dims[d] = t->dims[lead + d];
        if (strides)
            strides[d] = t->strides[lead + d];
    }
    return CDNN_STATUS_SUCCESS;
}
