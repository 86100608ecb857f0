/* adir_tuned_pool.c: the tuned max pools of the conv_and_pool family: adir_tuned_maxpool2d and
 * adir_tuned_maxpool2d_grad (references: adir_maxpool2d and adir_maxpool2d_grad in
 * reference/adir_conv_and_pool.c), for pools whose windows tile the image only: select-kernels
 * chooses the references for the others. Both pick the same pixel of each window as the reference,
 * so they agree with it bit for bit. */
#include <string.h>

#include "adir_tuned.h"

/* Pools whose windows tile the image (kernel == stride, no padding, LeNet's and most CNNs'):
 * every pixel is in at most one window, and every window lies inside the image. Their scans
 * choose with selects instead of branches (a branch per pixel on data is mispredicted half the
 * time), and the gradient writes each window's pixels once, dy at the chosen one and 0 at the
 * others (0 + dy, as the scattering adds it to a cleared dx: -0.0 becomes 0.0 alike). */

/* The position in the window (row-major) and the value of the pixel adir_max_position picks
 * in a window that lies inside the image: window[i * width + j], i < kh, j < kw. */
static float adir_window_max(const float *window, int32_t width, int32_t kh, int32_t kw,
                             int32_t *position)
{
    float max = window[0];
    int32_t best = 0, i, j;
    for (i = 0; i < kh; ++i) {
        const float *row = window + (size_t)i * (size_t)width;
        for (j = 0; j < kw; ++j) {
            const float value = row[j];
            /* The first pixel either sets max (value > -inf, or nan) or keeps -inf: the same.
             * | rather than ||: no branch to mispredict. */
            const int32_t take = (value > max) | (value != value);
            max = take ? value : max;
            best = take ? i * kw + j : best;
        }
    }
    *position = best;
    return max;
}

/* One 2 x 2 window (pixels top[0..1], bottom[0..1]): its maximum and the position 2 * i + j of
 * the pixel adir_window_max picks, with selects. */
static void adir_max2x2(const float *top, const float *bottom, float *max, int32_t *best)
{
    const float a = top[0], b = top[1], c = bottom[0], d = bottom[1];
    float m = a;
    int32_t at = 0, take;
    take = (b > m) | (b != b);
    m = take ? b : m;
    at = take ? 1 : at;
    take = (c > m) | (c != c);
    m = take ? c : m;
    at = take ? 2 : at;
    take = (d > m) | (d != d);
    m = take ? d : m;
    at = take ? 3 : at;
    *max = m;
    *best = at;
}

#if ADIR_GCC
/* n windows along a pair of rows, n a constant where this is inlined. gcc leaves a loop of 4
 * windows inside adir_max2x2_row scalar, with a branch per pixel, and vectorizes the same loop
 * as an inlined function of its own (clang does the opposite: it keeps the loop). */
static ADIR_INLINE void adir_max2x2_block(const float *top, const float *bottom,
                                               float *max, int32_t *best, int32_t n)
{
    int32_t l;
    for (l = 0; l < n; ++l) {
        adir_max2x2(top + 2 * l, bottom + 2 * l, max + l, best + l);
    }
}
#endif

/* The windows of 2 x 2 along a pair of rows (top, top + width): max[q] and best[q] as
 * adir_max2x2 gives them, for q < count <= width / 2. Blocks of 8 and 4 windows with constant
 * bounds: gcc and clang vectorize each whole, also in rows too short for a loop of the widest
 * vectors (LeNet's have 12 and 4 windows). */
static void adir_max2x2_row(const float *restrict top, int32_t width, int32_t count,
                            float *restrict max, int32_t *restrict best)
{
    const float *restrict bottom = top + width;
    int32_t q = 0, l;
    for (; q + 8 <= count; q += 8) {
        for (l = 0; l < 8; ++l) {
            adir_max2x2(top + 2 * (q + l), bottom + 2 * (q + l), max + q + l, best + q + l);
        }
    }
    for (; q + 4 <= count; q += 4) {
#if ADIR_GCC
        adir_max2x2_block(top + 2 * q, bottom + 2 * q, max + q, best + q, 4);
#else
        for (l = 0; l < 4; ++l) {
            adir_max2x2(top + 2 * (q + l), bottom + 2 * (q + l), max + q + l, best + q + l);
        }
#endif
    }
    for (; q < count; ++q) {
        adir_max2x2(top + 2 * q, bottom + 2 * q, max + q, best + q);
    }
}

/* How many 2 x 2 windows adir_max2x2_row takes at a time (its positions are on the stack). */
#define ADIR_POOL_RUN 64

static void adir_maxpool2d_tiling(const float *x, float *y, int32_t planes, int32_t height,
                                  int32_t width, int32_t out_height, int32_t out_width,
                                  int32_t kh, int32_t kw)
{
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    int32_t best[ADIR_POOL_RUN];
    int32_t k, p, q, position;
    for (k = 0; k < planes; ++k) {
        const float *x_k = x + (size_t)k * plane;
        float *y_k = y + (size_t)k * out_plane;
        for (p = 0; p < out_height; ++p) {
            const float *x_p = x_k + (size_t)(p * kh) * (size_t)width;
            float *y_p = y_k + (size_t)p * (size_t)out_width;
            if (kh == 2 && kw == 2) {
                for (q = 0; q < out_width; q += ADIR_POOL_RUN) {
                    const int32_t count =
                        out_width - q < ADIR_POOL_RUN ? out_width - q : ADIR_POOL_RUN;
                    adir_max2x2_row(x_p + (size_t)(2 * q), width, count, y_p + q, best);
                }
            } else {
                for (q = 0; q < out_width; ++q) {
                    y_p[q] = adir_window_max(x_p + (size_t)(q * kw), width, kh, kw, &position);
                }
            }
        }
    }
}

/* dx cleared, then each window's dy (0 + dy, as a scatter onto zeros adds it) stored at the
 * pixel its forward pass picked: every pixel is in at most one window. */
static void adir_maxpool2d_grad_tiling(const float *x, const float *dy, float *dx,
                                       int32_t planes, int32_t height, int32_t width,
                                       int32_t out_height, int32_t out_width, int32_t kh,
                                       int32_t kw)
{
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    float max[ADIR_POOL_RUN];
    int32_t best[ADIR_POOL_RUN];
    int32_t k, p, q, r, position;
    memset(dx, 0, (size_t)planes * plane * sizeof *dx);
    for (k = 0; k < planes; ++k) {
        const float *x_k = x + (size_t)k * plane;
        const float *dy_k = dy + (size_t)k * out_plane;
        float *dx_k = dx + (size_t)k * plane;
        for (p = 0; p < out_height; ++p) {
            const size_t top = (size_t)(p * kh) * (size_t)width;
            const float *dy_p = dy_k + (size_t)p * (size_t)out_width;
            if (kh == 2 && kw == 2) {
                for (q = 0; q < out_width; q += ADIR_POOL_RUN) {
                    const int32_t count =
                        out_width - q < ADIR_POOL_RUN ? out_width - q : ADIR_POOL_RUN;
                    float *dx_q = dx_k + top + (size_t)(2 * q);
                    adir_max2x2_row(x_k + top + (size_t)(2 * q), width, count, max, best);
                    for (r = 0; r < count; ++r) {
                        const size_t at = (size_t)(best[r] >> 1) * (size_t)width +
                                          (size_t)(2 * r + (best[r] & 1));
                        dx_q[at] = 0.0f + dy_p[q + r];
                    }
                }
            } else {
                for (q = 0; q < out_width; ++q) {
                    const size_t at = top + (size_t)(q * kw);
                    adir_window_max(x_k + at, width, kh, kw, &position);
                    dx_k[at + (size_t)(position / kw) * (size_t)width + (size_t)(position % kw)] =
                        0.0f + dy_p[q];
                }
            }
        }
    }
}

void adir_tuned_maxpool2d(const float *x, float *y, int32_t batch, int32_t channels, int32_t height,
                          int32_t width, int32_t out_height, int32_t out_width,
                          int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                          int32_t stride_width, int32_t pad_top, int32_t pad_left)
{
    /* Windows that tile the image, as select-kernels checked: stride = kernel, no padding. */
    (void)stride_height;
    (void)stride_width;
    (void)pad_top;
    (void)pad_left;
    adir_maxpool2d_tiling(x, y, batch * channels, height, width, out_height, out_width,
                          kernel_height, kernel_width);
}

void adir_tuned_maxpool2d_grad(const float *x, const float *dy, float *dx, int32_t batch,
                               int32_t channels, int32_t height, int32_t width, int32_t out_height,
                               int32_t out_width, int32_t kernel_height, int32_t kernel_width,
                               int32_t stride_height, int32_t stride_width, int32_t pad_top,
                               int32_t pad_left)
{
    /* Windows that tile the image, as select-kernels checked: stride = kernel, no padding. */
    (void)stride_height;
    (void)stride_width;
    (void)pad_top;
    (void)pad_left;
    adir_maxpool2d_grad_tiling(x, dy, dx, batch * channels, height, width, out_height,
                               out_width, kernel_height, kernel_width);
}
