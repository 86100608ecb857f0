"""VJP rules of the data movement family. The ops invert each other: transpose's adjoint is the
inverse permutation, flatten's a reshape, pad's a slice, concat's a slice per input (none for an
input that gets no adjoint), a unit-step slice's a pad, and a strided slice's `adir.slice_grad`
(a scatter into zeros)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from adir.dialects.tensor import data_movement as dm
from adir.passes.autodiff.builder import BackwardBuilder, static_shape
from adir.passes.autodiff.rules.registry import Adjoints, vjp


@vjp(dm.TransposeOp)
def transpose(b: BackwardBuilder, op: dm.TransposeOp, dy: SSAValue) -> Adjoints:
    permutation = list(op.permutation.get_values())
    inverse = [permutation.index(axis) for axis in range(len(permutation))]
    return [b.emit(dm.TransposeOp(dy, inverse))]


@vjp(dm.ReshapeOp)
def reshape(b: BackwardBuilder, op: dm.ReshapeOp, dy: SSAValue) -> Adjoints:
    return [b.reshape(dy, static_shape(op.input))]


@vjp(dm.BroadcastToOp)
def broadcast_to(b: BackwardBuilder, op: dm.BroadcastToOp, dy: SSAValue) -> Adjoints:
    return [b.unbroadcast(dy, op.input)]


@vjp(dm.FlattenOp)
def flatten(b: BackwardBuilder, op: dm.FlattenOp, dy: SSAValue) -> Adjoints:
    return [b.reshape(dy, static_shape(op.input))]


@vjp(dm.PadOp)
def pad(b: BackwardBuilder, op: dm.PadOp, dy: SSAValue) -> Adjoints:
    low = list(op.low.get_values())
    stop = [lo + d for lo, d in zip(low, static_shape(op.input), strict=True)]
    return [b.emit(dm.SliceOp(dy, low, stop))]


def _columns(bounds: list[tuple[int, int, int]]) -> tuple[list[int], list[int], list[int]]:
    """The (start, stop, step) triples of a slicing op as three per-dim lists."""
    return [b[0] for b in bounds], [b[1] for b in bounds], [b[2] for b in bounds]


@vjp(dm.ConcatOp)
def concat(b: BackwardBuilder, op: dm.ConcatOp, dy: SSAValue) -> Adjoints:
    shape = static_shape(op.result)
    axis = op.normalized_axis(len(shape))
    grads: list[SSAValue | None] = []
    offset = 0
    for value in op.inputs:
        size = static_shape(value)[axis]
        if not b.wants(value):  # a frozen block of a partly trained weight
            grads.append(None)
        elif size == shape[axis]:  # the whole result: the other inputs are empty
            grads.append(dy)
        else:
            start = [offset if d == axis else 0 for d in range(len(shape))]
            stop = [offset + size if d == axis else n for d, n in enumerate(shape)]
            grads.append(b.emit(dm.SliceOp(dy, start, stop)))
        offset += size
    return grads


@vjp(dm.SliceOp)
def slice_(b: BackwardBuilder, op: dm.SliceOp, dy: SSAValue) -> Adjoints:
    # A unit-step slice is a window, whose adjoint pads it back with zeros; a strided one
    # scatters into zeros with slice_grad.
    shape = static_shape(op.input)
    bounds = op.bounds(len(shape))
    if all(step == 1 for _, _, step in bounds):
        windows = [dm.slice_indices(d, *bound) for d, bound in zip(shape, bounds, strict=True)]
        low = [w.start if len(w) else 0 for w in windows]
        high = [d - lo - len(w) for d, lo, w in zip(shape, low, windows, strict=True)]
        return [b.emit(dm.PadOp(dy, low, high))]
    return [b.emit(dm.SliceGradOp(dy, shape, *_columns(bounds)))]


@vjp(dm.SliceGradOp)
def slice_grad(b: BackwardBuilder, op: dm.SliceGradOp, dy: SSAValue) -> Adjoints:
    # Scattering into zeros is linear; its adjoint gathers the same elements back.
    return [b.emit(dm.SliceOp(dy, *_columns(op.bounds(len(static_shape(dy))))))]
