/* adir_activations.h: the kernels of the activations family (see adir_kernels.h).
 *
 * The elementwise activations read x and write y, n elements; y may be x (in place). Their
 * gradients read the value the forward op saved (its input x or its output y, as named) and
 * the adjoint dy, and write dx; dx may be either of them. Each element is computed from the
 * inputs' same element before it is written, which is what makes the aliasing safe.
 *
 * softmax and log_softmax (and their gradients) work along one axis of a tensor seen as
 * [outer, axis_size, inner] (row-major: outer = the product of the dims before the axis,
 * inner = the product of those after it, so the last axis has inner = 1). Their output
 * overlaps no input.
 *
 * The formulas, and their order of operations, are the interpreter's
 * (adir/interpreter/activations.py), which are PyTorch's.
 */
#ifndef ADIR_ACTIVATIONS_H
#define ADIR_ACTIVATIONS_H

#include <stddef.h>
#include <stdint.h>

/* y = x < 0 ? 0 : x (nan and -0.0 pass through). */
void adir_relu(const float *x, float *y, size_t n);
#ifndef ADIR_RELU
#define ADIR_RELU adir_relu
#endif

/* y = x > 0 ? x : alpha * x. */
void adir_leaky_relu(const float *x, float *y, size_t n, float alpha);
#ifndef ADIR_LEAKY_RELU
#define ADIR_LEAKY_RELU adir_leaky_relu
#endif

/* y = 1 / (1 + exp(-x)), as 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|):
 * no overflow, full precision for very negative x. */
void adir_sigmoid(const float *x, float *y, size_t n);
#ifndef ADIR_SIGMOID
#define ADIR_SIGMOID adir_sigmoid
#endif

/* y = tanh(x). */
void adir_tanh(const float *x, float *y, size_t n);
#ifndef ADIR_TANH
#define ADIR_TANH adir_tanh
#endif

/* y = log1p(exp(beta * x)) / beta, and y = x where beta * x > threshold. beta > 0. */
void adir_softplus(const float *x, float *y, size_t n, float beta, float threshold);
#ifndef ADIR_SOFTPLUS
#define ADIR_SOFTPLUS adir_softplus
#endif

/* The exact gelu: y = x * 0.5 * (1 + erf(x / sqrt(2))). */
void adir_gelu(const float *x, float *y, size_t n);
#ifndef ADIR_GELU
#define ADIR_GELU adir_gelu
#endif

/* The tanh gelu: y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))). */
void adir_gelu_tanh(const float *x, float *y, size_t n);
#ifndef ADIR_GELU_TANH
#define ADIR_GELU_TANH adir_gelu_tanh
#endif

/* t = x < lo ? lo : x; y = t > hi ? hi : t (nan and -0.0 pass through; lo > hi gives hi).
 * A missing bound is -INFINITY or INFINITY. */
void adir_clamp(const float *x, float *y, size_t n, float lo, float hi);
#ifndef ADIR_CLAMP
#define ADIR_CLAMP adir_clamp
#endif

/* y = x * min(max(x + 3, 0), 6) / 6. */
void adir_hardswish(const float *x, float *y, size_t n);
#ifndef ADIR_HARDSWISH
#define ADIR_HARDSWISH adir_hardswish
#endif

/* y = min(max(x + 3, 0), 6) / 6. */
void adir_hardsigmoid(const float *x, float *y, size_t n);
#ifndef ADIR_HARDSIGMOID
#define ADIR_HARDSIGMOID adir_hardsigmoid
#endif

/* y = exp(x - m) / sum exp(x - m) along the axis, m the slice's max. */
void adir_softmax(const float *x, float *y, int32_t outer, int32_t axis_size, int32_t inner);
#ifndef ADIR_SOFTMAX
#define ADIR_SOFTMAX adir_softmax
#endif

/* y = (x - m) - log(sum exp(x - m)) along the axis, m the slice's max. */
void adir_log_softmax(const float *x, float *y, int32_t outer, int32_t axis_size,
                      int32_t inner);
#ifndef ADIR_LOG_SOFTMAX
#define ADIR_LOG_SOFTMAX adir_log_softmax
#endif

/* dx = y <= 0 ? 0 : dy, with y = relu(x). */
void adir_relu_grad(const float *y, const float *dy, float *dx, size_t n);
#ifndef ADIR_RELU_GRAD
#define ADIR_RELU_GRAD adir_relu_grad
#endif

/* dx = x > 0 ? dy : dy * alpha. */
void adir_leaky_relu_grad(const float *x, const float *dy, float *dx, size_t n, float alpha);
#ifndef ADIR_LEAKY_RELU_GRAD
#define ADIR_LEAKY_RELU_GRAD adir_leaky_relu_grad
#endif

/* dx = dy * (1 - y) * y, with y = sigmoid(x). */
void adir_sigmoid_grad(const float *y, const float *dy, float *dx, size_t n);
#ifndef ADIR_SIGMOID_GRAD
#define ADIR_SIGMOID_GRAD adir_sigmoid_grad
#endif

/* dx = dy * ((1 - y) * (1 + y)), with y = tanh(x). */
void adir_tanh_grad(const float *y, const float *dy, float *dx, size_t n);
#ifndef ADIR_TANH_GRAD
#define ADIR_TANH_GRAD adir_tanh_grad
#endif

/* dx = dy * sigmoid(beta * x), and dx = dy where beta * x > threshold. */
void adir_softplus_grad(const float *x, const float *dy, float *dx, size_t n, float beta,
                        float threshold);
#ifndef ADIR_SOFTPLUS_GRAD
#define ADIR_SOFTPLUS_GRAD adir_softplus_grad
#endif

/* dx = dy * (Phi(x) + x * phi(x)), Phi and phi the standard normal CDF and density. */
void adir_gelu_grad(const float *x, const float *dy, float *dx, size_t n);
#ifndef ADIR_GELU_GRAD
#define ADIR_GELU_GRAD adir_gelu_grad
#endif

/* The derivative of adir_gelu_tanh times dy (PyTorch's gelu_backward, approximate="tanh"). */
void adir_gelu_tanh_grad(const float *x, const float *dy, float *dx, size_t n);
#ifndef ADIR_GELU_TANH_GRAD
#define ADIR_GELU_TANH_GRAD adir_gelu_tanh_grad
#endif

/* hardtanh's backward: dx = (s > lo && s < hi) ? dy : 0, s the clamp's input or output. */
void adir_clamp_grad(const float *s, const float *dy, float *dx, size_t n, float lo, float hi);
#ifndef ADIR_CLAMP_GRAD
#define ADIR_CLAMP_GRAD adir_clamp_grad
#endif

/* torch.clamp's backward: dx = (x >= lo && x <= hi) ? dy : 0, x the clamp's input. */
void adir_clamp_inclusive_grad(const float *x, const float *dy, float *dx, size_t n, float lo,
                               float hi);
#ifndef ADIR_CLAMP_INCLUSIVE_GRAD
#define ADIR_CLAMP_INCLUSIVE_GRAD adir_clamp_inclusive_grad
#endif

/* 1-bit masks of a relu or clamp's saved value: bit i % 32 of mask[i / 32] (least significant
   first) is element i's predicate, the unused bits of the last word 0; ceil(n / 32) words. */
/* bit i = !(y[i] <= 0), where relu_grad passes dy. */
void adir_relu_mask(const float *y, int32_t *mask, size_t n);
#ifndef ADIR_RELU_MASK
#define ADIR_RELU_MASK adir_relu_mask
#endif

/* bit i = (s[i] > lo && s[i] < hi), where clamp_grad passes dy. */
void adir_clamp_mask(const float *s, int32_t *mask, size_t n, float lo, float hi);
#ifndef ADIR_CLAMP_MASK
#define ADIR_CLAMP_MASK adir_clamp_mask
#endif

/* bit i = (x[i] >= lo && x[i] <= hi), where clamp_inclusive_grad passes dy. */
void adir_clamp_inclusive_mask(const float *x, int32_t *mask, size_t n, float lo, float hi);
#ifndef ADIR_CLAMP_INCLUSIVE_MASK
#define ADIR_CLAMP_INCLUSIVE_MASK adir_clamp_inclusive_mask
#endif

/* dx[i] = bit i of mask ? dy[i] : 0. */
void adir_mask_grad(const int32_t *mask, const float *dy, float *dx, size_t n);
#ifndef ADIR_MASK_GRAD
#define ADIR_MASK_GRAD adir_mask_grad
#endif

/* dx = x <= -3 ? 0 : x < 3 ? dy * (x / 3 + 0.5) : dy. */
void adir_hardswish_grad(const float *x, const float *dy, float *dx, size_t n);
#ifndef ADIR_HARDSWISH_GRAD
#define ADIR_HARDSWISH_GRAD adir_hardswish_grad
#endif

/* dx = (x > -3 && x < 3) ? dy * (1.0f / 6.0f) : 0. */
void adir_hardsigmoid_grad(const float *x, const float *dy, float *dx, size_t n);
#ifndef ADIR_HARDSIGMOID_GRAD
#define ADIR_HARDSIGMOID_GRAD adir_hardsigmoid_grad
#endif

/* dx = y * (dy - sum(dy * y)) along the axis, with y = softmax(x). */
void adir_softmax_grad(const float *y, const float *dy, float *dx, int32_t outer,
                       int32_t axis_size, int32_t inner);
#ifndef ADIR_SOFTMAX_GRAD
#define ADIR_SOFTMAX_GRAD adir_softmax_grad
#endif

/* dx = dy - exp(y) * sum(dy) along the axis, with y = log_softmax(x). */
void adir_log_softmax_grad(const float *y, const float *dy, float *dx, int32_t outer,
                           int32_t axis_size, int32_t inner);
#ifndef ADIR_LOG_SOFTMAX_GRAD
#define ADIR_LOG_SOFTMAX_GRAD adir_log_softmax_grad
#endif

#endif /* ADIR_ACTIVATIONS_H */
