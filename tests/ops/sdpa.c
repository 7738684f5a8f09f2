/*
 * sdpa.c -- scaled-dot-product attention forward and backward: causal or
 * not, default or explicit scale, Sq != Sk, Dv != D, in BHSD, BSHD and
 * padded layouts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cases.h"
#include "harness.h"

enum { SD_Q = 1, SD_K = 2, SD_V = 3, SD_O = 4 };

typedef struct sdpa_shape {
    int64_t b, h, sq, sk, d, dv;
} sdpa_shape_t;

static const sdpa_shape_t sdpa_shapes[] = {
    {1, 1, 4, 4, 8, 8},
    {2, 3, 5, 7, 16, 8},
    {1, 2, 9, 6, 4, 12},
    {2, 2, 33, 33, 32, 32},
};

#define SDPA_SHAPE_COUNT (sizeof sdpa_shapes / sizeof sdpa_shapes[0])

static const h_layout_t sdpa_layouts[] = {H_PACKED, H_SWAP12, H_PADDED};

/* A case of `op` on q [b,h,sq,d], k [b,h,sk,d] and v [b,h,sk,dv] in
 * layout, kept as the packed reference or compared against it. */
static void sdpa_begin(h_case_t *c, const char *op, const sdpa_shape_t *s,
                       const cdnn_sdpa_attr_t *a, cdnn_data_type_t type,
                       h_layout_t layout, h_values_t *packed)
{
    const int64_t q[4] = {s->b, s->h, s->sq, s->d};
    const int64_t k[4] = {s->b, s->h, s->sk, s->d};
    const int64_t v[4] = {s->b, s->h, s->sk, s->dv};
    h_begin(c, H_ACCUMULATE,
            "%s %s %s b%lld h%lld sq%lld sk%lld d%lld dv%lld causal %d scale %g", op,
            cdnn_data_type_name(type), h_layout_name(layout), (long long)s->b,
            (long long)s->h, (long long)s->sq, (long long)s->sk,
            (long long)s->d, (long long)s->dv, a->causal, a->scale);
    if (layout == H_PACKED)
        c->keep = packed;
    else
        c->against = packed;
    h_input(c, SD_Q, type, 4, q, layout, H_WIDE);
    h_input(c, SD_K, type, 4, k, layout, H_WIDE);
    h_input(c, SD_V, type, 4, v, layout, H_UNIFORM);
}

static void sdpa_case(const sdpa_shape_t *s, const cdnn_sdpa_attr_t *a,
                      cdnn_data_type_t type, h_layout_t layout,
                      h_values_t *packed)
{
    const int64_t o[4] = {s->b, s->h, s->sq, s->dv};
    h_case_t c;
    sdpa_begin(&c, "sdpa_fwd", s, a, type, layout, packed);
    h_output(&c, SD_O, type, layout == H_PACKED ? 0 : 4, o, layout);
    h_call(&c, cdnn_graph_sdpa_fwd(c.graph, "sdpa", a, SD_Q, SD_K, SD_V, SD_O),
           "cdnn_graph_sdpa_fwd");
    h_run(&c);
}

void test_sdpa_fwd(void **state)
{
    (void)state;
    static const cdnn_sdpa_attr_t attrs[] = {{0.0, 0}, {0.0, 1}, {0.3, 0},
                                             {0.3, 1}};
    for (size_t s = 0; s < SDPA_SHAPE_COUNT; s++) {
        for (size_t a = 0; a < sizeof attrs / sizeof *attrs; a++) {
            for (int t = 0; t < ops_float_type_count; t++) {
                h_values_t packed = {0};
                for (size_t l = 0;
                     l < sizeof sdpa_layouts / sizeof *sdpa_layouts; l++)
                    sdpa_case(&sdpa_shapes[s], &attrs[a], ops_float_types[t],
                              sdpa_layouts[l], &packed);
                h_values_free(&packed);
            }
        }
    }
    h_done();
}

/* ------------------------------------------------------------------------
 * Backward (cpu:reference checked against PyTorch by
 * tests/oracle/test_sdpa_bwd_torch.py): every layout of q, k, v, o, do
 * and the gradients gives what the packed layout gives, and cpu:sdpa_bwd
 * (f32) gives what cpu:reference gives.  The backward also runs head size
 * 64 with Sq != Sk both ways.
 * ------------------------------------------------------------------------ */

enum { SB_DO = 5, SB_DQ = 6, SB_DK = 7, SB_DV = 8 };

static void sdpa_bwd_case(const sdpa_shape_t *s, const cdnn_sdpa_attr_t *a,
                          cdnn_data_type_t type, h_layout_t layout,
                          h_values_t *packed)
{
    const int64_t q[4] = {s->b, s->h, s->sq, s->d};
    const int64_t k[4] = {s->b, s->h, s->sk, s->d};
    const int64_t v[4] = {s->b, s->h, s->sk, s->dv};
    const int64_t o[4] = {s->b, s->h, s->sq, s->dv};
    h_case_t c;
    sdpa_begin(&c, "sdpa_bwd", s, a, type, layout, packed);
    h_input(&c, SD_O, type, 4, o, layout, H_UNIFORM);
    h_input(&c, SB_DO, type, 4, o, layout, H_UNIFORM);
    int32_t rank = layout == H_PACKED ? 0 : 4;
    h_output(&c, SB_DQ, type, rank, q, layout);
    h_output(&c, SB_DK, CDNN_DATA_TYPE_F32, rank, k, layout);
    if (type == CDNN_DATA_TYPE_F32) /* f32 in every tensor: cpu:sdpa_bwd */
        h_expect(&c, "cpu:sdpa_bwd");
    h_output(&c, SB_DV, type, rank, v, layout);
    h_call(&c, cdnn_graph_sdpa_bwd(c.graph, "sdpa_bwd", a, SD_Q, SD_K, SD_V, SD_O,
                                   SB_DO, SB_DQ, SB_DK, SB_DV),
           "cdnn_graph_sdpa_bwd");
    h_run(&c);
}

void test_sdpa_bwd(void **state)
{
    (void)state;
    static const cdnn_sdpa_attr_t attrs[] = {{0.0, 0}, {0.3, 1}, {0.0, 1}};
    static const sdpa_shape_t shapes[] = {
        {1, 1, 4, 4, 8, 8},    {2, 3, 5, 7, 16, 8},     {1, 2, 9, 6, 4, 12},
        {2, 2, 40, 24, 64, 64}, {1, 3, 17, 50, 64, 32},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t a = 0; a < sizeof attrs / sizeof *attrs; a++)
            for (int t = 0; t < ops_float_type_count; t++) {
                h_values_t packed = {0};
                for (size_t l = 0; l < sizeof sdpa_layouts / sizeof *sdpa_layouts; l++)
                    sdpa_bwd_case(&shapes[s], &attrs[a], ops_float_types[t],
                                  sdpa_layouts[l], &packed);
                h_values_free(&packed);
            }
    h_done();
}
