"""The PyTorch importer (`adir.frontends.torch_import`): imported models compute PyTorch's loss
and gradients with the model's own weights; unsupported ops are listed with their source lines.

Each model is exported once per module (an export and decomposition take about a second)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from adir.context import adir_context, parse_module
from adir.frontends.builder import module_to_text
from adir.frontends.torch_import import (
    TorchImportError,
    UnsupportedOpsError,
    import_module,
    symbol_names,
)
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass


class SeedMlp(nn.Module):
    """The seed model (examples/mnist_mlp.mlir): 784-32-10, no biases, sigmoid, log_softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.l1 = nn.Linear(784, 32, bias=False)
        self.l2 = nn.Linear(32, 10, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.log_softmax(self.l2(torch.sigmoid(self.l1(x))), dim=1)


class ReluMlp(nn.Module):
    """A 3-layer relu MLP with biases whose forward computes the loss itself."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)
        )

    def forward(self, image: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.layers(image.flatten(1)), label)


def weights_of(model: nn.Module) -> dict[str, torch.Tensor]:
    """Leaf copies of the model's parameters, by adir symbol."""
    return {
        symbol_names([name])[name]: p.detach().clone().requires_grad_(True)
        for name, p in model.named_parameters()
    }


def adir_loss_and_gradients(module: ModuleOp, *args: np.ndarray) -> tuple[float, dict, Session]:
    """The loss and the gradients by parameter symbol from autodiff in the interpreter, and
    the session (its params after the call)."""
    module = module.clone()
    AutodiffPass().apply(adir_context(), module)
    module.verify()
    grad_func = next(
        op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == "loss_grad"
    )
    symbols = [ref.root_reference.data for ref in grad_func.attributes["adir.gradients"].data]
    session = Session(module)
    loss, *grads = session.call("loss_grad", *args)
    return loss.item(), dict(zip(symbols, grads, strict=True)), session


def assert_gradients_equal(actual: dict, weights: dict[str, torch.Tensor]) -> None:
    assert set(actual) == set(weights)
    for name, tensor in weights.items():
        reference = tensor.grad.numpy()
        scale = np.abs(reference).max()
        np.testing.assert_allclose(actual[name], reference, rtol=1e-5, atol=1e-5 * scale)


@pytest.fixture(scope="module")
def seed() -> tuple[nn.Module, ModuleOp]:
    torch.manual_seed(0)
    model = SeedMlp()
    module = import_module(model, (torch.randn(1, 784),), loss="nll")
    module.verify()
    return model, module


@pytest.fixture(scope="module")
def relu_mlp() -> tuple[nn.Module, ModuleOp]:
    torch.manual_seed(1)
    model = ReluMlp()
    module = import_module(model, (torch.randn(4, 1, 28, 28), torch.zeros(4, dtype=torch.long)))
    module.verify()
    return model, module


def test_seed_mlp_imports_as_the_seed_model(seed) -> None:
    """Weights [out, in] read with transpose_b (no transpose op), the label is an i32 input,
    the loss function is marked for autodiff, and the IR round-trips through text."""
    _, module = seed
    text = module_to_text(module)
    assert "adir.transpose" not in text
    assert text.count("{transpose_b}") == 2
    assert (
        "func.func @loss(%x: tensor<1x784xf32>, %label: tensor<1xi32>) -> tensor<f32> "
        "attributes {adir.loss}"
    ) in text
    assert 'adir.param @l1_weight : tensor<32x784xf32> = dense<"0x' in text
    assert module_to_text(parse_module(text)) == text


@pytest.mark.parametrize("sample", range(2))
def test_seed_mlp_loss_and_gradients_equal_torch(seed, sample: int) -> None:
    """Loss to 1e-6 and gradients to 1e-5 relative, with the model's own weights."""
    model, module = seed
    rng = np.random.default_rng(sample)
    x = rng.random((1, 784), dtype=np.float32)
    label = rng.integers(0, 10, (1,))
    loss, grads, _ = adir_loss_and_gradients(module, x, label)
    weights = weights_of(model)
    hidden = torch.sigmoid(torch.from_numpy(x) @ weights["l1_weight"].T)
    expected = F.nll_loss(F.log_softmax(hidden @ weights["l2_weight"].T, 1), torch.tensor(label))
    expected.backward()
    assert loss == pytest.approx(expected.item(), rel=1e-6)
    assert_gradients_equal(grads, weights)


def test_relu_mlp_loss_inside_forward_and_gradients_equal_torch(relu_mlp) -> None:
    model, module = relu_mlp
    rng = np.random.default_rng(2)
    image = rng.random((4, 1, 28, 28), dtype=np.float32)
    label = rng.integers(0, 10, (4,))
    loss, grads, _ = adir_loss_and_gradients(module, image, label)
    weights = weights_of(model)
    h = torch.from_numpy(image).flatten(1)
    for index in (0, 2, 4):
        h = F.linear(h, weights[f"layers_{index}_weight"], weights[f"layers_{index}_bias"])
        h = torch.relu(h) if index < 4 else h
    expected = F.cross_entropy(h, torch.from_numpy(label))
    expected.backward()
    assert loss == pytest.approx(expected.item(), rel=1e-6)
    assert_gradients_equal(grads, weights)


def test_params_hold_the_models_current_values(relu_mlp) -> None:
    """A pretrained model is fine-tuned from its own weights: the initial data is bit-exact."""
    model, module = relu_mlp
    params = Session(module).params
    for name, tensor in model.named_parameters():
        np.testing.assert_array_equal(params[symbol_names([name])[name]], tensor.detach().numpy())


def test_loss_module_frozen_params_and_no_loss() -> None:
    """A torch.nn loss with a reduction; requires_grad=False freezes a param; without a loss the
    model is an unmarked @forward returning its output."""
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    model[0].bias.requires_grad_(False)
    x = torch.randn(5, 3)
    target = torch.randn(5, 2)
    module = import_module(model, (x,), loss=nn.MSELoss(reduction="sum"))
    text = module_to_text(module)
    assert "adir.param @p0_bias : tensor<4xf32> = dense<" in text
    first_line = text.split("@p0_bias")[1].splitlines()[0]
    # frozen, and named as in the model's state_dict
    assert "trainable = false" in first_line and 'adir.torch_name = "0.bias"' in first_line
    assert "adir.mse %" in text and '{reduction = "sum"}' in text
    loss, grads, _ = adir_loss_and_gradients(module, x.numpy(), target.numpy())
    weights = {k: v for k, v in weights_of(model).items() if k != "p0_bias"}
    h = torch.tanh(F.linear(x, weights["p0_weight"], model[0].bias))
    expected = F.mse_loss(
        F.linear(h, weights["p2_weight"], weights["p2_bias"]), target, reduction="sum"
    )
    expected.backward()
    assert loss == pytest.approx(expected.item(), rel=1e-6)
    assert_gradients_equal(grads, weights)

    forward = import_module(model, (x,))
    function = next(op for op in forward.ops if isinstance(op, FuncOp))
    assert function.sym_name.data == "forward" and "adir.loss" not in function.attributes
    (output,) = Session(forward).call("forward", x.numpy())
    np.testing.assert_allclose(output, model(x).detach().numpy(), rtol=1e-6, atol=1e-6)


class ManyOps(nn.Module):
    """One forward through most of the ATen ops the importer maps."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 4))
        self.b = nn.Parameter(torch.randn(6))
        self.register_buffer("scale", torch.tensor([0.5, 2.0, 1.0, -1.0, 3.0, 0.25]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.addmm(self.b, x, self.w.t()) * self.scale  # addmm, t, mul
        h = F.gelu(h) + F.gelu(h, approximate="tanh") - torch.tanh(h) / 3.0
        h = F.leaky_relu(h, 0.2) + F.silu(h) + F.softplus(h, beta=2.0) + torch.sigmoid(h)
        h = torch.clamp(h, -2.0, 2.5) + torch.where(h > 0, h, 0.5) + F.relu6(h) ** 2
        h = h + torch.exp(-h).sqrt() + torch.log(1 + h * h) + torch.rsqrt(2 + h * h)
        s = F.softmax(h, dim=1) + F.log_softmax(h, dim=0) - h.amax(1, keepdim=True)
        m = s.mean(0) + s.sum(0) / 5 - torch.maximum(s, h).mean(dim=0)
        r = s.reshape(2, 15).transpose(0, 1).unsqueeze(0).expand(2, 15, 2)
        gram = torch.bmm(r, r.transpose(1, 2)).sum(0, keepdim=True).squeeze(0)  # 15x15
        return gram.mean(1).reshape(3, 5).sum(0).unsqueeze(0) @ s + m  # mm, 1x6


def test_many_ops_forward_equals_torch() -> None:
    """Elementwise, activations, matmuls, shapes and reductions: the forward output to 1e-5."""
    torch.manual_seed(4)
    model = ManyOps()
    x = torch.randn(5, 4)
    module = import_module(model, (x,))
    (output,) = Session(module).call("forward", x.numpy())
    np.testing.assert_allclose(output, model(x).detach().numpy(), rtol=1e-5, atol=1e-5)


class SeparableCnn(nn.Module):
    """conv + batch norm + max pool, then a depthwise-separable block and an average pool."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.depthwise = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False)
        self.pointwise = nn.Conv2d(4, 8, 1)
        self.fc = nn.Linear(8 * 2 * 2, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        h = F.avg_pool2d(torch.relu(self.pointwise(self.depthwise(h))), 2)
        return self.fc(torch.flatten(h, 1))


def test_cnn_with_batch_norm_trains_like_torch() -> None:
    """Loss and gradients to 1e-5, and the running statistics stored as torch updates them.
    conv1's bias feeds the batch norm, which subtracts it again: its gradient is 0 up to
    rounding in both, so it is only checked to be that small."""
    torch.manual_seed(5)
    model = SeparableCnn()
    x = torch.randn(2, 1, 8, 8)
    label = np.array([3, 7])
    module = import_module(model, (x,), loss="cross_entropy")
    text = module_to_text(module)
    assert (
        "@bn1_running_mean : tensor<4xf32> = dense<0.000000e+00> : tensor<4xf32> {trainable" in text
    )
    assert "adir.store %getitem_1, @bn1_running_mean" in text
    assert "groups = 4 : i64" in text
    loss, grads, session = adir_loss_and_gradients(module, x.numpy(), label)
    expected = F.cross_entropy(model(x), torch.from_numpy(label))
    expected.backward()
    assert loss == pytest.approx(expected.item(), rel=1e-6)
    assert np.abs(grads.pop("conv1_bias")).max() < 1e-6
    weights = {symbol_names([n])[n]: p for n, p in model.named_parameters() if n != "conv1.bias"}
    assert_gradients_equal(grads, weights)
    for stat in ("running_mean", "running_var"):
        np.testing.assert_allclose(
            session.params[f"bn1_{stat}"], getattr(model.bn1, stat).numpy(), rtol=1e-5, atol=1e-7
        )


def test_cnn_in_eval_mode_uses_the_running_statistics() -> None:
    torch.manual_seed(6)
    model = SeparableCnn()
    model.bn1.running_mean.uniform_(-1, 1)
    model.bn1.running_var.uniform_(0.5, 2)
    model.eval()
    x = torch.randn(2, 1, 8, 8)
    module = import_module(model, (x,))
    text = module_to_text(module)
    assert "adir.batchnorm_eval" in text and "adir.store" not in text
    (output,) = Session(module).call("forward", x.numpy())
    np.testing.assert_allclose(output, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


class WithCumsum(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.cumsum(self.body(x), dim=1)
        return torch.sort(h, dim=1).values


def test_unsupported_ops_are_all_listed_with_their_source_lines() -> None:
    """cumsum and sort (which depends on it) are both reported, each with its line."""
    lines, start = inspect.getsourcelines(WithCumsum.forward)
    first = start + lines.index("        h = torch.cumsum(self.body(x), dim=1)\n")
    with pytest.raises(UnsupportedOpsError) as caught:
        import_module(WithCumsum(), (torch.randn(2, 8),), loss="mse")
    error = caught.value
    assert [op.target for op in error.ops] == ["aten.cumsum.default", "aten.sort.default"]
    assert [op.site.line for op in error.ops] == [first, first + 1]
    assert str(error).splitlines() == [
        f"{__file__}:{first}: the model uses 2 ATen ops that adir cannot import:",
        f"  {__file__}:{first}: aten.cumsum.default: h = torch.cumsum(self.body(x), dim=1)",
        f"  {__file__}:{first + 1}: aten.sort.default: return torch.sort(h, dim=1).values",
    ]


def test_unsupported_arguments_say_why_and_where() -> None:
    class Smoothed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return F.cross_entropy(self.fc(x), y, label_smoothing=0.1)

    with pytest.raises(UnsupportedOpsError) as caught:
        import_module(Smoothed(), (torch.randn(2, 4), torch.tensor([0, 2])))
    (op,) = caught.value.ops
    assert (op.target, op.reason) == ("aten.cross_entropy_loss.default", "label_smoothing=0.1")
    assert op.site.text.strip() == "return F.cross_entropy(self.fc(x), y, label_smoothing=0.1)"


def test_unknown_loss_name_is_an_error() -> None:
    with pytest.raises(TorchImportError, match="unknown loss 'hinge', expected one of cross_"):
        import_module(nn.Linear(2, 2), (torch.randn(1, 2),), loss="hinge")


def test_symbol_names_are_identifiers_and_unique() -> None:
    assert symbol_names(["layers.0.weight", "layers_0.weight", "0.bias", "W", "w"]) == {
        "layers.0.weight": "layers_0_weight",
        "layers_0.weight": "layers_0_weight_1",
        "0.bias": "p0_bias",  # not `_0_bias`: C reserves names that begin with `_`
        "W": "W",
        "w": "w_1",  # `w` and `W` would both give the C macro PARAM_W
    }
