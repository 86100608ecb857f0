"""The matmul family in the interpreter equals PyTorch.

numpy and PyTorch may sum in different orders, so results are compared within the
rounding-error bound of a matrix product, |fl(AB) - AB| <= gamma_K |A||B| elementwise, with
gamma_K = K u / (1 - K u) and u the unit roundoff (Higham, Accuracy and Stability of Numerical
Algorithms, 2nd ed., section 3.5). Two results that both meet it are within 2 gamma_K |A||B| of
each other.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from adir_testing import assert_close, interpret, tensor_type
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from adir.context import adir_context, parse_module
from adir.dialects.tensor.matmul import MatmulOp
from adir.passes.fold_transpose_into_matmul import FoldTransposeIntoMatmulPass

DTYPES = [np.float32, np.float64]


def stored_shape(shape: tuple[int, ...], transposed: bool) -> tuple[int, ...]:
    """The shape an operand has in memory when matmul reads it with its last two dims swapped."""
    return (*shape[:-2], shape[-1], shape[-2]) if transposed else shape


def matmul_ir(a: tuple, b: tuple, result: tuple, transpose_a: bool, transpose_b: bool) -> str:
    flags = [
        name for name, on in [("transpose_a", transpose_a), ("transpose_b", transpose_b)] if on
    ]
    attrs = f" {{{', '.join(flags)}}}" if flags else ""
    ta, tb, tr = tensor_type(a), tensor_type(b), tensor_type(result)
    return f"""
func.func @f(%a: {ta}, %b: {tb}) -> {tr} {{
  %0 = adir.matmul %a, %b{attrs} : {ta}, {tb} -> {tr}
  func.return %0 : {tr}
}}"""


def assert_matmul_close(actual: np.ndarray, expected: torch.Tensor, a, b, k: int) -> None:
    """Within 2 gamma_K |A||B| of PyTorch, elementwise (A, B as matmul reads them); nan and
    inf exactly where PyTorch has them."""
    expected_np = expected.numpy()
    assert actual.shape == expected_np.shape, f"shape {actual.shape} != {expected_np.shape}"
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected_np))
    infinite = np.isinf(expected_np)
    np.testing.assert_array_equal(actual[infinite], expected_np[infinite])
    magnitude = np.matmul(np.abs(a.double().numpy()), np.abs(b.double().numpy()))
    u = np.finfo(actual.dtype).eps / 2
    bound = 2 * (k * u / (1 - k * u)) * magnitude
    finite = np.isfinite(expected_np)
    error = np.abs(actual[finite].astype(np.float64) - expected_np[finite])
    assert np.all(error <= bound[finite]), f"error {error.max()} beyond the bound"


MATMUL_SHAPES = [
    ((5, 7), (7, 3)),  # 2-D x 2-D
    ((8, 784), (784, 32)),  # an MLP layer
    ((4, 5, 7), (4, 7, 3)),  # batched
    ((4, 5, 7), (7, 3)),  # one rhs shared by the batch
    ((5, 1), (1, 3)),  # K = 1: an outer product
    ((1, 7), (7, 1)),  # M = N = 1: a dot product
    ((1, 1), (1, 1)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("transpose_a", "transpose_b"), list(itertools.product([False, True], repeat=2))
)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_matches_torch(shapes: tuple, transpose_a: bool, transpose_b: bool, dtype) -> None:
    """matmul(A, B) {flags} == torch.matmul(A', B'), with A' = A.mT when transpose_a."""
    lhs, rhs = shapes
    a_shape, b_shape = stored_shape(lhs, transpose_a), stored_shape(rhs, transpose_b)
    result = (*lhs[:-1], rhs[-1])
    rng = np.random.default_rng(11)
    a = rng.standard_normal(a_shape).astype(dtype)
    b = rng.standard_normal(b_shape).astype(dtype)
    ir = matmul_ir(a_shape, b_shape, result, transpose_a, transpose_b)
    (actual,) = interpret(ir, "f", a, b, float_dtype=dtype)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    ta, tb = (ta.mT if transpose_a else ta), (tb.mT if transpose_b else tb)
    assert actual.dtype == dtype
    assert actual.shape == result
    assert_matmul_close(actual, torch.matmul(ta, tb), ta, tb, k=lhs[-1])


@pytest.mark.parametrize(
    "shapes", [((3, 0), (0, 2)), ((0, 4), (4, 2)), ((2, 0, 3), (2, 3, 5))], ids=str
)
def test_matmul_of_empty_operands_matches_torch(shapes: tuple) -> None:
    """K = 0 gives zeros (an empty sum); M = 0 an empty result."""
    a = np.ones(shapes[0], np.float32)
    b = np.ones(shapes[1], np.float32)
    result = (*shapes[0][:-1], shapes[1][-1])
    (actual,) = interpret(matmul_ir(shapes[0], shapes[1], result, False, False), "f", a, b)
    expected = torch.matmul(torch.from_numpy(a), torch.from_numpy(b))
    assert actual.shape == result
    assert_close(actual, expected, rtol=0, atol=0)


def test_matmul_propagates_inf_and_nan_like_torch() -> None:
    """inf * 0 = nan, a nan poisons its row, inf + finite = inf."""
    a = np.array([[np.inf, 0, 1], [1, np.nan, 2], [1, 2, 3], [-np.inf, 1, 1]], np.float32)
    b = np.array([[0, 1], [1, 0], [np.inf, 1]], np.float32)
    (actual,) = interpret(matmul_ir((4, 3), (3, 2), (4, 2), False, False), "f", a, b)
    expected = np.array([[np.nan, np.inf], [np.nan, np.nan], [np.inf, 4], [np.nan, -np.inf]])
    assert_close(actual, expected, rtol=0, atol=0)
    assert_close(actual, torch.matmul(torch.from_numpy(a), torch.from_numpy(b)), rtol=0, atol=0)


def test_fold_transpose_into_matmul_keeps_the_numbers() -> None:
    """matmul(x^T, ((w^T)^T)) {transpose_b} and the folded matmul(x, w) {flags} agree."""
    ir = """
func.func @f(%x: tensor<6x4x5xf32>, %w: tensor<3x4xf32>) -> tensor<6x5x3xf32> {
  %tx = adir.transpose %x {permutation = array<i64: 0, 2, 1>}
      : tensor<6x4x5xf32> -> tensor<6x5x4xf32>
  %tw = adir.transpose %w {permutation = array<i64: 1, 0>} : tensor<3x4xf32> -> tensor<4x3xf32>
  %tt = adir.transpose %tw {permutation = array<i64: 1, 0>} : tensor<4x3xf32> -> tensor<3x4xf32>
  %y = adir.matmul %tx, %tt {transpose_b} : tensor<6x5x4xf32>, tensor<3x4xf32> -> tensor<6x5x3xf32>
  func.return %y : tensor<6x5x3xf32>
}"""
    module = parse_module(ir)
    module.verify()
    FoldTransposeIntoMatmulPass().apply(adir_context(), module)
    module.verify()
    (matmul,) = [op for op in module.walk() if op.name.startswith("adir.")]
    assert str(matmul).startswith("%y = adir.matmul %x, %w {transpose_a, transpose_b}")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 4, 5))
    w = rng.standard_normal((3, 4))
    (before,) = interpret(ir, "f", x, w, float_dtype=np.float64)
    (after,) = interpret(str(module), "f", x, w, float_dtype=np.float64)
    a, b = torch.from_numpy(x).mT, torch.from_numpy(w).mT
    assert_matmul_close(before, torch.matmul(a, b), a, b, k=4)
    assert_matmul_close(after, torch.matmul(a, b), a, b, k=4)


def test_float64_matmul_with_a_constant_stays_float64() -> None:
    """A float64 input times a constant computes in float64, as torch does with the constant's
    f32 values widened."""
    ir = """
func.func @f(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %c = adir.constant dense<[[0.1, 0.2], [0.3, 0.4]]> : tensor<2x2xf32>
  %y = adir.matmul %x, %c : tensor<3x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}"""
    x = np.random.default_rng(9).standard_normal((3, 2))
    (actual,) = interpret(ir, "f", x, float_dtype=np.float64)
    c = torch.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=torch.float32).double()
    assert actual.dtype == np.float64
    assert_matmul_close(actual, torch.matmul(torch.from_numpy(x), c), torch.from_numpy(x), c, k=2)


def test_python_constructor_infers_the_result_type() -> None:
    """Building a matmul in Python gives it the result type the shape rule implies."""
    types = [TensorType(f32, shape) for shape in [(8, 784), (32, 784), (784, 8)]]
    x, w, xt = Block(arg_types=types).args
    assert MatmulOp(x, w, transpose_b=True).result.type == TensorType(f32, [8, 32])
    both = MatmulOp(xt, w, transpose_a=True, transpose_b=True)
    assert both.result.type == TensorType(f32, [8, 32])
    with pytest.raises(
        VerifyException, match=r"adir\.matmul: inner dimensions 784 and 8 do not match"
    ):
        MatmulOp(x, x)
