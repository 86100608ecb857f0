"""The importer's `aten.constant_pad_nd` (`nn.ZeroPad2d`, `F.pad`): a zero padding of H and W
that a 2-D convolution reads is folded into the convolution's (asymmetric) padding, and no
`adir.pad` is left; any other constant padding is `adir.pad` with its value. Either way the loss
and every gradient equal PyTorch's, both in float64: the interpreter and PyTorch sum in other
orders, about 1e-16 relative per sum of at most a few hundred terms, so 1e-12 is a margin of
1,000 over that; a wrong padding moves the results by far more (whole rows of the input)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from xdsl.dialects.func import FuncOp

from adir.context import adir_context
from adir.frontends.builder import module_to_text
from adir.frontends.torch_import import UnsupportedOpsError, import_module, symbol_names
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass

TOLERANCE = 1e-12


class TfSameConv(nn.Module):
    """TensorFlow's "same" padding of DS-CNN's first conv (kernel 10x4, stride 2, input
    49x10): 4 rows above, 5 below, 1 column each side, as nn.ZeroPad2d; `pad` overrides it."""

    def __init__(self, pad: tuple[int, ...] = (1, 1, 4, 5), value: float = 0.0, padding=0):
        super().__init__()
        self.pad, self.value = pad, value
        self.conv = nn.Conv2d(2, 3, (10, 4), stride=2, padding=padding)
        self.fc = nn.LazyLinear(5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.conv(F.pad(x, self.pad, value=self.value)))
        return self.fc(torch.flatten(h, 1))


def imported(model: nn.Module, x: torch.Tensor):
    model(x)  # materialises the lazy linear layer
    return import_module(model, (x,), loss="cross_entropy")


def assert_trains_like_torch(model: nn.Module, module, x: torch.Tensor, label: np.ndarray):
    """@loss_grad in float64 against the float64 model: the loss and every gradient."""
    module = module.clone()
    AutodiffPass().apply(adir_context(), module)
    grad = next(
        op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == "loss_grad"
    )
    symbols = [ref.root_reference.data for ref in grad.attributes["adir.gradients"].data]
    loss, *grads = Session(module, np.float64).call("loss_grad", x.double().numpy(), label)
    reference = model.double()
    expected = F.cross_entropy(reference(x.double()), torch.from_numpy(label).long())
    expected.backward()
    np.testing.assert_allclose(loss, expected.item(), rtol=TOLERANCE)
    names = symbol_names([name for name, _ in reference.named_parameters()])
    parameters = {names[name]: p for name, p in reference.named_parameters()}
    assert sorted(symbols) == sorted(parameters)
    for symbol, value in zip(symbols, grads, strict=True):
        wanted = parameters[symbol].grad.numpy()
        np.testing.assert_allclose(
            value, wanted, rtol=TOLERANCE, atol=TOLERANCE * np.abs(wanted).max(), err_msg=symbol
        )


def conv_line(text: str) -> str:
    (line,) = [line for line in text.splitlines() if "adir.conv2d" in line]
    return line


@pytest.mark.parametrize(
    ("pad", "padding", "expected"),
    [
        ((1, 1, 4, 5), 0, "padding = array<i64: 4, 5, 1, 1>"),  # TF "same", asymmetric
        ((0, 1, 0, 1), 1, "padding = array<i64: 1, 2, 1, 2>"),  # added to the conv's own
        ((2, 3), 0, "padding = array<i64: 0, 0, 2, 3>"),  # W only
    ],
)
def test_zero_padding_of_h_and_w_is_folded_into_the_conv(pad, padding, expected) -> None:
    torch.manual_seed(0)
    model, x = TfSameConv(pad, padding=padding), torch.randn(2, 2, 49, 10)
    text = module_to_text(module := imported(model, x))
    assert expected in conv_line(text)
    assert "adir.pad" not in text
    assert_trains_like_torch(model, module, x, np.array([1, 4], np.int32))


@pytest.mark.parametrize(
    ("pad", "value", "expected"),
    [
        # A nonzero value is not the conv's zero padding.
        (
            (1, 1, 4, 5),
            0.5,
            "low = array<i64: 0, 0, 4, 1>, high = array<i64: 0, 0, 5, 1>, value = 5",
        ),
        # Padding the channels changes the conv's input channels: not the conv's padding.
        ((0, 0, 0, 0, 0, 1), 0.0, "low = array<i64: 0, 0, 0, 0>, high = array<i64: 0, 1, 0, 0>"),
    ],
)
def test_other_constant_padding_is_adir_pad(pad, value, expected) -> None:
    torch.manual_seed(1)
    model = TfSameConv(pad, value)
    if len(pad) == 6:
        model.conv = nn.Conv2d(3, 3, (10, 4), stride=2)
    x = torch.randn(2, 2, 49, 10)
    text = module_to_text(module := imported(model, x))
    (pad_line,) = [line for line in text.splitlines() if "adir.pad" in line]
    assert expected in pad_line
    assert "padding" not in conv_line(text)
    assert_trains_like_torch(model, module, x, np.array([0, 3], np.int32))


def test_padding_that_crops_is_a_located_error_saying_what_to_use() -> None:
    model = TfSameConv((-1, 0, 0, 0))
    x = torch.randn(1, 2, 49, 10)
    model(x)
    with pytest.raises(UnsupportedOpsError) as caught:
        import_module(model, (x,), loss="cross_entropy")
    (op,) = caught.value.ops
    assert op.target == "aten.constant_pad_nd.default"
    assert op.reason == "negative padding [-1, 0, 0, 0] (a crop): slice the tensor instead"
    _, start = inspect.getsourcelines(TfSameConv.forward)
    assert op.site.line == start + 1


class PaddedConv1d(nn.Module):
    """A constant padding of L (`F.pad(x, pad, value)`, none if `pad` is None) before a conv1d,
    then a classifier."""

    def __init__(self, pad: tuple[int, int] | None, value: float = 0.0, **conv):
        super().__init__()
        self.pad, self.value = pad, value
        self.conv = nn.Conv1d(3, 4, 4, **conv)
        self.fc = nn.LazyLinear(5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pad is not None:
            x = F.pad(x, self.pad, value=self.value)
        return self.fc(torch.flatten(torch.relu(self.conv(x)), 1))


def conv1d_line(text: str) -> str:
    (line,) = [line for line in text.splitlines() if "adir.conv1d" in line]
    return line


@pytest.mark.parametrize(
    ("pad", "conv", "expected"),
    [
        ((2, 1), {}, "padding = array<i64: 2, 1>"),  # asymmetric
        ((0, 1), {"padding": 1, "stride": 2}, "padding = array<i64: 1, 2>"),  # added to its own
        # An even kernel's "same" reaches the importer as a constant_pad_nd before the conv.
        (None, {"padding": "same"}, "padding = array<i64: 1, 2>"),
    ],
)
def test_zero_padding_of_l_is_folded_into_the_conv1d(pad, conv, expected) -> None:
    torch.manual_seed(2)
    model, x = PaddedConv1d(pad, **conv), torch.randn(2, 3, 16)
    text = module_to_text(module := imported(model, x))
    assert expected in conv1d_line(text)
    assert "adir.pad" not in text
    assert_trains_like_torch(model, module, x, np.array([1, 4], np.int32))


def test_nonzero_padding_before_a_conv1d_is_adir_pad() -> None:
    torch.manual_seed(3)
    model, x = PaddedConv1d((2, 1), 0.5), torch.randn(2, 3, 16)
    text = module_to_text(module := imported(model, x))
    (pad_line,) = [line for line in text.splitlines() if "adir.pad" in line]
    assert "low = array<i64: 0, 0, 2>, high = array<i64: 0, 0, 1>, value = 5" in pad_line
    assert "padding" not in conv1d_line(text)
    assert_trains_like_torch(model, module, x, np.array([0, 3], np.int32))
