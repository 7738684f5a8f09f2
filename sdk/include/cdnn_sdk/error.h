/*
 * error.h -- a provider's per-thread error message.
 *
 * The ABI asks a provider to leave, for the calling thread, a message that
 * its last_error() returns after any failed call; cdnn keeps it word for
 * word in its own message.  With these, a failure is one line,
 *
 *     return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "needs f32, not %s", type);
 *
 * and the provider's table points last_error at sdk_last_error.  The SDK
 * is a static library, so every provider that links it has its own
 * message: one provider's failure never overwrites another's.
 */
#ifndef CDNN_SDK_ERROR_H
#define CDNN_SDK_ERROR_H

#include <cdnn/provider.h>

/** Record a printf-style message for the calling thread and return
 * status.  A message longer than 1 KiB is cut short. */
cdnn_status_t sdk_fail(cdnn_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** The calling thread's last message ("" before any failure).  It takes
 * the provider's state only to match the table's last_error member, so
 * that `.last_error = sdk_last_error` needs no wrapper; the state is not
 * read. */
const char *sdk_last_error(void *state);

#endif
