/*
 * handler_host_softmax.c -- dispatch handler host_softmax v1: launches
 * "host-softmax-v1" kernels (kernels/host/host_kernel.h) for a graph of one
 * softmax or log-softmax node (softmax_pattern.h), over any axis and any
 * strides: the axis is the rows' column axis.
 *
 * Launch values: threads, log, outer rank, cols, the outer dims
 * (CDNN_HOST_MAX_OUTER_RANK, unused ones 0), then x and y, each a tensor
 * as host_handlers.h lays it out (strides outer.., col).  The kernels'
 * scale is 1 (the op has none).
 */
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

#include "handlers.h"
#include "host_handlers.h"
#include "softmax_pattern.h"

enum {
    V_THREADS = LAUNCH_THREADS,
    V_LOG,
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
    (void)metadata; /* both entries take every layout */
    (void)metadata_count;
    softmax_pattern_t p;
    cdnn_status_t st = softmax_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = host_row_values(&p.rows, "softmax", threads, V_COUNT, V_OUTER_RANK, values);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t *v = *values;
    v[V_LOG] = p.log;
    host_tensor_put(v + V_X, &g->tensors[p.x], p.x_strides, p.rows.outer_rank + 1);
    host_tensor_put(v + V_Y, &g->tensors[p.y], p.y_strides, p.rows.outer_rank + 1);
    *count = V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t arguments(const launch_t *l, const cdnn_exec_args_t *args,
                               cdnn_host_softmax_args_t *a)
{
    const int64_t *v = l->values;
    memset(a, 0, sizeof *a);
    host_row_get(v, V_OUTER_RANK, &a->outer_rank, &a->cols, a->outer_dims, &a->parallel);
    a->log = (int32_t)v[V_LOG];
    a->scale = 1.0f;
    cdnn_status_t st = host_tensor_get(v + V_X, args, &a->x);
    return st == CDNN_STATUS_SUCCESS ? host_tensor_get(v + V_Y, args, &a->y) : st;
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
