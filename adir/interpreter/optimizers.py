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

    @impl(opt.MatmulSgdUpdateOp)
    def run_matmul_sgd_update(
        self, interpreter: Interpreter, op: opt.MatmulSgdUpdateOp, args: tuple[Any, ...]
    ):
        param, lhs, rhs, lr = args
        lhs = lhs.T if op.transpose_a is not None else lhs
        rhs = rhs.T if op.transpose_b is not None else rhs
        # The same two roundings as the unfused `sub(p, mul(lr, matmul(...)))`.
        return (param - lr * np.matmul(lhs, rhs),)
