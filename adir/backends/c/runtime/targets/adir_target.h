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
#elif defined(__ARM_ARCH_7EM__) && defined(__ARM_FP)
#include "adir_target_cortex_m4f.h"
#else
#include "adir_target_host.h"
#endif

#endif /* ADIR_TARGET_H */
