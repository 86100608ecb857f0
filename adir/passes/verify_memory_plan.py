"""`verify-memory-plan`: check a memory plan independently of the planner that made it.

Written apart from `plan_memory/` on purpose (it shares no code with it): for every function
with a plan (`adir.arena_size`), every `memref.alloc` must have an `adir.offset` that is a
multiple of `alignment`, lie inside the arena, and share no byte with any other buffer whose
live range meets its own. A buffer is live from the first op that touches it to the last one
(to the end of the function if it is returned). A violation is an error at the alloc.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass

from adir.diagnostics import OpError, PassOptionError


def span(alloc: memref.AllocOp, index: dict[object, int], end: int) -> tuple[int, int]:
    """First and last op index at which the buffer is live."""
    touching = [index[use.operation] for use in alloc.memref.uses] or [index[alloc]]
    returned = any(isinstance(use.operation, func.ReturnOp) for use in alloc.memref.uses)
    return min(touching), end if returned else max(touching)


def nbytes(alloc: memref.AllocOp) -> int:
    count = 1
    for dim in alloc.memref.type.get_shape():
        count *= dim
    return count * alloc.memref.type.element_type.compile_time_size  # type: ignore[attr-defined]


@dataclass(frozen=True)
class VerifyMemoryPlanPass(ModulePass):
    """Reject a plan in which two live buffers overlap, or a buffer leaves the arena."""

    name = "verify-memory-plan"

    alignment: int = 16

    def __post_init__(self) -> None:
        # As plan-memory's option: 0 would divide by zero in the offset check.
        if self.alignment < 1 or self.alignment & (self.alignment - 1):
            raise PassOptionError(
                self.name, "alignment", f"alignment must be a power of two, got {self.alignment}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and "adir.arena_size" in function.attributes:
                self.verify_function(function)

    def verify_function(self, function: func.FuncOp) -> None:
        arena = function.attributes["adir.arena_size"]
        assert isinstance(arena, IntegerAttr)
        ops = list(function.body.block.ops)
        index = {op: i for i, op in enumerate(ops)}
        placed = []
        for alloc in ops:
            if not isinstance(alloc, memref.AllocOp):
                continue
            offset = alloc.attributes.get("adir.offset")
            if not isinstance(offset, IntegerAttr):
                raise OpError(alloc, "verify-memory-plan: buffer has no adir.offset")
            start, size = offset.value.data, nbytes(alloc)
            if start < 0 or start + size > arena.value.data:
                raise OpError(
                    alloc,
                    f"verify-memory-plan: bytes [{start}, {start + size}) are outside the arena "
                    f"of {arena.value.data} bytes",
                )
            if start % self.alignment:
                raise OpError(
                    alloc, f"verify-memory-plan: offset {start} is not {self.alignment}-aligned"
                )
            placed.append((alloc, start, size, *span(alloc, index, len(ops))))
        for i, (_, a_start, a_size, a_first, a_last) in enumerate(placed):
            for b, b_start, b_size, b_first, b_last in placed[i + 1 :]:
                live_together = a_first <= b_last and b_first <= a_last
                share_bytes = a_start < b_start + b_size and b_start < a_start + a_size
                if live_together and share_bytes:
                    raise OpError(
                        b,
                        f"verify-memory-plan: bytes [{b_start}, {b_start + b_size}) overlap "
                        f"[{a_start}, {a_start + a_size}) of a buffer live at the same time "
                        f"(ops {max(a_first, b_first)}-{min(a_last, b_last)})",
                    )
