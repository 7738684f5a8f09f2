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

#include <stddef.h>

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

/* A member of a provider's table exists if the table is long enough: how
 * optional members of later ABI minors are read. */
#define PROVIDER_HAS(table, member)                                            \
    (offsetof(cdnn_provider_t, member) + sizeof((table)->member) <=           \
     (table)->struct_size && (table)->member != NULL)

/* The optional ABI 1.1 calls, answering "none" for older providers. */
int32_t engine_knob_count(const engine_slot_t *e);
cdnn_status_t engine_knob_info(const engine_slot_t *e, int32_t index,
                               cdnn_knob_info_t *info);
int32_t engine_variant_count(const engine_slot_t *e, const cdnn_device_view_t *device,
                             const cdnn_graph_view_t *graph);
cdnn_status_t engine_variant_knob(const engine_slot_t *e,
                                  const cdnn_device_view_t *device,
                                  const cdnn_graph_view_t *graph, int32_t index,
                                  cdnn_knob_value_t *knob);

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
