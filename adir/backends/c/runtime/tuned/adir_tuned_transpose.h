/* adir_tuned_transpose.h: a matrix transposed into another buffer, for the tuned kernels that
 * want the other operand's layout (the implicit-GEMM weight gradient's dy^T). Pure data
 * movement: every float lands unchanged.
 *
 * With 16-float vectors (gcc 12, clang), blocks of 16 rows by 16 columns are loaded as 16
 * vectors and transposed in registers (four rounds of shuffles, as
 * adir_tuned_batchnorm_channels.c's sample lanes and adir_tuned_conv_pointwise.c's x^T); the
 * rows and columns past the last whole block, and other targets, one float at a time. One
 * float at a time, ResNet-8 b16's dy^T copies took about 7% of its step (gcc 12 stores each
 * float on its own). */
#ifndef ADIR_TUNED_TRANSPOSE_H
#define ADIR_TUNED_TRANSPOSE_H

#include <string.h>

#include "adir_tuned.h"

#if ADIR_DOT_LANES == 16 && (defined(__clang__) || (ADIR_GCC && __GNUC__ >= 12))
#define ADIR_TRANSPOSE_LANES 16
typedef float adir_transpose_vector __attribute__((vector_size(64)));

#define ADIR_TRANSPOSE_8_P 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define ADIR_TRANSPOSE_8_Q 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define ADIR_TRANSPOSE_4_P 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define ADIR_TRANSPOSE_4_Q 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define ADIR_TRANSPOSE_2_P 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define ADIR_TRANSPOSE_2_Q 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define ADIR_TRANSPOSE_1_P 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define ADIR_TRANSPOSE_1_Q 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31

/* Rows r and r + b (bit b of r clear) exchange their off-diagonal blocks of b lanes. */
#define ADIR_TRANSPOSE_SWAP(v, b)                                                        \
    for (r = 0; r < ADIR_TRANSPOSE_LANES; ++r) {                                         \
        if (!(r & b)) {                                                                  \
            const adir_transpose_vector low = v[r], high = v[r + b];                     \
            v[r] = __builtin_shufflevector(low, high, ADIR_TRANSPOSE_##b##_P);           \
            v[r + b] = __builtin_shufflevector(low, high, ADIR_TRANSPOSE_##b##_Q);       \
        }                                                                                \
    }
#else
#define ADIR_TRANSPOSE_LANES 0
#endif

/* out[c * out_row + r] = in[r * in_row + c] for r < rows, c < cols. */
static void adir_transpose(const float *restrict in, size_t in_row, size_t rows, size_t cols,
                           float *restrict out, size_t out_row)
{
    size_t r0 = 0, r, c;
#if ADIR_TRANSPOSE_LANES
    size_t c0 = 0;
    for (r0 = 0; r0 + ADIR_TRANSPOSE_LANES <= rows; r0 += ADIR_TRANSPOSE_LANES) {
        for (c0 = 0; c0 + ADIR_TRANSPOSE_LANES <= cols; c0 += ADIR_TRANSPOSE_LANES) {
            adir_transpose_vector v[ADIR_TRANSPOSE_LANES];
            for (r = 0; r < ADIR_TRANSPOSE_LANES; ++r) {
                memcpy(&v[r], in + (r0 + r) * in_row + c0, sizeof v[r]);
            }
            ADIR_TRANSPOSE_SWAP(v, 8)
            ADIR_TRANSPOSE_SWAP(v, 4)
            ADIR_TRANSPOSE_SWAP(v, 2)
            ADIR_TRANSPOSE_SWAP(v, 1)
            for (r = 0; r < ADIR_TRANSPOSE_LANES; ++r) {
                memcpy(out + (c0 + r) * out_row + r0, &v[r], sizeof v[r]);
            }
        }
    }
    /* the columns past the whole blocks, of the rows in them */
    for (r = 0; r < r0; ++r) {
        for (c = c0; c < cols; ++c) {
            out[c * out_row + r] = in[r * in_row + c];
        }
    }
#endif
    for (r = r0; r < rows; ++r) {
        for (c = 0; c < cols; ++c) {
            out[c * out_row + r] = in[r * in_row + c];
        }
    }
}

#endif /* ADIR_TUNED_TRANSPOSE_H */
