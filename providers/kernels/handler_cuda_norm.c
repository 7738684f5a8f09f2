/*
 * handler_cuda_norm.c -- dispatch handler cuda_norm v1: launches
 * "cuda-norm-v1" kernels (kernels/cuda/cuda_kernel.h) for one layer-norm
 * or RMS-norm node (norm_pattern.h) on the handle's stream.
 *
 * The kernels take rows x cols with one row stride: the norm's outer dims
 * must fold into one stride for x and y, and it may not ask for the mean
 * or the inverse deviation (the kernels write neither).  The kernel's
 * metadata says its geometry: rows_per_block (1 for a block per row, 8
 * for a warp per row) and threads; the grid is ceil(rows /
 * rows_per_block), the dynamic shared memory rows_per_block * cols * 4
 * bytes, which must stay within CUDA_ROWS_MAX_SHARED (cuda_rows.h, shared
 * with the softmax handler).
 *
 * Launch values: 1 (the launch's parallelism), kind, rows, cols, epsilon's
 * f32 bits, x and y each as uid, type, row and col stride, scale and shift
 * each as present, uid, type, stride, then grid, block and shared bytes.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_kernel.h>

#include <cdnn_sdk/error.h>

#include "cuda_rows.h"
#include "handlers.h"
#include "norm_pattern.h"

enum { P_PRESENT, P_UID, P_TYPE, P_STRIDE, P_VALUES };
enum {
    V_PARALLELISM = LAUNCH_THREADS,
    V_KIND, V_ROWS, V_COLS, V_EPSILON,
    V_X, V_Y = V_X + CUDA_ROWS_TENSOR_VALUES, /* x and y as cuda_rows.h lays them out */
    V_SCALE = V_Y + CUDA_ROWS_TENSOR_VALUES, V_SHIFT = V_SCALE + P_VALUES,
    V_GRID = V_SHIFT + P_VALUES, V_BLOCK, V_SMEM,
    V_COUNT
};

/* ---- deriving the launch ---------------------------------------------------------------- */

static void put_param(int64_t *v, const cdnn_graph_view_t *g, const norm_pattern_t *p, int role)
{
    if (p->tensors[role] < 0)
        return;
    v[P_PRESENT] = 1;
    v[P_UID] = g->tensors[p->tensors[role]].uid;
    v[P_TYPE] = g->tensors[p->tensors[role]].type;
    v[P_STRIDE] = p->strides[role][p->rows.outer_rank];
}

static cdnn_status_t derive_into(int64_t *v, const cdnn_graph_view_t *g,
                                 const sdk_kpack_kv_t *m, int32_t n)
{
    norm_pattern_t p;
    cdnn_status_t st = norm_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS &&
        (p.tensors[NORM_MEAN] >= 0 || p.tensors[NORM_INV_STD] >= 0))
        st = sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph asks for the norm's statistics, "
                      "which the CUDA kernels do not write");
    if (st == CDNN_STATUS_SUCCESS)
        st = cuda_rows_put_tensor(v + V_X, &p.rows, &g->tensors[p.tensors[NORM_X]],
                                  p.strides[NORM_X]);
    if (st == CDNN_STATUS_SUCCESS)
        st = cuda_rows_put_tensor(v + V_Y, &p.rows, &g->tensors[p.tensors[NORM_Y]],
                                  p.strides[NORM_Y]);
    /* A staged kernel keeps the scale and shift in shared memory too: as
     * f32 where they fit, else in their own types. */
    int64_t as_f32 = 0, own = 0;
    int64_t x_bytes = st == CDNN_STATUS_SUCCESS &&
                      g->tensors[p.tensors[NORM_X]].type == CDNN_DATA_TYPE_F32 ? 4 : 2;
    for (int role = NORM_SCALE; st == CDNN_STATUS_SUCCESS && role <= NORM_BIAS; role++)
        if (p.tensors[role] >= 0) {
            as_f32 += CDNN_CUDA_ROWS_STAGED_PARAM(p.rows.cols, x_bytes, 4);
            own += CDNN_CUDA_ROWS_STAGED_PARAM(
                p.rows.cols, x_bytes,
                g->tensors[p.tensors[role]].type == CDNN_DATA_TYPE_F32 ? 4 : 2);
        }
    if (st == CDNN_STATUS_SUCCESS)
        st = cuda_rows_geometry(&p.rows, g->tensors[p.tensors[NORM_X]].type, as_f32, own, m,
                                n, v + V_ROWS, v + V_GRID);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    float epsilon = (float)p.epsilon;
    int32_t bits;
    memcpy(&bits, &epsilon, sizeof bits);
    v[V_PARALLELISM] = 1;
    v[V_KIND] = p.layer ? CDNN_CUDA_NORM_LAYER : CDNN_CUDA_NORM_RMS;
    v[V_EPSILON] = bits;
    put_param(v + V_SCALE, g, &p, NORM_SCALE);
    put_param(v + V_SHIFT, g, &p, NORM_BIAS);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)threads; /* a grid, not host threads */
    int64_t *v = calloc(V_COUNT + 1, sizeof *v); /* + a staged kernel's blocks an SM */
    if (!v)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = derive_into(v, g, metadata, metadata_count);
    if (st != CDNN_STATUS_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
    *count = cuda_rows_value_count(v, V_GRID);
    return CDNN_STATUS_SUCCESS;
}

/* ---- launching ------------------------------------------------------------------------------ */

static const void *param(const int64_t *v, const cdnn_exec_args_t *args, int64_t *stride,
                         int32_t *type, int *missing)
{
    const void *ptr = v[P_PRESENT] ? launch_pointer(args, v[P_UID]) : NULL;
    *stride = v[P_STRIDE];
    *type = v[P_PRESENT] ? (int32_t)v[P_TYPE] : CDNN_CUDA_F32;
    *missing |= v[P_PRESENT] && !ptr;
    return ptr;
}

static cdnn_status_t params_of(const int64_t *v, const cdnn_exec_args_t *args,
                               cdnn_cuda_norm_params_t *p)
{
    int32_t bits = (int32_t)v[V_EPSILON];
    int missing = 0;
    memset(p, 0, sizeof *p);
    p->rows = v[V_ROWS];
    p->cols = v[V_COLS];
    p->kind = (int32_t)v[V_KIND];
    memcpy(&p->epsilon, &bits, sizeof bits);
    p->x = cuda_rows_get_tensor(v + V_X, args, &p->x_type, &p->x_row_stride,
                                &p->x_col_stride);
    p->y = cuda_rows_get_tensor(v + V_Y, args, &p->y_type, &p->y_row_stride,
                                &p->y_col_stride);
    p->scale = param(v + V_SCALE, args, &p->scale_stride, &p->scale_type, &missing);
    p->shift = param(v + V_SHIFT, args, &p->shift_stride, &p->shift_type, &missing);
    if (missing || !p->x || !p->y)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "the variant pack lacks a tensor the norm "
                        "reads or writes");
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_cuda_norm_params_t p;
    cdnn_status_t st = params_of(l->values, args, &p);
    return cuda_rows_run(l, args, V_GRID, &p, st);
}

static uint32_t shared_bytes(const int64_t *values)
{
    return (uint32_t)values[V_SMEM];
}

const dispatch_handler_t cuda_norm_handler_v1 = {
    .name = "cuda_norm",
    .version = 1,
    .signature = "cuda-norm-v1",
    .kind = KERNEL_KIND_CUDA,
    .derive = derive,
    .shared_bytes = shared_bytes,
    .workspace = launch_no_workspace,
    .run = run,
};
