#include "handlers.h"

#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

/* Every handler this provider has.  A new handler version is a new entry:
 * plans saved with the old one keep loading as long as it stays here. */
static const dispatch_handler_t *const handlers[] = {
    &host_matmul_handler_v1,
    &host_pointwise_handler_v1,
    &host_norm_handler_v1,
    &host_reduce_handler_v1,
    &host_conv_handler_v1,
    &host_softmax_handler_v1,
    &cuda_matmul_handler_v1,
    &cuda_pointwise_handler_v1,
    &cuda_norm_handler_v1,
    &cuda_conv_handler_v1,
    &cuda_sdpa_handler_v1,
    &cuda_softmax_handler_v1,
    &cuda_reduce_handler_v1,
};
#define HANDLER_COUNT (sizeof handlers / sizeof *handlers)

const dispatch_handler_t *dispatch_handler_find(const char *name, uint32_t version)
{
    for (size_t i = 0; i < HANDLER_COUNT; i++)
        if (strcmp(handlers[i]->name, name) == 0 && handlers[i]->version == version)
            return handlers[i];
    return NULL;
}

uint32_t dispatch_handler_latest(const char *name)
{
    uint32_t latest = 0;
    for (size_t i = 0; i < HANDLER_COUNT; i++)
        if (strcmp(handlers[i]->name, name) == 0 && handlers[i]->version > latest)
            latest = handlers[i]->version;
    return latest;
}

const char *kernel_metadata(const sdk_kpack_kv_t *metadata, int32_t count, const char *key)
{
    for (int32_t i = 0; i < count; i++)
        if (strcmp(metadata[i].key, key) == 0)
            return metadata[i].value;
    return NULL;
}

cdnn_status_t kernel_metadata_int(const sdk_kpack_kv_t *metadata, int32_t count,
                                  const char *key, int64_t min, int64_t max, int64_t *value)
{
    const char *text = kernel_metadata(metadata, count, key);
    char *end = NULL;
    long long v = text ? strtoll(text, &end, 10) : 0;
    if (!text || !*text || *end || v < min || v > max)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the kernel's metadata %s is %s%s%s, not "
                        "an integer in [%lld, %lld]", key, text ? "\"" : "missing",
                        text ? text : "", text ? "\"" : "", (long long)min, (long long)max);
    *value = v;
    return CDNN_STATUS_SUCCESS;
}

void *launch_pointer(const cdnn_exec_args_t *args, int64_t uid)
{
    for (int32_t i = 0; i < args->count; i++)
        if (args->uids[i] == uid)
            return args->ptrs[i];
    return NULL;
}

cdnn_status_t launch_no_workspace(const launch_t *launch, size_t *bytes)
{
    (void)launch;
    *bytes = 0;
    return CDNN_STATUS_SUCCESS;
}
