"""VJP rules of the losses family. The adjoint of a loss's input is one gradient op
(`adir.<loss>_grad`, PyTorch's derivative kernel); the target's, where PyTorch defines one, is a
few elementwise ops. Class indices get none: they are integers, not differentiable.

`nll(log_softmax(z), t)` is `cross_entropy(z, t)`, so when the log_softmax (along the class
axis) feeds only the nll, the nll rule gives `z` its adjoint directly with
`cross_entropy_grad(z, t, dloss)`, the `softmax - onehot` form, and the log_softmax gets no
adjoint and no backward of its own.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from adir.dialects.tensor import activations as act
from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor import losses as ls
from adir.dialects.tensor.shapes import element_type
from adir.passes.autodiff.builder import BackwardBuilder, static_shape
from adir.passes.autodiff.rules.registry import Adjoints, vjp


def _elementwise_mean(b: BackwardBuilder, op: ls.ElementwiseLossOp, grad: SSAValue) -> SSAValue:
    """`grad`, divided by the number of terms for "mean" (as PyTorch does, last)."""
    if op.reduction.data != "mean":
        return grad
    return b.div(grad, b.constant(float(math.prod(static_shape(op.input)))))


def _holds_class_indices(op: ls.ClassificationLossOp) -> bool:
    return isinstance(element_type(op.target.type), IntegerType)


def _probability_target_adjoint(
    b: BackwardBuilder, op: ls.ClassificationLossOp, log_probs: SSAValue, dy: SSAValue
) -> SSAValue:
    """The adjoint of class probabilities `t` in `-sum_c t * log_probs` per sample:
    `-s * log_probs`, with `s` the adjoint of each sample's loss (`dy / N` for "mean",
    `dy` as [N, 1] for "none"), as PyTorch differentiates its soft-label cross-entropy."""
    shape = static_shape(op.input)
    if op.reduction.data == "mean":
        dy = b.div(dy, b.constant(float(math.prod(shape[:-1]))))
    elif op.reduction.data == "none":
        dy = b.reshape(dy, (*shape[:-1], 1))
    return b.mul(b.neg(dy), log_probs)


def _fusable_log_softmax(op: ls.NllOp) -> act.LogSoftmaxOp | None:
    """The log_softmax along the class axis that makes `op`'s input, if nothing else reads it."""
    producer = op.input.owner
    if not isinstance(producer, act.LogSoftmaxOp):
        return None
    rank = len(static_shape(producer.input))
    if producer.normalized_axis(rank) != rank - 1:
        return None
    if any(use.operation is not op or use.index != 0 for use in producer.result.uses):
        return None
    return producer


@vjp(ls.MseOp)
def mse(b: BackwardBuilder, op: ls.MseOp, dy: SSAValue) -> Adjoints:
    dx = b.emit(ls.MseGradOp(op.input, op.target, dy, op.reduction.data))
    return [dx, b.neg(dx)]


@vjp(ls.NllOp)
def nll(b: BackwardBuilder, op: ls.NllOp, dy: SSAValue) -> Adjoints:
    reduction = op.reduction.data
    log_softmax = _fusable_log_softmax(op)
    if log_softmax is None:
        dx = b.emit(ls.NllGradOp(op.input, op.target, dy, reduction))
    else:
        # Exact, not an approximation: nll(log_softmax(z), t) == cross_entropy(z, t).
        z = log_softmax.input
        b.add_adjoint(z, b.emit(ls.CrossEntropyGradOp(z, op.target, dy, reduction)))
        dx = None
    if _holds_class_indices(op):
        return [dx, None]
    return [dx, _probability_target_adjoint(b, op, op.input, dy)]


@vjp(ls.CrossEntropyOp)
def cross_entropy(b: BackwardBuilder, op: ls.CrossEntropyOp, dy: SSAValue) -> Adjoints:
    dx = b.emit(ls.CrossEntropyGradOp(op.input, op.target, dy, op.reduction.data))
    if _holds_class_indices(op):
        return [dx, None]
    log_probs = b.emit(act.LogSoftmaxOp(op.input))
    return [dx, _probability_target_adjoint(b, op, log_probs, dy)]


@vjp(ls.BceOp)
def bce(b: BackwardBuilder, op: ls.BceOp, dy: SSAValue) -> Adjoints:
    # d/dt = log(1 - x) - log(x) = -logit(x), unclamped, as PyTorch's
    # binary_cross_entropy_target_backward: -log(x / (1 - x)) * dloss.
    x = op.input
    dx = b.emit(ls.BceGradOp(x, op.target, dy, op.reduction.data))
    logit = b.emit(ew.LogOp(b.div(x, b.sub(b.constant(1.0), x))))
    return [dx, _elementwise_mean(b, op, b.mul(b.neg(logit), dy))]


@vjp(ls.BceWithLogitsOp)
def bce_with_logits(b: BackwardBuilder, op: ls.BceWithLogitsOp, dy: SSAValue) -> Adjoints:
    # d/dt of (1 - t) x - log_sigmoid(x) is -x.
    dx = b.emit(ls.BceWithLogitsGradOp(op.input, op.target, dy, op.reduction.data))
    return [dx, _elementwise_mean(b, op, b.mul(b.neg(op.input), dy))]
