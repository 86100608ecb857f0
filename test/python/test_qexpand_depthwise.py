"""`fuse-expand-depthwise` and `adir.qexpand_depthwise`: an int8 1x1 expansion and the depthwise
convolution that reads it, fused, give the bits of the two `adir.qconv2d` they replace, in the
interpreter and in C (the reference kernel computes one expanded channel at a time through a
plane of scratch: gcc and clang, ASan and UBSan).

The cases are small random inverted-residual blocks: odd image sizes, batch 1 and 2, stride 1
and 2 (TFLite's SAME padding, one more at the bottom and right for stride 2), a dilated one,
per-channel and per-tensor multipliers, a ReLU6-like clamp on the expansion, with and without
the residual sum that reads the block's input a second time.
"""

from __future__ import annotations

import numpy as np
import pytest
from c_testing import c_compilers, check_c_against_interpreter, function, run_pipeline

from adir.context import parse_module
from adir.interpreter import Session

CHANNELS, EXPANDED = 3, 7


def dense(values: np.ndarray) -> str:
    return str(values.tolist())


def array(values: list[int]) -> str:
    return ", ".join(str(v) for v in values)


def block(
    rng: np.random.Generator,
    batch: int,
    height: int,
    width: int,
    stride: int,
    padding: tuple[int, int, int, int],
    dilation: int,
    residual: bool,
    per_channel: bool,
) -> str:
    """The IR of one int8 block: quantize, 1x1 expansion, 3x3 depthwise, and with `residual`
    a 1x1 projection back to the input's channels and the sum with the block's input."""
    extent = 2 * dilation + 1
    out_h = (height + padding[0] + padding[1] - extent) // stride + 1
    out_w = (width + padding[2] + padding[3] - extent) // stride + 1
    x_type = f"tensor<{batch}x{height}x{width}x{CHANNELS}xf32>"
    q_type = f"tensor<{batch}x{height}x{width}x{CHANNELS}xi8>"
    e_type = f"tensor<{batch}x{height}x{width}x{EXPANDED}xi8>"
    d_type = f"tensor<{batch}x{out_h}x{out_w}x{EXPANDED}xi8>"
    count = EXPANDED if per_channel else 1
    # Multipliers in [2^30, 2^31) and shifts that bring the sums back to int8 with some of
    # them clamped; the expansion's clamp is a ReLU6's (zero point to zero point + 90).
    expand_m = rng.integers(2**30, 2**31, count).tolist()
    expand_s = rng.integers(-8, -5, count).tolist()
    dw_m = rng.integers(2**30, 2**31, count).tolist()
    dw_s = rng.integers(-8, -5, count).tolist()
    expand_zp, dw_zp = int(rng.integers(-128, -100)), int(rng.integers(-20, 20))
    text = f"""
  %q = adir.quantize %x {{scale = 0.05 : f32, zero_point = 3 : i32}} : {x_type} -> {q_type}
  %we = adir.constant dense<{dense(rng.integers(-127, 128, (EXPANDED, 1, 1, CHANNELS)))}>
         : tensor<{EXPANDED}x1x1x{CHANNELS}xi8>
  %be = adir.constant dense<{dense(rng.integers(-3000, 3000, EXPANDED))}> : tensor<{EXPANDED}xi32>
  %e = adir.qconv2d %q, %we, %be {{input_zero_point = 3 : i32,
         output_zero_point = {expand_zp} : i32, multiplier = array<i32: {array(expand_m)}>,
         shift = array<i32: {array(expand_s)}>, act_min = {expand_zp} : i32,
         act_max = {expand_zp + 90} : i32}}
         : {q_type}, tensor<{EXPANDED}x1x1x{CHANNELS}xi8>, tensor<{EXPANDED}xi32> -> {e_type}
  %wd = adir.constant dense<{dense(rng.integers(-127, 128, (1, 3, 3, EXPANDED)))}>
         : tensor<1x3x3x{EXPANDED}xi8>
  %bd = adir.constant dense<{dense(rng.integers(-3000, 3000, EXPANDED))}> : tensor<{EXPANDED}xi32>
  %d = adir.qconv2d %e, %wd, %bd {{input_zero_point = {expand_zp} : i32,
         output_zero_point = {dw_zp} : i32, multiplier = array<i32: {array(dw_m)}>,
         shift = array<i32: {array(dw_s)}>, stride = array<i64: {stride}, {stride}>,
         padding = array<i64: {array(list(padding))}>,
         dilation = array<i64: {dilation}, {dilation}>, groups = {EXPANDED} : i64}}
         : {e_type}, tensor<1x3x3x{EXPANDED}xi8>, tensor<{EXPANDED}xi32> -> {d_type}"""
    if not residual:
        return f"""
func.func @block(%x: {x_type}) -> {d_type} {{{text}
  func.return %d : {d_type}
}}"""
    p_type = f"tensor<{batch}x{out_h}x{out_w}x{CHANNELS}xi8>"
    return f"""
func.func @block(%x: {x_type}) -> ({d_type}, {p_type}) {{{text}
  %wp = adir.constant dense<{dense(rng.integers(-127, 128, (CHANNELS, 1, 1, EXPANDED)))}>
         : tensor<{CHANNELS}x1x1x{EXPANDED}xi8>
  %bp = adir.constant dense<{dense(rng.integers(-3000, 3000, CHANNELS))}> : tensor<{CHANNELS}xi32>
  %p = adir.qconv2d %d, %wp, %bp {{input_zero_point = {dw_zp} : i32, output_zero_point = -4 : i32,
         multiplier = array<i32: 1518500250>, shift = array<i32: -7>}}
         : {d_type}, tensor<{CHANNELS}x1x1x{EXPANDED}xi8>, tensor<{CHANNELS}xi32> -> {p_type}
  %s = adir.qadd %q, %p {{lhs_zero_point = 3 : i32, rhs_zero_point = -4 : i32,
         output_zero_point = 0 : i32, lhs_multiplier = 1073741824 : i32, lhs_shift = 0 : i32,
         rhs_multiplier = 1610612736 : i32, rhs_shift = -1 : i32, multiplier = 1073741824 : i32,
         shift = -17 : i32}} : {p_type}, {p_type} -> {p_type}
  func.return %d, %s : {d_type}, {p_type}
}}"""


# (batch, height, width, stride, padding (top, bottom, left, right), dilation, residual,
# per-channel multipliers); a residual block keeps its image size (stride 1, SAME padding).
CASES = [
    (1, 7, 5, 1, (1, 1, 1, 1), 1, False, True),
    (1, 9, 7, 2, (0, 1, 0, 1), 1, False, True),
    (2, 5, 9, 2, (1, 1, 1, 1), 1, False, False),
    (1, 7, 7, 1, (2, 2, 2, 2), 2, False, True),
    (1, 5, 7, 1, (1, 1, 1, 1), 1, True, True),
    (2, 7, 3, 1, (1, 1, 1, 1), 1, True, False),
]


def case_modules(index: int):
    batch, height, width, *_ = CASES[index]
    rng = np.random.default_rng(index)
    unfused = run_pipeline(parse_module(block(rng, *CASES[index]), "block.mlir"), "infer-shapes")
    fused = run_pipeline(unfused, "fuse-expand-depthwise")
    inputs = [
        [rng.uniform(-7.0, 7.0, (batch, height, width, CHANNELS)).astype(np.float32)]
        for _ in range(2)
    ]
    return unfused, fused, inputs


@pytest.mark.parametrize("index", range(len(CASES)))
def test_fused_block_is_the_two_convolutions_bit_for_bit(index: int) -> None:
    unfused, fused, inputs = case_modules(index)
    ops = [op.name for op in function(fused, "block").body.block.ops]
    # The expansion and the depthwise became one op; a residual block keeps its projection.
    assert ops.count("adir.qexpand_depthwise") == 1
    assert ops.count("adir.qconv2d") == (1 if CASES[index][6] else 0)
    for (x,) in inputs:
        want = Session(unfused).call("block", x)
        got = Session(fused).call("block", x)
        assert len(got) == len(want) == (2 if CASES[index][6] else 1)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
        # Not a constant output: the sums, not only the clamps, reach the result.
        assert len(np.unique(want[0])) > 8


@pytest.mark.parametrize("compiler", c_compilers())
@pytest.mark.parametrize("index", range(len(CASES)))
def test_fused_kernel_in_c_is_the_interpreter(index: int, compiler: str) -> None:
    """The C kernel (one expanded plane at a time) against the interpreter of the fused op,
    which the test above ties to the unfused ops: ASan and UBSan, -Werror."""
    _, fused, inputs = case_modules(index)
    check_c_against_interpreter(fused, "block", inputs, rtol=0.0, atol=0.0, compiler=compiler)


def test_the_plane_is_the_reference_kernels_scratch() -> None:
    """select-kernels gives the reference kernel one H x W plane (7 x 5 = 35 bytes) and
    CMSIS-NN, which has no such kernel, is refused with the reason recorded."""
    _, fused, _ = case_modules(0)
    for kernels in ("reference", "cmsis-nn"):
        selected = run_pipeline(fused, f"bufferize,select-kernels{{kernels={kernels}}}")
        (kernel,) = [op for op in selected.walk() if op.name == "adir_kernel.qexpand_depthwise"]
        assert kernel.attributes["adir.kernel"].data == "reference"
        assert kernel.attributes["adir.kernel_scratch"].value.data == 35
        assert len(kernel.outs) == 2
        if kernels == "cmsis-nn":
            reason = kernel.attributes["adir.kernel_refused"].data["cmsis-nn"].data
            assert "no fused 1x1 expansion + depthwise kernel" in reason


def test_verifier_rejects_an_expansion_that_is_not_1x1() -> None:
    text = """
func.func @f(%x: tensor<1x5x5x3xi8>, %we: tensor<4x3x3x3xi8>, %be: tensor<4xi32>,
             %wd: tensor<1x3x3x4xi8>, %bd: tensor<4xi32>) -> tensor<1x3x3x4xi8> {
  %y = adir.qexpand_depthwise %x, %we, %be, %wd, %bd {input_zero_point = 0 : i32,
         expand_zero_point = 0 : i32, output_zero_point = 0 : i32,
         expand_multiplier = array<i32: 1073741824>, expand_shift = array<i32: -1>,
         multiplier = array<i32: 1073741824>, shift = array<i32: -1>}
         : tensor<1x5x5x3xi8>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<1x3x3x4xi8>,
           tensor<4xi32> -> tensor<1x3x3x4xi8>
  func.return %y : tensor<1x3x3x4xi8>
}"""
    with pytest.raises(Exception, match=r"the expansion is a 1x1 convolution \[E, 1, 1, C\]"):
        run_pipeline(parse_module(text, "f.mlir"), "infer-shapes")
