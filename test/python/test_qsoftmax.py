"""adir.qsoftmax: TFLite's int8 softmax (CMSIS-NN's arm_softmax_s8) worked by hand, in C bit for
bit against the interpreter, against the float softmax, and made by quantize-int8.

The bit-exact comparison with CMSIS-NN's own arm_softmax_s8 is in test_cmsis_nn.py (it needs
ADIR_CMSIS_NN).
"""

from __future__ import annotations

import numpy as np
import pytest
from c_testing import check_c_against_interpreter

from adir.context import adir_context, parse_module
from adir.interpreter import Session
from adir.interpreter.quantized import (
    INT32_MAX,
    exp_on_negative_values,
    one_over_one_plus_x,
    softmax_int8,
    softmax_parameters,
)
from adir.passes.quantize_int8 import QuantizeInt8Pass


def test_softmax_parameters_by_hand() -> None:
    """Input scale 1/16: 2^-4 * 2^26 = 2^22 = 0.5 * 2^23, so multiplier 0.5 * 2^31 = 2^30 and
    left shift 23; diff_min = -floor(31 * 2^26 / 2^23) = -248 (a difference of 248 steps is
    15.5 in real terms, 31 / 2 of the Q5.26 range). Scale 0.1: 0.1 * 2^26 = 6710886.4 =
    0.8 * 2^23, multiplier round(0.8 * 2^31) = 1717986918; diff_min the same -248. Scale 64:
    2^32 is capped at 2^31 - 1 = (1 - 2^-31) * 2^31, whose shift 31 QuantizeMultiplier
    saturates to (2^31 - 1, 30); diff_min = -floor(31 * 2^26 / 2^30) = -1. Scale 2^-26 gives
    exactly 1, not above it: TFLite's QuantizeMultiplierGreaterThanOne refuses it."""
    assert softmax_parameters(1 / 16) == (2**30, 23, -248)
    assert softmax_parameters(0.1) == (1717986918, 23, -248)
    assert softmax_parameters(64.0) == (2**31 - 1, 30, -1)
    with pytest.raises(ValueError, match="not above 2\\^-26"):
        softmax_parameters(2.0**-26)


def test_fixed_point_exp_and_reciprocal_by_hand() -> None:
    """exp(0) is 2^31 - 1 (the special case). exp(-1/4) (Q5.26: -2^24) is the polynomial
    alone (the argument is its own value mod 1/4, nothing remains): 1672462419 against
    exp(-1/4) * 2^31 = 1672461946.7. exp(-1) (-2^26): the polynomial's exp(-1/4) times the
    factors of the remainder's bits 24 and 25, exp(-1/4) and exp(-1/2): 790015308 against
    790015084.4 (3e-7 relative). 1 / (1 + 0) = 1 saturates at 2^31 - 1; 1 / (1 + 1/2) = 2/3 *
    2^31 = 1431655765.3, and three Newton-Raphson steps give 1431655762."""
    exps = exp_on_negative_values(np.array([0, -(2**26), -(2**24)]))
    assert exps.tolist() == [INT32_MAX, 790015308, 1672462419]
    assert one_over_one_plus_x(np.array([0, 2**30])).tolist() == [INT32_MAX, 1431655762]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        # Two ties: 0.5 each, 0.5 * 256 - 128 = 0. The sum is 2 * 2^19 (each exp(0) = 2^31 - 1
        # in Q12.19 rounds up to 2^19), headroom 11, so the reciprocal of 1 + 0 and a division
        # by 2^(12 - 11 + 23) = 2^24: (2^31 - 2) / 2^24 = 127.99999988 -> 128, - 128 = 0.
        ([0, 0], [0, 0]),
        # One entry: 1.0 would be 256 - 128 = 128, saturated at 127.
        ([5], [127]),
        # Differences 0 and -16 at scale 1/16 are 0 and -1: e / (e + 1) = 0.73106 -> 187.15
        # -> 59.15 -> 59; 1 / (e + 1) = 0.26894 -> 68.85 -> -59.15 -> -59.
        ([0, -16], [59, -59]),
        # exp(-1) twice and 1: 1 / (1 + 2 / e) = 0.57612 -> 147.49 -> 19; 0.21194 -> 54.26
        # -> -73.74 -> -74.
        ([-16, 0, -16], [-74, 19, -74]),
        # Four ties: 64 - 128 = -64.
        ([100, 100, 100, 100], [-64, -64, -64, -64]),
    ],
)
def test_softmax_by_hand(row: list[int], expected: list[int]) -> None:
    """Input scale 1/16 (multiplier 2^30, shift 23, diff_min -248)."""
    multiplier, shift, diff_min = softmax_parameters(1 / 16)
    assert softmax_int8(np.array([row], np.int8), multiplier, shift, diff_min).tolist() == [
        expected
    ]


def test_differences_below_diff_min_are_zero() -> None:
    """Scale 1/2 (multiplier 2^30, shift 26): diff_min = -floor(31 * 2^26 / 2^26) = -31. A
    difference of -31 still counts (exp(-15.5) * 256 = 4.7e-5 -> -128 anyway) and -32 is cut
    off (-128); the maximum's own exp is then the whole sum: 1.0 -> 127. Through the op in the
    interpreter, which takes the integers from its properties."""
    multiplier, shift, diff_min = softmax_parameters(0.5)
    assert (multiplier, shift, diff_min) == (2**30, 26, -31)
    module = parse_module(
        f"""
        func.func @f(%x: tensor<1x3xi8>) -> tensor<1x3xi8> {{
          %y = adir.qsoftmax %x {{multiplier = {multiplier} : i32, shift = {shift} : i32,
                 diff_min = {diff_min} : i32}} : tensor<1x3xi8>
          func.return %y : tensor<1x3xi8>
        }}"""
    )
    (y,) = Session(module).call("f", np.array([[0, -31, -32]], np.int8))
    assert y.tolist() == [[127, -128, -128]]


def test_long_tied_rows_divide_exactly() -> None:
    """600 entries tied at the maximum sum to 600 * 2^19 >= 2^28: headroom 3, a division by
    2^(12 - 3 + 23) = 2^32 of a product below 2^31, which is 0 (1/600 * 256 = 0.43 -> 0 ->
    -128); C's int32 shift cannot divide by 2^32, adir's kernel and the interpreter give 0.
    511 ties (sum below 2^28) divide by 2^31: 256 / 511 = 0.50098 -> 1 -> -127."""
    multiplier, shift, diff_min = softmax_parameters(0.1)
    tied = softmax_int8(np.full((2, 600), 7, np.int8), multiplier, shift, diff_min)
    assert (tied == -128).all()
    fewer = softmax_int8(np.full((1, 511), 7, np.int8), multiplier, shift, diff_min)
    assert (fewer == -127).all()


@pytest.mark.parametrize("scale", [0.01, 0.1, 0.3, 1.0])
@pytest.mark.parametrize("row_size", [2, 10, 100])
def test_int8_softmax_follows_float(scale: float, row_size: int) -> None:
    """Against the float64 softmax of the same dequantized int8 input, in steps of the output
    scale 1/256: the output's rounding is half a step; the Q12.19 sum of exps rounds each term
    by up to 2^-20 (exp(0) = 1), at most row_size * 2^-20 relative to a sum >= 1, i.e.
    row_size / 4096 steps; the fixed-point exp and reciprocal are good to about 1e-7 relative
    (above), 1/1024 of a step leaves them room. So 0.5 + row_size / 4096 + 1 / 1024 steps, except
    where the float is 255.5 / 256 or more: 1.0 would be 256 - 128 = 128, which saturates at 127,
    one step. 200 rows of uniform int8 (half of the 2-entry rows within +-3, close calls)."""
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (200, row_size)).astype(np.int8)
    if row_size == 2:
        x[:100] = rng.integers(-3, 4, (100, 2))
    got = (softmax_int8(x, *softmax_parameters(scale)).astype(np.float64) + 128) / 256
    real = x.astype(np.float64) * scale
    e = np.exp(real - real.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    steps = np.abs(got - want) * 256
    saturated = want * 256 >= 255.5
    assert steps[~saturated].max() <= 0.5 + row_size / 4096 + 1 / 1024
    assert steps[saturated].max(initial=0.0) <= 1.0


def test_quantize_int8_makes_qsoftmax_from_the_input_scale() -> None:
    """quantize-int8 on matmul -> softmax: the qsoftmax's integers are softmax_parameters of the
    fully-connected output's scale, and it dequantizes at 1/256, -128."""
    module = parse_module(
        """
        adir.param @w : tensor<10x6xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 3>
        func.func @predict(%x: tensor<2x6xf32>) -> tensor<2x10xf32> {
          %w = adir.load @w : tensor<10x6xf32>
          %h = adir.matmul %x, %w {transpose_b} : tensor<2x6xf32>, tensor<10x6xf32>
                 -> tensor<2x10xf32>
          %s = adir.softmax %h : tensor<2x10xf32>
          func.return %s : tensor<2x10xf32>
        }"""
    )
    QuantizeInt8Pass(samples=4).apply(adir_context(), module)
    ops = {op.name: op for op in module.walk()}
    scale = ops["adir.dequantize"].properties["scale"].value.data  # type: ignore[attr-defined]
    assert scale == 1 / 256
    fc_scale = float(np.float32(8.23767e-03))
    softmax = ops["adir.qsoftmax"]
    found = tuple(
        softmax.properties[name].value.data  # type: ignore[attr-defined]
        for name in ("multiplier", "shift", "diff_min")
    )
    # The fully-connected output's scale is the calibrated 8.2377e-03 (printed to 7 digits;
    # the multiplier holds 31 bits, so compare the shift and diff_min exactly and the
    # multiplier to the printed scale's 1e-6).
    expected = softmax_parameters(fc_scale)
    assert found[1:] == expected[1:] == (20, -1984)
    assert found[0] == pytest.approx(expected[0], rel=1e-6)


# Rows of 600 at three parameter sets: scale 0.05's (diff_min -496: every int8 difference
# counts), scale 1.0's (diff_min -15: most are cut off) and scale 64's (shift 30, diff_min -1);
# the same bytes as rows of 10 and of 1. Input row 2 is 1e30 throughout: 600 entries tied at
# 127, the sum of 2^28 and more that divides by 2^32.
SOFTMAXES = """
func.func @softmaxes(%x: tensor<3x600xf32>)
    -> (tensor<3x600xi8>, tensor<3x60x10xi8>, tensor<3x600xi8>, tensor<1800x1xi8>,
        tensor<3x600xf32>) {
  %q = adir.quantize %x {scale = 0.05 : f32, zero_point = -3 : i32}
         : tensor<3x600xf32> -> tensor<3x600xi8>
  %a = adir.qsoftmax %q {multiplier = A_M : i32, shift = A_S : i32, diff_min = A_D : i32}
         : tensor<3x600xi8>
  %r = adir.qreshape %q {shape = array<i64: 3, 60, 10>} : tensor<3x600xi8> -> tensor<3x60x10xi8>
  %b = adir.qsoftmax %r {multiplier = B_M : i32, shift = B_S : i32, diff_min = B_D : i32}
         : tensor<3x60x10xi8>
  %c = adir.qsoftmax %q {multiplier = C_M : i32, shift = C_S : i32, diff_min = C_D : i32}
         : tensor<3x600xi8>
  %o = adir.qreshape %q {shape = array<i64: 1800, 1>} : tensor<3x600xi8> -> tensor<1800x1xi8>
  %d = adir.qsoftmax %o {multiplier = A_M : i32, shift = A_S : i32, diff_min = A_D : i32}
         : tensor<1800x1xi8>
  %y = adir.dequantize %a {scale = 0.00390625 : f32, zero_point = -128 : i32}
         : tensor<3x600xi8> -> tensor<3x600xf32>
  func.return %a, %b, %c, %d, %y
      : tensor<3x600xi8>, tensor<3x60x10xi8>, tensor<3x600xi8>, tensor<1800x1xi8>,
        tensor<3x600xf32>
}
"""


def softmaxes() -> str:
    text = SOFTMAXES
    for prefix, scale in (("A", 0.05), ("B", 1.0), ("C", 64.0)):
        multiplier, shift, diff_min = softmax_parameters(scale)
        text = text.replace(f"{prefix}_M", str(multiplier))
        text = text.replace(f"{prefix}_S", str(shift)).replace(f"{prefix}_D", str(diff_min))
    return text


def test_qsoftmax_in_c_is_bit_exact() -> None:
    """3 inputs: row 0 uniform over [-8, 8] (quantize saturates beyond about +-6.4), row 1
    small integers (many ties), row 2 all 1e30 (600 ties at 127); ASan and UBSan on."""
    rng = np.random.default_rng(2)
    steps = []
    for _ in range(3):
        x = np.empty((3, 600), np.float32)
        x[0] = rng.uniform(-8.0, 8.0, 600)
        x[1] = rng.integers(-3, 4, 600) * 0.05
        x[2] = 1e30
        steps.append([x])
    check_c_against_interpreter(softmaxes(), "softmaxes", steps, rtol=0.0, atol=0.0)
