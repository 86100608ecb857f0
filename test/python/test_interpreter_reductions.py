"""The reductions family in the interpreter equals PyTorch (torch.sum, torch.mean, torch.amax
with dim and keepdim), on random inputs and edge values, in float32 and float64.

max is exact, so it must agree bit for bit. A float sum depends on the order of the additions:
n terms added in any order differ from the exact sum by at most (n - 1) * u * sum(|x|), u the
unit roundoff (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 4.4). So
numpy's and PyTorch's sums may differ by twice that, plus one rounding of the division in mean;
the test allows exactly this bound per output element.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from adir_testing import assert_close, interpret, tensor_type

TORCH = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax}

# (input shape, axes or None for all): odd sizes, negative axes, axes out of order, a size-1
# axis, a scalar.
CASES = [
    ((7,), None),
    ((7,), (0,)),
    ((3, 5), (1,)),
    ((3, 5), (-2,)),
    ((2, 3, 5), (0, 2)),
    ((2, 3, 5), (-1, 0)),
    ((4, 1, 3), (1,)),
    ((5, 7, 3), None),
    ((33, 17), (0,)),
    ((), None),
]


def as_torch(x: np.ndarray) -> torch.Tensor:
    # Not adir_testing.to_torch: np.ascontiguousarray turns a 0-d array into shape (1,).
    return torch.from_numpy(np.array(x))


def reduction_ir(op: str, shape: tuple, axes: tuple | None, keepdims: bool, result: tuple) -> str:
    entries = []
    if axes is not None:
        entries.append(f"axes = array<i64: {', '.join(map(str, axes))}>")
    if keepdims:
        entries.append("keepdims")
    props = f" {{{', '.join(entries)}}}" if entries else ""
    t, r = tensor_type(shape), tensor_type(result)
    return f"""
func.func @f(%x: {t}) -> {r} {{
  %0 = adir.{op} %x{props} : {t} -> {r}
  func.return %0 : {r}
}}"""


def run_reduction(op: str, x: np.ndarray, axes: tuple | None, keepdims: bool) -> tuple:
    """(interpreter result, torch result); the IR declares torch's result shape, so the
    verifier checks that the shape rule agrees with PyTorch."""
    dim = tuple(range(x.ndim)) if axes is None else axes
    expected = TORCH[op](as_torch(x), dim=dim, keepdim=keepdims)
    ir = reduction_ir(op, x.shape, axes, keepdims, tuple(expected.shape))
    (actual,) = interpret(ir, "f", x, float_dtype=x.dtype.type)
    return actual, expected.numpy()


def summation_bound(op: str, x: np.ndarray, axes: tuple | None, keepdims: bool) -> np.ndarray:
    """The largest difference two correctly implemented float sums (or means) may show."""
    dim = tuple(range(x.ndim)) if axes is None else axes
    n = int(np.prod([x.shape[a] for a in dim]))
    u = np.finfo(x.dtype).eps / 2
    abs_sum = np.sum(np.abs(x.astype(np.float64)), axis=dim, keepdims=keepdims)
    if op == "sum":
        return 2 * max(n - 1, 0) * u * abs_sum
    # mean: the sum's bound divided by n, plus one rounding of the quotient in each.
    return (2 * max(n - 1, 0) * u * abs_sum + 2 * u * abs_sum) / max(n, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("op", sorted(TORCH))
def test_reduction_matches_torch(op: str, case: tuple, keepdims: bool, dtype) -> None:
    shape, axes = case
    x = np.asarray(np.random.default_rng(11).standard_normal(shape), dtype=dtype)
    actual, expected = run_reduction(op, x, axes, keepdims)
    assert actual.dtype == dtype
    assert actual.shape == expected.shape
    if op == "max":
        np.testing.assert_array_equal(actual, expected)
    else:
        difference = np.abs(actual.astype(np.float64) - expected)
        bound = summation_bound(op, x, axes, keepdims)
        assert np.all(difference <= bound), f"differences {difference} exceed {bound}"


def test_summation_bound_is_tight_enough_to_catch_a_wrong_sum() -> None:
    """The tolerance is not vacuous: leaving out one term of a 7-term f32 sum breaks it."""
    x = np.random.default_rng(11).standard_normal((7,)).astype(np.float32)
    bound = summation_bound("sum", x, None, False)
    assert abs(float(np.sum(x[1:])) - float(np.sum(x))) > bound
    assert bound < 1e-5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(TORCH))
def test_edge_values_match_torch(op: str, dtype) -> None:
    """Row by row: nan propagates (sum, mean and max); inf + -inf is nan; a float32 sum that
    overflows is inf (and so is its mean, in PyTorch too); max(-inf, ...) of all -inf is -inf;
    large |x| stay finite where the exact result is representable."""
    rows = [
        [1.0, np.nan, 3.0],
        [np.inf, 1.0, 2.0],
        [np.inf, -np.inf, 0.0],
        [-np.inf, -np.inf, -np.inf],
        [-0.0, 0.0, -0.0],
        [3e38, 3e38, 0.0],
        [1e4, -1e4, 100.0],
        [-1e-45, 1e-45, 1e-45],
    ]
    x = np.array(rows, dtype=dtype)
    actual, expected = run_reduction(op, x, (1,), False)
    assert_close(actual, expected, rtol=0, atol=0)
    if op == "max":
        assert np.isnan(actual[0]) and actual[1] == np.inf and actual[3] == -np.inf
    else:
        assert np.isnan(actual[0]) and actual[1] == np.inf and np.isnan(actual[2])
    if dtype == np.float32 and op != "max":
        assert actual[5] == np.inf  # 6e38 overflows float32, as in PyTorch


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_over_no_elements_match_torch(keepdims: bool, dtype) -> None:
    """A sum of no elements is 0 and a mean 0/0 = nan, as in PyTorch."""
    x = np.zeros((0, 3), dtype=dtype)
    total, expected_total = run_reduction("sum", x, (0,), keepdims)
    mean, expected_mean = run_reduction("mean", x, (0,), keepdims)
    assert_close(total, expected_total, rtol=0, atol=0)
    assert_close(mean, expected_mean, rtol=0, atol=0)
    assert np.all(total == 0) and np.all(np.isnan(mean))
    assert total.shape == ((1, 3) if keepdims else (3,))


def test_max_of_a_dynamic_dim_that_is_empty_is_an_error() -> None:
    """The verifier cannot see a `?` dim of size 0; the interpreter says what is wrong."""
    ir = """
func.func @f(%x: tensor<?x3xf32>) -> tensor<3xf32> {
  %0 = adir.max %x {axes = array<i64: 0>} : tensor<?x3xf32> -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}"""
    with pytest.raises(ValueError, match=r"adir.max: axis 0 has size 0"):
        interpret(ir, "f", np.zeros((0, 3), np.float32))


def test_max_propagates_nan_wherever_it_is() -> None:
    """nan anywhere in a reduced slice gives nan, first, middle or last (torch.amax)."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    x[0, 0] = x[1, 2] = x[2, 3] = np.nan
    actual, expected = run_reduction("max", x, (1,), False)
    assert np.all(np.isnan(actual)) and np.all(np.isnan(expected))
    actual, expected = run_reduction("max", x, (0,), False)
    np.testing.assert_array_equal(actual, [np.nan, 9.0, np.nan, np.nan])
    np.testing.assert_array_equal(actual, expected)
