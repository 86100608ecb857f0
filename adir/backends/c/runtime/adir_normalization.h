/* adir_normalization.h: the kernels of the normalization family (see adir_kernels.h).
 *
 * Batch normalisation sees its input `[N, C, *]` as `batch` x `channels` x `spatial` (spatial
 * is the product of the dims after the channel's, 1 for `[N, C]`); the statistics of channel c
 * are over its M = batch * spatial values. The order of operations is the interpreter's
 * (adir/interpreter/normalization.py, after PyTorch's CPU kernels), in float: two passes for
 * the statistics (the mean, then the squared deviations from it), and the output as
 * `(x - mean) * scale + beta` (PyTorch's `x * scale + shift` loses y's side of 0 to rounding
 * where y is near it: reference/adir_normalization.c, adir_channel_affine). Every sum over a
 * channel (the statistics; sum(dy) and sum(dy * (x - mean)) in the gradient) is a sum per
 * sample over its row of `spatial` values, in eight interleaved partial sums added pairwise
 * and then the rest of the row in order (adir_row_sum's order, numpy's pairwise sum of a row
 * of up to 128), and then the samples' sums in sample order. Every kernel of the family,
 * reference or tuned, sums in that order.
 */
#ifndef ADIR_NORMALIZATION_H
#define ADIR_NORMALIZATION_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* adir.batchnorm (training): per channel, mean = sum(x) / M, squares = sum((x - mean)^2),
 *   invstd = 1 / sqrt(squares / M + eps),    y = (x - mean) * scale + beta,
 *   scale = gamma * invstd,
 *   new_running_mean = momentum * mean + (1 - momentum) * running_mean,
 *   new_running_var = momentum * squares / (M - 1) + (1 - momentum) * running_var.
 * Writes y, the batch mean and invstd (for batchnorm_grad) and the new running statistics
 * (M >= 2). In place: new_running_mean may be running_mean and new_running_var running_var;
 * no other buffers overlap. */
void adir_batchnorm(const float *x, const float *gamma, const float *beta,
                    const float *running_mean, const float *running_var, float *y,
                    float *batch_mean, float *batch_invstd, float *new_running_mean,
                    float *new_running_var, int32_t batch, int32_t channels, int32_t spatial,
                    float momentum, float eps);
#ifndef ADIR_BATCHNORM
#define ADIR_BATCHNORM adir_batchnorm
#endif

/* adir.batchnorm_eval: y = (x - running_mean) * scale + beta per channel, with
 * scale = gamma * invstd, invstd = 1 / sqrt(running_var + eps). In place: y may be x. */
void adir_batchnorm_eval(const float *x, const float *gamma, const float *beta,
                         const float *running_mean, const float *running_var, float *y,
                         int32_t batch, int32_t channels, int32_t spatial, float eps);
#ifndef ADIR_BATCHNORM_EVAL
#define ADIR_BATCHNORM_EVAL adir_batchnorm_eval
#endif

/* adir.batchnorm_grad, from the forward's input x, gamma, batch mean and invstd and the
 * output's adjoint dy: per channel, with d = x - mean,
 *   beta_grad = sum(dy),   dot = sum(dy * d),   gamma_grad = dot * invstd,
 *   x_grad = (dy - beta_grad / M - d * (dot * invstd * invstd / M)) * (gamma * invstd).
 * No buffers overlap. */
void adir_batchnorm_grad(const float *x, const float *gamma, const float *mean,
                         const float *invstd, const float *dy, float *x_grad, float *gamma_grad,
                         float *beta_grad, int32_t batch, int32_t channels, int32_t spatial);
#ifndef ADIR_BATCHNORM_GRAD
#define ADIR_BATCHNORM_GRAD adir_batchnorm_grad
#endif

/* adir.batchnorm_relu: adir_batchnorm whose output y is relu((x - mean) * scale + beta)
 * (adir_relu's `v < 0 ? 0 : v`), the other results as adir_batchnorm's. No buffers overlap
 * but the running statistics (as adir_batchnorm). */
void adir_batchnorm_relu(const float *x, const float *gamma, const float *beta,
                         const float *running_mean, const float *running_var, float *y,
                         float *batch_mean, float *batch_invstd, float *new_running_mean,
                         float *new_running_var, int32_t batch, int32_t channels,
                         int32_t spatial, float momentum, float eps);
#ifndef ADIR_BATCHNORM_RELU
#define ADIR_BATCHNORM_RELU adir_batchnorm_relu
#endif

/* adir.batchnorm_relu_grad: adir_batchnorm_grad of g = (y <= 0 ? 0 : dy), y = (x - mean) *
 * scale + beta the forward's affine value (scale = gamma * invstd), as adir_relu_grad of the
 * relu's output gives g. No buffers overlap. */
void adir_batchnorm_relu_grad(const float *x, const float *gamma, const float *beta,
                              const float *mean, const float *invstd, const float *dy,
                              float *x_grad, float *gamma_grad, float *beta_grad, int32_t batch,
                              int32_t channels, int32_t spatial);
#ifndef ADIR_BATCHNORM_RELU_GRAD
#define ADIR_BATCHNORM_RELU_GRAD adir_batchnorm_relu_grad
#endif

/* The same two and the fused two (adir_batchnorm_relu, adir_batchnorm_relu_grad) for a scalar
 * core, bit for bit theirs (eight partial sums in registers, the gradient's two sums in one
 * pass: tuned/adir_tuned_batchnorm.c); select-kernels chooses them on the Cortex-M4F and M7. */
void adir_tuned_batchnorm(const float *x, const float *gamma, const float *beta,
                          const float *running_mean, const float *running_var, float *y,
                          float *batch_mean, float *batch_invstd, float *new_running_mean,
                          float *new_running_var, int32_t batch, int32_t channels,
                          int32_t spatial, float momentum, float eps);
#ifndef ADIR_TUNED_BATCHNORM
#define ADIR_TUNED_BATCHNORM adir_tuned_batchnorm
#endif
void adir_tuned_batchnorm_grad(const float *x, const float *gamma, const float *mean,
                               const float *invstd, const float *dy, float *x_grad,
                               float *gamma_grad, float *beta_grad, int32_t batch,
                               int32_t channels, int32_t spatial);
#ifndef ADIR_TUNED_BATCHNORM_GRAD
#define ADIR_TUNED_BATCHNORM_GRAD adir_tuned_batchnorm_grad
#endif
void adir_tuned_batchnorm_relu(const float *x, const float *gamma, const float *beta,
                               const float *running_mean, const float *running_var, float *y,
                               float *batch_mean, float *batch_invstd, float *new_running_mean,
                               float *new_running_var, int32_t batch, int32_t channels,
                               int32_t spatial, float momentum, float eps);
#ifndef ADIR_TUNED_BATCHNORM_RELU
#define ADIR_TUNED_BATCHNORM_RELU adir_tuned_batchnorm_relu
#endif
void adir_tuned_batchnorm_relu_grad(const float *x, const float *gamma, const float *beta,
                                    const float *mean, const float *invstd, const float *dy,
                                    float *x_grad, float *gamma_grad, float *beta_grad,
                                    int32_t batch, int32_t channels, int32_t spatial);
#ifndef ADIR_TUNED_BATCHNORM_RELU_GRAD
#define ADIR_TUNED_BATCHNORM_RELU_GRAD adir_tuned_batchnorm_relu_grad
#endif

/* The same two for a host with a vector unit, bit for bit theirs (eight channels' sums side by
 * side: tuned/adir_tuned_batchnorm_channels.c); select-kernels chooses them on the hosts. */
void adir_tuned_batchnorm_channels(const float *x, const float *gamma, const float *beta,
                                   const float *running_mean, const float *running_var,
                                   float *y, float *batch_mean, float *batch_invstd,
                                   float *new_running_mean, float *new_running_var,
                                   int32_t batch, int32_t channels, int32_t spatial,
                                   float momentum, float eps);
#ifndef ADIR_TUNED_BATCHNORM_CHANNELS
#define ADIR_TUNED_BATCHNORM_CHANNELS adir_tuned_batchnorm_channels
#endif
void adir_tuned_batchnorm_grad_channels(const float *x, const float *gamma, const float *mean,
                                        const float *invstd, const float *dy, float *x_grad,
                                        float *gamma_grad, float *beta_grad, int32_t batch,
                                        int32_t channels, int32_t spatial);
#ifndef ADIR_TUNED_BATCHNORM_GRAD_CHANNELS
#define ADIR_TUNED_BATCHNORM_GRAD_CHANNELS adir_tuned_batchnorm_grad_channels
#endif

/* The fused batchnorm and relu on the hosts, bit for bit adir_batchnorm_relu and
 * adir_batchnorm_relu_grad (adir_tuned_batchnorm_channels.c's sums, the relu in their passes). */
void adir_tuned_batchnorm_relu_channels(const float *x, const float *gamma, const float *beta,
                                        const float *running_mean, const float *running_var,
                                        float *y, float *batch_mean, float *batch_invstd,
                                        float *new_running_mean, float *new_running_var,
                                        int32_t batch, int32_t channels, int32_t spatial,
                                        float momentum, float eps);
#ifndef ADIR_TUNED_BATCHNORM_RELU_CHANNELS
#define ADIR_TUNED_BATCHNORM_RELU_CHANNELS adir_tuned_batchnorm_relu_channels
#endif
void adir_tuned_batchnorm_relu_grad_channels(const float *x, const float *gamma,
                                             const float *beta, const float *mean,
                                             const float *invstd, const float *dy,
                                             float *x_grad, float *gamma_grad, float *beta_grad,
                                             int32_t batch, int32_t channels, int32_t spatial);
#ifndef ADIR_TUNED_BATCHNORM_RELU_GRAD_CHANNELS
#define ADIR_TUNED_BATCHNORM_RELU_GRAD_CHANNELS adir_tuned_batchnorm_relu_grad_channels
#endif

/* adir.layer_norm: each of `rows` rows of `cols` values (the normalized dims) by its own
 * statistics, as PyTorch's LayerNormKernelImpl:
 *   mean = sum(x) / cols,   var = sum((x - mean)^2) / cols,   rstd = 1 / sqrt(var + eps),
 *   y = (x * rstd + (-mean * rstd)) * weight + bias,
 * with weight and bias over the `cols` values of a row, each NULL where the op has none (as 1
 * and 0). Writes y and each row's mean and rstd (for layer_norm_grad). In place: y may be x
 * (a row is read whole before it is written); no other buffers overlap. */
void adir_layer_norm(const float *x, const float *weight, const float *bias, float *y,
                     float *mean, float *rstd, int32_t rows, int32_t cols, float eps);
#ifndef ADIR_LAYER_NORM
#define ADIR_LAYER_NORM adir_layer_norm
#endif

/* adir.layer_norm_grad, PyTorch's native_layer_norm_backward (summed over x - mean, see the
 * op's docstring): from the forward's input x, the rows' mean and rstd, the output's adjoint
 * dy and the weight g (NULL: ones), per row, with d = x - mean,
 *   dot = sum(dy * g * d),   db = sum(dy * g),
 *   x_grad = rstd * dy * g - (dot * rstd^3 / cols) * d - db * rstd / cols,
 * and over all rows weight_grad = sum(dy * (x * rstd - mean * rstd)), bias_grad = sum(dy).
 * In place: x_grad may be dy or x (a row of each is read before that row is written); no
 * other buffers overlap. */
void adir_layer_norm_grad(const float *x, const float *mean, const float *rstd, const float *dy,
                          const float *weight, float *x_grad, float *weight_grad,
                          float *bias_grad, int32_t rows, int32_t cols);
#ifndef ADIR_LAYER_NORM_GRAD
#define ADIR_LAYER_NORM_GRAD adir_layer_norm_grad
#endif

/* adir.dropout and adir.dropout_grad (the same mask): y = x * m for n elements, where element
 * i has m = 1 / (1 - p) if adir_prng_uniform(adir_prng_u64(seed, counter), i) >= p, else 0
 * (m = 0 everywhere for p >= 1), with adir's generator (adir_init.h). `counter` comes from the
 * step operand by one of the functions below. In place: y may be x. */
void adir_dropout(const float *x, float *y, size_t n, uint64_t counter, uint64_t seed, float p);
#ifndef ADIR_DROPOUT
#define ADIR_DROPOUT adir_dropout
#endif

/* The 64-bit counter of dropout's step operand: an integer step's value modulo 2^64 (two's
 * complement, so -1 is 2^64 - 1), an f32 step's IEEE bit pattern. */
static inline uint64_t adir_dropout_counter_i32(const int32_t *step)
{
    return (uint64_t)step[0];
}

static inline uint64_t adir_dropout_counter_i64(const int64_t *step)
{
    return (uint64_t)step[0];
}

static inline uint64_t adir_dropout_counter_f32(const float *step)
{
    uint32_t bits;
    memcpy(&bits, step, sizeof bits);
    return (uint64_t)bits;
}

#endif /* ADIR_NORMALIZATION_H */
