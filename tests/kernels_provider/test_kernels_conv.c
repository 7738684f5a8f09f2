/*
 * test_kernels_conv.c -- kernels:conv_host (the host convolution kernels,
 * "host-conv-nhwc-v1", behind dispatch handler host_conv v1) through the
 * public API, on a pack of the project's host code objects (issue 10,
 * "every kernels:* host engine"):
 *
 *   - over shapes (1x1, 3x3, 7x7; stride 2, padding, dilation; odd
 *     channel counts), layouts (packed NHWC, NHWC with padded rows and a
 *     KRSC or KCRS filter), dtypes (f32, f16, bf16) and epilogues (bias,
 *     each activation, a residual): built on the engine, run against
 *     cpu:reference, saved as a plan and as a container, each loaded in a
 *     fresh process, run to the same bytes and re-saved byte for byte;
 *   - every candidate kernel (tile x ISA level) this machine runs;
 *   - what the kernels cannot do is refused with its reason: groups, a
 *     1-D convolution, NCHW tensors, an activation they lack;
 *   - eight threads execute one plan at once;
 *   - a benchmarking build times every candidate that applies, and its
 *     choice saves and loads in a fresh process.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "test_filter.h"

#include <cdnn/cdnn.h>

#include "kp_util.h"

#define OK(call)                                                                      \
    do {                                                                              \
        cdnn_status_t st_ = (call);                                                   \
        if (st_ != CDNN_STATUS_SUCCESS)                                               \
            fail_msg("%s: %s: %s", #call, cdnn_status_string(st_), cdnn_last_error());  \
    } while (0)

#define CONV_ENGINE "kernels:conv_host"
#define CONV_KNOB "kernels.conv_host.candidate"

/* ---- the graphs --------------------------------------------------------------------- */

typedef enum conv_layout {
    NHWC,        /* x, y packed NHWC; filter KRSC */
    NHWC_PADDED, /* x's and y's rows of pixels padded; filter KCRS (as PyTorch's) */
    NCHW,        /* everything packed NCHW: not for these kernels */
} conv_layout_t;

/* y = act(conv(x, w) + bias) + residual, uids x 1, w 2, y 3, bias 4,
 * residual 5, virtual ones from 10. */
typedef struct conv_case {
    int64_t n, c, h, w, k, r, s;
    int64_t pad, stride, dilation, groups;
    cdnn_data_type_t type;
    conv_layout_t layout;
    int bias;
    cdnn_pointwise_mode_t act; /* CDNN_PW_IDENTITY: none */
    int residual;
    int spatial_dims;          /* 0: 2 */
} conv_case_t;

static int64_t out_size(int64_t in, int64_t r, const conv_case_t *c)
{
    return (in + 2 * c->pad - c->dilation * (r - 1) - 1) / c->stride + 1;
}

/* [N, C, H, W] dims stored as layout says ([K, C, R, S] as its filter). */
static void strides_of(const int64_t *d, conv_layout_t layout, int filter, int64_t *s)
{
    int64_t row_pad = layout == NHWC_PADDED && !filter ? 3 : 0;
    if (layout == NCHW || (layout == NHWC_PADDED && filter)) {
        s[3] = 1;
        s[2] = d[3];
        s[1] = d[2] * d[3];
        s[0] = d[1] * d[2] * d[3];
        return;
    }
    s[1] = 1;
    s[3] = d[1];
    s[2] = d[1] * d[3] + row_pad;
    s[0] = s[2] * d[2] + row_pad;
}

static void declare(cdnn_graph_t *g, int64_t uid, const conv_case_t *c, const int64_t *dims,
                    int filter, int32_t rank)
{
    int64_t strides[4];
    strides_of(dims, c->layout, filter, strides);
    if (rank == 3) { /* a 1-D convolution: [N, C, W] */
        int64_t d3[3] = {dims[0], dims[1], dims[3]}, s3[3] = {dims[1] * dims[3], 1, dims[1]};
        OK(cdnn_graph_tensor(g, uid, NULL, c->type, 3, d3, s3));
        return;
    }
    OK(cdnn_graph_tensor(g, uid, NULL, c->type, 4, dims, strides));
}

static cdnn_graph_t *conv_graph(const void *spec)
{
    const conv_case_t *c = spec;
    int spatial = c->spatial_dims ? c->spatial_dims : 2;
    int32_t rank = spatial + 2;
    int64_t oh = spatial == 1 ? 1 : out_size(c->h, c->r, c), ow = out_size(c->w, c->s, c);
    int64_t xd[4] = {c->n, c->c, spatial == 1 ? 1 : c->h, c->w};
    int64_t wd[4] = {c->k, c->c / c->groups, spatial == 1 ? 1 : c->r, c->s};
    int64_t yd[4] = {c->n, c->k, oh, ow}, bd[4] = {1, c->k, 1, 1};
    cdnn_conv_attr_t attr;
    cdnn_graph_t *g = NULL;
    const kp_epilogue_t e = {.bias = c->bias, .act = c->act, .residual = c->residual};
    cdnn_conv_attr_init(&attr, spatial);
    for (int d = 0; d < spatial; d++) {
        attr.pre_padding[d] = attr.post_padding[d] = c->pad;
        attr.stride[d] = c->stride;
        attr.dilation[d] = c->dilation;
    }
    attr.groups = c->groups;
    OK(cdnn_graph_create(&g));
    declare(g, 1, c, xd, 0, rank);
    declare(g, 2, c, wd, 1, rank);
    declare(g, 3, c, yd, 0, rank);
    if (c->bias)
        OK(cdnn_graph_tensor(g, 4, NULL, c->type, rank, bd, NULL));
    if (c->residual)
        declare(g, 5, c, yd, 0, rank);
    int64_t value = kp_epilogue_input(g, &e);
    OK(cdnn_graph_conv_fwd(g, "conv", &attr, 1, 2, value));
    kp_epilogue_add(g, &e, value);
    OK(cdnn_graph_validate(g));
    return g;
}

static const char *conv_label(const conv_case_t *c)
{
    static const char *const layouts[] = {"NHWC", "NHWC padded rows, KCRS filter", "NCHW"};
    static char label[200];
    snprintf(label, sizeof label,
             "N%lld C%lld %lldx%lld K%lld %lldx%lld pad %lld stride %lld dilation %lld "
             "%s %s%s%s%s",
             (long long)c->n, (long long)c->c, (long long)c->h, (long long)c->w,
             (long long)c->k, (long long)c->r, (long long)c->s, (long long)c->pad,
             (long long)c->stride, (long long)c->dilation, cdnn_data_type_name(c->type),
             layouts[c->layout], c->bias ? " bias" : "",
             c->act != CDNN_PW_IDENTITY ? " " : "",
             c->act != CDNN_PW_IDENTITY ? cdnn_pointwise_mode_name(c->act) : "");
    if (c->residual)
        strncat(label, " residual", sizeof label - strlen(label) - 1);
    return label;
}

/* ---- setup ------------------------------------------------------------------------------ */

static char pack_dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(pack_dir, sizeof pack_dir, "%s/host", kp_temp_dir());
    if (mkdir(pack_dir, 0700) != 0)
        return -1;
    kp_write_host_pack(pack_dir, "host.kpack");
    setenv("CDNN_PROVIDER_PATH", PROVIDER_DIR, 1);
    setenv("CDNN_DISABLE_CACHE", "1", 1);
    setenv("CDNN_KERNEL_PATH", pack_dir, 1);
    unsetenv("CDNN_TRUSTED_CODE");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kp_cleanup();
    return 0;
}

/* ---- round trips -------------------------------------------------------------------------- */

/* Built on the engine (candidate knob, 0: the default), checked against
 * cpu:reference, saved as a plan and a container, each loaded in a fresh
 * process, run to the same bytes and re-saved to itself. */
static void round_trip(const conv_case_t *c, cdnn_handle_t *h, int64_t candidate)
{
    const char *label = conv_label(c);
    cdnn_graph_t *g = conv_graph(c), *ref = conv_graph(c);
    kp_build_pinned(g, h, CONV_ENGINE, CONV_KNOB, candidate);
    kp_build_pinned(ref, h, "cpu:reference", NULL, 0);
    kp_run_t built = kp_run_graph(g, h), want = kp_run_graph(ref, h);
    kp_assert_close_outputs(&built, &want, label);
    const cdnn_save_form_t forms[] = {CDNN_SAVE_PLAN, CDNN_SAVE_GRAPH_AND_PLAN};
    for (int f = 0; f < 2; f++) {
        kp_bytes_t bytes = kp_save(g, forms[f]);
        kp_child_t child = kp_in_child(bytes, NULL);
        if (child.status != CDNN_STATUS_SUCCESS)
            fail_msg("%s: the saved bytes did not load: %s", label, child.message);
        kp_assert_same_outputs(&child.run, &built);
        if (!child.resaved_same)
            fail_msg("%s: the loaded %s re-saved to other bytes", label,
                     f ? "container" : "plan");
        kp_child_free(&child);
        kp_bytes_free(&bytes);
    }
    kp_run_free(&built);
    kp_run_free(&want);
    cdnn_graph_destroy(g);
    cdnn_graph_destroy(ref);
}

#define F32 CDNN_DATA_TYPE_F32
#define F16 CDNN_DATA_TYPE_F16
#define BF16 CDNN_DATA_TYPE_BF16

static const conv_case_t shape_cases[] = {
    /* n  c   h   w   k  r  s  pad str dil grp type layout */
    {2, 5, 9, 11, 7, 3, 3, 1, 1, 1, 1, F32, NHWC, .act = CDNN_PW_IDENTITY},
    {1, 3, 13, 10, 9, 3, 3, 1, 2, 1, 1, F32, NHWC, .bias = 1, .act = CDNN_PW_RELU_FWD},
    {2, 17, 6, 7, 33, 1, 1, 0, 1, 1, 1, F32, NHWC, .bias = 1, .act = CDNN_PW_IDENTITY},
    {1, 3, 15, 15, 8, 7, 7, 3, 2, 1, 1, F32, NHWC, .bias = 1, .act = CDNN_PW_GELU_FWD},
    {1, 6, 10, 9, 5, 3, 3, 2, 1, 2, 1, F32, NHWC, .act = CDNN_PW_TANH_FWD},
    {2, 7, 8, 8, 19, 3, 3, 1, 1, 1, 1, F32, NHWC_PADDED, .bias = 1,
     .act = CDNN_PW_SWISH_FWD, .residual = 1},
    {1, 9, 7, 12, 6, 3, 2, 0, 1, 1, 1, F32, NHWC, .act = CDNN_PW_GELU_TANH_FWD,
     .residual = 1},
    {2, 5, 9, 9, 11, 3, 3, 1, 1, 1, 1, F16, NHWC, .bias = 1, .act = CDNN_PW_RELU_FWD},
    {1, 12, 8, 8, 16, 3, 3, 1, 2, 1, 1, F16, NHWC_PADDED, .act = CDNN_PW_IDENTITY},
    {2, 5, 9, 9, 11, 3, 3, 1, 1, 1, 1, BF16, NHWC, .bias = 1, .act = CDNN_PW_GELU_FWD},
    {1, 7, 6, 6, 4, 1, 1, 0, 1, 1, 1, BF16, NHWC_PADDED, .act = CDNN_PW_IDENTITY,
     .residual = 1},
    /* larger than one tile in every direction, deep K */
    {2, 32, 14, 14, 40, 3, 3, 1, 1, 1, 1, F32, NHWC, .bias = 1, .act = CDNN_PW_RELU_FWD},
};

static void test_conv_round_trip_every_shape(void **state)
{
    (void)state;
    cdnn_handle_t *h = kp_cpu_handle();
    for (size_t i = 0; i < sizeof shape_cases / sizeof *shape_cases; i++)
        round_trip(&shape_cases[i], h, 0);
    cdnn_handle_destroy(h);
}

/* Whether the candidate knob's value builds here (its target may not run). */
static int candidate_builds(const conv_case_t *c, cdnn_handle_t *h, int64_t candidate)
{
    cdnn_graph_t *probe = conv_graph(c);
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(CONV_ENGINE)));
    OK(cdnn_build_options_set_knob(opts, CONV_KNOB, candidate));
    cdnn_status_t st = cdnn_graph_build(probe, h, opts);
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(probe);
    return st == CDNN_STATUS_SUCCESS;
}

static void test_conv_round_trip_every_candidate(void **state)
{
    (void)state;
    const conv_case_t c = {2, 6, 7, 9, 13, 3, 3, 1, 1, 1, 1, F32, NHWC, .bias = 1,
                           .act = CDNN_PW_GELU_FWD, .residual = 1};
    cdnn_knob_info_t knob;
    cdnn_handle_t *h = kp_cpu_handle();
    int32_t engine = kp_engine_index(h, CONV_ENGINE);
    assert_true(engine >= 0);
    OK(cdnn_handle_engine_knob_info(h, engine, 0, &knob));
    assert_string_equal(knob.name, CONV_KNOB);
    int ran = 0;
    for (int64_t i = 1; i <= knob.max_value; i++) {
        if (!candidate_builds(&c, h, i))
            continue; /* a target this machine lacks */
        round_trip(&c, h, i);
        ran++;
    }
    assert_true(ran >= 3); /* x86-64-v2's three tiles run everywhere */
    cdnn_handle_destroy(h);
}

/* ---- refusals ----------------------------------------------------------------------------- */

/* Pinned to the engine, c's graph fails to build, saying why. */
static void assert_refused(const conv_case_t *c, const char *why)
{
    cdnn_handle_t *h = kp_cpu_handle();
    cdnn_graph_t *g = conv_graph(c);
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(CONV_ENGINE)));
    cdnn_status_t st = cdnn_graph_build(g, h, opts);
    if (st == CDNN_STATUS_SUCCESS)
        fail_msg("%s: built on %s, which should refuse it", conv_label(c), CONV_ENGINE);
    if (!strstr(cdnn_last_error(), why))
        fail_msg("%s: refused with \"%s\", not with \"%s\"", conv_label(c),
                 cdnn_last_error(), why);
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

static void test_conv_refuses_what_the_kernels_cannot_do(void **state)
{
    (void)state;
    conv_case_t c = {1, 4, 6, 6, 4, 3, 3, 1, 1, 1, 1, F32, NHWC, .act = CDNN_PW_IDENTITY};
    conv_case_t grouped = c, nchw = c, one_d = c, sigmoid = c;
    grouped.groups = 2;
    assert_refused(&grouped, "has 2 groups; the host conv kernels take one");
    nchw.layout = NCHW;
    assert_refused(&nchw, "the host conv kernels take channels-last (NHWC) tensors");
    one_d.spatial_dims = 1;
    assert_refused(&one_d, "is a 1-D convolution; the host conv kernels take 2-D ones");
    sigmoid.act = CDNN_PW_SIGMOID_FWD;
    assert_refused(&sigmoid, "is not an activation the kernels fuse");
    /* and the same graphs in NHWC build: the refusals are the reasons given */
    cdnn_handle_t *h = kp_cpu_handle();
    assert_true(candidate_builds(&c, h, 0));
    cdnn_handle_destroy(h);
}

/* ---- threads ------------------------------------------------------------------------------- */

typedef struct shared_run {
    cdnn_graph_t *g;
    cdnn_handle_t *h;
    kp_run_t run;
    cdnn_status_t status;
} shared_run_t;

static void *execute_shared(void *p)
{
    shared_run_t *s = p;
    s->status = kp_run_execute(s->g, s->h, &s->run);
    return NULL;
}

/* Eight threads execute one plan at once, each with its own buffers, and
 * see what one thread alone sees. */
static void test_conv_eight_threads_execute(void **state)
{
    (void)state;
    const conv_case_t c = {2, 8, 12, 12, 24, 3, 3, 1, 1, 1, 1, F32, NHWC, .bias = 1,
                           .act = CDNN_PW_RELU_FWD, .residual = 1};
    shared_run_t runs[8];
    pthread_t threads[8];
    cdnn_handle_t *h = kp_cpu_handle();
    cdnn_graph_t *g = conv_graph(&c);
    kp_build_pinned(g, h, CONV_ENGINE, NULL, 0);
    kp_run_t alone = kp_run_graph(g, h);
    for (int i = 0; i < 8; i++) {
        runs[i] = (shared_run_t){g, h, kp_run_prepare(g), CDNN_STATUS_SUCCESS};
        assert_int_equal(pthread_create(&threads[i], NULL, execute_shared, &runs[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(threads[i], NULL);
        assert_int_equal(runs[i].status, CDNN_STATUS_SUCCESS);
        kp_assert_same_outputs(&runs[i].run, &alone);
        kp_run_free(&runs[i].run);
    }
    kp_run_free(&alone);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* ---- benchmarking ------------------------------------------------------------------------- */

static void test_conv_benchmarking_times_every_candidate(void **state)
{
    (void)state;
    const conv_case_t c = {1, 16, 10, 10, 32, 3, 3, 1, 1, 1, 1, F32, NHWC, .bias = 1,
                           .act = CDNN_PW_RELU_FWD};
    cdnn_candidate_result_t results[32];
    int32_t count = 0, chosen = -1, knobbed = 0;
    cdnn_handle_t *h = kp_cpu_handle();
    cdnn_graph_t *g = conv_graph(&c);
    kp_build_pinned(g, h, CONV_ENGINE, "global.benchmarking", 1);
    kp_run_t r = kp_run_graph(g, h);
    OK(cdnn_graph_candidates(g, results, 32, &count, &chosen));
    assert_true(chosen >= 0 && chosen < count);
    assert_true(count >= 4); /* the default and at least x86-64-v2's three tiles */
    for (int32_t i = 0; i < count; i++) {
        assert_true(results[i].median_us >= 0);
        knobbed += strstr(results[i].name, CONV_KNOB "=") != NULL;
    }
    assert_int_equal(knobbed, count - 1); /* the default, and one per other */
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    kp_child_t child = kp_in_child(plan, NULL);
    if (child.status != CDNN_STATUS_SUCCESS)
        fail_msg("the benchmarked plan did not load: %s", child.message);
    kp_assert_same_outputs(&child.run, &r);
    assert_true(child.resaved_same);
    kp_child_free(&child);
    kp_bytes_free(&plan);
    kp_run_free(&r);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "kp-child") == 0)
        return kp_child_main(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_round_trip_every_shape),
        cmocka_unit_test(test_conv_round_trip_every_candidate),
        cmocka_unit_test(test_conv_refuses_what_the_kernels_cannot_do),
        cmocka_unit_test(test_conv_eight_threads_execute),
        cmocka_unit_test(test_conv_benchmarking_times_every_candidate),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, setup, teardown);
}
