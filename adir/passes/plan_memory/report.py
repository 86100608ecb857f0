"""The memory report of a planned function as text (`--memory-report`): its buffers, its
arena beside the lower bound and no reuse, then RAM and flash by what they hold. The plan is
also drawn (`picture.py`) and written as JSON (`plan_json.py`)."""

from __future__ import annotations

from adir.param_storage import (
    DRAWN_AT_INIT,
    FROZEN,
    OTHER_STATE,
    STATE,
    TRAINABLE,
    StaticMemory,
)
from adir.passes.plan_memory.plan import FunctionPlan, buffer_name

FLOAT_BYTES = 4


def text_report(plan: FunctionPlan, memory: StaticMemory) -> str:
    offsets, arena, bound, naive = plan.offsets, plan.arena, plan.bound, plan.naive
    rows = [f"memory plan of @{plan.function}", ""]
    rows.append(f"{'buffer':<24}{'bytes':>10}{'first':>7}{'last':>7}{'offset':>10}")
    for buffer, offset in sorted(offsets.items(), key=lambda item: (item[1], item[0].first)):
        rows.append(
            f"{buffer_name(buffer):<24}{buffer.size:>10}{buffer.first:>7}{buffer.last:>7}{offset:>10}"
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
