/* adir_normalization.c: the reference kernels of the normalization family (declared in
 * adir_normalization.h). */
#include <math.h>

#include "adir_init.h"
#include "adir_kernels.h"

/* Where the values of channel c in sample i start: `spatial` contiguous floats. */
static size_t adir_channel_row(int32_t i, int32_t c, int32_t channels, int32_t spatial)
{
    return ((size_t)i * (size_t)channels + (size_t)c) * (size_t)spatial;
}

/* The terms a batchnorm sums over a row: x, (x - centre)^2, g or g * (x - centre), where g
 * is dy or, after a relu (adir_batchnorm_relu_grad), the relu's gradient. */
enum adir_bn_term { ADIR_BN_X, ADIR_BN_SQUARE, ADIR_BN_G, ADIR_BN_G_DEVIATION };

/* adir_relu_grad's select on the forward's affine value y = (x - centre) * scale + beta,
 * recomputed by adir_channel_affine's expression (relu(y) <= 0 exactly where y <= 0). */
struct adir_bn_relu {
    float centre, scale, beta;
};

static float adir_relu_masked(float x, const struct adir_bn_relu *relu, float dy)
{
    return (x - relu->centre) * relu->scale + relu->beta <= 0.0f ? 0.0f : dy;
}

/* The sums below are inlined where they are called, each with its term a constant: gcc -O2
 * otherwise tested the term's kind at every element and kept the eight sums in memory (on the
 * Cortex-M4F, DS-CNN's batchnorm_relu 349,300 instructions a call against 197,800 for the
 * running sum before them). */
#if defined(__GNUC__)
#define ADIR_BN_INLINE __inline__ __attribute__((always_inline))
#else
#define ADIR_BN_INLINE
#endif

/* Term s of a row (relu NULL: g = dy). */
static ADIR_BN_INLINE float adir_bn_term(enum adir_bn_term term, const float *x,
                                         const float *dy, float centre,
                                         const struct adir_bn_relu *relu, size_t s)
{
    float g;
    if (term == ADIR_BN_X) {
        return x[s];
    }
    if (term == ADIR_BN_SQUARE) {
        const float d = x[s] - centre;
        return d * d;
    }
    g = relu != NULL ? adir_relu_masked(x[s], relu, dy[s]) : dy[s];
    return term == ADIR_BN_G ? g : g * (x[s] - centre);
}

/* The sum of a row's n terms in adir_row_sum's order (reference/adir_row_sum.h): eight
 * interleaved partial sums, added pairwise, then the rest of the row in order. It is numpy's
 * pairwise sum of a row of up to 128, and where one running sum is a chain of n dependent
 * adds, the eight sums are one 8-float vector in the tuned kernels. Eight variables, not an
 * array, as adir_row_sum's. */
static ADIR_BN_INLINE float adir_bn_row_sum(enum adir_bn_term term, const float *x,
                                            const float *dy, float centre,
                                            const struct adir_bn_relu *relu, size_t n)
{
    float sum = 0.0f;
    size_t s = 0;
    if (n >= 8) {
        float r0 = adir_bn_term(term, x, dy, centre, relu, 0);
        float r1 = adir_bn_term(term, x, dy, centre, relu, 1);
        float r2 = adir_bn_term(term, x, dy, centre, relu, 2);
        float r3 = adir_bn_term(term, x, dy, centre, relu, 3);
        float r4 = adir_bn_term(term, x, dy, centre, relu, 4);
        float r5 = adir_bn_term(term, x, dy, centre, relu, 5);
        float r6 = adir_bn_term(term, x, dy, centre, relu, 6);
        float r7 = adir_bn_term(term, x, dy, centre, relu, 7);
        for (s = 8; s + 8 <= n; s += 8) {
            r0 += adir_bn_term(term, x, dy, centre, relu, s);
            r1 += adir_bn_term(term, x, dy, centre, relu, s + 1);
            r2 += adir_bn_term(term, x, dy, centre, relu, s + 2);
            r3 += adir_bn_term(term, x, dy, centre, relu, s + 3);
            r4 += adir_bn_term(term, x, dy, centre, relu, s + 4);
            r5 += adir_bn_term(term, x, dy, centre, relu, s + 5);
            r6 += adir_bn_term(term, x, dy, centre, relu, s + 6);
            r7 += adir_bn_term(term, x, dy, centre, relu, s + 7);
        }
        sum = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    }
    for (; s < n; ++s) {
        sum += adir_bn_term(term, x, dy, centre, relu, s);
    }
    return sum;
}

/* The sum of a term over channel c: a sum per sample (adir_bn_row_sum), then the sum of
 * those in sample order. */
static ADIR_BN_INLINE float adir_channel_sum(enum adir_bn_term term, const float *x,
                                             const float *dy, float centre,
                                             const struct adir_bn_relu *relu, int32_t batch,
                                             int32_t channels, int32_t spatial, int32_t c)
{
    float total = 0.0f;
    int32_t i;
    for (i = 0; i < batch; ++i) {
        const size_t at = adir_channel_row(i, c, channels, spatial);
        total += adir_bn_row_sum(term, x + at, dy != NULL ? dy + at : NULL, centre, relu,
                                 (size_t)spatial);
    }
    return total;
}

/* y = (x - centre) * scale + beta over channel c. Not x * scale + (beta - centre * scale),
 * PyTorch's form: where y is near 0 the two products of that form nearly cancel, and their
 * rounding (of |x * scale|, about 1e-7 a unit) decides which side of a following relu's 0 y
 * falls on; x - centre is exact there (Sterbenz), so y's side is (x - centre)'s, at beta 0.
 * MLPerf Tiny's DS-CNN at batch 1 has such a point at step 0: -6.9e-7 in float64, and the
 * C with the first form +6.0e-8. */
static void adir_channel_affine(const float *x, float *y, int32_t batch, int32_t channels,
                                int32_t spatial, int32_t c, float centre, float scale,
                                float beta)
{
    int32_t i, s;
    for (i = 0; i < batch; ++i) {
        const float *row = x + adir_channel_row(i, c, channels, spatial);
        float *out = y + adir_channel_row(i, c, channels, spatial);
        for (s = 0; s < spatial; ++s) {
            out[s] = (row[s] - centre) * scale + beta;
        }
    }
}

void adir_batchnorm(const float *x, const float *gamma, const float *beta,
                    const float *running_mean, const float *running_var, float *y,
                    float *batch_mean, float *batch_invstd, float *new_running_mean,
                    float *new_running_var, int32_t batch, int32_t channels, int32_t spatial,
                    float momentum, float eps)
{
    const size_t count = (size_t)batch * (size_t)spatial;
    const float m = (float)count;
    const float keep = 1.0f - momentum;
    int32_t c;
    for (c = 0; c < channels; ++c) {
        const float mean =
            adir_channel_sum(ADIR_BN_X, x, NULL, 0.0f, NULL, batch, channels, spatial, c) / m;
        const float squares =
            adir_channel_sum(ADIR_BN_SQUARE, x, NULL, mean, NULL, batch, channels, spatial, c);
        float invstd, unbiased, scale;
        invstd = 1.0f / sqrtf(squares / m + eps);
        unbiased = squares / (float)(count - 1u);
        batch_mean[c] = mean;
        batch_invstd[c] = invstd;
        /* new_running_mean may be running_mean (and the variances too): bufferize writes the
         * new statistics over the old ones, channel c read just before it is written. */
        new_running_mean[c] = momentum * mean + keep * running_mean[c];
        new_running_var[c] = momentum * unbiased + keep * running_var[c];
        scale = gamma[c] * invstd;
        adir_channel_affine(x, y, batch, channels, spatial, c, mean, scale, beta[c]);
    }
}

void adir_batchnorm_eval(const float *x, const float *gamma, const float *beta,
                         const float *running_mean, const float *running_var, float *y,
                         int32_t batch, int32_t channels, int32_t spatial, float eps)
{
    int32_t c;
    for (c = 0; c < channels; ++c) {
        const float invstd = 1.0f / sqrtf(running_var[c] + eps);
        const float scale = gamma[c] * invstd;
        adir_channel_affine(x, y, batch, channels, spatial, c, running_mean[c], scale, beta[c]);
    }
}

/* adir_batchnorm_grad, or with relu adir_batchnorm_relu_grad: g is dy, or the relu's
 * gradient made where it is read (so never stored). */
static void adir_batchnorm_grad_of(const float *x, const float *gamma, const float *beta,
                                   const float *mean, const float *invstd, const float *dy,
                                   float *x_grad, float *gamma_grad, float *beta_grad,
                                   int32_t batch, int32_t channels, int32_t spatial)
{
    const float m = (float)((size_t)batch * (size_t)spatial);
    int32_t c, i, s;
    for (c = 0; c < channels; ++c) {
        const float centre = mean[c];
        const float factor = gamma[c] * invstd[c];
        /* the forward's affine terms, by its expressions */
        const struct adir_bn_relu affine = {centre, factor, beta != NULL ? beta[c] : 0.0f};
        const struct adir_bn_relu *relu = beta != NULL ? &affine : NULL;
        const float dbeta =
            adir_channel_sum(ADIR_BN_G, x, dy, centre, relu, batch, channels, spatial, c);
        const float dot = adir_channel_sum(ADIR_BN_G_DEVIATION, x, dy, centre, relu, batch,
                                           channels, spatial, c);
        const float projection = dot * invstd[c] * invstd[c] / m;
        const float mean_dy = dbeta / m;
        for (i = 0; i < batch; ++i) {
            const size_t at = adir_channel_row(i, c, channels, spatial);
            const float *x_row = x + at;
            const float *dy_row = dy + at;
            float *dx_row = x_grad + at;
            for (s = 0; s < spatial; ++s) {
                const float d = x_row[s] - centre;
                const float g = relu != NULL ? adir_relu_masked(x_row[s], relu, dy_row[s])
                                             : dy_row[s];
                dx_row[s] = (g - mean_dy - d * projection) * factor;
            }
        }
        gamma_grad[c] = dot * invstd[c];
        beta_grad[c] = dbeta;
    }
}

void adir_batchnorm_grad(const float *x, const float *gamma, const float *mean,
                         const float *invstd, const float *dy, float *x_grad, float *gamma_grad,
                         float *beta_grad, int32_t batch, int32_t channels, int32_t spatial)
{
    adir_batchnorm_grad_of(x, gamma, NULL, mean, invstd, dy, x_grad, gamma_grad, beta_grad,
                           batch, channels, spatial);
}

void adir_layer_norm(const float *x, const float *weight, const float *bias, float *y,
                     float *mean, float *rstd, int32_t rows, int32_t cols, float eps)
{
    int32_t r, j;
    for (r = 0; r < rows; ++r) {
        const float *in = x + (size_t)r * (size_t)cols;
        float *out = y + (size_t)r * (size_t)cols;
        float sum = 0.0f, squares = 0.0f, centre, inv, shift;
        for (j = 0; j < cols; ++j) {
            sum += in[j];
        }
        centre = sum / (float)cols;
        for (j = 0; j < cols; ++j) {
            const float d = in[j] - centre;
            squares += d * d;
        }
        inv = 1.0f / sqrtf(squares / (float)cols + eps);
        shift = -centre * inv;
        mean[r] = centre;
        rstd[r] = inv;
        /* The row's statistics are known: y may now overwrite x (in place), element by
         * element. */
        for (j = 0; j < cols; ++j) {
            float v = in[j] * inv + shift;
            if (weight != NULL) {
                v *= weight[j];
            }
            if (bias != NULL) {
                v += bias[j];
            }
            out[j] = v;
        }
    }
}

void adir_layer_norm_grad(const float *x, const float *mean, const float *rstd, const float *dy,
                          const float *weight, float *x_grad, float *weight_grad,
                          float *bias_grad, int32_t rows, int32_t cols)
{
    const float scale = 1.0f / (float)cols;
    int32_t r, j;
    for (j = 0; j < cols; ++j) {
        weight_grad[j] = 0.0f;
        bias_grad[j] = 0.0f;
    }
    for (r = 0; r < rows; ++r) {
        const float *in = x + (size_t)r * (size_t)cols;
        const float *g = dy + (size_t)r * (size_t)cols;
        float *out = x_grad + (size_t)r * (size_t)cols;
        const float a = rstd[r], centre = mean[r];
        float dot = 0.0f, db = 0.0f, b, c;
        for (j = 0; j < cols; ++j) {
            const float gamma = weight != NULL ? weight[j] : 1.0f;
            weight_grad[j] += g[j] * (in[j] * a + (-a * centre));
            bias_grad[j] += g[j];
            dot += g[j] * gamma * (in[j] - centre);
            db += g[j] * gamma;
        }
        b = -dot * a * a * a * scale;
        c = db * a * scale;
        /* The row of dy and x is read: x_grad may now overwrite either (in place). */
        for (j = 0; j < cols; ++j) {
            const float gamma = weight != NULL ? weight[j] : 1.0f;
            out[j] = a * g[j] * gamma + b * (in[j] - centre) - c;
        }
    }
}

void adir_dropout(const float *x, float *y, size_t n, uint64_t counter, uint64_t seed, float p)
{
    const uint64_t stream = adir_prng_u64(seed, counter);
    /* A uniform is below 1, so p = 1 keeps nothing: y = x * 0, nan for nan and inf as in the
     * interpreter. */
    const float scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    size_t i;
    for (i = 0; i < n; ++i) {
        const float kept = adir_prng_uniform(stream, (uint64_t)i) >= p ? scale : 0.0f;
        y[i] = x[i] * kept;
    }
}

/* adir.batchnorm_relu: adir_batchnorm, then adir_relu over its output in place; literally the
 * two kernels, so the same bits (the tuned kernels do it in one pass). */
void adir_batchnorm_relu(const float *x, const float *gamma, const float *beta,
                         const float *running_mean, const float *running_var, float *y,
                         float *batch_mean, float *batch_invstd, float *new_running_mean,
                         float *new_running_var, int32_t batch, int32_t channels,
                         int32_t spatial, float momentum, float eps)
{
    adir_batchnorm(x, gamma, beta, running_mean, running_var, y, batch_mean, batch_invstd,
                   new_running_mean, new_running_var, batch, channels, spatial, momentum, eps);
    adir_relu(y, y, (size_t)batch * (size_t)channels * (size_t)spatial);
}

/* adir.batchnorm_relu_grad: adir_batchnorm_grad of the relu's gradient, each element of that
 * gradient made where adir_batchnorm_grad reads it: the same sums in the same order as
 * adir_relu_grad then adir_batchnorm_grad. */
void adir_batchnorm_relu_grad(const float *x, const float *gamma, const float *beta,
                              const float *mean, const float *invstd, const float *dy,
                              float *x_grad, float *gamma_grad, float *beta_grad, int32_t batch,
                              int32_t channels, int32_t spatial)
{
    adir_batchnorm_grad_of(x, gamma, beta, mean, invstd, dy, x_grad, gamma_grad, beta_grad,
                           batch, channels, spatial);
}
