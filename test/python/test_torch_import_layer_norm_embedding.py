"""The importer's layer norm and embedding: each form PyTorch writes them in becomes one adir op,
and the imported function's loss and gradients equal PyTorch's (float64 interpretation against
float64 autograd, to 1e-10 relative: the same formulas, rounding apart).

- nn.LayerNorm with a weight and bias, with `bias=False`, with `elementwise_affine=False`, over
  two dims; F.layer_norm with a bias and no weight (a weight of ones); torch.native_layer_norm,
  whose mean and rstd a model may return (in PyTorch's [*, 1] shape);
- nn.Embedding with and without padding_idx (a negative one too), F.embedding, int64 and int32
  index inputs (both become i32);
- `scale_grad_by_freq=True` is refused, naming the argument and the source line.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from adir.context import adir_context
from adir.frontends.torch_import import UnsupportedOpsError, import_module
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass


class Norm(nn.Module):
    def __init__(self, make: nn.Module, shape: tuple[int, ...]) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.norm = make
        self.fc = nn.Linear(shape[-1], 3)
        with torch.no_grad():
            for name, p in self.norm.named_parameters():
                p.uniform_(0.5, 1.5) if name == "weight" else p.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.norm(x).flatten(1))


class BiasOnly(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(4)
        self.bias = nn.Parameter(torch.linspace(-1, 1, 6))
        self.fc = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(F.layer_norm(x, (6,), None, self.bias))


class NativeStatistics(nn.Module):
    """Returns all three results of native_layer_norm (mean and rstd in PyTorch's [N, 1])."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, 5))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return torch.native_layer_norm(x, (5,), self.weight, None, 1e-5)


class Tokens(nn.Module):
    def __init__(self, padding_idx: int | None, functional: bool = False) -> None:
        super().__init__()
        torch.manual_seed(2)
        self.embedding = nn.Embedding(12, 4, padding_idx=padding_idx)
        self.functional = functional
        self.fc = nn.Linear(4, 3)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if self.functional:
            e = F.embedding(tokens, self.embedding.weight, padding_idx=self.embedding.padding_idx)
        else:
            e = self.embedding(tokens)
        return self.fc(e.sum(dim=1))


def float_input(shape: tuple[int, ...]) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(3).normal(1.0, 2.0, shape).astype(np.float32))


TOKENS = torch.tensor([[1, 0, 5, 5, 11], [0, 0, 7, 1, 5]])

CASES = {
    "layer_norm": (Norm(nn.LayerNorm(6), (2, 6)), float_input((2, 6))),
    "layer_norm_bias_false": (Norm(nn.LayerNorm(6, bias=False), (2, 6)), float_input((2, 6))),
    "layer_norm_no_affine": (
        Norm(nn.LayerNorm(6, elementwise_affine=False), (2, 6)),
        float_input((2, 6)),
    ),
    "layer_norm_two_dims": (Norm(nn.LayerNorm((3, 4)), (2, 12)), float_input((2, 3, 4))),
    "layer_norm_bias_only": (BiasOnly(), float_input((2, 6))),
    "embedding": (Tokens(None), TOKENS),
    "embedding_padding": (Tokens(0), TOKENS),
    "embedding_negative_padding": (Tokens(-1), TOKENS),
    "embedding_functional_int32": (Tokens(5, functional=True), TOKENS.to(torch.int32)),
}


@pytest.mark.parametrize("name", CASES)
def test_loss_and_gradients_equal_autograd(name: str) -> None:
    model, x = CASES[name]
    label = torch.tensor([2, 0])
    module = import_module(model, (x,), loss="cross_entropy")
    module.verify()
    text = str(module)
    op = "adir.embedding" if name.startswith("embedding") else "adir.layer_norm"
    assert text.count(f"{op} ") == 1, text
    AutodiffPass().apply(adir_context(), module)
    (loss, *grads) = Session(module, np.float64).call("loss_grad", x.numpy(), label.numpy())

    reference = model.double()
    expected = F.cross_entropy(reference(x if not x.is_floating_point() else x.double()), label)
    params = dict(reference.named_parameters())
    expected_grads = torch.autograd.grad(expected, list(params.values()))
    np.testing.assert_allclose(loss, expected.item(), rtol=1e-10)
    assert len(grads) == len(params)
    for (param_name, _), got, want in zip(params.items(), grads, expected_grads, strict=True):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, atol=1e-12, err_msg=param_name)
    model.float()


def test_native_layer_norm_returns_its_statistics_in_pytorch_s_shape() -> None:
    """Output, mean and rstd of `@forward` equal PyTorch's (float32, 1e-6 relative)."""
    x = float_input((2, 5))
    module = import_module(NativeStatistics(), (x,))
    assert "adir.reshape %1 {shape = array<i64: 2, 1>}" in str(module)
    results = Session(module).call("forward", x.numpy())
    with torch.no_grad():
        expected = NativeStatistics()(x)
    for got, want in zip(results, expected, strict=True):
        assert got.shape == tuple(want.shape)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)


def test_negative_padding_idx_is_the_row_pytorch_means() -> None:
    module = import_module(Tokens(-1), (TOKENS,), loss="cross_entropy")
    assert "padding_idx = 11 : i64" in str(module)
    assert "%tokens: tensor<2x5xi32>" in str(module)


def test_scale_grad_by_freq_is_refused_at_its_line() -> None:
    class Scaled(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding = nn.Embedding(12, 4, scale_grad_by_freq=True)

        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            return self.embedding(tokens).sum(dim=(1, 2))

    with pytest.raises(UnsupportedOpsError) as caught:
        import_module(Scaled(), (TOKENS,), loss="mse")
    (op,) = caught.value.ops
    assert op.target == "aten.embedding.default"
    assert op.reason.startswith("scale_grad_by_freq=True")
    assert "use nn.Embedding(..., scale_grad_by_freq=False)" in op.reason
    _, start = inspect.getsourcelines(Scaled.forward)
    assert op.site.line == start + 1
