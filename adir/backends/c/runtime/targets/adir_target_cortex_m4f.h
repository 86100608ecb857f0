/* adir_target_cortex_m4f.h: the tuned kernels' settings for a Cortex-M4F (chosen when the
 * compiler predefines __ARM_ARCH_7EM__ and __ARM_FP, as arm-none-eabi-gcc -mcpu=cortex-m4
 * -mfloat-abi=hard does): no vectors, 32 single-precision registers, VFMA.F32 (FP_FAST_FMAF).
 * The tiles are those of host-generic, whose accumulators fit the 32 registers; the Cortex-M
 * instruction counts in docs/cortex_m.md were measured with them. */
#ifndef ADIR_TARGET_SETTINGS_H
#define ADIR_TARGET_SETTINGS_H

#define ADIR_TARGET_NAME "cortex-m4f"

#define ADIR_GEMM_MR 4
#define ADIR_GEMM_NR 8
#define ADIR_GEMM_KC 256

#define ADIR_DOT_ROWS 4
#define ADIR_DOT_COLS 2
#define ADIR_DOT_LANES 8

#define ADIR_CONV_OB 4
#define ADIR_CONV_RB 1
#define ADIR_CONV_QB 8
#define ADIR_CONV_WB 2
#define ADIR_CONV_TB 4

#define ADIR_UNROLL_TILES 1
#define ADIR_LANES_INNERMOST 1

#endif /* ADIR_TARGET_SETTINGS_H */
