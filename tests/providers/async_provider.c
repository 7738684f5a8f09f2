/*
 * async_provider.c -- a provider whose execute returns before its work is
 * done, as a GPU provider's does, on the CPU: the proof that benchmarking
 * times the work and not its enqueue (tests/test_benchmark.c).
 *
 * The provider owns one worker thread (its "device") with one queue (its
 * one stream).  execute checks its arguments, spends the engine's enqueue
 * cost on the caller's thread, queues a job and returns; the worker sleeps
 * the engine's work cost and then copies x to y (identity_copy.h) -- after
 * the sleep, so that an output read before synchronize is plainly not
 * written yet.
 *
 *   async:slow  enqueues at once; its work takes 8000 us
 *   async:fast  takes 300 us to enqueue; its work takes 1000 us
 *
 * With $ASYNC_COSTS_SWAPPED=1 at init the two trade costs, so async:slow
 * must win.  With $ASYNC_HEATING=1 the device heats as a GPU does: async:slow's
 * work takes 1300 us, async:fast's 1000 us, and each job takes 5% longer
 * per job finished before it -- timed one engine after the other, the first
 * timed (async:slow) would look faster.  Either way the host clock around execute alone would time
 * the enqueue and rank the two backwards.
 *
 * synchronize (provider ABI 1.2) waits for every job queued before it.
 * time_execute waits for earlier work, queues the runs, waits for them and
 * reports the worker's busy time on them: the device's clock.  With
 * $ASYNC_NO_TIMER=1 when the provider loads, its table has no
 * time_execute, and cdnn must time with the host clock around execute and
 * synchronize.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cdnn/provider.h>

#include "identity_copy.h"

typedef struct async_engine {
    const char *name;
    int64_t enqueue_us, work_us;
} async_engine_t;

static const async_engine_t async_engines[] = {
    {"async:slow", 0, 8000},
    {"async:fast", 300, 1000},
};
#define ENGINES ((int32_t)(sizeof async_engines / sizeof async_engines[0]))
/* Each engine's work on a heating device (before the heat). */
static const int64_t heating_work_us[ENGINES] = {1300, 1000};

static _Thread_local const char *message = "";

static int env_is_one(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

static int64_t nanoseconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
    struct timespec t = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&t, &t) != 0)
        continue; /* interrupted: sleep the rest */
}

/* ---- the device: one worker, one queue ------------------------------------- */

typedef struct job {
    struct job *next;
    const void *x;
    void *y;
    size_t bytes;
    int64_t work_ns;
} job_t;

typedef struct device {
    pthread_t worker;
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a job was queued or finished, or stop */
    job_t *head, *tail;
    uint64_t queued, finished;
    int64_t busy_ns; /* the worker's time on jobs, its clock */
    int stop;
    int swapped; /* $ASYNC_COSTS_SWAPPED=1 at init */
    int heating; /* $ASYNC_HEATING=1 at init */
} device_t;

static device_t device = {.lock = PTHREAD_MUTEX_INITIALIZER,
                          .changed = PTHREAD_COND_INITIALIZER};

/* The next job, waiting for one; NULL once stopped with nothing queued.
 * Called with the lock held. */
static job_t *next_job(device_t *d)
{
    while (!d->head && !d->stop)
        pthread_cond_wait(&d->changed, &d->lock);
    job_t *job = d->head;
    if (job && !(d->head = job->next))
        d->tail = NULL;
    return job;
}

static void *work(void *arg)
{
    device_t *d = arg;
    pthread_mutex_lock(&d->lock);
    for (job_t *job; (job = next_job(d)) != NULL;) {
        int64_t work_ns = d->heating ? job->work_ns + job->work_ns * (int64_t)d->finished / 20
                                     : job->work_ns;
        pthread_mutex_unlock(&d->lock);
        int64_t start = nanoseconds_now();
        sleep_ns(work_ns);
        memcpy(job->y, job->x, job->bytes);
        int64_t spent = nanoseconds_now() - start;
        free(job);
        pthread_mutex_lock(&d->lock);
        d->busy_ns += spent;
        d->finished++;
        pthread_cond_broadcast(&d->changed);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static void enqueue(device_t *d, job_t *job)
{
    pthread_mutex_lock(&d->lock);
    if (d->tail)
        d->tail->next = job;
    else
        d->head = job;
    d->tail = job;
    d->queued++;
    pthread_cond_broadcast(&d->changed);
    pthread_mutex_unlock(&d->lock);
}

/* Wait for every job queued so far; the worker's busy time then. */
static int64_t drain(device_t *d)
{
    pthread_mutex_lock(&d->lock);
    uint64_t target = d->queued;
    while (d->finished < target)
        pthread_cond_wait(&d->changed, &d->lock);
    int64_t busy = d->busy_ns;
    pthread_mutex_unlock(&d->lock);
    return busy;
}

/* ---- the provider ------------------------------------------------------------ */

typedef struct async_context {
    device_t *device;
    identity_copy_t copy;
    int64_t enqueue_ns, work_ns;
} async_context_t;

static cdnn_status_t init(const cdnn_provider_host_t *host, void **state)
{
    (void)host;
    device.stop = 0;
    device.swapped = env_is_one("ASYNC_COSTS_SWAPPED");
    device.heating = env_is_one("ASYNC_HEATING");
    device.finished = device.queued = 0;
    if (pthread_create(&device.worker, NULL, work, &device) != 0) {
        message = "async: could not start the worker thread";
        return CDNN_STATUS_INTERNAL_ERROR;
    }
    *state = &device;
    return CDNN_STATUS_SUCCESS;
}

static void fini(void *state)
{
    device_t *d = state;
    pthread_mutex_lock(&d->lock);
    d->stop = 1;
    pthread_cond_broadcast(&d->changed);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->worker, NULL); /* before the library is unloaded */
}

static int32_t engine_count(void *state)
{
    (void)state;
    return ENGINES;
}

static cdnn_status_t engine_info(void *state, int32_t engine, cdnn_provider_engine_t *info)
{
    (void)state;
    if (engine < 0 || engine >= ENGINES) {
        message = "async: no such engine";
        return CDNN_STATUS_BAD_PARAM;
    }
    info->name = async_engines[engine].name;
    info->rank = 100 - engine;
    info->payload_major = 1;
    info->payload_minor = 0;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t applicable(void *state, int32_t engine, const cdnn_device_view_t *device_view,
                                const cdnn_graph_view_t *g)
{
    (void)state;
    (void)engine;
    const char *why = identity_copy_refusal(device_view, g);
    if (why) {
        message = why;
        return CDNN_STATUS_NOT_SUPPORTED;
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t context_create(void *state, int32_t engine,
                                    const cdnn_device_view_t *device_view,
                                    const cdnn_graph_view_t *g, const cdnn_knob_value_t *knobs,
                                    int32_t knob_count, void **context)
{
    (void)knobs;
    (void)knob_count;
    cdnn_status_t st = applicable(state, engine, device_view, g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    async_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return CDNN_STATUS_ALLOC_FAILED;
    ctx->device = state;
    const async_engine_t *costs =
        &async_engines[ctx->device->swapped ? ENGINES - 1 - engine : engine];
    ctx->copy = identity_copy_of(g);
    ctx->enqueue_ns = costs->enqueue_us * 1000;
    ctx->work_ns = (ctx->device->heating ? heating_work_us[engine] : costs->work_us) * 1000;
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t workspace_size(void *context, size_t *bytes)
{
    (void)context;
    *bytes = 0;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t execute(void *context, const cdnn_exec_args_t *args)
{
    const async_context_t *ctx = context;
    const void *x = identity_pointer_of(args, ctx->copy.x_uid);
    void *y = identity_pointer_of(args, ctx->copy.y_uid);
    job_t *job = x && y ? malloc(sizeof *job) : NULL;
    if (!job) {
        message = x && y ? "async: out of memory" : "async: a pointer is missing";
        return x && y ? CDNN_STATUS_ALLOC_FAILED : CDNN_STATUS_BAD_PARAM;
    }
    *job = (job_t){NULL, x, y, ctx->copy.elements * sizeof(float), ctx->work_ns};
    sleep_ns(ctx->enqueue_ns);
    enqueue(ctx->device, job);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t synchronize(void *context, void *stream)
{
    const async_context_t *ctx = context;
    (void)stream; /* one queue: NULL on the CPU */
    drain(ctx->device);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t time_execute(void *context, const cdnn_exec_args_t *args, int32_t runs,
                                  double *seconds)
{
    const async_context_t *ctx = context;
    int64_t before = drain(ctx->device); /* earlier work is not these runs' */
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int32_t i = 0; st == CDNN_STATUS_SUCCESS && i < runs; i++)
        st = execute(context, args);
    *seconds = 1e-9 * (double)(drain(ctx->device) - before);
    return st;
}

static void context_destroy(void *context)
{
    free(context);
}

static const char *last_error(void *state)
{
    (void)state;
    return message;
}

/* Not const: whether it offers time_execute is decided when it loads. */
static cdnn_provider_t async_provider = {
    .abi_major = CDNN_PROVIDER_ABI_MAJOR,
    .abi_minor = CDNN_PROVIDER_ABI_MINOR,
    .struct_size = sizeof(cdnn_provider_t),
    .name = "async",
    .version = "1.0.0",
    .init = init,
    .fini = fini,
    .engine_count = engine_count,
    .engine_info = engine_info,
    .applicable = applicable,
    .context_create = context_create,
    .workspace_size = workspace_size,
    .execute = execute,
    .context_destroy = context_destroy,
    .last_error = last_error,
    .synchronize = synchronize,
};

__attribute__((visibility("default"))) const cdnn_provider_t *cdnn_provider_entry(void)
{
    async_provider.time_execute = env_is_one("ASYNC_NO_TIMER") ? NULL : time_execute;
    return &async_provider;
}
