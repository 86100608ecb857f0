"""Dense literals that are checked before they are built, and splats that stay one element.

xDSL 0.74 parses `dense<1.0> : tensor<4000x4000xf32>` into a Python list of 16 million floats
and then packs it (1.4 GB and 5 s for that one literal), and `dense<1.0> :
tensor<2x99999999999xf32>` into a `MemoryError` before anything looks at the type. This
parser checks the type first, against `MAX_DENSE_BYTES` (`adir/limits.py`), with an error
located at the type, and keeps a splat as the bytes of its one element: a
`DenseIntOrFPElementsAttr` whose data is shorter than its shape, as MLIR keeps splats. xDSL
prints it back as a splat (`dense<1.0>`); `dense_to_numpy` and `splat_value`
(`adir/interpreter/arrays.py`) read it; the C backend prints it as a fill.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    AnyDenseElement,
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    RankedStructure,
)
from xdsl.ir import TypeAttribute
from xdsl.parser import Parser

from adir.limits import MAX_DENSE_BYTES

# MLIR's `IntegerType::kMaxWidth`: the widest integer type a parser accepts.
MAX_INTEGER_WIDTH = (1 << 24) - 1


class DenseLiteralParser(Parser):
    """xDSL's parser, with dense literals checked by size and splats kept compact, and numbers
    and integer types too large for their type located errors."""

    def check_dense_size(self, type_: RankedStructure[AnyDenseElement], start: int) -> None:
        """A located error if a dense literal of `type_` would exceed MAX_DENSE_BYTES."""
        shape = type_.get_shape()
        width = type_.element_type.compile_time_size
        count = math.prod(shape)
        if count * width > MAX_DENSE_BYTES:
            self.raise_error(
                f"dense literal of type {type_} is too large: {count} elements of {width} "
                f"bytes; adir takes at most {MAX_DENSE_BYTES} bytes of dense data",
                start,
                self.pos,
            )

    def _parse_dense_literal_type(self) -> RankedStructure[AnyDenseElement]:  # xDSL's hook
        start = self.pos
        type_ = super()._parse_dense_literal_type()
        self.check_dense_size(type_, start)
        return type_

    def parse_dense_int_or_fp_elements_attr(
        self, type: RankedStructure[AnyDenseElement] | None
    ) -> DenseIntOrFPElementsAttr:
        start = self.pos
        if type is not None:
            self.check_dense_size(type, start)
        try:
            splat = self.parse_optional_splat(type)
            if splat is not None:
                return splat
            return super().parse_dense_int_or_fp_elements_attr(type)
        except ValueError as error:  # xDSL's packing: `dense<300> : tensor<2xi8>`
            self.raise_error(f"dense literal: {error}", start, self.pos)

    def _parse_optional_integer_or_float_type(self) -> TypeAttribute | None:  # xDSL's hook
        """xDSL's, with an integer type wider than MLIR's limit (`IntegerType::kMaxWidth`,
        2^24 - 1 bits) a located error: xDSL computes the range of `i99999999999` as Python
        integers of that many bits (a MemoryError)."""
        token = self._current_token
        match = self._builtin_integer_type_regex.match(token.text)
        if match is not None and int(match.group(1)) > MAX_INTEGER_WIDTH:
            self.raise_error(
                f"integer type {token.text} is wider than {MAX_INTEGER_WIDTH} bits (MLIR's limit)",
                token.span.start,
                token.span.end,
            )
        return super()._parse_optional_integer_or_float_type()

    def parse_optional_builtin_int_or_float_attr(self) -> IntegerAttr | FloatAttr | None:
        """xDSL's, with a number its type cannot hold (`1073741824 : f16`, `300 : i8`) as a
        located error: xDSL's packing raises OverflowError or ValueError there."""
        start = self.pos
        try:
            return super().parse_optional_builtin_int_or_float_attr()
        except (OverflowError, ValueError) as error:
            self.raise_error(f"number out of range for its type: {error}", start, self.pos)

    def parse_optional_splat(
        self, type: RankedStructure[AnyDenseElement] | None
    ) -> DenseIntOrFPElementsAttr | None:
        """`<number>` and its type as one element's bytes, or None (and nothing consumed)
        if the literal is not one real number or its type holds one element."""
        start = self.pos
        if self.parse_optional_punctuation("<") is None:
            return None
        scalar = self._parse_optional_bool_int_or_float()
        if scalar is None or self.parse_optional_punctuation(">") is None:
            self._resume_from(start)
            return None
        if type is None:
            self.parse_punctuation(":", " in dense attribute")
            type = self._parse_dense_literal_type()
        element_type = type.element_type
        count = math.prod(type.get_shape())
        if count == 1 or not isinstance(element_type, IntegerType | AnyFloat):
            self._resume_from(start)  # one element, or index or complex: xDSL's own path
            return None
        value, span = scalar
        element = self._TensorLiteralElement(value < 0, value, span)
        return splat(type, element.to_type(self, element_type))


def splat(type_: RankedStructure[AnyDenseElement], value: float | int) -> DenseIntOrFPElementsAttr:
    """`value` everywhere in `type_` (int or float elements), kept as one element's bytes:
    what the parser makes of `dense<value> : type`, so that constants built by passes compare
    equal to parsed ones (cse, the constant pool of bufferize)."""
    element_type = type_.element_type
    if isinstance(element_type, IntegerType):
        value = element_type.get_normalized_value(int(value))
    data = element_type.pack([value])  # type: ignore[arg-type]
    # An empty tensor holds no element; anything larger keeps the one.
    return DenseIntOrFPElementsAttr(type_, BytesAttr(data if math.prod(type_.get_shape()) else b""))


def splat_value(attr: DenseIntOrFPElementsAttr) -> float | int | None:
    """The one value of a dense attribute whose elements are all the same bits (a splat, as
    the parser keeps it: one element's bytes for the whole shape, or expanded), else None.
    Compares bytes, not numbers, so a NaN splat is one and 0.0 and -0.0 differ."""
    data = attr.data.data
    width = attr.get_element_type().compile_time_size
    if len(data) < width:
        return None
    if len(data) > width:
        rows = np.frombuffer(data, dtype=np.uint8).reshape(-1, width)
        if not (rows == rows[0]).all():
            return None
    return attr.get_element_type().unpack(data[:width], 1)[0]  # type: ignore[return-value]
