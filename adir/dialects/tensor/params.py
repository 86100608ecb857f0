"""Module-level parameters and the ops that read and write them.

    adir.param @w1 : tensor<32x784xf32> = #adir.kaiming_uniform<a = 2.23606798, seed = 1>
    adir.param @b1 : tensor<32xf32> = dense<0.0> : tensor<32xf32>

    %w = adir.load @w1 : tensor<32x784xf32>
    adir.store %w_new, @w1 : tensor<32x784xf32>

A parameter is a symbol of the module, so a training step is a plain function that loads,
computes and stores. Its initial value is dense data or an initializer (`initializers.py`). It
holds f32, or i8 or i32 with dense data: the int8 weight and int32 bias of a trainable int8
layer (level 2 of quantized training, docs/quantized_training.md).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import Self

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
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
from adir.dialects.tensor.initializers import InitializerAttr, KaimingUniformInit, XavierUniformInit
from adir.dialects.tensor.shapes import AnyTensor, check_size, is_compatible
from adir.dialects.tensor.traits import (
    EvalForm,
    HasEvalForm,
    NoKernel,
    NotDifferentiable,
    ResultsOutsideArena,
)

# What a parameter holds: f32, or the i8 weights and i32 biases of a trainable int8 layer (the
# load's and the store's types are checked against the parameter's).
ParamTensor = AnyTensor


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
        element = self.type.element_type
        integer = isinstance(element, IntegerType) and element.width.data in (8, 32)
        if not (isinstance(element, Float32Type) or integer):
            raise VerifyException(
                f"{name}: the type {self.type} must have f32 elements, or i8 or i32 (the int8 "
                "weights and int32 biases of a trainable int8 layer)"
            )
        init = self.initial_value
        if integer and not isinstance(init, DenseIntOrFPElementsAttr):
            raise VerifyException(f"{name}: an integer parameter needs dense data")
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
    result = result_def(ParamTensor)
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
    value = operand_def(ParamTensor)
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
