/*
 * graph_json.h -- the JSON form of a graph.
 *
 * The JSON form IS the FlatBuffers JSON form of schema/graph.fbs: what
 * `flatc --json --strict-json --raw-binary schema/graph.fbs -- F.cdg`
 * prints, and what `flatc -b schema/graph.fbs F.json` accepts.  Enums are
 * their names ("F32", "ConvFwd"), the attribute union is "attr_type" plus
 * "attr", ports are {"slot": 0, "uid": 1}, absent fields are left out.
 *
 * Reading also takes what flatc writes that is not strict JSON (bare inf,
 * -inf and nan), integers for enums and booleans, and numbers given as
 * strings ("inf", "1e-5").  Writing puts non-finite doubles in strings,
 * which flatc reads too.
 */
#ifndef CDNN_FORMAT_GRAPH_JSON_H
#define CDNN_FORMAT_GRAPH_JSON_H

#include <stddef.h>

#include <cdnn/cdnn.h>

/* Largest JSON text read: far above any real graph, and it bounds the
 * memory jansson's tree of a hostile text can take. */
#define GRAPH_JSON_MAX_BYTES ((size_t)64 << 20)

/**
 * The graph's declarations as JSON (malloc'd, NUL-terminated, ending in a
 * newline; free it).  Fields in schema order, 2-space indent; the text is a
 * pure function of the graph's saved bytes (graph_format_encode).
 */
cdnn_status_t graph_json_encode(const cdnn_graph_t *g, char **json);

/**
 * Read text[0, n) as a graph.  Syntax errors name the line and column;
 * other errors the JSON path ("nodes[2].attr.stride[1]").  The graph is
 * new and unvalidated, exactly as graph_format_decode would give it.
 */
cdnn_status_t graph_json_decode(const char *text, size_t n, cdnn_graph_t **out);

#endif
