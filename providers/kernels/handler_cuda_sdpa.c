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
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_kernel.h>

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
    V_COUNT
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

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)metadata, (void)metadata_count; /* one kernel, its geometry the signature's */
    (void)threads;                         /* a grid, not host threads */
    int64_t *v = calloc(V_COUNT, sizeof *v);
    if (!v)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = derive_into(v, g);
    if (st != CDNN_STATUS_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
    *count = V_COUNT;
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

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_cuda_sdpa_params_t p;
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
