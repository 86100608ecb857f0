"""Scratch buffers that fit the arena: each sized to the free bytes at its op.

A kernel op that needs scratch memory has a buffer of its own from `select-kernels` (its last
`outs`, `adir.kernel_scratch` bytes, live across that op alone). Where the kernel also runs
with less (`adir.kernel_scratch_min` bytes: the tuned im2col GEMM convolutions take any panel,
`runtime/tuned/adir_tuned_conv_gemm.c`), plan-memory places every other buffer first, then
gives each such buffer as much of what it asked for as fits in the largest free range of the
arena at its op, rounded down to the alignment, but never less than its minimum (where no range
holds that much, the minimum goes where it fits best, on top if nowhere else).

So these buffers never raise the arena of the other buffers' plan by more than the largest
minimum among them, whatever the placement algorithm: they are live at one op each, and each
takes only bytes that no other buffer uses there. That plan is the one the reference kernels
get: the other buffers are the same, and they are placed on a schedule without the scratch
buffers' allocs (`place_others`), which the reference kernels' program does not have. (An
alloc more inside a buffer's interval would lengthen it, and greedy-by-lifetime orders by
length: one scratch buffer at the first op had moved a plan of four buffers from its lower
bound, 176 bytes, to 208.) The text report and the IR show the sizes given
(`memref<Nxi8>`, and the op's `adir.kernel_scratch`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import IntegerAttr, i8, i64
from xdsl.rewriter import Rewriter

from adir.passes.plan_memory.liveness import LiveBuffer, aligned
from adir.passes.plan_memory.placement import Placement

SCRATCH = "adir.kernel_scratch"
SCRATCH_MIN = "adir.kernel_scratch_min"


def scratch_minimum(buffer: LiveBuffer) -> int | None:
    """The fewest bytes the op using `buffer` as its scratch runs with, or None if the buffer
    is not a scratch buffer that may shrink."""
    uses = list(buffer.alloc.memref.uses)
    if len(uses) != 1:
        return None
    kernel = uses[0].operation
    minimum = kernel.attributes.get(SCRATCH_MIN)
    if not isinstance(minimum, IntegerAttr) or kernel.operands[-1] is not buffer.alloc.memref:
        return None
    return minimum.value.data


def place_others(
    place: Callable[[Sequence[LiveBuffer]], Placement],
    others: Sequence[LiveBuffer],
    scratch_allocs: Sequence[int],
) -> Placement:
    """`place` on the `others`' intervals with the op indices `scratch_allocs` (where the
    scratch buffers are allocated) taken out of the schedule, so that they get the offsets they
    get without the scratch buffers. No other buffer starts or ends at an alloc."""
    skipped = sorted(scratch_allocs)
    compact = {
        LiveBuffer(
            b.alloc,
            b.size,
            b.first - bisect_left(skipped, b.first),
            b.last - bisect_left(skipped, b.last),
        ): b
        for b in others
    }
    return {compact[b]: offset for b, offset in place(list(compact)).items()}


def free_ranges(placed: Placement, at: int, arena: int) -> list[tuple[int, int]]:
    """The byte ranges [start, end) of [0, arena) that no buffer placed and live at op `at`
    uses, in order."""
    used = sorted(
        (offset, offset + buffer.size)
        for buffer, offset in placed.items()
        if buffer.first <= at <= buffer.last
    )
    ranges, top = [], 0
    for start, end in used:
        if start > top:
            ranges.append((top, start))
        top = max(top, end)
    if arena > top:
        ranges.append((top, arena))
    return ranges


def fit_scratch(
    placed: Placement, scratch: Sequence[tuple[LiveBuffer, int]], alignment: int
) -> Placement:
    """Offsets for the shrinkable scratch buffers (with their minimums) among the `placed`
    ones: each a new `LiveBuffer` of the size it gets, in the order given (see the module
    docstring). Where a minimum raises the arena, the others may use the raised arena too:
    they are live at other ops, so a second round in it fits every one."""
    arena = max((offset + buffer.size for buffer, offset in placed.items()), default=0)
    fits = fitting(placed, scratch, alignment, arena)
    raised = max((start + size for size, start in fits), default=0)
    if raised > arena:
        fits = fitting(placed, scratch, alignment, raised)
    fitted: Placement = {}
    for (buffer, _), (size, start) in zip(scratch, fits, strict=True):
        alloc = resized(buffer.alloc, size)
        fitted[LiveBuffer(alloc, size, buffer.first, buffer.last)] = start
    return fitted


def fitting(
    placed: Placement, scratch: Sequence[tuple[LiveBuffer, int]], alignment: int, arena: int
) -> list[tuple[int, int]]:
    """The (aligned) size and offset of each scratch buffer in an arena of `arena` bytes."""
    fits = []
    for buffer, minimum in scratch:
        ranges = free_ranges(placed, buffer.first, arena)
        start, end = max(ranges, key=lambda r: (r[1] - r[0], -r[0]), default=(0, 0))
        size = min(buffer.size, (end - start) // alignment * alignment)
        if size < minimum:
            size = aligned(minimum, alignment)
            holding = [r for r in ranges if r[1] - r[0] >= size]
            if holding:
                start = min(holding, key=lambda r: (r[1] - r[0], r[0]))[0]
            else:  # on top of the buffers live there (the arena grows by less than `size`)
                start = max(
                    (o + b.size for b, o in placed.items() if b.first <= buffer.first <= b.last),
                    default=0,
                )
        fits.append((size, start))
    return fits


def resized(alloc: memref.AllocOp, size: int) -> memref.AllocOp:
    """`alloc` with `size` bytes (at most the bytes its op asked for, which an aligned size may
    pass), and its op's `adir.kernel_scratch`, which the C passes to the kernel, to match."""
    kernel = next(iter(alloc.memref.uses)).operation
    wanted = kernel.attributes[SCRATCH]
    assert isinstance(wanted, IntegerAttr)
    size = min(size, wanted.value.data)
    if size == wanted.value.data:
        return alloc
    smaller = memref.AllocOp.get(i8, None, [size])
    smaller.attributes.update(alloc.attributes)
    smaller.location = alloc.location
    smaller.memref.name_hint = alloc.memref.name_hint
    Rewriter.replace_op(alloc, smaller)
    kernel.attributes[SCRATCH] = IntegerAttr(size, i64)
    return smaller
