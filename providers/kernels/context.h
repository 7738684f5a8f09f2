/*
 * context.h -- the kernels provider's execution contexts.
 *
 * A context runs one kernel: its code object loaded (host: from memory),
 * its launch prepared by the kernel's dispatch handler.  It is made once,
 * by a build (from a graph and the installed packs) or a restore (from a
 * saved payload), and read-only afterwards, so that executes from many
 * threads need no lock.
 */
#ifndef CDNN_KERNELS_CONTEXT_H
#define CDNN_KERNELS_CONTEXT_H

#include <cdnn/provider.h>
#include <cdnn_sdk/kpack.h>
#include <cdnn_sdk/payload_graph.h>

#include "cuda_code.h"
#include "handlers.h"
#include "host_code.h"
#include "packs.h"

#define KERNELS_PROVIDER_VERSION "0.1.0"

/* The provider's state: the host's services and what init found. */
typedef struct kernels_state {
    const cdnn_provider_host_t *host;
    pack_set_t packs;
} kernels_state_t;

typedef struct kernel_context {
    const cdnn_provider_host_t *host;
    launch_t launch;
    char *kernel_id; /* the launch's, owned */
    host_code_t code; /* host kernels */
    cuda_code_t cuda; /* cuda kernels */
    /* Built: the pack and kernel the code came from, which a save checks
     * are still what is on disk (rule 4), and the payload, made at build
     * so that every save gives the same bytes. */
    const sdk_kpack_t *pack;
    const sdk_kpack_kernel_t *kernel;
    uint8_t *payload;
    size_t payload_size;
    /* Restored: the graph its payload carries (view NULL when built). */
    sdk_payload_graph_t restored;
} kernel_context_t;

/** An empty context. */
cdnn_status_t kernel_context_new(const cdnn_provider_host_t *host, kernel_context_t **ctx);
void kernel_context_free(kernel_context_t *ctx);

/* The code object a context runs: bytes from a pack or a payload. */
typedef struct code_object {
    const char *kernel_id, *target, *symbol;
    const uint8_t *bytes;
    size_t size;
} code_object_t;

/** Load the code object on device and prepare its launch with handler and
 * values (taken over): the last step of a build and of a restore. */
cdnn_status_t kernel_context_launch(kernel_context_t *ctx, const cdnn_device_view_t *device,
                                    const dispatch_handler_t *handler,
                                    const code_object_t *code, int64_t *values,
                                    int32_t value_count);

/* ---- build.c ---- */

/** SUCCESS if engine runs g on device: its match function accepts g and
 * a candidate kernel applies; else NOT_SUPPORTED and why. */
cdnn_status_t kernel_engine_applicable(const kernel_engine_t *engine,
                                       const cdnn_device_view_t *device,
                                       const cdnn_graph_view_t *g);

/** Build a context for g with the candidate the knobs choose. */
cdnn_status_t kernel_context_build(const kernels_state_t *state, const kernel_engine_t *engine,
                                   const cdnn_device_view_t *device,
                                   const cdnn_graph_view_t *g, const cdnn_knob_value_t *knobs,
                                   int32_t knob_count, kernel_context_t **ctx);

/** The candidates benchmarking times besides the default: the candidate
 * knob's values of every other candidate that applies. */
int32_t kernel_engine_variant_count(const kernel_engine_t *engine,
                                    const cdnn_device_view_t *device,
                                    const cdnn_graph_view_t *g);
cdnn_status_t kernel_engine_variant_knob(const kernel_engine_t *engine,
                                         const cdnn_device_view_t *device,
                                         const cdnn_graph_view_t *g, int32_t index,
                                         cdnn_knob_value_t *knob);

/* ---- timing.c ---- */

/** Wait for the context's launches on stream (host kernels: nothing to
 * wait for). */
cdnn_status_t kernel_context_synchronize(const kernel_context_t *ctx, void *stream);

/** Run the launch runs times on args and report the device's time for
 * them: CUDA events on the stream, or the host's clock for host kernels. */
cdnn_status_t kernel_context_time(const kernel_context_t *ctx, const cdnn_exec_args_t *args,
                                  int32_t runs, double *seconds);

/* ---- restore.c ---- */

/** A context from saved payload bytes, after the ordered load checks. */
cdnn_status_t kernel_context_restore(const kernels_state_t *state, int32_t engine_index,
                                     const cdnn_device_view_t *device, const uint8_t *payload,
                                     size_t size, kernel_context_t **ctx);

/** Strict mode: is the payload's code an installed kernel? */
cdnn_status_t kernel_payload_trusted(const kernels_state_t *state, const uint8_t *payload,
                                     size_t size);

#endif
