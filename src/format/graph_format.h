/*
 * graph_format.h -- the graph artifact (schema/graph.fbs, identifier
 * "CDGR"): a graph's declarations as FlatBuffers bytes, and back.
 *
 * Saving writes what the caller declared (not the validated view), so a
 * loaded graph validates exactly as the saved one did.  Loading rebuilds
 * the graph through the public builder calls, so every check the builder
 * makes on a caller's graph is made on loaded bytes too.
 */
#ifndef CDNN_FORMAT_GRAPH_FORMAT_H
#define CDNN_FORMAT_GRAPH_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>
#include <cdnn_sdk/flatbuf.h>

/* The newest format this build writes and knows.  It reads major 1 of any
 * minor: a newer minor only adds fields, which are ignored.  A graph is
 * written as the lowest minor that expresses it, never below 1.1 (the
 * digest): 1.2 only when it uses what 1.2 added (softmax, log-softmax,
 * reshape, transpose, concat, slice, argmax, argmin, pad, a layer-norm
 * without bias), 1.3 only when it uses what 1.3 added (docs/FORMATS.md,
 * "Graph format minors"; the op table's since_minor, relaxed_minor and
 * outputs_minor), so that a graph using nothing newer saves the bytes it
 * always did. */
#define GRAPH_FORMAT_MAJOR 1
#define GRAPH_FORMAT_MINOR 3
#define GRAPH_FORMAT_MINOR_LOWEST 1

/* Most tensors, and most nodes, a saved graph may hold.  The builder finds
 * tensors by a linear search, so loading n tensors costs n^2; the cap keeps
 * hostile bytes from turning that into minutes. */
#define GRAPH_FORMAT_MAX_ITEMS CDNN_MAX_TENSORS
_Static_assert(CDNN_MAX_TENSORS == CDNN_MAX_NODES,
               "GRAPH_FORMAT_MAX_ITEMS stands for both");

/* Bounds on the sizes loaded bytes may declare, so that the arithmetic of
 * shapes (element counts, spans in bytes, convolution output sizes) cannot
 * overflow int64 in validation or in an engine: a dim, a tensor's element
 * count and its span (in elements) at most 2^40, 2^52 and 2^52; a
 * convolution's padding, stride, dilation and groups at most 2^20 in
 * magnitude.  Real graphs are far below all of them. */
#define GRAPH_FORMAT_MAX_DIM ((int64_t)1 << 40)
#define GRAPH_FORMAT_MAX_ELEMENTS ((int64_t)1 << 52)
#define GRAPH_FORMAT_MAX_CONV_PARAM ((int64_t)1 << 20)

/* Field ids of schema/graph.fbs, shared by the binary and JSON forms. */
enum { GF_GRAPH_MAJOR, GF_GRAPH_MINOR, GF_GRAPH_NAME, GF_GRAPH_IO_TYPE,
       GF_GRAPH_INTERMEDIATE_TYPE, GF_GRAPH_COMPUTE_TYPE, GF_GRAPH_TENSORS,
       GF_GRAPH_NODES, GF_GRAPH_FIELDS };
/* Graph format 1.1 adds field 8, the binary form's SHA-256 (of the whole
 * buffer with these 32 bytes zeroed).  The JSON form does not carry it, so
 * it stays out of GF_GRAPH_FIELDS, which both forms share. */
#define GF_GRAPH_SHA256 GF_GRAPH_FIELDS
enum { GF_TENSOR_UID, GF_TENSOR_NAME, GF_TENSOR_DATA_TYPE, GF_TENSOR_DIMS,
       GF_TENSOR_STRIDES, GF_TENSOR_VIRTUAL, GF_TENSOR_ALIGNMENT,
       GF_TENSOR_SCALAR, GF_TENSOR_SCALAR_VALUE, GF_TENSOR_FIELDS };
enum { GF_NODE_NAME, GF_NODE_OP, GF_NODE_INPUTS, GF_NODE_OUTPUTS,
       GF_NODE_ATTR_TYPE, GF_NODE_ATTR, GF_NODE_FIELDS };
enum { GF_CONV_SPATIAL_DIMS, GF_CONV_PRE_PADDING, GF_CONV_POST_PADDING,
       GF_CONV_STRIDE, GF_CONV_DILATION, GF_CONV_GROUPS, GF_CONV_FIELDS };
enum { GF_PW_MODE, GF_PW_RELU_LOWER, GF_PW_RELU_UPPER, GF_PW_RELU_SLOPE,
       GF_PW_ELU_ALPHA, GF_PW_SOFTPLUS_BETA, GF_PW_SWISH_BETA, GF_PW_FIELDS };
enum { GF_SDPA_SCALE, GF_SDPA_CAUSAL, GF_SDPA_FIELDS };
enum { GF_AXIS, GF_AXIS_FIELDS }; /* format 1.2; axis = -1 */
enum { GF_TRANSPOSE_PERM, GF_TRANSPOSE_FIELDS }; /* format 1.2 */
enum { GF_SLICE_START, GF_SLICE_STEP, GF_SLICE_FIELDS }; /* format 1.2 */
enum { GF_PAD_PRE, GF_PAD_VALUE, GF_PAD_FIELDS };         /* format 1.2 */
enum { GF_TOPK_AXIS, GF_TOPK_K, GF_TOPK_LARGEST, GF_TOPK_FIELDS }; /* format 1.3 */
enum { GF_POOL_MODE, GF_POOL_SPATIAL_DIMS, GF_POOL_WINDOW, GF_POOL_STRIDE,
       GF_POOL_PRE_PADDING, GF_POOL_POST_PADDING, GF_POOL_DILATION,
       GF_POOL_CEIL_MODE, GF_POOL_COUNT_INCLUDE_PAD, GF_POOL_FIELDS }; /* format 1.3 */
enum { GF_RESIZE_MODE, GF_RESIZE_COORDINATE, GF_RESIZE_NEAREST,
       GF_RESIZE_FIELDS }; /* format 1.3 */
enum { GF_MOMENTUM, GF_MOMENTUM_FIELDS }; /* format 1.3; momentum = 0.1 */

/* NodeAttr union members (0: none) are the op table's attribute kinds,
 * op_attr_kind_t (graph/ops.h), which are numbered as the union is. */

/* Port is a struct { slot: ubyte; uid: long; }: 16 bytes, aligned 8. */
#define GF_PORT_SIZE 16
#define GF_PORT_ALIGN 8

/** Verifier descriptor of the Graph table, e.g. for a container's
 * nested_flatbuffer field. */
extern const fb_table_desc_t graph_format_desc;

/**
 * Encode the graph's declarations as graph bytes (malloc'd; free them).
 * The bytes are a pure function of the declarations: tensors and nodes in
 * declaration order, ports in slot order, absent ports, packed strides and
 * default values left out.
 */
cdnn_status_t graph_format_encode(const cdnn_graph_t *g, uint8_t **bytes,
                                  size_t *size);

/**
 * Fill in the SHA-256 of graph bytes whose sha256 field (32 bytes, any
 * content) is present: the digest of the whole buffer with those bytes
 * zeroed.  The encoder's last step; also how tests write sealed bytes of
 * their own.
 */
cdnn_status_t graph_format_seal(uint8_t *bytes, size_t size);

/**
 * Decode graph bytes into a new, unvalidated graph: identifier, the
 * digest (format 1.1 on), version, structure, then every tensor and node
 * through the builder.  A plan or a
 * container fails with BAD_PARAM naming both kinds; damaged bytes fail with
 * CORRUPT_DATA, a newer major with NOT_SUPPORTED.
 */
cdnn_status_t graph_format_decode(const uint8_t *bytes, size_t size,
                                  cdnn_graph_t **out);

/**
 * As graph_format_decode, for bytes made from another form (the JSON
 * reader), which carry no digest: `source` starts every message ("graph
 * JSON").
 */
cdnn_status_t graph_format_decode_from(const uint8_t *bytes, size_t size,
                                       const char *source, cdnn_graph_t **out);

#endif
