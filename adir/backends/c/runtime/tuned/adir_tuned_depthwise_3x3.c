/* adir_tuned_depthwise_3x3.c: depthwise 3 x 3 convolutions of stride 1 or 2 (any padding up to
 * 2, dilation 1) for a scalar core with 32 float registers (the Cortex-M4F's S registers):
 * adir_tuned_conv2d_depthwise_3x3, adir_tuned_conv2d_grad_input_depthwise_3x3 and
 * adir_tuned_conv2d_grad_weight_depthwise_3x3 (their references: adir_conv2d, ... in
 * reference/adir_conv_and_pool.c; select-kernels chooses them on the Cortex-M4F and M7,
 * adir_tuned_depthwise.c's vector-friendly flat rows elsewhere).
 *
 * Register blocking: a channel's 9 weights stay in registers, and a block of DW3_COLS output
 * pixels along a row (fewer at a row's end) keeps its sums in registers while the kernel's
 * three rows pass, each row's inputs loaded once into registers (DW3_COLS + 2 of them at
 * stride 1): 9 x 4 multiply-adds for 18 loads and 4 stores. The weight gradient keeps its 9
 * sums in registers for the whole plane. No loop reads bounds: a plane with padding is first
 * copied into the scratch buffer select-kernels planned (its size in select_kernels/tuned.py),
 * whose border of zeros is written once a call.
 *
 * Every sum runs in the reference's order, as in adir_tuned_depthwise.c: the forward pass over
 * the taps (i, j) from 0, then the bias; the input gradient over the output pixels (p, q) that
 * reach a pixel in row-major order (at stride 1 the forward pass over dy, padded, with the
 * kernel turned half a turn: taps in reverse); the weight gradient over (n, p, q). A tap in the
 * padding adds a product of 0. So bit for bit the reference's without a fast fused
 * multiply-add (ADIR_FMA: one rounding a multiply-add where the target has it). */
#include "adir_tuned.h"

/* Output pixels per register block: 4 sums, 9 weights and the inputs (6 at stride 1, 9 at
 * stride 2) in registers. A row's last block takes the pixels past its last multiple of 4
 * (5 to 7 pixels, or fewer in a row under 4: DS-CNN's rows of 5 are one block), so no block
 * of one pixel loads 3 inputs a row for 3 multiply-adds. */
#define DW3_COLS 4
#define DW3_MOST (2 * DW3_COLS - 1)
/* The widest row of inputs a block reads: (DW3_MOST - 1) * stride + 3 at stride 2. */
#define DW3_SPAN (2 * (DW3_MOST - 1) + 3)

/* The blocks of a row of `width` output pixels: whole blocks of DW3_COLS but the last, and the
 * last's width (1 to DW3_MOST). */
static void dw3_blocks(int32_t width, int32_t *whole, int32_t *last)
{
    *whole = width < DW3_COLS ? 0 : width / DW3_COLS - 1;
    *last = width - *whole * DW3_COLS;
}

/* The plane copies below are loops that gcc would otherwise turn into calls of memcpy and
 * memset: 3 calls a row, each with its set-up (alignment tests, a call and return), for rows
 * of a few floats (DS-CNN's 5) cost more than the copying. */
#if defined(__GNUC__) && !defined(__clang__)
#define DW3_NO_LIBRARY_CALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define DW3_NO_LIBRARY_CALLS
#endif

/* xp (rows x cols) = 0 outside the place of a plane of height x width at row `top` and column
 * `left` (dw3_place's); done once a call, as every channel's plane goes to the same place. */
DW3_NO_LIBRARY_CALLS static void dw3_border(int32_t height, int32_t width, int32_t top,
                                            int32_t left, int32_t rows, int32_t cols,
                                            float *restrict xp)
{
    int32_t r, col;
    for (r = 0; r < rows; ++r) {
        float *restrict xp_r = xp + (size_t)r * (size_t)cols;
        const int inside = r >= top && r - top < height;
        for (col = 0; col < cols; ++col) {
            if (!inside || col < left || col - left >= width) {
                xp_r[col] = 0.0f;
            }
        }
    }
}

/* rows rows of count floats, width apart in x, to cols apart in xp (count a constant where
 * inlined: each row is count loads and stores and two pointer steps). */
static ADIR_INLINE void dw3_copy_rows(const float *restrict x, size_t width, float *restrict xp,
                                      size_t cols, int32_t rows, int32_t count)
{
    int32_t r, col;
    for (r = 0; r < rows; ++r, x += width, xp += cols) {
        ADIR_UNROLL
        for (col = 0; col < count; ++col) {
            xp[col] = x[col];
        }
    }
}

/* The place (rows top .. and columns left .. of xp, rows x cols) of plane x (height x width) =
 * x, where it falls inside xp. Rows of up to 8 floats (DS-CNN's 5) by copies of a constant
 * count, where a loop's test and branch a float would cost as much as the copy. */
DW3_NO_LIBRARY_CALLS static void dw3_place(const float *restrict x, int32_t height,
                                           int32_t width, int32_t top, int32_t left,
                                           int32_t rows, int32_t cols, float *restrict xp)
{
    const int32_t last_row = top + height < rows ? height : rows - top;
    const int32_t count = left + width < cols ? width : cols - left;
    const size_t from = (size_t)width, to = (size_t)cols;
    float *restrict at = xp + (size_t)top * (size_t)cols + (size_t)left;
    switch (count) {
    case 1: dw3_copy_rows(x, from, at, to, last_row, 1); break;
    case 2: dw3_copy_rows(x, from, at, to, last_row, 2); break;
    case 3: dw3_copy_rows(x, from, at, to, last_row, 3); break;
    case 4: dw3_copy_rows(x, from, at, to, last_row, 4); break;
    case 5: dw3_copy_rows(x, from, at, to, last_row, 5); break;
    case 6: dw3_copy_rows(x, from, at, to, last_row, 6); break;
    case 7: dw3_copy_rows(x, from, at, to, last_row, 7); break;
    case 8: dw3_copy_rows(x, from, at, to, last_row, 8); break;
    default: {
        int32_t r, col;
        for (r = 0; r < last_row; ++r, x += from, at += to) {
            for (col = 0; col < count; ++col) {
                at[col] = x[col];
            }
        }
        break;
    }
    }
}

/* p[0 .. count) = 0. */
DW3_NO_LIBRARY_CALLS static void dw3_zero(float *restrict p, size_t count)
{
    size_t k;
    for (k = 0; k < count; ++k) {
        p[k] = 0.0f;
    }
}

/* The kernel row i's input row of a block: x0, x1 or x2 (i a constant where inlined). Three
 * pointers with the columns at constant offsets: with one pointer and rows ld apart, gcc -O2
 * kept each load's offset in a stack slot on the M4F (3 instructions a load). */
static ADIR_INLINE const float *dw3_row(const float *x0, const float *x1, const float *x2, int i)
{
    return i == 0 ? x0 : i == 1 ? x1 : x2;
}

/* y[b] (b < count) = the sum over the taps (i, j) in order of w[i][j] times the input at
 * column b * stride + j of row i (x0, x1, x2), then + bias. stride and count are constants
 * where inlined, so the arrays are registers. */
static ADIR_INLINE void dw3_forward_block(const float *x0, const float *x1, const float *x2,
                                          const float *w, float bias, int has_bias, int stride,
                                          int count, float *restrict y)
{
    float acc[DW3_MOST], in[DW3_SPAN];
    const int span = (count - 1) * stride + 3;
    int b, i, j, k;
    ADIR_UNROLL
    for (b = 0; b < count; ++b) {
        acc[b] = 0.0f;
    }
    ADIR_UNROLL
    for (i = 0; i < 3; ++i) {
        const float *restrict row = dw3_row(x0, x1, x2, i);
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
 * the 9 weights w3, each row in `whole` blocks of DW3_COLS and a last block. (A copy of the
 * loop over rows for each width of the last block, as the weight gradient has, measured 5%
 * slower here on the M4F and 4 KB larger.) */
static ADIR_INLINE void dw3_forward_plane(const float *restrict xp, size_t ld, const float *w3,
                                          float bias, int has_bias, int stride,
                                          int32_t out_height, int32_t out_width,
                                          float *restrict y)
{
    const float *x0 = xp, *x1 = xp + ld, *x2 = xp + 2 * ld;
    const size_t down = (size_t)stride * ld;
    float w[9];
    int32_t p, t, block, whole, last;
    ADIR_UNROLL
    for (t = 0; t < 9; ++t) {
        w[t] = w3[t];
    }
    dw3_blocks(out_width, &whole, &last);
    for (p = 0; p < out_height; ++p, x0 += down, x1 += down, x2 += down) {
        float *restrict y_p = y + (size_t)p * (size_t)out_width;
        const size_t at = (size_t)(whole * DW3_COLS * stride);
        for (block = 0; block < whole; ++block) {
            const size_t from = (size_t)(block * DW3_COLS * stride);
            dw3_forward_block(x0 + from, x1 + from, x2 + from, w, bias, has_bias, stride,
                              DW3_COLS, y_p + block * DW3_COLS);
        }
        y_p += whole * DW3_COLS;
#define DW3_LAST(n) \
    dw3_forward_block(x0 + at, x1 + at, x2 + at, w, bias, has_bias, stride, n, y_p)
        switch (last) {
        case 1: DW3_LAST(1); break;
        case 2: DW3_LAST(2); break;
        case 3: DW3_LAST(3); break;
        case 4: DW3_LAST(4); break;
        case 5: DW3_LAST(5); break;
        case 6: DW3_LAST(6); break;
        default: DW3_LAST(7); break;
        }
#undef DW3_LAST
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
static ADIR_INLINE void dw3_scatter_block(float *x0, float *x1, float *x2, const float *w,
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
        float *row = (float *)dw3_row(x0, x1, x2, i);
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
        float *dx0 = dxp + (size_t)(p * 2) * ld, *dx1 = dx0 + ld, *dx2 = dx1 + ld;
        const float *restrict dy_p = dy + (size_t)p * (size_t)out_width;
        for (q = 0; q + DW3_COLS <= out_width; q += DW3_COLS) {
            dw3_scatter_block(dx0 + 2 * q, dx1 + 2 * q, dx2 + 2 * q, w, dy_p + q, 2, DW3_COLS);
        }
        for (; q < out_width; ++q) {
            dw3_scatter_block(dx0 + 2 * q, dx1 + 2 * q, dx2 + 2 * q, w, dy_p + q, 2, 1);
        }
    }
}

/* acc[i * 3 + j] += the block's count gradients g[b] times the input at row i, column
 * b * stride + j of xp: each tap's terms in the order of the pixels. */
static ADIR_INLINE void dw3_weight_block(const float *x0, const float *x1, const float *x2,
                                         const float *restrict g, int stride, int count,
                                         float *acc)
{
    float gv[DW3_MOST], in[DW3_SPAN];
    const int span = (count - 1) * stride + 3;
    int b, i, j, k;
    ADIR_UNROLL
    for (b = 0; b < count; ++b) {
        gv[b] = g[b];
    }
    ADIR_UNROLL
    for (i = 0; i < 3; ++i) {
        const float *restrict row = dw3_row(x0, x1, x2, i);
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

/* acc (9 sums) += the weight gradient's terms of a plane (out_height x out_width of dy, xp
 * rows ld apart), each row in `whole` blocks of DW3_COLS and a last of `last` pixels (a
 * constant where inlined). */
static ADIR_INLINE void dw3_weight_rows(const float *xp, size_t ld, const float *restrict dy,
                                        int stride, int32_t out_height, int32_t out_width,
                                        int32_t whole, int last, float *acc)
{
    const float *x0 = xp, *x1 = xp + ld, *x2 = xp + 2 * ld;
    const size_t down = (size_t)stride * ld, at = (size_t)(whole * DW3_COLS * stride);
    int32_t p, block;
    for (p = 0; p < out_height; ++p, x0 += down, x1 += down, x2 += down) {
        const float *restrict dy_p = dy + (size_t)p * (size_t)out_width;
        for (block = 0; block < whole; ++block) {
            const size_t from = (size_t)(block * DW3_COLS * stride);
            dw3_weight_block(x0 + from, x1 + from, x2 + from, dy_p + block * DW3_COLS, stride,
                             DW3_COLS, acc);
        }
        dy_p += whole * DW3_COLS;
        if (last <= 6) {
            dw3_weight_block(x0 + at, x1 + at, x2 + at, dy_p, stride, last, acc);
        } else { /* 9 sums, 7 gradients and their inputs would spill: 4 and then 3 */
            const size_t next = at + (size_t)(4 * stride);
            dw3_weight_block(x0 + at, x1 + at, x2 + at, dy_p, stride, 4, acc);
            dw3_weight_block(x0 + next, x1 + next, x2 + next, dy_p + 4, stride, 3, acc);
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
    int32_t t, whole, last;
    ADIR_UNROLL
    for (t = 0; t < 9; ++t) {
        acc[t] = dw[t];
    }
    dw3_blocks(out_width, &whole, &last);
#define DW3_ROWS(n) dw3_weight_rows(xp, ld, dy, stride, out_height, out_width, whole, n, acc)
    switch (last) {
    case 1: DW3_ROWS(1); break;
    case 2: DW3_ROWS(2); break;
    case 3: DW3_ROWS(3); break;
    case 4: DW3_ROWS(4); break;
    case 5: DW3_ROWS(5); break;
    case 6: DW3_ROWS(6); break;
    default: DW3_ROWS(7); break;
    }
#undef DW3_ROWS
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

/* Whether the forward pass and the weight gradient read x itself: no window reaches past it
 * (no padding at the top or left, the windows inside). Else each channel's plane is placed in
 * scratch (rows x cols), whose border is zeroed once. */
static int dw3_reads_image(int32_t height, int32_t width, int32_t pad_top, int32_t pad_left,
                           int32_t rows, int32_t cols)
{
    return pad_top == 0 && pad_left == 0 && rows <= height && cols <= width;
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
    const int direct = dw3_reads_image(height, width, pad_top, pad_left, rows, cols);
    const size_t ld = direct ? (size_t)width : (size_t)cols;
    int32_t n, c;
    /* select-kernels checked: groups = channels = out_channels, a 3 x 3 kernel, dilation 1,
     * stride 1 or 2 (the same both ways), padding at most 2, and sized the scratch. */
    (void)out_channels, (void)kernel_height, (void)kernel_width, (void)stride_width;
    (void)dilation_height, (void)dilation_width, (void)groups, (void)scratch_floats;
    if (!direct) {
        dw3_border(height, width, pad_top, pad_left, rows, cols, scratch);
    }
    for (n = 0; n < batch; ++n) {
        for (c = 0; c < channels; ++c) {
            const size_t at = (size_t)n * (size_t)channels + (size_t)c;
            const float *xp = x + at * plane;
            const float b = bias ? bias[c] : 0.0f;
            if (!direct) {
                dw3_place(xp, height, width, pad_top, pad_left, rows, cols, scratch);
                xp = scratch;
            }
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
    const int32_t rows = (out_height - 1) * 2 + 3, cols = (out_width - 1) * 2 + 3;
    int32_t n, c, r, col, t;
    (void)out_channels, (void)kernel_height, (void)kernel_width, (void)stride_width;
    (void)dilation_height, (void)dilation_width, (void)groups, (void)scratch_floats;
    if (stride == 1) {
        dw3_border(out_height, out_width, 2 - pad_top, 2 - pad_left, height + 2, width + 2,
                   scratch);
    }
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
                dw3_place(dy + at * out_plane, out_height, out_width, 2 - pad_top,
                          2 - pad_left, height + 2, width + 2, scratch);
                dw3_forward_stride1(scratch, (size_t)(width + 2), turned, 0.0f, 0, height, width,
                                    dx_c);
            } else {
                /* The adjoint into the padded plane (rows x cols, zeroed), then its pixels of
                 * the image (any below or right of it no window read). */
                dw3_zero(scratch, (size_t)rows * (size_t)cols);
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
    const int direct = dw3_reads_image(height, width, pad_top, pad_left, rows, cols);
    const size_t ld = direct ? (size_t)width : (size_t)cols;
    int32_t n, c;
    (void)out_channels, (void)kernel_height, (void)kernel_width, (void)stride_width;
    (void)dilation_height, (void)dilation_width, (void)groups, (void)scratch_floats;
    dw3_zero(dw, (size_t)channels * 9);
    if (!direct) {
        dw3_border(height, width, pad_top, pad_left, rows, cols, scratch);
    }
    for (n = 0; n < batch; ++n) {
        for (c = 0; c < channels; ++c) {
            const size_t at = (size_t)n * (size_t)channels + (size_t)c;
            const float *xp = x + at * plane;
            if (!direct) {
                dw3_place(xp, height, width, pad_top, pad_left, rows, cols, scratch);
                xp = scratch;
            }
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
