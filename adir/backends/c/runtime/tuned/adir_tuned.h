/* adir_tuned.h: what the tuned kernels (tuned/adir_tuned_*.c) share: the target's settings
 * (targets/adir_target.h), the compiler's spellings of what they ask of it, and the GEMM
 * micro-kernel. Not part of the API: generated code includes adir_kernels.h only. */
#ifndef ADIR_TUNED_H
#define ADIR_TUNED_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "adir_kernels.h"
#include "adir_target.h"

/* gcc proper (clang defines __GNUC__ too, and is told apart where the two differ). */
#if defined(__GNUC__) && !defined(__clang__)
#define ADIR_GCC 1
#else
#define ADIR_GCC 0
#endif

/* A fused multiply-add rounds once; where it is slow (a library call) a multiply and an add. */
#ifndef ADIR_FMA
#if defined(FP_FAST_FMAF)
#define ADIR_FMA(x, y, acc) fmaf(x, y, acc)
#else
#define ADIR_FMA(x, y, acc) ((acc) + (x) * (y))
#endif
#endif

/* Tiles are compiled on their own, not inlined into the loops over tiles: inlined, clang
 * vectorizes those outer loops instead and loses the tile's registers. ADIR_INLINE: a helper
 * that each of its callers specialises with constant bounds. */
#if defined(__GNUC__)
#define ADIR_NOINLINE __attribute__((noinline))
#define ADIR_INLINE __inline__ __attribute__((always_inline))
#else
#define ADIR_NOINLINE
#define ADIR_INLINE
#endif

/* The target's ADIR_UNROLL_TILES, as gcc's pragma (other compilers unroll on their own). */
#if ADIR_UNROLL_TILES && ADIR_GCC
#define ADIR_UNROLL _Pragma("GCC unroll 16")
#else
#define ADIR_UNROLL
#endif

/* The target's ADIR_LANES_INNERMOST, where it applies: under gcc. */
#define ADIR_GCC_LANES_INNERMOST (ADIR_LANES_INNERMOST && ADIR_GCC)

/* The GEMM micro-kernel: one full MR x NR tile of a product, k steps:
 * c[i * c_row + j * c_col] (+)= the sum over p < k of a[i * a_row + p * a_col] *
 * b[p * b_row + j], for i < ADIR_GEMM_MR and j < ADIR_GEMM_NR, added to c when accumulate, else
 * stored. The sum over p runs in order, one ADIR_FMA per step. c overlaps neither a nor b. */
void adir_gemm_tile(const float *a, size_t a_row, size_t a_col, const float *b, size_t b_row,
                    float *c, size_t c_row, size_t c_col, int32_t k, int accumulate);

#endif /* ADIR_TUNED_H */
