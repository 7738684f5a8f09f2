/*
 * rows.h -- what the row kernels (softmax, reduce, norm) share: checking
 * the row shape, splitting rows over tasks, and reading a row as f32 in
 * chunks (in place when it is packed f32, widened into a buffer
 * otherwise), with vector tails padded by a neutral value.
 */
#ifndef CDNN_HOST_ROWS_H
#define CDNN_HOST_ROWS_H

#include "common.h"
#include "convert.h"

/* Elements per chunk of a row held in a stack buffer (4 KiB). */
#define HK_CHUNK 1024
/* Elements worth a task of their own. */
#define HK_MIN_TASK_ELEMENTS 32768

/* The part of every row kernel's args the helpers read. */
typedef struct hk_rows {
    int32_t outer_rank;
    const int64_t *outer_dims;
    int64_t cols;
    int64_t rows; /* product of the outer dims */
} hk_rows_t;

static inline int32_t hk_rows_init(hk_rows_t *r, int32_t outer_rank,
                                   const int64_t *outer_dims, int64_t cols)
{
    if (outer_rank < 0 || outer_rank > CDNN_HOST_MAX_OUTER_RANK || cols < 0)
        return CDNN_HOST_BAD_ARGS;
    r->outer_rank = outer_rank;
    r->outer_dims = outer_dims;
    r->cols = cols;
    r->rows = hk_count(outer_rank, outer_dims);
    return r->rows < 0 ? CDNN_HOST_BAD_ARGS : CDNN_HOST_OK;
}

/* Element offset of row `row` in a tensor whose first outer_rank strides
 * are the outer ones. */
HK_INLINE int64_t hk_row_offset(const hk_rows_t *r, const cdnn_host_tensor_t *t,
                                int64_t row)
{
    return hk_offset_of(row, r->outer_rank, r->outer_dims, t->strides);
}

/* The column stride of a {outer.., col} tensor. */
HK_INLINE int64_t hk_col_stride(const hk_rows_t *r, const cdnn_host_tensor_t *t)
{
    return t->strides[r->outer_rank];
}

/* Tasks for the rows: no more than threads, rows, or what the elements
 * are worth. */
static inline int64_t hk_row_tasks(const hk_rows_t *r,
                                   const cdnn_host_parallel_t *par)
{
    int64_t worth = hk_ceil_div(r->rows * hk_max(r->cols, 1),
                                HK_MIN_TASK_ELEMENTS);
    return hk_min(hk_min(hk_thread_budget(par), worth), r->rows);
}

HK_INLINE void hk_task_rows(int64_t task, int64_t tasks, int64_t rows,
                            int64_t *first, int64_t *last)
{
    *first = task * rows / tasks;
    *last = (task + 1) * rows / tasks;
}

/* Elements [j0, j0 + len) of a row at `offset` as f32: the tensor's own
 * memory when it is packed f32, else widened into buf (len <= HK_CHUNK). */
static inline const float *hk_row_chunk(const cdnn_host_tensor_t *t,
                                        int64_t offset, int64_t cs, int64_t j0,
                                        int64_t len, float *buf)
{
    if (t->type == CDNN_HOST_F32 && cs == 1)
        return (const float *)t->data + offset + j0;
    hk_load_run(t->type, hk_at(t->data, t->type, offset + j0 * cs), cs, len,
                buf);
    return buf;
}

/* Where to compute the output chunk: straight into the tensor when it is
 * packed f32, else into buf, to be stored by hk_row_store. */
static inline float *hk_row_out(const cdnn_host_tensor_t *t, int64_t offset,
                                int64_t cs, int64_t j0, float *buf)
{
    if (t->type == CDNN_HOST_F32 && cs == 1)
        return (float *)t->data + offset + j0;
    return buf;
}

static inline void hk_row_store(const cdnn_host_tensor_t *t, int64_t offset,
                                int64_t cs, int64_t j0, int64_t len,
                                const float *values)
{
    if (t->type == CDNN_HOST_F32 && cs == 1)
        return;
    hk_store_run(t->type, hk_at_mut(t->data, t->type, offset + j0 * cs), cs,
                 len, values);
}

/* The last n (< HK_VL) floats at p as a vector, the missing lanes `pad`. */
HK_INLINE vf hk_load_tail(const float *p, int64_t n, float pad)
{
    float lanes[HK_VL];
    for (int i = 0; i < HK_VL; i++)
        lanes[i] = i < n ? p[i] : pad;
    return vload(lanes);
}

HK_INLINE void hk_store_tail(float *p, int64_t n, vf x)
{
    float lanes[HK_VL];
    vstore(lanes, x);
    for (int64_t i = 0; i < n; i++)
        p[i] = lanes[i];
}

/* A scalar through a vector function (for the odd log or sqrt of a row's
 * statistic). */
HK_INLINE float hk_scalar(vf (*fn)(vf), float x)
{
    float lanes[HK_VL];
    vstore(lanes, fn(vset1(x)));
    return lanes[0];
}

#endif /* CDNN_HOST_ROWS_H */
