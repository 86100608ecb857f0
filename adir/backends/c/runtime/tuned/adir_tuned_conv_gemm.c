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
 * X is never built whole: it is built a panel of `panel` output pixels at a time in the scratch
 * buffer that select-kernels planned in the arena (`adir.kernel_scratch`: K x panel floats; the
 * weight gradient's also holds dW^T [K, outputs] and the panel's dy^T [panel, outputs], and
 * computes dW^T += X dy^T). A pointwise convolution (1 x 1, stride 1, no padding) is a GEMM on
 * the image itself: its forward pass and input gradient use no scratch.
 *
 * Sums: the forward pass sums each output over (c, i, j) in order from 0, as the reference
 * does (a tap in the padding adds a product of 0), then adds the bias; the weight gradient
 * sums each element over (n, p, q) in order, each panel's sums continuing the last's; the
 * pointwise input gradient over the outputs in order: all bit for bit the reference's without
 * a fast fused multiply-add. The other input gradients (sums over the outputs, then over the
 * taps into each pixel) add in another order: within the bound of their term counts. */
#include <string.h>

#include "adir_tuned.h"

/* One MR x NR tile of c (c_row apart) = a b by the micro-kernel. */
ADIR_NOINLINE static void adir_conv_gemm_tile(const float *restrict a, size_t a_row,
                                              size_t a_col, const float *restrict b,
                                              size_t b_row, int32_t k, float *restrict c,
                                              size_t c_row)
{
    float acc[ADIR_GEMM_MR][ADIR_GEMM_NR];
    int32_t i, j;
    adir_gemm_sums(a, a_row, a_col, b, b_row, k, acc);
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
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
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            acc[i][j] = c[(size_t)i * c_row + (size_t)j];
        }
    }
    adir_gemm_sums_onto(a, a_row, a_col, b, b_row, k, acc);
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
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

/* c[i * c_row + j] (+)= the sum over p < k of a[i * a_row + p * a_col] * b[p * b_row + j], for
 * i < m, j < n: MR x NR tiles, then the edges. */
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
        if (j < n) {
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

/* The panel of im2col for output pixels first .. first + count - 1 of an image x (one sample,
 * s->channels planes): element (t, pixel) at panel[t * t_step + (pixel - first) * pixel_step].
 * With dx (x's shape) the panel is instead added into dx where x would be read (col2im). */
static void adir_conv_panel(const float *x, float *dx, const struct adir_conv_shape *s,
                            int32_t first, int32_t count, float *panel, size_t t_step,
                            size_t pixel_step)
{
    const size_t plane = (size_t)s->height * (size_t)s->width;
    const int32_t end = first + count;
    int32_t c, i, j;
    size_t t = 0;
    for (c = 0; c < s->channels; ++c) {
        const float *x_c = x + (size_t)c * plane;
        float *dx_c = dx ? dx + (size_t)c * plane : NULL;
        for (i = 0; i < s->kernel_height; ++i) {
            for (j = 0; j < s->kernel_width; ++j, ++t) {
                const int32_t offset = j * s->dilation_width - s->pad_left;
                int32_t lo, hi, pixel = first;
                float *out = panel + t * t_step;
                adir_conv_columns_inside(offset, s->stride_width, s->width, s->out_width, &lo,
                                         &hi);
                while (pixel < end) {
                    const int32_t p = pixel / s->out_width, q0 = pixel % s->out_width;
                    const int32_t q1 = q0 + (end - pixel) < s->out_width ? q0 + (end - pixel)
                                                                         : s->out_width;
                    const int32_t r = p * s->stride_height + i * s->dilation_height - s->pad_top;
                    const int inside = r >= 0 && r < s->height;
                    const size_t row = (size_t)(inside ? r : 0) * (size_t)s->width;
                    adir_conv_run(x_c + row, dx_c ? dx_c + row : NULL, s->stride_width, offset,
                                  q0, q1, inside ? lo : q1, inside ? hi : q1, out, pixel_step);
                    out += (size_t)(q1 - q0) * pixel_step;
                    pixel += q1 - q0;
                }
            }
        }
    }
}

/* What the three kernels share: the shape, the group sizes, and whether the convolution is
 * pointwise (im2col is the image itself). */
struct adir_conv_gemm {
    struct adir_conv_shape s;
    int32_t group_channels, group_outputs, taps, out_pixels, panel;
    size_t plane, out_plane;
    int pointwise;
};

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
    /* The panel select-kernels sized the scratch for (at least one pixel). */
    g.panel = g.taps > 0 ? scratch_floats / g.taps : 0;
    if (g.panel < 1) {
        g.panel = 1;
    }
    return g;
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
    int32_t n, k, o, first;
    size_t pixel;
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
                for (first = 0; first < g.out_pixels; first += g.panel) {
                    const int32_t count =
                        g.out_pixels - first < g.panel ? g.out_pixels - first : g.panel;
                    adir_conv_panel(x_g, NULL, &g.s, first, count, scratch, (size_t)count, 1u);
                    adir_conv_gemm(w_g, (size_t)g.taps, 1u, scratch, (size_t)count, y_g + first,
                                   g.out_plane, g.group_outputs, count, g.taps, 0);
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
    int32_t n, k, first;
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
            } else {
                for (first = 0; first < g.out_pixels; first += g.panel) {
                    const int32_t count =
                        g.out_pixels - first < g.panel ? g.out_pixels - first : g.panel;
                    adir_conv_gemm(w_g, 1u, (size_t)g.taps, dy_g + first, g.out_plane, scratch,
                                   (size_t)count, g.taps, count, g.group_outputs, 0);
                    adir_conv_panel(dx_g, dx_g, &g.s, first, count, scratch, (size_t)count, 1u);
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
    struct adir_conv_gemm g = adir_conv_gemm_of(
        channels, height, width, out_channels, out_height, out_width, kernel_height,
        kernel_width, stride_height, stride_width, pad_top, pad_left, dilation_height,
        dilation_width, groups, scratch_floats);
    /* The scratch: dW^T [taps, outputs], then a panel's dy^T [panel, outputs] and X [taps,
     * panel]: so the micro-kernel's a is X and its rows of b (dy^T) are contiguous. */
    const size_t outs = (size_t)g.group_outputs, taps = (size_t)g.taps;
    float *dw_t = scratch, *dy_t = scratch + taps * outs;
    int32_t n, k, first, o, q;
    size_t t;
    g.panel = (int32_t)(((size_t)scratch_floats - taps * outs) / (taps + outs));
    for (k = 0; k < groups; ++k) {
        float *dw_g = dw + (size_t)k * outs * taps;
        memset(dw_t, 0, taps * outs * sizeof *dw_t);
        for (n = 0; n < batch; ++n) {
            const float *x_g = x + ((size_t)n * (size_t)channels +
                                    (size_t)k * (size_t)g.group_channels) * g.plane;
            const float *dy_g = dy + ((size_t)n * (size_t)out_channels + (size_t)k * outs) *
                                         g.out_plane;
            for (first = 0; first < g.out_pixels; first += g.panel) {
                const int32_t count =
                    g.out_pixels - first < g.panel ? g.out_pixels - first : g.panel;
                float *panel = dy_t + (size_t)count * outs;
                for (o = 0; o < g.group_outputs; ++o) {
                    const float *dy_o = dy_g + (size_t)o * g.out_plane + (size_t)first;
                    for (q = 0; q < count; ++q) {
                        dy_t[(size_t)q * outs + (size_t)o] = dy_o[q];
                    }
                }
                adir_conv_panel(x_g, NULL, &g.s, first, count, panel, (size_t)count, 1u);
                adir_conv_gemm(panel, (size_t)count, 1u, dy_t, outs, dw_t, outs, g.taps,
                               g.group_outputs, count, 1);
            }
        }
        for (t = 0; t < taps; ++t) {
            for (o = 0; o < g.group_outputs; ++o) {
                dw_g[(size_t)o * taps + t] = dw_t[t * outs + (size_t)o];
            }
        }
    }
}
