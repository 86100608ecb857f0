/* adir_tuned_conv_pointwise.c: pointwise convolutions (1 x 1, stride 1, no padding, one group:
 * MobileNet's and DS-CNN's) on the hosts, as GEMMs on tiles of MR rows by two vectors
 * (ADIR_POINTWISE_NB = 2 NR columns): the `_gemm` kernels (adir_tuned_conv_gemm.c) call them
 * where the target's settings set ADIR_CONV_IMPLICIT.
 *
 * Per sample, with x [C, P] and dy [O, P] as they lie (P pixels; the forward pass and input
 * gradient take P >= NB, the weight gradient C >= NB: adir_pointwise_takes; smaller ones stay
 * on the `_gemm` kernels' own tiles, whose packed edges keep MR sums in flight):
 *
 * - Forward: y = W x, W [O, C]; input gradient: dx = W^T dy. The pixels in blocks of NB; a
 *   last block of fewer overlaps the one before it (columns P - NB .. P - 1, when P >= NB),
 *   whose columns it writes again with the same sums, instead of a packed or scalar edge.
 * - Weight gradient: dW += dy x^T over the samples. dy [O, P] and x [C, P] both run along the
 *   pixels, the sum's index: x^T [P, C] is copied into scratch (`channels x plane` floats,
 *   which the `_gemm` kernels' implicit-GEMM scratch holds) once a sample, so that a tile's
 *   row of NB channels is one load a pixel; dy's MR rows are broadcast from where they lie.
 *   (The implicit path copied x into its planes and dy^T, and read 16 taps' planes through 16
 *   pointers, which do not fit x86's 16 registers: 36 GFLOP/s on DS-CNN's 64 x 64 x 2000.)
 *
 * Sums: each output of the forward pass over c in order from 0, of the input gradient over o,
 * each element of dW over (n, p) in order from 0, continuing from sample to sample: the
 * reference's orders (reference/adir_conv_and_pool.c), so bit for bit its results without a
 * fast fused multiply-add, as the `_gemm` kernels' own paths are. */
#include <string.h>

#include "adir_tuned.h"
#include "adir_tuned_transpose.h"

#define ADIR_POINTWISE_NB (2 * ADIR_GEMM_NR)

/* gcc: the tile's loops unrolled whole (NB is 32 on AVX-512, past ADIR_POINTWISE_UNROLL's 16), and
 * only the straight-line vectorizer on the tiles: its loop vectorizer takes the loop over p
 * where a's loads are 1 apart along it (the weights as they lie, dy's rows) and keeps the
 * sums on the stack (DS-CNN's forward pass at 70 GFLOP/s, the weight gradient at 62). */
#if ADIR_GCC
#define ADIR_POINTWISE_UNROLL _Pragma("GCC unroll 32")
#define ADIR_POINTWISE_TILE __attribute__((optimize("no-tree-loop-vectorize")))
#else
#define ADIR_POINTWISE_UNROLL
#define ADIR_POINTWISE_TILE
#endif

/* acc[i][j] for i < rows, j < NB: from 0, or (onto) from c, plus the sum over p < k of
 * a[i * a_row + p * a_col] * b[p * b_row + j], p in order; then stored into c. `rows` is a
 * constant in each caller, so the tile unrolls into registers. */
static ADIR_INLINE void adir_pointwise_rows(const float *restrict a, size_t a_row, size_t a_col,
                                            const float *restrict b, size_t b_row, int32_t k,
                                            float *restrict c, size_t c_row, int32_t rows,
                                            int onto)
{
    float acc[ADIR_GEMM_MR][ADIR_POINTWISE_NB];
    int32_t i, j, p;
    ADIR_POINTWISE_UNROLL
    for (i = 0; i < rows; ++i) {
        ADIR_POINTWISE_UNROLL
        for (j = 0; j < ADIR_POINTWISE_NB; ++j) {
            acc[i][j] = onto ? c[(size_t)i * c_row + (size_t)j] : 0.0f;
        }
    }
    for (p = 0; p < k; ++p) {
        const float *restrict b_p = b + (size_t)p * b_row;
        float x[ADIR_GEMM_MR];
        ADIR_POINTWISE_UNROLL
        for (i = 0; i < rows; ++i) {
            x[i] = a[(size_t)i * a_row + (size_t)p * a_col];
        }
        ADIR_POINTWISE_UNROLL
        for (j = 0; j < ADIR_POINTWISE_NB; ++j) {
            const float y = b_p[j];
            ADIR_POINTWISE_UNROLL
            for (i = 0; i < rows; ++i) {
                acc[i][j] = ADIR_FMA(x[i], y, acc[i][j]);
            }
        }
    }
    ADIR_POINTWISE_UNROLL
    for (i = 0; i < rows; ++i) {
        ADIR_POINTWISE_UNROLL
        for (j = 0; j < ADIR_POINTWISE_NB; ++j) {
            c[(size_t)i * c_row + (size_t)j] = acc[i][j];
        }
    }
}

/* The tiles: MR rows or one, from 0 or onto c; a's rows or columns 1 apart as constants (the
 * weights' rows in the forward pass and dy's in the weight gradient; W^T's columns in the
 * input gradient), so that its loads take constant offsets. */
ADIR_NOINLINE ADIR_POINTWISE_TILE static void adir_pointwise_tile(const float *restrict a, size_t a_row,
                                              size_t a_col, const float *restrict b,
                                              size_t b_row, int32_t k, float *restrict c,
                                              size_t c_row)
{
    if (a_col == 1) {
        adir_pointwise_rows(a, a_row, 1, b, b_row, k, c, c_row, ADIR_GEMM_MR, 0);
    } else {
        adir_pointwise_rows(a, 1, a_col, b, b_row, k, c, c_row, ADIR_GEMM_MR, 0);
    }
}

ADIR_NOINLINE ADIR_POINTWISE_TILE static void adir_pointwise_tile_onto(const float *restrict a, size_t a_row,
                                                   const float *restrict b, size_t b_row,
                                                   int32_t k, float *restrict c, size_t c_row)
{
    adir_pointwise_rows(a, a_row, 1, b, b_row, k, c, c_row, ADIR_GEMM_MR, 1);
}

ADIR_NOINLINE ADIR_POINTWISE_TILE static void adir_pointwise_row(const float *restrict a, size_t a_col,
                                             const float *restrict b, size_t b_row, int32_t k,
                                             float *restrict c, int onto)
{
    if (onto) {
        adir_pointwise_rows(a, 0, a_col, b, b_row, k, c, 0, 1, 1);
    } else {
        adir_pointwise_rows(a, 0, a_col, b, b_row, k, c, 0, 1, 0);
    }
}

/* c (+)= a b for i < m, j < n, n >= NB (see adir_pointwise_rows), tile by tile: rows in blocks
 * of MR, then one at a time; columns in blocks of NB, the last one overlapping the one before
 * it (onto: computed in `out` and only its new columns stored, since the overlapped ones
 * already hold this call's sums). */
static void adir_pointwise_gemm(const float *a, size_t a_row, size_t a_col, const float *b,
                                size_t b_row, float *c, size_t c_row, int32_t m, int32_t n,
                                int32_t k, int onto)
{
    float out[ADIR_GEMM_MR * ADIR_POINTWISE_NB];
    int32_t i, j, r, rows, col, last;
    for (i = 0; i < m; i += rows) {
        rows = m - i >= ADIR_GEMM_MR ? ADIR_GEMM_MR : 1;
        for (j = 0; j < n; j += ADIR_POINTWISE_NB) {
            const int32_t at = n - j >= ADIR_POINTWISE_NB ? j : n - ADIR_POINTWISE_NB;
            const float *a_i = a + (size_t)i * a_row;
            float *c_ij = c + (size_t)i * c_row + (size_t)at;
            last = at != j && onto; /* an overlapping block whose sums run on from c */
            for (r = 0; last && r < rows; ++r) {
                memcpy(out + r * ADIR_POINTWISE_NB, c_ij + (size_t)r * c_row,
                       ADIR_POINTWISE_NB * sizeof out[0]);
            }
            if (rows == ADIR_GEMM_MR && onto) {
                adir_pointwise_tile_onto(a_i, a_row, b + at, b_row, k,
                                         last ? out : c_ij, last ? ADIR_POINTWISE_NB : c_row);
            } else if (rows == ADIR_GEMM_MR) {
                adir_pointwise_tile(a_i, a_row, a_col, b + at, b_row, k, c_ij, c_row);
            } else {
                adir_pointwise_row(a_i, a_col, b + at, b_row, k, last ? out : c_ij, onto);
            }
            for (r = 0; last && r < rows; ++r) {
                for (col = j - at; col < ADIR_POINTWISE_NB; ++col) {
                    c_ij[(size_t)r * c_row + (size_t)col] = out[r * ADIR_POINTWISE_NB + col];
                }
            }
        }
    }
}

int32_t adir_pointwise_takes(int32_t kind, int32_t channels, int32_t plane)
{
    return (kind == ADIR_CONV_IMPLICIT_GRAD_WEIGHT ? channels : plane) >= ADIR_POINTWISE_NB;
}

void adir_conv2d_pointwise(const float *x, const float *w, const float *bias, float *y,
                           int32_t batch, int32_t channels, int32_t plane, int32_t out_channels)
{
    const size_t pixels = (size_t)plane;
    int32_t n, o;
    size_t pixel;
    for (n = 0; n < batch; ++n) {
        float *y_n = y + (size_t)n * (size_t)out_channels * pixels;
        adir_pointwise_gemm(w, (size_t)channels, 1u, x + (size_t)n * (size_t)channels * pixels,
                            pixels, y_n, pixels, out_channels, plane, channels, 0);
        for (o = 0; bias && o < out_channels; ++o) {
            float *y_o = y_n + (size_t)o * pixels;
            for (pixel = 0; pixel < pixels; ++pixel) {
                y_o[pixel] += bias[o];
            }
        }
    }
}

void adir_conv2d_grad_input_pointwise(const float *dy, const float *w, float *dx, int32_t batch,
                                      int32_t channels, int32_t plane, int32_t out_channels)
{
    const size_t pixels = (size_t)plane;
    int32_t n;
    for (n = 0; n < batch; ++n) {
        /* W^T [C, O] is w read with rows 1 and columns C apart. */
        adir_pointwise_gemm(w, 1u, (size_t)channels,
                            dy + (size_t)n * (size_t)out_channels * pixels, pixels,
                            dx + (size_t)n * (size_t)channels * pixels, pixels, channels, plane,
                            out_channels, 0);
    }
}

void adir_conv2d_grad_weight_pointwise(const float *x, const float *dy, float *dw,
                                       int32_t batch, int32_t channels, int32_t plane,
                                       int32_t out_channels, float *scratch)
{
    const size_t pixels = (size_t)plane, width = (size_t)channels;
    int32_t n;
    memset(dw, 0, (size_t)out_channels * width * sizeof *dw);
    for (n = 0; n < batch; ++n) {
        const float *x_n = x + (size_t)n * width * pixels;
        /* x^T [P, C] (rows C apart): 16 x 16 blocks in registers where vectors hold 16
         * floats; one float at a time it took about 1.5 cycles a float, a third of DS-CNN's
         * weight gradient. */
        adir_transpose(x_n, pixels, width, pixels, scratch, width);
        adir_pointwise_gemm(dy + (size_t)n * (size_t)out_channels * pixels, pixels, 1u, scratch,
                            width, dw, width, out_channels, channels, plane, 1);
    }
}

/* Strided pointwise convolutions (1 x 1, stride sh x sw > 1, unpadded, one group: ResNet-8's
 * shortcuts): the tiles above on the pixels the kernel reads, (p sh, q sw), gathered into
 * scratch (forward pass) or scattered from it (input gradient) a chunk of output pixels at a
 * time. On the implicit-GEMM path the forward pass ran 16-tap tiles on a phase plane of
 * padded rows, the input gradient W^T dy by the micro-kernel and col2im: 30 GFLOP/s each on
 * ResNet-8's 16 -> 32 shortcut at batch 16. The same sums in the same order, so the same bits:
 * each output over c from 0, then the bias; each dx element 0 plus its sum over o. */

/* Output pixels a chunk of `channels` rows of scratch holds, or 0 where that is less than a
 * tile's NB columns (the callers then keep their own paths). */
int32_t adir_pointwise_strided_chunk(int32_t channels, int32_t out_pixels,
                                     int32_t scratch_floats)
{
    const int32_t fit = channels > 0 ? scratch_floats / channels : 0;
    const int32_t chunk = fit < out_pixels ? fit : out_pixels;
    return chunk >= ADIR_POINTWISE_NB ? chunk : 0;
}

/* The chunk of output pixels [first, first + count), after a last one of fewer than NB moved
 * back to end at the plane's last pixel (its first columns computed again, the same sums):
 * *at, the pixel it starts from, and *count. */
static void adir_pointwise_chunk_at(int32_t first, int32_t chunk, int32_t pixels, int32_t *at,
                                    int32_t *count)
{
    *count = pixels - first < chunk ? pixels - first : chunk;
    *at = first;
    if (*count < ADIR_POINTWISE_NB) {
        *at = pixels - ADIR_POINTWISE_NB;
        *count = ADIR_POINTWISE_NB;
    }
}

/* row[j] = the image's float that output pixel at + j reads, j < count (x_c: one channel's
 * plane). Run by run of an output row: a constant stride of 2 is picked by permutes (as
 * adir_implicit_copy's), no division a pixel. */
static void adir_pointwise_gather(const float *restrict x_c, float *restrict row, int32_t at,
                                  int32_t count, int32_t out_width, int32_t width,
                                  int32_t stride_height, int32_t stride_width)
{
    int32_t p = at / out_width, q = at % out_width, j = 0, l, run;
    while (j < count) {
        const float *restrict from = x_c + (size_t)p * (size_t)stride_height * (size_t)width +
                                     (size_t)q * (size_t)stride_width;
        float *restrict to = row + j;
        run = out_width - q < count - j ? out_width - q : count - j;
        if (stride_width == 2) {
            for (l = 0; l < run; ++l) {
                to[l] = from[2 * l];
            }
        } else {
            for (l = 0; l < run; ++l) {
                to[l] = from[(size_t)l * (size_t)stride_width];
            }
        }
        j += run, q = 0, ++p;
    }
}

/* The reverse: row[j] added into the float that output pixel at + j reads, skip <= j < count. */
static void adir_pointwise_scatter(float *restrict dx_c, const float *restrict row, int32_t at,
                                   int32_t count, int32_t skip, int32_t out_width,
                                   int32_t width, int32_t stride_height, int32_t stride_width)
{
    int32_t p = at / out_width, q = at % out_width, j = 0, l, run;
    while (j < count) {
        float *restrict to = dx_c + (size_t)p * (size_t)stride_height * (size_t)width +
                             (size_t)q * (size_t)stride_width;
        const float *restrict from = row + j;
        run = out_width - q < count - j ? out_width - q : count - j;
        for (l = skip > j ? skip - j : 0; l < run; ++l) {
            to[(size_t)l * (size_t)stride_width] += from[l];
        }
        j += run, q = 0, ++p;
    }
}

void adir_conv2d_pointwise_strided(const float *x, const float *w, const float *bias, float *y,
                                   int32_t batch, int32_t channels, int32_t height,
                                   int32_t width, int32_t out_channels, int32_t out_height,
                                   int32_t out_width, int32_t stride_height,
                                   int32_t stride_width, float *scratch, int32_t chunk)
{
    const int32_t pixels = out_height * out_width;
    const size_t plane = (size_t)height * (size_t)width;
    int32_t n, o, c, first, at, count;
    size_t pixel;
    for (n = 0; n < batch; ++n) {
        const float *x_n = x + (size_t)n * (size_t)channels * plane;
        float *y_n = y + (size_t)n * (size_t)out_channels * (size_t)pixels;
        for (first = 0; first < pixels; first += chunk) {
            adir_pointwise_chunk_at(first, chunk, pixels, &at, &count);
            for (c = 0; c < channels; ++c) {
                adir_pointwise_gather(x_n + (size_t)c * plane,
                                      scratch + (size_t)c * (size_t)count, at, count,
                                      out_width, width, stride_height, stride_width);
            }
            adir_pointwise_gemm(w, (size_t)channels, 1u, scratch, (size_t)count, y_n + at,
                                (size_t)pixels, out_channels, count, channels, 0);
        }
        for (o = 0; bias && o < out_channels; ++o) {
            float *y_o = y_n + (size_t)o * (size_t)pixels;
            for (pixel = 0; pixel < (size_t)pixels; ++pixel) {
                y_o[pixel] += bias[o];
            }
        }
    }
}

void adir_conv2d_grad_input_pointwise_strided(const float *dy, const float *w, float *dx,
                                              int32_t batch, int32_t channels, int32_t height,
                                              int32_t width, int32_t out_channels,
                                              int32_t out_height, int32_t out_width,
                                              int32_t stride_height, int32_t stride_width,
                                              float *scratch, int32_t chunk)
{
    const int32_t pixels = out_height * out_width;
    const size_t plane = (size_t)height * (size_t)width;
    int32_t n, c, first, at, count;
    memset(dx, 0, (size_t)batch * (size_t)channels * plane * sizeof *dx);
    for (n = 0; n < batch; ++n) {
        const float *dy_n = dy + (size_t)n * (size_t)out_channels * (size_t)pixels;
        float *dx_n = dx + (size_t)n * (size_t)channels * plane;
        for (first = 0; first < pixels; first += chunk) {
            adir_pointwise_chunk_at(first, chunk, pixels, &at, &count);
            /* W^T [C, O] is w read with rows 1 and columns C apart. */
            adir_pointwise_gemm(w, 1u, (size_t)channels, dy_n + at, (size_t)pixels, scratch,
                                (size_t)count, channels, count, out_channels, 0);
            for (c = 0; c < channels; ++c) {
                /* only the chunk's new pixels: a moved-back chunk's first ones are added */
                adir_pointwise_scatter(dx_n + (size_t)c * plane,
                                       scratch + (size_t)c * (size_t)count, at, count,
                                       first - at, out_width, width, stride_height,
                                       stride_width);
            }
        }
    }
}
