/*
 * cuda_forgeries.c -- re-sealed forgeries of plans of the kernels
 * provider's cuda engines, loaded and run on cuda:0: issue 8's standard
 * (every part checked against every other before anything runs) for the
 * GPU kernels' metadata, which the CPU forgeries (test_forgeries.sh) cannot
 * reach -- without a device a cuda plan is refused (DEVICE_MISMATCH) before
 * its provider reads a byte of its payload.
 *
 * usage: cuda_forgeries KERNEL_DIR [--only LABEL]...
 *
 * KERNEL_DIR: the built code objects (its pointwise.sm_90a.cubin is the
 * other family's code of code.other_family_installed).
 *
 * Base plans: one per kernel family, each pinned to the first candidate of
 * its engine (kernels.<engine>.candidate) whose installed kernel's metadata
 * is what the family names -- the wgmma matmul (tensor maps; bias, gelu and
 * residual in its epilogue), the small-m strip and split-k kernels, the
 * wgmma conv with its plain and TMA-store epilogues, the conv stem with
 * and without TMA stores, the staged-row layer-norm and softmax, the
 * wgmma flash attention -- built on cuda:0 from the packs installed beside
 * the provider, and run once on deterministic inputs: their outputs are
 * what a forgery that loads must give.
 *
 * Each base's payload (tests/kernels_provider/kp_forge.c reads and writes
 * it with the test's own FlatBuffers reader, then re-seals payload and
 * plan) is forged part by part: every metadata entry changed, dropped, and
 * the family keys added (stem, epilogue, stages, tensor_maps, split_k); the
 * symbol swapped for a sibling's in the same cubin, alone and with the
 * sibling's metadata, and a symbol no entry names; the target (sm_90, compute_90,
 * sm_80, sm_100a, x86-64); the launch values that make the launch, one
 * appended, one dropped; the code object (a byte flipped, cut in half,
 * padded, another installed cubin); handler, version and signature; and
 * an unchanged control.  Each is loaded in
 * normal and in strict mode (CDNN_TRUSTED_CODE=pack) and must be refused
 * with its status and words, or load and give the base's outputs (poisoned
 * before the run, so an output left unwritten shows).
 *
 * Each base runs in a child process of its own, all at once (a crash, a
 * hang past CHILD_SECONDS or a faulted device fails that base alone); the
 * parent never touches the device.  One line per check
 * ("PASS|FAIL base forgery mode: what happened"), a summary per base and
 * in all; exit 1 if any check failed, 77 without a CUDA device.
 * tests/security/test_forgeries_cuda.sh runs it (under compute-sanitizer's
 * memcheck with MEMCHECK=1); scripts/gpu-check.sh runs that.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <cdnn/cdnn.h>
#include <cdnn_sdk/numeric.h>
#include <cdnn_sdk/sha256.h>

#include "kernels_provider/kp_forge.h"

#define CHILD_SECONDS 40
#define MAX_CANDIDATES 96
#define INSTALLED_OTHERWISE "is installed here as kernel"
#define NOT_IN_PACK "in no kernel pack installed here"

/* ---- the bases ----------------------------------------------------------------------- */

/* A graph's JSON, or a matmul made by kp_matmul_graph. */
typedef struct base {
    const char *label, *engine;
    const char *json;
    kp_matmul_t matmul;
    /* The candidate: metadata key=value pairs it has ("key=" present with
     * any value), and keys it lacks. */
    const char *has[3], *lacks[3];
} base_t;

#define CONV_TENSORS(X_DIMS, X_STRIDES, W_DIMS, W_STRIDES, Y_DIMS, Y_STRIDES)              \
    "{\"format_major\": 1, \"format_minor\": 1, \"name\": \"conv\", \"io_type\": \"F16\","  \
    " \"tensors\": [{\"uid\": 1, \"name\": \"x\", \"dims\": " X_DIMS ", \"strides\": "      \
    X_STRIDES "}, {\"uid\": 2, \"name\": \"w\", \"dims\": " W_DIMS ", \"strides\": "        \
    W_STRIDES "}, {\"uid\": 3, \"name\": \"y\", \"dims\": " Y_DIMS ", \"strides\": "        \
    Y_STRIDES "}],"
#define CONV_NODE(PAD, STRIDE)                                                               \
    " \"nodes\": [{\"name\": \"conv\", \"op\": \"ConvFwd\", \"inputs\": [{\"slot\": 0, "     \
    "\"uid\": 1}, {\"slot\": 1, \"uid\": 2}], \"outputs\": [{\"slot\": 0, \"uid\": 3}], "    \
    "\"attr_type\": \"ConvAttr\", \"attr\": {\"spatial_dims\": 2, \"pre_padding\": " PAD     \
    ", \"post_padding\": " PAD ", \"stride\": " STRIDE "}}]}"

/* NHWC 1x1, 64 -> 128 channels at 14x14: what the wgmma conv kernels take. */
static const char conv_json[] =
    CONV_TENSORS("[2, 64, 14, 14]", "[12544, 1, 896, 64]", "[128, 64, 1, 1]",
                 "[64, 1, 64, 64]", "[2, 128, 14, 14]", "[25088, 1, 1792, 128]")
    CONV_NODE("[0, 0]", "[1, 1]");
/* The stem: 3 channels, 7x7 stride 2, 64 filters (CDNN_CUDA_CONV_STEM_*). */
static const char stem_json[] =
    CONV_TENSORS("[2, 3, 32, 32]", "[3072, 1, 96, 3]", "[64, 3, 7, 7]", "[147, 1, 21, 3]",
                 "[2, 64, 16, 16]", "[16384, 1, 1024, 64]")
    CONV_NODE("[3, 3]", "[2, 2]");

static const char layernorm_json[] =
    "{\"format_major\": 1, \"format_minor\": 1, \"name\": \"ln\", \"io_type\": \"F16\","
    " \"tensors\": [{\"uid\": 1, \"name\": \"x\", \"dims\": [96, 2048]},"
    " {\"uid\": 2, \"name\": \"scale\", \"dims\": [1, 2048]},"
    " {\"uid\": 3, \"name\": \"bias\", \"dims\": [1, 2048]},"
    " {\"uid\": 4, \"name\": \"y\", \"dims\": [96, 2048]}],"
    " \"nodes\": [{\"name\": \"ln\", \"op\": \"Layernorm\", \"inputs\": [{\"slot\": 0, "
    "\"uid\": 1}, {\"slot\": 1, \"uid\": 2}, {\"slot\": 2, \"uid\": 3}], \"outputs\": "
    "[{\"slot\": 0, \"uid\": 4}], \"attr_type\": \"NormAttr\", \"attr\": {\"epsilon\": "
    "1e-05}}]}";

static const char softmax_json[] =
    "{\"format_major\": 1, \"format_minor\": 2, \"name\": \"softmax\", \"io_type\": \"F16\","
    " \"tensors\": [{\"uid\": 1, \"name\": \"x\", \"dims\": [96, 2048]},"
    " {\"uid\": 2, \"name\": \"y\", \"dims\": [96, 2048]}],"
    " \"nodes\": [{\"name\": \"softmax\", \"op\": \"Softmax\", \"inputs\": [{\"slot\": 0, "
    "\"uid\": 1}], \"outputs\": [{\"slot\": 0, \"uid\": 2}], \"attr_type\": \"AxisAttr\", "
    "\"attr\": {\"axis\": -1}}]}";

static const char sdpa_json[] =
    "{\"format_major\": 1, \"format_minor\": 1, \"name\": \"sdpa\", \"io_type\": \"F16\","
    " \"tensors\": [{\"uid\": 1, \"name\": \"q\", \"dims\": [1, 2, 256, 64]},"
    " {\"uid\": 2, \"name\": \"k\", \"dims\": [1, 2, 256, 64]},"
    " {\"uid\": 3, \"name\": \"v\", \"dims\": [1, 2, 256, 64]},"
    " {\"uid\": 4, \"name\": \"o\", \"dims\": [1, 2, 256, 64]}],"
    " \"nodes\": [{\"name\": \"attention\", \"op\": \"SdpaFwd\", \"inputs\": [{\"slot\": 0, "
    "\"uid\": 1}, {\"slot\": 1, \"uid\": 2}, {\"slot\": 2, \"uid\": 3}], \"outputs\": "
    "[{\"slot\": 0, \"uid\": 4}], \"attr_type\": \"SdpaAttr\", \"attr\": {\"scale\": "
    "0.125}}]}";

/* A sum of x [rows, cols] over the axis whose y dim is 1. */
#define REDUCE_JSON(Y_DIMS)                                                                  \
    "{\"format_major\": 1, \"format_minor\": 0, \"name\": \"sum\", \"io_type\": \"F16\","  \
    " \"tensors\": [{\"uid\": 1, \"name\": \"x\", \"dims\": [192, 520]},"                   \
    " {\"uid\": 2, \"name\": \"y\", \"dims\": " Y_DIMS "}],"                                \
    " \"nodes\": [{\"name\": \"sum\", \"op\": \"Reduction\", \"inputs\": [{\"slot\": 0, "      \
    "\"uid\": 1}], \"outputs\": [{\"slot\": 0, \"uid\": 2}], \"attr_type\": "                 \
    "\"ReductionAttr\", \"attr\": {\"mode\": \"Add\"}}]}"
static const char reduce_rows_json[] = REDUCE_JSON("[192, 1]");
static const char reduce_columns_json[] = REDUCE_JSON("[1, 520]");

#define MATMUL(m, n, k) {0, {0, 0}, m, n, k, CDNN_DATA_TYPE_F16, .act = CDNN_PW_IDENTITY}
/* What the Hopper kernels take, with every epilogue input: bias, gelu and
 * a residual. */
#define MATMUL_EPILOGUE                                                                    \
    {0, {0, 0}, 256, 512, 256, CDNN_DATA_TYPE_F16, .bias = 1, .act = CDNN_PW_GELU_FWD,    \
     .residual = 1}

static const base_t bases[] = {
    {"matmul_wgmma", "kernels:matmul_cuda", NULL, MATMUL_EPILOGUE, {"tensor_maps=1"},
     {"max_m", "epilogue"}},
    {"matmul_wgmma_tma_store", "kernels:matmul_cuda", NULL, MATMUL_EPILOGUE,
     {"tensor_maps=1", "epilogue=tma_store"}, {"max_m"}},
    {"small_m_strip", "kernels:matmul_cuda", NULL, MATMUL(8, 1024, 1024), {"max_m="},
     {"split_k"}},
    {"small_m_split_k", "kernels:matmul_cuda", NULL, MATMUL(8, 1024, 1024),
     {"max_m=", "split_k="}, {NULL}},
    {"conv_wgmma", "kernels:conv_cuda", conv_json, {0}, {"tensor_maps=1"},
     {"epilogue", "stem"}},
    {"conv_wgmma_tma_store", "kernels:conv_cuda", conv_json, {0},
     {"tensor_maps=1", "epilogue=tma_store"}, {"stem"}},
    {"conv_stem", "kernels:conv_cuda", stem_json, {0}, {"stem=1"}, {"epilogue"}},
    {"conv_stem_tma_store", "kernels:conv_cuda", stem_json, {0},
     {"stem=1", "epilogue=tma_store"}, {NULL}},
    {"layernorm_staged", "kernels:norm_cuda", layernorm_json, {0}, {"stages="}, {NULL}},
    {"softmax_staged", "kernels:softmax_cuda", softmax_json, {0}, {"stages="}, {NULL}},
    {"sdpa_wgmma", "kernels:sdpa_cuda", sdpa_json, {0}, {"tensor_maps=1"}, {NULL}},
    {"reduce_rows", "kernels:reduce_cuda", reduce_rows_json, {0}, {"rows_per_block="},
     {"columns"}},
    {"reduce_columns", "kernels:reduce_cuda", reduce_columns_json, {0}, {"columns=1"},
     {NULL}},
};
#define BASE_COUNT (int)(sizeof bases / sizeof *bases)

/* ---- checks ---------------------------------------------------------------------------- */

static int checks, failures;

static void verdict(int ok, const char *base, const char *forgery, const char *mode,
                    const char *fmt, ...)
{
    va_list ap;
    printf("%s %s %s %s: ", ok ? "PASS" : "FAIL", base, forgery, mode);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    checks++;
    failures += !ok;
}

/* ---- building and running ------------------------------------------------------------- */

static cdnn_graph_t *base_graph(const base_t *b, char *why, size_t size)
{
    cdnn_graph_t *g = NULL;
    if (!b->json)
        return kp_matmul_graph(&b->matmul);
    cdnn_status_t st = cdnn_graph_from_json(&g, b->json, strlen(b->json));
    if (st != CDNN_STATUS_SUCCESS)
        snprintf(why, size, "its graph: %s: %s", cdnn_status_string(st), cdnn_last_error());
    return g;
}

/* g built on h pinned to engine's candidate c; its plan's bytes, or
 * {NULL, 0} with why. */
static kp_bytes_t build_candidate(cdnn_graph_t *g, cdnn_handle_t *h, const char *engine,
                                  int64_t c, char *why, size_t size)
{
    char knob[128];
    kp_bytes_t plan = {NULL, 0};
    cdnn_build_options_t *opts = NULL;
    snprintf(knob, sizeof knob, "kernels.%s.candidate", engine + strlen("kernels:"));
    cdnn_status_t st = cdnn_build_options_create(&opts);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(engine));
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_build_options_set_knob(opts, knob, c);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_build(g, h, opts);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &plan.size);
    if (st == CDNN_STATUS_SUCCESS && !(plan.data = malloc(plan.size)))
        st = CDNN_STATUS_ALLOC_FAILED;
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_save(g, CDNN_SAVE_PLAN, plan.data, plan.size, &plan.size);
    if (st != CDNN_STATUS_SUCCESS) {
        snprintf(why, size, "%s: %s", cdnn_status_string(st), cdnn_last_error());
        kp_bytes_free(&plan);
    }
    cdnn_build_options_destroy(opts);
    return plan;
}

static const char *metadata_value(const kp_payload_t *p, const char *key)
{
    for (int32_t i = 0; i < p->metadata_count; i++)
        if (strcmp(p->keys[i], key) == 0)
            return p->values[i];
    return NULL;
}

/* Whether p's metadata has each "key=value" ("key=": any value) of b's and
 * none of the keys b's candidate lacks. */
static int is_wanted(const base_t *b, const kp_payload_t *p)
{
    for (int i = 0; i < 3 && b->has[i]; i++) {
        const char *eq = strchr(b->has[i], '=');
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(eq - b->has[i]), b->has[i]);
        const char *v = metadata_value(p, key);
        if (!v || (eq[1] && strcmp(v, eq + 1) != 0))
            return 0;
    }
    for (int i = 0; i < 3 && b->lacks[i]; i++)
        if (metadata_value(p, b->lacks[i]))
            return 0;
    return 1;
}

/* Device buffers of exactly the declared spans for g, inputs uploaded from
 * r (kp_run_prepare's deterministic values), outputs poisoned (0xff bytes:
 * NaN in every float type), executed and the outputs downloaded into r. */
static cdnn_status_t run_on_device(cdnn_graph_t *g, cdnn_handle_t *h, kp_run_t *r)
{
    void *device[KP_MAX_IO] = {NULL}, *workspace = NULL;
    int64_t uids[KP_MAX_IO];
    size_t workspace_size = 0;
    cdnn_status_t st = cdnn_graph_workspace_size(g, &workspace_size);
    for (int32_t i = 0; st == CDNN_STATUS_SUCCESS && i < r->count; i++) {
        uids[i] = r->io[i].uid;
        if (r->io[i].is_output)
            memset(r->ptrs[i], 0xff, r->io[i].span_bytes);
        st = cdnn_memory_alloc(h, r->io[i].span_bytes, &device[i]);
        if (st == CDNN_STATUS_SUCCESS)
            st = cdnn_memory_upload(h, device[i], r->ptrs[i], r->io[i].span_bytes);
    }
    if (st == CDNN_STATUS_SUCCESS && workspace_size)
        st = cdnn_memory_alloc(h, workspace_size, &workspace);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_execute(g, h, r->count, uids, device, workspace);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_handle_synchronize(h);
    for (int32_t i = 0; st == CDNN_STATUS_SUCCESS && i < r->count; i++)
        if (r->io[i].is_output)
            st = cdnn_memory_download(h, r->ptrs[i], device[i], r->io[i].span_bytes);
    cdnn_handle_synchronize(h);
    for (int32_t i = 0; i < r->count; i++)
        cdnn_memory_free(h, device[i]);
    cdnn_memory_free(h, workspace);
    return st;
}

/* Whether got's outputs are want's: byte for byte, or (another kernel of
 * the family: another order of sums) within the type's tolerance relative
 * to max(|want|, 1).  why says where they differ. */
static int same_outputs(const kp_run_t *got, const kp_run_t *want, char *why, size_t size)
{
    if (got->count != want->count) {
        snprintf(why, size, "%d tensors, the base has %d", got->count, want->count);
        return 0;
    }
    for (int32_t i = 0; i < got->count; i++) {
        const cdnn_tensor_io_t *io = &want->io[i];
        if (!io->is_output || memcmp(got->ptrs[i], want->ptrs[i], io->span_bytes) == 0)
            continue;
        size_t elem = io->type == CDNN_DATA_TYPE_F32 ? 4 : 2;
        double tol = io->type == CDNN_DATA_TYPE_F32 ? 1e-4
                     : io->type == CDNN_DATA_TYPE_F16 ? 1e-2 : 5e-2;
        for (size_t e = 0; e < io->span_bytes / elem; e++) {
            const uint8_t *a = (const uint8_t *)got->ptrs[i] + e * elem;
            const uint8_t *b = (const uint8_t *)want->ptrs[i] + e * elem;
            if (memcmp(a, b, elem) == 0)
                continue;
            double x = cdnn_load_element(io->type, a), y = cdnn_load_element(io->type, b);
            if (!(fabs(x - y) <= tol * fmax(fabs(y), 1.0))) {
                snprintf(why, size, "output uid %lld element %zu is %g, the base's %g",
                         (long long)io->uid, e, x, y);
                return 0;
            }
        }
    }
    return 1;
}

/* ---- the forgeries ------------------------------------------------------------------- */

typedef enum { REFUSED, RUNS, RUNS_OR_REFUSED } outcome_t;

/* What a forgery must do in one mode: be refused with status and words
 * (status 0: any refusal but INTERNAL_ERROR), or run to the base's
 * outputs, or either. */
typedef struct expect {
    outcome_t outcome;
    cdnn_status_t status;
    const char *words;
} expect_t;

typedef struct forgery {
    char name[96];
    kp_payload_t payload;
    expect_t normal, strict;
} forgery_t;

typedef struct base_state {
    const base_t *base;
    cdnn_handle_t *h;
    kp_bytes_t plan;
    kp_payload_t payload;
    kp_run_t outputs;
    /* a sibling: another installed kernel in the same code object */
    kp_payload_t sibling;
    int has_sibling;
    /* another family's code object, as installed: the pointwise cubin */
    kp_bytes_t other_code;
} base_state_t;

static const expect_t installed_otherwise = {REFUSED, CDNN_STATUS_CORRUPT_DATA,
                                             INSTALLED_OTHERWISE};
static const expect_t not_in_pack = {REFUSED, CDNN_STATUS_NOT_SUPPORTED, NOT_IN_PACK};
static const expect_t runs = {RUNS, 0, NULL};

static void check(base_state_t *s, const forgery_t *f, int strict)
{
    const expect_t *e = strict ? &f->strict : &f->normal;
    const char *mode = strict ? "strict" : "normal";
    kp_bytes_t payload = kp_payload_bytes(&f->payload);
    kp_bytes_t plan = kp_plan_with_payload(s->plan, payload);
    cdnn_graph_t *g = NULL;
    if (strict)
        setenv("CDNN_TRUSTED_CODE", "pack", 1);
    else
        unsetenv("CDNN_TRUSTED_CODE");
    cdnn_status_t st = cdnn_plan_load(&g, s->h, plan.data, plan.size);
    const char *msg = st ? cdnn_last_error() : "";
    if (st != CDNN_STATUS_SUCCESS) {
        int ok = e->outcome != RUNS && st != CDNN_STATUS_INTERNAL_ERROR &&
                 (!e->status || st == e->status) && (!e->words || strstr(msg, e->words));
        verdict(ok, s->base->label, f->name, mode, "refused: %s: %s%s%s%s",
                cdnn_status_string(st), msg, ok ? "" : " (expected ",
                ok ? "" : e->outcome == RUNS ? "a run" : e->words ? e->words : "a refusal",
                ok ? "" : ")");
    } else {
        kp_run_t r = kp_run_prepare(g);
        char why[512] = "";
        cdnn_status_t ex = run_on_device(g, s->h, &r);
        int same = ex == CDNN_STATUS_SUCCESS && same_outputs(&r, &s->outputs, why, sizeof why);
        int ok = e->outcome != REFUSED && same;
        if (ex != CDNN_STATUS_SUCCESS)
            snprintf(why, sizeof why, "execute: %s: %s", cdnn_status_string(ex),
                     cdnn_last_error());
        verdict(ok, s->base->label, f->name, mode, "loaded; %s%s%s",
                same ? "ran to the base's outputs" : why,
                e->outcome == REFUSED ? "; expected a refusal: " : "",
                e->outcome == REFUSED && e->words ? e->words : "");
        kp_run_free(&r);
        cdnn_graph_destroy(g);
    }
    unsetenv("CDNN_TRUSTED_CODE");
    kp_bytes_free(&plan);
    kp_bytes_free(&payload);
}

/* A fresh copy of the base's payload, named, expected as given. */
static forgery_t start(const base_state_t *s, expect_t normal, expect_t strict,
                       const char *fmt, ...)
{
    forgery_t f;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f.name, sizeof f.name, fmt, ap);
    va_end(ap);
    f.payload = kp_payload_of_plan(s->plan);
    f.normal = normal;
    f.strict = strict;
    return f;
}

static void finish(base_state_t *s, forgery_t *f)
{
    check(s, f, 0);
    check(s, f, 1);
    kp_payload_free(&f->payload);
}

/* The value a metadata entry is forged to: a number doubled (0 -> 1), a
 * word swapped for another of its key's, or marked. */
static const char *forged_value(const char *key, const char *v, char *buf, size_t size)
{
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (*v && !*end) {
        snprintf(buf, size, "%lld", n ? 2 * n : 1);
        return buf;
    }
    if (strcmp(key, "dtype") == 0)
        return strcmp(v, "f16") == 0 ? "bf16" : "f16";
    if (strcmp(key, "epilogue") == 0)
        return strcmp(v, "tma_store") == 0 ? "direct" : "tma_store";
    snprintf(buf, size, "%s_forged", v);
    return buf;
}

static void set_code(kp_payload_t *p, const uint8_t *data, size_t size)
{
    kp_bytes_free(&p->code);
    p->code.data = malloc(size ? size : 1);
    p->code.size = size;
    memcpy(p->code.data, data, size);
    sdk_sha256(p->code.data, p->code.size, p->kernel_sha256);
}

static void metadata_forgeries(base_state_t *s)
{
    static const char *const family_keys[][2] = {
        {"stem", "1"}, {"epilogue", "tma_store"}, {"stages", "2"}, {"tensor_maps", "1"},
        {"split_k", "2"}};
    const kp_payload_t *p0 = &s->payload;
    char buf[64];
    for (int32_t i = 0; i < p0->metadata_count; i++) {
        forgery_t f = start(s, installed_otherwise, not_in_pack, "metadata.%s_changed",
                            p0->keys[i]);
        kp_payload_set(&f.payload.values[i],
                       forged_value(p0->keys[i], p0->values[i], buf, sizeof buf));
        finish(s, &f);
        f = start(s, installed_otherwise, not_in_pack, "metadata.%s_dropped", p0->keys[i]);
        free(f.payload.keys[i]);
        free(f.payload.values[i]);
        memmove(&f.payload.keys[i], &f.payload.keys[i + 1],
                (size_t)(f.payload.metadata_count - i - 1) * sizeof *f.payload.keys);
        memmove(&f.payload.values[i], &f.payload.values[i + 1],
                (size_t)(f.payload.metadata_count - i - 1) * sizeof *f.payload.values);
        f.payload.metadata_count--;
        finish(s, &f);
    }
    for (size_t k = 0; k < sizeof family_keys / sizeof *family_keys; k++) {
        if (metadata_value(p0, family_keys[k][0]) || p0->metadata_count >= KP_MAX_METADATA)
            continue;
        forgery_t f = start(s, installed_otherwise, not_in_pack, "metadata.%s_added",
                            family_keys[k][0]);
        /* in its sorted place, as cdnn writes the keys */
        int32_t at = 0;
        while (at < f.payload.metadata_count &&
               strcmp(f.payload.keys[at], family_keys[k][0]) < 0)
            at++;
        memmove(&f.payload.keys[at + 1], &f.payload.keys[at],
                (size_t)(f.payload.metadata_count - at) * sizeof *f.payload.keys);
        memmove(&f.payload.values[at + 1], &f.payload.values[at],
                (size_t)(f.payload.metadata_count - at) * sizeof *f.payload.values);
        f.payload.keys[at] = strdup(family_keys[k][0]);
        f.payload.values[at] = strdup(family_keys[k][1]);
        f.payload.metadata_count++;
        finish(s, &f);
    }
}

static void symbol_forgeries(base_state_t *s)
{
    forgery_t f = start(s, (expect_t){REFUSED, CDNN_STATUS_CORRUPT_DATA, "has no symbol"},
                        not_in_pack, "symbol.missing");
    kp_payload_set(&f.payload.symbol, "cdnn_cuda_no_such_kernel");
    finish(s, &f);
    if (!s->has_sibling) {
        printf("# %s: no other candidate for this graph shares its code object: no "
               "symbol swap\n", s->base->label);
        return;
    }
    /* A sibling the pack describes as the base (the small-m strip kernels
     * that differ only in their k loop) makes the swap the sibling's own
     * plan: it must run, to the base's outputs. */
    const kp_payload_t *sib = &s->sibling;
    int same = sib->metadata_count == s->payload.metadata_count;
    for (int32_t i = 0; same && i < sib->metadata_count; i++)
        same = strcmp(sib->keys[i], s->payload.keys[i]) == 0 &&
               strcmp(sib->values[i], s->payload.values[i]) == 0;
    f = start(s, same ? runs : installed_otherwise, same ? runs : not_in_pack,
              "symbol.sibling");
    kp_payload_set(&f.payload.symbol, sib->symbol);
    finish(s, &f);
    /* the sibling whole but for the launch values: the sibling's plan if
     * they are the same, else refused by them */
    const expect_t either = {RUNS_OR_REFUSED, CDNN_STATUS_CORRUPT_DATA, "inconsistent"};
    f = start(s, either, either, "symbol.sibling_with_its_metadata");
    kp_payload_set(&f.payload.symbol, sib->symbol);
    kp_payload_set(&f.payload.kernel_id, sib->kernel_id);
    for (int32_t i = 0; i < f.payload.metadata_count; i++) {
        free(f.payload.keys[i]);
        free(f.payload.values[i]);
    }
    f.payload.metadata_count = sib->metadata_count;
    for (int32_t i = 0; i < sib->metadata_count; i++) {
        f.payload.keys[i] = strdup(sib->keys[i]);
        f.payload.values[i] = strdup(sib->values[i]);
    }
    finish(s, &f);
}

static void target_forgeries(base_state_t *s)
{
    static const struct {
        const char *target;
        expect_t normal, strict;
    } targets[] = {
        /* runnable here (an H200, sm_90): the pack says sm_90a */
        {"sm_90", {REFUSED, CDNN_STATUS_CORRUPT_DATA, INSTALLED_OTHERWISE},
         {REFUSED, CDNN_STATUS_NOT_SUPPORTED, NOT_IN_PACK}},
        {"compute_90", {REFUSED, CDNN_STATUS_CORRUPT_DATA, INSTALLED_OTHERWISE},
         {REFUSED, CDNN_STATUS_NOT_SUPPORTED, NOT_IN_PACK}},
        /* not runnable here */
        {"sm_80", {REFUSED, CDNN_STATUS_NOT_SUPPORTED, "cannot run"},
         {REFUSED, CDNN_STATUS_NOT_SUPPORTED, NOT_IN_PACK}},
        {"sm_100a", {REFUSED, CDNN_STATUS_NOT_SUPPORTED, "cannot run"},
         {REFUSED, CDNN_STATUS_NOT_SUPPORTED, NOT_IN_PACK}},
        /* another family's: damage, in either mode */
        {"x86-64", {REFUSED, CDNN_STATUS_CORRUPT_DATA, "is not a cuda target"},
         {REFUSED, CDNN_STATUS_CORRUPT_DATA, NULL}},
    };
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
        if (strcmp(targets[i].target, s->payload.target) == 0)
            continue;
        forgery_t f = start(s, targets[i].normal, targets[i].strict, "target.%s",
                            targets[i].target);
        kp_payload_set(&f.payload.target, targets[i].target);
        finish(s, &f);
    }
}

static void launch_forgeries(base_state_t *s)
{
    const expect_t inconsistent = {REFUSED, CDNN_STATUS_CORRUPT_DATA, "launch value"};
    /* Restore compares every value alike (the CPU forgeries edit each of a
     * host plan's): here the parallelism, the first shape value, and the
     * last eight, which hold the launch itself (grid, block, shared memory,
     * the TMA tiles, the stem and TMA-store marks).  Strict mode does not
     * vouch for launch values: restore's check refuses them there too. */
    const int32_t n = s->payload.launch_count;
    for (int32_t i = 0; i < n; i++) {
        if (i > 1 && i < n - 8)
            continue;
        forgery_t f = start(s, inconsistent, inconsistent, "launch.value_%d", i);
        f.payload.launch_values[i] += 1;
        finish(s, &f);
    }
    forgery_t f = start(s, inconsistent, inconsistent, "launch.appended");
    f.payload.launch_values[f.payload.launch_count++] = 0;
    finish(s, &f);
    f = start(s, inconsistent, inconsistent, "launch.dropped");
    f.payload.launch_count--;
    finish(s, &f);
}

static void code_forgeries(base_state_t *s)
{
    const expect_t digest = {REFUSED, CDNN_STATUS_CORRUPT_DATA, "kernel_sha256"};
    forgery_t f = start(s, digest, digest, "code.byte_flipped");
    f.payload.code.data[f.payload.code.size / 2] ^= 1;
    finish(s, &f);
    /* cut in half and re-hashed: code no pack holds, whose ELF tables lie
     * past its end (the driver reads a cubin by its header) */
    f = start(s, (expect_t){REFUSED, CDNN_STATUS_CORRUPT_DATA, "cubin of kernel"}, not_in_pack,
              "code.truncated_resealed");
    set_code(&f.payload, s->payload.code.data, s->payload.code.size / 2);
    finish(s, &f);
    /* the same machine code, bytes no pack holds: trusted as its sender is
     * in normal mode */
    f = start(s, runs, not_in_pack, "code.padded_resealed");
    uint8_t *padded = calloc(1, s->payload.code.size + 64);
    memcpy(padded, s->payload.code.data, s->payload.code.size);
    set_code(&f.payload, padded, s->payload.code.size + 64);
    free(padded);
    finish(s, &f);
    if (s->other_code.data) {
        /* installed code, but none of its entries is this symbol: the
         * driver finds it has no such function */
        f = start(s, (expect_t){REFUSED, CDNN_STATUS_CORRUPT_DATA, "has no symbol"},
                  not_in_pack, "code.other_family_installed");
        set_code(&f.payload, s->other_code.data, s->other_code.size);
        finish(s, &f);
    }
}

static void handler_forgeries(base_state_t *s)
{
    const char *other = strcmp(s->payload.handler, "cuda_conv") != 0 ? "cuda_conv"
                                                                     : "cuda_matmul";
    const char *other_signature = strcmp(s->payload.signature, "cuda-conv-v1") != 0
                                      ? "cuda-conv-v1" : "cuda-matmul-v1";
    const expect_t inconsistent = {REFUSED, CDNN_STATUS_CORRUPT_DATA, "inconsistent"};
    forgery_t f = start(s, inconsistent, (expect_t){REFUSED, 0, NULL}, "handler.other");
    kp_payload_set(&f.payload.handler, other);
    finish(s, &f);
    f = start(s, (expect_t){REFUSED, CDNN_STATUS_NOT_SUPPORTED, "version"},
              (expect_t){REFUSED, 0, NULL}, "handler.newer");
    f.payload.handler_version += 1;
    finish(s, &f);
    f = start(s, inconsistent, not_in_pack, "signature.other");
    kp_payload_set(&f.payload.signature, other_signature);
    finish(s, &f);
    f = start(s, runs, runs, "control.unchanged");
    finish(s, &f);
}

/* ---- one base, in a child ------------------------------------------------------------- */

/* Build the base's candidate and find a sibling: the first other
 * candidate in the same code object. */
static int prepare(base_state_t *s)
{
    char why[600] = "no candidate of the engine has that metadata";
    cdnn_graph_t *g = NULL;
    for (int64_t c = 1; c <= MAX_CANDIDATES && !s->has_sibling; c++) {
        char cwhy[600];
        if (!(g = base_graph(s->base, why, sizeof why)))
            goto refused;
        kp_bytes_t plan = build_candidate(g, s->h, s->base->engine, c, cwhy, sizeof cwhy);
        cdnn_graph_destroy(g);
        g = NULL;
        if (!plan.data)
            continue; /* it does not take the graph, or there is none of that number */
        kp_payload_t p = kp_payload_of_plan(plan);
        if (!s->plan.data && is_wanted(s->base, &p)) {
            s->plan = plan;
            s->payload = p;
            continue;
        }
        if (s->plan.data && memcmp(p.kernel_sha256, s->payload.kernel_sha256, 32) == 0 &&
            strcmp(p.symbol, s->payload.symbol) != 0) {
            s->sibling = p;
            s->has_sibling = 1;
        } else
            kp_payload_free(&p);
        kp_bytes_free(&plan);
    }
    if (!s->plan.data)
        goto refused;
    cdnn_status_t st = cdnn_plan_load(&g, s->h, s->plan.data, s->plan.size);
    if (st == CDNN_STATUS_SUCCESS) {
        s->outputs = kp_run_prepare(g);
        st = run_on_device(g, s->h, &s->outputs);
    }
    if (st != CDNN_STATUS_SUCCESS) {
        snprintf(why, sizeof why, "the base plan, loaded: %s: %s", cdnn_status_string(st),
                 cdnn_last_error());
        goto refused;
    }
    cdnn_graph_destroy(g);
    printf("# %s: %s candidate %s (%s), %d metadata entries, %d launch values%s%s\n",
           s->base->label, s->base->engine, s->payload.kernel_id, s->payload.symbol,
           s->payload.metadata_count, s->payload.launch_count,
           s->has_sibling ? "; sibling " : "", s->has_sibling ? s->sibling.symbol : "");
    return 1;
refused:
    verdict(0, s->base->label, "base", "normal", "not built: %s", why);
    cdnn_graph_destroy(g);
    return 0;
}

static int run_base(const base_t *b, kp_bytes_t other_code)
{
    base_state_t s;
    memset(&s, 0, sizeof s);
    s.base = b;
    s.other_code = other_code;
    cdnn_status_t st = cdnn_handle_create(&s.h, "cuda:0");
    if (st != CDNN_STATUS_SUCCESS) {
        verdict(0, b->label, "base", "normal", "no cuda:0 handle: %s", cdnn_last_error());
        return 1;
    }
    if (prepare(&s)) {
        metadata_forgeries(&s);
        symbol_forgeries(&s);
        target_forgeries(&s);
        launch_forgeries(&s);
        code_forgeries(&s);
        handler_forgeries(&s);
        kp_run_free(&s.outputs);
        kp_payload_free(&s.payload);
        if (s.has_sibling)
            kp_payload_free(&s.sibling);
        kp_bytes_free(&s.plan);
    }
    cdnn_handle_destroy(s.h);
    printf("# %s: %d checks, %d failed\n", b->label, checks, failures);
    return failures ? 1 : 0;
}

/* ---- the parent ---------------------------------------------------------------------- */

/* A base running in a child: its output goes to a file, its checks and
 * failures through a pipe, so that the bases run at once and their lines
 * are printed base by base. */
typedef struct child {
    pid_t pid;
    int counts_fd;
    FILE *output;
} child_t;

static child_t spawn(const base_t *b, kp_bytes_t other_code)
{
    child_t c = {-1, -1, tmpfile()};
    int fds[2];
    if (!c.output || pipe(fds) != 0)
        return c;
    fflush(NULL);
    c.pid = fork();
    if (c.pid == 0) {
        close(fds[0]);
        dup2(fileno(c.output), STDOUT_FILENO);
        alarm(CHILD_SECONDS);
        run_base(b, other_code);
        int counts[2] = {checks, failures};
        ssize_t w = write(fds[1], counts, sizeof counts);
        (void)w;
        fflush(NULL);
        exit(failures ? 1 : 0);
    }
    close(fds[1]);
    c.counts_fd = fds[0];
    return c;
}

/* A child that dies, hangs or says nothing is one failed check. */
static void collect(const base_t *b, child_t *c, int *total, int *failed)
{
    int counts[2] = {0, 0}, status = 0;
    ssize_t got = c->pid > 0 ? read(c->counts_fd, counts, sizeof counts) : -1;
    while (c->pid > 0 && waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (c->output) {
        char line[4096];
        rewind(c->output);
        while (fgets(line, sizeof line, c->output))
            fputs(line, stdout);
        fclose(c->output);
    }
    if (c->counts_fd >= 0)
        close(c->counts_fd);
    if (got != (ssize_t)sizeof counts) {
        printf("FAIL %s: the child %s without a count\n", b->label,
               c->pid < 0 ? "was not started"
               : WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "hung (timed out)"
               : WIFSIGNALED(status) ? "crashed" : "ended");
        counts[0] += 1, counts[1] += 1;
    }
    *total += counts[0];
    *failed += counts[1];
    fflush(stdout);
}

/* Whether cuda:0 opens, asked in a child: the parent must not start the
 * driver it forks after. */
static int device_present(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        cdnn_handle_t *h = NULL;
        cdnn_status_t st = cdnn_handle_create(&h, "cuda:0");
        if (st != CDNN_STATUS_SUCCESS)
            printf("SKIP: no cuda:0 (%s)\n", cdnn_last_error());
        cdnn_handle_destroy(h);
        fflush(NULL);
        _exit(st == CDNN_STATUS_SUCCESS ? 0 : 77);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
    const char *only[16];
    int only_count = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: cuda_forgeries KERNEL_DIR [--only LABEL]...\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc && only_count < 16; i += 2)
        if (strcmp(argv[i], "--only") == 0)
            only[only_count++] = argv[i + 1];
    if (!device_present())
        return 77;
    char path[4096];
    snprintf(path, sizeof path, "%s/pointwise.sm_90a.cubin", argv[1]);
    kp_bytes_t other_code = access(path, R_OK) == 0 ? kp_read_file(path)
                                                     : (kp_bytes_t){NULL, 0};
    if (!other_code.data)
        printf("# %s: not there; the other-family code forgery is left out\n", path);
    int total = 0, failed = 0, wanted[BASE_COUNT];
    child_t children[BASE_COUNT];
    for (int i = 0; i < BASE_COUNT; i++) {
        wanted[i] = only_count == 0;
        for (int o = 0; o < only_count; o++)
            wanted[i] |= strcmp(bases[i].label, only[o]) == 0;
        if (wanted[i])
            children[i] = spawn(&bases[i], other_code);
    }
    for (int i = 0; i < BASE_COUNT; i++)
        if (wanted[i])
            collect(&bases[i], &children[i], &total, &failed);
    kp_bytes_free(&other_code);
    printf("# cuda forgeries: %d checks (each forgery in normal and strict mode) over %d "
           "bases, %d failed\n", total, only_count ? only_count : BASE_COUNT, failed);
    return failed ? 1 : 0;
}
