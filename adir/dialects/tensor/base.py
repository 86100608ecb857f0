"""The base of every adir tensor op: one shape rule, one verifier, one textual format.

Each op states its shape rule once, in `infer_result_types`. The verifier checks the declared
result types against it, and the `infer-shapes` pass uses it to fill in result types written as
`tensor<*xf32>` or with `?` dims. A rule raises `VerifyException` with a message that names the
op, the operand and the numbers ("adir.matmul: inner dimensions 784 and 32 do not match").

The shared custom format, in the spirit of MLIR's elementwise ops:

    %r = adir.add %a, %b : tensor<2x3xf32>                          all types equal
    %r = adir.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
    %r = adir.matmul %a, %b {transpose_b} : tensor<1x8xf32>, tensor<4x8xf32> -> tensor<1x4xf32>

Properties print in the attribute dictionary (a property equal to its default is left out),
so an op needs no format of its own unless it has no operands.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Self

from xdsl.dialects.builtin import UnrankedTensorType, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.shapes import Shape, check_size, element_type, is_compatible, shape_of


class TensorOp(IRDLOperation, ABC):
    """An op of the adir tensor dialect: value semantics on builtin tensors."""

    def __init__(
        self,
        operands: Sequence[SSAValue],
        properties: Mapping[str, Attribute] | None = None,
        result_types: Sequence[Attribute] | None = None,
    ):
        """Build the op; without `result_types`, the results get the types its shape rule
        infers (raising `VerifyException` if the operands do not fit together)."""
        num_results = len(self.get_irdl_definition().results)
        super().__init__(
            operands=operands,
            result_types=result_types or [UnrankedTensorType(f32)] * num_results,
            properties=dict(properties or {}),
        )
        if result_types is None:
            for result, inferred in zip(self.results, self.infer_result_types(), strict=True):
                Rewriter.replace_value_with_new_type(result, inferred)

    @abstractmethod
    def infer_result_types(self) -> Sequence[Attribute]:
        """The result types that the operand types and properties imply.

        Unknown parts of the operands stay unknown in the results; a contradiction in what is
        known raises `VerifyException`.
        """

    def operand_shape(self, index: int) -> Shape:
        return shape_of(self.operands[index].type)

    def operand_element_type(self, index: int) -> Attribute:
        return element_type(self.operands[index].type)

    def verify_(self) -> None:
        for index, value in enumerate([*self.operands, *self.results]):
            kind = "operand" if index < len(self.operands) else "result"
            check_size(value.type, f"{self.name}: {kind}")
        inferred = self.infer_result_types()
        for index, (result, expected) in enumerate(zip(self.results, inferred, strict=True)):
            if not is_compatible(result.type, expected):
                which = "result" if len(self.results) == 1 else f"result #{index}"
                raise VerifyException(
                    f"{self.name}: {which} type {result.type} does not match the type "
                    f"{expected} implied by its operands and properties"
                )

    # --- the shared textual format -------------------------------------------------------

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        unresolved = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        )
        unresolved = unresolved or []
        entries = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types_pos = parser.pos
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        num_results = len(cls.get_irdl_definition().results)
        if parser.parse_optional_punctuation("->") is not None:
            operand_types = types
            if num_results == 1:
                result_types = [parser.parse_type()]
            else:
                result_types = parser.parse_comma_separated_list(
                    parser.Delimiter.PAREN, parser.parse_type
                )
        elif len(types) == 1:
            operand_types = types * len(unresolved)
            result_types = types * num_results
        else:
            parser.raise_error(
                f"{cls.name}: expected one type for all operands and the result, or the "
                "operand types, '->' and the result type",
                types_pos,
                parser.pos,
            )
        operands = parser.resolve_operands(unresolved, operand_types, types_pos)
        prop_names = cls.get_irdl_definition().properties
        properties = {k: v for k, v in entries.items() if k in prop_names}
        attributes = {k: v for k, v in entries.items() if k not in prop_names}
        return cls.create(
            operands=operands,
            result_types=result_types,
            properties=properties,
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        if self.operands:
            printer.print_string(" ")
            printer.print_list(self.operands, printer.print_ssa_value)
        defaults = {
            name: prop.default_value for name, prop in self.get_irdl_definition().properties.items()
        }
        entries = {
            name: value for name, value in self.properties.items() if value != defaults.get(name)
        }
        entries.update(self.attributes)
        if entries:
            printer.print_string(" ")
            printer.print_attr_dict(entries)
        printer.print_string(" : ")
        operand_types = [o.type for o in self.operands]
        result_types = [r.type for r in self.results]
        if len(result_types) == 1 and all(t == result_types[0] for t in operand_types):
            printer.print_attribute(result_types[0])
            return
        printer.print_list(operand_types, printer.print_attribute)
        printer.print_string(" -> ")
        if len(result_types) == 1:
            printer.print_attribute(result_types[0])
        else:
            printer.print_string("(")
            printer.print_list(result_types, printer.print_attribute)
            printer.print_string(")")
