"""VJP rules of the normalization family, in float64 against torch.autograd and central finite
differences (test/python/gradient_testing.py states the tolerances):

- batchnorm (training): the adjoints of the input, gamma and beta from `adir.batchnorm_grad`
  against `torch.nn.functional.batch_norm(training=True)`; the running statistics it reads get
  zero (the output does not depend on them); and a gradient function called step after step
  updates the running statistics as torch.nn.BatchNorm2d does while giving its gradients;
- batchnorm_eval: all five operands, against PyTorch's eval-mode batch_norm (input, gamma,
  beta) and the same formula written in torch ops (the running statistics, which PyTorch does
  not differentiate);
- dropout: against `x * m` with the mask of the specification, at several steps.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from adir_testing import tensor_type
from gradient_testing import (
    adir_gradients,
    assert_gradients_close,
    check_op_gradients,
    differentiate_ir,
    finite_difference_gradients,
    torch_gradients,
)
from test_interpreter_normalization import f32, reference_mask

from adir.interpreter import Session

F = torch.nn.functional

MOMENTUM, EPS = f32(0.1), f32(1e-5)


def batchnorm_loss_ir(op: str, shape: tuple[int, ...]) -> str:
    """`@f(x, gamma, beta, running_mean, running_var, r) = sum(output * r)`."""
    t, c = tensor_type(shape), tensor_type((shape[1],))
    operands = f"{t}, {c}, {c}, {c}, {c}"
    if op == "batchnorm":
        results = "%y, %mean, %invstd, %rm2, %rv2"
        types = f"{operands} -> ({operands})"
    else:
        results, types = "%y", f"{operands} -> {t}"
    return f"""
func.func @f(%x: {t}, %g: {c}, %b: {c}, %rm: {c}, %rv: {c}, %r: {t}) -> tensor<f32> {{
  {results} = adir.{op} %x, %g, %b, %rm, %rv : {types}
  %p = adir.mul %y, %r : {t}
  %l = adir.sum %p : {t} -> tensor<f32>
  func.return %l : tensor<f32>
}}"""


def random_args(shape: tuple[int, ...], seed: int) -> list[np.ndarray]:
    """x (with a channel offset), gamma, beta, running mean and variance, and r."""
    rng = np.random.default_rng(seed)
    c = shape[1]
    x = rng.standard_normal(shape) + rng.uniform(-2, 2, c).reshape((1, c) + (1,) * (len(shape) - 2))
    stats = [rng.standard_normal(c), rng.standard_normal(c), rng.standard_normal(c)]
    return [x, *stats, rng.uniform(0.5, 2, c), rng.standard_normal(shape)]


def check(module, args, expected, wrt: list[int]) -> None:
    actual = adir_gradients(module, args)
    assert_gradients_close(actual, expected)
    numeric = finite_difference_gradients(module, args, wrt)
    for index, (a, n) in enumerate(zip(actual[1:], numeric, strict=True)):
        scale = max(float(np.max(np.abs(n), initial=0.0)), 1.0)
        np.testing.assert_allclose(a, n, rtol=1e-6, atol=1e-6 * scale, err_msg=f"fd #{index}")


SHAPES = [(5, 3), (2, 3), (3, 2, 5), (4, 3, 3, 2), (2, 2, 1, 1)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_batchnorm_training(shape) -> None:
    args = random_args(shape, seed=sum(shape))
    wrt = [0, 1, 2, 3, 4]
    module = differentiate_ir(batchnorm_loss_ir("batchnorm", shape), "f", wrt)

    def reference(x, g, b, rm, rv, r):
        y = F.batch_norm(x, rm.clone(), rv.clone(), g, b, True, MOMENTUM, EPS)
        return (y * r).sum()

    expected = torch_gradients(reference, args, [0, 1, 2])
    zeros = [np.zeros(shape[1]), np.zeros(shape[1])]  # the running statistics'
    check(module, args, [*expected, *zeros], wrt)


@pytest.mark.parametrize("shape", [(5, 3), (1, 3), (3, 2, 4), (2, 3, 2, 2)], ids=str)
def test_batchnorm_eval(shape) -> None:
    args = random_args(shape, seed=sum(shape) + 1)
    wrt = [0, 1, 2, 3, 4]
    module = differentiate_ir(batchnorm_loss_ir("batchnorm_eval", shape), "f", wrt)

    def formula(x, g, b, rm, rv, r):
        c = lambda v: v.reshape((1, -1) + (1,) * (x.dim() - 2))  # noqa: E731
        return ((((x - c(rm)) / torch.sqrt(c(rv) + EPS)) * c(g) + c(b)) * r).sum()

    expected = torch_gradients(formula, args, wrt)
    check(module, args, expected, wrt)

    def torch_eval(x, g, b, rm, rv, r):
        return (F.batch_norm(x, rm, rv, g, b, False, MOMENTUM, EPS) * r).sum()

    assert_gradients_close(
        adir_gradients(module, args)[:4], torch_gradients(torch_eval, args, [0, 1, 2])
    )


TRAINING_MODULE = """
adir.param @gamma : tensor<3xf32> = #adir.normal<mean = 1.0, std = 0.5, seed = 1>
adir.param @beta : tensor<3xf32> = #adir.normal<seed = 2>
adir.param @running_mean : tensor<3xf32> = #adir.zeros {trainable = false}
adir.param @running_var : tensor<3xf32> = #adir.fill<value = 1.0> {trainable = false}

func.func @loss(%x: tensor<4x3x5x2xf32>, %r: tensor<4x3x5x2xf32>) -> tensor<f32>
    attributes {adir.loss} {
  %g = adir.load @gamma : tensor<3xf32>
  %b = adir.load @beta : tensor<3xf32>
  %rm = adir.load @running_mean : tensor<3xf32>
  %rv = adir.load @running_var : tensor<3xf32>
  %y, %mean, %invstd, %rm2, %rv2 = adir.batchnorm %x, %g, %b, %rm, %rv
      : tensor<4x3x5x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
      -> (tensor<4x3x5x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  adir.store %rm2, @running_mean : tensor<3xf32>
  adir.store %rv2, @running_var : tensor<3xf32>
  %p = adir.mul %y, %r : tensor<4x3x5x2xf32>
  %l = adir.sum %p : tensor<4x3x5x2xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
"""


def test_gradient_function_steps_like_batchnorm2d() -> None:
    """Each call of @loss_grad is one training step's forward and backward: it returns the
    gradients of gamma and beta and stores the running statistics, as a BatchNorm2d in
    training mode does over the same batches (parameters held fixed)."""
    module = differentiate_ir(TRAINING_MODULE, "loss")
    session = Session(module, np.float64)
    bn = torch.nn.BatchNorm2d(3, eps=EPS, momentum=MOMENTUM).double()
    with torch.no_grad():
        bn.weight.copy_(torch.tensor(session.params["gamma"]))
        bn.bias.copy_(torch.tensor(session.params["beta"]))
    rng = np.random.default_rng(3)
    for step in range(3):
        x = rng.standard_normal((4, 3, 5, 2)) * (1 + step) + step
        r = rng.standard_normal((4, 3, 5, 2))
        loss, dgamma, dbeta = session.call("loss_grad", x, r)
        bn.zero_grad()
        expected_loss = (bn(torch.tensor(x)) * torch.tensor(r)).sum()
        expected_loss.backward()
        assert_gradients_close(
            [loss, dgamma, dbeta],
            [expected_loss.detach().numpy(), bn.weight.grad.numpy(), bn.bias.grad.numpy()],
        )
        assert_gradients_close(
            [session.params["running_mean"], session.params["running_var"]],
            [bn.running_mean.numpy(), bn.running_var.numpy()],
        )


@pytest.mark.parametrize(("p", "step"), [(0.5, 0), (0.25, 1), (0.25, 9), (0.0, 2), (1.0, 3)])
def test_dropout(p: float, step: int) -> None:
    shape, seed = (4, 6), 5
    keep = reference_mask(shape, seed, step, p)
    multiplier = torch.tensor(np.where(keep, 1.0 / (1.0 - f32(p)) if p < 1 else 0.0, 0.0))
    check_op_gradients(
        f"adir.dropout OPERANDS {{p = {p} : f32, seed = {seed} : i64}}",
        [shape, ()],
        lambda x, s: x * multiplier,
        inputs=[np.random.default_rng(step).standard_normal(shape), np.array(step)],
        elem_types=["f32", "i64"],
    )


def test_dropout_backward_recomputes_the_mask_from_the_step() -> None:
    """The gradient function takes the step as the loss does and applies that step's mask:
    no mask is saved, so different steps give gradients masked differently."""
    ir = """
func.func @f(%x: tensor<64xf32>, %s: tensor<i32>) -> tensor<f32> {
  %y = adir.dropout %x, %s {p = 0.5 : f32, seed = 3 : i64}
      : tensor<64xf32>, tensor<i32> -> tensor<64xf32>
  %l = adir.sum %y : tensor<64xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}"""
    module = differentiate_ir(ir, "f", [0])
    names = [op.name for op in module.walk()]
    assert names.count("adir.dropout_grad") == 1
    session = Session(module, np.float64)
    x = np.ones(64)
    grads = [session.call("f_grad", x, np.int32(step))[1] for step in range(3)]
    for step, grad in enumerate(grads):
        np.testing.assert_array_equal(grad, np.where(reference_mask((64,), 3, step, 0.5), 2.0, 0.0))
    assert not np.array_equal(grads[0], grads[1])
