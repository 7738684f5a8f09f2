/*
 * test_kernels_cuda.c -- the kernels provider on a GPU: packs made from the
 * project's CUDA code objects (kernels/cuda, built by nvcc) run through
 * cdnn on cuda:0.
 *
 *     test_kernels_cuda DIR      DIR: the .cubin and .ptx files
 *
 *   - every cuda matmul engine's default and candidates (the sm_90a
 *     wgmma + TMA kernels too, through the handler's tensor maps): build, run
 *     against cpu:reference (f16, bf16, f32; batches, a transposed b, bias,
 *     activations, residual), save, load on a fresh handle, run the same
 *     bytes out, re-save byte for byte;
 *   - kernels:softmax_cuda: the softmax and log-softmax graphs the host
 *     engine runs, on both kernels, round-tripped the same way;
 *   - kernels:reduce_cuda: the reductions the host engine runs, on every
 *     kernel, round-tripped the same way;
 *   - a benchmarking plan chooses at its first execute, timed by CUDA
 *     events, and saves after;
 *   - the plan on a CPU handle is refused (DEVICE_MISMATCH), and a plan
 *     re-sealed to hold a cubin of another architecture is refused by the
 *     target check;
 *   - rule 10 on the GPU: strict mode runs it while its code is installed;
 *   - kernels:conv_cuda (NHWC conv + bias + activation, f16/bf16, 1-D and
 *     2-D, strides, dilation, a KCRS filter; every candidate) and
 *     kernels:sdpa_cuda (f32/f16/bf16, causal, BSHD strides, head sizes 32
 *     to 256) round-tripped as the matmul; what the conv engine leaves to
 *     others refused with a reason; a benchmarking conv plan chooses by
 *     CUDA events at its first execute;
 *   - rule 2 on the GPU: a plan saved against a pack of the marked CUDA
 *     matmul v1 (every product + 1) still runs v1 after the pack becomes
 *     v2 (+ 2), which a fresh build picks.
 * Exit 77 (skip) without a CUDA driver or device.  scripts/gpu-check.sh
 * runs it on the GPU machine.
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
#include <cdnn_sdk/cuda.h>
#include <cdnn_sdk/kpack.h>
#include <cdnn_sdk/numeric.h>
#include <cdnn_sdk/sha256.h>

#include <cuda_kernel.h>
#include <sdpa_tma.h>

#include "kp_forge.h"
#include "kp_graphs.h"
#include "kp_util.h"

#define OK(call)                                                                      \
    do {                                                                              \
        cdnn_status_t st_ = (call);                                                   \
        if (st_ != CDNN_STATUS_SUCCESS)                                               \
            fail_msg("%s: %s: %s", #call, cdnn_status_string(st_), cdnn_last_error());  \
    } while (0)
#define CU(call)                                                                      \
    do {                                                                              \
        if ((call) != SDK_CU_SUCCESS)                                                 \
            fail_msg("%s failed", #call);                                             \
    } while (0)

#define MATMUL_ENGINE "kernels:matmul_cuda"
#define CANDIDATE_KNOB "kernels.matmul_cuda.candidate"
#define POINTWISE_ENGINE "kernels:pointwise_cuda"
#define NORM_ENGINE "kernels:norm_cuda"
#define SOFTMAX_ENGINE "kernels:softmax_cuda"
#define REDUCE_ENGINE "kernels:reduce_cuda"
/* The reduction kernels: cuda_kernel.h's configurations (reduce_kinds). */
#define REDUCE_ROW_KINDS (0 CDNN_CUDA_REDUCE_ROWS_CONFIGS(REDUCE_COUNT_ONE))
#define REDUCE_COLUMN_KINDS (0 CDNN_CUDA_REDUCE_COLUMNS_CONFIGS(REDUCE_COUNT_COLUMNS))
#define REDUCE_KINDS (REDUCE_ROW_KINDS + REDUCE_COLUMN_KINDS)
#define REDUCE_COUNT_ONE(name, g, r) + 1
#define REDUCE_COUNT_COLUMNS(name, w, loads, b) + 1

static const char *object_dir;
static const sdk_cuda_t *cu;
static sdk_cu_context context;
static char pack_dir[300];

/* ---- the pack ------------------------------------------------------------------------- */

#define MAX_KERNELS 64
static const char *const targets[] = {"sm_90a", "sm_80", "compute_80"};

typedef struct cuda_kernel {
    char id[96], symbol[96], dtype[8], tile_m[8], tile_n[8], threads[8], smem[16];
    const char *target;
    sdk_kpack_kv_t metadata[7];
    int metadata_count;
    kp_bytes_t *code;
} cuda_kernel_t;

static int add_kernel(cuda_kernel_t *k, int n, const char *dtype, int tm, int tn,
                      int threads, unsigned smem, const char *target, kp_bytes_t *code)
{
    cuda_kernel_t *c = &k[n];
    snprintf(c->id, sizeof c->id, "matmul_%s_%dx%d_%s", dtype, tm, tn, target);
    snprintf(c->symbol, sizeof c->symbol, "cdnn_cuda_matmul_%s_%dx%d", dtype, tm, tn);
    c->metadata_count = 5;
    snprintf(c->dtype, sizeof c->dtype, "%s", dtype);
    snprintf(c->tile_m, sizeof c->tile_m, "%d", tm);
    snprintf(c->tile_n, sizeof c->tile_n, "%d", tn);
    snprintf(c->threads, sizeof c->threads, "%d", threads);
    snprintf(c->smem, sizeof c->smem, "%u", smem);
    c->target = target;
    c->code = code;
    c->metadata[0] = (sdk_kpack_kv_t){"dtype", c->dtype};
    c->metadata[1] = (sdk_kpack_kv_t){"smem", c->smem};
    c->metadata[2] = (sdk_kpack_kv_t){"threads", c->threads};
    c->metadata[3] = (sdk_kpack_kv_t){"tile_m", c->tile_m};
    c->metadata[4] = (sdk_kpack_kv_t){"tile_n", c->tile_n};
    return n + 1;
}

/* A Hopper kernel (matmul_wgmma.cu): as above, named wgmma and taking
 * tensor maps (metadata tensor_maps=1, in the keys' order). */
static int add_wgmma_kernel(cuda_kernel_t *k, int n, const char *dtype, int tm, int tn,
                            unsigned smem, kp_bytes_t *code)
{
    n = add_kernel(k, n, dtype, tm, tn, CDNN_CUDA_MATMUL_WGMMA_THREADS, smem, "sm_90a", code);
    cuda_kernel_t *c = &k[n - 1];
    snprintf(c->id, sizeof c->id, "matmul_wgmma_%s_%dx%d_sm_90a", dtype, tm, tn);
    snprintf(c->symbol, sizeof c->symbol, "cdnn_cuda_matmul_wgmma_%s_%dx%d", dtype, tm, tn);
    for (int i = 5; i > 2; i--)
        c->metadata[i] = c->metadata[i - 1];
    c->metadata[2] = (sdk_kpack_kv_t){"tensor_maps", "1"};
    c->metadata_count = 6;
    return n;
}

/* A Hopper kernel with the TMA-store epilogue (metadata epilogue=tma_store,
 * in the keys' order): named wgmma_store. */
static int add_wgmma_store_kernel(cuda_kernel_t *k, int n, const char *dtype, int tm, int tn,
                                  unsigned smem, kp_bytes_t *code)
{
    n = add_wgmma_kernel(k, n, dtype, tm, tn, smem, code);
    cuda_kernel_t *c = &k[n - 1];
    snprintf(c->id, sizeof c->id, "matmul_wgmma_store_%s_%dx%d_sm_90a", dtype, tm, tn);
    snprintf(c->symbol, sizeof c->symbol, "cdnn_cuda_matmul_wgmma_store_%s_%dx%d", dtype, tm,
             tn);
    for (int i = 6; i > 1; i--)
        c->metadata[i] = c->metadata[i - 1];
    c->metadata[1] = (sdk_kpack_kv_t){"epilogue", "tma_store"};
    c->metadata_count = 7;
    return n;
}

static kp_bytes_t read_object(const char *name, const char *target)
{
    char path[512];
    int ptx = strncmp(target, "compute_", 8) == 0;
    snprintf(path, sizeof path, "%s/%s.%s.%s", object_dir, name, target, ptx ? "ptx" : "cubin");
    return kp_read_file(path);
}

/* Every matmul kernel in every target, the tensor-core ones then f32, then
 * the sm_90a-only wgmma ones (their code object in *wgmma). */
static int list_kernels(cuda_kernel_t *k, kp_bytes_t tc[3], kp_bytes_t f32[3],
                        kp_bytes_t *wgmma)
{
    int n = 0;
    for (int t = 0; t < 3; t++) {
        tc[t] = read_object("matmul_tc", targets[t]);
        f32[t] = read_object("matmul_f32", targets[t]);
#define TC(tm, tn, wm, wn, stages)                                                       \
    n = add_kernel(k, n, "f16", tm, tn, 32 * (wm) * (wn),                              \
                   CDNN_CUDA_MATMUL_TC_SMEM(tm, tn, stages), targets[t], &tc[t]);      \
    n = add_kernel(k, n, "bf16", tm, tn, 32 * (wm) * (wn),                             \
                   CDNN_CUDA_MATMUL_TC_SMEM(tm, tn, stages), targets[t], &tc[t]);
        CDNN_CUDA_MATMUL_TC_CONFIGS(TC)
#undef TC
#define F32(tm, tn, rows, cols)                                                          \
    n = add_kernel(k, n, "f32", tm, tn, ((tm) / (rows)) * ((tn) / (cols)), 0, targets[t], \
                   &f32[t]);
        CDNN_CUDA_MATMUL_F32_CONFIGS(F32)
#undef F32
    }
    *wgmma = read_object("matmul_wgmma", "sm_90a");
#define WGMMA(tm, tn, stages)                                                            \
    n = add_wgmma_kernel(k, n, "f16", tm, tn, CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages), \
                         wgmma);                                                         \
    n = add_wgmma_kernel(k, n, "bf16", tm, tn, CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages), \
                         wgmma);
    CDNN_CUDA_MATMUL_WGMMA_CONFIGS(WGMMA)
#undef WGMMA
#define WGMMA_STORE(tm, tn, stages, slots)                                               \
    n = add_wgmma_store_kernel(k, n, "f16", tm, tn,                                      \
                               CDNN_CUDA_MATMUL_WGMMA_STORE_SMEM(tm, tn, stages, slots), wgmma); \
    n = add_wgmma_store_kernel(k, n, "bf16", tm, tn,                                     \
                               CDNN_CUDA_MATMUL_WGMMA_STORE_SMEM(tm, tn, stages, slots), wgmma);
    CDNN_CUDA_MATMUL_WGMMA_STORE_CONFIGS(WGMMA_STORE)
#undef WGMMA_STORE
    return n;
}

/* The pointwise kernels in every target: the interpreter, then the
 * short-chain kernel (knob 4 is its sm_90a build). */
#define POINTWISE_KERNELS 6
static void pointwise_kernels(sdk_kpack_spec_kernel_t *kernels, const char **ids,
                              kp_bytes_t code[3])
{
    static const sdk_kpack_kv_t chain[] = {{"chain", "1"}, {"elements_per_block", "4096"}};
    static char id[POINTWISE_KERNELS][32];
    for (int t = 0; t < 3; t++)
        code[t] = read_object("pointwise", targets[t]);
    for (int i = 0; i < POINTWISE_KERNELS; i++) {
        int t = i % 3, is_chain = i >= 3;
        snprintf(id[i], sizeof id[i], "pointwise_%s%s", is_chain ? "chain_" : "", targets[t]);
        kernels[i] = (sdk_kpack_spec_kernel_t){
            id[i], is_chain ? "cdnn_cuda_pointwise_chain" : "cdnn_cuda_pointwise", targets[t],
            "cuda-pointwise-v1", code[t].data, code[t].size, is_chain ? 2 : 0,
            is_chain ? chain : NULL};
        ids[i] = id[i];
    }
}

/* A row kernel (cuda_kernel.h): a block or a warp per row (shared memory;
 * pieces 0), then the register kernels. */
typedef struct row_kernel {
    const char *name;
    int rows_per_block, threads, pieces;
} row_kernel_t;

#define ROW_REGS(name, g, r, n) {"regs_" #name, r, (g) * (r), n},
static const row_kernel_t row_kinds[] = {
    {"block", 1, 256, 0},
    {"warp", 8, 256, 0},
    CDNN_CUDA_ROWS_REGS_CONFIGS(ROW_REGS)
};
#undef ROW_REGS
#define ROW_KINDS ((int)(sizeof row_kinds / sizeof row_kinds[0]))
#define ROW_KERNELS (3 * ROW_KINDS)

/* The names and metadata of a row-kernel family's kernels (static storage). */
typedef struct row_kernel_names {
    char id[ROW_KERNELS][40], symbol[ROW_KINDS][40], signature[32];
    char values[ROW_KINDS][3][12];
    sdk_kpack_kv_t metadata[ROW_KINDS][3];
} row_kernel_names_t;

/* A row-kernel family's kernels (norm, softmax), every kind in every
 * target: <family>_<kind>_<target>, the sm_90a ones first (so that knob k,
 * 1 <= k <= ROW_KINDS, is row_kinds[k - 1] on sm_90a). */
static void row_kernels(const char *family, row_kernel_names_t *names,
                        sdk_kpack_spec_kernel_t *kernels, const char **ids, kp_bytes_t code[3])
{
    /* keys in the pack's (sorted) order; kernels without pieces start at 1 */
    static const char *const keys[3] = {"pieces", "rows_per_block", "threads"};
    snprintf(names->signature, sizeof names->signature, "cuda-%s-v1", family);
    for (int w = 0; w < ROW_KINDS; w++) {
        const row_kernel_t *k = &row_kinds[w];
        const int values[3] = {k->pieces, k->rows_per_block, k->threads};
        snprintf(names->symbol[w], sizeof names->symbol[w], "cdnn_cuda_%s_%s", family, k->name);
        for (int v = 0; v < 3; v++) {
            snprintf(names->values[w][v], sizeof names->values[w][v], "%d", values[v]);
            names->metadata[w][v] = (sdk_kpack_kv_t){keys[v], names->values[w][v]};
        }
    }
    for (int t = 0; t < 3; t++) {
        code[t] = read_object(family, targets[t]);
        for (int w = 0; w < ROW_KINDS; w++) {
            int i = ROW_KINDS * t + w;
            snprintf(names->id[i], sizeof names->id[i], "%s_%s_%s", family, row_kinds[w].name,
                     targets[t]);
            kernels[i] = (sdk_kpack_spec_kernel_t){
                names->id[i], names->symbol[w], targets[t], names->signature, code[t].data,
                code[t].size, row_kinds[w].pieces ? 3 : 2,
                names->metadata[w] + (row_kinds[w].pieces ? 0 : 1)};
            ids[i] = names->id[i];
        }
    }
}

/* The norm kernels, a block and a warp per row, in every target. */
static void norm_kernels(sdk_kpack_spec_kernel_t *kernels, const char **ids,
                         kp_bytes_t code[3])
{
    static row_kernel_names_t names;
    row_kernels("norm", &names, kernels, ids, code);
}

/* The matmul engine's kernels in the pack's order: knob c is k[c - 1]. */
static cuda_kernel_t matmul_kernels[MAX_KERNELS];
static int matmul_kernel_count;

static void write_cuda_pack(const char *path)
{
    cuda_kernel_t *k = matmul_kernels;
    kp_bytes_t tc[3], f32[3], pointwise[3], norm[3], wgmma;
    sdk_kpack_spec_kernel_t kernels[MAX_KERNELS + POINTWISE_KERNELS + ROW_KERNELS];
    const char *ids[MAX_KERNELS + POINTWISE_KERNELS + ROW_KERNELS];
    char why[512];
    uint8_t *bytes = NULL;
    size_t size = 0;
    int n = matmul_kernel_count = list_kernels(k, tc, f32, &wgmma);
    for (int i = 0; i < n; i++) {
        kernels[i] = (sdk_kpack_spec_kernel_t){k[i].id, k[i].symbol, k[i].target,
                                               "cuda-matmul-v1", k[i].code->data,
                                               k[i].code->size, k[i].metadata_count,
                                               k[i].metadata};
        ids[i] = k[i].id;
    }
    pointwise_kernels(kernels + n, ids + n, pointwise);
    norm_kernels(kernels + n + POINTWISE_KERNELS, ids + n + POINTWISE_KERNELS, norm);
    sdk_kpack_spec_engine_t engines[] = {
        {MATMUL_ENGINE, 50, "matmul_epilogue",
         "{\"dtypes\":[\"bf16\",\"f16\",\"f32\"],\"epilogue\":[\"add\",\"bias\","
         "\"gelu\",\"gelu_tanh\",\"relu\",\"silu\",\"tanh\"]}",
         "cuda_matmul", 1, 0, NULL, n, ids},
        {POINTWISE_ENGINE, 50, "pointwise_program", "{}", "cuda_pointwise", 1, 0, NULL,
         POINTWISE_KERNELS, ids + n},
        {NORM_ENGINE, 50, "norm", "{}", "cuda_norm", 1, 0, NULL, ROW_KERNELS,
         ids + n + POINTWISE_KERNELS},
    };
    sdk_kpack_spec_t spec = {"cdnn-cuda-test", "0.1.0", "cuda",
                             n + POINTWISE_KERNELS + ROW_KERNELS, kernels, 3, engines};
    if (sdk_kpack_write(&spec, &bytes, &size, why, sizeof why) != CDNN_STATUS_SUCCESS)
        fail_msg("cannot write the cuda pack: %s", why);
    kp_write_file(path, bytes, size);
    free(bytes);
    for (int t = 0; t < 3; t++) {
        kp_bytes_free(&tc[t]);
        kp_bytes_free(&f32[t]);
        kp_bytes_free(&pointwise[t]);
        kp_bytes_free(&norm[t]);
    }
    kp_bytes_free(&wgmma);
}

/* ---- runs on the device --------------------------------------------------------------- */

/* Host inputs as kp_run_prepare fills them, run on cuda:0's buffers; the
 * outputs come back into the run. */
static cdnn_status_t run_on_device(cdnn_graph_t *g, cdnn_handle_t *h, kp_run_t *r)
{
    int64_t uids[KP_MAX_IO];
    void *device[KP_MAX_IO];
    sdk_cu_deviceptr ptr[KP_MAX_IO], workspace = 0;
    size_t workspace_size = 0;
    OK(cdnn_graph_workspace_size(g, &workspace_size));
    CU(cu->ctx_set_current(context));
    for (int32_t i = 0; i < r->count; i++) {
        CU(cu->mem_alloc(&ptr[i], r->io[i].span_bytes + 64));
        CU(cu->memcpy_htod(ptr[i], r->ptrs[i], r->io[i].span_bytes));
        device[i] = (void *)(uintptr_t)ptr[i];
        uids[i] = r->io[i].uid;
    }
    if (workspace_size)
        CU(cu->mem_alloc(&workspace, workspace_size));
    cdnn_status_t st = cdnn_graph_execute(g, h, r->count, uids, device,
                                          (void *)(uintptr_t)workspace);
    CU(cu->stream_synchronize(NULL));
    for (int32_t i = 0; i < r->count; i++) {
        if (st == CDNN_STATUS_SUCCESS && r->io[i].is_output)
            CU(cu->memcpy_dtoh(r->ptrs[i], ptr[i], r->io[i].span_bytes));
        cu->mem_free(ptr[i]);
    }
    if (workspace)
        cu->mem_free(workspace);
    return st;
}

static cdnn_handle_t *cuda_handle(void)
{
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cuda:0"));
    return h;
}

static kp_run_t device_run(cdnn_graph_t *g, cdnn_handle_t *h)
{
    kp_run_t r = kp_run_prepare(g);
    OK(run_on_device(g, h, &r));
    return r;
}

static kp_run_t reference_of(kp_make_graph_t make, const void *spec)
{
    cdnn_handle_t *cpu = kp_cpu_handle();
    cdnn_graph_t *g = make(spec);
    kp_build_pinned(g, cpu, "cpu:reference", NULL, 0);
    kp_run_t r = kp_run_graph(g, cpu);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(cpu);
    return r;
}

static cdnn_graph_t *make_matmul(const void *spec)
{
    return kp_matmul_graph(spec);
}

static kp_run_t reference(const kp_matmul_t *m)
{
    return reference_of(make_matmul, m);
}

/* ---- tests ------------------------------------------------------------------------------ */

static const kp_matmul_t cases[] = {
    {0, {0, 0}, 96, 80, 64, CDNN_DATA_TYPE_F16, .bias = 1, .act = CDNN_PW_GELU_FWD},
    {1, {3, 0}, 130, 72, 200, CDNN_DATA_TYPE_BF16, .b_transposed = 1, .bias = 1,
     .act = CDNN_PW_RELU_FWD, .residual = 1},
    {2, {2, 2}, 33, 17, 40, CDNN_DATA_TYPE_F32, .b_shared = 1, .act = CDNN_PW_SWISH_FWD},
    {0, {0, 0}, 256, 512, 128, CDNN_DATA_TYPE_F16, .a_pad = 8, .residual = 1,
     .act = CDNN_PW_TANH_FWD},
};

/* Built on engine, run against the reference, saved, loaded on a fresh
 * handle, run to the same bytes, re-saved byte for byte. */
static void round_trip_graph(kp_make_graph_t make, const void *spec, const char *label,
                             const char *engine, const char *knob, int64_t candidate)
{
    cdnn_graph_t *g = make(spec), *loaded = NULL;
    cdnn_handle_t *h = cuda_handle();
    kp_build_pinned(g, h, engine, candidate ? knob : NULL, candidate);
    kp_run_t built = device_run(g, h), want = reference_of(make, spec);
    kp_assert_close_outputs(&built, &want, label);
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    cdnn_handle_t *fresh = cuda_handle();
    OK(cdnn_plan_load(&loaded, fresh, plan.data, plan.size));
    kp_run_t again = device_run(loaded, fresh);
    kp_assert_same_outputs(&again, &built);
    kp_bytes_t resaved = kp_save(loaded, CDNN_SAVE_PLAN);
    assert_int_equal(resaved.size, plan.size);
    assert_memory_equal(resaved.data, plan.data, plan.size);
    kp_bytes_free(&resaved);
    kp_bytes_free(&plan);
    kp_run_free(&again);
    kp_run_free(&built);
    kp_run_free(&want);
    cdnn_graph_destroy(loaded);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(fresh);
    cdnn_handle_destroy(h);
}

static void round_trip(const kp_matmul_t *m, int64_t candidate)
{
    round_trip_graph(make_matmul, m, kp_matmul_label(m), MATMUL_ENGINE, CANDIDATE_KNOB,
                     candidate);
}

static int builds_with(kp_make_graph_t make, const char *engine, const char *knob,
                       int64_t value, const char *label);

/* Every pointwise case by default (the interpreter), and on the short-chain
 * kernel (knob 4) where its program is one the kernel specialises. */
static void test_cuda_pointwise_round_trips(void **state)
{
    (void)state;
    const char *knob = "kernels.pointwise_cuda.candidate";
    int chains = 0;
    for (int i = 0; i < kp_pointwise_case_count; i++) {
        round_trip_graph(kp_pointwise_cases[i].make, NULL, kp_pointwise_cases[i].label,
                         POINTWISE_ENGINE, NULL, 0);
        if (builds_with(kp_pointwise_cases[i].make, POINTWISE_ENGINE, knob, 4,
                        kp_pointwise_cases[i].label)) {
            round_trip_graph(kp_pointwise_cases[i].make, NULL, kp_pointwise_cases[i].label,
                             POINTWISE_ENGINE, knob, 4);
            chains++;
        }
    }
    printf("  pointwise: %d of %d cases on the chain kernel\n", chains, kp_pointwise_case_count);
}

/* Whether engine (with knob=value when knob is not NULL) builds the graph
 * on cuda:0 (else why not, printed). */
static int builds_with(kp_make_graph_t make, const char *engine, const char *knob,
                       int64_t value, const char *label)
{
    cdnn_graph_t *g = make(NULL);
    cdnn_handle_t *h = cuda_handle();
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(engine)));
    if (knob)
        OK(cdnn_build_options_set_knob(opts, knob, value));
    cdnn_status_t st = cdnn_graph_build(g, h, opts);
    if (st != CDNN_STATUS_SUCCESS)
        printf("  %s: not on %s%s%s: %s\n", label, engine, knob ? " with " : "",
               knob ? knob : "", cdnn_last_error());
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    return st == CDNN_STATUS_SUCCESS;
}

static int builds(kp_make_graph_t make, const char *engine, const char *label)
{
    return builds_with(make, engine, NULL, 0, label);
}

/* Every norm the CUDA kernels run (they write no statistics: two of the
 * four ask for them), on both kernels: a block and a warp per row. */
static void test_cuda_norm_round_trips(void **state)
{
    (void)state;
    int ran = 0;
    for (int i = 0; i < kp_norm_case_count; i++) {
        if (!builds(kp_norm_cases[i].make, NORM_ENGINE, kp_norm_cases[i].label))
            continue;
        for (int64_t c = 0; c <= ROW_KINDS; c++)
            if (c <= 2 || builds_with(kp_norm_cases[i].make, NORM_ENGINE,
                                      "kernels.norm_cuda.candidate", c, kp_norm_cases[i].label))
                round_trip_graph(kp_norm_cases[i].make, NULL, kp_norm_cases[i].label,
                                 NORM_ENGINE, "kernels.norm_cuda.candidate", c);
        ran++;
    }
    assert_int_equal(ran, 2);
}

/* Every softmax case the CUDA kernels run, on the default and on both
 * kernels (a block and a warp per row; rows of 5000 are too long for a
 * warp's shared memory).  All but the softmax over a middle axis, whose
 * other dims fold into no one row stride, build by default. */
static void test_cuda_softmax_round_trips(void **state)
{
    (void)state;
    const char *knob = "kernels.softmax_cuda.candidate";
    int by_default = 0;
    for (int i = 0; i < kp_softmax_case_count; i++) {
        const kp_graph_case_t *c = &kp_softmax_cases[i];
        for (int64_t candidate = 0; candidate <= ROW_KINDS; candidate++) {
            if (!builds_with(c->make, SOFTMAX_ENGINE, candidate ? knob : NULL, candidate,
                             c->label))
                continue;
            round_trip_graph(c->make, NULL, c->label, SOFTMAX_ENGINE, knob, candidate);
            by_default += candidate == 0;
        }
    }
    assert_int_equal(by_default, kp_softmax_case_count - 1);
}

/* Every reduction case on the default and on every reduction kernel that
 * this device runs (knob k is reduce_kinds[k - 1] on sm_90a).  All but the
 * max over a middle dim, whose rows fold into no one stride, build by
 * default; the column kernels build for the cases over a leading axis
 * (kp_reduction_leading_axis_cases of them) and refuse the others. */
static void test_cuda_reduction_round_trips(void **state)
{
    (void)state;
    const char *knob = "kernels.reduce_cuda.candidate";
    int by_default = 0, on_columns = 0;
    for (int i = 0; i < kp_reduction_case_count; i++) {
        const kp_graph_case_t *c = &kp_reduction_cases[i];
        for (int64_t candidate = 0; candidate <= REDUCE_KINDS; candidate++) {
            if (!builds_with(c->make, REDUCE_ENGINE, candidate ? knob : NULL, candidate,
                             c->label))
                continue;
            round_trip_graph(c->make, NULL, c->label, REDUCE_ENGINE, knob, candidate);
            by_default += candidate == 0;
            on_columns += candidate > REDUCE_ROW_KINDS;
        }
    }
    assert_int_equal(by_default, kp_reduction_case_count - 1);
    assert_int_equal(on_columns, kp_reduction_leading_axis_cases * REDUCE_COLUMN_KINDS);
}

static void test_cuda_round_trips(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        round_trip(&cases[i], 0);
}

/* g built on h with the matmul engine's candidate c: not SUCCESS where c
 * does not apply (another dtype, or an arch this GPU lacks). */
static cdnn_status_t build_matmul_candidate(cdnn_graph_t *g, cdnn_handle_t *h, int64_t c)
{
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(MATMUL_ENGINE)));
    cdnn_status_t st = cdnn_build_options_set_knob(opts, CANDIDATE_KNOB, c);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_build(g, h, opts);
    cdnn_build_options_destroy(opts);
    return st;
}

static int is_store_kernel(const cuda_kernel_t *k)
{
    return strncmp(k->id, "matmul_wgmma_store_", strlen("matmul_wgmma_store_")) == 0;
}

static int is_buffered_wgmma_kernel(const cuda_kernel_t *k)
{
    return strncmp(k->id, "matmul_wgmma_", strlen("matmul_wgmma_")) == 0 &&
           !is_store_kernel(k);
}

/* Every candidate that applies on this device, by the candidate knob.
 * Where a case runs on the Hopper kernels that buffer C, it must run on
 * every TMA-store kernel of its dtype too: their residual, bias and
 * activation are the same epilogue, and a derive that refused one (as a
 * layout stand-in without the residual's type once did) would leave the
 * graph on the slower kernels with no other sign. */
static void test_cuda_every_candidate(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int buffered = 0, stored = 0, stores = 0;
        const char *dtype = cdnn_data_type_name(cases[i].type);
        for (int64_t c = 1; c <= matmul_kernel_count; c++) {
            const cuda_kernel_t *k = &matmul_kernels[c - 1];
            stores += is_store_kernel(k) && strcmp(k->dtype, dtype) == 0;
            cdnn_graph_t *probe = kp_matmul_graph(&cases[i]);
            cdnn_handle_t *h = cuda_handle();
            cdnn_status_t st = build_matmul_candidate(probe, h, c);
            cdnn_graph_destroy(probe);
            cdnn_handle_destroy(h);
            if (st != CDNN_STATUS_SUCCESS) /* another dtype, or an arch this GPU lacks */
                continue;
            round_trip(&cases[i], c);
            ran++;
            buffered += is_buffered_wgmma_kernel(k);
            stored += is_store_kernel(k);
        }
        printf("  %s: %d on the buffered wgmma kernels, %d of %d on the TMA-store ones\n",
               kp_matmul_label(&cases[i]), buffered, stored, buffered ? stores : 0);
        if (buffered)
            assert_int_equal(stored, stores);
    }
    printf("%d candidate runs on this device\n", ran);
    assert_true(ran >= 6);
}

/* The application's own thread, with no CUDA context current: a loaded
 * plan is executed there through the public memory API only, so every
 * driver call the library makes (tensor map encoding included) must bring
 * its own context.  The test's other runs set one current themselves. */
typedef struct {
    const kp_bytes_t *plan;
    kp_run_t *run;
    cdnn_status_t status;
} bare_thread_run_t;

static cdnn_status_t run_loaded_plan(const kp_bytes_t *plan, kp_run_t *r)
{
    cdnn_handle_t *h = NULL;
    cdnn_graph_t *g = NULL;
    void *device[KP_MAX_IO] = {0}, *workspace = NULL;
    int64_t uids[KP_MAX_IO];
    size_t workspace_size = 0;
    cdnn_status_t st = cdnn_handle_create(&h, "cuda:0");
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_plan_load(&g, h, plan->data, plan->size);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_workspace_size(g, &workspace_size);
    if (st == CDNN_STATUS_SUCCESS && workspace_size)
        st = cdnn_memory_alloc(h, workspace_size, &workspace);
    for (int32_t i = 0; st == CDNN_STATUS_SUCCESS && i < r->count; i++) {
        uids[i] = r->io[i].uid;
        st = cdnn_memory_alloc(h, r->io[i].span_bytes, &device[i]);
        if (st == CDNN_STATUS_SUCCESS)
            st = cdnn_memory_upload(h, device[i], r->ptrs[i], r->io[i].span_bytes);
    }
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_execute(g, h, r->count, uids, device, workspace);
    for (int32_t i = 0; st == CDNN_STATUS_SUCCESS && i < r->count; i++)
        if (r->io[i].is_output)
            st = cdnn_memory_download(h, r->ptrs[i], device[i], r->io[i].span_bytes);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_handle_synchronize(h);
    if (st != CDNN_STATUS_SUCCESS)
        print_message("bare thread: %s\n", cdnn_last_error());
    for (int32_t i = 0; i < r->count; i++)
        cdnn_memory_free(h, device[i]);
    cdnn_memory_free(h, workspace);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    return st;
}

static void *bare_thread_main(void *arg)
{
    bare_thread_run_t *t = arg;
    t->status = run_loaded_plan(t->plan, t->run);
    return NULL;
}

static void test_cuda_plan_runs_on_a_thread_without_context(void **state)
{
    (void)state;
    int ran = 0;
    for (int64_t c = 1; c <= MAX_KERNELS; c++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            cdnn_graph_t *g = kp_matmul_graph(&cases[i]);
            cdnn_handle_t *h = cuda_handle();
            if (build_matmul_candidate(g, h, c) == CDNN_STATUS_SUCCESS) {
                kp_run_t here = device_run(g, h), there = kp_run_prepare(g);
                kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
                bare_thread_run_t t = {&plan, &there, CDNN_STATUS_INTERNAL_ERROR};
                pthread_t thread;
                assert_int_equal(pthread_create(&thread, NULL, bare_thread_main, &t), 0);
                assert_int_equal(pthread_join(thread, NULL), 0);
                assert_int_equal(t.status, CDNN_STATUS_SUCCESS);
                kp_assert_same_outputs(&there, &here);
                kp_bytes_free(&plan);
                kp_run_free(&there);
                kp_run_free(&here);
                ran++;
            }
            cdnn_graph_destroy(g);
            cdnn_handle_destroy(h);
        }
    printf("%d candidate plans ran on a thread with no current context\n", ran);
    assert_true(ran >= 6);
}

static void test_cuda_benchmarking_chooses_by_device_clock(void **state)
{
    (void)state;
    cdnn_candidate_result_t results[MAX_KERNELS];
    int32_t count = 0, chosen = -1;
    cdnn_graph_t *g = kp_matmul_graph(&cases[3]), *loaded = NULL;
    cdnn_handle_t *h = cuda_handle();
    kp_build_pinned(g, h, MATMUL_ENGINE, "global.benchmarking", 1);
    kp_run_t first = device_run(g, h), want = reference(&cases[3]);
    kp_assert_close_outputs(&first, &want, "benchmarked");
    OK(cdnn_graph_candidates(g, results, MAX_KERNELS, &count, &chosen));
    assert_int_equal(chosen, 0);
    assert_true(count >= 2);
    for (int32_t i = 0; i < count; i++) {
        printf("  %-58s %9.2f us\n", results[i].name, results[i].median_us);
        assert_true(results[i].median_us > 0);
    }
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    OK(cdnn_plan_load(&loaded, h, plan.data, plan.size));
    kp_run_t again = device_run(loaded, h);
    kp_assert_close_outputs(&again, &want, "benchmarked, loaded");
    kp_run_free(&again);
    kp_run_free(&first);
    kp_run_free(&want);
    kp_bytes_free(&plan);
    cdnn_graph_destroy(loaded);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

static kp_bytes_t built_plan(const kp_matmul_t *m)
{
    cdnn_graph_t *g = kp_matmul_graph(m);
    cdnn_handle_t *h = cuda_handle();
    kp_build_pinned(g, h, MATMUL_ENGINE, NULL, 0);
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    return plan;
}

/* A CUDA plan on a CPU handle, and one re-sealed to hold the code of an
 * architecture this device lacks, are refused, each clearly. */
static void test_cuda_plan_elsewhere_refused(void **state)
{
    (void)state;
    int arch = 0, minor = 0;
    sdk_cu_device dev;
    cdnn_graph_t *g = NULL;
    kp_bytes_t plan = built_plan(&cases[0]);
    cdnn_handle_t *cpu = kp_cpu_handle();
    assert_int_equal(cdnn_plan_load(&g, cpu, plan.data, plan.size),
                     CDNN_STATUS_DEVICE_MISMATCH);
    cdnn_handle_destroy(cpu);

    CU(cu->device_get(&dev, 0));
    CU(cu->device_get_attribute(&arch, SDK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CU(cu->device_get_attribute(&minor, SDK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    const char *other = arch * 10 + minor == 90 ? "sm_80" : "sm_90a";
    kp_payload_t p = kp_payload_of_plan(plan);
    kp_bytes_free(&p.code);
    p.code = read_object("matmul_tc", other);
    assert_int_equal(sdk_sha256(p.code.data, p.code.size, p.kernel_sha256), 0);
    kp_payload_set(&p.target, other);
    kp_bytes_t payload = kp_payload_bytes(&p);
    kp_bytes_t forged = kp_plan_with_payload(plan, payload);
    cdnn_handle_t *h = cuda_handle();
    assert_int_equal(cdnn_plan_load(&g, h, forged.data, forged.size),
                     CDNN_STATUS_NOT_SUPPORTED);
    printf("  refused: %s\n", cdnn_last_error());
    assert_non_null(strstr(cdnn_last_error(), "cannot run"));
    cdnn_handle_destroy(h);
    kp_bytes_free(&forged);
    kp_bytes_free(&payload);
    kp_payload_free(&p);
    kp_bytes_free(&plan);
}

static void test_cuda_strict_mode_runs_installed_code(void **state)
{
    (void)state;
    cdnn_graph_t *g = NULL;
    kp_bytes_t plan = built_plan(&cases[0]);
    setenv("CDNN_TRUSTED_CODE", "pack", 1);
    cdnn_handle_t *h = cuda_handle();
    OK(cdnn_plan_load(&g, h, plan.data, plan.size));
    kp_run_t r = device_run(g, h);
    kp_run_free(&r);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    unsetenv("CDNN_TRUSTED_CODE");
    kp_bytes_free(&plan);
}

/* ---- convolution and attention (kernels:conv_cuda, kernels:sdpa_cuda) ------------------- */

#define CONV_ENGINE "kernels:conv_cuda"
#define CONV_KNOB "kernels.conv_cuda.candidate"
#define SDPA_ENGINE "kernels:sdpa_cuda"
/* The Hopper conv kernels first (conv_wgmma.cu, sm_90a: 4 tiles x 2
 * dtypes), then the mma.sync ones (3 tiles x 2 dtypes x 3 targets). */
#define CONV_WGMMA_KERNELS 8
#define CONV_KERNELS (CONV_WGMMA_KERNELS + 18)

/* The Hopper flash-attention kernels (sdpa_wgmma.cu, sm_90a only), first
 * in the sdpa engine: X(dtype, head dim). */
#define SDPA_WGMMA_KERNELS(X) X("bf16", 128) X("bf16", 64) X("f16", 128) X("f16", 64)
#define SDPA_WGMMA_COUNT 4

/* A pack of the conv and sdpa code objects beside the matmul's, in the
 * same directory: the provider reads every pack there. */
static void write_conv_sdpa_pack(const char *path)
{
    static char id[CONV_KERNELS + 3 + SDPA_WGMMA_COUNT][48], symbol[CONV_KERNELS][48];
    static char meta_text[CONV_KERNELS][5][16];
    static sdk_kpack_kv_t meta[CONV_KERNELS][5];
    static const sdk_kpack_kv_t sdpa_meta[] = {{"threads", "256"}};
    static char flash_symbol[SDPA_WGMMA_COUNT][48], flash_text[SDPA_WGMMA_COUNT][3][16];
    static sdk_kpack_kv_t flash_meta[SDPA_WGMMA_COUNT][5];
    sdk_kpack_spec_kernel_t kernels[CONV_KERNELS + 3 + SDPA_WGMMA_COUNT];
    const char *ids[CONV_KERNELS + 3 + SDPA_WGMMA_COUNT];
    kp_bytes_t conv[3], sdpa[3], flash = read_object("sdpa_wgmma", "sm_90a");
    int n = 0;
    static char wgmma_text[CONV_WGMMA_KERNELS][5][16];
    static sdk_kpack_kv_t wgmma_meta[CONV_WGMMA_KERNELS][6];
    kp_bytes_t wgmma = read_object("conv_wgmma", "sm_90a");
    for (int d = 0; d < 2; d++) {
        const char *dtype = d ? "bf16" : "f16";
#define CONV_WGMMA(tm, tn, stages)                                                            \
    snprintf(id[n], sizeof id[n], "conv_wgmma_%s_%dx%d_sm_90a", dtype, tm, tn);               \
    snprintf(symbol[n], sizeof symbol[n], "cdnn_cuda_conv_wgmma_%s_%dx%d", dtype, tm, tn);    \
    snprintf(wgmma_text[n][0], 16, "%d", (int)CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages));   \
    snprintf(wgmma_text[n][1], 16, "%d", CDNN_CUDA_MATMUL_WGMMA_THREADS);                     \
    snprintf(wgmma_text[n][2], 16, "%d", tm);                                                 \
    snprintf(wgmma_text[n][3], 16, "%d", tn);                                                 \
    wgmma_meta[n][0] = (sdk_kpack_kv_t){"dtype", dtype};                                      \
    wgmma_meta[n][1] = (sdk_kpack_kv_t){"smem", wgmma_text[n][0]};                            \
    wgmma_meta[n][2] = (sdk_kpack_kv_t){"tensor_maps", "1"};                                  \
    wgmma_meta[n][3] = (sdk_kpack_kv_t){"threads", wgmma_text[n][1]};                         \
    wgmma_meta[n][4] = (sdk_kpack_kv_t){"tile_m", wgmma_text[n][2]};                          \
    wgmma_meta[n][5] = (sdk_kpack_kv_t){"tile_n", wgmma_text[n][3]};                          \
    kernels[n] = (sdk_kpack_spec_kernel_t){id[n], symbol[n], "sm_90a", "cuda-conv-v1",        \
                                           wgmma.data, wgmma.size, 6, wgmma_meta[n]};         \
    ids[n] = id[n];                                                                           \
    n++;
        CDNN_CUDA_CONV_WGMMA_CONFIGS(CONV_WGMMA)
#undef CONV_WGMMA
    }
    for (int t = 0; t < 3; t++) {
        conv[t] = read_object("conv", targets[t]);
        sdpa[t] = read_object("sdpa", targets[t]);
    }
    for (int d = 0; d < 2; d++) {
        const char *dtype = d ? "bf16" : "f16";
#define CONV(tm, tn, wm, wn, stages)                                                          \
    for (int t = 0; t < 3; t++, n++) {                                                        \
        snprintf(id[n], sizeof id[n], "conv_%s_%dx%d_%s", dtype, tm, tn, targets[t]);         \
        snprintf(symbol[n], sizeof symbol[n], "cdnn_cuda_conv_%s_%dx%d", dtype, tm, tn);      \
        snprintf(meta_text[n][0], 16, "%s", dtype);                                           \
        snprintf(meta_text[n][1], 16, "%d", (int)CDNN_CUDA_CONV_SMEM(tm, tn, stages));        \
        snprintf(meta_text[n][2], 16, "%d", 32 * (wm) * (wn));                                \
        snprintf(meta_text[n][3], 16, "%d", tm);                                              \
        snprintf(meta_text[n][4], 16, "%d", tn);                                              \
        static const char *const keys[] = {"dtype", "smem", "threads", "tile_m", "tile_n"};   \
        for (int i = 0; i < 5; i++)                                                           \
            meta[n][i] = (sdk_kpack_kv_t){keys[i], meta_text[n][i]};                          \
        kernels[n] = (sdk_kpack_spec_kernel_t){id[n], symbol[n], targets[t], "cuda-conv-v1",  \
                                               conv[t].data, conv[t].size, 5, meta[n]};       \
        ids[n] = id[n];                                                                       \
    }
        CDNN_CUDA_CONV_CONFIGS(CONV)
#undef CONV
    }
    int f = 0;
#define FLASH(dtype, d)                                                                       \
    snprintf(id[n], sizeof id[n], "sdpa_wgmma_%s_d%d_sm_90a", dtype, d);                      \
    snprintf(flash_symbol[f], sizeof flash_symbol[f], "cdnn_cuda_sdpa_wgmma_%s_d%d", dtype, d); \
    snprintf(flash_text[f][0], 16, "%d", d);                                                  \
    snprintf(flash_text[f][1], 16, "%d", (int)CDNN_CUDA_SDPA_WGMMA_SMEM(d));                  \
    snprintf(flash_text[f][2], 16, "%d", CDNN_CUDA_SDPA_WGMMA_THREADS);                       \
    flash_meta[f][0] = (sdk_kpack_kv_t){"dtype", dtype};                                      \
    flash_meta[f][1] = (sdk_kpack_kv_t){"head_dim", flash_text[f][0]};                        \
    flash_meta[f][2] = (sdk_kpack_kv_t){"smem", flash_text[f][1]};                            \
    flash_meta[f][3] = (sdk_kpack_kv_t){"tensor_maps", "1"};                                  \
    flash_meta[f][4] = (sdk_kpack_kv_t){"threads", flash_text[f][2]};                         \
    kernels[n] = (sdk_kpack_spec_kernel_t){id[n], flash_symbol[f], "sm_90a", "cuda-sdpa-v1",  \
                                           flash.data, flash.size, 5, flash_meta[f]};         \
    ids[n] = id[n];                                                                           \
    n++, f++;
    SDPA_WGMMA_KERNELS(FLASH)
#undef FLASH
    for (int t = 0; t < 3; t++, n++) {
        snprintf(id[n], sizeof id[n], "sdpa_%s", targets[t]);
        kernels[n] = (sdk_kpack_spec_kernel_t){id[n], "cdnn_cuda_sdpa", targets[t],
                                               "cuda-sdpa-v1", sdpa[t].data, sdpa[t].size, 1,
                                               sdpa_meta};
        ids[n] = id[n];
    }
    sdk_kpack_spec_engine_t engines[] = {
        {CONV_ENGINE, 50, "conv_fwd_nhwc_cuda",
         "{\"dtypes\":[\"bf16\",\"f16\"],\"epilogue\":[\"bias\",\"gelu\",\"gelu_tanh\","
         "\"relu\",\"silu\",\"tanh\"]}",
         "cuda_conv", 1, 0, NULL, CONV_KERNELS, ids},
        {SDPA_ENGINE, 50, "sdpa", "{\"dtypes\":[\"bf16\",\"f16\",\"f32\"]}", "cuda_sdpa", 1, 0,
         NULL, 3 + SDPA_WGMMA_COUNT, ids + CONV_KERNELS},
    };
    sdk_kpack_spec_t spec = {"cdnn-cuda-conv-sdpa-test", "0.1.0", "cuda", n, kernels, 2,
                             engines};
    char why[512];
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (sdk_kpack_write(&spec, &bytes, &size, why, sizeof why) != CDNN_STATUS_SUCCESS)
        fail_msg("cannot write the conv/sdpa pack: %s", why);
    kp_write_file(path, bytes, size);
    free(bytes);
    kp_bytes_free(&wgmma);
    for (int t = 0; t < 3; t++) {
        kp_bytes_free(&conv[t]);
        kp_bytes_free(&sdpa[t]);
    }
    kp_bytes_free(&flash);
}

/* A pack of the softmax kernels, in the same directory. */
static void write_softmax_pack(const char *path)
{
    static row_kernel_names_t names;
    sdk_kpack_spec_kernel_t kernels[ROW_KERNELS];
    const char *ids[ROW_KERNELS];
    kp_bytes_t code[3];
    row_kernels("softmax", &names, kernels, ids, code);
    sdk_kpack_spec_engine_t engines[] = {
        {SOFTMAX_ENGINE, 50, "softmax", "{}", "cuda_softmax", 1, 0, NULL, ROW_KERNELS, ids},
    };
    sdk_kpack_spec_t spec = {"cdnn-cuda-softmax-test", "0.1.0", "cuda", ROW_KERNELS, kernels,
                             1, engines};
    kp_write_pack(path, &spec);
    for (int t = 0; t < 3; t++)
        kp_bytes_free(&code[t]);
}

/* The reduction kernels of cuda_kernel.h, as a pack describes them: the
 * row kernels' rows_per_block and threads, the column kernels' blocks_per_sm,
 * columns=1 and threads (keys in the pack's sorted order). */
typedef struct reduce_kind {
    const char *name;
    int keys;
    const char *key[3];
    int value[3];
} reduce_kind_t;

#define REDUCE_ROWS(name, g, r) {"rows_" #name, 2, {"rows_per_block", "threads"}, {r, (g) * (r)}},
#define REDUCE_COLUMNS(name, w, loads, b)                                                      \
    {"columns_" #name, 3, {"blocks_per_sm", "columns", "threads"}, {b, 1, 32 * (w)}},
static const reduce_kind_t reduce_kinds[] = {CDNN_CUDA_REDUCE_ROWS_CONFIGS(REDUCE_ROWS)
                                                 CDNN_CUDA_REDUCE_COLUMNS_CONFIGS(REDUCE_COLUMNS)};
#undef REDUCE_ROWS
#undef REDUCE_COLUMNS

/* A pack of the reduction kernels, every kind in every target, the sm_90a
 * ones first: reduce_<kind>_<target>. */
static void write_reduce_pack(const char *path)
{
    static char id[3 * REDUCE_KINDS][40], symbol[REDUCE_KINDS][40];
    static char values[REDUCE_KINDS][3][12];
    static sdk_kpack_kv_t metadata[REDUCE_KINDS][3];
    sdk_kpack_spec_kernel_t kernels[3 * REDUCE_KINDS];
    const char *ids[3 * REDUCE_KINDS];
    kp_bytes_t code[3];
    for (int w = 0; w < REDUCE_KINDS; w++) {
        const reduce_kind_t *k = &reduce_kinds[w];
        snprintf(symbol[w], sizeof symbol[w], "cdnn_cuda_reduce_%s", k->name);
        for (int i = 0; i < k->keys; i++) {
            snprintf(values[w][i], sizeof values[w][i], "%d", k->value[i]);
            metadata[w][i] = (sdk_kpack_kv_t){k->key[i], values[w][i]};
        }
    }
    for (int t = 0; t < 3; t++) {
        code[t] = read_object("reduce", targets[t]);
        for (int w = 0; w < REDUCE_KINDS; w++) {
            int i = REDUCE_KINDS * t + w;
            snprintf(id[i], sizeof id[i], "reduce_%s_%s", reduce_kinds[w].name, targets[t]);
            kernels[i] = (sdk_kpack_spec_kernel_t){
                id[i], symbol[w], targets[t], "cuda-reduce-v1", code[t].data, code[t].size,
                reduce_kinds[w].keys, metadata[w]};
            ids[i] = id[i];
        }
    }
    sdk_kpack_spec_engine_t engines[] = {
        {REDUCE_ENGINE, 50, "reduction", "{}", "cuda_reduce", 1, 0, NULL, 3 * REDUCE_KINDS, ids},
    };
    sdk_kpack_spec_t spec = {"cdnn-cuda-reduce-test", "0.1.0", "cuda", 3 * REDUCE_KINDS, kernels,
                             1, engines};
    kp_write_pack(path, &spec);
    for (int t = 0; t < 3; t++)
        kp_bytes_free(&code[t]);
}

/* y = act(conv(x, w) + bias), x and y channels-last (NHWC), the filter
 * KRSC unless kcrs: what the CUDA conv kernels serve, fast path and not. */
typedef struct conv_spec {
    int32_t spatial; /* 1 or 2 */
    int64_t n, c, h, w, k, r, s, pad[2], stride[2], dilation[2];
    cdnn_data_type_t type, y_type;
    int bias, kcrs;
    cdnn_pointwise_mode_t act; /* CDNN_PW_IDENTITY: none */
    const char *label;
} conv_spec_t;

static const conv_spec_t conv_cases[] = {
    {2, 2, 16, 9, 11, 24, 3, 3, {1, 1}, {1, 1}, {1, 1}, CDNN_DATA_TYPE_F16,
     CDNN_DATA_TYPE_F16, 1, 0, CDNN_PW_RELU_FWD, "f16 3x3 pad 1 bias relu"},
    {2, 3, 3, 13, 10, 17, 3, 3, {1, 0}, {2, 2}, {1, 1}, CDNN_DATA_TYPE_BF16,
     CDNN_DATA_TYPE_F32, 1, 0, CDNN_PW_GELU_FWD, "bf16 C3 stride 2 bias gelu, f32 out"},
    {2, 1, 32, 16, 16, 64, 1, 1, {0, 0}, {1, 1}, {1, 1}, CDNN_DATA_TYPE_F16,
     CDNN_DATA_TYPE_F16, 0, 0, CDNN_PW_IDENTITY, "f16 1x1 plain"},
    {2, 2, 40, 12, 12, 72, 3, 3, {2, 2}, {1, 1}, {2, 2}, CDNN_DATA_TYPE_BF16,
     CDNN_DATA_TYPE_BF16, 0, 1, CDNN_PW_SWISH_FWD, "bf16 dilation 2 KCRS filter silu"},
    {1, 2, 16, 1, 50, 33, 1, 7, {0, 3}, {1, 1}, {1, 1}, CDNN_DATA_TYPE_F16,
     CDNN_DATA_TYPE_F32, 1, 0, CDNN_PW_TANH_FWD, "f16 1-D k7 bias tanh"},
    {2, 1, 64, 14, 14, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, CDNN_DATA_TYPE_F16,
     CDNN_DATA_TYPE_F16, 1, 0, CDNN_PW_IDENTITY, "f16 C64 14x14 K64 bias"},
    /* What the Hopper kernels take (c a multiple of 64): stride 2 with odd
     * sizes, a 1x1 projection with stride 2. */
    {2, 3, 128, 15, 13, 96, 3, 3, {1, 1}, {2, 2}, {1, 1}, CDNN_DATA_TYPE_BF16,
     CDNN_DATA_TYPE_BF16, 1, 0, CDNN_PW_RELU_FWD, "bf16 C128 3x3 stride 2 odd bias relu"},
    {2, 2, 64, 14, 14, 130, 1, 1, {0, 0}, {2, 2}, {1, 1}, CDNN_DATA_TYPE_F16,
     CDNN_DATA_TYPE_F32, 1, 0, CDNN_PW_RELU_FWD, "f16 C64 1x1 stride 2 K130 bias relu, f32 out"},
};
#define CONV_CASE_COUNT ((int)(sizeof conv_cases / sizeof *conv_cases))

/* Dims [N, C, (H,) W] of a channels-last tensor and its strides. */
static void channels_last(const conv_spec_t *c, int64_t ch, int64_t h, int64_t w,
                          int64_t dims[4], int64_t strides[4], int32_t *rank)
{
    *rank = c->spatial + 2;
    dims[0] = c->n, dims[1] = ch, dims[*rank - 1] = w;
    strides[1] = 1, strides[*rank - 1] = ch, strides[0] = h * w * ch;
    if (c->spatial == 2)
        dims[2] = h, strides[2] = w * ch;
}

static int64_t conv_out(const conv_spec_t *c, int axis, int64_t in, int64_t filter)
{
    return (in + 2 * c->pad[axis] - c->dilation[axis] * (filter - 1) - 1) / c->stride[axis] + 1;
}

static int64_t conv_value(cdnn_graph_t *g, int last, cdnn_data_type_t type, int32_t rank,
                          const int64_t *dims, const int64_t *strides, int64_t *virtual_uid)
{
    if (last) {
        OK(cdnn_graph_tensor(g, 3, "y", type, rank, dims, strides));
        return 3;
    }
    OK(cdnn_graph_tensor(g, *virtual_uid, NULL, CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    OK(cdnn_graph_tensor_set_virtual(g, *virtual_uid));
    return (*virtual_uid)++;
}

static cdnn_graph_t *make_conv(const void *spec)
{
    const conv_spec_t *c = spec;
    cdnn_graph_t *g = NULL;
    cdnn_conv_attr_t attr;
    int64_t dims[4], strides[4], ydims[4], ystrides[4], virtual_uid = 10;
    int32_t rank;
    int act = c->act != CDNN_PW_IDENTITY, steps = c->bias + act;
    cdnn_conv_attr_init(&attr, c->spatial);
    for (int a = 0; a < c->spatial; a++) {
        int axis = c->spatial == 2 ? a : 1; /* the 1-D case's values are the w axis's */
        attr.pre_padding[a] = attr.post_padding[a] = c->pad[axis];
        attr.stride[a] = c->stride[axis];
        attr.dilation[a] = c->dilation[axis];
    }
    OK(cdnn_graph_create(&g));
    channels_last(c, c->c, c->h, c->w, dims, strides, &rank);
    OK(cdnn_graph_tensor(g, 1, "x", c->type, rank, dims, strides));
    channels_last(c, c->c, c->r, c->s, dims, strides, &rank);
    dims[0] = c->k, strides[0] = c->r * c->s * c->c;
    if (c->kcrs) { /* [K, C, R, S] packed */
        strides[3] = 1, strides[2] = c->s, strides[1] = c->r * c->s;
    }
    OK(cdnn_graph_tensor(g, 2, "w", c->type, rank, dims, strides));
    channels_last(c, c->k, c->spatial == 2 ? conv_out(c, 0, c->h, c->r) : 1,
                  conv_out(c, 1, c->w, c->s), ydims, ystrides, &rank);
    int64_t value = conv_value(g, steps-- == 0, c->y_type, rank, ydims, ystrides, &virtual_uid);
    OK(cdnn_graph_conv_fwd(g, "conv", &attr, 1, 2, value));
    if (c->bias) {
        int64_t bias_dims[4] = {1, c->k, 1, 1};
        OK(cdnn_graph_tensor(g, 4, "bias", c->y_type == CDNN_DATA_TYPE_F32 ? CDNN_DATA_TYPE_F32
                                                                           : c->type,
                             rank, bias_dims, NULL));
        int64_t out = conv_value(g, steps-- == 0, c->y_type, rank, ydims, ystrides, &virtual_uid);
        cdnn_pointwise_attr_t pw;
        cdnn_pointwise_attr_init(&pw, CDNN_PW_ADD);
        OK(cdnn_graph_pointwise(g, "bias_add", &pw, value, 4, CDNN_UID_NONE, out));
        value = out;
    }
    if (act) {
        int64_t out = conv_value(g, 1, c->y_type, rank, ydims, ystrides, &virtual_uid);
        cdnn_pointwise_attr_t pw;
        cdnn_pointwise_attr_init(&pw, c->act);
        OK(cdnn_graph_pointwise(g, "act", &pw, value, CDNN_UID_NONE, CDNN_UID_NONE, out));
    }
    OK(cdnn_graph_validate(g));
    return g;
}

static void test_cuda_conv_round_trips(void **state)
{
    (void)state;
    for (int i = 0; i < CONV_CASE_COUNT; i++)
        round_trip_graph(make_conv, &conv_cases[i], conv_cases[i].label, CONV_ENGINE, NULL, 0);
}

/* Every conv candidate this device runs (the sm_90a cubins on an H200: a
 * PTX candidate gives way to its configuration's cubin), on an f16 and a
 * bf16 case of each kind (the Hopper kernels take only the last two). */
static void test_cuda_conv_every_candidate(void **state)
{
    (void)state;
    static const int picked[] = {0, 1, CONV_CASE_COUNT - 2, CONV_CASE_COUNT - 1};
    int ran = 0;
    for (int64_t c = 1; c <= CONV_KERNELS; c++)
        for (int j = 0; j < 4; j++) {
            const int i = picked[j];
            cdnn_graph_t *probe = make_conv(&conv_cases[i]);
            cdnn_handle_t *h = cuda_handle();
            cdnn_build_options_t *opts = NULL;
            OK(cdnn_build_options_create(&opts));
            OK(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(CONV_ENGINE)));
            cdnn_status_t st = cdnn_build_options_set_knob(opts, CONV_KNOB, c);
            if (st == CDNN_STATUS_SUCCESS)
                st = cdnn_graph_build(probe, h, opts);
            cdnn_build_options_destroy(opts);
            cdnn_graph_destroy(probe);
            cdnn_handle_destroy(h);
            if (st != CDNN_STATUS_SUCCESS) /* another dtype, or a target it gives way to */
                continue;
            round_trip_graph(make_conv, &conv_cases[i], conv_cases[i].label, CONV_ENGINE,
                             CONV_KNOB, c);
            ran++;
        }
    printf("%d conv candidate runs on this device\n", ran);
    assert_true(ran >= 6);
}

/* Whether the conv engine builds spec on cuda:0 (else why not, printed). */
static int conv_builds(const conv_spec_t *spec)
{
    cdnn_graph_t *g = make_conv(spec);
    cdnn_handle_t *h = cuda_handle();
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(CONV_ENGINE)));
    cdnn_status_t st = cdnn_graph_build(g, h, opts);
    if (st != CDNN_STATUS_SUCCESS)
        printf("  %s: refused: %s\n", spec->label, cdnn_last_error());
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    return st == CDNN_STATUS_SUCCESS;
}

/* What the conv engine leaves to other engines is refused with a reason. */
static void test_cuda_conv_refusals(void **state)
{
    (void)state;
    conv_spec_t f32 = conv_cases[0];
    f32.type = f32.y_type = CDNN_DATA_TYPE_F32;
    f32.label = "f32 x and w (the tensor-core kernels take f16 and bf16)";
    assert_false(conv_builds(&f32));
    conv_spec_t leaky = conv_cases[0];
    leaky.act = CDNN_PW_ELU_FWD;
    leaky.label = "elu (not an activation the kernels fuse)";
    assert_false(conv_builds(&leaky));
}

/* A benchmarking conv plan (a ResNet-like 3x3, 29.6 GFLOP) chooses among
 * the engine's candidates at its first execute, timed by CUDA events; its
 * output agrees with candidate 1's (the same sums in the same order: any
 * tile), it saves and loads.  The timings are printed as TFLOP/s. */
static void test_cuda_conv_benchmarking(void **state)
{
    (void)state;
    static const conv_spec_t big = {2, 8, 256, 56, 56, 256, 3, 3, {1, 1}, {1, 1}, {1, 1},
                                    CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_F16, 1, 0,
                                    CDNN_PW_RELU_FWD, "f16 N8 56x56 C256 K256 3x3 bias relu"};
    const double flop = 2.0 * 8 * 56 * 56 * 256 * 256 * 9;
    cdnn_candidate_result_t results[CONV_KERNELS];
    int32_t count = 0, chosen = -1;
    cdnn_graph_t *g = make_conv(&big), *first = make_conv(&big), *loaded = NULL;
    cdnn_handle_t *h = cuda_handle();
    kp_build_pinned(g, h, CONV_ENGINE, "global.benchmarking", 1);
    kp_build_pinned(first, h, CONV_ENGINE, CONV_KNOB, 1);
    kp_run_t fast = device_run(g, h), one = device_run(first, h);
    kp_assert_close_outputs(&fast, &one, big.label);
    OK(cdnn_graph_candidates(g, results, CONV_KERNELS, &count, &chosen));
    assert_int_equal(chosen, 0);
    assert_true(count >= 3);
    for (int32_t i = 0; i < count; i++) {
        printf("  %-52s %9.1f us %7.1f TFLOP/s\n", results[i].name, results[i].median_us,
               flop / (results[i].median_us * 1e6));
        assert_true(results[i].median_us > 0);
    }
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    OK(cdnn_plan_load(&loaded, h, plan.data, plan.size));
    kp_run_t again = device_run(loaded, h);
    kp_assert_same_outputs(&again, &fast);
    kp_run_free(&again);
    kp_run_free(&fast);
    kp_run_free(&one);
    kp_bytes_free(&plan);
    cdnn_graph_destroy(loaded);
    cdnn_graph_destroy(first);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
}

/* o = softmax(scale q k^T [causal]) v over [B, H, S, D]: BHSD packed, or
 * q and o sequence-major (BSHD memory) for a layout the kernel takes by
 * its strides. */
typedef struct sdpa_spec {
    int64_t batch, heads, q_len, kv_len, head_dim, value_dim;
    cdnn_data_type_t type, o_type;
    int causal, seq_major;
    double scale;
    const char *label;
} sdpa_spec_t;

static const sdpa_spec_t sdpa_cases[] = {
    {2, 3, 17, 33, 64, 64, CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_F16, 0, 0, 0, "f16 17x33 d64"},
    {1, 2, 40, 40, 128, 128, CDNN_DATA_TYPE_BF16, CDNN_DATA_TYPE_BF16, 1, 1, 0,
     "bf16 causal d128 BSHD"},
    {2, 2, 9, 70, 32, 96, CDNN_DATA_TYPE_F32, CDNN_DATA_TYPE_F32, 0, 0, 0.3,
     "f32 d32 dv96 scale 0.3"},
    {1, 1, 65, 65, 256, 256, CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_F32, 1, 0, 0,
     "f16 causal d256, f32 out"},
    /* on sm_90 the flash-attention kernels take these (and the bf16 d128
     * case above): several key tiles, partial ones, q_len != kv_len */
    {1, 2, 200, 333, 64, 64, CDNN_DATA_TYPE_BF16, CDNN_DATA_TYPE_BF16, 1, 0, 0,
     "bf16 causal d64 200x333"},
    {2, 2, 130, 300, 128, 128, CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_F16, 0, 1, 0,
     "f16 d128 BSHD 130x300"},
};
#define SDPA_CASE_COUNT ((int)(sizeof sdpa_cases / sizeof *sdpa_cases))

static void sdpa_tensor(cdnn_graph_t *g, const sdpa_spec_t *c, int64_t uid, int64_t len,
                        int64_t dim, cdnn_data_type_t type, int seq_major)
{
    int64_t dims[4] = {c->batch, c->heads, len, dim}, strides[4];
    strides[3] = 1;
    if (seq_major)
        strides[1] = dim, strides[2] = c->heads * dim;
    else
        strides[2] = dim, strides[1] = len * dim;
    strides[0] = c->heads * len * dim;
    OK(cdnn_graph_tensor(g, uid, NULL, type, 4, dims, strides));
}

static cdnn_graph_t *make_sdpa(const void *spec)
{
    const sdpa_spec_t *c = spec;
    cdnn_graph_t *g = NULL;
    cdnn_sdpa_attr_t attr = {c->scale, c->causal};
    OK(cdnn_graph_create(&g));
    sdpa_tensor(g, c, 1, c->q_len, c->head_dim, c->type, c->seq_major);
    sdpa_tensor(g, c, 2, c->kv_len, c->head_dim, c->type, 0);
    sdpa_tensor(g, c, 3, c->kv_len, c->value_dim, c->type, 0);
    sdpa_tensor(g, c, 4, c->q_len, c->value_dim, c->o_type, c->seq_major);
    OK(cdnn_graph_sdpa_fwd(g, "attention", &attr, 1, 2, 3, 4));
    OK(cdnn_graph_validate(g));
    return g;
}

/* Whether the sdpa engine builds case c with candidate k pinned. */
static int sdpa_builds_with(const sdpa_spec_t *c, int64_t k)
{
    cdnn_graph_t *g = make_sdpa(c);
    cdnn_handle_t *h = cuda_handle();
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(SDPA_ENGINE)));
    OK(cdnn_build_options_set_knob(opts, "kernels.sdpa_cuda.candidate", k));
    cdnn_status_t st = cdnn_graph_build(g, h, opts);
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    return st == CDNN_STATUS_SUCCESS;
}

/* Every case by default (the first candidate that applies), then on each
 * flash-attention candidate (1..4 of the pack, sm_90 only) that takes it;
 * on sm_90 the four f16/bf16 cases of head dim 64 or 128 (all but the f32
 * and the d256 one) must each find one. */
static void test_cuda_sdpa_round_trips(void **state)
{
    (void)state;
    int flash = 0;
    for (int i = 0; i < SDPA_CASE_COUNT; i++) {
        round_trip_graph(make_sdpa, &sdpa_cases[i], sdpa_cases[i].label, SDPA_ENGINE, NULL, 0);
        for (int64_t k = 1; k <= SDPA_WGMMA_COUNT; k++)
            if (sdpa_builds_with(&sdpa_cases[i], k)) {
                round_trip_graph(make_sdpa, &sdpa_cases[i], sdpa_cases[i].label, SDPA_ENGINE,
                                 "kernels.sdpa_cuda.candidate", k);
                flash++;
            }
    }
    printf("  sdpa: %d of %d cases on a flash-attention kernel\n", flash, SDPA_CASE_COUNT);
    int arch = 0, minor = 0;
    sdk_cu_device dev;
    CU(cu->device_get(&dev, 0));
    CU(cu->device_get_attribute(&arch, SDK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CU(cu->device_get_attribute(&minor, SDK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    if (arch * 10 + minor == 90)
        assert_int_equal(flash, 4);
}

/* ---- rule 2 on the GPU -------------------------------------------------------------------- */

#define MARKED_ENGINE "kernels:marked_matmul_cuda"
static char marked_dir[300], marked_pack[340];

/* A pack of the marked kernel's MARK=mark build (test_marked_matmul.c's
 * PTX), one engine over f32 matmuls. */
static void write_marked_cuda_pack(int mark)
{
    char path[512], why[512];
    static const sdk_kpack_kv_t meta[] = {{"dtype", "f32"}, {"smem", "0"}, {"threads", "256"},
                                          {"tile_m", "16"}, {"tile_n", "16"}};
    snprintf(path, sizeof path, "%s/test_marked_matmul.v%d.compute_80.ptx", object_dir, mark);
    kp_bytes_t code = kp_read_file(path);
    const char *ids[] = {"marked_matmul_compute_80"};
    sdk_kpack_spec_kernel_t kernel = {ids[0], "cdnn_cuda_marked_matmul", "compute_80",
                                      "cuda-matmul-v1", code.data, code.size, 5, meta};
    sdk_kpack_spec_engine_t engine = {MARKED_ENGINE, 50, "matmul_epilogue",
                                      "{\"dtypes\":[\"f32\"]}", "cuda_matmul", 1, 0, NULL, 1,
                                      ids};
    char version[8];
    snprintf(version, sizeof version, "%d.0.0", mark);
    sdk_kpack_spec_t spec = {"cdnn-marked-cuda-test", version, "cuda", 1, &kernel, 1, &engine};
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (sdk_kpack_write(&spec, &bytes, &size, why, sizeof why) != CDNN_STATUS_SUCCESS)
        fail_msg("cannot write the marked pack: %s", why);
    kp_write_file(marked_pack, bytes, size);
    free(bytes);
    kp_bytes_free(&code);
}

static const kp_matmul_t marked_case = {0, {0, 0}, 37, 29, 19, CDNN_DATA_TYPE_F32,
                                         .act = CDNN_PW_IDENTITY};

static kp_run_t build_marked(cdnn_handle_t *h, cdnn_graph_t **g)
{
    *g = kp_matmul_graph(&marked_case);
    kp_build_pinned(*g, h, MARKED_ENGINE, NULL, 0);
    return device_run(*g, h);
}

/* A plan saved against pack v1 still runs v1's code (every output the
 * product + 1) on a fresh cuda:0 handle after the pack was replaced by v2
 * (+ 2), beside a fresh build that runs v2; both re-save as they were. */
static void test_cuda_rule2_saved_plan_runs_its_code(void **state)
{
    (void)state;
    cdnn_graph_t *g = NULL, *loaded = NULL;
    kp_run_t want = reference(&marked_case);
    double exact = kp_first_output(&want);
    setenv("CDNN_KERNEL_PATH", marked_dir, 1);
    write_marked_cuda_pack(1);
    cdnn_handle_t *h = cuda_handle();
    kp_run_t v1 = build_marked(h, &g);
    assert_float_equal(kp_first_output(&v1), exact + 1, 1e-4);
    kp_bytes_t plan = kp_save(g, CDNN_SAVE_PLAN);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);

    write_marked_cuda_pack(2); /* the pack is upgraded */
    h = cuda_handle();
    OK(cdnn_plan_load(&loaded, h, plan.data, plan.size));
    kp_run_t again = device_run(loaded, h);
    kp_assert_same_outputs(&again, &v1); /* v1's code ran */
    kp_bytes_t resaved = kp_save(loaded, CDNN_SAVE_PLAN);
    assert_int_equal(resaved.size, plan.size);
    assert_memory_equal(resaved.data, plan.data, plan.size);
    kp_run_t v2 = build_marked(h, &g); /* a fresh build picks v2 */
    assert_float_equal(kp_first_output(&v2), exact + 2, 1e-4);
    printf("  reference %.6f, v1 plan after the upgrade %.6f, fresh build %.6f\n", exact,
           kp_first_output(&again), kp_first_output(&v2));
    setenv("CDNN_KERNEL_PATH", pack_dir, 1);
    kp_run_free(&want);
    kp_run_free(&v1);
    kp_run_free(&v2);
    kp_run_free(&again);
    kp_bytes_free(&plan);
    kp_bytes_free(&resaved);
    cdnn_graph_destroy(g);
    cdnn_graph_destroy(loaded);
    cdnn_handle_destroy(h);
}

static int setup(void **state)
{
    (void)state;
    char path[400];
    snprintf(pack_dir, sizeof pack_dir, "%s/cuda", kp_temp_dir());
    if (mkdir(pack_dir, 0700) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/cuda.kpack", pack_dir);
    write_cuda_pack(path);
    snprintf(path, sizeof path, "%s/cuda-conv-sdpa.kpack", pack_dir);
    write_conv_sdpa_pack(path);
    snprintf(path, sizeof path, "%s/cuda-softmax.kpack", pack_dir);
    write_softmax_pack(path);
    snprintf(path, sizeof path, "%s/cuda-reduce.kpack", pack_dir);
    write_reduce_pack(path);
    snprintf(marked_dir, sizeof marked_dir, "%s/marked-cuda", kp_temp_dir());
    snprintf(marked_pack, sizeof marked_pack, "%s/marked.kpack", marked_dir);
    if (mkdir(marked_dir, 0700) != 0)
        return -1;
    setenv("CDNN_KERNEL_PATH", pack_dir, 1);
    setenv("CDNN_DISABLE_CACHE", "1", 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kp_cleanup();
    return 0;
}

/* A device to run on, or the reason there is none. */
static int open_device(void)
{
    const char *why = NULL;
    int count = 0;
    sdk_cu_device dev;
    cu = sdk_cuda(&why);
    if (!cu || cu->device_get_count(&count) != SDK_CU_SUCCESS || count < 1) {
        printf("SKIP: no CUDA device: %s\n", why ? why : "the driver sees none");
        return 0;
    }
    return cu->device_get(&dev, 0) == SDK_CU_SUCCESS &&
           cu->primary_ctx_retain(&context, dev) == SDK_CU_SUCCESS;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR (the CUDA code objects)\n", argv[0]);
        return 2;
    }
    object_dir = argv[1];
    if (!open_device())
        return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuda_round_trips),
        cmocka_unit_test(test_cuda_pointwise_round_trips),
        cmocka_unit_test(test_cuda_norm_round_trips),
        cmocka_unit_test(test_cuda_softmax_round_trips),
        cmocka_unit_test(test_cuda_reduction_round_trips),
        cmocka_unit_test(test_cuda_every_candidate),
        cmocka_unit_test(test_cuda_plan_runs_on_a_thread_without_context),
        cmocka_unit_test(test_cuda_benchmarking_chooses_by_device_clock),
        cmocka_unit_test(test_cuda_plan_elsewhere_refused),
        cmocka_unit_test(test_cuda_strict_mode_runs_installed_code),
        cmocka_unit_test(test_cuda_conv_round_trips),
        cmocka_unit_test(test_cuda_conv_every_candidate),
        cmocka_unit_test(test_cuda_conv_refusals),
        cmocka_unit_test(test_cuda_conv_benchmarking),
        cmocka_unit_test(test_cuda_sdpa_round_trips),
        cmocka_unit_test(test_cuda_rule2_saved_plan_runs_its_code),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, setup, teardown);
}
