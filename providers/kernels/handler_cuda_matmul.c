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
 *
 * Kernels whose metadata says tensor_maps=1 (the Hopper ones,
 * matmul_wgmma.cu) take cdnn_cuda_matmul_tma_params_t: the same params and
 * two TMA tensor maps, which hold the operands' addresses and so are
 * encoded at each run (cuTensorMapEncodeTiled, a host call of about a
 * microsecond).  Their layouts are checked at derive (matmul_tma.h says
 * which they take; NOT_SUPPORTED otherwise) and their addresses at run;
 * their launch values end with tile_m and tile_n, for the maps' boxes.
 * They are persistent: their grid is (tiles, 1, 1) in the launch values,
 * and at run no more blocks than the device has multiprocessors.
 * Those whose metadata also says epilogue=tma_store store C by TMA from
 * shared memory and take cdnn_cuda_matmul_tma_store_params_t (a third map,
 * of C); they refuse what cdnn_cuda_matmul_tma_store_refusal refuses (C
 * not 16-bit row-major, n not a multiple of 8, a residual not 16-bit
 * row-major with even strides).  Their values
 * end with TMA_STORE_MARK.
 *
 * Kernels whose metadata has split_k = S (the small-m ones,
 * matmul_small_m.cu) compute each tile with a cluster of S blocks, each
 * over a split of k: their grid's x is S times the column tiles.  Their
 * max_m bounds the rows they are for: a larger m is refused, so that a
 * default build takes them only where they pay.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_kernel.h>
#include <matmul_tma.h>

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
    V_COUNT,
    /* tensor-map kernels only */
    V_TMA_TILE_M = V_COUNT, V_TMA_TILE_N,
    V_TMA_COUNT,
    /* tensor-map kernels with the TMA-store epilogue */
    V_TMA_STORE_MARK = V_TMA_COUNT,
    V_TMA_STORE_COUNT
};
/* Marks a TMA-store launch's values (one longer than the tensor-map ones). */
#define TMA_STORE_MARK 0x546d6153LL

#define MAX_GRID_YZ 65535
#define MAX_GRID_X 2147483647LL

/* ---- the graph, folded ------------------------------------------------------------------ */

typedef struct geometry {
    int64_t tile_m, tile_n, threads, smem;
    int64_t split_k; /* blocks (a cluster) a tile, each over a split of k */
    int64_t max_m;   /* the most rows the kernel is for (0: any) */
    int tensor_maps; /* the kernel takes cdnn_cuda_matmul_tma_params_t */
    int tma_store;   /* ... or, with epilogue=tma_store, the _store params */
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
    geo->split_k = 1, geo->max_m = 0;
    if (st == CDNN_STATUS_SUCCESS && kernel_metadata(m, n, "split_k"))
        st = kernel_metadata_int(m, n, "split_k", 1, 16, &geo->split_k);
    if (st == CDNN_STATUS_SUCCESS && kernel_metadata(m, n, "max_m"))
        st = kernel_metadata_int(m, n, "max_m", 1, INT32_MAX, &geo->max_m);
    const char *maps = kernel_metadata(m, n, "tensor_maps");
    geo->tensor_maps = maps && strcmp(maps, "1") == 0;
    const char *epilogue = kernel_metadata(m, n, "epilogue");
    geo->tma_store = geo->tensor_maps && epilogue && strcmp(epilogue, "tma_store") == 0;
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
    if (geo->max_m && p->m > geo->max_m)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the kernel is for at most %lld rows, "
                        "and the matmul has %lld", (long long)geo->max_m, (long long)p->m);
    int64_t rows = (p->m + geo->tile_m - 1) / geo->tile_m;
    int64_t columns = (p->n + geo->tile_n - 1) / geo->tile_n;
    int64_t grid_z = batch;
    if (columns > MAX_GRID_X / geo->split_k)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "%lld column tiles are more than a CUDA "
                        "grid holds", (long long)columns);
    columns *= geo->split_k;
    if (geo->tensor_maps && batch <= MAX_GRID_X / rows / columns) {
        /* persistent: every tile in x, capped at run */
        columns = rows * columns * batch, rows = 1, grid_z = 1;
    } else if (geo->tensor_maps)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "%lld tiles are more than a CUDA grid "
                        "holds", (long long)(batch * rows * columns));
    if (grid_z > MAX_GRID_YZ || rows > MAX_GRID_YZ)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "a batch of %lld or %lld row tiles is "
                        "more than a CUDA grid holds (%d)", (long long)batch,
                        (long long)rows, MAX_GRID_YZ);
    v[V_PARALLELISM] = 1;
    v[V_BATCH] = batch;
    v[V_M] = p->m;
    v[V_N] = p->n;
    v[V_K] = p->k;
    v[V_ACTIVATION] = p->activation;
    v[V_GRID_X] = columns;
    v[V_GRID_Y] = rows;
    v[V_GRID_Z] = grid_z;
    v[V_BLOCK] = geo->threads;
    v[V_SMEM] = geo->smem;
    return CDNN_STATUS_SUCCESS;
}

/* The params a launch will pass, but for the pointers (NULL; the
 * residual's a non-NULL stand-in where there is one). */
static void params_layout(const int64_t *v, cdnn_cuda_matmul_params_t *p)
{
    memset(p, 0, sizeof *p);
    p->batch = v[V_BATCH], p->m = v[V_M], p->n = v[V_N], p->k = v[V_K];
    p->a_type = (int32_t)v[V_A + O_TYPE], p->b_type = (int32_t)v[V_B + O_TYPE];
    p->c_type = (int32_t)v[V_C + O_TYPE];
    p->a_batch_stride = v[V_A + O_BATCH_STRIDE], p->a_row_stride = v[V_A + O_ROW_STRIDE];
    p->a_col_stride = v[V_A + O_COL_STRIDE];
    p->b_batch_stride = v[V_B + O_BATCH_STRIDE], p->b_row_stride = v[V_B + O_ROW_STRIDE];
    p->b_col_stride = v[V_B + O_COL_STRIDE];
    p->c_batch_stride = v[V_C + O_BATCH_STRIDE], p->c_row_stride = v[V_C + O_ROW_STRIDE];
    p->c_col_stride = v[V_C + O_COL_STRIDE];
    if (v[V_RESIDUAL_PRESENT]) {
        p->residual = p;
        p->res_type = (int32_t)v[V_RESIDUAL + O_TYPE];
        p->res_batch_stride = v[V_RESIDUAL + O_BATCH_STRIDE];
        p->res_row_stride = v[V_RESIDUAL + O_ROW_STRIDE];
        p->res_col_stride = v[V_RESIDUAL + O_COL_STRIDE];
    }
}

/* Tensor-map kernels: the layout must suit TMA (and the TMA-store
 * epilogue, where the kernel has it); the tile goes last. */
static cdnn_status_t put_tensor_maps(int64_t *v, const geometry_t *geo)
{
    cdnn_cuda_matmul_params_t p;
    params_layout(v, &p);
    const char *why = geo->tma_store ? cdnn_cuda_matmul_tma_store_refusal(&p, 0)
                                     : cdnn_cuda_matmul_tma_refusal(&p, 0);
    if (why)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "%s", why);
    v[V_TMA_TILE_M] = geo->tile_m;
    v[V_TMA_TILE_N] = geo->tile_n;
    if (geo->tma_store)
        v[V_TMA_STORE_MARK] = TMA_STORE_MARK;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t derive_into(int64_t *v, const cdnn_graph_view_t *g,
                                 const sdk_kpack_kv_t *m, int32_t n, int32_t *count)
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
    if (st == CDNN_STATUS_SUCCESS)
        st = put_launch(v, &p, &geo);
    *count = geo.tma_store ? V_TMA_STORE_COUNT : geo.tensor_maps ? V_TMA_COUNT : V_COUNT;
    return st == CDNN_STATUS_SUCCESS && geo.tensor_maps ? put_tensor_maps(v, &geo) : st;
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)threads; /* a grid, not host threads */
    int64_t *v = calloc(V_TMA_STORE_COUNT, sizeof *v);
    if (!v)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = derive_into(v, g, metadata, metadata_count, count);
    if (st != CDNN_STATUS_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
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

/* A tensor-map kernel's params: the maps encoded for this run's pointers
 * (with store, also C's: ts is then the kernel's params, else ts->tma). */
static cdnn_status_t tma_params_of(const launch_t *l, const cdnn_exec_args_t *args,
                                   cdnn_cuda_matmul_tma_store_params_t *ts, int store)
{
    const int64_t *v = l->values;
    cdnn_cuda_matmul_tma_params_t *t = &ts->tma;
    memset(ts, 0, sizeof *ts);
    cdnn_status_t st = params_of(v, args, &t->matmul);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const char *why = store ? cdnn_cuda_matmul_tma_store_refusal(&t->matmul, 1)
                            : cdnn_cuda_matmul_tma_refusal(&t->matmul, 1);
    if (why)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "kernel %s: %s", l->kernel_id, why);
    /* The driver refuses to encode without a current context (CUDA error
     * 201), and the calling thread need not have one: it is the device's
     * only while the launch holds it. */
    if ((st = cuda_code_enter(l->cuda)) != CDNN_STATUS_SUCCESS)
        return st;
    const int tile_m = (int)v[V_TMA_TILE_M], tile_n = (int)v[V_TMA_TILE_N];
    int r = store ? cdnn_cuda_matmul_tma_store_encode(ts, tile_m, tile_n,
                                                      l->cuda->cu->tensor_map_encode_tiled)
                  : cdnn_cuda_matmul_tma_encode(t, tile_m, tile_n,
                                                l->cuda->cu->tensor_map_encode_tiled);
    cuda_code_leave(l->cuda);
    return r == SDK_CU_SUCCESS
               ? CDNN_STATUS_SUCCESS
               : cuda_failed(l->cuda, CDNN_STATUS_EXECUTION_FAILED, r, "cuTensorMapEncodeTiled");
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    /* One of the three, by the kernel's signature: the plain params, them
     * followed by the operands' tensor maps, or by those and C's. */
    cdnn_cuda_matmul_tma_store_params_t t;
    const int64_t *v = l->values;
    void *params[] = {&t.tma.matmul};
    const int store =
        l->value_count == V_TMA_STORE_COUNT && v[V_TMA_STORE_MARK] == TMA_STORE_MARK;
    const int tma = l->value_count == V_TMA_COUNT || store;
    cdnn_status_t st = tma ? tma_params_of(l, args, &t, store) : params_of(v, args, &t.tma.matmul);
    unsigned grid[3] = {(unsigned)v[V_GRID_X], (unsigned)v[V_GRID_Y], (unsigned)v[V_GRID_Z]};
    if (tma && l->cuda->multiprocessors > 0 &&
        grid[0] > (unsigned)l->cuda->multiprocessors)
        grid[0] = (unsigned)l->cuda->multiprocessors; /* persistent blocks */
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
