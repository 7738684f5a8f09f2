/*
 * bench_benchmarking.c -- what choosing by timing costs (README: benchmarking):
 * for each example graph DIR/NAME.json, from a graph in memory to the first
 * result in the caller's output,
 *
 *   bench  = cdnn_graph_build with global.benchmarking=1 and the winner cache
 *            off ($CDNN_DISABLE_CACHE=1), then the first execute, which
 *            times every candidate, keeps the fastest and runs it
 *   load   = cdnn_plan_load of the plan that benchmarking saved, then the
 *            first execute (no choosing: a loaded plan is plain)
 *   ratio  = bench / load
 *   hit    = the benchmarking build again with the cache on and a record
 *            for the graph in it (a plain plan), then the first
 *            execute
 *   plain  = a build with benchmarking off (heuristic order), then the
 *            first execute: what benchmarking is paid against
 *
 * Allocating and filling the tensors is not timed (every column needs it);
 * parsing the JSON is not timed.  Each time is a median of repeated runs:
 * at least MIN_RUNS, at most MAX_RUNS, until MIN_SECONDS have passed (bench
 * runs are long, so it gets fewer runs).  The cache lives in a fresh
 * temporary directory ($CDNN_CACHE_DIR) removed at the end.  Output is
 * tab-separated with a header line.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cdnn/cdnn.h>
#include <cdnn_sdk/numeric.h>

#include "bench_common.h"

#define MIN_RUNS 5
#define MAX_RUNS 101
#define MIN_SECONDS 0.5
#define MAX_EXAMPLES 256

/* ---- a plan's variant pack ---------------------------------------------------- */

typedef struct pack {
    int32_t count;
    int64_t *uids;
    void **ptrs;
    void *workspace;
} pack_t;

/* Memory for g's plan, inputs small values in [-1, 1) (integers: small
 * integers), so that no engine meets NaN or denormals on the timed path. */
static pack_t pack_alloc(const cdnn_graph_t *g)
{
    pack_t p = {0};
    size_t ws = 0;
    CHECK(cdnn_graph_io_tensors(g, NULL, 0, &p.count));
    CHECK(cdnn_graph_workspace_size(g, &ws));
    cdnn_tensor_io_t *io = xcalloc((size_t)p.count, sizeof *io);
    p.uids = xcalloc((size_t)p.count, sizeof *p.uids);
    p.ptrs = xcalloc((size_t)p.count, sizeof *p.ptrs);
    CHECK(cdnn_graph_io_tensors(g, io, p.count, &p.count));
    for (int32_t i = 0; i < p.count; i++) {
        size_t elem = cdnn_data_type_size(io[i].type), n = io[i].span_bytes / elem;
        p.uids[i] = io[i].uid;
        p.ptrs[i] = aligned_alloc(256, (io[i].span_bytes + 255) / 256 * 256 + 256);
        if (!p.ptrs[i])
            die("aligned_alloc", CDNN_STATUS_ALLOC_FAILED);
        for (size_t k = 0; k < n; k++)
            cdnn_store_element(io[i].type, (char *)p.ptrs[i] + k * elem,
                               (double)((int)(k % 16) - 8) / 8.0);
    }
    p.workspace = ws ? aligned_alloc(256, (ws + 255) / 256 * 256) : NULL;
    free(io);
    return p;
}

static void pack_free(pack_t *p)
{
    for (int32_t i = 0; i < p->count; i++)
        free(p->ptrs[i]);
    free(p->uids);
    free(p->ptrs);
    free(p->workspace);
}

/* The first execute of g, timed; the pack is made and freed around it. */
static double first_execute(const cdnn_graph_t *g, cdnn_handle_t *h)
{
    pack_t p = pack_alloc(g);
    double start = now_seconds();
    CHECK(cdnn_graph_execute(g, h, p.count, p.uids, (void *const *)p.ptrs, p.workspace));
    double t = now_seconds() - start;
    pack_free(&p);
    return t;
}

/* ---- the four ways to a first result ------------------------------------------ */

typedef struct example {
    const char *text;
    size_t size;
    void *plan;       /* saved by benchmarking */
    size_t plan_size;
    int32_t candidates;
    char winner[128];
} example_t;

static cdnn_build_options_t *options(int benchmarking)
{
    cdnn_build_options_t *opts = NULL;
    CHECK(cdnn_build_options_create(&opts));
    CHECK(cdnn_build_options_set_knob(opts, "global.benchmarking", benchmarking));
    return opts;
}

/* Build a fresh graph from the example and execute it once: the seconds
 * the build and the execute took.  With ex non-NULL, keep what the plan
 * chose and its saved bytes. */
static double build_and_execute(const example_t *e, cdnn_handle_t *h, int benchmarking,
                                example_t *ex)
{
    cdnn_graph_t *g = NULL;
    CHECK(cdnn_graph_from_json(&g, e->text, e->size));
    cdnn_build_options_t *opts = options(benchmarking);
    double start = now_seconds();
    CHECK(cdnn_graph_build(g, h, opts));
    double t = now_seconds() - start + first_execute(g, h);
    cdnn_build_options_destroy(opts);
    if (ex) {
        cdnn_candidate_result_t best;
        int32_t chosen = -1;
        CHECK(cdnn_graph_candidates(g, &best, 1, &ex->candidates, &chosen));
        snprintf(ex->winner, sizeof ex->winner, "%s", best.name);
        CHECK(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &ex->plan_size));
        ex->plan = xcalloc(ex->plan_size, 1);
        CHECK(cdnn_graph_save(g, CDNN_SAVE_PLAN, ex->plan, ex->plan_size, &ex->plan_size));
    }
    cdnn_graph_destroy(g);
    return t;
}

static double load_and_execute(const example_t *e, cdnn_handle_t *h)
{
    cdnn_graph_t *g = NULL;
    double start = now_seconds();
    CHECK(cdnn_plan_load(&g, h, e->plan, e->plan_size));
    double t = now_seconds() - start + first_execute(g, h);
    cdnn_graph_destroy(g);
    return t;
}

typedef enum way { WAY_BENCHMARKING, WAY_LOAD, WAY_PLAIN } way_t;

/* One run; WAY_BENCHMARKING is a cache hit or not as the cache says. */
static double once(way_t way, const example_t *e, cdnn_handle_t *h)
{
    if (way == WAY_LOAD)
        return load_and_execute(e, h);
    return build_and_execute(e, h, way == WAY_BENCHMARKING, NULL);
}

/* The median seconds of one way, over repeated runs. */
static double measure(way_t way, const example_t *e, cdnn_handle_t *h, int min_runs)
{
    double times[MAX_RUNS], start = now_seconds();
    int runs = 0;
    while (runs < MAX_RUNS && (runs < min_runs || now_seconds() - start < MIN_SECONDS))
        times[runs++] = once(way, e, h);
    return median(times, runs);
}

/* ---- examples ------------------------------------------------------------------- */

static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0) {
        perror(path);
        exit(1);
    }
    long n = ftell(f);
    rewind(f);
    char *text = xcalloc((size_t)n + 1, 1);
    if (n < 0 || fread(text, 1, (size_t)n, f) != (size_t)n) {
        perror(path);
        exit(1);
    }
    fclose(f);
    *size = (size_t)n;
    return text;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The example file names in dir, sorted; *count of them. */
static char **example_names(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        exit(1);
    }
    char **names = xcalloc(MAX_EXAMPLES, sizeof *names);
    *count = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && *count < MAX_EXAMPLES;) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0)
            names[(*count)++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)*count, sizeof *names, compare_names);
    return names;
}

static void bench_example(const char *dir, const char *name, cdnn_handle_t *h)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    example_t e = {0};
    char *text = read_file(path, &e.size);
    e.text = text;
    setenv("CDNN_DISABLE_CACHE", "1", 1); /* every bench run times every candidate */
    build_and_execute(&e, h, 1, &e);       /* the winner, its saved plan */
    double bench = measure(WAY_BENCHMARKING, &e, h, MIN_RUNS);
    double load = measure(WAY_LOAD, &e, h, MIN_RUNS);
    double plain = measure(WAY_PLAIN, &e, h, MIN_RUNS);
    unsetenv("CDNN_DISABLE_CACHE");
    build_and_execute(&e, h, 1, NULL); /* records the choice */
    double hit = measure(WAY_BENCHMARKING, &e, h, MIN_RUNS);
    printf("%s\t%d\t%s\t%.0f\t%.0f\t%.1f\t%.0f\t%.0f\n", name, e.candidates, e.winner,
           bench * 1e6, load * 1e6, bench / load, hit * 1e6, plain * 1e6);
    fflush(stdout);
    free(e.plan);
    free(text);
}

/* A fresh cache directory, so that no record from elsewhere is hit and
 * ~/.cache is never written. */
static void private_cache(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/cdnn-bench-cache-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    setenv("CDNN_CACHE_DIR", dir, 1);
}

static void remove_cache(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/winners.v1", dir);
    unlink(path);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_benchmarking EXAMPLES_DIR\n");
        return 2;
    }
    char cache[64];
    private_cache(cache, sizeof cache);
    cdnn_handle_t *h = NULL;
    CHECK(cdnn_handle_create(&h, "cpu"));
    printf("# %s\n", cdnn_handle_device_description(h));
    printf("example\tcandidates\twinner\tbench_build+exec_us\tload+exec_us\t"
           "bench/load\tcache_hit_build+exec_us\tplain_build+exec_us\n");
    int count = 0;
    char **names = example_names(argv[1], &count);
    for (int i = 0; i < count; i++) {
        bench_example(argv[1], names[i], h);
        free(names[i]);
    }
    free(names);
    cdnn_handle_destroy(h);
    remove_cache(cache);
    return 0;
}
