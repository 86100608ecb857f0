"""C calls of the optimizers family's kernels (runtime: adir_optimizers.c)."""

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


@emits(opt.MatmulSgdUpdateOp)
def matmul_sgd_update(op: KernelOp, site: CallSite) -> str:
    transpose_a, transpose_b = flag(op.transpose_a), flag(op.transpose_b)
    m, n = site.out_shape()
    lhs = site.in_shape(1)
    k = lhs[0] if transpose_a else lhs[1]
    return site.call(
        "matmul_sgd_update", site.input(0), site.input(1), site.input(2), site.input(3),
        site.output(), m, n, k, transpose_a, transpose_b,
    )  # fmt: skip
