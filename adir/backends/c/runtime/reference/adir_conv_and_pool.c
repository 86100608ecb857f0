/* adir_conv_and_pool.c: the reference kernels of the conv_and_pool family (declared in
 * adir_conv_and_pool.h): each kernel's semantics in its plainest loops, the C twin of
 * adir/interpreter/conv_and_pool.py. The convolutions and max pools
 * have tuned versions (tuned/adir_tuned_conv.c, adir_tuned_pool.c) for the shapes they tile;
 * select-kernels calls the kernels here for the others.
 *
 * Direct loops over the output pixels. For each window, adir_taps_inside finds the kernel rows
 * and columns that land inside the image, so the inner loops read no padding and test no
 * bounds; padding contributes nothing (zeros) or never wins (-inf for maxpool). A window's sum
 * runs over the group's channels and the taps in order (c, i, j), the bias added last. The
 * adjoints scatter: they clear their output and then add each window's share, in the forward
 * op's loop order, so the adjoints of the pools add in PyTorch's order (row-major windows).
 * Each product is its own statement: contracted into a fused multiply-add nowhere.
 */
#include <math.h>
#include <string.h>

#include "adir_kernels.h"
#include "adir_row_sum.h"

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

void adir_conv2d(const float *x, const float *w, const float *bias, float *y, int32_t batch,
                 int32_t channels, int32_t height, int32_t width, int32_t out_channels,
                 int32_t out_height, int32_t out_width, int32_t kernel_height, int32_t kernel_width,
                 int32_t stride_height, int32_t stride_width, int32_t pad_top, int32_t pad_left,
                 int32_t dilation_height, int32_t dilation_width, int32_t groups)
{
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
                                const float product = x_row[left + j * dilation_width] * w_row[j];
                                acc += product;
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
                            int32_t channels, int32_t height, int32_t width, int32_t out_channels,
                            int32_t out_height, int32_t out_width, int32_t kernel_height,
                            int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                            int32_t pad_top, int32_t pad_left, int32_t dilation_height,
                            int32_t dilation_width, int32_t groups)
{
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
                                const float product = g * w_row[j];
                                dx_row[left + j * dilation_width] += product;
                            }
                        }
                    }
                }
            }
        }
    }
}

void adir_conv2d_grad_weight(const float *x, const float *dy, float *dw, int32_t batch,
                             int32_t channels, int32_t height, int32_t width, int32_t out_channels,
                             int32_t out_height, int32_t out_width, int32_t kernel_height,
                             int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                             int32_t pad_top, int32_t pad_left, int32_t dilation_height,
                             int32_t dilation_width, int32_t groups)
{
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
                                const float product = g * x_row[left + j * dilation_width];
                                dw_row[j] += product;
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
/* conv1d and its adjoints: [N, C, L] is [N, C, 1, L] byte for byte, so each is its conv2d
 * namesake (through its macro: the tuned kernel, or the user's) on an image of height 1. */
void adir_conv1d(const float *x, const float *w, const float *bias, float *y, int32_t batch,
                 int32_t channels, int32_t length, int32_t out_channels, int32_t out_length,
                 int32_t kernel, int32_t stride, int32_t pad_left, int32_t dilation,
                 int32_t groups)
{
    ADIR_CONV2D(x, w, bias, y, batch, channels, 1, length, out_channels, 1, out_length, 1, kernel,
                1, stride, 0, pad_left, 1, dilation, groups);
}

void adir_conv1d_grad_input(const float *dy, const float *w, float *dx, int32_t batch,
                            int32_t channels, int32_t length, int32_t out_channels,
                            int32_t out_length, int32_t kernel, int32_t stride, int32_t pad_left,
                            int32_t dilation, int32_t groups)
{
    ADIR_CONV2D_GRAD_INPUT(dy, w, dx, batch, channels, 1, length, out_channels, 1, out_length, 1,
                           kernel, 1, stride, 0, pad_left, 1, dilation, groups);
}

void adir_conv1d_grad_weight(const float *x, const float *dy, float *dw, int32_t batch,
                             int32_t channels, int32_t length, int32_t out_channels,
                             int32_t out_length, int32_t kernel, int32_t stride, int32_t pad_left,
                             int32_t dilation, int32_t groups)
{
    ADIR_CONV2D_GRAD_WEIGHT(x, dy, dw, batch, channels, 1, length, out_channels, 1, out_length, 1,
                            kernel, 1, stride, 0, pad_left, 1, dilation, groups);
}

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

void adir_maxpool2d(const float *x, float *y, int32_t batch, int32_t channels, int32_t height,
                    int32_t width, int32_t out_height, int32_t out_width, int32_t kernel_height,
                    int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                    int32_t pad_top, int32_t pad_left)
{
    const int32_t planes = batch * channels;
    const size_t plane = (size_t)height * (size_t)width;
    const size_t out_plane = (size_t)out_height * (size_t)out_width;
    int32_t k, p, q;
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
    for (k = 0; k < planes; ++k) {
        y[k] = adir_row_sum(x + (size_t)k * plane, plane) / (float)plane;
    }
}
