/*
 * test_pointwise.c -- "cuda-pointwise-v1" against an f64 interpreter of the
 * same postfix programs.
 *
 * Cases: every unary and binary op on its own (inputs kept inside each
 * op's domain), at rank 2 with a transposed input; a fused chain over
 * broadcast inputs of three types at rank 3 into a transposed output; the
 * 16-byte path at rank 1 (f32 and f16, a count with a tail of 7) and the
 * same data one element off alignment, which must take the scalar path.
 * cdnn_cuda_pointwise_chain: each program it specialises (pw_chains).
 * Tolerance: eps(out_type) * |ref| for the final rounding plus 2^-18 *
 * (1 + |ref|) for f32 arithmetic and CUDA's math functions (a few ulps,
 * compounded along a chain).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cuda_kernel.h"
#include "tests.h"

static double pw_unary(int op, double x) {
    switch (op) {
    case CDNN_CUDA_PW_NEG: return -x;
    case CDNN_CUDA_PW_ABS: return fabs(x);
    case CDNN_CUDA_PW_EXP: return exp(x);
    case CDNN_CUDA_PW_LOG: return log(x);
    case CDNN_CUDA_PW_SQRT: return sqrt(x);
    case CDNN_CUDA_PW_RSQRT: return 1 / sqrt(x);
    case CDNN_CUDA_PW_RECIPROCAL: return 1 / x;
    case CDNN_CUDA_PW_SIGMOID: return 1 / (1 + exp(-x));
    case CDNN_CUDA_PW_RELU: return x > 0 ? x : 0;
    case CDNN_CUDA_PW_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case CDNN_CUDA_PW_GELU_TANH:
        return 0.5 * x * (1 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case CDNN_CUDA_PW_SILU: return x / (1 + exp(-x));
    default: return tanh(x);
    }
}

static double pw_binary(int op, double a, double b) {
    switch (op) {
    case CDNN_CUDA_PW_ADD: return a + b;
    case CDNN_CUDA_PW_SUB: return a - b;
    case CDNN_CUDA_PW_MUL: return a * b;
    case CDNN_CUDA_PW_DIV: return a / b;
    case CDNN_CUDA_PW_MAX: return a > b ? a : b;
    case CDNN_CUDA_PW_MIN: return a < b ? a : b;
    default: return pow(a, b);
    }
}

static double pw_eval(const cdnn_cuda_pointwise_params_t *p, const double *inputs) {
    double stack[CDNN_CUDA_POINTWISE_MAX_STACK];
    int depth = 0;
    for (int pc = 0; pc < p->program_length; ++pc) {
        const int op = p->program[pc], arg = p->operand[pc];
        if (op == CDNN_CUDA_PW_PUSH_INPUT)
            stack[depth++] = inputs[arg];
        else if (op == CDNN_CUDA_PW_PUSH_CONST)
            stack[depth++] = p->constants[arg];
        else if (op < CDNN_CUDA_PW_ADD)
            stack[depth - 1] = pw_unary(op, stack[depth - 1]);
        else {
            stack[depth - 2] = pw_binary(op, stack[depth - 2], stack[depth - 1]);
            --depth;
        }
    }
    return stack[0];
}

typedef struct pw_case {
    cdnn_cuda_pointwise_params_t p;
    tensor_t in[CDNN_CUDA_POINTWISE_MAX_INPUTS], out;
    int64_t in_offset; /* elements the device pointers are moved by (misalignment) */
} pw_case_t;

static void pw_append(cdnn_cuda_pointwise_params_t *p, int op, int operand) {
    p->operand[p->program_length] = (uint8_t)operand;
    p->program[p->program_length++] = (uint8_t)op;
}

/* Row-major strides of p->shape into strides (0 along broadcast dims, whose
 * bit is set in broadcast_mask); returns the span. */
static int64_t pw_strides(const cdnn_cuda_pointwise_params_t *p, unsigned broadcast_mask,
                          int64_t *strides) {
    int64_t stride = 1, span = 1;
    for (int d = p->rank - 1; d >= 0; --d) {
        const int broadcast = (broadcast_mask >> d) & 1;
        strides[d] = broadcast ? 0 : stride;
        if (!broadcast) {
            span += (p->shape[d] - 1) * stride;
            stride *= p->shape[d];
        }
    }
    return span;
}

/* Inputs and output on the device for a case whose shape, program and
 * layout (input broadcasts, a transposed input 0 or output) are set. */
static void pw_materialise(const gpu_t *gpu, rng_t *rng, pw_case_t *c, const unsigned *masks,
                           double lo, double hi) {
    cdnn_cuda_pointwise_params_t *p = &c->p;
    p->count = 1;
    for (int d = 0; d < p->rank; ++d)
        p->count *= p->shape[d];
    for (int t = 0; t < p->input_count; ++t) {
        const int64_t span = pw_strides(p, masks[t], p->in_strides[t]);
        c->in[t] = tensor_random(gpu, rng, p->in_types[t], span + c->in_offset, lo, hi);
        p->in[t] = (const void *)(uintptr_t)(c->in[t].device + (uint64_t)(c->in_offset * (int64_t)elem_size(p->in_types[t])));
    }
    const int64_t span = pw_strides(p, 0, p->out_strides);
    c->out = tensor_poisoned(gpu, p->out_type, span + c->in_offset);
    p->out = (void *)(uintptr_t)(c->out.device + (uint64_t)(c->in_offset * (int64_t)elem_size(p->out_type)));
}

/* Column-major strides for an operand that broadcasts nowhere: the
 * transposed layout of the same span. */
static void pw_column_major(const cdnn_cuda_pointwise_params_t *p, int64_t *strides) {
    int64_t stride = 1;
    for (int d = 0; d < p->rank; ++d) {
        strides[d] = stride;
        stride *= p->shape[d];
    }
}

/* Runs c on a grid of ceil(count / per_block) blocks (at least 1, at most
 * the handler's 65535 * 16) and checks it. */
static void pw_run_grid(test_state_t *state, sdk_cu_function fn, pw_case_t *c, int64_t per_block,
                        check_t *check) {
    const gpu_t *gpu = state->gpu;
    cdnn_cuda_pointwise_params_t *p = &c->p;
    int64_t blocks = (p->count + per_block - 1) / per_block;
    blocks = blocks < 1 ? 1 : blocks > 65535 * 16 ? 65535 * 16 : blocks;
    gpu_launch(gpu, fn, (unsigned)blocks, 1, 1, 256, 0, p);
    gpu_sync(gpu);
    tensor_fetch(gpu, &c->out);
    const double eps = elem_epsilon(p->out_type);
    for (int64_t i = 0; i < p->count; ++i) {
        int64_t rest = i, out_at = c->in_offset, in_at[CDNN_CUDA_POINTWISE_MAX_INPUTS] = {0};
        for (int d = p->rank - 1; d >= 0; --d) {
            const int64_t coord = rest % p->shape[d];
            rest /= p->shape[d];
            out_at += coord * p->out_strides[d];
            for (int t = 0; t < p->input_count; ++t)
                in_at[t] += coord * p->in_strides[t][d];
        }
        double inputs[CDNN_CUDA_POINTWISE_MAX_INPUTS];
        for (int t = 0; t < p->input_count; ++t)
            inputs[t] = tensor_get(&c->in[t], in_at[t] + c->in_offset);
        const double ref = pw_eval(p, inputs);
        check_element(check, &c->out, out_at, ref, eps * fabs(ref) + ldexp(1 + fabs(ref), -18));
    }
    check_untouched(check, &c->out);
    for (int t = 0; t < p->input_count; ++t)
        tensor_free(gpu, &c->in[t]);
    tensor_free(gpu, &c->out);
}

static void pw_run(test_state_t *state, sdk_cu_function fn, pw_case_t *c, check_t *check) {
    pw_run_grid(state, fn, c, 1024, check);
}

/* Each op alone: out = op(in0 (+ 2 where the op needs a positive input))
 * or out = (in0 op (in1 + 2)), rank 2, input 0 transposed. */
static int pw_single_ops(test_state_t *state, sdk_cu_function fn, check_t *check) {
    int cases = 0;
    for (int op = CDNN_CUDA_PW_NEG; op < CDNN_CUDA_PW_OPCODE_END; ++op) {
        pw_case_t c;
        memset(&c, 0, sizeof c);
        cdnn_cuda_pointwise_params_t *p = &c.p;
        p->rank = 2, p->shape[0] = 37, p->shape[1] = 41;
        const int binary = op >= CDNN_CUDA_PW_ADD;
        const int positive = op == CDNN_CUDA_PW_LOG || op == CDNN_CUDA_PW_SQRT ||
                             op == CDNN_CUDA_PW_RSQRT || op == CDNN_CUDA_PW_RECIPROCAL ||
                             op == CDNN_CUDA_PW_POW || op == CDNN_CUDA_PW_DIV;
        p->input_count = binary ? 2 : 1;
        p->out_type = (int32_t)(1 + op % 3);
        p->in_types[0] = (int32_t)(1 + (op + 1) % 3), p->in_types[1] = CDNN_CUDA_F32;
        p->constants[0] = 2.0f;
        pw_append(p, CDNN_CUDA_PW_PUSH_INPUT, 0);
        if (positive && !binary)
            pw_append(p, CDNN_CUDA_PW_PUSH_CONST, 0), pw_append(p, CDNN_CUDA_PW_ADD, 0);
        if (binary) {
            pw_append(p, CDNN_CUDA_PW_PUSH_INPUT, 1);
            pw_append(p, CDNN_CUDA_PW_PUSH_CONST, 0);
            pw_append(p, CDNN_CUDA_PW_ADD, 0);
        }
        pw_append(p, op, 0);
        const unsigned masks[2] = {0, 0};
        pw_materialise(state->gpu, &state->rng, &c, masks, positive ? 0.0 : -1.0, 1.0);
        pw_column_major(p, p->in_strides[0]);
        pw_run(state, fn, &c, check);
        ++cases;
    }
    return cases;
}

/* gelu(in0 * in1 + in2) - 0.5 * in0: in1 broadcast over dim 0, in2 a
 * scalar, three input types, the output transposed. */
static void pw_chain(test_state_t *state, sdk_cu_function fn, check_t *check) {
    pw_case_t c;
    memset(&c, 0, sizeof c);
    cdnn_cuda_pointwise_params_t *p = &c.p;
    p->rank = 3, p->shape[0] = 3, p->shape[1] = 5, p->shape[2] = 67;
    p->input_count = 3, p->out_type = CDNN_CUDA_BF16;
    p->in_types[0] = CDNN_CUDA_F32, p->in_types[1] = CDNN_CUDA_BF16, p->in_types[2] = CDNN_CUDA_F16;
    p->constants[1] = 0.5f;
    const int program[][2] = {{CDNN_CUDA_PW_PUSH_INPUT, 0}, {CDNN_CUDA_PW_PUSH_INPUT, 1},
                              {CDNN_CUDA_PW_MUL, 0},        {CDNN_CUDA_PW_PUSH_INPUT, 2},
                              {CDNN_CUDA_PW_ADD, 0},        {CDNN_CUDA_PW_GELU, 0},
                              {CDNN_CUDA_PW_PUSH_CONST, 1}, {CDNN_CUDA_PW_PUSH_INPUT, 0},
                              {CDNN_CUDA_PW_MUL, 0},        {CDNN_CUDA_PW_SUB, 0}};
    for (size_t i = 0; i < sizeof program / sizeof program[0]; ++i)
        pw_append(p, program[i][0], program[i][1]);
    const unsigned masks[3] = {0, 1u << 0, 7u};
    pw_materialise(state->gpu, &state->rng, &c, masks, -2.0, 2.0);
    pw_column_major(p, p->out_strides);
    pw_run(state, fn, &c, check);
}

/* Rank 1, packed: silu(in0) * in1 + in2 over count elements, aligned (the
 * 16-byte path and its tail) or one element off (the scalar path). */
static void pw_packed(test_state_t *state, sdk_cu_function fn, int32_t type, int64_t count,
                      int64_t offset, check_t *check) {
    pw_case_t c;
    memset(&c, 0, sizeof c);
    cdnn_cuda_pointwise_params_t *p = &c.p;
    p->rank = 1, p->shape[0] = count, p->input_count = 3, p->out_type = type;
    p->in_types[0] = type, p->in_types[1] = type, p->in_types[2] = CDNN_CUDA_F32;
    c.in_offset = offset;
    const int program[][2] = {{CDNN_CUDA_PW_PUSH_INPUT, 0}, {CDNN_CUDA_PW_SILU, 0},
                              {CDNN_CUDA_PW_PUSH_INPUT, 1}, {CDNN_CUDA_PW_MUL, 0},
                              {CDNN_CUDA_PW_PUSH_INPUT, 2}, {CDNN_CUDA_PW_ADD, 0}};
    for (size_t i = 0; i < sizeof program / sizeof program[0]; ++i)
        pw_append(p, program[i][0], program[i][1]);
    const unsigned masks[3] = {0, 0, 1u}; /* in2 a scalar */
    pw_materialise(state->gpu, &state->rng, &c, masks, -3.0, 3.0);
    pw_run(state, fn, &c, check);
}

/* cdnn_cuda_pointwise_chain: every program it specialises, act(in0) and
 * [act](in0 bin in1), each on one layout of four: packed rank 1 with a
 * tail of 5 (the 16-byte path), in1 a scalar, one element off alignment
 * (the any-stride path), or rank 2 with in0 transposed; types mixed. */
static int pw_chains(test_state_t *state, sdk_cu_function fn, check_t *check) {
    static const int binary[] = {0, CDNN_CUDA_PW_ADD, CDNN_CUDA_PW_SUB, CDNN_CUDA_PW_MUL,
                                 CDNN_CUDA_PW_MAX, CDNN_CUDA_PW_MIN};
    static const int activation[] = {0, CDNN_CUDA_PW_RELU, CDNN_CUDA_PW_GELU,
                                     CDNN_CUDA_PW_GELU_TANH, CDNN_CUDA_PW_SILU,
                                     CDNN_CUDA_PW_SIGMOID, CDNN_CUDA_PW_TANH};
    int cases = 0;
    for (int b = 0; b < 6; ++b)
        for (int a = 0; a < 7; ++a) {
            if (!binary[b] && !activation[a])
                continue;
            const int layout = cases % 4;
            pw_case_t c;
            memset(&c, 0, sizeof c);
            cdnn_cuda_pointwise_params_t *p = &c.p;
            if (layout == 3)
                p->rank = 2, p->shape[0] = 61, p->shape[1] = 67;
            else
                p->rank = 1, p->shape[0] = 3 * 4096 + 5;
            c.in_offset = layout == 2;
            p->input_count = binary[b] ? 2 : 1;
            p->out_type = (int32_t)(1 + cases % 3);
            p->in_types[0] = (int32_t)(1 + (cases + 1) % 3);
            p->in_types[1] = (int32_t)(1 + (cases / 3) % 3);
            pw_append(p, CDNN_CUDA_PW_PUSH_INPUT, 0);
            if (binary[b])
                pw_append(p, CDNN_CUDA_PW_PUSH_INPUT, 1), pw_append(p, binary[b], 0);
            if (activation[a])
                pw_append(p, activation[a], 0);
            const unsigned masks[2] = {0, layout == 1 ? 1u : 0u};
            pw_materialise(state->gpu, &state->rng, &c, masks, -3.0, 3.0);
            if (layout == 3)
                pw_column_major(p, p->in_strides[0]);
            pw_run_grid(state, fn, &c, 4096, check);
            ++cases;
        }
    return cases;
}

void test_pointwise(test_state_t *state, sdk_cu_module module) {
    sdk_cu_function fn = gpu_function(state->gpu, module, "cdnn_cuda_pointwise");
    check_t check = {0};
    int cases = pw_single_ops(state, fn, &check);
    pw_chain(state, fn, &check);
    pw_packed(state, fn, CDNN_CUDA_F32, (1 << 20) + 7, 0, &check);
    pw_packed(state, fn, CDNN_CUDA_F16, 100007, 0, &check);
    pw_packed(state, fn, CDNN_CUDA_BF16, 100007, 1, &check);
    test_report(state, "cdnn_cuda_pointwise", cases + 4, &check);

    sdk_cu_function chain = gpu_function(state->gpu, module, "cdnn_cuda_pointwise_chain");
    check_t chain_check = {0};
    cases = pw_chains(state, chain, &chain_check);
    test_report(state, "cdnn_cuda_pointwise_chain", cases, &chain_check);
}
