/*
 * conv_lower.h -- convolution geometry and the im2col / col2im lowering
 * that turns a convolution into GEMMs.
 *
 * 1 and 2 spatial dims are handled as 3 with leading dims of size 1, so
 * one code path serves all three.  Tensors here are packed NC(D)(H)W f32.
 * For one channel plane of x, im2col writes the [T*R*S, P] block of the
 * column matrix (P the output positions), zero where the window reaches
 * into padding; col2im adds such a block back into a plane of dx.
 */
#ifndef CDNN_CPU_CONV_LOWER_H
#define CDNN_CPU_CONV_LOWER_H

#include <cdnn/provider.h>

typedef struct conv_geom {
    int64_t n, c, k, groups;
    int64_t cg, kg;    /* channels and filters per group */
    int64_t in[3];     /* input spatial dims, D H W */
    int64_t filt[3];   /* filter spatial dims, T R S */
    int64_t out[3];    /* output spatial dims */
    int64_t pad[3], stride[3], dil[3];
    int64_t in_size;   /* D * H * W */
    int64_t filt_size; /* T * R * S: column rows per channel */
    int64_t out_size;  /* output positions: columns */
} conv_geom_t;

/* The geometry from x [N, C, ...], w [K, C/groups, ...], y [N, K, ...]. */
void conv_geom_init(conv_geom_t *g, const cdnn_conv_attr_t *attr,
                    const cdnn_tensor_view_t *x, const cdnn_tensor_view_t *w,
                    const cdnn_tensor_view_t *y);

/* True when the column matrix of a plane is the plane itself (1x1 filter,
 * stride 1, no padding), so that no lowering is needed. */
int conv_is_pointwise(const conv_geom_t *g);

/* The [filt_size, out_size] column block of one input plane. */
void conv_im2col_plane(const conv_geom_t *g, const float *x, float *col);

/* dx += the plane that the [filt_size, out_size] column block came from. */
void conv_col2im_plane(const conv_geom_t *g, const float *col, float *dx);

#endif
