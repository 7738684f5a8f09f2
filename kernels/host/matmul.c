/*
 * matmul.c -- "host-matmul-v1": batched C = epilogue(A . B) on the GEMM
 * driver of gemm.h (one register tile per build, -DHK_MR, -DHK_NV).
 *
 * What is the matmul's own: the checks, batches (their base offsets from
 * the batch dims and strides), and packing panels of A and B from any
 * strides and types, with fast paths for the packed layouts.
 */
#include "gemm.h"

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

static const cdnn_host_matmul_args_t *args_of(const hk_gemm_t *g)
{
    return g->args;
}

static void batch_offsets(const hk_gemm_t *g, int64_t batch, hk_unit_t *u)
{
    const cdnn_host_matmul_args_t *a = args_of(g);
    int32_t br = a->batch_rank;
    u->a = hk_offset_of(batch, br, a->batch_dims, a->a.strides);
    u->b = hk_offset_of(batch, br, a->batch_dims, a->b.strides);
    u->c = hk_offset_of(batch, br, a->batch_dims, a->c.strides);
    u->bias = hk_offset_of(batch, br, a->batch_dims, a->bias.strides);
    u->residual = hk_offset_of(batch, br, a->batch_dims, a->residual.strides);
}

static void row_offsets(const hk_gemm_t *g, const hk_unit_t *u, int64_t i,
                        int64_t *c, int64_t *bias, int64_t *residual)
{
    const cdnn_host_matmul_args_t *a = args_of(g);
    int32_t br = a->batch_rank;
    *c = u->c + i * a->c.strides[br];
    *bias = u->bias + i * a->bias.strides[br];
    *residual = u->residual + i * a->residual.strides[br];
}

static void pack_a_panel(const hk_gemm_t *g, const hk_unit_t *u, int64_t i0,
                         int64_t rows, float *dst)
{
    const cdnn_host_tensor_t *t = &args_of(g)->a;
    int32_t br = args_of(g)->batch_rank;
    int64_t rs = t->strides[br], cs = t->strides[br + 1], k = g->k;
    int64_t row0 = u->a + i0 * rs;
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

static void pack_b_panel(const hk_gemm_t *g, const hk_unit_t *u, int64_t j0,
                         int64_t cols, float *dst)
{
    const cdnn_host_tensor_t *t = &args_of(g)->b;
    int32_t br = args_of(g)->batch_rank;
    int64_t rs = t->strides[br], cs = t->strides[br + 1], k = g->k;
    int64_t col0 = u->b + j0 * cs;
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

HK_EXPORT int32_t HK_ENTRY(const cdnn_host_matmul_args_t *args,
                           size_t *workspace_bytes)
{
    int32_t status = check_args(args, workspace_bytes != NULL);
    if (status != CDNN_HOST_OK)
        return status;
    int32_t br = args->batch_rank;
    hk_gemm_t g = {
        .batch_count = hk_count(br, args->batch_dims),
        .m = args->m, .n = args->n, .k = args->k,
        .activation = args->activation,
        .c = &args->c, .bias = &args->bias, .residual = &args->residual,
        .c_col = args->c.strides[br + 1],
        .bias_col = args->bias.strides[br + 1],
        .residual_col = args->residual.strides[br + 1],
        .parallel = &args->parallel,
        .args = args,
        .batch_offsets = batch_offsets,
        .row_offsets = row_offsets,
        .pack_a_panel = pack_a_panel,
        .pack_b_panel = pack_b_panel,
    };
    return hk_gemm_entry(&g, args->workspace, args->workspace_size,
                         workspace_bytes);
}
