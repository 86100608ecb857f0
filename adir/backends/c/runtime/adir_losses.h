/* adir_losses.h: the kernels of the losses family (see adir_kernels.h).
 *
 * `reduction` is one of the ADIR_REDUCTION_ values below: with NONE the kernel writes one
 * loss per term (per element for mse, bce and bce_with_logits; per sample for nll and
 * cross_entropy), with MEAN and SUM one float, the mean or the sum of the terms. A gradient
 * kernel reads `dloss`, the adjoint of the loss: one value per term for NONE, one float for
 * MEAN and SUM, and writes dx, the adjoint of the input (its shape). No output overlaps an
 * input.
 *
 * The classification losses take a batch `input` [batch, classes] (an unbatched [classes]
 * input is batch 1) and a target of class indices ([batch], _i32 or _i64 kernels) or of
 * class probabilities ([batch, classes], _probs kernels). MEAN divides by batch.
 *
 * Data the losses are not defined on, which the interpreter reports as an error, gives nan
 * here, never an out-of-bounds read: a class index outside [0, classes) makes its sample's
 * loss nan (and so a MEAN or SUM), and its row of dx nan; a bce input or target outside
 * [0, 1] (or nan) makes that element's loss and dx nan.
 *
 * The formulas, and their order of operations, are the interpreter's
 * (adir/interpreter/losses.py), which are PyTorch's.
 */
#ifndef ADIR_LOSSES_H
#define ADIR_LOSSES_H

#include <stddef.h>
#include <stdint.h>

#define ADIR_REDUCTION_NONE 0
#define ADIR_REDUCTION_MEAN 1
#define ADIR_REDUCTION_SUM 2

/* -- elementwise losses: input and target of n elements ------------------------------------ */

/* (input - target)^2 per element. */
void adir_mse(const float *input, const float *target, float *loss, size_t n, int reduction);
#ifndef ADIR_MSE
#define ADIR_MSE adir_mse
#endif

/* (t - 1) * max(log1p(-x), -100) - t * max(log(x), -100) per element, x = input in [0, 1],
 * t = target in [0, 1] (the logs clamped as in PyTorch). */
void adir_bce(const float *input, const float *target, float *loss, size_t n, int reduction);
#ifndef ADIR_BCE
#define ADIR_BCE adir_bce
#endif

/* (1 - t) * x - log_sigmoid(x) per element, log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)):
 * bce of sigmoid(x) without overflow, x = input (logits), t = target. */
void adir_bce_with_logits(const float *input, const float *target, float *loss, size_t n,
                          int reduction);
#ifndef ADIR_BCE_WITH_LOGITS
#define ADIR_BCE_WITH_LOGITS adir_bce_with_logits
#endif

/* dx = norm * (x - t) * dloss, norm = 2 (2 / n for MEAN). */
void adir_mse_grad(const float *input, const float *target, const float *dloss, float *dx,
                   size_t n, int reduction);
#ifndef ADIR_MSE_GRAD
#define ADIR_MSE_GRAD adir_mse_grad
#endif

/* dx = dloss * (x - t) / max((1 - x) * x, 1e-12), then / n for MEAN. */
void adir_bce_grad(const float *input, const float *target, const float *dloss, float *dx,
                   size_t n, int reduction);
#ifndef ADIR_BCE_GRAD
#define ADIR_BCE_GRAD adir_bce_grad
#endif

/* dx = (sigmoid(x) - t) * dloss, then / n for MEAN. */
void adir_bce_with_logits_grad(const float *input, const float *target, const float *dloss,
                               float *dx, size_t n, int reduction);
#ifndef ADIR_BCE_WITH_LOGITS_GRAD
#define ADIR_BCE_WITH_LOGITS_GRAD adir_bce_with_logits_grad
#endif

/* -- classification losses: input [batch, classes] --------------------------------------- */

/* nll of log-probabilities: -input[n, target[n]] per sample (class indices), or
 * -sum_c target[n, c] * input[n, c] (class probabilities). */
void adir_nll_i32(const float *input, const int32_t *target, float *loss, int32_t batch,
                  int32_t classes, int reduction);
#ifndef ADIR_NLL_I32
#define ADIR_NLL_I32 adir_nll_i32
#endif
void adir_nll_i64(const float *input, const int64_t *target, float *loss, int32_t batch,
                  int32_t classes, int reduction);
#ifndef ADIR_NLL_I64
#define ADIR_NLL_I64 adir_nll_i64
#endif
void adir_nll_probs(const float *input, const float *target, float *loss, int32_t batch,
                    int32_t classes, int reduction);
#ifndef ADIR_NLL_PROBS
#define ADIR_NLL_PROBS adir_nll_probs
#endif

/* cross-entropy of logits: nll of log_softmax(input) along the classes, the log-softmax
 * computed as (x - max x) - log(sum exp(x - max x)). */
void adir_cross_entropy_i32(const float *input, const int32_t *target, float *loss,
                            int32_t batch, int32_t classes, int reduction);
#ifndef ADIR_CROSS_ENTROPY_I32
#define ADIR_CROSS_ENTROPY_I32 adir_cross_entropy_i32
#endif
void adir_cross_entropy_i64(const float *input, const int64_t *target, float *loss,
                            int32_t batch, int32_t classes, int reduction);
#ifndef ADIR_CROSS_ENTROPY_I64
#define ADIR_CROSS_ENTROPY_I64 adir_cross_entropy_i64
#endif
void adir_cross_entropy_probs(const float *input, const float *target, float *loss,
                              int32_t batch, int32_t classes, int reduction);
#ifndef ADIR_CROSS_ENTROPY_PROBS
#define ADIR_CROSS_ENTROPY_PROBS adir_cross_entropy_probs
#endif

/* The adjoint of nll's input: -s[n] at each sample's class and 0 elsewhere (class indices),
 * or -target[n, c] * s[n] (class probabilities); s[n] = dloss[n] for NONE, dloss for SUM,
 * dloss / batch for MEAN. */
void adir_nll_grad_i32(const float *input, const int32_t *target, const float *dloss,
                       float *dx, int32_t batch, int32_t classes, int reduction);
#ifndef ADIR_NLL_GRAD_I32
#define ADIR_NLL_GRAD_I32 adir_nll_grad_i32
#endif
void adir_nll_grad_i64(const float *input, const int64_t *target, const float *dloss,
                       float *dx, int32_t batch, int32_t classes, int reduction);
#ifndef ADIR_NLL_GRAD_I64
#define ADIR_NLL_GRAD_I64 adir_nll_grad_i64
#endif
void adir_nll_grad_probs(const float *input, const float *target, const float *dloss,
                         float *dx, int32_t batch, int32_t classes, int reduction);
#ifndef ADIR_NLL_GRAD_PROBS
#define ADIR_NLL_GRAD_PROBS adir_nll_grad_probs
#endif

/* The adjoint of cross_entropy's input (logits), as PyTorch's composition: g = nll's adjoint
 * (above), then the log-softmax backward g - exp(log_softmax(input)) * sum_c g. */
void adir_cross_entropy_grad_i32(const float *input, const int32_t *target, const float *dloss,
                                 float *dx, int32_t batch, int32_t classes, int reduction);
#ifndef ADIR_CROSS_ENTROPY_GRAD_I32
#define ADIR_CROSS_ENTROPY_GRAD_I32 adir_cross_entropy_grad_i32
#endif
void adir_cross_entropy_grad_i64(const float *input, const int64_t *target, const float *dloss,
                                 float *dx, int32_t batch, int32_t classes, int reduction);
#ifndef ADIR_CROSS_ENTROPY_GRAD_I64
#define ADIR_CROSS_ENTROPY_GRAD_I64 adir_cross_entropy_grad_i64
#endif
void adir_cross_entropy_grad_probs(const float *input, const float *target, const float *dloss,
                                   float *dx, int32_t batch, int32_t classes, int reduction);
#ifndef ADIR_CROSS_ENTROPY_GRAD_PROBS
#define ADIR_CROSS_ENTROPY_GRAD_PROBS adir_cross_entropy_grad_probs
#endif

#endif /* ADIR_LOSSES_H */
