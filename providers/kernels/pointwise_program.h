/*
 * pointwise_program.h -- a graph of pointwise nodes as one postfix program
 * over its inputs: what the pointwise kernels of every target run.
 *
 * The graph's nodes are all pointwise; its one result is the one tensor
 * in memory that a node writes, and every other tensor a node writes is a
 * virtual f32 intermediate (the kernels compute in f32).  The program
 * evaluates the result's expression tree: inputs in memory are pushed,
 * pass-by-value scalars become constants, each node is its op (or a few:
 * FMA is a multiply and an add).  The match function and the handlers
 * read a graph through this one compiler, so that they never disagree.
 */
#ifndef CDNN_KERNELS_POINTWISE_PROGRAM_H
#define CDNN_KERNELS_POINTWISE_PROGRAM_H

#include <cdnn/provider.h>

/* The limits both kernel ABIs share (host_kernel.h, cuda_kernel.h). */
#define PW_MAX_INPUTS 4
#define PW_MAX_PROGRAM 24
#define PW_MAX_STACK 8

/* Opcodes; each ABI's handler maps them to its own. */
typedef enum pw_op {
    PW_PUSH_INPUT,
    PW_PUSH_CONST,
    PW_NEG, PW_ABS, PW_EXP, PW_LOG, PW_SQRT, PW_RSQRT, PW_RECIPROCAL,
    PW_RELU, PW_GELU, PW_GELU_TANH, PW_SILU, PW_SIGMOID, PW_TANH,
    PW_ADD, PW_SUB, PW_MUL, PW_DIV, PW_MAX, PW_MIN,
    PW_OP_COUNT
} pw_op_t;

typedef struct pw_instr {
    pw_op_t op;
    int32_t input;  /* PW_PUSH_INPUT: index into inputs */
    float constant; /* PW_PUSH_CONST */
} pw_instr_t;

typedef struct pw_program {
    int32_t rank; /* the result's */
    int64_t dims[CDNN_MAX_RANK];
    int32_t output; /* tensor index of the result */
    int32_t input_count;
    int32_t inputs[PW_MAX_INPUTS]; /* tensor indices, in order of first push */
    int32_t length;
    pw_instr_t program[PW_MAX_PROGRAM];
} pw_program_t;

/** Compile g; NOT_SUPPORTED, with the reason, for a graph no program of
 * the limits above runs. */
cdnn_status_t pw_program_compile(const cdnn_graph_view_t *g, pw_program_t *p);

/** Tensor t's strides indexed by the result's dims: 0 where it
 * broadcasts (its dim is 1). */
void pw_broadcast_strides(const cdnn_tensor_view_t *t, int64_t *strides);

#endif
