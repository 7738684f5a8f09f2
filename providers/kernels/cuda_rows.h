/*
 * cuda_rows.h -- the launch geometry the CUDA row kernels share (norm.cu,
 * softmax.cu: kernels/cuda/cuda_kernel.h): rows x cols, each row cached
 * in shared memory as f32, a block or a warp per row.
 */
#ifndef CDNN_KERNELS_CUDA_ROWS_H
#define CDNN_KERNELS_CUDA_ROWS_H

#include <cdnn/provider.h>
#include <cdnn_sdk/kpack.h>

#include "row_layout.h"

/* The smallest opt-in shared-memory limit of the devices the cubins are
 * built for (sm_80 and up). */
#define CUDA_ROWS_MAX_SHARED (99 * 1024)
/* The opt-in shared-memory limit of sm_90 (the staged kernels are sm_90a
 * alone), and what an SM has for all its blocks, 1 KiB a block reserved. */
#define CUDA_ROWS_MAX_SHARED_SM90 (227 * 1024)
#define CUDA_ROWS_SM_SHARED_SM90 (228 * 1024)
/* A grid's x dimension (the kernels take one block or row group per x). */
#define CUDA_ROWS_MAX_GRID 2147483647LL

/* Where the geometry goes in a handler's launch values. */
enum { CUDA_ROWS_ROWS, CUDA_ROWS_COLS };                    /* at shape */
enum { CUDA_ROWS_GRID, CUDA_ROWS_BLOCK, CUDA_ROWS_SMEM,      /* at launch */
       CUDA_ROWS_PER_SM }; /* staged kernels only: the blocks resident an SM */

/* Elements a thread of a register kernel holds per piece (rows_regs.cuh). */
#define CUDA_ROWS_PIECE 8

/** A row kernel's block shape from its metadata (m, n of them): rows_per_block
 * (1..64) and threads (32..1024); NOT_SUPPORTED naming the key when either is
 * missing or out of range. */
cdnn_status_t cuda_rows_block_shape(const sdk_kpack_kv_t *m, int32_t n, int64_t *per_block,
                                    int64_t *threads);

/**
 * The geometry for the rows of r on a kernel whose metadata (m, n of them)
 * says rows_per_block (1 for a block per row, 8 for a warp per row) and
 * threads: shape gets rows and cols; launch gets the grid ceil(rows /
 * rows_per_block), the block's threads and the dynamic shared memory
 * rows_per_block * cols * 4 bytes.  NOT_SUPPORTED and why when the
 * metadata is missing or out of range, that shared memory exceeds
 * CUDA_ROWS_MAX_SHARED or the grid CUDA_ROWS_MAX_GRID.
 *
 * A register kernel (rows_regs.cuh) says "pieces" too: each of the
 * threads / rows_per_block threads of a row (a warp, or the whole block
 * when rows_per_block is 1) holds that many pieces of CUDA_ROWS_PIECE
 * elements, so rows longer than their product are NOT_SUPPORTED; it takes
 * no dynamic shared memory.  A packed one (metadata packed 1) holds pieces
 * of 16 bytes of x (x_type f16/bf16: 8 elements, f32: 4) instead.
 *
 * A staged kernel (rows_staged.cu) says "stages" S: each of its
 * rows_per_block row groups (a warp, or threads / rows_per_block threads
 * of whole warps, at most 15 such groups a block) has S stages of shared
 * memory a row each, so
 * the dynamic shared memory is CDNN_CUDA_ROWS_STAGED_SMEM plus
 * staged_extra (the norm's parameters as f32) where that fits and costs
 * no block an SM, else plus staged_fallback (the parameters in their own
 * types; CDNN_CUDA_ROWS_STAGED_PARAM each; NOT_SUPPORTED past
 * CUDA_ROWS_MAX_SHARED_SM90), and launch gets one more value,
 * launch[CUDA_ROWS_PER_SM], the blocks an SM holds at that shared memory
 * (> 0; 0 for every other kernel): cuda_rows_run launches no more blocks
 * than the device's SMs hold, and the kernel's groups loop over the rows.
 * The caller's launch array has room for CUDA_ROWS_PER_SM + 1 values.
 */
cdnn_status_t cuda_rows_geometry(const row_layout_t *r, cdnn_data_type_t x_type,
                                 int64_t staged_extra, int64_t staged_fallback,
                                 const sdk_kpack_kv_t *m, int32_t n, int64_t *shape,
                                 int64_t *launch);

/** The launch values a handler keeps when its launch values end with the
 * launch at launch_at: CUDA_ROWS_PER_SM more for a staged kernel. */
int32_t cuda_rows_value_count(const int64_t *values, int32_t launch_at);

/* A rows x cols tensor in launch values: uid, type, row and col stride. */
enum { CUDA_ROWS_UID, CUDA_ROWS_TYPE, CUDA_ROWS_ROW_STRIDE, CUDA_ROWS_COL_STRIDE,
       CUDA_ROWS_TENSOR_VALUES };

/**
 * Tensor t, with strides in r (row_strides), at v; NOT_SUPPORTED naming it
 * when its rows do not fold into one stride (row_fold_outer).
 */
cdnn_status_t cuda_rows_put_tensor(int64_t *v, const row_layout_t *r,
                                   const cdnn_tensor_view_t *t, const int64_t *strides);

/** The tensor cuda_rows_put_tensor put at v: its pointer in args (NULL
 * when the variant pack lacks it), type and strides. */
void *cuda_rows_get_tensor(const int64_t *v, const cdnn_exec_args_t *args, int32_t *type,
                           int64_t *row_stride, int64_t *col_stride);

struct launch;

/**
 * Launch l's kernel with params (its one by-value parameter) on args'
 * stream, the grid, block and shared bytes cuda_rows_geometry put at
 * l->values + launch_at; st instead when the params failed.
 */
cdnn_status_t cuda_rows_run(const struct launch *l, const cdnn_exec_args_t *args,
                            int32_t launch_at, void *params, cdnn_status_t st);

#endif
