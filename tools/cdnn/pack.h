/*
 * pack.h -- what the pieces of `cdnn pack` share: the build subcommand
 * (pack_build.c), and descriptor files (kernels/<family>/<name>.json: an engine
 * and its candidate kernels, docs/FORMATS.md section 9) read as hostile
 * input into the parts of a kernel pack spec (pack_descriptor.c).
 */
#ifndef CDNN_TOOLS_PACK_H
#define CDNN_TOOLS_PACK_H

#include <jansson.h>

#include <cdnn_sdk/kpack.h>

/* What the descriptors of one build give, and what it owns. */
typedef struct pack_inputs {
    sdk_kpack_spec_kernel_t *kernels; /* every candidate, in descriptor order */
    int32_t kernel_count, kernel_cap;
    sdk_kpack_spec_engine_t *engines; /* one per descriptor */
    int32_t engine_count, engine_cap;
    const char *family; /* "host" or "cuda": the targets' family */
    /* Where each kernel was defined: its descriptor (an index into files)
     * and candidate, for messages. */
    int32_t *kernel_file, *kernel_candidate;
    const char **files;
    /* Strings in the spec point into these parsed documents. */
    json_t **documents;
    /* Everything else allocated for the spec: arrays, code, texts. */
    void **kept;
    size_t kept_count, kept_cap;
} pack_inputs_t;

/**
 * Read the descriptor at path and add its engine and candidates to in.
 * Each candidate's object file is read from objects_dir, or (NULL) from
 * the descriptor's own directory.  Prints "cdnn: pack build: FILE: JSON
 * PATH: what is wrong" and returns EXIT_FAILED on any fault.
 */
int pack_descriptor_read(pack_inputs_t *in, const char *path, const char *objects_dir);

/** pack_descriptor_read on a descriptor's text in memory, named path
 * (which must outlive in); for fuzzing. */
int pack_descriptor_parse(pack_inputs_t *in, const char *path, const char *text,
                          size_t size, const char *objects_dir);

/** After every descriptor: no engine name and no kernel id defined twice.
 * Prints where both are and returns EXIT_FAILED if one is. */
int pack_inputs_check(const pack_inputs_t *in);

void pack_inputs_free(pack_inputs_t *in);

/** `cdnn pack build`; argv[0] is "build". */
int cli_pack_build(int argc, char **argv);

#endif
