/* adir_tuned_depthwise_lanes.c: the weight gradient of a depthwise 3 x 3 convolution (any stride
 * and padding, dilation 1) with channels in vector lanes: adir_conv2d_grad_weight_depthwise_lanes,
 * the path adir_tuned_conv2d_grad_weight_depthwise (adir_tuned_depthwise.c) takes where its
 * scratch holds adir_depthwise_lanes_floats (select_kernels/tuned.py asks for it on the hosts;
 * with less it keeps its scalar sums).
 *
 * Why: each of a channel's 9 sums runs over (n, p, q) in order, as the reference adds them: a
 * chain of dependent multiply-adds that vector lanes cannot split without changing its bits, so
 * the scalar kernel runs a channel's 9 chains side by side (DS-CNN's at batch 16: 387 us a
 * layer, a tenth of its step). The sums of different channels are independent: here a block of
 * ADIR_DEPTHWISE_BLOCK channels' padded planes and their dy are interleaved in scratch,
 * [pixel][channel of the block], and ADIR_DEPTHWISE_LANES channels (a vector's floats) take one
 * vector multiply-add a tap and pixel, each lane's sum over (n, p, q) in order: bit for bit the
 * reference's without a fast fused multiply-add, as the scalar sums.
 *
 * The block is 16 channels on every target (select-kernels sizes the scratch without knowing
 * the vector width a build picks); a target with narrower vectors runs its lanes in turn over
 * the block. */
#include <string.h>

#include "adir_tuned.h"
#include "adir_tuned_transpose.h"

#define ADIR_DEPTHWISE_BLOCK 16

#if ADIR_DEPTHWISE_BLOCK % ADIR_DEPTHWISE_LANES != 0
#error "adir_tuned_depthwise_lanes.c: ADIR_DEPTHWISE_LANES must divide the block of 16 channels"
#endif

int32_t adir_depthwise_lanes_floats(int32_t out_height, int32_t out_width, int32_t stride_height,
                                    int32_t stride_width)
{
    /* a block's padded planes (the rows and columns the windows read) and its dy */
    const size_t hp = (size_t)(out_height - 1) * (size_t)stride_height + 3u;
    const size_t wp = (size_t)(out_width - 1) * (size_t)stride_width + 3u;
    const size_t floats =
        (hp * wp + (size_t)out_height * (size_t)out_width) * (size_t)ADIR_DEPTHWISE_BLOCK;
    return floats > (size_t)INT32_MAX ? -1 : (int32_t)floats;
}

/* acc[t][l] (rows BLOCK apart) continues lane l's sum of tap t = (i, j) over one sample's output
 * pixels (p, q) in order: dy (dyi[pixel][lane]) times the input the tap read (xi[row][column]
 * [lane], rows wp apart). The lanes are a constant count: the 9 sums of each lane a vector in
 * registers. */
ADIR_NOINLINE static void adir_depthwise_lanes_sums(const float *restrict xi,
                                                    const float *restrict dyi, size_t wp,
                                                    int32_t out_height, int32_t out_width,
                                                    int32_t stride_height, int32_t stride_width,
                                                    float *restrict acc_io)
{
    float acc[9][ADIR_DEPTHWISE_LANES];
    const size_t row = wp * ADIR_DEPTHWISE_BLOCK;
    int32_t p, q, t, i, j, l;
    for (t = 0; t < 9; ++t) {
        for (l = 0; l < ADIR_DEPTHWISE_LANES; ++l) {
            acc[t][l] = acc_io[t * ADIR_DEPTHWISE_BLOCK + l];
        }
    }
    for (p = 0; p < out_height; ++p) {
        const float *restrict x_p = xi + (size_t)(p * stride_height) * row;
        const float *restrict g_p = dyi + (size_t)p * (size_t)out_width * ADIR_DEPTHWISE_BLOCK;
        for (q = 0; q < out_width; ++q) {
            const float *restrict x_q = x_p + (size_t)(q * stride_width) * ADIR_DEPTHWISE_BLOCK;
            const float *restrict g = g_p + (size_t)q * ADIR_DEPTHWISE_BLOCK;
            ADIR_UNROLL
            for (i = 0; i < 3; ++i) {
                ADIR_UNROLL
                for (j = 0; j < 3; ++j) {
                    const float *restrict x_ij = x_q + (size_t)i * row +
                                                 (size_t)j * ADIR_DEPTHWISE_BLOCK;
                    ADIR_UNROLL
                    for (l = 0; l < ADIR_DEPTHWISE_LANES; ++l) {
                        acc[i * 3 + j][l] = ADIR_FMA(g[l], x_ij[l], acc[i * 3 + j][l]);
                    }
                }
            }
        }
    }
    for (t = 0; t < 9; ++t) {
        for (l = 0; l < ADIR_DEPTHWISE_LANES; ++l) {
            acc_io[t * ADIR_DEPTHWISE_BLOCK + l] = acc[t][l];
        }
    }
}

/* to[l] = from[l * apart] for the count < BLOCK channels of a block, a pixel at a time: each
 * pixel's line of `to` written whole once (a channel at a time, the planes of DS-CNN's and
 * MobileNet's larger images wrote each line 16 times over: 3 times slower). */
static ADIR_INLINE void adir_depthwise_interleave(const float *restrict from, size_t apart,
                                                  int32_t count, float *restrict to)
{
    int32_t l;
    if (count == ADIR_DEPTHWISE_BLOCK) {
        ADIR_UNROLL
        for (l = 0; l < ADIR_DEPTHWISE_BLOCK; ++l) {
            to[l] = from[(size_t)l * apart];
        }
        return;
    }
    for (l = 0; l < count; ++l) {
        to[l] = from[(size_t)l * apart];
    }
}

/* A block of 16 channels' planes of height x width pixels (from, `apart` floats apart)
 * interleaved into a padded plane of hp x wp pixels, [pixel][lane] (rows wp BLOCK apart):
 * pixel (r, col) to (r + pad_top, col + pad_left), the pixels that fall past the plane's
 * bottom or right dropped (no window reads them). With 16-float vectors, 16 pixels at a time
 * as a 16 x 16 block transposed in registers (adir_transpose16), then stored a pixel's vector
 * each (the last block overlapping the one before it: the same floats stored again): the
 * scalar copy below, one float at a time, took three quarters of DS-CNN's weight gradient
 * (60 of 83 us a layer at batch 16, Zen 4). */
static void adir_depthwise_interleave_plane(const float *restrict from, size_t apart,
                                            int32_t count, int32_t height, int32_t width,
                                            int32_t pad_top, int32_t pad_left, int32_t hp,
                                            int32_t wp, float *restrict to)
{
    /* The image's rows and columns that the padded plane holds: [r0, r1) and [c0, c1). */
    const int32_t r0 = pad_top < hp ? pad_top : hp, c0 = pad_left < wp ? pad_left : wp;
    const int32_t r1 = pad_top + height < hp ? pad_top + height : hp;
    const int32_t c1 = pad_left + width < wp ? pad_left + width : wp;
    int32_t r, col;
#if ADIR_TRANSPOSE16
    const size_t plane = (size_t)height * (size_t)width;
    if (count == ADIR_DEPTHWISE_BLOCK && plane >= 16u) {
        size_t k0 = 0;
        int32_t j, l;
        for (;;) {
            adir_lanes16 v[16];
            /* pixel k0's row and column, then each next pixel's */
            r = (int32_t)(k0 / (size_t)width), col = (int32_t)(k0 % (size_t)width);
            for (l = 0; l < 16; ++l) {
                memcpy(&v[l], from + (size_t)l * apart + k0, sizeof v[l]);
            }
            adir_transpose16(v);
            for (j = 0; j < 16; ++j) {
                const int32_t row = r + pad_top, column = col + pad_left;
                if (row < r1 && column < c1) {
                    memcpy(to + ((size_t)row * (size_t)wp + (size_t)column) *
                                    ADIR_DEPTHWISE_BLOCK,
                           &v[j], sizeof v[j]);
                }
                if (++col == width) {
                    col = 0, ++r;
                }
            }
            if (k0 + 16u == plane) {
                return;
            }
            k0 = k0 + 32u <= plane ? k0 + 16u : plane - 16u;
        }
    }
#endif
    for (r = r0; r < r1; ++r) {
        const size_t at = (size_t)(r - pad_top) * (size_t)width;
        float *to_r = to + (size_t)r * (size_t)wp * ADIR_DEPTHWISE_BLOCK;
        for (col = c0; col < c1; ++col) {
            adir_depthwise_interleave(from + at + (size_t)(col - pad_left), apart, count,
                                      to_r + (size_t)col * ADIR_DEPTHWISE_BLOCK);
        }
    }
}

void adir_conv2d_grad_weight_depthwise_lanes(const float *x, const float *dy, float *dw,
                                             int32_t batch, int32_t channels, int32_t height,
                                             int32_t width, int32_t out_height,
                                             int32_t out_width, int32_t stride_height,
                                             int32_t stride_width, int32_t pad_top,
                                             int32_t pad_left, float *scratch)
{
    const int32_t hp = (out_height - 1) * stride_height + 3;
    const int32_t wp = (out_width - 1) * stride_width + 3;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    float *xi = scratch, *dyi = scratch + (size_t)hp * (size_t)wp * ADIR_DEPTHWISE_BLOCK;
    float acc[9 * ADIR_DEPTHWISE_BLOCK];
    int32_t first, count, n, l, t, lane;
    /* The padding's zeros, once (the blocks write only the image's pixels), and the lanes past
     * a last block's channels (their sums are dropped). */
    memset(scratch, 0,
           (size_t)adir_depthwise_lanes_floats(out_height, out_width, stride_height,
                                               stride_width) * sizeof *scratch);
    for (first = 0; first < channels; first += ADIR_DEPTHWISE_BLOCK) {
        count = channels - first < ADIR_DEPTHWISE_BLOCK ? channels - first : ADIR_DEPTHWISE_BLOCK;
        memset(acc, 0, sizeof acc);
        for (n = 0; n < batch; ++n) {
            const float *x_n = x + ((size_t)n * (size_t)channels + (size_t)first) * plane;
            const float *dy_n = dy + ((size_t)n * (size_t)channels + (size_t)first) * out_plane;
            adir_depthwise_interleave_plane(x_n, plane, count, height, width, pad_top,
                                            pad_left, hp, wp, xi);
            adir_depthwise_interleave_plane(dy_n, out_plane, count, out_height, out_width, 0, 0,
                                            out_height, out_width, dyi);
            for (lane = 0; lane < ADIR_DEPTHWISE_BLOCK; lane += ADIR_DEPTHWISE_LANES) {
                adir_depthwise_lanes_sums(xi + lane, dyi + lane, (size_t)wp, out_height,
                                          out_width, stride_height, stride_width, acc + lane);
            }
        }
        for (l = 0; l < count; ++l) {
            for (t = 0; t < 9; ++t) {
                dw[(size_t)(first + l) * 9u + (size_t)t] = acc[t * ADIR_DEPTHWISE_BLOCK + l];
            }
        }
    }
}

/* dxi (the padded plane's [row][column][lane], rows wp apart) += the adjoint of the forward pass
 * for one sample's dy (dyi[pixel][lane]), the weights wi[t][lane] (rows BLOCK apart): output
 * pixels in row-major order, so each pixel of dxi gets its terms in the reference's order. */
ADIR_NOINLINE static void adir_depthwise_lanes_scatter(float *restrict dxi,
                                                       const float *restrict dyi,
                                                       const float *restrict wi, size_t wp,
                                                       int32_t out_height, int32_t out_width,
                                                       int32_t stride_height,
                                                       int32_t stride_width)
{
    float w[9][ADIR_DEPTHWISE_LANES];
    const size_t row = wp * ADIR_DEPTHWISE_BLOCK;
    int32_t p, q, t, i, j, l;
    for (t = 0; t < 9; ++t) {
        for (l = 0; l < ADIR_DEPTHWISE_LANES; ++l) {
            w[t][l] = wi[t * ADIR_DEPTHWISE_BLOCK + l];
        }
    }
    for (p = 0; p < out_height; ++p) {
        float *restrict dx_p = dxi + (size_t)(p * stride_height) * row;
        const float *restrict g_p = dyi + (size_t)p * (size_t)out_width * ADIR_DEPTHWISE_BLOCK;
        for (q = 0; q < out_width; ++q) {
            float *restrict dx_q = dx_p + (size_t)(q * stride_width) * ADIR_DEPTHWISE_BLOCK;
            const float *restrict g = g_p + (size_t)q * ADIR_DEPTHWISE_BLOCK;
            ADIR_UNROLL
            for (i = 0; i < 3; ++i) {
                ADIR_UNROLL
                for (j = 0; j < 3; ++j) {
                    float *restrict dx_ij = dx_q + (size_t)i * row +
                                            (size_t)j * ADIR_DEPTHWISE_BLOCK;
                    ADIR_UNROLL
                    for (l = 0; l < ADIR_DEPTHWISE_LANES; ++l) {
                        dx_ij[l] = ADIR_FMA(w[i * 3 + j][l], g[l], dx_ij[l]);
                    }
                }
            }
        }
    }
}

void adir_conv2d_grad_input_depthwise_lanes(const float *dy, const float *w, float *dx,
                                            int32_t batch, int32_t channels, int32_t height,
                                            int32_t width, int32_t out_height,
                                            int32_t out_width, int32_t stride_height,
                                            int32_t stride_width, int32_t pad_top,
                                            int32_t pad_left, float *scratch)
{
    const int32_t hp = (out_height - 1) * stride_height + 3;
    const int32_t wp = (out_width - 1) * stride_width + 3;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t padded = (size_t)hp * (size_t)wp * ADIR_DEPTHWISE_BLOCK;
    float *dxi = scratch, *dyi = scratch + padded;
    float wi[9 * ADIR_DEPTHWISE_BLOCK];
    int32_t first, count, n, l, r, col, t, lane;
    /* the lanes past a last block's channels: their sums are dropped */
    memset(dyi, 0, out_plane * ADIR_DEPTHWISE_BLOCK * sizeof *dyi);
    memset(wi, 0, sizeof wi);
    for (first = 0; first < channels; first += ADIR_DEPTHWISE_BLOCK) {
        count = channels - first < ADIR_DEPTHWISE_BLOCK ? channels - first : ADIR_DEPTHWISE_BLOCK;
        for (t = 0; t < 9; ++t) {
            adir_depthwise_interleave(w + (size_t)first * 9u + (size_t)t, 9u, count,
                                      wi + t * ADIR_DEPTHWISE_BLOCK);
        }
        for (n = 0; n < batch; ++n) {
            const size_t at = (size_t)n * (size_t)channels + (size_t)first;
            adir_depthwise_interleave_plane(dy + at * out_plane, out_plane, count, out_height,
                                            out_width, 0, 0, out_height, out_width, dyi);
            memset(dxi, 0, padded * sizeof *dxi);
            for (lane = 0; lane < ADIR_DEPTHWISE_BLOCK; lane += ADIR_DEPTHWISE_LANES) {
                adir_depthwise_lanes_scatter(dxi + lane, dyi + lane, wi + lane, (size_t)wp,
                                             out_height, out_width, stride_height,
                                             stride_width);
            }
            /* dx: the image's pixels of the padded plane; any below or right of it no window
             * read: 0 */
            for (l = 0; l < count; ++l) {
                float *dx_l = dx + (at + (size_t)l) * plane;
                for (r = 0; r < height; ++r) {
                    const int32_t row = r + pad_top;
                    for (col = 0; col < width; ++col) {
                        const int32_t column = col + pad_left;
                        dx_l[(size_t)r * (size_t)width + (size_t)col] =
                            row < hp && column < wp
                                ? dxi[((size_t)row * (size_t)wp + (size_t)column) *
                                          ADIR_DEPTHWISE_BLOCK +
                                      (size_t)l]
                                : 0.0f;
                    }
                }
            }
        }
    }
}
