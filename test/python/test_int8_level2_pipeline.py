"""Level 2 of quantized training through adir's passes (docs/quantized_training.md): a module
whose 3x3 conv (8 -> 6 channels, padding 1, fused ReLU) holds its int8 weight and int32 bias as
integer parameters (`adir.param` of i8 and i32, with QAS's step scales `adir.step_scale`), an f32
input quantized into it and its output dequantized into a frozen float classifier. `autodiff`
gives the integer gradients (through the quantized ops' VJP rules) and `insert-optimizer` steps
the integers with `qsgd_update`; the interpreter's @train_step runs 20 steps, batch 1, checked
against int8_reference's PyTorch training of the same layer: the weight and bias after every
step bit for bit, the loss to 1e-5. The module is written here, as the pass that would quantize
a float model's trainable layers into it is not built yet."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from c_testing import c_compilers, check_c_against_interpreter
from int8_reference import (
    activation_params,
    fake_quantized_conv2d,
    integer_sgd,
    qas_step_scales,
    quantize,
    quantize_multiplier,
    symmetric_per_channel,
)

from adir.context import adir_context, parse_module
from adir.diagnostics import OpError
from adir.interpreter import Session
from adir.passes.autodiff import AutodiffPass
from adir.passes.infer_shapes import InferShapesPass
from adir.passes.insert_optimizer import InsertOptimizerPass

C, H, W, OUT, CLASSES = 8, 5, 4, 6, 12
X_SCALE, X_ZERO_POINT = 0.02, 3
Y_PARAMS = activation_params(0.0, 40.0)
LR = 0.05
STEPS = 20


def floats(values: np.ndarray) -> str:
    return ", ".join(f"{float(v):.9e}" for v in np.asarray(values, np.float32).reshape(-1))


def f32_attrs(values: np.ndarray) -> str:
    return ", ".join(f"{v} : f32" for v in floats(values).split(", "))


def module_text(w_ohwi, bias, pairs, fc, w_step, b_step) -> str:
    pixels = H * W * OUT
    y_scale, y_zero_point = Y_PARAMS
    fc_rows = "[" + "], [".join(floats(row) for row in fc) + "]"
    return f"""
adir.param @w : tensor<{OUT}x3x3x{C}xi8> = dense<{w_ohwi.tolist()}> : tensor<{OUT}x3x3x{C}xi8>
    {{adir.step_scale = [{f32_attrs(w_step)}]}}
adir.param @b : tensor<{OUT}xi32> = dense<{bias.tolist()}> : tensor<{OUT}xi32>
    {{adir.step_scale = [{f32_attrs(b_step)}]}}
adir.param @fc : tensor<{CLASSES}x{pixels}xf32> = dense<[{fc_rows}]>
    : tensor<{CLASSES}x{pixels}xf32> {{trainable = false}}
func.func @loss(%x: tensor<1x{H}x{W}x{C}xf32>, %label: tensor<1xi32>) -> tensor<f32>
    attributes {{adir.loss}} {{
  %xq = adir.quantize %x {{scale = {X_SCALE} : f32, zero_point = {X_ZERO_POINT} : i32}}
         : tensor<1x{H}x{W}x{C}xf32> -> tensor<1x{H}x{W}x{C}xi8>
  %w = adir.load @w : tensor<{OUT}x3x3x{C}xi8>
  %b = adir.load @b : tensor<{OUT}xi32>
  %y = adir.qconv2d %xq, %w, %b {{input_zero_point = {X_ZERO_POINT} : i32,
         output_zero_point = {y_zero_point} : i32,
         multiplier = array<i32: {", ".join(str(m) for m, _ in pairs)}>,
         shift = array<i32: {", ".join(str(s) for _, s in pairs)}>, act_min = {y_zero_point} : i32,
         padding = array<i64: 1, 1, 1, 1>}}
         : tensor<1x{H}x{W}x{C}xi8>, tensor<{OUT}x3x3x{C}xi8>, tensor<{OUT}xi32>
         -> tensor<1x{H}x{W}x{OUT}xi8>
  %yf = adir.dequantize %y {{scale = {y_scale:.9e} : f32, zero_point = {y_zero_point} : i32}}
         : tensor<1x{H}x{W}x{OUT}xi8> -> tensor<1x{H}x{W}x{OUT}xf32>
  %flat = adir.reshape %yf {{shape = array<i64: 1, {pixels}>}}
         : tensor<1x{H}x{W}x{OUT}xf32> -> tensor<1x{pixels}xf32>
  %fc = adir.load @fc : tensor<{CLASSES}x{pixels}xf32>
  %logits = adir.matmul %flat, %fc {{transpose_b}}
         : tensor<1x{pixels}xf32>, tensor<{CLASSES}x{pixels}xf32> -> tensor<1x{CLASSES}xf32>
  %loss = adir.cross_entropy %logits, %label : tensor<1x{CLASSES}xf32>, tensor<1xi32> -> tensor<f32>
  func.return %loss : tensor<f32>
}}
"""


def quantized_module(qas: bool = True):
    """The module (a choice of scales: seeded weights, symmetric per channel; outputs over
    [0, 40]), and what the reference needs: the OIHW weight, bias, multipliers, classifier,
    step scales."""
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    w_q, w_scales = symmetric_per_channel(torch.randn(OUT, C, 3, 3) * 0.3)
    bias = torch.from_numpy(rng.integers(-2000, 2000, OUT))
    pairs = [quantize_multiplier(X_SCALE * float(s) / Y_PARAMS[0]) for s in w_scales]
    fc = (torch.randn(CLASSES, H * W * OUT) * 0.05).float()
    w_step, b_step = qas_step_scales(X_SCALE, w_scales, qas)
    w_step = w_step.numpy().astype(np.float32)
    b_step = b_step.numpy().astype(np.float32)
    text = module_text(w_q.permute(0, 2, 3, 1).numpy(), bias.numpy(), pairs, fc, w_step, b_step)
    module = parse_module(text, "level2_pipeline.mlir")
    module.verify()
    return module, (w_q, bias, pairs, fc, w_step, b_step)


def training_step(module) -> None:
    for pass_ in (InferShapesPass(), AutodiffPass(), InsertOptimizerPass(kind="sgd", lr=LR)):
        pass_.apply(adir_context(), module)


def test_integer_parameters_train_with_qsgd_update_as_the_reference() -> None:
    module, (w_q, bias, pairs, fc, w_step, b_step) = quantized_module()
    training_step(module)
    updates = [op for op in module.walk() if op.name == "adir.qsgd_update"]
    assert len(updates) == 2  # the weight and the bias; the classifier is frozen
    session = Session(module)
    rng = np.random.default_rng(0)
    ref_w, ref_b = w_q, bias
    moved = 0
    for step in range(STEPS):
        x = torch.from_numpy(rng.uniform(-2.0, 2.0, (1, H, W, C)).astype(np.float32))
        label = torch.tensor([step % CLASSES])
        (loss,) = session.call("train_step", x.numpy(), label.numpy().astype(np.int32))
        x_q = quantize(x.permute(0, 3, 1, 2), X_SCALE, X_ZERO_POINT)
        w = ref_w.double().requires_grad_(True)
        b = ref_b.double().requires_grad_(True)
        _, y = fake_quantized_conv2d(
            x_q.double(),
            X_ZERO_POINT,
            w,
            b,
            [m for m, _ in pairs],
            [s for _, s in pairs],
            Y_PARAMS[1],
            Y_PARAMS[1],
            127,
            (1, 1),
            (1, 1, 1, 1),
        )
        real = (y - Y_PARAMS[1]) * Y_PARAMS[0]
        ref_loss = F.cross_entropy(real.permute(0, 2, 3, 1).reshape(1, -1) @ fc.double().T, label)
        ref_loss.backward()
        assert w.grad is not None and b.grad is not None
        new_w = integer_sgd(ref_w, w.grad, LR, torch.from_numpy(w_step).double(), -127, 127)
        new_b = integer_sgd(
            ref_b, b.grad, LR, torch.from_numpy(b_step).double(), -(2**31), 2**31 - 1
        )
        where = f"step {step}"
        np.testing.assert_allclose(float(loss), ref_loss.item(), rtol=1e-5, err_msg=where)
        got_w = session.params["w"]
        assert got_w.dtype == np.int8
        np.testing.assert_array_equal(got_w, new_w.permute(0, 2, 3, 1).numpy(), err_msg=where)
        np.testing.assert_array_equal(session.params["b"], new_b.numpy(), err_msg=where)
        moved += int((new_w != ref_w).sum())
        ref_w, ref_b = new_w, new_b
    assert moved > 0  # QAS's steps move the integers


def test_an_integer_parameter_trains_with_plain_sgd_only() -> None:
    module, _ = quantized_module()
    InferShapesPass().apply(adir_context(), module)
    AutodiffPass().apply(adir_context(), module)
    with pytest.raises(OpError, match=r"@w is an integer parameter .* plain SGD only"):
        InsertOptimizerPass(kind="adam", lr=LR).apply(adir_context(), module)


@pytest.mark.slow
@pytest.mark.parametrize("compiler", c_compilers())
def test_the_trained_integers_in_c_are_the_interpreter_s(compiler: str) -> None:
    """The same module through autodiff, insert-optimizer, bufferize and plan-memory to C
    (int8_t and int32_t parameters in RAM, qsgd_update in place; ASan, UBSan), 20 steps: each
    step's loss to 1e-5 of the interpreter's. The loss of step k is computed from the integers
    after step k - 1, which the C parameter API (f32 parameters only) does not give out; the
    step's kernels are bit for bit in test_int8_level2_training.py."""
    module, _ = quantized_module()
    rng = np.random.default_rng(0)
    steps = []
    for step in range(STEPS):
        x = rng.uniform(-2.0, 2.0, (1, H, W, C)).astype(np.float32)
        steps.append([x, np.array([step % CLASSES], np.int32)])
    check_c_against_interpreter(
        module,
        "train_step",
        steps,
        differentiate=f"autodiff,insert-optimizer{{kind=sgd lr={LR}}}",
        rtol=1e-5,
        atol=1e-6,
        compiler=compiler,
    )
