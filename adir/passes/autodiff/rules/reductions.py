"""VJP rules of the reductions family: the adjoint is broadcast back over the reduced axes."""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from adir.dialects.tensor import reductions as red
from adir.passes.autodiff.builder import BackwardBuilder, static_shape
from adir.passes.autodiff.rules.registry import Adjoints, vjp


def _reduced_axes(op: red.ReductionOp) -> tuple[int, ...]:
    return op.reduced_axes(len(static_shape(op.input)))


def _kept(b: BackwardBuilder, op: red.ReductionOp, value: SSAValue) -> SSAValue:
    """`value` (shaped like the result) with the reduced axes kept as size 1."""
    shape = list(static_shape(op.input))
    for axis in _reduced_axes(op):
        shape[axis] = 1
    return b.reshape(value, shape)


@vjp(red.SumOp)
def sum_(b: BackwardBuilder, op: red.SumOp, dy: SSAValue) -> Adjoints:
    if not _reduced_axes(op):  # a rank-0 input: the reduction is the identity
        return [dy]
    return [b.broadcast_to(_kept(b, op, dy), static_shape(op.input))]


@vjp(red.MeanOp)
def mean(b: BackwardBuilder, op: red.MeanOp, dy: SSAValue) -> Adjoints:
    shape = static_shape(op.input)
    if not _reduced_axes(op):
        return [dy]
    count = math.prod(shape[axis] for axis in _reduced_axes(op))
    scaled = b.div(_kept(b, op, dy), b.constant(float(count)))
    return [b.broadcast_to(scaled, shape)]


@vjp(red.MaxOp)
def max_(b: BackwardBuilder, op: red.MaxOp, dy: SSAValue) -> Adjoints:
    # As torch.amax: the adjoint is shared evenly by the elements equal to the maximum.
    shape = static_shape(op.input)
    if not _reduced_axes(op):
        return [dy]
    is_max = b.cmp("eq", op.input, b.broadcast_to(_kept(b, op, op.result), shape))
    ones = b.select(is_max, b.constant(1.0), b.constant(0.0))
    count = b.sum(ones, _reduced_axes(op), keepdims=True)
    share = b.broadcast_to(b.div(_kept(b, op, dy), count), shape)
    return [b.mul(ones, share)]
