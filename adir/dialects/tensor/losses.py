"""Losses: a prediction and a target in, a loss out, reduced as PyTorch's `reduction` says.

Every loss has a `reduction` property: "mean" (the default, as in PyTorch) and "sum" give a
`tensor<f32>`; "none" keeps one loss per element (mse, bce, bce_with_logits) or per sample
(nll, cross_entropy):

    %l = adir.mse %x, %y : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
    %l = adir.bce %p, %y {reduction = "none"} : tensor<4x3xf32>
    %l = adir.cross_entropy %z, %c : tensor<4x9xf32>, tensor<4xi32> -> tensor<f32>
    %l = adir.nll %z, %p {reduction = "none"} : tensor<4x9xf32>, tensor<4x9xf32> -> tensor<4xf32>

The classification losses take a batch `[N, C]` (or one unbatched sample `[C]`, as in PyTorch)
and a target whose rank says what it holds: one rank less than the input means class indices
(i32 or i64, `[N]` or `[]`), the same rank means class probabilities (f32, `[N, C]` or `[C]`).
The formulas the interpreter computes are in each op's docstring; the interpreter
(`adir/interpreter/losses.py`) is checked against the PyTorch function each one names.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import IntegerType, StringAttr, f32, i32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from adir.dialects.tensor.base import TensorOp
from adir.dialects.tensor.shapes import (
    AnyTensor,
    Dim,
    FloatTensor,
    Shape,
    element_type,
    format_shape,
    is_compatible,
    refine,
    require_equal_dims,
    require_rank,
    shape_of,
    tensor_type,
)
from adir.dialects.tensor.traits import NotDifferentiable, ReadsClassLabels

REDUCTIONS = ("none", "mean", "sum")
CLASS_INDEX_TYPES = (i32, i64)


class LossOp(TensorOp):
    """A loss of `input` against `target`, reduced over all its terms by `reduction`.

    Subclasses define the operands `input` and `target` (IRDL orders the operands of a class
    before those of its base) and the shape rule of the unreduced losses.
    """

    result = result_def(FloatTensor)
    reduction = prop_def(StringAttr, default_value=StringAttr("mean"))
    traits = traits_def(Pure())

    REDUCTIONS: ClassVar[tuple[str, ...]] = REDUCTIONS

    def __init__(self, input: SSAValue, target: SSAValue, reduction: str = "mean"):
        super().__init__([input, target], {"reduction": StringAttr(reduction)})

    @abstractmethod
    def unreduced_shape(self) -> Shape:
        """The shape of the losses before reduction (checking the operands fit together)."""

    def infer_result_types(self) -> Sequence[Attribute]:
        if self.reduction.data not in self.REDUCTIONS:
            raise VerifyException(
                f"{self.name}: unknown reduction '{self.reduction.data}', expected one of "
                + ", ".join(self.REDUCTIONS)
            )
        shape = self.unreduced_shape()
        return [tensor_type(f32, shape if self.reduction.data == "none" else ())]


class ElementwiseTerms:
    """The shape rule of losses with one term per element of `input` and `target`, which have
    the same shape; shared by the losses and their gradient ops."""

    def unreduced_shape(self: TensorOp) -> Shape:  # type: ignore[misc]
        input_shape, target_shape = self.operand_shape(0), self.operand_shape(1)
        if input_shape is None or target_shape is None:
            return input_shape if target_shape is None else target_shape
        if len(input_shape) != len(target_shape) or any(
            a is not None and b is not None and a != b
            for a, b in zip(input_shape, target_shape, strict=True)
        ):
            raise VerifyException(
                f"{self.name}: shapes {format_shape(input_shape)} and "
                f"{format_shape(target_shape)} of input and target do not match"
            )
        return tuple(
            a if a is not None else b for a, b in zip(input_shape, target_shape, strict=True)
        )


class ElementwiseLossOp(ElementwiseTerms, LossOp):
    """A loss term per element of `input` and `target`, which have the same shape."""

    input = operand_def(FloatTensor)
    target = operand_def(FloatTensor)


class ClassificationTerms:
    """The shape rule of losses with one term per sample of a batch `input` [N, C] (or [C])
    against a class target; shared by the losses and their gradient ops.

    The target's rank says its form: `[N]` (or `[]`) of i32/i64 class indices, or `[N, C]`
    (or `[C]`) of f32 class probabilities. With an unranked operand, the element type decides.
    """

    def unreduced_shape(self: TensorOp) -> Shape:  # type: ignore[misc]
        input_shape, target_shape = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "input", input_shape, (1, 2))
        indices = self._holds_class_indices(input_shape, target_shape)
        if target_shape is None:
            return None if input_shape is None else input_shape[:-1]
        target_batch = target_shape if indices else target_shape[:-1]
        if input_shape is None:
            return target_batch
        if not indices:
            require_equal_dims(
                self.name, "class counts", input_shape[-1], target_shape[-1], ("input", "target")
            )
        return tuple(
            require_equal_dims(self.name, "batch sizes", a, b, ("input", "target"))
            for a, b in zip(input_shape[:-1], target_batch, strict=True)
        )

    def _holds_class_indices(  # type: ignore[misc]
        self: TensorOp, input_shape: Shape, target_shape: Shape
    ) -> bool:
        """Whether the target holds class indices (else class probabilities), checking that its
        rank and element type agree on it."""
        elem = element_type(self.target.type)
        if elem not in (*CLASS_INDEX_TYPES, f32):
            raise VerifyException(
                f"{self.name}: operand target must have element type i32 or i64 (class "
                f"indices) or f32 (class probabilities), got {elem}"
            )
        indices = isinstance(elem, IntegerType)
        if target_shape is None:
            return indices
        if input_shape is None:
            ranks = (0, 1) if indices else (1, 2)
            if len(target_shape) not in ranks:
                held = f"class indices ({elem})" if indices else f"class probabilities ({elem})"
                raise VerifyException(
                    f"{self.name}: operand target of {held} must have rank {ranks[0]} or "
                    f"{ranks[1]}, got rank {len(target_shape)} ({format_shape(target_shape)})"
                )
            return indices
        rank = len(input_shape)
        if len(target_shape) not in (rank - 1, rank):
            raise VerifyException(
                f"{self.name}: operand target must have rank {rank - 1} (class indices) or "
                f"{rank} (class probabilities) for input of rank {rank}, got rank "
                f"{len(target_shape)} ({format_shape(target_shape)})"
            )
        if len(target_shape) == rank - 1 and not indices:
            raise VerifyException(
                f"{self.name}: operand target of rank {rank - 1} holds class indices, so its "
                f"element type must be i32 or i64, got {elem}"
            )
        if len(target_shape) == rank and indices:
            raise VerifyException(
                f"{self.name}: operand target of rank {rank} holds class probabilities, so its "
                f"element type must be f32, got {elem}"
            )
        return indices


class ClassificationLossOp(ClassificationTerms, LossOp):
    """A loss term per sample of a batch `input` [N, C] (or [C]) against a class target."""

    input = operand_def(FloatTensor)
    target = operand_def(AnyTensor)
    traits = traits_def(ReadsClassLabels("target"))


@irdl_op_definition
class MseOp(ElementwiseLossOp):
    """Mean squared error, `(input - target)**2` per element (`F.mse_loss`)."""

    name = "adir.mse"


@irdl_op_definition
class NllOp(ClassificationLossOp):
    """Negative log-likelihood of log-probabilities `input` (`F.nll_loss`).

    Class indices: `loss[n] = -input[n, target[n]]`, an index outside [0, C) is a run-time
    error. Class probabilities: `loss[n] = -sum_c target[n, c] * input[n, c]` (which is
    `F.cross_entropy(z, target)` for `input = log_softmax(z)`). "mean" divides by N.
    """

    name = "adir.nll"


@irdl_op_definition
class CrossEntropyOp(ClassificationLossOp):
    """Cross-entropy of logits `input` against a class target (`F.cross_entropy`).

    `loss[n] = nll(log_softmax(input)[n], target[n])`, as `adir.nll` defines it for either
    form of target, with the log-softmax computed stably: `(x - max x) - log sum exp(x - max x)`.
    "mean" divides by N for both forms, as PyTorch does without class weights.
    """

    name = "adir.cross_entropy"


@irdl_op_definition
class BceOp(ElementwiseLossOp):
    """Binary cross-entropy of probabilities `input` (`F.binary_cross_entropy`).

    `-(target * max(log(input), -100) + (1 - target) * max(log(1 - input), -100))`: each log
    is clamped at -100 as in PyTorch, so input 0 or 1 gives a finite loss. Input or target
    outside [0, 1] is a run-time error.
    """

    name = "adir.bce"


@irdl_op_definition
class BceWithLogitsOp(ElementwiseLossOp):
    """Binary cross-entropy of logits `input` (`F.binary_cross_entropy_with_logits`).

    `max(x, 0) - x * t + log(1 + exp(-|x|))`, which is `bce(sigmoid(x), t)` without the clamp
    and without overflow for any finite x. Evaluated in PyTorch's order, `(1 - t) * x -
    log_sigmoid(x)` with `log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))`.
    """

    name = "adir.bce_with_logits"


LOSSES_OPS = [MseOp, NllOp, CrossEntropyOp, BceOp, BceWithLogitsOp]


# --- the gradient ops: the adjoint of a loss's input -----------------------------------------


class LossGradOp(TensorOp):
    """The adjoint of a loss's `input`, given its `target` and the adjoint `dloss` of its result:

        %dx = adir.mse_grad %x, %y, %dl : tensor<4xf32>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>

    `input` and `target` fit together as the forward loss's do, `dloss` has the loss result's
    shape (a scalar for "mean" and "sum", the unreduced losses' for "none"), and the result has
    the input's shape. "mean" divides by the number of terms the forward loss averaged. Each
    op's docstring gives its formula: PyTorch's derivative of its loss, in PyTorch's order.
    """

    result = result_def(FloatTensor)
    reduction = prop_def(StringAttr, default_value=StringAttr("mean"))
    traits = traits_def(Pure(), NotDifferentiable("a gradient op: autodiff emits it"))

    REDUCTIONS: ClassVar[tuple[str, ...]] = REDUCTIONS

    def __init__(self, input: SSAValue, target: SSAValue, dloss: SSAValue, reduction: str = "mean"):
        super().__init__([input, target, dloss], {"reduction": StringAttr(reduction)})

    @abstractmethod
    def unreduced_shape(self) -> Shape:
        """The shape of the forward loss's unreduced losses (checking input and target)."""

    @abstractmethod
    def input_shape(self, unreduced: Shape) -> Shape:
        """The input's shape (the result's), refined by what the other operands tell."""

    def infer_result_types(self) -> Sequence[Attribute]:
        reduction = self.reduction.data
        if reduction not in self.REDUCTIONS:
            raise VerifyException(
                f"{self.name}: unknown reduction '{reduction}', expected one of "
                + ", ".join(self.REDUCTIONS)
            )
        unreduced = self.unreduced_shape()
        loss_type = tensor_type(f32, unreduced if reduction == "none" else ())
        dloss_type = tensor_type(f32, self.operand_shape(2))
        if not is_compatible(dloss_type, loss_type):
            expected = shape_of(loss_type)
            what = "be a scalar" if expected == () else f"have shape {format_shape(expected)}"
            raise VerifyException(
                f"{self.name}: operand dloss must {what} (the loss's shape for reduction "
                f"'{reduction}'), got {format_shape(self.operand_shape(2))}"
            )
        if reduction == "none":
            unreduced = shape_of(refine(loss_type, dloss_type))
        return [tensor_type(f32, self.input_shape(unreduced))]


class ElementwiseLossGradOp(ElementwiseTerms, LossGradOp):
    """The adjoint of an elementwise loss's input: one term per element."""

    input = operand_def(FloatTensor)
    target = operand_def(FloatTensor)
    dloss = operand_def(FloatTensor)

    def input_shape(self, unreduced: Shape) -> Shape:
        return unreduced


class ClassificationLossGradOp(ClassificationTerms, LossGradOp):
    """The adjoint of a classification loss's input [N, C] (or [C]), for a target of class
    indices (i32/i64, [N] or []) or class probabilities (f32, [N, C] or [C]).

    Below, `onehot(t)` is the target as probabilities (a 1 at each sample's class), `s[n]` is
    `dloss[n]` for "none", `dloss` for "sum" and `dloss / N` for "mean" (N = 1 unbatched).
    """

    input = operand_def(FloatTensor)
    target = operand_def(AnyTensor)
    dloss = operand_def(FloatTensor)
    traits = traits_def(ReadsClassLabels("target"))

    def input_shape(self, unreduced: Shape) -> Shape:
        input_shape, target_shape = self.operand_shape(0), self.operand_shape(1)
        probabilities = not isinstance(element_type(self.target.type), IntegerType)
        classes: Dim = None
        if input_shape is not None:
            classes = input_shape[-1]
        if classes is None and probabilities and target_shape is not None:
            classes = target_shape[-1]
        if unreduced is None:
            return None if input_shape is None else (*input_shape[:-1], classes)
        return (*unreduced, classes)


@irdl_op_definition
class MseGradOp(ElementwiseLossGradOp):
    """The adjoint of `adir.mse`'s input: `2 * (input - target) * dloss`, times 1/numel for
    "mean" (PyTorch's `mse_loss_backward`: `norm * (x - t) * grad`, norm = 2 or 2/numel).
    The target's adjoint is its negation."""

    name = "adir.mse_grad"


@irdl_op_definition
class NllGradOp(ClassificationLossGradOp):
    """The adjoint of `adir.nll`'s input (log-probabilities): `-onehot(target) * s`, i.e.
    `-s[n]` at each sample's class and 0 elsewhere for class indices (PyTorch's
    `nll_loss_backward`), and `-target * s` for class probabilities."""

    name = "adir.nll_grad"


@irdl_op_definition
class CrossEntropyGradOp(ClassificationLossGradOp):
    """The adjoint of `adir.cross_entropy`'s input (logits):
    `(softmax(input) * sum_c target - target) * s`, which is `(softmax(input) - onehot) * s`
    for class indices and for probabilities that sum to 1.

    Evaluated as PyTorch's composition `log_softmax` then `nll_loss`: `g = -target * s`, then
    the log-softmax backward `g - exp(log_softmax(input)) * sum_c g`.
    """

    name = "adir.cross_entropy_grad"


BCE_GRAD_EPSILON = 1e-12
"""PyTorch's `EPSILON` (a C `float`) in `binary_cross_entropy_backward`'s denominator."""


@irdl_op_definition
class BceGradOp(ElementwiseLossGradOp):
    """The adjoint of `adir.bce`'s input (probabilities):
    `dloss * (input - target) / max((1 - input) * input, 1e-12)`, then / numel for "mean"
    (PyTorch's `binary_cross_entropy_backward`, with its clamp: finite at input 0 and 1, where
    the loss's logs are clamped). The 1e-12 is PyTorch's `float` constant, 9.99999996e-13."""

    name = "adir.bce_grad"


@irdl_op_definition
class BceWithLogitsGradOp(ElementwiseLossGradOp):
    """The adjoint of `adir.bce_with_logits`'s input (logits): `(sigmoid(input) - target) *
    dloss`, then / numel for "mean" (PyTorch's `binary_cross_entropy_with_logits_backward`)."""

    name = "adir.bce_with_logits_grad"


LOSSES_OPS += [MseGradOp, NllGradOp, CrossEntropyGradOp, BceGradOp, BceWithLogitsGradOp]
