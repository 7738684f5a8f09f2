/*
 * handler_host_norm.c -- dispatch handler host_norm v1: launches
 * "host-norm-v1" kernels (kernels/host/host_kernel.h) for a graph of one
 * layer-norm or RMS-norm node (norm_pattern.h).
 *
 * Launch values: threads, kind, outer rank, cols, epsilon's f32 bits, the
 * outer dims (CDNN_HOST_MAX_OUTER_RANK, unused ones 0), then x, y, scale,
 * bias, mean and inv_std, each a tensor as host_handlers.h lays it out
 * (strides outer.., col; absent ones 0).
 */
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

#include "handlers.h"
#include "host_handlers.h"
#include "host_parallel.h"
#include "norm_pattern.h"

enum {
    V_THREADS = LAUNCH_THREADS,
    V_KIND,
    V_OUTER_RANK,
    V_COLS,
    V_EPSILON,
    V_OUTER_DIMS,
    V_TENSORS = V_OUTER_DIMS + CDNN_HOST_MAX_OUTER_RANK,
    V_COUNT = V_TENSORS + NORM_ROLES * HOST_TENSOR_VALUES
};

/* ---- deriving the launch ----------------------------------------------------------- */

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)metadata; /* both algorithms take every layout */
    (void)metadata_count;
    norm_pattern_t p;
    cdnn_status_t st = norm_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS && p.rows.outer_rank > CDNN_HOST_MAX_OUTER_RANK)
        st = sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the norm has %d outer dims; the host "
                      "kernels take %d", p.rows.outer_rank, CDNN_HOST_MAX_OUTER_RANK);
    int64_t *v = st == CDNN_STATUS_SUCCESS ? calloc(V_COUNT, sizeof *v) : NULL;
    if (st != CDNN_STATUS_SUCCESS || !v)
        return st != CDNN_STATUS_SUCCESS ? st
                                         : sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    float epsilon = (float)p.epsilon;
    int32_t bits;
    memcpy(&bits, &epsilon, sizeof bits);
    v[V_THREADS] = threads;
    v[V_KIND] = p.layer ? CDNN_HOST_NORM_LAYER : CDNN_HOST_NORM_RMS;
    v[V_OUTER_RANK] = p.rows.outer_rank;
    v[V_COLS] = p.rows.cols;
    v[V_EPSILON] = bits;
    memcpy(v + V_OUTER_DIMS, p.rows.outer_dims,
           (size_t)p.rows.outer_rank * sizeof *p.rows.outer_dims);
    for (int i = 0; i < NORM_ROLES; i++)
        if (p.tensors[i] >= 0)
            host_tensor_put(v + V_TENSORS + i * HOST_TENSOR_VALUES, &g->tensors[p.tensors[i]],
                            p.strides[i], p.rows.outer_rank + 1);
    *values = v;
    *count = V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

/* ---- the kernel's arguments -------------------------------------------------------- */

static cdnn_status_t arguments(const launch_t *l, const cdnn_exec_args_t *args,
                               cdnn_host_norm_args_t *a)
{
    const int64_t *v = l->values;
    int32_t bits = (int32_t)v[V_EPSILON];
    memset(a, 0, sizeof *a);
    a->outer_rank = (int32_t)v[V_OUTER_RANK];
    a->kind = (int32_t)v[V_KIND];
    a->cols = v[V_COLS];
    memcpy(&a->epsilon, &bits, sizeof bits);
    memcpy(a->outer_dims, v + V_OUTER_DIMS, sizeof a->outer_dims);
    a->parallel = (cdnn_host_parallel_t){(int32_t)v[V_THREADS], 0, host_parallel_for, NULL};
    cdnn_host_tensor_t *tensors[NORM_ROLES] = {&a->x,    &a->y,    &a->scale,
                                                 &a->bias, &a->mean, &a->inv_std};
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int i = 0; st == CDNN_STATUS_SUCCESS && i < NORM_ROLES; i++)
        st = host_tensor_get(v + V_TENSORS + i * HOST_TENSOR_VALUES, args, tensors[i]);
    return st;
}

static cdnn_host_norm_fn entry_of(const launch_t *l)
{
    cdnn_host_norm_fn fn;
    /* dlsym's object pointer to a function pointer, as POSIX allows. */
    memcpy(&fn, &l->entry, sizeof fn);
    return fn;
}

static cdnn_status_t workspace(const launch_t *l, size_t *bytes)
{
    cdnn_host_norm_args_t a;
    *bytes = 0;
    cdnn_status_t st = arguments(l, NULL, &a);
    int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, bytes) : CDNN_HOST_OK;
    return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_host_norm_args_t a;
    cdnn_status_t st = arguments(l, args, &a);
    int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, NULL) : CDNN_HOST_OK;
    return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);
}

const dispatch_handler_t host_norm_handler_v1 = {
    .name = "host_norm",
    .version = 1,
    .signature = CDNN_HOST_SIGNATURE_NORM,
    .kind = KERNEL_KIND_HOST,
    .derive = derive,
    .workspace = workspace,
    .run = run,
};
