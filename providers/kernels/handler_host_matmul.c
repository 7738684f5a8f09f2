/*
 * handler_host_matmul.c -- dispatch handler host_matmul v1: launches
 * "host-matmul-v1" kernels (kernels/host/host_kernel.h) for a matmul with
 * its fused epilogue (matmul_pattern.h).
 *
 * Launch values: threads, batch rank, activation, m, n, k, the batch dims
 * (CDNN_HOST_MAX_BATCH_RANK of them, unused ones 0), then for a, b, c,
 * bias and residual in turn, a tensor as host_handlers.h lays it out
 * (strides batch.., row, col).
 */
#include <stdlib.h>
#include <string.h>

#include <host_kernel.h>

#include <cdnn_sdk/error.h>

#include "handlers.h"
#include "host_handlers.h"
#include "host_parallel.h"
#include "matmul_pattern.h"

enum { OPERAND_A, OPERAND_B, OPERAND_C, OPERAND_BIAS, OPERAND_RESIDUAL, OPERAND_COUNT };
enum {
    V_THREADS = LAUNCH_THREADS,
    V_BATCH_RANK,
    V_ACTIVATION,
    V_M,
    V_N,
    V_K,
    V_BATCH_DIMS,
    V_OPERANDS = V_BATCH_DIMS + CDNN_HOST_MAX_BATCH_RANK,
    V_COUNT = V_OPERANDS + OPERAND_COUNT * HOST_TENSOR_VALUES
};

/* ---- deriving the launch ----------------------------------------------------------- */

static void put_operand(int64_t *v, const cdnn_graph_view_t *g, const matmul_operand_t *op,
                        int32_t rank)
{
    if (op->tensor >= 0)
        host_tensor_put(v, &g->tensors[op->tensor], op->strides, rank);
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)metadata; /* every tile takes every layout: nothing to choose */
    (void)metadata_count;
    matmul_pattern_t p;
    cdnn_status_t st = matmul_pattern_of(g, &p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (p.batch_rank > CDNN_HOST_MAX_BATCH_RANK)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the matmul has %d batch dims; the "
                        "host kernels take %d", p.batch_rank, CDNN_HOST_MAX_BATCH_RANK);
    int64_t *v = calloc(V_COUNT, sizeof *v);
    if (!v)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    v[V_THREADS] = threads;
    v[V_BATCH_RANK] = p.batch_rank;
    v[V_ACTIVATION] = p.activation;
    v[V_M] = p.m;
    v[V_N] = p.n;
    v[V_K] = p.k;
    memcpy(v + V_BATCH_DIMS, p.batch_dims, (size_t)p.batch_rank * sizeof *p.batch_dims);
    const matmul_operand_t *ops[OPERAND_COUNT] = {&p.a, &p.b, &p.c, &p.bias, &p.residual};
    for (int i = 0; i < OPERAND_COUNT; i++)
        put_operand(v + V_OPERANDS + i * HOST_TENSOR_VALUES, g, ops[i], p.batch_rank + 2);
    *values = v;
    *count = V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

/* ---- the kernel's arguments -------------------------------------------------------- */

/* The kernel's arguments for a launch on args (NULL: a workspace query). */
static cdnn_status_t arguments(const launch_t *l, const cdnn_exec_args_t *args,
                               cdnn_host_matmul_args_t *a)
{
    const int64_t *v = l->values;
    *a = (cdnn_host_matmul_args_t){
        .batch_rank = (int32_t)v[V_BATCH_RANK],
        .activation = (int32_t)v[V_ACTIVATION],
        .m = v[V_M],
        .n = v[V_N],
        .k = v[V_K],
        .workspace = args ? args->workspace : NULL,
        .workspace_size = args ? l->workspace_size : 0,
        .parallel = {(int32_t)v[V_THREADS], 0, host_parallel_for, NULL},
    };
    memcpy(a->batch_dims, v + V_BATCH_DIMS, sizeof a->batch_dims);
    cdnn_host_tensor_t *tensors[OPERAND_COUNT] = {&a->a, &a->b, &a->c, &a->bias,
                                                  &a->residual};
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int i = 0; st == CDNN_STATUS_SUCCESS && i < OPERAND_COUNT; i++)
        st = host_tensor_get(v + V_OPERANDS + i * HOST_TENSOR_VALUES, args, tensors[i]);
    return st;
}

static cdnn_host_matmul_fn entry_of(const launch_t *l)
{
    cdnn_host_matmul_fn fn;
    /* dlsym's object pointer to a function pointer, as POSIX allows. */
    memcpy(&fn, &l->entry, sizeof fn);
    return fn;
}

static cdnn_status_t workspace(const launch_t *l, size_t *bytes)
{
    cdnn_host_matmul_args_t a;
    *bytes = 0;
    cdnn_status_t st = arguments(l, NULL, &a);
    int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, bytes) : CDNN_HOST_OK;
    return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_host_matmul_args_t a;
    cdnn_status_t st = arguments(l, args, &a);
    int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, NULL) : CDNN_HOST_OK;
    return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);
}

const dispatch_handler_t host_matmul_handler_v1 = {
    .name = "host_matmul",
    .version = 1,
    .signature = CDNN_HOST_SIGNATURE_MATMUL,
    .kind = KERNEL_KIND_HOST,
    .derive = derive,
    .workspace = workspace,
    .run = run,
};
