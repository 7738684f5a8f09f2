/*
 * build.c -- `cdnn build`: a graph (JSON or saved) in, a saved plan out.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char build_help[] =
    "usage: cdnn build GRAPH -o OUT [--form graph|plan|graph+plan]\n"
    "                  [--device DEVICE] [--engine NAME|ID] [--benchmark]\n"
    "\n"
    "Build GRAPH (its JSON form, or a saved graph or container) into a plan\n"
    "on DEVICE and save it to OUT.  OUT is written whole or not at all.\n"
    "\n"
    "  -o, --output OUT   the file to write\n"
    "  --form FORM        graph, plan or graph+plan (default graph+plan: a\n"
    "                     container that `cdnn run --check` can verify)\n"
    "  --device DEVICE    cpu or cuda:N (default cpu)\n"
    "  --engine ENGINE    use only this engine: a name (cpu:reference) or an\n"
    "                     id in hex (0x...), as `cdnn engines` lists them\n"
    "  --benchmark        time the candidate kernels and keep the fastest\n"
    "                     (knob global.benchmarking=1)\n";

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

static cdnn_status_t make_options(const build_args_t *a, cdnn_build_options_t **opts)
{
    cdnn_status_t st = cdnn_build_options_create(opts);
    if (st == CDNN_STATUS_SUCCESS && a->engine)
        st = cdnn_build_options_pin_engine(*opts, a->engine);
    if (st == CDNN_STATUS_SUCCESS && a->benchmark)
        st = cdnn_build_options_set_knob(*opts, "global.benchmarking", 1);
    return st;
}

/* Build g on h with a's options and save it to a->out. */
static int build_and_save(const build_args_t *a, cdnn_graph_t *g, cdnn_handle_t *h)
{
    cdnn_build_options_t *opts = NULL;
    cdnn_status_t st = make_options(a, &opts);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_build(g, h, opts);
    cdnn_build_options_destroy(opts);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_report("build", st);
    uint64_t id = 0;
    const char *engine = "";
    size_t ws = 0, written = 0;
    if ((st = cdnn_graph_engine(g, &id, &engine)) != CDNN_STATUS_SUCCESS ||
        (st = cdnn_graph_workspace_size(g, &ws)) != CDNN_STATUS_SUCCESS)
        return cli_report("build", st);
    int rc = cli_save_file("build", g, a->form, a->out, &written);
    if (rc == EXIT_OK)
        printf("built: engine %s (0x%016" PRIx64 ") on %s, workspace %zu B; "
               "wrote %zu B (%s) to %s\n",
               engine, id, cdnn_handle_device(h), ws, written, cli_form_name(a->form),
               a->out);
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
    /* No handle: a container's old plan is not loaded; we build anew. */
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
