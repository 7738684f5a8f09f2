/*
 * pack.c -- `cdnn pack`: kernel packs (<cdnn_sdk/kpack.h>, docs/FORMATS.md
 * section 9).  `build` makes one (pack_build.c); `list` says what one
 * holds; `verify` checks all of it, every code object's SHA-256 included.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "io.h"
#include "pack.h"

static const char pack_help[] =
    "usage: cdnn pack <build|list|verify> ...\n"
    "\n"
    "Kernel packs: one file per target family (host, cuda) holding the compiled\n"
    "code objects of the kernels provider's engines and a table of contents\n"
    "naming each kernel and engine (docs/FORMATS.md section 9).\n"
    "\n"
    "  build DESCRIPTOR... -o PACK  make a pack from descriptor files and the\n"
    "                               code objects they name\n"
    "  list PACK [--json]           its kernels and engines\n"
    "  verify PACK                  check everything, each code object's SHA-256\n"
    "                               included, and say which kernel fails which check\n"
    "\n"
    "'cdnn pack <subcommand> --help' describes each.  Exit status: 0 success,\n"
    "1 a failure the message explains (a damaged or invalid pack), 2 bad usage.\n";

static const char list_help[] =
    "usage: cdnn pack list PACK [--json]\n"
    "\n"
    "Say what PACK holds: its name, version, target family and format; each\n"
    "kernel (id, target, size, SHA-256, signature, symbol, metadata) and each\n"
    "engine (name, id, rank, match function, handler, knobs, constraints,\n"
    "candidate kernels).  The header and table of contents are verified as\n"
    "the kernels provider verifies them when it opens the pack; code objects\n"
    "are not hashed (`cdnn pack verify` does that).  Exit 1 if PACK is damaged\n"
    "(the message on stderr says what is wrong; nothing is printed on stdout).\n"
    "\n"
    "  --json   one JSON object instead of text\n";

static const char verify_help[] =
    "usage: cdnn pack verify PACK\n"
    "\n"
    "Check PACK as the kernels provider does before it runs any of its code:\n"
    "every check of its header and table of contents, in the order\n"
    "docs/FORMATS.md section 9 lists them (the first that fails is named, with\n"
    "the kernel or engine it concerns), then the SHA-256 of every kernel's code\n"
    "object (each kernel that fails is named).  Exit 0 when all of it holds, 1\n"
    "when PACK is damaged or invalid, 2 on bad usage.\n";

/* The one PACK operand and --json, for list and verify; CLI_CONTINUE or the
 * exit code of --help or bad usage. */
static int parse_pack_args(int argc, char **argv, const char *help, int allow_json,
                           const char **path, int *json)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    *json = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'j' && allow_json)
            *json = 1;
        else
            return cli_usage(help, c == 'j' ? '?' : c);
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "cdnn: pack %s: exactly one PACK is required\n", argv[0]);
        return cli_usage(help, '?');
    }
    *path = argv[optind];
    return CLI_CONTINUE;
}

static int open_pack(const char *cmd, const char *path, sdk_kpack_t **pack)
{
    char why[1024];
    cdnn_status_t st = sdk_kpack_open(path, pack, why, sizeof why);
    return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_fail(cmd, st, "%s", why);
}

/* ---- list: text (every string in an opened pack is printable ASCII) -------- */

static void list_kernel_text(const sdk_kpack_kernel_t *k)
{
    char hex[SDK_SHA256_HEX_SIZE];
    sdk_sha256_hex(k->sha256, hex);
    printf("  %s\n", k->id);
    printf("    %-12s%s\n", "target", k->target);
    printf("    %-12s%" PRIu64 " bytes at offset %" PRIu64 "\n", "size", k->size, k->offset);
    printf("    %-12s%s\n", "sha256", hex);
    printf("    %-12s%s\n", "signature", k->signature);
    printf("    %-12s%s\n", "symbol", k->symbol);
    for (int32_t m = 0; m < k->metadata_count; m++)
        printf("    %-12s%s = %s\n", m ? "" : "metadata", k->metadata[m].key,
               k->metadata[m].value);
}

static void list_engine_text(const sdk_kpack_engine_t *e)
{
    printf("  %s  0x%016" PRIx64 "\n", e->name, cdnn_engine_id_from_name(e->name));
    printf("    %-12s%d\n", "rank", e->rank);
    printf("    %-12s%s\n", "match", e->match);
    printf("    %-12s%s v%u\n", "handler", e->handler_name, e->handler_version);
    printf("    %-12s%s\n", "constraints", e->constraints_json);
    for (int32_t k = 0; k < e->knob_count; k++)
        printf("    %-12s%s [%" PRId64 ", %" PRId64 "], default %" PRId64 ": %s\n", "knob",
               e->knobs[k].name, e->knobs[k].min_value, e->knobs[k].max_value,
               e->knobs[k].default_value, e->knobs[k].description);
    printf("    %-12s", "candidates");
    for (int32_t c = 0; c < e->candidate_count; c++)
        printf("%s%s", c ? " " : "", e->candidates[c]->id);
    printf("\n");
}

static void list_text(const sdk_kpack_t *pack)
{
    const sdk_kpack_info_t *info = sdk_kpack_info(pack);
    char hex[SDK_SHA256_HEX_SIZE];
    sdk_sha256_hex(info->sha256, hex);
    printf("%-16s", "file");
    cli_text_string(stdout, info->path);
    printf("\n%-16s%s %s\n", "pack", info->name, info->version);
    printf("%-16s%s\n", "target family", info->target_family);
    printf("%-16s%u.%u\n", "format", info->format_major, info->format_minor);
    printf("%-16s%" PRIu64 " bytes\n", "size", info->file_size);
    printf("%-16s%s (header and table of contents)\n", "sha256", hex);
    printf("%-16s%d\n", "kernels", sdk_kpack_kernel_count(pack));
    for (int32_t i = 0; i < sdk_kpack_kernel_count(pack); i++)
        list_kernel_text(sdk_kpack_kernel(pack, i));
    printf("%-16s%d\n", "engines", sdk_kpack_engine_count(pack));
    for (int32_t i = 0; i < sdk_kpack_engine_count(pack); i++)
        list_engine_text(sdk_kpack_engine(pack, i));
}

/* ---- list: JSON ---------------------------------------------------------------- */

static void json_key_string(const char *key, const char *value, const char *after)
{
    printf("\"%s\": ", key);
    cli_json_string(stdout, value);
    printf("%s", after);
}

static void list_kernel_json(const sdk_kpack_kernel_t *k, int last)
{
    char hex[SDK_SHA256_HEX_SIZE];
    sdk_sha256_hex(k->sha256, hex);
    printf("    {");
    json_key_string("id", k->id, ", ");
    json_key_string("symbol", k->symbol, ", ");
    json_key_string("target", k->target, ", ");
    printf("\"offset\": %" PRIu64 ", \"size\": %" PRIu64 ", ", k->offset, k->size);
    json_key_string("sha256", hex, ", ");
    json_key_string("signature", k->signature, ", ");
    printf("\"metadata\": {");
    for (int32_t m = 0; m < k->metadata_count; m++) {
        cli_json_string(stdout, k->metadata[m].key);
        printf(": ");
        cli_json_string(stdout, k->metadata[m].value);
        printf("%s", m + 1 < k->metadata_count ? ", " : "");
    }
    printf("}}%s\n", last ? "" : ",");
}

static void list_knobs_json(const sdk_kpack_engine_t *e)
{
    printf("\"knobs\": [");
    for (int32_t k = 0; k < e->knob_count; k++) {
        printf("{");
        json_key_string("name", e->knobs[k].name, ", ");
        printf("\"min\": %" PRId64 ", \"max\": %" PRId64 ", \"default\": %" PRId64 ", ",
               e->knobs[k].min_value, e->knobs[k].max_value, e->knobs[k].default_value);
        json_key_string("description", e->knobs[k].description, "}");
        printf("%s", k + 1 < e->knob_count ? ", " : "");
    }
    printf("], ");
}

/* The constraints stay a string: they are the descriptor's JSON as the pack
 * keeps it, which a reader parses if it wants (a damaged-but-sealed pack
 * could hold anything there). */
static void list_engine_json(const sdk_kpack_engine_t *e, int last)
{
    printf("    {");
    json_key_string("name", e->name, ", ");
    printf("\"id\": \"0x%016" PRIx64 "\", \"rank\": %d, ", cdnn_engine_id_from_name(e->name),
           e->rank);
    json_key_string("match", e->match, ", ");
    printf("\"handler\": {");
    json_key_string("name", e->handler_name, ", ");
    printf("\"version\": %u}, ", e->handler_version);
    json_key_string("constraints_json", e->constraints_json, ", ");
    list_knobs_json(e);
    printf("\"candidates\": [");
    for (int32_t c = 0; c < e->candidate_count; c++) {
        cli_json_string(stdout, e->candidates[c]->id);
        printf("%s", c + 1 < e->candidate_count ? ", " : "");
    }
    printf("]}%s\n", last ? "" : ",");
}

static void list_json(const sdk_kpack_t *pack)
{
    const sdk_kpack_info_t *info = sdk_kpack_info(pack);
    char hex[SDK_SHA256_HEX_SIZE];
    sdk_sha256_hex(info->sha256, hex);
    printf("{\n  \"ok\": true,\n  ");
    json_key_string("file", info->path, ",\n  ");
    json_key_string("name", info->name, ",\n  ");
    json_key_string("version", info->version, ",\n  ");
    json_key_string("target_family", info->target_family, ",\n  ");
    printf("\"format\": \"%u.%u\",\n  \"size\": %" PRIu64 ",\n  ", info->format_major,
           info->format_minor, info->file_size);
    json_key_string("sha256", hex, ",\n  \"kernels\": [\n");
    int32_t n = sdk_kpack_kernel_count(pack);
    for (int32_t i = 0; i < n; i++)
        list_kernel_json(sdk_kpack_kernel(pack, i), i + 1 == n);
    printf("  ],\n  \"engines\": [\n");
    n = sdk_kpack_engine_count(pack);
    for (int32_t i = 0; i < n; i++)
        list_engine_json(sdk_kpack_engine(pack, i), i + 1 == n);
    printf("  ]\n}\n");
}

static int cli_pack_list(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    int rc = parse_pack_args(argc, argv, list_help, 1, &path, &json);
    if (rc != CLI_CONTINUE)
        return rc;
    sdk_kpack_t *pack = NULL;
    rc = open_pack("pack list", path, &pack);
    if (rc == EXIT_OK)
        json ? list_json(pack) : list_text(pack);
    sdk_kpack_close(pack);
    return rc;
}

/* ---- verify --------------------------------------------------------------------------- */

/* Every code object against its SHA-256: the number of kernels that fail. */
static int32_t verify_code(const sdk_kpack_t *pack)
{
    int32_t failed = 0;
    for (int32_t i = 0; i < sdk_kpack_kernel_count(pack); i++) {
        const sdk_kpack_kernel_t *k = sdk_kpack_kernel(pack, i);
        const uint8_t *code = NULL;
        size_t size = 0;
        char why[1024];
        cdnn_status_t st = sdk_kpack_code(pack, k, &code, &size, why, sizeof why);
        if (st == CDNN_STATUS_SUCCESS) {
            printf("  ok      %s (%zu bytes, SHA-256 matches)\n", k->id, size);
            continue;
        }
        printf("  FAILED  %s: %s\n", k->id, why);
        failed++;
    }
    return failed;
}

static int cli_pack_verify(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    int rc = parse_pack_args(argc, argv, verify_help, 0, &path, &json);
    if (rc != CLI_CONTINUE)
        return rc;
    sdk_kpack_t *pack = NULL;
    rc = open_pack("pack verify", path, &pack);
    if (rc != EXIT_OK)
        return rc;
    const sdk_kpack_info_t *info = sdk_kpack_info(pack);
    cli_text_string(stdout, path);
    printf(": header and table of contents verified (kernel pack %s %s, %s, format %u.%u)\n",
           info->name, info->version, info->target_family, info->format_major,
           info->format_minor);
    int32_t kernels = sdk_kpack_kernel_count(pack), failed = verify_code(pack);
    if (failed)
        rc = cli_fail("pack verify", CDNN_STATUS_CORRUPT_DATA,
                      "kernel pack '%s' is damaged: the code objects of %d of its %d "
                      "kernels do not match their SHA-256", path, failed, kernels);
    else
        printf("ok: %d kernels, %d engines; every check holds and every SHA-256 matches\n",
               kernels, sdk_kpack_engine_count(pack));
    sdk_kpack_close(pack);
    return rc;
}

/* ---- dispatch ------------------------------------------------------------------------ */

int cli_pack(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } subcommands[] = {
        {"build", cli_pack_build}, {"list", cli_pack_list}, {"verify", cli_pack_verify}};
    if (argc < 2) {
        fputs(pack_help, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(pack_help, stdout);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "cdnn: pack: unknown subcommand '%s'\n\n%s", argv[1], pack_help);
    return EXIT_USAGE;
}
