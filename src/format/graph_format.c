/*
 * graph_format.c -- graph declarations to graph.fbs bytes and back.
 *
 * Encoding reads the declarations (graph.h), never the validated view, so
 * that what a caller left to inference stays left to inference.  Decoding
 * goes through the public builder calls, so a loaded graph is held to the
 * same rules as one a caller built; the checks here are only those the
 * builder cannot make because they concern the bytes themselves (enum
 * values, vector lengths, port slots, the attribute union).
 */
#include "format/graph_format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/sha256.h"
#include "format/blob.h"
#include "graph/graph.h"
#include "graph/ops.h"

/* ---- schema descriptors for the verifier --------------------------------- */

#define SCALAR(n, name) {FB_SCALAR, n, n, NULL, NULL, 0, name}
#define VEC_I64(name) {FB_VECTOR, 8, 8, NULL, NULL, 0, name}
#define STRING(name) {FB_STRING, 0, 0, NULL, NULL, 0, name}
#define PORTS(name) {FB_VECTOR, GF_PORT_SIZE, GF_PORT_ALIGN, NULL, NULL, 0, name}

static const fb_field_desc_t conv_fields[GF_CONV_FIELDS] = {
    SCALAR(4, "spatial_dims"), VEC_I64("pre_padding"), VEC_I64("post_padding"),
    VEC_I64("stride"),         VEC_I64("dilation"),    SCALAR(8, "groups")};
static const fb_table_desc_t conv_desc = {"ConvAttr", GF_CONV_FIELDS,
                                          conv_fields};

static const fb_field_desc_t pointwise_fields[GF_PW_FIELDS] = {
    SCALAR(1, "mode"),
    SCALAR(8, "relu_lower_clip"),
    SCALAR(8, "relu_upper_clip"),
    SCALAR(8, "relu_lower_clip_slope"),
    SCALAR(8, "elu_alpha"),
    SCALAR(8, "softplus_beta"),
    SCALAR(8, "swish_beta")};
static const fb_table_desc_t pointwise_desc = {"PointwiseAttr", GF_PW_FIELDS,
                                               pointwise_fields};

static const fb_field_desc_t reduction_fields[1] = {SCALAR(1, "mode")};
static const fb_table_desc_t reduction_desc = {"ReductionAttr", 1,
                                               reduction_fields};

static const fb_field_desc_t norm_fields[1] = {SCALAR(8, "epsilon")};
static const fb_table_desc_t norm_desc = {"NormAttr", 1, norm_fields};

static const fb_field_desc_t sdpa_fields[GF_SDPA_FIELDS] = {
    SCALAR(8, "scale"), SCALAR(1, "causal")};
static const fb_table_desc_t sdpa_desc = {"SdpaAttr", GF_SDPA_FIELDS,
                                          sdpa_fields};

static const fb_field_desc_t axis_fields[GF_AXIS_FIELDS] = {SCALAR(4, "axis")};
static const fb_table_desc_t axis_desc = {"AxisAttr", GF_AXIS_FIELDS,
                                             axis_fields};

static const fb_field_desc_t transpose_fields[GF_TRANSPOSE_FIELDS] = {VEC_I64("perm")};
static const fb_table_desc_t transpose_desc = {"TransposeAttr", GF_TRANSPOSE_FIELDS,
                                               transpose_fields};

static const fb_field_desc_t slice_fields[GF_SLICE_FIELDS] = {VEC_I64("start"),
                                                              VEC_I64("step")};
static const fb_table_desc_t slice_desc = {"SliceAttr", GF_SLICE_FIELDS, slice_fields};

static const fb_field_desc_t pad_fields[GF_PAD_FIELDS] = {VEC_I64("pre"),
                                                          SCALAR(8, "value")};
static const fb_table_desc_t pad_desc = {"PadAttr", GF_PAD_FIELDS, pad_fields};

static const fb_field_desc_t topk_fields[GF_TOPK_FIELDS] = {
    SCALAR(4, "axis"), SCALAR(8, "k"), SCALAR(1, "largest")};
static const fb_table_desc_t topk_desc = {"TopkAttr", GF_TOPK_FIELDS, topk_fields};

static const fb_field_desc_t pool_fields[GF_POOL_FIELDS] = {
    SCALAR(1, "mode"),          SCALAR(4, "spatial_dims"), VEC_I64("window"),
    VEC_I64("stride"),          VEC_I64("pre_padding"),    VEC_I64("post_padding"),
    VEC_I64("dilation"),        SCALAR(1, "ceil_mode"),    SCALAR(1, "count_include_pad")};
static const fb_table_desc_t pool_desc = {"PoolingAttr", GF_POOL_FIELDS, pool_fields};

static const fb_field_desc_t resize_fields[GF_RESIZE_FIELDS] = {
    SCALAR(1, "mode"), SCALAR(1, "coordinate"), SCALAR(1, "nearest")};
static const fb_table_desc_t resize_desc = {"ResizeAttr", GF_RESIZE_FIELDS,
                                            resize_fields};

static const fb_field_desc_t momentum_fields[GF_MOMENTUM_FIELDS] = {
    SCALAR(8, "momentum")};
static const fb_table_desc_t momentum_desc = {"MomentumAttr", GF_MOMENTUM_FIELDS,
                                              momentum_fields};

/* By NodeAttr type - 1 (type 0 is none). */
static const fb_table_desc_t *const attr_descs[OP_ATTR_KIND_COUNT - 1] = {
    &conv_desc, &pointwise_desc, &reduction_desc, &norm_desc, &sdpa_desc,
    &axis_desc, &transpose_desc, &slice_desc, &pad_desc, &topk_desc,
    &pool_desc, &resize_desc, &momentum_desc};

static const fb_field_desc_t tensor_fields[GF_TENSOR_FIELDS] = {
    SCALAR(8, "uid"),        STRING("name"),         SCALAR(1, "data_type"),
    VEC_I64("dims"),         VEC_I64("strides"),     SCALAR(1, "is_virtual"),
    SCALAR(8, "alignment"),  SCALAR(1, "is_scalar"), SCALAR(8, "scalar_value")};
static const fb_table_desc_t tensor_desc = {"Tensor", GF_TENSOR_FIELDS,
                                            tensor_fields};

static const fb_field_desc_t node_fields[GF_NODE_FIELDS] = {
    STRING("name"), SCALAR(1, "op"), PORTS("inputs"), PORTS("outputs"),
    {FB_UNION_TYPE, 1, 1, NULL, NULL, 0, "attr_type"},
    {FB_UNION, 0, 0, NULL, attr_descs, OP_ATTR_KIND_COUNT - 1, "attr"}};
static const fb_table_desc_t node_desc = {"Node", GF_NODE_FIELDS, node_fields};

#define SHA256_FIELD {FB_VECTOR, 1, 1, NULL, NULL, 0, "sha256"}
#define SKIP {FB_SKIP, 0, 0, NULL, NULL, 0, NULL}

static const fb_field_desc_t graph_fields[GF_GRAPH_SHA256 + 1] = {
    SCALAR(2, "format_major"),
    SCALAR(2, "format_minor"),
    STRING("name"),
    SCALAR(1, "io_type"),
    SCALAR(1, "intermediate_type"),
    SCALAR(1, "compute_type"),
    {FB_VECTOR_TABLE, 0, 0, &tensor_desc, NULL, 0, "tensors"},
    {FB_VECTOR_TABLE, 0, 0, &node_desc, NULL, 0, "nodes"},
    SHA256_FIELD};
const fb_table_desc_t graph_format_desc = {"Graph", GF_GRAPH_SHA256 + 1,
                                           graph_fields};

/* What is read before the digest has proven the bytes intact: the digest
 * itself, and the version's place; every other field waits.  The version
 * and digest keep their ids in every major, so that a newer major is told
 * apart from damage without trusting a byte of it. */
static const fb_field_desc_t seal_fields[GF_GRAPH_SHA256 + 1] = {
    SCALAR(2, "format_major"), SCALAR(2, "format_minor"),
    SKIP, SKIP, SKIP, SKIP, SKIP, SKIP, SHA256_FIELD};
static const fb_table_desc_t seal_desc = {"Graph", GF_GRAPH_SHA256 + 1, seal_fields};

#undef SHA256_FIELD
#undef SKIP

#undef SCALAR
#undef VEC_I64
#undef STRING
#undef PORTS

/* ---- encoding ------------------------------------------------------------- */

static int packed(const graph_tensor_t *t)
{
    int64_t s = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        if (t->strides[d] != s)
            return 0;
        if (d > 0 && __builtin_mul_overflow(s, t->dims[d], &s))
            return 0; /* then the strides given cannot be packed ones */
    }
    return 1;
}

static fb_ref_t encode_tensor(fb_builder_t *b, const graph_tensor_t *t)
{
    fb_ref_t name = t->name ? fb_string(b, t->name) : 0;
    fb_ref_t dims = t->rank ? fb_vector_i64(b, t->dims, (size_t)t->rank) : 0;
    /* Packed strides are what an absent vector means: leave them out. */
    fb_ref_t strides = t->rank && !packed(t)
                           ? fb_vector_i64(b, t->strides, (size_t)t->rank)
                           : 0;
    fb_table_start(b, GF_TENSOR_FIELDS);
    fb_add_i64(b, GF_TENSOR_UID, t->uid, 0);
    fb_add_ref(b, GF_TENSOR_NAME, name);
    fb_add_i8(b, GF_TENSOR_DATA_TYPE, (int8_t)t->type, 0);
    fb_add_ref(b, GF_TENSOR_DIMS, dims);
    fb_add_ref(b, GF_TENSOR_STRIDES, strides);
    fb_add_bool(b, GF_TENSOR_VIRTUAL, t->is_virtual != 0, 0);
    fb_add_i64(b, GF_TENSOR_ALIGNMENT, t->alignment, 0);
    fb_add_bool(b, GF_TENSOR_SCALAR, t->is_scalar != 0, 0);
    if (t->is_scalar)
        fb_add_f64(b, GF_TENSOR_SCALAR_VALUE, t->scalar_value, 0);
    return fb_table_end(b);
}

/* Ports in slot order; a slot with no tensor is not listed. */
static fb_ref_t encode_ports(fb_builder_t *b, const int64_t *uids, int slots)
{
    uint8_t elems[CDNN_NODE_MAX_INPUTS * GF_PORT_SIZE];
    size_t n = 0;
    memset(elems, 0, sizeof elems);
    for (int s = 0; s < slots; s++) {
        if (uids[s] == CDNN_UID_NONE)
            continue;
        uint8_t *p = elems + n * GF_PORT_SIZE;
        p[0] = (uint8_t)s;
        for (int i = 0; i < 8; i++)
            p[8 + i] = (uint8_t)((uint64_t)uids[s] >> (8 * i));
        n++;
    }
    return n ? fb_vector_structs(b, elems, GF_PORT_SIZE, GF_PORT_ALIGN, n) : 0;
}

/* A per-spatial-dim vector, left out when every entry is the default. */
static fb_ref_t encode_spatial(fb_builder_t *b, const int64_t *v, int n,
                               int64_t dflt)
{
    for (int i = 0; i < n; i++)
        if (v[i] != dflt)
            return fb_vector_i64(b, v, (size_t)n);
    return 0;
}

static fb_ref_t encode_conv(fb_builder_t *b, const cdnn_conv_attr_t *a)
{
    int n = a->spatial_dims < 0 ? 0 : a->spatial_dims > 3 ? 3 : a->spatial_dims;
    fb_ref_t pre = encode_spatial(b, a->pre_padding, n, 0);
    fb_ref_t post = encode_spatial(b, a->post_padding, n, 0);
    fb_ref_t stride = encode_spatial(b, a->stride, n, 1);
    fb_ref_t dilation = encode_spatial(b, a->dilation, n, 1);
    fb_table_start(b, GF_CONV_FIELDS);
    fb_add_i32(b, GF_CONV_SPATIAL_DIMS, a->spatial_dims, 0);
    fb_add_ref(b, GF_CONV_PRE_PADDING, pre);
    fb_add_ref(b, GF_CONV_POST_PADDING, post);
    fb_add_ref(b, GF_CONV_STRIDE, stride);
    fb_add_ref(b, GF_CONV_DILATION, dilation);
    fb_add_i64(b, GF_CONV_GROUPS, a->groups, 1);
    return fb_table_end(b);
}

/* Vectors only where some dim is not the default; int32 entries widened. */
static fb_ref_t encode_pooling(fb_builder_t *b, const cdnn_pooling_attr_t *a)
{
    int n = a->spatial_dims < 0 ? 0 : a->spatial_dims > 3 ? 3 : a->spatial_dims;
    int64_t window[3], stride[3], dilation[3];
    for (int i = 0; i < n; i++) {
        window[i] = a->window[i];
        stride[i] = a->stride[i];
        dilation[i] = a->dilation[i];
    }
    fb_ref_t w = encode_spatial(b, window, n, 1);
    fb_ref_t st = encode_spatial(b, stride, n, 1);
    fb_ref_t pre = encode_spatial(b, a->pre_padding, n, 0);
    fb_ref_t post = encode_spatial(b, a->post_padding, n, 0);
    fb_ref_t dil = encode_spatial(b, dilation, n, 1);
    fb_table_start(b, GF_POOL_FIELDS);
    fb_add_i32(b, GF_POOL_SPATIAL_DIMS, a->spatial_dims, 0);
    fb_add_ref(b, GF_POOL_WINDOW, w);
    fb_add_ref(b, GF_POOL_STRIDE, st);
    fb_add_ref(b, GF_POOL_PRE_PADDING, pre);
    fb_add_ref(b, GF_POOL_POST_PADDING, post);
    fb_add_ref(b, GF_POOL_DILATION, dil);
    fb_add_i8(b, GF_POOL_MODE, (int8_t)a->mode, 0);
    fb_add_bool(b, GF_POOL_CEIL_MODE, a->ceil_mode != 0, 0);
    fb_add_bool(b, GF_POOL_COUNT_INCLUDE_PAD, a->count_include_pad != 0, 0);
    return fb_table_end(b);
}

static fb_ref_t encode_pointwise(fb_builder_t *b, const cdnn_pointwise_attr_t *a)
{
    fb_table_start(b, GF_PW_FIELDS);
    fb_add_i8(b, GF_PW_MODE, (int8_t)a->mode, 0);
    fb_add_f64(b, GF_PW_RELU_LOWER, a->relu_lower_clip, 0);
    fb_add_f64(b, GF_PW_RELU_UPPER, a->relu_upper_clip, INFINITY);
    fb_add_f64(b, GF_PW_RELU_SLOPE, a->relu_lower_clip_slope, 0);
    fb_add_f64(b, GF_PW_ELU_ALPHA, a->elu_alpha, 1);
    fb_add_f64(b, GF_PW_SOFTPLUS_BETA, a->softplus_beta, 1);
    fb_add_f64(b, GF_PW_SWISH_BETA, a->swish_beta, 1);
    return fb_table_end(b);
}

/* start always (its length is the rank), step only when not all 1. */
static fb_ref_t encode_slice(fb_builder_t *b, const cdnn_slice_attr_t *a)
{
    int64_t start[CDNN_MAX_RANK], step[CDNN_MAX_RANK];
    int count = a->rank < 0 ? 0 : a->rank > CDNN_MAX_RANK ? CDNN_MAX_RANK : a->rank;
    int unit_steps = 1;
    for (int i = 0; i < count; i++) {
        start[i] = a->start[i];
        step[i] = a->step[i];
        unit_steps &= step[i] == 1;
    }
    fb_ref_t starts = count ? fb_vector_i64(b, start, (size_t)count) : 0;
    fb_ref_t steps = count && !unit_steps ? fb_vector_i64(b, step, (size_t)count) : 0;
    fb_table_start(b, GF_SLICE_FIELDS);
    fb_add_ref(b, GF_SLICE_START, starts);
    fb_add_ref(b, GF_SLICE_STEP, steps);
    return fb_table_end(b);
}

static fb_ref_t encode_attr(fb_builder_t *b, const graph_node_t *n)
{
    const cdnn_node_attr_t *a = &n->attr;
    switch (op_desc(n->op)->attr) {
    case OP_ATTR_CONV: return encode_conv(b, &a->conv);
    case OP_ATTR_POINTWISE: return encode_pointwise(b, &a->pointwise);
    case OP_ATTR_REDUCTION:
        fb_table_start(b, 1);
        fb_add_i8(b, 0, (int8_t)a->reduction, 0);
        return fb_table_end(b);
    case OP_ATTR_NORM:
        fb_table_start(b, 1);
        fb_add_f64(b, 0, a->epsilon, 0);
        return fb_table_end(b);
    case OP_ATTR_SDPA:
        fb_table_start(b, GF_SDPA_FIELDS);
        fb_add_f64(b, GF_SDPA_SCALE, a->sdpa.scale, 0);
        fb_add_bool(b, GF_SDPA_CAUSAL, a->sdpa.causal != 0, 0);
        return fb_table_end(b);
    case OP_ATTR_AXIS:
        fb_table_start(b, GF_AXIS_FIELDS);
        fb_add_i32(b, GF_AXIS, a->axis, -1);
        return fb_table_end(b);
    case OP_ATTR_TRANSPOSE: {
        int64_t perm[CDNN_MAX_RANK];
        int count = a->transpose.rank < 0 ? 0
                    : a->transpose.rank > CDNN_MAX_RANK ? CDNN_MAX_RANK
                                                        : a->transpose.rank;
        for (int i = 0; i < count; i++)
            perm[i] = a->transpose.perm[i];
        fb_ref_t v = count ? fb_vector_i64(b, perm, (size_t)count) : 0;
        fb_table_start(b, GF_TRANSPOSE_FIELDS);
        fb_add_ref(b, GF_TRANSPOSE_PERM, v);
        return fb_table_end(b);
    }
    case OP_ATTR_SLICE: return encode_slice(b, &a->slice);
    case OP_ATTR_PAD: {
        int64_t pre[CDNN_MAX_RANK];
        int count = a->pad.rank < 0 ? 0 : a->pad.rank > CDNN_MAX_RANK ? CDNN_MAX_RANK
                                                                      : a->pad.rank;
        for (int i = 0; i < count; i++)
            pre[i] = a->pad.pre[i];
        fb_ref_t v = count ? fb_vector_i64(b, pre, (size_t)count) : 0;
        fb_table_start(b, GF_PAD_FIELDS);
        fb_add_ref(b, GF_PAD_PRE, v);
        fb_add_f64(b, GF_PAD_VALUE, a->pad.value, 0);
        return fb_table_end(b);
    }
    case OP_ATTR_TOPK:
        fb_table_start(b, GF_TOPK_FIELDS);
        fb_add_i64(b, GF_TOPK_K, a->topk.k, 1);
        fb_add_i32(b, GF_TOPK_AXIS, a->topk.axis, -1);
        fb_add_bool(b, GF_TOPK_LARGEST, a->topk.largest != 0, 1);
        return fb_table_end(b);
    case OP_ATTR_POOLING: return encode_pooling(b, &a->pooling);
    case OP_ATTR_RESIZE:
        fb_table_start(b, GF_RESIZE_FIELDS);
        fb_add_i8(b, GF_RESIZE_MODE, (int8_t)a->resize.mode, 0);
        fb_add_i8(b, GF_RESIZE_COORDINATE, (int8_t)a->resize.coordinate, 0);
        fb_add_i8(b, GF_RESIZE_NEAREST, (int8_t)a->resize.nearest, 0);
        return fb_table_end(b);
    case OP_ATTR_MOMENTUM:
        fb_table_start(b, GF_MOMENTUM_FIELDS);
        fb_add_f64(b, GF_MOMENTUM, a->momentum, 0.1);
        return fb_table_end(b);
    default: return 0;
    }
}

static fb_ref_t encode_node(fb_builder_t *b, const graph_node_t *n)
{
    const op_desc_t *op = op_desc(n->op);
    fb_ref_t name = n->name ? fb_string(b, n->name) : 0;
    fb_ref_t inputs = encode_ports(b, n->inputs, op->inputs.count);
    fb_ref_t outputs = encode_ports(b, n->outputs, op->outputs.count);
    fb_ref_t attr = encode_attr(b, n);
    fb_table_start(b, GF_NODE_FIELDS);
    fb_add_ref(b, GF_NODE_NAME, name);
    fb_add_i8(b, GF_NODE_OP, (int8_t)n->op, 0);
    fb_add_ref(b, GF_NODE_INPUTS, inputs);
    fb_add_ref(b, GF_NODE_OUTPUTS, outputs);
    fb_add_u8(b, GF_NODE_ATTR_TYPE, (uint8_t)(attr ? op->attr : OP_ATTR_NONE), 0);
    fb_add_ref(b, GF_NODE_ATTR, attr);
    return fb_table_end(b);
}

static const uint8_t zero_digest[32];

_Static_assert(GRAPH_FORMAT_MINOR == OP_TABLE_FORMAT_MINOR,
               "the op table's newest forms are this format's");

/* Whether a pointwise node of g has ports of different declared ranks, an
 * input of lower rank than its y (format 1.3).  By the declared ranks
 * alone, which are what the bytes hold, never by the ranks validation
 * infers for the others: a graph saves to the same bytes before and after
 * it is validated. */
static int uses_rank_broadcast(const cdnn_graph_t *g)
{
    for (int32_t i = 0; i < g->node_count; i++) {
        const graph_node_t *n = &g->nodes[i];
        if (n->op != CDNN_OP_POINTWISE)
            continue;
        int32_t rank = 0;
        int64_t ports[CDNN_NODE_MAX_INPUTS + 1];
        memcpy(ports, n->inputs, sizeof n->inputs);
        ports[CDNN_NODE_MAX_INPUTS] = n->outputs[0];
        for (int p = 0; p <= CDNN_NODE_MAX_INPUTS; p++) {
            int32_t ti = ports[p] == CDNN_UID_NONE ? -1 : graph_find_tensor(g, ports[p]);
            int32_t r = ti >= 0 ? g->tensors[ti].rank : 0;
            if (r && rank && r != rank)
                return 1;
            if (r)
                rank = r;
        }
    }
    return 0;
}

/* The lowest minor that expresses every node of g (graph_format.h). */
static uint16_t minor_needed(const cdnn_graph_t *g)
{
    uint16_t minor = GRAPH_FORMAT_MINOR_LOWEST;
    for (int32_t i = 0; i < g->node_count; i++) {
        int present[CDNN_NODE_MAX_INPUTS];
        for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
            present[p] = g->nodes[i].inputs[p] != CDNN_UID_NONE;
        uint16_t m = op_node_minor(g->nodes[i].op, present);
        if (g->nodes[i].op == CDNN_OP_POINTWISE)
            m = op_pointwise_minor(g->nodes[i].attr.pointwise.mode, m);
        if (m > minor)
            minor = m;
    }
    if (minor < 3 && uses_rank_broadcast(g))
        minor = 3; /* NumPy's rank broadcasting came with 1.3 */
    return minor;
}

static fb_ref_t encode_graph(fb_builder_t *b, const cdnn_graph_t *g,
                             fb_ref_t *refs)
{
    /* made first so that it lies at the end of the buffer; seal() fills it */
    fb_ref_t digest = fb_bytes(b, zero_digest, sizeof zero_digest);
    fb_ref_t name = g->name ? fb_string(b, g->name) : 0;
    for (int32_t i = 0; i < g->tensor_count; i++)
        refs[i] = encode_tensor(b, &g->tensors[i]);
    fb_ref_t tensors =
        g->tensor_count ? fb_vector_refs(b, refs, (size_t)g->tensor_count) : 0;
    for (int32_t i = 0; i < g->node_count; i++)
        refs[i] = encode_node(b, &g->nodes[i]);
    fb_ref_t nodes =
        g->node_count ? fb_vector_refs(b, refs, (size_t)g->node_count) : 0;
    fb_table_start(b, GF_GRAPH_SHA256 + 1);
    fb_add_u16(b, GF_GRAPH_MAJOR, GRAPH_FORMAT_MAJOR, 0);
    fb_add_u16(b, GF_GRAPH_MINOR, minor_needed(g), 0);
    fb_add_ref(b, GF_GRAPH_NAME, name);
    fb_add_i8(b, GF_GRAPH_IO_TYPE, (int8_t)g->io_type, CDNN_DATA_TYPE_F32);
    fb_add_i8(b, GF_GRAPH_INTERMEDIATE_TYPE, (int8_t)g->intermediate_type,
              CDNN_DATA_TYPE_F32);
    fb_add_i8(b, GF_GRAPH_COMPUTE_TYPE, (int8_t)g->compute_type,
              CDNN_DATA_TYPE_F32);
    fb_add_ref(b, GF_GRAPH_TENSORS, tensors);
    fb_add_ref(b, GF_GRAPH_NODES, nodes);
    fb_add_ref(b, GF_GRAPH_SHA256, digest);
    return fb_table_end(b);
}

/* SHA-256 of the whole buffer with the digest's own bytes zeroed. */
static cdnn_status_t graph_digest(const uint8_t *bytes, size_t size,
                                  const uint8_t *digest_at, uint8_t out[32])
{
    size_t at = (size_t)(digest_at - bytes);
    sha256_t h;
    sha256_begin(&h);
    sha256_update(&h, bytes, at);
    sha256_update(&h, zero_digest, sizeof zero_digest);
    sha256_update(&h, bytes + at + 32, size - at - 32);
    return sha256_end(&h, out);
}

cdnn_status_t graph_format_seal(uint8_t *bytes, size_t size)
{
    char why[256];
    if (fb_verify(bytes, size, GRAPH_IDENTIFIER, &seal_desc, why, sizeof why) != 0)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "sealing a graph: %s", why);
    fb_table_t root = fb_root(bytes, size);
    uint32_t n = 0;
    const uint8_t *at = fb_get_vector(&root, GF_GRAPH_SHA256, &n);
    if (!at || n != 32)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "sealing a graph: it has no 32-byte "
                         "sha256 field to fill");
    uint8_t digest[32];
    cdnn_status_t st = graph_digest(bytes, size, at, digest);
    if (st == CDNN_STATUS_SUCCESS)
        memcpy(bytes + (at - bytes), digest, sizeof digest);
    return st;
}

cdnn_status_t graph_format_encode(const cdnn_graph_t *g, uint8_t **bytes,
                                  size_t *size)
{
    CDNN_CHECK_ARG(g);
    CDNN_CHECK_ARG(bytes);
    CDNN_CHECK_ARG(size);
    *bytes = NULL;
    *size = 0;
    if (g->tensor_count > GRAPH_FORMAT_MAX_ITEMS ||
        g->node_count > GRAPH_FORMAT_MAX_ITEMS)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                         "saving a graph: it has %d tensors and %d nodes; a "
                         "saved graph holds at most %d of each",
                         g->tensor_count, g->node_count, GRAPH_FORMAT_MAX_ITEMS);
    int32_t most = g->tensor_count > g->node_count ? g->tensor_count : g->node_count;
    fb_ref_t *refs = malloc((size_t)(most ? most : 1) * sizeof *refs);
    fb_builder_t b;
    fb_builder_init(&b);
    int failed = !refs || fb_finish_copy(&b, encode_graph(&b, g, refs),
                                         GRAPH_IDENTIFIER, bytes, size) != 0;
    fb_builder_free(&b);
    free(refs);
    if (failed)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED,
                         "saving a graph: out of memory encoding %d tensors and "
                         "%d nodes", g->tensor_count, g->node_count);
    cdnn_status_t st = graph_format_seal(*bytes, *size);
    if (st != CDNN_STATUS_SUCCESS) {
        free(*bytes);
        *bytes = NULL;
        *size = 0;
    }
    return st;
}

/* ---- decoding ------------------------------------------------------------- */

typedef struct decoder {
    const char *source; /* starts every message */
    int sealed;         /* binary bytes, which carry a digest from 1.1 on */
    uint16_t major, minor;
    cdnn_graph_t *g;
} decoder_t;

/* A builder call failed: keep its words, say where, and call it damaged
 * data unless it is a graph-level rule (duplicate uid) or memory. */
static cdnn_status_t rewrap(const decoder_t *d, const char *where,
                            cdnn_status_t st)
{
    if (st == CDNN_STATUS_SUCCESS || st == CDNN_STATUS_ALLOC_FAILED)
        return st;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", cdnn_last_error());
    return cdnn_fail(st == CDNN_STATUS_INVALID_GRAPH ? st
                                                     : CDNN_STATUS_CORRUPT_DATA,
                     "%s, %s: %s", d->source, where, msg);
}

/* An enum value this build does not know: damaged bytes, unless the bytes
 * are of a newer minor, which may add values. */
static cdnn_status_t bad_enum(const decoder_t *d, const char *where,
                              const char *what, int value, int count)
{
    if (d->minor > GRAPH_FORMAT_MINOR)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                         "%s, %s: %s %d is not one this cdnn knows; the bytes "
                         "are graph format %u.%u and this cdnn reads up to "
                         "%d.%d; load them with a newer cdnn",
                         d->source, where, what, value, d->major, d->minor,
                         GRAPH_FORMAT_MAJOR, GRAPH_FORMAT_MINOR);
    return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                     "%s, %s: %s %d is out of range (0..%d)", d->source, where,
                     what, value, count - 1);
}

static cdnn_status_t get_name(const decoder_t *d, const fb_table_t *t,
                              int field, const char *where, const char **name)
{
    uint32_t len = 0;
    *name = fb_get_string(t, field, &len);
    if (*name && strlen(*name) != len)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: the name holds a NUL byte", d->source, where);
    return CDNN_STATUS_SUCCESS;
}

/* Copy an int64 vector of at most cap entries; *n = -1 when absent. */
static cdnn_status_t get_i64s(const decoder_t *d, const fb_table_t *t,
                              int field, const char *where, const char *what,
                              int64_t *out, int cap, int *n)
{
    uint32_t count = 0;
    const uint8_t *p = fb_get_vector(t, field, &count);
    *n = -1;
    if (!p)
        return CDNN_STATUS_SUCCESS;
    if (count > (uint32_t)cap)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: %s has %u entries; at most %d are allowed",
                         d->source, where, what, count, cap);
    for (uint32_t i = 0; i < count; i++)
        out[i] = fb_read_i64(p + 8 * i);
    *n = (int)count;
    return CDNN_STATUS_SUCCESS;
}

/* Dims, element count and span within GRAPH_FORMAT_MAX_*, computed without
 * overflow.  Dims below 1 and negative strides are left to the builder,
 * which refuses them with its own words. */
static cdnn_status_t check_extent(const decoder_t *d, const char *where,
                                  const int64_t *dims, const int64_t *strides,
                                  int rank)
{
    int64_t count = 1, span = 0, term;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1 || (strides && strides[i] < 0))
            return CDNN_STATUS_SUCCESS;
        if (dims[i] > GRAPH_FORMAT_MAX_DIM)
            return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                             "%s, %s: dim %d is %lld; cdnn loads dims up to "
                             "2^40", d->source, where, i, (long long)dims[i]);
        int over = __builtin_mul_overflow(count, dims[i], &count);
        if (strides)
            over |= __builtin_mul_overflow(dims[i] - 1, strides[i], &term) ||
                    __builtin_add_overflow(span, term, &span);
        if (over || count > GRAPH_FORMAT_MAX_ELEMENTS ||
            span > GRAPH_FORMAT_MAX_ELEMENTS)
            return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                             "%s, %s: the tensor's element count or span "
                             "exceeds 2^52 elements", d->source, where);
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t get_shape(const decoder_t *d, const fb_table_t *t,
                               const char *where, int64_t *dims,
                               int64_t *strides, int *rank, int *has_strides)
{
    int nd, ns;
    cdnn_status_t st = get_i64s(d, t, GF_TENSOR_DIMS, where, "dims", dims,
                                CDNN_MAX_RANK, &nd);
    if (st == CDNN_STATUS_SUCCESS)
        st = get_i64s(d, t, GF_TENSOR_STRIDES, where, "strides", strides,
                      CDNN_MAX_RANK, &ns);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (nd == 0)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: dims is empty; leave dims out to have "
                         "validation infer the shape", d->source, where);
    if (ns >= 0 && ns != nd)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: %d strides for %d dims; give one stride per "
                         "dim, or none for packed row-major",
                         d->source, where, ns, nd < 0 ? 0 : nd);
    *rank = nd < 0 ? 0 : nd;
    *has_strides = ns >= 0;
    return check_extent(d, where, dims, ns >= 0 ? strides : NULL, *rank);
}

static cdnn_status_t decode_tensor_flags(const decoder_t *d,
                                         const fb_table_t *t, int64_t uid,
                                         const char *where)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (fb_get_bool(t, GF_TENSOR_VIRTUAL, 0))
        st = rewrap(d, where, cdnn_graph_tensor_set_virtual(d->g, uid));
    int64_t alignment = fb_get_i64(t, GF_TENSOR_ALIGNMENT, 0);
    if (st == CDNN_STATUS_SUCCESS && alignment != 0)
        st = rewrap(d, where,
                    cdnn_graph_tensor_set_alignment(d->g, uid, alignment));
    if (st == CDNN_STATUS_SUCCESS && fb_get_bool(t, GF_TENSOR_SCALAR, 0))
        st = rewrap(d, where,
                    cdnn_graph_tensor_set_scalar(
                        d->g, uid, fb_get_f64(t, GF_TENSOR_SCALAR_VALUE, 0)));
    return st;
}

static cdnn_status_t decode_tensor(const decoder_t *d, const fb_table_t *t,
                                   uint32_t i)
{
    int64_t uid = fb_get_i64(t, GF_TENSOR_UID, 0);
    char where[160];
    snprintf(where, sizeof where, "tensors[%u] (uid %lld)", i, (long long)uid);
    const char *name;
    cdnn_status_t st = get_name(d, t, GF_TENSOR_NAME, where, &name);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (name)
        snprintf(where, sizeof where, "tensors[%u] (uid %lld, '%.100s')", i,
                 (long long)uid, name);
    int type = fb_get_i8(t, GF_TENSOR_DATA_TYPE, 0);
    if (type < 0 || type >= CDNN_DATA_TYPE_COUNT)
        return bad_enum(d, where, "data_type", type, CDNN_DATA_TYPE_COUNT);
    int64_t dims[CDNN_MAX_RANK], strides[CDNN_MAX_RANK];
    int rank = 0, has_strides = 0;
    st = get_shape(d, t, where, dims, strides, &rank, &has_strides);
    if (st == CDNN_STATUS_SUCCESS)
        st = rewrap(d, where,
                    cdnn_graph_tensor(d->g, uid, name, (cdnn_data_type_t)type,
                                      rank, rank ? dims : NULL,
                                      has_strides ? strides : NULL));
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_tensor_flags(d, t, uid, where);
    return st;
}

/* Fill ports[0, slots) from a [Port] field; unlisted slots stay NONE. */
static cdnn_status_t decode_ports(const decoder_t *d, const fb_table_t *t,
                                  int field, const char *kind, int slots,
                                  const char *where, int64_t *ports)
{
    uint32_t count = 0;
    const uint8_t *p = fb_get_vector(t, field, &count);
    if (!p)
        return CDNN_STATUS_SUCCESS;
    if (count > (uint32_t)slots)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: %u %s ports listed; the op has %d",
                         d->source, where, count, kind, slots);
    for (uint32_t i = 0; i < count; i++, p += GF_PORT_SIZE) {
        int slot = p[0];
        int64_t uid = fb_read_i64(p + 8);
        if (slot >= slots)
            return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                             "%s, %s: %s slot %d is out of range (0..%d)",
                             d->source, where, kind, slot, slots - 1);
        if (uid == CDNN_UID_NONE)
            return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                             "%s, %s: %s slot %d names uid INT64_MIN, which "
                             "means \"no tensor\"; leave the port out instead",
                             d->source, where, kind, slot);
        if (ports[slot] != CDNN_UID_NONE)
            return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                             "%s, %s: %s slot %d is listed twice",
                             d->source, where, kind, slot);
        ports[slot] = uid;
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t conv_param_fail(const decoder_t *d, const char *where,
                                     const char *what, int64_t v)
{
    return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                     "%s, %s: %s %lld is beyond what cdnn loads (magnitude up "
                     "to 2^20)", d->source, where, what, (long long)v);
}

/* A per-spatial-dim vector: absent keeps the default already in out. */
static cdnn_status_t decode_spatial(const decoder_t *d, const fb_table_t *a,
                                    int field, const char *what,
                                    const char *where, int spatial_dims,
                                    int64_t *out)
{
    int64_t v[3];
    int n;
    cdnn_status_t st = get_i64s(d, a, field, where, what, v, 3, &n);
    if (st != CDNN_STATUS_SUCCESS || n < 0)
        return st;
    if (n != spatial_dims)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: %s has %d entries but spatial_dims is %d",
                         d->source, where, what, n, spatial_dims);
    for (int i = 0; i < n; i++)
        if (v[i] > GRAPH_FORMAT_MAX_CONV_PARAM || v[i] < -GRAPH_FORMAT_MAX_CONV_PARAM)
            return conv_param_fail(d, where, what, v[i]);
    memcpy(out, v, (size_t)n * sizeof *v);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t decode_conv(const decoder_t *d, const fb_table_t *a,
                                 const char *where, cdnn_conv_attr_t *c)
{
    int32_t sd = fb_get_i32(a, GF_CONV_SPATIAL_DIMS, 0);
    if (sd < 1 || sd > 3)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: spatial_dims is %d; convolutions have 1, 2 "
                         "or 3 spatial dims", d->source, where, (int)sd);
    cdnn_conv_attr_init(c, sd);
    c->groups = fb_get_i64(a, GF_CONV_GROUPS, 1);
    if (c->groups > GRAPH_FORMAT_MAX_CONV_PARAM ||
        c->groups < -GRAPH_FORMAT_MAX_CONV_PARAM)
        return conv_param_fail(d, where, "groups", c->groups);
    cdnn_status_t st = decode_spatial(d, a, GF_CONV_PRE_PADDING, "pre_padding",
                                      where, sd, c->pre_padding);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_spatial(d, a, GF_CONV_POST_PADDING, "post_padding", where,
                            sd, c->post_padding);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_spatial(d, a, GF_CONV_STRIDE, "stride", where, sd,
                            c->stride);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_spatial(d, a, GF_CONV_DILATION, "dilation", where, sd,
                            c->dilation);
    return st;
}

/* Pooling: each vector spatial_dims long or absent (its default); the
 * builder checks the values, decode_spatial their magnitude (below 2^20,
 * so the int32 fields hold them). */
static cdnn_status_t decode_pooling(const decoder_t *d, const fb_table_t *a,
                                    const char *where, cdnn_pooling_attr_t *p)
{
    int mode = fb_get_i8(a, GF_POOL_MODE, 0);
    if (mode < 0 || mode >= CDNN_POOLING_MODE_COUNT)
        return bad_enum(d, where, "pooling mode", mode, CDNN_POOLING_MODE_COUNT);
    int32_t sd = fb_get_i32(a, GF_POOL_SPATIAL_DIMS, 0);
    if (sd < 1 || sd > 3)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: spatial_dims is %d; pooling has 1, 2 or 3 "
                         "spatial dims", d->source, where, (int)sd);
    cdnn_pooling_attr_init(p, (cdnn_pooling_mode_t)mode, sd);
    p->ceil_mode = fb_get_bool(a, GF_POOL_CEIL_MODE, 0) ? 1 : 0;
    p->count_include_pad = fb_get_bool(a, GF_POOL_COUNT_INCLUDE_PAD, 0) ? 1 : 0;
    int64_t window[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
    cdnn_status_t st = decode_spatial(d, a, GF_POOL_WINDOW, "window", where, sd, window);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_spatial(d, a, GF_POOL_STRIDE, "stride", where, sd, stride);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_spatial(d, a, GF_POOL_DILATION, "dilation", where, sd, dilation);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_spatial(d, a, GF_POOL_PRE_PADDING, "pre_padding", where, sd,
                            p->pre_padding);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_spatial(d, a, GF_POOL_POST_PADDING, "post_padding", where, sd,
                            p->post_padding);
    for (int i = 0; i < sd; i++) {
        p->window[i] = (int32_t)window[i];
        p->stride[i] = (int32_t)stride[i];
        p->dilation[i] = (int32_t)dilation[i];
    }
    return st;
}

static cdnn_status_t decode_resize(const decoder_t *d, const fb_table_t *a,
                                   const char *where, cdnn_resize_attr_t *r)
{
    int mode = fb_get_i8(a, GF_RESIZE_MODE, 0);
    int coord = fb_get_i8(a, GF_RESIZE_COORDINATE, 0);
    int nearest = fb_get_i8(a, GF_RESIZE_NEAREST, 0);
    if (mode < 0 || mode >= CDNN_RESIZE_MODE_COUNT)
        return bad_enum(d, where, "resize mode", mode, CDNN_RESIZE_MODE_COUNT);
    if (coord < 0 || coord >= CDNN_RESIZE_COORDINATE_COUNT)
        return bad_enum(d, where, "resize coordinate", coord,
                        CDNN_RESIZE_COORDINATE_COUNT);
    if (nearest < 0 || nearest >= CDNN_RESIZE_NEAREST_COUNT)
        return bad_enum(d, where, "resize nearest", nearest, CDNN_RESIZE_NEAREST_COUNT);
    r->mode = mode;
    r->coordinate = coord;
    r->nearest = nearest;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t decode_pointwise(const decoder_t *d, const fb_table_t *a,
                                      const char *where,
                                      cdnn_pointwise_attr_t *p)
{
    int mode = fb_get_i8(a, GF_PW_MODE, 0);
    if (mode < 0 || mode >= CDNN_PW_MODE_COUNT)
        return bad_enum(d, where, "pointwise mode", mode, CDNN_PW_MODE_COUNT);
    cdnn_pointwise_attr_init(p, (cdnn_pointwise_mode_t)mode);
    p->relu_lower_clip = fb_get_f64(a, GF_PW_RELU_LOWER, 0);
    p->relu_upper_clip = fb_get_f64(a, GF_PW_RELU_UPPER, INFINITY);
    p->relu_lower_clip_slope = fb_get_f64(a, GF_PW_RELU_SLOPE, 0);
    p->elu_alpha = fb_get_f64(a, GF_PW_ELU_ALPHA, 1);
    p->softplus_beta = fb_get_f64(a, GF_PW_SOFTPLUS_BETA, 1);
    p->swish_beta = fb_get_f64(a, GF_PW_SWISH_BETA, 1);
    return CDNN_STATUS_SUCCESS;
}

/* The builder checks the values; here only what int32 cannot hold (a step
 * beyond it) is turned into one it refuses (0). */
static cdnn_status_t decode_slice(const decoder_t *d, const fb_table_t *a,
                                  const char *where, cdnn_slice_attr_t *s)
{
    int64_t step[CDNN_MAX_RANK];
    int n_start, n_step;
    cdnn_status_t st = get_i64s(d, a, GF_SLICE_START, where, "start", s->start,
                                CDNN_MAX_RANK, &n_start);
    if (st == CDNN_STATUS_SUCCESS)
        st = get_i64s(d, a, GF_SLICE_STEP, where, "step", step, CDNN_MAX_RANK, &n_step);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (n_step >= 0 && n_step != n_start)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: %d steps for %d starts; give one per dim, or none "
                         "for steps of 1", d->source, where, n_step,
                         n_start < 0 ? 0 : n_start);
    s->rank = n_start < 0 ? 0 : n_start;
    for (int i = 0; i < s->rank; i++)
        s->step[i] = n_step < 0 ? 1 : step[i] < 1 || step[i] > INT32_MAX ? 0
                                                                         : (int32_t)step[i];
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t decode_attr_value(const decoder_t *d, const fb_table_t *a,
                                       int type, const char *where,
                                       cdnn_node_attr_t *attr)
{
    switch (type) {
    case OP_ATTR_CONV: return decode_conv(d, a, where, &attr->conv);
    case OP_ATTR_POINTWISE: return decode_pointwise(d, a, where, &attr->pointwise);
    case OP_ATTR_REDUCTION: {
        int mode = fb_get_i8(a, 0, 0);
        if (mode < 0 || mode >= CDNN_REDUCE_MODE_COUNT)
            return bad_enum(d, where, "reduction mode", mode,
                            CDNN_REDUCE_MODE_COUNT);
        attr->reduction = (cdnn_reduction_mode_t)mode;
        return CDNN_STATUS_SUCCESS;
    }
    case OP_ATTR_NORM:
        attr->epsilon = fb_get_f64(a, 0, 0);
        return CDNN_STATUS_SUCCESS;
    case OP_ATTR_SDPA:
        attr->sdpa.scale = fb_get_f64(a, GF_SDPA_SCALE, 0);
        attr->sdpa.causal = fb_get_bool(a, GF_SDPA_CAUSAL, 0) ? 1 : 0;
        return CDNN_STATUS_SUCCESS;
    case OP_ATTR_AXIS: /* the builder checks its range */
        attr->axis = fb_get_i32(a, GF_AXIS, -1);
        return CDNN_STATUS_SUCCESS;
    case OP_ATTR_TRANSPOSE: { /* the builder checks it is a permutation */
        int64_t perm[CDNN_MAX_RANK];
        int n;
        cdnn_status_t st = get_i64s(d, a, GF_TRANSPOSE_PERM, where, "perm", perm,
                                    CDNN_MAX_RANK, &n);
        if (st != CDNN_STATUS_SUCCESS)
            return st;
        attr->transpose.rank = n < 0 ? 0 : n;
        for (int i = 0; i < n; i++)
            attr->transpose.perm[i] = perm[i] < -1 || perm[i] > CDNN_MAX_RANK
                                          ? -1 : (int32_t)perm[i];
        return CDNN_STATUS_SUCCESS;
    }
    case OP_ATTR_SLICE: return decode_slice(d, a, where, &attr->slice);
    case OP_ATTR_PAD: { /* the builder checks the values */
        int n;
        cdnn_status_t st = get_i64s(d, a, GF_PAD_PRE, where, "pre", attr->pad.pre,
                                    CDNN_MAX_RANK, &n);
        attr->pad.rank = n < 0 ? 0 : n;
        attr->pad.value = fb_get_f64(a, GF_PAD_VALUE, 0);
        return st;
    }
    case OP_ATTR_TOPK: /* the builder checks the values */
        attr->topk.axis = fb_get_i32(a, GF_TOPK_AXIS, -1);
        attr->topk.k = fb_get_i64(a, GF_TOPK_K, 1);
        attr->topk.largest = fb_get_bool(a, GF_TOPK_LARGEST, 1) ? 1 : 0;
        return CDNN_STATUS_SUCCESS;
    case OP_ATTR_POOLING: return decode_pooling(d, a, where, &attr->pooling);
    case OP_ATTR_RESIZE: return decode_resize(d, a, where, &attr->resize);
    case OP_ATTR_MOMENTUM: /* the builder checks the value */
        attr->momentum = fb_get_f64(a, GF_MOMENTUM, 0.1);
        return CDNN_STATUS_SUCCESS;
    default: return CDNN_STATUS_SUCCESS;
    }
}

static cdnn_status_t decode_attr(const decoder_t *d, const fb_table_t *t,
                                 cdnn_op_t op, const char *where,
                                 cdnn_node_attr_t *attr)
{
    int want = op_desc(op)->attr;
    int have = fb_get_u8(t, GF_NODE_ATTR_TYPE, 0);
    memset(attr, 0, sizeof *attr);
    if (have >= OP_ATTR_KIND_COUNT)
        return bad_enum(d, where, "attr_type", have, OP_ATTR_KIND_COUNT);
    if (have != want)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: the attributes are %s, but %s takes %s",
                         d->source, where, op_attr_schema_name(have),
                         cdnn_op_name(op), op_attr_schema_name(want));
    if (want == OP_ATTR_NONE)
        return CDNN_STATUS_SUCCESS;
    fb_table_t a = fb_get_table(t, GF_NODE_ATTR);
    if (!a.buf)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s, %s: attr_type is %s but the attributes are "
                         "missing", d->source, where, op_attr_schema_name(have));
    return decode_attr_value(d, &a, want, where, attr);
}

static cdnn_status_t decode_node(const decoder_t *d, const fb_table_t *t,
                                 uint32_t i)
{
    char where[160];
    snprintf(where, sizeof where, "nodes[%u]", i);
    const char *name;
    cdnn_status_t st = get_name(d, t, GF_NODE_NAME, where, &name);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int op = fb_get_i8(t, GF_NODE_OP, 0);
    if (op < 0 || op >= CDNN_OP_COUNT)
        return bad_enum(d, where, "op", op, CDNN_OP_COUNT);
    if (name)
        snprintf(where, sizeof where, "nodes[%u] '%.100s' (%s)", i, name,
                 cdnn_op_name((cdnn_op_t)op));
    else
        snprintf(where, sizeof where, "nodes[%u] (%s)", i,
                 cdnn_op_name((cdnn_op_t)op));
    int64_t in[CDNN_NODE_MAX_INPUTS], out[CDNN_NODE_MAX_OUTPUTS];
    for (int s = 0; s < CDNN_NODE_MAX_INPUTS; s++)
        in[s] = CDNN_UID_NONE;
    for (int s = 0; s < CDNN_NODE_MAX_OUTPUTS; s++)
        out[s] = CDNN_UID_NONE;
    const op_desc_t *desc = op_desc((cdnn_op_t)op);
    cdnn_node_attr_t attr;
    st = decode_ports(d, t, GF_NODE_INPUTS, "input", desc->inputs.count, where, in);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_ports(d, t, GF_NODE_OUTPUTS, "output", desc->outputs.count,
                          where, out);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_attr(d, t, (cdnn_op_t)op, where, &attr);
    if (st == CDNN_STATUS_SUCCESS)
        st = rewrap(d, where, graph_add_node(d->g, (cdnn_op_t)op, name, in, out, &attr));
    return st;
}

static cdnn_status_t decode_types(const decoder_t *d, const fb_table_t *root)
{
    int types[3] = {fb_get_i8(root, GF_GRAPH_IO_TYPE, CDNN_DATA_TYPE_F32),
                    fb_get_i8(root, GF_GRAPH_INTERMEDIATE_TYPE, CDNN_DATA_TYPE_F32),
                    fb_get_i8(root, GF_GRAPH_COMPUTE_TYPE, CDNN_DATA_TYPE_F32)};
    static const char *const what[3] = {"io_type", "intermediate_type",
                                        "compute_type"};
    for (int i = 0; i < 3; i++)
        if (types[i] < 0 || types[i] >= CDNN_DATA_TYPE_COUNT)
            return bad_enum(d, "graph", what[i], types[i], CDNN_DATA_TYPE_COUNT);
    return rewrap(d, "graph",
                  cdnn_graph_set_data_types(d->g, (cdnn_data_type_t)types[0],
                                            (cdnn_data_type_t)types[1],
                                            (cdnn_data_type_t)types[2]));
}

static cdnn_status_t decode_graph(const decoder_t *d, const fb_table_t *root)
{
    const char *name;
    cdnn_status_t st = get_name(d, root, GF_GRAPH_NAME, "graph", &name);
    if (st == CDNN_STATUS_SUCCESS && name)
        st = cdnn_graph_set_name(d->g, name);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_types(d, root);
    uint32_t nt = 0, nn = 0;
    fb_get_vector(root, GF_GRAPH_TENSORS, &nt);
    fb_get_vector(root, GF_GRAPH_NODES, &nn);
    if (st == CDNN_STATUS_SUCCESS &&
        (nt > GRAPH_FORMAT_MAX_ITEMS || nn > GRAPH_FORMAT_MAX_ITEMS))
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s: %u tensors and %u nodes; a saved graph holds at "
                         "most %d of each", d->source, nt, nn,
                         GRAPH_FORMAT_MAX_ITEMS);
    for (uint32_t i = 0; st == CDNN_STATUS_SUCCESS && i < nt; i++) {
        fb_table_t t = fb_vector_table(root, GF_GRAPH_TENSORS, i);
        st = decode_tensor(d, &t, i);
    }
    for (uint32_t i = 0; st == CDNN_STATUS_SUCCESS && i < nn; i++) {
        fb_table_t t = fb_vector_table(root, GF_GRAPH_NODES, i);
        st = decode_node(d, &t, i);
    }
    return st;
}

/* Before any field is interpreted: a digest present must match, and from
 * format 1.1 on binary graphs must carry one.  (Graphs saved as 1.0 have
 * none and still load; their bytes are then only as good as validation.) */
static cdnn_status_t check_digest(const decoder_t *d, const uint8_t *bytes,
                                  size_t size)
{
    fb_table_t root = fb_root(bytes, size);
    uint32_t n = 0;
    const uint8_t *stored = fb_get_vector(&root, GF_GRAPH_SHA256, &n);
    uint8_t digest[32];
    if (!stored)
        return CDNN_STATUS_SUCCESS;
    if (n != 32)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "%s: the graph is damaged: its "
                         "SHA-256 holds %u bytes, not 32", d->source, n);
    cdnn_status_t st = graph_digest(bytes, size, stored, digest);
    if (st == CDNN_STATUS_SUCCESS && memcmp(digest, stored, sizeof digest) != 0)
        st = cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "%s: the graph is damaged: its "
                       "SHA-256 does not match its contents (the bytes were altered "
                       "or truncated after saving)", d->source);
    return st;
}

static cdnn_status_t check_version(decoder_t *d, const uint8_t *bytes,
                                   size_t size)
{
    char why[256];
    if (fb_verify(bytes, size, GRAPH_IDENTIFIER, &seal_desc, why,
                  sizeof why) != 0)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s: the graph bytes are damaged: %s", d->source, why);
    cdnn_status_t st = d->sealed ? check_digest(d, bytes, size) : CDNN_STATUS_SUCCESS;
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    fb_table_t root = fb_root(bytes, size);
    d->major = fb_get_u16(&root, GF_GRAPH_MAJOR, 0);
    d->minor = fb_get_u16(&root, GF_GRAPH_MINOR, 0);
    if (d->sealed && (d->major > 1 || d->minor >= 1) && !fb_has(&root, GF_GRAPH_SHA256))
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                         "%s: the graph is damaged: it says graph format %u.%u, "
                         "which always carries a SHA-256, and has none",
                         d->source, d->major, d->minor);
    if (d->major > GRAPH_FORMAT_MAJOR)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                         "%s: graph format %u.%u is newer than this cdnn reads "
                         "(%d.x); load it with a newer cdnn",
                         d->source, d->major, d->minor, GRAPH_FORMAT_MAJOR);
    if (d->major < GRAPH_FORMAT_MAJOR)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                         "%s: graph format %u.%u is not one this cdnn reads "
                         "(%d.x); format_major is missing or 0",
                         d->source, d->major, d->minor, GRAPH_FORMAT_MAJOR);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t decode(const uint8_t *bytes, size_t size, const char *source,
                            int sealed, cdnn_graph_t **out)
{
    CDNN_CHECK_ARG(out);
    CDNN_CHECK_ARG(source);
    *out = NULL;
    decoder_t d = {source, sealed, 0, 0, NULL};
    cdnn_status_t st = blob_expect(bytes, size, BLOB_GRAPH, source);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_version(&d, bytes, size);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    char why[256];
    /* A newer minor may use a union member this build has never heard of;
     * that is a feature it lacks, not damage. */
    if (fb_verify(bytes, size, GRAPH_IDENTIFIER, &graph_format_desc, why,
                  sizeof why) != 0)
        return d.minor > GRAPH_FORMAT_MINOR
                   ? cdnn_fail(CDNN_STATUS_NOT_SUPPORTED,
                               "%s: graph format %u.%u is newer than this cdnn "
                               "(%d.%d) and holds what it cannot read (%s); load "
                               "it with a newer cdnn", source, d.major, d.minor,
                               GRAPH_FORMAT_MAJOR, GRAPH_FORMAT_MINOR, why)
                   : cdnn_fail(CDNN_STATUS_CORRUPT_DATA,
                               "%s: the graph bytes are damaged: %s", source, why);
    st = cdnn_graph_create(&d.g);
    fb_table_t root = fb_root(bytes, size);
    if (st == CDNN_STATUS_SUCCESS)
        st = decode_graph(&d, &root);
    if (st != CDNN_STATUS_SUCCESS) {
        cdnn_graph_destroy(d.g);
        return st;
    }
    d.g->newer_format_minor = d.minor > GRAPH_FORMAT_MINOR ? d.minor : 0;
    *out = d.g;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t graph_format_decode_from(const uint8_t *bytes, size_t size,
                                       const char *source, cdnn_graph_t **out)
{
    return decode(bytes, size, source, 0, out);
}

cdnn_status_t graph_format_decode(const uint8_t *bytes, size_t size,
                                  cdnn_graph_t **out)
{
    return decode(bytes, size, "loading a graph", 1, out);
}
