"""Offsets for live buffers in one arena.

- `naive`: every buffer its own bytes, one after the other (no reuse: the origin's strategy,
  kept for comparison).
- `greedy_by_size`: Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net
  Inference" (2020), greedy by size with best fit: the largest buffers first, each at the
  smallest gap between the buffers already placed that overlap it in time, else on top.
- `greedy_by_lifetime`: the same best-fit placement, longest-lived buffers first.
- `best`: the smaller arena of the two greedy orders, as XLA keeps the better of several.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from adir.passes.plan_memory.liveness import LiveBuffer

Placement = dict[LiveBuffer, int]


def naive(buffers: Sequence[LiveBuffer]) -> Placement:
    offsets: Placement = {}
    top = 0
    for buffer in buffers:
        offsets[buffer] = top
        top += buffer.size
    return offsets


def best_fit(order: Sequence[LiveBuffer]) -> Placement:
    """Place buffers in `order`, each in the smallest gap that fits among the placed buffers
    live at the same time (lowest offset on ties), or above them all."""
    offsets: Placement = {}
    for buffer in order:
        busy = sorted(
            (offsets[other], offsets[other] + other.size)
            for other in offsets
            if other.overlaps_in_time(buffer)
        )
        best_offset, best_gap = None, None
        cursor = 0
        for start, end in busy:
            gap = start - cursor
            if gap >= buffer.size and (best_gap is None or gap < best_gap):
                best_offset, best_gap = cursor, gap
            cursor = max(cursor, end)
        offsets[buffer] = cursor if best_offset is None else best_offset
    return offsets


def greedy_by_size(buffers: Sequence[LiveBuffer]) -> Placement:
    return best_fit(sorted(buffers, key=lambda b: (-b.size, b.first, b.last)))


def greedy_by_lifetime(buffers: Sequence[LiveBuffer]) -> Placement:
    return best_fit(sorted(buffers, key=lambda b: (-(b.last - b.first), -b.size, b.first)))


def arena_size(offsets: Placement) -> int:
    return max((offset + buffer.size for buffer, offset in offsets.items()), default=0)


def best(buffers: Sequence[LiveBuffer]) -> Placement:
    candidates = [greedy_by_size(buffers), greedy_by_lifetime(buffers)]
    return min(candidates, key=arena_size)  # the first (by size) on a tie


ALGORITHMS: dict[str, Callable[[Sequence[LiveBuffer]], Placement]] = {
    "naive": naive,
    "greedy-by-size": greedy_by_size,
    "greedy-by-lifetime": greedy_by_lifetime,
    "best": best,
}
