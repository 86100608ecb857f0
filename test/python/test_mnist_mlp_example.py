"""examples/mnist_mlp.mlir, the seed model, computes PyTorch's loss for the same weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from adir.context import parse_module
from adir.interpreter import Session

EXAMPLE = Path(__file__).parents[2] / "examples" / "mnist_mlp.mlir"


@pytest.fixture(scope="module")
def module():
    module = parse_module(EXAMPLE.read_text(), str(EXAMPLE))
    module.verify()
    return module


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
