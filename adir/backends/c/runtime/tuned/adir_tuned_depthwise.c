/* adir_tuned_depthwise.c: depthwise convolutions (groups = channels = out_channels: one input
 * channel and one kernel per output channel), dilation 1, any stride and padding:
 * adir_tuned_conv2d_depthwise, adir_tuned_conv2d_grad_input_depthwise and
 * adir_tuned_conv2d_grad_weight_depthwise (their references: adir_conv2d, ... in
 * reference/adir_conv_and_pool.c).
 *
 * Each plane is copied with its padding into the scratch buffer select-kernels planned in the
 * arena (`adir.kernel_scratch`, adir_depthwise_scratch_floats below), so the loops read no
 * bounds. With stride 1 they then run over the padded plane as one flat row (the output's rows
 * Wp apart, Wp the padded width): a loop of P x Wp elements that vectorizes whatever the image's
 * width (DS-CNN's is 5); the columns past the output's are computed on the padding and dropped.
 * Other strides go row by row.
 *
 * Every sum runs in the reference's order: the forward pass over the taps (i, j) from 0, then
 * the bias; the input gradient over the output pixels (p, q) that reach a pixel in row-major
 * order (so the taps in reverse); the weight gradient over (n, p, q). A tap in the padding adds
 * a product of 0. So bit for bit the reference's without a fast fused multiply-add.
 *
 * A 3 x 3 weight gradient, and a strided 3 x 3 input gradient, run 16 channels in vector lanes
 * instead where the scratch holds their planes (adir_tuned_depthwise_lanes.c: the same sums);
 * a "same" 3 x 3 (stride 1, padded by 1) forward pass and input gradient read the image with
 * no padded plane (adir_tuned_depthwise_same.c). */
#include <string.h>

#include "adir_tuned.h"

/* A depthwise convolution's sizes; the padded plane holds every pixel a window reads: rows
 * -pad_top .. -pad_top + hp - 1, columns -pad_left .. -pad_left + wp - 1. */
struct adir_depthwise {
    int32_t height, width, out_height, out_width, kh, kw, sh, sw, pad_top, pad_left, hp, wp;
};

static struct adir_depthwise adir_depthwise_of(int32_t height, int32_t width, int32_t out_height,
                                               int32_t out_width, int32_t kh, int32_t kw,
                                               int32_t sh, int32_t sw, int32_t pad_top,
                                               int32_t pad_left)
{
    struct adir_depthwise d;
    d.height = height, d.width = width, d.out_height = out_height, d.out_width = out_width;
    d.kh = kh, d.kw = kw, d.sh = sh, d.sw = sw, d.pad_top = pad_top, d.pad_left = pad_left;
    d.hp = (out_height - 1) * sh + kh;
    d.wp = (out_width - 1) * sw + kw;
    return d;
}

/* The rows copied here are a few floats long (DS-CNN's planes are 5 wide): gcc would turn each
 * copy loop into a call of memcpy, which then cost more than the copy (a tenth of DS-CNN's
 * step at batch 16). */
#if ADIR_GCC
#define ADIR_COPY_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define ADIR_COPY_LOOPS
#endif

/* The columns [*lo, *hi) of the padded plane's rows that hold image columns (lo - pad_left
 * .. hi - 1 - pad_left): the others are padding. */
static void adir_depthwise_inside(const struct adir_depthwise *d, int32_t *lo, int32_t *hi)
{
    *lo = d->pad_left < d->wp ? d->pad_left : d->wp;
    *hi = d->pad_left + d->width < d->wp ? d->pad_left + d->width : d->wp;
    *hi = *hi > *lo ? *hi : *lo;
}

/* The padded plane (hp x wp, then kw zeros that the flat loops read past its end) of plane x:
 * zeros, then each image row's columns copied in (a branch an element cost a tenth of DS-CNN's
 * step at batch 16). */
ADIR_COPY_LOOPS static void adir_depthwise_pad(const float *restrict x,
                                               const struct adir_depthwise *d,
                                               float *restrict xp)
{
    const size_t floats = (size_t)d->hp * (size_t)d->wp + (size_t)d->kw;
    size_t e;
    int32_t r, col, lo, hi;
    adir_depthwise_inside(d, &lo, &hi);
    for (e = 0; e < floats; ++e) {
        xp[e] = 0.0f;
    }
    for (r = 0; r < d->hp; ++r) {
        const int32_t source = r - d->pad_top;
        if (source >= 0 && source < d->height) {
            float *restrict to = xp + (size_t)r * (size_t)d->wp + (size_t)lo;
            const float *restrict from =
                x + (size_t)source * (size_t)d->width + (size_t)(lo - d->pad_left);
            for (col = 0; col < hi - lo; ++col) {
                to[col] = from[col];
            }
        }
    }
}

/* acc[u] = the sum over the 3 x 3 taps (i, j) in order from 0 of w[i][j] (w[2 - i][2 - j]
 * when flip) times xp[u + i wp + j], for u < flat: each sum in registers, vectorized over u
 * (one pass, where one a tap loaded and stored acc nine times). */
ADIR_NOINLINE static void adir_depthwise_flat_3x3(const float *restrict xp, size_t wp,
                                                  const float *restrict w, int flip, size_t flat,
                                                  float *restrict acc)
{
    float k[9];
    size_t u;
    int32_t t;
    for (t = 0; t < 9; ++t) {
        k[t] = flip ? w[8 - t] : w[t];
    }
    for (u = 0; u < flat; ++u) {
        const float *restrict x0 = xp + u, *restrict x1 = x0 + wp, *restrict x2 = x1 + wp;
        float sum = 0.0f;
        sum = ADIR_FMA(k[0], x0[0], sum);
        sum = ADIR_FMA(k[1], x0[1], sum);
        sum = ADIR_FMA(k[2], x0[2], sum);
        sum = ADIR_FMA(k[3], x1[0], sum);
        sum = ADIR_FMA(k[4], x1[1], sum);
        sum = ADIR_FMA(k[5], x1[2], sum);
        sum = ADIR_FMA(k[6], x2[0], sum);
        sum = ADIR_FMA(k[7], x2[1], sum);
        sum = ADIR_FMA(k[8], x2[2], sum);
        acc[u] = sum;
    }
}

/* y (out_height x out_width) = the plane's convolution with w (kh x kw), + bias; xp is the
 * padded plane, acc a scratch row of out_height x wp. */
static void adir_depthwise_forward(const float *restrict xp, const float *restrict w, float bias,
                                   int has_bias, const struct adir_depthwise *d,
                                   float *restrict acc, float *restrict y)
{
    int32_t i, j, p, q;
    if (d->sh == 1 && d->sw == 1) {
        const size_t flat = (size_t)d->out_height * (size_t)d->wp;
        size_t u;
        if (d->kh == 3 && d->kw == 3) {
            adir_depthwise_flat_3x3(xp, (size_t)d->wp, w, 0, flat, acc);
        } else {
            memset(acc, 0, flat * sizeof *acc);
        }
        for (i = 0; i < d->kh && !(d->kh == 3 && d->kw == 3); ++i) {
            for (j = 0; j < d->kw; ++j) {
                const float weight = w[i * d->kw + j];
                const float *restrict x_ij = xp + (size_t)i * (size_t)d->wp + (size_t)j;
                for (u = 0; u < flat; ++u) {
                    acc[u] = ADIR_FMA(weight, x_ij[u], acc[u]);
                }
            }
        }
        for (p = 0; p < d->out_height; ++p) {
            const float *acc_p = acc + (size_t)p * (size_t)d->wp;
            float *y_p = y + (size_t)p * (size_t)d->out_width;
            for (q = 0; q < d->out_width; ++q) {
                y_p[q] = has_bias ? acc_p[q] + bias : acc_p[q];
            }
        }
        return;
    }
    for (p = 0; p < d->out_height; ++p) {
        float *restrict y_p = y + (size_t)p * (size_t)d->out_width;
        for (q = 0; q < d->out_width; ++q) {
            y_p[q] = 0.0f;
        }
        for (i = 0; i < d->kh; ++i) {
            const float *x_i = xp + (size_t)(p * d->sh + i) * (size_t)d->wp;
            for (j = 0; j < d->kw; ++j) {
                const float weight = w[i * d->kw + j];
                for (q = 0; q < d->out_width; ++q) {
                    y_p[q] = ADIR_FMA(weight, x_i[q * d->sw + j], y_p[q]);
                }
            }
        }
        if (has_bias) {
            for (q = 0; q < d->out_width; ++q) {
                y_p[q] += bias;
            }
        }
    }
}

/* dxp (the padded plane's shape, zeroed here) = the adjoint of the forward pass for dy
 * (out_height x out_width); dyw a scratch of out_height x wp. */
static void adir_depthwise_input(const float *restrict dy, const float *restrict w,
                                 const struct adir_depthwise *d, float *restrict dyw,
                                 float *restrict dxp)
{
    int32_t i, j, p, q;
    memset(dxp, 0, ((size_t)d->hp * (size_t)d->wp + (size_t)d->kw) * sizeof *dxp);
    if (d->sh == 1 && d->sw == 1) {
        /* dy on rows wp apart, 0 past its width: those products of 0 land on the padding's
         * columns or, past a row's end, on the next row's (reached by none of its own taps
         * earlier in the order, so adding 0 there changes nothing). */
        const size_t flat = (size_t)d->out_height * (size_t)d->wp;
        size_t u;
        for (p = 0; p < d->out_height; ++p) {
            float *dyw_p = dyw + (size_t)p * (size_t)d->wp;
            memcpy(dyw_p, dy + (size_t)p * (size_t)d->out_width,
                   (size_t)d->out_width * sizeof *dyw_p);
            for (q = d->out_width; q < d->wp; ++q) {
                dyw_p[q] = 0.0f;
            }
        }
        /* Kernel rows and columns in reverse: a pixel then gets its output pixels' terms in
         * row-major order, as the reference adds them. */
        for (i = d->kh - 1; i >= 0; --i) {
            for (j = d->kw - 1; j >= 0; --j) {
                const float weight = w[i * d->kw + j];
                float *restrict dx_ij = dxp + (size_t)i * (size_t)d->wp + (size_t)j;
                for (u = 0; u < flat; ++u) {
                    dx_ij[u] = ADIR_FMA(weight, dyw[u], dx_ij[u]);
                }
            }
        }
        return;
    }
    for (p = 0; p < d->out_height; ++p) {
        const float *dy_p = dy + (size_t)p * (size_t)d->out_width;
        for (q = 0; q < d->out_width; ++q) {
            const float g = dy_p[q];
            for (i = 0; i < d->kh; ++i) {
                float *dx_i = dxp + (size_t)(p * d->sh + i) * (size_t)d->wp + (size_t)(q * d->sw);
                for (j = 0; j < d->kw; ++j) {
                    dx_i[j] = ADIR_FMA(w[i * d->kw + j], g, dx_i[j]);
                }
            }
        }
    }
}

/* dw[t] (kh x kw taps, accumulated) += the sum over the output pixels of dy times the pixel
 * that tap t read; taps (a constant where inlined: 9 independent sums in registers). */
static ADIR_INLINE void adir_depthwise_weight_sums(const float *restrict xp,
                                                   const float *restrict dy,
                                                   const struct adir_depthwise *d, int32_t kh,
                                                   int32_t kw, float *restrict dw)
{
    float acc[16];
    int32_t i, j, p, q;
    for (i = 0; i < kh * kw; ++i) {
        acc[i] = dw[i];
    }
    for (p = 0; p < d->out_height; ++p) {
        const float *dy_p = dy + (size_t)p * (size_t)d->out_width;
        const float *x_p = xp + (size_t)(p * d->sh) * (size_t)d->wp;
        for (q = 0; q < d->out_width; ++q) {
            const float g = dy_p[q];
            const float *x_q = x_p + (size_t)(q * d->sw);
            ADIR_UNROLL
            for (i = 0; i < kh; ++i) {
                ADIR_UNROLL
                for (j = 0; j < kw; ++j) {
                    acc[i * kw + j] =
                        ADIR_FMA(g, x_q[(size_t)i * (size_t)d->wp + (size_t)j], acc[i * kw + j]);
                }
            }
        }
    }
    for (i = 0; i < kh * kw; ++i) {
        dw[i] = acc[i];
    }
}

ADIR_NOINLINE static void adir_depthwise_weight_3x3(const float *restrict xp,
                                                    const float *restrict dy,
                                                    const struct adir_depthwise *d,
                                                    float *restrict dw)
{
    adir_depthwise_weight_sums(xp, dy, d, 3, 3, dw);
}

/* Any other kernel: one tap at a time (a sum in the same order). */
static void adir_depthwise_weight_any(const float *restrict xp, const float *restrict dy,
                                      const struct adir_depthwise *d, float *restrict dw)
{
    int32_t i, j, p, q;
    for (i = 0; i < d->kh; ++i) {
        for (j = 0; j < d->kw; ++j) {
            float acc = dw[i * d->kw + j];
            for (p = 0; p < d->out_height; ++p) {
                const float *dy_p = dy + (size_t)p * (size_t)d->out_width;
                const float *x_p = xp + (size_t)(p * d->sh + i) * (size_t)d->wp + (size_t)j;
                for (q = 0; q < d->out_width; ++q) {
                    acc = ADIR_FMA(dy_p[q], x_p[q * d->sw], acc);
                }
            }
            dw[i * d->kw + j] = acc;
        }
    }
}

void adir_tuned_conv2d_depthwise(const float *x, const float *w, const float *bias, float *y,
                                 int32_t batch, int32_t channels, int32_t height, int32_t width,
                                 int32_t out_channels, int32_t out_height, int32_t out_width,
                                 int32_t kernel_height, int32_t kernel_width,
                                 int32_t stride_height, int32_t stride_width, int32_t pad_top,
                                 int32_t pad_left, int32_t dilation_height,
                                 int32_t dilation_width, int32_t groups, float *scratch,
                                 int32_t scratch_floats)
{
    const struct adir_depthwise d =
        adir_depthwise_of(height, width, out_height, out_width, kernel_height, kernel_width,
                          stride_height, stride_width, pad_top, pad_left);
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t taps = (size_t)kernel_height * (size_t)kernel_width;
    float *xp = scratch, *acc = scratch + (size_t)d.hp * (size_t)d.wp + (size_t)d.kw;
    int32_t n, c;
    /* select-kernels checked groups = channels = out_channels, dilation 1, and sized the
     * scratch (adir_depthwise_scratch in select_kernels/tuned.py). */
    (void)out_channels, (void)dilation_height, (void)dilation_width, (void)groups;
    const size_t same = adir_depthwise_same_floats(height, width, out_height, out_width,
                                                   kernel_height, kernel_width, stride_height,
                                                   stride_width, pad_top, pad_left);
    if (same > 0 && same <= (size_t)scratch_floats) {
        adir_depthwise_same_planes(x, w, 0, bias, batch * channels, channels, height, width,
                                   scratch, y);
        return;
    }
    for (n = 0; n < batch; ++n) {
        for (c = 0; c < channels; ++c) {
            const size_t at = (size_t)n * (size_t)channels + (size_t)c;
            adir_depthwise_pad(x + at * plane, &d, xp);
            adir_depthwise_forward(xp, w + (size_t)c * taps, bias ? bias[c] : 0.0f, bias != NULL,
                                   &d, acc, y + at * out_plane);
        }
    }
}

void adir_tuned_conv2d_grad_input_depthwise(
    const float *dy, const float *w, float *dx, int32_t batch, int32_t channels, int32_t height,
    int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats)
{
    const struct adir_depthwise d =
        adir_depthwise_of(height, width, out_height, out_width, kernel_height, kernel_width,
                          stride_height, stride_width, pad_top, pad_left);
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t taps = (size_t)kernel_height * (size_t)kernel_width;
    float *dxp = scratch, *dyw = scratch + (size_t)d.hp * (size_t)d.wp + (size_t)d.kw;
    int32_t n, c, r, col, lo, hi;
    (void)out_channels, (void)dilation_height, (void)dilation_width, (void)groups;
    (void)scratch_floats;
    /* A stride-1 3 x 3 input gradient is the forward pass of dy, padded by 2 - pad, by the
     * flipped kernel (its taps in reverse: the reference's order), where that padded plane and
     * its rows of sums fit in the scratch (padding of at least 2 rows and 2 columns in all, as
     * DS-CNN's): one pass over the plane instead of nine. */
    const struct adir_depthwise flipped =
        adir_depthwise_of(out_height, out_width, height, width, kernel_height, kernel_width, 1,
                          1, kernel_height - 1 - pad_top, kernel_width - 1 - pad_left);
    const int as_forward =
        stride_height == 1 && stride_width == 1 && kernel_height == 3 && kernel_width == 3 &&
        pad_top <= 2 && pad_left <= 2 && flipped.hp <= d.hp && flipped.wp <= d.wp;
    /* A strided 3 x 3 one with channels in vector lanes where the scratch holds their planes
     * (adir_tuned_depthwise_lanes.c; the same sums), not one scalar scatter a pixel. */
    const int32_t lanes =
        adir_depthwise_lanes_floats(out_height, out_width, stride_height, stride_width);
    const size_t same = adir_depthwise_same_floats(height, width, out_height, out_width,
                                                   kernel_height, kernel_width, stride_height,
                                                   stride_width, pad_top, pad_left);
    if (same > 0 && same <= (size_t)scratch_floats) {
        adir_depthwise_same_planes(dy, w, 1, NULL, batch * channels, channels, height, width,
                                   scratch, dx);
        return;
    }
    if (!as_forward && kernel_height == 3 && kernel_width == 3 && lanes > 0 &&
        lanes <= scratch_floats) {
        adir_conv2d_grad_input_depthwise_lanes(dy, w, dx, batch, channels, height, width,
                                               out_height, out_width, stride_height,
                                               stride_width, pad_top, pad_left, scratch);
        return;
    }
    for (n = 0; n < batch; ++n) {
        for (c = 0; c < channels; ++c) {
            const size_t at = (size_t)n * (size_t)channels + (size_t)c;
            float *dx_c = dx + at * plane;
            if (as_forward) {
                adir_depthwise_pad(dy + at * out_plane, &flipped, dxp);
                adir_depthwise_flat_3x3(dxp, (size_t)flipped.wp, w + (size_t)c * taps, 1,
                                        (size_t)height * (size_t)flipped.wp, dyw);
                for (r = 0; r < height; ++r) {
                    for (col = 0; col < width; ++col) {
                        dx_c[(size_t)r * (size_t)width + (size_t)col] =
                            dyw[(size_t)r * (size_t)flipped.wp + (size_t)col];
                    }
                }
                continue;
            }
            adir_depthwise_input(dy + at * out_plane, w + (size_t)c * taps, &d, dyw, dxp);
            /* The image's pixels in the padded plane; any below or right of it no window read
             * (columns hi - pad_left on, rows hp - pad_top on): 0. */
            adir_depthwise_inside(&d, &lo, &hi);
            for (r = 0; r < height; ++r) {
                const int32_t row = r + pad_top;
                float *dx_r = dx_c + (size_t)r * (size_t)width;
                col = 0;
                if (row < d.hp) {
                    memcpy(dx_r, dxp + (size_t)row * (size_t)d.wp + (size_t)lo,
                           (size_t)(hi - lo) * sizeof *dx_r);
                    col = hi - lo;
                }
                for (; col < width; ++col) {
                    dx_r[col] = 0.0f;
                }
            }
        }
    }
}

void adir_tuned_conv2d_grad_weight_depthwise(
    const float *x, const float *dy, float *dw, int32_t batch, int32_t channels, int32_t height,
    int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats)
{
    const struct adir_depthwise d =
        adir_depthwise_of(height, width, out_height, out_width, kernel_height, kernel_width,
                          stride_height, stride_width, pad_top, pad_left);
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t taps = (size_t)kernel_height * (size_t)kernel_width;
    int32_t n, c;
    (void)out_channels, (void)dilation_height, (void)dilation_width, (void)groups;
    if (kernel_height == 3 && kernel_width == 3) {
        /* channels in vector lanes where the scratch holds their planes (the same sums) */
        const int32_t lanes =
            adir_depthwise_lanes_floats(out_height, out_width, stride_height, stride_width);
        if (lanes > 0 && lanes <= scratch_floats) {
            adir_conv2d_grad_weight_depthwise_lanes(x, dy, dw, batch, channels, height, width,
                                                    out_height, out_width, stride_height,
                                                    stride_width, pad_top, pad_left, scratch);
            return;
        }
    }
    memset(dw, 0, (size_t)channels * taps * sizeof *dw);
    for (n = 0; n < batch; ++n) {
        for (c = 0; c < channels; ++c) {
            const size_t at = (size_t)n * (size_t)channels + (size_t)c;
            adir_depthwise_pad(x + at * plane, &d, scratch);
            if (kernel_height == 3 && kernel_width == 3) {
                adir_depthwise_weight_3x3(scratch, dy + at * out_plane, &d,
                                          dw + (size_t)c * taps);
            } else {
                adir_depthwise_weight_any(scratch, dy + at * out_plane, &d,
                                          dw + (size_t)c * taps);
            }
        }
    }
}
