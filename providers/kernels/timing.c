/*
 * timing.c -- waiting for a context's launches and timing them by the
 * device's own clock (provider ABI 1.2, synchronize and time_execute).
 *
 * Host kernels finish before execute returns, so there is nothing to wait
 * for and the host's clock is theirs.  CUDA kernels are enqueued on the
 * caller's stream: a wait is the stream's, and their time is the time
 * between two events recorded on the stream around the launches, not the
 * host's time to enqueue them.
 */
#include <time.h>

#include <cdnn_sdk/error.h>

#include "context.h"

static int on_cuda(const kernel_context_t *ctx)
{
    return ctx->launch.handler->kind == KERNEL_KIND_CUDA;
}

cdnn_status_t kernel_context_synchronize(const kernel_context_t *ctx, void *stream)
{
    if (!on_cuda(ctx))
        return CDNN_STATUS_SUCCESS;
    cdnn_status_t st = cuda_code_enter(&ctx->cuda);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    sdk_cu_result r = ctx->cuda.cu->stream_synchronize(stream);
    cuda_code_leave(&ctx->cuda);
    return r == SDK_CU_SUCCESS ? CDNN_STATUS_SUCCESS
                               : cuda_failed(&ctx->cuda, CDNN_STATUS_EXECUTION_FAILED, r,
                                             "cuStreamSynchronize");
}

static cdnn_status_t run_many(const kernel_context_t *ctx, const cdnn_exec_args_t *args,
                              int32_t runs)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int32_t i = 0; st == CDNN_STATUS_SUCCESS && i < runs; i++)
        st = ctx->launch.handler->run(&ctx->launch, args);
    return st;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The launches between two events on the stream, with the context current. */
static cdnn_status_t time_on_stream(const kernel_context_t *ctx, const cdnn_exec_args_t *args,
                                    int32_t runs, double *seconds)
{
    const sdk_cuda_t *cu = ctx->cuda.cu;
    sdk_cu_event start = NULL, end = NULL;
    float ms = 0;
    sdk_cu_result r = cu->event_create(&start, 0);
    if (r == SDK_CU_SUCCESS)
        r = cu->event_create(&end, 0);
    if (r == SDK_CU_SUCCESS)
        r = cu->event_record(start, args->stream);
    cdnn_status_t st = r == SDK_CU_SUCCESS ? run_many(ctx, args, runs) : CDNN_STATUS_SUCCESS;
    if (r == SDK_CU_SUCCESS && st == CDNN_STATUS_SUCCESS)
        r = cu->event_record(end, args->stream);
    if (r == SDK_CU_SUCCESS && st == CDNN_STATUS_SUCCESS)
        r = cu->event_synchronize(end);
    if (r == SDK_CU_SUCCESS && st == CDNN_STATUS_SUCCESS)
        r = cu->event_elapsed_time(&ms, start, end);
    if (start)
        cu->event_destroy(start);
    if (end)
        cu->event_destroy(end);
    *seconds = 1e-3 * ms;
    return r == SDK_CU_SUCCESS ? st
                               : cuda_failed(&ctx->cuda, CDNN_STATUS_EXECUTION_FAILED, r,
                                             "timing the launches with CUDA events");
}

cdnn_status_t kernel_context_time(const kernel_context_t *ctx, const cdnn_exec_args_t *args,
                                  int32_t runs, double *seconds)
{
    if (!on_cuda(ctx)) {
        double t0 = now();
        cdnn_status_t st = run_many(ctx, args, runs);
        *seconds = now() - t0;
        return st;
    }
    cdnn_status_t st = cuda_code_enter(&ctx->cuda);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = time_on_stream(ctx, args, runs, seconds);
    cuda_code_leave(&ctx->cuda);
    return st;
}
