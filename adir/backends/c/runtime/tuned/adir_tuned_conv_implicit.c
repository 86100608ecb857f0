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
 * - Forward: y = W X, X read in place (adir_implicit_gemm); each output's sum over the taps
 *   (c, i, j) in order from 0, a tap in the padding adding a product of 0, then the bias: the
 *   panel path's sums, bit for bit.
 * - Weight gradient: dW^T [taps, outputs] += X dy^T, the tile's rows the taps (each read in
 *   place along the pixels), its columns the outputs (dy of one sample transposed into scratch),
 *   pixels q < out_width only; each element's sum over (n, p, q) in order, as the reference's.
 * - Input gradient: phase by phase (adir_grad_input_layout below), each phase of dx the
 *   forward pass of one plane of dy by the phase's taps, flipped and transposed (W' [channels,
 *   outputs x taps], in scratch); at stride 1 one phase, dy padded by (k - 1) d - pad. Each dx
 *   element's sum over its (o, i, j) reversed, once; within the bound of its term count. A 1 x 1
 *   kernel's keeps the panel path (W^T dy on dy in place: no im2col to save). */
#include <string.h>

#include "adir_tuned.h"

#if ADIR_IMPLICIT_NR > 64 || ADIR_IMPLICIT_NR % ADIR_GEMM_NR != 0
#error "adir_tuned_conv_implicit.c: ADIR_IMPLICIT_NR: at most 64 (a plane's slack), NR's multiple"
#endif

/* Floats past the last plane that a tile may read: see adir_implicit_layout. */
#define ADIR_IMPLICIT_SLACK 64
/* Pixels of dy transposed at a time (the weight gradient): 16 cache lines of dy^T's rows. */
#define ADIR_IMPLICIT_BLOCK 16u

/* Where one sample's phase planes lie and what a tap reads. */
struct adir_implicit {
    int32_t channels, height, width, out_height, out_width, kernel_height, kernel_width;
    int32_t stride_height, stride_width, pad_top, pad_left, dilation_height, dilation_width;
    int32_t rows, cols, phases_height, phases_width, taps;
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
    m.plane = (size_t)m.rows * (size_t)m.cols;
    m.floats = (size_t)m.phases_height * (size_t)m.phases_width * (size_t)channels * m.plane +
               (size_t)m.cols + ADIR_IMPLICIT_SLACK;
    return m;
}

/* Copy one sample's image into the planes (zeros where they hold padding) and zero the
 * slack. */
static void adir_implicit_copy(const struct adir_implicit *m, const float *x, float *planes)
{
    const size_t plane = (size_t)m->height * (size_t)m->width;
    const size_t used = m->floats - (size_t)m->cols - ADIR_IMPLICIT_SLACK;
    int32_t a, b, c, y, col;
    float *out = planes;
    for (a = 0; a < m->stride_height; ++a) {
        if (!adir_phase_used(a, m->kernel_height, m->dilation_height, m->stride_height)) {
            continue;
        }
        for (b = 0; b < m->stride_width; ++b) {
            int32_t lo, hi;
            if (!adir_phase_used(b, m->kernel_width, m->dilation_width, m->stride_width)) {
                continue;
            }
            /* The plane's columns x whose image column x s + b - pad_left is inside. */
            lo = b - m->pad_left >= 0
                     ? 0
                     : (m->pad_left - b + m->stride_width - 1) / m->stride_width;
            hi = m->width + m->pad_left - b <= 0
                     ? 0
                     : (m->width + m->pad_left - b + m->stride_width - 1) / m->stride_width;
            hi = hi < m->cols ? hi : m->cols;
            lo = lo < hi ? lo : hi;
            for (c = 0; c < m->channels; ++c) {
                for (y = 0; y < m->rows; ++y, out += m->cols) {
                    const int32_t r = y * m->stride_height + a - m->pad_top;
                    const float *row;
                    if (r < 0 || r >= m->height) {
                        memset(out, 0, (size_t)m->cols * sizeof *out);
                        continue;
                    }
                    row = x + (size_t)c * plane + (size_t)r * (size_t)m->width;
                    for (col = 0; col < lo; ++col) {
                        out[col] = 0.0f;
                    }
                    if (m->stride_width == 1) {
                        memcpy(out + lo, row + (lo + b - m->pad_left),
                               (size_t)(hi - lo) * sizeof *out);
                    } else {
                        for (col = lo; col < hi; ++col) {
                            out[col] = row[col * m->stride_width + b - m->pad_left];
                        }
                    }
                    for (col = hi; col < m->cols; ++col) {
                        out[col] = 0.0f;
                    }
                }
            }
        }
    }
    memset(planes + used, 0, (m->floats - used) * sizeof *planes);
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
                const int32_t cj = j * m->dilation_width;
                const int32_t pb = adir_phase_index(cj % m->stride_width, m->kernel_width,
                                                    m->dilation_width, m->stride_width);
                const size_t phase = (size_t)pa * (size_t)m->phases_width + (size_t)pb;
                offsets[(c * m->kernel_height + i) * m->kernel_width + j] =
                    (int32_t)((phase * (size_t)m->channels + (size_t)c) * m->plane +
                              (size_t)(ri / m->stride_height) * (size_t)m->cols +
                              (size_t)(cj / m->stride_width));
            }
        }
    }
}

/* One MR x NR tile: out[i][j] = the sum over t < taps, in order from 0, of w[i * w_row + t *
 * w_col] * planes[offsets[t] + j]. Both callers pass weights transposed, [taps, outputs] (w_row
 * 1): with w_col 1, gcc vectorizes the loop over the taps, not the tile's rows, and keeps the
 * sums in memory. Its loops are unrolled on every target (ADIR_TILE_UNROLL, as the GEMM
 * micro-kernel's): left rolled, gcc 12 vectorizes the loop over the taps of the AVX2 version
 * anyway, with gathers, the sums in memory (ResNet-8 b16's step 2.8 times slower; -O2's AVX2
 * version, forced on an AVX-512 core: 162 ms against 58 unrolled). */
ADIR_NOINLINE static void adir_implicit_tile(const float *restrict w, size_t w_row,
                                             size_t w_col, const float *restrict planes,
                                             const int32_t *restrict offsets, int32_t taps,
                                             float out[ADIR_GEMM_MR][ADIR_IMPLICIT_NR])
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
            out[i][j] = acc[i][j];
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

/* y [outputs, out_height x out_width] = w [outputs, taps] (w_row, w_col apart) times the im2col
 * matrix that `planes` and `offsets` give (see the top of the file), by tiles of NR plane
 * pixels, whose pixels past a row's out_width are dropped. */
static void adir_implicit_gemm(const struct adir_implicit *m, const float *planes,
                               const int32_t *offsets, const float *w, size_t w_row,
                               size_t w_col, int32_t outputs, float *y,
                               struct adir_implicit_out at)
{
    const int32_t pixels = m->out_height * m->cols;
    float out[ADIR_GEMM_MR][ADIR_IMPLICIT_NR];
    int32_t o, first, rows, i, j, l;
    for (o = 0; o < outputs; o += ADIR_GEMM_MR) {
        rows = outputs - o < ADIR_GEMM_MR ? outputs - o : ADIR_GEMM_MR;
        for (first = 0; first < pixels; first += ADIR_IMPLICIT_NR) {
            int32_t p = first / m->cols, q = first % m->cols;
            if (rows == ADIR_GEMM_MR) {
                adir_implicit_tile(w + (size_t)o * w_row, w_row, w_col, planes + first, offsets,
                                   m->taps, out);
            } else {
                adir_implicit_edge(w + (size_t)o * w_row, w_row, w_col, planes + first,
                                   offsets, m->taps, rows, out);
            }
            /* The tile's pixels row by row: runs of q < out_width, copied output by output. */
            for (j = 0; j < ADIR_IMPLICIT_NR && p < m->out_height;) {
                const int32_t run = q < m->out_width ? m->out_width - q : 0;
                const int32_t count = run < ADIR_IMPLICIT_NR - j ? run : ADIR_IMPLICIT_NR - j;
                float *y_run = y + (size_t)o * at.channel + (size_t)p * at.row + (size_t)q * at.col;
                for (i = 0; i < rows; ++i) {
                    if (at.col == 1u) {
                        for (l = 0; l < count; ++l) {
                            y_run[(size_t)i * at.channel + (size_t)l] = out[i][j + l];
                        }
                    } else {
                        for (l = 0; l < count; ++l) {
                            y_run[(size_t)i * at.channel + (size_t)l * at.col] = out[i][j + l];
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
                               scratch);
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
                               scratch);
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

/* One MR x NR tile of dW^T, taps t (rows, each read along its plane from rows[i]) by outputs
 * (columns, dy^T's rows `outputs` apart): acc[i][j] continues dw[j * taps + i] (dw at the
 * tile's corner) over the pixels (p, q), q < out_width, in order. */
static ADIR_INLINE void adir_implicit_weight_rows(const struct adir_implicit *m,
                                                  const float *restrict planes,
                                                  const int32_t *restrict offsets,
                                                  const float *restrict dy_t, size_t outputs,
                                                  float *restrict dw, size_t taps, int32_t rows)
{
    float acc[ADIR_IMPLICIT_WMR][ADIR_GEMM_NR];
    const float *restrict a[ADIR_IMPLICIT_WMR];
    int32_t i, j, p, q;
    for (i = 0; i < rows; ++i) {
        a[i] = planes + offsets[i];
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            acc[i][j] = dw[(size_t)j * taps + (size_t)i];
        }
    }
    for (p = 0; p < m->out_height; ++p) {
        const size_t row = (size_t)p * (size_t)m->cols;
        const float *restrict b_p = dy_t + (size_t)p * (size_t)m->out_width * outputs;
        for (q = 0; q < m->out_width; ++q) {
            const float *restrict b_q = b_p + (size_t)q * outputs;
            float x[ADIR_IMPLICIT_WMR];
            /* unrolled on every target, as adir_implicit_tile's loops (see there) */
            ADIR_TILE_UNROLL
            for (i = 0; i < rows; ++i) {
                x[i] = a[i][row + (size_t)q];
            }
            ADIR_TILE_UNROLL
            for (j = 0; j < ADIR_GEMM_NR; ++j) {
                const float y = b_q[j];
                ADIR_TILE_UNROLL
                for (i = 0; i < rows; ++i) {
                    acc[i][j] = ADIR_FMA(x[i], y, acc[i][j]);
                }
            }
        }
    }
    for (i = 0; i < rows; ++i) {
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            dw[(size_t)j * taps + (size_t)i] = acc[i][j];
        }
    }
}

/* The tile of WMR taps, and one of MR taps for the taps left below them (ResNet-8's first conv:
 * 27 taps, 16 + 8 + 3). */
ADIR_NOINLINE static void adir_implicit_weight_tile(const struct adir_implicit *m,
                                                    const float *restrict planes,
                                                    const int32_t *restrict offsets,
                                                    const float *restrict dy_t, size_t outputs,
                                                    float *restrict dw, size_t taps)
{
    adir_implicit_weight_rows(m, planes, offsets, dy_t, outputs, dw, taps, ADIR_IMPLICIT_WMR);
}

ADIR_NOINLINE static void adir_implicit_weight_tile_mr(const struct adir_implicit *m,
                                                       const float *restrict planes,
                                                       const int32_t *restrict offsets,
                                                       const float *restrict dy_t,
                                                       size_t outputs, float *restrict dw,
                                                       size_t taps)
{
    adir_implicit_weight_rows(m, planes, offsets, dy_t, outputs, dw, taps, ADIR_GEMM_MR);
}

/* The same for a block of rows x cols at the tiles' edges, one tap at a time. */
static void adir_implicit_weight_edge(const struct adir_implicit *m,
                                      const float *restrict planes,
                                      const int32_t *restrict offsets,
                                      const float *restrict dy_t, size_t outputs,
                                      float *restrict dw, size_t taps, int32_t rows,
                                      int32_t cols)
{
    int32_t i, j, p, q;
    for (i = 0; i < rows; ++i) {
        const float *restrict a = planes + offsets[i];
        float acc[ADIR_GEMM_NR];
        for (j = 0; j < cols; ++j) {
            acc[j] = dw[(size_t)j * taps + (size_t)i];
        }
        for (p = 0; p < m->out_height; ++p) {
            const float *restrict a_p = a + (size_t)p * (size_t)m->cols;
            const float *restrict b_p = dy_t + (size_t)p * (size_t)m->out_width * outputs;
            for (q = 0; q < m->out_width; ++q) {
                const float x = a_p[q];
                const float *restrict b_q = b_p + (size_t)q * outputs;
                for (j = 0; j < cols; ++j) {
                    acc[j] = ADIR_FMA(x, b_q[j], acc[j]);
                }
            }
        }
        for (j = 0; j < cols; ++j) {
            dw[(size_t)j * taps + (size_t)i] = acc[j];
        }
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
    int32_t n, k, t, o, rows, cols;
    size_t pixel, block;
    adir_implicit_offsets(&m, offsets);
    memset(dw, 0, (size_t)out_channels * taps * sizeof *dw);
    for (n = 0; n < batch; ++n) {
        for (k = 0; k < groups; ++k) {
            const float *dy_g = dy + ((size_t)n * (size_t)out_channels +
                                      (size_t)k * (size_t)group_outputs) * out_plane;
            float *dw_g = dw + (size_t)k * outputs * taps;
            adir_implicit_copy(&m,
                               x + ((size_t)n * (size_t)channels +
                                    (size_t)k * (size_t)group_channels) * plane,
                               scratch);
            /* dy^T in blocks of ADIR_IMPLICIT_BLOCK pixels: each block's rows of dy^T stay in
             * cache while every output writes its column. */
            for (block = 0; block < out_plane; block += ADIR_IMPLICIT_BLOCK) {
                const size_t end = out_plane - block < ADIR_IMPLICIT_BLOCK
                                       ? out_plane
                                       : block + ADIR_IMPLICIT_BLOCK;
                for (o = 0; o < group_outputs; ++o) {
                    const float *dy_o = dy_g + (size_t)o * out_plane;
                    for (pixel = block; pixel < end; ++pixel) {
                        dy_t[pixel * outputs + (size_t)o] = dy_o[pixel];
                    }
                }
            }
            for (t = 0; t < m.taps; t += rows) {
                rows = m.taps - t >= ADIR_IMPLICIT_WMR ? ADIR_IMPLICIT_WMR
                       : m.taps - t >= ADIR_GEMM_MR    ? ADIR_GEMM_MR
                                                       : m.taps - t;
                for (o = 0; o < group_outputs; o += ADIR_GEMM_NR) {
                    cols = group_outputs - o < ADIR_GEMM_NR ? group_outputs - o : ADIR_GEMM_NR;
                    if (rows == ADIR_IMPLICIT_WMR && cols == ADIR_GEMM_NR) {
                        adir_implicit_weight_tile(&m, scratch, offsets + t, dy_t + o, outputs,
                                                  dw_g + (size_t)o * taps + (size_t)t, taps);
                    } else if (rows == ADIR_GEMM_MR && cols == ADIR_GEMM_NR) {
                        adir_implicit_weight_tile_mr(&m, scratch, offsets + t, dy_t + o,
                                                     outputs,
                                                     dw_g + (size_t)o * taps + (size_t)t, taps);
                    } else {
                        adir_implicit_weight_edge(&m, scratch, offsets + t, dy_t + o, outputs,
                                                  dw_g + (size_t)o * taps + (size_t)t, taps,
                                                  rows, cols);
                    }
                }
            }
        }
    }
}
