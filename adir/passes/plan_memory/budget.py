"""The SRAM budget of `plan-memory{sram=256K}` (`adir-opt --sram=256K`).

A training step on a device needs, in SRAM at once, the arena (every transient buffer) and all
that the step writes or `init` draws: trainable parameters, optimizer state, other mutable state
(running statistics) and frozen parameters drawn from a seeded initializer
(`StaticMemory.ram_params`, `adir/param_storage.py`); frozen parameters with known values,
initial values and constants are flash. The stack is not counted: `--c-ram` leaves room for it.
Functions run one at a time and share the arena, so each function is held to the budget alone.

When a function needs more, the error points at the op where the most bytes are live (the
point that sets the arena's lower bound: no placement can do with less, so that is where
memory must be cut) and names the largest buffers live there, so the user knows what to
freeze, recompute or shrink.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation

from adir.diagnostics import OpError
from adir.limits import human_bytes
from adir.param_storage import DRAWN_AT_INIT, OTHER_STATE, STATE, TRAINABLE, StaticMemory
from adir.passes.plan_memory.liveness import LiveBuffer, live_bytes

# How many of the buffers live at the peak the message names, the largest first.
NAMED_BUFFERS = 4


def buffer_name(buffer: LiveBuffer) -> str:
    hint = buffer.alloc.memref.name_hint
    return f"%{hint}" if hint else f"<alloc at op {buffer.first}>"


def described(buffer: LiveBuffer, ops: list[Operation]) -> str:
    """`%h (4096 bytes, from line 12)`: the line of the op that first uses the buffer, since
    the parser keeps one name hint for `%getitem_3` and `%getitem_7` alike."""
    location = ops[buffer.first].location if buffer.first < len(ops) else None
    line = f", from line {location.line.data}" if isinstance(location, FileLineColLoc) else ""
    return f"{buffer_name(buffer)} ({buffer.size} bytes{line})"


def peak_point(buffers: list[LiveBuffer]) -> int:
    """The first op index at which the most bytes are live."""
    profile = live_bytes(buffers)
    return profile.index(max(profile))


def over_budget(
    function: func.FuncOp, buffers: list[LiveBuffer], arena: int, memory: StaticMemory, sram: int
) -> OpError | None:
    """The error for `function` if its arena and the RAM of the module's static data exceed
    `sram` bytes, else None."""
    need = arena + memory.ram_params
    if need <= sram:
        return None
    sizes = memory.by_kind
    parts = [
        f"arena {arena}",
        f"trainable parameters {sizes[TRAINABLE]}",
        f"optimizer state {sizes[STATE]}",
        f"other mutable state {sizes[OTHER_STATE]}",
    ]
    if sizes[DRAWN_AT_INIT]:
        parts.append(f"frozen parameters drawn at init {sizes[DRAWN_AT_INIT]}")
    message = (
        f"plan-memory: @{function.sym_name.data} needs {need} bytes of SRAM "
        f"({human_bytes(need)}: {', '.join(parts)}), more than sram={sram} ({human_bytes(sram)})"
    )
    ops = list(function.body.block.ops)
    if not buffers:
        return OpError(function, message)
    peak = peak_point(buffers)
    live = [b for b in buffers if b.first <= peak <= b.last]
    live.sort(key=lambda b: (-b.size, b.first))
    named = ", ".join(described(b, ops) for b in live[:NAMED_BUFFERS])
    more = f" and {len(live) - NAMED_BUFFERS} more" if len(live) > NAMED_BUFFERS else ""
    index = min(peak, len(ops) - 1)
    at = ops[index]
    return OpError(
        at,
        f"{message}; the peak, {sum(b.size for b in live)} bytes live in {len(live)} buffers, is "
        f"at op {index} of @{function.sym_name.data} ({at.name}, located at the op it comes "
        f"from): {named}{more}",
    )
