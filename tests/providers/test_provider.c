/*
 * test_provider.c -- purpose-built providers for the loading tests, one
 * per TEST_PROVIDER_KIND_* definition:
 *
 *   abi_mismatch  stamped with ABI major 99: must be rejected at load
 *   duplicate     serves "cpu:reference" (the CPU provider's) and
 *                 "test:unique": the first must be dropped, the second kept
 *   failing_init  init fails with a message: must be skipped, logged
 *   extra         serves "test:extra", which declines every graph with a
 *                 reason of its own: proves the search path and that a
 *                 provider's words reach the caller
 */
#include <cdnn/provider.h>

#if defined(TEST_PROVIDER_KIND_abi_mismatch)
#define ABI_MAJOR 99u
#else
#define ABI_MAJOR CDNN_PROVIDER_ABI_MAJOR
#endif

static const char *message = "";

static cdnn_status_t test_init(const cdnn_provider_host_t *host, void **state)
{
    (void)host;
    *state = NULL;
#if defined(TEST_PROVIDER_KIND_failing_init)
    message = "the test provider refuses to start";
    return CDNN_STATUS_INTERNAL_ERROR;
#else
    return CDNN_STATUS_SUCCESS;
#endif
}

static void test_fini(void *state)
{
    (void)state;
}

#if defined(TEST_PROVIDER_KIND_duplicate)
static const char *const engine_names[] = {"cpu:reference", "test:unique"};
#elif defined(TEST_PROVIDER_KIND_extra)
static const char *const engine_names[] = {"test:extra"};
#else
static const char *const engine_names[] = {"test:never_loaded"};
#endif
#define ENGINE_COUNT ((int32_t)(sizeof engine_names / sizeof engine_names[0]))

static int32_t test_engine_count(void *state)
{
    (void)state;
    return ENGINE_COUNT;
}

static cdnn_status_t test_engine_info(void *state, int32_t engine,
                                      cdnn_provider_engine_t *info)
{
    (void)state;
    if (engine < 0 || engine >= ENGINE_COUNT)
        return CDNN_STATUS_BAD_PARAM;
    info->name = engine_names[engine];
    info->rank = 0;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t test_applicable(void *state, int32_t engine,
                                     const cdnn_device_view_t *device,
                                     const cdnn_graph_view_t *graph)
{
    (void)state;
    (void)engine;
    (void)device;
    (void)graph;
    message = "the test engine declines every graph (test provider)";
    return CDNN_STATUS_NOT_SUPPORTED;
}

static cdnn_status_t test_context_create(void *state, int32_t engine,
                                         const cdnn_device_view_t *device,
                                         const cdnn_graph_view_t *graph,
                                         const cdnn_knob_value_t *knobs,
                                         int32_t knob_count, void **context)
{
    (void)knobs;
    (void)knob_count;
    (void)context;
    return test_applicable(state, engine, device, graph);
}

static cdnn_status_t test_workspace_size(void *context, size_t *bytes)
{
    (void)context;
    *bytes = 0;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t test_execute(void *context, const cdnn_exec_args_t *args)
{
    (void)context;
    (void)args;
    message = "the test engine never executes";
    return CDNN_STATUS_EXECUTION_FAILED;
}

static void test_context_destroy(void *context)
{
    (void)context;
}

static const char *test_last_error(void *state)
{
    (void)state;
    return message;
}

static const cdnn_provider_t test_provider = {
    .abi_major = ABI_MAJOR,
    .abi_minor = 0,
    .struct_size = sizeof(cdnn_provider_t),
    .name = "test",
    .version = "9.9.9",
    .init = test_init,
    .fini = test_fini,
    .engine_count = test_engine_count,
    .engine_info = test_engine_info,
    .applicable = test_applicable,
    .context_create = test_context_create,
    .workspace_size = test_workspace_size,
    .execute = test_execute,
    .context_destroy = test_context_destroy,
    .last_error = test_last_error,
};

__attribute__((visibility("default"))) const cdnn_provider_t *
cdnn_provider_entry(void)
{
    return &test_provider;
}
