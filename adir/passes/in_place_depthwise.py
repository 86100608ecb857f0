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
kernels write a separate output, is refused for the ops written in place: the pass trades
CMSIS-NN's speed for memory on those convolutions, so it is not part of `quantize-int8`'s
inference path. Run it after `quantize-int8` or `quantize-frozen-prefix`, before
`bufferize`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr

from xdsl.passes import ModulePass

from adir.dialects.tensor.quantized import QConv2dOp, int_values


def may_write_in_place(conv: QConv2dOp) -> bool:
    """Depthwise, stride 1, and the output of the input's shape (channel multiplier 1)."""
    return (
        conv.is_depthwise
        and int_values(conv.stride) == (1, 1)
        and conv.input.type == conv.result.type
    )


@dataclass(frozen=True)
class InPlaceDepthwisePass(ModulePass):
    """Mark the int8 depthwise convolutions that may run in place (see the module docstring)."""

    name = "in-place-depthwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for conv in op.walk():
            if isinstance(conv, QConv2dOp) and may_write_in_place(conv):
                conv.properties["in_place"] = UnitAttr()
