/* adir_tuned_batchnorm.c: batchnorm's training forward pass and its gradient for a scalar core,
 * alone or fused with the relu after it (adir_tuned_batchnorm, adir_tuned_batchnorm_grad,
 * adir_tuned_batchnorm_relu, adir_tuned_batchnorm_relu_grad; their references: adir_batchnorm,
 * adir_batchnorm_grad, adir_batchnorm_relu and adir_batchnorm_relu_grad in
 * reference/adir_normalization.c; select-kernels chooses them on the Cortex-M4F and M7).
 *
 * The same operations in the same order as the references, so bit for bit their results: each
 * row's sum in adir_row_sum's order (eight interleaved partial sums from the row's first eight
 * terms, added pairwise, then the rest of the row in order; a row under eight a running sum
 * from 0; sum(x) is adir_row_sum itself), the rows' sums added in sample order, each term
 * computed by the same expression.
 * The eight partial sums are eight named variables, which gcc -O2 keeps in S registers (an
 * array's it keeps in memory). A product is added to its sum in a statement of its own, as the
 * reference adds a term computed apart: clang contracts `r += a * b` into a fused
 * multiply-add where the target has one (its -ffp-contract=on), one rounding where the
 * reference has two. What differs from the references is the loops: the sums' eight
 * terms a turn, the elementwise passes' four (a loop's counter, test and branch cost as much
 * as an element's add on the M4F), the gradient's two sums (sum(g) and sum(g * (x - mean)))
 * in one pass over the row instead of two, and the relu's select inside the passes. The
 * gradient's 16 partial sums, the centre and a turn's temporaries fit the M4F's 32 S
 * registers: no spill in arm-none-eabi-gcc -O2's loops, which take 52 instructions for 8
 * pixels (16 loads, 8 subtracts, 8 multiplies, 16 adds, 4 integer), with the relu 107. */
#include <math.h>

#include "adir_tuned.h"
/* after adir_tuned.h, whose target pragmas come before every include */
#include "adir_row_sum.h"

/* Where the values of channel c in sample i start: `spatial` contiguous floats. */
static size_t bn_row(int32_t i, int32_t c, int32_t channels, int32_t spatial)
{
    return ((size_t)i * (size_t)channels + (size_t)c) * (size_t)spatial;
}

/* sum((row[s] - mean)^2) in adir_row_sum's order. */
static float bn_squares(const float *row, int32_t n, float mean)
{
    float sum = 0.0f;
    int32_t s = 0;
    if (n >= 8) {
        const float d0 = row[0] - mean, d1 = row[1] - mean, d2 = row[2] - mean;
        const float d3 = row[3] - mean, d4 = row[4] - mean, d5 = row[5] - mean;
        const float d6 = row[6] - mean, d7 = row[7] - mean;
        float r0 = d0 * d0, r1 = d1 * d1, r2 = d2 * d2, r3 = d3 * d3;
        float r4 = d4 * d4, r5 = d5 * d5, r6 = d6 * d6, r7 = d7 * d7;
        for (s = 8; s + 8 <= n; s += 8) {
            const float e0 = row[s] - mean, e1 = row[s + 1] - mean;
            const float e2 = row[s + 2] - mean, e3 = row[s + 3] - mean;
            const float e4 = row[s + 4] - mean, e5 = row[s + 5] - mean;
            const float e6 = row[s + 6] - mean, e7 = row[s + 7] - mean;
            const float q0 = e0 * e0, q1 = e1 * e1, q2 = e2 * e2, q3 = e3 * e3;
            const float q4 = e4 * e4, q5 = e5 * e5, q6 = e6 * e6, q7 = e7 * e7;
            r0 += q0;
            r1 += q1;
            r2 += q2;
            r3 += q3;
            r4 += q4;
            r5 += q5;
            r6 += q6;
            r7 += q7;
        }
        sum = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    }
    for (; s < n; ++s) {
        const float d = row[s] - mean, q = d * d;
        sum += q;
    }
    return sum;
}

/* out = (row - centre) * scale + beta, or with `relu` adir_relu's `v < 0 ? 0 : v` of it (out
 * may be row: each element is read before it is written). */
static ADIR_INLINE void bn_affine(const float *row, float *out, int32_t n, float centre,
                                  float scale, float beta, int relu)
{
    int32_t s = 0;
    for (; s + 4 <= n; s += 4) {
        const float v0 = (row[s] - centre) * scale + beta;
        const float v1 = (row[s + 1] - centre) * scale + beta;
        const float v2 = (row[s + 2] - centre) * scale + beta;
        const float v3 = (row[s + 3] - centre) * scale + beta;
        out[s] = relu && v0 < 0.0f ? 0.0f : v0;
        out[s + 1] = relu && v1 < 0.0f ? 0.0f : v1;
        out[s + 2] = relu && v2 < 0.0f ? 0.0f : v2;
        out[s + 3] = relu && v3 < 0.0f ? 0.0f : v3;
    }
    for (; s < n; ++s) {
        const float v = (row[s] - centre) * scale + beta;
        out[s] = relu && v < 0.0f ? 0.0f : v;
    }
}

/* adir_tuned_batchnorm, or with `relu` adir_tuned_batchnorm_relu. */
static ADIR_INLINE void bn_forward_scalar(const float *x, const float *gamma,
                                          const float *beta, const float *running_mean,
                                          const float *running_var, float *y, float *batch_mean,
                                          float *batch_invstd, float *new_running_mean,
                                          float *new_running_var, int32_t batch,
                                          int32_t channels, int32_t spatial, float momentum,
                                          float eps, int relu)
{
    const size_t count = (size_t)batch * (size_t)spatial;
    const float m = (float)count;
    const float keep = 1.0f - momentum;
    int32_t c, i;
    for (c = 0; c < channels; ++c) {
        float total = 0.0f, squares = 0.0f, mean, invstd, unbiased, scale;
        for (i = 0; i < batch; ++i) {
            total += adir_row_sum(x + bn_row(i, c, channels, spatial), (size_t)spatial);
        }
        mean = total / m;
        for (i = 0; i < batch; ++i) {
            squares += bn_squares(x + bn_row(i, c, channels, spatial), spatial, mean);
        }
        invstd = 1.0f / sqrtf(squares / m + eps);
        unbiased = squares / (float)(count - 1u);
        batch_mean[c] = mean;
        batch_invstd[c] = invstd;
        /* The running statistics may be updated in place: channel c read just before it is
         * written. */
        new_running_mean[c] = momentum * mean + keep * running_mean[c];
        new_running_var[c] = momentum * unbiased + keep * running_var[c];
        scale = gamma[c] * invstd;
        for (i = 0; i < batch; ++i) {
            const size_t at = bn_row(i, c, channels, spatial);
            bn_affine(x + at, y + at, spatial, mean, scale, beta[c], relu);
        }
    }
}

void adir_tuned_batchnorm(const float *x, const float *gamma, const float *beta,
                          const float *running_mean, const float *running_var, float *y,
                          float *batch_mean, float *batch_invstd, float *new_running_mean,
                          float *new_running_var, int32_t batch, int32_t channels,
                          int32_t spatial, float momentum, float eps)
{
    bn_forward_scalar(x, gamma, beta, running_mean, running_var, y, batch_mean, batch_invstd,
                      new_running_mean, new_running_var, batch, channels, spatial, momentum, eps,
                      0);
}

void adir_tuned_batchnorm_relu(const float *x, const float *gamma, const float *beta,
                               const float *running_mean, const float *running_var, float *y,
                               float *batch_mean, float *batch_invstd, float *new_running_mean,
                               float *new_running_var, int32_t batch, int32_t channels,
                               int32_t spatial, float momentum, float eps)
{
    bn_forward_scalar(x, gamma, beta, running_mean, running_var, y, batch_mean, batch_invstd,
                      new_running_mean, new_running_var, batch, channels, spatial, momentum, eps,
                      1);
}

/* A relu after the batchnorm (adir_batchnorm_relu_grad): the channel's affine value
 * y = (x - centre) * scale + beta, by the forward pass's expression, is what the relu saw. */
struct bn_scalar_relu {
    int on;
    float centre, scale, beta;
};

/* The gradient g the batchnorm's sums and dx read: dy, or with the relu on adir_relu_grad's
 * `y <= 0 ? 0 : dy` (relu(y) <= 0 exactly where y <= 0). */
static ADIR_INLINE float bn_masked_dy(float x, float dy, struct bn_scalar_relu relu)
{
    return relu.on && (x - relu.centre) * relu.scale + relu.beta <= 0.0f ? 0.0f : dy;
}

/* *dbeta += sum(g), *dot += sum(g * (x_row - centre)): the two sums in one pass, each in
 * adir_row_sum's order as the reference's two passes add them. */
static ADIR_INLINE void bn_grad_sums(const float *x_row, const float *dy_row, int32_t n,
                                     float centre, struct bn_scalar_relu relu, float *dbeta,
                                     float *dot)
{
    float sum = 0.0f, product = 0.0f;
    int32_t s = 0;
    if (n >= 8) {
        const float g0 = bn_masked_dy(x_row[0], dy_row[0], relu);
        const float g1 = bn_masked_dy(x_row[1], dy_row[1], relu);
        const float g2 = bn_masked_dy(x_row[2], dy_row[2], relu);
        const float g3 = bn_masked_dy(x_row[3], dy_row[3], relu);
        const float g4 = bn_masked_dy(x_row[4], dy_row[4], relu);
        const float g5 = bn_masked_dy(x_row[5], dy_row[5], relu);
        const float g6 = bn_masked_dy(x_row[6], dy_row[6], relu);
        const float g7 = bn_masked_dy(x_row[7], dy_row[7], relu);
        float b0 = g0, b1 = g1, b2 = g2, b3 = g3, b4 = g4, b5 = g5, b6 = g6, b7 = g7;
        float p0 = g0 * (x_row[0] - centre), p1 = g1 * (x_row[1] - centre);
        float p2 = g2 * (x_row[2] - centre), p3 = g3 * (x_row[3] - centre);
        float p4 = g4 * (x_row[4] - centre), p5 = g5 * (x_row[5] - centre);
        float p6 = g6 * (x_row[6] - centre), p7 = g7 * (x_row[7] - centre);
        for (s = 8; s + 8 <= n; s += 8) {
            const float *x = x_row + s, *dy = dy_row + s;
            float h = bn_masked_dy(x[0], dy[0], relu), t;
            t = h * (x[0] - centre);
            b0 += h;
            p0 += t;
            h = bn_masked_dy(x[1], dy[1], relu);
            t = h * (x[1] - centre);
            b1 += h;
            p1 += t;
            h = bn_masked_dy(x[2], dy[2], relu);
            t = h * (x[2] - centre);
            b2 += h;
            p2 += t;
            h = bn_masked_dy(x[3], dy[3], relu);
            t = h * (x[3] - centre);
            b3 += h;
            p3 += t;
            h = bn_masked_dy(x[4], dy[4], relu);
            t = h * (x[4] - centre);
            b4 += h;
            p4 += t;
            h = bn_masked_dy(x[5], dy[5], relu);
            t = h * (x[5] - centre);
            b5 += h;
            p5 += t;
            h = bn_masked_dy(x[6], dy[6], relu);
            t = h * (x[6] - centre);
            b6 += h;
            p6 += t;
            h = bn_masked_dy(x[7], dy[7], relu);
            t = h * (x[7] - centre);
            b7 += h;
            p7 += t;
        }
        sum = ((b0 + b1) + (b2 + b3)) + ((b4 + b5) + (b6 + b7));
        product = ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7));
    }
    for (; s < n; ++s) {
        const float g = bn_masked_dy(x_row[s], dy_row[s], relu), t = g * (x_row[s] - centre);
        sum += g;
        product += t;
    }
    *dbeta += sum;
    *dot += product;
}

/* dx_row = (g - mean_dy - (x_row - centre) * projection) * factor. */
static ADIR_INLINE void bn_grad_input(const float *x_row, const float *dy_row, float *dx_row,
                                      int32_t n, float centre, struct bn_scalar_relu relu,
                                      float mean_dy, float projection, float factor)
{
    int32_t s = 0;
    for (; s + 4 <= n; s += 4) {
        const float d0 = x_row[s] - centre, d1 = x_row[s + 1] - centre;
        const float d2 = x_row[s + 2] - centre, d3 = x_row[s + 3] - centre;
        const float g0 = bn_masked_dy(x_row[s], dy_row[s], relu);
        const float g1 = bn_masked_dy(x_row[s + 1], dy_row[s + 1], relu);
        const float g2 = bn_masked_dy(x_row[s + 2], dy_row[s + 2], relu);
        const float g3 = bn_masked_dy(x_row[s + 3], dy_row[s + 3], relu);
        dx_row[s] = (g0 - mean_dy - d0 * projection) * factor;
        dx_row[s + 1] = (g1 - mean_dy - d1 * projection) * factor;
        dx_row[s + 2] = (g2 - mean_dy - d2 * projection) * factor;
        dx_row[s + 3] = (g3 - mean_dy - d3 * projection) * factor;
    }
    for (; s < n; ++s) {
        const float d = x_row[s] - centre;
        dx_row[s] = (bn_masked_dy(x_row[s], dy_row[s], relu) - mean_dy - d * projection) * factor;
    }
}

/* adir_tuned_batchnorm_grad, or with `fused` adir_tuned_batchnorm_relu_grad: the relu's
 * gradient made where it is read, so never stored. */
static ADIR_INLINE void bn_grad_scalar(const float *x, const float *gamma, const float *beta,
                                       const float *mean, const float *invstd, const float *dy,
                                       float *x_grad, float *gamma_grad, float *beta_grad,
                                       int32_t batch, int32_t channels, int32_t spatial,
                                       int fused)
{
    const float m = (float)((size_t)batch * (size_t)spatial);
    int32_t c, i;
    for (c = 0; c < channels; ++c) {
        const float centre = mean[c];
        const float factor = gamma[c] * invstd[c];
        /* the forward's affine terms, by its expressions */
        const struct bn_scalar_relu relu = {fused, centre, factor, fused ? beta[c] : 0.0f};
        float dbeta = 0.0f, dot = 0.0f, projection, mean_dy;
        for (i = 0; i < batch; ++i) {
            const size_t at = bn_row(i, c, channels, spatial);
            bn_grad_sums(x + at, dy + at, spatial, centre, relu, &dbeta, &dot);
        }
        projection = dot * invstd[c] * invstd[c] / m;
        mean_dy = dbeta / m;
        for (i = 0; i < batch; ++i) {
            const size_t at = bn_row(i, c, channels, spatial);
            bn_grad_input(x + at, dy + at, x_grad + at, spatial, centre, relu, mean_dy,
                          projection, factor);
        }
        gamma_grad[c] = dot * invstd[c];
        beta_grad[c] = dbeta;
    }
}

void adir_tuned_batchnorm_grad(const float *x, const float *gamma, const float *mean,
                               const float *invstd, const float *dy, float *x_grad,
                               float *gamma_grad, float *beta_grad, int32_t batch,
                               int32_t channels, int32_t spatial)
{
    bn_grad_scalar(x, gamma, NULL, mean, invstd, dy, x_grad, gamma_grad, beta_grad, batch,
                   channels, spatial, 0);
}

void adir_tuned_batchnorm_relu_grad(const float *x, const float *gamma, const float *beta,
                                    const float *mean, const float *invstd, const float *dy,
                                    float *x_grad, float *gamma_grad, float *beta_grad,
                                    int32_t batch, int32_t channels, int32_t spatial)
{
    bn_grad_scalar(x, gamma, beta, mean, invstd, dy, x_grad, gamma_grad, beta_grad, batch,
                   channels, spatial, 1);
}
