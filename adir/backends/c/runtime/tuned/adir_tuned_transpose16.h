/* adir_tuned_transpose16.h: a 16 x 16 block of floats transposed in registers, for the kernels
 * that need a block's columns as vectors: batchnorm's sample lanes
 * (adir_tuned_batchnorm_channels.c) and the pointwise weight gradient's x^T
 * (adir_tuned_conv_pointwise.c).
 *
 * Where a vector holds 16 floats (ADIR_DOT_LANES 16: AVX-512) and the compiler has
 * __builtin_shufflevector (gcc 12, clang), ADIR_TRANSPOSE16 is 1 and adir_transpose16 swaps
 * the rows' off-diagonal blocks of 8, 4, 2, then 1 lanes (four rounds of shuffles, 64 in all);
 * elsewhere ADIR_TRANSPOSE16 is 0 and the kernels keep their scalar loops. */
#ifndef ADIR_TUNED_TRANSPOSE16_H
#define ADIR_TUNED_TRANSPOSE16_H

#include "adir_tuned.h"

#if ADIR_DOT_LANES == 16 && (defined(__clang__) || (ADIR_GCC && __GNUC__ >= 12))
#define ADIR_TRANSPOSE16 1
typedef float adir_lanes16 __attribute__((vector_size(64)));

#define ADIR_SWAP16_8_P 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define ADIR_SWAP16_8_Q 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define ADIR_SWAP16_4_P 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define ADIR_SWAP16_4_Q 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define ADIR_SWAP16_2_P 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define ADIR_SWAP16_2_Q 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define ADIR_SWAP16_1_P 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define ADIR_SWAP16_1_Q 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31

/* Rows r and r + b (bit b of r clear) exchange their off-diagonal blocks of b lanes: lane j of
 * row r with bit b set takes lane j - b of row r + b, and lane j of row r + b with bit b clear
 * takes lane j + b of row r. */
#define ADIR_SWAP16(rows, b)                                                               \
    for (r = 0; r < 16; ++r) {                                                              \
        if (!(r & b)) {                                                                     \
            const adir_lanes16 low = rows[r], high = rows[r + b];                           \
            rows[r] = __builtin_shufflevector(low, high, ADIR_SWAP16_##b##_P);              \
            rows[r + b] = __builtin_shufflevector(low, high, ADIR_SWAP16_##b##_Q);          \
        }                                                                                   \
    }

/* rows[j] lane i = rows[i] lane j. */
static ADIR_INLINE void adir_transpose16(adir_lanes16 rows[16])
{
    int32_t r;
    ADIR_SWAP16(rows, 8)
    ADIR_SWAP16(rows, 4)
    ADIR_SWAP16(rows, 2)
    ADIR_SWAP16(rows, 1)
}
#else
#define ADIR_TRANSPOSE16 0
#endif

#endif /* ADIR_TUNED_TRANSPOSE16_H */
