/*
 * threads.c -- one built graph executed from 8 threads at once must give,
 * byte for byte, what a single execution gives; for every applicable
 * engine of a matmul (f32 and f16), a conv, a pointwise chain, a layer-norm and an
 * attention graph.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

#define TH_THREADS 8
#define TH_REPEATS 3

typedef struct th_job {
    const h_case_t *c;
    unsigned char *const *baseline; /* by tensor index, outputs only */
    pthread_mutex_t *gate; /* held by the main thread until all started */
    int mismatches;
    cdnn_status_t status;
    char error[512];
} th_job_t;

static int th_compare(const h_case_t *c, unsigned char *const *outs,
                      unsigned char *const *baseline)
{
    int mismatches = 0;
    for (int i = 0; i < c->count; i++)
        if (c->t[i].role == H_ROLE_OUTPUT &&
            memcmp(outs[i], baseline[i], c->t[i].bytes) != 0)
            mismatches++;
    return mismatches;
}

static void th_free(const h_case_t *c, unsigned char **raw)
{
    for (int i = 0; i < c->count; i++) {
        free(raw[i]);
        raw[i] = NULL;
    }
}

/* Fresh poisoned buffers for every output; 0 if all were allocated. */
static int th_alloc(const h_case_t *c, unsigned char **raw,
                    unsigned char **outs)
{
    int ok = 1;
    for (int i = 0; i < c->count; i++) {
        raw[i] = outs[i] = NULL;
        if (c->t[i].role == H_ROLE_OUTPUT) {
            outs[i] = h_buffer_new(c, i, &raw[i]);
            ok = ok && outs[i] != NULL;
        }
    }
    return ok ? 0 : -1;
}

static void *th_main(void *arg)
{
    th_job_t *job = arg;
    unsigned char *raw[H_MAX_TENSORS], *outs[H_MAX_TENSORS];
    pthread_mutex_lock(job->gate);
    pthread_mutex_unlock(job->gate);
    for (int r = 0; r < TH_REPEATS && job->status == CDNN_STATUS_SUCCESS;
         r++) {
        if (th_alloc(job->c, raw, outs) != 0)
            job->status = CDNN_STATUS_ALLOC_FAILED;
        else
            job->status = h_execute(job->c, outs, NULL);
        if (job->status != CDNN_STATUS_SUCCESS)
            snprintf(job->error, sizeof job->error, "%s", cdnn_last_error());
        else
            job->mismatches += th_compare(job->c, outs, job->baseline);
        th_free(job->c, raw);
    }
    return NULL;
}

static void th_report(const h_case_t *c, const char *engine,
                      const th_job_t *jobs)
{
    for (int t = 0; t < TH_THREADS; t++) {
        if (jobs[t].status != CDNN_STATUS_SUCCESS)
            h_fail(c, engine, "thread %d: execute: %s: %s", t,
                   cdnn_status_string(jobs[t].status), jobs[t].error);
        else if (jobs[t].mismatches)
            h_fail(c, engine,
                   "thread %d: %d of %d outputs differ from a single "
                   "execution's", t, jobs[t].mismatches, TH_REPEATS);
    }
}

static void th_run_threads(const h_case_t *c, const char *engine,
                           unsigned char *const *baseline)
{
    pthread_t threads[TH_THREADS];
    th_job_t jobs[TH_THREADS];
    pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
    int started = 0;
    pthread_mutex_lock(&gate);
    for (int t = 0; t < TH_THREADS; t++) {
        jobs[t] = (th_job_t){c, baseline, &gate, 0, CDNN_STATUS_SUCCESS, ""};
        if (pthread_create(&threads[started], NULL, th_main, &jobs[t]) == 0)
            started++;
    }
    pthread_mutex_unlock(&gate);
    for (int t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    if (started != TH_THREADS)
        h_fail(c, engine, "only %d of %d threads started", started,
               TH_THREADS);
    else
        th_report(c, engine, jobs);
}

static void th_engine(h_case_t *c, uint64_t id)
{
    const char *engine = h_engine_name(id);
    unsigned char *raw[H_MAX_TENSORS], *baseline[H_MAX_TENSORS];
    if (h_build_pinned(c, id) != 0)
        return;
    if (th_alloc(c, raw, baseline) != 0)
        h_fail(c, engine, "out of memory");
    else if (h_execute(c, baseline, engine) == CDNN_STATUS_SUCCESS)
        th_run_threads(c, engine, baseline);
    th_free(c, raw);
}

/* Run c on every applicable engine, expecting expect among them. */
static void th_case(h_case_t *c, const char *expect)
{
    uint64_t ids[16];
    int32_t n = 0;
    if (h_prepare(c) == 0) {
        cdnn_status_t st =
            cdnn_graph_applicable_engines(c->graph, h_handle, ids, 16, &n);
        if (st != CDNN_STATUS_SUCCESS)
            h_fail(c, NULL, "cdnn_graph_applicable_engines: %s: %s",
                   cdnn_status_string(st), cdnn_last_error());
        int found = 0;
        for (int32_t i = 0; i < n && i < 16; i++) {
            found = found || ids[i] == h_engine_id(expect);
            th_engine(c, ids[i]);
        }
        if (!found)
            h_fail(c, expect, "expected to apply, but does not");
    }
    h_case_free(c);
}

/* In f16, the GEMM engine converts the operands into each execution's
 * own workspace. */
static void th_matmul(cdnn_data_type_t type)
{
    static const int64_t a[3] = {2, 96, 80}, b[3] = {2, 80, 112};
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "8 threads: matmul %s [2,96,80]x[2,80,112]",
            cdnn_data_type_name(type));
    h_input(&c, 1, type, 3, a, H_PACKED, H_UNIFORM);
    h_input(&c, 2, type, 3, b, H_TRANSPOSED, H_UNIFORM);
    h_output(&c, 3, type, 0, NULL, H_PACKED);
    h_call(&c, cdnn_graph_matmul(c.graph, "mm", 1, 2, 3), "cdnn_graph_matmul");
    th_case(&c, H_BLAS_MATMUL);
}

static void th_conv(void)
{
    static const int64_t x[4] = {2, 16, 20, 20}, w[4] = {16, 16, 3, 3};
    cdnn_conv_attr_t a;
    cdnn_conv_attr_init(&a, 2);
    a.pre_padding[0] = a.pre_padding[1] = 1;
    a.post_padding[0] = a.post_padding[1] = 1;
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "8 threads: conv_fwd f32 NHWC [2,16,20,20] "
            "k16 3x3 pad 1");
    h_input(&c, 1, CDNN_DATA_TYPE_F32, 4, x, H_CHANNELS_LAST, H_UNIFORM);
    h_input(&c, 2, CDNN_DATA_TYPE_F32, 4, w, H_CHANNELS_LAST, H_UNIFORM);
    h_output(&c, 3, CDNN_DATA_TYPE_F32, 0, NULL, H_PACKED);
    h_call(&c, cdnn_graph_conv_fwd(c.graph, "conv", &a, 1, 2, 3),
           "cdnn_graph_conv_fwd");
    th_case(&c, H_BLAS_CONV);
}

static void th_pointwise(cdnn_data_type_t type)
{
    static const int64_t dims[2] = {64, 2053};
    cdnn_pointwise_attr_t mul, gelu;
    cdnn_pointwise_attr_init(&mul, CDNN_PW_MUL);
    cdnn_pointwise_attr_init(&gelu, CDNN_PW_GELU_FWD);
    h_case_t c;
    h_begin(&c, H_ELEMENTWISE, "8 threads: gelu(a*b) %s [64,2053]",
            cdnn_data_type_name(type));
    h_input(&c, 1, type, 2, dims, H_PACKED, H_WIDE);
    h_input(&c, 2, type, 2, dims, H_TRANSPOSED, H_WIDE);
    h_virtual(&c, 3, CDNN_DATA_TYPE_UNSET, 0, NULL);
    h_output(&c, 4, type, 0, NULL, H_PACKED);
    h_call(&c, cdnn_graph_pointwise(c.graph, "mul", &mul, 1, 2, CDNN_UID_NONE,
                                    3), "cdnn_graph_pointwise");
    h_call(&c, cdnn_graph_pointwise(c.graph, "gelu", &gelu, 3, CDNN_UID_NONE,
                                    CDNN_UID_NONE, 4), "cdnn_graph_pointwise");
    th_case(&c, H_FUSED_POINTWISE);
}

static void th_layernorm(void)
{
    static const int64_t x[2] = {64, 512}, s[2] = {1, 512};
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "8 threads: layernorm f32 [64,512]");
    h_input(&c, 1, CDNN_DATA_TYPE_F32, 2, x, H_PACKED, H_WIDE);
    h_input(&c, 2, CDNN_DATA_TYPE_F32, 2, s, H_PACKED, H_UNIFORM);
    h_input(&c, 3, CDNN_DATA_TYPE_F32, 2, s, H_PACKED, H_UNIFORM);
    h_output(&c, 4, CDNN_DATA_TYPE_F32, 0, NULL, H_PACKED);
    h_output(&c, 5, CDNN_DATA_TYPE_F32, 0, NULL, H_PACKED);
    h_output(&c, 6, CDNN_DATA_TYPE_F32, 0, NULL, H_PACKED);
    h_call(&c, cdnn_graph_layernorm(c.graph, "ln", 1e-5, 1, 2, 3, 4, 5, 6),
           "cdnn_graph_layernorm");
    th_case(&c, H_REFERENCE);
}

static void th_sdpa(void)
{
    static const int64_t q[4] = {2, 4, 48, 32};
    static const cdnn_sdpa_attr_t a = {0.0, 1};
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "8 threads: sdpa_fwd bf16 [2,4,48,32] causal");
    h_input(&c, 1, CDNN_DATA_TYPE_BF16, 4, q, H_PACKED, H_WIDE);
    h_input(&c, 2, CDNN_DATA_TYPE_BF16, 4, q, H_SWAP12, H_WIDE);
    h_input(&c, 3, CDNN_DATA_TYPE_BF16, 4, q, H_PACKED, H_UNIFORM);
    h_output(&c, 4, CDNN_DATA_TYPE_BF16, 0, NULL, H_PACKED);
    h_call(&c, cdnn_graph_sdpa_fwd(c.graph, "sdpa", &a, 1, 2, 3, 4),
           "cdnn_graph_sdpa_fwd");
    th_case(&c, H_REFERENCE);
}

void test_concurrent_execute(void **state)
{
    (void)state;
    th_matmul(CDNN_DATA_TYPE_F32);
    th_matmul(CDNN_DATA_TYPE_F16);
    th_conv();
    th_pointwise(CDNN_DATA_TYPE_F32);
    th_pointwise(CDNN_DATA_TYPE_BF16);
    th_layernorm();
    th_sdpa();
    h_done();
}
