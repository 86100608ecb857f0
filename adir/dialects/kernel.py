"""The kernel level (DESIGN.md level 2): destination-passing ops on memrefs, one per C kernel.

    adir_kernel.matmul ins(%x, %w : memref<1x784xf32>, memref<32x784xf32>)
                       outs(%h : memref<1x32xf32>) {transpose_b}
    %w = adir_kernel.param @w1 : memref<32x784xf32>

Every op of the tensor dialect has its kernel twin, derived here from its definition: the same
properties, its operands as `ins`, its results as `outs` buffers the kernel writes. A kernel
may write an `outs` buffer that is also one of its `ins` (in place) only where the bufferizer
decided it is legal. `adir_kernel.param` names the persistent buffer of an `adir.param`.

This dialect builds on the tensor dialect's op definitions (a sideways import between two
dialects of the same compiler; it imports nothing else of adir).
"""

from __future__ import annotations

import functools
from typing import Self

from xdsl.dialects.builtin import DenseArrayBase, MemRefType, SymbolRefAttr, i32
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    OptPropertyDef,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, NoMemoryEffect

from adir.dialects.tensor import ADIR_OPS
from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.traits import NoKernel


class KernelOp(IRDLOperation):
    """A kernel: reads `ins`, writes `outs` (`KERNELS` maps each tensor op to its kernel)."""

    ins = var_operand_def(MemRefType)
    outs = var_operand_def(MemRefType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "(`ins` `(` $ins^ `:` type($ins) `)`)? `outs` `(` $outs `:` type($outs) `)` attr-dict"
    )

    def __init__(
        self,
        ins: list[SSAValue],
        outs: list[SSAValue],
        properties: dict[str, Attribute] | None = None,
    ):
        # What IRDL's generic constructor would build, without its per-op type checks and
        # segment-size attribute (the verifier checks the op; bufferization builds one kernel
        # per tensor op, and the generic path made it the slowest pass).
        properties = {k: v for k, v in (properties or {}).items() if v is not None}
        properties[AttrSizedOperandSegments.attribute_name] = operand_segments(len(ins), len(outs))
        Operation.__init__(self, operands=[*ins, *outs], properties=properties)


@functools.lru_cache(maxsize=64)
def operand_segments(ins: int, outs: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, [ins, outs])


def kernel_twin(tensor_op: type[TensorOp]) -> type[KernelOp]:
    """The kernel op of a tensor op: `adir.X` -> `adir_kernel.X`, with X's properties."""
    fields: dict[str, object] = {
        "name": "adir_kernel." + tensor_op.name.split(".", 1)[1],
        "__doc__": f"The kernel of `{tensor_op.name}`: {tensor_op.__doc__ or ''}".strip(),
        "__module__": __name__,
    }
    for name, definition in tensor_op.get_irdl_definition().properties.items():
        make = opt_prop_def if isinstance(definition, OptPropertyDef) else prop_def
        fields[name] = make(definition.constr, definition.default_value)
    cls = type(tensor_op.__name__.removesuffix("Op") + "Kernel", (KernelOp,), fields)
    return irdl_op_definition(cls)


# Every tensor op has a kernel, except those marked `NoKernel` (a load is the parameter's own
# buffer; the parameter declarations and stores are not tensor ops).
KERNELS: dict[type[TensorOp], type[KernelOp]] = {
    op: kernel_twin(op)
    for op in ADIR_OPS
    if issubclass(op, TensorOp) and not op.has_trait(NoKernel)
}


@irdl_op_definition
class ParamBufferOp(IRDLOperation):
    """The persistent buffer of a parameter (or optimizer state): no copy, the storage itself."""

    name = "adir_kernel.param"
    param = prop_def(SymbolRefAttr)
    buffer = result_def(MemRefType)
    traits = traits_def(NoMemoryEffect())

    def __init__(self, param: str, type_: MemRefType):
        super().__init__(properties={"param": SymbolRefAttr(param)}, result_types=[type_])

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        param = parser.parse_symbol_name()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        attributes = parser.parse_optional_attr_dict()
        op = cls(param.data, type_)  # type: ignore[arg-type]
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.param.root_reference.data)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)


AdirKernel = Dialect("adir_kernel", [ParamBufferOp, *KERNELS.values()], [])
