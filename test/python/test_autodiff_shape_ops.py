"""VJP rules of flatten, pad, concat, slice and slice_grad against torch.autograd and finite
differences (test/python/gradient_testing.py), and the form of their backward IR: each is the
inverse data movement (flatten -> reshape, pad -> slice, concat -> a slice per input, a
unit-step slice -> pad, a strided slice -> slice_grad, slice_grad -> slice), with no
arithmetic.
"""

from __future__ import annotations

import pytest
import torch
from gradient_testing import check_op_gradients, differentiate_ir, wrapped_op_ir
from test_interpreter_shape_ops import array, python_slices, slice_props, torch_pad_list
from xdsl.dialects.func import FuncOp

F = torch.nn.functional


@pytest.mark.parametrize(
    ("shape", "start", "end"),
    [((2, 3, 4), 0, -1), ((2, 3, 4), 1, -1), ((2, 3, 4, 2), 1, 2), ((3,), 0, 0)],
    ids=str,
)
def test_flatten(shape, start: int, end: int) -> None:
    check_op_gradients(
        f"adir.flatten OPERANDS {{start_dim = {start} : i64, end_dim = {end} : i64}}",
        [shape],
        lambda x: torch.flatten(x, start, end),
    )


@pytest.mark.parametrize(
    ("shape", "low", "high"),
    [
        ((2, 3), [0, 1], [0, 2]),
        ((2, 3, 4), [1, 0, 2], [0, 3, 1]),
        ((1, 2, 3, 3), [0, 0, 1, 1], [0, 0, 1, 1]),
    ],
    ids=str,
)
def test_pad(shape, low, high) -> None:
    check_op_gradients(
        f"adir.pad OPERANDS {{low = {array(low)}, high = {array(high)}, value = 0.5 : f32}}",
        [shape],
        lambda x: F.pad(x, torch_pad_list(low, high), value=0.5),
    )


@pytest.mark.parametrize(
    ("shapes", "axis"),
    [
        ([(2, 3), (4, 3)], 0),
        ([(2, 3), (2, 1), (2, 5)], 1),
        ([(2, 3, 4), (2, 3, 2)], -1),
        ([(3, 2)], 0),
        ([(2, 0), (2, 3)], 1),
    ],
    ids=str,
)
def test_concat(shapes, axis: int) -> None:
    check_op_gradients(
        f"adir.concat OPERANDS {{axis = {axis} : i64}}",
        shapes,
        lambda *xs: torch.cat(xs, dim=axis),
    )


SLICES = [
    ((5, 6), [1, 0], [4, 6], [1, 1]),
    ((5, 6), [-3, -100], [100, -1], [1, 1]),
    ((5, 6), [4, 2], [1, 2], [1, 1]),  # empty
    ((5, 6), [0, 1], [5, 6], [2, 3]),
    ((2, 3, 7), [0, -2, 6], [2, 3, -10], [1, 2, 1]),
]


@pytest.mark.parametrize(("shape", "start", "stop", "step"), SLICES, ids=str)
def test_slice(shape, start, stop, step) -> None:
    slices = python_slices(start, stop, step)
    check_op_gradients(
        f"adir.slice OPERANDS {slice_props(start, stop, step)}", [shape], lambda x: x[slices]
    )


@pytest.mark.parametrize(("shape", "start", "stop", "step"), SLICES, ids=str)
def test_slice_grad(shape, start, stop, step) -> None:
    slices = python_slices(start, stop, step)
    sliced = tuple(torch.zeros(shape)[slices].shape)

    def scatter(grad: torch.Tensor) -> torch.Tensor:
        result = torch.zeros(shape, dtype=grad.dtype)
        result[slices] = grad
        return result

    props = slice_props(start, stop, step)[:-1] + f", shape = {array(list(shape))}}}"
    check_op_gradients(f"adir.slice_grad OPERANDS {props}", [sliced], scatter)


def backward_ops(op_text: str, operand_types: list[str], result_type: str) -> list[str]:
    """The names of the ops @f_grad adds after the forward computation."""
    module = differentiate_ir(
        wrapped_op_ir(op_text, operand_types, result_type), "f", range(len(operand_types))
    )
    grad = next(op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == "f_grad")
    names = [op.name for op in grad.body.block.ops]
    return names[names.index("adir.sum") + 1 : -1]


def test_backward_of_data_movement_is_data_movement() -> None:
    arithmetic = {"adir.add", "adir.mul", "adir.sum"}
    t = "tensor<4x6xf32>"
    cases = [
        ("adir.flatten OPERANDS", [t], "tensor<24xf32>", "adir.reshape"),
        (
            f"adir.pad OPERANDS {{low = {array([1, 0])}, high = {array([0, 2])}}}",
            [t],
            "tensor<5x8xf32>",
            "adir.slice",
        ),
        ("adir.concat OPERANDS", [t, t], "tensor<8x6xf32>", "adir.slice"),
        (
            f"adir.slice OPERANDS {slice_props([1, 0], [3, 6], [1, 1])}",
            [t],
            "tensor<2x6xf32>",
            "adir.pad",
        ),
        (
            f"adir.slice OPERANDS {slice_props([1, 0], [3, 6], [1, 2])}",
            [t],
            "tensor<2x3xf32>",
            "adir.slice_grad",
        ),
    ]
    for op_text, operands, result, expected in cases:
        ops = backward_ops(op_text, operands, result)
        assert expected in ops, (op_text, ops)
        # The seed adjoint (a broadcast constant times r) is the only arithmetic.
        assert [name for name in ops if name in arithmetic] == ["adir.mul"], (op_text, ops)
