/*
 * bench_gpu_sdpa.c -- cdnn's Hopper flash-attention kernels (sdpa_wgmma.cu)
 * on the GPU, timed with device events.
 *
 *   bench_gpu_sdpa CODE_OBJECT_DIR [REPS]
 *
 * B8 H16 S4096 (q_len = kv_len), BHSD-packed, scale 1/sqrt(D), at bf16 D128,
 * D64 and f16 D128, causal (top-left) and not: the tensor maps encoded once
 * per case, outside the timing; the median of REPS (default 20) samples of
 * launches back to back (bench/gpu/event_timing.h).  Inputs are
 * random in [-2, 2) for q and k, [-1, 1) for v (never zeros).  8 sampled
 * query rows of each output are checked against f64 (tolerance as
 * tests/cuda_kernels/test_sdpa.c's: 2 eps(type) + eps(type) |ref| + 2^-16).
 * FLOPs: 4 B H S^2 D, half that causal (what PyTorch's benchmarks count).
 * One line per case on stdout, for bench/gpu/sdpa.py:
 *   cdnn DTYPE B H S D CAUSAL KERNEL MEDIAN_MS TFLOPS WORST_ERR_OVER_TOL
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/numeric.h>

#include "../../tests/cuda_kernels/gpu.h"
#include "event_timing.h"
#include "cuda_kernel.h"
#include "sdpa_tma.h"

enum { B = 8, H = 16, S = 4096, DMAX = 128 };

typedef struct bench_case {
    int32_t type;
    int d, causal;
} bench_case_t;

static const bench_case_t cases[] = {
    {CDNN_CUDA_BF16, 128, 0}, {CDNN_CUDA_BF16, 128, 1}, {CDNN_CUDA_BF16, 64, 0},
    {CDNN_CUDA_BF16, 64, 1},  {CDNN_CUDA_F16, 128, 0},  {CDNN_CUDA_F16, 128, 1},
};

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* count values uniform in [-scale, scale) of type, as halves: drawn from
 * a table of 4096 such values by 12 random bits each (the host's time is
 * the device's here: a conversion per element would cost seconds). */
static uint16_t *random_halves(int32_t type, size_t count, double scale, uint64_t *rng) {
    uint16_t table[4096];
    for (int i = 0; i < 4096; ++i) {
        const float x = (float)(scale * ((double)(next(rng) >> 11) * 0x1p-52 - 1.0));
        table[i] = type == CDNN_CUDA_BF16 ? cdnn_float_to_bf16(x) : cdnn_float_to_half(x);
    }
    uint16_t *v = malloc(count * 2);
    if (!v) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    for (size_t i = 0; i + 4 <= count; i += 4) {
        const uint64_t r = next(rng);
        for (int e = 0; e < 4; ++e)
            v[i + e] = table[(r >> (12 * e)) & 4095];
    }
    return v;
}

/* One dtype's inputs, on host and device, B H S DMAX elements each; a
 * case of head dim D reads the first B H S D of them. */
typedef struct inputs {
    int32_t type;
    uint16_t *q, *k, *v;
    sdk_cu_deviceptr dq, dk, dv, dout;
} inputs_t;

static double half_value(int32_t type, uint16_t v) {
    return type == CDNN_CUDA_BF16 ? cdnn_bf16_to_float(v) : cdnn_half_to_float(v);
}

/* Worst |out - ref| / tol over 8 sampled rows (all features). */
static double spot_check(const gpu_t *gpu, const bench_case_t *c, const uint16_t *q,
                         const uint16_t *k, const uint16_t *v, sdk_cu_deviceptr o) {
    const size_t n = (size_t)B * H * S * c->d;
    uint16_t *out = malloc(n * 2);
    double *p = malloc(S * sizeof *p);
    if (!out || !p)
        exit(1);
    gpu_download(gpu, out, o, n * 2);
    const double eps = c->type == CDNN_CUDA_BF16 ? 0x1p-9 : 0x1p-12;
    double worst = 0;
    for (int s = 0; s < 8; ++s) {
        /* the last sample in the last head: the kernel's last (short) L2 group */
        const size_t head = s == 7 ? B * H - 1 : (size_t)(s * 37) % (B * H);
        const size_t i = (size_t)(s * 1231 + 7) % S;
        const size_t base = head * S * c->d, keys = c->causal ? i + 1 : S;
        double max = -INFINITY, sum = 0;
        for (size_t j = 0; j < keys; ++j) {
            double dot = 0;
            for (int d = 0; d < c->d; ++d)
                dot += half_value(c->type, q[base + i * c->d + d]) *
                       half_value(c->type, k[base + j * c->d + d]);
            p[j] = dot / sqrt((double)c->d);
            max = fmax(max, p[j]);
        }
        for (size_t j = 0; j < keys; ++j)
            sum += p[j] = exp(p[j] - max);
        for (int d = 0; d < c->d; ++d) {
            double ref = 0;
            for (size_t j = 0; j < keys; ++j)
                ref += p[j] / sum * half_value(c->type, v[base + j * c->d + d]);
            const double got = half_value(c->type, out[base + i * c->d + d]);
            const double tol = 2 * eps + eps * fabs(ref) + 0x1p-16;
            worst = fmax(worst, isnan(got) ? INFINITY : fabs(got - ref) / tol);
        }
    }
    free(out);
    free(p);
    return worst;
}

static void bench_case(const gpu_t *gpu, sdk_cu_module module, const bench_case_t *c, int reps,
                       const inputs_t *in) {
    const uint16_t *q = in->q, *k = in->k, *v = in->v;
    const sdk_cu_deviceptr dq = in->dq, dk = in->dk, dv = in->dv, dout = in->dout;
    cdnn_cuda_sdpa_tma_params_t t;
    memset(&t, 0, sizeof t);
    cdnn_cuda_sdpa_params_t *p = &t.sdpa;
    const int64_t strides[4] = {(int64_t)H * S * c->d, (int64_t)S * c->d, c->d, 1};
    p->batch = B, p->heads = H, p->kv_heads = H, p->q_len = S, p->kv_len = S;
    p->head_dim = c->d, p->value_dim = c->d;
    p->q = (const void *)(uintptr_t)dq, p->k = (const void *)(uintptr_t)dk;
    p->v = (const void *)(uintptr_t)dv, p->o = (void *)(uintptr_t)dout;
    memcpy(p->q_strides, strides, sizeof strides);
    memcpy(p->k_strides, strides, sizeof strides);
    memcpy(p->v_strides, strides, sizeof strides);
    memcpy(p->o_strides, strides, sizeof strides);
    p->scale = (float)(1.0 / sqrt((double)c->d));
    p->causal = c->causal;
    p->q_type = p->k_type = p->v_type = p->o_type = c->type;
    const char *why = cdnn_cuda_sdpa_tma_refusal(p, c->type, c->d, 1);
    if (why) {
        fprintf(stderr, "refused: %s\n", why);
        exit(1);
    }
    gpu_check(gpu, cdnn_cuda_sdpa_tma_encode(&t, gpu->cu->tensor_map_encode_tiled),
              "cuTensorMapEncodeTiled");
    char symbol[64];
    const char *name = c->type == CDNN_CUDA_BF16 ? "bf16" : "f16";
    snprintf(symbol, sizeof symbol, "cdnn_cuda_sdpa_wgmma_%s_d%d", name, c->d);
    sdk_cu_function fn = gpu_function(gpu, module, symbol);
    const unsigned smem = (unsigned)CDNN_CUDA_SDPA_WGMMA_SMEM(c->d);
    gpu_check(gpu, gpu->cu->func_set_attribute(fn, GPU_FUNC_MAX_DYNAMIC_SHARED, (int)smem),
              "cuFuncSetAttribute");
    const unsigned blocks = (unsigned)cdnn_cuda_sdpa_wgmma_blocks(p);
    gpu_launch_args_t launch = {gpu, fn, blocks, 1, CDNN_CUDA_SDPA_WGMMA_THREADS, smem, &t};
    for (int w = 0; w < 3; ++w)
        gpu_launch_run(&launch);
    gpu_sync(gpu);
    const double worst = spot_check(gpu, c, q, k, v, dout);
    const double ms = bench_time_events(gpu->cu, gpu_launch_run, &launch, reps).stream_ms;
    const double flops = (c->causal ? 2.0 : 4.0) * B * H * (double)S * S * c->d;
    printf("cdnn %s %d %d %d %d %d %s %.4f %.1f %.3g\n", name, B, H, S, c->d, c->causal, symbol,
           ms, flops / (ms * 1e-3) / 1e12, worst);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CODE_OBJECT_DIR [REPS]\n", argv[0]);
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
    gpu_t gpu;
    const int status = gpu_open(&gpu);
    if (status)
        return status;
    if (gpu.major != 9 || gpu.minor != 0) {
        fprintf(stderr, "bench_gpu_sdpa: the flash-attention kernels are sm_90a only\n");
        gpu_close(&gpu);
        return 77;
    }
    char paths[2][512];
    gpu_code_objects(&gpu, argv[1], "sdpa_wgmma", paths);
    sdk_cu_module module = gpu_load_module(&gpu, paths[0]);
    fprintf(stderr, "device %s, code object %s\n", gpu.name, paths[0]);
    uint64_t rng = 0x243F6A8885A308D3ULL;
    const size_t n = (size_t)B * H * S * DMAX;
    inputs_t in = {.dq = gpu_alloc(&gpu, n * 2), .dk = gpu_alloc(&gpu, n * 2),
                   .dv = gpu_alloc(&gpu, n * 2), .dout = gpu_alloc(&gpu, n * 2)};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        if (!in.q || in.type != cases[i].type) {
            free(in.q), free(in.k), free(in.v);
            in.type = cases[i].type;
            in.q = random_halves(in.type, n, 2, &rng);
            in.k = random_halves(in.type, n, 2, &rng);
            in.v = random_halves(in.type, n, 1, &rng);
            gpu_upload(&gpu, in.dq, in.q, n * 2);
            gpu_upload(&gpu, in.dk, in.k, n * 2);
            gpu_upload(&gpu, in.dv, in.v, n * 2);
        }
        bench_case(&gpu, module, &cases[i], reps, &in);
    }
    free(in.q), free(in.k), free(in.v);
    gpu_free(&gpu, in.dq), gpu_free(&gpu, in.dk), gpu_free(&gpu, in.dv), gpu_free(&gpu, in.dout);
    gpu.cu->module_unload(module);
    gpu_close(&gpu);
    return 0;
}
