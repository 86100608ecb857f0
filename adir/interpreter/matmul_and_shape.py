"""numpy semantics of the matmul_and_shape family (adir/dialects/tensor/matmul_and_shape.py)."""

from __future__ import annotations

import math
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

    @impl(ms.FlattenOp)
    def run_flatten(self, interpreter: Interpreter, op: ms.FlattenOp, args: tuple[Any, ...]):
        x = args[0]
        start, end = op.merged_dims(x.ndim)
        if x.ndim == 0:
            return (x.reshape(1),)
        merged = math.prod(x.shape[start : end + 1])
        return (x.reshape((*x.shape[:start], merged, *x.shape[end + 1 :])).copy(),)

    @impl(ms.PadOp)
    def run_pad(self, interpreter: Interpreter, op: ms.PadOp, args: tuple[Any, ...]):
        x = args[0]
        widths = list(zip(op.low.get_values(), op.high.get_values(), strict=True))
        return (np.pad(x, widths, constant_values=x.dtype.type(op.value.value.data)),)

    @impl(ms.ConcatOp)
    def run_concat(self, interpreter: Interpreter, op: ms.ConcatOp, args: tuple[Any, ...]):
        return (np.concatenate(args, axis=op.normalized_axis(args[0].ndim)),)

    @impl(ms.SliceOp)
    def run_slice(self, interpreter: Interpreter, op: ms.SliceOp, args: tuple[Any, ...]):
        x = args[0]
        return (x[_slices(op, x.ndim)].copy(),)

    @impl(ms.SliceGradOp)
    def run_slice_grad(self, interpreter: Interpreter, op: ms.SliceGradOp, args: tuple[Any, ...]):
        grad = args[0]
        result = np.zeros(op.shape.get_values(), grad.dtype)
        result[_slices(op, result.ndim)] = grad
        return (result,)


def _slices(op: ms.SlicingOp, rank: int) -> tuple[slice, ...]:
    return tuple(slice(*bounds) for bounds in op.bounds(rank))
