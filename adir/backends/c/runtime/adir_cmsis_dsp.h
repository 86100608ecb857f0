/* adir_cmsis_dsp.h: what a model built with --c-kernels=cmsis-dsp calls besides the reference
 * kernels (adir_kernels.h): CMSIS-DSP's own functions (arm_math.h) and the thin wrappers below,
 * which only fill in CMSIS-DSP's matrix structs and loop over batches or rows.
 *
 * Build with CMSIS-DSP's Include/ and PrivateInclude/ on the include path, -D__GNUC_PYTHON__
 * (no CMSIS-Core needed) and its sources listed in adir/backends/c/cmsis_dsp.py. Dims of the matrix
 * wrappers are 1 to 65535 (CMSIS-DSP's uint16_t); the compiler only calls them so.
 */
#ifndef ADIR_CMSIS_DSP_H
#define ADIR_CMSIS_DSP_H

#include <stddef.h>
#include <stdint.h>

#include "arm_math.h"

/* c = a b for each of `batch` products: a is m x k, b is k x n (with shared_b, every product
 * reads the same b), c is m x n; one arm_mat_mult_f32 per product. c overlaps neither. */
void adir_cmsis_matmul(const float *a, const float *b, float *c, int32_t batch, int32_t m,
                       int32_t n, int32_t k, int shared_b);

/* c = a b^T for each of `batch` products: a is m x k, b is n x k, c is m x n; row i of c is
 * arm_mat_vec_mult_f32 of b and row i of a (so b is read as stored, never transposed). */
void adir_cmsis_matmul_nt(const float *a, const float *b, float *c, int32_t batch, int32_t m,
                          int32_t n, int32_t k, int shared_b);

/* out[o] = the sum of row o of x (outer x reduced), one arm_accumulate_f32 per row. */
void adir_cmsis_sum_rows(const float *x, float *out, size_t outer, size_t reduced);

/* SGD without weight decay or clipping, as adir_sgd_update: out = param - lr[0] * grad, n
 * elements, through arm_scale_f32 and arm_sub_f32 a chunk at a time (on the stack). out may
 * be param or grad. */
void adir_cmsis_sgd_update(const float *param, const float *grad, const float *lr, float *out,
                           size_t n);

/* The same update of a weight-gradient product, as adir_matmul_sgd_update with transpose_a:
 * out = param - lr[0] * (a^T b), a is k x m, b is k x n, each element of the product summed
 * over p in order (arm_scale_f32, then arm_add_f32 of each further term), then scaled by lr
 * and subtracted (arm_sub_f32), a chunk of a row at a time. out may be param; it overlaps
 * neither a nor b. k is at least 1. */
void adir_cmsis_matmul_sgd_update(const float *param, const float *a, const float *b,
                                  const float *lr, float *out, int32_t m, int32_t n, int32_t k);

#endif /* ADIR_CMSIS_DSP_H */
