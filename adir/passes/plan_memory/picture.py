"""The memory plan as a picture: one SVG document, one panel per planned function.

In a panel, time (the op index) runs across and the arena offset up; each buffer is a rectangle
over its live interval and its bytes, named where the name fits (every one has a tooltip). Both
axes have ticks; dashed lines mark the arena size and the lower bound (the most bytes live at
once, which no placement beats). Beside the arena, on its own scale, a bar shows the persistent
memory in RAM (parameters, optimizer state, ...), which the arena comes on top of.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from adir.param_storage import KINDS, StaticMemory
from adir.passes.plan_memory.plan import FunctionPlan, buffer_name

WIDTH = 1100
PANEL_HEIGHT = 400
PLOT_LEFT, PLOT_RIGHT = 90, 680  # the arena's plot, in a panel's coordinates
PLOT_TOP, PLOT_BOTTOM = 60, 340
BAR_LEFT, BAR_RIGHT = 830, 870  # the persistent memory's bar, same top and bottom
CHAR_WIDTH = 6.6  # an 11px sans-serif character, on average: whether a name fits its box
FONT = 11


def nice_step(span: float, ticks: int = 6) -> int:
    """A whole step of 1, 2 or 5 times a power of ten that cuts `span` into at most about
    `ticks` parts."""
    raw = max(span / ticks, 1)
    power = 10 ** math.floor(math.log10(raw))
    return int(next(m * power for m in (1, 2, 5, 10) if m * power >= raw))


def _text(x: float, y: float, content: str, **attributes: str) -> str:
    extra = "".join(f' {name.replace("_", "-")}="{value}"' for name, value in attributes.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(content)}</text>'


def _line(
    x1: float, y1: float, x2: float, y2: float, stroke: str = "black", **attributes: str
) -> str:
    extra = "".join(f' {name.replace("_", "-")}="{value}"' for name, value in attributes.items())
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}"{extra}/>'
    )


def _panel(plan: FunctionPlan, memory: StaticMemory) -> list[str]:
    """The elements of one function's panel, in its own coordinates (0, 0 at its top left)."""
    steps = plan.ops + 1  # buffers are live over [first, last + 1) with last <= ops
    top = max(plan.arena, 1)
    x = lambda t: PLOT_LEFT + (PLOT_RIGHT - PLOT_LEFT) * t / steps  # noqa: E731
    y = lambda b: PLOT_BOTTOM - (PLOT_BOTTOM - PLOT_TOP) * b / top  # noqa: E731
    ratio = plan.arena / plan.bound if plan.bound else 1.0
    out = [
        _text(
            10,
            22,
            f"@{plan.function}: arena {plan.arena:,} bytes, lower bound {plan.bound:,} "
            f"(arena / bound = {ratio:.4f}), no reuse {plan.naive:,}",
            font_weight="bold",
        )
    ]
    for index, (buffer, offset) in enumerate(plan.offsets.items()):
        left, right = x(buffer.first), x(buffer.last + 1)
        upper, lower = y(offset + buffer.size), y(offset)
        name = buffer_name(buffer)
        out.append(
            f'<rect x="{left:.1f}" y="{upper:.1f}" width="{right - left:.1f}" '
            f'height="{max(lower - upper, 0.5):.1f}" fill="hsl({(index * 67) % 360},60%,75%)" '
            f'stroke="black" stroke-width="0.5"><title>{escape(name)}: {buffer.size:,} bytes at '
            f"offset {offset:,}, live at ops {buffer.first}-{buffer.last}</title></rect>"
        )
        if len(name) * CHAR_WIDTH + 4 <= right - left and lower - upper >= FONT + 2:
            out.append(
                _text((left + right) / 2, (upper + lower) / 2 + 4, name, text_anchor="middle")
            )
    if not plan.offsets:
        out.append(_text(PLOT_LEFT + 10, PLOT_BOTTOM - 10, "no transient buffers"))
    # Axes and their ticks: the op index across, bytes up.
    out.append(_line(PLOT_LEFT, PLOT_BOTTOM, PLOT_RIGHT, PLOT_BOTTOM))
    out.append(_line(PLOT_LEFT, PLOT_BOTTOM, PLOT_LEFT, PLOT_TOP))
    time_step = nice_step(steps)
    for t in range(0, steps + 1, time_step):
        out.append(_line(x(t), PLOT_BOTTOM, x(t), PLOT_BOTTOM + 5))
        out.append(_text(x(t), PLOT_BOTTOM + 17, str(t), text_anchor="middle"))
    out.append(
        _text(
            (PLOT_LEFT + PLOT_RIGHT) / 2, PLOT_BOTTOM + 34, "op index (time)", text_anchor="middle"
        )
    )
    byte_step = nice_step(top)
    for b in range(0, top + 1, byte_step):
        out.append(_line(PLOT_LEFT - 5, y(b), PLOT_LEFT, y(b)))
        out.append(_text(PLOT_LEFT - 8, y(b) + 4, f"{b:,}", text_anchor="end"))
    out.append(
        _text(
            18,
            (PLOT_TOP + PLOT_BOTTOM) / 2,
            "arena offset (bytes)",
            text_anchor="middle",
            transform=f"rotate(-90 18 {(PLOT_TOP + PLOT_BOTTOM) / 2:.1f})",
        )
    )
    # The arena's size and the lower bound: the plan wastes the bytes between the two.
    for value, label, colour, dy in (
        (plan.arena, f"arena {plan.arena:,}", "#b00000", -4),
        (plan.bound, f"lower bound {plan.bound:,}", "#0050b0", 13),
    ):
        out.append(_line(PLOT_LEFT, y(value), PLOT_RIGHT, y(value), colour, stroke_dasharray="6 3"))
        out.append(_text(PLOT_RIGHT + 6, y(value) + dy, label, fill=colour))
    out += _persistent_bar(memory)
    return out


def _persistent_bar(memory: StaticMemory) -> list[str]:
    """The RAM that stays between calls, by kind, on the bar's own scale."""
    in_ram = [(kind, memory.by_kind[kind]) for kind in KINDS if not kind.in_flash]
    total = sum(size for _, size in in_ram)
    centre = (BAR_LEFT + BAR_RIGHT) / 2
    out = [
        _text(centre, PLOT_TOP - 22, "persistent RAM", text_anchor="middle", font_weight="bold"),
        _text(centre, PLOT_TOP - 8, f"{total:,} bytes", text_anchor="middle"),
        f'<rect x="{BAR_LEFT}" y="{PLOT_TOP}" width="{BAR_RIGHT - BAR_LEFT}" '
        f'height="{PLOT_BOTTOM - PLOT_TOP}" fill="none" stroke="black"/>',
        _text(centre, PLOT_BOTTOM + 17, "(own scale)", text_anchor="middle"),
    ]
    bottom = float(PLOT_BOTTOM)
    for index, (kind, size) in enumerate(in_ram):
        if not size:
            continue
        height = (PLOT_BOTTOM - PLOT_TOP) * size / total
        upper = bottom - height
        out.append(
            f'<rect x="{BAR_LEFT}" y="{upper:.1f}" width="{BAR_RIGHT - BAR_LEFT}" '
            f'height="{height:.1f}" fill="hsl({200 + 40 * index},35%,70%)" stroke="black" '
            f'stroke-width="0.5"><title>{escape(kind.label)}: {size:,} bytes</title></rect>'
        )
        if height >= FONT + 2:
            out.append(_text(BAR_RIGHT + 6, (upper + bottom) / 2 + 4, f"{kind.label}: {size:,}"))
        bottom = upper
    return out


def svg_picture(plans: list[FunctionPlan], memory: StaticMemory) -> str:
    """One SVG document with a panel per planned function, one above the other."""
    height = PANEL_HEIGHT * max(len(plans), 1)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="{FONT}">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
    ]
    if not plans:
        out.append(_text(10, 22, "no planned function"))
    for index, plan in enumerate(plans):
        out.append(
            f'<g id="plan-{index}" transform="translate(0,{index * PANEL_HEIGHT})">'
            f"<title>memory plan of @{escape(plan.function)}</title>"
        )
        out += _panel(plan, memory)
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
