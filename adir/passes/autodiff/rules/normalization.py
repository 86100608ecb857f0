"""VJP rules of the normalization family.

batchnorm (training) emits one `adir.batchnorm_grad`, PyTorch's backward kernel, reading the
batch mean and invstd the forward op returned. Only its output is differentiable: the running
statistics it returns go to `adir.store`s (which the loss does not depend on), and a loss that
depends on them, or on the batch statistics, is an error rather than a silently wrong gradient.
The running statistics it reads do not affect the output, so they get no adjoint.

batchnorm_eval is a per-channel affine map, `y = (x - running_mean) * r * gamma + beta` with
`r = 1 / sqrt(running_var + eps)`; its adjoints are a few elementwise ops and sums (the work is
one product for the input and a reduction for gamma, beta and the running statistics, which
a dedicated op would not save).

dropout emits `adir.dropout_grad`, which recomputes the mask from the same seed, p and step.

layer_norm emits one `adir.layer_norm_grad` (PyTorch's backward, reading the input and the
row statistics the forward returned; its docstring says why one op rather than a composition),
whose results are the adjoints of the input, the weight and the bias. As for batchnorm, only
the output is differentiable.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from adir.diagnostics import OpError
from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor import normalization as norm
from adir.passes.autodiff.builder import BackwardBuilder, static_shape
from adir.passes.autodiff.rules.registry import Adjoints, vjp


def _channel_axes(x: SSAValue) -> list[int]:
    """The axes a channel's values lie along in `[N, C, ...]`: all but axis 1."""
    return [0, *range(2, len(static_shape(x)))]


def _as_channels(b: BackwardBuilder, v: SSAValue, x: SSAValue) -> SSAValue:
    """A `[C]` vector reshaped to `[1, C, 1, ...]`, broadcasting against `x`."""
    return b.reshape(v, (1, static_shape(v)[0]) + (1,) * (len(static_shape(x)) - 2))


@vjp(norm.BatchnormOp)
def batchnorm(b: BackwardBuilder, op: norm.BatchnormOp, dy: SSAValue) -> Adjoints:
    _only_output_differentiable(b, op, "the batch or running statistics")
    grad = norm.BatchnormGradOp(op.input, op.gamma, op.batch_mean, op.batch_invstd, dy)
    dx = b.emit(grad)
    return [dx, grad.gamma_grad, grad.beta_grad, None, None]


@vjp(norm.BatchnormEvalOp)
def batchnorm_eval(b: BackwardBuilder, op: norm.BatchnormEvalOp, dy: SSAValue) -> Adjoints:
    x, axes = op.input, _channel_axes(op.input)
    std = b.emit(ew.SqrtOp(b.add(op.running_var, b.constant(op.eps.value.data))))
    r = b.div(b.constant(1.0), std)
    scale = b.mul(op.gamma, r)
    dx = b.mul(dy, _as_channels(b, scale, x))
    xhat = b.mul(b.sub(x, _as_channels(b, op.running_mean, x)), _as_channels(b, r, x))
    dgamma = b.sum(b.mul(dy, xhat), axes)
    dbeta = b.sum(dy, axes)
    # d/d running_mean = -sum(dy) * scale; d/d running_var = -0.5 * gamma * r^2 * sum(dy * xhat).
    dmean = b.neg(b.mul(dbeta, scale))
    dvar = b.mul(b.mul(dgamma, b.mul(scale, r)), b.constant(-0.5))
    return [dx, dgamma, dbeta, dmean, dvar]


def _only_output_differentiable(
    b: BackwardBuilder, op: norm.BatchnormOp | norm.LayerNormOp, statistics: str
) -> None:
    # The engine passes the adjoint of the first result that has one: it is the output's if no
    # other result has one.
    others = [i for i, r in enumerate(op.results) if i > 0 and r in b.adjoints]
    if others:
        raise OpError(
            op,
            f"autodiff: the loss depends on result #{others[0]} of {op.name}; only its output "
            f"(result #0) is differentiable, not {statistics}",
        )


@vjp(norm.LayerNormOp)
def layer_norm(b: BackwardBuilder, op: norm.LayerNormOp, dy: SSAValue) -> Adjoints:
    _only_output_differentiable(b, op, "the row statistics")
    normalized_shape = [int(d) for d in op.normalized_shape.get_values()]
    grad = norm.LayerNormGradOp(op.input, op.mean, op.rstd, dy, normalized_shape, op.weight)
    dx = b.emit(grad)
    return [dx, grad.weight_grad, grad.bias_grad][: len(op.operands)]


@vjp(norm.DropoutOp)
def dropout(b: BackwardBuilder, op: norm.DropoutOp, dy: SSAValue) -> Adjoints:
    seed, p = op.seed.value.data, op.p.value.data
    return [b.emit(norm.DropoutGradOp(dy, op.step, seed, p)), None]
