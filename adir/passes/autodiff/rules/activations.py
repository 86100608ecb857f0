"""VJP rules of the activations family: each emits its op's gradient op (PyTorch's backward
kernel, see adir/dialects/tensor/activations.py) with the forward op's properties. A rule saves
the forward output where the derivative is a function of it (relu, sigmoid, tanh, softmax,
log_softmax), as PyTorch does, and the input otherwise; clamp saves its output where that
gives PyTorch's numbers (hardtanh's convention), its input where it does not (torch.clamp's)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from adir.dialects.tensor import activations as act
from adir.passes.autodiff.builder import BackwardBuilder
from adir.passes.autodiff.rules.registry import Adjoints, vjp


@vjp(act.ReluOp)
def relu(b: BackwardBuilder, op: act.ReluOp, dy: SSAValue) -> Adjoints:
    # relu(x) <= 0 exactly where x <= 0; reading the output lets the input die early. Where
    # no other backward op reads the output (a pool, an add or a frozen layer follows), a
    # 1-bit mask of it is all the backward pass keeps (TTE's in-place relu mask).
    if not b.read_by_backward(op.result):
        mask = b.emit_after(act.ReluMaskOp(op.result), op)
        return [b.emit(act.MaskGradOp(mask, dy))]
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


@vjp(act.ClampOp)
def clamp(b: BackwardBuilder, op: act.ClampOp, dy: SSAValue) -> Adjoints:
    # One saved value, never two (a maximum and a minimum chain keeps both intermediates).
    # Without `inclusive` (hardtanh, ReLU6) the output gives the same gradient as the input
    # (ClampGradOp), and the output is the value the next layer keeps anyway: a conv or a
    # linear reads it in its weight gradient, so the clamp costs no arena bytes beyond it, and
    # its input (a batchnorm's output, say) dies after the forward pass, as with relu. A
    # 1-byte mask would add a buffer next to that output instead. With `inclusive`
    # (torch.clamp) the output cannot tell x == min from x < min, so the input is saved.
    low, high = op.bounds()
    inclusive = op.inclusive is not None
    saved = op.input if inclusive else op.result
    # The 1-bit mask where nothing else in the backward pass reads the output: the 1-byte
    # mask of the comment above would sit beside a kept output; this one replaces it. Not for
    # the input (`inclusive`): the rules of ops before this one, which run later, may read it.
    if not inclusive and not b.read_by_backward(saved):
        mask = b.emit_after(act.ClampMaskOp(saved, low, high, inclusive), op)
        return [b.emit(act.MaskGradOp(mask, dy))]
    return [b.emit(act.ClampGradOp(saved, dy, low, high, inclusive))]


@vjp(act.HardswishOp)
def hardswish(b: BackwardBuilder, op: act.HardswishOp, dy: SSAValue) -> Adjoints:
    # The input: hardswish is not monotonic on [-3, 0], so its output does not give x.
    return [b.emit(act.HardswishGradOp(op.input, dy))]


@vjp(act.HardsigmoidOp)
def hardsigmoid(b: BackwardBuilder, op: act.HardsigmoidOp, dy: SSAValue) -> Adjoints:
    # The input: the output rounds to 1 below x = 3 (x + 3 rounds to 6 for x within an ulp of
    # 3), where PyTorch's derivative is still 1/6.
    return [b.emit(act.HardsigmoidGradOp(op.input, dy))]
