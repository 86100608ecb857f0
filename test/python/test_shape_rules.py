"""Property tests: every op's shape rule agrees with numpy.

For random operand shapes and properties, the result type `infer-shapes` gives an op written
with a `tensor<*xf32>` result is exactly the shape of the value the interpreter computes; and
`shapes.broadcast` accepts exactly the shapes numpy broadcasts, with numpy's result.
"""

from __future__ import annotations

import numpy as np
import pytest
from adir_testing import tensor_type
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import VerifyException

from adir.context import adir_context, parse_module
from adir.dialects.tensor.shapes import broadcast, shape_of
from adir.interpreter import Session
from adir.passes.infer_shapes import InferShapesPass

dims = st.integers(1, 4)
shapes = st.lists(dims, min_size=0, max_size=4).map(tuple)


def broadcastable_pair(draw) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes numpy broadcasts: a base shape, each side drops leading dims or sets 1s."""
    base = draw(st.lists(dims, min_size=0, max_size=4))
    sides = []
    for _ in range(2):
        keep = draw(st.integers(0, len(base)))
        side = [1 if draw(st.booleans()) else d for d in base[len(base) - keep :]]
        sides.append(tuple(side))
    return sides[0], sides[1]


@given(shapes, shapes)
def test_broadcast_accepts_exactly_what_numpy_broadcasts(a: tuple, b: tuple) -> None:
    try:
        expected = np.broadcast_shapes(a, b)
    except ValueError:
        with pytest.raises(VerifyException, match="do not broadcast"):
            broadcast("adir.add", [a, b], ["lhs", "rhs"])
    else:
        assert broadcast("adir.add", [a, b], ["lhs", "rhs"]) == expected


@given(st.data())
def test_broadcast_with_unknown_dims_is_consistent_with_the_known_result(data) -> None:
    """Hiding dims of the operands never makes the rule contradict the true result."""
    a, b = broadcastable_pair(data.draw)
    truth = np.broadcast_shapes(a, b)
    hide = st.booleans()
    a_partial = tuple(None if data.draw(hide) else d for d in a)
    b_partial = tuple(None if data.draw(hide) else d for d in b)
    result = broadcast("adir.add", [a_partial, b_partial], ["lhs", "rhs"])
    assert result is not None and len(result) == len(truth)
    assert all(r is None or r == t for r, t in zip(result, truth, strict=True))


def inferred_and_actual(operands: list[tuple[tuple[int, ...], str]], op_text: str):
    """Infer the result shape of one op from its operands, then run it; both shapes.
    `op_text` is the op without its types, OPERANDS standing for the operand list."""
    args = ", ".join(f"%a{i}: {tensor_type(s, e)}" for i, (s, e) in enumerate(operands))
    names = ", ".join(f"%a{i}" for i in range(len(operands)))
    types = ", ".join(tensor_type(s, e) for s, e in operands)
    ir = f"""
func.func @f({args}) -> tensor<*xf32> {{
  %r = {op_text.replace("OPERANDS", names)} : {types} -> tensor<*xf32>
  func.return %r : tensor<*xf32>
}}"""
    module = parse_module(ir)
    module.verify()
    InferShapesPass().apply(adir_context(), module)
    module.verify()
    function = next(op for op in module.ops if isinstance(op, FuncOp))
    inferred = shape_of(function.function_type.outputs.data[0])
    rng = np.random.default_rng(0)
    values = [
        # i32 operands are class labels for the first operand's last dim
        rng.integers(0, operands[0][0][-1], s).astype(np.int32)
        if e == "i32"
        else rng.standard_normal(s).astype(np.float32)
        for s, e in operands
    ]
    (actual,) = Session(module).call("f", *values)
    return inferred, actual.shape


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(["add", "sub", "mul", "maximum", "pow"]))
def test_elementwise_binary_shapes(data, op: str) -> None:
    a, b = broadcastable_pair(data.draw)
    inferred, actual = inferred_and_actual([(a, "f32"), (b, "f32")], f"adir.{op} OPERANDS")
    assert inferred == actual


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["sum", "mean", "max"]),
    st.lists(dims, min_size=1, max_size=4).map(tuple),
    st.data(),
    st.booleans(),
)
def test_reduction_shapes(op: str, shape: tuple, data, keepdims: bool) -> None:
    rank = len(shape)
    axes = data.draw(st.lists(st.integers(-rank, rank - 1), unique_by=lambda a: a % rank))
    props = []
    if axes:
        props.append(f"axes = array<i64: {', '.join(map(str, axes))}>")
    if keepdims:
        props.append("keepdims")
    attr = f" {{{', '.join(props)}}}" if props else ""
    inferred, actual = inferred_and_actual([(shape, "f32")], f"adir.{op} OPERANDS{attr}")
    assert inferred == actual


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 4),
    st.sampled_from([None, 1, 3]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_matmul_shapes(m, k, n, batch, transpose_a, transpose_b, rhs_shared) -> None:
    lhs = (k, m) if transpose_a else (m, k)
    rhs = (n, k) if transpose_b else (k, n)
    if batch is not None:
        lhs = (batch, *lhs)
        if not rhs_shared:
            rhs = (batch, *rhs)
    flags = [f for f, on in (("transpose_a", transpose_a), ("transpose_b", transpose_b)) if on]
    attr = f" {{{', '.join(flags)}}}" if flags else ""
    text = f"adir.matmul OPERANDS{attr}"
    inferred, actual = inferred_and_actual([(lhs, "f32"), (rhs, "f32")], text)
    assert inferred == actual


@settings(max_examples=30, deadline=None)
@given(st.lists(dims, min_size=1, max_size=4).map(tuple), st.data())
def test_transpose_and_reshape_shapes(shape: tuple, data) -> None:
    perm = data.draw(st.permutations(range(len(shape))))
    text = f"adir.transpose OPERANDS {{permutation = array<i64: {', '.join(map(str, perm))}>}}"
    inferred, actual = inferred_and_actual([(shape, "f32")], text)
    assert inferred == actual
    flat = int(np.prod(shape))
    target = data.draw(st.sampled_from([(flat,), (-1,), (1, -1), (flat, 1)]))
    text = f"adir.reshape OPERANDS {{shape = array<i64: {', '.join(map(str, target))}>}}"
    inferred, actual = inferred_and_actual([(shape, "f32")], text)
    assert inferred == actual


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(["nll", "cross_entropy"]),
    st.integers(1, 5),
    st.integers(1, 6),
    st.sampled_from(["none", "mean", "sum"]),
)
def test_classification_loss_shapes(op: str, n: int, c: int, reduction: str) -> None:
    text = f'adir.{op} OPERANDS {{reduction = "{reduction}"}}'
    inferred, actual = inferred_and_actual([((n, c), "f32"), ((n,), "i32")], text)
    assert inferred == actual
