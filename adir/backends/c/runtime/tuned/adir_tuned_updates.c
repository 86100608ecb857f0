/* adir_tuned_updates.c: the tuned updates of the optimizers family: adir_tuned_sgd_update,
 * adir_tuned_momentum_update, adir_tuned_adam_update and their fusions with a weight-gradient
 * matmul (references: adir_sgd_update, ... in reference/adir_optimizers.c). Bit for bit the
 * references' results where the gradient's sums are exact; else they differ only by the order
 * of those sums (and a fused multiply-add's single rounding). */
#include <string.h>

#include "adir_tuned.h"

/* -- parameter updates ---------------------------------------------------------------------- *
 *
 * Each update runs over chunks of at most ADIR_UPDATE_CHUNK elements: a first loop reads every
 * input element and computes into arrays on the stack, then one loop per output stores them.
 * An output may be the buffer of an input (in place), so a single loop that loads and stores
 * through the caller's pointers would need run-time overlap checks, which fail exactly when
 * the update is in place; through locals, each loop vectorizes as it stands. */

#define ADIR_UPDATE_CHUNK 64

/* A scalar core's settings header (the Cortex-M4F's) sets ADIR_OUTER_UPDATES: every update is
 * one pass over its elements, in blocks of ADIR_OUTER_BLOCK elements at constant offsets from
 * one pointer per stream (a batch of one's weight-gradient updates below, and the plain
 * updates: adir_sgd_blocks, ...). */
#ifndef ADIR_OUTER_UPDATES
#define ADIR_OUTER_UPDATES 0
#endif

#ifndef ADIR_OUTER_BLOCK
#define ADIR_OUTER_BLOCK 4
#endif

/* sqrtf may set errno (C99 7.12.1, for a negative argument), so gcc and clang vectorize no
 * loop that calls it unless told -fno-math-errno. Declared const here, it compiles to the
 * vector square root instruction; the value is IEEE's correctly rounded square root either
 * way, only errno is not set (nothing reads it, and Adam's second moment is never negative). */
#if defined(__GNUC__) && !defined(sqrtf)
float sqrtf(float) __attribute__((const));
#endif

/* Adam divides the square root of each second moment by sqrt(1 - beta2^t), one divisor for
 * the whole update. Where the core has double-precision vectors (x86-64, AArch64) that
 * division is a multiplication in double by the divisor's reciprocal 1/c, rounded to double
 * once, and the product rounded to float: bit for bit the float quotient, for every root.
 * Why: the quotient q = x / c of two floats is never within 2^-49 of q (relatively) of a point
 * halfway between two floats (with x = X 2^a, c = C 2^b and such a point h = H 2^(e-24), H odd,
 * x - h c is a nonzero multiple of 2^(e-24+b), so |q - h| >= 2^(e-24) / C > 2^(e-48), while
 * q < 2^(e+1); the same holds below the normal range, where the points are 2^-150 apart),
 * and x * RN(1/c) rounded to double is q times at most (1 + 2^-53)^2, within 2^-51.9 of q: it
 * rounds to the float q rounds to. Zero, infinite and NaN divisors give the quotient's
 * results too (x * inf, x * 0, a NaN's payload). The divider's throughput bounds the update
 * (on Intel's AVX-512 cores a 16-float vsqrtps takes 12 cycles and vdivps 10: the
 * multiplication saves a third of its time); a core without double-precision hardware (the
 * Cortex-M4F) keeps the division. */
#ifndef ADIR_ADAM_DOUBLE_RECIPROCAL
#if defined(__x86_64__) || defined(__aarch64__) || defined(_M_X64) || defined(_M_ARM64)
#define ADIR_ADAM_DOUBLE_RECIPROCAL 1
#else
#define ADIR_ADAM_DOUBLE_RECIPROCAL 0
#endif
#endif

/* Where the multiply-add fuses (ADIR_FMA_FUSES: -march=native on x86-64 and AArch64, the AVX2
 * and AVX-512 versions of a multiversioned build) the same quotient takes three float
 * operations and no conversion (the double product above takes two conversions each way, an
 * extraction and an insertion of a vector's halves: on Sapphire Rapids 12 of a 16-float
 * vector's 28 vector instructions outside the divider): with y = 1/c rounded to float once,
 * q0 = x y, the residual r = c q0 - x (one fused rounding, exact) and q0 - r y (fused) is the
 * float quotient x / c. That is Markstein's theorem (IBM J. Res. Dev. 34(1), 1990; Muller et
 * al., Handbook of Floating-Point Arithmetic, 2nd ed., Theorem 4.10): y within half an ulp of
 * 1/c and q0 within an ulp of x / c make r exact and the corrected quotient the correctly
 * rounded one, if nothing underflows or overflows. Here x is a root, 0 or in [2^-75, 2^64], or
 * infinite or NaN, and the update takes this form only for c in [2^-40, 2^40] (else the
 * division): the quotient lies in [2^-115, 2^104] and r, about x 2^-23, is normal. An infinite
 * or NaN x takes q0 = x y, the quotient's result (x / c); a zero x gives q0 - r y = x with
 * x's sign (r = c q0 - x is +0 for x = +0 and x = -0). Checked against the division for every
 * float in [1, 2), [2^-75, 2^-74) and [2^63, 2^64) for 1000 divisors (among them those of steps
 * 1 to 100 with beta2 = 0.999 and significands of all ones), 8.4e9 quotients, without a miss;
 * kernels_vs_reference.c's divisor cases check it in every build. The Cortex-M path
 * (ADIR_OUTER_UPDATES) keeps its division. */
#ifndef ADIR_FMA_FUSES
#define ADIR_FMA_FUSES 0
#endif
#ifndef ADIR_ADAM_FMA_QUOTIENT
#if ADIR_FMA_FUSES && !ADIR_OUTER_UPDATES
#define ADIR_ADAM_FMA_QUOTIENT 1
#else
#define ADIR_ADAM_FMA_QUOTIENT 0
#endif
#endif

/* The hyperparameters of an update, as its chunks use them. */
struct adir_update {
    float rate, weight_decay, clip_value;
    /* momentum */
    float momentum;
    int nesterov;
    /* Adam: lr / bias_correction1, sqrt(1 - beta2^t), 1 - beta1, beta2, 1 - beta2, eps, and
     * for decoupled weight decay (shrink) the factor keep = 1 - lr * weight_decay. */
    float step_size, correction2, one_minus_beta1, beta2, one_minus_beta2, eps, keep;
    double correction2_reciprocal; /* 1 / correction2 (ADIR_ADAM_DOUBLE_RECIPROCAL) */
    float correction2_inverse; /* 1 / correction2 in float (ADIR_ADAM_FMA_QUOTIENT) */
    int fma_quotient;          /* correction2 in [2^-40, 2^40] (ADIR_ADAM_FMA_QUOTIENT) */
    int shrink;
};

static struct adir_update adir_plain_update(const float *lr, float weight_decay,
                                            float clip_value)
{
    struct adir_update u;
    memset(&u, 0, sizeof u);
    u.rate = lr[0];
    u.weight_decay = weight_decay;
    u.clip_value = clip_value;
    return u;
}

static struct adir_update adir_momentum(const float *lr, float momentum, float weight_decay,
                                        float clip_value, int nesterov)
{
    struct adir_update u = adir_plain_update(lr, weight_decay, clip_value);
    u.momentum = momentum;
    u.nesterov = nesterov;
    return u;
}

static struct adir_update adir_adam(const float *lr, const float *bias_correction1,
                                    const float *bias_correction2_sqrt, double beta1,
                                    double beta2, float eps, float weight_decay,
                                    float clip_value, int decoupled_weight_decay)
{
    /* Decoupled (AdamW): param * (1 - lr * weight_decay), and no L2 term in the gradient. */
    struct adir_update u =
        adir_plain_update(lr, decoupled_weight_decay ? 0.0f : weight_decay, clip_value);
    u.step_size = u.rate / bias_correction1[0];
    u.correction2 = bias_correction2_sqrt[0];
    u.correction2_reciprocal = 1.0 / (double)u.correction2;
    u.correction2_inverse = 1.0f / u.correction2;
    u.fma_quotient =
        ADIR_ADAM_FMA_QUOTIENT && u.correction2 >= 0x1p-40f && u.correction2 <= 0x1p40f;
    u.one_minus_beta1 = (float)(1.0 - beta1);
    u.beta2 = (float)beta2;
    u.one_minus_beta2 = (float)(1.0 - beta2);
    u.eps = eps;
    u.shrink = decoupled_weight_decay && weight_decay != 0.0f;
    u.keep = 1.0f;
    if (u.shrink) {
        const float decay = u.rate * weight_decay;
        u.keep = 1.0f - decay;
    }
    return u;
}

/* One element of each update: the operations of its reference, in its order (each chunk below
 * and each batch-of-one row calls these, so all round alike). `regularized` is 0 when the update
 * has neither weight decay nor clipping: its callers pass a constant, so that a loop over
 * elements tests neither. */

static ADIR_INLINE float adir_sgd_element(const struct adir_update *u, float param, float grad,
                                          int regularized)
{
    const float g =
        regularized ? adir_regularized_grad(grad, param, u->weight_decay, u->clip_value) : grad;
    const float step = u->rate * g;
    return param - step;
}

static ADIR_INLINE float adir_momentum_element(const struct adir_update *u, float param,
                                               float buf, float grad, float *buf_out,
                                               int regularized)
{
    const float g =
        regularized ? adir_regularized_grad(grad, param, u->weight_decay, u->clip_value) : grad;
    const float kept = buf * u->momentum;
    const float b = kept + g;
    const float ahead = u->momentum * b;
    const float nesterov_direction = g + ahead;
    const float direction = u->nesterov ? nesterov_direction : b;
    const float step = u->rate * direction;
    *buf_out = b;
    return param - step;
}

/* A root divided by sqrt(1 - beta2^t), rounded to float (see ADIR_ADAM_DOUBLE_RECIPROCAL and
 * ADIR_ADAM_FMA_QUOTIENT above); fma_quotient, a constant in each caller, is u->fma_quotient. */
static ADIR_INLINE float adir_adam_corrected(const struct adir_update *u, float root,
                                             int fma_quotient)
{
#if ADIR_ADAM_FMA_QUOTIENT
    if (fma_quotient) {
        const float q0 = root * u->correction2_inverse;
        const float residual = ADIR_FMA(u->correction2, q0, -root);
        const float q1 = ADIR_FMA(-residual, u->correction2_inverse, q0);
        return root < INFINITY ? q1 : q0;
    }
#else
    (void)fma_quotient;
#endif
    return ADIR_ADAM_DOUBLE_RECIPROCAL ? (float)((double)root * u->correction2_reciprocal)
                                       : root / u->correction2;
}

static ADIR_INLINE float adir_adam_element(const struct adir_update *u, float param, float m,
                                           float v, float grad, float *m_out, float *v_out,
                                           int regularized, int fma_quotient)
{
    const float g =
        regularized ? adir_regularized_grad(grad, param, u->weight_decay, u->clip_value) : grad;
    const float shrunk = param * u->keep;
    const float p = u->shrink ? shrunk : param;
    const float difference = g - m;
    const float m_step = u->one_minus_beta1 * difference;
    const float m_new = m + m_step;
    const float v_kept = v * u->beta2;
    const float g_scaled = u->one_minus_beta2 * g;
    const float g_squared = g_scaled * g;
    const float v_new = v_kept + g_squared;
    const float root = sqrtf(v_new);
    const float corrected = adir_adam_corrected(u, root, fma_quotient);
    const float denominator = corrected + u->eps;
    const float ratio = m_new / denominator;
    const float step = u->step_size * ratio;
    *m_out = m_new;
    *v_out = v_new;
    return p - step;
}

/* The chunks are inlined into each caller, which passes ADIR_UPDATE_CHUNK as a constant for a
 * whole chunk: gcc -O2 vectorizes only loops whose trip count it knows (a multiple of the
 * vector), and does not clone a function for a constant argument (Adam's update of an MLP's
 * 784 x 256 weight at -O2 -march=native: 873 us with a chunk called, 296 inlined; -O3: 254). */

/* count <= ADIR_UPDATE_CHUNK elements of adir_sgd_update. */
static ADIR_INLINE void adir_sgd_chunk(const struct adir_update *u, const float *param, const float *grad,
                           float *param_out, size_t count)
{
    float new_p[ADIR_UPDATE_CHUNK];
    size_t i;
    for (i = 0; i < count; ++i) {
        new_p[i] = adir_sgd_element(u, param[i], grad[i], 1);
    }
    for (i = 0; i < count; ++i) {
        param_out[i] = new_p[i];
    }
}

/* count <= ADIR_UPDATE_CHUNK elements of adir_momentum_update. */
static ADIR_INLINE void adir_momentum_chunk(const struct adir_update *u, const float *param,
                                const float *buf, const float *grad, float *param_out,
                                float *buf_out, size_t count)
{
    float new_p[ADIR_UPDATE_CHUNK], new_buf[ADIR_UPDATE_CHUNK];
    size_t i;
    for (i = 0; i < count; ++i) {
        new_p[i] = adir_momentum_element(u, param[i], buf[i], grad[i], &new_buf[i], 1);
    }
    for (i = 0; i < count; ++i) {
        buf_out[i] = new_buf[i];
    }
    for (i = 0; i < count; ++i) {
        param_out[i] = new_p[i];
    }
}

/* count <= ADIR_UPDATE_CHUNK elements of adir_adam_update. plain and fma_quotient are
 * constants in each caller: plain, an update without weight decay, clipping or AdamW's decay,
 * so that its loop tests none of them (gcc moves such tests out of the loop, or not: in one
 * build of this file it blended clipping and decay into every vector of the update, and mlp_s's
 * Adam step took 6% longer); fma_quotient as in adir_adam_corrected. */
static ADIR_INLINE void adir_adam_chunk(const struct adir_update *u, const float *param,
                            const float *exp_avg, const float *exp_avg_sq, const float *grad,
                            float *param_out, float *exp_avg_out, float *exp_avg_sq_out,
                            size_t count, int plain, int fma_quotient)
{
    float new_p[ADIR_UPDATE_CHUNK], new_m[ADIR_UPDATE_CHUNK], new_v[ADIR_UPDATE_CHUNK];
    struct adir_update v = *u;
    size_t i;
    if (plain) {
        v.shrink = 0;
    }
    for (i = 0; i < count; ++i) {
        new_p[i] = adir_adam_element(&v, param[i], exp_avg[i], exp_avg_sq[i], grad[i],
                                     &new_m[i], &new_v[i], !plain, fma_quotient);
    }
    for (i = 0; i < count; ++i) {
        exp_avg_out[i] = new_m[i];
    }
    for (i = 0; i < count; ++i) {
        exp_avg_sq_out[i] = new_v[i];
    }
    for (i = 0; i < count; ++i) {
        param_out[i] = new_p[i];
    }
}

/* One pass for a scalar core (ADIR_OUTER_UPDATES): each element read and then written, as the
 * reference does (an output that is its input is the same buffer, so an element is read
 * before it is written), a block of elements at constant offsets between pointer increments.
 * Through locals and stack arrays (the chunks above) the stores and loads would cost as much as
 * the update itself on a core that has no vectors. `regularized` is a constant in each call. */

static ADIR_INLINE void adir_sgd_blocks(const struct adir_update *u, const float *param,
                                        const float *grad, float *out, size_t n,
                                        int regularized)
{
    size_t l;
    for (; n >= ADIR_OUTER_BLOCK; n -= ADIR_OUTER_BLOCK) {
        ADIR_UNROLL
        for (l = 0; l < ADIR_OUTER_BLOCK; ++l) {
            out[l] = adir_sgd_element(u, param[l], grad[l], regularized);
        }
        param += ADIR_OUTER_BLOCK, grad += ADIR_OUTER_BLOCK, out += ADIR_OUTER_BLOCK;
    }
    for (l = 0; l < n; ++l) {
        out[l] = adir_sgd_element(u, param[l], grad[l], regularized);
    }
}

static ADIR_INLINE void adir_momentum_blocks(const struct adir_update *u, const float *param,
                                             const float *buf, const float *grad,
                                             float *param_out, float *buf_out, size_t n,
                                             int regularized)
{
    size_t l;
    for (; n >= ADIR_OUTER_BLOCK; n -= ADIR_OUTER_BLOCK) {
        ADIR_UNROLL
        for (l = 0; l < ADIR_OUTER_BLOCK; ++l) {
            float b;
            const float p = adir_momentum_element(u, param[l], buf[l], grad[l], &b, regularized);
            buf_out[l] = b;
            param_out[l] = p;
        }
        param += ADIR_OUTER_BLOCK, buf += ADIR_OUTER_BLOCK, grad += ADIR_OUTER_BLOCK;
        param_out += ADIR_OUTER_BLOCK, buf_out += ADIR_OUTER_BLOCK;
    }
    for (l = 0; l < n; ++l) {
        float b;
        const float p = adir_momentum_element(u, param[l], buf[l], grad[l], &b, regularized);
        buf_out[l] = b;
        param_out[l] = p;
    }
}

/* Adam's state is read and written through the outputs' pointers when it is updated in place
 * (one pointer fewer per stream: the core has 13 for addresses). */
static ADIR_INLINE void adir_adam_blocks(const struct adir_update *u, const float *param,
                                         const float *exp_avg, const float *exp_avg_sq,
                                         const float *grad, float *param_out,
                                         float *exp_avg_out, float *exp_avg_sq_out, size_t n,
                                         int regularized)
{
    size_t l;
    for (; n >= ADIR_OUTER_BLOCK; n -= ADIR_OUTER_BLOCK) {
        ADIR_UNROLL
        for (l = 0; l < ADIR_OUTER_BLOCK; ++l) {
            float m, v;
            const float p = adir_adam_element(u, param[l], exp_avg[l], exp_avg_sq[l], grad[l],
                                              &m, &v, regularized, 0);
            exp_avg_out[l] = m;
            exp_avg_sq_out[l] = v;
            param_out[l] = p;
        }
        param += ADIR_OUTER_BLOCK, exp_avg += ADIR_OUTER_BLOCK, exp_avg_sq += ADIR_OUTER_BLOCK;
        grad += ADIR_OUTER_BLOCK, param_out += ADIR_OUTER_BLOCK;
        exp_avg_out += ADIR_OUTER_BLOCK, exp_avg_sq_out += ADIR_OUTER_BLOCK;
    }
    for (l = 0; l < n; ++l) {
        float m, v;
        const float p = adir_adam_element(u, param[l], exp_avg[l], exp_avg_sq[l], grad[l], &m,
                                          &v, regularized, 0);
        exp_avg_out[l] = m;
        exp_avg_sq_out[l] = v;
        param_out[l] = p;
    }
}

/* Whether an update has weight decay or clipping (else its loops test for neither). */
static int adir_regularized(const struct adir_update *u)
{
    return u->weight_decay != 0.0f || u->clip_value > 0.0f;
}

void adir_tuned_sgd_update(const float *param, const float *grad, const float *lr, float *param_out,
                           size_t n, float weight_decay, float clip_value)
{
    const struct adir_update u = adir_plain_update(lr, weight_decay, clip_value);
    size_t i;
    if (ADIR_OUTER_UPDATES) {
        if (adir_regularized(&u)) {
            adir_sgd_blocks(&u, param, grad, param_out, n, 1);
        } else {
            adir_sgd_blocks(&u, param, grad, param_out, n, 0);
        }
        return;
    }
    for (i = 0; i < n; i += ADIR_UPDATE_CHUNK) {
        const size_t count = n - i < ADIR_UPDATE_CHUNK ? n - i : ADIR_UPDATE_CHUNK;
        if (count == ADIR_UPDATE_CHUNK) {
            adir_sgd_chunk(&u, param + i, grad + i, param_out + i, ADIR_UPDATE_CHUNK);
        } else {
            adir_sgd_chunk(&u, param + i, grad + i, param_out + i, count);
        }
    }
}

void adir_tuned_momentum_update(const float *param, const float *buf, const float *grad,
                                const float *lr, float *param_out, float *buf_out, size_t n,
                                float momentum, float weight_decay, float clip_value,
                                int nesterov)
{
    const struct adir_update u = adir_momentum(lr, momentum, weight_decay, clip_value, nesterov);
    size_t i;
    if (ADIR_OUTER_UPDATES) {
        if (adir_regularized(&u)) {
            adir_momentum_blocks(&u, param, buf, grad, param_out, buf_out, n, 1);
        } else {
            adir_momentum_blocks(&u, param, buf, grad, param_out, buf_out, n, 0);
        }
        return;
    }
    for (i = 0; i < n; i += ADIR_UPDATE_CHUNK) {
        const size_t count = n - i < ADIR_UPDATE_CHUNK ? n - i : ADIR_UPDATE_CHUNK;
        if (count == ADIR_UPDATE_CHUNK) {
            adir_momentum_chunk(&u, param + i, buf + i, grad + i, param_out + i, buf_out + i, ADIR_UPDATE_CHUNK);
        } else {
            adir_momentum_chunk(&u, param + i, buf + i, grad + i, param_out + i, buf_out + i, count);
        }
    }
}

/* Whether an Adam update takes the plain form (adir_adam_chunk): no weight decay, clipping or
 * AdamW decay, and, where the quotient by sqrt(1 - beta2^t) has its multiply-add form, a divisor
 * in its range. Every other update takes the general form, with the double reciprocal. */
static int adir_adam_plain(const struct adir_update *u)
{
    return !adir_regularized(u) && !u->shrink && (u->fma_quotient || !ADIR_ADAM_FMA_QUOTIENT);
}

/* adir_tuned_adam_update's chunks (plain and fma_quotient: constants, as in adir_adam_chunk). */
static ADIR_INLINE void adir_adam_chunks(const struct adir_update *u, const float *param,
                                         const float *exp_avg, const float *exp_avg_sq,
                                         const float *grad, float *param_out,
                                         float *exp_avg_out, float *exp_avg_sq_out, size_t n,
                                         int plain, int fma_quotient)
{
    size_t i;
    for (i = 0; i < n; i += ADIR_UPDATE_CHUNK) {
        const size_t count = n - i < ADIR_UPDATE_CHUNK ? n - i : ADIR_UPDATE_CHUNK;
        if (count == ADIR_UPDATE_CHUNK) {
            adir_adam_chunk(u, param + i, exp_avg + i, exp_avg_sq + i, grad + i, param_out + i,
                            exp_avg_out + i, exp_avg_sq_out + i, ADIR_UPDATE_CHUNK, plain,
                            fma_quotient);
        } else {
            adir_adam_chunk(u, param + i, exp_avg + i, exp_avg_sq + i, grad + i, param_out + i,
                            exp_avg_out + i, exp_avg_sq_out + i, count, plain, fma_quotient);
        }
    }
}

void adir_tuned_adam_update(const float *param, const float *exp_avg, const float *exp_avg_sq,
                            const float *grad, const float *lr, const float *bias_correction1,
                            const float *bias_correction2_sqrt, float *param_out,
                            float *exp_avg_out, float *exp_avg_sq_out, size_t n, double beta1,
                            double beta2, float eps, float weight_decay, float clip_value,
                            int decoupled_weight_decay)
{
    const struct adir_update u = adir_adam(lr, bias_correction1, bias_correction2_sqrt, beta1,
                                           beta2, eps, weight_decay, clip_value,
                                           decoupled_weight_decay);
    if (ADIR_OUTER_UPDATES) {
        const int in_place =
            param_out == param && exp_avg_out == exp_avg && exp_avg_sq_out == exp_avg_sq;
        if (adir_regularized(&u)) {
            adir_adam_blocks(&u, param, exp_avg, exp_avg_sq, grad, param_out, exp_avg_out,
                             exp_avg_sq_out, n, 1);
        } else if (in_place) {
            adir_adam_blocks(&u, param_out, exp_avg_out, exp_avg_sq_out, grad, param_out,
                             exp_avg_out, exp_avg_sq_out, n, 0);
        } else {
            adir_adam_blocks(&u, param, exp_avg, exp_avg_sq, grad, param_out, exp_avg_out,
                             exp_avg_sq_out, n, 0);
        }
        return;
    }
    if (adir_adam_plain(&u)) {
        adir_adam_chunks(&u, param, exp_avg, exp_avg_sq, grad, param_out, exp_avg_out,
                         exp_avg_sq_out, n, 1, ADIR_ADAM_FMA_QUOTIENT);
    } else {
        adir_adam_chunks(&u, param, exp_avg, exp_avg_sq, grad, param_out, exp_avg_out,
                         exp_avg_sq_out, n, 0, 0);
    }
}

/* -- the updates of a weight-gradient matmul --------------------------------------------------
 *
 * The gradient op_a(a) op_b(b) is computed a panel of MR rows and up to ADIR_UPDATE_CHUNK
 * columns at a time, on the stack, by the GEMM micro-kernel (adir_gemm_sums, matmul's, with k
 * not blocked, so each element's sum is whole); then each row of the panel is updated as a chunk.
 * Panels, not single tiles: the update of a tile would read one cache line from each of its MR rows
 * of the parameter and of each state buffer, more streams at once than the hardware prefetches; a
 * panel's rows are runs of several lines. With a transposed b (a rare layout) the elements are
 * plain dot products. */

#if ADIR_UPDATE_CHUNK % ADIR_GEMM_NR != 0
#error "ADIR_UPDATE_CHUNK must be a multiple of ADIR_GEMM_NR"
#endif

/* The plain Adam update's register tiles (adir_adam_tile): MR x ADIR_UPDATE_TILE_NR, on vector
 * targets (a scalar core's ADIR_OUTER_UPDATES keeps the panels), for a parameter of at most
 * ADIR_ADAM_TILE_FLOATS floats: one whose state streams from the L3 cache takes the panels
 * (on Sapphire Rapids mlp_m's 784 x 256 layer, 2.4 MB with its state, took 1.5 times as long
 * in tiles, and no less with software prefetches of each tile's rows before its sums; on Zen 4
 * its step was 5.5% faster in tiles, not taken for Intel's sake; mlp_s's 784 x 32 layer, 0.3 MB,
 * took 0.87 times as long in tiles). The plain update takes the panels in its plain form, the
 * multiply-add quotient and no tests (on Zen 4 mlp_m's Adam step 544 -> 522 us against the
 * general form's double reciprocal; on Sapphire Rapids 5% longer in one run, within its noise). */
#define ADIR_UPDATE_TILE_NR (2 * ADIR_GEMM_NR)
#ifndef ADIR_ADAM_TILES
#define ADIR_ADAM_TILES (!ADIR_OUTER_UPDATES)
#endif
#ifndef ADIR_ADAM_TILE_FLOATS
#define ADIR_ADAM_TILE_FLOATS 32767
#endif

/* The gradient panel at row i, column j of the product (rows <= MR, cols <= CHUNK). */
struct adir_gradient_panel {
    float grad[ADIR_GEMM_MR][ADIR_UPDATE_CHUNK];
    size_t at; /* i * n + j: where the panel's first element lies in param and its state */
    size_t n;
    int32_t rows, cols;
};

/* One full tile of a plain b into grad (rows ADIR_UPDATE_CHUNK apart): the GEMM micro-kernel's
 * sums, stored with constant strides (whole vectors; at a batch of one, k = 1, the stores are
 * most of the tile's work). */
ADIR_NOINLINE static void adir_gradient_tile(const float *restrict a, size_t a_row,
                                             size_t a_col, const float *restrict b, size_t n,
                                             int32_t k,
                                             float (*restrict grad)[ADIR_UPDATE_CHUNK])
{
    float acc[ADIR_GEMM_MR][ADIR_GEMM_NR];
    int32_t i, j;
    adir_gemm_sums(a, a_row, a_col, b, n, k, acc);
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            grad[i][j] = acc[i][j];
        }
    }
}

/* The same for a tile at the bottom or right edge (rows <= MR, cols <= NR), or of a transposed
 * b (stored n x k: one dot product per element). */
static void adir_gradient_edge(const float *a, size_t a_row, size_t a_col, const float *b,
                               size_t n, int32_t k, int transpose_b, int32_t rows, int32_t cols,
                               float (*grad)[ADIR_UPDATE_CHUNK])
{
    int32_t i, j, p;
    if (transpose_b) {
        for (i = 0; i < rows; ++i) {
            for (j = 0; j < cols; ++j) {
                const float *b_row = b + (size_t)j * (size_t)k;
                float acc = 0.0f;
                for (p = 0; p < k; ++p) {
                    acc += a[(size_t)i * a_row + (size_t)p * a_col] * b_row[p];
                }
                grad[i][j] = acc;
            }
        }
        return;
    }
    for (i = 0; i < rows; ++i) {
        for (j = 0; j < cols; ++j) {
            grad[i][j] = 0.0f;
        }
    }
    for (p = 0; p < k; ++p) {
        const float *b_p = b + (size_t)p * n;
        for (i = 0; i < rows; ++i) {
            const float x = a[(size_t)i * a_row + (size_t)p * a_col];
            for (j = 0; j < cols; ++j) {
                grad[i][j] = ADIR_FMA(x, b_p[j], grad[i][j]);
            }
        }
    }
}

/* A full MR x ADIR_UPDATE_TILE_NR tile of a plain b whose gradient is summed and applied at
 * once (the tile's elements are at `at` in the parameter and its state). */
typedef void (*adir_update_tile)(const float *a, size_t a_row, size_t a_col, const float *b,
                                 size_t n, int32_t k, size_t at, void *context);

/* Calls update(panel, context) for every panel of the m x n product op_a(a) op_b(b), a row of
 * panels at a time, so the update walks its rows of the parameter and its state from left to
 * right (b, k x n, is reread for each row of panels, from the cache when it is small). With a
 * `tile` (not NULL) and a plain b, a row of full tiles is updated by it, tile after tile from
 * left to right, and only the columns left over go through panels. */
static void adir_gradient_panels(const float *a, const float *b, int32_t m, int32_t n,
                                 int32_t k, int transpose_a, int transpose_b,
                                 void (*update)(const struct adir_gradient_panel *, void *),
                                 adir_update_tile tile, void *context)
{
    struct adir_gradient_panel panel;
    /* Element p of row i of op_a(a) is a[i * a_row + p * a_col]. */
    const size_t a_row = transpose_a ? 1u : (size_t)k;
    const size_t a_col = transpose_a ? (size_t)m : 1u;
    int32_t i, start, j;
    panel.n = (size_t)n;
    for (i = 0; i < m; i += ADIR_GEMM_MR) {
        const float *a_tile = a + (size_t)i * a_row;
        panel.rows = m - i < ADIR_GEMM_MR ? m - i : ADIR_GEMM_MR;
        start = 0;
        if (tile && !transpose_b && panel.rows == ADIR_GEMM_MR) {
            for (; start + ADIR_UPDATE_TILE_NR <= n; start += ADIR_UPDATE_TILE_NR) {
                tile(a_tile, a_row, a_col, b + start, panel.n, k,
                     (size_t)i * panel.n + (size_t)start, context);
            }
        }
        for (; start < n; start += ADIR_UPDATE_CHUNK) {
            panel.cols = n - start < ADIR_UPDATE_CHUNK ? n - start : ADIR_UPDATE_CHUNK;
            panel.at = (size_t)i * panel.n + (size_t)start;
            for (j = 0; j < panel.cols; j += ADIR_GEMM_NR) {
                /* Column start + j of op_b(b): in row start + j of b when transposed. */
                const size_t column = (size_t)(start + j);
                const float *b_tile = transpose_b ? b + column * (size_t)k : b + column;
                const int32_t cols =
                    panel.cols - j < ADIR_GEMM_NR ? panel.cols - j : ADIR_GEMM_NR;
                float(*grad)[ADIR_UPDATE_CHUNK] = (float(*)[ADIR_UPDATE_CHUNK]) & panel.grad[0][j];
                if (!transpose_b && panel.rows == ADIR_GEMM_MR && cols == ADIR_GEMM_NR) {
                    adir_gradient_tile(a_tile, a_row, a_col, b_tile, panel.n, k, grad);
                } else {
                    adir_gradient_edge(a_tile, a_row, a_col, b_tile, panel.n, k, transpose_b,
                                       panel.rows, cols, grad);
                }
            }
            update(&panel, context);
        }
    }
}

/* What the panels of a matmul update change: the parameter and its state (up to two buffers,
 * m x n like it), into the outputs. */
struct adir_panel_update {
    struct adir_update u;
    const float *param, *state1, *state2;
    float *param_out, *state1_out, *state2_out;
};

/* Each update of a panel's row is written twice, for a whole panel's width (a constant: the
 * compiler unrolls it into whole vectors) and for the last panel of a row. */

static void adir_sgd_panel(const struct adir_gradient_panel *panel, void *context)
{
    const struct adir_panel_update *t = (const struct adir_panel_update *)context;
    int32_t i;
    for (i = 0; i < panel->rows; ++i) {
        const size_t at = panel->at + (size_t)i * panel->n;
        if (panel->cols == ADIR_UPDATE_CHUNK) {
            adir_sgd_chunk(&t->u, t->param + at, panel->grad[i], t->param_out + at,
                           ADIR_UPDATE_CHUNK);
        } else {
            adir_sgd_chunk(&t->u, t->param + at, panel->grad[i], t->param_out + at,
                           (size_t)panel->cols);
        }
    }
}

static void adir_momentum_panel(const struct adir_gradient_panel *panel, void *context)
{
    const struct adir_panel_update *t = (const struct adir_panel_update *)context;
    int32_t i;
    for (i = 0; i < panel->rows; ++i) {
        const size_t at = panel->at + (size_t)i * panel->n;
        if (panel->cols == ADIR_UPDATE_CHUNK) {
            adir_momentum_chunk(&t->u, t->param + at, t->state1 + at, panel->grad[i],
                                t->param_out + at, t->state1_out + at, ADIR_UPDATE_CHUNK);
        } else {
            adir_momentum_chunk(&t->u, t->param + at, t->state1 + at, panel->grad[i],
                                t->param_out + at, t->state1_out + at, (size_t)panel->cols);
        }
    }
}

/* Adam's panel in the general form (adir_adam_panel) or the plain one (adir_adam_plain_panel):
 * plain and fma_quotient as in adir_adam_chunk. */
static ADIR_INLINE void adir_adam_panel_rows(const struct adir_gradient_panel *panel,
                                             const struct adir_panel_update *t, int plain,
                                             int fma_quotient)
{
    int32_t i;
    for (i = 0; i < panel->rows; ++i) {
        const size_t at = panel->at + (size_t)i * panel->n;
        if (panel->cols == ADIR_UPDATE_CHUNK) {
            adir_adam_chunk(&t->u, t->param + at, t->state1 + at, t->state2 + at,
                            panel->grad[i], t->param_out + at, t->state1_out + at,
                            t->state2_out + at, ADIR_UPDATE_CHUNK, plain, fma_quotient);
        } else {
            adir_adam_chunk(&t->u, t->param + at, t->state1 + at, t->state2 + at,
                            panel->grad[i], t->param_out + at, t->state1_out + at,
                            t->state2_out + at, (size_t)panel->cols, plain, fma_quotient);
        }
    }
}

static void adir_adam_panel(const struct adir_gradient_panel *panel, void *context)
{
    adir_adam_panel_rows(panel, (const struct adir_panel_update *)context, 0, 0);
}

static void adir_adam_plain_panel(const struct adir_gradient_panel *panel, void *context)
{
    adir_adam_panel_rows(panel, (const struct adir_panel_update *)context, 1,
                         ADIR_ADAM_FMA_QUOTIENT);
}

/* One tile of the plain Adam update (adir_adam_plain), MR x ADIR_UPDATE_TILE_NR: its gradient's
 * sums as the GEMM micro-kernel sums them (p in order, one ADIR_FMA a step: the same bits), two
 * of its tiles wide, so that 2 MR accumulators hide the multiply-add's latency (the micro-kernel's
 * MR = 8 on AVX-512 keeps two multiply-adds a cycle busy only without a stall, and summed this
 * weight gradient at half that rate); then each row updated from the registers it was summed in
 * (no panel on the stack), so that the divider's work on one tile may overlap the next tile's
 * multiply-adds. Each row's elements are read before any is written (an output may be its
 * input). */
ADIR_NOINLINE static void adir_adam_tile(const float *restrict a, size_t a_row, size_t a_col,
                                         const float *restrict b, size_t n, int32_t k,
                                         size_t at, void *context)
{
    const struct adir_panel_update *t = (const struct adir_panel_update *)context;
    /* Two micro-kernel tiles side by side (one array of both would stay in memory under gcc). */
    float left[ADIR_GEMM_MR][ADIR_GEMM_NR], right[ADIR_GEMM_MR][ADIR_GEMM_NR];
    struct adir_update u = t->u;
    int32_t i, j, p;
    u.shrink = 0; /* plain: a constant here */
    ADIR_TILE_UNROLL
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        ADIR_TILE_UNROLL
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            left[i][j] = 0.0f;
            right[i][j] = 0.0f;
        }
    }
    for (p = 0; p < k; ++p) {
        const float *restrict b_p = b + (size_t)p * n;
        float x[ADIR_GEMM_MR];
        ADIR_TILE_UNROLL
        for (i = 0; i < ADIR_GEMM_MR; ++i) {
            x[i] = a[(size_t)i * a_row + (size_t)p * a_col];
        }
        ADIR_TILE_UNROLL
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            const float y = b_p[j], z = b_p[ADIR_GEMM_NR + j];
            ADIR_TILE_UNROLL
            for (i = 0; i < ADIR_GEMM_MR; ++i) {
                left[i][j] = ADIR_FMA(x[i], y, left[i][j]);
                right[i][j] = ADIR_FMA(x[i], z, right[i][j]);
            }
        }
    }
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        const size_t row = at + (size_t)i * n;
        float new_p[ADIR_UPDATE_TILE_NR], new_m[ADIR_UPDATE_TILE_NR], new_v[ADIR_UPDATE_TILE_NR];
        for (j = 0; j < ADIR_UPDATE_TILE_NR; ++j) {
            new_p[j] = adir_adam_element(&u, t->param[row + (size_t)j],
                                         t->state1[row + (size_t)j], t->state2[row + (size_t)j],
                                         j < ADIR_GEMM_NR ? left[i][j] : right[i][j - ADIR_GEMM_NR],
                                         &new_m[j], &new_v[j], 0, ADIR_ADAM_FMA_QUOTIENT);
        }
        for (j = 0; j < ADIR_UPDATE_TILE_NR; ++j) {
            t->state1_out[row + (size_t)j] = new_m[j];
        }
        for (j = 0; j < ADIR_UPDATE_TILE_NR; ++j) {
            t->state2_out[row + (size_t)j] = new_v[j];
        }
        for (j = 0; j < ADIR_UPDATE_TILE_NR; ++j) {
            t->param_out[row + (size_t)j] = new_p[j];
        }
    }
}

/* -- a batch of one: the updates of an outer product -----------------------------------------
 *
 * With k = 1 the gradient op_a(a) op_b(b) is the outer product of a (m long) and b (n long),
 * g[i][j] = a[i] * b[j], in every layout. Where the target's settings header sets
 * ADIR_OUTER_UPDATES (a scalar core: the Cortex-M4F), each element of g is computed where its
 * update uses it: one pass over the parameter and its state, and no panel on the stack, whose
 * stores and loads would cost as much as the update itself. Vector targets keep the panels,
 * whose chunks vectorize. Each element is rounded as the reference rounds it: the gradient is
 * its one-term sum 0 + a[i] * b[j], then the update's operations in their order. */

/* The reference's one-term sum: 0 + x * y (so a product of -0 gives +0, as there). */
static ADIR_INLINE float adir_outer_gradient(float x, float y)
{
    return ADIR_FMA(x, y, 0.0f);
}

/* Each row of the parameter is walked by pointers that the loads and stores step (a scalar
 * core does that in the same instruction), several rows at a time so that they share each
 * load of b: ADIR_OUTER_ROWS rows for SGD, ADIR_OUTER_STATE_ROWS for momentum and Adam when
 * they update in place (their usual call), else one (two or three more streams a row would
 * take more integer registers than the core has). In place, each element is read and written
 * through one pointer. `variant`, a constant in each caller, is a set of the flags below. */

#define ADIR_REGULARIZED 1 /* weight decay or clipping */
#define ADIR_SECOND_FORM 2 /* Nesterov momentum, AdamW's decoupled decay */
#define ADIR_IN_PLACE 4    /* every output is its input */
#ifndef ADIR_OUTER_ROWS
#define ADIR_OUTER_ROWS 1
#endif
#ifndef ADIR_OUTER_STATE_ROWS
#define ADIR_OUTER_STATE_ROWS 1
#endif
#define ADIR_OUTER_MAX_ROWS                                                                   \
    (ADIR_OUTER_ROWS > ADIR_OUTER_STATE_ROWS ? ADIR_OUTER_ROWS : ADIR_OUTER_STATE_ROWS)

/* Up to three streams of one row group: in[s][r] is read, out[s][r] written, each stepped by
 * one element (in place, in is out). */
struct adir_outer_streams {
    const float *in[3][ADIR_OUTER_MAX_ROWS];
    float *out[3][ADIR_OUTER_MAX_ROWS];
};

static ADIR_INLINE void adir_outer_open(struct adir_outer_streams *t, int stream,
                                        const float *in, float *out, size_t n, int32_t rows)
{
    int32_t r;
    ADIR_UNROLL
    for (r = 0; r < rows; ++r) {
        t->in[stream][r] = in + (size_t)r * n;
        t->out[stream][r] = out + (size_t)r * n;
    }
}

/* Element l of stream s, row r, read before any of the same element is written; then written. */
#define ADIR_OUTER_READ(t, s, r, l, in_place) ((in_place) ? (t)->out[s][r][l] : (t)->in[s][r][l])
#define ADIR_OUTER_WRITE(t, s, r, l, value) ((t)->out[s][r][l] = (value))

/* Every pointer of `streams` streams of the group moves on by `by` elements. */
static ADIR_INLINE void adir_outer_advance(struct adir_outer_streams *t, int streams,
                                           int32_t rows, size_t by, int in_place)
{
    int s;
    int32_t r;
    ADIR_UNROLL
    for (s = 0; s < streams; ++s) {
        ADIR_UNROLL
        for (r = 0; r < rows; ++r) {
            t->out[s][r] += by;
            if (!in_place) {
                t->in[s][r] += by;
            }
        }
    }
}

/* Element l of each row of the group, for each optimizer; y is b's element. */

static ADIR_INLINE void adir_sgd_outer_element(const struct adir_update *u,
                                               struct adir_outer_streams *t, const float *xs,
                                               float y, size_t l, int32_t rows, int variant)
{
    const int in_place = variant & ADIR_IN_PLACE;
    float new_p[ADIR_OUTER_MAX_ROWS];
    int32_t r;
    ADIR_UNROLL
    for (r = 0; r < rows; ++r) {
        new_p[r] = adir_sgd_element(u, ADIR_OUTER_READ(t, 0, r, l, in_place),
                                    adir_outer_gradient(xs[r], y), variant & ADIR_REGULARIZED);
    }
    ADIR_UNROLL
    for (r = 0; r < rows; ++r) {
        ADIR_OUTER_WRITE(t, 0, r, l, new_p[r]);
    }
}

static ADIR_INLINE void adir_momentum_outer_element(const struct adir_update *u,
                                                    struct adir_outer_streams *t,
                                                    const float *xs, float y, size_t l,
                                                    int32_t rows, int variant)
{
    const int in_place = variant & ADIR_IN_PLACE;
    float new_p[ADIR_OUTER_MAX_ROWS], new_f[ADIR_OUTER_MAX_ROWS];
    int32_t r;
    ADIR_UNROLL
    for (r = 0; r < rows; ++r) {
        new_p[r] = adir_momentum_element(u, ADIR_OUTER_READ(t, 0, r, l, in_place),
                                         ADIR_OUTER_READ(t, 1, r, l, in_place),
                                         adir_outer_gradient(xs[r], y), &new_f[r],
                                         variant & ADIR_REGULARIZED);
    }
    ADIR_UNROLL
    for (r = 0; r < rows; ++r) {
        ADIR_OUTER_WRITE(t, 1, r, l, new_f[r]);
        ADIR_OUTER_WRITE(t, 0, r, l, new_p[r]);
    }
}

static ADIR_INLINE void adir_adam_outer_element(const struct adir_update *u,
                                                struct adir_outer_streams *t, const float *xs,
                                                float y, size_t l, int32_t rows, int variant)
{
    const int in_place = variant & ADIR_IN_PLACE;
    float new_p[ADIR_OUTER_MAX_ROWS], new_m[ADIR_OUTER_MAX_ROWS], new_v[ADIR_OUTER_MAX_ROWS];
    int32_t r;
    ADIR_UNROLL
    for (r = 0; r < rows; ++r) {
        /* The product alone, without the reference's 0 +: they differ only in the sign of a
         * zero gradient, which no result of Adam's step depends on (m + (1 - beta1) (g - m)
         * is +0 for g = +-0 and m = +-0; g enters v squared). */
        new_p[r] = adir_adam_element(u, ADIR_OUTER_READ(t, 0, r, l, in_place),
                                     ADIR_OUTER_READ(t, 1, r, l, in_place),
                                     ADIR_OUTER_READ(t, 2, r, l, in_place), xs[r] * y,
                                     &new_m[r], &new_v[r], variant & ADIR_REGULARIZED, 0);
    }
    ADIR_UNROLL
    for (r = 0; r < rows; ++r) {
        ADIR_OUTER_WRITE(t, 1, r, l, new_m[r]);
        ADIR_OUTER_WRITE(t, 2, r, l, new_v[r]);
        ADIR_OUTER_WRITE(t, 0, r, l, new_p[r]);
    }
}

enum adir_outer_kind { ADIR_OUTER_SGD, ADIR_OUTER_MOMENTUM, ADIR_OUTER_ADAM };

/* One group of `rows` rows of an update of `kind` (a constant, as are rows and variant):
 * blocks of ADIR_OUTER_BLOCK elements, each element at a constant offset from the block's
 * pointers (one step of each pointer a block), then the elements left one by one. */
static ADIR_INLINE void adir_outer_rows(enum adir_outer_kind kind, const struct adir_update *u,
                                        struct adir_outer_streams *t, const float *x,
                                        const float *b, size_t n, int32_t rows, int variant)
{
    const int streams = kind == ADIR_OUTER_SGD ? 1 : kind == ADIR_OUTER_MOMENTUM ? 2 : 3;
    const int in_place = variant & ADIR_IN_PLACE;
    /* The usual call (in place, no decay, no clipping, plain momentum or Adam) in blocks; the
     * others element by element, in less code. */
    const size_t block = variant == ADIR_IN_PLACE ? ADIR_OUTER_BLOCK : 1u;
    struct adir_update v = *u;
    float xs[ADIR_OUTER_MAX_ROWS]; /* copied: a store to an output must not reload it */
    size_t blocks, j, l;
    int32_t r;
    v.nesterov = kind == ADIR_OUTER_MOMENTUM && (variant & ADIR_SECOND_FORM);
    v.shrink = kind == ADIR_OUTER_ADAM && (variant & ADIR_SECOND_FORM);
    ADIR_UNROLL
    for (r = 0; r < rows; ++r) {
        xs[r] = x[r];
    }
    for (blocks = n / block; blocks != 0; --blocks) {
        ADIR_UNROLL
        for (l = 0; l < block; ++l) {
            const float y = b[l];
            if (kind == ADIR_OUTER_SGD) {
                adir_sgd_outer_element(&v, t, xs, y, l, rows, variant);
            } else if (kind == ADIR_OUTER_MOMENTUM) {
                adir_momentum_outer_element(&v, t, xs, y, l, rows, variant);
            } else {
                adir_adam_outer_element(&v, t, xs, y, l, rows, variant);
            }
        }
        b += block;
        adir_outer_advance(t, streams, rows, block, in_place);
    }
    for (j = n % block; j != 0; --j) {
        const float y = *b++;
        if (kind == ADIR_OUTER_SGD) {
            adir_sgd_outer_element(&v, t, xs, y, 0, rows, variant);
        } else if (kind == ADIR_OUTER_MOMENTUM) {
            adir_momentum_outer_element(&v, t, xs, y, 0, rows, variant);
        } else {
            adir_adam_outer_element(&v, t, xs, y, 0, rows, variant);
        }
        adir_outer_advance(t, streams, rows, 1u, in_place);
    }
}

/* The m x n update of `kind` with gradient a b^T (a m long, b n long): groups of `group` rows,
 * then the rows left one by one. in[s] and out[s] are stream s's input and output (m x n). */
static ADIR_INLINE void adir_outer_update(enum adir_outer_kind kind, const struct adir_update *u,
                                          const float *const *in, float *const *out,
                                          const float *a, const float *b, int32_t m, int32_t n,
                                          int32_t group, int variant)
{
    const int streams = kind == ADIR_OUTER_SGD ? 1 : kind == ADIR_OUTER_MOMENTUM ? 2 : 3;
    const size_t sn = (size_t)n;
    struct adir_outer_streams t;
    int32_t i = 0;
    int s;
    for (; i + group <= m; i += group) {
        ADIR_UNROLL
        for (s = 0; s < streams; ++s) {
            adir_outer_open(&t, s, in[s] + (size_t)i * sn, out[s] + (size_t)i * sn, sn, group);
        }
        adir_outer_rows(kind, u, &t, a + i, b, sn, group, variant);
    }
    for (; i < m; ++i) {
        ADIR_UNROLL
        for (s = 0; s < streams; ++s) {
            adir_outer_open(&t, s, in[s] + (size_t)i * sn, out[s] + (size_t)i * sn, sn, 1);
        }
        adir_outer_rows(kind, u, &t, a + i, b, sn, 1, variant);
    }
}

static ADIR_INLINE void adir_sgd_outer(const struct adir_update *u, const float *param,
                                       const float *a, const float *b, float *out, int32_t m,
                                       int32_t n, int variant)
{
    const float *in[1];
    float *outs[1];
    in[0] = param, outs[0] = out;
    adir_outer_update(ADIR_OUTER_SGD, u, in, outs, a, b, m, n,
                      variant == ADIR_IN_PLACE ? ADIR_OUTER_ROWS : 1, variant);
}

static ADIR_INLINE void adir_momentum_outer(const struct adir_update *u, const float *param,
                                            const float *buf, const float *a, const float *b,
                                            float *param_out, float *buf_out, int32_t m,
                                            int32_t n, int variant)
{
    const float *in[2];
    float *outs[2];
    in[0] = param, in[1] = buf, outs[0] = param_out, outs[1] = buf_out;
    adir_outer_update(ADIR_OUTER_MOMENTUM, u, in, outs, a, b, m, n,
                      variant == ADIR_IN_PLACE ? ADIR_OUTER_STATE_ROWS : 1, variant);
}

static ADIR_INLINE void adir_adam_outer(const struct adir_update *u, const float *param,
                                        const float *exp_avg, const float *exp_avg_sq,
                                        const float *a, const float *b, float *param_out,
                                        float *exp_avg_out, float *exp_avg_sq_out, int32_t m,
                                        int32_t n, int variant)
{
    const float *in[3];
    float *outs[3];
    in[0] = param, in[1] = exp_avg, in[2] = exp_avg_sq;
    outs[0] = param_out, outs[1] = exp_avg_out, outs[2] = exp_avg_sq_out;
    adir_outer_update(ADIR_OUTER_ADAM, u, in, outs, a, b, m, n,
                      variant == ADIR_IN_PLACE ? ADIR_OUTER_STATE_ROWS : 1, variant);
}

void adir_tuned_matmul_sgd_update_general(const float *param, const float *a, const float *b,
                                          const float *lr, float *param_out, int32_t m, int32_t n,
                                          int32_t k, int transpose_a, int transpose_b,
                                          float weight_decay, float clip_value)
{
    struct adir_panel_update t;
    memset(&t, 0, sizeof t);
    t.u = adir_plain_update(lr, weight_decay, clip_value);
    if (ADIR_OUTER_UPDATES && k == 1) {
        if (adir_regularized(&t.u)) {
            adir_sgd_outer(&t.u, param, a, b, param_out, m, n, ADIR_REGULARIZED);
        } else if (param_out == param) {
            adir_sgd_outer(&t.u, param, a, b, param_out, m, n, ADIR_IN_PLACE);
        } else {
            adir_sgd_outer(&t.u, param, a, b, param_out, m, n, 0);
        }
        return;
    }
    t.param = param;
    t.param_out = param_out;
    adir_gradient_panels(a, b, m, n, k, transpose_a, transpose_b, adir_sgd_panel, NULL, &t);
}

void adir_tuned_matmul_momentum_update(const float *param, const float *buf, const float *a,
                                       const float *b, const float *lr, float *param_out,
                                       float *buf_out, int32_t m, int32_t n, int32_t k,
                                       int transpose_a, int transpose_b, float momentum,
                                       float weight_decay, float clip_value, int nesterov)
{
    struct adir_panel_update t;
    memset(&t, 0, sizeof t);
    t.u = adir_momentum(lr, momentum, weight_decay, clip_value, nesterov);
    if (ADIR_OUTER_UPDATES && k == 1) {
        const int variant = (adir_regularized(&t.u) ? ADIR_REGULARIZED : 0) |
                            (t.u.nesterov ? ADIR_SECOND_FORM : 0);
        const int in_place = param_out == param && buf_out == buf;
        switch (variant) {
        case 0:
            if (in_place) {
                adir_momentum_outer(&t.u, param, buf, a, b, param_out, buf_out, m, n,
                                    ADIR_IN_PLACE);
            } else {
                adir_momentum_outer(&t.u, param, buf, a, b, param_out, buf_out, m, n, 0);
            }
            break;
        case ADIR_REGULARIZED:
            adir_momentum_outer(&t.u, param, buf, a, b, param_out, buf_out, m, n, 1);
            break;
        case ADIR_SECOND_FORM:
            adir_momentum_outer(&t.u, param, buf, a, b, param_out, buf_out, m, n, 2);
            break;
        default:
            adir_momentum_outer(&t.u, param, buf, a, b, param_out, buf_out, m, n, 3);
            break;
        }
        return;
    }
    t.param = param;
    t.state1 = buf;
    t.param_out = param_out;
    t.state1_out = buf_out;
    adir_gradient_panels(a, b, m, n, k, transpose_a, transpose_b, adir_momentum_panel, NULL,
                         &t);
}

void adir_tuned_matmul_adam_update(const float *param, const float *exp_avg,
                                   const float *exp_avg_sq, const float *a, const float *b,
                                   const float *lr, const float *bias_correction1,
                                   const float *bias_correction2_sqrt, float *param_out,
                                   float *exp_avg_out, float *exp_avg_sq_out, int32_t m, int32_t n,
                                   int32_t k, int transpose_a, int transpose_b, double beta1,
                                   double beta2, float eps, float weight_decay, float clip_value,
                                   int decoupled_weight_decay)
{
    struct adir_panel_update t;
    memset(&t, 0, sizeof t);
    t.u = adir_adam(lr, bias_correction1, bias_correction2_sqrt, beta1, beta2, eps, weight_decay,
                    clip_value, decoupled_weight_decay);
    if (ADIR_OUTER_UPDATES && k == 1) {
        const int variant = (adir_regularized(&t.u) ? ADIR_REGULARIZED : 0) |
                            (t.u.shrink ? ADIR_SECOND_FORM : 0);
        const int in_place =
            param_out == param && exp_avg_out == exp_avg && exp_avg_sq_out == exp_avg_sq;
        switch (variant) {
        case 0:
            if (in_place) {
                adir_adam_outer(&t.u, param, exp_avg, exp_avg_sq, a, b, param_out, exp_avg_out,
                                exp_avg_sq_out, m, n, ADIR_IN_PLACE);
            } else {
                adir_adam_outer(&t.u, param, exp_avg, exp_avg_sq, a, b, param_out, exp_avg_out,
                                exp_avg_sq_out, m, n, 0);
            }
            break;
        case ADIR_REGULARIZED:
            adir_adam_outer(&t.u, param, exp_avg, exp_avg_sq, a, b, param_out, exp_avg_out,
                            exp_avg_sq_out, m, n, 1);
            break;
        case ADIR_SECOND_FORM:
            adir_adam_outer(&t.u, param, exp_avg, exp_avg_sq, a, b, param_out, exp_avg_out,
                            exp_avg_sq_out, m, n, 2);
            break;
        default:
            adir_adam_outer(&t.u, param, exp_avg, exp_avg_sq, a, b, param_out, exp_avg_out,
                            exp_avg_sq_out, m, n, 3);
            break;
        }
        return;
    }
    t.param = param;
    t.state1 = exp_avg;
    t.state2 = exp_avg_sq;
    t.param_out = param_out;
    t.state1_out = exp_avg_out;
    t.state2_out = exp_avg_sq_out;
    if (ADIR_ADAM_TILES && adir_adam_plain(&t.u) &&
        (size_t)m * (size_t)n <= ADIR_ADAM_TILE_FLOATS) {
        adir_gradient_panels(a, b, m, n, k, transpose_a, transpose_b, adir_adam_plain_panel,
                             adir_adam_tile, &t);
    } else if (adir_adam_plain(&t.u)) {
        adir_gradient_panels(a, b, m, n, k, transpose_a, transpose_b, adir_adam_plain_panel,
                             NULL, &t);
    } else {
        adir_gradient_panels(a, b, m, n, k, transpose_a, transpose_b, adir_adam_panel, NULL,
                             &t);
    }
}

/* --- adir_tuned_matmul_sgd_update ---------------------------------------------------------
 *
 * With a plain b (the usual weight gradient, dy^T x, is transpose_a): register tiles of MR x NR
 * elements of the product, each a sum of outer products over p as in adir_tuned_matmul, then
 * updated at once, so the product is never stored. k (a batch) is not blocked: each tile's sums are
 * whole before lr multiplies them. With a fast fused multiply-add (C99's FP_FAST_FMAF) each step of
 * the sums rounds once. Tile sizes come from the target's settings header (targets/): the GEMM
 * micro-kernel's. */

/* out[i * n + j] = param[i * n + j] - rate * (the sum over p < k of a[i * a_row + p * a_col] *
 * b[p * n + j]) for i < MR, j < NR: one full tile, its sums by the GEMM micro-kernel. */
ADIR_NOINLINE static void adir_sgd_tile(const float *param, const float *restrict a,
                                       size_t a_row, size_t a_col, const float *restrict b,
                                       float *out, size_t n, int32_t k, float rate)
{
    float sums[ADIR_GEMM_MR][ADIR_GEMM_NR], updated[ADIR_GEMM_MR][ADIR_GEMM_NR];
    int32_t i, j;
    adir_gemm_sums(a, a_row, a_col, b, n, k, sums);
    /* The whole tile of param is read before any of out is written (out may be param): so
     * the compiler need not fear that a store changes a later load. */
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            const float step = rate * sums[i][j];
            updated[i][j] = param[(size_t)i * n + (size_t)j] - step;
        }
    }
    for (i = 0; i < ADIR_GEMM_MR; ++i) {
        for (j = 0; j < ADIR_GEMM_NR; ++j) {
            out[(size_t)i * n + (size_t)j] = updated[i][j];
        }
    }
}

/* The same for a tile at the bottom or right edge: rows <= MR, cols <= NR. */
ADIR_NOINLINE static void adir_sgd_edge(const float *param, const float *restrict a,
                                       size_t a_row, size_t a_col, const float *restrict b,
                                       float *out, size_t n, int32_t rows, int32_t cols,
                                       int32_t k, float rate)
{
    float acc[ADIR_GEMM_MR][ADIR_GEMM_NR];
    int32_t i, j, p;
    for (i = 0; i < rows; ++i) {
        for (j = 0; j < cols; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (p = 0; p < k; ++p) {
        const float *restrict b_p = b + (size_t)p * n;
        for (i = 0; i < rows; ++i) {
            const float x = a[(size_t)i * a_row + (size_t)p * a_col];
            for (j = 0; j < cols; ++j) {
                acc[i][j] = ADIR_FMA(x, b_p[j], acc[i][j]);
            }
        }
    }
    for (i = 0; i < rows; ++i) {
        for (j = 0; j < cols; ++j) {
            const size_t at = (size_t)i * n + (size_t)j;
            const float step = rate * acc[i][j];
            out[at] = param[at] - step;
        }
    }
}

void adir_tuned_matmul_sgd_update(const float *param, const float *a, const float *b,
                                  const float *lr, float *out, int32_t m, int32_t n, int32_t k,
                                  int transpose_a, int transpose_b)
{
    const float rate = lr[0];
    const size_t sn = (size_t)n;
    /* Element p of row i of op_a(a) is a[i * a_row + p * a_col]. */
    const size_t a_row = transpose_a ? 1u : (size_t)k;
    const size_t a_col = transpose_a ? (size_t)m : 1u;
    int32_t i, j, p;
    if (ADIR_OUTER_UPDATES && k == 1) {
        const struct adir_update u = adir_plain_update(lr, 0.0f, 0.0f);
        if (out == param) {
            adir_sgd_outer(&u, param, a, b, out, m, n, ADIR_IN_PLACE);
        } else {
            adir_sgd_outer(&u, param, a, b, out, m, n, 0);
        }
        return;
    }
    if (transpose_b) {
        /* Rows of b are contiguous in p: one dot product per element (a rare layout). */
        for (i = 0; i < m; ++i) {
            for (j = 0; j < n; ++j) {
                const float *b_row = b + (size_t)j * (size_t)k;
                const size_t at = (size_t)i * sn + (size_t)j;
                float acc = 0.0f, step;
                for (p = 0; p < k; ++p) {
                    acc += a[(size_t)i * a_row + (size_t)p * a_col] * b_row[p];
                }
                step = rate * acc;
                out[at] = param[at] - step;
            }
        }
        return;
    }
    for (j = 0; j < n; j += ADIR_GEMM_NR) {
        const int32_t cols = n - j < ADIR_GEMM_NR ? n - j : ADIR_GEMM_NR;
        for (i = 0; i < m; i += ADIR_GEMM_MR) {
            const int32_t rows = m - i < ADIR_GEMM_MR ? m - i : ADIR_GEMM_MR;
            const size_t at = (size_t)i * sn + (size_t)j;
            const float *a_tile = a + (size_t)i * a_row;
            if (rows == ADIR_GEMM_MR && cols == ADIR_GEMM_NR) {
                adir_sgd_tile(param + at, a_tile, a_row, a_col, b + j, out + at, sn, k, rate);
            } else {
                adir_sgd_edge(param + at, a_tile, a_row, a_col, b + j, out + at, sn, rows, cols,
                              k, rate);
            }
        }
    }
}
