"""quantize-frozen-prefix{level=2} (level 2 of quantized training, docs/quantized_training.md):
DS-CNN in eval mode (test_quantize_frozen_prefix's model, batch-norm statistics from a seeded
generator) with `train="last:1"`: the frozen backbone int8 as level 1 makes it, and the
classifier a `qfully_connected` whose int8 weight and int32 bias are parameters, trained by
`autodiff` + `insert-optimizer{kind=sgd}` with `qsgd_update` (QAS step scales), batch 1, 20
steps.

The reference: test_quantize_frozen_prefix's int8 backbone (TFLite's formulas in PyTorch), the
classifier quantized per tensor (TFLite's FULLY_CONNECTED: one scale, symmetric; the bias at
s_x s_W) and trained by int8_reference's `fake_quantized_linear` (autograd in float64 through a
straight-through rounding), `qas_step_scales` and `integer_sgd`, the scales taken from the
same calibration ranges (the float logits over the same calibration inputs). Checked: the int8
logits and the integer weight and bias after each of the 20 steps bit for bit, the loss and the
two integer gradients (from `@loss_grad`) to 1e-5 of the reference's largest magnitude."""

from __future__ import annotations

import copy
import re
import tempfile
from pathlib import Path

import int8_reference as ref
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from c_testing import build_c, c_compilers, function, interpreter_run, run_pipeline
from test_quantize_frozen_prefix import (
    FLOAT_STEP,
    LR,
    assert_close_to_scale,
    calibration_inputs,
    ds_cnn,
    float_ranges,
    fold,
    reference_backbone,
    training_data,
    with_results,
)

from adir.diagnostics import OpError
from adir.frontends.torch_import import import_module
from adir.interpreter import Session

PARAMS = ("fc_weight_q", "fc_weight_q_bias")


def level_2(calibration: Path, qas: bool = True) -> str:
    return f'quantize-frozen-prefix{{level=2 qas={str(qas).lower()} calibration="{calibration}"}}'


def compiled_case(tmp_path_factory, train: str) -> dict:
    net = ds_cnn()
    x, _ = training_data()[0]
    imported = import_module(
        copy.deepcopy(net), (torch.from_numpy(x),), loss="cross_entropy", train=train
    )
    calibration = tmp_path_factory.mktemp("calibration") / "inputs.npy"
    np.save(calibration, calibration_inputs())
    quantized = run_pipeline(imported, f"infer-shapes,freeze-batchnorm,{level_2(calibration)}")
    return {
        "net": net,
        "float_step": run_pipeline(imported, FLOAT_STEP),
        "step": run_pipeline(quantized, f"autodiff,insert-optimizer{{kind=sgd lr={LR}}}"),
        "grad": run_pipeline(quantized, "autodiff"),
    }


@pytest.fixture(scope="module")
def case(tmp_path_factory) -> dict:
    return compiled_case(tmp_path_factory, "last:1")


@pytest.fixture(scope="module")
def bias_case(tmp_path_factory) -> dict:
    """`bias@last:1`: the classifier's bias alone trains (TTE's bias-only update)."""
    return compiled_case(tmp_path_factory, "bias@last:1")


def logits_range(float_step, inputs: np.ndarray) -> tuple[float, float]:
    """(min, max) of the float logits (the classifier's bias add) over the calibration inputs."""
    probe, count = with_results(float_step, "loss", lambda op: op.name == "adir.add")
    assert count == 1  # DS-CNN's only add is the classifier's bias
    session = Session(probe)
    seen = [session.call("loss", x, np.zeros(1, np.int32))[0] for x in inputs]
    return float(np.min(seen)), float(np.max(seen))


def test_the_classifier_trains_integer_parameters(case: dict) -> None:
    """The classifier is a qfully_connected on i8 and i32 parameters, updated by two
    qsgd_updates; the float parameters are gone (the backbone's are constants)."""
    module = case["step"]
    ops = [op.name for op in function(module, "train_step").body.block.ops]
    assert ops.count("adir.qconv2d") == 9 and ops.count("adir.qfully_connected") == 1
    assert ops.count("adir.qsgd_update") == 2 and "adir.matmul" in ops  # the weight gradient
    params = {op.sym_name.data: op for op in module.ops if op.name == "adir.param"}
    assert sorted(params) == ["fc_weight_q", "fc_weight_q_bias", "optimizer_step"] or sorted(
        params
    ) == ["fc_weight_q", "fc_weight_q_bias"]
    assert str(params["fc_weight_q"].type) == "tensor<12x64xi8>"
    assert str(params["fc_weight_q_bias"].type) == "tensor<12xi32>"


def test_ds_cnn_level_2_is_the_reference(case: dict) -> None:
    check_against_the_reference(case, train_weight=True)


def test_a_bias_alone_trains_as_an_int32_parameter_beside_a_frozen_int8_weight(
    bias_case: dict,
) -> None:
    """`bias@last:1`: the classifier's int8 weight is a constant (flash) and its int32 bias
    the one parameter, updated by one qsgd_update with QAS's (s_x s_W)^-2; over 20 steps the
    int8 logits and the bias bit for bit the reference's (the same integer SGD, the weight
    never updated), the loss and the bias gradient to 1e-5."""
    module = bias_case["step"]
    ops = [op.name for op in function(module, "train_step").body.block.ops]
    assert ops.count("adir.qsgd_update") == 1 and ops.count("adir.qfully_connected") == 1
    params = {op.sym_name.data: str(op.type) for op in module.ops if op.name == "adir.param"}
    assert params == {"fc_weight_q_bias": "tensor<12xi32>"}
    check_against_the_reference(bias_case, train_weight=False)


def check_against_the_reference(case: dict, train_weight: bool) -> None:
    """20 steps of the case against int8_reference's training of the classifier (its weight
    too if `train_weight`, else its bias alone: the weight stays the quantizer's)."""
    trained = PARAMS if train_weight else PARAMS[1:]
    net = case["net"]
    ranges = float_ranges(case["float_step"], calibration_inputs())
    out_scale, out_zp = ref.activation_params(
        *logits_range(case["float_step"], calibration_inputs())
    )
    # The pooled features' scale: the last ReLU's (the average pool keeps its input's).
    x_scale, x_zp = ref.activation_params(*ranges[-1])
    w_q, w_scale = ref.symmetric_per_channel(net.fc.weight.detach().reshape(1, -1))
    w_q = w_q.reshape(net.fc.weight.shape)
    w_scales = w_scale.repeat(w_q.shape[0])
    b_q = ref.round_half_away(net.fc.bias.detach().double() / (x_scale * w_scales.double()))
    b_q = b_q.long()
    multiplier, shift = ref.quantize_multiplier(x_scale * float(w_scale[0]) / out_scale)
    w_step, b_step = ref.qas_step_scales(x_scale, w_scales, True)
    w_step, b_step = w_step.float(), b_step.float()  # adir.step_scale holds float32
    step, grad = Session(case["step"]), Session(case["grad"])
    logits_probe, _ = with_results(
        case["step"], "loss", lambda op: op.name == "adir.qfully_connected"
    )
    probe = Session(logits_probe)
    moved = 0
    for k, (x, label) in enumerate(training_data()):
        tensors, _ = reference_backbone(net, ranges, x)
        features = tensors[-1].reshape(1, -1)
        w = w_q.double().requires_grad_(True)
        b = b_q.double().requires_grad_(True)
        exact, y = ref.fake_quantized_linear(
            features.double(), x_zp, w, b, multiplier, shift, out_zp, -128, 127
        )
        loss = F.cross_entropy((y - out_zp) * out_scale, torch.from_numpy(label).long())
        loss.backward()
        assert w.grad is not None and b.grad is not None
        where = f"step {k}"
        for session in (grad, probe):
            session.params.update({n: step.params[n].copy() for n in trained})
        (logits,) = probe.call("loss", x, label)
        np.testing.assert_array_equal(logits, exact.numpy(), err_msg=f"int8 logits, {where}")
        if train_weight:
            loss_g, w_grad, b_grad = grad.call("loss_grad", x, label)
            assert_close_to_scale(w_grad, w.grad.numpy(), f"weight gradient, {where}")
        else:
            loss_g, b_grad = grad.call("loss_grad", x, label)
        np.testing.assert_allclose(float(loss_g), loss.item(), rtol=1e-5, err_msg=where)
        assert_close_to_scale(b_grad, b.grad.numpy(), f"bias gradient, {where}")
        (ours,) = step.call("train_step", x, label)
        np.testing.assert_allclose(float(ours), loss.item(), rtol=1e-5, err_msg=where)
        # In qsgd_update's float32 (a float64 step rounds a bias step of 2071.49997 at
        # step 3 to 2071, float32's 2071.5 to 2072).
        new_w = ref.integer_sgd_float32(w_q, w.grad, LR, w_step, -127, 127)
        new_b = ref.integer_sgd_float32(b_q, b.grad, LR, b_step, -(2**31), 2**31 - 1)
        np.testing.assert_array_equal(step.params["fc_weight_q_bias"], new_b.numpy(), err_msg=where)
        if train_weight:
            np.testing.assert_array_equal(step.params["fc_weight_q"], new_w.numpy(), err_msg=where)
            moved += int((new_w != w_q).sum())
            w_q = new_w
        else:
            moved += int((new_b != b_q).sum())
        b_q = new_b
    assert moved > 0  # QAS's steps move the int8 weight (the int32 bias when it trains alone)


def test_adam_on_the_integer_classifier_is_a_located_error(case: dict) -> None:
    with pytest.raises(OpError, match=r"@fc_weight_q is an integer parameter .* plain SGD only"):
        run_pipeline(case["grad"], f"insert-optimizer{{kind=adam lr={LR}}}")


def test_level_2_after_autodiff_is_an_error(case: dict) -> None:
    with pytest.raises(OpError, match=r"level 2 runs before autodiff"):
        run_pipeline(case["float_step"], "quantize-frozen-prefix{level=2 samples=2}")


@pytest.mark.slow
@pytest.mark.parametrize("compiler", c_compilers())
def test_level_2_in_c_is_the_interpreter(case: dict, compiler: str) -> None:
    """The 20 steps in C (reference int8 kernels, ASan, UBSan) against the interpreter of the
    same planned module: each step's loss to 1e-5. The C parameter API (f32 parameters only)
    does not give out the integers; each step's loss is computed from the previous step's
    integers, so a wrong update shows in the next loss."""
    check_c(case["step"], compiler)


@pytest.mark.slow
@pytest.mark.parametrize("compiler", c_compilers())
def test_level_2_last_3_in_c_is_the_interpreter(compiler: str) -> None:
    """As above with the last conv trained too (its qconv2d's backward, the f32 pool between
    the two int8 layers)."""
    step = run_pipeline(
        scheme("last:3"),
        "infer-shapes,freeze-batchnorm,quantize-frozen-prefix{level=2 samples=8},autodiff,"
        f"insert-optimizer{{kind=sgd lr={LR}}}",
    )
    check_c(step, compiler)


def check_c(step, compiler: str) -> None:
    module = run_pipeline(step, "fuse-weight-updates,reorder-updates,bufferize,plan-memory")
    steps = [[x, label] for x, label in training_data()]
    expected = interpreter_run(module, "train_step", 0, steps)
    with tempfile.TemporaryDirectory(prefix="adir-int8-level2-") as directory:
        built = build_c(module, "train_step", len(steps), Path(directory), compiler, sanitize=True)
        actual = built.run(0, steps)
    assert len(actual) == len(expected) >= len(steps)
    for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"array {index}")


def scheme(train: str):
    net = ds_cnn()
    x, _ = training_data()[0]
    return import_module(net, (torch.from_numpy(x),), loss="cross_entropy", train=train)


def test_bias_and_last_layer_trains_every_beta_as_an_int32_bias_of_a_frozen_int8_conv() -> None:
    """`bias+last:1` trains each batch norm's beta behind a frozen conv: the beta folds into
    the conv's int32 bias, which becomes a parameter (its int8 weight a constant), so the nine
    convs give nine i32 parameters and the classifier its i8 weight and i32 bias: eleven
    qsgd_updates, no float parameter left."""
    module = run_pipeline(
        scheme("bias+last:1"),
        "infer-shapes,freeze-batchnorm,quantize-frozen-prefix{level=2 samples=2},autodiff,"
        f"insert-optimizer{{kind=sgd lr={LR}}}",
    )
    params = {op.sym_name.data: str(op.type) for op in module.ops if op.name == "adir.param"}
    biases = {name for name, type_ in params.items() if type_.endswith("xi32>")}
    assert len(biases) == 10 and all(name.endswith("_weight_q_bias") for name in biases)
    assert set(params) - biases == {"fc_weight_q"}
    ops = [op.name for op in function(module, "train_step").body.block.ops]
    assert ops.count("adir.qsgd_update") == 11 and ops.count("adir.qconv2d") == 9


def test_a_trained_batch_norm_gamma_behind_a_frozen_conv_is_a_located_error() -> None:
    """`all@features.31` trains the last batch norm's gamma as well as its beta behind the
    frozen pointwise conv `features.30`: gamma scales the conv's weight, which is frozen, so
    level 2 refuses, naming the gamma."""
    with pytest.raises(
        OpError, match=r"@features_31_weight would fold into the int8 weight of a frozen layer"
    ):
        run_pipeline(
            scheme("all@features.31+last:1"),
            "infer-shapes,freeze-batchnorm,quantize-frozen-prefix{level=2 samples=2}",
        )


def test_a_channel_fraction_of_an_int8_layer_is_a_located_error() -> None:
    """Level 2 trains an int8 weight whole: `channels:0.5@fc` would train half of it."""
    with pytest.raises(OpError, match=r"@fc_weight trains only some output channels"):
        run_pipeline(
            scheme("channels:0.5@fc"),
            "infer-shapes,freeze-batchnorm,quantize-frozen-prefix{level=2 samples=2}",
        )


def test_last_3_trains_the_last_conv_with_its_batch_norm_folded() -> None:
    """`last:3` trains the last pointwise conv, its batch norm and the classifier: the batch
    norm is folded into the conv, whose 64x1x1x64 int8 weight and 64 int32 biases train with
    the classifier's (four qsgd_updates); the float parameters are gone."""
    module = run_pipeline(
        scheme("last:3"),
        "infer-shapes,freeze-batchnorm,quantize-frozen-prefix{level=2 samples=2},autodiff,"
        f"insert-optimizer{{kind=sgd lr={LR}}}",
    )
    params = {op.sym_name.data: str(op.type) for op in module.ops if op.name == "adir.param"}
    assert params == {
        "features_30_weight_q": "tensor<64x1x1x64xi8>",
        "features_30_weight_q_bias": "tensor<64xi32>",
        "fc_weight_q": "tensor<12x64xi8>",
        "fc_weight_q_bias": "tensor<12xi32>",
    }
    ops = [op.name for op in function(module, "train_step").body.block.ops]
    assert ops.count("adir.qsgd_update") == 4 and "adir.batchnorm_eval" not in ops


def test_ds_cnn_last_3_is_the_reference(tmp_path) -> None:
    """`last:3`: the last pointwise conv (its batch norm folded in, ReLU as the clamp) and the
    classifier train as int8. Between them the global average pool runs in f32 (the int8 pool
    has no VJP): the conv's int8 output dequantized, pooled, quantized for the classifier. The
    reference: the backbone's first eight convs as level 1's, then `fake_quantized_conv2d`,
    the f32 pool and `fake_quantize`'s straight-through rounding, `fake_quantized_linear`;
    20 steps: the int8 outputs of both layers and the four integer tensors after each update
    bit for bit, the loss and the four integer gradients to 1e-5."""
    net = ds_cnn()
    calibration = tmp_path / "inputs.npy"
    np.save(calibration, calibration_inputs())
    imported = scheme("last:3")
    quantized = run_pipeline(imported, f"infer-shapes,freeze-batchnorm,{level_2(calibration)}")
    step = Session(run_pipeline(quantized, f"autodiff,insert-optimizer{{kind=sgd lr={LR}}}"))
    grad = Session(run_pipeline(quantized, "autodiff"))
    # The ranges of the float model that level 2 calibrates, `last:3`'s: its trainable conv's
    # batch norm is an op there, which `last:1` folds into the frozen conv's weights, and the
    # two round the conv's output apart: its largest value over the calibration inputs is
    # 0.63737845 folded, 0.63737851 (one float32 ulp above) as the op computes it, and the
    # output's scale one ulp apart too.
    float_step = run_pipeline(scheme("last:3"), FLOAT_STEP)
    inputs = calibration_inputs()
    ranges = float_ranges(float_step, inputs)
    probe, _ = with_results(float_step, "loss", lambda op: op.name == "adir.global_avgpool2d")
    pooled = [Session(probe).call("loss", x, np.zeros(1, np.int32))[0] for x in inputs]
    p_scale, p_zp = ref.activation_params(float(np.min(pooled)), float(np.max(pooled)))
    out_scale, out_zp = ref.activation_params(*logits_range(float_step, inputs))
    layers = list(net.features)
    conv_index = max(i for i, layer in enumerate(layers) if isinstance(layer, torch.nn.Conv2d))
    weight, bias = fold(layers[conv_index], layers[conv_index + 1])
    x_scale, x_zp = ref.activation_params(*ranges[8])
    y_scale, y_zp = ref.activation_params(*ranges[9])
    cw_q, cw_scales = ref.symmetric_per_channel(weight)
    cb_q = ref.round_half_away(bias.double() / (x_scale * cw_scales.double())).long()
    pairs = [ref.quantize_multiplier(x_scale * float(s) / y_scale) for s in cw_scales]
    cw_step, cb_step = (s.float() for s in ref.qas_step_scales(x_scale, cw_scales, True))
    fw_q, f_scale = ref.symmetric_per_channel(net.fc.weight.detach().reshape(1, -1))
    fw_q = fw_q.reshape(net.fc.weight.shape)
    f_scales = f_scale.repeat(fw_q.shape[0])
    fb_q = ref.round_half_away(net.fc.bias.detach().double() / (p_scale * f_scales.double()))
    fb_q = fb_q.long()
    f_pair = ref.quantize_multiplier(p_scale * float(f_scale[0]) / out_scale)
    fw_step, fb_step = (s.float() for s in ref.qas_step_scales(p_scale, f_scales, True))
    names = ("features_30_weight_q", "features_30_weight_q_bias", "fc_weight_q", "fc_weight_q_bias")
    picked = ("adir.qconv2d", "adir.qfully_connected")
    outputs, _ = with_results(step.module, "loss", lambda op: op.name in picked)
    outputs_session = Session(outputs)
    conv_moves = 0
    for k, (x, label) in enumerate(training_data()):
        tensors, _ = reference_backbone(net, ranges, x)
        leaves = [t.double().requires_grad_(True) for t in (cw_q, cb_q, fw_q, fb_q)]
        cw, cb, fw, fb = leaves
        y_exact, y = ref.fake_quantized_conv2d(
            tensors[8].double(),
            x_zp,
            cw,
            cb,
            [m for m, _ in pairs],
            [s for _, s in pairs],
            y_zp,
            max(-128, y_zp),
            127,
            (1, 1),
            (0, 0, 0, 0),
        )
        pooled32 = ref.dequantize(y_exact, y_scale, y_zp).mean(dim=(2, 3))
        t = ((y - y_zp) * y_scale).mean(dim=(2, 3)) / p_scale
        p_exact = ref.quantize(pooled32, p_scale, p_zp)
        inside = (t > -128.5 - p_zp) & (t < 127.5 - p_zp)
        # quantize's VJP: straight through the rounding, slope 1 / scale, inside the clamp.
        p = torch.where(inside, t + (p_exact.double() - t).detach(), p_exact.double())
        exact, logits = ref.fake_quantized_linear(
            p, p_zp, fw, fb, f_pair[0], f_pair[1], out_zp, -128, 127
        )
        loss = F.cross_entropy((logits - out_zp) * out_scale, torch.from_numpy(label).long())
        loss.backward()
        where = f"step {k}"
        for session in (grad, outputs_session):
            session.params.update({n: step.params[n].copy() for n in names})
        *_, conv_out, fc_out = outputs_session.call("loss", x, label)
        np.testing.assert_array_equal(
            conv_out.transpose(0, 3, 1, 2), y_exact.numpy(), err_msg=where
        )
        np.testing.assert_array_equal(fc_out, exact.numpy(), err_msg=where)
        loss_g, *grads = grad.call("loss_grad", x, label)
        np.testing.assert_allclose(float(loss_g), loss.item(), rtol=1e-5, err_msg=where)
        want = [cw.grad.permute(0, 2, 3, 1), cb.grad, fw.grad, fb.grad]
        for name, got, expected in zip(names, grads, want, strict=True):
            assert_close_to_scale(got, expected.numpy(), f"{name} gradient, {where}")
        step.call("train_step", x, label)
        moved = int((ref.integer_sgd_float32(cw_q, cw.grad, LR, cw_step, -127, 127) != cw_q).sum())
        conv_moves += moved
        cw_q = ref.integer_sgd_float32(cw_q, cw.grad, LR, cw_step, -127, 127)
        cb_q = ref.integer_sgd_float32(cb_q, cb.grad, LR, cb_step, -(2**31), 2**31 - 1)
        fw_q = ref.integer_sgd_float32(fw_q, fw.grad, LR, fw_step, -127, 127)
        fb_q = ref.integer_sgd_float32(fb_q, fb.grad, LR, fb_step, -(2**31), 2**31 - 1)
        expected = [cw_q.permute(0, 2, 3, 1), cb_q, fw_q, fb_q]
        for name, value in zip(names, expected, strict=True):
            np.testing.assert_array_equal(
                step.params[name], value.numpy(), err_msg=f"{name}, {where}"
            )
    print(f"last:3: {conv_moves} updates of the conv's int8 weights over 20 steps")
    assert conv_moves > 0  # the trained conv's int8 weights move under QAS


def test_the_flags(tmp_path) -> None:
    """`--quantize-frozen --quantize-level=2` runs level 2 before autodiff: DS-CNN `last:1`'s
    trainable parameters are the 12x64 int8 weight and 12 int32 biases, 768 + 48 = 816 bytes
    of RAM; `--quantize-level` alone, or `--no-qas` at level 1, is an error (exit 1)."""
    import subprocess
    import sys

    model = tmp_path / "ds_cnn_last1.mlir"
    model.write_text(str(scheme("last:1")))
    adir_opt = [sys.executable, "-m", "adir.tools.adir_opt", str(model), "--optimizer=sgd"]
    level_2 = ["--quantize-frozen", "--quantize-level=2", "--plan-memory", "--memory-report"]
    done = subprocess.run(
        [*adir_opt, *level_2, "-o", str(tmp_path / "out.mlir")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"trainable parameters +816\n", done.stderr)
    alone = subprocess.run([*adir_opt, "--quantize-level=2"], capture_output=True, text=True)
    assert alone.returncode == 1 and "--quantize-level needs --quantize-frozen" in alone.stderr
    no_qas = subprocess.run(
        [*adir_opt, "--quantize-frozen", "--no-qas"], capture_output=True, text=True
    )
    assert no_qas.returncode == 1 and "--no-qas needs --quantize-level=2" in no_qas.stderr
