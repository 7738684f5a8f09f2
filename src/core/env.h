/*
 * env.h -- every environment variable cdnn reads, in one place.
 *
 * Each is read with secure_getenv, so that a set-uid or set-gid program
 * (whose environment its caller controls) sees none of them: several name
 * paths cdnn loads code or writes files from, and the rest change what
 * runs.  README.md lists them for users.
 */
#ifndef CDNN_CORE_ENV_H
#define CDNN_CORE_ENV_H

typedef enum cdnn_env {
    CDNN_ENV_PROVIDER_PATH,       /* directories to load providers from */
    CDNN_ENV_CACHE_DIR,           /* the winner cache's directory */
    CDNN_ENV_HOME,                /* its default, under ~/.cache/cdnn */
    CDNN_ENV_DISABLE_CACHE,       /* 1: no winner cache */
    CDNN_ENV_FORCE_BENCHMARKING,  /* 0 or 1: overrides global.benchmarking */
    CDNN_ENV_TRUSTED_CODE,        /* "pack": strict mode */
    CDNN_ENV_LOG_LEVEL,           /* the most verbose level logged, 0..3 */
    CDNN_ENV_COUNT
} cdnn_env_t;

/** The variable's name, e.g. "CDNN_CACHE_DIR". */
const char *env_name(cdnn_env_t var);

/** Its value, or NULL when unset (or ignored: a set-uid program). */
const char *env_get(cdnn_env_t var);

#endif
