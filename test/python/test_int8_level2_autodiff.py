"""autodiff through the quantized ops (level 2 of quantized training,
docs/quantized_training.md): an f32 input quantized, a 3x3 conv (8 -> 6 channels, or depthwise
8 -> 8) on int8 values whose weight is a trainable parameter holding integers (quantized at
scale 1, as a level-2 layer's int8 weight is the integers themselves), its int8 output
dequantized into a frozen float classifier and a cross entropy. `autodiff{wrt_args=0}` gives
the gradients of the weight (in integer units) and of the f32 input; both are checked on 5
inputs against int8_reference's PyTorch autograd through the same fake-quantized layer (a
function adir did not write), to 1e-5 of each gradient's largest magnitude (float32 against
float64), and the loss to 1e-5."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from int8_reference import (
    activation_params,
    fake_quantize,
    fake_quantized_conv2d,
    quantize_multiplier,
    symmetric_per_channel,
)

from adir.context import adir_context, parse_module
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass

C, H, W, CLASSES = 8, 5, 4, 12
X_SCALE, X_ZERO_POINT = 0.02, 3
Y_PARAMS = activation_params(0.0, 40.0)


def ints(values: torch.Tensor) -> str:
    return str(values.tolist())


def module_text(depthwise: bool, w_q: torch.Tensor, bias: torch.Tensor, pairs, fc: torch.Tensor):
    out = w_q.shape[0]
    pixels = H * W * out
    to_adir = "1, 2, 3, 0" if depthwise else "0, 2, 3, 1"
    adir_w = f"1x3x3x{C}" if depthwise else f"{out}x3x3x{C}"
    oihw = "x".join(map(str, w_q.shape))
    groups = f", groups = {C} : i64" if depthwise else ""
    y_scale, y_zero_point = Y_PARAMS
    multipliers = ", ".join(str(m) for m, _ in pairs)
    shifts = ", ".join(str(s) for _, s in pairs)
    fc_data = "[" + "], [".join(", ".join(f"{float(v):.9e}" for v in row) for row in fc) + "]"
    return f"""
adir.param @w : tensor<{oihw}xf32> = dense<{ints(w_q.float())}> : tensor<{oihw}xf32>
adir.param @fc : tensor<{CLASSES}x{pixels}xf32> = dense<[{fc_data}]>
    : tensor<{CLASSES}x{pixels}xf32> {{trainable = false}}
func.func @loss(%x: tensor<1x{C}x{H}x{W}xf32>, %label: tensor<1xi32>) -> tensor<f32>
    attributes {{adir.loss}} {{
  %xq = adir.quantize %x {{scale = {X_SCALE} : f32, zero_point = {X_ZERO_POINT} : i32}}
         : tensor<1x{C}x{H}x{W}xf32> -> tensor<1x{C}x{H}x{W}xi8>
  %xn = adir.qtranspose %xq {{permutation = array<i64: 0, 2, 3, 1>}}
         : tensor<1x{C}x{H}x{W}xi8> -> tensor<1x{H}x{W}x{C}xi8>
  %wl = adir.load @w : tensor<{oihw}xf32>
  %wq = adir.quantize %wl {{scale = 1.0 : f32, zero_point = 0 : i32}}
         : tensor<{oihw}xf32> -> tensor<{oihw}xi8>
  %wa = adir.qtranspose %wq {{permutation = array<i64: {to_adir}>}}
         : tensor<{oihw}xi8> -> tensor<{adir_w}xi8>
  %b = adir.constant dense<{ints(bias)}> : tensor<{out}xi32>
  %y = adir.qconv2d %xn, %wa, %b {{input_zero_point = {X_ZERO_POINT} : i32,
         output_zero_point = {y_zero_point} : i32, multiplier = array<i32: {multipliers}>,
         shift = array<i32: {shifts}>, act_min = {y_zero_point} : i32,
         padding = array<i64: 1, 1, 1, 1>{groups}}}
         : tensor<1x{H}x{W}x{C}xi8>, tensor<{adir_w}xi8>, tensor<{out}xi32>
         -> tensor<1x{H}x{W}x{out}xi8>
  %yf = adir.dequantize %y {{scale = {y_scale:.9e} : f32, zero_point = {y_zero_point} : i32}}
         : tensor<1x{H}x{W}x{out}xi8> -> tensor<1x{H}x{W}x{out}xf32>
  %flat = adir.reshape %yf {{shape = array<i64: 1, {pixels}>}}
         : tensor<1x{H}x{W}x{out}xf32> -> tensor<1x{pixels}xf32>
  %fc = adir.load @fc : tensor<{CLASSES}x{pixels}xf32>
  %logits = adir.matmul %flat, %fc {{transpose_b}}
         : tensor<1x{pixels}xf32>, tensor<{CLASSES}x{pixels}xf32> -> tensor<1x{CLASSES}xf32>
  %loss = adir.cross_entropy %logits, %label : tensor<1x{CLASSES}xf32>, tensor<1xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}}
"""


@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
def test_autodiff_through_an_int8_layer_is_the_reference_s(depthwise: bool) -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    out = C if depthwise else 6
    groups = C if depthwise else 1
    w_q, w_scales = symmetric_per_channel(torch.randn(out, C // groups, 3, 3) * 0.3)
    bias = torch.from_numpy(rng.integers(-2000, 2000, out))
    pairs = [quantize_multiplier(X_SCALE * float(s) / Y_PARAMS[0]) for s in w_scales]
    fc = (torch.randn(CLASSES, H * W * out) * 0.05).float()
    module = parse_module(module_text(depthwise, w_q, bias, pairs, fc), "level2_autodiff.mlir")
    module.verify()
    AutodiffPass(wrt_args=(0,)).apply(adir_context(), module)
    session = Session(module)
    for sample in range(5):
        # Inputs over [-3, 3]: beyond the int8 range of scale 0.02 (+-2.5), so the clamp of
        # the input's quantization cuts some gradients.
        x = torch.from_numpy(rng.uniform(-3.0, 3.0, (1, C, H, W)).astype(np.float32))
        label = torch.tensor([sample])
        loss, w_grad, x_grad = session.call("loss_grad", x.numpy(), label.numpy().astype(np.int32))
        xr = x.double().requires_grad_(True)
        w = w_q.double().requires_grad_(True)
        _, x_int = fake_quantize(xr, X_SCALE, X_ZERO_POINT)
        _, y = fake_quantized_conv2d(
            x_int,
            X_ZERO_POINT,
            w,
            bias.double(),
            [m for m, _ in pairs],
            [s for _, s in pairs],
            Y_PARAMS[1],
            Y_PARAMS[1],
            127,
            (1, 1),
            (1, 1, 1, 1),
            groups,
        )
        real = (y - Y_PARAMS[1]) * Y_PARAMS[0]
        ref_loss = F.cross_entropy(real.permute(0, 2, 3, 1).reshape(1, -1) @ fc.double().T, label)
        ref_loss.backward()
        assert xr.grad is not None and w.grad is not None
        where = f"sample {sample}"
        np.testing.assert_allclose(float(loss), ref_loss.item(), rtol=1e-5, err_msg=where)
        for got, want in [(w_grad, w.grad), (x_grad, xr.grad)]:
            scale = float(want.abs().max())
            assert scale > 0
            np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-5 * scale, err_msg=where)
