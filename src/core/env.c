#include "core/env.h"

#include <stdlib.h>

static const char *const names[CDNN_ENV_COUNT] = {
    [CDNN_ENV_PROVIDER_PATH] = "CDNN_PROVIDER_PATH",
    [CDNN_ENV_CACHE_DIR] = "CDNN_CACHE_DIR",
    [CDNN_ENV_HOME] = "HOME",
    [CDNN_ENV_DISABLE_CACHE] = "CDNN_DISABLE_CACHE",
    [CDNN_ENV_FORCE_BENCHMARKING] = "CDNN_FORCE_BENCHMARKING",
    [CDNN_ENV_TRUSTED_CODE] = "CDNN_TRUSTED_CODE",
    [CDNN_ENV_LOG_LEVEL] = "CDNN_LOG_LEVEL",
};

const char *env_name(cdnn_env_t var)
{
    return (unsigned)var < CDNN_ENV_COUNT ? names[var] : "?";
}

const char *env_get(cdnn_env_t var)
{
    return (unsigned)var < CDNN_ENV_COUNT ? secure_getenv(names[var]) : NULL;
}
