// sdpa_wgmma.cu -- "cuda-sdpa-v1" on Hopper (sm_90a only): a flash-attention
// forward pass with wgmma fed by the tensor memory accelerator, f16 and
// bf16, head dims 64 and 128.  sdpa_tma.h holds the launch ABI and encodes
// the tensor maps.
//
// A block owns 128 query rows of one (batch, head), in three warpgroups:
//   warpgroup 0, the producer: one thread loads the Q tile once, then
//     streams the K and V tiles of 128 keys through a ring of stages (128-
//     byte swizzle, the layout wgmma reads), in the order the consumers
//     need them (K_0, then K_{n+1} before V_n); K and V have their own
//     "full" and "empty" mbarriers, so that S = Q K^T can start before V
//     lands and K's buffer refills as soon as S is computed;
//   warpgroups 1 and 2, the consumers: 64 query rows each.  Per key tile n
//     a consumer issues S_n = Q K_n^T (wgmma, both operands in shared
//     memory) and O += P_{n-1} V_{n-1} (wgmma, P from registers) together,
//     takes the online softmax of S_n while the second runs, then rescales
//     O and turns S_n into P_n (f16/bf16) in registers.  The two consumers
//     take turns at issuing (two named barriers), so that one's softmax
//     runs while the other's products occupy the tensor cores.
// Softmax in base 2 with the scale folded in: p = 2^(s * scale * log2(e) -
// m) (ex2.approx.ftz: p under 2^-126 is 0), m the running row maximum of
// the scaled scores; each thread keeps
// partial row sums of its columns and the quad adds them at the end.
// Causal: a block stops at the last key tile its last row sees; tiles that
// cross the diagonal or the end of the keys are masked to -inf.  Blocks
// take their tiles in an order that keeps K and V in L2 (work_of).
#include "common.cuh"
#include "hopper_async.cuh"
#include "sdpa_tma.h"
#include "sdpa_wgmma_ops.cuh"

namespace cdnn {
namespace {

constexpr int kRows = CDNN_CUDA_SDPA_WGMMA_ROWS;
constexpr int kKeys = CDNN_CUDA_SDPA_WGMMA_KEYS;
constexpr int kRowBytes = 128;             // one swizzled row: 64 features
constexpr int kBoxBytes = kKeys * kRowBytes; // one TMA box: 128 rows x 64 features
static_assert(kRows == kKeys, "Q, K and V boxes share one shape");
constexpr float kLog2e = 1.4426950408889634f;
// Named barriers 0 is __syncthreads'; the consumers' turns use 8 and 9.
constexpr int kTurnBarrier = 8;

// S (64 x 128 keys) = Q rows (64 x D) K tile^T: D / 16 steps; Q and K are
// K-major, D / 64 boxes of 128 rows each.
template <int DType, int D>
__device__ __forceinline__ void score_tile(float (&s)[64], uint32_t q_rows, uint32_t k_tile) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        const uint32_t offset = (kk / 4) * kBoxBytes + (kk % 4) * 32;
        const uint64_t a = smem_descriptor(q_rows + offset, 16, 1024);
        const uint64_t b = smem_descriptor(k_tile + offset, 16, 1024);
        if (DType == CDNN_CUDA_BF16)
            wgmma_ss_m64n128k16_bf16(s, a, b, kk > 0);
        else
            wgmma_ss_m64n128k16_f16(s, a, b, kk > 0);
    }
}

// O (64 x D) += P (64 x 128 keys, registers) V tile (128 keys x D): 8 steps
// of 16 keys; V is D-contiguous (N-major), its 64-feature boxes kBoxBytes
// apart (the leading offset), 8-key row groups 1024 bytes apart.
template <int DType, int D>
__device__ __forceinline__ void value_tile(float (&o)[D / 2], const uint32_t (&p)[32],
                                           uint32_t v_tile) {
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
        const uint32_t(&a)[4] = *reinterpret_cast<const uint32_t(*)[4]>(p + 4 * kk);
        const uint64_t b = smem_descriptor(v_tile + kk * 16 * kRowBytes, kBoxBytes, 1024);
        if (DType == CDNN_CUDA_BF16) {
            if (D == 128) wgmma_rs_m64n128k16_bf16(reinterpret_cast<float(&)[64]>(o), a, b);
            if (D == 64) wgmma_rs_m64n64k16_bf16(reinterpret_cast<float(&)[32]>(o), a, b);
        } else {
            if (D == 128) wgmma_rs_m64n128k16_f16(reinterpret_cast<float(&)[64]>(o), a, b);
            if (D == 64) wgmma_rs_m64n64k16_f16(reinterpret_cast<float(&)[32]>(o), a, b);
        }
    }
}

// 2^x for x <= 0, one MUFU.EX2 (exp2f adds a denormal range fix-up of three
// instructions an element).
__device__ __forceinline__ float exp2_ftz(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// Two f32 as the kernel's 16-bit type, low half first.
template <int DType>
__device__ __forceinline__ uint32_t pack_pair(float lo, float hi) {
    if (DType == CDNN_CUDA_BF16) {
        __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&v);
    }
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

// ---- the block's work ---------------------------------------------------------------------

struct Work {
    int32_t batch, head, kv_head, row0; // row0: the block's first query row
    int32_t tiles;                     // key tiles to visit
};

// Block x's tile.  The (batch, head) pairs go in groups whose keys and
// values fit in L2 together (kL2Bytes); inside a group the query tiles go
// longest first (for causal: the last query tile sees every key), all the
// group's heads at one depth before the next.  So the blocks running at
// once share a few heads' K and V through L2 -- one head after another
// would make every block stream its own K and V from memory, which costs
// more time than the products -- and the short causal tiles fill in behind
// the long ones.
constexpr int64_t kL2Bytes = 24 << 20;

__device__ __forceinline__ Work work_of(const cdnn_cuda_sdpa_params_t &p) {
    const int32_t per_head = int32_t((p.q_len + kRows - 1) / kRows);
    const int32_t pairs = int32_t(p.heads * p.batch), x = int32_t(blockIdx.x);
    const int64_t kv_bytes = p.kv_len * (p.head_dim + p.value_dim) * 2; // one head's K and V
    const int32_t group = int32_t(max(int64_t(1), min(int64_t(pairs), kL2Bytes / kv_bytes)));
    const int32_t g = x / (group * per_head), in_group = x - g * group * per_head;
    const int32_t group_pairs = min(group, pairs - g * group);
    const int32_t pair = g * group + in_group % group_pairs;
    Work w;
    w.row0 = (per_head - 1 - in_group / group_pairs) * kRows;
    w.batch = pair / int32_t(p.heads);
    w.head = pair % int32_t(p.heads);
    w.kv_head = w.head / int32_t(p.heads / p.kv_heads);
    int64_t last_key = p.kv_len - 1;
    if (p.causal)
        last_key = min(last_key, min(int64_t(w.row0) + kRows - 1, p.q_len - 1) + p.causal_offset);
    w.tiles = int32_t(last_key / kKeys + 1);
    return w;
}

// The ring: stage s's K tile at k_base + s * tile_bytes, its V tile at
// v_base + s * tile_bytes; its barriers K full, V full, K empty, V empty.
struct Ring {
    uint32_t q, k_base, v_base, q_full, k_full, v_full, k_empty, v_empty;
};

// One tile of K or V (D / 64 boxes) into its stage, once the consumers
// have released the stage's previous round.
template <int D, int Stages>
__device__ __forceinline__ void load_tile(const cdnn_cuda_tensor_map_t *map, uint32_t base,
                                          uint32_t full, uint32_t empty, int32_t n,
                                          const Work &w) {
    constexpr uint32_t kTileBytes = kKeys * D * 2;
    const int s = n % Stages;
    barrier_wait(empty + 8 * s, (uint32_t(n / Stages) & 1) ^ 1); // a fresh barrier passes parity 1
    barrier_expect_bytes(full + 8 * s, kTileBytes);
#pragma unroll
    for (int c = 0; c < D / 64; ++c)
        tma_load(base + s * kTileBytes + c * kBoxBytes, map, full + 8 * s, 64 * c, n * kKeys,
                 w.kv_head, w.batch);
}

template <int D, int Stages>
__device__ __forceinline__ void produce(const cdnn_cuda_sdpa_tma_params_t &t, const Ring &ring,
                                        const Work &w) {
    barrier_expect_bytes(ring.q_full, kRows * D * 2);
#pragma unroll
    for (int c = 0; c < D / 64; ++c)
        tma_load(ring.q + c * kBoxBytes, &t.q_map, ring.q_full, 64 * c, w.row0, w.head, w.batch);
    load_tile<D, Stages>(&t.k_map, ring.k_base, ring.k_full, ring.k_empty, 0, w);
    for (int32_t n = 0; n < w.tiles; ++n) {
        if (n + 1 < w.tiles)
            load_tile<D, Stages>(&t.k_map, ring.k_base, ring.k_full, ring.k_empty, n + 1, w);
        load_tile<D, Stages>(&t.v_map, ring.v_base, ring.v_full, ring.v_empty, n, w);
    }
}

// One consumer thread's softmax state: rows r and r + 8 of its warp's 16.
struct Softmax {
    float max[2], sum[2];
};

// The S accumulator layout (wgmma m64n128, f32): lane l of warp w holds, for
// each 8-key block j, (row 16 w + l / 4, keys 8 j + 2 (l % 4) + {0, 1}) in
// s[4j], s[4j + 1] and the same keys of the row 8 below in s[4j + 2],
// s[4j + 3].  Masked scores become -inf.
__device__ __forceinline__ void mask_tile(const cdnn_cuda_sdpa_params_t &p, float (&s)[64],
                                          int64_t row, int64_t key0) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int e = 0; e < 64; ++e) {
        const int64_t i = row + 8 * ((e / 2) % 2);
        const int64_t j = key0 + 8 * (e / 4) + 2 * (lane % 4) + (e % 2);
        const bool hidden = j >= p.kv_len || (p.causal && j > i + p.causal_offset);
        if (hidden)
            s[e] = -INFINITY;
    }
}

// Fold S (masked) into the running state: new maxima, p = 2^(s * scale2 - m)
// in place, partial sums; returns the factors O's rows must be rescaled by.
__device__ __forceinline__ void softmax_tile(float (&s)[64], Softmax &st, float scale2,
                                             float (&rescale)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int j = 0; j < 16; ++j)
            tile_max = fmaxf(tile_max, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        const float new_max = fmaxf(st.max[h], tile_max * scale2);
        // A row with no visible key yet keeps -inf: subtract 0, not -inf.
        const float base = new_max == -INFINITY ? 0.0f : new_max;
        rescale[h] = exp2_ftz(st.max[h] - base);
        st.max[h] = new_max;
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < 16; ++j) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                float &x = s[4 * j + 2 * h + e];
                x = exp2_ftz(fmaf(x, scale2, -base));
                sum += x;
            }
        }
        st.sum[h] = st.sum[h] * rescale[h] + sum;
    }
}

template <int D>
__device__ __forceinline__ void rescale_output(float (&o)[D / 2], const float (&rescale)[2]) {
#pragma unroll
    for (int e = 0; e < D / 2; ++e)
        o[e] *= rescale[(e / 2) % 2];
}

// P as the A operand of m64nNk16 (registers): for keys 16 kk.. 16 kk + 15,
// a[0] = (row r, keys 2c, 2c+1), a[1] = (row r + 8, same keys), a[2] and
// a[3] the same 8 keys on -- exactly S's layout, two 8-key blocks a step.
template <int DType>
__device__ __forceinline__ void convert_p(const float (&s)[64], uint32_t (&p)[32]) {
#pragma unroll
    for (int i = 0; i < 32; ++i)
        p[i] = pack_pair<DType>(s[2 * i], s[2 * i + 1]);
}

// The consumers' turns at the tensor cores: wait for mine, later hand over.
__device__ __forceinline__ void turn_wait(int consumer) {
    asm volatile("bar.sync %0, 256;\n" ::"r"(kTurnBarrier + consumer) : "memory");
}
__device__ __forceinline__ void turn_pass(int consumer) {
    asm volatile("bar.arrive %0, 256;\n" ::"r"(kTurnBarrier + (consumer ^ 1)) : "memory");
}

// O's rows out, divided by their sums: row i = row0 + r (+ 8), features
// 8 j + 2 (l % 4) + {0, 1}; pairs as one 4-byte store where o is packed
// 16-bit along the features and aligned, else element by element.
template <int D>
__device__ __forceinline__ void store_output(const cdnn_cuda_sdpa_params_t &p, const Work &w,
                                             int64_t row, const float (&o)[D / 2],
                                             const Softmax &st) {
    const int lane = threadIdx.x % 32;
    float inv[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float sum = st.sum[h];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        inv[h] = sum > 0.0f ? 1.0f / sum : 0.0f;
    }
    const bool pairs = p.o_type != CDNN_CUDA_F32 && p.o_strides[3] == 1 &&
                       (p.o_strides[0] % 2 | p.o_strides[1] % 2 | p.o_strides[2] % 2) == 0 &&
                       (reinterpret_cast<uintptr_t>(p.o) & 3) == 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int64_t i = row + 8 * h;
        if (i >= p.q_len)
            continue;
        const int64_t base = w.batch * p.o_strides[0] + w.head * p.o_strides[1] + i * p.o_strides[2];
#pragma unroll
        for (int j = 0; j < D / 8; ++j) {
            const int64_t f = 8 * j + 2 * (lane % 4);
            const float x0 = o[4 * j + 2 * h] * inv[h], x1 = o[4 * j + 2 * h + 1] * inv[h];
            if (pairs) {
                uint32_t v;
                if (p.o_type == CDNN_CUDA_BF16)
                    v = pack_pair<CDNN_CUDA_BF16>(x0, x1);
                else
                    v = pack_pair<CDNN_CUDA_F16>(x0, x1);
                *reinterpret_cast<uint32_t *>(static_cast<uint16_t *>(p.o) + base + f) = v;
            } else {
                store_from_f32(p.o, base + f * p.o_strides[3], p.o_type, x0);
                store_from_f32(p.o, base + (f + 1) * p.o_strides[3], p.o_type, x1);
            }
        }
    }
}

template <int DType, int D, int Stages>
__device__ __forceinline__ void consume(const cdnn_cuda_sdpa_params_t &p, const Ring &ring,
                                        const Work &w, int consumer) {
    constexpr uint32_t kTileBytes = kKeys * D * 2;
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const int64_t row = int64_t(w.row0) + 64 * consumer + 16 * warp + lane / 4;
    const uint32_t q_rows = ring.q + 64 * consumer * kRowBytes;
    const float scale2 = p.scale * kLog2e;
    // Tiles from `masked_from` on cross the diagonal (or the keys' end) for
    // some row of the block.
    int64_t masked_from = p.kv_len / kKeys;
    if (p.causal)
        masked_from = min(masked_from, (int64_t(w.row0) + p.causal_offset) / kKeys);

    float s[64], o[D / 2];
    uint32_t pv[32];
    Softmax st;
    st.max[0] = st.max[1] = -INFINITY;
    st.sum[0] = st.sum[1] = 0.0f;
#pragma unroll
    for (int e = 0; e < D / 2; ++e)
        o[e] = 0.0f;
    float rescale[2];

    barrier_wait(ring.q_full, 0);
    // Tile 0: S alone.
    barrier_wait(ring.k_full, 0);
    turn_wait(consumer);
    wgmma_fence();
    score_tile<DType, D>(s, q_rows, ring.k_base);
    wgmma_commit();
    turn_pass(consumer);
    wgmma_wait<0>();
    fence_registers(s);
    if (lane == 0)
        barrier_arrive(ring.k_empty); // K_0 read
    if (0 >= masked_from)
        mask_tile(p, s, row, 0);
    softmax_tile(s, st, scale2, rescale);
    convert_p<DType>(s, pv);

    for (int32_t n = 1; n < w.tiles; ++n) {
        const int sn = n % Stages, sp = (n - 1) % Stages;
        barrier_wait(ring.k_full + 8 * sn, uint32_t(n / Stages) & 1);
        barrier_wait(ring.v_full + 8 * sp, uint32_t((n - 1) / Stages) & 1);
        turn_wait(consumer);
        wgmma_fence();
        score_tile<DType, D>(s, q_rows, ring.k_base + sn * kTileBytes);
        wgmma_commit();
        value_tile<DType, D>(o, pv, ring.v_base + sp * kTileBytes);
        wgmma_commit();
        turn_pass(consumer);
        wgmma_wait<1>(); // S_n is in; P_{n-1} V_{n-1} may still run
        fence_registers(s);
        if (lane == 0)
            barrier_arrive(ring.k_empty + 8 * sn); // K_n read
        if (n >= masked_from)
            mask_tile(p, s, row, int64_t(n) * kKeys);
        softmax_tile(s, st, scale2, rescale);
        // Meant to run beside P_{n-1} V_{n-1}; ptxas hoists this wait above
        // the softmax (bench/gpu/notes/sdpa.md, v3), so for now the overlap is
        // only between the two consumers.
        wgmma_wait<0>(); // O and P free again; V_{n-1} read
        fence_registers(o);
        fence_registers(pv);
        if (lane == 0)
            barrier_arrive(ring.v_empty + 8 * sp);
        rescale_output<D>(o, rescale);
        convert_p<DType>(s, pv);
    }
    // The last tile's P V.
    const int sl = (w.tiles - 1) % Stages;
    barrier_wait(ring.v_full + 8 * sl, uint32_t((w.tiles - 1) / Stages) & 1);
    turn_wait(consumer);
    wgmma_fence();
    value_tile<DType, D>(o, pv, ring.v_base + sl * kTileBytes);
    wgmma_commit();
    turn_pass(consumer);
    wgmma_wait<0>();
    fence_registers(o);
    if (lane == 0)
        barrier_arrive(ring.v_empty + 8 * sl);
    store_output<D>(p, w, row, o, st);
}

template <int DType, int D>
__device__ __forceinline__ void sdpa_wgmma(const cdnn_cuda_sdpa_tma_params_t &t) {
    constexpr int kStages = CDNN_CUDA_SDPA_WGMMA_STAGES(D);
    constexpr uint32_t kTileBytes = kKeys * D * 2;
    static_assert(D == 64 || D == 128, "head dims 64 and 128");
    static_assert(CDNN_CUDA_SDPA_WGMMA_SMEM(D) >=
                      kRows * D * 2 + 2 * kStages * kTileBytes + 1024 + 8 * (1 + 4 * kStages),
                  "the smem formula covers Q, the ring, its alignment and the barriers");
    extern __shared__ uint8_t dynamic_shared[];
    const uint32_t base = smem_address(dynamic_shared);
    Ring ring;
    ring.q = (base + 1023) & ~1023u;
    ring.k_base = ring.q + kRows * D * 2;
    ring.v_base = ring.k_base + kStages * kTileBytes;
    ring.q_full = ring.v_base + kStages * kTileBytes;
    ring.k_full = ring.q_full + 8;
    ring.v_full = ring.k_full + 8 * kStages;
    ring.k_empty = ring.v_full + 8 * kStages;
    ring.v_empty = ring.k_empty + 8 * kStages;
    const cdnn_cuda_sdpa_params_t &p = t.sdpa;
    const Work w = work_of(p);

    if (threadIdx.x == 0) {
        barrier_init(ring.q_full, 1);
        for (int s = 0; s < kStages; ++s) {
            barrier_init(ring.k_full + 8 * s, 1);
            barrier_init(ring.v_full + 8 * s, 1);
            barrier_init(ring.k_empty + 8 * s, 2 * 4); // one arrival a consumer warp
            barrier_init(ring.v_empty + 8 * s, 2 * 4);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        tma_prefetch_map(&t.q_map);
        tma_prefetch_map(&t.k_map);
        tma_prefetch_map(&t.v_map);
    }
    __syncthreads();

    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (threadIdx.x == 0)
            produce<D, kStages>(t, ring, w);
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int consumer = warpgroup - 1;
        if (consumer == 1)
            turn_pass(1); // consumer 0 goes first
        consume<DType, D, kStages>(p, ring, w, consumer);
        if (consumer == 0)
            turn_wait(0); // takes consumer 1's last hand-over: both barriers end empty
    }
}

} // namespace
} // namespace cdnn

#define CDNN_SDPA_WGMMA_ENTRY(dtype, name, d)                                                  \
    extern "C" __global__ void __launch_bounds__(CDNN_CUDA_SDPA_WGMMA_THREADS, 1)              \
        cdnn_cuda_sdpa_wgmma_##name##_d##d(const __grid_constant__ cdnn_cuda_sdpa_tma_params_t \
                                               params) {                                       \
        cdnn::sdpa_wgmma<dtype, d>(params);                                                    \
    }

CDNN_SDPA_WGMMA_ENTRY(CDNN_CUDA_BF16, bf16, 64)
CDNN_SDPA_WGMMA_ENTRY(CDNN_CUDA_BF16, bf16, 128)
CDNN_SDPA_WGMMA_ENTRY(CDNN_CUDA_F16, f16, 64)
CDNN_SDPA_WGMMA_ENTRY(CDNN_CUDA_F16, f16, 128)
