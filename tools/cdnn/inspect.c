/*
 * inspect.c -- `cdnn inspect`: what a saved artifact holds, verified,
 * without loading anything that runs (no handle, no provider).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <cdnn_sdk/error.h>
#include <cdnn_sdk/kpayload.h>
#include <cdnn_sdk/sha256.h>

#include "cli.h"
#include "io.h"

static const char inspect_help[] =
    "usage: cdnn inspect FILE [--json]\n"
    "\n"
    "Say what FILE (a saved graph, plan or graph+plan container) holds: its\n"
    "format versions; for a graph its content key; for a plan the engine,\n"
    "provider, device, workspace, payload and the tensors execute needs;\n"
    "for a plan on a kernels:* engine the kernel it carries: its id, target,\n"
    "symbol, signature, handler, and its code object's size and SHA-256.\n"
    "Everything is verified as a load would verify it (a plan's SHA-256\n"
    "included), but nothing is loaded into a provider or run.  Exit 1 if\n"
    "FILE is damaged, or if a container's graph is not the one its plan was\n"
    "built from.\n"
    "\n"
    "  --json   one JSON object instead of text, with \"ok\": true; on failure\n"
    "           {\"ok\": false, \"file\": ..., \"status\": \"CORRUPT_DATA\",\n"
    "           \"error\": \"...\"} (the status as cdnn names it, without\n"
    "           CDNN_STATUS_), and exit 1 as without --json\n";

/* What inspect reports beyond cdnn_blob_info_t. */
typedef struct view {
    const char *path;
    const cdnn_blob_info_t *info;
    char graph_key[65]; /* of the graph FILE holds; "" when it holds none */
    /* A kernels:* plan's payload (docs/FORMATS.md section 10), decoded by
     * the SDK's reader, the provider's own; has_kernel 0 for other plans. */
    int has_kernel;
    sdk_kpayload_t kernel;
    char kernel_sha256[SDK_SHA256_HEX_SIZE];
} view_t;

static int is_container(const cdnn_blob_info_t *info)
{
    return info->container_major || info->container_minor;
}

/* A container may hold a graph without a plan (the format allows it), which
 * is not the same file as a bare graph, so the kind says so. */
static const char *kind_text(const cdnn_blob_info_t *info)
{
    int plan = (info->contents & CDNN_BLOB_PLAN) != 0;
    if (is_container(info))
        return plan ? "container holding a graph and its plan"
                    : "container holding a graph only (no plan)";
    return plan ? "plan" : "graph";
}

static const char *role(const cdnn_tensor_io_t *t)
{
    return t->is_output ? "out" : "in";
}

/* ---- text ------------------------------------------------------------------ */

static void label(const char *name)
{
    printf("%-19s", name);
}

static void text_line(const char *name, const char *value)
{
    label(name);
    cli_text_string(stdout, value);
    putchar('\n');
}

static void text_tensors(const cdnn_blob_info_t *info)
{
    printf("%-19s%d\n", "tensors", info->tensor_count);
    printf("  %-10s %-5s %12s %9s  %s\n", "uid", "type", "bytes", "alignment", "role");
    for (int32_t i = 0; i < info->tensor_count; i++) {
        const cdnn_tensor_io_t *t = &info->tensors[i];
        char align[24] = "-"; /* 0: none declared */
        if (t->alignment)
            snprintf(align, sizeof align, "%" PRId64, t->alignment);
        printf("  %-10" PRId64 " %-5s %12zu %9s  %s\n", t->uid,
               cdnn_data_type_name(t->type), t->span_bytes, align, role(t));
    }
}

static void text_plan(const cdnn_blob_info_t *info)
{
    printf("%-19s%u.%u\n", "plan format", info->plan_major, info->plan_minor);
    printf("%-19s0x%016" PRIx64 "  ", "engine", info->engine_id);
    cli_text_string(stdout, info->engine_name);
    putchar('\n');
    label("provider");
    cli_text_string(stdout, info->provider_name);
    putchar(' ');
    cli_text_string(stdout, info->provider_version);
    putchar('\n');
    text_line("device", info->device);
    printf("%-19s%" PRIu64 " B\n", "workspace", info->workspace_size);
    printf("%-19sformat %u.%u, %zu B\n", "payload", info->payload_major,
           info->payload_minor, info->payload_size);
    /* A container's graph key was checked equal to this and printed. */
    if (!(info->contents & CDNN_BLOB_GRAPH))
        text_line("graph content key", info->graph_content_key);
    text_line("integrity", info->plan_verified ? "verified (SHA-256)" : "NOT verified");
    text_tensors(info);
}

/* The kernels a kernels:* plan carries: one code object per payload. */
static void text_kernels(const view_t *v)
{
    const sdk_kpayload_t *k = &v->kernel;
    printf("%-19s%d\n", "kernels", 1);
    label("  kernel");
    cli_text_string(stdout, k->kernel_id);
    putchar('\n');
    text_line("  target", k->target);
    text_line("  symbol", k->symbol);
    text_line("  signature", k->signature);
    label("  handler");
    cli_text_string(stdout, k->handler);
    printf(" v%u\n", k->handler_version);
    printf("%-19s%zu B\n", "  code object", k->code_size);
    text_line("  sha256", v->kernel_sha256);
    if (k->pack_name) {
        label("  from pack");
        cli_text_string(stdout, k->pack_name);
        if (k->pack_version) {
            putchar(' ');
            cli_text_string(stdout, k->pack_version);
        }
        putchar('\n');
    }
}

/* Graph format 1.1 and container format 1.1 carry a SHA-256 that every
 * load (and inspect) checks before anything else; 1.0 carried none. */
static const char *graph_integrity(const cdnn_blob_info_t *info)
{
    if (info->graph_minor >= 1 || info->container_minor >= 1)
        return "verified (SHA-256)";
    return "structure verified (format 1.0 carries no digest)";
}

static void print_text(const view_t *v)
{
    const cdnn_blob_info_t *info = v->info;
    text_line("file", v->path);
    text_line("kind", kind_text(info));
    if (is_container(info))
        printf("%-19s%u.%u\n", "container format", info->container_major,
               info->container_minor);
    if (info->contents & CDNN_BLOB_GRAPH) {
        printf("%-19s%u.%u\n", "graph format", info->graph_major, info->graph_minor);
        text_line("graph content key", v->graph_key);
    }
    if (info->contents & CDNN_BLOB_PLAN) {
        text_plan(info);
        if (v->has_kernel)
            text_kernels(v);
    } else
        text_line("integrity", graph_integrity(info));
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_field(const char *name, const char *value, int last)
{
    printf("    \"%s\": ", name);
    cli_json_string(stdout, value);
    printf(last ? "\n" : ",\n");
}

static void json_tensors(const cdnn_blob_info_t *info)
{
    printf("    \"tensors\": [");
    for (int32_t i = 0; i < info->tensor_count; i++) {
        const cdnn_tensor_io_t *t = &info->tensors[i];
        printf("%s\n      {\"uid\": %" PRId64 ", \"type\": \"%s\", \"bytes\": %zu, "
               "\"alignment\": %" PRId64 ", \"role\": \"%s\"}",
               i ? "," : "", t->uid, cdnn_data_type_name(t->type), t->span_bytes,
               t->alignment, role(t));
    }
    printf("%s]\n", info->tensor_count ? "\n    " : "");
}

/* "kernels": [...], the payload's one kernel; [] for a plan on another
 * provider's engine. */
static void json_kernels(const view_t *v)
{
    const sdk_kpayload_t *k = &v->kernel;
    printf("    \"kernels\": [");
    if (v->has_kernel) {
        printf("\n      {\"id\": ");
        cli_json_string(stdout, k->kernel_id);
        printf(", \"target\": ");
        cli_json_string(stdout, k->target);
        printf(", \"symbol\": ");
        cli_json_string(stdout, k->symbol);
        printf(", \"signature\": ");
        cli_json_string(stdout, k->signature);
        printf(", \"handler\": ");
        cli_json_string(stdout, k->handler);
        printf(", \"handler_version\": %u, \"bytes\": %zu, \"sha256\": \"%s\", "
               "\"pack\": ", k->handler_version, k->code_size, v->kernel_sha256);
        cli_json_string(stdout, k->pack_name ? k->pack_name : "");
        printf(", \"pack_version\": ");
        cli_json_string(stdout, k->pack_version ? k->pack_version : "");
        printf("}\n    ");
    }
    printf("],\n");
}

static void json_plan(const view_t *v)
{
    const cdnn_blob_info_t *info = v->info;
    printf("  \"plan\": {\n    \"format\": \"%u.%u\",\n", info->plan_major, info->plan_minor);
    printf("    \"engine_id\": \"0x%016" PRIx64 "\",\n", info->engine_id);
    json_field("engine_name", info->engine_name, 0);
    json_field("provider", info->provider_name, 0);
    json_field("provider_version", info->provider_version, 0);
    json_field("device", info->device, 0);
    printf("    \"workspace_bytes\": %" PRIu64 ",\n", info->workspace_size);
    printf("    \"payload_format\": \"%u.%u\",\n    \"payload_bytes\": %zu,\n",
           info->payload_major, info->payload_minor, info->payload_size);
    json_field("graph_content_key", info->graph_content_key, 0);
    printf("    \"verified\": %s,\n    \"digest\": \"SHA-256\",\n",
           info->plan_verified ? "true" : "false");
    json_kernels(v);
    json_tensors(info);
    printf("  }\n");
}

static void print_json(const view_t *v)
{
    const cdnn_blob_info_t *info = v->info;
    int plan = (info->contents & CDNN_BLOB_PLAN) != 0;
    printf("{\n  \"ok\": true,\n  \"file\": ");
    cli_json_string(stdout, v->path);
    printf(",\n  \"kind\": \"%s\",\n  \"container\": %s,\n",
           cli_form_name(cli_form_of(info->contents)),
           is_container(info) ? "true" : "false");
    if (is_container(info))
        printf("  \"container_format\": \"%u.%u\",\n", info->container_major,
               info->container_minor);
    if (info->contents & CDNN_BLOB_GRAPH) {
        printf("  \"graph\": {\n    \"format\": \"%u.%u\",\n", info->graph_major,
               info->graph_minor);
        json_field("content_key", v->graph_key, 1);
        printf("  }%s\n", plan ? "," : "");
    }
    if (plan)
        json_plan(v);
    printf("}\n");
}

/* A failed --json inspect still prints one JSON object, so that a script
 * reading stdout always has something to parse; the message also went to
 * stderr and the exit code says it failed. */
static void print_json_failure(const char *path)
{
    cdnn_status_t status;
    const char *message = cli_last_failure(&status);
    const char *name = cdnn_status_string(status);
    const char *prefix = "CDNN_STATUS_";
    if (strncmp(name, prefix, strlen(prefix)) == 0)
        name += strlen(prefix);
    printf("{\n  \"ok\": false,\n  \"file\": ");
    cli_json_string(stdout, path);
    printf(",\n  \"status\": \"%s\",\n  \"error\": ", name);
    cli_json_string(stdout, message);
    printf("\n}\n");
}

/* ---- the command --------------------------------------------------------- */

/* The content key of the graph in a; for a container, also check that it is
 * the graph the plan was built from: a container whose parts were swapped
 * would otherwise check a plan against the wrong graph. */
static int graph_key(const cli_artifact_t *a, view_t *v)
{
    cdnn_graph_t *g = NULL;
    int rc = cli_artifact_graph("inspect", a, NULL, &g);
    cdnn_status_t st = rc == EXIT_OK ? cdnn_graph_content_key(g, v->graph_key)
                                     : CDNN_STATUS_SUCCESS;
    cdnn_graph_destroy(g);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_report("inspect", st);
    if (rc == EXIT_OK && (v->info->contents & CDNN_BLOB_PLAN) &&
        strcmp(v->graph_key, v->info->graph_content_key) != 0)
        return cli_fail("inspect", CDNN_STATUS_CORRUPT_DATA,
                        "'%s': the container's graph (content key %.16s...) is "
                        "not the graph its plan was built from (%.16s...); rebuild it "
                        "with `cdnn build`", v->path, v->graph_key,
                        v->info->graph_content_key);
    return rc;
}

/* A plan on a kernels:* engine carries its kernel in its payload, which the
 * SDK's reader checks as the provider's restore would (checks 1-8 of
 * docs/FORMATS.md section 10) before anything is shown: a payload that
 * does not decode fails the inspection, as it would fail a load. */
static int kernel_of(view_t *v)
{
    const cdnn_blob_info_t *info = v->info;
    if (!(info->contents & CDNN_BLOB_PLAN) || strncmp(info->engine_name, "kernels:", 8) != 0)
        return EXIT_OK;
    cdnn_status_t st = sdk_kpayload_decode(info->payload, info->payload_size, &v->kernel);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_fail("inspect", st, "'%s': the plan's kernel cannot be shown: %s",
                        v->path, sdk_last_error(NULL));
    v->has_kernel = 1;
    sdk_sha256_hex(v->kernel.kernel_sha256, v->kernel_sha256);
    return EXIT_OK;
}

static int inspect_file(const char *path, int json)
{
    cli_artifact_t a;
    int rc = cli_artifact_read("inspect", path, &a);
    if (rc != EXIT_OK)
        return rc;
    if (a.is_json) {
        cli_artifact_free(&a);
        return cli_fail("inspect", CDNN_STATUS_BAD_PARAM,
                        "'%s' is a graph in JSON form, not a saved artifact; "
                        "`cdnn build` saves it", path);
    }
    view_t v = {.path = path};
    cdnn_blob_info_t *info = NULL;
    cdnn_status_t st = cdnn_blob_inspect(a.bytes, a.size, &info);
    v.info = info;
    if (st != CDNN_STATUS_SUCCESS)
        rc = cli_report("inspect", st);
    else if (info->contents & CDNN_BLOB_GRAPH)
        rc = graph_key(&a, &v);
    if (rc == EXIT_OK)
        rc = kernel_of(&v);
    if (rc == EXIT_OK)
        json ? print_json(&v) : print_text(&v);
    sdk_kpayload_free(&v.kernel);
    cdnn_blob_info_destroy(info);
    cli_artifact_free(&a);
    return rc;
}

int cli_inspect(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int json = 0, c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'j')
            json = 1;
        else
            return cli_usage(inspect_help, c);
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "cdnn: inspect: exactly one FILE is required\n");
        return cli_usage(inspect_help, '?');
    }
    int rc = inspect_file(argv[optind], json);
    if (rc != EXIT_OK && json)
        print_json_failure(argv[optind]);
    return rc;
}
