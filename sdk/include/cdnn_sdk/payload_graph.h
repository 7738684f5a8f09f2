/*
 * payload_graph.h -- the graph a plan payload carries.
 *
 * cdnn loads a saved plan only if the provider can say which graph the
 * restored context runs (context_graph): the plan's tensor table and
 * content key are checked against it.  A provider's payload therefore
 * carries the graph, in cdnn's graph format through the host's
 * graph_encode, and a restored context keeps the decoded graph for as long
 * as it lives.  This is that pair of steps, once for every provider.
 */
#ifndef CDNN_SDK_PAYLOAD_GRAPH_H
#define CDNN_SDK_PAYLOAD_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>

typedef struct sdk_payload_graph {
    const cdnn_provider_host_t *host;
    uint8_t *bytes; /* encoded, for a payload being made (the host's) */
    size_t size;
    const cdnn_graph_view_t *view; /* decoded from a payload (the host's) */
    void *token;
} sdk_payload_graph_t;

/** At creation: g as graph bytes, for the payload a later save writes. */
cdnn_status_t sdk_payload_graph_encode(const cdnn_provider_host_t *host,
                                       const cdnn_graph_view_t *g,
                                       sdk_payload_graph_t *out);

/** At restore: the graph in a payload's bytes, which are hostile (the host
 * verifies, checks the digest and validates them); the failure's message
 * keeps the host's words. */
cdnn_status_t sdk_payload_graph_decode(const cdnn_provider_host_t *host,
                                       const uint8_t *bytes, size_t size,
                                       sdk_payload_graph_t *out);

/** Give back what encode or decode took; a zeroed one is left alone. */
void sdk_payload_graph_release(sdk_payload_graph_t *g);

#endif
