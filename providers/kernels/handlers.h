/*
 * handlers.h -- the named, versioned dispatch handlers: how a kernel of one
 * argument signature is launched.
 *
 * A handler prepares a launch once, when a context is made (built or
 * restored): it derives the launch values -- the kernel's arguments but
 * for the pointers, in the handler's own layout -- from the graph and the
 * kernel's metadata, and asks the loaded kernel for its workspace.  It
 * then runs the launch many times, from many threads at once, reading the
 * launch only.  A payload's launch values are never trusted: restore
 * derives them again from the payload's graph and compares.
 *
 * Launch value 0 is the launch's parallelism (threads, for host kernels),
 * chosen at build from the device: the workspace depends on it, and the
 * workspace a plan records must be the same on every machine that loads
 * it.  Restore takes it from the payload, within [1, LAUNCH_MAX_THREADS],
 * and derives the rest.
 */
#ifndef CDNN_KERNELS_HANDLERS_H
#define CDNN_KERNELS_HANDLERS_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>

#include "payload.h"

#define LAUNCH_MAX_THREADS 1024
enum { LAUNCH_THREADS = 0 };

struct dispatch_handler;
struct cuda_code;

/* A prepared launch; read-only once made. */
typedef struct launch {
    const struct dispatch_handler *handler;
    const char *kernel_id; /* for messages */
    int64_t *values;
    int32_t value_count;
    void *entry;                  /* host: the kernel's function; cuda: CUfunction */
    const struct cuda_code *cuda; /* cuda: the loaded module, its context */
    size_t workspace_size;        /* what workspace() said */
} launch_t;

typedef struct dispatch_handler {
    const char *name;
    uint32_t version;
    const char *signature; /* the kernels' argument signature it passes */
    kernel_kind_t kind;
    /** The launch values for g, the kernel's metadata and threads
     * (malloc'd into *values); NOT_SUPPORTED and why when the handler
     * cannot launch the kernel for g.  A pure function of its arguments. */
    cdnn_status_t (*derive)(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count);
    /** cuda: the dynamic shared memory the launch values ask for, which
     * the loader opts into once (NULL for host handlers). */
    uint32_t (*shared_bytes)(const int64_t *values);
    /** The workspace the launch needs, asked of the loaded kernel. */
    cdnn_status_t (*workspace)(const launch_t *launch, size_t *bytes);
    /** Run the launch on args; called from many threads at once. */
    cdnn_status_t (*run)(const launch_t *launch, const cdnn_exec_args_t *args);
} dispatch_handler_t;

/** The variant pack's pointer for uid, or NULL. */
void *launch_pointer(const cdnn_exec_args_t *args, int64_t uid);

/** The workspace call of a handler whose kernels need none. */
cdnn_status_t launch_no_workspace(const launch_t *launch, size_t *bytes);

/** The value of a kernel's metadata key, or NULL. */
const char *kernel_metadata(const sdk_kpack_kv_t *metadata, int32_t count, const char *key);

/** A metadata value that must be an integer in [min, max]: SUCCESS, or
 * NOT_SUPPORTED naming the key when it is missing or not one. */
cdnn_status_t kernel_metadata_int(const sdk_kpack_kv_t *metadata, int32_t count,
                                  const char *key, int64_t min, int64_t max, int64_t *value);

/** The handler of that name and version, or NULL. */
const dispatch_handler_t *dispatch_handler_find(const char *name, uint32_t version);

/** The highest version of the named handler this provider has, or 0: for
 * saying what it has when a plan asks for another version. */
uint32_t dispatch_handler_latest(const char *name);

/* The handlers, each in a file of its own. */
extern const dispatch_handler_t host_matmul_handler_v1;
extern const dispatch_handler_t host_pointwise_handler_v1;
extern const dispatch_handler_t host_norm_handler_v1;
extern const dispatch_handler_t host_reduce_handler_v1;
extern const dispatch_handler_t host_conv_handler_v1;
extern const dispatch_handler_t host_softmax_handler_v1;
extern const dispatch_handler_t cuda_matmul_handler_v1;
extern const dispatch_handler_t cuda_pointwise_handler_v1;
extern const dispatch_handler_t cuda_norm_handler_v1;
extern const dispatch_handler_t cuda_conv_handler_v1;
extern const dispatch_handler_t cuda_sdpa_handler_v1;
extern const dispatch_handler_t cuda_softmax_handler_v1;
extern const dispatch_handler_t cuda_reduce_handler_v1;

#endif
