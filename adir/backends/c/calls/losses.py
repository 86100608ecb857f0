"""C calls of the losses family's kernels (runtime: adir_losses.c).

Each kernel takes the op's buffers (input, target, [dloss,] then the out), its sizes and the
reduction as a C constant (ADIR_REDUCTION_MEAN, ...). The elementwise losses take an element
count, the classification losses (batch, classes), an unbatched [C] input being batch 1; the
form of a classification target picks the kernel: `nll_i32`, `nll_i64` (class indices) or
`nll_probs` (class probabilities), and likewise for the others.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import Float32Type, IntegerType

from adir.backends.c.calls import CallSite, emits
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import losses as ls


def reduction(op: KernelOp) -> str:
    return f"ADIR_REDUCTION_{op.reduction.data.upper()}"


@emits(ls.MseOp, ls.BceOp, ls.BceWithLogitsOp)
@emits(ls.MseGradOp, ls.BceGradOp, ls.BceWithLogitsGradOp)
def elementwise_loss(op: KernelOp, site: CallSite) -> str:
    count = f"{math.prod(site.in_shape(0))}u"
    return site.call(site.kernel, *site.buffers(), count, reduction(op))


def target_form(site: CallSite) -> str:
    """`i32` or `i64` for class indices, `probs` for class probabilities."""
    target = site.in_type(1).element_type
    if isinstance(target, IntegerType) and target.width.data in (32, 64):
        return f"i{target.width.data}"
    if isinstance(target, Float32Type):
        return "probs"
    raise site.error(f"no kernel for a target of element type {target}")


@emits(ls.NllOp, ls.CrossEntropyOp, ls.NllGradOp, ls.CrossEntropyGradOp)
def classification_loss(op: KernelOp, site: CallSite) -> str:
    shape = site.in_shape(0)
    batch, classes = math.prod(shape[:-1]), shape[-1]
    kernel = f"{site.kernel}_{target_form(site)}"
    return site.call(kernel, *site.buffers(), batch, classes, reduction(op))
