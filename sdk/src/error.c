#include <cdnn_sdk/error.h>

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char message[1024];

cdnn_status_t sdk_fail(cdnn_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return status;
}

const char *sdk_last_error(void *state)
{
    (void)state;
    return message;
}
