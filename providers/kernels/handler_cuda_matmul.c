/*
 * handler_cuda_matmul.c -- dispatch handler cuda_matmul v1: launches
 * "cuda-matmul-v1" kernels (kernels/cuda/cuda_kernel.h) for a matmul with
 * its fused epilogue (matmul_pattern.h) on the handle's stream.
 *
 * The kernels take one batch stride per operand and a bias row: a graph's
 * batch dims must fold into one stride for each operand, and its bias must
 * broadcast over the batch and the rows.  The kernel's metadata says its
 * element type (dtype: f32, f16, bf16, which a and b must be) and launch
 * geometry (tile_m, tile_n, threads, smem): grid (ceil(n / tile_n),
 * ceil(m / tile_m), batch), block (threads), smem bytes of dynamic shared
 * memory.
 *
 * Launch values: 1 (the launch's parallelism), batch, m, n, k, a, b and c
 * each as uid, type, batch, row and column stride; the bias as present,
 * uid, type, stride; the residual as present, uid, type and its three
 * strides; the activation; grid x, y, z, block and smem.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_kernel.h>

#include <cdnn_sdk/error.h>

#include "cuda_code.h"
#include "handlers.h"
#include "matmul_pattern.h"

enum { O_UID, O_TYPE, O_BATCH_STRIDE, O_ROW_STRIDE, O_COL_STRIDE, O_VALUES };
enum {
    V_PARALLELISM = LAUNCH_THREADS,
    V_BATCH, V_M, V_N, V_K,
    V_A, V_B = V_A + O_VALUES, V_C = V_B + O_VALUES,
    V_BIAS_PRESENT = V_C + O_VALUES, V_BIAS_UID, V_BIAS_TYPE, V_BIAS_STRIDE,
    V_RESIDUAL_PRESENT, V_RESIDUAL,
    V_ACTIVATION = V_RESIDUAL + O_VALUES,
    V_GRID_X, V_GRID_Y, V_GRID_Z, V_BLOCK, V_SMEM,
    V_COUNT
};

#define MAX_GRID_YZ 65535

/* ---- the graph, folded ------------------------------------------------------------------ */

typedef struct geometry {
    int64_t tile_m, tile_n, threads, smem;
} geometry_t;

static cdnn_status_t geometry_of(const sdk_kpack_kv_t *m, int32_t n, geometry_t *geo)
{
    cdnn_status_t st = kernel_metadata_int(m, n, "tile_m", 1, 1024, &geo->tile_m);
    if (st == CDNN_STATUS_SUCCESS)
        st = kernel_metadata_int(m, n, "tile_n", 1, 1024, &geo->tile_n);
    if (st == CDNN_STATUS_SUCCESS)
        st = kernel_metadata_int(m, n, "threads", 32, 1024, &geo->threads);
    if (st == CDNN_STATUS_SUCCESS)
        st = kernel_metadata_int(m, n, "smem", 0, 1 << 20, &geo->smem);
    return st;
}

/* op's batch strides, by the result's batch dims, as one stride: element b
 * of the flattened batch at b * stride. */
static cdnn_status_t fold_batch(const cdnn_graph_view_t *g, const matmul_pattern_t *p,
                                const matmul_operand_t *op, int64_t *stride)
{
    int64_t inner = 0;
    *stride = 0;
    for (int32_t d = p->batch_rank - 1; d >= 0; d--) {
        if (p->batch_dims[d] == 1)
            continue;
        if (!inner)
            *stride = op->strides[d];
        else if (op->strides[d] != *stride * inner)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the batch dims of '%s' do not fold "
                            "into one stride (the CUDA kernels take one)",
                            g->tensors[op->tensor].name);
        inner = inner ? inner * p->batch_dims[d] : p->batch_dims[d];
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t put_operand(int64_t *v, const cdnn_graph_view_t *g,
                                 const matmul_pattern_t *p, const matmul_operand_t *op)
{
    int32_t r = p->batch_rank;
    v[O_UID] = g->tensors[op->tensor].uid;
    v[O_TYPE] = g->tensors[op->tensor].type;
    v[O_ROW_STRIDE] = op->strides[r];
    v[O_COL_STRIDE] = op->strides[r + 1];
    return fold_batch(g, p, op, &v[O_BATCH_STRIDE]);
}

/* The bias: a row, the same for every batch and row of c. */
static cdnn_status_t put_bias(int64_t *v, const cdnn_graph_view_t *g,
                              const matmul_pattern_t *p)
{
    const matmul_operand_t *bias = &p->bias;
    if (bias->tensor < 0)
        return CDNN_STATUS_SUCCESS;
    for (int32_t d = 0; d <= p->batch_rank; d++)
        if (bias->strides[d] != 0)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the bias '%s' varies over the batch "
                            "or the rows; the CUDA kernels add a row",
                            g->tensors[bias->tensor].name);
    v[V_BIAS_PRESENT] = 1;
    v[V_BIAS_UID] = g->tensors[bias->tensor].uid;
    v[V_BIAS_TYPE] = g->tensors[bias->tensor].type;
    v[V_BIAS_STRIDE] = bias->strides[p->batch_rank + 1];
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_types(const cdnn_graph_view_t *g, const matmul_pattern_t *p,
                                 const sdk_kpack_kv_t *m, int32_t n)
{
    const char *dtype = kernel_metadata(m, n, "dtype");
    const char *a = cdnn_data_type_name(g->tensors[p->a.tensor].type);
    const char *b = cdnn_data_type_name(g->tensors[p->b.tensor].type);
    if (!dtype || strcmp(a, dtype) != 0 || strcmp(b, dtype) != 0)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the kernel multiplies %s, and a and b "
                        "are %s and %s", dtype ? dtype : "(no dtype in its metadata)", a, b);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t put_launch(int64_t *v, const matmul_pattern_t *p, const geometry_t *geo)
{
    int64_t batch = 1;
    for (int32_t d = 0; d < p->batch_rank; d++)
        batch *= p->batch_dims[d];
    int64_t rows = (p->m + geo->tile_m - 1) / geo->tile_m;
    if (batch > MAX_GRID_YZ || rows > MAX_GRID_YZ)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "a batch of %lld or %lld row tiles is "
                        "more than a CUDA grid holds (%d)", (long long)batch,
                        (long long)rows, MAX_GRID_YZ);
    v[V_PARALLELISM] = 1;
    v[V_BATCH] = batch;
    v[V_M] = p->m;
    v[V_N] = p->n;
    v[V_K] = p->k;
    v[V_ACTIVATION] = p->activation;
    v[V_GRID_X] = (p->n + geo->tile_n - 1) / geo->tile_n;
    v[V_GRID_Y] = rows;
    v[V_GRID_Z] = batch;
    v[V_BLOCK] = geo->threads;
    v[V_SMEM] = geo->smem;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t derive_into(int64_t *v, const cdnn_graph_view_t *g,
                                 const sdk_kpack_kv_t *m, int32_t n)
{
    matmul_pattern_t p;
    geometry_t geo;
    cdnn_status_t st = matmul_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = geometry_of(m, n, &geo);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_types(g, &p, m, n);
    if (st == CDNN_STATUS_SUCCESS)
        st = put_operand(v + V_A, g, &p, &p.a);
    if (st == CDNN_STATUS_SUCCESS)
        st = put_operand(v + V_B, g, &p, &p.b);
    if (st == CDNN_STATUS_SUCCESS)
        st = put_operand(v + V_C, g, &p, &p.c);
    if (st == CDNN_STATUS_SUCCESS)
        st = put_bias(v, g, &p);
    if (st == CDNN_STATUS_SUCCESS && p.residual.tensor >= 0) {
        v[V_RESIDUAL_PRESENT] = 1;
        st = put_operand(v + V_RESIDUAL, g, &p, &p.residual);
    }
    return st == CDNN_STATUS_SUCCESS ? put_launch(v, &p, &geo) : st;
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)threads; /* a grid, not host threads */
    int64_t *v = calloc(V_COUNT, sizeof *v);
    if (!v)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = derive_into(v, g, metadata, metadata_count);
    if (st != CDNN_STATUS_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
    *count = V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

/* ---- launching ----------------------------------------------------------------------------- */

static cdnn_status_t operand(const int64_t *v, const cdnn_exec_args_t *args, const void **ptr,
                             int64_t *strides, int32_t *type)
{
    *ptr = launch_pointer(args, v[O_UID]);
    *type = (int32_t)v[O_TYPE];
    strides[0] = v[O_BATCH_STRIDE];
    strides[1] = v[O_ROW_STRIDE];
    strides[2] = v[O_COL_STRIDE];
    return *ptr ? CDNN_STATUS_SUCCESS
                : sdk_fail(CDNN_STATUS_BAD_PARAM, "the variant pack lacks tensor uid %lld",
                           (long long)v[O_UID]);
}

static cdnn_status_t params_of(const int64_t *v, const cdnn_exec_args_t *args,
                               cdnn_cuda_matmul_params_t *p)
{
    int64_t s[3] = {0};
    const void *c = NULL;
    memset(p, 0, sizeof *p);
    p->batch = v[V_BATCH], p->m = v[V_M], p->n = v[V_N], p->k = v[V_K];
    p->activation = (int32_t)v[V_ACTIVATION];
    cdnn_status_t st = operand(v + V_A, args, &p->a, s, &p->a_type);
    p->a_batch_stride = s[0], p->a_row_stride = s[1], p->a_col_stride = s[2];
    if (st == CDNN_STATUS_SUCCESS)
        st = operand(v + V_B, args, &p->b, s, &p->b_type);
    p->b_batch_stride = s[0], p->b_row_stride = s[1], p->b_col_stride = s[2];
    if (st == CDNN_STATUS_SUCCESS)
        st = operand(v + V_C, args, &c, s, &p->c_type);
    p->c = (void *)c;
    p->c_batch_stride = s[0], p->c_row_stride = s[1], p->c_col_stride = s[2];
    if (st == CDNN_STATUS_SUCCESS && v[V_RESIDUAL_PRESENT])
        st = operand(v + V_RESIDUAL, args, &p->residual, s, &p->res_type);
    p->res_batch_stride = s[0], p->res_row_stride = s[1], p->res_col_stride = s[2];
    p->bias_type = p->c_type;
    if (st == CDNN_STATUS_SUCCESS && v[V_BIAS_PRESENT]) {
        p->bias = launch_pointer(args, v[V_BIAS_UID]);
        p->bias_type = (int32_t)v[V_BIAS_TYPE];
        p->bias_stride = v[V_BIAS_STRIDE];
        if (!p->bias)
            st = sdk_fail(CDNN_STATUS_BAD_PARAM, "the variant pack lacks tensor uid %lld",
                          (long long)v[V_BIAS_UID]);
    }
    if (!v[V_RESIDUAL_PRESENT])
        p->res_type = p->c_type;
    return st;
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_cuda_matmul_params_t p;
    const int64_t *v = l->values;
    void *params[] = {&p};
    cdnn_status_t st = params_of(v, args, &p);
    const unsigned grid[3] = {(unsigned)v[V_GRID_X], (unsigned)v[V_GRID_Y],
                              (unsigned)v[V_GRID_Z]};
    return st ? st
              : cuda_code_launch(l->cuda, grid, (unsigned)v[V_BLOCK], (unsigned)v[V_SMEM],
                                 args->stream, params);
}

static uint32_t shared_bytes(const int64_t *values)
{
    return (uint32_t)values[V_SMEM];
}

const dispatch_handler_t cuda_matmul_handler_v1 = {
    .name = "cuda_matmul",
    .version = 1,
    .signature = "cuda-matmul-v1",
    .kind = KERNEL_KIND_CUDA,
    .derive = derive,
    .shared_bytes = shared_bytes,
    .workspace = launch_no_workspace,
    .run = run,
};
