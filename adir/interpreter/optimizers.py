"""numpy semantics of the optimizers family (adir/dialects/tensor/optimizers.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, impl, register_impls

from adir.dialects.tensor import optimizers as opt
from adir.interpreter.family import FamilyFunctions


def scheduled_lr(op: opt.LrScheduleOp, lr: float, t: int) -> float:
    """The schedule in double precision, as torch.optim.lr_scheduler computes it."""
    gamma = op.gamma.value.data
    if op.kind.data == "step":
        return lr * gamma ** (t // op.step_size.value.data)
    if op.kind.data == "exponential":
        return lr * gamma**t
    eta_min, t_max = op.eta_min.value.data, op.t_max.value.data
    return eta_min + (lr - eta_min) * (1 + math.cos(math.pi * t / t_max)) / 2


@register_impls
class OptimizersFunctions(FamilyFunctions):
    @impl(opt.LrScheduleOp)
    def run_lr_schedule(
        self, interpreter: Interpreter, op: opt.LrScheduleOp, args: tuple[Any, ...]
    ):
        lr, t = args
        value = scheduled_lr(op, float(lr), round(float(t)))
        return (np.asarray(value, dtype=np.asarray(lr).dtype),)

    @impl(opt.BiasCorrectionOp)
    def run_bias_correction(
        self, interpreter: Interpreter, op: opt.BiasCorrectionOp, args: tuple[Any, ...]
    ):
        (t,) = args
        value = 1.0 - op.beta.value.data ** round(float(t))
        return (np.asarray(value, dtype=np.asarray(t).dtype),)

    @impl(opt.SgdUpdateOp)
    def run_sgd_update(self, interpreter: Interpreter, op: opt.SgdUpdateOp, args: tuple[Any, ...]):
        param, grad, lr = args
        return sgd_update(op, param, grad, lr)

    @impl(opt.MomentumUpdateOp)
    def run_momentum_update(
        self, interpreter: Interpreter, op: opt.MomentumUpdateOp, args: tuple[Any, ...]
    ):
        param, buf, grad, lr = args
        return momentum_update(op, param, buf, grad, lr)

    @impl(opt.AdamUpdateOp)
    def run_adam_update(
        self, interpreter: Interpreter, op: opt.AdamUpdateOp, args: tuple[Any, ...]
    ):
        param, exp_avg, exp_avg_sq, grad, *scalars = args
        return adam_update(op, param, exp_avg, exp_avg_sq, grad, *scalars)

    @impl(opt.MatmulSgdUpdateOp)
    def run_matmul_sgd_update(
        self, interpreter: Interpreter, op: opt.MatmulSgdUpdateOp, args: tuple[Any, ...]
    ):
        param, lhs, rhs, lr = args
        return sgd_update(op, param, product(op, lhs, rhs), lr)

    @impl(opt.MatmulMomentumUpdateOp)
    def run_matmul_momentum_update(
        self, interpreter: Interpreter, op: opt.MatmulMomentumUpdateOp, args: tuple[Any, ...]
    ):
        param, buf, lhs, rhs, lr = args
        return momentum_update(op, param, buf, product(op, lhs, rhs), lr)

    @impl(opt.MatmulAdamUpdateOp)
    def run_matmul_adam_update(
        self, interpreter: Interpreter, op: opt.MatmulAdamUpdateOp, args: tuple[Any, ...]
    ):
        param, exp_avg, exp_avg_sq, lhs, rhs, *scalars = args
        return adam_update(op, param, exp_avg, exp_avg_sq, product(op, lhs, rhs), *scalars)


# The updates, term by term as the elementwise ops of insert-optimizer{update_ops=false} compute
# them (the same float32 roundings in the same order; constants are float32 like theirs).

Array = np.ndarray


def product(op: opt.MatmulUpdateOp, lhs: Array, rhs: Array) -> Array:
    """The gradient of a matmul form, as `adir.matmul` computes it."""
    lhs = lhs.T if op.transpose_a is not None else lhs
    rhs = rhs.T if op.transpose_b is not None else rhs
    return np.matmul(lhs, rhs)


def constant(value: float, like: Array) -> Array:
    """An f32 constant in the working dtype, as `adir.constant` gives it."""
    return np.asarray(np.float32(value), like.dtype)


def regularized(op: opt.ParamUpdateOp, param: Array, grad: Array) -> Array:
    """The gradient clipped to [-clip_value, clip_value], plus `weight_decay * param` (L2)."""
    if clip := op.clip_value.value.data:
        grad = np.maximum(np.minimum(grad, constant(clip, grad)), constant(-clip, grad))
    decoupled = getattr(op, "decoupled_weight_decay", None) is not None
    if (decay := op.weight_decay.value.data) and not decoupled:
        grad = grad + constant(decay, param) * param
    return grad


def sgd_update(op: opt.ParamUpdateOp, param: Array, grad: Array, lr: Array) -> tuple[Array]:
    return (param - lr * regularized(op, param, grad),)


def momentum_update(
    op: opt.ParamUpdateOp, param: Array, buf: Array, grad: Array, lr: Array
) -> tuple[Array, Array]:
    grad = regularized(op, param, grad)
    momentum = constant(op.momentum.value.data, param)  # type: ignore[attr-defined]
    buf = buf * momentum + grad
    step = grad + momentum * buf if op.nesterov is not None else buf  # type: ignore[attr-defined]
    return param - lr * step, buf


def adam_update(
    op: opt.ParamUpdateOp,
    param: Array,
    exp_avg: Array,
    exp_avg_sq: Array,
    grad: Array,
    lr: Array,
    correction1: Array,
    correction2_sqrt: Array,
) -> tuple[Array, Array, Array]:
    beta1, beta2 = op.beta1.value.data, op.beta2.value.data  # type: ignore[attr-defined]
    grad = regularized(op, param, grad)
    decay = op.weight_decay.value.data
    if decay and op.decoupled_weight_decay is not None:  # type: ignore[attr-defined]
        param = param * (constant(1.0, param) - lr * constant(decay, param))
    exp_avg = exp_avg + constant(1.0 - beta1, grad) * (grad - exp_avg)
    exp_avg_sq = exp_avg_sq * constant(beta2, grad) + constant(1.0 - beta2, grad) * grad * grad
    step_size = lr / correction1
    eps = constant(op.eps.value.data, grad)  # type: ignore[attr-defined]
    denominator = np.sqrt(exp_avg_sq) / correction2_sqrt + eps
    return param - step_size * (exp_avg / denominator), exp_avg, exp_avg_sq
