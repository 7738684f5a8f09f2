/*
 * pointwise.c -- "host-pointwise-v1": output = program(inputs...),
 * elementwise, with broadcasting by strides.
 *
 * Built once per block size, -DHK_BLOCK=<elements>.  The tensor is walked
 * as rows of its innermost dim (after merging the dims every tensor has
 * contiguous, and dropping dims of 1) in blocks of HK_BLOCK: each block's
 * inputs are widened to f32 into the workspace, then each instruction of
 * the program runs over the whole block with vector code, then the top of
 * the stack is rounded into the output.  Interpreting per block rather
 * than per element is what makes a program of many ops cost about what
 * the same ops written by hand would: the dispatch is paid once per
 * HK_BLOCK elements.  A larger block pays it less often; a smaller one
 * keeps the block's values in L1.
 */
#include "common.h"
#include "convert.h"
#include "vmath.h"

#ifndef HK_BLOCK
#error "build pointwise.c with -DHK_BLOCK=<elements per block>"
#endif

#if HK_BLOCK % 16 != 0
#error "HK_BLOCK must be a multiple of every level's vector length"
#endif

#define TENSORS (CDNN_HOST_PW_MAX_INPUTS + 1) /* the inputs, then the output */
/* Elements worth a task of their own. */
#define MIN_TASK_ELEMENTS 32768

/* The iteration space after merging dims: dims[rank-1] is the inner run. */
typedef struct pw_space {
    int32_t rank;
    int64_t dims[CDNN_HOST_MAX_RANK];
    int64_t strides[TENSORS][CDNN_HOST_MAX_RANK];
} pw_space_t;

typedef struct pw_job {
    const cdnn_host_pointwise_args_t *args;
    pw_space_t space;
    int64_t blocks_per_row, blocks, tasks;
    uint32_t used_inputs; /* bit i: the program pushes input i */
    char *workspace;
} pw_job_t;

/* Floats of one task's workspace slice: a block per input and per stack
 * slot. */
#define TASK_FLOATS ((CDNN_HOST_PW_MAX_INPUTS + CDNN_HOST_PW_MAX_STACK) * HK_BLOCK)
#define TASK_BYTES (TASK_FLOATS * sizeof(float))

/* ------------------------------------------------------------------------
 * Checks
 * ------------------------------------------------------------------------ */

static int is_unary(int32_t op)
{
    return op >= CDNN_HOST_PW_NEG && op <= CDNN_HOST_PW_TANH;
}

static int is_binary(int32_t op)
{
    return op >= CDNN_HOST_PW_ADD && op <= CDNN_HOST_PW_MIN;
}

static int32_t check_program(const cdnn_host_pointwise_args_t *a)
{
    if (a->instr_count < 1 || a->instr_count > CDNN_HOST_PW_MAX_PROGRAM)
        return CDNN_HOST_BAD_PROGRAM;
    int depth = 0;
    for (int32_t i = 0; i < a->instr_count; i++) {
        const cdnn_host_pw_instr_t *in = &a->program[i];
        if (in->op == CDNN_HOST_PW_PUSH_INPUT &&
            (in->input < 0 || in->input >= a->input_count))
            return CDNN_HOST_BAD_PROGRAM;
        if (in->op == CDNN_HOST_PW_PUSH_INPUT ||
            in->op == CDNN_HOST_PW_PUSH_CONST)
            depth++;
        else if (is_binary(in->op))
            depth--;
        else if (!is_unary(in->op))
            return CDNN_HOST_BAD_PROGRAM;
        if (depth < 1 || depth > CDNN_HOST_PW_MAX_STACK)
            return CDNN_HOST_BAD_PROGRAM;
    }
    return depth == 1 ? CDNN_HOST_OK : CDNN_HOST_BAD_PROGRAM;
}

static int32_t check_args(const cdnn_host_pointwise_args_t *a, int query)
{
    if (a->rank < 0 || a->rank > CDNN_HOST_MAX_RANK || a->input_count < 0 ||
        a->input_count > CDNN_HOST_PW_MAX_INPUTS ||
        hk_count(a->rank, a->dims) < 0)
        return CDNN_HOST_BAD_ARGS;
    if (!hk_type_ok(a->output.type))
        return CDNN_HOST_BAD_TYPE;
    for (int32_t i = 0; i < a->input_count; i++)
        if (!hk_type_ok(a->inputs[i].type))
            return CDNN_HOST_BAD_TYPE;
    int32_t status = check_program(a);
    if (status != CDNN_HOST_OK || query || hk_count(a->rank, a->dims) == 0)
        return status;
    if (!a->output.data)
        return CDNN_HOST_BAD_ARGS;
    for (int32_t i = 0; i < a->input_count; i++)
        if (!a->inputs[i].data)
            return CDNN_HOST_BAD_ARGS;
    return CDNN_HOST_OK;
}

/* ------------------------------------------------------------------------
 * The iteration space
 * ------------------------------------------------------------------------ */

static const cdnn_host_tensor_t *tensor_of(const cdnn_host_pointwise_args_t *a,
                                           int t)
{
    return t < a->input_count ? &a->inputs[t] : &a->output;
}

/* Slot t of the space: the inputs first, the output last. */
static int output_slot(const cdnn_host_pointwise_args_t *a)
{
    return a->input_count;
}

/* Dims a and b (b inside a) walk as one when every tensor's stride of a
 * is its stride of b times b's extent. */
static int merges(const cdnn_host_pointwise_args_t *a, const pw_space_t *s,
                  int32_t d)
{
    int32_t r = s->rank - 1;
    for (int t = 0; t <= output_slot(a); t++)
        if (s->strides[t][r] != tensor_of(a, t)->strides[d] * a->dims[d])
            return 0;
    return 1;
}

/* The args' dims without the 1s, merged where every tensor allows. */
static void build_space(const cdnn_host_pointwise_args_t *a, pw_space_t *s)
{
    s->rank = 0;
    for (int32_t d = 0; d < a->rank; d++) {
        if (a->dims[d] == 1)
            continue; /* its index is always 0 */
        int merge = s->rank > 0 && merges(a, s, d);
        int32_t r = merge ? s->rank - 1 : s->rank++;
        s->dims[r] = merge ? s->dims[r] * a->dims[d] : a->dims[d];
        for (int t = 0; t <= output_slot(a); t++)
            s->strides[t][r] = tensor_of(a, t)->strides[d];
    }
    if (s->rank == 0) { /* one element */
        s->rank = 1;
        s->dims[0] = 1;
        for (int t = 0; t <= output_slot(a); t++)
            s->strides[t][0] = 0;
    }
}

/* ------------------------------------------------------------------------
 * The program, over one block
 * ------------------------------------------------------------------------ */

#define HK_UNARY(fn)                                                          \
    for (int64_t i = 0; i < n; i += HK_VL)                                    \
        vstore(y + i, fn(vload(x + i)));                                      \
    break

static vf vrsqrt_exact(vf x) { return vdiv(vset1(1.0f), vsqrt(x)); }
static vf vreciprocal(vf x) { return vdiv(vset1(1.0f), x); }

static void run_unary(int32_t op, const float *x, float *y, int64_t n)
{
    switch (op) {
    case CDNN_HOST_PW_NEG: HK_UNARY(vneg);
    case CDNN_HOST_PW_ABS: HK_UNARY(vabs);
    case CDNN_HOST_PW_EXP: HK_UNARY(vexp);
    case CDNN_HOST_PW_LOG: HK_UNARY(vlog);
    case CDNN_HOST_PW_SQRT: HK_UNARY(vsqrt);
    case CDNN_HOST_PW_RSQRT: HK_UNARY(vrsqrt_exact);
    case CDNN_HOST_PW_RECIPROCAL: HK_UNARY(vreciprocal);
    case CDNN_HOST_PW_RELU: HK_UNARY(vrelu);
    case CDNN_HOST_PW_GELU: HK_UNARY(vgelu);
    case CDNN_HOST_PW_GELU_TANH: HK_UNARY(vgelu_tanh);
    case CDNN_HOST_PW_SILU: HK_UNARY(vsilu);
    case CDNN_HOST_PW_SIGMOID: HK_UNARY(vsigmoid);
    default: HK_UNARY(vtanh);
    }
}
#undef HK_UNARY

#define HK_BINARY(fn)                                                         \
    for (int64_t i = 0; i < n; i += HK_VL)                                    \
        vstore(z + i, fn(vload(x + i), vload(y + i)));                        \
    break

static void run_binary(int32_t op, const float *x, const float *y, float *z,
                       int64_t n)
{
    switch (op) {
    case CDNN_HOST_PW_ADD: HK_BINARY(vadd);
    case CDNN_HOST_PW_SUB: HK_BINARY(vsub);
    case CDNN_HOST_PW_MUL: HK_BINARY(vmul);
    case CDNN_HOST_PW_DIV: HK_BINARY(vdiv);
    case CDNN_HOST_PW_MAX: HK_BINARY(vmax_num);
    default: HK_BINARY(vmin_num);
    }
}
#undef HK_BINARY

static void fill(float *y, float value, int64_t n)
{
    vf v = vset1(value);
    for (int64_t i = 0; i < n; i += HK_VL)
        vstore(y + i, v);
}

/* Runs the program over n floats (a multiple of HK_VL) of each input
 * block; returns the block holding the result. */
static const float *run_program(const cdnn_host_pointwise_args_t *a,
                                float *const *inputs, float *const *scratch,
                                int64_t n)
{
    const float *slot[CDNN_HOST_PW_MAX_STACK];
    int top = -1;
    for (int32_t i = 0; i < a->instr_count; i++) {
        const cdnn_host_pw_instr_t *in = &a->program[i];
        if (in->op == CDNN_HOST_PW_PUSH_INPUT) {
            slot[++top] = inputs[in->input];
        } else if (in->op == CDNN_HOST_PW_PUSH_CONST) {
            fill(scratch[++top], in->constant, n);
            slot[top] = scratch[top];
        } else if (is_unary(in->op)) {
            run_unary(in->op, slot[top], scratch[top], n);
            slot[top] = scratch[top];
        } else {
            top--;
            run_binary(in->op, slot[top], slot[top + 1], scratch[top], n);
            slot[top] = scratch[top];
        }
    }
    return slot[0];
}

/* ------------------------------------------------------------------------
 * Driver
 * ------------------------------------------------------------------------ */

/* Element offset of block `block`'s first element in tensor t. */
static int64_t block_offset(const pw_job_t *job, int t, int64_t block)
{
    const pw_space_t *s = &job->space;
    int32_t inner = s->rank - 1;
    int64_t row = block / job->blocks_per_row;
    int64_t col = block % job->blocks_per_row * HK_BLOCK;
    return hk_offset_of(row, inner, s->dims, s->strides[t]) +
           col * s->strides[t][inner];
}

static void run_block(const pw_job_t *job, int64_t block, float *const *in,
                      float *const *scratch)
{
    const cdnn_host_pointwise_args_t *a = job->args;
    const pw_space_t *s = &job->space;
    int32_t inner = s->rank - 1;
    int64_t len = hk_min(HK_BLOCK, s->dims[inner] -
                                       block % job->blocks_per_row * HK_BLOCK);
    int64_t padded = hk_round_up(len, HK_VL);
    for (int t = 0; t < a->input_count; t++) {
        if (!(job->used_inputs & (1u << t)))
            continue;
        hk_load_run(a->inputs[t].type,
                    hk_at(a->inputs[t].data, a->inputs[t].type,
                          block_offset(job, t, block)),
                    s->strides[t][inner], len, in[t]);
        for (int64_t i = len; i < padded; i++)
            in[t][i] = 0.0f; /* the vector tail computes on zeros */
    }
    const float *result = run_program(a, in, scratch, padded);
    int out = output_slot(a);
    hk_store_run(a->output.type,
                 hk_at_mut(a->output.data, a->output.type,
                           block_offset(job, out, block)),
                 s->strides[out][inner], len, result);
}

static void run_task(void *arg, int64_t task)
{
    const pw_job_t *job = arg;
    float *base = hk_align_up(job->workspace + (size_t)task * (TASK_BYTES + HK_ALIGN));
    float *in[CDNN_HOST_PW_MAX_INPUTS], *scratch[CDNN_HOST_PW_MAX_STACK];
    for (int i = 0; i < CDNN_HOST_PW_MAX_INPUTS; i++)
        in[i] = base + i * HK_BLOCK;
    for (int i = 0; i < CDNN_HOST_PW_MAX_STACK; i++)
        scratch[i] = base + (CDNN_HOST_PW_MAX_INPUTS + i) * HK_BLOCK;
    int64_t first = task * job->blocks / job->tasks;
    int64_t last = (task + 1) * job->blocks / job->tasks;
    for (int64_t b = first; b < last; b++)
        run_block(job, b, in, scratch);
}

static void plan(pw_job_t *job)
{
    const cdnn_host_pointwise_args_t *a = job->args;
    build_space(a, &job->space);
    int64_t elements = hk_count(a->rank, a->dims);
    int64_t inner = job->space.dims[job->space.rank - 1];
    job->blocks_per_row = hk_max(hk_ceil_div(inner, HK_BLOCK), 1);
    job->blocks = elements == 0 ? 0 : elements / inner * job->blocks_per_row;
    job->tasks = hk_min(hk_min(hk_thread_budget(&a->parallel),
                               hk_ceil_div(elements, MIN_TASK_ELEMENTS)),
                        job->blocks);
    job->used_inputs = 0;
    for (int32_t i = 0; i < a->instr_count; i++)
        if (a->program[i].op == CDNN_HOST_PW_PUSH_INPUT)
            job->used_inputs |= 1u << a->program[i].input;
}

HK_EXPORT int32_t HK_ENTRY(const cdnn_host_pointwise_args_t *args,
                           size_t *workspace_bytes)
{
    int32_t status = check_args(args, workspace_bytes != NULL);
    if (status != CDNN_HOST_OK)
        return status;
    pw_job_t job = {.args = args};
    plan(&job);
    size_t needed = job.tasks ? (size_t)job.tasks * (TASK_BYTES + HK_ALIGN) + HK_ALIGN : 0;
    if (workspace_bytes) {
        *workspace_bytes = needed;
        return CDNN_HOST_OK;
    }
    if (needed > 0 && (!args->workspace || args->workspace_size < needed))
        return CDNN_HOST_WORKSPACE_TOO_SMALL;
    job.workspace = hk_align_up(args->workspace);
    hk_run_tasks(&args->parallel, job.tasks, run_task, &job);
    return CDNN_HOST_OK;
}
