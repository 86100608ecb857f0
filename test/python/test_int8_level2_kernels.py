"""Level 2 of quantized training, its two ops (docs/quantized_training.md): worked by hand in
the interpreter, and their C kernels (runtime adir_quantized.c) against the interpreter bit for
bit with gcc and clang under ASan and UBSan."""

from __future__ import annotations

import numpy as np
import pytest
from c_testing import c_compilers, check_c_against_interpreter

from adir.context import parse_module
from adir.interpreter import Session

# qrequantize_grad on an NHWC [1, 2, 2, 3] output with a ReLU-like clamp from -5, the three
# channels' multipliers 2^30 * 2^-34 = 1/16, 0.75 and 2^30 * 2^-30 = 1; qsgd_update of an
# int8 weight [3, 1, 1, 2] with one step scale per output channel (1, 0.5, 4) and of an int32
# bias [3] with one step scale for all.
OPS = """
func.func @level2(%yf: tensor<1x2x2x3xf32>, %g: tensor<1x2x2x3xf32>, %wf: tensor<3x1x1x2xf32>,
                  %gw: tensor<3x1x1x2xf32>, %b: tensor<3xi32>, %gb: tensor<3xf32>,
                  %lr: tensor<f32>)
    -> (tensor<1x2x2x3xf32>, tensor<3x1x1x2xi8>, tensor<3xi32>) {
  %y = adir.quantize %yf {scale = 1.0 : f32, zero_point = 0 : i32}
         : tensor<1x2x2x3xf32> -> tensor<1x2x2x3xi8>
  %w = adir.quantize %wf {scale = 1.0 : f32, zero_point = 0 : i32}
         : tensor<3x1x1x2xf32> -> tensor<3x1x1x2xi8>
  %a = adir.qrequantize_grad %y, %g {multiplier = array<i32: 1073741824, 1610612736, 1073741824>,
         shift = array<i32: -3, 0, 1>, act_min = -5 : i32}
         : tensor<1x2x2x3xi8>, tensor<1x2x2x3xf32> -> tensor<1x2x2x3xf32>
  %w1 = adir.qsgd_update %w, %gw, %lr {step_scale = [1.0 : f32, 0.5 : f32, 4.0 : f32]}
         : tensor<3x1x1x2xi8>, tensor<3x1x1x2xf32>, tensor<f32> -> tensor<3x1x1x2xi8>
  %b1 = adir.qsgd_update %b, %gb, %lr {step_scale = [1.0e+04 : f32]}
         : tensor<3xi32>, tensor<3xf32>, tensor<f32> -> tensor<3xi32>
  func.return %a, %w1, %b1 : tensor<1x2x2x3xf32>, tensor<3x1x1x2xi8>, tensor<3xi32>
}
"""


def inputs() -> list[np.ndarray]:
    y = np.array([-6, -5, -4, 0, 126, 127, 3, -128, 10, 1, 2, 100], np.float32).reshape(1, 2, 2, 3)
    g = np.linspace(-1.5, 2.0, 12, dtype=np.float32).reshape(1, 2, 2, 3)
    w = np.array([127, -127, 5, -5, 0, 100], np.float32).reshape(3, 1, 1, 2)
    gw = np.array([-30.0, 30.0, 5.0, -5.0, 0.625, -0.375], np.float32).reshape(3, 1, 1, 2)
    b = np.array([2**31 - 100, -(2**31) + 100, 123456789], np.int32)
    gb = np.array([-1.0, 1.0, 0.00025], np.float32)
    return [y, g, w, gw, b, gb, np.array(0.1, np.float32)]


def test_level2_ops_by_hand() -> None:
    """qrequantize_grad: y = -6 and -5 are at or below the clamp's act_min (no gradient), -4
    passes; 127 is the top of the clamp (none), 126 passes; -128 none. The step lr * g *
    step_scale is 0.1 * g: the weight 127 - round(-3.0) = 130 -> 127 (clamped), -127 -
    round(3.0) = -130 -> -127; 5 - round(0.25) = 5, -5 - round(-0.25) = -5; in channel 2
    (scale 4) 0.1 * 0.625 * 4 = 0.25 -> 0 and 0.1 * -0.375 * 4 = -0.15 -> 0. The bias:
    2^31 - 100 - round(-1000) saturates at 2^31 - 1, the other end at -2^31, and 123456789 -
    round(0.1 * 0.00025 * 1e4 = 0.25) stays: an int32 beyond 2^24 keeps its exact value."""
    module = parse_module(OPS, "test.mlir")
    grad, w1, b1 = Session(module).call("level2", *inputs())
    g = inputs()[1].reshape(-1)
    real = np.array([1 / 16, 0.75, 1.0], np.float32)
    passes = np.array([0, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1], bool)
    expected = np.where(passes, g * np.tile(real, 4), 0.0).astype(np.float32)
    np.testing.assert_array_equal(grad.reshape(-1), expected)
    np.testing.assert_array_equal(w1.reshape(-1), [127, -127, 5, -5, 0, 100])
    np.testing.assert_array_equal(b1, [2**31 - 1, -(2**31), 123456789])


def test_level2_steps_round_halves_away_from_zero() -> None:
    """A step of exactly 0.5 (0.1 * 5 in f32 is 0.5) moves the weight by 1, as roundf does;
    numpy's round (half to even) would not."""
    module = parse_module(OPS, "test.mlir")
    args = inputs()
    args[3] = np.array([5.0, -5.0, 15.0, -15.0, 0.0, 0.0], np.float32).reshape(3, 1, 1, 2)
    _, w1, _ = Session(module).call("level2", *args)
    # channel 0 (scale 1): 0.5 -> 1, -0.5 -> -1; channel 1 (scale 0.5): 0.75 -> 1, -0.75 -> -1
    np.testing.assert_array_equal(w1.reshape(-1), [126, -126, 4, -4, 0, 100])


@pytest.mark.parametrize("compiler", c_compilers())
def test_level2_kernels_are_bit_exact_in_c(compiler: str) -> None:
    """The two kernels in C give the interpreter's bits: the same cases and two random ones
    (gradients of up to 40 integer steps, so that clamps, roundings and halves all occur)."""
    rng = np.random.default_rng(0)
    steps = [inputs()]
    for _ in range(2):
        case = inputs()
        case[0] = rng.integers(-128, 128, case[0].shape).astype(np.float32)
        case[1] = rng.standard_normal(case[1].shape).astype(np.float32)
        case[2] = rng.integers(-127, 128, case[2].shape).astype(np.float32)
        case[3] = (rng.integers(-400, 400, case[3].shape) / 2).astype(np.float32)
        case[5] = rng.standard_normal(3).astype(np.float32)
        steps.append(case)
    check_c_against_interpreter(OPS, "level2", steps, rtol=0.0, atol=0.0, compiler=compiler)
