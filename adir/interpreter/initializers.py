"""The initializer attributes' draws, in float32, bit-identical to the C backend's.

Element i (row-major) of a tensor draws from counter i of the initializer's seed, with
adir's generator (`prng.py`, which also specifies it). Every parameter of the attribute is
first rounded to float32; the arithmetic is then float32, one IEEE operation at a time, in this
order (`adir_init.h` does exactly the same):

    #adir.zeros                   0
    #adir.fill<value>         value
    #adir.uniform<low, high>      w = high - low;  v = w * u;  v = low + v       u = uniform(i)
    #adir.normal<mean, std>       v = std * z;  v = mean + v                     z = normal(i)
    #adir.kaiming_uniform<...>    t = u + u;  t = t - 1;  v = b * t             u = uniform(i)
    #adir.xavier_uniform<...>

For the last two, b = float32(init.bound(shape)): the bound of `torch.nn.init`'s formula,
computed in double by the compiler from the attribute and the tensor's shape. `2u - 1` is exact,
so `v` is in [-b, b). A uniform's values are in [low, high) up to the rounding of `low + v`.
"""

from __future__ import annotations

import math

import numpy as np

from adir.dialects.tensor import initializers as inits
from adir.interpreter import prng


def symmetric_bound(
    init: inits.KaimingUniformInit | inits.XavierUniformInit, shape: tuple[int, ...]
) -> np.float32:
    """The float32 bound b of U(-b, b) that the interpreter and the C backend both use."""
    return np.float32(init.bound(shape))


# A session's seed shifts every initializer's stream by seed times this odd constant (2^64 / the
# golden ratio), so seed 0 draws exactly what the IR says and other seeds give fresh streams.
SEED_STEP = 0x9E3779B97F4A7C15


def seed_of(init: inits.InitializerAttr, session_seed: int) -> int:
    """The stream an initializer draws from in a session with this seed (mod 2^64)."""
    return (init.seed.data + session_seed * SEED_STEP) % 2**64


def sample(
    init: inits.InitializerAttr, shape: tuple[int, ...], session_seed: int = 0
) -> np.ndarray:
    """The float32 values of `init` for a tensor of `shape` (row-major order)."""
    if isinstance(init, inits.ZerosInit):
        return np.zeros(shape, np.float32)
    if isinstance(init, inits.FillInit):
        return np.full(shape, np.float32(init.value.data), np.float32)
    counters = np.arange(math.prod(shape), dtype=np.uint64)
    if isinstance(init, inits.UniformInit):
        low, high = np.float32(init.low.data), np.float32(init.high.data)
        values = low + (high - low) * prng.uniform(seed_of(init, session_seed), counters)
    elif isinstance(init, inits.NormalInit):
        mean, std = np.float32(init.mean.data), np.float32(init.std.data)
        values = mean + std * prng.normal(seed_of(init, session_seed), counters)
    elif isinstance(init, inits.KaimingUniformInit | inits.XavierUniformInit):
        if counters.size == 0:  # no values, and no bound: a fan may be 0
            return np.zeros(shape, np.float32)
        u = prng.uniform(seed_of(init, session_seed), counters)
        values = symmetric_bound(init, shape) * ((u + u) - np.float32(1))
    else:
        raise NotImplementedError(f"the interpreter cannot draw {init.name}")
    return values.reshape(shape)
