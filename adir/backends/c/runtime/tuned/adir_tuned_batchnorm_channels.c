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
 * The gradient's two sums (sum(dy) and sum(dy * (x - mean))) take one pass over the channel.
 *
 * Where a vector holds 16 floats (AVX-512) and the compiler has vector extensions, a batch of
 * 16 or more samples runs its chains in vector lanes instead, one sample's chain a lane
 * (bn_lanes_sums below): the chains of the samples are independent, as the channels' are. */
#include <math.h>
#include <string.h>

#include "adir_tuned.h"
#include "adir_tuned_transpose.h"

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

/* A relu after the batchnorm (adir.batchnorm_relu and its gradient): the channel's affine
 * value y = x * scale + shift, by the forward pass's expression, is what the relu saw. */
struct bn_relu {
    float scale, shift;
};

/* adir_relu_grad's select, `y <= 0 ? 0 : dy` (relu(y) <= 0 exactly where y <= 0), as a mask
 * of dy's bits (+0 where cleared, the select's 0.0f): compilers made the select a branch in
 * the sums' loops, taken at random on a relu's inputs. */
static ADIR_INLINE float bn_relu_masked(float x, const struct bn_relu *relu, float dy)
{
    const uint32_t keep = 0u - (uint32_t)!(x * relu->scale + relu->shift <= 0.0f);
    uint32_t bits;
    float g;
    memcpy(&bits, &dy, sizeof bits);
    bits &= keep;
    memcpy(&g, &bits, sizeof g);
    return g;
}

/* adir_relu's `v < 0 ? 0 : v`. */
static ADIR_INLINE float bn_relu_of(float v)
{
    return v < 0.0f ? 0.0f : v;
}

/* Sample lanes: 16 samples' chains of one channel in the 16 lanes of a vector. Each sample's
 * row of the channel is contiguous, so a block of 16 rows by 16 pixels is loaded as 16 vectors
 * and transposed in registers (four rounds of shuffles: each swaps the off-diagonal blocks of
 * 8, 4, 2, then 1 lanes), after which vector j holds pixel s + j of the 16 samples: adding the
 * vectors in j order adds each lane's pixels in the reference's order, each element by the
 * reference's expression (so a compiler that fuses the reference's multiply-add fuses this one
 * alike). The pixels past the last whole block are the vectors of the row's last 16 pixels'
 * block not yet summed (DS-CNN's rows of 125 pixels: 13 scalar chains a sample, one sample
 * after the other, took most of the fused gradient's sums with the relu's select in them); a
 * row of fewer than 16 pixels, and the samples past the last 16, run the reference's scalar
 * loop. gcc 12 and clang have __builtin_shufflevector. ResNet-8's 16 x 16 x 1024 activations
 * at batch 16: the sum of squares 75 -> 32 us, the plain sum 51 -> 34 us. */
#if ADIR_TRANSPOSE16
#define BN_SAMPLE_LANES 16
typedef adir_lanes16 bn_lanes;
typedef int32_t bn_lane_mask __attribute__((vector_size(64)));

/* rows[i] = the 16 floats at x + i * step. */
static ADIR_INLINE void bn_load_block(const float *x, size_t step, bn_lanes rows[BN_SAMPLE_LANES])
{
    int32_t i;
    for (i = 0; i < BN_SAMPLE_LANES; ++i) {
        memcpy(&rows[i], x + (size_t)i * step, sizeof rows[i]);
    }
}

/* One sample's partial sum of channel c (row at x), element after element, as the reference:
 * sum(x), or with `squares` sum((x - centre)^2); with dy, sum(g) into *dy_sum and
 * sum(g * (x - centre)) returned, g = dy, or with `relu` the relu's gradient bn_relu_masked. */
static float bn_row_sum(const float *restrict x, const float *restrict dy, float centre,
                        int squares, const struct bn_relu *relu, int32_t from, int32_t spatial,
                        float *restrict dy_sum, float partial)
{
    int32_t s;
    for (s = from; s < spatial; ++s) {
        if (dy != NULL) {
            const float d = x[s] - centre;
            const float g = relu != NULL ? bn_relu_masked(x[s], relu, dy[s]) : dy[s];
            *dy_sum += g;
            partial += g * d;
        } else if (squares) {
            const float d = x[s] - centre;
            partial += d * d;
        } else {
            partial += x[s];
        }
    }
    return partial;
}

/* The relu's gradient (bn_relu_masked) of 16 of a row's pixels: dy's lanes where y <= 0
 * cleared (+0, as the select's 0.0f). */
static ADIR_INLINE bn_lanes bn_lanes_relu_masked(bn_lanes x, const struct bn_relu *relu,
                                                 bn_lanes dy)
{
    const bn_lanes y = x * relu->scale + relu->shift;
    return (bn_lanes)((bn_lane_mask)dy & ~(bn_lane_mask)(y <= 0.0f));
}

/* acc += the terms of a transposed block's vectors j = from .. 15 in j order (pixel after
 * pixel, each lane's order): x, or with `squares` (x - centre)^2, each term in one expression
 * with its add as the reference writes it (clang, which contracts the reference's
 * `partial += d * d` into a fused multiply-add where the target has one, contracts this one
 * alike). */
static ADIR_INLINE void bn_lanes_add(const bn_lanes *rows, float centre, int squares,
                                     int32_t from, bn_lanes *acc)
{
    int32_t j;
    for (j = from; j < BN_SAMPLE_LANES; ++j) {
        if (squares) {
            const bn_lanes d = rows[j] - centre;
            *acc += d * d;
        } else {
            *acc += rows[j];
        }
    }
}

/* One block of 16 rows (the samples, `step` apart) by 16 pixels added into the lanes' sums,
 * its vectors j = from .. 15 in j order: acc += x, or with `squares` (x - centre)^2; with dy,
 * dy_acc += g and acc += g * (x - centre), g = dy or with `relu` bn_lanes_relu_masked's g.
 * With `cache` (the plain sum), the transposed block is also stored there, for the sum of
 * squares to read (bn_lanes_add on it) instead of loading and transposing x again. Inlined:
 * `from` 0 and the modes constant in the whole blocks' loop. */
static ADIR_INLINE void bn_lanes_block(const float *x, const float *dy, size_t step,
                                       float centre, int squares, const struct bn_relu *relu,
                                       int32_t from, bn_lanes *acc, bn_lanes *dy_acc,
                                       bn_lanes *restrict cache)
{
    bn_lanes rows[BN_SAMPLE_LANES];
    bn_load_block(x, step, rows);
    adir_transpose16(rows);
    if (dy != NULL) {
        bn_lanes dy_rows[BN_SAMPLE_LANES];
        int32_t j;
        bn_load_block(dy, step, dy_rows);
        adir_transpose16(dy_rows);
        for (j = from; j < BN_SAMPLE_LANES; ++j) {
            const bn_lanes g =
                relu != NULL ? bn_lanes_relu_masked(rows[j], relu, dy_rows[j]) : dy_rows[j];
            *dy_acc += g;
            *acc += g * (rows[j] - centre);
        }
        return;
    }
    if (cache != NULL) {
        memcpy(cache, rows, sizeof rows);
    }
    bn_lanes_add(rows, centre, squares, from, acc);
}

/* The transposed blocks a channel's plain sum keeps for its sum of squares: 16 KB (DS-CNN's
 * 16 x 125 pixels take 8 blocks of 16 vectors, ResNet-8's 16 x 256 16), two such caches on the
 * stack (bn8_statistics); a channel with more blocks transposes x twice. */
#define BN_CACHE_VECTORS 256

/* Whether bn_lanes_sums may keep the channel's transposed blocks in BN_CACHE_VECTORS. */
static int bn_lanes_cache_fits(int32_t batch, int32_t spatial)
{
    const int32_t blocks = (spatial + BN_SAMPLE_LANES - 1) / BN_SAMPLE_LANES;
    return spatial >= BN_SAMPLE_LANES &&
           (size_t)(batch / BN_SAMPLE_LANES) * (size_t)blocks * BN_SAMPLE_LANES <=
               BN_CACHE_VECTORS;
}

/* A channel's sum of squares from the blocks its plain sum kept, run beside the next
 * channel's plain sum (bn_lanes_sums' `beside`): alone, its chain of dependent adds (16 a
 * block, 3 to 4 cycles each) left the core idle between them, where the plain sum is bound by
 * its transposes' shuffles; side by side, both chains keep their order. */
struct bn_lanes_beside {
    const bn_lanes *cache; /* the channel's kept blocks */
    float centre;          /* its mean */
    int32_t c;             /* the channel (its samples past the last 16 run the scalar loop) */
    float total;           /* its sum of squares, written */
};

/* total = the sum over channel c in the reference's order (a partial per sample, then their
 * total in sample order): of x, or with `squares` of (x - centre)^2; with dy, also
 * *dy_total = sum(dy), and total = sum(dy * (x - centre)). With `cache` (bn_lanes_cache_fits),
 * the plain sum stores its transposed blocks there and the sum of squares reads them. With
 * `beside` (a plain sum that keeps its blocks), the sum of squares of beside->c too, block for
 * block, from beside->cache. Inlined into bn_lanes_sums and bn_lanes_sums_beside, so that the
 * gradient's sums do not carry `beside`'s code (the portable -O2 build's gradient took 2 us
 * more a call with it). */
static ADIR_INLINE float bn_lanes_sums_of(const float *restrict x, const float *restrict dy,
                                          float centre, int squares,
                                          const struct bn_relu *relu, int32_t batch,
                                          int32_t channels, int32_t spatial, int32_t c,
                                          float *restrict dy_total, bn_lanes *restrict cache,
                                          struct bn_lanes_beside *restrict beside)
{
    const size_t step = (size_t)channels * (size_t)spatial;
    const int cached = cache != NULL && squares;
    bn_lanes *store = cached ? NULL : cache;
    const bn_lanes *kept = beside != NULL ? beside->cache : NULL;
    float total = 0.0f, dy_sum_total = 0.0f, beside_total = 0.0f;
    int32_t i0 = 0, i, s;
    for (; i0 + BN_SAMPLE_LANES <= batch; i0 += BN_SAMPLE_LANES) {
        const size_t at = bn8_row(i0, c, channels, spatial);
        bn_lanes acc = {0.0f}, dy_acc = {0.0f}, beside_acc = {0.0f};
        float partial[BN_SAMPLE_LANES], dy_partial[BN_SAMPLE_LANES];
        for (s = 0; s + BN_SAMPLE_LANES <= spatial; s += BN_SAMPLE_LANES) {
            if (cached) {
                bn_lanes_add(cache, centre, 1, 0, &acc);
                cache += BN_SAMPLE_LANES;
                continue;
            }
            bn_lanes_block(x + at + (size_t)s, dy != NULL ? dy + at + (size_t)s : NULL, step,
                           centre, squares, relu, 0, &acc, &dy_acc, store);
            if (store != NULL) {
                store += BN_SAMPLE_LANES;
            }
            if (kept != NULL) {
                bn_lanes_add(kept, beside->centre, 1, 0, &beside_acc);
                kept += BN_SAMPLE_LANES;
            }
        }
        /* The pixels past the last whole block: the row's last 16 pixels' block, from the
         * first one not yet summed (vector j holds pixel spatial - 16 + j). */
        if (s > 0 && s < spatial) {
            const int32_t first = spatial - BN_SAMPLE_LANES;
            if (cached) {
                bn_lanes_add(cache, centre, 1, s - first, &acc);
                cache += BN_SAMPLE_LANES;
            } else {
                bn_lanes_block(x + at + (size_t)first,
                               dy != NULL ? dy + at + (size_t)first : NULL, step, centre,
                               squares, relu, s - first, &acc, &dy_acc, store);
                if (store != NULL) {
                    store += BN_SAMPLE_LANES;
                }
                if (kept != NULL) {
                    bn_lanes_add(kept, beside->centre, 1, s - first, &beside_acc);
                    kept += BN_SAMPLE_LANES;
                }
            }
            s = spatial;
        }
        memcpy(partial, &acc, sizeof partial);
        memcpy(dy_partial, &dy_acc, sizeof dy_partial);
        for (i = 0; i < BN_SAMPLE_LANES; ++i) {
            const size_t row = at + (size_t)i * step;
            partial[i] = bn_row_sum(x + row, dy != NULL ? dy + row : NULL, centre, squares, relu,
                                    s, spatial, &dy_partial[i], partial[i]);
        }
        for (i = 0; i < BN_SAMPLE_LANES; ++i) {
            total += partial[i];
            dy_sum_total += dy_partial[i];
        }
        if (beside != NULL) {
            /* the kept blocks cover the rows whole (bn_lanes_cache_fits: 16 pixels or more) */
            memcpy(partial, &beside_acc, sizeof partial);
            for (i = 0; i < BN_SAMPLE_LANES; ++i) {
                beside_total += partial[i];
            }
        }
    }
    for (; i0 < batch; ++i0) {
        const size_t row = bn8_row(i0, c, channels, spatial);
        float dy_partial = 0.0f;
        total += bn_row_sum(x + row, dy != NULL ? dy + row : NULL, centre, squares, relu, 0,
                            spatial, &dy_partial, 0.0f);
        dy_sum_total += dy_partial;
        if (beside != NULL) {
            beside_total += bn_row_sum(x + bn8_row(i0, beside->c, channels, spatial), NULL,
                                       beside->centre, 1, NULL, 0, spatial, &dy_partial, 0.0f);
        }
    }
    if (dy_total != NULL) {
        *dy_total = dy_sum_total;
    }
    if (beside != NULL) {
        beside->total = beside_total;
    }
    return total;
}

ADIR_NOINLINE static float bn_lanes_sums(const float *restrict x, const float *restrict dy,
                                         float centre, int squares, const struct bn_relu *relu,
                                         int32_t batch, int32_t channels, int32_t spatial,
                                         int32_t c, float *restrict dy_total,
                                         bn_lanes *restrict cache)
{
    return bn_lanes_sums_of(x, dy, centre, squares, relu, batch, channels, spatial, c,
                            dy_total, cache, NULL);
}

/* The plain sum of channel c, its blocks kept in `cache`, beside `beside`'s sum of squares. */
ADIR_NOINLINE static float bn_lanes_sums_beside(const float *restrict x, int32_t batch,
                                                int32_t channels, int32_t spatial, int32_t c,
                                                bn_lanes *restrict cache,
                                                struct bn_lanes_beside *restrict beside)
{
    return bn_lanes_sums_of(x, NULL, 0.0f, 0, NULL, batch, channels, spatial, c, NULL, cache,
                            beside);
}

/* The passes that write an element on its own, over a row of spatial >= 16 pixels: 16 pixels
 * a vector, the last vector overlapping the one before it (its pixels computed and stored
 * again, the same values: the output is not an input's buffer). gcc's vectorized loops ran the
 * pixels past a row's last whole vector one at a time (DS-CNN's rows of 125 pixels: 13 of
 * them), the relu's mask in integer registers: the fused gradient's dx pass took 27 us of its
 * 60 at batch 16 on Zen 4. Each element by the scalar loop's expression. */
static ADIR_INLINE int32_t bn_lanes_next(int32_t s, int32_t spatial)
{
    return s + 2 * BN_SAMPLE_LANES <= spatial ? s + BN_SAMPLE_LANES : spatial - BN_SAMPLE_LANES;
}

/* y = x * scale + shift, or with `relu` adir_relu's `v < 0 ? 0 : v` of it (v kept where not
 * below 0: -0 and NaN as the select keeps them). */
static void bn_lanes_affine_row(const float *restrict x, float scale, float shift, int relu,
                                int32_t spatial, float *restrict y)
{
    int32_t s = 0;
    for (;;) {
        bn_lanes v;
        memcpy(&v, x + s, sizeof v);
        v = v * scale + shift;
        if (relu) {
            v = (bn_lanes)((bn_lane_mask)v & ~(bn_lane_mask)(v < 0.0f));
        }
        memcpy(y + s, &v, sizeof v);
        if (s + BN_SAMPLE_LANES == spatial) {
            return;
        }
        s = bn_lanes_next(s, spatial);
    }
}

/* dx = (g - mean_dy - (x - centre) * projection) * factor, g = dy or with `relu` its
 * gradient (bn_lanes_relu_masked). */
static void bn_lanes_dx_row(const float *restrict x, const float *restrict dy,
                            const struct bn_relu *relu, float centre, float mean_dy,
                            float projection, float factor, int32_t spatial,
                            float *restrict dx)
{
    int32_t s = 0;
    for (;;) {
        bn_lanes v, g, d, out;
        memcpy(&v, x + s, sizeof v);
        memcpy(&g, dy + s, sizeof g);
        if (relu != NULL) {
            g = bn_lanes_relu_masked(v, relu, g);
        }
        d = v - centre;
        out = (g - mean_dy - d * projection) * factor;
        memcpy(dx + s, &out, sizeof out);
        if (s + BN_SAMPLE_LANES == spatial) {
            return;
        }
        s = bn_lanes_next(s, spatial);
    }
}
#else
#define BN_SAMPLE_LANES 0
#endif

/* mean[k] and squares[k] = sum((x - mean[k])^2) of channels c .. c + lanes - 1 (see
 * adir_batchnorm; m the count), each sum in the reference's order. */
static void bn8_statistics(const float *restrict x, int32_t lanes, int32_t batch,
                           int32_t channels, int32_t spatial, int32_t c, float m,
                           float *restrict mean, float *restrict squares)
{
    float total[BN_CHANNELS] = {0.0f};
    int32_t k;
#if BN_SAMPLE_LANES
    if (batch >= BN_SAMPLE_LANES && bn_lanes_cache_fits(batch, spatial)) {
        /* channel k's plain sum beside channel k - 1's sum of squares, each keeping its
         * blocks in one of the two caches in turn */
        bn_lanes cache[2][BN_CACHE_VECTORS];
        struct bn_lanes_beside before;
        for (k = 0; k < lanes; ++k) {
            total[k] = k > 0 ? bn_lanes_sums_beside(x, batch, channels, spatial, c + k,
                                                    cache[k % 2], &before)
                             : bn_lanes_sums(x, NULL, 0.0f, 0, NULL, batch, channels, spatial,
                                             c + k, NULL, cache[k % 2]);
            if (k > 0) {
                squares[k - 1] = before.total;
            }
            mean[k] = total[k] / m;
            before.cache = cache[k % 2], before.centre = mean[k], before.c = c + k;
        }
        squares[lanes - 1] = bn_lanes_sums(x, NULL, mean[lanes - 1], 1, NULL, batch, channels,
                                           spatial, c + lanes - 1, NULL,
                                           cache[(lanes - 1) % 2]);
        return;
    }
    if (batch >= BN_SAMPLE_LANES) {
        for (k = 0; k < lanes; ++k) {
            total[k] = bn_lanes_sums(x, NULL, 0.0f, 0, NULL, batch, channels, spatial, c + k,
                                     NULL, NULL);
            mean[k] = total[k] / m;
            squares[k] = bn_lanes_sums(x, NULL, mean[k], 1, NULL, batch, channels, spatial,
                                       c + k, NULL, NULL);
        }
        return;
    }
#endif
    if (lanes == BN_CHANNELS) {
        bn8_sums_block(x, NULL, batch, channels, spatial, c, total);
    } else {
        bn8_sums_one(x, NULL, batch, channels, spatial, c, total);
    }
    for (k = 0; k < lanes; ++k) {
        mean[k] = total[k] / m;
    }
    if (lanes == BN_CHANNELS) {
        bn8_sums_block(x, mean, batch, channels, spatial, c, squares);
    } else {
        bn8_sums_one(x, mean, batch, channels, spatial, c, squares);
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
#if BN_SAMPLE_LANES
            if (spatial >= BN_SAMPLE_LANES && y != x) {
                bn_lanes_affine_row(row, scale, shift, relu, spatial, out);
                continue;
            }
#endif
            if (relu) {
                for (s = 0; s < spatial; ++s) {
                    out[s] = bn_relu_of(row[s] * scale + shift);
                }
            } else {
                for (s = 0; s < spatial; ++s) {
                    out[s] = row[s] * scale + shift;
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

void adir_tuned_batchnorm_channels(const float *x, const float *gamma, const float *beta,
                                   const float *running_mean, const float *running_var,
                                   float *y, float *batch_mean, float *batch_invstd,
                                   float *new_running_mean, float *new_running_var,
                                   int32_t batch, int32_t channels, int32_t spatial,
                                   float momentum, float eps)
{
    bn8_forward(x, gamma, beta, running_mean, running_var, y, batch_mean, batch_invstd,
                new_running_mean, new_running_var, batch, channels, spatial, momentum, eps, 0);
}

/* adir_batchnorm_relu in one pass over the output: relu(x * scale + shift) written. */
void adir_tuned_batchnorm_relu_channels(const float *x, const float *gamma, const float *beta,
                                        const float *running_mean, const float *running_var,
                                        float *y, float *batch_mean, float *batch_invstd,
                                        float *new_running_mean, float *new_running_var,
                                        int32_t batch, int32_t channels, int32_t spatial,
                                        float momentum, float eps)
{
    bn8_forward(x, gamma, beta, running_mean, running_var, y, batch_mean, batch_invstd,
                new_running_mean, new_running_var, batch, channels, spatial, momentum, eps, 1);
}

/* dbeta[k] = sum(dy), dot[k] = sum(dy * (x - centre[k])) over channel c + k (k < lanes), in
 * one pass, each sum in the reference's order. */
static ADIR_INLINE void bn8_grad_sums(const float *restrict x, const float *restrict dy,
                                     const float *restrict centre, int32_t lanes,
                                     int32_t batch, int32_t channels, int32_t spatial, int32_t c,
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

/* Below the sample lanes, adir_batchnorm_relu_grad's relu gradient of channels c .. c + lanes - 1
 * written into g (x_grad: the op is not in place, so it is no operand's buffer) in one pass
 * that vectorizes, before the sums read it as they read relu_grad's output unfused. Computed in
 * the sums' scalar loops, the mask made DS-CNN's batch-of-one step 9% slower
 * (bn8_grad_sums_block 11% -> 26% of it). */
static void bn8_relu_grad_into(const float *restrict x, const float *restrict dy,
                               const struct bn_relu *restrict relus, int32_t lanes,
                               int32_t batch, int32_t channels, int32_t spatial, int32_t c,
                               float *restrict g)
{
    int32_t i, k, s;
    for (i = 0; i < batch; ++i) {
        for (k = 0; k < lanes; ++k) {
            const size_t at = bn8_row(i, c + k, channels, spatial);
            const float *restrict x_row = x + at;
            const float *restrict dy_row = dy + at;
            float *restrict g_row = g + at;
            for (s = 0; s < spatial; ++s) {
                g_row[s] = bn_relu_masked(x_row[s], &relus[k], dy_row[s]);
            }
        }
    }
}

/* The gradient of channels c .. c + lanes - 1 (see adir_batchnorm_grad): per channel the two
 * sums in one pass, each in the reference's order, then dx. */
static ADIR_INLINE void bn8_grad_block(const float *x, const float *gamma, const float *beta,
                                      const float *mean, const float *invstd, const float *dy,
                                      float *x_grad, float *gamma_grad, float *beta_grad,
                                      int32_t lanes, int32_t batch, int32_t channels,
                                      int32_t spatial, int32_t c)
{
    const float m = (float)((size_t)batch * (size_t)spatial);
    float dbeta[BN_CHANNELS], dot[BN_CHANNELS], centre[BN_CHANNELS];
    /* with beta (adir_batchnorm_relu_grad), the relu's affine values, by the forward's
     * expressions of scale and shift */
    struct bn_relu relus[BN_CHANNELS];
    const struct bn_relu *relu = beta != NULL ? relus : NULL;
    int relu_in_x_grad = 0; /* the relu's gradient already in x_grad (bn8_relu_grad_into) */
    int32_t i, k, s;
    for (k = 0; k < lanes; ++k) {
        centre[k] = mean[c + k];
        relus[k].scale = gamma[c + k] * invstd[c + k];
        relus[k].shift = beta != NULL ? beta[c + k] - centre[k] * relus[k].scale : 0.0f;
    }
#if BN_SAMPLE_LANES
    if (batch >= BN_SAMPLE_LANES) {
        for (k = 0; k < lanes; ++k) {
            dot[k] = bn_lanes_sums(x, dy, centre[k], 0, relu != NULL ? &relus[k] : NULL,
                                   batch, channels, spatial, c + k, &dbeta[k], NULL);
        }
    } else
#endif
    {
        const float *g = dy;
        if (relu != NULL) {
            bn8_relu_grad_into(x, dy, relus, lanes, batch, channels, spatial, c, x_grad);
            g = x_grad, relu_in_x_grad = 1;
        }
        if (lanes == BN_CHANNELS) {
            bn8_grad_sums_block(x, g, centre, batch, channels, spatial, c, dbeta, dot);
        } else {
            bn8_grad_sums_one(x, g, centre, batch, channels, spatial, c, dbeta, dot);
        }
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
#if BN_SAMPLE_LANES
            if (spatial >= BN_SAMPLE_LANES && !relu_in_x_grad) {
                bn_lanes_dx_row(x_row, dy_row, relu != NULL ? &relus[k] : NULL, centre[k],
                                mean_dy, projection, factor, spatial, dx_row);
                continue;
            }
#endif
            if (relu_in_x_grad) {
                float *g_row = x_grad + at; /* read and written: not restrict */
                for (s = 0; s < spatial; ++s) {
                    const float d = x_row[s] - centre[k];
                    g_row[s] = (g_row[s] - mean_dy - d * projection) * factor;
                }
            } else if (relu != NULL) {
                for (s = 0; s < spatial; ++s) {
                    const float d = x_row[s] - centre[k];
                    const float g = bn_relu_masked(x_row[s], &relus[k], dy_row[s]);
                    dx_row[s] = (g - mean_dy - d * projection) * factor;
                }
            } else {
                for (s = 0; s < spatial; ++s) {
                    const float d = x_row[s] - centre[k];
                    dx_row[s] = (dy_row[s] - mean_dy - d * projection) * factor;
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

void adir_tuned_batchnorm_grad_channels(const float *x, const float *gamma, const float *mean,
                                        const float *invstd, const float *dy, float *x_grad,
                                        float *gamma_grad, float *beta_grad, int32_t batch,
                                        int32_t channels, int32_t spatial)
{
    bn8_grad(x, gamma, NULL, mean, invstd, dy, x_grad, gamma_grad, beta_grad, batch, channels,
             spatial);
}

/* adir_batchnorm_relu_grad: the relu's gradient made where the sums and dx read it. */
void adir_tuned_batchnorm_relu_grad_channels(const float *x, const float *gamma,
                                             const float *beta, const float *mean,
                                             const float *invstd, const float *dy,
                                             float *x_grad, float *gamma_grad, float *beta_grad,
                                             int32_t batch, int32_t channels, int32_t spatial)
{
    bn8_grad(x, gamma, beta, mean, invstd, dy, x_grad, gamma_grad, beta_grad, batch, channels,
             spatial);
}
