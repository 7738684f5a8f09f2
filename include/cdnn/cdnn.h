/*
 * cdnn.h -- the public C API of cdnn, a deep-learning primitives library.
 *
 * The model, in the order a caller meets it:
 *
 *   1. A *handle* binds work to one device ("cpu" or "cuda:N") and, on first
 *      creation in a process, loads the engine providers.
 *   2. A *graph* describes tensor work: tensors (by uid) and the operations
 *      that connect them.  Intermediates are *virtual* tensors that never
 *      reach memory the caller owns.
 *   3. Validating a graph checks it and infers omitted output shapes.
 *   4. Building a graph on a handle asks every provider which engines can
 *      run it, orders them, and keeps the first that accepts: the *plan*.
 *   5. Executing the graph runs its plan on caller-owned memory, addressed
 *      by tensor uid (the "variant pack"), with a caller-owned workspace.
 *
 * Error model (one for the whole library): every function that can fail
 * returns a cdnn_status_t.  On failure, cdnn_last_error() returns a message
 * for the calling thread that says what failed, why, and what to do; the
 * message of a provider is kept in its own words.  Success does not clear
 * the message.  No function prints unless logging is enabled (see
 * cdnn_set_log_callback).
 *
 * Threading: distinct objects may be used from distinct threads freely.  A
 * built graph may be executed from many threads at once; building,
 * modifying or destroying an object must not race with any other use of it.
 *
 * Memory: every object created by a cdnn_*_create or cdnn_*_load function is
 * released by the matching cdnn_*_destroy.  Strings returned by the library
 * are owned by the object they came from and live as long as it does.
 */
#ifndef CDNN_CDNN_H
#define CDNN_CDNN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CDNN_API __attribute__((visibility("default")))
#else
#define CDNN_API
#endif

/* ------------------------------------------------------------------------
 * Version
 * ------------------------------------------------------------------------ */

#define CDNN_VERSION_MAJOR 0
#define CDNN_VERSION_MINOR 1
#define CDNN_VERSION_PATCH 0

/** The library's version as "major.minor.patch"; never NULL. */
CDNN_API const char *cdnn_version(void);

/* ------------------------------------------------------------------------
 * Status codes and errors
 * ------------------------------------------------------------------------ */

typedef enum cdnn_status {
    CDNN_STATUS_SUCCESS = 0,
    /** An argument is NULL, out of range or malformed. */
    CDNN_STATUS_BAD_PARAM = 1,
    /** The graph failed validation; the message names the node or tensor. */
    CDNN_STATUS_INVALID_GRAPH = 2,
    /** Valid, but nothing here can do it (no engine, no device, no driver). */
    CDNN_STATUS_NOT_SUPPORTED = 3,
    /** An allocation failed. */
    CDNN_STATUS_ALLOC_FAILED = 4,
    /** The caller's buffer is too small; nothing was written. */
    CDNN_STATUS_SIZE_INSUFFICIENT = 5,
    /** A named thing (engine, tensor uid, device) does not exist. */
    CDNN_STATUS_NOT_FOUND = 6,
    /** The object is not in a state that allows the call (e.g. not built). */
    CDNN_STATUS_BAD_STATE = 7,
    /** An engine failed while running. */
    CDNN_STATUS_EXECUTION_FAILED = 8,
    /** The object belongs to another device than the handle given. */
    CDNN_STATUS_DEVICE_MISMATCH = 9,
    /** Bytes given to a loader are damaged or are not what they claim. */
    CDNN_STATUS_CORRUPT_DATA = 10,
    /** A file could not be read or written. */
    CDNN_STATUS_IO_ERROR = 11,
    /** A bug in cdnn or a provider; please report it with the message. */
    CDNN_STATUS_INTERNAL_ERROR = 12,
} cdnn_status_t;

/** A fixed English name for a status, e.g. "CDNN_STATUS_BAD_PARAM". */
CDNN_API const char *cdnn_status_string(cdnn_status_t status);

/**
 * The calling thread's message for its most recent failure, or "" if none.
 * The pointer stays valid until the thread's next cdnn call.
 */
CDNN_API const char *cdnn_last_error(void);

/* ------------------------------------------------------------------------
 * Logging
 * ------------------------------------------------------------------------ */

typedef enum cdnn_log_level {
    CDNN_LOG_ERROR = 0,
    CDNN_LOG_WARNING = 1,
    CDNN_LOG_INFO = 2,
    CDNN_LOG_DEBUG = 3,
} cdnn_log_level_t;

typedef void (*cdnn_log_fn)(cdnn_log_level_t level, const char *message,
                            void *user);

/**
 * Route log lines (provider loading, skipped engines, selection) to fn.
 * With fn NULL, lines at or below the level in $CDNN_LOG_LEVEL (0-3,
 * default 1: errors and warnings) go to stderr prefixed "cdnn: ".
 * Lines above max_level are not produced.  Not thread-safe against
 * concurrent logging; call it before creating handles.
 */
CDNN_API void cdnn_set_log_callback(cdnn_log_fn fn, cdnn_log_level_t max_level,
                                    void *user);

/* ------------------------------------------------------------------------
 * Data types
 * ------------------------------------------------------------------------ */

typedef enum cdnn_data_type {
    /** Not given: a tensor takes the graph's io (or intermediate) type. */
    CDNN_DATA_TYPE_UNSET = 0,
    CDNN_DATA_TYPE_F32 = 1,
    CDNN_DATA_TYPE_F16 = 2,
    CDNN_DATA_TYPE_BF16 = 3,
    CDNN_DATA_TYPE_F64 = 4,
    CDNN_DATA_TYPE_I32 = 5,
    CDNN_DATA_TYPE_I64 = 6,
    CDNN_DATA_TYPE_I8 = 7,
    CDNN_DATA_TYPE_U8 = 8,
    CDNN_DATA_TYPE_BOOL = 9,
} cdnn_data_type_t;

#define CDNN_DATA_TYPE_COUNT 10

/** Short name ("f32", "bf16", ...) or "invalid". */
CDNN_API const char *cdnn_data_type_name(cdnn_data_type_t type);

/** Size in bytes of one element, or 0 for UNSET and invalid types. */
CDNN_API size_t cdnn_data_type_size(cdnn_data_type_t type);

/* ------------------------------------------------------------------------
 * Handles and providers
 * ------------------------------------------------------------------------ */

typedef struct cdnn_handle cdnn_handle_t;

/**
 * Set the provider search path: directories separated by ':'.  Overrides
 * both the directory installed next to the library and $CDNN_PROVIDER_PATH.
 * It takes effect when providers are next loaded, which happens when a
 * handle is created while no other handle exists; while any handle exists
 * it fails with BAD_STATE.  NULL restores the default search.
 */
CDNN_API cdnn_status_t cdnn_set_provider_path(const char *paths);

/**
 * Create a handle on a device: "cpu", or "cuda:N" for the N-th CUDA device
 * ("cuda" means "cuda:0").  The first handle of a process (or the first
 * after all handles were destroyed) loads the providers from, in order of
 * precedence, cdnn_set_provider_path, $CDNN_PROVIDER_PATH (ignored in
 * set-uid programs), and the "cdnn/providers" directory beside libcdnn.so.
 * A provider that fails to load is logged and skipped.
 *
 * CUDA devices need the CUDA driver (libcuda.so.1), opened at run time;
 * without it "cuda:N" fails with NOT_SUPPORTED and says so.
 */
CDNN_API cdnn_status_t cdnn_handle_create(cdnn_handle_t **handle,
                                          const char *device);

/** Destroy a handle.  Graphs built on it must not be executed afterwards. */
CDNN_API void cdnn_handle_destroy(cdnn_handle_t *handle);

/** The handle's device in canonical form ("cpu", "cuda:0"). */
CDNN_API const char *cdnn_handle_device(const cdnn_handle_t *handle);

/**
 * A line describing the device for people: "cpu (2 threads)",
 * "cuda:0 (NVIDIA H200, sm_90)".
 */
CDNN_API const char *cdnn_handle_device_description(const cdnn_handle_t *handle);

/**
 * Set the CUDA stream (a CUstream / cudaStream_t) that executions through
 * this handle are queued on.  NULL is the default stream.  On a CPU handle
 * only NULL is accepted.
 */
CDNN_API cdnn_status_t cdnn_handle_set_stream(cdnn_handle_t *handle,
                                              void *stream);

/** The 64-bit FNV-1a hash of an engine name: the engine's id. */
CDNN_API uint64_t cdnn_engine_id_from_name(const char *name);

/** What a handle knows of one engine.  Strings live as long as the handle. */
typedef struct cdnn_engine_info {
    uint64_t id;
    const char *name;             /* e.g. "cpu:reference" */
    const char *provider;         /* the provider's name, e.g. "cpu" */
    const char *provider_version; /* e.g. "0.1.0" */
    const char *provider_path;    /* the shared object it came from */
} cdnn_engine_info_t;

/** Number of engines served by the loaded providers. */
CDNN_API cdnn_status_t cdnn_handle_engine_count(const cdnn_handle_t *handle,
                                                int32_t *count);

/** Engine number index (0 <= index < count), in provider load order. */
CDNN_API cdnn_status_t cdnn_handle_engine_info(const cdnn_handle_t *handle,
                                               int32_t index,
                                               cdnn_engine_info_t *info);

/**
 * The directories providers were looked for in, ':'-separated, as used by
 * the most recent load.  Empty before any handle was created.  The string
 * is the calling thread's copy, valid until its next call.
 */
CDNN_API const char *cdnn_provider_search_path(void);

/* ------------------------------------------------------------------------
 * Device memory
 *
 * What a program needs to run a plan on a device without linking that
 * device's runtime: buffers on the handle's device, copies to and from
 * host memory, and waiting for the handle's stream.  On a CPU handle the
 * buffers are host memory; on a CUDA handle they are device memory
 * (cuMemAlloc) in the device's primary context, and a pointer returned
 * here may be passed to cdnn_graph_execute and to CUDA directly.
 *
 * The handle keeps a table of the blocks it handed out, so that the calls
 * below check what they are given: a pointer that is not one of the
 * handle's blocks, a double free, or a copy that runs past the end of its
 * block fails with BAD_PARAM instead of corrupting memory.  Blocks still
 * allocated when the handle is destroyed are freed with it.  All of these
 * calls are thread-safe on one handle.
 * ------------------------------------------------------------------------ */

/**
 * Allocate bytes (> 0) on the handle's device, aligned to 256 bytes (at
 * least what any plan asks of a tensor; see cdnn_tensor_io.alignment).
 * The contents are undefined.  ALLOC_FAILED names the size when the device
 * has no room; *pointer is NULL on failure.
 */
CDNN_API cdnn_status_t cdnn_memory_alloc(cdnn_handle_t *handle, size_t bytes,
                                         void **pointer);

/**
 * Free a block from cdnn_memory_alloc on the same handle.  NULL is
 * accepted and does nothing; any other pointer that is not the start of a
 * live block of this handle fails with BAD_PARAM and frees nothing.  On a
 * CUDA handle the caller must first make sure no queued work still uses
 * the block (cdnn_handle_synchronize).
 */
CDNN_API cdnn_status_t cdnn_memory_free(cdnn_handle_t *handle, void *pointer);

/**
 * Copy bytes from host memory to device_dst, which with its bytes must lie
 * inside one live block of this handle.  The copy is queued on the
 * handle's stream after the work already there and has completed when the
 * call returns, so the host buffer may be reused at once.
 */
CDNN_API cdnn_status_t cdnn_memory_upload(cdnn_handle_t *handle, void *device_dst,
                                          const void *host_src, size_t bytes);

/**
 * Copy bytes from device_src, which with its bytes must lie inside one
 * live block of this handle, to host memory.  The copy is queued on the
 * handle's stream after the work already there (a plan's execution, say)
 * and the bytes are in host_dst when the call returns.
 */
CDNN_API cdnn_status_t cdnn_memory_download(cdnn_handle_t *handle, void *host_dst,
                                            const void *device_src, size_t bytes);

/**
 * Wait until the work queued on the handle's stream has finished; on a CPU
 * handle there is none and it returns at once.  A failure of queued work
 * (a kernel that faulted) is reported here, as EXECUTION_FAILED with the
 * driver's words.
 */
CDNN_API cdnn_status_t cdnn_handle_synchronize(cdnn_handle_t *handle);

/* ------------------------------------------------------------------------
 * Operation attributes
 * ------------------------------------------------------------------------ */

/** Tensors are named by a caller-chosen 64-bit uid; this one means "none". */
#define CDNN_UID_NONE INT64_MIN

/** Most tensor dimensions cdnn handles. */
#define CDNN_MAX_RANK 8

/** Largest dim or stride, and largest element count or strided span, of a
 * tensor: limits that keep every shape computation inside 64 bits. */
#define CDNN_MAX_DIM ((int64_t)1 << 40)
#define CDNN_MAX_ELEMENTS ((int64_t)1 << 52)

/** Largest convolution padding, stride, dilation or group count. */
#define CDNN_MAX_CONV_ATTR ((int64_t)1 << 20)

/** Most tensors, and most nodes, one graph holds (the builder refuses the
 * next with BAD_PARAM; a saved graph holding more does not load). */
#define CDNN_MAX_TENSORS 16384
#define CDNN_MAX_NODES 16384

/** Largest graph, plan or container a loader reads: 1 GiB.  Larger bytes
 * fail with NOT_SUPPORTED before anything past their identifier is read. */
#define CDNN_MAX_ARTIFACT_BYTES ((size_t)1 << 30)

/**
 * Convolution (cross-correlation, as every framework computes it).
 * Layout is given by dims in logical order: x [N, C, D?, H?, W], filter
 * [K, C/groups, T?, R?, S], y [N, K, spatial...]; strides choose the memory
 * layout (NCHW, NHWC, anything else).
 */
typedef struct cdnn_conv_attr {
    int32_t spatial_dims;     /* 1, 2 or 3 */
    int64_t pre_padding[3];   /* per spatial dim, >= 0 */
    int64_t post_padding[3];  /* per spatial dim, >= 0 */
    int64_t stride[3];        /* per spatial dim, >= 1 */
    int64_t dilation[3];      /* per spatial dim, >= 1 */
    int64_t groups;           /* >= 1, divides C and K */
} cdnn_conv_attr_t;

/** Fill a: stride 1, dilation 1, no padding, one group. */
CDNN_API void cdnn_conv_attr_init(cdnn_conv_attr_t *a, int32_t spatial_dims);

/*
 * Numeric semantics (every CPU engine; cpu:reference is the definition).
 *
 *   Floating point.  A pointwise node with a floating-point input computes
 *   in at least float precision and rounds to nearest (even) when it
 *   stores; f64 is computed in f64 (cpu:reference computes every floating
 *   node in double; no engine narrows f64).  Division by zero is IEEE's
 *   (+-inf, NaN).  An integer input of such a node converts to double first
 *   (exact up to 2^53).
 *
 *   Integers.  A pointwise node whose inputs are all integer or bool
 *   tensors computes add, sub, mul, div, max, min, pow, identity, neg, abs,
 *   reciprocal, floor, ceil, round, fmod, remainder, the comparisons,
 *   logic, select and fma
 *   exactly, in 64-bit two's complement, and stores the result converted
 *   to its output type (below).  So with all types u8: 200 + 100 = 44
 *   (wraps, as C, ONNX, NumPy and PyTorch), 0 - 1 = 255; i32 -7 / 2 = -3
 *   and u8 12 / 23 = 0 (division truncates toward zero, also into a float
 *   output); i64 2^53 + 1 stays exact; INT_MIN / -1 and abs(INT_MIN) wrap
 *   to INT_MIN.  Integer division by zero is defined: x / 0 = 0 (0 / 0
 *   too; NumPy's result), and reciprocal(0) = 0.  pow with a negative
 *   exponent is the truncated 1 / a^-b: 1 for a = 1, +-1 for a = -1, else
 *   0.  round is the identity; fmod and remainder are exact (C's %, and
 *   Python's % with the sign of the divisor: -7 remainder 2 = 1), and
 *   x fmod 0 = x remainder 0 = 0 (NumPy's result), INT_MIN fmod -1 = 0.
 *   Nothing saturates unless an op says so.  The other modes (exp, log,
 *   sqrt, rsqrt, the trigonometric and hyperbolic ones, erf and the
 *   activations) compute in double even on integers, and convert as a
 *   float does (sqrt(i32 10) = 3).
 *
 *   Conversions, on store (and for a pass-by-value scalar's value):
 *   integer -> narrower integer keeps the low bits (i32 300 -> u8 44, -1 ->
 *   u8 255); float -> integer truncates toward zero (2.7 -> 2, -2.7 -> -2),
 *   NaN -> 0, and a value beyond the type's range, infinities included,
 *   saturates to the type's min or max (f32 1e10 -> i32 2147483647); any
 *   type -> bool is value != 0 (NaN -> 1); integer -> float rounds to
 *   nearest even (i64 2^53 + 1 -> f64 2^53).
 *
 *   Reductions take any type.  On an integer or bool x, add, mul, min,
 *   max, amax and norm1 are exact in 64-bit two's complement (|x| exact:
 *   |-128| = 128), wrapping, and the result converts to y as above (NumPy's
 *   x.sum() then astype); avg and norm2 compute in double.  On a float x
 *   they accumulate in double on cpu:reference.
 *
 *   Normalisations, softmax, matmul, convolution and attention take
 *   floating-point types only; they accumulate in at least the graph's
 *   compute type (f64 in f64).  Reshape, transpose, concat and slice take
 *   any type and move elements exactly.
 */
typedef enum cdnn_pointwise_mode {
    /* binary arithmetic: y = f(a, b) */
    CDNN_PW_ADD = 0,
    CDNN_PW_SUB,
    CDNN_PW_MUL,
    CDNN_PW_DIV, /* integers: truncates toward zero; x / 0 = 0 */
    CDNN_PW_MAX,
    CDNN_PW_MIN,
    CDNN_PW_POW,
    /* unary math: y = f(a) */
    CDNN_PW_IDENTITY,
    CDNN_PW_NEG,
    CDNN_PW_ABS,
    CDNN_PW_EXP,
    CDNN_PW_LOG,
    CDNN_PW_SQRT,
    CDNN_PW_RSQRT,
    CDNN_PW_RECIPROCAL,
    CDNN_PW_SIN,
    CDNN_PW_COS,
    CDNN_PW_ERF,
    CDNN_PW_FLOOR,
    CDNN_PW_CEIL,
    /* comparisons and logic: y is 1 or 0 (any output type, bool natural) */
    CDNN_PW_CMP_EQ,
    CDNN_PW_CMP_NE,
    CDNN_PW_CMP_GT,
    CDNN_PW_CMP_GE,
    CDNN_PW_CMP_LT,
    CDNN_PW_CMP_LE,
    CDNN_PW_LOGICAL_AND,
    CDNN_PW_LOGICAL_OR,
    CDNN_PW_LOGICAL_NOT,
    /* ternary */
    CDNN_PW_SELECT, /* y = a != 0 ? b : c */
    CDNN_PW_FMA,    /* y = a * b + c (on integers: wrapping, exact) */
    /* activation forwards: y = f(a) */
    CDNN_PW_RELU_FWD, /* clip(a, lower, upper), slope below lower */
    CDNN_PW_GELU_FWD, /* a * Phi(a), exact erf form */
    CDNN_PW_GELU_TANH_FWD,
    CDNN_PW_SIGMOID_FWD,
    CDNN_PW_SWISH_FWD, /* a * sigmoid(beta * a) */
    CDNN_PW_TANH_FWD,
    CDNN_PW_ELU_FWD,      /* a > 0 ? a : alpha * (exp(a) - 1) */
    CDNN_PW_SOFTPLUS_FWD, /* log(1 + exp(beta * a)) / beta */
    /* activation backwards: y = dy * f'(x), inputs (dy, x) with x the
     * forward input */
    CDNN_PW_RELU_BWD,
    CDNN_PW_GELU_BWD,
    CDNN_PW_GELU_TANH_BWD,
    CDNN_PW_SIGMOID_BWD,
    CDNN_PW_SWISH_BWD,
    CDNN_PW_TANH_BWD,
    CDNN_PW_ELU_BWD,
    CDNN_PW_SOFTPLUS_BWD,
    /* graph format 1.3 (a graph using one of these saves as 1.3; providers
     * built before ABI 1.4 are not shown it): */
    CDNN_PW_ROUND,     /* to nearest, halves to even (np.round, np.rint,
                        * torch.round); integers: unchanged */
    CDNN_PW_FMOD,      /* a - trunc(a / b) * b, the sign of a (C fmod,
                        * np.fmod, torch.fmod, ONNX Mod fmod=1); integers:
                        * exact, x fmod 0 = 0 */
    CDNN_PW_REMAINDER, /* a - floor(a / b) * b, the sign of b (Python %,
                        * np.remainder, torch.remainder); floats: a zero
                        * result takes b's sign; integers: exact,
                        * x remainder 0 = 0 */
    CDNN_PW_ASIN,
    CDNN_PW_ACOS,
    CDNN_PW_ATAN,
    CDNN_PW_SINH,
    CDNN_PW_COSH,
    CDNN_PW_TAN,
    CDNN_PW_ASINH,
    CDNN_PW_ACOSH,
    CDNN_PW_ATANH,
    CDNN_PW_ATAN2,     /* atan2(a, b), the angle of the point (b, a) */
    CDNN_PW_MODE_COUNT
} cdnn_pointwise_mode_t;

/** Short name of a pointwise mode ("add", "gelu_fwd", ...) or "invalid". */
CDNN_API const char *cdnn_pointwise_mode_name(cdnn_pointwise_mode_t mode);

/** Number of inputs (1, 2 or 3) a pointwise mode takes; 0 if invalid. */
CDNN_API int32_t cdnn_pointwise_arity(cdnn_pointwise_mode_t mode);

typedef struct cdnn_pointwise_attr {
    cdnn_pointwise_mode_t mode;
    double relu_lower_clip;       /* default 0 */
    double relu_upper_clip;       /* default +inf */
    double relu_lower_clip_slope; /* default 0 (leaky relu if > 0) */
    double elu_alpha;             /* default 1 */
    double softplus_beta;         /* default 1 */
    double swish_beta;            /* default 1 */
} cdnn_pointwise_attr_t;

/** Fill a with mode and the defaults above. */
CDNN_API void cdnn_pointwise_attr_init(cdnn_pointwise_attr_t *a,
                                       cdnn_pointwise_mode_t mode);

typedef enum cdnn_reduction_mode {
    CDNN_REDUCE_ADD = 0,
    CDNN_REDUCE_MUL,
    CDNN_REDUCE_MIN,
    CDNN_REDUCE_MAX,
    CDNN_REDUCE_AMAX, /* max of |x| */
    CDNN_REDUCE_AVG,
    CDNN_REDUCE_NORM1, /* sum of |x| */
    CDNN_REDUCE_NORM2, /* sqrt of sum of x^2 */
    CDNN_REDUCE_MODE_COUNT
} cdnn_reduction_mode_t;

/** Short name of a reduction mode ("add", "norm2", ...) or "invalid". */
CDNN_API const char *cdnn_reduction_mode_name(cdnn_reduction_mode_t mode);

/** Scaled-dot-product attention. */
typedef struct cdnn_sdpa_attr {
    double scale; /* applied to q.k; 0 means 1/sqrt(head dim) */
    int32_t causal; /* nonzero: query i sees only keys j <= i (top-left) */
} cdnn_sdpa_attr_t;

/** A permutation of dims: y's dim i is x's dim perm[i]. */
typedef struct cdnn_transpose_attr {
    int32_t rank;                /* 1 .. CDNN_MAX_RANK */
    int32_t perm[CDNN_MAX_RANK]; /* each of 0 .. rank - 1 once */
} cdnn_transpose_attr_t;

/** A strided window of a tensor: y[j] = x[start + j * step] in each dim,
 * y's dims being the window's (declared with y). */
typedef struct cdnn_slice_attr {
    int32_t rank;                 /* 1 .. CDNN_MAX_RANK */
    int32_t step[CDNN_MAX_RANK];  /* >= 1 */
    int64_t start[CDNN_MAX_RANK]; /* 0 .. CDNN_MAX_DIM */
} cdnn_slice_attr_t;

/** Constant padding: y is x placed at offset pre in each dim, every other
 * element `value`; y's dims (declared with y) give the padding after. */
typedef struct cdnn_pad_attr {
    int32_t rank;                /* 1 .. CDNN_MAX_RANK */
    int64_t pre[CDNN_MAX_RANK];  /* 0 .. CDNN_MAX_DIM */
    double value;                /* converted to y's type as a store is */
} cdnn_pad_attr_t;

/** Top-k along one axis (ONNX TopK, torch.topk with sorted=True). */
typedef struct cdnn_topk_attr {
    int32_t axis;    /* negative counts from the end */
    int32_t largest; /* nonzero: the k largest, descending; 0: the k
                      * smallest, ascending */
    int64_t k;       /* 1 .. x's dim at the axis */
} cdnn_topk_attr_t;

/** Pooling modes (cdnn_pooling_attr_t.mode). */
typedef enum cdnn_pooling_mode {
    CDNN_POOLING_MAX = 0, /* the window's largest element */
    CDNN_POOLING_AVG,     /* the window's mean */
    CDNN_POOLING_MODE_COUNT
} cdnn_pooling_mode_t;

/**
 * Max or average pooling over the spatial dims of x [N, C, D?, H?, W]
 * (1, 2 or 3 spatial dims; strides choose NCHW, NHWC or any layout).
 * Output position o of a spatial dim of size n reads the taps
 * o * stride - pre_padding + j * dilation, j = 0 .. window - 1; a tap
 * outside 0 .. n - 1 is padding, which no window takes its maximum of
 * and an average counts only with count_include_pad (and then only the
 * taps before n + post_padding, as PyTorch: ceil mode's extra reach is
 * never counted).  The output size is PyTorch's:
 *   floor_or_ceil((n + pre + post - dilation * (window - 1) - 1) / stride) + 1,
 * rounded up in ceil mode, and then one less where ceil mode's last
 * window would start at or past n + pre (in the right padding).
 */
typedef struct cdnn_pooling_attr {
    int32_t mode;              /* cdnn_pooling_mode_t */
    int32_t spatial_dims;      /* 1, 2 or 3 */
    int32_t window[3];         /* per spatial dim, 1 .. 2^20 */
    int32_t stride[3];         /* per spatial dim, 1 .. 2^20 */
    int32_t dilation[3];       /* per spatial dim, 1 .. 2^20; 1 for average */
    int32_t ceil_mode;         /* nonzero: output sizes rounded up */
    int32_t count_include_pad; /* average only: nonzero divides by every tap
                                * inside the padded input (PyTorch's
                                * count_include_pad=True, ONNX AveragePool's
                                * count_include_pad=1); 0 by the taps inside
                                * x only */
    int64_t pre_padding[3];    /* per spatial dim, 0 .. 2^20 */
    int64_t post_padding[3];   /* per spatial dim, 0 .. 2^20 */
} cdnn_pooling_attr_t;

/** Fill a: `mode` over `spatial_dims` dims, window 1, stride 1, dilation
 * 1, no padding, floor mode, count_include_pad 0. */
CDNN_API void cdnn_pooling_attr_init(cdnn_pooling_attr_t *a, cdnn_pooling_mode_t mode,
                                     int32_t spatial_dims);

/** Resize interpolation (cdnn_resize_attr_t.mode). */
typedef enum cdnn_resize_mode {
    CDNN_RESIZE_NEAREST = 0, /* the nearest element, rounded by `nearest` */
    CDNN_RESIZE_LINEAR,      /* linear in each resized dim (bilinear in 2,
                              * trilinear in 3) */
    CDNN_RESIZE_MODE_COUNT
} cdnn_resize_mode_t;

/** Where y's element j of a dim (x's size n, y's m) samples x (ONNX
 * Resize's coordinate_transformation_mode). */
typedef enum cdnn_resize_coordinate {
    CDNN_RESIZE_HALF_PIXEL = 0, /* (j + 0.5) * n / m - 0.5 (PyTorch's
                                 * align_corners=False) */
    CDNN_RESIZE_ALIGN_CORNERS,  /* j * (n - 1) / (m - 1), 0 where m is 1
                                 * (PyTorch's align_corners=True) */
    CDNN_RESIZE_ASYMMETRIC,     /* j * n / m (PyTorch's mode='nearest') */
    CDNN_RESIZE_COORDINATE_COUNT
} cdnn_resize_coordinate_t;

/** How nearest rounds a coordinate (ONNX Resize's nearest_mode). */
typedef enum cdnn_resize_nearest {
    CDNN_RESIZE_ROUND_PREFER_FLOOR = 0, /* to nearest, halves down (ONNX's default) */
    CDNN_RESIZE_ROUND_PREFER_CEIL,      /* to nearest, halves up */
    CDNN_RESIZE_FLOOR,
    CDNN_RESIZE_CEIL,
    CDNN_RESIZE_NEAREST_COUNT
} cdnn_resize_nearest_t;

/**
 * Resize (ONNX Resize with sizes; torch.nn.functional.interpolate with
 * size): the scale of each dim is y's size over x's, y being declared.
 * PyTorch's mode='nearest' is NEAREST with ASYMMETRIC and FLOOR;
 * 'nearest-exact' is NEAREST with HALF_PIXEL and ROUND_PREFER_CEIL;
 * 'linear', 'bilinear' and 'trilinear' are LINEAR with HALF_PIXEL
 * (align_corners=False) or ALIGN_CORNERS.  ONNX's default nearest is
 * HALF_PIXEL with ROUND_PREFER_FLOOR.  Coordinates are clamped into
 * 0 .. n - 1 (PyTorch's clamp of negative linear coordinates to 0 gives
 * the same values).
 */
typedef struct cdnn_resize_attr {
    int32_t mode;       /* cdnn_resize_mode_t */
    int32_t coordinate; /* cdnn_resize_coordinate_t */
    int32_t nearest;    /* cdnn_resize_nearest_t; nearest mode only */
} cdnn_resize_attr_t;

/* ------------------------------------------------------------------------
 * Graphs
 * ------------------------------------------------------------------------ */

typedef struct cdnn_graph cdnn_graph_t;

/** Create an empty graph.  Defaults: io f32, intermediate f32, compute f32. */
CDNN_API cdnn_status_t cdnn_graph_create(cdnn_graph_t **graph);

/** Destroy a graph and its plan.  NULL is ignored. */
CDNN_API void cdnn_graph_destroy(cdnn_graph_t *graph);

/** Name the graph (diagnostic only; not part of the content key). */
CDNN_API cdnn_status_t cdnn_graph_set_name(cdnn_graph_t *graph,
                                           const char *name);

/**
 * Graph-level types.  io: tensors declared UNSET that are not virtual;
 * intermediate: virtual tensors declared UNSET; compute: the precision
 * engines accumulate in (at least; the reference engine always uses f64).
 */
CDNN_API cdnn_status_t cdnn_graph_set_data_types(cdnn_graph_t *graph,
                                                 cdnn_data_type_t io,
                                                 cdnn_data_type_t intermediate,
                                                 cdnn_data_type_t compute);

/**
 * Declare a tensor.  uid must be unique in the graph and not CDNN_UID_NONE.
 * name may be NULL ("t<uid>" is used).  rank 0 with dims NULL declares an
 * output whose shape validation infers; otherwise 1 <= rank <= 8 and every
 * dim >= 1.  strides NULL means packed row-major (last dim fastest).  Given
 * strides are in elements and must be >= 0; a stride of 0 repeats one
 * element along a dim and is allowed only on tensors no node writes.
 */
CDNN_API cdnn_status_t cdnn_graph_tensor(cdnn_graph_t *graph, int64_t uid,
                                         const char *name,
                                         cdnn_data_type_t type, int32_t rank,
                                         const int64_t *dims,
                                         const int64_t *strides);

/** Mark a tensor virtual: an intermediate that never reaches memory. */
CDNN_API cdnn_status_t cdnn_graph_tensor_set_virtual(cdnn_graph_t *graph,
                                                     int64_t uid);

/** Require that the tensor's pointer be aligned to bytes (a power of 2). */
CDNN_API cdnn_status_t cdnn_graph_tensor_set_alignment(cdnn_graph_t *graph,
                                                       int64_t uid,
                                                       int64_t bytes);

/**
 * Make a tensor a pass-by-value scalar: every element equals value, and it
 * needs no pointer at execute.  Its dims must all be 1, and value must not
 * be NaN (BAD_PARAM; infinities are allowed).
 */
CDNN_API cdnn_status_t cdnn_graph_tensor_set_scalar(cdnn_graph_t *graph,
                                                    int64_t uid, double value);

/* Operations.  name names the node in messages (NULL: "node<i>").  Each
 * takes the uids of tensors already declared; outputs may be declared with
 * rank 0 so that validation infers their shape.  Attributes that are wrong
 * whatever the graph (a convolution's spatial_dims outside 1..3, padding
 * below 0, stride, dilation or groups below 1, any of them above
 * CDNN_MAX_CONV_ATTR; a pointwise or reduction mode outside its enum) are
 * refused with BAD_PARAM, naming the node, the attribute and the value, and
 * the node is not added; the rest is checked by validation. */

/** y = conv(x, w). */
CDNN_API cdnn_status_t cdnn_graph_conv_fwd(cdnn_graph_t *graph,
                                           const char *name,
                                           const cdnn_conv_attr_t *attr,
                                           int64_t x, int64_t w, int64_t y);

/** dx = gradient of conv(x, w) wrt x, given dy. */
CDNN_API cdnn_status_t cdnn_graph_conv_bwd_data(cdnn_graph_t *graph,
                                                const char *name,
                                                const cdnn_conv_attr_t *attr,
                                                int64_t dy, int64_t w,
                                                int64_t dx);

/** dw = gradient of conv(x, w) wrt w, given x and dy. */
CDNN_API cdnn_status_t cdnn_graph_conv_bwd_filter(cdnn_graph_t *graph,
                                                  const char *name,
                                                  const cdnn_conv_attr_t *attr,
                                                  int64_t x, int64_t dy,
                                                  int64_t dw);

/**
 * c = a @ b over the last two dims: a [..., M, K], b [..., K, N],
 * c [..., M, N].  Batch dims must have equal rank; a batch dim of 1
 * broadcasts.
 */
CDNN_API cdnn_status_t cdnn_graph_matmul(cdnn_graph_t *graph, const char *name,
                                         int64_t a, int64_t b, int64_t c);

/**
 * y = mode(a, b, c).  Unused inputs are CDNN_UID_NONE.  Inputs broadcast
 * as in NumPy: an input of lower rank than y is aligned to y's last dims
 * (as if it had leading dims of 1; a graph with such an input saves as
 * graph format 1.3), and an input dim of 1 broadcasts.  y declared with
 * rank 0 takes the largest input rank.  Engines see such an input at y's
 * rank (the view has leading dims of 1), so a tensor must be used at one
 * rank throughout the graph: one read broadcast to two different ranks, or
 * broadcast and also read or written at its own rank by another node, is
 * refused by validation (declare it at the larger rank).
 */
CDNN_API cdnn_status_t cdnn_graph_pointwise(cdnn_graph_t *graph,
                                            const char *name,
                                            const cdnn_pointwise_attr_t *attr,
                                            int64_t a, int64_t b, int64_t c,
                                            int64_t y);

/**
 * y = reduce(x) over every dim where y has 1 and x has more.  y has x's
 * rank.  When y is declared with rank 0 it is inferred as x with every dim
 * reduced (a scalar of x's rank).
 */
CDNN_API cdnn_status_t cdnn_graph_reduction(cdnn_graph_t *graph,
                                            const char *name,
                                            cdnn_reduction_mode_t mode,
                                            int64_t x, int64_t y);

/**
 * Batch-norm inference: y = (x - mean) / sqrt(var + eps) * scale + bias,
 * with scale, bias, mean, var of shape [1, C, 1...] (x is [N, C, ...]).
 */
CDNN_API cdnn_status_t cdnn_graph_batchnorm_inference(
    cdnn_graph_t *graph, const char *name, double epsilon, int64_t x,
    int64_t scale, int64_t bias, int64_t mean, int64_t variance, int64_t y);

/**
 * Layer-norm forward: y = (x - mean) / sqrt(var + eps) * scale (+ bias).
 * The normalised dims are those where scale has the dim of x; scale and
 * bias have 1 in every other dim.  bias may be CDNN_UID_NONE (no bias; a
 * graph with such a node saves as graph format 1.2).  mean and
 * inv_variance are optional outputs (CDNN_UID_NONE) with x's dims reduced
 * over the normalised dims.
 */
CDNN_API cdnn_status_t cdnn_graph_layernorm(cdnn_graph_t *graph,
                                            const char *name, double epsilon,
                                            int64_t x, int64_t scale,
                                            int64_t bias, int64_t y,
                                            int64_t mean,
                                            int64_t inv_variance);

/**
 * RMS-norm forward: y = x / sqrt(mean(x^2) + eps) * scale (+ bias).  The
 * normalised dims are as for layer-norm; bias and inv_rms (an optional
 * output) may be CDNN_UID_NONE.
 */
CDNN_API cdnn_status_t cdnn_graph_rmsnorm(cdnn_graph_t *graph, const char *name,
                                          double epsilon, int64_t x,
                                          int64_t scale, int64_t bias,
                                          int64_t y, int64_t inv_rms);

/**
 * Scaled-dot-product attention forward:
 * o = softmax(scale * q k^T [+ causal mask]) v, with q [B, H, Sq, D],
 * k [B, H, Sk, D], v [B, H, Sk, Dv], o [B, H, Sq, Dv].
 */
CDNN_API cdnn_status_t cdnn_graph_sdpa_fwd(cdnn_graph_t *graph,
                                           const char *name,
                                           const cdnn_sdpa_attr_t *attr,
                                           int64_t q, int64_t k, int64_t v,
                                           int64_t o);

/**
 * Softmax along one axis: y = exp(x - max) / sum(exp(x - max)), each row
 * of x along `axis` on its own (a negative axis counts from the end: -1 is
 * the last dim).  y has x's shape.  Floating-point types only; a graph
 * with this node saves as graph format 1.2.
 */
CDNN_API cdnn_status_t cdnn_graph_softmax(cdnn_graph_t *graph, const char *name,
                                          int32_t axis, int64_t x, int64_t y);

/**
 * Log-softmax along one axis: y = x - max - log(sum(exp(x - max))), as
 * cdnn_graph_softmax but in log space (never log of 0 for a finite row).
 */
CDNN_API cdnn_status_t cdnn_graph_log_softmax(cdnn_graph_t *graph,
                                              const char *name, int32_t axis,
                                              int64_t x, int64_t y);

/**
 * Reshape: y holds x's elements in row-major order of their coordinates
 * (NumPy's reshape of the logical tensor; strides of either side only say
 * where elements live).  y's shape must be declared, with x's element
 * count; x and y have one type, any type.  Saves as graph format 1.2.
 */
CDNN_API cdnn_status_t cdnn_graph_reshape(cdnn_graph_t *graph, const char *name,
                                          int64_t x, int64_t y);

/* Training passes of the norms (graph format 1.3).  x, dy and dx are
 * [N, C, ...] for batch-norm (any strides: NCHW and NHWC alike are logical
 * [N, C, H, W]) and any rank for layer-norm and RMS-norm.  Statistics and
 * parameters may have another floating-point type than x (f32 statistics
 * of an f16 or bf16 x, say); cpu:reference computes in double and rounds
 * only what it stores. */

/**
 * Batch-norm training forward: per channel c (dim 1), over N and the
 * spatial dims, mean and the biased variance var of x;
 * y = (x - mean) / sqrt(var + eps) * scale + bias (torch's
 * batch_norm(training=True)).  scale and bias are [1, C, 1...]; mean and
 * inv_variance = 1 / sqrt(var + eps), the statistics the backward takes,
 * are optional [1, C, 1...] outputs (CDNN_UID_NONE).  The running
 * statistics are cdnn_graph_batchnorm_running_stats (a node has at most 3
 * outputs).
 */
CDNN_API cdnn_status_t cdnn_graph_batchnorm_train(cdnn_graph_t *graph,
                                                  const char *name, double epsilon,
                                                  int64_t x, int64_t scale,
                                                  int64_t bias, int64_t y,
                                                  int64_t mean,
                                                  int64_t inv_variance);

/**
 * Batch-norm running statistics, as PyTorch updates them in training:
 * next_running_mean = (1 - momentum) * running_mean + momentum * mean,
 * next_running_var = (1 - momentum) * running_var + momentum * var * n /
 * (n - 1), with mean and var x's batch statistics per channel (as
 * cdnn_graph_batchnorm_train's) and n = x's elements per channel: the
 * running variance takes the UNBIASED batch variance, while normalisation
 * uses the biased one.  momentum is 0 to 1 (BAD_PARAM otherwise; PyTorch's
 * default is 0.1).  All four statistics are [1, C, 1...]; validation
 * refuses n < 2.  The node reads x itself (no epsilon round trip through
 * inv_variance); put it in the same graph as the forward.
 */
CDNN_API cdnn_status_t cdnn_graph_batchnorm_running_stats(
    cdnn_graph_t *graph, const char *name, double momentum, int64_t x,
    int64_t running_mean, int64_t running_var, int64_t next_running_mean,
    int64_t next_running_var);

/**
 * Batch-norm backward (cuDNN's batchnorm_backward), from the forward's
 * saved statistics: with xhat = (x - mean) * inv_variance and g = dy *
 * scale, per channel over N and the spatial dims,
 * dx = inv_variance * (g - mean(g) - xhat * mean(g * xhat)),
 * dscale = sum(dy * xhat), dbias = sum(dy).  dy and x have one type and
 * x's dims; scale, mean, inv_variance, dscale and dbias are [1, C, 1...].
 * dscale and dbias may be CDNN_UID_NONE.
 */
CDNN_API cdnn_status_t cdnn_graph_batchnorm_bwd(cdnn_graph_t *graph,
                                                const char *name, int64_t dy,
                                                int64_t x, int64_t scale,
                                                int64_t mean, int64_t inv_variance,
                                                int64_t dx, int64_t dscale,
                                                int64_t dbias);

/**
 * Layer-norm backward, from cdnn_graph_layernorm's mean and inv_variance:
 * over the normalised dims (those where scale is not 1, as the forward),
 * dx = inv_variance * (g - mean(g) - xhat * mean(g * xhat)) with
 * xhat = (x - mean) * inv_variance and g = dy * scale; dscale =
 * sum(dy * xhat) and dbias = sum(dy) over the other dims, with scale's dims.
 * dscale and dbias may be CDNN_UID_NONE.
 */
CDNN_API cdnn_status_t cdnn_graph_layernorm_bwd(cdnn_graph_t *graph,
                                                const char *name, int64_t dy,
                                                int64_t x, int64_t scale,
                                                int64_t mean, int64_t inv_variance,
                                                int64_t dx, int64_t dscale,
                                                int64_t dbias);

/**
 * RMS-norm backward, from cdnn_graph_rmsnorm's inv_rms: with
 * xhat = x * inv_rms and g = dy * scale, over the normalised dims,
 * dx = inv_rms * (g - xhat * mean(g * xhat)); dscale = sum(dy * xhat) and
 * dbias = sum(dy) (for a forward with bias) over the other dims.  dscale
 * and dbias may be CDNN_UID_NONE.
 */
CDNN_API cdnn_status_t cdnn_graph_rmsnorm_bwd(cdnn_graph_t *graph,
                                              const char *name, int64_t dy,
                                              int64_t x, int64_t scale,
                                              int64_t inv_rms, int64_t dx,
                                              int64_t dscale, int64_t dbias);

/**
 * Transpose: y's dim i is x's dim perm[i], and y at coordinate j is x at
 * the coordinate k with k[perm[i]] = j[i] (NumPy's transpose(x, perm); no
 * strides are assumed of either).  attr->rank must
 * be x's rank and perm a permutation of 0 .. rank - 1 (else BAD_PARAM);
 * y is inferred.  x and y have one type, any type.  Saves as graph format
 * 1.2.
 */
CDNN_API cdnn_status_t cdnn_graph_transpose(cdnn_graph_t *graph, const char *name,
                                            const cdnn_transpose_attr_t *attr,
                                            int64_t x, int64_t y);

/**
 * Concat: y is xs[0], ..., xs[n - 1] joined along `axis` (negative from the
 * end), 2 <= n <= 5 (CDNN_NODE_MAX_INPUTS; join more with more nodes).
 * The inputs have one type, one rank and equal dims but on the axis; y
 * (inferred) sums them there.  Any type.  Saves as graph format 1.2.
 */
CDNN_API cdnn_status_t cdnn_graph_concat(cdnn_graph_t *graph, const char *name,
                                         int32_t axis, int32_t n,
                                         const int64_t *xs, int64_t y);

/**
 * Slice: y[j] = x[start + j * step] in each dim (NumPy's x[start::step]
 * cut to y's dims).  y's shape must be declared; its window must lie in x
 * (start + (y dim - 1) * step < x dim).  attr->rank is x's rank; start >=
 * 0 and step >= 1 (else BAD_PARAM).  x and y have one type, any type.
 * Saves as graph format 1.2.
 */
CDNN_API cdnn_status_t cdnn_graph_slice(cdnn_graph_t *graph, const char *name,
                                        const cdnn_slice_attr_t *attr, int64_t x,
                                        int64_t y);

/**
 * Argmax along one axis: y holds, for each row of x along `axis` (negative
 * from the end), the index of its largest element, the first one on a tie
 * (NumPy's argmax; a NaN counts as largest, so the first NaN's index).  y
 * has x's dims with 1 at the axis (inferred) and type i32 or i64; x any
 * type (integers compared exactly).  Saves as graph format 1.2.
 */
CDNN_API cdnn_status_t cdnn_graph_argmax(cdnn_graph_t *graph, const char *name,
                                         int32_t axis, int64_t x, int64_t y);

/** Argmin along one axis: as cdnn_graph_argmax, the smallest element's
 * index (a NaN counts as smallest). */
CDNN_API cdnn_status_t cdnn_graph_argmin(cdnn_graph_t *graph, const char *name,
                                         int32_t axis, int64_t x, int64_t y);

/**
 * Pad with a constant: y[j] = x[j - pre] where that lies in x, else value
 * (NumPy's np.pad(x, [(pre, y - x - pre)], constant_values=value)).  y's
 * shape must be declared, each dim at least x's plus pre; attr->rank is
 * x's rank, pre >= 0, value not NaN (else BAD_PARAM).  x and y have one
 * type, any type.  Saves as graph format 1.2.
 */
CDNN_API cdnn_status_t cdnn_graph_pad(cdnn_graph_t *graph, const char *name,
                                      const cdnn_pad_attr_t *attr, int64_t x,
                                      int64_t y);

/**
 * Scaled-dot-product attention backward (cuDNN's sdpa_backward): the
 * gradients dq, dk, dv of the forward o = softmax(scale * q k^T [+ causal
 * mask]) v with respect to q, k and v, given the forward's inputs, its
 * output o and the gradient `d_o` of o.  attr is the forward's (scale 0:
 * 1/sqrt(D); causal top-left).  Shapes as the forward's: q [B, H, Sq, D],
 * k [B, H, Sk, D], v [B, H, Sk, Dv], o and d_o [B, H, Sq, Dv]; dq, dk and
 * dv (inferred) have the shapes of q, k and v.  q, k, v, o and d_o share
 * one floating-point type.  With s = scale q k^T, p = softmax(s) and
 * dp = d_o v^T:  dv = p^T d_o,  ds = p * (dp - rowsum(p * dp)),
 * dq = scale ds k,  dk = scale ds^T q.  rowsum(p * dp) equals
 * rowsum(d_o * o), which an engine may read from o (cpu:reference
 * recomputes p from q and k in double, so o only has to have its shape
 * there).  The softmax statistics are not an input: a node has at most
 * CDNN_NODE_MAX_INPUTS (5) inputs.  Saves as graph format 1.3.
 */
CDNN_API cdnn_status_t cdnn_graph_sdpa_bwd(cdnn_graph_t *graph, const char *name,
                                           const cdnn_sdpa_attr_t *attr,
                                           int64_t q, int64_t k, int64_t v,
                                           int64_t o, int64_t d_o, int64_t dq,
                                           int64_t dk, int64_t dv);

/**
 * Gather along an axis (ONNX Gather, torch.index_select for 1-D indices,
 * NumPy's np.take(x, indices, axis)): y's dims are x's before the axis,
 * then indices' dims, then x's after it (rank x + indices - 1, at most
 * CDNN_MAX_RANK), and y[a, i, b] = x[a, indices[i], b].  indices is i32
 * or i64 of any rank; an index may be negative, -n to n - 1 for x's dim n
 * at the axis, counting from the end as ONNX's does.  An index outside
 * that range fails the execute with EXECUTION_FAILED naming the index,
 * its position in indices and the range, before anything of x is read;
 * y's contents are then unspecified.  x and y have one type, any type;
 * y is inferred.  Saves as graph format 1.3.
 */
CDNN_API cdnn_status_t cdnn_graph_gather(cdnn_graph_t *graph, const char *name,
                                         int32_t axis, int64_t x, int64_t indices,
                                         int64_t y);

/**
 * Gather elements along an axis (ONNX GatherElements, torch.gather,
 * np.take_along_axis): y has indices' dims and y[j] = x[j with its
 * coordinate at the axis replaced by indices[j]].  indices (i32 or i64)
 * has x's rank and, off the axis, dims no larger than x's.  Indices are
 * checked and refused as cdnn_graph_gather's.  Saves as graph format 1.3.
 */
CDNN_API cdnn_status_t cdnn_graph_gather_elements(cdnn_graph_t *graph,
                                                  const char *name, int32_t axis,
                                                  int64_t x, int64_t indices,
                                                  int64_t y);

/**
 * Top-k along an axis: values has x's dims but attr->k at the axis and
 * holds, for each row of x along the axis, its k largest elements in
 * descending order (attr->largest) or k smallest in ascending order;
 * indices (optional, CDNN_UID_NONE to omit; i32 or i64) their positions
 * in the row.  Equal elements keep their order in x (the lower index
 * first); a NaN is larger than every number (PyTorch's order: first
 * among the largest, last among the smallest), and -0 equals +0.
 * Integers are compared exactly.  attr->k must be 1 or more (BAD_PARAM)
 * and at most x's dim at the axis (INVALID_GRAPH at validation).
 * values and indices are inferred.  Saves as graph format 1.3.
 */
CDNN_API cdnn_status_t cdnn_graph_topk(cdnn_graph_t *graph, const char *name,
                                       const cdnn_topk_attr_t *attr, int64_t x,
                                       int64_t values, int64_t indices);

/**
 * Pooling forward (cuDNN's pooling, PyTorch's max_pool1d/2d/3d and
 * avg_pool1d/2d/3d, ONNX MaxPool and AveragePool) as cdnn_pooling_attr_t
 * describes.  x [N, C, spatial...] (rank spatial_dims + 2); y has x's N
 * and C and the output sizes above; y may be declared (its dims are
 * checked against those sizes) or left to be inferred.  Max pooling takes
 * any type (integers compared exactly) and returns x's elements: the
 * first maximum of the window in its row-major tap order, or its last NaN
 * if it holds one (PyTorch's CPU rule); average pooling takes a float
 * type and sums in at least float (cpu:reference: double).  indices
 * (optional, CDNN_UID_NONE to omit; max only; i32 or i64) receives each
 * maximum's flat position in x's spatial plane, d * H * W + h * W + w
 * (PyTorch's return_indices).  The builder refuses an out-of-range or
 * unknown attribute (BAD_PARAM, naming it); validation refuses a window
 * that reads padding only, an average with dilation above 1 or an
 * integer type, and indices on average pooling (INVALID_GRAPH).  Saves
 * as graph format 1.3.
 */
CDNN_API cdnn_status_t cdnn_graph_pooling_fwd(cdnn_graph_t *graph, const char *name,
                                              const cdnn_pooling_attr_t *attr,
                                              int64_t x, int64_t y, int64_t indices);

/**
 * Pooling backward: dx, the gradient of the forward pooling of x with
 * respect to x, from dy (the forward's y's gradient).  attr is the
 * forward's.  x (required) gives dx's shape (dx, inferred, has x's dims;
 * average pooling reads only the shape).  Max pooling routes each dy
 * element to its window's maximum as the forward chose it (first maximum,
 * last NaN), recomputed from x, or read from indices (optional,
 * CDNN_UID_NONE to omit: the forward's indices output, i32 or i64; a
 * position outside x's spatial plane fails the execute with
 * EXECUTION_FAILED); overlapping windows add.  Average pooling spreads
 * each dy element evenly over its window's counted taps (the forward's
 * divisor).  dy, x and dx share one float type.  Saves as graph format
 * 1.3.
 */
CDNN_API cdnn_status_t cdnn_graph_pooling_bwd(cdnn_graph_t *graph, const char *name,
                                              const cdnn_pooling_attr_t *attr,
                                              int64_t dy, int64_t x, int64_t indices,
                                              int64_t dx);

/**
 * Resize x into y as cdnn_resize_attr_t describes: y must be declared,
 * with x's rank (1 to CDNN_MAX_RANK) and dims of 1 or more; each dim whose
 * size differs is resampled (a dim of equal size is copied, whatever the
 * coordinate mode).  Linear interpolates in double (cpu:reference) over
 * the 2^r neighbours of the r resized dims.  Nearest takes any type,
 * linear a float type; x and y have one type.  Saves as graph format
 * 1.3.
 */
CDNN_API cdnn_status_t cdnn_graph_resize(cdnn_graph_t *graph, const char *name,
                                         const cdnn_resize_attr_t *attr, int64_t x,
                                         int64_t y);

/**
 * Check the graph and infer omitted output shapes.  On failure the status
 * is INVALID_GRAPH and the message names the node or tensor at fault.
 * Validating a valid graph again is a no-op.  Adding tensors or nodes
 * afterwards requires validating again.
 */
CDNN_API cdnn_status_t cdnn_graph_validate(cdnn_graph_t *graph);

/** Dims and strides of a tensor after validation; rank in/out. */
CDNN_API cdnn_status_t cdnn_graph_tensor_shape(const cdnn_graph_t *graph,
                                               int64_t uid,
                                               cdnn_data_type_t *type,
                                               int32_t *rank, int64_t *dims,
                                               int64_t *strides);

/**
 * The graph's content key: 64 hex digits (+ NUL) of a SHA-256 over what
 * decides the work (ops, attributes, types, shapes, strides, virtual
 * flags, scalar values) and nothing else (names, uid values, declaration
 * order of tensors).  Validates the graph first.
 */
CDNN_API cdnn_status_t cdnn_graph_content_key(cdnn_graph_t *graph,
                                              char key[65]);

/* ------------------------------------------------------------------------
 * Building and executing
 * ------------------------------------------------------------------------ */

typedef struct cdnn_build_options cdnn_build_options_t;

CDNN_API cdnn_status_t cdnn_build_options_create(cdnn_build_options_t **opts);
CDNN_API void cdnn_build_options_destroy(cdnn_build_options_t *opts);

/** Use only this engine; the build fails if it does not apply. */
CDNN_API cdnn_status_t cdnn_build_options_pin_engine(cdnn_build_options_t *opts,
                                                     uint64_t engine_id);

/** Try this engine first; fall back to the usual order. */
CDNN_API cdnn_status_t cdnn_build_options_prefer_engine(
    cdnn_build_options_t *opts, uint64_t engine_id);

/** A knob: "global.<name>" for the library, "<provider>.<category>.<name>"
 * for an engine's own. */
typedef struct cdnn_knob_info {
    const char *name;
    const char *description;
    int64_t min_value, max_value, default_value;
} cdnn_knob_info_t;

/** The library's knob number index (global.benchmarking,
 * global.workspace_limit); NOT_FOUND past the last. */
CDNN_API cdnn_status_t cdnn_global_knob_info(int32_t index, cdnn_knob_info_t *info);

/** Number of knobs engine number engine_index reads. */
CDNN_API cdnn_status_t cdnn_handle_engine_knob_count(const cdnn_handle_t *handle,
                                                     int32_t engine_index,
                                                     int32_t *count);

/** Knob number knob_index of engine number engine_index. */
CDNN_API cdnn_status_t cdnn_handle_engine_knob_info(const cdnn_handle_t *handle,
                                                    int32_t engine_index,
                                                    int32_t knob_index,
                                                    cdnn_knob_info_t *info);

/**
 * Set a knob (see cdnn_knob_info_t for names).  Global knobs are checked
 * here; engine knobs at build, against the knobs the loaded providers
 * declare (an unknown name or a value out of range fails the build with
 * BAD_PARAM).  Setting a knob again replaces its value.
 *
 *   global.benchmarking (0/1, default 0; $CDNN_FORCE_BENCHMARKING=0|1
 *     overrides it): build a plan that times every candidate at its first
 *     execute and keeps the fastest.  Candidates are every variant of
 *     every applicable engine within the workspace limit that can be timed
 *     (on a GPU, an engine whose provider offers neither time_execute nor
 *     synchronize is left out: provider.h).  A record in the winner cache,
 *     made with the same engine knob values, that ranks every candidate
 *     makes the build a plain plan of the winner instead, creating only
 *     its context.
 *   global.workspace_limit (bytes, default none): engines needing more are
 *     passed over.
 */
CDNN_API cdnn_status_t cdnn_build_options_set_knob(cdnn_build_options_t *opts,
                                                   const char *name,
                                                   int64_t value);

/**
 * Called during a benchmarking plan's choosing execute, once for each
 * candidate when the timing is done (candidates are timed in interleaved
 * rounds, a sample of each in turn, so that a clock drifting as the device
 * heats weighs on all alike): index of count, the candidate's name
 * ("cpu:blas_conv" or "cpu:blas_conv [cpu.threads.count=1]"), its median
 * time (negative: it failed and was passed over).  From the executing
 * thread; must not call back into the graph.
 */
typedef void (*cdnn_progress_fn)(int32_t index, int32_t count,
                                 const char *candidate, double median_us,
                                 void *user);

CDNN_API cdnn_status_t cdnn_build_options_set_progress(cdnn_build_options_t *opts,
                                                       cdnn_progress_fn fn,
                                                       void *user);

/**
 * Build a plan for the graph on the handle's device: validate, collect the
 * applicable engines of every provider, order them (pinned or preferred
 * engine first, then by each engine's rank), and keep the first whose
 * execution context is created.  opts may be NULL.  Building again
 * replaces the plan.  NOT_SUPPORTED when no engine applies; the message
 * lists each engine's reason.
 */
CDNN_API cdnn_status_t cdnn_graph_build(cdnn_graph_t *graph,
                                        cdnn_handle_t *handle,
                                        const cdnn_build_options_t *opts);

/**
 * The ids of the engines that apply to the graph on the handle's device,
 * in build order.  ids may be NULL to count; at most cap are written and
 * *count is the total.
 */
CDNN_API cdnn_status_t cdnn_graph_applicable_engines(cdnn_graph_t *graph,
                                                     cdnn_handle_t *handle,
                                                     uint64_t *ids, int32_t cap,
                                                     int32_t *count);

/** The built plan's engine; BAD_STATE before a build. */
CDNN_API cdnn_status_t cdnn_graph_engine(const cdnn_graph_t *graph,
                                         uint64_t *engine_id,
                                         const char **engine_name);

/** One candidate of a plan, as benchmarking saw it. */
typedef struct cdnn_candidate_result {
    const char *name;   /* engine name, with its variant knob if any */
    uint64_t engine_id;
    double median_us;   /* < 0: not timed (yet) */
    int32_t runs;       /* timed runs */
} cdnn_candidate_result_t;

/**
 * The plan's candidates: after a benchmarking plan has chosen, fastest
 * first, with *chosen the index of the one it runs (0); before, in build
 * order with *chosen -1.  A plain plan has one candidate, chosen.  Names
 * live as long as the plan.  Called while another thread's execute is
 * choosing, it waits for the choice.
 */
CDNN_API cdnn_status_t cdnn_graph_candidates(const cdnn_graph_t *graph,
                                             cdnn_candidate_result_t *results,
                                             int32_t cap, int32_t *count,
                                             int32_t *chosen);

/**
 * Workspace bytes the plan needs at execute; BAD_STATE before a build.  A
 * benchmarking plan that has not chosen yet needs enough for every
 * candidate (its first execute runs them all); once it has chosen, only
 * the winner's, which is also what its saved bytes record.
 */
CDNN_API cdnn_status_t cdnn_graph_workspace_size(const cdnn_graph_t *graph,
                                                 size_t *bytes);

/** A tensor the plan reads or writes through the variant pack. */
typedef struct cdnn_tensor_io {
    int64_t uid;
    cdnn_data_type_t type;
    size_t span_bytes;  /* bytes its strides span: what to allocate */
    int64_t alignment;  /* required pointer alignment; 0 when none */
    int32_t is_output;  /* written by the plan; else only read */
} cdnn_tensor_io_t;

/**
 * The tensors execute needs pointers for, in declaration order; works for
 * plans loaded without their graph too.  tensors may be NULL to count; at
 * most cap are written and *count is the total.  BAD_STATE before a build.
 */
CDNN_API cdnn_status_t cdnn_graph_io_tensors(const cdnn_graph_t *graph,
                                             cdnn_tensor_io_t *tensors,
                                             int32_t cap, int32_t *count);

/**
 * Run the plan.  uids[i] names the tensor at ptrs[i]; every tensor that is
 * not virtual and not a pass-by-value scalar must be given, on the
 * handle's device, aligned as declared.  workspace holds at least
 * cdnn_graph_workspace_size bytes (may be NULL when that is 0).  The handle
 * must be on the device the plan was built for (else DEVICE_MISMATCH).  On
 * a CPU handle the outputs are written when it returns; on a CUDA handle
 * the work is enqueued on the handle's stream, and the caller synchronizes
 * that stream before reading them.
 */
CDNN_API cdnn_status_t cdnn_graph_execute(const cdnn_graph_t *graph,
                                          cdnn_handle_t *handle, int32_t n,
                                          const int64_t *uids,
                                          void *const *ptrs, void *workspace);

/* ------------------------------------------------------------------------
 * Saving and loading
 *
 * Three artifacts, each a FlatBuffers buffer with its own file identifier
 * and format version (docs/FORMATS.md):
 *   graph  "CDGR"  the graph as declared
 *   plan   "CDPL"  the built plan: engine, device, tensor uids, workspace,
 *                  the provider's payload, and a SHA-256 over all of it
 *   container "CDGP"  a graph's bytes and (optionally) its plan's bytes,
 *                  each stored whole
 * The rules they keep are in docs/CONTRACT.md; the headline ones:
 *   - a loaded plan saves exactly the bytes it was loaded from, without
 *     asking its provider (rule 1);
 *   - saving is deterministic, and the first save's bytes are kept and
 *     returned by every later save of the same plan (rule 9);
 *   - loaders check identifier, version, bounds and digest before using a
 *     byte; damage gives CORRUPT_DATA, a newer major NOT_SUPPORTED, and an
 *     artifact of another kind BAD_PARAM naming both kinds (rules 7, 8).
 * Saved plans carry what their engine runs; load only plans from sources
 * you trust.
 * ------------------------------------------------------------------------ */

typedef enum cdnn_save_form {
    CDNN_SAVE_GRAPH = 1,          /* the graph alone */
    CDNN_SAVE_PLAN = 2,           /* the plan alone */
    CDNN_SAVE_GRAPH_AND_PLAN = 3, /* a container with both */
} cdnn_save_form_t;

/**
 * Save the graph, its plan, or both.  With buf NULL only *size is set.
 * With cap < the size, fails with SIZE_INSUFFICIENT, sets *size, and
 * writes nothing.  PLAN and GRAPH_AND_PLAN need a built or loaded plan; a
 * graph loaded from a bare plan has no graph to save.
 */
CDNN_API cdnn_status_t cdnn_graph_save(cdnn_graph_t *graph,
                                       cdnn_save_form_t form, void *buf,
                                       size_t cap, size_t *size);

/**
 * Load a graph from a graph or a container.  With a handle, a container's
 * plan is loaded too (on that handle's device), so the graph executes at
 * once; with handle NULL only the graph is loaded.
 */
CDNN_API cdnn_status_t cdnn_graph_load(cdnn_graph_t **graph,
                                       cdnn_handle_t *handle,
                                       const void *bytes, size_t size);

/**
 * Load a plan from a plan or a container (its plan part) on the handle's
 * device, without selection or compilation.  The result is a plan-only
 * graph: it executes by uid and saves in PLAN form, but has no graph
 * (tensor shapes, nodes) of its own.
 */
CDNN_API cdnn_status_t cdnn_plan_load(cdnn_graph_t **graph,
                                      cdnn_handle_t *handle, const void *bytes,
                                      size_t size);

#define CDNN_BLOB_GRAPH 1u
#define CDNN_BLOB_PLAN 2u

/**
 * What a blob holds, without loading it: CDNN_BLOB_GRAPH, CDNN_BLOB_PLAN
 * or both (a container).  The container's structure is verified; nothing
 * else is.  CORRUPT_DATA for bytes that are no cdnn artifact.
 */
CDNN_API cdnn_status_t cdnn_blob_contents(const void *bytes, size_t size,
                                          uint32_t *flags);

/** What a blob holds, as read by cdnn_blob_inspect. */
typedef struct cdnn_blob_info {
    uint32_t contents;              /* CDNN_BLOB_GRAPH | CDNN_BLOB_PLAN */
    uint16_t container_major, container_minor; /* 0.0 unless a container */
    uint16_t graph_major, graph_minor;         /* when it holds a graph */
    /* When it holds a plan: */
    uint16_t plan_major, plan_minor;
    int32_t plan_verified;          /* envelope, SHA-256 and body checked */
    uint64_t engine_id;
    const char *engine_name;
    const char *provider_name;      /* that saved it; diagnostic */
    const char *provider_version;
    const char *device;             /* "cpu" or "cuda (sm_90)" */
    uint64_t workspace_size;
    uint16_t payload_major, payload_minor;
    size_t payload_size;
    char graph_content_key[65];     /* of the graph the plan was built from */
    int32_t tensor_count;
    const cdnn_tensor_io_t *tensors; /* the plan's variant-pack tensors */
    /* The provider's payload, payload_size bytes, pointing into the bytes
     * given to cdnn_blob_inspect (valid while they are).  cdnn checked the
     * plan's digest over it but not its contents: hostile until its own
     * reader checks it (`cdnn inspect` reads a kernels:* plan's, whose
     * format is docs/FORMATS.md section 10). */
    const void *payload;
} cdnn_blob_info_t;

/**
 * Read what a blob is without loading it: no handle, no provider, nothing
 * run.  Everything is verified as a load would (a damaged plan fails with
 * CORRUPT_DATA).  *info is released with cdnn_blob_info_destroy.
 */
CDNN_API cdnn_status_t cdnn_blob_inspect(const void *bytes, size_t size,
                                         cdnn_blob_info_t **info);

CDNN_API void cdnn_blob_info_destroy(cdnn_blob_info_t *info);

/**
 * The graph as JSON: the FlatBuffers JSON form of schema/graph.fbs, which
 * Debian's flatc converts to and from the binary graph form.  *json is
 * NUL-terminated and released with free().
 */
CDNN_API cdnn_status_t cdnn_graph_to_json(const cdnn_graph_t *graph,
                                          char **json);

/** A graph from its JSON form (see cdnn_graph_to_json).  Non-finite
 * numbers may be written as flatc writes them (inf, -inf, nan) or as
 * Python's json and JavaScript do (Infinity, -Infinity, NaN), bare or
 * quoted. */
CDNN_API cdnn_status_t cdnn_graph_from_json(cdnn_graph_t **graph,
                                            const char *json, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* CDNN_CDNN_H */
