"""ATen's activations and softmax / log_softmax: the activations family."""

from __future__ import annotations

import math
from typing import Any

from torch import fx

from adir.frontends.aten.registry import (
    Args,
    Lowering,
    Unsupported,
    aten,
    aten_,
    require,
    unary,
)

for _name in ("relu", "sigmoid", "tanh", "hardswish", "hardsigmoid"):
    aten(getattr(aten_, _name).default)(unary(_name))


@aten(aten_.gelu.default)
def gelu(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.gelu(lo.value(a["self"]), approximate=a["approximate"])


@aten(aten_.leaky_relu.default)
def leaky_relu(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.leaky_relu(lo.value(a["self"]), float(a["negative_slope"]))


@aten(aten_.softplus.default)
def softplus(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.softplus(lo.value(a["self"]), float(a["beta"]), float(a["threshold"]))


@aten(aten_.silu.default)
def silu(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """`x * sigmoid(x)`."""
    x = lo.value(a["self"])
    return lo.b.mul(x, lo.b.sigmoid(x))


@aten(aten_.softmax.int, aten_._softmax.default)
def softmax(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.softmax(lo.value(a["self"]), a["dim"])


@aten(aten_._safe_softmax.default)
def safe_softmax(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """The softmax of scaled-dot-product attention (PyTorch's math path): zeros, not nan, in a
    row whose entries are all -inf (a query that a mask hides from every key), and a zero
    gradient there. A row is all -inf exactly when its max is -inf (a nan in the row makes the
    max nan, and the row nan, as in PyTorch). Such a row is zeroed before the softmax too:
    the softmax of -infs is nan, and its gradient (which reads the softmax's output) would
    carry that nan into every key through the scores' matmul."""
    require(a["dtype"] is None, f"dtype={a['dtype']}: softmax in another dtype")
    x, dim = lo.value(a["self"]), a["dim"]
    row_max = lo.b.max(x, [dim], True)
    hidden_rows = lo.b.cmp("eq", row_max, lo.b.constant(-math.inf))
    zero = lo.b.constant(0.0)
    finite = lo.b.select(hidden_rows, zero, x)
    return lo.b.select(hidden_rows, zero, lo.b.softmax(finite, dim))


@aten(aten_.log_softmax.int, aten_._log_softmax.default)
def log_softmax(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.log_softmax(lo.value(a["self"]), a["dim"])


def _bound(value: Any, name: str) -> float:
    """A clamp bound as a float: None (no bound) is infinite on its side."""
    if value is None:
        return -math.inf if name == "min" else math.inf
    require(not math.isnan(float(value)), f"a nan {name} (the result would be all nan)")
    return float(value)


@aten(aten_.hardtanh.default)
def hardtanh(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """nn.Hardtanh and nn.ReLU6 (torch.export writes relu6 as hardtanh(0, 6)): hardtanh's
    gradient, 0 at the bounds."""
    low, high = _bound(a["min_val"], "min"), _bound(a["max_val"], "max")
    return lo.b.clamp(lo.value(a["self"]), low, high)


@aten(aten_.relu6.default)
def relu6(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.clamp(lo.value(a["self"]), 0.0, 6.0)


@aten(aten_.clamp.default, aten_.clamp_min.default, aten_.clamp_max.default)
def clamp(lo: Lowering, node: fx.Node, a: Args) -> Any:
    """torch.clamp, clamp_min, clamp_max with number bounds: torch.clamp's gradient, which
    passes dy at the bounds (`inclusive`)."""
    low, high = _bound(a.get("min"), "min"), _bound(a.get("max"), "max")
    return lo.b.clamp(lo.value(a["self"]), low, high, inclusive=True)


@aten(aten_.clamp.Tensor, aten_.clamp_min.Tensor, aten_.clamp_max.Tensor)
def clamp_by_tensors(lo: Lowering, node: fx.Node, a: Args) -> Any:
    raise Unsupported(
        "tensor bounds; give the bounds as numbers, or write torch.maximum / torch.minimum"
    )
