/*
 * handler_host_reduce.c -- dispatch handler host_reduce v1: launches
 * "host-reduce-v1" kernels (kernels/host/host_kernel.h) for a graph of one
 * reduction node whose reduced dims (those where y has 1 and x more) fold
 * into the rows' column axis (row_layout.h).
 *
 * Launch values: threads, mode, outer rank, cols, the outer dims
 * (CDNN_HOST_MAX_OUTER_RANK, unused ones 0), then x and y, each a tensor as
 * host_handlers.h lays it out (x: strides outer.., col; y: outer..).
 */
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

#include "handlers.h"
#include "host_handlers.h"
#include "host_parallel.h"
#include "reduce_pattern.h"

enum {
    V_THREADS = LAUNCH_THREADS,
    V_MODE,
    V_OUTER_RANK,
    V_COLS,
    V_OUTER_DIMS,
    V_X = V_OUTER_DIMS + CDNN_HOST_MAX_OUTER_RANK,
    V_Y = V_X + HOST_TENSOR_VALUES,
    V_COUNT = V_Y + HOST_TENSOR_VALUES
};

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)metadata; /* one kernel */
    (void)metadata_count;
    reduce_pattern_t p;
    cdnn_status_t st = reduce_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS && p.rows.outer_rank > CDNN_HOST_MAX_OUTER_RANK)
        st = sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the reduction has %d outer dims; the host "
                      "kernels take %d", p.rows.outer_rank, CDNN_HOST_MAX_OUTER_RANK);
    int64_t *v = st == CDNN_STATUS_SUCCESS ? calloc(V_COUNT, sizeof *v) : NULL;
    if (st != CDNN_STATUS_SUCCESS || !v)
        return st != CDNN_STATUS_SUCCESS ? st
                                         : sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    v[V_THREADS] = threads;
    v[V_MODE] = p.mode;
    v[V_OUTER_RANK] = p.rows.outer_rank;
    v[V_COLS] = p.rows.cols;
    memcpy(v + V_OUTER_DIMS, p.rows.outer_dims,
           (size_t)p.rows.outer_rank * sizeof *p.rows.outer_dims);
    host_tensor_put(v + V_X, &g->tensors[p.x], p.x_strides, p.rows.outer_rank + 1);
    host_tensor_put(v + V_Y, &g->tensors[p.y], p.y_strides, p.rows.outer_rank);
    *values = v;
    *count = V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t arguments(const launch_t *l, const cdnn_exec_args_t *args,
                               cdnn_host_reduce_args_t *a)
{
    const int64_t *v = l->values;
    memset(a, 0, sizeof *a);
    a->outer_rank = (int32_t)v[V_OUTER_RANK];
    a->mode = (int32_t)v[V_MODE];
    a->cols = v[V_COLS];
    memcpy(a->outer_dims, v + V_OUTER_DIMS, sizeof a->outer_dims);
    a->parallel = (cdnn_host_parallel_t){(int32_t)v[V_THREADS], 0, host_parallel_for, NULL};
    cdnn_status_t st = host_tensor_get(v + V_X, args, &a->x);
    return st == CDNN_STATUS_SUCCESS ? host_tensor_get(v + V_Y, args, &a->y) : st;
}

static cdnn_host_reduce_fn entry_of(const launch_t *l)
{
    cdnn_host_reduce_fn fn;
    /* dlsym's object pointer to a function pointer, as POSIX allows. */
    memcpy(&fn, &l->entry, sizeof fn);
    return fn;
}

static cdnn_status_t workspace(const launch_t *l, size_t *bytes)
{
    cdnn_host_reduce_args_t a;
    *bytes = 0;
    cdnn_status_t st = arguments(l, NULL, &a);
    int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, bytes) : CDNN_HOST_OK;
    return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_host_reduce_args_t a;
    cdnn_status_t st = arguments(l, args, &a);
    int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, NULL) : CDNN_HOST_OK;
    return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);
}

const dispatch_handler_t host_reduce_handler_v1 = {
    .name = "host_reduce",
    .version = 1,
    .signature = CDNN_HOST_SIGNATURE_REDUCE,
    .kind = KERNEL_KIND_HOST,
    .derive = derive,
    .workspace = workspace,
    .run = run,
};
