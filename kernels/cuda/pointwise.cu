// pointwise.cu -- "cuda-pointwise-v1": a chain of elementwise ops over
// broadcast operands, one read of each input element and one write of the
// output, whatever the chain's length.
//
// The chain is a postfix program (cuda_kernel.h) interpreted per element
// on an f32 stack that lives in registers: the stack depth is a compile-time
// bound and every push and pop is unrolled against it, so no stack slot is
// ever indexed by a run-time value (which would put the stack in local
// memory).  The interpreter's branches are uniform across the grid (every
// thread runs the same program), so they cost issue slots, not divergence.
#include "common.cuh"

namespace cdnn {
namespace {

constexpr int kStack = CDNN_CUDA_POINTWISE_MAX_STACK;
constexpr int kElementsPerThread = 4;

__device__ __forceinline__ float apply_unary(uint8_t op, float x) {
    switch (op) {
    case CDNN_CUDA_PW_NEG: return -x;
    case CDNN_CUDA_PW_ABS: return fabsf(x);
    case CDNN_CUDA_PW_EXP: return expf(x);
    case CDNN_CUDA_PW_LOG: return logf(x);
    case CDNN_CUDA_PW_SQRT: return sqrtf(x);
    case CDNN_CUDA_PW_RSQRT: return rsqrtf(x);
    case CDNN_CUDA_PW_RECIPROCAL: return 1.0f / x;
    case CDNN_CUDA_PW_SIGMOID: return sigmoid(x);
    case CDNN_CUDA_PW_RELU: return fmaxf(x, 0.0f);
    case CDNN_CUDA_PW_GELU: return gelu_erf(x);
    case CDNN_CUDA_PW_GELU_TANH: return gelu_tanh(x);
    case CDNN_CUDA_PW_SILU: return x * sigmoid(x);
    default: return tanhf(x); // CDNN_CUDA_PW_TANH
    }
}

__device__ __forceinline__ float apply_binary(uint8_t op, float a, float b) {
    switch (op) {
    case CDNN_CUDA_PW_ADD: return a + b;
    case CDNN_CUDA_PW_SUB: return a - b;
    case CDNN_CUDA_PW_MUL: return a * b;
    case CDNN_CUDA_PW_DIV: return a / b;
    case CDNN_CUDA_PW_MAX: return fmaxf(a, b);
    case CDNN_CUDA_PW_MIN: return fminf(a, b);
    default: return powf(a, b); // CDNN_CUDA_PW_POW
    }
}

// The offset of element i (a linear index of the output) in an operand of
// the given strides.  Rank 1, what the handler makes of packed operands,
// needs no division.
__device__ __forceinline__ int64_t offset_of(const cdnn_cuda_pointwise_params_t &p,
                                             const int64_t *strides, int64_t i) {
    if (p.rank <= 1)
        return p.rank == 1 ? i * strides[0] : 0;
    int64_t offset = 0;
#pragma unroll
    for (int d = CDNN_CUDA_POINTWISE_MAX_RANK - 1; d >= 0; --d) {
        if (d >= p.rank)
            continue;
        offset += (i % p.shape[d]) * strides[d];
        i /= p.shape[d];
    }
    return offset;
}

// The stack, in registers: slot 0 is the top, and a push or a pop moves
// every slot by one.  Only constant indices touch it, so the compiler can
// keep it in registers; indexing slots by the run-time depth put it in
// local memory (a 384-byte frame a thread, more than L1 holds for a full
// SM), which throttled the kernel to a sixth of the copy bandwidth.
template <int W>
struct Stack {
    float slot[kStack][W];

    __device__ __forceinline__ void push(const float (&v)[W]) {
#pragma unroll
        for (int d = kStack - 1; d > 0; --d)
#pragma unroll
            for (int w = 0; w < W; ++w)
                slot[d][w] = slot[d - 1][w];
#pragma unroll
        for (int w = 0; w < W; ++w)
            slot[0][w] = v[w];
    }
    // The two top slots become one: top = op(second, top).
    __device__ __forceinline__ void combine(uint8_t op) {
#pragma unroll
        for (int w = 0; w < W; ++w)
            slot[0][w] = apply_binary(op, slot[1][w], slot[0][w]);
#pragma unroll
        for (int d = 1; d < kStack - 1; ++d)
#pragma unroll
            for (int w = 0; w < W; ++w)
                slot[d][w] = slot[d + 1][w];
    }
};

// Run the program on W elements at once (the stack holds W lanes per
// slot), so that the interpreter's decoding is paid once per W elements.
template <int W>
__device__ __forceinline__ void run_program(const cdnn_cuda_pointwise_params_t &p,
                                            const float (&inputs)[CDNN_CUDA_POINTWISE_MAX_INPUTS][W],
                                            float (&result)[W]) {
    Stack<W> stack;
    for (int pc = 0; pc < p.program_length; ++pc) {
        const uint8_t op = p.program[pc], arg = p.operand[pc];
        if (op == CDNN_CUDA_PW_PUSH_INPUT) {
            // Input arg chosen by masks on the bits: branches or selects on
            // arg were merged back into a load indexed by arg, which put
            // inputs[] in local memory.
            uint32_t mask[CDNN_CUDA_POINTWISE_MAX_INPUTS];
#pragma unroll
            for (int t = 0; t < CDNN_CUDA_POINTWISE_MAX_INPUTS; ++t)
                mask[t] = arg == t ? 0xffffffffu : 0u;
            float v[W];
#pragma unroll
            for (int w = 0; w < W; ++w) {
                uint32_t bits = 0;
#pragma unroll
                for (int t = 0; t < CDNN_CUDA_POINTWISE_MAX_INPUTS; ++t)
                    bits |= __float_as_uint(inputs[t][w]) & mask[t];
                v[w] = __uint_as_float(bits);
            }
            stack.push(v);
        } else if (op == CDNN_CUDA_PW_PUSH_CONST) {
            float v[W];
            const float c = p.constants[arg];
#pragma unroll
            for (int w = 0; w < W; ++w)
                v[w] = c;
            stack.push(v);
        } else if (op < CDNN_CUDA_PW_ADD) {
#pragma unroll
            for (int w = 0; w < W; ++w)
                stack.slot[0][w] = apply_unary(op, stack.slot[0][w]);
        } else {
            stack.combine(op);
        }
    }
#pragma unroll
    for (int w = 0; w < W; ++w)
        result[w] = stack.slot[0][w];
}

// Element by element, for any strides: each thread first loads all inputs
// of kElementsPerThread elements (independent loads in flight), then runs
// the program on them.  Consecutive threads take consecutive elements, so
// packed operands coalesce.
__device__ __forceinline__ void pointwise_any(const cdnn_cuda_pointwise_params_t &p, int64_t first) {
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t base = first + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; base < p.count;
         base += stride * kElementsPerThread) {
        float inputs[CDNN_CUDA_POINTWISE_MAX_INPUTS][kElementsPerThread] = {};
#pragma unroll
        for (int u = 0; u < kElementsPerThread; ++u) {
            const int64_t i = base + u * stride;
#pragma unroll
            for (int t = 0; t < CDNN_CUDA_POINTWISE_MAX_INPUTS; ++t)
                if (i < p.count && t < p.input_count)
                    inputs[t][u] = load_as_f32(p.in[t], offset_of(p, p.in_strides[t], i),
                                               p.in_types[t]);
        }
        float result[kElementsPerThread];
        run_program(p, inputs, result);
#pragma unroll
        for (int u = 0; u < kElementsPerThread; ++u) {
            const int64_t i = base + u * stride;
            if (i < p.count)
                store_from_f32(p.out, offset_of(p, p.out_strides, i), p.out_type, result[u]);
        }
    }
}

// Whether the 16-byte path applies: one dimension, the output and every
// input either contiguous and 16-byte aligned or a broadcast scalar.
__device__ __forceinline__ bool vectorisable(const cdnn_cuda_pointwise_params_t &p) {
    if (p.rank != 1 || p.out_strides[0] != 1 || !aligned16(p.out))
        return false;
    for (int t = 0; t < p.input_count; ++t)
        if (p.in_strides[t][0] != 0 && (p.in_strides[t][0] != 1 || !aligned16(p.in[t])))
            return false;
    return true;
}

// 8 consecutive elements at `first` of a contiguous operand, in 16-byte
// loads (two for f32, one for f16/bf16).  The f32 case is spelled out so
// that no write can reach past out[7] on any path: a possible one (the
// second half through unpack16 at out + 4) kept the compiler from holding
// the callers' arrays in registers.
__device__ __forceinline__ void load8(const void *base, int32_t type, int64_t first,
                                      float (&out)[8]) {
    const char *bytes = static_cast<const char *>(base) + first * element_bytes(type);
    const uint4 *vec = reinterpret_cast<const uint4 *>(bytes);
    if (type != CDNN_CUDA_F32) {
        unpack16(__ldg(vec), type, out);
        return;
    }
    const uint4 lo = __ldg(vec), hi = __ldg(vec + 1);
    const uint32_t words[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int e = 0; e < 8; ++e)
        out[e] = __uint_as_float(words[e]);
}

__device__ __forceinline__ void store8(void *base, int32_t type, int64_t first, const float *v) {
    uint4 *vec = reinterpret_cast<uint4 *>(static_cast<char *>(base) + first * element_bytes(type));
    vec[0] = pack16(v, type);
    if (type == CDNN_CUDA_F32)
        vec[1] = pack16(v + 4, type);
}

// The 16-byte path: each thread takes 8 consecutive elements at a time;
// returns where the elements it leaves to pointwise_any begin.
__device__ __forceinline__ int64_t pointwise_vectorised(const cdnn_cuda_pointwise_params_t &p) {
    const int64_t groups = p.count / 8;
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
        float inputs[CDNN_CUDA_POINTWISE_MAX_INPUTS][8] = {};
#pragma unroll
        for (int t = 0; t < CDNN_CUDA_POINTWISE_MAX_INPUTS; ++t) {
            if (t >= p.input_count)
                continue;
            if (p.in_strides[t][0] == 0) {
                const float scalar = load_as_f32(p.in[t], 0, p.in_types[t]);
#pragma unroll
                for (int u = 0; u < 8; ++u)
                    inputs[t][u] = scalar;
            } else {
                load8(p.in[t], p.in_types[t], g * 8, inputs[t]);
            }
        }
        float result[8];
        run_program(p, inputs, result);
        store8(p.out, p.out_type, g * 8, result);
    }
    return groups * 8;
}

__device__ __forceinline__ void pointwise(const cdnn_cuda_pointwise_params_t &p) {
    const int64_t rest = vectorisable(p) ? pointwise_vectorised(p) : 0;
    pointwise_any(p, rest);
}

} // namespace
} // namespace cdnn

extern "C" __global__ void __launch_bounds__(256)
    cdnn_cuda_pointwise(const __grid_constant__ cdnn_cuda_pointwise_params_t params) {
    cdnn::pointwise(params);
}

// ---- cdnn_cuda_pointwise_chain: the common short programs, specialised ----
//
// The interpreter above costs a decode and a stack shuffle per instruction
// per 8 elements, which at 2 bytes an element keeps it far from the memory's
// rate.  The programs of one binary op over two inputs and an optional
// activation (x + y, then relu), or one activation of one input, are
// compiled here for each op pair, chosen once per launch (the same f32
// functions as the interpreter's).  The handler launches this kernel for
// those programs alone (cuda_kernel.h); it holds no interpreter, so that
// its registers stay few.

namespace cdnn {
namespace {

// Groups of 8 a thread has in flight on the packed 16-bit path: 4 for the
// cheap activations (the loads are all there is), 2 for those with a long
// f32 sequence (erf, tanh, exp), whose registers would otherwise set the
// whole kernel's.  The f32 path (any operand f32 or a scalar) holds f32
// values: 2 groups for the cheap activations, 1 for the others.
template <int U>
__host__ __device__ constexpr int chain_unroll() {
    return U == 0 || U == CDNN_CUDA_PW_RELU ? 4 : 2;
}
template <int U>
__host__ __device__ constexpr int chain_unroll_f32() {
    return U == 0 || U == CDNN_CUDA_PW_RELU ? 2 : 1;
}

// The binary op's result (B 0: none, a alone), then the activation U (0: none).
template <int B, int U>
__device__ __forceinline__ float chain_apply(float a, float b) {
    const float v = B == 0 ? a : apply_binary(B, a, b);
    return U == 0 ? v : apply_unary(U, v);
}

// 8 elements of a rank-1 operand from element 8 * group: a scalar repeated
// (stride 0) or a packed, aligned run.
__device__ __forceinline__ void chain_load(const void *in, int32_t type, bool scalar,
                                           int64_t group, float (&out)[8]) {
    if (scalar) {
        const float v = load_as_f32(in, 0, type);
#pragma unroll
        for (int e = 0; e < 8; ++e)
            out[e] = v;
        return;
    }
    load8(in, type, group * 8, out);
}

// The 16-byte path when both operands and the output are 16-bit and
// neither operand is a scalar: N groups of 8 a thread, held as loaded (one
// 16-byte register quad an operand a group) until all N have been asked
// for, converted only when used -- half the registers of f32 values, so
// more threads and more bytes in flight an SM.
template <int B, int U, int N>
__device__ __forceinline__ void chain_packed(const cdnn_cuda_pointwise_params_t &p,
                                             const uint4 *in_a, const uint4 *in_b,
                                             int32_t type_a, int32_t type_b, int64_t groups,
                                             int64_t first, int64_t threads) {
    for (int64_t g = first; g < groups; g += threads * N) {
        uint4 raw_a[N], raw_b[N];
#pragma unroll
        for (int u = 0; u < N; ++u) {
            const int64_t gu = g + u * threads;
            if (gu < groups) {
                raw_a[u] = __ldg(in_a + gu);
                if (B != 0)
                    raw_b[u] = __ldg(in_b + gu);
            }
        }
#pragma unroll
        for (int u = 0; u < N; ++u) {
            const int64_t gu = g + u * threads;
            if (gu >= groups)
                continue;
            float x[8], y[8] = {}, out[8];
            unpack16(raw_a[u], type_a, x);
            if (B != 0)
                unpack16(raw_b[u], type_b, y);
#pragma unroll
            for (int e = 0; e < 8; ++e)
                out[e] = chain_apply<B, U>(x[e], y[e]);
            static_cast<uint4 *>(p.out)[gu] = pack16(out, p.out_type);
        }
    }
}

// The 16-byte path (vectorisable(p)): groups of 8 a thread in flight, then
// the last count % 8 elements one a thread.
template <int B, int U>
__device__ __forceinline__ void chain_vectorised(const cdnn_cuda_pointwise_params_t &p, int a,
                                                 int b) {
    const void *in_a = p.in[a], *in_b = p.in[b];
    const int32_t type_a = p.in_types[a], type_b = p.in_types[b];
    const bool scalar_a = p.in_strides[a][0] == 0, scalar_b = p.in_strides[b][0] == 0;
    const int64_t groups = p.count / 8;
    const int64_t threads = int64_t(gridDim.x) * blockDim.x;
    const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const bool packed = type_a != CDNN_CUDA_F32 && (B == 0 || type_b != CDNN_CUDA_F32) &&
                        p.out_type != CDNN_CUDA_F32 && !scalar_a && (B == 0 || !scalar_b);
    if (packed) {
        chain_packed<B, U, chain_unroll<U>()>(p, static_cast<const uint4 *>(in_a),
                                              static_cast<const uint4 *>(in_b), type_a, type_b,
                                              groups, first, threads);
    } else {
        constexpr int kChainUnrollF32 = chain_unroll_f32<U>();
        for (int64_t g = first; g < groups; g += threads * kChainUnrollF32) {
            float x[kChainUnrollF32][8], y[kChainUnrollF32][8];
#pragma unroll
            for (int u = 0; u < kChainUnrollF32; ++u) {
                const int64_t gu = g + u * threads;
                if (gu >= groups)
                    continue;
                chain_load(in_a, type_a, scalar_a, gu, x[u]);
                if (B != 0)
                    chain_load(in_b, type_b, scalar_b, gu, y[u]);
            }
#pragma unroll
            for (int u = 0; u < kChainUnrollF32; ++u) {
                const int64_t gu = g + u * threads;
                if (gu >= groups)
                    continue;
                float out[8];
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    out[e] = chain_apply<B, U>(x[u][e], B != 0 ? y[u][e] : 0.0f);
                store8(p.out, p.out_type, gu * 8, out);
            }
        }
    }
    const int64_t i = groups * 8 + first;
    if (i < p.count) {
        const float va = load_as_f32(in_a, scalar_a ? 0 : i, type_a);
        const float vb = B != 0 ? load_as_f32(in_b, scalar_b ? 0 : i, type_b) : 0.0f;
        store_from_f32(p.out, i, p.out_type, chain_apply<B, U>(va, vb));
    }
}

// Any strides: element by element, as the interpreter's pointwise_any.
template <int B, int U>
__device__ __forceinline__ void chain_any(const cdnn_cuda_pointwise_params_t &p, int a, int b) {
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.count; i += stride) {
        const float va = load_as_f32(p.in[a], offset_of(p, p.in_strides[a], i), p.in_types[a]);
        const float vb = B != 0 ? load_as_f32(p.in[b], offset_of(p, p.in_strides[b], i),
                                              p.in_types[b])
                                : 0.0f;
        store_from_f32(p.out, offset_of(p, p.out_strides, i), p.out_type,
                       chain_apply<B, U>(va, vb));
    }
}

template <int B, int U>
__device__ __forceinline__ void chain_run(const cdnn_cuda_pointwise_params_t &p, int a, int b) {
    if (vectorisable(p))
        chain_vectorised<B, U>(p, a, b);
    else
        chain_any<B, U>(p, a, b);
}

// The activation as a compile-time argument; false for one not specialised.
template <int B>
__device__ __forceinline__ bool chain_unary(const cdnn_cuda_pointwise_params_t &p, int unary,
                                            int a, int b) {
    switch (unary) {
    case 0: if (B == 0) return false; chain_run<B, 0>(p, a, b); return true;
    case CDNN_CUDA_PW_RELU: chain_run<B, CDNN_CUDA_PW_RELU>(p, a, b); return true;
    case CDNN_CUDA_PW_GELU: chain_run<B, CDNN_CUDA_PW_GELU>(p, a, b); return true;
    case CDNN_CUDA_PW_GELU_TANH: chain_run<B, CDNN_CUDA_PW_GELU_TANH>(p, a, b); return true;
    case CDNN_CUDA_PW_SILU: chain_run<B, CDNN_CUDA_PW_SILU>(p, a, b); return true;
    case CDNN_CUDA_PW_SIGMOID: chain_run<B, CDNN_CUDA_PW_SIGMOID>(p, a, b); return true;
    case CDNN_CUDA_PW_TANH: chain_run<B, CDNN_CUDA_PW_TANH>(p, a, b); return true;
    default: return false;
    }
}

// Runs p if its program is a short chain this kernel specialises
// (cuda_kernel.h, CDNN_CUDA_PW_CHAIN_*): in[a] then an activation; or
// in[a] op in[b], then an activation or none.
__device__ __forceinline__ bool chain(const cdnn_cuda_pointwise_params_t &p) {
    const int n = p.program_length;
    if (n < 2 || n > 4 || p.program[0] != CDNN_CUDA_PW_PUSH_INPUT)
        return false;
    const int a = p.operand[0];
    if (n == 2)
        return chain_unary<0>(p, p.program[1], a, a);
    if (p.program[1] != CDNN_CUDA_PW_PUSH_INPUT)
        return false;
    const int b = p.operand[1];
    const int unary = n == 4 ? p.program[3] : 0;
    switch (p.program[2]) {
    case CDNN_CUDA_PW_ADD: return chain_unary<CDNN_CUDA_PW_ADD>(p, unary, a, b);
    case CDNN_CUDA_PW_SUB: return chain_unary<CDNN_CUDA_PW_SUB>(p, unary, a, b);
    case CDNN_CUDA_PW_MUL: return chain_unary<CDNN_CUDA_PW_MUL>(p, unary, a, b);
    case CDNN_CUDA_PW_MAX: return chain_unary<CDNN_CUDA_PW_MAX>(p, unary, a, b);
    case CDNN_CUDA_PW_MIN: return chain_unary<CDNN_CUDA_PW_MIN>(p, unary, a, b);
    default: return false;
    }
}

} // namespace
} // namespace cdnn

// A program the kernel does not specialise is a broken launch (the handler
// rules it out): trap, so that the launch fails instead of leaving the
// output unwritten.
// 3 blocks an SM (at most 85 registers): 96 KB of loads in flight an SM on
// the packed path.  At 4 (64 registers) the f32 paths of the long
// activations spilled.
extern "C" __global__ void __launch_bounds__(256, 3)
    cdnn_cuda_pointwise_chain(const __grid_constant__ cdnn_cuda_pointwise_params_t params) {
    if (!cdnn::chain(params))
        __trap();
}
