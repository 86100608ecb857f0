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

/* The width of the row block that the plain-b update accumulates on the stack. */
#define ADIR_SGD_BLOCK 64

void adir_matmul_sgd_update(const float *param, const float *a, const float *b, const float *lr,
                            float *out, int32_t m, int32_t n, int32_t k, int transpose_a,
                            int transpose_b)
{
    const float rate = lr[0];
    /* Row i of op_a(a): element p is a_row[p * a_step]. */
    const size_t a_step = transpose_a ? (size_t)m : 1u;
    int32_t i, j, p, start;
    for (i = 0; i < m; ++i) {
        const float *a_row = transpose_a ? a + i : a + (size_t)i * (size_t)k;
        const float *param_row = param + (size_t)i * (size_t)n;
        float *out_row = out + (size_t)i * (size_t)n;
        if (transpose_b) {
            /* Rows of b are contiguous in p: one dot product per element. */
            for (j = 0; j < n; ++j) {
                const float *b_row = b + (size_t)j * (size_t)k;
                float acc = 0.0f, step;
                for (p = 0; p < k; ++p) {
                    acc += a_row[(size_t)p * a_step] * b_row[p];
                }
                step = rate * acc;
                out_row[j] = param_row[j] - step;
            }
            continue;
        }
        /* Plain b: accumulate up to ADIR_SGD_BLOCK products of the row on the stack, over
         * rows of b (contiguous), and only then read and write those elements of param. */
        for (start = 0; start < n; start += ADIR_SGD_BLOCK) {
            const int32_t width = n - start < ADIR_SGD_BLOCK ? n - start : ADIR_SGD_BLOCK;
            float acc[ADIR_SGD_BLOCK];
            for (j = 0; j < width; ++j) {
                acc[j] = 0.0f;
            }
            for (p = 0; p < k; ++p) {
                const float x = a_row[(size_t)p * a_step];
                const float *b_row = b + (size_t)p * (size_t)n + start;
                for (j = 0; j < width; ++j) {
                    acc[j] += x * b_row[j];
                }
            }
            for (j = 0; j < width; ++j) {
                const float step = rate * acc[j];
                out_row[start + j] = param_row[start + j] - step;
            }
        }
    }
}
