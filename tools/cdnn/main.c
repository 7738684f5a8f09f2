/*
 * main.c -- the cdnn command: subcommand dispatch, help, exit codes.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "usage: cdnn <command> [options]\n"
    "\n"
    "commands:\n"
    "  engines   list the engines the installed providers serve\n"
    "  build     build a graph (JSON or saved) into a plan and save it\n"
    "  inspect   say what a saved graph, plan or container holds\n"
    "  resave    load a saved plan or graph and save it again\n"
    "  run       run a saved plan on random inputs; time it, check it\n"
    "  pack      build, list and verify kernel packs\n"
    "  demo      build, run and check two fused graphs\n"
    "  version   print the library version\n"
    "\n"
    "'cdnn <command> --help' describes a command.  Exit status: 0 success,\n"
    "1 a failure the message explains, 2 bad usage.\n";

/* The command's last failure, for output that reports it (inspect --json).
 * One command runs per process, on one thread. */
static struct {
    cdnn_status_t status;
    char message[2048];
} last_failure;

int cli_report(const char *what, cdnn_status_t status)
{
    last_failure.status = status;
    snprintf(last_failure.message, sizeof last_failure.message, "%s", cdnn_last_error());
    fprintf(stderr, "cdnn: %s: %s: %s\n", what, cdnn_status_string(status),
            last_failure.message);
    return EXIT_FAILED;
}

int cli_fail(const char *what, cdnn_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_failure.message, sizeof last_failure.message, fmt, ap);
    va_end(ap);
    last_failure.status = status;
    fprintf(stderr, "cdnn: %s: %s\n", what, last_failure.message);
    return EXIT_FAILED;
}

const char *cli_last_failure(cdnn_status_t *status)
{
    *status = last_failure.status;
    return last_failure.message;
}

int cli_usage(const char *help, int c)
{
    fputs(help, c == 'h' ? stdout : stderr);
    return c == 'h' ? EXIT_OK : EXIT_USAGE;
}

static const char version_help[] =
    "usage: cdnn version\n"
    "\n"
    "Print the version of the cdnn library this command runs on (the same as\n"
    "`cdnn --version`).\n";

static int cli_version(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c = getopt_long(argc, argv, "h", longopts, NULL);
    if (c != -1)
        return cli_usage(version_help, c);
    if (optind != argc) {
        fprintf(stderr, "cdnn: version: takes no arguments\n");
        return cli_usage(version_help, '?');
    }
    printf("cdnn %s\n", cdnn_version());
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_text, stdout);
        return EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        {"engines", cli_engines}, {"build", cli_build}, {"inspect", cli_inspect},
        {"resave", cli_resave},   {"run", cli_run},     {"demo", cli_demo},
        {"pack", cli_pack},
        {"version", cli_version}, {"--version", cli_version},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "cdnn: unknown command '%s'\n\n%s", cmd, usage_text);
    return EXIT_USAGE;
}
