"""flatten, pad, concat, slice and slice_grad in the interpreter equal PyTorch (torch.flatten,
torch.nn.functional.pad, torch.cat, Python slicing of a tensor, and a scatter into zeros),
in float32 and float64. They move data without arithmetic, so results are equal bit for bit;
each IR function declares PyTorch's result shape, so the verifier also checks that the shape
rule agrees. Property tests draw random shapes and slices (negative and out-of-range bounds
included) and check the shape rule against what PyTorch computes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from adir_testing import interpret, tensor_type
from hypothesis import given, settings
from hypothesis import strategies as st

F = torch.nn.functional

DTYPES = [np.float32, np.float64]


def array(values: list[int]) -> str:
    return f"array<i64: {', '.join(map(str, values))}>"


def run_one(op_text: str, inputs: list[np.ndarray], result_shape: tuple, dtype) -> np.ndarray:
    """Interpret `%y = <op_text> %a0, ... : types -> result` on `inputs`."""
    types = [tensor_type(a.shape) for a in inputs]
    names = ", ".join(f"%a{i}" for i in range(len(inputs)))
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    result = tensor_type(result_shape)
    ir = f"""
func.func @f({args}) -> {result} {{
  %y = {op_text.replace("OPERANDS", names)} : {", ".join(types)} -> {result}
  func.return %y : {result}
}}"""
    (y,) = interpret(ir, "f", *inputs, float_dtype=dtype)
    assert y.dtype == dtype
    return y


def assert_same(actual: np.ndarray, expected: torch.Tensor) -> None:
    expected_np = expected.numpy()
    assert actual.shape == expected_np.shape, f"shape {actual.shape} != {expected_np.shape}"
    np.testing.assert_array_equal(actual, expected_np)


def random(shape: tuple[int, ...], dtype, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    ("shape", "start", "end"),
    [
        ((2, 3, 4), 0, -1),
        ((2, 3, 4), 1, -1),
        ((2, 3, 4), 0, 1),
        ((2, 3, 4), -2, -1),
        ((2, 3, 4), 1, 1),
        ((2, 3, 4, 5), 1, 2),
        ((4, 0, 3), 1, 2),
        ((7,), 0, 0),
        ((), 0, -1),
    ],
    ids=str,
)
def test_flatten(shape, start: int, end: int, dtype) -> None:
    x = random(shape, dtype)
    expected = torch.flatten(torch.from_numpy(x.copy()), start, end)
    props = f"{{start_dim = {start} : i64, end_dim = {end} : i64}}"
    assert_same(
        run_one(f"adir.flatten OPERANDS {props}", [x], tuple(expected.shape), dtype), expected
    )


def torch_pad_list(low: list[int], high: list[int]) -> list[int]:
    """torch.nn.functional.pad's `pad`: (before, after) pairs, last dim first."""
    return [v for lo, hi in zip(reversed(low), reversed(high), strict=True) for v in (lo, hi)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    ("shape", "low", "high", "value"),
    [
        ((2, 3), [0, 1], [0, 2], 0.0),
        ((2, 3, 4), [1, 0, 2], [0, 3, 1], -1.5),
        ((1, 2, 3, 3), [0, 0, 1, 1], [0, 0, 1, 1], 0.0),  # a conv's spatial padding
        ((3,), [0], [0], 2.0),
        ((0, 2), [1, 1], [1, 0], 7.0),
    ],
    ids=str,
)
def test_pad(shape, low, high, value: float, dtype) -> None:
    x = random(shape, dtype)
    expected = F.pad(torch.from_numpy(x), torch_pad_list(low, high), value=value)
    props = f"{{low = {array(low)}, high = {array(high)}, value = {value} : f32}}"
    assert_same(run_one(f"adir.pad OPERANDS {props}", [x], tuple(expected.shape), dtype), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    ("shapes", "axis"),
    [
        ([(2, 3), (4, 3)], 0),
        ([(2, 3), (2, 1), (2, 5)], 1),
        ([(2, 3, 4), (2, 3, 2)], -1),
        ([(2, 3, 4), (2, 1, 4), (2, 2, 4)], -2),
        ([(3, 2)], 0),
        ([(2, 0), (2, 3)], 1),
        ([(5,), (1,), (2,)], 0),
    ],
    ids=str,
)
def test_concat(shapes, axis: int, dtype) -> None:
    inputs = [random(s, dtype, seed=i) for i, s in enumerate(shapes)]
    expected = torch.cat([torch.from_numpy(a) for a in inputs], dim=axis)
    op = f"adir.concat OPERANDS {{axis = {axis} : i64}}"
    assert_same(run_one(op, inputs, tuple(expected.shape), dtype), expected)


def slice_props(start, stop, step) -> str:
    return f"{{start = {array(start)}, stop = {array(stop)}, step = {array(step)}}}"


def python_slices(start, stop, step) -> tuple[slice, ...]:
    return tuple(slice(*b) for b in zip(start, stop, step, strict=True))


SLICES = [
    ((5, 6), [1, 0], [4, 6], [1, 1]),
    ((5, 6), [0, 1], [5, 6], [2, 3]),
    ((5, 6), [-3, -100], [100, -1], [1, 2]),  # from the end; clamped
    ((5, 6), [4, 2], [1, 2], [1, 1]),  # empty
    ((2, 3, 7), [0, 1, 6], [2, 3, 7], [1, 1, 1]),
    ((4,), [-1], [4], [3]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize(("shape", "start", "stop", "step"), SLICES, ids=str)
def test_slice(shape, start, stop, step, dtype) -> None:
    x = random(shape, dtype)
    expected = torch.from_numpy(x)[python_slices(start, stop, step)]
    op = f"adir.slice OPERANDS {slice_props(start, stop, step)}"
    assert_same(run_one(op, [x], tuple(expected.shape), dtype), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize(("shape", "start", "stop", "step"), SLICES, ids=str)
def test_slice_grad(shape, start, stop, step, dtype) -> None:
    """A tensor of the given shape, zero but for the slice, which holds the operand."""
    slices = python_slices(start, stop, step)
    grad = random(tuple(torch.zeros(shape)[slices].shape), dtype)
    expected = torch.zeros(shape, dtype=torch.from_numpy(grad).dtype)
    expected[slices] = torch.from_numpy(grad)
    props = slice_props(start, stop, step)[:-1] + f", shape = {array(list(shape))}}}"
    assert_same(run_one(f"adir.slice_grad OPERANDS {props}", [grad], shape, dtype), expected)


def test_results_are_not_views() -> None:
    """Value semantics: each result owns its data (a later in-place write to it cannot
    change the operand)."""
    x = random((3, 4), np.float32)
    flat = run_one("adir.flatten OPERANDS", [x], (12,), np.float32)
    part = run_one(
        f"adir.slice OPERANDS {slice_props([0, 0], [3, 2], [1, 1])}", [x], (3, 2), np.float32
    )
    for result in (flat, part):
        assert not np.shares_memory(result, x)


# --- property tests: the shape rule is what PyTorch computes --------------------------------

small_shapes = st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_slice_matches_python_slicing(data) -> None:
    shape = data.draw(small_shapes)
    bound = st.integers(-6, 6)
    start = [data.draw(bound) for _ in shape]
    stop = [data.draw(bound) for _ in shape]
    step = [data.draw(st.integers(1, 3)) for _ in shape]
    x = random(shape, np.float32)
    expected = torch.from_numpy(x)[python_slices(start, stop, step)]
    op = f"adir.slice OPERANDS {slice_props(start, stop, step)}"
    assert_same(run_one(op, [x], tuple(expected.shape), np.float32), expected)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_pad_and_concat_match_torch(data) -> None:
    shape = data.draw(small_shapes)
    low = [data.draw(st.integers(0, 2)) for _ in shape]
    high = [data.draw(st.integers(0, 2)) for _ in shape]
    x = random(shape, np.float32)
    padded = F.pad(torch.from_numpy(x), torch_pad_list(low, high))
    op = f"adir.pad OPERANDS {{low = {array(low)}, high = {array(high)}}}"
    assert_same(run_one(op, [x], tuple(padded.shape), np.float32), padded)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    inputs = [
        random(tuple(n if d == axis % len(shape) else s for d, s in enumerate(shape)), np.float32)
        for n in sizes
    ]
    joined = torch.cat([torch.from_numpy(a) for a in inputs], dim=axis)
    op = f"adir.concat OPERANDS {{axis = {axis} : i64}}"
    assert_same(run_one(op, inputs, tuple(joined.shape), np.float32), joined)
