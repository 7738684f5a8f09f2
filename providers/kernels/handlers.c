#include "handlers.h"

#include <string.h>

/* Every handler this provider has.  A new handler version is a new entry:
 * plans saved with the old one keep loading as long as it stays here. */
static const dispatch_handler_t *const handlers[] = {
    &host_matmul_handler_v1,
    &host_pointwise_handler_v1,
    &host_norm_handler_v1,
};
#define HANDLER_COUNT (sizeof handlers / sizeof *handlers)

const dispatch_handler_t *dispatch_handler_find(const char *name, uint32_t version)
{
    for (size_t i = 0; i < HANDLER_COUNT; i++)
        if (strcmp(handlers[i]->name, name) == 0 && handlers[i]->version == version)
            return handlers[i];
    return NULL;
}

uint32_t dispatch_handler_latest(const char *name)
{
    uint32_t latest = 0;
    for (size_t i = 0; i < HANDLER_COUNT; i++)
        if (strcmp(handlers[i]->name, name) == 0 && handlers[i]->version > latest)
            latest = handlers[i]->version;
    return latest;
}
