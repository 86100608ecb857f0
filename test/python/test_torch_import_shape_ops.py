"""The ATen ops that move data (slice, select, cat, split, stack, unsqueeze / squeeze, permute,
t / transpose, view / reshape with -1) and the 1-D convolution and pools, imported from tiny
modules: the interpreter's loss and gradients (of the parameters and of the input) equal
PyTorch's in float64.

Each case is a function `f` of a tensor, imported as the module
`loss(x, r...) = sum_i sum(f(x * w)_i * r_i)`: the parameter `w` (a random tensor of x's shape)
makes the gradient reach a parameter, and the random `r_i` make every entry of the adjoint
reaching `f` a different number, so a misplaced element cannot cancel out. The forward values
are the inputs' own entries moved about (or, for a conv or a pool, sums of a few products), so
float64 sides agree to the last bits: 1e-12 relative to the largest entry leaves room for the
summation order and nothing else. The loss is a sum of terms of both signs, so it is held to
1e-12 of the sum of its terms' magnitudes, the scale its rounding has (a conv's loss once summed
to 8.6e-5 from terms of order 1, and the two float64 sums parted by 4.4e-16, two ulps of 1).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
from torch import nn
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from adir.context import adir_context
from adir.frontends.builder import module_to_text
from adir.frontends.torch_import import UnsupportedOpsError, import_module
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass

TOLERANCE = 1e-12

Outputs = torch.Tensor | tuple[torch.Tensor, ...]


class Wrapped(nn.Module):
    """`sum_i sum(f(x * w)_i * r_i)` for a function `f` of one tensor and an optional layer
    (a conv or a pool) that `f` may call as its second argument."""

    def __init__(
        self, f: Callable[..., Outputs], shape: tuple[int, ...], layer: nn.Module | None
    ) -> None:
        super().__init__()
        self.f = f
        self.w = nn.Parameter(torch.rand(shape) + 0.5)
        self.layer = layer

    def forward(self, x: torch.Tensor, *r: torch.Tensor) -> torch.Tensor:
        outputs = self.f(x * self.w, self.layer)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        return sum((y * ri).sum() for y, ri in zip(outputs, r, strict=True))


def outputs_of(f: Callable[..., Outputs], x: torch.Tensor, layer: nn.Module | None) -> tuple:
    with torch.no_grad():
        outputs = f(x, layer)
    return outputs if isinstance(outputs, tuple) else (outputs,)


def gradient_module(module: ModuleOp) -> ModuleOp:
    module = module.clone()
    AutodiffPass(wrt_args=(0,)).apply(adir_context(), module)
    module.verify()
    return module


def assert_close(
    actual: np.ndarray, expected: np.ndarray, what: str, scale: float | None = None
) -> None:
    """Within TOLERANCE relative, and of `scale` absolute (the largest entry unless given)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, what
    if scale is None:
        scale = float(np.max(np.abs(expected), initial=0.0))
    np.testing.assert_allclose(
        actual, expected, rtol=TOLERANCE, atol=TOLERANCE * scale, err_msg=what
    )


def check(
    f: Callable[..., Outputs],
    shape: tuple[int, ...],
    layer: nn.Module | None = None,
    expect_in_ir: str | None = None,
) -> str:
    """Import `Wrapped(f)` (float32, as PyTorch models are), then compare the loss and the
    gradients of every parameter and of x, in float64, with the same module in float64 under
    torch.autograd. Returns the imported IR's text."""
    torch.manual_seed(0)
    if layer is not None and hasattr(layer, "reset_parameters"):
        # Its weights from the seed, not from whatever drew from torch's generator before
        # (the layers are built when the test module is imported).
        layer.reset_parameters()
    model = Wrapped(f, shape, layer)
    x = torch.randn(shape)
    r = [torch.randn(y.shape) for y in outputs_of(f, x, layer)]
    module = import_module(model, (x, *r))
    text = module_to_text(module)
    if expect_in_ir is not None:
        assert expect_in_ir in text
    grad_module = gradient_module(module)
    grad_func = next(
        op for op in grad_module.ops if isinstance(op, FuncOp) and op.sym_name.data == "loss_grad"
    )
    symbols = [ref.root_reference.data for ref in grad_func.attributes["adir.gradients"].data]
    x64, r64 = x.double(), [ri.double() for ri in r]
    loss, *grads = Session(grad_module, np.float64).call(
        "loss_grad", x64.numpy(), *(ri.numpy() for ri in r64)
    )

    reference = model.double()
    x64.requires_grad_(True)
    expected = reference(x64, *r64)
    expected.backward()
    terms = outputs_of(f, x64.detach() * reference.w.detach(), reference.layer)
    magnitude = float(sum((y.abs() * ri.abs()).sum() for y, ri in zip(terms, r64, strict=True)))
    assert_close(loss, expected.detach().numpy(), "loss", magnitude)
    parameters = {name.replace(".", "_"): p for name, p in reference.named_parameters()}
    assert len(grads) == len(symbols) + 1
    for symbol, grad in zip(symbols, grads, strict=False):
        assert_close(grad, parameters[symbol].grad.numpy(), f"d{symbol}")
    assert_close(grads[-1], x64.grad.numpy(), "dx")
    return text


SHAPE_OPS: dict[str, tuple[Callable[..., Outputs], tuple[int, ...], str | None]] = {
    # aten.slice.Tensor: steps, negative bounds and bounds past the end, clamped as PyTorch
    # does (the IR holds the clamped bounds).
    "slice_step": (lambda t, _: t[:, 1:5:2], (2, 6, 3), "stop = array<i64: 2, 5, 3>"),
    "slice_negative_start": (lambda t, _: t[:, -3:], (2, 6), "start = array<i64: 0, 3>"),
    "slice_past_the_end": (lambda t, _: t[:, 4:100], (2, 6), "stop = array<i64: 2, 6>"),
    "slice_before_the_start": (lambda t, _: t[-100:1], (3, 4), "stop = array<i64: 1, 4>"),
    "slice_negative_start_with_step": (lambda t, _: t[..., -5::3], (2, 3, 7), "step"),
    "slice_of_slices": (lambda t, _: t[1:, ::2][:, 1:-1], (4, 9), None),
    "narrow": (lambda t, _: t.narrow(1, 1, 3), (2, 5), None),
    # aten.select.int: a one-element slice reshaped
    "select": (lambda t, _: t[:, 2], (2, 4, 3), "tensor<2x1x3xf32> -> tensor<2x3xf32>"),
    "select_negative": (lambda t, _: t.select(-1, -1), (2, 4, 3), None),
    "unbind": (lambda t, _: t.unbind(1), (2, 3, 4), None),
    # aten.cat.default
    "cat": (lambda t, _: torch.cat([t, t * 2.0], 1), (2, 3), "adir.concat"),
    "cat_three_sizes_negative_dim": (
        lambda t, _: torch.cat([t[..., :1], t, t[..., 2:]], dim=-1),
        (2, 3, 4),
        "axis = 2 : i64",
    ),
    # aten.split_with_sizes / split.Tensor: a slice per part
    "split_with_sizes": (lambda t, _: torch.split(t, [1, 2, 3], 1), (2, 6), None),
    "split_uneven_chunks": (lambda t, _: torch.split(t, 3, -1), (2, 8), None),
    "split_part_unused": (lambda t, _: torch.split(t, 2, 0)[1], (6, 2), None),
    "chunk": (lambda t, _: torch.chunk(t, 2, 1), (3, 4), None),
    # aten.stack: torch.export writes it as unsqueezes (or views) and a cat
    "stack": (lambda t, _: torch.stack([t, t * 3.0], 0), (2, 3), None),
    "stack_last_dim": (lambda t, _: torch.stack([t, -t, t], -1), (2, 3), None),
    # unsqueeze / squeeze
    "unsqueeze_squeeze": (lambda t, _: t.unsqueeze(1).unsqueeze(-1).squeeze(-1), (2, 3), None),
    "squeeze_dims": (lambda t, _: t[:1, :, :1].squeeze((0, 2)), (2, 3, 2), None),
    "squeeze_all": (lambda t, _: t[:, :1].squeeze(), (3, 2, 4), None),
    "index_none": (lambda t, _: t[:, None], (2, 3), None),
    # aten.permute (adir.transpose takes any permutation), t, transpose.int
    "permute": (lambda t, _: t.permute(2, 0, 1), (2, 3, 4), "array<i64: 2, 0, 1>"),
    "permute_negative_dims": (lambda t, _: t.permute(-1, 0, -2), (2, 3, 4), None),
    "t": (lambda t, _: t.t(), (3, 5), None),
    "transpose_int": (lambda t, _: t.transpose(0, -1), (2, 3, 4), None),
    "mT": (lambda t, _: t.mT, (2, 3, 4), None),
    # view / reshape with -1
    "view_minus_one": (lambda t, _: t.view(-1, 4), (2, 3, 4), None),
    "reshape_minus_one": (lambda t, _: t.reshape(2, -1, 2), (2, 3, 4), None),
}


@pytest.mark.parametrize("name", SHAPE_OPS)
def test_data_movement_op_equals_torch_in_float64(name: str) -> None:
    f, shape, expect_in_ir = SHAPE_OPS[name]
    check(f, shape, expect_in_ir=expect_in_ir)


def test_cat_skips_an_empty_vector_as_pytorch_does() -> None:
    """torch.cat drops 1-D empty tensors from a cat of higher rank (a legacy rule): the
    concat has the two real inputs."""

    class Padded(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("nothing", torch.zeros(0))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.cat([x, self.nothing, x], 1)

    module = import_module(Padded(), (torch.randn(2, 3),))
    text = module_to_text(module)
    assert "adir.concat %x, %x {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x3xf32>" in text
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = Session(module).call("forward", x)
    np.testing.assert_array_equal(y, np.concatenate([x, x], 1))


CONVS_AND_POOLS: dict[str, tuple[Callable[..., Outputs], tuple[int, ...], nn.Module | None]] = {
    "conv1d": (lambda t, m: m(t), (2, 3, 10), nn.Conv1d(3, 4, 3)),
    "conv1d_stride_padding": (lambda t, m: m(t), (1, 3, 11), nn.Conv1d(3, 2, 4, 2, padding=2)),
    "conv1d_dilation_no_bias": (
        lambda t, m: m(t),
        (2, 2, 12),
        nn.Conv1d(2, 3, 3, dilation=3, bias=False),
    ),
    "conv1d_groups": (lambda t, m: m(t), (2, 4, 9), nn.Conv1d(4, 6, 3, padding=1, groups=2)),
    "conv1d_depthwise": (lambda t, m: m(t), (1, 4, 9), nn.Conv1d(4, 4, 5, groups=4)),
    "conv1d_padding_same": (lambda t, m: m(t), (2, 3, 10), nn.Conv1d(3, 4, 5, padding="same")),
    "conv1d_padding_same_dilated": (
        lambda t, m: m(t),
        (1, 2, 10),
        nn.Conv1d(2, 2, 3, padding="same", dilation=2),
    ),
    "conv1d_padding_valid": (lambda t, m: m(t), (2, 3, 10), nn.Conv1d(3, 4, 5, padding="valid")),
    "conv1d_unbatched": (lambda t, m: m(t), (3, 10), nn.Conv1d(3, 4, 3)),
    "max_pool1d": (lambda t, m: m(t), (2, 3, 10), nn.MaxPool1d(2)),
    "max_pool1d_stride_padding": (lambda t, m: m(t), (2, 3, 11), nn.MaxPool1d(3, 2, padding=1)),
    "avg_pool1d": (lambda t, m: m(t), (2, 3, 10), nn.AvgPool1d(3, 2)),
    "avg_pool1d_padding_exclude": (
        lambda t, m: m(t),
        (2, 3, 10),
        nn.AvgPool1d(3, 2, padding=1, count_include_pad=False),
    ),
    "adaptive_avg_pool1d_1": (lambda t, m: m(t), (2, 3, 10), nn.AdaptiveAvgPool1d(1)),
    "adaptive_avg_pool1d_divides": (lambda t, m: m(t), (2, 3, 10), nn.AdaptiveAvgPool1d(5)),
}


@pytest.mark.parametrize("name", CONVS_AND_POOLS)
def test_conv1d_and_pool1d_equal_torch_in_float64(name: str) -> None:
    f, shape, layer = CONVS_AND_POOLS[name]
    check(f, shape, layer)


def test_conv1d_is_adir_conv1d_on_the_parameter_as_it_is() -> None:
    """The parameter keeps PyTorch's 3-D shape and feeds `adir.conv1d` with no reshape; the
    padding is (left, right)."""
    text = check(lambda t, m: m(t), (2, 3, 11), nn.Conv1d(3, 4, 3, stride=2, padding=1))
    assert "adir.param @layer_weight : tensor<4x3x3xf32>" in text
    assert "adir.reshape" not in text
    assert (
        "adir.conv1d %mul, %layer_weight, %layer_bias {stride = array<i64: 2>, padding = "
        "array<i64: 1, 1>} : tensor<2x3x11xf32>, tensor<4x3x3xf32>, tensor<4xf32> -> "
        "tensor<2x4x6xf32>"
    ) in text


UNSUPPORTED: dict[str, tuple[nn.Module, tuple[int, ...], str]] = {
    "conv_transpose1d": (nn.ConvTranspose1d(2, 2, 3), (1, 2, 8), "a transposed convolution"),
    "conv3d": (
        nn.Conv3d(1, 1, 2),
        (1, 1, 3, 3, 3),
        "a 3-D convolution (adir has conv2d and conv1d)",
    ),
    "adaptive_avg_pool1d_not_dividing": (
        nn.AdaptiveAvgPool1d(3),
        (1, 2, 8),
        "output size [1, 3] that does not divide [1, 8]",
    ),
    "max_pool1d_ceil_mode": (nn.MaxPool1d(3, ceil_mode=True), (1, 2, 8), "ceil_mode=True"),
}


@pytest.mark.parametrize("name", UNSUPPORTED)
def test_unsupported_forms_are_located_errors_saying_why(name: str) -> None:
    layer, shape, reason = UNSUPPORTED[name]

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = layer

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.layer(x)

    with pytest.raises(UnsupportedOpsError) as caught:
        import_module(Model(), (torch.randn(shape),))
    (op,) = caught.value.ops
    assert op.reason == reason
    assert op.site is not None and op.site.text.strip() == "return self.layer(x)"
    assert op.module.startswith("'layer' (")


@pytest.mark.parametrize(
    ("target", "take", "label_shape"),
    [
        ("aten.select.int", lambda label: label[:, 0], (2, 2)),
        ("aten.slice.Tensor", lambda label: label[:, 1:].flatten(), (2, 2)),
        ("aten.cat.default", lambda label: torch.cat([label, label]), (1,)),
    ],
    ids=["select", "slice", "cat"],
)
def test_moving_integer_data_is_a_located_error(target: str, take, label_shape) -> None:
    """adir's data-movement ops take f32: slicing a label tensor says so at its line, instead
    of the op's operand-type message."""

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
            return nn.functional.cross_entropy(self.fc(x), take(labels))

    with pytest.raises(UnsupportedOpsError) as caught:
        import_module(Model(), (torch.randn(2, 4), torch.zeros(label_shape, dtype=torch.long)))
    (op,) = caught.value.ops
    assert op.target == target
    assert op.reason == (
        "a tensor of int64: adir moves only f32 data (give the model its integer inputs "
        "already in the shape it needs)"
    )
    assert op.site is not None and "take(labels)" in op.site.text
