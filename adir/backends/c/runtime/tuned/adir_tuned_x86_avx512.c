/* adir_tuned_x86_avx512.c: in a multiversioned build (targets/adir_multiversion.h: a portable
 * x86-64 build by gcc or clang on glibc), every tuned kernel once more, for x86-64 with
 * AVX-512 F, VL, BW and DQ (Skylake-X, Zen 4 and later), with adir_target_x86_avx512.h's tile sizes, under names ending in
 * _avx512; tuned/adir_tuned_dispatch.c binds the kernels' names to these where the CPU has
 * those four and avx2, fma. Empty in every other build. */
#include "adir_multiversion.h"

#if ADIR_MULTIVERSION
#define ADIR_VARIANT_SUFFIX _avx512
#define ADIR_TARGET_SETTINGS "adir_target_x86_avx512.h"
/* One rounding a multiply-add, as -march=native gives through FP_FAST_FMAF. */
#define ADIR_FMA(x, y, acc) fmaf(x, y, acc)
#define ADIR_FMA_FUSES 1
#define ADIR_VARIANT_TARGET "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma"
#include "adir_tuned_sources.h"
#else
/* ISO C wants a declaration in every translation unit. */
typedef int adir_tuned_x86_avx512_is_empty;
#endif
