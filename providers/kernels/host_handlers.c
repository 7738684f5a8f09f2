#include "host_handlers.h"

#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

#include "host_parallel.h"

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

cdnn_status_t host_row_values(const row_layout_t *r, const char *what, int32_t threads,
                              int64_t op, int64_t **values)
{
    if (r->outer_rank > CDNN_HOST_MAX_OUTER_RANK)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the %s has %d outer dims; the host "
                        "kernels take %d", what, r->outer_rank, CDNN_HOST_MAX_OUTER_RANK);
    int64_t *v = calloc(HOST_ROW_VALUES, sizeof *v);
    if (!v)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    v[HOST_ROW_THREADS] = threads;
    v[HOST_ROW_OP] = op;
    v[HOST_ROW_OUTER_RANK] = r->outer_rank;
    v[HOST_ROW_COLS] = r->cols;
    memcpy(v + HOST_ROW_OUTER_DIMS, r->outer_dims,
           (size_t)r->outer_rank * sizeof *r->outer_dims);
    *values = v;
    return CDNN_STATUS_SUCCESS;
}

void host_row_get(const int64_t *v, int32_t *outer_rank, int64_t *cols, int64_t *outer_dims,
                  cdnn_host_parallel_t *parallel)
{
    *outer_rank = (int32_t)v[HOST_ROW_OUTER_RANK];
    *cols = v[HOST_ROW_COLS];
    memcpy(outer_dims, v + HOST_ROW_OUTER_DIMS, CDNN_HOST_MAX_OUTER_RANK * sizeof *outer_dims);
    *parallel = (cdnn_host_parallel_t){(int32_t)v[HOST_ROW_THREADS], 0, host_parallel_for,
                                       NULL};
}
