"""`plan-memory`: place every transient buffer at a fixed offset in one static arena.

    adir-opt --autodiff --plan-memory model.mlir
    adir-opt -p 'plan-memory{algo=best alignment=16 report=true svg="plan.svg"}' buffers.mlir
    adir-opt --optimizer=sgd --plan-memory --memory-json=plan.json model.mlir

On a bufferized module (it runs after `bufferize`), for each function: the live interval of
every `memref.alloc` on the function's op order (`liveness.py`), offsets by the chosen
algorithm (`placement.py`: naive, greedy-by-size, greedy-by-lifetime, best of the two greedy),
and the plan as attributes on the IR:

    %h = memref.alloc() {adir.offset = 64 : i64} : memref<1x32xf32>
    func.func @train_step(...) attributes {adir.arena_size = 1536 : i64,
        adir.arena_lower_bound = 1536 : i64, adir.naive_arena_size = 2048 : i64, ...}

The module gets `adir.arena_size` (the largest function's: functions run one at a time and
share the arena) and `adir.persistent_size` (the bytes of the parameters and optimizer state
that stay in RAM: all but the frozen ones, `adir/param_storage.py`). `report=true` prints a
table per function to stderr (buffers, sizes, intervals, offsets, arena vs lower bound vs
naive), then the RAM the function needs (its arena, trainable parameters, optimizer state,
other mutable state such as running statistics, frozen parameters drawn at init) and the flash
(frozen parameters, the initial values `init` copies, constants); `svg=PATH` draws the plan of
every function in one SVG document (`picture.py`), `json=PATH` writes it for other tools
(`plan_json.py`, which documents the format).
`verify-memory-plan` checks a plan independently.

A kernel's scratch buffer that may shrink (`adir.kernel_scratch_min` on its op, which
`select-kernels` sets) is placed after the others, as large as the free bytes at its op allow
(`scratch.py`): so the tuned convolutions' im2col panels raise no arena by more than their
minimum panel.

An arena larger than `max_bytes` (by default 2^31 - 1, the most static data a C build holds:
`adir/limits.py`) is an error at the function's largest buffer, rather than a plan that no
C compiler links; raise it (up to 2^63 - 1, the offsets are i64) to study a larger model.

`sram=SIZE` (`262144`, `256K` or `1M`: bytes, KiB, MiB) is the SRAM budget of a training step
on a device: a function whose arena plus the static data in RAM (trainable parameters,
optimizer state, other mutable state) needs more is an error at the op at the peak, naming the
largest buffers live there (`budget.py`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from adir.diagnostics import OpError, PassOptionError
from adir.limits import MAX_STATIC_BYTES, human_bytes, parse_size
from adir.output_files import OutputError, write_file
from adir.param_storage import static_memory
from adir.passes.plan_memory.budget import over_budget
from adir.passes.plan_memory.liveness import LiveBuffer, live_buffers, lower_bound
from adir.passes.plan_memory.picture import svg_picture
from adir.passes.plan_memory.placement import ALGORITHMS, arena_size, naive
from adir.passes.plan_memory.plan import FunctionPlan
from adir.passes.plan_memory.plan_json import plan_json
from adir.passes.plan_memory.report import text_report
from adir.passes.plan_memory.scratch import fit_scratch, place_others, scratch_minimum

OFFSET = "adir.offset"
MAX_I64 = 2**63 - 1


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Give every transient buffer an offset in one arena (see the module docstring)."""

    name = "plan-memory"

    algo: str = "best"
    alignment: int = 16
    report: bool = False
    svg: str | None = None
    json: str | None = None
    max_bytes: int = MAX_STATIC_BYTES
    sram: str | int | None = None

    def __post_init__(self) -> None:
        if self.algo not in ALGORITHMS:
            raise PassOptionError(
                self.name, "algo", f"algo must be one of {', '.join(ALGORITHMS)}, got {self.algo}"
            )
        if self.alignment < 1 or self.alignment & (self.alignment - 1):
            raise PassOptionError(
                self.name, "alignment", f"alignment must be a power of two, got {self.alignment}"
            )
        if not 0 <= self.max_bytes <= MAX_I64:
            raise PassOptionError(
                self.name, "max_bytes", f"max_bytes must be in [0, 2^63), got {self.max_bytes}"
            )
        self.sram_bytes()  # a bad size is an error before anything runs

    def sram_bytes(self) -> int | None:
        """The `sram` budget in bytes (None: no budget)."""
        if self.sram is None:
            return None
        try:
            return parse_size(str(self.sram))
        except ValueError as error:
            raise PassOptionError(self.name, "sram", f"sram: {error}") from error

    def too_large(self, function: func.FuncOp, arena: int, biggest: LiveBuffer) -> OpError:
        return OpError(
            biggest.alloc,
            f"plan-memory: the arena of @{function.sym_name.data} needs {arena} bytes "
            f"({human_bytes(arena)}), more than max_bytes={self.max_bytes} "
            f"({human_bytes(self.max_bytes)}, the most static data a C build holds); "
            f"this buffer takes {biggest.size}",
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        memory = static_memory(op)
        plans: list[FunctionPlan] = []
        sram = self.sram_bytes()
        # The function with the largest arena, the last on ties (the step follows its loss).
        neediest: tuple[func.FuncOp, list[LiveBuffer], int] | None = None
        for function in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            buffers = live_buffers(function, self.alignment)
            biggest = max(buffers, key=lambda buffer: buffer.size, default=None)
            # The arena holds at least its biggest buffer: checked before placement too, whose
            # int64 arithmetic a buffer of 2^64 bytes would overflow.
            if biggest is not None and biggest.size > self.max_bytes:
                raise self.too_large(function, biggest.size, biggest)
            # Scratch buffers that may shrink take the free bytes of the others' plan
            # (`scratch.py`): the tuned convolutions' panels never raise it by more than a
            # minimum panel.
            scratch = [(b, m) for b in buffers if (m := scratch_minimum(b)) is not None]
            others = [b for b in buffers if scratch_minimum(b) is None]
            position = {o: i for i, o in enumerate(function.body.block.ops)}
            allocs = [position[b.alloc] for b, _ in scratch]
            offsets = place_others(ALGORITHMS[self.algo], others, allocs)
            fitted = fit_scratch(offsets, scratch, self.alignment)
            smaller = dict(zip((buffer for buffer, _ in scratch), fitted, strict=True))
            buffers = [smaller.get(buffer, buffer) for buffer in buffers]  # program order
            offsets.update(fitted)
            for buffer, offset in offsets.items():
                buffer.alloc.attributes[OFFSET] = IntegerAttr(offset, i64)
            arena, bound = arena_size(offsets), lower_bound(buffers)
            if arena > self.max_bytes:
                assert biggest is not None
                raise self.too_large(function, arena, biggest)
            naive_arena = arena_size(naive(buffers))
            for key, value in (
                ("adir.arena_size", arena),
                ("adir.arena_lower_bound", bound),
                ("adir.naive_arena_size", naive_arena),
            ):
                function.attributes[key] = IntegerAttr(value, i64)
            ops = len(function.body.block.ops)
            plan = FunctionPlan(function.sym_name.data, offsets, arena, bound, naive_arena, ops)
            if self.report:
                sys.stderr.write(text_report(plan, memory))
            plans.append(plan)
            if sram is not None and (neediest is None or arena >= neediest[2]):
                neediest = (function, buffers, arena)
        largest = max((plan.arena for plan in plans), default=0)
        # Functions share the arena and run one at a time: the one with the largest arena is
        # the one the budget must hold.
        if sram is not None and neediest is not None:
            if (error := over_budget(*neediest, memory, sram)) is not None:
                raise error
        op.attributes["adir.arena_size"] = IntegerAttr(largest, i64)
        op.attributes["adir.persistent_size"] = IntegerAttr(memory.ram_params, i64)
        if self.svg is not None:
            write_report(self.svg, svg_picture(plans, memory), "the memory plan's picture")
        if self.json is not None:
            write_report(
                self.json, plan_json(plans, memory, self.alignment, self.algo), "the memory plan"
            )


def write_report(path: str, content: str, what: str) -> None:
    try:
        write_file(path, content, what)
    except OutputError as error:
        raise PassFailedException(f"plan-memory: {error}") from error
