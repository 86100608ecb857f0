"""`in-place-depthwise`: mark each int8 depthwise convolution that may write its output over
its input, so that `bufferize` does where the input dies there.

    adir-opt model.mlir -p '...,quantize-frozen-prefix,in-place-depthwise,bufferize,...'

A depthwise convolution of channel multiplier 1 and stride 1 whose output has its input's
shape reads input channel c only for output channel c: its kernel can copy channel c into one
H x W plane and write output channel c over it, so the input and the output share one buffer
plus a plane instead of two buffers (TinyEngine's in-place depthwise convolution: Lin et al.,
"MCUNet", NeurIPS 2020; "On-Device Training Under 256KB Memory", NeurIPS 2022). In
MobileNetV2-w0.35 at 128x128 the first block's depthwise conv reads the stem's 16x64x64 int8
output: 65,536 bytes in and out become 65,536 and a 4,096-byte plane.

The mark is the unit property `in_place` (`InPlaceWhenMarked`): `bufferize` writes over the
input only if it dies at the convolution (a residual block's input that the sum still reads is
not written over), `select-kernels` gives the reference kernel its plane, and CMSIS-NN, whose
kernels write a separate output, is refused for the ops written in place. That trades
CMSIS-NN's speed for memory, so the pass marks a convolution only where it lowers the peak:
while the op whose tensors take the most arena bytes (its non-constant operands and results,
less a result written over an operand that dies there; a marked conv its input and a plane)
is such a convolution, strictly above every other op, it is marked. TinyEngine writes every
depthwise convolution in place; DS-CNN, whose pointwise convolutions hold as many bytes as
its depthwise ones, gets no mark. Not part of `quantize-int8`'s inference path. Run it after
`quantize-int8` or `quantize-frozen-prefix` (and `fuse-expand-depthwise`), before `bufferize`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from adir.dialects.tensor.quantized import QConv2dOp, int_values
from adir.dialects.tensor.traits import InPlaceOperands, ResultsOutsideArena


def may_write_in_place(conv: QConv2dOp) -> bool:
    """Depthwise, stride 1, and the output of the input's shape (channel multiplier 1)."""
    return (
        conv.is_depthwise
        and int_values(conv.stride) == (1, 1)
        and conv.input.type == conv.result.type
    )


def arena_bytes(value: SSAValue) -> int:
    """The bytes `value` takes in the arena: none for the caller's arguments, constants and
    parameters."""
    if not isinstance(value.type, TensorType) or not value.type.has_static_shape():
        return 0
    if not isinstance(value.owner, Operation) or value.owner.has_trait(ResultsOutsideArena):
        return 0
    elements = 1
    for dim in value.type.get_shape():
        elements *= dim
    return elements * value.type.element_type.compile_time_size  # type: ignore[attr-defined]


def footprint(op: Operation) -> int:
    """The arena bytes of the tensors `op` reads and writes: what must be live while it runs.
    A convolution marked `in_place` holds its input's buffer and one H x W plane."""
    if "in_place" in op.properties:
        shape = op.operands[0].type.get_shape()  # type: ignore[attr-defined]
        return arena_bytes(op.operands[0]) + int(shape[1]) * int(shape[2])
    operands = {value for value in op.operands}  # an operand read twice is one buffer
    return sum(arena_bytes(v) for v in operands) + sum(
        arena_bytes(r) for r in op.results if not written_over_an_operand(op, r.index)
    )


def written_over_an_operand(op: Operation, result: int) -> bool:
    """Whether `bufferize` will write result `result` over an operand: one its kernel may
    write over (`InPlaceOperands`), of the result's type, that no other op reads (so it dies
    here; `bufferize` also reuses operands that die later readers first, which this does not
    count: the footprint stays an upper bound)."""
    trait = op.get_trait(InPlaceOperands)
    if trait is None:
        return False
    return any(
        op.operands[index].type == op.results[result].type
        and all(use.operation is op for use in op.operands[index].uses)
        for index in trait.operands_for(op, result)
    )


def mark_at_the_peak(function: func.FuncOp) -> None:
    """Mark the candidates one at a time while the op that holds the most arena bytes is one
    of them (strictly more than any other op: a tie would keep the peak where it is)."""
    ops = list(function.body.block.ops)
    while True:
        sizes = sorted(((footprint(op), index) for index, op in enumerate(ops)), reverse=True)
        if not sizes or (len(sizes) > 1 and sizes[0][0] == sizes[1][0]):
            return
        top = ops[sizes[0][1]]
        if not (isinstance(top, QConv2dOp) and "in_place" not in top.properties):
            return
        if not may_write_in_place(top) or footprint(top) <= arena_bytes(top.input):
            return
        top.properties["in_place"] = UnitAttr()


@dataclass(frozen=True)
class InPlaceDepthwisePass(ModulePass):
    """Mark the int8 depthwise convolutions at the peak to run in place (see the module
    docstring)."""

    name = "in-place-depthwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.body.blocks:
                mark_at_the_peak(function)
