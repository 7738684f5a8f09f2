/*
 * host_kernel.h -- the ABI between cdnn's host kernels (x86-64 ELF code
 * objects, kernels/host/) and whoever calls them (the `kernels` provider's
 * dispatch handlers).
 *
 * A code object is one shared object built for one ISA level
 * (x86-64-v2, x86-64-v3, x86-64-v4).  It exports exactly one symbol, its
 * entry, named "cdnn_host_" followed by the object's base name: the object
 * matmul_6x16.x86-64-v3.so exports cdnn_host_matmul_6x16.  Its dynamic
 * section needs no library (no libc, no libm): it can be loaded from
 * memory (memfd_create + dlopen) anywhere.  It creates no threads and
 * allocates nothing: threads come from the caller's parallel_for, scratch
 * memory from the caller's workspace.
 *
 * Every entry has one shape,
 *
 *     int32_t entry(const ARGS *args, size_t *workspace_bytes);
 *
 * where ARGS is the struct of the entry's signature (below).
 *   - workspace_bytes != NULL: a query.  The entry checks the arguments
 *     (shapes, types, strides' count, program), reads no tensor memory
 *     (pointers may be NULL) and writes the workspace bytes a run with these
 *     arguments needs (it depends on the shape and parallel.threads, not on
 *     the pointers).  A handler queries once when it prepares a launch.
 *   - workspace_bytes == NULL: a run.  The entry checks the arguments again
 *     and computes.  Nothing is written unless every check passes.
 * The return value is a cdnn_host_status_t.  Entries are reentrant: many
 * threads may run one entry at once on different outputs.  A call uses at
 * most 20 KiB of the stack of each thread it runs on; larger scratch is
 * in the workspace.
 *
 * Memory: a kernel reads and writes only the elements the arguments
 * describe (a tensor's data plus its strides times each index below the
 * dims), and the workspace's first workspace_size bytes.  Strides are in
 * elements, of any sign; 0 repeats (broadcasts) an element along a dim.
 * Kernels are correct for every stride; packed tensors (innermost stride 1)
 * take faster paths.  Outputs must not overlap inputs, except where a
 * signature says otherwise.
 *
 * Numbers: f16 and bf16 are storage types; every kernel widens them to f32
 * (exactly), computes in f32 and rounds the result to the output type to
 * nearest even.  exp, log, erf, tanh and the activations built on them are
 * the kernels' own vectorised approximations, about 1e-6 relative error
 * (see each) -- not libm's.
 */
#ifndef CDNN_HOST_KERNEL_H
#define CDNN_HOST_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct below changes in an incompatible way; the
 * signatures' "-v1" follow it. */
#define CDNN_HOST_KERNEL_ABI_VERSION 1

#define CDNN_HOST_SIGNATURE_MATMUL "host-matmul-v1"
#define CDNN_HOST_SIGNATURE_POINTWISE "host-pointwise-v1"
#define CDNN_HOST_SIGNATURE_SOFTMAX "host-softmax-v1"
#define CDNN_HOST_SIGNATURE_REDUCE "host-reduce-v1"
#define CDNN_HOST_SIGNATURE_NORM "host-norm-v1"
#define CDNN_HOST_SIGNATURE_CONV_NHWC "host-conv-nhwc-v1"

/* Element types: the same values as cdnn_data_type_t (cdnn/cdnn.h), so that
 * a handler passes a tensor's type as it is. */
typedef enum cdnn_host_type {
    CDNN_HOST_F32 = 1,
    CDNN_HOST_F16 = 2,
    CDNN_HOST_BF16 = 3
} cdnn_host_type_t;

typedef enum cdnn_host_status {
    CDNN_HOST_OK = 0,
    /* a count, dim, rank or enum value out of range, or a NULL pointer
     * where elements must be read or written */
    CDNN_HOST_BAD_ARGS = 1,
    /* a type other than f32, f16 and bf16 */
    CDNN_HOST_BAD_TYPE = 2,
    /* workspace_size below what the query said (nothing was written) */
    CDNN_HOST_WORKSPACE_TOO_SMALL = 3,
    /* a pointwise program that is not well formed (see below) */
    CDNN_HOST_BAD_PROGRAM = 4
} cdnn_host_status_t;

#define CDNN_HOST_MAX_RANK 8

/*
 * A strided tensor.  Element (i0, i1, ...) lives at
 *     (char *)data + (i0 * strides[0] + i1 * strides[1] + ...) * size(type)
 * Which index goes with which stride is the signature's to say.  data is
 * const for inputs (the kernel never writes through an input's data).
 * data may be NULL for an optional tensor (bias, residual, scale, ...): the
 * signature says which.
 */
typedef struct cdnn_host_tensor {
    void *data;
    int32_t type;      /* cdnn_host_type_t */
    int32_t reserved;  /* 0 */
    int64_t strides[CDNN_HOST_MAX_RANK];
} cdnn_host_tensor_t;

/*
 * Threads, the caller's.  A kernel that splits its work calls
 *     parallel_for(ctx, n, body, arg)
 * with n <= threads; parallel_for must call body(arg, i) exactly once for
 * every i in [0, n), in any order, on any threads, at once or not, and
 * return when all calls have returned.  Each i gets a slice of the
 * workspace of its own, so calls never share scratch memory.  With
 * threads <= 1 or parallel_for NULL the kernel runs on the calling thread.
 */
typedef void (*cdnn_host_parallel_for_t)(void *ctx, int64_t n,
                                         void (*body)(void *arg, int64_t i),
                                         void *arg);

typedef struct cdnn_host_parallel {
    int32_t threads;
    int32_t reserved; /* 0 */
    cdnn_host_parallel_for_t parallel_for;
    void *ctx;
} cdnn_host_parallel_t;

/* ------------------------------------------------------------------------
 * "host-matmul-v1": C = epilogue(A . B), over batches.
 *
 * Entries: cdnn_host_matmul_<MR>x<NR>, one register tile each (MR rows by
 * NR columns of C held in registers while K is summed); every tile gives
 * the same results up to f32 rounding order.
 * ------------------------------------------------------------------------ */

#define CDNN_HOST_MAX_BATCH_RANK (CDNN_HOST_MAX_RANK - 2)

/* The activation of the epilogue (values fixed by the lead's design). */
typedef enum cdnn_host_activation {
    CDNN_HOST_ACT_NONE = 0,
    CDNN_HOST_ACT_RELU = 1,      /* max(x, 0) */
    CDNN_HOST_ACT_GELU = 2,      /* x * Phi(x), Phi by erf */
    CDNN_HOST_ACT_GELU_TANH = 3, /* the tanh form of gelu */
    CDNN_HOST_ACT_SILU = 4,      /* x * sigmoid(x) */
    CDNN_HOST_ACT_TANH = 5,
    CDNN_HOST_ACT_COUNT = 6
} cdnn_host_activation_t;

/*
 * For every batch index (b0, .., b[batch_rank-1]) and every row i < m,
 * column j < n:
 *     acc    = sum over p < k of A[b.., i, p] * B[b.., p, j]   (f32)
 *     acc   += bias[b.., i, j]          when bias.data != NULL
 *     acc    = activation(acc)
 *     acc   += residual[b.., i, j]      when residual.data != NULL
 *     C[b.., i, j] = acc rounded to c.type
 * A tensor's strides are batch_rank batch strides, then the row stride,
 * then the column stride: a.strides = {batch.., m, k}, b.strides = {batch..,
 * k, n}, c, bias and residual {batch.., m, n}.  Broadcasting is a zero
 * stride: the usual bias over columns has strides {0.., 0, 1}; a b shared
 * by every batch has batch strides 0.  k == 0 gives epilogue(0).
 * Types: a, b, bias and residual of any cdnn_host_type_t each; c too.
 * c may be residual itself (same data, type and strides: c += ...), and
 * must not overlap a, b or bias otherwise.
 */
typedef struct cdnn_host_matmul_args {
    int32_t batch_rank; /* 0 .. CDNN_HOST_MAX_BATCH_RANK */
    int32_t activation; /* cdnn_host_activation_t */
    int64_t batch_dims[CDNN_HOST_MAX_BATCH_RANK];
    int64_t m, n, k;
    cdnn_host_tensor_t a, b;
    cdnn_host_tensor_t c;
    cdnn_host_tensor_t bias;     /* data NULL: no bias */
    cdnn_host_tensor_t residual; /* data NULL: no residual */
    void *workspace;             /* the queried bytes; any alignment */
    size_t workspace_size;
    cdnn_host_parallel_t parallel;
} cdnn_host_matmul_args_t;

/* ------------------------------------------------------------------------
 * "host-pointwise-v1": output = program(inputs...), elementwise with
 * broadcasting, over a tensor of rank dims.
 *
 * Entries: cdnn_host_pointwise_b<BLOCK>: the elements are processed BLOCK
 * at a time along the innermost dim (each op of the program over a block
 * before the next op).
 * ------------------------------------------------------------------------ */

#define CDNN_HOST_PW_MAX_INPUTS 8
#define CDNN_HOST_PW_MAX_PROGRAM 32
#define CDNN_HOST_PW_MAX_STACK 8

/*
 * The program is postfix, run on a stack of values (one per element):
 * PUSH_INPUT pushes inputs[input]'s element, PUSH_CONST pushes constant;
 * a unary op replaces the top; a binary op pops y (the top), then x, and
 * pushes x OP y.  A well-formed program never pops an empty stack, never
 * holds more than CDNN_HOST_PW_MAX_STACK values and ends with exactly one:
 * the output.  Example, gelu(a + b) * 2:
 *     PUSH_INPUT 0, PUSH_INPUT 1, ADD, GELU, PUSH_CONST 2, MUL
 * Accuracy (f32, relative, outside underflow): EXP, LOG 2e-7; SIGMOID,
 * SILU, TANH 5e-7; GELU 1e-6; GELU_TANH 1e-6, plus, for x < 0, a few
 * 2^-24 times |2u| (u = sqrt(2/pi)(x + 0.044715 x^3): the tail is
 * ~x exp(2u), so u's f32 roundings become relative error there); SQRT,
 * DIV, RECIPROCAL correctly rounded; RSQRT is 1 / sqrt, two roundings.
 * EXP of x below ln(FLT_MIN) = -87.34 is 0, not a subnormal, and so are
 * the tails built on it (SIGMOID and SILU beyond |x| = 87.3, GELU below
 * about -13): subnormal arithmetic costs x86 ~100 cycles an operation, and
 * no f32 sum sees such values.  Results just above that are within a few
 * subnormal steps (times |x| for the activations that multiply by x).
 */
typedef enum cdnn_host_pw_op {
    CDNN_HOST_PW_PUSH_INPUT = 0,
    CDNN_HOST_PW_PUSH_CONST,
    /* unary */
    CDNN_HOST_PW_NEG,
    CDNN_HOST_PW_ABS,
    CDNN_HOST_PW_EXP,
    CDNN_HOST_PW_LOG,
    CDNN_HOST_PW_SQRT,
    CDNN_HOST_PW_RSQRT,
    CDNN_HOST_PW_RECIPROCAL,
    CDNN_HOST_PW_RELU,
    CDNN_HOST_PW_GELU,
    CDNN_HOST_PW_GELU_TANH,
    CDNN_HOST_PW_SILU,
    CDNN_HOST_PW_SIGMOID,
    CDNN_HOST_PW_TANH,
    /* binary */
    CDNN_HOST_PW_ADD,
    CDNN_HOST_PW_SUB,
    CDNN_HOST_PW_MUL,
    CDNN_HOST_PW_DIV,
    CDNN_HOST_PW_MAX,
    CDNN_HOST_PW_MIN,
    CDNN_HOST_PW_OP_COUNT
} cdnn_host_pw_op_t;

typedef struct cdnn_host_pw_instr {
    int32_t op;     /* cdnn_host_pw_op_t */
    int32_t input;  /* PUSH_INPUT: index into inputs; else 0 */
    float constant; /* PUSH_CONST: the value; else 0 */
    int32_t reserved; /* 0 */
} cdnn_host_pw_instr_t;

/*
 * Every tensor (inputs and output) is indexed by the rank dims, strides
 * {dims[0] .. dims[rank-1]}; an input broadcasts through zero strides.
 * The output may be one of the inputs itself (same data, type and
 * strides), and must not overlap the inputs otherwise.
 * MAX and MIN return the non-NaN operand when one is NaN (as fmaxf).
 */
typedef struct cdnn_host_pointwise_args {
    int32_t rank;        /* 0 .. CDNN_HOST_MAX_RANK (0: one element) */
    int32_t input_count; /* 0 .. CDNN_HOST_PW_MAX_INPUTS */
    int32_t instr_count; /* 1 .. CDNN_HOST_PW_MAX_PROGRAM */
    int32_t reserved;    /* 0 */
    int64_t dims[CDNN_HOST_MAX_RANK];
    cdnn_host_tensor_t inputs[CDNN_HOST_PW_MAX_INPUTS];
    cdnn_host_tensor_t output;
    cdnn_host_pw_instr_t program[CDNN_HOST_PW_MAX_PROGRAM];
    void *workspace;     /* the queried bytes (the blocks' values) */
    size_t workspace_size;
    cdnn_host_parallel_t parallel;
} cdnn_host_pointwise_args_t;

/* ------------------------------------------------------------------------
 * Row kernels: softmax, reductions, norms.  All three work on "rows": the
 * tensor is indexed (o0, .., o[outer_rank-1], j) with j < cols the
 * reduced (normalised) index; strides are outer_rank outer strides, then
 * the column stride.  Any dim can be the column one by its stride, so
 * "the last dim" is the caller's choice of strides.  A per-row tensor
 * (a reduction's result, a norm's mean) has the outer strides only.
 * Rows are split over threads.
 * ------------------------------------------------------------------------ */

#define CDNN_HOST_MAX_OUTER_RANK (CDNN_HOST_MAX_RANK - 1)

/*
 * "host-softmax-v1": per row, y = softmax(scale * x) (log == 0) or
 * log_softmax(scale * x) (log == 1), max-subtracted.  y may be x itself
 * (same data, type and strides).  cols >= 1.
 * Entries: cdnn_host_softmax_recompute (reads x three times, exp twice),
 * cdnn_host_softmax_buffered (keeps a row of up to 4096 f32 values and
 * takes exp once; longer rows as recompute).
 */
typedef struct cdnn_host_softmax_args {
    int32_t outer_rank; /* 0 .. CDNN_HOST_MAX_OUTER_RANK */
    int32_t log;        /* 0 softmax, 1 log-softmax */
    int64_t outer_dims[CDNN_HOST_MAX_OUTER_RANK];
    int64_t cols;
    float scale;        /* 1 for the plain softmax */
    int32_t reserved;   /* 0 */
    cdnn_host_tensor_t x, y;
    cdnn_host_parallel_t parallel;
} cdnn_host_softmax_args_t;

/* Reduction modes: the same values as cdnn_reduction_mode_t. */
typedef enum cdnn_host_reduce_mode {
    CDNN_HOST_REDUCE_ADD = 0,
    CDNN_HOST_REDUCE_MUL,
    CDNN_HOST_REDUCE_MIN,
    CDNN_HOST_REDUCE_MAX,
    CDNN_HOST_REDUCE_AMAX,  /* max |x| */
    CDNN_HOST_REDUCE_AVG,
    CDNN_HOST_REDUCE_NORM1, /* sum |x| */
    CDNN_HOST_REDUCE_NORM2, /* sqrt(sum x^2) */
    CDNN_HOST_REDUCE_MODE_COUNT
} cdnn_host_reduce_mode_t;

/*
 * "host-reduce-v1": y[o..] = reduce over j < cols of x[o.., j]: in f32
 * over 4 vectors of partial results per chunk of 1024 elements, the
 * chunks' results combined in f64 (a sum's error is at most ~1024 /
 * (4 * lanes) ulps of the sum of |x|, whatever cols is).
 * cols == 0 gives the mode's identity (ADD, NORM1, NORM2, AMAX 0; MUL 1;
 * MIN +inf; MAX -inf; AVG NaN).  MIN, MAX and AMAX skip NaN (a row of
 * NaN gives the identity).  Entry: cdnn_host_reduce.
 */
typedef struct cdnn_host_reduce_args {
    int32_t outer_rank; /* 0 .. CDNN_HOST_MAX_OUTER_RANK */
    int32_t mode;       /* cdnn_host_reduce_mode_t */
    int64_t outer_dims[CDNN_HOST_MAX_OUTER_RANK];
    int64_t cols;
    cdnn_host_tensor_t x; /* strides {outer.., col} */
    cdnn_host_tensor_t y; /* strides {outer..} */
    cdnn_host_parallel_t parallel;
} cdnn_host_reduce_args_t;

typedef enum cdnn_host_norm_kind {
    CDNN_HOST_NORM_LAYER = 0, /* (x - mean) / sqrt(var + eps) */
    CDNN_HOST_NORM_RMS = 1    /* x / sqrt(mean(x^2) + eps) */
} cdnn_host_norm_kind_t;

/*
 * "host-norm-v1": per row, with mean and var the biased (1/cols) moments,
 *     layer: y = (x - mean) * inv_std * scale + bias, inv_std = 1/sqrt(var + eps)
 *     rms:   y = x * inv_std * scale + bias,          inv_std = 1/sqrt(mean(x^2) + eps)
 * scale and bias are optional (data NULL: 1 and 0), indexed like x
 * ({outer.., col} strides; the usual per-column vector has outer strides
 * 0).  mean (layer only) and inv_std are optional per-row outputs.  y may
 * be x itself (same data, type and strides).  cols >= 1.
 * Entries: cdnn_host_norm_twopass (mean, then the centred variance: the
 * accurate one), cdnn_host_norm_onepass (sums of x - x[0] and their
 * squares in one read, then y: one read of x fewer).
 */
typedef struct cdnn_host_norm_args {
    int32_t outer_rank; /* 0 .. CDNN_HOST_MAX_OUTER_RANK */
    int32_t kind;       /* cdnn_host_norm_kind_t */
    int64_t outer_dims[CDNN_HOST_MAX_OUTER_RANK];
    int64_t cols;
    float epsilon;      /* >= 0 */
    int32_t reserved;   /* 0 */
    cdnn_host_tensor_t x, y;
    cdnn_host_tensor_t scale, bias;  /* optional, {outer.., col} */
    cdnn_host_tensor_t mean, inv_std; /* optional outputs, {outer..} */
    cdnn_host_parallel_t parallel;
} cdnn_host_norm_args_t;

/* ------------------------------------------------------------------------
 * "host-conv-nhwc-v1": 2-D convolution forward, NHWC, with the matmul's
 * fused epilogue, as an implicit GEMM: no im2col buffer; an f32 x with
 * packed channels is read in place, other inputs are gathered into the
 * packed panels:
 *     acc = sum over r < R, s < S, ci < C of
 *           x[n, oh*stride_h - pad_h + r*dilation_h,
 *                ow*stride_w - pad_w + s*dilation_w, ci] * filter[k, r, s, ci]
 *     y[n, oh, ow, k] = cast(activation(acc + bias[..]) + residual[..])
 * Input positions outside [0, h) x [0, w) read as zero: pad_h and pad_w
 * are the padding before, and out_h, out_w choose the padding after.
 * x's strides are {n, h, w, c}; filter's {k, r, s, c}; y, bias and residual's
 * {n, out_h, out_w, k} (the usual bias: {0, 0, 0, 1}).  Any strides and
 * types, like the matmul (packed NHWC and KRSC are the fast paths).  One
 * group: a grouped convolution is one call per group, its x, filter, y
 * (and bias, residual) pointers moved to the group's channels.  y may be
 * residual itself and must not overlap x, filter or bias otherwise.
 * Entries: cdnn_host_conv_nhwc_<MR>x<NR>, the matmul's tiles.
 * ------------------------------------------------------------------------ */
typedef struct cdnn_host_conv_args {
    int64_t n, h, w, c;          /* input: images, height, width, channels */
    int64_t k, r, s;             /* output channels, filter height, width */
    int64_t out_h, out_w;
    int64_t pad_h, pad_w;        /* >= 0 */
    int64_t stride_h, stride_w;  /* >= 1 */
    int64_t dilation_h, dilation_w; /* >= 1 */
    int32_t activation;          /* cdnn_host_activation_t */
    int32_t reserved;            /* 0 */
    cdnn_host_tensor_t x, filter, y;
    cdnn_host_tensor_t bias;     /* data NULL: no bias */
    cdnn_host_tensor_t residual; /* data NULL: no residual */
    void *workspace;             /* the queried bytes; any alignment */
    size_t workspace_size;
    cdnn_host_parallel_t parallel;
} cdnn_host_conv_args_t;

/* The entries' types, for dlsym's result. */
typedef int32_t (*cdnn_host_matmul_fn)(const cdnn_host_matmul_args_t *args,
                                       size_t *workspace_bytes);
typedef int32_t (*cdnn_host_pointwise_fn)(
    const cdnn_host_pointwise_args_t *args, size_t *workspace_bytes);
typedef int32_t (*cdnn_host_softmax_fn)(const cdnn_host_softmax_args_t *args,
                                        size_t *workspace_bytes);
typedef int32_t (*cdnn_host_reduce_fn)(const cdnn_host_reduce_args_t *args,
                                       size_t *workspace_bytes);
typedef int32_t (*cdnn_host_norm_fn)(const cdnn_host_norm_args_t *args,
                                     size_t *workspace_bytes);
typedef int32_t (*cdnn_host_conv_fn)(const cdnn_host_conv_args_t *args,
                                     size_t *workspace_bytes);

#ifdef __cplusplus
}
#endif

#endif /* CDNN_HOST_KERNEL_H */
