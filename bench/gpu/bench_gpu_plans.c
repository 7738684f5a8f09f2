/*
 * bench_gpu_plans.c -- cdnn plans on cuda:0 as a user runs them: built
 * through the public API with benchmarking (so the plan runs the candidate
 * that device timing chose), tensors from cdnn_memory_alloc, executions
 * timed between CUDA events on the handle's stream.  Each output is checked
 * on sampled rows or elements against an f64 computation here.
 *
 *   bench_gpu_plans [REPS]
 *
 * One line per case, for bench/gpu/plans.py to put next to PyTorch:
 *   plan OP SHAPE ENGINE MS RATE UNIT ERR
 * RATE is GB/s of compulsory traffic (each input read once, each output
 * written once) or TFLOP/s; ERR is the worst |got - ref| / tolerance over
 * the samples (<= 1 passes).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn/cdnn.h>
#include <cdnn_sdk/cuda.h>
#include <cdnn_sdk/numeric.h>

#include "bench_common.h"

enum { MAX_IO = 8, SAMPLES = 64, WARMUP = 3 };

typedef enum op { OP_LAYERNORM, OP_RMSNORM, OP_ADD_RELU, OP_MATMUL_BIAS_GELU } op_t;

typedef struct bench_case {
    op_t op;
    const char *name;
    int64_t rows, cols, inner; /* matmul: m, n, k */
} bench_case_t;

static const bench_case_t cases[] = {
    {OP_LAYERNORM, "layernorm", 16384, 4096, 0},
    {OP_LAYERNORM, "layernorm", 32768, 8192, 0},
    {OP_RMSNORM, "rmsnorm", 16384, 4096, 0},
    {OP_RMSNORM, "rmsnorm", 32768, 8192, 0},
    {OP_ADD_RELU, "add_relu", 16384, 4096, 0},
    {OP_ADD_RELU, "add_relu", 32768, 8192, 0},
    {OP_MATMUL_BIAS_GELU, "matmul_bias_gelu", 8192, 8192, 8192},
};

static const double EPSILON = 1e-5;

/* ---- graphs (bf16 in and out, f32 inside); uid 9 is the output ---------- */

static void tensor(cdnn_graph_t *g, int64_t uid, int rank, const int64_t *dims)
{
    CHECK(cdnn_graph_tensor(g, uid, NULL, CDNN_DATA_TYPE_BF16, rank, dims, NULL));
}

static void virtual_f32(cdnn_graph_t *g, int64_t uid)
{
    CHECK(cdnn_graph_tensor(g, uid, NULL, CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    CHECK(cdnn_graph_tensor_set_virtual(g, uid));
}

static cdnn_graph_t *make_graph(const bench_case_t *c)
{
    cdnn_graph_t *g = NULL;
    CHECK(cdnn_graph_create(&g));
    const int64_t x[] = {c->rows, c->cols}, row[] = {1, c->cols};
    cdnn_pointwise_attr_t add, act;
    cdnn_pointwise_attr_init(&add, CDNN_PW_ADD);
    switch (c->op) {
    case OP_LAYERNORM:
    case OP_RMSNORM:
        tensor(g, 1, 2, x);
        tensor(g, 2, 2, row);
        tensor(g, 9, 2, x);
        if (c->op == OP_LAYERNORM) {
            tensor(g, 3, 2, row);
            CHECK(cdnn_graph_layernorm(g, "ln", EPSILON, 1, 2, 3, 9, CDNN_UID_NONE,
                                       CDNN_UID_NONE));
        } else {
            CHECK(cdnn_graph_rmsnorm(g, "rms", EPSILON, 1, 2, CDNN_UID_NONE, 9,
                                     CDNN_UID_NONE));
        }
        break;
    case OP_ADD_RELU:
        cdnn_pointwise_attr_init(&act, CDNN_PW_RELU_FWD);
        tensor(g, 1, 2, x);
        tensor(g, 2, 2, x);
        virtual_f32(g, 3);
        tensor(g, 9, 2, x);
        CHECK(cdnn_graph_pointwise(g, "add", &add, 1, 2, CDNN_UID_NONE, 3));
        CHECK(cdnn_graph_pointwise(g, "relu", &act, 3, CDNN_UID_NONE, CDNN_UID_NONE, 9));
        break;
    case OP_MATMUL_BIAS_GELU: {
        const int64_t a[] = {1, c->rows, c->inner}, b[] = {1, c->inner, c->cols},
                      bias[] = {1, 1, c->cols}, y[] = {1, c->rows, c->cols};
        cdnn_pointwise_attr_init(&act, CDNN_PW_GELU_FWD);
        tensor(g, 1, 3, a);
        tensor(g, 2, 3, b);
        tensor(g, 3, 3, bias);
        virtual_f32(g, 4);
        virtual_f32(g, 5);
        tensor(g, 9, 3, y);
        CHECK(cdnn_graph_matmul(g, "mm", 1, 2, 4));
        CHECK(cdnn_graph_pointwise(g, "bias", &add, 4, 3, CDNN_UID_NONE, 5));
        CHECK(cdnn_graph_pointwise(g, "gelu", &act, 5, CDNN_UID_NONE, CDNN_UID_NONE, 9));
        break;
    }
    }
    CHECK(cdnn_graph_validate(g));
    return g;
}

/* ---- tensors ----------------------------------------------------------- */

typedef struct io {
    int32_t count;
    cdnn_tensor_io_t info[MAX_IO];
    int64_t uids[MAX_IO];
    void *device[MAX_IO];
    uint16_t *host[MAX_IO]; /* bf16 */
} io_t;

static uint16_t *host_of(io_t *t, int64_t uid)
{
    for (int32_t i = 0; i < t->count; i++)
        if (t->uids[i] == uid)
            return t->host[i];
    fprintf(stderr, "bench_gpu_plans: the plan has no tensor %lld\n", (long long)uid);
    exit(1);
}

/* Inputs uniform in [-1, 1) (scales near 1, so that norms stay tame). */
static void fill(uint16_t *p, size_t n, uint32_t seed, int near_one)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        float u = (float)(seed >> 8) * 0x1p-23f - 1.0f;
        p[i] = cdnn_float_to_bf16(near_one ? 1.0f + 0.25f * u : u);
    }
}

static void alloc_io(cdnn_handle_t *h, const cdnn_graph_t *g, const bench_case_t *c, io_t *t)
{
    memset(t, 0, sizeof *t);
    CHECK(cdnn_graph_io_tensors(g, t->info, MAX_IO, &t->count));
    for (int32_t i = 0; i < t->count; i++) {
        size_t bytes = t->info[i].span_bytes;
        t->uids[i] = t->info[i].uid;
        t->host[i] = xcalloc(bytes / 2, 2);
        CHECK(cdnn_memory_alloc(h, bytes, &t->device[i]));
        if (t->info[i].is_output)
            continue;
        int scale = (c->op == OP_LAYERNORM || c->op == OP_RMSNORM) && t->uids[i] == 2;
        fill(t->host[i], bytes / 2, 77u * (uint32_t)t->uids[i] + 1u, scale);
        CHECK(cdnn_memory_upload(h, t->device[i], t->host[i], bytes));
    }
}

static void free_io(cdnn_handle_t *h, io_t *t)
{
    for (int32_t i = 0; i < t->count; i++) {
        cdnn_memory_free(h, t->device[i]);
        free(t->host[i]);
    }
}

/* ---- references (f64) -------------------------------------------------- */

static double bf(const uint16_t *p, size_t i)
{
    return cdnn_bf16_to_float(p[i]);
}

/* bf16 keeps 8 significant bits: two units in its last place of the
 * larger of the value and 1, plus what f32 accumulation may add. */
static double tolerance(double ref)
{
    return 0x1p-7 * fmax(fabs(ref), 1.0);
}

static double check_norm(const bench_case_t *c, io_t *t, int rms)
{
    const uint16_t *x = host_of(t, 1), *scale = host_of(t, 2), *y = host_of(t, 9);
    const uint16_t *bias = rms ? NULL : host_of(t, 3);
    double worst = 0;
    for (int s = 0; s < SAMPLES; s++) {
        size_t r = (size_t)((uint64_t)s * 2654435761u % (uint64_t)c->rows), n = (size_t)c->cols;
        double mean = 0, sq = 0;
        for (size_t j = 0; j < n; j++)
            mean += bf(x, r * n + j) / (double)n;
        for (size_t j = 0; j < n; j++) {
            double d = bf(x, r * n + j) - (rms ? 0 : mean);
            sq += d * d / (double)n;
        }
        double inv = 1 / sqrt(sq + EPSILON);
        for (size_t j = 0; j < n; j++) {
            double ref = (bf(x, r * n + j) - (rms ? 0 : mean)) * inv * bf(scale, j) +
                         (rms ? 0 : bf(bias, j));
            worst = fmax(worst, fabs(bf(y, r * n + j) - ref) / tolerance(ref));
        }
    }
    return worst;
}

static double check_add_relu(const bench_case_t *c, io_t *t)
{
    const uint16_t *a = host_of(t, 1), *b = host_of(t, 2), *y = host_of(t, 9);
    size_t n = (size_t)(c->rows * c->cols);
    double worst = 0;
    for (int s = 0; s < 4096; s++) {
        size_t i = (size_t)((uint64_t)s * 2654435761u % n);
        double ref = fmax(bf(a, i) + bf(b, i), 0);
        worst = fmax(worst, fabs(bf(y, i) - ref) / tolerance(ref));
    }
    return worst;
}

static double check_matmul(const bench_case_t *c, io_t *t)
{
    const uint16_t *a = host_of(t, 1), *b = host_of(t, 2), *bias = host_of(t, 3),
                   *y = host_of(t, 9);
    size_t m = (size_t)c->rows, n = (size_t)c->cols, k = (size_t)c->inner;
    double worst = 0;
    for (int s = 0; s < 256; s++) {
        size_t i = (size_t)((uint64_t)s * 2654435761u % m),
               j = (size_t)((uint64_t)s * 40503u % n);
        double acc = bf(bias, j);
        for (size_t p = 0; p < k; p++)
            acc += bf(a, i * k + p) * bf(b, p * n + j);
        double ref = 0.5 * acc * (1 + erf(acc / sqrt(2.0)));
        worst = fmax(worst, fabs(bf(y, i * n + j) - ref) / tolerance(ref));
    }
    return worst;
}

/* ---- timing ------------------------------------------------------------ */

/* The driver, with device 0's primary context -- the one a cuda:0 handle
 * runs in -- current on this thread, so that events are made in it. */
static const sdk_cuda_t *driver(void)
{
    static const sdk_cuda_t *cu;
    if (cu)
        return cu;
    const char *why = NULL;
    sdk_cu_device device;
    sdk_cu_context context;
    cu = sdk_cuda(&why);
    if (!cu || cu->device_get(&device, 0) || cu->primary_ctx_retain(&context, device) ||
        cu->ctx_set_current(context)) {
        fprintf(stderr, "bench_gpu_plans: no CUDA context for device 0: %s\n",
                why ? why : "the driver refused");
        exit(1);
    }
    return cu;
}

static void execute(const cdnn_graph_t *g, cdnn_handle_t *h, io_t *t, void *ws)
{
    CHECK(cdnn_graph_execute(g, h, t->count, t->uids, t->device, ws));
}

/* The median over reps executions, each between two events on the
 * handle's stream (the default one), after WARMUP untimed ones. */
static double time_plan(const cdnn_graph_t *g, cdnn_handle_t *h, io_t *t, void *ws, int reps)
{
    const sdk_cuda_t *cu = driver();
    sdk_cu_event start, stop;
    if (cu->event_create(&start, 0) || cu->event_create(&stop, 0)) {
        fprintf(stderr, "bench_gpu_plans: cuEventCreate failed\n");
        exit(1);
    }
    for (int i = 0; i < WARMUP; i++)
        execute(g, h, t, ws);
    double *ms = xcalloc((size_t)reps, sizeof *ms);
    for (int i = 0; i < reps; i++) {
        float elapsed = 0;
        cu->event_record(start, NULL);
        execute(g, h, t, ws);
        cu->event_record(stop, NULL);
        if (cu->event_synchronize(stop) || cu->event_elapsed_time(&elapsed, start, stop)) {
            fprintf(stderr, "bench_gpu_plans: timing with events failed\n");
            exit(1);
        }
        ms[i] = elapsed;
    }
    double result = median(ms, reps);
    free(ms);
    cu->event_destroy(start);
    cu->event_destroy(stop);
    return result;
}

/* The candidate benchmarking chose, in one word: "engine" for its
 * defaults, "engine#N" for knob value N ("kernels:norm_cuda#3"). */
static void chosen_candidate(const cdnn_graph_t *g, char *out, size_t cap)
{
    cdnn_candidate_result_t r[64];
    int32_t count = 0, chosen = -1;
    CHECK(cdnn_graph_candidates(g, r, 64, &count, &chosen));
    if (chosen < 0 || chosen >= 64) {
        snprintf(out, cap, "?");
        return;
    }
    const char *space = strchr(r[chosen].name, ' '), *value = strrchr(r[chosen].name, '=');
    int engine_length = space ? (int)(space - r[chosen].name) : (int)strlen(r[chosen].name);
    if (value)
        snprintf(out, cap, "%.*s#%d", engine_length, r[chosen].name, atoi(value + 1));
    else
        snprintf(out, cap, "%.*s", engine_length, r[chosen].name);
}

static void run_case(cdnn_handle_t *h, const bench_case_t *c, int reps)
{
    cdnn_graph_t *g = make_graph(c);
    cdnn_build_options_t *opts = NULL;
    CHECK(cdnn_build_options_create(&opts));
    CHECK(cdnn_build_options_set_knob(opts, "global.benchmarking", 1));
    CHECK(cdnn_graph_build(g, h, opts));
    cdnn_build_options_destroy(opts);
    io_t t;
    alloc_io(h, g, c, &t);
    /* Until it has chosen, a benchmarking plan needs the workspace of its
     * hungriest candidate; that covers the winner's after. */
    size_t ws_bytes = 0;
    void *ws = NULL;
    CHECK(cdnn_graph_workspace_size(g, &ws_bytes));
    if (ws_bytes)
        CHECK(cdnn_memory_alloc(h, ws_bytes, &ws));
    execute(g, h, &t, ws); /* benchmarking chooses here */
    CHECK(cdnn_handle_synchronize(h));
    double ms = time_plan(g, h, &t, ws, reps);
    for (int32_t i = 0; i < t.count; i++)
        if (t.info[i].is_output)
            CHECK(cdnn_memory_download(h, t.host[i], t.device[i], t.info[i].span_bytes));
    double err = c->op == OP_LAYERNORM           ? check_norm(c, &t, 0)
                 : c->op == OP_RMSNORM           ? check_norm(c, &t, 1)
                 : c->op == OP_ADD_RELU          ? check_add_relu(c, &t)
                                                 : check_matmul(c, &t);
    double bytes = 0;
    for (int32_t i = 0; i < t.count; i++)
        bytes += (double)t.info[i].span_bytes;
    char engine[128];
    chosen_candidate(g, engine, sizeof engine);
    char shape[64];
    if (c->op == OP_MATMUL_BIAS_GELU)
        snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)c->rows,
                 (long long)c->cols, (long long)c->inner);
    else
        snprintf(shape, sizeof shape, "%lldx%lld", (long long)c->rows, (long long)c->cols);
    if (c->op == OP_MATMUL_BIAS_GELU)
        printf("plan %s %s %s %.4f %.1f TFLOP/s %.3f\n", c->name, shape, engine, ms,
               2.0 * (double)c->rows * (double)c->cols * (double)c->inner / ms * 1e-9, err);
    else
        printf("plan %s %s %s %.4f %.1f GB/s %.3f\n", c->name, shape, engine, ms,
               bytes / ms * 1e-6, err);
    fflush(stdout);
    cdnn_memory_free(h, ws);
    free_io(h, &t);
    cdnn_graph_destroy(g);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    if (reps < 1 || reps > 10000) {
        fprintf(stderr, "usage: bench_gpu_plans [REPS (1-10000)]\n");
        return 2;
    }
    /* Each case is timed afresh: a recorded winner would skip the timing
     * that picks the candidate this bench reports. */
    setenv("CDNN_DISABLE_CACHE", "1", 1);
    cdnn_handle_t *h = NULL;
    CHECK(cdnn_handle_create(&h, "cuda:0"));
    printf("# %s\n", cdnn_handle_device_description(h));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(h, &cases[i], reps);
    cdnn_handle_destroy(h);
    return 0;
}
