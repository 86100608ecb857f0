/* adir_losses.c: the reference kernels of the losses family (declared in adir_losses.h).
 *
 * Terms are summed in order, in float. nll and cross_entropy share one implementation per
 * direction, over a target given as exactly one of int32 indices, int64 indices or float
 * probabilities (the other pointers NULL); cross_entropy is nll of the log-softmax of its
 * logits, computed a row at a time.
 */
#include <math.h>

#include "adir_kernels.h"

/* PyTorch's EPSILON in binary_cross_entropy_backward, a float: 1e-12 rounded. */
static const float bce_grad_epsilon = 9.99999996e-13f;

/* Record one loss term: stored for NONE, added to `total` (returned) otherwise. */
static float put_term(float *loss, size_t index, float term, float total, int reduction)
{
    if (reduction == ADIR_REDUCTION_NONE) {
        loss[index] = term;
        return total;
    }
    return total + term;
}

/* Write the reduced loss of `count` terms summing to `total` (nothing more for NONE). */
static void put_reduced(float *loss, float total, size_t count, int reduction)
{
    if (reduction == ADIR_REDUCTION_MEAN) {
        loss[0] = total / (float)count;
    } else if (reduction == ADIR_REDUCTION_SUM) {
        loss[0] = total;
    }
}

/* The adjoint of loss term `index`; MEAN's 1/count is left to the caller, as PyTorch orders it. */
static float term_adjoint(const float *dloss, size_t index, int reduction)
{
    return reduction == ADIR_REDUCTION_NONE ? dloss[index] : dloss[0];
}

static int is_probability(float p)
{
    return p >= 0.0f && p <= 1.0f; /* false for nan */
}

static float sigmoid_of(float x)
{
    const float e = expf(-fabsf(x));
    return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

/* A log clamped at -100 as PyTorch's bce clamps it (nan stays nan). */
static float clamp_log(float log_value)
{
    return log_value < -100.0f ? -100.0f : log_value;
}

/* -- elementwise losses --------------------------------------------------------------------- */

void adir_mse(const float *input, const float *target, float *loss, size_t n, int reduction)
{
    float total = 0.0f;
    size_t i;
    for (i = 0; i < n; ++i) {
        const float diff = input[i] - target[i];
        total = put_term(loss, i, diff * diff, total, reduction);
    }
    put_reduced(loss, total, n, reduction);
}

void adir_bce(const float *input, const float *target, float *loss, size_t n, int reduction)
{
    float total = 0.0f;
    size_t i;
    for (i = 0; i < n; ++i) {
        const float x = input[i], t = target[i];
        float term = NAN;
        if (is_probability(x) && is_probability(t)) {
            term = (t - 1.0f) * clamp_log(log1pf(-x)) - t * clamp_log(logf(x));
        }
        total = put_term(loss, i, term, total, reduction);
    }
    put_reduced(loss, total, n, reduction);
}

void adir_bce_with_logits(const float *input, const float *target, float *loss, size_t n,
                          int reduction)
{
    float total = 0.0f;
    size_t i;
    for (i = 0; i < n; ++i) {
        const float x = input[i], t = target[i];
        const float log_sigmoid = (x < 0.0f ? x : 0.0f) - log1pf(expf(-fabsf(x)));
        total = put_term(loss, i, (1.0f - t) * x - log_sigmoid, total, reduction);
    }
    put_reduced(loss, total, n, reduction);
}

void adir_mse_grad(const float *input, const float *target, const float *dloss, float *dx,
                   size_t n, int reduction)
{
    /* 2 / n rounded once, as PyTorch's norm. */
    const float norm = reduction == ADIR_REDUCTION_MEAN ? (float)(2.0 / (double)n) : 2.0f;
    size_t i;
    for (i = 0; i < n; ++i) {
        dx[i] = norm * (input[i] - target[i]) * term_adjoint(dloss, i, reduction);
    }
}

void adir_bce_grad(const float *input, const float *target, const float *dloss, float *dx,
                   size_t n, int reduction)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        const float x = input[i], t = target[i];
        float weight = (1.0f - x) * x, grad = NAN;
        if (is_probability(x) && is_probability(t)) {
            weight = weight < bce_grad_epsilon ? bce_grad_epsilon : weight;
            grad = term_adjoint(dloss, i, reduction) * (x - t) / weight;
            if (reduction == ADIR_REDUCTION_MEAN) {
                grad /= (float)n;
            }
        }
        dx[i] = grad;
    }
}

void adir_bce_with_logits_grad(const float *input, const float *target, const float *dloss,
                               float *dx, size_t n, int reduction)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        float grad = (sigmoid_of(input[i]) - target[i]) * term_adjoint(dloss, i, reduction);
        if (reduction == ADIR_REDUCTION_MEAN) {
            grad /= (float)n;
        }
        dx[i] = grad;
    }
}

/* -- classification losses ----------------------------------------------------------------- */

/* The class index of sample n, or -1 if it is outside [0, classes). */
static int32_t class_of(const int32_t *t32, const int64_t *t64, int32_t n, int32_t classes)
{
    const int64_t label = t32 != NULL ? (int64_t)t32[n] : t64[n];
    return label >= 0 && label < (int64_t)classes ? (int32_t)label : -1;
}

/* One row's log-softmax normaliser: its max m and log(sum exp(x - m)). */
static void log_softmax_terms(const float *x, int32_t classes, float *max, float *log_sum)
{
    float m = -INFINITY, sum = 0.0f;
    int32_t c;
    for (c = 0; c < classes; ++c) {
        m = x[c] > m ? x[c] : m;
    }
    for (c = 0; c < classes; ++c) {
        sum += expf(x[c] - m);
    }
    *max = m;
    *log_sum = logf(sum);
}

/* nll of log-probabilities (from_logits = 0) or of the log-softmax of logits (1). */
static void classification_loss(const float *input, const int32_t *t32, const int64_t *t64,
                                const float *probs, float *loss, int32_t batch, int32_t classes,
                                int reduction, int from_logits)
{
    float total = 0.0f;
    int32_t n, c;
    for (n = 0; n < batch; ++n) {
        const float *x = input + (size_t)n * (size_t)classes;
        float m = 0.0f, log_sum = 0.0f, term = 0.0f;
        if (from_logits) {
            log_softmax_terms(x, classes, &m, &log_sum);
        }
        if (probs != NULL) {
            const float *p = probs + (size_t)n * (size_t)classes;
            for (c = 0; c < classes; ++c) {
                term += p[c] * (from_logits ? (x[c] - m) - log_sum : x[c]);
            }
            term = -term;
        } else {
            const int32_t label = class_of(t32, t64, n, classes);
            if (label < 0) {
                term = NAN;
            } else {
                term = -(from_logits ? (x[label] - m) - log_sum : x[label]);
            }
        }
        total = put_term(loss, (size_t)n, term, total, reduction);
    }
    put_reduced(loss, total, (size_t)batch, reduction);
}

/* The adjoint of nll's input (from_logits = 0), or of cross_entropy's: nll's, g, followed by
 * the log-softmax backward g - exp(log_softmax(x)) * sum g. */
static void classification_grad(const float *input, const int32_t *t32, const int64_t *t64,
                                const float *probs, const float *dloss, float *dx,
                                int32_t batch, int32_t classes, int reduction, int from_logits)
{
    int32_t n, c;
    for (n = 0; n < batch; ++n) {
        const float *x = input + (size_t)n * (size_t)classes;
        float *g = dx + (size_t)n * (size_t)classes;
        float s = term_adjoint(dloss, (size_t)n, reduction);
        float m, log_sum, g_sum = 0.0f;
        if (reduction == ADIR_REDUCTION_MEAN) {
            s /= (float)batch;
        }
        s = -s;
        if (probs != NULL) {
            const float *p = probs + (size_t)n * (size_t)classes;
            for (c = 0; c < classes; ++c) {
                g[c] = p[c] * s;
            }
        } else {
            const int32_t label = class_of(t32, t64, n, classes);
            for (c = 0; c < classes; ++c) {
                g[c] = label < 0 ? NAN : 0.0f;
            }
            if (label < 0) {
                continue;
            }
            g[label] = s;
        }
        if (!from_logits) {
            continue;
        }
        for (c = 0; c < classes; ++c) {
            g_sum += g[c];
        }
        log_softmax_terms(x, classes, &m, &log_sum);
        for (c = 0; c < classes; ++c) {
            g[c] -= expf((x[c] - m) - log_sum) * g_sum;
        }
    }
}

void adir_nll_i32(const float *input, const int32_t *target, float *loss, int32_t batch,
                  int32_t classes, int reduction)
{
    classification_loss(input, target, NULL, NULL, loss, batch, classes, reduction, 0);
}

void adir_nll_i64(const float *input, const int64_t *target, float *loss, int32_t batch,
                  int32_t classes, int reduction)
{
    classification_loss(input, NULL, target, NULL, loss, batch, classes, reduction, 0);
}

void adir_nll_probs(const float *input, const float *target, float *loss, int32_t batch,
                    int32_t classes, int reduction)
{
    classification_loss(input, NULL, NULL, target, loss, batch, classes, reduction, 0);
}

void adir_cross_entropy_i32(const float *input, const int32_t *target, float *loss,
                            int32_t batch, int32_t classes, int reduction)
{
    classification_loss(input, target, NULL, NULL, loss, batch, classes, reduction, 1);
}

void adir_cross_entropy_i64(const float *input, const int64_t *target, float *loss,
                            int32_t batch, int32_t classes, int reduction)
{
    classification_loss(input, NULL, target, NULL, loss, batch, classes, reduction, 1);
}

void adir_cross_entropy_probs(const float *input, const float *target, float *loss,
                              int32_t batch, int32_t classes, int reduction)
{
    classification_loss(input, NULL, NULL, target, loss, batch, classes, reduction, 1);
}

void adir_nll_grad_i32(const float *input, const int32_t *target, const float *dloss,
                       float *dx, int32_t batch, int32_t classes, int reduction)
{
    classification_grad(input, target, NULL, NULL, dloss, dx, batch, classes, reduction, 0);
}

void adir_nll_grad_i64(const float *input, const int64_t *target, const float *dloss,
                       float *dx, int32_t batch, int32_t classes, int reduction)
{
    classification_grad(input, NULL, target, NULL, dloss, dx, batch, classes, reduction, 0);
}

void adir_nll_grad_probs(const float *input, const float *target, const float *dloss,
                         float *dx, int32_t batch, int32_t classes, int reduction)
{
    classification_grad(input, NULL, NULL, target, dloss, dx, batch, classes, reduction, 0);
}

void adir_cross_entropy_grad_i32(const float *input, const int32_t *target, const float *dloss,
                                 float *dx, int32_t batch, int32_t classes, int reduction)
{
    classification_grad(input, target, NULL, NULL, dloss, dx, batch, classes, reduction, 1);
}

void adir_cross_entropy_grad_i64(const float *input, const int64_t *target, const float *dloss,
                                 float *dx, int32_t batch, int32_t classes, int reduction)
{
    classification_grad(input, NULL, target, NULL, dloss, dx, batch, classes, reduction, 1);
}

void adir_cross_entropy_grad_probs(const float *input, const float *target, const float *dloss,
                                   float *dx, int32_t batch, int32_t classes, int reduction)
{
    classification_grad(input, NULL, NULL, target, dloss, dx, batch, classes, reduction, 1);
}
