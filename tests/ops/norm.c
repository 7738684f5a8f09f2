/*
 * norm.c -- batch-norm inference, layer-norm and RMS-norm forward, with
 * and without their optional inputs and outputs, in every float type and
 * in several layouts (each checked against the packed one too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

enum { N_X = 1, N_SCALE = 2, N_BIAS = 3, N_MEAN = 4, N_VAR = 5, N_Y = 6,
       N_STAT1 = 7, N_STAT2 = 8 };

static const h_layout_t norm_layouts[] = {H_PACKED, H_CHANNELS_LAST,
                                          H_TRANSPOSED, H_PADDED};

#define NORM_LAYOUT_COUNT (sizeof norm_layouts / sizeof norm_layouts[0])

typedef struct norm_shape {
    int32_t rank;
    int64_t x[5];
    int64_t scale[5]; /* layer/RMS norm: the normalised dims */
    int64_t stat[5];  /* x reduced over the normalised dims */
} norm_shape_t;

static const norm_shape_t norm_shapes[] = {
    {3, {2, 3, 8}, {1, 1, 8}, {2, 3, 1}},
    {4, {2, 3, 4, 5}, {1, 3, 4, 5}, {2, 1, 1, 1}},
    {2, {4, 300}, {1, 300}, {4, 1}},
    {5, {2, 4, 2, 3, 2}, {1, 1, 1, 1, 2}, {2, 4, 2, 3, 1}},
};

#define NORM_SHAPE_COUNT (sizeof norm_shapes / sizeof norm_shapes[0])

static const char *dims_text(const norm_shape_t *s, char *buf, size_t cap)
{
    size_t len = 0;
    for (int32_t d = 0; d < s->rank && len < cap; d++)
        len += (size_t)snprintf(buf + len, cap - len, d ? ",%lld" : "[%lld",
                                (long long)s->x[d]);
    if (len < cap)
        snprintf(buf + len, cap - len, "]");
    return buf;
}

static void norm_keep(h_case_t *c, h_layout_t layout, h_values_t *packed)
{
    if (layout == H_PACKED)
        c->keep = packed;
    else
        c->against = packed;
}

/* ---- batch-norm inference ---- */

static void bn_case(const norm_shape_t *s, cdnn_data_type_t type,
                    h_layout_t layout, h_values_t *packed)
{
    int64_t p[5] = {1, s->x[1], 1, 1, 1};
    char text[64];
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "batchnorm_inference %s %s x %s",
            cdnn_data_type_name(type), h_layout_name(layout),
            dims_text(s, text, sizeof text));
    norm_keep(&c, layout, packed);
    h_input(&c, N_X, type, s->rank, s->x, layout, H_WIDE);
    h_input(&c, N_SCALE, type, s->rank, p, layout, H_UNIFORM);
    h_input(&c, N_BIAS, type, s->rank, p, layout, H_UNIFORM);
    h_input(&c, N_MEAN, type, s->rank, p, layout, H_UNIFORM);
    h_input(&c, N_VAR, type, s->rank, p, layout, H_POSITIVE);
    h_output(&c, N_Y, type, layout == H_PACKED ? 0 : s->rank, s->x, layout);
    h_call(&c, cdnn_graph_batchnorm_inference(c.graph, "bn", 1e-5, N_X,
                                              N_SCALE, N_BIAS, N_MEAN, N_VAR,
                                              N_Y),
           "cdnn_graph_batchnorm_inference");
    h_run(&c);
}

/* ---- layer-norm ---- */

/* variant 0: with bias; 1: with bias, mean and inv_variance; 2: without
 * bias (graph format 1.2). */
static void ln_case(const norm_shape_t *s, cdnn_data_type_t type,
                    h_layout_t layout, int variant, h_values_t *packed)
{
    char text[64];
    int stats = variant == 1, bias = variant != 2;
    int32_t stat_rank = layout == H_PACKED ? 0 : s->rank;
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "layernorm %s %s x %s%s",
            cdnn_data_type_name(type), h_layout_name(layout),
            dims_text(s, text, sizeof text),
            stats ? " with mean, inv_var" : bias ? "" : " without bias");
    norm_keep(&c, layout, packed);
    h_input(&c, N_X, type, s->rank, s->x, layout, H_WIDE);
    h_input(&c, N_SCALE, type, s->rank, s->scale, layout, H_UNIFORM);
    if (bias)
        h_input(&c, N_BIAS, type, s->rank, s->scale, layout, H_UNIFORM);
    h_output(&c, N_Y, type, s->rank, s->x, layout);
    if (stats) {
        h_output(&c, N_STAT1, type, stat_rank, s->stat, layout);
        h_output(&c, N_STAT2, type, stat_rank, s->stat, layout);
    }
    h_call(&c, cdnn_graph_layernorm(c.graph, "ln", 1e-5, N_X, N_SCALE,
                                    bias ? N_BIAS : CDNN_UID_NONE,
                                    N_Y, stats ? N_STAT1 : CDNN_UID_NONE,
                                    stats ? N_STAT2 : CDNN_UID_NONE),
           "cdnn_graph_layernorm");
    h_run(&c);
}

/* ---- RMS-norm ---- */

static void rms_case(const norm_shape_t *s, cdnn_data_type_t type,
                     h_layout_t layout, int extras, h_values_t *packed)
{
    char text[64];
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "rmsnorm %s %s x %s%s",
            cdnn_data_type_name(type), h_layout_name(layout),
            dims_text(s, text, sizeof text), extras ? " with bias, inv_rms" : "");
    norm_keep(&c, layout, packed);
    h_input(&c, N_X, type, s->rank, s->x, layout, H_WIDE);
    h_input(&c, N_SCALE, type, s->rank, s->scale, layout, H_UNIFORM);
    if (extras) {
        h_input(&c, N_BIAS, type, s->rank, s->scale, layout, H_UNIFORM);
        h_output(&c, N_STAT1, type, layout == H_PACKED ? 0 : s->rank, s->stat,
                 layout);
    }
    h_output(&c, N_Y, type, s->rank, s->x, layout);
    h_call(&c, cdnn_graph_rmsnorm(c.graph, "rms", 1e-5, N_X, N_SCALE,
                                  extras ? N_BIAS : CDNN_UID_NONE, N_Y,
                                  extras ? N_STAT1 : CDNN_UID_NONE),
           "cdnn_graph_rmsnorm");
    h_run(&c);
}

typedef enum norm_kind { NORM_BN, NORM_LN, NORM_RMS } norm_kind_t;

/* Every shape, type and layout, with the optional parts (variant 1) or
 * without (variant 0); layer-norm also without its bias (variant 2). */
static void norm_family(norm_kind_t kind)
{
    for (size_t s = 0; s < NORM_SHAPE_COUNT; s++) {
        for (int t = 0; t < ops_float_type_count; t++) {
            int variants = kind == NORM_BN ? 1 : kind == NORM_LN ? 3 : 2;
            for (int variant = 0; variant < variants; variant++) {
                h_values_t packed = {0};
                for (size_t l = 0; l < NORM_LAYOUT_COUNT; l++) {
                    const norm_shape_t *sh = &norm_shapes[s];
                    cdnn_data_type_t ty = ops_float_types[t];
                    if (kind == NORM_BN)
                        bn_case(sh, ty, norm_layouts[l], &packed);
                    else if (kind == NORM_LN)
                        ln_case(sh, ty, norm_layouts[l], variant, &packed);
                    else
                        rms_case(sh, ty, norm_layouts[l], variant, &packed);
                }
                h_values_free(&packed);
            }
        }
    }
    h_done();
}

void test_batchnorm_inference(void **state)
{
    (void)state;
    norm_family(NORM_BN);
}

void test_layernorm(void **state)
{
    (void)state;
    norm_family(NORM_LN);
}

void test_rmsnorm(void **state)
{
    (void)state;
    norm_family(NORM_RMS);
}

/* ---- training passes: batch-norm training forward with its running
 * statistics (one graph of two nodes), batch-norm, layer-norm and RMS-norm
 * backward.  x, dy, y and dx have the case's type; parameters and
 * statistics are f32 for a half type (f32 statistics of a bf16 x), else the
 * case's type.  The backward's statistics are drawn at random: the
 * formulas hold for any, and the fast engine must agree with the
 * reference on them. ---- */

enum { T_X = 1, T_DY, T_SCALE, T_BIAS, T_MEAN, T_INV, T_RM, T_RV,
       T_OUT, T_OUT1, T_OUT2, T_OUT3, T_OUT4 };

#define NORM_TRAIN_ENGINE "cpu:norm_train"

static cdnn_data_type_t param_type(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_F16 || type == CDNN_DATA_TYPE_BF16 ? CDNN_DATA_TYPE_F32
                                                                     : type;
}

static void expect_fast(h_case_t *c, cdnn_data_type_t type)
{
    if (type != CDNN_DATA_TYPE_F64)
        h_expect(c, NORM_TRAIN_ENGINE);
}

static void bn_train_case(const norm_shape_t *s, cdnn_data_type_t type, h_layout_t layout,
                          h_values_t *packed)
{
    int64_t p[5] = {1, s->x[1], 1, 1, 1};
    cdnn_data_type_t pt = param_type(type);
    char text[64];
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "batchnorm_train + running_stats %s %s x %s",
            cdnn_data_type_name(type), h_layout_name(layout),
            dims_text(s, text, sizeof text));
    norm_keep(&c, layout, packed);
    h_input(&c, T_X, type, s->rank, s->x, layout, H_WIDE);
    h_input(&c, T_SCALE, pt, s->rank, p, layout, H_UNIFORM);
    h_input(&c, T_BIAS, pt, s->rank, p, layout, H_UNIFORM);
    h_input(&c, T_RM, pt, s->rank, p, layout, H_UNIFORM);
    h_input(&c, T_RV, pt, s->rank, p, layout, H_POSITIVE);
    h_output(&c, T_OUT, type, s->rank, s->x, layout);
    for (int64_t u = T_OUT1; u <= T_OUT4; u++)
        h_output(&c, u, pt, s->rank, p, layout);
    h_call(&c, cdnn_graph_batchnorm_train(c.graph, "bn", 1e-5, T_X, T_SCALE, T_BIAS,
                                          T_OUT, T_OUT1, T_OUT2),
           "cdnn_graph_batchnorm_train");
    h_call(&c, cdnn_graph_batchnorm_running_stats(c.graph, "run", 0.1, T_X, T_RM, T_RV,
                                                  T_OUT3, T_OUT4),
           "cdnn_graph_batchnorm_running_stats");
    expect_fast(&c, type);
    h_run(&c);
}

/* The running statistics alone (cpu:norm_train does them inside the
 * forward's walk when both are in the graph). */
static void bn_running_case(const norm_shape_t *s, cdnn_data_type_t type,
                            h_layout_t layout, h_values_t *packed)
{
    int64_t p[5] = {1, s->x[1], 1, 1, 1};
    cdnn_data_type_t pt = param_type(type);
    char text[64];
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "batchnorm_running_stats %s %s x %s",
            cdnn_data_type_name(type), h_layout_name(layout),
            dims_text(s, text, sizeof text));
    norm_keep(&c, layout, packed);
    h_input(&c, T_X, type, s->rank, s->x, layout, H_WIDE);
    h_input(&c, T_RM, pt, s->rank, p, layout, H_UNIFORM);
    h_input(&c, T_RV, pt, s->rank, p, layout, H_POSITIVE);
    h_output(&c, T_OUT3, pt, s->rank, p, layout);
    h_output(&c, T_OUT4, pt, s->rank, p, layout);
    h_call(&c, cdnn_graph_batchnorm_running_stats(c.graph, "run", 0.25, T_X, T_RM, T_RV,
                                                  T_OUT3, T_OUT4),
           "cdnn_graph_batchnorm_running_stats");
    expect_fast(&c, type);
    h_run(&c);
}

typedef enum bwd_kind { BWD_BN, BWD_LN, BWD_RMS } bwd_kind_t;

/* with_params: dscale and dbias (RMS-norm: dscale only) are outputs. */
static void norm_bwd_case(bwd_kind_t kind, const norm_shape_t *s, cdnn_data_type_t type,
                          h_layout_t layout, int with_params, h_values_t *packed)
{
    static const char *const names[] = {"batchnorm_bwd", "layernorm_bwd", "rmsnorm_bwd"};
    int64_t bn_p[5] = {1, s->x[1], 1, 1, 1};
    const int64_t *param = kind == BWD_BN ? bn_p : s->scale;
    const int64_t *stat = kind == BWD_BN ? bn_p : s->stat;
    cdnn_data_type_t pt = param_type(type);
    char text[64];
    h_case_t c;
    h_begin(&c, H_ACCUMULATE, "%s %s %s x %s%s", names[kind], cdnn_data_type_name(type),
            h_layout_name(layout), dims_text(s, text, sizeof text),
            with_params ? " with dscale, dbias" : "");
    norm_keep(&c, layout, packed);
    h_input(&c, T_DY, type, s->rank, s->x, layout, H_UNIFORM);
    h_input(&c, T_X, type, s->rank, s->x, layout, H_WIDE);
    h_input(&c, T_SCALE, pt, s->rank, param, layout, H_UNIFORM);
    if (kind != BWD_RMS)
        h_input(&c, T_MEAN, pt, s->rank, stat, layout, H_UNIFORM);
    h_input(&c, T_INV, pt, s->rank, stat, layout, H_POSITIVE);
    h_output(&c, T_OUT, type, s->rank, s->x, layout);
    int64_t dscale = with_params ? T_OUT1 : CDNN_UID_NONE;
    int64_t dbias = with_params && kind != BWD_RMS ? T_OUT2 : CDNN_UID_NONE;
    if (with_params)
        h_output(&c, T_OUT1, pt, s->rank, param, layout);
    if (dbias != CDNN_UID_NONE)
        h_output(&c, T_OUT2, pt, s->rank, param, layout);
    cdnn_status_t st;
    if (kind == BWD_BN)
        st = cdnn_graph_batchnorm_bwd(c.graph, "bwd", T_DY, T_X, T_SCALE, T_MEAN, T_INV,
                                      T_OUT, dscale, dbias);
    else if (kind == BWD_LN)
        st = cdnn_graph_layernorm_bwd(c.graph, "bwd", T_DY, T_X, T_SCALE, T_MEAN, T_INV,
                                      T_OUT, dscale, dbias);
    else
        st = cdnn_graph_rmsnorm_bwd(c.graph, "bwd", T_DY, T_X, T_SCALE, T_INV, T_OUT,
                                    dscale, dbias);
    h_call(&c, st, names[kind]);
    expect_fast(&c, type);
    h_run(&c);
}

/* Every shape, type and layout; each layout checked against the packed. */
void test_norm_train(void **state)
{
    (void)state;
    for (size_t s = 0; s < NORM_SHAPE_COUNT; s++) {
        for (int t = 0; t < ops_float_type_count; t++) {
            const norm_shape_t *sh = &norm_shapes[s];
            cdnn_data_type_t ty = ops_float_types[t];
            h_values_t packed = {0};
            for (size_t l = 0; l < NORM_LAYOUT_COUNT; l++)
                bn_train_case(sh, ty, norm_layouts[l], &packed);
            h_values_free(&packed);
            h_values_t alone = {0};
            for (size_t l = 0; l < NORM_LAYOUT_COUNT; l++)
                bn_running_case(sh, ty, norm_layouts[l], &alone);
            h_values_free(&alone);
            for (int kind = BWD_BN; kind <= BWD_RMS; kind++) {
                for (int with_params = 0; with_params < 2; with_params++) {
                    h_values_t kept = {0};
                    for (size_t l = 0; l < NORM_LAYOUT_COUNT; l++)
                        norm_bwd_case((bwd_kind_t)kind, sh, ty, norm_layouts[l],
                                      with_params, &kept);
                    h_values_free(&kept);
                }
            }
        }
    }
    h_done();
}

/* A plan of a training step's norms (batchnorm_train with its running
 * statistics, and batchnorm_bwd reading the forward's mean and
 * inv_variance, in one graph) saves, loads and runs as the plan it was
 * saved from, and re-saves to the same bytes. */
enum { PR_X = 1, PR_SCALE, PR_BIAS, PR_RM, PR_RV, PR_DY, PR_Y, PR_MEAN, PR_INV,
       PR_NRM, PR_NRV, PR_DX, PR_DSCALE, PR_DBIAS, PR_COUNT = PR_DBIAS };

static void norm_plan_round_trip(const char *engine)
{
    static const int64_t x_dims[4] = {2, 3, 4, 5}, c_dims[4] = {1, 3, 1, 1};
    enum { NX = 120, NC = 3 };
    static float in[6][NX];
    static float out[2][PR_COUNT + 1][NX];
    for (int t = 0; t < 6; t++)
        for (int i = 0; i < NX; i++)
            in[t][i] = (float)(((i + 1) * (t + 3) * 37) % 23) / 7.0f - 1.0f + (t == 4);
    cdnn_graph_t *g = NULL;
    assert_int_equal(cdnn_graph_create(&g), CDNN_STATUS_SUCCESS);
    for (int64_t u = PR_X; u <= PR_DBIAS; u++) {
        int full = u == PR_X || u == PR_DY || u == PR_Y || u == PR_DX;
        assert_int_equal(cdnn_graph_tensor(g, u, NULL, CDNN_DATA_TYPE_F32, 4,
                                           full ? x_dims : c_dims, NULL), 0);
    }
    assert_int_equal(cdnn_graph_batchnorm_train(g, "bn", 1e-5, PR_X, PR_SCALE, PR_BIAS,
                                                PR_Y, PR_MEAN, PR_INV), 0);
    assert_int_equal(cdnn_graph_batchnorm_running_stats(g, "run", 0.1, PR_X, PR_RM, PR_RV,
                                                        PR_NRM, PR_NRV), 0);
    assert_int_equal(cdnn_graph_batchnorm_bwd(g, "bwd", PR_DY, PR_X, PR_SCALE, PR_MEAN,
                                              PR_INV, PR_DX, PR_DSCALE, PR_DBIAS), 0);
    int64_t uids[PR_COUNT];
    void *ptrs[2][PR_COUNT];
    for (int r = 0; r < 2; r++)
        for (int64_t u = PR_X; u <= PR_DBIAS; u++) {
            uids[u - 1] = u;
            ptrs[r][u - 1] = u <= PR_DY ? (void *)in[u - 1] : (void *)out[r][u];
        }
    memset(out, 0xFF, sizeof out);
    h_plan_round_trip(g, engine, PR_COUNT, uids, ptrs[0], ptrs[1]);
    for (int64_t u = PR_Y; u <= PR_DBIAS; u++) {
        size_t bytes_u = (u == PR_Y || u == PR_DX ? NX : NC) * sizeof(float);
        assert_memory_equal(out[0][u], out[1][u], bytes_u);
        assert_false(out[0][u][0] != out[0][u][0]); /* written: not the NaN fill */
    }
    cdnn_graph_destroy(g);
}

void test_norm_train_plan_round_trip(void **state)
{
    (void)state;
    norm_plan_round_trip(NORM_TRAIN_ENGINE);
    norm_plan_round_trip(H_REFERENCE);
}
