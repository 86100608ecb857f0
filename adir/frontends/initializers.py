"""Initializers for the builder's parameters: `kaiming_uniform(a=math.sqrt(5))`, ...

Each returns an `Init`, an initializer attribute of `adir/dialects/tensor/initializers.py` still to
be made, so that the builder can give it a seed when none is named (its next one: 1, 2, ...).
`initializer(Kind, **parameters)` makes one of any initializer attribute class, so a new one
needs nothing here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import FloatData, IntAttr, StringAttr
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor import initializers as inits
from adir.frontends.sites import BuildError

_CONVERTERS: dict[type[Attribute], Callable[[Any], Attribute]] = {
    IntAttr: lambda v: IntAttr(int(v)),
    FloatData: lambda v: FloatData(float(v)),
    StringAttr: lambda v: StringAttr(str(v)),
}


@dataclass(frozen=True)
class Init:
    """An initializer attribute to be made, whose seed the builder may still choose."""

    kind: type[inits.InitializerAttr]
    values: Mapping[str, int | float | str]

    def needs_seed(self) -> bool:
        return "seed" in self.kind.param_kinds() and "seed" not in self.values

    def attr(self, seed: int | None = None) -> inits.InitializerAttr:
        """The attribute, with `seed` if it takes one and none was named."""
        kinds = self.kind.param_kinds()
        if unknown := [key for key in self.values if key not in kinds]:
            raise BuildError(
                f"{self.kind.name}: unknown parameter '{unknown[0]}', expected one of "
                + ", ".join(kinds)
            )
        values = {**self.kind.DEFAULTS, **self.values}
        if seed is not None and "seed" in kinds and "seed" not in self.values:
            values["seed"] = seed
        if missing := [key for key in kinds if key not in values]:
            raise BuildError(f"{self.kind.name}: missing parameter '{missing[0]}'")
        try:
            return self.kind(*(_CONVERTERS[kind](values[key]) for key, kind in kinds.items()))
        except (VerifyException, ValueError) as error:
            raise BuildError(str(error)) from None


def initializer(kind: type[inits.InitializerAttr], **values: int | float | str) -> Init:
    """Any initializer attribute class with its parameters, e.g.
    `initializer(KaimingUniformInit, a=math.sqrt(5))`."""
    return Init(kind, values)


def zeros() -> Init:
    return initializer(inits.ZerosInit)


def fill(value: float) -> Init:
    return initializer(inits.FillInit, value=value)


def uniform(low: float = 0.0, high: float = 1.0, seed: int | None = None) -> Init:
    """`torch.nn.init.uniform_`: U(low, high)."""
    return initializer(inits.UniformInit, low=low, high=high, **_seed(seed))


def normal(mean: float = 0.0, std: float = 1.0, seed: int | None = None) -> Init:
    """`torch.nn.init.normal_`."""
    return initializer(inits.NormalInit, mean=mean, std=std, **_seed(seed))


def kaiming_uniform(a: float = 0.0, mode: str = "fan_in", seed: int | None = None) -> Init:
    """`torch.nn.init.kaiming_uniform_`; `a=math.sqrt(5)` is nn.Linear's and nn.Conv2d's."""
    return initializer(inits.KaimingUniformInit, a=a, mode=mode, **_seed(seed))


def xavier_uniform(gain: float = 1.0, seed: int | None = None) -> Init:
    """`torch.nn.init.xavier_uniform_`."""
    return initializer(inits.XavierUniformInit, gain=gain, **_seed(seed))


def _seed(seed: int | None) -> dict[str, int]:
    return {} if seed is None else {"seed": seed}
