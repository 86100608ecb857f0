"""`lower-to-cmsis-nn`: pick the int8 kernels that CMSIS-NN computes, and plan their scratch.

    adir-opt m.mlir -p 'derive-predict,quantize-int8,bufferize,
                       lower-to-cmsis-nn{target=dsp},plan-memory'

Runs on the kernel level, after `bufferize` and before `plan-memory`. Each kernel op of the
quantized family that a CMSIS-NN s8 function computes bit for bit gets the function's name
(`adir.cmsis_nn = "arm_convolve_wrapper_s8"`); one that none does keeps its reference kernel and
says why (`adir.cmsis_nn_refused = "..."`). Both show in the IR and in the C comments. A
function that needs a scratch buffer (its `*_get_buffer_size` for the `target`) gets one: a
`memref.alloc` of that many bytes just before the op, passed as an extra last `outs` operand
(`adir.cmsis_nn_scratch` says how many bytes), which `plan-memory` then places in the arena
like any other transient buffer, live only across its call.

    kernel op                      CMSIS-NN                          when
    qconv2d (groups 1)             arm_convolve_wrapper_s8           dilation 1, padding as TFLite's
                                                                     (none for a 1x1 kernel)
    qconv2d (depthwise)            arm_depthwise_conv_wrapper_s8     dilation 1, padding as TFLite's
    qfully_connected               arm_fully_connected_s8            one (per-tensor) multiplier
    qmaxpool2d                     arm_max_pool_s8                   padding as TFLite's
    qavgpool2d                     arm_avgpool_s8                    padding as TFLite's
    qsoftmax                       arm_softmax_s8                    rows of 1 to 511 entries

The dtype and zero-point checks are TVM's CMSIS-NN partitioner's (int8 data and weights, int32
bias, weight zero point 0, which the quantized family guarantees) plus CMSIS-NN's own argument
ranges (input offset in [-127, 128], output offset in [-128, 127]: every int8 zero point).
"Padding as TFLite's": CMSIS-NN takes only the top and left padding and derives the rest from
the sizes, as TFLite's SAME and VALID padding are, so the bottom (right) padding must be the top
(left) one or one more. Dilation stays on the reference kernels: older CMSIS-NN releases (and
TVM's partitioner) do not take it. Per-channel fully-connected layers stay too (CMSIS-NN's
per-channel variant is recent). A softmax row longer than 511 entries stays too: its sum of
exps may reach 2^28, where arm_softmax_s8 shifts an int32 by 32 bits or more (undefined in C;
adir's kernel gives the exact quotient, 0). quantize, dequantize, qlookup, qreshape and
qtranspose have no CMSIS-NN s8 counterpart with the same arithmetic and stay on the reference
kernels. arm_softmax_s8 takes the softmax's integers as they are: num_rows = the product of the
leading dims, row_size = the last, mult = multiplier, shift = the left shift, diff_min.

Scratch sizes follow CMSIS-NN's `*_get_buffer_size` sources for each target: `scalar` (no
__ARM_FEATURE_DSP, e.g. a Cortex-M0 or a host build), `dsp` (Cortex-M4/M7/M33) and `mve`
(Helium, Cortex-M55/M85), as compiled by GCC (two of CMSIS-NN's sizes depend on the compiler:
the 1x1 fast convolution's DSP buffer exists only under Arm Compiler 6, and the MVE threshold
for turning a one-channel depthwise conv into a conv is 1 outside it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i8,
    i64,
)
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from adir.diagnostics import OpError
from adir.dialects.kernel import KERNELS, KernelOp
from adir.dialects.tensor import quantized as q

TARGETS = ("scalar", "dsp", "mve")
CH_IN_BLOCK_MVE = 124  # arm_nnsupportfunctions.h
ONE_INPUT_CHANNEL_THRESHOLD_GCC = 1  # CONVERT_DW_CONV_WITH_ONE_INPUT_CH_..._THRESHOLD, not ACC6

# arm_softmax_s8 divides each exp by its row's sum with a shift of 35 - clz(sum) bits; a sum of
# 2^28 or more (Q12.19: 512 entries tied at the maximum) would shift an int32 by 32 or more,
# undefined in C (and different on Arm and x86). 511 entries keep every sum below 2^28.
SOFTMAX_CMSIS_NN_MAX_ROW = 511


def ints(op: Operation, prop: str) -> list[int]:
    array = op.properties[prop]
    assert isinstance(array, DenseArrayBase)
    return [int(v) for v in array.get_values()]


def shape(op: KernelOp, index: int) -> tuple[int, ...]:
    return tuple(op.operands[index].type.get_shape())  # type: ignore[attr-defined]


def tflite_padding(padding: list[int]) -> bool:
    """Bottom = top or top + 1, right = left or left + 1."""
    top, bottom, left, right = padding
    return bottom - top in (0, 1) and right - left in (0, 1)


@dataclass(frozen=True)
class Dims:
    """CMSIS-NN's cmsis_nn_dims {n, h, w, c}."""

    n: int
    h: int
    w: int
    c: int


def conv_s8_size(target: str, input: Dims, filter: Dims) -> int:
    """arm_convolve_s8_get_buffer_size (_mve)."""
    columns = input.c * filter.w * filter.h
    if target == "mve":
        return 4 * ((columns + 15) // 16) * 16
    aligned = columns + (4 - columns % 4) % 4
    return 2 * aligned * 2  # two int16 im2col columns


def conv_1_x_n_size_mve(input: Dims, filter: Dims, output: Dims, stride_w: int, pad_w: int) -> int:
    """arm_convolve_1_x_n_s8_get_buffer_size_mve."""
    total_pad = (output.w - 1) * stride_w + filter.w - input.w
    asym_pad = total_pad % 2
    right_pads = max(1, (pad_w + asym_pad + stride_w - 1) // stride_w) if pad_w + asym_pad else 0
    left_pads = max(1, (pad_w + stride_w - 1) // stride_w) if pad_w else 0
    no_pads = max(output.w - (right_pads + left_pads), 0)
    if right_pads + no_pads + left_pads != output.w:
        return conv_s8_size("mve", input, filter)
    pad_left = pad_w * input.c
    pad_right = right_pads * input.c if asym_pad else pad_left
    left_elements = filter.w * input.c
    right_elements = left_elements - input.c
    return max(left_elements + pad_left, right_elements + pad_right)


def conv_wrapper_size(
    target: str,
    input: Dims,
    filter: Dims,
    output: Dims,
    stride: tuple[int, int],
    padding: tuple[int, int],
) -> int:
    """arm_convolve_wrapper_s8_get_buffer_size(_dsp, _mve) with dilation 1; stride and padding
    are (h, w), the padding top and left."""
    if padding == (0, 0) and (filter.h, filter.w) == (1, 1) and input.c == filter.c:
        return 0  # 1x1: no buffer, or (fast, DSP) 4 * C bytes under Arm Compiler 6 only
    if input.h == 1 and filter.h == 1 and (stride[1] * input.c) % 4 == 0 and input.c == filter.c:
        if target == "mve":
            return conv_1_x_n_size_mve(input, filter, output, stride[1], padding[1])
        return conv_s8_size(target, input, filter)
    return conv_s8_size(target, input, filter)


def depthwise_wrapper_size(
    target: str,
    input: Dims,
    filter: Dims,
    output: Dims,
    stride: tuple[int, int],
    padding: tuple[int, int],
) -> int:
    """arm_depthwise_conv_wrapper_s8_get_buffer_size(_dsp, _mve) with dilation 1; the filter is
    [1, KH, KW, C_OUT]."""
    size = 0
    plain = input.c == output.c and input.n == 1
    if target == "mve":
        if plain:
            size = 4 * CH_IN_BLOCK_MVE * filter.w * filter.h
        if input.c == 1 and output.c > ONE_INPUT_CHANNEL_THRESHOLD_GCC:
            # The conv it becomes, on a [C_OUT, KH, KW, 1] filter, plus the reordered weights.
            conv_filter = Dims(filter.c, filter.h, filter.w, filter.n)
            as_conv = conv_wrapper_size("mve", input, conv_filter, output, stride, padding)
            size = max(size, as_conv + filter.c * filter.h * filter.w * filter.n)
        return size
    if plain and target == "dsp":
        if (filter.h, filter.w) == (3, 3) and max(padding) <= 1:
            return 0  # arm_depthwise_conv_3x3_s8
        return input.c * filter.w * filter.h * 2
    return 0


def fully_connected_size(target: str, out_features: int) -> int:
    """arm_fully_connected_s8_get_buffer_size: the MVE kernel reads the weights' row sums."""
    return out_features * 4 if target == "mve" else 0


def avgpool_size(target: str, channels: int) -> int:
    """arm_avgpool_s8_get_buffer_size: an int32 sum per channel on DSP cores."""
    return channels * 4 if target == "dsp" else 0


Choice = tuple[str | None, int, str]
"""(the CMSIS-NN function or None, its scratch bytes, why not)."""
ChoiceRule = Callable[[KernelOp, str], Choice]
CMSIS_NN_RULES: dict[type[KernelOp], ChoiceRule] = {}
"""The CMSIS-NN rule of each kernel op that has a CMSIS-NN counterpart, keyed by its class."""

Rule = TypeVar("Rule", bound=ChoiceRule)


def chooses(tensor_op: type[q.QuantizedOp]) -> Callable[[Rule], Rule]:
    """Register the decorated rule for the kernels of `tensor_op`."""

    def register(rule: Rule) -> Rule:
        CMSIS_NN_RULES[KERNELS[tensor_op]] = rule
        return rule

    return register


def choose(op: KernelOp, target: str) -> Choice:
    """(CMSIS-NN function or None, scratch bytes, why not)."""
    rule = CMSIS_NN_RULES.get(type(op))
    return (None, 0, "") if rule is None else rule(op, target)


@chooses(q.QConv2dOp)
def conv(op: KernelOp, target: str) -> Choice:
    if ints(op, "dilation") != [1, 1]:
        return None, 0, "dilation"
    padding = ints(op, "padding")
    if not tflite_padding(padding):
        return None, 0, "padding bottom/right not top/left or one more"
    x, w, y = shape(op, 0), shape(op, 1), shape(op, 3)
    if w[1:3] == (1, 1) and any(padding):
        # CMSIS-NN's 1x1 path tells padding only by the top and left, and assumes none.
        return None, 0, "1x1 kernel with padding"
    stride = tuple(ints(op, "stride"))
    pads = (padding[0], padding[2])
    groups = op.properties["groups"]
    assert isinstance(groups, IntegerAttr)
    input, output = Dims(*x), Dims(*y)
    if groups.value.data == 1:
        size = conv_wrapper_size(target, input, Dims(*w), output, stride, pads)  # type: ignore[arg-type]
        return "arm_convolve_wrapper_s8", size, ""
    size = depthwise_wrapper_size(target, input, Dims(*w), output, stride, pads)  # type: ignore[arg-type]
    return "arm_depthwise_conv_wrapper_s8", size, ""


@chooses(q.QFullyConnectedOp)
def fully_connected(op: KernelOp, target: str) -> Choice:
    if len(ints(op, "multiplier")) != 1:
        return None, 0, "per-channel multipliers"
    return "arm_fully_connected_s8", fully_connected_size(target, shape(op, 1)[0]), ""


@chooses(q.QMaxpool2dOp)
def maxpool(op: KernelOp, target: str) -> Choice:
    if not tflite_padding(ints(op, "padding")):
        return None, 0, "padding bottom/right not top/left or one more"
    return "arm_max_pool_s8", 0, ""


@chooses(q.QAvgpool2dOp)
def avgpool(op: KernelOp, target: str) -> Choice:
    if not tflite_padding(ints(op, "padding")):
        return None, 0, "padding bottom/right not top/left or one more"
    return "arm_avgpool_s8", avgpool_size(target, shape(op, 0)[3]), ""


@chooses(q.QSoftmaxOp)
def softmax(op: KernelOp, target: str) -> Choice:
    x = shape(op, 0)
    if x[-1] > SOFTMAX_CMSIS_NN_MAX_ROW:
        return None, 0, f"rows of {x[-1]} entries, over the 511 arm_softmax_s8 takes"
    if 0 in x:
        return None, 0, "empty rows"
    return "arm_softmax_s8", 0, ""


def add_scratch(kernel: KernelOp, size: int) -> None:
    """Rebuild `kernel` with a new buffer of `size` bytes as its last `outs` operand."""
    alloc = memref.AllocOp.get(i8, None, [size])
    alloc.location = kernel.location
    alloc.memref.name_hint = "scratch"
    Rewriter.insert_op(alloc, InsertPoint.before(kernel))
    properties = {k: v for k, v in kernel.properties.items() if k != "operandSegmentSizes"}
    rebuilt = type(kernel)(list(kernel.ins), [*kernel.outs, alloc.memref], properties)
    rebuilt.attributes.update(kernel.attributes)
    rebuilt.attributes["adir.cmsis_nn_scratch"] = IntegerAttr(size, i64)
    rebuilt.location = kernel.location
    Rewriter.replace_op(kernel, rebuilt)


@dataclass(frozen=True)
class LowerToCmsisNnPass(ModulePass):
    """Mark the int8 kernels CMSIS-NN computes and give them scratch (see the module
    docstring)."""

    name = "lower-to-cmsis-nn"

    target: str = "scalar"  # scalar, dsp or mve: which *_get_buffer_size to follow

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.target not in TARGETS:
            raise OpError(
                op,
                f"lower-to-cmsis-nn: target={self.target!r} is not one of {', '.join(TARGETS)}",
            )
        kernels = [inner for inner in op.walk() if isinstance(inner, KernelOp)]
        if any("adir.cmsis_nn" in inner.attributes for inner in kernels):
            raise OpError(op, "lower-to-cmsis-nn: the module was lowered already")
        for kernel in kernels:
            function, scratch, refused = choose(kernel, self.target)
            if refused:
                kernel.attributes["adir.cmsis_nn_refused"] = StringAttr(refused)
            if function is None:
                continue
            kernel.attributes["adir.cmsis_nn"] = StringAttr(function)
            if scratch:
                add_scratch(kernel, scratch)
        op.attributes["adir.cmsis_nn_target"] = StringAttr(self.target)
