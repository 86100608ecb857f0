/* adir_tuned_batchnorm.c: batchnorm's training forward pass and its gradient for a scalar core
 * (adir_tuned_batchnorm, adir_tuned_batchnorm_grad; their references: adir_batchnorm and
 * adir_batchnorm_grad in reference/adir_normalization.c; select-kernels chooses them on the
 * Cortex-M4F and M7).
 *
 * The same operations in the same order as the references, so bit for bit their results: each
 * row's sum in adir_row_sum's order (eight interleaved partial sums from the row's first eight
 * terms, added pairwise, then the rest of the row in order; a row under eight a running sum
 * from 0), the rows' sums added in sample order, each term computed by the same expression.
 * The eight partial sums are eight named variables, which gcc -O2 keeps in S registers (an
 * array's it keeps in memory). What differs from the references is the loops: the sums' eight
 * terms a turn, the elementwise passes' four (a loop's counter, test and branch cost as much
 * as an element's add on the M4F), and the gradient's two sums (sum(dy) and
 * sum(dy * (x - mean))) in one pass over the row instead of two: its 16 partial sums, the
 * centre and a turn's temporaries fit the M4F's 32 S registers (no spill in
 * arm-none-eabi-gcc -O2's loop: 16 loads, 8 subtracts, 8 multiplies, 16 adds and 4 integer
 * instructions for 8 pixels). */
#include <math.h>

#include "adir_tuned.h"

/* Where the values of channel c in sample i start: `spatial` contiguous floats. */
static size_t bn_row(int32_t i, int32_t c, int32_t channels, int32_t spatial)
{
    return ((size_t)i * (size_t)channels + (size_t)c) * (size_t)spatial;
}

/* sum(row[0 .. n)) in adir_row_sum's order. */
static float bn_sum(const float *row, int32_t n)
{
    float sum = 0.0f;
    int32_t s = 0;
    if (n >= 8) {
        float r0 = row[0], r1 = row[1], r2 = row[2], r3 = row[3];
        float r4 = row[4], r5 = row[5], r6 = row[6], r7 = row[7];
        for (s = 8; s + 8 <= n; s += 8) {
            r0 += row[s];
            r1 += row[s + 1];
            r2 += row[s + 2];
            r3 += row[s + 3];
            r4 += row[s + 4];
            r5 += row[s + 5];
            r6 += row[s + 6];
            r7 += row[s + 7];
        }
        sum = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    }
    for (; s < n; ++s) {
        sum += row[s];
    }
    return sum;
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
            r0 += e0 * e0;
            r1 += e1 * e1;
            r2 += e2 * e2;
            r3 += e3 * e3;
            r4 += e4 * e4;
            r5 += e5 * e5;
            r6 += e6 * e6;
            r7 += e7 * e7;
        }
        sum = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    }
    for (; s < n; ++s) {
        const float d = row[s] - mean;
        sum += d * d;
    }
    return sum;
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

/* *dbeta += sum(dy_row), *dot += sum(dy_row * (x_row - centre)): the two sums in one pass,
 * each in adir_row_sum's order as the reference's two passes add them. */
static void bn_grad_sums(const float *x_row, const float *dy_row, int32_t n, float centre,
                         float *dbeta, float *dot)
{
    float sum = 0.0f, product = 0.0f;
    int32_t s = 0;
    if (n >= 8) {
        float g0 = dy_row[0], g1 = dy_row[1], g2 = dy_row[2], g3 = dy_row[3];
        float g4 = dy_row[4], g5 = dy_row[5], g6 = dy_row[6], g7 = dy_row[7];
        float p0 = g0 * (x_row[0] - centre), p1 = g1 * (x_row[1] - centre);
        float p2 = g2 * (x_row[2] - centre), p3 = g3 * (x_row[3] - centre);
        float p4 = g4 * (x_row[4] - centre), p5 = g5 * (x_row[5] - centre);
        float p6 = g6 * (x_row[6] - centre), p7 = g7 * (x_row[7] - centre);
        for (s = 8; s + 8 <= n; s += 8) {
            const float *x = x_row + s, *g = dy_row + s;
            g0 += g[0];
            p0 += g[0] * (x[0] - centre);
            g1 += g[1];
            p1 += g[1] * (x[1] - centre);
            g2 += g[2];
            p2 += g[2] * (x[2] - centre);
            g3 += g[3];
            p3 += g[3] * (x[3] - centre);
            g4 += g[4];
            p4 += g[4] * (x[4] - centre);
            g5 += g[5];
            p5 += g[5] * (x[5] - centre);
            g6 += g[6];
            p6 += g[6] * (x[6] - centre);
            g7 += g[7];
            p7 += g[7] * (x[7] - centre);
        }
        sum = ((g0 + g1) + (g2 + g3)) + ((g4 + g5) + (g6 + g7));
        product = ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7));
    }
    for (; s < n; ++s) {
        sum += dy_row[s];
        product += dy_row[s] * (x_row[s] - centre);
    }
    *dbeta += sum;
    *dot += product;
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
