/* adir_target_rv32f.h: the tuned kernels' settings for an RV32 core with the F extension (chosen
 * when the compiler predefines __riscv and __riscv_flen, as riscv64-unknown-elf-gcc
 * -march=rv32imafc does): no vectors, 32 single-precision registers and fmadd.s, as a
 * Cortex-M4F has, so the M4F's tiles (adir_target_cortex_m4f.h). */
#ifndef ADIR_TARGET_SETTINGS_H
#define ADIR_TARGET_SETTINGS_H

#define ADIR_TARGET_NAME "rv32f"

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
#define ADIR_CONV_WB 4
#define ADIR_CONV_TB 4
/* The weight-gradient tile: 4 outputs x 4 taps x 1 lane, its 16 sums in f registers (as on
 * the Cortex-M4F). */
#define ADIR_CONV_WQB 1

#define ADIR_UNROLL_TILES 1
#define ADIR_LANES_INNERMOST 1

/* fmadd.s: one instruction and one rounding per multiply-add (picolibc's math.h does not
 * define FP_FAST_FMAF, so adir_tuned.h would otherwise multiply and add). */
#if defined(__GNUC__)
#define ADIR_FMA(x, y, acc) __builtin_fmaf(x, y, acc)
#endif

/* A batch of one's weight-gradient updates in one pass, as on the M4F (adir_tuned_updates.c):
 * the seed MLP's SGD step under QEMU takes 218,000 instructions with it, 1,697,000 without. */
#define ADIR_OUTER_UPDATES 1
#define ADIR_OUTER_BLOCK 8
#define ADIR_OUTER_ROWS 4
#define ADIR_OUTER_STATE_ROWS 4

#endif /* ADIR_TARGET_SETTINGS_H */
