/*
 * cuda_kernel.h -- the ABI between cdnn's CUDA kernels and whoever launches
 * them (the `kernels` provider's dispatch handlers, the tests, the benches).
 *
 * Every kernel is an `extern "C" __global__` function of ONE by-value
 * argument, the parameter struct of its signature, launched through the
 * driver API:
 *
 *     cdnn_cuda_matmul_params_t p = {...};
 *     void *args[] = {&p};
 *     cuLaunchKernel(fn, grid.x, grid.y, grid.z, block, 1, 1, smem, stream,
 *                    args, NULL);
 *
 * The structs hold only fixed-width integers, floats and pointers, with the
 * 8-byte members first, so that gcc (the host) and nvcc (the device) lay
 * them out alike on x86-64; their sizes are pinned below.  Pointers are
 * DEVICE addresses (a CUdeviceptr cast through uintptr_t).  Strides and
 * sizes count elements, not bytes; a stride may be any value, 0 (broadcast)
 * and negative ones included, unless the signature says otherwise.  Kernels
 * are correct for every layout the signature allows and take a faster path
 * where the layout permits (contiguous, 16-byte aligned): they decide that
 * themselves, from the struct, on the device.
 *
 * A kernel cannot return an error: the handler checks, before it launches,
 * what each signature lists under "the handler guarantees".  Launch
 * geometry (grid, block, dynamic shared memory) is fixed per kernel by its
 * metadata in the kernel pack ("threads=256", "smem=81920", "tile_m=128",
 * ...) and by the formulas documented with each signature.  A kernel whose
 * smem is over 48 KiB needs, once per loaded function,
 * cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
 * (= 8), smem), and a device whose opt-in limit
 * (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97) is lower
 * cannot run it (sm_86/sm_89 parts allow 99 KiB, sm_80 163 KiB, sm_90
 * 227 KiB).
 *
 * Code objects (kernels/CMakeLists.txt builds them, one per source file and
 * target): NAME.sm_90a.cubin, NAME.sm_80.cubin, and NAME.compute_80.ptx,
 * the PTX text WITH a terminating NUL byte, so that its bytes go to
 * cuModuleLoadData as they are.  An sm_80 cubin runs on sm_80..sm_89, the
 * sm_90a cubin on sm_90 only, the PTX on any device of compute capability
 * 8.0 or newer (the driver compiles it at load).
 */
#ifndef CDNN_KERNELS_CUDA_KERNEL_H
#define CDNN_KERNELS_CUDA_KERNEL_H

#include <stdint.h>

#define CDNN_CUDA_KERNEL_ABI_VERSION 1

/* Element types: the values of cdnn_data_type_t (<cdnn/cdnn.h>), repeated
 * here so that the kernels build without the library's headers. */
#define CDNN_CUDA_F32 1
#define CDNN_CUDA_F16 2
#define CDNN_CUDA_BF16 3

/* Activations of the fused epilogues and the pointwise programs. */
#define CDNN_CUDA_ACT_NONE 0
#define CDNN_CUDA_ACT_RELU 1
#define CDNN_CUDA_ACT_GELU 2      /* x * Phi(x), with erf */
#define CDNN_CUDA_ACT_GELU_TANH 3 /* the tanh approximation */
#define CDNN_CUDA_ACT_SILU 4      /* x * sigmoid(x) */
#define CDNN_CUDA_ACT_TANH 5

/* ------------------------------------------------------------------------
 * "cuda-matmul-v1": C[b] = epilogue(A[b] x B[b])
 *
 * A is m x k, B is k x n, C is m x n, per batch b; element (i, j) of X is at
 * x + b * x_batch_stride + i * x_row_stride + j * x_col_stride.  The product
 * accumulates in f32; then, in this order and in f32: + bias[j * bias_stride]
 * (bias NULL: none), the activation, + residual (residual NULL: none; same
 * indexing as C, its own strides), and the cast to c_type (round to
 * nearest even).
 *
 * Kernels (kernels/cuda/matmul_tc.cu, matmul_f32.cu):
 *   cdnn_cuda_matmul_{f16,bf16}_TMxTN  tensor cores (mma.sync m16n8k16,
 *       f32 accumulate), a_type == b_type == the kernel's dtype;
 *   cdnn_cuda_matmul_f32_TMxTN         exact f32 on the SIMT cores (FFMA,
 *       no TF32), a_type == b_type == f32.
 * Launch: grid = (ceil(n / tile_n), ceil(m / tile_m), batch),
 *         block = (threads, 1, 1), dynamic smem = smem;
 * tile_m, tile_n, threads and smem per kernel are in the tables below (and
 * in the pack's metadata).
 * Fast paths (decided per launch on the device, all else is gathered
 * element by element, still correct): A with a_col_stride == 1, and B with
 * b_col_stride == 1 (row-major, "n-contiguous") or b_row_stride == 1
 * ("k-contiguous", a transposed weight), where the other strides are
 * multiples of 8 and the base address is 16-byte aligned.
 * The handler guarantees: batch, m, n, k >= 1; batch <= 65535;
 * ceil(m / tile_m) <= 65535; c_type, bias_type, res_type in {f32, f16,
 * bf16}; activation one of CDNN_CUDA_ACT_*; C overlaps no input.
 * ---------------------------------------------------------------------- */
typedef struct cdnn_cuda_matmul_params {
    int64_t batch, m, n, k;
    const void *a;
    int64_t a_batch_stride, a_row_stride, a_col_stride;
    const void *b;
    int64_t b_batch_stride, b_row_stride, b_col_stride;
    void *c;
    int64_t c_batch_stride, c_row_stride, c_col_stride;
    const void *bias;
    int64_t bias_stride;
    const void *residual;
    int64_t res_batch_stride, res_row_stride, res_col_stride;
    int32_t a_type, b_type, c_type, bias_type, res_type;
    int32_t activation;
} cdnn_cuda_matmul_params_t;

/* The tensor-core tile configurations: X(tile_m, tile_n, warps_m, warps_n,
 * stages).  tile_k is 32; threads = 32 * warps_m * warps_n; each warp owns a
 * (tile_m / warps_m) x (tile_n / warps_n) block of C.  Entry points
 * cdnn_cuda_matmul_f16_<tile_m>x<tile_n> and ..._bf16_...  */
#define CDNN_CUDA_MATMUL_TC_TILE_K 32
#define CDNN_CUDA_MATMUL_TC_CONFIGS(X) \
    X(128, 256, 2, 4, 3)                \
    X(128, 128, 2, 4, 4)                \
    X(128, 64, 2, 2, 4)                 \
    X(64, 64, 2, 2, 3)
/* Dynamic shared memory of a tensor-core configuration, in bytes: the
 * larger of the k loop's ring and the epilogue's f32 tile.  A ring stage
 * holds an A tile of tile_m rows of (32 + 8) halves and a B tile stored
 * either way round, (tile_n rows of 40) or (32 rows of tile_n + 8) halves
 * (the 8 halves of padding keep ldmatrix free of bank conflicts); the
 * epilogue stages C as tile_m rows of (tile_n + 4) floats, so that its
 * stores coalesce. */
#define CDNN_CUDA_MATMUL_TC_OUT_PAD 4
#define CDNN_CUDA_MATMUL_TC_B_HALVES(tn) \
    ((tn) * 40 > 32 * ((tn) + 8) ? (tn) * 40 : 32 * ((tn) + 8))
#define CDNN_CUDA_MATMUL_TC_RING(tm, tn, stages) \
    ((stages) * ((tm) * 40 + CDNN_CUDA_MATMUL_TC_B_HALVES(tn)) * 2)
#define CDNN_CUDA_MATMUL_TC_EPILOGUE(tm, tn) ((tm) * ((tn) + CDNN_CUDA_MATMUL_TC_OUT_PAD) * 4)
#define CDNN_CUDA_MATMUL_TC_SMEM(tm, tn, stages)                                      \
    (CDNN_CUDA_MATMUL_TC_RING(tm, tn, stages) > CDNN_CUDA_MATMUL_TC_EPILOGUE(tm, tn) \
         ? CDNN_CUDA_MATMUL_TC_RING(tm, tn, stages)                                  \
         : CDNN_CUDA_MATMUL_TC_EPILOGUE(tm, tn))

/* The small-m configurations (matmul_small_m.cu, sm_90a): X(tile_m, tile_n,
 * warps_m, warps_n, stages, splits): the tensor-core k loop above, a
 * cluster of `splits` blocks a tile of C, each over a split of k.  Entry
 * points cdnn_cuda_matmul_small_m_f16_<tile_m>x<tile_n> and ..._bf16_...;
 * grid (ceil(n / tile_n) * splits, ceil(m / tile_m), batch), block 32 *
 * warps_m * warps_n, dynamic smem CDNN_CUDA_MATMUL_TC_SMEM(tile_m, tile_n,
 * stages). */
#define CDNN_CUDA_MATMUL_SMALL_M_CONFIGS(X) \
    X(64, 64, 2, 2, 6, 4)

/* The strip small-m configurations (matmul_small_m.cu, sm_90a): b loaded
 * straight into registers (16-byte loads), a block 64 columns of C over
 * all of k (no split of k across blocks, no cluster), its warps
 * interleaved over k.
 * X(name, warps, stages).  Entry points
 * cdnn_cuda_matmul_small_m_strip_{f16,bf16}_<name>; grid (ceil(n / 64),
 * ceil(m / 16), batch), block 32 * warps, dynamic smem
 * CDNN_CUDA_MATMUL_SMALL_M_STRIP_SMEM(warps). */
#define CDNN_CUDA_MATMUL_SMALL_M_STRIP_CONFIGS(X) \
    X(n64w16s2, 16, 2)
#define CDNN_CUDA_MATMUL_SMALL_M_STRIP_SMEM(warps) ((warps) * 16 * (64 + 4) * 4)
/* The TMA small-m configurations (matmul_small_m.cu, sm_90a): a block is 16
 * rows and 64 columns of C over all of k, as the strip kernels, but b and a
 * come by TMA (the "tensor_maps" ABI of the wgmma kernels:
 * cdnn_cuda_matmul_tma_params_t, maps encoded by matmul_tma.h with tile_m
 * 16, tile_n 64) into a ring of `stages` 64-k steps, and one warpgroup
 * multiplies them with wgmma (C^T = B^T A^T, m64n16k16); b is loaded with
 * an L2 evict-first policy, a with evict-last.  X(name, stages).  Entry
 * points cdnn_cuda_matmul_small_m_tma_{f16,bf16}_<name>; persistent (grid
 * at most the multiprocessors, tiles taken in turn), block
 * CDNN_CUDA_MATMUL_SMALL_M_TMA_THREADS, dynamic smem
 * CDNN_CUDA_MATMUL_SMALL_M_TMA_SMEM(stages): the ring (2 KiB of a, 8 KiB
 * of b a stage), 1 KiB to align it, its barriers, a 16 x 68 f32 tile. */
#define CDNN_CUDA_MATMUL_SMALL_M_TMA_CONFIGS(X) \
    X(n64s8e, 8)                               \
    X(n64s16e, 16)
#define CDNN_CUDA_MATMUL_SMALL_M_TMA_THREADS 160
#define CDNN_CUDA_MATMUL_SMALL_M_TMA_SMEM(stages) \
    ((stages) * (10240 + 16) + 1024 + 16 * (64 + 4) * 4)

/* ------------------------------------------------------------------------
 * The Hopper kernels of "cuda-matmul-v1" (kernels/cuda/matmul_wgmma.cu,
 * sm_90a only): cdnn_cuda_matmul_wgmma_{f16,bf16}_TMxTN compute the same
 * function as the kernels above, with wgmma fed by the tensor memory
 * accelerator (TMA).  They take cdnn_cuda_matmul_tma_params_t: the same
 * params, then two tensor maps (CUtensorMap, 128 bytes each) that the
 * launcher encodes with cuTensorMapEncodeTiled for the pointers of this
 * launch -- cdnn_cuda_matmul_tma_encode() in matmul_tma.h does it.  Their
 * metadata says "tensor_maps=1".
 * Layouts (the launcher refuses others): A k-contiguous (a_col_stride 1);
 * B k-contiguous (b_row_stride 1) or n-contiguous (b_col_stride 1); every
 * other stride of A and B, and both base addresses, multiples of 16
 * bytes; C, bias and residual any strides (16-byte stores where C is
 * row-major and aligned).  Tails in m, n and k are TMA's zero fill.
 * Launch: persistent.  The tiles, ceil(m / tile_m) * ceil(n / tile_n) *
 * batch of them, are numbered batch by batch; block b takes tiles b,
 * b + G, b + 2G, ... of a grid (G, 1, 1), for any G >= 1: G = min(tiles,
 * multiprocessors) is the fast choice (one block fits a multiprocessor).
 * block = (384, 1, 1): warpgroup 0 loads, warpgroups 1 and 2 multiply and
 * finish; dynamic smem = CDNN_CUDA_MATMUL_WGMMA_SMEM(tile_m, tile_n,
 * stages).
 * ---------------------------------------------------------------------- */
#define CDNN_CUDA_MATMUL_WGMMA_TILE_K 64 /* 128 bytes of k: one swizzle row */
#define CDNN_CUDA_MATMUL_WGMMA_THREADS 384
/* X(tile_m, tile_n, stages) */
#define CDNN_CUDA_MATMUL_WGMMA_CONFIGS(X) \
    X(128, 256, 4)                         \
    X(256, 128, 4)                         \
    X(128, 192, 5)                         \
    X(128, 128, 6)
/* cdnn_cuda_matmul_wgmma_c2_{f16,bf16}_TMxTN: the same function and
 * params, compiled for clusters of 2 blocks (__cluster_dims__(2, 1, 1)):
 * the two blocks of a cluster take vertically adjacent tiles of C and
 * share B's tile, each loading half of it and multicasting it to both
 * (half the L2 reads of B).  Launch: persistent as above, but the grid is
 * a multiple of 2: 2 * min(ceil(ceil(m / tile_m) / 2) * ceil(n / tile_n)
 * * batch, multiprocessors / 2) is the fast choice.  Built, tested
 * (tests/cuda_kernels) and benchmarked (bench/gpu), but not in the
 * descriptors: on the H200 they ran no faster than the 1-block kernels
 * (bench/gpu/notes/matmul.md v5; bench/gpu/v5-c2-registration.patch would
 * register them).  X(tile_m, tile_n, stages) */
#define CDNN_CUDA_MATMUL_WGMMA_C2_CONFIGS(X) \
    X(128, 256, 4)                            \
    X(128, 192, 5)
/* The epilogue's buffers: one per consumer warp (8), 16 x (32 + 4) f32. */
#define CDNN_CUDA_MATMUL_WGMMA_EPILOGUE_BYTES (8 * 16 * 36 * 4)
/* The stages' A and B tiles, 1 KiB of slack to align them to 1024 bytes
 * (the 128-byte swizzle's period), the stages' two mbarriers, and the
 * epilogue's buffers. */
#define CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages) \
    ((stages) * ((tm) + (tn)) * 128 + 1024 + (stages) * 16 + CDNN_CUDA_MATMUL_WGMMA_EPILOGUE_BYTES)

#if defined(__cplusplus)
#define CDNN_CUDA_ALIGN128 alignas(128)
#else
#define CDNN_CUDA_ALIGN128 _Alignas(128)
#endif

/* A CUtensorMap: opaque, encoded by the driver. */
typedef struct cdnn_cuda_tensor_map {
    CDNN_CUDA_ALIGN128 uint64_t opaque[16];
} cdnn_cuda_tensor_map_t;

typedef struct cdnn_cuda_matmul_tma_params {
    cdnn_cuda_matmul_params_t matmul;
    cdnn_cuda_tensor_map_t a_map; /* A: dims {k, m, batch}, box {64, tile_m, 1} */
    cdnn_cuda_tensor_map_t b_map; /* B k-contiguous: {k, n, batch}, box {64, 64, 1};
                                     n-contiguous: {n, k, batch}, box {64, 64, 1} */
} cdnn_cuda_matmul_tma_params_t;

/* cdnn_cuda_matmul_wgmma_store_{f16,bf16}_TMxTN: the same function with C
 * stored by TMA: each consumer warpgroup packs its finished 64 x 64 boxes
 * into shared memory (`slots` buffers of 8 KiB each, used in turn) and one
 * thread stores them, so the consumers return to the next tile's k loop
 * while the stores drain.  Params cdnn_cuda_matmul_tma_store_params_t: the
 * wgmma kernels' params, then c_map, a tiled map of C with dims {n, m,
 * batch}, box {64, 64, 1}, the 128-byte swizzle (matmul_tma.h encodes
 * it).  They take C f16 or bf16, row-major (c_col_stride 1), n and its
 * row and batch strides multiples of 8 elements (the copy engine clips a
 * store only to 16 bytes), 16-byte aligned; a residual, if any, f16 or
 * bf16, row-major with even row and batch strides, 4-byte aligned
 * (cdnn_cuda_matmul_tma_store_refusal).  Launch: as the wgmma kernels; no
 * clusters.  X(tile_m, tile_n, stages, slots) */
#define CDNN_CUDA_MATMUL_WGMMA_STORE_CONFIGS(X) \
    X(128, 256, 4, 2)                            \
    X(256, 128, 4, 2)                            \
    X(128, 192, 4, 3)
/* Alignment slack, the ring, its barriers padded to 1 KiB (the boxes stay
 * 1024-aligned for the swizzle), two consumers' box buffers. */
#define CDNN_CUDA_MATMUL_WGMMA_STORE_SMEM(tm, tn, stages, slots) \
    (1024 + (stages) * ((tm) + (tn)) * 128 + 1024 + 2 * (slots) * 64 * 64 * 2)

typedef struct cdnn_cuda_matmul_tma_store_params {
    cdnn_cuda_matmul_tma_params_t tma;
    cdnn_cuda_tensor_map_t c_map; /* C: dims {n, m, batch}, box {64, 64, 1} */
} cdnn_cuda_matmul_tma_store_params_t;

/* The f32 SIMT configurations: X(tile_m, tile_n, per-thread rows,
 * per-thread cols); tile_k 16, threads = (tile_m / rows) * (tile_n / cols),
 * smem 0 (static).  Entry points cdnn_cuda_matmul_f32_<tile_m>x<tile_n>. */
#define CDNN_CUDA_MATMUL_F32_CONFIGS(X) \
    X(64, 64, 4, 4)                      \
    X(128, 128, 8, 8)

/* ------------------------------------------------------------------------
 * "cuda-pointwise-v1": out = f(in[0], ..., in[input_count - 1]) elementwise
 *
 * Every operand is indexed by the output's coordinates over `rank` dims
 * (shape[0] outermost): element at ptr + sum(coord[d] * stride[d]); an
 * input broadcasts along a dim by stride 0.  f is a postfix program run on
 * an f32 stack (loads convert to f32, the result casts to out_type):
 *   PUSH_INPUT i   push in[i] at the coordinates
 *   PUSH_CONST i   push constants[i]
 *   unary ops      replace the top;  binary ops pop b then a, push (a op b)
 * The program must leave exactly one value; the handler checks that the
 * stack never underflows nor grows past CDNN_CUDA_POINTWISE_MAX_STACK.
 *
 * Kernel (kernels/cuda/pointwise.cu): cdnn_cuda_pointwise.
 * Launch: block = (256, 1, 1), grid = (min(ceil(count / 1024), 65535 *
 * 16), 1, 1) -- a grid-stride loop, so any grid of at least one block is
 * correct -- smem 0.  Rank 1 is indexed without division: the handler
 * collapses packed operands (and scalars, stride 0) to one dimension.
 * Where, at rank 1, the output and every non-scalar input are contiguous
 * and 16-byte aligned, each thread moves 8 elements per 16-byte access.
 * The handler guarantees: 0 <= rank <= MAX_RANK, shape[d] >= 1, count is
 * their product (>= 1); 1 <= input_count <= MAX_INPUTS; types in {f32, f16,
 * bf16}; the program as above; out overlaps no input unless identical to it
 * with the same strides.
 *
 * Kernel cdnn_cuda_pointwise_chain: the same params and launch (any grid;
 * metadata elements_per_block 8192: each thread has four 16-byte pieces of
 * each 16-bit input in flight with no activation or relu, two with the
 * others), for the short programs it compiles per op pair:
 *   PUSH_INPUT a, ACT                     act(in[a])
 *   PUSH_INPUT a, PUSH_INPUT b, BIN        in[a] bin in[b]
 *   PUSH_INPUT a, PUSH_INPUT b, BIN, ACT   act(in[a] bin in[b])
 * BIN one of ADD, SUB, MUL, MAX, MIN; ACT one of RELU, GELU, GELU_TANH,
 * SILU, SIGMOID, TANH; the same f32 functions as cdnn_cuda_pointwise.  The
 * handler launches it for those programs only (metadata chain 1); any
 * other traps.
 * ---------------------------------------------------------------------- */
#define CDNN_CUDA_POINTWISE_MAX_RANK 6
#define CDNN_CUDA_POINTWISE_MAX_INPUTS 4
#define CDNN_CUDA_POINTWISE_MAX_PROGRAM 24
#define CDNN_CUDA_POINTWISE_MAX_CONSTANTS 8
#define CDNN_CUDA_POINTWISE_MAX_STACK 8

/* Opcodes (one byte each in `program`); the operand byte follows in
 * `operand` for PUSH_INPUT and PUSH_CONST. */
enum {
    CDNN_CUDA_PW_PUSH_INPUT = 1,
    CDNN_CUDA_PW_PUSH_CONST,
    /* unary */
    CDNN_CUDA_PW_NEG,
    CDNN_CUDA_PW_ABS,
    CDNN_CUDA_PW_EXP,
    CDNN_CUDA_PW_LOG,
    CDNN_CUDA_PW_SQRT,
    CDNN_CUDA_PW_RSQRT,
    CDNN_CUDA_PW_RECIPROCAL,
    CDNN_CUDA_PW_SIGMOID,
    CDNN_CUDA_PW_RELU,
    CDNN_CUDA_PW_GELU,
    CDNN_CUDA_PW_GELU_TANH,
    CDNN_CUDA_PW_SILU,
    CDNN_CUDA_PW_TANH,
    /* binary */
    CDNN_CUDA_PW_ADD,
    CDNN_CUDA_PW_SUB,
    CDNN_CUDA_PW_MUL,
    CDNN_CUDA_PW_DIV,
    CDNN_CUDA_PW_MAX,
    CDNN_CUDA_PW_MIN,
    CDNN_CUDA_PW_POW,
    CDNN_CUDA_PW_OPCODE_END
};

typedef struct cdnn_cuda_pointwise_params {
    int64_t count;
    int64_t shape[CDNN_CUDA_POINTWISE_MAX_RANK];
    void *out;
    int64_t out_strides[CDNN_CUDA_POINTWISE_MAX_RANK];
    const void *in[CDNN_CUDA_POINTWISE_MAX_INPUTS];
    int64_t in_strides[CDNN_CUDA_POINTWISE_MAX_INPUTS][CDNN_CUDA_POINTWISE_MAX_RANK];
    float constants[CDNN_CUDA_POINTWISE_MAX_CONSTANTS];
    int32_t rank;
    int32_t input_count;
    int32_t out_type;
    int32_t in_types[CDNN_CUDA_POINTWISE_MAX_INPUTS];
    int32_t reserved; /* 0 */
    int32_t program_length;
    uint8_t program[CDNN_CUDA_POINTWISE_MAX_PROGRAM];
    uint8_t operand[CDNN_CUDA_POINTWISE_MAX_PROGRAM];
} cdnn_cuda_pointwise_params_t;

/* ------------------------------------------------------------------------
 * "cuda-norm-v1": layer-norm and RMS-norm over the last axis
 *
 * x and y are rows x cols; a row r is normalised over its cols:
 *   layer (kind 0): y = (x - mean) / sqrt(var + epsilon) * scale + shift
 *   rms   (kind 1): y = x / sqrt(mean(x^2) + epsilon) * scale + shift
 * (var the biased variance; scale[j * scale_stride], NULL meaning 1;
 * shift likewise, NULL meaning 0), all in f32.  Each row is read from
 * memory once: it is kept in shared memory (as f32) between the statistics
 * and the output, and the variance is the mean of squared deviations from
 * the mean (two sweeps over the cached row, not E[x^2] - E[x]^2).
 *
 * Kernels (kernels/cuda/norm.cu):
 *   cdnn_cuda_norm_block  one block of `threads` (a multiple of 32, at most
 *       1024; metadata says 256) per row: grid = (rows, 1, 1) for rows <=
 *       2^31 - 1, smem = cols * 4 bytes;
 *   cdnn_cuda_norm_warp   one warp per row, 8 rows per block of 256:
 *       grid = (ceil(rows / 8), 1, 1), smem = 8 * cols * 4 bytes (for short
 *       rows: cols <= 1024 keeps it at 32 KiB).
 * 16-byte loads and stores where col stride is 1 and each row's address is
 * 16-byte aligned.
 * The handler guarantees: rows, cols >= 1; the smem above within the
 * device's limit; types in {f32, f16, bf16}; y overlaps x only if identical.
 * ---------------------------------------------------------------------- */
#define CDNN_CUDA_NORM_LAYER 0
#define CDNN_CUDA_NORM_RMS 1
#define CDNN_CUDA_NORM_WARP_ROWS_PER_BLOCK 8

/* The register kernels of norm and softmax (kernels/cuda/rows_regs.cuh):
 * cdnn_cuda_norm_regs_NAME and cdnn_cuda_softmax_regs_NAME hold a row in
 * registers, G threads to a row (a warp, or the whole block when G > 32),
 * R rows a block of G * R threads, N pieces of 8 elements a thread, so
 * rows of at most G * N * 8 elements; no dynamic shared memory; grid =
 * (ceil(rows / R), 1, 1).  Metadata: rows_per_block R, threads G * R,
 * pieces N.  X(NAME, G, R, N): */
#define CDNN_CUDA_ROWS_REGS_CONFIGS(X)                                                         \
    X(w8x4, 32, 8, 4)                                                                          \
    X(w4x8, 32, 4, 8)                                                                          \
    X(128x4, 128, 1, 4)                                                                        \
    X(128x8, 128, 1, 8)                                                                        \
    X(256x4, 256, 1, 4)                                                                        \
    X(512x4, 512, 1, 4)                                                                        \
    X(1024x2, 1024, 1, 2)                                                                      \
    X(64x8, 64, 1, 8)

/* The packed register kernels (rows_regs.cuh PackedRow):
 * cdnn_cuda_norm_packed_NAME and cdnn_cuda_softmax_packed_NAME, the same
 * geometry with each piece 16 bytes of x as loaded (8 f16/bf16 or 4 f32
 * elements, converted on use), so rows of at most G * N * 16 bytes of x.
 * Metadata: rows_per_block R, threads G * R, pieces N, packed 1.
 * X(NAME, G, R, N): */
#define CDNN_CUDA_ROWS_PACKED_CONFIGS(X)                                                       \
    X(w8x8, 32, 8, 8)                                                                          \
    X(w4x16, 32, 4, 16)                                                                        \
    X(64x16, 64, 1, 16)                                                                        \
    X(128x4, 128, 1, 4)                                                                        \
    X(128x8, 128, 1, 8)                                                                        \
    X(256x8, 256, 1, 8)

/* The staged kernels (kernels/cuda/rows_staged.cu, sm_90a alone):
 * cdnn_cuda_norm_staged_NAME and cdnn_cuda_softmax_staged_NAME.  G threads
 * a row (G / 32 > 1 warps: the whole block, or one of R <= 15 such groups,
 * which then share the block's copy of the norm's scale and shift), R row
 * groups a block of G * R threads, each group with S stages of shared
 * memory a row each; the
 * rows come into their stage by the bulk copy engine (cp.async.bulk on an
 * mbarrier) S - 1 rows ahead of the one the group works on, so that no
 * register holds a row in flight.  Each group loops over the rows
 * group, group + groups, ... (groups = grid * R), so any grid works; the
 * handler launches at most what stays resident.  The bulk copy needs x
 * contiguous, 16-byte aligned rows and a row of a multiple of 16 bytes;
 * other rows are copied in by the group's threads, the same kernel.
 * Dynamic shared memory (the kernels have no static shared memory, so that
 * the opt-in past 48 KiB covers all of it): CDNN_CUDA_ROWS_STAGED_SMEM(R,
 * S, cols, x's element bytes), and for the norm kernels also
 * CDNN_CUDA_ROWS_STAGED_PARAM(cols, x's element bytes, 4) for the scale
 * and for the shift where present -- the block copies them there once, as
 * f32, and every row reads them from there -- or, where that does not
 * fit, CDNN_CUDA_ROWS_STAGED_PARAM(cols, x's element bytes, their own
 * element bytes) each, kept in their own types.  A launch with less does
 * nothing.  Metadata: rows_per_block R, threads G * R, stages S.
 * 6xb4s2 was the fastest staged kernel on every norm and softmax shape
 * measured (bench/gpu/notes/rows.md v6); b8s2 holds the rows longer than
 * its 12 stages do (a bf16 layer-norm row of more than ~8K columns).
 * X(NAME, G, R, S): */
#define CDNN_CUDA_ROWS_STAGED_CONFIGS(X)                                                       \
    X(b8s2, 256, 1, 2)                                                                         \
    X(6xb4s2, 128, 6, 2)
/* Each staged kernel is built for CDNN_CUDA_ROWS_STAGED_SM_THREADS / (G * R)
 * blocks an SM (__launch_bounds__' second argument: at most 80 registers),
 * the residency the handler counts on when it sizes the persistent grid. */
#define CDNN_CUDA_ROWS_STAGED_SM_THREADS 800
/* A stage: the row's bytes rounded up to 16; a header of 512 bytes first
 * (the stages' mbarriers, a block's reduction scratch). */
#define CDNN_CUDA_ROWS_STAGE_BYTES(cols, x_bytes) ((((cols) * (x_bytes)) + 15) / 16 * 16)
#define CDNN_CUDA_ROWS_STAGED_HEADER 512
#define CDNN_CUDA_ROWS_STAGED_SMEM(r, s, cols, x_bytes)                                         \
    (CDNN_CUDA_ROWS_STAGED_HEADER + (r) * (s) * CDNN_CUDA_ROWS_STAGE_BYTES(cols, x_bytes))
/* A parameter as long as x's staged row (whole 16-byte pieces of x), of
 * `bytes` an element, rounded up to 16. */
#define CDNN_CUDA_ROWS_STAGED_PARAM(cols, x_bytes, bytes)                                        \
    ((CDNN_CUDA_ROWS_STAGE_BYTES(cols, x_bytes) / (x_bytes) * (bytes) + 15) / 16 * 16)

typedef struct cdnn_cuda_norm_params {
    int64_t rows, cols;
    const void *x;
    int64_t x_row_stride, x_col_stride;
    void *y;
    int64_t y_row_stride, y_col_stride;
    const void *scale;
    int64_t scale_stride;
    const void *shift;
    int64_t shift_stride;
    float epsilon;
    int32_t kind;
    int32_t x_type, y_type, scale_type, shift_type;
} cdnn_cuda_norm_params_t;

/* ------------------------------------------------------------------------
 * "cuda-softmax-v1": softmax (or log-softmax) over the last axis
 *
 * x and y are rows x cols; y[r, j] = exp(x[r, j] - max_r) / sum_r, with
 * max_r the row's maximum and sum_r the sum of the exponentials (log: y =
 * x - max_r - log(sum_r)), in f32.  A row of -inf gives NaN, as in PyTorch.
 * Kernels (kernels/cuda/softmax.cu): cdnn_cuda_softmax_block and
 * cdnn_cuda_softmax_warp, with the launch geometry of the norm kernels
 * above (the row cached in shared memory as f32).
 * The handler guarantees what the norm kernels need.
 * ---------------------------------------------------------------------- */
typedef struct cdnn_cuda_softmax_params {
    int64_t rows, cols;
    const void *x;
    int64_t x_row_stride, x_col_stride;
    void *y;
    int64_t y_row_stride, y_col_stride;
    int32_t x_type, y_type;
    int32_t log;
    int32_t reserved; /* 0 */
} cdnn_cuda_softmax_params_t;

/* ------------------------------------------------------------------------
 * "cuda-reduce-v1": one value a row
 *
 * x is rows x cols; y[r * y_row_stride] = the reduction of x's row r by
 * mode (the values of cdnn_reduction_mode_t): the sum, product, minimum,
 * maximum, maximum of |x|, mean, sum of |x| or the square root of the sum
 * of squares, accumulated in f32.  Minimum and maximum skip NaN (fminf,
 * fmaxf), the others carry it; an empty row gives the mode's identity (the
 * mean: NaN).  Kernels (kernels/cuda/reduce.cu), each for any layout:
 * cdnn_cuda_reduce_rows_NAME, CDNN_CUDA_REDUCE_ROWS_CONFIGS' X(NAME, G, R):
 * G threads a row (a warp or whole warps), R rows a block, 16-byte loads
 * where a row is contiguous and 16-byte aligned (elsewhere one element a
 * load: a reduced leading axis, rows adjacent in memory, is slow on them;
 * the column kernels below read it).
 *
 * Launch: min(ceil(rows / R), 2^31 - 1) blocks (at least 1) of G * R
 * threads, no dynamic shared memory; each block's groups go on to the rows
 * a grid further.
 * The handler guarantees: rows, cols >= 0, a valid mode and types.
 *
 * The column kernels, cdnn_cuda_reduce_columns_NAME (CDNN_CUDA_REDUCE_
 * COLUMNS_CONFIGS' X(NAME, W, L, B)), are for rows adjacent in x (a reduced
 * leading axis: x_row_stride 1; they take any layout, one element a load)
 * and take cdnn_cuda_reduce_columns_params_t.  Each thread owns
 * CDNN_CUDA_REDUCE_COLUMNS_PER_THREAD(x_type) adjacent outputs (one 16-byte
 * load a reduced index where x's rows are adjacent, x is 16-byte aligned
 * and its col stride whole 16-byte pieces; else one element a load), a warp the CDNN_CUDA_REDUCE_COLUMNS_WIDTH(x_type) outputs
 * of a column group, and the W warps of a block split the reduced
 * indices of one split (j = first + warp, first + warp + W, ...) and
 * combine through shared memory.  Two passes:
 *   - combine 0: grid (ceil(rows / WIDTH), splits), W * 32 threads; block
 *     (g, s) reduces column group g over the reduced indices [s *
 *     split_cols, (s + 1) * split_cols) of cols.  With splits 1 it writes
 *     y, finished (the mean divided, the norm's root taken); otherwise
 *     the f32 partial results of mode's accumulator to partials[s * rows +
 *     r], and
 *   - combine 1 (only when splits > 1): grid ceil(rows / 32), W * 32
 *     threads; block b's lane l takes output 32 b + l, warp w the partials
 *     of splits w, w + W, ..., combined in that order and then over the
 *     warps in order (deterministic), finished into y.
 * No dynamic shared memory.  The handler guarantees, beyond the row
 * kernels' guarantees: 1 <= splits <= 65535, splits * split_cols >= cols,
 * partials 4-byte aligned with splits * rows floats when splits > 1.
 * ---------------------------------------------------------------------- */
#define CDNN_CUDA_REDUCE_ADD 0
#define CDNN_CUDA_REDUCE_MUL 1
#define CDNN_CUDA_REDUCE_MIN 2
#define CDNN_CUDA_REDUCE_MAX 3
#define CDNN_CUDA_REDUCE_AMAX 4
#define CDNN_CUDA_REDUCE_AVG 5
#define CDNN_CUDA_REDUCE_NORM1 6
#define CDNN_CUDA_REDUCE_NORM2 7
#define CDNN_CUDA_REDUCE_MODE_COUNT 8

typedef struct cdnn_cuda_reduce_params {
    int64_t rows, cols;
    const void *x;
    int64_t x_row_stride, x_col_stride;
    void *y;
    int64_t y_row_stride;
    int32_t x_type, y_type;
    int32_t mode;
    int32_t reserved; /* 0 */
} cdnn_cuda_reduce_params_t;

/* X(NAME, G, R): a warp a row for short rows, 128 threads for rows of a
 * few thousand elements (4 pieces of 16 bytes a thread at 4096 bf16),
 * whole blocks for long ones. */
#define CDNN_CUDA_REDUCE_ROWS_CONFIGS(X)                                                        \
    X(w32r8, 32, 8)                                                                           \
    X(g128r4, 128, 4)                                                                         \
    X(b256, 256, 1)                                                                           \
    X(b1024, 1024, 1)

typedef struct cdnn_cuda_reduce_columns_params {
    cdnn_cuda_reduce_params_t reduce; /* rows: the outputs; cols: the reduced axis */
    float *partials;                  /* splits x rows; NULL when splits is 1 */
    int64_t split_cols;               /* reduced indices a split */
    int32_t splits;
    int32_t combine; /* 0: reduce x (y or partials); 1: combine partials into y */
} cdnn_cuda_reduce_columns_params_t;

/* Adjacent outputs a thread of a column kernel owns: one 16-byte piece of
 * x; a warp's outputs are 512 contiguous bytes of x a reduced index. */
#define CDNN_CUDA_REDUCE_COLUMNS_PER_THREAD(x_type) ((x_type) == CDNN_CUDA_F32 ? 4 : 8)
#define CDNN_CUDA_REDUCE_COLUMNS_WIDTH(x_type) (32 * CDNN_CUDA_REDUCE_COLUMNS_PER_THREAD(x_type))

/* X(NAME, W, L, B): W warps a block splitting the reduced axis, L 16-byte
 * loads a thread in flight (a turn unrolled L times), B blocks an SM
 * (__launch_bounds__(W * 32, B): 8 accumulators a thread leave 40 registers
 * for one load in flight, 48 for two). */
#define CDNN_CUDA_REDUCE_COLUMNS_CONFIGS(X)                                                     \
    X(c8, 8, 1, 6)                                                                            \
    X(c8x2, 8, 2, 5)

/* ------------------------------------------------------------------------
 * "cuda-sdpa-v1": scaled dot-product attention
 *
 * Per batch b and head h: O = softmax(scale * Q K^T (+ causal mask)) V,
 * with Q q_len x head_dim, K kv_len x head_dim, V kv_len x value_dim, O
 * q_len x value_dim.  Strides are given per dim as {batch, head, seq,
 * feature}, so BHSD, BSHD and any other layout work.  K and V may have
 * fewer heads (grouped-query attention): query head h reads K/V head
 * h / (heads / kv_heads).  causal: query row i sees key j only if j <= i +
 * causal_offset (0: PyTorch's is_causal, top-left aligned; kv_len - q_len:
 * bottom-right, for decoding).  Softmax is taken online in f32 (the
 * running maximum and sum of a flash-attention pass), so no q_len x kv_len
 * matrix exists anywhere.
 *
 * Kernel (kernels/cuda/sdpa.cu): cdnn_cuda_sdpa, correctness first, on the
 * SIMT cores: a block of 8 warps takes 8 consecutive query rows of one
 * (batch, head), one row per warp; key/value tiles of 32 rows go through
 * shared memory (f32) and each lane scores one key of the tile.
 * Launch: grid = (ceil(q_len / 8), heads, batch), block = (256, 1, 1),
 * smem = CDNN_CUDA_SDPA_SMEM(head_dim, value_dim) bytes (over 48 KiB for
 * head_dim + value_dim > 320: set the function's limit first).
 * The handler guarantees: all sizes >= 1; head_dim, value_dim <= 256;
 * heads a multiple of kv_heads; heads, batch <= 65535; causal_offset >= 0
 * when causal (every row sees key 0); types in {f32, f16, bf16}; O
 * overlaps no input.
 * ---------------------------------------------------------------------- */
#define CDNN_CUDA_SDPA_ROWS_PER_BLOCK 8
#define CDNN_CUDA_SDPA_KEYS_PER_TILE 32
#define CDNN_CUDA_SDPA_MAX_DIM 256
/* K tile (rows padded by one float against bank conflicts), V tile, and
 * each warp's query row, all f32. */
#define CDNN_CUDA_SDPA_SMEM(head_dim, value_dim)                                   \
    (4 * (CDNN_CUDA_SDPA_KEYS_PER_TILE * ((head_dim) + 1) +                         \
          CDNN_CUDA_SDPA_KEYS_PER_TILE * (value_dim) + CDNN_CUDA_SDPA_ROWS_PER_BLOCK * (head_dim)))

typedef struct cdnn_cuda_sdpa_params {
    int64_t batch, heads, kv_heads, q_len, kv_len, head_dim, value_dim;
    const void *q;
    int64_t q_strides[4]; /* batch, head, seq, feature */
    const void *k;
    int64_t k_strides[4];
    const void *v;
    int64_t v_strides[4];
    void *o;
    int64_t o_strides[4];
    int64_t causal_offset;
    float scale;
    int32_t causal;
    int32_t q_type, k_type, v_type, o_type;
    int32_t reserved; /* 0 */
} cdnn_cuda_sdpa_params_t;

/* ------------------------------------------------------------------------
 * "cuda-conv-v1": y = act(conv(x, w) + bias), 2-D, forward, one group
 *
 * x is n x h x w x c, the filter k x r x s x c, y n x p x q x k, each
 * element at ptr + sum(index[d] * strides[d]) with the strides given in
 * that (channels-last) order, whatever the memory layout.  Output pixel
 * (i, j) reads input row i * stride_h - pad_h + u * dilation_h and column
 * j * stride_w - pad_w + v * dilation_w for tap (u, v); taps outside the
 * input read 0 (so post-padding only sets p and q).  Cross-correlation,
 * as every framework computes it.  Accumulation in f32; then, in f32:
 * + bias[kk * bias_stride] (bias NULL: none), the activation, the cast to
 * y_type (round to nearest even).
 *
 * An implicit GEMM: rows are the n * p * q output pixels, columns the k
 * filters, the reduction runs over r * s * c taps in (u, v, channel)
 * order, so that a filter stored k x r x s x c (KRSC) is the GEMM's
 * k-contiguous B as it lies.
 *
 * Kernels (kernels/cuda/conv.cu):
 *   cdnn_cuda_conv_{f16,bf16}_TMxTN  tensor cores (mma.sync m16n8k16, f32
 *       accumulate), x_type == w_type == the kernel's dtype.
 * Launch: grid = (ceil(n * p * q / tile_m), ceil(k / tile_n), 1),
 *         block = (threads, 1, 1), dynamic smem = smem (the tables below).
 * Fast paths (decided per launch on the device, all else is gathered
 * element by element, still correct): x channels-contiguous with c and
 * its other strides multiples of 8 and a 16-byte aligned base (16-byte
 * copies of 8 channels of one tap); the filter packed KRSC with its k
 * stride a multiple of 8 and a 16-byte aligned base.
 * The handler guarantees: every size >= 1; n * p * q, r * s * c and k
 * at most 2^30; ceil(k / tile_n) <= 65535; pads >= 0, strides and
 * dilations >= 1 (all below 2^20); p and q what those give; y_type and
 * bias_type in {f32, f16, bf16}; activation one of CDNN_CUDA_ACT_*; y
 * overlaps no input.
 * ---------------------------------------------------------------------- */
typedef struct cdnn_cuda_conv_params {
    int64_t n, h, w, c;           /* the input */
    int64_t k, r, s;              /* the filters */
    int64_t p, q;                 /* the output's height and width */
    int64_t pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
    const void *x;
    int64_t x_strides[4]; /* n, h, w, c */
    const void *filter;
    int64_t w_strides[4]; /* k, r, s, c */
    void *y;
    int64_t y_strides[4]; /* n, p, q, k */
    const void *bias;
    int64_t bias_stride;
    int32_t x_type, w_type, y_type, bias_type;
    int32_t activation;
    int32_t reserved; /* 0 */
} cdnn_cuda_conv_params_t;

/* The tile configurations: X(tile_m, tile_n, warps_m, warps_n, stages),
 * as the matmul's (tile_k 32, threads = 32 * warps_m * warps_n).  Entry
 * points cdnn_cuda_conv_f16_<tile_m>x<tile_n> and ..._bf16_...  */
#define CDNN_CUDA_CONV_TILE_K 32
#define CDNN_CUDA_CONV_CONFIGS(X) \
    X(128, 128, 2, 4, 3)          \
    X(128, 64, 2, 2, 4)           \
    X(64, 64, 2, 2, 3)
/* Dynamic shared memory, bytes: the larger of the k loop's ring (per
 * stage an A tile of tile_m rows and a B tile of tile_n rows, each of 32 +
 * 8 halves) and the epilogue's f32 tile (tile_m rows of tile_n + 4) with
 * each tile row's output offset (8 bytes) after it. */
#define CDNN_CUDA_CONV_RING(tm, tn, stages) ((stages) * ((tm) + (tn)) * 40 * 2)
#define CDNN_CUDA_CONV_EPILOGUE(tm, tn) ((tm) * ((tn) + 4) * 4 + (tm) * 8)
#define CDNN_CUDA_CONV_SMEM(tm, tn, stages)                                   \
    (CDNN_CUDA_CONV_RING(tm, tn, stages) > CDNN_CUDA_CONV_EPILOGUE(tm, tn) \
         ? CDNN_CUDA_CONV_RING(tm, tn, stages)                             \
         : CDNN_CUDA_CONV_EPILOGUE(tm, tn))

/* ------------------------------------------------------------------------
 * The Hopper kernels of "cuda-conv-v1" (kernels/cuda/conv_wgmma.cu, sm_90a
 * only): cdnn_cuda_conv_wgmma_{f16,bf16}_TMxTN compute the same function
 * as the kernels above as an implicit GEMM on wgmma (wgmma_gemm.cuh, the
 * Hopper matmul's machinery), the A tile of each k step -- tile_m output
 * pixels x 64 channels of one filter tap -- loaded by TMA in im2col mode
 * (zero fill is the padding, the traversal strides the conv strides), the
 * filter's tile_n x 64 box by a tiled map.  They take
 * cdnn_cuda_conv_tma_params_t: the conv params, the GEMM they amount to
 * (m = n * p * q pixels, n = k filters, k = r * s * c, c = y as rows of
 * pixels; its bias and activation; batch 1, no residual), then the two
 * tensor maps; conv_tma.h fills the GEMM and encodes the maps
 * (cuTensorMapEncodeIm2col, cuTensorMapEncodeTiled).  Metadata
 * "tensor_maps=1".
 * Layouts (the launcher refuses others, conv_tma.h says why): x and w of
 * the kernel's dtype, c a multiple of 64, x channels-contiguous with its
 * other strides multiples of 8 elements, the filter packed KRSC with its
 * k stride a multiple of 8, both 16-byte aligned; y's pixels one row
 * stride apart (y_strides[1] == q * y_strides[2], y_strides[0] == p *
 * y_strides[1]); pads, dilated filter extents and strides small enough for
 * the im2col map (corners within [-128, 127], strides <= 8).
 * Launch: persistent as the Hopper matmul's: grid (G, 1, 1) for any G >= 1
 * (G = min(tiles, multiprocessors) the fast choice), block (384, 1, 1),
 * dynamic smem CDNN_CUDA_MATMUL_WGMMA_SMEM(tile_m, tile_n, stages).
 * ---------------------------------------------------------------------- */
#define CDNN_CUDA_CONV_WGMMA_CHANNELS 64 /* channels per k step */
/* X(tile_m, tile_n, stages) */
#define CDNN_CUDA_CONV_WGMMA_CONFIGS(X) \
    X(128, 256, 4)                       \
    X(128, 128, 6)                       \
    X(256, 64, 5)                        \
    X(128, 64, 8)

/* The stem kernels (conv_wgmma.cu, sm_90a): cdnn_cuda_conv_stem_{f16,bf16}
 * take the convolutions whose few input channels the im2col map cannot
 * walk (its pixel stride must be a multiple of 16 bytes): ResNet's 7x7
 * stride-2 stem over c = 3.  A block's tile is one output row (q <= 128
 * pixels) x all k <= 64 filters; its producer warpgroup copies the r input
 * rows the output row reads (16-byte loads; rows outside x are zeros) into
 * shared memory beside zero margins and repacks them into the A tile of
 * r * s * c taps (zero-padded to DEPTH, 128-byte swizzled); the filter
 * stays in shared memory for the whole launch; two wgmma consumer
 * warpgroups (64 pixels each, n 64) finish in registers.
 * Params: cdnn_cuda_conv_params_t.  Layouts (conv_tma.h,
 * cdnn_cuda_conv_stem_refusal): x and w of the kernel's dtype; r, s, c and
 * both strides as below, dilation 1; x channels-contiguous with packed
 * pixels, row and image strides multiples of 8 elements, 16-byte aligned;
 * w * c a multiple of 8 and at most ROW_MAX; the filter packed KRSC per
 * filter; pad_w * c and the right overhang within MARGIN elements; y of
 * f32, f16 or bf16 with channels contiguous.  Launch: persistent, grid (G, 1, 1) for any G >= 1 (min(n * p,
 * multiprocessors) the fast choice), block (384, 1, 1), dynamic smem
 * CDNN_CUDA_CONV_STEM_SMEM.  Metadata "stem=1". */
#define CDNN_CUDA_CONV_STEM_R 7
#define CDNN_CUDA_CONV_STEM_S 7
#define CDNN_CUDA_CONV_STEM_C 3
#define CDNN_CUDA_CONV_STEM_STRIDE 2
#define CDNN_CUDA_CONV_STEM_TILE_M 128 /* output pixels of a row, at most */
#define CDNN_CUDA_CONV_STEM_TILE_N 64  /* filters, at most */
#define CDNN_CUDA_CONV_STEM_STAGES 3
#define CDNN_CUDA_CONV_STEM_ROW_MAX 1024 /* w * c, elements */
#define CDNN_CUDA_CONV_STEM_MARGIN 24    /* zero elements either side of a staged row */
#define CDNN_CUDA_CONV_STEM_THREADS 384
#define CDNN_CUDA_CONV_STEM_DEPTH                                                   \
    ((CDNN_CUDA_CONV_STEM_R * CDNN_CUDA_CONV_STEM_S * CDNN_CUDA_CONV_STEM_C + 63) / 64 * 64)
/* 1 KiB of alignment slack, the A ring, the filter, the staged rows, the
 * barriers. */
#define CDNN_CUDA_CONV_STEM_SMEM                                                          \
    (1024 + CDNN_CUDA_CONV_STEM_STAGES * CDNN_CUDA_CONV_STEM_TILE_M * CDNN_CUDA_CONV_STEM_DEPTH * 2 + \
     CDNN_CUDA_CONV_STEM_TILE_N * CDNN_CUDA_CONV_STEM_DEPTH * 2 +                          \
     CDNN_CUDA_CONV_STEM_R * (CDNN_CUDA_CONV_STEM_ROW_MAX + 2 * CDNN_CUDA_CONV_STEM_MARGIN) * 2 + \
     CDNN_CUDA_CONV_STEM_STAGES * 16)

typedef struct cdnn_cuda_conv_tma_params {
    cdnn_cuda_conv_params_t conv;
    cdnn_cuda_matmul_params_t gemm;
    cdnn_cuda_tensor_map_t x_map; /* im2col: dims {c, w, h, n}, 64 channels x tile_m pixels */
    cdnn_cuda_tensor_map_t w_map; /* tiled: {r * s * c, k, 1}, box {64, tile_n, 1} */
} cdnn_cuda_conv_tma_params_t;

/* The Hopper conv kernels with a TMA-store epilogue (conv_wgmma.cu v4):
 * cdnn_cuda_conv_wgmma_store_{f16,bf16}_TMxTN and cdnn_cuda_conv_stem_store_{f16,bf16}.
 * Each consumer warpgroup finishes its 64 x tile_n accumulators in
 * registers (bias, activation, cvt), writes them into a buffer of its own in
 * shared memory (the 128-byte swizzle) and one thread stores the buffer by
 * TMA (cp.async.bulk.tensor shared -> global), which clips rows and columns
 * past y; the buffer is rewritten once the copy engine has read it, so a
 * tile's stores drain while the next tile's wgmma run.  Params: the
 * kernel's usual params followed by y_map, a tiled map of y with box {64,
 * 64, 1} and the 128-byte swizzle: for the implicit-GEMM kernels dims {k,
 * n * p * q, 1} (rows the pixels), for the stem {k, q, n * p} (a tile is an
 * output row).  They take y of the kernel's dtype (f16 or bf16) with
 * channels contiguous, its pixel stride (and for the stem its row stride,
 * with images packed: y_strides[0] == p * y_strides[1]) a multiple of 8
 * elements, 16-byte aligned (conv_tma.h).  Metadata "epilogue=tma_store".
 * Launch and dynamic smem: as their buffered twins, the smem below. */
#define CDNN_CUDA_CONV_WGMMA_STORE_CONFIGS(X) \
    X(128, 256, 3)                             \
    X(128, 128, 5)                             \
    X(256, 64, 5)                              \
    X(128, 64, 8)
/* Alignment slack, the ring, two 64 x tile_n 16-bit buffers, barriers. */
#define CDNN_CUDA_CONV_WGMMA_STORE_SMEM(tm, tn, stages) \
    (1024 + (stages) * ((tm) + (tn)) * 128 + 2 * 64 * (tn) * 2 + (stages) * 16)
#define CDNN_CUDA_CONV_STEM_STORE_SMEM \
    (CDNN_CUDA_CONV_STEM_SMEM + 2 * 64 * CDNN_CUDA_CONV_STEM_TILE_N * 2)

typedef struct cdnn_cuda_conv_tma_store_params {
    cdnn_cuda_conv_tma_params_t tma;
    cdnn_cuda_tensor_map_t y_map;
} cdnn_cuda_conv_tma_store_params_t;

typedef struct cdnn_cuda_conv_stem_store_params {
    cdnn_cuda_conv_params_t conv; /* then padding to y_map's 128-byte alignment */
    cdnn_cuda_tensor_map_t y_map;
} cdnn_cuda_conv_stem_store_params_t;

/* The layouts are ABI: pin them for the C and CUDA compilers alike. */
#if defined(__cplusplus)
#define CDNN_CUDA_STATIC_ASSERT(e, m) static_assert(e, m)
#else
#define CDNN_CUDA_STATIC_ASSERT(e, m) _Static_assert(e, m)
#endif
CDNN_CUDA_STATIC_ASSERT(sizeof(void *) == 8, "the ABI is for 64-bit hosts");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_matmul_params_t) == 200, "matmul params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_matmul_tma_params_t) == 512, "matmul tma params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_matmul_tma_store_params_t) == 640,
                        "matmul tma store params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_pointwise_params_t) == 456, "pointwise params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_norm_params_t) == 120, "norm params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_softmax_params_t) == 80, "softmax params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_reduce_params_t) == 72, "reduce params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_reduce_columns_params_t) == 96,
                        "reduce columns params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_sdpa_params_t) == 256, "sdpa params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_conv_params_t) == 280, "conv params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_conv_tma_params_t) == 768, "conv tma params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_conv_tma_store_params_t) == 896,
                        "conv tma store params layout");
CDNN_CUDA_STATIC_ASSERT(sizeof(cdnn_cuda_conv_stem_store_params_t) == 512,
                        "conv stem store params layout");

#endif
