"""C calls of the elementwise family's kernels (runtime: adir_elementwise.c).

Operands of the output's shape call the flat kernel (`ADIR_ADD(a, b, out, n)`); broadcasting
calls the `_broadcast` kernel with the output's dims and each operand's strides along them, 0
where it broadcasts. The layout is simplified first, so that the kernel's innermost row is as
long as possible: dims of size 1 are dropped, and adjacent dims merged where every operand is
contiguous across them (`8x16 + 16` stays 2-D, `2x3x4 + 1x1x1` becomes a 1-D row of 24).
"""

from __future__ import annotations

from collections.abc import Sequence

from adir.backends.c.calls import CallSite, emits, row_major_strides
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import elementwise as ew


def broadcast_layout(
    out_shape: Sequence[int], in_shapes: Sequence[Sequence[int]]
) -> tuple[list[int], list[list[int]]]:
    """The output's dims and, per operand, its strides along them (numpy broadcasting: shapes
    aligned from the right, a dim of 1 or a missing dim has stride 0), simplified as above."""
    rank = len(out_shape)
    padded = []
    for shape in in_shapes:
        own = zip(shape, row_major_strides(shape), strict=True)
        padded.append([0] * (rank - len(shape)) + [0 if dim == 1 else s for dim, s in own])
    dims: list[int] = []
    strides: list[list[int]] = [[] for _ in in_shapes]
    for axis, size in enumerate(out_shape):
        if size == 1:
            continue
        column = [operand[axis] for operand in padded]
        if dims and all(s[-1] == c * size for s, c in zip(strides, column, strict=True)):
            dims[-1] *= size
            for s, c in zip(strides, column, strict=True):
                s[-1] = c
        else:
            dims.append(size)
            for s, c in zip(strides, column, strict=True):
                s.append(c)
    return dims, strides


def is_flat(dims: Sequence[int], strides: Sequence[Sequence[int]]) -> bool:
    """Whether every operand is laid out as the output (so element i of each goes together)."""
    return 0 in dims or all(list(s) == row_major_strides(dims) for s in strides)


def elementwise_call(
    site: CallSite, kernel: str, operands: Sequence[int], *attributes: object
) -> str:
    """The flat or the broadcast call of `kernel` on the ins at `operands`."""
    ins = [site.input(i) for i in operands]
    dims, strides = broadcast_layout(site.out_shape(), [site.in_shape(i) for i in operands])
    if is_flat(dims, strides):
        return site.call(kernel, *ins, site.output(), site.out_size(), *attributes)
    tables = [site.table(s) for s in strides]
    return site.call(
        f"{kernel}_broadcast", *ins, site.output(), len(dims), site.table(dims),
        *tables, *attributes,
    )  # fmt: skip


@emits(ew.NegOp, ew.ExpOp, ew.LogOp, ew.SqrtOp)
def unary(op: KernelOp, site: CallSite) -> str:
    kernel = op.name.removeprefix("adir_kernel.")
    return site.call(kernel, site.input(0), site.output(), site.out_size())


@emits(ew.AddOp, ew.SubOp, ew.MulOp, ew.DivOp, ew.PowOp, ew.MaximumOp, ew.MinimumOp)
def binary(op: KernelOp, site: CallSite) -> str:
    return elementwise_call(site, op.name.removeprefix("adir_kernel."), [0, 1])


@emits(ew.CmpOp)
def cmp(op: KernelOp, site: CallSite) -> str:
    predicate = op.predicate.data  # type: ignore[attr-defined]
    if predicate not in ew.COMPARISON_PREDICATES:
        raise site.error(f"unknown predicate '{predicate}'")
    return elementwise_call(site, "cmp", [0, 1], f"ADIR_CMP_{predicate.upper()}")


@emits(ew.SelectOp)
def select(op: KernelOp, site: CallSite) -> str:
    return elementwise_call(site, "select", [0, 1, 2])
