/* adir_cmsis_dsp.c: the thin wrappers of adir_cmsis_dsp.h around CMSIS-DSP. */
#include "adir_cmsis_dsp.h"

/* Elements of the stack buffers of the updates: a row is updated this many at a time. */
#define ADIR_CMSIS_CHUNK 64u

/* The elements of the next chunk when `left` remain. */
static uint32_t adir_chunk(size_t left)
{
    return (uint32_t)(left < ADIR_CMSIS_CHUNK ? left : ADIR_CMSIS_CHUNK);
}

/* A matrix struct over a buffer. CMSIS-DSP's structs hold a non-const pointer but its
 * functions never write their source matrices. */
static arm_matrix_instance_f32 adir_matrix(const float *data, int32_t rows, int32_t cols)
{
    arm_matrix_instance_f32 matrix;
    matrix.numRows = (uint16_t)rows;
    matrix.numCols = (uint16_t)cols;
    matrix.pData = (float32_t *)(uintptr_t)data;
    return matrix;
}

void adir_cmsis_matmul(const float *a, const float *b, float *c, int32_t batch, int32_t m,
                       int32_t n, int32_t k, int shared_b)
{
    int32_t p;
    for (p = 0; p < batch; ++p) {
        const size_t b_offset = shared_b ? 0u : (size_t)p * (size_t)k * (size_t)n;
        arm_matrix_instance_f32 lhs = adir_matrix(a + (size_t)p * (size_t)m * (size_t)k, m, k);
        arm_matrix_instance_f32 rhs = adir_matrix(b + b_offset, k, n);
        arm_matrix_instance_f32 out = adir_matrix(c + (size_t)p * (size_t)m * (size_t)n, m, n);
        (void)arm_mat_mult_f32(&lhs, &rhs, &out);
    }
}

void adir_cmsis_matmul_nt(const float *a, const float *b, float *c, int32_t batch, int32_t m,
                          int32_t n, int32_t k, int shared_b)
{
    int32_t p, i;
    for (p = 0; p < batch; ++p) {
        const size_t b_offset = shared_b ? 0u : (size_t)p * (size_t)n * (size_t)k;
        const arm_matrix_instance_f32 rhs = adir_matrix(b + b_offset, n, k);
        for (i = 0; i < m; ++i) {
            const size_t row = (size_t)p * (size_t)m + (size_t)i;
            arm_mat_vec_mult_f32(&rhs, a + row * (size_t)k, c + row * (size_t)n);
        }
    }
}

void adir_cmsis_sum_rows(const float *x, float *out, size_t outer, size_t reduced)
{
    size_t o;
    for (o = 0; o < outer; ++o) {
        arm_accumulate_f32(x + o * reduced, (uint32_t)reduced, out + o);
    }
}

void adir_cmsis_sgd_update(const float *param, const float *grad, const float *lr, float *out,
                           size_t n)
{
    float step[ADIR_CMSIS_CHUNK];
    size_t at;
    for (at = 0; at < n; at += ADIR_CMSIS_CHUNK) {
        const uint32_t count = adir_chunk(n - at);
        arm_scale_f32(grad + at, lr[0], step, count);
        arm_sub_f32(param + at, step, out + at, count);
    }
}

void adir_cmsis_matmul_sgd_update(const float *param, const float *a, const float *b,
                                  const float *lr, float *out, int32_t m, int32_t n, int32_t k)
{
    float sum[ADIR_CMSIS_CHUNK], term[ADIR_CMSIS_CHUNK];
    const size_t sm = (size_t)m, sn = (size_t)n;
    size_t i, j;
    int32_t p;
    for (i = 0; i < sm; ++i) {
        for (j = 0; j < sn; j += ADIR_CMSIS_CHUNK) {
            const uint32_t count = adir_chunk(sn - j);
            const size_t at = i * sn + j;
            arm_scale_f32(b + j, a[i], sum, count);
            for (p = 1; p < k; ++p) {
                arm_scale_f32(b + (size_t)p * sn + j, a[(size_t)p * sm + i], term, count);
                arm_add_f32(sum, term, sum, count);
            }
            arm_scale_f32(sum, lr[0], sum, count);
            arm_sub_f32(param + at, sum, out + at, count);
        }
    }
}
