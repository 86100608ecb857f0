/* adir_chunked.h: an elementwise loop that a portable -O2 build vectorizes, for the reference
 * kernels whose output may be one of their inputs (the activations, the binary elementwise ops).
 *
 * gcc -O2 (12 and later: the "very cheap" vectorizer cost model) vectorizes a loop only if its
 * trip count is a known multiple of the vector and it needs no run-time check that its output
 * does not overlap its inputs. A plain `for (i = 0; i < n; ++i) y[i] = f(x[i])` is neither, so
 * it stays scalar, and a select in f (relu's `v < 0 ? 0 : v`) is a compare and a branch, taken
 * at random on a ReLU's inputs: ResNet-8's batch-of-one step built -O2 spent 22% of its time in
 * adir_relu, MobileNetV1's 30% in adir_clamp_grad (relu6's gradient, whose `&&` is two
 * branches), against under 1% at -O3 -march=native. ADIR_CHUNKED runs the loop ADIR_CHUNK
 * elements at a time into a stack array, a constant trip count that overlaps nothing, and
 * copies the array to the output: gcc -O2 makes it vector compares and masks (SSE2 cmpltps,
 * andnps), clang -O2 too. Each element is the same expression of the same inputs, so the bits
 * are those of the plain loop; the last n % ADIR_CHUNK elements take the plain loop.
 *
 * ADIR_CHUNKED(type, n, out, i, value) sets out[i] = value for i = 0 .. n-1: `out` points to
 * `type`, `i` is a size_t variable of the caller's, and `value` an expression of i that reads
 * element i of the inputs only. All of a chunk's inputs are read before any of its outputs is
 * written, so `out` may be an input. */
#ifndef ADIR_CHUNKED_H
#define ADIR_CHUNKED_H

#include <stddef.h>
#include <string.h>

/* Elements a chunk: a whole number of vectors on every target (4 floats a vector with SSE or
 * NEON, 8 with AVX2, 16 with AVX-512). */
#define ADIR_CHUNK 16u

/* Only where gcc -O2 vectorizes the chunk (x86-64's SSE2 and up, AArch64's NEON) is the stack
 * array worth its cost. Elsewhere it is a store, a load and a copy more an element around a
 * select that is a conditional move already: under QEMU the Cortex-M4F's relu took 64,040 ->
 * 88,020 instructions a call of DS-CNN's (8,000 elements), its gradient 72,040 -> 96,520, the
 * step 2.92 -> 2.97 instructions a multiply-accumulate; the Cortex-M55's relu (MVE, which gcc
 * 12 -O2 does not vectorize this loop for) 27,656 -> 38,906 on LeNet-5's first. There the loop
 * is the plain one. */
#if defined(__SSE2__) || defined(__ARM_NEON)
#define ADIR_CHUNKED_HAS_VECTORS 1
#else
#define ADIR_CHUNKED_HAS_VECTORS 0
#endif

#if !ADIR_CHUNKED_HAS_VECTORS
#define ADIR_CHUNKED(type, n, out, i, value)                                               \
    do {                                                                                   \
        const size_t adir_chunked_n_ = (n);                                                \
        for (i = 0; i < adir_chunked_n_; ++i) {                                            \
            (out)[i] = (value);                                                            \
        }                                                                                  \
    } while (0)
#else
#define ADIR_CHUNKED(type, n, out, i, value)                                               \
    do {                                                                                   \
        const size_t adir_chunked_n_ = (n);                                                \
        size_t adir_chunk_start_ = 0;                                                      \
        for (; adir_chunked_n_ - adir_chunk_start_ >= ADIR_CHUNK;                          \
             adir_chunk_start_ += ADIR_CHUNK) {                                            \
            type adir_chunk_[ADIR_CHUNK];                                                  \
            size_t adir_lane_;                                                             \
            for (adir_lane_ = 0; adir_lane_ < ADIR_CHUNK; ++adir_lane_) {                  \
                i = adir_chunk_start_ + adir_lane_;                                        \
                adir_chunk_[adir_lane_] = (value);                                         \
            }                                                                              \
            memcpy((out) + adir_chunk_start_, adir_chunk_, sizeof adir_chunk_);            \
        }                                                                                  \
        for (i = adir_chunk_start_; i < adir_chunked_n_; ++i) {                            \
            (out)[i] = (value);                                                            \
        }                                                                                  \
    } while (0)
#endif

#endif /* ADIR_CHUNKED_H */
