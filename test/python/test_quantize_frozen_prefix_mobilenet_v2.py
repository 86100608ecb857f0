"""quantize-frozen-prefix on MobileNetV2-w0.35 at 128x128 (examples/torch/mobilenet_v2.py, TTE's
model), classifier trained (`train="last:1"`), batch 1, SGD: its backbone (the stem, 17
inverted residual blocks, the 1280-channel 1x1 conv, the global average) on int8 kernels
against the PyTorch reference of the same quantized forward, as test_quantize_frozen_prefix.py
checks DS-CNN (its helpers and the same conventions: eval mode, batch-norm statistics drawn
from a seeded generator, activation ranges of the same float values from the interpreter's
float forward pass, TFLite's formulas in int8_reference.py).

What MobileNetV2 adds: ReLU6 fused into the conv's clamp (act_max = zero point + round(6 /
scale), TFLite's RELU6), projections with no activation (the full [-128, 127]), depthwise
convs of stride 2, and the ten residual sums as `adir.qadd` (TFLite's int8 ADD).

Checked for 3 steps (each a forward pass of a 128x128 image in the interpreter): every int8
tensor (the input's quantization, the 52 conv outputs, the 10 sums, the pooled features)
bit for bit, the loss to 1e-5 of the float64 reference and the classifier after each step to
1e-5 of its tensors' largest magnitude.
"""

from __future__ import annotations

import copy
import importlib.util
import tempfile
from pathlib import Path

import int8_reference as ref
import numpy as np
import pytest
import torch
from c_testing import build_c, c_compilers, function, interpreter_run, run_pipeline
from test_cmsis_nn import cmsis_nn_objects, needs_cmsis_nn
from test_quantize_frozen_prefix import (
    ROOT,
    assert_close_to_scale,
    c_run,
    fold,
    loss_ranges,
    randomize_batch_norms,
    reference_training,
    with_results,
)
from torch import nn

from adir.frontends.torch_import import import_module
from adir.interpreter import Session

STEPS = 3
LR = 0.0625
SHAPE = (1, 3, 128, 128)
CLASSES = 10


def mobilenet_v2() -> nn.Module:
    path = ROOT / "examples/torch/mobilenet_v2.py"
    spec = importlib.util.spec_from_file_location("mobilenet_v2", path)
    assert spec is not None and spec.loader is not None
    file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(file)
    return randomize_batch_norms(file.model().eval())


def data() -> list[tuple[np.ndarray, np.ndarray]]:
    generator = torch.Generator().manual_seed(1)
    return [
        (
            torch.randn(SHAPE, generator=generator).numpy(),
            torch.randint(0, CLASSES, (1,), generator=generator).numpy().astype(np.int32),
        )
        for _ in range(STEPS)
    ]


def calibration_inputs() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((4, *SHAPE)).astype(np.float32)


RANGED = ("adir.conv2d", "adir.clamp", "adir.add")


def float_ranges(module, inputs: np.ndarray) -> list[tuple[float, float]]:
    """(min, max) of the input and of each conv, clamp and add result of the float @loss, in
    program order."""
    return loss_ranges(module, inputs, lambda op: op.name in RANGED)


class Reference:
    """The quantized backbone, layer by layer, consuming the ranges in the IR's order."""

    def __init__(self, ranges: list[tuple[float, float]]) -> None:
        self.ranges = iter(ranges)
        self.tensors: list[torch.Tensor] = []

    def conv(self, q, scale, zero_point, conv: nn.Conv2d, bn: nn.BatchNorm2d, relu6: bool):
        conv_range = next(self.ranges)
        out_scale, out_zero_point = ref.activation_params(
            *(next(self.ranges) if relu6 else conv_range)
        )
        weight, bias = fold(conv, bn)
        w_q, w_scales = ref.symmetric_per_channel(weight)
        b_q = ref.round_half_away(bias.double() / (scale * w_scales.double()))
        pairs = [ref.quantize_multiplier(scale * float(ws) / out_scale) for ws in w_scales]
        act_min, act_max = -128, 127
        if relu6:
            act_min = max(-128, out_zero_point)
            six = ref.round_half_away(torch.tensor(6.0) / torch.tensor(out_scale))
            act_max = int(min(127, out_zero_point + int(six)))
        pad = conv.padding[0]
        q = ref.qconv2d(
            q,
            zero_point,
            w_q,
            b_q.clamp(-(2**31), 2**31 - 1).long(),
            [m for m, _ in pairs],
            [s for _, s in pairs],
            out_zero_point,
            act_min,
            conv.stride,
            (pad, pad, pad, pad),
            conv.groups,
            act_max,
        )
        self.tensors.append(q)
        return q, out_scale, out_zero_point

    def forward(self, net: nn.Module, x: np.ndarray) -> torch.Tensor:
        scale, zero_point = ref.activation_params(*next(self.ranges))
        q = ref.quantize(torch.from_numpy(x), scale, zero_point)
        self.tensors.append(q)
        for block in net.features:
            layers = list(block.conv if hasattr(block, "residual") else block)
            q_in, scale_in, zero_point_in = q, scale, zero_point
            index = 0
            while index < len(layers):
                relu6 = index + 2 < len(layers) and isinstance(layers[index + 2], nn.ReLU6)
                q, scale, zero_point = self.conv(
                    q, scale, zero_point, layers[index], layers[index + 1], relu6
                )
                index += 3 if relu6 else 2
            if getattr(block, "residual", False):
                out_params = ref.activation_params(*next(self.ranges))
                q = ref.qadd(q_in, (scale_in, zero_point_in), q, (scale, zero_point), out_params)
                scale, zero_point = out_params
                self.tensors.append(q)
        q = ref.qavgpool(q)
        self.tensors.append(q)
        return ref.dequantize(q, scale, zero_point).reshape(1, -1)


def int8_tensors(module, x: np.ndarray, label: np.ndarray) -> list[np.ndarray]:
    picked = ("adir.quantize", "adir.qconv2d", "adir.qadd", "adir.qavgpool2d")
    probe, _ = with_results(module, "loss", lambda op: op.name in picked)
    names = [op.name for op in function(probe, "loss").body.block.ops if op.name in picked]
    results = Session(probe).call("loss", x, label)
    return [
        r if name == "adir.quantize" else r.transpose(0, 3, 1, 2)
        for name, r in zip(names, results, strict=True)
    ]


@pytest.fixture(scope="module")
def case(tmp_path_factory) -> dict:
    net = mobilenet_v2()
    steps = data()
    imported = import_module(
        copy.deepcopy(net), (torch.from_numpy(steps[0][0]),), loss="cross_entropy", train="last:1"
    )
    calibration = tmp_path_factory.mktemp("calibration") / "inputs.npy"
    np.save(calibration, calibration_inputs())
    float_step = run_pipeline(
        imported,
        f"infer-shapes,freeze-batchnorm,autodiff,insert-optimizer{{kind=sgd lr={LR}}}",
    )
    quantized = run_pipeline(float_step, f'quantize-frozen-prefix{{calibration="{calibration}"}}')
    return {"net": net, "steps": steps, "float_step": float_step, "quantized": quantized}


@pytest.mark.slow
def test_mobilenet_v2_level_1_is_the_quantized_reference(case: dict) -> None:
    net, steps, float_step, quantized = (
        case["net"],
        case["steps"],
        case["float_step"],
        case["quantized"],
    )
    ops = [op.name for op in function(quantized, "train_step").body.block.ops]
    assert ops.count("adir.qconv2d") == 52 and "adir.conv2d" not in ops
    assert ops.count("adir.qadd") == 10  # the residual sums
    assert ops.count("adir.add") == 1 and ops.count("adir.dequantize") == 1  # the classifier
    ranges = float_ranges(float_step, calibration_inputs())
    features = []
    for x, label in steps:
        reference = Reference(ranges)
        features.append(reference.forward(net, x))
        ours = int8_tensors(quantized, x, label)
        assert len(ours) == len(reference.tensors) == 1 + 52 + 10 + 1
        for index, (got, want) in enumerate(zip(ours, reference.tensors, strict=True)):
            np.testing.assert_array_equal(got, want.numpy(), err_msg=f"int8 tensor #{index}")
    losses, _, params = reference_training(
        net.classifier, "classifier", features, [label for _, label in steps], LR
    )
    session = Session(quantized)
    for k, (x, label) in enumerate(steps):
        (loss,) = session.call("train_step", x, label)
        np.testing.assert_allclose(float(loss), losses[k], rtol=1e-5, err_msg=f"loss, step {k}")
        for name in ("classifier_weight", "classifier_bias"):
            assert_close_to_scale(session.params[name], params[k][name], f"{name}, step {k}")


@pytest.mark.slow
@pytest.mark.parametrize("kernels", ["reference", pytest.param("cmsis-nn", marks=needs_cmsis_nn)])
def test_mobilenet_v2_level_1_in_c_is_the_interpreter(case: dict, kernels: str) -> None:
    """The C with the reference int8 kernels, and with CMSIS-NN's (its convolutions,
    depthwise convolutions, arm_elementwise_add_s8 for the sums, the average pool), under ASan
    and UBSan: the 64 int8 tensors of one image bit for bit (@loss cut to return them; the
    training step in C is test_quantize_frozen_prefix.py's, on DS-CNN)."""
    picked = ("adir.quantize", "adir.qconv2d", "adir.qadd", "adir.qavgpool2d")
    probe, _ = with_results(case["quantized"], "loss", lambda op: op.name in picked)
    x, label = case["steps"][0]
    expected = interpreter_run(probe, "loss", 0, [[x, label]])
    actual = c_run(probe, "loss", [[x, label]], c_compilers()[0], kernels)
    assert len(actual) == len(expected) == 64 + 2
    for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
        np.testing.assert_array_equal(got, want, err_msg=f"array {index}")


# --- the 1x1 expansions fused into their depthwise convolutions (fuse-expand-depthwise) -----

FUSED_PICKED = ("adir.quantize", "adir.qconv2d", "adir.qexpand_depthwise", "adir.qadd")
FUSED_PICKED += ("adir.qavgpool2d",)


def expansion_mask(module) -> list[bool]:
    """For each int8 tensor int8_tensors() returns from the unfused `module`, whether it is a
    1x1 expansion that fuse-expand-depthwise folds away: a 1x1 qconv2d read only by a
    depthwise qconv2d (the stem, 3x3, feeds one too and stays). Those no longer exist whole;
    their consumers' outputs check them."""
    picked = ("adir.quantize", "adir.qconv2d", "adir.qadd", "adir.qavgpool2d")
    ops = [op for op in function(module, "loss").body.block.ops if op.name in picked]
    return [
        op.name == "adir.qconv2d"
        and tuple(op.weight.type.get_shape()[1:3]) == (1, 1)
        and op.result.has_one_use()
        and next(iter(op.result.uses)).operation.name == "adir.qconv2d"
        and next(iter(op.result.uses)).operation.is_depthwise
        for op in ops
    ]


def fused_int8_tensors(module, x: np.ndarray, label: np.ndarray) -> list[np.ndarray]:
    probe, _ = with_results(module, "loss", lambda op: op.name in FUSED_PICKED)
    names = [op.name for op in function(probe, "loss").body.block.ops if op.name in FUSED_PICKED]
    results = Session(probe).call("loss", x, label)
    return [
        r if name == "adir.quantize" else r.transpose(0, 3, 1, 2)
        for name, r in zip(names, results, strict=True)
    ]


@pytest.fixture(scope="module")
def fused(case: dict):
    return run_pipeline(case["quantized"], "fuse-expand-depthwise,in-place-depthwise")


@pytest.mark.slow
def test_mobilenet_v2_fused_expansions_are_the_quantized_reference(case: dict, fused) -> None:
    """16 of the 17 blocks expand (the first has expansion ratio 1): 16 fused ops and 20 convs
    left (the stem, the first block's depthwise, 17 projections, the 1280-channel conv), and
    the 48 int8 tensors that still exist (64 less the 16 expansions) bit for bit the PyTorch
    reference's, one image."""
    ops = [op.name for op in function(fused, "train_step").body.block.ops]
    assert ops.count("adir.qexpand_depthwise") == 16 and ops.count("adir.qconv2d") == 52 - 32
    # in-place-depthwise marks the first block's depthwise conv (the stem's 16x64x64 output
    # in, as much out: the peak once the expansions are fused), and no other op.
    step = function(fused, "train_step").body.block.ops
    marked = [op for op in step if "in_place" in op.properties]
    assert len(marked) == 1 and marked[0].result.type.get_shape() == (1, 64, 64, 16)
    mask = expansion_mask(case["quantized"])
    assert sum(mask) == 16
    x, label = case["steps"][0]
    reference = Reference(float_ranges(case["float_step"], calibration_inputs()))
    reference.forward(case["net"], x)
    kept = [t for t, expansion in zip(reference.tensors, mask, strict=True) if not expansion]
    ours = fused_int8_tensors(fused, x, label)
    assert len(ours) == len(kept) == 64 - 16
    for index, (got, want) in enumerate(zip(ours, kept, strict=True)):
        np.testing.assert_array_equal(got, want.numpy(), err_msg=f"int8 tensor #{index}")


def lowered_c_run(module, x: np.ndarray, label: np.ndarray, kernels: str) -> list[np.ndarray]:
    """The C of @loss with `kernels` selected before planning (the fused kernels' planes, and
    CMSIS-NN's scratch, in the arena), gcc under ASan and UBSan, one image."""
    planned = run_pipeline(
        module,
        "fuse-weight-updates,reorder-updates,bufferize,"
        f"select-kernels{{kernels={kernels}}},plan-memory",
    )
    with tempfile.TemporaryDirectory(prefix="adir-int8-lowered-") as directory:
        built = build_c(
            planned,
            "loss",
            1,
            Path(directory),
            c_compilers()[0],
            sanitize=True,
            library=cmsis_nn_objects if kernels == "cmsis-nn" else None,
        )
        return built.run(0, [[x, label]])


@pytest.mark.slow
@pytest.mark.parametrize("kernels", ["reference", pytest.param("cmsis-nn", marks=needs_cmsis_nn)])
def test_mobilenet_v2_fused_in_c_is_the_unfused_interpreter(
    case: dict, fused, kernels: str
) -> None:
    """The fused kernels and the in-place depthwise conv in C (gcc, ASan and UBSan), with the
    reference kernels and with CMSIS-NN's for the other ops (CMSIS-NN refuses the fused and
    the in-place convs, whose reference kernels then run): the 48 int8 tensors of one image
    bit for bit those of the unfused ops in the interpreter. @loss cut to return every tensor
    keeps the first block's input alive past its depthwise conv, so that conv runs in place
    only in @loss cut to return the pooled features, which are checked too."""
    picked = ("adir.quantize", "adir.qconv2d", "adir.qadd", "adir.qavgpool2d")
    unfused_probe, _ = with_results(case["quantized"], "loss", lambda op: op.name in picked)
    probe, _ = with_results(fused, "loss", lambda op: op.name in FUSED_PICKED)
    x, label = case["steps"][0]
    expected = interpreter_run(unfused_probe, "loss", 0, [[x, label]])
    mask = [*expansion_mask(case["quantized"]), False, False]  # then the classifier's params
    expected = [e for e, expansion in zip(expected, mask, strict=True) if not expansion]
    actual = lowered_c_run(probe, x, label, kernels)
    assert len(actual) == len(expected) == 48 + 2
    for index, (got, want) in enumerate(zip(actual, expected, strict=True)):
        np.testing.assert_array_equal(got, want, err_msg=f"array {index}")
    pooled, _ = with_results(fused, "loss", lambda op: op.name == "adir.qavgpool2d")
    planned = run_pipeline(pooled, "bufferize")
    in_place = [
        op for op in planned.walk() if "in_place" in op.properties and op.ins[0] is op.outs[0]
    ]
    assert len(in_place) == 2  # in @loss and in @train_step
    (features, *_) = lowered_c_run(pooled, x, label, kernels)
    np.testing.assert_array_equal(features, expected[-3])  # the last tensor: the pooled ones


ARENA_PLAN = (
    "fuse-weight-updates,reorder-updates,bufferize,select-kernels{kernels=reference},plan-memory"
)


@pytest.fixture(scope="module")
def stem_fused(fused):
    return run_pipeline(fused, "fuse-quantize-conv")


def arena(module) -> int:
    return run_pipeline(module, ARENA_PLAN).attributes["adir.arena_size"].value.data


@pytest.mark.slow
def test_mobilenet_v2_stem_quantizes_the_image_inside_its_conv(fused, stem_fused) -> None:
    """Once the blocks are lowered the stem is the peak: the 3x128x128 int8 image (49,152
    bytes, NHWC) and the stem's 16x64x64 output (65,536): 114,688 bytes. fuse-quantize-conv
    makes the quantize, the transpose and the stem one op in @train_step and @loss, and the
    peak becomes block 1's projection, 16x64x64 in and 8x64x64 out: 98,304 bytes."""
    for name in ("train_step", "loss"):
        ops = [op.name for op in function(stem_fused, name).body.block.ops]
        assert ops.count("adir.quantize_qconv2d") == 1
        assert "adir.quantize" not in ops and "adir.qtranspose" not in ops
        assert ops.count("adir.qconv2d") == 20 - 1
    assert arena(fused) == 49_152 + 65_536
    assert arena(stem_fused) == 16 * 64 * 64 + 8 * 64 * 64


@pytest.mark.slow
def test_mobilenet_v2_fused_stem_in_c_is_the_unfused_interpreter(case: dict, stem_fused) -> None:
    """The stem's output (NHWC) and the pooled features of one image, from the fused stem in
    the interpreter and in C (gcc, reference kernels, ASan and UBSan), bit for bit those of
    the unfused quantize, transpose and qconv2d in the interpreter."""
    x, label = case["steps"][0]
    unfused_picked = ("adir.qconv2d", "adir.qavgpool2d")
    unfused_probe, _ = with_results(case["quantized"], "loss", lambda op: op.name in unfused_picked)
    expected = interpreter_run(unfused_probe, "loss", 0, [[x, label]])
    want_stem, want_pooled = expected[0], expected[-3]  # the first conv; then the params
    picked = ("adir.quantize_qconv2d", "adir.qavgpool2d")
    probe, _ = with_results(stem_fused, "loss", lambda op: op.name in picked)
    for got_stem, got_pooled, *_ in (
        Session(probe).call("loss", x, label),
        lowered_c_run(probe, x, label, "reference"),
    ):
        np.testing.assert_array_equal(got_stem, want_stem)
        np.testing.assert_array_equal(got_pooled, want_pooled)
    assert want_stem.shape == (1, 64, 64, 16) and len(np.unique(want_stem)) > 8
