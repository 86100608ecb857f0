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
 * instead where the scratch holds their planes (adir_tuned_depthwise_lanes.c: the same sums). */
#include <string.h>

#include "adir_tuned.h"
#include "adir_tuned_transpose.h"

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

/* A 3 x 3 convolution of stride 1 padded by 1 on every side, its output the image's size
 * (DS-CNN's, MobileNet's stride-1 depthwise; and the input gradient of one, by the flipped
 * kernel): no padded plane. A tap reads the plane as one flat row, at u + (i - 1) width + j - 1
 * for pixel u, a column past the left or right edge taken as 0 (the column of each pixel u,
 * u % width, is a table in scratch), a row above or below the image 0 too. Blocks of
 * ADIR_DEPTHWISE_SAME_BLOCK pixels written straight into the output, the last overlapping the
 * one before it. Each sum over the taps in order from 0, as the padded path's: the same bits.
 *
 * With 16-float vectors (adir_depthwise_same16) a block loads the inputs of its taps' middle
 * column only, three vectors, and the left and right columns' are those shifted a lane (a
 * shuffle with the vector of the block before or after: 9 unaligned 512-bit loads a block,
 * each across two cache lines, took Zen 4 about 15 cycles, against 9 for its multiply-adds);
 * and it reads the image itself, the rows above and below its plane being the planes before
 * and after it in src (cleared), the first and last planes copied into scratch between zeros
 * (a copy of each plane took 12% of the time by itself: a load waits until the stores it
 * reads are written where no one store holds all of its floats). Elsewhere
 * (adir_depthwise_same_3x3) the plane is copied whole between `width + 1` zeros above and
 * below, and each block loads its nine vectors. DS-CNN's layer at batch 16 (Zen 4, warm
 * caches): 75 -> 46 us. */
#define ADIR_DEPTHWISE_SAME_BLOCK 16

/* The scratch floats it takes, or 0 where it does not apply. */
static size_t adir_depthwise_same_floats(int32_t height, int32_t width, int32_t out_height,
                                         int32_t out_width, int32_t kernel_height,
                                         int32_t kernel_width, int32_t stride_height,
                                         int32_t stride_width, int32_t pad_top, int32_t pad_left)
{
    const size_t pixels = (size_t)height * (size_t)width;
    if (kernel_height != 3 || kernel_width != 3 || stride_height != 1 || stride_width != 1 ||
        pad_top != 1 || pad_left != 1 || out_height != height || out_width != width ||
        pixels < ADIR_DEPTHWISE_SAME_BLOCK) {
        return 0;
    }
    return 2 * pixels + 2 * ((size_t)width + 1);
}

/* The column table and the zeros around the plane (once a call). */
static void adir_depthwise_same_setup(int32_t height, int32_t width, float *scratch)
{
    const size_t pixels = (size_t)height * (size_t)width, lead = (size_t)width + 1;
    int32_t *column = (int32_t *)(void *)(scratch + pixels + 2 * lead);
    size_t u;
    memset(scratch, 0, (pixels + 2 * lead) * sizeof *scratch);
    for (u = 0; u < pixels; ++u) {
        column[u] = (int32_t)(u % (size_t)width);
    }
}

#if ADIR_TRANSPOSE16
typedef int32_t adir_depthwise_ints16 __attribute__((vector_size(64)));

/* lane l of (a, b): a's lane 15 then b's lanes 0 .. 14, and a's lanes 1 .. 15 then b's lane 0 */
#define ADIR_DEPTHWISE_BEFORE 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30
#define ADIR_DEPTHWISE_AFTER 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16

/* `sum + k * v` below is one multiply-add with one rounding where ADIR_FMA fuses (a target
 * with FMA: gcc contracts it under fp-contract=fast, clang under FP_CONTRACT ON), else a
 * multiply and an add: ADIR_FMA's terms either way. */
#if ADIR_GCC
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
#endif

static ADIR_INLINE adir_lanes16 adir_depthwise_load16(const float *p)
{
    adir_lanes16 v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The 16 sums over the taps (i, j) in order from 0 of k[i][j] times in[i][j] (the inputs each
 * tap reads, 0 in the padding), + bias where has_bias: adir_depthwise_same_3x3's sums. */
static ADIR_INLINE adir_lanes16 adir_depthwise_sums16(adir_lanes16 in[3][3], const float *k,
                                                      float bias, int has_bias)
{
#if defined(__clang__)
#pragma STDC FP_CONTRACT ON
#endif
    adir_lanes16 sum = {0.0f};
    int32_t i, j;
    for (i = 0; i < 3; ++i) {
        for (j = 0; j < 3; ++j) {
            sum = sum + k[i * 3 + j] * in[i][j];
        }
    }
    return has_bias ? sum + bias : sum;
}

/* in[i][j] for the block whose middle inputs are mid[i] (row i's at the block's pixels), from
 * the vectors before and after them (only their lanes 15 and 0 are read), taps of column j = 0
 * (2) cleared in the lanes of `left` (`right`) 0: the pixels in the image's first (last)
 * column. */
static ADIR_INLINE void adir_depthwise_inputs16(const adir_lanes16 before[3],
                                                const adir_lanes16 mid[3],
                                                const adir_lanes16 after[3],
                                                adir_depthwise_ints16 left,
                                                adir_depthwise_ints16 right,
                                                adir_lanes16 in[3][3])
{
    int32_t i;
    for (i = 0; i < 3; ++i) {
        const adir_lanes16 a = __builtin_shufflevector(before[i], mid[i], ADIR_DEPTHWISE_BEFORE);
        const adir_lanes16 c = __builtin_shufflevector(mid[i], after[i], ADIR_DEPTHWISE_AFTER);
        in[i][0] = (adir_lanes16)((adir_depthwise_ints16)a & left);
        in[i][1] = mid[i];
        in[i][2] = (adir_lanes16)((adir_depthwise_ints16)c & right);
    }
}

/* The masks of a block at pixel u0: lanes of pixels past the first column, and before the
 * last. */
static ADIR_INLINE void adir_depthwise_masks16(const int32_t *column, int32_t last,
                                               adir_depthwise_ints16 *left,
                                               adir_depthwise_ints16 *right)
{
    adir_depthwise_ints16 col;
    memcpy(&col, column, sizeof col);
    *left = col != 0;
    *right = col != last;
}

/* The 16 inputs from pixel p of the plane at src (-width <= p <= pixels + width - 15), 0 for
 * those outside the image: src's floats there are those of the planes before and after it
 * (its rows above and below are cleared), or the zeros around the plane's copy in scratch. */
static ADIR_INLINE adir_lanes16 adir_depthwise_at16(const float *src, ptrdiff_t p,
                                                    ptrdiff_t pixels)
{
    const adir_depthwise_ints16 lanes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const adir_lanes16 v = adir_depthwise_load16(src + p);
    adir_depthwise_ints16 pixel;
    if (p >= 0 && p + 16 <= pixels) {
        return v;
    }
    pixel = lanes + (int32_t)p;
    return (adir_lanes16)((adir_depthwise_ints16)v & ((pixel >= 0) & (pixel < (int32_t)pixels)));
}

/* dst = src's convolution with k (9 taps in the sums' order) + bias, as adir_depthwise_same_3x3:
 * blocks of 16 pixels from u0 = 0 up, each loading only the middle inputs of the block after it
 * (the last whole block's after inputs are a lane of padding or of the image: one float), then a
 * last block overlapping the one before it where 16 does not divide the plane, loading its nine
 * vectors. */
static ADIR_INLINE void adir_depthwise_same16_plane(const float *restrict src,
                                                    const float *restrict k, float bias,
                                                    int has_bias, int32_t width,
                                                    ptrdiff_t pixels, const int32_t *column,
                                                    float *restrict dst)
{
    const ptrdiff_t whole = pixels / 16, row[3] = {-(ptrdiff_t)width, 0, (ptrdiff_t)width};
    const int32_t last = width - 1;
    adir_lanes16 before[3] = {{0.0f}, {0.0f}, {0.0f}}, mid[3], after[3], in[3][3], sum;
    adir_depthwise_ints16 left, right;
    ptrdiff_t b;
    int32_t i, j;
    for (i = 0; i < 3; ++i) {
        mid[i] = adir_depthwise_at16(src, row[i], pixels);
    }
    for (b = 0; b + 1 < whole; ++b) {
        for (i = 0; i < 3; ++i) {
            after[i] = adir_depthwise_at16(src, 16 * (b + 1) + row[i], pixels);
        }
        adir_depthwise_masks16(column + 16 * b, last, &left, &right);
        adir_depthwise_inputs16(before, mid, after, left, right, in);
        sum = adir_depthwise_sums16(in, k, bias, has_bias);
        memcpy(dst + 16 * b, &sum, sizeof sum);
        for (i = 0; i < 3; ++i) {
            before[i] = mid[i], mid[i] = after[i];
        }
    }
    for (i = 0; i < 3; ++i) {
        const ptrdiff_t p = 16 * whole + row[i];
        const adir_lanes16 lane0 = {p >= 0 && p < pixels ? src[p] : 0.0f};
        after[i] = lane0;
    }
    adir_depthwise_masks16(column + 16 * b, last, &left, &right);
    adir_depthwise_inputs16(before, mid, after, left, right, in);
    sum = adir_depthwise_sums16(in, k, bias, has_bias);
    memcpy(dst + 16 * b, &sum, sizeof sum);
    if (pixels % 16 != 0) {
        const ptrdiff_t at = pixels - 16;
        adir_depthwise_masks16(column + at, last, &left, &right);
        for (i = 0; i < 3; ++i) {
            for (j = 0; j < 3; ++j) {
                in[i][j] = adir_depthwise_at16(src, at + row[i] + j - 1, pixels);
            }
            in[i][0] = (adir_lanes16)((adir_depthwise_ints16)in[i][0] & left);
            in[i][2] = (adir_lanes16)((adir_depthwise_ints16)in[i][2] & right);
        }
        sum = adir_depthwise_sums16(in, k, bias, has_bias);
        memcpy(dst + at, &sum, sizeof sum);
    }
}

/* adir_depthwise_same_planes with 16-float vectors: every plane by adir_depthwise_same16_plane,
 * in one call. */
ADIR_NOINLINE static void adir_depthwise_same16(const float *restrict src,
                                                const float *restrict w, int flip,
                                                const float *restrict bias, int32_t planes,
                                                int32_t channels, int32_t height, int32_t width,
                                                float *restrict scratch, float *restrict dst)
{
    const ptrdiff_t pixels = (ptrdiff_t)height * (ptrdiff_t)width;
    const size_t lead = (size_t)width + 1;
    const int32_t *column = (const int32_t *)(const void *)(scratch + (size_t)pixels + 2 * lead);
    float *x = scratch + lead;
    /* A plane reads up to width + 1 floats past its end: with planes of one row, more than the
     * next plane holds. */
    const int32_t past = height == 1 ? 2 : 1;
    int32_t c, channel = 0, t;
    for (c = 0; c < planes; ++c) {
        const float *plane = src + (size_t)c * (size_t)pixels;
        float k[9];
        for (t = 0; t < 9; ++t) {
            k[t] = w[(size_t)channel * 9u + (size_t)(flip ? 8 - t : t)];
        }
        /* The first plane and the last `past` read their copy in scratch: no plane of src is
         * before the first, nor after the last. */
        if (c == 0 || c >= planes - past) {
            memcpy(x, plane, (size_t)pixels * sizeof *x);
            plane = x;
        }
        adir_depthwise_same16_plane(plane, k, bias ? bias[channel] : 0.0f, bias != NULL, width,
                                    pixels, column, dst + (size_t)c * (size_t)pixels);
        channel = channel + 1 == channels ? 0 : channel + 1;
    }
}

#if ADIR_GCC
#pragma GCC pop_options
#endif
#else
/* dst (one plane) = src's convolution with k (9 taps in the sums' order), + bias. */
ADIR_NOINLINE static void adir_depthwise_same_3x3(const float *restrict src,
                                                  const float *restrict k, float bias,
                                                  int has_bias, int32_t height, int32_t width,
                                                  float *restrict scratch, float *restrict dst)
{
    const size_t pixels = (size_t)height * (size_t)width, lead = (size_t)width + 1;
    const size_t wd = (size_t)width;
    float *restrict x = scratch + lead;
    const int32_t *restrict column = (const int32_t *)(const void *)(scratch + pixels + 2 * lead);
    const int32_t last = width - 1;
    size_t u0, l;
    memcpy(x, src, pixels * sizeof *x);
    for (u0 = 0; u0 < pixels; u0 += ADIR_DEPTHWISE_SAME_BLOCK) {
        const size_t at =
            pixels - u0 < ADIR_DEPTHWISE_SAME_BLOCK ? pixels - ADIR_DEPTHWISE_SAME_BLOCK : u0;
        const float *restrict x0 = x + at - wd - 1, *restrict x1 = x + at - 1;
        const float *restrict x2 = x + at + wd - 1;
        const int32_t *restrict col = column + at;
        float *restrict out = dst + at;
        for (l = 0; l < ADIR_DEPTHWISE_SAME_BLOCK; ++l) {
            const int left = col[l] > 0, right = col[l] < last;
            const float a0 = x0[l], a1 = x0[l + 1], a2 = x0[l + 2];
            const float b0 = x1[l], b1 = x1[l + 1], b2 = x1[l + 2];
            const float c0 = x2[l], c1 = x2[l + 1], c2 = x2[l + 2];
            float sum = 0.0f;
            sum = ADIR_FMA(k[0], left ? a0 : 0.0f, sum);
            sum = ADIR_FMA(k[1], a1, sum);
            sum = ADIR_FMA(k[2], right ? a2 : 0.0f, sum);
            sum = ADIR_FMA(k[3], left ? b0 : 0.0f, sum);
            sum = ADIR_FMA(k[4], b1, sum);
            sum = ADIR_FMA(k[5], right ? b2 : 0.0f, sum);
            sum = ADIR_FMA(k[6], left ? c0 : 0.0f, sum);
            sum = ADIR_FMA(k[7], c1, sum);
            sum = ADIR_FMA(k[8], right ? c2 : 0.0f, sum);
            out[l] = has_bias ? sum + bias : sum;
        }
    }
}
#endif

/* Every plane of src (planes = batch x channels of them, each the image's size) convolved by its
 * channel's 3 x 3 kernel in w into dst, + bias where given: the forward pass with the taps in
 * order, and the input gradient (flip) with them in reverse, the reference's order for each. */
static void adir_depthwise_same_planes(const float *src, const float *w, int flip,
                                       const float *bias, int32_t planes, int32_t channels,
                                       int32_t height, int32_t width, float *scratch, float *dst)
{
#if ADIR_TRANSPOSE16
    adir_depthwise_same_setup(height, width, scratch);
    adir_depthwise_same16(src, w, flip, bias, planes, channels, height, width, scratch, dst);
#else
    const size_t plane = (size_t)height * (size_t)width;
    int32_t c, t;
    adir_depthwise_same_setup(height, width, scratch);
    for (c = 0; c < planes; ++c) {
        const size_t channel = (size_t)(c % channels);
        float k[9];
        for (t = 0; t < 9; ++t) {
            k[t] = w[channel * 9u + (size_t)(flip ? 8 - t : t)];
        }
        adir_depthwise_same_3x3(src + (size_t)c * plane, k, bias ? bias[channel] : 0.0f,
                                bias != NULL, height, width, scratch, dst + (size_t)c * plane);
    }
#endif
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
