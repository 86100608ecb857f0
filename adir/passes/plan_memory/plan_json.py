"""The memory plan as JSON, for other tools (`plan-memory{json=PATH}`, `--memory-json=PATH`).

    {"format": "adir-memory-plan", "version": 1,
     "arena_size": 320,                 # the largest function's: functions share the arena
     "alignment": 16, "algo": "best",
     "ram": {"arena": 320, "trainable parameters": 101632, "optimizer state": 0, ...,
             "total": 101952},
     "flash": {"frozen parameters": 0, "initial values": 0, "constants": 4, "total": 4},
     "functions": [
       {"name": "train_step", "ops": 12, "arena_size": 320, "lower_bound": 320,
        "naive_size": 512,
        "buffers": [{"name": "h", "bytes": 128, "first": 3, "last": 8, "offset": 0}, ...]}]}

A buffer is live from op index `first` to `last` inclusive (the function's `ops` for a returned
one) at bytes [offset, offset + bytes) of the arena; `name` is its SSA name in the IR without
the `%`, or null.
"""

from __future__ import annotations

import json

from adir.param_storage import FROZEN, KINDS, StaticMemory
from adir.passes.plan_memory.plan import FunctionPlan

FORMAT = "adir-memory-plan"
VERSION = 1


def plan_json(plans: list[FunctionPlan], memory: StaticMemory, alignment: int, algo: str) -> str:
    arena = max((plan.arena for plan in plans), default=0)
    ram = {"arena": arena}
    ram.update({kind.label: memory.by_kind[kind] for kind in KINDS if not kind.in_flash})
    ram["total"] = arena + memory.ram_params
    flash = {
        FROZEN.label: memory.by_kind[FROZEN],
        "initial values": memory.initial_values,
        "constants": memory.constants,
        "total": memory.flash,
    }
    document = {
        "format": FORMAT,
        "version": VERSION,
        "arena_size": arena,
        "alignment": alignment,
        "algo": algo,
        "ram": ram,
        "flash": flash,
        "functions": [
            {
                "name": plan.function,
                "ops": plan.ops,
                "arena_size": plan.arena,
                "lower_bound": plan.bound,
                "naive_size": plan.naive,
                "buffers": [
                    {
                        "name": buffer.alloc.memref.name_hint,
                        "bytes": buffer.size,
                        "first": buffer.first,
                        "last": buffer.last,
                        "offset": offset,
                    }
                    for buffer, offset in sorted(
                        plan.offsets.items(), key=lambda item: (item[0].first, item[1])
                    )
                ],
            }
            for plan in plans
        ],
    }
    return json.dumps(document, indent=1) + "\n"
