/* adir_reductions.c: the reference kernels of the reductions family (declared in
 * adir_reductions.h). */
#include <math.h>

#include "adir_kernels.h"
#include "adir_row_sum.h"

/* The max of m and v, nan if either is nan: numpy's maximum, `m >= v || isnan(m) ? m : v`. */
static float adir_max_of(float m, float v)
{
    return (m >= v || isnan(m)) ? m : v;
}

static float adir_row_max(const float *x, size_t n)
{
    float m = -INFINITY;
    size_t i;
    for (i = 0; i < n; ++i) {
        m = adir_max_of(m, x[i]);
    }
    return m;
}

/* out (outer x inner) = the sum, or with `max` the max, of x (outer x reduced x inner) over
 * its middle axis. With inner > 1 the rows of x are added into the rows of out in turn, so
 * the innermost loop runs over contiguous memory. */
static void adir_reduce(const float *x, float *out, size_t outer, size_t reduced, size_t inner,
                        int max)
{
    const float start = max ? -INFINITY : 0.0f;
    size_t o, r, j;
    if (reduced == 1) {
        /* Each element is its own max, or its sum 0 + v (-0.0 becomes +0.0, as below): one
         * loop, not a row's call an element (a batch of one's bias gradients, outer x 1). */
        const size_t count = outer * inner;
        if (max) {
            for (j = 0; j < count; ++j) {
                out[j] = x[j];
            }
        } else {
            for (j = 0; j < count; ++j) {
                out[j] = 0.0f + x[j];
            }
        }
        return;
    }
    for (o = 0; o < outer; ++o) {
        const float *block = x + o * reduced * inner;
        float *row = out + o * inner;
        if (inner == 1) {
            row[0] = max ? adir_row_max(block, reduced) : adir_row_sum(block, reduced);
            continue;
        }
        for (j = 0; j < inner; ++j) {
            row[j] = start;
        }
        for (r = 0; r < reduced; ++r) {
            const float *line = block + r * inner;
            if (max) {
                for (j = 0; j < inner; ++j) {
                    row[j] = adir_max_of(row[j], line[j]);
                }
            } else {
                for (j = 0; j < inner; ++j) {
                    row[j] += line[j];
                }
            }
        }
    }
}

/* Where row `row` of x (counted row-major over all dims but the last) lands in out. */
static size_t adir_out_offset(size_t row, int32_t rank, const int32_t *shape,
                              const int32_t *out_strides)
{
    size_t offset = 0;
    int32_t d;
    for (d = rank - 2; d >= 0; --d) {
        offset += (row % (size_t)shape[d]) * (size_t)out_strides[d];
        row /= (size_t)shape[d];
    }
    return offset;
}

/* The elements of out: the product of the kept dims (those with a stride in out). */
static size_t adir_out_count(int32_t rank, const int32_t *shape, const int32_t *out_strides)
{
    size_t count = 1;
    int32_t d;
    for (d = 0; d < rank; ++d) {
        if (out_strides[d] != 0) {
            count *= (size_t)shape[d];
        }
    }
    return count;
}

/* The sum (or max) over any axes: each row of x (its last dim) is reduced into one element of
 * out if that dim is reduced, else added element by element into a row of out. */
static void adir_reduce_strided(const float *x, float *out, int32_t rank, const int32_t *shape,
                                const int32_t *out_strides, int max)
{
    const size_t n = rank > 0 ? (size_t)shape[rank - 1] : 1u;
    const int reduce_rows = rank > 0 && out_strides[rank - 1] == 0;
    const size_t count = adir_out_count(rank, shape, out_strides);
    size_t rows = 1, row, j;
    int32_t d;
    for (d = 0; d + 1 < rank; ++d) {
        rows *= (size_t)shape[d];
    }
    for (j = 0; j < count; ++j) {
        out[j] = max ? -INFINITY : 0.0f;
    }
    for (row = 0; row < rows; ++row) {
        const float *line = x + row * n;
        float *target = out + adir_out_offset(row, rank, shape, out_strides);
        if (reduce_rows) {
            target[0] = max ? adir_max_of(target[0], adir_row_max(line, n))
                            : target[0] + adir_row_sum(line, n);
        } else if (max) {
            for (j = 0; j < n; ++j) {
                target[j] = adir_max_of(target[j], line[j]);
            }
        } else {
            for (j = 0; j < n; ++j) {
                target[j] += line[j];
            }
        }
    }
}

/* mean = sum / n, a division as in the interpreter (not a product with 1 / n). */
static void adir_divide(float *out, size_t count, size_t n)
{
    const float divisor = (float)n;
    size_t i;
    for (i = 0; i < count; ++i) {
        out[i] = out[i] / divisor;
    }
}

void adir_sum(const float *x, float *out, int32_t outer, int32_t reduced, int32_t inner)
{
    adir_reduce(x, out, (size_t)outer, (size_t)reduced, (size_t)inner, 0);
}

void adir_mean(const float *x, float *out, int32_t outer, int32_t reduced, int32_t inner)
{
    adir_reduce(x, out, (size_t)outer, (size_t)reduced, (size_t)inner, 0);
    adir_divide(out, (size_t)outer * (size_t)inner, (size_t)reduced);
}

void adir_max(const float *x, float *out, int32_t outer, int32_t reduced, int32_t inner)
{
    adir_reduce(x, out, (size_t)outer, (size_t)reduced, (size_t)inner, 1);
}

void adir_sum_strided(const float *x, float *out, int32_t rank, const int32_t *shape,
                      const int32_t *out_strides)
{
    adir_reduce_strided(x, out, rank, shape, out_strides, 0);
}

void adir_mean_strided(const float *x, float *out, int32_t rank, const int32_t *shape,
                       const int32_t *out_strides)
{
    size_t reduced = 1;
    int32_t d;
    for (d = 0; d < rank; ++d) {
        if (out_strides[d] == 0) {
            reduced *= (size_t)shape[d];
        }
    }
    adir_reduce_strided(x, out, rank, shape, out_strides, 0);
    adir_divide(out, adir_out_count(rank, shape, out_strides), reduced);
}

void adir_max_strided(const float *x, float *out, int32_t rank, const int32_t *shape,
                      const int32_t *out_strides)
{
    adir_reduce_strided(x, out, rank, shape, out_strides, 1);
}
