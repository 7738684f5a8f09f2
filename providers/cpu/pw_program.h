/*
 * pw_program.h -- a DAG of pointwise operations compiled for one pass over
 * memory.
 *
 * A program runs over an *index space* (the dims of its outputs) in
 * row-major order.  Each input is read through its own strides in that
 * space (0 where it broadcasts); each output is written through its own.
 * Elements are processed a block at a time: for each block every value of
 * the DAG is computed into a small float buffer that stays in L1, so that
 * intermediates never reach memory and each output element is written
 * once.  Values are floats throughout: a virtual intermediate declared f16,
 * bf16 or f64 is not rounded to its type (it keeps float precision), and
 * one declared bool is rounded to 0 or 1, as a store would.
 *
 * Besides graph tensors, a program may read an *entry*: a dense float
 * array that the caller supplies per run, holding the value of one tensor
 * (a GEMM's output) for the elements being run.  This is how the matmul
 * and convolution engines apply a pointwise chain as an epilogue.
 *
 * A built program is read-only; any number of threads may run it at once.
 */
#ifndef CDNN_CPU_PW_PROGRAM_H
#define CDNN_CPU_PW_PROGRAM_H

#include <cdnn/provider.h>

#include "pointwise_math.h"

#define PW_MAX_IO 32     /* inputs and outputs in memory */
#define PW_MAX_OPS 64    /* pointwise nodes */
#define PW_MAX_VALUES 128
/* Block buffers live at once: with PW_BLOCK floats each, 24 KiB of the
 * running thread's stack. */
#define PW_MAX_SLOTS 24
#define PW_MAX_INSTR (2 * PW_MAX_VALUES + PW_MAX_IO)
/* Graphs the fast engines take have at most this many tensors, so that
 * per-tensor tables (pointers at execute) fit on the stack. */
#define PW_MAX_GRAPH_TENSORS 256

/* An io's tensor when it is the caller's buffer rather than a graph's. */
#define PW_BUFFER (-1)

typedef struct pw_io {
    int32_t tensor; /* index in the graph, or PW_BUFFER */
    cdnn_data_type_t type;
    int64_t strides[CDNN_MAX_RANK]; /* in the index space; 0 broadcasts */
    int32_t value;                  /* what an output stores */
    int32_t is_output;
    int32_t direct; /* an f32 input read in place, without a copy */
} pw_io_t;

typedef enum pw_value_kind {
    PW_VALUE_INPUT,
    PW_VALUE_ENTRY,
    PW_VALUE_CONST,
    PW_VALUE_OP,
} pw_value_kind_t;

typedef struct pw_value {
    pw_value_kind_t kind;
    int32_t index; /* the io of an input, the op of an op */
    float constant;
    int32_t slot;     /* its block buffer, or -1 when read in place */
    int32_t last_use; /* the last instruction that reads it */
} pw_value_t;

typedef struct pw_op {
    pw_fn_t fn;
    int32_t in[3]; /* values; -1 past the mode's arity */
    int32_t out;
    int32_t to_bool; /* the result is a virtual bool: round it to 0 or 1 */
} pw_op_t;

typedef enum pw_instr_kind { PW_LOAD, PW_OP, PW_STORE } pw_instr_kind_t;

typedef struct pw_instr {
    pw_instr_kind_t kind;
    int32_t arg; /* a value (load), an op, an io (store) */
} pw_instr_t;

typedef struct pw_program {
    int32_t rank; /* of the index space, after merging dims */
    int64_t dims[CDNN_MAX_RANK];
    int64_t total; /* elements in the index space */
    int32_t threads;
    int32_t io_count, value_count, op_count, instr_count, slot_count;
    pw_io_t io[PW_MAX_IO];
    pw_value_t values[PW_MAX_VALUES];
    pw_op_t ops[PW_MAX_OPS];
    pw_instr_t instr[PW_MAX_INSTR];
} pw_program_t;

/* ---- building: init, add values and outputs, finish ---- */

/* Start a program over dims, run with at most threads threads. */
void pw_init(pw_program_t *p, int32_t rank, const int64_t *dims,
             int32_t threads);

/* Each adder fails with NOT_SUPPORTED when a limit above is reached. */
cdnn_status_t pw_add_input(pw_program_t *p, int32_t tensor,
                           cdnn_data_type_t type, const int64_t *strides,
                           int32_t *value);
cdnn_status_t pw_add_entry(pw_program_t *p, int32_t *value);
cdnn_status_t pw_add_const(pw_program_t *p, float constant, int32_t *value);
cdnn_status_t pw_add_op(pw_program_t *p, const cdnn_pointwise_attr_t *attr,
                        const int32_t in[3], int32_t to_bool, int32_t *value);
cdnn_status_t pw_add_output(pw_program_t *p, int32_t value, int32_t tensor,
                            cdnn_data_type_t type, const int64_t *strides);

/* Merge dims, order the work and give values their buffers. */
cdnn_status_t pw_finish(pw_program_t *p);

/* Types a program reads and writes in memory. */
int pw_type_loadable(cdnn_data_type_t type);
int pw_type_storable(cdnn_data_type_t type);

/*
 * Compile the pointwise nodes graph->nodes[first_node..] into p.  The
 * index space is the dims of the nodes' non-virtual outputs, which must
 * all be equal.  entry_tensor (or -1) is the tensor whose values the
 * caller supplies as the entry.  Fails with NOT_SUPPORTED and a reason
 * when the nodes are not all pointwise, a type is not handled, or a limit
 * is reached.
 */
cdnn_status_t pw_compile_graph(pw_program_t *p, const cdnn_graph_view_t *g,
                               int32_t first_node, int32_t entry_tensor,
                               int32_t threads);

/* A program that copies tensor `from` (graph index `tensor`, any loadable
 * type and strides) into the caller's buffer laid out as `to`: to's type
 * and strides, over to's dims, which are from's or 1 where the copy keeps
 * one element of a dim that from repeats (its stride is then ignored). */
cdnn_status_t pw_compile_copy(pw_program_t *p, const cdnn_tensor_view_t *from,
                              int32_t tensor, const cdnn_tensor_view_t *to,
                              int32_t threads);

/* A program that copies tensor t (graph index `tensor`, any loadable
 * type and strides) into the caller's buffer as packed row-major f32. */
cdnn_status_t pw_compile_pack(pw_program_t *p, const cdnn_tensor_view_t *t,
                              int32_t tensor, int32_t threads);

/* True when the program writes one f32 output, packed row-major. */
int pw_output_dense_f32(const pw_program_t *p);

/* ---- running ---- */

typedef struct pw_binding {
    void *const *tensors; /* per graph tensor index */
    void *buffer;         /* for io of tensor PW_BUFFER */
    const float *entry;   /* the entry's value of element e0 onwards */
    int64_t e0;
} pw_binding_t;

/*
 * Compute elements [b->e0, e1) of the index space (row-major linear
 * indices), split over threads when there are enough of them.
 */
void pw_run(const pw_program_t *p, const pw_binding_t *b, int64_t e1);

#endif
