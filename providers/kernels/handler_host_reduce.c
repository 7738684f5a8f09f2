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
#include "reduce_pattern.h"

enum {
    V_THREADS = LAUNCH_THREADS,
    V_MODE,
    V_OUTER_RANK, /* host_row_values' order: rank, cols, dims */
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
    if (st == CDNN_STATUS_SUCCESS)
        st = host_row_values(&p.rows, "reduction", threads, V_COUNT, V_OUTER_RANK, values);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t *v = *values;
    v[V_MODE] = p.mode;
    host_tensor_put(v + V_X, &g->tensors[p.x], p.x_strides, p.rows.outer_rank + 1);
    host_tensor_put(v + V_Y, &g->tensors[p.y], p.y_strides, p.rows.outer_rank);
    *count = V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t arguments(const launch_t *l, const cdnn_exec_args_t *args,
                               cdnn_host_reduce_args_t *a)
{
    const int64_t *v = l->values;
    memset(a, 0, sizeof *a);
    host_row_get(v, V_OUTER_RANK, &a->outer_rank, &a->cols, a->outer_dims, &a->parallel);
    a->mode = (int32_t)v[V_MODE];
    cdnn_status_t st = host_tensor_get(v + V_X, args, &a->x);
    return st == CDNN_STATUS_SUCCESS ? host_tensor_get(v + V_Y, args, &a->y) : st;
}

HOST_HANDLER_CALLS(cdnn_host_reduce_args_t, cdnn_host_reduce_fn)

const dispatch_handler_t host_reduce_handler_v1 = {
    .name = "host_reduce",
    .version = 1,
    .signature = CDNN_HOST_SIGNATURE_REDUCE,
    .kind = KERNEL_KIND_HOST,
    .derive = derive,
    .workspace = workspace,
    .run = run,
};
