"""numpy semantics of the matmul family (adir/dialects/tensor/matmul.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import matmul as mm
from adir.interpreter.family import FamilyFunctions


def _matrices(array: np.ndarray, transposed: bool) -> np.ndarray:
    """The operand as matmul sees it: its last two dims swapped if the flag says so."""
    return np.swapaxes(array, -1, -2) if transposed else array


@register_impls
class MatmulFunctions(FamilyFunctions):
    """Results are fresh arrays (value semantics)."""

    @impl(mm.MatmulOp)
    def run_matmul(self, interpreter: Interpreter, op: mm.MatmulOp, args: tuple[Any, ...]):
        lhs = _matrices(args[0], op.transpose_a is not None)
        rhs = _matrices(args[1], op.transpose_b is not None)
        return (np.matmul(lhs, rhs),)
