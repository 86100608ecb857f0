/* adir_reductions.h: the kernels of the reductions family (see adir_kernels.h).
 *
 * A reduction over a run of adjacent axes sees its input as outer x reduced x inner (the
 * products of the dims before, in and after the run) and writes outer x inner elements:
 * out[o][j] = reduce_r x[o][r][j]. Reducing all axes is outer = inner = 1; trailing axes,
 * inner = 1; leading axes, outer = 1. Any other set of axes takes the _strided kernel, given
 * the input's `rank` dims `shape` and, for each dim, its stride in out: 0 on reduced dims.
 * The output never overlaps the input.
 */
#ifndef ADIR_REDUCTIONS_H
#define ADIR_REDUCTIONS_H

#include <stddef.h>
#include <stdint.h>

/* sum (0 over no elements), mean (the sum divided by the number of elements reduced: nan over
 * none) and max (nan if any element is nan; at least one element). */
void adir_sum(const float *x, float *out, int32_t outer, int32_t reduced, int32_t inner);
void adir_mean(const float *x, float *out, int32_t outer, int32_t reduced, int32_t inner);
void adir_max(const float *x, float *out, int32_t outer, int32_t reduced, int32_t inner);
#ifndef ADIR_SUM
#define ADIR_SUM adir_sum
#endif
#ifndef ADIR_MEAN
#define ADIR_MEAN adir_mean
#endif
#ifndef ADIR_MAX
#define ADIR_MAX adir_max
#endif

/* The same over any set of axes: x has `shape`, out_strides[d] is dim d's stride in out. */
void adir_sum_strided(const float *x, float *out, int32_t rank, const int32_t *shape,
                      const int32_t *out_strides);
void adir_mean_strided(const float *x, float *out, int32_t rank, const int32_t *shape,
                       const int32_t *out_strides);
void adir_max_strided(const float *x, float *out, int32_t rank, const int32_t *shape,
                      const int32_t *out_strides);
#ifndef ADIR_SUM_STRIDED
#define ADIR_SUM_STRIDED adir_sum_strided
#endif
#ifndef ADIR_MEAN_STRIDED
#define ADIR_MEAN_STRIDED adir_mean_strided
#endif
#ifndef ADIR_MAX_STRIDED
#define ADIR_MAX_STRIDED adir_max_strided
#endif

#endif /* ADIR_REDUCTIONS_H */
