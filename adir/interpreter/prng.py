"""adir's counter-based random numbers: the same bits in numpy (here) and in C (`adir_init.h`).

Element `i` of a tensor drawn with seed `s` is a function of `(s, i)` alone, so any element can
be drawn on its own, in any order, by numpy or by the C backend, with identical bits. This is
the specification; `adir/backends/c/runtime/adir_init.h` follows it operation by operation.

Raw 64-bit draws: SplitMix64
----------------------------
All integers are unsigned 64-bit, arithmetic modulo 2^64. `mix64` is the finaliser of
SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA
2014), with the constants of Stafford's "Mix13" variant of MurmurHash3's fmix64 (D. Stafford,
"Better bit mixing", 2011), as in Vigna's reference `splitmix64.c`:

    mix64(z) = z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;
               z ^= z >> 27; z *= 0x94D049BB133111EB;
               z ^ (z >> 31)
    key(s)    = mix64(s)
    raw(s, i) = mix64(key(s) + (i + 1) * 0x9E3779B97F4A7C15)

So raw(s, 0), raw(s, 1), ... is exactly the output of a SplitMix64 generator whose state
starts at key(s) (for s = 0, key(0) = 0: plain SplitMix64 from state 0). mix64 is a bijection,
so distinct seeds start at distinct states; hashing the seed puts nearby seeds (0, 1, 2, ...)
at unrelated points of the 2^64-periodic Weyl sequence, so two streams of n draws overlap with
probability about n / 2^63.

Uniform float32 in [0, 1): the top 24 bits, exactly

    uniform(s, i) = float32(raw(s, i) >> 40) * 2^-24          (k * 2^-24, k in [0, 2^24))

(the conversion and the product are exact).

Standard normal: Box-Muller in float64, rounded once to float32
--------------------------------------------------------------
    a = raw(s, 2i);  b = raw(s, 2i + 1)
    u = double((a >> 11) + 1) * 2^-53         in (0, 1], exact
    t = -2.0 * ln(u)                          exact scaling
    z = sqrt(t) * cos_turn(b >> 11)           cos(2 pi k / 2^53), k = b >> 11
    normal(s, i) = float32(z)                 round to nearest, ties to even

libm is not used: numpy's and glibc's log and cos differ in the last bit. `ln`, `sqrt` and
`cos_turn` below use only IEEE double +, -, *, / (each correctly rounded) and exact exponent
manipulation on the bit pattern (the effect of frexp/ldexp), in the order given; every `a + b * c`
is two roundings, never a fused multiply-add. Measured against long double: ln within 2.6 ulp
(4e-16 relative), sqrt within 1 ulp, cos_turn within 3.3e-16 absolute.

ln(x), x a positive normal double:
    e = biased_exponent(x) - 1023;  m = x with its exponent field set to 1023    (m in [1, 2))
    if m > SQRT2: m = m * 0.5; e = e + 1                    (m in [sqrt(1/2), sqrt(2)])
    f = m - 1;  g = m + 1;  s = f / g;  s2 = s * s          (ln m = 2 atanh s, |s| < 0.172)
    p = LN_SERIES[10]; for j = 9, ..., 0: p = p * s2; p = p + LN_SERIES[j]
    ln_m = (s + s) * p
    lo = e * LN2_LO; lo = lo + ln_m; hi = e * LN2_HI;  ln(x) = hi + lo
  LN_SERIES[j] is the double nearest 1/(2j+1); LN2_HI + LN2_LO is ln 2 split as in fdlibm
  (LN2_HI has 32 significant bits, so e * LN2_HI is exact).

sqrt(x), x zero or a positive normal double (zero gives zero):
    be = biased_exponent(x);  m = x with its exponent field set to 1023          (m in [1, 2))
    if be is even: m = m * 2; be = be - 1                   (m in [1, 4), be - 1023 even)
    y = m - 1; y = y / 3; y = y + 1                         (the chord through (1,1), (4,2))
    5 times: q = m / y; y = y + q; y = y * 0.5              (Newton's method)
    sqrt(x) = y * 2^((be + 1023) / 2 - 1023)                exact scaling

cos_turn(k) = cos(2 pi k / 2^53), k an integer in [0, 2^53):
    q = (k + 2^50) >> 51                                    nearest quarter turn, 0..4
    r = k - q * 2^51                                        signed, in [-2^50, 2^50)
    x = double(r) * TURN;  x2 = x * x                       TURN = double(pi) * 2^-52; |x| <= pi/4
    c = COS_SERIES[8]; for j = 7, ..., 0: c = c * x2; c = c + COS_SERIES[j]
    p = SIN_SERIES[8]; for j = 7, ..., 0: p = p * x2; p = p + SIN_SERIES[j];  sn = x * p
    cos_turn(k) = c, -sn, -c, sn  for q mod 4 = 0, 1, 2, 3
  COS_SERIES[j] is the double nearest (-1)^j / (2j)!, SIN_SERIES[j] nearest (-1)^j / (2j+1)!
  (Taylor series; the first omitted terms are below 3e-18 on |x| <= pi/4).
"""

from __future__ import annotations

import numpy as np

GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
MIX_MULTIPLIERS = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))

# Constants of ln, sqrt and cos_turn. Each literal is the shortest decimal that reads back as
# the double the specification names; adir_init.h spells the same literals.
SQRT2 = 1.4142135623730951  # the double nearest sqrt(2)
LN2_HI = 0.6931471803691238  # 0x3FE62E42FEE00000: ln 2 to 32 significant bits
LN2_LO = 1.9082149292705877e-10  # the double nearest ln 2 - LN2_HI
TURN = 6.975736996017264e-16  # double(pi) * 2^-52 = one 2^-53 turn, in radians
LN_SERIES = tuple(1.0 / (2 * j + 1) for j in range(11))
COS_SERIES = (
    1.0,
    -0.5,
    0.041666666666666664,
    -0.001388888888888889,
    2.48015873015873e-05,
    -2.755731922398589e-07,
    2.08767569878681e-09,
    -1.1470745597729725e-11,
    4.779477332387385e-14,
)
SIN_SERIES = (
    1.0,
    -0.16666666666666666,
    0.008333333333333333,
    -0.0001984126984126984,
    2.7557319223985893e-06,
    -2.505210838544172e-08,
    1.6059043836821613e-10,
    -7.647163731819816e-13,
    2.8114572543455206e-15,
)

_MANTISSA = np.uint64((1 << 52) - 1)
_EXPONENT_ONE = np.uint64(1023 << 52)  # the exponent field of 1.0


def as_indices(index: np.ndarray | int | range) -> np.ndarray:
    """Element indices as a uint64 array (any shape; negative indices are an error)."""
    array = np.asarray(index)
    if array.dtype != np.uint64:
        if array.size and array.min() < 0:
            raise ValueError("element indices must not be negative")
        array = array.astype(np.uint64)
    return array


def mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a uint64 array (wrapping multiplies)."""
    z = np.asarray(z, np.uint64)
    with np.errstate(over="ignore"):  # numpy warns on 0-d arrays; wrapping is the point
        z = (z ^ (z >> np.uint64(30))) * MIX_MULTIPLIERS[0]
        z = (z ^ (z >> np.uint64(27))) * MIX_MULTIPLIERS[1]
    return z ^ (z >> np.uint64(31))


def key(seed: int) -> np.ndarray:
    """The starting SplitMix64 state of seed `seed` (a 0-d uint64 array)."""
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed {seed} must be in [0, 2^64)")
    return mix64(np.array(seed, np.uint64))


def raw(seed: int, index: np.ndarray | int | range) -> np.ndarray:
    """The 64-bit draws of elements `index` of stream `seed` (uint64, the shape of index)."""
    with np.errstate(over="ignore"):
        counter = (as_indices(index) + np.uint64(1)) * GOLDEN_GAMMA
        return mix64(key(seed) + counter)


def uniform(seed: int, index: np.ndarray | int | range) -> np.ndarray:
    """float32 in [0, 1): the top 24 bits of each draw, times 2^-24 (exact)."""
    top = (raw(seed, index) >> np.uint64(40)).astype(np.float32)
    return top * np.float32(2.0**-24)


def normal(seed: int, index: np.ndarray | int | range) -> np.ndarray:
    """float32 standard normal: Box-Muller on draws 2i and 2i+1, in float64, rounded once."""
    with np.errstate(over="ignore"):
        twice = as_indices(index) * np.uint64(2)
    a = raw(seed, twice)
    b = raw(seed, twice + np.uint64(1))
    u = ((a >> np.uint64(11)) + np.uint64(1)).astype(np.float64) * 2.0**-53
    t = -2.0 * ln(u)
    z = sqrt(t) * cos_turn(b >> np.uint64(11))
    return z.astype(np.float32)


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(biased exponent, mantissa scaled to [1, 2)) of non-negative doubles, exactly."""
    bits = np.asarray(x, np.float64, order="C").view(np.uint64)
    mantissa = ((bits & _MANTISSA) | _EXPONENT_ONE).view(np.float64)
    return bits >> np.uint64(52), mantissa


def _horner(coefficients: tuple[float, ...], x2: np.ndarray) -> np.ndarray:
    p = np.full_like(x2, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        p = p * x2
        p = p + c
    return p


def ln(x: np.ndarray) -> np.ndarray:
    """Natural log of positive normal doubles: frexp, then 2 atanh((m-1)/(m+1)) as a series."""
    biased, m = _split(x)
    e = biased.astype(np.float64) - 1023.0
    above = m > SQRT2
    m = np.where(above, m * 0.5, m)
    e = np.where(above, e + 1.0, e)
    s = (m - 1.0) / (m + 1.0)
    ln_m = (s + s) * _horner(LN_SERIES, s * s)
    low = e * LN2_LO + ln_m
    return e * LN2_HI + low


def sqrt(x: np.ndarray) -> np.ndarray:
    """Square root of zero or positive normal doubles: Newton's method on the mantissa."""
    x = np.asarray(x, np.float64, order="C")
    biased, m = _split(x)
    even = (biased & np.uint64(1)) == np.uint64(0)
    m = np.where(even, m * 2.0, m)
    biased = np.where(even, biased - np.uint64(1), biased)
    y = (m - 1.0) / 3.0 + 1.0
    for _ in range(5):
        y = (y + m / y) * 0.5
    with np.errstate(over="ignore"):  # for x = 0 the scale is garbage, and replaced below
        scale = (((biased + np.uint64(1023)) >> np.uint64(1)) << np.uint64(52)).view(np.float64)
    return np.where(x.view(np.uint64) == 0, 0.0, y * scale)


def cos_turn(k: np.ndarray) -> np.ndarray:
    """cos(2 pi k / 2^53) for integers k in [0, 2^53): exact reduction to |x| <= pi/4."""
    k = np.asarray(k, np.uint64)
    q = (k + np.uint64(1 << 50)) >> np.uint64(51)
    r = k.astype(np.int64) - (q << np.uint64(51)).astype(np.int64)
    x = r.astype(np.float64) * TURN
    x2 = x * x
    c = _horner(COS_SERIES, x2)
    sn = x * _horner(SIN_SERIES, x2)
    quadrant = q & np.uint64(3)
    return np.select([quadrant == 0, quadrant == 1, quadrant == 2], [c, -sn, -c], sn)


__all__ = ["as_indices", "cos_turn", "key", "ln", "mix64", "normal", "raw", "sqrt", "uniform"]
