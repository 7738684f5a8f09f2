/*
 * tensors.h -- memory for a plan's variant pack, for the commands that
 * execute plans (`cdnn run`, `cdnn build --benchmark`, `cdnn demo`): each
 * tensor has a host copy that is filled and compared, and on a device
 * other than the CPU a block of device memory (cdnn_memory_alloc) that the
 * plan is given, with the copies between the two made here.
 */
#ifndef CDNN_TOOLS_TENSORS_H
#define CDNN_TOOLS_TENSORS_H

#include <stdint.h>

#include <cdnn/cdnn.h>

typedef struct cli_tensors {
    int32_t count;
    cdnn_tensor_io_t *io;
    int64_t *uids;
    void **host;            /* each tensor's host copy */
    void **device;          /* what execute gets: host[i] itself on the CPU */
    void *workspace;        /* on the device */
    cdnn_handle_t *handle;  /* whose device the plan runs on (not owned) */
} cli_tensors_t;

/**
 * Memory for every tensor of g's plan (as cdnn_graph_io_tensors says) and
 * for its workspace, on h's device.  Prints "cdnn: <cmd>: ..." and returns
 * EXIT_FAILED when it cannot; free with cli_tensors_free either way.
 */
int cli_tensors_alloc(const char *cmd, const cdnn_graph_t *g, cdnn_handle_t *h,
                      cli_tensors_t *t);
void cli_tensors_free(cli_tensors_t *t);

/** Random inputs from a seed fixed per uid (so that reruns see the same),
 * copied to the device. */
int cli_tensors_fill_inputs(const char *cmd, cli_tensors_t *t);

/** 0xff bytes in every output (NaN in every float type), on the device
 * too, so that an element the plan fails to write shows. */
int cli_tensors_poison_outputs(const char *cmd, cli_tensors_t *t);

/** Execute g on the device's tensors and wait for it to finish. */
int cli_tensors_execute(const char *cmd, const cdnn_graph_t *g, cli_tensors_t *t);

/** Copy every output from the device into its host copy. */
int cli_tensors_fetch_outputs(const char *cmd, cli_tensors_t *t);

/** The index of the tensor with this uid, or -1. */
int32_t cli_tensors_find(const cli_tensors_t *t, int64_t uid);

#endif
