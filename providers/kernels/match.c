#include "match.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include <cdnn_sdk/error.h>

#include "conv_cuda_pattern.h"
#include "conv_host_pattern.h"
#include "matmul_pattern.h"
#include "norm_pattern.h"
#include "pointwise_program.h"
#include "reduce_pattern.h"
#include "sdpa_pattern.h"
#include "softmax_pattern.h"

/* ---- constraints ------------------------------------------------------------------ */

/* The epilogue steps a matmul descriptor may allow, by bit. */
static const char *const epilogue_steps[] = {"bias", "add", "relu", "gelu",
                                             "gelu_tanh", "silu", "tanh"};
enum { EPILOGUE_BIAS, EPILOGUE_RESIDUAL, EPILOGUE_FIRST_ACTIVATION };
#define EPILOGUE_STEP_COUNT (int)(sizeof epilogue_steps / sizeof *epilogue_steps)

static int epilogue_bit(const char *name)
{
    for (int i = 0; i < EPILOGUE_STEP_COUNT; i++)
        if (strcmp(name, epilogue_steps[i]) == 0)
            return i;
    return -1;
}

static int dtype_of_name(const char *name)
{
    for (int t = 1; t < CDNN_DATA_TYPE_COUNT; t++)
        if (strcmp(name, cdnn_data_type_name((cdnn_data_type_t)t)) == 0)
            return t;
    return -1;
}

/* An array of names, each turned into a bit by bit_of, into *bits. */
static int parse_names(json_t *array, int (*bit_of)(const char *), const char *key,
                       uint32_t *bits, char *why, size_t why_cap)
{
    size_t i;
    json_t *item;
    if (!json_is_array(array)) {
        snprintf(why, why_cap, "\"%s\" is not an array", key);
        return -1;
    }
    json_array_foreach(array, i, item) {
        int bit = json_is_string(item) ? bit_of(json_string_value(item)) : -1;
        if (bit < 0) {
            snprintf(why, why_cap, "\"%s\"[%zu] is not a name this provider knows", key, i);
            return -1;
        }
        *bits |= 1u << bit;
    }
    return 0;
}

/* An integer in [min, max] into *out. */
static int parse_integer(json_t *value, const char *key, int64_t min, int64_t max,
                         int64_t *out, char *why, size_t why_cap)
{
    if (!json_is_integer(value) || json_integer_value(value) < min ||
        json_integer_value(value) > max) {
        snprintf(why, why_cap, "\"%s\" is not an integer in [%lld, %lld]", key,
                 (long long)min, (long long)max);
        return -1;
    }
    *out = json_integer_value(value);
    return 0;
}

static int parse_key(const char *key, json_t *value, engine_constraints_t *c, char *why,
                     size_t why_cap)
{
    int64_t n = 0;
    if (strcmp(key, "dtypes") == 0) {
        c->given |= CONSTRAINT_DTYPES;
        return parse_names(value, dtype_of_name, key, &c->dtypes, why, why_cap);
    }
    if (strcmp(key, "epilogue") == 0) {
        c->given |= CONSTRAINT_EPILOGUE;
        return parse_names(value, epilogue_bit, key, &c->epilogue, why, why_cap);
    }
    if (strcmp(key, "max_rank") == 0) {
        c->given |= CONSTRAINT_MAX_RANK;
        int rc = parse_integer(value, key, 1, CDNN_MAX_RANK, &n, why, why_cap);
        c->max_rank = (int32_t)n;
        return rc;
    }
    if (strcmp(key, "alignment") == 0) {
        c->given |= CONSTRAINT_ALIGNMENT;
        int rc = parse_integer(value, key, 0, 4096, &n, why, why_cap);
        c->alignment = n;
        return rc;
    }
    snprintf(why, why_cap, "constraint \"%s\" is not one this provider knows", key);
    return -1;
}

int engine_constraints_parse(const char *json, engine_constraints_t *c, char *why,
                             size_t why_cap)
{
    json_error_t error;
    const char *key;
    json_t *value;
    memset(c, 0, sizeof *c);
    json_t *root = json_loads(json ? json : "{}", JSON_REJECT_DUPLICATES, &error);
    if (!json_is_object(root)) {
        snprintf(why, why_cap, "the constraints are not a JSON object%s%s",
                 root ? "" : ": ", root ? "" : error.text);
        json_decref(root);
        return -1;
    }
    int rc = 0;
    json_object_foreach(root, key, value) {
        if (rc == 0)
            rc = parse_key(key, value, c, why, why_cap);
    }
    json_decref(root);
    return rc;
}

/* ---- the checks every match function makes ---------------------------------------- */

static cdnn_status_t check_tensors(const engine_constraints_t *c, const cdnn_graph_view_t *g)
{
    for (int32_t i = 0; i < g->tensor_count; i++) {
        const cdnn_tensor_view_t *t = &g->tensors[i];
        if (c->max_rank && t->rank > c->max_rank)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' has rank %d; the engine's "
                            "kernels take at most %d", t->name, t->rank, c->max_rank);
        /* Every caller's buffer is aligned to its element size; beyond
         * that only what the tensor declares can be relied on. */
        int64_t natural = (int64_t)cdnn_data_type_size(t->type);
        if (!t->is_virtual && !t->is_scalar && c->alignment > natural &&
            t->alignment < c->alignment)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' declares %lld-byte "
                            "alignment; the engine's kernels need %lld", t->name,
                            (long long)t->alignment, (long long)c->alignment);
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_dtype(const engine_constraints_t *c, const cdnn_tensor_view_t *t)
{
    if (c->dtypes && !(c->dtypes & 1u << t->type))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s, which the engine's "
                        "kernels do not take", t->name, cdnn_data_type_name(t->type));
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_step(const engine_constraints_t *c, int used, int step)
{
    if (used && (c->given & CONSTRAINT_EPILOGUE) && !(c->epilogue & 1u << step))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the engine's kernels do not fuse "
                        "the epilogue step %s", epilogue_steps[step]);
    return CDNN_STATUS_SUCCESS;
}

/* The chain's steps (matmul_pattern.h), each one the constraints allow. */
static cdnn_status_t check_epilogue(const engine_constraints_t *c, const matmul_pattern_t *p)
{
    cdnn_status_t st = check_step(c, p->bias.tensor >= 0, EPILOGUE_BIAS);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_step(c, p->residual.tensor >= 0, EPILOGUE_RESIDUAL);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_step(c, p->activation != MATMUL_ACT_NONE,
                        EPILOGUE_FIRST_ACTIVATION + (int)p->activation - 1);
    return st;
}

/* ---- matmul_epilogue ----------------------------------------------------------------- */

static cdnn_status_t matmul_epilogue_applies(const engine_constraints_t *c,
                                             const cdnn_graph_view_t *g)
{
    matmul_pattern_t p;
    cdnn_status_t st = matmul_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_tensors(c, g);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_dtype(c, &g->tensors[p.a.tensor]);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_dtype(c, &g->tensors[p.b.tensor]);
    return st == CDNN_STATUS_SUCCESS ? check_epilogue(c, &p) : st;
}

/* ---- conv_fwd_nhwc_host ------------------------------------------------------------- */

static cdnn_status_t conv_fwd_nhwc_host_applies(const engine_constraints_t *c,
                                                const cdnn_graph_view_t *g)
{
    conv_host_pattern_t p;
    cdnn_status_t st = conv_host_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_tensors(c, g);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_dtype(c, &g->tensors[p.x]);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_dtype(c, &g->tensors[p.filter]);
    return st == CDNN_STATUS_SUCCESS ? check_epilogue(c, &p.epilogue) : st;
}

/* ---- pointwise_program ---------------------------------------------------------------- */

static cdnn_status_t pointwise_program_applies(const engine_constraints_t *c,
                                               const cdnn_graph_view_t *g)
{
    pw_program_t p;
    cdnn_status_t st = pw_program_compile(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_tensors(c, g);
    for (int32_t i = 0; st == CDNN_STATUS_SUCCESS && i < p.input_count; i++)
        st = check_dtype(c, &g->tensors[p.inputs[i]]);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_dtype(c, &g->tensors[p.output]);
    return st;
}

/* ---- norm --------------------------------------------------------------------------- */

static cdnn_status_t norm_applies(const engine_constraints_t *c, const cdnn_graph_view_t *g)
{
    norm_pattern_t p;
    cdnn_status_t st = norm_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_tensors(c, g);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_dtype(c, &g->tensors[p.tensors[NORM_X]]);
    return st;
}

/* ---- reduction ----------------------------------------------------------------------- */

static cdnn_status_t reduction_applies(const engine_constraints_t *c, const cdnn_graph_view_t *g)
{
    reduce_pattern_t p;
    cdnn_status_t st = reduce_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_tensors(c, g);
    return st == CDNN_STATUS_SUCCESS ? check_dtype(c, &g->tensors[p.x]) : st;
}

/* ---- conv_fwd_nhwc_cuda ------------------------------------------------------------- */

static cdnn_status_t conv_fwd_nhwc_cuda_applies(const engine_constraints_t *c,
                                                const cdnn_graph_view_t *g)
{
    conv_cuda_pattern_t p;
    cdnn_status_t st = conv_cuda_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_tensors(c, g);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_dtype(c, &g->tensors[p.x]);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_step(c, p.bias >= 0, EPILOGUE_BIAS);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_step(c, p.activation != MATMUL_ACT_NONE,
                        EPILOGUE_FIRST_ACTIVATION + p.activation - 1);
    return st;
}

/* ---- sdpa ------------------------------------------------------------------------------ */

static cdnn_status_t sdpa_applies(const engine_constraints_t *c, const cdnn_graph_view_t *g)
{
    sdpa_pattern_t p;
    cdnn_status_t st = sdpa_pattern_of(g, &p);
    for (int role = 0; st == CDNN_STATUS_SUCCESS && role < SDPA_ROLES; role++)
        st = check_dtype(c, &g->tensors[p.tensors[role]]);
    return st == CDNN_STATUS_SUCCESS ? check_tensors(c, g) : st;
}

/* ---- softmax -------------------------------------------------------------------------- */

static cdnn_status_t softmax_applies(const engine_constraints_t *c, const cdnn_graph_view_t *g)
{
    softmax_pattern_t p;
    cdnn_status_t st = softmax_pattern_of(g, &p);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_tensors(c, g);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_dtype(c, &g->tensors[p.x]);
    return st == CDNN_STATUS_SUCCESS ? check_dtype(c, &g->tensors[p.y]) : st;
}

#define TENSOR_CONSTRAINTS (CONSTRAINT_DTYPES | CONSTRAINT_MAX_RANK | CONSTRAINT_ALIGNMENT)

static const match_function_t match_functions[] = {
    {"matmul_epilogue", TENSOR_CONSTRAINTS | CONSTRAINT_EPILOGUE, matmul_epilogue_applies},
    {"pointwise_program", TENSOR_CONSTRAINTS, pointwise_program_applies},
    {"norm", TENSOR_CONSTRAINTS, norm_applies},
    {"reduction", TENSOR_CONSTRAINTS, reduction_applies},
    {"conv_fwd_nhwc_host", TENSOR_CONSTRAINTS | CONSTRAINT_EPILOGUE,
     conv_fwd_nhwc_host_applies},
    {"conv_fwd_nhwc_cuda", TENSOR_CONSTRAINTS | CONSTRAINT_EPILOGUE,
     conv_fwd_nhwc_cuda_applies},
    {"sdpa", TENSOR_CONSTRAINTS, sdpa_applies},
    {"softmax", TENSOR_CONSTRAINTS, softmax_applies},
};

const match_function_t *match_function_find(const char *name)
{
    for (size_t i = 0; i < sizeof match_functions / sizeof *match_functions; i++)
        if (strcmp(match_functions[i].name, name) == 0)
            return &match_functions[i];
    return NULL;
}
