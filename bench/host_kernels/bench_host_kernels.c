/*
 * bench_host_kernels.c -- the host matmul code objects (kernels/host)
 * against OpenBLAS's cblas_sgemm in the same run, f32:
 *   matmul 512^3, matmul 1024^3, matmul+bias+gelu 1024^3;
 * and the NHWC convolution objects on bench/cpu's 3x3 shapes.
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
 * Running every object of a kind
 * ------------------------------------------------------------------------ */

typedef int32_t (*entry_fn)(const void *args, size_t *workspace_bytes);

/* A case for the host objects: its args (whose workspace fields the
 * bench fills) and the entry being timed. */
typedef struct host_run {
    entry_fn entry;
    void *args;
    void **workspace;
    size_t *workspace_size;
} host_run_t;

static void run_host(void *state)
{
    host_run_t *h = state;
    if (h->entry(h->args, NULL) != CDNN_HOST_OK) {
        fprintf(stderr, "bench_host_kernels: the kernel refused its args\n");
        exit(1);
    }
}

static void report(const char *name, const char *impl, double flops,
                   double ms)
{
    printf("%s\t%s\t%.3f\t%.1f\n", name, impl, ms, flops / ms * 1e-6);
    fflush(stdout);
}

/* Times every built object whose name starts with prefix and whose level
 * this CPU runs, on h's args. */
static void bench_objects(const char *name, const char *prefix,
                          host_run_t *h, double flops)
{
    char list[4096];
    snprintf(list, sizeof list, "%s", HOST_KERNEL_OBJECTS);
    uint32_t features = cdnn_host_cpu_features();
    for (char *save, *item = strtok_r(list, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *dot = strchr(item, '.');
        if (!dot || strncmp(item, prefix, strlen(prefix)) != 0 ||
            !cdnn_host_target_runs(dot + 1, features))
            continue;
        char path[512], symbol[96];
        snprintf(path, sizeof path, "%s/%s.so", HOST_KERNEL_DIR, item);
        *dot = '\0';
        snprintf(symbol, sizeof symbol, "cdnn_host_%s", item);
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        h->entry = handle ? (entry_fn)dlsym(handle, symbol) : NULL;
        if (!h->entry) {
            fprintf(stderr, "bench_host_kernels: %s: %s\n", path, dlerror());
            exit(1);
        }
        size_t need = 0;
        h->entry(h->args, &need);
        *h->workspace = xcalloc(need, 1);
        *h->workspace_size = need;
        *dot = '.';
        report(name, item, flops, time_median_ms(run_host, h));
        free(*h->workspace);
        dlclose(handle);
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

static void use_pool(cdnn_host_parallel_t *par, pool_t *pool, int threads)
{
    par->threads = threads;
    par->parallel_for = pool_parallel_for;
    par->ctx = pool;
}

/* ------------------------------------------------------------------------
 * Matmul: size^3, f32, packed; + bias and gelu
 * ------------------------------------------------------------------------ */

typedef struct mm_bench {
    int64_t size;
    int gelu;
    float *a, *b, *c, *bias;
} mm_bench_t;

static void run_openblas(void *state)
{
    mm_bench_t *s = state;
    int n = (int)s->size;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                s->a, n, s->b, n, 0.0f, s->c, n);
    if (!s->gelu)
        return;
    for (int64_t i = 0; i < (int64_t)n * n; i++) {
        float x = s->c[i] + s->bias[i % n];
        s->c[i] = x * 0.5f * (1.0f + erff(x * 0.70710678f));
    }
}

static void packed_matrix(cdnn_host_tensor_t *t, float *data, int64_t cols)
{
    memset(t, 0, sizeof *t);
    t->data = data;
    t->type = CDNN_HOST_F32;
    t->strides[0] = cols;
    t->strides[1] = 1;
}

static void matmul_args(const mm_bench_t *s, cdnn_host_matmul_args_t *a)
{
    memset(a, 0, sizeof *a);
    a->m = a->n = a->k = s->size;
    packed_matrix(&a->a, s->a, s->size);
    packed_matrix(&a->b, s->b, s->size);
    packed_matrix(&a->c, s->c, s->size);
    if (s->gelu) {
        packed_matrix(&a->bias, s->bias, s->size);
        a->bias.strides[0] = 0;
        a->activation = CDNN_HOST_ACT_GELU;
    }
}

static void bench_matmul(const char *name, int64_t size, int gelu,
                         pool_t *pool, int threads)
{
    mm_bench_t s = {.size = size, .gelu = gelu};
    s.a = random_floats(size * size, 1);
    s.b = random_floats(size * size, 2);
    s.c = random_floats(size * size, 3);
    s.bias = random_floats(size, 4);
    double flops = 2.0 * (double)size * (double)size * (double)size;
    report(name, "openblas", flops, time_median_ms(run_openblas, &s));
    cdnn_host_matmul_args_t args;
    matmul_args(&s, &args);
    use_pool(&args.parallel, pool, threads);
    host_run_t h = {.args = &args, .workspace = &args.workspace,
                    .workspace_size = &args.workspace_size};
    bench_objects(name, "matmul_", &h, flops);
    free(s.a);
    free(s.b);
    free(s.c);
    free(s.bias);
}

/* ------------------------------------------------------------------------
 * Convolution: 3x3, pad 1, stride 1, NHWC f32 (PyTorch's side: NCHW, as
 * bench/cpu); + bias and relu.  OpenBLAS has none (cpu:blas_conv, its
 * im2col lowering, is in bench/cpu).
 * ------------------------------------------------------------------------ */

static void nhwc(cdnn_host_tensor_t *t, float *data, int64_t h, int64_t w,
                 int64_t c)
{
    memset(t, 0, sizeof *t);
    t->data = data;
    t->type = CDNN_HOST_F32;
    t->strides[3] = 1;
    t->strides[2] = c;
    t->strides[1] = w * c;
    t->strides[0] = h * w * c;
}

static void bench_conv(const char *name, int64_t n, int64_t hw, int64_t c,
                       int64_t k, int relu, pool_t *pool, int threads)
{
    float *x = random_floats(n * hw * hw * c, 1);
    float *w = random_floats(k * 9 * c, 2);
    float *y = random_floats(n * hw * hw * k, 3);
    float *bias = random_floats(k, 4);
    cdnn_host_conv_args_t a;
    memset(&a, 0, sizeof a);
    a.n = n;
    a.h = a.w = a.out_h = a.out_w = hw;
    a.c = c;
    a.k = k;
    a.r = a.s = 3;
    a.pad_h = a.pad_w = 1;
    a.stride_h = a.stride_w = a.dilation_h = a.dilation_w = 1;
    nhwc(&a.x, x, hw, hw, c);
    nhwc(&a.filter, w, 3, 3, c);
    nhwc(&a.y, y, hw, hw, k);
    if (relu) {
        nhwc(&a.bias, bias, 1, 1, k);
        a.bias.strides[0] = a.bias.strides[1] = a.bias.strides[2] = 0;
        a.activation = CDNN_HOST_ACT_RELU;
    }
    use_pool(&a.parallel, pool, threads);
    host_run_t h = {.args = &a, .workspace = &a.workspace,
                    .workspace_size = &a.workspace_size};
    bench_objects(name, "conv_nhwc_", &h,
                  2.0 * (double)(n * hw * hw * k * 9 * c));
    free(x);
    free(w);
    free(y);
    free(bias);
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
    /* Keep the names in step with peers_torch.py. */
    static const struct { const char *name; int64_t size; int gelu; } mm[] = {
        {"matmul 512x512x512", 512, 0},
        {"matmul 1024x1024x1024", 1024, 0},
        {"matmul+bias+gelu 1024x1024x1024", 1024, 1},
    };
    for (size_t i = 0; i < sizeof mm / sizeof mm[0]; i++)
        if (strstr(mm[i].name, only))
            bench_matmul(mm[i].name, mm[i].size, mm[i].gelu, &pool, threads);
    static const struct { const char *name; int64_t n, hw, c, k; int relu; } cv[] = {
        {"conv 3x3 N8 C64 56x56 K64", 8, 56, 64, 64, 0},
        {"conv 3x3 N8 C256 14x14 K256", 8, 14, 256, 256, 0},
        {"conv+bias+relu 3x3 N8 C64 56x56 K64", 8, 56, 64, 64, 1},
    };
    for (size_t i = 0; i < sizeof cv / sizeof cv[0]; i++)
        if (strstr(cv[i].name, only))
            bench_conv(cv[i].name, cv[i].n, cv[i].hw, cv[i].c, cv[i].k,
                       cv[i].relu, &pool, threads);
    pool_stop(&pool);
    return 0;
}
