/*
 * test_benchmark.c -- benchmarking plans, knobs and the winner cache (README:
 * benchmarking; docs/CONTRACT.md rules 3 and 9), with the planted provider
 * (tests/providers/planted_provider.c), whose engines cost what it says:
 *
 *   planted:fast 200 us < planted:medium 1000 us < planted:medium
 *   [planted.cost.scale=250] 2500 us < planted:slow 8000 us
 *
 * The fastest wins and the ranking follows the planted costs; a variant can
 * win; eight threads making the first execute at once make one choice;
 * rule 3 on save; a cache hit makes a plain plan and creates only the
 * winner's context; a record missing a candidate, or made under other
 * engine knobs, benchmarks again; a damaged cache file does not break a
 * build; v1 records are still read; a file of mostly dead records compacts
 * to its live ones; two processes appending at once lose no record, even
 * while a third compacts; the environment switches; knob validation.
 *
 * With the async provider (tests/providers/async_provider.c), whose execute
 * returns before its work is done: benchmarking times the work, by the
 * engine's clock or by the host's around execute and synchronize, so the
 * slower engine loses and the faster wins whichever it is; outputs are
 * written when cdnn_graph_execute returns, from eight threads at once.
 * Every test has a cache directory of its own.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_filter.h"
#include <openssl/sha.h>

#include <cdnn/cdnn.h>

#define OK(call)                                                               \
    do {                                                                       \
        cdnn_status_t st_ = (call);                                            \
        if (st_ != CDNN_STATUS_SUCCESS)                                        \
            fail_msg("%s: %s: %s", #call, cdnn_status_string(st_),             \
                     cdnn_last_error());                                       \
    } while (0)

#define PLANTED_DIR TEST_PROVIDER_ROOT "/planted"
#define ASYNC_DIR TEST_PROVIDER_ROOT "/async"
#define MAX_CANDIDATES 8
#define WORKSPACE_BYTES 4096 /* planted:slow's, the largest */

/* The default candidates, fastest first. */
static const char *const planted_order[] = {
    "planted:fast", "planted:medium", "planted:medium [planted.cost.scale=250]",
    "planted:slow"};
static const double planted_us[] = {200, 1000, 2500, 8000};
#define PLANTED_COUNT 4

static const char not_chosen_message[] =
    "the plan has not chosen a kernel yet; execute it once, or build it with "
    "benchmarking off, then save";

/* ---- fixture: a fresh cache directory per test ------------------------------ */

static char cache_dir[64];

/* What a test made, so that a failing test's teardown still frees it: a
 * handle left alive would keep the next test from setting the provider
 * path. */
#define MAX_LIVE 16
static cdnn_graph_t *live_graphs[MAX_LIVE];
static cdnn_handle_t *live_handles[MAX_LIVE];

static void *track(void **live, void *object)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = object;
            return object;
        }
    fail_msg("more than %d live objects", MAX_LIVE);
    return object;
}

static void untrack(void **live, void *object)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == object)
            live[i] = NULL;
}

static cdnn_handle_t *open_handle(void)
{
    cdnn_handle_t *h = NULL;
    cdnn_status_t st = cdnn_handle_create(&h, "cpu");
    if (st != CDNN_STATUS_SUCCESS)
        fail_msg("cdnn_handle_create: %s", cdnn_last_error());
    return track((void **)live_handles, h);
}

static void close_handle(cdnn_handle_t *h)
{
    untrack((void **)live_handles, h);
    cdnn_handle_destroy(h);
}

static void destroy_graph(cdnn_graph_t *g)
{
    untrack((void **)live_graphs, g);
    cdnn_graph_destroy(g);
}

static void free_live(void)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        cdnn_graph_destroy(live_graphs[i]);
        live_graphs[i] = NULL;
    }
    for (int i = 0; i < MAX_LIVE; i++) {
        cdnn_handle_destroy(live_handles[i]);
        live_handles[i] = NULL;
    }
}

static void unset_switches(void)
{
    unsetenv("CDNN_FORCE_BENCHMARKING");
    unsetenv("CDNN_DISABLE_CACHE");
    unsetenv("PLANTED_EXTRA");
    unsetenv("PLANTED_VARIANT_WINS");
    unsetenv("PLANTED_COST_PERCENT");
    unsetenv("PLANTED_CREATE_US");
    unsetenv("ASYNC_COSTS_SWAPPED");
    unsetenv("ASYNC_NO_TIMER");
    unsetenv("ASYNC_HEATING");
}

static int setup(void **state)
{
    (void)state;
    snprintf(cache_dir, sizeof cache_dir, "/tmp/cdnn-test-benchmark-XXXXXX");
    if (!mkdtemp(cache_dir))
        return -1;
    setenv("CDNN_CACHE_DIR", cache_dir, 1);
    unset_switches();
    if (cdnn_set_provider_path(PLANTED_DIR) == CDNN_STATUS_SUCCESS)
        return 0;
    rmdir(cache_dir); /* cmocka runs no teardown after a failed setup */
    return -1;
}

static int teardown(void **state)
{
    (void)state;
    free_live();
    DIR *d = opendir(cache_dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlink(path);
    }
    if (d)
        closedir(d);
    int gone = rmdir(cache_dir);
    unsetenv("CDNN_CACHE_DIR");
    unset_switches();
    cdnn_set_log_callback(NULL, CDNN_LOG_DEBUG, NULL);
    return gone == 0 && cdnn_set_provider_path(NULL) == CDNN_STATUS_SUCCESS ? 0 : -1;
}

static void cache_path(char *out, size_t cap)
{
    snprintf(out, cap, "%s/winners.v1", cache_dir);
}

/* The cache file's text (NUL-terminated), or NULL if it does not exist. */
static char *read_cache(size_t *size)
{
    char path[128];
    cache_path(path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = malloc(1 << 20);
    assert_non_null(text);
    *size = fread(text, 1, (1 << 20) - 1, f);
    text[*size] = 0;
    fclose(f);
    return text;
}

static int cache_exists(void)
{
    char path[128];
    struct stat st;
    cache_path(path, sizeof path);
    return stat(path, &st) == 0;
}

/* ---- graphs, options, runs ---------------------------------------------------- */

static cdnn_graph_t *identity_graph(int64_t rows, int64_t cols)
{
    cdnn_graph_t *g = NULL;
    const int64_t dims[] = {rows, cols};
    cdnn_pointwise_attr_t id;
    cdnn_pointwise_attr_init(&id, CDNN_PW_IDENTITY);
    OK(cdnn_graph_create(&g));
    OK(cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 2, dims, NULL));
    OK(cdnn_graph_tensor(g, 2, "y", CDNN_DATA_TYPE_F32, 2, dims, NULL));
    OK(cdnn_graph_pointwise(g, "copy", &id, 1, CDNN_UID_NONE, CDNN_UID_NONE, 2));
    return track((void **)live_graphs, g);
}

static cdnn_build_options_t *benchmarking_options(void)
{
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_set_knob(opts, "global.benchmarking", 1));
    return opts;
}

/* Build g on h with benchmarking on. */
static void build_benchmarking(cdnn_graph_t *g, cdnn_handle_t *h)
{
    cdnn_build_options_t *opts = benchmarking_options();
    OK(cdnn_graph_build(g, h, opts));
    cdnn_build_options_destroy(opts);
}

#define MAX_ELEMENTS 64

/* Execute a graph of at most MAX_ELEMENTS on values from seed; the output
 * must be the input. */
static cdnn_status_t execute_small(const cdnn_graph_t *g, cdnn_handle_t *h, int seed)
{
    float x[MAX_ELEMENTS], y[MAX_ELEMENTS];
    static _Thread_local unsigned char workspace[WORKSPACE_BYTES];
    for (int i = 0; i < MAX_ELEMENTS; i++) {
        x[i] = (float)(seed * 100 + i);
        y[i] = -1;
    }
    int64_t uids[] = {1, 2};
    void *ptrs[] = {x, y};
    cdnn_tensor_io_t io[2];
    int32_t n = 0;
    cdnn_status_t st = cdnn_graph_io_tensors(g, io, 2, &n);
    if (st != CDNN_STATUS_SUCCESS || n != 2 || io[0].span_bytes > sizeof x)
        return CDNN_STATUS_BAD_PARAM;
    st = cdnn_graph_execute(g, h, 2, uids, ptrs, workspace);
    if (st == CDNN_STATUS_SUCCESS && memcmp(x, y, io[0].span_bytes) != 0)
        return CDNN_STATUS_EXECUTION_FAILED;
    return st;
}

typedef struct candidates {
    cdnn_candidate_result_t r[MAX_CANDIDATES];
    int32_t count, chosen;
} candidates_t;

static candidates_t candidates_of(const cdnn_graph_t *g)
{
    candidates_t c;
    OK(cdnn_graph_candidates(g, c.r, MAX_CANDIDATES, &c.count, &c.chosen));
    return c;
}

static const char *engine_name(const cdnn_graph_t *g)
{
    const char *name = NULL;
    OK(cdnn_graph_engine(g, NULL, &name));
    return name;
}

/* ---- the planted provider's counters ---------------------------------------------- */

typedef int (*counter_fn)(const char *label);

/* The planted provider's counter `symbol` for one candidate; the provider
 * must be loaded. */
static int planted_counter(const char *symbol, const char *label)
{
    void *lib = dlopen(PLANTED_DIR "/planted.so", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib);
    counter_fn f;
    *(void **)&f = dlsym(lib, symbol);
    assert_non_null(f);
    int n = f(label);
    dlclose(lib); /* NOLOAD took a reference of its own */
    return n;
}

/* Executes of one candidate since the provider loaded. */
static int executes(const char *label)
{
    return planted_counter("test_planted_executes", label);
}

/* Contexts created for one candidate since the provider loaded. */
static int creates(const char *label)
{
    return planted_counter("test_planted_creates", label);
}

typedef struct counts {
    int n[MAX_CANDIDATES];
} counts_t;

/* The counters of c's candidates, in c's order. */
static counts_t counts_of(const candidates_t *c)
{
    counts_t k = {{0}};
    for (int32_t i = 0; i < c->count; i++)
        k.n[i] = executes(c->r[i].name);
    return k;
}

/* ---- the fastest wins -------------------------------------------------------- */

typedef struct progress_log {
    int calls;
    int32_t last_index, count;
    char names[MAX_CANDIDATES][96];
} progress_log_t;

static void on_progress(int32_t index, int32_t count, const char *candidate,
                        double median_us, void *user)
{
    progress_log_t *p = user;
    (void)median_us;
    if (p->calls < MAX_CANDIDATES)
        snprintf(p->names[p->calls], sizeof p->names[0], "%s", candidate);
    p->calls++;
    p->last_index = index;
    p->count = count;
}

/* Before the first execute: every candidate, none timed, none chosen. */
static void assert_untimed(const cdnn_graph_t *g, int32_t want_count)
{
    candidates_t c = candidates_of(g);
    assert_int_equal(c.count, want_count);
    assert_int_equal(c.chosen, -1);
    for (int32_t i = 0; i < c.count; i++)
        assert_true(c.r[i].median_us < 0);
    assert_int_equal(cdnn_graph_engine(g, NULL, NULL), CDNN_STATUS_BAD_STATE);
}

/* After: the planted order, medians rising and at least the planted cost. */
static void assert_planted_ranking(const cdnn_graph_t *g)
{
    candidates_t c = candidates_of(g);
    assert_int_equal(c.count, PLANTED_COUNT);
    assert_int_equal(c.chosen, 0);
    for (int32_t i = 0; i < c.count; i++) {
        assert_string_equal(c.r[i].name, planted_order[i]);
        assert_true(c.r[i].median_us >= planted_us[i]);
        assert_true(c.r[i].runs >= 1);
        if (i > 0)
            assert_true(c.r[i].median_us > c.r[i - 1].median_us);
    }
}

static void test_fastest_wins(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_handle();
    cdnn_graph_t *g = identity_graph(3, 5);
    cdnn_build_options_t *opts = benchmarking_options();
    progress_log_t progress = {0};
    OK(cdnn_build_options_set_progress(opts, on_progress, &progress));
    OK(cdnn_graph_build(g, h, opts));
    cdnn_build_options_destroy(opts);
    assert_untimed(g, PLANTED_COUNT);
    size_t ws = 0;
    OK(cdnn_graph_workspace_size(g, &ws));
    assert_int_equal(ws, WORKSPACE_BYTES); /* covers planted:slow's */

    OK(execute_small(g, h, 1));
    assert_int_equal(progress.calls, PLANTED_COUNT);
    assert_int_equal(progress.count, PLANTED_COUNT);
    assert_int_equal(progress.last_index, PLANTED_COUNT - 1);
    assert_planted_ranking(g);
    assert_string_equal(engine_name(g), "planted:fast");
    OK(cdnn_graph_workspace_size(g, &ws));
    assert_int_equal(ws, 0); /* only the winner's now, as its saved bytes say
                              * (a larger buffer kept from before still works) */
    OK(execute_small(g, h, 2));
    destroy_graph(g);
    close_handle(h);
}

static void test_variant_can_win(void **state)
{
    (void)state;
    setenv("PLANTED_VARIANT_WINS", "1", 1);
    cdnn_handle_t *h = open_handle();
    cdnn_graph_t *g = identity_graph(3, 5);
    build_benchmarking(g, h);
    OK(execute_small(g, h, 1));
    candidates_t c = candidates_of(g);
    assert_int_equal(c.chosen, 0);
    assert_string_equal(c.r[0].name, "planted:medium [planted.cost.scale=1]");
    assert_string_equal(engine_name(g), "planted:medium");
    int32_t plain = -1;
    for (int32_t i = 0; i < c.count; i++)
        if (strcmp(c.r[i].name, "planted:medium") == 0)
            plain = i;
    assert_true(plain > 0); /* the engine's default lost to its variant */

    /* The saved plan runs the variant, not the engine's default. */
    size_t size = 0;
    OK(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &size));
    void *bytes = malloc(size);
    OK(cdnn_graph_save(g, CDNN_SAVE_PLAN, bytes, size, &size));
    cdnn_graph_t *loaded = NULL;
    OK(cdnn_plan_load(&loaded, h, bytes, size));
    track((void **)live_graphs, loaded);
    counts_t before = counts_of(&c);
    OK(execute_small(loaded, h, 3));
    counts_t after = counts_of(&c);
    assert_int_equal(after.n[0], before.n[0] + 1);
    assert_int_equal(after.n[plain], before.n[plain]);
    free(bytes);
    destroy_graph(loaded);
    destroy_graph(g);
    close_handle(h);
}

/* ---- eight threads, one choice --------------------------------------------------- */

#define THREADS 8

typedef struct racer {
    const cdnn_graph_t *g;
    cdnn_handle_t *h;
    pthread_barrier_t *start;
    int seed;
    cdnn_status_t status;
} racer_t;

static void *race(void *arg)
{
    racer_t *r = arg;
    pthread_barrier_wait(r->start);
    r->status = execute_small(r->g, r->h, r->seed);
    return NULL;
}

/* Polls cdnn_graph_candidates while the racers choose: it must always see
 * the four candidates, each once (never a half-sorted array). */
typedef struct poller {
    const cdnn_graph_t *g;
    atomic_int stop;
    int bad_reads;
} poller_t;

static int is_permutation_of_planted(const candidates_t *c)
{
    int seen = 0;
    for (int32_t i = 0; i < c->count; i++)
        for (int k = 0; k < PLANTED_COUNT; k++)
            if (strcmp(c->r[i].name, planted_order[k]) == 0)
                seen |= 1 << k;
    return c->count == PLANTED_COUNT && seen == (1 << PLANTED_COUNT) - 1;
}

static void *poll_candidates(void *arg)
{
    poller_t *p = arg;
    while (!atomic_load(&p->stop)) {
        candidates_t c;
        if (cdnn_graph_candidates(p->g, c.r, MAX_CANDIDATES, &c.count, &c.chosen) !=
                CDNN_STATUS_SUCCESS ||
            !is_permutation_of_planted(&c) || c.chosen < -1 || c.chosen > 0)
            p->bad_reads++;
    }
    return NULL;
}

static void test_eight_threads_one_choice(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_handle();
    cdnn_graph_t *g = identity_graph(3, 5);
    build_benchmarking(g, h);
    candidates_t untimed = candidates_of(g);
    counts_t before = counts_of(&untimed); /* build order */

    poller_t poller = {g, 0, 0};
    pthread_t poll_thread;
    assert_int_equal(pthread_create(&poll_thread, NULL, poll_candidates, &poller), 0);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t threads[THREADS];
    racer_t racers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        racers[i] = (racer_t){g, h, &start, i + 1, CDNN_STATUS_INTERNAL_ERROR};
        assert_int_equal(pthread_create(&threads[i], NULL, race, &racers[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    atomic_store(&poller.stop, 1);
    pthread_join(poll_thread, NULL);
    assert_int_equal(poller.bad_reads, 0);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(racers[i].status, CDNN_STATUS_SUCCESS); /* outputs right */

    /* One benchmark: two warm-up runs + timed runs per candidate; the
     * winner also ran the choosing thread's final execute and the seven
     * others'. */
    candidates_t c = candidates_of(g);
    assert_int_equal(c.count, PLANTED_COUNT);
    assert_int_equal(c.chosen, 0);
    for (int32_t i = 0; i < c.count; i++) {
        int32_t k = 0;
        while (strcmp(untimed.r[k].name, c.r[i].name) != 0)
            k++;
        int want = 2 + c.r[i].runs + (i == 0 ? THREADS : 0);
        assert_int_equal(executes(c.r[i].name) - before.n[k], want);
    }
    destroy_graph(g);
    close_handle(h);
}

/* ---- rule 3: saving waits for the choice ------------------------------------------ */

static void *save_bytes(cdnn_graph_t *g, cdnn_save_form_t form, size_t *size)
{
    OK(cdnn_graph_save(g, form, NULL, 0, size));
    void *bytes = malloc(*size);
    assert_non_null(bytes);
    OK(cdnn_graph_save(g, form, bytes, *size, size));
    return bytes;
}

static void assert_save_refused(cdnn_graph_t *g, cdnn_save_form_t form)
{
    size_t size = 0;
    assert_int_equal(cdnn_graph_save(g, form, NULL, 0, &size), CDNN_STATUS_BAD_STATE);
    assert_string_equal(cdnn_last_error(), not_chosen_message);
}

static void test_save_after_choice(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_handle();
    cdnn_graph_t *g = identity_graph(3, 5);
    build_benchmarking(g, h);
    assert_save_refused(g, CDNN_SAVE_PLAN);
    assert_save_refused(g, CDNN_SAVE_GRAPH_AND_PLAN);
    size_t size = 0;
    free(save_bytes(g, CDNN_SAVE_GRAPH, &size)); /* the graph needs no choice */

    OK(execute_small(g, h, 1));
    void *plan = save_bytes(g, CDNN_SAVE_PLAN, &size);
    candidates_t c = candidates_of(g);
    cdnn_graph_t *loaded = NULL;
    OK(cdnn_plan_load(&loaded, h, plan, size));
    track((void **)live_graphs, loaded);
    candidates_t lc = candidates_of(loaded);
    assert_int_equal(lc.count, 1);
    assert_int_equal(lc.chosen, 0);
    assert_string_equal(lc.r[0].name, c.r[0].name);
    counts_t before = counts_of(&c);
    OK(execute_small(loaded, h, 2)); /* no benchmarking: the winner runs once */
    counts_t after = counts_of(&c);
    assert_int_equal(after.n[0], before.n[0] + 1);
    for (int32_t i = 1; i < c.count; i++)
        assert_int_equal(after.n[i], before.n[i]);
    free(plan);
    destroy_graph(loaded);
    destroy_graph(g);
    close_handle(h);
}

/* Saves refused by rule 3 racing the first save after the choice: the
 * refused saves must not read the plan's bytes while the first save writes
 * them (a data race ThreadSanitizer caught: the bytes were read after the
 * lock was dropped).  Savers spin until the choice, so some run exactly
 * while the chooser's own first save encodes. */
typedef struct saver {
    cdnn_graph_t *g;
    int refused, saved;
    void *bytes;
    size_t size;
} saver_t;

static void *save_until_saved(void *arg)
{
    saver_t *s = arg;
    while (!s->saved) {
        size_t size = 0;
        cdnn_status_t st = cdnn_graph_save(s->g, CDNN_SAVE_PLAN, NULL, 0, &size);
        if (st == CDNN_STATUS_BAD_STATE) {
            s->refused++;
            continue;
        }
        if (st != CDNN_STATUS_SUCCESS || !(s->bytes = malloc(size)) ||
            cdnn_graph_save(s->g, CDNN_SAVE_PLAN, s->bytes, size, &s->size) !=
                CDNN_STATUS_SUCCESS)
            return "save failed";
        s->saved = 1;
    }
    return NULL;
}

static void test_refused_saves_race_first_save(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_handle();
    cdnn_graph_t *g = identity_graph(3, 5);
    build_benchmarking(g, h);
    pthread_t threads[THREADS];
    saver_t savers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        savers[i] = (saver_t){g, 0, 0, NULL, 0};
        assert_int_equal(pthread_create(&threads[i], NULL, save_until_saved, &savers[i]),
                         0);
    }
    OK(execute_small(g, h, 1));
    size_t size = 0;
    void *first = save_bytes(g, CDNN_SAVE_PLAN, &size);
    for (int i = 0; i < THREADS; i++) {
        void *why = NULL;
        pthread_join(threads[i], &why);
        if (why)
            fail_msg("saver %d: %s", i, (const char *)why);
        assert_int_equal(savers[i].size, size);
        assert_memory_equal(savers[i].bytes, first, size);
        free(savers[i].bytes);
    }
    free(first);
    destroy_graph(g);
    close_handle(h);
}

/* ---- the winner cache ------------------------------------------------------------ */

/* Benchmark a fresh rows x 5 graph once: a record in the cache. */
static void benchmark_once(cdnn_handle_t *h, int64_t rows)
{
    cdnn_graph_t *g = identity_graph(rows, 5);
    build_benchmarking(g, h);
    OK(execute_small(g, h, 1));
    destroy_graph(g);
}

static void test_cache_hit_is_plain_plan(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_handle();
    benchmark_once(h, 3);
    assert_true(cache_exists());

    int before[PLANTED_COUNT];
    for (int i = 0; i < PLANTED_COUNT; i++)
        before[i] = executes(planted_order[i]);
    cdnn_graph_t *g = identity_graph(3, 5); /* a fresh object, the same content */
    build_benchmarking(g, h);
    candidates_t c = candidates_of(g);
    assert_int_equal(c.count, 1);
    assert_int_equal(c.chosen, 0);
    assert_string_equal(c.r[0].name, "planted:fast");
    assert_string_equal(engine_name(g), "planted:fast");
    size_t size = 0, ws = 1;
    free(save_bytes(g, CDNN_SAVE_PLAN, &size)); /* at once: rule 3 is met */
    OK(cdnn_graph_workspace_size(g, &ws));
    assert_int_equal(ws, 0); /* the plain plan needs only the winner's */
    for (int i = 0; i < PLANTED_COUNT; i++) /* nothing ran before the execute */
        assert_int_equal(executes(planted_order[i]), before[i]);
    OK(execute_small(g, h, 2));
    for (int i = 0; i < PLANTED_COUNT; i++)
        assert_int_equal(executes(planted_order[i]), before[i] + (i == 0));
    destroy_graph(g);
    close_handle(h);
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CREATE_US 50000

/* A cache hit creates the winner's context only: the others' would be
 * made to be destroyed, and a context may cost a compilation (planted:
 * CREATE_US each here, so a build that made all four would take at least
 * four times that: the bound below, which leaves a loaded machine three
 * creations' time of slack). */
static void test_cache_hit_creates_only_the_winner(void **state)
{
    (void)state;
    char cost[16];
    snprintf(cost, sizeof cost, "%d", CREATE_US);
    setenv("PLANTED_CREATE_US", cost, 1);
    cdnn_handle_t *h = open_handle();
    benchmark_once(h, 3);
    int before[PLANTED_COUNT];
    for (int i = 0; i < PLANTED_COUNT; i++)
        before[i] = creates(planted_order[i]);

    cdnn_graph_t *g = identity_graph(3, 5);
    double start = seconds_now();
    build_benchmarking(g, h);
    double seconds = seconds_now() - start;
    assert_int_equal(candidates_of(g).count, 1);
    for (int i = 0; i < PLANTED_COUNT; i++)
        assert_int_equal(creates(planted_order[i]), before[i] + (i == 0));
    if (seconds >= PLANTED_COUNT * CREATE_US * 1e-6)
        fail_msg("a cache-hit build took %.1f ms with one %d us context", 1e3 * seconds,
                 CREATE_US);
    OK(execute_small(g, h, 2));
    destroy_graph(g);
    close_handle(h);
}

static void test_partial_coverage_benchmarks_again(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_handle();
    benchmark_once(h, 3);
    close_handle(h); /* no handle, no plan: providers unload */

    setenv("PLANTED_EXTRA", "1", 1);
    h = open_handle();
    int32_t engines = 0;
    OK(cdnn_handle_engine_count(h, &engines));
    assert_int_equal(engines, 4); /* planted:extra is served now */
    cdnn_graph_t *g = identity_graph(3, 5);
    build_benchmarking(g, h);
    assert_untimed(g, PLANTED_COUNT + 1); /* the record lacks planted:extra */
    OK(execute_small(g, h, 1));
    candidates_t c = candidates_of(g);
    assert_int_equal(c.chosen, 0);
    assert_string_equal(c.r[0].name, "planted:fast");
    destroy_graph(g);

    /* The new record ranks all five: a plain plan again. */
    g = identity_graph(3, 5);
    build_benchmarking(g, h);
    c = candidates_of(g);
    assert_int_equal(c.count, 1);
    assert_int_equal(c.chosen, 0);
    destroy_graph(g);
    close_handle(h);
}

/* Build a fresh 3x5 graph with benchmarking and planted.cost.scale=scale
 * (0: not set). */
static cdnn_graph_t *build_with_scale(cdnn_handle_t *h, int64_t scale)
{
    cdnn_graph_t *g = identity_graph(3, 5);
    cdnn_build_options_t *opts = benchmarking_options();
    if (scale)
        OK(cdnn_build_options_set_knob(opts, "planted.cost.scale", scale));
    OK(cdnn_graph_build(g, h, opts));
    cdnn_build_options_destroy(opts);
    return g;
}

/* A ranking made under other engine knob values is not used: with
 * planted.cost.scale=1 every default is 100 times cheaper than the winning
 * variant; without it the variant wins. */
static void test_cache_keyed_by_engine_knobs(void **state)
{
    (void)state;
    setenv("PLANTED_VARIANT_WINS", "1", 1);
    cdnn_handle_t *h = open_handle();
    cdnn_graph_t *g = build_with_scale(h, 1);
    OK(execute_small(g, h, 1));
    char with_knob[96];
    snprintf(with_knob, sizeof with_knob, "%s", candidates_of(g).r[0].name);
    assert_string_not_equal(with_knob, "planted:medium [planted.cost.scale=1]");
    destroy_graph(g);

    g = build_with_scale(h, 0);
    assert_untimed(g, PLANTED_COUNT); /* the record was made under other knobs */
    OK(execute_small(g, h, 2));
    assert_string_equal(candidates_of(g).r[0].name, "planted:medium [planted.cost.scale=1]");
    destroy_graph(g);

    g = build_with_scale(h, 1); /* each record serves its own knobs */
    candidates_t c = candidates_of(g);
    assert_int_equal(c.count, 1);
    assert_string_equal(c.r[0].name, with_knob);
    destroy_graph(g);
    g = build_with_scale(h, 0);
    c = candidates_of(g);
    assert_int_equal(c.count, 1);
    assert_string_equal(c.r[0].name, "planted:medium [planted.cost.scale=1]");
    destroy_graph(g);
    close_handle(h);
}

typedef struct log_capture {
    int warnings;
    char damaged[512];
} log_capture_t;

static void capture_log(cdnn_log_level_t level, const char *message, void *user)
{
    log_capture_t *c = user;
    if (level == CDNN_LOG_WARNING) {
        c->warnings++;
        if (strstr(message, "damaged"))
            snprintf(c->damaged, sizeof c->damaged, "%s", message);
    }
}

/* Rewrite the cache as damage around its one good record: garbage (a NUL
 * byte too), the record cut short, the record with one JSON byte changed
 * (a wrong checksum), the good record, and finally a record cut short with
 * no newline, as a writer that crashed mid-line leaves it. */
static void damage_cache(void)
{
    size_t size = 0;
    char *good = read_cache(&size);
    assert_non_null(good);
    assert_true(size > 40 && good[size - 1] == '\n');
    char *wrong = strdup(good);
    char *digit = strstr(wrong, "\"us\":") + 5;
    *digit = *digit == '9' ? '8' : (char)(*digit + 1);
    char path[128];
    cache_path(path, sizeof path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("garbage that is no record\n\n0123456789abcdef {\"v\":1}\n", f);
    fwrite("bin\0ary\x01\xff\n", 1, 11, f);
    fwrite(good, 1, size / 2, f);
    fputc('\n', f);
    fputs(wrong, f);
    fputs(good, f);
    fwrite(good, 1, size / 3, f);
    fclose(f);
    free(wrong);
    free(good);
}

static void test_damaged_cache_does_not_break_build(void **state)
{
    (void)state;
    log_capture_t log = {0};
    cdnn_handle_t *h = open_handle();
    benchmark_once(h, 3);
    close_handle(h);
    size_t size = 0;
    char *good = read_cache(&size);
    damage_cache();

    cdnn_set_log_callback(capture_log, CDNN_LOG_WARNING, &log);
    h = open_handle();
    cdnn_graph_t *g = identity_graph(3, 5);
    build_benchmarking(g, h);
    assert_true(log.warnings >= 1);
    assert_non_null(strstr(log.damaged, "damaged"));
    assert_int_equal(candidates_of(g).count, 1); /* the good record still counts */
    OK(execute_small(g, h, 1));
    destroy_graph(g);
    char *text = read_cache(&size); /* the damage outnumbered it: compacted away */
    assert_string_equal(text, good);
    free(text);

    /* A graph with no record: benchmarked, and its record is appended after
     * a cut-short last line without being swallowed by it. */
    char path[128];
    cache_path(path, sizeof path);
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    fwrite(good, 1, strlen(good) / 3, f);
    fclose(f);
    free(good);
    benchmark_once(h, 4);
    g = identity_graph(4, 5);
    build_benchmarking(g, h);
    assert_int_equal(candidates_of(g).count, 1);
    destroy_graph(g);
    close_handle(h);
    cdnn_set_log_callback(NULL, CDNN_LOG_DEBUG, NULL);
}

/* ---- the record format ------------------------------------------------------------ */

/* text with every `from` replaced by `to` (malloc'd). */
static char *replace_all(const char *text, const char *from, const char *to)
{
    char *out = malloc(strlen(text) * (strlen(to) + 1) + 1);
    assert_non_null(out);
    size_t n = 0;
    for (const char *at = text; *at;) {
        if (strncmp(at, from, strlen(from)) == 0) {
            n += (size_t)sprintf(out + n, "%s", to);
            at += strlen(from);
        } else {
            out[n++] = *at++;
        }
    }
    out[n] = 0;
    return out;
}

/* The cache line a writer makes of json: checksum, space, json, newline
 * (malloc'd). */
static char *sealed(const char *json)
{
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)json, strlen(json), digest);
    char *line = malloc(strlen(json) + 19);
    assert_non_null(line);
    for (int i = 0; i < 8; i++)
        sprintf(line + 2 * i, "%02x", digest[i]);
    sprintf(line + 16, " %s\n", json);
    return line;
}

/* The JSON of the cache's line `index` (malloc'd). */
static char *cached_json(int index)
{
    size_t size = 0;
    char *text = read_cache(&size), *line = text;
    assert_non_null(text);
    for (int i = 0; i < index; i++)
        line = strchr(line, '\n') + 1;
    char *json = strndup(line + 17, (size_t)(strchr(line, '\n') - line - 17));
    free(text);
    return json;
}

static int occurrences(const char *text, const char *part)
{
    int n = 0;
    for (const char *at = text; (at = strstr(at, part)) != NULL; at += strlen(part))
        n++;
    return n;
}

static void write_cache(const char *text)
{
    char path[128];
    cache_path(path, sizeof path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Records are v2, each time with its clock; a v1 record (no clocks: the
 * host's) is still read. */
static void test_v1_record_is_read(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_handle();
    benchmark_once(h, 3);
    char *json = cached_json(0);
    assert_non_null(strstr(json, "{\"v\":2,"));
    assert_int_equal(occurrences(json, ",\"clock\":\"host\""), PLANTED_COUNT);
    char *v1 = replace_all(json, "{\"v\":2,", "{\"v\":1,");
    char *without_clocks = replace_all(v1, ",\"clock\":\"host\"", "");
    char *line = sealed(without_clocks);
    write_cache(line);

    cdnn_graph_t *g = identity_graph(3, 5);
    build_benchmarking(g, h);
    candidates_t c = candidates_of(g);
    assert_int_equal(c.count, 1);
    assert_string_equal(c.r[0].name, "planted:fast");
    destroy_graph(g);
    close_handle(h);
    free(line);
    free(without_clocks);
    free(v1);
    free(json);
}

/* ---- compaction ------------------------------------------------------------------ */

static ino_t cache_inode(void)
{
    char path[128];
    struct stat st;
    cache_path(path, sizeof path);
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

#define SUPERSEDED 20

/* A read that finds more dead records than live ones rewrites the file
 * with the live ones, in their order: the last record for each graph,
 * and a record of a newer format (a newer cdnn's, sharing the file). */
static void test_cache_compacts_to_live_records(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_handle();
    benchmark_once(h, 3);
    benchmark_once(h, 4);
    char *json_a = cached_json(0), *json_b = cached_json(1);
    char *a = sealed(json_a), *b = sealed(json_b);
    free(json_a);
    free(json_b);
    char *newer = sealed("{\"v\":3,\"from\":\"a newer cdnn\"}");
    char *stale = sealed("{\"v\":1,\"key\":\"00\",\"device\":\"cuda/X/sm_90\","
                         "\"lib\":\"0.1.0\",\"ranking\":[]}");
    size_t cap = (SUPERSEDED + 4) * (strlen(a) + 8) + 4096, used = 0;
    char *file = malloc(cap);
    assert_non_null(file);
    for (int i = 0; i < SUPERSEDED; i++) { /* a's record with other times */
        char digits[16];
        snprintf(digits, sizeof digits, "\"us\":%d", i + 1);
        char *json = cached_json(0), *other = replace_all(json, "\"us\":", digits);
        char *line = sealed(other);
        used += (size_t)snprintf(file + used, cap - used, "%s", line);
        free(line);
        free(other);
        free(json);
    }
    used += (size_t)snprintf(file + used, cap - used,
                             "damaged\n\n0123456789abcdef {}\n%s%s%s%s", stale, b, newer, a);
    write_cache(file);
    ino_t before = cache_inode();

    cdnn_graph_t *g = identity_graph(3, 5);
    build_benchmarking(g, h); /* the read compacts */
    assert_int_equal(candidates_of(g).count, 1);
    size_t size = 0;
    char *text = read_cache(&size);
    char want[4096];
    snprintf(want, sizeof want, "%s%s%s", b, newer, a);
    assert_string_equal(text, want);
    assert_true(cache_inode() != before); /* replaced, not rewritten in place */
    destroy_graph(g);

    before = cache_inode();
    benchmark_once(h, 5); /* three live records of four: nothing to compact */
    assert_true(cache_inode() == before);
    close_handle(h);
    free(text);
    free(file);
    free(stale);
    free(newer);
    free(b);
    free(a);
}

/* ---- processes sharing the cache ------------------------------------------------- */

#define BUILDS_PER_CHILD 50

static void ignore_log(cdnn_log_level_t level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

/* Build a fresh rows x cols graph with benchmarking and execute it once;
 * 0 on success. */
static int build_and_run(cdnn_handle_t *h, int64_t rows, int64_t cols, const char *who)
{
    cdnn_graph_t *g = identity_graph(rows, cols);
    cdnn_build_options_t *opts = benchmarking_options();
    float x[BUILDS_PER_CHILD * 7], y[BUILDS_PER_CHILD * 7];
    static unsigned char workspace[WORKSPACE_BYTES];
    int64_t uids[] = {1, 2};
    void *ptrs[] = {x, y};
    memset(x, 0, sizeof x);
    int bad = cdnn_graph_build(g, h, opts) != CDNN_STATUS_SUCCESS ||
              cdnn_graph_execute(g, h, 2, uids, ptrs, workspace) != CDNN_STATUS_SUCCESS;
    if (bad)
        fprintf(stderr, "%s, graph %lldx%lld: %s\n", who, (long long)rows, (long long)cols,
                cdnn_last_error());
    cdnn_build_options_destroy(opts);
    destroy_graph(g);
    return bad;
}

/* Child `which` (0 or 1): BUILDS_PER_CHILD graphs of its own shapes,
 * each benchmarked by its first execute.  No cmocka here: an exit code. */
static int child_builds(int which)
{
    cdnn_set_log_callback(ignore_log, CDNN_LOG_DEBUG, NULL); /* dead lines are expected */
    cdnn_handle_t *h = NULL;
    if (cdnn_handle_create(&h, "cpu") != CDNN_STATUS_SUCCESS)
        return 1;
    int bad = 0;
    for (int i = 0; i < BUILDS_PER_CHILD && !bad; i++)
        bad = build_and_run(h, i + 1, which ? 7 : 3, which ? "child 1" : "child 0");
    close_handle(h);
    return bad;
}

#define DEAD_LINES 128 /* more than the live records ever are */

static void append_dead_lines(void)
{
    char path[128], lines[DEAD_LINES * 10 + 1] = "";
    cache_path(path, sizeof path);
    for (int i = 0; i < DEAD_LINES; i++)
        strcat(lines, "no record\n");
    FILE *f = fopen(path, "a");
    if (f) { /* one write under the writers' lock, as a writer appends */
        flock(fileno(f), LOCK_EX);
        fputs(lines, f);
        fflush(f);
        flock(fileno(f), LOCK_UN);
        fclose(f);
    }
}

static int parent_is_done(int until)
{
    struct pollfd p = {until, POLLIN, 0};
    return poll(&p, 1, 0) > 0; /* the parent closed its end */
}

/* The compacting child: until the parent says the writers are done, make
 * the dead records outnumber the live ones and build a graph of its own,
 * whose read compacts the file.  Exit code 0 only if the file was
 * replaced at least once while the writers wrote. */
static int child_compacts(int until)
{
    cdnn_set_log_callback(ignore_log, CDNN_LOG_DEBUG, NULL);
    cdnn_handle_t *h = NULL;
    if (cdnn_handle_create(&h, "cpu") != CDNN_STATUS_SUCCESS)
        return 1;
    int bad = 0, compactions = 0;
    while (!bad && !parent_is_done(until)) {
        append_dead_lines();
        ino_t before = cache_inode();
        bad = build_and_run(h, 1, 11, "the compacting child");
        compactions += cache_inode() != before;
    }
    close_handle(h);
    return bad ? 1 : compactions ? 0 : 2;
}

static void wait_for_child(pid_t pid)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* "<16 hex> <json>": does the checksum hold? */
static int line_checks(const char *line, size_t n)
{
    if (n < 18 || line[16] != ' ')
        return 0;
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)line + 17, n - 17, digest);
    char hex[17];
    for (int i = 0; i < 8; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return memcmp(hex, line, 16) == 0;
}

static int count_valid_lines(const char *text, size_t size)
{
    int valid = 0;
    for (size_t at = 0; at < size;) {
        const char *end = memchr(text + at, '\n', size - at);
        size_t n = end ? (size_t)(end - (text + at)) : size - at;
        valid += line_checks(text + at, n);
        at += n + 1;
    }
    return valid;
}

static void assert_keys_recorded(const char *text)
{
    for (int which = 0; which < 2; which++)
        for (int i = 0; i < BUILDS_PER_CHILD; i++) {
            cdnn_graph_t *g = identity_graph(i + 1, which ? 7 : 3);
            char key[65], quoted[80];
            OK(cdnn_graph_content_key(g, key));
            snprintf(quoted, sizeof quoted, "\"key\":\"%s\"", key);
            if (!strstr(text, quoted))
                fail_msg("no record for child %d's graph %d (%s)", which, i, key);
            destroy_graph(g);
        }
}

/* Two writers' records, each on its own graph, and with a compacting
 * third process that one record of its own: all of them in the file. */
static void run_sharing_processes(int with_compactor)
{
    setenv("PLANTED_COST_PERCENT", "2", 1); /* 100 builds: keep them quick */
    int until[2];
    assert_int_equal(pipe(until), 0);
    fflush(NULL);
    pid_t compactor = with_compactor ? fork() : 0;
    assert_true(compactor >= 0);
    if (with_compactor && compactor == 0) {
        close(until[1]);
        _exit(child_compacts(until[0]));
    }
    pid_t writers[2];
    for (int which = 0; which < 2; which++) {
        fflush(NULL);
        writers[which] = fork();
        assert_true(writers[which] >= 0);
        if (writers[which] == 0)
            _exit(child_builds(which));
    }
    for (int which = 0; which < 2; which++)
        wait_for_child(writers[which]);
    close(until[1]);
    close(until[0]);
    if (with_compactor)
        wait_for_child(compactor);
    size_t size = 0;
    char *text = read_cache(&size);
    assert_non_null(text);
    assert_int_equal(count_valid_lines(text, size), 2 * BUILDS_PER_CHILD + with_compactor);
    assert_true(size > 0 && text[size - 1] == '\n');
    assert_keys_recorded(text);
    free(text);
}

static void test_two_processes_lose_no_record(void **state)
{
    (void)state;
    run_sharing_processes(0);
}

/* Compactions replace the file while the writers append: a writer that
 * opened the file a compaction replaced must append to the new one. */
static void test_compaction_loses_no_appended_record(void **state)
{
    (void)state;
    run_sharing_processes(1);
}

/* ---- asynchronous engines (the async provider) --------------------------------- */

static cdnn_handle_t *open_async_handle(void)
{
    OK(cdnn_set_provider_path(ASYNC_DIR));
    return open_handle();
}

/* Benchmark on the async provider: winner must win over loser; each
 * median is at least the engine's work (its work was timed, not its
 * enqueue, which async:slow makes at once), and the record says which
 * clock timed both. */
static void assert_async_choice(const char *winner, const char *loser, double winner_us,
                                double loser_us, const char *clock)
{
    cdnn_handle_t *h = open_async_handle();
    cdnn_graph_t *g = identity_graph(3, 5);
    build_benchmarking(g, h);
    OK(execute_small(g, h, 1)); /* its output is checked as soon as it returns */
    candidates_t c = candidates_of(g);
    assert_int_equal(c.count, 2);
    assert_string_equal(c.r[0].name, winner);
    assert_string_equal(c.r[1].name, loser);
    if (c.r[0].median_us < winner_us || c.r[1].median_us < loser_us)
        fail_msg("%s timed %.0f us (work %.0f), %s %.0f us (work %.0f)", winner,
                 c.r[0].median_us, winner_us, loser, c.r[1].median_us, loser_us);
    char *json = cached_json(0), timed_by[32];
    snprintf(timed_by, sizeof timed_by, "\"clock\":\"%s\"", clock);
    assert_int_equal(occurrences(json, timed_by), 2);
    free(json);
    destroy_graph(g);
    close_handle(h);
}

static void test_async_slower_loses(void **state)
{
    (void)state;
    assert_async_choice("async:fast", "async:slow", 1000, 8000, "device");
}

static void test_async_faster_wins(void **state)
{
    (void)state;
    setenv("ASYNC_COSTS_SWAPPED", "1", 1); /* async:slow does async:fast's work */
    assert_async_choice("async:slow", "async:fast", 1000, 8000, "device");
}

/* A device that slows as it works (ASYNC_HEATING): the candidates are
 * timed in interleaved rounds, so async:fast (1000 us of work against
 * async:slow's 1300) still wins although async:slow is timed first; timed
 * one after the other, async:slow would be measured on the cooler device
 * and win by ~30%. */
static void test_async_heating_device_ranks_by_work(void **state)
{
    (void)state;
    setenv("ASYNC_HEATING", "1", 1);
    assert_async_choice("async:fast", "async:slow", 1000, 1300, "device");
}

/* Without time_execute: the host clock, around execute and synchronize
 * (async:fast's 300 us enqueue and 1000 us work). */
static void test_async_host_clock_synchronizes(void **state)
{
    (void)state;
    setenv("ASYNC_NO_TIMER", "1", 1);
    assert_async_choice("async:fast", "async:slow", 1300, 8000, "host");
}

#define ASYNC_EXECUTES 10

static void *race_repeatedly(void *arg)
{
    racer_t *r = arg;
    pthread_barrier_wait(r->start);
    r->status = CDNN_STATUS_SUCCESS;
    for (int i = 0; r->status == CDNN_STATUS_SUCCESS && i < ASYNC_EXECUTES; i++)
        r->status = execute_small(r->g, r->h, r->seed * ASYNC_EXECUTES + i);
    return NULL;
}

/* Eight threads execute one asynchronous plan at once, the first execute
 * choosing: each output is written when cdnn_graph_execute returns. */
static void test_async_eight_threads_see_outputs(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_async_handle();
    cdnn_graph_t *g = identity_graph(3, 5);
    build_benchmarking(g, h);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t threads[THREADS];
    racer_t racers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        racers[i] = (racer_t){g, h, &start, i + 1, CDNN_STATUS_INTERNAL_ERROR};
        assert_int_equal(pthread_create(&threads[i], NULL, race_repeatedly, &racers[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(racers[i].status, CDNN_STATUS_SUCCESS);
    assert_string_equal(engine_name(g), "async:fast");
    destroy_graph(g);
    close_handle(h);
}

/* ---- the environment --------------------------------------------------------------- */

static void test_environment_switches(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_handle();
    cdnn_graph_t *g = identity_graph(3, 5);

    setenv("CDNN_FORCE_BENCHMARKING", "1", 1);
    OK(cdnn_graph_build(g, h, NULL)); /* no knob: benchmarking anyway */
    assert_untimed(g, PLANTED_COUNT);

    setenv("CDNN_FORCE_BENCHMARKING", "0", 1);
    build_benchmarking(g, h); /* the knob, overridden */
    candidates_t c = candidates_of(g);
    assert_int_equal(c.count, 1);
    assert_int_equal(c.chosen, 0);
    assert_string_equal(c.r[0].name, "planted:slow"); /* the first by rank */
    OK(execute_small(g, h, 1));
    assert_false(cache_exists());

    unsetenv("CDNN_FORCE_BENCHMARKING");
    setenv("CDNN_DISABLE_CACHE", "1", 1);
    build_benchmarking(g, h);
    OK(execute_small(g, h, 2));
    assert_int_equal(candidates_of(g).chosen, 0);
    build_benchmarking(g, h); /* nothing was remembered */
    assert_untimed(g, PLANTED_COUNT);
    assert_false(cache_exists());
    destroy_graph(g);
    close_handle(h);
}

static cdnn_graph_t *build_within_limit(cdnn_handle_t *h, int64_t limit)
{
    cdnn_graph_t *g = identity_graph(3, 5);
    cdnn_build_options_t *opts = benchmarking_options();
    OK(cdnn_build_options_set_knob(opts, "global.workspace_limit", limit));
    OK(cdnn_graph_build(g, h, opts));
    cdnn_build_options_destroy(opts);
    return g;
}

static void test_workspace_limit(void **state)
{
    (void)state;
    cdnn_handle_t *h = open_handle();
    cdnn_graph_t *g = build_within_limit(h, WORKSPACE_BYTES - 1);
    candidates_t c = candidates_of(g);
    assert_int_equal(c.count, PLANTED_COUNT - 1); /* planted:slow passed over */
    for (int32_t i = 0; i < c.count; i++)
        assert_string_not_equal(c.r[i].name, "planted:slow");
    size_t ws = 1;
    OK(cdnn_graph_workspace_size(g, &ws));
    assert_int_equal(ws, 0);
    OK(execute_small(g, h, 1));
    destroy_graph(g);

    /* The record does not rank planted:slow, which cannot be made within
     * the limit: it still serves the next build under the limit. */
    g = build_within_limit(h, WORKSPACE_BYTES - 1);
    c = candidates_of(g);
    assert_int_equal(c.count, 1);
    assert_string_equal(c.r[0].name, "planted:fast");
    destroy_graph(g);
    close_handle(h);
}

/* ---- knobs -------------------------------------------------------------------- */

static void assert_build_refused(cdnn_handle_t *h, const char *knob, int64_t value,
                                 const char *said)
{
    cdnn_graph_t *g = identity_graph(3, 5);
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_set_knob(opts, knob, value)); /* checked at build */
    assert_int_equal(cdnn_graph_build(g, h, opts), CDNN_STATUS_BAD_PARAM);
    if (!strstr(cdnn_last_error(), knob) || !strstr(cdnn_last_error(), said))
        fail_msg("the message does not name %s and %s: %s", knob, said, cdnn_last_error());
    cdnn_build_options_destroy(opts);
    destroy_graph(g);
}

static int32_t engine_index(cdnn_handle_t *h, const char *name)
{
    int32_t count = 0;
    OK(cdnn_handle_engine_count(h, &count));
    for (int32_t i = 0; i < count; i++) {
        cdnn_engine_info_t info;
        OK(cdnn_handle_engine_info(h, i, &info));
        if (strcmp(info.name, name) == 0)
            return i;
    }
    fail_msg("engine %s is not served", name);
    return -1;
}

static void test_knobs(void **state)
{
    (void)state;
    OK(cdnn_set_provider_path(CPU_PROVIDER_DIR));
    cdnn_handle_t *h = open_handle();
    assert_build_refused(h, "cpu.threads.bogus", 1, "declared by no loaded engine");
    assert_build_refused(h, "cpu.threads.count", 5000, "[0, 1024]");

    int32_t conv = engine_index(h, "cpu:blas_conv"), knobs = 0, found = 0;
    OK(cdnn_handle_engine_knob_count(h, conv, &knobs));
    for (int32_t k = 0; k < knobs; k++) {
        cdnn_knob_info_t info;
        OK(cdnn_handle_engine_knob_info(h, conv, k, &info));
        if (strcmp(info.name, "cpu.threads.count") == 0) {
            found = 1;
            assert_int_equal(info.min_value, 0);
            assert_int_equal(info.max_value, 1024);
            assert_int_equal(info.default_value, 0);
            assert_true(strlen(info.description) > 0);
        }
    }
    assert_true(found);

    cdnn_knob_info_t global;
    OK(cdnn_global_knob_info(0, &global));
    assert_string_equal(global.name, "global.benchmarking");
    OK(cdnn_global_knob_info(1, &global));
    assert_string_equal(global.name, "global.workspace_limit");
    assert_int_equal(cdnn_global_knob_info(2, &global), CDNN_STATUS_NOT_FOUND);
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    assert_int_equal(cdnn_build_options_set_knob(opts, "global.benchmarking", 2),
                     CDNN_STATUS_BAD_PARAM);
    assert_int_equal(cdnn_build_options_set_knob(opts, "global.bogus", 1),
                     CDNN_STATUS_BAD_PARAM);
    cdnn_build_options_destroy(opts);
    close_handle(h);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_fastest_wins),
        TEST(test_variant_can_win),
        TEST(test_eight_threads_one_choice),
        TEST(test_save_after_choice),
        TEST(test_refused_saves_race_first_save),
        TEST(test_cache_hit_is_plain_plan),
        TEST(test_cache_hit_creates_only_the_winner),
        TEST(test_partial_coverage_benchmarks_again),
        TEST(test_cache_keyed_by_engine_knobs),
        TEST(test_damaged_cache_does_not_break_build),
        TEST(test_v1_record_is_read),
        TEST(test_cache_compacts_to_live_records),
        TEST(test_two_processes_lose_no_record),
        TEST(test_compaction_loses_no_appended_record),
        TEST(test_async_slower_loses),
        TEST(test_async_faster_wins),
        TEST(test_async_heating_device_ranks_by_work),
        TEST(test_async_host_clock_synchronizes),
        TEST(test_async_eight_threads_see_outputs),
        TEST(test_environment_switches),
        TEST(test_workspace_limit),
        TEST(test_knobs),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
