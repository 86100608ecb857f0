/* adir_target_cortex_m4f.h: the tuned kernels' settings for a Cortex-M4F (chosen when the
 * compiler predefines __ARM_ARCH_7EM__ and __ARM_FP, as arm-none-eabi-gcc -mcpu=cortex-m4
 * -mfloat-abi=hard does): no vectors, 32 single-precision registers, VFMA.F32. */
#ifndef ADIR_TARGET_SETTINGS_H
#define ADIR_TARGET_SETTINGS_H

#define ADIR_TARGET_NAME "cortex-m4f"

/* Tiles whose accumulators, operands and addresses fit the 32 S registers with no spill
 * (checked in arm-none-eabi-gcc -O2's assembly): the GEMM tile 4 x 4 (16 sums, 4 + 4
 * operands); a row of a against 4 rows of b, 4 lanes each (16 sums: a batch of one's forward
 * pass). The dot-product tile of 2 rows of a (32 sums, lanes innermost) still spills; batches
 * of two or more through it are left as they were (about 10 instructions a multiply-add). */
#define ADIR_GEMM_MR 4
#define ADIR_GEMM_NR 4
#define ADIR_GEMM_KC 256
/* Two steps of the GEMM micro-kernel a turn of its loop over k (the same sums in the same
 * order): DS-CNN's pointwise convolutions, GEMMs of 64 x 64 by 64 x 125, from 2.18 to 2.0
 * instructions a multiply-add. */
#define ADIR_GEMM_K_STEPS 2

#define ADIR_DOT_ROWS 2
#define ADIR_DOT_COLS 4
#define ADIR_DOT_LANES 4
#define ADIR_DOT_ROW_UNROLL_TILE 1
/* Two steps of 4 lanes per turn of a batch of one's loop over k: 13 fewer pointer increments
 * and loop tests for every 32 multiply-adds (2.47 instructions a multiply-add, from 2.69;
 * the same sums in the same order). */
#define ADIR_DOT_ROW_STEPS 2

/* A row of a plain-b product below the last GEMM tile (a batch of one's input gradient, dy W):
 * 16 columns' sums in S registers while k runs (one load of a, 16 of b, 16 VFMA and two
 * pointer steps a row of b), where the stream loaded and stored c at every multiply-add. */
#define ADIR_STREAM_COLS 16

/* The direct convolutions' tiles (adir_tuned_conv.c). The best of those tried on LeNet-5's
 * step (docs/cortex_m.md). The weight-gradient tile is 4 outputs x 4 taps x 1 lane: its 16 sums
 * stay in S registers (with 8 lanes, 2 x 4 x 8 = 64 sums spilled: LeNet-5's step 4,148,632
 * instructions, now 2,276,240). */
#define ADIR_CONV_OB 4
#define ADIR_CONV_RB 1
#define ADIR_CONV_QB 8
#define ADIR_CONV_WB 4
#define ADIR_CONV_TB 4
#define ADIR_CONV_WQB 1

#define ADIR_UNROLL_TILES 1
#define ADIR_LANES_INNERMOST 1

/* VFMA.F32: one instruction and one rounding per multiply-add (newlib's math.h does not define
 * FP_FAST_FMAF, so adir_tuned.h would otherwise multiply and add). */
#if defined(__ARM_FEATURE_FMA) && defined(__GNUC__)
#define ADIR_FMA(x, y, acc) __builtin_fmaf(x, y, acc)
#endif

/* A batch of one's weight-gradient updates in one pass (adir_tuned_updates.c): blocks of 16
 * elements at constant offsets from one pointer per row and stream, SGD 4 rows at a time and
 * momentum and Adam 4 when in place, sharing each load of b (measured under QEMU: 6.4
 * instructions a weight for SGD, 20.5 for Adam, no spill; with blocks of 8, 6.5 and 20.8:
 * docs/cortex_m.md). The plain updates (no matmul) in one pass too, in the same blocks. */
#define ADIR_OUTER_UPDATES 1
#define ADIR_OUTER_BLOCK 16
#define ADIR_OUTER_ROWS 4
#define ADIR_OUTER_STATE_ROWS 4

#endif /* ADIR_TARGET_SETTINGS_H */
