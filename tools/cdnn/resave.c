/*
 * resave.c -- `cdnn resave`: load a saved artifact and save it again,
 * perhaps in another form.  A plan re-saves to the very bytes it was
 * loaded from (docs/CONTRACT.md rule 1); this command is how an operator sees that.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "io.h"

static const char resave_help[] =
    "usage: cdnn resave IN -o OUT [--form graph|plan|graph+plan] [--device DEVICE]\n"
    "\n"
    "Load IN (a saved graph, plan or graph+plan container) and save it to OUT\n"
    "in FORM (default: the form IN has).  A plan is loaded on DEVICE (default\n"
    "cpu), which needs a provider that serves its engine, and saves exactly\n"
    "the bytes it was loaded from: re-saving a plan as a plan gives a file\n"
    "identical to IN, and a container's plan part comes out byte for byte.\n"
    "To pick up newer engines or kernels, use `cdnn build` instead.\n"
    "\n"
    "  -o, --output OUT   where to write, as for `cdnn build` (a file is\n"
    "                     written whole or not at all; - is standard output)\n"
    "  --form FORM        graph, plan or graph+plan\n"
    "  --device DEVICE    cpu or cuda:N (default cpu)\n";

typedef struct resave_args {
    const char *in, *out, *device;
    int form_given;
    cdnn_save_form_t form;
} resave_args_t;

/* Fills a; CLI_CONTINUE, or the exit code of --help or bad usage. */
static int parse_args(int argc, char **argv, resave_args_t *a)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"form", required_argument, NULL, 'f'},
        {"device", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    *a = (resave_args_t){.device = "cpu"};
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        if (c == 'o') {
            a->out = optarg;
        } else if (c == 'd') {
            a->device = optarg;
        } else if (c == 'f' && cli_parse_form(optarg, &a->form) == 0) {
            a->form_given = 1;
        } else {
            if (c == 'f')
                fprintf(stderr, "cdnn: resave: bad --form '%s'\n", optarg);
            return cli_usage(resave_help, c);
        }
    }
    if (optind + 1 != argc || !a->out) {
        fprintf(stderr, "cdnn: resave: %s\n",
                !a->out ? "-o OUT is required" : "exactly one IN is required");
        return cli_usage(resave_help, '?');
    }
    a->in = argv[optind];
    return CLI_CONTINUE;
}

/* Load what `in` holds: a plan alone with cdnn_plan_load, anything with a
 * graph with cdnn_graph_load (a container's plan too).  A handle is made
 * only when there is a plan, so graphs resave without any provider. */
static int load(const char *device, const cli_artifact_t *in, cdnn_handle_t **h,
                cdnn_graph_t **g)
{
    int rc = (in->contents & CDNN_BLOB_PLAN) ? cli_open_handle("resave", device, h)
                                              : EXIT_OK;
    if (rc != EXIT_OK)
        return rc;
    if (in->contents != CDNN_BLOB_PLAN)
        return cli_artifact_graph("resave", in, *h, g);
    cdnn_status_t st = cdnn_plan_load(g, *h, in->bytes, in->size);
    return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_report("resave", st);
}

/* Whether in holds what form a->form saves; said in the CLI's terms
 * before the library would refuse in its own (save forms, load calls). */
static int check_form(const resave_args_t *a, const cli_artifact_t *in)
{
    int wants_graph = a->form != CDNN_SAVE_PLAN, wants_plan = a->form != CDNN_SAVE_GRAPH;
    if (wants_graph && !(in->contents & CDNN_BLOB_GRAPH))
        return cli_fail("resave", CDNN_STATUS_BAD_PARAM,
                        "'%s' holds a plan only, so there is no graph to save "
                        "as --form %s; it resaves as --form plan, and `cdnn build` makes "
                        "a graph+plan container from the graph", a->in,
                        cli_form_name(a->form));
    if (wants_plan && !(in->contents & CDNN_BLOB_PLAN))
        return cli_fail("resave", CDNN_STATUS_BAD_PARAM,
                        "'%s' holds a graph only, so there is no plan to save "
                        "as --form %s; `cdnn build` builds one (or resave as --form graph)",
                        a->in, cli_form_name(a->form));
    return EXIT_OK;
}

/* Save g as a asks; a plan that does not come back byte for byte is a
 * library bug (rule 1), refused before anything is written. */
static int resave(const resave_args_t *a, const cli_artifact_t *in, cdnn_graph_t *g)
{
    cdnn_save_form_t from = cli_form_of(in->contents);
    unsigned char *bytes = NULL;
    size_t size = 0;
    int rc = cli_save_bytes("resave", g, a->form, &bytes, &size);
    if (rc != EXIT_OK)
        return rc;
    int same_form = a->form == from && !in->is_json;
    int identical = same_form && size == in->size && memcmp(bytes, in->bytes, size) == 0;
    if (same_form && from == CDNN_SAVE_PLAN && !identical)
        rc = cli_fail("resave", CDNN_STATUS_INTERNAL_ERROR,
                      "the re-saved plan differs from '%s' (%zu B, was %zu B); "
                      "a loaded plan must save the bytes it was loaded from: please "
                      "report this cdnn bug; nothing was written", a->in, size, in->size);
    if (rc == EXIT_OK)
        rc = cli_write_output("resave", a->out, bytes, size);
    if (rc == EXIT_OK)
        fprintf(cli_report_stream(a->out),
                "resaved: %s (%s) -> %s (%s), %zu B; identical to the input: %s\n", a->in,
                in->is_json ? "graph JSON" : cli_form_name(from),
                strcmp(a->out, CLI_STDOUT) == 0 ? "standard output" : a->out,
                cli_form_name(a->form), size,
                !same_form ? "n/a (another form)" : identical ? "yes" : "no");
    free(bytes);
    return rc;
}

int cli_resave(int argc, char **argv)
{
    resave_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    cli_artifact_t in;
    cdnn_handle_t *h = NULL;
    cdnn_graph_t *g = NULL;
    rc = cli_artifact_read("resave", a.in, &in);
    if (rc != EXIT_OK)
        return rc;
    if (!a.form_given)
        a.form = cli_form_of(in.contents);
    rc = check_form(&a, &in);
    if (rc == EXIT_OK)
        rc = load(a.device, &in, &h, &g);
    if (rc == EXIT_OK)
        rc = resave(&a, &in, g);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    cli_artifact_free(&in);
    return rc;
}
