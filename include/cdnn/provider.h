/*
 * provider.h -- the ABI between cdnn and its engine providers.
 *
 * A provider is a shared object in a provider directory that exports one
 * function, CDNN_PROVIDER_ENTRY_SYMBOL, returning a pointer to a static
 * cdnn_provider_t.  The table is stamped with the ABI major and minor it was
 * built against:
 *
 *   - a major other than CDNN_PROVIDER_ABI_MAJOR is rejected at load with a
 *     log line naming both majors;
 *   - a minor adds members only at the end of the table; cdnn reads a member
 *     only if struct_size covers it, so an older provider keeps working.
 *
 * Engines are addressed by their index in the provider (0 <= i <
 * engine_count).  cdnn derives each engine's public id from its name
 * (64-bit FNV-1a); providers never hash.  When two providers name the same
 * engine, the first loaded keeps it and the second's is dropped with a
 * warning.
 *
 * Every function returns a cdnn_status_t.  On failure the provider leaves a
 * message for the calling thread that last_error() returns; cdnn keeps it
 * in its own message, in the provider's words, prefixed with the engine.
 * Providers must be thread-safe in the same way as the public API: execute
 * is called on one context from many threads at once.
 */
#ifndef CDNN_PROVIDER_H
#define CDNN_PROVIDER_H

#include <cdnn/cdnn.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CDNN_PROVIDER_ABI_MAJOR 1
#define CDNN_PROVIDER_ABI_MINOR 4

/** The symbol each provider exports: const cdnn_provider_t *f(void). */
#define CDNN_PROVIDER_ENTRY_SYMBOL "cdnn_provider_entry"

/* ------------------------------------------------------------------------
 * What cdnn shows a provider of a graph: a read-only, validated view.
 * Every shape is inferred, every type resolved (never UNSET), nodes are in
 * topological order, and tensor uids are unique.
 * ------------------------------------------------------------------------ */

typedef struct cdnn_tensor_view {
    int64_t uid;
    const char *name;
    cdnn_data_type_t type;
    int32_t rank;
    int64_t dims[CDNN_MAX_RANK];
    int64_t strides[CDNN_MAX_RANK]; /* in elements */
    int64_t alignment;              /* bytes; 0 when not declared */
    int32_t is_virtual;
    int32_t is_scalar;              /* pass-by-value: see scalar_value */
    double scalar_value;
} cdnn_tensor_view_t;

typedef enum cdnn_op {
    CDNN_OP_CONV_FWD = 0,
    CDNN_OP_CONV_BWD_DATA,
    CDNN_OP_CONV_BWD_FILTER,
    CDNN_OP_MATMUL,
    CDNN_OP_POINTWISE,
    CDNN_OP_REDUCTION,
    CDNN_OP_BATCHNORM_INFERENCE,
    CDNN_OP_LAYERNORM,
    CDNN_OP_RMSNORM,
    CDNN_OP_SDPA_FWD,
    /* ABI 1.3 (graph format 1.2): */
    CDNN_OP_SOFTMAX,
    CDNN_OP_LOG_SOFTMAX,
    CDNN_OP_RESHAPE,
    CDNN_OP_TRANSPOSE,
    CDNN_OP_CONCAT,
    CDNN_OP_SLICE,
    CDNN_OP_ARGMAX,
    CDNN_OP_ARGMIN,
    CDNN_OP_PAD,
    /* ABI 1.4 (graph format 1.3): */
    CDNN_OP_SDPA_BWD,
    CDNN_OP_GATHER,
    CDNN_OP_GATHER_ELEMENTS,
    CDNN_OP_TOPK,
    CDNN_OP_POOLING_FWD,
    CDNN_OP_POOLING_BWD,
    CDNN_OP_RESIZE,
    CDNN_OP_BATCHNORM_TRAIN,
    CDNN_OP_BATCHNORM_RUNNING_STATS,
    CDNN_OP_BATCHNORM_BWD,
    CDNN_OP_LAYERNORM_BWD,
    CDNN_OP_RMSNORM_BWD,
    CDNN_OP_COUNT
} cdnn_op_t;

/** Short name of an op ("conv_fwd", "sdpa_fwd", ...) or "invalid". */
CDNN_API const char *cdnn_op_name(cdnn_op_t op);

#define CDNN_NODE_MAX_INPUTS 5
#define CDNN_NODE_MAX_OUTPUTS 3

/*
 * Ports.  A node's inputs and outputs are numbered by port, in the order of
 * the op's builder call (cdnn_graph_conv_fwd takes x, w, y: inputs 0 and 1,
 * output 0); the graph format's Port slots are the same numbers.  An
 * absent optional port is -1 in a node view.  cdnn_op_port_info says, for
 * any op, how many ports it has, their names and which are optional;
 * docs/FORMATS.md section 2 lists them.
 */
typedef struct cdnn_op_port_info {
    int32_t input_count;     /* input ports: 0 .. input_count - 1 */
    int32_t required_inputs; /* ports below this are required, the rest optional */
    const char *input_names[CDNN_NODE_MAX_INPUTS]; /* "x", ...; NULL past the count */
    int32_t output_count;
    int32_t required_outputs;
    const char *output_names[CDNN_NODE_MAX_OUTPUTS];
    /* Nonzero when the node's mode decides its inputs: a POINTWISE node
     * takes exactly cdnn_pointwise_arity(mode) of (a, b, c), and the
     * counts above are its fewest and most. */
    int32_t inputs_by_mode;
} cdnn_op_port_info_t;

/** Fill *info with op's ports (the names are static strings).  BAD_PARAM
 * for a value that is not a cdnn_op_t, so that asking for 0, 1, ... until
 * a failure lists every op this cdnn knows. */
CDNN_API cdnn_status_t cdnn_op_port_info(cdnn_op_t op, cdnn_op_port_info_t *info);

/** An op's attributes; the member is chosen by the op. */
typedef union cdnn_node_attr {
    cdnn_conv_attr_t conv;           /* CONV_* */
    cdnn_pointwise_attr_t pointwise; /* POINTWISE */
    cdnn_reduction_mode_t reduction; /* REDUCTION */
    double epsilon;                  /* BATCHNORM_INFERENCE, BATCHNORM_TRAIN,
                                      * LAYERNORM, RMSNORM */
    cdnn_sdpa_attr_t sdpa;           /* SDPA_FWD, SDPA_BWD */
    int32_t axis;                    /* SOFTMAX, LOG_SOFTMAX, CONCAT, ARGMAX,
                                      * ARGMIN, GATHER, GATHER_ELEMENTS: in a
                                      * validated view 0 .. rank - 1 (the
                                      * caller's negative axis counted from
                                      * the end) */
    cdnn_transpose_attr_t transpose; /* TRANSPOSE */
    cdnn_slice_attr_t slice;         /* SLICE */
    cdnn_pad_attr_t pad;             /* PAD */
    cdnn_topk_attr_t topk;           /* TOPK: axis 0 .. rank - 1 in a
                                      * validated view, as above */
    cdnn_pooling_attr_t pooling;     /* POOLING_FWD, POOLING_BWD */
    cdnn_resize_attr_t resize;       /* RESIZE */
    double momentum;                 /* BATCHNORM_RUNNING_STATS: the weight
                                      * of the batch's statistics, 0 .. 1 */
} cdnn_node_attr_t;

typedef struct cdnn_node_view {
    cdnn_op_t op;
    const char *name;
    int32_t inputs[CDNN_NODE_MAX_INPUTS];   /* index into tensors, or -1 */
    int32_t outputs[CDNN_NODE_MAX_OUTPUTS]; /* index into tensors, or -1 */
    cdnn_node_attr_t attr;
} cdnn_node_view_t;

typedef struct cdnn_graph_view {
    uint32_t struct_size;
    int32_t tensor_count;
    const cdnn_tensor_view_t *tensors;
    int32_t node_count;
    const cdnn_node_view_t *nodes; /* topological order */
    cdnn_data_type_t compute_type;
} cdnn_graph_view_t;

/* ------------------------------------------------------------------------
 * Devices
 * ------------------------------------------------------------------------ */

typedef enum cdnn_device_kind {
    CDNN_DEVICE_CPU = 0,
    CDNN_DEVICE_CUDA = 1,
} cdnn_device_kind_t;

typedef struct cdnn_device_view {
    uint32_t struct_size;
    cdnn_device_kind_t kind;
    int32_t ordinal;         /* CUDA device number; 0 on the CPU */
    int32_t arch;            /* CUDA: 10 * major + minor (90 = sm_90); 0 */
    void *cuda_context;      /* CUcontext (primary) or NULL */
    const char *name;        /* e.g. "cpu", "NVIDIA H200" */
    int32_t cpu_threads;     /* threads an engine may use */
} cdnn_device_view_t;

/* ------------------------------------------------------------------------
 * What cdnn gives a provider
 * ------------------------------------------------------------------------ */

typedef struct cdnn_provider_host {
    uint32_t struct_size;
    /** Log a line; level as cdnn_log_level_t.  Thread-safe. */
    void (*log)(cdnn_log_level_t level, const char *message);

    /* Graph bytes for providers whose payload must carry the graph (the
     * CPU provider's engines run from the graph itself).  The bytes are the
     * graph format of schema/graph.fbs, so a payload never invents a graph
     * format of its own. */

    /** Encode a view as graph bytes; *bytes is released with release_bytes. */
    cdnn_status_t (*graph_encode)(const cdnn_graph_view_t *view,
                                  uint8_t **bytes, size_t *size);
    void (*release_bytes)(uint8_t *bytes);
    /** Decode and validate graph bytes (treated as hostile).  *view lives
     * until release_graph(*token). */
    cdnn_status_t (*graph_decode)(const uint8_t *bytes, size_t size,
                                  const cdnn_graph_view_t **view,
                                  void **token);
    void (*release_graph)(void *token);
    /** The calling thread's cdnn message, after a failed host call. */
    const char *(*last_error)(void);
} cdnn_provider_host_t;

typedef struct cdnn_knob_value {
    const char *name;
    int64_t value;
} cdnn_knob_value_t;

typedef struct cdnn_exec_args {
    uint32_t struct_size;
    int32_t count;
    const int64_t *uids;
    void *const *ptrs;
    void *workspace;
    void *stream; /* CUstream on CUDA devices */
} cdnn_exec_args_t;

typedef struct cdnn_provider_engine {
    const char *name; /* "<provider>:<engine>", stable forever */
    /** Build order among applicable engines: higher goes first. */
    int32_t rank;
    /** The payload format context_save writes and context_restore reads.
     * A saved plan loads if its payload major equals this major and its
     * minor is at most this minor. */
    uint16_t payload_major;
    uint16_t payload_minor;
} cdnn_provider_engine_t;

/* ------------------------------------------------------------------------
 * The table
 * ------------------------------------------------------------------------ */

typedef struct cdnn_provider {
    uint32_t abi_major;
    uint32_t abi_minor;
    uint32_t struct_size; /* sizeof(cdnn_provider_t) as the provider saw it */
    const char *name;     /* e.g. "cpu" */
    const char *version;  /* e.g. "0.1.0" */

    /** Set up; *state is passed back to every other call.  A failure skips
     * the provider with a log line carrying last_error(). */
    cdnn_status_t (*init)(const cdnn_provider_host_t *host, void **state);
    void (*fini)(void *state);

    int32_t (*engine_count)(void *state);
    cdnn_status_t (*engine_info)(void *state, int32_t engine,
                                 cdnn_provider_engine_t *info);

    /** SUCCESS if the engine can run the graph on the device; otherwise
     * NOT_SUPPORTED with a reason in last_error(). */
    cdnn_status_t (*applicable)(void *state, int32_t engine,
                                const cdnn_device_view_t *device,
                                const cdnn_graph_view_t *graph);

    /** Prepare to run: everything that can be done once is done here.  The
     * context may keep pointers into neither view: copy what it needs. */
    cdnn_status_t (*context_create)(void *state, int32_t engine,
                                    const cdnn_device_view_t *device,
                                    const cdnn_graph_view_t *graph,
                                    const cdnn_knob_value_t *knobs,
                                    int32_t knob_count, void **context);
    cdnn_status_t (*workspace_size)(void *context, size_t *bytes);
    /** Called from many threads at once on one context. */
    cdnn_status_t (*execute)(void *context, const cdnn_exec_args_t *args);
    void (*context_destroy)(void *context);

    /** The calling thread's message for the provider's last failure. */
    const char *(*last_error)(void *state);

    /* Optional (both NULL when the provider cannot save plans). */

    /** Write the context's payload: with buf NULL set *size only; with cap
     * too small fail with SIZE_INSUFFICIENT.  The same context must give
     * the same bytes every time. */
    cdnn_status_t (*context_save)(void *context, void *buf, size_t cap,
                                  size_t *size);
    /** Make a context from a payload that context_save wrote, possibly in
     * another process or with an older provider version.  The payload is
     * hostile until checked.  graph is the plan's graph when the plan was
     * loaded together with it, else NULL. */
    cdnn_status_t (*context_restore)(void *state, int32_t engine,
                                     const cdnn_device_view_t *device,
                                     const cdnn_graph_view_t *graph,
                                     const void *payload, size_t size,
                                     void **context);

    /* ABI 1.1 (optional; read only when struct_size covers them). */

    /** Knobs the engine reads, for listing and for validating knob values
     * at build.  NULL: the engine has none. */
    int32_t (*knob_count)(void *state, int32_t engine);
    cdnn_status_t (*knob_info)(void *state, int32_t engine, int32_t index,
                               cdnn_knob_info_t *info);

    /** Variants benchmarking should time for this graph besides the
     * engine's default: each a value of one of its knobs.  NULL or 0: the
     * default only. */
    int32_t (*variant_count)(void *state, int32_t engine,
                             const cdnn_device_view_t *device,
                             const cdnn_graph_view_t *graph);
    cdnn_status_t (*variant_knob)(void *state, int32_t engine,
                                  const cdnn_device_view_t *device,
                                  const cdnn_graph_view_t *graph, int32_t index,
                                  cdnn_knob_value_t *knob);

    /** Strict mode (CDNN_TRUSTED_CODE=pack, docs/CONTRACT.md rule 10):
     * SUCCESS only if every code object in the payload is present, by
     * SHA-256, in a kernel pack installed here; a payload with no code
     * object vouches trivially.  NULL: the provider cannot vouch, and
     * strict mode refuses its plans. */
    cdnn_status_t (*code_trusted)(void *state, int32_t engine,
                                  const void *payload, size_t size);

    /* ABI 1.2 (optional; read only when struct_size covers them). */

    /** The validated graph a RESTORED context runs: the graph its payload
     * describes, after the provider has checked every other part of the
     * payload against it (knobs, launch values, code object).  A payload's
     * digest proves only that its bytes are intact, not that its parts
     * agree, so cdnn derives the plan's tensor table (every pointer's span,
     * type, alignment and role) and its content key from this graph and
     * refuses the plan when the plan's record says otherwise.  The context
     * must never touch more memory than this graph implies.  The view lives
     * as long as the context.  A provider without it cannot load plans:
     * cdnn refuses them rather than trust an unchecked tensor table. */
    cdnn_status_t (*context_graph)(void *context,
                                   const cdnn_graph_view_t **graph);

    /* Asynchronous engines (ABI 1.2, optional): an engine whose execute
     * may return before its work is done.  Two calls, because a GPU
     * provider and an asynchronous CPU provider both need the same two
     * things and neither can be built from the other: a wait, so that
     * outputs are there when cdnn says so, and a clock that times the work
     * rather than its enqueue.  A provider may offer synchronize alone;
     * on a CPU device time_execute alone is not enough, since a CPU
     * caller's outputs must be written when cdnn_graph_execute returns. */

    /** Wait until every execute of this context enqueued on `stream`
     * (NULL on the CPU) has finished and its outputs are written.  A
     * caller on a CPU handle has no stream to wait on, so cdnn calls this
     * after every execute on a CPU device before cdnn_graph_execute
     * returns; on a CUDA device execute stays asynchronous, as with
     * cuDNN, and the caller synchronizes its stream.  While benchmarking
     * an engine without time_execute, cdnn times execute plus this call
     * with the host clock.  Called from many threads at once, like
     * execute.  NULL: execute finishes its work before it returns
     * (required of CPU engines without it). */
    cdnn_status_t (*synchronize)(void *context, void *stream);
    /** Run `runs` executes back to back on args->stream, wait for them,
     * and report in *seconds the time the device spent on them, by the
     * device's own clock: CUDA events recorded on the stream around the
     * launches, or the worker's clock of an asynchronous CPU engine.  The
     * host's time to enqueue is not the engine's cost: timing it is how a
     * benchmark of an asynchronous engine records the wrong winner.  cdnn
     * asks for several runs at once when one is short, so that the launch
     * gap does not dominate a short kernel.  NULL: cdnn uses the host
     * clock around execute and synchronize, and on a device with streams
     * (CUDA) leaves an engine with neither call out of benchmarking. */
    cdnn_status_t (*time_execute)(void *context, const cdnn_exec_args_t *args,
                                  int32_t runs, double *seconds);
} cdnn_provider_t;

typedef const cdnn_provider_t *(*cdnn_provider_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* CDNN_PROVIDER_H */
