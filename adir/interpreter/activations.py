"""numpy semantics of the activations family (adir/dialects/tensor/activations.py).

Each function computes in the dtype of its input (float32, or float64 for precise checks) with
the formula of its PyTorch namesake, rearranged only where PyTorch's would overflow; the
functions' docstrings say where the results differ beyond rounding.
test/python/test_interpreter_activations.py derives the agreement with PyTorch, op by op.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import activations as act
from adir.interpreter.family import FamilyFunctions


def relu(x: np.ndarray) -> np.ndarray:
    """`x < 0 ? 0 : x`: nan and -0.0 pass through, as in torch.relu."""
    return np.where(x < 0, 0.0, x)


def leaky_relu(x: np.ndarray, alpha: float) -> np.ndarray:
    # torch: `x > 0 ? x : x * negative_slope`, so nan and -0.0 take the second branch.
    return np.where(x > 0, x, x * x.dtype.type(alpha))


def sigmoid(x: np.ndarray) -> np.ndarray:
    """`1 / (1 + exp(-x))` without overflow: exp only ever sees -|x|.

    For x < 0, `e / (1 + e)` keeps full relative precision down to the subnormals (at x = -100
    in float32 it gives 3.7e-44, where `1 / (1 + exp(100))` overflows to 1 / inf = 0).
    """
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function `2 / sqrt(pi) * integral_0^x exp(-t^2) dt`, in float64.

    numpy has no erf and scipy is not a dependency, so this maps `math.erf` (the C library's
    erf, within 1 ulp of torch.erf) over the elements: about 90 ns an element, 10x np.exp,
    which is fine for an oracle. A numpy-vectorised Maclaurin series plus continued fraction
    was tried: as slow (140 ns an element) and only within 3 ulp.
    """
    flat = np.asarray(x, dtype=np.float64).ravel()
    values = np.fromiter(map(math.erf, flat.tolist()), dtype=np.float64, count=flat.size)
    return values.reshape(np.shape(x))


SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
GELU_TANH_KAPPA = 0.044715


def gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    """torch.nn.functional.gelu with `approximate` "none" or "tanh".

    Exact: `x * 0.5 * (1 + erf(x / sqrt(2)))` with erf rounded to x's dtype. For x below about
    -3 the sum `1 + erf` cancels, as in PyTorch and in a C kernel using erff. Halving first
    keeps x up to the largest float finite, and gelu(+inf) = +inf, gelu(-inf) = nan
    (-inf * 0), as in PyTorch's float64 kernel; its float32 kernel gives inf above 1.7e38 and
    nan at +inf.
    """
    dtype = x.dtype.type
    if approximate == "tanh":
        inner = dtype(SQRT_2_OVER_PI) * (x + dtype(GELU_TANH_KAPPA) * (x * x * x))
        return dtype(0.5) * x * (1 + np.tanh(inner))
    e = erf(x * dtype(math.sqrt(0.5))).astype(x.dtype)
    return x * dtype(0.5) * (1 + e)


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """`exp(x - m) / sum(exp(x - m))`, `m` the max along the axis: every exp is at most 1.

    `initial=-inf` makes the max of an empty slice -inf instead of an error (the result is
    empty then anyway); it changes nothing else, and nan still propagates.
    """
    e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """`(x - m) - log(sum(exp(x - m)))`, `m` the max along the axis: the log's argument is in
    [1, n], so the result is finite for any finite input."""
    shifted = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def softplus(x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    """`log1p(exp(beta * x)) / beta`, linear above the threshold, as torch's kernel."""
    scaled = x * x.dtype.type(beta)
    return np.where(scaled > threshold, x, np.log1p(np.exp(scaled)) / x.dtype.type(beta))


def clamp(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """`t = x < low ? low : x; t > high ? high : t`: nan and -0.0 pass through (torch.clamp
    keeps both), and low > high gives high everywhere (torch.clamp's rule)."""
    dtype = x.dtype.type
    t = np.where(x < low, dtype(low), x)
    return np.where(t > high, dtype(high), t)


def hardswish(x: np.ndarray) -> np.ndarray:
    """torch's `x * min(max(x + 3, 0), 6) / 6`, the product first. The clamp is written as
    selects so that a nan stays nan (numpy's maximum would too, but says so with a warning)."""
    dtype = x.dtype.type
    return x * clamp(x + dtype(3), 0.0, 6.0) / dtype(6)


def hardsigmoid(x: np.ndarray) -> np.ndarray:
    """torch's `min(max(x + 3, 0), 6) / 6`."""
    dtype = x.dtype.type
    return clamp(x + dtype(3), 0.0, 6.0) / dtype(6)


# --- gradients: PyTorch's backward kernels (aten/src/ATen/native/cpu/Activation.cpp and
# BinaryOpsKernel.cpp, SoftMaxKernel.cpp), in the dtype of the operands --------------------


def relu_grad(y: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """torch's `threshold_backward(dy, y, 0)`: `y <= 0 ? 0 : dy`, a select, so an inf or nan
    in dy does not leak through the zeros, and a nan y passes dy."""
    return np.where(y <= 0, 0.0, dy)


def leaky_relu_grad(x: np.ndarray, dy: np.ndarray, alpha: float) -> np.ndarray:
    """torch's `leaky_relu_backward`: `x > 0 ? dy : dy * alpha`."""
    return np.where(x > 0, dy, dy * x.dtype.type(alpha))


def sigmoid_grad(y: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """`dy * (1 - y) * y` in torch's order. From the saved output this loses nothing: for y in
    [1/2, 1], `1 - y` is exact (Sterbenz), elsewhere it rounds once, so the result is within
    3 roundings of the exact value for the given y and dy. (The output itself carries the
    rounding of sigmoid: near y = 1 its last bits are all `1 - y` has.)"""
    return dy * (1 - y) * y


def tanh_grad(y: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """`dy * (1 - y^2)`, evaluated as `dy * ((1 - y) * (1 + y))`: a factor that is small is
    exact (Sterbenz), so the result is within 4 roundings (3 where |y| >= 1/2) of the exact
    value for the given y and dy. torch forms `1 - y * y`, where the rounding of `y * y` (up
    to eps/2) cancels near |y| = 1: in float32 at y = 1 - 2896 * 2^-24 (= 0.9998274) its
    relative error is 8.6e-5, where this form's is below eps."""
    one = y.dtype.type(1)
    return dy * ((one - y) * (one + y))


# torch's constants, from the C library's M_ literals, formed in double as its kernels do.
M_SQRT2 = 1.41421356237309504880
M_SQRT1_2 = 0.70710678118654752440
M_2_SQRTPI = 1.12837916709551257390
GELU_PDF_SCALE = M_2_SQRTPI * M_SQRT1_2 * 0.5  # 1 / sqrt(2 pi)
GELU_TANH_BETA = M_SQRT2 * M_2_SQRTPI * 0.5  # sqrt(2 / pi)


def gelu_grad(x: np.ndarray, dy: np.ndarray, approximate: str) -> np.ndarray:
    """torch's `gelu_backward` (GeluBackwardKernelImpl), operation for operation, constants
    rounded to x's dtype:

    - "none": `dy * (cdf + x * pdf)`, `cdf = 0.5 * (1 + erf(x / sqrt 2))`,
      `pdf = exp(-x^2 / 2) / sqrt(2 pi)`; `1 + erf` cancels for x below about -3, as in torch,
      and at +-inf `x * pdf` is `inf * 0 = nan`, as in torch;
    - "tanh": `dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * beta * (1 + 3 * kappa * x^2))`,
      `t = tanh(beta * (x + kappa * x^3))`, `beta = sqrt(2 / pi)`, `kappa = 0.044715`.
    """
    dtype = x.dtype.type
    half, one = dtype(0.5), dtype(1)
    if approximate == "tanh":
        beta, kappa = dtype(GELU_TANH_BETA), dtype(GELU_TANH_KAPPA)
        x_sq = x * x
        t = np.tanh(beta * (x + kappa * (x_sq * x)))
        left_derivative = half * (one + t)
        inner_derivative = beta * (one + dtype(3) * kappa * x_sq)
        right_derivative = half * x * (one - t * t) * inner_derivative
        return dy * (left_derivative + right_derivative)
    cdf = half * (one + erf(x * dtype(M_SQRT1_2)).astype(x.dtype))
    pdf = dtype(GELU_PDF_SCALE) * np.exp(x * x * dtype(-0.5))
    return dy * (cdf + x * pdf)


def softplus_grad(x: np.ndarray, dy: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    """torch's `softplus_backward`: `dy` where `beta * x > threshold`, else `dy * sigmoid(beta
    * x)`. torch writes the sigmoid `z / (z + 1)` with `z = exp(beta * x)`, which is inf / inf
    = nan once z overflows (beta * x > 88.7 in float32, possible only with threshold > 88.7);
    the overflow-free `sigmoid` gives 1 there and agrees within rounding elsewhere."""
    scaled = x * x.dtype.type(beta)
    return np.where(scaled > threshold, dy, dy * sigmoid(scaled))


def clamp_grad(
    saved: np.ndarray, dy: np.ndarray, low: float, high: float, inclusive: bool
) -> np.ndarray:
    """`dy` inside the bounds, 0 outside and at a nan: torch.clamp's backward on the closed
    interval (`inclusive`), hardtanh_backward's vectorised loop on the open one. `saved` is the
    clamp's input, or without `inclusive` equally its output (ClampGradOp says why)."""
    if inclusive:
        inside = (saved >= low) & (saved <= high)
    else:
        inside = (saved > low) & (saved < high)
    return np.where(inside, dy, dy.dtype.type(0))


def hardswish_grad(x: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """torch's `hardswish_backward`: `x <= -3 ? 0 : x < 3 ? dy * (x / 3 + 0.5) : dy`."""
    dtype = x.dtype.type
    slope = x / dtype(3) + dtype(0.5)
    return np.where(x <= -3, dtype(0), np.where(x < 3, dy * slope, dy))


# torch's hardsigmoid_backward multiplies by the float constant 1.0f / 6.0f in every dtype.
HARDSIGMOID_SLOPE = float(np.float32(1.0) / np.float32(6.0))


def hardsigmoid_grad(x: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """torch's `hardsigmoid_backward`: `-3 < x < 3 ? dy * (1.0f / 6.0f) : 0`."""
    dtype = x.dtype.type
    return np.where((x > -3) & (x < 3), dy * dtype(HARDSIGMOID_SLOPE), dtype(0))


def softmax_grad(y: np.ndarray, dy: np.ndarray, axis: int) -> np.ndarray:
    """torch's `_softmax_backward_data`: `y * (dy - sum(dy * y))` along the axis."""
    return y * (dy - np.sum(dy * y, axis=axis, keepdims=True))


def log_softmax_grad(y: np.ndarray, dy: np.ndarray, axis: int) -> np.ndarray:
    """torch's `_log_softmax_backward_data`: `dy - exp(y) * sum(dy)` along the axis."""
    return dy - np.exp(y) * np.sum(dy, axis=axis, keepdims=True)


def pack_mask(bits: np.ndarray) -> np.ndarray:
    """Booleans as `adir.relu_mask` packs them: bit i % 32 of i32 word i // 32 (least
    significant first), row-major, the unused bits of the last word 0."""
    flat = bits.reshape(-1)
    padded = np.zeros(act.mask_words(flat.size) * act.MASK_BITS, dtype=np.uint8)
    padded[: flat.size] = flat
    return np.packbits(padded, bitorder="little").view("<u4").astype(np.uint32).view(np.int32)


def unpack_mask(words: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The booleans of a packed mask, in `shape`."""
    as_bytes = words.astype(np.int32).view(np.uint32).astype("<u4").view(np.uint8)
    bits = np.unpackbits(as_bytes, bitorder="little")
    return bits[: math.prod(shape)].reshape(shape).astype(bool)


def relu_mask(y: np.ndarray) -> np.ndarray:
    """Where `relu_grad` passes the gradient: `!(y <= 0)`."""
    return pack_mask(~(y <= 0))


def clamp_mask(saved: np.ndarray, low: float, high: float, inclusive: bool) -> np.ndarray:
    """Where `clamp_grad` with these bounds passes the gradient."""
    if inclusive:
        return pack_mask((saved >= low) & (saved <= high))
    return pack_mask((saved > low) & (saved < high))


def mask_grad(mask: np.ndarray, dy: np.ndarray) -> np.ndarray:
    return np.where(unpack_mask(mask, dy.shape), dy, dy.dtype.type(0))


@register_impls
class ActivationsFunctions(FamilyFunctions):
    @impl(act.ReluOp)
    def run_relu(self, interpreter: Interpreter, op: act.ReluOp, args: tuple[Any, ...]):
        return (relu(args[0]),)

    @impl(act.LeakyReluOp)
    def run_leaky_relu(self, interpreter: Interpreter, op: act.LeakyReluOp, args: tuple[Any, ...]):
        return (leaky_relu(args[0], op.alpha.value.data),)

    @impl(act.SigmoidOp)
    def run_sigmoid(self, interpreter: Interpreter, op: act.SigmoidOp, args: tuple[Any, ...]):
        return (sigmoid(args[0]),)

    @impl(act.TanhOp)
    def run_tanh(self, interpreter: Interpreter, op: act.TanhOp, args: tuple[Any, ...]):
        return (tanh(args[0]),)

    @impl(act.SoftplusOp)
    def run_softplus(self, interpreter: Interpreter, op: act.SoftplusOp, args: tuple[Any, ...]):
        return (softplus(args[0], op.beta.value.data, op.threshold.value.data),)

    @impl(act.GeluOp)
    def run_gelu(self, interpreter: Interpreter, op: act.GeluOp, args: tuple[Any, ...]):
        return (gelu(args[0], op.approximate.data),)

    @impl(act.SoftmaxOp)
    def run_softmax(self, interpreter: Interpreter, op: act.SoftmaxOp, args: tuple[Any, ...]):
        (x,) = args
        return (softmax(x, op.normalized_axis(x.ndim)),)

    @impl(act.LogSoftmaxOp)
    def run_log_softmax(
        self, interpreter: Interpreter, op: act.LogSoftmaxOp, args: tuple[Any, ...]
    ):
        (x,) = args
        return (log_softmax(x, op.normalized_axis(x.ndim)),)

    @impl(act.ReluGradOp)
    def run_relu_grad(self, interpreter: Interpreter, op: act.ReluGradOp, args: tuple[Any, ...]):
        return (relu_grad(*args),)

    @impl(act.LeakyReluGradOp)
    def run_leaky_relu_grad(
        self, interpreter: Interpreter, op: act.LeakyReluGradOp, args: tuple[Any, ...]
    ):
        return (leaky_relu_grad(*args, op.alpha.value.data),)

    @impl(act.SigmoidGradOp)
    def run_sigmoid_grad(
        self, interpreter: Interpreter, op: act.SigmoidGradOp, args: tuple[Any, ...]
    ):
        return (sigmoid_grad(*args),)

    @impl(act.TanhGradOp)
    def run_tanh_grad(self, interpreter: Interpreter, op: act.TanhGradOp, args: tuple[Any, ...]):
        return (tanh_grad(*args),)

    @impl(act.SoftplusGradOp)
    def run_softplus_grad(
        self, interpreter: Interpreter, op: act.SoftplusGradOp, args: tuple[Any, ...]
    ):
        return (softplus_grad(*args, op.beta.value.data, op.threshold.value.data),)

    @impl(act.GeluGradOp)
    def run_gelu_grad(self, interpreter: Interpreter, op: act.GeluGradOp, args: tuple[Any, ...]):
        return (gelu_grad(*args, op.approximate.data),)

    @impl(act.ClampOp)
    def run_clamp(self, interpreter: Interpreter, op: act.ClampOp, args: tuple[Any, ...]):
        return (clamp(args[0], *op.bounds()),)

    @impl(act.HardswishOp)
    def run_hardswish(self, interpreter: Interpreter, op: act.HardswishOp, args: tuple[Any, ...]):
        return (hardswish(args[0]),)

    @impl(act.HardsigmoidOp)
    def run_hardsigmoid(
        self, interpreter: Interpreter, op: act.HardsigmoidOp, args: tuple[Any, ...]
    ):
        return (hardsigmoid(args[0]),)

    @impl(act.ReluMaskOp)
    def run_relu_mask(self, interpreter: Interpreter, op: act.ReluMaskOp, args: tuple[Any, ...]):
        return (relu_mask(args[0]),)

    @impl(act.ClampMaskOp)
    def run_clamp_mask(self, interpreter: Interpreter, op: act.ClampMaskOp, args: tuple[Any, ...]):
        return (clamp_mask(args[0], *op.bounds(), op.inclusive is not None),)

    @impl(act.MaskGradOp)
    def run_mask_grad(self, interpreter: Interpreter, op: act.MaskGradOp, args: tuple[Any, ...]):
        return (mask_grad(*args),)

    @impl(act.ClampGradOp)
    def run_clamp_grad(self, interpreter: Interpreter, op: act.ClampGradOp, args: tuple[Any, ...]):
        return (clamp_grad(*args, *op.bounds(), op.inclusive is not None),)

    @impl(act.HardswishGradOp)
    def run_hardswish_grad(
        self, interpreter: Interpreter, op: act.HardswishGradOp, args: tuple[Any, ...]
    ):
        return (hardswish_grad(*args),)

    @impl(act.HardsigmoidGradOp)
    def run_hardsigmoid_grad(
        self, interpreter: Interpreter, op: act.HardsigmoidGradOp, args: tuple[Any, ...]
    ):
        return (hardsigmoid_grad(*args),)

    @impl(act.SoftmaxGradOp)
    def run_softmax_grad(
        self, interpreter: Interpreter, op: act.SoftmaxGradOp, args: tuple[Any, ...]
    ):
        y, dy = args
        return (softmax_grad(y, dy, op.normalized_axis(y.ndim)),)

    @impl(act.LogSoftmaxGradOp)
    def run_log_softmax_grad(
        self, interpreter: Interpreter, op: act.LogSoftmaxGradOp, args: tuple[Any, ...]
    ):
        y, dy = args
        return (log_softmax_grad(y, dy, op.normalized_axis(y.ndim)),)
