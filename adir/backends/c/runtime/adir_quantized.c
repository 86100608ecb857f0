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

void adir_quantize(const float *x, int8_t *y, size_t size, float scale, int32_t zero_point)
{
    size_t k;
    for (k = 0; k < size; ++k) {
        float rounded = roundf(x[k] / scale);
        if (rounded != rounded) {
            rounded = 0.0f;  /* nan */
        }
        /* Anything beyond +-255 saturates whatever the zero point; clipping first keeps the
         * conversion to int defined. */
        rounded = rounded > 255.0f ? 255.0f : (rounded < -255.0f ? -255.0f : rounded);
        y[k] = adir_clamp_int8((int32_t)rounded + zero_point, -128, 127);
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
    size_t strides[ADIR_MAX_RANK];
    size_t out_shape[ADIR_MAX_RANK];
    size_t index[ADIR_MAX_RANK];
    size_t total = 1, step = 1, k;
    int32_t d;
    for (d = rank - 1; d >= 0; --d) {
        strides[d] = step;
        step *= (size_t)shape[d];
    }
    for (d = 0; d < rank; ++d) {
        out_shape[d] = (size_t)shape[permutation[d]];
        index[d] = 0;
        total *= out_shape[d];
    }
    for (k = 0; k < total; ++k) {
        size_t source = 0;
        for (d = 0; d < rank; ++d) {
            source += index[d] * strides[permutation[d]];
        }
        y[k] = x[source];
        /* The next output index in row-major order. */
        for (d = rank - 1; d >= 0; --d) {
            if (++index[d] < out_shape[d]) {
                break;
            }
            index[d] = 0;
        }
    }
}
