"""C calls of the activations family's kernels (runtime: adir_activations.c).

Each kernel takes the op's buffers (ins, then the out) and then its sizes and attributes: an
element count for the elementwise activations and their gradients, [outer, axis_size, inner]
around the normalised axis for softmax and log_softmax and theirs. gelu's two forms are two
kernels, `gelu` and `gelu_tanh` (and `gelu_grad`, `gelu_tanh_grad`); so are clamp's two
gradients, `clamp_grad` (hardtanh's, 0 at the bounds) and `clamp_inclusive_grad` (torch.clamp's).
A clamp's missing bound is an infinite one (`-INFINITY`, `INFINITY`), which the kernels treat
as the interpreter does.
"""

from __future__ import annotations

import math

from adir.backends.c.calls import CallSite, c_float, emits
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import activations as act
from adir.dialects.tensor.shapes import normalize_axis


def count(site: CallSite) -> str:
    return f"{site.out_size()}u"


@emits(
    act.ReluOp,
    act.SigmoidOp,
    act.TanhOp,
    act.HardswishOp,
    act.HardsigmoidOp,
    act.ReluGradOp,
    act.SigmoidGradOp,
    act.TanhGradOp,
    act.HardswishGradOp,
    act.HardsigmoidGradOp,
)
def elementwise(op: KernelOp, site: CallSite) -> str:
    return site.call(site.kernel, *site.buffers(), count(site))


@emits(act.LeakyReluOp, act.LeakyReluGradOp)
def leaky_relu(op: KernelOp, site: CallSite) -> str:
    return site.call(site.kernel, *site.buffers(), count(site), c_float(op.alpha.value.data))


@emits(act.SoftplusOp, act.SoftplusGradOp)
def softplus(op: KernelOp, site: CallSite) -> str:
    beta, threshold = c_float(op.beta.value.data), c_float(op.threshold.value.data)
    return site.call(site.kernel, *site.buffers(), count(site), beta, threshold)


@emits(act.GeluOp, act.GeluGradOp)
def gelu(op: KernelOp, site: CallSite) -> str:
    kernel = site.kernel
    if op.approximate.data == "tanh":
        kernel = kernel.replace("gelu", "gelu_tanh")
    return site.call(kernel, *site.buffers(), count(site))


@emits(act.ClampOp, act.ClampGradOp)
def clamp(op: KernelOp, site: CallSite) -> str:
    kernel = site.kernel
    if op.inclusive is not None and kernel.endswith("clamp_grad"):
        kernel = kernel.replace("clamp_grad", "clamp_inclusive_grad")
    low, high = (c_float(bound) for bound in (op.min.value.data, op.max.value.data))
    return site.call(kernel, *site.buffers(), count(site), low, high)


@emits(act.ReluMaskOp)
def relu_mask(op: KernelOp, site: CallSite) -> str:
    return site.call(site.kernel, *site.buffers(), f"{math.prod(site.in_shape(0))}u")


@emits(act.ClampMaskOp)
def clamp_mask(op: KernelOp, site: CallSite) -> str:
    kernel = site.kernel
    if op.inclusive is not None:
        kernel = kernel.replace("clamp_mask", "clamp_inclusive_mask")
    low, high = (c_float(bound) for bound in (op.min.value.data, op.max.value.data))
    return site.call(kernel, *site.buffers(), f"{math.prod(site.in_shape(0))}u", low, high)


@emits(act.MaskGradOp)
def mask_grad(op: KernelOp, site: CallSite) -> str:
    return site.call(site.kernel, *site.buffers(), count(site))


def around_axis(op: KernelOp, site: CallSite) -> tuple[int, int, int]:
    """(outer, axis_size, inner): the operand as a 3-D tensor around the op's axis."""
    shape = site.out_shape()
    axis = normalize_axis(op.name, op.axis.value.data, len(shape))
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])


@emits(act.SoftmaxOp, act.LogSoftmaxOp, act.SoftmaxGradOp, act.LogSoftmaxGradOp)
def along_axis(op: KernelOp, site: CallSite) -> str:
    return site.call(site.kernel, *site.buffers(), *around_axis(op, site))
