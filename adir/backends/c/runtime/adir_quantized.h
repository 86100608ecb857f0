/* adir_quantized.h: the kernels of the quantized family (see adir_kernels.h).
 *
 * int8 inference with TFLite's arithmetic (adir/interpreter/quantized.py is the same in numpy,
 * bit for bit). A real value r is held as q with r = scale * (q - zero_point). Images are NHWC:
 * x [batch, height, width, channels]; conv weights OHWI [out_channels, kernel_height,
 * kernel_width, channels], depthwise weights [1, kernel_height, kernel_width, out_channels]
 * (output channel o reads input channel o / (out_channels / channels)). A window's tap (i, j) at
 * output pixel (p, q) reads input pixel (p * stride_height + i * dilation_height - pad_top,
 * q * stride_width + j * dilation_width - pad_left); taps outside the image are skipped (they
 * hold the input's zero point, which adds nothing once subtracted). The accumulators are
 * int32_t: the quantizer's layers stay far below 2^31 (at most K * 255 * 127 plus the bias).
 * `multiplier` and `shift` hold one entry per output channel when per_channel is 1, else one.
 */
#ifndef ADIR_QUANTIZED_H
#define ADIR_QUANTIZED_H

#include <stddef.h>
#include <stdint.h>

/* x * multiplier * 2^(shift - 31), rounded as TFLite's MultiplyByQuantizedMultiplier (and
 * CMSIS-NN's arm_nn_requantize): the doubling high multiply (halves rounded up), then a
 * division by 2^-shift (halves away from zero). x * 2^shift (shift > 0) wraps in 32 bits. */
int32_t adir_requantize(int32_t x, int32_t multiplier, int32_t shift);

/* y = clamp(round(x / scale) + zero_point, -128, 127), halves away from zero; nan -> the zero
 * point. */
void adir_quantize(const float *x, int8_t *y, size_t size, float scale, int32_t zero_point);
#ifndef ADIR_QUANTIZE
#define ADIR_QUANTIZE adir_quantize
#endif

/* y = (x - zero_point) * scale. */
void adir_dequantize(const int8_t *x, float *y, size_t size, float scale, int32_t zero_point);
#ifndef ADIR_DEQUANTIZE
#define ADIR_DEQUANTIZE adir_dequantize
#endif

/* y [batch, out_features] = requantize((x - input_zero_point) . w[o] + bias[o]) +
 * output_zero_point, clamped to [act_min, act_max]; x [batch, in_features], w [out_features,
 * in_features]. */
void adir_qfully_connected(const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                           int32_t batch, int32_t in_features, int32_t out_features,
                           int32_t input_zero_point, int32_t output_zero_point,
                           const int32_t *multiplier, const int32_t *shift, int32_t per_channel,
                           int32_t act_min, int32_t act_max);
#ifndef ADIR_QFULLY_CONNECTED
#define ADIR_QFULLY_CONNECTED adir_qfully_connected
#endif

/* NHWC convolution, requantized like adir_qfully_connected; depthwise when `depthwise` is 1. */
void adir_qconv2d(const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                  int32_t batch, int32_t height, int32_t width, int32_t channels,
                  int32_t out_height, int32_t out_width, int32_t out_channels,
                  int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                  int32_t stride_width, int32_t pad_top, int32_t pad_left,
                  int32_t dilation_height, int32_t dilation_width, int32_t depthwise,
                  int32_t input_zero_point, int32_t output_zero_point,
                  const int32_t *multiplier, const int32_t *shift, int32_t per_channel,
                  int32_t act_min, int32_t act_max);
#ifndef ADIR_QCONV2D
#define ADIR_QCONV2D adir_qconv2d
#endif

/* A depthwise convolution of channel multiplier 1 whose output has its input's shape, written
 * over its input xy [N, H, W, C]: each input channel is copied into `plane` (H * W bytes)
 * before that channel of the output is written (TinyEngine's in-place depthwise convolution).
 * The same bits as adir_qconv2d into a separate output. */
void adir_qdepthwise_in_place(int8_t *xy, const int8_t *w, const int32_t *bias, int8_t *plane,
                              int32_t batch, int32_t height, int32_t width, int32_t channels,
                              int32_t kernel_height, int32_t kernel_width, int32_t pad_top,
                              int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
                              int32_t input_zero_point, int32_t output_zero_point,
                              const int32_t *multiplier, const int32_t *shift,
                              int32_t per_channel, int32_t act_min, int32_t act_max);
#ifndef ADIR_QDEPTHWISE_IN_PLACE
#define ADIR_QDEPTHWISE_IN_PLACE adir_qdepthwise_in_place
#endif

/* A 1x1 expansion (x [N, H, W, C] by expand_weight [E, C]) and the depthwise convolution of
 * its result (depthwise_weight [KH, KW, E], channel multiplier 1) into y [N, Ho, Wo, E], one
 * expanded channel at a time through `plane` (H * W bytes): the same bits as the two
 * adir_qconv2d calls, without the [N, H, W, E] tensor between them. */
void adir_qexpand_depthwise(const int8_t *x, const int8_t *expand_weight,
                            const int32_t *expand_bias, const int8_t *depthwise_weight,
                            const int32_t *depthwise_bias, int8_t *y, int8_t *plane,
                            int32_t batch, int32_t height, int32_t width, int32_t channels,
                            int32_t out_height, int32_t out_width, int32_t expanded,
                            int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                            int32_t stride_width, int32_t pad_top, int32_t pad_left,
                            int32_t dilation_height, int32_t dilation_width,
                            int32_t input_zero_point, int32_t expand_zero_point,
                            int32_t output_zero_point, const int32_t *expand_multiplier,
                            const int32_t *expand_shift, int32_t expand_per_channel,
                            int32_t expand_act_min, int32_t expand_act_max,
                            const int32_t *multiplier, const int32_t *shift,
                            int32_t per_channel, int32_t act_min, int32_t act_max);
#ifndef ADIR_QEXPAND_DEPTHWISE
#define ADIR_QEXPAND_DEPTHWISE adir_qexpand_depthwise
#endif

/* adir_quantize of an NCHW float image x [N, C, H, W] (input_scale, input_zero_point), its
 * change to NHWC and adir_qconv2d of it (groups 1, weight [O, KH, KW, C]) into y
 * [N, Ho, Wo, O], each window quantized as it is read into `window` (KH * KW * C bytes): the
 * same bits as the three calls, without the int8 image. */
void adir_quantize_qconv2d(const float *x, const int8_t *w, const int32_t *bias, int8_t *y,
                           int8_t *window, int32_t batch, int32_t channels, int32_t height,
                           int32_t width, int32_t out_height, int32_t out_width,
                           int32_t out_channels, int32_t kernel_height, int32_t kernel_width,
                           int32_t stride_height, int32_t stride_width, int32_t pad_top,
                           int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
                           float input_scale, int32_t input_zero_point,
                           int32_t output_zero_point, const int32_t *multiplier,
                           const int32_t *shift, int32_t per_channel, int32_t act_min,
                           int32_t act_max);
#ifndef ADIR_QUANTIZE_QCONV2D
#define ADIR_QUANTIZE_QCONV2D adir_quantize_qconv2d
#endif

/* NHWC max pooling over each window's in-bounds taps, clamped to [act_min, act_max]. */
void adir_qmaxpool2d(const int8_t *x, int8_t *y, int32_t batch, int32_t height, int32_t width,
                     int32_t channels, int32_t out_height, int32_t out_width,
                     int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                     int32_t stride_width, int32_t pad_top, int32_t pad_left, int32_t act_min,
                     int32_t act_max);
#ifndef ADIR_QMAXPOOL2D
#define ADIR_QMAXPOOL2D adir_qmaxpool2d
#endif

/* NHWC average pooling: the int32 sum of each window's in-bounds taps divided by their count,
 * (sum +- count / 2) / count (halves away from zero), clamped to [act_min, act_max]. */
void adir_qavgpool2d(const int8_t *x, int8_t *y, int32_t batch, int32_t height, int32_t width,
                     int32_t channels, int32_t out_height, int32_t out_width,
                     int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                     int32_t stride_width, int32_t pad_top, int32_t pad_left, int32_t act_min,
                     int32_t act_max);
#ifndef ADIR_QAVGPOOL2D
#define ADIR_QAVGPOOL2D adir_qavgpool2d
#endif

/* TFLite's int8 ADD of two tensors of `size` entries: each (x - zero point) * 2^left_shift
 * brought to the common scale by its multiplier and shift (<= 0), the sum to the output's,
 * plus the output zero point, clamped to [act_min, act_max]. */
void adir_qadd(const int8_t *a, const int8_t *b, int8_t *y, size_t size, int32_t a_zero_point,
               int32_t b_zero_point, int32_t output_zero_point, int32_t a_multiplier,
               int32_t a_shift, int32_t b_multiplier, int32_t b_shift, int32_t multiplier,
               int32_t shift, int32_t left_shift, int32_t act_min, int32_t act_max);
#ifndef ADIR_QADD
#define ADIR_QADD adir_qadd
#endif

/* y[k] = table[x[k] + 128]. */
void adir_qlookup(const int8_t *x, const int8_t *table, int8_t *y, size_t size);
#ifndef ADIR_QLOOKUP
#define ADIR_QLOOKUP adir_qlookup
#endif

/* The same bytes in another shape (a copy: y does not overlap x). */
void adir_qreshape(const int8_t *x, int8_t *y, size_t size);
#ifndef ADIR_QRESHAPE
#define ADIR_QRESHAPE adir_qreshape
#endif

/* y = x with its dims permuted: dim d of y is dim permutation[d] of x (shape: x's dims). */
void adir_qtranspose(const int8_t *x, int8_t *y, int32_t rank, const int32_t *shape,
                     const int32_t *permutation);
#ifndef ADIR_QTRANSPOSE
#define ADIR_QTRANSPOSE adir_qtranspose
#endif

/* Softmax along rows of row_size entries, TFLite's int8 SOFTMAX bit for bit (CMSIS-NN's
 * arm_softmax_s8 with the same arguments, on rows of up to 511 entries): an entry whose difference d to its row's maximum is
 * at least diff_min has exp(d * input_scale * beta) computed in fixed point from
 * d * 2^shift * multiplier (Q5.26), the exps are summed in Q12.19, and each becomes
 * exp / sum at scale 1/256, zero point -128; the others give -128. row_size <= 4095. */
#define ADIR_SOFTMAX_ACCUM_BITS 12
void adir_qsoftmax(const int8_t *x, int8_t *y, int32_t rows, int32_t row_size,
                   int32_t multiplier, int32_t shift, int32_t diff_min);
#ifndef ADIR_QSOFTMAX
#define ADIR_QSOFTMAX adir_qsoftmax
#endif

/* Level 2 of quantized training (docs/quantized_training.md), channels on the last axis of y:
 * out = grad * float(multiplier[c] * 2^(shift[c] - 31)) where act_min < y < act_max, else 0
 * (the gradient of a requantizing kernel's accumulator from that of its int8 output y). */
void adir_qrequantize_grad(const int8_t *y, const float *grad, float *out, size_t size,
                           int32_t channels, const int32_t *multiplier, const int32_t *shift,
                           int32_t per_channel, int32_t act_min, int32_t act_max);
#ifndef ADIR_QREQUANTIZE_GRAD
#define ADIR_QREQUANTIZE_GRAD adir_qrequantize_grad
#endif

/* The adjoint of an int8 conv's input from its accumulator's, NHWC, reading the int8 weight
 * as its integers (level 2 of quantized training): out [batch, height, width, channels] =
 * the transposed convolution of grad [batch, out_h, out_w, out_channels] with the weight
 * [out_channels, kh, kw, channels] (depthwise: [1, kh, kw, out_channels], out channel o reading
 * input channel o / (out_channels / channels)). A fully-connected layer's is the 1x1 case. */
void adir_qgrad_input(const float *grad, const int8_t *weight, float *out, int32_t batch,
                      int32_t height, int32_t width, int32_t channels, int32_t out_h,
                      int32_t out_w, int32_t out_channels, int32_t kernel_h, int32_t kernel_w,
                      int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_left,
                      int32_t dilation_h, int32_t dilation_w, int32_t depthwise);
#ifndef ADIR_QGRAD_INPUT
#define ADIR_QGRAD_INPUT adir_qgrad_input
#endif

/* SGD on integers: out = clamp(w - round((lr * g) * step_scale[c]), lo, hi), the float step
 * rounded half away from zero within int32; lo, hi = -127, 127 (s8) or the int32 range (s32).
 * Element k is in slice c = (k / inner) % channels; step_scale_bits holds the float32 bits of
 * each slice's step scale (one entry when per_channel is 0). out may be w. */
void adir_qsgd_update_s8(const int8_t *w, const float *g, const float *lr, int8_t *out,
                         size_t size, int32_t inner, int32_t channels,
                         const int32_t *step_scale_bits, int32_t per_channel);
#ifndef ADIR_QSGD_UPDATE_S8
#define ADIR_QSGD_UPDATE_S8 adir_qsgd_update_s8
#endif
void adir_qsgd_update_s32(const int32_t *w, const float *g, const float *lr, int32_t *out,
                          size_t size, int32_t inner, int32_t channels,
                          const int32_t *step_scale_bits, int32_t per_channel);
#ifndef ADIR_QSGD_UPDATE_S32
#define ADIR_QSGD_UPDATE_S32 adir_qsgd_update_s32
#endif

#endif /* ADIR_QUANTIZED_H */
