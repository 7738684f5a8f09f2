/*
 * test_kernels_provider.c -- the kernels provider on real kernel packs,
 * without a GPU (issue 10, "Must show" on CI):
 *
 *   - every ordered load check of a kernel payload refuses alone, in
 *     order, with its own message (forged, re-sealed plans);
 *   - a kernel built for x86-64-v4 is refused by the target check on a
 *     machine without AVX-512 (simulated with CDNN_KERNEL_HOST_LEVEL);
 *   - rule 2: a plan saved against pack v1 runs v1's code after the pack
 *     is replaced by v2, whose outputs differ; a fresh build runs v2;
 *   - rule 4: a pack changed on disk between build and save fails the
 *     save, naming pack and kernel, and writes nothing;
 *   - rule 10: strict mode refuses a plan whose code is in no installed
 *     pack and runs one whose code is;
 *   - every kernels:* host engine, every candidate: build, run against
 *     cpu:reference over shapes, strides, dtypes and epilogues, save as a
 *     plan and a container, load in a fresh process, run, re-save byte for
 *     byte (softmax and log-softmax too, and their rows holding -inf).
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "test_filter.h"

#include <cdnn/cdnn.h>
#include <cdnn_sdk/numeric.h>
#include <cdnn_sdk/sha256.h>

#include "kp_forge.h"
#include "kp_graphs.h"
#include "kp_util.h"

#define OK(call)                                                                      \
    do {                                                                              \
        cdnn_status_t st_ = (call);                                                   \
        if (st_ != CDNN_STATUS_SUCCESS)                                               \
            fail_msg("%s: %s: %s", #call, cdnn_status_string(st_), cdnn_last_error());  \
    } while (0)

#define MATMUL_ENGINE "kernels:matmul_host"
#define POINTWISE_ENGINE "kernels:pointwise_host"
#define NORM_ENGINE "kernels:norm_host"
#define REDUCE_ENGINE "kernels:reduce_host"
#define SOFTMAX_ENGINE "kernels:softmax_host"
#define MARKED_ENGINE "kernels:marked_matmul"

static char matmul_dir[256], marked_dir[256], marked_pack[300];

static void use_kernel_path(const char *dir)
{
    setenv("CDNN_KERNEL_PATH", dir, 1);
}

static int setup(void **state)
{
    (void)state;
    snprintf(matmul_dir, sizeof matmul_dir, "%s/matmul", kp_temp_dir());
    snprintf(marked_dir, sizeof marked_dir, "%s/marked", kp_temp_dir());
    snprintf(marked_pack, sizeof marked_pack, "%s/marked.kpack", marked_dir);
    if (mkdir(matmul_dir, 0700) != 0 || mkdir(marked_dir, 0700) != 0)
        return -1;
    kp_write_host_pack(matmul_dir, "host.kpack");
    setenv("CDNN_PROVIDER_PATH", PROVIDER_DIR, 1);
    setenv("CDNN_DISABLE_CACHE", "1", 1);
    unsetenv("CDNN_TRUSTED_CODE");
    use_kernel_path(matmul_dir);
    return 0;
}

/* Before each test: the host pack, no strict mode, whatever an earlier
 * test (passing or not) left. */
static int reset_environment(void **state)
{
    (void)state;
    use_kernel_path(matmul_dir);
    unsetenv("CDNN_TRUSTED_CODE");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kp_cleanup();
    return 0;
}

/* A small matmul with every epilogue step the marked kernel has. */
static const kp_matmul_t marked_case = {1, {2, 0}, 5, 7, 3, CDNN_DATA_TYPE_F32,
                                        .bias = 1, .act = CDNN_PW_RELU_FWD, .residual = 1};

/* ---- engines ------------------------------------------------------------------------ */

static void test_engines_come_from_packs(void **state)
{
    (void)state;
    cdnn_knob_info_t knob;
    int32_t knobs = 0;
    cdnn_handle_t *h = kp_cpu_handle();
    int32_t i = kp_engine_index(h, MATMUL_ENGINE);
    assert_true(i >= 0);
    assert_int_equal(kp_engine_index(h, MARKED_ENGINE), -1);
    OK(cdnn_handle_engine_knob_count(h, i, &knobs));
    assert_int_equal(knobs, 1);
    OK(cdnn_handle_engine_knob_info(h, i, 0, &knob));
    assert_string_equal(knob.name, "kernels.matmul_host.candidate");
    assert_true(knob.max_value >= 3);
    cdnn_handle_destroy(h);
}

/* Log lines, kept for a test to read. */
static char logged[8192];

static void keep_log(cdnn_log_level_t level, const char *message, void *user)
{
    (void)level;
    (void)user;
    size_t used = strlen(logged);
    snprintf(logged + used, sizeof logged - used, "%s\n", message);
}

/* Engine entries this provider cannot run are skipped, each with a log
 * line saying why; a descriptor's one knob is the candidate knob. */
static void test_engines_unknown_entries_skipped(void **state)
{
    (void)state;
    char dir[300], path[320];
    const cdnn_knob_info_t tile = {"kernels.marked.tile", "which candidate", 0, 3, 0};
    const cdnn_knob_info_t two[] = {tile, {"kernels.marked.other", "", 0, 1, 0}};
    const kp_engine_entry_t entries[] = {
        {"kernels:good", "matmul_epilogue", "host_matmul", 1, 1, &tile},
        {"kernels:no_match", "no_such_match", "host_matmul", 1, 0, NULL},
        {"kernels:no_handler", "matmul_epilogue", "no_such_handler", 1, 0, NULL},
        {"kernels:newer_handler", "matmul_epilogue", "host_matmul", 9, 0, NULL},
        {"kernels:two_knobs", "matmul_epilogue", "host_matmul", 1, 2, two},
        {"other:engine", "matmul_epilogue", "host_matmul", 1, 0, NULL},
    };
    cdnn_knob_info_t knob;
    snprintf(dir, sizeof dir, "%s/engines", kp_temp_dir());
    snprintf(path, sizeof path, "%s/engines.kpack", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    kp_write_marked_engines_pack(path, entries, 6);
    use_kernel_path(dir);
    logged[0] = 0;
    cdnn_set_log_callback(keep_log, CDNN_LOG_WARNING, NULL);
    cdnn_handle_t *h = kp_cpu_handle();
    cdnn_set_log_callback(NULL, CDNN_LOG_WARNING, NULL);
    int32_t good = kp_engine_index(h, "kernels:good");
    assert_true(good >= 0);
    OK(cdnn_handle_engine_knob_info(h, good, 0, &knob));
    assert_string_equal(knob.name, "kernels.marked.tile");
    for (size_t i = 1; i < sizeof entries / sizeof *entries; i++) {
        assert_int_equal(kp_engine_index(h, entries[i].name), -1);
        if (!strstr(logged, entries[i].name))
            fail_msg("no log line names skipped engine %s:\n%s", entries[i].name, logged);
    }
    assert_non_null(strstr(logged, "its match function is not one this provider has"));
    assert_non_null(strstr(logged, "its dispatch handler (name and version)"));
    cdnn_handle_destroy(h);
}

/* Bytes loaded in a fresh process run as the built plan did, and re-save
 * to themselves. */
static void assert_fresh_process_agrees(kp_bytes_t bytes, const kp_run_t *built,
                                        const char *label)
{
    kp_child_t c = kp_in_child(bytes, NULL);
    if (c.status != CDNN_STATUS_SUCCESS)
        fail_msg("%s: the saved bytes did not load: %s", label, c.message);
    kp_assert_same_outputs(&c.run, built);
    assert_true(c.resaved_same);
    kp_child_free(&c);
}

/* Eight threads execute one plan at once, each with its own buffers, and
 * see what one thread alone sees. */
typedef struct shared_run {
    cdnn_graph_t *g;
    cdnn_handle_t *h;
    kp_run_t run;
    cdnn_status_t status;
} shared_run_t;

static void *execute_shared(void *p)
{
    shared_run_t *s = p;
    s->status = kp_run_execute(s->g, s->h, &s->run);
    return NULL;
}

/* g, built on h, run by eight threads at once as by one alone. */
static void assert_eight_threads_agree(cdnn_graph_t *g, cdnn_handle_t *h)
{
    shared_run_t runs[8];
    pthread_t threads[8];
    kp_run_t alone = kp_run_graph(g, h);
    for (int i = 0; i < 8; i++) {
        runs[i] = (shared_run_t){g, h, kp_run_prepare(g), CDNN_STATUS_SUCCESS};
        assert_int_equal(pthread_create(&threads[i], NULL, execute_shared, &runs[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(threads[i], NULL);
        assert_int_equal(runs[i].status, CDNN_STATUS_SUCCESS);
        kp_assert_same_outputs(&runs[i].run, &alone);
        kp_run_free(&runs[i].run);
    }
    kp_run_free(&alone);
}

/* A matmul plan and every softmax plan (rows of 5000 among them, on the
 * buffered entry's recomputing fallback), each run by eight threads. */
static void test_engines_eight_threads_execute(void **state)
{
    (void)state;
    const kp_matmul_t m = {1, {3, 0}, 40, 24, 56, CDNN_DATA_TYPE_F32, .bias = 1,
                           .act = CDNN_PW_GELU_FWD, .residual = 1};
    cdnn_handle_t *h = kp_cpu_handle();
    cdnn_graph_t *g = kp_matmul_graph(&m);
    kp_build_pinned(g, h, MATMUL_ENGINE, NULL, 0);
    assert_eight_threads_agree(g, h);
    cdnn_graph_destroy(g);
    for (int i = 0; i < kp_softmax_case_count; i++) {
        g = kp_softmax_cases[i].make(NULL);
        kp_build_pinned(g, h, SOFTMAX_ENGINE, NULL, 0);
        assert_eight_threads_agree(g, h);
        cdnn_graph_destroy(g);
    }
    cdnn_handle_destroy(h);
}

/* Benchmarking times every candidate kernel that applies (each a variant
 * of the candidate knob), chooses, and the choice saves and loads. */
static void test_engines_benchmarking_times_every_candidate(void **state)
{
    (void)state;
    const kp_matmul_t m = {0, {0, 0}, 48, 64, 32, CDNN_DATA_TYPE_F32, .bias = 1,
                           .act = CDNN_PW_RELU_FWD};
    cdnn_candidate_result_t results[32];
    int32_t count = 0, chosen = -1, knobbed = 0;
    cdnn_handle_t *h = kp_cpu_handle();
    cdnn_graph_t *g = kp_matmul_graph(&m);
    kp_build_pinned(g, h, MATMUL_ENGINE, "global.benchmarking", 1);
    kp_run_t r = kp_run_graph(g, h);
    OK(cdnn_graph_candidates(g, results, 32, &count, &chosen));
    assert_int_equal(chosen, 0);
    assert_true(count >= 3);
    for (int32_t i = 0; i < count; i++) {
        assert_true(results[i].median_us >= 0);
        knobbed += strstr(results[i].name, "kernels.matmul_host.candidate=") != NULL;
    }
    assert_int_equal(knobbed, count - 1); /* the default, and one per other */
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    assert_fresh_process_agrees(plan, &r, "benchmarked");
    kp_bytes_free(&plan);
    kp_run_free(&r);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* ---- round trips ---------------------------------------------------------------------- */

static const kp_matmul_t round_trip_cases[] = {
    {0, {0, 0}, 7, 9, 5, CDNN_DATA_TYPE_F32, .act = CDNN_PW_IDENTITY},
    {1, {3, 0}, 5, 17, 13, CDNN_DATA_TYPE_F32, .b_transposed = 1, .bias = 1,
     .act = CDNN_PW_GELU_FWD},
    {2, {2, 3}, 4, 6, 8, CDNN_DATA_TYPE_F16, .b_shared = 1, .bias = 1,
     .act = CDNN_PW_RELU_FWD, .residual = 1},
    {0, {0, 0}, 33, 40, 19, CDNN_DATA_TYPE_BF16, .a_pad = 3, .act = CDNN_PW_SWISH_FWD,
     .residual = 1},
    {1, {2, 0}, 1, 1, 1, CDNN_DATA_TYPE_F32, .act = CDNN_PW_TANH_FWD},
    {0, {0, 0}, 64, 64, 64, CDNN_DATA_TYPE_F32, .bias = 1, .act = CDNN_PW_GELU_TANH_FWD},
};

static cdnn_graph_t *make_matmul(const void *spec)
{
    return kp_matmul_graph(spec);
}

/* The reference's outputs for the graph on the same inputs. */
static kp_run_t reference_run(kp_make_graph_t make, const void *spec, cdnn_handle_t *h)
{
    cdnn_graph_t *g = make(spec);
    kp_build_pinned(g, h, "cpu:reference", NULL, 0);
    kp_run_t r = kp_run_graph(g, h);
    cdnn_graph_destroy(g);
    return r;
}

/* Built on engine (with knob=candidate when knob is not NULL), run against
 * cpu:reference, saved as a plan and a container, each loaded and run in
 * a fresh process as the build ran and re-saved byte for byte. */
static void round_trip(kp_make_graph_t make, const void *spec, const char *label,
                       cdnn_handle_t *h, const char *engine, const char *knob,
                       int64_t candidate)
{
    cdnn_graph_t *g = make(spec);
    kp_build_pinned(g, h, engine, knob, candidate);
    kp_run_t built = kp_run_graph(g, h), want = reference_run(make, spec, h);
    kp_assert_close_outputs(&built, &want, label);
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    kp_bytes_t container = kp_save(g, CDNN_SAVE_GRAPH_AND_PLAN);
    assert_fresh_process_agrees(plan, &built, label);
    assert_fresh_process_agrees(container, &built, label);
    kp_bytes_free(&plan);
    kp_bytes_free(&container);
    kp_run_free(&built);
    kp_run_free(&want);
    cdnn_graph_destroy(g);
}

/* The first `want` values of engine's candidate knob (from 1) whose kernel
 * runs on this machine, probed by building make(spec) pinned to each: the
 * candidates come best ISA level first, and one whose code needs a level
 * this CPU lacks (x86-64-v4 on a v3 machine) is refused NOT_SUPPORTED and
 * passed over -- any other failure fails the test.  How many were found. */
static int applicable_candidates(cdnn_handle_t *h, const char *engine, kp_make_graph_t make,
                                 const void *spec, int64_t *found, int want)
{
    cdnn_knob_info_t knob;
    OK(cdnn_handle_engine_knob_info(h, kp_engine_index(h, engine), 0, &knob));
    int count = 0;
    for (int64_t c = 1; c <= knob.max_value && count < want; c++) {
        cdnn_graph_t *probe = make(spec);
        cdnn_build_options_t *opts = NULL;
        OK(cdnn_build_options_create(&opts));
        OK(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(engine)));
        OK(cdnn_build_options_set_knob(opts, knob.name, c));
        cdnn_status_t st = cdnn_graph_build(probe, h, opts);
        cdnn_build_options_destroy(opts);
        cdnn_graph_destroy(probe);
        if (st == CDNN_STATUS_SUCCESS)
            found[count++] = c;
        else if (st != CDNN_STATUS_NOT_SUPPORTED || !strstr(cdnn_last_error(), "CPU"))
            fail_msg("%s candidate %lld: %s: %s", engine, (long long)c, cdnn_status_string(st),
                     cdnn_last_error());
    }
    return count;
}

/* The case on the engine's default kernel and on the first two candidates
 * that run here (the two entries of the best ISA level this CPU has). */
static void round_trip_default_and_two(const kp_graph_case_t *gc, cdnn_handle_t *h,
                                       const char *engine, const char *knob)
{
    int64_t c[2];
    assert_int_equal(applicable_candidates(h, engine, gc->make, NULL, c, 2), 2);
    round_trip(gc->make, NULL, gc->label, h, engine, NULL, 0);
    for (int i = 0; i < 2; i++)
        round_trip(gc->make, NULL, gc->label, h, engine, knob, c[i]);
}

static void round_trip_matmul(const kp_matmul_t *m, cdnn_handle_t *h, int64_t candidate)
{
    round_trip(make_matmul, m, kp_matmul_label(m), h, MATMUL_ENGINE,
               "kernels.matmul_host.candidate", candidate);
}

static void test_round_trip_every_shape(void **state)
{
    (void)state;
    cdnn_handle_t *h = kp_cpu_handle();
    for (size_t i = 0; i < sizeof round_trip_cases / sizeof *round_trip_cases; i++)
        round_trip_matmul(&round_trip_cases[i], h, 0);
    cdnn_handle_destroy(h);
}

static void test_round_trip_pointwise(void **state)
{
    (void)state;
    cdnn_handle_t *h = kp_cpu_handle();
    if (kp_engine_index(h, POINTWISE_ENGINE) < 0) {
        cdnn_handle_destroy(h);
        skip(); /* no pointwise objects were built */
    }
    for (int i = 0; i < kp_pointwise_case_count; i++)
        round_trip_default_and_two(&kp_pointwise_cases[i], h, POINTWISE_ENGINE,
                                   "kernels.pointwise_host.candidate");
    cdnn_handle_destroy(h);
}

static void test_round_trip_norms(void **state)
{
    (void)state;
    cdnn_handle_t *h = kp_cpu_handle();
    if (kp_engine_index(h, NORM_ENGINE) < 0) {
        cdnn_handle_destroy(h);
        skip(); /* no norm objects were built */
    }
    for (int i = 0; i < kp_norm_case_count; i++)
        round_trip_default_and_two(&kp_norm_cases[i], h, NORM_ENGINE,
                                   "kernels.norm_host.candidate");
    cdnn_handle_destroy(h);
}

static void test_round_trip_reductions(void **state)
{
    (void)state;
    cdnn_handle_t *h = kp_cpu_handle();
    if (kp_engine_index(h, REDUCE_ENGINE) < 0) {
        cdnn_handle_destroy(h);
        skip(); /* no reduction objects were built */
    }
    for (int i = 0; i < kp_reduction_case_count; i++)
        round_trip(kp_reduction_cases[i].make, NULL, kp_reduction_cases[i].label, h,
                   REDUCE_ENGINE, NULL, 0);
    cdnn_handle_destroy(h);
}

/* Every softmax case on the default kernel and the first two candidates
 * that run here (the buffered and the recomputing entry at the best ISA
 * level this CPU has). */
static void test_round_trip_softmax(void **state)
{
    (void)state;
    cdnn_handle_t *h = kp_cpu_handle();
    assert_true(kp_engine_index(h, SOFTMAX_ENGINE) >= 0);
    for (int i = 0; i < kp_softmax_case_count; i++)
        round_trip_default_and_two(&kp_softmax_cases[i], h, SOFTMAX_ENGINE,
                                   "kernels.softmax_host.candidate");
    cdnn_handle_destroy(h);
}

/* x of rows x 37 with -inf in it: every third element of row 0, all but
 * element 5 of row 1, all of row 2 (no softmax: NaN, as the reference);
 * the other rows as filled. */
#define INF_COLS 37
static void put_minus_infinity(kp_run_t *r)
{
    for (int32_t i = 0; i < r->count; i++) {
        if (r->io[i].uid != 1)
            continue;
        size_t elem = cdnn_data_type_size(r->io[i].type);
        for (int64_t j = 0; j < INF_COLS; j++) {
            char *row = (char *)r->ptrs[i] + (size_t)j * elem;
            if (j % 3 == 0)
                cdnn_store_element(r->io[i].type, row, -INFINITY);
            if (j != 5)
                cdnn_store_element(r->io[i].type, row + INF_COLS * elem, -INFINITY);
            cdnn_store_element(r->io[i].type, row + 2 * INF_COLS * elem, -INFINITY);
        }
    }
}

/* The built run's y against the reference's: NaN where it has NaN, the
 * same infinity where it has one, else within the type's tolerance. */
static void assert_close_nonfinite(const kp_run_t *got, const kp_run_t *want, double tolerance,
                                   const char *label)
{
    for (int32_t i = 0; i < want->count; i++) {
        const cdnn_tensor_io_t *t = &want->io[i];
        size_t elem = cdnn_data_type_size(t->type), n = t->span_bytes / elem;
        for (size_t e = 0; t->is_output && e < n; e++) {
            double x = cdnn_load_element(t->type, (char *)got->ptrs[i] + e * elem);
            double y = cdnn_load_element(t->type, (char *)want->ptrs[i] + e * elem);
            int ok = isnan(y) ? isnan(x) : isinf(y) ? x == y : fabs(x - y) <= tolerance;
            if (!ok)
                fail_msg("%s: y element %zu is %.7g, the reference %.7g", label, e, x, y);
        }
    }
}

static void minus_infinity_case(cdnn_handle_t *h, int log, cdnn_data_type_t type,
                                int64_t candidate)
{
    const int64_t dims[] = {5, INF_COLS};
    char label[96];
    snprintf(label, sizeof label, "%s %s with -inf, candidate %lld",
             log ? "log-softmax" : "softmax", cdnn_data_type_name(type), (long long)candidate);
    kp_run_t runs[2];
    for (int r = 0; r < 2; r++) {
        cdnn_graph_t *g = NULL;
        OK(cdnn_graph_create(&g));
        OK(cdnn_graph_tensor(g, 1, "x", type, 2, dims, NULL));
        OK(cdnn_graph_tensor(g, 2, "y", type, 2, dims, NULL));
        OK(log ? cdnn_graph_log_softmax(g, "s", -1, 1, 2) : cdnn_graph_softmax(g, "s", -1, 1, 2));
        if (r == 0)
            kp_build_pinned(g, h, SOFTMAX_ENGINE, "kernels.softmax_host.candidate", candidate);
        else
            kp_build_pinned(g, h, "cpu:reference", NULL, 0);
        runs[r] = kp_run_prepare(g);
        put_minus_infinity(&runs[r]);
        OK(kp_run_execute(g, h, &runs[r]));
        cdnn_graph_destroy(g);
    }
    assert_close_nonfinite(&runs[0], &runs[1], type == CDNN_DATA_TYPE_F32 ? 1e-5 : 3e-2,
                           label);
    kp_run_free(&runs[0]);
    kp_run_free(&runs[1]);
}

/* Rows holding -inf: those elements give 0 (log: -inf), the rest as
 * though they were absent; a row of -inf only gives NaN as cpu:reference
 * does.  Both entries (of the best ISA level here), f32 and bf16, softmax
 * and log-softmax. */
static void test_round_trip_softmax_minus_infinity(void **state)
{
    (void)state;
    cdnn_handle_t *h = kp_cpu_handle();
    int64_t c[2];
    assert_int_equal(applicable_candidates(h, SOFTMAX_ENGINE, kp_softmax_cases[0].make, NULL,
                                           c, 2), 2);
    for (int log = 0; log <= 1; log++)
        for (int i = 0; i < 2; i++) {
            minus_infinity_case(h, log, CDNN_DATA_TYPE_F32, c[i]);
            minus_infinity_case(h, log, CDNN_DATA_TYPE_BF16, c[i]);
        }
    cdnn_handle_destroy(h);
}

/* What the softmax kernels do not take is left to other engines, with a
 * reason: f64 data. */
static void test_round_trip_softmax_refusals(void **state)
{
    (void)state;
    const int64_t dims[] = {3, 8};
    cdnn_handle_t *h = kp_cpu_handle();
    cdnn_graph_t *g = NULL;
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_graph_create(&g));
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F64, 2, dims, NULL));
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_F64, 2, dims, NULL));
    OK(cdnn_graph_softmax(g, "s", -1, 1, 2));
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(SOFTMAX_ENGINE)));
    assert_int_equal(cdnn_graph_build(g, h, opts), CDNN_STATUS_NOT_SUPPORTED);
    if (!strstr(cdnn_last_error(), "'x' is f64"))
        fail_msg("the refusal does not name x's type: %s", cdnn_last_error());
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* Every candidate kernel this machine runs, chosen by the candidate knob. */
static void test_round_trip_every_candidate(void **state)
{
    (void)state;
    cdnn_handle_t *h = kp_cpu_handle();
    const kp_matmul_t m = {1, {2, 0}, 29, 31, 37, CDNN_DATA_TYPE_F32, .bias = 1,
                           .act = CDNN_PW_GELU_FWD, .residual = 1};
    int64_t found[64];
    int ran = applicable_candidates(h, MATMUL_ENGINE, make_matmul, &m, found, 64);
    for (int i = 0; i < ran; i++)
        round_trip_matmul(&m, h, found[i]);
    assert_true(ran >= 3);
    cdnn_handle_destroy(h);
}

/* ---- rule 2 ------------------------------------------------------------------------------- */

/* The marked case built on the marked engine and run. */
static kp_run_t build_marked(cdnn_handle_t *h, cdnn_graph_t **g)
{
    *g = kp_matmul_graph(&marked_case);
    kp_build_pinned(*g, h, MARKED_ENGINE, NULL, 0);
    return kp_run_graph(*g, h);
}

static double reference_first(void)
{
    cdnn_handle_t *h = kp_cpu_handle();
    kp_run_t r = reference_run(make_matmul, &marked_case, h);
    double first = kp_first_output(&r);
    kp_run_free(&r);
    cdnn_handle_destroy(h);
    return first;
}

/* The v1 plan loaded in a process that runs v2's code for a live build:
 * both code objects export one symbol name, and each plan still runs its
 * own. */
static void assert_v1_plan_runs_beside(cdnn_handle_t *h, kp_bytes_t plan, const kp_run_t *v1)
{
    cdnn_graph_t *loaded = NULL;
    OK(cdnn_plan_load(&loaded, h, plan.data, plan.size));
    kp_run_t r = kp_run_graph(loaded, h);
    kp_assert_same_outputs(&r, v1);
    kp_run_free(&r);
    cdnn_graph_destroy(loaded);
}

static void test_rule2_saved_plan_runs_its_code(void **state)
{
    (void)state;
    cdnn_graph_t *g = NULL;
    double want = reference_first();
    use_kernel_path(marked_dir);
    kp_write_marked_pack(marked_pack, 1);
    cdnn_handle_t *h = kp_cpu_handle();
    kp_run_t v1 = build_marked(h, &g);
    assert_float_equal(kp_first_output(&v1), want + 1, 1e-4);
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);

    kp_write_marked_pack(marked_pack, 2); /* the pack is upgraded */
    kp_child_t c = kp_in_child(plan, NULL);
    if (c.status != CDNN_STATUS_SUCCESS)
        fail_msg("the v1 plan did not load beside pack v2: %s", c.message);
    kp_assert_same_outputs(&c.run, &v1); /* v1's code ran */
    assert_true(c.resaved_same);

    h = kp_cpu_handle(); /* a fresh build picks v2 */
    kp_run_t v2 = build_marked(h, &g);
    assert_float_equal(kp_first_output(&v2), want + 2, 1e-4);
    assert_v1_plan_runs_beside(h, plan, &v1);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    kp_run_free(&v1);
    kp_run_free(&v2);
    kp_child_free(&c);
    kp_bytes_free(&plan);
}

/* ---- rule 4 ------------------------------------------------------------------------------- */

static void test_rule4_pack_changed_before_save(void **state)
{
    (void)state;
    cdnn_graph_t *g = NULL;
    uint8_t buf[4096];
    size_t size = 0;
    use_kernel_path(marked_dir);
    kp_write_marked_pack(marked_pack, 1);
    cdnn_handle_t *h = kp_cpu_handle();
    kp_run_t r = build_marked(h, &g);
    kp_write_marked_pack(marked_pack, 2); /* replaced between build and save */
    memset(buf, 0xa5, sizeof buf);
    cdnn_status_t st = cdnn_graph_save(g, CDNN_SAVE_PLAN, buf, sizeof buf, &size);
    assert_int_not_equal(st, CDNN_STATUS_SUCCESS);
    assert_non_null(strstr(cdnn_last_error(), marked_pack));
    assert_non_null(strstr(cdnn_last_error(), "marked_matmul"));
    for (size_t i = 0; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xa5); /* nothing written */
    assert_int_not_equal(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &size),
                         CDNN_STATUS_SUCCESS);

    kp_write_marked_pack(marked_pack, 1); /* the build's pack again: it saves */
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    kp_bytes_free(&plan);
    kp_run_free(&r);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* ---- rule 10 ------------------------------------------------------------------------------ */

static void test_rule10_strict_mode(void **state)
{
    (void)state;
    cdnn_graph_t *g = NULL;
    const char *const strict[] = {"CDNN_TRUSTED_CODE=pack", NULL};
    use_kernel_path(marked_dir);
    kp_write_marked_pack(marked_pack, 1);
    cdnn_handle_t *h = kp_cpu_handle();
    kp_run_t r = build_marked(h, &g);
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);

    kp_child_t trusted = kp_in_child(plan, strict); /* v1's code is installed */
    if (trusted.status != CDNN_STATUS_SUCCESS)
        fail_msg("strict mode refused installed code: %s", trusted.message);
    kp_assert_same_outputs(&trusted.run, &r);

    kp_write_marked_pack(marked_pack, 2); /* now v1's code is in no pack */
    kp_child_t refused = kp_in_child(plan, strict);
    assert_int_equal(refused.status, CDNN_STATUS_NOT_SUPPORTED);
    assert_non_null(strstr(refused.message, "in no kernel pack installed here"));
    kp_child_t lax = kp_in_child(plan, NULL); /* without strict mode it runs */
    assert_int_equal(lax.status, CDNN_STATUS_SUCCESS);

    kp_child_free(&trusted);
    kp_child_free(&refused);
    kp_child_free(&lax);
    kp_run_free(&r);
    kp_bytes_free(&plan);
}

/* ---- the ordered load checks ------------------------------------------------------------ */

/* A plan built on the matmul engine, for forging. */
static kp_bytes_t matmul_plan(void)
{
    const kp_matmul_t m = {1, {2, 0}, 6, 5, 4, CDNN_DATA_TYPE_F32, .bias = 1,
                           .act = CDNN_PW_RELU_FWD};
    cdnn_handle_t *h = kp_cpu_handle();
    cdnn_graph_t *g = kp_matmul_graph(&m);
    kp_build_pinned(g, h, MATMUL_ENGINE, NULL, 0);
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    return plan;
}

/* Load plan bytes whose payload is forged; expect status and words. */
static void expect_refused(cdnn_handle_t *h, kp_bytes_t plan, kp_bytes_t payload,
                           cdnn_status_t status, const char *words, const char *what)
{
    cdnn_graph_t *g = NULL;
    kp_bytes_t forged = kp_plan_with_payload(plan, payload);
    cdnn_status_t st = cdnn_plan_load(&g, h, forged.data, forged.size);
    if (st != status || !strstr(cdnn_last_error(), words))
        fail_msg("%s: expected %s with \"%s\", got %s: %s", what, cdnn_status_string(status),
                 words, cdnn_status_string(st), cdnn_last_error());
    assert_null(g);
    kp_bytes_free(&forged);
}

typedef void (*payload_edit_t)(kp_payload_t *p);
typedef void (*byte_edit_t)(kp_bytes_t *payload);

static void no_field_edit(kp_payload_t *p)
{
    (void)p;
}
static void no_byte_edit(kp_bytes_t *b)
{
    (void)b;
}

/* Byte edits of the header and body (checks 1-7). */
static void truncate_header(kp_bytes_t *b)
{
    b->size = 40;
}
static void bad_marker(kp_bytes_t *b)
{
    memcpy(b->data, "CDKX", 4);
}
static void newer_major(kp_bytes_t *b)
{
    b->data[4] = 2;
}
static void newer_minor(kp_bytes_t *b)
{
    b->data[6] = 1;
}
static void unknown_kind(kp_bytes_t *b)
{
    b->data[12] = 7;
}
static void wrong_header_size(kp_bytes_t *b)
{
    b->data[8] = 72;
}
static void flipped_body_byte(kp_bytes_t *b)
{
    b->data[b->size - 1] ^= 0x40;
}
static void wrong_identifier(kp_bytes_t *b)
{
    memcpy(b->data + 64 + 4, "XXXX", 4);
    kp_payload_reseal(*b);
}
static void broken_root(kp_bytes_t *b)
{
    memset(b->data + 64, 0xff, 4);
    kp_payload_reseal(*b);
}
static void marker_and_major(kp_bytes_t *b)
{
    bad_marker(b);
    newer_major(b);
}

/* Field edits (checks 8-14). */
static void no_engine(kp_payload_t *p)
{
    kp_payload_set(&p->engine, NULL);
}
static void wrong_code_sha(kp_payload_t *p)
{
    p->kernel_sha256[0] ^= 1;
}
static void other_engine(kp_payload_t *p)
{
    kp_payload_set(&p->engine, "kernels:other");
    p->engine_id = cdnn_engine_id_from_name("kernels:other");
}
static void unknown_target(kp_payload_t *p)
{
    kp_payload_set(&p->target, "x86-64-v9");
}
static void newer_handler(kp_payload_t *p)
{
    p->handler_version = 2;
}
static void other_signature(kp_payload_t *p)
{
    kp_payload_set(&p->signature, "host-pointwise-v1");
}
static void other_metadata(kp_payload_t *p)
{
    assert_true(p->metadata_count > 0);
    kp_payload_set(&p->values[0], "forged");
}
static void other_m(kp_payload_t *p)
{
    p->launch_values[3]++;
}
static void missing_symbol(kp_payload_t *p)
{
    kp_payload_set(&p->symbol, "cdnn_host_nothing_here");
}
static void garbage_code(kp_payload_t *p)
{
    memset(p->code.data, 0x5a, p->code.size);
    assert_int_equal(sdk_sha256(p->code.data, p->code.size, p->kernel_sha256), 0);
}
static void target_and_handler(kp_payload_t *p)
{
    unknown_target(p);
    newer_handler(p);
}
static void handler_and_signature(kp_payload_t *p)
{
    newer_handler(p);
    other_signature(p);
}
static void signature_and_values(kp_payload_t *p)
{
    other_signature(p);
    other_m(p);
}
static void values_and_symbol(kp_payload_t *p)
{
    other_m(p);
    missing_symbol(p);
}

typedef struct forgery {
    const char *what;
    payload_edit_t edit_fields;
    byte_edit_t edit_bytes;
    cdnn_status_t status;
    const char *words;
} forgery_t;

static const forgery_t forgeries[] = {
    {"1 header", no_field_edit, truncate_header, CDNN_STATUS_CORRUPT_DATA,
     "shorter than its 64-byte header"},
    {"2 marker", no_field_edit, bad_marker, CDNN_STATUS_CORRUPT_DATA, "its marker is"},
    {"3 version (major)", no_field_edit, newer_major, CDNN_STATUS_NOT_SUPPORTED,
     "kernel payload is in format 2.0"},
    {"3 version (minor)", no_field_edit, newer_minor, CDNN_STATUS_NOT_SUPPORTED,
     "kernel payload is in format 1.1"},
    {"4 kind", no_field_edit, unknown_kind, CDNN_STATUS_CORRUPT_DATA, "its kind is 7"},
    {"5 sizes", no_field_edit, wrong_header_size, CDNN_STATUS_CORRUPT_DATA,
     "its header says 72 header bytes"},
    {"6 body SHA-256", no_field_edit, flipped_body_byte, CDNN_STATUS_CORRUPT_DATA,
     "the SHA-256 of its body"},
    {"7 identifier", no_field_edit, wrong_identifier, CDNN_STATUS_CORRUPT_DATA,
     "its body's identifier is not"},
    {"7 verifier", no_field_edit, broken_root, CDNN_STATUS_CORRUPT_DATA,
     "its body does not verify"},
    {"8 fields (missing)", no_engine, no_byte_edit, CDNN_STATUS_CORRUPT_DATA,
     "KernelPayload.engine is missing"},
    {"8 fields (code digest)", wrong_code_sha, no_byte_edit, CDNN_STATUS_CORRUPT_DATA,
     "the SHA-256 of its code object is not its kernel_sha256"},
    {"9 engine", other_engine, no_byte_edit, CDNN_STATUS_CORRUPT_DATA,
     "it is for engine kernels:other"},
    {"10 target", unknown_target, no_byte_edit, CDNN_STATUS_NOT_SUPPORTED,
     "target \"x86-64-v9\", which this provider does not know"},
    {"11 handler", newer_handler, no_byte_edit, CDNN_STATUS_NOT_SUPPORTED,
     "handler host_matmul version 2"},
    {"12 signature", other_signature, no_byte_edit, CDNN_STATUS_CORRUPT_DATA,
     "signature is host-pointwise-v1"},
    /* the installed code under a description its pack does not give it */
    {"12 installed code", other_metadata, no_byte_edit, CDNN_STATUS_CORRUPT_DATA,
     "is installed here as kernel"},
    {"13 launch values", other_m, no_byte_edit, CDNN_STATUS_CORRUPT_DATA,
     "its launch value 3 is"},
    {"14 symbol", missing_symbol, no_byte_edit, CDNN_STATUS_CORRUPT_DATA,
     "has no symbol cdnn_host_nothing_here"},
    {"14 code object", garbage_code, no_byte_edit, CDNN_STATUS_CORRUPT_DATA, "does not load"},
    /* Two faults: the earlier check speaks. */
    {"2 before 3", no_field_edit, marker_and_major, CDNN_STATUS_CORRUPT_DATA, "its marker is"},
    {"10 before 11", target_and_handler, no_byte_edit, CDNN_STATUS_NOT_SUPPORTED,
     "x86-64-v9"},
    {"11 before 12", handler_and_signature, no_byte_edit, CDNN_STATUS_NOT_SUPPORTED,
     "handler host_matmul version 2"},
    {"12 before 13", signature_and_values, no_byte_edit, CDNN_STATUS_CORRUPT_DATA,
     "signature is host-pointwise-v1"},
    {"13 before 14", values_and_symbol, no_byte_edit, CDNN_STATUS_CORRUPT_DATA,
     "its launch value 3 is"},
};

/* The forger's own untouched payload loads: each refusal is its edit's. */
static void assert_unedited_forgery_loads(cdnn_handle_t *h, kp_bytes_t plan)
{
    cdnn_graph_t *g = NULL;
    kp_payload_t p = kp_payload_of_plan(plan);
    kp_bytes_t payload = kp_payload_bytes(&p);
    kp_bytes_t same = kp_plan_with_payload(plan, payload);
    OK(cdnn_plan_load(&g, h, same.data, same.size));
    kp_run_t r = kp_run_graph(g, h);
    kp_run_free(&r);
    cdnn_graph_destroy(g);
    kp_bytes_free(&same);
    kp_bytes_free(&payload);
    kp_payload_free(&p);
}

static void test_every_load_check_refuses_alone(void **state)
{
    (void)state;
    kp_bytes_t plan = matmul_plan();
    cdnn_handle_t *h = kp_cpu_handle();
    assert_unedited_forgery_loads(h, plan);
    for (size_t i = 0; i < sizeof forgeries / sizeof *forgeries; i++) {
        const forgery_t *f = &forgeries[i];
        kp_payload_t p = kp_payload_of_plan(plan);
        f->edit_fields(&p);
        kp_bytes_t payload = kp_payload_bytes(&p);
        size_t size = payload.size;
        f->edit_bytes(&payload);
        expect_refused(h, plan, payload, f->status, f->words, f->what);
        payload.size = size;
        kp_bytes_free(&payload);
        kp_payload_free(&p);
    }
    cdnn_handle_destroy(h);
    kp_bytes_free(&plan);
}

/* ---- a v4 kernel without AVX-512 ---------------------------------------------------------- */

/* The plan with its code swapped for the x86-64-v4 build of a tile: a
 * consistent plan (the launch values do not depend on the tile). */
static kp_bytes_t v4_plan(kp_bytes_t plan)
{
    char path[512];
    kp_payload_t p = kp_payload_of_plan(plan);
    snprintf(path, sizeof path, "%s/matmul_12x32.x86-64-v4.so", HOST_KERNEL_DIR);
    kp_bytes_free(&p.code);
    p.code = kp_read_file(path);
    assert_int_equal(sdk_sha256(p.code.data, p.code.size, p.kernel_sha256), 0);
    kp_payload_set(&p.target, "x86-64-v4");
    kp_payload_set(&p.symbol, "cdnn_host_matmul_12x32");
    kp_payload_set(&p.kernel_id, "matmul_12x32_x86-64-v4");
    kp_payload_set(&p.values[0], "matmul_12x32");
    kp_bytes_t payload = kp_payload_bytes(&p);
    kp_bytes_t out = kp_plan_with_payload(plan, payload);
    kp_bytes_free(&payload);
    kp_payload_free(&p);
    return out;
}

static void test_v4_kernel_refused_without_avx512(void **state)
{
    (void)state;
    const char *const no_avx512[] = {"CDNN_KERNEL_HOST_LEVEL=x86-64-v3", NULL};
    kp_bytes_t plan = matmul_plan();
    kp_bytes_t v4 = v4_plan(plan);
    kp_child_t c = kp_in_child(v4, no_avx512);
    assert_int_equal(c.status, CDNN_STATUS_NOT_SUPPORTED);
    assert_non_null(strstr(c.message, "needs an x86-64-v4 CPU, and this machine is "
                                      "x86-64-v3"));
    kp_child_free(&c);
    kp_bytes_free(&v4);
    kp_bytes_free(&plan);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "kp-child") == 0)
        return kp_child_main(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_engines_come_from_packs, reset_environment),
        cmocka_unit_test_setup(test_engines_unknown_entries_skipped, reset_environment),
        cmocka_unit_test_setup(test_engines_eight_threads_execute, reset_environment),
        cmocka_unit_test_setup(test_engines_benchmarking_times_every_candidate,
                               reset_environment),
        cmocka_unit_test_setup(test_every_load_check_refuses_alone, reset_environment),
        cmocka_unit_test_setup(test_v4_kernel_refused_without_avx512, reset_environment),
        cmocka_unit_test_setup(test_rule2_saved_plan_runs_its_code, reset_environment),
        cmocka_unit_test_setup(test_rule4_pack_changed_before_save, reset_environment),
        cmocka_unit_test_setup(test_rule10_strict_mode, reset_environment),
        cmocka_unit_test_setup(test_round_trip_every_shape, reset_environment),
        cmocka_unit_test_setup(test_round_trip_every_candidate, reset_environment),
        cmocka_unit_test_setup(test_round_trip_pointwise, reset_environment),
        cmocka_unit_test_setup(test_round_trip_norms, reset_environment),
        cmocka_unit_test_setup(test_round_trip_reductions, reset_environment),
        cmocka_unit_test_setup(test_round_trip_softmax, reset_environment),
        cmocka_unit_test_setup(test_round_trip_softmax_minus_infinity, reset_environment),
        cmocka_unit_test_setup(test_round_trip_softmax_refusals, reset_environment),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, setup, teardown);
}
