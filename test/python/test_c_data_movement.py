"""The C kernels of the data movement family against the interpreter (gcc, ASan, UBSan).

The ops share two strided kernels (gather: transpose, broadcast_to, slice; scatter: pad,
slice_grad), whose emitter merges contiguous dims: the cases cover a strided inner loop, a
stride-0 one, memcpy runs, dropped size-1 dims, and empty tensors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from adir_testing import tensor_type
from c_testing import check_c_against_interpreter

from adir.diagnostics import OpError
from adir.dialects.kernel import KERNELS
from adir.dialects.tensor.data_movement import ConstantOp
from adir.dialects.tensor.traits import NoKernel

RNG = np.random.default_rng(0)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def array(values: Sequence[int]) -> str:
    return f"array<i64: {', '.join(map(str, values))}>"


def check_op(op_text: str, inputs: list[np.ndarray], result_shape: tuple[int, ...]) -> None:
    """`%y = <op_text> %a0, ... : types -> result` in C equals the interpreter."""
    check_c_against_interpreter(op_function(op_text, inputs, result_shape), "f", [inputs])


def op_function(op_text: str, inputs: list[np.ndarray], result_shape: tuple[int, ...]) -> str:
    types = [tensor_type(a.shape) for a in inputs]
    names = ", ".join(f"%a{i}" for i in range(len(inputs)))
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    result = tensor_type(result_shape)
    return f"""
    func.func @f({args}) -> {result} {{
      %y = {op_text.replace("OPERANDS", names)} : {", ".join(types)} -> {result}
      func.return %y : {result}
    }}"""


@pytest.mark.parametrize(
    ("shape", "permutation"),
    [
        ((3, 5), (1, 0)),  # a matrix transpose: a strided inner loop
        ((2, 3, 4, 5), (0, 2, 3, 1)),  # NCHW -> NHWC
        ((3, 5, 7), (1, 0, 2)),  # the innermost dim stays: memcpy of runs of 7
        ((1, 4, 1, 3), (3, 2, 1, 0)),  # size-1 dims are dropped before the walk
    ],
    ids=str,
)
def test_transpose_permutes_dims(shape: tuple[int, ...], permutation: tuple[int, ...]) -> None:
    result = tuple(shape[p] for p in permutation)
    op = f"adir.transpose OPERANDS {{permutation = {array(permutation)}}}"
    check_op(op, [normal(*shape)], result)


def test_transpose_beyond_the_widest_strided_kernel_is_an_error() -> None:
    """Reversing 9 dims (nothing to merge) exceeds ADIR_MAX_RANK: an error naming the op."""
    shape, permutation = (2,) * 9, tuple(range(8, -1, -1))
    text = op_function(
        f"adir.transpose OPERANDS {{permutation = {array(permutation)}}}", [normal(*shape)], shape
    )
    with pytest.raises(OpError, match=r"adir_kernel\.transpose: needs a strided copy of rank 9"):
        check_c_against_interpreter(text, "f", [[normal(*shape)]])


@pytest.mark.parametrize(
    ("op", "shape", "result"),
    [
        ("adir.reshape OPERANDS {shape = array<i64: -1, 6>}", (2, 3, 4), (4, 6)),
        (
            "adir.flatten OPERANDS {start_dim = 1 : i64, end_dim = -2 : i64}",
            (2, 3, 4, 5),
            (2, 12, 5),
        ),
        ("adir.flatten OPERANDS", (), (1,)),  # rank 0 gives [1]
    ],
    ids=["reshape", "flatten", "flatten_rank_0"],
)
def test_reshape_and_flatten_copy_in_row_major_order(
    op: str, shape: tuple[int, ...], result: tuple[int, ...]
) -> None:
    check_op(op, [normal(*shape)], result)


@pytest.mark.parametrize(
    ("shape", "target"),
    [
        ((3,), (4, 3)),  # a new leading dim
        ((4, 1, 3), (2, 4, 5, 3)),  # a new leading dim and a repeated middle one
        ((5, 1), (5, 7)),  # the innermost dim repeats: stride 0 in the inner loop
        ((), (2, 3)),  # a rank-0 input: one element everywhere
        ((2, 3), (2, 3)),  # nothing to broadcast: one memcpy
    ],
    ids=str,
)
def test_broadcast_to_repeats_size_1_and_new_dims(
    shape: tuple[int, ...], target: tuple[int, ...]
) -> None:
    check_op(f"adir.broadcast_to OPERANDS {{shape = {array(target)}}}", [normal(*shape)], target)


@pytest.mark.parametrize(
    ("shape", "low", "high", "value"),
    [
        ((2, 3), (1, 2), (3, 0), None),  # both sides of each dim, default 0.0
        ((3, 4, 5), (0, 0, 2), (0, 0, 1), "-1.5 : f32"),  # only the innermost dim
        ((3, 4, 5), (2, 0, 0), (0, 1, 0), "2.0 : f32"),  # outer dims only: memcpy runs of 5
        ((4,), (1,), (2,), "0xFF800000 : f32"),  # -inf padding
    ],
    ids=str,
)
def test_pad_fills_both_sides_with_value(
    shape: tuple[int, ...], low: tuple[int, ...], high: tuple[int, ...], value: str | None
) -> None:
    result = tuple(lo + d + hi for d, lo, hi in zip(shape, low, high, strict=True))
    value_text = "" if value is None else f", value = {value}"
    op = f"adir.pad OPERANDS {{low = {array(low)}, high = {array(high)}{value_text}}}"
    check_op(op, [normal(*shape)], result)


@pytest.mark.parametrize(
    ("shapes", "axis"),
    [
        ([(2, 3), (2, 5), (2, 1)], 1),  # three inputs, odd sizes
        ([(3, 2, 4), (3, 5, 4)], -2),  # a negative axis, inner runs of 2x4 and 5x4
        ([(2, 3), (1, 3)], 0),  # axis 0: one run per input
    ],
    ids=str,
)
def test_concat_joins_inputs_in_order(shapes: list[tuple[int, ...]], axis: int) -> None:
    inputs = [normal(*shape) for shape in shapes]
    check_op(
        f"adir.concat OPERANDS {{axis = {axis} : i64}}", inputs, np.concatenate(inputs, axis).shape
    )


SLICES = [
    ((5, 6), (1, 0), (4, 6), (1, 1)),  # rows 1..3, whole rows: one memcpy
    ((5, 7), (0, 1), (5, 7), (2, 3)),  # steps in both dims
    ((5, 6), (-3, -100), (100, -1), (1, 2)),  # negative from the end; clamped out of range
    ((4,), (-1,), (4,), (3,)),  # one element, from the end
    ((3, 4, 5), (1, 0, 1), (3, 4, 5), (1, 2, 1)),  # middle dim stepped: runs of 4
]


def python_slices(start, stop, step) -> tuple[slice, ...]:
    return tuple(slice(*bounds) for bounds in zip(start, stop, step, strict=True))


def slice_properties(start, stop, step) -> str:
    return f"start = {array(start)}, stop = {array(stop)}, step = {array(step)}"


@pytest.mark.parametrize(("shape", "start", "stop", "step"), SLICES, ids=str)
def test_slice_reads_python_slicing(shape, start, stop, step) -> None:
    x = normal(*shape)
    result = x[python_slices(start, stop, step)].shape
    check_op(f"adir.slice OPERANDS {{{slice_properties(start, stop, step)}}}", [x], result)


@pytest.mark.parametrize(("shape", "start", "stop", "step"), SLICES[1:3] + SLICES[4:], ids=str)
def test_slice_grad_scatters_into_zeros(shape, start, stop, step) -> None:
    grad = normal(*np.empty(shape)[python_slices(start, stop, step)].shape)
    properties = f"{slice_properties(start, stop, step)}, shape = {array(shape)}"
    check_op(f"adir.slice_grad OPERANDS {{{properties}}}", [grad], shape)


def test_empty_tensors_move_nothing() -> None:
    """Empty slices (rows 4:1, columns 3:3) transposed, padded, joined to x along their empty
    dim and scattered into zeros: each kernel skips the empty walk and still fills its result.
    (The empties stay inside: the test driver cannot pass empty arguments or results.)"""
    text = """
    func.func @f(%x: tensor<5x6xf32>) -> (tensor<6x3xf32>, tensor<5x6xf32>, tensor<5x6xf32>) {
      %e = adir.slice %x {start = array<i64: 4, 2>, stop = array<i64: 1, 6>}
        : tensor<5x6xf32> -> tensor<0x4xf32>
      %t = adir.transpose %e {permutation = array<i64: 1, 0>} : tensor<0x4xf32> -> tensor<4x0xf32>
      %p = adir.pad %t {low = array<i64: 1, 2>, high = array<i64: 1, 1>, value = 3.0 : f32}
        : tensor<4x0xf32> -> tensor<6x3xf32>
      %z = adir.slice %x {start = array<i64: 0, 3>, stop = array<i64: 5, 3>}
        : tensor<5x6xf32> -> tensor<5x0xf32>
      %k = adir.concat %z, %x, %z {axis = 1 : i64}
        : tensor<5x0xf32>, tensor<5x6xf32>, tensor<5x0xf32> -> tensor<5x6xf32>
      %g = adir.slice_grad %e {shape = array<i64: 5, 6>, start = array<i64: 4, 2>,
                               stop = array<i64: 1, 6>} : tensor<0x4xf32> -> tensor<5x6xf32>
      func.return %p, %k, %g : tensor<6x3xf32>, tensor<5x6xf32>, tensor<5x6xf32>
    }"""
    check_c_against_interpreter(text, "f", [[normal(5, 6)]])


def test_constant_is_a_table_the_shape_kernels_read() -> None:
    """A constant becomes a static const table (memref.global), readable by any kernel."""
    text = """
    func.func @f(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
      %c = adir.constant dense<[[1.0, -2.0], [0.5, 4.0]]> : tensor<2x2xf32>
      %y = adir.concat %x, %c {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x2xf32> -> tensor<2x5xf32>
      func.return %y : tensor<2x5xf32>
    }"""
    check_c_against_interpreter(text, "f", [[normal(2, 3)]])


def test_constant_has_no_kernel() -> None:
    """bufferize makes a constant a memref.global, so there is no adir_kernel.constant (the
    op's NoKernel trait says so)."""
    assert ConstantOp.has_trait(NoKernel)
    assert ConstantOp not in KERNELS
