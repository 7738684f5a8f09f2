/*
 * content_key.c -- a stable hash of what a graph computes.
 *
 * The key covers every fact that can change what an engine runs (ops,
 * attributes, types, shapes, strides, virtual and scalar flags, alignment)
 * and nothing else: tensors are numbered in the order the topologically
 * ordered nodes first use them, so names and uid values drop out.  Every
 * field is written as fixed-width little-endian bytes, never as memory
 * images, so that padding and host layout cannot leak into the key.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/sha256.h>

#include "core/error.h"
#include "core/sha256.h"
#include "graph/graph.h"
#include "graph/ops.h"

#define CONTENT_KEY_TAG "cdnn content key v1"

static void put_u64(sha256_t *w, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    sha256_update(w, b, sizeof b);
}

static void put_i64(sha256_t *w, int64_t v)
{
    put_u64(w, (uint64_t)v);
}

static void put_f64(sha256_t *w, double v)
{
    uint64_t bits;
    if (v == 0)
        v = 0; /* -0 and +0 compute the same */
    else if (isnan(v))
        v = NAN; /* so does every NaN, whatever its sign and payload (the
                  * JSON form keeps none of them) */
    memcpy(&bits, &v, sizeof bits);
    put_u64(w, bits);
}

static void put_tensor(sha256_t *w, const cdnn_tensor_view_t *t)
{
    put_i64(w, t->type);
    put_i64(w, t->rank);
    for (int32_t d = 0; d < t->rank; d++) {
        put_i64(w, t->dims[d]);
        put_i64(w, t->strides[d]);
    }
    put_i64(w, t->alignment);
    put_i64(w, t->is_virtual);
    put_i64(w, t->is_scalar);
    put_f64(w, t->is_scalar ? t->scalar_value : 0);
}

/* The fields of the op's attribute kind; a view a provider reports may
 * hold any op value, and one outside the table has none.  No default case,
 * so that a new attribute kind cannot compile without saying what it
 * hashes. */
static void put_attr(sha256_t *w, const cdnn_node_view_t *n)
{
    const cdnn_node_attr_t *a = &n->attr;
    const op_desc_t *op = op_desc(n->op);
    switch (op ? op->attr : OP_ATTR_NONE) {
    case OP_ATTR_CONV:
        put_i64(w, a->conv.spatial_dims);
        for (int i = 0; i < a->conv.spatial_dims; i++) {
            put_i64(w, a->conv.pre_padding[i]);
            put_i64(w, a->conv.post_padding[i]);
            put_i64(w, a->conv.stride[i]);
            put_i64(w, a->conv.dilation[i]);
        }
        put_i64(w, a->conv.groups);
        break;
    case OP_ATTR_POINTWISE:
        put_i64(w, a->pointwise.mode);
        put_f64(w, a->pointwise.relu_lower_clip);
        put_f64(w, a->pointwise.relu_upper_clip);
        put_f64(w, a->pointwise.relu_lower_clip_slope);
        put_f64(w, a->pointwise.elu_alpha);
        put_f64(w, a->pointwise.softplus_beta);
        put_f64(w, a->pointwise.swish_beta);
        break;
    case OP_ATTR_REDUCTION:
        put_i64(w, a->reduction);
        break;
    case OP_ATTR_NORM:
        put_f64(w, a->epsilon);
        break;
    case OP_ATTR_SDPA:
        put_f64(w, a->sdpa.scale);
        put_i64(w, a->sdpa.causal != 0);
        break;
    case OP_ATTR_AXIS: /* counted from the front in a validated view */
        put_i64(w, a->axis);
        break;
    case OP_ATTR_TRANSPOSE:
        put_i64(w, a->transpose.rank);
        for (int32_t i = 0; i < a->transpose.rank && i < CDNN_MAX_RANK; i++)
            put_i64(w, a->transpose.perm[i]);
        break;
    case OP_ATTR_TOPK: /* axis counted from the front in a validated view */
        put_i64(w, a->topk.axis);
        put_i64(w, a->topk.k);
        put_i64(w, a->topk.largest != 0);
        break;
    case OP_ATTR_POOLING: {
        const cdnn_pooling_attr_t *p = &a->pooling;
        put_i64(w, p->mode);
        put_i64(w, p->spatial_dims);
        for (int32_t i = 0; i < p->spatial_dims && i < 3; i++) {
            put_i64(w, p->window[i]);
            put_i64(w, p->stride[i]);
            put_i64(w, p->dilation[i]);
            put_i64(w, p->pre_padding[i]);
            put_i64(w, p->post_padding[i]);
        }
        put_i64(w, p->ceil_mode != 0);
        put_i64(w, p->count_include_pad != 0);
        break;
    }
    case OP_ATTR_RESIZE:
        put_i64(w, a->resize.mode);
        put_i64(w, a->resize.coordinate);
        put_i64(w, a->resize.nearest);
        break;
    case OP_ATTR_MOMENTUM:
        put_f64(w, a->momentum);
        break;
    case OP_ATTR_PAD:
        put_i64(w, a->pad.rank);
        for (int32_t i = 0; i < a->pad.rank && i < CDNN_MAX_RANK; i++)
            put_i64(w, a->pad.pre[i]);
        put_f64(w, a->pad.value);
        break;
    case OP_ATTR_SLICE:
        put_i64(w, a->slice.rank);
        for (int32_t i = 0; i < a->slice.rank && i < CDNN_MAX_RANK; i++) {
            put_i64(w, a->slice.start[i]);
            put_i64(w, a->slice.step[i]);
        }
        break;
    case OP_ATTR_NONE:
    case OP_ATTR_KIND_COUNT:
        break;
    }
}

/* A port: its canonical number, and the tensor itself on first use. */
static void put_port(sha256_t *w, const cdnn_graph_view_t *g, int32_t ti,
                     int32_t *canonical, int32_t *next)
{
    if (ti < 0) {
        put_i64(w, -1);
        return;
    }
    if (canonical[ti] < 0) {
        canonical[ti] = (*next)++;
        put_i64(w, canonical[ti]);
        put_tensor(w, &g->tensors[ti]);
        return;
    }
    put_i64(w, canonical[ti]);
}

static void put_graph(sha256_t *w, const cdnn_graph_view_t *g,
                      int32_t *canonical)
{
    int32_t next = 0;
    sha256_update(w, CONTENT_KEY_TAG, sizeof CONTENT_KEY_TAG);
    put_i64(w, g->compute_type);
    put_i64(w, g->node_count);
    for (int32_t i = 0; i < g->node_count; i++) {
        const cdnn_node_view_t *n = &g->nodes[i];
        put_i64(w, n->op);
        put_attr(w, n);
        for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
            put_port(w, g, n->inputs[p], canonical, &next);
        for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++)
            put_port(w, g, n->outputs[p], canonical, &next);
    }
}

cdnn_status_t content_key_of_view(const cdnn_graph_view_t *g, uint8_t digest[32])
{
    int32_t *canonical = malloc(((size_t)g->tensor_count + 1) * sizeof *canonical);
    if (!canonical)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory hashing the graph");
    for (int32_t i = 0; i < g->tensor_count; i++)
        canonical[i] = -1;
    sha256_t w;
    sha256_begin(&w);
    put_graph(&w, g, canonical);
    free(canonical);
    return sha256_end(&w, digest);
}

cdnn_status_t graph_content_digest(cdnn_graph_t *graph, uint8_t digest[32])
{
    cdnn_status_t st = cdnn_graph_validate(graph);
    return st ? st : content_key_of_view(&graph->view, digest);
}

cdnn_status_t cdnn_graph_content_key(cdnn_graph_t *graph, char key[65])
{
    CDNN_CHECK_ARG(graph);
    CDNN_CHECK_ARG(key);
    uint8_t digest[32];
    cdnn_status_t st = graph_content_digest(graph, digest);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    sdk_sha256_hex(digest, key);
    return CDNN_STATUS_SUCCESS;
}
