"""The importer maps PyTorch's clamped activations to single ops: nn.ReLU6, nn.Hardtanh,
torch.clamp / clamp_min / clamp_max (number bounds, in place or not) to `adir.clamp`,
nn.Hardswish and nn.Hardsigmoid to `adir.hardswish` / `adir.hardsigmoid`; the imported loss and
gradients equal PyTorch's; bounds adir cannot take are located errors saying what to write."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from test_torch_import import adir_loss_and_gradients, assert_gradients_equal, weights_of
from torch import nn

from adir.frontends.builder import module_to_text
from adir.frontends.torch_import import UnsupportedOpsError, import_module


class Head(nn.Module):
    """linear -> the activation under test -> linear, trained with cross entropy."""

    def __init__(self, activation: nn.Module) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.activation = activation
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.activation(self.fc1(x)))


class Clamps(nn.Module):
    """The functional spellings, the in-place one included."""

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        a = torch.clamp(h, -0.5, 0.75) + torch.clamp_min(h, 0.25) + h.clamp(max=-0.25)
        return a + h.clone().clamp_(min=-1.0, max=1.0) + F.relu6(h * 8)


RELU6 = ("adir.clamp", "{min = 0.000000e+00 : f32, max = 6.000000e+00 : f32}")

# name -> (activation, the (op, attribute dictionary) of each op it must import as)
CASES = {
    "relu6": (nn.ReLU6(), [RELU6]),
    "relu6_inplace": (nn.ReLU6(inplace=True), [RELU6]),
    "hardtanh": (
        nn.Hardtanh(-2.0, 0.5),
        [("adir.clamp", "{min = -2.000000e+00 : f32, max = 5.000000e-01 : f32}")],
    ),
    "hardswish": (nn.Hardswish(), [("adir.hardswish", "")]),
    "hardsigmoid": (nn.Hardsigmoid(inplace=True), [("adir.hardsigmoid", "")]),
    "clamps": (
        Clamps(),
        [
            ("adir.clamp", "{min = -5.000000e-01 : f32, max = 7.500000e-01 : f32, inclusive}"),
            ("adir.clamp", "{min = 2.500000e-01 : f32, inclusive}"),
            ("adir.clamp", "{max = -2.500000e-01 : f32, inclusive}"),
            ("adir.clamp", "{min = -1.000000e+00 : f32, max = 1.000000e+00 : f32, inclusive}"),
            RELU6,
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_clamped_activation_imports_as_one_op_and_trains_like_torch(name: str) -> None:
    """Exactly the ops expected, no maximum / minimum chain; loss to 1e-6 and gradients to
    1e-5 of PyTorch's (float32 on both sides: the clamps are exact, the linear layers round)."""
    torch.manual_seed(3)
    activation, expected_ops = CASES[name]
    model = Head(activation)
    x = torch.randn(8, 6) * 2
    label = np.array([0, 1, 2, 1, 0, 2, 2, 1])
    module = import_module(model, (x,), loss="cross_entropy")
    text = module_to_text(module)
    found = re.findall(r"= (adir\.(?:clamp|hardswish|hardsigmoid)) %\S+ ?(\{[^}]*\})? :", text)
    assert sorted(found) == sorted(expected_ops)
    assert "adir.maximum" not in text and "adir.minimum" not in text
    loss, grads, _ = adir_loss_and_gradients(module, x.numpy(), label)
    weights = weights_of(model)
    expected = F.cross_entropy(
        F.linear(
            activation(F.linear(x, weights["fc1_weight"], weights["fc1_bias"])),
            weights["fc2_weight"],
            weights["fc2_bias"],
        ),
        torch.from_numpy(label),
    )
    expected.backward()
    assert loss == pytest.approx(expected.item(), rel=1e-6)
    assert_gradients_equal(grads, weights)


class TensorBounds(nn.Module):
    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.clamp(h, torch.zeros(4), torch.ones(4))


class NanBound(nn.Module):
    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.clamp(h, min=float("nan"))


@pytest.mark.parametrize(
    ("model", "target", "reason"),
    [
        (
            TensorBounds(),
            "aten.clamp.Tensor",
            "tensor bounds; give the bounds as numbers, or write torch.maximum / torch.minimum",
        ),
        (NanBound(), "aten.clamp.default", "a nan min (the result would be all nan)"),
    ],
    ids=["tensor_bounds", "nan_bound"],
)
def test_bounds_adir_cannot_take_are_located_errors(model: nn.Module, target: str, reason: str):
    _, start = inspect.getsourcelines(type(model).forward)
    with pytest.raises(UnsupportedOpsError) as caught:
        import_module(model, (torch.randn(2, 4),))
    (op,) = caught.value.ops
    assert (op.target, op.reason) == (target, reason)
    assert op.site.line == start + 1
