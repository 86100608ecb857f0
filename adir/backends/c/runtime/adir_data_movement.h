/* adir_data_movement.h: the kernels of the data movement family (see adir_kernels.h). */
#ifndef ADIR_DATA_MOVEMENT_H
#define ADIR_DATA_MOVEMENT_H

#include <stddef.h>
#include <stdint.h>

/* y = x, `count` elements: reshape and flatten (same elements, same row-major order). y does
 * not overlap x. */
void adir_copy(const float *x, float *y, size_t count);
#ifndef ADIR_COPY
#define ADIR_COPY adir_copy
#endif

/* y = the elements of x at strided positions: y is dense row-major of `shape` (rank 1 to
 * ADIR_MAX_RANK), and y[i_0, ..., i_r-1] = x[x_offset + sum_d i_d * x_strides[d]]. A stride
 * may be 0 (a repeated dim). Serves transpose (permuted strides), broadcast_to (0 strides)
 * and slice (strides times steps, offset at the start). y does not overlap x. */
void adir_strided_gather(const float *x, float *y, int32_t rank, const int32_t *shape,
                         const int32_t *x_strides, size_t x_offset);
#ifndef ADIR_STRIDED_GATHER
#define ADIR_STRIDED_GATHER adir_strided_gather
#endif

/* The converse: y (y_size elements) = fill everywhere, then x, dense row-major of `shape`
 * (rank 1 to ADIR_MAX_RANK), written at y[y_offset + sum_d i_d * y_strides[d]] (positions
 * that do not repeat). Serves pad (fill = the pad value) and slice_grad (fill = 0). y does
 * not overlap x. */
void adir_strided_scatter(const float *x, float *y, size_t y_size, float fill, int32_t rank,
                          const int32_t *shape, const int32_t *y_strides, size_t y_offset);
#ifndef ADIR_STRIDED_SCATTER
#define ADIR_STRIDED_SCATTER adir_strided_scatter
#endif

/* y = the `count` tensors xs[j] joined along one axis: xs[j] is outer x axis_sizes[j] x inner
 * (row-major), y is outer x (sum of axis_sizes) x inner. y overlaps none of the xs. */
void adir_concat(const float *const *xs, float *y, int32_t count, const int32_t *axis_sizes,
                 size_t outer, size_t inner);
#ifndef ADIR_CONCAT
#define ADIR_CONCAT adir_concat
#endif

#endif /* ADIR_DATA_MOVEMENT_H */
