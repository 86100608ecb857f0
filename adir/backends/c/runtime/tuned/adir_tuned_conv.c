/* adir_tuned_conv.c: the tuned convolutions of the conv_and_pool family: adir_tuned_conv2d,
 * adir_tuned_conv2d_grad_input and adir_tuned_conv2d_grad_weight (their references:
 * adir_conv2d, ... in reference/adir_conv_and_pool.c). */
#include <string.h>

#include "adir_tuned.h"

/* For convolutions with stride 1, no dilation and no padding only (LeNet's, and every 'valid'
 * conv): select-kernels chooses these where that holds and the references elsewhere. They are
 * register-blocked like adir_tuned_matmul (adir_tuned_matmul.c), on the im2col view of a
 * convolution without building it: the row of im2col for channel c and tap (i, j), at output
 * row p, is the contiguous run x[c, p + i, j .. j + out_width).
 *
 * - Forward: tiles of OB output channels x QB pixels of RB output rows, summed over the
 *   group's channels and the taps in the direct loops' order (c, i, j), the bias added last.
 * - Weight gradient: tiles of WB output channels x TB taps (c, i, j), each a dot product over
 *   the batch and the output pixels, split into WQB interleaved partial sums along the row.
 * - Input gradient: tiles of OB input channels x QB pixels of one input row and one kernel
 *   column, summed over the kernel rows that reach the row and the group's outputs, then added
 *   to dx (once per kernel column).
 *
 * The forward and input-gradient tiles also come NARROW = 3/4 OB wide, for channel counts that
 * they split evenly and OB does not (LeNet's 6), rather than repeat channels.
 *
 * With a fast fused multiply-add each step rounds once. Tile sizes come from the target's
 * settings header (targets/). */

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
ADIR_INLINE static void adir_conv_sums(const float *restrict x, size_t plane,
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
                ADIR_UNROLL
                for (o = 0; o < ob; ++o) {
                    weight[o] = w_o[o][tap];
                }
                ADIR_UNROLL
                for (r = 0; r < ADIR_CONV_RB; ++r) {
                    ADIR_UNROLL
                    for (q = 0; q < ADIR_CONV_QB; ++q) {
                        const float value = x_row[x_at[r] + (size_t)(j + q)];
                        ADIR_UNROLL
                        for (o = 0; o < ob; ++o) {
                            acc[o][r][q] = ADIR_FMA(weight[o], value, acc[o][r][q]);
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

ADIR_NOINLINE static void adir_conv_tile(const float *restrict x, size_t plane,
                                              int32_t width, const float *restrict w,
                                              size_t w_row, int32_t channels, int32_t kh,
                                              int32_t kw, const float *bias, float *restrict y,
                                              size_t out_plane, int32_t out_width, int32_t outs,
                                              int32_t rows)
{
    adir_conv_sums(x, plane, width, w, w_row, channels, kh, kw, bias, y, out_plane, out_width,
                   outs, rows, ADIR_CONV_OB);
}

ADIR_NOINLINE static void adir_conv_tile_narrow(const float *restrict x, size_t plane,
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
                        acc = ADIR_FMA(w_o[tap], x_row[j + q], acc);
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
 * split into WQB interleaved partial sums. dy and x point at the tile's first output channel and
 * its group's first channel in sample 0; dy_batch and x_batch are a sample's strides. Missing
 * rows repeat the last one (computed, not stored). wb <= WB rows are computed: a constant in
 * each tile below, which inlines this. */
ADIR_INLINE static void adir_conv_weight_sums(
    const float *restrict x, size_t x_batch, size_t plane, int32_t width,
    const float *restrict dy, size_t dy_batch, size_t out_plane, int32_t out_height,
    int32_t out_width, int32_t batch, int32_t kh, int32_t kw, int32_t first_tap, int32_t outs,
    int32_t taps, float *restrict dw, size_t w_row, int32_t wb)
{
    float acc[ADIR_CONV_WB][ADIR_CONV_TB][ADIR_CONV_WQB];
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
            for (l = 0; l < ADIR_CONV_WQB; ++l) {
                acc[o][t][l] = 0.0f;
            }
        }
    }
    for (n = 0; n < batch; ++n) {
        for (p = 0; p < out_height; ++p) {
            const float *x_p = x + (size_t)n * x_batch + (size_t)p * (size_t)width;
            const float *dy_p = dy + (size_t)n * dy_batch + (size_t)p * (size_t)out_width;
            for (q = 0; q + ADIR_CONV_WQB <= out_width; q += ADIR_CONV_WQB) {
#if !ADIR_GCC_LANES_INNERMOST
                /* Lanes outermost: unrolled whole (-O3, clang), the tile stays in registers. */
                for (l = 0; l < ADIR_CONV_WQB; ++l) {
                    for (o = 0; o < wb; ++o) {
                        const float d = dy_p[dy_at[o] + (size_t)(q + l)];
                        for (t = 0; t < ADIR_CONV_TB; ++t) {
                            acc[o][t][l] =
                                ADIR_FMA(d, x_p[x_at[t] + (size_t)(q + l)], acc[o][t][l]);
                        }
                    }
                }
#else
                /* Lanes innermost: a loop that gcc's cheapest vectorizer (-O2) takes as it is;
                 * outputs and taps unrolled, so that a scalar core's sums (WQB 1) stay in
                 * registers. */
                ADIR_UNROLL
                for (o = 0; o < wb; ++o) {
                    ADIR_UNROLL
                    for (t = 0; t < ADIR_CONV_TB; ++t) {
                        for (l = 0; l < ADIR_CONV_WQB; ++l) {
                            acc[o][t][l] = ADIR_FMA(dy_p[dy_at[o] + (size_t)(q + l)],
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
                        tail[o][t] = ADIR_FMA(d, x_p[x_at[t] + (size_t)q], tail[o][t]);
                    }
                }
            }
        }
    }
    for (o = 0; o < outs; ++o) {
        for (t = 0; t < taps; ++t) {
            float sum = 0.0f;
            for (l = 0; l < ADIR_CONV_WQB; ++l) {
                sum += acc[o][t][l];
            }
            dw[(size_t)o * w_row + (size_t)(first_tap + t)] = sum + tail[o][t];
        }
    }
}


/* Tiles of WB and of WB - 1 output channels (6 outputs, LeNet's conv1, are two tiles of 3, not
 * a tile of 4 and a tile of 2 computed as 4). */
ADIR_NOINLINE static void adir_conv_weight_tile(
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
ADIR_NOINLINE static void adir_conv_weight_tile_narrow(
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
ADIR_INLINE static void adir_conv_input_sums(const float *restrict dy, size_t out_plane,
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
            ADIR_UNROLL
            for (c = 0; c < ob; ++c) {
                weight[c] = w_o[w_at[c]];
            }
#if defined(__clang__)
            /* Pixels innermost: clang vectorizes along them (it makes odd vectors of 6
             * channels); gcc makes a tangle of shuffles of it, and keeps pixels outermost. */
            for (c = 0; c < ob; ++c) {
                for (q = 0; q < ADIR_CONV_QB; ++q) {
                    acc[c][q] = ADIR_FMA(weight[c], dy_o[q], acc[c][q]);
                }
            }
#else
            ADIR_UNROLL
            for (q = 0; q < ADIR_CONV_QB; ++q) {
                const float g = dy_o[q];
                ADIR_UNROLL
                for (c = 0; c < ob; ++c) {
                    acc[c][q] = ADIR_FMA(weight[c], g, acc[c][q]);
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
ADIR_NOINLINE static void adir_conv_input_tile(const float *restrict dy, size_t out_plane,
                                                    size_t dy_row, const float *restrict w,
                                                    size_t w_row, size_t w_step, size_t kernel,
                                                    int32_t rows, int32_t outs,
                                                    float *restrict dx, size_t plane,
                                                    int32_t chans)
{
    adir_conv_input_sums(dy, out_plane, dy_row, w, w_row, w_step, kernel, rows, outs, dx, plane,
                         chans, ADIR_CONV_OB);
}

ADIR_NOINLINE static void adir_conv_input_tile_narrow(
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
                    acc = ADIR_FMA(w_t[(size_t)o * w_row],
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

void adir_tuned_conv2d(const float *x, const float *w, const float *bias, float *y, int32_t batch,
                       int32_t channels, int32_t height, int32_t width, int32_t out_channels,
                       int32_t out_height, int32_t out_width, int32_t kernel_height,
                       int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                       int32_t pad_top, int32_t pad_left, int32_t dilation_height,
                       int32_t dilation_width, int32_t groups)
{
    /* The shape's stride, padding and dilation are what select-kernels checked (1, 0, 1). */
    (void)stride_height;
    (void)stride_width;
    (void)pad_top;
    (void)pad_left;
    (void)dilation_height;
    (void)dilation_width;
    adir_conv2d_plain(x, w, bias, y, batch, channels, height, width, out_channels, out_height,
                      out_width, kernel_height, kernel_width, groups);
}

void adir_tuned_conv2d_grad_input(const float *dy, const float *w, float *dx, int32_t batch,
                                  int32_t channels, int32_t height, int32_t width,
                                  int32_t out_channels, int32_t out_height, int32_t out_width,
                                  int32_t kernel_height, int32_t kernel_width,
                                  int32_t stride_height, int32_t stride_width, int32_t pad_top,
                                  int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
                                  int32_t groups)
{
    /* The shape's stride, padding and dilation are what select-kernels checked (1, 0, 1). */
    (void)stride_height;
    (void)stride_width;
    (void)pad_top;
    (void)pad_left;
    (void)dilation_height;
    (void)dilation_width;
    adir_conv2d_grad_input_plain(dy, w, dx, batch, channels, height, width, out_channels,
                                 out_height, out_width, kernel_height, kernel_width, groups);
}

void adir_tuned_conv2d_grad_weight(const float *x, const float *dy, float *dw, int32_t batch,
                                   int32_t channels, int32_t height, int32_t width,
                                   int32_t out_channels, int32_t out_height, int32_t out_width,
                                   int32_t kernel_height, int32_t kernel_width,
                                   int32_t stride_height, int32_t stride_width, int32_t pad_top,
                                   int32_t pad_left, int32_t dilation_height,
                                   int32_t dilation_width, int32_t groups)
{
    /* The shape's stride, padding and dilation are what select-kernels checked (1, 0, 1). */
    (void)stride_height;
    (void)stride_width;
    (void)pad_top;
    (void)pad_left;
    (void)dilation_height;
    (void)dilation_width;
    adir_conv2d_grad_weight_plain(x, dy, dw, batch, channels, height, width, out_channels,
                                  out_height, out_width, kernel_height, kernel_width, groups);
}

/* conv1d: the conv2d tiles on an image of height 1 (their kernel height 1). */
void adir_tuned_conv1d(const float *x, const float *w, const float *bias, float *y,
                       int32_t batch, int32_t channels, int32_t length, int32_t out_channels,
                       int32_t out_length, int32_t kernel, int32_t stride, int32_t pad_left,
                       int32_t dilation, int32_t groups)
{
    ADIR_TUNED_CONV2D(x, w, bias, y, batch, channels, 1, length, out_channels, 1, out_length, 1,
                      kernel, 1, stride, 0, pad_left, 1, dilation, groups);
}

void adir_tuned_conv1d_grad_input(const float *dy, const float *w, float *dx, int32_t batch,
                                  int32_t channels, int32_t length, int32_t out_channels,
                                  int32_t out_length, int32_t kernel, int32_t stride,
                                  int32_t pad_left, int32_t dilation, int32_t groups)
{
    ADIR_TUNED_CONV2D_GRAD_INPUT(dy, w, dx, batch, channels, 1, length, out_channels, 1,
                                 out_length, 1, kernel, 1, stride, 0, pad_left, 1, dilation,
                                 groups);
}

void adir_tuned_conv1d_grad_weight(const float *x, const float *dy, float *dw, int32_t batch,
                                   int32_t channels, int32_t length, int32_t out_channels,
                                   int32_t out_length, int32_t kernel, int32_t stride,
                                   int32_t pad_left, int32_t dilation, int32_t groups)
{
    ADIR_TUNED_CONV2D_GRAD_WEIGHT(x, dy, dw, batch, channels, 1, length, out_channels, 1,
                                  out_length, 1, kernel, 1, stride, 0, pad_left, 1, dilation,
                                  groups);
}
