#include "host_handlers.h"

#include <string.h>

#include <cdnn_sdk/error.h>

void host_tensor_put(int64_t *v, const cdnn_tensor_view_t *t, const int64_t *strides,
                     int32_t rank)
{
    v[HOST_TENSOR_PRESENT] = 1;
    v[HOST_TENSOR_UID] = t->uid;
    v[HOST_TENSOR_TYPE] = t->type;
    memcpy(v + HOST_TENSOR_STRIDES, strides, (size_t)rank * sizeof *strides);
}

cdnn_status_t host_tensor_get(const int64_t *v, const cdnn_exec_args_t *args,
                              cdnn_host_tensor_t *t)
{
    memset(t, 0, sizeof *t);
    if (!v[HOST_TENSOR_PRESENT])
        return CDNN_STATUS_SUCCESS;
    t->data = args ? launch_pointer(args, v[HOST_TENSOR_UID]) : NULL;
    t->type = (int32_t)v[HOST_TENSOR_TYPE];
    memcpy(t->strides, v + HOST_TENSOR_STRIDES, sizeof t->strides);
    if (args && !t->data)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "the variant pack lacks tensor uid %lld",
                        (long long)v[HOST_TENSOR_UID]);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t host_kernel_failed(const launch_t *launch, int32_t status)
{
    static const char *const reasons[] = {
        [CDNN_HOST_BAD_ARGS] = "arguments out of range",
        [CDNN_HOST_BAD_TYPE] = "a type it lacks",
        [CDNN_HOST_WORKSPACE_TOO_SMALL] = "a workspace too small",
        [CDNN_HOST_BAD_PROGRAM] = "a malformed program",
    };
    int known = status > 0 && status < (int32_t)(sizeof reasons / sizeof *reasons);
    return sdk_fail(CDNN_STATUS_EXECUTION_FAILED, "kernel %s refused its launch (status "
                    "%d: %s)", launch->kernel_id, status,
                    known ? reasons[status] : "a status this provider does not know");
}
