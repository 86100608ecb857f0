/* adir_optimizers.c: the reference kernels of the optimizers family (declared in
 * adir_optimizers.h). */
#include <math.h>

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

void adir_bias_correction(const float *t, float *out, double beta)
{
    out[0] = (float)(1.0 - pow(beta, adir_step_count(t)));
}

/* --- adir_matmul_sgd_update -------------------------------------------------------------------
 *
 * With a plain b (the usual weight gradient, dy^T x, is transpose_a): register tiles of MR x NR
 * elements of the product, each a sum of outer products over p as in adir_matmul, then updated
 * at once, so the product is never stored. k (a batch) is not blocked: each tile's sums are
 * whole before lr multiplies them. With a fast fused multiply-add (C99's FP_FAST_FMAF) each
 * step of the sums rounds once. Tile sizes follow the vector registers the compiler targets. */

#if defined(FP_FAST_FMAF)
#define ADIR_SGD_FMA(x, y, acc) fmaf(x, y, acc)
#else
#define ADIR_SGD_FMA(x, y, acc) ((acc) + (x) * (y))
#endif

/* The tiles are compiled on their own, not inlined into the loops over tiles: inlined, clang
 * vectorizes those outer loops instead and loses the tile's registers. */
#if defined(__GNUC__)
#define ADIR_SGD_NOINLINE __attribute__((noinline))
#else
#define ADIR_SGD_NOINLINE
#endif

/* gcc below -O3 unrolls no loop that grows the code, and without AVX it would then leave the
 * tile in memory: it is told to unroll the tile's loops (a no-op elsewhere). */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__AVX__)
#define ADIR_SGD_UNROLL _Pragma("GCC unroll 16")
#else
#define ADIR_SGD_UNROLL
#endif

#ifndef ADIR_SGD_MR
#if defined(__AVX512F__)
#define ADIR_SGD_MR 8
#define ADIR_SGD_NR 16
#elif defined(__AVX__)
#define ADIR_SGD_MR 4
#define ADIR_SGD_NR 16
#else
#define ADIR_SGD_MR 4
#define ADIR_SGD_NR 8
#endif
#endif

/* out[i * n + j] = param[i * n + j] - rate * (the sum over p < k of a[i * a_row + p * a_col] *
 * b[p * n + j]) for i < MR, j < NR: one full tile. */
ADIR_SGD_NOINLINE static void adir_sgd_tile(const float *param, const float *restrict a, size_t a_row,
                          size_t a_col, const float *restrict b, float *out, size_t n, int32_t k,
                          float rate)
{
    float acc[ADIR_SGD_MR][ADIR_SGD_NR], updated[ADIR_SGD_MR][ADIR_SGD_NR];
    int32_t i, j, p;
    for (i = 0; i < ADIR_SGD_MR; ++i) {
        for (j = 0; j < ADIR_SGD_NR; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (p = 0; p < k; ++p) {
        const float *restrict b_p = b + (size_t)p * n;
        float x[ADIR_SGD_MR];
        ADIR_SGD_UNROLL
        for (i = 0; i < ADIR_SGD_MR; ++i) {
            x[i] = a[(size_t)i * a_row + (size_t)p * a_col];
        }
        /* Rows innermost: so gcc, too, keeps the tile in registers on every target. */
        ADIR_SGD_UNROLL
        for (j = 0; j < ADIR_SGD_NR; ++j) {
            const float y = b_p[j];
            ADIR_SGD_UNROLL
            for (i = 0; i < ADIR_SGD_MR; ++i) {
                acc[i][j] = ADIR_SGD_FMA(x[i], y, acc[i][j]);
            }
        }
    }
    /* The whole tile of param is read before any of out is written (out may be param): so
     * the compiler need not fear that a store changes a later load. */
    for (i = 0; i < ADIR_SGD_MR; ++i) {
        for (j = 0; j < ADIR_SGD_NR; ++j) {
            const float step = rate * acc[i][j];
            updated[i][j] = param[(size_t)i * n + (size_t)j] - step;
        }
    }
    for (i = 0; i < ADIR_SGD_MR; ++i) {
        for (j = 0; j < ADIR_SGD_NR; ++j) {
            out[(size_t)i * n + (size_t)j] = updated[i][j];
        }
    }
}

/* The same for a tile at the bottom or right edge: rows <= MR, cols <= NR. */
ADIR_SGD_NOINLINE static void adir_sgd_edge(const float *param, const float *restrict a, size_t a_row,
                          size_t a_col, const float *restrict b, float *out, size_t n,
                          int32_t rows, int32_t cols, int32_t k, float rate)
{
    float acc[ADIR_SGD_MR][ADIR_SGD_NR];
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
                acc[i][j] = ADIR_SGD_FMA(x, b_p[j], acc[i][j]);
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

void adir_matmul_sgd_update(const float *param, const float *a, const float *b, const float *lr,
                            float *out, int32_t m, int32_t n, int32_t k, int transpose_a,
                            int transpose_b)
{
    const float rate = lr[0];
    const size_t sn = (size_t)n;
    /* Element p of row i of op_a(a) is a[i * a_row + p * a_col]. */
    const size_t a_row = transpose_a ? 1u : (size_t)k;
    const size_t a_col = transpose_a ? (size_t)m : 1u;
    int32_t i, j, p;
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
    for (j = 0; j < n; j += ADIR_SGD_NR) {
        const int32_t cols = n - j < ADIR_SGD_NR ? n - j : ADIR_SGD_NR;
        for (i = 0; i < m; i += ADIR_SGD_MR) {
            const int32_t rows = m - i < ADIR_SGD_MR ? m - i : ADIR_SGD_MR;
            const size_t at = (size_t)i * sn + (size_t)j;
            const float *a_tile = a + (size_t)i * a_row;
            if (rows == ADIR_SGD_MR && cols == ADIR_SGD_NR) {
                adir_sgd_tile(param + at, a_tile, a_row, a_col, b + j, out + at, sn, k, rate);
            } else {
                adir_sgd_edge(param + at, a_tile, a_row, a_col, b + j, out + at, sn, rows, cols,
                              k, rate);
            }
        }
    }
}

/* -- parameter updates ---------------------------------------------------------------------- */

/* The gradient as an update sees it: clipped to [-clip_value, clip_value] when clip_value > 0
 * (adir_minimum's, then adir_maximum's formula: a nan passes), then plus weight_decay * param
 * when weight_decay is not 0. */
static float adir_regularized_grad(float grad, float param, float weight_decay, float clip_value)
{
    float g = grad;
    if (clip_value > 0.0f) {
        const float low = -clip_value;
        g = (g <= clip_value || isnan(g)) ? g : clip_value;
        g = (g >= low || isnan(g)) ? g : low;
    }
    if (weight_decay != 0.0f) {
        const float decay = weight_decay * param;
        g = g + decay;
    }
    return g;
}

void adir_sgd_update(const float *param, const float *grad, const float *lr, float *param_out,
                     size_t n, float weight_decay, float clip_value)
{
    const float rate = lr[0];
    size_t i;
    for (i = 0; i < n; ++i) {
        const float p = param[i];
        const float g = adir_regularized_grad(grad[i], p, weight_decay, clip_value);
        const float step = rate * g;
        param_out[i] = p - step;
    }
}

void adir_momentum_update(const float *param, const float *buf, const float *grad,
                          const float *lr, float *param_out, float *buf_out, size_t n,
                          float momentum, float weight_decay, float clip_value, int nesterov)
{
    const float rate = lr[0];
    size_t i;
    for (i = 0; i < n; ++i) {
        const float p = param[i];
        const float g = adir_regularized_grad(grad[i], p, weight_decay, clip_value);
        const float kept = buf[i] * momentum;
        const float new_buf = kept + g;
        float direction = new_buf, step;
        if (nesterov) {
            const float ahead = momentum * new_buf;
            direction = g + ahead;
        }
        step = rate * direction;
        buf_out[i] = new_buf;
        param_out[i] = p - step;
    }
}

void adir_adam_update(const float *param, const float *exp_avg, const float *exp_avg_sq,
                      const float *grad, const float *lr, const float *bias_correction1,
                      const float *bias_correction2_sqrt, float *param_out, float *exp_avg_out,
                      float *exp_avg_sq_out, size_t n, double beta1, double beta2, float eps,
                      float weight_decay, float clip_value, int decoupled_weight_decay)
{
    const float rate = lr[0];
    const float step_size = rate / bias_correction1[0];
    const float correction2 = bias_correction2_sqrt[0];
    const float one_minus_beta1 = (float)(1.0 - beta1);
    const float beta2_float = (float)beta2;
    const float one_minus_beta2 = (float)(1.0 - beta2);
    /* Decoupled (AdamW): param * (1 - lr * weight_decay), and no L2 term in the gradient. */
    const int shrink = decoupled_weight_decay && weight_decay != 0.0f;
    const float l2 = decoupled_weight_decay ? 0.0f : weight_decay;
    float keep = 1.0f;
    size_t i;
    if (shrink) {
        const float decay = rate * weight_decay;
        keep = 1.0f - decay;
    }
    for (i = 0; i < n; ++i) {
        const float g = adir_regularized_grad(grad[i], param[i], l2, clip_value);
        const float p = shrink ? param[i] * keep : param[i];
        const float m = exp_avg[i], v = exp_avg_sq[i];
        const float difference = g - m;
        const float m_step = one_minus_beta1 * difference;
        const float new_m = m + m_step;
        const float v_kept = v * beta2_float;
        const float g_scaled = one_minus_beta2 * g;
        const float g_squared = g_scaled * g;
        const float new_v = v_kept + g_squared;
        const float root = sqrtf(new_v);
        const float corrected = root / correction2;
        const float denominator = corrected + eps;
        const float ratio = new_m / denominator;
        const float step = step_size * ratio;
        exp_avg_out[i] = new_m;
        exp_avg_sq_out[i] = new_v;
        param_out[i] = p - step;
    }
}

/* The width of the block of a gradient row that the matmul updates hold on the stack. */
#define ADIR_UPDATE_BLOCK 64

/* Columns [start, start + width) of row i of op_a(a) op_b(b) into block, each a sum over p in
 * order (width <= ADIR_UPDATE_BLOCK). */
static void adir_product_block(const float *a, const float *b, int32_t i, int32_t start,
                               int32_t width, int32_t m, int32_t n, int32_t k, int transpose_a,
                               int transpose_b, float *block)
{
    /* Row i of op_a(a): element p is a_row[p * a_step]. */
    const size_t a_step = transpose_a ? (size_t)m : 1u;
    const float *a_row = transpose_a ? a + i : a + (size_t)i * (size_t)k;
    int32_t j, p;
    if (transpose_b) {
        /* Rows of b are contiguous in p: one dot product per element. */
        for (j = 0; j < width; ++j) {
            const float *b_row = b + (size_t)(start + j) * (size_t)k;
            float acc = 0.0f;
            for (p = 0; p < k; ++p) {
                acc += a_row[(size_t)p * a_step] * b_row[p];
            }
            block[j] = acc;
        }
        return;
    }
    /* Plain b: accumulate over rows of b (contiguous in j). */
    for (j = 0; j < width; ++j) {
        block[j] = 0.0f;
    }
    for (p = 0; p < k; ++p) {
        const float x = a_row[(size_t)p * a_step];
        const float *b_row = b + (size_t)p * (size_t)n + start;
        for (j = 0; j < width; ++j) {
            block[j] += x * b_row[j];
        }
    }
}

/* The width of the block at column start of a row of n. */
static int32_t adir_block_width(int32_t n, int32_t start)
{
    return n - start < ADIR_UPDATE_BLOCK ? n - start : ADIR_UPDATE_BLOCK;
}

void adir_matmul_sgd_update_general(const float *param, const float *a, const float *b,
                                    const float *lr, float *param_out, int32_t m, int32_t n,
                                    int32_t k, int transpose_a, int transpose_b,
                                    float weight_decay, float clip_value)
{
    float block[ADIR_UPDATE_BLOCK];
    int32_t i, start;
    for (i = 0; i < m; ++i) {
        for (start = 0; start < n; start += ADIR_UPDATE_BLOCK) {
            const int32_t width = adir_block_width(n, start);
            const size_t at = (size_t)i * (size_t)n + (size_t)start;
            adir_product_block(a, b, i, start, width, m, n, k, transpose_a, transpose_b, block);
            adir_sgd_update(param + at, block, lr, param_out + at, (size_t)width, weight_decay,
                            clip_value);
        }
    }
}

void adir_matmul_momentum_update(const float *param, const float *buf, const float *a,
                                 const float *b, const float *lr, float *param_out,
                                 float *buf_out, int32_t m, int32_t n, int32_t k,
                                 int transpose_a, int transpose_b, float momentum,
                                 float weight_decay, float clip_value, int nesterov)
{
    float block[ADIR_UPDATE_BLOCK];
    int32_t i, start;
    for (i = 0; i < m; ++i) {
        for (start = 0; start < n; start += ADIR_UPDATE_BLOCK) {
            const int32_t width = adir_block_width(n, start);
            const size_t at = (size_t)i * (size_t)n + (size_t)start;
            adir_product_block(a, b, i, start, width, m, n, k, transpose_a, transpose_b, block);
            adir_momentum_update(param + at, buf + at, block, lr, param_out + at, buf_out + at,
                                 (size_t)width, momentum, weight_decay, clip_value, nesterov);
        }
    }
}

void adir_matmul_adam_update(const float *param, const float *exp_avg, const float *exp_avg_sq,
                             const float *a, const float *b, const float *lr,
                             const float *bias_correction1, const float *bias_correction2_sqrt,
                             float *param_out, float *exp_avg_out, float *exp_avg_sq_out,
                             int32_t m, int32_t n, int32_t k, int transpose_a, int transpose_b,
                             double beta1, double beta2, float eps, float weight_decay,
                             float clip_value, int decoupled_weight_decay)
{
    float block[ADIR_UPDATE_BLOCK];
    int32_t i, start;
    for (i = 0; i < m; ++i) {
        for (start = 0; start < n; start += ADIR_UPDATE_BLOCK) {
            const int32_t width = adir_block_width(n, start);
            const size_t at = (size_t)i * (size_t)n + (size_t)start;
            adir_product_block(a, b, i, start, width, m, n, k, transpose_a, transpose_b, block);
            adir_adam_update(param + at, exp_avg + at, exp_avg_sq + at, block, lr,
                             bias_correction1, bias_correction2_sqrt, param_out + at,
                             exp_avg_out + at, exp_avg_sq_out + at, (size_t)width, beta1, beta2,
                             eps, weight_decay, clip_value, decoupled_weight_decay);
        }
    }
}
