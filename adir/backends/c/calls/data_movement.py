"""C calls of the data movement family's kernels (runtime: adir_data_movement.c)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from adir.backends.c.calls import CallSite, c_float, emits, row_major_strides
from adir.dialects.kernel import KernelOp
from adir.dialects.tensor import data_movement as dm
from adir.dialects.tensor.data_movement import slice_indices
from adir.dialects.tensor.shapes import normalize_axis

# The widest walk the strided kernels take (ADIR_MAX_RANK of adir_kernels.h).
MAX_RANK = 8
INT32_MAX = 2**31 - 1


@emits(dm.ReshapeOp, dm.FlattenOp)
def copy(op: KernelOp, site: CallSite) -> str:
    """Reshape and flatten keep the row-major order of the elements: a plain copy."""
    return site.call("copy", site.input(0), site.output(), f"{site.out_size()}u")


@dataclass
class StridedWalk:
    """A row-major walk over the dense side of a strided copy (`shape`), with where each step
    lands on the strided side (`offset` plus index times `strides`)."""

    shape: list[int]
    strides: list[int]
    offset: int = 0

    def coalesced(self) -> StridedWalk:
        """The same walk with fewer dims: dims of size 1 dropped, and each dim merged into the
        one before it where the strided side continues it (stride[d] == stride[d+1] *
        shape[d+1]), so a contiguous run is one inner dim, which the kernel copies with
        memcpy. Never rank 0 (one element is shape [1])."""
        if 0 in self.shape:
            return StridedWalk([0], [1])
        shape: list[int] = []
        strides: list[int] = []
        for dim, stride in zip(self.shape, self.strides, strict=True):
            if dim == 1:
                continue
            if shape and strides[-1] == stride * dim:
                shape[-1] *= dim
                strides[-1] = stride
            else:
                shape.append(dim)
                strides.append(stride)
        return StridedWalk(shape or [1], strides or [1], self.offset)

    def arguments(self, site: CallSite) -> list[object]:
        """rank, shape table, strides table and offset, as the strided kernels take them."""
        walk = self.coalesced()
        if len(walk.shape) > MAX_RANK:
            raise site.error(
                f"needs a strided copy of rank {len(walk.shape)} ({walk.shape} after merging "
                f"contiguous dims); the C kernels handle up to ADIR_MAX_RANK = {MAX_RANK}"
            )
        if max(walk.shape + walk.strides) > INT32_MAX:
            raise site.error(f"dims or strides {walk.shape}, {walk.strides} exceed int32_t")
        return [
            len(walk.shape),
            site.table(walk.shape),
            site.table(walk.strides),
            f"{walk.offset}u",
        ]


def gather(site: CallSite, walk: StridedWalk) -> str:
    """`y = x` read along `walk` (y dense, of the walk's shape)."""
    arguments = walk.arguments(site)
    return site.call("strided_gather", site.input(0), site.output(), *arguments)


def scatter(site: CallSite, walk: StridedWalk, fill: float) -> str:
    """`y = fill`, then x (dense, of the walk's shape) written along `walk`."""
    arguments = walk.arguments(site)
    y, size = site.output(), f"{site.out_size()}u"
    return site.call("strided_scatter", site.input(0), y, size, c_float(fill), *arguments)


@emits(dm.TransposeOp)
def transpose(op: KernelOp, site: CallSite) -> str:
    """Result dim d walks input dim permutation[d]."""
    permutation = [int(p) for p in op.permutation.get_values()]
    strides = row_major_strides(site.in_shape(0))
    return gather(site, StridedWalk(list(site.out_shape()), [strides[p] for p in permutation]))


@emits(dm.BroadcastToOp)
def broadcast_to(op: KernelOp, site: CallSite) -> str:
    """Input dims aligned from the right; a new or size-1 input dim repeats (stride 0)."""
    source, target = site.in_shape(0), site.out_shape()
    new = len(target) - len(source)
    strides = [0] * new + [
        0 if dim == 1 else stride
        for dim, stride in zip(source, row_major_strides(source), strict=True)
    ]
    return gather(site, StridedWalk(list(target), strides))


def sliced(shape: Sequence[int], op: KernelOp) -> StridedWalk:
    """The positions in a dense tensor of `shape` that `[start:stop:step, ...]` selects, as a
    walk over the slice (Python's slicing rules, as `slice_indices`)."""
    start, stop = op.start.get_values(), op.stop.get_values()
    step = [1] * len(shape) if op.step is None else op.step.get_values()
    ranges = [
        slice_indices(dim, *bounds) for dim, *bounds in zip(shape, start, stop, step, strict=True)
    ]
    strides = row_major_strides(shape)
    return StridedWalk(
        [len(r) for r in ranges],
        [r.step * stride for r, stride in zip(ranges, strides, strict=True)],
        sum(r.start * stride for r, stride in zip(ranges, strides, strict=True) if len(r)),
    )


@emits(dm.SliceOp)
def slice_(op: KernelOp, site: CallSite) -> str:
    return gather(site, sliced(site.in_shape(0), op))


@emits(dm.SliceGradOp)
def slice_grad(op: KernelOp, site: CallSite) -> str:
    """The slice's positions in a zero tensor of the result's shape receive the gradient."""
    return scatter(site, sliced(site.out_shape(), op), 0.0)


@emits(dm.PadOp)
def pad(op: KernelOp, site: CallSite) -> str:
    """The input lands at offset `low` of a result filled with `value`."""
    strides = row_major_strides(site.out_shape())
    low = [int(v) for v in op.low.get_values()]
    offset = sum(lo * stride for lo, stride in zip(low, strides, strict=True))
    walk = StridedWalk(list(site.in_shape(0)), strides, offset)
    return scatter(site, walk, op.value.value.data)


@emits(dm.ConcatOp)
def concat(op: KernelOp, site: CallSite) -> str:
    """Per index of the dims before `axis`, one contiguous run of each input in turn."""
    out = site.out_shape()
    axis = normalize_axis(op.name, op.axis.value.data, len(out))
    inputs = ", ".join(site.input(i) for i in range(len(op.ins)))
    axis_sizes = site.table([site.in_shape(i)[axis] for i in range(len(op.ins))])
    return site.call(
        "concat", f"(const float *const[]){{{inputs}}}", site.output(), len(op.ins), axis_sizes,
        f"{math.prod(out[:axis])}u", f"{math.prod(out[axis + 1 :])}u",
    )  # fmt: skip
