/* adir_target_x86_avx2.h: the tuned kernels' settings for x86-64 with AVX or AVX2 (chosen when
 * the compiler predefines __AVX__, e.g. -march=haswell or -march=native there): 16 vector
 * registers of 8 floats. FMA3 (-mfma, part of every AVX2 -march) gives FP_FAST_FMAF. */
#ifndef ADIR_TARGET_SETTINGS_H
#define ADIR_TARGET_SETTINGS_H

#define ADIR_TARGET_NAME "x86-avx2"

/* GEMM tile: 4 x 16, two 8-float vectors per row (8 accumulators, 4 broadcasts, 2 loads). */
#define ADIR_GEMM_MR 4
#define ADIR_GEMM_NR 16
#define ADIR_GEMM_KC 256

#define ADIR_DOT_ROWS 4
#define ADIR_DOT_COLS 2
#define ADIR_DOT_LANES 8

/* Two output rows of forward-conv accumulators fit in 16 registers and share each weight. */
#define ADIR_CONV_OB 4
#define ADIR_CONV_RB 2
#define ADIR_CONV_QB 8
#define ADIR_CONV_WB 2
#define ADIR_CONV_TB 4
/* The weight-gradient tile's lanes: the forward tile's. */
#define ADIR_CONV_WQB ADIR_CONV_QB

/* gcc keeps AVX tiles in registers without being told to unroll; lanes outermost. */
#define ADIR_UNROLL_TILES 0
#define ADIR_LANES_INNERMOST 0

/* The `_gemm` convolutions read im2col in place from phase planes where their scratch holds
 * them (adir_tuned_conv_implicit.c; select-kernels asks for it on this target). */
#define ADIR_CONV_IMPLICIT 1

#endif /* ADIR_TARGET_SETTINGS_H */
