/*
 * bench_cpu.c -- times cdnn's fast CPU engines on common shapes.
 *
 * Each case builds one graph through the public API, runs it WARMUP times,
 * then times single executions until MIN_SECONDS have passed (at least
 * MIN_RUNS, at most MAX_RUNS) and reports the median.  Every case runs
 * once on the engine cdnn chooses as a user would get it (printed), and
 * again pinned to the kernel provider's host engine of its op
 * (kernels:matmul_host; kernels:conv_host, whose tensors are NHWC where
 * the first run's are PyTorch's NCHW), so that the host kernels appear next
 * to cpu:blas_* in the same run.  An engine that is not there (no kernel
 * pack installed) is said on stderr and skipped.  peers.py times the same
 * shapes in NumPy and PyTorch with the same method; run.sh puts them side
 * by side.
 *
 * Output, one line per case and engine, tab-separated:
 *   case  median_ms  gflops  engine  best_ms
 * (gflops at the median; best_ms the fastest single run).
 * Usage: bench_cpu [substring]   (only the cases whose name contains it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cdnn/cdnn.h>
#include <cdnn_sdk/numeric.h>

#include "bench_common.h"

#define WARMUP 2
#define MIN_RUNS 5
#define MAX_RUNS 200
#define MIN_SECONDS 1.0
#define MAX_TENSORS 8

typedef struct bench_graph {
    cdnn_graph_t *graph;
    int32_t count;
    int64_t uids[MAX_TENSORS];
    void *ptrs[MAX_TENSORS];
} bench_graph_t;

/* A real tensor of the graph with memory filled with small values, its
 * strides as given (NULL: packed, row-major). */
static void strided_tensor(bench_graph_t *b, int64_t uid, cdnn_data_type_t type,
                           int32_t rank, const int64_t *dims,
                           const int64_t *strides)
{
    size_t n = 1, size = cdnn_data_type_size(type);
    for (int32_t d = 0; d < rank; d++)
        n *= (size_t)dims[d];
    unsigned char *p = malloc(n * size);
    if (!p) {
        fprintf(stderr, "bench_cpu: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        cdnn_store_element(type, p + i * size,
                           (double)((i * 7919u) % 1000u) / 1000.0 - 0.5);
    CHECK(cdnn_graph_tensor(b->graph, uid, NULL, type, rank, dims, strides));
    b->uids[b->count] = uid;
    b->ptrs[b->count++] = p;
}

static void real_tensor(bench_graph_t *b, int64_t uid, cdnn_data_type_t type,
                        int32_t rank, const int64_t *dims)
{
    strided_tensor(b, uid, type, rank, dims, NULL);
}

static void virtual_tensor(bench_graph_t *b, int64_t uid)
{
    CHECK(cdnn_graph_tensor(b->graph, uid, NULL, CDNN_DATA_TYPE_F32, 0, NULL,
                            NULL));
    CHECK(cdnn_graph_tensor_set_virtual(b->graph, uid));
}

static void free_graph(bench_graph_t *b)
{
    for (int32_t i = 0; i < b->count; i++)
        free(b->ptrs[i]);
    cdnn_graph_destroy(b->graph);
}

/* Build on engine (NULL: cdnn's choice); 0 and a line on stderr where the
 * engine does not take the graph or is not installed. */
static int build(const char *name, bench_graph_t *b, const char *engine,
                 cdnn_handle_t *handle)
{
    cdnn_build_options_t *opts = NULL;
    CHECK(cdnn_build_options_create(&opts));
    if (engine)
        CHECK(cdnn_build_options_pin_engine(opts,
                                            cdnn_engine_id_from_name(engine)));
    cdnn_status_t st = cdnn_graph_build(b->graph, handle, opts);
    cdnn_build_options_destroy(opts);
    if (st == CDNN_STATUS_SUCCESS)
        return 1;
    if (!engine)
        die("cdnn_graph_build", st);
    fprintf(stderr, "bench_cpu: %s: %s skipped: %s\n", name, engine,
            cdnn_last_error());
    return 0;
}

/* Build, warm up, time; print the case's line and free everything. */
static void time_graph(const char *name, bench_graph_t *b, double flops,
                       const char *pinned, cdnn_handle_t *handle)
{
    if (!build(name, b, pinned, handle)) {
        free_graph(b);
        return;
    }
    size_t ws;
    const char *engine;
    uint64_t id;
    CHECK(cdnn_graph_workspace_size(b->graph, &ws));
    CHECK(cdnn_graph_engine(b->graph, &id, &engine));
    void *workspace = ws ? malloc(ws) : NULL;
    for (int i = 0; i < WARMUP; i++)
        CHECK(cdnn_graph_execute(b->graph, handle, b->count, b->uids,
                                 b->ptrs, workspace));
    double times[MAX_RUNS], start = now_seconds();
    int runs = 0;
    while (runs < MAX_RUNS &&
           (runs < MIN_RUNS || now_seconds() - start < MIN_SECONDS)) {
        double t0 = now_seconds();
        CHECK(cdnn_graph_execute(b->graph, handle, b->count, b->uids,
                                 b->ptrs, workspace));
        times[runs++] = now_seconds() - t0;
    }
    qsort(times, (size_t)runs, sizeof times[0], compare_doubles);
    double median = runs % 2 ? times[runs / 2]
                             : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
    printf("%s\t%.4f\t%.1f\t%s\t%.4f\n", name, median * 1e3,
           flops / median * 1e-9, engine, times[0] * 1e3);
    fflush(stdout);
    free(workspace);
    free_graph(b);
}

/* ---- cases ---- */

typedef struct mm_case {
    const char *name;
    int64_t batch_a, batch_b, m, n, k;
    int epilogue; /* + bias, gelu */
    cdnn_data_type_t type; /* of every real tensor */
} mm_case_t;

static void add_pointwise(bench_graph_t *b, cdnn_pointwise_mode_t mode,
                          int64_t x, int64_t y, int64_t out)
{
    cdnn_pointwise_attr_t attr;
    cdnn_pointwise_attr_init(&attr, mode);
    CHECK(cdnn_graph_pointwise(b->graph, cdnn_pointwise_mode_name(mode),
                               &attr, x, y, CDNN_UID_NONE, out));
}

static void bench_matmul(const mm_case_t *c, const char *engine,
                         cdnn_handle_t *handle)
{
    bench_graph_t b = {0};
    CHECK(cdnn_graph_create(&b.graph));
    int64_t batch = c->batch_a > c->batch_b ? c->batch_a : c->batch_b;
    int64_t ad[3] = {c->batch_a, c->m, c->k}, bd[3] = {c->batch_b, c->k, c->n};
    int64_t cd[3] = {batch, c->m, c->n}, bias[3] = {1, 1, c->n};
    real_tensor(&b, 1, c->type, 3, ad);
    real_tensor(&b, 2, c->type, 3, bd);
    if (!c->epilogue) {
        real_tensor(&b, 3, c->type, 3, cd);
        CHECK(cdnn_graph_matmul(b.graph, "mm", 1, 2, 3));
    } else {
        virtual_tensor(&b, 3);
        real_tensor(&b, 4, c->type, 3, bias);
        virtual_tensor(&b, 5);
        real_tensor(&b, 6, c->type, 3, cd);
        CHECK(cdnn_graph_matmul(b.graph, "mm", 1, 2, 3));
        add_pointwise(&b, CDNN_PW_ADD, 3, 4, 5);
        add_pointwise(&b, CDNN_PW_GELU_FWD, 5, CDNN_UID_NONE, 6);
    }
    time_graph(c->name, &b, 2.0 * (double)(batch * c->m * c->n * c->k), engine,
               handle);
}

typedef struct conv_case {
    const char *name;
    int64_t n, c, h, w, k, r, s, pad, stride;
    int epilogue; /* + bias, relu */
} conv_case_t;

/* [N|K, C, H, W] dims stored channels-last (NHWC, KRSC). */
static void nhwc_strides(const int64_t *d, int64_t *s)
{
    s[1] = 1;
    s[3] = d[1];
    s[2] = d[1] * d[3];
    s[0] = d[1] * d[2] * d[3];
}

/* On engine (NULL: cdnn's choice) with NCHW tensors, or NHWC ones when
 * nhwc is set. */
static void bench_conv(const conv_case_t *c, const char *engine, int nhwc,
                       cdnn_handle_t *handle)
{
    bench_graph_t b = {0};
    CHECK(cdnn_graph_create(&b.graph));
    cdnn_conv_attr_t attr;
    cdnn_conv_attr_init(&attr, 2);
    for (int d = 0; d < 2; d++) {
        attr.pre_padding[d] = attr.post_padding[d] = c->pad;
        attr.stride[d] = c->stride;
    }
    int64_t oh = (c->h + 2 * c->pad - c->r) / c->stride + 1;
    int64_t ow = (c->w + 2 * c->pad - c->s) / c->stride + 1;
    int64_t xd[4] = {c->n, c->c, c->h, c->w}, wd[4] = {c->k, c->c, c->r, c->s};
    int64_t yd[4] = {c->n, c->k, oh, ow}, bias[4] = {1, c->k, 1, 1};
    int64_t xs[4], fs[4], ys[4];
    nhwc_strides(xd, xs);
    nhwc_strides(wd, fs);
    nhwc_strides(yd, ys);
    strided_tensor(&b, 1, CDNN_DATA_TYPE_F32, 4, xd, nhwc ? xs : NULL);
    strided_tensor(&b, 2, CDNN_DATA_TYPE_F32, 4, wd, nhwc ? fs : NULL);
    if (!c->epilogue) {
        strided_tensor(&b, 3, CDNN_DATA_TYPE_F32, 4, yd, nhwc ? ys : NULL);
        CHECK(cdnn_graph_conv_fwd(b.graph, "conv", &attr, 1, 2, 3));
    } else {
        virtual_tensor(&b, 3);
        real_tensor(&b, 4, CDNN_DATA_TYPE_F32, 4, bias);
        virtual_tensor(&b, 5);
        strided_tensor(&b, 6, CDNN_DATA_TYPE_F32, 4, yd, nhwc ? ys : NULL);
        CHECK(cdnn_graph_conv_fwd(b.graph, "conv", &attr, 1, 2, 3));
        add_pointwise(&b, CDNN_PW_ADD, 3, 4, 5);
        add_pointwise(&b, CDNN_PW_RELU_FWD, 5, CDNN_UID_NONE, 6);
    }
    double flops = 2.0 * (double)(c->n * c->k * oh * ow * c->c * c->r * c->s);
    time_graph(c->name, &b, flops, engine, handle);
}

/* Keep the names in step with peers.py. */
static const mm_case_t mm_cases[] = {
    {"matmul 256x256x256", 1, 1, 256, 256, 256, 0, CDNN_DATA_TYPE_F32},
    {"matmul 1024x1024x1024", 1, 1, 1024, 1024, 1024, 0, CDNN_DATA_TYPE_F32},
    {"matmul 2048x2048x2048", 1, 1, 2048, 2048, 2048, 0, CDNN_DATA_TYPE_F32},
    {"matmul batched 64x[256x64]@[64x256]", 64, 64, 256, 256, 64, 0,
     CDNN_DATA_TYPE_F32},
    {"matmul [8x512x1024]@[1024x1024]", 8, 1, 512, 1024, 1024, 0,
     CDNN_DATA_TYPE_F32},
    {"matmul+bias+gelu 1024x1024x1024", 1, 1, 1024, 1024, 1024, 1,
     CDNN_DATA_TYPE_F32},
    {"matmul f16 512x512x512", 1, 1, 512, 512, 512, 0, CDNN_DATA_TYPE_F16},
    {"matmul bf16 512x512x512", 1, 1, 512, 512, 512, 0, CDNN_DATA_TYPE_BF16},
};

static const conv_case_t conv_cases[] = {
    {"conv 3x3 N8 C64 56x56 K64", 8, 64, 56, 56, 64, 3, 3, 1, 1, 0},
    {"conv 3x3 N8 C256 14x14 K256", 8, 256, 14, 14, 256, 3, 3, 1, 1, 0},
    {"conv 1x1 N8 C256 56x56 K64", 8, 256, 56, 56, 64, 1, 1, 0, 1, 0},
    {"conv 3x3 s2 N8 C128 28x28 K256", 8, 128, 28, 28, 256, 3, 3, 1, 2, 0},
    {"conv+bias+relu 3x3 N8 C64 56x56 K64", 8, 64, 56, 56, 64, 3, 3, 1, 1, 1},
};

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";
    cdnn_handle_t *handle;
    CHECK(cdnn_handle_create(&handle, "cpu"));
    for (size_t i = 0; i < sizeof mm_cases / sizeof mm_cases[0]; i++)
        if (strstr(mm_cases[i].name, only)) {
            bench_matmul(&mm_cases[i], NULL, handle);
            bench_matmul(&mm_cases[i], "kernels:matmul_host", handle);
        }
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++)
        if (strstr(conv_cases[i].name, only)) {
            bench_conv(&conv_cases[i], NULL, 0, handle);
            bench_conv(&conv_cases[i], "kernels:conv_host", 1, handle);
        }
    cdnn_handle_destroy(handle);
    return 0;
}
