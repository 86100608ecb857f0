/* adir_tuned_depthwise_3x3.c: depthwise 3 x 3 convolutions of stride 1 or 2 (any padding up to
 * 2, dilation 1) for a scalar core with 32 float registers (the Cortex-M4F's S registers):
 * adir_tuned_conv2d_depthwise_3x3, adir_tuned_conv2d_grad_input_depthwise_3x3 and
 * adir_tuned_conv2d_grad_weight_depthwise_3x3 (their references: adir_conv2d, ... in
 * reference/adir_conv_and_pool.c; select-kernels chooses them on the Cortex-M targets,
 * adir_tuned_depthwise.c's vector-friendly flat rows elsewhere).
 *
 * Register blocking: a channel's 9 weights stay in registers, and a block of DW3_COLS output
 * pixels along a row (fewer at a row's end) keeps its sums in registers while the kernel's
 * three rows pass, each row's inputs loaded once into registers (DW3_COLS + 2 of them at
 * stride 1): 9 x 4 multiply-adds for 18 loads and 4 stores. The weight gradient keeps its 9
 * sums in registers for the whole plane. No loop reads bounds: a plane with padding is first
 * copied with its zeros into the scratch buffer select-kernels planned
 * (adir_depthwise_3x3_scratch in select_kernels/tuned.py).
 *
 * Every sum runs in the reference's order, as in adir_tuned_depthwise.c: the forward pass over
 * the taps (i, j) from 0, then the bias; the input gradient over the output pixels (p, q) that
 * reach a pixel in row-major order (at stride 1 the forward pass over dy, padded, with the
 * kernel turned half a turn: taps in reverse); the weight gradient over (n, p, q). A tap in the
 * padding adds a product of 0. So bit for bit the reference's without a fast fused
 * multiply-add (ADIR_FMA: one rounding a multiply-add where the target has it). */
#include <string.h>

#include "adir_tuned.h"

/* Output pixels per register block: 4 sums, 9 weights and up to 9 inputs (stride 2) in
 * registers (22 of the M4F's 32). */
#define DW3_COLS 4
/* The widest row of inputs a block reads: (DW3_COLS - 1) * stride + 3 at stride 2. */
#define DW3_SPAN (2 * (DW3_COLS - 1) + 3)

/* xp (rows x cols, rows ld apart) = plane x (height x width) placed at row `top` and column
 * `left`, zeros around it (the parts of x past rows or cols are not copied). */
static void dw3_pad(const float *restrict x, int32_t height, int32_t width, int32_t top,
                    int32_t left, int32_t rows, int32_t cols, float *restrict xp)
{
    int32_t r, col;
    const int32_t last = left + width < cols ? left + width : cols;
    for (r = 0; r < rows; ++r) {
        const int32_t source = r - top;
        float *restrict xp_r = xp + (size_t)r * (size_t)cols;
        if (source < 0 || source >= height) {
            for (col = 0; col < cols; ++col) {
                xp_r[col] = 0.0f;
            }
            continue;
        }
        {
            const float *restrict x_r = x + (size_t)source * (size_t)width;
            for (col = 0; col < left; ++col) {
                xp_r[col] = 0.0f;
            }
            for (; col < last; ++col) {
                xp_r[col] = x_r[col - left];
            }
            for (; col < cols; ++col) {
                xp_r[col] = 0.0f;
            }
        }
    }
}

/* y[b] (b < count) = the sum over the taps (i, j) in order of w[i][j] times the input at row
 * i, column b * stride + j of xp (rows ld apart), then + bias. stride and count are constants
 * where inlined, so the arrays are registers. */
static ADIR_INLINE void dw3_forward_block(const float *restrict xp, size_t ld, const float *w,
                                          float bias, int has_bias, int stride, int count,
                                          float *restrict y)
{
    float acc[DW3_COLS], in[DW3_SPAN];
    const int span = (count - 1) * stride + 3;
    int b, i, j, k;
    ADIR_UNROLL
    for (b = 0; b < count; ++b) {
        acc[b] = 0.0f;
    }
    ADIR_UNROLL
    for (i = 0; i < 3; ++i) {
        const float *restrict row = xp + (size_t)i * ld;
        ADIR_UNROLL
        for (k = 0; k < span; ++k) {
            in[k] = row[k];
        }
        ADIR_UNROLL
        for (b = 0; b < count; ++b) {
            ADIR_UNROLL
            for (j = 0; j < 3; ++j) {
                acc[b] = ADIR_FMA(w[i * 3 + j], in[b * stride + j], acc[b]);
            }
        }
    }
    ADIR_UNROLL
    for (b = 0; b < count; ++b) {
        y[b] = has_bias ? acc[b] + bias : acc[b];
    }
}

/* y (out_height x out_width) = the forward pass over xp (the padded plane, rows ld apart) with
 * the 9 weights w3. */
static ADIR_INLINE void dw3_forward_plane(const float *restrict xp, size_t ld, const float *w3,
                                          float bias, int has_bias, int stride,
                                          int32_t out_height, int32_t out_width,
                                          float *restrict y)
{
    float w[9];
    int32_t p, q, t;
    ADIR_UNROLL
    for (t = 0; t < 9; ++t) {
        w[t] = w3[t];
    }
    for (p = 0; p < out_height; ++p) {
        const float *restrict x_p = xp + (size_t)(p * stride) * ld;
        float *restrict y_p = y + (size_t)p * (size_t)out_width;
        for (q = 0; q + DW3_COLS <= out_width; q += DW3_COLS) {
            dw3_forward_block(x_p + (size_t)(q * stride), ld, w, bias, has_bias, stride,
                              DW3_COLS, y_p + q);
        }
        switch (out_width - q) {
        case 3:
            dw3_forward_block(x_p + (size_t)(q * stride), ld, w, bias, has_bias, stride, 3,
                              y_p + q);
            break;
        case 2:
            dw3_forward_block(x_p + (size_t)(q * stride), ld, w, bias, has_bias, stride, 2,
                              y_p + q);
            break;
        case 1:
            dw3_forward_block(x_p + (size_t)(q * stride), ld, w, bias, has_bias, stride, 1,
                              y_p + q);
            break;
        default:
            break;
        }
    }
}

ADIR_NOINLINE static void dw3_forward_stride1(const float *restrict xp, size_t ld, const float *w,
                                              float bias, int has_bias, int32_t out_height,
                                              int32_t out_width, float *restrict y)
{
    dw3_forward_plane(xp, ld, w, bias, has_bias, 1, out_height, out_width, y);
}

ADIR_NOINLINE static void dw3_forward_stride2(const float *restrict xp, size_t ld, const float *w,
                                              float bias, int has_bias, int32_t out_height,
                                              int32_t out_width, float *restrict y)
{
    dw3_forward_plane(xp, ld, w, bias, has_bias, 2, out_height, out_width, y);
}

/* dxp (rows ld apart) += the block's count output pixels' gradients g[b] times the weights,
 * at row i, column b * stride + j for tap (i, j): pixel b's terms before pixel b + 1's, as the
 * reference adds them. */
static ADIR_INLINE void dw3_scatter_block(float *restrict dxp, size_t ld, const float *w,
                                          const float *restrict g, int stride, int count)
{
    float gv[DW3_COLS], v[DW3_SPAN];
    const int span = (count - 1) * stride + 3;
    int b, i, j, k;
    ADIR_UNROLL
    for (b = 0; b < count; ++b) {
        gv[b] = g[b];
    }
    ADIR_UNROLL
    for (i = 0; i < 3; ++i) {
        float *restrict row = dxp + (size_t)i * ld;
        ADIR_UNROLL
        for (k = 0; k < span; ++k) {
            v[k] = row[k];
        }
        ADIR_UNROLL
        for (b = 0; b < count; ++b) {
            ADIR_UNROLL
            for (j = 0; j < 3; ++j) {
                v[b * stride + j] = ADIR_FMA(w[i * 3 + j], gv[b], v[b * stride + j]);
            }
        }
        ADIR_UNROLL
        for (k = 0; k < span; ++k) {
            row[k] = v[k];
        }
    }
}

/* dxp (the padded plane, rows ld apart, zeroed by the caller) += the adjoint of the forward
 * pass at stride 2 for dy (out_height x out_width): rows of output pixels in order, each row in
 * blocks from the left, so every pixel of dxp gets its terms in the reference's order. */
ADIR_NOINLINE static void dw3_scatter_stride2(float *restrict dxp, size_t ld, const float *w3,
                                              const float *restrict dy, int32_t out_height,
                                              int32_t out_width)
{
    float w[9];
    int32_t p, q, t;
    ADIR_UNROLL
    for (t = 0; t < 9; ++t) {
        w[t] = w3[t];
    }
    for (p = 0; p < out_height; ++p) {
        float *restrict dx_p = dxp + (size_t)(p * 2) * ld;
        const float *restrict dy_p = dy + (size_t)p * (size_t)out_width;
        for (q = 0; q + DW3_COLS <= out_width; q += DW3_COLS) {
            dw3_scatter_block(dx_p + (size_t)(q * 2), ld, w, dy_p + q, 2, DW3_COLS);
        }
        for (; q < out_width; ++q) {
            dw3_scatter_block(dx_p + (size_t)(q * 2), ld, w, dy_p + q, 2, 1);
        }
    }
}

/* acc[i * 3 + j] += the block's count gradients g[b] times the input at row i, column
 * b * stride + j of xp: each tap's terms in the order of the pixels. */
static ADIR_INLINE void dw3_weight_block(const float *restrict xp, size_t ld,
                                         const float *restrict g, int stride, int count,
                                         float *acc)
{
    float gv[DW3_COLS], in[DW3_SPAN];
    const int span = (count - 1) * stride + 3;
    int b, i, j, k;
    ADIR_UNROLL
    for (b = 0; b < count; ++b) {
        gv[b] = g[b];
    }
    ADIR_UNROLL
    for (i = 0; i < 3; ++i) {
        const float *restrict row = xp + (size_t)i * ld;
        ADIR_UNROLL
        for (k = 0; k < span; ++k) {
            in[k] = row[k];
        }
        ADIR_UNROLL
        for (b = 0; b < count; ++b) {
            ADIR_UNROLL
            for (j = 0; j < 3; ++j) {
                acc[i * 3 + j] = ADIR_FMA(gv[b], in[b * stride + j], acc[i * 3 + j]);
            }
        }
    }
}

/* dw (9 taps) += the sums over the output pixels (out_height x out_width) of dy times the
 * input each tap read in xp (the padded plane, rows ld apart). */
static ADIR_INLINE void dw3_weight_plane(const float *restrict xp, size_t ld,
                                         const float *restrict dy, int stride,
                                         int32_t out_height, int32_t out_width,
                                         float *restrict dw)
{
    float acc[9];
    int32_t p, q, t;
    ADIR_UNROLL
    for (t = 0; t < 9; ++t) {
        acc[t] = dw[t];
    }
    for (p = 0; p < out_height; ++p) {
        const float *restrict x_p = xp + (size_t)(p * stride) * ld;
        const float *restrict dy_p = dy + (size_t)p * (size_t)out_width;
        for (q = 0; q + DW3_COLS <= out_width; q += DW3_COLS) {
            dw3_weight_block(x_p + (size_t)(q * stride), ld, dy_p + q, stride, DW3_COLS, acc);
        }
        for (; q < out_width; ++q) {
            dw3_weight_block(x_p + (size_t)(q * stride), ld, dy_p + q, stride, 1, acc);
        }
    }
    ADIR_UNROLL
    for (t = 0; t < 9; ++t) {
        dw[t] = acc[t];
    }
}

ADIR_NOINLINE static void dw3_weight_stride1(const float *restrict xp, size_t ld,
                                             const float *restrict dy, int32_t out_height,
                                             int32_t out_width, float *restrict dw)
{
    dw3_weight_plane(xp, ld, dy, 1, out_height, out_width, dw);
}

ADIR_NOINLINE static void dw3_weight_stride2(const float *restrict xp, size_t ld,
                                             const float *restrict dy, int32_t out_height,
                                             int32_t out_width, float *restrict dw)
{
    dw3_weight_plane(xp, ld, dy, 2, out_height, out_width, dw);
}

/* The plane the forward pass and the weight gradient read: x itself where no window reaches
 * past it (no padding at the top or left, the windows inside), else x padded into scratch. */
static const float *dw3_input_plane(const float *x, int32_t height, int32_t width,
                                    int32_t pad_top, int32_t pad_left, int32_t rows,
                                    int32_t cols, float *scratch, size_t *ld)
{
    if (pad_top == 0 && pad_left == 0 && rows <= height && cols <= width) {
        *ld = (size_t)width;
        return x;
    }
    dw3_pad(x, height, width, pad_top, pad_left, rows, cols, scratch);
    *ld = (size_t)cols;
    return scratch;
}

void adir_tuned_conv2d_depthwise_3x3(const float *x, const float *w, const float *bias, float *y,
                                     int32_t batch, int32_t channels, int32_t height,
                                     int32_t width, int32_t out_channels, int32_t out_height,
                                     int32_t out_width, int32_t kernel_height,
                                     int32_t kernel_width, int32_t stride_height,
                                     int32_t stride_width, int32_t pad_top, int32_t pad_left,
                                     int32_t dilation_height, int32_t dilation_width,
                                     int32_t groups, float *scratch, int32_t scratch_floats)
{
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const int32_t stride = stride_height;
    const int32_t rows = (out_height - 1) * stride + 3, cols = (out_width - 1) * stride + 3;
    int32_t n, c;
    /* select-kernels checked: groups = channels = out_channels, a 3 x 3 kernel, dilation 1,
     * stride 1 or 2 (the same both ways), padding at most 2, and sized the scratch. */
    (void)out_channels, (void)kernel_height, (void)kernel_width, (void)stride_width;
    (void)dilation_height, (void)dilation_width, (void)groups, (void)scratch_floats;
    for (n = 0; n < batch; ++n) {
        for (c = 0; c < channels; ++c) {
            const size_t at = (size_t)n * (size_t)channels + (size_t)c;
            size_t ld;
            const float *xp = dw3_input_plane(x + at * plane, height, width, pad_top, pad_left,
                                              rows, cols, scratch, &ld);
            const float b = bias ? bias[c] : 0.0f;
            if (stride == 1) {
                dw3_forward_stride1(xp, ld, w + (size_t)c * 9, b, bias != NULL, out_height,
                                    out_width, y + at * out_plane);
            } else {
                dw3_forward_stride2(xp, ld, w + (size_t)c * 9, b, bias != NULL, out_height,
                                    out_width, y + at * out_plane);
            }
        }
    }
}

void adir_tuned_conv2d_grad_input_depthwise_3x3(
    const float *dy, const float *w, float *dx, int32_t batch, int32_t channels, int32_t height,
    int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats)
{
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const int32_t stride = stride_height;
    int32_t n, c, r, col, t;
    (void)out_channels, (void)kernel_height, (void)kernel_width, (void)stride_width;
    (void)dilation_height, (void)dilation_width, (void)groups, (void)scratch_floats;
    for (n = 0; n < batch; ++n) {
        for (c = 0; c < channels; ++c) {
            const size_t at = (size_t)n * (size_t)channels + (size_t)c;
            const float *w_c = w + (size_t)c * 9;
            float *dx_c = dx + at * plane;
            if (stride == 1) {
                /* dx = the forward pass over dy placed at row 2 - pad_top and column 2 -
                 * pad_left of a zero plane (height + 2 x width + 2), with the kernel turned
                 * half a turn: pixel (r, col) then gets dy (r + pad_top - i, col + pad_left -
                 * j) times w[i][j] for i, j from 2 down, the output pixels in row-major order. */
                float turned[9];
                for (t = 0; t < 9; ++t) {
                    turned[t] = w_c[8 - t];
                }
                dw3_pad(dy + at * out_plane, out_height, out_width, 2 - pad_top, 2 - pad_left,
                        height + 2, width + 2, scratch);
                dw3_forward_stride1(scratch, (size_t)(width + 2), turned, 0.0f, 0, height, width,
                                    dx_c);
            } else {
                /* The adjoint into the padded plane (rows x cols, zeroed), then its pixels of
                 * the image (any below or right of it no window read). */
                const int32_t rows = (out_height - 1) * 2 + 3, cols = (out_width - 1) * 2 + 3;
                memset(scratch, 0, (size_t)rows * (size_t)cols * sizeof *scratch);
                dw3_scatter_stride2(scratch, (size_t)cols, w_c, dy + at * out_plane, out_height,
                                    out_width);
                for (r = 0; r < height; ++r) {
                    const int32_t row = r + pad_top;
                    for (col = 0; col < width; ++col) {
                        const int32_t column = col + pad_left;
                        dx_c[(size_t)r * (size_t)width + (size_t)col] =
                            row < rows && column < cols
                                ? scratch[(size_t)row * (size_t)cols + (size_t)column]
                                : 0.0f;
                    }
                }
            }
        }
    }
}

void adir_tuned_conv2d_grad_weight_depthwise_3x3(
    const float *x, const float *dy, float *dw, int32_t batch, int32_t channels, int32_t height,
    int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats)
{
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    const int32_t stride = stride_height;
    const int32_t rows = (out_height - 1) * stride + 3, cols = (out_width - 1) * stride + 3;
    int32_t n, c;
    (void)out_channels, (void)kernel_height, (void)kernel_width, (void)stride_width;
    (void)dilation_height, (void)dilation_width, (void)groups, (void)scratch_floats;
    memset(dw, 0, (size_t)channels * 9 * sizeof *dw);
    for (n = 0; n < batch; ++n) {
        for (c = 0; c < channels; ++c) {
            const size_t at = (size_t)n * (size_t)channels + (size_t)c;
            size_t ld;
            const float *xp = dw3_input_plane(x + at * plane, height, width, pad_top, pad_left,
                                              rows, cols, scratch, &ld);
            if (stride == 1) {
                dw3_weight_stride1(xp, ld, dy + at * out_plane, out_height, out_width,
                                   dw + (size_t)c * 9);
            } else {
                dw3_weight_stride2(xp, ld, dy + at * out_plane, out_height, out_width,
                                   dw + (size_t)c * 9);
            }
        }
    }
}
