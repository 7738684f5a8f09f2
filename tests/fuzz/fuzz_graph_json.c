/*
 * fuzz_graph_json -- cdnn_graph_from_json on arbitrary text (jansson's
 * parser, the schema walk and the binary graph loader behind it), then the
 * round-trip oracle on whatever reads.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cdnn_graph_t *g = NULL;
    if (cdnn_graph_from_json(&g, (const char *)data, size) != CDNN_STATUS_SUCCESS) {
        fuzz_expect_null(g, "cdnn_graph_from_json");
        return 0;
    }
    fuzz_graph_roundtrip(g);
    cdnn_graph_destroy(g);
    return 0;
}
