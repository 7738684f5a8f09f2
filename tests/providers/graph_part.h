/*
 * graph_part.h -- the graph a test provider's payload carries.
 *
 * cdnn loads a saved plan only if the provider can say which graph the
 * restored context runs (context_graph, provider ABI 1.2): the plan's
 * tensor table and content key are checked against it.  The test providers
 * therefore end their payloads with the graph, in cdnn's graph format
 * (the host's graph_encode), after their own fixed fields, and check those
 * fields against the graph when they restore -- what any provider with a
 * compact payload of its own would do.
 */
#ifndef CDNN_TEST_GRAPH_PART_H
#define CDNN_TEST_GRAPH_PART_H

#include <cdnn/provider.h>

typedef struct graph_part {
    const cdnn_provider_host_t *host;
    uint8_t *bytes; /* encoded at creation (host's; release_bytes) */
    size_t size;
    const cdnn_graph_view_t *view; /* decoded at restore (host's token) */
    void *token;
} graph_part_t;

/* At creation: the bytes a later save appends. */
static inline cdnn_status_t graph_part_encode(const cdnn_provider_host_t *host,
                                              const cdnn_graph_view_t *g,
                                              graph_part_t *part)
{
    *part = (graph_part_t){.host = host};
    return host->graph_encode(g, &part->bytes, &part->size);
}

/* At restore: the graph after the payload's fixed fields (hostile bytes;
 * the host verifies and validates them). */
static inline cdnn_status_t graph_part_decode(const cdnn_provider_host_t *host,
                                              const uint8_t *bytes, size_t size,
                                              graph_part_t *part)
{
    *part = (graph_part_t){.host = host};
    return host->graph_decode(bytes, size, &part->view, &part->token);
}

static inline void graph_part_release(graph_part_t *part)
{
    if (part->bytes)
        part->host->release_bytes(part->bytes);
    if (part->token)
        part->host->release_graph(part->token);
    *part = (graph_part_t){0};
}

#endif
