"""The initializer attributes' draws, in float32, bit-identical to the C backend's.

The random ones use adir's counter-based generator (`prng.py`).
"""

from __future__ import annotations

import numpy as np

from adir.dialects.tensor import params as p


def sample(init: p.InitializerAttr, shape: tuple[int, ...]) -> np.ndarray:
    """The float32 values of `init` for a tensor of `shape` (row-major order)."""
    if isinstance(init, p.ZerosInit):
        return np.zeros(shape, np.float32)
    if isinstance(init, p.ConstantInit):
        return np.full(shape, init.value.data, np.float32)
    raise NotImplementedError(f"the interpreter cannot draw {init.name} yet")
