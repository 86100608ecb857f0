"""ATen's arithmetic, comparisons and select: the elementwise family."""

from __future__ import annotations

from typing import Any

from torch import fx

from adir.frontends.aten.registry import (
    Args,
    Lowering,
    aten,
    aten_,
    binary,
    require,
    scaled,
    unary,
)


@aten(aten_.add.Tensor, aten_.add.Scalar)
def add(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.add(lo.value(a["self"]), scaled(lo, lo.value(a["other"]), a["alpha"]))


@aten(aten_.sub.Tensor, aten_.sub.Scalar)
def sub(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.sub(lo.value(a["self"]), scaled(lo, lo.value(a["other"]), a["alpha"]))


@aten(aten_.rsub.Scalar, aten_.rsub.Tensor)
def rsub(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.sub(lo.value(a["other"]), scaled(lo, lo.value(a["self"]), a["alpha"]))


aten(aten_.mul.Tensor, aten_.mul.Scalar)(binary("mul"))
aten(aten_.div.Tensor, aten_.div.Scalar)(binary("div"))
aten(aten_.maximum.default)(binary("maximum"))
aten(aten_.minimum.default)(binary("minimum"))


@aten(aten_.div.Tensor_mode)
def div_mode(lo: Lowering, node: fx.Node, a: Args) -> Any:
    require(a["rounding_mode"] is None, f"rounding_mode={a['rounding_mode']!r}")
    return lo.b.div(lo.value(a["self"]), lo.value(a["other"]))


@aten(aten_.pow.Tensor_Scalar, aten_.pow.Tensor_Tensor)
def pow_(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.pow(lo.value(a["self"]), lo.value(a["exponent"]))


@aten(aten_.pow.Scalar)
def pow_of_number(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.pow(float(a["self"]), lo.value(a["exponent"]))


for _name in ("neg", "exp", "log", "sqrt"):
    aten(getattr(aten_, _name).default)(unary(_name))


@aten(aten_.rsqrt.default)
def rsqrt(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.div(1.0, lo.b.sqrt(lo.value(a["self"])))


@aten(aten_.reciprocal.default)
def reciprocal(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.div(1.0, lo.value(a["self"]))


def _compare(predicate: str):
    def lower(lo: Lowering, node: fx.Node, a: Args) -> Any:
        return lo.b.cmp(predicate, lo.value(a["self"]), lo.value(a["other"]))

    return lower


for _predicate in ("eq", "ne", "lt", "le", "gt", "ge"):
    _op = getattr(aten_, _predicate)
    aten(_op.Tensor, _op.Scalar)(_compare(_predicate))


@aten(aten_.where.self)
def where(lo: Lowering, node: fx.Node, a: Args) -> Any:
    return lo.b.select(lo.value(a["condition"]), lo.value(a["self"]), lo.value(a["other"]))
