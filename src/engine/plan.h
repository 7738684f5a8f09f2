/*
 * plan.h -- a built or loaded plan: the engine, its execution context, the
 * device it is bound to, the tensors it reads and writes, and the bytes it
 * saves to.  Owned by its graph.
 */
#ifndef CDNN_ENGINE_PLAN_H
#define CDNN_ENGINE_PLAN_H

#include <pthread.h>
#include <stddef.h>

#include <cdnn/provider.h>

#include "engine/registry.h"
#include "format/plan_format.h"

typedef struct plan {
    const engine_slot_t *engine;
    void *context;
    size_t workspace;
    cdnn_device_kind_t device_kind;
    int32_t device_ordinal;
    int32_t device_arch;
    char device_string[32];
    plan_tensor_t *tensors; /* what the variant pack must hold */
    uint32_t tensor_count;
    uint8_t content_key[32]; /* of the graph the plan was built from */

    /* The plan's bytes: those it was loaded from, or those its first save
     * made.  Set once under save_lock, then never changed (rules 1, 9). */
    pthread_mutex_t save_lock;
    uint8_t *saved;
    size_t saved_size;
} plan_t;

/**
 * A plan for engine e with context (taken over, destroyed on failure), on
 * the device of handle h; takes a provider reference.
 */
cdnn_status_t plan_create(const engine_slot_t *e, void *context,
                          const cdnn_handle_t *h, plan_t **out);

/** Destroy a plan and drop its provider reference.  NULL is ignored. */
void plan_destroy(plan_t *plan);

#endif
