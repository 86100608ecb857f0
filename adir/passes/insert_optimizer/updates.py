"""The parameter updates of `torch.optim.SGD`, `Adam` and `AdamW`, written as adir ops.

Each function appends one parameter's update and returns the new values to store (the
parameter's and its state's): `sgd` and `adam` as one update op (`adir.sgd_update`,
`adir.momentum_update`, `adir.adam_update`), `sgd_arithmetic` and `adam_arithmetic` as the
elementwise ops those stand for. The formulas follow PyTorch's single-tensor implementations
(torch/optim/sgd.py, adam.py) term by term, so the same float32 operations happen in the same
order wherever PyTorch's kernels allow it; the update ops compute exactly those operations.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import SSAValue

from adir.dialects.tensor import elementwise as ew
from adir.dialects.tensor.op_builder import TensorBuilder, name_value
from adir.dialects.tensor.optimizers import (
    AdamUpdateOp,
    BiasCorrectionOp,
    MomentumUpdateOp,
    SgdUpdateOp,
)


@dataclass(frozen=True)
class Hyper:
    """The hyperparameters of one parameter's update (after per-parameter overrides)."""

    lr: SSAValue  # this step's learning rate, a tensor<f32> (scheduled, scaled)
    weight_decay: float
    momentum: float = 0.0
    nesterov: bool = False
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    clip_value: float = 0.0  # clip the gradient to [-clip_value, clip_value] first (0: off)


def sgd(
    b: TensorBuilder, p: SSAValue, g: SSAValue, buf: SSAValue | None, h: Hyper
) -> tuple[SSAValue, SSAValue | None]:
    """SGD as one op: `adir.momentum_update` with a momentum buffer, else `adir.sgd_update`."""
    if buf is None:
        return b.emit(SgdUpdateOp(p, g, h.lr, h.weight_decay, h.clip_value)), None
    op = MomentumUpdateOp(p, buf, g, h.lr, h.momentum, h.nesterov, h.weight_decay, h.clip_value)
    b.emit(op)
    return op.new_param, op.new_momentum_buffer


def adam(
    b: TensorBuilder,
    p: SSAValue,
    g: SSAValue,
    m: SSAValue,
    v: SSAValue,
    corrections: BiasCorrections,
    h: Hyper,
    decoupled: bool,
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """Adam or AdamW (`decoupled`) as one op, `adir.adam_update`."""
    scalars = (h.lr, corrections.first, corrections.second_sqrt)
    op = AdamUpdateOp(
        (p, m, v), g, scalars, h.beta1, h.beta2, h.eps, h.weight_decay, decoupled, h.clip_value
    )
    b.emit(op)
    return op.new_param, op.new_exp_avg, op.new_exp_avg_sq


def clip_arithmetic(b: TensorBuilder, g: SSAValue, h: Hyper) -> SSAValue:
    """`clip_grad_value_`: each entry of the gradient to [-clip_value, clip_value]."""
    if not h.clip_value:
        return g
    upper = b.emit(ew.MinimumOp(g, b.constant(h.clip_value)))
    return b.emit(ew.MaximumOp(upper, b.constant(-h.clip_value)))


def sgd_arithmetic(
    b: TensorBuilder, p: SSAValue, g: SSAValue, buf: SSAValue | None, h: Hyper
) -> tuple[SSAValue, SSAValue | None]:
    """`g += wd * p; buf = momentum * buf + g; g = g + momentum * buf if nesterov else buf;
    p -= lr * g` (a zero initial buffer gives PyTorch's first step, `buf = g`)."""
    g = clip_arithmetic(b, g, h)
    if h.weight_decay:
        g = b.add(g, b.mul(b.constant(h.weight_decay), p))
    new_buf = None
    if buf is not None:
        new_buf = b.add(b.mul(buf, b.constant(h.momentum)), g)
        g = b.add(g, b.mul(b.constant(h.momentum), new_buf)) if h.nesterov else new_buf
    return b.sub(p, b.mul(h.lr, g)), new_buf


@dataclass(frozen=True)
class BiasCorrections:
    """Adam's step-count scalars, made once per step: `1 - beta1^t` and `sqrt(1 - beta2^t)`."""

    first: SSAValue
    second_sqrt: SSAValue

    @staticmethod
    def at(b: TensorBuilder, t: SSAValue, beta1: float, beta2: float) -> BiasCorrections:
        first = name_value(b.emit(BiasCorrectionOp(t, beta1)), "bias_correction1")
        second = name_value(b.emit(BiasCorrectionOp(t, beta2)), "bias_correction2")
        second_sqrt = name_value(b.emit(ew.SqrtOp(second)), "bias_correction2_sqrt")
        return BiasCorrections(first, second_sqrt)


def adam_arithmetic(
    b: TensorBuilder,
    p: SSAValue,
    g: SSAValue,
    m: SSAValue,
    v: SSAValue,
    corrections: BiasCorrections,
    h: Hyper,
    decoupled: bool,
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """Adam (`decoupled=False`, L2 added to the gradient) or AdamW (`decoupled=True`, the
    parameter shrunk by `1 - lr * wd` first), at step `t` (1 on the first step):

        m = m + (1 - beta1) * (g - m)                  (PyTorch's lerp)
        v = v * beta2 + (1 - beta2) * g * g
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
    """
    g = clip_arithmetic(b, g, h)
    if h.weight_decay and decoupled:
        p = b.mul(p, b.sub(b.constant(1.0), b.mul(h.lr, b.constant(h.weight_decay))))
    elif h.weight_decay:
        g = b.add(g, b.mul(b.constant(h.weight_decay), p))
    m = b.add(m, b.mul(b.constant(1.0 - h.beta1), b.sub(g, m)))
    v = b.add(b.mul(v, b.constant(h.beta2)), b.mul(b.mul(b.constant(1.0 - h.beta2), g), g))
    step_size = b.div(h.lr, corrections.first)
    denominator = b.add(b.div(b.emit(ew.SqrtOp(v)), corrections.second_sqrt), b.constant(h.eps))
    return b.sub(p, b.mul(step_size, b.div(m, denominator))), m, v
