/*
 * matmul_tma.h -- the host half of the Hopper matmul kernels' ABI: which
 * launches they take, and the two tensor maps each launch passes (see
 * cdnn_cuda_matmul_tma_params_t in cuda_kernel.h).  Plain C, header only,
 * shared by the kernels provider's cuda_matmul handler, the tests and the
 * bench.  The driver's cuTensorMapEncodeTiled is passed in, so that this
 * header needs neither the toolkit's cuda.h nor the SDK.
 */
#ifndef CDNN_KERNELS_CUDA_MATMUL_TMA_H
#define CDNN_KERNELS_CUDA_MATMUL_TMA_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_kernel.h"

/* cuTensorMapEncodeTiled, with its enums as int and CUtensorMap as void. */
typedef int (*cdnn_cuda_encode_tiled_fn)(void *map, int data_type, uint32_t rank,
                                         void *address, const uint64_t *dims,
                                         const uint64_t *strides, const uint32_t *box,
                                         const uint32_t *element_strides, int interleave,
                                         int swizzle, int l2_promotion, int oob_fill);

/* The driver's enum values used below (cuda.h). */
#define CDNN_CU_TENSOR_MAP_DATA_TYPE_FLOAT16 6
#define CDNN_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 9
#define CDNN_CU_TENSOR_MAP_SWIZZLE_128B 3
#define CDNN_CU_TENSOR_MAP_L2_PROMOTION_L2_256B 3

/* TMA strides are bytes, multiples of 16, below 2^40. */
static inline int cdnn_cuda_tma_stride_ok(int64_t elements)
{
    return elements > 0 && elements % 8 == 0 && elements < ((int64_t)1 << 38);
}

/**
 * NULL if the Hopper kernels can run p, else why not (a static string).
 * With check_pointers 0 only the layout is judged (strides, types), as a
 * handler can before it has pointers; with 1 the addresses too.
 */
static inline const char *cdnn_cuda_matmul_tma_refusal(const cdnn_cuda_matmul_params_t *p,
                                                        int check_pointers)
{
    int b_k_contiguous = p->b_row_stride == 1 && p->b_col_stride != 1;
    int64_t b_pitch = b_k_contiguous ? p->b_col_stride : p->b_row_stride;
    if (p->a_type != p->b_type || (p->a_type != CDNN_CUDA_F16 && p->a_type != CDNN_CUDA_BF16))
        return "the TMA kernels multiply f16 or bf16, the same for a and b";
    if (p->a_col_stride != 1)
        return "the TMA kernels need a k-contiguous a (column stride 1)";
    if (!b_k_contiguous && p->b_col_stride != 1)
        return "the TMA kernels need b k-contiguous or n-contiguous";
    if ((p->m > 1 && !cdnn_cuda_tma_stride_ok(p->a_row_stride)) ||
        (p->n > 1 && b_k_contiguous && !cdnn_cuda_tma_stride_ok(b_pitch)) ||
        (p->k > 1 && !b_k_contiguous && !cdnn_cuda_tma_stride_ok(b_pitch)))
        return "the TMA kernels need row pitches of a and b that are multiples of 16 bytes";
    if ((p->batch > 1 && p->a_batch_stride != 0 && !cdnn_cuda_tma_stride_ok(p->a_batch_stride)) ||
        (p->batch > 1 && p->b_batch_stride != 0 && !cdnn_cuda_tma_stride_ok(p->b_batch_stride)))
        return "the TMA kernels need batch strides of a and b that are 0 or multiples of 16 "
               "bytes";
    if (check_pointers && (((uintptr_t)p->a | (uintptr_t)p->b) & 15) != 0)
        return "the TMA kernels need a and b at 16-byte aligned addresses";
    return NULL;
}

/* One operand's map: dims {inner, outer, batch} with the pitches given. */
static inline int cdnn_cuda_tma_encode_operand(cdnn_cuda_encode_tiled_fn encode,
                                               cdnn_cuda_tensor_map_t *map, int32_t type,
                                               const void *base, int64_t inner, int64_t outer,
                                               int64_t pitch, int64_t batch,
                                               int64_t batch_stride, uint32_t box_outer)
{
    /* A pitch that is never used (one row) or a shared batch (stride 0)
     * still has to be a valid TMA stride: any will do. */
    int64_t row_pitch = outer > 1 ? pitch : (inner + 7) / 8 * 8;
    int64_t batches = batch > 1 && batch_stride != 0 ? batch : 1;
    int64_t plane = batches > 1 ? batch_stride : row_pitch * outer;
    uint64_t dims[3] = {(uint64_t)inner, (uint64_t)outer, (uint64_t)batches};
    uint64_t strides[2] = {(uint64_t)row_pitch * 2, (uint64_t)plane * 2};
    uint32_t box[3] = {CDNN_CUDA_MATMUL_WGMMA_TILE_K, box_outer, 1};
    uint32_t element_strides[3] = {1, 1, 1};
    int data_type = type == CDNN_CUDA_BF16 ? CDNN_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                           : CDNN_CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    return encode(map, data_type, 3, (void *)(uintptr_t)base, dims, strides, box,
                  element_strides, 0, CDNN_CU_TENSOR_MAP_SWIZZLE_128B,
                  CDNN_CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 0);
}

/**
 * Fill t's two tensor maps for t->matmul and the kernel's tile: A's box is
 * 64 k x tile_m rows; B's is 64 x 64 in either layout (the kernels load a
 * tile_n-wide tile of B as tile_n / 64 boxes, which the cluster kernels
 * split between their two blocks), so tile_n does not shape it.  The
 * params must pass cdnn_cuda_matmul_tma_refusal(.., 1).  Returns the
 * driver's result (0 on success).
 */
static inline int cdnn_cuda_matmul_tma_encode(cdnn_cuda_matmul_tma_params_t *t, int tile_m,
                                              int tile_n, cdnn_cuda_encode_tiled_fn encode)
{
    const cdnn_cuda_matmul_params_t *p = &t->matmul;
    int b_k_contiguous = p->b_row_stride == 1 && p->b_col_stride != 1;
    int r = cdnn_cuda_tma_encode_operand(encode, &t->a_map, p->a_type, p->a, p->k, p->m,
                                         p->a_row_stride, p->batch, p->a_batch_stride,
                                         (uint32_t)tile_m);
    if (r == 0 && b_k_contiguous)
        r = cdnn_cuda_tma_encode_operand(encode, &t->b_map, p->b_type, p->b, p->k, p->n,
                                         p->b_col_stride, p->batch, p->b_batch_stride, 64);
    else if (r == 0)
        r = cdnn_cuda_tma_encode_operand(encode, &t->b_map, p->b_type, p->b, p->n, p->k,
                                         p->b_row_stride, p->batch, p->b_batch_stride,
                                         CDNN_CUDA_MATMUL_WGMMA_TILE_K);
    (void)tile_n;
    return r;
}

/**
 * NULL if the TMA-store kernels (cdnn_cuda_matmul_wgmma_store_*) can run p,
 * else why not: those of cdnn_cuda_matmul_tma_refusal, and C must be f16
 * or bf16, row-major, n a multiple of 8, with row and batch strides that
 * TMA takes, 16-byte aligned (check_pointers 1); a residual f16 or bf16,
 * row-major with even strides, 4-byte aligned.
 */
static inline const char *cdnn_cuda_matmul_tma_store_refusal(const cdnn_cuda_matmul_params_t *p,
                                                              int check_pointers)
{
    const char *why = cdnn_cuda_matmul_tma_refusal(p, check_pointers);
    if (why)
        return why;
    if (p->c_type != CDNN_CUDA_F16 && p->c_type != CDNN_CUDA_BF16)
        return "the TMA-store kernels store c as f16 or bf16";
    if (p->residual && p->res_type != CDNN_CUDA_F16 && p->res_type != CDNN_CUDA_BF16)
        return "the TMA-store kernels add a residual of f16 or bf16";
    /* Each thread reads a pair of adjacent columns as one word. */
    if (p->residual && (p->res_col_stride != 1 || p->res_row_stride % 2 != 0 ||
                        p->res_batch_stride % 2 != 0))
        return "the TMA-store kernels read the residual row-major with an even row and batch "
               "stride";
    if (check_pointers && p->residual && ((uintptr_t)p->residual & 3) != 0)
        return "the TMA-store kernels need the residual at a 4-byte aligned address";
    /* The copy engine clips a store's innermost dimension only to 16 bytes
     * (seen on the H200 with the convolution's y, bench/gpu/notes/conv.md
     * v4), so columns past n up to the next 8 would be written. */
    if (p->n % 8 != 0)
        return "the TMA-store kernels need n a multiple of 8";
    if (p->c_col_stride != 1 || (p->m > 1 && !cdnn_cuda_tma_stride_ok(p->c_row_stride)))
        return "the TMA-store kernels need c row-major with a row pitch of a multiple of 16 bytes";
    if (p->batch > 1 && !cdnn_cuda_tma_stride_ok(p->c_batch_stride))
        return "the TMA-store kernels need c's batch stride a multiple of 16 bytes";
    if (check_pointers && ((uintptr_t)p->c & 15) != 0)
        return "the TMA-store kernels need c at a 16-byte aligned address";
    return NULL;
}

/**
 * cdnn_cuda_matmul_tma_encode for t->tma, then t's map of C: dims {n, m,
 * batch}, box 64 x 64 (a consumer's 64-row block, a box at a time).  The
 * params must pass cdnn_cuda_matmul_tma_store_refusal(.., 1).
 */
static inline int cdnn_cuda_matmul_tma_store_encode(cdnn_cuda_matmul_tma_store_params_t *t,
                                                    int tile_m, int tile_n,
                                                    cdnn_cuda_encode_tiled_fn encode)
{
    const cdnn_cuda_matmul_params_t *p = &t->tma.matmul;
    int r = cdnn_cuda_matmul_tma_encode(&t->tma, tile_m, tile_n, encode);
    if (r == 0)
        r = cdnn_cuda_tma_encode_operand(encode, &t->c_map, p->c_type, p->c, p->n, p->m,
                                         p->c_row_stride, p->batch, p->c_batch_stride, 64);
    return r;
}

#endif
