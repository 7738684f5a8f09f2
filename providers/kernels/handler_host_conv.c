/*
 * handler_host_conv.c -- dispatch handler host_conv v1: launches
 * "host-conv-nhwc-v1" kernels (kernels/host/host_kernel.h) for a 2-D
 * convolution over channels-last tensors with the matmul's fused epilogue
 * (conv_host_pattern.h).
 *
 * Launch values: threads, activation, the fifteen sizes of
 * cdnn_host_conv_args_t in its order (n .. dilation_w), then for x,
 * filter, y, bias and residual in turn, a tensor as host_handlers.h lays
 * it out (x {n, h, w, c}; filter {k, r, s, c}; the others {n, out_h,
 * out_w, k}).
 */
#include <stdlib.h>
#include <string.h>

#include <host_kernel.h>

#include <cdnn_sdk/error.h>

#include "conv_host_pattern.h"
#include "handlers.h"
#include "host_handlers.h"
#include "host_parallel.h"

enum { OPERAND_X, OPERAND_FILTER, OPERAND_Y, OPERAND_BIAS, OPERAND_RESIDUAL, OPERAND_COUNT };
enum { SIZE_COUNT = 15 };
enum {
    V_THREADS = LAUNCH_THREADS,
    V_ACTIVATION,
    V_SIZES,
    V_OPERANDS = V_SIZES + SIZE_COUNT,
    V_COUNT = V_OPERANDS + OPERAND_COUNT * HOST_TENSOR_VALUES
};

/* ---- deriving the launch ----------------------------------------------------------- */

/* An epilogue operand (y, bias, residual), if present, in the kernel's order. */
static void put_output_operand(int64_t *v, const cdnn_graph_view_t *g,
                               const matmul_operand_t *op)
{
    int64_t strides[4];
    if (op->tensor < 0)
        return;
    conv_host_output_strides(op->strides, strides);
    host_tensor_put(v, &g->tensors[op->tensor], strides, 4);
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)metadata; /* every tile takes every convolution: nothing to choose */
    (void)metadata_count;
    conv_host_pattern_t p;
    cdnn_status_t st = conv_host_pattern_of(g, &p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t *v = calloc(V_COUNT, sizeof *v);
    if (!v)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    const int64_t sizes[SIZE_COUNT] = {p.n,      p.h,          p.w,        p.c,
                                       p.k,      p.r,          p.s,        p.out_h,
                                       p.out_w,  p.pad_h,      p.pad_w,    p.stride_h,
                                       p.stride_w, p.dilation_h, p.dilation_w};
    v[V_THREADS] = threads;
    v[V_ACTIVATION] = p.epilogue.activation;
    memcpy(v + V_SIZES, sizes, sizeof sizes);
    host_tensor_put(v + V_OPERANDS + OPERAND_X * HOST_TENSOR_VALUES, &g->tensors[p.x],
                    p.x_strides, 4);
    host_tensor_put(v + V_OPERANDS + OPERAND_FILTER * HOST_TENSOR_VALUES,
                    &g->tensors[p.filter], p.filter_strides, 4);
    const matmul_operand_t *outs[] = {&p.epilogue.c, &p.epilogue.bias, &p.epilogue.residual};
    for (int i = 0; i < 3; i++)
        put_output_operand(v + V_OPERANDS + (OPERAND_Y + i) * HOST_TENSOR_VALUES, g, outs[i]);
    *values = v;
    *count = V_COUNT;
    return CDNN_STATUS_SUCCESS;
}

/* ---- the kernel's arguments -------------------------------------------------------- */

/* The kernel's arguments for a launch on args (NULL: a workspace query). */
static cdnn_status_t arguments(const launch_t *l, const cdnn_exec_args_t *args,
                               cdnn_host_conv_args_t *a)
{
    const int64_t *v = l->values, *s = l->values + V_SIZES;
    *a = (cdnn_host_conv_args_t){
        .n = s[0], .h = s[1], .w = s[2], .c = s[3],
        .k = s[4], .r = s[5], .s = s[6],
        .out_h = s[7], .out_w = s[8],
        .pad_h = s[9], .pad_w = s[10],
        .stride_h = s[11], .stride_w = s[12],
        .dilation_h = s[13], .dilation_w = s[14],
        .activation = (int32_t)v[V_ACTIVATION],
        .workspace = args ? args->workspace : NULL,
        .workspace_size = args ? l->workspace_size : 0,
        .parallel = {(int32_t)v[V_THREADS], 0, host_parallel_for, NULL},
    };
    cdnn_host_tensor_t *tensors[OPERAND_COUNT] = {&a->x, &a->filter, &a->y, &a->bias,
                                                  &a->residual};
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int i = 0; st == CDNN_STATUS_SUCCESS && i < OPERAND_COUNT; i++)
        st = host_tensor_get(v + V_OPERANDS + i * HOST_TENSOR_VALUES, args, tensors[i]);
    return st;
}

static cdnn_host_conv_fn entry_of(const launch_t *l)
{
    cdnn_host_conv_fn fn;
    /* dlsym's object pointer to a function pointer, as POSIX allows. */
    memcpy(&fn, &l->entry, sizeof fn);
    return fn;
}

static cdnn_status_t workspace(const launch_t *l, size_t *bytes)
{
    cdnn_host_conv_args_t a;
    *bytes = 0;
    cdnn_status_t st = arguments(l, NULL, &a);
    int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, bytes) : CDNN_HOST_OK;
    return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    cdnn_host_conv_args_t a;
    cdnn_status_t st = arguments(l, args, &a);
    int32_t status = st == CDNN_STATUS_SUCCESS ? entry_of(l)(&a, NULL) : CDNN_HOST_OK;
    return status == CDNN_HOST_OK ? st : host_kernel_failed(l, status);
}

const dispatch_handler_t host_conv_handler_v1 = {
    .name = "host_conv",
    .version = 1,
    .signature = CDNN_HOST_SIGNATURE_CONV_NHWC,
    .kind = KERNEL_KIND_HOST,
    .derive = derive,
    .workspace = workspace,
    .run = run,
};
