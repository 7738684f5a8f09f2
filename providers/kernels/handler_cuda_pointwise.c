/*
 * handler_cuda_pointwise.c -- dispatch handler cuda_pointwise v1: launches
 * "cuda-pointwise-v1" kernels (kernels/cuda/cuda_kernel.h) for a graph of
 * pointwise nodes compiled into one program (pointwise_program.h), on the
 * handle's stream.
 *
 * Operands that are all packed with the result's shape (or scalars,
 * stride 0 everywhere) collapse to rank 1, which the kernel indexes
 * without division and moves 16 bytes at a time.  Constants are pooled,
 * each once.  Block 256, grid min(ceil(count / E), 65535 * 16), E the
 * kernel's metadata elements_per_block (default 1024): the kernel loops
 * over what its grid does not cover.  A kernel whose metadata says chain 1
 * (cdnn_cuda_pointwise_chain) is refused for programs it does not
 * specialise.
 *
 * Launch values: 1 (the launch's parallelism), rank, input count, program
 * length, count, grid, the shape (CDNN_CUDA_POINTWISE_MAX_RANK), the output
 * then each input slot as uid, type and MAX_RANK strides, the constants'
 * f32 bits, then per instruction its opcode and operand.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_kernel.h>

#include <cdnn_sdk/error.h>

#include "cuda_code.h"
#include "handlers.h"
#include "pointwise_program.h"

#define MAX_RANK CDNN_CUDA_POINTWISE_MAX_RANK
#define BLOCK 256
#define ELEMENTS_PER_BLOCK 1024
#define MAX_GRID (65535 * 16)

enum { T_UID, T_TYPE, T_STRIDES, T_VALUES = T_STRIDES + MAX_RANK };
enum {
    V_PARALLELISM = LAUNCH_THREADS,
    V_RANK, V_INPUT_COUNT, V_LENGTH, V_COUNT_ELEMENTS, V_GRID,
    V_SHAPE,
    V_OUTPUT = V_SHAPE + MAX_RANK,
    V_INPUTS = V_OUTPUT + T_VALUES,
    V_CONSTANTS = V_INPUTS + CDNN_CUDA_POINTWISE_MAX_INPUTS * T_VALUES,
    V_PROGRAM = V_CONSTANTS + CDNN_CUDA_POINTWISE_MAX_CONSTANTS,
    V_COUNT = V_PROGRAM + 2 * CDNN_CUDA_POINTWISE_MAX_PROGRAM
};

static const uint8_t cuda_ops[PW_OP_COUNT] = {
    [PW_PUSH_INPUT] = CDNN_CUDA_PW_PUSH_INPUT, [PW_PUSH_CONST] = CDNN_CUDA_PW_PUSH_CONST,
    [PW_NEG] = CDNN_CUDA_PW_NEG,               [PW_ABS] = CDNN_CUDA_PW_ABS,
    [PW_EXP] = CDNN_CUDA_PW_EXP,               [PW_LOG] = CDNN_CUDA_PW_LOG,
    [PW_SQRT] = CDNN_CUDA_PW_SQRT,             [PW_RSQRT] = CDNN_CUDA_PW_RSQRT,
    [PW_RECIPROCAL] = CDNN_CUDA_PW_RECIPROCAL, [PW_RELU] = CDNN_CUDA_PW_RELU,
    [PW_GELU] = CDNN_CUDA_PW_GELU,             [PW_GELU_TANH] = CDNN_CUDA_PW_GELU_TANH,
    [PW_SILU] = CDNN_CUDA_PW_SILU,             [PW_SIGMOID] = CDNN_CUDA_PW_SIGMOID,
    [PW_TANH] = CDNN_CUDA_PW_TANH,             [PW_ADD] = CDNN_CUDA_PW_ADD,
    [PW_SUB] = CDNN_CUDA_PW_SUB,               [PW_MUL] = CDNN_CUDA_PW_MUL,
    [PW_DIV] = CDNN_CUDA_PW_DIV,               [PW_MAX] = CDNN_CUDA_PW_MAX,
    [PW_MIN] = CDNN_CUDA_PW_MIN,
};

/* ---- deriving the launch ---------------------------------------------------------------- */

/* Whether strides (by the result's dims) are the result's packed ones,
 * or all 0 (a scalar, repeated). */
static int collapsible(const pw_program_t *p, const int64_t *strides)
{
    int64_t packed = 1, zero = 1;
    for (int32_t d = p->rank - 1; d >= 0; d--) {
        if (p->dims[d] != 1 && strides[d] != packed)
            packed = -1;
        zero &= p->dims[d] == 1 || strides[d] == 0;
        if (packed > 0)
            packed *= p->dims[d];
    }
    return packed > 0 || zero;
}

/* The operands' strides, and whether all of them collapse to rank 1. */
static int operand_strides(const cdnn_graph_view_t *g, const pw_program_t *p,
                           int64_t strides[][CDNN_MAX_RANK])
{
    int all = 1;
    for (int32_t i = 0; i <= p->input_count; i++) {
        int32_t t = i < p->input_count ? p->inputs[i] : p->output;
        pw_broadcast_strides(&g->tensors[t], strides[i]);
        all &= collapsible(p, strides[i]);
    }
    return all;
}

static void put_tensor(int64_t *v, const cdnn_tensor_view_t *t, const int64_t *strides,
                       int32_t rank, int collapsed)
{
    int scalar = 1;
    for (int32_t d = 0; d < rank; d++)
        scalar &= strides[d] == 0;
    v[T_UID] = t->uid;
    v[T_TYPE] = t->type;
    if (collapsed)
        v[T_STRIDES] = scalar ? 0 : 1;
    else
        memcpy(v + T_STRIDES, strides, (size_t)rank * sizeof *strides);
}

/* The program with its constants pooled. */
static cdnn_status_t put_program(int64_t *v, const pw_program_t *p)
{
    float pool[CDNN_CUDA_POINTWISE_MAX_CONSTANTS];
    int32_t pooled = 0;
    for (int32_t i = 0; i < p->length; i++) {
        const pw_instr_t *in = &p->program[i];
        int32_t operand = in->input;
        if (in->op == PW_PUSH_CONST) {
            for (operand = 0; operand < pooled && memcmp(&pool[operand], &in->constant,
                                                         sizeof in->constant);)
                operand++;
            if (operand == CDNN_CUDA_POINTWISE_MAX_CONSTANTS)
                return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the program has more than %d "
                                "constants", CDNN_CUDA_POINTWISE_MAX_CONSTANTS);
            if (operand == pooled)
                pool[pooled++] = in->constant;
        }
        v[V_PROGRAM + 2 * i] = cuda_ops[in->op];
        v[V_PROGRAM + 2 * i + 1] = operand;
    }
    for (int32_t c = 0; c < pooled; c++) {
        int32_t bits;
        memcpy(&bits, &pool[c], sizeof bits);
        v[V_CONSTANTS + c] = bits;
    }
    return CDNN_STATUS_SUCCESS;
}

/* Whether a program (CUDA opcodes, as put_program laid them out) is one
 * that cdnn_cuda_pointwise_chain specialises (cuda_kernel.h): an input then
 * an activation, or two inputs, a binary op and an optional activation. */
static int chain_activation(int64_t op)
{
    return op == CDNN_CUDA_PW_RELU || op == CDNN_CUDA_PW_GELU ||
           op == CDNN_CUDA_PW_GELU_TANH || op == CDNN_CUDA_PW_SILU ||
           op == CDNN_CUDA_PW_SIGMOID || op == CDNN_CUDA_PW_TANH;
}

static int chain_binary(int64_t op)
{
    return op == CDNN_CUDA_PW_ADD || op == CDNN_CUDA_PW_SUB || op == CDNN_CUDA_PW_MUL ||
           op == CDNN_CUDA_PW_MAX || op == CDNN_CUDA_PW_MIN;
}

static int chain_program(const int64_t *v)
{
    const int64_t n = v[V_LENGTH], *op = v + V_PROGRAM; /* opcode i at op[2 * i] */
    if (n < 2 || n > 4 || op[0] != CDNN_CUDA_PW_PUSH_INPUT)
        return 0;
    if (n == 2)
        return chain_activation(op[2]);
    return op[2] == CDNN_CUDA_PW_PUSH_INPUT && chain_binary(op[4]) &&
           (n == 3 || chain_activation(op[6]));
}

/* The kernel's metadata: "chain" 1 for cdnn_cuda_pointwise_chain, which
 * runs only the programs chain_program accepts; "elements_per_block" the
 * elements a block covers in one sweep (default ELEMENTS_PER_BLOCK). */
static cdnn_status_t kernel_geometry(const sdk_kpack_kv_t *m, int32_t n, int64_t *chain,
                                     int64_t *per_block)
{
    *chain = 0;
    *per_block = ELEMENTS_PER_BLOCK;
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (kernel_metadata(m, n, "chain"))
        st = kernel_metadata_int(m, n, "chain", 0, 1, chain);
    if (st == CDNN_STATUS_SUCCESS && kernel_metadata(m, n, "elements_per_block"))
        st = kernel_metadata_int(m, n, "elements_per_block", 256, 1 << 20, per_block);
    return st;
}

static cdnn_status_t derive_into(int64_t *v, const cdnn_graph_view_t *g, const pw_program_t *p,
                                 int64_t per_block)
{
    int64_t strides[PW_MAX_INPUTS + 1][CDNN_MAX_RANK];
    int64_t count = 1;
    int collapsed = operand_strides(g, p, strides);
    if (p->input_count < 1 || p->rank > MAX_RANK)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the CUDA pointwise kernel takes 1 to "
                        "%d inputs of rank up to %d", CDNN_CUDA_POINTWISE_MAX_INPUTS, MAX_RANK);
    for (int32_t d = 0; d < p->rank; d++)
        count *= p->dims[d];
    int64_t grid = (count + per_block - 1) / per_block;
    v[V_PARALLELISM] = 1;
    v[V_RANK] = collapsed ? 1 : p->rank;
    v[V_INPUT_COUNT] = p->input_count;
    v[V_LENGTH] = p->length;
    v[V_COUNT_ELEMENTS] = count;
    v[V_GRID] = grid < MAX_GRID ? grid : MAX_GRID;
    if (collapsed)
        v[V_SHAPE] = count;
    else
        memcpy(v + V_SHAPE, p->dims, (size_t)p->rank * sizeof *p->dims);
    put_tensor(v + V_OUTPUT, &g->tensors[p->output], strides[p->input_count], p->rank,
               collapsed);
    for (int32_t i = 0; i < p->input_count; i++)
        put_tensor(v + V_INPUTS + i * T_VALUES, &g->tensors[p->inputs[i]], strides[i],
                   p->rank, collapsed);
    return put_program(v, p);
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)threads;
    pw_program_t p;
    int64_t chain = 0, per_block = 0;
    cdnn_status_t st = kernel_geometry(metadata, metadata_count, &chain, &per_block);
    if (st == CDNN_STATUS_SUCCESS)
        st = pw_program_compile(g, &p);
    int64_t *v = st == CDNN_STATUS_SUCCESS ? calloc(V_COUNT, sizeof *v) : NULL;
    if (st == CDNN_STATUS_SUCCESS && !v)
        st = sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    if (st == CDNN_STATUS_SUCCESS)
        st = derive_into(v, g, &p, per_block);
    if (st == CDNN_STATUS_SUCCESS && chain && !chain_program(v))
        st = sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the chain kernel takes an input then an "
                      "activation, or two inputs, a binary op and an optional activation; "
                      "this program is another");
    if (st != CDNN_STATUS_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
    *count = V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

/* ---- launching ------------------------------------------------------------------------------ */

static cdnn_status_t params_of(const int64_t *v, const cdnn_exec_args_t *args,
                               cdnn_cuda_pointwise_params_t *p)
{
    memset(p, 0, sizeof *p);
    p->count = v[V_COUNT_ELEMENTS];
    p->rank = (int32_t)v[V_RANK];
    p->input_count = (int32_t)v[V_INPUT_COUNT];
    p->program_length = (int32_t)v[V_LENGTH];
    memcpy(p->shape, v + V_SHAPE, sizeof p->shape);
    p->out = launch_pointer(args, v[V_OUTPUT + T_UID]);
    p->out_type = (int32_t)v[V_OUTPUT + T_TYPE];
    memcpy(p->out_strides, v + V_OUTPUT + T_STRIDES, sizeof p->out_strides);
    int missing = !p->out;
    for (int32_t i = 0; i < p->input_count; i++) {
        const int64_t *t = v + V_INPUTS + i * T_VALUES;
        p->in[i] = launch_pointer(args, t[T_UID]);
        p->in_types[i] = (int32_t)t[T_TYPE];
        memcpy(p->in_strides[i], t + T_STRIDES, sizeof p->in_strides[i]);
        missing |= !p->in[i];
    }
    for (int32_t c = 0; c < CDNN_CUDA_POINTWISE_MAX_CONSTANTS; c++) {
        int32_t bits = (int32_t)v[V_CONSTANTS + c];
        memcpy(&p->constants[c], &bits, sizeof bits);
    }
    for (int32_t i = 0; i < p->program_length; i++) {
        p->program[i] = (uint8_t)v[V_PROGRAM + 2 * i];
        p->operand[i] = (uint8_t)v[V_PROGRAM + 2 * i + 1];
    }
    return missing ? sdk_fail(CDNN_STATUS_BAD_PARAM, "the variant pack lacks a tensor the "
                              "pointwise program reads or writes")
                   : CDNN_STATUS_SUCCESS;
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_cuda_pointwise_params_t p;
    void *params[] = {&p};
    cdnn_status_t st = params_of(l->values, args, &p);
    const unsigned grid[3] = {(unsigned)l->values[V_GRID], 1, 1};
    return st ? st : cuda_code_launch(l->cuda, grid, BLOCK, 0, args->stream, params);
}

static uint32_t no_shared_bytes(const int64_t *values)
{
    (void)values;
    return 0;
}

const dispatch_handler_t cuda_pointwise_handler_v1 = {
    .name = "cuda_pointwise",
    .version = 1,
    .signature = "cuda-pointwise-v1",
    .kind = KERNEL_KIND_CUDA,
    .derive = derive,
    .shared_bytes = no_shared_bytes,
    .workspace = launch_no_workspace,
    .run = run,
};
