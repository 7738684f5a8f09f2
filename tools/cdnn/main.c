/*
 * main.c -- the cdnn command: subcommand dispatch, help, exit codes.
 */
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
    "  demo      build, run and check two fused graphs\n"
    "  version   print the library version\n"
    "\n"
    "'cdnn <command> --help' describes a command.  Exit status: 0 success,\n"
    "1 a failure the message explains, 2 bad usage.\n";

int cli_report(const char *what, cdnn_status_t status)
{
    fprintf(stderr, "cdnn: %s: %s: %s\n", what, cdnn_status_string(status),
            cdnn_last_error());
    return EXIT_FAILED;
}

int cli_fail(const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cdnn: %s: ", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_FAILED;
}

int cli_usage(const char *help, int c)
{
    fputs(help, c == 'h' ? stdout : stderr);
    return c == 'h' ? EXIT_OK : EXIT_USAGE;
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
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("cdnn %s\n", cdnn_version());
        return EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        {"engines", cli_engines}, {"build", cli_build}, {"inspect", cli_inspect},
        {"resave", cli_resave},   {"run", cli_run},     {"demo", cli_demo},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "cdnn: unknown command '%s'\n\n%s", cmd, usage_text);
    return EXIT_USAGE;
}
