/*
 * demo.c -- `cdnn demo`: the headline, end to end.  A plan is built with
 * benchmarking, saved, then loaded in a fresh process that neither selects
 * nor benchmarks nor compiles, run and checked against cpu:reference, and
 * re-saved to exactly the bytes it came from; the build's time is shown
 * next to the load's.  The later steps are the public commands (`cdnn run
 * --check`, `cdnn resave`), run as child processes, so what the demo shows
 * is what a user's own process would see.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "tensors.h"

static const char demo_help[] =
    "usage: cdnn demo [--device DEVICE] [--keep DIR]\n"
    "\n"
    "What cdnn is for, end to end, on cuda:0 when a CUDA device is present and\n"
    "on the CPU otherwise (or on DEVICE).  For a matmul -> bias -> gelu graph\n"
    "and a conv -> bias -> relu graph (f32 on the CPU; bf16 and f16 on a GPU):\n"
    "  1. build with benchmarking: every candidate kernel of every engine that\n"
    "     applies is timed at the first execute (device-side on a GPU) and the\n"
    "     fastest kept; the ranking and the time it took are printed;\n"
    "  2. save the plan with its graph to a file;\n"
    "  3. in a fresh process (`cdnn run FILE --device D --check`): load it --\n"
    "     no selection, no benchmarking, no compilation -- run it on random\n"
    "     inputs and compare every output with cpu:reference;\n"
    "  4. in another (`cdnn resave FILE -o FILE2 --device D`): load and save\n"
    "     again; FILE2 must equal FILE byte for byte.\n"
    "A table last: the benchmarking build's time next to the load's.  A graph\n"
    "that no engine on the device takes runs on the CPU, and says so.  The\n"
    "demo always benchmarks (the winner cache is off for it).  Files go to a\n"
    "temporary directory, removed after, unless --keep DIR names one to keep\n"
    "them in.  Exit 1 if any step fails.\n";

/* ---- the graphs ------------------------------------------------------------ */

/* A demo graph's sizes, by device: small on the CPU, GPU-sized on a GPU. */
typedef struct demo_size {
    cdnn_data_type_t type;
    int64_t m, n, k;          /* matmul */
    int64_t batch, channels, height, width, filters; /* 3x3 conv, padding 1 */
} demo_size_t;

static const demo_size_t cpu_size = {CDNN_DATA_TYPE_F32, 128, 256, 256, 1, 32, 28, 28, 32};
static const demo_size_t gpu_size = {CDNN_DATA_TYPE_BF16, 1024, 1024, 1024, 2, 64, 56, 56, 64};

/* Intermediate results are f32 whatever the inputs' type. */
static cdnn_status_t virtual_tensor(cdnn_graph_t *g, int64_t uid, const char *name)
{
    cdnn_status_t st = cdnn_graph_tensor(g, uid, name, CDNN_DATA_TYPE_F32, 0, NULL, NULL);
    return st ? st : cdnn_graph_tensor_set_virtual(g, uid);
}

static cdnn_status_t matmul_bias_gelu(cdnn_graph_t *g, const demo_size_t *s)
{
    const int64_t a[] = {1, s->m, s->k}, b[] = {1, s->k, s->n}, bias[] = {1, 1, s->n},
                  y[] = {1, s->m, s->n};
    cdnn_pointwise_attr_t add, gelu;
    cdnn_pointwise_attr_init(&add, CDNN_PW_ADD);
    cdnn_pointwise_attr_init(&gelu, CDNN_PW_GELU_FWD);
    cdnn_status_t st;
    if ((st = cdnn_graph_set_name(g, "matmul_bias_gelu")) ||
        (st = cdnn_graph_tensor(g, 1, "a", s->type, 3, a, NULL)) ||
        (st = cdnn_graph_tensor(g, 2, "b", s->type, 3, b, NULL)) ||
        (st = cdnn_graph_tensor(g, 3, "bias", s->type, 3, bias, NULL)) ||
        (st = virtual_tensor(g, 4, "mm")) || (st = virtual_tensor(g, 5, "biased")) ||
        (st = cdnn_graph_tensor(g, 6, "y", s->type, 3, y, NULL)) ||
        (st = cdnn_graph_matmul(g, "matmul", 1, 2, 4)) ||
        (st = cdnn_graph_pointwise(g, "bias", &add, 4, 3, CDNN_UID_NONE, 5)) ||
        (st = cdnn_graph_pointwise(g, "gelu", &gelu, 5, CDNN_UID_NONE, CDNN_UID_NONE, 6)))
        return st;
    return cdnn_graph_validate(g);
}

/* NHWC, the layout convolution kernels want: dims stay N, C, H, W and the
 * strides put the channels innermost. */
static void channels_last(const int64_t dims[4], int64_t strides[4])
{
    strides[1] = 1;
    strides[3] = dims[1];
    strides[2] = dims[3] * dims[1];
    strides[0] = dims[2] * strides[2];
}

static cdnn_status_t conv_bias_relu(cdnn_graph_t *g, const demo_size_t *s)
{
    /* f16 is the convolution type of GPU networks; bf16 stays the matmul's. */
    cdnn_data_type_t type = s->type == CDNN_DATA_TYPE_BF16 ? CDNN_DATA_TYPE_F16 : s->type;
    const int64_t x[] = {s->batch, s->channels, s->height, s->width},
                  w[] = {s->filters, s->channels, 3, 3}, b[] = {1, s->filters, 1, 1},
                  y[] = {s->batch, s->filters, s->height, s->width};
    int64_t xs[4], ws[4], bs[4], ys[4];
    channels_last(x, xs);
    channels_last(w, ws);
    channels_last(b, bs);
    channels_last(y, ys);
    cdnn_conv_attr_t conv;
    cdnn_conv_attr_init(&conv, 2);
    conv.pre_padding[0] = conv.pre_padding[1] = 1;
    conv.post_padding[0] = conv.post_padding[1] = 1;
    cdnn_pointwise_attr_t add, relu;
    cdnn_pointwise_attr_init(&add, CDNN_PW_ADD);
    cdnn_pointwise_attr_init(&relu, CDNN_PW_RELU_FWD);
    cdnn_status_t st;
    if ((st = cdnn_graph_set_name(g, "conv_bias_relu")) ||
        (st = cdnn_graph_tensor(g, 1, "x", type, 4, x, xs)) ||
        (st = cdnn_graph_tensor(g, 2, "w", type, 4, w, ws)) ||
        (st = cdnn_graph_tensor(g, 3, "bias", type, 4, b, bs)) ||
        (st = virtual_tensor(g, 4, "conv_out")) || (st = virtual_tensor(g, 5, "biased")) ||
        (st = cdnn_graph_tensor(g, 6, "y", type, 4, y, ys)) ||
        (st = cdnn_graph_conv_fwd(g, "conv", &conv, 1, 2, 4)) ||
        (st = cdnn_graph_pointwise(g, "bias", &add, 4, 3, CDNN_UID_NONE, 5)) ||
        (st = cdnn_graph_pointwise(g, "relu", &relu, 5, CDNN_UID_NONE, CDNN_UID_NONE, 6)))
        return st;
    return cdnn_graph_validate(g);
}

typedef struct demo {
    const char *name;
    cdnn_status_t (*make)(cdnn_graph_t *g, const demo_size_t *s);
} demo_t;

static const demo_t demos[] = {
    {"matmul_bias_gelu", matmul_bias_gelu},
    {"conv_bias_relu", conv_bias_relu},
};
enum { DEMO_COUNT = sizeof demos / sizeof demos[0] };

/* What the table at the end shows of one demo. */
typedef struct outcome {
    char engine[96], device[32];
    double build_ms, load_ms;
    int built, checked, resaved;
} outcome_t;

/* ---- small helpers --------------------------------------------------------- */

/* Run argv (argv[0] a path) with its output shown indented; the exit code
 * (-1 if it could not run or died), and in *load_ms the time `cdnn run`
 * reports for its load, when it reports one. */
static int run_child(char *const argv[], double *load_ms)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], STDOUT_FILENO);
        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[0]);
        close(pipefd[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(pipefd[1]);
    FILE *out = pid > 0 ? fdopen(pipefd[0], "r") : NULL;
    char line[1024];
    while (out && fgets(line, sizeof line, out)) {
        printf("      | %s", line);
        const char *at = strstr(line, "loaded in ");
        if (at && load_ms)
            sscanf(at, "loaded in %lf ms", load_ms);
    }
    if (out)
        fclose(out);
    else
        close(pipefd[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Whether two files hold the same bytes; prints the first difference. */
static int same_bytes(const char *a_path, const char *b_path)
{
    cli_artifact_t a, b;
    if (cli_artifact_read("demo", a_path, &a) != EXIT_OK)
        return 0;
    if (cli_artifact_read("demo", b_path, &b) != EXIT_OK) {
        cli_artifact_free(&a);
        return 0;
    }
    size_t n = a.size < b.size ? a.size : b.size, i = 0;
    while (i < n && a.bytes[i] == b.bytes[i])
        i++;
    int same = a.size == b.size && i == n;
    if (same)
        printf("    re-saved %zu B: identical to the file it was loaded from\n", a.size);
    else
        printf("    re-saved %zu B against %zu B: the bytes first differ at offset %zu\n",
               b.size, a.size, i);
    cli_artifact_free(&a);
    cli_artifact_free(&b);
    return same;
}

/* dir/name suffix into out; -1 if it does not fit. */
static int file_path(char *out, size_t cap, const char *dir, const char *name,
                     const char *suffix)
{
    int n = snprintf(out, cap, "%s/%s%s", dir, name, suffix);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* ---- the steps ------------------------------------------------------------- */

/* A handle for d: the demo's device if an engine there takes the graph,
 * else the CPU's.  *g is d's graph, made for the chosen device's sizes. */
static int choose_device(const demo_t *d, cdnn_handle_t *device, cdnn_handle_t *cpu,
                         cdnn_handle_t **h, cdnn_graph_t **g)
{
    int on_cpu = device == cpu;
    for (int attempt = 0; attempt < 2; attempt++) {
        *h = on_cpu ? cpu : device;
        cdnn_status_t st = cdnn_graph_create(g);
        if (st == CDNN_STATUS_SUCCESS)
            st = d->make(*g, on_cpu ? &cpu_size : &gpu_size);
        if (st != CDNN_STATUS_SUCCESS)
            return cli_report(d->name, st);
        int32_t count = 0;
        st = cdnn_graph_applicable_engines(*g, *h, NULL, 0, &count);
        if (st == CDNN_STATUS_SUCCESS && count > 0)
            return EXIT_OK;
        cdnn_graph_destroy(*g);
        *g = NULL;
        if (on_cpu)
            break;
        printf("    no engine on %s takes %s; it runs on the CPU instead\n",
               cdnn_handle_device(device), d->name);
        on_cpu = 1;
    }
    return cli_fail(d->name, CDNN_STATUS_NOT_SUPPORTED, "no engine takes it");
}

/* Step 1: build with benchmarking, which happens at the first execute. */
static int build_benchmarked(const demo_t *d, cdnn_graph_t *g, cdnn_handle_t *h,
                             outcome_t *o)
{
    cdnn_build_options_t *opts = NULL;
    cli_tensors_t t = {0};
    double start = cli_now_ms();
    cdnn_status_t st = cdnn_build_options_create(&opts);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_build_options_set_knob(opts, "global.benchmarking", 1);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_build(g, h, opts);
    cdnn_build_options_destroy(opts);
    int rc = st == CDNN_STATUS_SUCCESS ? cli_tensors_alloc(d->name, g, h, &t)
                                       : cli_report(d->name, st);
    if (rc == EXIT_OK)
        rc = cli_tensors_fill_inputs(d->name, &t);
    if (rc == EXIT_OK)
        rc = cli_tensors_execute(d->name, g, &t);
    o->build_ms = cli_now_ms() - start;
    cli_tensors_free(&t);
    const char *engine = "?";
    if (rc == EXIT_OK && cdnn_graph_engine(g, NULL, &engine) == CDNN_STATUS_SUCCESS)
        snprintf(o->engine, sizeof o->engine, "%s", engine);
    if (rc == EXIT_OK) {
        printf("  1. built with benchmarking on %s in %.1f ms; ", cdnn_handle_device(h),
               o->build_ms);
        rc = cli_print_ranking(d->name, g, stdout, 8);
    }
    return rc;
}

/* Steps 2-4 for the file path: save, then run --check and resave in
 * fresh processes. */
static int save_load_resave(const demo_t *d, cdnn_graph_t *g, const char *self,
                            const char *dir, outcome_t *o)
{
    char path[PATH_MAX], resaved[PATH_MAX];
    if (file_path(path, sizeof path, dir, d->name, ".cdnn") != 0 ||
        file_path(resaved, sizeof resaved, dir, d->name, ".resaved.cdnn") != 0)
        return cli_fail(d->name, CDNN_STATUS_BAD_PARAM, "the path %s is too long", dir);
    size_t size = 0;
    if (cli_save_file(d->name, g, CDNN_SAVE_GRAPH_AND_PLAN, path, &size) != EXIT_OK)
        return EXIT_FAILED;
    printf("  2. saved graph+plan, %zu B: %s\n", size, path);
    printf("  3. in a fresh process: cdnn run %s --device %s --check\n", path, o->device);
    char *run_argv[] = {(char *)self, "run", path, "--device", o->device, "--check", NULL};
    o->load_ms = -1;
    o->checked = run_child(run_argv, &o->load_ms) == 0;
    printf("  4. in another: cdnn resave %s -o %s --device %s\n", path, resaved, o->device);
    char *resave_argv[] = {(char *)self, "resave", path, "-o", resaved, "--device",
                           o->device, NULL};
    o->resaved = run_child(resave_argv, NULL) == 0 && same_bytes(path, resaved);
    return o->checked && o->resaved ? EXIT_OK : EXIT_FAILED;
}

static int run_demo(const demo_t *d, cdnn_handle_t *device, cdnn_handle_t *cpu,
                    const char *self, const char *dir, outcome_t *o)
{
    cdnn_handle_t *h = NULL;
    cdnn_graph_t *g = NULL;
    printf("\n%s\n", d->name);
    int rc = choose_device(d, device, cpu, &h, &g);
    if (rc == EXIT_OK) {
        snprintf(o->device, sizeof o->device, "%s", cdnn_handle_device(h));
        rc = build_benchmarked(d, g, h, o);
    }
    o->built = rc == EXIT_OK;
    if (rc == EXIT_OK)
        rc = save_load_resave(d, g, self, dir, o);
    cdnn_graph_destroy(g);
    return rc;
}

static void print_table(const outcome_t *o)
{
    printf("\n%-18s %-8s %-26s %12s %10s  %-8s %s\n", "graph", "device", "engine",
           "build+bench", "load", "check", "re-save");
    for (int i = 0; i < DEMO_COUNT; i++) {
        char build[32] = "-", load[32] = "-";
        if (o[i].built)
            snprintf(build, sizeof build, "%.1f ms", o[i].build_ms);
        if (o[i].load_ms >= 0 && o[i].built)
            snprintf(load, sizeof load, "%.2f ms", o[i].load_ms);
        printf("%-18s %-8s %-26s %12s %10s  %-8s %s\n", demos[i].name,
               o[i].device[0] ? o[i].device : "-", o[i].engine[0] ? o[i].engine : "-",
               build, load, o[i].checked ? "ok" : "FAILED",
               o[i].resaved ? "byte-exact" : "FAILED");
    }
}

/* ---- the command ----------------------------------------------------------- */

/* The device: the one asked for, else cuda:0 where there is one, else the
 * CPU's handle itself. */
static int open_device(const char *asked, cdnn_handle_t *cpu, cdnn_handle_t **h)
{
    if (asked && strcmp(asked, "cpu") == 0) {
        *h = cpu;
        return EXIT_OK;
    }
    if (asked)
        return cli_open_handle("demo", asked, h);
    if (cdnn_handle_create(h, "cuda:0") == CDNN_STATUS_SUCCESS)
        return EXIT_OK;
    printf("no CUDA device here (%s); the demo runs on the CPU\n", cdnn_last_error());
    *h = cpu;
    return EXIT_OK;
}

/* The directory for the files: --keep's (made if missing), else a fresh
 * temporary one. */
static int make_dir(const char *keep, char *dir, size_t cap)
{
    if (keep) {
        snprintf(dir, cap, "%s", keep);
        if (mkdir(dir, 0777) == 0 || errno == EEXIST)
            return EXIT_OK;
        return cli_fail("demo", CDNN_STATUS_IO_ERROR, "cannot make %s: %s", dir,
                        strerror(errno));
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/cdnn-demo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? EXIT_OK
                        : cli_fail("demo", CDNN_STATUS_IO_ERROR, "cannot make %s: %s",
                                   dir, strerror(errno));
}

static void remove_dir(const char *dir)
{
    char path[PATH_MAX];
    for (int i = 0; i < DEMO_COUNT; i++) {
        if (file_path(path, sizeof path, dir, demos[i].name, ".cdnn") == 0)
            unlink(path);
        if (file_path(path, sizeof path, dir, demos[i].name, ".resaved.cdnn") == 0)
            unlink(path);
    }
    rmdir(dir);
}

static int parse_args(int argc, char **argv, const char **device, const char **keep)
{
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'},
        {"keep", required_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'd')
            *device = optarg;
        else if (c == 'k')
            *keep = optarg;
        else
            return cli_usage(demo_help, c);
    }
    if (optind != argc) {
        fprintf(stderr, "cdnn: demo: takes no operands\n");
        return cli_usage(demo_help, '?');
    }
    return CLI_CONTINUE;
}

int cli_demo(int argc, char **argv)
{
    const char *device = NULL, *keep = NULL;
    int rc = parse_args(argc, argv, &device, &keep);
    if (rc != CLI_CONTINUE)
        return rc;
    /* The demo shows benchmarking, so a winner recorded by an earlier run
     * must not stand in for it (and the demo records none). */
    setenv("CDNN_DISABLE_CACHE", "1", 1);
    char self[PATH_MAX], dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return cli_fail("demo", CDNN_STATUS_IO_ERROR,
                        "cannot find this program (/proc/self/exe): %s", strerror(errno));
    self[n] = 0;
    cdnn_handle_t *cpu = NULL, *h = NULL;
    rc = cli_open_handle("demo", "cpu", &cpu);
    if (rc == EXIT_OK)
        rc = open_device(device, cpu, &h);
    if (rc == EXIT_OK)
        rc = make_dir(keep, dir, sizeof dir);
    if (rc != EXIT_OK) {
        cdnn_handle_destroy(cpu);
        return rc;
    }
    printf("device: %s\nfiles:  %s%s\n", cdnn_handle_device_description(h), dir,
           keep ? "" : " (removed at the end; --keep DIR keeps them)");
    outcome_t outcomes[DEMO_COUNT] = {{{0}}};
    for (int i = 0; i < DEMO_COUNT; i++)
        if (run_demo(&demos[i], h, cpu, self, dir, &outcomes[i]) != EXIT_OK)
            rc = EXIT_FAILED;
    print_table(outcomes);
    if (!keep)
        remove_dir(dir);
    if (h != cpu)
        cdnn_handle_destroy(h);
    cdnn_handle_destroy(cpu);
    return rc;
}
