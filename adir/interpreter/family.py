"""The base of each op family's interpreter implementations."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import InterpreterFunctions


class FamilyFunctions(InterpreterFunctions):
    """Implementations of one op family, for a session computing floats in `float_dtype`
    (the dtype in which constants are made; operands arrive in it already)."""

    def __init__(self, float_dtype: np.dtype | type[np.floating] = np.float32):
        self.float_dtype = np.dtype(float_dtype)
