/* adir_row_sum.h: the sum of a row of contiguous floats, in the order the reference kernels
 * that reduce rows share (the sum reduction, global average pooling; batchnorm sums its terms
 * in the same order, adir_normalization.h). */
#ifndef ADIR_ROW_SUM_H
#define ADIR_ROW_SUM_H

#include <stddef.h>

/* gcc 12 with AVX-512 under its generic or Zen tuning (-march=native on Zen 4, -march=x86-64-v4)
 * vectorizes the eight sums below 16 lanes at a time; a lane would then add x[i] and x[i + 8]
 * into one sum, out of order, so it adds every lane in order instead: 135 scalar adds an
 * iteration (ResNet-8 b16's bias gradients 333 us a step on Zen 4, 96 us in the -O2 build).
 * With 256-bit vectors, as gcc's Intel tunings prefer anyway, the eight sums are one vector. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)
#define ADIR_EIGHT_LANES __attribute__((target("prefer-vector-width=256")))
#else
#define ADIR_EIGHT_LANES
#endif

/* The sum of n contiguous elements in eight interleaved partial sums, added pairwise at the
 * end: the order of numpy's pairwise_sum on a block of up to 128 elements. Its rounding error
 * grows with n / 8 rather than n, and the eight sums vectorize. They are eight variables, not
 * an array: gcc -O2 does not unroll an array's loop of eight, and kept the sums in memory
 * (on the Cortex-M4F 7 instructions an element, LeNet-5's bias gradients 24,220 a step). */
ADIR_EIGHT_LANES static float adir_row_sum(const float *x, size_t n)
{
    float sum = 0.0f;
    size_t i = 0;
    if (n >= 8) {
        float r0 = x[0], r1 = x[1], r2 = x[2], r3 = x[3];
        float r4 = x[4], r5 = x[5], r6 = x[6], r7 = x[7];
        for (i = 8; i + 8 <= n; i += 8) {
            r0 += x[i];
            r1 += x[i + 1];
            r2 += x[i + 2];
            r3 += x[i + 3];
            r4 += x[i + 4];
            r5 += x[i + 5];
            r6 += x[i + 6];
            r7 += x[i + 7];
        }
        sum = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    }
    for (; i < n; ++i) {
        sum += x[i];
    }
    return sum;
}

#endif /* ADIR_ROW_SUM_H */
