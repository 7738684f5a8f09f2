/*
 * bench_serialize.c -- what saving and loading plans costs (docs/CONTRACT.md).
 *
 * One source, two programs (bench/serialize/CMakeLists.txt):
 *
 *   bench_serialize examples DIR   public API, for each example graph DIR/NAME.json:
 *       build  = cdnn_graph_build of a fresh graph (validate, ask providers,
 *                order, create the execution context)
 *       save   = the first cdnn_graph_save(PLAN) of that built plan (asks
 *                the provider for its payload, encodes the envelope,
 *                SHA-256); later saves return the cached bytes
 *       load   = cdnn_plan_load of the saved bytes on the same handle
 *       ratio  = build / load
 *   bench_serialize chains          public API, pointwise chains of N nodes
 *       (N up to the graph format's 16384-item cap): the largest CPU plans
 *       reachable.  The CPU payload is the engine name, knobs and the
 *       validated graph, so it grows with the graph; MB/s = plan bytes /
 *       time.
 *   bench_serialize_envelope        the plan and container layers alone
 *       (src/format/plan_format.c, container_format.c, linked from a static
 *       copy of the library's sources) on raw payloads of 1 KiB .. 256 MiB,
 *       the sizes a kernel provider's code objects reach; the CPU provider
 *       cannot make such payloads.  Timed: plan_format_encode,
 *       plan_format_decode (identifier, verifier, version, SHA-256,
 *       canonical re-encode, body verifier), container_encode and
 *       container_decode (verifier and canonical re-encode), and for scale a
 *       bare SHA-256 and memcpy of the same bytes.
 *
 * Every time is the median of repeated runs: at least MIN_RUNS, at most
 * MAX_RUNS, until MIN_SECONDS have passed.  Output is tab-separated, one
 * line per case, with a header line.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cdnn/cdnn.h>

#include "bench_common.h"

#ifdef BENCH_ENVELOPE
#include "core/sha256.h"
#include "format/container_format.h"
#include "format/plan_format.h"
#endif

#define MIN_RUNS 5
#define MAX_RUNS 201
#define MIN_SECONDS 0.5

/* Whether another run is due, given runs so far and when they started. */
static int more(int runs, double start, int min_runs)
{
    return runs < MAX_RUNS &&
           (runs < min_runs || now_seconds() - start < MIN_SECONDS);
}

#ifndef BENCH_ENVELOPE

/* ---- public API: examples and chains ------------------------------------- */

static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = xcalloc(1, (size_t)n + 1);
    if (fread(text, 1, (size_t)n, f) != (size_t)n) {
        perror(path);
        exit(1);
    }
    fclose(f);
    text[n] = 0;
    *size = (size_t)n;
    return text;
}

typedef cdnn_graph_t *(*make_graph_fn)(const void *arg);

typedef struct result {
    double build, save, load, resave;
    size_t plan_bytes;
    char engine[64];
} result_t;

/* Build, first-save, load and re-save one graph, each timed by its median. */
static result_t measure(make_graph_fn make, const void *arg, cdnn_handle_t *h,
                        int min_runs)
{
    result_t r = {0};
    double builds[MAX_RUNS], saves[MAX_RUNS], loads[MAX_RUNS], resaves[MAX_RUNS];
    int runs = 0;
    uint8_t *bytes = NULL;
    double start = now_seconds();
    while (more(runs, start, min_runs)) {
        cdnn_graph_t *g = make(arg);
        double t0 = now_seconds();
        CHECK(cdnn_graph_build(g, h, NULL));
        double t1 = now_seconds();
        size_t size = 0;
        CHECK(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &size));
        double t2 = now_seconds();
        if (!bytes)
            bytes = xcalloc(1, size);
        else if (size != r.plan_bytes) {
            fprintf(stderr, "bench_serialize: plan size changed between builds "
                    "(%zu, %zu)\n", r.plan_bytes, size);
            exit(1);
        }
        CHECK(cdnn_graph_save(g, CDNN_SAVE_PLAN, bytes, size, &size));
        double t3 = now_seconds();
        /* The size query made the bytes (the first save encodes); the
         * copy-out is the cached path. */
        builds[runs] = t1 - t0;
        saves[runs] = t2 - t1;
        resaves[runs] = t3 - t2;
        r.plan_bytes = size;
        if (!runs) {
            uint64_t id;
            const char *name;
            CHECK(cdnn_graph_engine(g, &id, &name));
            snprintf(r.engine, sizeof r.engine, "%s", name);
        }
        cdnn_graph_destroy(g);
        cdnn_graph_t *loaded = NULL;
        double t4 = now_seconds();
        CHECK(cdnn_plan_load(&loaded, h, bytes, size));
        loads[runs] = now_seconds() - t4;
        cdnn_graph_destroy(loaded);
        runs++;
    }
    free(bytes);
    r.build = median(builds, runs);
    r.save = median(saves, runs);
    r.load = median(loads, runs);
    r.resave = median(resaves, runs);
    return r;
}

typedef struct json_arg {
    const char *text;
    size_t size;
} json_arg_t;

static cdnn_graph_t *graph_from_json(const void *arg)
{
    const json_arg_t *j = arg;
    cdnn_graph_t *g = NULL;
    CHECK(cdnn_graph_from_json(&g, j->text, j->size));
    return g;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void bench_examples(const char *dir, cdnn_handle_t *h)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        exit(1);
    }
    char *names[256];
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) && count < 256) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0)
            names[count++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)count, sizeof names[0], compare_names);
    printf("example\tengine\tplan_bytes\tbuild_us\tfirst_save_us\tload_us\t"
           "resave_us\tbuild/load\n");
    for (int i = 0; i < count; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        json_arg_t j;
        char *text = read_file(path, &j.size);
        j.text = text;
        result_t r = measure(graph_from_json, &j, h, 11);
        printf("%s\t%s\t%zu\t%.1f\t%.1f\t%.1f\t%.2f\t%.1f\n", names[i], r.engine,
               r.plan_bytes, r.build * 1e6, r.save * 1e6, r.load * 1e6,
               r.resave * 1e6, r.build / r.load);
        fflush(stdout);
        free(text);
        free(names[i]);
    }
}

/* x -> op -> v1 -> op -> ... -> y: n unary pointwise nodes, virtual
 * intermediates, [1, 64] f32 tensors, modes cycling through a few. */
static cdnn_graph_t *pointwise_chain(const void *arg)
{
    int n = *(const int *)arg;
    static const cdnn_pointwise_mode_t modes[] = {
        CDNN_PW_RELU_FWD, CDNN_PW_ABS, CDNN_PW_NEG, CDNN_PW_TANH_FWD};
    int64_t dims[2] = {1, 64};
    cdnn_graph_t *g = NULL;
    CHECK(cdnn_graph_create(&g));
    CHECK(cdnn_graph_tensor(g, 0, "x", CDNN_DATA_TYPE_F32, 2, dims, NULL));
    for (int i = 1; i <= n; i++) {
        CHECK(cdnn_graph_tensor(g, i, NULL, CDNN_DATA_TYPE_F32, 2, dims, NULL));
        if (i < n)
            CHECK(cdnn_graph_tensor_set_virtual(g, i));
        cdnn_pointwise_attr_t a;
        cdnn_pointwise_attr_init(&a, modes[i % 4]);
        CHECK(cdnn_graph_pointwise(g, NULL, &a, i - 1, CDNN_UID_NONE,
                                   CDNN_UID_NONE, i));
    }
    return g;
}

static void bench_chains(cdnn_handle_t *h, int max_nodes)
{
    static const int sizes[] = {1, 4, 16, 64, 256, 1024, 4096, 16383};
    printf("nodes\tengine\tplan_bytes\tbuild_ms\tfirst_save_ms\tsave_MB/s\t"
           "load_ms\tload_MB/s\tresave_ms\tbuild/load\n");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i] > max_nodes)
            break;
        result_t r = measure(pointwise_chain, &sizes[i], h, sizes[i] > 1000 ? 3 : 5);
        double mb = (double)r.plan_bytes / 1e6;
        printf("%d\t%s\t%zu\t%.3f\t%.3f\t%.0f\t%.3f\t%.1f\t%.4f\t%.2f\n", sizes[i],
               r.engine, r.plan_bytes, r.build * 1e3, r.save * 1e3, mb / r.save,
               r.load * 1e3, mb / r.load, r.resave * 1e3, r.build / r.load);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "examples") == 0 && argc != 3) ||
        (strcmp(argv[1], "examples") != 0 && strcmp(argv[1], "chains") != 0)) {
        fprintf(stderr, "usage: bench_serialize examples EXAMPLES_DIR\n"
                        "       bench_serialize chains [MAX_NODES]\n");
        return 2;
    }
    setenv("CDNN_DISABLE_CACHE", "1", 1); /* builds select; no winner cache */
    cdnn_handle_t *h = NULL;
    CHECK(cdnn_handle_create(&h, "cpu"));
    if (strcmp(argv[1], "examples") == 0)
        bench_examples(argv[2], h);
    else
        bench_chains(h, argc > 2 ? atoi(argv[2]) : 16383);
    cdnn_handle_destroy(h);
    return 0;
}

#else /* BENCH_ENVELOPE */

/* ---- the envelope layers on raw payloads ----------------------------------- */

static void fill(uint8_t *p, size_t n)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)x;
    }
}

/* The median over samples of `reps` back-to-back runs each (reps makes a
 * sample of a small size long enough for the clock), per run. */
#define TIME(out, min_runs, reps, ...)                                         \
    do {                                                                       \
        double t_[MAX_RUNS], s_ = now_seconds();                               \
        int n_ = 0;                                                            \
        while (more(n_, s_, (min_runs))) {                                     \
            double a_ = now_seconds();                                         \
            for (int r_ = 0; r_ < (reps); r_++) {                              \
                __VA_ARGS__;                                                   \
            }                                                                  \
            t_[n_++] = (now_seconds() - a_) / (reps);                          \
        }                                                                      \
        (out) = median(t_, n_);                                                \
    } while (0)

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : (size_t)256 << 20;
    printf("payload_bytes\tplan_bytes\tplan_encode_MB/s\tplan_decode_MB/s\t"
           "container_encode_MB/s\tcontainer_decode_MB/s\tsha256_MB/s\t"
           "memcpy_MB/s\n");
    static const uint8_t graph[64] = {0}; /* a stand-in graph part */
    uint8_t key[32] = {1, 2, 3};
    plan_tensor_t tensors[2] = {{1, 0, 4096, CDNN_DATA_TYPE_F32, 0},
                                {2, 64, 4096, CDNN_DATA_TYPE_F32, 1}};
    for (size_t size = 1024; size <= max; size *= 4) {
        uint8_t *payload = xcalloc(1, size);
        uint8_t *copy = xcalloc(1, size);
        fill(payload, size);
        plan_record_t rec = {
            .engine_id = cdnn_engine_id_from_name("kernels:bench"),
            .engine_name = "kernels:bench",
            .provider_name = "bench",
            .provider_version = "0.0.0",
            .device_kind = 0,
            .tensors = tensors,
            .tensor_count = 2,
            .workspace_size = 0,
            .payload_major = 1,
            .payload = payload,
            .payload_size = size,
            .content_key = key,
        };
        int min_runs = size >= ((size_t)64 << 20) ? 3 : MIN_RUNS;
        int reps = size < ((size_t)1 << 20) ? (int)(((size_t)1 << 20) / size) : 1;
        memset(copy, 0, size); /* fault its pages in before timing */
        uint8_t *plan = NULL, *cont = NULL;
        size_t plan_size = 0, cont_size = 0;
        double enc, dec, cenc, cdec, sha, cpy;
        TIME(enc, min_runs, reps, {
            free(plan);
            CHECK(plan_format_encode(&rec, &plan, &plan_size));
        });
        TIME(dec, min_runs, reps, {
            plan_record_t r;
            CHECK(plan_format_decode(plan, plan_size, &r));
            if (r.payload_size != size)
                die("decoded payload size", CDNN_STATUS_INTERNAL_ERROR);
            plan_record_free(&r);
        });
        TIME(cenc, min_runs, reps, {
            free(cont);
            CHECK(container_encode(graph, sizeof graph, plan, plan_size, &cont,
                                   &cont_size));
        });
        TIME(cdec, min_runs, reps, {
            const uint8_t *gp, *pp;
            size_t gs, ps;
            CHECK(container_decode(cont, cont_size, &gp, &gs, &pp, &ps));
        });
        TIME(sha, min_runs, reps, {
            sha256_t hsh;
            uint8_t out[32];
            sha256_begin(&hsh);
            sha256_update(&hsh, payload, size);
            CHECK(sha256_end(&hsh, out));
        });
        TIME(cpy, min_runs, reps, {
            memcpy(copy, payload, size);
            __asm__ volatile("" : : "r"(copy) : "memory");
        });
        double mb = (double)size / 1e6;
        printf("%zu\t%zu\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\n", size, plan_size,
               mb / enc, mb / dec, mb / cenc, mb / cdec, mb / sha, mb / cpy);
        fflush(stdout);
        free(plan);
        free(cont);
        free(payload);
        free(copy);
    }
    return 0;
}

#endif
