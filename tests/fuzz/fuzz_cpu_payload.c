/*
 * fuzz_cpu_payload -- the CPU provider's payload decoder and plan restore,
 * through cdnn_plan_load: the input is a CPU payload (schema/cpu_payload
 * .fbs), sealed in a valid plan body and envelope for the engine the
 * payload names (fuzz_seal.h).  The seed corpus holds payloads cut out of
 * real plans of every CPU engine.
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

/* The engine the payload names, when it has one that reads as a string;
 * else cpu:reference, so that the payload still reaches the decoder. */
static const char *engine_of(const uint8_t *data, size_t size, char *buf, size_t cap)
{
    static const fb_field_desc_t fields[3] = {{FB_SCALAR, 2}, {FB_SCALAR, 2},
                                              {FB_STRING}};
    static const fb_table_desc_t desc = {"CpuPayload", 3, fields};
    if (fb_verify(data, size, NULL, &desc, NULL, 0) == 0) {
        fb_table_t root = fb_root(data, size);
        uint32_t len = 0;
        const char *s = fb_get_string(&root, 2, &len);
        if (s && len < cap && strlen(s) == len) {
            memcpy(buf, s, len + 1);
            return buf;
        }
    }
    return "cpu:reference";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[64];
    size_t body_size = 0, plan_size = 0;
    cdnn_graph_t *g = NULL;
    uint8_t *body = seal_cpu_body(engine_of(data, size, name, sizeof name), data,
                                  size, &body_size);
    uint8_t *plan = seal_plan(body, body_size, &plan_size);
    if (cdnn_plan_load(&g, handle, plan, plan_size) == CDNN_STATUS_SUCCESS) {
        cdnn_status_t st;
        size_t n = 0;
        uint8_t *saved = fuzz_save(g, CDNN_SAVE_PLAN, &n, &st);
        if (!saved)
            fuzz_die("a loaded plan does not save");
        fuzz_same(plan, plan_size, saved, n, "a loaded plan's saved bytes");
        free(saved);
    } else {
        fuzz_expect_null(g, "cdnn_plan_load");
    }
    cdnn_graph_destroy(g);
    free(plan);
    free(body);
    return 0;
}
