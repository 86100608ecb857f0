"""`fuse-expand-depthwise`: an int8 1x1 expansion and the depthwise convolution that reads it
become one `adir.qexpand_depthwise`, whose kernel never holds the expanded tensor whole.

    adir-opt model.mlir -p '...,quantize-frozen-prefix,fuse-expand-depthwise,bufferize,...'

In MobileNetV2's inverted residual blocks a 1x1 convolution multiplies the channels by six
and a 3x3 depthwise convolution reads the result: the expanded tensor is the largest
activation of the network (48x64x64 int8 in the second block of MobileNetV2-w0.35 at
128x128, 196,608 bytes). Inference engines for microcontrollers compute it one channel at a
time into the depthwise convolution (TinyEngine: Lin et al., "MCUNet", NeurIPS 2020, and the
Tiny Training Engine of "On-Device Training Under 256KB Memory", NeurIPS 2022): the fused
kernel needs one H x W plane of scratch instead of the H x W x E tensor, and gives the same
bits (adir/dialects/tensor/quantized.py, `QExpandDepthwiseOp`).

The pattern: a depthwise `adir.qconv2d` of channel multiplier 1 whose input is the only use of
a `adir.qconv2d` with a 1x1 kernel, stride 1, no padding and dilation 1 and more output than
input channels (an expansion: a pointwise conv that keeps the channel count, as DS-CNN's, would
save nothing), the expansion's output zero point the depthwise's input zero point (as the
quantizer makes them). Run it after
`quantize-int8` or `quantize-frozen-prefix` and before `bufferize`; ops on float stay as they
are.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from adir.dialects.tensor.quantized import QConv2dOp, QExpandDepthwiseOp, int_values

EXPANSION_WINDOW = ([1, 1], [0, 0, 0, 0], [1, 1])  # stride, padding, dilation of a plain 1x1


def is_expansion(conv: QConv2dOp) -> bool:
    """A 1x1 convolution (groups 1) that reads each input pixel once and has more output
    channels than input channels: fusing one with as many or fewer (DS-CNN's pointwise
    convolutions) would save nothing and add a plane."""
    weight = conv.operand_shape(1)
    window = [list(int_values(p)) for p in (conv.stride, conv.padding, conv.dilation)]
    return (
        not conv.is_depthwise
        and weight is not None
        and tuple(weight[1:3]) == (1, 1)
        and weight[0] is not None
        and weight[3] is not None
        and weight[0] > weight[3]
        and tuple(window) == EXPANSION_WINDOW
    )


def is_plain_depthwise(conv: QConv2dOp) -> bool:
    """A depthwise convolution with one output channel per input channel."""
    x, weight = conv.operand_shape(0), conv.operand_shape(1)
    return conv.is_depthwise and x is not None and weight is not None and weight[3] == x[3]


class FuseExpandDepthwise(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, depthwise: QConv2dOp, rewriter: PatternRewriter) -> None:
        expansion = depthwise.input.owner
        if not (
            isinstance(expansion, QConv2dOp)
            and is_plain_depthwise(depthwise)
            and is_expansion(expansion)
            and expansion.result.has_one_use()
            and expansion.output_zero_point == depthwise.input_zero_point
        ):
            return
        properties: dict[str, Attribute] = {
            "input_zero_point": expansion.input_zero_point,
            "expand_zero_point": expansion.output_zero_point,
            "output_zero_point": depthwise.output_zero_point,
            "expand_multiplier": expansion.multiplier,
            "expand_shift": expansion.shift,
            "expand_act_min": expansion.act_min,
            "expand_act_max": expansion.act_max,
            "multiplier": depthwise.multiplier,
            "shift": depthwise.shift,
            "act_min": depthwise.act_min,
            "act_max": depthwise.act_max,
            "stride": depthwise.stride,
            "padding": depthwise.padding,
            "dilation": depthwise.dilation,
        }
        fused = QExpandDepthwiseOp(
            expansion.input,
            expansion.weight,
            expansion.bias,
            depthwise.weight,
            depthwise.bias,
            properties,
        )
        fused.result.name_hint = depthwise.result.name_hint
        rewriter.replace(depthwise, fused)
        rewriter.erase(expansion)


@dataclass(frozen=True)
class FuseExpandDepthwisePass(ModulePass):
    """Fuse each int8 1x1 expansion into the depthwise convolution that reads it (see the
    module docstring)."""

    name = "fuse-expand-depthwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseExpandDepthwise(), apply_recursively=False).rewrite_module(op)
