/*
 * test_save_load.c -- docs/CONTRACT.md on the CPU: every example graph saved,
 * loaded in a fresh handle, run against cpu:reference and re-saved byte for
 * byte (rule 1); re-saving without the provider (counting provider);
 * deterministic and thread-safe saves (rule 9); mix-ups (rule 7) and damage
 * (rule 8); unserved engines (rule 5); device binding (rule 6).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"

#include <cdnn/cdnn.h>
#include <cdnn_sdk/numeric.h>

#define OK(call)                                                               \
    do {                                                                       \
        cdnn_status_t st_ = (call);                                            \
        if (st_ != CDNN_STATUS_SUCCESS)                                        \
            fail_msg("%s: %s: %s", #call, cdnn_status_string(st_),             \
                     cdnn_last_error());                                       \
    } while (0)

#define MAX_IO 16

/* ---- bytes and files ------------------------------------------------------ */

typedef struct bytes {
    uint8_t *data;
    size_t size;
} bytes_t;

static bytes_t save(cdnn_graph_t *g, cdnn_save_form_t form)
{
    bytes_t b = {NULL, 0};
    OK(cdnn_graph_save(g, form, NULL, 0, &b.size));
    b.data = malloc(b.size);
    assert_non_null(b.data);
    size_t again = 0;
    OK(cdnn_graph_save(g, form, b.data, b.size, &again));
    assert_int_equal(again, b.size);
    return b;
}

static void assert_same_bytes(bytes_t a, bytes_t b)
{
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.data, b.data, a.size);
}

static cdnn_graph_t *load_example(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", CDNN_EXAMPLES_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *text = malloc(1 << 20);
    size_t n = fread(text, 1, 1 << 20, f);
    fclose(f);
    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_from_json(&g, text, n));
    free(text);
    return g;
}

/* ---- running -------------------------------------------------------------- */

typedef struct run {
    int32_t count;
    cdnn_tensor_io_t io[MAX_IO];
    int64_t uids[MAX_IO];
    void *ptrs[MAX_IO];
} run_t;

/* Inputs from a fixed seed (never zero), outputs poisoned with 0xFF. */
static void fill(const cdnn_tensor_io_t *t, void *p, uint32_t seed)
{
    size_t elem = cdnn_data_type_size(t->type);
    if (t->is_output) {
        memset(p, 0xff, t->span_bytes);
        return;
    }
    for (size_t i = 0; i < t->span_bytes / elem; i++) {
        seed = seed * 1664525u + 1013904223u + (uint32_t)t->uid;
        double v = t->type == CDNN_DATA_TYPE_BOOL ? (seed >> 31)
                                                  : (double)(seed >> 8) * 0x1p-23 - 1.0;
        cdnn_store_element(t->type, (char *)p + i * elem, v == 0 ? 0.25 : v);
    }
}

static void run_prepare(cdnn_graph_t *g, run_t *r)
{
    OK(cdnn_graph_io_tensors(g, r->io, MAX_IO, &r->count));
    assert_true(r->count <= MAX_IO);
    for (int32_t i = 0; i < r->count; i++) {
        r->uids[i] = r->io[i].uid;
        r->ptrs[i] = aligned_alloc(64, (r->io[i].span_bytes + 63) / 64 * 64);
        fill(&r->io[i], r->ptrs[i], 7);
    }
}

static void run_execute(cdnn_graph_t *g, cdnn_handle_t *h, run_t *r)
{
    size_t ws = 0;
    OK(cdnn_graph_workspace_size(g, &ws));
    void *workspace = ws ? malloc(ws) : NULL;
    for (int32_t i = 0; i < r->count; i++)
        if (r->io[i].is_output)
            fill(&r->io[i], r->ptrs[i], 0);
    OK(cdnn_graph_execute(g, h, r->count, r->uids, r->ptrs, workspace));
    free(workspace);
}

static void run_free(run_t *r)
{
    for (int32_t i = 0; i < r->count; i++)
        free(r->ptrs[i]);
}

/* Largest error of every output of got against want, over max |want|. */
static void compare_outputs(const run_t *got, const run_t *want, const char *what)
{
    assert_int_equal(got->count, want->count);
    for (int32_t i = 0; i < got->count; i++) {
        const cdnn_tensor_io_t *t = &want->io[i];
        if (!t->is_output)
            continue;
        size_t elem = cdnn_data_type_size(t->type);
        double err = 0, scale = 1;
        for (size_t k = 0; k < t->span_bytes / elem; k++) {
            double a = cdnn_load_element(t->type, (char *)got->ptrs[i] + k * elem);
            double b = cdnn_load_element(t->type, (char *)want->ptrs[i] + k * elem);
            if (isnan(a) != isnan(b))
                fail_msg("%s: output uid %lld element %zu: %g vs %g", what,
                         (long long)t->uid, k, a, b);
            if (!isnan(b)) {
                err = fmax(err, fabs(a - b));
                scale = fmax(scale, fabs(b));
            }
        }
        double tol = t->type == CDNN_DATA_TYPE_F32 ? 1e-4 : 3e-2;
        if (err > tol * scale)
            fail_msg("%s: output uid %lld: max error %g over tolerance %g", what,
                     (long long)t->uid, err, tol * scale);
    }
}

/* The expected outputs: the example pinned to cpu:reference. */
static void reference_run(const char *name, cdnn_handle_t *h, run_t *r)
{
    cdnn_graph_t *g = load_example(name);
    cdnn_build_options_t *o = NULL;
    OK(cdnn_build_options_create(&o));
    OK(cdnn_build_options_pin_engine(o, cdnn_engine_id_from_name("cpu:reference")));
    OK(cdnn_graph_build(g, h, o));
    run_prepare(g, r);
    run_execute(g, h, r);
    cdnn_build_options_destroy(o);
    cdnn_graph_destroy(g);
}

/* ---- rule 1 on every example ---------------------------------------------- */

static void round_trip_example(const char *name)
{
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    cdnn_graph_t *g = load_example(name);
    OK(cdnn_graph_build(g, h, NULL));
    bytes_t plan = save(g, CDNN_SAVE_PLAN);
    bytes_t both = save(g, CDNN_SAVE_GRAPH_AND_PLAN);
    cdnn_graph_destroy(g);
    run_t want;
    reference_run(name, h, &want);
    cdnn_handle_destroy(h);

    OK(cdnn_handle_create(&h, "cpu")); /* a fresh handle */
    cdnn_graph_t *loaded = NULL;
    OK(cdnn_plan_load(&loaded, h, plan.data, plan.size));
    run_t got;
    run_prepare(loaded, &got);
    for (int i = 0; i < 2; i++) {
        run_execute(loaded, h, &got);
        compare_outputs(&got, &want, name);
    }
    bytes_t resaved = save(loaded, CDNN_SAVE_PLAN);
    assert_same_bytes(resaved, plan);
    assert_int_equal(cdnn_graph_save(loaded, CDNN_SAVE_GRAPH, NULL, 0, &resaved.size),
                     CDNN_STATUS_BAD_STATE);
    cdnn_graph_destroy(loaded);
    run_free(&got);

    /* The container: its plan part is the plan, byte for byte. */
    OK(cdnn_graph_load(&loaded, h, both.data, both.size));
    run_prepare(loaded, &got);
    run_execute(loaded, h, &got);
    compare_outputs(&got, &want, name);
    bytes_t part = save(loaded, CDNN_SAVE_PLAN);
    assert_same_bytes(part, plan);
    bytes_t both_again = save(loaded, CDNN_SAVE_GRAPH_AND_PLAN);
    assert_same_bytes(both_again, both);
    cdnn_graph_destroy(loaded);
    run_free(&got);

    /* The re-saved bytes load, run and re-save identically. */
    OK(cdnn_plan_load(&loaded, h, resaved.data, resaved.size));
    run_prepare(loaded, &got);
    run_execute(loaded, h, &got);
    compare_outputs(&got, &want, name);
    bytes_t third = save(loaded, CDNN_SAVE_PLAN);
    assert_same_bytes(third, plan);
    cdnn_graph_destroy(loaded);
    run_free(&got);
    run_free(&want);
    cdnn_handle_destroy(h);
    free(plan.data);
    free(both.data);
    free(resaved.data);
    free(part.data);
    free(both_again.data);
    free(third.data);
}

static int is_json(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 5 && strcmp(e->d_name + n - 5, ".json") == 0;
}

static void test_every_example_round_trips(void **state)
{
    (void)state;
    struct dirent **names = NULL;
    int n = scandir(CDNN_EXAMPLES_DIR, &names, is_json, alphasort);
    assert_true(n >= 10); /* one per op family, plus fused graphs */
    for (int i = 0; i < n; i++) {
        print_message("round trip: %s\n", names[i]->d_name);
        round_trip_example(names[i]->d_name);
        free(names[i]);
    }
    free(names);
}

/* ---- rule 9: determinism and threads ---------------------------------------- */

static bytes_t build_and_save(const char *name, cdnn_handle_t *h, uint64_t engine)
{
    cdnn_graph_t *g = load_example(name);
    cdnn_build_options_t *o = NULL;
    OK(cdnn_build_options_create(&o));
    OK(cdnn_build_options_pin_engine(o, engine));
    OK(cdnn_graph_build(g, h, o));
    bytes_t b = save(g, CDNN_SAVE_GRAPH_AND_PLAN);
    cdnn_build_options_destroy(o);
    cdnn_graph_destroy(g);
    return b;
}

static void test_saves_are_deterministic(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    const char *engines[] = {"cpu:reference", "cpu:blas_conv"};
    for (int i = 0; i < 2; i++) {
        uint64_t id = cdnn_engine_id_from_name(engines[i]);
        bytes_t a = build_and_save("conv_bias_relu.json", h, id);
        bytes_t b = build_and_save("conv_bias_relu.json", h, id);
        assert_same_bytes(a, b);
        free(a.data);
        free(b.data);
    }
    cdnn_handle_destroy(h);
}

typedef struct shared_plan {
    cdnn_graph_t *g;
    cdnn_handle_t *h;
    bytes_t saved[8];
    run_t runs[8];
} shared_plan_t;

typedef struct worker {
    shared_plan_t *shared;
    int index;
} worker_t;

static void *save_and_execute(void *arg)
{
    worker_t *w = arg;
    shared_plan_t *s = w->shared;
    bytes_t *b = &s->saved[w->index];
    run_t *r = &s->runs[w->index];
    if (cdnn_graph_save(s->g, CDNN_SAVE_PLAN, NULL, 0, &b->size) != CDNN_STATUS_SUCCESS)
        return "size query failed";
    b->data = malloc(b->size);
    if (cdnn_graph_save(s->g, CDNN_SAVE_PLAN, b->data, b->size, &b->size))
        return "save failed";
    size_t ws = 0;
    cdnn_graph_workspace_size(s->g, &ws);
    void *workspace = malloc(ws + 1);
    cdnn_status_t st = cdnn_graph_execute(s->g, s->h, r->count, r->uids, r->ptrs, workspace);
    free(workspace);
    return st == CDNN_STATUS_SUCCESS ? NULL : "execute failed";
}

static void test_eight_threads_save_and_execute(void **state)
{
    (void)state;
    shared_plan_t s;
    memset(&s, 0, sizeof s);
    OK(cdnn_handle_create(&s.h, "cpu"));
    s.g = load_example("matmul_bias_gelu_residual.json");
    OK(cdnn_graph_build(s.g, s.h, NULL));
    for (int i = 0; i < 8; i++)
        run_prepare(s.g, &s.runs[i]);
    pthread_t threads[8];
    worker_t workers[8];
    for (int i = 0; i < 8; i++) {
        workers[i] = (worker_t){&s, i};
        assert_int_equal(pthread_create(&threads[i], NULL, save_and_execute, &workers[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        void *why = NULL;
        pthread_join(threads[i], &why);
        if (why)
            fail_msg("thread %d: %s", i, (const char *)why);
    }
    for (int i = 1; i < 8; i++) {
        assert_same_bytes(s.saved[i], s.saved[0]);
        for (int32_t k = 0; k < s.runs[0].count; k++)
            assert_memory_equal(s.runs[i].ptrs[k], s.runs[0].ptrs[k],
                                s.runs[0].io[k].span_bytes);
    }
    for (int i = 0; i < 8; i++) {
        free(s.saved[i].data);
        run_free(&s.runs[i]);
    }
    cdnn_graph_destroy(s.g);
    cdnn_handle_destroy(s.h);
}

/* ---- rule 1: re-saving does not call the provider --------------------------- */

typedef void (*counts_fn)(int *creates, int *saves, int *restores, int *executes);

static counts_fn counting_calls(void)
{
    void *lib = dlopen(TEST_PROVIDER_ROOT "/counting/counting.so", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib);
    counts_fn f;
    *(void **)&f = dlsym(lib, "test_counting_calls");
    dlclose(lib); /* NOLOAD took a reference of its own */
    assert_non_null(f);
    return f;
}

static cdnn_graph_t *identity_graph(void)
{
    cdnn_graph_t *g = NULL;
    const int64_t dims[] = {3, 5};
    cdnn_pointwise_attr_t id;
    cdnn_pointwise_attr_init(&id, CDNN_PW_IDENTITY);
    OK(cdnn_graph_create(&g));
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 2, dims, NULL));
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_F32, 2, dims, NULL));
    OK(cdnn_graph_pointwise(g, "copy", &id, 1, CDNN_UID_NONE, CDNN_UID_NONE, 2));
    return g;
}

static void test_resave_does_not_call_provider(void **state)
{
    (void)state;
    OK(cdnn_set_provider_path(TEST_PROVIDER_ROOT "/counting"));
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    counts_fn counts = counting_calls();
    int c0, s0, r0, e0, c, s, r, e;
    counts(&c0, &s0, &r0, &e0);

    cdnn_graph_t *g = identity_graph();
    OK(cdnn_graph_build(g, h, NULL));
    bytes_t first = save(g, CDNN_SAVE_PLAN); /* the provider writes once */
    counts(&c, &s, &r, &e);
    assert_int_equal(s - s0, 1);
    bytes_t again = save(g, CDNN_SAVE_PLAN); /* cached: no call */
    counts(&c, &s, &r, &e);
    assert_int_equal(s - s0, 1);
    assert_same_bytes(first, again);

    cdnn_graph_t *loaded = NULL;
    OK(cdnn_plan_load(&loaded, h, first.data, first.size));
    counts(&c, &s, &r, &e);
    assert_int_equal(r - r0, 1);
    bytes_t resaved = save(loaded, CDNN_SAVE_PLAN);
    counts(&c, &s, &r, &e);
    assert_int_equal(s - s0, 1); /* the loaded plan never asked the provider */
    assert_same_bytes(resaved, first);

    float x[15], y[15];
    for (int i = 0; i < 15; i++)
        x[i] = (float)i + 0.5f;
    int64_t uids[] = {1, 2};
    void *ptrs[] = {x, y};
    OK(cdnn_graph_execute(loaded, h, 2, uids, ptrs, NULL));
    assert_memory_equal(x, y, sizeof x);

    cdnn_graph_destroy(loaded);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    free(first.data);
    free(again.data);
    free(resaved.data);
    OK(cdnn_set_provider_path(NULL));
}

static void test_unserved_engine_named(void **state)
{
    (void)state;
    OK(cdnn_set_provider_path(TEST_PROVIDER_ROOT "/counting"));
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    cdnn_graph_t *g = identity_graph();
    OK(cdnn_graph_build(g, h, NULL));
    bytes_t plan = save(g, CDNN_SAVE_PLAN);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);

    OK(cdnn_set_provider_path(CPU_PROVIDER_DIR));
    OK(cdnn_handle_create(&h, "cpu"));
    cdnn_graph_t *loaded = NULL;
    assert_int_equal(cdnn_plan_load(&loaded, h, plan.data, plan.size), CDNN_STATUS_NOT_FOUND);
    char id[32];
    snprintf(id, sizeof id, "0x%016llx",
             (unsigned long long)cdnn_engine_id_from_name("test:counting"));
    const char *msg = cdnn_last_error();
    if (!strstr(msg, "test:counting") || !strstr(msg, id) || !strstr(msg, CPU_PROVIDER_DIR))
        fail_msg("message lacks the engine, its id or the search path: %s", msg);
    assert_null(loaded);
    cdnn_handle_destroy(h);
    OK(cdnn_set_provider_path(NULL));
    free(plan.data);
}

typedef struct saved_forms {
    bytes_t graph, plan, both;
} saved_forms_t;

static saved_forms_t saved_example(cdnn_handle_t *h)
{
    cdnn_graph_t *g = load_example("conv_bias_relu.json");
    OK(cdnn_graph_build(g, h, NULL));
    saved_forms_t f = {save(g, CDNN_SAVE_GRAPH), save(g, CDNN_SAVE_PLAN),
                       save(g, CDNN_SAVE_GRAPH_AND_PLAN)};
    cdnn_graph_destroy(g);
    return f;
}

static void expect_refused(cdnn_status_t got, cdnn_status_t want, const char *w1,
                           const char *w2)
{
    assert_int_equal(got, want);
    const char *msg = cdnn_last_error();
    if (!strstr(msg, w1) || (w2 && !strstr(msg, w2)))
        fail_msg("message \"%s\" lacks \"%s\" or \"%s\"", msg, w1, w2 ? w2 : "");
}

/* A plan saved through the counting provider at path, with the handle
 * destroyed afterwards so that the next handle reloads providers. */
static bytes_t counting_plan(const char *path)
{
    OK(cdnn_set_provider_path(path));
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    cdnn_graph_t *g = identity_graph();
    OK(cdnn_graph_build(g, h, NULL));
    bytes_t plan = save(g, CDNN_SAVE_PLAN);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    return plan;
}

/* Rule 2: a provider upgrade changes nothing inside a saved plan. */
static void test_provider_upgrade_changes_nothing(void **state)
{
    (void)state;
    bytes_t plan = counting_plan(TEST_PROVIDER_ROOT "/counting");
    OK(cdnn_set_provider_path(TEST_PROVIDER_ROOT "/counting_v2"));
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    cdnn_engine_info_t info;
    OK(cdnn_handle_engine_info(h, 0, &info));
    assert_string_equal(info.provider_version, "2.0.0");
    cdnn_graph_t *loaded = NULL;
    OK(cdnn_plan_load(&loaded, h, plan.data, plan.size));
    bytes_t resaved = save(loaded, CDNN_SAVE_PLAN);
    assert_same_bytes(resaved, plan);
    cdnn_blob_info_t *blob = NULL;
    OK(cdnn_blob_inspect(resaved.data, resaved.size, &blob));
    assert_string_equal(blob->provider_version, "1.0.0"); /* as saved: diagnostic */
    float x[15], y[15];
    for (int i = 0; i < 15; i++)
        x[i] = (float)i * 0.25f + 1;
    int64_t uids[] = {1, 2};
    void *ptrs[] = {x, y};
    OK(cdnn_graph_execute(loaded, h, 2, uids, ptrs, NULL));
    assert_memory_equal(x, y, sizeof x);
    cdnn_blob_info_destroy(blob);
    cdnn_graph_destroy(loaded);
    cdnn_handle_destroy(h);
    free(plan.data);
    free(resaved.data);
}

/* Rule 4: a provider that cannot vouch for the code it would embed fails
 * the save, in its own words; nothing is written or cached. */
static void test_save_checks_embedded_code(void **state)
{
    (void)state;
    OK(cdnn_set_provider_path(TEST_PROVIDER_ROOT "/counting"));
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    cdnn_graph_t *g = identity_graph();
    OK(cdnn_graph_build(g, h, NULL));
    uint8_t buf[4096];
    memset(buf, 0xcd, sizeof buf);
    size_t size = 0;
    setenv("COUNTING_PACK_CHANGED", "1", 1);
    expect_refused(cdnn_graph_save(g, CDNN_SAVE_PLAN, buf, sizeof buf, &size),
                   CDNN_STATUS_EXECUTION_FAILED, "test:counting could not save",
                   "changed on disk since the build");
    for (size_t i = 0; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xcd);
    unsetenv("COUNTING_PACK_CHANGED");
    OK(cdnn_graph_save(g, CDNN_SAVE_PLAN, buf, sizeof buf, &size)); /* not cached */
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* Rule 10: strict mode runs only plans whose provider vouches for their
 * code; the CPU provider's plans carry none, the counting provider cannot
 * vouch. */
static void test_strict_mode(void **state)
{
    (void)state;
    bytes_t counting = counting_plan(TEST_PROVIDER_ROOT "/counting");
    OK(cdnn_set_provider_path(TEST_PROVIDER_ROOT "/counting:" CPU_PROVIDER_DIR));
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    saved_forms_t cpu = saved_example(h);
    cdnn_graph_t *g = NULL;
    setenv("CDNN_TRUSTED_CODE", "pack", 1);
    expect_refused(cdnn_plan_load(&g, h, counting.data, counting.size),
                   CDNN_STATUS_NOT_SUPPORTED, "strict mode", "cannot vouch");
    OK(cdnn_plan_load(&g, h, cpu.plan.data, cpu.plan.size));
    cdnn_graph_destroy(g);
    setenv("CDNN_TRUSTED_CODE", "everything", 1);
    expect_refused(cdnn_plan_load(&g, h, cpu.plan.data, cpu.plan.size),
                   CDNN_STATUS_BAD_PARAM, "CDNN_TRUSTED_CODE=everything", "\"pack\"");
    unsetenv("CDNN_TRUSTED_CODE");
    OK(cdnn_plan_load(&g, h, counting.data, counting.size));
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    free(counting.data);
    free(cpu.graph.data);
    free(cpu.plan.data);
    free(cpu.both.data);
}

/* ---- rules 7 and 8: mix-ups and damage -------------------------------------- */

static void test_mixups_name_both_kinds(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    saved_forms_t f = saved_example(h);
    cdnn_graph_t *g = NULL;
    expect_refused(cdnn_plan_load(&g, h, f.graph.data, f.graph.size), CDNN_STATUS_BAD_PARAM,
                   "a cdnn graph", "a cdnn plan was expected");
    expect_refused(cdnn_graph_load(&g, h, f.plan.data, f.plan.size), CDNN_STATUS_BAD_PARAM,
                   "a cdnn plan, not a graph", "cdnn_plan_load");
    uint8_t empty[1] = {0};
    expect_refused(cdnn_plan_load(&g, h, empty, 0), CDNN_STATUS_CORRUPT_DATA, "too few", NULL);
    expect_refused(cdnn_graph_load(&g, h, empty, 0), CDNN_STATUS_CORRUPT_DATA, "too few", NULL);
    uint32_t flags = 0;
    OK(cdnn_blob_contents(f.both.data, f.both.size, &flags));
    assert_int_equal(flags, CDNN_BLOB_GRAPH | CDNN_BLOB_PLAN);
    OK(cdnn_blob_contents(f.plan.data, f.plan.size, &flags));
    assert_int_equal(flags, CDNN_BLOB_PLAN);
    OK(cdnn_blob_contents(f.graph.data, f.graph.size, &flags));
    assert_int_equal(flags, CDNN_BLOB_GRAPH);
    /* A graph loaded without a handle leaves the container's plan alone. */
    size_t size = 0;
    OK(cdnn_graph_load(&g, NULL, f.both.data, f.both.size));
    assert_int_equal(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &size),
                     CDNN_STATUS_BAD_STATE);
    cdnn_graph_destroy(g);
    free(f.graph.data);
    free(f.plan.data);
    free(f.both.data);
    cdnn_handle_destroy(h);
}

static void test_random_bytes_refused(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    uint8_t buf[4096];
    uint32_t seed = 99;
    for (int trial = 0; trial < 500; trial++) {
        size_t n = (size_t)(trial * 37) % sizeof buf;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            buf[i] = (uint8_t)(seed >> 24);
        }
        if (trial % 2 && n >= 8) /* half of them claim to be plans */
            memcpy(buf + 4, "CDPL", 4);
        cdnn_graph_t *g = NULL;
        assert_int_not_equal(cdnn_plan_load(&g, h, buf, n), CDNN_STATUS_SUCCESS);
        assert_true(strlen(cdnn_last_error()) > 0);
        assert_int_not_equal(cdnn_graph_load(&g, h, buf, n), CDNN_STATUS_SUCCESS);
        assert_null(g);
    }
    cdnn_handle_destroy(h);
}

/* Every truncation and every single-byte flip of a plan is refused. */
static const uint8_t flip_masks[] = {0x01, 0x02, 0x04, 0x08, 0x10,
                                     0x20, 0x40, 0x80, 0xff};

/* A flipped byte is damage wherever it lands -- in a version field too,
 * which the digest covers and is checked first: never "too new"
 * (NOT_SUPPORTED), never loaded.  (A flip that turns the identifier into
 * another kind's may read as a mix-up, BAD_PARAM.) */
static void expect_damage(cdnn_status_t st, const char *what, size_t at)
{
    if (st != CDNN_STATUS_CORRUPT_DATA && st != CDNN_STATUS_BAD_PARAM)
        fail_msg("a %s with byte %zu flipped gave %s: %s", what, at,
                 cdnn_status_string(st), cdnn_last_error());
    assert_true(strlen(cdnn_last_error()) > 0);
}

static void test_damaged_plans_refused(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    saved_forms_t f = saved_example(h);
    uint8_t *copy = malloc(f.plan.size);
    cdnn_graph_t *g = NULL;
    for (size_t n = 0; n < f.plan.size; n++) {
        memcpy(copy, f.plan.data, n);
        if (cdnn_plan_load(&g, h, copy, n) == CDNN_STATUS_SUCCESS)
            fail_msg("a plan truncated to %zu of %zu bytes loaded", n, f.plan.size);
        assert_true(strlen(cdnn_last_error()) > 0);
    }
    for (size_t i = 0; i < f.plan.size; i++)
        for (size_t m = 0; m < sizeof flip_masks; m++) {
            memcpy(copy, f.plan.data, f.plan.size);
            copy[i] ^= flip_masks[m];
            expect_damage(cdnn_plan_load(&g, h, copy, f.plan.size), "plan", i);
        }
    print_message("refused %zu truncations and %zu flips of a %zu-byte plan\n",
                  f.plan.size, f.plan.size * sizeof flip_masks, f.plan.size);
    free(copy);
    free(f.graph.data);
    free(f.plan.data);
    free(f.both.data);
    cdnn_handle_destroy(h);
}

/* Every truncation and every single-byte flip of a container is refused:
 * the graph part is covered by the container's SHA-256, the plan part by
 * its own, and the envelope by the canonical-bytes check. */
static void test_damaged_containers_refused(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    saved_forms_t f = saved_example(h);
    uint8_t *copy = malloc(f.both.size);
    cdnn_graph_t *g = NULL;
    for (size_t i = 0; i < f.both.size; i++)
        for (size_t m = 0; m < sizeof flip_masks; m++) {
            memcpy(copy, f.both.data, f.both.size);
            copy[i] ^= flip_masks[m];
            expect_damage(cdnn_graph_load(&g, h, copy, f.both.size), "container", i);
            expect_damage(cdnn_graph_load(&g, NULL, copy, f.both.size),
                          "container (as a graph)", i);
        }
    for (size_t n = 0; n < f.both.size; n += 7)
        assert_int_not_equal(cdnn_graph_load(&g, h, f.both.data, n), CDNN_STATUS_SUCCESS);
    print_message("refused %zu single-byte flips of a container\n", f.both.size);
    free(copy);
    free(f.graph.data);
    free(f.plan.data);
    free(f.both.data);
    cdnn_handle_destroy(h);
}

static void test_short_buffer_writes_nothing(void **state)
{
    (void)state;
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    cdnn_graph_t *g = load_example("conv_bias_relu.json");
    OK(cdnn_graph_build(g, h, NULL));
    size_t need = 0, got = 0;
    OK(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &need));
    uint8_t *buf = malloc(need);
    memset(buf, 0xab, need);
    assert_int_equal(cdnn_graph_save(g, CDNN_SAVE_PLAN, buf, need - 1, &got),
                     CDNN_STATUS_SIZE_INSUFFICIENT);
    assert_int_equal(got, need);
    for (size_t i = 0; i < need; i++)
        assert_int_equal(buf[i], 0xab);
    free(buf);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* Rule 6 needs two devices: a CPU plan executed through a CUDA handle. */
static void test_plan_bound_to_its_device(void **state)
{
    (void)state;
    cdnn_handle_t *cpu = NULL, *gpu = NULL;
    if (cdnn_handle_create(&gpu, "cuda:0") != CDNN_STATUS_SUCCESS)
        skip(); /* no GPU here: scripts/gpu-check.sh runs this */
    OK(cdnn_handle_create(&cpu, "cpu"));
    cdnn_graph_t *g = identity_graph();
    OK(cdnn_graph_build(g, cpu, NULL));
    float x[15] = {0}, y[15];
    int64_t uids[] = {1, 2};
    void *ptrs[] = {x, y};
    expect_refused(cdnn_graph_execute(g, gpu, 2, uids, ptrs, NULL),
                   CDNN_STATUS_DEVICE_MISMATCH, "built for cpu", "cuda:0");
    bytes_t plan = save(g, CDNN_SAVE_PLAN);
    cdnn_graph_t *loaded = NULL;
    expect_refused(cdnn_plan_load(&loaded, gpu, plan.data, plan.size),
                   CDNN_STATUS_DEVICE_MISMATCH, "CPU device", "cuda:0");
    free(plan.data);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(cpu);
    cdnn_handle_destroy(gpu);
}

/* Each test starts from the default provider search path, whatever the
 * one before it did (or failed to undo). */
static int default_path(void **state)
{
    (void)state;
    return cdnn_set_provider_path(NULL) == CDNN_STATUS_SUCCESS ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_every_example_round_trips, default_path),
        cmocka_unit_test_setup(test_saves_are_deterministic, default_path),
        cmocka_unit_test_setup(test_eight_threads_save_and_execute, default_path),
        cmocka_unit_test_setup(test_resave_does_not_call_provider, default_path),
        cmocka_unit_test_setup(test_unserved_engine_named, default_path),
        cmocka_unit_test_setup(test_provider_upgrade_changes_nothing, default_path),
        cmocka_unit_test_setup(test_save_checks_embedded_code, default_path),
        cmocka_unit_test_setup(test_strict_mode, default_path),
        cmocka_unit_test_setup(test_mixups_name_both_kinds, default_path),
        cmocka_unit_test_setup(test_random_bytes_refused, default_path),
        cmocka_unit_test_setup(test_damaged_plans_refused, default_path),
        cmocka_unit_test_setup(test_damaged_containers_refused, default_path),
        cmocka_unit_test_setup(test_short_buffer_writes_nothing, default_path),
        cmocka_unit_test_setup(test_plan_bound_to_its_device, default_path),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
