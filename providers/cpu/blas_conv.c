/*
 * blas_conv.c -- the cpu:blas_conv engine: convolution forward, backward
 * data and backward filter (1-3 spatial dims, padding, stride, dilation,
 * groups) lowered to cblas_sgemm by im2col / col2im.
 *
 * Per image and group, with P output positions and KS filter taps:
 *   forward       y[Kg, P]      = w[Kg, Cg*KS] . col(x)[Cg*KS, P]
 *   backward data dcol[Cg*KS,P] = w^T . dy[Kg, P], then dx = col2im(dcol)
 *   backward filt dw[Kg, Cg*KS] += dy[Kg, P] . col(x)^T, over the batch
 * A 1x1 filter with stride 1 and no padding needs no lowering.
 *
 * The GEMMs read packed NC(D)(H)W f32; inputs stored otherwise (NHWC, f16,
 * bf16) are first packed into the workspace, f16 and bf16 widened exactly.
 * The result goes through the epilogue (epilogue.h): straight into a
 * packed f32 output, or into scratch and then stored (an f16 or bf16
 * output rounded to nearest even) or finished by the pointwise chain that
 * follows in the graph (bias add, relu, ...).  Accumulation is f32 for
 * every storage type, which satisfies an f32, f16 or bf16 compute type;
 * f64 compute is refused.
 *
 * Images are processed in chunks of device->cpu_threads: the lowering of a
 * chunk is split over threads by (image, channel) plane, then OpenBLAS
 * threads each GEMM.  All scratch is in the caller's workspace.
 */
#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_lower.h"
#include "cpu_engine.h"
#include "epilogue.h"
#include "fast_util.h"

/* Floats one lowering thread should get at least. */
#define CONV_GRAIN 32768

/* A GEMM operand: a node input, packed into the workspace if need be. */
typedef struct conv_input {
    int32_t tensor;
    int32_t pack;
    pw_program_t program;
    size_t offset;
} conv_input_t;

typedef struct conv_context {
    cpu_graph_t graph;
    cdnn_op_t op;
    conv_geom_t geom;
    int32_t threads;
    int32_t lowered; /* needs im2col / col2im */
    int64_t chunk;   /* images per chunk */
    conv_input_t in[2];
    cpu_epilogue_t epilogue;
    size_t col_offset, result_offset;
    cpu_ws_layout_t ws;
} conv_context_t;

/* ------------------------------------------------------------------------
 * Applicability and planning
 * ------------------------------------------------------------------------ */

static int is_conv(cdnn_op_t op)
{
    return op == CDNN_OP_CONV_FWD || op == CDNN_OP_CONV_BWD_DATA ||
           op == CDNN_OP_CONV_BWD_FILTER;
}

static cdnn_status_t check_input(const cdnn_tensor_view_t *t)
{
    if (t->is_scalar)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "'%s' is a pass-by-value scalar; give it memory",
                        t->name);
    if (t->type != CDNN_DATA_TYPE_F32 && t->type != CDNN_DATA_TYPE_F16 &&
        t->type != CDNN_DATA_TYPE_BF16)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "'%s' is %s; this engine reads f32, f16 and bf16",
                        t->name, cdnn_data_type_name(t->type));
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_conv(const cdnn_graph_view_t *g)
{
    if (g->node_count < 1 || !is_conv(g->nodes[0].op))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the graph does not start with a convolution");
    const cdnn_node_view_t *node = &g->nodes[0];
    int32_t s = node->attr.conv.spatial_dims;
    if (s < 1 || s > 3)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "node '%s' has %d spatial dims; 1 to 3 are supported",
                        node->name, s);
    if (g->compute_type == CDNN_DATA_TYPE_F64)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the graph asks for f64 compute; this engine "
                        "accumulates in f32, for f16 and bf16 inputs too");
    cdnn_status_t st = check_input(&g->tensors[node->inputs[0]]);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_input(&g->tensors[node->inputs[1]]);
    return st;
}

/* x, w and y of the convolution, whichever ports the op has them on. */
static void conv_tensors(const cdnn_graph_view_t *g,
                         const cdnn_tensor_view_t *xwy[3])
{
    const cdnn_node_view_t *n = &g->nodes[0];
    const cdnn_tensor_view_t *in0 = &g->tensors[n->inputs[0]];
    const cdnn_tensor_view_t *in1 = &g->tensors[n->inputs[1]];
    const cdnn_tensor_view_t *out = &g->tensors[n->outputs[0]];
    xwy[0] = n->op == CDNN_OP_CONV_BWD_DATA ? out : in0;
    xwy[1] = n->op == CDNN_OP_CONV_BWD_FILTER ? out : in1;
    xwy[2] = n->op == CDNN_OP_CONV_FWD ? out
             : n->op == CDNN_OP_CONV_BWD_DATA ? in0
                                              : in1;
}

/* sgemm takes int sizes (OpenBLAS without ILP64). */
static cdnn_status_t check_sizes(const conv_geom_t *g)
{
    int64_t sizes[] = {g->kg, g->cg * g->filt_size, g->out_size, g->in_size};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] > INT32_MAX)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                            "a GEMM size (%lld) exceeds what sgemm takes (%d)",
                            (long long)sizes[i], INT32_MAX);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t plan_input(conv_context_t *ctx, const cdnn_graph_view_t *g,
                                int32_t port)
{
    conv_input_t *in = &ctx->in[port];
    in->tensor = g->nodes[0].inputs[port];
    const cdnn_tensor_view_t *t = &g->tensors[in->tensor];
    in->pack = t->type != CDNN_DATA_TYPE_F32 || !cpu_tensor_is_packed(t);
    if (!in->pack)
        return CDNN_STATUS_SUCCESS;
    in->offset = cpu_ws_reserve(&ctx->ws, (size_t)cpu_tensor_elements(t) *
                                              sizeof(float));
    return pw_compile_pack(&in->program, t, in->tensor, ctx->threads);
}

/* Floats of one chunk's result, or of dw, which the batch accumulates. */
static int64_t result_floats(const conv_context_t *ctx)
{
    const conv_geom_t *g = &ctx->geom;
    if (ctx->op == CDNN_OP_CONV_FWD)
        return ctx->chunk * g->k * g->out_size;
    if (ctx->op == CDNN_OP_CONV_BWD_DATA)
        return ctx->chunk * g->c * g->in_size;
    return g->k * g->cg * g->filt_size;
}

static void plan_workspace(conv_context_t *ctx)
{
    const conv_geom_t *g = &ctx->geom;
    ctx->chunk = ctx->threads < g->n ? ctx->threads : g->n;
    int64_t col = ctx->lowered ? ctx->chunk * g->c * g->filt_size *
                                     g->out_size
                               : 0;
    ctx->col_offset = cpu_ws_reserve(&ctx->ws, (size_t)col * sizeof(float));
    int64_t result = ctx->epilogue.in_place ? 0 : result_floats(ctx);
    ctx->result_offset = cpu_ws_reserve(&ctx->ws,
                                        (size_t)result * sizeof(float));
}

/* Everything execute needs, decided from the graph. */
static cdnn_status_t conv_prepare(conv_context_t *ctx,
                                  const cdnn_graph_view_t *g, int32_t threads)
{
    cdnn_status_t st = check_conv(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    const cdnn_tensor_view_t *xwy[3];
    conv_tensors(g, xwy);
    ctx->op = g->nodes[0].op;
    ctx->threads = threads > 0 ? threads : 1;
    conv_geom_init(&ctx->geom, &g->nodes[0].attr.conv, xwy[0], xwy[1], xwy[2]);
    ctx->lowered = !conv_is_pointwise(&ctx->geom);
    st = check_sizes(&ctx->geom);
    if (st == CDNN_STATUS_SUCCESS)
        st = cpu_epilogue_compile(&ctx->epilogue, g, ctx->threads);
    for (int32_t port = 0; port < 2 && st == CDNN_STATUS_SUCCESS; port++)
        st = plan_input(ctx, g, port);
    if (st == CDNN_STATUS_SUCCESS)
        plan_workspace(ctx);
    return st;
}

static void conv_destroy(void *context)
{
    conv_context_t *ctx = context;
    if (!ctx)
        return;
    cpu_graph_free(&ctx->graph);
    free(ctx);
}

static cdnn_status_t conv_applicable(const cdnn_graph_view_t *graph)
{
    conv_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = conv_prepare(ctx, graph, 1);
    free(ctx);
    return st;
}

static cdnn_status_t conv_create(const cdnn_device_view_t *device,
                                 const cdnn_graph_view_t *graph,
                                 const cdnn_knob_value_t *knobs,
                                 int32_t knob_count, void **context)
{
    (void)knobs;
    (void)knob_count;
    conv_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = conv_prepare(ctx, graph, device->cpu_threads);
    if (st == CDNN_STATUS_SUCCESS)
        st = cpu_graph_copy(&ctx->graph, graph);
    if (st != CDNN_STATUS_SUCCESS) {
        conv_destroy(ctx);
        return st;
    }
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t conv_workspace_size(void *context, size_t *bytes)
{
    const conv_context_t *ctx = context;
    *bytes = ctx->ws.bytes;
    return CDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------
 * Execution
 * ------------------------------------------------------------------------ */

/* One execution: where everything is, and the chunk being worked on. */
typedef struct conv_run {
    const conv_context_t *ctx;
    void *const *ptrs;
    const float *in[2]; /* the node's inputs, packed f32 */
    float *col;
    float *result; /* the GEMM result of the chunk (or of dw) */
    int64_t n0;    /* first image of the chunk */
} conv_run_t;

/* Items of a chunk's lowering are (image in chunk, channel) planes. */
static void lower_planes(void *arg, int64_t begin, int64_t end)
{
    const conv_run_t *r = arg;
    const conv_geom_t *g = &r->ctx->geom;
    int64_t plane_col = g->filt_size * g->out_size;
    for (int64_t i = begin; i < end; i++) {
        int64_t j = i / g->c, c = i % g->c;
        if (r->ctx->op == CDNN_OP_CONV_BWD_DATA) {
            float *dx = r->result + i * g->in_size;
            memset(dx, 0, (size_t)g->in_size * sizeof *dx);
            conv_col2im_plane(g, r->col + i * plane_col, dx);
        } else {
            const float *x = r->in[0] + ((r->n0 + j) * g->c + c) * g->in_size;
            conv_im2col_plane(g, x, r->col + i * plane_col);
        }
    }
}

static void lower_chunk(const conv_run_t *r, int64_t images)
{
    const conv_geom_t *g = &r->ctx->geom;
    int64_t planes = images * g->c;
    int32_t threads = cpu_threads_for(
        r->ctx->threads, planes * g->filt_size * g->out_size, CONV_GRAIN);
    cpu_parallel_for(threads, planes, lower_planes, (void *)r);
}

/* The column block of image n (j in the chunk), group grp: lowered, or
 * the packed plane itself for a 1x1 convolution. */
static const float *columns(const conv_run_t *r, int64_t j, int64_t grp)
{
    const conv_geom_t *g = &r->ctx->geom;
    if (r->ctx->lowered)
        return r->col + (j * g->c + grp * g->cg) * g->filt_size * g->out_size;
    return r->in[0] + ((r->n0 + j) * g->c + grp * g->cg) * g->in_size;
}

static void gemm_fwd(const conv_run_t *r, int64_t j, int64_t grp)
{
    const conv_geom_t *g = &r->ctx->geom;
    int64_t kk = g->cg * g->filt_size;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)g->kg,
                (blasint)g->out_size, (blasint)kk, 1.0f,
                r->in[1] + grp * g->kg * kk, (blasint)kk, columns(r, j, grp),
                (blasint)g->out_size, 0.0f,
                r->result + (j * g->k + grp * g->kg) * g->out_size,
                (blasint)g->out_size);
}

static void gemm_bwd_data(const conv_run_t *r, int64_t j, int64_t grp)
{
    const conv_geom_t *g = &r->ctx->geom;
    int64_t kk = g->cg * g->filt_size;
    float *dcol = r->ctx->lowered
                      ? r->col + (j * g->c + grp * g->cg) * g->filt_size *
                                     g->out_size
                      : r->result + (j * g->c + grp * g->cg) * g->in_size;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)kk,
                (blasint)g->out_size, (blasint)g->kg, 1.0f,
                r->in[1] + grp * g->kg * kk, (blasint)kk,
                r->in[0] + ((r->n0 + j) * g->k + grp * g->kg) * g->out_size,
                (blasint)g->out_size, 0.0f, dcol, (blasint)g->out_size);
}

static void gemm_bwd_filter(const conv_run_t *r, int64_t j, int64_t grp)
{
    const conv_geom_t *g = &r->ctx->geom;
    int64_t kk = g->cg * g->filt_size;
    float beta = r->n0 + j == 0 ? 0.0f : 1.0f; /* the batch accumulates */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)g->kg,
                (blasint)kk, (blasint)g->out_size, 1.0f,
                r->in[1] + ((r->n0 + j) * g->k + grp * g->kg) * g->out_size,
                (blasint)g->out_size, columns(r, j, grp),
                (blasint)g->out_size, beta, r->result + grp * g->kg * kk,
                (blasint)kk);
}

/* Elements of the result that one image covers. */
static int64_t image_elements(const conv_context_t *ctx)
{
    const conv_geom_t *g = &ctx->geom;
    return ctx->op == CDNN_OP_CONV_FWD ? g->k * g->out_size
                                       : g->c * g->in_size;
}

static void run_chunk(conv_run_t *r, int64_t images, float *scratch)
{
    const conv_context_t *ctx = r->ctx;
    int64_t e0 = r->n0 * image_elements(ctx);
    r->result = cpu_epilogue_target(&ctx->epilogue, r->ptrs, scratch, e0);
    if (ctx->lowered && ctx->op == CDNN_OP_CONV_FWD)
        lower_chunk(r, images);
    void (*gemm)(const conv_run_t *, int64_t, int64_t) =
        ctx->op == CDNN_OP_CONV_FWD ? gemm_fwd : gemm_bwd_data;
    for (int64_t j = 0; j < images; j++)
        for (int64_t grp = 0; grp < ctx->geom.groups; grp++)
            gemm(r, j, grp);
    if (ctx->lowered && ctx->op == CDNN_OP_CONV_BWD_DATA)
        lower_chunk(r, images);
    cpu_epilogue_run(&ctx->epilogue, r->ptrs, r->result, e0,
                     e0 + images * image_elements(ctx));
}

static void run_bwd_filter(conv_run_t *r, float *scratch)
{
    const conv_context_t *ctx = r->ctx;
    const conv_geom_t *g = &ctx->geom;
    r->result = cpu_epilogue_target(&ctx->epilogue, r->ptrs, scratch, 0);
    for (r->n0 = 0; r->n0 < g->n; r->n0 += ctx->chunk) {
        int64_t images = g->n - r->n0 < ctx->chunk ? g->n - r->n0 : ctx->chunk;
        if (ctx->lowered)
            lower_chunk(r, images);
        for (int64_t j = 0; j < images; j++)
            for (int64_t grp = 0; grp < g->groups; grp++)
                gemm_bwd_filter(r, j, grp);
    }
    cpu_epilogue_run(&ctx->epilogue, r->ptrs, r->result, 0,
                     g->k * g->cg * g->filt_size);
}

/* Pack the inputs that are not packed f32 into the workspace. */
static void bind_inputs(conv_run_t *r, void *workspace)
{
    for (int32_t port = 0; port < 2; port++) {
        const conv_input_t *in = &r->ctx->in[port];
        if (!in->pack) {
            r->in[port] = r->ptrs[in->tensor];
            continue;
        }
        pw_binding_t b = {.tensors = r->ptrs,
                          .buffer = cpu_ws_at(workspace, in->offset)};
        pw_run(&in->program, &b, in->program.total);
        r->in[port] = b.buffer;
    }
}

static cdnn_status_t conv_execute(void *context, const cdnn_exec_args_t *args)
{
    const conv_context_t *ctx = context;
    void *ptrs[PW_MAX_GRAPH_TENSORS];
    cdnn_status_t st = cpu_bind_tensors(&ctx->graph.view, args, ptrs);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (ctx->ws.bytes && !args->workspace)
        return sdk_fail(CDNN_STATUS_BAD_PARAM,
                        "this plan needs %zu bytes of workspace; none was "
                        "given",
                        ctx->ws.bytes);
    conv_run_t r = {.ctx = ctx, .ptrs = ptrs};
    bind_inputs(&r, args->workspace);
    r.col = cpu_ws_at(args->workspace, ctx->col_offset);
    float *scratch = cpu_ws_at(args->workspace, ctx->result_offset);
    if (ctx->op == CDNN_OP_CONV_BWD_FILTER) {
        run_bwd_filter(&r, scratch);
        return CDNN_STATUS_SUCCESS;
    }
    for (r.n0 = 0; r.n0 < ctx->geom.n; r.n0 += ctx->chunk) {
        int64_t left = ctx->geom.n - r.n0;
        run_chunk(&r, left < ctx->chunk ? left : ctx->chunk, scratch);
    }
    return CDNN_STATUS_SUCCESS;
}

const cpu_engine_t cpu_blas_conv_engine = {
    .applicable = conv_applicable,
    .create = conv_create,
    .workspace_size = conv_workspace_size,
    .execute = conv_execute,
    .destroy = conv_destroy,
};
