/* adir_tuned_conv_gemm.c: convolutions as GEMMs on the shared micro-kernel (adir_gemm_sums,
 * adir_tuned.h): adir_tuned_conv2d_gemm, adir_tuned_conv2d_grad_input_gemm and
 * adir_tuned_conv2d_grad_weight_gemm (their references: adir_conv2d, ... in
 * reference/adir_conv_and_pool.c), for any stride, padding, dilation and groups.
 *
 * Per sample and group, with K = group channels x kernel taps and the im2col matrix X [K,
 * P * Q] (row t = tap (c, i, j), column = output pixel, 0 where the tap reads padding):
 *
 * - Forward: y = W X, W [group outputs, K] as it lies in memory.
 * - Input gradient: dX = W^T dy, then each element of dX added to the input pixel it came
 *   from (col2im).
 * - Weight gradient: dW += dy X^T, over the samples.
 *
 * X is never built whole: it is built a panel at a time in the scratch buffer that
 * select-kernels asked for and plan-memory sized and placed in the arena (`adir.kernel_scratch`
 * bytes, `scratch_floats` floats): a block of `block` taps (rows of X) by a chunk of `chunk`
 * output pixels (adir_conv_panel_shape: every tap and as many pixels as fit, else chunks of
 * ADIR_CONV_CHUNK pixels and as many taps as fit, else one tap). The forward pass multiplies
 * each block into y (the first from 0, the next onto it); the input gradient computes each
 * block of dX and adds it in; the weight gradient builds the block transposed, X^T [chunk,
 * block], and adds dy X^T into dW's block of columns. So any scratch from one float up
 * computes the same sums: plan-memory shrinks the panel to the arena's free bytes at the op
 * (select_kernels/tuned.py). A pointwise convolution (1 x 1, stride 1, no padding) is a GEMM
 * on the image itself: its forward pass and input gradient use no scratch; on the hosts
 * (ADIR_CONV_IMPLICIT) adir_tuned_conv_pointwise.c's tiles compute it where they take its
 * sizes, one group, the weight gradient where the scratch holds x^T of a sample; and the
 * forward pass and input gradient of a strided 1 x 1 kernel (unpadded, one group: ResNet-8's
 * shortcuts) where the scratch holds a chunk of 32 or more pixels of every channel.
 *
 * Sums: the forward pass sums each output over (c, i, j) in order from 0, as the reference
 * does (a tap in the padding adds a product of 0; each block's sums continue the last's),
 * then adds the bias; the weight gradient sums each element over (n, p, q) in order, each
 * chunk's sums continuing the last's; the
 * pointwise input gradient over the outputs in order: all bit for bit the reference's without
 * a fast fused multiply-add. The other input gradients (sums over the outputs, then over the
 * taps into each pixel) add in another order: within the bound of their term counts. */
#include <string.h>

#include "adir_tuned.h"

/* The micro-kernel's sums, with a's strides constants where one of them is 1 (a row of the
 * weights, or of dy, in the forward pass and the weight gradient; a column of the weights in
 * the input gradient): its loads then take constant offsets from one pointer a row, where a
 * stride in a register costs an add a load on a scalar core (vldr has no register offset). */
static ADIR_INLINE void adir_conv_gemm_sums_onto(const float *restrict a, size_t a_row,
                                                 size_t a_col, const float *restrict b,
                                                 size_t b_row, int32_t k,
                                                 float acc[ADIR_GEMM_MR][ADIR_GEMM_NR])
{
    if (a_col == 1) {
        adir_gemm_sums_onto(a, a_row, 1, b, b_row, k, acc);
    } else if (a_row == 1) {
        adir_gemm_sums_onto(a, 1, a_col, b, b_row, k, acc);
    } else {
        adir_gemm_sums_onto(a, a_row, a_col, b, b_row, k, acc);
    }
}

static ADIR_INLINE void adir_conv_gemm_sums(const float *restrict a, size_t a_row, size_t a_col,
                                            const float *restrict b, size_t b_row, int32_t k,
                                            float acc[ADIR_GEMM_MR][ADIR_GEMM_NR])
{
    int32_t i, j;
    ADIR_UNROLL
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        ADIR_UNROLL
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    adir_conv_gemm_sums_onto(a, a_row, a_col, b, b_row, k, acc);
}

/* One MR x NR tile of c (c_row apart) = a b by the micro-kernel. Its loops over the tile are
 * unrolled (ADIR_UNROLL) so that the sums stay in registers: rolled, gcc -O2 keeps acc in
 * memory on a scalar core (the Cortex-M4F: a call of memset to zero it, then 16 stores to the
 * stack and 16 loads back before the tile's stores to c). */
ADIR_NOINLINE static void adir_conv_gemm_tile(const float *restrict a, size_t a_row,
                                              size_t a_col, const float *restrict b,
                                              size_t b_row, int32_t k, float *restrict c,
                                              size_t c_row)
{
    float acc[ADIR_GEMM_MR][ADIR_GEMM_NR];
    int32_t i, j;
    adir_conv_gemm_sums(a, a_row, a_col, b, b_row, k, acc);
    ADIR_UNROLL
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        ADIR_UNROLL
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            c[(size_t)i * c_row + (size_t)j] = acc[i][j];
        }
    }
}

/* The same, c + a b: each sum continues from c's element, p after p (a tile of its own: with
 * both in one function gcc -O2 keeps neither tile in vector registers). */
ADIR_NOINLINE static void adir_conv_gemm_tile_onto(const float *restrict a, size_t a_row,
                                                   size_t a_col, const float *restrict b,
                                                   size_t b_row, int32_t k, float *restrict c,
                                                   size_t c_row)
{
    float acc[ADIR_GEMM_MR][ADIR_GEMM_NR];
    int32_t i, j;
    ADIR_UNROLL
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        ADIR_UNROLL
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            acc[i][j] = c[(size_t)i * c_row + (size_t)j];
        }
    }
    adir_conv_gemm_sums_onto(a, a_row, a_col, b, b_row, k, acc);
    ADIR_UNROLL
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        ADIR_UNROLL
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            c[(size_t)i * c_row + (size_t)j] = acc[i][j];
        }
    }
}

/* The rows x cols block of c left at a tile's edge, row by row, streaming along each row of b
 * (a loop compilers vectorize); each sum in p order, from 0 or (accumulate) from c. */
static void adir_conv_gemm_edge(const float *restrict a, size_t a_row, size_t a_col,
                                const float *restrict b, size_t b_row, int32_t k,
                                float *restrict c, size_t c_row, int32_t rows, int32_t cols,
                                int accumulate)
{
    int32_t i, j, p;
    for (i = 0; i < rows; ++i) {
        float *restrict c_i = c + (size_t)i * c_row;
        if (!accumulate) {
            for (j = 0; j < cols; ++j) {
                c_i[j] = 0.0f;
            }
        }
        for (p = 0; p < k; ++p) {
            const float x = a[(size_t)i * a_row + (size_t)p * a_col];
            const float *restrict b_p = b + (size_t)p * b_row;
            for (j = 0; j < cols; ++j) {
                c_i[j] = ADIR_FMA(x, b_p[j], c_i[j]);
            }
        }
    }
}

/* Floats of b's edge columns packed at a time by adir_conv_gemm_edge_tile: KB rows of NR. */
#define ADIR_CONV_EDGE_KB 64

/* The MR x cols block (cols < NR) at a row of tiles' right edge, on the tile: b's cols columns
 * packed KB rows at a time into a panel of NR columns (zeros past cols), each block continuing
 * the last's sums on a tile of its own; each sum in p order, from 0 or (accumulate) from c, as
 * adir_conv_gemm_edge's. (A pointwise convolution of 125 pixels, DS-CNN's, leaves 13 columns a
 * row of tiles: row by row they took as long as the 7 tiles.) */
static void adir_conv_gemm_edge_tile(const float *a, size_t a_row, size_t a_col, const float *b,
                                     size_t b_row, int32_t k, float *c, size_t c_row,
                                     int32_t cols, int accumulate)
{
    float panel[ADIR_CONV_EDGE_KB * ADIR_GEMM_NR];
    float out[ADIR_GEMM_MR * ADIR_GEMM_NR];
    int32_t i, j, p, first, rows;
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            out[i * ADIR_GEMM_NR + j] =
                accumulate && j < cols ? c[(size_t)i * c_row + (size_t)j] : 0.0f;
        }
    }
    for (first = 0; first < k; first += ADIR_CONV_EDGE_KB) {
        rows = k - first < ADIR_CONV_EDGE_KB ? k - first : ADIR_CONV_EDGE_KB;
        for (p = 0; p < rows; ++p) {
            const float *b_p = b + (size_t)(first + p) * b_row;
            for (j = 0; j < ADIR_GEMM_NR; ++j) {
                panel[p * ADIR_GEMM_NR + j] = j < cols ? b_p[j] : 0.0f;
            }
        }
        adir_conv_gemm_tile_onto(a + (size_t)first * a_col, a_row, a_col, panel, ADIR_GEMM_NR,
                                 rows, out, ADIR_GEMM_NR);
    }
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < cols; ++j) {
            c[(size_t)i * c_row + (size_t)j] = out[i * ADIR_GEMM_NR + j];
        }
    }
}

/* c[i * c_row + j] (+)= the sum over p < k of a[i * a_row + p * a_col] * b[p * b_row + j], for
 * i < m, j < n: MR x NR tiles, then the edges (the right one on tiles where the target's
 * settings set ADIR_CONV_IMPLICIT: the hosts; the Cortex-M cores keep their loops). */
static void adir_conv_gemm(const float *a, size_t a_row, size_t a_col, const float *b,
                           size_t b_row, float *c, size_t c_row, int32_t m, int32_t n,
                           int32_t k, int accumulate)
{
    int32_t i, j;
    for (i = 0; i + ADIR_GEMM_MR <= m; i += ADIR_GEMM_MR) {
        const float *a_i = a + (size_t)i * a_row;
        float *c_i = c + (size_t)i * c_row;
        for (j = 0; j + ADIR_GEMM_NR <= n; j += ADIR_GEMM_NR) {
            (accumulate ? adir_conv_gemm_tile_onto : adir_conv_gemm_tile)(
                a_i, a_row, a_col, b + j, b_row, k, c_i + j, c_row);
        }
        if (j < n && ADIR_CONV_IMPLICIT) {
            adir_conv_gemm_edge_tile(a_i, a_row, a_col, b + j, b_row, k, c_i + j, c_row, n - j,
                                     accumulate);
        } else if (j < n) {
            adir_conv_gemm_edge(a_i, a_row, a_col, b + j, b_row, k, c_i + j, c_row,
                                ADIR_GEMM_MR, n - j, accumulate);
        }
    }
    if (i < m) {
        adir_conv_gemm_edge(a + (size_t)i * a_row, a_row, a_col, b, b_row, k,
                            c + (size_t)i * c_row, c_row, m - i, n, accumulate);
    }
}

/* A convolution's sizes, as the kernels take them. */
struct adir_conv_shape {
    int32_t channels, height, width, out_height, out_width, kernel_height, kernel_width;
    int32_t stride_height, stride_width, pad_top, pad_left, dilation_height, dilation_width;
};

/* The output columns q in [*lo, *hi) whose tap at column offset `offset` (q * stride + offset)
 * lands inside [0, width). */
static void adir_conv_columns_inside(int32_t offset, int32_t stride, int32_t width,
                                     int32_t out_width, int32_t *lo, int32_t *hi)
{
    int32_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
    int32_t end = width - offset <= 0 ? 0 : (width - offset + stride - 1) / stride;
    if (end > out_width) {
        end = out_width;
    }
    if (first > end) {
        first = end;
    }
    *lo = first;
    *hi = end;
}

/* One run of a panel's row: out[(q - q0) * step] for output columns q0 <= q < q1 of one
 * output row, whose taps read x_row[q * stride + offset] for lo <= q < hi (0 elsewhere); with
 * dx_row, added into dx_row there instead. */
static void adir_conv_run(const float *restrict x_row, float *restrict dx_row, int32_t stride,
                          int32_t offset, int32_t q0, int32_t q1, int32_t lo, int32_t hi,
                          float *restrict out, size_t step)
{
    const int32_t a = lo < q0 ? q0 : (lo > q1 ? q1 : lo);
    const int32_t b = hi > q1 ? q1 : (hi < a ? a : hi);
    int32_t q;
    if (dx_row) {
        if (step == 1u && stride == 1) { /* unit strides: a loop compilers vectorize */
            float *restrict target = dx_row + (a + offset);
            const float *restrict source = out + (a - q0);
            for (q = 0; q < b - a; ++q) {
                target[q] += source[q];
            }
            return;
        }
        for (q = a; q < b; ++q) {
            dx_row[q * stride + offset] += out[(size_t)(q - q0) * step];
        }
        return;
    }
    for (q = q0; q < a; ++q) {
        out[(size_t)(q - q0) * step] = 0.0f;
    }
    if (step == 1u && stride == 1) {
        const float *restrict source = x_row + (a + offset);
        float *restrict run = out + (a - q0);
        for (q = 0; q < b - a; ++q) {
            run[q] = source[q];
        }
    } else {
        for (q = a; q < b; ++q) {
            out[(size_t)(q - q0) * step] = x_row[q * stride + offset];
        }
    }
    for (q = b; q < q1; ++q) {
        out[(size_t)(q - q0) * step] = 0.0f;
    }
}

/* The panel of im2col for taps t0 .. t1 - 1 and output pixels first .. first + count - 1 of
 * an image x (one sample, s->channels planes): element (t, pixel) at panel[(t - t0) * t_step +
 * (pixel - first) * pixel_step]. With dx (x's shape) the panel is instead added into dx where x
 * would be read (col2im). A tap t is (channel, kernel row, kernel column) in row-major order. */
static void adir_conv_panel(const float *x, float *dx, const struct adir_conv_shape *s,
                            int32_t t0, int32_t t1, int32_t first, int32_t count, float *panel,
                            size_t t_step, size_t pixel_step)
{
    const size_t plane = (size_t)s->height * (size_t)s->width;
    const int32_t end = first + count, window = s->kernel_height * s->kernel_width;
    int32_t t;
    for (t = t0; t < t1; ++t) {
        const int32_t c = t / window, i = t % window / s->kernel_width;
        const int32_t j = t % s->kernel_width;
        const float *x_c = x + (size_t)c * plane;
        float *dx_c = dx ? dx + (size_t)c * plane : NULL;
        const int32_t offset = j * s->dilation_width - s->pad_left;
        int32_t lo, hi, pixel = first;
        float *out = panel + (size_t)(t - t0) * t_step;
        adir_conv_columns_inside(offset, s->stride_width, s->width, s->out_width, &lo, &hi);
        while (pixel < end) {
            const int32_t p = pixel / s->out_width, q0 = pixel % s->out_width;
            const int32_t q1 =
                q0 + (end - pixel) < s->out_width ? q0 + (end - pixel) : s->out_width;
            const int32_t r = p * s->stride_height + i * s->dilation_height - s->pad_top;
            const int inside = r >= 0 && r < s->height;
            const size_t row = (size_t)(inside ? r : 0) * (size_t)s->width;
            adir_conv_run(x_c + row, dx_c ? dx_c + row : NULL, s->stride_width, offset, q0, q1,
                          inside ? lo : q1, inside ? hi : q1, out, pixel_step);
            out += (size_t)(q1 - q0) * pixel_step;
            pixel += q1 - q0;
        }
    }
}

/* What the three kernels share: the shape, the group sizes, and whether the convolution is
 * pointwise (im2col is the image itself). */
struct adir_conv_gemm {
    struct adir_conv_shape s;
    int32_t group_channels, group_outputs, taps, out_pixels, block, chunk;
    size_t plane, out_plane;
    int pointwise;
};

/* Output pixels a panel takes when not every tap fits with as many: the select-kernels rule's
 * PANEL_PIXELS, four of the widest micro-kernel tile (NR = 16). */
#define ADIR_CONV_CHUNK 64

/* The panel that scratch_floats floats hold (see the top of the file): every tap, and as many
 * output pixels as fit (all at most); else ADIR_CONV_CHUNK pixels (or all, if fewer) and as many
 * taps as fit; else one tap and as many pixels as fit (at least one). */
static void adir_conv_panel_shape(struct adir_conv_gemm *g, int32_t scratch_floats)
{
    const int32_t chunk = g->out_pixels < ADIR_CONV_CHUNK ? g->out_pixels : ADIR_CONV_CHUNK;
    if (g->taps < 1 || g->out_pixels < 1) {
        g->block = g->chunk = 1;
    } else if (scratch_floats / g->taps >= chunk) {
        g->block = g->taps;
        g->chunk = scratch_floats / g->taps < g->out_pixels ? scratch_floats / g->taps
                                                            : g->out_pixels;
    } else if (scratch_floats >= chunk) {
        g->chunk = chunk;
        g->block = scratch_floats / chunk;
    } else {
        g->block = 1;
        g->chunk = scratch_floats > 1 ? scratch_floats : 1;
    }
}

static struct adir_conv_gemm adir_conv_gemm_of(
    int32_t channels, int32_t height, int32_t width, int32_t out_channels, int32_t out_height,
    int32_t out_width, int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
    int32_t stride_width, int32_t pad_top, int32_t pad_left, int32_t dilation_height,
    int32_t dilation_width, int32_t groups, int32_t scratch_floats)
{
    struct adir_conv_gemm g;
    g.s.channels = channels / groups;
    g.s.height = height, g.s.width = width;
    g.s.out_height = out_height, g.s.out_width = out_width;
    g.s.kernel_height = kernel_height, g.s.kernel_width = kernel_width;
    g.s.stride_height = stride_height, g.s.stride_width = stride_width;
    g.s.pad_top = pad_top, g.s.pad_left = pad_left;
    g.s.dilation_height = dilation_height, g.s.dilation_width = dilation_width;
    g.group_channels = channels / groups;
    g.group_outputs = out_channels / groups;
    g.taps = g.group_channels * kernel_height * kernel_width;
    g.out_pixels = out_height * out_width;
    g.plane = (size_t)height * (size_t)width;
    g.out_plane = (size_t)g.out_pixels;
    g.pointwise = kernel_height == 1 && kernel_width == 1 && stride_height == 1 &&
                  stride_width == 1 && pad_top == 0 && pad_left == 0 && out_height == height &&
                  out_width == width;
    adir_conv_panel_shape(&g, scratch_floats);
    return g;
}

/* The sizes after the batch, as the kernels and adir_conv_implicit_floats take them. */
#define CONV_GEMM_SIZES                                                                        \
    channels, height, width, out_channels, out_height, out_width, kernel_height, kernel_width, \
        stride_height, stride_width, pad_top, pad_left, dilation_height, dilation_width, groups

/* Output pixels a chunk of the strided pointwise kernels (adir_tuned_conv_pointwise.c) takes,
 * where they take the convolution (a 1 x 1 kernel of stride > 1, unpadded, one group) and the
 * scratch holds a chunk; else 0. */
static int32_t adir_strided_pointwise_chunk(const struct adir_conv_gemm *g, int32_t groups,
                                            int32_t scratch_floats)
{
    const struct adir_conv_shape *s = &g->s;
    if (g->pointwise || groups != 1 || s->kernel_height != 1 || s->kernel_width != 1 ||
        s->pad_top != 0 || s->pad_left != 0) {
        return 0;
    }
    /* No padding at the bottom or right either: every output pixel reads inside the image
     * (the gather and the scatter have no zero rows or columns). */
    if ((int64_t)(s->out_height - 1) * s->stride_height >= s->height ||
        (int64_t)(s->out_width - 1) * s->stride_width >= s->width) {
        return 0;
    }
    return adir_pointwise_strided_chunk(g->group_channels, g->out_pixels, scratch_floats);
}

/* Whether the implicit-GEMM path of `kind` takes these sizes and fits in scratch_floats. */
static int adir_conv_implicit_fits(int32_t kind, int32_t channels, int32_t height,
                                   int32_t width, int32_t out_channels, int32_t out_height,
                                   int32_t out_width, int32_t kernel_height,
                                   int32_t kernel_width, int32_t stride_height,
                                   int32_t stride_width, int32_t pad_top, int32_t pad_left,
                                   int32_t dilation_height, int32_t dilation_width,
                                   int32_t groups, int32_t scratch_floats)
{
    const int32_t floats = adir_conv_implicit_floats(
        kind, channels, height, width, out_channels, out_height, out_width, kernel_height,
        kernel_width, stride_height, stride_width, pad_top, pad_left, dilation_height,
        dilation_width, groups);
    return floats > 0 && floats <= scratch_floats;
}

void adir_tuned_conv2d_gemm(const float *x, const float *w, const float *bias, float *y,
                            int32_t batch, int32_t channels, int32_t height, int32_t width,
                            int32_t out_channels, int32_t out_height, int32_t out_width,
                            int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                            int32_t stride_width, int32_t pad_top, int32_t pad_left,
                            int32_t dilation_height, int32_t dilation_width, int32_t groups,
                            float *scratch, int32_t scratch_floats)
{
    const struct adir_conv_gemm g = adir_conv_gemm_of(
        channels, height, width, out_channels, out_height, out_width, kernel_height,
        kernel_width, stride_height, stride_width, pad_top, pad_left, dilation_height,
        dilation_width, groups, scratch_floats);
    int32_t n, k, o, first, t0, chunk;
    size_t pixel;
    if (ADIR_CONV_IMPLICIT && g.pointwise && groups == 1 &&
        adir_pointwise_takes(ADIR_CONV_IMPLICIT_FORWARD, channels, g.out_pixels)) {
        adir_conv2d_pointwise(x, w, bias, y, batch, channels, g.out_pixels, out_channels);
        return;
    }
    chunk = ADIR_CONV_IMPLICIT ? adir_strided_pointwise_chunk(&g, groups, scratch_floats) : 0;
    if (chunk > 0) {
        adir_conv2d_pointwise_strided(x, w, bias, y, batch, channels, height, width, out_channels,
                                      out_height, out_width, stride_height, stride_width, scratch,
                                      chunk);
        return;
    }
    if (ADIR_CONV_IMPLICIT && !g.pointwise &&
        adir_conv_implicit_fits(ADIR_CONV_IMPLICIT_FORWARD, CONV_GEMM_SIZES, scratch_floats)) {
        adir_conv2d_implicit(x, w, bias, y, batch, CONV_GEMM_SIZES, scratch);
        return;
    }
    for (n = 0; n < batch; ++n) {
        for (k = 0; k < groups; ++k) {
            const float *x_g = x + ((size_t)n * (size_t)channels +
                                    (size_t)k * (size_t)g.group_channels) * g.plane;
            const float *w_g = w + (size_t)k * (size_t)g.group_outputs * (size_t)g.taps;
            float *y_g = y + ((size_t)n * (size_t)out_channels +
                              (size_t)k * (size_t)g.group_outputs) * g.out_plane;
            if (g.pointwise) {
                adir_conv_gemm(w_g, (size_t)g.taps, 1u, x_g, g.plane, y_g, g.out_plane,
                               g.group_outputs, g.out_pixels, g.taps, 0);
            } else {
                for (first = 0; first < g.out_pixels; first += g.chunk) {
                    const int32_t count =
                        g.out_pixels - first < g.chunk ? g.out_pixels - first : g.chunk;
                    for (t0 = 0; t0 < g.taps; t0 += g.block) {
                        const int32_t t1 = g.taps - t0 < g.block ? g.taps : t0 + g.block;
                        adir_conv_panel(x_g, NULL, &g.s, t0, t1, first, count, scratch,
                                        (size_t)count, 1u);
                        adir_conv_gemm(w_g + t0, (size_t)g.taps, 1u, scratch, (size_t)count,
                                       y_g + first, g.out_plane, g.group_outputs, count,
                                       t1 - t0, t0 > 0);
                    }
                }
            }
            if (bias) {
                for (o = 0; o < g.group_outputs; ++o) {
                    const float b = bias[k * g.group_outputs + o];
                    float *y_o = y_g + (size_t)o * g.out_plane;
                    for (pixel = 0; pixel < g.out_plane; ++pixel) {
                        y_o[pixel] += b;
                    }
                }
            }
        }
    }
}

void adir_tuned_conv2d_grad_input_gemm(const float *dy, const float *w, float *dx, int32_t batch,
                                       int32_t channels, int32_t height, int32_t width,
                                       int32_t out_channels, int32_t out_height,
                                       int32_t out_width, int32_t kernel_height,
                                       int32_t kernel_width, int32_t stride_height,
                                       int32_t stride_width, int32_t pad_top, int32_t pad_left,
                                       int32_t dilation_height, int32_t dilation_width,
                                       int32_t groups, float *scratch, int32_t scratch_floats)
{
    const struct adir_conv_gemm g = adir_conv_gemm_of(
        channels, height, width, out_channels, out_height, out_width, kernel_height,
        kernel_width, stride_height, stride_width, pad_top, pad_left, dilation_height,
        dilation_width, groups, scratch_floats);
    int32_t n, k, first, t0, chunk;
    if (ADIR_CONV_IMPLICIT && g.pointwise && groups == 1 &&
        adir_pointwise_takes(ADIR_CONV_IMPLICIT_GRAD_INPUT, channels, g.out_pixels)) {
        adir_conv2d_grad_input_pointwise(dy, w, dx, batch, channels, g.out_pixels, out_channels);
        return;
    }
    chunk = ADIR_CONV_IMPLICIT ? adir_strided_pointwise_chunk(&g, groups, scratch_floats) : 0;
    if (chunk > 0) {
        adir_conv2d_grad_input_pointwise_strided(dy, w, dx, batch, channels, height, width,
                                                 out_channels, out_height, out_width,
                                                 stride_height, stride_width, scratch, chunk);
        return;
    }
    if (ADIR_CONV_IMPLICIT && !g.pointwise &&
        adir_conv_implicit_fits(ADIR_CONV_IMPLICIT_GRAD_INPUT, CONV_GEMM_SIZES, scratch_floats)) {
        adir_conv2d_grad_input_implicit(dy, w, dx, batch, CONV_GEMM_SIZES, scratch);
        return;
    }
    if (!g.pointwise) {
        memset(dx, 0, (size_t)batch * (size_t)channels * g.plane * sizeof *dx);
    }
    for (n = 0; n < batch; ++n) {
        for (k = 0; k < groups; ++k) {
            const float *dy_g = dy + ((size_t)n * (size_t)out_channels +
                                      (size_t)k * (size_t)g.group_outputs) * g.out_plane;
            const float *w_g = w + (size_t)k * (size_t)g.group_outputs * (size_t)g.taps;
            float *dx_g = dx + ((size_t)n * (size_t)channels +
                                (size_t)k * (size_t)g.group_channels) * g.plane;
            /* W^T [taps, outputs] is w_g read with rows 1 and columns taps apart. */
            if (g.pointwise) {
                adir_conv_gemm(w_g, 1u, (size_t)g.taps, dy_g, g.out_plane, dx_g, g.plane,
                               g.taps, g.out_pixels, g.group_outputs, 0);
                continue;
            }
            for (first = 0; first < g.out_pixels; first += g.chunk) {
                const int32_t count =
                    g.out_pixels - first < g.chunk ? g.out_pixels - first : g.chunk;
                for (t0 = 0; t0 < g.taps; t0 += g.block) {
                    const int32_t t1 = g.taps - t0 < g.block ? g.taps : t0 + g.block;
                    adir_conv_gemm(w_g + t0, 1u, (size_t)g.taps, dy_g + first, g.out_plane,
                                   scratch, (size_t)count, t1 - t0, count, g.group_outputs, 0);
                    adir_conv_panel(dx_g, dx_g, &g.s, t0, t1, first, count, scratch,
                                    (size_t)count, 1u);
                }
            }
        }
    }
}

void adir_tuned_conv2d_grad_weight_gemm(const float *x, const float *dy, float *dw,
                                        int32_t batch, int32_t channels, int32_t height,
                                        int32_t width, int32_t out_channels,
                                        int32_t out_height, int32_t out_width,
                                        int32_t kernel_height, int32_t kernel_width,
                                        int32_t stride_height, int32_t stride_width,
                                        int32_t pad_top, int32_t pad_left,
                                        int32_t dilation_height, int32_t dilation_width,
                                        int32_t groups, float *scratch, int32_t scratch_floats)
{
    const struct adir_conv_gemm g = adir_conv_gemm_of(
        channels, height, width, out_channels, out_height, out_width, kernel_height,
        kernel_width, stride_height, stride_width, pad_top, pad_left, dilation_height,
        dilation_width, groups, scratch_floats);
    /* dW [outputs, taps] += dy [outputs, chunk] X^T [chunk, block]: a is dy as it lies (rows
     * out_plane apart), b the panel built transposed (its rows, one pixel's taps, contiguous),
     * c dW's block of columns; the sums run on from chunk to chunk and sample to sample. */
    int32_t n, k, first, t0;
    if (ADIR_CONV_IMPLICIT && g.pointwise && groups == 1 &&
        adir_pointwise_takes(ADIR_CONV_IMPLICIT_GRAD_WEIGHT, channels, g.out_pixels) &&
        (int64_t)channels * g.out_pixels <= (int64_t)scratch_floats) {
        adir_conv2d_grad_weight_pointwise(x, dy, dw, batch, channels, g.out_pixels, out_channels,
                                          scratch);
        return;
    }
    if (ADIR_CONV_IMPLICIT &&
        adir_conv_implicit_fits(ADIR_CONV_IMPLICIT_GRAD_WEIGHT, CONV_GEMM_SIZES, scratch_floats)) {
        adir_conv2d_grad_weight_implicit(x, dy, dw, batch, CONV_GEMM_SIZES, scratch);
        return;
    }
    memset(dw, 0, (size_t)out_channels * (size_t)g.taps * sizeof *dw);
    for (n = 0; n < batch; ++n) {
        for (k = 0; k < groups; ++k) {
            const float *x_g = x + ((size_t)n * (size_t)channels +
                                    (size_t)k * (size_t)g.group_channels) * g.plane;
            const float *dy_g = dy + ((size_t)n * (size_t)out_channels +
                                      (size_t)k * (size_t)g.group_outputs) * g.out_plane;
            float *dw_g = dw + (size_t)k * (size_t)g.group_outputs * (size_t)g.taps;
            for (first = 0; first < g.out_pixels; first += g.chunk) {
                const int32_t count =
                    g.out_pixels - first < g.chunk ? g.out_pixels - first : g.chunk;
                for (t0 = 0; t0 < g.taps; t0 += g.block) {
                    const int32_t t1 = g.taps - t0 < g.block ? g.taps : t0 + g.block;
                    adir_conv_panel(x_g, NULL, &g.s, t0, t1, first, count, scratch, 1u,
                                    (size_t)(t1 - t0));
                    adir_conv_gemm(dy_g + first, g.out_plane, 1u, scratch, (size_t)(t1 - t0),
                                   dw_g + t0, (size_t)g.taps, g.group_outputs, t1 - t0, count,
                                   1);
                }
            }
        }
    }
}
