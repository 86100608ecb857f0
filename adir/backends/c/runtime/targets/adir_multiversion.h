/* adir_multiversion.h: whether a portable x86-64 build carries AVX2 and AVX-512 versions of the
 * tuned kernels beside its SSE2 ones and picks one when the program is loaded.
 *
 * Built without -march on x86-64 (`cc -O2 *.c`), the compiler may use SSE2 only: 4 floats a
 * vector, no fused multiply-add, a quarter of AVX-512's lanes and half its multiply-adds an
 * instruction. Such a build then also compiles every tuned kernel (tuned/adir_tuned_*.c) twice
 * more, each time with the target's own settings header and instructions (tuned/
 * adir_tuned_x86_avx2.c: "avx2,fma" with adir_target_x86_avx2.h; tuned/adir_tuned_x86_avx512.c:
 * AVX-512 with adir_target_x86_avx512.h), under names with a suffix (_generic, _avx2, _avx512,
 * tuned/adir_tuned_variants.h), and each kernel's own name is a GNU indirect function
 * (tuned/adir_tuned_dispatch.c) whose resolver, run once by the dynamic loader, asks the CPU
 * (__builtin_cpu_supports) and binds the name to the widest version it runs. The generated code
 * calls the kernels by their names as in every other build.
 *
 * On: gcc or clang (__GNUC__) building for x86-64 ELF with glibc (whose loader runs ifunc
 * resolvers), with no AVX of its own (-march=native or -mavx2 already gives the kernels their
 * target's settings), optimizing for speed (-O1 and up; not -O0, a debugging build, nor -Os,
 * which asks for size: the versions are 3 copies of the tuned kernels, about 0.4 MB) and with
 * no settings header chosen by hand (ADIR_TARGET_SETTINGS). Off everywhere else: MSVC,
 * Cortex-M, RISC-V, AArch64, macOS, musl, and with -DADIR_NO_MULTIVERSION.
 *
 * Numbers: the versions sum in the same order as the SSE2 build (each is the same C), but the
 * AVX2 and AVX-512 ones multiply-add with fmaf (one rounding) where the SSE2 one multiplies and
 * adds, as an -march=native build does (adir_tuned.h's ADIR_FMA), and nowhere else: gcc
 * contracts nothing in ISO C modes (-std=c99 implies -ffp-contract=off), and the versions tell
 * clang `STDC FP_CONTRACT OFF` (tuned/adir_tuned_sources.h). The kernels' promises to their
 * references (docs/numerics.md) are those of -march=native: test_c_kernels_vs_reference.py
 * checks each version. */
#ifndef ADIR_MULTIVERSION_H
#define ADIR_MULTIVERSION_H

/* glibc's __GLIBC__ comes with its first header. */
#include <limits.h>

#if !defined(ADIR_NO_MULTIVERSION) && !defined(ADIR_TARGET_SETTINGS) && defined(__GNUC__) && \
    defined(__x86_64__) && defined(__ELF__) && defined(__GLIBC__) && !defined(__AVX__) &&     \
    defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__) && defined(__has_attribute)
#if __has_attribute(ifunc) && __has_attribute(target)
#define ADIR_MULTIVERSION 1
#endif
#endif
#ifndef ADIR_MULTIVERSION
#define ADIR_MULTIVERSION 0
#endif

/* A kernel's name in one version: NAME followed by ADIR_VARIANT_SUFFIX (_generic unless a
 * version's translation unit says). */
#define ADIR_VARIANT_CAT_(name, suffix) name##suffix
#define ADIR_VARIANT_CAT(name, suffix) ADIR_VARIANT_CAT_(name, suffix)
#define ADIR_VARIANT_NAME(name) ADIR_VARIANT_CAT(name, ADIR_VARIANT_SUFFIX)

#endif /* ADIR_MULTIVERSION_H */
