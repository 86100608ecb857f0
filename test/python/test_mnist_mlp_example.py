"""examples/mnist_mlp.mlir, the seed model, computes PyTorch's loss for the same weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from adir_testing import differentiated, parse_example
from xdsl.dialects.builtin import StringAttr, TensorType, f32

from adir.interpreter import Session


@pytest.fixture(scope="module")
def module():
    return parse_example("mnist_mlp")


def torch_loss(params: dict[str, np.ndarray], x: np.ndarray, label: np.ndarray) -> torch.Tensor:
    w1, w2 = (torch.from_numpy(params[k]) for k in ("w1", "w2"))
    hidden = torch.sigmoid(torch.from_numpy(x) @ w1.T)
    log_probs = F.log_softmax(hidden @ w2.T, dim=1)
    return F.nll_loss(log_probs, torch.from_numpy(label).long())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loss_equals_torch(module, dtype) -> None:
    """Same weights (the interpreter's initial ones), same digit: the same loss, to 1e-6
    relative in float32 (different summation orders) and 1e-12 in float64."""
    session = Session(module, dtype)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.random((1, 784)).astype(dtype)
        label = rng.integers(0, 10, (1,)).astype(np.int32)
        (loss,) = session.call("loss", x, label)
        expected = torch_loss(session.params, x, label).item()
        assert loss.shape == ()
        tolerance = 1e-12 if dtype == np.float64 else 1e-6
        assert loss.item() == pytest.approx(expected, rel=tolerance)


def test_initial_weights_follow_nn_linear_bounds(module) -> None:
    """kaiming_uniform with a = sqrt(5) is nn.Linear's U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    params = Session(module).params
    assert params["w1"].shape == (32, 784) and params["w2"].shape == (10, 32)
    for name, fan_in in (("w1", 784), ("w2", 32)):
        bound = 1 / np.sqrt(fan_in)
        assert np.abs(params[name]).max() <= bound
        assert np.abs(params[name]).max() > 0.95 * bound  # the range is actually used


def test_gradients_equal_torch(module) -> None:
    """@loss_grad from the autodiff pass gives PyTorch's gradients for the same weights and
    digit, to 1e-5 relative (float32 in both, so the bound is float32 rounding through two
    layers, far below 1e-5)."""
    session = Session(differentiated(module))
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.random((1, 784)).astype(np.float32)
        label = rng.integers(0, 10, (1,)).astype(np.int32)
        loss, d_w1, d_w2 = session.call("loss_grad", x, label)
        weights = {k: torch.tensor(v, requires_grad=True) for k, v in session.params.items()}
        hidden = torch.sigmoid(torch.from_numpy(x) @ weights["w1"].T)
        expected = F.nll_loss(
            F.log_softmax(hidden @ weights["w2"].T, 1), torch.tensor(label).long()
        )
        expected.backward()
        assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
        for actual, name in ((d_w1, "w1"), (d_w2, "w2")):
            reference = weights[name].grad.numpy()
            scale = np.abs(reference).max()
            np.testing.assert_allclose(actual, reference, rtol=1e-5, atol=1e-5 * scale)


def test_gradient_function_computes_nothing_for_the_input(module) -> None:
    """The digit is data: no op of @loss_grad produces a 1x784 value (its gradient's shape)."""
    grad_module = differentiated(module)
    grad = next(
        op for op in grad_module.ops if getattr(op, "sym_name", None) == StringAttr("loss_grad")
    )
    shapes = [tuple(r.type.get_shape()) for op in grad.walk() for r in op.results]
    assert (1, 784) not in shapes
    assert list(grad.function_type.outputs.data) == [
        TensorType(f32, []),
        TensorType(f32, [32, 784]),
        TensorType(f32, [10, 32]),
    ]
