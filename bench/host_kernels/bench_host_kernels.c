/*
 * bench_host_kernels.c -- the host matmul code objects (kernels/host)
 * against OpenBLAS's cblas_sgemm in the same run, f32:
 *   matmul 512^3, matmul 1024^3, matmul+bias+gelu 1024^3.
 * For the fused case OpenBLAS's GEMM is followed by the pass cpu:blas_matmul
 * makes (bias add and gelu by libm's erff), so both sides compute the same.
 *
 * Each object this CPU runs is loaded by path (dlopen) and called through
 * its entry, on a pool of THREADS threads (the caller's parallel_for that
 * the provider will also supply); OpenBLAS uses its own threads, the same
 * count.  Method as bench/cpu: WARMUP untimed runs, single runs timed until
 * MIN_SECONDS (at least MIN_RUNS, at most MAX_RUNS), the median.
 *
 * Output, one line per (case, implementation), tab-separated:
 *   case  implementation  median_ms  gflops
 * Usage: bench_host_kernels [threads] [substring]  (threads: default all CPUs)
 */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../kernels/host/host_kernel.h"
#include "../../kernels/host/host_target.h"
#include "bench_common.h"

#define WARMUP 2
#define MIN_RUNS 5
#define MAX_RUNS 200
#define MIN_SECONDS 1.0
#define MAX_THREADS 64

/* OpenBLAS's own control of its threads (cblas.h declares it). */
void openblas_set_num_threads(int num_threads);

/* ------------------------------------------------------------------------
 * A pool of threads serving parallel_for: workers wait for a job, take
 * indices from a shared counter, and the caller waits for all of them.
 * ------------------------------------------------------------------------ */

typedef struct pool {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    int workers;
    long generation;
    int busy;
    int64_t n, next;
    void (*body)(void *, int64_t);
    void *arg;
    int quit;
} pool_t;

/* Run indices of the current job until none is left (lock held on entry
 * and on return). */
static void drain(pool_t *p)
{
    while (p->next < p->n) {
        int64_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        p->body(p->arg, i);
        pthread_mutex_lock(&p->lock);
    }
}

static void *worker(void *arg)
{
    pool_t *p = arg;
    long seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->generation == seen && !p->quit)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->quit)
            break;
        seen = p->generation;
        p->busy++;
        drain(p);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void pool_parallel_for(void *ctx, int64_t n,
                              void (*body)(void *, int64_t), void *arg)
{
    pool_t *p = ctx;
    pthread_mutex_lock(&p->lock);
    p->n = n;
    p->next = 0;
    p->body = body;
    p->arg = arg;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    drain(p);
    while (p->busy > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

static pthread_t pool_threads[MAX_THREADS];

static void pool_start(pool_t *p, int threads)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->workers = threads - 1;
    for (int i = 0; i < p->workers; i++)
        pthread_create(&pool_threads[i], NULL, worker, p);
}

static void pool_stop(pool_t *p)
{
    pthread_mutex_lock(&p->lock);
    p->quit = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->workers; i++)
        pthread_join(pool_threads[i], NULL);
}

/* ------------------------------------------------------------------------
 * Timing
 * ------------------------------------------------------------------------ */

typedef void (*run_fn)(void *state);

static double time_median_ms(run_fn run, void *state)
{
    for (int i = 0; i < WARMUP; i++)
        run(state);
    double times[MAX_RUNS], start = now_seconds();
    int runs = 0;
    while (runs < MAX_RUNS &&
           (runs < MIN_RUNS || now_seconds() - start < MIN_SECONDS)) {
        double t0 = now_seconds();
        run(state);
        times[runs++] = now_seconds() - t0;
    }
    return median(times, runs) * 1e3;
}

/* ------------------------------------------------------------------------
 * Cases
 * ------------------------------------------------------------------------ */

typedef struct mm_bench {
    int64_t m, n, k;
    int gelu; /* + bias, gelu */
    float *a, *b, *c, *bias;
    cdnn_host_matmul_fn entry;
    cdnn_host_matmul_args_t args;
} mm_bench_t;

static void run_openblas(void *state)
{
    mm_bench_t *s = state;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->m,
                (int)s->n, (int)s->k, 1.0f, s->a, (int)s->k, s->b, (int)s->n,
                0.0f, s->c, (int)s->n);
    if (!s->gelu)
        return;
    for (int64_t i = 0; i < s->m; i++)
        for (int64_t j = 0; j < s->n; j++) {
            float x = s->c[i * s->n + j] + s->bias[j];
            s->c[i * s->n + j] = x * 0.5f * (1.0f + erff(x * 0.70710678f));
        }
}

static void run_host(void *state)
{
    mm_bench_t *s = state;
    if (s->entry(&s->args, NULL) != CDNN_HOST_OK) {
        fprintf(stderr, "bench_host_kernels: the kernel refused its args\n");
        exit(1);
    }
}

static float *random_floats(int64_t n, unsigned seed)
{
    float *p = xcalloc((size_t)n, sizeof *p);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 8) % 2001) / 1000.0f - 1.0f;
    }
    return p;
}

static void packed_matrix(cdnn_host_tensor_t *t, float *data, int64_t cols)
{
    memset(t, 0, sizeof *t);
    t->data = data;
    t->type = CDNN_HOST_F32;
    t->strides[0] = cols;
    t->strides[1] = 1;
}

static void prepare_args(mm_bench_t *s, pool_t *pool, int threads)
{
    cdnn_host_matmul_args_t *a = &s->args;
    memset(a, 0, sizeof *a);
    a->m = s->m;
    a->n = s->n;
    a->k = s->k;
    packed_matrix(&a->a, s->a, s->k);
    packed_matrix(&a->b, s->b, s->n);
    packed_matrix(&a->c, s->c, s->n);
    if (s->gelu) {
        packed_matrix(&a->bias, s->bias, s->n);
        a->bias.strides[0] = 0;
        a->activation = CDNN_HOST_ACT_GELU;
    }
    a->parallel.threads = threads;
    a->parallel.parallel_for = pool_parallel_for;
    a->parallel.ctx = pool;
}

static void report(const char *name, const char *impl, const mm_bench_t *s,
                   double ms)
{
    double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    printf("%s\t%s\t%.3f\t%.1f\n", name, impl, ms, flops / ms * 1e-6);
    fflush(stdout);
}

static void bench_objects(const char *name, mm_bench_t *s, pool_t *pool,
                          int threads)
{
    const char *objects = HOST_MATMUL_OBJECTS;
    char list[1024];
    snprintf(list, sizeof list, "%s", objects);
    uint32_t features = cdnn_host_cpu_features();
    for (char *save, *item = strtok_r(list, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *dot = strchr(item, '.');
        if (!dot || !cdnn_host_target_runs(dot + 1, features))
            continue;
        char path[512], symbol[96];
        snprintf(path, sizeof path, "%s/%s.so", HOST_KERNEL_DIR, item);
        *dot = '\0';
        snprintf(symbol, sizeof symbol, "cdnn_host_%s", item);
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        s->entry = handle ? (cdnn_host_matmul_fn)dlsym(handle, symbol) : NULL;
        if (!s->entry) {
            fprintf(stderr, "bench_host_kernels: %s: %s\n", path, dlerror());
            exit(1);
        }
        prepare_args(s, pool, threads);
        size_t need;
        s->entry(&s->args, &need);
        s->args.workspace = xcalloc(need, 1);
        s->args.workspace_size = need;
        *dot = '.';
        report(name, item, s, time_median_ms(run_host, s));
        free(s->args.workspace);
        dlclose(handle);
    }
}

static void bench_case(const char *name, int64_t size, int gelu,
                       pool_t *pool, int threads)
{
    mm_bench_t s = {.m = size, .n = size, .k = size, .gelu = gelu};
    s.a = random_floats(size * size, 1);
    s.b = random_floats(size * size, 2);
    s.c = random_floats(size * size, 3);
    s.bias = random_floats(size, 4);
    report(name, "openblas", &s, time_median_ms(run_openblas, &s));
    bench_objects(name, &s, pool, threads);
    free(s.a);
    free(s.b);
    free(s.c);
    free(s.bias);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    const char *only = argc > 2 ? argv[2] : "";
    if (threads < 1 || threads > MAX_THREADS)
        threads = 1;
    openblas_set_num_threads(threads);
    pool_t pool;
    pool_start(&pool, threads);
    static const struct { const char *name; int64_t size; int gelu; } cases[] = {
        {"matmul 512x512x512", 512, 0},
        {"matmul 1024x1024x1024", 1024, 0},
        {"matmul+bias+gelu 1024x1024x1024", 1024, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strstr(cases[i].name, only))
            bench_case(cases[i].name, cases[i].size, cases[i].gelu, &pool,
                       threads);
    pool_stop(&pool);
    return 0;
}
