/*
 * cpu_engine.h -- what every engine of the CPU provider implements, and the
 * helpers they share.
 *
 * provider.c owns the ABI table; each engine is one cpu_engine_t in its own
 * file.  The provider checks the device kind before asking an engine
 * anything, so engines see only CPU devices.
 */
#ifndef CDNN_CPU_ENGINE_H
#define CDNN_CPU_ENGINE_H

#include <stddef.h>

#include <cdnn/provider.h>
#include <cdnn_sdk/error.h>

/* What runs an engine; its name, rank and knobs are its row in the
 * provider's engine table (provider.c). */
typedef struct cpu_engine {
    cdnn_status_t (*applicable)(const cdnn_graph_view_t *graph);
    /** device->cpu_threads bounds the threads an engine may use. */
    cdnn_status_t (*create)(const cdnn_device_view_t *device,
                            const cdnn_graph_view_t *graph,
                            const cdnn_knob_value_t *knobs, int32_t knob_count,
                            void **context);
    cdnn_status_t (*workspace_size)(void *context, size_t *bytes);
    cdnn_status_t (*execute)(void *context, const cdnn_exec_args_t *args);
    void (*destroy)(void *context);
} cpu_engine_t;

extern const cpu_engine_t cpu_reference_engine;
extern const cpu_engine_t cpu_blas_matmul_engine;
extern const cpu_engine_t cpu_blas_conv_engine;
extern const cpu_engine_t cpu_fused_pointwise_engine;
extern const cpu_engine_t cpu_softmax_engine;
extern const cpu_engine_t cpu_copy_engine;
extern const cpu_engine_t cpu_index_engine;
extern const cpu_engine_t cpu_pool_engine;
extern const cpu_engine_t cpu_resize_engine;
extern const cpu_engine_t cpu_norm_train_engine;
extern const cpu_engine_t cpu_sdpa_bwd_engine;

/** A deep copy of a graph view that an engine context can keep. */
typedef struct cpu_graph {
    cdnn_graph_view_t view;
    cdnn_tensor_view_t *tensors;
    cdnn_node_view_t *nodes;
    char *names; /* every name, NUL-separated; views point into it */
} cpu_graph_t;

cdnn_status_t cpu_graph_copy(cpu_graph_t *dst, const cdnn_graph_view_t *src);
void cpu_graph_free(cpu_graph_t *g);

/**
 * One pointer per tensor of g (by index) from the variant pack: NULL for
 * virtual and scalar tensors.  Fails if a needed tensor has no pointer.
 */
cdnn_status_t cpu_bind_tensors(const cdnn_graph_view_t *g,
                               const cdnn_exec_args_t *args, void **ptrs);

/** Number of elements of a tensor (product of dims). */
int64_t cpu_tensor_elements(const cdnn_tensor_view_t *t);

/** True when strides are packed row-major for the dims. */
int cpu_tensor_is_packed(const cdnn_tensor_view_t *t);

/** The value of a knob by name, or fallback when it is not set. */
int64_t cpu_knob(const cdnn_knob_value_t *knobs, int32_t count,
                 const char *name, int64_t fallback);

#endif
