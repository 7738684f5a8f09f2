/*
 * matmul.c -- "host-matmul-v1": batched C = epilogue(A . B) on a
 * register-blocked micro-kernel.
 *
 * Built once per tile: -DHK_MR=<rows> -DHK_NV=<vectors per row>, so the
 * tile is HK_MR x (HK_NV * HK_VL) elements of C held in HK_MR * HK_NV
 * vector registers while the whole K is summed; each step of K broadcasts
 * HK_MR elements of A and loads HK_NV vectors of B.
 *
 * Operands are packed into the workspace first (the GotoBLAS scheme):
 * a block of A as panels of HK_MR rows, p-major; a block of B as panels of
 * NR columns, p-major; both widened to f32 and zero-padded to whole
 * panels, so the micro-kernel has one shape and no bounds, and strides and
 * types are the packers' business alone.  The panels span all of K; the
 * micro-kernel walks them KC steps at a time, so that the B micro-panel it
 * reuses across a block of A stays in L1, and keeps the partial sums of
 * all but the last step in an f32 buffer of the block's tiles.  The last
 * step finishes a tile in registers, and the epilogue (bias, activation,
 * residual, rounding to C's type) runs on it before C is written, once.
 * Block sizes keep a block of A in L2 and a block of B in L2/L3.
 *
 * Threads: the work is cut into units (a batch, a range of rows, a range
 * of columns); each task packs its own blocks in its own workspace slice.
 */
#include "common.h"
#include "convert.h"
#include "vmath.h"

#if !defined(HK_MR) || !defined(HK_NV)
#error "build matmul.c with -DHK_MR=<rows> -DHK_NV=<vectors>"
#endif

#define NR (HK_NV * HK_VL)

/* Bytes of packed A and B blocks per task; a smaller K buys taller and
 * wider blocks. */
#define A_BLOCK_BYTES (256 * 1024)
#define B_BLOCK_BYTES (1024 * 1024)
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

typedef struct mm_plan {
    int64_t batch_count;
    int64_t split_m, split_n;    /* pieces of each batch's C */
    int64_t piece_m, piece_n;    /* rows, columns per piece */
    int64_t units, tasks;
    int64_t mc, nc;              /* rows of A, columns of B per block */
    int64_t kc;                  /* steps of K per micro-kernel call */
    size_t a_floats, b_floats;   /* per task */
    size_t acc_floats;           /* partial sums of a block, when K > kc */
    size_t task_bytes;
} mm_plan_t;

typedef struct mm_job {
    const cdnn_host_matmul_args_t *args;
    mm_plan_t plan;
    char *workspace;
} mm_job_t;

/* Where one unit's matrices start, and which part of C it computes. */
typedef struct mm_unit {
    int64_t a, b, c, bias, residual; /* element offsets of the batch */
    int64_t m0, m1, n0, n1;
} mm_unit_t;

/* ------------------------------------------------------------------------
 * Checks and plan
 * ------------------------------------------------------------------------ */

static int32_t check_args(const cdnn_host_matmul_args_t *a, int query)
{
    if (a->batch_rank < 0 || a->batch_rank > CDNN_HOST_MAX_BATCH_RANK ||
        a->m < 0 || a->n < 0 || a->k < 0 ||
        hk_count(a->batch_rank, a->batch_dims) < 0 || a->activation < 0 ||
        a->activation >= CDNN_HOST_ACT_COUNT)
        return CDNN_HOST_BAD_ARGS;
    if (!hk_type_ok(a->a.type) || !hk_type_ok(a->b.type) ||
        !hk_type_ok(a->c.type) ||
        (a->bias.data && !hk_type_ok(a->bias.type)) ||
        (a->residual.data && !hk_type_ok(a->residual.type)))
        return CDNN_HOST_BAD_TYPE;
    int64_t outputs = hk_count(a->batch_rank, a->batch_dims) * a->m * a->n;
    if (query || outputs == 0)
        return CDNN_HOST_OK;
    if (!a->c.data || (a->k > 0 && (!a->a.data || !a->b.data)))
        return CDNN_HOST_BAD_ARGS;
    return CDNN_HOST_OK;
}

/* Pieces per batch: the longer side of C is cut, so that the packing
 * repeated in every piece (all of B for a cut of rows) stays small next to
 * the piece's arithmetic. */
static void plan_split(const cdnn_host_matmul_args_t *a, mm_plan_t *p,
                       int64_t budget)
{
    int64_t want = hk_ceil_div(budget, hk_max(p->batch_count, 1));
    p->split_m = p->split_n = 1;
    if (want > 1 && a->m >= a->n)
        p->split_m = hk_min(want, hk_ceil_div(a->m, HK_MR));
    else if (want > 1)
        p->split_n = hk_min(want, hk_ceil_div(a->n, NR));
    p->piece_m = hk_round_up(hk_ceil_div(a->m, p->split_m), HK_MR);
    p->piece_n = hk_round_up(hk_ceil_div(a->n, p->split_n), NR);
    p->split_m = hk_max(hk_ceil_div(a->m, p->piece_m), 1);
    p->split_n = hk_max(hk_ceil_div(a->n, p->piece_n), 1);
}

static void plan_matmul(const cdnn_host_matmul_args_t *a, mm_plan_t *p)
{
    *p = (mm_plan_t){.batch_count = hk_count(a->batch_rank, a->batch_dims)};
    if (p->batch_count * a->m * a->n == 0)
        return; /* nothing to write: no task, no workspace */
    double macs = (double)p->batch_count * (double)a->m * (double)a->n *
                  (double)a->k;
    int64_t budget = macs < MIN_PARALLEL_MACS
                         ? 1 : hk_thread_budget(&a->parallel);
    plan_split(a, p, budget);
    p->units = p->batch_count * p->split_m * p->split_n;
    p->tasks = hk_max(hk_min(budget, p->units), 1);
    int64_t k = hk_max(a->k, 1);
    p->mc = hk_min(hk_max(A_BLOCK_BYTES / (4 * k) / HK_MR * HK_MR, HK_MR),
                   p->piece_m);
    p->nc = hk_min(hk_max(B_BLOCK_BYTES / (4 * k) / NR * NR, NR), p->piece_n);
    p->kc = KC;
    p->a_floats = (size_t)(p->mc * a->k);
    p->b_floats = (size_t)(p->nc * a->k);
    p->acc_floats = a->k > p->kc ? (size_t)(p->mc * p->nc) : 0;
    p->task_bytes = (p->a_floats + p->b_floats + p->acc_floats) * sizeof(float) +
                    3 * HK_ALIGN;
}

static size_t workspace_needed(const mm_plan_t *p)
{
    return p->tasks ? (size_t)p->tasks * p->task_bytes + HK_ALIGN : 0;
}

/* ------------------------------------------------------------------------
 * Packing
 * ------------------------------------------------------------------------ */

/* rows (<= HK_MR) rows of A from `row0` (element offset) into one panel,
 * p-major, the missing rows zero. */
static void pack_a_panel(const cdnn_host_tensor_t *t, int32_t batch_rank,
                         int64_t row0, int64_t rows, int64_t k, float *dst)
{
    int64_t rs = t->strides[batch_rank], cs = t->strides[batch_rank + 1];
    if (t->type == CDNN_HOST_F32 && rs == 1 && rows == HK_MR) {
        /* column-major A: each step of K is HK_MR consecutive floats */
        const float *src = (const float *)t->data + row0;
        for (int64_t p = 0; p < k; p++)
            for (int i = 0; i < HK_MR; i++)
                dst[p * HK_MR + i] = src[p * cs + i];
        return;
    }
    for (int i = 0; i < HK_MR; i++) {
        if (i >= rows) {
            for (int64_t p = 0; p < k; p++)
                dst[p * HK_MR + i] = 0.0f;
            continue;
        }
        const void *row = hk_at(t->data, t->type, row0 + i * rs);
        if (t->type == CDNN_HOST_F32 && cs == 1)
            for (int64_t p = 0; p < k; p++)
                dst[p * HK_MR + i] = ((const float *)row)[p];
        else
            for (int64_t p = 0; p < k; p++)
                dst[p * HK_MR + i] = hk_load1(t->type, row, p * cs);
    }
}

/* cols (<= NR) columns of B from `col0` into one panel, p-major, the
 * missing columns zero. */
static void pack_b_panel(const cdnn_host_tensor_t *t, int32_t batch_rank,
                         int64_t col0, int64_t cols, int64_t k, float *dst)
{
    int64_t rs = t->strides[batch_rank], cs = t->strides[batch_rank + 1];
    if (cs == 1 && cols == NR) {
        /* row-major B: each step of K is NR consecutive elements */
        for (int64_t p = 0; p < k; p++) {
            const void *src = hk_at(t->data, t->type, col0 + p * rs);
            for (int v = 0; v < HK_NV; v++)
                vstore(dst + p * NR + v * HK_VL,
                       hk_vload_typed(t->type,
                                      hk_at(src, t->type, v * HK_VL)));
        }
        return;
    }
    for (int j = 0; j < NR; j++) {
        if (j >= cols) {
            for (int64_t p = 0; p < k; p++)
                dst[p * NR + j] = 0.0f;
            continue;
        }
        const void *col = hk_at(t->data, t->type, col0 + j * cs);
        for (int64_t p = 0; p < k; p++)
            dst[p * NR + j] = hk_load1(t->type, col, p * rs);
    }
}

static void pack_a_block(const cdnn_host_matmul_args_t *a, int64_t offset,
                         int64_t rows, float *dst)
{
    int64_t rs = a->a.strides[a->batch_rank];
    for (int64_t i = 0; i < rows; i += HK_MR)
        pack_a_panel(&a->a, a->batch_rank, offset + i * rs,
                     hk_min(HK_MR, rows - i), a->k, dst + i * a->k);
}

static void pack_b_block(const cdnn_host_matmul_args_t *a, int64_t offset,
                         int64_t cols, float *dst)
{
    int64_t cs = a->b.strides[a->batch_rank + 1];
    for (int64_t j = 0; j < cols; j += NR)
        pack_b_panel(&a->b, a->batch_rank, offset + j * cs,
                     hk_min(NR, cols - j), a->k, dst + j * a->k);
}

/* ------------------------------------------------------------------------
 * The micro-kernel: tile = A panel . B panel, over all of K
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

/* Offset of element (i, j) of an {batch.., row, col} tensor. */
static int64_t at_ij(const cdnn_host_tensor_t *t, int32_t batch_rank,
                     int64_t base, int64_t i, int64_t j)
{
    return base + i * t->strides[batch_rank] + j * t->strides[batch_rank + 1];
}

static void finish_tile(const cdnn_host_matmul_args_t *a, const mm_unit_t *u,
                        float *tile, int64_t i0, int64_t j0, int64_t rows,
                        int64_t cols)
{
    int32_t br = a->batch_rank;
    for (int64_t i = 0; i < rows; i++) {
        float *row = tile + i * NR;
        if (a->bias.data)
            add_tensor_row(&a->bias, at_ij(&a->bias, br, u->bias, i0 + i, j0),
                           a->bias.strides[br + 1], cols, row);
        activate_row(a->activation, row);
        if (a->residual.data)
            add_tensor_row(&a->residual,
                           at_ij(&a->residual, br, u->residual, i0 + i, j0),
                           a->residual.strides[br + 1], cols, row);
        store_row(&a->c, at_ij(&a->c, br, u->c, i0 + i, j0),
                  a->c.strides[br + 1], cols, row);
    }
}

/* ------------------------------------------------------------------------
 * Driver
 * ------------------------------------------------------------------------ */

/* A block of C: rows [i0, i0 + rows) of the packed A block against the
 * packed B block's columns [j0, j0 + cols), K in steps of plan.kc; the
 * partial sums of a step that is not the last wait in acc, tile by tile. */
static void multiply_block(const mm_job_t *job, const mm_unit_t *u,
                           const float *a_pack, const float *b_pack,
                           float *acc, int64_t i0, int64_t rows, int64_t j0,
                           int64_t cols)
{
    const cdnn_host_matmul_args_t *a = job->args;
    int64_t k = a->k, kc = job->plan.kc, tiles_m = hk_ceil_div(rows, HK_MR);
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
                finish_tile(a, u, tile, i0 + i, j0 + j,
                            hk_min(HK_MR, rows - i), hk_min(NR, cols - j));
            }
    }
}

static void multiply_unit(const mm_job_t *job, const mm_unit_t *u,
                          float *a_pack, float *b_pack, float *acc)
{
    const cdnn_host_matmul_args_t *a = job->args;
    int32_t br = a->batch_rank;
    for (int64_t j0 = u->n0; j0 < u->n1; j0 += job->plan.nc) {
        int64_t cols = hk_min(job->plan.nc, u->n1 - j0);
        pack_b_block(a, u->b + j0 * a->b.strides[br + 1], cols, b_pack);
        for (int64_t i0 = u->m0; i0 < u->m1; i0 += job->plan.mc) {
            int64_t rows = hk_min(job->plan.mc, u->m1 - i0);
            pack_a_block(a, u->a + i0 * a->a.strides[br], rows, a_pack);
            multiply_block(job, u, a_pack, b_pack, acc, i0, rows, j0, cols);
        }
    }
}

static mm_unit_t unit_at(const mm_job_t *job, int64_t index)
{
    const cdnn_host_matmul_args_t *a = job->args;
    const mm_plan_t *p = &job->plan;
    int64_t pn = index % p->split_n, pm = index / p->split_n % p->split_m;
    int64_t batch = index / (p->split_n * p->split_m);
    int32_t br = a->batch_rank;
    mm_unit_t u;
    u.a = hk_offset_of(batch, br, a->batch_dims, a->a.strides);
    u.b = hk_offset_of(batch, br, a->batch_dims, a->b.strides);
    u.c = hk_offset_of(batch, br, a->batch_dims, a->c.strides);
    u.bias = hk_offset_of(batch, br, a->batch_dims, a->bias.strides);
    u.residual = hk_offset_of(batch, br, a->batch_dims, a->residual.strides);
    u.m0 = pm * p->piece_m;
    u.m1 = hk_min(u.m0 + p->piece_m, a->m);
    u.n0 = pn * p->piece_n;
    u.n1 = hk_min(u.n0 + p->piece_n, a->n);
    return u;
}

static void run_task(void *arg, int64_t task)
{
    const mm_job_t *job = arg;
    const mm_plan_t *p = &job->plan;
    char *slice = job->workspace + (size_t)task * p->task_bytes;
    float *a_pack = hk_align_up(slice);
    float *b_pack = hk_align_up(a_pack + p->a_floats);
    float *acc = hk_align_up(b_pack + p->b_floats);
    int64_t first = task * p->units / p->tasks;
    int64_t last = (task + 1) * p->units / p->tasks;
    for (int64_t i = first; i < last; i++) {
        mm_unit_t u = unit_at(job, i);
        multiply_unit(job, &u, a_pack, b_pack, acc);
    }
}

HK_EXPORT int32_t HK_ENTRY(const cdnn_host_matmul_args_t *args,
                           size_t *workspace_bytes)
{
    int32_t status = check_args(args, workspace_bytes != NULL);
    if (status != CDNN_HOST_OK)
        return status;
    mm_job_t job = {.args = args};
    plan_matmul(args, &job.plan);
    size_t needed = workspace_needed(&job.plan);
    if (workspace_bytes) {
        *workspace_bytes = needed;
        return CDNN_HOST_OK;
    }
    if (needed > 0 && (!args->workspace || args->workspace_size < needed))
        return CDNN_HOST_WORKSPACE_TOO_SMALL;
    job.workspace = hk_align_up(args->workspace);
    hk_run_tasks(&args->parallel, job.plan.tasks, run_task, &job);
    return CDNN_HOST_OK;
}
