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
    require_rank,
    tensor_type,
)

REDUCTIONS = ("none", "mean", "sum")
CLASS_INDEX_TYPES = (i32, i64)


def _same_dim(op_name: str, what: str, a: Dim, b: Dim) -> Dim:
    """The dim that `a` and `b` both describe: "batch sizes 32 and 16 of input and target"."""
    if a is not None and b is not None and a != b:
        raise VerifyException(f"{op_name}: {what} {a} and {b} of input and target do not match")
    return a if a is not None else b


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


class ElementwiseLossOp(LossOp):
    """A loss term per element of `input` and `target`, which have the same shape."""

    input = operand_def(FloatTensor)
    target = operand_def(FloatTensor)

    def unreduced_shape(self) -> Shape:
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


class ClassificationLossOp(LossOp):
    """A loss term per sample of a batch `input` [N, C] (or [C]) against a class target.

    The target's rank says its form: `[N]` (or `[]`) of i32/i64 class indices, or `[N, C]`
    (or `[C]`) of f32 class probabilities. With an unranked operand, the element type decides.
    """

    input = operand_def(FloatTensor)
    target = operand_def(AnyTensor)

    def unreduced_shape(self) -> Shape:
        input_shape, target_shape = self.operand_shape(0), self.operand_shape(1)
        require_rank(self.name, "input", input_shape, (1, 2))
        indices = self._holds_class_indices(input_shape, target_shape)
        if target_shape is None:
            return None if input_shape is None else input_shape[:-1]
        target_batch = target_shape if indices else target_shape[:-1]
        if input_shape is None:
            return target_batch
        if not indices:
            _same_dim(self.name, "class counts", input_shape[-1], target_shape[-1])
        return tuple(
            _same_dim(self.name, "batch sizes", a, b)
            for a, b in zip(input_shape[:-1], target_batch, strict=True)
        )

    def _holds_class_indices(self, input_shape: Shape, target_shape: Shape) -> bool:
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
