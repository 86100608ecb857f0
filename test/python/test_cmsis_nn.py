"""select-kernels{kernels=cmsis-nn} and the CMSIS-NN build, against CMSIS-NN's own sources.

CMSIS-NN is on no package registry: these tests need its sources, a checkout of
github.com/ARM-software/CMSIS-NN, in the directory named by the environment variable
ADIR_CMSIS_NN (the one holding Include/ and Source/); without it they skip. Its s8 kernels and
their support functions (every Source/ file but the f16/f32 ones) are compiled for the host,
where no __ARM_FEATURE_* is defined, so CMSIS-NN builds its portable C paths.

- The scratch sizes that select-kernels computes in Python, for every CMSIS-NN build, equal what
  CMSIS-NN's `*_get_buffer_size_dsp` / `_mve` (callable on the host for that purpose) and the
  host's own `*_get_buffer_size` (the scalar build) return, on shapes that take every branch.
- Models compiled with `--c-kernels=cmsis-nn` give the same bits as the project's int8 reference
  C and as the interpreter: integer arithmetic, and CMSIS-NN rounds as TFLite does.
- The same on a Cortex-M4 under QEMU (mps2-an386, CMSIS-NN's DSP code, target=cortex-m4f), which
  also needs arm-none-eabi-gcc and qemu-system-arm (as test_cortex_m.py does).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from adir_testing import parse_example
from c_testing import (
    PREFIX,
    WARNINGS,
    build_c,
    c_compilers,
    interpreter_run,
    process_directory,
    run_pipeline,
)
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.rewriter import Rewriter

from adir.context import adir_context, parse_module
from adir.interpreter.quantized import quantize_multiplier, softmax_parameters
from adir.passes.derive_predict import DerivePredictPass
from adir.passes.quantize_int8 import QuantizeInt8Pass
from adir.passes.select_kernels import cmsis_nn as lower

CMSIS_NN = os.environ.get("ADIR_CMSIS_NN", "")
needs_cmsis_nn = pytest.mark.skipif(
    not (CMSIS_NN and (Path(CMSIS_NN) / "Include" / "arm_nnfunctions.h").is_file()),
    reason="ADIR_CMSIS_NN does not name a CMSIS-NN checkout (with Include/arm_nnfunctions.h)",
)
LOWERING = (
    "fuse-weight-updates,reorder-updates,bufferize,select-kernels{kernels=cmsis-nn},plan-memory"
)
REFERENCE = "fuse-weight-updates,reorder-updates,bufferize,plan-memory"


@functools.cache
def cmsis_nn_objects(compiler: str, flags: tuple[str, ...]) -> list[str]:
    """CMSIS-NN's integer sources compiled once per compiler and flags, warnings allowed (its
    code is not ours to hold to -Wpedantic), with -fwrapv and, under UBSan, without its
    shift-base check: the softmax support functions shift negative int32 values left and
    compute `(1 << 31) - 1` (gemmlowp's fixed point), which C99 leaves undefined and Arm's
    compilers do in two's complement."""
    directory = process_directory("adir-cmsis-nn-")
    kept = [f for f in flags if f not in WARNINGS] + ["-fwrapv"]
    if any(f.startswith("-fsanitize=") and "undefined" in f for f in kept):
        kept.append("-fno-sanitize=shift-base")
    sources = sorted(
        p
        for p in (Path(CMSIS_NN) / "Source").rglob("*.c")
        if "f16" not in p.name and "f32" not in p.name
    )
    objects = []
    for index, source in enumerate(sources):
        target = directory / f"{index}_{source.stem}.o"
        completed = subprocess.run(
            [
                compiler,
                "-std=c99",
                *kept,
                "-I",
                f"{CMSIS_NN}/Include",
                "-c",
                str(source),
                "-o",
                str(target),
            ],
            capture_output=True,
            text=True,
        )
        assert completed.returncode == 0, f"{source.name}:\n{completed.stderr}"
        objects.append(str(target))
    return [f"-I{CMSIS_NN}/Include", *objects]


# -- scratch sizes ----------------------------------------------------------------------------

# (input [n, h, w, c], filter, output, stride (h, w), padding (top, left)) for conv: the 1x1
# fast and strided paths, 1 x n (input height 1, stride * c % 4 == 0), the general im2col with
# columns that are and are not a multiple of 4 (and of 16 for Helium), padding on 1 x n.
CONVS = [
    ((1, 8, 8, 16), (8, 1, 1, 16), (1, 8, 8, 8), (1, 1), (0, 0)),
    ((1, 8, 8, 16), (8, 1, 1, 16), (1, 4, 4, 8), (2, 2), (0, 0)),
    ((1, 1, 20, 4), (8, 1, 3, 4), (1, 1, 18, 8), (1, 1), (0, 0)),
    ((1, 1, 20, 4), (8, 1, 3, 4), (1, 1, 10, 8), (1, 2), (0, 1)),
    ((1, 1, 21, 8), (4, 1, 4, 8), (1, 1, 21, 4), (1, 1), (0, 1)),
    ((1, 28, 28, 1), (6, 5, 5, 1), (1, 24, 24, 6), (1, 1), (0, 0)),
    ((1, 49, 10, 1), (64, 10, 4, 1), (1, 25, 5, 64), (2, 2), (4, 1)),
    ((1, 12, 12, 6), (16, 5, 5, 6), (1, 8, 8, 16), (1, 1), (0, 0)),
]
# Depthwise: the 3x3 kernel (no buffer off Helium), the general one, channel multiplier 2
# (no buffer), one input channel into many (Helium turns it into a conv).
DEPTHWISE = [
    ((1, 25, 5, 64), (1, 3, 3, 64), (1, 25, 5, 64), (1, 1), (1, 1)),
    ((1, 10, 10, 8), (1, 5, 5, 8), (1, 6, 6, 8), (1, 1), (0, 0)),
    ((1, 10, 10, 8), (1, 3, 3, 16), (1, 10, 10, 16), (1, 1), (1, 1)),
    ((1, 10, 10, 1), (1, 3, 3, 12), (1, 8, 8, 12), (1, 1), (0, 0)),
]


def dims_c(shape: Sequence[int]) -> str:
    n, h, w, c = shape
    return f"(cmsis_nn_dims){{.n = {n}, .h = {h}, .w = {w}, .c = {c}}}"


PRINT = 'printf("%d\\n", (int)'


def sizes_program() -> str:
    lines = ["#include <stdio.h>", '#include "arm_nnfunctions.h"', "int main(void)", "{"]
    for x, f, y, stride, pad in CONVS:
        conv = (
            f"&(cmsis_nn_conv_params){{.stride = {{.w = {stride[1]}, .h = {stride[0]}}}, "
            f".padding = {{.w = {pad[1]}, .h = {pad[0]}}}, .dilation = {{.w = 1, .h = 1}}}}"
        )
        args = f"{conv}, &{dims_c(x)}, &{dims_c(f)}, &{dims_c(y)}"
        for suffix in ("", "_dsp", "_mve"):
            lines.append(f"    {PRINT}arm_convolve_wrapper_s8_get_buffer_size{suffix}({args}));")
    for x, f, y, stride, pad in DEPTHWISE:
        conv = (
            f"&(cmsis_nn_dw_conv_params){{.ch_mult = {y[3] // x[3]}, "
            f".stride = {{.w = {stride[1]}, .h = {stride[0]}}}, "
            f".padding = {{.w = {pad[1]}, .h = {pad[0]}}}, .dilation = {{.w = 1, .h = 1}}}}"
        )
        args = f"{conv}, &{dims_c(x)}, &{dims_c(f)}, &{dims_c(y)}"
        for suffix in ("", "_dsp", "_mve"):
            lines.append(
                f"    {PRINT}arm_depthwise_conv_wrapper_s8_get_buffer_size{suffix}({args}));"
            )
    for features in (10, 84):
        for suffix in ("", "_dsp", "_mve"):
            filter_dims = f"&{dims_c((256, 1, 1, features))}"
            lines.append(
                f"    {PRINT}arm_fully_connected_s8_get_buffer_size{suffix}({filter_dims}));"
            )
    for channels in (6, 64):
        for suffix in ("", "_dsp", "_mve"):
            lines.append(
                f'    printf("%d\\n", (int)arm_avgpool_s8_get_buffer_size{suffix}(5, {channels}));'
            )
    return "\n".join([*lines, "    return 0;", "}", ""])


def python_sizes() -> list[int]:
    """The same list from select_kernels.cmsis_nn: host (scalar), dsp, mve for each case."""
    sizes = []
    targets = ("scalar", "dsp", "mve")
    for x, f, y, stride, pad in CONVS:
        args = (lower.Dims(*x), lower.Dims(*f), lower.Dims(*y), stride, pad)
        sizes += [lower.conv_wrapper_size(t, *args) for t in targets]
    for x, f, y, stride, pad in DEPTHWISE:
        args = (lower.Dims(*x), lower.Dims(*f), lower.Dims(*y), stride, pad)
        sizes += [lower.depthwise_wrapper_size(t, *args) for t in targets]
    for features in (10, 84):
        sizes += [lower.fully_connected_size(t, features) for t in targets]
    for channels in (6, 64):
        sizes += [lower.avgpool_size(t, channels) for t in targets]
    return sizes


@needs_cmsis_nn
def test_scratch_sizes_are_cmsis_nns() -> None:
    """The 16 shapes' three sizes each (48 numbers) equal what CMSIS-NN's own functions return."""
    compiler = c_compilers()[0]
    with tempfile.TemporaryDirectory(prefix="adir-cmsis-nn-sizes-") as directory:
        source = Path(directory) / "sizes.c"
        source.write_text(sizes_program())
        objects = cmsis_nn_objects(compiler, ("-O1",))
        executable = Path(directory) / "sizes"
        completed = subprocess.run(
            [compiler, "-std=c99", "-O1", str(source), *objects, "-o", str(executable)],
            capture_output=True,
            text=True,
        )
        assert completed.returncode == 0, completed.stderr
        printed = subprocess.run([str(executable)], capture_output=True, text=True, check=True)
    expected = [int(line) for line in printed.stdout.split()]
    assert len(expected) == 3 * (len(CONVS) + len(DEPTHWISE)) + 12
    assert python_sizes() == expected


# -- bit-exact builds -------------------------------------------------------------------------


def weights(shape: Sequence[int], salt: int) -> str:
    """Deterministic int8 weights in [-60, 60] as a dense literal."""
    count = int(np.prod(shape))
    values = np.array([((k * 37 + salt * 11) % 121) - 60 for k in range(count)]).reshape(shape)
    return str(values.tolist())


def requantize_attrs(scales: Sequence[float], input_zp: int, output_zp: int, act_min: int) -> str:
    pairs = [quantize_multiplier(s) for s in scales]
    return (
        f"input_zero_point = {input_zp} : i32, output_zero_point = {output_zp} : i32, "
        f"multiplier = array<i32: {', '.join(str(m) for m, _ in pairs)}>, "
        f"shift = array<i32: {', '.join(str(s) for _, s in pairs)}>, act_min = {act_min} : i32"
    )


CONV1_SCALES = [0.003, 0.004, 0.005, 0.0021, 0.0033]


def cmsis_family() -> str:
    """Every CMSIS-NN path the pass takes on the host: a strided conv with TFLite-style
    asymmetric padding and a fused relu (im2col), a depthwise conv with channel multiplier 2
    (the general kernel) and one with 1 (the 3x3 kernel), a padded maxpool and a padded
    avgpool (edge windows count fewer taps), a 1x1 conv (the fast path), a per-tensor
    fully-connected layer, and a 3x3 depthwise conv padded only at the bottom and right."""
    return f"""
func.func @family(%x: tensor<1x9x8x4xf32>)
    -> (tensor<1x7xi8>, tensor<1x3x3x10xi8>, tensor<1x4x4x5xi8>) {{
  %q = adir.quantize %x {{scale = 0.02 : f32, zero_point = 7 : i32}}
         : tensor<1x9x8x4xf32> -> tensor<1x9x8x4xi8>
  %w1 = adir.constant dense<{weights((5, 3, 3, 4), 1)}> : tensor<5x3x3x4xi8>
  %b1 = adir.constant dense<[100, -200, 300, -400, 500]> : tensor<5xi32>
  %c1 = adir.qconv2d %q, %w1, %b1 {{{requantize_attrs(CONV1_SCALES, 7, -20, -20)},
         stride = array<i64: 2, 2>, padding = array<i64: 1, 2, 1, 2>}}
         : tensor<1x9x8x4xi8>, tensor<5x3x3x4xi8>, tensor<5xi32> -> tensor<1x5x5x5xi8>
  %w2 = adir.constant dense<{weights((1, 3, 3, 10), 2)}> : tensor<1x3x3x10xi8>
  %b2 = adir.constant dense<{list(range(-50, 50, 10))}> : tensor<10xi32>
  %c2 = adir.qconv2d %c1, %w2, %b2 {{{requantize_attrs([0.01] * 10, -20, 4, -128)},
         padding = array<i64: 1, 1, 1, 1>, groups = 5 : i64}}
         : tensor<1x5x5x5xi8>, tensor<1x3x3x10xi8>, tensor<10xi32> -> tensor<1x5x5x10xi8>
  %w3 = adir.constant dense<{weights((1, 3, 3, 10), 3)}> : tensor<1x3x3x10xi8>
  %b3 = adir.constant dense<{list(range(10))}> : tensor<10xi32>
  %c3 = adir.qconv2d %c2, %w3, %b3 {{{requantize_attrs([0.008, 0.009] * 5, 4, -3, -128)},
         padding = array<i64: 1, 1, 1, 1>, groups = 10 : i64}}
         : tensor<1x5x5x10xi8>, tensor<1x3x3x10xi8>, tensor<10xi32> -> tensor<1x5x5x10xi8>
  %m = adir.qmaxpool2d %c3 {{kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>,
         padding = array<i64: 0, 1, 0, 1>}} : tensor<1x5x5x10xi8> -> tensor<1x3x3x10xi8>
  %a = adir.qavgpool2d %m {{kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>,
         padding = array<i64: 1, 1, 1, 1>}} : tensor<1x3x3x10xi8> -> tensor<1x3x3x10xi8>
  %w4 = adir.constant dense<{weights((6, 1, 1, 10), 4)}> : tensor<6x1x1x10xi8>
  %b4 = adir.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  %c4 = adir.qconv2d %a, %w4, %b4 {{{requantize_attrs([0.02] * 6, -3, 0, -128)}}}
         : tensor<1x3x3x10xi8>, tensor<6x1x1x10xi8>, tensor<6xi32> -> tensor<1x3x3x6xi8>
  %r = adir.qreshape %c4 {{shape = array<i64: 1, 54>}} : tensor<1x3x3x6xi8> -> tensor<1x54xi8>
  %w5 = adir.constant dense<{weights((7, 54), 5)}> : tensor<7x54xi8>
  %b5 = adir.constant dense<[-7, -5, -3, 0, 3, 5, 7]> : tensor<7xi32>
  %f = adir.qfully_connected %r, %w5, %b5 {{{requantize_attrs([0.004], 0, 9, -128)}}}
         : tensor<1x54xi8>, tensor<7x54xi8>, tensor<7xi32> -> tensor<1x7xi8>
  %w6 = adir.constant dense<{weights((1, 3, 3, 5), 6)}> : tensor<1x3x3x5xi8>
  %b6 = adir.constant dense<[5, 4, 3, 2, 1]> : tensor<5xi32>
  %c6 = adir.qconv2d %c1, %w6, %b6 {{{requantize_attrs([0.006] * 5, -20, 1, -128)},
         padding = array<i64: 0, 1, 0, 1>, groups = 5 : i64}}
         : tensor<1x5x5x5xi8>, tensor<1x3x3x5xi8>, tensor<5xi32> -> tensor<1x4x4x5xi8>
  func.return %f, %a, %c6 : tensor<1x7xi8>, tensor<1x3x3x10xi8>, tensor<1x4x4x5xi8>
}}
"""


def quantized_example(name: str) -> ModuleOp:
    module = parse_example(name)
    DerivePredictPass().apply(adir_context(), module)
    QuantizeInt8Pass(samples=8, seed=0).apply(adir_context(), module)
    return module


def test_cmsis_family_lowers_every_op() -> None:
    """All 8 compute ops of the family module take CMSIS-NN (no CMSIS-NN is needed to see
    that): 5 convs, 2 pools, 1 fully-connected layer."""
    planned = run_pipeline(parse_module(cmsis_family()), LOWERING)
    chosen = [
        op.attributes["adir.kernel_call"].data  # type: ignore[attr-defined]
        for op in planned.walk()
        if op.attributes.get("adir.kernel") == StringAttr("cmsis-nn")
    ]
    assert chosen == [
        "arm_convolve_wrapper_s8",
        "arm_depthwise_conv_wrapper_s8",
        "arm_depthwise_conv_wrapper_s8",
        "arm_max_pool_s8",
        "arm_avgpool_s8",
        "arm_convolve_wrapper_s8",
        "arm_fully_connected_s8",
        "arm_depthwise_conv_wrapper_s8",
    ]


def run_both(module: ModuleOp, name: str, inputs: list[np.ndarray]) -> None:
    """The reference C, the CMSIS-NN C and the interpreter: the same bits."""
    compiler = c_compilers()[0]
    steps = [[x] for x in inputs]
    expected = interpreter_run(run_pipeline(module, "infer-shapes"), name, 0, steps)
    runs = []
    for pipeline, kernels in ((REFERENCE, "reference"), (LOWERING, "cmsis-nn")):
        planned = run_pipeline(module, pipeline)
        with tempfile.TemporaryDirectory(prefix="adir-cmsis-nn-") as directory:
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
            runs.append(built.run(0, steps))
    reference, cmsis = runs
    assert len(reference) == len(cmsis) == len(expected)
    for index, (want, ref, got) in enumerate(zip(expected, reference, cmsis, strict=True)):
        np.testing.assert_array_equal(ref, want, err_msg=f"reference C, array {index}")
        np.testing.assert_array_equal(got, want, err_msg=f"CMSIS-NN C, array {index}")


@needs_cmsis_nn
def test_cmsis_family_is_bit_exact() -> None:
    """3 inputs over [-4, 4] (beyond the quantize range of +-2.7: saturation included)."""
    rng = np.random.default_rng(5)
    inputs = [rng.uniform(-4, 4, (1, 9, 8, 4)).astype(np.float32) for _ in range(3)]
    run_both(parse_module(cmsis_family()), "family", inputs)


@needs_cmsis_nn
@pytest.mark.parametrize("name", ["lenet5", "ds_cnn"])
def test_int8_examples_on_cmsis_nn_are_bit_exact(name: str) -> None:
    """@predict_int8 on 3 standard-normal inputs: LeNet-5 (two 5x5 convs, two maxpools, three
    fully-connected layers on CMSIS-NN) and the DS-CNN (its strided 10x4 conv, four 3x3
    depthwise and four 1x1 convs, the global average and the classifier)."""
    module = quantized_example(name)
    shape = {"lenet5": (1, 1, 28, 28), "ds_cnn": (1, 1, 49, 10)}[name]
    rng = np.random.default_rng(3)
    run_both(
        module, "predict_int8", [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    )


# -- softmax ------------------------------------------------------------------------------------


def cmsis_softmaxes() -> str:
    """Rows of 511 (the longest arm_softmax_s8 takes) with the integers of three input
    scales: 0.05 (every int8 difference counts), 1.0 (diff_min -15 cuts most off) and 64
    (shift saturated at 30, diff_min -1); the same bytes as rows of 7 and of 1; and a
    quantize-int8 model, matmul -> softmax over 10 classes."""
    params = {}
    for prefix, scale in (("A", 0.05), ("B", 1.0), ("C", 64.0)):
        multiplier, shift, diff_min = softmax_parameters(scale)
        params[prefix] = (
            f"{{multiplier = {multiplier} : i32, shift = {shift} : i32, "
            f"diff_min = {diff_min} : i32}}"
        )
    return f"""
func.func @softmaxes(%x: tensor<3x511xf32>)
    -> (tensor<3x511xi8>, tensor<3x73x7xi8>, tensor<3x511xi8>, tensor<1533x1xi8>) {{
  %q = adir.quantize %x {{scale = 0.05 : f32, zero_point = -3 : i32}}
         : tensor<3x511xf32> -> tensor<3x511xi8>
  %a = adir.qsoftmax %q {params["A"]} : tensor<3x511xi8>
  %r = adir.qreshape %q {{shape = array<i64: 3, 73, 7>}} : tensor<3x511xi8> -> tensor<3x73x7xi8>
  %b = adir.qsoftmax %r {params["B"]} : tensor<3x73x7xi8>
  %c = adir.qsoftmax %q {params["C"]} : tensor<3x511xi8>
  %o = adir.qreshape %q {{shape = array<i64: 1533, 1>}} : tensor<3x511xi8> -> tensor<1533x1xi8>
  %d = adir.qsoftmax %o {params["A"]} : tensor<1533x1xi8>
  func.return %a, %b, %c, %d
      : tensor<3x511xi8>, tensor<3x73x7xi8>, tensor<3x511xi8>, tensor<1533x1xi8>
}}
"""


SOFTMAX_MODEL = """
adir.param @w : tensor<10x16xf32> = #adir.kaiming_uniform<a = 2.23606797749979, seed = 3>
func.func @predict(%x: tensor<4x16xf32>) -> tensor<4x10xf32> {
  %w = adir.load @w : tensor<10x16xf32>
  %h = adir.matmul %x, %w {transpose_b} : tensor<4x16xf32>, tensor<10x16xf32> -> tensor<4x10xf32>
  %s = adir.softmax %h : tensor<4x10xf32>
  func.return %s : tensor<4x10xf32>
}
"""


def test_softmaxes_lower_to_arm_softmax_s8() -> None:
    """All 4 qsoftmax ops (rows of 511, 7 and 1) take arm_softmax_s8."""
    planned = run_pipeline(parse_module(cmsis_softmaxes()), LOWERING)
    chosen = [
        op.attributes["adir.kernel_call"].data  # type: ignore[attr-defined]
        for op in planned.walk()
        if op.attributes.get("adir.kernel") == StringAttr("cmsis-nn")
    ]
    assert chosen == ["arm_softmax_s8"] * 4


@needs_cmsis_nn
def test_softmaxes_are_bit_exact_with_arm_softmax_s8() -> None:
    """CMSIS-NN's arm_softmax_s8, adir's reference C and the interpreter on 3 inputs: row 0
    uniform over [-8, 8] (quantize saturates beyond about +-6.4), row 1 small integers (ties),
    row 2 all 1e30 (511 ties at 127: a sum of 511 * 2^19, just below 2^28, the largest
    division, by 2^31)."""
    rng = np.random.default_rng(4)
    inputs = []
    for _ in range(3):
        x = np.empty((3, 511), np.float32)
        x[0] = rng.uniform(-8.0, 8.0, 511)
        x[1] = rng.integers(-3, 4, 511) * 0.05
        x[2] = 1e30
        inputs.append(x)
    run_both(parse_module(cmsis_softmaxes()), "softmaxes", inputs)


@needs_cmsis_nn
def test_int8_softmax_model_on_cmsis_nn_is_bit_exact() -> None:
    """quantize-int8's fully-connected layer and qsoftmax (calibrated on 8 standard-normal
    inputs) on CMSIS-NN: 3 standard-normal inputs give the interpreter's bits."""
    module = parse_module(SOFTMAX_MODEL)
    QuantizeInt8Pass(samples=8, seed=0).apply(adir_context(), module)
    assert "adir.qsoftmax" in {op.name for op in module.walk()}
    rng = np.random.default_rng(3)
    run_both(
        module, "predict_int8", [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(3)]
    )


# -- on a Cortex-M4 under QEMU ------------------------------------------------------------------


def inference_program(name: str, inputs: Sequence[np.ndarray], outputs: int) -> str:
    """A main for the board: `name` on each embedded input, each output as its float32 bits
    and the instructions it took."""
    lines = [
        "#include <stdio.h>",
        "#include <string.h>",
        '#include "adir_board.h"',
        f'#include "{PREFIX}model.h"',
        "",
    ]
    for index, x in enumerate(inputs):
        values = ", ".join(f"{float(v)!r}f" for v in x.reshape(-1))
        lines.append(f"static const float input_{index}[{x.size}] = {{{values}}};")
    table = ", ".join(f"input_{i}" for i in range(len(inputs)))
    lines += [
        f"static const float *const inputs[{len(inputs)}] = {{{table}}};",
        "",
        "int main(void)",
        "{",
        f"    static float out[{outputs}];",
        "    int i, k;",
        f"    {PREFIX}init(0);",
        f"    for (i = 0; i < {len(inputs)}; ++i) {{",
        "        uint64_t before = adir_board_instructions();",
        f"        {PREFIX}{name}(inputs[i], out);",
        '        printf("run %d instructions %lu:", i,',
        "               (unsigned long)(adir_board_instructions() - before));",
        f"        for (k = 0; k < {outputs}; ++k) {{",
        "            uint32_t bits;",
        "            memcpy(&bits, &out[k], sizeof bits);",
        '            printf(" %08lx", (unsigned long)bits);',
        "        }",
        '        printf("\\n");',
        "    }",
        '    printf("done\\n");',
        "    return 0;",
        "}",
        "",
    ]
    return "\n".join(lines)


def only_function(module: ModuleOp, name: str) -> ModuleOp:
    """`module` without its other functions (the float ones are not what runs here)."""
    copy = module.clone()
    for op in list(copy.ops):
        if isinstance(op, func.FuncOp) and op.sym_name.data != name:
            Rewriter.erase_op(op)
    return copy


RUN = re.compile(r"run (\d+) instructions (\d+):((?: [0-9a-f]{8})+)")


SHAPES = {"lenet5": ((1, 1, 28, 28), 10), "ds_cnn": ((1, 1, 49, 10), 12)}


@needs_cmsis_nn
@pytest.mark.parametrize("kernels", ["reference", "cmsis-nn"])
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_int8_examples_on_cortex_m4_are_bit_exact(name: str, kernels: str) -> None:
    """The int8 LeNet-5 and DS-CNN on QEMU's Cortex-M4 (mps2-an386), with CMSIS-NN built for it
    (its DSP code, scratch sizes for target=dsp) or with adir's int8 reference kernels: every
    output of 2 inputs has the interpreter's float32 bits. (The DS-CNN's initial weights give
    nearly the same logits for any input; LeNet-5's differ, so it tells inputs apart.)
    Measured instructions per inference: LeNet-5 5.72M reference, 1.59M CMSIS-NN; DS-CNN 40.9M
    and 7.7M."""
    from cortex_m_testing import require_arm_tools

    from adir.backends.c.cortex_m import MPS2_AN386, board_files
    from adir.backends.c.files import c_files
    from adir.backends.c.model import print_model
    from adir.output_files import write_directory

    require_arm_tools()
    shape, outputs = SHAPES[name]
    module = only_function(quantized_example(name), "predict_int8")
    on_m4 = LOWERING.replace("kernels=cmsis-nn", "kernels=cmsis-nn target=cortex-m4f")
    pipeline = REFERENCE if kernels == "reference" else on_m4
    planned = run_pipeline(module, pipeline)
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
    expected = interpreter_run(
        run_pipeline(module, "infer-shapes"), "predict_int8", 0, [[x] for x in inputs]
    )
    with tempfile.TemporaryDirectory(prefix="adir-cmsis-nn-m4-") as directory:
        files = c_files(print_model(planned, PREFIX))
        files.update(board_files(MPS2_AN386, 256 * 1024, kernels))
        files[f"{PREFIX}infer_embedded.c"] = inference_program("predict_int8", inputs, outputs)
        write_directory(directory, files)
        completed = subprocess.run(
            ["make", "-s", "-j2", "-C", directory, "run", f"CMSIS_NN={CMSIS_NN}"],
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    runs = RUN.findall(completed.stdout)
    print("DEBUG", completed.stdout)
    assert len(runs) == 2 and completed.stdout.rstrip().endswith("done"), completed.stdout
    for (_, _, words), want in zip(runs, expected[: len(inputs)], strict=True):
        got = np.array([int(w, 16) for w in words.split()], np.uint32).view(np.float32)
        np.testing.assert_array_equal(got, want.reshape(-1))


QADD_MODULE = """
func.func @sums(%x: tensor<1x5x4x3xf32>) -> tensor<1x5x4x3xi8> {
  %a = adir.quantize %x {scale = 0.05 : f32, zero_point = -3 : i32}
         : tensor<1x5x4x3xf32> -> tensor<1x5x4x3xi8>
  %b = adir.quantize %x {scale = 0.0375 : f32, zero_point = 5 : i32}
         : tensor<1x5x4x3xf32> -> tensor<1x5x4x3xi8>
  %s = adir.qadd %a, %b {lhs_zero_point = -3 : i32, rhs_zero_point = 5 : i32,
         output_zero_point = -10 : i32, lhs_multiplier = 1073741824 : i32, lhs_shift = 0 : i32,
         rhs_multiplier = 1610612736 : i32, rhs_shift = -1 : i32, multiplier = 1073741824 : i32,
         shift = -19 : i32, act_min = -10 : i32} : tensor<1x5x4x3xi8>, tensor<1x5x4x3xi8>
         -> tensor<1x5x4x3xi8>
  func.return %s : tensor<1x5x4x3xi8>
}
"""


def test_qadd_lowers_to_arm_elementwise_add_s8() -> None:
    planned = run_pipeline(parse_module(QADD_MODULE), LOWERING)
    calls = [op.attributes.get("adir.kernel_call") for op in planned.walk()]
    assert StringAttr("arm_elementwise_add_s8") in calls


@needs_cmsis_nn
def test_qadd_is_bit_exact_with_arm_elementwise_add_s8() -> None:
    """TFLite's int8 ADD (scales 0.05 and 0.0375, their unit 0.1; the sum at 0.1 with a fused
    relu, act_min = the zero point -10) on inputs over [-8, 8]: both operands and the sum
    saturate. CMSIS-NN, the reference C and the interpreter: the same bits."""
    rng = np.random.default_rng(9)
    inputs = [rng.uniform(-8, 8, (1, 5, 4, 3)).astype(np.float32) for _ in range(3)]
    run_both(parse_module(QADD_MODULE), "sums", inputs)
