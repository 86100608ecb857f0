/* adir_init.h: adir's parameter initializers in C99, bit-identical to adir's interpreter.
 *
 * The specification is the docstring of adir/interpreter/prng.py (the generator) and of
 * adir/interpreter/initializers.py (the initializers); this file follows it operation by
 * operation. Element i of a tensor drawn with seed s depends only on (s, i):
 *
 *   adir_prng_u64(s, i)      SplitMix64's i-th output from the state mix64(s)
 *   adir_prng_uniform(s, i)  float in [0, 1): the top 24 bits times 2^-24
 *   adir_prng_normal(s, i)   Box-Muller on draws 2i and 2i+1, in double, rounded once to float
 *
 * and the fill functions below write element i of `out` from counter i (row-major order).
 * The compiler passes the float parameters already rounded to float; for kaiming and xavier,
 * the bound that `bound(shape)` of the attribute computes in double, rounded to float
 * (`adir.interpreter.initializers.symmetric_bound`).
 *
 * Bit-exactness needs, and this header checks what it can:
 *   - IEEE 754 float and double, round to nearest, subnormals kept (no flush to zero);
 *   - float operations evaluated in float and double in double (FLT_EVAL_METHOD 0: x86-64,
 *     AArch64, Arm with a VFP; on 32-bit x86 compile with -msse2 -mfpmath=sse);
 *   - no contraction of a * b + c into a fused multiply-add. Every product is its own
 *     statement; under GCC, which ignores `#pragma STDC FP_CONTRACT` and in its GNU modes
 *     contracts across statements, the header turns contraction off for its own functions with
 *     `#pragma GCC optimize`; for other compilers each function opens with
 *     `#pragma STDC FP_CONTRACT OFF`. Compile with -ffp-contract=off anyway (clang's
 *     -ffp-contract=fast ignores the pragma), and never with -ffast-math;
 *   - double and uint64_t of the same byte order (every current platform).
 * No libm: ln, sqrt and cos are written here with +, -, *, / and exponent bit manipulation,
 * because libm implementations differ in the last bit.
 */
#ifndef ADIR_INIT_H
#define ADIR_INIT_H

#include <stdint.h>
#include <string.h>

#if defined(__FAST_MATH__)
#error "adir_init.h: -ffast-math changes floating-point results; initializers would differ"
#endif
#if defined(__FLT_EVAL_METHOD__) && (__FLT_EVAL_METHOD__ == 1 || __FLT_EVAL_METHOD__ == 2)
#error "adir_init.h: needs FLT_EVAL_METHOD 0 (on 32-bit x86: -msse2 -mfpmath=sse)"
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#define ADIR_INIT_NO_CONTRACT
#else
#define ADIR_INIT_NO_CONTRACT _Pragma("STDC FP_CONTRACT OFF")
#endif

/* A seed s passed to a model's init shifts every initializer's stream by s times this constant
 * (adir.interpreter.initializers.SEED_STEP); s = 0 draws the streams written in the IR. */
#define ADIR_INIT_SEED_STEP UINT64_C(0x9E3779B97F4A7C15)

#define ADIR_INIT_MANTISSA UINT64_C(0x000FFFFFFFFFFFFF)
#define ADIR_INIT_EXPONENT_ONE UINT64_C(0x3FF0000000000000) /* the exponent field of 1.0 */

static inline uint64_t adir_init_bits(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

static inline double adir_init_from_bits(uint64_t bits)
{
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* SplitMix64's finaliser (Steele, Lea & Flood 2014; Stafford's Mix13 constants). */
static inline uint64_t adir_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* The 64-bit draw of element `index` of stream `seed`. */
static inline uint64_t adir_prng_u64(uint64_t seed, uint64_t index)
{
    uint64_t key = adir_mix64(seed);
    return adir_mix64(key + (index + 1u) * UINT64_C(0x9E3779B97F4A7C15));
}

/* Uniform in [0, 1): k * 2^-24 with k the top 24 bits of the draw (exact). */
static inline float adir_prng_uniform(uint64_t seed, uint64_t index)
{
    return (float)(adir_prng_u64(seed, index) >> 40) * 0x1p-24f;
}

/* Natural log of a positive normal double: x = m * 2^e with m in [sqrt(1/2), sqrt(2)],
 * ln m = 2 atanh(s), s = (m - 1) / (m + 1), by its series; ln 2 split as in fdlibm. */
static inline double adir_prng_ln(double x)
{
    ADIR_INIT_NO_CONTRACT
    static const double series[11] = {/* the doubles nearest 1 / (2j + 1) */
        1.0, 0.3333333333333333, 0.2, 0.14285714285714285, 0.1111111111111111,
        0.09090909090909091, 0.07692307692307693, 0.06666666666666667,
        0.058823529411764705, 0.05263157894736842, 0.047619047619047616};
    const double ln2_hi = 0.6931471803691238;    /* 0x3FE62E42FEE00000 */
    const double ln2_lo = 1.9082149292705877e-10; /* ln 2 - ln2_hi */
    uint64_t bits = adir_init_bits(x);
    double e = (double)(bits >> 52) - 1023.0;
    double m = adir_init_from_bits((bits & ADIR_INIT_MANTISSA) | ADIR_INIT_EXPONENT_ONE);
    double s, s2, p, ln_m, lo, hi;
    int j;
    if (m > 1.4142135623730951) { /* the double nearest sqrt(2) */
        m = m * 0.5;
        e = e + 1.0;
    }
    s = (m - 1.0) / (m + 1.0);
    s2 = s * s;
    p = series[10];
    for (j = 9; j >= 0; --j) {
        p = p * s2;
        p = p + series[j];
    }
    ln_m = (s + s) * p;
    lo = e * ln2_lo;
    lo = lo + ln_m;
    hi = e * ln2_hi;
    return hi + lo;
}

/* Square root of zero or a positive normal double: five Newton steps on the mantissa. */
static inline double adir_prng_sqrt(double x)
{
    ADIR_INIT_NO_CONTRACT
    uint64_t bits = adir_init_bits(x);
    uint64_t biased = bits >> 52;
    double m = adir_init_from_bits((bits & ADIR_INIT_MANTISSA) | ADIR_INIT_EXPONENT_ONE);
    double y, q;
    int i;
    if (bits == 0) {
        return 0.0;
    }
    if ((biased & 1u) == 0) { /* make the exponent even: m in [1, 4) */
        m = m * 2.0;
        biased = biased - 1u;
    }
    y = m - 1.0; /* the chord through (1, 1) and (4, 2) */
    y = y / 3.0;
    y = y + 1.0;
    for (i = 0; i < 5; ++i) {
        q = m / y;
        y = y + q;
        y = y * 0.5;
    }
    return y * adir_init_from_bits(((biased + 1023u) >> 1) << 52);
}

/* cos(2 pi k / 2^53) for k in [0, 2^53): exact reduction to the nearest quarter turn, then
 * the Taylor series of cos or sin on |x| <= pi/4. */
static inline double adir_prng_cos_turn(uint64_t k)
{
    ADIR_INIT_NO_CONTRACT
    static const double cos_series[9] = {/* the doubles nearest (-1)^j / (2j)! */
        1.0, -0.5, 0.041666666666666664, -0.001388888888888889, 2.48015873015873e-05,
        -2.755731922398589e-07, 2.08767569878681e-09, -1.1470745597729725e-11,
        4.779477332387385e-14};
    static const double sin_series[9] = {/* the doubles nearest (-1)^j / (2j + 1)! */
        1.0, -0.16666666666666666, 0.008333333333333333, -0.0001984126984126984,
        2.7557319223985893e-06, -2.505210838544172e-08, 1.6059043836821613e-10,
        -7.647163731819816e-13, 2.8114572543455206e-15};
    uint64_t q = (k + (UINT64_C(1) << 50)) >> 51;
    int64_t r = (int64_t)k - (int64_t)(q << 51);
    double x = (double)r * 6.975736996017264e-16; /* double(pi) * 2^-52 radians a step */
    double x2 = x * x;
    const double *series = (q & 1u) ? sin_series : cos_series;
    double p = series[8];
    int j;
    for (j = 7; j >= 0; --j) {
        p = p * x2;
        p = p + series[j];
    }
    switch (q & 3u) {
    case 0:
        return p;
    case 1:
        return -(x * p);
    case 2:
        return -p;
    default:
        return x * p;
    }
}

/* Standard normal: Box-Muller, z = sqrt(-2 ln u) cos(2 pi v), u in (0, 1] from draw 2i and
 * v = k / 2^53 from draw 2i + 1, in double, then rounded once to float. */
static inline float adir_prng_normal(uint64_t seed, uint64_t index)
{
    ADIR_INIT_NO_CONTRACT
    uint64_t a = adir_prng_u64(seed, 2u * index);
    uint64_t b = adir_prng_u64(seed, 2u * index + 1u);
    double u = (double)((a >> 11) + 1u) * 0x1p-53;
    double t = -2.0 * adir_prng_ln(u);
    double z = adir_prng_sqrt(t) * adir_prng_cos_turn(b >> 11);
    return (float)z;
}

/* #adir.zeros */
static inline void adir_init_zeros(float *out, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        out[i] = 0.0f;
    }
}

/* #adir.fill<value> */
static inline void adir_init_fill(float *out, size_t n, float value)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        out[i] = value;
    }
}

/* #adir.uniform<low, high, seed>: low + (high - low) * u, in float. */
static inline void adir_init_uniform(float *out, size_t n, float low, float high, uint64_t seed)
{
    ADIR_INIT_NO_CONTRACT
    float width = high - low;
    size_t i;
    for (i = 0; i < n; ++i) {
        float scaled = width * adir_prng_uniform(seed, (uint64_t)i);
        out[i] = low + scaled;
    }
}

/* #adir.normal<mean, std, seed>: mean + std * z, in float. */
static inline void adir_init_normal(float *out, size_t n, float mean, float std, uint64_t seed)
{
    ADIR_INIT_NO_CONTRACT
    size_t i;
    for (i = 0; i < n; ++i) {
        float scaled = std * adir_prng_normal(seed, (uint64_t)i);
        out[i] = mean + scaled;
    }
}

/* U(-bound, bound): bound * (2u - 1), in float; 2u - 1 is exact, so there is one rounding and
 * every value lies in [-bound, bound). */
static inline void adir_init_symmetric_uniform(float *out, size_t n, float bound, uint64_t seed)
{
    ADIR_INIT_NO_CONTRACT
    size_t i;
    for (i = 0; i < n; ++i) {
        float u = adir_prng_uniform(seed, (uint64_t)i);
        float t = u + u;
        t = t - 1.0f;
        out[i] = bound * t;
    }
}

/* #adir.kaiming_uniform<a, mode, seed>: `bound` is KaimingUniformInit.bound(shape) as float. */
static inline void adir_init_kaiming_uniform(float *out, size_t n, float bound, uint64_t seed)
{
    adir_init_symmetric_uniform(out, n, bound, seed);
}

/* #adir.xavier_uniform<gain, seed>: `bound` is XavierUniformInit.bound(shape) as float. */
static inline void adir_init_xavier_uniform(float *out, size_t n, float bound, uint64_t seed)
{
    adir_init_symmetric_uniform(out, n, bound, seed);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#undef ADIR_INIT_NO_CONTRACT
#undef ADIR_INIT_MANTISSA
#undef ADIR_INIT_EXPONENT_ONE

#endif /* ADIR_INIT_H */
