"""adir.layer_norm and its VJP in float64 against PyTorch (test/python/gradient_testing.py
states the tolerance: 1e-5 relative to each gradient's largest entry, float64 on both sides):

- the forward's output, mean and rstd against `torch.native_layer_norm`, over one and over two
  trailing dims, with a weight and bias, a weight only, and neither;
- the adjoints of the input, weight and bias (from `adir.layer_norm_grad`) against
  torch.autograd of `sum(F.layer_norm(...) * r)`, and against central finite differences;
- a loss that depends on the mean or rstd is an error, not a silently wrong gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from adir_testing import tensor_type
from gradient_testing import (
    adir_gradients,
    assert_gradients_close,
    differentiate_ir,
    finite_difference_gradients,
    torch_gradients,
)

from adir.context import parse_module
from adir.diagnostics import OpError
from adir.interpreter import Session

F = torch.nn.functional

CASES = [
    # (input shape, normalized rank, affine operands, eps)
    ((3, 5), 1, 2, 1e-5),
    ((2, 3, 6), 1, 2, 1e-5),
    ((2, 3, 4), 2, 2, 1e-3),
    ((4, 6), 1, 1, 1e-5),
    ((2, 3, 5), 1, 0, 1e-5),
]


def layer_norm_ir(shape: tuple[int, ...], rank: int, affine: int, eps: float) -> str:
    """`@f(x, [weight, [bias,]] r) = sum(layer_norm(x) * r)`."""
    t, w = tensor_type(shape), tensor_type(shape[len(shape) - rank :])
    rows = tensor_type(shape[: len(shape) - rank])
    names = ["%w", "%b"][:affine]
    args = "".join(f"{name}: {w}, " for name in names)
    operands = "".join(f", {name}" for name in names)
    types = "".join(f", {w}" for _ in names)
    normalized = ", ".join(str(d) for d in shape[len(shape) - rank :])
    return f"""
func.func @f(%x: {t}, {args}%r: {t}) -> tensor<f32> {{
  %y, %m, %s = adir.layer_norm %x{operands} {{normalized_shape = array<i64: {normalized}>,
      eps = {eps:.6e} : f32}} : {t}{types} -> ({t}, {rows}, {rows})
  %p = adir.mul %y, %r : {t}
  %l = adir.sum %p : {t} -> tensor<f32>
  func.return %l : tensor<f32>
}}"""


def random_args(shape: tuple[int, ...], rank: int, affine: int, seed: int) -> list[np.ndarray]:
    """x (each row with its own offset and scale), the affine operands, r."""
    rng = np.random.default_rng(seed)
    lead = shape[: len(shape) - rank]
    offset = rng.uniform(-2, 2, lead + (1,) * rank)
    x = rng.standard_normal(shape) * rng.uniform(0.5, 3, lead + (1,) * rank) + offset
    normalized = shape[len(shape) - rank :]
    affine_args = [rng.uniform(0.5, 1.5, normalized), rng.standard_normal(normalized)][:affine]
    return [x, *affine_args, rng.standard_normal(shape)]


def torch_layer_norm(shape: tuple[int, ...], rank: int, affine: int, eps: float):
    normalized = shape[len(shape) - rank :]

    def loss(x, *rest):
        *affine_args, r = rest
        weight = affine_args[0] if affine > 0 else None
        bias = affine_args[1] if affine > 1 else None
        return (F.layer_norm(x, normalized, weight, bias, eps) * r).sum()

    return loss


def forward_ir(shape: tuple[int, ...], rank: int, affine: int, eps: float) -> str:
    """`@f(x, [weight, [bias,]]) = layer_norm(x, ...)`: all three results."""
    t, w = tensor_type(shape), tensor_type(shape[len(shape) - rank :])
    rows = tensor_type(shape[: len(shape) - rank])
    names = ["%w", "%b"][:affine]
    args = "".join(f", {name}: {w}" for name in names)
    operands = "".join(f", {name}" for name in names)
    types = "".join(f", {w}" for _ in names)
    normalized = ", ".join(str(d) for d in shape[len(shape) - rank :])
    return f"""
func.func @f(%x: {t}{args}) -> ({t}, {rows}, {rows}) {{
  %y, %m, %s = adir.layer_norm %x{operands} {{normalized_shape = array<i64: {normalized}>,
      eps = {eps:.6e} : f32}} : {t}{types} -> ({t}, {rows}, {rows})
  func.return %y, %m, %s : {t}, {rows}, {rows}
}}"""


@pytest.mark.parametrize(("shape", "rank", "affine", "eps"), CASES)
def test_forward_matches_native_layer_norm(
    shape: tuple[int, ...], rank: int, affine: int, eps: float
) -> None:
    """Output, mean and rstd of float64 inputs within 1e-12 of PyTorch's (both compute in
    float64; only the order of the sums differs: Welford's in PyTorch, two passes here). eps
    is an f32 property: PyTorch gets the same f32 value."""
    module = parse_module(forward_ir(shape, rank, affine, eps), "forward.mlir")
    module.verify()
    args = random_args(shape, rank, affine, seed=1)[: 1 + affine]
    y, mean, rstd = Session(module, np.float64).call("f", *args)
    tensors = [torch.tensor(a) for a in args] + [None] * (2 - affine)
    normalized = shape[len(shape) - rank :]
    expected = torch.native_layer_norm(tensors[0], normalized, *tensors[1:], float(np.float32(eps)))
    lead = shape[: len(shape) - rank]
    np.testing.assert_allclose(y, expected[0].numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean, expected[1].numpy().reshape(lead), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rstd, expected[2].numpy().reshape(lead), rtol=1e-12)


@pytest.mark.parametrize(("shape", "rank", "affine", "eps"), CASES)
def test_gradients_match_autograd_and_finite_differences(
    shape: tuple[int, ...], rank: int, affine: int, eps: float
) -> None:
    wrt = list(range(1 + affine))
    module = differentiate_ir(layer_norm_ir(shape, rank, affine, eps), "f", wrt)
    args = random_args(shape, rank, affine, seed=2)
    actual = adir_gradients(module, args)
    expected = torch_gradients(torch_layer_norm(shape, rank, affine, eps), args, wrt)
    assert_gradients_close(actual, expected)
    numeric = finite_difference_gradients(module, args, wrt)
    for index, (a, n) in enumerate(zip(actual[1:], numeric, strict=True)):
        scale = max(float(np.max(np.abs(n), initial=0.0)), 1.0)
        np.testing.assert_allclose(
            a, n, rtol=1e-6, atol=1e-6 * scale, err_msg=f"finite differences #{index}"
        )


def test_the_gradient_function_is_one_layer_norm_grad() -> None:
    """The backward is one `adir.layer_norm_grad` reading the forward's mean and rstd: no
    reductions or elementwise ops of its own (what `docs` and the op's docstring promise)."""
    module = differentiate_ir(layer_norm_ir((2, 3, 6), 1, 2, 1e-5), "f", [0, 1, 2])
    grad = next(op for op in module.ops if op.sym_name.data == "f_grad")
    names = [op.name for op in grad.body.block.ops]
    assert names.count("adir.layer_norm_grad") == 1
    backward = names[names.index("adir.layer_norm_grad") :]
    assert backward == ["adir.layer_norm_grad", "func.return"]


def test_a_loss_on_the_statistics_is_an_error() -> None:
    t, rows = tensor_type((2, 4)), tensor_type((2,))
    ir = f"""
func.func @f(%x: {t}) -> tensor<f32> {{
  %y, %m, %s = adir.layer_norm %x {{normalized_shape = array<i64: 4>}}
      : {t} -> ({t}, {rows}, {rows})
  %l = adir.sum %s : {rows} -> tensor<f32>
  func.return %l : tensor<f32>
}}"""
    with pytest.raises(OpError, match=r"only its output .* not the row statistics"):
        differentiate_ir(ir, "f", [0])


def test_float32_session_runs_it() -> None:
    """The interpreter keeps float32 inputs in float32 (the C's precision)."""
    module = differentiate_ir(layer_norm_ir((2, 5), 1, 2, 1e-5), "f", [0])
    args = [a.astype(np.float32) for a in random_args((2, 5), 1, 2, seed=3)]
    (loss,) = Session(module).call("f", *args)
    assert loss.dtype == np.float32
