/*
 * handler_host_pointwise.c -- dispatch handler host_pointwise v1: launches
 * "host-pointwise-v1" kernels (kernels/host/host_kernel.h) for a graph of
 * pointwise nodes compiled into one program (pointwise_program.h).
 *
 * Launch values: threads, rank, input count, program length, the dims
 * (CDNN_HOST_MAX_RANK, unused ones 0), the output then each input slot, a
 * tensor as host_handlers.h lays it out (broadcast strides; unused slots
 * 0), then per instruction slot the op, its input and its constant's f32
 * bits.
 */
#include <stdlib.h>
#include <string.h>

#include <host_kernel.h>

#include <cdnn_sdk/error.h>

#include "handlers.h"
#include "host_handlers.h"
#include "host_parallel.h"
#include "pointwise_program.h"

enum { I_OP, I_INPUT, I_CONSTANT, I_VALUES };
enum {
    V_THREADS = LAUNCH_THREADS,
    V_RANK,
    V_INPUT_COUNT,
    V_LENGTH,
    V_DIMS,
    V_OUTPUT = V_DIMS + CDNN_HOST_MAX_RANK,
    V_INPUTS = V_OUTPUT + HOST_TENSOR_VALUES,
    V_PROGRAM = V_INPUTS + PW_MAX_INPUTS * HOST_TENSOR_VALUES,
    V_COUNT = V_PROGRAM + PW_MAX_PROGRAM * I_VALUES
};

/* The host ABI's opcode of each of the compiler's. */
static const int32_t host_ops[PW_OP_COUNT] = {
    [PW_PUSH_INPUT] = CDNN_HOST_PW_PUSH_INPUT, [PW_PUSH_CONST] = CDNN_HOST_PW_PUSH_CONST,
    [PW_NEG] = CDNN_HOST_PW_NEG,               [PW_ABS] = CDNN_HOST_PW_ABS,
    [PW_EXP] = CDNN_HOST_PW_EXP,               [PW_LOG] = CDNN_HOST_PW_LOG,
    [PW_SQRT] = CDNN_HOST_PW_SQRT,             [PW_RSQRT] = CDNN_HOST_PW_RSQRT,
    [PW_RECIPROCAL] = CDNN_HOST_PW_RECIPROCAL, [PW_RELU] = CDNN_HOST_PW_RELU,
    [PW_GELU] = CDNN_HOST_PW_GELU,             [PW_GELU_TANH] = CDNN_HOST_PW_GELU_TANH,
    [PW_SILU] = CDNN_HOST_PW_SILU,             [PW_SIGMOID] = CDNN_HOST_PW_SIGMOID,
    [PW_TANH] = CDNN_HOST_PW_TANH,             [PW_ADD] = CDNN_HOST_PW_ADD,
    [PW_SUB] = CDNN_HOST_PW_SUB,               [PW_MUL] = CDNN_HOST_PW_MUL,
    [PW_DIV] = CDNN_HOST_PW_DIV,               [PW_MAX] = CDNN_HOST_PW_MAX,
    [PW_MIN] = CDNN_HOST_PW_MIN,
};

/* ---- deriving the launch ----------------------------------------------------------- */

static void put_tensor(int64_t *v, const cdnn_tensor_view_t *t)
{
    int64_t strides[CDNN_MAX_RANK];
    pw_broadcast_strides(t, strides);
    host_tensor_put(v, t, strides, t->rank);
}

static void put_program(int64_t *v, const pw_program_t *p)
{
    for (int32_t i = 0; i < p->length; i++) {
        int32_t bits;
        memcpy(&bits, &p->program[i].constant, sizeof bits);
        v[i * I_VALUES + I_OP] = host_ops[p->program[i].op];
        v[i * I_VALUES + I_INPUT] = p->program[i].input;
        v[i * I_VALUES + I_CONSTANT] = bits;
    }
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)metadata; /* every block size takes every program */
    (void)metadata_count;
    pw_program_t p;
    cdnn_status_t st = pw_program_compile(g, &p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t *v = calloc(V_COUNT, sizeof *v);
    if (!v)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    v[V_THREADS] = threads;
    v[V_RANK] = p.rank;
    v[V_INPUT_COUNT] = p.input_count;
    v[V_LENGTH] = p.length;
    memcpy(v + V_DIMS, p.dims, (size_t)p.rank * sizeof *p.dims);
    put_tensor(v + V_OUTPUT, &g->tensors[p.output]);
    for (int32_t i = 0; i < p.input_count; i++)
        put_tensor(v + V_INPUTS + i * HOST_TENSOR_VALUES, &g->tensors[p.inputs[i]]);
    put_program(v + V_PROGRAM, &p);
    *values = v;
    *count = V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

/* ---- the kernel's arguments -------------------------------------------------------- */

static void program_of(const int64_t *v, int32_t length, cdnn_host_pointwise_args_t *a)
{
    for (int32_t i = 0; i < length; i++) {
        int32_t bits = (int32_t)v[i * I_VALUES + I_CONSTANT];
        a->program[i].op = (int32_t)v[i * I_VALUES + I_OP];
        a->program[i].input = (int32_t)v[i * I_VALUES + I_INPUT];
        memcpy(&a->program[i].constant, &bits, sizeof bits);
    }
}

static cdnn_status_t arguments(const launch_t *l, const cdnn_exec_args_t *args,
                               cdnn_host_pointwise_args_t *a)
{
    const int64_t *v = l->values;
    memset(a, 0, sizeof *a);
    a->rank = (int32_t)v[V_RANK];
    a->input_count = (int32_t)v[V_INPUT_COUNT];
    a->instr_count = (int32_t)v[V_LENGTH];
    memcpy(a->dims, v + V_DIMS, sizeof a->dims);
    a->workspace = args ? args->workspace : NULL;
    a->workspace_size = args ? l->workspace_size : 0;
    a->parallel = (cdnn_host_parallel_t){(int32_t)v[V_THREADS], 0, host_parallel_for, NULL};
    program_of(v + V_PROGRAM, a->instr_count, a);
    cdnn_status_t st = host_tensor_get(v + V_OUTPUT, args, &a->output);
    for (int32_t i = 0; st == CDNN_STATUS_SUCCESS && i < a->input_count; i++)
        st = host_tensor_get(v + V_INPUTS + i * HOST_TENSOR_VALUES, args, &a->inputs[i]);
    return st;
}

static cdnn_host_pointwise_fn entry_of(const launch_t *l)
{
    cdnn_host_pointwise_fn fn;
    /* dlsym's object pointer to a function pointer, as POSIX allows. */
    memcpy(&fn, &l->entry, sizeof fn);
    return fn;
}

static cdnn_status_t workspace(const launch_t *l, size_t *bytes)
{
    cdnn_host_pointwise_args_t a;
    *bytes = 0;
    cdnn_status_t st = arguments(l, NULL, &a);
    int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, bytes) : CDNN_HOST_OK;
    return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_host_pointwise_args_t a;
    cdnn_status_t st = arguments(l, args, &a);
    int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, NULL) : CDNN_HOST_OK;
    return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);
}

const dispatch_handler_t host_pointwise_handler_v1 = {
    .name = "host_pointwise",
    .version = 1,
    .signature = CDNN_HOST_SIGNATURE_POINTWISE,
    .kind = KERNEL_KIND_HOST,
    .derive = derive,
    .workspace = workspace,
    .run = run,
};
