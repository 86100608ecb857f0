"""Initializers: the attributes that say how a parameter's numbers are drawn.

    adir.param @w1 : tensor<32x784xf32> = #adir.kaiming_uniform<a = 2.23606798, seed = 1>

An initializer is an attribute whose numbers are drawn by adir's own counter-based generator
(`adir.interpreter.prng`), which the C backend implements identically: the same seed gives the
same bits in numpy and in C. Its parameters print as `key = value`; the ones equal to their
default are left out, except `seed`, which always prints. An initializer verifies as it is
parsed, so a bad parameter is a parse error at the attribute.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import FloatData, IntAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


@dataclass(frozen=True)
class Draw:
    """How an initializer fills a tensor: the rule `kind` with its `parameters` in order, reading
    its seed's stream when `random` (`adir/interpreter/initializers.py` specifies each rule;
    the C runtime's `adir_init_<kind>` implements it bit for bit)."""

    kind: str  # zeros, fill, uniform, normal or symmetric_uniform (U(-bound, bound))
    parameters: tuple[float, ...] = ()
    random: bool = False


class InitializerAttr(ParametrizedAttribute):
    """Base of the initializer attributes: `#adir.<kind><key = value, ...>`.

    Subclasses declare their parameters as `IntAttr` / `FloatData` / `StringAttr` fields and
    their defaults in `DEFAULTS`; parsing and printing are shared. Each says how it draws a
    tensor of a given shape (`draw`).
    """

    DEFAULTS: ClassVar[dict[str, int | float | str]] = {}

    def draw(self, shape: Sequence[int]) -> Draw:
        """The rule and numbers that fill a tensor of `shape`."""
        raise NotImplementedError(f"{self.name} defines no draw")

    @classmethod
    def param_kinds(cls) -> dict[str, type[Attribute]]:
        """Parameter name -> its attribute class (IntAttr, FloatData or StringAttr)."""
        return {
            name: param.constr.attr  # type: ignore[attr-defined]
            for name, param in cls.get_irdl_definition().parameters
        }

    def get(self, key: str) -> int | float | str:
        return getattr(self, key).data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        kinds = cls.param_kinds()
        given: dict[str, int | float | str] = {}
        start = _attribute_start(parser, cls.name)
        if parser.parse_optional_punctuation("<") is not None:
            while parser.parse_optional_punctuation(">") is None:
                if given:
                    parser.parse_punctuation(",")
                pos = parser.pos
                key = parser.parse_identifier()
                if key not in kinds:
                    parser.raise_error(
                        f"{cls.name}: unknown parameter '{key}', expected one of "
                        + ", ".join(kinds),
                        pos,
                        parser.pos,
                    )
                if key in given:
                    parser.raise_error(
                        f"{cls.name}: parameter '{key}' is given twice", pos, parser.pos
                    )
                parser.parse_punctuation("=")
                given[key] = cls._parse_value(parser, key, kinds[key])
        values: list[Attribute] = []
        for key, kind in kinds.items():
            value = given.get(key, cls.DEFAULTS.get(key))
            if value is None:
                parser.raise_error(f"{cls.name}: missing parameter '{key}'", start, parser.pos)
            values.append(kind(value))
        # The attribute verifies when it is built, after this returns, where a failure would
        # have no location; verify here so that it is an error at the attribute.
        try:
            cls.new(values)
        except VerifyException as error:
            parser.raise_error(str(error), start, parser.pos)
        return values

    @classmethod
    def _parse_value(cls, parser: AttrParser, key: str, kind: type[Attribute]) -> int | float | str:
        pos = parser.pos
        if kind is StringAttr:
            value = parser.parse_optional_identifier()
            expected = "an identifier"
        elif kind is IntAttr:  # negative values parse, and the verifier says what is allowed
            value = parser.parse_optional_integer(allow_boolean=False)
            expected = "an integer"
        else:
            number = parser.parse_optional_number()
            value = None if number is None else float(number)
            expected = "a number"
        if value is None:
            parser.raise_error(f"{cls.name}: '{key}' must be {expected}", pos)
        return value

    def print_parameters(self, printer: Printer) -> None:
        shown = [
            f"{key} = {_format(self.get(key))}"
            for key in self.param_kinds()
            if key == "seed" or self.get(key) != self.DEFAULTS.get(key)
        ]
        if shown:
            printer.print_string("<" + ", ".join(shown) + ">")


def _attribute_start(parser: AttrParser, name: str) -> int:
    """Where `#name` begins, for errors about a whole attribute. The parser has consumed the
    name and keeps no previous token, so search back from the next token, past comments."""
    content = parser.lexer.input.content
    at = parser.pos
    while (at := content.rfind("#" + name, 0, at)) >= 0:
        if "//" not in content[content.rfind("\n", 0, at) + 1 : at]:
            return at
    return parser.pos


def _format(value: int | float | str) -> str:
    if isinstance(value, float):
        return repr(value)  # the shortest text that parses back to the same double
    return str(value)


def _seed_ok(attr: InitializerAttr) -> None:
    seed = attr.get("seed")
    if not 0 <= int(seed) < 2**64:
        raise VerifyException(f"{attr.name}: seed {seed} must be in [0, 2^64)")


@irdl_attr_definition
class ZerosInit(InitializerAttr):
    """All zeros."""

    name = "adir.zeros"

    def draw(self, shape: Sequence[int]) -> Draw:
        return Draw("zeros")


@irdl_attr_definition
class FillInit(InitializerAttr):
    """Every element `value`."""

    name = "adir.fill"
    value: FloatData

    def draw(self, shape: Sequence[int]) -> Draw:
        return Draw("fill", (self.value.data,))


@irdl_attr_definition
class UniformInit(InitializerAttr):
    """Uniform on [low, high) (`torch.nn.init.uniform_`)."""

    name = "adir.uniform"
    low: FloatData
    high: FloatData
    seed: IntAttr
    DEFAULTS: ClassVar[dict[str, int | float | str]] = {"low": 0.0, "high": 1.0, "seed": 0}

    def verify(self) -> None:
        _seed_ok(self)
        if not self.low.data < self.high.data:
            raise VerifyException(
                f"{self.name}: low {self.low.data} must be less than high {self.high.data}"
            )

    def draw(self, shape: Sequence[int]) -> Draw:
        return Draw("uniform", (self.low.data, self.high.data), random=True)


@irdl_attr_definition
class NormalInit(InitializerAttr):
    """Normal with the given mean and std (`torch.nn.init.normal_`)."""

    name = "adir.normal"
    mean: FloatData
    std: FloatData
    seed: IntAttr
    DEFAULTS: ClassVar[dict[str, int | float | str]] = {"mean": 0.0, "std": 1.0, "seed": 0}

    def verify(self) -> None:
        _seed_ok(self)
        if not self.std.data >= 0:
            raise VerifyException(f"{self.name}: std {self.std.data} must not be negative")

    def draw(self, shape: Sequence[int]) -> Draw:
        return Draw("normal", (self.mean.data, self.std.data), random=True)


FAN_MODES = ("fan_in", "fan_out")


@irdl_attr_definition
class KaimingUniformInit(InitializerAttr):
    """`torch.nn.init.kaiming_uniform_(w, a, mode, nonlinearity='leaky_relu')`:
    U(-b, b) with b = sqrt(2 / (1 + a^2)) * sqrt(3 / fan). `a = sqrt(5)` is what
    `nn.Linear` and `nn.Conv2d` use for their weights."""

    name = "adir.kaiming_uniform"
    a: FloatData
    mode: StringAttr
    seed: IntAttr
    DEFAULTS: ClassVar[dict[str, int | float | str]] = {"a": 0.0, "mode": "fan_in", "seed": 0}

    def verify(self) -> None:
        _seed_ok(self)
        if self.mode.data not in FAN_MODES:
            raise VerifyException(f"{self.name}: mode '{self.mode.data}' must be fan_in or fan_out")

    def bound(self, shape: Sequence[int]) -> float:
        fan_in, fan_out = fans(shape)
        fan = fan_in if self.mode.data == "fan_in" else fan_out
        gain = math.sqrt(2.0 / (1.0 + self.a.data**2))
        return gain * math.sqrt(3.0 / fan)

    def draw(self, shape: Sequence[int]) -> Draw:
        return symmetric_uniform(self, shape)


@irdl_attr_definition
class XavierUniformInit(InitializerAttr):
    """`torch.nn.init.xavier_uniform_(w, gain)`: U(-b, b) with
    b = gain * sqrt(6 / (fan_in + fan_out))."""

    name = "adir.xavier_uniform"
    gain: FloatData
    seed: IntAttr
    DEFAULTS: ClassVar[dict[str, int | float | str]] = {"gain": 1.0, "seed": 0}

    def verify(self) -> None:
        _seed_ok(self)

    def bound(self, shape: Sequence[int]) -> float:
        fan_in, fan_out = fans(shape)
        return self.gain.data * math.sqrt(6.0 / (fan_in + fan_out))

    def draw(self, shape: Sequence[int]) -> Draw:
        return symmetric_uniform(self, shape)


def symmetric_uniform(init: KaimingUniformInit | XavierUniformInit, shape: Sequence[int]) -> Draw:
    """U(-bound, bound); an empty tensor draws nothing and needs no bound (a fan may be 0)."""
    bound = init.bound(shape) if math.prod(shape) else 0.0
    return Draw("symmetric_uniform", (bound,), random=True)


def fans(shape: Sequence[int]) -> tuple[int, int]:
    """(fan_in, fan_out) as `torch.nn.init._calculate_fan_in_and_fan_out` computes them for a
    weight laid out [out, in, *kernel]."""
    if len(shape) < 2:
        raise VerifyException(
            f"fan in and fan out need a tensor of rank 2 or more, got shape {list(shape)}"
        )
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


INITIALIZERS = [
    ZerosInit,
    FillInit,
    UniformInit,
    NormalInit,
    KaimingUniformInit,
    XavierUniformInit,
]
