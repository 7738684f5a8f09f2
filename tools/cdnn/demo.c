/*
 * demo.c -- `cdnn demo`: build two fused graphs (conv -> bias -> relu and
 * matmul -> bias -> gelu), run them with the best engine, and check them
 * against cpu:reference.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char demo_help[] =
    "usage: cdnn demo [--device DEVICE]\n"
    "\n"
    "Build a conv -> bias -> relu graph and a matmul -> bias -> gelu graph,\n"
    "run each with the engine cdnn picks, run it again pinned to\n"
    "cpu:reference, and print the engine used and the largest error.  The\n"
    "device is the best available (cuda:0 when an engine there applies, else\n"
    "cpu) unless --device names one.  Exit 1 if an error is over tolerance.\n";

enum { MAX_TENSORS = 8 };

/* A demo graph: how to build it and the uids of its real tensors. */
typedef struct demo {
    const char *name;
    cdnn_status_t (*build)(cdnn_graph_t *g);
    int64_t uids[MAX_TENSORS];
    int32_t count;  /* real tensors; the last is the output */
} demo_t;

static cdnn_status_t conv_bias_relu(cdnn_graph_t *g)
{
    const int64_t x[] = {2, 8, 16, 16}, w[] = {16, 8, 3, 3}, b[] = {1, 16, 1, 1};
    cdnn_conv_attr_t conv;
    cdnn_conv_attr_init(&conv, 2);
    conv.pre_padding[0] = conv.pre_padding[1] = 1;
    conv.post_padding[0] = conv.post_padding[1] = 1;
    cdnn_pointwise_attr_t add, relu;
    cdnn_pointwise_attr_init(&add, CDNN_PW_ADD);
    cdnn_pointwise_attr_init(&relu, CDNN_PW_RELU_FWD);
    cdnn_status_t st;
    if ((st = cdnn_graph_set_name(g, "conv_bias_relu")) ||
        (st = cdnn_graph_tensor(g, 1, "x", CDNN_DATA_TYPE_F32, 4, x, NULL)) ||
        (st = cdnn_graph_tensor(g, 2, "w", CDNN_DATA_TYPE_F32, 4, w, NULL)) ||
        (st = cdnn_graph_tensor(g, 3, "bias", CDNN_DATA_TYPE_F32, 4, b, NULL)) ||
        (st = cdnn_graph_tensor(g, 4, "conv_out", CDNN_DATA_TYPE_F32, 0, NULL, NULL)) ||
        (st = cdnn_graph_tensor(g, 5, "biased", CDNN_DATA_TYPE_F32, 0, NULL, NULL)) ||
        (st = cdnn_graph_tensor(g, 6, "y", CDNN_DATA_TYPE_F32, 0, NULL, NULL)) ||
        (st = cdnn_graph_tensor_set_virtual(g, 4)) ||
        (st = cdnn_graph_tensor_set_virtual(g, 5)) ||
        (st = cdnn_graph_conv_fwd(g, "conv", &conv, 1, 2, 4)) ||
        (st = cdnn_graph_pointwise(g, "bias", &add, 4, 3, CDNN_UID_NONE, 5)) ||
        (st = cdnn_graph_pointwise(g, "relu", &relu, 5, CDNN_UID_NONE, CDNN_UID_NONE, 6)))
        return st;
    return cdnn_graph_validate(g);
}

static cdnn_status_t matmul_bias_gelu(cdnn_graph_t *g)
{
    const int64_t a[] = {4, 64, 128}, b[] = {4, 128, 96}, bias[] = {1, 1, 96};
    cdnn_pointwise_attr_t add, gelu;
    cdnn_pointwise_attr_init(&add, CDNN_PW_ADD);
    cdnn_pointwise_attr_init(&gelu, CDNN_PW_GELU_FWD);
    cdnn_status_t st;
    if ((st = cdnn_graph_set_name(g, "matmul_bias_gelu")) ||
        (st = cdnn_graph_tensor(g, 1, "a", CDNN_DATA_TYPE_F32, 3, a, NULL)) ||
        (st = cdnn_graph_tensor(g, 2, "b", CDNN_DATA_TYPE_F32, 3, b, NULL)) ||
        (st = cdnn_graph_tensor(g, 3, "bias", CDNN_DATA_TYPE_F32, 3, bias, NULL)) ||
        (st = cdnn_graph_tensor(g, 4, "mm", CDNN_DATA_TYPE_F32, 0, NULL, NULL)) ||
        (st = cdnn_graph_tensor(g, 5, "biased", CDNN_DATA_TYPE_F32, 0, NULL, NULL)) ||
        (st = cdnn_graph_tensor(g, 6, "y", CDNN_DATA_TYPE_F32, 0, NULL, NULL)) ||
        (st = cdnn_graph_tensor_set_virtual(g, 4)) ||
        (st = cdnn_graph_tensor_set_virtual(g, 5)) ||
        (st = cdnn_graph_matmul(g, "matmul", 1, 2, 4)) ||
        (st = cdnn_graph_pointwise(g, "bias", &add, 4, 3, CDNN_UID_NONE, 5)) ||
        (st = cdnn_graph_pointwise(g, "gelu", &gelu, 5, CDNN_UID_NONE, CDNN_UID_NONE, 6)))
        return st;
    return cdnn_graph_validate(g);
}

/* Host buffers for a demo's real tensors, the inputs filled at random. */
typedef struct buffers {
    float *data[MAX_TENSORS];
    size_t count[MAX_TENSORS];
} buffers_t;

static void free_buffers(buffers_t *b)
{
    for (int i = 0; i < MAX_TENSORS; i++)
        free(b->data[i]);
}

static cdnn_status_t alloc_buffers(cdnn_graph_t *g, const demo_t *d, buffers_t *b)
{
    uint32_t seed = 12345;
    memset(b, 0, sizeof *b);
    for (int32_t i = 0; i < d->count; i++) {
        int32_t rank;
        int64_t dims[CDNN_MAX_RANK];
        cdnn_status_t st = cdnn_graph_tensor_shape(g, d->uids[i], NULL, &rank, dims, NULL);
        if (st != CDNN_STATUS_SUCCESS)
            return st;
        size_t n = 1;
        for (int32_t k = 0; k < rank; k++)
            n *= (size_t)dims[k];
        b->count[i] = n;
        b->data[i] = malloc(n * sizeof(float));
        if (!b->data[i])
            return CDNN_STATUS_ALLOC_FAILED;
        for (size_t k = 0; k < n; k++) {
            seed = seed * 1664525u + 1013904223u;
            b->data[i][k] = (float)((seed >> 8) * 0x1p-24 * 2 - 1);
        }
    }
    return CDNN_STATUS_SUCCESS;
}

/* Build d on h (pinned to engine if nonzero) and run it on b. */
static cdnn_status_t run_demo(const demo_t *d, cdnn_handle_t *h, uint64_t engine,
                              buffers_t *b, const char **engine_name, size_t *ws_out)
{
    cdnn_graph_t *g = NULL;
    cdnn_build_options_t *opts = NULL;
    void *workspace = NULL;
    size_t ws = 0;
    cdnn_status_t st = cdnn_graph_create(&g);
    if (!st)
        st = d->build(g);
    if (!st && engine)
        st = cdnn_build_options_create(&opts);
    if (!st && engine)
        st = cdnn_build_options_pin_engine(opts, engine);
    if (!st)
        st = cdnn_graph_build(g, h, opts);
    if (!st)
        st = cdnn_graph_workspace_size(g, &ws);
    if (!st && ws && !(workspace = malloc(ws)))
        st = CDNN_STATUS_ALLOC_FAILED;
    if (!st)
        st = cdnn_graph_execute(g, h, d->count, d->uids, (void *const *)b->data, workspace);
    if (!st && engine_name) {
        const char *name;
        cdnn_graph_engine(g, NULL, &name);
        *engine_name = strdup(name);
        *ws_out = ws;
    }
    free(workspace);
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(g);
    return st;
}

/* The device to run on: the one asked for, else cuda:0 if an engine there
 * applies to every demo graph, else the CPU. */
static cdnn_status_t pick_device(const char *asked, const demo_t *demos, int n,
                                 cdnn_handle_t **h)
{
    if (asked)
        return cdnn_handle_create(h, asked);
    if (cdnn_handle_create(h, "cuda:0") != CDNN_STATUS_SUCCESS) {
        printf("cuda:0 is not available (%s); running on the CPU\n", cdnn_last_error());
        return cdnn_handle_create(h, "cpu");
    }
    for (int i = 0; i < n; i++) {
        cdnn_graph_t *g = NULL;
        int32_t count = 0;
        if (cdnn_graph_create(&g) || demos[i].build(g) ||
            cdnn_graph_applicable_engines(g, *h, NULL, 0, &count) || count == 0) {
            printf("cuda:0 is present but no engine there runs %s; running on the CPU\n",
                   demos[i].name);
            cdnn_graph_destroy(g);
            cdnn_handle_destroy(*h);
            return cdnn_handle_create(h, "cpu");
        }
        cdnn_graph_destroy(g);
    }
    return CDNN_STATUS_SUCCESS;
}

static double largest_error(const buffers_t *got, const buffers_t *want, int out,
                            double *scale)
{
    double err = 0;
    *scale = 0;
    for (size_t k = 0; k < want->count[out]; k++) {
        double e = fabs((double)got->data[out][k] - want->data[out][k]);
        err = e > err || isnan(e) ? e : err;
        *scale = fmax(*scale, fabs(want->data[out][k]));
    }
    return err;
}

static int check_demo(const demo_t *d, cdnn_handle_t *h, cdnn_handle_t *cpu)
{
    buffers_t fast, ref;
    const char *engine = NULL;
    size_t ws = 0;
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    cdnn_graph_t *shape_graph = NULL;
    if ((st = cdnn_graph_create(&shape_graph)) || (st = d->build(shape_graph)) ||
        (st = alloc_buffers(shape_graph, d, &fast)) ||
        (st = alloc_buffers(shape_graph, d, &ref)) ||
        (st = run_demo(d, h, 0, &fast, &engine, &ws)) ||
        (st = run_demo(d, cpu, cdnn_engine_id_from_name("cpu:reference"), &ref, NULL, NULL))) {
        cdnn_graph_destroy(shape_graph);
        return cli_report(d->name, st);
    }
    double scale;
    int out = d->count - 1;
    double err = largest_error(&fast, &ref, out, &scale);
    int ok = err <= 1e-4 * fmax(scale, 1);
    printf("%-18s engine %-20s on %-6s workspace %8zu B  max |err| %.3g "
           "(max |ref| %.3g) vs cpu:reference: %s\n",
           d->name, engine, cdnn_handle_device(h), ws, err, scale, ok ? "ok" : "MISMATCH");
    free((void *)engine);
    free_buffers(&fast);
    free_buffers(&ref);
    cdnn_graph_destroy(shape_graph);
    return ok ? EXIT_OK : EXIT_FAILED;
}

int cli_demo(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *device = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "d:h", longopts, NULL)) != -1) {
        if (c == 'd') {
            device = optarg;
        } else {
            return cli_usage(demo_help, c);
        }
    }
    if (optind != argc) {
        fputs(demo_help, stderr);
        return EXIT_USAGE;
    }
    const demo_t demos[] = {
        {"conv_bias_relu", conv_bias_relu, {1, 2, 3, 6}, 4},
        {"matmul_bias_gelu", matmul_bias_gelu, {1, 2, 3, 6}, 4},
    };
    cdnn_handle_t *h = NULL, *cpu = NULL;
    cdnn_status_t st = pick_device(device, demos, 2, &h);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_handle_create(&cpu, "cpu");
    if (st != CDNN_STATUS_SUCCESS) {
        cdnn_handle_destroy(h);
        return cli_report("demo", st);
    }
    int rc = EXIT_OK;
    for (int i = 0; i < 2; i++)
        if (check_demo(&demos[i], h, cpu) != EXIT_OK)
            rc = EXIT_FAILED;
    cdnn_handle_destroy(cpu);
    cdnn_handle_destroy(h);
    return rc;
}
