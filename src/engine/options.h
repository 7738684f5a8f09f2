/* options.h -- build options as build.c reads them. */
#ifndef CDNN_ENGINE_OPTIONS_H
#define CDNN_ENGINE_OPTIONS_H

#include <cdnn/provider.h>

struct cdnn_build_options {
    int has_pinned, has_preferred;
    uint64_t pinned, preferred;
    cdnn_knob_value_t *knobs; /* names owned */
    int32_t knob_count;
    cdnn_progress_fn progress;
    void *progress_user;
};

/** A knob's value, or fallback when it is not set (opts may be NULL). */
int64_t options_knob(const cdnn_build_options_t *opts, const char *name,
                     int64_t fallback);

/** Whether to benchmark: $CDNN_FORCE_BENCHMARKING, else the knob. */
int options_benchmarking(const cdnn_build_options_t *opts);

/**
 * Check what a build reads besides the graph: $CDNN_FORCE_BENCHMARKING (0, 1
 * or unset; it overrides the global.benchmarking knob) and every engine knob
 * against what the loaded providers declare.
 */
cdnn_status_t options_check_engine_knobs(const cdnn_build_options_t *opts);

#endif
