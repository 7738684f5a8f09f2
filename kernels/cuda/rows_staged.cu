// rows_staged.cu -- the staged row kernels (sm_90a): layer-norm, RMS-norm
// ("cuda-norm-v1") and softmax ("cuda-softmax-v1") with each row brought
// into shared memory by the bulk copy engine (cp.async.bulk, completing on
// an mbarrier) while the group of threads that owns it works on an earlier
// row.  cuda_kernel.h (CDNN_CUDA_ROWS_STAGED_CONFIGS) gives the geometry.
//
// Why: the register kernels (rows_regs.cuh) keep a row's loads in flight
// only in registers, so the rows in flight per SM were as many as the
// registers allowed (7-16), and a row's loads were idle while its group
// reduced and wrote it: 53-78% of the copy bandwidth on the H200.  Here a
// row in flight costs shared memory alone (S stages a group, 8-16 KiB a
// bf16 row at 4096-8192 columns), the next S - 1 rows of a group are
// loading while it reduces, and the sweeps over the staged row are loops
// with few live registers, so many groups fit an SM.  Layer-norm's
// statistics are one sweep over shared memory (the sums of x - x0 and its
// square, x0 the row's first element), then the output sweep; softmax
// takes its exponentials twice (sum, then output) rather than hold them.
// A group is G / 32 warps; a block holds one group or several (R, each
// on its named barrier): then one copy of the norm's scale and shift
// serves the SM's groups, where a block a group spent a copy a block
// (16 KiB a bf16 4096-column layer-norm, 6 blocks an SM) on shared memory
// that the stages could use.  A warp a row (w4s2, w2s3 of session 6)
// lost to the six-group block on every shape measured (rows.md v6).
#include "hopper_async.cuh"
#include "rows.cuh"

namespace cdnn {
namespace {

__device__ __forceinline__ uint32_t dynamic_shared_bytes() {
    uint32_t bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes;
}

// The L2 policy for x: read once, so evicted first.
__device__ __forceinline__ uint64_t evict_first_policy() {
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}

// bytes (a multiple of 16) from src (16-byte aligned) into dst, counted on
// bar's current phase.  The issuing thread's earlier reads of dst (generic
// proxy) are ordered before the copy's writes (async proxy) by the fence.
__device__ __forceinline__ void bulk_load(void *dst, const void *src, uint32_t bytes,
                                          uint64_t *bar, uint64_t policy) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    barrier_expect_bytes(smem_address(bar), bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(smem_address(dst)),
                 "l"(src), "r"(bytes), "r"(smem_address(bar)), "l"(policy)
                 : "memory");
}

// The threads of one row: G / 32 warps of the block (the whole block when
// R is 1; R such groups when the block holds several, so that they share
// the block's one copy of the norm's scale and shift instead of a copy a
// block).  Each of several groups synchronises on its own named barrier,
// so that the block's groups go their own pace.
template <int G, int R>
struct Group {
    static_assert(G % 32 == 0 && G > 32, "a block's warps");
    int rank;
    int barrier;    // R > 1 groups of warps: 1 + the group's slot (0 is __syncthreads')
    float *scratch; // 2 G / 32 floats of shared memory, the group's own

    // The block-wide group keeps __syncthreads: a barrier named at run
    // time makes ptxas reserve all 16 of the block's.
    __device__ __forceinline__ void sync() const {
        if (R == 1)
            __syncthreads();
        else
            asm volatile("bar.sync %0, %1;" ::"r"(barrier), "n"(G) : "memory");
    }
    __device__ __forceinline__ float sum(float v) const {
        float vs[1] = {v};
        reduce<false>(vs);
        return vs[0];
    }
    __device__ __forceinline__ float max(float v) const {
        float vs[1] = {v};
        reduce<true>(vs);
        return vs[0];
    }
    // Two sums at once: one exchange through shared memory for both.
    __device__ __forceinline__ void sum2(float &a, float &b) const {
        float vs[2] = {a, b};
        reduce<false>(vs);
        a = vs[0], b = vs[1];
    }

  private:
    // Each of v reduced (summed, or the maximum) over the group: warp
    // shuffles, then one exchange of the warps' partial results through
    // scratch (K G / 32 floats) for all K.
    template <bool IsMax, int K>
    __device__ __forceinline__ void reduce(float (&v)[K]) const {
        static_assert(K <= 2, "the scratch holds two values a warp");
#pragma unroll
        for (int k = 0; k < K; ++k)
            v[k] = IsMax ? warp_max(v[k]) : warp_sum(v[k]);
        constexpr int kWarps = G / 32;
        const int lane = rank & 31, warp = rank >> 5;
        sync(); // scratch may still be read by a previous reduction
        if (lane == 0) {
#pragma unroll
            for (int k = 0; k < K; ++k)
                scratch[k * kWarps + warp] = v[k];
        }
        sync();
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const float w = lane < kWarps ? scratch[k * kWarps + lane] : IsMax ? -INFINITY : 0.0f;
            v[k] = IsMax ? warp_max(w) : warp_sum(w);
        }
    }
};

// A staged row of x (type XT): 16-byte pieces of kPer elements in shared
// memory, `full` whole pieces, and `pieces` counting a last partial one.
template <int XT>
struct Staged {
    static constexpr int kPer = XT == CDNN_CUDA_F32 ? 4 : 8;
    const uint4 *piece;
    int64_t cols;
    int full, pieces;

    __device__ __forceinline__ void get(int v, float (&out)[8]) const {
        unpack16(piece[v], XT, out);
    }
};

// Copy a row that the bulk copy cannot take (strided, unaligned, or of
// bytes not a multiple of 16) into its stage by the group's threads, the
// last piece's tail as `pad`.
template <int XT, int G, int R>
__device__ __forceinline__ void copy_row(const Group<G, R> &g, const void *x, int64_t col_stride,
                                         int64_t cols, int pieces, float pad, uint4 *stage) {
    constexpr int kPer = Staged<XT>::kPer;
    void *at = stage;
    for (int64_t j = g.rank; j < int64_t(pieces) * kPer; j += G)
        store_from_f32(at, j, XT, j < cols ? load_as_f32(x, j * col_stride, XT) : pad);
}

// y's elements c .. c + kPer - 1 (c a multiple of kPer) from out: one or
// two 16-byte stores (8 bytes for 4 16-bit values) where y's row is
// contiguous and aligned (vec), else element by element within the row.
template <int kPer>
__device__ __forceinline__ void put(void *y, int32_t type, int64_t col_stride, bool vec,
                                    int64_t c, int64_t cols, const float (&out)[8]) {
    if (vec && c + kPer <= cols) {
        if (type == CDNN_CUDA_F32) {
            uint4 *at = static_cast<uint4 *>(y) + c / 4;
            __stcs(at, pack16(out, type));
            if (kPer == 8)
                __stcs(at + 1, pack16(out + 4, type));
        } else if (kPer == 8) {
            __stcs(static_cast<uint4 *>(y) + c / 8, pack16(out, type));
        } else {
            const uint4 four = pack16(out, type); // the first 4 of 8 lanes
            __stcs(static_cast<uint2 *>(y) + c / 4, make_uint2(four.x, four.y));
        }
        return;
    }
#pragma unroll
    for (int e = 0; e < kPer; ++e)
        if (c + e < cols)
            store_from_f32(y, (c + e) * col_stride, type, out[e]);
}

// The sum of a piece's kPer values, as a tree.
template <int kPer>
__device__ __forceinline__ float piece_sum(const float (&x)[8]) {
    const float four = (x[0] + x[1]) + (x[2] + x[3]);
    return kPer == 4 ? four : four + ((x[4] + x[5]) + (x[6] + x[7]));
}

// ---- the ops on a staged row -------------------------------------------------------------

// The norm's scale and shift as the block copied them into shared memory
// (f32 where the launch gave room for it, else their own types; padded
// to whole pieces of x), or NULL where absent.
struct SharedParams {
    const void *scale, *shift;
    bool f32; // else each in its own type
};

// Elements c .. c + kPer - 1 (c a multiple of kPer) of a parameter in
// shared memory, as f32; `absent` for each where there is none.
template <int kPer>
__device__ __forceinline__ void shared_params(const void *base, int32_t type, int64_t c,
                                              float absent, float (&out)[8]) {
    if (!base) {
#pragma unroll
        for (int e = 0; e < 8; ++e)
            out[e] = absent;
        return;
    }
    if (type == CDNN_CUDA_F32) {
        const uint4 *at = static_cast<const uint4 *>(base) + c / 4;
        const uint4 lo = at[0], hi = kPer == 8 ? at[1] : lo;
        out[0] = __uint_as_float(lo.x), out[1] = __uint_as_float(lo.y);
        out[2] = __uint_as_float(lo.z), out[3] = __uint_as_float(lo.w);
        out[4] = __uint_as_float(hi.x), out[5] = __uint_as_float(hi.y);
        out[6] = __uint_as_float(hi.z), out[7] = __uint_as_float(hi.w);
    } else if (kPer == 8) {
        unpack16(static_cast<const uint4 *>(base)[c / 8], type, out);
    } else {
        const uint2 four = static_cast<const uint2 *>(base)[c / 4];
        unpack16(make_uint4(four.x, four.y, 0u, 0u), type, out);
    }
}

template <int XT, int G, int R>
__device__ __forceinline__ void norm_row(const Group<G, R> &g, const Staged<XT> &r,
                                         const cdnn_cuda_norm_params_t &p, void *y, bool vec,
                                         const SharedParams &params) {
    constexpr int kPer = Staged<XT>::kPer;
    const bool rms = p.kind == CDNN_CUDA_NORM_RMS;
    const float inv_cols = 1.0f / static_cast<float>(r.cols);
    // Padding (a partial last piece) is 0: it adds nothing to either sum.
    // Each piece summed as a tree before it joins the running sum, which
    // keeps the dependent chain of adds short.
    float mean = 0.0f, second;
    if (rms) {
        float squares = 0.0f;
#pragma unroll 2
        for (int v = g.rank; v < r.pieces; v += G) {
            float x[8];
            r.get(v, x);
#pragma unroll
            for (int e = 0; e < kPer; ++e)
                x[e] *= x[e];
            squares += piece_sum<kPer>(x);
        }
        second = g.sum(squares) * inv_cols;
    } else {
        // One sweep: the sums of d = x - shift and of d^2, shift the row's
        // first element, so that E[d^2] - E[d]^2 does not cancel when the
        // mean is large against the spread (the error grows only with how
        // far that element lies from the mean, in standard deviations).
        // The last piece's padding is left out.
        float head[8];
        r.get(0, head);
        const float shift = head[0];
        float sum = 0.0f, squares = 0.0f;
#pragma unroll 2
        for (int v = g.rank; v < r.full; v += G) {
            float d[8], d2[8];
            r.get(v, d);
#pragma unroll
            for (int e = 0; e < kPer; ++e) {
                d[e] -= shift;
                d2[e] = d[e] * d[e];
            }
            sum += piece_sum<kPer>(d);
            squares += piece_sum<kPer>(d2);
        }
        if (r.full < r.pieces && g.rank == r.full % G) {
            float x[8];
            r.get(r.full, x);
#pragma unroll
            for (int e = 0; e < kPer; ++e) {
                const float d = int64_t(r.full) * kPer + e < r.cols ? x[e] - shift : 0.0f;
                sum += d;
                squares = fmaf(d, d, squares);
            }
        }
        g.sum2(sum, squares);
        const float mean_d = sum * inv_cols;
        mean = shift + mean_d;
        second = fmaxf(fmaf(-mean_d, mean_d, squares * inv_cols), 0.0f);
    }
    const float inv_std = rsqrtf(second + p.epsilon);
    // The output sweep: the scale and shift from the block's copy in
    // shared memory (params), next to the row's piece.  Not unrolled: two
    // pieces of x, scale and shift (f32) in flight spilled under the
    // 80-register bound, and deeper unrolling bought nothing (rows.md v6b).
#pragma unroll 1
    for (int v = g.rank; v < r.pieces; v += G) {
        const int64_t c = int64_t(v) * kPer;
        float x[8], scale[8], shift[8];
        r.get(v, x);
        shared_params<kPer>(params.scale, params.f32 ? CDNN_CUDA_F32 : p.scale_type, c, 1.0f,
                            scale);
        shared_params<kPer>(params.shift, params.f32 ? CDNN_CUDA_F32 : p.shift_type, c, 0.0f,
                            shift);
        float out[8] = {};
#pragma unroll
        for (int e = 0; e < kPer; ++e)
            out[e] = fmaf((x[e] - mean) * inv_std, scale[e], shift[e]);
        put<kPer>(y, p.y_type, p.y_col_stride, vec, c, r.cols, out);
    }
}

// Exponentials as exp2f of the argument scaled by log2(e), as the register
// kernels take them.
template <int XT, int G, int R>
__device__ __forceinline__ void softmax_row(const Group<G, R> &g, const Staged<XT> &r,
                                            const cdnn_cuda_softmax_params_t &p, void *y,
                                            bool vec) {
    constexpr int kPer = Staged<XT>::kPer;
    constexpr float kLog2e = 1.4426950408889634f;
    float partial = -INFINITY; // padding is -inf: no maximum, exp() 0
#pragma unroll 2
    for (int v = g.rank; v < r.pieces; v += G) {
        float x[8];
        r.get(v, x);
#pragma unroll
        for (int e = 0; e < kPer; ++e)
            partial = fmaxf(partial, x[e]);
    }
    const float row_max = g.max(partial);
    const float shifted_max = row_max * kLog2e;
    partial = 0.0f;
#pragma unroll 2
    for (int v = g.rank; v < r.pieces; v += G) {
        float x[8];
        r.get(v, x);
#pragma unroll
        for (int e = 0; e < kPer; ++e)
            x[e] = exp2f(fmaf(x[e], kLog2e, -shifted_max));
        partial += piece_sum<kPer>(x);
    }
    const float sum = g.sum(partial);
    if (p.log) {
        const float shift = row_max + logf(sum);
#pragma unroll 2
        for (int v = g.rank; v < r.pieces; v += G) {
            float x[8], out[8] = {};
            r.get(v, x);
#pragma unroll
            for (int e = 0; e < kPer; ++e)
                out[e] = x[e] - shift;
            put<kPer>(y, p.y_type, p.y_col_stride, vec, int64_t(v) * kPer, r.cols, out);
        }
        return;
    }
    const float inv_sum = 1.0f / sum;
#pragma unroll 2
    for (int v = g.rank; v < r.pieces; v += G) {
        float x[8], out[8] = {};
        r.get(v, x);
#pragma unroll
        for (int e = 0; e < kPer; ++e)
            out[e] = exp2f(fmaf(x[e], kLog2e, -shifted_max)) * inv_sum;
        put<kPer>(y, p.y_type, p.y_col_stride, vec, int64_t(v) * kPer, r.cols, out);
    }
}

// ---- the pipeline ----------------------------------------------------------------------

// Both ops' parameter structs start with rows, cols, x, x_row_stride,
// x_col_stride, y, y_row_stride, y_col_stride.
template <typename Params>
__device__ __forceinline__ void *row_of_y(const Params &p, int64_t row) {
    return static_cast<char *>(p.y) + row * p.y_row_stride * element_bytes(p.y_type);
}

// The rows of this thread's group through its S stages: Op(group, staged
// row, y's row, whether y's row takes 16-byte stores) on each.  Shared
// memory (dynamic alone): the header (barriers, scratch), the stages, then
// what Prepare(where, bytes there) puts after them before the first row:
// it returns the bytes it needs at least (called once with where NULL to
// ask), and runs while the groups' first rows load.
template <int G, int R, int S, int XT, typename Params, typename Prepare, typename Op>
__device__ __forceinline__ void staged_rows(const Params &p, float pad, Prepare prepare, Op op) {
    static_assert(8 * R * S <= 256, "the barriers fit the header's first half");
    static_assert(R <= 15 && R * 2 * (G / 32) <= 64,
                  "a named barrier a group; its scratch in the header's second half");
    extern __shared__ __align__(128) uint4 shared[];
    constexpr int kBytes = XT == CDNN_CUDA_F32 ? 4 : 2;
    const int64_t stage_bytes = CDNN_CUDA_ROWS_STAGE_BYTES(p.cols, kBytes);
    const int64_t staged = CDNN_CUDA_ROWS_STAGED_SMEM(R, S, p.cols, kBytes);
    const int64_t available = int64_t(dynamic_shared_bytes()) - staged;
    if (blockDim.x != G * R || p.cols < 1 || available < prepare(nullptr, 0))
        return; // not the launch the handler makes: do nothing
    char *base = reinterpret_cast<char *>(shared);
    uint64_t *barriers = reinterpret_cast<uint64_t *>(base);
    float *scratch = reinterpret_cast<float *>(base + 256);
    uint4 *stages = reinterpret_cast<uint4 *>(base + CDNN_CUDA_ROWS_STAGED_HEADER);
    const int slot = threadIdx.x / G;
    const Group<G, R> g{int(threadIdx.x % G), 1 + slot, scratch + slot * 2 * (G / 32)};
    uint4 *mine = stages + int64_t(slot) * S * (stage_bytes / 16);
    uint64_t *bars = barriers + slot * S;
    const int64_t row_bytes = p.cols * kBytes;
    const bool bulk = p.x_col_stride == 1 && aligned16(p.x) && row_bytes % 16 == 0 &&
                      (p.x_row_stride * kBytes) % 16 == 0;
    // Group (slot, block) takes rows slot * grid + block + k * step: the
    // rows of the last, partial round go to the first slots of every block
    // rather than to every slot of the first blocks, so that no SM holds
    // more than one row above the mean (16384 rows on 132 x 6 groups: 125
    // an SM at most, where block-major order gave the first 91 SMs 126 and
    // the rest 120; measured: no change beyond the runs' spread, rows.md v8).
    const int64_t step = int64_t(gridDim.x) * R;
    const int64_t first = int64_t(slot) * gridDim.x + blockIdx.x;
    const char *x = static_cast<const char *>(p.x);
    uint64_t policy = 0;
    // The first S rows of each group are asked for before anything else:
    // the block's copy of the parameters (session 7: scalar loads one
    // after another, before any row was asked for) now runs under them.
    if (bulk && g.rank == 0) {
        policy = evict_first_policy();
        for (int s = 0; s < S; ++s)
            barrier_init(smem_address(&bars[s]), 1); // the issuing thread's arrival
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int s = 0; s < S; ++s) {
            const int64_t row = first + s * step;
            if (row < p.rows)
                bulk_load(mine + s * (stage_bytes / 16), x + row * p.x_row_stride * kBytes,
                          uint32_t(row_bytes), &bars[s], policy);
        }
    }
    prepare(base + staged, available);
    __syncthreads(); // what prepare wrote, and the barriers initialised, before any use

    Staged<XT> r;
    r.cols = p.cols;
    r.pieces = int(stage_bytes / 16);
    r.full = int(p.cols / Staged<XT>::kPer);
    int s = 0;
    uint32_t parity = 0;
    for (int64_t row = first; row < p.rows; row += step) {
        uint4 *stage = mine + s * (stage_bytes / 16);
        if (bulk) {
            barrier_wait(smem_address(&bars[s]), parity);
        } else {
            copy_row<XT>(g, x + row * p.x_row_stride * kBytes, p.x_col_stride, p.cols,
                         r.pieces, pad, stage);
            g.sync();
        }
        r.piece = stage;
        void *y = row_of_y(p, row);
        op(g, r, y, p.y_col_stride == 1 && aligned16(y));
        g.sync(); // every thread done with the stage before it is refilled
        const int64_t next = row + S * step;
        if (bulk && g.rank == 0 && next < p.rows)
            bulk_load(stage, x + next * p.x_row_stride * kBytes, uint32_t(row_bytes), &bars[s],
                      policy);
        if (++s == S) {
            s = 0;
            parity ^= 1;
        }
    }
}

// The block's copy of a parameter: its cols elements, as f32 or in its
// own type, then 0 up to `padded` (x's last piece; read, never used).  A
// contiguous, 16-byte aligned parameter is read in 16-byte pieces, two
// loads a thread in flight at once (a 768-thread block: a 8192-column
// bf16 parameter in one round).
__device__ __forceinline__ void copy_param(const void *param, int64_t stride, int32_t type,
                                           int64_t cols, int64_t padded, bool as_f32,
                                           void *to) {
    const int per = 16 / element_bytes(type); // elements a 16-byte piece
    int64_t done = 0;                         // elements copied as whole pieces
    if (stride == 1 && aligned16(param)) {
        const uint4 *src = static_cast<const uint4 *>(param);
        const int64_t whole = cols / per;
        for (int64_t first = threadIdx.x; first < whole; first += 2 * blockDim.x) {
            uint4 raw[2];
#pragma unroll
            for (int u = 0; u < 2; ++u) {
                const int64_t v = first + u * blockDim.x;
                raw[u] = v < whole ? __ldg(src + v) : make_uint4(0u, 0u, 0u, 0u);
            }
#pragma unroll
            for (int u = 0; u < 2; ++u) {
                const int64_t v = first + u * blockDim.x;
                if (v >= whole)
                    break;
                if (!as_f32) {
                    static_cast<uint4 *>(to)[v] = raw[u];
                    continue;
                }
                float f[8];
                unpack16(raw[u], type, f);
                uint4 *at = static_cast<uint4 *>(to) + v * per / 4;
                at[0] = pack16(f, CDNN_CUDA_F32);
                if (per == 8)
                    at[1] = pack16(f + 4, CDNN_CUDA_F32);
            }
        }
        done = whole * per;
    }
    const int32_t to_type = as_f32 ? CDNN_CUDA_F32 : type;
    for (int64_t j = done + threadIdx.x; j < padded; j += blockDim.x)
        store_from_f32(to, j, to_type, j < cols ? load_as_f32(param, j * stride, type) : 0.0f);
}

// The norm's scale and shift go to shared memory as f32 where the launch
// gives them room (cuda_kernel.h CDNN_CUDA_ROWS_STAGED_PARAM with 4 bytes
// each; two conversions an element fewer in the output sweep), else in
// their own types.
template <int G, int R, int S, int XT>
__device__ __forceinline__ void norm_staged_typed(const cdnn_cuda_norm_params_t &p) {
    constexpr int kBytes = XT == CDNN_CUDA_F32 ? 4 : 2;
    const int64_t padded = CDNN_CUDA_ROWS_STAGE_BYTES(p.cols, kBytes) / kBytes;
    const auto bytes = [&](const void *param, int element) -> int64_t {
        return param ? CDNN_CUDA_ROWS_STAGED_PARAM(p.cols, kBytes, element) : 0;
    };
    const int64_t own = bytes(p.scale, element_bytes(p.scale_type)) +
                        bytes(p.shift, element_bytes(p.shift_type));
    const int64_t as_f32 = bytes(p.scale, 4) + bytes(p.shift, 4);
    SharedParams params{nullptr, nullptr, false};
    staged_rows<G, R, S, XT>(
        p, 0.0f,
        [&](char *where, int64_t available) -> int64_t {
            if (where) {
                const bool f32 = available >= as_f32;
                params.f32 = f32;
                const int64_t scale_bytes =
                    bytes(p.scale, f32 ? 4 : element_bytes(p.scale_type));
                if (p.scale) {
                    copy_param(p.scale, p.scale_stride, p.scale_type, p.cols, padded, f32,
                               where);
                    params.scale = where;
                }
                if (p.shift) {
                    copy_param(p.shift, p.shift_stride, p.shift_type, p.cols, padded, f32,
                               where + scale_bytes);
                    params.shift = where + scale_bytes;
                }
            }
            return own;
        },
        [&](const Group<G, R> &g, const Staged<XT> &r, void *y, bool vec) {
            norm_row<XT>(g, r, p, y, vec, params);
        });
}

template <int G, int R, int S, int XT>
__device__ __forceinline__ void softmax_staged_typed(const cdnn_cuda_softmax_params_t &p) {
    staged_rows<G, R, S, XT>(
        p, -INFINITY, [](char *, int64_t) -> int64_t { return 0; },
        [&](const Group<G, R> &g, const Staged<XT> &r, void *y, bool vec) {
            softmax_row<XT>(g, r, p, y, vec);
        });
}

template <int G, int R, int S>
__device__ __forceinline__ void norm_staged(const cdnn_cuda_norm_params_t &p) {
    switch (p.x_type) {
    case CDNN_CUDA_BF16: norm_staged_typed<G, R, S, CDNN_CUDA_BF16>(p); break;
    case CDNN_CUDA_F16: norm_staged_typed<G, R, S, CDNN_CUDA_F16>(p); break;
    default: norm_staged_typed<G, R, S, CDNN_CUDA_F32>(p); break;
    }
}

template <int G, int R, int S>
__device__ __forceinline__ void softmax_staged(const cdnn_cuda_softmax_params_t &p) {
    switch (p.x_type) {
    case CDNN_CUDA_BF16: softmax_staged_typed<G, R, S, CDNN_CUDA_BF16>(p); break;
    case CDNN_CUDA_F16: softmax_staged_typed<G, R, S, CDNN_CUDA_F16>(p); break;
    default: softmax_staged_typed<G, R, S, CDNN_CUDA_F32>(p); break;
    }
}

} // namespace
} // namespace cdnn

// At most 80 registers (CDNN_CUDA_ROWS_STAGED_SM_THREADS threads' worth of
// blocks an SM, the residency the handler sizes its grid by): the rows in
// flight take shared memory, not registers, and more resident warps hide
// the sweeps' shared-memory latency; unbounded, ptxas took 96-150.
#define CDNN_ROWS_STAGED_BOUNDS(G, R)                                                          \
    __launch_bounds__(G * R, CDNN_CUDA_ROWS_STAGED_SM_THREADS / (G * R))
#define CDNN_ROWS_STAGED(NAME, G, R, S)                                                        \
    extern "C" __global__ void CDNN_ROWS_STAGED_BOUNDS(G, R)                                   \
        cdnn_cuda_norm_staged_##NAME(const __grid_constant__ cdnn_cuda_norm_params_t params) { \
        cdnn::norm_staged<G, R, S>(params);                                                    \
    }                                                                                          \
    extern "C" __global__ void CDNN_ROWS_STAGED_BOUNDS(G, R) cdnn_cuda_softmax_staged_##NAME(  \
        const __grid_constant__ cdnn_cuda_softmax_params_t params) {                           \
        cdnn::softmax_staged<G, R, S>(params);                                                 \
    }
CDNN_CUDA_ROWS_STAGED_CONFIGS(CDNN_ROWS_STAGED)
#undef CDNN_ROWS_STAGED
#undef CDNN_ROWS_STAGED_BOUNDS
