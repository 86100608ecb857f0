/* adir_tuned_depthwise_same.c: the depthwise 3 x 3 convolution of stride 1 padded by 1 on every
 * side, its output the image's size ("same": DS-CNN's and MobileNet's stride-1 depthwise
 * layers), and the input gradient of one by the flipped kernel, which adir_tuned_depthwise.c's
 * adir_tuned_conv2d_depthwise and adir_tuned_conv2d_grad_input_depthwise run here where
 * adir_depthwise_same_floats applies (adir_tuned.h): no padded plane. A tap reads the plane as one flat row, at u + (i - 1) width + j - 1
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
#include <string.h>

#include "adir_tuned.h"
#include "adir_tuned_transpose.h"

#define ADIR_DEPTHWISE_SAME_BLOCK 16

size_t adir_depthwise_same_floats(int32_t height, int32_t width, int32_t out_height,
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

/* k = channel's 9 taps of w in the sums' order: reversed for the input gradient (flip). */
static void adir_depthwise_same_taps(const float *w, size_t channel, int flip, float k[9])
{
    int32_t t;
    for (t = 0; t < 9; ++t) {
        k[t] = w[channel * 9u + (size_t)(flip ? 8 - t : t)];
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
    int32_t c, channel = 0;
    for (c = 0; c < planes; ++c) {
        const float *plane = src + (size_t)c * (size_t)pixels;
        float k[9];
        adir_depthwise_same_taps(w, (size_t)channel, flip, k);
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

void adir_depthwise_same_planes(const float *src, const float *w, int flip, const float *bias,
                                int32_t planes, int32_t channels, int32_t height, int32_t width,
                                float *scratch, float *dst)
{
#if ADIR_TRANSPOSE16
    adir_depthwise_same_setup(height, width, scratch);
    adir_depthwise_same16(src, w, flip, bias, planes, channels, height, width, scratch, dst);
#else
    const size_t plane = (size_t)height * (size_t)width;
    int32_t c;
    adir_depthwise_same_setup(height, width, scratch);
    for (c = 0; c < planes; ++c) {
        const size_t channel = (size_t)(c % channels);
        float k[9];
        adir_depthwise_same_taps(w, channel, flip, k);
        adir_depthwise_same_3x3(src + (size_t)c * plane, k, bias ? bias[channel] : 0.0f,
                                bias != NULL, height, width, scratch, dst + (size_t)c * plane);
    }
#endif
}
