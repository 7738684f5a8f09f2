/*
 * marked_matmul.c -- a "host-matmul-v1" kernel whose every output is the
 * true result plus MARK, so that a test can tell from the output alone
 * which build of it ran: a plan saved against a pack holding the MARK=1
 * build must keep running that build after the pack is replaced by the
 * MARK=2 one (docs/CONTRACT.md rule 2).
 *
 * Naive and f32 only: what it proves is which code ran, not speed.  Built
 * like the project's host kernels: no libc, one exported symbol.
 */
#include <host_kernel.h>

#ifndef MARK
#error "build with -DMARK=<value added to every output>"
#endif

/* Element (b, i, j) of t, with b the flattened batch index over dims. */
static float *at(const cdnn_host_tensor_t *t, const cdnn_host_matmul_args_t *a, int64_t b,
                 int64_t i, int64_t j)
{
    int64_t offset = i * t->strides[a->batch_rank] + j * t->strides[a->batch_rank + 1];
    for (int32_t d = a->batch_rank - 1; d >= 0; d--) {
        offset += b % a->batch_dims[d] * t->strides[d];
        b /= a->batch_dims[d];
    }
    return (float *)t->data + offset;
}

static int all_f32(const cdnn_host_matmul_args_t *a)
{
    return a->a.type == CDNN_HOST_F32 && a->b.type == CDNN_HOST_F32 &&
           a->c.type == CDNN_HOST_F32 && (!a->bias.data || a->bias.type == CDNN_HOST_F32) &&
           (!a->residual.data || a->residual.type == CDNN_HOST_F32);
}

static float relu(float x)
{
    return x > 0 ? x : 0;
}

__attribute__((visibility("default"))) int32_t
cdnn_host_marked_matmul(const cdnn_host_matmul_args_t *a, size_t *workspace_bytes)
{
    if (a->batch_rank < 0 || a->batch_rank > CDNN_HOST_MAX_BATCH_RANK ||
        (a->activation != CDNN_HOST_ACT_NONE && a->activation != CDNN_HOST_ACT_RELU))
        return CDNN_HOST_BAD_ARGS;
    if (workspace_bytes) {
        *workspace_bytes = 0;
        return a->a.type == CDNN_HOST_F32 ? CDNN_HOST_OK : CDNN_HOST_BAD_TYPE;
    }
    if (!all_f32(a))
        return CDNN_HOST_BAD_TYPE;
    int64_t batches = 1;
    for (int32_t d = 0; d < a->batch_rank; d++)
        batches *= a->batch_dims[d];
    for (int64_t b = 0; b < batches; b++)
        for (int64_t i = 0; i < a->m; i++)
            for (int64_t j = 0; j < a->n; j++) {
                float acc = 0;
                for (int64_t p = 0; p < a->k; p++)
                    acc += *at(&a->a, a, b, i, p) * *at(&a->b, a, b, p, j);
                if (a->bias.data)
                    acc += *at(&a->bias, a, b, i, j);
                if (a->activation == CDNN_HOST_ACT_RELU)
                    acc = relu(acc);
                if (a->residual.data)
                    acc += *at(&a->residual, a, b, i, j);
                *at(&a->c, a, b, i, j) = acc + (float)MARK;
            }
    return CDNN_HOST_OK;
}
