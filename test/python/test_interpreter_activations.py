"""The activations family in the interpreter equals PyTorch (torch.nn.functional), on random
inputs and edge values, in float32 and float64.

Tolerances come from a rounding-error analysis in units of eps = np.finfo(dtype).eps, using the
accuracy of the elementary functions measured on dense grids: numpy's float32 exp is within
2.5 ulp, log 2.9 ulp and tanh 1.4 ulp; PyTorch's within 0.9 ulp; in float64 the two agree
within 1 ulp. An error of k ulp is at most k * eps relative.

- relu, leaky_relu: exact, including the sign of zero (a comparison and one multiplication).
- clamp: exact, including the sign of zero (two comparisons).
- hardswish, hardsigmoid: exact: torch's kernels do the same IEEE operations in the same
  order (an addition, the clamp, a product, a division by 6).
- tanh: 2 eps relative (1.4 + 0.6 ulp).
- sigmoid: 6 eps relative: exp (2.5 and 0.9 ulp), one addition and one division in each.
- softmax over n elements: (n + 7) eps relative: as sigmoid, plus the sum of n terms, which
  each implementation may round by up to (n - 1) / 2 eps (Higham, eq. 4.4). `x - max` is one
  IEEE subtraction, identical in both.
- log_softmax over n elements: (n + 7 + 4 log n) eps absolute plus eps relative: the relative
  error of the sum becomes an absolute error of its log, and the log (<= 2.9 ulp) is <= log n.
- softplus: 8 eps relative: exp (2.5 and 0.9 ulp) enters log1p with a relative weight
  z / ((1 + z) log1p z) <= 1, then log1p (2.9 and 0.9 ulp) and one division in each; x * beta
  and the threshold test are the same IEEE operations in both.
- gelu: 2 eps relative plus 3 eps |x| absolute. For x < 0, `1 + erf(x / sqrt 2)` cancels, so an
  error d in erf becomes an absolute error |x| d / 2 in the result. The interpreter's erf is
  within 1 ulp; PyTorch's float32 gelu kernel evaluates erf with an approximation of its own,
  which we measured within 5 eps of erf on [-30, 30]; so d <= 6 eps. The tanh form's
  `1 + tanh` cancels in the same way, with d <= 2 eps.
- Results below the smallest normal number carry fewer bits; sigmoid and softmax get that as
  an absolute tolerance (PyTorch's float32 sigmoid flushes to 0 below x = -88.7, where
  `1 / (1 + exp(-x))` overflows, while the exact value is subnormal down to x = -103).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
from adir_testing import interpret, tensor_type

from adir.interpreter import activations

F = torch.nn.functional


def f32(value: float) -> float:
    """The value a `FloatAttr[Float32Type]` holds: the float32 nearest to `value`."""
    return float(np.float32(value))


# name -> (op, property dictionary, PyTorch reference)
ELEMENTWISE: dict[str, tuple[str, str, Callable[[torch.Tensor], torch.Tensor]]] = {
    "relu": ("relu", "", torch.relu),
    "leaky_relu": ("leaky_relu", "", lambda t: F.leaky_relu(t, f32(0.01))),
    "leaky_relu_0.2": ("leaky_relu", "{alpha = 0.2 : f32}", lambda t: F.leaky_relu(t, f32(0.2))),
    "leaky_relu_-1.5": (
        "leaky_relu",
        "{alpha = -1.5 : f32}",
        lambda t: F.leaky_relu(t, -1.5),
    ),
    "sigmoid": ("sigmoid", "", torch.sigmoid),
    "tanh": ("tanh", "", torch.tanh),
    "softplus": ("softplus", "", F.softplus),
    "softplus_beta_2_threshold_5": (
        "softplus",
        "{beta = 2.0 : f32, threshold = 5.0 : f32}",
        lambda t: F.softplus(t, beta=2.0, threshold=5.0),
    ),
    "gelu": ("gelu", "", F.gelu),
    "gelu_tanh": ("gelu", '{approximate = "tanh"}', lambda t: F.gelu(t, approximate="tanh")),
    "clamp_relu6": ("clamp", "{min = 0.0 : f32, max = 6.0 : f32}", F.relu6),
    "clamp_hardtanh": ("clamp", "{min = -1.0 : f32, max = 1.0 : f32}", F.hardtanh),
    "clamp_inclusive": (
        "clamp",
        "{min = -2.0 : f32, max = 2.5 : f32, inclusive}",
        lambda t: torch.clamp(t, -2.0, 2.5),
    ),
    "clamp_min_only": ("clamp", "{min = 0.5 : f32, inclusive}", lambda t: t.clamp_min(0.5)),
    "clamp_max_only": ("clamp", "{max = -0.5 : f32, inclusive}", lambda t: t.clamp_max(-0.5)),
    "clamp_min_above_max": (
        "clamp",
        "{min = 3.0 : f32, max = 1.0 : f32, inclusive}",
        lambda t: torch.clamp(t, 3.0, 1.0),
    ),
    "hardswish": ("hardswish", "", F.hardswish),
    "hardsigmoid": ("hardsigmoid", "", F.hardsigmoid),
}

AXIS_OPS = {"softmax": torch.softmax, "log_softmax": torch.log_softmax}


def unary_ir(op: str, props: str, shape: tuple[int, ...]) -> str:
    t = tensor_type(shape)
    props = f" {props}" if props else ""
    return f"""
func.func @f(%x: {t}) -> {t} {{
  %0 = adir.{op} %x{props} : {t}
  func.return %0 : {t}
}}"""


def as_torch(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(x))


def tolerance(name: str, x: np.ndarray, n: int = 1) -> tuple[float, np.ndarray | float]:
    """(rtol, atol) for op `name` on input `x`, `n` the softmax axis length (see the module
    docstring for where each number comes from)."""
    eps = float(np.finfo(x.dtype).eps)
    tiny = float(np.finfo(x.dtype).smallest_normal)
    if name.startswith(("relu", "leaky_relu", "clamp", "hardswish", "hardsigmoid")):
        return 0.0, 0.0
    if name == "tanh":
        return 2 * eps, 0.0
    if name == "sigmoid":
        return 6 * eps, tiny
    if name.startswith("softplus"):
        return 8 * eps, tiny
    if name.startswith("gelu"):
        return 2 * eps, 3 * eps * np.abs(x.astype(np.float64))
    if name == "softmax":
        return (n + 7) * eps, tiny
    if name == "log_softmax":
        return eps, (n + 7 + 4 * math.log(n)) * eps
    raise KeyError(name)


def assert_within(
    actual: np.ndarray, expected: np.ndarray, rtol: float, atol: np.ndarray | float
) -> None:
    """Same shape and dtype; nan exactly where expected has nan; equal infinities; elsewhere
    |actual - expected| <= atol + rtol * |expected|."""
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(e), err_msg="nan positions differ")
    infinite = np.isinf(a) | np.isinf(e)
    np.testing.assert_array_equal(a[infinite], e[infinite], err_msg="infinities differ")
    finite = np.isfinite(a) & np.isfinite(e)
    with np.errstate(invalid="ignore"):  # inf - inf and 0 * inf where not finite
        bound = np.broadcast_to(atol + rtol * np.abs(e), e.shape)
        bad = finite & ~(np.abs(a - e) <= bound)
    assert not bad.any(), (
        f"{int(bad.sum())} values out of tolerance, e.g. actual {a[bad][:4]}, expected "
        f"{e[bad][:4]}, allowed difference {bound[bad][:4]}"
    )


SHAPES = [(7,), (3, 5), (2, 3, 17)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_activation_matches_torch(name: str, shape: tuple, dtype) -> None:
    op, props, reference = ELEMENTWISE[name]
    # Scaled by 4 to reach the tails (gelu's cancellation, sigmoid near 0 and 1).
    x = (np.random.default_rng(17).standard_normal(shape) * 4).astype(dtype)
    (actual,) = interpret(unary_ir(op, props, shape), "f", x, float_dtype=dtype)
    assert_within(actual, reference(as_torch(x)).numpy(), *tolerance(name, x))


# (shape, axis or None for the default -1)
AXIS_CASES = [
    ((7,), None),
    ((3, 5), 0),
    ((3, 5), -1),
    ((2, 3, 17), 1),
    ((2, 3, 17), None),
    ((4, 1, 33), -2),
    ((2, 50), 1),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", AXIS_CASES, ids=str)
@pytest.mark.parametrize("name", sorted(AXIS_OPS))
def test_softmax_family_matches_torch(name: str, case: tuple, dtype) -> None:
    shape, axis = case
    x = (np.random.default_rng(19).standard_normal(shape) * 4).astype(dtype)
    props = "" if axis is None else f"{{axis = {axis} : i64}}"
    (actual,) = interpret(unary_ir(name, props, shape), "f", x, float_dtype=dtype)
    dim = -1 if axis is None else axis
    expected = AXIS_OPS[name](as_torch(x), dim).numpy()
    assert_within(actual, expected, *tolerance(name, x, n=shape[dim]))


SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan]
LARGE = [100.0, -100.0, 1e4, -1e4, 88.0, -88.0, -90.0, -745.0]  # exp overflows / underflows
EXTREME = [1e-38, -1e-38, 3e38, -3e38]  # near float32's smallest normal and largest
EDGE = SPECIAL + LARGE + EXTREME


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_edge_values_match_torch(name: str, dtype) -> None:
    """nan propagates; relu(-0.0) = -0.0 and relu(nan) = nan; sigmoid and tanh of +-1e4 are
    exactly +-1 and 0; gelu(-inf) = nan (-inf * 0) in both. Zeros have torch's sign."""
    op, props, reference = ELEMENTWISE[name]
    x = np.array(EDGE, dtype=dtype)
    (actual,) = interpret(unary_ir(op, props, x.shape), "f", x, float_dtype=dtype)
    expected = reference(as_torch(x)).numpy()
    if name == "gelu" and dtype == np.float32:
        # torch's float32 exact gelu is nan at +inf (its erf approximation) and inf at 3e38
        # (it forms x * (1 + erf), which overflows above 1.7e38, before halving). The
        # interpreter follows the formula, as torch's float64 kernel does: 3e38 and +inf.
        at_inf, at_3e38 = x == np.inf, x == np.float32(3e38)
        assert np.isnan(expected[at_inf]).all() and (expected[at_3e38] == np.inf).all()
        expected = reference(as_torch(x.astype(np.float64))).numpy().astype(np.float32)
        assert (expected[at_inf] == np.inf).all() and (expected[at_3e38] == x[at_3e38]).all()
    assert_within(actual, expected, *tolerance(name, x))
    zeros = (actual == 0) & (expected == 0)
    np.testing.assert_array_equal(np.signbit(actual[zeros]), np.signbit(expected[zeros]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(AXIS_OPS))
def test_softmax_family_edge_values_match_torch(name: str, dtype) -> None:
    """Per row: +-1e4 give exactly 1 and 0 (log: 0, -1e4, -2e4) without overflow; -inf gets
    probability 0 (log: -inf); a row with +inf or nan, or of -inf only, is nan throughout, as
    in PyTorch; a float32 range wider than 3.4e38 makes `x - max` -inf, probability 0."""
    x = np.array(
        [
            [1e4, -1e4, 0.0],
            [-1e4, 1e4, 1e4],
            [-np.inf, 0.0, 1.0],
            [np.inf, 0.0, 1.0],
            [np.nan, 0.0, 1.0],
            [-np.inf, -np.inf, -np.inf],
            [-0.0, 0.0, -0.0],
            [3e38, -3e38, 0.0],
            [100.0, -100.0, 88.0],
        ],
        dtype=dtype,
    )
    (actual,) = interpret(unary_ir(name, "", x.shape), "f", x, float_dtype=dtype)
    expected = AXIS_OPS[name](as_torch(x), -1).numpy()
    assert_within(actual, expected, *tolerance(name, x, n=3))
    if name == "softmax":
        np.testing.assert_array_equal(actual[0], [1.0, 0.0, 0.0])
        assert np.all(np.isnan(actual[3:6]))
    else:
        np.testing.assert_array_equal(actual[0], [0.0, -2e4, -1e4])
        assert actual[2, 0] == -np.inf


def test_activations_do_not_overflow() -> None:
    """sigmoid, softmax and log_softmax never compute an exp of a large positive number."""
    x = np.array([-1e4, -100.0, -88.0, 0.0, 88.0, 100.0, 1e4], dtype=np.float32)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        s = activations.sigmoid(x)
        p = activations.softmax(x, 0)
        log_p = activations.log_softmax(x, 0)
    assert s[0] == 0.0 and s[-1] == 1.0 and s[3] == 0.5
    # sigmoid(-100) = 3.72e-44, a float32 subnormal (spacing 2^-149); torch.sigmoid gives 0.
    assert abs(float(s[1]) - math.exp(-100) / (1 + math.exp(-100))) <= 3 * 2.0**-149
    assert p[-1] == 1.0 and p[0] == 0.0
    assert log_p[-1] == 0.0 and log_p[0] == -2e4


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_at_infinity(approximate: str, dtype) -> None:
    """gelu(+inf) = +inf and gelu(-inf) = nan (-inf * 0), as torch's float64 kernel gives."""
    x = np.array([np.inf, -np.inf], dtype=dtype)
    with np.errstate(invalid="ignore"):  # -inf * 0 is the nan expected
        y = activations.gelu(x, approximate)
    assert y[0] == np.inf and np.isnan(y[1])
    expected = F.gelu(torch.tensor([np.inf, -np.inf], dtype=torch.float64), approximate=approximate)
    assert expected[0] == np.inf and torch.isnan(expected[1])


def test_erf_matches_torch_to_float64_precision() -> None:
    """The interpreter's erf agrees with torch.erf within 2 eps relative (each is within 1 ulp
    of the exact value), across the range where erf is not yet +-1 and on tiny arguments."""
    rng = np.random.default_rng(23)
    x = np.concatenate(
        [
            np.linspace(-6.5, 6.5, 100_001),
            rng.standard_normal(10_000) * 3,
            np.geomspace(1e-300, 1.0, 1_000),
            -np.geomspace(1e-300, 1.0, 1_000),
        ]
    )
    actual = activations.erf(x)
    expected = torch.erf(torch.from_numpy(x)).numpy()
    eps = np.finfo(np.float64).eps
    np.testing.assert_allclose(actual, expected, rtol=2 * eps, atol=0)
    assert np.max(np.abs(actual - expected) / np.abs(expected)) < 1e-15


def test_erf_special_values() -> None:
    """erf(+-inf) = +-1, erf(nan) = nan, erf keeps the sign of zero, erf(x) = 2x/sqrt(pi)
    for tiny x, erf(6) rounds to 1; the shape is kept."""
    x = np.array([[np.inf, -np.inf, np.nan], [0.0, -0.0, 1e-300], [6.0, -6.0, 0.5]])
    y = activations.erf(x)
    assert y.shape == (3, 3) and y.dtype == np.float64
    assert y[0, 0] == 1.0 and y[0, 1] == -1.0 and np.isnan(y[0, 2])
    assert y[1, 0] == 0.0 and not np.signbit(y[1, 0]) and np.signbit(y[1, 1])
    assert y[1, 2] == 2 / math.sqrt(math.pi) * 1e-300
    assert y[2, 0] == 1.0 and y[2, 1] == -1.0
    assert y[2, 2] == 0.5204998778130465  # erf(1/2), correctly rounded


def test_leaky_relu_alpha_is_a_float32() -> None:
    """alpha is an f32 property, so float64 runs multiply by float32(0.1) = 0.10000000149...,
    not by the double 0.1."""
    x = np.array([-1.0, -3.0, 2.0])
    (actual,) = interpret(
        unary_ir("leaky_relu", "{alpha = 0.1 : f32}", x.shape), "f", x, float_dtype=np.float64
    )
    np.testing.assert_array_equal(actual, [-0.10000000149011612, -0.30000000447034836, 2.0])


# The kinks of the clamps and of hardswish / hardsigmoid, and the float next to each on both
# sides in float32 (x + 3 rounds to 6 just below x = 3, so hardsigmoid is 1 there in both).
KINKS = [-6.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5, 3.0, 6.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "name", [n for n in sorted(ELEMENTWISE) if n.startswith(("clamp", "hard"))]
)
def test_clamps_at_their_kinks_equal_torch_bit_for_bit(name: str, dtype) -> None:
    op, props, reference = ELEMENTWISE[name]
    kinks = np.array(KINKS, dtype=dtype)
    x = np.concatenate(
        [kinks, np.nextafter(kinks, dtype(-np.inf)), np.nextafter(kinks, dtype(np.inf)), EDGE]
    ).astype(dtype)
    (actual,) = interpret(unary_ir(op, props, x.shape), "f", x, float_dtype=dtype)
    expected = reference(as_torch(x)).numpy()
    np.testing.assert_array_equal(actual, expected)
    zeros = (actual == 0) & (expected == 0)
    np.testing.assert_array_equal(np.signbit(actual[zeros]), np.signbit(expected[zeros]))
