"""VJP rules of the losses family against torch.autograd and finite differences: every loss,
every reduction, both forms of class target, batched and unbatched inputs, the targets'
gradients where PyTorch has them, and the fused `nll(log_softmax(z))` backward.

Float64 runs use the harness's bound (1e-5 of the largest entry; the rules are PyTorch's
formulas, so only rounding separates them). The float32 checks of the gradient ops are derived
in `test_gradient_op_in_float32_matches_torch`.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from adir_testing import interpret, tensor_type
from gradient_testing import (
    adir_gradients,
    assert_gradients_close,
    check_op_gradients,
    differentiate_ir,
    torch_gradients,
)
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from adir.interpreter import Session

REDUCTIONS = ["none", "mean", "sum"]
# (batch size, class count): one sample, one class (a constant loss), a few, a typical batch.
CLASS_SIZES = [(1, 2), (5, 1), (4, 3), (8, 10)]
ELEMENTWISE_SHAPES = [(1,), (7,), (4, 3), (2, 3, 5)]
LABEL_TYPES = {"i32": np.int32, "i64": np.int64}


def attr(reduction: str) -> str:
    return f'{{reduction = "{reduction}"}}'


def nll_of_probabilities(log_probs: torch.Tensor, p: torch.Tensor, reduction: str):
    """adir.nll with class probabilities, `-sum_c p * logp` per sample (F.nll_loss takes class
    indices only); "mean" divides by the batch size, as F.cross_entropy's soft-label form."""
    terms = -(p * log_probs).sum(dim=-1)
    if reduction == "none":
        return terms
    total = terms.sum()
    return total / (log_probs.numel() // log_probs.shape[-1]) if reduction == "mean" else total


def uniform(rng: np.random.Generator, shape: tuple[int, ...], low: float, high: float):
    return rng.uniform(low, high, shape)


# --- mse, bce, bce_with_logits: input and target -----------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", ELEMENTWISE_SHAPES, ids=str)
def test_mse(shape: tuple, reduction: str) -> None:
    """The target's gradient is the input's, negated (PyTorch's mse_loss_backward swapped)."""
    check_op_gradients(
        f"adir.mse OPERANDS {attr(reduction)}",
        [shape, shape],
        lambda x, t: F.mse_loss(x, t, reduction=reduction),
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", ELEMENTWISE_SHAPES, ids=str)
def test_bce(shape: tuple, reduction: str) -> None:
    """Soft targets; the target's gradient is PyTorch's `-logit(x) * dloss`."""
    rng = np.random.default_rng(1)
    inputs = [uniform(rng, shape, 0.02, 0.98), uniform(rng, shape, 0.0, 1.0)]
    check_op_gradients(
        f"adir.bce OPERANDS {attr(reduction)}",
        [shape, shape],
        lambda x, t: F.binary_cross_entropy(x, t, reduction=reduction),
        inputs=inputs,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", ELEMENTWISE_SHAPES, ids=str)
def test_bce_with_logits(shape: tuple, reduction: str) -> None:
    rng = np.random.default_rng(2)
    inputs = [4 * rng.standard_normal(shape), uniform(rng, shape, 0.0, 1.0)]
    check_op_gradients(
        f"adir.bce_with_logits OPERANDS {attr(reduction)}",
        [shape, shape],
        lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction=reduction),
        inputs=inputs,
    )


# --- nll and cross_entropy: class indices and class probabilities ----------------------------


@pytest.mark.parametrize("label_type", sorted(LABEL_TYPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("sizes", CLASS_SIZES, ids=str)
@pytest.mark.parametrize("op", ["nll", "cross_entropy"])
def test_class_indices(op: str, sizes, reduction: str, label_type: str) -> None:
    """Labels are integers: only the input gets a gradient."""
    n, c = sizes
    rng = np.random.default_rng(n * 100 + c)
    labels = rng.integers(0, c, n).astype(LABEL_TYPES[label_type])
    torch_loss = F.nll_loss if op == "nll" else F.cross_entropy
    check_op_gradients(
        f"adir.{op} OPERANDS {attr(reduction)}",
        [(n, c), (n,)],
        lambda x, t: torch_loss(x, t.long(), reduction=reduction),
        inputs=[3 * rng.standard_normal((n, c)), labels],
        elem_types=["f32", label_type],
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("sizes", CLASS_SIZES, ids=str)
@pytest.mark.parametrize("op", ["nll", "cross_entropy"])
def test_class_probabilities(op: str, sizes, reduction: str) -> None:
    """Both operands get gradients. The random targets neither lie in [0, 1] nor sum to 1, so
    the `sum_c target` factor of cross_entropy's gradient is exercised too."""
    n, c = sizes

    def torch_loss(x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        if op == "nll":
            return nll_of_probabilities(x, p, reduction)
        return F.cross_entropy(x, p, reduction=reduction)

    check_op_gradients(
        f"adir.{op} OPERANDS {attr(reduction)}", [(n, c), (n, c)], torch_loss, seed=n + c
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("op", ["nll", "cross_entropy"])
def test_probabilities_that_sum_to_1(op: str, reduction: str) -> None:
    rng = np.random.default_rng(5)
    z = 3 * rng.standard_normal((6, 4))
    p = torch.softmax(torch.tensor(rng.standard_normal((6, 4))), dim=-1).numpy()

    def torch_loss(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        if op == "nll":
            return nll_of_probabilities(x, t, reduction)
        return F.cross_entropy(x, t, reduction=reduction)

    check_op_gradients(
        f"adir.{op} OPERANDS {attr(reduction)}", [(6, 4), (6, 4)], torch_loss, inputs=[z, p]
    )


@pytest.mark.parametrize("label_type", sorted(LABEL_TYPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("op", ["nll", "cross_entropy"])
def test_unbatched(op: str, reduction: str, label_type: str) -> None:
    """Input [C] with a rank-0 label or [C] probabilities: N = 1, so "mean" is "sum"."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal(7)
    label = np.array(4, LABEL_TYPES[label_type])
    torch_loss = F.nll_loss if op == "nll" else F.cross_entropy
    check_op_gradients(
        f"adir.{op} OPERANDS {attr(reduction)}",
        [(7,), ()],
        lambda t, y: torch_loss(t, y.long(), reduction=reduction),
        inputs=[x, label],
        elem_types=["f32", label_type],
    )

    def soft(t: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        if op == "nll":
            return nll_of_probabilities(t, p, reduction)
        return F.cross_entropy(t, p, reduction=reduction)

    check_op_gradients(f"adir.{op} OPERANDS {attr(reduction)}", [(7,), (7,)], soft, seed=7)


# --- bce at the edges of [0, 1] ----------------------------------------------------------------


def bce_gradients(x: np.ndarray, t: np.ndarray, wrt_args: list[int]) -> tuple[list, list]:
    """(adir's, torch's) (loss, gradients) of `sum(bce(x, t, "none") * r)`, in float64."""
    r = np.random.default_rng(8).standard_normal(x.shape)
    types = [tensor_type(x.shape)] * 3
    ir = f"""
func.func @f(%x: {types[0]}, %t: {types[1]}, %r: {types[2]}) -> tensor<f32> {{
  %l = adir.bce %x, %t {attr("none")} : {types[0]}
  %p = adir.mul %l, %r : {types[0]}
  %s = adir.sum %p : {types[0]} -> tensor<f32>
  func.return %s : tensor<f32>
}}"""
    module = differentiate_ir(ir, "f", wrt_args)
    actual = adir_gradients(module, [x, t, r])
    expected = torch_gradients(
        lambda a, b, c: (F.binary_cross_entropy(a, b, reduction="none") * c).sum(),
        [x, t, r],
        wrt_args,
    )
    return actual, expected


def test_bce_input_gradient_near_0_and_1_matches_torch() -> None:
    """PyTorch divides by max((1 - x) x, 1e-12) (a float 1e-12, 9.99999996e-13 in float64), so
    x = 0 and x = 1 give a finite, huge gradient where the exact one is infinite, and 1e-13
    is on the clamp too. Each entry is compared on its own: they span 24 orders of magnitude."""
    x = np.array([0.0, 0.0, 1.0, 1.0, 1e-13, 1e-7, 1 - 1e-7, 1 - 1e-13, 1e-300, 0.5])
    t = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.3, 0.6, 0.0, 1.0, 0.5])
    actual, expected = bce_gradients(x, t, [0])
    np.testing.assert_allclose(actual[1], expected[1], rtol=1e-14, atol=0)
    assert np.all(np.isfinite(actual[1]))
    assert actual[1][1] == actual[1][3] == actual[1][9] == 0.0


def test_bce_target_gradient_near_0_and_1_matches_torch() -> None:
    """`-logit(x)`, unclamped as in PyTorch: +-inf at x = 0 and x = 1, where the loss's clamped
    logs make the loss itself finite."""
    x = np.array([0.0, 1.0, 1e-13, 1e-7, 1 - 1e-7, 1 - 1e-13, 0.5])
    t = np.array([1.0, 0.0, 1.0, 0.3, 0.6, 0.0, 0.5])
    actual, expected = bce_gradients(x, t, [1])
    np.testing.assert_allclose(actual[1], expected[1], rtol=1e-12, atol=0)
    assert np.isinf(actual[1][:2]).all()


# --- the fused backward of nll(log_softmax(z)) -------------------------------------------------


def log_softmax_nll_ir(n: int, c: int, label_type: str, reduction: str) -> str:
    """`@f(z, labels, r) = sum(nll(log_softmax(z), labels) * r)`."""
    z, labels = tensor_type((n, c)), tensor_type((n,), label_type)
    loss = tensor_type((n,) if reduction == "none" else ())
    return f"""
func.func @f(%z: {z}, %t: {labels}, %r: {loss}) -> tensor<f32> {{
  %lp = adir.log_softmax %z : {z}
  %l = adir.nll %lp, %t {attr(reduction)} : {z}, {labels} -> {loss}
  %p = adir.mul %l, %r : {loss}
  %s = adir.sum %p : {loss} -> tensor<f32>
  func.return %s : tensor<f32>
}}"""


def backward_op_names(module: ModuleOp, func: str = "f") -> list[str]:
    """The ops of `@func_grad` after its copy of `@func`'s forward computation."""
    ops = {op.sym_name.data: list(op.body.block.ops) for op in module.ops if isinstance(op, FuncOp)}
    forward_count = len(ops[func]) - 1  # all but the return
    return [op.name for op in ops[f"{func}_grad"][forward_count:]]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("label_type", sorted(LABEL_TYPES))
@pytest.mark.parametrize("n", [1, 8])
def test_fused_log_softmax_nll_matches_torch(n: int, label_type: str, reduction: str) -> None:
    """One cross_entropy_grad on the logits, no nll_grad and no log_softmax backward, and the
    gradient of F.nll_loss(F.log_softmax(z)) (which PyTorch computes unfused)."""
    c = 10
    module = differentiate_ir(log_softmax_nll_ir(n, c, label_type, reduction), "f", [0])
    names = backward_op_names(module)
    assert names.count("adir.cross_entropy_grad") == 1
    assert "adir.nll_grad" not in names
    assert not any("log_softmax" in name for name in names)
    rng = np.random.default_rng(n)
    z = 3 * rng.standard_normal((n, c))
    labels = rng.integers(0, c, n).astype(LABEL_TYPES[label_type])
    r = rng.standard_normal((n,) if reduction == "none" else ())
    actual = adir_gradients(module, [z, labels, r])
    expected = torch_gradients(
        lambda a, t, w: (
            F.nll_loss(F.log_softmax(a, dim=-1), t.long(), reduction=reduction) * w
        ).sum(),
        [z, labels, r],
        [0],
    )
    assert_gradients_close(actual, expected)


def test_fused_unbatched_with_probability_targets_matches_torch() -> None:
    """Input [C] with [C] probabilities: z gets cross_entropy_grad, the target `-s * logp`."""
    ir = """
func.func @f(%z: tensor<6xf32>, %p: tensor<6xf32>) -> tensor<f32> {
  %lp = adir.log_softmax %z : tensor<6xf32>
  %l = adir.nll %lp, %p {reduction = "sum"} : tensor<6xf32>, tensor<6xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}"""
    module = differentiate_ir(ir, "f", [0, 1])
    assert backward_op_names(module).count("adir.cross_entropy_grad") == 1
    rng = np.random.default_rng(9)
    z, p = rng.standard_normal(6), rng.uniform(0, 1, 6)
    actual = adir_gradients(module, [z, p])
    expected = torch_gradients(lambda a, b: F.cross_entropy(a, b, reduction="sum"), [z, p], [0, 1])
    assert_gradients_close(actual, expected)


def test_log_softmax_along_another_axis_is_not_fused() -> None:
    """log_softmax over the batch axis is not cross_entropy: the nll gets nll_grad."""
    ir = """
func.func @f(%z: tensor<4x3xf32>, %t: tensor<4xi32>) -> tensor<f32> {
  %lp = adir.log_softmax %z {axis = 0 : i64} : tensor<4x3xf32>
  %l = adir.nll %lp, %t : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  func.return %l : tensor<f32>
}"""
    module = differentiate_ir(ir, "f", [0])
    names = backward_op_names(module)
    assert "adir.cross_entropy_grad" not in names
    assert "adir.nll_grad" in names and "adir.log_softmax_grad" in names
    rng = np.random.default_rng(10)
    z, labels = rng.standard_normal((4, 3)), np.array([0, 2, 1, 2], np.int32)
    expected = torch_gradients(
        lambda a, t: F.nll_loss(F.log_softmax(a, dim=0), t.long()), [z, labels], [0]
    )
    assert_gradients_close(adir_gradients(module, [z, labels]), expected)


def test_log_softmax_with_a_second_use_is_not_fused() -> None:
    """`nll(lp) + sum(lp * w)`: the log_softmax's result has another adjoint to carry, so the
    nll gets nll_grad and the log_softmax its own backward; the sum is still the right one."""
    ir = """
func.func @f(%z: tensor<8x5xf32>, %t: tensor<8xi64>, %w: tensor<8x5xf32>) -> tensor<f32> {
  %lp = adir.log_softmax %z : tensor<8x5xf32>
  %l = adir.nll %lp, %t : tensor<8x5xf32>, tensor<8xi64> -> tensor<f32>
  %m = adir.mul %lp, %w : tensor<8x5xf32>
  %s = adir.sum %m : tensor<8x5xf32> -> tensor<f32>
  %y = adir.add %l, %s : tensor<f32>
  func.return %y : tensor<f32>
}"""
    module = differentiate_ir(ir, "f", [0])
    names = backward_op_names(module)
    assert "adir.nll_grad" in names and "adir.log_softmax_grad" in names
    assert "adir.cross_entropy_grad" not in names
    rng = np.random.default_rng(11)
    z, w = rng.standard_normal((8, 5)), rng.standard_normal((8, 5))
    labels = rng.integers(0, 5, 8)
    expected = torch_gradients(
        lambda a, t, b: F.nll_loss(F.log_softmax(a, -1), t) + (F.log_softmax(a, -1) * b).sum(),
        [z, labels, w],
        [0],
    )
    assert_gradients_close(adir_gradients(module, [z, labels, w]), expected)


# --- each gradient op in float32 ---------------------------------------------------------------

FLOAT32_CASES = {
    "mse": ("mse", lambda x, t, r: F.mse_loss(x, t, reduction=r)),
    "nll": ("nll", lambda x, t, r: F.nll_loss(x, t.long(), reduction=r)),
    "cross_entropy": ("cross_entropy", lambda x, t, r: F.cross_entropy(x, t.long(), reduction=r)),
    "cross_entropy_probabilities": (
        "cross_entropy",
        lambda x, t, r: F.cross_entropy(x, t, reduction=r),
    ),
    "bce": ("bce", lambda x, t, r: F.binary_cross_entropy(x, t, reduction=r)),
    "bce_with_logits": (
        "bce_with_logits",
        lambda x, t, r: F.binary_cross_entropy_with_logits(x, t, reduction=r),
    ),
}


def float32_inputs(case: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A batch of 16 with 10 classes (or 16 x 10 elements), input and target in float32."""
    if case in ("nll", "cross_entropy"):
        x, t = 3 * rng.standard_normal((16, 10)), rng.integers(0, 10, 16).astype(np.int32)
        return x.astype(np.float32), t
    if case == "cross_entropy_probabilities":
        x = 3 * rng.standard_normal((16, 10))
        t = torch.softmax(torch.tensor(rng.standard_normal((16, 10))), dim=-1).numpy()
    elif case == "bce":
        x, t = rng.uniform(0.01, 0.99, (16, 10)), rng.uniform(0, 1, (16, 10))
    else:
        x, t = 3 * rng.standard_normal((16, 10)), rng.uniform(0, 1, (16, 10))
    return x.astype(np.float32), t.astype(np.float32)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", sorted(FLOAT32_CASES))
def test_gradient_op_in_float32_matches_torch(case: str, reduction: str) -> None:
    """The input's gradient, interpreted in float32, against torch's float32 autograd.

    Bound: 1e-6 of the largest entry (2e-6 for cross_entropy), with u = 2^-24 = 6e-8 the unit
    roundoff. mse, nll and bce evaluate PyTorch's formula in PyTorch's order, each op correctly
    rounded, so they agree to the bit (observed); a fused multiply-add in a vectorised kernel
    would change one rounding, u of the entry. bce_with_logits adds sigmoid, whose exp may
    differ from PyTorch's vectorised one by an ulp or two: within ~4u of the largest entry
    (observed 2.5u). cross_entropy's `g - exp(logp) * sum(g)` adds the log-softmax's error,
    which is absolute, about u * (|z - max z| + log C + a few) <= 20u for these logits
    (3 * N(0, 1), C = 10): a relative error of 20u in each softmax entry, on a term of at most
    |s|, the size of the largest entry (observed 5.2u). 1e-6 is 17u, 2e-6 34u.
    """
    op, torch_loss = FLOAT32_CASES[case]
    rng = np.random.default_rng(12)
    x, t = float32_inputs(case, rng)
    loss_shape = (16,) if op in ("nll", "cross_entropy") else (16, 10)
    loss_shape = loss_shape if reduction == "none" else ()
    r = rng.standard_normal(loss_shape).astype(np.float32)
    x_type, l_type = tensor_type(x.shape), tensor_type(loss_shape)
    t_type = tensor_type(t.shape, "i32" if t.dtype == np.int32 else "f32")
    ir = f"""
func.func @f(%x: {x_type}, %t: {t_type}, %r: {l_type}) -> tensor<f32> {{
  %l = adir.{op} %x, %t {attr(reduction)} : {x_type}, {t_type} -> {l_type}
  %p = adir.mul %l, %r : {l_type}
  %s = adir.sum %p : {l_type} -> tensor<f32>
  func.return %s : tensor<f32>
}}"""
    module = differentiate_ir(ir, "f", [0])
    assert f"adir.{op}_grad" in backward_op_names(module)
    (_, actual) = Session(module, np.float32).call("f_grad", x, t, r)
    assert actual.dtype == np.float32

    x_torch = torch.tensor(x, requires_grad=True)
    loss = (torch_loss(x_torch, torch.tensor(t), reduction) * torch.tensor(r)).sum()
    (expected,) = torch.autograd.grad(loss, [x_torch])
    bound = 2e-6 if op == "cross_entropy" else 1e-6
    scale = float(np.max(np.abs(expected.numpy())))
    np.testing.assert_allclose(actual, expected.numpy(), rtol=0, atol=bound * scale)


# --- data the gradient ops are not defined on -------------------------------------------------


@pytest.mark.parametrize("op", ["nll_grad", "cross_entropy_grad"])
def test_grad_of_class_index_out_of_range_is_an_error(op: str) -> None:
    """The same fault in the data as in the forward loss, with the same message."""
    ir = f"""
func.func @f(%x: tensor<3x4xf32>, %t: tensor<3xi32>, %s: tensor<f32>) -> tensor<3x4xf32> {{
  %0 = adir.{op} %x, %t, %s : tensor<3x4xf32>, tensor<3xi32>, tensor<f32> -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}}"""
    labels = np.array([0, 4, 1], np.int32)
    with pytest.raises(
        ValueError, match=rf"adir\.{op}: target\[1\] = 4 is not a class index in \[0, 4\)"
    ):
        interpret(ir, "f", np.zeros((3, 4), np.float32), labels, np.float32(1))


@pytest.mark.parametrize("operand", ["input", "target"])
def test_bce_grad_outside_0_1_is_an_error(operand: str) -> None:
    ir = """
func.func @f(%x: tensor<2xf32>, %t: tensor<2xf32>, %s: tensor<f32>) -> tensor<2xf32> {
  %0 = adir.bce_grad %x, %t, %s : tensor<2xf32>, tensor<2xf32>, tensor<f32> -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}"""
    x, t = np.array([0.5, 0.5], np.float32), np.array([0.0, 1.0], np.float32)
    (x if operand == "input" else t)[1] = 1.5
    with pytest.raises(
        ValueError, match=rf"adir\.bce_grad: {operand}\[1\] = 1.5 is not a probability in \[0, 1\]"
    ):
        interpret(ir, "f", x, t, np.float32(1))
