/* adir_float_mode.h: how the generated functions treat subnormal (denormal) floats.
 *
 * By default, as IEEE 754 says: kept, with gradual underflow, as the interpreter and PyTorch
 * compute. Built with -DADIR_FLUSH_DENORMALS, every function of the generated API (init aside)
 * sets the FPU's flush-to-zero mode on entry and restores the caller's mode before it returns:
 * every float operation inside then reads a subnormal operand as zero of the same sign and
 * writes zero of the same sign instead of a subnormal result. The interpreter computes the same
 * with `Session(module, flush_denormals=True)` (docs/numerics.md says what differs).
 *
 * Why: on x86 cores an operation on a subnormal takes a microcode assist (on the order of a
 * hundred cycles). Adam's moments of a parameter whose gradient is often zero decay
 * geometrically into the subnormal range: LeNet-5's batch-1 Adam step runs about four times
 * slower with subnormals kept on an Intel Xeon (docs/numerics.md). A Cortex-M4F computes
 * subnormals at full speed; its flush-to-zero mode is there to compute what an x86 build with
 * the option computes.
 *
 * The modes, one per target (anything else with the option is a compile error, not silently
 * IEEE):
 *   x86 with SSE (x86-64 always)      MXCSR: FTZ (bit 15) and DAZ (bit 6)
 *   AArch64                           FPCR: FZ (bit 24)
 *   32-bit Arm with a VFP (Cortex-M4F, M7, M33, A-profile)  FPSCR: FZ (bit 24)
 * AArch64's and Arm's FZ flushes both operands and results (Arm ARM, "Flush-to-zero"); x86
 * needs both bits for that. Only float operations are affected: copies, integer code and
 * library calls made by the kernels (expf, logf) run in the mode as the hardware applies it to
 * their instructions.
 */
#ifndef ADIR_FLOAT_MODE_H
#define ADIR_FLOAT_MODE_H

#if defined(ADIR_FLUSH_DENORMALS)

#if defined(__SSE__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 1)
#include <xmmintrin.h>
#define ADIR_FLUSH_BITS 0x8040u /* FTZ | DAZ */
typedef unsigned int adir_float_mode;
static inline adir_float_mode adir_flush_denormals_enter(void)
{
    const adir_float_mode saved = _mm_getcsr();
    _mm_setcsr(saved | ADIR_FLUSH_BITS);
    return saved;
}
static inline void adir_flush_denormals_leave(adir_float_mode saved)
{
    _mm_setcsr(saved);
}
#elif defined(__aarch64__) && defined(__GNUC__)
typedef unsigned long adir_float_mode;
static inline adir_float_mode adir_flush_denormals_enter(void)
{
    adir_float_mode saved;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(saved));
    __asm__ __volatile__("msr fpcr, %0" : : "r"(saved | (1ul << 24)));
    return saved;
}
static inline void adir_flush_denormals_leave(adir_float_mode saved)
{
    __asm__ __volatile__("msr fpcr, %0" : : "r"(saved));
}
#elif defined(__arm__) && defined(__ARM_FP) && defined(__GNUC__)
typedef unsigned int adir_float_mode;
static inline adir_float_mode adir_flush_denormals_enter(void)
{
    adir_float_mode saved;
    __asm__ __volatile__("vmrs %0, fpscr" : "=r"(saved));
    __asm__ __volatile__("vmsr fpscr, %0" : : "r"(saved | (1u << 24)) : "memory");
    return saved;
}
static inline void adir_flush_denormals_leave(adir_float_mode saved)
{
    __asm__ __volatile__("vmsr fpscr, %0" : : "r"(saved) : "memory");
}
#else
#error "ADIR_FLUSH_DENORMALS: no flush-to-zero mode known for this target (see adir_float_mode.h)"
#endif

/* The first and the last lines of each generated function. */
#define ADIR_FLOAT_MODE_ENTER const adir_float_mode adir_caller_mode = adir_flush_denormals_enter();
#define ADIR_FLOAT_MODE_LEAVE adir_flush_denormals_leave(adir_caller_mode);

#else

#define ADIR_FLOAT_MODE_ENTER
#define ADIR_FLOAT_MODE_LEAVE

#endif /* ADIR_FLUSH_DENORMALS */

#endif /* ADIR_FLOAT_MODE_H */
