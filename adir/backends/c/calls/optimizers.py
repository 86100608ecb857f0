"""C calls of the optimizers family's kernels (runtime: adir_optimizers.c).

An update kernel takes the op's buffers (ins, then outs: the new parameter and state), then
the element count or, for a matmul form, m, n, k and the transpose flags of its gradient, then
the hyperparameters. `matmul_sgd_update` with weight decay or clipping calls the general
kernel, `matmul_sgd_update_general`.
"""

from __future__ import annotations

import math

from adir.backends.c.calls import CallSite, c_float, emits, flag
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import optimizers as opt


def c_double(value: float) -> str:
    """A double literal that reads back as the same double (repr is the shortest such)."""
    if not math.isfinite(value):
        raise ValueError(f"no C literal for the double {value}")
    return repr(float(value))


@emits(opt.LrScheduleOp)
def lr_schedule(op: KernelOp, site: CallSite) -> str:
    lr, t, out = site.input(0), site.input(1), site.output()
    kind = op.kind.data
    if kind == "step":
        return site.call(
            "step_lr", lr, t, out, op.step_size.value.data, c_float(op.gamma.value.data)
        )
    if kind == "exponential":
        return site.call("exponential_lr", lr, t, out, c_float(op.gamma.value.data))
    if kind == "cosine":
        return site.call(
            "cosine_lr", lr, t, out, op.t_max.value.data, c_float(op.eta_min.value.data)
        )
    raise site.error(f"no C kernel for the schedule '{kind}'")


@emits(opt.BiasCorrectionOp)
def bias_correction(op: KernelOp, site: CallSite) -> str:
    return site.call("bias_correction", site.input(0), site.output(), c_double(op.beta.value.data))


def regularization(op: KernelOp) -> list[str]:
    """weight_decay and clip_value, as every update kernel takes them."""
    return [c_float(op.weight_decay.value.data), c_float(op.clip_value.value.data)]


def momentum(op: KernelOp) -> list[object]:
    return [c_float(op.momentum.value.data), *regularization(op), flag(op.nesterov)]


def adam(op: KernelOp) -> list[object]:
    betas = [c_double(op.beta1.value.data), c_double(op.beta2.value.data)]
    eps = c_float(op.eps.value.data)
    return [*betas, eps, *regularization(op), flag(op.decoupled_weight_decay)]


@emits(opt.SgdUpdateOp)
def sgd_update(op: KernelOp, site: CallSite) -> str:
    return site.call("sgd_update", *site.buffers(), f"{site.out_size()}u", *regularization(op))


@emits(opt.MomentumUpdateOp)
def momentum_update(op: KernelOp, site: CallSite) -> str:
    return site.call("momentum_update", *site.buffers(), f"{site.out_size()}u", *momentum(op))


@emits(opt.AdamUpdateOp)
def adam_update(op: KernelOp, site: CallSite) -> str:
    return site.call("adam_update", *site.buffers(), f"{site.out_size()}u", *adam(op))


def product_sizes(op: KernelOp, site: CallSite) -> list[int]:
    """m, n, k, transpose_a, transpose_b of a matmul update's gradient (lhs is the first
    operand after the parameter and its state)."""
    transpose_a, transpose_b = flag(op.transpose_a), flag(op.transpose_b)
    m, n = site.out_shape()
    lhs = site.in_shape(len(op.outs))
    k = lhs[0] if transpose_a else lhs[1]
    return [m, n, k, transpose_a, transpose_b]


@emits(opt.MatmulSgdUpdateOp)
def matmul_sgd_update(op: KernelOp, site: CallSite) -> str:
    sizes = product_sizes(op, site)
    if op.weight_decay.value.data or op.clip_value.value.data:
        return site.call("matmul_sgd_update_general", *site.buffers(), *sizes, *regularization(op))
    return site.call("matmul_sgd_update", *site.buffers(), *sizes)


@emits(opt.MatmulMomentumUpdateOp)
def matmul_momentum_update(op: KernelOp, site: CallSite) -> str:
    sizes = product_sizes(op, site)
    return site.call("matmul_momentum_update", *site.buffers(), *sizes, *momentum(op))


@emits(opt.MatmulAdamUpdateOp)
def matmul_adam_update(op: KernelOp, site: CallSite) -> str:
    return site.call("matmul_adam_update", *site.buffers(), *product_sizes(op, site), *adam(op))
