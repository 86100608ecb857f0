"""`recompute-activations`: recompute cheap forward values in the backward pass instead of
keeping them alive across it, where that lowers the arena (the trade of activation
checkpointing: Chen et al., "Training Deep Nets with Sublinear Memory Cost", 2016; PyTorch's
min-cut rematerialization makes it for cheap ops only, as here).

    %y, ... = adir.batchnorm %c, ...          (forward)
    %r = adir.relu %y
    ... %r used by the next layer, then kept through the rest of the forward pass ...
    %dr = adir.relu_grad %r, %dy              (backward)
becomes
    ... the forward pass, %r dead after the next layer ...
    %y_recomputed, ... = adir.batchnorm %c, ... {adir.recomputed}
    %r_recomputed = adir.relu %y_recomputed {adir.recomputed}
    %dr = adir.relu_grad %r_recomputed, %dy

A value is a candidate when its op is cheap, as its `Recomputable` trait says (elementwise
arithmetic, activations, batchnorm, dropout, pooling, shape ops: at most a few passes over the
data; never a matmul or a convolution) and its uses fall in two groups apart in the schedule:
the clone goes right before the first use of the later group, which then reads it. An operand
that is not alive there anyway is recomputed too, when its op is cheap (up to `max_chain` ops in
all), else kept alive. Each candidate, largest first, is kept only if the arena's lower bound
after `reorder-updates` and `bufferize` goes down; the others are undone. Planning a copy of the
function costs as much as the two passes, so a candidate is tried only if the points where the
bound is reached all lie between its early and its late uses (elsewhere the change can only add
bytes): one plan per remaining candidate, O(candidates x ops) still for a deep network whose
every activation is alive at the turn from forward to backward (a 1,000-op MLP: 20 s).
Recomputing gives the same bits (each op is deterministic, dropout's mask included), so training
is unchanged; it costs the time of the recomputed ops.

Off by default (`adir-opt --recompute`, or this pass in a `-p` pipeline before
`reorder-updates`); `report=true` prints what was recomputed and the lower bound before and
after. Measured (`adir-opt --optimizer=sgd --recompute --plan-memory --memory-report`): the
DS-CNN's SGD arena from 614,640 to 373,504 bytes (its relu and dropout outputs, 32,000 bytes
each, recomputed from the batchnorm inputs that its gradient keeps anyway; the first relu keeps
its 1-bit mask, 1,008 bytes).
"""

from __future__ import annotations

import gc
import sys
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, ShapedType, UnitAttr, i64
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce

from adir.diagnostics import PassOptionError
from adir.dialects.tensor.traits import Recomputable
from adir.passes.bufferize import BufferizePass
from adir.passes.plan_memory.liveness import live_buffers, live_bytes
from adir.passes.reorder_updates import ReorderUpdatesPass, costs_no_arena

RECOMPUTED = "adir.recomputed"


@dataclass(frozen=True)
class PlannedSchedule:
    """What the pipeline would plan for a function now: the arena's lower bound, the first and
    last program points where that many bytes are live, and where each op of the function
    ends up (as the kernel it becomes; not every op has one)."""

    bound: int
    peak: tuple[int, int]
    position: dict[Operation, int]

    def may_lower(self, early: list[Operation], late: list[Operation]) -> bool:
        """Whether recomputing a value for its `late` users, so that it dies after the `early`
        ones (its op among them), can lower the bound: only the points between the two groups
        lose its bytes, and the clone adds bytes everywhere else, so every peak point must lie
        strictly between them. True where some op's place is unknown."""
        if any(op not in self.position for op in (*early, *late)):
            return True
        first, last = self.peak
        before = max(self.position[op] for op in early)
        after = min(self.position[op] for op in late)
        return before < first and last < after


SOURCE = "adir.recompute_source"


def plan_schedule(function: func.FuncOp) -> PlannedSchedule:
    """Plan a copy of `function` as the pipeline would: dead code out, `reorder-updates`,
    `bufferize` (whose kernels keep the attributes of their ops, so each knows its source).

    `adir-opt` runs without the cycle collector, and the copy is a graph of reference cycles:
    left alone, every plan's copy would stay in memory to the end (an LSTM's 375 plans, 1.8 GB).
    The copy is the youngest thing allocated, so collecting the young generation frees it at the
    cost of scanning it once."""
    schedule = plan_copy(function)
    gc.collect(0)
    return schedule


def plan_copy(function: func.FuncOp) -> PlannedSchedule:
    originals = list(function.body.block.ops)
    module = ModuleOp([function.clone()])
    copy = next(op for op in module.ops if isinstance(op, func.FuncOp))
    for index, op in enumerate(copy.body.block.ops):
        op.attributes[SOURCE] = IntegerAttr(index, i64)
    region_dce(copy.body)
    ctx = Context()
    ReorderUpdatesPass().apply(ctx, module)
    BufferizePass().apply(ctx, module)
    profile = live_bytes(live_buffers(copy, 16))
    bound = max(profile, default=0)
    peaks = [point for point, live in enumerate(profile) if live == bound]
    position = {}
    for index, op in enumerate(copy.body.block.ops):
        if isinstance(source := op.attributes.get(SOURCE), IntegerAttr):
            position[originals[source.value.data]] = index
    return PlannedSchedule(bound, (peaks[0], peaks[-1]) if peaks else (0, 0), position)


@dataclass
class Recomputation:
    """A tentative change to a block: the clones it inserted and the operands it rewired (to
    undo it)."""

    clones: list[Operation] = field(default_factory=list)
    rewired: list[tuple[Operation, int, SSAValue]] = field(default_factory=list)

    def undo(self) -> None:
        for op, index, old in reversed(self.rewired):
            op.operands[index] = old
        for clone in reversed(self.clones):
            clone.detach()
            clone.erase()


class BlockRecomputer:
    def __init__(self, function: func.FuncOp, max_chain: int):
        self.function = function
        self.block: Block = function.body.block
        self.max_chain = max_chain

    def positions(self) -> dict[Operation, int]:
        return {op: index for index, op in enumerate(self.block.ops)}

    def candidates(self) -> list[OpResult]:
        returned = set(self.block.last_op.operands) if self.block.last_op else set()
        values = [
            result
            for op in self.block.ops
            if op.has_trait(Recomputable) and RECOMPUTED not in op.attributes
            for result in op.results
            if result not in returned and sum(1 for _ in result.uses) >= 2
        ]
        return sorted(values, key=lambda v: -bytes_of(v))

    def late_uses(self, value: OpResult, position: dict[Operation, int]) -> list[Operation]:
        """The users after the widest gap between consecutive uses of `value`."""
        users = sorted({use.operation for use in value.uses}, key=position.__getitem__)
        points = [position[value.owner], *(position[u] for u in users)]
        gaps = [points[i + 1] - points[i] for i in range(len(points) - 1)]
        widest = max(range(len(gaps)), key=lambda i: (gaps[i], i))
        if widest == 0 or gaps[widest] < 2:
            return []  # the value is not kept across anything
        return users[widest:]

    def recompute(self, value: OpResult, schedule: PlannedSchedule) -> Recomputation | None:
        """Clone `value`'s op (and what it needs) before its late uses, which then read it;
        None where that cannot lower the `schedule`'s bound."""
        position = self.positions()
        late = self.late_uses(value, position)
        early = [value.owner, *(u.operation for u in value.uses if u.operation not in late)]
        if not late or not schedule.may_lower(early, late):
            return None
        change = Recomputation()
        here = late[0]
        clone = self.clone_before(value.owner, here, position, change, self.max_chain)
        new_value = clone.results[value.index]
        for user in late:
            for index, operand in enumerate(user.operands):
                if operand is value:
                    change.rewired.append((user, index, operand))
                    user.operands[index] = new_value
        return change

    def clone_before(
        self,
        op: Operation,
        here: Operation,
        position: dict[Operation, int],
        change: Recomputation,
        budget: int,
    ) -> Operation:
        recomputable = op.get_trait(Recomputable)
        assert recomputable is not None
        # A batchnorm's clone reads the new running statistics (its trait says why).
        operands = recomputable.recomputed_operands(op)
        budget -= 1
        for index, operand in enumerate(operands):
            producer = operand.owner
            if (
                budget > 0
                and isinstance(producer, Operation)
                and producer is not op
                and producer.has_trait(Recomputable)
                and not costs_no_arena(producer)
                # not alive at `here` any more (a clone made just now sits at `here`): recompute
                and max(position.get(u.operation, position[here]) for u in operand.uses)
                < position[here]
            ):
                inner = self.clone_before(producer, here, position, change, budget)
                operands[index] = inner.results[operand.index]  # type: ignore[attr-defined]
        clone = op.clone()
        for index, operand in enumerate(operands):
            clone.operands[index] = operand
        clone.attributes[RECOMPUTED] = UnitAttr()
        for old, new in zip(op.results, clone.results, strict=True):
            if old.name_hint:
                new.name_hint = f"{old.name_hint}_recomputed"
        self.block.insert_op_before(clone, here)
        change.clones.append(clone)
        return clone


def bytes_of(value: SSAValue) -> int:
    type_ = value.type
    if not isinstance(type_, ShapedType):
        return 0
    count = 1
    for dim in type_.get_shape():
        count *= dim
    return count * 4


def describe(value: OpResult) -> str:
    name = f"%{value.name_hint}" if value.name_hint else f"a value of {value.owner.name}"
    return f"{name} ({value.owner.name}, {bytes_of(value)} bytes)"


@dataclass(frozen=True)
class RecomputeActivationsPass(ModulePass):
    """Recompute cheap forward values where that lowers the arena (see the module docstring)."""

    name = "recompute-activations"

    report: bool = False
    max_chain: int = 3

    def __post_init__(self) -> None:
        if self.max_chain < 0:
            raise PassOptionError(
                self.name, "max_chain", f"max_chain must not be negative, got {self.max_chain}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
            self.recompute_function(function)

    def recompute_function(self, function: func.FuncOp) -> None:
        recomputer = BlockRecomputer(function, self.max_chain)
        schedule = plan_schedule(function)
        before = schedule.bound
        kept: list[str] = []
        tried = 0
        # The candidates refused since the last kept one: undoing a change restores the block
        # exactly, so until another candidate is kept, retrying them would plan the same IR
        # again and refuse them again (each new round would otherwise start by re-planning
        # every candidate the previous round refused after its last keep).
        refused: set[OpResult] = set()
        improved = True
        while improved:
            improved = False
            for value in recomputer.candidates():
                if not value.uses or value in refused:
                    continue
                change = recomputer.recompute(value, schedule)
                if change is None:
                    continue
                tried += 1
                changed = plan_schedule(function)
                if changed.bound < schedule.bound:
                    schedule, improved = changed, True
                    kept.append(f"{describe(value)}, {len(change.clones)} op(s)")
                    refused.clear()
                else:
                    change.undo()
                    refused.add(value)
        best = schedule.bound
        region_dce(function.body)  # the originals that have no use left
        if self.report and tried:
            name = function.sym_name.data
            if kept:
                lines = [
                    f"recompute-activations: @{name}: arena lower bound {before} -> {best} bytes"
                ]
                lines += [f"  recomputed {what}" for what in kept]
            else:
                lines = [
                    f"{name}: none of {tried} candidates lowers the arena's lower bound "
                    f"({before} bytes)"
                ]
            sys.stderr.write("\n".join(lines) + "\n")
