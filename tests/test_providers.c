/*
 * test_providers.c -- provider discovery and loading, with the purpose-built
 * providers of tests/providers: ABI major mismatch, duplicate engine ids, a
 * failing initialisation, CDNN_PROVIDER_PATH, and the set-path call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cdnn/provider.h>

static char captured[16384];

static void capture_log(cdnn_log_level_t level, const char *message, void *user)
{
    (void)level;
    (void)user;
    size_t used = strlen(captured);
    snprintf(captured + used, sizeof captured - used, "%s\n", message);
}

static int reset(void **state)
{
    (void)state;
    captured[0] = 0;
    unsetenv("CDNN_PROVIDER_PATH");
    cdnn_set_log_callback(capture_log, CDNN_LOG_INFO, NULL);
    return cdnn_set_provider_path(NULL) == CDNN_STATUS_SUCCESS ? 0 : -1;
}

/* Create a handle on the CPU with the given search path (NULL: default). */
static cdnn_handle_t *handle_with_path(const char *path)
{
    assert_int_equal(cdnn_set_provider_path(path), CDNN_STATUS_SUCCESS);
    cdnn_handle_t *h = NULL;
    assert_int_equal(cdnn_handle_create(&h, "cpu"), CDNN_STATUS_SUCCESS);
    return h;
}

/* The provider serving engine `name`, or NULL if none does. */
static const char *provider_of(cdnn_handle_t *h, const char *name)
{
    int32_t n = 0;
    assert_int_equal(cdnn_handle_engine_count(h, &n), CDNN_STATUS_SUCCESS);
    const char *found = NULL;
    for (int32_t i = 0; i < n; i++) {
        cdnn_engine_info_t info;
        assert_int_equal(cdnn_handle_engine_info(h, i, &info), CDNN_STATUS_SUCCESS);
        assert_int_equal(info.id, cdnn_engine_id_from_name(info.name));
        if (strcmp(info.name, name) == 0) {
            assert_null(found); /* one engine per id */
            found = info.provider;
        }
    }
    return found;
}

static void test_default_path_finds_cpu_provider(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path(NULL);
    assert_non_null(provider_of(h, "cpu:reference"));
    assert_string_equal(provider_of(h, "cpu:reference"), "cpu");
    assert_non_null(strstr(cdnn_provider_search_path(), "cdnn/providers"));
    cdnn_handle_destroy(h);
}

static void test_abi_major_mismatch_rejected(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path(TEST_PROVIDER_ROOT "/abi_mismatch:" CPU_PROVIDER_DIR);
    assert_null(provider_of(h, "test:never_loaded"));
    assert_non_null(provider_of(h, "cpu:reference"));
    assert_non_null(strstr(captured, "abi_mismatch.so"));
    assert_non_null(strstr(captured, "provider ABI 99.0"));
    char speaks[32];
    snprintf(speaks, sizeof speaks, "speaks %d.%d", CDNN_PROVIDER_ABI_MAJOR,
             CDNN_PROVIDER_ABI_MINOR);
    assert_non_null(strstr(captured, speaks));
    cdnn_handle_destroy(h);
}

static void test_duplicate_engine_id_dropped(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path(CPU_PROVIDER_DIR ":" TEST_PROVIDER_ROOT "/duplicate");
    assert_string_equal(provider_of(h, "cpu:reference"), "cpu");
    assert_string_equal(provider_of(h, "test:unique"), "test");
    assert_non_null(strstr(captured, "engine cpu:reference"));
    assert_non_null(strstr(captured, "already served"));
    cdnn_handle_destroy(h);
}

static void test_failing_provider_skipped(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path(TEST_PROVIDER_ROOT "/failing_init:" CPU_PROVIDER_DIR);
    assert_null(provider_of(h, "test:never_loaded"));
    assert_non_null(provider_of(h, "cpu:reference"));
    assert_non_null(strstr(captured, "failing_init.so"));
    assert_non_null(strstr(captured, "the test provider refuses to start"));
    cdnn_handle_destroy(h);
}

static void test_environment_path_honoured(void **state)
{
    (void)state;
    setenv("CDNN_PROVIDER_PATH", TEST_PROVIDER_ROOT "/extra", 1);
    cdnn_handle_t *h = handle_with_path(NULL);
    assert_string_equal(provider_of(h, "test:extra"), "test");
    assert_null(provider_of(h, "cpu:reference"));
    assert_string_equal(cdnn_provider_search_path(), TEST_PROVIDER_ROOT "/extra");
    cdnn_handle_destroy(h);
}

static void test_api_path_overrides_environment(void **state)
{
    (void)state;
    setenv("CDNN_PROVIDER_PATH", TEST_PROVIDER_ROOT "/extra", 1);
    cdnn_handle_t *h = handle_with_path(CPU_PROVIDER_DIR);
    assert_null(provider_of(h, "test:extra"));
    assert_non_null(provider_of(h, "cpu:reference"));
    cdnn_handle_destroy(h);
}

static void test_path_fixed_while_handles_live(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path(NULL);
    assert_int_equal(cdnn_set_provider_path("/nowhere"), CDNN_STATUS_BAD_STATE);
    assert_non_null(strstr(cdnn_last_error(), "before the first handle"));
    cdnn_handle_t *second = NULL;
    assert_int_equal(cdnn_handle_create(&second, "cpu"), CDNN_STATUS_SUCCESS);
    assert_non_null(provider_of(second, "cpu:reference"));
    cdnn_handle_destroy(second);
    cdnn_handle_destroy(h);
    assert_int_equal(cdnn_set_provider_path("/nowhere"), CDNN_STATUS_SUCCESS);
}

static void test_empty_path_warns(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path("/nonexistent-cdnn-dir");
    int32_t n = -1;
    assert_int_equal(cdnn_handle_engine_count(h, &n), CDNN_STATUS_SUCCESS);
    assert_int_equal(n, 0);
    assert_non_null(strstr(captured, "no engine was found"));
    cdnn_handle_destroy(h);
}

/* A one-node graph: y = relu(x). */
static cdnn_graph_t *relu_graph(void)
{
    cdnn_graph_t *g = NULL;
    const int64_t dims[] = {4, 4};
    cdnn_pointwise_attr_t relu;
    cdnn_pointwise_attr_init(&relu, CDNN_PW_RELU_FWD);
    assert_int_equal(cdnn_graph_create(&g), CDNN_STATUS_SUCCESS);
    assert_int_equal(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 2, dims, NULL), 0);
    assert_int_equal(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_F32, 2, dims, NULL), 0);
    assert_int_equal(cdnn_graph_pointwise(g, "relu", &relu, 1, CDNN_UID_NONE,
                                          CDNN_UID_NONE, 2), 0);
    return g;
}

static void test_provider_words_reach_caller(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path(TEST_PROVIDER_ROOT "/extra");
    cdnn_graph_t *g = relu_graph();
    cdnn_build_options_t *opts = NULL;
    assert_int_equal(cdnn_build_options_create(&opts), CDNN_STATUS_SUCCESS);
    assert_int_equal(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name("test:extra")), 0);
    assert_int_equal(cdnn_graph_build(g, h, opts), CDNN_STATUS_NOT_SUPPORTED);
    assert_non_null(strstr(cdnn_last_error(), "test:extra: the test engine declines "
                                               "every graph (test provider)"));
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* A graph that uses what graph format 1.2 added (here a layer-norm
 * without bias) is not shown to a provider stamped below ABI 1.3 (the
 * test provider says 1.0): the reason is cdnn's, not the engine's. */
static void test_old_abi_not_shown_new_forms(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path(TEST_PROVIDER_ROOT "/extra");
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        cdnn_graph_t *g = NULL;
        const int64_t x[] = {2, 8}, p[] = {1, 8};
        assert_int_equal(cdnn_graph_create(&g), CDNN_STATUS_SUCCESS);
        assert_int_equal(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 2, x, NULL), 0);
        assert_int_equal(cdnn_graph_tensor(g, 2, "s", CDNN_DATA_TYPE_F32, 2, p, NULL), 0);
        if (with_bias)
            assert_int_equal(cdnn_graph_tensor(g, 3, "b", CDNN_DATA_TYPE_F32, 2, p, NULL), 0);
        assert_int_equal(cdnn_graph_tensor(g, 4, "y", CDNN_DATA_TYPE_F32, 2, x, NULL), 0);
        assert_int_equal(cdnn_graph_layernorm(g, "ln", 1e-5, 1, 2,
                                              with_bias ? 3 : CDNN_UID_NONE, 4,
                                              CDNN_UID_NONE, CDNN_UID_NONE), 0);
        cdnn_build_options_t *opts = NULL;
        assert_int_equal(cdnn_build_options_create(&opts), CDNN_STATUS_SUCCESS);
        assert_int_equal(cdnn_build_options_pin_engine(
                             opts, cdnn_engine_id_from_name("test:extra")), 0);
        assert_int_equal(cdnn_graph_build(g, h, opts), CDNN_STATUS_NOT_SUPPORTED);
        const char *want = with_bias ? "the test engine declines every graph"
                                     : "built for provider ABI 1.0, before the graph's";
        if (!strstr(cdnn_last_error(), want))
            fail_msg("message \"%s\" lacks \"%s\"", cdnn_last_error(), want);
        cdnn_build_options_destroy(opts);
        cdnn_graph_destroy(g);
    }
    cdnn_handle_destroy(h);
}

/* A pointwise mode of graph format 1.3 is not shown to a provider stamped
 * before ABI 1.4; a rank-broadcast input is (the view has it at y's rank,
 * which every ABI reads), so the old engine sees the graph and declines it
 * itself. */
static void test_old_abi_pointwise_forms(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path(TEST_PROVIDER_ROOT "/extra");
    for (int new_mode = 0; new_mode < 2; new_mode++) {
        cdnn_graph_t *g = NULL;
        const int64_t x[] = {2, 8}, b[] = {8};
        assert_int_equal(cdnn_graph_create(&g), CDNN_STATUS_SUCCESS);
        assert_int_equal(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 2, x, NULL), 0);
        assert_int_equal(cdnn_graph_tensor(g, 2, "b", CDNN_DATA_TYPE_F32, 1, b, NULL), 0);
        assert_int_equal(cdnn_graph_tensor(g, 3, "y", CDNN_DATA_TYPE_F32, 2, x, NULL), 0);
        cdnn_pointwise_attr_t pw;
        cdnn_pointwise_attr_init(&pw, new_mode ? CDNN_PW_ATAN2 : CDNN_PW_ADD);
        assert_int_equal(cdnn_graph_pointwise(g, "pw", &pw, 1, 2, CDNN_UID_NONE, 3), 0);
        cdnn_build_options_t *opts = NULL;
        assert_int_equal(cdnn_build_options_create(&opts), CDNN_STATUS_SUCCESS);
        assert_int_equal(cdnn_build_options_pin_engine(
                             opts, cdnn_engine_id_from_name("test:extra")), 0);
        assert_int_equal(cdnn_graph_build(g, h, opts), CDNN_STATUS_NOT_SUPPORTED);
        const char *want = new_mode ? "built for provider ABI 1.0, before the graph's"
                                    : "the test engine declines every graph";
        if (!strstr(cdnn_last_error(), want))
            fail_msg("message \"%s\" lacks \"%s\"", cdnn_last_error(), want);
        cdnn_build_options_destroy(opts);
        cdnn_graph_destroy(g);
    }
    cdnn_handle_destroy(h);
}

static void test_unserved_pinned_engine(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path(NULL);
    cdnn_graph_t *g = relu_graph();
    cdnn_build_options_t *opts = NULL;
    assert_int_equal(cdnn_build_options_create(&opts), CDNN_STATUS_SUCCESS);
    assert_int_equal(cdnn_build_options_pin_engine(opts, 0x1234), 0);
    assert_int_equal(cdnn_graph_build(g, h, opts), CDNN_STATUS_NOT_FOUND);
    assert_non_null(strstr(cdnn_last_error(), "0x0000000000001234"));
    assert_non_null(strstr(cdnn_last_error(), "cdnn/providers"));
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* A plan keeps its provider loaded after its handle is gone. */
static void test_plan_outlives_handle(void **state)
{
    (void)state;
    cdnn_handle_t *h = handle_with_path(NULL);
    cdnn_graph_t *g = relu_graph();
    assert_int_equal(cdnn_graph_build(g, h, NULL), CDNN_STATUS_SUCCESS);
    cdnn_handle_destroy(h);
    assert_int_equal(cdnn_set_provider_path(NULL), CDNN_STATUS_BAD_STATE);
    /* Still runnable through a new handle on the same device. */
    float x[16], y[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i - 8);
    int64_t uids[] = {1, 2};
    void *ptrs[] = {x, y};
    assert_int_equal(cdnn_handle_create(&h, "cpu"), CDNN_STATUS_SUCCESS);
    assert_int_equal(cdnn_graph_execute(g, h, 2, uids, ptrs, NULL), CDNN_STATUS_SUCCESS);
    for (int i = 0; i < 16; i++)
        assert_true(y[i] == (x[i] > 0 ? x[i] : 0));
    cdnn_handle_destroy(h);
    cdnn_graph_destroy(g);
    assert_int_equal(cdnn_set_provider_path(NULL), CDNN_STATUS_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_default_path_finds_cpu_provider, reset),
        cmocka_unit_test_setup(test_abi_major_mismatch_rejected, reset),
        cmocka_unit_test_setup(test_duplicate_engine_id_dropped, reset),
        cmocka_unit_test_setup(test_failing_provider_skipped, reset),
        cmocka_unit_test_setup(test_environment_path_honoured, reset),
        cmocka_unit_test_setup(test_api_path_overrides_environment, reset),
        cmocka_unit_test_setup(test_path_fixed_while_handles_live, reset),
        cmocka_unit_test_setup(test_empty_path_warns, reset),
        cmocka_unit_test_setup(test_provider_words_reach_caller, reset),
        cmocka_unit_test_setup(test_old_abi_not_shown_new_forms, reset),
        cmocka_unit_test_setup(test_old_abi_pointwise_forms, reset),
        cmocka_unit_test_setup(test_unserved_pinned_engine, reset),
        cmocka_unit_test_setup(test_plan_outlives_handle, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
