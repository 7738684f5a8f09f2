/*
 * handler_cuda_reduce.c -- dispatch handler cuda_reduce v1: launches
 * "cuda-reduce-v1" kernels (kernels/cuda/cuda_kernel.h) for a graph of one
 * reduction node whose reduced dims fold into the rows' column axis
 * (reduce_pattern.h) and whose other dims fold into one row stride, on the
 * handle's stream.
 *
 * A row kernel's geometry comes from its metadata: rows_per_block R and
 * threads, G = threads / R a row (whole warps); min(ceil(rows / R), 2^31 -
 * 1) blocks (at least 1), no dynamic shared memory.
 *
 * A column kernel (metadata columns=1, threads, blocks_per_sm B) applies
 * only where x's rows are adjacent (row stride 1) and the reduced axis is
 * not x's innermost: a reduced leading axis.  Its grid is one block a
 * column group (CDNN_CUDA_REDUCE_COLUMNS_WIDTH outputs) times the splits of
 * the reduced axis: as many as keep one wave of B blocks on each of
 * COLUMNS_SMS SMs busy, no more than leave each warp COLUMNS_MIN_TURNS
 * loads, at least 1.  With more than one split it asks for a workspace of
 * splits x rows f32 partial results (3 bytes more, to align them to 4 at
 * run) and launches the combining pass after the reducing one.
 *
 * Launch values: 1 (the launch's parallelism), mode, rows, cols, x and y
 * each as uid, type, row and col stride, then grid, block and shared bytes;
 * a column kernel's then splits, split_cols and the combining grid.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_kernel.h>

#include <cdnn_sdk/error.h>

#include "cuda_code.h"
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
    V_COUNT,
    /* a column kernel's */
    V_SPLITS = V_COUNT, V_SPLIT_COLS, V_COMBINE_GRID,
    V_COLUMNS_COUNT
};

/* The SMs of the H100 and H200 (SXM), whose one wave a column kernel's
 * splits fill; a GPU with fewer runs a wave and a part, correctly. */
#define COLUMNS_SMS 132
/* Fewer loads a warp than this, and the partial results cost more than
 * the parallelism brings. */
#define COLUMNS_MIN_TURNS 8
/* A grid's y dimension: the splits. */
#define COLUMNS_MAX_SPLITS 65535

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

/* Why x's layout is not a column kernel's, or SUCCESS. */
static cdnn_status_t columns_layout(const int64_t *v)
{
    const int64_t *x = v + V_X;
    if (v[V_ROWS] < 2)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the column kernels are for many outputs "
                        "side by side; this reduction has %lld", (long long)v[V_ROWS]);
    if (x[CUDA_ROWS_ROW_STRIDE] != 1)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the column kernels read outputs adjacent in "
                        "x (a reduced leading axis); here they are %lld elements apart",
                        (long long)x[CUDA_ROWS_ROW_STRIDE]);
    if (v[V_COLS] > 1 && x[CUDA_ROWS_COL_STRIDE] == 1)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the reduced axis is x's innermost; the row "
                        "kernels read it, not the column kernels");
    return CDNN_STATUS_SUCCESS;
}

/* A column kernel's grid, splits and combining grid for its metadata's
 * threads and blocks an SM. */
static cdnn_status_t columns_geometry(const sdk_kpack_kv_t *m, int32_t n, int64_t *v)
{
    int64_t threads = 0, per_sm = 0;
    cdnn_status_t st = kernel_metadata_int(m, n, "threads", 32, 1024, &threads);
    if (st == CDNN_STATUS_SUCCESS)
        st = kernel_metadata_int(m, n, "blocks_per_sm", 1, 32, &per_sm);
    if (st == CDNN_STATUS_SUCCESS && threads % 32 != 0)
        st = sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the kernel's metadata gives %lld threads: a "
                      "column kernel takes whole warps", (long long)threads);
    if (st == CDNN_STATUS_SUCCESS)
        st = columns_layout(v);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const int64_t rows = v[V_ROWS], cols = v[V_COLS];
    const int64_t width = CDNN_CUDA_REDUCE_COLUMNS_WIDTH(v[V_X + CUDA_ROWS_TYPE]);
    const int64_t groups = (rows + width - 1) / width;
    if (groups > CUDA_ROWS_MAX_GRID)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "%lld outputs need %lld blocks of a column "
                        "kernel; a grid holds at most %lld", (long long)rows, (long long)groups,
                        (long long)CUDA_ROWS_MAX_GRID);
    int64_t splits = COLUMNS_SMS * per_sm / groups;
    const int64_t most = (cols + threads / 32 * COLUMNS_MIN_TURNS - 1) /
                         (threads / 32 * COLUMNS_MIN_TURNS);
    splits = splits > most ? most : splits;
    splits = splits < 1 ? 1 : splits > COLUMNS_MAX_SPLITS ? COLUMNS_MAX_SPLITS : splits;
    const int64_t split_cols = (cols + splits - 1) / splits;
    v[V_SPLITS] = split_cols > 0 ? (cols + split_cols - 1) / split_cols : 1; /* none empty */
    v[V_SPLIT_COLS] = split_cols;
    v[V_COMBINE_GRID] = v[V_SPLITS] > 1 ? (rows + 31) / 32 : 0;
    v[V_GRID] = groups;
    v[V_BLOCK] = threads;
    v[V_SMEM] = 0;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t derive_into(int64_t *v, const cdnn_graph_view_t *g,
                                 const sdk_kpack_kv_t *m, int32_t n, int32_t *count)
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
    const int columns = kernel_metadata(m, n, "columns") != NULL;
    *count = columns ? V_COLUMNS_COUNT : V_COUNT;
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (!columns)
        return geometry(m, n, v[V_ROWS], v);
    int64_t one = 0;
    st = kernel_metadata_int(m, n, "columns", 1, 1, &one);
    return st == CDNN_STATUS_SUCCESS ? columns_geometry(m, n, v) : st;
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)threads; /* a grid, not host threads */
    int64_t *v = calloc(V_COLUMNS_COUNT, sizeof *v);
    cdnn_status_t st = v ? derive_into(v, g, metadata, metadata_count, count)
                         : sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (st != CDNN_STATUS_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
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

/* A column kernel's splits x rows partial results, 4-byte aligned. */
static size_t partials_bytes(const int64_t *v)
{
    return v[V_SPLITS] > 1 ? (size_t)v[V_SPLITS] * (size_t)v[V_ROWS] * sizeof(float) + 3 : 0;
}

/* The reducing pass, then, over more than one split, the combining one. */
static cdnn_status_t run_columns(const launch_t *l, const cdnn_exec_args_t *args,
                                 cdnn_cuda_reduce_columns_params_t *c)
{
    const int64_t *v = l->values;
    c->splits = (int32_t)v[V_SPLITS];
    c->split_cols = v[V_SPLIT_COLS];
    if (c->splits > 1) {
        if (!args->workspace)
            return sdk_fail(CDNN_STATUS_BAD_PARAM, "kernel %s needs its workspace",
                            l->kernel_id);
        c->partials = (float *)(((uintptr_t)args->workspace + 3) & ~(uintptr_t)3);
    }
    void *params[] = {c};
    const unsigned reducing[3] = {(unsigned)v[V_GRID], (unsigned)c->splits, 1};
    cdnn_status_t st = cuda_code_launch(l->cuda, reducing, (unsigned)v[V_BLOCK], 0,
                                        args->stream, params);
    if (st != CDNN_STATUS_SUCCESS || c->splits == 1)
        return st;
    c->combine = 1; /* the launch copied the parameters */
    const unsigned combining[3] = {(unsigned)v[V_COMBINE_GRID], 1, 1};
    return cuda_code_launch(l->cuda, combining, (unsigned)v[V_BLOCK], 0, args->stream, params);
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_cuda_reduce_columns_params_t c;
    memset(&c, 0, sizeof c);
    cdnn_status_t st = params_of(l->values, args, &c.reduce);
    if (l->value_count == V_COLUMNS_COUNT)
        return st == CDNN_STATUS_SUCCESS ? run_columns(l, args, &c) : st;
    return cuda_rows_run(l, args, V_GRID, &c.reduce, st);
}

static cdnn_status_t workspace(const launch_t *l, size_t *bytes)
{
    *bytes = l->value_count == V_COLUMNS_COUNT ? partials_bytes(l->values) : 0;
    return CDNN_STATUS_SUCCESS;
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
    .workspace = workspace,
    .run = run,
};
