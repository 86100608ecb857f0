/* adir_optimizers.h: the kernels of the optimizers family (see adir_kernels.h).
 *
 * The learning-rate schedules and Adam's bias correction are scalars of the step count `t`
 * (a float holding a whole number) that PyTorch computes in double precision on the host: so
 * do these kernels (with `t` rounded to the nearest integer, ties to even, as the interpreter
 * does), rounding the result once to float.
 */
#ifndef ADIR_OPTIMIZERS_H
#define ADIR_OPTIMIZERS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* The gradient as an update sees it: clipped to [-clip_value, clip_value] when clip_value > 0
 * (adir_minimum's, then adir_maximum's formula: a nan passes), then plus weight_decay * param
 * when weight_decay is not 0. Shared by the reference and the tuned updates, which must agree
 * bit for bit. */
static inline float adir_regularized_grad(float grad, float param, float weight_decay,
                                          float clip_value)
{
    float g = grad;
    if (clip_value > 0.0f) {
        const float low = -clip_value;
        g = (g <= clip_value || isnan(g)) ? g : clip_value;
        g = (g >= low || isnan(g)) ? g : low;
    }
    if (weight_decay != 0.0f) {
        const float decay = weight_decay * param;
        g = g + decay;
    }
    return g;
}

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
/* The same, tuned (tuned/, sized by the target's settings header): select-kernels chooses it for
 * every such op unless told to use the references. */
void adir_tuned_matmul_sgd_update(const float *param, const float *a, const float *b,
                                  const float *lr, float *out, int32_t m, int32_t n, int32_t k,
                                  int transpose_a, int transpose_b);
#ifndef ADIR_TUNED_MATMUL_SGD_UPDATE
#define ADIR_TUNED_MATMUL_SGD_UPDATE adir_tuned_matmul_sgd_update
#endif

/* -- parameter updates: adir.sgd_update, adir.momentum_update, adir.adam_update ------------
 *
 * The updates of torch.optim.SGD (without and with momentum) and Adam/AdamW, one element at a
 * time. Each reads element i of param, of its state and of grad before it writes element i of
 * any output, so each output may be the buffer of any of those inputs (in place); lr and the
 * bias corrections are one float each. The gradient is first clipped to
 * [-clip_value, clip_value] when clip_value > 0 (a nan passes, as adir_minimum/adir_maximum
 * let it), then weight_decay * param is added to it when weight_decay is not 0 (L2; with
 * decoupled_weight_decay, Adam multiplies param by 1 - lr * weight_decay instead). Every
 * float operation is one of the elementwise kernels the update stands for, rounded once, in
 * the same order, so the results are those of the unfused ops bit for bit. */

/* g = regularized grad; param_out = param - lr * g. */
void adir_sgd_update(const float *param, const float *grad, const float *lr, float *param_out,
                     size_t n, float weight_decay, float clip_value);
#ifndef ADIR_SGD_UPDATE
#define ADIR_SGD_UPDATE adir_sgd_update
#endif
/* The same, tuned (tuned/, sized by the target's settings header): select-kernels chooses it for
 * every such op unless told to use the references. */
void adir_tuned_sgd_update(const float *param, const float *grad, const float *lr, float *param_out,
                           size_t n, float weight_decay, float clip_value);
#ifndef ADIR_TUNED_SGD_UPDATE
#define ADIR_TUNED_SGD_UPDATE adir_tuned_sgd_update
#endif

/* g = regularized grad; buf_out = buf * momentum + g; param_out = param - lr * d, with
 * d = g + momentum * buf_out when nesterov, else d = buf_out. */
void adir_momentum_update(const float *param, const float *buf, const float *grad, const float *lr,
                          float *param_out, float *buf_out, size_t n, float momentum,
                          float weight_decay, float clip_value, int nesterov);
#ifndef ADIR_MOMENTUM_UPDATE
#define ADIR_MOMENTUM_UPDATE adir_momentum_update
#endif
/* The same, tuned (tuned/, sized by the target's settings header): select-kernels chooses it for
 * every such op unless told to use the references. */
void adir_tuned_momentum_update(const float *param, const float *buf, const float *grad,
                                const float *lr, float *param_out, float *buf_out, size_t n,
                                float momentum, float weight_decay, float clip_value, int nesterov);
#ifndef ADIR_TUNED_MOMENTUM_UPDATE
#define ADIR_TUNED_MOMENTUM_UPDATE adir_tuned_momentum_update
#endif

/* Adam at step t, given bias_correction1 = 1 - beta1^t and bias_correction2_sqrt =
 * sqrt(1 - beta2^t) (the betas in double: 1 - beta is taken in double, rounded to float once):
 *     exp_avg_out = exp_avg + (1 - beta1) * (g - exp_avg)
 *     exp_avg_sq_out = exp_avg_sq * beta2 + (1 - beta2) * g * g
 *     param_out = param - lr / bias_correction1
 *                 * (exp_avg_out / (sqrt(exp_avg_sq_out) / bias_correction2_sqrt + eps)) */
void adir_adam_update(const float *param, const float *exp_avg, const float *exp_avg_sq,
                      const float *grad, const float *lr, const float *bias_correction1,
                      const float *bias_correction2_sqrt, float *param_out, float *exp_avg_out,
                      float *exp_avg_sq_out, size_t n, double beta1, double beta2, float eps,
                      float weight_decay, float clip_value, int decoupled_weight_decay);
#ifndef ADIR_ADAM_UPDATE
#define ADIR_ADAM_UPDATE adir_adam_update
#endif
/* The same, tuned (tuned/, sized by the target's settings header): select-kernels chooses it for
 * every such op unless told to use the references. */
void adir_tuned_adam_update(const float *param, const float *exp_avg, const float *exp_avg_sq,
                            const float *grad, const float *lr, const float *bias_correction1,
                            const float *bias_correction2_sqrt, float *param_out,
                            float *exp_avg_out, float *exp_avg_sq_out, size_t n, double beta1,
                            double beta2, float eps, float weight_decay, float clip_value,
                            int decoupled_weight_decay);
#ifndef ADIR_TUNED_ADAM_UPDATE
#define ADIR_TUNED_ADAM_UPDATE adir_tuned_adam_update
#endif

/* -- the same updates of a weight-gradient matmul: adir.matmul_*_update --------------------
 *
 * The gradient is op_a(a) op_b(b), m x n as in adir_matmul_sgd_update (a is stored k x m when
 * transpose_a, b is stored n x k when transpose_b); it is computed a panel of a few rows by up
 * to 64 columns at a time on the stack (from register tiles) and never stored whole, then each
 * row of the panel is updated as above. In place as above; no output overlaps a or b. */

/* adir_sgd_update of the product (adir_matmul_sgd_update is the case without weight decay and
 * clipping). */
void adir_matmul_sgd_update_general(const float *param, const float *a, const float *b,
                                    const float *lr, float *param_out, int32_t m, int32_t n,
                                    int32_t k, int transpose_a, int transpose_b, float weight_decay,
                                    float clip_value);
#ifndef ADIR_MATMUL_SGD_UPDATE_GENERAL
#define ADIR_MATMUL_SGD_UPDATE_GENERAL adir_matmul_sgd_update_general
#endif
/* The same, tuned (tuned/, sized by the target's settings header): select-kernels chooses it for
 * every such op unless told to use the references. */
void adir_tuned_matmul_sgd_update_general(const float *param, const float *a, const float *b,
                                          const float *lr, float *param_out, int32_t m, int32_t n,
                                          int32_t k, int transpose_a, int transpose_b,
                                          float weight_decay, float clip_value);
#ifndef ADIR_TUNED_MATMUL_SGD_UPDATE_GENERAL
#define ADIR_TUNED_MATMUL_SGD_UPDATE_GENERAL adir_tuned_matmul_sgd_update_general
#endif

/* adir_momentum_update of the product. */
void adir_matmul_momentum_update(const float *param, const float *buf, const float *a,
                                 const float *b, const float *lr, float *param_out, float *buf_out,
                                 int32_t m, int32_t n, int32_t k, int transpose_a, int transpose_b,
                                 float momentum, float weight_decay, float clip_value,
                                 int nesterov);
#ifndef ADIR_MATMUL_MOMENTUM_UPDATE
#define ADIR_MATMUL_MOMENTUM_UPDATE adir_matmul_momentum_update
#endif
/* The same, tuned (tuned/, sized by the target's settings header): select-kernels chooses it for
 * every such op unless told to use the references. */
void adir_tuned_matmul_momentum_update(const float *param, const float *buf, const float *a,
                                       const float *b, const float *lr, float *param_out,
                                       float *buf_out, int32_t m, int32_t n, int32_t k,
                                       int transpose_a, int transpose_b, float momentum,
                                       float weight_decay, float clip_value, int nesterov);
#ifndef ADIR_TUNED_MATMUL_MOMENTUM_UPDATE
#define ADIR_TUNED_MATMUL_MOMENTUM_UPDATE adir_tuned_matmul_momentum_update
#endif

/* adir_adam_update of the product. */
void adir_matmul_adam_update(const float *param, const float *exp_avg, const float *exp_avg_sq,
                             const float *a, const float *b, const float *lr,
                             const float *bias_correction1, const float *bias_correction2_sqrt,
                             float *param_out, float *exp_avg_out, float *exp_avg_sq_out, int32_t m,
                             int32_t n, int32_t k, int transpose_a, int transpose_b, double beta1,
                             double beta2, float eps, float weight_decay, float clip_value,
                             int decoupled_weight_decay);
#ifndef ADIR_MATMUL_ADAM_UPDATE
#define ADIR_MATMUL_ADAM_UPDATE adir_matmul_adam_update
#endif
/* The same, tuned (tuned/, sized by the target's settings header): select-kernels chooses it for
 * every such op unless told to use the references. */
void adir_tuned_matmul_adam_update(const float *param, const float *exp_avg,
                                   const float *exp_avg_sq, const float *a, const float *b,
                                   const float *lr, const float *bias_correction1,
                                   const float *bias_correction2_sqrt, float *param_out,
                                   float *exp_avg_out, float *exp_avg_sq_out, int32_t m, int32_t n,
                                   int32_t k, int transpose_a, int transpose_b, double beta1,
                                   double beta2, float eps, float weight_decay, float clip_value,
                                   int decoupled_weight_decay);
#ifndef ADIR_TUNED_MATMUL_ADAM_UPDATE
#define ADIR_TUNED_MATMUL_ADAM_UPDATE adir_tuned_matmul_adam_update
#endif

#endif /* ADIR_OPTIMIZERS_H */
