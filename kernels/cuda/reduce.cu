// reduce.cu -- "cuda-reduce-v1" (cuda_kernel.h): one value a row of x, each
// element read once: the row kernels read along a row, the column kernels
// across adjacent rows (a reduced leading axis).  The mode is a template
// parameter, chosen once a launch, so that each accumulation loop is only
// loads and one operation.
#include "common.cuh"

namespace cdnn {
namespace {

// A mode's accumulator: where it starts, how an element enters it, how two
// partial results combine and what the total becomes.
template <int Mode>
struct Reduction {
    __device__ __forceinline__ static float identity() {
        return Mode == CDNN_CUDA_REDUCE_MUL   ? 1.0f
               : Mode == CDNN_CUDA_REDUCE_MIN ? INFINITY
               : Mode == CDNN_CUDA_REDUCE_MAX ? -INFINITY
                                              : 0.0f;
    }
    __device__ __forceinline__ static float add(float acc, float x) {
        switch (Mode) {
        case CDNN_CUDA_REDUCE_MUL: return acc * x;
        case CDNN_CUDA_REDUCE_MIN: return fminf(acc, x);
        case CDNN_CUDA_REDUCE_MAX: return fmaxf(acc, x);
        case CDNN_CUDA_REDUCE_AMAX: return fmaxf(acc, fabsf(x));
        case CDNN_CUDA_REDUCE_NORM1: return acc + fabsf(x);
        case CDNN_CUDA_REDUCE_NORM2: return fmaf(x, x, acc);
        default: return acc + x;
        }
    }
    // Partial maxima of |x| are maxima, partial sums of |x| or x^2 sums.
    __device__ __forceinline__ static float combine(float a, float b) {
        switch (Mode) {
        case CDNN_CUDA_REDUCE_MUL: return a * b;
        case CDNN_CUDA_REDUCE_MIN: return fminf(a, b);
        case CDNN_CUDA_REDUCE_MAX:
        case CDNN_CUDA_REDUCE_AMAX: return fmaxf(a, b);
        default: return a + b;
        }
    }
    __device__ __forceinline__ static float finish(float total, int64_t cols) {
        if (Mode == CDNN_CUDA_REDUCE_AVG)
            return total / static_cast<float>(cols);
        if (Mode == CDNN_CUDA_REDUCE_NORM2)
            return sqrtf(total);
        return total;
    }
    __device__ __forceinline__ static float warp_combine(float v) {
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1)
            v = combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
        return v;
    }
};

// This thread's part of a row: the elements rank, rank + G, ... (in 16-byte
// pieces where the row is contiguous and aligned, each 8 or 4 elements).
template <int Mode, int G>
__device__ __forceinline__ float row_part(const void *x, int32_t type, int64_t cols,
                                          int64_t col_stride, int rank) {
    using R = Reduction<Mode>;
    // A warp-a-row kernel keeps every warp of the SM at 32 registers: its
    // loads in flight are its many warps', not an unrolled loop's or a
    // second chain's.  The others take two chains (half the dependent
    // latency) and two loads a turn.
    constexpr int kChains = G == 32 ? 1 : 2;
    float acc[2] = {R::identity(), R::identity()};
    int64_t done = 0;
    if (col_stride == 1 && aligned16(x)) {
        const int per16 = 16 / element_bytes(type);
        const int64_t pieces = cols / per16;
        const uint4 *vec = static_cast<const uint4 *>(x);
#pragma unroll kChains
        for (int64_t v = rank; v < pieces; v += G) {
            float values[8];
            unpack16(__ldg(vec + v), type, values);
#pragma unroll
            for (int e = 0; e < 8; ++e) // constant indices keep values[] in registers
                if (e < per16)
                    acc[e % kChains] = R::add(acc[e % kChains], values[e]);
        }
        done = pieces * per16;
    }
    for (int64_t j = done + rank; j < cols; j += G)
        acc[0] = R::add(acc[0], load_as_f32(x, j * col_stride, type));
    return R::combine(acc[0], acc[1]);
}

// G threads a row, R rows a block; a group of whole warps combines its
// warps' results through shared memory (every group of the block takes the
// same number of turns round the loop, so the block's barriers match).
template <int Mode, int G, int R>
__device__ __forceinline__ void reduce_rows(const cdnn_cuda_reduce_params_t &p) {
    using Red = Reduction<Mode>;
    constexpr int kWarps = G / 32;
    __shared__ float partial[R * kWarps];
    const int group = threadIdx.x / G, rank = threadIdx.x % G;
    for (int64_t first = int64_t(blockIdx.x) * R; first < p.rows; first += int64_t(gridDim.x) * R) {
        const int64_t row = first + group;
        float v = Red::identity();
        if (row < p.rows)
            v = row_part<Mode, G>(static_cast<const char *>(p.x) +
                                      row * p.x_row_stride * element_bytes(p.x_type),
                                  p.x_type, p.cols, p.x_col_stride, rank);
        v = Red::warp_combine(v);
        if (kWarps > 1) {
            __syncthreads(); // the previous row's partials are read
            if ((rank & 31) == 0)
                partial[threadIdx.x / 32] = v;
            __syncthreads();
            v = Red::identity();
            if (rank < kWarps)
                v = partial[group * kWarps + rank];
            v = Red::warp_combine(v);
        }
        if (row < p.rows && rank == 0)
            store_from_f32(p.y, row * p.y_row_stride, p.y_type, Red::finish(v, p.cols));
    }
}

// ---- the column kernels: a reduced leading axis, outputs adjacent in x ----

// This thread's n (<= 8) adjacent outputs from `first`, each over `turns`
// reduced indices from `begin`, `step` apart, into acc: a 16-byte load a
// turn (Loads turns unrolled, their loads in flight together) where x's
// rows are adjacent and the thread's piece whole and aligned, else one
// element a load.
template <int Mode, int Loads>
__device__ __forceinline__ void column_part(const cdnn_cuda_reduce_params_t &p, int64_t first,
                                            int n, int64_t begin, int64_t turns, int step,
                                            float (&acc)[8]) {
    using R = Reduction<Mode>;
    const int per = CDNN_CUDA_REDUCE_COLUMNS_PER_THREAD(p.x_type);
    const int64_t bytes = element_bytes(p.x_type);
    const char *x = static_cast<const char *>(p.x);
    if (n == per && p.x_row_stride == 1 && aligned16(x) && (p.x_col_stride * bytes) % 16 == 0) {
        // first is a multiple of per: its piece starts on 16 bytes.
        const int64_t pitch = p.x_col_stride * bytes / 16, stride = step * pitch;
        const uint4 *piece = reinterpret_cast<const uint4 *>(x + first * bytes) + begin * pitch;
#pragma unroll Loads
        for (int64_t t = 0; t < turns; ++t, piece += stride) {
            float values[8];
            unpack16(__ldg(piece), p.x_type, values);
#pragma unroll
            for (int e = 0; e < 8; ++e) // constant indices keep acc[] in registers
                if (e < per)
                    acc[e] = R::add(acc[e], values[e]);
        }
        return;
    }
    const int64_t stride = step * p.x_col_stride;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
        if (e >= n)
            break;
        int64_t at = (first + e) * p.x_row_stride + begin * p.x_col_stride;
        for (int64_t t = 0; t < turns; ++t, at += stride)
            acc[e] = R::add(acc[e], load_as_f32(x, at, p.x_type));
    }
}

// Block (g, s): column group g's outputs over split s of the reduced axis,
// each warp a W-th of the split's indices, the warps' results combined in
// order through shared memory; y finished when the split is the whole
// axis, else the partial results.
template <int Mode, int W, int Loads>
__device__ __forceinline__ void reduce_columns(const cdnn_cuda_reduce_columns_params_t &c,
                                               float4 (&by_warp)[W][64]) {
    using R = Reduction<Mode>;
    const cdnn_cuda_reduce_params_t &p = c.reduce;
    const int per = CDNN_CUDA_REDUCE_COLUMNS_PER_THREAD(p.x_type);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t group_first = int64_t(blockIdx.x) * 32 * per, first = group_first + lane * per;
    const int64_t left = p.rows - first;
    const int n = left <= 0 ? 0 : left < per ? int(left) : per;
    // This warp's reduced indices: begin, begin + W, ... < end.
    const int64_t begin = int64_t(blockIdx.y) * c.split_cols + warp;
    const int64_t split_end = int64_t(blockIdx.y + 1) * c.split_cols;
    const int64_t end = split_end < p.cols ? split_end : p.cols;
    const int64_t turns = end > begin ? (end - begin + W - 1) / W : 0;
    float acc[8];
#pragma unroll
    for (int e = 0; e < 8; ++e)
        acc[e] = R::identity();
    column_part<Mode, Loads>(p, first, n, begin, turns, W, acc);

#pragma unroll
    for (int k = 0; k < 2; ++k)
        if (4 * k < per)
            by_warp[warp][lane * per / 4 + k] =
                make_float4(acc[4 * k], acc[4 * k + 1], acc[4 * k + 2], acc[4 * k + 3]);
    __syncthreads();
    for (int i = threadIdx.x; i < 32 * per; i += W * 32) {
        float v = R::identity();
        for (int w = 0; w < W; ++w)
            v = R::combine(v, reinterpret_cast<const float *>(by_warp[w])[i]);
        const int64_t r = group_first + i;
        if (r >= p.rows)
            continue;
        if (c.splits == 1)
            store_from_f32(p.y, r * p.y_row_stride, p.y_type, R::finish(v, p.cols));
        else
            c.partials[blockIdx.y * p.rows + r] = v;
    }
}

// Block b: outputs 32 b.. (a lane each), warp w combining the partial
// results of splits w, w + W, ..., then the warps' in order, finished.
template <int Mode, int W>
__device__ __forceinline__ void combine_columns(const cdnn_cuda_reduce_columns_params_t &c,
                                                float (&by_warp)[W][32]) {
    using R = Reduction<Mode>;
    const cdnn_cuda_reduce_params_t &p = c.reduce;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t r = int64_t(blockIdx.x) * 32 + lane;
    float v = R::identity();
    if (r < p.rows)
#pragma unroll 4
        for (int s = warp; s < c.splits; s += W)
            v = R::combine(v, c.partials[s * p.rows + r]);
    by_warp[warp][lane] = v;
    __syncthreads();
    if (warp != 0 || r >= p.rows)
        return;
    float total = R::identity();
    for (int w = 0; w < W; ++w)
        total = R::combine(total, by_warp[w][lane]);
    store_from_f32(p.y, r * p.y_row_stride, p.y_type, R::finish(total, p.cols));
}

// The mode, from the launch's parameters, as a template argument.
template <template <int> class Body, class Params>
__device__ __forceinline__ void by_mode(int32_t mode, const Params &p) {
    switch (mode) {
    case CDNN_CUDA_REDUCE_MUL: Body<CDNN_CUDA_REDUCE_MUL>::run(p); break;
    case CDNN_CUDA_REDUCE_MIN: Body<CDNN_CUDA_REDUCE_MIN>::run(p); break;
    case CDNN_CUDA_REDUCE_MAX: Body<CDNN_CUDA_REDUCE_MAX>::run(p); break;
    case CDNN_CUDA_REDUCE_AMAX: Body<CDNN_CUDA_REDUCE_AMAX>::run(p); break;
    case CDNN_CUDA_REDUCE_AVG: Body<CDNN_CUDA_REDUCE_AVG>::run(p); break;
    case CDNN_CUDA_REDUCE_NORM1: Body<CDNN_CUDA_REDUCE_NORM1>::run(p); break;
    case CDNN_CUDA_REDUCE_NORM2: Body<CDNN_CUDA_REDUCE_NORM2>::run(p); break;
    default: Body<CDNN_CUDA_REDUCE_ADD>::run(p); break;
    }
}

template <int G, int R>
struct RowsBody {
    template <int Mode>
    struct Of {
        __device__ __forceinline__ static void run(const cdnn_cuda_reduce_params_t &p) {
            reduce_rows<Mode, G, R>(p);
        }
    };
};

// The column kernels' shared memory: a warp's 32 * per values as its lanes
// hold them (reducing), or its 32 (combining).  The kernel declares it, once
// for every mode (a __shared__ in each mode's body would be eight).
template <int W>
union ColumnsShared {
    float4 reducing[W][64];
    float combining[W][32];
};

template <int W>
struct ColumnsLaunch {
    const cdnn_cuda_reduce_columns_params_t &params;
    ColumnsShared<W> &shared;
};

template <int W, int Loads>
struct ColumnsBody {
    template <int Mode>
    struct Of {
        __device__ __forceinline__ static void run(const ColumnsLaunch<W> &l) {
            if (l.params.combine)
                combine_columns<Mode, W>(l.params, l.shared.combining);
            else
                reduce_columns<Mode, W, Loads>(l.params, l.shared.reducing);
        }
    };
};

} // namespace
} // namespace cdnn

// Every warp of an SM (2048 threads, 32 registers each) for the warp-a-row
// kernels: a short row is over quickly, so rows in flight are what feed the
// memory, and 16384 rows of 4096 take two full rounds of an H200's warps,
// not three with a tenth of the last one busy.  Three quarters of them for
// the kernels whose groups combine through shared memory, and on sm_80,
// whose ptxas spills the warp kernel at 32 registers.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define CDNN_REDUCE_WARP_SM_THREADS 2048
#else
#define CDNN_REDUCE_WARP_SM_THREADS 1536
#endif
#define CDNN_REDUCE_ROWS(NAME, G, R)                                                           \
    extern "C" __global__ void __launch_bounds__(                                              \
        G * R, ((G) == 32 ? CDNN_REDUCE_WARP_SM_THREADS : 1536) / (G * R))                     \
        cdnn_cuda_reduce_rows_##NAME(const __grid_constant__ cdnn_cuda_reduce_params_t params) { \
        cdnn::by_mode<cdnn::RowsBody<G, R>::template Of>(params.mode, params);                 \
    }
CDNN_CUDA_REDUCE_ROWS_CONFIGS(CDNN_REDUCE_ROWS)
#undef CDNN_REDUCE_ROWS

#define CDNN_REDUCE_COLUMNS(NAME, W, L, B)                                                     \
    extern "C" __global__ void __launch_bounds__(W * 32, B) cdnn_cuda_reduce_columns_##NAME(  \
        const __grid_constant__ cdnn_cuda_reduce_columns_params_t params) {                    \
        __shared__ cdnn::ColumnsShared<W> shared;                                              \
        cdnn::by_mode<cdnn::ColumnsBody<W, L>::template Of>(                                   \
            params.reduce.mode, cdnn::ColumnsLaunch<W>{params, shared});                       \
    }
CDNN_CUDA_REDUCE_COLUMNS_CONFIGS(CDNN_REDUCE_COLUMNS)
#undef CDNN_REDUCE_COLUMNS
