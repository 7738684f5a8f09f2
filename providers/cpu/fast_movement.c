/*
 * fast_movement.c -- the cpu:copy engine: a graph of one transpose, slice,
 * concat, pad or reshape node, any type, as strided copies of boxes of
 * elements.
 *
 * Each of these ops maps y's coordinates onto an input's linearly, so it
 * is one or more "box copies": a box of dims, read from one tensor with
 * its own element strides (and offset) and written to another with its
 * own.  Transpose reads x with its strides permuted; slice with its
 * strides times the steps, from the start's offset; concat copies each
 * input into y at its offset along the axis.  Reshape is linear only when
 * both sides are packed (one contiguous copy); other reshapes are left to
 * cpu:reference.  Pad fills y with its value, then copies x into it at
 * the offset pre.  Elements are moved by their size in bytes, converting
 * nothing, so every type is exact.  Rows of a box (all but its last dim)
 * are split over threads; where the last dim's run is strided in the
 * source (a transpose), rows are copied in 32 x 32 tiles.
 */
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/numeric.h>

#include "cpu_engine.h"
#include "fast_util.h"

typedef struct box_copy {
    int32_t rank;
    int64_t dims[CDNN_MAX_RANK];
    int64_t src_strides[CDNN_MAX_RANK], dst_strides[CDNN_MAX_RANK]; /* elements */
    int64_t src_offset, dst_offset;                                 /* elements */
    int64_t src_uid, dst_uid;
    int64_t rows; /* product of every dim but the last */
} box_copy_t;

typedef struct move_context {
    size_t elem; /* bytes of one element */
    int32_t count;
    box_copy_t copies[CDNN_NODE_MAX_INPUTS];
    int32_t threads;
    /* Pad: y is first filled with the value, as y's type holds it. */
    int pad;
    cdnn_tensor_view_t pad_y;
    unsigned char pad_value[8];
} move_context_t;

static int is_move(cdnn_op_t op)
{
    return op == CDNN_OP_TRANSPOSE || op == CDNN_OP_SLICE || op == CDNN_OP_CONCAT ||
           op == CDNN_OP_RESHAPE || op == CDNN_OP_PAD;
}

static cdnn_status_t move_applicable(const cdnn_graph_view_t *g)
{
    if (g->node_count != 1 || !is_move(g->nodes[0].op))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the graph is not one transpose, "
                        "slice, concat or reshape node");
    const cdnn_node_view_t *n = &g->nodes[0];
    for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
        if (n->inputs[p] >= 0 && g->tensors[n->inputs[p]].is_scalar)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "input '%s' is a pass-by-value "
                            "scalar", g->tensors[n->inputs[p]].name);
    const cdnn_tensor_view_t *x = &g->tensors[n->inputs[0]];
    const cdnn_tensor_view_t *y = &g->tensors[n->outputs[0]];
    if (n->op == CDNN_OP_RESHAPE && !(cpu_tensor_is_packed(x) && cpu_tensor_is_packed(y)))
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "reshape between layouts other than "
                        "packed row-major ('%s' to '%s') is not one strided copy",
                        x->name, y->name);
    return CDNN_STATUS_SUCCESS;
}

/* A box of dims, read from src with its strides, written to dst with its. */
static void box_init(box_copy_t *b, const cdnn_tensor_view_t *src,
                     const cdnn_tensor_view_t *dst, const int64_t *dims)
{
    memset(b, 0, sizeof *b);
    b->rank = dst->rank;
    memcpy(b->dims, dims, sizeof b->dims);
    memcpy(b->src_strides, src->strides, sizeof b->src_strides);
    memcpy(b->dst_strides, dst->strides, sizeof b->dst_strides);
    b->src_uid = src->uid;
    b->dst_uid = dst->uid;
}

static void box_finish(box_copy_t *b)
{
    b->rows = 1;
    for (int32_t d = 0; d + 1 < b->rank; d++)
        b->rows *= b->dims[d];
}

static void plan_copies(move_context_t *ctx, const cdnn_graph_view_t *g)
{
    const cdnn_node_view_t *n = &g->nodes[0];
    const cdnn_tensor_view_t *x = &g->tensors[n->inputs[0]];
    const cdnn_tensor_view_t *y = &g->tensors[n->outputs[0]];
    box_copy_t *b = &ctx->copies[0];
    ctx->count = 1;
    switch (n->op) {
    case CDNN_OP_TRANSPOSE:
        box_init(b, x, y, y->dims);
        for (int32_t i = 0; i < y->rank; i++)
            b->src_strides[i] = x->strides[n->attr.transpose.perm[i]];
        break;
    case CDNN_OP_SLICE:
        box_init(b, x, y, y->dims);
        for (int32_t d = 0; d < y->rank; d++) {
            b->src_strides[d] = x->strides[d] * n->attr.slice.step[d];
            b->src_offset += n->attr.slice.start[d] * x->strides[d];
        }
        break;
    case CDNN_OP_CONCAT: {
        int64_t at = 0;
        int32_t axis = n->attr.axis;
        ctx->count = 0;
        for (int p = 0; p < CDNN_NODE_MAX_INPUTS && n->inputs[p] >= 0; p++) {
            const cdnn_tensor_view_t *xp = &g->tensors[n->inputs[p]];
            b = &ctx->copies[ctx->count++];
            box_init(b, xp, y, xp->dims);
            b->dst_offset = at * y->strides[axis];
            at += xp->dims[axis];
        }
        break;
    }
    case CDNN_OP_PAD:
        box_init(b, x, y, x->dims);
        for (int32_t d = 0; d < y->rank; d++)
            b->dst_offset += n->attr.pad.pre[d] * y->strides[d];
        ctx->pad = 1;
        ctx->pad_y = *y;
        ctx->pad_y.name = NULL;
        cdnn_store_element(y->type, ctx->pad_value, n->attr.pad.value);
        break;
    default: /* reshape, both packed: one run of every element */
        box_init(b, x, y, y->dims);
        b->rank = 1;
        b->dims[0] = cpu_tensor_elements(y);
        b->src_strides[0] = b->dst_strides[0] = 1;
        break;
    }
    for (int32_t i = 0; i < ctx->count; i++)
        box_finish(&ctx->copies[i]);
}

static void move_destroy(void *context)
{
    free(context);
}

static cdnn_status_t move_create(const cdnn_device_view_t *device,
                                 const cdnn_graph_view_t *g,
                                 const cdnn_knob_value_t *knobs, int32_t knob_count,
                                 void **context)
{
    (void)knobs;
    (void)knob_count;
    cdnn_status_t st = move_applicable(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    move_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    const cdnn_tensor_view_t *y = &g->tensors[g->nodes[0].outputs[0]];
    ctx->elem = cdnn_data_type_size(y->type);
    plan_copies(ctx, g);
    /* a thread moves at least ~64K elements */
    ctx->threads = cpu_threads_for(device->cpu_threads, cpu_tensor_elements(y), 1 << 16);
    *context = ctx;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t move_workspace_size(void *context, size_t *bytes)
{
    (void)context;
    *bytes = 0;
    return CDNN_STATUS_SUCCESS;
}

/* n elements of `size` bytes from src (stride ss) to dst (stride ds). */
#define MOVE_RUN(T)                                                          \
    do {                                                                     \
        const T *s_ = (const T *)src;                                        \
        T *d_ = (T *)dst;                                                    \
        for (int64_t i = 0; i < n; i++)                                      \
            d_[i * ds] = s_[i * ss];                                         \
    } while (0)

static void move_run(size_t size, const char *src, int64_t ss, char *dst, int64_t ds,
                     int64_t n)
{
    if (ss == 1 && ds == 1) {
        memcpy(dst, src, (size_t)n * size);
        return;
    }
    switch (size) {
    case 1: MOVE_RUN(uint8_t); break;
    case 2: MOVE_RUN(uint16_t); break;
    case 4: MOVE_RUN(uint32_t); break;
    default: MOVE_RUN(uint64_t); break;
    }
}

typedef struct move_job {
    const box_copy_t *box;
    size_t elem;
    const char *src;
    char *dst;
} move_job_t;

/* Rows and columns of a tile: a transpose's source rows are far apart, so
 * a row of y read whole would touch a page of x per element; a tile of
 * MOVE_TILE rows reads MOVE_TILE neighbours of each page instead. */
#define MOVE_TILE 32

/* Element offsets of row r (its coordinates but the last). */
static void row_offsets(const box_copy_t *b, int64_t r, int64_t *src, int64_t *dst)
{
    *src = b->src_offset;
    *dst = b->dst_offset;
    for (int32_t d = b->rank - 2; d >= 0; d--) {
        int64_t i = r % b->dims[d];
        r /= b->dims[d];
        *src += i * b->src_strides[d];
        *dst += i * b->dst_strides[d];
    }
}

/* Rows [begin, end) of the box, each its last dim's run; where that run
 * is strided in the source, in tiles of rows next to each other in the
 * second-to-last dim. */
static void move_rows(void *arg, int64_t begin, int64_t end)
{
    const move_job_t *job = arg;
    const box_copy_t *b = job->box;
    int32_t last = b->rank - 1;
    int64_t n = b->dims[last], ss = b->src_strides[last], ds = b->dst_strides[last];
    int64_t size = (int64_t)job->elem;
    int tiled = ss != 1 && last >= 1;
    for (int64_t r = begin; r < end;) {
        int64_t rows = 1, ss2 = 0, ds2 = 0;
        if (tiled) {
            int64_t left_in_dim = b->dims[last - 1] - r % b->dims[last - 1];
            rows = left_in_dim < end - r ? left_in_dim : end - r;
            rows = rows < MOVE_TILE ? rows : MOVE_TILE;
            ss2 = b->src_strides[last - 1];
            ds2 = b->dst_strides[last - 1];
        }
        int64_t src, dst;
        row_offsets(b, r, &src, &dst);
        int64_t step = tiled ? MOVE_TILE : n;
        for (int64_t c = 0; c < n; c += step) {
            int64_t count = n - c < step ? n - c : step;
            for (int64_t k = 0; k < rows; k++)
                move_run(job->elem, job->src + (src + k * ss2 + c * ss) * size, ss,
                         job->dst + (dst + k * ds2 + c * ds) * size, ds, count);
        }
        r += rows;
    }
}

static void *pointer_of(const cdnn_exec_args_t *args, int64_t uid)
{
    for (int32_t i = 0; i < args->count; i++)
        if (args->uids[i] == uid)
            return args->ptrs[i];
    return NULL;
}

/* Every element of y set to the pad value (rows of its last dim). */
static void fill_rows(void *arg, int64_t begin, int64_t end)
{
    const move_job_t *job = arg;
    const box_copy_t *b = job->box;
    int32_t last = b->rank - 1;
    for (int64_t r = begin; r < end; r++) {
        int64_t src, dst;
        row_offsets(b, r, &src, &dst);
        for (int64_t i = 0; i < b->dims[last]; i++)
            memcpy(job->dst + (dst + i * b->dst_strides[last]) * (int64_t)job->elem,
                   job->src, job->elem);
    }
}

static cdnn_status_t fill_pad(const move_context_t *ctx, const cdnn_exec_args_t *args)
{
    box_copy_t whole;
    box_init(&whole, &ctx->pad_y, &ctx->pad_y, ctx->pad_y.dims);
    box_finish(&whole);
    move_job_t job = {&whole, ctx->elem, (const char *)ctx->pad_value,
                      pointer_of(args, ctx->pad_y.uid)};
    if (!job.dst)
        return sdk_fail(CDNN_STATUS_BAD_PARAM, "tensor uid %lld has no pointer in the "
                        "variant pack", (long long)ctx->pad_y.uid);
    cpu_parallel_for(ctx->threads, whole.rows, fill_rows, &job);
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t move_execute(void *context, const cdnn_exec_args_t *args)
{
    const move_context_t *ctx = context;
    cdnn_status_t st = ctx->pad ? fill_pad(ctx, args) : CDNN_STATUS_SUCCESS;
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    for (int32_t i = 0; i < ctx->count; i++) {
        const box_copy_t *b = &ctx->copies[i];
        move_job_t job = {b, ctx->elem, pointer_of(args, b->src_uid),
                          pointer_of(args, b->dst_uid)};
        if (!job.src || !job.dst)
            return sdk_fail(CDNN_STATUS_BAD_PARAM, "tensor uid %lld has no pointer in "
                            "the variant pack",
                            (long long)(job.src ? b->dst_uid : b->src_uid));
        cpu_parallel_for(ctx->threads, b->rows, move_rows, &job);
    }
    return CDNN_STATUS_SUCCESS;
}

const cpu_engine_t cpu_copy_engine = {
    .applicable = move_applicable,
    .create = move_create,
    .workspace_size = move_workspace_size,
    .execute = move_execute,
    .destroy = move_destroy,
};
