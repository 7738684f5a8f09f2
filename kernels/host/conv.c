/*
 * conv.c -- "host-conv-nhwc-v1": 2-D convolution forward, NHWC, as an
 * implicit GEMM on the driver of gemm.h (one register tile per build,
 * -DHK_MR, -DHK_NV, the matmul's tiles):
 *     rows    M = n * out_h * out_w   (output pixels)
 *     columns N = k                   (output channels)
 *     depth   K = r * s * c           (filter taps, channels innermost)
 * When x is f32 with its channels packed (NHWC's usual), A is not packed
 * at all: the micro-kernel reads each tap's c channels of its HK_MR pixels
 * where they lie in x, and a run of zeros where the tap falls in the
 * padding (the GEMM driver's tap_rows).  Otherwise a panel of A is
 * gathered from x, widened, the same way.  No im2col buffer exists either
 * way.  B is the filter read as [(r, s, c), k].
 * The output, bias and residual rows are pixels, addressed through their
 * {n, h, w} strides, so any NHWC-strided output works.
 */
#include "gemm.h"

static int32_t check_args(const cdnn_host_conv_args_t *a, int query)
{
    const int64_t sizes[] = {a->n, a->h, a->w, a->c, a->k, a->r, a->s,
                             a->out_h, a->out_w, a->pad_h, a->pad_w};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] < 0)
            return CDNN_HOST_BAD_ARGS;
    if (a->stride_h < 1 || a->stride_w < 1 || a->dilation_h < 1 ||
        a->dilation_w < 1 || a->activation < 0 ||
        a->activation >= CDNN_HOST_ACT_COUNT)
        return CDNN_HOST_BAD_ARGS;
    if (!hk_type_ok(a->x.type) || !hk_type_ok(a->filter.type) ||
        !hk_type_ok(a->y.type) ||
        (a->bias.data && !hk_type_ok(a->bias.type)) ||
        (a->residual.data && !hk_type_ok(a->residual.type)))
        return CDNN_HOST_BAD_TYPE;
    int64_t outputs = a->n * a->out_h * a->out_w * a->k;
    if (query || outputs == 0)
        return CDNN_HOST_OK;
    if (!a->y.data || (a->r * a->s * a->c > 0 && (!a->x.data || !a->filter.data)))
        return CDNN_HOST_BAD_ARGS;
    return CDNN_HOST_OK;
}

static const cdnn_host_conv_args_t *args_of(const hk_gemm_t *g)
{
    return g->args;
}

/* One image's pixel as the GEMM row i: image, output row and column. */
typedef struct pixel {
    int64_t image, oh, ow;
} pixel_t;

static pixel_t pixel_of(const cdnn_host_conv_args_t *a, int64_t i)
{
    pixel_t p;
    p.ow = i % a->out_w;
    p.oh = i / a->out_w % a->out_h;
    p.image = i / (a->out_w * a->out_h);
    return p;
}

static int64_t pixel_offset(const cdnn_host_tensor_t *t, pixel_t p)
{
    return p.image * t->strides[0] + p.oh * t->strides[1] +
           p.ow * t->strides[2];
}

/* All of a conv is one batch: images are rows. */
static void batch_offsets(const hk_gemm_t *g, int64_t batch, hk_unit_t *u)
{
    (void)g;
    (void)batch;
    *u = (hk_unit_t){0};
}

static void row_offsets(const hk_gemm_t *g, const hk_unit_t *u, int64_t i,
                        int64_t *c, int64_t *bias, int64_t *residual)
{
    const cdnn_host_conv_args_t *a = args_of(g);
    (void)u;
    pixel_t p = pixel_of(a, i);
    *c = pixel_offset(&a->y, p);
    *bias = pixel_offset(&a->bias, p);
    *residual = pixel_offset(&a->residual, p);
}

/* Where tap (r, s) of pixel p reads x, or NULL in the padding. */
static const void *tap_source(const cdnn_host_conv_args_t *a, pixel_t p,
                              int64_t r, int64_t s)
{
    int64_t ih = p.oh * a->stride_h - a->pad_h + r * a->dilation_h;
    int64_t iw = p.ow * a->stride_w - a->pad_w + s * a->dilation_w;
    if (ih < 0 || ih >= a->h || iw < 0 || iw >= a->w)
        return NULL;
    const cdnn_host_tensor_t *x = &a->x;
    return hk_at(x->data, x->type,
                 p.image * x->strides[0] + ih * x->strides[1] +
                     iw * x->strides[2]);
}

/* The c channels of one tap for the panel's HK_MR rows (NULL: zeros),
 * step by step, so that the panel is written in order. */
static void pack_tap(const cdnn_host_tensor_t *x, const void *const *src,
                     int64_t c, float *dst)
{
    int64_t cs = x->strides[3];
    if (x->type == CDNN_HOST_F32 && cs == 1) {
        for (int64_t ci = 0; ci < c; ci++)
            for (int i = 0; i < HK_MR; i++)
                dst[ci * HK_MR + i] = src[i] ? ((const float *)src[i])[ci] : 0.0f;
        return;
    }
    for (int64_t ci = 0; ci < c; ci++)
        for (int i = 0; i < HK_MR; i++)
            dst[ci * HK_MR + i] = src[i] ? hk_load1(x->type, src[i], ci * cs)
                                         : 0.0f;
}

/* The tile's pixels, for tap_rows: image offset in x, and the input row
 * and column of tap (0, 0).  Pixels follow one another along a row of the
 * output, so one division finds the first. */
static void tile_rows(const hk_gemm_t *g, int64_t i0, int64_t rows,
                      int64_t state[HK_MR][3])
{
    const cdnn_host_conv_args_t *a = args_of(g);
    pixel_t p = pixel_of(a, i0);
    for (int64_t i = 0; i < rows; i++) {
        state[i][0] = p.image * a->x.strides[0];
        state[i][1] = p.oh * a->stride_h - a->pad_h;
        state[i][2] = p.ow * a->stride_w - a->pad_w;
        if (++p.ow == a->out_w) {
            p.ow = 0;
            if (++p.oh == a->out_h) {
                p.oh = 0;
                p.image++;
            }
        }
    }
}

static void tap_rows(const hk_gemm_t *g, int64_t state[HK_MR][3],
                     int64_t rows, int64_t tap, const float *zeros,
                     const float **dst)
{
    const cdnn_host_conv_args_t *a = args_of(g);
    int64_t dy = tap / a->s * a->dilation_h, dx = tap % a->s * a->dilation_w;
    for (int i = 0; i < HK_MR; i++) {
        int64_t ih = i < rows ? state[i][1] + dy : -1;
        int64_t iw = i < rows ? state[i][2] + dx : -1;
        int inside = ih >= 0 && ih < a->h && iw >= 0 && iw < a->w;
        dst[i] = inside ? (const float *)a->x.data + state[i][0] +
                              ih * a->x.strides[1] + iw * a->x.strides[2]
                        : zeros;
    }
}

static void pack_a_panel(const hk_gemm_t *g, const hk_unit_t *u, int64_t i0,
                         int64_t rows, float *dst)
{
    const cdnn_host_conv_args_t *a = args_of(g);
    (void)u;
    pixel_t pixels[HK_MR];
    for (int i = 0; i < rows; i++)
        pixels[i] = pixel_of(a, i0 + i);
    for (int64_t r = 0; r < a->r; r++)
        for (int64_t s = 0; s < a->s; s++) {
            const void *src[HK_MR];
            for (int i = 0; i < HK_MR; i++)
                src[i] = i < rows ? tap_source(a, pixels[i], r, s) : NULL;
            pack_tap(&a->x, src, a->c, dst + (r * a->s + s) * a->c * HK_MR);
        }
}

/* Columns [j0, j0 + cols) of B = the filter as [(r, s, c), k]: each output
 * channel's filter is one column, read in (r, s, c) order. */
static void pack_b_panel(const hk_gemm_t *g, const hk_unit_t *u, int64_t j0,
                         int64_t cols, float *dst)
{
    const cdnn_host_conv_args_t *a = args_of(g);
    const cdnn_host_tensor_t *w = &a->filter;
    (void)u;
    for (int j = 0; j < NR; j++) {
        float *col = dst + j;
        if (j >= cols) {
            for (int64_t p = 0; p < g->k; p++)
                col[p * NR] = 0.0f;
            continue;
        }
        int64_t p = 0;
        for (int64_t r = 0; r < a->r; r++)
            for (int64_t s = 0; s < a->s; s++) {
                const void *taps = hk_at(w->data, w->type,
                                         (j0 + j) * w->strides[0] +
                                             r * w->strides[1] +
                                             s * w->strides[2]);
                if (w->type == CDNN_HOST_F32 && w->strides[3] == 1)
                    for (int64_t ci = 0; ci < a->c; ci++, p++)
                        col[p * NR] = ((const float *)taps)[ci];
                else
                    for (int64_t ci = 0; ci < a->c; ci++, p++)
                        col[p * NR] = hk_load1(w->type, taps,
                                               ci * w->strides[3]);
            }
    }
}

HK_EXPORT int32_t HK_ENTRY(const cdnn_host_conv_args_t *args,
                           size_t *workspace_bytes)
{
    int32_t status = check_args(args, workspace_bytes != NULL);
    if (status != CDNN_HOST_OK)
        return status;
    hk_gemm_t g = {
        .batch_count = 1,
        .m = args->n * args->out_h * args->out_w,
        .n = args->k,
        .k = args->r * args->s * args->c,
        .activation = args->activation,
        .c = &args->y, .bias = &args->bias, .residual = &args->residual,
        .c_col = args->y.strides[3],
        .bias_col = args->bias.strides[3],
        .residual_col = args->residual.strides[3],
        .parallel = &args->parallel,
        .args = args,
        .batch_offsets = batch_offsets,
        .row_offsets = row_offsets,
        .pack_a_panel = pack_a_panel,
        .pack_b_panel = pack_b_panel,
        /* channels packed f32: read in place */
        .tap_depth = args->x.type == CDNN_HOST_F32 && args->x.strides[3] == 1
                         ? args->c : 0,
        .tile_rows = tile_rows,
        .tap_rows = tap_rows,
    };
    return hk_gemm_entry(&g, args->workspace, args->workspace_size,
                         workspace_bytes);
}
