/*
 * fuzz_kpack_descriptor -- `cdnn pack build`'s descriptor reader
 * (tools/cdnn/pack_descriptor.c) on hostile JSON.  Object paths resolve in
 * a directory the harness fills at start with the object files the seed
 * descriptors (tests/kpack/descriptors) name.
 *
 * Oracle: a descriptor the reader accepts (and that pack_inputs_check
 * passes) must make a pack the SDK's writer writes and its reader opens.
 * The descriptor reader is where a user learns what is wrong, by file and
 * JSON path; the writer refusing what it let through is a finding.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz_common.h"
#include "pack.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The CLI prints its failures beside its main(); the harness has its own
 * main and wants them quiet. */
int cli_fail(const char *what, cdnn_status_t status, const char *fmt, ...)
{
    (void)what;
    (void)status;
    (void)fmt;
    return EXIT_FAILED;
}

static char objects[64];

static void remove_objects(void)
{
    char command[128];
    snprintf(command, sizeof command, "rm -rf '%s'", objects);
    if (system(command) != 0)
        fprintf(stderr, "fuzz_kpack_descriptor: could not remove %s\n", objects);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const char *const names[] = {"matmul_6x16.x86-64-v3.bin", "matmul_8x8.x86-64-v2.bin",
                                        "softmax.x86-64-v2.bin", "matmul.sm_90a.bin"};
    snprintf(objects, sizeof objects, "/tmp/cdnn-fuzz-descriptor.XXXXXX");
    char dir[128];
    if (!mkdtemp(objects) || snprintf(dir, sizeof dir, "%s/objects", objects) < 0 ||
        mkdir(dir, 0700) != 0)
        fuzz_die("cannot make the objects directory");
    atexit(remove_objects);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "wb");
        if (!f || fprintf(f, "code object %zu\n", i) < 0 || fclose(f) != 0)
            fuzz_die("cannot write %s", path);
    }
    return 0;
}

/* What `cdnn pack build` writes from in. */
static void expect_pack(const pack_inputs_t *in)
{
    sdk_kpack_spec_t spec = {"fuzz", "0", in->family, in->kernel_count, in->kernels,
                             in->engine_count, in->engines};
    uint8_t *bytes = NULL;
    size_t n = 0;
    char why[1024];
    sdk_kpack_t *pack = NULL;
    cdnn_status_t st = sdk_kpack_write(&spec, &bytes, &n, why, sizeof why);
    if (st == CDNN_STATUS_SUCCESS)
        st = sdk_kpack_open_bytes(bytes, n, "fuzz", &pack, why, sizeof why);
    if (st != CDNN_STATUS_SUCCESS && st != CDNN_STATUS_ALLOC_FAILED)
        fuzz_die("an accepted descriptor makes no pack: %s", why);
    sdk_kpack_close(pack);
    free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pack_inputs_t in = {0};
    if (pack_descriptor_parse(&in, "fuzz.json", (const char *)data, size, objects) ==
            EXIT_OK &&
        pack_inputs_check(&in) == EXIT_OK)
        expect_pack(&in);
    pack_inputs_free(&in);
    return 0;
}
