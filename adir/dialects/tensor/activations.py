"""Activations: elementwise nonlinearities, and softmax / log_softmax along one axis.

    %0 = adir.relu %x : tensor<2x3xf32>
    %1 = adir.leaky_relu %x {alpha = 2.000000e-01 : f32} : tensor<2x3xf32>
    %2 = adir.gelu %x {approximate = "tanh"} : tensor<2x3xf32>
    %3 = adir.softmax %x {axis = 0 : i64} : tensor<2x3xf32>
    %4 = adir.clamp %x {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x3xf32>

Every op has the semantics of its `torch.nn.functional` namesake with the same parameters, and
its result has the operand's type. A property equal to its default (the PyTorch default) is left
out of the printed form. relu, leaky_relu, sigmoid, tanh, gelu, clamp, hardswish and hardsigmoid
are `UnaryElementwiseOp`s, so
a pass that handles elementwise ops uniformly sees them; softmax and log_softmax are not, since
each of their outputs depends on a whole slice of the input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.elementwise import UnaryElementwiseOp
from adir.dialects.tensor.shapes import (
    FloatTensor,
    format_shape,
    is_compatible,
    normalize_axis,
    refine,
    shape_of,
)
from adir.dialects.tensor.traits import (
    ElementwiseMappable,
    Int8Lookup,
    NotDifferentiable,
    Recomputable,
    WritesResultOver,
)


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    """`y = max(x, 0)`; like `torch.relu`, nan stays nan and -0.0 stays -0.0 (`x < 0 ? 0 : x`)."""

    name = "adir.relu"
    traits = traits_def(Int8Lookup(lambda x: np.maximum(x, 0.0)))


@irdl_op_definition
class LeakyReluOp(UnaryElementwiseOp):
    """`y = x > 0 ? x : alpha * x` (`torch.nn.functional.leaky_relu` with
    `negative_slope = alpha`, default 0.01)."""

    name = "adir.leaky_relu"
    alpha = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(0.01, f32))

    def __init__(self, input: SSAValue, alpha: float = 0.01):
        super().__init__(input, {"alpha": FloatAttr(alpha, f32)})


@irdl_op_definition
class SigmoidOp(UnaryElementwiseOp):
    """`y = 1 / (1 + exp(-x))`, computed without overflow as `1 / (1 + e)` for x >= 0 and
    `e / (1 + e)` for x < 0, where `e = exp(-|x|)` is in (0, 1]."""

    name = "adir.sigmoid"
    # int8: TFLite's fixed output quantization of its LOGISTIC, [0, 1) in steps of 1/256.
    traits = traits_def(Int8Lookup(lambda x: 1.0 / (1.0 + np.exp(-x)), output=(1.0 / 256, -128)))


@irdl_op_definition
class TanhOp(UnaryElementwiseOp):
    """`y = tanh(x) = (exp(x) - exp(-x)) / (exp(x) + exp(-x))`."""

    name = "adir.tanh"
    # int8: TFLite's fixed output quantization of its TANH, [-1, 1) in steps of 1/128.
    traits = traits_def(Int8Lookup(np.tanh, output=(1.0 / 128, 0)))


@irdl_op_definition
class SoftplusOp(UnaryElementwiseOp):
    """`y = log(1 + exp(beta * x)) / beta`, and `y = x` where `beta * x > threshold`
    (`torch.nn.functional.softplus`, defaults beta = 1, threshold = 20)."""

    name = "adir.softplus"
    beta = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(1.0, f32))
    threshold = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(20.0, f32))

    def __init__(self, input: SSAValue, beta: float = 1.0, threshold: float = 20.0):
        properties = {"beta": FloatAttr(beta, f32), "threshold": FloatAttr(threshold, f32)}
        super().__init__(input, properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        if not self.beta.value.data > 0:
            raise VerifyException(f"{self.name}: beta must be positive, got {self.beta.value.data}")
        return super().infer_result_types()


class ClampBoundsMixin:
    """The bounds of a clamp and of its gradient: f32 `min` and `max`, each left out when it is
    infinite (-inf and +inf: no bound on that side), and `inclusive`, which says which of
    PyTorch's two backward conventions the op follows at the bounds (see `ClampGradOp`).
    A nan bound is refused: PyTorch's clamp turns every element into nan then, which no
    model wants; infinite bounds and min > max are legal, as in torch.clamp."""

    def bounds(self) -> tuple[float, float]:
        return self.min.value.data, self.max.value.data  # type: ignore[attr-defined]

    def check_bounds(self) -> None:
        for side, value in zip(("min", "max"), self.bounds(), strict=True):
            if math.isnan(value):
                raise VerifyException(f"{self.name}: {side} is nan")  # type: ignore[attr-defined]


def clamp_properties(low: float, high: float, inclusive: bool) -> dict[str, Attribute]:
    properties: dict[str, Attribute] = {"min": FloatAttr(low, f32), "max": FloatAttr(high, f32)}
    if inclusive:
        properties["inclusive"] = UnitAttr()
    return properties


@irdl_op_definition
class ClampOp(ClampBoundsMixin, UnaryElementwiseOp):
    """`y = min(max(x, min), max)`, as `t = x < min ? min : x; y = t > max ? max : t`: nan stays
    nan and -0.0 stays -0.0 (as torch.clamp and hardtanh), and min > max gives max everywhere
    (as torch.clamp). One op for `torch.clamp` / `clamp_min` / `clamp_max` with number bounds,
    `hardtanh` and ReLU6 (`{min = 0.0 : f32, max = 6.0 : f32}`); `inclusive` chooses the
    gradient at the bounds: without it hardtanh's (0 at x == min and x == max), with it
    torch.clamp's (dy there); see `ClampGradOp`. The forward computation is the same."""

    name = "adir.clamp"
    min = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(-math.inf, f32))
    max = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(math.inf, f32))
    inclusive = opt_prop_def(UnitAttr)
    # int8: a table of the clamp with this op's bounds, to the calibrated output range.
    traits = traits_def(
        Int8Lookup(
            lambda x, op: np.minimum(np.maximum(x, op.min.value.data), op.max.value.data),
            of_op=True,
        )
    )

    def __init__(
        self,
        input: SSAValue,
        min: float = -math.inf,
        max: float = math.inf,
        inclusive: bool = False,
    ):
        super().__init__(input, clamp_properties(min, max, inclusive))

    def infer_result_types(self) -> Sequence[Attribute]:
        self.check_bounds()
        return super().infer_result_types()


@irdl_op_definition
class HardswishOp(UnaryElementwiseOp):
    """`y = x * min(max(x + 3, 0), 6) / 6` (`torch.nn.functional.hardswish`, Howard et al.,
    "Searching for MobileNetV3", 2019), in PyTorch's order of operations: the product, then the
    division."""

    name = "adir.hardswish"
    traits = traits_def(Int8Lookup(lambda x: x * np.minimum(np.maximum(x + 3.0, 0.0), 6.0) / 6.0))


@irdl_op_definition
class HardsigmoidOp(UnaryElementwiseOp):
    """`y = min(max(x + 3, 0), 6) / 6` (`torch.nn.functional.hardsigmoid`): 0 up to x = -3, 1
    from x = 3, linear between."""

    name = "adir.hardsigmoid"
    traits = traits_def(Int8Lookup(lambda x: np.minimum(np.maximum(x + 3.0, 0.0), 6.0) / 6.0))


GELU_APPROXIMATIONS = ("none", "tanh")


@irdl_op_definition
class GeluOp(UnaryElementwiseOp):
    """Gaussian error linear unit (Hendrycks & Gimpel, 2016), as `torch.nn.functional.gelu`:

    - `approximate = "none"` (the default): `y = x * 0.5 * (1 + erf(x / sqrt(2)))`, i.e.
      `x * Phi(x)` with Phi the standard normal CDF;
    - `approximate = "tanh"`: `y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.
    """

    name = "adir.gelu"
    approximate = prop_def(StringAttr, default_value=StringAttr("none"))

    APPROXIMATIONS: ClassVar[tuple[str, ...]] = GELU_APPROXIMATIONS

    def __init__(self, input: SSAValue, approximate: str = "none"):
        super().__init__(input, {"approximate": StringAttr(approximate)})

    def infer_result_types(self) -> Sequence[Attribute]:
        if self.approximate.data not in self.APPROXIMATIONS:
            raise VerifyException(
                f"{self.name}: unknown approximation '{self.approximate.data}', expected "
                + " or ".join(self.APPROXIMATIONS)
            )
        return super().infer_result_types()


class AxisActivationOp(TensorOp):
    """A normalisation along `axis` (default -1, the last; negative counts from the end); the
    result has the operand's type. Not elementwise: each output depends on a whole slice.

    The axis must exist, so the operand has rank >= 1 (PyTorch also accepts a rank-0 tensor,
    whose softmax is 1 and log_softmax 0; adir asks for a `tensor<1xf32>` instead).
    """

    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))
    traits = traits_def(Pure(), Recomputable())

    def __init__(self, input: SSAValue, axis: int = -1):
        super().__init__([input], {"axis": IntegerAttr(axis, i64)})

    def normalized_axis(self, rank: int) -> int:
        """The axis in 0..rank-1 (a `VerifyException` if out of range)."""
        return normalize_axis(self.name, self.axis.value.data, rank)

    def infer_result_types(self) -> Sequence[Attribute]:
        if (shape := self.operand_shape(0)) is not None:
            self.normalized_axis(len(shape))
        return [self.input.type]


@irdl_op_definition
class SoftmaxOp(AxisActivationOp):
    """`y_i = exp(x_i - m) / sum_j exp(x_j - m)` along `axis`, with `m = max_j x_j` so that no
    exp overflows (`torch.softmax`). Any nan or +inf in a slice makes the whole slice nan, as in
    PyTorch."""

    name = "adir.softmax"


@irdl_op_definition
class LogSoftmaxOp(AxisActivationOp):
    """`y_i = (x_i - m) - log(sum_j exp(x_j - m))` along `axis`, `m = max_j x_j`
    (`torch.log_softmax`): finite for any finite input, where `log(softmax(x))` would give
    -inf once a softmax entry underflows."""

    name = "adir.log_softmax"


# --- gradient ops: `dx` from the adjoint `dy` of the result and a value the forward op saved ---


class ActivationGradOp(TensorOp):
    """`dx = f'(saved) * dy` for an activation f: the operands are a value the forward op
    saved (its input or its output, as each op says) and the adjoint `grad` of its result;
    both have one shape, which the result has too. Each op computes PyTorch's backward kernel
    for its forward op, so the autodiff rules need no composition of primitive ops."""

    traits = traits_def(Pure(), NotDifferentiable("a gradient op: autodiff emits it"))

    def __init__(
        self, saved: SSAValue, grad: SSAValue, properties: dict[str, Attribute] | None = None
    ):
        super().__init__([saved, grad], properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        saved, grad = self.operands
        if not is_compatible(saved.type, grad.type):
            saved_name = self.get_irdl_definition().operands[0][0]
            raise VerifyException(
                f"{self.name}: operands {saved_name} ({format_shape(self.operand_shape(0))}) "
                f"and grad ({format_shape(self.operand_shape(1))}) must have the same shape"
            )
        return [refine(saved.type, grad.type)]


class InputGradOp(ActivationGradOp):
    """A gradient op that reads the forward op's input."""

    input = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    result = result_def(FloatTensor)


class OutputGradOp(ActivationGradOp):
    """A gradient op that reads the forward op's output, which the derivative is cheapest in."""

    output = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    result = result_def(FloatTensor)


@irdl_op_definition
class ReluGradOp(OutputGradOp):
    """`dx = output <= 0 ? 0 : grad`, with `output = relu(x)`: PyTorch's derivative of relu,
    `threshold_backward(grad, result, 0)`.

    The derivative at x = 0 is 0, and a nan input passes `grad` through (relu(nan) = nan, and
    `nan <= 0` is false). Giving relu's input instead gives the same result everywhere, since
    relu(x) <= 0 exactly where x <= 0; the output is what PyTorch saves, and it lets the input
    die after the forward pass.
    """

    name = "adir.relu_grad"
    traits = traits_def(ElementwiseMappable())


@irdl_op_definition
class LeakyReluGradOp(InputGradOp):
    """`dx = input > 0 ? grad : alpha * grad`: PyTorch's `leaky_relu_backward(grad, self,
    negative_slope)`; the slope at 0 (and at nan) is alpha. Default alpha 0.01, as
    `adir.leaky_relu`."""

    name = "adir.leaky_relu_grad"
    traits = traits_def(ElementwiseMappable())
    alpha = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(0.01, f32))

    def __init__(self, input: SSAValue, grad: SSAValue, alpha: float = 0.01):
        super().__init__(input, grad, {"alpha": FloatAttr(alpha, f32)})


@irdl_op_definition
class SigmoidGradOp(OutputGradOp):
    """`dx = grad * (1 - output) * output`, with `output = sigmoid(x)`: PyTorch's
    `sigmoid_backward(grad, result)`."""

    name = "adir.sigmoid_grad"
    traits = traits_def(ElementwiseMappable())


@irdl_op_definition
class TanhGradOp(OutputGradOp):
    """`dx = grad * (1 - output^2)`, with `output = tanh(x)`: PyTorch's
    `tanh_backward(grad, result)`. Evaluated as `(1 - output) * (1 + output)`, which keeps
    full precision near |output| = 1, where PyTorch's `1 - output * output` cancels."""

    name = "adir.tanh_grad"
    traits = traits_def(ElementwiseMappable())


@irdl_op_definition
class SoftplusGradOp(InputGradOp):
    """`dx = grad * sigmoid(beta * input)`, and `dx = grad` where `beta * input > threshold`
    (the linear part of `adir.softplus`): PyTorch's `softplus_backward(grad, self, beta,
    threshold)`, which writes `sigmoid(z)` as `exp(z) / (exp(z) + 1)` (nan once exp(z)
    overflows, possible only with a threshold above 88.7; an overflow-free sigmoid gives 1).
    Defaults beta = 1, threshold = 20, as `adir.softplus`; beta must be positive."""

    name = "adir.softplus_grad"
    traits = traits_def(ElementwiseMappable())
    beta = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(1.0, f32))
    threshold = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(20.0, f32))

    def __init__(self, input: SSAValue, grad: SSAValue, beta: float = 1.0, threshold: float = 20.0):
        properties = {"beta": FloatAttr(beta, f32), "threshold": FloatAttr(threshold, f32)}
        super().__init__(input, grad, properties)

    def infer_result_types(self) -> Sequence[Attribute]:
        if not self.beta.value.data > 0:
            raise VerifyException(f"{self.name}: beta must be positive, got {self.beta.value.data}")
        return super().infer_result_types()


@irdl_op_definition
class GeluGradOp(InputGradOp):
    """The derivative of `adir.gelu` times `grad`, as PyTorch's `gelu_backward(grad, self,
    approximate)` computes it:

    - `approximate = "none"` (the default): `dx = grad * (Phi(x) + x * phi(x))` with
      `Phi(x) = 0.5 * (1 + erf(x / sqrt(2)))` and `phi(x) = exp(-x^2 / 2) / sqrt(2 pi)`;
    - `approximate = "tanh"`: with `k = sqrt(2 / pi)`, `u = k * (x + 0.044715 * x^3)` and
      `t = tanh(u)`, `dx = grad * (0.5 * (1 + t) + 0.5 * x * (1 - t^2) * k * (1 + 3 * 0.044715
      * x^2))`.
    """

    name = "adir.gelu_grad"
    traits = traits_def(ElementwiseMappable())
    approximate = prop_def(StringAttr, default_value=StringAttr("none"))

    APPROXIMATIONS: ClassVar[tuple[str, ...]] = GELU_APPROXIMATIONS

    def __init__(self, input: SSAValue, grad: SSAValue, approximate: str = "none"):
        super().__init__(input, grad, {"approximate": StringAttr(approximate)})

    def infer_result_types(self) -> Sequence[Attribute]:
        if self.approximate.data not in self.APPROXIMATIONS:
            raise VerifyException(
                f"{self.name}: unknown approximation '{self.approximate.data}', expected "
                + " or ".join(self.APPROXIMATIONS)
            )
        return super().infer_result_types()


@irdl_op_definition
class ClampGradOp(ClampBoundsMixin, ActivationGradOp):
    """The gradient of `adir.clamp` with the same bounds: `grad` where `saved` is inside them,
    0 elsewhere, in PyTorch's two conventions at the bounds themselves:

    - without `inclusive`, hardtanh's (`hardtanh_backward`, so nn.Hardtanh and nn.ReLU6): the
      open interval, `dx = (min < saved && saved < max) ? grad : 0`, 0 at x == min and x == max;
    - with `inclusive`, torch.clamp's (`clamp_backward`, and clamp_min / clamp_max): the closed
      interval, `dx = (min <= saved && saved <= max) ? grad : 0`, `grad` at the bounds.

    A nan gets 0 in both. (PyTorch 2.13's CPU hardtanh_backward gives 0 at a nan in its
    vectorised loop and `grad` in its scalar remainder, the last n mod 16 floats on AVX-512;
    adir takes the vectorised loop's answer, the one nearly every element gets.)

    `saved` is the clamp's input; without `inclusive` its output gives the same result (the
    output is at or beyond a bound exactly where the input is, nan where it is nan, and min >
    max puts both outside everywhere), which is what autodiff gives it, as PyTorch does for an
    in-place hardtanh_. A missing bound is an infinite one."""

    name = "adir.clamp_grad"
    saved = operand_def(FloatTensor)
    grad = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    min = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(-math.inf, f32))
    max = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(math.inf, f32))
    inclusive = opt_prop_def(UnitAttr)
    traits = traits_def(ElementwiseMappable())

    def __init__(
        self,
        saved: SSAValue,
        grad: SSAValue,
        min: float = -math.inf,
        max: float = math.inf,
        inclusive: bool = False,
    ):
        super().__init__(saved, grad, clamp_properties(min, max, inclusive))

    def infer_result_types(self) -> Sequence[Attribute]:
        self.check_bounds()
        return super().infer_result_types()


@irdl_op_definition
class HardswishGradOp(InputGradOp):
    """PyTorch's `hardswish_backward(grad, self)`: `dx = input <= -3 ? 0 : input < 3 ? grad *
    (input / 3 + 0.5) : grad`, so 0 at x = -3 and `grad` at x = 3 (the right-hand slopes), and
    a nan input passes `grad`."""

    name = "adir.hardswish_grad"
    traits = traits_def(ElementwiseMappable())


@irdl_op_definition
class HardsigmoidGradOp(InputGradOp):
    """PyTorch's `hardsigmoid_backward(grad, self)`: `dx = (-3 < input && input < 3) ? grad *
    (1 / 6) : 0`, so 0 at x = -3 and x = 3 and at a nan. PyTorch's 1/6 is a float constant,
    `1.0f / 6.0f`, in float64 too; so is adir's."""

    name = "adir.hardsigmoid_grad"
    traits = traits_def(ElementwiseMappable())


class AxisGradOp(OutputGradOp):
    """The gradient of a normalisation along `axis` (default -1; negative counts from the
    end), from its output: each entry depends on the whole slice of `grad` along the axis."""

    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))

    def __init__(self, output: SSAValue, grad: SSAValue, axis: int = -1):
        super().__init__(output, grad, {"axis": IntegerAttr(axis, i64)})

    def normalized_axis(self, rank: int) -> int:
        """The axis in 0..rank-1 (a `VerifyException` if out of range)."""
        return normalize_axis(self.name, self.axis.value.data, rank)

    def infer_result_types(self) -> Sequence[Attribute]:
        (result,) = super().infer_result_types()
        if (shape := shape_of(result)) is not None:
            self.normalized_axis(len(shape))
        return [result]


@irdl_op_definition
class SoftmaxGradOp(AxisGradOp):
    """`dx = output * (grad - sum(grad * output, axis, keepdims))`, with `output =
    softmax(x, axis)`: PyTorch's `_softmax_backward_data(grad, output, dim)`."""

    name = "adir.softmax_grad"


@irdl_op_definition
class LogSoftmaxGradOp(AxisGradOp):
    """`dx = grad - exp(output) * sum(grad, axis, keepdims)`, with `output =
    log_softmax(x, axis)`: PyTorch's `_log_softmax_backward_data(grad, output, dim)`."""

    name = "adir.log_softmax_grad"


# --- 1-bit masks: what a relu or clamp keeps for its backward pass ---------------------------

MASK_BITS = 32  # bits per word of a packed mask


def mask_words(count: int) -> int:
    """The i32 words of a mask of `count` bits."""
    return -(-count // MASK_BITS)


class MaskOp(TensorOp):
    """A packed bit mask of an f32 tensor: bit `i % 32` (least significant first) of word
    `i // 32` is the predicate of element `i` (row-major), the unused bits of the last word are
    0. The result is `tensor<ceil(n / 32) x i32>`: 1 bit per element instead of 32, which is
    all a relu or clamp's backward pass needs of its saved value (`adir.mask_grad`). Autodiff
    keeps a mask where nothing else in the backward pass reads that value."""

    saved = operand_def(FloatTensor)
    result = result_def(TensorType[IntegerType])
    traits = traits_def(Pure(), NotDifferentiable("a gradient op: autodiff emits it"))

    def infer_result_types(self) -> Sequence[Attribute]:
        shape = self.operand_shape(0)
        if shape is None or None in shape:
            raise VerifyException(f"{self.name}: operand saved needs a static shape")
        return [TensorType(i32, (mask_words(math.prod(shape)),))]  # type: ignore[arg-type]


@irdl_op_definition
class ReluMaskOp(MaskOp):
    """The mask `relu_grad` applies: bit i set where `!(saved[i] <= 0)` (so a nan passes the
    gradient, as `adir.relu_grad` does), on the relu's output."""

    name = "adir.relu_mask"

    def __init__(self, saved: SSAValue):
        super().__init__([saved])


@irdl_op_definition
class ClampMaskOp(ClampBoundsMixin, MaskOp):
    """The mask `clamp_grad` with the same bounds applies: bit i set where `min < saved[i] <
    max` (`min <= saved[i] <= max` with `inclusive`), 0 at a nan."""

    name = "adir.clamp_mask"
    min = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(-math.inf, f32))
    max = prop_def(FloatAttr[Float32Type], default_value=FloatAttr(math.inf, f32))
    inclusive = opt_prop_def(UnitAttr)

    def __init__(
        self,
        saved: SSAValue,
        min: float = -math.inf,
        max: float = math.inf,
        inclusive: bool = False,
    ):
        super().__init__([saved], clamp_properties(min, max, inclusive))

    def infer_result_types(self) -> Sequence[Attribute]:
        self.check_bounds()
        return super().infer_result_types()


@irdl_op_definition
class MaskGradOp(TensorOp):
    """`dx[i] = bit i of mask ? grad[i] : 0`: the gradient of a relu or clamp from the packed
    mask (`adir.relu_mask`, `adir.clamp_mask`) of its saved value; the same bits as
    `relu_grad` / `clamp_grad` on that value."""

    name = "adir.mask_grad"
    mask = operand_def(TensorType[IntegerType])
    grad = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    # Element i of the result reads element i of grad only: it may overwrite grad, as
    # relu_grad (elementwise) may.
    traits = traits_def(
        Pure(),
        NotDifferentiable("a gradient op: autodiff emits it"),
        WritesResultOver(("result", "grad")),
    )

    def __init__(self, mask: SSAValue, grad: SSAValue):
        super().__init__([mask, grad])

    def infer_result_types(self) -> Sequence[Attribute]:
        mask, grad = self.operand_shape(0), self.operand_shape(1)
        if self.mask.type.element_type != i32:  # type: ignore[attr-defined]
            raise VerifyException(f"{self.name}: operand mask must be i32 words")
        if grad is not None and None not in grad and mask is not None:
            words = mask_words(math.prod(grad))  # type: ignore[arg-type]
            if mask != (words,):
                raise VerifyException(
                    f"{self.name}: operand grad ({format_shape(grad)}) needs a mask of {words} "
                    f"words, got {format_shape(mask)}"
                )
        return [self.grad.type]


ACTIVATIONS_OPS = [
    ReluOp,
    LeakyReluOp,
    SigmoidOp,
    TanhOp,
    SoftplusOp,
    GeluOp,
    ClampOp,
    HardswishOp,
    HardsigmoidOp,
    SoftmaxOp,
    LogSoftmaxOp,
    ReluGradOp,
    LeakyReluGradOp,
    SigmoidGradOp,
    TanhGradOp,
    SoftplusGradOp,
    GeluGradOp,
    ClampGradOp,
    HardswishGradOp,
    HardsigmoidGradOp,
    SoftmaxGradOp,
    LogSoftmaxGradOp,
    ReluMaskOp,
    ClampMaskOp,
    MaskGradOp,
]
