/*
 * plan.h -- a built or loaded plan.
 *
 * A plan holds one or more candidates (an engine, one of its variants, and
 * an execution context).  A plain plan has one, chosen at build.  A
 * benchmarking plan has several and chooses at its first execute: it times
 * them all under choose_lock and publishes the winner in `chosen` with a
 * release store; every execute reads `chosen` with an acquire load, so the
 * choice is made once and later executes never take the lock.
 */
#ifndef CDNN_ENGINE_PLAN_H
#define CDNN_ENGINE_PLAN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <cdnn/provider.h>

#include "engine/registry.h"
#include "format/plan_format.h"

/* Whose clock timed a candidate: the engine's own (time_execute, provider
 * ABI 1.2), or the host's around execute and synchronize. */
typedef enum timing_clock {
    TIMING_CLOCK_HOST = 0,
    TIMING_CLOCK_DEVICE,
} timing_clock_t;

typedef struct candidate {
    const engine_slot_t *engine;
    void *context;             /* NULL until created (see build.c) */
    size_t workspace;
    cdnn_knob_value_t variant; /* name owned; NULL: the engine's default */
    char *label;               /* "engine [knob=value]" */
    double median_us;          /* < 0 until timed */
    int32_t runs;
    timing_clock_t clock;      /* once timed */
} candidate_t;

typedef struct plan {
    candidate_t *candidates; /* ranked fastest first once chosen */
    int32_t candidate_count;
    _Atomic(candidate_t *) chosen;
    pthread_mutex_t choose_lock;
    size_t workspace; /* covers every candidate */

    cdnn_device_kind_t device_kind;
    int32_t device_ordinal;
    int32_t device_arch;
    char device_string[32];
    char device_key[160];    /* for the winner cache */
    plan_tensor_t *tensors;  /* what the variant pack must hold */
    uint32_t tensor_count;
    uint8_t content_key[32]; /* of the graph the plan was built from */
    int cache_enabled;       /* write the choice to the winner cache */
    char *knob_key;          /* the user's engine knobs, canonical: part of
                                the winner cache's key (owned; may be NULL) */
    cdnn_progress_fn progress;
    void *progress_user;

    /* The plan's bytes: those it was loaded from, or those its first save
     * made.  Set once under save_lock, then never changed (rules 1, 9). */
    pthread_mutex_t save_lock;
    uint8_t *saved;
    size_t saved_size;
} plan_t;

/** An empty plan bound to h's device; takes a provider reference. */
cdnn_status_t plan_create(const cdnn_handle_t *h, plan_t **out);

/**
 * Add a candidate (context taken over: destroyed on failure).  variant may
 * be NULL.  context may be NULL: a candidate known by its label only,
 * until plan_give_context.
 */
cdnn_status_t plan_add_candidate(plan_t *plan, const engine_slot_t *e, void *context,
                                 size_t workspace, const cdnn_knob_value_t *variant);

/** Give candidate i, added without one, its context (taken over). */
void plan_give_context(plan_t *plan, int32_t i, void *context, size_t workspace);

/** Remove candidate i (its context destroyed); later ones move down. */
void plan_remove_candidate(plan_t *plan, int32_t i);

/** Make candidate i the plan's only one, chosen: a plain plan. */
void plan_keep_only(plan_t *plan, int32_t i);

/**
 * Whether benchmarking can time e on device: on a device with streams an
 * engine's execute may return before its work is done, so the host clock
 * needs the engine's synchronize, or the engine its own clock.
 */
int plan_can_time_engine(const engine_slot_t *e, const cdnn_device_view_t *device);

/** Destroy a plan and drop its provider reference.  NULL is ignored. */
void plan_destroy(plan_t *plan);

/** The chosen candidate, or NULL before a benchmarking plan has chosen. */
candidate_t *plan_chosen(const plan_t *plan);

#endif
