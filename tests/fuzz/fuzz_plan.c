/*
 * fuzz_plan -- cdnn_plan_load on a CPU handle, and cdnn_blob_inspect.
 *
 * Inputs that carry the plan (or container) identifier are loaded as they
 * are: identifier, structure, version, digest and canonical-envelope
 * checks.  Any other input is taken as a plan *body* and sealed in a valid
 * envelope first (fuzz_seal.h), which is how the fuzzer reaches the body
 * decoder (engine, device, tensors, workspace) and the CPU payload behind
 * it.  The seed corpus holds real plans, real containers and real bodies.
 */
#include "fuzz_seal.h"

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

static int has_identifier(const uint8_t *data, size_t size)
{
    return size >= 8 && (memcmp(data + 4, "CDPL", 4) == 0 ||
                         memcmp(data + 4, "CDGP", 4) == 0);
}

/* Inspect agrees with the loader, and what loaded saves, reloads and
 * re-saves byte for byte (for a bare plan: the bytes it came from). */
static void check_loaded(cdnn_graph_t *g, const uint8_t *bytes, size_t size)
{
    cdnn_blob_info_t *info = NULL;
    cdnn_graph_t *again = NULL;
    cdnn_status_t st;
    size_t n = 0, m = 0;
    int32_t count = -1;
    if (cdnn_blob_inspect(bytes, size, &info) != CDNN_STATUS_SUCCESS ||
        !(info->contents & CDNN_BLOB_PLAN) || !info->plan_verified)
        fuzz_die("a plan loads but cdnn_blob_inspect does not verify it");
    if (cdnn_graph_io_tensors(g, NULL, 0, &count) != CDNN_STATUS_SUCCESS ||
        count != info->tensor_count)
        fuzz_die("io tensors %d, inspect says %d", count, info->tensor_count);
    cdnn_blob_info_destroy(info);
    uint8_t *saved = fuzz_save(g, CDNN_SAVE_PLAN, &n, &st);
    if (!saved)
        fuzz_die("a loaded plan does not save (status %d)", (int)st);
    if (memcmp(bytes + 4, "CDPL", 4) == 0)
        fuzz_same(bytes, size, saved, n, "a loaded plan's saved bytes");
    if (cdnn_plan_load(&again, handle, saved, n) != CDNN_STATUS_SUCCESS)
        fuzz_die("a re-saved plan does not load");
    uint8_t *resaved = fuzz_save(again, CDNN_SAVE_PLAN, &m, &st);
    if (!resaved)
        fuzz_die("a reloaded plan does not save");
    fuzz_same(saved, n, resaved, m, "plan save -> load -> save");
    if (cdnn_graph_save(g, CDNN_SAVE_GRAPH, NULL, 0, &n) != CDNN_STATUS_BAD_STATE)
        fuzz_die("a plan-only graph saved in GRAPH form");
    free(resaved);
    free(saved);
    cdnn_graph_destroy(again);
}

static void load(const uint8_t *bytes, size_t size)
{
    cdnn_graph_t *g = NULL;
    if (cdnn_plan_load(&g, handle, bytes, size) != CDNN_STATUS_SUCCESS) {
        fuzz_expect_null(g, "cdnn_plan_load");
        cdnn_blob_info_t *info = NULL;
        if (cdnn_blob_inspect(bytes, size, &info) == CDNN_STATUS_SUCCESS)
            cdnn_blob_info_destroy(info);
        return;
    }
    check_loaded(g, bytes, size);
    cdnn_graph_destroy(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (has_identifier(data, size)) {
        load(data, size);
        return 0;
    }
    size_t n = 0;
    uint8_t *plan = seal_plan(data, size, &n);
    load(plan, n);
    free(plan);
    return 0;
}
