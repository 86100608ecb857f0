/* adir_tuned_batchnorm_channels.c: batchnorm's training forward pass and its gradient for a
 * host with a vector unit (adir_tuned_batchnorm_channels, adir_tuned_batchnorm_grad_channels
 * and the relu-fused adir_tuned_batchnorm_relu_channels, adir_tuned_batchnorm_relu_grad_channels;
 * their references: adir_batchnorm, adir_batchnorm_grad, adir_batchnorm_relu and
 * adir_batchnorm_relu_grad in reference/adir_normalization.c; select-kernels chooses them on the
 * hosts, and adir_tuned_batchnorm.c's on the Cortex-M4F and M7).
 *
 * Bit for bit the references' results. A channel's sum is, per sample, a sum over the sample's
 * row in eight interleaved partial sums (adir_normalization.h): here the eight lanes of one
 * vector, each lane adding its elements in the reference's order, each element by the
 * reference's expression. A row's vector of sums is a chain of dependent adds, so the rows of
 * BN_CHANNELS consecutive channels of one sample (contiguous in memory) run side by side and
 * the core overlaps their chains; the rows' sums then add into the channels' totals in sample
 * order. A row of fewer than 8 values has no partial sums, only a running sum: those rows run
 * as scalar chains, the channels' side by side. The passes that compute an element on its own
 * (y, dx) run a vector at a time.
 *
 * The kernels use gcc's and clang's vector extensions; under another compiler they are their
 * references. */
#include <math.h>
#include <string.h>

#include "adir_tuned.h"

#if defined(__GNUC__)
#define BN_VECTORS 1
#else
#define BN_VECTORS 0
#endif

#if BN_VECTORS

/* The channels whose rows run side by side. */
#define BN_CHANNELS 8

/* The rows whose two gradient sums run side by side: 8 vectors of sums, which with their
 * operands fit AVX2's 16 registers. */
#define BN_GRAD_ROWS 4

/* The partial sums of a row, and a mask of as many lanes. */
typedef float bn8_sums __attribute__((vector_size(32)));
typedef int32_t bn8_sums_mask __attribute__((vector_size(32)));

/* The element passes' vectors: 16 floats where the target's vectors hold 16 (AVX-512), 8
 * elsewhere. */
#define BN_LANES (ADIR_DOT_LANES == 16 ? 16 : 8)
typedef float bn8_lanes __attribute__((vector_size(4 * BN_LANES)));
typedef int32_t bn8_lanes_mask __attribute__((vector_size(4 * BN_LANES)));

/* Where the values of channel c in sample i start: `spatial` contiguous floats. */
static size_t bn8_row(int32_t i, int32_t c, int32_t channels, int32_t spatial)
{
    return ((size_t)i * (size_t)channels + (size_t)c) * (size_t)spatial;
}

/* A relu after the batchnorm (adir.batchnorm_relu and its gradient): the channel's affine
 * value y = (x - centre) * scale + beta, by the forward pass's expression, is what the relu
 * saw. */
struct bn8_relu {
    float centre, scale, beta;
};

/* adir_relu_grad's select, `y <= 0 ? 0 : dy` (relu(y) <= 0 exactly where y <= 0), as a mask
 * of dy's bits (+0 where cleared, the select's 0.0f): compilers made the select a branch in
 * the sums' loops, taken at random on a relu's inputs. */
static ADIR_INLINE float bn8_relu_masked(float x, const struct bn8_relu *relu, float dy)
{
    const uint32_t keep = 0u - (uint32_t)!((x - relu->centre) * relu->scale + relu->beta <= 0.0f);
    uint32_t bits;
    float g;
    memcpy(&bits, &dy, sizeof bits);
    bits &= keep;
    memcpy(&g, &bits, sizeof g);
    return g;
}

/* The eight partial sums added pairwise, as the reference adds them. (The helpers take their
 * vectors by pointer: an 8-float vector by value changes the ABI without AVX, a warning.) */
static ADIR_INLINE float bn8_pairwise(const bn8_sums *r)
{
    return (((*r)[0] + (*r)[1]) + ((*r)[2] + (*r)[3])) +
           (((*r)[4] + (*r)[5]) + ((*r)[6] + (*r)[7]));
}

/* *term = the forward's term of the 8 values at x: x, or with `squares` (x - centre)^2. */
static ADIR_INLINE void bn8_term(const float *x, int squares, float centre, bn8_sums *term)
{
    bn8_sums v;
    memcpy(&v, x, sizeof v);
    if (squares) {
        const bn8_sums d = v - centre;
        v = d * d;
    }
    *term = v;
}

/* total[k] += the sum of row k's terms, k < rows, the rows `spatial` (>= 8) floats apart from
 * x: x, or with `centre` (x - centre[k])^2. Each term is made in its own statement, as the
 * reference makes it, so that a compiler contracts neither into a multiply-add. */
static ADIR_INLINE void bn8_rows_sums(const float *restrict x, const float *restrict centre,
                                      int32_t rows, int32_t spatial, float *restrict total)
{
    const int squares = centre != NULL;
    bn8_sums acc[BN_CHANNELS];
    int32_t k, s;
    for (k = 0; k < rows; ++k) {
        bn8_term(x + (size_t)k * (size_t)spatial, squares, squares ? centre[k] : 0.0f, &acc[k]);
    }
    for (s = 8; s + 8 <= spatial; s += 8) {
        for (k = 0; k < rows; ++k) {
            bn8_sums term;
            bn8_term(x + (size_t)k * (size_t)spatial + (size_t)s, squares,
                     squares ? centre[k] : 0.0f, &term);
            acc[k] += term;
        }
    }
    for (k = 0; k < rows; ++k) {
        const float *row = x + (size_t)k * (size_t)spatial;
        float sum = bn8_pairwise(&acc[k]);
        int32_t t;
        for (t = s; t < spatial; ++t) {
            float term = row[t];
            if (squares) {
                const float d = row[t] - centre[k];
                term = d * d;
            }
            sum += term;
        }
        total[k] += sum;
    }
}

/* The gradient's terms of 8 values: *g = dy, or with `relu` its gradient (bn8_relu_masked),
 * and *product = g * (x - centre). */
static ADIR_INLINE void bn8_grad_terms(const float *x, const float *dy, float centre,
                                       const struct bn8_relu *relu, bn8_sums *g, bn8_sums *product)
{
    bn8_sums v;
    memcpy(&v, x, sizeof v);
    memcpy(g, dy, sizeof *g);
    if (relu != NULL) {
        const bn8_sums y = (v - relu->centre) * relu->scale + relu->beta;
        *g = (bn8_sums)((bn8_sums_mask)*g & ~(bn8_sums_mask)(y <= 0.0f));
    }
    *product = *g * (v - centre);
}

/* dbeta[k] += sum(g), dot[k] += sum(g * (x - centre[k])) over row k, k < rows (the rows
 * `spatial` >= 8 floats apart from x and dy), g = dy or with relus the relu's gradient: the two
 * sums in one pass, each in the reference's order. */
static ADIR_INLINE void bn8_rows_grad_sums(const float *restrict x, const float *restrict dy,
                                           const float *restrict centre,
                                           const struct bn8_relu *restrict relus, int32_t rows,
                                           int32_t spatial, float *restrict dbeta,
                                           float *restrict dot)
{
    bn8_sums g_acc[BN_GRAD_ROWS], dot_acc[BN_GRAD_ROWS];
    int32_t k, s;
    for (k = 0; k < rows; ++k) {
        const size_t at = (size_t)k * (size_t)spatial;
        bn8_grad_terms(x + at, dy + at, centre[k], relus != NULL ? &relus[k] : NULL, &g_acc[k],
                       &dot_acc[k]);
    }
    for (s = 8; s + 8 <= spatial; s += 8) {
        for (k = 0; k < rows; ++k) {
            const size_t at = (size_t)k * (size_t)spatial + (size_t)s;
            bn8_sums g, product;
            bn8_grad_terms(x + at, dy + at, centre[k], relus != NULL ? &relus[k] : NULL, &g,
                           &product);
            g_acc[k] += g;
            dot_acc[k] += product;
        }
    }
    for (k = 0; k < rows; ++k) {
        const size_t at = (size_t)k * (size_t)spatial;
        float g_sum = bn8_pairwise(&g_acc[k]), dot_sum = bn8_pairwise(&dot_acc[k]);
        int32_t t;
        for (t = s; t < spatial; ++t) {
            const float v = x[at + (size_t)t];
            const float g = relus != NULL ? bn8_relu_masked(v, &relus[k], dy[at + (size_t)t])
                                          : dy[at + (size_t)t];
            const float product = g * (v - centre[k]);
            g_sum += g;
            dot_sum += product;
        }
        dbeta[k] += g_sum;
        dot[k] += dot_sum;
    }
}

/* gcc -O3 vectorizes a float running sum "in order": per vector of 16 elements, 16 dependent
 * scalar adds of one channel, then the next channel's, which the core then overlaps less than
 * the channels' adds interleaved as written (ResNet-8's 16 x 16 x 1024 activations: 0.29 ns an
 * element vectorized, 0.17 not). The short rows' sums are therefore not vectorized. */
#if ADIR_GCC
#define BN_SCALAR_SUMS __attribute__((optimize("no-tree-vectorize")))
#else
#define BN_SCALAR_SUMS
#endif

/* Rows of fewer than 8 values: total[k] += the running sum of row k, k < lanes (x, or with
 * centre (x - centre[k])^2), each chain in its own order, the rows side by side. */
ADIR_NOINLINE BN_SCALAR_SUMS static void bn8_short_rows_sums(const float *restrict x,
                                                           const float *restrict centre,
                                                           int32_t lanes, int32_t spatial,
                                                           float *restrict total)
{
    float partial[BN_CHANNELS];
    int32_t k, s;
    for (k = 0; k < lanes; ++k) {
        partial[k] = 0.0f;
    }
    for (s = 0; s < spatial; ++s) {
        for (k = 0; k < lanes; ++k) {
            float term = x[(size_t)k * (size_t)spatial + (size_t)s];
            if (centre != NULL) {
                const float d = term - centre[k];
                term = d * d;
            }
            partial[k] += term;
        }
    }
    for (k = 0; k < lanes; ++k) {
        total[k] += partial[k];
    }
}

/* Rows of fewer than 8 values: dbeta[k] += sum(g), dot[k] += sum(g * (x - centre[k])) of row
 * k, k < lanes, g already the relu's gradient where there is one (bn8_relu_grad_into). */
ADIR_NOINLINE BN_SCALAR_SUMS static void bn8_short_rows_grad_sums(
    const float *restrict x, const float *restrict g, const float *restrict centre,
    int32_t lanes, int32_t spatial, float *restrict dbeta, float *restrict dot)
{
    float g_sum[BN_CHANNELS], dot_sum[BN_CHANNELS];
    int32_t k, s;
    for (k = 0; k < lanes; ++k) {
        g_sum[k] = 0.0f, dot_sum[k] = 0.0f;
    }
    for (s = 0; s < spatial; ++s) {
        for (k = 0; k < lanes; ++k) {
            const size_t e = (size_t)k * (size_t)spatial + (size_t)s;
            const float product = g[e] * (x[e] - centre[k]);
            g_sum[k] += g[e];
            dot_sum[k] += product;
        }
    }
    for (k = 0; k < lanes; ++k) {
        dbeta[k] += g_sum[k], dot[k] += dot_sum[k];
    }
}

/* mean[k] and squares[k] = sum((x - mean[k])^2) of channels c .. c + lanes - 1: the sums of
 * each sample's rows, added in sample order. Inlined with a constant `lanes`. */
static ADIR_INLINE void bn8_statistics(const float *x, int32_t lanes, int32_t batch,
                                       int32_t channels, int32_t spatial, int32_t c, float m,
                                       float *restrict mean, float *restrict squares)
{
    float total[BN_CHANNELS];
    int32_t i, k;
    for (k = 0; k < lanes; ++k) {
        total[k] = 0.0f, squares[k] = 0.0f;
    }
    for (i = 0; i < batch; ++i) {
        const float *rows = x + bn8_row(i, c, channels, spatial);
        if (spatial >= 8) {
            bn8_rows_sums(rows, NULL, lanes, spatial, total);
        } else {
            bn8_short_rows_sums(rows, NULL, lanes, spatial, total);
        }
    }
    for (k = 0; k < lanes; ++k) {
        mean[k] = total[k] / m;
    }
    for (i = 0; i < batch; ++i) {
        const float *rows = x + bn8_row(i, c, channels, spatial);
        if (spatial >= 8) {
            bn8_rows_sums(rows, mean, lanes, spatial, squares);
        } else {
            bn8_short_rows_sums(rows, mean, lanes, spatial, squares);
        }
    }
}

/* The element passes over a row of spatial >= BN_LANES values: BN_LANES values a vector, the
 * last vector overlapping the one before it (its values computed and stored again, the same
 * values: the output is not an input's buffer). gcc's vectorized loops ran the values past a
 * row's last whole vector one at a time (DS-CNN's rows of 125: 13 of them), the relu's mask in
 * integer registers: the fused gradient's dx pass took 27 us of its 60 at batch 16 on Zen 4.
 * Each element by the scalar loop's expression. */
static ADIR_INLINE int32_t bn8_lanes_next(int32_t s, int32_t spatial)
{
    return s + 2 * BN_LANES <= spatial ? s + BN_LANES : spatial - BN_LANES;
}

/* y = (x - centre) * scale + beta, or with `relu` adir_relu's `v < 0 ? 0 : v` of it (v kept
 * where not below 0: -0 and NaN as the select keeps them). */
static void bn8_lanes_affine_row(const float *restrict x, float centre, float scale, float beta,
                                 int relu, int32_t spatial, float *restrict y)
{
    int32_t s = 0;
    for (;;) {
        bn8_lanes v;
        memcpy(&v, x + s, sizeof v);
        v = (v - centre) * scale + beta;
        if (relu) {
            v = (bn8_lanes)((bn8_lanes_mask)v & ~(bn8_lanes_mask)(v < 0.0f));
        }
        memcpy(y + s, &v, sizeof v);
        if (s + BN_LANES == spatial) {
            return;
        }
        s = bn8_lanes_next(s, spatial);
    }
}

/* dx = (g - mean_dy - (x - centre) * projection) * factor, g = dy or with `relu` its
 * gradient. */
static void bn8_lanes_dx_row(const float *restrict x, const float *restrict dy,
                             const struct bn8_relu *relu, float centre, float mean_dy,
                             float projection, float factor, int32_t spatial,
                             float *restrict dx)
{
    int32_t s = 0;
    for (;;) {
        bn8_lanes v, g, d, out;
        memcpy(&v, x + s, sizeof v);
        memcpy(&g, dy + s, sizeof g);
        if (relu != NULL) {
            const bn8_lanes y = (v - relu->centre) * relu->scale + relu->beta;
            g = (bn8_lanes)((bn8_lanes_mask)g & ~(bn8_lanes_mask)(y <= 0.0f));
        }
        d = v - centre;
        out = (g - mean_dy - d * projection) * factor;
        memcpy(dx + s, &out, sizeof out);
        if (s + BN_LANES == spatial) {
            return;
        }
        s = bn8_lanes_next(s, spatial);
    }
}

/* The statistics and the output of channels c .. c + lanes - 1 (see adir_batchnorm). */
static ADIR_INLINE void bn8_forward_block(const float *x, const float *gamma, const float *beta,
                                          const float *running_mean, const float *running_var,
                                          float *y, float *batch_mean, float *batch_invstd,
                                          float *new_running_mean, float *new_running_var,
                                          int32_t lanes, int32_t batch, int32_t channels,
                                          int32_t spatial, int32_t c, float momentum, float eps,
                                          int relu)
{
    const size_t count = (size_t)batch * (size_t)spatial;
    const float m = (float)count;
    const float keep = 1.0f - momentum;
    float mean[BN_CHANNELS], squares[BN_CHANNELS];
    int32_t i, k, s;
    bn8_statistics(x, lanes, batch, channels, spatial, c, m, mean, squares);
    for (k = 0; k < lanes; ++k) {
        const float invstd = 1.0f / sqrtf(squares[k] / m + eps);
        const float unbiased = squares[k] / (float)(count - 1u);
        const float scale = gamma[c + k] * invstd;
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
            if (spatial >= BN_LANES && y != x) {
                bn8_lanes_affine_row(row, mean[k], scale, beta[c + k], relu, spatial, out);
            } else if (relu) {
                for (s = 0; s < spatial; ++s) {
                    const float v = (row[s] - mean[k]) * scale + beta[c + k];
                    out[s] = v < 0.0f ? 0.0f : v;
                }
            } else {
                for (s = 0; s < spatial; ++s) {
                    out[s] = (row[s] - mean[k]) * scale + beta[c + k];
                }
            }
        }
    }
}

/* Both forward kernels; `relu` a constant where it is inlined. */
static ADIR_INLINE void bn8_forward(const float *x, const float *gamma, const float *beta,
                                    const float *running_mean, const float *running_var,
                                    float *y, float *batch_mean, float *batch_invstd,
                                    float *new_running_mean, float *new_running_var,
                                    int32_t batch, int32_t channels, int32_t spatial,
                                    float momentum, float eps, int relu)
{
    int32_t c = 0;
    for (; c + BN_CHANNELS <= channels; c += BN_CHANNELS) {
        bn8_forward_block(x, gamma, beta, running_mean, running_var, y, batch_mean,
                          batch_invstd, new_running_mean, new_running_var, BN_CHANNELS, batch,
                          channels, spatial, c, momentum, eps, relu);
    }
    for (; c < channels; ++c) {
        bn8_forward_block(x, gamma, beta, running_mean, running_var, y, batch_mean,
                          batch_invstd, new_running_mean, new_running_var, 1, batch, channels,
                          spatial, c, momentum, eps, relu);
    }
}

/* The relu's gradient of rows of fewer than 8 values, channels c .. c + lanes - 1, written
 * into g (x_grad: the op is not in place, so it is no operand's buffer) in one pass that
 * vectorizes, before the scalar sums read it as they read relu_grad's output unfused. Computed
 * in the sums' scalar loops, the mask made DS-CNN's batch-of-one step 9% slower. */
static void bn8_relu_grad_into(const float *restrict x, const float *restrict dy,
                               const struct bn8_relu *restrict relus, int32_t lanes,
                               int32_t batch, int32_t channels, int32_t spatial, int32_t c,
                               float *restrict g)
{
    int32_t i, k, s;
    for (i = 0; i < batch; ++i) {
        for (k = 0; k < lanes; ++k) {
            const size_t at = bn8_row(i, c + k, channels, spatial);
            for (s = 0; s < spatial; ++s) {
                const size_t e = at + (size_t)s;
                g[e] = bn8_relu_masked(x[e], &relus[k], dy[e]);
            }
        }
    }
}

/* dbeta[k] = sum(g), dot[k] = sum(g * (x - centre[k])) over channels c + k, k < lanes, in one
 * pass, each in the reference's order; g is dy or with relus the relu's gradient, which for
 * rows of fewer than 8 values is first written into x_grad. Returns whether it was. */
static ADIR_INLINE int bn8_grad_sums(const float *x, const float *dy,
                                     const float *restrict centre,
                                     const struct bn8_relu *restrict relus, int32_t lanes,
                                     int32_t batch, int32_t channels, int32_t spatial, int32_t c,
                                     float *restrict x_grad, float *restrict dbeta,
                                     float *restrict dot)
{
    int32_t i, k;
    for (k = 0; k < lanes; ++k) {
        dbeta[k] = 0.0f, dot[k] = 0.0f;
    }
    if (spatial < 8) {
        const float *g = dy;
        if (relus != NULL) {
            bn8_relu_grad_into(x, dy, relus, lanes, batch, channels, spatial, c, x_grad);
            g = x_grad;
        }
        for (i = 0; i < batch; ++i) {
            const size_t at = bn8_row(i, c, channels, spatial);
            bn8_short_rows_grad_sums(x + at, g + at, centre, lanes, spatial, dbeta, dot);
        }
        return relus != NULL;
    }
    for (i = 0; i < batch; ++i) {
        const size_t at = bn8_row(i, c, channels, spatial);
        for (k = 0; k + BN_GRAD_ROWS <= lanes; k += BN_GRAD_ROWS) {
            const size_t row = at + (size_t)k * (size_t)spatial;
            bn8_rows_grad_sums(x + row, dy + row, centre + k, relus != NULL ? relus + k : NULL,
                               BN_GRAD_ROWS, spatial, dbeta + k, dot + k);
        }
        for (; k < lanes; ++k) {
            const size_t row = at + (size_t)k * (size_t)spatial;
            bn8_rows_grad_sums(x + row, dy + row, centre + k, relus != NULL ? relus + k : NULL, 1,
                               spatial, dbeta + k, dot + k);
        }
    }
    return 0;
}

/* The gradient of channels c .. c + lanes - 1 (see adir_batchnorm_grad): per channel the two
 * sums in one pass, then dx. */
static ADIR_INLINE void bn8_grad_block(const float *x, const float *gamma, const float *beta,
                                       const float *mean, const float *invstd, const float *dy,
                                       float *x_grad, float *gamma_grad, float *beta_grad,
                                       int32_t lanes, int32_t batch, int32_t channels,
                                       int32_t spatial, int32_t c)
{
    const float m = (float)((size_t)batch * (size_t)spatial);
    float dbeta[BN_CHANNELS], dot[BN_CHANNELS], centre[BN_CHANNELS];
    /* with beta (adir_batchnorm_relu_grad), the relu's affine values, by the forward's
     * expressions */
    struct bn8_relu relus[BN_CHANNELS];
    const struct bn8_relu *relu = beta != NULL ? relus : NULL;
    int relu_in_x_grad;
    int32_t i, k, s;
    for (k = 0; k < lanes; ++k) {
        centre[k] = mean[c + k];
        relus[k].centre = centre[k];
        relus[k].scale = gamma[c + k] * invstd[c + k];
        relus[k].beta = beta != NULL ? beta[c + k] : 0.0f;
    }
    relu_in_x_grad = bn8_grad_sums(x, dy, centre, relu, lanes, batch, channels, spatial, c,
                                   x_grad, dbeta, dot);
    for (k = 0; k < lanes; ++k) {
        const float projection = dot[k] * invstd[c + k] * invstd[c + k] / m;
        const float mean_dy = dbeta[k] / m;
        const float factor = gamma[c + k] * invstd[c + k];
        for (i = 0; i < batch; ++i) {
            const size_t at = bn8_row(i, c + k, channels, spatial);
            const float *restrict x_row = x + at;
            const float *restrict dy_row = dy + at;
            if (spatial >= BN_LANES) {
                bn8_lanes_dx_row(x_row, dy_row, relu != NULL ? &relus[k] : NULL, centre[k],
                                 mean_dy, projection, factor, spatial, x_grad + at);
            } else if (relu_in_x_grad) {
                float *g_row = x_grad + at; /* read and written: not restrict */
                for (s = 0; s < spatial; ++s) {
                    const float d = x_row[s] - centre[k];
                    g_row[s] = (g_row[s] - mean_dy - d * projection) * factor;
                }
            } else {
                float *restrict dx_row = x_grad + at;
                for (s = 0; s < spatial; ++s) {
                    const float d = x_row[s] - centre[k];
                    const float g =
                        relu != NULL ? bn8_relu_masked(x_row[s], &relus[k], dy_row[s]) : dy_row[s];
                    dx_row[s] = (g - mean_dy - d * projection) * factor;
                }
            }
        }
        gamma_grad[c + k] = dot[k] * invstd[c + k];
        beta_grad[c + k] = dbeta[k];
    }
}

/* Both gradient kernels: beta NULL for adir_batchnorm_grad's. */
static ADIR_INLINE void bn8_grad(const float *x, const float *gamma, const float *beta,
                                 const float *mean, const float *invstd, const float *dy,
                                 float *x_grad, float *gamma_grad, float *beta_grad,
                                 int32_t batch, int32_t channels, int32_t spatial)
{
    int32_t c = 0;
    for (; c + BN_CHANNELS <= channels; c += BN_CHANNELS) {
        bn8_grad_block(x, gamma, beta, mean, invstd, dy, x_grad, gamma_grad, beta_grad,
                       BN_CHANNELS, batch, channels, spatial, c);
    }
    for (; c < channels; ++c) {
        bn8_grad_block(x, gamma, beta, mean, invstd, dy, x_grad, gamma_grad, beta_grad, 1,
                       batch, channels, spatial, c);
    }
}

#endif /* BN_VECTORS */

void adir_tuned_batchnorm_channels(const float *x, const float *gamma, const float *beta,
                                   const float *running_mean, const float *running_var,
                                   float *y, float *batch_mean, float *batch_invstd,
                                   float *new_running_mean, float *new_running_var,
                                   int32_t batch, int32_t channels, int32_t spatial,
                                   float momentum, float eps)
{
#if BN_VECTORS
    bn8_forward(x, gamma, beta, running_mean, running_var, y, batch_mean, batch_invstd,
                new_running_mean, new_running_var, batch, channels, spatial, momentum, eps, 0);
#else
    adir_batchnorm(x, gamma, beta, running_mean, running_var, y, batch_mean, batch_invstd,
                   new_running_mean, new_running_var, batch, channels, spatial, momentum, eps);
#endif
}

/* adir_batchnorm_relu in one pass over the output: relu((x - mean) * scale + beta) written. */
void adir_tuned_batchnorm_relu_channels(const float *x, const float *gamma, const float *beta,
                                        const float *running_mean, const float *running_var,
                                        float *y, float *batch_mean, float *batch_invstd,
                                        float *new_running_mean, float *new_running_var,
                                        int32_t batch, int32_t channels, int32_t spatial,
                                        float momentum, float eps)
{
#if BN_VECTORS
    bn8_forward(x, gamma, beta, running_mean, running_var, y, batch_mean, batch_invstd,
                new_running_mean, new_running_var, batch, channels, spatial, momentum, eps, 1);
#else
    adir_batchnorm_relu(x, gamma, beta, running_mean, running_var, y, batch_mean,
                        batch_invstd, new_running_mean, new_running_var, batch, channels,
                        spatial, momentum, eps);
#endif
}

void adir_tuned_batchnorm_grad_channels(const float *x, const float *gamma, const float *mean,
                                        const float *invstd, const float *dy, float *x_grad,
                                        float *gamma_grad, float *beta_grad, int32_t batch,
                                        int32_t channels, int32_t spatial)
{
#if BN_VECTORS
    bn8_grad(x, gamma, NULL, mean, invstd, dy, x_grad, gamma_grad, beta_grad, batch, channels,
             spatial);
#else
    adir_batchnorm_grad(x, gamma, mean, invstd, dy, x_grad, gamma_grad, beta_grad, batch,
                        channels, spatial);
#endif
}

/* adir_batchnorm_relu_grad: the relu's gradient made where the sums and dx read it. */
void adir_tuned_batchnorm_relu_grad_channels(const float *x, const float *gamma,
                                             const float *beta, const float *mean,
                                             const float *invstd, const float *dy,
                                             float *x_grad, float *gamma_grad, float *beta_grad,
                                             int32_t batch, int32_t channels, int32_t spatial)
{
#if BN_VECTORS
    bn8_grad(x, gamma, beta, mean, invstd, dy, x_grad, gamma_grad, beta_grad, batch, channels,
             spatial);
#else
    adir_batchnorm_relu_grad(x, gamma, beta, mean, invstd, dy, x_grad, gamma_grad, beta_grad,
                             batch, channels, spatial);
#endif
}
