#include "row_layout.h"

#include <string.h>

#include <cdnn_sdk/error.h>

cdnn_status_t row_layout_of(const cdnn_tensor_view_t *x, const uint8_t *across,
                            row_layout_t *r)
{
    int columns_ended = 0;
    memset(r, 0, sizeof *r);
    r->first = r->last = -1;
    r->cols = 1;
    for (int32_t d = 0; d < x->rank; d++) {
        if (x->dims[d] == 1)
            continue;
        if (!across[d]) {
            columns_ended = r->first >= 0;
            r->outer_axes[r->outer_rank] = d;
            r->outer_dims[r->outer_rank++] = x->dims[d];
            continue;
        }
        if (columns_ended)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is normalised or reduced "
                            "over dims that are not consecutive; the row kernels take "
                            "one run of them", x->name);
        if (r->first < 0)
            r->first = d;
        r->last = d;
        r->cols *= x->dims[d];
    }
    return CDNN_STATUS_SUCCESS;
}

/* t's one stride over the column dims, which it has whole. */
static cdnn_status_t fold_columns(const row_layout_t *r, const cdnn_tensor_view_t *t,
                                  int64_t *stride)
{
    int64_t inner = 0;
    for (int32_t d = r->last; d >= r->first; d--) {
        if (t->dims[d] == 1)
            continue;
        if (!inner)
            *stride = t->strides[d];
        else if (t->strides[d] != *stride * inner)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is not laid out so that its "
                            "normalised or reduced dims fold into one stride", t->name);
        inner = inner ? inner * t->dims[d] : t->dims[d];
    }
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t row_strides(const row_layout_t *r, const cdnn_tensor_view_t *t,
                          int64_t *strides)
{
    int64_t cols = 1;
    for (int32_t i = 0; i < r->outer_rank; i++) {
        int32_t d = r->outer_axes[i];
        strides[i] = t->dims[d] == 1 ? 0 : t->strides[d];
    }
    strides[r->outer_rank] = 0;
    for (int32_t d = r->first; d >= 0 && d <= r->last; d++)
        cols *= t->dims[d];
    if (cols == 1)
        return CDNN_STATUS_SUCCESS;
    if (cols != r->cols)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' broadcasts over part of the "
                        "normalised or reduced dims", t->name);
    return fold_columns(r, t, &strides[r->outer_rank]);
}

int64_t row_count(const row_layout_t *r)
{
    int64_t rows = 1;
    for (int32_t i = 0; i < r->outer_rank; i++)
        rows *= r->outer_dims[i];
    return rows;
}

cdnn_status_t row_fold_outer(const row_layout_t *r, const int64_t *strides, const char *name,
                             int64_t *stride)
{
    int64_t inner = 0;
    *stride = 0;
    for (int32_t i = r->outer_rank - 1; i >= 0; i--) {
        if (!inner)
            *stride = strides[i];
        else if (strides[i] != *stride * inner)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "the rows of '%s' do not fold into "
                            "one stride (the CUDA kernels take one)", name);
        inner = inner ? inner * r->outer_dims[i] : r->outer_dims[i];
    }
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t row_kernel_types(const cdnn_graph_view_t *g, const char *kernels)
{
    for (int32_t i = 0; i < g->tensor_count; i++) {
        const cdnn_tensor_view_t *t = &g->tensors[i];
        if (t->type != CDNN_DATA_TYPE_F32 && t->type != CDNN_DATA_TYPE_F16 &&
            t->type != CDNN_DATA_TYPE_BF16)
            return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "'%s' is %s; %s take f32, f16 and "
                            "bf16", t->name, cdnn_data_type_name(t->type), kernels);
    }
    return CDNN_STATUS_SUCCESS;
}
