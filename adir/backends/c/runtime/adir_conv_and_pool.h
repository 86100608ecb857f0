/* adir_conv_and_pool.h: the kernels of the conv_and_pool family (see adir_kernels.h).
 *
 * Images are NCHW: x [batch, channels, height, width]; conv weights [out_channels,
 * channels / groups, kernel_height, kernel_width]. A window's kernel tap (i, j) at output
 * pixel (p, q) reads input pixel (p * stride_height + i * dilation_height - pad_top,
 * q * stride_width + j * dilation_width - pad_left); taps outside the image read the padding
 * (0 for conv and avgpool, -inf for maxpool). The padding at the bottom and right is implied
 * by the output size, so the kernels take only pad_top and pad_left. Outputs overlap no input.
 */
#ifndef ADIR_CONV_AND_POOL_H
#define ADIR_CONV_AND_POOL_H

#include <stddef.h>
#include <stdint.h>

/* y = conv2d(x, w) + bias: x [batch, channels, height, width], w [out_channels, channels /
 * groups, kernel_height, kernel_width], bias [out_channels] or NULL, y [batch, out_channels,
 * out_height, out_width]. Output channel o sees the input channels of its group,
 * o / (out_channels / groups). */
void adir_conv2d(const float *x, const float *w, const float *bias, float *y, int32_t batch,
                 int32_t channels, int32_t height, int32_t width, int32_t out_channels,
                 int32_t out_height, int32_t out_width, int32_t kernel_height, int32_t kernel_width,
                 int32_t stride_height, int32_t stride_width, int32_t pad_top, int32_t pad_left,
                 int32_t dilation_height, int32_t dilation_width, int32_t groups);
#ifndef ADIR_CONV2D
#define ADIR_CONV2D adir_conv2d
#endif
/* The same, tuned (tuned/, sized by the target's settings header), for stride 1, dilation 1 and no
 * padding (out_height = height - kernel_height + 1, out_width likewise) only: select-kernels
 * chooses it where that holds. */
void adir_tuned_conv2d(const float *x, const float *w, const float *bias, float *y, int32_t batch,
                       int32_t channels, int32_t height, int32_t width, int32_t out_channels,
                       int32_t out_height, int32_t out_width, int32_t kernel_height,
                       int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                       int32_t pad_top, int32_t pad_left, int32_t dilation_height,
                       int32_t dilation_width, int32_t groups);
#ifndef ADIR_TUNED_CONV2D
#define ADIR_TUNED_CONV2D adir_tuned_conv2d
#endif

/* dx = the adjoint of conv2d's input (the transposed convolution): each dy[n, o, p, q] times
 * w[o] added to the input pixels its window read; taps in the padding are dropped. Same
 * sizes as adir_conv2d (dy is [batch, out_channels, out_height, out_width], dx is x's
 * shape). */
void adir_conv2d_grad_input(const float *dy, const float *w, float *dx, int32_t batch,
                            int32_t channels, int32_t height, int32_t width, int32_t out_channels,
                            int32_t out_height, int32_t out_width, int32_t kernel_height,
                            int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                            int32_t pad_top, int32_t pad_left, int32_t dilation_height,
                            int32_t dilation_width, int32_t groups);
#ifndef ADIR_CONV2D_GRAD_INPUT
#define ADIR_CONV2D_GRAD_INPUT adir_conv2d_grad_input
#endif
/* The same, tuned (tuned/, sized by the target's settings header), for stride 1, dilation 1 and no
 * padding (out_height = height - kernel_height + 1, out_width likewise) only: select-kernels
 * chooses it where that holds. */
void adir_tuned_conv2d_grad_input(const float *dy, const float *w, float *dx, int32_t batch,
                                  int32_t channels, int32_t height, int32_t width,
                                  int32_t out_channels, int32_t out_height, int32_t out_width,
                                  int32_t kernel_height, int32_t kernel_width,
                                  int32_t stride_height, int32_t stride_width, int32_t pad_top,
                                  int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
                                  int32_t groups);
#ifndef ADIR_TUNED_CONV2D_GRAD_INPUT
#define ADIR_TUNED_CONV2D_GRAD_INPUT adir_tuned_conv2d_grad_input
#endif

/* dw = the adjoint of conv2d's weight: dw[o, c, i, j] = the sum over n, p, q of dy[n, o, p, q]
 * times the input pixel that tap (i, j) of window (p, q) read (0 in the padding). Same sizes
 * as adir_conv2d (dw is w's shape). */
void adir_conv2d_grad_weight(const float *x, const float *dy, float *dw, int32_t batch,
                             int32_t channels, int32_t height, int32_t width, int32_t out_channels,
                             int32_t out_height, int32_t out_width, int32_t kernel_height,
                             int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                             int32_t pad_top, int32_t pad_left, int32_t dilation_height,
                             int32_t dilation_width, int32_t groups);
#ifndef ADIR_CONV2D_GRAD_WEIGHT
#define ADIR_CONV2D_GRAD_WEIGHT adir_conv2d_grad_weight
#endif
/* The same, tuned (tuned/, sized by the target's settings header), for stride 1, dilation 1 and no
 * padding (out_height = height - kernel_height + 1, out_width likewise) only: select-kernels
 * chooses it where that holds. */
void adir_tuned_conv2d_grad_weight(const float *x, const float *dy, float *dw, int32_t batch,
                                   int32_t channels, int32_t height, int32_t width,
                                   int32_t out_channels, int32_t out_height, int32_t out_width,
                                   int32_t kernel_height, int32_t kernel_width,
                                   int32_t stride_height, int32_t stride_width, int32_t pad_top,
                                   int32_t pad_left, int32_t dilation_height,
                                   int32_t dilation_width, int32_t groups);
#ifndef ADIR_TUNED_CONV2D_GRAD_WEIGHT
#define ADIR_TUNED_CONV2D_GRAD_WEIGHT adir_tuned_conv2d_grad_weight
#endif

/* The same three, tuned for the shapes the direct tiles above do not take, with a scratch
 * buffer of scratch_floats floats that select-kernels planned in the arena:
 * - *_gemm: any stride, padding, dilation and groups, as GEMMs on the shared micro-kernel over
 *   panels of im2col (tuned/adir_tuned_conv_gemm.c); a pointwise convolution (1 x 1, stride 1,
 *   no padding) reads the image itself, and its forward pass and input gradient take no
 *   scratch (NULL, 0).
 * - *_depthwise: groups = channels = out_channels, dilation 1, on padded planes
 *   (tuned/adir_tuned_depthwise.c).
 * select-kernels sizes the scratch (adir/passes/select_kernels/tuned.py) and records which of
 * them an op calls. */
void adir_tuned_conv2d_gemm(const float *x, const float *w, const float *bias, float *y, int32_t batch, int32_t channels,
    int32_t height, int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats);
#ifndef ADIR_TUNED_CONV2D_GEMM
#define ADIR_TUNED_CONV2D_GEMM adir_tuned_conv2d_gemm
#endif
void adir_tuned_conv2d_grad_input_gemm(const float *dy, const float *w, float *dx, int32_t batch, int32_t channels,
    int32_t height, int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats);
#ifndef ADIR_TUNED_CONV2D_GRAD_INPUT_GEMM
#define ADIR_TUNED_CONV2D_GRAD_INPUT_GEMM adir_tuned_conv2d_grad_input_gemm
#endif
void adir_tuned_conv2d_grad_weight_gemm(const float *x, const float *dy, float *dw, int32_t batch, int32_t channels,
    int32_t height, int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats);
#ifndef ADIR_TUNED_CONV2D_GRAD_WEIGHT_GEMM
#define ADIR_TUNED_CONV2D_GRAD_WEIGHT_GEMM adir_tuned_conv2d_grad_weight_gemm
#endif
void adir_tuned_conv2d_depthwise(const float *x, const float *w, const float *bias, float *y, int32_t batch, int32_t channels,
    int32_t height, int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats);
#ifndef ADIR_TUNED_CONV2D_DEPTHWISE
#define ADIR_TUNED_CONV2D_DEPTHWISE adir_tuned_conv2d_depthwise
#endif
void adir_tuned_conv2d_grad_input_depthwise(const float *dy, const float *w, float *dx, int32_t batch, int32_t channels,
    int32_t height, int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats);
#ifndef ADIR_TUNED_CONV2D_GRAD_INPUT_DEPTHWISE
#define ADIR_TUNED_CONV2D_GRAD_INPUT_DEPTHWISE adir_tuned_conv2d_grad_input_depthwise
#endif
void adir_tuned_conv2d_grad_weight_depthwise(const float *x, const float *dy, float *dw, int32_t batch, int32_t channels,
    int32_t height, int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats);
#ifndef ADIR_TUNED_CONV2D_GRAD_WEIGHT_DEPTHWISE
#define ADIR_TUNED_CONV2D_GRAD_WEIGHT_DEPTHWISE adir_tuned_conv2d_grad_weight_depthwise
#endif
/* *_depthwise_3x3: the depthwise ones for a 3 x 3 kernel, stride 1 or 2, padding at most 2, with
 * their sums in registers (a scalar core's: tuned/adir_tuned_depthwise_3x3.c). */
void adir_tuned_conv2d_depthwise_3x3(const float *x, const float *w, const float *bias, float *y, int32_t batch, int32_t channels,
    int32_t height, int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats);
#ifndef ADIR_TUNED_CONV2D_DEPTHWISE_3X3
#define ADIR_TUNED_CONV2D_DEPTHWISE_3X3 adir_tuned_conv2d_depthwise_3x3
#endif
void adir_tuned_conv2d_grad_input_depthwise_3x3(const float *dy, const float *w, float *dx, int32_t batch, int32_t channels,
    int32_t height, int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats);
#ifndef ADIR_TUNED_CONV2D_GRAD_INPUT_DEPTHWISE_3X3
#define ADIR_TUNED_CONV2D_GRAD_INPUT_DEPTHWISE_3X3 adir_tuned_conv2d_grad_input_depthwise_3x3
#endif
void adir_tuned_conv2d_grad_weight_depthwise_3x3(const float *x, const float *dy, float *dw, int32_t batch, int32_t channels,
    int32_t height, int32_t width, int32_t out_channels, int32_t out_height, int32_t out_width,
    int32_t kernel_height, int32_t kernel_width, int32_t stride_height, int32_t stride_width,
    int32_t pad_top, int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
    int32_t groups, float *scratch, int32_t scratch_floats);
#ifndef ADIR_TUNED_CONV2D_GRAD_WEIGHT_DEPTHWISE_3X3
#define ADIR_TUNED_CONV2D_GRAD_WEIGHT_DEPTHWISE_3X3 adir_tuned_conv2d_grad_weight_depthwise_3x3
#endif

/* conv1d and its two adjoints: x [batch, channels, length], w [out_channels, channels /
 * groups, kernel], bias [out_channels] or NULL, y [batch, out_channels, out_length]; a tap k
 * of output position p reads input position p * stride + k * dilation - pad_left. Each is its
 * conv2d namesake (above, through its macro) on an image of height 1, the same bytes. */
void adir_conv1d(const float *x, const float *w, const float *bias, float *y, int32_t batch,
                 int32_t channels, int32_t length, int32_t out_channels, int32_t out_length,
                 int32_t kernel, int32_t stride, int32_t pad_left, int32_t dilation,
                 int32_t groups);
#ifndef ADIR_CONV1D
#define ADIR_CONV1D adir_conv1d
#endif
void adir_conv1d_grad_input(const float *dy, const float *w, float *dx, int32_t batch,
                            int32_t channels, int32_t length, int32_t out_channels,
                            int32_t out_length, int32_t kernel, int32_t stride, int32_t pad_left,
                            int32_t dilation, int32_t groups);
#ifndef ADIR_CONV1D_GRAD_INPUT
#define ADIR_CONV1D_GRAD_INPUT adir_conv1d_grad_input
#endif
void adir_conv1d_grad_weight(const float *x, const float *dy, float *dw, int32_t batch,
                             int32_t channels, int32_t length, int32_t out_channels,
                             int32_t out_length, int32_t kernel, int32_t stride, int32_t pad_left,
                             int32_t dilation, int32_t groups);
#ifndef ADIR_CONV1D_GRAD_WEIGHT
#define ADIR_CONV1D_GRAD_WEIGHT adir_conv1d_grad_weight
#endif
/* The same, tuned: the tuned conv2d kernels on an image of height 1, for stride 1, dilation 1
 * and no padding only (select-kernels chooses them where that holds). */
void adir_tuned_conv1d(const float *x, const float *w, const float *bias, float *y,
                       int32_t batch, int32_t channels, int32_t length, int32_t out_channels,
                       int32_t out_length, int32_t kernel, int32_t stride, int32_t pad_left,
                       int32_t dilation, int32_t groups);
#ifndef ADIR_TUNED_CONV1D
#define ADIR_TUNED_CONV1D adir_tuned_conv1d
#endif
void adir_tuned_conv1d_grad_input(const float *dy, const float *w, float *dx, int32_t batch,
                                  int32_t channels, int32_t length, int32_t out_channels,
                                  int32_t out_length, int32_t kernel, int32_t stride,
                                  int32_t pad_left, int32_t dilation, int32_t groups);
#ifndef ADIR_TUNED_CONV1D_GRAD_INPUT
#define ADIR_TUNED_CONV1D_GRAD_INPUT adir_tuned_conv1d_grad_input
#endif
void adir_tuned_conv1d_grad_weight(const float *x, const float *dy, float *dw, int32_t batch,
                                   int32_t channels, int32_t length, int32_t out_channels,
                                   int32_t out_length, int32_t kernel, int32_t stride,
                                   int32_t pad_left, int32_t dilation, int32_t groups);
#ifndef ADIR_TUNED_CONV1D_GRAD_WEIGHT
#define ADIR_TUNED_CONV1D_GRAD_WEIGHT adir_tuned_conv1d_grad_weight
#endif

/* y = the maximum of each window of x (a nan in the window gives nan): x [batch, channels,
 * height, width], y [batch, channels, out_height, out_width]. Every window holds at least one
 * pixel of the image (padding at most half the kernel). */
void adir_maxpool2d(const float *x, float *y, int32_t batch, int32_t channels, int32_t height,
                    int32_t width, int32_t out_height, int32_t out_width, int32_t kernel_height,
                    int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                    int32_t pad_top, int32_t pad_left);
#ifndef ADIR_MAXPOOL2D
#define ADIR_MAXPOOL2D adir_maxpool2d
#endif
/* The same, tuned (tuned/, sized by the target's settings header), for windows that tile the image:
 * kernel == stride, no padding, out_height kernel_height <= height, out_width likewise only: *
 * select-kernels chooses it where that holds. */
void adir_tuned_maxpool2d(const float *x, float *y, int32_t batch, int32_t channels, int32_t height,
                          int32_t width, int32_t out_height, int32_t out_width,
                          int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                          int32_t stride_width, int32_t pad_top, int32_t pad_left);
#ifndef ADIR_TUNED_MAXPOOL2D
#define ADIR_TUNED_MAXPOOL2D adir_tuned_maxpool2d
#endif

/* dx = the adjoint of maxpool2d's input: each window's dy goes to the pixel PyTorch's forward
 * picks, found again in x: the first maximum in row-major order, or the last nan; windows are
 * added in row-major order. x and dx [batch, channels, height, width], dy [batch, channels,
 * out_height, out_width]. */
void adir_maxpool2d_grad(const float *x, const float *dy, float *dx, int32_t batch,
                         int32_t channels, int32_t height, int32_t width, int32_t out_height,
                         int32_t out_width, int32_t kernel_height, int32_t kernel_width,
                         int32_t stride_height, int32_t stride_width, int32_t pad_top,
                         int32_t pad_left);
#ifndef ADIR_MAXPOOL2D_GRAD
#define ADIR_MAXPOOL2D_GRAD adir_maxpool2d_grad
#endif
/* The same, tuned (tuned/, sized by the target's settings header), for windows that tile the image:
 * kernel == stride, no padding, out_height kernel_height <= height, out_width likewise only: *
 * select-kernels chooses it where that holds. */
void adir_tuned_maxpool2d_grad(const float *x, const float *dy, float *dx, int32_t batch,
                               int32_t channels, int32_t height, int32_t width, int32_t out_height,
                               int32_t out_width, int32_t kernel_height, int32_t kernel_width,
                               int32_t stride_height, int32_t stride_width, int32_t pad_top,
                               int32_t pad_left);
#ifndef ADIR_TUNED_MAXPOOL2D_GRAD
#define ADIR_TUNED_MAXPOOL2D_GRAD adir_tuned_maxpool2d_grad
#endif

/* y = the sum of each window of the zero-padded x over its divisor: the kernel's size with
 * count_include_pad, else the number of the window's pixels inside the image. Sizes as
 * adir_maxpool2d. */
void adir_avgpool2d(const float *x, float *y, int32_t batch, int32_t channels, int32_t height,
                    int32_t width, int32_t out_height, int32_t out_width, int32_t kernel_height,
                    int32_t kernel_width, int32_t stride_height, int32_t stride_width,
                    int32_t pad_top, int32_t pad_left, int count_include_pad);
#ifndef ADIR_AVGPOOL2D
#define ADIR_AVGPOOL2D adir_avgpool2d
#endif

/* dx = the adjoint of avgpool2d's input: each window adds dy / divisor (avgpool2d's divisor)
 * to its pixels inside the image, windows in row-major order. dy [batch, channels,
 * out_height, out_width], dx [batch, channels, height, width]. */
void adir_avgpool2d_grad(const float *dy, float *dx, int32_t batch, int32_t channels,
                         int32_t height, int32_t width, int32_t out_height, int32_t out_width,
                         int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                         int32_t stride_width, int32_t pad_top, int32_t pad_left,
                         int count_include_pad);
#ifndef ADIR_AVGPOOL2D_GRAD
#define ADIR_AVGPOOL2D_GRAD adir_avgpool2d_grad
#endif

/* y[n, c] = the mean of the plane x[n, c], its sum in adir_row_sum's order (eight interleaved
 * partial sums, reference/adir_row_sum.h) over its size: x [batch, channels, height, width],
 * y [batch, channels] (stored as [batch, channels, 1, 1]). */
void adir_global_avgpool2d(const float *x, float *y, int32_t batch, int32_t channels,
                           int32_t height, int32_t width);
#ifndef ADIR_GLOBAL_AVGPOOL2D
#define ADIR_GLOBAL_AVGPOOL2D adir_global_avgpool2d
#endif

#endif /* ADIR_CONV_AND_POOL_H */
