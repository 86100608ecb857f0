"""One function's memory plan, as the reports (text, SVG, JSON) read it."""

from __future__ import annotations

from dataclasses import dataclass

from adir.passes.plan_memory.liveness import LiveBuffer


@dataclass(frozen=True)
class FunctionPlan:
    """The plan of one function: each buffer's offset, the arena it needs, the lower bound (the
    most bytes live at once), the arena with no reuse, and the length of its schedule (its op
    count: buffers are live over op indices 0 to `ops`, a returned one to `ops` itself)."""

    function: str
    offsets: dict[LiveBuffer, int]
    arena: int
    bound: int
    naive: int
    ops: int


def buffer_name(buffer: LiveBuffer) -> str:
    """The buffer's SSA name in the IR, or where it is allocated when it has none."""
    hint = buffer.alloc.memref.name_hint
    return f"%{hint}" if hint else f"<alloc at op {buffer.first}>"
