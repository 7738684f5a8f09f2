/*
 * payload.c -- the provider's side of the kernel payload: the SDK's
 * encoder and decoder (<cdnn_sdk/kpayload.h>, checks 1-8), and the one
 * part of check 8 that needs the provider's knowledge of targets: a
 * target of the other family is damage.
 */
#include "payload.h"

#include <cdnn_sdk/error.h>

#include "targets.h"

const char *kernel_kind_name(int kind)
{
    return sdk_kpayload_kind_name(kind);
}

cdnn_status_t kernel_payload_encode(const kernel_payload_t *p, uint8_t **bytes,
                                    size_t *size)
{
    return sdk_kpayload_encode(p, bytes, size);
}

/* A target of the other family is damage; one no family uses may be a
 * newer provider's, which the target check (10) refuses as such. */
static cdnn_status_t check_target_family(const kernel_payload_t *p)
{
    int family = target_kind(p->target);
    if (family && family != (int)p->kind)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the kernel payload is inconsistent: "
                        "its target %s is not a %s target", p->target,
                        kernel_kind_name(p->kind));
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t kernel_payload_decode(const uint8_t *bytes, size_t size, kernel_payload_t *p)
{
    cdnn_status_t st = sdk_kpayload_decode(bytes, size, p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_target_family(p);
    if (st != CDNN_STATUS_SUCCESS)
        sdk_kpayload_free(p);
    return st;
}

void kernel_payload_free(kernel_payload_t *p)
{
    sdk_kpayload_free(p);
}
