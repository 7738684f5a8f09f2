/*
 * run.c -- `cdnn run`: execute a saved plan on random inputs, time it, and
 * with --check compare its outputs with cpu:reference on the same inputs.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "numeric.h"

static const char run_help[] =
    "usage: cdnn run FILE [--device DEVICE] [--check] [--iterations N]\n"
    "\n"
    "Load FILE (a saved plan or graph+plan container; a bare graph is built\n"
    "first), give every tensor it reads random values (fixed seed), and\n"
    "execute it N times, reporting the mean and median time.  Outputs are\n"
    "poisoned before every execute, so a value the plan fails to write shows.\n"
    "\n"
    "  --device DEVICE   the device to load on (default cpu; the tensors live\n"
    "                    in host memory, so only cpu runs for now)\n"
    "  --check           also build FILE's graph pinned to cpu:reference, run\n"
    "                    it on the same inputs and compare every output\n"
    "                    (tolerance relative to max(|ref|, 1): f32 and f64\n"
    "                    1e-4, f16 1e-2, bf16 5e-2, integers exact); exit 1\n"
    "                    on a mismatch.  Needs a graph: a bare plan cannot be\n"
    "                    checked\n"
    "  --iterations N    executes to time (default 1)\n";

enum { MAX_ITERATIONS = 1000000 };

/* The most alignment a tensor may ask for: a page is plenty for any
 * engine, and a bound keeps a hostile plan from asking for absurd ones. */
#define MAX_ALIGNMENT ((int64_t)1 << 16)

typedef struct run_args {
    const char *file, *device;
    int check;
    long iterations;
} run_args_t;

/* Host memory for every tensor a plan reads or writes, and its workspace. */
typedef struct tensors {
    int32_t count;
    cdnn_tensor_io_t *io;
    int64_t *uids;
    void **ptrs;
    void *workspace;
} tensors_t;

/* ---- arguments ------------------------------------------------------------- */

static int parse_iterations(const char *s, long *n)
{
    char *end;
    errno = 0;
    *n = strtol(s, &end, 10);
    return errno || end == s || *end || *n < 1 || *n > MAX_ITERATIONS ? -1 : 0;
}

/* Fills a; CLI_CONTINUE, or the exit code of --help or bad usage. */
static int parse_args(int argc, char **argv, run_args_t *a)
{
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'},
        {"check", no_argument, NULL, 'c'},
        {"iterations", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    *a = (run_args_t){.device = "cpu", .iterations = 1};
    int c;
    while ((c = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
        if (c == 'd') {
            a->device = optarg;
        } else if (c == 'c') {
            a->check = 1;
        } else if (c != 'n' || parse_iterations(optarg, &a->iterations) != 0) {
            if (c == 'n')
                fprintf(stderr, "cdnn: run: --iterations wants 1 to %d, not '%s'\n",
                        MAX_ITERATIONS, optarg);
            return cli_usage(run_help, c);
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "cdnn: run: exactly one FILE is required\n");
        return cli_usage(run_help, '?');
    }
    a->file = argv[optind];
    return CLI_CONTINUE;
}

/* ---- tensors --------------------------------------------------------------- */

static void tensors_free(tensors_t *t)
{
    for (int32_t i = 0; t->ptrs && i < t->count; i++)
        free(t->ptrs[i]);
    free(t->io);
    free(t->uids);
    free(t->ptrs);
    free(t->workspace);
    memset(t, 0, sizeof *t);
}

/* aligned_alloc wants a size that is a multiple of the alignment. */
static void *alloc_aligned(size_t bytes, int64_t alignment)
{
    size_t align = alignment > 64 ? (size_t)alignment : 64;
    if (bytes > SIZE_MAX - align)
        return NULL;
    return aligned_alloc(align, (bytes + align - 1) / align * align + (bytes ? 0 : align));
}

static int alloc_one(tensors_t *t, int32_t i)
{
    const cdnn_tensor_io_t *io = &t->io[i];
    if (cdnn_data_type_size(io->type) == 0)
        return cli_fail("run", "tensor uid %" PRId64 " has no valid data type", io->uid);
    if (io->alignment < 0 || io->alignment > MAX_ALIGNMENT ||
        (io->alignment & (io->alignment - 1)))
        return cli_fail("run", "tensor uid %" PRId64 " asks for alignment %" PRId64
                        "; cdnn run handles powers of two up to %" PRId64,
                        io->uid, io->alignment, MAX_ALIGNMENT);
    t->uids[i] = io->uid;
    t->ptrs[i] = alloc_aligned(io->span_bytes, io->alignment);
    if (!t->ptrs[i])
        return cli_fail("run", "cannot allocate %zu B for tensor uid %" PRId64,
                        io->span_bytes, io->uid);
    return EXIT_OK;
}

/* Memory for every tensor of g's plan (as cdnn_graph_io_tensors says) and
 * for its workspace. */
static int tensors_alloc(const cdnn_graph_t *g, tensors_t *t)
{
    memset(t, 0, sizeof *t);
    size_t ws = 0;
    cdnn_status_t st = cdnn_graph_io_tensors(g, NULL, 0, &t->count);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_workspace_size(g, &ws);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_report("run", st);
    size_t n = t->count > 0 ? (size_t)t->count : 1;
    t->io = calloc(n, sizeof *t->io);
    t->uids = calloc(n, sizeof *t->uids);
    t->ptrs = calloc(n, sizeof *t->ptrs);
    if (!t->io || !t->uids || !t->ptrs)
        return cli_fail("run", "out of memory for %d tensors", t->count);
    if ((st = cdnn_graph_io_tensors(g, t->io, t->count, &t->count)) != CDNN_STATUS_SUCCESS)
        return cli_report("run", st);
    for (int32_t i = 0; i < t->count; i++)
        if (alloc_one(t, i) != EXIT_OK)
            return EXIT_FAILED;
    if (ws && !(t->workspace = alloc_aligned(ws, 256)))
        return cli_fail("run", "cannot allocate a %zu B workspace", ws);
    return EXIT_OK;
}

/* Inputs from a seed fixed per uid, so that reruns see the same values:
 * uniform in [-1, 1) for floats, small integers, 0 or 1 for bool. */
static void fill_input(const cdnn_tensor_io_t *io, void *p)
{
    size_t elem = cdnn_data_type_size(io->type), n = io->span_bytes / elem;
    uint32_t seed = 0x9e3779b9u ^ (uint32_t)io->uid ^ (uint32_t)((uint64_t)io->uid >> 32);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        double u = (double)(seed >> 8) * 0x1p-23 - 1.0;
        double v = io->type == CDNN_DATA_TYPE_BOOL     ? (double)(seed >> 31)
                   : cdnn_data_type_is_float(io->type) ? u
                                                       : floor(u * 8);
        cdnn_store_element(io->type, (char *)p + i * elem, v);
    }
}

static void fill_inputs(tensors_t *t)
{
    for (int32_t i = 0; i < t->count; i++)
        if (!t->io[i].is_output)
            fill_input(&t->io[i], t->ptrs[i]);
}

/* 0xff bytes: NaN in every float type, so an unwritten value cannot pass. */
static void poison_outputs(tensors_t *t)
{
    for (int32_t i = 0; i < t->count; i++)
        if (t->io[i].is_output)
            memset(t->ptrs[i], 0xff, t->io[i].span_bytes);
}

static int32_t find_uid(const tensors_t *t, int64_t uid)
{
    for (int32_t i = 0; i < t->count; i++)
        if (t->io[i].uid == uid)
            return i;
    return -1;
}

/* The reference sees exactly the inputs the plan saw. */
static int copy_inputs(const tensors_t *from, tensors_t *to)
{
    for (int32_t i = 0; i < to->count; i++) {
        const cdnn_tensor_io_t *io = &to->io[i];
        int32_t k = find_uid(from, io->uid);
        if (k < 0 || from->io[k].type != io->type ||
            from->io[k].span_bytes != io->span_bytes || from->io[k].is_output != io->is_output)
            return cli_fail("run", "the plan's tensor uid %" PRId64 " does not match its "
                            "graph's (is the container's plan built from another graph?)",
                            io->uid);
        if (!io->is_output)
            memcpy(to->ptrs[i], from->ptrs[k], io->span_bytes);
    }
    return to->count == from->count
               ? EXIT_OK
               : cli_fail("run", "the plan has %d tensors, its graph %d", from->count,
                          to->count);
}

/* ---- executing ------------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int execute(const cdnn_graph_t *g, cdnn_handle_t *h, tensors_t *t, double *ms)
{
    poison_outputs(t);
    double start = now_ms();
    cdnn_status_t st = cdnn_graph_execute(g, h, t->count, t->uids,
                                          (void *const *)t->ptrs, t->workspace);
    *ms = now_ms() - start;
    return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_report("run", st);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Execute n times and print the mean and median. */
static int execute_timed(const cdnn_graph_t *g, cdnn_handle_t *h, tensors_t *t, long n)
{
    double *ms = malloc((size_t)n * sizeof *ms), sum = 0;
    if (!ms)
        return cli_fail("run", "out of memory for %ld timings", n);
    int rc = EXIT_OK;
    for (long i = 0; i < n && rc == EXIT_OK; i++) {
        rc = execute(g, h, t, &ms[i]);
        sum += ms[i];
    }
    if (rc == EXIT_OK) {
        qsort(ms, (size_t)n, sizeof *ms, compare_doubles);
        double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
        printf("time: %ld execute%s, mean %.3f ms, median %.3f ms\n", n, n == 1 ? "" : "s",
               sum / (double)n, median);
    }
    free(ms);
    return rc;
}

/* ---- checking -------------------------------------------------------------- */

/* Allowed error relative to max(|ref|, 1), by what the type can hold. */
static double tolerance(cdnn_data_type_t type)
{
    switch (type) {
    case CDNN_DATA_TYPE_F32:
    case CDNN_DATA_TYPE_F64: return 1e-4;
    case CDNN_DATA_TYPE_F16: return 1e-2;
    case CDNN_DATA_TYPE_BF16: return 5e-2;
    default: return 0; /* integers and bool: exact */
    }
}

/* |got - want|, where equal infinities and two NaNs (a value that both
 * left unwritten, such as a gap between strided elements) agree. */
static double element_error(double got, double want)
{
    if (got == want || (isnan(got) && isnan(want)))
        return 0;
    double e = fabs(got - want);
    return isnan(e) ? INFINITY : e;
}

/* Compare one output; prints a line, returns 1 if within tolerance. */
static int compare_output(const cdnn_tensor_io_t *io, const void *got, const void *want)
{
    size_t elem = cdnn_data_type_size(io->type), n = io->span_bytes / elem;
    double err = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double w = cdnn_load_element(io->type, (const char *)want + i * elem);
        double e = element_error(cdnn_load_element(io->type, (const char *)got + i * elem), w);
        err = e > err ? e : err;
        scale = isfinite(w) && fabs(w) > scale ? fabs(w) : scale;
    }
    double allowed = tolerance(io->type) * (scale > 1 ? scale : 1);
    int ok = err <= allowed;
    printf("check: output uid %" PRId64 " (%s, %zu values): max |err| %.3g, allowed %.3g "
           "(max |ref| %.3g): %s\n",
           io->uid, cdnn_data_type_name(io->type), n, err, allowed, scale,
           ok ? "ok" : "MISMATCH");
    return ok;
}

static int compare_outputs(const tensors_t *got, const tensors_t *ref)
{
    int bad = 0;
    for (int32_t i = 0; i < ref->count; i++)
        if (ref->io[i].is_output)
            bad += !compare_output(&ref->io[i], got->ptrs[find_uid(got, ref->uids[i])],
                                   ref->ptrs[i]);
    if (bad)
        return cli_fail("run", "%d output%s differ from cpu:reference beyond tolerance", bad,
                        bad == 1 ? "" : "s");
    printf("check: every output matches cpu:reference\n");
    return EXIT_OK;
}

/* Build g pinned to cpu:reference on the CPU (a handle of its own unless
 * the run is already on the CPU). */
static int build_reference(cdnn_graph_t *g, cdnn_handle_t *h, cdnn_handle_t **cpu)
{
    if (strcmp(cdnn_handle_device(h), "cpu") != 0 &&
        cli_open_handle("run", "cpu", cpu) != EXIT_OK)
        return EXIT_FAILED;
    cdnn_build_options_t *opts = NULL;
    cdnn_status_t st = cdnn_build_options_create(&opts);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name("cpu:reference"));
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_build(g, *cpu ? *cpu : h, opts);
    cdnn_build_options_destroy(opts);
    return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_report("run", st);
}

/* Run a's graph on cpu:reference with got's inputs, compare the outputs. */
static int check(const cli_artifact_t *a, cdnn_handle_t *h, const tensors_t *got)
{
    cdnn_graph_t *g = NULL;
    cdnn_handle_t *cpu = NULL;
    tensors_t ref = {0};
    double ms;
    int rc = cli_artifact_graph("run", a, NULL, &g);
    if (rc == EXIT_OK)
        rc = build_reference(g, h, &cpu);
    if (rc == EXIT_OK)
        rc = tensors_alloc(g, &ref);
    if (rc == EXIT_OK)
        rc = copy_inputs(got, &ref);
    if (rc == EXIT_OK)
        rc = execute(g, cpu ? cpu : h, &ref, &ms);
    if (rc == EXIT_OK)
        rc = compare_outputs(got, &ref);
    tensors_free(&ref);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(cpu);
    return rc;
}

/* ---- the command ----------------------------------------------------------- */

/* What FILE holds, ready to execute on h: a plan (alone or with its graph)
 * is loaded; a bare graph is built with default options. */
static int load(const cli_artifact_t *a, cdnn_handle_t *h, cdnn_graph_t **g)
{
    if (a->contents == CDNN_BLOB_PLAN) {
        cdnn_status_t st = cdnn_plan_load(g, h, a->bytes, a->size);
        return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_report("run", st);
    }
    int rc = cli_artifact_graph("run", a, h, g);
    if (rc != EXIT_OK || (a->contents & CDNN_BLOB_PLAN))
        return rc;
    cdnn_status_t st = cdnn_graph_build(*g, h, NULL);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_report("run", st);
    printf("note: %s holds no plan; built one with default options\n", a->path);
    return EXIT_OK;
}

static void describe(const char *path, const cdnn_graph_t *g, cdnn_handle_t *h,
                     const tensors_t *t)
{
    uint64_t id = 0;
    const char *name = "?";
    size_t ws = 0;
    cdnn_graph_engine(g, &id, &name);
    cdnn_graph_workspace_size(g, &ws);
    printf("run: %s: engine %s (0x%016" PRIx64 ") on %s, workspace %zu B, %d tensors\n",
           path, name, id, cdnn_handle_device(h), ws, t->count);
}

static int run_loaded(const run_args_t *args, const cli_artifact_t *a, cdnn_handle_t *h)
{
    cdnn_graph_t *g = NULL;
    tensors_t t = {0};
    int rc = load(a, h, &g);
    if (rc == EXIT_OK)
        rc = tensors_alloc(g, &t);
    if (rc == EXIT_OK) {
        describe(a->path, g, h, &t);
        fill_inputs(&t);
        rc = execute_timed(g, h, &t, args->iterations);
    }
    if (rc == EXIT_OK && args->check)
        rc = check(a, h, &t);
    tensors_free(&t);
    cdnn_graph_destroy(g);
    return rc;
}

int cli_run(int argc, char **argv)
{
    run_args_t args;
    int rc = parse_args(argc, argv, &args);
    if (rc != CLI_CONTINUE)
        return rc;
    cli_artifact_t a;
    cdnn_handle_t *h = NULL;
    if ((rc = cli_artifact_read("run", args.file, &a)) != EXIT_OK)
        return rc;
    if (args.check && a.contents == CDNN_BLOB_PLAN)
        rc = cli_fail("run", "a bare plan carries no graph to check against; "
                      "save it as graph+plan");
    if (rc == EXIT_OK)
        rc = cli_open_handle("run", args.device, &h);
    /* Tensors are host memory; a GPU plan would be handed CPU pointers. */
    if (rc == EXIT_OK && strcmp(cdnn_handle_device(h), "cpu") != 0)
        rc = cli_fail("run", "tensors are allocated in host memory, so plans run on the "
                      "cpu device only for now, not on %s", cdnn_handle_device(h));
    if (rc == EXIT_OK)
        rc = run_loaded(&args, &a, h);
    cdnn_handle_destroy(h);
    cli_artifact_free(&a);
    return rc;
}
