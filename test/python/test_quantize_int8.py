"""quantize-int8: TFLite's quantization arithmetic on hand-computed cases, and the int8
examples against their float predictions.

The fixed-point cases are worked by hand from the formulas in adir/interpreter/quantized.py
(QuantizeMultiplier, SaturatingRoundingDoublingHighMul, RoundingDivideByPOT); each states its
steps. The examples are quantized with their initial weights (the IR's initializers), calibrated
on 32 standard-normal inputs (seed 0) and compared on 100 other ones (seed 1).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from adir_testing import parse_example
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from adir.context import adir_context, parse_module
from adir.interpreter import Session
from adir.interpreter.quantized import (
    quantize,
    quantize_multiplier,
    requantize,
    round_half_away,
)
from adir.passes.derive_predict import DerivePredictPass
from adir.passes.quantize_int8 import QuantizeInt8Pass, activation_params, symmetric_weights

ROOT = Path(__file__).parents[2]


def test_quantize_multiplier_by_hand() -> None:
    """0.5 = 0.5 * 2^0: M = 0.5 * 2^31 = 2^30, s = 0. 0.1 = 0.8 * 2^-3: M = round(0.8 * 2^31)
    = round(1717986918.4) = 1717986918, s = -3. 1.0 = 0.5 * 2^1: M = 2^30, s = 1. 0 -> (0, 0)."""
    assert quantize_multiplier(0.5) == (2**30, 0)
    assert quantize_multiplier(0.1) == (1717986918, -3)
    assert quantize_multiplier(1.0) == (2**30, 1)
    assert quantize_multiplier(0.0) == (0, 0)


@pytest.mark.parametrize(
    ("value", "multiplier", "shift", "expected"),
    [
        # 100 * 0.1: 100 * 1717986918 / 2^31 = 79.99999998, + 0.5 (the nudge) -> 80.4999 -> 80
        # (C truncates); then 80 / 2^3 = 10 exactly.
        (100, 1717986918, -3, 10),
        # TFLite rounds twice. 5 * 0.25 = 1.25, but the doubling high multiply of 5 by 0.5 is
        # 2.5 -> 3, and 3 / 2 = 1.5 -> 2 (RoundingDivideByPOT: halves away from zero).
        (5, 2**30, -1, 2),
        # 3 * 0.25 = 0.75: 1.5 -> 2, 2 / 2 = 1.
        (3, 2**30, -1, 1),
        # The nudge is 1 - 2^30 for a negative product, so a negative half goes toward zero:
        # -7 * 0.5 = -3.5 -> (-3.5 * 2^31 + 1 - 2^30) / 2^31 = -3.99999 -> -3 (truncated).
        (-7, 2**30, 0, -3),
        # -45 * 0.25: -22.5 -> -22 (as above), -22 / 2 = -11.
        (-45, 2**30, -1, -11),
        # -3 * 0.25 = -0.75: -1.5 -> -1; -1 / 2 = -0.5 -> -1 (away from zero).
        (-3, 2**30, -1, -1),
        # A positive shift multiplies first: 7 * 2 = 14; 14 * 0.5 = 7 exactly -> 7.
        (7, 2**30, 1, 7),
    ],
)
def test_requantize_by_hand(value: int, multiplier: int, shift: int, expected: int) -> None:
    assert int(requantize(np.array([value]), np.array(multiplier), np.array(shift))[0]) == expected


def test_quantize_rounds_half_away_from_zero() -> None:
    """x / scale = 0.25 / 0.5 = 0.5 -> 1 (numpy's round would give 0), -0.5 -> -1, 2.5 -> 3;
    plus the zero point 3: 4, 2, 6; 100 / 0.5 + 3 saturates at 127, -100 at -128."""
    x = np.array([0.25, -0.25, 1.25, 100.0, -100.0], np.float32)
    assert quantize(x, 0.5, 3).tolist() == [4, 2, 6, 127, -128]
    assert round_half_away(np.array([0.49999997], np.float32)).tolist() == [0.0]


def test_activation_and_weight_parameters_by_hand() -> None:
    """[-1, 3] (widened to hold 0: it does): scale = 4 / 255; zero point = round(-128 + 1 /
    (4 / 255)) = round(-64.25) = -64. [0.5, 2] widens to [0, 2]: zero point -128. Weights
    [[0.5, -1], [0.25, 0.125]] per row: scales 1/127 and 0.25/127, so -1 -> -127, 0.5 -> 64
    (63.5 rounded away from zero), 0.125 -> 64 (63.5 again)."""
    scale, zero_point = activation_params(-1.0, 3.0)
    assert scale == pytest.approx(4 / 255, rel=1e-7) and zero_point == -64
    assert activation_params(0.5, 2.0)[1] == -128
    w = np.array([[0.5, -1.0], [0.25, 0.125]], np.float32)
    q, scales = symmetric_weights(w, 0)
    assert q.tolist() == [[64, -127], [127, 64]]
    assert scales.tolist() == pytest.approx([1 / 127, 0.25 / 127], rel=1e-7)


def test_qfully_connected_by_hand() -> None:
    """x = [10, -20] with zero point 2: [8, -22]; w = [3, 1]: 24 - 22 = 2; bias 5: 7; times
    1.0 (M = 2^30, s = 1): 7; output zero point -1: 6. Second row w = [-1, 0], bias -200:
    -8 - 200 = -208 -> -209 after the zero point -> clamped to act_min -128."""
    ir = """
    func.func @f(%x: tensor<1x2xi8>) -> tensor<1x2xi8> {
      %w = adir.constant dense<[[3, 1], [-1, 0]]> : tensor<2x2xi8>
      %b = adir.constant dense<[5, -200]> : tensor<2xi32>
      %y = adir.qfully_connected %x, %w, %b {input_zero_point = 2 : i32,
             output_zero_point = -1 : i32, multiplier = array<i32: 1073741824>,
             shift = array<i32: 1>}
             : tensor<1x2xi8>, tensor<2x2xi8>, tensor<2xi32> -> tensor<1x2xi8>
      func.return %y : tensor<1x2xi8>
    }"""
    module = parse_module(ir)
    (y,) = Session(module).call("f", np.array([[10, -20]], np.int8))
    assert y.tolist() == [[6, -128]]


def test_qavgpool_and_qconv_by_hand() -> None:
    """A 1x2 NHWC image, channel 0 holding 1, 2 and channel 1 -1, -2. Its 1x2 average:
    (3 + 1) / 2 = 2 and
    (-3 - 1) / 2 = -2 (halves away from zero). Depthwise 1x1 conv with weight [2, -3], zero
    points 0, bias [0, 1], multiplier 1.0: channel 0 = 2x, channel 1 = -3x + 1."""
    ir = """
    func.func @f(%x: tensor<1x1x2x2xi8>) -> (tensor<1x1x1x2xi8>, tensor<1x1x2x2xi8>) {
      %p = adir.qavgpool2d %x {kernel_size = array<i64: 1, 2>, stride = array<i64: 1, 2>}
             : tensor<1x1x2x2xi8> -> tensor<1x1x1x2xi8>
      %w = adir.constant dense<[[[[2, -3]]]]> : tensor<1x1x1x2xi8>
      %b = adir.constant dense<[0, 1]> : tensor<2xi32>
      %c = adir.qconv2d %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32,
             multiplier = array<i32: 1073741824>, shift = array<i32: 1>, groups = 2 : i64}
             : tensor<1x1x2x2xi8>, tensor<1x1x1x2xi8>, tensor<2xi32> -> tensor<1x1x2x2xi8>
      func.return %p, %c : tensor<1x1x1x2xi8>, tensor<1x1x2x2xi8>
    }"""
    module = parse_module(ir)
    x = np.array([[[[1, -1], [2, -2]]]], np.int8)  # pixel 0 = (1, -1), pixel 1 = (2, -2)
    pooled, conv = Session(module).call("f", x)
    assert pooled.tolist() == [[[[2, -2]]]]
    assert conv.tolist() == [[[[2, 4], [4, 7]]]]


def quantized_example(name: str) -> ModuleOp:
    module = parse_example(name)
    DerivePredictPass().apply(adir_context(), module)
    QuantizeInt8Pass(samples=32, seed=0).apply(adir_context(), module)
    module.verify()
    return module


# (argmax agreements out of 100 at least, largest |int8 - float| in output steps at most).
# Measured: the MLP 100 and 13.8 steps of its logits' scale (its log_softmax output is f32,
# after the sigmoid table's 1/256 resolution and a 784-wide first layer); LeNet-5 98 and 14.6
# (five layers, each adding half a step of its own output plus what it carries); DS-CNN 100 and
# 0.5 (its initial weights and the global average leave logits that barely depend on the input,
# so only the last rounding shows). The bounds leave room for a different BLAS order in the
# float reference, not for a broken arithmetic, which is off by tens of steps or by the argmax.
EXPECTED = {"mnist_mlp": (98, 20), "lenet5": (95, 20), "ds_cnn": (98, 2)}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_int8_examples_follow_float(name: str) -> None:
    module = quantized_example(name)
    session = Session(module)
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    shape = tuple(functions["predict"].function_type.inputs.data[0].get_shape())  # type: ignore[attr-defined]
    int8 = functions["predict_int8"]
    last = int8.body.block.last_op.operands[0].owner  # type: ignore[union-attr]
    while last.name != "adir.dequantize":  # the MLP's log_softmax runs after it
        last = last.operands[0].owner
    step = last.scale.value.data  # type: ignore[attr-defined]
    rng = np.random.default_rng(1)
    agree, worst = 0, 0.0
    for _ in range(100):
        x = rng.standard_normal(shape).astype(np.float32)
        (expected,) = session.call("predict", x)
        (actual,) = session.call("predict_int8", x)
        agree += int(expected.argmax() == actual.argmax())
        worst = max(worst, float(np.abs(expected - actual).max()) / step)
    min_agree, max_steps = EXPECTED[name]
    assert agree >= min_agree, agree
    assert worst <= max_steps, worst


def run_opt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adir.tools.adir_opt", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


def test_calibration_file_gives_the_same_function_as_the_same_inputs(tmp_path: Path) -> None:
    """The 4 inputs that `samples=4 seed=0` draws, saved to a .npy, calibrate identically."""
    inputs = np.random.default_rng(0).standard_normal((4, 1, 784)).astype(np.float32)
    np.save(tmp_path / "calib.npy", inputs)
    example = str(ROOT / "examples" / "mnist_mlp.mlir")
    drawn = run_opt(example, "-p", "derive-predict,quantize-int8{samples=4}")
    loaded = run_opt(
        example, "-p", f'derive-predict,quantize-int8{{calibration="{tmp_path / "calib.npy"}"}}'
    )
    assert drawn.returncode == 0 and loaded.returncode == 0, drawn.stderr + loaded.stderr
    assert drawn.stdout == loaded.stdout


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("quantize-int8", "error: quantize-int8: no function @predict (run derive-predict first)"),
        (
            'derive-predict,quantize-int8{calibration="no/such.npy"}',
            "error: quantize-int8: cannot read calibration file no/such.npy",
        ),
        (
            "derive-predict,quantize-int8{samples=0}",
            "error: quantize-int8: samples must be positive",
        ),
        # numpy's ValueErrors for these were internal errors (exit 2).
        (
            "derive-predict,quantize-int8{seed=-1}",
            "error: quantize-int8: seed must not be negative, got -1",
        ),
        (
            "derive-predict,quantize-int8{samples=99999999999999999999}",
            "error: quantize-int8: cannot draw 99999999999999999999 samples of shape (1, 784)",
        ),
        (
            'derive-predict,quantize-int8{calibration="README.md"}',
            "error: quantize-int8: cannot read calibration file README.md: not a .npy file",
        ),
    ],
)
def test_bad_input_is_a_located_error(pipeline: str, message: str) -> None:
    result = run_opt(str(ROOT / "examples" / "mnist_mlp.mlir"), "-p", pipeline)
    assert result.returncode == 1
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_an_empty_calibration_file_is_a_located_error(tmp_path: Path) -> None:
    """An empty file (the issue's /dev/null) was numpy's EOFError, an internal error (exit 2)."""
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    pipeline = f'derive-predict,quantize-int8{{calibration="{empty}"}}'
    result = run_opt(str(ROOT / "examples" / "mnist_mlp.mlir"), "-p", pipeline)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(
        f"{ROOT}/examples/mnist_mlp.mlir:15:1: error: quantize-int8: cannot read calibration "
        f"file {empty}: the file is empty, not a .npy array"
    ), result.stderr


def test_clamp_hardswish_and_hardsigmoid_are_int8_tables() -> None:
    """Hardswish and hardsigmoid each become one `adir.qlookup`: a table of the op's function
    of the 256 input levels (`Int8Lookup.values`), to the calibrated output range; ReLU6 after
    a fully-connected layer is fused into its clamp, as TFLite fuses RELU6 (act_max = zero
    point + round(6 / scale)); a ReLU6 that follows no layer is a table of the clamp with its
    own bounds. None stays in f32."""
    import torch
    from torch import nn

    from adir.frontends.torch_import import import_module

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(8, 16), nn.ReLU6(), nn.Linear(16, 16), nn.Hardswish(), nn.Linear(16, 4)
    )
    model.append(nn.Hardsigmoid())
    model.append(nn.ReLU6())  # after the hardsigmoid (in [0, 1]): a table, not a fusion
    with torch.no_grad():
        model[0].weight *= 10  # the first layer's outputs reach past 6: ReLU6 saturates
    module = import_module(model.eval(), (torch.randn(1, 8) * 4,), loss="mse")
    DerivePredictPass().apply(adir_context(), module)
    QuantizeInt8Pass(samples=32).apply(adir_context(), module)
    module.verify()
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    int8 = functions["predict_int8"]
    lookups = [op for op in int8.body.walk() if op.name == "adir.qlookup"]
    assert len(lookups) == 3  # hardswish, hardsigmoid, the last ReLU6
    # The fused ReLU6: calibration sees outputs from 0 to 6, so the range is [0, 6], the zero
    # point -128 (the value 0) and 6 is -128 + round(6 / (6 / 255)) = 127.
    first = next(op for op in int8.body.walk() if op.name == "adir.qfully_connected")
    assert first.act_min.value.data == -128 and first.act_max.value.data == 127
    # The last ReLU6's table: its input (hardsigmoid's, in [0, 1]) never reaches 6 nor goes
    # below 0, and calibration gives its output the input's range: the identity on the levels.
    table = np.array(lookups[2].operands[1].owner.value.get_values())  # type: ignore[attr-defined]
    np.testing.assert_array_equal(table, np.arange(-128, 128))
    names = {op.name for op in int8.body.walk()}
    assert not names & {"adir.clamp", "adir.hardswish", "adir.hardsigmoid"}  # none left in f32
