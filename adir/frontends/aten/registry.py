"""The ATen handler registry: one handler per ATen overload, and what a handler works with.

    @aten(aten_.relu.default)
    def relu(lo: Lowering, node: fx.Node, a: Args) -> Any:
        return lo.b.relu(lo.value(a["self"]))

`Args` holds the op's arguments by schema name, defaults filled in, tensors still as fx nodes
(`lo.value` turns them into adir values; Python numbers become f32 constants when they reach
an op). A handler returns the adir value (or a tuple, for an op with several results), or
raises `Unsupported` for an argument adir has no meaning for (a class weight, label smoothing,
...), which the importer lists with the model's other unsupported ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import fx

from adir.frontends.builder import ModelBuilder

Args = dict[str, Any]

aten_ = torch.ops.aten


class Unsupported(Exception):
    """This use of a supported ATen op cannot be expressed in adir; the message says why."""


class Lowering:
    """What a handler needs: the builder, and the adir value of each fx node lowered so far;
    for a model with training-mode dropout, the function's step counter (`step`), which each
    `adir.dropout` reads with a seed of its own (`next_seed`)."""

    def __init__(self, builder: ModelBuilder, values: dict[fx.Node, Any], step: Any = None):
        self.b = builder
        self.values = values
        self.step = step
        self.seeds = 0

    def next_seed(self) -> int:
        """1, 2, ...: the seed of each dropout in the order the model runs them."""
        self.seeds += 1
        return self.seeds

    def value(self, arg: Any) -> Any:
        """The adir value of an fx node (lists elementwise); anything else as it is."""
        if isinstance(arg, fx.Node):
            return self.values[arg]
        if isinstance(arg, list | tuple):
            return [self.value(a) for a in arg]
        return arg

    @staticmethod
    def shape(node: fx.Node) -> tuple[int, ...]:
        """The static shape of a node's result, from the example run of `torch.export`."""
        return static_shape(node.meta["val"])


def static_shape(tensor: torch.Tensor) -> tuple[int, ...]:
    if not all(isinstance(d, int) for d in tensor.shape):
        raise Unsupported(f"dynamic shape {tuple(tensor.shape)}; adir needs static shapes")
    return tuple(int(d) for d in tensor.shape)


Handler = Callable[[Lowering, fx.Node, Args], Any]

ATEN_OPS: dict[Any, Handler] = {}
"""ATen overload -> its handler; the importer keeps exactly these ops out of decomposition."""


def aten(*overloads: Any) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of `overloads`."""

    def register(handler: Handler) -> Handler:
        for overload in overloads:
            assert overload not in ATEN_OPS, f"two handlers for {overload}"
            ATEN_OPS[overload] = handler
        return handler

    return register


def arguments(node: fx.Node) -> Args:
    """The node's arguments by schema name, with the schema's defaults for those left out."""
    args: Args = {}
    for index, argument in enumerate(node.target._schema.arguments):  # type: ignore[union-attr]
        if index < len(node.args):
            args[argument.name] = node.args[index]
        elif argument.name in node.kwargs:
            args[argument.name] = node.kwargs[argument.name]
        else:
            args[argument.name] = argument.default_value if argument.has_default_value() else None
    return args


def require(condition: bool, message: str) -> None:
    """Raise `Unsupported(message)` unless `condition`."""
    if not condition:
        raise Unsupported(message)


def scaled(lo: Lowering, value: Any, factor: Any) -> Any:
    """`value * factor`, or `value` itself for a factor of 1 (ATen's alpha and beta)."""
    return value if factor == 1 else lo.b.mul(value, float(factor))


def unary(adir_name: str) -> Handler:
    """The handler of an op `f(self)` that is the adir op `adir_name`."""

    def lower(lo: Lowering, node: fx.Node, a: Args) -> Any:
        return getattr(lo.b, adir_name)(lo.value(a["self"]))

    return lower


def binary(adir_name: str) -> Handler:
    """The handler of an op `f(self, other)` that is the adir op `adir_name`."""

    def lower(lo: Lowering, node: fx.Node, a: Args) -> Any:
        return getattr(lo.b, adir_name)(lo.value(a["self"]), lo.value(a["other"]))

    return lower
