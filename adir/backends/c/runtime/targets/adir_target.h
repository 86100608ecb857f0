/* adir_target.h: picks the settings header of the target the compiler builds for (the tuned
 * kernels in tuned/ read their tile sizes and loop shapes from it, nothing else).
 *
 * The choice follows what the compiler predefines for its -march/-mcpu flags, so the same
 * generated C builds for any of them. To choose another header (a new target, or tile sizes of
 * your own), name it:
 *
 *     cc -DADIR_TARGET_SETTINGS='"my_settings.h"' ...
 *
 * A settings header defines every macro adir_target_host.h defines. Adding a target is one
 * header here and one line below. */
#ifndef ADIR_TARGET_H
#define ADIR_TARGET_H

#if defined(ADIR_TARGET_SETTINGS)
#include ADIR_TARGET_SETTINGS
#elif defined(__AVX512F__)
#include "adir_target_x86_avx512.h"
#elif defined(__AVX__)
#include "adir_target_x86_avx2.h"
#elif (defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__)) && defined(__ARM_FP)
/* A Cortex-M4F, M7, M33 or M55: 32 single-precision registers and VFMA. On the M55 these
 * scalar tiles beat the host's (the seed MLP's step under QEMU mps3-an547: 239,313
 * instructions, against 386,594). */
#include "adir_target_cortex_m4f.h"
#elif defined(__SOFTFP__) || (defined(__riscv) && !defined(__riscv_flen))
#include "adir_target_soft_float.h"
#elif defined(__riscv) && __riscv_xlen == 32
#include "adir_target_rv32f.h"
#else
#include "adir_target_host.h"
#endif

#endif /* ADIR_TARGET_H */
