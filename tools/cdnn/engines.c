/*
 * engines.c -- `cdnn engines`: the engines the loaded providers serve and,
 * with --knobs, the knobs each reads and the library's own.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "io.h"

static const char engines_help[] =
    "usage: cdnn engines [--device DEVICE] [--json] [--knobs]\n"
    "\n"
    "List every engine the loaded providers serve: id (hex), name, provider\n"
    "and provider version.  Providers are looked for beside libcdnn.so, or in\n"
    "$CDNN_PROVIDER_PATH.\n"
    "\n"
    "  --device DEVICE  the handle's device (default cpu)\n"
    "  --json           one JSON object per engine, in an array; with --knobs\n"
    "                   an object {\"engines\": [...], \"global_knobs\": [...]}\n"
    "  --knobs          also each engine's knobs and the global knobs: name,\n"
    "                   range, default and what they do.  Programs set knobs\n"
    "                   in their build options; on the command line\n"
    "                   `cdnn build --benchmark` sets global.benchmarking\n";

typedef struct engines_args {
    const char *device;
    int json, knobs;
} engines_args_t;

/* ---- text ------------------------------------------------------------------ */

static void print_knob_text(const cdnn_knob_info_t *k)
{
    printf("    ");
    cli_text_string(stdout, k->name);
    printf("  [%" PRId64 ", %" PRId64 "], default %" PRId64 ": ", k->min_value,
           k->max_value, k->default_value);
    cli_text_string(stdout, k->description);
    printf("\n");
}

static void print_engine_text(cdnn_handle_t *h, int32_t index,
                              const cdnn_engine_info_t *e, int knobs)
{
    printf("0x%016" PRIx64 "  %-24s %-10s %-8s\n", e->id, e->name, e->provider,
           e->provider_version);
    int32_t count = 0;
    if (knobs && cdnn_handle_engine_knob_count(h, index, &count) == CDNN_STATUS_SUCCESS)
        for (int32_t k = 0; k < count; k++) {
            cdnn_knob_info_t info;
            if (cdnn_handle_engine_knob_info(h, index, k, &info) == CDNN_STATUS_SUCCESS)
                print_knob_text(&info);
        }
}

static void print_global_knobs_text(void)
{
    cdnn_knob_info_t info;
    printf("global knobs (every build):\n");
    for (int32_t k = 0; cdnn_global_knob_info(k, &info) == CDNN_STATUS_SUCCESS; k++)
        print_knob_text(&info);
}

/* ---- JSON ------------------------------------------------------------------ */

static void print_knob_json(const cdnn_knob_info_t *k, int first)
{
    printf("%s{\"name\": ", first ? "" : ", ");
    cli_json_string(stdout, k->name);
    printf(", \"min\": %" PRId64 ", \"max\": %" PRId64 ", \"default\": %" PRId64
           ", \"description\": ", k->min_value, k->max_value, k->default_value);
    cli_json_string(stdout, k->description);
    printf("}");
}

static void print_engine_knobs_json(cdnn_handle_t *h, int32_t index)
{
    int32_t count = 0;
    cdnn_handle_engine_knob_count(h, index, &count);
    printf(", \"knobs\": [");
    for (int32_t k = 0; k < count; k++) {
        cdnn_knob_info_t info;
        if (cdnn_handle_engine_knob_info(h, index, k, &info) == CDNN_STATUS_SUCCESS)
            print_knob_json(&info, k == 0);
    }
    printf("]");
}

static void print_engine_json(cdnn_handle_t *h, int32_t index,
                              const cdnn_engine_info_t *e, int knobs)
{
    printf("%s\n  {\"id\": \"0x%016" PRIx64 "\", \"name\": ", index == 0 ? "" : ",", e->id);
    cli_json_string(stdout, e->name);
    printf(", \"provider\": ");
    cli_json_string(stdout, e->provider);
    printf(", \"provider_version\": ");
    cli_json_string(stdout, e->provider_version);
    printf(", \"path\": ");
    cli_json_string(stdout, e->provider_path);
    if (knobs)
        print_engine_knobs_json(h, index);
    printf("}");
}

static void print_global_knobs_json(void)
{
    cdnn_knob_info_t info;
    printf(",\n \"global_knobs\": [");
    for (int32_t k = 0; cdnn_global_knob_info(k, &info) == CDNN_STATUS_SUCCESS; k++)
        print_knob_json(&info, k == 0);
    printf("]}\n");
}

/* ---- the command ----------------------------------------------------------- */

/* Fills a; CLI_CONTINUE, or the exit code of --help or bad usage. */
static int parse_args(int argc, char **argv, engines_args_t *a)
{
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},
        {"knobs", no_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    *a = (engines_args_t){.device = "cpu"};
    int c;
    while ((c = getopt_long(argc, argv, "d:jkh", longopts, NULL)) != -1) {
        if (c == 'd')
            a->device = optarg;
        else if (c == 'j')
            a->json = 1;
        else if (c == 'k')
            a->knobs = 1;
        else
            return cli_usage(engines_help, c);
    }
    if (optind != argc)
        return cli_usage(engines_help, '?');
    return CLI_CONTINUE;
}

static void list_engines(const engines_args_t *a, cdnn_handle_t *h)
{
    int32_t count = 0;
    cdnn_handle_engine_count(h, &count);
    if (a->json)
        printf("%s[", a->knobs ? "{\"engines\": " : "");
    else
        printf("device: %s\n%-18s  %-24s %-10s %-8s\n", cdnn_handle_device_description(h),
               "id", "name", "provider", "version");
    for (int32_t i = 0; i < count; i++) {
        cdnn_engine_info_t info;
        if (cdnn_handle_engine_info(h, i, &info) != CDNN_STATUS_SUCCESS)
            continue;
        if (a->json)
            print_engine_json(h, i, &info, a->knobs);
        else
            print_engine_text(h, i, &info, a->knobs);
    }
    if (a->json)
        printf("%s]", count ? "\n" : "");
    else if (count == 0)
        printf("(no engines; providers were looked for in %s)\n",
               cdnn_provider_search_path());
    if (a->json && a->knobs)
        print_global_knobs_json();
    else if (a->json)
        printf("\n");
    else if (a->knobs)
        print_global_knobs_text();
}

int cli_engines(int argc, char **argv)
{
    engines_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    cdnn_handle_t *h;
    cdnn_status_t st = cdnn_handle_create(&h, a.device);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_report("engines", st);
    list_engines(&a, h);
    cdnn_handle_destroy(h);
    return EXIT_OK;
}
