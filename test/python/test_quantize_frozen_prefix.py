"""quantize-frozen-prefix (level 1 of quantized training): DS-CNN fine-tuned with only its
classifier trained (`train="last:1"`, batch 1, SGD at lr 0.0625, which f32 holds exactly), its
frozen backbone on int8 kernels, against a PyTorch reference of the same quantized forward.

The model is examples/torch/ds_cnn.py in eval mode (dropout off, batch norms on running
statistics, as a frozen pretrained backbone runs: freeze-batchnorm folds them into the
convolutions), with batch-norm statistics and affine parameters drawn from a seeded generator
so that the folding is not the identity.

The reference (int8_reference.py, TFLite's formulas written out in PyTorch) folds each batch
norm as torch.nn.utils.fuse_conv_bn_eval's formula in float32, quantizes the folded weights per
channel, the biases to int32, the input, computes every conv in integers with TFLite's
requantization and fused-ReLU clamp, the global average pool with TFLite's rounding, and
dequantizes the pooled features into a float64 classifier trained by torch.optim.SGD. Its
activation scales are calibration's choice, which it takes as given: the ranges of the same
float values (the input and the nine ReLU outputs) over the same calibration inputs, from the
interpreter's float forward pass of the unquantized module (itself checked against PyTorch by
test_c_torch_import.py and test_freeze_batchnorm.py); from them it derives the scales and zero
points with TFLite's formula. Checked:

- every int8 tensor of the prefix (the quantized input, the nine conv outputs, the pooled
  features) equals the reference's, bit for bit, at each of 20 steps;
- the loss and the gradients of the classifier's weight and bias (from `@loss_grad`, the
  prefix quantized the same way) to 1e-5 of the reference (float32 against float64), and the
  parameters after each of the 20 steps to 1e-5 of their tensor's largest magnitude.
"""

from __future__ import annotations

import copy
import importlib.util
import math
import tempfile
from pathlib import Path

import int8_reference as ref
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from c_testing import build_c, c_compilers, function, interpreter_run, run_pipeline
from test_cmsis_nn import cmsis_nn_objects, needs_cmsis_nn
from torch import nn
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.rewriter import Rewriter

from adir.frontends.torch_import import import_module
from adir.interpreter import Session

ROOT = Path(__file__).resolve().parents[2]
STEPS = 20
LR = 0.0625
CLASSES = 12
SHAPE = (1, 1, 49, 10)
REFERENCE_PLAN = "fuse-weight-updates,reorder-updates,bufferize,plan-memory"
CMSIS_NN_PLAN = (
    "fuse-weight-updates,reorder-updates,bufferize,select-kernels{kernels=cmsis-nn},plan-memory"
)
FLOAT_STEP = f"infer-shapes,freeze-batchnorm,autodiff,insert-optimizer{{kind=sgd lr={LR}}}"


def ds_cnn() -> nn.Module:
    spec = importlib.util.spec_from_file_location("ds_cnn", ROOT / "examples/torch/ds_cnn.py")
    assert spec is not None and spec.loader is not None
    file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(file)
    return randomize_batch_norms(file.model().eval())


def randomize_batch_norms(net: nn.Module) -> nn.Module:
    """Batch-norm statistics and affine parameters from a seeded generator, as a pretrained
    backbone has them (PyTorch's initial ones fold to nearly the identity)."""
    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for layer in net.modules():
            if isinstance(layer, nn.BatchNorm2d):
                c = layer.num_features
                layer.weight.copy_(0.5 + torch.rand(c, generator=generator))
                layer.bias.copy_(0.2 * torch.randn(c, generator=generator))
                layer.running_mean.copy_(0.1 * torch.randn(c, generator=generator))
                layer.running_var.copy_(0.5 + torch.rand(c, generator=generator))
    return net


def calibration_inputs() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((8, *SHAPE)).astype(np.float32)


def training_data() -> list[tuple[np.ndarray, np.ndarray]]:
    generator = torch.Generator().manual_seed(1)
    return [
        (
            torch.randn(SHAPE, generator=generator).numpy(),
            torch.randint(0, CLASSES, (1,), generator=generator).numpy().astype(np.int32),
        )
        for _ in range(STEPS)
    ]


# -- adir's side ------------------------------------------------------------------------------


def with_results(module: ModuleOp, name: str, pick) -> tuple[ModuleOp, int]:
    """A copy of `module` whose @name returns the values `pick(op)` selects, in program order,
    and the count of them."""
    probe = module.clone()
    target = function(probe, name)
    values = [r for op in target.body.block.ops if pick(op) for r in op.results]
    last = target.body.block.last_op
    assert last is not None
    Rewriter.replace_op(last, func.ReturnOp(*values))
    target.function_type = FunctionType.from_lists(
        target.function_type.inputs.data, [v.type for v in values]
    )
    return probe, len(values)


def loss_ranges(module: ModuleOp, inputs: np.ndarray, pick) -> list[tuple[float, float]]:
    """What calibration sees: (min, max) over `inputs` of the input and of each value of the
    float @loss that `pick(op)` selects, in program order."""
    probe, count = with_results(module, "loss", pick)
    session = Session(probe)
    lows = [float(inputs.min())] + [np.inf] * count
    highs = [float(inputs.max())] + [-np.inf] * count
    for x in inputs:
        for index, value in enumerate(session.call("loss", x, np.zeros(1, np.int32))):
            lows[index + 1] = min(lows[index + 1], float(value.min()))
            highs[index + 1] = max(highs[index + 1], float(value.max()))
    return list(zip(lows, highs, strict=True))


def float_ranges(module: ModuleOp, inputs: np.ndarray) -> list[tuple[float, float]]:
    """(min, max) of the input and of each ReLU output of the float @loss over `inputs`."""
    return loss_ranges(module, inputs, lambda op: op.name == "adir.relu")


def int8_tensors(module: ModuleOp, x: np.ndarray, label: np.ndarray) -> list[np.ndarray]:
    """The input's quantization, each qconv2d's and the pool's output, NCHW, from @loss."""

    def picked(op) -> bool:
        return op.name in ("adir.quantize", "adir.qconv2d", "adir.qavgpool2d")

    probe, _ = with_results(module, "loss", picked)
    results = Session(probe).call("loss", x, label)
    return [r if r.shape == SHAPE else r.transpose(0, 3, 1, 2) for r in results]


# -- the reference ----------------------------------------------------------------------------


def sqrt_float32(x: torch.Tensor) -> torch.Tensor:
    """IEEE 754's float32 square root of float32 `x`, correctly rounded (as C's sqrtf and numpy's
    np.sqrt, which freeze-batchnorm uses, compute it). Not torch.sqrt: its float32 (and float64)
    sqrt need not be correctly rounded, its last bit may depend on the CPU: on AMD Zen 4 (torch
    2.13) it is one ulp off for about 1 in 6 inputs, so the folded factors of a few channels
    differed from freeze-batchnorm's and, through their weight scales and biases, one int8
    element of the MobileNetV2 tests came out off by one. Here Python's math.sqrt (sqrtsd,
    correctly rounded) in float64, rounded to float32: that double rounding is exact for a
    square root (53 >= 2 * 24 + 2 bits, Figueroa 1995), so the result is the float32 one on
    any CPU."""
    wide = [math.sqrt(v) for v in x.detach().double().reshape(-1).tolist()]
    return torch.tensor(wide, dtype=torch.float64).float().reshape(x.shape)


def fold(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.nn.utils.fuse_conv_bn_eval's formula in float32, with a division by the square
    root as the docs of freeze-batchnorm state it (the square root correctly rounded:
    `sqrt_float32`)."""
    eps = torch.tensor(np.float32(bn.eps))
    factor = bn.weight.detach() / sqrt_float32(bn.running_var + eps)
    weight = conv.weight.detach() * factor.reshape(-1, 1, 1, 1)
    bias = torch.zeros(conv.out_channels) if conv.bias is None else conv.bias.detach()
    return weight, (bias - bn.running_mean) * factor + bn.bias.detach()


def reference_backbone(
    net: nn.Module, ranges: list[tuple[float, float]], x: np.ndarray
) -> tuple[list[torch.Tensor], torch.Tensor]:
    """The int8 tensors of the quantized backbone (NCHW, int64) and the float32 features."""
    layers = list(net.features)
    scale, zero_point = ref.activation_params(*ranges[0])
    q = ref.quantize(torch.from_numpy(x), scale, zero_point)
    tensors = [q]
    padding = (0, 0, 0, 0)
    relus = iter(ranges[1:])
    for index, layer in enumerate(layers):
        if isinstance(layer, nn.ZeroPad2d):
            left, right, top, bottom = layer.padding
            padding = (top, bottom, left, right)
        elif isinstance(layer, nn.Conv2d):
            bn, relu = layers[index + 1], layers[index + 2]
            assert isinstance(bn, nn.BatchNorm2d) and isinstance(relu, nn.ReLU)
            weight, bias = fold(layer, bn)
            w_q, w_scales = ref.symmetric_per_channel(weight)
            b_q = ref.round_half_away(bias.double() / (scale * w_scales.double()))
            out_scale, out_zero_point = ref.activation_params(*next(relus))
            pairs = [ref.quantize_multiplier(scale * float(ws) / out_scale) for ws in w_scales]
            q = ref.qconv2d(
                q,
                zero_point,
                w_q,
                b_q.clamp(-(2**31), 2**31 - 1).long(),
                [m for m, _ in pairs],
                [s for _, s in pairs],
                out_zero_point,
                max(-128, out_zero_point),
                layer.stride,
                padding,
                layer.groups,
            )
            tensors.append(q)
            scale, zero_point, padding = out_scale, out_zero_point, (0, 0, 0, 0)
        elif isinstance(layer, nn.AdaptiveAvgPool2d):
            q = ref.qavgpool(q)
            tensors.append(q)
    features = ref.dequantize(q, scale, zero_point).reshape(1, -1)
    return tensors, features


def reference_training(
    layer: nn.Linear,
    owner: str,
    features: list[torch.Tensor],
    labels: list[np.ndarray],
    lr: float = LR,
) -> tuple[list[float], list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]:
    """The float64 classifier `layer` (the model's `owner`) on the fixed int8 features: per
    step the loss, the gradients (before the update) and the parameters after it, by adir
    symbol (`<owner>_weight`, `<owner>_bias`)."""
    fc = copy.deepcopy(layer).double()
    names = {"weight": f"{owner}_weight", "bias": f"{owner}_bias"}
    optimizer = torch.optim.SGD(fc.parameters(), lr=float(np.float32(lr)))
    losses, grads, params = [], [], []
    for h, label in zip(features, labels, strict=True):
        optimizer.zero_grad()
        loss = F.cross_entropy(fc(h.double()), torch.from_numpy(label).long())
        loss.backward()
        losses.append(loss.item())
        grads.append({names[n]: p.grad.numpy().copy() for n, p in fc.named_parameters()})
        optimizer.step()
        params.append({names[n]: p.detach().numpy().copy() for n, p in fc.named_parameters()})
    return losses, grads, params


def assert_close_to_scale(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * scale, err_msg=what)


# -- the tests --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def case(tmp_path_factory) -> dict:
    net = ds_cnn()
    x, _ = training_data()[0]
    imported = import_module(
        copy.deepcopy(net), (torch.from_numpy(x),), loss="cross_entropy", train="last:1"
    )
    calibration = tmp_path_factory.mktemp("calibration") / "inputs.npy"
    np.save(calibration, calibration_inputs())
    quantize = f'quantize-frozen-prefix{{calibration="{calibration}"}}'
    float_step = run_pipeline(imported, FLOAT_STEP)
    return {
        "net": net,
        "float_step": float_step,
        "step": run_pipeline(float_step, quantize),
        "grad": run_pipeline(
            imported,
            "infer-shapes,freeze-batchnorm,autodiff,"
            f'quantize-frozen-prefix{{func=loss_grad calibration="{calibration}"}}',
        ),
    }


def test_the_frozen_backbone_becomes_int8(case: dict) -> None:
    """Every layer before the classifier is int8 in @train_step and @loss: the input's
    quantize, the strided 10x4 conv, four depthwise and four pointwise convs (batch norm and
    ReLU folded in), the global average; one dequantize feeds the float classifier. The float
    weights of the backbone are gone from the module (their int8 forms are constants); what
    remains is what trains."""
    module = case["step"]
    for name in ("train_step", "loss"):
        ops = [op.name for op in function(module, name).body.block.ops]
        assert ops.count("adir.quantize") == 1 and ops.count("adir.dequantize") == 1
        assert ops.count("adir.qconv2d") == 9 and ops.count("adir.qavgpool2d") == 1
        assert "adir.conv2d" not in ops and "adir.relu" not in ops
    params = [op.sym_name.data for op in module.ops if op.name == "adir.param"]
    assert params == ["fc_weight", "fc_bias"]


def test_ds_cnn_level_1_is_the_quantized_reference(case: dict) -> None:
    net = case["net"]
    data = training_data()
    ranges = float_ranges(case["float_step"], calibration_inputs())
    assert len(ranges) == 10  # the input and nine ReLUs
    step = Session(case["step"])
    grad = Session(case["grad"])
    features, labels = [], []
    for x, label in data:
        tensors, h = reference_backbone(net, ranges, x)
        ours = int8_tensors(case["step"], x, label)
        assert len(ours) == len(tensors) == 11
        for index, (got, want) in enumerate(zip(ours, tensors, strict=True)):
            np.testing.assert_array_equal(got, want.numpy(), err_msg=f"int8 tensor #{index}")
        features.append(h)
        labels.append(label)
    losses, grads, params = reference_training(net.fc, "fc", features, labels)
    for k, (x, label) in enumerate(data):
        grad.params.update({name: step.params[name].copy() for name in ("fc_weight", "fc_bias")})
        loss_g, w_grad, b_grad = grad.call("loss_grad", x, label)
        (loss,) = step.call("train_step", x, label)
        np.testing.assert_allclose(float(loss), losses[k], rtol=1e-5, err_msg=f"loss, step {k}")
        np.testing.assert_allclose(float(loss_g), losses[k], rtol=1e-5)
        assert_close_to_scale(w_grad, grads[k]["fc_weight"], f"fc_weight gradient, step {k}")
        assert_close_to_scale(b_grad, grads[k]["fc_bias"], f"fc_bias gradient, step {k}")
        for name in ("fc_weight", "fc_bias"):
            assert_close_to_scale(step.params[name], params[k][name], f"{name}, step {k}")


def c_run(
    module: ModuleOp, name: str, steps: list[list[np.ndarray]], compiler: str, kernels: str
) -> list[np.ndarray]:
    """The C of @name planned with `kernels` ("reference" or "cmsis-nn"), under ASan and
    UBSan: its results at each step, then every parameter."""
    planned = run_pipeline(module, CMSIS_NN_PLAN if kernels == "cmsis-nn" else REFERENCE_PLAN)
    with tempfile.TemporaryDirectory(prefix="adir-int8-train-") as directory:
        built = build_c(
            planned,
            name,
            len(steps),
            Path(directory),
            compiler,
            sanitize=True,
            kernels=kernels,
            library=cmsis_nn_objects if kernels == "cmsis-nn" else None,
        )
        return built.run(0, steps)


def check_c(module: ModuleOp, compiler: str, kernels: str) -> None:
    """The int8 tensors of the prefix (@loss cut to return them) on 3 inputs: the same bits as
    the interpreter; the 20 training steps: the losses and the classifier after them to 1e-5
    (the float classifier sums in its own order)."""
    data = training_data()
    picked = ("adir.quantize", "adir.qconv2d", "adir.qavgpool2d")
    probe, _ = with_results(module, "loss", lambda op: op.name in picked)
    steps = [[x, label] for x, label in data[:3]]
    expected = interpreter_run(probe, "loss", 0, steps)
    actual = c_run(probe, "loss", steps, compiler, kernels)
    assert len(actual) == len(expected) == 3 * 11 + 2
    for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
        np.testing.assert_array_equal(got, want, err_msg=f"{kernels} C, array {index}")
    steps = [[x, label] for x, label in data]
    expected = interpreter_run(module, "train_step", 0, steps)
    actual = c_run(module, "train_step", steps, compiler, kernels)
    assert len(actual) == len(expected) == STEPS + 2
    for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"array {index}")


@pytest.mark.slow
@pytest.mark.parametrize("compiler", c_compilers())
def test_level_1_in_c_is_the_interpreter(case: dict, compiler: str) -> None:
    """Reference int8 kernels."""
    check_c(case["step"], compiler, "reference")


@needs_cmsis_nn
@pytest.mark.slow
def test_level_1_on_cmsis_nn_is_the_interpreter(case: dict) -> None:
    """CMSIS-NN's convolutions, depthwise convolutions and average pool for the prefix."""
    check_c(case["step"], c_compilers()[0], "cmsis-nn")


def test_ds_cnn_level_1_last_3_is_the_reference(tmp_path) -> None:
    """`train="last:3"`: the last pointwise conv and its batch norm's affine parameters
    (running statistics fixed: eval mode) train in float with the classifier, so the backward
    crosses a conv; the prefix (the input's quantization and the first eight convs) ends where
    that conv reads it, dequantized. The reference: the same eight int8 tensors, bit for bit
    at each of 20 steps; a float64 copy of the conv, batch norm, ReLU, pool and classifier on
    the dequantized features, trained by torch.optim.SGD: the loss and the five gradients
    (`@loss_grad`) to 1e-5 of the reference's largest magnitude, the parameters after each
    step to 1e-5 of their tensor's."""
    net = ds_cnn()
    x0, _ = training_data()[0]
    imported = import_module(
        copy.deepcopy(net), (torch.from_numpy(x0),), loss="cross_entropy", train="last:3"
    )
    calibration = tmp_path / "inputs.npy"
    np.save(calibration, calibration_inputs())
    quantize = f'quantize-frozen-prefix{{calibration="{calibration}"}}'
    step = run_pipeline(imported, f"{FLOAT_STEP},{quantize}")
    grad = run_pipeline(
        imported,
        "infer-shapes,freeze-batchnorm,autodiff,"
        f'quantize-frozen-prefix{{func=loss_grad calibration="{calibration}"}}',
    )
    layers = list(net.features)
    index = max(i for i, layer in enumerate(layers) if isinstance(layer, nn.Conv2d))
    names = {
        f"features_{index}_weight": (0, "weight"),
        f"features_{index + 1}_weight": (1, "weight"),
        f"features_{index + 1}_bias": (1, "bias"),
        "fc_weight": (3, "weight"),
        "fc_bias": (3, "bias"),
    }
    tail = [copy.deepcopy(m).double().eval() for m in (*layers[index : index + 3], net.fc)]
    params = {n: getattr(tail[at], kind) for n, (at, kind) in names.items()}
    trained = [
        op.sym_name.data for op in grad.ops if op.name == "adir.param" and op.sym_name.data in names
    ]
    assert sorted(trained) == sorted(names)
    ops = [op.name for op in function(step, "train_step").body.block.ops]
    assert ops.count("adir.qconv2d") == 8 and ops.count("adir.conv2d") == 1
    assert ops.count("adir.conv2d_grad_weight") == 1
    # The last eight ReLUs' ranges are the same values as last:1's (the frozen batch norms
    # fold the same way): the prefix's scales.
    ranges = float_ranges(run_pipeline(scheme_last_1(net), FLOAT_STEP), calibration_inputs())
    optimizer = torch.optim.SGD(params.values(), lr=LR)
    session, grad_session = Session(step), Session(grad)
    for k, (x, label) in enumerate(training_data()):
        where = f"step {k}"
        tensors, _ = reference_backbone(net, ranges, x)
        ours = int8_tensors(step, x, label)  # the prefix: the input's and eight convs'
        for i, (got, want) in enumerate(zip(ours, tensors[:9], strict=True)):
            np.testing.assert_array_equal(got, want.numpy(), err_msg=f"int8 #{i}, {where}")
        h = ref.dequantize(tensors[8], *ref.activation_params(*ranges[8])).double()
        for layer in tail[:3]:
            h = layer(h)
        optimizer.zero_grad()
        logits = tail[3](h.mean(dim=(2, 3)))
        loss = F.cross_entropy(logits, torch.from_numpy(label).long())
        loss.backward()
        grad_session.params.update({n: session.params[n].copy() for n in trained})
        loss_g, *grads = grad_session.call("loss_grad", x, label)
        np.testing.assert_allclose(float(loss_g), loss.item(), rtol=1e-5, err_msg=where)
        for name, got in zip(trained, grads, strict=True):
            want = params[name].grad
            assert want is not None
            assert_close_to_scale(got, want.numpy(), f"{name} gradient, {where}")
        optimizer.step()
        (ours_loss,) = session.call("train_step", x, label)
        np.testing.assert_allclose(float(ours_loss), loss.item(), rtol=1e-5, err_msg=where)
        for name in trained:
            assert_close_to_scale(
                session.params[name], params[name].detach().numpy(), f"{name}, {where}"
            )


def scheme_last_1(net: nn.Module):
    x, _ = training_data()[0]
    return import_module(
        copy.deepcopy(net), (torch.from_numpy(x),), loss="cross_entropy", train="last:1"
    )
