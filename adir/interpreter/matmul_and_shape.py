"""numpy semantics of the matmul_and_shape family (adir/dialects/tensor/matmul_and_shape.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import matmul_and_shape as ms
from adir.interpreter.arrays import dense_to_numpy
from adir.interpreter.family import FamilyFunctions


def _matrices(array: np.ndarray, transposed: bool) -> np.ndarray:
    """The operand as matmul sees it: its last two dims swapped if the flag says so."""
    return np.swapaxes(array, -1, -2) if transposed else array


@register_impls
class MatmulAndShapeFunctions(FamilyFunctions):
    """Results are fresh arrays, never views of an operand (value semantics)."""

    @impl(ms.MatmulOp)
    def run_matmul(self, interpreter: Interpreter, op: ms.MatmulOp, args: tuple[Any, ...]):
        lhs = _matrices(args[0], op.transpose_a is not None)
        rhs = _matrices(args[1], op.transpose_b is not None)
        return (np.matmul(lhs, rhs),)

    @impl(ms.TransposeOp)
    def run_transpose(self, interpreter: Interpreter, op: ms.TransposeOp, args: tuple[Any, ...]):
        return (np.transpose(args[0], op.permutation.get_values()).copy(),)

    @impl(ms.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: ms.ReshapeOp, args: tuple[Any, ...]):
        return (np.reshape(args[0], op.shape.get_values()).copy(),)

    @impl(ms.BroadcastToOp)
    def run_broadcast_to(
        self, interpreter: Interpreter, op: ms.BroadcastToOp, args: tuple[Any, ...]
    ):
        return (np.broadcast_to(args[0], op.shape.get_values()).copy(),)

    @impl(ms.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: ms.ConstantOp, args: tuple[Any, ...]):
        return (dense_to_numpy(op.value, self.float_dtype),)
