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

#include <cdnn_sdk/numeric.h>

#include "cli.h"
#include "tensors.h"

static const char run_help[] =
    "usage: cdnn run FILE [--device DEVICE] [--check] [--iterations N]\n"
    "\n"
    "Load FILE (a saved plan or graph+plan container; a bare graph is built\n"
    "first), give every tensor it reads random values (fixed seed), and\n"
    "execute it N times, reporting the mean and median time.  Outputs are\n"
    "poisoned before every execute, so a value the plan fails to write shows.\n"
    "\n"
    "  --device DEVICE   the device to load and run on: cpu (the default) or\n"
    "                    cuda:N, where the inputs are uploaded to device\n"
    "                    memory and the outputs downloaded after the run\n"
    "  --check           also build FILE's graph pinned to cpu:reference on\n"
    "                    the CPU, run it on the same inputs and compare every\n"
    "                    output\n"
    "                    (tolerance relative to max(|ref|, 1): f32 and f64\n"
    "                    1e-4, f16 1e-2, bf16 5e-2, integers exact); exit 1\n"
    "                    on a mismatch.  Needs a graph: a bare plan cannot be\n"
    "                    checked\n"
    "  --iterations N    executes to time (default 1)\n";

enum { MAX_ITERATIONS = 1000000 };

typedef struct run_args {
    const char *file, *device;
    int check;
    long iterations;
} run_args_t;

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

/* The reference sees exactly the inputs the plan saw. */
static int copy_inputs(const cli_tensors_t *from, cli_tensors_t *to)
{
    for (int32_t i = 0; i < to->count; i++) {
        const cdnn_tensor_io_t *io = &to->io[i];
        int32_t k = cli_tensors_find(from, io->uid);
        if (k < 0 || from->io[k].type != io->type ||
            from->io[k].span_bytes != io->span_bytes || from->io[k].is_output != io->is_output)
            return cli_fail("run", CDNN_STATUS_CORRUPT_DATA,
                            "the plan's tensor uid %" PRId64 " does not match its "
                            "graph's (is the container's plan built from another graph?)",
                            io->uid);
        if (!io->is_output)
            memcpy(to->host[i], from->host[k], io->span_bytes);
    }
    return to->count == from->count
               ? EXIT_OK
               : cli_fail("run", CDNN_STATUS_CORRUPT_DATA,
                          "the plan has %d tensors, its graph %d", from->count,
                          to->count);
}

/* ---- executing ------------------------------------------------------------- */

/* One execute on poisoned outputs, timed from the call to the end of the
 * work on the device. */
static int execute(const cdnn_graph_t *g, cli_tensors_t *t, double *ms)
{
    int rc = cli_tensors_poison_outputs("run", t);
    double start = cli_now_ms();
    if (rc == EXIT_OK)
        rc = cli_tensors_execute("run", g, t);
    *ms = cli_now_ms() - start;
    return rc;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Execute n times and print the mean and median. */
static int execute_timed(const cdnn_graph_t *g, cli_tensors_t *t, long n)
{
    double *ms = malloc((size_t)n * sizeof *ms), sum = 0;
    if (!ms)
        return cli_fail("run", CDNN_STATUS_ALLOC_FAILED,
                        "out of memory for %ld timings", n);
    int rc = EXIT_OK;
    for (long i = 0; i < n && rc == EXIT_OK; i++) {
        rc = execute(g, t, &ms[i]);
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

static int compare_outputs(const cli_tensors_t *got, const cli_tensors_t *ref)
{
    int bad = 0;
    for (int32_t i = 0; i < ref->count; i++)
        if (ref->io[i].is_output)
            bad += !compare_output(&ref->io[i], got->host[cli_tensors_find(got, ref->uids[i])],
                                   ref->host[i]);
    if (bad)
        return cli_fail("run", CDNN_STATUS_EXECUTION_FAILED,
                        "%d output%s differ from cpu:reference beyond tolerance", bad,
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
static int check(const cli_artifact_t *a, cdnn_handle_t *h, const cli_tensors_t *got)
{
    cdnn_graph_t *g = NULL;
    cdnn_handle_t *cpu = NULL;
    cli_tensors_t ref = {0};
    double ms;
    int rc = cli_artifact_graph("run", a, NULL, &g);
    if (rc == EXIT_OK)
        rc = build_reference(g, h, &cpu);
    if (rc == EXIT_OK)
        rc = cli_tensors_alloc("run", g, cpu ? cpu : h, &ref);
    if (rc == EXIT_OK)
        rc = copy_inputs(got, &ref);
    if (rc == EXIT_OK)
        rc = execute(g, &ref, &ms);
    if (rc == EXIT_OK)
        rc = compare_outputs(got, &ref);
    cli_tensors_free(&ref);
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

static void describe(const cli_artifact_t *a, const cdnn_graph_t *g, cdnn_handle_t *h,
                     const cli_tensors_t *t, double load_ms)
{
    uint64_t id = 0;
    const char *name = "?";
    size_t ws = 0;
    cdnn_graph_engine(g, &id, &name);
    cdnn_graph_workspace_size(g, &ws);
    printf("run: %s: engine %s (0x%016" PRIx64 ") on %s, workspace %zu B, %d tensors; "
           "%s in %.3f ms\n",
           a->path, name, id, cdnn_handle_device(h), ws, t->count,
           a->contents & CDNN_BLOB_PLAN ? "loaded" : "loaded and built", load_ms);
}

static int run_loaded(const run_args_t *args, const cli_artifact_t *a, cdnn_handle_t *h)
{
    cdnn_graph_t *g = NULL;
    cli_tensors_t t = {0};
    double start = cli_now_ms();
    int rc = load(a, h, &g);
    double load_ms = cli_now_ms() - start;
    if (rc == EXIT_OK)
        rc = cli_tensors_alloc("run", g, h, &t);
    if (rc == EXIT_OK) {
        describe(a, g, h, &t, load_ms);
        rc = cli_tensors_fill_inputs("run", &t);
    }
    if (rc == EXIT_OK)
        rc = execute_timed(g, &t, args->iterations);
    if (rc == EXIT_OK)
        rc = cli_tensors_fetch_outputs("run", &t);
    if (rc == EXIT_OK && args->check)
        rc = check(a, h, &t);
    cli_tensors_free(&t);
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
        rc = cli_fail("run", CDNN_STATUS_BAD_PARAM,
                      "a bare plan carries no graph to check against; "
                      "save it as graph+plan");
    if (rc == EXIT_OK)
        rc = cli_open_handle("run", args.device, &h);
    if (rc == EXIT_OK)
        rc = run_loaded(&args, &a, h);
    cdnn_handle_destroy(h);
    cli_artifact_free(&a);
    return rc;
}
