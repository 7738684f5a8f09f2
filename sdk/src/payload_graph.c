#include <cdnn_sdk/payload_graph.h>

#include <cdnn_sdk/error.h>

cdnn_status_t sdk_payload_graph_encode(const cdnn_provider_host_t *host,
                                       const cdnn_graph_view_t *g,
                                       sdk_payload_graph_t *out)
{
    *out = (sdk_payload_graph_t){.host = host};
    cdnn_status_t st = host->graph_encode(g, &out->bytes, &out->size);
    if (st != CDNN_STATUS_SUCCESS)
        return sdk_fail(st, "encoding the graph for the plan payload: %s",
                        host->last_error());
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t sdk_payload_graph_decode(const cdnn_provider_host_t *host,
                                       const uint8_t *bytes, size_t size,
                                       sdk_payload_graph_t *out)
{
    *out = (sdk_payload_graph_t){.host = host};
    cdnn_status_t st = host->graph_decode(bytes, size, &out->view, &out->token);
    if (st != CDNN_STATUS_SUCCESS)
        return sdk_fail(st, "the payload's graph does not load: %s", host->last_error());
    return CDNN_STATUS_SUCCESS;
}

void sdk_payload_graph_release(sdk_payload_graph_t *g)
{
    if (g->bytes)
        g->host->release_bytes(g->bytes);
    if (g->token)
        g->host->release_graph(g->token);
    *g = (sdk_payload_graph_t){0};
}
