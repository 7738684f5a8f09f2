#include "context.h"

#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

cdnn_status_t kernel_context_new(const cdnn_provider_host_t *host, kernel_context_t **ctx)
{
    *ctx = calloc(1, sizeof **ctx);
    if (!*ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    (*ctx)->host = host;
    (*ctx)->code = HOST_CODE_NONE;
    (*ctx)->cuda = CUDA_CODE_NONE;
    return CDNN_STATUS_SUCCESS;
}

void kernel_context_free(kernel_context_t *ctx)
{
    if (!ctx)
        return;
    host_code_unload(&ctx->code);
    cuda_code_unload(&ctx->cuda);
    sdk_payload_graph_release(&ctx->restored);
    free(ctx->launch.values);
    free(ctx->kernel_id);
    free(ctx->payload);
    free(ctx);
}

static cdnn_status_t load_code(kernel_context_t *ctx, const cdnn_device_view_t *device,
                               const code_object_t *code)
{
    const launch_t *l = &ctx->launch;
    cdnn_status_t st;
    if (l->handler->kind == KERNEL_KIND_HOST) {
        st = host_code_load(code->bytes, code->size, code->symbol, ctx->kernel_id, &ctx->code);
        ctx->launch.entry = ctx->code.entry;
        return st;
    }
    int ptx = strncmp(code->target, "compute_", 8) == 0;
    st = cuda_code_load(device, code->bytes, code->size, ptx, code->symbol, ctx->kernel_id,
                        l->handler->shared_bytes(l->values), &ctx->cuda);
    ctx->launch.entry = ctx->cuda.function;
    ctx->launch.cuda = &ctx->cuda;
    return st;
}

cdnn_status_t kernel_context_launch(kernel_context_t *ctx, const cdnn_device_view_t *device,
                                    const dispatch_handler_t *handler,
                                    const code_object_t *code, int64_t *values,
                                    int32_t value_count)
{
    ctx->launch = (launch_t){handler, NULL, values, value_count, NULL, NULL, 0};
    /* A restored payload's strings live only as long as the load call. */
    if (!(ctx->kernel_id = strdup(code->kernel_id)))
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    ctx->launch.kernel_id = ctx->kernel_id;
    cdnn_status_t st = load_code(ctx, device, code);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    return handler->workspace(&ctx->launch, &ctx->launch.workspace_size);
}
