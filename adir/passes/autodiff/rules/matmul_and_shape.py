"""VJP rules of the matmul_and_shape family. Matmul adjoints are matmuls with transpose flags;
no transpose is ever materialised. The data-movement ops invert each other: flatten's adjoint
is a reshape, pad's a slice, concat's a slice per input (none for an input that gets no
adjoint), a unit-step slice's a pad, and a strided slice's `adir.slice_grad` (a scatter into
zeros)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from adir.dialects.tensor import matmul_and_shape as ms
from adir.passes.autodiff.builder import BackwardBuilder, static_shape
from adir.passes.autodiff.rules.registry import Adjoints, vjp


def _matmul(b: BackwardBuilder, x: SSAValue, y: SSAValue, ta: bool, tb: bool) -> SSAValue:
    """x @ y with flags; a 2-D x against a 3-D y (which matmul does not take) is broadcast."""
    if len(static_shape(x)) == 2 and len(static_shape(y)) == 3:
        x = b.broadcast_to(x, (static_shape(y)[0], *static_shape(x)))
    return b.emit(ms.MatmulOp(x, y, transpose_a=ta, transpose_b=tb))


@vjp(ms.MatmulOp)
def matmul(b: BackwardBuilder, op: ms.MatmulOp, dy: SSAValue) -> Adjoints:
    # C = op_a(A) @ op_b(B) with op_x = transpose if the flag is set:
    #   d op_a(A) = dC @ op_b(B)^T   and   d op_b(B) = op_a(A)^T @ dC,
    # and a transposed operand takes the transpose of that, written with flags:
    #   (P @ Q)^T = Q^T @ P^T.
    a, w = op.lhs, op.rhs
    ta, tb = op.transpose_a is not None, op.transpose_b is not None
    da = _matmul(b, w, dy, tb, True) if ta else _matmul(b, dy, w, False, not tb)
    if len(static_shape(a)) == 3 and len(static_shape(w)) == 2 and not ta:
        # A 2-D rhs shared by the batch (a linear layer on [B, M, K]): its gradient contracts
        # over the batch and the rows at once, as one 2-D matmul of the rows stacked, instead
        # of a [B, K, N] batch of products summed (B times the weight's size in the arena;
        # 786,432 bytes for the transformer example's attention projection).
        rows, k = static_shape(a)[0] * static_shape(a)[1], static_shape(a)[2]
        a_rows = b.reshape(a, (rows, k))
        dy_rows = b.reshape(dy, (rows, static_shape(dy)[2]))
        dw = (
            _matmul(b, dy_rows, a_rows, True, False)
            if tb
            else _matmul(b, a_rows, dy_rows, True, False)
        )
        return [da, dw]
    dw = _matmul(b, dy, a, True, ta) if tb else _matmul(b, a, dy, not ta, False)
    if len(static_shape(dw)) > len(static_shape(w)):  # a 2-D rhs shared by the batch
        dw = b.sum(dw, [0])
    return [da, dw]


@vjp(ms.TransposeOp)
def transpose(b: BackwardBuilder, op: ms.TransposeOp, dy: SSAValue) -> Adjoints:
    permutation = list(op.permutation.get_values())
    inverse = [permutation.index(axis) for axis in range(len(permutation))]
    return [b.emit(ms.TransposeOp(dy, inverse))]


@vjp(ms.ReshapeOp)
def reshape(b: BackwardBuilder, op: ms.ReshapeOp, dy: SSAValue) -> Adjoints:
    return [b.reshape(dy, static_shape(op.input))]


@vjp(ms.BroadcastToOp)
def broadcast_to(b: BackwardBuilder, op: ms.BroadcastToOp, dy: SSAValue) -> Adjoints:
    return [b.unbroadcast(dy, op.input)]


@vjp(ms.FlattenOp)
def flatten(b: BackwardBuilder, op: ms.FlattenOp, dy: SSAValue) -> Adjoints:
    return [b.reshape(dy, static_shape(op.input))]


@vjp(ms.PadOp)
def pad(b: BackwardBuilder, op: ms.PadOp, dy: SSAValue) -> Adjoints:
    low = list(op.low.get_values())
    stop = [lo + d for lo, d in zip(low, static_shape(op.input), strict=True)]
    return [b.emit(ms.SliceOp(dy, low, stop))]


def _columns(bounds: list[tuple[int, int, int]]) -> tuple[list[int], list[int], list[int]]:
    """The (start, stop, step) triples of a slicing op as three per-dim lists."""
    return [b[0] for b in bounds], [b[1] for b in bounds], [b[2] for b in bounds]


@vjp(ms.ConcatOp)
def concat(b: BackwardBuilder, op: ms.ConcatOp, dy: SSAValue) -> Adjoints:
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
            grads.append(b.emit(ms.SliceOp(dy, start, stop)))
        offset += size
    return grads


@vjp(ms.SliceOp)
def slice_(b: BackwardBuilder, op: ms.SliceOp, dy: SSAValue) -> Adjoints:
    # A unit-step slice is a window, whose adjoint pads it back with zeros; a strided one
    # scatters into zeros with slice_grad.
    shape = static_shape(op.input)
    bounds = op.bounds(len(shape))
    if all(step == 1 for _, _, step in bounds):
        windows = [ms.slice_indices(d, *bound) for d, bound in zip(shape, bounds, strict=True)]
        low = [w.start if len(w) else 0 for w in windows]
        high = [d - lo - len(w) for d, lo, w in zip(shape, low, windows, strict=True)]
        return [b.emit(ms.PadOp(dy, low, high))]
    return [b.emit(ms.SliceGradOp(dy, shape, *_columns(bounds)))]


@vjp(ms.SliceGradOp)
def slice_grad(b: BackwardBuilder, op: ms.SliceGradOp, dy: SSAValue) -> Adjoints:
    # Scattering into zeros is linear; its adjoint gathers the same elements back.
    return [b.emit(ms.SliceOp(dy, *_columns(op.bounds(len(static_shape(dy))))))]
