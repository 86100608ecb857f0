/* adir_data_movement.c: the reference kernels of the data movement family (declared in
 * adir_data_movement.h): copies and strided walks, the C twin of
 * adir/interpreter/data_movement.py. */
#include <string.h>

#include "adir_kernels.h"

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
