/*
 * registry.h -- the providers loaded in this process and their engines.
 *
 * Providers are loaded when the first reference is taken and unloaded when
 * the last is dropped.  Handles and plans each hold a reference, so an
 * engine a plan uses stays loaded for as long as the plan lives.  Between
 * acquire and release the engine list does not change and may be read
 * without a lock.
 */
#ifndef CDNN_ENGINE_REGISTRY_H
#define CDNN_ENGINE_REGISTRY_H

#include <cdnn/provider.h>

typedef struct provider_slot {
    void *library;
    const cdnn_provider_t *table;
    void *state;
    char *path;
} provider_slot_t;

typedef struct engine_slot {
    uint64_t id;
    char *name;
    int32_t rank;
    int32_t index; /* in its provider */
    uint16_t payload_major, payload_minor;
    const provider_slot_t *provider;
} engine_slot_t;

/** Take a reference, loading the providers if none is held. */
cdnn_status_t registry_acquire(void);
void registry_release(void);

int32_t registry_engine_count(void);
const engine_slot_t *registry_engine(int32_t index);
/** The engine with this id, or NULL. */
const engine_slot_t *registry_find(uint64_t id);

/** What cdnn offers providers (logging, graph bytes); see engine/host.c. */
extern const cdnn_provider_host_t provider_host;

/** The provider's message for the calling thread's last failure. */
const char *registry_provider_error(const provider_slot_t *provider);

#endif
