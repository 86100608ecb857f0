"""VJP rules of the activations family: the gradient of `sum(op(x) * r)` against torch.autograd
and central finite differences in float64; PyTorch's conventions at kinks and in saturated
tails; and each gradient op interpreted in float32 against PyTorch's float32 backward kernel.

The float32 comparison feeds both sides the same float32 operands (x, PyTorch's own forward
output y where the op reads the output, and dy), so only the backward formulas differ. Its
bound is the sum of the two sides' worst-case errors against the exact value of the formula
on those operands, to first order in eps = 2^-23 (u = eps / 2 is one rounding). The accuracy
of the elementary functions is as measured in test_interpreter_activations.py: numpy's float32
exp within 2.5 ulp and tanh 1.4 ulp, PyTorch's within 0.9 ulp; the interpreter's erf is the
float64 one rounded to float32 (u). Constants are rounded to float32 identically on both sides.

- relu_grad, leaky_relu_grad: exact (a select; one multiplication by the same f32 alpha).
- clamp_grad, hardsigmoid_grad: exact (a select; one multiplication by the same float 1/6).
- hardswish_grad: exact: `dy * (x / 3 + 0.5)` on both sides, the same IEEE operations.
- sigmoid_grad: `dy * (1 - y) * y` on both sides; `1 - y` is exact for y >= 1/2 (Sterbenz),
  else one rounding: 3u each, 3 eps relative in all.
- tanh_grad: ours `dy * ((1 - y) * (1 + y))` is within 4u relative (a factor that is small is
  exact); PyTorch's `dy * (1 - y * y)` within `|dy| (u y^2 + 2u (1 - y^2))`, since the rounding
  of y * y cancels in 1 - y^2. Bound: `2 eps |dx| + eps |dy| (y^2 / 2 + 1 - y^2)`.
- gelu_grad "none": ours `dy * (cdf + x * pdf)`: cdf within 0.875 eps absolute (erf's argument
  u, which moves erf by at most 0.484u; erf u; the rounding of 1 + erf, halved); x * pdf
  within (3.5 + x^2 / 4) eps relative (x * x * -0.5 rounded moves exp by x^2 u / 2; exp 2.5
  ulp; two products); the sum and dy * one rounding each. PyTorch's float32 kernel uses its own
  vectorised erf and exp approximations, so its side is measured rather than derived:
  TORCH_GELU_ERROR = 2.69 eps at dy = 1, exhaustively over float32 [-30, 30] (exactly 1 or 0
  beyond), rechecked by `test_torch_float32_gelu_backward_is_within_its_error_bound`. Bound:
  `1.5 eps |dx| + eps |dy| (2.69 + 0.875 + (3.5 + x^2 / 4) |x| phi(x))`.
- gelu_grad "tanh": the same operations on both sides except tanh. With s = beta (x + kappa
  x^3) (5 roundings, same signs, so 5u relative) and t = tanh(s), each side's t errs by
  `sech^2(s) 5u |s|` plus its tanh's (1.4 and 0.9 ulp) `|t|`, and moves the result by
  `|0.5 - x t beta (1 + 3 kappa x^2)|` per unit of t. The other roundings: u of the left term
  0.5 (1 + t); u times `R = |0.5 x beta (1 + 3 kappa x^2)|` from `1 - t * t` (u t^2 + u (1 - t^2));
  6u relative on the right term (4 in its last factor, 2 products); u for the sum, u for
  `dy *`. That PyTorch's side stays within its half is rechecked by the same test.
- softplus_grad: ours `dy * sigmoid(beta x)` within 4 eps relative (exp 2.5 ulp, weighted by
  at most 1; 1 + e, the division, dy *: 3u); PyTorch's `dy * z / (z + 1)`, z = exp(beta x),
  within 2.4 eps (exp 0.9 ulp, weighted by 1 / (1 + z); three roundings). `beta * x` and the
  threshold test are the same IEEE operations on both sides. Bound 6.4 eps relative.
- softmax_grad along n entries: the sum of dy * y errs by at most n u sum|dy y| on each side
  (any order of summation; Higham, eq. 4.4), then `dy - s` and `y *` round once each:
  `2 eps |dx| + n eps y sum|dy y|`.
- log_softmax_grad along n entries: the sum of dy errs by (n - 1) u sum|dy| on each side;
  exp(y) by 2.5 and 0.9 ulp; the product and the difference round once each:
  `eps |dx| + exp(y) ((n - 1) eps sum|dy| + 4.4 eps |sum dy|)`.
- Underflow: a factor below the smallest normal number `tiny` (y of sigmoid or softmax,
  exp(y), pdf, sigmoid(beta x)) carries fewer bits than the relative bounds assume: `tiny |dy|`
  absolute.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
from adir_testing import interpret, tensor_type
from gradient_testing import (
    adir_gradients,
    assert_gradients_close,
    check_op_gradients,
    differentiate_ir,
    finite_difference_gradients,
    torch_gradients,
    wrapped_op_ir,
)
from test_interpreter_activations import assert_within, f32
from xdsl.dialects.func import FuncOp

from adir.dialects.tensor.activations import ClampGradOp, ClampOp
from adir.interpreter import activations

F = torch.nn.functional

# name -> (op text, PyTorch reference)
ELEMENTWISE: dict[str, tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = {
    "relu": ("adir.relu OPERANDS", torch.relu),
    "leaky_relu": ("adir.leaky_relu OPERANDS", lambda t: F.leaky_relu(t, f32(0.01))),
    "leaky_relu_0.2": (
        "adir.leaky_relu OPERANDS {alpha = 0.2 : f32}",
        lambda t: F.leaky_relu(t, f32(0.2)),
    ),
    "leaky_relu_-1.5": (
        "adir.leaky_relu OPERANDS {alpha = -1.5 : f32}",
        lambda t: F.leaky_relu(t, -1.5),
    ),
    "sigmoid": ("adir.sigmoid OPERANDS", torch.sigmoid),
    "tanh": ("adir.tanh OPERANDS", torch.tanh),
    "gelu": ("adir.gelu OPERANDS", F.gelu),
    "gelu_tanh": (
        'adir.gelu OPERANDS {approximate = "tanh"}',
        lambda t: F.gelu(t, approximate="tanh"),
    ),
    "softplus": ("adir.softplus OPERANDS", F.softplus),
    "softplus_beta_2_threshold_5": (
        "adir.softplus OPERANDS {beta = 2.0 : f32, threshold = 5.0 : f32}",
        lambda t: F.softplus(t, beta=2.0, threshold=5.0),
    ),
    "relu6": ("adir.clamp OPERANDS {min = 0.0 : f32, max = 6.0 : f32}", F.relu6),
    "hardtanh": ("adir.clamp OPERANDS {min = -1.0 : f32, max = 1.0 : f32}", F.hardtanh),
    "clamp": (
        "adir.clamp OPERANDS {min = -1.0 : f32, max = 1.0 : f32, inclusive}",
        lambda t: torch.clamp(t, -1.0, 1.0),
    ),
    "clamp_min": ("adir.clamp OPERANDS {min = 0.0 : f32, inclusive}", lambda t: t.clamp_min(0.0)),
    "clamp_max": ("adir.clamp OPERANDS {max = 0.0 : f32, inclusive}", lambda t: t.clamp_max(0.0)),
    "hardswish": ("adir.hardswish OPERANDS", F.hardswish),
    "hardsigmoid": ("adir.hardsigmoid OPERANDS", F.hardsigmoid),
}
AXIS_OPS = {"softmax": torch.softmax, "log_softmax": torch.log_softmax}


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_activation_gradient(name: str, shape: tuple) -> None:
    # Scaled by 2 so that softplus {beta = 2, threshold = 5} takes its linear branch too; no
    # point is near a kink (relu at 0, softplus at the threshold), so finite differences hold.
    x = np.random.default_rng(5).standard_normal(shape) * 2
    op_text, reference = ELEMENTWISE[name]
    check_op_gradients(op_text, [shape], reference, inputs=[x])


# (shape, axis or None for the default -1)
AXIS_CASES = [
    ((5,), None),
    ((3, 4), 0),
    ((3, 4), -1),
    ((2, 3, 4), 1),
    ((2, 3, 4), -3),
    ((2, 3, 4), None),
    ((4, 1, 3), -2),
]


@pytest.mark.parametrize("case", AXIS_CASES, ids=str)
@pytest.mark.parametrize("name", sorted(AXIS_OPS))
def test_softmax_family_gradient(name: str, case: tuple) -> None:
    shape, axis = case
    props = "" if axis is None else f" {{axis = {axis} : i64}}"
    dim = -1 if axis is None else axis
    check_op_gradients(f"adir.{name} OPERANDS{props}", [shape], lambda t: AXIS_OPS[name](t, dim))


def gradients_at(op_text: str, reference: Callable, x: np.ndarray) -> tuple[np.ndarray, ...]:
    """(adir's dx, torch's dx, r) for `sum(op(x) * r)`, r drawn at random, in float64."""
    r = np.random.default_rng(7).standard_normal(x.shape)
    ir = wrapped_op_ir(op_text, [tensor_type(x.shape)], tensor_type(x.shape))
    ours = adir_gradients(differentiate_ir(ir, "f", [0]), [x, r])
    theirs = torch_gradients(lambda t, s: (reference(t) * s).sum(), [x, r], [0])
    assert_gradients_close(ours, theirs)
    return ours[1], theirs[1], r


def test_relu_gradient_is_zero_at_zero() -> None:
    """PyTorch's threshold_backward: the derivative at 0 (and -0.0) is 0, not 1 or 1/2."""
    x = np.array([0.0, -0.0, 1.0, -1.0, 1e-300, -1e-300])
    ours, theirs, r = gradients_at(*ELEMENTWISE["relu"], x)
    np.testing.assert_array_equal(ours, [0.0, 0.0, r[2], 0.0, r[4], 0.0])
    np.testing.assert_array_equal(ours, theirs)


def test_leaky_relu_slope_at_zero_is_alpha() -> None:
    """PyTorch's leaky_relu_backward: `x > 0 ? dy : alpha * dy`, so alpha at 0 and -0.0."""
    x = np.array([0.0, -0.0, 2.0, -2.0])
    ours, theirs, r = gradients_at(*ELEMENTWISE["leaky_relu_0.2"], x)
    alpha = f32(0.2)
    np.testing.assert_array_equal(ours, [alpha * r[0], alpha * r[1], r[2], alpha * r[3]])
    np.testing.assert_array_equal(ours, theirs)


# Inputs in the saturated tails, with PyTorch's derivative there: where the forward output is
# exactly 1, 0 or -1 (or linear) the gradient is exactly 0 (or dy) on both sides. Elsewhere no
# sum cancels (the other term is exactly 0 or 1), and each side computes the same formula with
# one exp (or erf) within 1 ulp = 2u and at most 5 other roundings: 7u each, so 8 eps (16u)
# of float64 apart. (gelu's `x * x * -0.5` is the same IEEE operation on both sides, so its
# rounding, amplified by exp to 450u at x = -30, is not a difference.)
TAILS = {
    "sigmoid": [-np.inf, -1e4, -700.0, -100.0, -40.0, 40.0, 100.0, 1e4, np.inf],
    "tanh": [-np.inf, -1e4, -100.0, -20.0, 20.0, 100.0, 1e4, np.inf],
    "softplus": [-np.inf, -1e4, -700.0, -100.0, 20.0, 25.0, 100.0, 1e4],
    "gelu": [-1e4, -40.0, -30.0, -10.0, 10.0, 30.0, 1e4],
    "gelu_tanh": [-1e4, -30.0, -10.0, 10.0, 30.0, 1e4],
}


@pytest.mark.parametrize("name", sorted(TAILS))
def test_saturated_tails_follow_torch(name: str) -> None:
    x = np.array(TAILS[name])
    ours, theirs, r = gradients_at(*ELEMENTWISE[name], x)
    assert np.all(np.isfinite(ours))
    exact = (theirs == 0) | (theirs == r)
    np.testing.assert_array_equal(ours[exact], theirs[exact])
    eps = np.finfo(np.float64).eps
    np.testing.assert_allclose(ours[~exact], theirs[~exact], rtol=8 * eps, atol=0)
    if name in ("sigmoid", "tanh"):  # where the output rounds to exactly 0 or +-1
        saturated = (x >= 40) | (x <= -1e4) if name == "sigmoid" else np.abs(x) >= 20
        np.testing.assert_array_equal(ours[saturated], 0.0)
        assert np.all(ours[~saturated] != 0)
    if name.startswith("gelu"):
        np.testing.assert_array_equal(ours[x >= 10], r[x >= 10])


def test_softplus_gradient_has_no_overflow_above_exp_range() -> None:
    """With a threshold above log(float max), PyTorch's `z / (z + 1)` is inf / inf = nan at
    z = exp(720); the interpreter's sigmoid gives the exact derivative 1 (times dy)."""
    x = np.array([720.0, 800.0, -800.0])
    op_text = "adir.softplus OPERANDS {threshold = 1000.0 : f32}"
    ir = wrapped_op_ir(op_text, [tensor_type(x.shape)], tensor_type(x.shape))
    r = np.array([0.5, -2.0, 3.0])
    _, dx = adir_gradients(differentiate_ir(ir, "f", [0]), [x, r])
    np.testing.assert_array_equal(dx, [0.5, -2.0, 0.0])


def test_chain_of_every_activation_matches_torch() -> None:
    """All eight rules in one function, with fan-out (h feeds three activations) and the
    adjoints flowing through both softmax axes."""
    ir = """
func.func @f(%x: tensor<4x5xf32>, %w: tensor<5x6xf32>, %r: tensor<4x6xf32>) -> tensor<f32> {
  %h = adir.matmul %x, %w : tensor<4x5xf32>, tensor<5x6xf32> -> tensor<4x6xf32>
  %a = adir.sigmoid %h : tensor<4x6xf32>
  %b = adir.tanh %h : tensor<4x6xf32>
  %c = adir.relu %h : tensor<4x6xf32>
  %ab = adir.add %a, %b : tensor<4x6xf32>
  %d = adir.gelu %ab {approximate = "tanh"} : tensor<4x6xf32>
  %e = adir.softplus %d {beta = 2.0 : f32} : tensor<4x6xf32>
  %f = adir.leaky_relu %c {alpha = 0.2 : f32} : tensor<4x6xf32>
  %g = adir.gelu %f : tensor<4x6xf32>
  %s = adir.softmax %e {axis = 0 : i64} : tensor<4x6xf32>
  %t = adir.log_softmax %g : tensor<4x6xf32>
  %st = adir.add %s, %t : tensor<4x6xf32>
  %p = adir.mul %st, %r : tensor<4x6xf32>
  %l = adir.sum %p : tensor<4x6xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}"""

    def reference(x: torch.Tensor, w: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        h = x @ w
        d = F.gelu(torch.sigmoid(h) + torch.tanh(h), approximate="tanh")
        e = F.softplus(d, beta=2.0)
        g = F.gelu(F.leaky_relu(torch.relu(h), f32(0.2)))
        return ((torch.softmax(e, 0) + torch.log_softmax(g, -1)) * r).sum()

    rng = np.random.default_rng(11)
    args = [rng.standard_normal((4, 5)), rng.standard_normal((5, 6)), rng.standard_normal((4, 6))]
    module = differentiate_ir(ir, "f", [0, 1])
    actual = adir_gradients(module, args)
    assert_gradients_close(actual, torch_gradients(reference, args, [0, 1]))
    for a, n in zip(actual[1:], finite_difference_gradients(module, args, [0, 1]), strict=True):
        np.testing.assert_allclose(a, n, rtol=1e-6, atol=1e-6 * max(np.max(np.abs(n)), 1.0))


# --- each gradient op in float32 against PyTorch's float32 backward kernel -----------------

# name -> (gradient op, properties, PyTorch forward, whether the op reads the output)
GRAD_OPS: dict[str, tuple[str, str, Callable[[torch.Tensor], torch.Tensor], bool]] = {
    "relu": ("relu_grad", "", torch.relu, True),
    "leaky_relu": (
        "leaky_relu_grad",
        "{alpha = 0.2 : f32}",
        ELEMENTWISE["leaky_relu_0.2"][1],
        False,
    ),
    "sigmoid": ("sigmoid_grad", "", torch.sigmoid, True),
    "tanh": ("tanh_grad", "", torch.tanh, True),
    "gelu": ("gelu_grad", "", F.gelu, False),
    "gelu_tanh": ("gelu_grad", '{approximate = "tanh"}', ELEMENTWISE["gelu_tanh"][1], False),
    "softplus": ("softplus_grad", "", F.softplus, False),
    "softplus_beta_2_threshold_5": (
        "softplus_grad",
        "{beta = 2.0 : f32, threshold = 5.0 : f32}",
        ELEMENTWISE["softplus_beta_2_threshold_5"][1],
        False,
    ),
    "relu6": ("clamp_grad", "{min = 0.0 : f32, max = 6.0 : f32}", F.relu6, True),
    "hardtanh": ("clamp_grad", "{min = -1.0 : f32, max = 1.0 : f32}", F.hardtanh, True),
    "clamp": (
        "clamp_grad",
        "{min = -1.0 : f32, max = 1.0 : f32, inclusive}",
        ELEMENTWISE["clamp"][1],
        False,
    ),
    "clamp_min": ("clamp_grad", "{min = 0.0 : f32, inclusive}", ELEMENTWISE["clamp_min"][1], False),
    "hardswish": ("hardswish_grad", "", F.hardswish, False),
    "hardsigmoid": ("hardsigmoid_grad", "", F.hardsigmoid, False),
}


def grad_op_ir(op: str, props: str, shape: tuple[int, ...]) -> str:
    t = tensor_type(shape)
    props = f" {props}" if props else ""
    return f"""
func.func @f(%saved: {t}, %dy: {t}) -> {t} {{
  %dx = adir.{op} %saved, %dy{props} : {t}
  func.return %dx : {t}
}}"""


# PyTorch's float32 gelu backward ("none"), at dy = 1, is within this many eps of the exact
# value of its formula (constants rounded to float32), measured exhaustively over every float32
# in [-30, 30] (2.1e9 values, PyTorch 2.13's AVX512 kernel): 2.6855 eps, at WORST_TORCH_GELU_X.
# Beyond +-30 both cdf and pdf are exactly 1 or 0 to float32 precision.
TORCH_GELU_ERROR = 2.69
WORST_TORCH_GELU_X = 0.043225884437561035


def gelu_tanh_error(x: np.ndarray, tanh_ulps: float) -> np.ndarray:
    """One side's error in the tanh-form gelu derivative `g` (before `dy *`), as the module
    docstring derives it, for a tanh within `tanh_ulps` ulp."""
    eps = float(np.finfo(np.float32).eps)
    beta, kappa = math.sqrt(2 / math.pi), 0.044715
    s = beta * (x + kappa * x**3)
    t = np.tanh(s)
    inner = beta * (1 + 3 * kappa * x * x)
    r = np.abs(0.5 * x * inner)
    g = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * inner
    t_error = 2.5 * eps * np.abs(s) * (1 - t * t) + tanh_ulps * eps * np.abs(t)
    roundings = 0.25 * (1 + t) + 0.5 * r + 3 * r * (1 - t * t) + 0.5 * np.abs(g)
    return np.abs(0.5 - x * t * inner) * t_error + eps * roundings


def float32_bound(
    name: str, x: np.ndarray, y: np.ndarray, dy: np.ndarray, dx: np.ndarray, axis: int = -1
) -> np.ndarray:
    """The largest |adir - torch| the module docstring's analysis allows, elementwise."""
    eps = float(np.finfo(np.float32).eps)
    tiny = float(np.finfo(np.float32).smallest_normal)
    x, y, dy, dx = (np.asarray(v, np.float64) for v in (x, y, dy, dx))
    abs_dy, abs_dx = np.abs(dy), np.abs(dx)
    underflow = tiny * abs_dy
    if name in ("relu", "leaky_relu", "relu6", "hardtanh", "clamp", "clamp_min"):
        return np.zeros_like(x)
    if name in ("hardswish", "hardsigmoid"):
        return np.zeros_like(x)
    if name == "sigmoid":
        return 3 * eps * abs_dx + underflow
    if name == "tanh":
        return 2 * eps * abs_dx + eps * abs_dy * (y * y / 2 + (1 - y * y))
    if name == "gelu":
        x_phi = np.abs(x) * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        ours = 0.875 + (3.5 + x * x / 4) * x_phi
        return 1.5 * eps * abs_dx + eps * abs_dy * (TORCH_GELU_ERROR + ours) + underflow
    if name == "gelu_tanh":
        both_sides = gelu_tanh_error(x, tanh_ulps=1.4) + gelu_tanh_error(x, tanh_ulps=0.9)
        return eps * abs_dx + abs_dy * both_sides
    if name.startswith("softplus"):
        return 6.4 * eps * abs_dx + underflow
    n = x.shape[axis]
    if name == "softmax":
        spread = n * eps * y * np.sum(np.abs(dy * y), axis=axis, keepdims=True)
        return 2 * eps * abs_dx + spread + underflow
    if name == "log_softmax":
        total = np.sum(dy, axis=axis, keepdims=True)
        spread = (n - 1) * eps * np.sum(abs_dy, axis=axis, keepdims=True)
        return eps * abs_dx + np.exp(y) * (spread + 4.4 * eps * np.abs(total)) + underflow
    raise KeyError(name)


def torch_float32_backward(
    forward: Callable[[torch.Tensor], torch.Tensor], x: np.ndarray, dy: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(y, dx) from PyTorch's float32 forward and autograd backward."""
    xt = torch.from_numpy(x).requires_grad_()
    y = forward(xt)
    (dx,) = torch.autograd.grad(y, xt, torch.from_numpy(dy))
    return y.detach().numpy(), dx.numpy()


def check_grad_op_float32(
    name: str,
    op: str,
    props: str,
    forward: Callable,
    reads_output: bool,
    x: np.ndarray,
    axis: int = -1,
) -> None:
    dy = np.random.default_rng(29).standard_normal(x.shape).astype(np.float32)
    y, expected = torch_float32_backward(forward, x, dy)
    saved = y if reads_output else x
    (actual,) = interpret(grad_op_ir(op, props, x.shape), "f", saved, dy)
    with np.errstate(invalid="ignore"):  # inf * 0 in the bound, where the results are nan
        bound = float32_bound(name, x, y, dy, expected, axis)
    assert_within(actual, expected, 0.0, bound)


@pytest.mark.parametrize("name", sorted(GRAD_OPS))
def test_elementwise_grad_op_float32_matches_torch(name: str) -> None:
    x = (np.random.default_rng(31).standard_normal((16, 64)) * 4).astype(np.float32)
    check_grad_op_float32(name, *GRAD_OPS[name], x)


SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3.0, -3.0, 6.0, -6.0]
LARGE = [100.0, -100.0, 1e4, -1e4, 88.0, -88.0, -90.0, 20.0, 25.0, 9.0, -9.0, 5.0, -5.0]
EXTREME = [1e-38, -1e-38, 3e38, -3e38]


@pytest.mark.parametrize("name", sorted(GRAD_OPS))
def test_elementwise_grad_op_float32_edge_values_match_torch(name: str) -> None:
    """nan where PyTorch has nan (a nan input; gelu at +-inf, `inf * 0`), the same infinities,
    and PyTorch's conventions at 0 and in the tails."""
    x = np.array(SPECIAL + LARGE + EXTREME, np.float32)
    check_grad_op_float32(name, *GRAD_OPS[name], x)


AXIS_FLOAT32_CASES = [((16, 50), 1), ((16, 50), 0), ((3, 4, 33), -2), ((40,), -1)]


@pytest.mark.parametrize("case", AXIS_FLOAT32_CASES, ids=str)
@pytest.mark.parametrize("name", sorted(AXIS_OPS))
def test_softmax_family_grad_op_float32_matches_torch(name: str, case: tuple) -> None:
    shape, axis = case
    x = (np.random.default_rng(37).standard_normal(shape) * 4).astype(np.float32)
    forward = lambda t: AXIS_OPS[name](t, axis)  # noqa: E731
    check_grad_op_float32(name, f"{name}_grad", f"{{axis = {axis} : i64}}", forward, True, x, axis)


@pytest.mark.parametrize("name", sorted(AXIS_OPS))
def test_softmax_family_grad_op_float32_edge_values_match_torch(name: str) -> None:
    """Rows saturated at 1 and 0, with -inf (probability 0), and the all-nan rows of +inf,
    nan or only -inf in the input."""
    x = np.array(
        [
            [1e4, -1e4, 0.0],
            [-1e4, 1e4, 1e4],
            [-np.inf, 0.0, 1.0],
            [np.inf, 0.0, 1.0],
            [np.nan, 0.0, 1.0],
            [-np.inf, -np.inf, -np.inf],
            [-0.0, 0.0, -0.0],
            [100.0, -100.0, 88.0],
        ],
        dtype=np.float32,
    )
    forward = lambda t: AXIS_OPS[name](t, -1)  # noqa: E731
    check_grad_op_float32(name, f"{name}_grad", "", forward, True, x)


def gelu_derivative_float32_constants(x: np.ndarray, approximate: str) -> np.ndarray:
    """The exact value (float64, 1 ulp) of PyTorch's float32 gelu-backward formula at dy = 1,
    with its constants rounded to float32 as its kernel rounds them."""
    c = np.float32
    x = x.astype(np.float64)
    if approximate == "none":
        alpha, pdf_scale = float(c(activations.M_SQRT1_2)), float(c(activations.GELU_PDF_SCALE))
        return 0.5 * (1 + activations.erf(x * alpha)) + x * pdf_scale * np.exp(-x * x / 2)
    beta, kappa = float(c(activations.GELU_TANH_BETA)), float(c(activations.GELU_TANH_KAPPA))
    three_kappa = float(c(3) * c(kappa))
    t = np.tanh(beta * (x + kappa * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * beta * (1 + three_kappa * x * x)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_torch_float32_gelu_backward_is_within_its_error_bound(approximate: str) -> None:
    """The premises of the gelu bounds, rechecked on a grid of [-30, 30] and around the worst
    point of the exhaustive measurement: PyTorch's side is within TORCH_GELU_ERROR eps ("none"),
    and within its derived one-sided bound with a 0.9-ulp tanh ("tanh")."""
    worst_bits = np.array([WORST_TORCH_GELU_X], np.float32).view(np.int32)
    around = (worst_bits + np.arange(-5000, 5000, dtype=np.int32)).view(np.float32)
    x = np.concatenate([np.linspace(-30, 30, 600_001, dtype=np.float32), around])
    ones = np.ones_like(x)
    _, dx = torch_float32_backward(lambda t: F.gelu(t, approximate=approximate), x, ones)
    error = np.abs(dx.astype(np.float64) - gelu_derivative_float32_constants(x, approximate))
    if approximate == "none":
        assert error.max() <= TORCH_GELU_ERROR * float(np.finfo(np.float32).eps)
    else:
        assert np.all(error <= gelu_tanh_error(x.astype(np.float64), tanh_ulps=0.9))


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_grad_from_saved_output_keeps_precision_near_saturation(name: str) -> None:
    """sigmoid_grad and tanh_grad lose nothing to cancellation where the output is close to 1
    (or -1): in float32, within 3 roundings (sigmoid) or 4 (tanh) of the exact value of the
    formula at the given y and dy. (PyTorch's `1 - y * y` is 8.6e-5 off at y = 0.9998274.)"""
    steps = np.arange(1, 20_000, 7)
    near_one = (1 - steps * 2.0**-24).astype(np.float32)
    y = np.concatenate([near_one, np.linspace(0, 1, 1001, dtype=np.float32)])
    if name == "tanh":
        y = np.concatenate([y, -y])
    dy = np.random.default_rng(41).standard_normal(y.shape).astype(np.float32)
    (actual,) = interpret(grad_op_ir(f"{name}_grad", "", y.shape), "f", y, dy)
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    exact = dy64 * (1 - y64) * y64 if name == "sigmoid" else dy64 * (1 - y64 * y64)
    # Each rounding multiplies by some (1 + d), |d| <= u; nothing is added, so no cancellation.
    u = float(np.finfo(np.float32).eps) / 2
    relative = (1 + u) ** (3 if name == "sigmoid" else 4) - 1
    assert np.all(np.abs(actual - exact) <= relative * np.abs(exact))


# --- the clamps at their kinks: PyTorch's conventions, exactly -------------------------------


# Each bound, the float64 next to it on both sides, nan and the infinities.
def around(*kinks: float) -> np.ndarray:
    k = np.array(kinks)
    return np.concatenate([k, np.nextafter(k, -np.inf), np.nextafter(k, np.inf)])


EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 100.0, -100.0])


@pytest.mark.parametrize("name", ["relu6", "hardtanh", "clamp", "clamp_min", "clamp_max"])
def test_clamp_gradient_at_the_bounds_is_torchs(name: str) -> None:
    """hardtanh and ReLU6 (hardtanh_backward): 0 at x == min and x == max; torch.clamp,
    clamp_min, clamp_max (clamp_backward): dy at the bounds; 0 at a nan in both. Equal to
    torch.autograd bit for bit in float64, and to the formula written out here. The nan comes
    first, where torch's hardtanh_backward takes its vectorised loop (0 at a nan; its scalar
    remainder, the last n mod 8 doubles on AVX-512, would pass dy: ClampGradOp)."""
    x = np.concatenate([EDGES, around(-1.0, 0.0, 1.0, 6.0)])
    ours, theirs, r = gradients_at(*ELEMENTWISE[name], x)
    np.testing.assert_array_equal(ours, theirs)
    low, high = {
        "relu6": (0.0, 6.0),
        "hardtanh": (-1.0, 1.0),
        "clamp": (-1.0, 1.0),
        "clamp_min": (0.0, np.inf),
        "clamp_max": (-np.inf, 0.0),
    }[name]
    with np.errstate(invalid="ignore"):
        if name in ("relu6", "hardtanh"):
            passes = (x > low) & (x < high)  # the open interval
        else:
            passes = (x >= low) & (x <= high)  # the closed one
    np.testing.assert_array_equal(ours, np.where(passes, r, 0.0))
    at_bounds = (x == low) | (x == high)
    assert at_bounds.sum() >= 1
    expected_at_bounds = 0.0 if name in ("relu6", "hardtanh") else r[at_bounds]
    np.testing.assert_array_equal(ours[at_bounds], expected_at_bounds)


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
def test_hard_activation_gradient_at_minus_3_and_3_is_torchs(name: str) -> None:
    """hardswish_backward: 0 at x = -3 and dy at x = 3 (the right-hand slopes), dy at a nan;
    hardsigmoid_backward: 0 at -3 and 3 and at a nan, dy * float(1/6) between. Bit for bit
    as torch.autograd in float64, but for hardswish at a nan: torch's float64 vectorised loop
    gives nan there, its scalar remainder and its float32 kernel (all of it, checked below)
    give dy, which adir follows."""
    x = np.concatenate([EDGES, around(-3.0, 0.0, 3.0)])
    nan = np.isnan(x)
    r = np.random.default_rng(7).standard_normal(x.shape)
    ir = wrapped_op_ir(ELEMENTWISE[name][0], [tensor_type(x.shape)], tensor_type(x.shape))
    ours = adir_gradients(differentiate_ir(ir, "f", [0]), [x, r])[1]
    reference = ELEMENTWISE[name][1]
    theirs = torch_gradients(lambda t, s: (reference(t) * s).sum(), [x, r], [0])[1]
    np.testing.assert_array_equal(ours[~nan], theirs[~nan])
    at_minus_3, at_3 = x == -3.0, x == 3.0
    np.testing.assert_array_equal(ours[at_minus_3], 0.0)
    if name == "hardswish":
        np.testing.assert_array_equal(ours[at_3 | nan], r[at_3 | nan])
        _, dx32 = torch_float32_backward(reference, x.astype(np.float32), r.astype(np.float32))
        np.testing.assert_array_equal(dx32[nan], r[nan].astype(np.float32))
    else:
        np.testing.assert_array_equal(ours[nan], theirs[nan])
        np.testing.assert_array_equal(ours[at_3 | nan], 0.0)
        inside = (x > -3) & (x < 3)
        np.testing.assert_array_equal(ours[inside], r[inside] * float(np.float32(1) / 6))


def test_relu6_vjp_saves_its_output_and_clamp_its_input() -> None:
    """The one value each clamp's gradient reads: hardtanh's convention reads the clamp's
    output (which the next layer keeps anyway), torch.clamp's its input; never two values."""
    text = """
func.func @f(%x: tensor<4xf32>) -> tensor<f32> attributes {adir.loss} {
  %a = adir.clamp %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
  %b = adir.clamp %a {min = 1.0 : f32, inclusive} : tensor<4xf32>
  %s = adir.sum %b : tensor<4xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}"""
    module = differentiate_ir(text, "f", [0])
    grad_function = next(
        f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data == "f_grad"
    )
    ops = list(grad_function.body.walk())
    clamps = {op.inclusive is not None: op for op in ops if isinstance(op, ClampOp)}
    grads = {op.inclusive is not None: op for op in ops if isinstance(op, ClampGradOp)}
    assert len(grads) == 2
    assert grads[False].saved is clamps[False].result
    assert grads[True].saved is clamps[True].input
