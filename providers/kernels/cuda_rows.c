#include "cuda_rows.h"

#include <cdnn_sdk/error.h>

#include <cuda_kernel.h>

#include "cuda_code.h"
#include "handlers.h"

/* The threads of one row of a block of `threads` holding per_block rows:
 * a warp, or the whole block for one row -- or, for a staged kernel
 * (`several`), several warps a row and up to 15 such groups a block (a
 * named barrier each); `kind` names the kernel. */
static cdnn_status_t row_group(int64_t threads, int64_t per_block, int several,
                               const char *kind, int64_t *group_out)
{
    int64_t group = threads / per_block;
    if (group * per_block != threads || group % 32 != 0 ||
        (group > 32 && per_block != 1 && (!several || per_block > 15)))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the kernel's metadata gives %lld threads "
                        "to %lld rows a block: a %s kernel takes a warp or %s per row",
                        (long long)threads, (long long)per_block, kind,
                        several ? "a block's warps (at most 15 groups)" : "a whole block");
    if (group_out)
        *group_out = group;
    return CDNN_STATUS_SUCCESS;
}

/* A register kernel's grid, block and row shape (no dynamic shared memory). */
static cdnn_status_t registers_geometry(const row_layout_t *r, int64_t x_bytes,
                                        const sdk_kpack_kv_t *m, int32_t n, int64_t per_block,
                                        int64_t threads,
                                        int64_t *shape, int64_t *launch)
{
    int64_t pieces = 0;
    cdnn_status_t st = kernel_metadata_int(m, n, "pieces", 1, 64, &pieces);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t group = 0;
    st = row_group(threads, per_block, 0, "register", &group);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t packed = 0;
    if (kernel_metadata(m, n, "packed"))
        st = kernel_metadata_int(m, n, "packed", 0, 1, &packed);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    /* packed: a piece is 16 bytes of x as loaded (8 f16/bf16, 4 f32) */
    int64_t per_piece = packed ? 16 / x_bytes : CUDA_ROWS_PIECE;
    int64_t capacity = group * pieces * per_piece;
    if (r->cols > capacity)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "rows of %lld elements exceed the %lld "
                        "this kernel holds in registers", (long long)r->cols,
                        (long long)capacity);
    int64_t rows = row_count(r), grid = (rows + per_block - 1) / per_block;
    if (grid > CUDA_ROWS_MAX_GRID)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "%lld rows need %lld blocks of this "
                        "kernel; a grid holds at most %lld", (long long)rows, (long long)grid,
                        (long long)CUDA_ROWS_MAX_GRID);
    shape[CUDA_ROWS_ROWS] = rows;
    shape[CUDA_ROWS_COLS] = r->cols;
    launch[CUDA_ROWS_GRID] = grid;
    launch[CUDA_ROWS_BLOCK] = threads;
    launch[CUDA_ROWS_SMEM] = 0;
    return CDNN_STATUS_SUCCESS;
}

/* Blocks of a staged kernel an SM surely holds at `shared` bytes of
 * dynamic shared memory: its shared memory (1 KiB reserved a block) and the
 * registers the kernel was built for. */
static int64_t staged_per_sm(int64_t shared, int64_t threads)
{
    int64_t per_sm = CUDA_ROWS_SM_SHARED_SM90 / (shared + 1024);
    if (per_sm > CDNN_CUDA_ROWS_STAGED_SM_THREADS / threads)
        per_sm = CDNN_CUDA_ROWS_STAGED_SM_THREADS / threads;
    return per_sm;
}

/* A staged kernel's grid (one block per rows_per_block rows, cut to what
 * stays resident at run), block, shared memory and blocks an SM.  The
 * shared memory past the stages is `extra` where that fits and costs no
 * block an SM, else `fallback` (the norm's parameters as f32, else in
 * their own types). */
static cdnn_status_t staged_geometry(const row_layout_t *r, int64_t x_bytes, int64_t extra,
                                     int64_t fallback, const sdk_kpack_kv_t *m, int32_t n,
                                     int64_t per_block, int64_t threads, int64_t *shape,
                                     int64_t *launch)
{
    int64_t stages = 0;
    cdnn_status_t st = kernel_metadata_int(m, n, "stages", 1, 8, &stages);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = row_group(threads, per_block, 1, "staged", NULL);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t staged = CDNN_CUDA_ROWS_STAGED_SMEM(per_block, stages, r->cols, x_bytes);
    int64_t shared = staged + extra;
    if (shared > CUDA_ROWS_MAX_SHARED_SM90 ||
        staged_per_sm(shared, threads) < staged_per_sm(staged + fallback, threads))
        shared = staged + fallback;
    if (shared > CUDA_ROWS_MAX_SHARED_SM90)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "rows of %lld elements need %lld bytes "
                        "of shared memory in this kernel; at most %d", (long long)r->cols,
                        (long long)shared, CUDA_ROWS_MAX_SHARED_SM90);
    int64_t rows = row_count(r), grid = (rows + per_block - 1) / per_block;
    if (grid > CUDA_ROWS_MAX_GRID)
        grid = CUDA_ROWS_MAX_GRID; /* the groups loop over the rows */
    /* Every block resident, none waiting for a second wave while others
     * idle. */
    int64_t per_sm = staged_per_sm(shared, threads);
    shape[CUDA_ROWS_ROWS] = rows;
    shape[CUDA_ROWS_COLS] = r->cols;
    launch[CUDA_ROWS_GRID] = grid;
    launch[CUDA_ROWS_BLOCK] = threads;
    launch[CUDA_ROWS_SMEM] = shared;
    launch[CUDA_ROWS_PER_SM] = per_sm > 1 ? per_sm : 1;
    return CDNN_STATUS_SUCCESS;
}

int32_t cuda_rows_value_count(const int64_t *values, int32_t launch_at)
{
    return launch_at + (values[launch_at + CUDA_ROWS_PER_SM] > 0 ? CUDA_ROWS_PER_SM + 1
                                                                  : CUDA_ROWS_PER_SM);
}

cdnn_status_t cuda_rows_block_shape(const sdk_kpack_kv_t *m, int32_t n, int64_t *per_block,
                                    int64_t *threads)
{
    cdnn_status_t st = kernel_metadata_int(m, n, "rows_per_block", 1, 64, per_block);
    return st == CDNN_STATUS_SUCCESS ? kernel_metadata_int(m, n, "threads", 32, 1024, threads)
                                     : st;
}

cdnn_status_t cuda_rows_geometry(const row_layout_t *r, cdnn_data_type_t x_type,
                                 int64_t staged_extra, int64_t staged_fallback,
                                 const sdk_kpack_kv_t *m, int32_t n, int64_t *shape,
                                 int64_t *launch)
{
    int64_t per_block = 0, threads = 0;
    cdnn_status_t st = cuda_rows_block_shape(m, n, &per_block, &threads);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    launch[CUDA_ROWS_PER_SM] = 0;
    if (kernel_metadata(m, n, "stages"))
        return staged_geometry(r, x_type == CDNN_DATA_TYPE_F32 ? 4 : 2, staged_extra,
                               staged_fallback, m, n, per_block, threads, shape, launch);
    if (kernel_metadata(m, n, "pieces"))
        return registers_geometry(r, x_type == CDNN_DATA_TYPE_F32 ? 4 : 2, m, n, per_block,
                                  threads, shape, launch);
    int64_t shared = per_block * r->cols * 4;
    if (shared > CUDA_ROWS_MAX_SHARED)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "rows of %lld elements need %lld bytes "
                        "of shared memory in this kernel; at most %d", (long long)r->cols,
                        (long long)shared, CUDA_ROWS_MAX_SHARED);
    int64_t rows = row_count(r), grid = (rows + per_block - 1) / per_block;
    if (grid > CUDA_ROWS_MAX_GRID)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "%lld rows need %lld blocks of this "
                        "kernel; a grid holds at most %lld", (long long)rows, (long long)grid,
                        (long long)CUDA_ROWS_MAX_GRID);
    shape[CUDA_ROWS_ROWS] = rows;
    shape[CUDA_ROWS_COLS] = r->cols;
    launch[CUDA_ROWS_GRID] = grid;
    launch[CUDA_ROWS_BLOCK] = threads;
    launch[CUDA_ROWS_SMEM] = shared;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cuda_rows_put_tensor(int64_t *v, const row_layout_t *r,
                                   const cdnn_tensor_view_t *t, const int64_t *strides)
{
    v[CUDA_ROWS_UID] = t->uid;
    v[CUDA_ROWS_TYPE] = t->type;
    v[CUDA_ROWS_COL_STRIDE] = strides[r->outer_rank];
    return row_fold_outer(r, strides, t->name, &v[CUDA_ROWS_ROW_STRIDE]);
}

void *cuda_rows_get_tensor(const int64_t *v, const cdnn_exec_args_t *args, int32_t *type,
                           int64_t *row_stride, int64_t *col_stride)
{
    *type = (int32_t)v[CUDA_ROWS_TYPE];
    *row_stride = v[CUDA_ROWS_ROW_STRIDE];
    *col_stride = v[CUDA_ROWS_COL_STRIDE];
    return launch_pointer(args, v[CUDA_ROWS_UID]);
}

cdnn_status_t cuda_rows_run(const launch_t *l, const cdnn_exec_args_t *args, int32_t launch_at,
                            void *params, cdnn_status_t st)
{
    const int64_t *v = l->values + launch_at;
    void *kernel_params[] = {params};
    unsigned grid[3] = {(unsigned)v[CUDA_ROWS_GRID], 1, 1};
    /* A staged kernel: no more blocks than stay resident (its groups loop). */
    if (l->value_count > launch_at + CUDA_ROWS_PER_SM && l->cuda->multiprocessors > 0) {
        int64_t resident = (int64_t)l->cuda->multiprocessors * v[CUDA_ROWS_PER_SM];
        if (resident > 0 && v[CUDA_ROWS_GRID] > resident)
            grid[0] = (unsigned)resident;
    }
    return st ? st
              : cuda_code_launch(l->cuda, grid, (unsigned)v[CUDA_ROWS_BLOCK],
                                 (unsigned)v[CUDA_ROWS_SMEM], args->stream, kernel_params);
}
