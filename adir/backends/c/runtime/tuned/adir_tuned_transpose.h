/* adir_tuned_transpose.h: transposes for the tuned kernels that need the other layout of an
 * operand. Pure data movement: every float lands unchanged.
 *
 * adir_transpose16: a 16 x 16 block of floats transposed in registers, for the kernels that
 * need a block's columns as vectors (the pointwise weight gradient's x^T,
 * adir_tuned_conv_pointwise.c). Where a vector holds 16 floats (ADIR_DOT_LANES 16: AVX-512)
 * and the compiler has __builtin_shufflevector (gcc 12, clang), ADIR_TRANSPOSE16 is 1 and it
 * swaps the rows' off-diagonal blocks of 8, 4, 2, then 1 lanes (four rounds of shuffles, 64 in
 * all); elsewhere ADIR_TRANSPOSE16 is 0 and the kernels keep their scalar loops.
 *
 * adir_transpose: a matrix into another buffer (the implicit-GEMM weight gradient's dy^T, the
 * pointwise weight gradient's x^T), in 16 x 16 blocks by adir_transpose16 where both sides
 * are 16 or more, the last blocks overlapping; one float at a time otherwise. One float at a
 * time, ResNet-8 b16's dy^T copies took about 7% of its step (gcc 12 stores each float on its
 * own). */
#ifndef ADIR_TUNED_TRANSPOSE_H
#define ADIR_TUNED_TRANSPOSE_H

#include <string.h>

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

#if ADIR_TRANSPOSE16
/* The next block's first row or column after the one at `at` (16 wide) of `size` >= 16: the
 * last block ends at `size`, overlapping the one before it when 16 does not divide it. */
static inline size_t adir_transpose_next(size_t at, size_t size)
{
    return at + 32u <= size ? at + 16u : size - 16u;
}
#endif

/* out[c * out_row + r] = in[r * in_row + c] for r < rows, c < cols. */
static inline void adir_transpose(const float *restrict in, size_t in_row, size_t rows,
                                  size_t cols, float *restrict out, size_t out_row)
{
    size_t r, c;
#if ADIR_TRANSPOSE16
    /* 16 x 16 blocks, the last row and column of blocks overlapping the ones before them
     * (their floats stored again, unchanged): the 13 columns past DS-CNN's 7 blocks of 16
     * pixels, one float at a time, took a third of the pointwise weight gradient's x^T. */
    if (rows >= 16u && cols >= 16u) {
        size_t r0, c0;
        for (r0 = 0;; r0 = adir_transpose_next(r0, rows)) {
            for (c0 = 0;; c0 = adir_transpose_next(c0, cols)) {
                adir_lanes16 v[16];
                for (r = 0; r < 16; ++r) {
                    memcpy(&v[r], in + (r0 + r) * in_row + c0, sizeof v[r]);
                }
                adir_transpose16(v);
                for (r = 0; r < 16; ++r) {
                    memcpy(out + (c0 + r) * out_row + r0, &v[r], sizeof v[r]);
                }
                if (c0 + 16u == cols) {
                    break;
                }
            }
            if (r0 + 16u == rows) {
                return;
            }
        }
    }
#endif
    for (r = 0; r < rows; ++r) {
        for (c = 0; c < cols; ++c) {
            out[c * out_row + r] = in[r * in_row + c];
        }
    }
}

#endif /* ADIR_TUNED_TRANSPOSE_H */
