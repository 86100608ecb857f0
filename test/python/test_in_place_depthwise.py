"""`in-place-depthwise`: an int8 depthwise convolution (channel multiplier 1, stride 1, output
of its input's shape) whose input and output are the largest tensors any op holds is marked
`in_place` and written over its input by `bufferize` where the input dies there, and its
reference kernel (one plane of scratch per channel) gives the bits of the interpreter's qconv2d
in C (gcc and clang, ASan and UBSan). Where the input is still read after the convolution (a
residual sum), the output gets its own buffer and no plane.
"""

from __future__ import annotations

import numpy as np
import pytest
from c_testing import c_compilers, check_c_against_interpreter, run_pipeline
from xdsl.dialects.builtin import UnitAttr

from adir.context import parse_module

CHANNELS = 5


def depthwise(
    rng: np.random.Generator,
    batch: int,
    height: int,
    width: int,
    kernel: int,
    dilation: int,
    residual: bool,
    per_channel: bool,
) -> str:
    pad = dilation * (kernel - 1) // 2
    x_type = f"tensor<{batch}x{height}x{width}x{CHANNELS}xf32>"
    q_type = f"tensor<{batch}x{height}x{width}x{CHANNELS}xi8>"
    count = CHANNELS if per_channel else 1
    multiplier = ", ".join(str(m) for m in rng.integers(2**30, 2**31, count))
    shift = ", ".join(str(s) for s in rng.integers(-8, -5, count))
    weight = rng.integers(-127, 128, (1, kernel, kernel, CHANNELS)).tolist()
    bias = rng.integers(-3000, 3000, CHANNELS).tolist()
    text = f"""
func.func @dw(%x: {x_type}) -> {q_type} {{
  %q = adir.quantize %x {{scale = 0.05 : f32, zero_point = -7 : i32}} : {x_type} -> {q_type}
  %w = adir.constant dense<{weight}> : tensor<1x{kernel}x{kernel}x{CHANNELS}xi8>
  %b = adir.constant dense<{bias}> : tensor<{CHANNELS}xi32>
  %d = adir.qconv2d %q, %w, %b {{input_zero_point = -7 : i32, output_zero_point = 9 : i32,
         multiplier = array<i32: {multiplier}>, shift = array<i32: {shift}>,
         padding = array<i64: {pad}, {pad}, {pad}, {pad}>,
         dilation = array<i64: {dilation}, {dilation}>, act_min = -100 : i32,
         groups = {CHANNELS} : i64}}
         : {q_type}, tensor<1x{kernel}x{kernel}x{CHANNELS}xi8>, tensor<{CHANNELS}xi32> -> {q_type}
"""
    if not residual:
        return text + f"  func.return %d : {q_type}\n}}"
    return (
        text
        + f"""  %s = adir.qadd %q, %d {{lhs_zero_point = -7 : i32, rhs_zero_point = 9 : i32,
         output_zero_point = 0 : i32, lhs_multiplier = 1073741824 : i32, lhs_shift = 0 : i32,
         rhs_multiplier = 1610612736 : i32, rhs_shift = -1 : i32, multiplier = 1073741824 : i32,
         shift = -17 : i32}} : {q_type}, {q_type} -> {q_type}
  func.return %s : {q_type}
}}"""
    )


# (batch, height, width, kernel, dilation, residual, per-channel multipliers)
CASES = [
    (1, 7, 5, 3, 1, False, True),
    (2, 5, 9, 3, 1, False, False),
    (1, 9, 7, 3, 2, False, True),
    (1, 6, 7, 5, 1, False, True),
    (1, 7, 5, 3, 1, True, True),
]


def case(index: int):
    batch, height, width, *_ = CASES[index]
    rng = np.random.default_rng(10 + index)
    text = depthwise(rng, *CASES[index])
    marked = run_pipeline(parse_module(text, "dw.mlir"), "infer-shapes,in-place-depthwise")
    (conv,) = [op for op in marked.walk() if op.name == "adir.qconv2d"]
    if CASES[index][5]:
        # The sum holds three images, the conv two: the pass leaves the conv alone. Marked by
        # hand, it shows that bufferize still gives it a buffer of its own.
        assert "in_place" not in conv.properties
        conv.properties["in_place"] = UnitAttr()
    inputs = [
        [rng.uniform(-7.0, 7.0, (batch, height, width, CHANNELS)).astype(np.float32)]
        for _ in range(2)
    ]
    return marked, inputs


@pytest.mark.parametrize("index", range(len(CASES)))
def test_marked_depthwise_is_written_over_its_input_where_it_dies(index: int) -> None:
    marked, _ = case(index)
    (conv,) = [op for op in marked.walk() if op.name == "adir.qconv2d"]
    assert "in_place" in conv.properties  # without the residual sum, the conv is the peak
    selected = run_pipeline(marked, "bufferize,select-kernels{kernels=cmsis-nn}")
    (kernel,) = [op for op in selected.walk() if op.name == "adir_kernel.qconv2d"]
    height, width = CASES[index][1:3]
    if CASES[index][5]:  # the sum reads the input after the conv: a buffer of its own
        assert kernel.ins[0] is not kernel.outs[0] and len(kernel.outs) == 1
        assert kernel.attributes["adir.kernel"].data == "cmsis-nn"
    else:  # one buffer, and a plane of H x W bytes; CMSIS-NN refused
        assert kernel.ins[0] is kernel.outs[0]
        assert kernel.attributes["adir.kernel_scratch"].value.data == height * width
        assert kernel.attributes["adir.kernel"].data == "reference"
        reason = kernel.attributes["adir.kernel_refused"].data["cmsis-nn"].data
        assert "written over its input" in reason


@pytest.mark.parametrize("compiler", c_compilers())
@pytest.mark.parametrize("index", range(len(CASES)))
def test_in_place_kernel_in_c_is_the_interpreter(index: int, compiler: str) -> None:
    marked, inputs = case(index)
    check_c_against_interpreter(marked, "dw", inputs, rtol=0.0, atol=0.0, compiler=compiler)


def test_in_place_needs_a_same_shape_depthwise_convolution() -> None:
    text = """
func.func @f(%x: tensor<1x5x5x2xi8>, %w: tensor<1x3x3x2xi8>, %b: tensor<2xi32>)
    -> tensor<1x3x3x2xi8> {
  %y = adir.qconv2d %x, %w, %b {input_zero_point = 0 : i32, output_zero_point = 0 : i32,
         multiplier = array<i32: 1073741824>, shift = array<i32: -1>, groups = 2 : i64, in_place}
         : tensor<1x5x5x2xi8>, tensor<1x3x3x2xi8>, tensor<2xi32> -> tensor<1x3x3x2xi8>
  func.return %y : tensor<1x3x3x2xi8>
}"""
    with pytest.raises(Exception, match="in_place needs a depthwise convolution of stride 1"):
        run_pipeline(parse_module(text, "f.mlir"), "infer-shapes")
