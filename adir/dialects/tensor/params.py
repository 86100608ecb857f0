"""Module-level parameters, their initializers, and the ops that read and write them.

    adir.param @w1 : tensor<32x784xf32> = #adir.kaiming_uniform<a = 2.23606798, seed = 1>
    adir.param @b1 : tensor<32xf32> = dense<0.0> : tensor<32xf32>

    %w = adir.load @w1 : tensor<32x784xf32>
    adir.store %w_new, @w1 : tensor<32x784xf32>

A parameter is a symbol of the module, so a training step is a plain function that loads,
computes and stores. An initializer is an attribute whose numbers are drawn by adir's own
counter-based generator (`adir.interpreter.prng`), which the C backend implements identically:
the same seed gives the same bits in numpy and in C. Its parameters print as `key = value`;
the ones equal to their default are left out, except `seed`, which always prints. An
initializer verifies as it is parsed, so a bad parameter is a parse error at the attribute.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Self

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    FloatData,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    MemoryReadEffect,
    MemoryWriteEffect,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import FloatTensor, check_size, is_compatible
from adir.dialects.tensor.traits import (
    EvalForm,
    HasEvalForm,
    NoKernel,
    NotDifferentiable,
    ResultsOutsideArena,
)


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


@irdl_op_definition
class ParamOp(IRDLOperation):
    """A module-level tensor, persistent across calls: a weight, or optimizer state."""

    name = "adir.param"
    sym_name = prop_def(StringAttr)
    type = prop_def(TensorType)
    initial_value = prop_def(Attribute)
    traits = traits_def(
        SymbolOpInterface(),
        HasParent(ModuleOp),
        NoKernel("a declaration: the C backend makes it a static array of the model"),
        NotDifferentiable("a declaration; its loads carry the gradient"),
    )

    def __init__(self, name: str, type: TensorType, initial_value: Attribute):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "type": type,
                "initial_value": initial_value,
            }
        )

    def verify_(self) -> None:
        name = f"adir.param @{self.sym_name.data}"
        if not self.type.has_static_shape():
            raise VerifyException(f"{name}: the type {self.type} must have a static shape")
        check_size(self.type, f"{name}: the type")
        if not isinstance(self.type.element_type, Float32Type):
            raise VerifyException(
                f"{name}: the type {self.type} must have f32 elements (adir.load and adir.store "
                "move f32 tensors)"
            )
        init = self.initial_value
        if isinstance(init, DenseIntOrFPElementsAttr):
            if init.type != self.type:
                raise VerifyException(
                    f"{name}: initial data of type {init.type} does not match the type {self.type}"
                )
        elif isinstance(init, KaimingUniformInit | XavierUniformInit):
            if self.type.get_num_dims() < 2:
                raise VerifyException(
                    f"{name}: {init.name} needs a tensor of rank 2 or more, got {self.type}"
                )
        elif not isinstance(init, InitializerAttr):
            raise VerifyException(
                f"{name}: the initial value must be dense data or an initializer "
                f"(#adir.zeros, #adir.uniform<...>, ...), got {init}"
            )
        self._verify_partial_update(name)

    def _verify_partial_update(self, name: str) -> None:
        """`update_fraction` / `update_channels`: only the first output channels (axis 0) of
        a conv or linear weight train (`split-partial-updates` checks the uses)."""
        fraction = self.attributes.get("update_fraction")
        channels = self.attributes.get("update_channels")
        if fraction is None and channels is None:
            return
        if fraction is not None and channels is not None:
            raise VerifyException(f"{name}: give update_fraction or update_channels, not both")
        attr = "update_fraction" if fraction is not None else "update_channels"
        flag = self.attributes.get("trainable")
        if isinstance(flag, IntegerAttr) and not flag.value.data:
            raise VerifyException(f"{name}: {attr} on a parameter marked {{trainable = false}}")
        if self.type.get_num_dims() < 2:
            raise VerifyException(
                f"{name}: {attr} needs a conv or linear weight (rank 2 or more, output channels "
                f"first), not {self.type}"
            )
        outputs = self.type.get_shape()[0]
        if fraction is not None:
            if not (isinstance(fraction, FloatAttr) and isinstance(fraction.type, Float32Type)):
                raise VerifyException(f"{name}: update_fraction must be an f32, got {fraction}")
            if not 0 < fraction.value.data <= 1:
                raise VerifyException(
                    f"{name}: update_fraction {fraction.value.data} must be in (0, 1]"
                )
        elif not (isinstance(channels, IntegerAttr) and isinstance(channels.type, IntegerType)):
            raise VerifyException(f"{name}: update_channels must be an integer, got {channels}")
        elif not 1 <= channels.value.data <= outputs:
            raise VerifyException(
                f"{name}: update_channels {channels.value.data} must be in [1, {outputs}] (the "
                "output channels of the weight)"
            )

    def updated_channels(self) -> int | None:
        """How many leading output channels train under `update_fraction` (the fraction of
        axis 0 rounded up, at least 1) or `update_channels`; None without either. The f32 of
        0.3 is 0.30000001: the 1e-6 keeps 0.3 of 10 channels at 3."""
        outputs = self.type.get_shape()[0]
        fraction = self.attributes.get("update_fraction")
        if isinstance(fraction, FloatAttr):
            return max(1, math.ceil(fraction.value.data * outputs - 1e-6))
        channels = self.attributes.get("update_channels")
        if isinstance(channels, IntegerAttr):
            return channels.value.data
        return None

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        name = parser.parse_symbol_name()
        parser.parse_punctuation(":")
        pos = parser.pos
        type = parser.parse_type()
        if not isinstance(type, TensorType):
            parser.raise_error(f"adir.param: expected a ranked tensor type, got {type}", pos)
        parser.parse_punctuation("=")
        initial_value = parser.parse_attribute()
        attributes = parser.parse_optional_attr_dict()
        op = cls(name.data, type, initial_value)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" : ")
        printer.print_attribute(self.type)
        printer.print_string(" = ")
        printer.print_attribute(self.initial_value)
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)


# Each symbol table's symbols by name, built on a miss. Every load and store verifies by looking
# its parameter up, and `SymbolTable.lookup_symbol` scans the module: a module with n parameters
# would verify in O(n^2). An entry is trusted only while it still names an op of that table.
_SYMBOLS: weakref.WeakKeyDictionary[Operation, dict[str, Operation]] = weakref.WeakKeyDictionary()


def lookup_symbol(op: Operation, symbol: SymbolRefAttr) -> Operation | None:
    """What `SymbolTable.lookup_symbol(op, symbol)` finds, in O(1) while the table is unchanged."""
    table = op
    while table is not None and not table.has_trait(SymbolTable):
        table = table.parent_op()
    if table is None or symbol.nested_references.data:
        return SymbolTable.lookup_symbol(op, symbol)
    name = symbol.root_reference.data
    found = _SYMBOLS.get(table, {}).get(name)
    stale = found is None or found.parent_op() is not table
    if stale or found.get_attr_or_prop("sym_name") != symbol.root_reference:
        symbols: dict[str, Operation] = {}
        for child in table.regions[0].block.ops:
            child_name = child.get_attr_or_prop("sym_name")
            if isinstance(child_name, StringAttr) and child.has_trait(SymbolOpInterface):
                symbols.setdefault(child_name.data, child)
        _SYMBOLS[table] = symbols
        found = symbols.get(name)
    return found


def lookup_param(op: Operation, symbol: SymbolRefAttr) -> ParamOp:
    """The `adir.param` that `op` names, or a VerifyException saying why there is none."""
    found = lookup_symbol(op, symbol)
    name = symbol.root_reference.data
    if found is None:
        raise VerifyException(f"{op.name}: no adir.param named @{name} in the module")
    if not isinstance(found, ParamOp):
        raise VerifyException(f"{op.name}: @{name} is a {found.name}, not an adir.param")
    return found


@irdl_op_definition
class LoadOp(TensorOp):
    """Read a parameter's current value."""

    name = "adir.load"
    param = prop_def(SymbolRefAttr)
    result = result_def(FloatTensor)
    traits = traits_def(
        MemoryReadEffect(),
        ResultsOutsideArena(),
        NoKernel("bufferize reads the parameter's own buffer (a copy only if a store follows)"),
        NotDifferentiable("autodiff seeds the sweep here: a load's adjoint is the gradient"),
    )

    def __init__(self, param: ParamOp | str):
        name = param if isinstance(param, str) else param.sym_name.data
        result_types = None if isinstance(param, str) else [param.type]
        super().__init__([], {"param": SymbolRefAttr(name)}, result_types)

    def infer_result_types(self) -> Sequence[Attribute]:
        return [lookup_param(self, self.param).type]

    def verify_(self) -> None:
        declared = lookup_param(self, self.param).type
        if not is_compatible(self.result.type, declared):
            raise VerifyException(
                f"{self.name}: result type {self.result.type} does not match "
                f"@{self.param.root_reference.data} of type {declared}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        param = parser.parse_symbol_name()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        return cls.create(
            properties={"param": SymbolRefAttr(param)},
            attributes=attributes,
            result_types=[result_type],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.param.root_reference.data)
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class StoreOp(IRDLOperation, HasEvalForm):
    """Overwrite a parameter with a new value (semantically; bufferization makes it in place)."""

    name = "adir.store"
    value = operand_def(FloatTensor)
    param = prop_def(SymbolRefAttr)
    traits = traits_def(
        MemoryWriteEffect(),
        NoKernel("bufferize computes the value into the parameter's buffer, or copies it there"),
        NotDifferentiable("a training step's update; no gradient flows through it"),
    )

    def __init__(self, value: SSAValue, param: ParamOp | str):
        name = param if isinstance(param, str) else param.sym_name.data
        super().__init__(operands=[value], properties={"param": SymbolRefAttr(name)})

    # `adir.store %v, @w attr-dict : type`, parsed by hand: a declarative format would check
    # the operand type while parsing, where a mismatch gets no location.
    @classmethod
    def parse(cls, parser: Parser) -> Self:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        param = parser.parse_symbol_name()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        value_type = parser.parse_type()
        operands = parser.resolve_operands([value], [value_type], pos)
        return cls.create(
            operands=operands,
            properties={"param": SymbolRefAttr(param)},
            attributes=attributes,
        )

    def eval_form(self) -> EvalForm:
        return EvalForm(erase=True)  # inference updates no parameter

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(", ")
        printer.print_symbol_name(self.param.root_reference.data)
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    def verify_(self) -> None:
        declared = lookup_param(self, self.param).type
        if not is_compatible(self.value.type, declared):
            raise VerifyException(
                f"{self.name}: value of type {self.value.type} does not match "
                f"@{self.param.root_reference.data} of type {declared}"
            )


PARAM_OPS = [ParamOp, LoadOp, StoreOp]
