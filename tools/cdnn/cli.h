/* cli.h -- what the cdnn command's subcommands share. */
#ifndef CDNN_TOOLS_CLI_H
#define CDNN_TOOLS_CLI_H

#include <cdnn/cdnn.h>

/* Exit codes: what a script can rely on. */
enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1, /* the message on stderr explains it */
    EXIT_USAGE = 2,
};

/** Print "cdnn: <what>: <status>: <last error>" to stderr; EXIT_FAILED. */
int cli_report(const char *what, cdnn_status_t status);

int cli_demo(int argc, char **argv);

#endif
