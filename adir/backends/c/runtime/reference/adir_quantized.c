/* adir_quantized.c: the reference kernels of the quantized family (adir_quantized.h). */
#include "adir_quantized.h"

#include <math.h>
#include <string.h>

#include "adir_kernels.h"

/* gemmlowp's SaturatingRoundingDoublingHighMul without the saturation, which only the pair
 * (INT32_MIN, INT32_MIN) needs and a multiplier (>= 0) never gives: the high 32 bits of 2ab,
 * with the nudge rounding halves up. The division truncates toward zero, as C99 defines. */
static int32_t adir_doubling_high_mul(int32_t a, int32_t b)
{
    const int64_t ab = (int64_t)a * (int64_t)b;
    const int64_t nudge = ab >= 0 ? (INT64_C(1) << 30) : (INT64_C(1) - (INT64_C(1) << 30));
    return (int32_t)((ab + nudge) / (INT64_C(1) << 31));
}

/* gemmlowp's RoundingDivideByPOT: x / 2^exponent, halves away from zero. `>>` of a negative
 * int is an arithmetic shift on every compiler adir targets (as CMSIS-NN assumes too). */
static int32_t adir_divide_by_pot(int32_t x, int32_t exponent)
{
    const int32_t mask = (int32_t)((UINT32_C(1) << exponent) - 1u);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t adir_requantize(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    /* Through uint32_t, so that a shift that overflows wraps instead of being undefined. */
    const int32_t shifted = (int32_t)((uint32_t)x << left);
    return adir_divide_by_pot(adir_doubling_high_mul(shifted, multiplier), right);
}

static int8_t adir_clamp_int8(int32_t value, int32_t low, int32_t high)
{
    return (int8_t)(value < low ? low : (value > high ? high : value));
}

/* One element of adir_quantize: shared with adir_quantize_qconv2d, which must give its bits. */
static int8_t adir_quantize_one(float x, float scale, int32_t zero_point)
{
    float rounded = roundf(x / scale);
    if (rounded != rounded) {
        rounded = 0.0f;  /* nan */
    }
    /* Anything beyond +-255 saturates whatever the zero point; clipping first keeps the
     * conversion to int defined. */
    rounded = rounded > 255.0f ? 255.0f : (rounded < -255.0f ? -255.0f : rounded);
    return adir_clamp_int8((int32_t)rounded + zero_point, -128, 127);
}

void adir_quantize(const float *x, int8_t *y, size_t size, float scale, int32_t zero_point)
{
    size_t k;
    for (k = 0; k < size; ++k) {
        y[k] = adir_quantize_one(x[k], scale, zero_point);
    }
}

void adir_dequantize(const int8_t *x, float *y, size_t size, float scale, int32_t zero_point)
{
    size_t k;
    for (k = 0; k < size; ++k) {
        y[k] = (float)((int32_t)x[k] - zero_point) * scale;
    }
}

static int8_t adir_requantize_int8(int32_t acc, int32_t o, const int32_t *multiplier,
                                   const int32_t *shift, int32_t per_channel,
                                   int32_t output_zero_point, int32_t act_min, int32_t act_max)
{
    const int32_t index = per_channel ? o : 0;
    const int32_t scaled = adir_requantize(acc, multiplier[index], shift[index]);
    return adir_clamp_int8(scaled + output_zero_point, act_min, act_max);
}

void adir_qfully_connected(const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                           int32_t batch, int32_t in_features, int32_t out_features,
                           int32_t input_zero_point, int32_t output_zero_point,
                           const int32_t *multiplier, const int32_t *shift, int32_t per_channel,
                           int32_t act_min, int32_t act_max)
{
    int32_t n, o, k;
    for (n = 0; n < batch; ++n) {
        const int8_t *x_n = x + (size_t)n * (size_t)in_features;
        for (o = 0; o < out_features; ++o) {
            const int8_t *w_o = w + (size_t)o * (size_t)in_features;
            int32_t acc = bias[o];
            for (k = 0; k < in_features; ++k) {
                acc += ((int32_t)x_n[k] - input_zero_point) * (int32_t)w_o[k];
            }
            y[(size_t)n * (size_t)out_features + (size_t)o] = adir_requantize_int8(
                acc, o, multiplier, shift, per_channel, output_zero_point, act_min, act_max);
        }
    }
}

void adir_qconv2d(const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y,
                  int32_t batch, int32_t height, int32_t width, int32_t channels,
                  int32_t out_height, int32_t out_width, int32_t out_channels,
                  int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                  int32_t stride_width, int32_t pad_top, int32_t pad_left,
                  int32_t dilation_height, int32_t dilation_width, int32_t depthwise,
                  int32_t input_zero_point, int32_t output_zero_point,
                  const int32_t *multiplier, const int32_t *shift, int32_t per_channel,
                  int32_t act_min, int32_t act_max)
{
    const int32_t channel_multiplier = depthwise ? out_channels / channels : 1;
    int32_t n, p, q, o, i, j, c;
    for (n = 0; n < batch; ++n) {
        for (p = 0; p < out_height; ++p) {
            for (q = 0; q < out_width; ++q) {
                int8_t *y_pixel =
                    y + (((size_t)n * (size_t)out_height + (size_t)p) * (size_t)out_width +
                         (size_t)q) * (size_t)out_channels;
                for (o = 0; o < out_channels; ++o) {
                    int32_t acc = bias[o];
                    for (i = 0; i < kernel_height; ++i) {
                        const int32_t row = p * stride_height + i * dilation_height - pad_top;
                        if (row < 0 || row >= height) {
                            continue;
                        }
                        for (j = 0; j < kernel_width; ++j) {
                            const int32_t col = q * stride_width + j * dilation_width - pad_left;
                            const int8_t *x_pixel;
                            if (col < 0 || col >= width) {
                                continue;
                            }
                            x_pixel = x + (((size_t)n * (size_t)height + (size_t)row) *
                                               (size_t)width + (size_t)col) * (size_t)channels;
                            if (depthwise) {
                                const int32_t tap = i * kernel_width + j;
                                acc += ((int32_t)x_pixel[o / channel_multiplier] -
                                        input_zero_point) *
                                       (int32_t)w[(size_t)tap * (size_t)out_channels + (size_t)o];
                            } else {
                                const int8_t *w_tap =
                                    w + (((size_t)o * (size_t)kernel_height + (size_t)i) *
                                             (size_t)kernel_width + (size_t)j) * (size_t)channels;
                                for (c = 0; c < channels; ++c) {
                                    acc += ((int32_t)x_pixel[c] - input_zero_point) *
                                           (int32_t)w_tap[c];
                                }
                            }
                        }
                    }
                    y_pixel[o] = adir_requantize_int8(acc, o, multiplier, shift, per_channel,
                                                      output_zero_point, act_min, act_max);
                }
            }
        }
    }
}

void adir_quantize_qconv2d(const float *x, const int8_t *w, const int32_t *bias, int8_t *y,
                           int8_t *window, int32_t batch, int32_t channels, int32_t height,
                           int32_t width, int32_t out_height, int32_t out_width,
                           int32_t out_channels, int32_t kernel_height, int32_t kernel_width,
                           int32_t stride_height, int32_t stride_width, int32_t pad_top,
                           int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
                           float input_scale, int32_t input_zero_point,
                           int32_t output_zero_point, const int32_t *multiplier,
                           const int32_t *shift, int32_t per_channel, int32_t act_min,
                           int32_t act_max)
{
    const size_t taps = (size_t)kernel_height * (size_t)kernel_width * (size_t)channels;
    const size_t plane = (size_t)height * (size_t)width;
    int32_t n, p, q, o, i, j, c;
    size_t k;
    for (n = 0; n < batch; ++n) {
        const float *x_n = x + (size_t)n * (size_t)channels * plane;
        for (p = 0; p < out_height; ++p) {
            for (q = 0; q < out_width; ++q) {
                int8_t *y_pixel =
                    y + (((size_t)n * (size_t)out_height + (size_t)p) * (size_t)out_width +
                         (size_t)q) * (size_t)out_channels;
                /* The window [KH, KW, C] (the weight's OHWI order), quantized once for all
                 * output channels; a tap in the padding holds the zero point, which adds 0. */
                for (i = 0; i < kernel_height; ++i) {
                    const int32_t row = p * stride_height + i * dilation_height - pad_top;
                    for (j = 0; j < kernel_width; ++j) {
                        const int32_t col = q * stride_width + j * dilation_width - pad_left;
                        int8_t *tap = window + ((size_t)i * (size_t)kernel_width + (size_t)j) *
                                                   (size_t)channels;
                        const int inside = row >= 0 && row < height && col >= 0 && col < width;
                        for (c = 0; c < channels; ++c) {
                            tap[c] = inside ? adir_quantize_one(
                                                  x_n[(size_t)c * plane +
                                                      (size_t)row * (size_t)width + (size_t)col],
                                                  input_scale, input_zero_point)
                                            : (int8_t)input_zero_point;
                        }
                    }
                }
                for (o = 0; o < out_channels; ++o) {
                    const int8_t *w_o = w + (size_t)o * taps;
                    int32_t acc = bias[o];
                    for (k = 0; k < taps; ++k) {
                        acc += ((int32_t)window[k] - input_zero_point) * (int32_t)w_o[k];
                    }
                    y_pixel[o] = adir_requantize_int8(acc, o, multiplier, shift, per_channel,
                                                      output_zero_point, act_min, act_max);
                }
            }
        }
    }
}

void adir_qdepthwise_in_place(int8_t *xy, const int8_t *w, const int32_t *bias, int8_t *plane,
                              int32_t batch, int32_t height, int32_t width, int32_t channels,
                              int32_t kernel_height, int32_t kernel_width, int32_t pad_top,
                              int32_t pad_left, int32_t dilation_height, int32_t dilation_width,
                              int32_t input_zero_point, int32_t output_zero_point,
                              const int32_t *multiplier, const int32_t *shift,
                              int32_t per_channel, int32_t act_min, int32_t act_max)
{
    const size_t pixels = (size_t)height * (size_t)width;
    int32_t n, c, p, q, i, j;
    size_t k;
    for (n = 0; n < batch; ++n) {
        int8_t *xy_n = xy + (size_t)n * pixels * (size_t)channels;
        for (c = 0; c < channels; ++c) {
            /* Output channel c reads input channel c alone: keep it, then overwrite it. */
            for (k = 0; k < pixels; ++k) {
                plane[k] = xy_n[k * (size_t)channels + (size_t)c];
            }
            for (p = 0; p < height; ++p) {
                for (q = 0; q < width; ++q) {
                    int32_t acc = bias[c];
                    for (i = 0; i < kernel_height; ++i) {
                        const int32_t row = p + i * dilation_height - pad_top;
                        if (row < 0 || row >= height) {
                            continue;
                        }
                        for (j = 0; j < kernel_width; ++j) {
                            const int32_t col = q + j * dilation_width - pad_left;
                            const int32_t tap = i * kernel_width + j;
                            if (col < 0 || col >= width) {
                                continue;
                            }
                            acc += ((int32_t)plane[(size_t)row * (size_t)width + (size_t)col] -
                                    input_zero_point) *
                                   (int32_t)w[(size_t)tap * (size_t)channels + (size_t)c];
                        }
                    }
                    xy_n[((size_t)p * (size_t)width + (size_t)q) * (size_t)channels +
                         (size_t)c] = adir_requantize_int8(acc, c, multiplier, shift,
                                                           per_channel, output_zero_point,
                                                           act_min, act_max);
                }
            }
        }
    }
}

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
                            int32_t per_channel, int32_t act_min, int32_t act_max)
{
    const size_t pixels = (size_t)height * (size_t)width;
    int32_t n, e, p, q, i, j, c;
    size_t k;
    for (n = 0; n < batch; ++n) {
        const int8_t *x_n = x + (size_t)n * pixels * (size_t)channels;
        int8_t *y_n = y + (size_t)n * (size_t)out_height * (size_t)out_width * (size_t)expanded;
        for (e = 0; e < expanded; ++e) {
            /* Expanded channel e, the whole plane: adir_qconv2d's 1x1 sum and rounding. */
            const int8_t *w_e = expand_weight + (size_t)e * (size_t)channels;
            for (k = 0; k < pixels; ++k) {
                const int8_t *x_pixel = x_n + k * (size_t)channels;
                int32_t acc = expand_bias[e];
                for (c = 0; c < channels; ++c) {
                    acc += ((int32_t)x_pixel[c] - input_zero_point) * (int32_t)w_e[c];
                }
                plane[k] = adir_requantize_int8(acc, e, expand_multiplier, expand_shift,
                                                expand_per_channel, expand_zero_point,
                                                expand_act_min, expand_act_max);
            }
            /* Its depthwise output channel: adir_qconv2d's depthwise taps, on the plane. */
            for (p = 0; p < out_height; ++p) {
                for (q = 0; q < out_width; ++q) {
                    int32_t acc = depthwise_bias[e];
                    for (i = 0; i < kernel_height; ++i) {
                        const int32_t row = p * stride_height + i * dilation_height - pad_top;
                        if (row < 0 || row >= height) {
                            continue;
                        }
                        for (j = 0; j < kernel_width; ++j) {
                            const int32_t col = q * stride_width + j * dilation_width - pad_left;
                            const int32_t tap = i * kernel_width + j;
                            if (col < 0 || col >= width) {
                                continue;
                            }
                            acc += ((int32_t)plane[(size_t)row * (size_t)width + (size_t)col] -
                                    expand_zero_point) *
                                   (int32_t)depthwise_weight[(size_t)tap * (size_t)expanded +
                                                             (size_t)e];
                        }
                    }
                    y_n[((size_t)p * (size_t)out_width + (size_t)q) * (size_t)expanded +
                        (size_t)e] = adir_requantize_int8(acc, e, multiplier, shift,
                                                          per_channel, output_zero_point,
                                                          act_min, act_max);
                }
            }
        }
    }
}

/* One pooling kernel for both: `average` 0 takes the maximum, 1 the rounded mean. */
static void adir_qpool2d(const int8_t *x, int8_t *y, int32_t batch, int32_t height,
                         int32_t width, int32_t channels, int32_t out_height, int32_t out_width,
                         int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                         int32_t stride_width, int32_t pad_top, int32_t pad_left,
                         int32_t act_min, int32_t act_max, int average)
{
    int32_t n, p, q, c, i, j;
    for (n = 0; n < batch; ++n) {
        for (p = 0; p < out_height; ++p) {
            for (q = 0; q < out_width; ++q) {
                for (c = 0; c < channels; ++c) {
                    int32_t result = -128;
                    int32_t sum = 0;
                    int32_t count = 0;
                    for (i = 0; i < kernel_height; ++i) {
                        const int32_t row = p * stride_height + i - pad_top;
                        if (row < 0 || row >= height) {
                            continue;
                        }
                        for (j = 0; j < kernel_width; ++j) {
                            const int32_t col = q * stride_width + j - pad_left;
                            int32_t value;
                            if (col < 0 || col >= width) {
                                continue;
                            }
                            value = x[(((size_t)n * (size_t)height + (size_t)row) *
                                           (size_t)width + (size_t)col) * (size_t)channels +
                                      (size_t)c];
                            result = value > result ? value : result;
                            sum += value;
                            ++count;
                        }
                    }
                    if (average) {
                        /* The pool's padding is below its kernel size, so count >= 1. */
                        result = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
                    }
                    y[(((size_t)n * (size_t)out_height + (size_t)p) * (size_t)out_width +
                       (size_t)q) * (size_t)channels + (size_t)c] =
                        adir_clamp_int8(result, act_min, act_max);
                }
            }
        }
    }
}

void adir_qmaxpool2d(const int8_t *x, int8_t *y, int32_t batch, int32_t height, int32_t width,
                     int32_t channels, int32_t out_height, int32_t out_width,
                     int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                     int32_t stride_width, int32_t pad_top, int32_t pad_left, int32_t act_min,
                     int32_t act_max)
{
    adir_qpool2d(x, y, batch, height, width, channels, out_height, out_width, kernel_height,
                 kernel_width, stride_height, stride_width, pad_top, pad_left, act_min, act_max,
                 0);
}

void adir_qavgpool2d(const int8_t *x, int8_t *y, int32_t batch, int32_t height, int32_t width,
                     int32_t channels, int32_t out_height, int32_t out_width,
                     int32_t kernel_height, int32_t kernel_width, int32_t stride_height,
                     int32_t stride_width, int32_t pad_top, int32_t pad_left, int32_t act_min,
                     int32_t act_max)
{
    adir_qpool2d(x, y, batch, height, width, channels, out_height, out_width, kernel_height,
                 kernel_width, stride_height, stride_width, pad_top, pad_left, act_min, act_max,
                 1);
}

void adir_qadd(const int8_t *a, const int8_t *b, int8_t *y, size_t size, int32_t a_zero_point,
               int32_t b_zero_point, int32_t output_zero_point, int32_t a_multiplier,
               int32_t a_shift, int32_t b_multiplier, int32_t b_shift, int32_t multiplier,
               int32_t shift, int32_t left_shift, int32_t act_min, int32_t act_max)
{
    const int32_t unit = INT32_C(1) << left_shift;
    size_t k;
    for (k = 0; k < size; ++k) {
        /* (x - zero point) is within [-255, 255]: times 2^left_shift (<= 22) fits in int32. */
        const int32_t a_shifted = ((int32_t)a[k] - a_zero_point) * unit;
        const int32_t b_shifted = ((int32_t)b[k] - b_zero_point) * unit;
        const int32_t sum = adir_requantize(a_shifted, a_multiplier, a_shift)
                            + adir_requantize(b_shifted, b_multiplier, b_shift);
        y[k] = adir_clamp_int8(adir_requantize(sum, multiplier, shift) + output_zero_point,
                               act_min, act_max);
    }
}

void adir_qlookup(const int8_t *x, const int8_t *table, int8_t *y, size_t size)
{
    size_t k;
    for (k = 0; k < size; ++k) {
        y[k] = table[(int32_t)x[k] + 128];
    }
}

void adir_qreshape(const int8_t *x, int8_t *y, size_t size)
{
    if (size > 0) {
        memcpy(y, x, size);
    }
}

void adir_qtranspose(const int8_t *x, int8_t *y, int32_t rank, const int32_t *shape,
                     const int32_t *permutation)
{
    size_t strides[ADIR_MAX_RANK] = {0};
    size_t out_shape[ADIR_MAX_RANK] = {0};
    size_t index[ADIR_MAX_RANK] = {0};
    size_t total = 1, step = 1, source = 0, inner, inner_stride, k, j;
    int32_t d;
    if (rank == 0) {
        y[0] = x[0];
        return;
    }
    for (d = rank - 1; d >= 0; --d) {
        strides[d] = step;
        step *= (size_t)shape[d];
    }
    for (d = 0; d < rank; ++d) {
        out_shape[d] = (size_t)shape[permutation[d]];
        index[d] = 0;
        total *= out_shape[d];
    }
    /* Run by run along the output's last axis, whose source moves by one stride per element:
     * the index arithmetic once per run (once per element it cost some 60 instructions an
     * element on a Cortex-M4F, level 2's backward transposing its int8 activations). */
    inner = out_shape[rank - 1];
    inner_stride = strides[permutation[rank - 1]];
    for (k = 0; k < total; k += inner) {
        for (j = 0; j < inner; ++j) {
            y[k + j] = x[source + j * inner_stride];
        }
        /* The next run's output index in row-major order, and where its source starts. */
        for (d = rank - 2; d >= 0; --d) {
            source += strides[permutation[d]];
            if (++index[d] < out_shape[d]) {
                break;
            }
            source -= index[d] * strides[permutation[d]];
            index[d] = 0;
        }
    }
}

/* -- softmax: arm_softmax_s8's arithmetic (adir/interpreter/quantized.py works it through). The
 * additions wrap through uint32_t, as the int32 sums of TFLite and CMSIS-NN would. */

static int32_t adir_add_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t adir_sub_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/* arm_nn_mult_by_power_of_two: x * 2^exponent, saturated. */
static int32_t adir_mul_by_pot(int32_t x, int32_t exponent)
{
    const int32_t threshold = (int32_t)((UINT32_C(1) << (31 - exponent)) - 1u);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << exponent);
}

/* exp of a Q5.26 value <= 0, in Q0.31 (gemmlowp's exp_on_negative_values). The high
 * multiplies never see (INT32_MIN, INT32_MIN), so adir_doubling_high_mul's missing saturation
 * is never needed here. */
static int32_t adir_exp_on_negative_values(int32_t val)
{
    /* exp(-2^k / 32) in Q0.31 for the remainder's bits 24..30. */
    static const int32_t barrels[7] = {1672461947, 1302514674, 790015084, 290630308,
                                       39332535,   720401,     242};
    const int32_t mod_minus_quarter = (val & ((INT32_C(1) << 24) - 1)) - (INT32_C(1) << 24);
    const int32_t remainder = mod_minus_quarter - val;
    const int32_t x = (int32_t)((uint32_t)mod_minus_quarter << 5) + (INT32_C(1) << 28);
    const int32_t x2 = adir_doubling_high_mul(x, x);
    const int32_t x3 = adir_doubling_high_mul(x2, x);
    const int32_t x4_over_4 = adir_divide_by_pot(adir_doubling_high_mul(x2, x2), 2);
    const int32_t poly = adir_divide_by_pot(
        adir_add_wrap(adir_doubling_high_mul(adir_add_wrap(x4_over_4, x3), 715827883), x2), 1);
    int32_t result = adir_add_wrap(1895147668,
                                   adir_doubling_high_mul(1895147668, adir_add_wrap(x, poly)));
    int32_t bit;
    if (val == 0) {
        return INT32_MAX;
    }
    for (bit = 0; bit < 7; ++bit) {
        if (remainder & (INT32_C(1) << (24 + bit))) {
            result = adir_doubling_high_mul(result, barrels[bit]);
        }
    }
    return result;
}

/* 1 / (1 + x) for x in [0, 1) in Q0.31 (gemmlowp's one_over_one_plus_x_for_x_in_0_1): three
 * Newton-Raphson steps in Q2.29, then times 2. */
static int32_t adir_one_over_one_plus_x(int32_t val)
{
    const int64_t total = (int64_t)val + INT32_MAX;
    const int32_t half = (int32_t)((total + 1) / 2);
    int32_t x = adir_add_wrap(1515870810, adir_doubling_high_mul(half, -1010580540));
    int32_t step;
    for (step = 0; step < 3; ++step) {
        const int32_t error = adir_sub_wrap(INT32_C(1) << 29, adir_doubling_high_mul(half, x));
        x = adir_add_wrap(x, adir_mul_by_pot(adir_doubling_high_mul(x, error), 2));
    }
    return adir_mul_by_pot(x, 1);
}

void adir_qsoftmax(const int8_t *x, int8_t *y, int32_t rows, int32_t row_size,
                   int32_t multiplier, int32_t shift, int32_t diff_min)
{
    const int32_t mask = INT32_C(1) << shift;
    int32_t r, k;
    if (row_size <= 0) {
        return;
    }
    for (r = 0; r < rows; ++r) {
        const int8_t *in = x + (size_t)r * (size_t)row_size;
        int8_t *out = y + (size_t)r * (size_t)row_size;
        int32_t max = in[0], sum = 0, headroom = 0, bits_over_unit, scale;
        for (k = 1; k < row_size; ++k) {
            max = in[k] > max ? in[k] : max;
        }
        for (k = 0; k < row_size; ++k) {
            const int32_t diff = in[k] - max;
            if (diff >= diff_min) {
                const int32_t e =
                    adir_exp_on_negative_values(adir_doubling_high_mul(diff * mask, multiplier));
                sum += adir_divide_by_pot(e, ADIR_SOFTMAX_ACCUM_BITS);
            }
        }
        /* The row's maximum adds 2^19, so sum > 0; its leading 1 becomes the 1 of 1 + x. */
        while (!(((uint32_t)sum << headroom) & UINT32_C(0x80000000))) {
            ++headroom;
        }
        scale = adir_one_over_one_plus_x(
            (int32_t)(((uint32_t)sum << headroom) - UINT32_C(0x80000000)));
        bits_over_unit = ADIR_SOFTMAX_ACCUM_BITS - headroom + 23;
        for (k = 0; k < row_size; ++k) {
            const int32_t diff = in[k] - max;
            int32_t value = 0;
            if (diff < diff_min) {
                out[k] = -128;
                continue;
            }
            /* A quotient by 2^32 or more of a product below 2^31 is 0 (a sum of 2^28 or more,
             * 512 tied entries); C's int32 shift stops at 31. */
            if (bits_over_unit < 32) {
                const int32_t e =
                    adir_exp_on_negative_values(adir_doubling_high_mul(diff * mask, multiplier));
                value = adir_divide_by_pot(adir_doubling_high_mul(scale, e), bits_over_unit);
            }
            out[k] = adir_clamp_int8(value - 128, -128, 127);
        }
    }
}

/* Level 2 of quantized training (docs/quantized_training.md). */

/* float32(multiplier * 2^(shift - 31)): exact in double (a 31-bit integer times a power of
 * two), then one rounding to float, as numpy's float64 -> float32. */
static float adir_real_multiplier(int32_t multiplier, int32_t shift)
{
    return (float)ldexp((double)multiplier, (int)shift - 31);
}

void adir_qrequantize_grad(const int8_t *y, const float *grad, float *out, size_t size,
                           int32_t channels, const int32_t *multiplier, const int32_t *shift,
                           int32_t per_channel, int32_t act_min, int32_t act_max)
{
    /* Channel by channel (the innermost axis), its multiplier computed once: ldexp in double
     * is a software routine on a single-precision FPU (a Cortex-M4F), over a hundred
     * instructions, which once per element cost more than the layer's weight gradient. */
    const size_t stride = per_channel ? (size_t)channels : 1;
    size_t c, k;
    for (c = 0; c < stride; ++c) {
        const float real = adir_real_multiplier(multiplier[c], shift[c]);
        for (k = c; k < size; k += stride) {
            const int32_t value = y[k];
            out[k] = (value > act_min && value < act_max) ? grad[k] * real : 0.0f;
        }
    }
}

void adir_qgrad_input(const float *grad, const int8_t *weight, float *out, int32_t batch,
                      int32_t height, int32_t width, int32_t channels, int32_t out_h,
                      int32_t out_w, int32_t out_channels, int32_t kernel_h, int32_t kernel_w,
                      int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_left,
                      int32_t dilation_h, int32_t dilation_w, int32_t depthwise)
{
    const int32_t multiplier = depthwise ? out_channels / channels : 1;
    size_t k;
    int32_t n, oh, ow, o, i, j, c;
    for (k = 0; k < (size_t)batch * (size_t)height * (size_t)width * (size_t)channels; ++k) {
        out[k] = 0.0f;
    }
    for (n = 0; n < batch; ++n) {
        for (oh = 0; oh < out_h; ++oh) {
            for (ow = 0; ow < out_w; ++ow) {
                const float *g = grad + (((size_t)n * out_h + oh) * out_w + ow) * out_channels;
                for (i = 0; i < kernel_h; ++i) {
                    const int32_t ih = oh * stride_h - pad_top + i * dilation_h;
                    if (ih < 0 || ih >= height) {
                        continue;
                    }
                    for (j = 0; j < kernel_w; ++j) {
                        const int32_t iw = ow * stride_w - pad_left + j * dilation_w;
                        float *x;
                        if (iw < 0 || iw >= width) {
                            continue;
                        }
                        x = out + (((size_t)n * height + ih) * width + iw) * channels;
                        for (o = 0; o < out_channels; ++o) {
                            if (depthwise) {
                                x[o / multiplier] +=
                                    g[o] * (float)weight[((size_t)i * kernel_w + j) * out_channels + o];
                                continue;
                            }
                            for (c = 0; c < channels; ++c) {
                                x[c] += g[o] * (float)weight[(((size_t)o * kernel_h + i) * kernel_w + j) *
                                                             channels + c];
                            }
                        }
                    }
                }
            }
        }
    }
}

/* round(lr * g * step_scale) (halves away from zero) within int32, nan -> 0: the integer step
 * of adir_qsgd_update_*. step_scale arrives as its float bits (the tables are int32_t). */
static int64_t adir_integer_step(float lr, float g, int32_t step_scale_bits)
{
    float step_scale;
    float rounded;
    memcpy(&step_scale, &step_scale_bits, sizeof step_scale);
    rounded = roundf((lr * g) * step_scale);
    if (rounded != rounded) {
        return 0;
    }
    if (rounded >= 2147483647.0f) {
        return INT64_C(2147483647);
    }
    if (rounded <= -2147483648.0f) {
        return -INT64_C(2147483648);
    }
    /* Within (-2^31, 2^31) here, so int32 holds it exactly: one instruction on a
     * single-precision FPU, where float -> int64 is a software routine. */
    return (int64_t)(int32_t)rounded;
}

void adir_qsgd_update_s8(const int8_t *w, const float *g, const float *lr, int8_t *out,
                         size_t size, int32_t inner, int32_t channels,
                         const int32_t *step_scale_bits, int32_t per_channel)
{
    /* A run of `inner` elements (all of them per tensor) shares one step scale: its channel is
     * found once per run, not by two divisions per element. */
    const size_t run = per_channel ? (size_t)inner : size;
    const float rate = *lr;
    size_t start, k;
    if (run == 0) {
        return;
    }
    for (start = 0; start < size; start += run) {
        const int32_t scale = step_scale_bits[per_channel ? (start / run) % (size_t)channels : 0];
        for (k = start; k < start + run; ++k) {
            const int64_t value = (int64_t)w[k] - adir_integer_step(rate, g[k], scale);
            out[k] = (int8_t)(value < -127 ? -127 : (value > 127 ? 127 : value));
        }
    }
}

void adir_qsgd_update_s32(const int32_t *w, const float *g, const float *lr, int32_t *out,
                          size_t size, int32_t inner, int32_t channels,
                          const int32_t *step_scale_bits, int32_t per_channel)
{
    /* A run of `inner` elements (all of them per tensor) shares one step scale: its channel is
     * found once per run, not by two divisions per element. */
    const size_t run = per_channel ? (size_t)inner : size;
    const float rate = *lr;
    size_t start, k;
    if (run == 0) {
        return;
    }
    for (start = 0; start < size; start += run) {
        const int32_t scale = step_scale_bits[per_channel ? (start / run) % (size_t)channels : 0];
        for (k = start; k < start + run; ++k) {
            const int64_t value = (int64_t)w[k] - adir_integer_step(rate, g[k], scale);
            out[k] = (int32_t)(value < INT32_MIN ? INT32_MIN : (value > INT32_MAX ? INT32_MAX : value));
        }
    }
}
