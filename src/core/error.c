#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

/* Long enough for a provider's message wrapped in ours, and for the list of
 * reasons a build gives when no engine applies. */
#define MESSAGE_CAP 8192

static _Thread_local char thread_message[MESSAGE_CAP];

const char *cdnn_status_string(cdnn_status_t status)
{
    switch (status) {
    case CDNN_STATUS_SUCCESS: return "CDNN_STATUS_SUCCESS";
    case CDNN_STATUS_BAD_PARAM: return "CDNN_STATUS_BAD_PARAM";
    case CDNN_STATUS_INVALID_GRAPH: return "CDNN_STATUS_INVALID_GRAPH";
    case CDNN_STATUS_NOT_SUPPORTED: return "CDNN_STATUS_NOT_SUPPORTED";
    case CDNN_STATUS_ALLOC_FAILED: return "CDNN_STATUS_ALLOC_FAILED";
    case CDNN_STATUS_SIZE_INSUFFICIENT: return "CDNN_STATUS_SIZE_INSUFFICIENT";
    case CDNN_STATUS_NOT_FOUND: return "CDNN_STATUS_NOT_FOUND";
    case CDNN_STATUS_BAD_STATE: return "CDNN_STATUS_BAD_STATE";
    case CDNN_STATUS_EXECUTION_FAILED: return "CDNN_STATUS_EXECUTION_FAILED";
    case CDNN_STATUS_DEVICE_MISMATCH: return "CDNN_STATUS_DEVICE_MISMATCH";
    case CDNN_STATUS_CORRUPT_DATA: return "CDNN_STATUS_CORRUPT_DATA";
    case CDNN_STATUS_IO_ERROR: return "CDNN_STATUS_IO_ERROR";
    case CDNN_STATUS_INTERNAL_ERROR: return "CDNN_STATUS_INTERNAL_ERROR";
    }
    return "CDNN_STATUS_UNKNOWN";
}

const char *cdnn_last_error(void)
{
    return thread_message;
}

cdnn_status_t cdnn_fail(cdnn_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(thread_message, sizeof thread_message, fmt, ap);
    va_end(ap);
    return status;
}
