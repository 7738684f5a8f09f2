/*
 * host_handlers.h -- what the host kernels' dispatch handlers share.
 */
#ifndef CDNN_KERNELS_HOST_HANDLERS_H
#define CDNN_KERNELS_HOST_HANDLERS_H

#include <host_kernel.h>

#include <cdnn/provider.h>

#include "handlers.h"
#include "row_layout.h"

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

/* The launch values of the row kernels of one input and one output
 * (reduce, softmax): threads, the op's own value (a reduction's mode,
 * softmax's log), outer rank, cols, the outer dims (CDNN_HOST_MAX_OUTER_RANK,
 * unused ones 0), then x and y, each a tensor as above. */
enum {
    HOST_ROW_THREADS = LAUNCH_THREADS,
    HOST_ROW_OP,
    HOST_ROW_OUTER_RANK,
    HOST_ROW_COLS,
    HOST_ROW_OUTER_DIMS,
    HOST_ROW_X = HOST_ROW_OUTER_DIMS + CDNN_HOST_MAX_OUTER_RANK,
    HOST_ROW_Y = HOST_ROW_X + HOST_TENSOR_VALUES,
    HOST_ROW_VALUES = HOST_ROW_Y + HOST_TENSOR_VALUES
};

/**
 * Row launch values (HOST_ROW_VALUES of them, malloc'd into *values) over
 * r (row_layout.h) with threads and op; x and y left for the caller
 * (host_tensor_put at HOST_ROW_X, HOST_ROW_Y).  NOT_SUPPORTED when r has
 * more outer dims than the host kernels take (what: the op, for the
 * message); ALLOC_FAILED.
 */
cdnn_status_t host_row_values(const row_layout_t *r, const char *what, int32_t threads,
                              int64_t op, int64_t **values);

/** The rows of row launch values v as a row kernel's arguments take them:
 * outer rank, cols, CDNN_HOST_MAX_OUTER_RANK outer dims, and the threads
 * as the provider's parallel-for. */
void host_row_get(const int64_t *v, int32_t *outer_rank, int64_t *cols, int64_t *outer_dims,
                  cdnn_host_parallel_t *parallel);

/*
 * A host handler's entry_of, workspace and run, for kernels of type fn_t
 * taking args_t, made from the handler's own
 *     static cdnn_status_t arguments(const launch_t *, const cdnn_exec_args_t *, args_t *)
 * (args NULL for the workspace query): what every host handler does with
 * its kernel once the arguments are laid out.
 */
#define HOST_HANDLER_CALLS(args_t, fn_t)                                                     \
    static fn_t entry_of(const launch_t *l)                                                  \
    {                                                                                        \
        fn_t fn;                                                                             \
        /* dlsym's object pointer to a function pointer, as POSIX allows. */                 \
        memcpy(&fn, &l->entry, sizeof fn);                                                   \
        return fn;                                                                           \
    }                                                                                        \
    static cdnn_status_t workspace(const launch_t *l, size_t *bytes)                         \
    {                                                                                        \
        args_t a;                                                                            \
        *bytes = 0;                                                                          \
        cdnn_status_t st = arguments(l, NULL, &a);                                           \
        int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, bytes) : CDNN_HOST_OK; \
        return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);                  \
    }                                                                                        \
    static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)                \
    {                                                                                        \
        args_t a;                                                                            \
        cdnn_status_t st = arguments(l, args, &a);                                           \
        int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, NULL) : CDNN_HOST_OK;  \
        return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);                  \
    }

#endif
