/*
 * handler_host_softmax.c -- dispatch handler host_softmax v1: launches
 * "host-softmax-v1" kernels (kernels/host/host_kernel.h) for a graph of one
 * softmax or log-softmax node (softmax_pattern.h), over any axis and any
 * strides: the axis is the rows' column axis.
 *
 * Launch values: the row kernels' (host_handlers.h, HOST_ROW_*), the op's
 * value log; x and y with strides outer.., col.  The kernels' scale is 1
 * (the op has none).
 */
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

#include "handlers.h"
#include "host_handlers.h"
#include "softmax_pattern.h"

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)metadata; /* both entries take every layout */
    (void)metadata_count;
    softmax_pattern_t p;
    cdnn_status_t st = softmax_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = host_row_values(&p.rows, "softmax", threads, p.log, values);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t *v = *values;
    host_tensor_put(v + HOST_ROW_X, &g->tensors[p.x], p.x_strides, p.rows.outer_rank + 1);
    host_tensor_put(v + HOST_ROW_Y, &g->tensors[p.y], p.y_strides, p.rows.outer_rank + 1);
    *count = HOST_ROW_VALUES;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t arguments(const launch_t *l, const cdnn_exec_args_t *args,
                               cdnn_host_softmax_args_t *a)
{
    const int64_t *v = l->values;
    memset(a, 0, sizeof *a);
    host_row_get(v, &a->outer_rank, &a->cols, a->outer_dims, &a->parallel);
    a->log = (int32_t)v[HOST_ROW_OP];
    a->scale = 1.0f;
    cdnn_status_t st = host_tensor_get(v + HOST_ROW_X, args, &a->x);
    return st == CDNN_STATUS_SUCCESS ? host_tensor_get(v + HOST_ROW_Y, args, &a->y) : st;
}

HOST_HANDLER_CALLS(cdnn_host_softmax_args_t, cdnn_host_softmax_fn)

const dispatch_handler_t host_softmax_handler_v1 = {
    .name = "host_softmax",
    .version = 1,
    .signature = CDNN_HOST_SIGNATURE_SOFTMAX,
    .kind = KERNEL_KIND_HOST,
    .derive = derive,
    .workspace = workspace,
    .run = run,
};
