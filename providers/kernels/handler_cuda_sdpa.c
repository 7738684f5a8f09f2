/*
 * handler_cuda_sdpa.c -- dispatch handler cuda_sdpa v1: launches the
 * "cuda-sdpa-v1" kernel (kernels/cuda/cuda_kernel.h) for one sdpa_fwd node
 * (sdpa_pattern.h) on the handle's stream.
 *
 * The graph's q, k, v and o are [B, H, S, D] views of any strides, which
 * the kernel takes as they are ({batch, head, seq, feature}); k and v have
 * q's heads (kv_heads = heads); causal is top-left (causal_offset 0).  The
 * geometry is the signature's: grid (ceil(Sq / 8), H, B), block 256,
 * CDNN_CUDA_SDPA_SMEM(D, Dv) bytes of dynamic shared memory.
 *
 * Launch values: 1 (the launch's parallelism); batch, heads, q_len,
 * kv_len, head_dim, value_dim; the scale's f32 bits; causal; q, k, v and o
 * each as uid, type and four strides; grid x, y, z, block and smem.
 *
 * Kernels whose metadata says tensor_maps=1 (the Hopper flash attention,
 * sdpa_wgmma.cu) take cdnn_cuda_sdpa_tma_params_t: the same params and
 * tensor maps of q, k and v, which hold the addresses and so are encoded
 * at each run.  Their metadata names the dtype and head_dim they take and
 * their threads and smem; a graph whose types, head sizes or strides they
 * cannot take (sdpa_tma.h says which) is NOT_SUPPORTED at derive, so that
 * the engine's next candidate, the SIMT kernel, runs it.  Their launch
 * values end with the dtype and the head dim; their grid is
 * sdpa_tma.h's.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_kernel.h>
#include <sdpa_tma.h>

#include <cdnn_sdk/error.h>

#include "cuda_code.h"
#include "handlers.h"
#include "sdpa_pattern.h"

enum { T_UID, T_TYPE, T_STRIDES, T_VALUES = T_STRIDES + 4 };
enum {
    V_PARALLELISM = LAUNCH_THREADS,
    V_BATCH, V_HEADS, V_Q_LEN, V_KV_LEN, V_HEAD_DIM, V_VALUE_DIM, V_SCALE, V_CAUSAL,
    V_TENSORS, /* q, k, v, o: T_VALUES each */
    V_GRID_X = V_TENSORS + SDPA_ROLES * T_VALUES, V_GRID_Y, V_GRID_Z, V_BLOCK, V_SMEM,
    V_COUNT,
    /* tensor-map kernels only */
    V_TMA_DTYPE = V_COUNT, V_TMA_HEAD_DIM,
    V_TMA_COUNT
};

#define MAX_GRID_YZ 65535
#define MAX_GRID_X 2147483647LL

/* ---- deriving the launch ---------------------------------------------------------------- */

static cdnn_status_t put_launch(int64_t *v, const sdpa_pattern_t *p)
{
    int64_t blocks = (p->q_len + CDNN_CUDA_SDPA_ROWS_PER_BLOCK - 1) / CDNN_CUDA_SDPA_ROWS_PER_BLOCK;
    if (p->batch > MAX_GRID_YZ || p->heads > MAX_GRID_YZ || blocks > MAX_GRID_X)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "a batch of %lld, %lld heads or %lld "
                        "query rows are more than the attention kernel's grid holds",
                        (long long)p->batch, (long long)p->heads, (long long)p->q_len);
    v[V_GRID_X] = blocks;
    v[V_GRID_Y] = p->heads;
    v[V_GRID_Z] = p->batch;
    v[V_BLOCK] = 32 * CDNN_CUDA_SDPA_ROWS_PER_BLOCK;
    v[V_SMEM] = CDNN_CUDA_SDPA_SMEM(p->head_dim, p->value_dim);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t derive_into(int64_t *v, const cdnn_graph_view_t *g)
{
    sdpa_pattern_t p;
    cdnn_status_t st = sdpa_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = put_launch(v, &p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    float scale = (float)p.scale;
    int32_t bits;
    memcpy(&bits, &scale, sizeof bits);
    v[V_PARALLELISM] = 1;
    v[V_BATCH] = p.batch, v[V_HEADS] = p.heads;
    v[V_Q_LEN] = p.q_len, v[V_KV_LEN] = p.kv_len;
    v[V_HEAD_DIM] = p.head_dim, v[V_VALUE_DIM] = p.value_dim;
    v[V_SCALE] = bits;
    v[V_CAUSAL] = p.causal;
    for (int role = 0; role < SDPA_ROLES; role++) {
        const cdnn_tensor_view_t *t = &g->tensors[p.tensors[role]];
        int64_t *tv = v + V_TENSORS + role * T_VALUES;
        tv[T_UID] = t->uid;
        tv[T_TYPE] = t->type;
        /* A dim of 1 is read at index 0 only: its stride does not matter. */
        for (int d = 0; d < 4; d++)
            tv[T_STRIDES + d] = t->dims[d] == 1 ? 0 : t->strides[d];
    }
    return CDNN_STATUS_SUCCESS;
}

/* The params as far as derive knows them: sizes, types and strides. */
static void params_layout(const int64_t *v, cdnn_cuda_sdpa_params_t *p)
{
    const int64_t *t = v + V_TENSORS;
    memset(p, 0, sizeof *p);
    p->batch = v[V_BATCH], p->heads = v[V_HEADS], p->kv_heads = v[V_HEADS];
    p->q_len = v[V_Q_LEN], p->kv_len = v[V_KV_LEN];
    p->head_dim = v[V_HEAD_DIM], p->value_dim = v[V_VALUE_DIM];
    p->causal = (int32_t)v[V_CAUSAL];
    p->q_type = (int32_t)t[SDPA_Q * T_VALUES + T_TYPE];
    p->k_type = (int32_t)t[SDPA_K * T_VALUES + T_TYPE];
    p->v_type = (int32_t)t[SDPA_V * T_VALUES + T_TYPE];
    p->o_type = (int32_t)t[SDPA_O * T_VALUES + T_TYPE];
    memcpy(p->q_strides, t + SDPA_Q * T_VALUES + T_STRIDES, sizeof p->q_strides);
    memcpy(p->k_strides, t + SDPA_K * T_VALUES + T_STRIDES, sizeof p->k_strides);
    memcpy(p->v_strides, t + SDPA_V * T_VALUES + T_STRIDES, sizeof p->v_strides);
    memcpy(p->o_strides, t + SDPA_O * T_VALUES + T_STRIDES, sizeof p->o_strides);
}

/* A tensor-map kernel: its dtype, head dim and layouts must suit the
 * graph; its grid and geometry replace the SIMT kernel's. */
static cdnn_status_t put_tensor_maps(int64_t *v, const sdk_kpack_kv_t *m, int32_t n)
{
    const char *dtype = kernel_metadata(m, n, "dtype");
    int64_t head_dim = 0, threads = 0, smem = 0;
    cdnn_status_t st = kernel_metadata_int(m, n, "head_dim", 1, SDPA_MAX_HEAD_DIM, &head_dim);
    if (st == CDNN_STATUS_SUCCESS)
        st = kernel_metadata_int(m, n, "threads", 32, 1024, &threads);
    if (st == CDNN_STATUS_SUCCESS)
        st = kernel_metadata_int(m, n, "smem", 0, 1 << 20, &smem);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int32_t type = !dtype ? 0
                   : strcmp(dtype, "bf16") == 0 ? CDNN_CUDA_BF16
                   : strcmp(dtype, "f16") == 0  ? CDNN_CUDA_F16
                                                : 0;
    if (!type)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the kernel's metadata names no dtype "
                        "it takes (bf16, f16)");
    cdnn_cuda_sdpa_params_t p;
    params_layout(v, &p);
    const char *why = cdnn_cuda_sdpa_tma_refusal(&p, type, head_dim, 0);
    if (why)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "%s", why);
    v[V_GRID_X] = cdnn_cuda_sdpa_wgmma_blocks(&p);
    v[V_GRID_Y] = 1;
    v[V_GRID_Z] = 1;
    v[V_BLOCK] = threads;
    v[V_SMEM] = smem;
    v[V_TMA_DTYPE] = type;
    v[V_TMA_HEAD_DIM] = head_dim;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)threads; /* a grid, not host threads */
    const char *maps = kernel_metadata(metadata, metadata_count, "tensor_maps");
    const int tensor_maps = maps && strcmp(maps, "1") == 0;
    int64_t *v = calloc(V_TMA_COUNT, sizeof *v);
    if (!v)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = derive_into(v, g);
    if (st == CDNN_STATUS_SUCCESS && tensor_maps)
        st = put_tensor_maps(v, metadata, metadata_count);
    if (st != CDNN_STATUS_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
    *count = tensor_maps ? V_TMA_COUNT : V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

/* ---- launching ------------------------------------------------------------------------------ */

static const void *tensor(const int64_t *v, const cdnn_exec_args_t *args, int32_t *type,
                          int64_t strides[4])
{
    *type = (int32_t)v[T_TYPE];
    memcpy(strides, v + T_STRIDES, 4 * sizeof *strides);
    return launch_pointer(args, v[T_UID]);
}

static cdnn_status_t params_of(const int64_t *v, const cdnn_exec_args_t *args,
                               cdnn_cuda_sdpa_params_t *p)
{
    const int64_t *t = v + V_TENSORS;
    int32_t bits = (int32_t)v[V_SCALE];
    memset(p, 0, sizeof *p);
    p->batch = v[V_BATCH], p->heads = v[V_HEADS], p->kv_heads = v[V_HEADS];
    p->q_len = v[V_Q_LEN], p->kv_len = v[V_KV_LEN];
    p->head_dim = v[V_HEAD_DIM], p->value_dim = v[V_VALUE_DIM];
    memcpy(&p->scale, &bits, sizeof bits);
    p->causal = (int32_t)v[V_CAUSAL];
    p->causal_offset = 0;
    p->q = tensor(t + SDPA_Q * T_VALUES, args, &p->q_type, p->q_strides);
    p->k = tensor(t + SDPA_K * T_VALUES, args, &p->k_type, p->k_strides);
    p->v = tensor(t + SDPA_V * T_VALUES, args, &p->v_type, p->v_strides);
    p->o = (void *)tensor(t + SDPA_O * T_VALUES, args, &p->o_type, p->o_strides);
    if (!p->q || !p->k || !p->v || !p->o)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "the variant pack lacks a tensor the "
                        "attention reads or writes");
    return CDNN_STATUS_SUCCESS;
}

/* A tensor-map kernel's params: the maps encoded for this run's pointers. */
static cdnn_status_t tma_params_of(const launch_t *l, const cdnn_exec_args_t *args,
                                   cdnn_cuda_sdpa_tma_params_t *t)
{
    const int64_t *v = l->values;
    memset(t, 0, sizeof *t);
    cdnn_status_t st = params_of(v, args, &t->sdpa);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const char *why = cdnn_cuda_sdpa_tma_refusal(&t->sdpa, (int32_t)v[V_TMA_DTYPE],
                                                 v[V_TMA_HEAD_DIM], 1);
    if (why)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "kernel %s: %s", l->kernel_id, why);
    /* The driver refuses to encode without a current context, and the
     * calling thread need not have one. */
    if ((st = cuda_code_enter(l->cuda)) != CDNN_STATUS_SUCCESS)
        return st;
    int r = cdnn_cuda_sdpa_tma_encode(t, l->cuda->cu->tensor_map_encode_tiled);
    cuda_code_leave(l->cuda);
    return r == SDK_CU_SUCCESS
               ? CDNN_STATUS_SUCCESS
               : cuda_failed(l->cuda, CDNN_STATUS_EXECUTION_FAILED, r, "cuTensorMapEncodeTiled");
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    /* One of the two, by the kernel's signature: the plain params, or
     * them followed by the tensor maps. */
    cdnn_cuda_sdpa_tma_params_t t;
    const int64_t *v = l->values;
    void *params[] = {&t.sdpa};
    cdnn_status_t st = l->value_count == V_TMA_COUNT ? tma_params_of(l, args, &t)
                                                     : params_of(v, args, &t.sdpa);
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

const dispatch_handler_t cuda_sdpa_handler_v1 = {
    .name = "cuda_sdpa",
    .version = 1,
    .signature = "cuda-sdpa-v1",
    .kind = KERNEL_KIND_CUDA,
    .derive = derive,
    .shared_bytes = shared_bytes,
    .workspace = launch_no_workspace,
    .run = run,
};
