"""numpy semantics of the data movement family (adir/dialects/tensor/data_movement.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import data_movement as dm
from adir.interpreter.arrays import dense_to_numpy
from adir.interpreter.family import FamilyFunctions


@register_impls
class DataMovementFunctions(FamilyFunctions):
    """Results are fresh arrays, never views of an operand (value semantics)."""

    @impl(dm.TransposeOp)
    def run_transpose(self, interpreter: Interpreter, op: dm.TransposeOp, args: tuple[Any, ...]):
        return (np.transpose(args[0], op.permutation.get_values()).copy(),)

    @impl(dm.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: dm.ReshapeOp, args: tuple[Any, ...]):
        return (np.reshape(args[0], op.shape.get_values()).copy(),)

    @impl(dm.BroadcastToOp)
    def run_broadcast_to(
        self, interpreter: Interpreter, op: dm.BroadcastToOp, args: tuple[Any, ...]
    ):
        return (np.broadcast_to(args[0], op.shape.get_values()).copy(),)

    @impl(dm.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: dm.ConstantOp, args: tuple[Any, ...]):
        return (dense_to_numpy(op.value, self.float_dtype),)

    @impl(dm.FlattenOp)
    def run_flatten(self, interpreter: Interpreter, op: dm.FlattenOp, args: tuple[Any, ...]):
        x = args[0]
        start, end = op.merged_dims(x.ndim)
        if x.ndim == 0:
            return (x.reshape(1),)
        merged = math.prod(x.shape[start : end + 1])
        return (x.reshape((*x.shape[:start], merged, *x.shape[end + 1 :])).copy(),)

    @impl(dm.PadOp)
    def run_pad(self, interpreter: Interpreter, op: dm.PadOp, args: tuple[Any, ...]):
        x = args[0]
        widths = list(zip(op.low.get_values(), op.high.get_values(), strict=True))
        return (np.pad(x, widths, constant_values=x.dtype.type(op.value.value.data)),)

    @impl(dm.ConcatOp)
    def run_concat(self, interpreter: Interpreter, op: dm.ConcatOp, args: tuple[Any, ...]):
        return (np.concatenate(args, axis=op.normalized_axis(args[0].ndim)),)

    @impl(dm.SliceOp)
    def run_slice(self, interpreter: Interpreter, op: dm.SliceOp, args: tuple[Any, ...]):
        x = args[0]
        return (x[_slices(op, x.ndim)].copy(),)

    @impl(dm.SliceGradOp)
    def run_slice_grad(self, interpreter: Interpreter, op: dm.SliceGradOp, args: tuple[Any, ...]):
        grad = args[0]
        result = np.zeros(op.shape.get_values(), grad.dtype)
        result[_slices(op, result.ndim)] = grad
        return (result,)


def _slices(op: dm.SlicingOp, rank: int) -> tuple[slice, ...]:
    return tuple(slice(*bounds) for bounds in op.bounds(rank))
