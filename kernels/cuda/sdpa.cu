// sdpa.cu -- "cuda-sdpa-v1": scaled dot-product attention, one online
// (flash-attention) pass over the keys in f32, correct first: SIMT cores,
// no tensor cores yet (issue 11 owns the fast kernel).
//
// A block of 8 warps takes 8 consecutive query rows of one (batch, head).
// The keys and values stream through shared memory in tiles of 32 rows,
// loaded once per block and converted to f32; each warp then scores its
// row against the tile, one key per lane (the query row is in shared
// memory and read as a broadcast; K rows are padded by one float so the 32
// lanes hit 32 banks), folds the scores into its running maximum and sum,
// and accumulates P V with each lane owning value_dim / 32 columns.
#include "common.cuh"

namespace cdnn {
namespace {

constexpr int kRows = CDNN_CUDA_SDPA_ROWS_PER_BLOCK;
constexpr int kKeys = CDNN_CUDA_SDPA_KEYS_PER_TILE;
constexpr int kColsPerLane = CDNN_CUDA_SDPA_MAX_DIM / 32;

__device__ __forceinline__ int64_t at(const int64_t (&strides)[4], int64_t b, int64_t h,
                                      int64_t s, int64_t d) {
    return b * strides[0] + h * strides[1] + s * strides[2] + d * strides[3];
}

// Load keys [key0, key0 + kKeys) of K and V (rows past kv_len as zeros)
// into the shared tiles, as f32.
__device__ __forceinline__ void load_kv_tile(const cdnn_cuda_sdpa_params_t &p, int64_t b,
                                             int64_t kv_head, int64_t key0, float *k_tile,
                                             float *v_tile) {
    const int64_t dk = p.head_dim, dv = p.value_dim;
    for (int64_t e = threadIdx.x; e < kKeys * dk; e += blockDim.x) {
        const int64_t j = e / dk, d = e % dk, key = key0 + j;
        k_tile[j * (dk + 1) + d] =
            key < p.kv_len ? load_as_f32(p.k, at(p.k_strides, b, kv_head, key, d), p.k_type) : 0.0f;
    }
    for (int64_t e = threadIdx.x; e < kKeys * dv; e += blockDim.x) {
        const int64_t j = e / dv, d = e % dv, key = key0 + j;
        v_tile[j * dv + d] =
            key < p.kv_len ? load_as_f32(p.v, at(p.v_strides, b, kv_head, key, d), p.v_type) : 0.0f;
    }
}

// One warp's running state for its query row.
struct RowState {
    float max, sum;
    float out[kColsPerLane]; // columns lane + 32 * c
};

// Fold one tile into the row's state; `last_key` is the last key the row
// may see (kv_len - 1, or its causal limit).
__device__ __forceinline__ void fold_tile(const cdnn_cuda_sdpa_params_t &p, const float *q_row,
                                          const float *k_tile, const float *v_tile, int64_t key0,
                                          int64_t last_key, RowState &row) {
    const int lane = threadIdx.x & 31;
    const int64_t dk = p.head_dim, dv = p.value_dim;
    float score = -INFINITY;
    if (key0 + lane <= last_key) {
        float dot = 0.0f;
        const float *k_row = k_tile + lane * (dk + 1);
        for (int64_t d = 0; d < dk; ++d)
            dot = fmaf(q_row[d], k_row[d], dot);
        score = dot * p.scale;
    }
    const float tile_max = warp_max(score);
    if (tile_max == -INFINITY)
        return; // no visible key in this tile
    const float new_max = fmaxf(row.max, tile_max);
    const float rescale = expf(row.max - new_max); // 0 while row.max is -inf
    const float weight = expf(score - new_max);    // 0 for masked keys
    row.sum = row.sum * rescale + warp_sum(weight);
    row.max = new_max;
#pragma unroll
    for (int c = 0; c < kColsPerLane; ++c)
        row.out[c] *= rescale;
    for (int j = 0; j < kKeys; ++j) {
        const float w = __shfl_sync(0xffffffffu, weight, j);
#pragma unroll
        for (int c = 0; c < kColsPerLane; ++c) {
            const int64_t d = lane + 32 * c;
            if (d < dv)
                row.out[c] = fmaf(w, v_tile[j * dv + d], row.out[c]);
        }
    }
}

__device__ __forceinline__ void sdpa(const cdnn_cuda_sdpa_params_t &p) {
    extern __shared__ float shared_sdpa[];
    float *k_tile = shared_sdpa;
    float *v_tile = k_tile + kKeys * (p.head_dim + 1);
    float *q_rows = v_tile + kKeys * p.value_dim;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t b = blockIdx.z, h = blockIdx.y;
    const int64_t kv_head = h / (p.heads / p.kv_heads);
    const int64_t row0 = int64_t(blockIdx.x) * kRows, i = row0 + warp;
    const bool has_row = i < p.q_len;

    float *q_row = q_rows + warp * p.head_dim;
    for (int64_t d = lane; d < p.head_dim; d += 32)
        q_row[d] = has_row ? load_as_f32(p.q, at(p.q_strides, b, h, i, d), p.q_type) : 0.0f;
    // The last key each row sees, and the last any row of the block sees.
    const int64_t all_keys = p.kv_len - 1;
    const int64_t last_key = p.causal ? min(all_keys, i + p.causal_offset) : all_keys;
    const int64_t block_last =
        p.causal ? min(all_keys, min(row0 + kRows - 1, p.q_len - 1) + p.causal_offset) : all_keys;

    RowState row;
    row.max = -INFINITY;
    row.sum = 0.0f;
#pragma unroll
    for (int c = 0; c < kColsPerLane; ++c)
        row.out[c] = 0.0f;
    for (int64_t key0 = 0; key0 <= block_last; key0 += kKeys) {
        __syncthreads(); // the previous tile is consumed (and q_row written)
        load_kv_tile(p, b, kv_head, key0, k_tile, v_tile);
        __syncthreads();
        if (has_row)
            fold_tile(p, q_row, k_tile, v_tile, key0, last_key, row);
    }
    if (!has_row)
        return;
    const float inv_sum = 1.0f / row.sum;
#pragma unroll
    for (int c = 0; c < kColsPerLane; ++c) {
        const int64_t d = lane + 32 * c;
        if (d < p.value_dim)
            store_from_f32(p.o, at(p.o_strides, b, h, i, d), p.o_type, row.out[c] * inv_sum);
    }
}

} // namespace
} // namespace cdnn

extern "C" __global__ void __launch_bounds__(32 * CDNN_CUDA_SDPA_ROWS_PER_BLOCK)
    cdnn_cuda_sdpa(const __grid_constant__ cdnn_cuda_sdpa_params_t params) {
    cdnn::sdpa(params);
}
