"""The quantized family: int8 inference ops with TFLite's quantization arithmetic.

    %q = adir.quantize %x {scale = 0.0235 : f32, zero_point = -128 : i32}
           : tensor<1x784xf32> -> tensor<1x784xi8>
    %h = adir.qfully_connected %q, %w, %b {input_zero_point = -128 : i32,
           output_zero_point = 3 : i32, multiplier = array<i32: 1518500250>,
           shift = array<i32: -7>} : ...
    %y = adir.dequantize %h {scale = 0.11 : f32, zero_point = 3 : i32}

A real value r is held as the int8 q with r = scale * (q - zero_point) (per tensor). Weights
are symmetric (zero point 0), per output channel or per tensor; biases are int32 with scale
input_scale * weight_scale. An op that computes (qconv2d, qfully_connected) accumulates
(x - input_zero_point) * w + bias in int32 and brings the sum to the output's scale with a
fixed-point `multiplier` in [2^30, 2^31) and a power-of-two `shift` per output channel (one
entry: the same for every channel), the integers of TFLite's QuantizeMultiplier, rounding
exactly like TFLite's MultiplyByQuantizedMultiplier and CMSIS-NN's arm_nn_requantize; then adds
output_zero_point and clamps to [act_min, act_max] (a fused ReLU is act_min = zero point).

Images are NHWC, as TFLite and CMSIS-NN hold them: qconv2d's weight is OHWI [O, KH, KW, C]
(groups = 1), or TFLite's depthwise layout [1, KH, KW, O] (groups = C, O a multiple of C).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    I32,
    I64,
    ArrayAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    UnitAttr,
    f32,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import (
    AnyTensor,
    Dim,
    Dims,
    FloatTensor,
    format_shape,
    num_elements,
    require_rank,
    tensor_type,
)
from adir.dialects.tensor.traits import (
    InPlaceOperands,
    InPlaceWhenMarked,
    IntegerAdjoints,
    NotDifferentiable,
    ReferenceScratch,
    WritesResultOver,
)

INT8_MIN, INT8_MAX = -128, 127
MULTIPLIER_MIN, MULTIPLIER_MAX = 2**30, 2**31 - 1  # QuantizeMultiplier's range (or 0)
SHIFT_MIN, SHIFT_MAX = -31, 30


def _i32(value: int) -> IntegerAttr:
    return IntegerAttr(value, i32)


def _array(values: Sequence[int], kind: Attribute = i64) -> DenseArrayBase:
    return DenseArrayBase.from_list(kind, list(values))  # type: ignore[arg-type]


def int_values(array: Attribute) -> tuple[int, ...]:
    assert isinstance(array, DenseArrayBase)
    return tuple(int(v) for v in array.get_values())


class QuantizedOp(TensorOp):
    """An op of the family: checks that its int operands are i8 (or i32 where named). Each op
    says whether it is differentiable: a VJP rule and `IntegerAdjoints` (level 2 of quantized
    training), or `NotDifferentiable`."""

    traits = traits_def(Pure())

    def require_element(self, index: int, width: int, what: str) -> None:
        elem = self.operand_element_type(index)
        if not (isinstance(elem, IntegerType) and elem.width.data == width):
            raise VerifyException(f"{self.name}: operand {what} must be i{width}, got {elem}")

    def int_prop(self, name: str, low: int = INT8_MIN, high: int = INT8_MAX) -> int:
        attr = self.properties[name]
        assert isinstance(attr, IntegerAttr)
        value = attr.value.data
        if not low <= value <= high:
            raise VerifyException(f"{self.name}: {name} {value} is not in [{low}, {high}]")
        return value


# --- quantize and dequantize -------------------------------------------------------------


class ScaleOp(QuantizedOp):
    """quantize and dequantize: one `scale` and `zero_point` for the whole tensor."""

    scale = prop_def(FloatAttr[Float32Type])
    zero_point = prop_def(IntegerAttr[I32])

    def __init__(self, input: SSAValue, scale: float, zero_point: int):
        super().__init__([input], {"scale": FloatAttr(scale, f32), "zero_point": _i32(zero_point)})

    def check_scale(self) -> None:
        scale = self.scale.value.data
        if not 0 < scale < float("inf"):
            raise VerifyException(f"{self.name}: scale must be positive and finite, got {scale}")
        self.int_prop("zero_point")


@irdl_op_definition
class QuantizeOp(ScaleOp):
    """f32 -> i8: `q = clamp(round(x / scale) + zero_point, -128, 127)`, x / scale in f32 and
    rounded half away from zero (TFLite's AffineQuantize)."""

    name = "adir.quantize"
    input = operand_def(FloatTensor)
    result = result_def(AnyTensor)
    traits = traits_def(Pure(), IntegerAdjoints())

    def infer_result_types(self) -> Sequence[Attribute]:
        self.check_scale()
        return [tensor_type(i8, self.operand_shape(0))]


@irdl_op_definition
class DequantizeOp(ScaleOp):
    """i8 -> f32: `x = (q - zero_point) * scale`, the product in f32."""

    name = "adir.dequantize"
    input = operand_def(AnyTensor)
    result = result_def(FloatTensor)
    traits = traits_def(Pure(), IntegerAdjoints())

    def infer_result_types(self) -> Sequence[Attribute]:
        self.check_scale()
        self.require_element(0, 8, "input")
        return [tensor_type(f32, self.operand_shape(0))]


# --- requantizing ops: fully connected and convolution ------------------------------------


class RequantizingOp(QuantizedOp):
    """Accumulates in int32 and requantizes per output channel (see the module docstring)."""

    input_zero_point = prop_def(IntegerAttr[I32])
    output_zero_point = prop_def(IntegerAttr[I32])
    multiplier = prop_def(DenseArrayBase[I32])
    shift = prop_def(DenseArrayBase[I32])
    act_min = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MIN))
    act_max = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MAX))

    @staticmethod
    def requantize_properties(
        input_zero_point: int,
        output_zero_point: int,
        multiplier: Sequence[int],
        shift: Sequence[int],
        act_min: int = INT8_MIN,
        act_max: int = INT8_MAX,
    ) -> dict[str, Attribute]:
        return {
            "input_zero_point": _i32(input_zero_point),
            "output_zero_point": _i32(output_zero_point),
            "multiplier": _array(multiplier, i32),
            "shift": _array(shift, i32),
            "act_min": _i32(act_min),
            "act_max": _i32(act_max),
        }

    def check_requantization(self, out_channels: Dim) -> None:
        self.int_prop("input_zero_point")
        self.int_prop("output_zero_point")
        check_multipliers(self, out_channels)

    def check_bias(self, index: int, out_channels: Dim) -> None:
        self.require_element(index, 32, "bias")
        shape = self.operand_shape(index)
        require_rank(self.name, "bias", shape, (1,))
        if shape is not None and None not in (shape[0], out_channels) and shape[0] != out_channels:
            raise VerifyException(
                f"{self.name}: operand bias has {shape[0]} entries for {out_channels} output "
                "channels"
            )


def check_multipliers(op: QuantizedOp, out_channels: Dim) -> None:
    """act_min <= act_max, and the `multiplier` and `shift` tables of a requantization: one
    pair per output channel or one for all, each TFLite's QuantizeMultiplier range."""
    if op.int_prop("act_min") > op.int_prop("act_max"):
        raise VerifyException(
            f"{op.name}: act_min {op.act_min.value.data} exceeds act_max {op.act_max.value.data}"
        )
    multiplier, shift = int_values(op.multiplier), int_values(op.shift)
    if len(multiplier) != len(shift):
        raise VerifyException(f"{op.name}: {len(multiplier)} multipliers but {len(shift)} shifts")
    if len(multiplier) != 1 and out_channels is not None and len(multiplier) != out_channels:
        raise VerifyException(
            f"{op.name}: {len(multiplier)} multipliers for {out_channels} output channels "
            "(one per channel, or one for all)"
        )
    for m in multiplier:
        if m and not MULTIPLIER_MIN <= m <= MULTIPLIER_MAX:
            raise VerifyException(f"{op.name}: multiplier {m} is not 0 or in [2^30, 2^31 - 1]")
    for s in shift:
        if not SHIFT_MIN <= s <= SHIFT_MAX:
            raise VerifyException(f"{op.name}: shift {s} is not in [-31, 30]")


@irdl_op_definition
class QFullyConnectedOp(RequantizingOp):
    """input [N, K] i8, weight [M, K] i8, bias [M] i32 -> [N, M] i8 (TFLite FULLY_CONNECTED)."""

    name = "adir.qfully_connected"
    traits = traits_def(Pure(), IntegerAdjoints())
    input = operand_def(AnyTensor)
    weight = operand_def(AnyTensor)
    bias = operand_def(AnyTensor)
    result = result_def(AnyTensor)

    def __init__(
        self, input: SSAValue, weight: SSAValue, bias: SSAValue, properties: dict[str, Attribute]
    ):
        super().__init__([input, weight, bias], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        self.require_element(0, 8, "input")
        self.require_element(1, 8, "weight")
        x, w = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "input", x, (2,))
        require_rank(self.name, "weight", w, (2,))
        x, w = x or (None, None), w or (None, None)
        if None not in (x[1], w[1]) and x[1] != w[1]:
            raise VerifyException(
                f"{self.name}: input has {x[1]} features but weight rows have {w[1]}"
            )
        self.check_bias(2, w[0])
        self.check_requantization(w[0])
        return [tensor_type(i8, (x[0], w[0]))]


@irdl_op_definition
class QConv2dOp(RequantizingOp):
    """NHWC conv2d: input [N, H, W, C] i8, weight [O, KH, KW, C] (groups = 1) or depthwise
    [1, KH, KW, O] (groups = C), bias [O] i32 -> [N, H_out, W_out, O] i8. `padding` is (top,
    bottom, left, right); padded taps add nothing (they hold the input's zero point)."""

    name = "adir.qconv2d"
    input = operand_def(AnyTensor)
    weight = operand_def(AnyTensor)
    bias = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    stride = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))
    padding = prop_def(DenseArrayBase[I64], default_value=_array([0, 0, 0, 0]))
    dilation = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))
    groups = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))
    # `in_place` (a depthwise conv with channel multiplier 1 whose output has its input's
    # shape): bufferize may write the output over the input, and the kernel then copies each
    # input channel into a plane of scratch before it writes that output channel.
    in_place = opt_prop_def(UnitAttr)
    traits = traits_def(
        IntegerAdjoints(),
        InPlaceWhenMarked(),
        ReferenceScratch(
            lambda kernel: plane_bytes(kernel.ins[0]) if kernel.ins[0] is kernel.outs[0] else 0
        ),
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue,
        properties: dict[str, Attribute],
    ):
        super().__init__([input, weight, bias], properties)

    def window(self) -> tuple[tuple[int, int], tuple[int, int, int, int], tuple[int, int]]:
        """(stride, padding, dilation), checked."""
        stride, padding, dilation = (
            int_values(self.stride),
            int_values(self.padding),
            int_values(self.dilation),
        )
        if len(stride) != 2 or min(stride) < 1:
            raise VerifyException(f"{self.name}: stride must be 2 positive entries, got {stride}")
        if len(dilation) != 2 or min(dilation) < 1:
            raise VerifyException(
                f"{self.name}: dilation must be 2 positive entries, got {dilation}"
            )
        if len(padding) != 4 or min(padding) < 0:
            raise VerifyException(
                f"{self.name}: padding must be 4 non-negative entries, got {padding}"
            )
        return stride, padding, dilation  # type: ignore[return-value]

    @property
    def is_depthwise(self) -> bool:
        return self.groups.value.data != 1

    def infer_result_types(self) -> Sequence[Attribute]:
        self.require_element(0, 8, "input")
        self.require_element(1, 8, "weight")
        x, w = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "input", x, (4,))
        require_rank(self.name, "weight", w, (4,))
        x, w = x or (None,) * 4, w or (None,) * 4
        groups = self.groups.value.data
        channels = x[3]
        if groups == 1:
            out_channels, kernel, weight_channels = w[0], (w[1], w[2]), w[3]
        else:
            if w[0] not in (None, 1):
                raise VerifyException(
                    f"{self.name}: a depthwise weight is [1, KH, KW, O], got {format_shape(w)}"
                )
            out_channels, kernel, weight_channels = w[3], (w[1], w[2]), 1
            if channels is not None and groups != channels:
                raise VerifyException(
                    f"{self.name}: groups {groups} must be 1 or the input channels {channels} "
                    "(depthwise)"
                )
            if None not in (out_channels, channels) and out_channels % channels:  # type: ignore[operator]
                raise VerifyException(
                    f"{self.name}: depthwise output channels {out_channels} are not a multiple "
                    f"of the input channels {channels}"
                )
        if groups == 1 and None not in (channels, weight_channels) and channels != weight_channels:
            raise VerifyException(
                f"{self.name}: input channels {channels} and weight channels {weight_channels} "
                "do not match"
            )
        self.check_bias(2, out_channels)
        self.check_requantization(out_channels)
        stride, padding, dilation = self.window()
        spatial = [
            window_size(self.name, x[1 + axis], kernel[axis], stride, padding, dilation, axis)
            for axis in (0, 1)
        ]
        shape = (x[0], *spatial, out_channels)
        if self.in_place is not None and not (
            groups != 1 and shape == tuple(x) and tuple(stride) == (1, 1)
        ):
            raise VerifyException(
                f"{self.name}: in_place needs a depthwise convolution of stride 1 whose output "
                f"has its input's shape, got {format_shape(x)} -> {format_shape(shape)} "
                f"(stride {list(stride)})"
            )
        return [tensor_type(i8, shape)]


def plane_bytes(image: SSAValue) -> int:
    """One channel of an NHWC int8 image buffer: H x W bytes."""
    shape = image.type.get_shape()  # type: ignore[attr-defined]
    return int(shape[1]) * int(shape[2])


def window_size(
    op_name: str,
    size: Dim,
    kernel: Dim,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    axis: int,
) -> Dim:
    """The output size along `axis` (0: height, 1: width) of a sliding window."""
    if size is None or kernel is None:
        return None
    extent = dilation[axis] * (kernel - 1) + 1
    padded = size + padding[2 * axis] + padding[2 * axis + 1]
    if extent > padded:
        raise VerifyException(
            f"{op_name}: kernel {('height', 'width')[axis]} {extent} exceeds the padded input "
            f"{padded}"
        )
    return (padded - extent) // stride[axis] + 1


# --- pooling -----------------------------------------------------------------------------


class QPoolOp(QuantizedOp):
    """NHWC pooling [N, H, W, C] i8 -> [N, H_out, W_out, C] i8 over the in-bounds taps of each
    window (padding is never read), clamped to [act_min, act_max]. Input and output share a
    scale and zero point, as TFLite requires of its int8 pools."""

    traits = traits_def(Pure(), NotDifferentiable("integer arithmetic, for inference"))
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    kernel_size = prop_def(DenseArrayBase[I64])
    stride = prop_def(DenseArrayBase[I64])
    padding = prop_def(DenseArrayBase[I64], default_value=_array([0, 0, 0, 0]))
    act_min = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MIN))
    act_max = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MAX))

    def __init__(
        self,
        input: SSAValue,
        kernel_size: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int] = (0, 0, 0, 0),
    ):
        properties = {
            "kernel_size": _array(kernel_size),
            "stride": _array(stride),
            "padding": _array(padding),
        }
        super().__init__([input], properties)

    def window(self) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int, int, int]]:
        kernel, stride, padding = (
            int_values(self.kernel_size),
            int_values(self.stride),
            int_values(self.padding),
        )
        if len(kernel) != 2 or min(kernel) < 1 or len(stride) != 2 or min(stride) < 1:
            raise VerifyException(
                f"{self.name}: kernel_size and stride must be 2 positive entries each"
            )
        if len(padding) != 4 or min(padding) < 0:
            raise VerifyException(
                f"{self.name}: padding must be 4 non-negative entries, got {padding}"
            )
        for index, pad in enumerate(padding):
            if pad >= kernel[index // 2]:
                raise VerifyException(
                    f"{self.name}: padding {pad} leaves a window with no input (kernel {kernel})"
                )
        return kernel, stride, padding  # type: ignore[return-value]

    def infer_result_types(self) -> Sequence[Attribute]:
        self.require_element(0, 8, "input")
        x = self.operand_shape(0)
        require_rank(self.name, "input", x, (4,))
        x = x or (None,) * 4
        if self.int_prop("act_min") > self.int_prop("act_max"):
            raise VerifyException(f"{self.name}: act_min exceeds act_max")
        kernel, stride, padding = self.window()
        spatial = [
            window_size(self.name, x[1 + axis], kernel[axis], stride, padding, (1, 1), axis)
            for axis in (0, 1)
        ]
        return [tensor_type(i8, (x[0], *spatial, x[3]))]


@irdl_op_definition
class QMaxpool2dOp(QPoolOp):
    """The largest of each window's in-bounds taps."""

    name = "adir.qmaxpool2d"


@irdl_op_definition
class QAvgpool2dOp(QPoolOp):
    """The mean of each window's in-bounds taps, an int32 sum divided by their count rounded
    half away from zero (TFLite's and CMSIS-NN's `(sum +- count / 2) / count`)."""

    name = "adir.qavgpool2d"


# --- elementwise sum ---------------------------------------------------------------------


@irdl_op_definition
class QAddOp(QuantizedOp):
    """`lhs + rhs` of two int8 tensors of one shape, each at its own scale, as TFLite's int8 ADD
    and CMSIS-NN's arm_elementwise_add_s8 compute it: each operand less its zero point, times
    2^left_shift, brought to a common scale by its `multiplier` and `shift` (2 max(s1, s2) as
    the unit: both below 1, shifts <= 0); the int32 sum to the output's scale by the output
    `multiplier` and `shift`; plus the output zero point, clamped to [act_min, act_max]. Each
    product is MultiplyByQuantizedMultiplier's (the qconv2d's rounding)."""

    traits = traits_def(Pure(), NotDifferentiable("integer arithmetic, for inference"))
    name = "adir.qadd"
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    lhs_zero_point = prop_def(IntegerAttr[I32])
    rhs_zero_point = prop_def(IntegerAttr[I32])
    output_zero_point = prop_def(IntegerAttr[I32])
    lhs_multiplier = prop_def(IntegerAttr[I32])
    lhs_shift = prop_def(IntegerAttr[I32])
    rhs_multiplier = prop_def(IntegerAttr[I32])
    rhs_shift = prop_def(IntegerAttr[I32])
    multiplier = prop_def(IntegerAttr[I32])
    shift = prop_def(IntegerAttr[I32])
    left_shift = prop_def(IntegerAttr[I32], default_value=_i32(20))
    act_min = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MIN))
    act_max = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MAX))

    def __init__(self, lhs: SSAValue, rhs: SSAValue, properties: dict[str, int]):
        super().__init__([lhs, rhs], {k: _i32(v) for k, v in properties.items()})

    def infer_result_types(self) -> Sequence[Attribute]:
        self.require_element(0, 8, "lhs")
        self.require_element(1, 8, "rhs")
        for name in ("lhs_zero_point", "rhs_zero_point", "output_zero_point"):
            self.int_prop(name)
        if self.int_prop("act_min") > self.int_prop("act_max"):
            raise VerifyException(
                f"{self.name}: act_min {self.act_min.value.data} exceeds act_max "
                f"{self.act_max.value.data}"
            )
        # (q - zp) * 2^left_shift stays within int32 for every int8 q and zero point.
        self.int_prop("left_shift", 0, 22)
        for name in ("lhs_multiplier", "rhs_multiplier", "multiplier"):
            m = self.int_prop(name, 0, MULTIPLIER_MAX)
            if m and m < MULTIPLIER_MIN:
                raise VerifyException(f"{self.name}: {name} {m} is not 0 or in [2^30, 2^31 - 1]")
        for name in ("lhs_shift", "rhs_shift", "shift"):
            self.int_prop(name, SHIFT_MIN, 0)  # multipliers below 1, as TFLite's ADD has them
        lhs, rhs = self.operand_shape(0), self.operand_shape(1)
        if lhs is not None and rhs is not None and lhs != rhs:
            raise VerifyException(
                f"{self.name}: operands of shapes {format_shape(lhs)} and {format_shape(rhs)} "
                "differ (no broadcasting)"
            )
        return [tensor_type(i8, lhs if lhs is not None else rhs)]


# --- a 1x1 expansion fused into the depthwise convolution that reads it ---------------------


@irdl_op_definition
class QExpandDepthwiseOp(QuantizedOp):
    """A 1x1 expansion qconv2d (stride 1, no padding) and the depthwise qconv2d (channel
    multiplier 1) that is its only reader, in one op whose kernel never holds the expanded
    tensor whole: it computes expanded channel e as one [H, W] plane (the kernel's scratch)
    and at once the depthwise output channel e from it, as inference engines for
    microcontrollers lower MobileNetV2's inverted residual blocks (TinyEngine's fused
    pointwise-depthwise kernels: Lin et al., "MCUNet", NeurIPS 2020; "On-Device Training Under
    256KB Memory", NeurIPS 2022). Its result is bit for bit the two ops':

        expanded = qconv2d(input, expand_weight [E, 1, 1, C], expand_bias [E])
                     {input_zero_point, expand_zero_point as output zero point,
                      expand_multiplier, expand_shift, expand_act_min, expand_act_max}
        result   = qconv2d(expanded, depthwise_weight [1, KH, KW, E], depthwise_bias [E])
                     {groups = E, expand_zero_point as input zero point, output_zero_point,
                      multiplier, shift, act_min, act_max, stride, padding, dilation}
    """

    name = "adir.qexpand_depthwise"
    # Its kernel's scratch: one expanded channel, the input's H x W plane, int8 (Pure comes
    # from QuantizedOp).
    traits = traits_def(
        NotDifferentiable("integer arithmetic, for inference"),
        ReferenceScratch(lambda kernel: plane_bytes(kernel.ins[0])),
    )
    input = operand_def(AnyTensor)
    expand_weight = operand_def(AnyTensor)
    expand_bias = operand_def(AnyTensor)
    depthwise_weight = operand_def(AnyTensor)
    depthwise_bias = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    input_zero_point = prop_def(IntegerAttr[I32])
    expand_zero_point = prop_def(IntegerAttr[I32])
    output_zero_point = prop_def(IntegerAttr[I32])
    expand_multiplier = prop_def(DenseArrayBase[I32])
    expand_shift = prop_def(DenseArrayBase[I32])
    expand_act_min = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MIN))
    expand_act_max = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MAX))
    multiplier = prop_def(DenseArrayBase[I32])
    shift = prop_def(DenseArrayBase[I32])
    act_min = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MIN))
    act_max = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MAX))
    stride = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))
    padding = prop_def(DenseArrayBase[I64], default_value=_array([0, 0, 0, 0]))
    dilation = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))

    def __init__(
        self,
        input: SSAValue,
        expand_weight: SSAValue,
        expand_bias: SSAValue,
        depthwise_weight: SSAValue,
        depthwise_bias: SSAValue,
        properties: dict[str, Attribute],
    ):
        operands = [input, expand_weight, expand_bias, depthwise_weight, depthwise_bias]
        super().__init__(operands, properties)

    def check_stage(self, prefix: str, channels: Dim) -> None:
        """The requantization of one stage (`expand_` or the depthwise's, no prefix)."""
        low, high = self.int_prop(f"{prefix}act_min"), self.int_prop(f"{prefix}act_max")
        if low > high:
            raise VerifyException(
                f"{self.name}: {prefix}act_min {low} exceeds {prefix}act_max {high}"
            )
        multiplier = int_values(self.properties[f"{prefix}multiplier"])
        shift = int_values(self.properties[f"{prefix}shift"])
        if len(multiplier) != len(shift):
            raise VerifyException(
                f"{self.name}: {len(multiplier)} {prefix}multipliers but {len(shift)} shifts"
            )
        if len(multiplier) != 1 and channels is not None and len(multiplier) != channels:
            raise VerifyException(
                f"{self.name}: {len(multiplier)} {prefix}multipliers for {channels} channels "
                "(one per channel, or one for all)"
            )
        for m in multiplier:
            if m and not MULTIPLIER_MIN <= m <= MULTIPLIER_MAX:
                raise VerifyException(
                    f"{self.name}: {prefix}multiplier {m} is not 0 or in [2^30, 2^31 - 1]"
                )
        for s in shift:
            if not SHIFT_MIN <= s <= SHIFT_MAX:
                raise VerifyException(f"{self.name}: {prefix}shift {s} is not in [-31, 30]")

    def check_bias(self, index: int, what: str, channels: Dim) -> None:
        self.require_element(index, 32, what)
        shape = self.operand_shape(index)
        require_rank(self.name, what, shape, (1,))
        if shape is not None and None not in (shape[0], channels) and shape[0] != channels:
            raise VerifyException(
                f"{self.name}: operand {what} has {shape[0]} entries for {channels} expanded "
                "channels"
            )

    def window(self) -> tuple[tuple[int, int], tuple[int, int, int, int], tuple[int, int]]:
        """The depthwise convolution's (stride, padding, dilation), checked as qconv2d checks
        them."""
        return QConv2dOp.window(self)  # type: ignore[arg-type]

    def infer_result_types(self) -> Sequence[Attribute]:
        for index, what in ((0, "input"), (1, "expand_weight"), (3, "depthwise_weight")):
            self.require_element(index, 8, what)
        for name in ("input_zero_point", "expand_zero_point", "output_zero_point"):
            self.int_prop(name)
        x, we, wd = self.operand_shape(0), self.operand_shape(1), self.operand_shape(3)
        require_rank(self.name, "input", x, (4,))
        require_rank(self.name, "expand_weight", we, (4,))
        require_rank(self.name, "depthwise_weight", wd, (4,))
        x, we, wd = x or (None,) * 4, we or (None,) * 4, wd or (None,) * 4
        if any(k not in (None, 1) for k in we[1:3]):
            raise VerifyException(
                f"{self.name}: the expansion is a 1x1 convolution [E, 1, 1, C], got "
                f"{format_shape(we)}"
            )
        if None not in (x[3], we[3]) and x[3] != we[3]:
            raise VerifyException(
                f"{self.name}: input channels {x[3]} and expand_weight channels {we[3]} do not "
                "match"
            )
        if wd[0] not in (None, 1):
            raise VerifyException(
                f"{self.name}: a depthwise weight is [1, KH, KW, E], got {format_shape(wd)}"
            )
        expanded = we[0] if we[0] is not None else wd[3]
        if None not in (we[0], wd[3]) and we[0] != wd[3]:
            raise VerifyException(
                f"{self.name}: {we[0]} expanded channels but the depthwise weight has {wd[3]} "
                "(channel multiplier 1)"
            )
        self.check_bias(2, "expand_bias", expanded)
        self.check_bias(4, "depthwise_bias", expanded)
        self.check_stage("expand_", expanded)
        self.check_stage("", expanded)
        stride, padding, dilation = self.window()
        spatial = [
            window_size(self.name, x[1 + axis], wd[1 + axis], stride, padding, dilation, axis)
            for axis in (0, 1)
        ]
        return [tensor_type(i8, (x[0], *spatial, expanded))]


# --- the float image quantized on the fly into the first convolution ------------------------


@irdl_op_definition
class QuantizeQConv2dOp(RequantizingOp):
    """A quantize of a float NCHW image, its layout change to NHWC and the int8 convolution
    that reads it, in one op whose kernel quantizes each input element as it reads it, so that
    the int8 image never exists whole. Quantization is per element, so the result is bit for
    bit the three ops':

        q      = quantize(input [N, C, H, W] f32) {scale = input_scale,
                                                   zero_point = input_zero_point}
        nhwc   = qtranspose(q) {permutation = [0, 2, 3, 1]}
        result = qconv2d(nhwc, weight [O, KH, KW, C], bias [O]) {input_zero_point,
                   output_zero_point, multiplier, shift, act_min, act_max, stride, padding,
                   dilation}   (groups 1)

    A network's first convolution reads the caller's image: in MobileNetV2-w0.35 at 128x128
    the int8 image (49,152 bytes) is what the stem's 16x64x64 output shares the peak with
    (`fuse-quantize-conv`, docs/quantized_training.md). The reference kernel quantizes one
    window (KH x KW x C bytes of scratch) per output pixel and reuses it for every output
    channel."""

    name = "adir.quantize_qconv2d"
    traits = traits_def(
        NotDifferentiable("integer arithmetic on a frozen prefix's input, for inference"),
        ReferenceScratch(lambda kernel: num_elements(kernel.ins[1].type.get_shape()[1:])),
    )
    input = operand_def(FloatTensor)
    weight = operand_def(AnyTensor)
    bias = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    input_scale = prop_def(FloatAttr[Float32Type])
    stride = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))
    padding = prop_def(DenseArrayBase[I64], default_value=_array([0, 0, 0, 0]))
    dilation = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue,
        properties: dict[str, Attribute],
    ):
        super().__init__([input, weight, bias], properties)

    def window(self) -> tuple[tuple[int, int], tuple[int, int, int, int], tuple[int, int]]:
        """(stride, padding, dilation), checked as qconv2d checks them."""
        return QConv2dOp.window(self)  # type: ignore[arg-type]

    def infer_result_types(self) -> Sequence[Attribute]:
        scale = self.input_scale.value.data
        if not 0 < scale < float("inf"):
            raise VerifyException(
                f"{self.name}: input_scale must be positive and finite, got {scale}"
            )
        self.require_element(1, 8, "weight")
        x, w = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "input", x, (4,))
        require_rank(self.name, "weight", w, (4,))
        x, w = x or (None,) * 4, w or (None,) * 4
        if None not in (x[1], w[3]) and x[1] != w[3]:
            raise VerifyException(
                f"{self.name}: input channels {x[1]} (NCHW) and weight channels {w[3]} "
                "(OHWI) do not match"
            )
        self.check_bias(2, w[0])
        self.check_requantization(w[0])
        stride, padding, dilation = self.window()
        spatial = [
            window_size(self.name, x[2 + axis], w[1 + axis], stride, padding, dilation, axis)
            for axis in (0, 1)
        ]
        return [tensor_type(i8, (x[0], *spatial, w[0]))]


# --- elementwise by table, and layout ------------------------------------------------------


@irdl_op_definition
class QLookupOp(QuantizedOp):
    """`y = table[x + 128]`: any function of one int8, tabulated by the quantizer (TFLite's
    int8 LOGISTIC and TANH are such tables)."""

    traits = traits_def(Pure(), NotDifferentiable("integer arithmetic, for inference"))
    name = "adir.qlookup"
    input = operand_def(AnyTensor)
    table = operand_def(AnyTensor)
    result = result_def(AnyTensor)

    def __init__(self, input: SSAValue, table: SSAValue):
        super().__init__([input, table])

    def infer_result_types(self) -> Sequence[Attribute]:
        self.require_element(0, 8, "input")
        self.require_element(1, 8, "table")
        table = self.operand_shape(1)
        if table is not None and table != (256,):
            raise VerifyException(
                f"{self.name}: table must be tensor<256xi8>, got {format_shape(table)}"
            )
        return [tensor_type(i8, self.operand_shape(0))]


@irdl_op_definition
class QReshapeOp(QuantizedOp):
    """The same int8 elements in row-major order, in `shape`."""

    name = "adir.qreshape"
    traits = traits_def(Pure(), IntegerAdjoints())
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    shape = prop_def(DenseArrayBase[I64])

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        super().__init__([input], {"shape": _array(shape)})

    def infer_result_types(self) -> Sequence[Attribute]:
        self.require_element(0, 8, "input")
        shape: Dims = int_values(self.shape)
        x = self.operand_shape(0)
        if x is not None and None not in x:
            if num_elements(x) != num_elements(shape):
                raise VerifyException(
                    f"{self.name}: cannot reshape {format_shape(x)} to {format_shape(shape)}"
                )
        return [tensor_type(i8, shape)]


@irdl_op_definition
class QTransposeOp(QuantizedOp):
    """Dimension i of the result is dimension permutation[i] of the input (a layout change
    between NCHW and NHWC)."""

    name = "adir.qtranspose"
    traits = traits_def(Pure(), IntegerAdjoints())
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    permutation = prop_def(DenseArrayBase[I64])

    def __init__(self, input: SSAValue, permutation: Sequence[int]):
        super().__init__([input], {"permutation": _array(permutation)})

    def infer_result_types(self) -> Sequence[Attribute]:
        self.require_element(0, 8, "input")
        permutation = int_values(self.permutation)
        x = self.operand_shape(0)
        if sorted(permutation) != list(range(len(permutation))):
            raise VerifyException(f"{self.name}: {list(permutation)} is not a permutation")
        if x is None:
            return [tensor_type(i8, None)]
        if len(x) != len(permutation):
            raise VerifyException(
                f"{self.name}: permutation of {len(permutation)} dims for a rank-{len(x)} input"
            )
        return [tensor_type(i8, tuple(x[p] for p in permutation))]


# --- softmax ---------------------------------------------------------------------------------

SOFTMAX_SCALE, SOFTMAX_ZERO_POINT = 1.0 / 256, -128  # TFLite's fixed int8 softmax output
SOFTMAX_MAX_ROW = 4095  # the int32 sum of 2^19-scaled exps holds 4095 of them (ACCUM_BITS 12)


@irdl_op_definition
class QSoftmaxOp(QuantizedOp):
    """Softmax along the last axis, TFLite's int8 SOFTMAX bit for bit (and CMSIS-NN's
    arm_softmax_s8 on rows of up to 511 entries, beyond which its C shifts an int32 by 32 or
    more); the output has TFLite's fixed quantization, scale 1/256 and zero point -128.

    The integers are what TFLite derives from beta and the input scale: `multiplier` and
    `shift` (a left shift, >= 0) quantize beta * input_scale * 2^26 (PreprocessSoftmaxScaling
    with 5 integer bits), and an entry whose difference to its row's maximum is below
    `diff_min` (-CalculateInputRadius) counts as exp = 0. adir/interpreter/quantized.py works
    the fixed-point exp and reciprocal through."""

    traits = traits_def(Pure(), NotDifferentiable("integer arithmetic, for inference"))
    name = "adir.qsoftmax"
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    multiplier = prop_def(IntegerAttr[I32])
    shift = prop_def(IntegerAttr[I32])
    diff_min = prop_def(IntegerAttr[I32])

    def __init__(self, input: SSAValue, multiplier: int, shift: int, diff_min: int):
        properties = {
            "multiplier": _i32(multiplier),
            "shift": _i32(shift),
            "diff_min": _i32(diff_min),
        }
        super().__init__([input], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        self.require_element(0, 8, "input")
        self.int_prop("multiplier", MULTIPLIER_MIN, MULTIPLIER_MAX)
        shift = self.int_prop("shift", 0, SHIFT_MAX)
        diff_min = self.int_prop("diff_min", -(2**31), 0)
        # diff * 2^shift is an int32 for every difference the kernel scales (diff >= diff_min,
        # and int8 differences are >= -255).
        if min(-diff_min, 255) << shift > 2**31:
            raise VerifyException(
                f"{self.name}: diff_min {diff_min} with shift {shift} overflows int32 "
                "(diff * 2^shift)"
            )
        x = self.operand_shape(0)
        if x is not None:
            if not x:
                raise VerifyException(f"{self.name}: operand input must have rank 1 or more")
            if x[-1] is not None and x[-1] > SOFTMAX_MAX_ROW:
                raise VerifyException(
                    f"{self.name}: rows of {x[-1]} entries exceed {SOFTMAX_MAX_ROW} (the int32 "
                    "sum of exps, 12 integer bits, would overflow)"
                )
        return [tensor_type(i8, x)]


# --- level 2 of quantized training: the gradient and the update of a trainable int8 layer -----


def real_multipliers(multiplier: Sequence[int], shift: Sequence[int]) -> list[float]:
    """The reals M * 2^(s - 31) that the fixed-point (multiplier, shift) pairs stand for."""
    return [m * 2.0 ** (s - 31) for m, s in zip(multiplier, shift, strict=True)]


@irdl_op_definition
class QRequantizeGradOp(QuantizedOp):
    """The gradient of a requantizing op's int32 accumulator from the gradient of its int8
    output, both in integer units (level 2 of quantized training, docs/quantized_training.md):

        acc_grad[..., c] = grad[..., c] * float32(M[c] * 2^(s[c] - 31))  if act_min < y < act_max
                         = 0                                               otherwise

    `output` is the int8 result y of the qconv2d or qfully_connected (channels last: NHWC or
    [N, M]) and `multiplier`, `shift`, `act_min`, `act_max` are that op's: rounding passes the
    gradient straight through (the requantization's derivative is its real multiplier), and the
    clamp passes it where the output is strictly inside it (a fused ReLU or ReLU6, as PyTorch's
    relu and hardtanh do at their kinks; a saturated output gets none)."""

    name = "adir.qrequantize_grad"
    output = operand_def(AnyTensor)
    grad = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    multiplier = prop_def(DenseArrayBase[I32])
    shift = prop_def(DenseArrayBase[I32])
    act_min = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MIN))
    act_max = prop_def(IntegerAttr[I32], default_value=_i32(INT8_MAX))
    # Its kernel reads grad[k] just before it writes result[k]: the gradient of the int8 output
    # may become the accumulator's in place (one activation-sized f32 buffer, not two).
    traits = traits_def(
        Pure(),
        NotDifferentiable("part of a gradient, in integer units"),
        WritesResultOver(("result", "grad")),
    )

    def __init__(
        self,
        output: SSAValue,
        grad: SSAValue,
        multiplier: Sequence[int],
        shift: Sequence[int],
        act_min: int = INT8_MIN,
        act_max: int = INT8_MAX,
    ):
        properties = {
            "multiplier": _array(multiplier, i32),
            "shift": _array(shift, i32),
            "act_min": _i32(act_min),
            "act_max": _i32(act_max),
        }
        super().__init__([output, grad], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        self.require_element(0, 8, "output")
        y, g = self.operand_shape(0), self.operand_shape(1)
        if y is not None and g is not None and y != g:
            raise VerifyException(
                f"{self.name}: output {format_shape(y)} and grad {format_shape(g)} differ"
            )
        shape = y if y is not None else g
        if shape is not None and not shape:
            raise VerifyException(f"{self.name}: operand output must have rank 1 or more")
        channels = None if shape is None else shape[-1]
        check_multipliers(self, channels)
        return [tensor_type(f32, shape)]


@irdl_op_definition
class QGradInputOp(QuantizedOp):
    """The adjoint of an int8 conv's or fully-connected layer's input, in integer units, from
    the adjoint of its accumulator, reading the int8 weight as its integers (level 2 of
    quantized training, docs/quantized_training.md): no float copy of the weight exists.

        conv (rank 4): grad [N, OH, OW, O] f32, weight [O, KH, KW, C] or depthwise
            [1, KH, KW, O] i8 -> [N, H, W, C] f32, (H, W) = `input_size`:
            out[n, ih, iw, c] = sum grad[n, oh, ow, o] * weight[o, kh, kw, c] over the taps
            that read (ih, iw) (`qconv2d`'s window: stride, padding, dilation)
        fully connected (rank 2): grad [N, O], weight [O, I] -> [N, I] = grad @ weight

    The transposed convolution of `conv2d_grad_input`, NHWC, on the weight's integers (its
    zero point is 0: weights are symmetric)."""

    name = "adir.qgrad_input"
    grad = operand_def(FloatTensor)
    weight = operand_def(AnyTensor)
    result = result_def(FloatTensor)
    stride = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))
    padding = prop_def(DenseArrayBase[I64], default_value=_array([0, 0, 0, 0]))
    dilation = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))
    groups = prop_def(IntegerAttr[I64], default_value=IntegerAttr(1, i64))
    input_size = prop_def(DenseArrayBase[I64], default_value=_array([1, 1]))
    traits = traits_def(Pure(), NotDifferentiable("a gradient op: autodiff emits it"))

    def __init__(
        self, grad: SSAValue, weight: SSAValue, properties: dict[str, Attribute] | None = None
    ):
        super().__init__([grad, weight], properties or {})

    window = QConv2dOp.window

    @property
    def is_depthwise(self) -> bool:
        return self.groups.value.data != 1

    def infer_result_types(self) -> Sequence[Attribute]:
        self.require_element(1, 8, "weight")
        g, w = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "grad", g, (2, 4))
        require_rank(self.name, "weight", w, (2, 4))
        if g is not None and w is not None and len(g) != len(w):
            raise VerifyException(
                f"{self.name}: grad {format_shape(g)} and weight {format_shape(w)} differ in rank"
            )
        rank = len(g) if g is not None else len(w) if w is not None else None
        if rank is None:
            return [tensor_type(f32, None)]
        g, w = g or (None,) * rank, w or (None,) * rank
        out_channels = w[3] if rank == 4 and self.is_depthwise else w[0]
        if None not in (g[-1], out_channels) and g[-1] != out_channels:
            raise VerifyException(
                f"{self.name}: grad has {g[-1]} channels, the weight {out_channels} outputs"
            )
        if rank == 2:
            return [tensor_type(f32, (g[0], w[1]))]
        stride, padding, dilation = self.window()
        size = int_values(self.input_size)
        if len(size) != 2 or min(size) < 1:
            raise VerifyException(f"{self.name}: input_size must be 2 positive entries")
        kernel = w[1:3]
        if None not in kernel:
            out = tuple(
                (size[a] + padding[2 * a] + padding[2 * a + 1] - dilation[a] * (kernel[a] - 1) - 1)
                // stride[a]
                + 1
                for a in range(2)
            )
            if None not in g[1:3] and tuple(g[1:3]) != out:
                raise VerifyException(
                    f"{self.name}: a {format_shape(tuple(size))} input gives a "
                    f"{format_shape(out)} output, but grad is {format_shape(g)}"
                )
        groups = self.groups.value.data
        if self.is_depthwise:
            if w[0] not in (None, 1):
                raise VerifyException(
                    f"{self.name}: a depthwise weight is [1, KH, KW, O], got {format_shape(w)}"
                )
            if out_channels is not None and out_channels % groups:
                raise VerifyException(
                    f"{self.name}: depthwise output channels {out_channels} are not a multiple "
                    f"of the groups {groups}"
                )
            channels = groups
        else:
            channels = w[3]
        return [tensor_type(f32, (g[0], *size, channels))]


@dataclass(frozen=True)
class UpdatesParamInPlace(InPlaceOperands):
    """The new int8 weight (or int32 bias) may be written over the old one (operand 0)."""

    def operands_for(self, op: Operation, result: int) -> Sequence[int]:
        return (0,)


@irdl_op_definition
class QSgdUpdateOp(QuantizedOp):
    """One SGD step on an int8 weight or an int32 bias (level 2 of quantized training, TTE's
    update of the integers themselves; docs/quantized_training.md):

        step  = float32(float32(lr * grad) * step_scale[c])
        delta = round(step)                        halves away from zero, within int32 (nan: 0)
        new   = clamp(param - delta, lo, hi)       i8: [-127, 127], i32: [-2^31, 2^31 - 1]

    `grad` is the gradient with respect to the integers (in integer units), `c` the index along
    `axis` (the output channel; one `step_scale` entry: the same for all). Quantization-aware
    scaling (QAS) is `step_scale = s^-2`, s the scale of the integers (s_W per channel for a
    weight, s_x s_W for a bias); `step_scale = 1` is plain SGD on the integers. The step is
    rounded before it is subtracted, so an int32 bias far beyond 2^24 is updated exactly."""

    name = "adir.qsgd_update"
    param = operand_def(AnyTensor)
    grad = operand_def(FloatTensor)
    lr = operand_def(FloatTensor)
    new_param = result_def(AnyTensor)
    # An array of FloatAttr, not a dense array: xDSL prints a float that 7 digits do not
    # round-trip (QAS's scales often) in hex, which it reads back only as a FloatAttr.
    step_scale = prop_def(ArrayAttr[FloatAttr[Float32Type]])
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    traits = traits_def(
        Pure(),
        UpdatesParamInPlace(),
        NotDifferentiable("a step of the optimizer, after the gradient"),
    )

    def __init__(
        self,
        param: SSAValue,
        grad: SSAValue,
        lr: SSAValue,
        step_scale: Sequence[float],
        axis: int = 0,
    ):
        properties = {
            "step_scale": ArrayAttr([FloatAttr(float(v), f32) for v in step_scale]),
            "axis": IntegerAttr(axis, i64),
        }
        super().__init__([param, grad, lr], properties)

    def bounds(self) -> tuple[int, int]:
        """[lo, hi] of the updated integers: symmetric int8 weights, or the int32 range."""
        elem = self.operand_element_type(0)
        if isinstance(elem, IntegerType) and elem.width.data == 8:
            return -INT8_MAX, INT8_MAX
        return -(2**31), 2**31 - 1

    def scales(self) -> tuple[float, ...]:
        return tuple(float(v.value.data) for v in self.step_scale.data)

    def infer_result_types(self) -> Sequence[Attribute]:
        elem = self.operand_element_type(0)
        if not (isinstance(elem, IntegerType) and elem.width.data in (8, 32)):
            raise VerifyException(f"{self.name}: operand param must be i8 or i32, got {elem}")
        w, g, lr = self.operand_shape(0), self.operand_shape(1), self.operand_shape(2)
        if w is not None and g is not None and w != g:
            raise VerifyException(
                f"{self.name}: param {format_shape(w)} and grad {format_shape(g)} differ"
            )
        if lr is not None and lr != ():
            raise VerifyException(f"{self.name}: operand lr must be a scalar tensor<f32>")
        axis = self.axis.value.data
        if w is not None and not 0 <= axis < max(len(w), 1):
            raise VerifyException(f"{self.name}: axis {axis} is not an axis of {format_shape(w)}")
        scales = self.scales()
        if not all(math.isfinite(v) and v >= 0 for v in scales):
            raise VerifyException(f"{self.name}: step_scale must be finite and >= 0")
        channels = None if w is None or not w else w[axis]
        if len(scales) != 1 and (channels is None or len(scales) != channels):
            raise VerifyException(
                f"{self.name}: {len(scales)} step_scale entries for {channels} entries along "
                f"axis {axis} (one per entry, or one for all)"
            )
        return [self.operands[0].type]


QUANTIZED_OPS = [
    QuantizeOp,
    DequantizeOp,
    QFullyConnectedOp,
    QConv2dOp,
    QMaxpool2dOp,
    QAvgpool2dOp,
    QAddOp,
    QLookupOp,
    QReshapeOp,
    QTransposeOp,
    QSoftmaxOp,
    QExpandDepthwiseOp,
    QRequantizeGradOp,
    QGradInputOp,
    QSgdUpdateOp,
    QuantizeQConv2dOp,
]
