/*
 * plan.h -- a built plan: the engine that won, its execution context and
 * the device it is bound to.  Owned by its graph.
 */
#ifndef CDNN_ENGINE_PLAN_H
#define CDNN_ENGINE_PLAN_H

#include <stddef.h>

#include <cdnn/provider.h>

#include "engine/registry.h"

typedef struct plan {
    const engine_slot_t *engine;
    void *context;
    size_t workspace;
    cdnn_device_kind_t device_kind;
    int32_t device_ordinal;
    char device_string[32];
} plan_t;

/** Destroy a plan and drop its provider reference.  NULL is ignored. */
void plan_destroy(plan_t *plan);

#endif
