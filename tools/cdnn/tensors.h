/*
 * tensors.h -- host memory for a plan's variant pack, for the commands that
 * execute plans (`cdnn run`, `cdnn build --benchmark`).
 */
#ifndef CDNN_TOOLS_TENSORS_H
#define CDNN_TOOLS_TENSORS_H

#include <stdint.h>

#include <cdnn/cdnn.h>

/* Host memory for every tensor a plan reads or writes, and its workspace. */
typedef struct cli_tensors {
    int32_t count;
    cdnn_tensor_io_t *io;
    int64_t *uids;
    void **ptrs;
    void *workspace;
} cli_tensors_t;

/**
 * Memory for every tensor of g's plan (as cdnn_graph_io_tensors says) and
 * for its workspace.  Prints "cdnn: <cmd>: ..." and returns EXIT_FAILED
 * when it cannot; free with cli_tensors_free either way.
 */
int cli_tensors_alloc(const char *cmd, const cdnn_graph_t *g, cli_tensors_t *t);
void cli_tensors_free(cli_tensors_t *t);

/** Random inputs from a seed fixed per uid, so that reruns see the same. */
void cli_tensors_fill_inputs(cli_tensors_t *t);

/** 0xff bytes in every output: NaN in every float type. */
void cli_tensors_poison_outputs(cli_tensors_t *t);

/** The index of the tensor with this uid, or -1. */
int32_t cli_tensors_find(const cli_tensors_t *t, int64_t uid);

/** Execute g on t through h; prints why not and EXIT_FAILED. */
int cli_tensors_execute(const char *cmd, const cdnn_graph_t *g, cdnn_handle_t *h,
                        cli_tensors_t *t);

#endif
