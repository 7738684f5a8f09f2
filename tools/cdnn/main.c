/*
 * main.c -- the cdnn command: subcommand dispatch, help, `cdnn engines`.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "io.h"

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

static const char engines_help[] =
    "usage: cdnn engines [--device DEVICE] [--json]\n"
    "\n"
    "List every engine the loaded providers serve: id (hex), name, provider\n"
    "and provider version.  Providers are looked for beside libcdnn.so, or in\n"
    "$CDNN_PROVIDER_PATH.\n"
    "\n"
    "  --device DEVICE  the handle's device (default cpu)\n"
    "  --json           one JSON object per engine, in an array\n";

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

static void print_engine(const cdnn_engine_info_t *e, int json, int first)
{
    if (!json) {
        printf("0x%016" PRIx64 "  %-24s %-10s %-8s\n", e->id, e->name, e->provider,
               e->provider_version);
        return;
    }
    printf("%s\n  {\"id\": \"0x%016" PRIx64 "\", \"name\": ", first ? "" : ",", e->id);
    cli_json_string(stdout, e->name);
    printf(", \"provider\": ");
    cli_json_string(stdout, e->provider);
    printf(", \"provider_version\": ");
    cli_json_string(stdout, e->provider_version);
    printf(", \"path\": ");
    cli_json_string(stdout, e->provider_path);
    printf("}");
}

static int cmd_engines(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *device = "cpu";
    int json = 0, c;
    while ((c = getopt_long(argc, argv, "d:jh", longopts, NULL)) != -1) {
        if (c == 'd')
            device = optarg;
        else if (c == 'j')
            json = 1;
        else
            return cli_usage(engines_help, c);
    }
    if (optind != argc) {
        fputs(engines_help, stderr);
        return EXIT_USAGE;
    }
    cdnn_handle_t *h;
    cdnn_status_t st = cdnn_handle_create(&h, device);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_report("engines", st);
    int32_t count = 0;
    cdnn_handle_engine_count(h, &count);
    if (json)
        printf("[");
    else
        printf("device: %s\n%-18s  %-24s %-10s %-8s\n", cdnn_handle_device_description(h),
               "id", "name", "provider", "version");
    for (int32_t i = 0; i < count; i++) {
        cdnn_engine_info_t info;
        if (cdnn_handle_engine_info(h, i, &info) == CDNN_STATUS_SUCCESS)
            print_engine(&info, json, i == 0);
    }
    if (json)
        printf("%s]\n", count ? "\n" : "");
    else if (count == 0)
        printf("(no engines; providers were looked for in %s)\n",
               cdnn_provider_search_path());
    cdnn_handle_destroy(h);
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
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("cdnn %s\n", cdnn_version());
        return EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        {"engines", cmd_engines}, {"build", cli_build}, {"inspect", cli_inspect},
        {"resave", cli_resave},   {"run", cli_run},     {"demo", cli_demo},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "cdnn: unknown command '%s'\n\n%s", cmd, usage_text);
    return EXIT_USAGE;
}
