/* cli.h -- what the cdnn command's subcommands share. */
#ifndef CDNN_TOOLS_CLI_H
#define CDNN_TOOLS_CLI_H

#include <stdint.h>
#include <stdio.h>

#include <cdnn/cdnn.h>

/* Exit codes: what a script can rely on. */
enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1, /* the message on stderr explains it */
    EXIT_USAGE = 2,
    /* Not an exit code: what an argument parser returns to say "go on"
     * (--help and bad usage end the command with the codes above). */
    CLI_CONTINUE = -1,
};

/** Print "cdnn: <what>: <status>: <last error>" to stderr; EXIT_FAILED. */
int cli_report(const char *what, cdnn_status_t status);

/**
 * Print "cdnn: <what>: <message>" to stderr; EXIT_FAILED.  status is the
 * cdnn status that fits the failure best, for output that reports it.
 */
int cli_fail(const char *what, cdnn_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** The status and message (without "cdnn: <what>: ") of the last failure
 * cli_report or cli_fail printed. */
const char *cli_last_failure(cdnn_status_t *status);

/**
 * The answer to an option getopt did not accept (c '?' or ':') or to
 * --help (c 'h'): help to stdout and EXIT_OK for --help, else to stderr and
 * EXIT_USAGE.
 */
int cli_usage(const char *help, int c);

/** Milliseconds on the monotonic clock, for timing steps. */
double cli_now_ms(void);

/* ---- artifacts: files holding a graph (binary or JSON), a plan, or both */

/** A file read whole, and what it holds. */
typedef struct cli_artifact {
    const char *path;
    unsigned char *bytes; /* NUL-terminated; freed by cli_artifact_free */
    size_t size;
    int is_json;          /* a graph in its JSON form */
    uint32_t contents;    /* CDNN_BLOB_GRAPH | CDNN_BLOB_PLAN */
} cli_artifact_t;

/** Read path and say what it holds; prints why not and EXIT_FAILED. */
int cli_artifact_read(const char *cmd, const char *path, cli_artifact_t *a);
void cli_artifact_free(cli_artifact_t *a);

/**
 * The graph in a, JSON or binary.  With h non-NULL, a container's plan is
 * loaded too (on h's device).  Prints why not and EXIT_FAILED.
 */
int cli_artifact_graph(const char *cmd, const cli_artifact_t *a, cdnn_handle_t *h,
                       cdnn_graph_t **g);

/** "graph", "plan", "graph+plan" to a form; -1 if the name is none. */
int cli_parse_form(const char *name, cdnn_save_form_t *form);
const char *cli_form_name(cdnn_save_form_t form);

/** The form an artifact with these contents was saved in. */
cdnn_save_form_t cli_form_of(uint32_t contents);

/** A handle on device; prints why not and EXIT_FAILED. */
int cli_open_handle(const char *cmd, const char *device, cdnn_handle_t **h);

/** Save g in form into *bytes (malloc'd); prints why not and EXIT_FAILED. */
int cli_save_bytes(const char *cmd, cdnn_graph_t *g, cdnn_save_form_t form,
                   unsigned char **bytes, size_t *size);

/** Save g in form to path, as cli_write_output writes; *size: bytes written. */
int cli_save_file(const char *cmd, cdnn_graph_t *g, cdnn_save_form_t form,
                  const char *path, size_t *size);

/**
 * How a benchmarking plan ranked its candidates, fastest first (the first
 * limit of them; 0 for all), or which one a plan that chose without timing
 * runs.  Prints why not and EXIT_FAILED.
 */
int cli_print_ranking(const char *cmd, const cdnn_graph_t *g, FILE *report, int32_t limit);

/* ---- subcommands: argv[0] is the command's name */

int cli_demo(int argc, char **argv);
int cli_engines(int argc, char **argv);
int cli_build(int argc, char **argv);
int cli_inspect(int argc, char **argv);
int cli_resave(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_pack(int argc, char **argv);

#endif
