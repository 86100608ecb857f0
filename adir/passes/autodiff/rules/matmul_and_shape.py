"""VJP rules of the matmul_and_shape family. Matmul adjoints are matmuls with transpose flags;
no transpose is ever materialised. The data-movement ops invert each other: flatten's adjoint
is a reshape, pad's a slice, concat's a slice per input (for a weight gradient, the gradient
of those rows alone: `_block`), a unit-step slice's a pad, and a strided slice's
`adir.slice_grad` (a scatter into zeros)."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Operation, SSAValue

from adir.dialects.tensor import matmul_and_shape as ms
from adir.dialects.tensor.traits import RowsFromOperand
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
            grads.append(_block(b, dy, axis, offset, offset + size))
        offset += size
    return grads


def _block(b: BackwardBuilder, dy: SSAValue, axis: int, start: int, stop: int) -> SSAValue:
    """`dy[start:stop]` along `axis`. Rows of a weight gradient (an op whose result rows come
    from one operand's, `RowsFromOperand`) are computed from that operand's rows alone, so a
    partly trained weight costs the gradient of its trained channels only, not the whole
    weight's; each row is the same sum as in the whole op."""
    shape = static_shape(dy)
    producer = dy.owner
    trait = producer.get_trait(RowsFromOperand) if isinstance(producer, Operation) else None
    source = trait.source(producer) if trait is not None and axis == 0 else None
    if source is None:
        start_at = [start if d == axis else 0 for d in range(len(shape))]
        stop_at = [stop if d == axis else n for d, n in enumerate(shape)]
        return b.emit(ms.SliceOp(dy, start_at, stop_at))
    assert isinstance(producer, Operation)
    index, operand_axis = source
    operands = list(producer.operands)
    operands[index] = _block(b, operands[index], operand_axis, start, stop)
    rows = producer.create(
        operands=operands,
        properties=dict(producer.properties),
        attributes=dict(producer.attributes),
        result_types=[TensorType(f32, [stop - start, *shape[1:]])],
    )
    return b.emit(rows)


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
