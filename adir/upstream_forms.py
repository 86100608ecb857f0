"""The custom forms that upstream MLIR prints for ops of adir's IR and xDSL 0.74 cannot parse.

`mlir-opt` prints a `memref.global` (bufferize's constants) in its custom form:

    memref.global "private" constant @__constant_1 : memref<f32> = dense<1.000000e-03>

which xDSL's `memref.global` lacks ("Operation memref.global does not have a custom
format"). `LocatedParser` (adir/context.py) parses the custom forms listed in `CUSTOM_FORMS`
with the classes here; the ops they build are xDSL's own, which print in generic form as
before. Every other op of adir's IR that `mlir-opt` prints (builtin, func, arith, memref, and
adir's ops in generic form) xDSL parses already: test/python/test_upstream_mlir.py round-trips
every example through `mlir-opt` at every stage of the pipeline.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, StringAttr, TensorType, UnitAttr
from xdsl.ir import Operation
from xdsl.parser import Parser


class GlobalCustomForm(memref.GlobalOp):
    """Parses MLIR's `memref.global` custom form into xDSL's `memref.GlobalOp`:

    memref.global ("visibility")? (constant)? @name : memref-type (= uninitialized | = attr)?
        attr-dict
    """

    @classmethod
    def parse(cls, parser: Parser) -> Operation:
        visibility = parser.parse_optional_str_literal()
        constant = UnitAttr() if parser.parse_optional_keyword("constant") else None
        name = parser.parse_symbol_name()
        parser.parse_punctuation(":")
        at = parser.pos
        memref_type = parser.parse_type()
        if not isinstance(memref_type, MemRefType):
            parser.raise_error("memref.global: expected a memref type", at, parser.pos)
        if parser.parse_optional_punctuation("=") is None:
            # MLIR's declaration of a global defined elsewhere; xDSL's op needs an initial value.
            parser.raise_error(
                "memref.global: a global with no initial value (a declaration) is not supported",
                at,
                parser.pos,
            )
        if parser.parse_optional_keyword("uninitialized"):
            initial_value = UnitAttr()
        elif parser.parse_optional_keyword("dense"):
            # MLIR elides the literal's type: the tensor of the memref's shape and elements.
            tensor = TensorType(memref_type.element_type, memref_type.get_shape())
            initial_value = parser.parse_dense_int_or_fp_elements_attr(tensor)
        else:
            parser.raise_error("memref.global: expected `dense<...>` or `uninitialized`")
        attributes = parser.parse_optional_attr_dict()
        alignment = attributes.pop("alignment", None)
        return memref.GlobalOp.build(
            properties={
                "sym_name": name,
                "sym_visibility": StringAttr(visibility or "public"),
                "type": memref_type,
                "initial_value": initial_value,
                "constant": constant,
                "alignment": alignment,
            },
            attributes=attributes,
        )


CUSTOM_FORMS: dict[str, type[Operation]] = {"memref.global": GlobalCustomForm}
