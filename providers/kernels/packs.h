/*
 * packs.h -- the kernel packs installed here, and the engines they
 * describe.
 *
 * Packs are the files named *.kpack in each directory of the kernel path:
 * $CDNN_KERNEL_PATH (directories separated by ':', read with
 * secure_getenv, so ignored in set-uid programs), else the "kernels"
 * directory beside the provider's own, <libdir>/cdnn/kernels for a
 * provider in <libdir>/cdnn/providers -- found from where the provider's
 * shared object really is (dladdr, realpath), as cdnn finds providers.
 * A pack that does not open is skipped with a log line naming it and why.
 *
 * An engine is a pack's engine entry (a compiled descriptor) whose match
 * function and dispatch handler this provider has and whose constraints
 * it understands; any other entry is skipped with a log line.  An engine
 * name served by an earlier pack (path order, then file names in order)
 * keeps that pack's entry.
 */
#ifndef CDNN_KERNELS_PACKS_H
#define CDNN_KERNELS_PACKS_H

#include <cdnn/provider.h>
#include <cdnn_sdk/engines.h>
#include <cdnn_sdk/kpack.h>

#include "handlers.h"
#include "match.h"

#define KERNEL_PATH_ENV "CDNN_KERNEL_PATH"
#define KERNEL_PACK_SUFFIX ".kpack"

/* An engine, as a pack describes it and this provider runs it.  Its knobs
 * are the candidate knob (knob 0: which candidate kernel to run) and the
 * descriptor's own. */
typedef struct kernel_engine {
    const sdk_kpack_t *pack;
    const sdk_kpack_engine_t *entry;
    const match_function_t *match;
    engine_constraints_t constraints;
    const dispatch_handler_t *handler;
    cdnn_knob_info_t *knobs;
    int32_t knob_count;
    char *candidate_knob; /* "kernels.<engine>.candidate" */
} kernel_engine_t;

/* Every pack and engine found at init; read-only afterwards. */
typedef struct pack_set {
    char *path; /* the kernel path searched, for messages */
    sdk_kpack_t **packs;
    int32_t pack_count;
    kernel_engine_t *engines;
    sdk_engine_t *table_rows; /* the SDK's view of the engines */
    sdk_engine_table_t table;
} pack_set_t;

/** Find and open the packs and their engines; a problem with one pack or
 * engine is logged through host->log and skipped.  Fails only for want of
 * memory. */
cdnn_status_t pack_set_open(const cdnn_provider_host_t *host, pack_set_t *set);

void pack_set_close(pack_set_t *set);

/** The engine at index of the set's table. */
const kernel_engine_t *pack_set_engine(const pack_set_t *set, int32_t index);

/** An installed kernel whose code has this SHA-256 and the given symbol,
 * target, signature and metadata (strict mode: the plan's code is an
 * installed kernel, as installed), or NULL. */
const sdk_kpack_kernel_t *pack_set_find_code(const pack_set_t *set,
                                             const uint8_t sha256[SDK_SHA256_BYTES],
                                             const char *symbol, const char *target,
                                             const char *signature,
                                             const sdk_kpack_kv_t *metadata,
                                             int32_t metadata_count);

/** An installed kernel whose code has this SHA-256 and that symbol, or
 * NULL: code a pack holds, named as an entry point the pack describes. */
const sdk_kpack_kernel_t *pack_set_find_entry(const pack_set_t *set,
                                              const uint8_t sha256[SDK_SHA256_BYTES],
                                              const char *symbol);

#endif
