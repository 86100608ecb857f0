"""ATen's activations and softmax / log_softmax: the activations family."""

from __future__ import annotations

from typing import Any

from torch import fx

from adir.frontends.aten.registry import Args, Lowering, aten, aten_, unary

for _name in ("relu", "sigmoid", "tanh"):
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


@aten(aten_.log_softmax.int, aten_._log_softmax.default)
def log_softmax(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.log_softmax(lo.value(a["self"]), a["dim"])
