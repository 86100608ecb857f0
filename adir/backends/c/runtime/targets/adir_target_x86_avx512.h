/* adir_target_x86_avx512.h: the tuned kernels' settings for x86-64 with AVX-512 (chosen when the
 * compiler predefines __AVX512F__, e.g. -march=native on Zen 4 or Skylake-X): 32 vector
 * registers of 16 floats. */
#ifndef ADIR_TARGET_SETTINGS_H
#define ADIR_TARGET_SETTINGS_H

#define ADIR_TARGET_NAME "x86-avx512"

/* GEMM tile: 8 x 16, one 16-float vector per row (8 accumulators). */
#define ADIR_GEMM_MR 8
#define ADIR_GEMM_NR 16
#define ADIR_GEMM_KC 256

/* A dot tile of one 16-float vector per sum: half the loads per multiply-add of 8 lanes, which
 * bound the 8-lane tile (a 32 x 784 by 784 x 256 product: 20% faster on Zen 4). */
#define ADIR_DOT_ROWS 4
#define ADIR_DOT_COLS 4
#define ADIR_DOT_LANES 16

/* A weight-gradient tile of 4 x 5 sums takes 9 loads per 20 multiply-adds (4 x 4: 8 per 16), a
 * 5-wide kernel row at once, and its 20 accumulators and 9 operands fit in 32 registers. */
#define ADIR_CONV_OB 8
#define ADIR_CONV_RB 2
#define ADIR_CONV_QB 8
#define ADIR_CONV_WB 4
#define ADIR_CONV_TB 5
/* The weight-gradient tile's lanes: the forward tile's. */
#define ADIR_CONV_WQB ADIR_CONV_QB

#define ADIR_UNROLL_TILES 0
#define ADIR_LANES_INNERMOST 0

/* The `_gemm` convolutions read im2col in place from phase planes where their scratch holds
 * them (adir_tuned_conv_implicit.c; select-kernels asks for it on this target). */
#define ADIR_CONV_IMPLICIT 1
/* Its tiles (adir_tuned_conv_implicit.c): 8 outputs by 32 pixels, 12 taps by 16 outputs (16
 * taps: 16 pointers in 15 registers, 1,031 against 840 us for ResNet-8 b16's 16 -> 16 weight
 * gradient). */
#define ADIR_IMPLICIT_NR 32
#define ADIR_IMPLICIT_WMR 12
/* The weight gradient's wide tiles: 8 taps by 32 outputs, 6 taps by 64; the forward tiles with
 * outputs in lanes: 8 pixels by 32 outputs, 6 by 64. By 12 x 32, gcc 12 keeps 5 of the 12
 * broadcasts on the stack (ResNet-8 b16's 32 -> 32 weight gradient: 907 against 713 us, its
 * forward pass 728 against 671); by 4 x 64, 16 sums are too few (763 against 691, 838 against
 * 688 us for the 64 -> 64). */
#define ADIR_IMPLICIT_WIDE_TAPS 8
#define ADIR_IMPLICIT_WIDE4_TAPS 6
#define ADIR_IMPLICIT_LANE_PIXELS 8
#define ADIR_IMPLICIT_LANE4_PIXELS 6

#endif /* ADIR_TARGET_SETTINGS_H */
