/*
 * host_handlers.h -- what the host kernels' dispatch handlers share.
 */
#ifndef CDNN_KERNELS_HOST_HANDLERS_H
#define CDNN_KERNELS_HOST_HANDLERS_H

#include <host_kernel.h>

#include <cdnn/provider.h>

#include "handlers.h"

/* A tensor in launch values: present, uid, type, CDNN_HOST_MAX_RANK
 * strides (in the kernel's order; unused ones 0).  Absent: all 0. */
enum {
    HOST_TENSOR_PRESENT,
    HOST_TENSOR_UID,
    HOST_TENSOR_TYPE,
    HOST_TENSOR_STRIDES,
    HOST_TENSOR_VALUES = HOST_TENSOR_STRIDES + CDNN_HOST_MAX_RANK
};

/** Put tensor t with strides (rank of them) at v. */
void host_tensor_put(int64_t *v, const cdnn_tensor_view_t *t, const int64_t *strides,
                     int32_t rank);

/** The kernel's view of the tensor at v: args NULL for a workspace query
 * (no pointers); BAD_PARAM when the variant pack lacks it. */
cdnn_status_t host_tensor_get(const int64_t *v, const cdnn_exec_args_t *args,
                              cdnn_host_tensor_t *t);

/** A host kernel's nonzero status (cdnn_host_status_t) as a failure naming
 * the kernel and the reason. */
cdnn_status_t host_kernel_failed(const launch_t *launch, int32_t status);

#endif
