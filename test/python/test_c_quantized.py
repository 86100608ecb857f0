"""The quantized family's C kernels (runtime adir_quantized.c) against the interpreter, bit for
bit: integer arithmetic has one right answer, and the float ends (quantize: an f32 division and
roundf; dequantize: one f32 product) are single correctly rounded operations in C and numpy.

Each case goes through bufferize and plan-memory (so the int8 buffers live in the arena) and
builds with -std=c99 -Wall -Wextra -Wpedantic -Werror under ASan and UBSan.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from adir_testing import parse_example
from c_testing import check_c_against_interpreter

from adir.context import adir_context, parse_module
from adir.interpreter import run
from adir.passes.derive_predict import DerivePredictPass
from adir.passes.quantize_int8 import QuantizeInt8Pass

# Every op and option of the family: a conv with asymmetric padding, stride, dilation and
# per-channel multipliers including a positive shift (x 2^2 before the high multiply) and a
# zero multiplier; a depthwise conv with channel multiplier 2 and padding; both pools with
# padding (the average divides by the in-bounds taps); a table; transposes and reshapes; a
# per-tensor fully-connected layer with a fused-relu clamp; quantize and dequantize. The table
# is min(x, 0), which tells an off-by-one index apart; the weights a pattern in [-5, 5].
FAMILY = """
func.func @family(%x: tensor<1x7x6x3xf32>)
    -> (tensor<1x5xi8>, tensor<1x4x3x6xi8>, tensor<1x6x4x3xf32>, tensor<1x7x4x3xi8>) {
  %q = adir.quantize %x {scale = 0.03 : f32, zero_point = -5 : i32}
         : tensor<1x7x6x3xf32> -> tensor<1x7x6x3xi8>
  %w = adir.constant dense<[[[[1, -2, 3]], [[4, 5, -6]]], [[[-7, 8, 9]], [[10, -11, 12]]],
                            [[[127, -127, 0]], [[1, 1, 1]]]]> : tensor<3x2x1x3xi8>
  %b = adir.constant dense<[100, -2000, 7]> : tensor<3xi32>
  %c = adir.qconv2d %q, %w, %b {input_zero_point = -5 : i32, output_zero_point = 3 : i32,
         multiplier = array<i32: 1317423767, 2147483647, 0>, shift = array<i32: -6, 2, 0>,
         stride = array<i64: 2, 1>, padding = array<i64: 2, 1, 0, 1>, dilation = array<i64: 2, 1>}
         : tensor<1x7x6x3xi8>, tensor<3x2x1x3xi8>, tensor<3xi32> -> tensor<1x4x7x3xi8>
  %dw = adir.constant dense<[[[[1, -1, 2, -2, 3, -3], [4, -4, 5, -5, 6, -6]],
                              [[7, -7, 8, -8, 9, -9], [10, -10, 11, -11, 12, -12]]]]>
         : tensor<1x2x2x6xi8>
  %db = adir.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  %d = adir.qconv2d %c, %dw, %db {input_zero_point = 3 : i32, output_zero_point = -10 : i32,
         multiplier = array<i32: 1073741824>, shift = array<i32: -3>,
         padding = array<i64: 1, 0, 0, 1>, groups = 3 : i64}
         : tensor<1x4x7x3xi8>, tensor<1x2x2x6xi8>, tensor<6xi32> -> tensor<1x4x7x6xi8>
  %m = adir.qmaxpool2d %d {kernel_size = array<i64: 2, 3>, stride = array<i64: 1, 2>,
         padding = array<i64: 1, 0, 1, 1>} : tensor<1x4x7x6xi8> -> tensor<1x4x4x6xi8>
  %a = adir.qavgpool2d %d {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 2>,
         padding = array<i64: 1, 1, 0, 0>} : tensor<1x4x7x6xi8> -> tensor<1x4x3x6xi8>
  %t = adir.constant dense<TABLE> : tensor<256xi8>
  %l = adir.qlookup %m, %t : tensor<1x4x4x6xi8>, tensor<256xi8> -> tensor<1x4x4x6xi8>
  %n = adir.qtranspose %l {permutation = array<i64: 0, 3, 1, 2>}
         : tensor<1x4x4x6xi8> -> tensor<1x6x4x4xi8>
  %r = adir.qreshape %n {shape = array<i64: 1, 96>} : tensor<1x6x4x4xi8> -> tensor<1x96xi8>
  %fw = adir.constant dense<WEIGHTS> : tensor<5x96xi8>
  %fb = adir.constant dense<[-40, 0, 40, 400, -400]> : tensor<5xi32>
  %f = adir.qfully_connected %r, %fw, %fb {input_zero_point = 1 : i32, output_zero_point = -2 : i32,
         multiplier = array<i32: 1518500250>, shift = array<i32: -4>, act_min = -2 : i32}
         : tensor<1x96xi8>, tensor<5x96xi8>, tensor<5xi32> -> tensor<1x5xi8>
  %back = adir.qtranspose %c {permutation = array<i64: 0, 2, 1, 3>}
         : tensor<1x4x7x3xi8> -> tensor<1x7x4x3xi8>
  %crop = adir.qreshape %a {shape = array<i64: 1, 6, 4, 3>}
         : tensor<1x4x3x6xi8> -> tensor<1x6x4x3xi8>
  %y = adir.dequantize %crop {scale = 0.125 : f32, zero_point = -10 : i32}
         : tensor<1x6x4x3xi8> -> tensor<1x6x4x3xf32>
  func.return %f, %a, %y, %back
      : tensor<1x5xi8>, tensor<1x4x3x6xi8>, tensor<1x6x4x3xf32>, tensor<1x7x4x3xi8>
}
""".replace("TABLE", str([min(v, 0) for v in range(-128, 128)])).replace(
    "WEIGHTS", str([[(o * 7 + k * 3) % 11 - 5 for k in range(96)] for o in range(5)])
)


def test_every_kernel_of_the_family_is_bit_exact() -> None:
    """Inputs spread over [-6, 6] so quantize saturates (the scale 0.03 covers +-3.8) and the
    convs hit both clamps; plus exact halves of the scale (0.015, -0.045), where round-half-
    away-from-zero and numpy's round-half-even differ."""
    rng = np.random.default_rng(0)
    steps = []
    for _ in range(3):
        x = rng.uniform(-6.0, 6.0, (1, 7, 6, 3)).astype(np.float32)
        x.reshape(-1)[:4] = [0.015, -0.045, 0.0, np.float32(1e30)]
        steps.append([x])
    check_c_against_interpreter(FAMILY, "family", steps, rtol=0.0, atol=0.0)


def quantized_example(name: str):
    module = parse_example(name)
    DerivePredictPass().apply(adir_context(), module)
    QuantizeInt8Pass(samples=8, seed=0).apply(adir_context(), module)
    return module


@pytest.mark.parametrize("name", ["lenet5", "ds_cnn"])
def test_int8_examples_are_bit_exact(name: str) -> None:
    """@predict_int8 of LeNet-5 and the DS-CNN in C: the same bits as the interpreter on 3
    standard-normal inputs (int8 all through; the dequantized logits are one f32 product)."""
    module = quantized_example(name)
    shape = tuple(
        next(f for f in module.ops if getattr(f, "sym_name", None) and f.sym_name.data == "predict")
        .function_type.inputs.data[0]
        .get_shape()  # type: ignore[attr-defined]
    )
    rng = np.random.default_rng(3)
    steps = [[rng.standard_normal(shape).astype(np.float32)] for _ in range(3)]
    check_c_against_interpreter(module, "predict_int8", steps, rtol=0.0, atol=0.0)


def test_int8_mlp_matches_up_to_its_float_log_softmax() -> None:
    """The seed MLP's int8 layers end in an f32 log_softmax (no int8 form), which C's expf and
    logf compute to within an ulp of numpy's: 1e-6 relative; everything before it is int8."""
    module = quantized_example("mnist_mlp")
    rng = np.random.default_rng(3)
    steps = [[rng.standard_normal((1, 784)).astype(np.float32)] for _ in range(3)]
    check_c_against_interpreter(module, "predict_int8", steps, rtol=1e-6, atol=1e-6)


# TFLite's int8 ADD worked by hand: lhs at scale 0.5 (zero point -3), rhs at 0.375 (zero point
# 5), the sum at 0.25 (zero point 0). The unit is 2 max(0.5, 0.375) = 1: the lhs multiplier
# 0.5 = 2^30 / 2^31 (shift 0), the rhs 0.375 = 0.75 * 2^-1 (1610612736, shift -1), the output
# 1 / (2^20 * 0.25) = 2^-18 = 0.5 * 2^-17 (2^30, shift -17). The inputs are quantized at scale 1
# (the integers themselves).
QADD = """
func.func @qadd(%a: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<6xi8> {
  %qa = adir.quantize %a {scale = 1.0 : f32, zero_point = 0 : i32} : tensor<6xf32> -> tensor<6xi8>
  %qb = adir.quantize %b {scale = 1.0 : f32, zero_point = 0 : i32} : tensor<6xf32> -> tensor<6xi8>
  %s = adir.qadd %qa, %qb {lhs_zero_point = -3 : i32, rhs_zero_point = 5 : i32,
         output_zero_point = 0 : i32, lhs_multiplier = 1073741824 : i32, lhs_shift = 0 : i32,
         rhs_multiplier = 1610612736 : i32, rhs_shift = -1 : i32, multiplier = 1073741824 : i32,
         shift = -17 : i32} : tensor<6xi8>, tensor<6xi8> -> tensor<6xi8>
  func.return %s : tensor<6xi8>
}
"""


def test_qadd_is_tflite_add_by_hand_and_bit_exact_in_c() -> None:
    """(7, 0): 10 * 0.5 - 5 * 0.375 = 3.125 = 12.5 steps -> 13 (a half, away from zero);
    (-3, 0): -1.875 = -7.5 steps -> -8; (7, -1): 5 - 2.25 = 2.75 -> 11; (-3, 5): 0 -> 0;
    (127, 127): 65 + 45.75 = 443 steps -> 127; (-128, -128): -62.5 - 49.875 = -449.5 steps
    -> -128 (saturated). The C gives the same bits."""
    a = np.array([7, -3, 7, -3, 127, -128], np.float32)
    b = np.array([0, 0, -1, 5, 127, -128], np.float32)
    (got,) = run(parse_module(QADD), "qadd", a, b)
    np.testing.assert_array_equal(got, [13, -8, 11, 0, 127, -128])
    check_c_against_interpreter(QADD, "qadd", [[a, b], [b, a]], rtol=0.0, atol=0.0)


def transposes_module() -> str:
    """Every permutation of a 2x3x1x4 int8 tensor (the size-1 axis moves everywhere, runs of
    1 to 4 elements), and a 5x3x2 one's six: qtranspose's runs and their sources."""
    lines, results = [], []
    for shape in ((2, 3, 1, 4), (5, 3, 2)):
        name = "x" if len(shape) == 4 else "z"
        dims = "x".join(map(str, shape))
        lines.append(
            f"  %q{name} = adir.quantize %{name} {{scale = 0.25 : f32, zero_point = 3 : i32}}"
            f" : tensor<{dims}xf32> -> tensor<{dims}xi8>"
        )
        for index, permutation in enumerate(itertools.permutations(range(len(shape)))):
            out = "x".join(str(shape[p]) for p in permutation)
            lines.append(
                f"  %{name}{index} = adir.qtranspose %q{name} {{permutation = array<i64: "
                f"{', '.join(map(str, permutation))}>}} : tensor<{dims}xi8> -> tensor<{out}xi8>"
            )
            results.append((f"%{name}{index}", f"tensor<{out}xi8>"))
    return "\n".join(
        [
            "func.func @transposes(%x: tensor<2x3x1x4xf32>, %z: tensor<5x3x2xf32>)"
            f" -> ({', '.join(t for _, t in results)}) {{",
            *lines,
            f"  func.return {', '.join(v for v, _ in results)} : "
            f"{', '.join(t for _, t in results)}",
            "}",
        ]
    )


def test_qtranspose_is_bit_exact_for_every_permutation() -> None:
    """adir_qtranspose copies run by run along the output's last axis: each of the 30
    permutations gives the interpreter's (numpy's) bits."""
    rng = np.random.default_rng(5)
    steps = [
        [
            rng.uniform(-30.0, 30.0, (2, 3, 1, 4)).astype(np.float32),
            rng.uniform(-30.0, 30.0, (5, 3, 2)).astype(np.float32),
        ]
    ]
    check_c_against_interpreter(transposes_module(), "transposes", steps, rtol=0.0, atol=0.0)
