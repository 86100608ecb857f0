"""The memory report of a planned function: a text table, and an SVG picture of the plan
(buffers as rectangles: time across, arena offset up)."""

from __future__ import annotations

from adir.param_storage import (
    DRAWN_AT_INIT,
    FROZEN,
    OTHER_STATE,
    STATE,
    TRAINABLE,
    StaticMemory,
)
from adir.passes.plan_memory.liveness import LiveBuffer

FLOAT_BYTES = 4


def _name(buffer: LiveBuffer) -> str:
    hint = buffer.alloc.memref.name_hint
    return f"%{hint}" if hint else f"<alloc at op {buffer.first}>"


def text_report(
    function: str,
    offsets: dict[LiveBuffer, int],
    arena: int,
    bound: int,
    naive: int,
    memory: StaticMemory,
) -> str:
    rows = [f"memory plan of @{function}", ""]
    rows.append(f"{'buffer':<24}{'bytes':>10}{'first':>7}{'last':>7}{'offset':>10}")
    for buffer, offset in sorted(offsets.items(), key=lambda item: (item[1], item[0].first)):
        rows.append(
            f"{_name(buffer):<24}{buffer.size:>10}{buffer.first:>7}{buffer.last:>7}{offset:>10}"
        )
    ratio = arena / bound if bound else 1.0
    ram = arena + memory.ram_params
    sizes = memory.by_kind
    rows += [
        "",
        f"arena            {arena:>10} bytes ({arena // FLOAT_BYTES} floats)",
        f"lower bound      {bound:>10} bytes (arena / bound = {ratio:.4f})",
        f"naive (no reuse) {naive:>10} bytes",
        "",
        f"RAM              {ram:>10} bytes (arena and what the functions write)",
        f"  arena                  {arena:>10}",
        f"  trainable parameters   {sizes[TRAINABLE]:>10}",
        f"  optimizer state        {sizes[STATE]:>10}",
        f"  other mutable state    {sizes[OTHER_STATE]:>10} (e.g. running statistics)",
        f"  frozen, drawn at init  {sizes[DRAWN_AT_INIT]:>10} (a seeded initializer; "
        "dense data keeps them in flash)",
        f"flash            {memory.flash:>10} bytes (read only)",
        f"  frozen parameters      {sizes[FROZEN]:>10} (no function writes them)",
        f"  initial values         {memory.initial_values:>10} (dense data init copies to RAM)",
        f"  constants              {memory.constants:>10}",
    ]
    return "\n".join(rows) + "\n"


def svg_report(function: str, offsets: dict[LiveBuffer, int], arena: int) -> str:
    """Time (op index) across, offset up; one rectangle per buffer with its name."""
    width, height, margin = 900, 500, 40
    steps = max((b.last for b in offsets), default=0) + 1
    x = lambda t: margin + (width - 2 * margin) * t / max(steps, 1)  # noqa: E731
    y = lambda o: height - margin - (height - 2 * margin) * o / max(arena, 1)  # noqa: E731
    shapes = []
    for index, (buffer, offset) in enumerate(offsets.items()):
        hue = (index * 67) % 360
        left, right = x(buffer.first), x(buffer.last + 1)
        top, bottom = y(offset + buffer.size), y(offset)
        shapes.append(
            f'<rect x="{left:.1f}" y="{top:.1f}" width="{right - left:.1f}" '
            f'height="{max(bottom - top, 1):.1f}" fill="hsl({hue},60%,70%)" stroke="black">'
            f"<title>{_name(buffer)}: {buffer.size} bytes at {offset}, ops "
            f"{buffer.first}-{buffer.last}</title></rect>"
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">'
        f'<text x="{margin}" y="20">@{function}: arena {arena} bytes (time across, offset up)'
        "</text>" + "".join(shapes) + "</svg>\n"
    )
