/* adir_target_host.h: the tuned kernels' settings for a host that no other header describes
 * (x86-64 with SSE2 only, the default without -march; AArch64 NEON): 16 vector registers of 4
 * floats. See adir_target.h for how a header is chosen. */
#ifndef ADIR_TARGET_SETTINGS_H
#define ADIR_TARGET_SETTINGS_H

#define ADIR_TARGET_NAME "host-generic"

/* The GEMM micro-kernel (adir_gemm_tile: matmul's plain-b products and the fused
 * weight-gradient updates): an MR x NR tile of the product in registers, NR two vectors; k in
 * blocks of KC, so that a KC x NR panel of b stays in the L1 cache. */
#define ADIR_GEMM_MR 4
#define ADIR_GEMM_NR 8
#define ADIR_GEMM_KC 256

/* matmul's dot-product tile (transpose_b alone): ROWS x COLS sums of LANES partial sums. */
#define ADIR_DOT_ROWS 4
#define ADIR_DOT_COLS 2
#define ADIR_DOT_LANES 8

/* The convolution tiles (stride 1, no padding, no dilation): OB output (or, for the input
 * gradient, input) channels x RB output rows x QB pixels; the weight gradient's WB output
 * channels x TB taps x QB partial sums. */
#define ADIR_CONV_OB 4
#define ADIR_CONV_RB 1
#define ADIR_CONV_QB 8
#define ADIR_CONV_WB 2
#define ADIR_CONV_TB 4
/* The weight-gradient tile's lanes: the forward tile's. */
#define ADIR_CONV_WQB ADIR_CONV_QB

/* 1: gcc is told to unroll the tiles' loops (below -O3 it unrolls no loop that grows the code,
 * and without AVX it would then leave a tile in memory; other compilers ignore it). */
#define ADIR_UNROLL_TILES 1

/* 1: under gcc, the dot-product tiles run their lanes innermost, a loop that gcc's cheapest
 * vectorizer (-O2, SSE) takes as it is; 0: lanes outermost, unrolled whole into registers. */
#define ADIR_LANES_INNERMOST 1

/* Fused multiply-add: fmaf where the compiler says it is fast (C99's FP_FAST_FMAF, see
 * adir_tuning.h), else a multiply and an add. */

/* The `_gemm` convolutions read im2col in place from phase planes where their scratch holds
 * them (adir_tuned_conv_implicit.c; select-kernels asks for it on this target). */
#define ADIR_CONV_IMPLICIT 1

#endif /* ADIR_TARGET_SETTINGS_H */
