/* adir_optimizers.h: the reference kernels of the optimizers family (see adir_kernels.h).
 *
 * The learning-rate schedules and Adam's bias correction are scalars of the step count `t`
 * (a float holding a whole number) that PyTorch computes in double precision on the host: so
 * do these kernels (with `t` rounded to the nearest integer, ties to even, as the interpreter
 * does), rounding the result once to float.
 */
#ifndef ADIR_OPTIMIZERS_H
#define ADIR_OPTIMIZERS_H

#include <stddef.h>
#include <stdint.h>

/* StepLR: out = lr * gamma^floor(t / step_size) (step_size >= 1). */
void adir_step_lr(const float *lr, const float *t, float *out, int64_t step_size, float gamma);
#ifndef ADIR_STEP_LR
#define ADIR_STEP_LR adir_step_lr
#endif

/* ExponentialLR: out = lr * gamma^t. */
void adir_exponential_lr(const float *lr, const float *t, float *out, float gamma);
#ifndef ADIR_EXPONENTIAL_LR
#define ADIR_EXPONENTIAL_LR adir_exponential_lr
#endif

/* CosineAnnealingLR: out = eta_min + (lr - eta_min) * (1 + cos(pi * t / t_max)) / 2 (past
 * t_max it rises again, as PyTorch's closed form does; t_max >= 1). */
void adir_cosine_lr(const float *lr, const float *t, float *out, int64_t t_max, float eta_min);
#ifndef ADIR_COSINE_LR
#define ADIR_COSINE_LR adir_cosine_lr
#endif

/* Adam's bias correction: out = 1 - beta^t, beta a double (in float, 1 - 0.999^1 would be off
 * by 1.3e-5 relative). */
void adir_bias_correction(const float *t, float *out, double beta);
#ifndef ADIR_BIAS_CORRECTION
#define ADIR_BIAS_CORRECTION adir_bias_correction
#endif

/* out = param - lr * (op_a(a) op_b(b)): a weight-gradient matmul fused with its SGD update.
 * op_a(a) is m x k (a is stored k x m when transpose_a), op_b(b) is k x n (stored n x k when
 * transpose_b), param and out are m x n, lr is one float. As the unfused ops, the product is
 * rounded to float, then multiplied by lr, then subtracted. In place: out may be param (each
 * element of param is read once, just before the same element of out is written); it
 * overlaps neither a nor b. */
void adir_matmul_sgd_update(const float *param, const float *a, const float *b, const float *lr,
                            float *out, int32_t m, int32_t n, int32_t k, int transpose_a,
                            int transpose_b);
#ifndef ADIR_MATMUL_SGD_UPDATE
#define ADIR_MATMUL_SGD_UPDATE adir_matmul_sgd_update
#endif

#endif /* ADIR_OPTIMIZERS_H */
