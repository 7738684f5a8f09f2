/*
 * test_api.c -- the public API's contract outside graph validation: status
 * strings, devices, knobs, building, execute-time checks, and the element
 * conversions every engine relies on.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <cdnn/cdnn.h>
#include <cdnn_sdk/numeric.h>

#define OK(call) assert_int_equal((call), CDNN_STATUS_SUCCESS)
#define NONE CDNN_UID_NONE

static void expect_error(cdnn_status_t got, cdnn_status_t want, const char *word)
{
    assert_int_equal(got, want);
    if (!strstr(cdnn_last_error(), word))
        fail_msg("message \"%s\" lacks \"%s\"", cdnn_last_error(), word);
}

static void test_status_strings(void **state)
{
    (void)state;
    assert_string_equal(cdnn_status_string(CDNN_STATUS_SUCCESS), "CDNN_STATUS_SUCCESS");
    assert_string_equal(cdnn_status_string(CDNN_STATUS_CORRUPT_DATA),
                        "CDNN_STATUS_CORRUPT_DATA");
    assert_string_equal(cdnn_status_string((cdnn_status_t)999), "CDNN_STATUS_UNKNOWN");
    assert_string_equal(cdnn_data_type_name(CDNN_DATA_TYPE_BF16), "bf16");
    assert_int_equal(cdnn_data_type_size(CDNN_DATA_TYPE_F64), 8);
    assert_int_equal(cdnn_pointwise_arity(CDNN_PW_SELECT), 3);
    assert_int_equal(cdnn_pointwise_arity((cdnn_pointwise_mode_t)-1), 0);
    assert_string_equal(cdnn_reduction_mode_name(CDNN_REDUCE_NORM2), "norm2");
    /* FNV-1a 64 of "a", a published test vector */
    assert_true(cdnn_engine_id_from_name("a") == 0xaf63dc4c8601ec8cull);
}

static void test_bad_devices(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    expect_error(cdnn_handle_create(&h, "gpu"), CDNN_STATUS_BAD_PARAM, "\"gpu\"");
    expect_error(cdnn_handle_create(&h, "cuda:x"), CDNN_STATUS_BAD_PARAM, "cuda:N");
    expect_error(cdnn_handle_create(&h, "cuda:"), CDNN_STATUS_BAD_PARAM, "cuda:N");
    expect_error(cdnn_handle_create(NULL, "cpu"), CDNN_STATUS_BAD_PARAM, "'handle' is NULL");
    assert_null(h);
}

/* Without a CUDA driver a CUDA handle is refused, with the reason. */
static void test_cuda_without_driver(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    cdnn_status_t st = cdnn_handle_create(&h, "cuda:0");
    if (st == CDNN_STATUS_SUCCESS) {
        assert_string_equal(cdnn_handle_device(h), "cuda:0");
        cdnn_handle_destroy(h);
        skip(); /* a GPU machine: scripts/gpu-check.sh covers it */
    }
    assert_true(st == CDNN_STATUS_NOT_SUPPORTED || st == CDNN_STATUS_NOT_FOUND);
    assert_non_null(strstr(cdnn_last_error(), "cuda:0"));
}

static void test_cpu_handle_takes_no_stream(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    assert_string_equal(cdnn_handle_device(h), "cpu");
    OK(cdnn_handle_set_stream(h, NULL));
    expect_error(cdnn_handle_set_stream(h, (void *)h), CDNN_STATUS_BAD_PARAM, "no stream");
    cdnn_handle_destroy(h);
}

static void test_knob_names(void **state)
{
    (void)state;
    cdnn_build_options_t *o = NULL;
    OK(cdnn_build_options_create(&o));
    OK(cdnn_build_options_set_knob(o, "global.workspace_limit", 1024));
    OK(cdnn_build_options_set_knob(o, "global.workspace_limit", 0)); /* replaces */
    OK(cdnn_build_options_set_knob(o, "cpu.matmul.threads", 2));
    expect_error(cdnn_build_options_set_knob(o, "global.nonsense", 1),
                 CDNN_STATUS_BAD_PARAM, "unknown knob global.nonsense");
    expect_error(cdnn_build_options_set_knob(o, "threads", 1), CDNN_STATUS_BAD_PARAM,
                 "<provider>.<category>.<name>");
    expect_error(cdnn_build_options_set_knob(o, "global.benchmarking", 2),
                 CDNN_STATUS_BAD_PARAM, "must be in [0, 1]");
    cdnn_build_options_destroy(o);
}

/* y = sigmoid(x) * x through a virtual intermediate, so that the
 * reference engine needs workspace. */
static cdnn_graph_t *swish_graph(void)
{
    cdnn_graph_t *g = NULL;
    const int64_t dims[] = {8, 8};
    cdnn_pointwise_attr_t sig, mul;
    cdnn_pointwise_attr_init(&sig, CDNN_PW_SIGMOID_FWD);
    cdnn_pointwise_attr_init(&mul, CDNN_PW_MUL);
    OK(cdnn_graph_create(&g));
    OK(cdnn_graph_set_name(g, "swish"));
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 2, dims, NULL));
    OK(cdnn_graph_tensor(g, 2, "s", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    OK(cdnn_graph_tensor(g, 3, "y", CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    OK(cdnn_graph_tensor_set_virtual(g, 2));
    OK(cdnn_graph_tensor_set_alignment(g, 1, 16));
    OK(cdnn_graph_pointwise(g, "sigmoid", &sig, 1, NONE, NONE, 2));
    OK(cdnn_graph_pointwise(g, "mul", &mul, 2, 1, NONE, 3));
    return g;
}

/* CDNN_FORCE_BENCHMARKING overrides a knob, so anything but exactly 0 or 1
 * fails the build, naming the variable, the value and what it accepts. */
static void test_forced_benchmarking_values(void **state)
{
    (void)state;
    static const char *const refused[] = {"2", "yes", " 1", "1 ", "true"};
    cdnn_handle_t *h = NULL;
    cdnn_graph_t *g = swish_graph();
    OK(cdnn_handle_create(&h, "cpu"));
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        setenv("CDNN_FORCE_BENCHMARKING", refused[i], 1);
        expect_error(cdnn_graph_build(g, h, NULL), CDNN_STATUS_BAD_PARAM,
                     "CDNN_FORCE_BENCHMARKING=\"");
        assert_non_null(strstr(cdnn_last_error(), refused[i]));
        assert_non_null(strstr(cdnn_last_error(), "exactly 1"));
        assert_non_null(strstr(cdnn_last_error(), "or 0"));
    }
    setenv("CDNN_FORCE_BENCHMARKING", "", 1);
    expect_error(cdnn_graph_build(g, h, NULL), CDNN_STATUS_BAD_PARAM,
                 "CDNN_FORCE_BENCHMARKING is set but empty");
    assert_non_null(strstr(cdnn_last_error(), "unset CDNN_FORCE_BENCHMARKING"));
    setenv("CDNN_FORCE_BENCHMARKING", "0", 1);
    OK(cdnn_graph_build(g, h, NULL));
    unsetenv("CDNN_FORCE_BENCHMARKING");
    OK(cdnn_graph_build(g, h, NULL));
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* Bytes of g saved in form (malloc'd). */
static uint8_t *saved(cdnn_graph_t *g, cdnn_save_form_t form, size_t *size)
{
    OK(cdnn_graph_save(g, form, NULL, 0, size));
    uint8_t *bytes = malloc(*size);
    assert_non_null(bytes);
    OK(cdnn_graph_save(g, form, bytes, *size, size));
    return bytes;
}

/* Graph JSON handed to a binary loader, and binary artifacts handed to the
 * JSON reader, are named for what they are, with the call that reads them. */
static void test_json_and_binary_mixups(void **state)
{
    (void)state;
    static const char *const json[] = {"{\"format_major\": 1}", "  \n\t{}",
                                       "\xef\xbb\xbf {\"format_major\": 1}", "{"};
    cdnn_handle_t *h = NULL;
    cdnn_graph_t *g = NULL;
    uint32_t flags = 0;
    OK(cdnn_handle_create(&h, "cpu"));
    for (size_t i = 0; i < sizeof json / sizeof *json; i++) {
        const char *look = "the bytes look like graph JSON, not a binary cdnn artifact; "
                           "read them with cdnn_graph_from_json";
        size_t n = strlen(json[i]);
        expect_error(cdnn_graph_load(&g, h, json[i], n), CDNN_STATUS_CORRUPT_DATA, look);
        expect_error(cdnn_plan_load(&g, h, json[i], n), CDNN_STATUS_CORRUPT_DATA, look);
        expect_error(cdnn_blob_contents(json[i], n, &flags), CDNN_STATUS_CORRUPT_DATA,
                     look);
    }
    /* A byte order mark is skipped by the JSON reader too. */
    OK(cdnn_graph_from_json(&g, json[2], strlen(json[2])));
    cdnn_graph_destroy(g);

    static const struct {
        cdnn_save_form_t form;
        const char *words;
    } binary[] = {
        {CDNN_SAVE_GRAPH, "a cdnn graph in binary form (file identifier \"CDGR\"), not "
                          "JSON text; load them with cdnn_graph_load"},
        {CDNN_SAVE_PLAN, "a cdnn plan in binary form (file identifier \"CDPL\"), not "
                         "JSON text; load them with cdnn_plan_load"},
        {CDNN_SAVE_GRAPH_AND_PLAN, "(file identifier \"CDGP\"), not JSON text; load "
                                   "them with cdnn_graph_load"},
    };
    cdnn_graph_t *swish = swish_graph();
    OK(cdnn_graph_build(swish, h, NULL));
    for (size_t i = 0; i < sizeof binary / sizeof *binary; i++) {
        size_t n = 0;
        uint8_t *bytes = saved(swish, binary[i].form, &n);
        expect_error(cdnn_graph_from_json(&g, (const char *)bytes, n),
                     CDNN_STATUS_CORRUPT_DATA, binary[i].words);
        free(bytes);
    }
    const char junk[] = "{\"name\": \"a\0b\"}";
    expect_error(cdnn_graph_from_json(&g, junk, sizeof junk - 1), CDNN_STATUS_CORRUPT_DATA,
                 "the input is not JSON text (byte 11 is 0x00, a control character)");
    assert_null(g);
    cdnn_graph_destroy(swish);
    cdnn_handle_destroy(h);
}

/* The JSON reader declares through the builder, so a NaN scalar is refused
 * there as cdnn_graph_tensor_set_scalar refuses it, with the JSON's place. */
static void test_json_nan_scalar_refused(void **state)
{
    (void)state;
    static const char text[] =
        "{\"format_major\": 1, \"tensors\": [{\"uid\": 7, \"name\": \"s\", "
        "\"data_type\": \"F32\", \"dims\": [1], \"is_scalar\": true, "
        "\"scalar_value\": \"nan\"}]}";
    cdnn_graph_t *g = NULL;
    expect_error(cdnn_graph_from_json(&g, text, sizeof text - 1), CDNN_STATUS_CORRUPT_DATA,
                 "tensors[0] (uid 7, 's')");
    assert_non_null(strstr(cdnn_last_error(), "value is NaN"));
    assert_null(g);
}

static void test_workspace_limit_lists_reasons(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    cdnn_build_options_t *o = NULL;
    cdnn_graph_t *g = swish_graph();
    OK(cdnn_handle_create(&h, "cpu"));
    OK(cdnn_build_options_create(&o));
    OK(cdnn_build_options_pin_engine(o, cdnn_engine_id_from_name("cpu:reference")));
    OK(cdnn_build_options_set_knob(o, "global.workspace_limit", 0));
    expect_error(cdnn_graph_build(g, h, o), CDNN_STATUS_NOT_SUPPORTED,
                 "cpu:reference: needs 256 workspace bytes, over global.workspace_limit 0");
    assert_non_null(strstr(cdnn_last_error(), "graph 'swish' on cpu"));
    cdnn_build_options_destroy(o);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* A benchmarking plan: no engine until its first execute; saving before
 * then fails with rule 3's words; afterwards it ranks its candidates. */
static void test_benchmarking_plan(void **state)
{
    (void)state;
    char dir[] = "/tmp/cdnn-test-cache-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("CDNN_CACHE_DIR", dir, 1);
    cdnn_handle_t *h = NULL;
    cdnn_build_options_t *o = NULL;
    cdnn_graph_t *g = swish_graph();
    OK(cdnn_handle_create(&h, "cpu"));
    OK(cdnn_build_options_create(&o));
    OK(cdnn_build_options_set_knob(o, "global.benchmarking", 1));
    OK(cdnn_graph_build(g, h, o));
    int32_t count = 0, chosen = 0;
    OK(cdnn_graph_candidates(g, NULL, 0, &count, &chosen));
    assert_true(count >= 2); /* fused pointwise, its 1-thread variant, reference */
    assert_int_equal(chosen, -1);
    size_t size = 0;
    expect_error(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &size), CDNN_STATUS_BAD_STATE,
                 "the plan has not chosen a kernel yet; execute it once, or build it "
                 "with benchmarking off, then save");
    expect_error(cdnn_graph_engine(g, NULL, NULL), CDNN_STATUS_BAD_STATE, "not chosen");

    size_t ws = 0;
    OK(cdnn_graph_workspace_size(g, &ws));
    float x[64], y[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)(i - 32) / 8;
    int64_t uids[] = {1, 3};
    void *ptrs[] = {x, y};
    void *workspace = malloc(ws + 1);
    OK(cdnn_graph_execute(g, h, 2, uids, ptrs, workspace));
    for (int i = 0; i < 64; i++) /* the winner's result is in the output */
        assert_true(fabs(y[i] - x[i] / (1 + exp(-(double)x[i]))) < 1e-6);
    cdnn_candidate_result_t results[8];
    OK(cdnn_graph_candidates(g, results, 8, &count, &chosen));
    assert_int_equal(chosen, 0);
    for (int32_t i = 1; i < count && i < 8; i++)
        assert_true(results[i].median_us < 0 || results[i].median_us >= results[0].median_us);
    OK(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &size));
    free(workspace);
    cdnn_build_options_destroy(o);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    char path[128];
    snprintf(path, sizeof path, "%s/winners.v1", dir);
    unlink(path);
    rmdir(dir);
    unsetenv("CDNN_CACHE_DIR");
}

typedef struct built {
    cdnn_handle_t *h;
    cdnn_graph_t *g;
    float *x, *y;
    void *ws;
    size_t ws_size;
} built_t;

static int build_swish(void **state)
{
    built_t *b = calloc(1, sizeof *b);
    b->g = swish_graph();
    OK(cdnn_handle_create(&b->h, "cpu"));
    OK(cdnn_graph_build(b->g, b->h, NULL));
    OK(cdnn_graph_workspace_size(b->g, &b->ws_size));
    b->ws = malloc(b->ws_size + 1);
    b->x = aligned_alloc(64, 64 * sizeof(float) + 64);
    b->y = aligned_alloc(64, 64 * sizeof(float));
    for (int i = 0; i < 64; i++)
        b->x[i] = (float)(i - 32) / 8;
    *state = b;
    return 0;
}

static int free_swish(void **state)
{
    built_t *b = *state;
    cdnn_graph_destroy(b->g);
    cdnn_handle_destroy(b->h);
    free(b->ws);
    free(b->x);
    free(b->y);
    free(b);
    return 0;
}

static void test_execute_runs(void **state)
{
    built_t *b = *state;
    int64_t uids[] = {1, 3};
    void *ptrs[] = {b->x, b->y};
    OK(cdnn_graph_execute(b->g, b->h, 2, uids, ptrs, b->ws));
    for (int i = 0; i < 64; i++) {
        double want = b->x[i] / (1 + exp(-(double)b->x[i]));
        assert_true(fabs(b->y[i] - want) < 1e-6);
    }
}

static void test_execute_checks_pack(void **state)
{
    built_t *b = *state;
    int64_t uids[] = {1, 3};
    void *ptrs[] = {b->x, b->y};
    expect_error(cdnn_graph_execute(b->g, b->h, 1, uids, ptrs, b->ws),
                 CDNN_STATUS_BAD_PARAM, "tensor 'y' (uid 3) has no pointer");
    int64_t stray[] = {1, 3, 77};
    void *three[] = {b->x, b->y, b->y};
    expect_error(cdnn_graph_execute(b->g, b->h, 3, stray, three, b->ws),
                 CDNN_STATUS_BAD_PARAM, "uid 77 names no tensor");
    int64_t virt[] = {1, 3, 2};
    expect_error(cdnn_graph_execute(b->g, b->h, 3, virt, three, b->ws),
                 CDNN_STATUS_BAD_PARAM, "tensor 's' (uid 2) is virtual");
    void *misaligned[] = {(char *)b->x + 4, b->y};
    expect_error(cdnn_graph_execute(b->g, b->h, 2, uids, misaligned, b->ws),
                 CDNN_STATUS_BAD_PARAM, "aligned to 16 bytes");
    void *null_ptr[] = {b->x, NULL};
    expect_error(cdnn_graph_execute(b->g, b->h, 2, uids, null_ptr, b->ws),
                 CDNN_STATUS_BAD_PARAM, "NULL pointer");
    if (b->ws_size)
        expect_error(cdnn_graph_execute(b->g, b->h, 2, uids, ptrs, NULL),
                     CDNN_STATUS_BAD_PARAM, "workspace is NULL");
}

static void test_not_built(void **state)
{
    (void)state;
    cdnn_graph_t *g = swish_graph();
    cdnn_handle_t *h = NULL;
    size_t ws;
    OK(cdnn_handle_create(&h, "cpu"));
    expect_error(cdnn_graph_workspace_size(g, &ws), CDNN_STATUS_BAD_STATE, "build it first");
    expect_error(cdnn_graph_execute(g, h, 0, NULL, NULL, NULL), CDNN_STATUS_BAD_STATE,
                 "build it first");
    expect_error(cdnn_graph_engine(g, NULL, NULL), CDNN_STATUS_BAD_STATE, "build it first");
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

static void test_preferred_engine_first(void **state)
{
    (void)state;
    cdnn_graph_t *g = swish_graph();
    cdnn_handle_t *h = NULL;
    cdnn_build_options_t *o = NULL;
    uint64_t ref = cdnn_engine_id_from_name("cpu:reference"), got = 0;
    OK(cdnn_handle_create(&h, "cpu"));
    OK(cdnn_build_options_create(&o));
    OK(cdnn_build_options_prefer_engine(o, ref));
    OK(cdnn_graph_build(g, h, o));
    OK(cdnn_graph_engine(g, &got, NULL));
    assert_true(got == ref);
    /* Without a preference the reference engine, ranked last, is not chosen
     * when a fast engine applies. */
    uint64_t ids[8];
    int32_t n = 0;
    OK(cdnn_graph_applicable_engines(g, h, ids, 8, &n));
    assert_true(n >= 1);
    assert_true(ids[n - 1] == ref);
    OK(cdnn_graph_build(g, h, NULL));
    OK(cdnn_graph_engine(g, &got, NULL));
    assert_true(got == ids[0]);
    cdnn_build_options_destroy(o);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

static void test_half_and_bf16_rounding(void **state)
{
    (void)state;
    assert_int_equal(cdnn_float_to_half(1.0f), 0x3c00);
    assert_int_equal(cdnn_float_to_half(65504.0f), 0x7bff);
    assert_int_equal(cdnn_float_to_half(65520.0f), 0x7c00);          /* rounds to inf */
    assert_int_equal(cdnn_float_to_half(0x1p-24f), 0x0001);          /* smallest subnormal */
    assert_int_equal(cdnn_float_to_half(1.0f + 0x1p-11f), 0x3c00);   /* tie to even */
    assert_int_equal(cdnn_float_to_half(1.0f + 0x1.8p-11f), 0x3c01); /* above the tie */
    assert_true(isnan(cdnn_half_to_float(cdnn_float_to_half(NAN))));
    for (uint32_t h = 0; h < 0x7c00; h++) /* every finite half round-trips */
        assert_int_equal(cdnn_float_to_half(cdnn_half_to_float((uint16_t)h)), h);
    assert_int_equal(cdnn_float_to_bf16(1.0f), 0x3f80);
    assert_int_equal(cdnn_float_to_bf16(1.0f + 0x1p-8f), 0x3f80);  /* tie to even */
    assert_int_equal(cdnn_float_to_bf16(1.0f + 0x1p-7f), 0x3f81);
    assert_true(isnan(cdnn_bf16_to_float(cdnn_float_to_bf16(NAN))));
    int8_t i8;
    cdnn_store_element(CDNN_DATA_TYPE_I8, &i8, 300.0);
    assert_int_equal(i8, 127);
    cdnn_store_element(CDNN_DATA_TYPE_I8, &i8, -2.5); /* truncates, as C */
    assert_int_equal(i8, -2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_bad_devices),
        cmocka_unit_test(test_cuda_without_driver),
        cmocka_unit_test(test_cpu_handle_takes_no_stream),
        cmocka_unit_test(test_knob_names),
        cmocka_unit_test(test_workspace_limit_lists_reasons),
        cmocka_unit_test(test_forced_benchmarking_values),
        cmocka_unit_test(test_json_and_binary_mixups),
        cmocka_unit_test(test_json_nan_scalar_refused),
        cmocka_unit_test(test_benchmarking_plan),
        cmocka_unit_test_setup_teardown(test_execute_runs, build_swish, free_swish),
        cmocka_unit_test_setup_teardown(test_execute_checks_pack, build_swish, free_swish),
        cmocka_unit_test(test_not_built),
        cmocka_unit_test(test_preferred_engine_first),
        cmocka_unit_test(test_half_and_bf16_rounding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
