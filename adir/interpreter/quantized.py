"""numpy semantics of the quantized family (adir/dialects/tensor/quantized.py).

Integer results are exact, so the C kernels (runtime adir_quantized.c) and CMSIS-NN must give
the same bits. The fixed-point arithmetic follows TFLite (`tensorflow/lite/kernels/internal/
common.h`: QuantizeMultiplier, MultiplyByQuantizedMultiplier in its double-rounding form) and
gemmlowp, which CMSIS-NN's `arm_nn_requantize` reproduces:

    requantize(x, M, s) = rounding_divide_by_pot(sat_rounding_doubling_high_mul(x * 2^max(s, 0), M),
                                                 max(-s, 0))

`sat_rounding_doubling_high_mul(a, b)` is the high 32 bits of 2ab rounded half away from zero
(`(ab + (ab >= 0 ? 2^30 : 1 - 2^30)) / 2^31`, C's truncating division), and
`rounding_divide_by_pot(x, e)` is x / 2^e rounded half away from zero. Accumulators are int64
here (no overflow on the way); the C kernels accumulate in int32, which holds every sum of the
examples' layers (at most K * 255 * 127 plus the bias).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import quantized as q
from adir.dialects.tensor.conv_and_pool import Window2d
from adir.interpreter.conv_and_pool import conv2d_grad_input
from adir.interpreter.family import FamilyFunctions


def round_half_away(x: np.ndarray) -> np.ndarray:
    """C's roundf / std::round: halves away from zero (numpy's round goes to even). Exact for
    float32 inputs: x +- 0.5 is computed in float64, which holds it exactly."""
    wide = np.asarray(x, np.float64)
    return np.where(wide >= 0, np.floor(wide + 0.5), np.ceil(wide - 0.5))


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplier: (M, s) with real = M * 2^(s - 31), M in [2^30, 2^31)."""
    if real == 0.0:
        return 0, 0
    fraction, shift = math.frexp(real)
    fixed = math.floor(fraction * 2**31 + 0.5)  # std::round of a positive number
    if fixed == 2**31:
        fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if shift > q.SHIFT_MAX:
        raise ValueError(f"scale {real} is too large to requantize (2^{shift})")
    return fixed, shift


def requantize(acc: np.ndarray, multiplier: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """MultiplyByQuantizedMultiplier elementwise (multiplier and shift broadcast along the
    last axis); int64 in, int64 out."""
    acc = np.asarray(acc, np.int64)
    multiplier = np.asarray(multiplier, np.int64)
    shift = np.asarray(shift, np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    # x * 2^left wraps in 32 bits, as the C kernel's shift through uint32_t does (TFLite and
    # CMSIS-NN leave the overflow undefined; the quantizer's multipliers are below 1 anyway).
    x = ((acc << left) + 2**31) % 2**32 - 2**31
    product = x * multiplier
    nudge = np.where(product >= 0, 1 << 30, 1 - (1 << 30))
    total = product + nudge
    high = np.sign(total) * (np.abs(total) >> 31)  # C's division truncates toward zero
    mask = (np.int64(1) << right) - 1
    remainder = high & mask
    threshold = (mask >> 1) + (high < 0)
    return (high >> right) + (remainder > threshold)


# --- softmax: TFLite's int8 SOFTMAX, as CMSIS-NN's arm_softmax_s8 computes it -----------------

SCALED_DIFF_INTEGER_BITS = 5  # kScaledDiffIntegerBits: the scaled differences are Q5.26
ACCUM_BITS = 12  # the sum of exps is Q12.19
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def softmax_parameters(input_scale: float, beta: float = 1.0) -> tuple[int, int, int]:
    """(multiplier, left shift, diff_min) as TFLite prepares an int8 softmax:
    PreprocessSoftmaxScaling (beta * input_scale * 2^26, capped at 2^31 - 1, as
    QuantizeMultiplierGreaterThanOne: QuantizeMultiplier, whose shift saturates at 30) and
    diff_min = -CalculateInputRadius(5, left shift, 31)."""
    real = min(beta * input_scale * 2.0 ** (31 - SCALED_DIFF_INTEGER_BITS), 2.0**31 - 1.0)
    if not real > 1.0:
        raise ValueError(
            f"softmax input scale {input_scale} (beta {beta}) is not above 2^-26: TFLite's "
            "QuantizeMultiplierGreaterThanOne needs beta * scale * 2^26 > 1"
        )
    fraction, shift = math.frexp(real)
    fixed = math.floor(fraction * 2**31 + 0.5)
    if fixed == 2**31:
        fixed //= 2
        shift += 1
    if shift > q.SHIFT_MAX:  # QuantizeMultiplier saturates what a single rounding cannot shift
        fixed, shift = INT32_MAX, q.SHIFT_MAX
    radius = math.floor(
        (2**SCALED_DIFF_INTEGER_BITS - 1) * 2.0 ** (31 - SCALED_DIFF_INTEGER_BITS) / 2.0**shift
    )
    return fixed, shift, -radius


def wrap32(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, np.int64) + 2**31) % 2**32 - 2**31


def doubling_high_mul(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """arm_nn_doubling_high_mult (gemmlowp's SaturatingRoundingDoublingHighMul): the high 32
    bits of 2ab, the nudge chosen by the operands' signs, C's truncating division; the one
    overflow, INT32_MIN * INT32_MIN, saturates."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    nudge = np.where((a < 0) ^ (b < 0), 1 - (1 << 30), 1 << 30)
    total = a * b + nudge
    high = np.sign(total) * (np.abs(total) >> 31)
    return np.where((a == b) & (a == INT32_MIN), INT32_MAX, high)


def divide_by_pot(x: np.ndarray, exponent: np.ndarray | int) -> np.ndarray:
    """arm_nn_divide_by_power_of_two (gemmlowp's RoundingDivideByPOT): x / 2^exponent, halves
    away from zero."""
    x = np.asarray(x, np.int64)
    exponent = np.asarray(exponent, np.int64)
    mask = (np.int64(1) << exponent) - 1
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + ((x & mask) > threshold)


def mul_by_pot(x: np.ndarray, exponent: int) -> np.ndarray:
    """arm_nn_mult_by_power_of_two: x * 2^exponent, saturated."""
    x = np.asarray(x, np.int64)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << exponent))


# exp(-2^k / 2^5) in Q0.31 for k = -2 .. 4 (the bits 24 .. 30 of a Q5.26 argument's remainder)
EXP_BARRELS = (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)


def exp_on_negative_values(val: np.ndarray) -> np.ndarray:
    """arm_nn_exp_on_negative_values (gemmlowp's exp_on_negative_values with 5 integer bits):
    exp of a Q5.26 value <= 0, in Q0.31. The argument mod 1/4 (in [-1/4, 0)) goes through a
    4th-order Taylor polynomial around -1/8, then each set bit of the rest multiplies by its
    exp(-2^k); exp(0) is 2^31 - 1."""
    val = np.asarray(val, np.int64)
    mod_minus_quarter = (val & ((1 << 24) - 1)) - (1 << 24)
    remainder = mod_minus_quarter - val
    x = (mod_minus_quarter << 5) + (1 << 28)
    x2 = doubling_high_mul(x, x)
    x3 = doubling_high_mul(x2, x)
    x4_over_4 = divide_by_pot(doubling_high_mul(x2, x2), 2)
    poly = divide_by_pot(wrap32(doubling_high_mul(wrap32(x4_over_4 + x3), 715827883) + x2), 1)
    result = wrap32(1895147668 + doubling_high_mul(1895147668, wrap32(x + poly)))
    for bit, factor in enumerate(EXP_BARRELS, start=24):
        result = np.where(remainder & (1 << bit), doubling_high_mul(result, factor), result)
    return np.where(val == 0, INT32_MAX, result)


def one_over_one_plus_x(val: np.ndarray) -> np.ndarray:
    """arm_nn_one_over_one_plus_x_for_x_in_0_1 (gemmlowp's one_over_one_plus_x_for_x_in_0_1):
    1 / (1 + x) for x in [0, 1) in Q0.31, as Q2.29 times 2: three Newton-Raphson steps from
    48/17 - 32/17 * d, d = (1 + x) / 2."""
    val = np.asarray(val, np.int64)
    total = val + INT32_MAX
    half = (total + 1) // 2  # total >= 0: C's (total + 1) / 2
    x = wrap32(1515870810 + doubling_high_mul(half, -1010580540))
    for _ in range(3):
        step = doubling_high_mul(x, wrap32((1 << 29) - doubling_high_mul(half, x)))
        x = wrap32(x + mul_by_pot(step, 2))
    return mul_by_pot(x, 1)


def softmax_int8(x: np.ndarray, multiplier: int, shift: int, diff_min: int) -> np.ndarray:
    """arm_softmax_s8 (arm_nn_softmax_common_s8) over the last axis of x. One case is
    defined here where CMSIS-NN's C is not: a row whose sum of exps reaches 2^28 (512 entries
    or more tied at the maximum) divides by 2^32 or more, beyond an int32 shift; the exact
    quotient, rounded, is 0."""
    if not x.size:
        return np.zeros(x.shape, np.int8)
    rows = np.asarray(x, np.int64).reshape(-1, x.shape[-1])
    diff = rows - rows.max(axis=1, keepdims=True)
    inside = diff >= diff_min
    # diff * 2^shift only where diff >= diff_min (the verifier's bound keeps it an int32).
    scaled = doubling_high_mul(np.where(inside, diff << shift, 0), multiplier)
    exps = exp_on_negative_values(scaled)
    total = np.where(inside, divide_by_pot(exps, ACCUM_BITS), 0).sum(axis=1, keepdims=True)
    headroom = np.array([32 - int(t).bit_length() for t in total.reshape(-1)]).reshape(-1, 1)
    # (sum << headroom) - 2^31 in [0, 2^31): the sum's leading 1 becomes the implicit 1 of 1 + x.
    shifted_scale = one_over_one_plus_x(((total << headroom) % 2**32) - 2**31)
    bits_over_unit = ACCUM_BITS - headroom + 23
    product = doubling_high_mul(shifted_scale, exps)
    # x / 2^e for e >= 32 (product < 2^31) is 0 exactly; C's int32 shift stops at 31.
    quotient = np.where(
        bits_over_unit < 32, divide_by_pot(product, np.minimum(bits_over_unit, 31)), 0
    )
    out = np.clip(quotient + q.INT8_MIN, q.INT8_MIN, q.INT8_MAX)
    return np.where(inside, out, q.INT8_MIN).astype(np.int8).reshape(x.shape)


def requantize_to_int8(acc: np.ndarray, op: q.RequantizingOp) -> np.ndarray:
    multiplier = np.array(q.int_values(op.multiplier), np.int64)
    shift = np.array(q.int_values(op.shift), np.int64)
    out = requantize(acc, multiplier, shift) + op.output_zero_point.value.data
    return np.clip(out, op.act_min.value.data, op.act_max.value.data).astype(np.int8)


def qadd(lhs: np.ndarray, rhs: np.ndarray, op: q.QAddOp) -> np.ndarray:
    """TFLite's int8 ADD (the op's docstring): each operand to the common scale, the sum to the
    output's, as MultiplyByQuantizedMultiplier with shifts <= 0."""

    def prop(name: str) -> int:
        return op.properties[name].value.data  # type: ignore[attr-defined]

    def scaled(x: np.ndarray, side: str) -> np.ndarray:
        shifted = (x.astype(np.int64) - prop(f"{side}_zero_point")) << prop("left_shift")
        return requantize(
            shifted, np.int64(prop(f"{side}_multiplier")), np.int64(prop(f"{side}_shift"))
        )

    total = scaled(lhs, "lhs") + scaled(rhs, "rhs")
    out = requantize(total, np.int64(prop("multiplier")), np.int64(prop("shift")))
    out = out + prop("output_zero_point")
    return np.clip(out, prop("act_min"), prop("act_max")).astype(np.int8)


def quantize(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """A nan quantizes to the zero point (the value 0), as the C kernel does."""
    scaled = np.asarray(x, np.float32) / np.float32(scale)
    rounded = np.nan_to_num(round_half_away(scaled), nan=0.0, posinf=255.0, neginf=-255.0)
    return np.clip(np.clip(rounded, -255, 255) + zero_point, -128, 127).astype(np.int8)


def dequantize(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    return (x.astype(np.int32) - zero_point).astype(np.float32) * np.float32(scale)


def conv_accumulate(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    input_zero_point: int,
    window: tuple[tuple[int, int], tuple[int, int, int, int], tuple[int, int]],
    depthwise: bool,
) -> np.ndarray:
    """The int64 sums (x - input_zero_point) * w + bias of an NHWC convolution."""
    stride, padding, dilation = window
    top, bottom, left, right = padding
    # Taps in the padding hold the input's zero point, i.e. add 0 once it is subtracted.
    shifted = x.astype(np.int64) - input_zero_point
    shifted = np.pad(shifted, [(0, 0), (top, bottom), (left, right), (0, 0)])
    kernel = w.shape[1:3]
    if depthwise:
        multiplier = w.shape[3] // x.shape[3]
        # Output channel o reads input channel o // multiplier (TFLite's depthwise).
        shifted = np.repeat(shifted, multiplier, axis=3)
    extent = [dilation[a] * (kernel[a] - 1) + 1 for a in (0, 1)]
    view = sliding_window_view(shifted, extent, axis=(1, 2))  # [N, Ho', Wo', C, eh, ew]
    view = view[:, :: stride[0], :: stride[1], :, :: dilation[0], :: dilation[1]]
    wide = w.astype(np.int64)
    if depthwise:
        acc = np.einsum("nhwcij,ijc->nhwc", view, wide[0])
    else:
        acc = np.einsum("nhwcij,oijc->nhwo", view, wide)
    return acc + bias.astype(np.int64)


def requantize_clamped(
    acc: np.ndarray,
    multiplier: tuple[int, ...],
    shift: tuple[int, ...],
    zero_point: int,
    act_min: int,
    act_max: int,
) -> np.ndarray:
    out = requantize(acc, np.array(multiplier, np.int64), np.array(shift, np.int64))
    return np.clip(out + zero_point, act_min, act_max).astype(np.int8)


def qconv2d(x: np.ndarray, w: np.ndarray, bias: np.ndarray, op: q.QConv2dOp) -> np.ndarray:
    acc = conv_accumulate(x, w, bias, op.input_zero_point.value.data, op.window(), op.is_depthwise)
    return requantize_to_int8(acc, op)


def qexpand_depthwise(
    x: np.ndarray,
    expand_weight: np.ndarray,
    expand_bias: np.ndarray,
    depthwise_weight: np.ndarray,
    depthwise_bias: np.ndarray,
    op: q.QExpandDepthwiseOp,
) -> np.ndarray:
    """The two convolutions the op stands for, one after the other (its definition; the C
    kernel computes the same bits one expanded channel at a time)."""

    def prop(name: str) -> int:
        return op.properties[name].value.data  # type: ignore[attr-defined]

    expand_zero_point = prop("expand_zero_point")
    acc = conv_accumulate(
        x,
        expand_weight,
        expand_bias,
        prop("input_zero_point"),
        ((1, 1), (0, 0, 0, 0), (1, 1)),
        depthwise=False,
    )
    expanded = requantize_clamped(
        acc,
        q.int_values(op.expand_multiplier),
        q.int_values(op.expand_shift),
        expand_zero_point,
        prop("expand_act_min"),
        prop("expand_act_max"),
    )
    acc = conv_accumulate(
        expanded,
        depthwise_weight,
        depthwise_bias,
        expand_zero_point,
        op.window(),
        depthwise=True,
    )
    return requantize_clamped(
        acc,
        q.int_values(op.multiplier),
        q.int_values(op.shift),
        prop("output_zero_point"),
        prop("act_min"),
        prop("act_max"),
    )


def quantize_qconv2d(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray, op: q.QuantizeQConv2dOp
) -> np.ndarray:
    """The three ops it stands for (its definition): quantize, NCHW to NHWC, qconv2d. The C
    kernel quantizes each window as it reads it, the same bits."""
    zero_point = op.input_zero_point.value.data
    image = quantize(x, op.input_scale.value.data, zero_point).transpose(0, 2, 3, 1)
    acc = conv_accumulate(image, w, bias, zero_point, op.window(), depthwise=False)
    return requantize_to_int8(acc, op)


def grad_input(
    grad: np.ndarray, weight: np.ndarray, op: q.QGradInputOp, dtype: np.dtype
) -> np.ndarray:
    """`conv2d_grad_input` on the integers of the weight, NHWC (a fully-connected layer's:
    grad @ weight), in the session's float type."""
    grad = np.asarray(grad, dtype)
    w = weight.astype(dtype)
    if grad.ndim == 2:
        return grad @ w
    stride, padding, dilation = op.window()
    # OHWI -> OIHW, or a depthwise [1, KH, KW, O] -> [O, 1, KH, KW]
    oihw = w.transpose(3, 0, 1, 2) if op.is_depthwise else w.transpose(0, 3, 1, 2)
    window = Window2d(tuple(oihw.shape[2:]), stride, padding, dilation)
    size = q.int_values(op.input_size)
    groups = op.groups.value.data
    dx = conv2d_grad_input(grad.transpose(0, 3, 1, 2), oihw, size, window, groups)
    return np.ascontiguousarray(dx.transpose(0, 2, 3, 1)).astype(dtype)


def requantize_grad(
    y: np.ndarray, grad: np.ndarray, op: q.QRequantizeGradOp, dtype: np.dtype
) -> np.ndarray:
    """The gradient through a requantization (its real multiplier, rounded to the session's
    float type: f32 as the C) and its clamp (passed where act_min < y < act_max), channels on
    the last axis."""
    multiplier = [int(v) for v in op.multiplier.get_values()]
    shift = [int(v) for v in op.shift.get_values()]
    real = np.array(q.real_multipliers(multiplier, shift), np.float64).astype(dtype)
    inside = (y > op.act_min.value.data) & (y < op.act_max.value.data)
    scaled = np.asarray(grad, dtype) * real
    return np.where(inside, scaled, dtype.type(0.0)).astype(dtype)


def qsgd_update(param: np.ndarray, grad: np.ndarray, lr: np.ndarray, op: q.QSgdUpdateOp):
    """SGD on the integers: the f32 step lr * grad * step_scale, rounded half away from zero,
    subtracted, the result clamped to the op's bounds."""
    scales = np.array(op.scales(), np.float32)
    shape = [1] * param.ndim
    if scales.size > 1:
        shape[op.axis.value.data] = -1
    step = (np.float32(lr) * np.asarray(grad, np.float32)) * scales.reshape(shape)
    delta = np.nan_to_num(round_half_away(step.astype(np.float32)), nan=0.0)
    delta = np.clip(delta, -(2.0**31), 2.0**31 - 1).astype(np.int64)
    # The bounds follow the parameter's dtype, as op.bounds() does from its operand's type:
    # a bufferized update runs on a property-only twin of the op (no operands to ask).
    lo, hi = (-q.INT8_MAX, q.INT8_MAX) if param.dtype == np.int8 else (-(2**31), 2**31 - 1)
    return np.clip(param.astype(np.int64) - delta, lo, hi).astype(param.dtype)


def pool_windows(x: np.ndarray, op: q.QPoolOp, fill: int) -> tuple[np.ndarray, np.ndarray]:
    """The windows [N, Ho, Wo, C, KH, KW] of x padded with `fill`, and which taps are inside."""
    kernel, stride, padding = op.window()
    top, bottom, left, right = padding
    widths = [(0, 0), (top, bottom), (left, right), (0, 0)]
    padded = np.pad(x.astype(np.int64), widths, constant_values=fill)
    inside = np.pad(np.ones((*x.shape[:3], 1), np.int64), widths)
    view = sliding_window_view(padded, kernel, axis=(1, 2))[:, :: stride[0], :: stride[1]]
    mask = sliding_window_view(inside, kernel, axis=(1, 2))[:, :: stride[0], :: stride[1]]
    return view, mask


@register_impls
class QuantizedFunctions(FamilyFunctions):
    @impl(q.QuantizeOp)
    def run_quantize(self, interpreter: Interpreter, op: q.QuantizeOp, args: tuple[Any, ...]):
        return (quantize(args[0], op.scale.value.data, op.zero_point.value.data),)

    @impl(q.DequantizeOp)
    def run_dequantize(self, interpreter: Interpreter, op: q.DequantizeOp, args: tuple[Any, ...]):
        result = dequantize(args[0], op.scale.value.data, op.zero_point.value.data)
        return (result.astype(self.float_dtype),)

    @impl(q.QFullyConnectedOp)
    def run_qfully_connected(
        self, interpreter: Interpreter, op: q.QFullyConnectedOp, args: tuple[Any, ...]
    ):
        x, w, bias = args
        shifted = x.astype(np.int64) - op.input_zero_point.value.data
        acc = shifted @ w.astype(np.int64).T + bias.astype(np.int64)
        return (requantize_to_int8(acc, op),)

    @impl(q.QConv2dOp)
    def run_qconv2d(self, interpreter: Interpreter, op: q.QConv2dOp, args: tuple[Any, ...]):
        return (qconv2d(*args, op),)

    @impl(q.QExpandDepthwiseOp)
    def run_qexpand_depthwise(
        self, interpreter: Interpreter, op: q.QExpandDepthwiseOp, args: tuple[Any, ...]
    ):
        return (qexpand_depthwise(*args, op),)

    @impl(q.QuantizeQConv2dOp)
    def run_quantize_qconv2d(
        self, interpreter: Interpreter, op: q.QuantizeQConv2dOp, args: tuple[Any, ...]
    ):
        return (quantize_qconv2d(*args, op),)

    @impl(q.QAddOp)
    def run_qadd(self, interpreter: Interpreter, op: q.QAddOp, args: tuple[Any, ...]):
        return (qadd(args[0], args[1], op),)

    @impl(q.QMaxpool2dOp)
    def run_qmaxpool2d(self, interpreter: Interpreter, op: q.QMaxpool2dOp, args: tuple[Any, ...]):
        view, _ = pool_windows(args[0], op, fill=-(2**31))  # padding never wins
        out = view.max(axis=(-2, -1))
        return (np.clip(out, op.act_min.value.data, op.act_max.value.data).astype(np.int8),)

    @impl(q.QAvgpool2dOp)
    def run_qavgpool2d(self, interpreter: Interpreter, op: q.QAvgpool2dOp, args: tuple[Any, ...]):
        view, mask = pool_windows(args[0], op, fill=0)
        total = view.sum(axis=(-2, -1))
        count = np.broadcast_to(mask.sum(axis=(-2, -1)), total.shape)
        half = count // 2
        # C's division truncates toward zero: (sum +- count / 2) / count.
        rounded = np.where(total > 0, total + half, total - half)
        mean = np.sign(rounded) * (np.abs(rounded) // count)
        return (np.clip(mean, op.act_min.value.data, op.act_max.value.data).astype(np.int8),)

    @impl(q.QLookupOp)
    def run_qlookup(self, interpreter: Interpreter, op: q.QLookupOp, args: tuple[Any, ...]):
        x, table = args
        return (table[x.astype(np.int64) + 128].astype(np.int8),)

    @impl(q.QSoftmaxOp)
    def run_qsoftmax(self, interpreter: Interpreter, op: q.QSoftmaxOp, args: tuple[Any, ...]):
        return (
            softmax_int8(
                args[0], op.multiplier.value.data, op.shift.value.data, op.diff_min.value.data
            ),
        )

    @impl(q.QReshapeOp)
    def run_qreshape(self, interpreter: Interpreter, op: q.QReshapeOp, args: tuple[Any, ...]):
        return (args[0].reshape(q.int_values(op.shape)),)

    @impl(q.QTransposeOp)
    def run_qtranspose(self, interpreter: Interpreter, op: q.QTransposeOp, args: tuple[Any, ...]):
        return (np.ascontiguousarray(args[0].transpose(q.int_values(op.permutation))),)

    @impl(q.QRequantizeGradOp)
    def run_qrequantize_grad(
        self, interpreter: Interpreter, op: q.QRequantizeGradOp, args: tuple[Any, ...]
    ):
        return (requantize_grad(args[0], args[1], op, self.float_dtype),)

    @impl(q.QGradInputOp)
    def run_qgrad_input(self, interpreter: Interpreter, op: q.QGradInputOp, args: tuple[Any, ...]):
        return (grad_input(args[0], args[1], op, self.float_dtype),)

    @impl(q.QSgdUpdateOp)
    def run_qsgd_update(self, interpreter: Interpreter, op: q.QSgdUpdateOp, args: tuple[Any, ...]):
        return (qsgd_update(*args, op),)
