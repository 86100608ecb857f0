"""When CMSIS-NN's s8 kernels compute an int8 op (`select-kernels{kernels=cmsis-nn}`), and the
scratch each call needs.

Each kernel op of the quantized family that a CMSIS-NN s8 function computes bit for bit uses
it (`adir.kernel = "cmsis-nn"`, `adir.kernel_call = "arm_convolve_wrapper_s8"`); one that none
does keeps its reference kernel and says why (`adir.kernel_refused`). A function that needs a
scratch buffer (its `*_get_buffer_size` for the target's CMSIS-NN build) gets one from the
pass: a `memref.alloc` of that many bytes just before the op, passed as an extra last `outs`
operand (`adir.kernel_scratch` says how many bytes), which `plan-memory` then places in the
arena like any other transient buffer, live only across its call.

    kernel op                      CMSIS-NN                          when
    qconv2d (groups 1)             arm_convolve_wrapper_s8           dilation 1, padding as TFLite's
                                                                     (none for a 1x1 kernel)
    qconv2d (depthwise)            arm_depthwise_conv_wrapper_s8     dilation 1, padding as TFLite's
                                                                     (not written in place)
    qfully_connected               arm_fully_connected_s8            one (per-tensor) multiplier
    qmaxpool2d                     arm_max_pool_s8                   padding as TFLite's
    qavgpool2d                     arm_avgpool_s8                    padding as TFLite's
    qsoftmax                       arm_softmax_s8                    rows of 1 to 511 entries
    qadd                           arm_elementwise_add_s8            always
    qexpand_depthwise              none (the reference kernel)       -
    quantize_qconv2d               none (the reference kernel)       -

The dtype and zero-point checks are TVM's CMSIS-NN partitioner's (int8 data and weights, int32
bias, weight zero point 0, which the quantized family guarantees) plus CMSIS-NN's own argument
ranges (input offset in [-127, 128], output offset in [-128, 127]: every int8 zero point).
"Padding as TFLite's": CMSIS-NN takes only the top and left padding and derives the rest from
the sizes, as TFLite's SAME and VALID padding are, so the bottom (right) padding must be the top
(left) one or one more. Dilation stays on the reference kernels: older CMSIS-NN releases (and
TVM's partitioner) do not take it. Per-channel fully-connected layers stay too (CMSIS-NN's
per-channel variant is recent). A softmax row longer than 511 entries stays too: its sum of
exps may reach 2^28, where arm_softmax_s8 shifts an int32 by 32 bits or more (undefined in C;
adir's kernel gives the exact quotient, 0). arm_elementwise_add_s8 is TFLite's int8 ADD, as
qadd: its offsets (-zero points) are in [-127, 128], its multipliers below 1, its shifts <= 0,
which qadd's verifier guarantees. quantize, dequantize, qlookup, qreshape and
qtranspose have no CMSIS-NN s8 counterpart with the same arithmetic and stay on the reference
kernels. arm_softmax_s8 takes the softmax's integers as they are: num_rows = the product of the
leading dims, row_size = the last, mult = multiplier, shift = the left shift, diff_min.

Scratch sizes follow CMSIS-NN's `*_get_buffer_size` sources for each of its builds (the
target's `cmsis_nn_build`, `targets.py`): `scalar` (no __ARM_FEATURE_DSP, e.g. a Cortex-M0 or
a host build), `dsp` (Cortex-M4/M7/M33) and `mve` (Helium, Cortex-M55/M85), as compiled by GCC
(two of CMSIS-NN's sizes depend on the compiler: the 1x1 fast convolution's DSP buffer exists
only under Arm Compiler 6, and the MVE threshold for turning a one-channel depthwise conv into
a conv is 1 outside it).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import memref
from xdsl.dialects.builtin import IntegerAttr, i8, i64
from xdsl.rewriter import InsertPoint, Rewriter

from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import quantized as q
from adir.passes.select_kernels.rules import Refuse, Use, in_shape, ints, judges, out_shape
from adir.passes.select_kernels.targets import KernelTarget

CH_IN_BLOCK_MVE = 124  # arm_nnsupportfunctions.h
ONE_INPUT_CHANNEL_THRESHOLD_GCC = 1  # CONVERT_DW_CONV_WITH_ONE_INPUT_CH_..._THRESHOLD, not ACC6

# arm_softmax_s8 divides each exp by its row's sum with a shift of 35 - clz(sum) bits; a sum of
# 2^28 or more (Q12.19: 512 entries tied at the maximum) would shift an int32 by 32 or more,
# undefined in C (and different on Arm and x86). 511 entries keep every sum below 2^28.
SOFTMAX_CMSIS_NN_MAX_ROW = 511


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


@judges("cmsis-nn", q.QConv2dOp)
def conv(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    if op.ins[0] is op.outs[0]:
        return Refuse("written over its input (in_place): CMSIS-NN writes a separate output")
    if ints(op, "dilation") != [1, 1]:
        return Refuse("dilation")
    padding = ints(op, "padding")
    if not tflite_padding(padding):
        return Refuse("padding bottom/right not top/left or one more")
    x, w, y = in_shape(op, 0), in_shape(op, 1), out_shape(op)
    if w[1:3] == (1, 1) and any(padding):
        # CMSIS-NN's 1x1 path tells padding only by the top and left, and assumes none.
        return Refuse("1x1 kernel with padding")
    stride = (ints(op, "stride")[0], ints(op, "stride")[1])
    pads = (padding[0], padding[2])
    groups = op.properties["groups"]
    assert isinstance(groups, IntegerAttr)
    build, input, output = target.cmsis_nn_build, Dims(*x), Dims(*y)
    if groups.value.data == 1:
        size = conv_wrapper_size(build, input, Dims(*w), output, stride, pads)
        return Use("arm_convolve_wrapper_s8", size)
    size = depthwise_wrapper_size(build, input, Dims(*w), output, stride, pads)
    return Use("arm_depthwise_conv_wrapper_s8", size)


@judges("cmsis-nn", q.QFullyConnectedOp)
def fully_connected(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    if len(ints(op, "multiplier")) != 1:
        return Refuse("per-channel multipliers")
    size = fully_connected_size(target.cmsis_nn_build, in_shape(op, 1)[0])
    return Use("arm_fully_connected_s8", size)


@judges("cmsis-nn", q.QMaxpool2dOp)
def maxpool(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    if not tflite_padding(ints(op, "padding")):
        return Refuse("padding bottom/right not top/left or one more")
    return Use("arm_max_pool_s8")


@judges("cmsis-nn", q.QAvgpool2dOp)
def avgpool(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    if not tflite_padding(ints(op, "padding")):
        return Refuse("padding bottom/right not top/left or one more")
    return Use("arm_avgpool_s8", avgpool_size(target.cmsis_nn_build, in_shape(op, 0)[3]))


@judges("cmsis-nn", q.QSoftmaxOp)
def softmax(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    x = in_shape(op, 0)
    if x[-1] > SOFTMAX_CMSIS_NN_MAX_ROW:
        return Refuse(f"rows of {x[-1]} entries, over the 511 arm_softmax_s8 takes")
    if 0 in x:
        return Refuse("empty rows")
    return Use("arm_softmax_s8")


@judges("cmsis-nn", q.QAddOp)
def add(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    return Use("arm_elementwise_add_s8")


@judges("cmsis-nn", q.QExpandDepthwiseOp)
def expand_depthwise(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    # CMSIS-NN has no fused kernel, and its depthwise convolutions write a contiguous output,
    # not one channel of an NHWC tensor: the reference kernel computes it (one plane of
    # scratch), its neighbours stay on CMSIS-NN.
    return Refuse("no fused 1x1 expansion + depthwise kernel in CMSIS-NN: reference kernel")


@judges("cmsis-nn", q.QuantizeQConv2dOp)
def quantize_conv(op: KernelOp, target: KernelTarget) -> Use | Refuse:
    # CMSIS-NN's convolutions read an int8 image; none quantizes a float one as it reads it
    # (arm_convolve_s8's im2col copies int8 taps). The reference kernel computes it, so that the
    # int8 image never exists whole; the rest of the prefix stays on CMSIS-NN.
    return Refuse("CMSIS-NN's convolutions read an int8 input, none quantizes a float one")


def add_scratch(kernel: KernelOp, size: int, minimum: int | None = None) -> None:
    """Rebuild `kernel` with a new buffer of `size` bytes as its last `outs` operand; one that
    plan-memory may shrink down to `minimum` bytes if given."""
    alloc = memref.AllocOp.get(i8, None, [size])
    alloc.location = kernel.location
    alloc.memref.name_hint = "scratch"
    Rewriter.insert_op(alloc, InsertPoint.before(kernel))
    properties = {k: v for k, v in kernel.properties.items() if k != "operandSegmentSizes"}
    rebuilt = type(kernel)(list(kernel.ins), [*kernel.outs, alloc.memref], properties)
    rebuilt.attributes.update(kernel.attributes)
    rebuilt.attributes["adir.kernel_scratch"] = IntegerAttr(size, i64)
    if minimum is not None:
        rebuilt.attributes["adir.kernel_scratch_min"] = IntegerAttr(minimum, i64)
    rebuilt.location = kernel.location
    Rewriter.replace_op(kernel, rebuilt)
