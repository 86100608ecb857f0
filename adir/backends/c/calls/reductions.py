"""C calls of the reductions family's kernels (runtime: adir_reductions.c).

The input's dims are simplified first: dims of size 1 are dropped (they reduce nothing) and
adjacent dims that are both reduced or both kept are merged. If what is left reduces one run
of dims, the input is outer x reduced x inner and the call is `ADIR_SUM(x, out, outer,
reduced, inner)` (all axes, trailing axes, leading axes, a middle run); otherwise (e.g. axes
0 and 2 of a 3-D input) `ADIR_SUM_STRIDED` with the simplified shape and its strides in out.
"""

from __future__ import annotations

import math

from adir.backends.c.calls import CallSite, emits
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import reductions as red


def reduced_axes(op: KernelOp, site: CallSite, rank: int) -> set[int]:
    """The axes a reduction kernel reduces: its `axes` (negative ones from the end), or all if
    left out."""
    axes = op.axes  # type: ignore[attr-defined]
    reduced = red.reduced_axis_set(axes, rank)
    if reduced is None:
        raise site.error(f"axes {list(axes.get_values())} do not name axes of a rank-{rank} input")
    return reduced


@emits(red.SumOp, red.MeanOp, red.MaxOp)
def reduction(op: KernelOp, site: CallSite) -> str:
    kernel = op.name.removeprefix("adir_kernel.")
    shape = site.in_shape(0)
    groups = red.reduction_runs(shape, reduced_axes(op, site, len(shape)))
    runs = [index for index, (_, is_reduced) in enumerate(groups) if is_reduced]
    if len(runs) <= 1:
        middle = runs[0] if runs else len(groups)
        outer = math.prod(size for size, _ in groups[:middle])
        reduced = groups[middle][0] if runs else 1
        inner = math.prod(size for size, _ in groups[middle + 1 :])
        return site.call(kernel, site.input(0), site.output(), outer, reduced, inner)
    dims = [size for size, _ in groups]
    out_strides, step = [0] * len(groups), 1
    for index in reversed(range(len(groups))):
        if not groups[index][1]:
            out_strides[index] = step
            step *= groups[index][0]
    return site.call(
        f"{kernel}_strided", site.input(0), site.output(), len(dims), site.table(dims),
        site.table(out_strides),
    )  # fmt: skip
