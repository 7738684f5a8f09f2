/*
 * host.c -- what cdnn offers its providers: logging, and graph bytes in the
 * one graph format for payloads that must carry their graph.
 */
#include <stdlib.h>

#include "core/error.h"
#include "core/log.h"
#include "engine/registry.h"
#include "format/graph_format.h"
#include "graph/graph.h"

static void host_log(cdnn_log_level_t level, const char *message)
{
    cdnn_log_line(level, message);
}

static cdnn_status_t host_graph_encode(const cdnn_graph_view_t *view, uint8_t **bytes,
                                       size_t *size)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = graph_from_view(view, &g);
    if (st == CDNN_STATUS_SUCCESS)
        st = graph_format_encode(g, bytes, size);
    cdnn_graph_destroy(g);
    return st;
}

static void host_release_bytes(uint8_t *bytes)
{
    free(bytes);
}

static cdnn_status_t host_graph_decode(const uint8_t *bytes, size_t size,
                                       const cdnn_graph_view_t **view, void **token)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = graph_format_decode(bytes, size, &g);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_validate(g);
    if (st != CDNN_STATUS_SUCCESS) {
        cdnn_graph_destroy(g);
        return st;
    }
    *view = &g->view;
    *token = g;
    return CDNN_STATUS_SUCCESS;
}

static void host_release_graph(void *token)
{
    cdnn_graph_destroy(token);
}

const cdnn_provider_host_t provider_host = {
    .struct_size = sizeof(cdnn_provider_host_t),
    .log = host_log,
    .graph_encode = host_graph_encode,
    .release_bytes = host_release_bytes,
    .graph_decode = host_graph_decode,
    .release_graph = host_release_graph,
    .last_error = cdnn_last_error,
};
