/*
 * handler_host_reduce.c -- dispatch handler host_reduce v1: launches
 * "host-reduce-v1" kernels (kernels/host/host_kernel.h) for a graph of one
 * reduction node whose reduced dims (those where y has 1 and x more) fold
 * into the rows' column axis (row_layout.h).
 *
 * Launch values: the row kernels' (host_handlers.h, HOST_ROW_*), the op's
 * value the mode; x with strides outer.., col, y with outer.. only.
 */
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

#include "handlers.h"
#include "host_handlers.h"
#include "reduce_pattern.h"

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)metadata; /* one kernel */
    (void)metadata_count;
    reduce_pattern_t p;
    cdnn_status_t st = reduce_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = host_row_values(&p.rows, "reduction", threads, p.mode, values);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t *v = *values;
    host_tensor_put(v + HOST_ROW_X, &g->tensors[p.x], p.x_strides, p.rows.outer_rank + 1);
    host_tensor_put(v + HOST_ROW_Y, &g->tensors[p.y], p.y_strides, p.rows.outer_rank);
    *count = HOST_ROW_VALUES;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t arguments(const launch_t *l, const cdnn_exec_args_t *args,
                               cdnn_host_reduce_args_t *a)
{
    const int64_t *v = l->values;
    memset(a, 0, sizeof *a);
    host_row_get(v, &a->outer_rank, &a->cols, a->outer_dims, &a->parallel);
    a->mode = (int32_t)v[HOST_ROW_OP];
    cdnn_status_t st = host_tensor_get(v + HOST_ROW_X, args, &a->x);
    return st == CDNN_STATUS_SUCCESS ? host_tensor_get(v + HOST_ROW_Y, args, &a->y) : st;
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
