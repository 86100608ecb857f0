/* adir_tuned_dispatch.c: in a multiversioned build (targets/adir_multiversion.h), each tuned
 * kernel's name as a GNU indirect function: the dynamic loader runs its resolver once, before
 * main, and binds the name to the version of the kernel that this CPU runs fastest
 * (adir_tuned_x86_avx512.c, adir_tuned_x86_avx2.c, else the build's own SSE2 code, the
 * kernels' _generic names). A call then costs what a call of a function in a shared library
 * costs (one indirect jump), and the kernels are the same C in every version. Empty in every
 * other build. */
#define ADIR_TUNED_DISPATCH 1
#include "adir_tuned.h"

#if ADIR_MULTIVERSION

/* Resolvers run while the loader relocates the program, before a sanitizer's run-time is up:
 * they must not be instrumented (their one load, of libgcc's CPU model, would check shadow
 * memory that is not mapped yet). `used`: clang does not see the ifunc's use of them. */
#if __has_attribute(no_sanitize_address)
#define ADIR_RESOLVER_ATTRIBUTES __attribute__((used, no_sanitize_address, no_instrument_function))
#else
#define ADIR_RESOLVER_ATTRIBUTES __attribute__((used, no_instrument_function))
#endif

/* The widest version a build may pick: -DADIR_X86_VERSION_MAX=1 (or 0) times the AVX2 (or
 * SSE2) kernels on a core that has AVX-512, as an AVX2 machine (Zen 2 and 3, most laptops)
 * would run them (docs/benchmarks.md, "The portable build"). */
#ifndef ADIR_X86_VERSION_MAX
#define ADIR_X86_VERSION_MAX 2
#endif

/* The widest version this CPU runs: 2 AVX-512 (with AVX2 and FMA), 1 AVX2 and FMA, 0 SSE2. */
static ADIR_RESOLVER_ATTRIBUTES int adir_x86_version(void)
{
    __builtin_cpu_init(); /* gcc: resolvers run before libgcc's constructor fills the model */
    if (ADIR_X86_VERSION_MAX >= 1 && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma")) {
        if (ADIR_X86_VERSION_MAX >= 2 && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512dq")) {
            return 2;
        }
        return 1;
    }
    return 0;
}

#define ADIR_DISPATCH(name)                                                                    \
    extern __typeof__(name) name##_generic, name##_avx2, name##_avx512;                        \
    static ADIR_RESOLVER_ATTRIBUTES __typeof__(&name) name##_resolve(void)                     \
    {                                                                                          \
        const int version = adir_x86_version();                                                \
        return version == 2 ? name##_avx512 : version == 1 ? name##_avx2 : name##_generic;    \
    }                                                                                          \
    __typeof__(name) name __attribute__((ifunc(#name "_resolve")));

ADIR_TUNED_KERNELS(ADIR_DISPATCH)

#else
/* ISO C wants a declaration in every translation unit. */
typedef int adir_tuned_dispatch_is_empty;
#endif
