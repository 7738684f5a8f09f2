/*
 * options.c -- build options and knobs: the library's own (global.*) and
 * those engines declare (<provider>.<category>.<name>).
 */
#include "engine/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "core/error.h"
#include "engine/handle.h"
#include "engine/registry.h"

static const cdnn_knob_info_t global_knobs[] = {
    {"global.benchmarking",
     "1: time every candidate at the first execute and keep the fastest "
     "($CDNN_FORCE_BENCHMARKING overrides)", 0, 1, 0},
    {"global.workspace_limit",
     "most workspace bytes an engine may need; -1: no limit", -1, INT64_MAX, -1},
};
#define GLOBAL_KNOB_COUNT ((int32_t)(sizeof global_knobs / sizeof global_knobs[0]))

cdnn_status_t cdnn_global_knob_info(int32_t index, cdnn_knob_info_t *info)
{
    CDNN_CHECK_ARG(info);
    if (index < 0 || index >= GLOBAL_KNOB_COUNT)
        return cdnn_fail(CDNN_STATUS_NOT_FOUND, "there is no global knob number %d",
                         index);
    *info = global_knobs[index];
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_build_options_create(cdnn_build_options_t **opts)
{
    CDNN_CHECK_ARG(opts);
    *opts = calloc(1, sizeof **opts);
    if (!*opts)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    return CDNN_STATUS_SUCCESS;
}

void cdnn_build_options_destroy(cdnn_build_options_t *opts)
{
    if (!opts)
        return;
    for (int32_t i = 0; i < opts->knob_count; i++)
        free((char *)opts->knobs[i].name);
    free(opts->knobs);
    free(opts);
}

cdnn_status_t cdnn_build_options_pin_engine(cdnn_build_options_t *opts,
                                            uint64_t engine_id)
{
    CDNN_CHECK_ARG(opts);
    opts->has_pinned = 1;
    opts->pinned = engine_id;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_build_options_prefer_engine(cdnn_build_options_t *opts,
                                               uint64_t engine_id)
{
    CDNN_CHECK_ARG(opts);
    opts->has_preferred = 1;
    opts->preferred = engine_id;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_build_options_set_progress(cdnn_build_options_t *opts,
                                              cdnn_progress_fn fn, void *user)
{
    CDNN_CHECK_ARG(opts);
    opts->progress = fn;
    opts->progress_user = user;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_range(const cdnn_knob_info_t *k, int64_t value)
{
    if (value >= k->min_value && value <= k->max_value)
        return CDNN_STATUS_SUCCESS;
    return cdnn_fail(CDNN_STATUS_BAD_PARAM, "knob %s is %lld; it must be in "
                     "[%lld, %lld] (%s)", k->name, (long long)value,
                     (long long)k->min_value, (long long)k->max_value, k->description);
}

static cdnn_status_t check_global_knob(const char *name, int64_t value)
{
    for (int32_t i = 0; i < GLOBAL_KNOB_COUNT; i++)
        if (strcmp(name, global_knobs[i].name) == 0)
            return check_range(&global_knobs[i], value);
    return cdnn_fail(CDNN_STATUS_BAD_PARAM, "unknown knob %s; the global knobs "
                     "are global.benchmarking and global.workspace_limit", name);
}

cdnn_status_t cdnn_build_options_set_knob(cdnn_build_options_t *opts,
                                          const char *name, int64_t value)
{
    CDNN_CHECK_ARG(opts);
    CDNN_CHECK_ARG(name);
    const char *dot = strchr(name, '.');
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (strncmp(name, "global.", 7) == 0)
        st = check_global_knob(name, value);
    else if (!dot || dot == name || !strchr(dot + 1, '.'))
        st = cdnn_fail(CDNN_STATUS_BAD_PARAM, "knob \"%s\" is not named "
                       "global.<name> or <provider>.<category>.<name>", name);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    for (int32_t i = 0; i < opts->knob_count; i++)
        if (strcmp(opts->knobs[i].name, name) == 0) {
            opts->knobs[i].value = value;
            return CDNN_STATUS_SUCCESS;
        }
    cdnn_knob_value_t *grown =
        realloc(opts->knobs, (size_t)(opts->knob_count + 1) * sizeof *grown);
    char *copy = strdup(name);
    if (!grown || !copy) {
        free(copy);
        if (grown)
            opts->knobs = grown;
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    opts->knobs = grown;
    opts->knobs[opts->knob_count++] = (cdnn_knob_value_t){copy, value};
    return CDNN_STATUS_SUCCESS;
}

int64_t options_knob(const cdnn_build_options_t *opts, const char *name,
                     int64_t fallback)
{
    for (int32_t i = 0; opts && i < opts->knob_count; i++)
        if (strcmp(opts->knobs[i].name, name) == 0)
            return opts->knobs[i].value;
    return fallback;
}

int options_benchmarking(const cdnn_build_options_t *opts)
{
    const char *forced = env_get(CDNN_ENV_FORCE_BENCHMARKING);
    if (forced && (strcmp(forced, "0") == 0 || strcmp(forced, "1") == 0))
        return forced[0] == '1';
    return options_knob(opts, "global.benchmarking", 0) != 0;
}

/* The declaration of knob `name` by any loaded engine, or NULL. */
static int find_declared_knob(const char *name, cdnn_knob_info_t *info)
{
    for (int32_t e = 0; e < registry_engine_count(); e++) {
        const engine_slot_t *slot = registry_engine(e);
        for (int32_t k = 0; k < engine_knob_count(slot); k++)
            if (engine_knob_info(slot, k, info) == CDNN_STATUS_SUCCESS &&
                strcmp(info->name, name) == 0)
                return 1;
    }
    return 0;
}

/* $CDNN_FORCE_BENCHMARKING overrides the global.benchmarking knob, so a
 * value that is neither 0 nor 1 is refused rather than ignored: a typo
 * ("yes", " 1") would otherwise silently leave benchmarking to the knob. */
static cdnn_status_t check_forced_benchmarking(void)
{
    const char *forced = env_get(CDNN_ENV_FORCE_BENCHMARKING);
    if (!forced || strcmp(forced, "0") == 0 || strcmp(forced, "1") == 0)
        return CDNN_STATUS_SUCCESS;
    if (!*forced)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "CDNN_FORCE_BENCHMARKING is set but "
                         "empty; set it to 1 (benchmark every build) or 0 (never), or "
                         "unset it (unset CDNN_FORCE_BENCHMARKING) to follow the "
                         "global.benchmarking knob");
    return cdnn_fail(CDNN_STATUS_BAD_PARAM, "CDNN_FORCE_BENCHMARKING=\"%.64s\" is not "
                     "an accepted value; set it to exactly 1 (benchmark every build) "
                     "or 0 (never), or unset it to follow the global.benchmarking knob",
                     forced);
}

cdnn_status_t options_check_engine_knobs(const cdnn_build_options_t *opts)
{
    cdnn_status_t st = check_forced_benchmarking();
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    for (int32_t i = 0; opts && i < opts->knob_count; i++) {
        const cdnn_knob_value_t *k = &opts->knobs[i];
        cdnn_knob_info_t info;
        if (strncmp(k->name, "global.", 7) == 0)
            continue;
        if (!find_declared_knob(k->name, &info))
            return cdnn_fail(CDNN_STATUS_BAD_PARAM, "knob %s is declared by no loaded "
                             "engine; `cdnn engines --knobs` lists them", k->name);
        if ((st = check_range(&info, k->value)) != CDNN_STATUS_SUCCESS)
            return st;
    }
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_handle_engine_knob_count(const cdnn_handle_t *handle,
                                            int32_t engine_index, int32_t *count)
{
    CDNN_CHECK_ARG(handle);
    CDNN_CHECK_ARG(count);
    const engine_slot_t *e = registry_engine(engine_index);
    if (!e)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "engine index %d is out of range",
                         engine_index);
    *count = engine_knob_count(e);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_handle_engine_knob_info(const cdnn_handle_t *handle,
                                           int32_t engine_index, int32_t knob_index,
                                           cdnn_knob_info_t *info)
{
    CDNN_CHECK_ARG(handle);
    CDNN_CHECK_ARG(info);
    const engine_slot_t *e = registry_engine(engine_index);
    if (!e)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "engine index %d is out of range",
                         engine_index);
    return engine_knob_info(e, knob_index, info);
}
