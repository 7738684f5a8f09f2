/*
 * error.h -- the library's one error model: a status plus a per-thread
 * message.
 */
#ifndef CDNN_CORE_ERROR_H
#define CDNN_CORE_ERROR_H

#include <cdnn/cdnn.h>

/**
 * Set the calling thread's message and return status, so that failures
 * read `return cdnn_fail(CDNN_STATUS_BAD_PARAM, "...", ...);`.
 */
cdnn_status_t cdnn_fail(cdnn_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Fail with BAD_PARAM naming the function and the NULL argument. */
#define CDNN_CHECK_ARG(arg)                                                    \
    do {                                                                       \
        if (!(arg))                                                            \
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "%s: '%s' is NULL",        \
                             __func__, #arg);                                  \
    } while (0)

#endif
