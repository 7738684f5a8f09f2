/*
 * test_cuda_descriptors.c -- the CUDA descriptors (kernels/descriptors/cuda/
 * *.json) must say of each kernel what kernels/cuda/cuda_kernel.h, the C
 * truth the kernels are compiled from, says: its signature, its tile sizes,
 * its threads per block and its dynamic shared memory.  A descriptor that
 * lies (smem too small for the tile, threads above the kernel's
 * __launch_bounds__) would launch a kernel that reads past its shared
 * memory or does not launch at all, on a GPU only; this test catches it on
 * any machine, with no GPU and no nvcc.
 *
 * usage: test_cuda_descriptors DESCRIPTOR_DIR
 *
 * Every *.json of DESCRIPTOR_DIR is read, and each candidate is matched by
 * its symbol to the table below, which is made from cuda_kernel.h's own
 * constants and X-macro lists (CDNN_CUDA_MATMUL_TC_CONFIGS, ...): a tile
 * configuration added there is checked here without a change to this file.
 * A candidate whose symbol no entry of the table makes fails ("has no C
 * counterpart"), so a new kernel family must be taught here once, where its
 * C truth is written down.  Metadata keys the table does not know are
 * listed as unchecked, not failed.  The candidate's code object must also
 * be the one its target names (NAME.<target>.cubin, NAME.<target>.ptx).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cuda_kernel.h"
#include "sdpa_tma.h"

#define MAX_TRUTHS 512
#define MAX_KEYS 8

/* One metadata key's truth: a value the descriptor must state exactly, or
 * (value "") a range with a step that a launch parameter must keep to
 * (the norm block kernel takes any multiple of 32 up to its bounds).  A
 * required key is one the kernel's handler reads; an optional one is
 * checked where the descriptor states it. */
typedef struct key_truth {
    const char *key;
    char value[32];
    long min, max, step;
    int optional;
} key_truth_t;

/* What cuda_kernel.h says of one entry point. */
typedef struct truth {
    char symbol[96];
    const char *signature;
    const char *source; /* the .cu file, the object's name before the target */
    int key_count;
    key_truth_t keys[MAX_KEYS];
    int seen;
} truth_t;

static truth_t truths[MAX_TRUTHS];
static int truth_count;
static int failures;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("FAIL: ", stdout);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    failures++;
}

static truth_t *new_truth(const char *signature, const char *source, const char *fmt, ...)
{
    if (truth_count == MAX_TRUTHS) {
        fprintf(stderr, "test_cuda_descriptors: more than %d kernels; raise MAX_TRUTHS\n",
                MAX_TRUTHS);
        exit(2);
    }
    truth_t *t = &truths[truth_count++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->symbol, sizeof t->symbol, fmt, ap);
    va_end(ap);
    t->signature = signature;
    t->source = source;
    return t;
}

static void exact(truth_t *t, const char *key, long value)
{
    key_truth_t *k = &t->keys[t->key_count++];
    k->key = key;
    snprintf(k->value, sizeof k->value, "%ld", value);
}

static void exact_text(truth_t *t, const char *key, const char *value)
{
    key_truth_t *k = &t->keys[t->key_count++];
    k->key = key;
    snprintf(k->value, sizeof k->value, "%s", value);
}

static void ranged(truth_t *t, const char *key, long min, long max, long step)
{
    key_truth_t *k = &t->keys[t->key_count++];
    k->key = key;
    k->min = min;
    k->max = max;
    k->step = step;
}

/* The keys given so far are checked only where the descriptor states them. */
static void all_optional(truth_t *t)
{
    for (int i = 0; i < t->key_count; i++)
        t->keys[i].optional = 1;
}

/* ---- the C truth, from cuda_kernel.h ----------------------------------------- */

/* cuda-matmul-v1, tensor cores: threads 32 * warps_m * warps_n (the
 * kernel's __launch_bounds__), smem CDNN_CUDA_MATMUL_TC_SMEM. */
static void matmul_tc(int tm, int tn, int wm, int wn, int stages)
{
    static const char *const dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++) {
        truth_t *t = new_truth("cuda-matmul-v1", "matmul_tc", "cdnn_cuda_matmul_%s_%dx%d",
                               dtypes[i], tm, tn);
        exact_text(t, "dtype", dtypes[i]);
        exact(t, "tile_m", tm);
        exact(t, "tile_n", tn);
        exact(t, "threads", 32L * wm * wn);
        exact(t, "smem", CDNN_CUDA_MATMUL_TC_SMEM(tm, tn, stages));
    }
}

#ifdef CDNN_CUDA_MATMUL_WGMMA_CONFIGS
/* cuda-matmul-v1 on Hopper (wgmma fed by TMA): CDNN_CUDA_MATMUL_WGMMA_THREADS
 * threads, tensor maps; `store` the kernels that store C by TMA (symbol
 * infix store_, metadata epilogue=tma_store, a third map), whose smem holds
 * `slots` staging buffers beside the stages. */
static void matmul_wgmma(int tm, int tn, int stages, int store, int slots)
{
    static const char *const dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++) {
        truth_t *t = new_truth("cuda-matmul-v1", "matmul_wgmma",
                               "cdnn_cuda_matmul_wgmma_%s%s_%dx%d", store ? "store_" : "",
                               dtypes[i], tm, tn);
        exact_text(t, "dtype", dtypes[i]);
        exact(t, "tile_m", tm);
        exact(t, "tile_n", tn);
        exact(t, "threads", CDNN_CUDA_MATMUL_WGMMA_THREADS);
        exact(t, "smem", store ? CDNN_CUDA_MATMUL_WGMMA_STORE_SMEM(tm, tn, stages, slots)
                               : CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages));
        exact(t, "tensor_maps", 1);
        if (store)
            exact_text(t, "epilogue", "tma_store");
    }
}
#endif

#ifdef CDNN_CUDA_MATMUL_SMALL_M_CONFIGS
/* cuda-matmul-v1 for few rows (matmul_small_m.cu): the tensor-core k loop,
 * a cluster of split_k blocks a tile (its __cluster_dims__), so the grid's
 * x must be split_k times the tiles; rows up to max_m (the handler refuses
 * more; any value up to the tile's rows times 65535 is correct). */
static void matmul_small_m(int tm, int tn, int wm, int wn, int stages, int splits)
{
    static const char *const dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++) {
        truth_t *t = new_truth("cuda-matmul-v1", "matmul_small_m",
                               "cdnn_cuda_matmul_small_m_%s_%dx%d", dtypes[i], tm, tn);
        exact_text(t, "dtype", dtypes[i]);
        exact(t, "tile_m", tm);
        exact(t, "tile_n", tn);
        exact(t, "threads", 32L * wm * wn);
        exact(t, "smem", CDNN_CUDA_MATMUL_TC_SMEM(tm, tn, stages));
        exact(t, "split_k", splits);
        ranged(t, "max_m", 1, 65535L * tm, 1);
    }
}
#endif

#ifdef CDNN_CUDA_MATMUL_SMALL_M_STRIP_CONFIGS
/* The strip small-m kernels: 16 rows and 64 columns a block over all of k
 * (no split_k), rows up to max_m as above. */
static void matmul_small_m_strip(const char *name, int warps)
{
    static const char *const dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++) {
        truth_t *t = new_truth("cuda-matmul-v1", "matmul_small_m",
                               "cdnn_cuda_matmul_small_m_strip_%s_%s", dtypes[i], name);
        exact_text(t, "dtype", dtypes[i]);
        exact(t, "tile_m", 16);
        exact(t, "tile_n", 64);
        exact(t, "threads", 32L * warps);
        exact(t, "smem", CDNN_CUDA_MATMUL_SMALL_M_STRIP_SMEM(warps));
        ranged(t, "max_m", 1, 65535L * 16, 1);
    }
}
#endif

#ifdef CDNN_CUDA_MATMUL_SMALL_M_TMA_CONFIGS
/* The TMA small-m kernels: 16 rows and 64 columns a tile, two tensor maps
 * (the wgmma kernels' ABI), rows up to max_m as above. */
static void matmul_small_m_tma(const char *name, int stages)
{
    static const char *const dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++) {
        truth_t *t = new_truth("cuda-matmul-v1", "matmul_small_m",
                               "cdnn_cuda_matmul_small_m_tma_%s_%s", dtypes[i], name);
        exact_text(t, "dtype", dtypes[i]);
        exact(t, "tile_m", 16);
        exact(t, "tile_n", 64);
        exact(t, "threads", CDNN_CUDA_MATMUL_SMALL_M_TMA_THREADS);
        exact(t, "smem", CDNN_CUDA_MATMUL_SMALL_M_TMA_SMEM(stages));
        exact(t, "tensor_maps", 1);
        ranged(t, "max_m", 1, 65535L * 16, 1);
    }
}
#endif

#ifdef CDNN_CUDA_CONV_CONFIGS
/* cuda-conv-v1, tensor cores: as the matmul's, with its own smem. */
static void conv_tc(int tm, int tn, int wm, int wn, int stages)
{
    static const char *const dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++) {
        truth_t *t = new_truth("cuda-conv-v1", "conv", "cdnn_cuda_conv_%s_%dx%d", dtypes[i],
                               tm, tn);
        exact_text(t, "dtype", dtypes[i]);
        exact(t, "tile_m", tm);
        exact(t, "tile_n", tn);
        exact(t, "threads", 32L * wm * wn);
        exact(t, "smem", CDNN_CUDA_CONV_SMEM(tm, tn, stages));
    }
}
#endif

#ifdef CDNN_CUDA_CONV_WGMMA_CONFIGS
/* cuda-conv-v1 on Hopper (conv_wgmma.cu): the Hopper matmul's launch. */
static void conv_wgmma(int tm, int tn, int stages)
{
    static const char *const dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++) {
        truth_t *t = new_truth("cuda-conv-v1", "conv_wgmma", "cdnn_cuda_conv_wgmma_%s_%dx%d",
                               dtypes[i], tm, tn);
        exact_text(t, "dtype", dtypes[i]);
        exact(t, "tile_m", tm);
        exact(t, "tile_n", tn);
        exact(t, "threads", CDNN_CUDA_MATMUL_WGMMA_THREADS);
        exact(t, "smem", CDNN_CUDA_MATMUL_WGMMA_SMEM(tm, tn, stages));
        exact(t, "tensor_maps", 1);
    }
}
#endif

#ifdef CDNN_CUDA_CONV_WGMMA_STORE_CONFIGS
/* The same with the TMA-store epilogue (epilogue=tma_store), its own smem. */
static void conv_wgmma_store(int tm, int tn, int stages)
{
    static const char *const dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++) {
        truth_t *t = new_truth("cuda-conv-v1", "conv_wgmma",
                               "cdnn_cuda_conv_wgmma_store_%s_%dx%d", dtypes[i], tm, tn);
        exact_text(t, "dtype", dtypes[i]);
        exact(t, "tile_m", tm);
        exact(t, "tile_n", tn);
        exact(t, "threads", CDNN_CUDA_MATMUL_WGMMA_THREADS);
        exact(t, "smem", CDNN_CUDA_CONV_WGMMA_STORE_SMEM(tm, tn, stages));
        exact(t, "tensor_maps", 1);
        exact_text(t, "epilogue", "tma_store");
    }
}

/* The stem with the TMA-store epilogue. */
static void conv_stem_store(void)
{
    static const char *const dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++) {
        truth_t *t = new_truth("cuda-conv-v1", "conv_wgmma", "cdnn_cuda_conv_stem_store_%s",
                               dtypes[i]);
        exact_text(t, "dtype", dtypes[i]);
        exact(t, "tile_m", CDNN_CUDA_CONV_STEM_TILE_M);
        exact(t, "tile_n", CDNN_CUDA_CONV_STEM_TILE_N);
        exact(t, "threads", CDNN_CUDA_CONV_STEM_THREADS);
        exact(t, "smem", CDNN_CUDA_CONV_STEM_STORE_SMEM);
        exact(t, "stem", 1);
        exact_text(t, "epilogue", "tma_store");
    }
}
#endif

#ifdef CDNN_CUDA_CONV_STEM_SMEM
/* The stem kernels (conv_wgmma.cu, stem=1): a tile per output row. */
static void conv_stem(void)
{
    static const char *const dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++) {
        truth_t *t = new_truth("cuda-conv-v1", "conv_wgmma", "cdnn_cuda_conv_stem_%s", dtypes[i]);
        exact_text(t, "dtype", dtypes[i]);
        exact(t, "tile_m", CDNN_CUDA_CONV_STEM_TILE_M);
        exact(t, "tile_n", CDNN_CUDA_CONV_STEM_TILE_N);
        exact(t, "threads", CDNN_CUDA_CONV_STEM_THREADS);
        exact(t, "smem", CDNN_CUDA_CONV_STEM_SMEM);
        exact(t, "stem", 1);
    }
}
#endif

/* cuda-matmul-v1, f32 SIMT: threads (tile_m / rows) * (tile_n / cols),
 * static shared memory only. */
static void matmul_f32(int tm, int tn, int rows, int cols)
{
    truth_t *t = new_truth("cuda-matmul-v1", "matmul_f32", "cdnn_cuda_matmul_f32_%dx%d", tm, tn);
    exact_text(t, "dtype", "f32");
    exact(t, "tile_m", tm);
    exact(t, "tile_n", tn);
    exact(t, "threads", (long)(tm / rows) * (tn / cols));
    exact(t, "smem", 0);
}

/* The row kernels (norm, softmax): a block per row takes any multiple of
 * 32 threads up to its __launch_bounds__(1024); a warp per row is 8 rows
 * of one warp each. */
static void row_kernels(const char *family, const char *signature)
{
    truth_t *t = new_truth(signature, family, "cdnn_cuda_%s_block", family);
    exact(t, "rows_per_block", 1);
    ranged(t, "threads", 32, 1024, 32);
    t = new_truth(signature, family, "cdnn_cuda_%s_warp", family);
    exact(t, "rows_per_block", CDNN_CUDA_NORM_WARP_ROWS_PER_BLOCK);
    exact(t, "threads", 32L * CDNN_CUDA_NORM_WARP_ROWS_PER_BLOCK);
#ifdef CDNN_CUDA_ROWS_REGS_CONFIGS
    /* The register kernels: a geometry each, fixed at compile time. */
#define REGS(name, g, r, n)                                                                    \
    t = new_truth(signature, family, "cdnn_cuda_%s_regs_" #name, family);                      \
    exact(t, "rows_per_block", r);                                                             \
    exact(t, "threads", (long)(g) * (r));                                                      \
    exact(t, "pieces", n);
    CDNN_CUDA_ROWS_REGS_CONFIGS(REGS)
#undef REGS
#endif
#ifdef CDNN_CUDA_ROWS_PACKED_CONFIGS
#define PACKED(name, g, r, n)                                                                  \
    t = new_truth(signature, family, "cdnn_cuda_%s_packed_" #name, family);                    \
    exact(t, "rows_per_block", r);                                                             \
    exact(t, "threads", (long)(g) * (r));                                                      \
    exact(t, "pieces", n);                                                                     \
    exact(t, "packed", 1);
    CDNN_CUDA_ROWS_PACKED_CONFIGS(PACKED)
#undef PACKED
#endif
#ifdef CDNN_CUDA_ROWS_STAGED_CONFIGS
    /* The staged kernels: both ops in rows_staged.cu (sm_90a). */
#define STAGED(name, g, r, s)                                                                  \
    t = new_truth(signature, "rows_staged", "cdnn_cuda_%s_staged_" #name, family);             \
    exact(t, "rows_per_block", r);                                                             \
    exact(t, "threads", (long)(g) * (r));                                                      \
    exact(t, "stages", s);
    CDNN_CUDA_ROWS_STAGED_CONFIGS(STAGED)
#undef STAGED
#endif
}

static void make_truths(void)
{
#define TC(tm, tn, wm, wn, stages) matmul_tc(tm, tn, wm, wn, stages);
    CDNN_CUDA_MATMUL_TC_CONFIGS(TC)
#undef TC
#define F32(tm, tn, rows, cols) matmul_f32(tm, tn, rows, cols);
    CDNN_CUDA_MATMUL_F32_CONFIGS(F32)
#undef F32
    /* Families added to cuda_kernel.h later are checked once it declares
     * them. */
#ifdef CDNN_CUDA_MATMUL_SMALL_M_CONFIGS
#define SMALL_M(tm, tn, wm, wn, stages, splits) matmul_small_m(tm, tn, wm, wn, stages, splits);
    CDNN_CUDA_MATMUL_SMALL_M_CONFIGS(SMALL_M)
#undef SMALL_M
#endif
#ifdef CDNN_CUDA_MATMUL_SMALL_M_STRIP_CONFIGS
#define SMALL_M_STRIP(name, warps, stages) matmul_small_m_strip(#name, warps);
    CDNN_CUDA_MATMUL_SMALL_M_STRIP_CONFIGS(SMALL_M_STRIP)
#undef SMALL_M_STRIP
#endif
#ifdef CDNN_CUDA_MATMUL_SMALL_M_TMA_CONFIGS
#define SMALL_M_TMA(name, stages) matmul_small_m_tma(#name, stages);
    CDNN_CUDA_MATMUL_SMALL_M_TMA_CONFIGS(SMALL_M_TMA)
#undef SMALL_M_TMA
#endif
#ifdef CDNN_CUDA_MATMUL_WGMMA_CONFIGS
#define WGMMA(tm, tn, stages) matmul_wgmma(tm, tn, stages, 0, 0);
    CDNN_CUDA_MATMUL_WGMMA_CONFIGS(WGMMA)
#undef WGMMA
#endif
#ifdef CDNN_CUDA_MATMUL_WGMMA_STORE_CONFIGS
#define WGMMA_STORE(tm, tn, stages, slots) matmul_wgmma(tm, tn, stages, 1, slots);
    CDNN_CUDA_MATMUL_WGMMA_STORE_CONFIGS(WGMMA_STORE)
#undef WGMMA_STORE
#endif
#ifdef CDNN_CUDA_CONV_CONFIGS
#define CONV(tm, tn, wm, wn, stages) conv_tc(tm, tn, wm, wn, stages);
    CDNN_CUDA_CONV_CONFIGS(CONV)
#undef CONV
#endif
#ifdef CDNN_CUDA_CONV_WGMMA_CONFIGS
#define CONV_WGMMA(tm, tn, stages) conv_wgmma(tm, tn, stages);
    CDNN_CUDA_CONV_WGMMA_CONFIGS(CONV_WGMMA)
#undef CONV_WGMMA
#endif
#ifdef CDNN_CUDA_CONV_STEM_SMEM
    conv_stem();
#endif
#ifdef CDNN_CUDA_CONV_WGMMA_STORE_CONFIGS
#define CONV_WGMMA_STORE(tm, tn, stages) conv_wgmma_store(tm, tn, stages);
    CDNN_CUDA_CONV_WGMMA_STORE_CONFIGS(CONV_WGMMA_STORE)
#undef CONV_WGMMA_STORE
    conv_stem_store();
#endif
    /* __launch_bounds__(256); the handler picks the grid. */
    truth_t *t = new_truth("cuda-pointwise-v1", "pointwise", "cdnn_cuda_pointwise");
    ranged(t, "threads", 32, 256, 32);
    all_optional(t);
    /* The short-chain kernel: the same launch, a sweep's elements stated. */
    t = new_truth("cuda-pointwise-v1", "pointwise", "cdnn_cuda_pointwise_chain");
    exact(t, "chain", 1);
    ranged(t, "elements_per_block", 256, 1 << 20, 256);
    row_kernels("norm", "cuda-norm-v1");
    row_kernels("softmax", "cuda-softmax-v1");
    /* The reductions: a geometry each, fixed at compile time. */
#define REDUCE_ROWS(name, g, r)                                                                \
    t = new_truth("cuda-reduce-v1", "reduce", "cdnn_cuda_reduce_rows_" #name);                \
    exact(t, "rows_per_block", r);                                                             \
    exact(t, "threads", (long)(g) * (r));
    CDNN_CUDA_REDUCE_ROWS_CONFIGS(REDUCE_ROWS)
#undef REDUCE_ROWS
    /* The column kernels: W warps a block, B blocks an SM (their
     * __launch_bounds__, which the handler's splits fill one wave of). */
#define REDUCE_COLUMNS(name, w, loads, b)                                                      \
    t = new_truth("cuda-reduce-v1", "reduce", "cdnn_cuda_reduce_columns_" #name);             \
    exact(t, "columns", 1);                                                                    \
    exact(t, "threads", 32L * (w));                                                            \
    exact(t, "blocks_per_sm", b);
    CDNN_CUDA_REDUCE_COLUMNS_CONFIGS(REDUCE_COLUMNS)
#undef REDUCE_COLUMNS
    /* One warp per query row, ROWS_PER_BLOCK rows a block, key tiles of
     * KEYS_PER_TILE; smem depends on the head sizes (the handler computes
     * CDNN_CUDA_SDPA_SMEM), so a fixed smem in metadata would be a lie. */
    t = new_truth("cuda-sdpa-v1", "sdpa", "cdnn_cuda_sdpa");
    exact(t, "threads", 32L * CDNN_CUDA_SDPA_ROWS_PER_BLOCK);
    exact(t, "rows_per_block", CDNN_CUDA_SDPA_ROWS_PER_BLOCK);
    exact(t, "keys_per_tile", CDNN_CUDA_SDPA_KEYS_PER_TILE);
    exact(t, "max_dim", CDNN_CUDA_SDPA_MAX_DIM);
    all_optional(t);
    /* The Hopper flash attention (sdpa_wgmma.cu, sdpa_tma.h): one dtype and
     * head dim each, __launch_bounds__(384, 1), smem by the head dim. */
    static const char *const sdpa_dtypes[] = {"f16", "bf16"};
    for (int i = 0; i < 2; i++)
        for (int d = 64; d <= 128; d += 64) {
            t = new_truth("cuda-sdpa-v1", "sdpa_wgmma", "cdnn_cuda_sdpa_wgmma_%s_d%d",
                          sdpa_dtypes[i], d);
            exact_text(t, "dtype", sdpa_dtypes[i]);
            exact(t, "head_dim", d);
            exact(t, "threads", CDNN_CUDA_SDPA_WGMMA_THREADS);
            exact(t, "smem", CDNN_CUDA_SDPA_WGMMA_SMEM(d));
            exact(t, "tensor_maps", 1);
        }
}

static truth_t *find_truth(const char *symbol)
{
    for (int i = 0; i < truth_count; i++)
        if (strcmp(truths[i].symbol, symbol) == 0)
            return &truths[i];
    return NULL;
}

/* ---- checking a descriptor ---------------------------------------------------- */

static const char *string_at(json_t *object, const char *key)
{
    json_t *v = json_object_get(object, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* "matmul_tc.sm_90a.cubin" for source matmul_tc and target sm_90a; PTX for
 * a compute_ target. */
static void check_object(const char *where, const truth_t *t, const char *target,
                         const char *object)
{
    char expected[160];
    snprintf(expected, sizeof expected, "%s.%s.%s", t->source, target,
             strncmp(target, "compute_", 8) == 0 ? "ptx" : "cubin");
    if (strcmp(object, expected) != 0)
        fail("%s: code object '%s', but symbol %s of target %s is compiled into '%s'", where,
             object, t->symbol, target, expected);
}

static void check_key(const char *where, const key_truth_t *k, json_t *metadata)
{
    const char *stated = metadata ? string_at(metadata, k->key) : NULL;
    if (!stated && k->optional)
        return;
    if (!stated) {
        fail("%s: metadata has no '%s'; cuda_kernel.h gives %s", where, k->key,
             k->value[0] ? k->value : "a range");
        return;
    }
    if (k->value[0]) {
        if (strcmp(stated, k->value) != 0)
            fail("%s: metadata %s = %s, but cuda_kernel.h gives %s", where, k->key, stated,
                 k->value);
        return;
    }
    char *end = NULL;
    long v = strtol(stated, &end, 10);
    if (*stated == '\0' || *end != '\0' || v < k->min || v > k->max || v % k->step != 0)
        fail("%s: metadata %s = %s, but cuda_kernel.h allows a multiple of %ld in [%ld, %ld]",
             where, k->key, stated, k->step, k->min, k->max);
}

static void check_candidate(const char *file, size_t index, json_t *c)
{
    char where[512];
    const char *kernel = string_at(c, "kernel"), *symbol = string_at(c, "symbol");
    const char *target = string_at(c, "target"), *object = string_at(c, "object");
    const char *signature = string_at(c, "signature");
    snprintf(where, sizeof where, "%s: $.candidates[%zu] (kernel '%s', symbol '%s')", file,
             index, kernel ? kernel : "?", symbol ? symbol : "?");
    if (!symbol || !target || !object || !signature) {
        fail("%s: symbol, target, object and signature must all be strings", where);
        return;
    }
    truth_t *t = find_truth(symbol);
    if (!t) {
        fail("%s: has no C counterpart: no constant or configuration list of "
             "kernels/cuda/cuda_kernel.h makes symbol '%s' (add its configuration there, "
             "and teach tests/cuda_descriptors/test_cuda_descriptors.c its family once)",
             where, symbol);
        return;
    }
    t->seen = 1;
    if (strcmp(signature, t->signature) != 0)
        fail("%s: signature %s, but cuda_kernel.h declares %s with %s", where, signature,
             symbol, t->signature);
    check_object(where, t, target, object);
    json_t *metadata = json_object_get(c, "metadata");
    if (metadata && !json_is_object(metadata)) {
        fail("%s: metadata is not an object", where);
        return;
    }
    for (int i = 0; i < t->key_count; i++)
        check_key(where, &t->keys[i], metadata);
    const char *key;
    json_t *value;
    json_object_foreach(metadata, key, value) {
        int known = 0;
        for (int i = 0; i < t->key_count; i++)
            known |= strcmp(t->keys[i].key, key) == 0;
        if (!known)
            printf("note: %s: metadata '%s' has no C counterpart; not checked\n", where, key);
    }
}

static int check_file(const char *dir, const char *name)
{
    char path[4096];
    json_error_t error;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &error);
    if (!root) {
        fail("%s: line %d: %s", path, error.line, error.text);
        return 0;
    }
    json_t *candidates = json_object_get(root, "candidates");
    size_t i;
    json_t *c;
    if (!json_is_array(candidates) || json_array_size(candidates) == 0)
        fail("%s: $.candidates is not a non-empty array", path);
    json_array_foreach(candidates, i, c)
        check_candidate(name, i, c);
    int n = (int)json_array_size(candidates);
    json_decref(root);
    return n;
}

static int is_json(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".json") == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DESCRIPTOR_DIR\n", argv[0]);
        return 2;
    }
    make_truths();
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 2;
    }
    char *names[256];
    int files = 0, candidates = 0;
    struct dirent *e;
    while ((e = readdir(d)) && files < 256)
        if (is_json(e->d_name))
            names[files++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)files, sizeof *names, by_name);
    for (int i = 0; i < files; i++) {
        candidates += check_file(argv[1], names[i]);
        free(names[i]);
    }
    if (files == 0)
        fail("%s: no descriptors", argv[1]);
    /* A configuration with no descriptor is not a lie, only a kernel no pack
     * offers: said, not failed. */
    for (int i = 0; i < truth_count; i++)
        if (!truths[i].seen)
            printf("note: %s (cuda_kernel.h) is named by no descriptor\n", truths[i].symbol);
    printf("%d descriptors, %d candidates, %d kernels known to cuda_kernel.h: %s\n", files,
           candidates, truth_count, failures ? "FAILED" : "all agree");
    return failures ? 1 : 0;
}
