#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/env.h"

static cdnn_log_fn log_fn;
static void *log_user;
static int log_max_level = -1; /* -1: read $CDNN_LOG_LEVEL on first use */

void cdnn_set_log_callback(cdnn_log_fn fn, cdnn_log_level_t max_level,
                           void *user)
{
    log_fn = fn;
    log_user = user;
    log_max_level = fn ? (int)max_level : -1;
}

static int max_level(void)
{
    if (log_max_level >= 0)
        return log_max_level;
    const char *env = env_get(CDNN_ENV_LOG_LEVEL);
    int level = env ? atoi(env) : CDNN_LOG_WARNING;
    return level < 0 ? 0 : level;
}

static const char *level_word(cdnn_log_level_t level)
{
    switch (level) {
    case CDNN_LOG_ERROR: return "error";
    case CDNN_LOG_WARNING: return "warning";
    case CDNN_LOG_INFO: return "info";
    default: return "debug";
    }
}

void cdnn_log_line(cdnn_log_level_t level, const char *message)
{
    if ((int)level > max_level())
        return;
    if (log_fn)
        log_fn(level, message, log_user);
    else
        fprintf(stderr, "cdnn: %s: %s\n", level_word(level), message);
}

void cdnn_log(cdnn_log_level_t level, const char *fmt, ...)
{
    if ((int)level > max_level())
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    cdnn_log_line(level, line);
}
