/*
 * build.c -- `cdnn build`: a graph (JSON or saved) in, a saved plan out.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "io.h"
#include "tensors.h"

static const char build_help[] =
    "usage: cdnn build GRAPH -o OUT [--form graph|plan|graph+plan]\n"
    "                  [--device DEVICE] [--engine NAME|ID] [--benchmark]\n"
    "\n"
    "Build GRAPH (its JSON form, or a saved graph or container) into a plan\n"
    "on DEVICE and save it to OUT.\n"
    "\n"
    "  -o, --output OUT   where to write: a file (written whole or not at all,\n"
    "                     keeping the mode of a file that was there; a link\n"
    "                     is followed), a device or FIFO (written to), or -\n"
    "                     for standard output (the report then goes to\n"
    "                     standard error)\n"
    "  --form FORM        graph, plan or graph+plan (default graph+plan: a\n"
    "                     container that `cdnn run --check` can verify)\n"
    "  --device DEVICE    cpu or cuda:N (default cpu)\n"
    "  --engine ENGINE    use only this engine: a name (cpu:reference) or an\n"
    "                     id in hex (0x...), as `cdnn engines` lists them\n"
    "  --benchmark        time the candidate kernels and keep the fastest\n"
    "                     (knob global.benchmarking=1): the plan is executed\n"
    "                     once on random inputs, which times every candidate\n"
    "                     (progress on stderr when it is a terminal), the\n"
    "                     ranking is printed and the winner saved.  A record\n"
    "                     in the winner cache ($CDNN_CACHE_DIR, default\n"
    "                     ~/.cache/cdnn) that ranks every candidate names the\n"
    "                     winner without timing.  CDNN_FORCE_BENCHMARKING=1 in\n"
    "                     the environment benchmarks the same way\n";

typedef struct build_args {
    const char *graph, *out, *device;
    cdnn_save_form_t form;
    uint64_t engine; /* 0: let cdnn choose */
    int benchmark;
} build_args_t;

/* An engine by name, or by id as "0x" and 1-16 hex digits (not 0, which
 * the build options would read as "no engine pinned"). */
static int parse_engine(const char *s, uint64_t *id)
{
    if (strncmp(s, "0x", 2) != 0 && strncmp(s, "0X", 2) != 0) {
        *id = cdnn_engine_id_from_name(s);
        return *s ? 0 : -1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s + 2, &end, 16);
    if (errno || end == s + 2 || *end || s[2] == '-' || s[2] == '+' || v == 0)
        return -1;
    *id = v;
    return 0;
}

/* Fills a; CLI_CONTINUE, or the exit code of --help or bad usage. */
static int parse_args(int argc, char **argv, build_args_t *a)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"form", required_argument, NULL, 'f'},
        {"device", required_argument, NULL, 'd'},
        {"engine", required_argument, NULL, 'e'},
        {"benchmark", no_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    *a = (build_args_t){.device = "cpu", .form = CDNN_SAVE_GRAPH_AND_PLAN};
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        if (c == 'o')
            a->out = optarg;
        else if (c == 'd')
            a->device = optarg;
        else if (c == 'b')
            a->benchmark = 1;
        else if (c == 'f' && cli_parse_form(optarg, &a->form) == 0)
            continue;
        else if (c == 'e' && parse_engine(optarg, &a->engine) == 0)
            continue;
        else {
            if (c == 'f' || c == 'e')
                fprintf(stderr, "cdnn: build: bad --%s '%s'\n",
                        c == 'f' ? "form" : "engine", optarg);
            return cli_usage(build_help, c);
        }
    }
    if (optind + 1 != argc || !a->out) {
        fprintf(stderr, "cdnn: build: %s\n",
                !a->out ? "-o OUT is required" : "exactly one GRAPH is required");
        return cli_usage(build_help, '?');
    }
    a->graph = argv[optind];
    return CLI_CONTINUE;
}

/* One line per candidate as benchmarking times it. */
static void show_progress(int32_t index, int32_t count, const char *candidate,
                          double median_us, void *user)
{
    (void)user;
    fprintf(stderr, "candidate %d of %d: ", index + 1, count);
    cli_text_string(stderr, candidate);
    if (median_us < 0)
        fprintf(stderr, "  failed\n");
    else
        fprintf(stderr, "  %.1f us\n", median_us);
}

static cdnn_status_t make_options(const build_args_t *a, cdnn_build_options_t **opts)
{
    cdnn_status_t st = cdnn_build_options_create(opts);
    if (st == CDNN_STATUS_SUCCESS && a->engine)
        st = cdnn_build_options_pin_engine(*opts, a->engine);
    if (st == CDNN_STATUS_SUCCESS && a->benchmark)
        st = cdnn_build_options_set_knob(*opts, "global.benchmarking", 1);
    /* Progress is for people watching; a script's stderr stays quiet.  It
     * is asked for whether or not --benchmark is given, since
     * CDNN_FORCE_BENCHMARKING=1 benchmarks too. */
    if (st == CDNN_STATUS_SUCCESS && isatty(STDERR_FILENO))
        st = cdnn_build_options_set_progress(*opts, show_progress, NULL);
    return st;
}

/* Run g once on random inputs, which times every candidate and keeps the
 * fastest. */
static int execute_once(cdnn_graph_t *g, cdnn_handle_t *h)
{
    cli_tensors_t t = {0};
    int rc = cli_tensors_alloc("build", g, h, &t);
    if (rc == EXIT_OK)
        rc = cli_tensors_fill_inputs("build", &t);
    if (rc == EXIT_OK)
        rc = cli_tensors_execute("build", g, &t);
    cli_tensors_free(&t);
    return rc;
}

/* A benchmarking plan chooses at its first execute, and only a plan that
 * has chosen saves.  Whatever made the build benchmark (--benchmark, or
 * CDNN_FORCE_BENCHMARKING=1 in the environment), a plan that has not chosen
 * is executed once here (a winner-cache hit has chosen already); the
 * ranking is shown when there was one, or when --benchmark asked. */
static int choose(const build_args_t *a, cdnn_graph_t *g, cdnn_handle_t *h, FILE *report)
{
    int32_t count = 0, chosen = -1;
    cdnn_status_t st = cdnn_graph_candidates(g, NULL, 0, &count, &chosen);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_report("build", st);
    int rc = chosen < 0 ? execute_once(g, h) : EXIT_OK;
    if (rc == EXIT_OK && (a->benchmark || chosen < 0))
        rc = cli_print_ranking("build", g, report, 0);
    return rc;
}

/* Build g on h with a's options and save it to a->out. */
static int build_and_save(const build_args_t *a, cdnn_graph_t *g, cdnn_handle_t *h)
{
    FILE *report = cli_report_stream(a->out);
    cdnn_build_options_t *opts = NULL;
    cdnn_status_t st = make_options(a, &opts);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_build(g, h, opts);
    cdnn_build_options_destroy(opts);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_report("build", st);
    int rc = choose(a, g, h, report);
    if (rc != EXIT_OK)
        return rc;
    /* Asked after the choice: a benchmarking plan needs workspace for
     * every candidate until it has chosen, then only the winner's. */
    uint64_t id = 0;
    const char *engine = "";
    size_t ws = 0, written = 0;
    if ((st = cdnn_graph_engine(g, &id, &engine)) != CDNN_STATUS_SUCCESS ||
        (st = cdnn_graph_workspace_size(g, &ws)) != CDNN_STATUS_SUCCESS)
        return cli_report("build", st);
    rc = cli_save_file("build", g, a->form, a->out, &written);
    if (rc == EXIT_OK)
        fprintf(report, "built: engine %s (0x%016" PRIx64 ") on %s, workspace %zu B; "
                "wrote %zu B (%s) to %s\n", engine, id, cdnn_handle_device(h), ws,
                written, cli_form_name(a->form),
                strcmp(a->out, CLI_STDOUT) == 0 ? "standard output" : a->out);
    return rc;
}

int cli_build(int argc, char **argv)
{
    build_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    cli_artifact_t in;
    cdnn_graph_t *g = NULL;
    cdnn_handle_t *h = NULL;
    rc = cli_artifact_read("build", a.graph, &in);
    if (rc != EXIT_OK)
        return rc;
    if (in.contents == CDNN_BLOB_PLAN)
        rc = cli_fail("build", CDNN_STATUS_BAD_PARAM,
                      "'%s' holds a plan only, no graph to build from; build "
                      "from the graph's JSON, a saved graph or a graph+plan container "
                      "(`cdnn inspect` says what a file holds)", a.graph);
    /* No handle: a container's old plan is not loaded; we build anew. */
    if (rc == EXIT_OK)
        rc = cli_artifact_graph("build", &in, NULL, &g);
    if (rc == EXIT_OK)
        rc = cli_open_handle("build", a.device, &h);
    if (rc == EXIT_OK)
        rc = build_and_save(&a, g, h);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    cli_artifact_free(&in);
    return rc;
}
