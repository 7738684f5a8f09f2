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
    return CDNN_STATUS_SUCCESS;
}

void kernel_context_free(kernel_context_t *ctx)
{
    if (!ctx)
        return;
    host_code_unload(&ctx->code);
    sdk_payload_graph_release(&ctx->restored);
    free(ctx->launch.values);
    free(ctx->kernel_id);
    free(ctx->payload);
    free(ctx);
}

cdnn_status_t kernel_context_launch(kernel_context_t *ctx, const dispatch_handler_t *handler,
                                    const char *kernel_id, const uint8_t *code,
                                    size_t code_size, const char *symbol, int64_t *values,
                                    int32_t value_count)
{
    ctx->launch = (launch_t){handler, NULL, values, value_count, NULL, 0};
    /* A restored payload's strings live only as long as the load call. */
    if (!(ctx->kernel_id = strdup(kernel_id)))
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    ctx->launch.kernel_id = ctx->kernel_id;
    cdnn_status_t st = host_code_load(code, code_size, symbol, kernel_id, &ctx->code);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    ctx->launch.entry = ctx->code.entry;
    return handler->workspace(&ctx->launch, &ctx->launch.workspace_size);
}
