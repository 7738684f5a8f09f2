/*
 * match.h -- the named match functions: does an engine's kernel family run
 * this graph, within the constraints its descriptor states?
 *
 * A descriptor (a kernels/<family> .json file, compiled into a pack's engine
 * entry) names its match function and states constraints as JSON; the
 * provider parses them once, when it reads the pack, and an engine whose
 * match function or constraints it does not know is skipped with a log
 * line rather than run on guesses.
 */
#ifndef CDNN_KERNELS_MATCH_H
#define CDNN_KERNELS_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>

/* The keys a descriptor's "constraints" may hold, as bits. */
enum {
    CONSTRAINT_DTYPES = 1u << 0,    /* ["f32", ...]: the types of the inputs */
    CONSTRAINT_MAX_RANK = 1u << 1,  /* the highest tensor rank */
    CONSTRAINT_ALIGNMENT = 1u << 2, /* bytes tensors in memory must declare */
    CONSTRAINT_EPILOGUE = 1u << 3,  /* ["bias", "relu", ...]: fused steps */
};

/* What a descriptor's constraints say; absent keys constrain nothing. */
typedef struct engine_constraints {
    uint32_t given; /* CONSTRAINT_* bits of the keys present */
    uint32_t dtypes; /* bit per cdnn_data_type_t */
    int32_t max_rank;
    int64_t alignment;
    uint32_t epilogue; /* bits of the epilogue steps allowed */
} engine_constraints_t;

/** Parse a descriptor's constraints (compact JSON); -1 with the reason in
 * why for JSON that is not an object of the keys above. */
int engine_constraints_parse(const char *json, engine_constraints_t *c, char *why,
                             size_t why_cap);

typedef struct match_function {
    const char *name;
    uint32_t honored; /* the CONSTRAINT_* keys it reads */
    /** SUCCESS if g is one for the engine; NOT_SUPPORTED and why. */
    cdnn_status_t (*applies)(const engine_constraints_t *c, const cdnn_graph_view_t *g);
} match_function_t;

/** The match function of that name, or NULL. */
const match_function_t *match_function_find(const char *name);

#endif
