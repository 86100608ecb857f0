"""Level 2 of quantized training on one layer: a 3x3 conv (padding 1, 8 -> 6 channels, or
depthwise 8 -> 8) with a fused ReLU, whose int8 weight and int32 bias train under a frozen float
classifier and a cross entropy, batch 1, SGD, 20 steps. The step is written in adir's ops
(qconv2d forward, the float backward from the int8 input and weight dequantized where they are
read, qrequantize_grad, qsgd_update), run in the interpreter, and checked against
int8_reference.py's PyTorch training of the same quantized layer (autograd through a
fake-quantized forward with the same scales and rounding, the same QAS factors, the same
integer update), which adir did not write: the int8 output and the int8 weight and int32 bias
after every update bit for bit, the loss and the integer gradients to 1e-5 (of the gradient
tensor's largest magnitude: float32 against float64)."""

from __future__ import annotations

import functools
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from c_testing import build_c, c_compilers, check_c_against_interpreter, run_pipeline
from int8_reference import (
    activation_params,
    fake_quantized_conv2d,
    integer_sgd,
    qas_step_scales,
    quantize_multiplier,
    symmetric_per_channel,
)
from test_cmsis_nn import cmsis_nn_objects, needs_cmsis_nn
from xdsl.dialects.builtin import StringAttr

from adir.context import parse_module
from adir.interpreter import Session

N, C, H, W, CLASSES = 1, 8, 5, 4, 12
X_SCALE, X_ZERO_POINT = 0.05, -10


@dataclass(frozen=True)
class Layer:
    """A 3x3 conv, padding 1: 8 -> 6 channels, or depthwise 8 -> 8 (TFLite's weight layout
    [1, KH, KW, O], its output channel the update's axis 3)."""

    depthwise: bool

    @property
    def out(self) -> int:
        return C if self.depthwise else 6

    @property
    def groups(self) -> int:
        return C if self.depthwise else 1

    @property
    def weight(self) -> str:
        """adir's weight shape (OHWI, or [1, KH, KW, O])."""
        return f"1x3x3x{C}" if self.depthwise else f"{self.out}x3x3x{C}"

    @property
    def oihw(self) -> str:
        return f"{self.out}x{C // self.groups}x3x3"

    @property
    def to_oihw(self) -> str:
        return "3, 0, 1, 2" if self.depthwise else "0, 3, 1, 2"

    @property
    def from_oihw(self) -> tuple[int, ...]:
        return (1, 2, 3, 0) if self.depthwise else (0, 2, 3, 1)

    @property
    def axis(self) -> int:
        return 3 if self.depthwise else 0


LAYERS = [Layer(depthwise=False), Layer(depthwise=True)]
LAYER_IDS = ["conv", "depthwise"]
LR = 0.002
STEPS = 20


def f32_array(values: np.ndarray) -> str:
    return ", ".join(f"{float(v):.9e} : f32" for v in np.asarray(values, np.float32).reshape(-1))


def step_ir(
    layer: Layer,
    multipliers: list[int],
    shifts: list[int],
    y_params: tuple[float, int],
    w_step: np.ndarray,
    b_step: np.ndarray,
) -> str:
    y_scale, y_zero_point = y_params
    requant = (
        f"multiplier = array<i32: {', '.join(map(str, multipliers))}>, "
        f"shift = array<i32: {', '.join(map(str, shifts))}>, act_min = {y_zero_point} : i32"
    )
    OUT, WT, OIHW = layer.out, layer.weight, layer.oihw
    pixels = H * W * OUT
    groups = f", groups = {layer.groups} : i64" if layer.depthwise else ""
    axis = f", axis = {layer.axis} : i64" if layer.axis else ""
    from_oihw = ", ".join(map(str, layer.from_oihw))
    return f"""
func.func @step(%x: tensor<1x{H}x{W}x{C}xi8>, %w: tensor<{WT}xi8>, %b: tensor<{OUT}xi32>,
                %label: tensor<1xi32>, %fc: tensor<{CLASSES}x{pixels}xf32>)
    -> (tensor<f32>, tensor<{WT}xi8>, tensor<{OUT}xi32>, tensor<1x{H}x{W}x{OUT}xi8>,
        tensor<{WT}xf32>, tensor<{OUT}xf32>, tensor<1x{H}x{W}x{C}xf32>) {{
  %y = adir.qconv2d %x, %w, %b {{input_zero_point = {X_ZERO_POINT} : i32,
         output_zero_point = {y_zero_point} : i32, {requant},
         padding = array<i64: 1, 1, 1, 1>{groups}}}
         : tensor<1x{H}x{W}x{C}xi8>, tensor<{WT}xi8>, tensor<{OUT}xi32>
         -> tensor<1x{H}x{W}x{OUT}xi8>
  %yf = adir.dequantize %y {{scale = {y_scale:.9e} : f32, zero_point = {y_zero_point} : i32}}
         : tensor<1x{H}x{W}x{OUT}xi8> -> tensor<1x{H}x{W}x{OUT}xf32>
  %flat = adir.reshape %yf {{shape = array<i64: 1, {pixels}>}}
         : tensor<1x{H}x{W}x{OUT}xf32> -> tensor<1x{pixels}xf32>
  %logits = adir.matmul %flat, %fc {{transpose_b}}
         : tensor<1x{pixels}xf32>, tensor<{CLASSES}x{pixels}xf32> -> tensor<1x{CLASSES}xf32>
  %loss = adir.cross_entropy %logits, %label : tensor<1x{CLASSES}xf32>, tensor<1xi32> -> tensor<f32>
  %one = adir.constant dense<1.0> : tensor<f32>
  %glogits = adir.cross_entropy_grad %logits, %label, %one
         : tensor<1x{CLASSES}xf32>, tensor<1xi32>, tensor<f32> -> tensor<1x{CLASSES}xf32>
  %gflat = adir.matmul %glogits, %fc
         : tensor<1x{CLASSES}xf32>, tensor<{CLASSES}x{pixels}xf32> -> tensor<1x{pixels}xf32>
  %gyf = adir.reshape %gflat {{shape = array<i64: 1, {H}, {W}, {OUT}>}}
         : tensor<1x{pixels}xf32> -> tensor<1x{H}x{W}x{OUT}xf32>
  %sy = adir.constant dense<{y_scale:.9e}> : tensor<f32>
  %gy = adir.mul %gyf, %sy : tensor<1x{H}x{W}x{OUT}xf32>, tensor<f32> -> tensor<1x{H}x{W}x{OUT}xf32>
  %gacc = adir.qrequantize_grad %y, %gy {{{requant}}}
         : tensor<1x{H}x{W}x{OUT}xi8>, tensor<1x{H}x{W}x{OUT}xf32> -> tensor<1x{H}x{W}x{OUT}xf32>
  %gacc_nchw = adir.transpose %gacc {{permutation = array<i64: 0, 3, 1, 2>}}
         : tensor<1x{H}x{W}x{OUT}xf32> -> tensor<1x{OUT}x{H}x{W}xf32>
  %xt = adir.qtranspose %x {{permutation = array<i64: 0, 3, 1, 2>}}
         : tensor<1x{H}x{W}x{C}xi8> -> tensor<1x{C}x{H}x{W}xi8>
  %xbar = adir.dequantize %xt {{scale = 1.0 : f32, zero_point = {X_ZERO_POINT} : i32}}
         : tensor<1x{C}x{H}x{W}xi8> -> tensor<1x{C}x{H}x{W}xf32>
  %gw_oihw = adir.conv2d_grad_weight %xbar, %gacc_nchw {{kernel_size = array<i64: 3, 3>,
         padding = array<i64: 1, 1, 1, 1>{groups}}}
         : tensor<1x{C}x{H}x{W}xf32>, tensor<1x{OUT}x{H}x{W}xf32> -> tensor<{OIHW}xf32>
  %gw = adir.transpose %gw_oihw {{permutation = array<i64: {from_oihw}>}}
         : tensor<{OIHW}xf32> -> tensor<{WT}xf32>
  %gb = adir.sum %gacc {{axes = array<i64: 0, 1, 2>}}
         : tensor<1x{H}x{W}x{OUT}xf32> -> tensor<{OUT}xf32>
  %wt = adir.qtranspose %w {{permutation = array<i64: {layer.to_oihw}>}}
         : tensor<{WT}xi8> -> tensor<{OIHW}xi8>
  %wbar = adir.dequantize %wt {{scale = 1.0 : f32, zero_point = 0 : i32}}
         : tensor<{OIHW}xi8> -> tensor<{OIHW}xf32>
  %gx_nchw = adir.conv2d_grad_input %gacc_nchw, %wbar {{padding = array<i64: 1, 1, 1, 1>,
         input_size = array<i64: {H}, {W}>{groups}}}
         : tensor<1x{OUT}x{H}x{W}xf32>, tensor<{OIHW}xf32> -> tensor<1x{C}x{H}x{W}xf32>
  %gx = adir.transpose %gx_nchw {{permutation = array<i64: 0, 2, 3, 1>}}
         : tensor<1x{C}x{H}x{W}xf32> -> tensor<1x{H}x{W}x{C}xf32>
  %lr = adir.constant dense<{LR}> : tensor<f32>
  %w1 = adir.qsgd_update %w, %gw, %lr {{step_scale = [{f32_array(w_step)}]{axis}}}
         : tensor<{WT}xi8>, tensor<{WT}xf32>, tensor<f32>
         -> tensor<{WT}xi8>
  %b1 = adir.qsgd_update %b, %gb, %lr {{step_scale = [{f32_array(b_step)}]}}
         : tensor<{OUT}xi32>, tensor<{OUT}xf32>, tensor<f32> -> tensor<{OUT}xi32>
  func.return %loss, %w1, %b1, %y, %gw, %gb, %gx : tensor<f32>, tensor<{WT}xi8>,
         tensor<{OUT}xi32>, tensor<1x{H}x{W}x{OUT}xi8>, tensor<{WT}xf32>,
         tensor<{OUT}xf32>, tensor<1x{H}x{W}x{C}xf32>
}}
"""


def reference_step(
    layer: Layer,
    x_q: torch.Tensor,
    w_q: torch.Tensor,
    b_q: torch.Tensor,
    label: torch.Tensor,
    fc: torch.Tensor,
    quant: dict,
) -> tuple:
    """One step of int8_reference's quantized training, NCHW: (loss, new weight, new bias,
    int8 output, weight gradient, bias gradient, input gradient), the gradients with respect
    to the integers."""
    x = x_q.double().requires_grad_(True)
    w = w_q.double().requires_grad_(True)
    b = b_q.double().requires_grad_(True)
    y_scale, y_zero_point = quant["y"]
    exact, y = fake_quantized_conv2d(
        x,
        X_ZERO_POINT,
        w,
        b,
        quant["multipliers"],
        quant["shifts"],
        y_zero_point,
        y_zero_point,
        127,
        (1, 1),
        (1, 1, 1, 1),
        layer.groups,
    )
    real = (y - y_zero_point) * y_scale
    logits = real.permute(0, 2, 3, 1).reshape(1, -1) @ fc.double().T  # the tail reads NHWC
    loss = F.cross_entropy(logits, label)
    loss.backward()
    assert x.grad is not None and w.grad is not None and b.grad is not None
    w1 = integer_sgd(w_q, w.grad, LR, quant["w_step"], -127, 127)
    b1 = integer_sgd(b_q, b.grad, LR, quant["b_step"], -(2**31), 2**31 - 1)
    return loss.item(), w1, b1, exact, w.grad, b.grad, x.grad


def setup(layer: Layer, qas: bool) -> tuple[str, dict, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The step's IR, the quantization (a choice: weights from a seeded draw, symmetric per
    channel; the output range [0, 40]), the int8 weight and int32 bias, the frozen classifier."""
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    w_float = torch.randn(layer.out, C // layer.groups, 3, 3) * 0.3
    w_q, w_scales = symmetric_per_channel(w_float)
    b_q = torch.from_numpy(rng.integers(-2000, 2000, layer.out))
    y_params = activation_params(0.0, 40.0)
    pairs = [quantize_multiplier(X_SCALE * float(s) / y_params[0]) for s in w_scales]
    w_step, b_step = qas_step_scales(X_SCALE, w_scales, qas)
    # adir's IR holds the step scales in f32; the reference uses the same values.
    w_step = torch.from_numpy(w_step.numpy().astype(np.float32).astype(np.float64))
    b_step = torch.from_numpy(b_step.numpy().astype(np.float32).astype(np.float64))
    quant = {
        "y": y_params,
        "multipliers": [m for m, _ in pairs],
        "shifts": [s for _, s in pairs],
        "w_step": w_step,
        "b_step": b_step,
    }
    text = step_ir(
        layer, quant["multipliers"], quant["shifts"], y_params, w_step.numpy(), b_step.numpy()
    )
    fc = torch.randn(CLASSES, H * W * layer.out) * 0.05
    return text, quant, w_q, b_q, fc


@functools.cache
def train(layer: Layer, qas: bool) -> tuple[str, list[list[np.ndarray]], int]:
    """20 steps in adir's interpreter, each checked against the reference (module docstring);
    returns the IR, each step's arguments (the state before it) and how many weight entries
    the updates moved."""
    text, quant, w_q, b_q, fc = setup(layer, qas)
    session = Session(parse_module(text, "level2.mlir"))
    rng = np.random.default_rng(0)
    adir_w = w_q.permute(*layer.from_oihw).numpy().astype(np.int8)
    adir_b = b_q.numpy().astype(np.int32)
    ref_w, ref_b = w_q, b_q
    moved, steps = 0, []
    for step in range(STEPS):
        x_q = torch.from_numpy(rng.integers(-128, 128, (N, C, H, W)))
        label = torch.tensor([step % CLASSES])
        args = [
            x_q.permute(0, 2, 3, 1).numpy().astype(np.int8),
            adir_w,
            adir_b,
            label.numpy().astype(np.int32),
            fc.numpy(),
        ]
        steps.append(args)
        loss, new_w, new_b, y, gw, gb, gx = session.call("step", *args)
        ref_loss, ref_w1, ref_b1, ref_y, ref_gw, ref_gb, ref_gx = reference_step(
            layer, x_q, ref_w, ref_b, label, fc, quant
        )
        where = f"step {step}"
        np.testing.assert_array_equal(y, ref_y.permute(0, 2, 3, 1).numpy(), err_msg=where)
        np.testing.assert_allclose(float(loss), ref_loss, rtol=1e-5, err_msg=where)
        for got, want in [
            (gw, ref_gw.permute(*layer.from_oihw)),
            (gb, ref_gb),
            (gx, ref_gx.permute(0, 2, 3, 1)),
        ]:
            scale = float(want.abs().max())
            np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-5 * scale, err_msg=where)
        np.testing.assert_array_equal(
            new_w, ref_w1.permute(*layer.from_oihw).numpy(), err_msg=where
        )
        np.testing.assert_array_equal(new_b, ref_b1.numpy(), err_msg=where)
        moved += int((new_w != adir_w).sum())
        adir_w, adir_b, ref_w, ref_b = new_w, new_b, ref_w1, ref_b1
    return text, steps, moved


@pytest.mark.parametrize("layer", LAYERS, ids=LAYER_IDS)
@pytest.mark.parametrize("qas", [True, False])
def test_level2_conv_trains_as_the_pytorch_reference(layer: Layer, qas: bool) -> None:
    """With QAS the steps lr * g * s^-2 are of the order of one integer, so updates move
    weights (checked: some entries change); without QAS they are lr * g, far below one half,
    and round to nothing: the int8 weight never moves (TTE's argument for QAS)."""
    _, _, moved = train(layer, qas)
    if qas:
        assert moved > 0
    else:
        assert moved == 0


@pytest.mark.parametrize("layer", LAYERS, ids=LAYER_IDS)
@pytest.mark.slow
@pytest.mark.parametrize("compiler", c_compilers())
def test_level2_step_in_c_is_the_interpreter_s(layer: Layer, compiler: str) -> None:
    """The step in C with the reference kernels (ASan, UBSan) from each of the 20 states of the
    interpreter's run: the int8 output and the updated int8 weight and int32 bias bit for bit,
    the loss and the float gradients to 1e-5 (a sum's order differs between the kernels)."""
    text, steps, _ = train(layer, qas=True)
    actual = check_c_against_interpreter(
        text, "step", steps, rtol=1e-5, atol=1e-5, compiler=compiler
    )
    session = Session(parse_module(text, "level2.mlir"))
    for index, args in enumerate(steps):
        expected = session.call("step", *args)
        got = actual[index * len(expected) : (index + 1) * len(expected)]
        for position in (1, 2, 3):  # new weight, new bias, int8 output
            np.testing.assert_array_equal(got[position], expected[position], err_msg=f"{index}")


CMSIS_NN_PLAN = "infer-shapes,bufferize,select-kernels{kernels=cmsis-nn},plan-memory"


@needs_cmsis_nn
@pytest.mark.slow
@pytest.mark.parametrize("layer", LAYERS, ids=LAYER_IDS)
def test_level2_step_with_a_cmsis_nn_forward_is_the_interpreter_s(layer: Layer) -> None:
    """The forward qconv2d on CMSIS-NN (arm_convolve_wrapper_s8, arm_depthwise_conv_wrapper_s8;
    the backward and the update
    on adir's reference kernels) from each of the 20 states: the int8 output and the updated
    integers bit for bit."""
    text, steps, _ = train(layer, qas=True)
    planned = run_pipeline(parse_module(text, "level2.mlir"), CMSIS_NN_PLAN)
    lowered = [
        op.attributes["adir.kernel_call"].data  # type: ignore[attr-defined]
        for op in planned.walk()
        if op.attributes.get("adir.kernel") == StringAttr("cmsis-nn")
    ]
    wrapper = "arm_depthwise_conv_wrapper_s8" if layer.depthwise else "arm_convolve_wrapper_s8"
    assert lowered == [wrapper]
    compiler = c_compilers()[0]
    with tempfile.TemporaryDirectory(prefix="adir-level2-") as directory:
        built = build_c(
            planned,
            "step",
            len(steps),
            Path(directory),
            compiler,
            sanitize=True,
            kernels="cmsis-nn",
            library=cmsis_nn_objects,
        )
        actual = built.run(0, steps)
    session = Session(parse_module(text, "level2.mlir"))
    for index, args in enumerate(steps):
        expected = session.call("step", *args)
        got = actual[index * len(expected) : (index + 1) * len(expected)]
        for position in (1, 2, 3):  # new weight, new bias, int8 output
            np.testing.assert_array_equal(got[position], expected[position], err_msg=f"{index}")
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, err_msg=f"loss {index}")
