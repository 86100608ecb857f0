/* adir_tuned_batchnorm.c: batchnorm's training forward pass and its gradient for a scalar core
 * (adir_tuned_batchnorm, adir_tuned_batchnorm_grad; their references: adir_batchnorm and
 * adir_batchnorm_grad in reference/adir_normalization.c; select-kernels chooses them on the
 * Cortex-M4F and M7).
 *
 * The same operations in the same order as the references, so bit for bit their results: each
 * sum runs element after element (a partial sum per sample, then their total), each element is
 * computed by the same expression. What differs is the loops: four elements a turn (a loop's
 * counter, test and branch cost as much as an element's add on the M4F), and the gradient's
 * two sums (sum(dy) and sum(dy * (x - mean))) in one pass over the channel instead of two. */
#include <math.h>

#include "adir_tuned.h"

/* Where the values of channel c in sample i start: `spatial` contiguous floats. */
static size_t bn_row(int32_t i, int32_t c, int32_t channels, int32_t spatial)
{
    return ((size_t)i * (size_t)channels + (size_t)c) * (size_t)spatial;
}

/* sum(row[0 .. n)), element after element from 0. */
static float bn_sum(const float *row, int32_t n)
{
    float partial = 0.0f;
    int32_t s = 0;
    for (; s + 4 <= n; s += 4) {
        partial += row[s];
        partial += row[s + 1];
        partial += row[s + 2];
        partial += row[s + 3];
    }
    for (; s < n; ++s) {
        partial += row[s];
    }
    return partial;
}

/* sum((row[s] - mean)^2), element after element from 0. */
static float bn_squares(const float *row, int32_t n, float mean)
{
    float partial = 0.0f;
    int32_t s = 0;
    for (; s + 4 <= n; s += 4) {
        const float d0 = row[s] - mean, d1 = row[s + 1] - mean;
        const float d2 = row[s + 2] - mean, d3 = row[s + 3] - mean;
        partial += d0 * d0;
        partial += d1 * d1;
        partial += d2 * d2;
        partial += d3 * d3;
    }
    for (; s < n; ++s) {
        const float d = row[s] - mean;
        partial += d * d;
    }
    return partial;
}

/* out = row * scale + shift (out may be row: each element is read before it is written). */
static void bn_affine(const float *row, float *out, int32_t n, float scale, float shift)
{
    int32_t s = 0;
    for (; s + 4 <= n; s += 4) {
        const float v0 = row[s], v1 = row[s + 1], v2 = row[s + 2], v3 = row[s + 3];
        out[s] = v0 * scale + shift;
        out[s + 1] = v1 * scale + shift;
        out[s + 2] = v2 * scale + shift;
        out[s + 3] = v3 * scale + shift;
    }
    for (; s < n; ++s) {
        out[s] = row[s] * scale + shift;
    }
}

void adir_tuned_batchnorm(const float *x, const float *gamma, const float *beta,
                          const float *running_mean, const float *running_var, float *y,
                          float *batch_mean, float *batch_invstd, float *new_running_mean,
                          float *new_running_var, int32_t batch, int32_t channels,
                          int32_t spatial, float momentum, float eps)
{
    const size_t count = (size_t)batch * (size_t)spatial;
    const float m = (float)count;
    const float keep = 1.0f - momentum;
    int32_t c, i;
    for (c = 0; c < channels; ++c) {
        float total = 0.0f, squares = 0.0f, mean, invstd, unbiased, scale, shift;
        for (i = 0; i < batch; ++i) {
            total += bn_sum(x + bn_row(i, c, channels, spatial), spatial);
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
        shift = beta[c] - mean * scale;
        for (i = 0; i < batch; ++i) {
            const size_t at = bn_row(i, c, channels, spatial);
            bn_affine(x + at, y + at, spatial, scale, shift);
        }
    }
}

/* *dbeta += sum(dy_row), *dot += sum(dy_row * (x_row - centre)): two sums in one pass, each
 * element after element from 0 as the reference's two passes add them. */
static void bn_grad_sums(const float *x_row, const float *dy_row, int32_t n, float centre,
                         float *dbeta, float *dot)
{
    float sum = 0.0f, partial = 0.0f;
    int32_t s = 0;
    for (; s + 4 <= n; s += 4) {
        const float g0 = dy_row[s], g1 = dy_row[s + 1], g2 = dy_row[s + 2], g3 = dy_row[s + 3];
        const float d0 = x_row[s] - centre, d1 = x_row[s + 1] - centre;
        const float d2 = x_row[s + 2] - centre, d3 = x_row[s + 3] - centre;
        sum += g0;
        partial += g0 * d0;
        sum += g1;
        partial += g1 * d1;
        sum += g2;
        partial += g2 * d2;
        sum += g3;
        partial += g3 * d3;
    }
    for (; s < n; ++s) {
        const float d = x_row[s] - centre;
        sum += dy_row[s];
        partial += dy_row[s] * d;
    }
    *dbeta += sum;
    *dot += partial;
}

/* dx_row = (dy_row - mean_dy - (x_row - centre) * projection) * factor. */
static void bn_grad_input(const float *x_row, const float *dy_row, float *dx_row, int32_t n,
                          float centre, float mean_dy, float projection, float factor)
{
    int32_t s = 0;
    for (; s + 4 <= n; s += 4) {
        const float d0 = x_row[s] - centre, d1 = x_row[s + 1] - centre;
        const float d2 = x_row[s + 2] - centre, d3 = x_row[s + 3] - centre;
        const float g0 = dy_row[s], g1 = dy_row[s + 1], g2 = dy_row[s + 2], g3 = dy_row[s + 3];
        dx_row[s] = (g0 - mean_dy - d0 * projection) * factor;
        dx_row[s + 1] = (g1 - mean_dy - d1 * projection) * factor;
        dx_row[s + 2] = (g2 - mean_dy - d2 * projection) * factor;
        dx_row[s + 3] = (g3 - mean_dy - d3 * projection) * factor;
    }
    for (; s < n; ++s) {
        const float d = x_row[s] - centre;
        dx_row[s] = (dy_row[s] - mean_dy - d * projection) * factor;
    }
}

void adir_tuned_batchnorm_grad(const float *x, const float *gamma, const float *mean,
                               const float *invstd, const float *dy, float *x_grad,
                               float *gamma_grad, float *beta_grad, int32_t batch,
                               int32_t channels, int32_t spatial)
{
    const float m = (float)((size_t)batch * (size_t)spatial);
    int32_t c, i;
    for (c = 0; c < channels; ++c) {
        const float centre = mean[c];
        float dbeta = 0.0f, dot = 0.0f, projection, mean_dy, factor;
        for (i = 0; i < batch; ++i) {
            const size_t at = bn_row(i, c, channels, spatial);
            bn_grad_sums(x + at, dy + at, spatial, centre, &dbeta, &dot);
        }
        projection = dot * invstd[c] * invstd[c] / m;
        mean_dy = dbeta / m;
        factor = gamma[c] * invstd[c];
        for (i = 0; i < batch; ++i) {
            const size_t at = bn_row(i, c, channels, spatial);
            bn_grad_input(x + at, dy + at, x_grad + at, spatial, centre, mean_dy, projection,
                          factor);
        }
        gamma_grad[c] = dot * invstd[c];
        beta_grad[c] = dbeta;
    }
}
