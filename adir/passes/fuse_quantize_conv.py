"""`fuse-quantize-conv`: the quantization of a float image, its change to NHWC and the int8
convolution that reads it become one `adir.quantize_qconv2d`, whose kernel quantizes each
input element as it reads it, where that lowers the peak.

    adir-opt model.mlir -p '...,quantize-frozen-prefix,fuse-quantize-conv,bufferize,...'

The int8 prefix of a network starts with `adir.quantize` of the caller's float NCHW image,
`adir.qtranspose` to NHWC and the first `adir.qconv2d`. The float image is the caller's buffer
(outside the arena), but its int8 copy is not: in MobileNetV2-w0.35 at 128x128 the stem reads
the 3x128x128 int8 image (49,152 bytes) while it writes its 16x64x64 output (65,536), the
largest pair of tensors any op of the level-1 training step holds once its blocks are lowered
(`fuse-expand-depthwise`, `in-place-depthwise`). Quantization is per element, so quantizing
each window as the convolution reads it gives the same bits (`QuantizeQConv2dOp`), and the
int8 image never exists: the stem holds its output alone. Inference engines for
microcontrollers read the first layer's input in place of a copy for the same reason.

The pattern: a `adir.qconv2d` of groups 1 whose input is the only use of a `adir.qtranspose`
with permutation [0, 2, 3, 1] of the only use of an `adir.quantize`, whose zero point is the
convolution's input zero point (as the quantizer makes them). CMSIS-NN has no convolution that
reads a float input, so the fused op runs on the reference kernel; the pass fuses a chain only
where it lowers the peak, as `in-place-depthwise` marks its convolutions: while the op whose
tensors take the most arena bytes (strictly above every other op) is one of a chain's three
ops and the fused op would take fewer. DS-CNN's first convolution is not its peak and keeps
CMSIS-NN. Run it after `quantize-int8` or `quantize-frozen-prefix`, before `bufferize`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from adir.dialects.tensor.quantized import (
    QConv2dOp,
    QTransposeOp,
    QuantizeOp,
    QuantizeQConv2dOp,
    int_values,
)
from adir.passes.in_place_depthwise import arena_bytes, footprint

NCHW_TO_NHWC = (0, 2, 3, 1)


@dataclass(frozen=True)
class Chain:
    """quantize -> qtranspose to NHWC -> qconv2d, each the only reader of the one before."""

    quantize: QuantizeOp
    transpose: QTransposeOp
    conv: QConv2dOp

    @property
    def ops(self) -> tuple[Operation, Operation, Operation]:
        return (self.quantize, self.transpose, self.conv)

    def fused_footprint(self) -> int:
        """The arena bytes the fused op holds: the float image (none when it is the caller's)
        and the output; the weights and biases are constants."""
        return arena_bytes(self.quantize.input) + arena_bytes(self.conv.result)


def chain_ending_at(conv: Operation) -> Chain | None:
    """The chain whose convolution is `conv`, if any."""
    if not isinstance(conv, QConv2dOp) or conv.is_depthwise:
        return None
    transpose = conv.input.owner
    if not (
        isinstance(transpose, QTransposeOp)
        and int_values(transpose.permutation) == NCHW_TO_NHWC
        and transpose.result.has_one_use()
    ):
        return None
    quantize = transpose.input.owner
    if not (
        isinstance(quantize, QuantizeOp)
        and quantize.result.has_one_use()
        and quantize.zero_point == conv.input_zero_point
    ):
        return None
    return Chain(quantize, transpose, conv)


def chain_through(op: Operation) -> Chain | None:
    """The chain `op` is one of the three ops of, if any: its convolution is `op` or the
    reader of its only use, or that op's."""
    reach = [op]
    while len(reach) < 3 and len(reach[-1].results) == 1:
        user = reach[-1].results[0].get_user_of_unique_use()
        if user is None:
            break
        reach.append(user)
    for candidate in reach:
        chain = chain_ending_at(candidate)
        if chain is not None and op in chain.ops:
            return chain
    return None


def fuse(chain: Chain) -> None:
    conv = chain.conv
    properties = {
        "input_scale": chain.quantize.scale,
        "input_zero_point": conv.input_zero_point,
        "output_zero_point": conv.output_zero_point,
        "multiplier": conv.multiplier,
        "shift": conv.shift,
        "act_min": conv.act_min,
        "act_max": conv.act_max,
        "stride": conv.stride,
        "padding": conv.padding,
        "dilation": conv.dilation,
    }
    fused = QuantizeQConv2dOp(chain.quantize.input, conv.weight, conv.bias, properties)
    fused.result.name_hint = conv.result.name_hint
    Rewriter.replace_op(conv, fused)
    Rewriter.erase_op(chain.transpose)
    Rewriter.erase_op(chain.quantize)


def fuse_at_the_peak(function: func.FuncOp) -> None:
    """Fuse one chain at a time while the op that holds the most arena bytes (strictly more
    than any other op: a tie would keep the peak where it is) is one of a chain's ops and the
    fused op holds fewer."""
    while True:
        ops = list(function.body.block.ops)
        sizes = sorted(((footprint(op), index) for index, op in enumerate(ops)), reverse=True)
        if not sizes or (len(sizes) > 1 and sizes[0][0] == sizes[1][0]):
            return
        chain = chain_through(ops[sizes[0][1]])
        if chain is None or chain.fused_footprint() >= sizes[0][0]:
            return
        fuse(chain)


@dataclass(frozen=True)
class FuseQuantizeConvPass(ModulePass):
    """Quantize the float image inside the first int8 convolution where that lowers the peak
    (see the module docstring)."""

    name = "fuse-quantize-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.body.blocks:
                fuse_at_the_peak(function)
