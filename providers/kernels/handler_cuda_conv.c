/*
 * handler_cuda_conv.c -- dispatch handler cuda_conv v1: launches
 * "cuda-conv-v1" kernels (kernels/cuda/cuda_kernel.h) for a forward
 * convolution with its fused bias and activation (conv_cuda_pattern.h) on
 * the handle's stream.
 *
 * The kernel's metadata says its element type (dtype: f16 or bf16, which
 * x and w must be) and launch geometry (tile_m, tile_n, threads, smem):
 * grid (ceil(n * p * q / tile_m), ceil(k / tile_n)), block (threads), smem
 * bytes of dynamic shared memory.
 *
 * Launch values: 1 (the launch's parallelism); n, h, w, c, k, r, s, p, q;
 * the pads, strides and dilations (h then w); x, w and y each as uid, type
 * and four channels-last strides; the bias as present, uid, type, stride;
 * the activation; grid x, y, block and smem.
 *
 * Kernels whose metadata says tensor_maps=1 (the Hopper ones,
 * conv_wgmma.cu) take cdnn_cuda_conv_tma_params_t: the params, the GEMM
 * they amount to and two TMA tensor maps (x in im2col mode, the filter
 * tiled), which hold the tensors' addresses and so are encoded at each run
 * inside the device's context, as the matmul handler does.  conv_tma.h
 * says which layouts they take: others are NOT_SUPPORTED at derive (the
 * mma.sync kernels take them), misaligned addresses BAD_PARAM at run.
 * Their launch values end with tile_m and tile_n; they are persistent:
 * grid (tiles, 1) in the values, at run no more blocks than the device
 * has multiprocessors.
 *
 * Kernels whose metadata says stem=1 (conv_wgmma.cu's stem kernels, few
 * input channels) take the plain params, a tile per output row: grid
 * (n * p, 1) in the values, capped at run as the persistent ones; their
 * launch values end with a marker (STEM_MARK).  conv_tma.h's
 * cdnn_cuda_conv_stem_refusal says which convolutions they take.
 *
 * Metadata epilogue=tma_store (either kind above): the kernel stores y by
 * TMA and takes its params followed by a map of y (cuda_kernel.h,
 * cdnn_cuda_conv_tma_store_params_t, cdnn_cuda_conv_stem_store_params_t),
 * encoded at each run; conv_tma.h's *_store_refusal say what y they take.
 * Their values end with TMA_STORE_MARK, or the stem's with STEM_STORE_MARK.
 */
#include <stdlib.h>
#include <string.h>

#include <conv_tma.h>
#include <cuda_kernel.h>

#include <cdnn_sdk/error.h>

#include "conv_cuda_pattern.h"
#include "cuda_code.h"
#include "handlers.h"

enum { T_UID, T_TYPE, T_STRIDES, T_VALUES = T_STRIDES + 4 };
enum {
    V_PARALLELISM = LAUNCH_THREADS,
    V_N, V_H, V_W, V_C, V_K, V_R, V_S, V_P, V_Q,
    V_PAD_H, V_PAD_W, V_STRIDE_H, V_STRIDE_W, V_DILATION_H, V_DILATION_W,
    V_X, V_FILTER = V_X + T_VALUES, V_Y = V_FILTER + T_VALUES,
    V_BIAS_PRESENT = V_Y + T_VALUES, V_BIAS_UID, V_BIAS_TYPE, V_BIAS_STRIDE,
    V_ACTIVATION,
    V_GRID_X, V_GRID_Y, V_BLOCK, V_SMEM,
    V_COUNT,
    /* tensor-map kernels only */
    V_TMA_TILE_M = V_COUNT, V_TMA_TILE_N,
    V_TMA_COUNT,
    /* tensor-map kernels with the TMA-store epilogue */
    V_TMA_STORE_MARK = V_TMA_COUNT,
    V_TMA_STORE_COUNT,
    /* stem kernels only */
    V_STEM_MARK = V_COUNT,
    V_STEM_COUNT
};
/* Mark a stem launch's values (they are one longer than the plain ones),
 * with or without TMA stores, and a TMA-store tensor-map launch's. */
#define STEM_MARK 0x5374656dLL
#define STEM_STORE_MARK 0x53746d53LL
#define TMA_STORE_MARK 0x546d6153LL
enum {
    LAUNCH_PLAIN, LAUNCH_TMA, LAUNCH_TMA_STORE, LAUNCH_STEM, LAUNCH_STEM_STORE
};

/* What the kernels index in 32 bits (cuda_kernel.h). */
#define GEMM_SIZE_MAX ((int64_t)1 << 30)
#define MAX_GRID_Y 65535
#define MAX_GRID_X 2147483647LL

/* ---- deriving the launch ---------------------------------------------------------------- */

static cdnn_status_t check_types(const cdnn_graph_view_t *g, const conv_cuda_pattern_t *p,
                                 const sdk_kpack_kv_t *m, int32_t n)
{
    const char *dtype = kernel_metadata(m, n, "dtype");
    const char *x = cdnn_data_type_name(g->tensors[p->x].type);
    const char *w = cdnn_data_type_name(g->tensors[p->w].type);
    if (!dtype || strcmp(x, dtype) != 0 || strcmp(w, dtype) != 0)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the kernel convolves %s, and x and w "
                        "are %s and %s", dtype ? dtype : "(no dtype in its metadata)", x, w);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_sizes(const conv_cuda_pattern_t *p)
{
    int64_t rows = p->n * p->p * p->q, depth = p->r * p->s * p->c;
    if (rows > GEMM_SIZE_MAX || depth > GEMM_SIZE_MAX || p->k > GEMM_SIZE_MAX)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "a conv of %lld output pixels, %lld taps "
                        "and %lld filters; the CUDA conv kernels take at most 2^30 of each",
                        (long long)rows, (long long)depth, (long long)p->k);
    return CDNN_STATUS_SUCCESS;
}

static void put_tensor(int64_t *v, const cdnn_graph_view_t *g, int32_t index,
                       const int64_t strides[4])
{
    v[T_UID] = g->tensors[index].uid;
    v[T_TYPE] = g->tensors[index].type;
    memcpy(v + T_STRIDES, strides, 4 * sizeof *strides);
}

static void put_shape(int64_t *v, const conv_cuda_pattern_t *p)
{
    const int64_t shape[] = {p->n, p->h, p->width, p->c, p->k, p->r, p->s, p->p, p->q,
                             p->pad_h, p->pad_w, p->stride_h, p->stride_w,
                             p->dilation_h, p->dilation_w};
    memcpy(v + V_N, shape, sizeof shape);
}

static cdnn_status_t put_launch(int64_t *v, const conv_cuda_pattern_t *p,
                                const sdk_kpack_kv_t *m, int32_t n, int kind)
{
    int64_t tile_m = 0, tile_n = 0, threads = 0, smem = 0;
    cdnn_status_t st = kernel_metadata_int(m, n, "tile_m", 16, 1024, &tile_m);
    if (st == CDNN_STATUS_SUCCESS)
        st = kernel_metadata_int(m, n, "tile_n", 16, 1024, &tile_n);
    if (st == CDNN_STATUS_SUCCESS)
        st = kernel_metadata_int(m, n, "threads", 32, 1024, &threads);
    if (st == CDNN_STATUS_SUCCESS)
        st = kernel_metadata_int(m, n, "smem", 0, 1 << 20, &smem);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    int64_t columns = (p->k + tile_n - 1) / tile_n;
    int64_t rows = (p->n * p->p * p->q + tile_m - 1) / tile_m;
    if (columns > MAX_GRID_Y)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "%lld filter tiles are more than a CUDA "
                        "grid holds (%d)", (long long)columns, MAX_GRID_Y);
    v[V_GRID_X] = rows;
    v[V_GRID_Y] = columns;
    if (kind == LAUNCH_TMA || kind == LAUNCH_TMA_STORE) {
        v[V_GRID_X] = rows * columns; /* persistent: capped at run */
        v[V_GRID_Y] = 1;
        v[V_TMA_TILE_M] = tile_m;
        v[V_TMA_TILE_N] = tile_n;
        if (kind == LAUNCH_TMA_STORE)
            v[V_TMA_STORE_MARK] = TMA_STORE_MARK;
    } else if (kind == LAUNCH_STEM || kind == LAUNCH_STEM_STORE) {
        v[V_GRID_X] = p->n * p->p; /* a tile per output row, capped at run */
        v[V_GRID_Y] = 1;
        v[V_STEM_MARK] = kind == LAUNCH_STEM ? STEM_MARK : STEM_STORE_MARK;
    }
    v[V_BLOCK] = threads;
    v[V_SMEM] = smem;
    return CDNN_STATUS_SUCCESS;
}

/* The params a launch will pass, but for the pointers (NULL). */
static void params_layout(const int64_t *v, cdnn_cuda_conv_params_t *p)
{
    memset(p, 0, sizeof *p);
    p->n = v[V_N], p->h = v[V_H], p->w = v[V_W], p->c = v[V_C];
    p->k = v[V_K], p->r = v[V_R], p->s = v[V_S], p->p = v[V_P], p->q = v[V_Q];
    p->pad_h = v[V_PAD_H], p->pad_w = v[V_PAD_W];
    p->stride_h = v[V_STRIDE_H], p->stride_w = v[V_STRIDE_W];
    p->dilation_h = v[V_DILATION_H], p->dilation_w = v[V_DILATION_W];
    p->activation = (int32_t)v[V_ACTIVATION];
    p->x_type = (int32_t)v[V_X + T_TYPE];
    p->w_type = (int32_t)v[V_FILTER + T_TYPE];
    p->y_type = (int32_t)v[V_Y + T_TYPE];
    memcpy(p->x_strides, v + V_X + T_STRIDES, sizeof p->x_strides);
    memcpy(p->w_strides, v + V_FILTER + T_STRIDES, sizeof p->w_strides);
    memcpy(p->y_strides, v + V_Y + T_STRIDES, sizeof p->y_strides);
}

/* Tensor-map and stem kernels: the layout must suit them (conv_tma.h). */
static cdnn_status_t check_layout(const int64_t *v, int kind)
{
    cdnn_cuda_conv_params_t p;
    params_layout(v, &p);
    const char *why = kind == LAUNCH_TMA          ? cdnn_cuda_conv_tma_refusal(&p, 0)
                      : kind == LAUNCH_TMA_STORE  ? cdnn_cuda_conv_store_refusal(&p, 0)
                      : kind == LAUNCH_STEM       ? cdnn_cuda_conv_stem_refusal(&p, 0)
                      : kind == LAUNCH_STEM_STORE ? cdnn_cuda_conv_stem_store_refusal(&p, 0)
                                                  : NULL;
    return why ? sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "%s", why) : CDNN_STATUS_SUCCESS;
}

static cdnn_status_t derive_into(int64_t *v, const cdnn_graph_view_t *g,
                                 const sdk_kpack_kv_t *m, int32_t n, int kind)
{
    conv_cuda_pattern_t p;
    cdnn_status_t st = conv_cuda_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_types(g, &p, m, n);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_sizes(&p);
    if (st == CDNN_STATUS_SUCCESS)
        st = put_launch(v, &p, m, n, kind);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    v[V_PARALLELISM] = 1;
    put_shape(v, &p);
    put_tensor(v + V_X, g, p.x, p.x_strides);
    put_tensor(v + V_FILTER, g, p.w, p.w_strides);
    put_tensor(v + V_Y, g, p.y, p.y_strides);
    if (p.bias >= 0) {
        v[V_BIAS_PRESENT] = 1;
        v[V_BIAS_UID] = g->tensors[p.bias].uid;
        v[V_BIAS_TYPE] = g->tensors[p.bias].type;
        v[V_BIAS_STRIDE] = p.bias_stride;
    }
    v[V_ACTIVATION] = p.activation;
    return check_layout(v, kind);
}

/* Which launch the kernel's metadata asks for. */
static int launch_kind(const sdk_kpack_kv_t *m, int32_t n)
{
    const char *maps = kernel_metadata(m, n, "tensor_maps");
    const char *epilogue = kernel_metadata(m, n, "epilogue");
    const char *stem = kernel_metadata(m, n, "stem");
    int store = epilogue && strcmp(epilogue, "tma_store") == 0;
    if (stem && strcmp(stem, "1") == 0)
        return store ? LAUNCH_STEM_STORE : LAUNCH_STEM;
    if (maps && strcmp(maps, "1") == 0)
        return store ? LAUNCH_TMA_STORE : LAUNCH_TMA;
    return LAUNCH_PLAIN;
}

static cdnn_status_t derive(const cdnn_graph_view_t *g, const sdk_kpack_kv_t *metadata,
                            int32_t metadata_count, int32_t threads, int64_t **values,
                            int32_t *count)
{
    (void)threads; /* a grid, not host threads */
    int kind = launch_kind(metadata, metadata_count);
    int64_t *v = calloc(V_TMA_STORE_COUNT, sizeof *v);
    if (!v)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = derive_into(v, g, metadata, metadata_count, kind);
    if (st != CDNN_STATUS_SUCCESS) {
        free(v);
        return st;
    }
    *values = v;
    *count = kind == LAUNCH_STEM || kind == LAUNCH_STEM_STORE ? V_STEM_COUNT
             : kind == LAUNCH_PLAIN                          ? V_COUNT
             : kind == LAUNCH_TMA_STORE                      ? V_TMA_STORE_COUNT
                                                             : V_TMA_COUNT;
    return CDNN_STATUS_SUCCESS;
}


/* A tensor's pointer, type and strides; NULL when the pack lacks it. */
static const void *tensor(const int64_t *v, const cdnn_exec_args_t *args, int32_t *type,
                          int64_t strides[4])
{
    *type = (int32_t)v[T_TYPE];
    memcpy(strides, v + T_STRIDES, 4 * sizeof *strides);
    return launch_pointer(args, v[T_UID]);
}

static cdnn_status_t params_of(const int64_t *v, const cdnn_exec_args_t *args,
                               cdnn_cuda_conv_params_t *p)
{
    memset(p, 0, sizeof *p);
    p->n = v[V_N], p->h = v[V_H], p->w = v[V_W], p->c = v[V_C];
    p->k = v[V_K], p->r = v[V_R], p->s = v[V_S], p->p = v[V_P], p->q = v[V_Q];
    p->pad_h = v[V_PAD_H], p->pad_w = v[V_PAD_W];
    p->stride_h = v[V_STRIDE_H], p->stride_w = v[V_STRIDE_W];
    p->dilation_h = v[V_DILATION_H], p->dilation_w = v[V_DILATION_W];
    p->activation = (int32_t)v[V_ACTIVATION];
    p->x = tensor(v + V_X, args, &p->x_type, p->x_strides);
    p->filter = tensor(v + V_FILTER, args, &p->w_type, p->w_strides);
    p->y = (void *)tensor(v + V_Y, args, &p->y_type, p->y_strides);
    p->bias_type = p->y_type;
    int missing = !p->x || !p->filter || !p->y;
    if (v[V_BIAS_PRESENT]) {
        p->bias = launch_pointer(args, v[V_BIAS_UID]);
        p->bias_type = (int32_t)v[V_BIAS_TYPE];
        p->bias_stride = v[V_BIAS_STRIDE];
        missing |= !p->bias;
    }
    return missing ? sdk_fail(CDNN_STATUS_BAD_PARAM, "the variant pack lacks a tensor the "
                              "conv reads or writes")
                   : CDNN_STATUS_SUCCESS;
}

/* A tensor-map kernel's params: the GEMM and the maps for this run's
 * pointers, encoded with the device's context current (the driver refuses
 * without one, and the calling thread need not have it). */
static cdnn_status_t tma_params_of(const launch_t *l, const cdnn_exec_args_t *args,
                                   cdnn_cuda_conv_tma_store_params_t *ts, int store)
{
    const int64_t *v = l->values;
    cdnn_cuda_conv_tma_params_t *t = &ts->tma;
    memset(ts, 0, sizeof *ts);
    cdnn_status_t st = params_of(v, args, &t->conv);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const char *why = store ? cdnn_cuda_conv_store_refusal(&t->conv, 1)
                            : cdnn_cuda_conv_tma_refusal(&t->conv, 1);
    if (why)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "kernel %s: %s", l->kernel_id, why);
    if ((st = cuda_code_enter(l->cuda)) != CDNN_STATUS_SUCCESS)
        return st;
    int r = cdnn_cuda_conv_tma_encode(t, (int)v[V_TMA_TILE_M], (int)v[V_TMA_TILE_N],
                                      l->cuda->cu->tensor_map_encode_im2col,
                                      l->cuda->cu->tensor_map_encode_tiled);
    if (r == 0 && store)
        r = cdnn_cuda_conv_encode_y_map(&ts->y_map, &t->conv, t->gemm.m, t->gemm.c_row_stride,
                                        1, 0, l->cuda->cu->tensor_map_encode_tiled);
    cuda_code_leave(l->cuda);
    return r == SDK_CU_SUCCESS ? CDNN_STATUS_SUCCESS
                               : cuda_failed(l->cuda, CDNN_STATUS_EXECUTION_FAILED, r,
                                             "cuTensorMapEncodeIm2col/Tiled");
}

/* A stem kernel's params; with TMA stores, y's map (dims {k, q, n * p}). */
static cdnn_status_t stem_params_of(const launch_t *l, const cdnn_exec_args_t *args,
                                    cdnn_cuda_conv_stem_store_params_t *s, int store)
{
    memset(s, 0, sizeof *s);
    cdnn_status_t st = params_of(l->values, args, &s->conv);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const cdnn_cuda_conv_params_t *p = &s->conv;
    const char *why = store ? cdnn_cuda_conv_stem_store_refusal(p, 1)
                            : cdnn_cuda_conv_stem_refusal(p, 1);
    if (why)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "kernel %s: %s", l->kernel_id, why);
    if (!store)
        return CDNN_STATUS_SUCCESS;
    if ((st = cuda_code_enter(l->cuda)) != CDNN_STATUS_SUCCESS)
        return st;
    int r = cdnn_cuda_conv_encode_y_map(&s->y_map, p, p->q, p->y_strides[2], p->n * p->p,
                                        p->y_strides[1], l->cuda->cu->tensor_map_encode_tiled);
    cuda_code_leave(l->cuda);
    return r == SDK_CU_SUCCESS ? CDNN_STATUS_SUCCESS
                               : cuda_failed(l->cuda, CDNN_STATUS_EXECUTION_FAILED, r,
                                             "cuTensorMapEncodeTiled");
}

static cdnn_status_t run(const launch_t *l, const cdnn_exec_args_t *args)
{
    /* The plain params; or them followed by the GEMM and the maps (and
     * y's map); or, for the stem, by y's map. */
    cdnn_cuda_conv_tma_store_params_t t;
    cdnn_cuda_conv_stem_store_params_t s;
    const int64_t *v = l->values;
    const int store = l->value_count == V_TMA_STORE_COUNT && v[V_TMA_STORE_MARK] == TMA_STORE_MARK;
    const int tma = l->value_count == V_TMA_COUNT || store;
    const int64_t mark = l->value_count == V_STEM_COUNT ? v[V_STEM_MARK] : 0;
    const int stem = mark == STEM_MARK || mark == STEM_STORE_MARK;
    void *params[] = {stem ? (void *)&s : (void *)&t};
    cdnn_status_t st = tma    ? tma_params_of(l, args, &t, store)
                       : stem ? stem_params_of(l, args, &s, mark == STEM_STORE_MARK)
                              : params_of(v, args, &t.tma.conv);
    unsigned grid[3] = {(unsigned)v[V_GRID_X], (unsigned)v[V_GRID_Y], 1};
    if ((tma || stem) && l->cuda->multiprocessors > 0 &&
        grid[0] > (unsigned)l->cuda->multiprocessors)
        grid[0] = (unsigned)l->cuda->multiprocessors; /* persistent blocks */
    return st ? st
              : cuda_code_launch(l->cuda, grid, (unsigned)v[V_BLOCK], (unsigned)v[V_SMEM],
                                 args->stream, params);
}

static uint32_t shared_bytes(const int64_t *values)
{
    return (uint32_t)values[V_SMEM];
}

const dispatch_handler_t cuda_conv_handler_v1 = {
    .name = "cuda_conv",
    .version = 1,
    .signature = "cuda-conv-v1",
    .kind = KERNEL_KIND_CUDA,
    .derive = derive,
    .shared_bytes = shared_bytes,
    .workspace = launch_no_workspace,
    .run = run,
};
