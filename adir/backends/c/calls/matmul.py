"""C calls of the matmul family's kernels (runtime: adir_matmul.c, tuned/adir_tuned_matmul.c)."""

from __future__ import annotations

from adir.backends.c.calls import CallSite, emits, flag
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import matmul as mm


@emits(mm.MatmulOp)
def matmul(op: KernelOp, site: CallSite) -> str:
    lhs, rhs, out = site.in_shape(0), site.in_shape(1), site.out_shape()
    transpose_a, transpose_b = flag(op.transpose_a), flag(op.transpose_b)
    m, n = out[-2], out[-1]
    k = lhs[-2] if transpose_a else lhs[-1]
    batch = out[0] if len(out) == 3 else 1
    shared_b = int(len(rhs) == 2)
    return site.call(
        "matmul", site.input(0), site.input(1), site.output(), batch, m, n, k,
        transpose_a, transpose_b, shared_b,
    )  # fmt: skip
