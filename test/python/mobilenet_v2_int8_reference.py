"""The PyTorch reference of quantized training on MobileNetV2-w0.35 (examples/torch/
mobilenet_v2.py), at level 1 (an int8 frozen prefix feeding a float tail) and level 2 (trainable
int8 layers with QAS), for test_quantized_training_mobilenet_v2_level_1.py and _level_2.py.

`QuantizedMobileNetV2` quantizes the network once as adir's quantizer does (TFLite's formulas in
int8_reference.py: each batch norm folded in float32, weights symmetric per output channel, the
bias at s_x s_W, the activation scales from the calibration ranges that it is given, a ReLU6 as
the output clamp, the residual sums as TFLite's ADD), then runs its forward pass on integers:

- a frozen conv is `int8_reference.qconv2d` (integers in, integers out, no gradient);
- a trained conv (level 2) is `int8_reference.fake_quantized_conv2d` on float64 leaves holding
  its int8 weight and int32 bias: the same integers, and autograd's gradients through the
  straight-through rounding and the clamp (TTE's backward in integer units); a residual sum
  after one is `f32_sum` (level 2 keeps it f32 between a dequantize and a quantize);
- the float tail of level 1 starts where `float_from` names a conv: the int8 value that enters
  it, dequantized, is `features_at`'s result, which a float64 copy of the tail then trains.

The scales are calibration's choice, which the reference takes as given (the ranges of the same
float values of the unquantized model over the same calibration inputs); the arithmetic is what
is checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import int8_reference as ref
import numpy as np
import torch
from test_quantize_frozen_prefix import fold, loss_ranges
from torch import nn
from xdsl.dialects.builtin import ModuleOp

INT32 = (-(2**31), 2**31 - 1)


RANGED = ("adir.conv2d", "adir.batchnorm_eval", "adir.clamp", "adir.add", "adir.global_avgpool2d")


def float_ranges(module: ModuleOp, inputs: np.ndarray) -> list[tuple[float, float]]:
    """What calibration saw: (min, max) over `inputs` of the input and of the values of the
    float @loss of `module` (after freeze-batchnorm) that the quantizer gives scales to, in
    program order: each conv's output (its batch norm's, where one stays: freeze-batchnorm
    folds a frozen batch norm into its conv, not one whose affine trains), each clamp
    (ReLU6), each sum (the residuals, the classifier's bias last) and the global average."""

    def picked(op) -> bool:
        if op.name == "adir.conv2d":
            uses = list(op.results[0].uses)
            return not (len(uses) == 1 and uses[0].operation.name == "adir.batchnorm_eval")
        return op.name in RANGED

    return loss_ranges(module, inputs, picked)


@dataclass
class Conv:
    """One conv with its folded batch norm, quantized: what stays fixed while it trains."""

    name: str  # adir's symbol of its float weight: `features_17_conv_3_weight`
    weight: torch.Tensor  # int8 values (int64), OIHW
    bias: torch.Tensor  # int32 values (int64)
    weight_scales: torch.Tensor  # float32, one per output channel
    multipliers: list[int]
    shifts: list[int]
    input: tuple[float, int]  # (scale, zero point)
    output: tuple[float, int]
    act_min: int
    act_max: int
    stride: tuple[int, int]
    padding: tuple[int, int, int, int]
    groups: int

    def frozen(self, q: torch.Tensor) -> torch.Tensor:
        return ref.qconv2d(
            q,
            self.input[1],
            self.weight,
            self.bias,
            self.multipliers,
            self.shifts,
            self.output[1],
            self.act_min,
            self.stride,
            self.padding,
            self.groups,
            self.act_max,
        )

    def trained(
        self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return ref.fake_quantized_conv2d(
            x,
            self.input[1],
            weight,
            bias,
            self.multipliers,
            self.shifts,
            self.output[1],
            self.act_min,
            self.act_max,
            self.stride,
            self.padding,
            self.groups,
        )

    def step_scales(self) -> tuple[torch.Tensor, torch.Tensor]:
        """QAS's factors in adir.step_scale's float32."""
        w_step, b_step = ref.qas_step_scales(self.input[0], self.weight_scales, True)
        return w_step.float(), b_step.float()


def quantized_conv(
    name: str, conv: nn.Conv2d, bn: nn.BatchNorm2d, relu6: bool, input_params, ranges
) -> Conv:
    """`conv` and `bn` quantized; consumes the conv's range, and the clamp's after it."""
    conv_range = next(ranges)
    output = ref.activation_params(*(next(ranges) if relu6 else conv_range))
    scale, out_zero_point = input_params[0], output[1]
    weight, bias = fold(conv, bn)
    w_q, w_scales = ref.symmetric_per_channel(weight)
    b_q = ref.round_half_away(bias.double() / (scale * w_scales.double())).clamp(*INT32).long()
    pairs = [ref.quantize_multiplier(scale * float(ws) / output[0]) for ws in w_scales]
    act_min, act_max = -128, 127
    if relu6:
        act_min = max(-128, out_zero_point)
        six = ref.round_half_away(torch.tensor(6.0) / torch.tensor(output[0]))
        act_max = int(min(127, out_zero_point + int(six)))
    pad = conv.padding[0]
    return Conv(
        name,
        w_q,
        b_q,
        w_scales,
        [m for m, _ in pairs],
        [s for _, s in pairs],
        input_params,
        output,
        act_min,
        act_max,
        conv.stride,
        (pad, pad, pad, pad),
        conv.groups,
    )


def f32_sum(
    a: torch.Tensor,
    a_params: tuple[float, int],
    b: torch.Tensor,
    b_differentiable: torch.Tensor,
    b_params: tuple[float, int],
    out_params: tuple[float, int],
) -> tuple[torch.Tensor, torch.Tensor]:
    """A residual sum after a trained conv, as level 2 keeps it: f32 between a dequantize and a
    quantize (the int8 ADD has no VJP), its int8 value, and that value differentiable in
    `b_differentiable` (the dequantize's slope s_b, the quantize's straight-through rounding,
    1 / s, where its clamp is not active)."""
    total = ref.dequantize(a, *a_params) + ref.dequantize(b, *b_params)
    exact = ref.quantize(total, *out_params)
    (a_scale, a_zero_point), (b_scale, b_zero_point) = a_params, b_params
    scale, zero_point = out_params
    t = (
        (a.double() - a_zero_point) * a_scale + (b_differentiable - b_zero_point) * b_scale
    ) / scale
    inside = (t > -128.5 - zero_point) & (t < 127.5 - zero_point)
    return exact, torch.where(inside, t + (exact.double() - t).detach(), exact.double())


@dataclass
class Block:
    convs: list[Conv]
    add: tuple[float, int] | None  # the residual sum's (scale, zero point)


class QuantizedMobileNetV2:
    """The network quantized from `ranges` (`float_ranges`')."""

    def __init__(self, net: nn.Module, ranges: list[tuple[float, float]]) -> None:
        remaining = iter(ranges)
        self.input = ref.activation_params(*next(remaining))
        params = self.input
        self.blocks: list[Block] = []
        for index, block in enumerate(net.features):
            residual = hasattr(block, "residual")
            layers = list(block.conv if residual else block)
            prefix = f"features_{index}_conv_" if residual else f"features_{index}_"
            convs, at = [], 0
            while at < len(layers):
                relu6 = at + 2 < len(layers) and isinstance(layers[at + 2], nn.ReLU6)
                conv = quantized_conv(
                    f"{prefix}{at}_weight", layers[at], layers[at + 1], relu6, params, remaining
                )
                convs.append(conv)
                params = conv.output
                at += 3 if relu6 else 2
            add = None
            if residual and block.residual:
                add = params = ref.activation_params(*next(remaining))
            self.blocks.append(Block(convs, add))
        self.features = params  # the last conv's output (the int8 pool keeps it)
        self.pooled_range, self.logits_range = remaining  # the average, the classifier's bias

    def conv(self, name: str) -> Conv:
        return next(c for b in self.blocks for c in b.convs if c.name == name)

    def forward(
        self, x: torch.Tensor, leaves: dict[str, tuple[torch.Tensor, torch.Tensor]] | None = None
    ) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor | None]:
        """The int8 tensors in adir's program order (the input's quantization, each conv's
        output, each residual sum; NCHW, int64), the last conv's int8 output, and its
        differentiable float64 form where a conv named in `leaves` (float64 leaves holding
        its weight and bias integers) trains, else None."""
        leaves = leaves or {}
        q = ref.quantize(x, *self.input)
        tensors, d = [q], None
        for block in self.blocks:
            q_in, d_in = q, d
            for conv in block.convs:
                if conv.name in leaves:
                    q, d = conv.trained(q.double() if d is None else d, *leaves[conv.name])
                else:
                    assert d is None, "a frozen conv after a trained one"
                    q = conv.frozen(q)
                tensors.append(q)
            if block.add is not None:
                a_params, b_params = block.convs[0].input, block.convs[-1].output
                if d is None:
                    q = ref.qadd(q_in, a_params, q, b_params, block.add)
                else:
                    assert d_in is None, "a trained conv before the block"
                    q, d = f32_sum(q_in, a_params, q, d, b_params, block.add)
                tensors.append(q)
        return tensors, q, d

    def features_at(
        self, x: torch.Tensor, name: str | None
    ) -> tuple[list[torch.Tensor], torch.Tensor]:
        """Level 1 with the float tail starting at conv `name` (None: at the classifier): the
        int8 tensors of the prefix (those before that conv; with None, the int8 pool's last)
        and the float32 value entering the tail, dequantized."""
        tensors, q, _ = self.forward(x)
        if name is None:
            pooled = ref.qavgpool(q)
            return [*tensors, pooled], ref.dequantize(pooled, *self.features).reshape(1, -1)
        index = 1
        for block in self.blocks:
            for conv in block.convs:
                if conv.name == name:
                    return tensors[:index], ref.dequantize(tensors[index - 1], *conv.input)
                index += 1
            index += block.add is not None
        raise KeyError(name)
