/*
 * main.c -- the cdnn command: subcommand dispatch, help, `cdnn engines`.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
    "usage: cdnn <command> [options]\n"
    "\n"
    "commands:\n"
    "  engines   list the engines the installed providers serve\n"
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

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void print_engine(const cdnn_engine_info_t *e, int json, int first)
{
    if (!json) {
        printf("0x%016" PRIx64 "  %-24s %-10s %-8s\n", e->id, e->name, e->provider,
               e->provider_version);
        return;
    }
    printf("%s\n  {\"id\": \"0x%016" PRIx64 "\", \"name\": ", first ? "" : ",", e->id);
    print_json_string(e->name);
    printf(", \"provider\": ");
    print_json_string(e->provider);
    printf(", \"provider_version\": ");
    print_json_string(e->provider_version);
    printf(", \"path\": ");
    print_json_string(e->provider_path);
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
        else {
            fputs(engines_help, c == 'h' ? stdout : stderr);
            return c == 'h' ? EXIT_OK : EXIT_USAGE;
        }
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
    if (strcmp(cmd, "engines") == 0)
        return cmd_engines(argc - 1, argv + 1);
    if (strcmp(cmd, "demo") == 0)
        return cli_demo(argc - 1, argv + 1);
    fprintf(stderr, "cdnn: unknown command '%s'\n\n%s", cmd, usage_text);
    return EXIT_USAGE;
}
