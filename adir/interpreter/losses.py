"""numpy semantics of the losses family (adir/dialects/tensor/losses.py).

Each loss computes its unreduced terms in the session's float dtype with the formula PyTorch's
CPU kernel uses (so float64 runs agree to rounding), then reduces them. Data a loss is not
defined on (a class index outside [0, C), a bce probability outside [0, 1]) raises
`ValueError`, as PyTorch raises too: a fault in the data, which `adir-run` reports as a
diagnostic, not as a bug in adir.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import losses as ls
from adir.interpreter.activations import sigmoid
from adir.interpreter.family import FamilyFunctions


def reduce_loss(losses: np.ndarray, reduction: str) -> np.ndarray:
    """PyTorch's `apply_loss_reduction`: "mean" of no terms is nan (0/0), "sum" of none 0."""
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "sum":
        return np.asarray(total)
    return np.asarray(total / losses.dtype.type(losses.size))


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """`(x - max x) - log(sum(exp(x - max x)))` over the last axis, in PyTorch's order of
    operations: no exp overflows, so logits of +-1e4 give finite log-probabilities."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _element(operand: str, values: np.ndarray, flat_index: int) -> str:
    """`target[3] = 10`: an element of an operand, for an error message."""
    value = values.flat[flat_index]
    if values.ndim == 0:
        return f"{operand} = {value}"
    where = ", ".join(str(i) for i in np.unravel_index(flat_index, values.shape))
    return f"{operand}[{where}] = {value}"


def check_class_indices(op_name: str, target: np.ndarray, classes: int) -> None:
    """A class index outside [0, C) is a fault in the data (PyTorch raises too)."""
    outside = (target < 0) | (target >= classes)
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        raise ValueError(
            f"{op_name}: {_element('target', target, first)} is not a class index in [0, {classes})"
        )


def nll_terms(op_name: str, log_probs: np.ndarray, target: np.ndarray) -> np.ndarray:
    """`-log_probs[n, target[n]]` for class indices, `-sum_c target[n, c] * log_probs[n, c]`
    for class probabilities (the target's dtype says which)."""
    if not np.issubdtype(target.dtype, np.integer):
        return -(target * log_probs).sum(axis=-1)
    check_class_indices(op_name, target, log_probs.shape[-1])
    picked = np.take_along_axis(log_probs, target[..., None].astype(np.intp), axis=-1)
    return -picked[..., 0]


def _require_probabilities(op_name: str, operand: str, values: np.ndarray) -> None:
    outside = ~((values >= 0) & (values <= 1))  # nan is outside too, as in PyTorch
    if outside.any():
        first = int(np.flatnonzero(outside)[0])
        raise ValueError(
            f"{op_name}: {_element(operand, values, first)} is not a probability in [0, 1]"
        )


# --- the gradient ops -------------------------------------------------------------------------


def per_sample_adjoint(dloss: np.ndarray, reduction: str, input: np.ndarray) -> np.ndarray:
    """`s` of the classification gradient ops: the adjoint of each sample's loss, shaped to
    broadcast against `input` [N, C] (or [C]): `dloss / N` for "mean", as PyTorch divides."""
    if reduction == "none":
        return dloss[..., None]
    if reduction == "mean":
        return dloss / dloss.dtype.type(math.prod(input.shape[:-1]))
    return dloss


def nll_grad(op_name: str, input: np.ndarray, target: np.ndarray, dloss, reduction: str):
    """`-onehot(target) * s`, in PyTorch's order: `-(dloss / N)` first (`nll_loss_backward`,
    which writes it at each sample's class into zeros; for probabilities, the backward of
    `-(logp * target).sum() / N`)."""
    s = -per_sample_adjoint(dloss, reduction, input)
    if not np.issubdtype(target.dtype, np.integer):
        return target * s
    classes = input.shape[-1]
    check_class_indices(op_name, target, classes)
    at_label = target[..., None] == np.arange(classes)
    return np.where(at_label, s, input.dtype.type(0))


def mean_divisor(reduction: str, input: np.ndarray) -> np.generic:
    """What an elementwise loss's gradient is divided by: numel for "mean", else 1."""
    return input.dtype.type(input.size if reduction == "mean" else 1)


@register_impls
class LossesFunctions(FamilyFunctions):
    @impl(ls.MseOp)
    def run_mse(self, interpreter: Interpreter, op: ls.MseOp, args: tuple[Any, ...]):
        input, target = args
        diff = input - target
        return (reduce_loss(diff * diff, op.reduction.data),)

    @impl(ls.NllOp)
    def run_nll(self, interpreter: Interpreter, op: ls.NllOp, args: tuple[Any, ...]):
        input, target = args
        return (reduce_loss(nll_terms(op.name, input, target), op.reduction.data),)

    @impl(ls.CrossEntropyOp)
    def run_cross_entropy(
        self, interpreter: Interpreter, op: ls.CrossEntropyOp, args: tuple[Any, ...]
    ):
        logits, target = args
        terms = nll_terms(op.name, log_softmax(logits), target)
        return (reduce_loss(terms, op.reduction.data),)

    @impl(ls.BceOp)
    def run_bce(self, interpreter: Interpreter, op: ls.BceOp, args: tuple[Any, ...]):
        input, target = args
        _require_probabilities(op.name, "input", input)
        _require_probabilities(op.name, "target", target)
        # PyTorch's kernel: (t - 1) * max(log1p(-x), -100) - t * max(log(x), -100). The clamp
        # keeps x = 0 and x = 1 finite; log1p keeps log(1 - x) exact for small x.
        floor = input.dtype.type(-100)
        log_x = np.maximum(np.log(input), floor)
        log_1mx = np.maximum(np.log1p(-input), floor)
        terms = (target - 1) * log_1mx - target * log_x
        return (reduce_loss(terms, op.reduction.data),)

    @impl(ls.BceWithLogitsOp)
    def run_bce_with_logits(
        self, interpreter: Interpreter, op: ls.BceWithLogitsOp, args: tuple[Any, ...]
    ):
        x, t = args
        # (1 - t) * x - log_sigmoid(x), with log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)):
        # PyTorch's order of operations for max(x, 0) - x t + log(1 + exp(-|x|)). Computing
        # (1 - t) * x first keeps it exact when t is close to 1 and x is large.
        log_sigmoid = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
        terms = (1 - t) * x - log_sigmoid
        return (reduce_loss(terms, op.reduction.data),)

    # --- the gradient ops ---------------------------------------------------------------------

    @impl(ls.MseGradOp)
    def run_mse_grad(self, interpreter: Interpreter, op: ls.MseGradOp, args: tuple[Any, ...]):
        input, target, dloss = args
        # PyTorch's mse_loss_backward: norm * (x - t) * grad, with norm = 2 / numel (rounded to
        # the dtype) for "mean".
        norm = input.dtype.type(2.0 / input.size if op.reduction.data == "mean" else 2.0)
        return (norm * (input - target) * dloss,)

    @impl(ls.NllGradOp)
    def run_nll_grad(self, interpreter: Interpreter, op: ls.NllGradOp, args: tuple[Any, ...]):
        input, target, dloss = args
        return (nll_grad(op.name, input, target, dloss, op.reduction.data),)

    @impl(ls.CrossEntropyGradOp)
    def run_cross_entropy_grad(
        self, interpreter: Interpreter, op: ls.CrossEntropyGradOp, args: tuple[Any, ...]
    ):
        logits, target, dloss = args
        # PyTorch differentiates its composition nll_loss(log_softmax(z)): the nll adjoint g,
        # then the log-softmax backward g - exp(log_softmax(z)) * sum(g).
        g = nll_grad(op.name, logits, target, dloss, op.reduction.data)
        return (g - np.exp(log_softmax(logits)) * g.sum(axis=-1, keepdims=True),)

    @impl(ls.BceGradOp)
    def run_bce_grad(self, interpreter: Interpreter, op: ls.BceGradOp, args: tuple[Any, ...]):
        input, target, dloss = args
        _require_probabilities(op.name, "input", input)
        _require_probabilities(op.name, "target", target)
        # binary_cross_entropy_backward: the clamp keeps input 0 and 1 finite; its epsilon is a
        # C float, so it is float32(1e-12) in float64 too.
        epsilon = input.dtype.type(np.float32(ls.BCE_GRAD_EPSILON))
        grad = dloss * (input - target) / np.maximum((1 - input) * input, epsilon)
        return (grad / mean_divisor(op.reduction.data, input),)

    @impl(ls.BceWithLogitsGradOp)
    def run_bce_with_logits_grad(
        self, interpreter: Interpreter, op: ls.BceWithLogitsGradOp, args: tuple[Any, ...]
    ):
        x, t, dloss = args
        grad = (sigmoid(x) - t) * dloss
        return (grad / mean_divisor(op.reduction.data, x),)
