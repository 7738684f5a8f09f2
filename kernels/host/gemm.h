/*
 * gemm.h -- the GEMM driver the matmul and the NHWC convolution share:
 * C = epilogue(A . B) on a register-blocked micro-kernel.
 *
 * Included by a source built with -DHK_MR=<rows> -DHK_NV=<vectors per
 * row>: the tile is HK_MR x (HK_NV * HK_VL) elements of C held in
 * HK_MR * HK_NV vector registers while K is summed; each step of K
 * broadcasts HK_MR elements of A and loads HK_NV vectors of B.
 *
 * The source describes its problem (hk_gemm_t): the sizes, how to pack a
 * panel of A and of B, and where each row of C, bias and residual starts.
 * The driver packs operands into the workspace (the GotoBLAS scheme): a
 * block of A as panels of HK_MR rows, p-major; a block of B as panels of
 * NR columns, p-major; both widened to f32 and zero-padded to whole
 * panels, so the micro-kernel has one shape and no bounds.  The panels
 * span all of K; the micro-kernel walks them KC steps at a time, so that
 * the B micro-panel it reuses across a block of A stays in L1, and keeps
 * the partial sums of all but the last step in an f32 buffer of the
 * block's tiles.  The last step finishes a tile in registers, and the
 * epilogue (bias, activation, residual, rounding to C's type) runs on it
 * before C is written, once.  Block sizes keep a step's slice of A in L2
 * and of B in L2/L3, whatever K is, so that large K does not shrink the
 * blocks (and repack A for more blocks of B).
 *
 * Threads: the work is cut into units (a batch, a range of rows, a range
 * of columns); each task packs its own blocks in its own workspace slice.
 */
#ifndef CDNN_HOST_GEMM_H
#define CDNN_HOST_GEMM_H

#include "common.h"
#include "convert.h"
#include "vmath.h"

#if !defined(HK_MR) || !defined(HK_NV)
#error "build a GEMM kernel with -DHK_MR=<rows> -DHK_NV=<vectors>"
#endif

#define NR (HK_NV * HK_VL)

/* Bytes of the KC-deep slices of the packed A and B blocks that one step
 * walks: A's is re-read for every panel of B, so it stays in L2; B's is
 * read once per step.  (The blocks themselves span all of K.) */
#define A_SLICE_BYTES (256 * 1024)
#define B_SLICE_BYTES (1024 * 1024)
/* Steps of K per micro-kernel call: a B micro-panel of half the L1 of the
 * smallest CPUs of the level (32 KiB; AVX-512 ones have 48), leaving room
 * for A's. */
#if HK_VL == 16
#define KC_BYTES 24576
#else
#define KC_BYTES 16384
#endif
#define KC (hk_max(KC_BYTES / (4 * NR) / 8 * 8, 32))
/* Below this many multiply-adds a second thread costs more than it saves. */
#define MIN_PARALLEL_MACS (64.0 * 64.0 * 64.0)

/* One unit of work: its batch's base offsets (elements) in each tensor,
 * and the part of C it computes. */
typedef struct hk_unit {
    int64_t a, b, c, bias, residual;
    int64_t m0, m1, n0, n1;
} hk_unit_t;

typedef struct hk_gemm hk_gemm_t;

struct hk_gemm {
    int64_t batch_count, m, n, k;
    int32_t activation;
    const cdnn_host_tensor_t *c, *bias, *residual; /* data NULL: absent */
    int64_t c_col, bias_col, residual_col;         /* column strides */
    const cdnn_host_parallel_t *parallel;
    const void *args;                              /* the entry's own */
    /* the base offsets of batch `batch` into u */
    void (*batch_offsets)(const hk_gemm_t *g, int64_t batch, hk_unit_t *u);
    /* offsets of row i of C, bias and residual, the batch's included */
    void (*row_offsets)(const hk_gemm_t *g, const hk_unit_t *u, int64_t i,
                        int64_t *c, int64_t *bias, int64_t *residual);
    /* rows [i0, i0 + rows) of A, rows <= HK_MR, as one panel over all of
     * K, p-major, missing rows zero */
    void (*pack_a_panel)(const hk_gemm_t *g, const hk_unit_t *u, int64_t i0,
                         int64_t rows, float *dst);
    /* columns [j0, j0 + cols) of B, cols <= NR, as one panel */
    void (*pack_b_panel)(const hk_gemm_t *g, const hk_unit_t *u, int64_t j0,
                         int64_t cols, float *dst);
    /*
     * Optional: A read in place instead of packed, where each row of A is
     * K / tap_depth runs ("taps") of tap_depth consecutive f32 values (a
     * convolution over packed channels).  tap_depth > 0 turns it on (with
     * k > 0).  tile_rows notes what it needs of rows [i0, i0 + rows)
     * (rows <= HK_MR) in `state`; tap_rows then gives each of the HK_MR
     * rows' run of tap t, or `zeros` (tap_depth zero floats) where the row
     * or the tap lies outside A.
     */
    int64_t tap_depth;
    void (*tile_rows)(const hk_gemm_t *g, int64_t i0, int64_t rows,
                      int64_t state[HK_MR][3]);
    void (*tap_rows)(const hk_gemm_t *g, int64_t state[HK_MR][3],
                     int64_t rows, int64_t tap, const float *zeros,
                     const float **dst);
};

typedef struct hk_plan {
    int64_t split_m, split_n;    /* pieces of each batch's C */
    int64_t piece_m, piece_n;    /* rows, columns per piece */
    int64_t units, tasks;
    int64_t mc, nc;              /* rows of A, columns of B per block */
    int64_t kc;                  /* steps of K per micro-kernel call */
    int direct;                  /* A read in place (tap_rows) */
    size_t a_floats, b_floats;   /* per task (direct: A's zeros) */
    size_t acc_floats;           /* partial sums of a block, when K > kc */
    size_t task_bytes;
} hk_plan_t;

typedef struct hk_gemm_job {
    const hk_gemm_t *g;
    hk_plan_t plan;
    char *workspace;
} hk_gemm_job_t;

/* ------------------------------------------------------------------------
 * Plan
 * ------------------------------------------------------------------------ */

/* Pieces per batch.  Every piece packs the B of its columns and the A of
 * its rows, so a cut of rows repeats B's packing and a cut of columns A's:
 * the longer side of C is cut, which repeats the smaller operand.  An A
 * read in place costs nothing to repeat: its columns are cut first (as
 * far as they go), then its rows. */
static void plan_split(const hk_gemm_t *g, hk_plan_t *p, int64_t budget)
{
    int64_t want = hk_ceil_div(budget, hk_max(g->batch_count, 1));
    int64_t col_panels = hk_ceil_div(g->n, NR);
    p->split_m = p->split_n = 1;
    if (want > 1 && g->tap_depth > 0) {
        p->split_n = hk_min(want, col_panels);
        p->split_m = hk_min(hk_ceil_div(want, p->split_n),
                            hk_ceil_div(g->m, HK_MR));
    } else if (want > 1 && g->m >= g->n) {
        p->split_m = hk_min(want, hk_ceil_div(g->m, HK_MR));
    } else if (want > 1) {
        p->split_n = hk_min(want, col_panels);
    }
    p->piece_m = hk_round_up(hk_ceil_div(g->m, p->split_m), HK_MR);
    p->piece_n = hk_round_up(hk_ceil_div(g->n, p->split_n), NR);
    p->split_m = hk_max(hk_ceil_div(g->m, p->piece_m), 1);
    p->split_n = hk_max(hk_ceil_div(g->n, p->piece_n), 1);
}

static void plan_gemm(const hk_gemm_t *g, hk_plan_t *p)
{
    *p = (hk_plan_t){0};
    if (g->batch_count * g->m * g->n == 0)
        return; /* nothing to write: no task, no workspace */
    double macs = (double)g->batch_count * (double)g->m * (double)g->n *
                  (double)g->k;
    int64_t budget = macs < MIN_PARALLEL_MACS
                         ? 1 : hk_thread_budget(g->parallel);
    plan_split(g, p, budget);
    p->units = g->batch_count * p->split_m * p->split_n;
    p->tasks = hk_max(hk_min(budget, p->units), 1);
    p->kc = KC;
    int64_t depth = hk_max(hk_min(g->k, p->kc), 1);
    p->mc = hk_min(hk_max(A_SLICE_BYTES / (4 * depth) / HK_MR * HK_MR, HK_MR),
                   p->piece_m);
    p->nc = hk_min(hk_max(B_SLICE_BYTES / (4 * depth) / NR * NR, NR),
                   p->piece_n);
    /* in place, a tile's taps are summed in its stack tile, one after
     * another: no packed A, no buffer of partial sums */
    p->direct = g->tap_depth > 0 && g->k > 0;
    p->a_floats = (size_t)(p->direct ? g->tap_depth : p->mc * g->k);
    p->b_floats = (size_t)(p->nc * g->k);
    p->acc_floats = !p->direct && g->k > p->kc ? (size_t)(p->mc * p->nc) : 0;
    p->task_bytes = (p->a_floats + p->b_floats + p->acc_floats) * sizeof(float) +
                    3 * HK_ALIGN;
}

static size_t gemm_workspace(const hk_plan_t *p)
{
    return p->tasks ? (size_t)p->tasks * p->task_bytes + HK_ALIGN : 0;
}

/* ------------------------------------------------------------------------
 * The micro-kernel: tile = A panel . B panel
 * ------------------------------------------------------------------------ */

/* tile = init (or 0) + A panel . B panel over k steps; init may be tile. */
static void micro_kernel(int64_t k, const float *restrict a,
                         const float *restrict b, const float *init,
                         float *tile)
{
    vf acc[HK_MR][HK_NV];
#pragma GCC unroll 16
    for (int i = 0; i < HK_MR; i++)
#pragma GCC unroll 8
        for (int v = 0; v < HK_NV; v++)
            acc[i][v] = init ? vload(init + i * NR + v * HK_VL) : vzero();
    for (int64_t p = 0; p < k; p++) {
        vf bv[HK_NV];
#pragma GCC unroll 8
        for (int v = 0; v < HK_NV; v++)
            bv[v] = vload(b + v * HK_VL);
#pragma GCC unroll 16
        for (int i = 0; i < HK_MR; i++) {
            vf av = vset1(a[i]);
#pragma GCC unroll 8
            for (int v = 0; v < HK_NV; v++)
                acc[i][v] = vfma(av, bv[v], acc[i][v]);
        }
        a += HK_MR;
        b += NR;
    }
#pragma GCC unroll 16
    for (int i = 0; i < HK_MR; i++)
#pragma GCC unroll 8
        for (int v = 0; v < HK_NV; v++)
            vstore(tile + i * NR + v * HK_VL, acc[i][v]);
}

/* The same with A's HK_MR rows read in place, each from its own run. */
static void micro_kernel_rows(int64_t k, const float *const *rows,
                              const float *restrict b, const float *init,
                              float *tile)
{
    vf acc[HK_MR][HK_NV];
#pragma GCC unroll 16
    for (int i = 0; i < HK_MR; i++)
#pragma GCC unroll 8
        for (int v = 0; v < HK_NV; v++)
            acc[i][v] = init ? vload(init + i * NR + v * HK_VL) : vzero();
    for (int64_t p = 0; p < k; p++) {
        vf bv[HK_NV];
#pragma GCC unroll 8
        for (int v = 0; v < HK_NV; v++)
            bv[v] = vload(b + v * HK_VL);
#pragma GCC unroll 16
        for (int i = 0; i < HK_MR; i++) {
            vf av = vset1(rows[i][p]);
#pragma GCC unroll 8
            for (int v = 0; v < HK_NV; v++)
                acc[i][v] = vfma(av, bv[v], acc[i][v]);
        }
        b += NR;
    }
#pragma GCC unroll 16
    for (int i = 0; i < HK_MR; i++)
#pragma GCC unroll 8
        for (int v = 0; v < HK_NV; v++)
            vstore(tile + i * NR + v * HK_VL, acc[i][v]);
}

/* ------------------------------------------------------------------------
 * The epilogue, on a finished tile row (NR floats) before C is written
 * ------------------------------------------------------------------------ */

/* row[j] += t[offset + j * cs] for j < cols */
static void add_tensor_row(const cdnn_host_tensor_t *t, int64_t offset,
                           int64_t cs, int64_t cols, float *row)
{
    const void *src = hk_at(t->data, t->type, offset);
    if (cs == 1 && cols == NR) {
        for (int v = 0; v < HK_NV; v++)
            vstore(row + v * HK_VL,
                   vadd(vload(row + v * HK_VL),
                        hk_vload_typed(t->type,
                                       hk_at(src, t->type, v * HK_VL))));
        return;
    }
    for (int64_t j = 0; j < cols; j++)
        row[j] += hk_load1(t->type, src, j * cs);
}

static void activate_row(int32_t activation, float *row)
{
#define HK_ACTIVATE(fn)                                                       \
    for (int v = 0; v < HK_NV; v++)                                           \
        vstore(row + v * HK_VL, fn(vload(row + v * HK_VL)));                  \
    break
    switch (activation) {
    case CDNN_HOST_ACT_RELU: HK_ACTIVATE(vrelu);
    case CDNN_HOST_ACT_GELU: HK_ACTIVATE(vgelu);
    case CDNN_HOST_ACT_GELU_TANH: HK_ACTIVATE(vgelu_tanh);
    case CDNN_HOST_ACT_SILU: HK_ACTIVATE(vsilu);
    case CDNN_HOST_ACT_TANH: HK_ACTIVATE(vtanh);
    default: break;
    }
#undef HK_ACTIVATE
}

static void store_row(const cdnn_host_tensor_t *t, int64_t offset, int64_t cs,
                      int64_t cols, const float *row)
{
    void *dst = hk_at_mut(t->data, t->type, offset);
    if (cs == 1 && cols == NR) {
        for (int v = 0; v < HK_NV; v++)
            hk_vstore_typed(t->type, hk_at_mut(dst, t->type, v * HK_VL),
                            vload(row + v * HK_VL));
        return;
    }
    for (int64_t j = 0; j < cols; j++)
        hk_store1(t->type, dst, j * cs, row[j]);
}

static void finish_tile(const hk_gemm_t *g, const hk_unit_t *u, float *tile,
                        int64_t i0, int64_t j0, int64_t rows, int64_t cols)
{
    for (int64_t i = 0; i < rows; i++) {
        float *row = tile + i * NR;
        int64_t c, bias, residual;
        g->row_offsets(g, u, i0 + i, &c, &bias, &residual);
        if (g->bias->data)
            add_tensor_row(g->bias, bias + j0 * g->bias_col, g->bias_col, cols,
                           row);
        activate_row(g->activation, row);
        if (g->residual->data)
            add_tensor_row(g->residual, residual + j0 * g->residual_col,
                           g->residual_col, cols, row);
        store_row(g->c, c + j0 * g->c_col, g->c_col, cols, row);
    }
}

/* ------------------------------------------------------------------------
 * Driver
 * ------------------------------------------------------------------------ */

/* A block of C: rows [i0, i0 + rows) of the packed A block against the
 * packed B block's columns [j0, j0 + cols), K in steps of plan.kc; the
 * partial sums of a step that is not the last wait in acc, tile by tile. */
static void multiply_block(const hk_gemm_job_t *job, const hk_unit_t *u,
                           const float *a_pack, const float *b_pack,
                           float *acc, int64_t i0, int64_t rows, int64_t j0,
                           int64_t cols)
{
    int64_t k = job->g->k, kc = job->plan.kc, tiles_m = hk_ceil_div(rows, HK_MR);
    int64_t steps = hk_max(hk_ceil_div(k, kc), 1); /* k = 0: one, empty */
    float tile[HK_MR * NR] __attribute__((aligned(HK_ALIGN)));
    for (int64_t s = 0; s < steps; s++) {
        int64_t p0 = s * kc, depth = hk_min(kc, k - p0);
        for (int64_t j = 0; j < cols; j += NR)
            for (int64_t i = 0; i < rows; i += HK_MR) {
                const float *ap = a_pack + i * k + p0 * HK_MR;
                const float *bp = b_pack + j * k + p0 * NR;
                float *partial = acc + (j / NR * tiles_m + i / HK_MR) * HK_MR * NR;
                const float *init = s > 0 ? partial : NULL;
                if (s + 1 < steps) {
                    micro_kernel(depth, ap, bp, init, partial);
                    continue;
                }
                micro_kernel(depth, ap, bp, init, tile);
                finish_tile(job->g, u, tile, i0 + i, j0 + j,
                            hk_min(HK_MR, rows - i), hk_min(NR, cols - j));
            }
    }
}

/* A block of C with A read in place: for each panel of B, each tile of
 * rows sums its taps one after another in its stack tile (the panel of B,
 * all of K, is reused from L2 by every tile), then finishes. */
static void multiply_block_direct(const hk_gemm_job_t *job, const hk_unit_t *u,
                                  const float *b_pack, const float *zeros,
                                  int64_t i0, int64_t rows, int64_t j0,
                                  int64_t cols)
{
    const hk_gemm_t *g = job->g;
    int64_t depth = g->tap_depth, taps = g->k / depth;
    float tile[HK_MR * NR] __attribute__((aligned(HK_ALIGN)));
    int64_t state[HK_MR][3];
    const float *a_rows[HK_MR];
    for (int64_t j = 0; j < cols; j += NR)
        for (int64_t i = 0; i < rows; i += HK_MR) {
            int64_t n = hk_min(HK_MR, rows - i);
            g->tile_rows(g, i0 + i, n, state);
            for (int64_t t = 0; t < taps; t++) {
                g->tap_rows(g, state, n, t, zeros, a_rows);
                micro_kernel_rows(depth, a_rows, b_pack + j * g->k + t * depth * NR,
                                  t > 0 ? tile : NULL, tile);
            }
            finish_tile(g, u, tile, i0 + i, j0 + j, n, hk_min(NR, cols - j));
        }
}

static void multiply_unit(const hk_gemm_job_t *job, const hk_unit_t *u,
                          float *a_pack, float *b_pack, float *acc)
{
    const hk_gemm_t *g = job->g;
    for (int64_t j0 = u->n0; j0 < u->n1; j0 += job->plan.nc) {
        int64_t cols = hk_min(job->plan.nc, u->n1 - j0);
        for (int64_t j = 0; j < cols; j += NR)
            g->pack_b_panel(g, u, j0 + j, hk_min(NR, cols - j),
                            b_pack + j * g->k);
        for (int64_t i0 = u->m0; i0 < u->m1; i0 += job->plan.mc) {
            int64_t rows = hk_min(job->plan.mc, u->m1 - i0);
            if (job->plan.direct) { /* a_pack holds the zeros */
                multiply_block_direct(job, u, b_pack, a_pack, i0, rows, j0,
                                      cols);
                continue;
            }
            for (int64_t i = 0; i < rows; i += HK_MR)
                g->pack_a_panel(g, u, i0 + i, hk_min(HK_MR, rows - i),
                                a_pack + i * g->k);
            multiply_block(job, u, a_pack, b_pack, acc, i0, rows, j0, cols);
        }
    }
}

static hk_unit_t unit_at(const hk_gemm_job_t *job, int64_t index)
{
    const hk_gemm_t *g = job->g;
    const hk_plan_t *p = &job->plan;
    int64_t pn = index % p->split_n, pm = index / p->split_n % p->split_m;
    hk_unit_t u;
    g->batch_offsets(g, index / (p->split_n * p->split_m), &u);
    u.m0 = pm * p->piece_m;
    u.m1 = hk_min(u.m0 + p->piece_m, g->m);
    u.n0 = pn * p->piece_n;
    u.n1 = hk_min(u.n0 + p->piece_n, g->n);
    return u;
}

static void run_task(void *arg, int64_t task)
{
    const hk_gemm_job_t *job = arg;
    const hk_plan_t *p = &job->plan;
    char *slice = job->workspace + (size_t)task * p->task_bytes;
    float *a_pack = hk_align_up(slice);
    float *b_pack = hk_align_up(a_pack + p->a_floats);
    float *acc = hk_align_up(b_pack + p->b_floats);
    if (p->direct) /* the run that rows outside A read */
        for (size_t i = 0; i < p->a_floats; i++)
            a_pack[i] = 0.0f;
    int64_t first = task * p->units / p->tasks;
    int64_t last = (task + 1) * p->units / p->tasks;
    for (int64_t i = first; i < last; i++) {
        hk_unit_t u = unit_at(job, i);
        multiply_unit(job, &u, a_pack, b_pack, acc);
    }
}

/* The entry's second half, once the args are checked and described:
 * answer a query (workspace_bytes != NULL) or run. */
static int32_t hk_gemm_entry(const hk_gemm_t *g, void *workspace,
                             size_t workspace_size, size_t *workspace_bytes)
{
    hk_gemm_job_t job = {.g = g};
    plan_gemm(g, &job.plan);
    size_t needed = gemm_workspace(&job.plan);
    if (workspace_bytes) {
        *workspace_bytes = needed;
        return CDNN_HOST_OK;
    }
    if (needed > 0 && (!workspace || workspace_size < needed))
        return CDNN_HOST_WORKSPACE_TOO_SMALL;
    job.workspace = hk_align_up(workspace);
    hk_run_tasks(g->parallel, job.plan.tasks, run_task, &job);
    return CDNN_HOST_OK;
}

#endif /* CDNN_HOST_GEMM_H */
