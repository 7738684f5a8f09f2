/*
 * fuzz_graph -- cdnn_graph_load without a handle: the graph loader (and a
 * container's structure and plan-part check), then the round-trip oracle
 * on whatever loads.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cdnn_graph_t *g = NULL;
    uint32_t flags = 0;
    if (cdnn_graph_load(&g, NULL, data, size) != CDNN_STATUS_SUCCESS) {
        fuzz_expect_null(g, "cdnn_graph_load");
        return 0;
    }
    /* What loads is a graph or a container, and says so. */
    if (cdnn_blob_contents(data, size, &flags) != CDNN_STATUS_SUCCESS ||
        !(flags & CDNN_BLOB_GRAPH))
        fuzz_die("loaded bytes are not reported as holding a graph");
    fuzz_graph_roundtrip(g);
    cdnn_graph_destroy(g);
    return 0;
}
