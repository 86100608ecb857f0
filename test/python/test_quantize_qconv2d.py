"""`fuse-quantize-conv` and `adir.quantize_qconv2d`: the quantization of a float NCHW image, its
change to NHWC and the int8 convolution that reads it, fused, give the bits of the three ops
they replace, in the interpreter and in C (the reference kernel quantizes one window per
output pixel into KH x KW x C bytes of scratch: gcc and clang, ASan and UBSan).

The cases are small random first convolutions: odd image sizes, batch 1 and 2, 1 to 3 input
channels, kernels 3 and 5, stride 1 and 2 (TFLite's SAME padding, one more at the bottom and
right for stride 2), a dilated one, per-channel and per-tensor multipliers, a ReLU6-like
clamp; one image on a power-of-two scale whose values fall on halves (round half away from
zero), saturate both ways and hold a nan and infinities.
"""

from __future__ import annotations

import numpy as np
import pytest
from c_testing import c_compilers, check_c_against_interpreter, function, run_pipeline

from adir.context import parse_module
from adir.interpreter import Session


def array(values: list[int]) -> str:
    return ", ".join(str(v) for v in values)


# (batch, channels, height, width, out channels, kernel, stride, padding (top, bottom, left,
# right), dilation, per-channel multipliers, scale)
CASES = [
    (1, 3, 9, 7, 8, 3, 2, (0, 1, 0, 1), 1, True, 0.05),
    (2, 1, 5, 6, 4, 3, 1, (1, 1, 1, 1), 1, False, 0.05),
    (1, 2, 7, 9, 6, 5, 1, (2, 2, 2, 2), 1, True, 0.25),
    (1, 3, 8, 8, 16, 3, 1, (2, 2, 2, 2), 2, True, 0.05),
    (2, 3, 11, 5, 12, 3, 2, (1, 1, 1, 1), 1, False, 0.05),
]


def first_conv(rng: np.random.Generator, index: int) -> str:
    batch, channels, height, width, out, kernel, stride, padding, dilation, per_channel, scale = (
        CASES[index]
    )
    extent = dilation * (kernel - 1) + 1
    out_h = (height + padding[0] + padding[1] - extent) // stride + 1
    out_w = (width + padding[2] + padding[3] - extent) // stride + 1
    x_type = f"tensor<{batch}x{channels}x{height}x{width}xf32>"
    q_type = f"tensor<{batch}x{channels}x{height}x{width}xi8>"
    t_type = f"tensor<{batch}x{height}x{width}x{channels}xi8>"
    y_type = f"tensor<{batch}x{out_h}x{out_w}x{out}xi8>"
    w_type = f"tensor<{out}x{kernel}x{kernel}x{channels}xi8>"
    count = out if per_channel else 1
    multiplier = array(rng.integers(2**30, 2**31, count).tolist())
    shift = array(rng.integers(-9, -6, count).tolist())
    zero_point, out_zp = int(rng.integers(-20, 20)), int(rng.integers(-128, -100))
    weight = rng.integers(-127, 128, (out, kernel, kernel, channels)).tolist()
    bias = rng.integers(-3000, 3000, out).tolist()
    return f"""
func.func @stem(%x: {x_type}) -> {y_type} {{
  %q = adir.quantize %x {{scale = {scale} : f32, zero_point = {zero_point} : i32}}
         : {x_type} -> {q_type}
  %t = adir.qtranspose %q {{permutation = array<i64: 0, 2, 3, 1>}} : {q_type} -> {t_type}
  %w = adir.constant dense<{weight}> : {w_type}
  %b = adir.constant dense<{bias}> : tensor<{out}xi32>
  %y = adir.qconv2d %t, %w, %b {{input_zero_point = {zero_point} : i32,
         output_zero_point = {out_zp} : i32, multiplier = array<i32: {multiplier}>,
         shift = array<i32: {shift}>, stride = array<i64: {stride}, {stride}>,
         padding = array<i64: {array(list(padding))}>,
         dilation = array<i64: {dilation}, {dilation}>, act_min = {out_zp} : i32,
         act_max = {out_zp + 180} : i32}} : {t_type}, {w_type}, tensor<{out}xi32> -> {y_type}
  func.return %y : {y_type}
}}"""


def images(rng: np.random.Generator, index: int) -> list[list[np.ndarray]]:
    batch, channels, height, width, *_, scale = CASES[index]
    shape = (batch, channels, height, width)
    if scale != 0.25:
        return [[rng.uniform(-7.0, 7.0, shape).astype(np.float32)] for _ in range(2)]
    # x / 0.25 is exact: halves (k + 0.5), beyond +-128 both ways, a nan and infinities.
    x = ((rng.integers(-300, 300, shape) + 0.5) * 0.25).astype(np.float32)
    x[0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    return [[x]]


def case_modules(index: int):
    rng = np.random.default_rng(20 + index)
    unfused = run_pipeline(parse_module(first_conv(rng, index), "stem.mlir"), "infer-shapes")
    fused = run_pipeline(unfused, "fuse-quantize-conv")
    return unfused, fused, images(rng, index)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_fused_conv_is_quantize_transpose_conv_bit_for_bit(index: int) -> None:
    unfused, fused, inputs = case_modules(index)
    # The chain is the whole function, so one of its ops holds the most arena bytes (the
    # transpose, the int8 image twice, or the conv, the image and its output), and the fused
    # op holds only the output: the three ops became one.
    assert [op.name for op in function(fused, "stem").body.block.ops] == [
        "adir.constant",
        "adir.constant",
        "adir.quantize_qconv2d",
        "func.return",
    ]
    for (x,) in inputs:
        (want,) = Session(unfused).call("stem", x)
        (got,) = Session(fused).call("stem", x)
        np.testing.assert_array_equal(got, want)
        # Not a constant output: the sums, not only the clamps, reach the result.
        assert len(np.unique(want)) > 8


@pytest.mark.parametrize("compiler", c_compilers())
@pytest.mark.parametrize("index", range(len(CASES)))
def test_fused_kernel_in_c_is_the_interpreter(index: int, compiler: str) -> None:
    """The C kernel (one quantized window per output pixel) against the interpreter of the
    fused op, which the test above ties to the unfused ops: ASan and UBSan, -Werror."""
    _, fused, inputs = case_modules(index)
    check_c_against_interpreter(fused, "stem", inputs, rtol=0.0, atol=0.0, compiler=compiler)


def test_the_window_is_the_reference_kernels_scratch() -> None:
    """select-kernels gives the reference kernel one window (3 x 3 x 3 = 27 bytes) and
    CMSIS-NN, which has no convolution of a float input, is refused with the reason
    recorded."""
    _, fused, _ = case_modules(0)
    for kernels in ("reference", "cmsis-nn"):
        selected = run_pipeline(fused, f"bufferize,select-kernels{{kernels={kernels}}}")
        (kernel,) = [op for op in selected.walk() if op.name == "adir_kernel.quantize_qconv2d"]
        assert kernel.attributes["adir.kernel"].data == "reference"
        assert kernel.attributes["adir.kernel_scratch"].value.data == 27
        assert len(kernel.outs) == 2
        if kernels == "cmsis-nn":
            reason = kernel.attributes["adir.kernel_refused"].data["cmsis-nn"].data
            assert "none quantizes a float one" in reason


def test_no_fusion_where_the_peak_is_elsewhere() -> None:
    """The stem's chain holds at most 2 x 192 bytes (the 3x8x8 image NCHW and NHWC) and its
    conv 192 + 256; the 1x1 conv after it reads 8x8x4 (256) and writes 8x8x32 (2,048): the
    peak is there, fusing would not lower it, and the chain stays (CMSIS-NN keeps the
    stem)."""
    text = """
func.func @stem(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x8x32xi8> {
  %q = adir.quantize %x {scale = 0.05 : f32, zero_point = 0 : i32}
         : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xi8>
  %t = adir.qtranspose %q {permutation = array<i64: 0, 2, 3, 1>}
         : tensor<1x3x8x8xi8> -> tensor<1x8x8x3xi8>
  %w = adir.constant dense<1> : tensor<4x3x3x3xi8>
  %b = adir.constant dense<0> : tensor<4xi32>
  %y = adir.qconv2d %t, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32,
         multiplier = array<i32: 1073741824>, shift = array<i32: -1>,
         padding = array<i64: 1, 1, 1, 1>}
         : tensor<1x8x8x3xi8>, tensor<4x3x3x3xi8>, tensor<4xi32> -> tensor<1x8x8x4xi8>
  %w2 = adir.constant dense<1> : tensor<32x1x1x4xi8>
  %b2 = adir.constant dense<0> : tensor<32xi32>
  %e = adir.qconv2d %y, %w2, %b2 {input_zero_point = 0 : i32, output_zero_point = 0 : i32,
         multiplier = array<i32: 1073741824>, shift = array<i32: -1>}
         : tensor<1x8x8x4xi8>, tensor<32x1x1x4xi8>, tensor<32xi32> -> tensor<1x8x8x32xi8>
  func.return %e : tensor<1x8x8x32xi8>
}"""
    module = run_pipeline(parse_module(text, "stem.mlir"), "infer-shapes,fuse-quantize-conv")
    names = [op.name for op in function(module, "stem").body.block.ops]
    assert names.count("adir.qconv2d") == 2 and "adir.quantize_qconv2d" not in names


def test_verifier_rejects_channels_that_do_not_match() -> None:
    text = """
func.func @f(%x: tensor<1x3x5x5xf32>, %w: tensor<4x3x3x2xi8>, %b: tensor<4xi32>)
    -> tensor<1x3x3x4xi8> {
  %y = adir.quantize_qconv2d %x, %w, %b {input_scale = 0.5 : f32, input_zero_point = 0 : i32,
         output_zero_point = 0 : i32, multiplier = array<i32: 1073741824>,
         shift = array<i32: -1>}
         : tensor<1x3x5x5xf32>, tensor<4x3x3x2xi8>, tensor<4xi32> -> tensor<1x3x3x4xi8>
  func.return %y : tensor<1x3x3x4xi8>
}"""
    with pytest.raises(Exception, match=r"input channels 3 \(NCHW\) and weight channels 2"):
        run_pipeline(parse_module(text, "f.mlir"), "infer-shapes")
