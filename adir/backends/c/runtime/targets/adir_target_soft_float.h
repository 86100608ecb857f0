/* adir_target_soft_float.h: the tuned kernels' settings for a core with no FPU (chosen when the
 * compiler predefines __SOFTFP__, as arm-none-eabi-gcc -mfloat-abi=soft does for a Cortex-M3,
 * or __riscv without __riscv_flen, as for RV32IMAC). Every float add and multiply is a call
 * into libgcc's soft-float routines (40 to 90 instructions each), so the tiles matter little:
 * the seed MLP's SGD step on QEMU's Cortex-M3 (mps2-an385) takes 6,132,800 instructions with
 * these (the M4F's tiles and its one-pass weight-gradient updates), 6,176,360 with the host's
 * tiles and the one-pass updates, 6,595,240 with the host's settings, 6,812,360 with 2 x 2
 * tiles and no unrolling. No fused multiply-add: fmaf is a library call too. */
#ifndef ADIR_TARGET_SETTINGS_H
#define ADIR_TARGET_SETTINGS_H

#define ADIR_TARGET_NAME "soft-float"

#define ADIR_GEMM_MR 4
#define ADIR_GEMM_NR 4
#define ADIR_GEMM_KC 256

#define ADIR_DOT_ROWS 2
#define ADIR_DOT_COLS 4
#define ADIR_DOT_LANES 4
#define ADIR_DOT_ROW_UNROLL_TILE 1

#define ADIR_CONV_OB 4
#define ADIR_CONV_RB 1
#define ADIR_CONV_QB 8
#define ADIR_CONV_WB 2
#define ADIR_CONV_TB 4
/* The weight-gradient tile's lanes: the forward tile's. */
#define ADIR_CONV_WQB ADIR_CONV_QB

#define ADIR_UNROLL_TILES 1
#define ADIR_LANES_INNERMOST 1

#define ADIR_OUTER_UPDATES 1
#define ADIR_OUTER_BLOCK 8
#define ADIR_OUTER_ROWS 4
#define ADIR_OUTER_STATE_ROWS 4

#endif /* ADIR_TARGET_SETTINGS_H */
