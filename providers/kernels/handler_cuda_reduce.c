/*
 * handler_cuda_reduce.c -- dispatch handler cuda_reduce v1: launches
 * "cuda-reduce-v1" kernels (kernels/cuda/cuda_kernel.h) for a graph of one
 * reduction node whose reduced dims fold into the rows' column axis
 * (reduce_pattern.h) and whose other dims fold into one row stride, on the
 * handle's stream.
 *
 * The geometry comes from the kernel's metadata: rows_per_block R and
 * threads, G = threads / R a row (whole warps); min(ceil(rows / R), 2^31 -
 * 1) blocks (at least 1), no dynamic shared memory.
 *
 * Launch values: 1 (the launch's parallelism), mode, rows, cols, x and y
 * each as uid, type, row and col stride, then grid, block and shared bytes.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_kernel.h>

#include <cdnn_sdk/error.h>

#include "cuda_rows.h"
#include "handlers.h"
#include "reduce_pattern.h"

/* The kernels take cdnn_reduction_mode_t's values as they are. */
_Static_assert(CDNN_CUDA_REDUCE_ADD == CDNN_REDUCE_ADD && CDNN_CUDA_REDUCE_MUL == CDNN_REDUCE_MUL &&
                   CDNN_CUDA_REDUCE_MIN == CDNN_REDUCE_MIN &&
                   CDNN_CUDA_REDUCE_MAX == CDNN_REDUCE_MAX &&
                   CDNN_CUDA_REDUCE_AMAX == CDNN_REDUCE_AMAX &&
                   CDNN_CUDA_REDUCE_AVG == CDNN_REDUCE_AVG &&
                   CDNN_CUDA_REDUCE_NORM1 == CDNN_REDUCE_NORM1 &&
                   CDNN_CUDA_REDUCE_NORM2 == CDNN_REDUCE_NORM2 &&
                   CDNN_CUDA_REDUCE_MODE_COUNT == CDNN_REDUCE_MODE_COUNT,
               "cuda reduction modes");

enum {
    V_PARALLELISM = LAUNCH_THREADS,
    V_MODE, V_ROWS, V_COLS,
    V_X, V_Y = V_X + CUDA_ROWS_TENSOR_VALUES,
    V_GRID = V_Y + CUDA_ROWS_TENSOR_VALUES, V_BLOCK, V_SMEM,
    V_COUNT
};

/* ---- deriving the launch ---------------------------------------------------------------- */

static cdnn_status_t geometry(const sdk_kpack_kv_t *m, int32_t n, int64_t rows, int64_t *v)
{
    int64_t per_block = 0, threads = 0;
    cdnn_status_t st = cuda_rows_block_shape(m, n, &per_block, &threads);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t group = threads / per_block;
    if (group * per_block != threads || group % 32 != 0)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the kernel's metadata gives %lld threads "
                        "to %lld rows a block: a reduction kernel takes whole warps a row",
                        (long long)threads, (long long)per_block);
    int64_t grid = (rows + per_block - 1) / per_block;
    v[V_GRID] = grid < 1 ? 1 : grid > CUDA_ROWS_MAX_GRID ? CUDA_ROWS_MAX_GRID : grid;
    v[V_BLOCK] = threads;
    v[V_SMEM] = 0;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t derive_into(int64_t *v, const cdnn_graph_view_t *g,
                                 const sdk_kpack_kv_t *m, int32_t n)
{
    reduce_pattern_t p;
    cdnn_status_t st = reduce_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = cuda_rows_put_tensor(v + V_X, &p.rows, &g->tensors[p.x], p.x_strides);
    if (st == CDNN_STATUS_SUCCESS)
        st = cuda_rows_put_tensor(v + V_Y, &p.rows, &g->tensors[p.y], p.y_strides);
    v[V_PARALLELISM] = 1;
    v[V_MODE] = p.mode;
    v[V_ROWS] = row_count(&p.rows);
    v[V_COLS] = p.rows.cols;
    return st == CDNN_STATUS_SUCCESS ? geometry(m, n, v[V_ROWS], v) : st;
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)threads; /* a grid, not host threads */
    int64_t *v = calloc(V_COUNT, sizeof *v);
    cdnn_status_t st = v ? derive_into(v, g, metadata, metadata_count)
                         : sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (st != CDNN_STATUS_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
    *count = V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

/* ---- launching ------------------------------------------------------------------------------ */

static cdnn_status_t params_of(const int64_t *v, const cdnn_exec_args_t *args,
                               cdnn_cuda_reduce_params_t *p)
{
    memset(p, 0, sizeof *p);
    p->rows = v[V_ROWS];
    p->cols = v[V_COLS];
    p->mode = (int32_t)v[V_MODE];
    int64_t y_col_stride = 0; /* 0: a row's one value */
    p->x = cuda_rows_get_tensor(v + V_X, args, &p->x_type, &p->x_row_stride,
                                &p->x_col_stride);
    p->y = cuda_rows_get_tensor(v + V_Y, args, &p->y_type, &p->y_row_stride, &y_col_stride);
    if ((!p->y && p->rows > 0) || (!p->x && p->rows > 0 && p->cols > 0))
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "the variant pack lacks the reduction's x or y");
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_cuda_reduce_params_t p;
    cdnn_status_t st = params_of(l->values, args, &p);
    return cuda_rows_run(l, args, V_GRID, &p, st);
}

static uint32_t shared_bytes(const int64_t *values)
{
    return (uint32_t)values[V_SMEM];
}

const dispatch_handler_t cuda_reduce_handler_v1 = {
    .name = "cuda_reduce",
    .version = 1,
    .signature = "cuda-reduce-v1",
    .kind = KERNEL_KIND_CUDA,
    .derive = derive,
    .shared_bytes = shared_bytes,
    .workspace = launch_no_workspace,
    .run = run,
};
