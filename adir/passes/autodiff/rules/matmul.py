"""VJP rules of the matmul family: a matmul's adjoints are matmuls with transpose flags; no
transpose is ever materialised."""

from __future__ import annotations

from xdsl.ir import SSAValue

from adir.dialects.tensor import matmul as mm
from adir.passes.autodiff.builder import BackwardBuilder, static_shape
from adir.passes.autodiff.rules.registry import Adjoints, vjp


def _matmul(b: BackwardBuilder, x: SSAValue, y: SSAValue, ta: bool, tb: bool) -> SSAValue:
    """x @ y with flags; a 2-D x against a 3-D y (which matmul does not take) is broadcast."""
    if len(static_shape(x)) == 2 and len(static_shape(y)) == 3:
        x = b.broadcast_to(x, (static_shape(y)[0], *static_shape(x)))
    return b.emit(mm.MatmulOp(x, y, transpose_a=ta, transpose_b=tb))


@vjp(mm.MatmulOp)
def matmul(b: BackwardBuilder, op: mm.MatmulOp, dy: SSAValue) -> Adjoints:
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
