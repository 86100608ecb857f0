"""VJP rules of the matmul family against torch.autograd and finite differences."""

from __future__ import annotations

import pytest
import torch
from gradient_testing import check_op_gradients, differentiate_ir


def flagged(x: torch.Tensor, transposed: bool) -> torch.Tensor:
    return x.transpose(-1, -2) if transposed else x


CASES = [
    # (lhs shape, rhs shape) as stored; the flags say how matmul reads them.
    ((3, 4), (4, 5), False, False),
    ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True),
    ((4, 3), (5, 4), True, True),
    ((2, 3, 4), (2, 4, 5), False, False),
    ((2, 4, 3), (2, 5, 4), True, True),
    ((2, 3, 4), (4, 5), False, False),  # a 2-D rhs shared by the batch
    ((2, 4, 3), (4, 5), True, False),
    ((2, 3, 4), (5, 4), False, True),
    ((2, 4, 3), (5, 4), True, True),
]


@pytest.mark.parametrize(("lhs", "rhs", "ta", "tb"), CASES, ids=str)
def test_matmul(lhs, rhs, ta: bool, tb: bool) -> None:
    flags = [name for name, on in (("transpose_a", ta), ("transpose_b", tb)) if on]
    attr = f" {{{', '.join(flags)}}}" if flags else ""
    check_op_gradients(
        f"adir.matmul OPERANDS{attr}",
        [lhs, rhs],
        lambda a, b: torch.matmul(flagged(a, ta), flagged(b, tb)),
    )


def test_matmul_backward_uses_flags_not_transposes() -> None:
    """y = x @ w^T: dW = dy^T @ x and dx = dy @ w, all through transpose flags."""
    ir = """
func.func @f(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %r: tensor<2x4xf32>) -> tensor<f32> {
  %y = adir.matmul %x, %w {transpose_b} : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
  %p = adir.mul %y, %r : tensor<2x4xf32>
  %l = adir.sum %p : tensor<2x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}"""
    module = differentiate_ir(ir, "f", [0, 1])
    names = [op.name for op in module.walk()]
    assert "adir.transpose" not in names
    # the forward matmul in @f and in @f_grad (which returns the loss), then dx and dW
    assert names.count("adir.matmul") == 4
