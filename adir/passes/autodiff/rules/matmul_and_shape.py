"""VJP rules of the matmul_and_shape family. Matmul adjoints are matmuls with transpose flags;
no transpose is ever materialised."""

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
