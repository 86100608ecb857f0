"""Live intervals of the transient buffers of a bufferized function.

The schedule is the order of the function's ops. A buffer (`memref.alloc`) is live from the
first op that uses it to the last (a returned buffer to the end); two buffers may share bytes
only if their intervals do not meet. Sizes are in bytes, rounded up to the alignment.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, TensorType


@dataclass(frozen=True, eq=False)  # one per alloc, hashed by identity
class LiveBuffer:
    """A transient buffer: its alloc, its size in bytes, and the first and last op index
    (inclusive) at which it is live."""

    alloc: memref.AllocOp
    size: int
    first: int
    last: int

    def overlaps_in_time(self, other: LiveBuffer) -> bool:
        return self.first <= other.last and other.first <= self.last


def byte_size(type_: MemRefType | TensorType) -> int:
    elements = 1
    for dim in type_.get_shape():
        elements *= dim
    return elements * type_.element_type.compile_time_size  # type: ignore[attr-defined]


def aligned(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


def live_buffers(function: func.FuncOp, alignment: int) -> list[LiveBuffer]:
    """Every `memref.alloc` of the function with its live interval, in program order."""
    ops = list(function.body.block.ops)
    position = {op: index for index, op in enumerate(ops)}
    buffers = []
    for op in ops:
        if not isinstance(op, memref.AllocOp):
            continue
        uses = [position[use.operation] for use in op.memref.uses]
        first = min(uses, default=position[op])
        last = max(uses, default=position[op])
        if any(isinstance(use.operation, func.ReturnOp) for use in op.memref.uses):
            last = len(ops)  # the caller reads it after the function ends
        size = aligned(max(byte_size(op.memref.type), 1), alignment)
        buffers.append(LiveBuffer(op, size, first, last))
    return buffers


def live_bytes(buffers: list[LiveBuffer]) -> list[int]:
    """The bytes live at each program point, from 0 to the last point any buffer is live."""
    if not buffers:
        return []
    end = max(b.last for b in buffers) + 2
    delta = [0] * end
    for b in buffers:
        delta[b.first] += b.size
        delta[b.last + 1] -= b.size
    live, profile = 0, []
    for change in delta[:-1]:
        live += change
        profile.append(live)
    return profile


def lower_bound(buffers: list[LiveBuffer]) -> int:
    """The most bytes live at once: no placement of these intervals can use less."""
    return max(live_bytes(buffers), default=0)
