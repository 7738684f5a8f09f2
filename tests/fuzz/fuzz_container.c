/*
 * fuzz_container -- cdnn_graph_load with a CPU handle: a container's graph
 * and plan both load (the plan through the CPU provider's payload
 * decoder), and cdnn_blob_contents / cdnn_blob_inspect on the same bytes.
 * The handle is made once: provider loading per input would dominate.
 */
#include "fuzz_common.h"

static cdnn_handle_t *handle;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (cdnn_handle_create(&handle, "cpu") != CDNN_STATUS_SUCCESS)
        fuzz_die("no CPU handle");
    return 0;
}

/* A graph loaded from a container with a plan re-saves the same plan
 * bytes as cdnn_plan_load of the container gives (rule 1). */
static void check_plan(cdnn_graph_t *g, const uint8_t *data, size_t size)
{
    cdnn_graph_t *p = NULL;
    cdnn_status_t st;
    size_t n = 0, m = 0;
    if (cdnn_plan_load(&p, handle, data, size) != CDNN_STATUS_SUCCESS)
        fuzz_die("a container loads with its plan, but its plan alone does not");
    uint8_t *a = fuzz_save(g, CDNN_SAVE_PLAN, &n, &st);
    uint8_t *b = fuzz_save(p, CDNN_SAVE_PLAN, &m, &st);
    if (!a || !b)
        fuzz_die("a loaded plan does not save");
    fuzz_same(a, n, b, m, "plan part via graph load and via plan load");
    free(a);
    free(b);
    a = fuzz_save(g, CDNN_SAVE_GRAPH_AND_PLAN, &n, &st);
    if (!a)
        fuzz_die("a graph loaded from a container does not save as one");
    cdnn_graph_destroy(p);
    p = NULL;
    if (cdnn_graph_load(&p, handle, a, n) != CDNN_STATUS_SUCCESS)
        fuzz_die("a re-saved container does not load again");
    cdnn_graph_destroy(p);
    free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cdnn_graph_t *g = NULL;
    cdnn_blob_info_t *info = NULL;
    uint32_t flags = 0;
    cdnn_status_t inspected = cdnn_blob_inspect(data, size, &info);
    cdnn_blob_info_destroy(info);
    cdnn_status_t contents = cdnn_blob_contents(data, size, &flags);
    if (cdnn_graph_load(&g, handle, data, size) != CDNN_STATUS_SUCCESS) {
        fuzz_expect_null(g, "cdnn_graph_load");
        return 0;
    }
    if (contents != CDNN_STATUS_SUCCESS || inspected != CDNN_STATUS_SUCCESS)
        fuzz_die("bytes load but inspect (%d) or contents (%d) refuse them",
                 (int)inspected, (int)contents);
    if (flags & CDNN_BLOB_PLAN)
        check_plan(g, data, size);
    fuzz_graph_roundtrip(g);
    cdnn_graph_destroy(g);
    return 0;
}
