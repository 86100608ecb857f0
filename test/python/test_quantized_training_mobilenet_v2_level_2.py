"""Level 2 of quantized training (docs/quantized_training.md) on MobileNetV2-w0.35 at 128x128
(examples/torch/mobilenet_v2.py, TTE's model and resolution), batch 1, SGD at lr 2^-8, QAS,
20 steps, against mobilenet_v2_int8_reference.py's PyTorch training of the same int8 network.

The step is `--quantize-frozen --quantize-level=2`'s: `quantize-frozen-prefix{level=2}`,
`autodiff`, `insert-optimizer{kind=sgd}`, then the three lowerings of the frozen prefix
(`fuse-expand-depthwise`, `in-place-depthwise`, `fuse-quantize-conv`) that the flag runs. Two
schemes:

- `last:1`: the classifier a `qfully_connected` on an int8 weight and int32 bias that train,
  the whole backbone the frozen int8 prefix with all three lowerings (16 fused expansions, the
  first block's depthwise conv in place, the image quantized inside the stem);
- `last:7`: the last block's depthwise conv, its projection, the 1280-channel conv (each with
  its batch norm folded) and the classifier train as int8 layers: the backward crosses two int8
  convs (`qconv2d`'s input gradient), the depthwise weight's step scales lie on axis 3, and the
  global average pool between the last conv and the classifier runs in f32 between a
  dequantize and a quantize; 15 expansions fuse (the last block's feeds a depthwise conv that
  trains, which needs the expansion's output whole for its weight gradient).

Checked at each step: every int8 tensor of @loss (the image's quantization, the 52 conv outputs,
the 10 residual sums, the pooled features, the int8 logits) bit for bit; the loss and the
integer gradients (`@loss_grad`) to 1e-5 of the reference's largest magnitude (float32 against
float64); the lowered step's loss to 1e-5 and every integer parameter after its update bit for
bit. The reference's update is `integer_sgd_float32` (qsgd_update's float32 step).
"""

from __future__ import annotations

import copy
import tempfile
import time
from pathlib import Path

import int8_reference as ref
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from c_testing import build_c, function, interpreter_run, run_pipeline
from mobilenet_v2_int8_reference import INT32, QuantizedMobileNetV2, float_ranges
from test_quantize_frozen_prefix import assert_close_to_scale, with_results
from test_quantize_frozen_prefix_mobilenet_v2 import calibration_inputs, mobilenet_v2
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType
from xdsl.rewriter import Rewriter

from adir.frontends.torch_import import import_module
from adir.interpreter import Session

STEPS = 20
# 2^-8 (f32 holds it exactly): at DS-CNN's 0.0625 (2^-4) the QAS steps of the first two updates
# push every int8 logit of this randomly initialised classifier to its clamp (calibration gave
# the logits the range of an untrained head), after which every gradient is 0 and the
# remaining steps would check nothing; at 2^-8 some logit stays inside its clamp at each of the
# 20 steps (asserted), so each step's gradients are alive.
LR = 0.00390625
SHAPE = (1, 3, 128, 128)
CLASSES = 10
LOWERINGS = "fuse-expand-depthwise,in-place-depthwise,fuse-quantize-conv"
INT8_OPS = ("adir.quantize", "adir.qconv2d", "adir.qadd", "adir.qavgpool2d")
INT8_OPS += ("adir.qfully_connected",)
# The conv weights that `last:7` trains, in the network's (and the parameters') order.
LAST_7_CONVS = ("features_17_conv_3_weight", "features_17_conv_6_weight", "features_18_0_weight")
# `last:11` adds the last block's expansion and the projection of the block before it, whose
# output feeds that block's residual sum.
LAST_11_CONVS = ("features_16_conv_6_weight", "features_17_conv_0_weight", *LAST_7_CONVS)


def training_data() -> list[tuple[np.ndarray, np.ndarray]]:
    generator = torch.Generator().manual_seed(1)
    return [
        (
            torch.randn(SHAPE, generator=generator).numpy(),
            torch.randint(0, CLASSES, (1,), generator=generator).numpy().astype(np.int32),
        )
        for _ in range(STEPS)
    ]


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> dict:
    calibration = tmp_path_factory.mktemp("calibration") / "inputs.npy"
    np.save(calibration, calibration_inputs())
    return {"net": mobilenet_v2(), "calibration": calibration}


def level_2(model: dict, scheme: str) -> dict:
    """The step of `scheme` (and its loss's gradient, unlowered), and the reference's
    quantized network from the ranges of the same float values that level 2 calibrates: the
    scheme's @loss after freeze-batchnorm (which folds only the frozen batch norms)."""
    x = torch.from_numpy(training_data()[0][0])
    imported = import_module(copy.deepcopy(model["net"]), (x,), loss="cross_entropy", train=scheme)
    float_loss = run_pipeline(imported, "infer-shapes,freeze-batchnorm")
    quantized = run_pipeline(
        float_loss,
        f'quantize-frozen-prefix{{level=2 qas=true calibration="{model["calibration"]}"}}',
    )
    step = run_pipeline(quantized, f"autodiff,insert-optimizer{{kind=sgd lr={LR}}}")
    return {
        "step": step,
        "lowered": run_pipeline(step, LOWERINGS),
        "grad": run_pipeline(quantized, "autodiff"),
        "reference": QuantizedMobileNetV2(
            model["net"], float_ranges(float_loss, calibration_inputs())
        ),
    }


def adir_layout(weight: torch.Tensor, depthwise: bool) -> torch.Tensor:
    """OIHW -> adir's OHWI, or [1, KH, KW, O] for a depthwise weight."""
    return weight.permute(1, 2, 3, 0) if depthwise else weight.permute(0, 2, 3, 1)


class Training:
    """The reference's integer state, and one step of its training (forward, autograd,
    integer_sgd_float32)."""

    def __init__(self, net: torch.nn.Module, q: QuantizedMobileNetV2, convs: tuple[str, ...]):
        self.net, self.q = net, q
        self.convs = [self.q.conv(name) for name in convs]
        # The classifier's input: the int8 pool's (the last conv's scale) with nothing else
        # trained, else the f32 pool's quantization (calibrated on the pooled range).
        self.pooled = ref.activation_params(*q.pooled_range) if convs else q.features
        self.logits = ref.activation_params(*self.q.logits_range)
        fc = self.net.classifier.weight.detach()
        w_q, w_scale = ref.symmetric_per_channel(fc.reshape(1, -1))  # one scale (TFLite's FC)
        w_scales = w_scale.repeat(fc.shape[0])
        self.fc_multiplier = ref.quantize_multiplier(
            self.pooled[0] * float(w_scale[0]) / self.logits[0]
        )
        b = self.net.classifier.bias.detach().double() / (self.pooled[0] * w_scales.double())
        self.state = {c.name: [c.weight, c.bias] for c in self.convs}
        self.state["classifier_weight"] = [w_q.reshape(fc.shape), ref.round_half_away(b).long()]
        fc_steps = ref.qas_step_scales(self.pooled[0], w_scales, True)
        self.steps = {c.name: c.step_scales() for c in self.convs}
        self.steps["classifier_weight"] = tuple(s.float() for s in fc_steps)

    def names(self) -> list[str]:
        """adir's integer parameters, in the module's order."""
        return [f"{n}_q{suffix}" for n in self.state for suffix in ("", "_bias")]

    def step(self, x: np.ndarray, label: np.ndarray) -> dict:
        leaves = {
            n: [t.double().requires_grad_(True) for t in pair] for n, pair in self.state.items()
        }
        tensors, q, d = self.q.forward(torch.from_numpy(x), leaves)
        scale, zero_point = self.q.features
        if d is None:  # the int8 pool (nothing before the classifier trains)
            p_exact = ref.qavgpool(q)
            p = p_exact.double().reshape(1, -1)
        else:  # the f32 pool between a dequantize and a quantize
            pooled32 = ref.dequantize(q, scale, zero_point).mean(dim=(2, 3))
            p_exact = ref.quantize(pooled32, *self.pooled)
            t = ((d - zero_point) * scale).mean(dim=(2, 3)) / self.pooled[0]
            inside = (t > -128.5 - self.pooled[1]) & (t < 127.5 - self.pooled[1])
            # quantize's VJP: straight through the rounding, slope 1 / scale, inside the clamp.
            p = torch.where(inside, t + (p_exact.double() - t).detach(), p_exact.double())
        tensors.append(p_exact)
        fw, fb = leaves["classifier_weight"]
        logits_exact, logits = ref.fake_quantized_linear(
            p, self.pooled[1], fw, fb, *self.fc_multiplier, self.logits[1], -128, 127
        )
        tensors.append(logits_exact)
        loss = F.cross_entropy((logits - self.logits[1]) * self.logits[0], torch.from_numpy(label))
        loss.backward()
        grads = {}
        for name, (w, b) in leaves.items():
            assert w.grad is not None and b.grad is not None
            grads[name] = (w.grad, b.grad)
            w_step, b_step = self.steps[name]
            weight, bias = self.state[name]
            self.state[name] = [
                ref.integer_sgd_float32(weight, w.grad, LR, w_step, -127, 127),
                ref.integer_sgd_float32(bias, b.grad, LR, b_step, *INT32),
            ]
        return {"tensors": tensors, "loss": loss.item(), "grads": grads}

    def adir_view(self, name: str, weight: torch.Tensor) -> torch.Tensor:
        if name == "classifier_weight":
            return weight
        return adir_layout(weight, self.q.conv(name).groups > 1)


def check_level_2(model: dict, scheme: str, convs: tuple[str, ...]) -> dict:
    """The 20 steps of `scheme` against the reference; returns what the tests assert on."""
    start = time.time()
    case = level_2(model, scheme)
    training = Training(model["net"], case["reference"], convs)
    names = training.names()
    params = {op.sym_name.data: op for op in case["lowered"].ops if op.name == "adir.param"}
    assert [n for n in params if n != "optimizer_step"] == names
    step, grad = Session(case["lowered"]), Session(case["grad"])
    probe = Int8Probe(case["step"])
    moved = dict.fromkeys(names, 0)
    for k, (x, label) in enumerate(training_data()):
        where = f"{scheme}, step {k}"
        before = {n: step.params[n].copy() for n in names}
        want = training.step(x, label.astype(np.int64))
        tensors = probe.call(before, x, label)
        assert len(tensors) == len(want["tensors"]) == 1 + 52 + 10 + 2
        for index, (ours, theirs) in enumerate(zip(tensors, want["tensors"], strict=True)):
            np.testing.assert_array_equal(
                ours.reshape(theirs.shape), theirs.numpy(), err_msg=f"int8 tensor #{index}, {where}"
            )
        grad.params.update(before)
        loss_g, *grads = grad.call("loss_grad", x, label)
        np.testing.assert_allclose(float(loss_g), want["loss"], rtol=1e-5, err_msg=where)
        for index, name in enumerate(training.state):
            w_grad, b_grad = want["grads"][name]
            assert_close_to_scale(
                grads[2 * index],
                training.adir_view(name, w_grad).numpy(),
                f"{name}_q gradient, {where}",
            )
            assert_close_to_scale(grads[2 * index + 1], b_grad.numpy(), f"{name}_q_bias, {where}")
        logits = want["tensors"][-1]
        assert bool(((logits > -128) & (logits < 127)).any()), f"every logit clamped, {where}"
        (loss,) = step.call("train_step", x, label)
        np.testing.assert_allclose(float(loss), want["loss"], rtol=1e-5, err_msg=where)
        for name, (weight, bias) in training.state.items():
            for symbol, value in (
                (f"{name}_q", training.adir_view(name, weight)),
                (f"{name}_q_bias", bias),
            ):
                np.testing.assert_array_equal(
                    step.params[symbol], value.numpy(), err_msg=f"{symbol}, {where}"
                )
                moved[symbol] += int((step.params[symbol] != before[symbol]).sum())
    print(f"{scheme}: {time.time() - start:.1f} s; integer updates over {STEPS} steps: {moved}")
    return {"case": case, "moved": moved}


class Int8Probe:
    """@loss cut to return its int8 tensors (NCHW), in program order."""

    def __init__(self, module) -> None:
        probe, _ = with_results(module, "loss", lambda op: op.name in INT8_OPS)
        block = function(probe, "loss").body.block
        self.ops = [op.name for op in block.ops if op.name in INT8_OPS]
        self.session = Session(probe)

    def call(self, params: dict, x: np.ndarray, label: np.ndarray) -> list[np.ndarray]:
        self.session.params.update(params)
        results = self.session.call("loss", x, label)
        return [
            r.transpose(0, 3, 1, 2) if r.ndim == 4 and name != "adir.quantize" else r
            for name, r in zip(self.ops, results, strict=True)
        ]


@pytest.mark.slow
def test_last_1_is_the_reference(model: dict) -> None:
    """The classifier int8 on the int8 backbone with the three lowerings."""
    checked = check_level_2(model, "last:1", ())
    ops = [op.name for op in function(checked["case"]["lowered"], "train_step").body.block.ops]
    assert ops.count("adir.qexpand_depthwise") == 16 and ops.count("adir.quantize_qconv2d") == 1
    in_place = [
        op
        for op in function(checked["case"]["lowered"], "train_step").body.block.ops
        if "in_place" in op.properties
    ]
    assert len(in_place) == 1
    assert checked["moved"]["classifier_weight_q"] > 0  # QAS's steps move the int8 weight


@pytest.mark.slow
def test_last_7_is_the_reference(model: dict) -> None:
    """Three int8 convs and the classifier train; the backward crosses two int8 convs."""
    checked = check_level_2(model, "last:7", LAST_7_CONVS)
    ops = [op.name for op in function(checked["case"]["lowered"], "train_step").body.block.ops]
    assert ops.count("adir.qexpand_depthwise") == 15  # not the last block's: its depthwise trains
    assert ops.count("adir.conv2d_grad_input") == 2  # through the 1280-channel conv, projection
    lowered = checked["case"]["lowered"]
    params = {op.sym_name.data: op for op in lowered.ops if op.name == "adir.param"}
    assert params["features_17_conv_3_weight_q"].attributes["adir.step_axis"].value.data == 3
    moved = checked["moved"]
    # Every bias moves, and the projection's and the classifier's weights; the depthwise and
    # the 1280-channel conv's weight steps stay below one half at this rate (in the
    # reference too), so their weights are checked rounding every step to 0.
    assert all(moved[f"{name}_q_bias"] > 0 for name in (*LAST_7_CONVS, "classifier_weight"))
    assert moved["features_17_conv_6_weight_q"] > 0 and moved["classifier_weight_q"] > 0


def returning_trained_outputs(module):
    """`module` whose @train_step also returns the int8 outputs of its trained layers (the
    qconv2d and qfully_connected ops whose weight is a loaded parameter), computed from the
    integers before that step's update: in C the integer parameters are not in the parameter
    API, so these show them."""
    probe = module.clone()
    target = function(probe, "train_step")
    values = [
        op.results[0]
        for op in target.body.block.ops
        if op.name in ("adir.qconv2d", "adir.qfully_connected")
        and op.operands[1].owner.name == "adir.load"
    ]
    last = target.body.block.last_op
    assert last is not None
    returned = list(last.operands)
    Rewriter.replace_op(last, func.ReturnOp(*returned, *values))
    target.function_type = FunctionType.from_lists(
        target.function_type.inputs.data, [v.type for v in (*returned, *values)]
    )
    return probe, len(values)


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["last:1", "last:7"])
def test_the_lowered_step_in_c_is_the_interpreter(model: dict, scheme: str) -> None:
    """The lowered step planned with the reference kernels, in C (gcc, ASan and UBSan), 20
    steps: each step's loss to 1e-5 and the int8 outputs of its trained layers bit for bit
    the interpreter's (the integers that the previous updates made), and the trained integer
    parameters after the last step bit for bit."""
    case = level_2(model, scheme)
    lowered, count = returning_trained_outputs(case["lowered"])
    assert count == (1 if scheme == "last:1" else 4)
    planned = run_pipeline(
        lowered,
        "fuse-weight-updates,reorder-updates,bufferize,select-kernels{kernels=reference},"
        "plan-memory",
    )
    steps = [[x, label] for x, label in training_data()]
    start = time.time()
    expected = interpreter_run(planned, "train_step", 0, steps)
    interpreted = time.time() - start
    with tempfile.TemporaryDirectory(prefix="adir-mbv2-level2-") as directory:
        start = time.time()
        built = build_c(planned, "train_step", STEPS, Path(directory), "gcc", sanitize=True)
        compiled = time.time() - start
        start = time.time()
        actual = built.run(0, steps)
        ran = time.time() - start
    print(
        f"{scheme}: interpreter {interpreted:.1f} s, gcc (ASan, UBSan) build {compiled:.1f} s, "
        f"{STEPS} steps in C {ran:.1f} s"
    )
    # each step's loss and trained outputs, then the parameters after the last step: the
    # integer weight and bias of each trained layer (no f32 parameter trains)
    per_step = STEPS * (1 + count)
    assert len(actual) == len(expected) == per_step + 2 * count
    for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
        where = f"step {index // (1 + count)}, result {index % (1 + count)}"
        if index < per_step and index % (1 + count) == 0:
            np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"loss, {where}")
        elif index < per_step:
            np.testing.assert_array_equal(got, want, err_msg=where)
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"parameter {index - per_step}")


@pytest.mark.slow
def test_last_11_crosses_a_residual_sum(model: dict) -> None:
    """`last:11`: the backward crosses block 16's residual sum, which level 2 keeps f32
    between a dequantize and a quantize (no int8 ADD VJP), into its trained projection."""
    checked = check_level_2(model, "last:11", LAST_11_CONVS)
    ops = [op.name for op in function(checked["case"]["lowered"], "train_step").body.block.ops]
    assert ops.count("adir.qadd") == 9 and ops.count("adir.add") == 1
    assert checked["moved"]["features_16_conv_6_weight_q_bias"] > 0
