"""VJP rules of the activations family: each emits its op's gradient op (PyTorch's backward
kernel, see adir/dialects/tensor/activations.py) with the forward op's properties. A rule saves
the forward output where the derivative is a function of it (relu, sigmoid, tanh, softmax,
log_softmax), as PyTorch does, and the input otherwise."""

from __future__ import annotations

from xdsl.ir import SSAValue

from adir.dialects.tensor import activations as act
from adir.passes.autodiff.builder import BackwardBuilder
from adir.passes.autodiff.rules.registry import Adjoints, vjp


@vjp(act.ReluOp)
def relu(b: BackwardBuilder, op: act.ReluOp, dy: SSAValue) -> Adjoints:
    # relu(x) <= 0 exactly where x <= 0; reading the output lets the input die early.
    return [b.emit(act.ReluGradOp(op.result, dy))]


@vjp(act.LeakyReluOp)
def leaky_relu(b: BackwardBuilder, op: act.LeakyReluOp, dy: SSAValue) -> Adjoints:
    return [b.emit(act.LeakyReluGradOp(op.input, dy, op.alpha.value.data))]


@vjp(act.SigmoidOp)
def sigmoid(b: BackwardBuilder, op: act.SigmoidOp, dy: SSAValue) -> Adjoints:
    return [b.emit(act.SigmoidGradOp(op.result, dy))]


@vjp(act.TanhOp)
def tanh(b: BackwardBuilder, op: act.TanhOp, dy: SSAValue) -> Adjoints:
    return [b.emit(act.TanhGradOp(op.result, dy))]


@vjp(act.SoftplusOp)
def softplus(b: BackwardBuilder, op: act.SoftplusOp, dy: SSAValue) -> Adjoints:
    beta, threshold = op.beta.value.data, op.threshold.value.data
    return [b.emit(act.SoftplusGradOp(op.input, dy, beta, threshold))]


@vjp(act.GeluOp)
def gelu(b: BackwardBuilder, op: act.GeluOp, dy: SSAValue) -> Adjoints:
    return [b.emit(act.GeluGradOp(op.input, dy, op.approximate.data))]


@vjp(act.SoftmaxOp)
def softmax(b: BackwardBuilder, op: act.SoftmaxOp, dy: SSAValue) -> Adjoints:
    return [b.emit(act.SoftmaxGradOp(op.result, dy, op.axis.value.data))]


@vjp(act.LogSoftmaxOp)
def log_softmax(b: BackwardBuilder, op: act.LogSoftmaxOp, dy: SSAValue) -> Adjoints:
    return [b.emit(act.LogSoftmaxGradOp(op.result, dy, op.axis.value.data))]
