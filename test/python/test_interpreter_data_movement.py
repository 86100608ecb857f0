"""The data movement family in the interpreter equals PyTorch: the ops move data without
arithmetic, so results are exactly equal.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from adir_testing import assert_close, interpret, tensor_type
from xdsl.dialects.builtin import TensorType, f32
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Block

from adir.context import parse_module
from adir.dialects.tensor.data_movement import (
    BroadcastToOp,
    ConstantOp,
    ReshapeOp,
    TransposeOp,
)
from adir.interpreter.arrays import dense_to_numpy
from adir.interpreter.data_movement import DataMovementFunctions

DTYPES = [np.float32, np.float64]


def unary_ir(op: str, attrs: str, source: tuple, result: tuple) -> str:
    ts, tr = tensor_type(source), tensor_type(result)
    return f"""
func.func @f(%x: {ts}) -> {tr} {{
  %0 = adir.{op} %x {{{attrs}}} : {ts} -> {tr}
  func.return %0 : {tr}
}}"""


def i64_array(values: tuple[int, ...]) -> str:
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


PERMUTATIONS = [
    (),  # a scalar
    (0,),
    (1, 0),
    *itertools.permutations(range(3)),
    (0, 2, 3, 1),  # NCHW -> NHWC
    (0, 3, 1, 2),  # NHWC -> NCHW
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("permutation", PERMUTATIONS, ids=str)
def test_transpose_matches_torch_permute(permutation: tuple, dtype) -> None:
    source = (2, 3, 4, 5)[: len(permutation)]
    result = tuple(source[p] for p in permutation)
    x = np.random.default_rng(1).standard_normal(source).astype(dtype)
    ir = unary_ir("transpose", f"permutation = {i64_array(permutation)}", source, result)
    (actual,) = interpret(ir, "f", x, float_dtype=dtype)
    assert actual.dtype == dtype
    assert_close(actual, torch.from_numpy(x).permute(permutation), rtol=0, atol=0)


RESHAPES = [
    ((2, 3, 4), (6, 4), (6, 4)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (4, -1, 2), (4, 3, 2)),
    ((1, 28, 28), (-1, 784), (1, 784)),
    ((1,), (), ()),  # to a scalar
    ((), (1, 1), (1, 1)),  # from a scalar
    ((0, 4), (4, 0), (4, 0)),  # no elements
    ((0, 4), (-1, 2), (0, 2)),  # -1 is 0 when there are no elements
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", RESHAPES, ids=str)
def test_reshape_matches_torch(case: tuple, dtype) -> None:
    source, shape, result = case
    x = np.random.default_rng(4).standard_normal(source).astype(dtype)
    (actual,) = interpret(
        unary_ir("reshape", f"shape = {i64_array(shape)}", source, result),
        "f",
        x,
        float_dtype=dtype,
    )
    assert actual.dtype == dtype
    assert_close(actual, torch.from_numpy(x).reshape(shape), rtol=0, atol=0)


def test_reshape_of_a_transpose_reads_in_row_major_order() -> None:
    """reshape sees the transposed tensor's logical order, not its operand's memory order."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ir = """
func.func @f(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %t = adir.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %r = adir.reshape %t {shape = array<i64: 6>} : tensor<3x2xf32> -> tensor<6xf32>
  func.return %r : tensor<6xf32>
}"""
    (actual,) = interpret(ir, "f", x)
    np.testing.assert_array_equal(actual, [0, 3, 1, 4, 2, 5])
    assert_close(actual, torch.from_numpy(x).T.reshape(6), rtol=0, atol=0)


BROADCASTS = [
    ((3,), (4, 3)),
    ((3, 1), (2, 3, 4)),
    ((), (2, 2)),
    ((2, 3), (2, 3)),
    ((1, 1), (5, 1)),
    ((2, 1), (2, 0)),  # a 1 broadcasts to 0
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", BROADCASTS, ids=str)
def test_broadcast_to_matches_torch(case: tuple, dtype) -> None:
    source, target = case
    x = np.random.default_rng(6).standard_normal(source).astype(dtype)
    ir = unary_ir("broadcast_to", f"shape = {i64_array(target)}", source, target)
    (actual,) = interpret(ir, "f", x, float_dtype=dtype)
    assert actual.dtype == dtype
    assert_close(actual, torch.broadcast_to(torch.from_numpy(x), target), rtol=0, atol=0)


@pytest.mark.parametrize(
    ("op", "attrs", "result"),
    [
        ("transpose", "permutation = array<i64: 1, 0>", (3, 2)),
        ("reshape", "shape = array<i64: 6>", (6,)),
        ("reshape", "shape = array<i64: 2, 3>", (2, 3)),
        ("broadcast_to", "shape = array<i64: 2, 3>", (2, 3)),
    ],
)
def test_shape_op_results_do_not_alias_the_operand(op: str, attrs: str, result: tuple) -> None:
    """Value semantics: writing to a result never changes the caller's input."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (actual,) = interpret(unary_ir(op, attrs, (2, 3), result), "f", x)
    assert not np.shares_memory(actual, x)
    actual[...] = -1
    np.testing.assert_array_equal(x, np.arange(6).reshape(2, 3))


def constant_ir(value: str, type_: str) -> str:
    return f"""
func.func @f() -> {type_} {{
  %0 = adir.constant {value} : {type_}
  func.return %0 : {type_}
}}"""


def test_constant_gives_its_data() -> None:
    (actual,) = interpret(constant_ir("dense<[[1.0, -2.5], [0.0, 3.0]]>", "tensor<2x2xf32>"), "f")
    assert actual.dtype == np.float32
    np.testing.assert_array_equal(actual, [[1.0, -2.5], [0.0, 3.0]])


@pytest.mark.parametrize(("shape", "type_"), [((4, 4), "tensor<4x4xf32>"), ((), "tensor<f32>")])
def test_splat_constant_fills_its_shape(shape: tuple, type_: str) -> None:
    (actual,) = interpret(constant_ir("dense<0.5>", type_), "f")
    assert actual.shape == shape
    np.testing.assert_array_equal(actual, np.full(shape, 0.5, np.float32))


def test_constant_is_made_in_the_functions_float_dtype() -> None:
    """DataMovementFunctions(float64) makes float64 constants from the f32 data: 0.1 is the
    f32 nearest 0.1, 0.100000001490116..., widened exactly."""
    module = parse_module(constant_ir("dense<[0.1, 2.0]>", "tensor<2xf32>"))
    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(DataMovementFunctions(np.float64))
    (actual,) = interpreter.call_op("f", ())
    assert actual.dtype == np.float64
    np.testing.assert_array_equal(actual, [float(np.float32(0.1)), 2.0])


def test_constant_alone_is_float64_in_a_float64_session() -> None:
    (actual,) = interpret(constant_ir("dense<0.5>", "tensor<2xf32>"), "f", float_dtype=np.float64)
    assert actual.dtype == np.float64


def test_python_constructors_infer_result_types() -> None:
    """Building ops in Python gives them the result types the shape rules imply."""
    types = [TensorType(f32, shape) for shape in [(8, 784), (3,)]]
    x, v = Block(arg_types=types).args
    assert TransposeOp(x, [1, 0]).result.type == TensorType(f32, [784, 8])
    assert ReshapeOp(x, [-1, 28, 28]).result.type == TensorType(f32, [8, 28, 28])
    assert BroadcastToOp(v, [2, 3]).result.type == TensorType(f32, [2, 3])
    splat = ConstantOp.splat(0.5, [2, 2])
    assert splat.result.type == TensorType(f32, [2, 2])
    # One element's bytes, as the parser keeps a splat; read as the whole tensor.
    assert splat.value.get_values() == (0.5,)
    assert dense_to_numpy(splat.value, np.dtype(np.float32)).tolist() == [[0.5, 0.5]] * 2
