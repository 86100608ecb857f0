/* adir_tuned_conv_implicit.c: implicit-GEMM convolutions, the paths adir_tuned_conv2d_gemm,
 * adir_tuned_conv2d_grad_input_gemm and adir_tuned_conv2d_grad_weight_gemm
 * (adir_tuned_conv_gemm.c) take where the target's settings ask for them (ADIR_CONV_IMPLICIT)
 * and their scratch holds what adir_conv_implicit_floats says (select_kernels/tuned.py asks
 * for it on the hosts; with less they build im2col panels).
 *
 * Why: an im2col panel is written once per use, and a layer with few output channels (ResNet-8's
 * 16) does about one vector multiply-add per panel element, so building the panels cost as
 * much as the GEMM. Here one sample's image is copied once into "phase planes": for stride s,
 * plane (a, b) holds the padded image's rows a, a + s, ... and columns b, b + s, ...; padding
 * is stored as zeros. Then every tap (c, i, j) of output pixel (p, q) lies at
 *
 *     plane(i d % s, j d % s)[c][p + i d / s][q + j d / s],
 *
 * so with pixels numbered p * cols + q (cols: a plane's width, a few more than the output's)
 * the im2col row of tap t is the planes read from offsets[t] on: the GEMM's B operand in place,
 * each row at its own offset. A micro-kernel tile of NR such pixels computes the columns
 * q >= out_width too (they read the next row); those sums are dropped.
 *
 * Column planes: where those dropped columns are many and the taps few (adir_implicit_layout:
 * DS-CNN's first conv, a 10 x 4 kernel of stride 2 into 5 columns, computed 6 a row and
 * stored 5 floats at a time), each kernel column j has planes of its own instead of each
 * phase b, holding the padded image's columns j d, j d + s, ...: then tap (c, i, j) of pixel
 * (p, q) lies at plane(i d % s, j)[c][p + i d / s][q], cols is out_width, and the plane's
 * pixels are the output's, in its order: no sum dropped, whole tiles stored as vectors.
 *
 * - Forward: y = W X, X read in place (adir_implicit_gemm); each output's sum over the taps
 *   (c, i, j) in order from 0, a tap in the padding adding a product of 0, then the bias: the
 *   panel path's sums, bit for bit.
 * - Weight gradient: dW^T [taps, outputs] += X dy^T, the tile's rows the taps (each read in
 *   place along the pixels), its columns the outputs (dy of one sample transposed into scratch),
 *   pixels q < out_width only; each element's sum over (n, p, q) in order, as the reference's,
 *   kept from sample to sample in dW itself, which holds dW^T by blocks of NR outputs (rows
 *   a vector loads) until each block is transposed in place at the end.
 * - Input gradient: phase by phase (adir_grad_input_layout below), each phase of dx the
 *   forward pass of one plane of dy by the phase's taps, flipped and transposed (W' [channels,
 *   outputs x taps], in scratch); at stride 1 one phase, dy padded by (k - 1) d - pad. Each dx
 *   element's sum over its (o, i, j) reversed, once; within the bound of its term count. A 1 x 1
 *   kernel's keeps the panel path (W^T dy on dy in place: no im2col to save), or, strided, the
 *   pointwise tiles on a chunk of pixels (adir_tuned_conv_pointwise.c), as its forward pass. */
#include <string.h>

#include "adir_tuned.h"
#include "adir_tuned_transpose.h"

#if ADIR_IMPLICIT_NR > 64 || ADIR_IMPLICIT_NR % ADIR_GEMM_NR != 0
#error "adir_tuned_conv_implicit.c: ADIR_IMPLICIT_NR: at most 64 (a plane's slack), NR's multiple"
#endif

/* Floats past the last plane that a tile may read: see adir_implicit_layout. */
#define ADIR_IMPLICIT_SLACK 64

/* Where one sample's phase planes lie and what a tap reads. phases_width: the planes side by
 * side along the width, the phases in use, or with by_column the kernel's columns. */
struct adir_implicit {
    int32_t channels, height, width, out_height, out_width, kernel_height, kernel_width;
    int32_t stride_height, stride_width, pad_top, pad_left, dilation_height, dilation_width;
    int32_t rows, cols, phases_height, phases_width, taps, by_column;
    size_t plane, floats; /* one plane; all planes and the slack */
};

/* Whether some kernel tap k < kernel lands on phase `a` of `stride` (k * dilation % stride). */
static int adir_phase_used(int32_t a, int32_t kernel, int32_t dilation, int32_t stride)
{
    int32_t k;
    for (k = 0; k < kernel; ++k) {
        if (k * dilation % stride == a) {
            return 1;
        }
    }
    return 0;
}

/* The index of phase `a` among the phases in use (those below it that are used). */
static int32_t adir_phase_index(int32_t a, int32_t kernel, int32_t dilation, int32_t stride)
{
    int32_t b, index = 0;
    for (b = 0; b < a; ++b) {
        index += adir_phase_used(b, kernel, dilation, stride);
    }
    return index;
}

static int32_t adir_phases_used(int32_t kernel, int32_t dilation, int32_t stride)
{
    return adir_phase_index(stride, kernel, dilation, stride);
}

/* Column planes (see the top of the file) where phase planes would drop more than an eighth of
 * a tile's pixels and the taps are fewer than this: a plane of each kernel column copies the
 * image kernel_width / phases times over, against the tile's multiply-adds a pixel, taps x
 * outputs (select_kernels/tuned.py's COLUMN_PLANE_TAPS). */
#define ADIR_IMPLICIT_COLUMN_TAPS 64

/* The planes of a convolution of an image [channels, height, width] into [out_height,
 * out_width]: a plane's rows and cols reach every tap of every output pixel (p + (kh - 1) d /
 * s rows); a tile of NR pixels from the last one computed reads at most NR - 1 pixels and the
 * cols - out_width of a row past a plane: the slack. */
static struct adir_implicit adir_implicit_layout(
    int32_t channels, int32_t height, int32_t width, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width)
{
    struct adir_implicit m;
    m.channels = channels, m.height = height, m.width = width;
    m.out_height = out_height, m.out_width = out_width;
    m.kernel_height = kernel_height, m.kernel_width = kernel_width;
    m.stride_height = stride_height, m.stride_width = stride_width;
    m.pad_top = pad_top, m.pad_left = pad_left;
    m.dilation_height = dilation_height, m.dilation_width = dilation_width;
    m.rows = out_height + (kernel_height - 1) * dilation_height / stride_height;
    m.cols = out_width + (kernel_width - 1) * dilation_width / stride_width;
    m.phases_height = adir_phases_used(kernel_height, dilation_height, stride_height);
    m.phases_width = adir_phases_used(kernel_width, dilation_width, stride_width);
    m.taps = channels * kernel_height * kernel_width;
    m.by_column = m.taps < ADIR_IMPLICIT_COLUMN_TAPS && 8 * (m.cols - out_width) > m.cols;
    if (m.by_column) {
        m.cols = out_width, m.phases_width = kernel_width;
    }
    m.plane = (size_t)m.rows * (size_t)m.cols;
    m.floats = (size_t)m.phases_height * (size_t)m.phases_width * (size_t)channels * m.plane +
               (size_t)m.cols + ADIR_IMPLICIT_SLACK;
    return m;
}

/* The copies below are loops that gcc would otherwise turn into calls of memcpy and memset:
 * three a row of a plane, each with its set-up, for rows of 10 to 34 floats (ResNet-8's), cost
 * more than the copying (with them, the copies took 16% of ResNet-8 b16's step). */
#if ADIR_GCC
#define ADIR_IMPLICIT_COPY_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define ADIR_IMPLICIT_COPY_LOOPS
#endif

/* Column planes' rows are short (DS-CNN's first conv: 5 floats), and a loop a row cost more
 * than its copying: a plane's `rows` rows from `to` on, columns [lo, hi), copied column by
 * column from the image's rows from `from` on (column x: the image's x s + off). A function of
 * its own: inside adir_implicit_copy, the row by row copy of phase planes took 20% longer
 * (MobileNet's first conv, gcc 12). */
ADIR_NOINLINE static void adir_implicit_copy_columns(const struct adir_implicit *m,
                                                     const float *restrict from, int32_t off,
                                                     float *restrict to, int32_t rows,
                                                     int32_t lo, int32_t hi)
{
    const size_t step = (size_t)m->stride_height * (size_t)m->width;
    int32_t x, y;
    for (x = lo; x < hi; ++x) {
        const float *restrict column = from + (x * m->stride_width + off);
        for (y = 0; y < rows; ++y) {
            to[(size_t)y * (size_t)m->cols + (size_t)x] = column[(size_t)y * step];
        }
    }
}

/* Copy one sample's image into the planes; with `zero`, also store the zeros where they hold
 * padding and in the slack. Those places are the same for every sample, and nothing else
 * writes them while a call's samples run: the callers pass `zero` for a call's (or group's)
 * first sample only (row by row, the zeros took as long as the copy). */
ADIR_IMPLICIT_COPY_LOOPS static void adir_implicit_copy(const struct adir_implicit *m,
                                                        const float *x, float *planes, int zero)
{
    const size_t plane = (size_t)m->height * (size_t)m->width;
    const size_t used = m->floats - (size_t)m->cols - ADIR_IMPLICIT_SLACK;
    const int32_t cols = m->cols;
    const int32_t width_planes = m->by_column ? m->kernel_width : m->stride_width;
    size_t k;
    int32_t a, plane_b, c, y, col;
    float *out = planes;
    for (a = 0; a < m->stride_height; ++a) {
        /* The plane's rows y whose image row y s + a - pad_top is inside: [top, bottom). */
        int32_t top, bottom;
        if (!adir_phase_used(a, m->kernel_height, m->dilation_height, m->stride_height)) {
            continue;
        }
        top = a - m->pad_top >= 0
                  ? 0
                  : (m->pad_top - a + m->stride_height - 1) / m->stride_height;
        bottom = m->height + m->pad_top - a <= 0
                     ? 0
                     : (m->height + m->pad_top - a + m->stride_height - 1) / m->stride_height;
        bottom = bottom < m->rows ? bottom : m->rows;
        top = top < bottom ? top : bottom;
        for (plane_b = 0; plane_b < width_planes; ++plane_b) {
            /* the planes' column 0: the padded image's column b (phase b, or with by_column
             * kernel column plane_b's) */
            const int32_t b = m->by_column ? plane_b * m->dilation_width : plane_b;
            int32_t lo, hi;
            if (!m->by_column &&
                !adir_phase_used(b, m->kernel_width, m->dilation_width, m->stride_width)) {
                continue;
            }
            /* The plane's columns x whose image column x s + b - pad_left is inside. */
            lo = b - m->pad_left >= 0
                     ? 0
                     : (m->pad_left - b + m->stride_width - 1) / m->stride_width;
            hi = m->width + m->pad_left - b <= 0
                     ? 0
                     : (m->width + m->pad_left - b + m->stride_width - 1) / m->stride_width;
            hi = hi < cols ? hi : cols;
            lo = lo < hi ? lo : hi;
            for (c = 0; c < m->channels; ++c, out += (size_t)m->rows * (size_t)cols) {
                /* plane row y: image row y s + a - pad_top; column x: image column x s + off */
                const int32_t off = b - m->pad_left;
                if (zero) {
                    for (k = 0; k < (size_t)m->rows * (size_t)cols; ++k) {
                        out[k] = 0.0f;
                    }
                }
                if (m->by_column && top < bottom) {
                    adir_implicit_copy_columns(
                        m, x + (size_t)c * plane +
                               (size_t)(top * m->stride_height + a - m->pad_top) *
                                   (size_t)m->width,
                        off, out + (size_t)top * (size_t)cols, bottom - top, lo, hi);
                    continue;
                }
                for (y = top; y < bottom; ++y) {
                    const float *restrict row =
                        x + (size_t)c * plane +
                        (size_t)(y * m->stride_height + a - m->pad_top) * (size_t)m->width;
                    float *restrict to = out + (size_t)y * (size_t)cols;
                    if (m->stride_width == 1) {
                        for (col = lo; col < hi; ++col) {
                            to[col] = row[col + off];
                        }
                    } else if (m->stride_width == 2) {
                        /* a constant stride: gcc and clang pick the even or odd floats of
                         * two vectors by a permute; at a variable stride they copy one
                         * float at a time (ResNet-8's stride-2 forward passes spent 45% of
                         * their time here) */
                        for (col = lo; col < hi; ++col) {
                            to[col] = row[2 * col + off];
                        }
                    } else {
                        for (col = lo; col < hi; ++col) {
                            to[col] = row[col * m->stride_width + off];
                        }
                    }
                }
            }
        }
    }
    for (k = used; zero && k < m->floats; ++k) {
        planes[k] = 0.0f;
    }
}

/* Each tap's offset into the planes. */
static void adir_implicit_offsets(const struct adir_implicit *m, int32_t *offsets)
{
    int32_t c, i, j;
    for (c = 0; c < m->channels; ++c) {
        for (i = 0; i < m->kernel_height; ++i) {
            const int32_t ri = i * m->dilation_height;
            const int32_t pa = adir_phase_index(ri % m->stride_height, m->kernel_height,
                                                m->dilation_height, m->stride_height);
            for (j = 0; j < m->kernel_width; ++j) {
                /* phase b's plane from column cj / s on, or column j's plane */
                const int32_t cj = j * m->dilation_width;
                const int32_t pb = m->by_column ? j
                                                : adir_phase_index(cj % m->stride_width,
                                                                   m->kernel_width,
                                                                   m->dilation_width,
                                                                   m->stride_width);
                const size_t phase = (size_t)pa * (size_t)m->phases_width + (size_t)pb;
                offsets[(c * m->kernel_height + i) * m->kernel_width + j] =
                    (int32_t)((phase * (size_t)m->channels + (size_t)c) * m->plane +
                              (size_t)(ri / m->stride_height) * (size_t)m->cols +
                              (size_t)(m->by_column ? 0 : cj / m->stride_width));
            }
        }
    }
}

/* One MR x NR tile: out[i * out_row + j] = the sum over t < taps, in order from 0, of w[i *
 * w_row + t * w_col] * planes[offsets[t] + j]. Both callers pass weights transposed, [taps,
 * outputs] (w_row 1): with w_col 1, gcc vectorizes the loop over the taps, not the tile's rows,
 * and keeps the sums in memory. Its loops are unrolled on every target (ADIR_TILE_UNROLL, as
 * the GEMM micro-kernel's): left rolled, gcc 12 vectorizes the loop over the taps of the AVX2
 * version anyway, with gathers, the sums in memory (ResNet-8 b16's step 2.8 times slower;
 * -O2's AVX2 version, forced on an AVX-512 core: 162 ms against 58 unrolled). */
ADIR_NOINLINE static void adir_implicit_tile(const float *restrict w, size_t w_row,
                                             size_t w_col, const float *restrict planes,
                                             const int32_t *restrict offsets, int32_t taps,
                                             float *restrict out, size_t out_row)
{
    float acc[ADIR_GEMM_MR][ADIR_IMPLICIT_NR];
    int32_t i, j, t;
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < ADIR_IMPLICIT_NR; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (t = 0; t < taps; ++t) {
        const float *restrict b_t = planes + offsets[t];
        float x[ADIR_GEMM_MR];
        ADIR_TILE_UNROLL
        for (i = 0; i < ADIR_GEMM_MR; ++i) {
            x[i] = w[(size_t)i * w_row + (size_t)t * w_col];
        }
        ADIR_TILE_UNROLL
        for (j = 0; j < ADIR_IMPLICIT_NR; ++j) {
            const float y = b_t[j];
            ADIR_TILE_UNROLL
            for (i = 0; i < ADIR_GEMM_MR; ++i) {
                acc[i][j] = ADIR_FMA(x[i], y, acc[i][j]);
            }
        }
    }
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < ADIR_IMPLICIT_NR; ++j) {
            out[(size_t)i * out_row + (size_t)j] = acc[i][j];
        }
    }
}

/* The rows < MR left below the tiles: one output at a time, NR pixels at once, the same sums. */
static void adir_implicit_edge(const float *restrict w, size_t w_row, size_t w_col,
                               const float *restrict planes, const int32_t *restrict offsets,
                               int32_t taps, int32_t rows,
                               float out[ADIR_GEMM_MR][ADIR_IMPLICIT_NR])
{
    int32_t i, j, t, half;
    /* NR pixels at a time, ADIR_IMPLICIT_NR a multiple of it (ResNet-8's first conv's 3 x 32
     * by 32 pixels at once: 4 times slower than by 16, kept in memory). */
    for (half = 0; half < ADIR_IMPLICIT_NR; half += ADIR_GEMM_NR) {
        for (i = 0; i < rows; ++i) {
            float acc[ADIR_GEMM_NR];
            for (j = 0; j < ADIR_GEMM_NR; ++j) {
                acc[j] = 0.0f;
            }
            for (t = 0; t < taps; ++t) {
                const float x = w[(size_t)i * w_row + (size_t)t * w_col];
                const float *restrict b_t = planes + offsets[t] + half;
                for (j = 0; j < ADIR_GEMM_NR; ++j) {
                    acc[j] = ADIR_FMA(x, b_t[j], acc[j]);
                }
            }
            for (j = 0; j < ADIR_GEMM_NR; ++j) {
                out[i][half + j] = acc[j];
            }
        }
    }
}

/* Where adir_implicit_gemm writes output o's pixel (p, q): y[o * channel + p * row + q * col]
 * (the forward pass: [outputs, out_height, out_width]; an input gradient's phase: every
 * stride-th pixel of dx). */
struct adir_implicit_out {
    size_t channel, row, col;
};

/* The forward tiles with outputs in vector lanes: ADIR_IMPLICIT_LANE_PIXELS pixels by 2 NR
 * outputs, ADIR_IMPLICIT_LANE4_PIXELS (half as many unless the target says) by 4 NR (0: none). A tap's weights for the tile's outputs are one row
 * of W^T (the callers' w_row 1), each pixel's im2col value one broadcast: 2 + 12 or 4 + 6
 * loads for 24 multiply-adds at 12 and 6 pixels (the MR x IMPLICIT_NR tile: 10 for 16), and only pixels q <
 * out_width computed (ResNet-8's 8 x 8 layers: 80 plane pixels a sample, 64 of them outputs).
 * Each output's sum over the taps in order from 0, as the tile's. */
#ifndef ADIR_IMPLICIT_LANE_PIXELS
#define ADIR_IMPLICIT_LANE_PIXELS 0
#endif
#ifndef ADIR_IMPLICIT_LANE4_PIXELS
#define ADIR_IMPLICIT_LANE4_PIXELS (ADIR_IMPLICIT_LANE_PIXELS / 2)
#endif
#if ADIR_IMPLICIT_LANE_PIXELS > 16 || ADIR_IMPLICIT_LANE4_PIXELS > 16 || \
    (ADIR_IMPLICIT_LANE_PIXELS > 0 && ADIR_IMPLICIT_LANE4_PIXELS < 1)
#error "adir_tuned_conv_implicit.c: ADIR_IMPLICIT_LANE_PIXELS, _LANE4_PIXELS: 1 to 16"
#endif
#define ADIR_IMPLICIT_LANE_MOST                                                  \
    (ADIR_IMPLICIT_LANE_PIXELS > ADIR_IMPLICIT_LANE4_PIXELS ? ADIR_IMPLICIT_LANE_PIXELS \
                                                            : ADIR_IMPLICIT_LANE4_PIXELS)
#define ADIR_IMPLICIT_LANE_VECTORS 4

#if ADIR_IMPLICIT_LANE_PIXELS > 0
/* out[j][c] = the sum over t < taps, in order from 0, of w[t * w_col + c] * planes[offsets[t]
 * + at[j]], for `pixels` pixels (plane positions at[j]) and c < vectors x NR. */
static ADIR_INLINE void adir_implicit_lanes(const float *restrict w, size_t w_col,
                                            const float *restrict planes,
                                            const int32_t *restrict offsets, int32_t taps,
                                            const int32_t *restrict at, int32_t pixels,
                                            int32_t vectors, float *restrict out)
{
    float acc[16][ADIR_IMPLICIT_LANE_VECTORS][ADIR_GEMM_NR];
    const float *restrict b[16];
    int32_t j, v, l, t;
    for (j = 0; j < pixels; ++j) {
        b[j] = planes + at[j];
        for (v = 0; v < vectors; ++v) {
            for (l = 0; l < ADIR_GEMM_NR; ++l) {
                acc[j][v][l] = 0.0f;
            }
        }
    }
    for (t = 0; t < taps; ++t) {
        const float *restrict w_t = w + (size_t)t * w_col;
        const int32_t offset = offsets[t];
        ADIR_UNROLL
        for (j = 0; j < pixels; ++j) {
            const float x = b[j][offset];
            ADIR_UNROLL
            for (v = 0; v < vectors; ++v) {
                ADIR_UNROLL
                for (l = 0; l < ADIR_GEMM_NR; ++l) {
                    acc[j][v][l] = ADIR_FMA(w_t[v * ADIR_GEMM_NR + l], x, acc[j][v][l]);
                }
            }
        }
    }
    for (j = 0; j < pixels; ++j) {
        for (v = 0; v < vectors; ++v) {
            for (l = 0; l < ADIR_GEMM_NR; ++l) {
                out[(size_t)j * (size_t)(vectors * ADIR_GEMM_NR) + (size_t)(v * ADIR_GEMM_NR + l)] =
                    acc[j][v][l];
            }
        }
    }
}

ADIR_NOINLINE static void adir_implicit_lanes_2(const float *restrict w, size_t w_col,
                                                const float *restrict planes,
                                                const int32_t *restrict offsets, int32_t taps,
                                                const int32_t *restrict at,
                                                float *restrict out)
{
    adir_implicit_lanes(w, w_col, planes, offsets, taps, at, ADIR_IMPLICIT_LANE_PIXELS, 2, out);
}

ADIR_NOINLINE static void adir_implicit_lanes_4(const float *restrict w, size_t w_col,
                                                const float *restrict planes,
                                                const int32_t *restrict offsets, int32_t taps,
                                                const int32_t *restrict at,
                                                float *restrict out)
{
    adir_implicit_lanes(w, w_col, planes, offsets, taps, at, ADIR_IMPLICIT_LANE4_PIXELS, 4,
                        out);
}
#endif

/* y [outputs, out_height x out_width] = w [outputs, taps] (w_row, w_col apart) times the im2col
 * matrix that `planes` and `offsets` give (see the top of the file), by tiles of NR plane
 * pixels, whose pixels past a row's out_width are dropped. Where a plane's pixels are y's (a
 * forward pass on column planes), whole tiles store straight into y. */
static void adir_implicit_gemm(const struct adir_implicit *m, const float *planes,
                               const int32_t *offsets, const float *w, size_t w_row,
                               size_t w_col, int32_t outputs, float *y,
                               struct adir_implicit_out at_out)
{
    const int32_t pixels = m->out_height * m->cols;
    const int in_order =
        m->cols == m->out_width && at_out.col == 1u && at_out.row == (size_t)m->out_width;
    float out[ADIR_GEMM_MR][ADIR_IMPLICIT_NR];
    int32_t o = 0, first, rows, i, j, l;
#if ADIR_IMPLICIT_LANE_PIXELS > 0
    /* blocks of 4 or 2 NR outputs by the lane tiles, when W^T's rows are 1 apart; the
     * outputs below them (fewer than 2 NR) by the MR x IMPLICIT_NR tiles; not over a few
     * taps, where the stores that scatter a pixel's outputs cost more than the tile saves
     * (ResNet-8's 1 x 1 shortcut, 32 taps by 64 outputs: 134 against 94 us) */
    float lane_out[ADIR_IMPLICIT_LANE_MOST * 4 * ADIR_GEMM_NR];
    int32_t at[ADIR_IMPLICIT_LANE_MOST], p_of[ADIR_IMPLICIT_LANE_MOST];
    int32_t q_of[ADIR_IMPLICIT_LANE_MOST];
    while (w_row == 1u && m->taps >= 4 * ADIR_GEMM_NR && outputs - o >= 2 * ADIR_GEMM_NR) {
        const int32_t vectors = outputs - o >= 4 * ADIR_GEMM_NR ? 4 : 2;
        const int32_t width = vectors * ADIR_GEMM_NR;
        const int32_t tile = vectors == 4 ? ADIR_IMPLICIT_LANE4_PIXELS : ADIR_IMPLICIT_LANE_PIXELS;
        int32_t p = 0, q = 0, count, c;
        while (p < m->out_height) {
            /* the next `tile` output pixels (q < out_width); past the last one, its copies
             * (computed, not stored) */
            for (count = 0; count < tile && p < m->out_height; ++count) {
                at[count] = p * m->cols + q, p_of[count] = p, q_of[count] = q;
                if (++q == m->out_width) {
                    q = 0, ++p;
                }
            }
            for (j = count; j < tile; ++j) {
                at[j] = at[count - 1];
            }
            if (vectors == 4) {
                adir_implicit_lanes_4(w + o, w_col, planes, offsets, m->taps, at, lane_out);
            } else {
                adir_implicit_lanes_2(w + o, w_col, planes, offsets, m->taps, at, lane_out);
            }
            for (j = 0; j < count; ++j) {
                float *y_j = y + (size_t)o * at_out.channel + (size_t)p_of[j] * at_out.row +
                             (size_t)q_of[j] * at_out.col;
                for (c = 0; c < width; ++c) {
                    y_j[(size_t)c * at_out.channel] = lane_out[j * width + c];
                }
            }
        }
        o += width;
    }
#endif
    for (; o < outputs; o += ADIR_GEMM_MR) {
        rows = outputs - o < ADIR_GEMM_MR ? outputs - o : ADIR_GEMM_MR;
        for (first = 0; first < pixels; first += ADIR_IMPLICIT_NR) {
            int32_t p = first / m->cols, q = first % m->cols;
            /* in order, a last tile of fewer pixels moves back over the one before it (where
             * there is one): its sums again, the same */
            const int32_t at =
                in_order && pixels - first < ADIR_IMPLICIT_NR && pixels >= ADIR_IMPLICIT_NR
                    ? pixels - ADIR_IMPLICIT_NR
                    : first;
            if (in_order && rows == ADIR_GEMM_MR && pixels - at >= ADIR_IMPLICIT_NR) {
                adir_implicit_tile(w + (size_t)o * w_row, w_row, w_col, planes + at, offsets,
                                   m->taps, y + (size_t)o * at_out.channel + (size_t)at,
                                   at_out.channel);
                continue;
            }
            if (rows == ADIR_GEMM_MR) {
                adir_implicit_tile(w + (size_t)o * w_row, w_row, w_col, planes + at, offsets,
                                   m->taps, &out[0][0], ADIR_IMPLICIT_NR);
            } else {
                adir_implicit_edge(w + (size_t)o * w_row, w_row, w_col, planes + at, offsets,
                                   m->taps, rows, out);
            }
            if (in_order) { /* an edge's rows, or the pixels of an image under a tile */
                const int32_t count =
                    pixels - at < ADIR_IMPLICIT_NR ? pixels - at : ADIR_IMPLICIT_NR;
                float *y_at = y + (size_t)o * at_out.channel + (size_t)at;
                for (i = 0; i < rows; ++i) {
                    for (l = 0; l < count; ++l) {
                        y_at[(size_t)i * at_out.channel + (size_t)l] = out[i][l];
                    }
                }
                continue;
            }
            /* The tile's pixels row by row: runs of q < out_width, copied output by output. */
            for (j = 0; j < ADIR_IMPLICIT_NR && p < m->out_height;) {
                const int32_t run = q < m->out_width ? m->out_width - q : 0;
                const int32_t count = run < ADIR_IMPLICIT_NR - j ? run : ADIR_IMPLICIT_NR - j;
                float *y_run = y + (size_t)o * at_out.channel + (size_t)p * at_out.row + (size_t)q * at_out.col;
                for (i = 0; i < rows; ++i) {
                    if (at_out.col == 1u) {
                        for (l = 0; l < count; ++l) {
                            y_run[(size_t)i * at_out.channel + (size_t)l] = out[i][j + l];
                        }
                    } else {
                        for (l = 0; l < count; ++l) {
                            y_run[(size_t)i * at_out.channel + (size_t)l * at_out.col] = out[i][j + l];
                        }
                    }
                }
                /* on to the next row's start, or the tile's end */
                j += m->cols - q < ADIR_IMPLICIT_NR - j ? m->cols - q : ADIR_IMPLICIT_NR - j;
                p += 1, q = 0;
            }
        }
    }
}

/* The input gradient by phases. dx (h, x) gets W[o][c][i][j] dy[o][p][q] where p s + i d =
 * h + pad_top (and likewise along the width): h + pad_top = h' s + a, phase a < s, takes the
 * taps i with i d % s = a, from dy row p = h' - i d / s. So each phase (a, b) of dx, the pixels
 * h' s + a - pad_top, x' s + b - pad_left inside the image, is a stride-1 correlation of dy
 * with the sub-kernel of its taps: one implicit GEMM on one plane of dy (padded so that every
 * phase's reads land in it, zeros outside dy), its outputs written every s-th pixel of dx. At
 * stride 1 one phase: dy padded by (k - 1) d - pad, the forward pass by the flipped kernel. */

/* Phase a of one dimension (size pixels of dx, padding pad before them): its pixels h' s + a -
 * pad for h' in [lo, lo + count), those inside [0, size). */
static void adir_phase_span(int32_t a, int32_t size, int32_t pad, int32_t stride, int32_t *lo,
                            int32_t *count)
{
    const int32_t end = (size + pad - a + stride - 1) / stride;
    *lo = pad > a ? (pad - a + stride - 1) / stride : 0;
    *count = end > *lo ? end - *lo : 0;
}

/* The taps k < kernel of phase a (k * dilation % stride = a). */
static int32_t adir_phase_taps(int32_t a, int32_t kernel, int32_t dilation, int32_t stride)
{
    int32_t k, taps = 0;
    for (k = 0; k < kernel; ++k) {
        taps += k * dilation % stride == a;
    }
    return taps;
}

/* Along one dimension, the dy plane's rows before dy's first (*lead: tap k of phase a reads
 * plane row h' - k d / s + lead >= 0 for h' >= lo(a); negative: dy's first -lead rows are
 * never read) and its rows in all (*extent: every phase's last h', for tap 0). */
static void adir_grad_input_extent(int32_t size, int32_t pad, int32_t kernel, int32_t dilation,
                                   int32_t stride, int32_t *lead, int32_t *extent)
{
    int32_t k, a, lo, count, most = 0;
    *lead = INT32_MIN;
    for (k = 0; k < kernel; ++k) {
        adir_phase_span(k * dilation % stride, size, pad, stride, &lo, &count);
        *lead = k * dilation / stride - lo > *lead ? k * dilation / stride - lo : *lead;
    }
    for (a = 0; a < stride; ++a) {
        adir_phase_span(a, size, pad, stride, &lo, &count);
        most = lo + count > most ? lo + count : most;
    }
    *extent = *lead + most;
}

/* The input gradient's dy plane ([outputs] of out_height x out_width, read as a stride-1 image
 * padded by `lead` rows and columns) and its taps; the phases' output sizes are set per phase. */
static struct adir_implicit adir_grad_input_layout(
    int32_t outputs, int32_t height, int32_t width, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width)
{
    struct adir_implicit m;
    int32_t lead_h, rows, lead_w, cols;
    adir_grad_input_extent(height, pad_top, kernel_height, dilation_height, stride_height,
                           &lead_h, &rows);
    adir_grad_input_extent(width, pad_left, kernel_width, dilation_width, stride_width,
                           &lead_w, &cols);
    /* a stride-1 1 x 1 "convolution" of dy for adir_implicit_copy: one phase, no taps' reach */
    m = adir_implicit_layout(outputs, out_height, out_width, rows, cols, 1, 1, 1, 1, lead_h,
                             lead_w, 1, 1);
    m.taps = outputs * kernel_height * kernel_width;
    return m;
}

int32_t adir_conv_implicit_floats(int32_t kind, int32_t channels, int32_t height, int32_t width,
                                  int32_t out_channels, int32_t out_height, int32_t out_width,
                                  int32_t kernel_height, int32_t kernel_width,
                                  int32_t stride_height, int32_t stride_width, int32_t pad_top,
                                  int32_t pad_left, int32_t dilation_height,
                                  int32_t dilation_width, int32_t groups)
{
    const int32_t group_channels = channels / groups, group_outputs = out_channels / groups;
    struct adir_implicit m;
    size_t floats;
    if (kind == ADIR_CONV_IMPLICIT_GRAD_INPUT) {
        if (kernel_height * kernel_width == 1) {
            /* W^T dy on dy in place, then a scatter: no im2col to save (the panel path took
             * 126 us, this one 134, for ResNet-8's first 1 x 1 shortcut at batch 16) */
            return -1;
        }
        m = adir_grad_input_layout(group_outputs, height, width, out_height, out_width,
                                   kernel_height, kernel_width, stride_height, stride_width,
                                   pad_top, pad_left, dilation_height, dilation_width);
        floats = m.floats + (size_t)m.taps + (size_t)group_channels * (size_t)m.taps;
    } else {
        m = adir_implicit_layout(group_channels, height, width, out_height, out_width,
                                 kernel_height, kernel_width, stride_height, stride_width,
                                 pad_top, pad_left, dilation_height, dilation_width);
        floats = m.floats + (size_t)m.taps;
        if (kind == ADIR_CONV_IMPLICIT_GRAD_WEIGHT) {
            floats += (size_t)out_height * (size_t)out_width * (size_t)group_outputs;
        } else {
            floats += (size_t)m.taps * (size_t)group_outputs;
        }
    }
    return floats > (size_t)INT32_MAX ? -1 : (int32_t)floats;
}

void adir_conv2d_implicit(const float *x, const float *w, const float *bias, float *y,
                          int32_t batch, int32_t channels, int32_t height, int32_t width,
                          int32_t out_channels, int32_t out_height, int32_t out_width,
                          int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                          int32_t stride_width, int32_t pad_top, int32_t pad_left,
                          int32_t dilation_height, int32_t dilation_width, int32_t groups,
                          float *scratch)
{
    const int32_t group_channels = channels / groups, group_outputs = out_channels / groups;
    const struct adir_implicit m = adir_implicit_layout(
        group_channels, height, width, out_height, out_width, kernel_height, kernel_width,
        stride_height, stride_width, pad_top, pad_left, dilation_height, dilation_width);
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    int32_t *offsets = (int32_t *)(void *)(scratch + m.floats);
    float *w_t = scratch + m.floats + m.taps;
    const struct adir_implicit_out forward = {out_plane, (size_t)out_width, 1u};
    int32_t n, k, o, t;
    size_t pixel;
    adir_implicit_offsets(&m, offsets);
    for (k = 0; k < groups; ++k) {
        /* W^T [taps, outputs] of group k: the tile reads its rows 1 apart, as the input
         * gradient's (adir_implicit_tile). */
        const float *w_g = w + (size_t)k * (size_t)group_outputs * (size_t)m.taps;
        for (o = 0; o < group_outputs; ++o) {
            for (t = 0; t < m.taps; ++t) {
                w_t[(size_t)t * (size_t)group_outputs + (size_t)o] =
                    w_g[(size_t)o * (size_t)m.taps + (size_t)t];
            }
        }
        for (n = 0; n < batch; ++n) {
            float *y_g = y + ((size_t)n * (size_t)out_channels +
                              (size_t)k * (size_t)group_outputs) * out_plane;
            adir_implicit_copy(&m,
                               x + ((size_t)n * (size_t)channels +
                                    (size_t)k * (size_t)group_channels) * plane,
                               scratch, n == 0);
            adir_implicit_gemm(&m, scratch, offsets, w_t, 1u, (size_t)group_outputs,
                               group_outputs, y_g, forward);
            if (bias) {
                for (o = 0; o < group_outputs; ++o) {
                    const float b = bias[k * group_outputs + o];
                    float *y_o = y_g + (size_t)o * out_plane;
                    for (pixel = 0; pixel < out_plane; ++pixel) {
                        y_o[pixel] += b;
                    }
                }
            }
        }
    }
}

void adir_conv2d_grad_input_implicit(const float *dy, const float *w, float *dx, int32_t batch,
                                     int32_t channels, int32_t height, int32_t width,
                                     int32_t out_channels, int32_t out_height,
                                     int32_t out_width, int32_t kernel_height,
                                     int32_t kernel_width, int32_t stride_height,
                                     int32_t stride_width, int32_t pad_top, int32_t pad_left,
                                     int32_t dilation_height, int32_t dilation_width,
                                     int32_t groups, float *scratch)
{
    const int32_t group_channels = channels / groups, group_outputs = out_channels / groups;
    const int32_t window = kernel_height * kernel_width;
    const struct adir_implicit m = adir_grad_input_layout(
        group_outputs, height, width, out_height, out_width, kernel_height, kernel_width,
        stride_height, stride_width, pad_top, pad_left, dilation_height, dilation_width);
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t gc = (size_t)group_channels;
    const struct adir_implicit_out phase_at = {plane, (size_t)stride_height * (size_t)width,
                                               (size_t)stride_width};
    int32_t *offsets = (int32_t *)(void *)(scratch + m.floats);
    float *phase_w = scratch + m.floats + m.taps;
    int32_t n, k, c, o, i, j, a, b, t, lo_h, rows, lo_w, cols, untouched = 0;
    /* Each phase's taps (o, i, j), i and j from the kernel's end down (at stride 1 the order
     * of the old flipped kernel), and their offsets: dx (h, x) of phase (a, b) reads dy row
     * h' - i d / s, h' = (h + pad_top) / s, in the plane's row h' - i d / s + lead. */
    t = 0;
    for (a = 0; a < stride_height; ++a) {
        adir_phase_span(a, height, pad_top, stride_height, &lo_h, &rows);
        for (b = 0; b < stride_width; ++b) {
            adir_phase_span(b, width, pad_left, stride_width, &lo_w, &cols);
            untouched |= rows > 0 && cols > 0 &&
                         adir_phase_taps(a, kernel_height, dilation_height, stride_height) *
                                 adir_phase_taps(b, kernel_width, dilation_width,
                                                 stride_width) ==
                             0;
            for (o = 0; o < group_outputs; ++o) {
                for (i = kernel_height - 1; i >= 0; --i) {
                    const int32_t ri = i * dilation_height;
                    if (ri % stride_height != a) {
                        continue;
                    }
                    for (j = kernel_width - 1; j >= 0; --j) {
                        const int32_t cj = j * dilation_width;
                        if (cj % stride_width != b) {
                            continue;
                        }
                        offsets[t++] = (int32_t)(
                            (size_t)o * m.plane +
                            (size_t)(lo_h - ri / stride_height + m.pad_top) * (size_t)m.cols +
                            (size_t)(lo_w - cj / stride_width + m.pad_left));
                    }
                }
            }
        }
    }
    for (k = 0; k < groups; ++k) {
        /* Each phase's W'^T [taps, channels] of group k, read with rows 1 apart. */
        const float *w_g = w + (size_t)k * (size_t)group_outputs * gc * (size_t)window;
        t = 0;
        for (a = 0; a < stride_height; ++a) {
            for (b = 0; b < stride_width; ++b) {
                for (o = 0; o < group_outputs; ++o) {
                    for (i = kernel_height - 1; i >= 0; --i) {
                        for (j = kernel_width - 1; j >= 0; --j) {
                            if (i * dilation_height % stride_height != a ||
                                j * dilation_width % stride_width != b) {
                                continue;
                            }
                            for (c = 0; c < group_channels; ++c) {
                                phase_w[(size_t)t * gc + (size_t)c] =
                                    w_g[(((size_t)o * gc + (size_t)c) * (size_t)kernel_height +
                                         (size_t)i) * (size_t)kernel_width + (size_t)j];
                            }
                            ++t;
                        }
                    }
                }
            }
        }
        for (n = 0; n < batch; ++n) {
            float *dx_g = dx + ((size_t)n * (size_t)channels + (size_t)k * gc) * plane;
            if (untouched) { /* 0 where no tap lands (a 1 x 1 kernel's odd rows and columns) */
                memset(dx_g, 0, gc * plane * sizeof *dx_g);
            }
            adir_implicit_copy(&m,
                               dy + ((size_t)n * (size_t)out_channels +
                                     (size_t)k * (size_t)group_outputs) * out_plane,
                               scratch, n == 0);
            t = 0;
            for (a = 0; a < stride_height; ++a) {
                adir_phase_span(a, height, pad_top, stride_height, &lo_h, &rows);
                for (b = 0; b < stride_width; ++b) {
                    const int32_t taps = group_outputs *
                                         adir_phase_taps(a, kernel_height, dilation_height,
                                                         stride_height) *
                                         adir_phase_taps(b, kernel_width, dilation_width,
                                                         stride_width);
                    /* dx's pixel (lo_h, lo_w) of the phase, the first inside the image */
                    float *dx_ab;
                    struct adir_implicit phase = m;
                    adir_phase_span(b, width, pad_left, stride_width, &lo_w, &cols);
                    dx_ab = dx_g +
                            (size_t)(lo_h * stride_height + a - pad_top) * (size_t)width +
                            (size_t)(lo_w * stride_width + b - pad_left);
                    if (rows > 0 && cols > 0 && taps > 0) {
                        phase.out_height = rows, phase.out_width = cols, phase.taps = taps;
                        adir_implicit_gemm(&phase, scratch, offsets + t,
                                           phase_w + (size_t)t * gc, 1u, gc, group_channels,
                                           dx_ab, phase_at);
                    }
                    t += taps;
                }
            }
        }
    }
}

/* The weight gradient's wide tiles: ADIR_IMPLICIT_WIDE_TAPS taps by 2 NR outputs and
 * ADIR_IMPLICIT_WIDE4_TAPS (half as many unless the target says) by 4 NR outputs (0: none):
 * 16 or 24 sums in registers for 2 + 8 or 4 + 6 loads, where the WMR x NR tile takes 1 + 12
 * loads for 12 (ResNet-8's 32- and 64-output layers). */
#ifndef ADIR_IMPLICIT_WIDE_TAPS
#define ADIR_IMPLICIT_WIDE_TAPS 0
#endif
#ifndef ADIR_IMPLICIT_WIDE4_TAPS
#define ADIR_IMPLICIT_WIDE4_TAPS (ADIR_IMPLICIT_WIDE_TAPS / 2)
#endif
#if ADIR_IMPLICIT_WIDE_TAPS > ADIR_IMPLICIT_WMR || ADIR_IMPLICIT_WIDE4_TAPS > ADIR_IMPLICIT_WMR || \
    (ADIR_IMPLICIT_WIDE_TAPS > 0 && ADIR_IMPLICIT_WIDE4_TAPS < 1)
#error "adir_tuned_conv_implicit.c: ADIR_IMPLICIT_WIDE_TAPS, _WIDE4_TAPS: 1 to ADIR_IMPLICIT_WMR"
#endif
#define ADIR_IMPLICIT_WIDE_VECTORS 4

/* One tile of dW^T (dw_t at the tile's corner, its taps' rows `row` apart, its vectors of NR
 * outputs `vector` apart; see adir_conv2d_grad_weight_implicit): `rows` taps (each read along
 * its plane from offsets[i]) by `vectors` x `width` outputs (dy^T's rows `outputs` apart; width
 * NR, or NR / 2 for a block of half a vector);
 * acc[i][v][j] continues dw_t's element over the pixels (p, q), q < out_width, in order: on
 * column planes (cols is out_width) one run of every pixel, else a run a row. */
static ADIR_INLINE void adir_implicit_weight_rows(const struct adir_implicit *m,
                                                  const float *restrict planes,
                                                  const int32_t *restrict offsets,
                                                  const float *restrict dy_t, size_t outputs,
                                                  float *restrict dw_t, size_t row,
                                                  size_t vector, int32_t rows, int32_t vectors,
                                                  int32_t width)
{
    const int32_t runs = m->cols == m->out_width ? 1 : m->out_height;
    const int32_t run = m->out_height * m->out_width / runs;
    float acc[ADIR_IMPLICIT_WMR][ADIR_IMPLICIT_WIDE_VECTORS][ADIR_GEMM_NR];
    const float *restrict a[ADIR_IMPLICIT_WMR];
    int32_t i, v, j, p, q;
    for (i = 0; i < rows; ++i) {
        a[i] = planes + offsets[i];
        for (v = 0; v < vectors; ++v) {
            for (j = 0; j < width; ++j) {
                acc[i][v][j] = dw_t[(size_t)i * row + (size_t)v * vector + (size_t)j];
            }
        }
    }
    for (p = 0; p < runs; ++p) {
        const size_t row = (size_t)p * (size_t)m->cols;
        const float *restrict b_p = dy_t + (size_t)p * (size_t)run * outputs;
        for (q = 0; q < run; ++q) {
            const float *restrict b_q = b_p + (size_t)q * outputs;
            float x[ADIR_IMPLICIT_WMR];
            /* Left to gcc's own unrolling on the AVX targets: forced (ADIR_TILE_UNROLL), ResNet-8
             * b16's step took 7% longer with AVX-512 (16.9 against 15.7 ms), 8% less with AVX2. */
            ADIR_UNROLL
            for (i = 0; i < rows; ++i) {
                x[i] = a[i][row + (size_t)q];
            }
            ADIR_UNROLL
            for (v = 0; v < vectors; ++v) {
                ADIR_UNROLL
                for (j = 0; j < width; ++j) {
                    const float y = b_q[v * ADIR_GEMM_NR + j];
                    ADIR_UNROLL
                    for (i = 0; i < rows; ++i) {
                        acc[i][v][j] = ADIR_FMA(x[i], y, acc[i][v][j]);
                    }
                }
            }
        }
    }
    for (i = 0; i < rows; ++i) {
        for (v = 0; v < vectors; ++v) {
            for (j = 0; j < width; ++j) {
                dw_t[(size_t)i * row + (size_t)v * vector + (size_t)j] = acc[i][v][j];
            }
        }
    }
}

/* The tile of WMR taps, one of MR taps for the taps left below them (ResNet-8's first conv:
 * 27 taps, 16 + 8 + 3), and the wide tiles. */
ADIR_NOINLINE static void adir_implicit_weight_tile(const struct adir_implicit *m,
                                                    const float *restrict planes,
                                                    const int32_t *restrict offsets,
                                                    const float *restrict dy_t, size_t outputs,
                                                    float *restrict dw_t, size_t vector)
{
    adir_implicit_weight_rows(m, planes, offsets, dy_t, outputs, dw_t, ADIR_GEMM_NR, vector,
                              ADIR_IMPLICIT_WMR, 1, ADIR_GEMM_NR);
}

ADIR_NOINLINE static void adir_implicit_weight_tile_mr(const struct adir_implicit *m,
                                                       const float *restrict planes,
                                                       const int32_t *restrict offsets,
                                                       const float *restrict dy_t,
                                                       size_t outputs, float *restrict dw_t, size_t vector)
{
    adir_implicit_weight_rows(m, planes, offsets, dy_t, outputs, dw_t, ADIR_GEMM_NR, vector,
                              ADIR_GEMM_MR, 1, ADIR_GEMM_NR);
}

/* WMR taps by half a vector of outputs: a block of NR / 2 outputs (MobileNetV1-0.25's first
 * conv, 8) took the scalar edge loop, 5.8 GFLOP/s, a tenth of its batch-1 step on Zen 4. */
ADIR_NOINLINE static void adir_implicit_weight_tile_half(const struct adir_implicit *m,
                                                         const float *restrict planes,
                                                         const int32_t *restrict offsets,
                                                         const float *restrict dy_t,
                                                         size_t outputs, float *restrict dw_t)
{
    adir_implicit_weight_rows(m, planes, offsets, dy_t, outputs, dw_t, ADIR_GEMM_NR / 2, 0u,
                              ADIR_IMPLICIT_WMR, 1, ADIR_GEMM_NR / 2);
}

#if ADIR_IMPLICIT_WIDE_TAPS > 0
ADIR_NOINLINE static void adir_implicit_weight_tile_2(const struct adir_implicit *m,
                                                      const float *restrict planes,
                                                      const int32_t *restrict offsets,
                                                      const float *restrict dy_t,
                                                      size_t outputs, float *restrict dw_t, size_t vector)
{
    adir_implicit_weight_rows(m, planes, offsets, dy_t, outputs, dw_t, ADIR_GEMM_NR, vector,
                              ADIR_IMPLICIT_WIDE_TAPS, 2, ADIR_GEMM_NR);
}

ADIR_NOINLINE static void adir_implicit_weight_tile_4(const struct adir_implicit *m,
                                                      const float *restrict planes,
                                                      const int32_t *restrict offsets,
                                                      const float *restrict dy_t,
                                                      size_t outputs, float *restrict dw_t, size_t vector)
{
    adir_implicit_weight_rows(m, planes, offsets, dy_t, outputs, dw_t, ADIR_GEMM_NR, vector,
                              ADIR_IMPLICIT_WIDE4_TAPS, 4, ADIR_GEMM_NR);
}
#endif

/* The same for a block of rows x cols at the tiles' edges, one tap at a time. */
static void adir_implicit_weight_edge(const struct adir_implicit *m,
                                      const float *restrict planes,
                                      const int32_t *restrict offsets,
                                      const float *restrict dy_t, size_t outputs,
                                      float *restrict dw_t, int32_t rows, int32_t cols)
{
    const int32_t runs = m->cols == m->out_width ? 1 : m->out_height;
    const int32_t run = m->out_height * m->out_width / runs;
    int32_t i, j, p, q;
    for (i = 0; i < rows; ++i) {
        const float *restrict a = planes + offsets[i];
        float acc[ADIR_GEMM_NR];
        for (j = 0; j < cols; ++j) {
            acc[j] = dw_t[(size_t)i * (size_t)cols + (size_t)j];
        }
        for (p = 0; p < runs; ++p) {
            const float *restrict a_p = a + (size_t)p * (size_t)m->cols;
            const float *restrict b_p = dy_t + (size_t)p * (size_t)run * outputs;
            for (q = 0; q < run; ++q) {
                const float x = a_p[q];
                const float *restrict b_q = b_p + (size_t)q * outputs;
                for (j = 0; j < cols; ++j) {
                    acc[j] = ADIR_FMA(x, b_q[j], acc[j]);
                }
            }
        }
        for (j = 0; j < cols; ++j) {
            dw_t[(size_t)i * (size_t)cols + (size_t)j] = acc[j];
        }
    }
}

/* dW^T's taps [t, end) of the block of outputs from o (cols <= NR of them; dw_t: the block,
 * rows of cols), by the WMR, MR and edge tiles. */
static void adir_implicit_weight_column(const struct adir_implicit *m, const float *planes,
                                        const int32_t *offsets, const float *dy_t,
                                        size_t outputs, float *dw_t, int32_t t, int32_t end,
                                        int32_t o, int32_t cols)
{
    int32_t rows;
    for (; t < end; t += rows) {
        float *dw_to = dw_t + (size_t)t * (size_t)cols;
        const int32_t left = end - t;
        /* MR-tap tiles where they take every tap and WMR-tap ones would not (ResNet-8's
         * 1 x 1 shortcuts: 16 and 32 taps, 4 and 8 of them left to the edge tile by 12) */
        rows = left >= ADIR_IMPLICIT_WMR &&
                       (left % ADIR_IMPLICIT_WMR == 0 || left % ADIR_GEMM_MR != 0)
                   ? ADIR_IMPLICIT_WMR
               : left >= ADIR_GEMM_MR ? ADIR_GEMM_MR
                                      : left;
        if (rows == ADIR_IMPLICIT_WMR && cols == ADIR_GEMM_NR) {
            adir_implicit_weight_tile(m, planes, offsets + t, dy_t + o, outputs, dw_to, 0u);
        } else if (rows == ADIR_GEMM_MR && cols == ADIR_GEMM_NR) {
            adir_implicit_weight_tile_mr(m, planes, offsets + t, dy_t + o, outputs, dw_to, 0u);
        } else if (rows == ADIR_IMPLICIT_WMR && 2 * cols == ADIR_GEMM_NR) {
            adir_implicit_weight_tile_half(m, planes, offsets + t, dy_t + o, outputs, dw_to);
        } else {
            adir_implicit_weight_edge(m, planes, offsets + t, dy_t + o, outputs, dw_to, rows,
                                      cols);
        }
    }
}

/* A block of dW, [taps, width] in place, into [width, taps]: through `spare` floats of
 * scratch where they hold it, else by following each cycle of the permutation (an element's
 * position k = t width + j goes to j taps + t) from its least position. */
static void adir_implicit_weight_untile(float *block, int32_t taps, int32_t width, float *spare,
                                        size_t spare_floats)
{
    const size_t n = (size_t)taps * (size_t)width;
    size_t k, at, next;
    int32_t t, j;
    if (n <= spare_floats) {
        memcpy(spare, block, n * sizeof *spare);
        for (j = 0; j < width; ++j) {
            for (t = 0; t < taps; ++t) {
                block[(size_t)j * (size_t)taps + (size_t)t] =
                    spare[(size_t)t * (size_t)width + (size_t)j];
            }
        }
        return;
    }
    for (k = 1; k + 1 < n; ++k) {
        float carried;
        /* k leads its cycle if no position on it is less */
        for (next = k % (size_t)width * (size_t)taps + k / (size_t)width; next > k;
             next = next % (size_t)width * (size_t)taps + next / (size_t)width) {
        }
        if (next < k) {
            continue;
        }
        carried = block[k];
        at = k;
        do {
            const size_t to = at % (size_t)width * (size_t)taps + at / (size_t)width;
            const float moved = block[to];
            block[to] = carried;
            carried = moved;
            at = to;
        } while (at != k);
    }
}

void adir_conv2d_grad_weight_implicit(const float *x, const float *dy, float *dw, int32_t batch,
                                      int32_t channels, int32_t height, int32_t width,
                                      int32_t out_channels, int32_t out_height,
                                      int32_t out_width, int32_t kernel_height,
                                      int32_t kernel_width, int32_t stride_height,
                                      int32_t stride_width, int32_t pad_top, int32_t pad_left,
                                      int32_t dilation_height, int32_t dilation_width,
                                      int32_t groups, float *scratch)
{
    const int32_t group_channels = channels / groups, group_outputs = out_channels / groups;
    const struct adir_implicit m = adir_implicit_layout(
        group_channels, height, width, out_height, out_width, kernel_height, kernel_width,
        stride_height, stride_width, pad_top, pad_left, dilation_height, dilation_width);
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const size_t taps = (size_t)m.taps, outputs = (size_t)group_outputs;
    int32_t *offsets = (int32_t *)(void *)(scratch + m.floats);
    float *dy_t = scratch + m.floats + taps;
    int32_t n, k, o, cols, wide;
    for (k = 0; k < groups; ++k) {
        /* dW of group k holds dW^T by blocks of NR outputs while the sums run (block o / NR
         * at dW's row o: [taps, NR], rows a vector loads; dW's own columns lie taps apart),
         * the sums continuing from sample to sample; then each block in place into dW. */
        float *dw_g = dw + (size_t)k * outputs * taps;
        memset(dw_g, 0, taps * outputs * sizeof *dw_g);
        adir_implicit_offsets(&m, offsets); /* again: the last group's blocks overwrote them */
        for (n = 0; n < batch; ++n) {
            const float *dy_g = dy + ((size_t)n * (size_t)out_channels +
                                      (size_t)k * (size_t)group_outputs) * out_plane;
            adir_implicit_copy(&m,
                               x + ((size_t)n * (size_t)channels +
                                    (size_t)k * (size_t)group_channels) * plane,
                               scratch, n == 0);
            adir_transpose(dy_g, out_plane, outputs, out_plane, dy_t, outputs);
            for (o = 0; o < group_outputs; o += cols) {
#if ADIR_IMPLICIT_WIDE_TAPS > 0
                int32_t t;
#endif
                /* 4 or 2 vectors of outputs by the wide tiles, or NR outputs by the WMR, MR
                 * and edge tiles */
                wide = 0;
#if ADIR_IMPLICIT_WIDE_TAPS > 0
                /* only where they take every tap: a few left to the edge tile cost more
                 * than the wide tiles save (ResNet-8's 1 x 1 shortcuts: 16 and 32 taps) */
                if (group_outputs - o >= 4 * ADIR_GEMM_NR &&
                    m.taps % ADIR_IMPLICIT_WIDE4_TAPS == 0) {
                    for (t = 0; t + ADIR_IMPLICIT_WIDE4_TAPS <= m.taps;
                         t += ADIR_IMPLICIT_WIDE4_TAPS) {
                        adir_implicit_weight_tile_4(
                            &m, scratch, offsets + t, dy_t + o, outputs,
                            dw_g + (size_t)o * taps + (size_t)t * ADIR_GEMM_NR,
                            taps * ADIR_GEMM_NR);
                    }
                    wide = 4;
                } else if (group_outputs - o >= 2 * ADIR_GEMM_NR &&
                           m.taps % ADIR_IMPLICIT_WIDE_TAPS == 0) {
                    for (t = 0; t + ADIR_IMPLICIT_WIDE_TAPS <= m.taps;
                         t += ADIR_IMPLICIT_WIDE_TAPS) {
                        adir_implicit_weight_tile_2(
                            &m, scratch, offsets + t, dy_t + o, outputs,
                            dw_g + (size_t)o * taps + (size_t)t * ADIR_GEMM_NR,
                            taps * ADIR_GEMM_NR);
                    }
                    wide = 2;
                }
#endif
                if (wide > 0) {
                    cols = wide * ADIR_GEMM_NR;
                } else {
                    cols = group_outputs - o < ADIR_GEMM_NR ? group_outputs - o : ADIR_GEMM_NR;
                    adir_implicit_weight_column(&m, scratch, offsets, dy_t, outputs,
                                                dw_g + (size_t)o * taps, 0, m.taps, o, cols);
                }
            }
        }
        for (o = 0; o < group_outputs; o += ADIR_GEMM_NR) {
            cols = group_outputs - o < ADIR_GEMM_NR ? group_outputs - o : ADIR_GEMM_NR;
            adir_implicit_weight_untile(dw_g + (size_t)o * taps, m.taps, cols, scratch,
                                        m.floats + taps + out_plane * outputs);
        }
    }
}
