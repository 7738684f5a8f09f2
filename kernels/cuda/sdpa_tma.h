/*
 * sdpa_tma.h -- the ABI of the Hopper flash-attention kernels
 * (kernels/cuda/sdpa_wgmma.cu, sm_90a only) and the host half of it: which
 * launches they take and the three tensor maps each launch passes.  Plain C,
 * header only, shared by the kernels provider's cuda_sdpa handler, the
 * tests and the bench.  The driver's cuTensorMapEncodeTiled is passed in
 * (matmul_tma.h's cdnn_cuda_encode_tiled_fn), so that this header needs
 * neither the toolkit's cuda.h nor the SDK.
 *
 * "cuda-sdpa-v1" (cuda_kernel.h) computed with wgmma fed by TMA:
 * cdnn_cuda_sdpa_wgmma_{f16,bf16}_d{64,128} take cdnn_cuda_sdpa_tma_params_t
 * (the plain params, then maps of q, k and v).  A block owns 128 query rows
 * of one (batch, head): warpgroup 0 streams K and V tiles of 128 keys
 * through a ring of shared-memory stages; warpgroups 1 and 2 own 64 query
 * rows each, compute S = Q K^T and O += P V with wgmma, and keep the
 * softmax online in registers.
 * Layouts (cdnn_cuda_sdpa_tma_refusal says why one is refused): q, k and v
 * all of the kernel's dtype, head_dim == value_dim == the kernel's D;
 * feature stride 1; every other stride of a dim longer than 1 a multiple of
 * 8 elements (16 bytes); base addresses 16-byte aligned.  o: any strides,
 * types f32, f16, bf16.  Sequence tails are TMA's zero fill, masked.
 * Launch: grid (ceil(q_len / 128) * heads * batch, 1, 1), block 384,
 * dynamic smem CDNN_CUDA_SDPA_WGMMA_SMEM(D).  Which tile a block takes is
 * the kernel's affair (heads grouped so that their K and V share L2, the
 * longest causal tiles first); the grid only has to hold one block a tile.
 */
#ifndef CDNN_KERNELS_CUDA_SDPA_TMA_H
#define CDNN_KERNELS_CUDA_SDPA_TMA_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_kernel.h"
#include "matmul_tma.h"

#define CDNN_CUDA_SDPA_WGMMA_THREADS 384
#define CDNN_CUDA_SDPA_WGMMA_ROWS 128 /* query rows a block */
#define CDNN_CUDA_SDPA_WGMMA_KEYS 128 /* keys a ring stage */
/* Ring stages by head dim: 3 at D 128 (224 KiB with Q, near the 227 KiB
 * a block may have), 4 at D 64. */
#define CDNN_CUDA_SDPA_WGMMA_STAGES(d) ((d) == 64 ? 4 : 3)
/* Q, the stages' K and V tiles, 1 KiB to align them to the 128-byte
 * swizzle's 1024-byte period, and the mbarriers (1 for Q; K full, V full,
 * K empty, V empty a stage). */
#define CDNN_CUDA_SDPA_WGMMA_SMEM(d)                                        \
    (CDNN_CUDA_SDPA_WGMMA_ROWS * (d) * 2 +                                  \
     CDNN_CUDA_SDPA_WGMMA_STAGES(d) * 2 * CDNN_CUDA_SDPA_WGMMA_KEYS * (d) * 2 + 1024 + \
     8 * (1 + 4 * CDNN_CUDA_SDPA_WGMMA_STAGES(d)))

typedef struct cdnn_cuda_sdpa_tma_params {
    cdnn_cuda_sdpa_params_t sdpa;
    cdnn_cuda_tensor_map_t q_map; /* dims {D, q_len, heads, batch}, box {64, 128, 1, 1} */
    cdnn_cuda_tensor_map_t k_map; /* dims {D, kv_len, kv_heads, batch}, same box */
    cdnn_cuda_tensor_map_t v_map;
} cdnn_cuda_sdpa_tma_params_t;
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_sdpa_tma_params_t) == 640, "sdpa tma params layout");

/** Blocks of a launch (the grid's x). */
static inline int64_t cdnn_cuda_sdpa_wgmma_blocks(const cdnn_cuda_sdpa_params_t *p)
{
    return (p->q_len + CDNN_CUDA_SDPA_WGMMA_ROWS - 1) / CDNN_CUDA_SDPA_WGMMA_ROWS * p->heads *
           p->batch;
}

/* A stride TMA takes for a dim of `count` elements (one-element dims are
 * never stepped: any stride does). */
static inline int cdnn_cuda_sdpa_stride_ok(int64_t count, int64_t stride)
{
    return count <= 1 || cdnn_cuda_tma_stride_ok(stride);
}

static inline int cdnn_cuda_sdpa_operand_ok(const int64_t strides[4], int64_t batch,
                                            int64_t heads, int64_t len, int64_t dim)
{
    return (dim <= 1 || strides[3] == 1) && cdnn_cuda_sdpa_stride_ok(batch, strides[0]) &&
           cdnn_cuda_sdpa_stride_ok(heads, strides[1]) &&
           cdnn_cuda_sdpa_stride_ok(len, strides[2]);
}

/**
 * NULL if the Hopper kernel of `dtype` and head dim `d` can run p, else why
 * not (a static string).  With check_pointers 0 only the layout is judged,
 * as a handler can before it has pointers; with 1 the addresses too.
 */
static inline const char *cdnn_cuda_sdpa_tma_refusal(const cdnn_cuda_sdpa_params_t *p,
                                                      int32_t dtype, int64_t d,
                                                      int check_pointers)
{
    if (p->q_type != dtype || p->k_type != dtype || p->v_type != dtype)
        return "the flash-attention kernel takes q, k and v of its own dtype";
    if (p->head_dim != d || p->value_dim != d)
        return "the flash-attention kernel takes one head dim, the same for values";
    if (p->kv_heads < 1 || p->heads % p->kv_heads != 0)
        return "the flash-attention kernel needs heads a multiple of kv_heads";
    if (!cdnn_cuda_sdpa_operand_ok(p->q_strides, p->batch, p->heads, p->q_len, d) ||
        !cdnn_cuda_sdpa_operand_ok(p->k_strides, p->batch, p->kv_heads, p->kv_len, d) ||
        !cdnn_cuda_sdpa_operand_ok(p->v_strides, p->batch, p->kv_heads, p->kv_len, d))
        return "the flash-attention kernel needs q, k and v feature-contiguous with other "
               "strides multiples of 16 bytes";
    if (p->q_len > INT32_MAX || p->kv_len > INT32_MAX || p->heads > INT32_MAX ||
        p->batch > INT32_MAX || cdnn_cuda_sdpa_wgmma_blocks(p) > INT32_MAX)
        return "the flash-attention kernel's grid and coordinates are 32-bit";
    if (p->causal && p->causal_offset < 0)
        return "the flash-attention kernel needs every query row to see key 0";
    if (check_pointers && (((uintptr_t)p->q | (uintptr_t)p->k | (uintptr_t)p->v) & 15) != 0)
        return "the flash-attention kernel needs q, k and v at 16-byte aligned addresses";
    return NULL;
}

/* One operand's map: dims {D, len, heads, batch}, box {64, 128, 1, 1}. */
static inline int cdnn_cuda_sdpa_encode_operand(cdnn_cuda_encode_tiled_fn encode,
                                                cdnn_cuda_tensor_map_t *map, int32_t type,
                                                const void *base, const int64_t s[4],
                                                int64_t batch, int64_t heads, int64_t len,
                                                int64_t d)
{
    /* A dim of one element is never stepped, but its stride must still be
     * one TMA takes: any multiple of 16 bytes. */
    int64_t seq = len > 1 ? s[2] : d, head = heads > 1 ? s[1] : d, bat = batch > 1 ? s[0] : d;
    uint64_t dims[4] = {(uint64_t)d, (uint64_t)len, (uint64_t)heads, (uint64_t)batch};
    uint64_t strides[3] = {(uint64_t)seq * 2, (uint64_t)head * 2, (uint64_t)bat * 2};
    uint32_t box[4] = {64, CDNN_CUDA_SDPA_WGMMA_KEYS, 1, 1};
    uint32_t element_strides[4] = {1, 1, 1, 1};
    int data_type = type == CDNN_CUDA_BF16 ? CDNN_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                           : CDNN_CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    return encode(map, data_type, 4, (void *)(uintptr_t)base, dims, strides, box,
                  element_strides, 0, CDNN_CU_TENSOR_MAP_SWIZZLE_128B,
                  CDNN_CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 0);
}

/**
 * Fill t's three tensor maps for t->sdpa.  The params must pass
 * cdnn_cuda_sdpa_tma_refusal(.., 1).  Returns the driver's result (0 on
 * success).
 */
static inline int cdnn_cuda_sdpa_tma_encode(cdnn_cuda_sdpa_tma_params_t *t,
                                            cdnn_cuda_encode_tiled_fn encode)
{
    const cdnn_cuda_sdpa_params_t *p = &t->sdpa;
    int r = cdnn_cuda_sdpa_encode_operand(encode, &t->q_map, p->q_type, p->q, p->q_strides,
                                          p->batch, p->heads, p->q_len, p->head_dim);
    if (r == 0)
        r = cdnn_cuda_sdpa_encode_operand(encode, &t->k_map, p->k_type, p->k, p->k_strides,
                                          p->batch, p->kv_heads, p->kv_len, p->head_dim);
    if (r == 0)
        r = cdnn_cuda_sdpa_encode_operand(encode, &t->v_map, p->v_type, p->v, p->v_strides,
                                          p->batch, p->kv_heads, p->kv_len, p->value_dim);
    return r;
}

#endif
