"""numpy semantics of the reductions family (adir/dialects/tensor/reductions.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import reductions as red
from adir.interpreter.family import FamilyFunctions


def reduce_sum(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    return np.asarray(np.sum(x, axis=axes, keepdims=keepdims))


def reduce_mean(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    # sum / n rather than np.mean, whose mean of no elements warns; 0 / 0 is nan as in PyTorch.
    count = int(np.prod([x.shape[axis] for axis in axes], dtype=np.int64))
    return np.asarray(np.divide(np.sum(x, axis=axes, keepdims=keepdims), x.dtype.type(count)))


def reduce_max(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """np.max propagates nan, like torch.amax."""
    for axis in axes:
        if x.shape[axis] == 0:
            # The verifier rejects this for known dims; a `?` dim can still turn out empty.
            raise ValueError(
                f"adir.max: axis {axis} has size 0, and the max of no elements is undefined"
            )
    return np.asarray(np.max(x, axis=axes, keepdims=keepdims))


@register_impls
class ReductionsFunctions(FamilyFunctions):
    @impl(red.SumOp)
    def run_sum(self, interpreter: Interpreter, op: red.SumOp, args: tuple[Any, ...]):
        (x,) = args
        return (reduce_sum(x, op.reduced_axes(x.ndim), op.keeps_dims),)

    @impl(red.MeanOp)
    def run_mean(self, interpreter: Interpreter, op: red.MeanOp, args: tuple[Any, ...]):
        (x,) = args
        return (reduce_mean(x, op.reduced_axes(x.ndim), op.keeps_dims),)

    @impl(red.MaxOp)
    def run_max(self, interpreter: Interpreter, op: red.MaxOp, args: tuple[Any, ...]):
        (x,) = args
        return (reduce_max(x, op.reduced_axes(x.ndim), op.keeps_dims),)
