"""TFLite's int8 arithmetic written out in PyTorch, for references that adir did not write.

Each function is the formula of TFLite's reference kernels (tensorflow/lite/kernels/internal/
common.h and reference/integer_ops/), transcribed from their definitions, not from adir's
interpreter or C: integer tensors are int64 (exact), the float ends are float32 as TFLite's.

- `activation_params`: TFLite's asymmetric per-tensor (scale, zero point) of a range widened to
  hold 0, scale = (hi - lo) / 255 held in float32, zero point = round(-128 - lo / scale).
- `symmetric_per_channel`: weights in [-127, 127] with scale = max |w| / 127 per output channel.
- `quantize_multiplier`: QuantizeMultiplier (frexp, the fraction times 2^31 rounded).
- `requantize`: MultiplyByQuantizedMultiplier: SaturatingRoundingDoublingHighMul (the nudge
  rounds halves up in magnitude, the division truncates) then RoundingDivideByPOT (halves away
  from zero).
- `qconv2d`: sum over taps of (x - input zero point) * w plus the int32 bias (padding adds
  nothing: it is the zero point), requantized, plus the output zero point, clamped.
- `qadd`: TFLite's int8 ADD (reference_integer_ops/add.h, its parameters from kernels/add.cc):
  left shift 20, each input to the unit 2 max(s1, s2), the sum to the output's scale.
- `qavgpool`: the sum over the window, divided rounding halves away from zero, as TFLite's
  AveragePool does ((sum +- count / 2) / count in C's truncating division).

Level 2 of quantized training (a conv whose int8 weight and int32 bias train; TTE: Lin et al.,
"On-Device Training Under 256KB Memory", NeurIPS 2022, section 2.2 and its code's
`_QuantizedConv2dFunc` and `SGDScale`):

- `fake_quantized_conv2d`: the layer as a differentiable float64 function of the integers
  W_bar, b_bar (autograd, not a hand-written backward): the accumulator conv(x - z_x, W_bar) +
  b_bar, rounding passed straight through (its derivative the real multiplier M = s_x s_W /
  s_y), the clamp passing gradient where the int8 output lies strictly inside it, the value
  that of `qconv2d` exactly.
- `fake_quantized_linear`: the same for a fully-connected layer; `fake_quantize`: quantize with
  the rounding passed straight through where its clamp is not active.
- `qas_step_scales`: QAS, the gradient of W_bar scaled by s_W^-2 (per output channel) and that
  of b_bar by (s_x s_W)^-2; without QAS, 1.
- `integer_sgd`: W_bar - round(lr * grad * scale), halves away from zero, clamped to [-127,
  127] (int8) or the int32 range.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F


def round_half_away(x: torch.Tensor) -> torch.Tensor:
    wide = x.double()
    return torch.where(wide >= 0, torch.floor(wide + 0.5), torch.ceil(wide - 0.5))


def activation_params(lo: float, hi: float) -> tuple[float, int]:
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = float(np.float32((hi - lo) / 255.0))
    zero_point = -128 - lo / scale
    rounded = math.floor(zero_point + 0.5) if zero_point >= 0 else math.ceil(zero_point - 0.5)
    return scale, max(-128, min(127, int(rounded)))


def quantize(x: torch.Tensor, scale: float, zero_point: int) -> torch.Tensor:
    """float32 -> int8 values (as int64): round(x / scale) + zero point, saturated."""
    scaled = x.float() / torch.tensor(scale, dtype=torch.float32)
    return (round_half_away(scaled).clamp(-255, 255).long() + zero_point).clamp(-128, 127)


def dequantize(q: torch.Tensor, scale: float, zero_point: int) -> torch.Tensor:
    return (q - zero_point).float() * torch.tensor(scale, dtype=torch.float32)


def symmetric_per_channel(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """int8 weights (int64) and their float32 scales, one per output channel (axis 0)."""
    peak = w.float().abs().reshape(w.shape[0], -1).amax(dim=1)
    scales = torch.where(peak > 0, peak / 127.0, torch.ones_like(peak))
    shape = (-1,) + (1,) * (w.dim() - 1)
    q = round_half_away(w.double() / scales.double().reshape(shape)).clamp(-127, 127)
    return q.long(), scales


def quantize_multiplier(real: float) -> tuple[int, int]:
    if real == 0.0:
        return 0, 0
    fraction, shift = math.frexp(real)
    fixed = math.floor(fraction * 2**31 + 0.5)
    if fixed == 2**31:
        fixed, shift = fixed // 2, shift + 1
    if shift < -31:
        return 0, 0
    return fixed, shift


def requantize(acc: torch.Tensor, multipliers: list[int], shifts: list[int]) -> torch.Tensor:
    """MultiplyByQuantizedMultiplier per output channel (axis 1 of an NCHW accumulator)."""
    shape = (1, -1) + (1,) * (acc.dim() - 2)
    m = torch.tensor(multipliers, dtype=torch.int64).reshape(shape)
    s = torch.tensor(shifts, dtype=torch.int64).reshape(shape)
    left, right = s.clamp(min=0), (-s).clamp(min=0)
    x = acc * (2**left)
    assert bool(((x >= -(2**31)) & (x < 2**31)).all()), "an accumulator beyond int32"
    product = x * m
    nudge = torch.where(product >= 0, 2**30, 1 - 2**30)
    high = torch.div(product + nudge, 2**31, rounding_mode="trunc")
    mask = 2**right - 1
    remainder = high & mask
    threshold = (mask >> 1) + (high < 0).long()
    return (high >> right) + (remainder > threshold).long()


def qconv2d(
    x: torch.Tensor,
    x_zero_point: int,
    w: torch.Tensor,
    bias: torch.Tensor,
    multipliers: list[int],
    shifts: list[int],
    out_zero_point: int,
    act_min: int,
    stride: tuple[int, int],
    padding: tuple[int, int, int, int],  # top, bottom, left, right
    groups: int,
    act_max: int = 127,
) -> torch.Tensor:
    """NCHW int8 values in and out (int64); the sums in float64, exact below 2^53."""
    top, bottom, left, right = padding
    shifted = F.pad((x - x_zero_point).double(), (left, right, top, bottom))
    acc = F.conv2d(shifted, w.double(), stride=stride, groups=groups)
    assert bool((acc.abs() < 2**52).all())
    acc = acc.round().long() + bias.reshape(1, -1, 1, 1)
    return (requantize(acc, multipliers, shifts) + out_zero_point).clamp(act_min, act_max)


def qavgpool(x: torch.Tensor) -> torch.Tensor:
    """The global average of NCHW int8 values (int64), TFLite's rounding."""
    total = x.sum(dim=(2, 3), keepdim=True)
    count = x.shape[2] * x.shape[3]
    rounded = torch.where(total > 0, total + count // 2, total - count // 2)
    return torch.div(rounded, count, rounding_mode="trunc").clamp(-128, 127)


def qadd(
    a: torch.Tensor,
    a_params: tuple[float, int],
    b: torch.Tensor,
    b_params: tuple[float, int],
    out_params: tuple[float, int],
) -> torch.Tensor:
    """int8 values (int64) of one shape, each with its (scale, zero point)."""
    (a_scale, a_zero_point), (b_scale, b_zero_point) = a_params, b_params
    out_scale, out_zero_point = out_params
    twice_max = 2 * max(a_scale, b_scale)
    a_m, a_s = quantize_multiplier(a_scale / twice_max)
    b_m, b_s = quantize_multiplier(b_scale / twice_max)
    m, s = quantize_multiplier(twice_max / (2**20 * out_scale))
    assert a_s <= 0 and b_s <= 0 and s <= 0  # TFLite's ADD takes multipliers below 1
    total = requantize((a - a_zero_point) * 2**20, [a_m], [a_s]) + requantize(
        (b - b_zero_point) * 2**20, [b_m], [b_s]
    )
    return (requantize(total, [m], [s]) + out_zero_point).clamp(-128, 127)


def real_multiplier(multiplier: int, shift: int) -> float:
    """The real that QuantizeMultiplier's (M, s) stands for: M * 2^(s - 31)."""
    return multiplier * 2.0 ** (shift - 31)


def fake_quantized_conv2d(
    x: torch.Tensor,
    x_zero_point: int,
    w: torch.Tensor,
    bias: torch.Tensor,
    multipliers: list[int],
    shifts: list[int],
    out_zero_point: int,
    act_min: int,
    act_max: int,
    stride: tuple[int, int],
    padding: tuple[int, int, int, int],
    groups: int = 1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(the int8 output as int64, the same values as a float64 tensor differentiable in `x`,
    `w` and `bias`: float64 tensors holding the integers x_q, W_bar and b_bar). NCHW, weights
    OIHW (depthwise: groups = channels); padded taps are the input's zero point, 0 once it is
    subtracted."""
    exact = qconv2d(
        x.detach().round().long(),
        x_zero_point,
        w.detach().round().long(),
        bias.detach().round().long(),
        multipliers,
        shifts,
        out_zero_point,
        act_min,
        stride,
        padding,
        groups,
        act_max,
    )
    top, bottom, left, right = padding
    shifted = F.pad(x.double() - x_zero_point, (left, right, top, bottom))
    acc = F.conv2d(shifted, w, stride=stride, groups=groups) + bias.reshape(1, -1, 1, 1)
    m = torch.tensor([real_multiplier(a, b) for a, b in zip(multipliers, shifts, strict=True)])
    linear = acc * m.double().reshape(1, -1, 1, 1)
    through = linear + (exact.double() - linear).detach()  # the value exact, the slope M
    inside = (exact > act_min) & (exact < act_max)
    return exact, torch.where(inside, through, exact.double())


def fake_quantize(
    x: torch.Tensor, scale: float, zero_point: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(`quantize`'s int8 values, the same values differentiable in `x`: straight through the
    rounding, slope 1 / scale, where the clamp to [-128, 127] is not active)."""
    exact = quantize(x.detach(), scale, zero_point)
    t = x.double() / scale
    through = t + (exact.double() - t).detach()
    inside = (t > -128.5 - zero_point) & (t < 127.5 - zero_point)
    return exact, torch.where(inside, through, exact.double())


def fake_quantized_linear(
    x: torch.Tensor,
    x_zero_point: int,
    w: torch.Tensor,
    bias: torch.Tensor,
    multiplier: int,
    shift: int,
    out_zero_point: int,
    act_min: int,
    act_max: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """`fake_quantized_conv2d` for a fully-connected layer (TFLite's FULLY_CONNECTED: one
    multiplier for all outputs): x [N, K], w [M, K], bias [M], all holding integers."""
    acc_exact = (x.detach().round().long() - x_zero_point) @ w.detach().round().long().T
    acc_exact = acc_exact + bias.detach().round().long()
    exact = (requantize(acc_exact, [multiplier], [shift]) + out_zero_point).clamp(act_min, act_max)
    acc = (x.double() - x_zero_point) @ w.T + bias
    linear = acc * real_multiplier(multiplier, shift)
    through = linear + (exact.double() - linear).detach()
    inside = (exact > act_min) & (exact < act_max)
    return exact, torch.where(inside, through, exact.double())


def qas_step_scales(
    x_scale: float, w_scales: torch.Tensor, qas: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """The factors of the weight's and the bias's integer gradients: s_W^-2 and (s_x s_W)^-2
    per output channel with QAS, 1 without."""
    s_w = w_scales.double()
    if not qas:
        return torch.ones_like(s_w), torch.ones_like(s_w)
    return 1.0 / s_w**2, 1.0 / (x_scale * s_w) ** 2


def integer_sgd(
    q: torch.Tensor, grad: torch.Tensor, lr: float, scale: torch.Tensor, low: int, high: int
) -> torch.Tensor:
    """q - round(lr * grad * scale[o]) (o the first axis), halves away from zero, clamped."""
    shape = (-1,) + (1,) * (q.dim() - 1)
    step = round_half_away(lr * grad.double() * scale.double().reshape(shape)).long()
    return (q.long() - step).clamp(low, high)
