/*
 * pool_geometry.h -- the window arithmetic of pooling and the coordinate
 * arithmetic of resize, shared by cpu:reference and cpu:pool so that both
 * engines mean the same thing by a window, a divisor and a source
 * coordinate (cdnn.h, cdnn_pooling_attr_t and cdnn_resize_attr_t, say
 * what they are; validation has checked every window reads x).
 */
#ifndef CDNN_CPU_POOL_GEOMETRY_H
#define CDNN_CPU_POOL_GEOMETRY_H

#include <math.h>
#include <stdint.h>

#include <cdnn/provider.h>

/* One spatial dim of a pooling: x's size n, y's size out, and the window. */
typedef struct pool_dim {
    int64_t n, out, window, stride, dilation, pre, post;
} pool_dim_t;

/* Spatial dim i of a pooling node whose x and y views are given. */
static inline pool_dim_t pool_dim_of(const cdnn_pooling_attr_t *a, int i,
                                     const cdnn_tensor_view_t *x,
                                     const cdnn_tensor_view_t *y)
{
    pool_dim_t d = {x->dims[2 + i], y->dims[2 + i], a->window[i], a->stride[i],
                    a->dilation[i], a->pre_padding[i], a->post_padding[i]};
    return d;
}

/* The taps of output position o that lie inside x: j from *first to *last
 * (inclusive; *first > *last when none), at position o * stride - pre +
 * j * dilation. */
static inline void pool_taps(const pool_dim_t *d, int64_t o, int64_t *first,
                             int64_t *last)
{
    int64_t start = o * d->stride - d->pre;
    int64_t lo = start >= 0 ? 0 : (-start + d->dilation - 1) / d->dilation;
    int64_t hi = start > d->n - 1 ? -1 : (d->n - 1 - start) / d->dilation;
    *first = lo;
    *last = hi < d->window - 1 ? hi : d->window - 1;
}

/* An average's count of taps in this dim: those inside x, or with
 * count_include_pad those inside the padded input, -pre .. n + post - 1
 * (PyTorch: ceil mode's reach past the right padding is never counted). */
static inline int64_t pool_count(const pool_dim_t *d, int64_t o, int include_pad)
{
    int64_t first, last;
    if (!include_pad) {
        pool_taps(d, o, &first, &last);
        return last >= first ? last - first + 1 : 0;
    }
    int64_t start = o * d->stride - d->pre; /* dilation is 1 for averages */
    int64_t end = start + d->window;
    if (end > d->n + d->post)
        end = d->n + d->post;
    return end - start;
}

/* The output positions whose window has a tap at position p of x: o and
 * its tap j with o * stride - pre + j * dilation == p.  Fills os[] (at
 * most window entries) and returns how many. */
static inline int pool_windows_at(const pool_dim_t *d, int64_t p, int64_t *os)
{
    int count = 0;
    for (int64_t j = 0; j < d->window; j++) {
        int64_t num = p + d->pre - j * d->dilation;
        if (num < 0)
            break;
        if (num % d->stride == 0 && num / d->stride < d->out)
            os[count++] = num / d->stride;
    }
    return count;
}

/* ---- resize ------------------------------------------------------------- */

/* Where y's element j of a dim samples x, as the exact fraction num / den
 * (den > 0): half-pixel ((2j + 1) n - m) / 2m, align-corners
 * j (n - 1) / (m - 1), asymmetric j n / m.  Sizes are below 2^40, so the
 * products fit 128 bits. */
typedef struct resize_coord {
    __int128 num, den;
} resize_coord_t;

static inline resize_coord_t resize_source(int32_t mode, int64_t j, int64_t n, int64_t m)
{
    resize_coord_t c;
    if (n == m) {
        c.num = j;
        c.den = 1;
    } else if (mode == CDNN_RESIZE_ALIGN_CORNERS) {
        c.num = m == 1 ? 0 : (__int128)j * (n - 1);
        c.den = m == 1 ? 1 : m - 1;
    } else if (mode == CDNN_RESIZE_ASYMMETRIC) {
        c.num = (__int128)j * n;
        c.den = m;
    } else {
        c.num = (__int128)(2 * j + 1) * n - m;
        c.den = 2 * (__int128)m;
    }
    return c;
}

static inline __int128 resize_floor(resize_coord_t c)
{
    __int128 q = c.num / c.den;
    return c.num % c.den != 0 && c.num < 0 ? q - 1 : q;
}

/* The nearest element of x for a source coordinate, rounded as `nearest`
 * says and clamped into 0 .. n - 1. */
static inline int64_t resize_nearest_index(resize_coord_t c, int32_t nearest, int64_t n)
{
    __int128 f = resize_floor(c), rem2 = 2 * (c.num - f * c.den); /* 2 * frac * den */
    __int128 i;
    switch (nearest) {
    case CDNN_RESIZE_FLOOR: i = f; break;
    case CDNN_RESIZE_CEIL: i = rem2 ? f + 1 : f; break;
    case CDNN_RESIZE_ROUND_PREFER_CEIL: i = rem2 >= c.den ? f + 1 : f; break;
    default: i = rem2 > c.den ? f + 1 : f; break; /* round, halves down */
    }
    return i < 0 ? 0 : i > n - 1 ? n - 1 : (int64_t)i;
}

/* Linear: the lower neighbour *i0 and the upper one's weight *w (the lower
 * one's is 1 - w), the coordinate clamped into 0 .. n - 1 first. */
static inline void resize_linear_at(resize_coord_t c, int64_t n, int64_t *i0, double *w)
{
    __int128 f = resize_floor(c);
    if (f < 0) {
        *i0 = 0;
        *w = 0;
    } else if (f >= n - 1) {
        *i0 = n - 1;
        *w = 0;
    } else {
        *i0 = (int64_t)f;
        *w = (double)(c.num - f * c.den) / (double)c.den;
    }
}

#endif
