/*
 * blas_matmul.c -- the cpu:blas_matmul engine: a batched matmul by
 * cblas_sgemm, optionally followed by a pointwise chain (bias add, gelu,
 * residual add, ...) applied as an epilogue.
 *
 * Operands are f32, f16 or bf16; sgemm reads only f32, so an f16 or bf16
 * operand is first converted into an f32 copy in the workspace (exact:
 * both widen to f32 without rounding).  The copy keeps the operand's
 * orientation, so that converting a transposed matrix reads it in order,
 * and keeps one copy of a batch dim the operand repeats through stride 0.
 * Accumulation is f32 whatever the storage type, which satisfies an f32,
 * f16 or bf16 compute type; f64 compute is refused rather than widened
 * to, since sgemm is the point of this engine.  A result that is not
 * stored as f32 (f16, bf16) goes through the epilogue, whose store rounds
 * to nearest even.
 *
 * Each matrix only needs one of its last two strides to be 1: a row-major
 * or column-major matrix with any leading dimension is handed to sgemm as
 * it is, transposed if need be.  Batch dims broadcast through stride 0.
 * When b is shared by every batch and a's batches follow one another row
 * after row (x[B, S, H] @ w[H, O]), the batch is folded into M so that one
 * large GEMM replaces many small ones.
 *
 * With an epilogue (a pointwise chain, or a store converting to the
 * output's type) the GEMM runs over tiles of rows of C; each tile is
 * finished by the epilogue right after its GEMM, while it is still in
 * cache.  Tiles are large (see MM_TILE_BYTES), because sgemm repacks b
 * for every call.  OpenBLAS threads the GEMMs (its own thread count); the
 * epilogue uses up to device->cpu_threads threads.
 */
#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpu_engine.h"
#include "epilogue.h"
#include "fast_util.h"

/* Bytes of C per tile: tiles stay in the last-level cache yet are tall
 * enough that repacking b per tile costs little. */
#define MM_TILE_BYTES ((int64_t)8 << 20)
#define MM_MIN_TILE_ROWS 512

/* An f16 or bf16 operand converted to f32 in the workspace before the
 * GEMMs: view is the copy as sgemm reads it. */
typedef struct mm_staged {
    int32_t active;
    cdnn_tensor_view_t view;
    pw_program_t convert;
    size_t offset;
} mm_staged_t;

/* One operand as sgemm sees it. */
typedef struct mm_operand {
    int32_t tensor;
    CBLAS_TRANSPOSE trans;
    int64_t ld;
    int64_t row_step; /* elements from one row of the matrix to the next */
    int64_t batch_strides[CDNN_MAX_RANK]; /* per batch dim; 0 broadcasts */
} mm_operand_t;

typedef struct mm_context {
    cpu_graph_t graph;
    int64_t m, n, k;
    int32_t batch_rank;
    int64_t batch_dims[CDNN_MAX_RANK];
    int64_t batch_count;
    CBLAS_ORDER order;
    mm_operand_t a, b, c;
    mm_staged_t staged[2]; /* a, b */
    int32_t has_epilogue;
    cpu_epilogue_t epilogue;
    int64_t tile_rows;
    size_t scratch_offset;
    cpu_ws_layout_t ws;
} mm_context_t;

/* ------------------------------------------------------------------------
 * Layouts
 * ------------------------------------------------------------------------ */

/* A [rows, cols] matrix with strides (sr, sc) stored row-major: its
 * leading dimension, or 0 when it is not row-major. */
static int64_t row_major_ld(int64_t rows, int64_t cols, int64_t sr, int64_t sc)
{
    if (cols != 1 && sc != 1)
        return 0;
    int64_t ld = rows == 1 ? cols : sr; /* one row: its stride is unused */
    return ld >= cols && ld >= 1 ? ld : 0;
}

/* How sgemm in `order` reads a [rows, cols] tensor: as stored in the
 * order's own layout (no transpose) or in the other one (transposed). */
static cdnn_status_t describe(const cdnn_tensor_view_t *t, CBLAS_ORDER order,
                              mm_operand_t *op)
{
    int32_t r = t->rank;
    int64_t rows = t->dims[r - 2], cols = t->dims[r - 1];
    int64_t row_ld = row_major_ld(rows, cols, t->strides[r - 2],
                                  t->strides[r - 1]);
    int64_t col_ld = row_major_ld(cols, rows, t->strides[r - 1],
                                  t->strides[r - 2]);
    int prefer_row = order == CblasRowMajor ? row_ld != 0 : col_ld == 0;
    if (!row_ld && !col_ld)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "matrix '%s' has strides %lld, %lld in its last two "
                        "dims; one of them must be 1 (row- or column-major)",
                        t->name, (long long)t->strides[r - 2],
                        (long long)t->strides[r - 1]);
    int native = (order == CblasRowMajor) == prefer_row;
    op->trans = native ? CblasNoTrans : CblasTrans;
    op->ld = prefer_row ? row_ld : col_ld;
    op->row_step = prefer_row ? op->ld : 1;
    return CDNN_STATUS_SUCCESS;
}

static void batch_strides(const cdnn_tensor_view_t *t, int32_t batch_rank,
                          int64_t *strides)
{
    for (int32_t d = 0; d < batch_rank; d++)
        strides[d] = t->dims[d] == 1 ? 0 : t->strides[d];
}

/* ------------------------------------------------------------------------
 * Applicability
 * ------------------------------------------------------------------------ */

static int is_half(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_F16 || type == CDNN_DATA_TYPE_BF16;
}

static cdnn_status_t check_operand(const cdnn_tensor_view_t *t,
                                   const cdnn_tensor_view_t *c)
{
    if (t->type != CDNN_DATA_TYPE_F32 && !is_half(t->type))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "'%s' is %s; this engine multiplies f32, f16 and "
                        "bf16",
                        t->name, cdnn_data_type_name(t->type));
    if (t->is_scalar)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "'%s' is a pass-by-value scalar; give it memory",
                        t->name);
    if (t->rank < 2 || t->rank != c->rank)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "'%s' has rank %d; it needs the rank of '%s' (%d), "
                        "at least 2",
                        t->name, t->rank, c->name, c->rank);
    for (int32_t d = 0; d < t->rank - 2; d++)
        if (t->dims[d] != 1 && t->dims[d] != c->dims[d])
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                            "'%s' batch dim %d (%lld) does not broadcast to "
                            "%lld",
                            t->name, d, (long long)t->dims[d],
                            (long long)c->dims[d]);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_matmul(const cdnn_graph_view_t *g)
{
    if (g->node_count < 1 || g->nodes[0].op != CDNN_OP_MATMUL)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the graph does not start with a matmul");
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the graph asks for f64 compute; this engine "
                        "accumulates in f32, for f16 and bf16 operands "
                        "too");
    const cdnn_node_view_t *mm = &g->nodes[0];
    const cdnn_tensor_view_t *c = &g->tensors[mm->outputs[0]];
    cdnn_status_t st = check_operand(&g->tensors[mm->inputs[0]], c);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_operand(&g->tensors[mm->inputs[1]], c);
    return st;
}

/* ------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------ */

/* True when t's batches follow one another row after row, so that its
 * batch dims fold into its rows. */
static int rows_continue(const cdnn_tensor_view_t *t, const mm_operand_t *op,
                         const mm_context_t *ctx)
{
    if (op->trans != CblasNoTrans || ctx->order != CblasRowMajor)
        return 0;
    int64_t expect = op->ld * ctx->m;
    for (int32_t d = ctx->batch_rank - 1; d >= 0; d--) {
        if (t->dims[d] != ctx->batch_dims[d])
            return 0;
        if (t->dims[d] != 1 && t->strides[d] != expect)
            return 0;
        expect *= t->dims[d];
    }
    return 1;
}

static void fold_batch(mm_context_t *ctx, const cdnn_tensor_view_t *a,
                       const cdnn_tensor_view_t *b, const cdnn_tensor_view_t *c)
{
    for (int32_t d = 0; d < ctx->batch_rank; d++)
        if (b->dims[d] != 1)
            return;
    if (ctx->batch_count == 1 || !rows_continue(a, &ctx->a, ctx))
        return;
    if (!ctx->has_epilogue && !rows_continue(c, &ctx->c, ctx))
        return;
    ctx->m *= ctx->batch_count;
    ctx->batch_count = 1;
    ctx->batch_rank = 0;
}

/* sgemm takes int sizes (OpenBLAS without ILP64). */
static cdnn_status_t fits_blasint(const mm_context_t *ctx)
{
    int64_t sizes[] = {ctx->m, ctx->n, ctx->k, ctx->a.ld, ctx->b.ld, ctx->c.ld};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] > INT32_MAX)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                            "a matrix size or leading dimension (%lld) "
                            "exceeds what sgemm takes (%d)",
                            (long long)sizes[i], INT32_MAX);
    return CDNN_STATUS_SUCCESS;
}

/* An operand as sgemm reads it: the tensor itself, or its f32 copy. */
static const cdnn_tensor_view_t *operand_view(const mm_context_t *ctx,
                                              const cdnn_graph_view_t *g,
                                              int32_t port)
{
    const mm_staged_t *s = &ctx->staged[port];
    return s->active ? &s->view : &g->tensors[g->nodes[0].inputs[port]];
}

static cdnn_status_t describe_all(mm_context_t *ctx, const cdnn_graph_view_t *g)
{
    const cdnn_node_view_t *mm = &g->nodes[0];
    const cdnn_tensor_view_t *a = operand_view(ctx, g, 0);
    const cdnn_tensor_view_t *b = operand_view(ctx, g, 1);
    const cdnn_tensor_view_t *c = &g->tensors[mm->outputs[0]];
    int32_t r = c->rank;
    ctx->m = c->dims[r - 2];
    ctx->n = c->dims[r - 1];
    ctx->k = a->dims[r - 1];
    ctx->batch_rank = r - 2;
    ctx->batch_count = 1;
    for (int32_t d = 0; d < r - 2; d++) {
        ctx->batch_dims[d] = c->dims[d];
        ctx->batch_count *= c->dims[d];
    }
    /* C decides the order: sgemm writes it as it is stored.  Behind an
     * epilogue C is a dense row-major buffer. */
    ctx->order = CblasRowMajor;
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (!ctx->has_epilogue) {
        st = describe(c, CblasRowMajor, &ctx->c);
        ctx->order = ctx->c.trans == CblasNoTrans ? CblasRowMajor
                                                  : CblasColMajor;
        ctx->c.trans = CblasNoTrans;
    }
    if (st == CDNN_STATUS_SUCCESS)
        st = describe(a, ctx->order, &ctx->a);
    if (st == CDNN_STATUS_SUCCESS)
        st = describe(b, ctx->order, &ctx->b);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    ctx->a.tensor = mm->inputs[0];
    ctx->b.tensor = mm->inputs[1];
    ctx->c.tensor = mm->outputs[0];
    batch_strides(a, ctx->batch_rank, ctx->a.batch_strides);
    batch_strides(b, ctx->batch_rank, ctx->b.batch_strides);
    batch_strides(c, ctx->batch_rank, ctx->c.batch_strides);
    fold_batch(ctx, a, b, c);
    return fits_blasint(ctx);
}

/* True when t's last two dims are stored column-major: consecutive rows
 * closer together than consecutive columns. */
static int stored_column_major(const cdnn_tensor_view_t *t)
{
    int32_t r = t->rank;
    return t->dims[r - 2] > 1 && t->dims[r - 1] > 1 &&
           t->strides[r - 2] < t->strides[r - 1];
}

/* The dense f32 layout of t's copy: its matrices in t's orientation, one
 * after another in row-major batch order, a batch dim that t repeats
 * through stride 0 kept once (it then broadcasts as a dim of 1). */
static void staged_layout(const cdnn_tensor_view_t *t, cdnn_tensor_view_t *v)
{
    int32_t r = t->rank;
    *v = *t;
    v->type = CDNN_DATA_TYPE_F32;
    v->alignment = 0;
    int column_major = stored_column_major(t);
    v->strides[r - 1] = column_major ? t->dims[r - 2] : 1;
    v->strides[r - 2] = column_major ? 1 : t->dims[r - 1];
    int64_t step = t->dims[r - 2] * t->dims[r - 1];
    for (int32_t d = r - 3; d >= 0; d--) {
        if (t->strides[d] == 0)
            v->dims[d] = 1;
        v->strides[d] = step;
        step *= v->dims[d];
    }
}

/* Plan the f32 copy of an f16 or bf16 operand; an f32 one is read as it
 * is. */
static cdnn_status_t plan_staging(mm_context_t *ctx, const cdnn_graph_view_t *g,
                                  int32_t port, int32_t threads)
{
    int32_t tensor = g->nodes[0].inputs[port];
    const cdnn_tensor_view_t *t = &g->tensors[tensor];
    mm_staged_t *s = &ctx->staged[port];
    s->active = is_half(t->type);
    if (!s->active)
        return CDNN_STATUS_SUCCESS;
    staged_layout(t, &s->view);
    s->offset = cpu_ws_reserve(&ctx->ws, (size_t)cpu_tensor_elements(&s->view) *
                                             sizeof(float));
    return pw_compile_copy(&s->convert, t, tensor, &s->view, threads);
}

/* Tiles of rows for the epilogue, and scratch for one unless the GEMM
 * writes straight into the output. */
static void plan_tiles(mm_context_t *ctx)
{
    int64_t rows = MM_TILE_BYTES / (ctx->n * (int64_t)sizeof(float));
    if (rows < MM_MIN_TILE_ROWS)
        rows = MM_MIN_TILE_ROWS;
    ctx->tile_rows = rows < ctx->m ? rows : ctx->m;
    size_t scratch = ctx->epilogue.in_place
                         ? 0
                         : (size_t)(ctx->tile_rows * ctx->n) * sizeof(float);
    ctx->scratch_offset = cpu_ws_reserve(&ctx->ws, scratch);
}

static void mm_destroy(void *context)
{
    mm_context_t *ctx = context;
    if (!ctx)
        return;
    cpu_graph_free(&ctx->graph);
    free(ctx);
}

/* Everything execute needs, decided from the graph; threads is what the
 * epilogue may use (1 when only checking applicability). */
static cdnn_status_t mm_prepare(mm_context_t *ctx, const cdnn_graph_view_t *g,
                                int32_t threads)
{
    cdnn_status_t st = check_matmul(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const cdnn_tensor_view_t *c = &g->tensors[g->nodes[0].outputs[0]];
    ctx->has_epilogue = g->node_count > 1 || c->type != CDNN_DATA_TYPE_F32;
    if (ctx->has_epilogue)
        st = cpu_epilogue_compile(&ctx->epilogue, g, threads);
    for (int32_t port = 0; port < 2 && st == CDNN_STATUS_SUCCESS; port++)
        st = plan_staging(ctx, g, port, threads);
    if (st == CDNN_STATUS_SUCCESS)
        st = describe_all(ctx, g);
    if (st == CDNN_STATUS_SUCCESS && ctx->has_epilogue)
        plan_tiles(ctx);
    return st;
}

static cdnn_status_t mm_applicable(const cdnn_graph_view_t *graph)
{
    mm_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = mm_prepare(ctx, graph, 1);
    free(ctx);
    return st;
}

static cdnn_status_t mm_create(const cdnn_device_view_t *device,
                               const cdnn_graph_view_t *graph,
                               const cdnn_knob_value_t *knobs,
                               int32_t knob_count, void **context)
{
    (void)knobs;
    (void)knob_count;
    mm_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    /* Prepared from the context's own copy, so that the staged views'
     * names point into memory the context keeps. */
    cdnn_status_t st = cpu_graph_copy(&ctx->graph, graph);
    if (st == CDNN_STATUS_SUCCESS)
        st = mm_prepare(ctx, &ctx->graph.view, device->cpu_threads);
    if (st != CDNN_STATUS_SUCCESS) {
        mm_destroy(ctx);
        return st;
    }
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t mm_workspace_size(void *context, size_t *bytes)
{
    const mm_context_t *ctx = context;
    *bytes = ctx->ws.bytes;
    return CDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------
 * Execution
 * ------------------------------------------------------------------------ */

static int64_t batch_offset(const mm_context_t *ctx, const mm_operand_t *op,
                            int64_t batch)
{
    int64_t off = 0;
    for (int32_t d = ctx->batch_rank - 1; d >= 0; d--) {
        off += batch % ctx->batch_dims[d] * op->batch_strides[d];
        batch /= ctx->batch_dims[d];
    }
    return off;
}

/* One execution: the bound tensors, and where sgemm reads a and b. */
typedef struct mm_run {
    void *const *ptrs;
    const float *a, *b;
} mm_run_t;

/* The f32 operand of a port: the tensor, or its copy, converted now. */
static const float *bind_operand(const mm_context_t *ctx, void *const *ptrs,
                                 void *workspace, int32_t port,
                                 const mm_operand_t *op)
{
    const mm_staged_t *s = &ctx->staged[port];
    if (!s->active)
        return ptrs[op->tensor];
    pw_binding_t b = {.tensors = ptrs,
                      .buffer = cpu_ws_at(workspace, s->offset)};
    pw_run(&s->convert, &b, s->convert.total);
    return b.buffer;
}

/* Rows [m0, m0 + rows) of batch `batch`, writing C at c with ldc. */
static void gemm_rows(const mm_context_t *ctx, const mm_run_t *run,
                      int64_t batch, int64_t m0, int64_t rows, float *c,
                      int64_t ldc)
{
    const float *a = run->a + batch_offset(ctx, &ctx->a, batch) +
                     m0 * ctx->a.row_step;
    const float *b = run->b + batch_offset(ctx, &ctx->b, batch);
    cblas_sgemm(ctx->order, ctx->a.trans, ctx->b.trans, (blasint)rows,
                (blasint)ctx->n, (blasint)ctx->k, 1.0f, a, (blasint)ctx->a.ld,
                b, (blasint)ctx->b.ld, 0.0f, c, (blasint)ldc);
}

static void run_with_epilogue(const mm_context_t *ctx, const mm_run_t *run,
                              float *scratch, int64_t batch)
{
    for (int64_t m0 = 0; m0 < ctx->m; m0 += ctx->tile_rows) {
        int64_t rows = ctx->m - m0 < ctx->tile_rows ? ctx->m - m0
                                                    : ctx->tile_rows;
        int64_t e0 = (batch * ctx->m + m0) * ctx->n;
        float *c = cpu_epilogue_target(&ctx->epilogue, run->ptrs, scratch, e0);
        gemm_rows(ctx, run, batch, m0, rows, c, ctx->n);
        cpu_epilogue_run(&ctx->epilogue, run->ptrs, c, e0, e0 + rows * ctx->n);
    }
}

static cdnn_status_t mm_execute(void *context, const cdnn_exec_args_t *args)
{
    const mm_context_t *ctx = context;
    void *ptrs[PW_MAX_GRAPH_TENSORS];
    cdnn_status_t st = cpu_bind_tensors(&ctx->graph.view, args, ptrs);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (ctx->ws.bytes && !args->workspace)
        return sdk_fail(CDNN_STATUS_BAD_PARAM,
                        "this plan needs %zu bytes of workspace; none was "
                        "given",
                        ctx->ws.bytes);
    float *scratch = ctx->ws.bytes
                         ? cpu_ws_at(args->workspace, ctx->scratch_offset)
                         : NULL;
    mm_run_t run = {
        .ptrs = ptrs,
        .a = bind_operand(ctx, ptrs, args->workspace, 0, &ctx->a),
        .b = bind_operand(ctx, ptrs, args->workspace, 1, &ctx->b),
    };
    for (int64_t batch = 0; batch < ctx->batch_count; batch++) {
        if (ctx->has_epilogue) {
            run_with_epilogue(ctx, &run, scratch, batch);
        } else {
            float *c = (float *)ptrs[ctx->c.tensor] +
                       batch_offset(ctx, &ctx->c, batch);
            gemm_rows(ctx, &run, batch, 0, ctx->m, c, ctx->c.ld);
        }
    }
    return CDNN_STATUS_SUCCESS;
}

const cpu_engine_t cpu_blas_matmul_engine = {
    .applicable = mm_applicable,
    .create = mm_create,
    .workspace_size = mm_workspace_size,
    .execute = mm_execute,
    .destroy = mm_destroy,
};
