"""Level 2 of quantized training on a fully-connected layer (docs/quantized_training.md): an
int8 classifier [10, 40] whose int8 weight (one scale, TFLite's FULLY_CONNECTED) and int32
bias train under a cross entropy of its dequantized logits, batch 1, SGD with QAS, 20 steps.
The step in adir's ops (qfully_connected forward; qrequantize_grad; the weight gradient a
matmul of the int8 input dequantized where it is read; qsgd_update with one step scale) in
the interpreter against int8_reference's PyTorch training of the same layer: the int8 logits
and the weight and bias after every update bit for bit, the loss and the integer gradients to
1e-5 of their tensor's largest magnitude; then the step in C from each state, bit for bit on
the integers. No activation: the clamp is int8's own range, so a saturated logit gets no
gradient."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from c_testing import c_compilers, check_c_against_interpreter
from int8_reference import (
    activation_params,
    fake_quantized_linear,
    integer_sgd,
    quantize_multiplier,
    symmetric_per_channel,
)

from adir.context import parse_module
from adir.interpreter import Session

K, M = 40, 10
X_SCALE, X_ZERO_POINT = 0.05, -10
LR = 0.02
STEPS = 20


def step_ir(multiplier: int, shift: int, y_params: tuple[float, int], w_step: float, b_step):
    y_scale, y_zero_point = y_params
    requant = f"multiplier = array<i32: {multiplier}>, shift = array<i32: {shift}>"
    b_steps = ", ".join(f"{float(v):.9e} : f32" for v in b_step)
    return f"""
func.func @step(%x: tensor<1x{K}xi8>, %w: tensor<{M}x{K}xi8>, %b: tensor<{M}xi32>,
                %label: tensor<1xi32>)
    -> (tensor<f32>, tensor<{M}x{K}xi8>, tensor<{M}xi32>, tensor<1x{M}xi8>, tensor<{M}x{K}xf32>,
        tensor<{M}xf32>, tensor<1x{K}xf32>) {{
  %y = adir.qfully_connected %x, %w, %b {{input_zero_point = {X_ZERO_POINT} : i32,
         output_zero_point = {y_zero_point} : i32, {requant}}}
         : tensor<1x{K}xi8>, tensor<{M}x{K}xi8>, tensor<{M}xi32> -> tensor<1x{M}xi8>
  %logits = adir.dequantize %y {{scale = {y_scale:.9e} : f32, zero_point = {y_zero_point} : i32}}
         : tensor<1x{M}xi8> -> tensor<1x{M}xf32>
  %loss = adir.cross_entropy %logits, %label : tensor<1x{M}xf32>, tensor<1xi32> -> tensor<f32>
  %one = adir.constant dense<1.0> : tensor<f32>
  %glogits = adir.cross_entropy_grad %logits, %label, %one
         : tensor<1x{M}xf32>, tensor<1xi32>, tensor<f32> -> tensor<1x{M}xf32>
  %sy = adir.constant dense<{y_scale:.9e}> : tensor<f32>
  %gy = adir.mul %glogits, %sy : tensor<1x{M}xf32>, tensor<f32> -> tensor<1x{M}xf32>
  %gacc = adir.qrequantize_grad %y, %gy {{{requant}}}
         : tensor<1x{M}xi8>, tensor<1x{M}xf32> -> tensor<1x{M}xf32>
  %xbar = adir.dequantize %x {{scale = 1.0 : f32, zero_point = {X_ZERO_POINT} : i32}}
         : tensor<1x{K}xi8> -> tensor<1x{K}xf32>
  %gw = adir.matmul %gacc, %xbar {{transpose_a}}
         : tensor<1x{M}xf32>, tensor<1x{K}xf32> -> tensor<{M}x{K}xf32>
  %gb = adir.sum %gacc {{axes = array<i64: 0>}} : tensor<1x{M}xf32> -> tensor<{M}xf32>
  %wbar = adir.dequantize %w {{scale = 1.0 : f32, zero_point = 0 : i32}}
         : tensor<{M}x{K}xi8> -> tensor<{M}x{K}xf32>
  %gx = adir.matmul %gacc, %wbar : tensor<1x{M}xf32>, tensor<{M}x{K}xf32> -> tensor<1x{K}xf32>
  %lr = adir.constant dense<{LR}> : tensor<f32>
  %w1 = adir.qsgd_update %w, %gw, %lr {{step_scale = [{w_step:.9e} : f32]}}
         : tensor<{M}x{K}xi8>, tensor<{M}x{K}xf32>, tensor<f32> -> tensor<{M}x{K}xi8>
  %b1 = adir.qsgd_update %b, %gb, %lr {{step_scale = [{b_steps}]}}
         : tensor<{M}xi32>, tensor<{M}xf32>, tensor<f32> -> tensor<{M}xi32>
  func.return %loss, %w1, %b1, %y, %gw, %gb, %gx : tensor<f32>, tensor<{M}x{K}xi8>,
         tensor<{M}xi32>, tensor<1x{M}xi8>, tensor<{M}x{K}xf32>, tensor<{M}xf32>,
         tensor<1x{K}xf32>
}}
"""


@functools.cache
def train() -> tuple[str, list[list[np.ndarray]], int]:
    """20 steps checked against the reference; the IR, each step's arguments, and how many
    weight entries the updates moved."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    w_q, w_scales = symmetric_per_channel((torch.randn(M, K) * 0.2).reshape(1, -1))
    w_q, s_w = w_q.reshape(M, K), float(w_scales[0])
    b_q = torch.from_numpy(rng.integers(-3000, 3000, M))
    y_params = activation_params(-20.0, 20.0)
    multiplier, shift = quantize_multiplier(X_SCALE * s_w / y_params[0])
    # QAS: s_W^-2 for the weight, (s_x s_W)^-2 for the bias; held in f32 by the IR.
    w_step = float(np.float32(1.0 / s_w**2))
    b_step = np.full(M, np.float32(1.0 / (X_SCALE * s_w) ** 2))
    text = step_ir(multiplier, shift, y_params, w_step, b_step)
    session = Session(parse_module(text, "level2_linear.mlir"))
    adir_w, adir_b = w_q.numpy().astype(np.int8), b_q.numpy().astype(np.int32)
    ref_w, ref_b = w_q, b_q
    moved, steps = 0, []
    for step in range(STEPS):
        x_q = torch.from_numpy(rng.integers(-128, 128, (1, K)))
        label = torch.tensor([step % M])
        args = [x_q.numpy().astype(np.int8), adir_w, adir_b, label.numpy().astype(np.int32)]
        steps.append(args)
        loss, new_w, new_b, y, gw, gb, gx = session.call("step", *args)
        x = x_q.double().requires_grad_(True)
        w = ref_w.double().requires_grad_(True)
        b = ref_b.double().requires_grad_(True)
        exact, logits_q = fake_quantized_linear(
            x, X_ZERO_POINT, w, b, multiplier, shift, y_params[1], -128, 127
        )
        ref_loss = F.cross_entropy((logits_q - y_params[1]) * y_params[0], label)
        ref_loss.backward()
        assert x.grad is not None and w.grad is not None and b.grad is not None
        ref_w1 = integer_sgd(ref_w, w.grad, LR, torch.full((M,), w_step).double(), -127, 127)
        ref_b1 = integer_sgd(
            ref_b, b.grad, LR, torch.from_numpy(b_step).double(), -(2**31), 2**31 - 1
        )
        where = f"step {step}"
        np.testing.assert_array_equal(y, exact.numpy(), err_msg=where)
        np.testing.assert_allclose(float(loss), ref_loss.item(), rtol=1e-5, err_msg=where)
        for got, want in [(gw, w.grad), (gb, b.grad), (gx, x.grad)]:
            scale = float(want.abs().max())
            np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-5 * scale, err_msg=where)
        np.testing.assert_array_equal(new_w, ref_w1.numpy(), err_msg=where)
        np.testing.assert_array_equal(new_b, ref_b1.numpy(), err_msg=where)
        moved += int((new_w != adir_w).sum())
        adir_w, adir_b, ref_w, ref_b = new_w, new_b, ref_w1, ref_b1
    return text, steps, moved


def test_level2_linear_trains_as_the_pytorch_reference() -> None:
    """QAS makes the integer steps of the order of one: the updates move weights."""
    _, _, moved = train()
    assert moved > 0


@pytest.mark.slow
@pytest.mark.parametrize("compiler", c_compilers())
def test_level2_linear_step_in_c_is_the_interpreter_s(compiler: str) -> None:
    text, steps, _ = train()
    actual = check_c_against_interpreter(
        text, "step", steps, rtol=1e-5, atol=1e-5, compiler=compiler
    )
    session = Session(parse_module(text, "level2_linear.mlir"))
    for index, args in enumerate(steps):
        expected = session.call("step", *args)
        got = actual[index * len(expected) : (index + 1) * len(expected)]
        for position in (1, 2, 3):  # new weight, new bias, int8 logits
            np.testing.assert_array_equal(got[position], expected[position], err_msg=f"{index}")
