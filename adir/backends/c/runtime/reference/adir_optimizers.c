/* adir_optimizers.c: the reference kernels of the optimizers family (declared in
 * adir_optimizers.h): each kernel's semantics in its plainest loops, the C twin of
 * adir/interpreter/optimizers.py. The updates have tuned versions (adir_tuned_sgd_update,
 * adir_tuned_matmul_adam_update, ... in tuned/adir_tuned_updates.c), and the kernels here are what
 * they must compute: one element at a time, every float operation on its own line (rounded once,
 * contracted into a fused multiply-add nowhere), the gradient of a matmul update a plain sum in
 * order. */
#include <math.h>
#include <string.h>

#include "adir_kernels.h"

/* The double nearest pi (C99's math.h has no M_PI). */
#define ADIR_PI 3.141592653589793

/* The step count: t rounded to a whole number, ties to even (Python's round). */
static double adir_step_count(const float *t)
{
    return nearbyint((double)t[0]);
}

/* floor(t / d) of whole numbers, exactly (a rounded quotient could round up to the next
 * integer): t minus its remainder is a multiple of d. */
static double adir_floor_divide(double t, double d)
{
    const double remainder = fmod(t, d);
    double quotient = (t - remainder) / d;
    if (remainder < 0.0) {
        quotient -= 1.0;
    }
    return quotient;
}

void adir_step_lr(const float *lr, const float *t, float *out, int64_t step_size, float gamma)
{
    const double epochs = adir_floor_divide(adir_step_count(t), (double)step_size);
    out[0] = (float)((double)lr[0] * pow((double)gamma, epochs));
}

void adir_exponential_lr(const float *lr, const float *t, float *out, float gamma)
{
    out[0] = (float)((double)lr[0] * pow((double)gamma, adir_step_count(t)));
}

void adir_cosine_lr(const float *lr, const float *t, float *out, int64_t t_max, float eta_min)
{
    const double angle = ADIR_PI * adir_step_count(t) / (double)t_max;
    const double low = (double)eta_min;
    const double above = ((double)lr[0] - low) * (1.0 + cos(angle)) / 2.0;
    out[0] = (float)(low + above);
}

/* base^n for a whole number n, by squaring: about log2(n) double multiplies. pow() gives the
 * same float after 1 - x is rounded (both are within a few units in the last place of a
 * double, 2^-29 of a float's), but on a core with a single-precision FPU only (Cortex-M4F) its
 * software double arithmetic costs about 4,000 instructions a call and this about 300
 * (docs/cortex_m.md). Counts beyond 2^31 go to pow. */
static double adir_whole_power(double base, double n)
{
    const double magnitude = fabs(n);
    unsigned long e;
    double power = 1.0;
    if (!(magnitude < 2147483648.0)) {
        return pow(base, n);
    }
    for (e = (unsigned long)magnitude; e != 0; e >>= 1) {
        if (e & 1u) {
            power *= base;
        }
        base *= base;
    }
    return n < 0.0 ? 1.0 / power : power;
}

void adir_bias_correction(const float *t, float *out, double beta)
{
    out[0] = (float)(1.0 - adir_whole_power(beta, adir_step_count(t)));
}

/* -- parameter updates -------------------------------------------------------------------- */

/* One element of adir_tuned_sgd_update: the new param. */
static float adir_sgd_step(float param, float grad, float rate, float weight_decay,
                               float clip_value)
{
    const float g = adir_regularized_grad(grad, param, weight_decay, clip_value);
    const float step = rate * g;
    return param - step;
}

/* One element of adir_tuned_momentum_update: the new param and *buf_out. */
static float adir_momentum_step(float param, float buf, float grad, float rate,
                                    float momentum, float weight_decay, float clip_value,
                                    int nesterov, float *buf_out)
{
    const float g = adir_regularized_grad(grad, param, weight_decay, clip_value);
    const float kept = buf * momentum;
    const float b = kept + g;
    float direction = b, step;
    if (nesterov) {
        const float ahead = momentum * b;
        direction = g + ahead;
    }
    step = rate * direction;
    *buf_out = b;
    return param - step;
}

/* Adam's constants, as adir_tuned_adam_update derives them from its arguments. */
struct adir_adam_scalars {
    float rate, weight_decay, clip_value, step_size, correction2, one_minus_beta1, beta2,
        one_minus_beta2, eps, keep;
    int shrink;
};

static struct adir_adam_scalars adir_adam_constants(const float *lr,
                                                    const float *bias_correction1,
                                                    const float *bias_correction2_sqrt,
                                                    double beta1, double beta2, float eps,
                                                    float weight_decay, float clip_value,
                                                    int decoupled_weight_decay)
{
    struct adir_adam_scalars c;
    c.rate = lr[0];
    /* Decoupled (AdamW): param * (1 - lr * weight_decay), and no L2 term in the gradient. */
    c.weight_decay = decoupled_weight_decay ? 0.0f : weight_decay;
    c.clip_value = clip_value;
    c.step_size = c.rate / bias_correction1[0];
    c.correction2 = bias_correction2_sqrt[0];
    c.one_minus_beta1 = (float)(1.0 - beta1);
    c.beta2 = (float)beta2;
    c.one_minus_beta2 = (float)(1.0 - beta2);
    c.eps = eps;
    c.shrink = decoupled_weight_decay && weight_decay != 0.0f;
    c.keep = 1.0f;
    if (c.shrink) {
        const float decay = c.rate * weight_decay;
        c.keep = 1.0f - decay;
    }
    return c;
}

/* One element of adir_tuned_adam_update: the new param, *m_out and *v_out. */
static float adir_adam_step(const struct adir_adam_scalars *c, float param, float m, float v,
                                float grad, float *m_out, float *v_out)
{
    const float g = adir_regularized_grad(grad, param, c->weight_decay, c->clip_value);
    const float shrunk = param * c->keep;
    const float p = c->shrink ? shrunk : param;
    const float difference = g - m;
    const float m_step = c->one_minus_beta1 * difference;
    const float m_new = m + m_step;
    const float v_kept = v * c->beta2;
    const float g_scaled = c->one_minus_beta2 * g;
    const float g_squared = g_scaled * g;
    const float v_new = v_kept + g_squared;
    const float root = sqrtf(v_new);
    const float corrected = root / c->correction2;
    const float denominator = corrected + c->eps;
    const float ratio = m_new / denominator;
    const float step = c->step_size * ratio;
    *m_out = m_new;
    *v_out = v_new;
    return p - step;
}

void adir_sgd_update(const float *param, const float *grad, const float *lr, float *param_out,
                     size_t n, float weight_decay, float clip_value)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        param_out[i] = adir_sgd_step(param[i], grad[i], lr[0], weight_decay, clip_value);
    }
}

void adir_momentum_update(const float *param, const float *buf, const float *grad, const float *lr,
                          float *param_out, float *buf_out, size_t n, float momentum,
                          float weight_decay, float clip_value, int nesterov)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        float b;
        const float p = adir_momentum_step(param[i], buf[i], grad[i], lr[0], momentum,
                                               weight_decay, clip_value, nesterov, &b);
        buf_out[i] = b;
        param_out[i] = p;
    }
}

void adir_adam_update(const float *param, const float *exp_avg, const float *exp_avg_sq,
                      const float *grad, const float *lr, const float *bias_correction1,
                      const float *bias_correction2_sqrt, float *param_out, float *exp_avg_out,
                      float *exp_avg_sq_out, size_t n, double beta1, double beta2, float eps,
                      float weight_decay, float clip_value, int decoupled_weight_decay)
{
    const struct adir_adam_scalars c =
        adir_adam_constants(lr, bias_correction1, bias_correction2_sqrt, beta1, beta2, eps,
                                weight_decay, clip_value, decoupled_weight_decay);
    size_t i;
    for (i = 0; i < n; ++i) {
        float m, v;
        const float p = adir_adam_step(&c, param[i], exp_avg[i], exp_avg_sq[i], grad[i], &m,
                                           &v);
        exp_avg_out[i] = m;
        exp_avg_sq_out[i] = v;
        param_out[i] = p;
    }
}

/* -- the same updates of a weight-gradient matmul ----------------------------------------- */

/* Element (i, j) of op_a(a) op_b(b) (op_a(a) m x k, op_b(b) k x n): the sum over p in order. */
static float adir_gradient(const float *a, const float *b, int32_t m, int32_t n, int32_t k,
                               int transpose_a, int transpose_b, int32_t i, int32_t j)
{
    float sum = 0.0f;
    int32_t p;
    for (p = 0; p < k; ++p) {
        const float x = transpose_a ? a[(size_t)p * (size_t)m + (size_t)i]
                                    : a[(size_t)i * (size_t)k + (size_t)p];
        const float y = transpose_b ? b[(size_t)j * (size_t)k + (size_t)p]
                                    : b[(size_t)p * (size_t)n + (size_t)j];
        const float product = x * y;
        sum += product;
    }
    return sum;
}

void adir_matmul_sgd_update(const float *param, const float *a, const float *b, const float *lr,
                            float *out, int32_t m, int32_t n, int32_t k, int transpose_a,
                            int transpose_b)
{
    adir_matmul_sgd_update_general(param, a, b, lr, out, m, n, k, transpose_a, transpose_b,
                                       0.0f, 0.0f);
}

void adir_matmul_sgd_update_general(const float *param, const float *a, const float *b,
                                    const float *lr, float *param_out, int32_t m, int32_t n,
                                    int32_t k, int transpose_a, int transpose_b, float weight_decay,
                                    float clip_value)
{
    int32_t i, j;
    for (i = 0; i < m; ++i) {
        for (j = 0; j < n; ++j) {
            const size_t at = (size_t)i * (size_t)n + (size_t)j;
            const float g = adir_gradient(a, b, m, n, k, transpose_a, transpose_b, i, j);
            param_out[at] = adir_sgd_step(param[at], g, lr[0], weight_decay, clip_value);
        }
    }
}

void adir_matmul_momentum_update(const float *param, const float *buf, const float *a,
                                 const float *b, const float *lr, float *param_out, float *buf_out,
                                 int32_t m, int32_t n, int32_t k, int transpose_a, int transpose_b,
                                 float momentum, float weight_decay, float clip_value,
                                 int nesterov)
{
    int32_t i, j;
    for (i = 0; i < m; ++i) {
        for (j = 0; j < n; ++j) {
            const size_t at = (size_t)i * (size_t)n + (size_t)j;
            const float g = adir_gradient(a, b, m, n, k, transpose_a, transpose_b, i, j);
            float new_buf;
            const float p = adir_momentum_step(param[at], buf[at], g, lr[0], momentum,
                                                   weight_decay, clip_value, nesterov,
                                                   &new_buf);
            buf_out[at] = new_buf;
            param_out[at] = p;
        }
    }
}

void adir_matmul_adam_update(const float *param, const float *exp_avg, const float *exp_avg_sq,
                             const float *a, const float *b, const float *lr,
                             const float *bias_correction1, const float *bias_correction2_sqrt,
                             float *param_out, float *exp_avg_out, float *exp_avg_sq_out, int32_t m,
                             int32_t n, int32_t k, int transpose_a, int transpose_b, double beta1,
                             double beta2, float eps, float weight_decay, float clip_value,
                             int decoupled_weight_decay)
{
    const struct adir_adam_scalars c =
        adir_adam_constants(lr, bias_correction1, bias_correction2_sqrt, beta1, beta2, eps,
                                weight_decay, clip_value, decoupled_weight_decay);
    int32_t i, j;
    for (i = 0; i < m; ++i) {
        for (j = 0; j < n; ++j) {
            const size_t at = (size_t)i * (size_t)n + (size_t)j;
            const float g = adir_gradient(a, b, m, n, k, transpose_a, transpose_b, i, j);
            float new_m, new_v;
            const float p = adir_adam_step(&c, param[at], exp_avg[at], exp_avg_sq[at], g,
                                               &new_m, &new_v);
            exp_avg_out[at] = new_m;
            exp_avg_sq_out[at] = new_v;
            param_out[at] = p;
        }
    }
}
