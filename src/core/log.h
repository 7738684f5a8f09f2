/* log.h -- log lines from the library and its providers. */
#ifndef CDNN_CORE_LOG_H
#define CDNN_CORE_LOG_H

#include <cdnn/cdnn.h>

void cdnn_log(cdnn_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** The same, for a message already formatted (the provider host's log). */
void cdnn_log_line(cdnn_log_level_t level, const char *message);

#endif
