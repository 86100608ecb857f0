/* adir_conv_and_pool.c: the reference kernels of the conv_and_pool family (declared in
 * adir_conv_and_pool.h).
 *
 * Direct loops over the output pixels. For each window, adir_taps_inside finds the kernel rows
 * and columns that land inside the image, so the inner loops read no padding and test no
 * bounds; padding contributes nothing (zeros) or never wins (-inf for maxpool). The adjoints
 * scatter: they clear their output and then add each window's share, in the forward op's
 * loop order, so the adjoints of the pools add in PyTorch's order (row-major windows).
 */
#include <math.h>
#include <string.h>

#include "adir_kernels.h"

/* The kernel taps [*first, *end) of a window whose tap k reads position start + k * dilation
 * (start may be negative) that land inside [0, size). */
static void adir_taps_inside(int32_t start, int32_t size, int32_t kernel, int32_t dilation,
                             int32_t *first, int32_t *end)
{
    int32_t lo = start < 0 ? (-start + dilation - 1) / dilation : 0;
    int32_t hi = start < size ? (size - start + dilation - 1) / dilation : 0;
    if (hi > kernel) {
        hi = kernel;
    }
    if (lo > hi) {
        lo = hi;
    }
    *first = lo;
    *end = hi;
}

/* --- convolution ------------------------------------------------------------------------ */

/* Convolutions with stride 1, no dilation and no padding (LeNet's, and every 'valid' conv) take
 * a faster path in each of the three kernels below; others run the direct loops. The fast
 * paths are register-blocked like adir_matmul (adir_matmul_and_shape.c), on the im2col view of
 * a convolution without building it: the row of im2col for channel c and tap (i, j), at output
 * row p, is the contiguous run x[c, p + i, j .. j + out_width).
 *
 * - Forward: tiles of OB output channels x QB pixels of RB output rows, summed over the
 *   group's channels and the taps in the direct loops' order (c, i, j), the bias added last.
 * - Weight gradient: tiles of OB output channels x TB taps (c, i, j), each a dot product over
 *   the batch and the output pixels, split into QB interleaved partial sums along the row.
 * - Input gradient: tiles of OB input channels x QB pixels of one input row and one kernel
 *   column, summed over the kernel rows that reach the row and the group's outputs, then added
 *   to dx (once per kernel column).
 *
 * The forward and input-gradient tiles also come NARROW = 3/4 OB wide, for channel counts that
 * they split evenly and OB does not (LeNet's 6), rather than repeat channels.
 *
 * With a fast fused multiply-add (C99's FP_FAST_FMAF) each step rounds once. */

#if defined(FP_FAST_FMAF)
#define ADIR_CONV_FMA(x, y, acc) fmaf(x, y, acc)
#else
#define ADIR_CONV_FMA(x, y, acc) ((acc) + (x) * (y))
#endif

/* Tiles are compiled on their own (as in adir_matmul): inlined, clang vectorizes the loops
 * around them instead. */
#if defined(__GNUC__)
#define ADIR_CONV_NOINLINE __attribute__((noinline))
#define ADIR_CONV_INLINE __inline__ __attribute__((always_inline))
#else
#define ADIR_CONV_NOINLINE
#define ADIR_CONV_INLINE
#endif

/* gcc below -O3 unrolls no loop that grows the code, and without AVX it would then leave a
 * tile in memory: it is told to unroll the tiles' loops (a no-op elsewhere). */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__AVX__)
#define ADIR_CONV_UNROLL _Pragma("GCC unroll 16")
#else
#define ADIR_CONV_UNROLL
#endif

#ifndef ADIR_CONV_OB
#if defined(__AVX512F__)
/* A weight-gradient tile of 4 x 5 sums takes 9 loads per 20 multiply-adds (4 x 4: 8 per 16), a
 * 5-wide kernel row at once, and its 20 accumulators and 9 operands fit in 32 registers. */
#define ADIR_CONV_OB 8
#define ADIR_CONV_WB 4
#define ADIR_CONV_TB 5
#else
#define ADIR_CONV_OB 4
#define ADIR_CONV_WB 2
#define ADIR_CONV_TB 4
#endif
/* A forward tile spans RB output rows: with AVX's 16 (or AVX-512's 32) vector registers two
 * rows of accumulators fit and share each weight loaded; SSE's 16 narrow ones hold one row. */
#if defined(__AVX__)
#define ADIR_CONV_RB 2
#else
#define ADIR_CONV_RB 1
#endif
#define ADIR_CONV_QB 8
#endif

/* Whether a conv has stride 1, no dilation and no padding (the output is what fits). */
static int adir_conv_is_plain(int32_t height, int32_t width, int32_t out_height,
                              int32_t out_width, int32_t kernel_height, int32_t kernel_width,
                              int32_t stride_height, int32_t stride_width, int32_t pad_top,
                              int32_t pad_left, int32_t dilation_height, int32_t dilation_width)
{
    return stride_height == 1 && stride_width == 1 && dilation_height == 1 &&
           dilation_width == 1 && pad_top == 0 && pad_left == 0 &&
           out_height == height - kernel_height + 1 && out_width == width - kernel_width + 1;
}

/* The smaller of a block size and what is left. */
static int32_t adir_conv_block(int32_t left, int32_t block)
{
    return left < block ? left : block;
}

/* One forward tile, of output rows p .. p + rows - 1 (rows <= RB): acc[o][r][q] (o < ob,
 * r < RB, q < QB) = the sum over c < channels, i < kh, j < kw of w_o[o][c][i][j] *
 * x[c * plane + (r + i) * width + j + q] (x at the tile's first pixel of its group's first
 * channel, w_o[o] a row of w); y[o * out_plane + r * out_width + q] = acc[o][r][q] (+ bias[o])
 * for o < outs, r < rows. RB rows share each weight loaded (RB x QB multiply-adds per weight).
 * Missing rows repeat the last one (computed, not stored), and so do the w rows of missing
 * output channels. ob <= OB channels are computed: a constant in each tile below, which inlines
 * this. */
ADIR_CONV_INLINE static void adir_conv_sums(const float *restrict x, size_t plane,
                                           int32_t width, const float *restrict w,
                                           size_t w_row, int32_t channels, int32_t kh,
                                           int32_t kw, const float *bias, float *restrict y,
                                           size_t out_plane, int32_t out_width, int32_t outs,
                                           int32_t rows, int32_t ob)
{
    float acc[ADIR_CONV_OB][ADIR_CONV_RB][ADIR_CONV_QB];
    const float *w_o[ADIR_CONV_OB];
    size_t x_at[ADIR_CONV_RB];
    int32_t o, r, q, c, i, j;
    size_t tap = 0;
    for (r = 0; r < ADIR_CONV_RB; ++r) {
        x_at[r] = (size_t)(r < rows ? r : rows - 1) * (size_t)width;
    }
    for (o = 0; o < ADIR_CONV_OB; ++o) {
        w_o[o] = w + (size_t)(o < outs ? o : outs - 1) * w_row;
        for (r = 0; r < ADIR_CONV_RB; ++r) {
            for (q = 0; q < ADIR_CONV_QB; ++q) {
                acc[o][r][q] = 0.0f;
            }
        }
    }
    for (c = 0; c < channels; ++c) {
        for (i = 0; i < kh; ++i) {
            const float *x_row = x + (size_t)c * plane + (size_t)i * (size_t)width;
            for (j = 0; j < kw; ++j, ++tap) {
                float weight[ADIR_CONV_OB];
                ADIR_CONV_UNROLL
                for (o = 0; o < ob; ++o) {
                    weight[o] = w_o[o][tap];
                }
                ADIR_CONV_UNROLL
                for (r = 0; r < ADIR_CONV_RB; ++r) {
                    ADIR_CONV_UNROLL
                    for (q = 0; q < ADIR_CONV_QB; ++q) {
                        const float value = x_row[x_at[r] + (size_t)(j + q)];
                        ADIR_CONV_UNROLL
                        for (o = 0; o < ob; ++o) {
                            acc[o][r][q] = ADIR_CONV_FMA(weight[o], value, acc[o][r][q]);
                        }
                    }
                }
            }
        }
    }
    for (o = 0; o < outs; ++o) {
        for (r = 0; r < rows; ++r) {
            float *y_r = y + (size_t)o * out_plane + (size_t)r * (size_t)out_width;
            for (q = 0; q < ADIR_CONV_QB; ++q) {
                y_r[q] = bias ? acc[o][r][q] + bias[o] : acc[o][r][q];
            }
        }
    }
}

/* Tiles of OB and of NARROW output channels (6, LeNet's conv1, are a tile of 6, not a tile of
 * 8 of which 2 are repeats). */
#define ADIR_CONV_NARROW (ADIR_CONV_OB - ADIR_CONV_OB / 4)

ADIR_CONV_NOINLINE static void adir_conv_tile(const float *restrict x, size_t plane,
                                              int32_t width, const float *restrict w,
                                              size_t w_row, int32_t channels, int32_t kh,
                                              int32_t kw, const float *bias, float *restrict y,
                                              size_t out_plane, int32_t out_width, int32_t outs,
                                              int32_t rows)
{
    adir_conv_sums(x, plane, width, w, w_row, channels, kh, kw, bias, y, out_plane, out_width,
                   outs, rows, ADIR_CONV_OB);
}

ADIR_CONV_NOINLINE static void adir_conv_tile_narrow(const float *restrict x, size_t plane,
                                                     int32_t width, const float *restrict w,
                                                     size_t w_row, int32_t channels,
                                                     int32_t kh, int32_t kw, const float *bias,
                                                     float *restrict y, size_t out_plane,
                                                     int32_t out_width, int32_t outs,
                                                     int32_t rows)
{
    adir_conv_sums(x, plane, width, w, w_row, channels, kh, kw, bias, y, out_plane, out_width,
                   outs, rows, ADIR_CONV_NARROW);
}

/* The tile size for count outputs (or channels): narrow tiles when they split them evenly and
 * wide ones do not. */
static int32_t adir_conv_tile_size(int32_t count)
{
    return count % ADIR_CONV_OB != 0 && count % ADIR_CONV_NARROW == 0 ? ADIR_CONV_NARROW
                                                                       : ADIR_CONV_OB;
}

/* The same at the right edge of a row: cols < QB pixels, one output channel at a time. */
static void adir_conv_edge(const float *x, size_t plane, int32_t width, const float *w,
                           size_t w_row, int32_t channels, int32_t kh, int32_t kw,
                           const float *bias, float *y, size_t out_plane, int32_t outs,
                           int32_t cols)
{
    int32_t o, q, c, i, j;
    for (o = 0; o < outs; ++o) {
        for (q = 0; q < cols; ++q) {
            const float *w_o = w + (size_t)o * w_row;
            float acc = 0.0f;
            size_t tap = 0;
            for (c = 0; c < channels; ++c) {
                for (i = 0; i < kh; ++i) {
                    const float *x_row = x + (size_t)c * plane + (size_t)i * (size_t)width;
                    for (j = 0; j < kw; ++j, ++tap) {
                        acc = ADIR_CONV_FMA(w_o[tap], x_row[j + q], acc);
                    }
                }
            }
            y[(size_t)o * out_plane + (size_t)q] = bias ? acc + bias[o] : acc;
        }
    }
}

static void adir_conv2d_plain(const float *x, const float *w, const float *bias, float *y,
                              int32_t batch, int32_t channels, int32_t height, int32_t width,
                              int32_t out_channels, int32_t out_height, int32_t out_width,
                              int32_t kernel_height, int32_t kernel_width, int32_t groups)
{
    const int32_t group_channels = channels / groups;
    const int32_t group_outputs = out_channels / groups;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t w_row = (size_t)group_channels * (size_t)kernel_height * (size_t)kernel_width;
    const int32_t block = adir_conv_tile_size(group_outputs);
    int32_t n, g, o, p, q, r;
    for (n = 0; n < batch; ++n) {
        for (g = 0; g < groups; ++g) {
            const float *x_g = x + ((size_t)n * (size_t)channels +
                                    (size_t)g * (size_t)group_channels) * plane;
            for (o = 0; o < group_outputs; o += block) {
                const int32_t first = g * group_outputs + o;
                const int32_t outs = adir_conv_block(group_outputs - o, block);
                const float *w_first = w + (size_t)first * w_row;
                const float *bias_first = bias ? bias + first : NULL;
                float *y_o = y + ((size_t)n * (size_t)out_channels + (size_t)first) * out_plane;
                for (p = 0; p < out_height; p += ADIR_CONV_RB) {
                    const int32_t rows = adir_conv_block(out_height - p, ADIR_CONV_RB);
                    const float *x_p = x_g + (size_t)p * (size_t)width;
                    float *y_p = y_o + (size_t)p * (size_t)out_width;
                    for (q = 0; q + ADIR_CONV_QB <= out_width; q += ADIR_CONV_QB) {
                        (block == ADIR_CONV_OB ? adir_conv_tile : adir_conv_tile_narrow)(
                            x_p + q, plane, width, w_first, w_row, group_channels,
                            kernel_height, kernel_width, bias_first, y_p + q, out_plane,
                            out_width, outs, rows);
                    }
                    for (r = 0; q < out_width && r < rows; ++r) {
                        adir_conv_edge(x_p + (size_t)r * (size_t)width + q, plane, width, w_first,
                                       w_row, group_channels, kernel_height, kernel_width,
                                       bias_first, y_p + (size_t)r * (size_t)out_width + q,
                                       out_plane, outs, out_width - q);
                    }
                }
            }
        }
    }
}

/* One weight-gradient tile: dw[o * w_row + first_tap + t] (o < outs <= wb, t < taps <= TB) =
 * the sum over n < batch, p < out_height, q < out_width of dy[n, o, p, q] * x[n, c, p + i,
 * q + j], for tap first_tap + t = (c, i, j) in w's row-major order; the sum along each row is
 * split into QB interleaved partial sums. dy and x point at the tile's first output channel and
 * its group's first channel in sample 0; dy_batch and x_batch are a sample's strides. Missing
 * rows repeat the last one (computed, not stored). wb <= WB rows are computed: a constant in
 * each tile below, which inlines this. */
ADIR_CONV_INLINE static void adir_conv_weight_sums(
    const float *restrict x, size_t x_batch, size_t plane, int32_t width,
    const float *restrict dy, size_t dy_batch, size_t out_plane, int32_t out_height,
    int32_t out_width, int32_t batch, int32_t kh, int32_t kw, int32_t first_tap, int32_t outs,
    int32_t taps, float *restrict dw, size_t w_row, int32_t wb)
{
    float acc[ADIR_CONV_WB][ADIR_CONV_TB][ADIR_CONV_QB];
    float tail[ADIR_CONV_WB][ADIR_CONV_TB];
    size_t x_at[ADIR_CONV_TB], dy_at[ADIR_CONV_WB];
    const size_t kernel = (size_t)kh * (size_t)kw;
    int32_t o, t, l, n, p, q;
    for (t = 0; t < ADIR_CONV_TB; ++t) {
        const size_t tap = (size_t)first_tap + (size_t)(t < taps ? t : taps - 1);
        const size_t c = tap / kernel, i = tap % kernel / (size_t)kw, j = tap % (size_t)kw;
        x_at[t] = c * plane + i * (size_t)width + j;
    }
    for (o = 0; o < wb; ++o) {
        dy_at[o] = (size_t)(o < outs ? o : outs - 1) * out_plane;
        for (t = 0; t < ADIR_CONV_TB; ++t) {
            tail[o][t] = 0.0f;
            for (l = 0; l < ADIR_CONV_QB; ++l) {
                acc[o][t][l] = 0.0f;
            }
        }
    }
    for (n = 0; n < batch; ++n) {
        for (p = 0; p < out_height; ++p) {
            const float *x_p = x + (size_t)n * x_batch + (size_t)p * (size_t)width;
            const float *dy_p = dy + (size_t)n * dy_batch + (size_t)p * (size_t)out_width;
            for (q = 0; q + ADIR_CONV_QB <= out_width; q += ADIR_CONV_QB) {
#if defined(__AVX__) || defined(__clang__) || !defined(__GNUC__)
                /* Lanes outermost: unrolled whole (-O3, clang), the tile stays in registers. */
                for (l = 0; l < ADIR_CONV_QB; ++l) {
                    for (o = 0; o < wb; ++o) {
                        const float d = dy_p[dy_at[o] + (size_t)(q + l)];
                        for (t = 0; t < ADIR_CONV_TB; ++t) {
                            acc[o][t][l] =
                                ADIR_CONV_FMA(d, x_p[x_at[t] + (size_t)(q + l)], acc[o][t][l]);
                        }
                    }
                }
#else
                /* Lanes innermost: a loop that gcc's cheapest vectorizer (-O2) takes as it is. */
                for (o = 0; o < wb; ++o) {
                    for (t = 0; t < ADIR_CONV_TB; ++t) {
                        for (l = 0; l < ADIR_CONV_QB; ++l) {
                            acc[o][t][l] = ADIR_CONV_FMA(dy_p[dy_at[o] + (size_t)(q + l)],
                                                         x_p[x_at[t] + (size_t)(q + l)],
                                                         acc[o][t][l]);
                        }
                    }
                }
#endif
            }
            for (; q < out_width; ++q) {
                for (o = 0; o < wb; ++o) {
                    const float d = dy_p[dy_at[o] + (size_t)q];
                    for (t = 0; t < ADIR_CONV_TB; ++t) {
                        tail[o][t] = ADIR_CONV_FMA(d, x_p[x_at[t] + (size_t)q], tail[o][t]);
                    }
                }
            }
        }
    }
    for (o = 0; o < outs; ++o) {
        for (t = 0; t < taps; ++t) {
            float sum = 0.0f;
            for (l = 0; l < ADIR_CONV_QB; ++l) {
                sum += acc[o][t][l];
            }
            dw[(size_t)o * w_row + (size_t)(first_tap + t)] = sum + tail[o][t];
        }
    }
}


/* Tiles of WB and of WB - 1 output channels (6 outputs, LeNet's conv1, are two tiles of 3, not
 * a tile of 4 and a tile of 2 computed as 4). */
ADIR_CONV_NOINLINE static void adir_conv_weight_tile(
    const float *restrict x, size_t x_batch, size_t plane, int32_t width,
    const float *restrict dy, size_t dy_batch, size_t out_plane, int32_t out_height,
    int32_t out_width, int32_t batch, int32_t kh, int32_t kw, int32_t first_tap, int32_t outs,
    int32_t taps, float *restrict dw, size_t w_row)
{
    adir_conv_weight_sums(x, x_batch, plane, width, dy, dy_batch, out_plane, out_height,
                          out_width, batch, kh, kw, first_tap, outs, taps, dw, w_row,
                          ADIR_CONV_WB);
}

#if ADIR_CONV_WB > 1
ADIR_CONV_NOINLINE static void adir_conv_weight_tile_narrow(
    const float *restrict x, size_t x_batch, size_t plane, int32_t width,
    const float *restrict dy, size_t dy_batch, size_t out_plane, int32_t out_height,
    int32_t out_width, int32_t batch, int32_t kh, int32_t kw, int32_t first_tap, int32_t outs,
    int32_t taps, float *restrict dw, size_t w_row)
{
    adir_conv_weight_sums(x, x_batch, plane, width, dy, dy_batch, out_plane, out_height,
                          out_width, batch, kh, kw, first_tap, outs, taps, dw, w_row,
                          ADIR_CONV_WB - 1);
}
#endif

typedef void adir_conv_weight_tile_fn(const float *, size_t, size_t, int32_t, const float *,
                                      size_t, size_t, int32_t, int32_t, int32_t, int32_t,
                                      int32_t, int32_t, int32_t, int32_t, float *, size_t);
#if ADIR_CONV_WB > 1
#define ADIR_CONV_WEIGHT_NARROW adir_conv_weight_tile_narrow
#else
#define ADIR_CONV_WEIGHT_NARROW adir_conv_weight_tile
#endif

static void adir_conv2d_grad_weight_plain(const float *x, const float *dy, float *dw,
                                          int32_t batch, int32_t channels, int32_t height,
                                          int32_t width, int32_t out_channels,
                                          int32_t out_height, int32_t out_width,
                                          int32_t kernel_height, int32_t kernel_width,
                                          int32_t groups)
{
    const int32_t group_channels = channels / groups;
    const int32_t group_outputs = out_channels / groups;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const int32_t row_taps = group_channels * kernel_height * kernel_width;
    /* Narrow tiles when they split the outputs evenly and wide ones do not. */
    const int32_t block = group_outputs % ADIR_CONV_WB != 0 && ADIR_CONV_WB > 1 &&
                                  group_outputs % (ADIR_CONV_WB - 1) == 0
                              ? ADIR_CONV_WB - 1
                              : ADIR_CONV_WB;
    int32_t g, o, t;
    for (g = 0; g < groups; ++g) {
        const float *x_g = x + (size_t)g * (size_t)group_channels * plane;
        for (o = 0; o < group_outputs; o += block) {
            const int32_t first = g * group_outputs + o;
            const int32_t outs = adir_conv_block(group_outputs - o, block);
            for (t = 0; t < row_taps; t += ADIR_CONV_TB) {
                adir_conv_weight_tile_fn *tile =
                    block == ADIR_CONV_WB ? adir_conv_weight_tile : ADIR_CONV_WEIGHT_NARROW;
                tile(x_g, (size_t)channels * plane, plane, width, dy + (size_t)first * out_plane,
                     (size_t)out_channels * out_plane, out_plane, out_height, out_width, batch,
                     kernel_height, kernel_width, t, outs,
                     adir_conv_block(row_taps - t, ADIR_CONV_TB),
                     dw + (size_t)first * (size_t)row_taps, (size_t)row_taps);
            }
        }
    }
}

/* One input-gradient tile, for input row r, kernel column j and channels c < chans <= ob of a
 * group: acc[c][q] (q < QB) = the sum over the kernel rows i that reach row r from an output
 * row (p = r - i) and the group's outputs o < outs of w[o][c][i][j] * dy[o, p, q], then added
 * to dx[c, r, j + q]. Summing the kernel rows in the tile, not in dx, writes each element of dx
 * kh times less. dy points at the tile's first pixel in the output row of the first of those
 * kernel rows (rows t of them: dy_row apart, going up) and the group's first output channel;
 * w at w[first output][first channel][first kernel row][j] (w_step apart, going down); dx at
 * the tile's first pixel of the first channel. Missing channels repeat the last one (computed,
 * not added). ob <= OB channels are computed: a constant in each tile below, which inlines
 * this. */
ADIR_CONV_INLINE static void adir_conv_input_sums(const float *restrict dy, size_t out_plane,
                                                 size_t dy_row, const float *restrict w,
                                                 size_t w_row, size_t w_step, size_t kernel,
                                                 int32_t rows, int32_t outs,
                                                 float *restrict dx, size_t plane,
                                                 int32_t chans, int32_t ob)
{
    float acc[ADIR_CONV_OB][ADIR_CONV_QB];
    size_t w_at[ADIR_CONV_OB];
    int32_t c, q, o, t;
    for (c = 0; c < ADIR_CONV_OB; ++c) {
        w_at[c] = (size_t)(c < chans ? c : chans - 1) * kernel;
        for (q = 0; q < ADIR_CONV_QB; ++q) {
            acc[c][q] = 0.0f;
        }
    }
    for (t = 0; t < rows; ++t) {
        const float *dy_t = dy - (size_t)t * dy_row;
        const float *w_t = w + (size_t)t * w_step;
        for (o = 0; o < outs; ++o) {
            const float *dy_o = dy_t + (size_t)o * out_plane;
            const float *w_o = w_t + (size_t)o * w_row;
            float weight[ADIR_CONV_OB];
            ADIR_CONV_UNROLL
            for (c = 0; c < ob; ++c) {
                weight[c] = w_o[w_at[c]];
            }
#if defined(__clang__)
            /* Pixels innermost: clang vectorizes along them (it makes odd vectors of 6
             * channels); gcc makes a tangle of shuffles of it, and keeps pixels outermost. */
            for (c = 0; c < ob; ++c) {
                for (q = 0; q < ADIR_CONV_QB; ++q) {
                    acc[c][q] = ADIR_CONV_FMA(weight[c], dy_o[q], acc[c][q]);
                }
            }
#else
            ADIR_CONV_UNROLL
            for (q = 0; q < ADIR_CONV_QB; ++q) {
                const float g = dy_o[q];
                ADIR_CONV_UNROLL
                for (c = 0; c < ob; ++c) {
                    acc[c][q] = ADIR_CONV_FMA(weight[c], g, acc[c][q]);
                }
            }
#endif
        }
    }
    for (c = 0; c < chans; ++c) {
        for (q = 0; q < ADIR_CONV_QB; ++q) {
            dx[(size_t)c * plane + (size_t)q] += acc[c][q];
        }
    }
}

/* Tiles of OB and of NARROW channels (6, LeNet's conv2, are a tile of 6). */
ADIR_CONV_NOINLINE static void adir_conv_input_tile(const float *restrict dy, size_t out_plane,
                                                    size_t dy_row, const float *restrict w,
                                                    size_t w_row, size_t w_step, size_t kernel,
                                                    int32_t rows, int32_t outs,
                                                    float *restrict dx, size_t plane,
                                                    int32_t chans)
{
    adir_conv_input_sums(dy, out_plane, dy_row, w, w_row, w_step, kernel, rows, outs, dx, plane,
                         chans, ADIR_CONV_OB);
}

ADIR_CONV_NOINLINE static void adir_conv_input_tile_narrow(
    const float *restrict dy, size_t out_plane, size_t dy_row, const float *restrict w,
    size_t w_row, size_t w_step, size_t kernel, int32_t rows, int32_t outs, float *restrict dx,
    size_t plane, int32_t chans)
{
    adir_conv_input_sums(dy, out_plane, dy_row, w, w_row, w_step, kernel, rows, outs, dx, plane,
                         chans, ADIR_CONV_NARROW);
}

/* The same at the right edge of a row: cols < QB pixels, one channel at a time. */
static void adir_conv_input_edge(const float *dy, size_t out_plane, size_t dy_row,
                                 const float *w, size_t w_row, size_t w_step, size_t kernel,
                                 int32_t rows, int32_t outs, float *dx, size_t plane,
                                 int32_t chans, int32_t cols)
{
    int32_t c, q, o, t;
    for (c = 0; c < chans; ++c) {
        for (q = 0; q < cols; ++q) {
            float acc = 0.0f;
            for (t = 0; t < rows; ++t) {
                const float *dy_t = dy - (size_t)t * dy_row;
                const float *w_t = w + (size_t)t * w_step + (size_t)c * kernel;
                for (o = 0; o < outs; ++o) {
                    acc = ADIR_CONV_FMA(w_t[(size_t)o * w_row],
                                        dy_t[(size_t)o * out_plane + (size_t)q], acc);
                }
            }
            dx[(size_t)c * plane + (size_t)q] += acc;
        }
    }
}

static void adir_conv2d_grad_input_plain(const float *dy, const float *w, float *dx,
                                         int32_t batch, int32_t channels, int32_t height,
                                         int32_t width, int32_t out_channels,
                                         int32_t out_height, int32_t out_width,
                                         int32_t kernel_height, int32_t kernel_width,
                                         int32_t groups)
{
    const int32_t group_channels = channels / groups;
    const int32_t group_outputs = out_channels / groups;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t kernel = (size_t)kernel_height * (size_t)kernel_width;
    const size_t w_row = (size_t)group_channels * kernel;
    const size_t dy_row = (size_t)out_width, w_step = (size_t)kernel_width;
    const int32_t block = adir_conv_tile_size(group_channels);
    int32_t n, g, c, r, j, q;
    memset(dx, 0, (size_t)batch * (size_t)channels * plane * sizeof *dx);
    for (n = 0; n < batch; ++n) {
        for (g = 0; g < groups; ++g) {
            const float *dy_g = dy + ((size_t)n * (size_t)out_channels +
                                      (size_t)g * (size_t)group_outputs) * out_plane;
            const float *w_g = w + (size_t)g * (size_t)group_outputs * w_row;
            for (c = 0; c < group_channels; c += block) {
                const int32_t chans = adir_conv_block(group_channels - c, block);
                float *dx_c = dx + ((size_t)n * (size_t)channels +
                                    (size_t)(g * group_channels + c)) * plane;
                for (r = 0; r < height; ++r) {
                    /* The kernel rows i whose output row r - i exists (height is
                     * out_height + kernel_height - 1: at least one). */
                    const int32_t i_first = r - out_height + 1 > 0 ? r - out_height + 1 : 0;
                    const int32_t i_end = r + 1 < kernel_height ? r + 1 : kernel_height;
                    const float *dy_r = dy_g + (size_t)(r - i_first) * dy_row;
                    for (j = 0; j < kernel_width; ++j) {
                        const float *w_tap = w_g + (size_t)c * kernel +
                                             (size_t)i_first * w_step + (size_t)j;
                        float *dx_row = dx_c + (size_t)r * (size_t)width + (size_t)j;
                        for (q = 0; q + ADIR_CONV_QB <= out_width; q += ADIR_CONV_QB) {
                            (block == ADIR_CONV_OB ? adir_conv_input_tile
                                                   : adir_conv_input_tile_narrow)(
                                dy_r + q, out_plane, dy_row, w_tap, w_row, w_step, kernel,
                                i_end - i_first, group_outputs, dx_row + q, plane, chans);
                        }
                        if (q < out_width) {
                            adir_conv_input_edge(dy_r + q, out_plane, dy_row, w_tap, w_row,
                                                 w_step, kernel, i_end - i_first, group_outputs,
                                                 dx_row + q, plane, chans, out_width - q);
                        }
                    }
                }
            }
        }
    }
}

/* The direct loops (any stride, padding, dilation). */

void adir_conv2d(const float *x, const float *w, const float *bias, float *y, int32_t batch,
                 int32_t channels, int32_t height, int32_t width, int32_t out_channels,
                 int32_t out_height, int32_t out_width, int32_t kernel_height,
                 int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                 int32_t pad_top, int32_t pad_left, int32_t dilation_height,
                 int32_t dilation_width, int32_t groups)
{
    if (adir_conv_is_plain(height, width, out_height, out_width, kernel_height, kernel_width,
                           stride_height, stride_width, pad_top, pad_left, dilation_height,
                           dilation_width)) {
        adir_conv2d_plain(x, w, bias, y, batch, channels, height, width, out_channels,
                          out_height, out_width, kernel_height, kernel_width, groups);
        return;
    }
    const int32_t group_channels = channels / groups;
    const int32_t group_outputs = out_channels / groups;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t taps = (size_t)kernel_height * (size_t)kernel_width;
    int32_t n, o, p, q, c, i, j;
    for (n = 0; n < batch; ++n) {
        for (o = 0; o < out_channels; ++o) {
            const size_t first_channel = (size_t)(o / group_outputs) * (size_t)group_channels;
            const float *x_group = x + ((size_t)n * (size_t)channels + first_channel) * plane;
            const float *w_o = w + (size_t)o * (size_t)group_channels * taps;
            float *y_o = y + ((size_t)n * (size_t)out_channels + (size_t)o) * out_plane;
            for (p = 0; p < out_height; ++p) {
                const int32_t top = p * stride_height - pad_top;
                int32_t i_first, i_end;
                adir_taps_inside(top, height, kernel_height, dilation_height, &i_first, &i_end);
                for (q = 0; q < out_width; ++q) {
                    const int32_t left = q * stride_width - pad_left;
                    int32_t j_first, j_end;
                    float acc = 0.0f;
                    adir_taps_inside(left, width, kernel_width, dilation_width, &j_first, &j_end);
                    for (c = 0; c < group_channels; ++c) {
                        const float *x_c = x_group + (size_t)c * plane;
                        const float *w_c = w_o + (size_t)c * taps;
                        for (i = i_first; i < i_end; ++i) {
                            const size_t row = (size_t)(top + i * dilation_height);
                            const float *x_row = x_c + row * (size_t)width;
                            const float *w_row = w_c + (size_t)i * (size_t)kernel_width;
                            for (j = j_first; j < j_end; ++j) {
                                acc += x_row[left + j * dilation_width] * w_row[j];
                            }
                        }
                    }
                    y_o[(size_t)p * (size_t)out_width + (size_t)q] = bias ? acc + bias[o] : acc;
                }
            }
        }
    }
}

void adir_conv2d_grad_input(const float *dy, const float *w, float *dx, int32_t batch,
                            int32_t channels, int32_t height, int32_t width,
                            int32_t out_channels, int32_t out_height, int32_t out_width,
                            int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                            int32_t stride_width, int32_t pad_top, int32_t pad_left,
                            int32_t dilation_height, int32_t dilation_width, int32_t groups)
{
    if (adir_conv_is_plain(height, width, out_height, out_width, kernel_height, kernel_width,
                           stride_height, stride_width, pad_top, pad_left, dilation_height,
                           dilation_width)) {
        adir_conv2d_grad_input_plain(dy, w, dx, batch, channels, height, width, out_channels,
                                     out_height, out_width, kernel_height, kernel_width, groups);
        return;
    }
    const int32_t group_channels = channels / groups;
    const int32_t group_outputs = out_channels / groups;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t taps = (size_t)kernel_height * (size_t)kernel_width;
    int32_t n, o, p, q, c, i, j;
    memset(dx, 0, (size_t)batch * (size_t)channels * plane * sizeof *dx);
    for (n = 0; n < batch; ++n) {
        for (o = 0; o < out_channels; ++o) {
            const size_t first_channel = (size_t)(o / group_outputs) * (size_t)group_channels;
            float *dx_group = dx + ((size_t)n * (size_t)channels + first_channel) * plane;
            const float *w_o = w + (size_t)o * (size_t)group_channels * taps;
            const float *dy_o = dy + ((size_t)n * (size_t)out_channels + (size_t)o) * out_plane;
            for (p = 0; p < out_height; ++p) {
                const int32_t top = p * stride_height - pad_top;
                int32_t i_first, i_end;
                adir_taps_inside(top, height, kernel_height, dilation_height, &i_first, &i_end);
                for (q = 0; q < out_width; ++q) {
                    const int32_t left = q * stride_width - pad_left;
                    const float g = dy_o[(size_t)p * (size_t)out_width + (size_t)q];
                    int32_t j_first, j_end;
                    adir_taps_inside(left, width, kernel_width, dilation_width, &j_first, &j_end);
                    for (c = 0; c < group_channels; ++c) {
                        float *dx_c = dx_group + (size_t)c * plane;
                        const float *w_c = w_o + (size_t)c * taps;
                        for (i = i_first; i < i_end; ++i) {
                            const size_t row = (size_t)(top + i * dilation_height);
                            float *dx_row = dx_c + row * (size_t)width;
                            const float *w_row = w_c + (size_t)i * (size_t)kernel_width;
                            for (j = j_first; j < j_end; ++j) {
                                dx_row[left + j * dilation_width] += g * w_row[j];
                            }
                        }
                    }
                }
            }
        }
    }
}

void adir_conv2d_grad_weight(const float *x, const float *dy, float *dw, int32_t batch,
                             int32_t channels, int32_t height, int32_t width,
                             int32_t out_channels, int32_t out_height, int32_t out_width,
                             int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                             int32_t stride_width, int32_t pad_top, int32_t pad_left,
                             int32_t dilation_height, int32_t dilation_width, int32_t groups)
{
    if (adir_conv_is_plain(height, width, out_height, out_width, kernel_height, kernel_width,
                           stride_height, stride_width, pad_top, pad_left, dilation_height,
                           dilation_width)) {
        adir_conv2d_grad_weight_plain(x, dy, dw, batch, channels, height, width, out_channels,
                                      out_height, out_width, kernel_height, kernel_width, groups);
        return;
    }
    const int32_t group_channels = channels / groups;
    const int32_t group_outputs = out_channels / groups;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t taps = (size_t)kernel_height * (size_t)kernel_width;
    int32_t n, o, p, q, c, i, j;
    memset(dw, 0, (size_t)out_channels * (size_t)group_channels * taps * sizeof *dw);
    for (n = 0; n < batch; ++n) {
        for (o = 0; o < out_channels; ++o) {
            const size_t first_channel = (size_t)(o / group_outputs) * (size_t)group_channels;
            const float *x_group = x + ((size_t)n * (size_t)channels + first_channel) * plane;
            float *dw_o = dw + (size_t)o * (size_t)group_channels * taps;
            const float *dy_o = dy + ((size_t)n * (size_t)out_channels + (size_t)o) * out_plane;
            for (p = 0; p < out_height; ++p) {
                const int32_t top = p * stride_height - pad_top;
                int32_t i_first, i_end;
                adir_taps_inside(top, height, kernel_height, dilation_height, &i_first, &i_end);
                for (q = 0; q < out_width; ++q) {
                    const int32_t left = q * stride_width - pad_left;
                    const float g = dy_o[(size_t)p * (size_t)out_width + (size_t)q];
                    int32_t j_first, j_end;
                    adir_taps_inside(left, width, kernel_width, dilation_width, &j_first, &j_end);
                    for (c = 0; c < group_channels; ++c) {
                        const float *x_c = x_group + (size_t)c * plane;
                        float *dw_c = dw_o + (size_t)c * taps;
                        for (i = i_first; i < i_end; ++i) {
                            const size_t row = (size_t)(top + i * dilation_height);
                            const float *x_row = x_c + row * (size_t)width;
                            float *dw_row = dw_c + (size_t)i * (size_t)kernel_width;
                            for (j = j_first; j < j_end; ++j) {
                                dw_row[j] += g * x_row[left + j * dilation_width];
                            }
                        }
                    }
                }
            }
        }
    }
}

/* --- pooling ---------------------------------------------------------------------------- */

/* The index (row * width + column) in its plane of the pixel maxpool2d picks in the window of
 * rows top + [i_first, i_end) and columns left + [j_first, j_end) (the taps inside the image):
 * PyTorch's CPU scan, which starts at the first pixel with max = -inf and takes a pixel when
 * `value > max || isnan(value)`. So the first maximum in row-major order, or the last nan. */
static size_t adir_max_position(const float *x_plane, int32_t width, int32_t top,
                                int32_t i_first, int32_t i_end, int32_t left, int32_t j_first,
                                int32_t j_end)
{
    size_t best = (size_t)(top + i_first) * (size_t)width + (size_t)(left + j_first);
    float max = -INFINITY;
    int32_t i, j;
    for (i = i_first; i < i_end; ++i) {
        const size_t row = (size_t)(top + i) * (size_t)width;
        for (j = j_first; j < j_end; ++j) {
            const float value = x_plane[row + (size_t)(left + j)];
            if (value > max || isnan(value)) {
                max = value;
                best = row + (size_t)(left + j);
            }
        }
    }
    return best;
}

/* Pools whose windows tile the image (kernel == stride, no padding, LeNet's and most CNNs'):
 * every pixel is in at most one window, and every window lies inside the image. Their scans
 * choose with selects instead of branches (a branch per pixel on data is mispredicted half the
 * time), and the gradient writes each window's pixels once, dy at the chosen one and 0 at the
 * others (0 + dy, as the scattering adds it to a cleared dx: -0.0 becomes 0.0 alike). */
static int adir_pool_is_tiling(int32_t height, int32_t width, int32_t out_height,
                               int32_t out_width, int32_t kernel_height, int32_t kernel_width,
                               int32_t stride_height, int32_t stride_width, int32_t pad_top,
                               int32_t pad_left)
{
    return kernel_height == stride_height && kernel_width == stride_width && pad_top == 0 &&
           pad_left == 0 && out_height * kernel_height <= height &&
           out_width * kernel_width <= width;
}

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

#if defined(__GNUC__) && !defined(__clang__)
/* n windows along a pair of rows, n a constant where this is inlined. gcc leaves a loop of 4
 * windows inside adir_max2x2_row scalar, with a branch per pixel, and vectorizes the same loop
 * as an inlined function of its own (clang does the opposite: it keeps the loop). */
static ADIR_CONV_INLINE void adir_max2x2_block(const float *top, const float *bottom,
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
#if defined(__GNUC__) && !defined(__clang__)
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

void adir_maxpool2d(const float *x, float *y, int32_t batch, int32_t channels, int32_t height,
                    int32_t width, int32_t out_height, int32_t out_width, int32_t kernel_height,
                    int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                    int32_t pad_top, int32_t pad_left)
{
    const int32_t planes = batch * channels;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    int32_t k, p, q;
    if (adir_pool_is_tiling(height, width, out_height, out_width, kernel_height, kernel_width,
                            stride_height, stride_width, pad_top, pad_left)) {
        adir_maxpool2d_tiling(x, y, planes, height, width, out_height, out_width, kernel_height,
                              kernel_width);
        return;
    }
    for (k = 0; k < planes; ++k) {
        const float *x_k = x + (size_t)k * plane;
        float *y_k = y + (size_t)k * out_plane;
        for (p = 0; p < out_height; ++p) {
            const int32_t top = p * stride_height - pad_top;
            int32_t i_first, i_end;
            adir_taps_inside(top, height, kernel_height, 1, &i_first, &i_end);
            for (q = 0; q < out_width; ++q) {
                const int32_t left = q * stride_width - pad_left;
                int32_t j_first, j_end;
                adir_taps_inside(left, width, kernel_width, 1, &j_first, &j_end);
                y_k[(size_t)p * (size_t)out_width + (size_t)q] =
                    x_k[adir_max_position(x_k, width, top, i_first, i_end, left, j_first, j_end)];
            }
        }
    }
}

void adir_maxpool2d_grad(const float *x, const float *dy, float *dx, int32_t batch,
                         int32_t channels, int32_t height, int32_t width, int32_t out_height,
                         int32_t out_width, int32_t kernel_height, int32_t kernel_width,
                         int32_t stride_height, int32_t stride_width, int32_t pad_top,
                         int32_t pad_left)
{
    const int32_t planes = batch * channels;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    int32_t k, p, q;
    if (adir_pool_is_tiling(height, width, out_height, out_width, kernel_height, kernel_width,
                            stride_height, stride_width, pad_top, pad_left)) {
        adir_maxpool2d_grad_tiling(x, dy, dx, planes, height, width, out_height, out_width,
                                   kernel_height, kernel_width);
        return;
    }
    memset(dx, 0, (size_t)planes * plane * sizeof *dx);
    for (k = 0; k < planes; ++k) {
        const float *x_k = x + (size_t)k * plane;
        const float *dy_k = dy + (size_t)k * out_plane;
        float *dx_k = dx + (size_t)k * plane;
        for (p = 0; p < out_height; ++p) {
            const int32_t top = p * stride_height - pad_top;
            int32_t i_first, i_end;
            adir_taps_inside(top, height, kernel_height, 1, &i_first, &i_end);
            for (q = 0; q < out_width; ++q) {
                const int32_t left = q * stride_width - pad_left;
                int32_t j_first, j_end;
                adir_taps_inside(left, width, kernel_width, 1, &j_first, &j_end);
                dx_k[adir_max_position(x_k, width, top, i_first, i_end, left, j_first, j_end)] +=
                    dy_k[(size_t)p * (size_t)out_width + (size_t)q];
            }
        }
    }
}

void adir_avgpool2d(const float *x, float *y, int32_t batch, int32_t channels, int32_t height,
                    int32_t width, int32_t out_height, int32_t out_width, int32_t kernel_height,
                    int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                    int32_t pad_top, int32_t pad_left, int count_include_pad)
{
    const int32_t planes = batch * channels;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    int32_t k, p, q, i, j;
    for (k = 0; k < planes; ++k) {
        const float *x_k = x + (size_t)k * plane;
        float *y_k = y + (size_t)k * out_plane;
        for (p = 0; p < out_height; ++p) {
            const int32_t top = p * stride_height - pad_top;
            int32_t i_first, i_end;
            adir_taps_inside(top, height, kernel_height, 1, &i_first, &i_end);
            for (q = 0; q < out_width; ++q) {
                const int32_t left = q * stride_width - pad_left;
                int32_t j_first, j_end, divisor;
                float sum = 0.0f;
                adir_taps_inside(left, width, kernel_width, 1, &j_first, &j_end);
                for (i = i_first; i < i_end; ++i) {
                    const float *x_row = x_k + (size_t)(top + i) * (size_t)width;
                    for (j = j_first; j < j_end; ++j) {
                        sum += x_row[left + j];
                    }
                }
                divisor = count_include_pad ? kernel_height * kernel_width
                                            : (i_end - i_first) * (j_end - j_first);
                y_k[(size_t)p * (size_t)out_width + (size_t)q] = sum / (float)divisor;
            }
        }
    }
}

void adir_avgpool2d_grad(const float *dy, float *dx, int32_t batch, int32_t channels,
                         int32_t height, int32_t width, int32_t out_height, int32_t out_width,
                         int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                         int32_t stride_width, int32_t pad_top, int32_t pad_left,
                         int count_include_pad)
{
    const int32_t planes = batch * channels;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    int32_t k, p, q, i, j;
    memset(dx, 0, (size_t)planes * plane * sizeof *dx);
    for (k = 0; k < planes; ++k) {
        const float *dy_k = dy + (size_t)k * out_plane;
        float *dx_k = dx + (size_t)k * plane;
        for (p = 0; p < out_height; ++p) {
            const int32_t top = p * stride_height - pad_top;
            int32_t i_first, i_end;
            adir_taps_inside(top, height, kernel_height, 1, &i_first, &i_end);
            for (q = 0; q < out_width; ++q) {
                const int32_t left = q * stride_width - pad_left;
                int32_t j_first, j_end, divisor;
                float share;
                adir_taps_inside(left, width, kernel_width, 1, &j_first, &j_end);
                divisor = count_include_pad ? kernel_height * kernel_width
                                            : (i_end - i_first) * (j_end - j_first);
                share = dy_k[(size_t)p * (size_t)out_width + (size_t)q] / (float)divisor;
                for (i = i_first; i < i_end; ++i) {
                    float *dx_row = dx_k + (size_t)(top + i) * (size_t)width;
                    for (j = j_first; j < j_end; ++j) {
                        dx_row[left + j] += share;
                    }
                }
            }
        }
    }
}

void adir_global_avgpool2d(const float *x, float *y, int32_t batch, int32_t channels,
                           int32_t height, int32_t width)
{
    const int32_t planes = batch * channels;
    const size_t plane = (size_t)height * (size_t)width;
    int32_t k;
    size_t e;
    for (k = 0; k < planes; ++k) {
        const float *x_k = x + (size_t)k * plane;
        float sum = 0.0f;
        for (e = 0; e < plane; ++e) {
            sum += x_k[e];
        }
        y[k] = sum / (float)plane;
    }
}
