/*
 * bench_gpu_matmul.c -- cdnn's tensor-core matmul kernels on the GPU,
 * timed with device events.
 *
 *   bench_gpu_matmul CODE_OBJECT_DIR [REPS]
 *
 * For bf16 and f16 at 4096^3, 8192^3 and M x N x K = 4096 x 14336 x 4096
 * (A m x k and B k x n row-major, C m x n of the input type, no epilogue:
 * what torch.matmul computes), every tile configuration of the device's
 * code object (matmul_tc, and on sm_90 the Hopper kernels of
 * matmul_wgmma, whose tensor maps are encoded once per shape, outside the
 * timing); then bf16 8192^3 with the fused epilogue bias + gelu (erf),
 * reported as dtype "bf16+bias+gelu": the median of REPS (default 15)
 * samples of launches back to back (bench/gpu/event_timing.h).  Inputs are random in
 * [-1, 1) (never zeros: they run faster than real data); 256 random
 * elements of each C are checked against f64 dot products, tolerance
 * eps(type) * |ref| + (k + 4) * 2^-22 * sum |a||b|.
 * One line per (dtype, shape, kernel) on stdout, for bench/gpu/run.py:
 *   cdnn DTYPE M N K KERNEL MEDIAN_MS TFLOPS WORST_ERR_OVER_TOL
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/numeric.h>

#include "../../tests/cuda_kernels/gpu.h"
#include "event_timing.h"
#include "cuda_kernel.h"
#include "matmul_tma.h"

typedef struct shape {
    int64_t m, n, k;
} shape_t;

static const shape_t shapes[] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4096, 14336, 4096}};

typedef struct operands {
    int32_t type;
    uint16_t *a, *b; /* host copies, m*k and k*n */
    uint16_t *bias;  /* n, or NULL: the epilogue case */
    sdk_cu_deviceptr dbias;
    uint8_t *poison; /* m*n halves of 0xFF bytes (NaN), written to C before each kernel */
    sdk_cu_deviceptr da, db, dc;
} operands_t;

static uint16_t *random_halves(int32_t type, int64_t count, rng_t *rng) {
    uint16_t *v = malloc((size_t)count * 2);
    if (!v) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < count; ++i) {
        const float x = (float)rng_uniform(rng, -1, 1);
        v[i] = type == CDNN_CUDA_BF16 ? cdnn_float_to_bf16(x) : cdnn_float_to_half(x);
    }
    return v;
}

static double half_value(int32_t type, uint16_t v) {
    return type == CDNN_CUDA_BF16 ? cdnn_bf16_to_float(v) : cdnn_half_to_float(v);
}

static operands_t operands_make(const gpu_t *gpu, int32_t type, const shape_t *s, rng_t *rng) {
    operands_t o = {.type = type};
    o.a = random_halves(type, s->m * s->k, rng);
    o.b = random_halves(type, s->k * s->n, rng);
    o.poison = malloc((size_t)(s->m * s->n) * 2);
    if (!o.poison)
        exit(1);
    memset(o.poison, 0xFF, (size_t)(s->m * s->n) * 2);
    o.da = gpu_alloc(gpu, (size_t)(s->m * s->k) * 2);
    o.db = gpu_alloc(gpu, (size_t)(s->k * s->n) * 2);
    o.dc = gpu_alloc(gpu, (size_t)(s->m * s->n) * 2);
    gpu_upload(gpu, o.da, o.a, (size_t)(s->m * s->k) * 2);
    gpu_upload(gpu, o.db, o.b, (size_t)(s->k * s->n) * 2);
    return o;
}

static void operands_add_bias(const gpu_t *gpu, operands_t *o, const shape_t *s, rng_t *rng) {
    o->bias = random_halves(o->type, s->n, rng);
    o->dbias = gpu_alloc(gpu, (size_t)s->n * 2);
    gpu_upload(gpu, o->dbias, o->bias, (size_t)s->n * 2);
}

static void operands_free(const gpu_t *gpu, operands_t *o) {
    if (o->bias) {
        gpu_free(gpu, o->dbias);
        free(o->bias);
    }
    gpu_free(gpu, o->da);
    gpu_free(gpu, o->db);
    gpu_free(gpu, o->dc);
    free(o->a);
    free(o->b);
    free(o->poison);
}

/* The worst |C - ref| / tolerance over 256 random elements. */
static double spot_check(const gpu_t *gpu, const operands_t *o, const shape_t *s, rng_t *rng) {
    uint16_t *c = malloc((size_t)(s->m * s->n) * 2);
    if (!c)
        exit(1);
    gpu_download(gpu, c, o->dc, (size_t)(s->m * s->n) * 2);
    double worst = 0;
    for (int t = 0; t < 256; ++t) {
        const int64_t i = (int64_t)(rng_next(rng) % (uint64_t)s->m);
        const int64_t j = (int64_t)(rng_next(rng) % (uint64_t)s->n);
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < s->k; ++k) {
            const double p = half_value(o->type, o->a[i * s->k + k]) *
                             half_value(o->type, o->b[k * s->n + j]);
            ref += p, mag += fabs(p);
        }
        if (o->bias) { /* + bias, then gelu (erf): its slope is at most 1.13 */
            const double bias = half_value(o->type, o->bias[j]);
            ref += bias, mag += fabs(bias);
            ref = 0.5 * ref * (1 + erf(ref / sqrt(2.0)));
            mag *= 1.13;
        }
        const double tol = elem_epsilon(o->type) * fabs(ref) + (double)(s->k + 4) * ldexp(mag, -22);
        const double ratio = fabs(half_value(o->type, c[i * s->n + j]) - ref) / tol;
        worst = isnan(ratio) || ratio > worst ? (isnan(ratio) ? INFINITY : ratio) : worst;
    }
    free(c);
    return worst;
}

/* Milliseconds a launch, back to back (event_timing.h); p is the kernel's
 * parameter struct. */
static double time_kernel(const gpu_t *gpu, sdk_cu_function fn, unsigned grid_x, unsigned grid_y,
                          unsigned threads, unsigned smem, void *p, int reps) {
    gpu_launch_args_t launch = {gpu, fn, grid_x, grid_y, threads, smem, p};
    return bench_time_events(gpu->cu, gpu_launch_run, &launch, reps).stream_ms;
}

typedef struct config {
    int tile_m, tile_n, threads;
    unsigned smem;
    int tma;     /* a matmul_wgmma kernel */
    int cluster; /* its blocks a cluster (the _c2 kernels: 2), else 0 */
    int store;   /* C stored by TMA (the _store kernels) */
} config_t;

static const config_t configs[] = {
#define CONFIG(tm, tn, wm, wn, stages) {tm, tn, 32 * (wm) * (wn), CDNN_CUDA_MATMUL_TC_SMEM(tm, tn, stages), 0, 0, 0},
    CDNN_CUDA_MATMUL_TC_CONFIGS(CONFIG)
#undef CONFIG
#define CONFIG(tm, tn, stages) {tm, tn, CDNN_CUDA_MATMUL_WGMMA_THREADS, CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages), 1, 0, 0},
    CDNN_CUDA_MATMUL_WGMMA_CONFIGS(CONFIG)
#undef CONFIG
#define CONFIG(tm, tn, stages) {tm, tn, CDNN_CUDA_MATMUL_WGMMA_THREADS, CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages), 1, 2, 0},
    CDNN_CUDA_MATMUL_WGMMA_C2_CONFIGS(CONFIG)
#undef CONFIG
#define CONFIG(tm, tn, stages, slots) {tm, tn, CDNN_CUDA_MATMUL_WGMMA_THREADS, CDNN_CUDA_MATMUL_WGMMA_STORE_SMEM(tm, tn, stages, slots), 1, 0, 1},
    CDNN_CUDA_MATMUL_WGMMA_STORE_CONFIGS(CONFIG)
#undef CONFIG
};

/* modules[0]: matmul_tc; modules[1]: matmul_wgmma, or NULL off sm_90.
 * With epilogue, bias + gelu are fused and only the wgmma kernels run. */
static void bench_shape(const gpu_t *gpu, sdk_cu_module modules[2], int32_t type,
                        const shape_t *s, int epilogue, int reps, rng_t *rng) {
    operands_t o = operands_make(gpu, type, s, rng);
    if (epilogue)
        operands_add_bias(gpu, &o, s, rng);
    cdnn_cuda_matmul_params_t p = {
        .batch = 1, .m = s->m, .n = s->n, .k = s->k,
        .a = (const void *)(uintptr_t)o.da, .a_row_stride = s->k, .a_col_stride = 1,
        .b = (const void *)(uintptr_t)o.db, .b_row_stride = s->n, .b_col_stride = 1,
        .c = (void *)(uintptr_t)o.dc, .c_row_stride = s->n, .c_col_stride = 1,
        .a_type = type, .b_type = type, .c_type = type, .bias_type = type, .res_type = type};
    if (epilogue) {
        p.bias = (const void *)(uintptr_t)o.dbias, p.bias_stride = 1;
        p.activation = CDNN_CUDA_ACT_GELU;
    }
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; ++c) {
        if (configs[c].tma ? !modules[1] : epilogue)
            continue;
        char symbol[64];
        snprintf(symbol, sizeof symbol, "cdnn_cuda_matmul_%s%s_%dx%d",
                 configs[c].cluster ? "wgmma_c2_"
                 : configs[c].store ? "wgmma_store_"
                 : configs[c].tma   ? "wgmma_"
                                    : "",
                 type_name(type), configs[c].tile_m, configs[c].tile_n);
        sdk_cu_function fn = gpu_function(gpu, modules[configs[c].tma], symbol);
        /* the store kernels' params; the other wgmma kernels take t.tma */
        cdnn_cuda_matmul_tma_store_params_t t = {.tma.matmul = p};
        if (configs[c].tma) {
            gpu_check(gpu, gpu->cu->func_set_attribute(fn, GPU_FUNC_MAX_DYNAMIC_SHARED, (int)configs[c].smem),
                      "cuFuncSetAttribute");
            gpu_check(gpu,
                      configs[c].store
                          ? cdnn_cuda_matmul_tma_store_encode(&t, configs[c].tile_m, configs[c].tile_n,
                                                              gpu->cu->tensor_map_encode_tiled)
                          : cdnn_cuda_matmul_tma_encode(&t.tma, configs[c].tile_m, configs[c].tile_n,
                                                        gpu->cu->tensor_map_encode_tiled),
                      "cuTensorMapEncodeTiled");
        }
        unsigned grid_x = (unsigned)((s->n + configs[c].tile_n - 1) / configs[c].tile_n);
        unsigned grid_y = (unsigned)((s->m + configs[c].tile_m - 1) / configs[c].tile_m);
        if (configs[c].tma) { /* persistent: a block per multiprocessor */
            int sms = 0;
            gpu_check(gpu, gpu->cu->device_get_attribute(&sms, 16, gpu->device),
                      "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
            /* clusters: as many as fit, each over `cluster` tiles' rows */
            const unsigned cl = configs[c].cluster > 1 ? (unsigned)configs[c].cluster : 1;
            grid_y = (grid_y + cl - 1) / cl;
            grid_x = cl * (grid_x * grid_y < (unsigned)sms / cl ? grid_x * grid_y : (unsigned)sms / cl);
            grid_y = 1;
        }
        gpu_upload(gpu, o.dc, o.poison, (size_t)(s->m * s->n) * 2); /* no stale result */
        const double ms = time_kernel(gpu, fn, grid_x, grid_y, (unsigned)configs[c].threads,
                                     configs[c].smem, &t, reps);
        const double tflops = 2.0 * (double)s->m * (double)s->n * (double)s->k / (ms * 1e-3) / 1e12;
        printf("cdnn %s%s %lld %lld %lld %s %.4f %.1f %.3f\n", type_name(type),
               epilogue ? "+bias+gelu" : "", (long long)s->m, (long long)s->n, (long long)s->k,
               symbol + strlen("cdnn_cuda_matmul_"), ms, tflops, spot_check(gpu, &o, s, rng));
        fflush(stdout);
    }
    operands_free(gpu, &o);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CODE_OBJECT_DIR [REPS]\n", argv[0]);
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 15;
    reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
    gpu_t gpu;
    const int status = gpu_open(&gpu);
    if (status)
        return status;
    char paths[2][512];
    gpu_code_objects(&gpu, argv[1], "matmul_tc", paths); /* the cubin first (PTX if none) */
    sdk_cu_module modules[2] = {gpu_load_module(&gpu, paths[0]), NULL};
    fprintf(stderr, "device %s, code object %s\n", gpu.name, paths[0]);
    if (gpu.major == 9 && gpu.minor == 0) { /* the Hopper kernels: an sm_90a cubin alone */
        gpu_code_objects(&gpu, argv[1], "matmul_wgmma", paths);
        modules[1] = gpu_load_module(&gpu, paths[0]);
        fprintf(stderr, "code object %s\n", paths[0]);
    }
    rng_t rng = {0x243F6A8885A308D3ULL};
    for (int t = 0; t < 2; ++t)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
            bench_shape(&gpu, modules, t ? CDNN_CUDA_F16 : CDNN_CUDA_BF16, &shapes[s], 0, reps, &rng);
    if (modules[1])
        bench_shape(&gpu, modules, CDNN_CUDA_BF16, &shapes[1], 1, reps, &rng);
    for (int m = 0; m < 2; ++m)
        if (modules[m])
            gpu.cu->module_unload(modules[m]);
    gpu_close(&gpu);
    return 0;
}
