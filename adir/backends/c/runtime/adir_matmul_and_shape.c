/* adir_matmul_and_shape.c: the reference kernels of the matmul_and_shape family (declared in
 * adir_matmul_and_shape.h). */
#include <string.h>

#include "adir_kernels.h"

/* One m x n product. The loop order keeps the innermost loop on contiguous memory for each
 * layout (rows of b for a plain b, rows of a and b for transpose_b), so compilers vectorize it. */
static void adir_matmul_one(const float *a, const float *b, float *c, int32_t m, int32_t n,
                            int32_t k, int transpose_a, int transpose_b)
{
    int32_t i, j, p;
    if (transpose_b) {
        for (i = 0; i < m; ++i) {
            for (j = 0; j < n; ++j) {
                float acc = 0.0f;
                for (p = 0; p < k; ++p) {
                    float x = transpose_a ? a[(size_t)p * m + i] : a[(size_t)i * k + p];
                    acc += x * b[(size_t)j * k + p];
                }
                c[(size_t)i * n + j] = acc;
            }
        }
        return;
    }
    memset(c, 0, (size_t)m * (size_t)n * sizeof *c);
    for (i = 0; i < m; ++i) {
        for (p = 0; p < k; ++p) {
            const float x = transpose_a ? a[(size_t)p * m + i] : a[(size_t)i * k + p];
            const float *b_row = b + (size_t)p * n;
            float *c_row = c + (size_t)i * n;
            for (j = 0; j < n; ++j) {
                c_row[j] += x * b_row[j];
            }
        }
    }
}

void adir_matmul(const float *a, const float *b, float *c, int32_t batch, int32_t m, int32_t n,
                 int32_t k, int transpose_a, int transpose_b, int shared_b)
{
    const size_t a_size = (size_t)m * (size_t)k;
    const size_t b_size = shared_b ? 0u : (size_t)k * (size_t)n;
    const size_t c_size = (size_t)m * (size_t)n;
    int32_t i;
    for (i = 0; i < batch; ++i) {
        adir_matmul_one(a + i * a_size, b + i * b_size, c + i * c_size, m, n, k, transpose_a,
                        transpose_b);
    }
}

void adir_copy(const float *x, float *y, size_t count)
{
    memcpy(y, x, count * sizeof *y);
}

/* How many runs of the innermost dim a walk over `shape` makes: the product of the other
 * dims, or 0 if any dim (the innermost too) is 0. */
static size_t adir_runs(int32_t rank, const int32_t *shape)
{
    size_t runs = shape[rank - 1] > 0 ? 1u : 0u;
    int32_t d;
    for (d = 0; d < rank - 1; ++d) {
        runs *= (size_t)shape[d];
    }
    return runs;
}

/* Moves the odometer `index` over the outer dims of `shape` (all but the innermost) to the
 * next run, and the position `at` along `strides` with it. Strides are non-negative; `at`
 * is unsigned, so stepping back over a finished dim wraps correctly. */
static void adir_next_run(int32_t rank, const int32_t *shape, const int32_t *strides,
                          int32_t *index, size_t *at)
{
    int32_t d;
    for (d = rank - 2; d >= 0; --d) {
        *at += (size_t)strides[d];
        if (++index[d] < shape[d]) {
            return;
        }
        index[d] = 0;
        *at -= (size_t)shape[d] * (size_t)strides[d];
    }
}

void adir_strided_gather(const float *x, float *y, int32_t rank, const int32_t *shape,
                         const int32_t *x_strides, size_t x_offset)
{
    int32_t index[ADIR_MAX_RANK] = {0};
    const size_t inner = (size_t)shape[rank - 1];
    const size_t inner_stride = (size_t)x_strides[rank - 1];
    const size_t runs = adir_runs(rank, shape);
    size_t run, j, at = x_offset;
    for (run = 0; run < runs; ++run) {
        const float *from = x + at;
        if (inner_stride == 1u) {
            memcpy(y, from, inner * sizeof *y);
        } else {
            for (j = 0; j < inner; ++j) {
                y[j] = from[j * inner_stride];
            }
        }
        y += inner;
        adir_next_run(rank, shape, x_strides, index, &at);
    }
}

void adir_strided_scatter(const float *x, float *y, size_t y_size, float fill, int32_t rank,
                          const int32_t *shape, const int32_t *y_strides, size_t y_offset)
{
    int32_t index[ADIR_MAX_RANK] = {0};
    const size_t inner = (size_t)shape[rank - 1];
    const size_t inner_stride = (size_t)y_strides[rank - 1];
    const size_t runs = adir_runs(rank, shape);
    size_t run, j, at = y_offset;
    for (j = 0; j < y_size; ++j) {
        y[j] = fill;
    }
    for (run = 0; run < runs; ++run) {
        float *to = y + at;
        if (inner_stride == 1u) {
            memcpy(to, x, inner * sizeof *x);
        } else {
            for (j = 0; j < inner; ++j) {
                to[j * inner_stride] = x[j];
            }
        }
        x += inner;
        adir_next_run(rank, shape, y_strides, index, &at);
    }
}

void adir_concat(const float *const *xs, float *y, int32_t count, const int32_t *axis_sizes,
                 size_t outer, size_t inner)
{
    size_t o;
    int32_t j;
    for (o = 0; o < outer; ++o) {
        for (j = 0; j < count; ++j) {
            const size_t run = (size_t)axis_sizes[j] * inner;
            memcpy(y, xs[j] + o * run, run * sizeof *y);
            y += run;
        }
    }
}
