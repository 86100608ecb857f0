"""The C kernels of the reductions family against the interpreter (gcc, ASan, UBSan).

Each case builds one function computing sum, mean and max over the same axes, so that one
build checks the three kernels. The cases cover each way the emitter calls a kernel: the
outer x reduced x inner kernel for all axes, trailing, leading and middle runs, and the
strided kernel for other sets of axes, with its innermost dim reduced or kept.
"""

from __future__ import annotations

import platform
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from adir_testing import tensor_type
from c_testing import WARNINGS, check_c_against_interpreter, function_body

from adir.backends.c.files import runtime_files
from adir.output_files import write_directory

RNG = np.random.default_rng(0)
SGD = "autodiff,insert-optimizer{kind=sgd lr=0.1}"

OPS = ["sum", "mean", "max"]


def reduction_line(op: str, result: str, shape: tuple, axes: tuple | None, keepdims: bool) -> str:
    """`%result = adir.<op> %x {...}`, declaring numpy's result shape."""
    entries = [f"axes = array<i64: {', '.join(map(str, axes))}>"] if axes is not None else []
    entries += ["keepdims"] if keepdims else []
    props = f" {{{', '.join(entries)}}}" if entries else ""
    out = np.sum(np.zeros(shape), axis=axes, keepdims=keepdims).shape
    return f"%{result} = adir.{op} %x{props} : {tensor_type(shape)} -> {tensor_type(out)}"


def function_ir(shape: tuple, lines: list[str]) -> str:
    """`func.func @f(%x)` returning the result of each line (its declared type)."""
    names = [line.split(" = ")[0] for line in lines]
    types = [line.rsplit("-> ", 1)[1] for line in lines]
    body = "\n".join(f"  {line}" for line in lines)
    return (
        f"func.func @f(%x: {tensor_type(shape)}) -> ({', '.join(types)}) {{\n{body}\n"
        f"  func.return {', '.join(names)} : {', '.join(types)}\n}}"
    )


CASES = [
    ((7,), None, False),  # all axes of a vector: outer = inner = 1
    ((5, 7, 3), None, True),  # all axes, kept as 1x1x1
    ((3, 5), (1,), False),  # a trailing axis: one contiguous row per output
    ((3, 203), (-1,), True),  # long rows: eight partial sums and a tail of 3
    ((33, 17), (0,), False),  # a leading axis: rows added into the output row
    ((2, 3, 5), (-2,), True),  # a middle axis, given from the end
    ((4, 1, 3), (1,), False),  # a size-1 axis: a copy
    ((2, 1, 6, 1), (0, 2), True),  # size-1 dims dropped: two reduced axes become one run
    ((2, 3, 5), (-1, 0), False),  # axes 0 and 2, out of order: strided, innermost reduced
    ((2, 3, 4, 5), (1, 3), True),  # strided, innermost reduced, keepdims
    ((3, 4, 5, 2), (0, 2), False),  # strided, innermost kept
    ((), None, False),  # a scalar
]


@pytest.mark.parametrize(("shape", "axes", "keepdims"), CASES, ids=str)
def test_sum_mean_max(shape: tuple, axes: tuple | None, keepdims: bool) -> None:
    """sum, mean and max over `axes` (None: all) of positive inputs (so that a sum in another
    order agrees to rtol), over two steps."""
    text = function_ir(shape, [reduction_line(op, op, shape, axes, keepdims) for op in OPS])
    steps = [[RNG.uniform(0.1, 2.0, shape).astype(np.float32)] for _ in range(2)]
    check_c_against_interpreter(text, "f", steps)


def test_nan_and_infinities() -> None:
    """max is nan wherever a reduced element is nan (not dropped as fmaxf would), and -inf over
    -infs; a sum of +inf and -inf is nan. Both along rows and down columns, and strided."""
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    x[1, 2] = np.nan
    x[2, 0] = np.inf
    x[2, 3] = -np.inf
    x[3, :] = -np.inf
    lines = [
        reduction_line("max", "rows", (4, 6), (1,), False),
        reduction_line("max", "columns", (4, 6), (0,), False),
        reduction_line("sum", "row_sums", (4, 6), (1,), False),
        reduction_line("mean", "column_means", (4, 6), (0,), False),
    ]
    y = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    y[1, 2, 3] = np.nan
    y[0, 1, :] = -np.inf
    text = function_ir((4, 6), lines)
    check_c_against_interpreter(text, "f", [[x]])
    strided = [reduction_line(op, op, (2, 3, 4), (0, 2), False) for op in OPS]
    check_c_against_interpreter(function_ir((2, 3, 4), strided), "f", [[y]])


EMPTY = """
func.func @f() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %x = adir.constant dense<> : tensor<0x3xf32>
  %sum = adir.sum %x {axes = array<i64: 0>} : tensor<0x3xf32> -> tensor<3xf32>
  %mean = adir.mean %x {axes = array<i64: 0>} : tensor<0x3xf32> -> tensor<3xf32>
  %y = adir.constant dense<> : tensor<2x3x0xf32>
  %strided = adir.mean %y {axes = array<i64: 0, 2>} : tensor<2x3x0xf32> -> tensor<3xf32>
  func.return %sum, %mean, %strided : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
"""


def test_sum_and_mean_of_no_elements() -> None:
    """Reducing an axis of size 0: the sum is 0 and the mean 0 / 0 = nan, also through the
    strided kernel. (The empty inputs are constants: the test driver cannot pass an argument
    of no elements.)"""
    check_c_against_interpreter(EMPTY, "f", [[]])


TRAINING = """
adir.param @w : tensor<3x4xf32> = #adir.uniform<low = -1.0, high = 1.0, seed = 1>
func.func @loss(%x: tensor<3x4xf32>) -> tensor<f32> attributes {adir.loss} {
  %w = adir.load @w : tensor<3x4xf32>
  %p = adir.mul %x, %w : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %m = adir.max %p {axes = array<i64: 1>, keepdims} : tensor<3x4xf32> -> tensor<3x1xf32>
  %c = adir.sub %p, %m : tensor<3x4xf32>, tensor<3x1xf32> -> tensor<3x4xf32>
  %s = adir.sum %c {axes = array<i64: 0>} : tensor<3x4xf32> -> tensor<4xf32>
  %q = adir.mul %s, %s : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %loss = adir.mean %q : tensor<4xf32> -> tensor<f32>
  func.return %loss : tensor<f32>
}
"""


def test_training_step_through_reductions() -> None:
    """Three SGD steps through max with keepdims (its gradient goes to the maxima), a sum over
    the leading axis and a mean over all: their gradients broadcast back in C."""
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    check_c_against_interpreter(TRAINING, "train_step", [[x]] * 3, differentiate=SGD)


def test_row_sums_eight_partials_in_one_vector_under_avx512(tmp_path: Path) -> None:
    """gcc 12 with AVX-512 and its generic tuning (`-march=x86-64-v4`, and `-march=native` on
    Zen 4) vectorized adir_row_sum's eight partial sums 16 lanes at a time, which would pair
    x[i] with x[i + 8] in one sum, and so added every lane in order: 135 scalar adds. Its
    256-bit preference (ADIR_EIGHT_LANES) keeps the eight sums one vector: a packed add, and
    22 scalar adds (the tail and the final pairwise adds). Compiled only: any x86-64 host."""
    if platform.machine() != "x86_64":
        pytest.skip(f"x86-64 targets; this is {platform.machine()}")
    write_directory(str(tmp_path), runtime_files())
    target = tmp_path / "adir_reductions.o"
    source = tmp_path / "adir_reductions.c"
    flags = ["-O3", "-march=x86-64-v4"]
    subprocess.run(["gcc", *WARNINGS, *flags, "-c", str(source), "-o", str(target)], check=True)
    body = function_body(target, "adir_row_sum")
    packed = [line for line in body if re.search(r"vaddps\s", line)]
    scalar = [line for line in body if re.search(r"vaddss\s", line)]
    assert packed and len(scalar) < 40, "\n".join(body)
