#include "conv_lower.h"

#include <string.h>

void conv_geom_init(conv_geom_t *g, const cdnn_conv_attr_t *attr,
                    const cdnn_tensor_view_t *x, const cdnn_tensor_view_t *w,
                    const cdnn_tensor_view_t *y)
{
    int32_t s = attr->spatial_dims, lead = 3 - s;
    memset(g, 0, sizeof *g);
    g->n = x->dims[0];
    g->c = x->dims[1];
    g->k = w->dims[0];
    g->groups = attr->groups;
    g->cg = g->c / g->groups;
    g->kg = g->k / g->groups;
    g->in_size = g->filt_size = g->out_size = 1;
    for (int32_t d = 0; d < 3; d++) {
        int inside = d >= lead;
        g->in[d] = inside ? x->dims[2 + d - lead] : 1;
        g->filt[d] = inside ? w->dims[2 + d - lead] : 1;
        g->out[d] = inside ? y->dims[2 + d - lead] : 1;
        g->pad[d] = inside ? attr->pre_padding[d - lead] : 0;
        g->stride[d] = inside ? attr->stride[d - lead] : 1;
        g->dil[d] = inside ? attr->dilation[d - lead] : 1;
        g->in_size *= g->in[d];
        g->filt_size *= g->filt[d];
        g->out_size *= g->out[d];
    }
}

int conv_is_pointwise(const conv_geom_t *g)
{
    for (int32_t d = 0; d < 3; d++)
        if (g->filt[d] != 1 || g->stride[d] != 1 || g->pad[d] != 0 ||
            g->out[d] != g->in[d])
            return 0;
    return 1;
}

/* ceil(a / b) for b > 0 and any a. */
static int64_t div_ceil(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* The output columns [*lo, *hi) whose input column o * stride + off lies
 * in [0, in). */
static void valid_span(int64_t off, int64_t stride, int64_t in, int64_t out,
                       int64_t *lo, int64_t *hi)
{
    *lo = div_ceil(-off, stride);
    *hi = div_ceil(in - off, stride);
    *lo = *lo < 0 ? 0 : *lo > out ? out : *lo;
    *hi = *hi < *lo ? *lo : *hi > out ? out : *hi;
}

/* One output row of one column row: dst[o] = src[o * stride + off]. */
static void gather_row(float *dst, const float *src, int64_t off,
                       int64_t stride, int64_t in, int64_t out)
{
    int64_t lo, hi;
    valid_span(off, stride, in, out, &lo, &hi);
    memset(dst, 0, (size_t)lo * sizeof *dst);
    if (stride == 1 && hi > lo)
        memcpy(dst + lo, src + lo + off, (size_t)(hi - lo) * sizeof *dst);
    else
        for (int64_t o = lo; o < hi; o++)
            dst[o] = src[o * stride + off];
    memset(dst + hi, 0, (size_t)(out - hi) * sizeof *dst);
}

/* The adjoint of gather_row: dst[o * stride + off] += src[o]. */
static void scatter_row(float *dst, const float *src, int64_t off,
                        int64_t stride, int64_t in, int64_t out)
{
    int64_t lo, hi;
    valid_span(off, stride, in, out, &lo, &hi);
    for (int64_t o = lo; o < hi; o++)
        dst[o * stride + off] += src[o];
}

/* The input index of output index o at filter tap f along dim d, or -1
 * when it falls in the padding. */
static int64_t input_at(const conv_geom_t *g, int32_t d, int64_t o, int64_t f)
{
    int64_t i = o * g->stride[d] - g->pad[d] + f * g->dil[d];
    return i >= 0 && i < g->in[d] ? i : -1;
}

/* Visit every (filter tap, output row) pair of a plane: the column row
 * segment and the input row it reads (NULL when in the padding). */
typedef void (*row_visit_fn)(const conv_geom_t *g, float *colrow,
                             float *inrow, int64_t off);

static void visit_rows(const conv_geom_t *g, float *col, float *plane,
                       row_visit_fn visit)
{
    int64_t ow = g->out[2];
    for (int64_t t = 0; t < g->filt[0]; t++)
        for (int64_t r = 0; r < g->filt[1]; r++)
            for (int64_t s = 0; s < g->filt[2]; s++) {
                int64_t off = s * g->dil[2] - g->pad[2];
                for (int64_t od = 0; od < g->out[0]; od++) {
                    int64_t id = input_at(g, 0, od, t);
                    for (int64_t oh = 0; oh < g->out[1]; oh++) {
                        int64_t ih = input_at(g, 1, oh, r);
                        float *in = id < 0 || ih < 0
                                        ? NULL
                                        : plane + (id * g->in[1] + ih) *
                                                      g->in[2];
                        visit(g, col + (od * g->out[1] + oh) * ow, in, off);
                    }
                }
                col += g->out_size;
            }
}

static void visit_gather(const conv_geom_t *g, float *colrow, float *inrow,
                         int64_t off)
{
    if (inrow)
        gather_row(colrow, inrow, off, g->stride[2], g->in[2], g->out[2]);
    else
        memset(colrow, 0, (size_t)g->out[2] * sizeof *colrow);
}

static void visit_scatter(const conv_geom_t *g, float *colrow, float *inrow,
                          int64_t off)
{
    if (inrow)
        scatter_row(inrow, colrow, off, g->stride[2], g->in[2], g->out[2]);
}

void conv_im2col_plane(const conv_geom_t *g, const float *x, float *col)
{
    /* visit_gather only reads the plane. */
    visit_rows(g, col, (float *)x, visit_gather);
}

void conv_col2im_plane(const conv_geom_t *g, const float *col, float *dx)
{
    /* visit_scatter only reads the column block. */
    visit_rows(g, (float *)col, dx, visit_scatter);
}
