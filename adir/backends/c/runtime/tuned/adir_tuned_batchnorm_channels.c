/* adir_tuned_batchnorm_channels.c: batchnorm's training forward pass and its gradient for a
 * host with a vector unit (adir_tuned_batchnorm_channels, adir_tuned_batchnorm_grad_channels;
 * their references: adir_batchnorm and adir_batchnorm_grad in reference/adir_normalization.c;
 * select-kernels chooses them on the hosts, and adir_tuned_batchnorm.c's on the Cortex-M4F and
 * M7).
 *
 * Bit for bit the references' results: each sum runs element after element (a partial sum per
 * sample, then their total), each element is computed by the same expression. A sum in that
 * order is one chain of dependent adds, one add's latency (4 cycles on current x86 cores) per
 * element, and a compiler may not split it into vector lanes. The references run one channel's
 * chain at a time; here BN_CHANNELS channels' chains run side by side (each still in its own
 * order), so the core overlaps their adds: ResNet-8's batchnorms at batch 16 were 17% of its
 * training step. The passes that compute an element on its own (y, dx) vectorize as they are.
 * The gradient's two sums (sum(dy) and sum(dy * (x - mean))) take one pass over the channel. */
#include <math.h>

#include "adir_tuned.h"

/* gcc -O3 vectorizes a float sum over s "in order": per vector of 16 elements, 16 dependent
 * scalar adds of one channel, then the next channel's, which the core then overlaps less than
 * the channels' adds interleaved as written (ResNet-8's 16 x 16 x 1024 activations: 0.29 ns an
 * element vectorized, 0.17 not). The sums' functions are therefore not vectorized; the other
 * passes are. */
#if ADIR_GCC
#define BN_SCALAR_SUMS __attribute__((optimize("no-tree-vectorize")))
#else
#define BN_SCALAR_SUMS
#endif

/* Channels whose sums run side by side: 8 chains (16 in the gradient) of 4-cycle adds keep two
 * add units busy, and 8 (16) rows stream from memory at once. */
#define BN_CHANNELS 8

/* Where the values of channel c in sample i start: `spatial` contiguous floats. */
static size_t bn8_row(int32_t i, int32_t c, int32_t channels, int32_t spatial)
{
    return ((size_t)i * (size_t)channels + (size_t)c) * (size_t)spatial;
}

/* total[k] = sum(x) over channel c + k (k < lanes), or with `centre`, sum((x - centre[k])^2):
 * per sample a partial sum element after element from 0, then the partials' total, the
 * reference's order. Inlined with a constant `lanes`. */
static ADIR_INLINE void bn8_block_sums(const float *restrict x, const float *restrict centre,
                                      int32_t lanes, int32_t batch, int32_t channels,
                                      int32_t spatial, int32_t c, float *restrict total)
{
    int32_t i, s, k;
    for (k = 0; k < lanes; ++k) {
        total[k] = 0.0f;
    }
    for (i = 0; i < batch; ++i) {
        const float *restrict rows = x + bn8_row(i, c, channels, spatial);
        float partial[BN_CHANNELS];
        for (k = 0; k < lanes; ++k) {
            partial[k] = 0.0f;
        }
        for (s = 0; s < spatial; ++s) {
            for (k = 0; k < lanes; ++k) {
                const float v = rows[(size_t)k * (size_t)spatial + (size_t)s];
                if (centre != NULL) {
                    const float d = v - centre[k];
                    partial[k] += d * d;
                } else {
                    partial[k] += v;
                }
            }
        }
        for (k = 0; k < lanes; ++k) {
            total[k] += partial[k];
        }
    }
}

/* bn8_block_sums of BN_CHANNELS channels and of one, each with its loops' bounds constant. */
ADIR_NOINLINE BN_SCALAR_SUMS static void bn8_sums_block(const float *restrict x,
                                                       const float *restrict centre,
                                                       int32_t batch, int32_t channels,
                                                       int32_t spatial, int32_t c,
                                                       float *restrict total)
{
    bn8_block_sums(x, centre, BN_CHANNELS, batch, channels, spatial, c, total);
}

ADIR_NOINLINE BN_SCALAR_SUMS static void bn8_sums_one(const float *restrict x,
                                                     const float *restrict centre,
                                                     int32_t batch, int32_t channels,
                                                     int32_t spatial, int32_t c,
                                                     float *restrict total)
{
    bn8_block_sums(x, centre, 1, batch, channels, spatial, c, total);
}

static void bn8_sums(const float *restrict x, const float *restrict centre, int32_t lanes,
                    int32_t batch, int32_t channels, int32_t spatial, int32_t c,
                    float *restrict total)
{
    if (lanes == BN_CHANNELS) {
        bn8_sums_block(x, centre, batch, channels, spatial, c, total);
    } else {
        bn8_sums_one(x, centre, batch, channels, spatial, c, total);
    }
}

/* The statistics and the output of channels c .. c + lanes - 1 (see adir_batchnorm). */
static ADIR_INLINE void bn8_forward_block(const float *x, const float *gamma, const float *beta,
                                         const float *running_mean, const float *running_var,
                                         float *y, float *batch_mean, float *batch_invstd,
                                         float *new_running_mean, float *new_running_var,
                                         int32_t lanes, int32_t batch, int32_t channels,
                                         int32_t spatial, int32_t c, float momentum, float eps)
{
    const size_t count = (size_t)batch * (size_t)spatial;
    const float m = (float)count;
    const float keep = 1.0f - momentum;
    float total[BN_CHANNELS], mean[BN_CHANNELS], squares[BN_CHANNELS];
    int32_t i, k, s;
    bn8_sums(x, NULL, lanes, batch, channels, spatial, c, total);
    for (k = 0; k < lanes; ++k) {
        mean[k] = total[k] / m;
    }
    bn8_sums(x, mean, lanes, batch, channels, spatial, c, squares);
    for (k = 0; k < lanes; ++k) {
        const float invstd = 1.0f / sqrtf(squares[k] / m + eps);
        const float unbiased = squares[k] / (float)(count - 1u);
        const float scale = gamma[c + k] * invstd;
        const float shift = beta[c + k] - mean[k] * scale;
        batch_mean[c + k] = mean[k];
        batch_invstd[c + k] = invstd;
        /* The running statistics may be updated in place: channel c + k read just before it
         * is written. */
        new_running_mean[c + k] = momentum * mean[k] + keep * running_mean[c + k];
        new_running_var[c + k] = momentum * unbiased + keep * running_var[c + k];
        for (i = 0; i < batch; ++i) {
            const size_t at = bn8_row(i, c + k, channels, spatial);
            /* y may be x (the in-place batchnorm): each element read before it is written. */
            const float *row = x + at;
            float *out = y + at;
            for (s = 0; s < spatial; ++s) {
                out[s] = row[s] * scale + shift;
            }
        }
    }
}

void adir_tuned_batchnorm_channels(const float *x, const float *gamma, const float *beta,
                                   const float *running_mean, const float *running_var,
                                   float *y, float *batch_mean, float *batch_invstd,
                                   float *new_running_mean, float *new_running_var,
                                   int32_t batch, int32_t channels, int32_t spatial,
                                   float momentum, float eps)
{
    int32_t c = 0;
    for (; c + BN_CHANNELS <= channels; c += BN_CHANNELS) {
        bn8_forward_block(x, gamma, beta, running_mean, running_var, y, batch_mean,
                         batch_invstd, new_running_mean, new_running_var, BN_CHANNELS, batch,
                         channels, spatial, c, momentum, eps);
    }
    for (; c < channels; ++c) {
        bn8_forward_block(x, gamma, beta, running_mean, running_var, y, batch_mean,
                         batch_invstd, new_running_mean, new_running_var, 1, batch, channels,
                         spatial, c, momentum, eps);
    }
}

/* dbeta[k] = sum(dy), dot[k] = sum(dy * (x - centre[k])) over channel c + k (k < lanes), in
 * one pass, each sum in the reference's order. */
static ADIR_INLINE void bn8_grad_sums(const float *restrict x, const float *restrict dy,
                                     const float *restrict centre, int32_t lanes, int32_t batch,
                                     int32_t channels, int32_t spatial, int32_t c,
                                     float *restrict dbeta, float *restrict dot)
{
    int32_t i, k, s;
    for (k = 0; k < lanes; ++k) {
        dbeta[k] = 0.0f, dot[k] = 0.0f;
    }
    for (i = 0; i < batch; ++i) {
        const size_t at = bn8_row(i, c, channels, spatial);
        const float *restrict x_rows = x + at;
        const float *restrict dy_rows = dy + at;
        float sum[BN_CHANNELS], partial[BN_CHANNELS];
        for (k = 0; k < lanes; ++k) {
            sum[k] = 0.0f, partial[k] = 0.0f;
        }
        for (s = 0; s < spatial; ++s) {
            for (k = 0; k < lanes; ++k) {
                const size_t e = (size_t)k * (size_t)spatial + (size_t)s;
                const float d = x_rows[e] - centre[k];
                sum[k] += dy_rows[e];
                partial[k] += dy_rows[e] * d;
            }
        }
        for (k = 0; k < lanes; ++k) {
            dbeta[k] += sum[k], dot[k] += partial[k];
        }
    }
}

ADIR_NOINLINE BN_SCALAR_SUMS static void bn8_grad_sums_block(
    const float *restrict x, const float *restrict dy, const float *restrict centre,
    int32_t batch, int32_t channels, int32_t spatial, int32_t c, float *restrict dbeta,
    float *restrict dot)
{
    bn8_grad_sums(x, dy, centre, BN_CHANNELS, batch, channels, spatial, c, dbeta, dot);
}

ADIR_NOINLINE BN_SCALAR_SUMS static void bn8_grad_sums_one(
    const float *restrict x, const float *restrict dy, const float *restrict centre,
    int32_t batch, int32_t channels, int32_t spatial, int32_t c, float *restrict dbeta,
    float *restrict dot)
{
    bn8_grad_sums(x, dy, centre, 1, batch, channels, spatial, c, dbeta, dot);
}

/* The gradient of channels c .. c + lanes - 1 (see adir_batchnorm_grad): per channel the two
 * sums in one pass, each in the reference's order, then dx. */
static ADIR_INLINE void bn8_grad_block(const float *x, const float *gamma, const float *mean,
                                      const float *invstd, const float *dy, float *x_grad,
                                      float *gamma_grad, float *beta_grad, int32_t lanes,
                                      int32_t batch, int32_t channels, int32_t spatial,
                                      int32_t c)
{
    const float m = (float)((size_t)batch * (size_t)spatial);
    float dbeta[BN_CHANNELS], dot[BN_CHANNELS], centre[BN_CHANNELS];
    int32_t i, k, s;
    for (k = 0; k < lanes; ++k) {
        centre[k] = mean[c + k];
    }
    if (lanes == BN_CHANNELS) {
        bn8_grad_sums_block(x, dy, centre, batch, channels, spatial, c, dbeta, dot);
    } else {
        bn8_grad_sums_one(x, dy, centre, batch, channels, spatial, c, dbeta, dot);
    }
    for (k = 0; k < lanes; ++k) {
        const float projection = dot[k] * invstd[c + k] * invstd[c + k] / m;
        const float mean_dy = dbeta[k] / m;
        const float factor = gamma[c + k] * invstd[c + k];
        for (i = 0; i < batch; ++i) {
            const size_t at = bn8_row(i, c + k, channels, spatial);
            const float *restrict x_row = x + at;
            const float *restrict dy_row = dy + at;
            float *restrict dx_row = x_grad + at;
            for (s = 0; s < spatial; ++s) {
                const float d = x_row[s] - centre[k];
                dx_row[s] = (dy_row[s] - mean_dy - d * projection) * factor;
            }
        }
        gamma_grad[c + k] = dot[k] * invstd[c + k];
        beta_grad[c + k] = dbeta[k];
    }
}

void adir_tuned_batchnorm_grad_channels(const float *x, const float *gamma, const float *mean,
                                        const float *invstd, const float *dy, float *x_grad,
                                        float *gamma_grad, float *beta_grad, int32_t batch,
                                        int32_t channels, int32_t spatial)
{
    int32_t c = 0;
    for (; c + BN_CHANNELS <= channels; c += BN_CHANNELS) {
        bn8_grad_block(x, gamma, mean, invstd, dy, x_grad, gamma_grad, beta_grad, BN_CHANNELS,
                      batch, channels, spatial, c);
    }
    for (; c < channels; ++c) {
        bn8_grad_block(x, gamma, mean, invstd, dy, x_grad, gamma_grad, beta_grad, 1, batch,
                      channels, spatial, c);
    }
}
