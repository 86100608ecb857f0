"""VJP rules of the elementwise family against torch.autograd and finite differences, with
broadcasting in every direction (the adjoint of a broadcast operand is summed back)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gradient_testing import (
    adir_gradients,
    assert_gradients_close,
    check_op_gradients,
    differentiate_ir,
    torch_gradients,
)

BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
}
SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((), (2, 3)), ((3, 1), (1, 4))]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary(op: str, shapes) -> None:
    check_op_gradients(f"adir.{op} OPERANDS", shapes, BINARY[op])


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_pow(shapes) -> None:
    rng = np.random.default_rng(1)
    base = np.abs(rng.standard_normal(shapes[0])) + 0.5
    exponent = rng.standard_normal(shapes[1])
    check_op_gradients("adir.pow OPERANDS", shapes, torch.pow, inputs=[base, exponent])


def test_pow_at_zero_follows_torch() -> None:
    """0 ** 0: d/dx is 0 (not nan) and d/dp is 0; 0 ** 2: d/dp is 0, not nan from log(0)."""
    base = np.array([0.0, 0.0, 2.0, 0.0])
    exponent = np.array([0.0, 2.0, 0.0, 1.0])
    check_op_gradients(
        "adir.pow OPERANDS",
        [(4,), (4,)],
        torch.pow,
        inputs=[base, exponent],
        finite_differences=False,  # the points are on the edge of the domain
    )


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_ties_split_the_adjoint_like_torch(op: str) -> None:
    """Equal operands share the adjoint evenly, as torch.maximum/minimum do."""
    a = np.array([1.0, 2.0, 3.0, -1.0])
    b = np.array([1.0, 5.0, 3.0, -2.0])
    check_op_gradients(
        f"adir.{op} OPERANDS",
        [(4,), (4,)],
        BINARY[op],
        inputs=[a, b],
        finite_differences=False,  # not differentiable at a tie
    )


UNARY = {"neg": torch.neg, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt}


@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op: str, shape) -> None:
    x = np.abs(np.random.default_rng(2).standard_normal(shape)) + 0.2
    check_op_gradients(f"adir.{op} OPERANDS", [shape], UNARY[op], inputs=[x])


@pytest.mark.parametrize(
    "shapes", [((2, 3), (2, 3), (2, 3)), ((2, 3), (3,), ()), ((1, 3), (2, 1), (2, 3))], ids=str
)
def test_select(shapes) -> None:
    rng = np.random.default_rng(3)
    condition = rng.standard_normal(shapes[0]) > 0
    inputs = [condition, rng.standard_normal(shapes[1]), rng.standard_normal(shapes[2])]
    check_op_gradients(
        "adir.select OPERANDS",
        shapes,
        torch.where,
        inputs=inputs,
        elem_types=["i1", "f32", "f32"],
    )


def test_fan_out_sums_adjoints() -> None:
    """x used three times: d/dx sum(x * x + exp(x)) = 2x + exp(x)."""
    ir = """
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %sq = adir.mul %x, %x : tensor<3xf32>
  %e = adir.exp %x : tensor<3xf32>
  %s = adir.add %sq, %e : tensor<3xf32>
  %l = adir.sum %s : tensor<3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}"""
    x = np.random.default_rng(4).standard_normal((3,))
    actual = adir_gradients(differentiate_ir(ir, "f", [0]), [x])
    expected = torch_gradients(lambda t: (t * t + torch.exp(t)).sum(), [x], [0])
    assert_gradients_close(actual, expected)
    np.testing.assert_allclose(actual[1], 2 * x + np.exp(x), rtol=1e-12)
