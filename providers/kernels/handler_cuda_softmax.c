/*
 * handler_cuda_softmax.c -- dispatch handler cuda_softmax v1: launches
 * "cuda-softmax-v1" kernels (kernels/cuda/cuda_kernel.h) for one softmax
 * or log-softmax node (softmax_pattern.h) on the handle's stream.
 *
 * The kernels take rows x cols with one row stride and one column stride:
 * any axis is the column one, but the other dims of x and of y must each
 * fold into one row stride.  The geometry is the norm kernels' (cuda_rows.h:
 * a block or a warp per row, from the kernel's metadata, the row cached in
 * shared memory, at most CUDA_ROWS_MAX_SHARED bytes of it).
 *
 * Launch values: 1 (the launch's parallelism), log, rows, cols, x and y
 * each as uid, type, row and col stride, then grid, block and shared bytes.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_kernel.h>

#include <cdnn_sdk/error.h>

#include "cuda_rows.h"
#include "handlers.h"
#include "softmax_pattern.h"

enum {
    V_PARALLELISM = LAUNCH_THREADS,
    V_LOG, V_ROWS, V_COLS,
    V_X, V_Y = V_X + CUDA_ROWS_TENSOR_VALUES,
    V_GRID = V_Y + CUDA_ROWS_TENSOR_VALUES, V_BLOCK, V_SMEM,
    V_COUNT
};

/* ---- deriving the launch ---------------------------------------------------------------- */

static cdnn_status_t derive_into(int64_t *v, const cdnn_graph_view_t *g,
                                 const sdk_kpack_kv_t *m, int32_t n)
{
    softmax_pattern_t p;
    cdnn_status_t st = softmax_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = cuda_rows_put_tensor(v + V_X, &p.rows, &g->tensors[p.x], p.x_strides);
    if (st == CDNN_STATUS_SUCCESS)
        st = cuda_rows_put_tensor(v + V_Y, &p.rows, &g->tensors[p.y], p.y_strides);
    if (st == CDNN_STATUS_SUCCESS)
        st = cuda_rows_geometry(&p.rows, g->tensors[p.x].type, 0, 0, m, n, v + V_ROWS,
                                v + V_GRID);
    v[V_PARALLELISM] = 1;
    v[V_LOG] = p.log;
    return st;
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)threads; /* a grid, not host threads */
    int64_t *v = calloc(V_COUNT + 1, sizeof *v); /* + a staged kernel's blocks an SM */
    cdnn_status_t st = v ? derive_into(v, g, metadata, metadata_count)
                         : sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (st != CDNN_STATUS_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
    *count = cuda_rows_value_count(v, V_GRID);
    return CDNN_STATUS_SUCCESS;
}

/* ---- launching ------------------------------------------------------------------------------ */

static cdnn_status_t params_of(const int64_t *v, const cdnn_exec_args_t *args,
                               cdnn_cuda_softmax_params_t *p)
{
    memset(p, 0, sizeof *p);
    p->rows = v[V_ROWS];
    p->cols = v[V_COLS];
    p->log = (int32_t)v[V_LOG];
    p->x = cuda_rows_get_tensor(v + V_X, args, &p->x_type, &p->x_row_stride,
                                &p->x_col_stride);
    p->y = cuda_rows_get_tensor(v + V_Y, args, &p->y_type, &p->y_row_stride,
                                &p->y_col_stride);
    if (!p->x || !p->y)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "the variant pack lacks the softmax's x or y");
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_cuda_softmax_params_t p;
    cdnn_status_t st = params_of(l->values, args, &p);
    return cuda_rows_run(l, args, V_GRID, &p, st);
}

static uint32_t shared_bytes(const int64_t *values)
{
    return (uint32_t)values[V_SMEM];
}

const dispatch_handler_t cuda_softmax_handler_v1 = {
    .name = "cuda_softmax",
    .version = 1,
    .signature = "cuda-softmax-v1",
    .kind = KERNEL_KIND_CUDA,
    .derive = derive,
    .shared_bytes = shared_bytes,
    .workspace = launch_no_workspace,
    .run = run,
};
