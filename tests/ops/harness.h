/*
 * harness.h -- the shared machinery of the op tests.
 *
 * A case declares its tensors and nodes through the h_* wrappers (which
 * record each tensor's role), names the fast engines it expects to claim
 * it, and calls h_run.  h_run validates the graph, checks that
 * "cpu:reference" and every expected engine apply, executes the graph
 * pinned to the reference engine on inputs filled from a fixed seed, then
 * pinned to every other applicable engine, and compares each output with
 * the reference within a tolerance chosen by output type and op kind.
 *
 * Input values are a function of (seed, uid, logical index), so one case
 * declared with two memory layouts sees the same logical data.  Every byte
 * of every buffer that is not a logical element is 0xFF (NaN for floats):
 * inputs' gaps poison engines that read them, outputs' gaps must survive
 * and outputs start as all NaN, so an element left unwritten fails.
 *
 * A failed check prints the case (op, types, shapes, strides), the engine
 * and the error, counts a failure, and lets the test go on; h_done ends a
 * cmocka test and fails it if any check failed.
 */
#ifndef CDNN_TESTS_OPS_HARNESS_H
#define CDNN_TESTS_OPS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/cdnn.h>

#define H_MAX_TENSORS 16
#define H_MAX_EXPECT 4

#define H_REFERENCE "cpu:reference"
#define H_BLAS_MATMUL "cpu:blas_matmul"
#define H_BLAS_CONV "cpu:blas_conv"
#define H_FUSED_POINTWISE "cpu:fused_pointwise"

/** How input values are drawn. */
typedef enum h_dist {
    H_UNIFORM,  /* [-1, 1] */
    H_WIDE,     /* [-3, 3] */
    H_POSITIVE, /* [0.25, 2] */
    H_NEAR_ONE, /* [0.8, 1.25] */
    H_COARSE,   /* {-1, -0.5, 0, 0.5, 1}: makes equality happen */
    H_MASK,     /* {0, 1} */
    H_SIGN,     /* {-1, 1} */
    H_ABOVE_ONE, /* [1, 3]: acosh's domain */
    H_INNER,     /* [-0.9, 0.9]: inside atanh's (-1, 1) in every type */
} h_dist_t;

/** What the tolerance is for: one rounding, or a long accumulation. */
typedef enum h_kind {
    H_ELEMENTWISE,
    H_ACCUMULATE,
} h_kind_t;

/** Memory layouts a case can ask strides for. */
typedef enum h_layout {
    H_PACKED,        /* row-major; passed to the API as strides NULL */
    H_CHANNELS_LAST, /* dim 1 fastest, then the rest in order: NHWC */
    H_TRANSPOSED,    /* row-major with the last two dims swapped */
    H_PADDED,        /* row-major with a gap after every row of every dim */
    H_OUTER_SWAP,    /* row-major with the first two dims swapped */
    H_SWAP12,        /* row-major with dims 1 and 2 swapped: BSHD */
    H_LAYOUT_COUNT
} h_layout_t;

typedef enum h_role {
    H_ROLE_INPUT,
    H_ROLE_OUTPUT,
    H_ROLE_VIRTUAL,
    H_ROLE_SCALAR,
} h_role_t;

typedef struct h_tensor {
    int64_t uid;
    h_role_t role;
    h_dist_t dist;
    cdnn_data_type_t type;
    int32_t rank;
    int64_t dims[CDNN_MAX_RANK];
    int64_t strides[CDNN_MAX_RANK];
    size_t bytes;       /* the span of the strides, in bytes */
    unsigned char *raw; /* the allocation */
    unsigned char *buf; /* inputs: filled once; outputs: the reference's */
} h_tensor_t;

/** Logical (row-major, as double) copies of a case's reference outputs. */
typedef struct h_values {
    int count;
    int64_t uid[H_MAX_TENSORS];
    double *v[H_MAX_TENSORS];
} h_values_t;

typedef struct h_case {
    char name[256];
    cdnn_graph_t *graph;
    h_tensor_t t[H_MAX_TENSORS];
    int count;
    h_kind_t kind;
    const char *expect[H_MAX_EXPECT];
    int expect_count;
    int misalign;       /* offset every pointer by one element */
    int setup_failed;   /* a declaration failed; reported already */
    h_values_t *keep;   /* if set, the reference outputs are kept here */
    const h_values_t *against; /* if set, reference outputs must match */
} h_case_t;

/* ---- the handle every case builds on (created in the group setup) ---- */

int h_setup(void **state);
/** Prints how many cases ran and how often each engine was compared. */
int h_teardown(void **state);

/* ---- declaring a case ---- */

/** Start a case: a new graph; name is printf-formatted for messages. */
void h_begin(h_case_t *c, h_kind_t kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Graph-level types (io, intermediate, compute). */
void h_graph_types(h_case_t *c, cdnn_data_type_t io, cdnn_data_type_t inter,
                   cdnn_data_type_t compute);

void h_input(h_case_t *c, int64_t uid, cdnn_data_type_t type, int32_t rank,
             const int64_t *dims, h_layout_t layout, h_dist_t dist);
/** An input with explicit strides (e.g. 0 to broadcast). */
void h_input_strided(h_case_t *c, int64_t uid, cdnn_data_type_t type,
                     int32_t rank, const int64_t *dims,
                     const int64_t *strides, h_dist_t dist);
/** rank 0 (dims NULL): the shape is inferred by validation. */
void h_output(h_case_t *c, int64_t uid, cdnn_data_type_t type, int32_t rank,
              const int64_t *dims, h_layout_t layout);
/** type may be UNSET (the graph's intermediate type); rank 0 infers. */
void h_virtual(h_case_t *c, int64_t uid, cdnn_data_type_t type, int32_t rank,
               const int64_t *dims);
/** A pass-by-value scalar of the given rank (every dim 1). */
void h_scalar(h_case_t *c, int64_t uid, cdnn_data_type_t type, int32_t rank,
              double value);

/** Record the status of a graph call (e.g. adding a node). */
void h_call(h_case_t *c, cdnn_status_t st, const char *what);

/** Require that this fast engine claims the case. */
void h_expect(h_case_t *c, const char *engine);

/** True for the storage types cpu:blas_matmul and cpu:blas_conv take:
 * f32, and f16 and bf16, which they widen to f32 (f64 they refuse). */
int h_gemm_type(cdnn_data_type_t type);

/** Run and compare as described above; frees everything of the case. */
void h_run(h_case_t *c);

/** End a cmocka test: fail it if any check failed since the last h_done. */
void h_done(void);

/** cmocka setup and teardown that make every case begun in between pass
 * pointers one element past a 64-byte boundary. */
int h_misaligned_on(void **state);
int h_misaligned_off(void **state);

/* ---- helpers ---- */

/** Strides in elements for a layout of dims. */
void h_strides(int32_t rank, const int64_t *dims, h_layout_t layout,
               int64_t *strides);

const char *h_layout_name(h_layout_t layout);

/** Output size of a convolution along one spatial dim. */
int64_t h_conv_out(int64_t in, int64_t filter, int64_t pre, int64_t post,
                   int64_t stride, int64_t dilation);

/** Free what h_values_t holds. */
void h_values_free(h_values_t *v);

/** Report a failure (counted) with the case and the engine. */
void h_fail(const h_case_t *c, const char *engine, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- lower level, for the threading test ---- */

extern cdnn_handle_t *h_handle;

uint64_t h_engine_id(const char *name);
const char *h_engine_name(uint64_t id);

/** Validate, learn inferred shapes, allocate and fill inputs; 0 if ok. */
int h_prepare(h_case_t *c);
/** A new buffer for tensor i poisoned with 0xFF; *raw is what to free. */
unsigned char *h_buffer_new(const h_case_t *c, int i, unsigned char **raw);
/** Pin the case's graph to an engine and build it; 0 on success. */
int h_build_pinned(h_case_t *c, uint64_t id);

/** g built on `engine`, saved as a plan and loaded on the same handle: the
 * same workspace size, g executed on `first` and the plan on `second`
 * (count tensors of uids each), and the plan re-saved to the same bytes.
 * The caller compares the outputs and keeps g. */
void h_plan_round_trip(cdnn_graph_t *g, const char *engine, int32_t count,
                       const int64_t *uids, void *const *first, void *const *second);
/** Execute the built graph with outs[i] for every output tensor i (other
 * entries ignored); returns the status and reports failures. */
cdnn_status_t h_execute(const h_case_t *c, unsigned char *const *outs,
                        const char *engine);
/** Free the case's graph and buffers. */
void h_case_free(h_case_t *c);

#endif
