/*
 * pack_build.c -- `cdnn pack build`: descriptor files and the code objects
 * they name in, one kernel pack out.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "io.h"
#include "pack.h"

static const char pack_build_help[] =
    "usage: cdnn pack build DESCRIPTOR... -o PACK [--objects DIR] [--name NAME]\n"
    "                       [--version VERSION]\n"
    "\n"
    "Make a kernel pack from descriptor files (kernels/<family>/*.json: an\n"
    "engine, its match function, handler, knobs and candidate kernels; see\n"
    "docs/FORMATS.md section 9) and the compiled code objects they name.  Every\n"
    "candidate's target must be of one family (host: x86-64, x86-64-v2..v4;\n"
    "cuda: sm_NN, sm_NNa, compute_NN), so build one pack per family.  Kernel ids\n"
    "are unique across the descriptors.  The same inputs make the same bytes.\n"
    "\n"
    "  -o, --output PACK  where to write: a file (written whole or not at all,\n"
    "                     keeping the mode of a file that was there; a link is\n"
    "                     followed), a device or FIFO (written to), or - for\n"
    "                     standard output (the report then goes to standard\n"
    "                     error)\n"
    "  --objects DIR      read each candidate's \"object\" from DIR (default: the\n"
    "                     directory of its descriptor)\n"
    "  --name NAME        the pack's name (default cdnn-<family>)\n"
    "  --version VERSION  the pack's version, for diagnostics (default: this\n"
    "                     cdnn's version)\n";

typedef struct build_args {
    const char *out, *objects, *name, *version;
    int first, count; /* the descriptors: argv[first, first + count) */
} build_args_t;

static int bad_name(const char *option, const char *value)
{
    fprintf(stderr, "cdnn: pack build: --%s '%s' is not a name (1 to %d printable ASCII "
            "characters, no spaces)\n", option, value, SDK_KPACK_MAX_NAME);
    return cli_usage(pack_build_help, '?');
}

/* Fills a; CLI_CONTINUE, or the exit code of --help or bad usage. */
static int parse_args(int argc, char **argv, build_args_t *a)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"objects", required_argument, NULL, 'O'},
        {"name", required_argument, NULL, 'n'},
        {"version", required_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    *a = (build_args_t){0};
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        if (c == 'o')
            a->out = optarg;
        else if (c == 'O')
            a->objects = optarg;
        else if (c == 'n')
            a->name = optarg;
        else if (c == 'v')
            a->version = optarg;
        else
            return cli_usage(pack_build_help, c);
    }
    if (optind == argc || !a->out) {
        fprintf(stderr, "cdnn: pack build: %s\n",
                !a->out ? "-o PACK is required" : "at least one DESCRIPTOR is required");
        return cli_usage(pack_build_help, '?');
    }
    if (a->name && !sdk_kpack_is_name(a->name))
        return bad_name("name", a->name);
    if (a->version && !sdk_kpack_is_name(a->version))
        return bad_name("version", a->version);
    a->first = optind;
    a->count = argc - optind;
    return CLI_CONTINUE;
}

/* What was written, as the reader sees it (the writer has checked that it
 * opens). */
static void report(const char *out, const uint8_t *bytes, size_t size)
{
    sdk_kpack_t *pack = NULL;
    if (sdk_kpack_open_bytes(bytes, size, out, &pack, NULL, 0) != CDNN_STATUS_SUCCESS)
        return;
    const sdk_kpack_info_t *info = sdk_kpack_info(pack);
    FILE *f = cli_report_stream(out);
    char hex[SDK_SHA256_HEX_SIZE];
    sdk_sha256_hex(info->sha256, hex);
    fprintf(f, "wrote ");
    cli_text_string(f, out);
    fprintf(f, ": kernel pack %s %s (%s), %d kernels, %d engines, %zu bytes\n", info->name,
            info->version, info->target_family, sdk_kpack_kernel_count(pack),
            sdk_kpack_engine_count(pack), size);
    fprintf(f, "sha256 %s (header and table of contents)\n", hex);
    sdk_kpack_close(pack);
}

static int write_pack(const build_args_t *a, const pack_inputs_t *in)
{
    char name[SDK_KPACK_MAX_NAME + 1];
    snprintf(name, sizeof name, "cdnn-%s", in->family);
    sdk_kpack_spec_t spec = {a->name ? a->name : name,
                             a->version ? a->version : cdnn_version(),
                             in->family,
                             in->kernel_count,
                             in->kernels,
                             in->engine_count,
                             in->engines};
    uint8_t *bytes = NULL;
    size_t size = 0;
    char why[1024];
    cdnn_status_t st = sdk_kpack_write(&spec, &bytes, &size, why, sizeof why);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_fail("pack build", st, "%s", why);
    int rc = cli_write_output("pack build", a->out, bytes, size);
    if (rc == EXIT_OK)
        report(a->out, bytes, size);
    free(bytes);
    return rc;
}

int cli_pack_build(int argc, char **argv)
{
    build_args_t a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    pack_inputs_t in = {0};
    rc = EXIT_OK;
    for (int i = 0; rc == EXIT_OK && i < a.count; i++)
        rc = pack_descriptor_read(&in, argv[a.first + i], a.objects);
    if (rc == EXIT_OK)
        rc = pack_inputs_check(&in);
    if (rc == EXIT_OK)
        rc = write_pack(&a, &in);
    pack_inputs_free(&in);
    return rc;
}
